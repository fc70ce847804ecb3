//! A small family for the tests of the generic adapter and of observation by list: a few
//! repository Kinds (local, remote and virtual, of three package types), declared here as
//! data with a plain REST binding ([`Paths`], with the list call
//! `GET /artifactory/api/repositories/configurations`) against the JFrog simulator's
//! repository API, and no hooks. The fields are copied from provider-artifactory's tables
//! (without the project assignment, which is the repositories' own hook); what the tests
//! check is the family layer's behaviour, not the repositories' (whose own tests stay in
//! provider-artifactory).

use jfrog_client::Service;
use jfrog_sim::{SimConfig, Simulator};
use provider_common::{Ping, Provider};
use provider_family::{
    Call, Dv, FamilyKind, Field, Id, Kind, KindDecl, ListCall, ListShape, NoHooks, Norm, Paths, Ty,
    Verb,
};
use provider_runtime::managed::config::{Credentials, ResolvedConfig};
use provider_runtime::managed::external::Managed;
use secrecy::SecretString;
use serde_json::Value;

/// The tests' provider identity (the JFrog client's User-Agent, the client cache).
pub const PROVIDER: Provider = Provider {
    name: "provider-family-suite",
    short: "familysuite",
    about: "the generic family layer's tests",
    ping: Ping::ArtifactoryVersion,
};

/// The route of one repository, as the simulator counts it.
pub const BY_KEY: &str = "/artifactory/api/repositories/{key}";

/// The repository API as data: create is a `PUT`, update a `POST` (a partial update), and
/// every repository of the platform is listed by one call, grouped by class; keys are
/// case-insensitive.
pub static REST: Paths = Paths {
    service: Service::Artifactory,
    create: Call::new(Verb::Put, "/api/repositories/{key}"),
    read: Call::new(Verb::Get, "/api/repositories/{key}"),
    update: Call::new(Verb::Post, "/api/repositories/{key}"),
    delete: Call::new(Verb::Delete, "/api/repositories/{key}"),
    list: Some(ListCall {
        service: Service::Artifactory,
        path: "/api/repositories/configurations",
        shape: ListShape::Grouped("rclass"),
        key_member: "key",
    }),
    case_insensitive: true,
};

/// The fields local and remote repositories share.
const BASE: &[Field] = &[
    Field::new("notes", "notes", Some("notes"), Ty::Str).default(Dv::Str("")),
    Field::new(
        "includesPattern",
        "includes_pattern",
        Some("includesPattern"),
        Ty::Str,
    )
    .default(Dv::Str("**/*")),
    Field::new(
        "excludesPattern",
        "excludes_pattern",
        Some("excludesPattern"),
        Ty::Str,
    )
    .default(Dv::Str("")),
    Field::new(
        "repoLayoutRef",
        "repo_layout_ref",
        Some("repoLayoutRef"),
        Ty::Str,
    )
    .late_init(),
    Field::new("blackedOut", "blacked_out", Some("blackedOut"), Ty::Bool).default(Dv::Bool(false)),
    Field::new("xrayIndex", "xray_index", Some("xrayIndex"), Ty::Bool).default(Dv::Bool(false)),
    Field::new(
        "propertySets",
        "property_sets",
        Some("propertySets"),
        Ty::Set,
    ),
];

/// A local repository's own fields (beside [`BASE`]).
const LOCAL: &[Field] = &[
    Field::new("description", "description", Some("description"), Ty::Str).default(Dv::Str("")),
    Field::new(
        "priorityResolution",
        "priority_resolution",
        Some("priorityResolution"),
        Ty::Bool,
    )
    .default(Dv::Bool(false)),
    Field::new(
        "archiveBrowsingEnabled",
        "archive_browsing_enabled",
        Some("archiveBrowsingEnabled"),
        Ty::Bool,
    )
    .default(Dv::Bool(false)),
];

/// A remote repository's own fields (beside [`BASE`]; its password write-only, from a
/// Secret).
const REMOTE: &[Field] = &[
    Field::new("description", "description", Some("description"), Ty::Str)
        .default(Dv::Str(""))
        .norm(Norm::CacheSuffix),
    Field::new("url", "url", Some("url"), Ty::Str).required(),
    Field::new("username", "username", Some("username"), Ty::Str).default(Dv::Str("")),
    Field::new("passwordSecretRef", "password", Some("password"), Ty::Str)
        .sensitive()
        .write_only(),
    Field::new("proxy", "proxy", Some("proxy"), Ty::Str).default(Dv::Str("")),
    Field::new("offline", "offline", Some("offline"), Ty::Bool).default(Dv::Bool(false)),
    Field::new(
        "storeArtifactsLocally",
        "store_artifacts_locally",
        Some("storeArtifactsLocally"),
        Ty::Bool,
    )
    .default(Dv::Bool(true)),
    Field::new(
        "socketTimeoutMillis",
        "socket_timeout_millis",
        Some("socketTimeoutMillis"),
        Ty::Int,
    )
    .default(Dv::Int(15000)),
];

/// The fields of a virtual repository.
const VIRTUAL: &[Field] = &[
    Field::new("packageType", "package_type", Some("packageType"), Ty::Str)
        .immutable()
        .status_only(),
    Field::new("description", "description", Some("description"), Ty::Str),
    Field::new("notes", "notes", Some("notes"), Ty::Str),
    Field::new(
        "includesPattern",
        "includes_pattern",
        Some("includesPattern"),
        Ty::Str,
    )
    .default(Dv::Str("**/*")),
    Field::new(
        "excludesPattern",
        "excludes_pattern",
        Some("excludesPattern"),
        Ty::Str,
    ),
    Field::new(
        "repoLayoutRef",
        "repo_layout_ref",
        Some("repoLayoutRef"),
        Ty::Str,
    ),
    Field::new(
        "repositories",
        "repositories",
        Some("repositories"),
        Ty::List,
    ),
    Field::new(
        "artifactoryRequestsCanRetrieveRemoteArtifacts",
        "artifactory_requests_can_retrieve_remote_artifacts",
        Some("artifactoryRequestsCanRetrieveRemoteArtifacts"),
        Ty::Bool,
    )
    .default(Dv::Bool(false)),
    Field::new(
        "defaultDeploymentRepo",
        "default_deployment_repo",
        Some("defaultDeploymentRepo"),
        Ty::Str,
    )
    .norm(Norm::ClearWithSentinel),
];

/// The Maven fields of a virtual repository (two of them server-defaulted).
const VIRTUAL_MAVEN: &[Field] = &[
    Field::new(
        "forceMavenAuthentication",
        "force_maven_authentication",
        Some("forceMavenAuthentication"),
        Ty::Bool,
    )
    .late_init(),
    Field::new(
        "pomRepositoryReferencesCleanupPolicy",
        "pom_repository_references_cleanup_policy",
        Some("pomRepositoryReferencesCleanupPolicy"),
        Ty::Str,
    )
    .late_init()
    .enums(&[
        "discard_active_reference",
        "discard_any_reference",
        "nothing",
    ]),
    Field::new("keyPair", "key_pair", Some("keyPair"), Ty::Str),
];

/// One repository Kind: its class (`rclass`), package type, fields and the layout it
/// defaults to.
macro_rules! repository {
    ($kind:literal, $class:literal, $pt:literal, $extends:expr, [$($mixin:expr),*], $layout:literal) => {
        Kind {
            decl: KindDecl {
                provider: "familysuite",
                group: "repository",
                kind: $kind,
                description: "",
                id: Id::Name,
                id_wire: Some("key"),
                extends: $extends,
                mixins: &[$($mixin),*],
                fields: &[],
                default_overrides: &[("repo_layout_ref", Dv::Str($layout))],
                enum_overrides: &[],
                identity: &[("rclass", $class), ("packageType", $pt)],
                fixed_body: &[],
                rules: &[],
            },
            rest: &REST,
            family: &NoHooks,
            hooks: &NoHooks,
        }
    };
}

/// The family's Kinds.
pub const KINDS: &[Kind] = &[
    repository!(
        "LocalGenericRepository",
        "local",
        "generic",
        BASE,
        [LOCAL],
        "simple-default"
    ),
    repository!(
        "LocalMavenRepository",
        "local",
        "maven",
        BASE,
        [LOCAL],
        "maven-2-default"
    ),
    repository!(
        "LocalNPMRepository",
        "local",
        "npm",
        BASE,
        [LOCAL],
        "npm-default"
    ),
    repository!(
        "RemoteMavenRepository",
        "remote",
        "maven",
        BASE,
        [REMOTE],
        "maven-2-default"
    ),
    repository!(
        "RemoteNPMRepository",
        "remote",
        "npm",
        BASE,
        [REMOTE],
        "npm-default"
    ),
    repository!(
        "VirtualGenericRepository",
        "virtual",
        "generic",
        VIRTUAL,
        [],
        "simple-default"
    ),
    repository!(
        "VirtualMavenRepository",
        "virtual",
        "maven",
        VIRTUAL,
        [VIRTUAL_MAVEN],
        "maven-2-default"
    ),
];

/// The ProviderConfig every MR resolves to: the simulator's URL and admin token.
pub fn config(sim: &Simulator) -> ResolvedConfig {
    ResolvedConfig {
        config_kind: "ClusterProviderConfig".into(),
        config_name: "default".into(),
        config_namespace: None,
        config_uid: Some("pc-uid".into()),
        url: sim.url(),
        credentials: Credentials::Token(SecretString::from(sim.admin_token())),
        credentials_from: None,
        ca_bundle: None,
    }
}

/// An MR named `key` (its external name too) with these parameters.
pub fn mr(key: &str, params: Value) -> Managed<FamilyKind> {
    provider_family::adapter::managed(key, key, params)
}

/// The simulator, writing one repository at a time (the descriptor merge emulation is the
/// repositories' concern, tested in provider-artifactory).
pub async fn sim() -> Simulator {
    let cfg = SimConfig {
        descriptor_merge_emulation: false,
        ..SimConfig::default()
    };
    testkit::start_sim_with(cfg).await
}

/// The Kind named `name`, composed.
pub fn kind(name: &str) -> FamilyKind {
    let d = KINDS.iter().find(|d| d.kind == name).expect("declared");
    FamilyKind::new(d).expect("composes")
}
