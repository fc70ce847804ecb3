//! The repository rules as data, written by hand from JFrog's sources: per class (local, remote,
//! virtual, federated) the members every repository of the class takes with their defaults,
//! then per package type the members it adds, its default layout and the constants it carries.
//!
//! Nothing here comes from this project's `catalog/` or from the providers' declarations (the
//! simulator must be able to disagree with them). Sources, cited once per block below:
//!
//! - [TF] JFrog's Terraform provider `jfrog/terraform-provider-artifactory` at tag v12.11.7,
//!   `pkg/artifactory/resource/repository/`: the request structs (`BaseAPIModel`,
//!   `local.RepositoryBaseParams`, `remote.RepositoryRemoteBaseParams`, the virtual and
//!   federated params, each package type's params) give the JSON members; the schema defaults
//!   (`stringdefault`/`booldefault`/`int64default` of the framework resources, `Default:` of the
//!   SDKv2 ones) give the values Artifactory answers when a member is not sent; `Required: true`
//!   gives the required members; `default_repo_layout_map.go` gives each package type's layout
//!   and the classes that offer it.
//! - [YAML] JFrog, "Repositories Configurations in Artifactory YAML"
//!   (docs.jfrog.com/installation/docs/repositories-configurations-in-artifactory-yaml): the
//!   members of local, remote, virtual and federated repositories and the package types
//!   (the same members as the REST API's Repository Configuration JSON).
//!
//! Defaults the sources above leave to the server (no schema default) are in `spec.rs`
//! (`SERVER_DEFAULTS`), each marked there.

use super::spec::{D, F, KindSpec, RClass, T};

use RClass::{Federated, Local, Remote, Virtual};

// ---------------------------------------------------------------------------------------------
// Class bases
// ---------------------------------------------------------------------------------------------

/// Every repository, all four classes. [TF] repository.go `BaseAPIModel` and `BaseAttributes`
/// (project_key "", project_environments [], description "", notes "", includes_pattern
/// "**/*", excludes_pattern ""); `repoLayoutRef` defaults per package type (`layout` below).
const COMMON: &[F] = &[
    F::new("projectKey", T::Str, D::Str("")),
    F::new("environments", T::StrSet, D::Strs(&[])),
    F::new("description", T::Str, D::Str("")),
    F::new("notes", T::Str, D::Str("")),
    F::new("includesPattern", T::Str, D::Str("**/*")),
    F::new("excludesPattern", T::Str, D::Str("")),
    F::new("repoLayoutRef", T::Str, D::None),
];

/// Repositories that store artifacts (local, remote cache, federated). [TF] local/local.go
/// `RepositoryBaseParams` and `LocalAttributes` (blacked_out, xray_index,
/// priority_resolution, archive_browsing_enabled, download_direct, cdn_redirect all false;
/// property_sets without default); remote/remote.go `RepositoryRemoteBaseParams` carries the
/// same members.
const STORED: &[F] = &[
    F::new("blackedOut", T::Bool, D::Bool(false)),
    F::new("xrayIndex", T::Bool, D::Bool(false)),
    F::new("priorityResolution", T::Bool, D::Bool(false)),
    F::new("propertySets", T::StrSet, D::None),
    F::new("archiveBrowsingEnabled", T::Bool, D::Bool(false)),
    F::new("downloadRedirect", T::Bool, D::Bool(false)),
    F::new("cdnRedirect", T::Bool, D::Bool(false)),
];

/// Remote repositories. [TF] remote/remote.go `RepositoryRemoteBaseParams`,
/// `ContentSynchronisation` and the remote schema: `url` required; username "", proxy "",
/// disable_proxy false, remote_repo_layout_ref "", hard_fail false, offline false,
/// store_artifacts_locally true, socket_timeout_millis 15000, local_address "",
/// retrieval_cache_period_seconds 7200, metadata_retrieval_timeout_secs 60,
/// missed_cache_period_seconds 1800, unused_artifacts_cleanup_period_hours 0,
/// assumed_offline_period_secs 300, share_configuration false, synchronize_properties false,
/// block_mismatching_mime_types true, allow_any_host_auth false, enable_cookie_management
/// false, bypass_head_requests false, client_tls_certificate "", query_params "",
/// list_remote_folder_items false, mismatching_mime_types_override_list "",
/// disable_url_normalization false, content synchronisation all false. `password` is
/// write-only (answered encrypted).
const REMOTE: &[F] = &[
    F::new("url", T::Str, D::None).req(),
    F::new("username", T::Str, D::Str("")),
    F::new("password", T::Str, D::None).wo(),
    F::new("proxy", T::Str, D::Str("")),
    F::new("disableProxy", T::Bool, D::Bool(false)),
    F::new("remoteRepoLayoutRef", T::Str, D::Str("")),
    F::new("hardFail", T::Bool, D::Bool(false)),
    F::new("offline", T::Bool, D::Bool(false)),
    F::new("storeArtifactsLocally", T::Bool, D::Bool(true)),
    F::new("socketTimeoutMillis", T::Int, D::Int(15000)),
    F::new("localAddress", T::Str, D::Str("")),
    F::new("retrievalCachePeriodSecs", T::Int, D::Int(7200)),
    F::new("metadataRetrievalTimeoutSecs", T::Int, D::Int(60)),
    F::new("missedRetrievalCachePeriodSecs", T::Int, D::Int(1800)),
    F::new("unusedArtifactsCleanupPeriodHours", T::Int, D::Int(0)),
    F::new("assumedOfflinePeriodSecs", T::Int, D::Int(300)),
    F::new("shareConfiguration", T::Bool, D::Bool(false)),
    F::new("synchronizeProperties", T::Bool, D::Bool(false)),
    F::new("blockMismatchingMimeTypes", T::Bool, D::Bool(true)),
    F::new("allowAnyHostAuth", T::Bool, D::Bool(false)),
    F::new("enableCookieManagement", T::Bool, D::Bool(false)),
    F::new("bypassHeadRequests", T::Bool, D::Bool(false)),
    F::new("clientTlsCertificate", T::Str, D::Str("")),
    F::new("queryParams", T::Str, D::Str("")),
    F::new("listRemoteFolderItems", T::Bool, D::Bool(false)),
    F::new("mismatchingMimeTypesOverrideList", T::Str, D::Str("")),
    F::new("disableUrlNormalization", T::Bool, D::Bool(false)),
    F::new(
        "contentSynchronisation",
        T::Object,
        D::Json(
            r#"{"enabled":false,"statistics":{"enabled":false},"properties":{"enabled":false},"source":{"originAbsenceDetection":false}}"#,
        ),
    ),
];

/// Virtual repositories. [TF] virtual/virtual.go `RepositoryBaseParams` and its schema
/// (repositories [], artifactory_requests_can_retrieve_remote_artifacts false;
/// default_deployment_repo without a server default: answered only when set).
const VIRTUAL: &[F] = &[
    F::new("repositories", T::StrList, D::Strs(&[])),
    F::new("artifactoryRequestsCanRetrieveRemoteArtifacts", T::Bool, D::Bool(false)),
    F::new("defaultDeploymentRepo", T::Str, D::None),
];

/// Federated repositories: the local repository of the package type plus its members and
/// proxy. [TF] federated/federated.go `RepoParams` (proxy, disableProxy false) and `Member`
/// (`{url, enabled}`); each federated resource embeds the local params of its package type;
/// `member` is required.
const FEDERATION: &[F] = &[
    F::new("proxy", T::Str, D::Str("")),
    F::new("disableProxy", T::Bool, D::Bool(false)),
    F::new("members", T::ObjList, D::None).req(),
];

const LOCAL: &[&[F]] = &[COMMON, STORED];
const REMOTE_BASE: &[&[F]] = &[COMMON, STORED, REMOTE];
const VIRTUAL_BASE: &[&[F]] = &[COMMON, VIRTUAL];
const FEDERATED: &[&[F]] = &[COMMON, STORED, FEDERATION];

// ---------------------------------------------------------------------------------------------
// Groups of members several package types share
// ---------------------------------------------------------------------------------------------

/// Maven, Gradle, Ivy, SBT local and federated. [TF] local/resource_artifactory_local_java_
/// repository.go `JavaLocalRepositoryParams` (checksum_policy_type "client-checksums",
/// snapshot_version_behavior "unique", max_unique_snapshots 0, handle_releases true,
/// handle_snapshots true; suppress_pom_consistency_checks false for Maven, true for the
/// others: provider/framework.go and resources.go).
const JAVA_LOCAL: &[F] = &[
    F::new("checksumPolicyType", T::Str, D::Str("client-checksums")),
    F::new("snapshotVersionBehavior", T::Str, D::Str("unique")),
    F::new("maxUniqueSnapshots", T::Int, D::Int(0)),
    F::new("handleReleases", T::Bool, D::Bool(true)),
    F::new("handleSnapshots", T::Bool, D::Bool(true)),
    F::new("suppressPomConsistencyChecks", T::Bool, D::Bool(true)),
];
const POM_CHECKS_ON: &[(&str, D)] = &[("suppressPomConsistencyChecks", D::Bool(false))];

/// Maven, Gradle, Ivy, SBT remote. [TF] remote/remote.go `JavaRemoteRepo` (fetch_jars_eagerly
/// false, fetch_sources_eagerly false, remote_repo_checksum_policy_type "generate-if-absent",
/// handle_releases true, handle_snapshots true, reject_invalid_jars false,
/// max_unique_snapshots 0; suppress_pom_consistency_checks as for local).
const JAVA_REMOTE: &[F] = &[
    F::new("fetchJarsEagerly", T::Bool, D::Bool(false)),
    F::new("fetchSourcesEagerly", T::Bool, D::Bool(false)),
    F::new("remoteRepoChecksumPolicyType", T::Str, D::Str("generate-if-absent")),
    F::new("handleReleases", T::Bool, D::Bool(true)),
    F::new("handleSnapshots", T::Bool, D::Bool(true)),
    F::new("suppressPomConsistencyChecks", T::Bool, D::Bool(true)),
    F::new("rejectInvalidJars", T::Bool, D::Bool(false)),
    F::new("maxUniqueSnapshots", T::Int, D::Int(0)),
];

/// Maven, Gradle, Ivy, SBT virtual. [TF] virtual/resource_artifactory_virtual_java_
/// repository.go `CommonJavaVirtualRepositoryParams` (no schema defaults: see
/// `SERVER_DEFAULTS`).
const JAVA_VIRTUAL: &[F] = &[
    F::new("forceMavenAuthentication", T::Bool, D::None),
    F::new("pomRepositoryReferencesCleanupPolicy", T::Str, D::None),
    F::new("keyPair", T::Str, D::None),
];

/// Curation of remote repositories. [TF] remote/curation.go `CurationAPIModel` (curated false,
/// pass_through false), embedded by the conan, docker, gems, go, gradle, huggingfaceml,
/// maven, npm, nuget and pypi remote resources.
const CURATION: &[F] = &[
    F::new("curated", T::Bool, D::Bool(false)),
    F::new("passThrough", T::Bool, D::Bool(false)),
];

/// VCS members of remote repositories. [TF] remote/remote.go `RepositoryVcsParams`
/// (vcs_git_provider "GITHUB", vcs_git_download_url without default), embedded by the bower,
/// cocoapods, composer and vcs remote resources.
const VCS: &[F] = &[
    F::new("vcsGitProvider", T::Str, D::Str("GITHUB")),
    F::new("vcsGitDownloadUrl", T::Str, D::None),
];

/// Remote generic members. [TF] remote/resource_artifactory_remote_generic_repository.go
/// `RemoteGenericAPIModel` (propagate_query_params false, retrieve_sha256_from_server false),
/// embedded by the gems and go remote resources.
const REMOTE_GENERIC: &[F] = &[
    F::new("propagateQueryParams", T::Bool, D::Bool(false)),
    F::new("retrieveSha256FromServer", T::Bool, D::Bool(false)),
];

/// Docker, OCI, Helm OCI remote. [TF] remote/resource_artifactory_remote_docker_repository.go,
/// `_oci_` and `_helmoci_` (external_dependencies_enabled false, external_dependencies_
/// patterns ("set to '**' in the UI"), enable_token_authentication (false Docker, true OCI
/// and Helm OCI), project_id "").
const REMOTE_OCI: &[F] = &[
    F::new("externalDependenciesEnabled", T::Bool, D::Bool(false)),
    F::new("externalDependenciesPatterns", T::StrList, D::Strs(&["**"])),
    F::new("enableTokenAuthentication", T::Bool, D::Bool(true)),
    F::new("dockerProjectId", T::Str, D::Str("")),
];

/// Tag retention of Docker V2, OCI and Helm OCI local and federated repositories.
/// [TF] local/resource_artifactory_local_docker_v2_repository.go, `_oci_`, `_helmoci_`
/// (max_unique_tags 0, tag_retention 1).
const TAGS: &[F] = &[
    F::new("maxUniqueTags", T::Int, D::Int(0)),
    F::new("dockerTagRetention", T::Int, D::Int(1)),
];

/// Docker V1 local and federated: the constants the V1 resource sends. [TF] local/
/// resource_artifactory_local_docker_v1_repository.go (api_version "V1", max_unique_tags 0,
/// tag_retention 1, block_pushing_schema1 false, all computed).
const DOCKER_V1: &[(&str, D)] = &[
    ("dockerApiVersion", D::Str("V1")),
    ("maxUniqueTags", D::Int(0)),
    ("dockerTagRetention", D::Int(1)),
    ("blockPushingSchema1", D::Bool(false)),
];
const DOCKER_V2: &[(&str, D)] = &[("dockerApiVersion", D::Str("V2"))];
const TERRAFORM_MODULE: &[(&str, D)] = &[("terraformType", D::Str("module"))];
const TERRAFORM_PROVIDER: &[(&str, D)] = &[("terraformType", D::Str("provider"))];
/// Conan repositories answer `enableConanSupport: true`. [TF] conan.go `ConanBaseParams`.
const CONAN: &[(&str, D)] = &[("enableConanSupport", D::Bool(true))];

/// Virtual `virtualRetrievalCachePeriodSecs` (7200). [TF] virtual/virtual.go
/// `RepositoryBaseParamsWithRetrievalCachePeriodSecs` (retrieval_cache_period_seconds 7200);
/// used by alpine, ansible, chef, conan, conda, cran, debian, helm, npm, rpm
/// (`PackageTypesLikeGenericWithRetrievalCachePeriodSecs` and each resource).
const RETRIEVAL_CACHE: &[F] = &[F::new("virtualRetrievalCachePeriodSecs", T::Int, D::Int(7200))];

/// Virtual external dependencies (bower, npm). [TF] virtual/virtual.go
/// `ExternalDependenciesVirtualRepositoryParams` (external_dependencies_enabled false).
const EXTERNAL_DEPENDENCIES: &[F] = &[
    F::new("externalDependenciesEnabled", T::Bool, D::Bool(false)),
    F::new("externalDependenciesRemoteRepo", T::Str, D::None),
    F::new("externalDependenciesPatterns", T::StrList, D::None),
];

/// Signing key pairs (Debian, RPM). [TF] repository.go `PrimaryKeyPairRefParam`,
/// `SecondaryKeyPairRefParam` (primary_keypair_ref "", secondary_keypair_ref "").
const SIGNING_KEYS: &[F] = &[
    F::new("primaryKeyPairRef", T::Str, D::Str("")),
    F::new("secondaryKeyPairRef", T::Str, D::Str("")),
];
const PRIMARY_KEY: &[F] = &[F::new("primaryKeyPairRef", T::Str, D::Str(""))];

/// Debian local and federated. [TF] local/resource_artifactory_local_debian_repository.go
/// `DebianLocalRepositoryParams` (trivial_layout false, index_compression_formats ["bz2"]);
/// `ddebSupported` (false) only in the local framework resource's API model.
const DEBIAN: &[F] = &[
    F::new("debianTrivialLayout", T::Bool, D::Bool(false)),
    F::new("optionalIndexCompressionFormats", T::StrSet, D::Strs(&["bz2"])),
];

/// RPM local and federated. [TF] local/resource_artifactory_local_rpm_repository.go
/// (yum_root_depth 0, calculate_yum_metadata false, enable_file_lists_indexing false,
/// yum_group_file_names "").
const RPM: &[F] = &[
    F::new("yumRootDepth", T::Int, D::Int(0)),
    F::new("calculateYumMetadata", T::Bool, D::Bool(false)),
    F::new("enableFileListsIndexing", T::Bool, D::Bool(false)),
    F::new("yumGroupFileNames", T::Str, D::Str("")),
];

/// Cargo local and federated. [TF] local/resource_artifactory_local_cargo_repository.go
/// (anonymous_access false, enable_sparse_index false).
const CARGO: &[F] = &[
    F::new("cargoAnonymousAccess", T::Bool, D::Bool(false)),
    F::new("cargoInternalIndex", T::Bool, D::Bool(false)),
];

/// NuGet local and federated. [TF] local/resource_artifactory_local_nuget_repository.go
/// (max_unique_snapshots 0, force_nuget_authentication false).
const NUGET: &[F] = &[
    F::new("maxUniqueSnapshots", T::Int, D::Int(0)),
    F::new("forceNugetAuthentication", T::Bool, D::Bool(false)),
];

/// [TF] conan.go / local/resource_artifactory_local_conan_repository.go
/// (force_conan_authentication false).
const FORCE_CONAN_AUTH: &[F] = &[F::new("forceConanAuthentication", T::Bool, D::Bool(false))];

/// Docker V2 local and federated. [TF] local/resource_artifactory_local_docker_v2_repository.go
/// (block_pushing_schema1 true).
const SCHEMA1: &[F] = &[F::new("blockPushingSchema1", T::Bool, D::Bool(true))];

/// Virtual Docker, OCI, Helm OCI. [TF] virtual/resource_artifactory_virtual_docker_repository.go
/// (resolve_docker_tags_by_timestamp false), shared by the oci and helmoci resources.
const TAGS_BY_TIMESTAMP: &[F] = &[F::new("resolveDockerTagsByTimestamp", T::Bool, D::Bool(false))];

/// A package type of a class: its layout [TF default_repo_layout_map.go] and base members.
const fn kind(
    rclass: RClass,
    package_type: &'static str,
    layout: &'static str,
    parts: &'static [&'static [F]],
) -> KindSpec {
    KindSpec {
        rclass,
        package_type,
        layout,
        parts,
        own: &[],
        fixed: &[],
        overrides: &[],
    }
}

/// Every package type of every class.
pub(super) const KINDS: &[KindSpec] = &[
    // ---- Local ----------------------------------------------------------------------------
    // Base members only: [TF] local/resource_artifactory_local_generic_repository.go
    // `PackageTypesLikeGeneric`, plus the machinelearning and nix local resources.
    kind(Local, "bower", "bower-default", LOCAL),
    kind(Local, "chef", "simple-default", LOCAL),
    kind(Local, "cocoapods", "simple-default", LOCAL),
    kind(Local, "composer", "composer-default", LOCAL),
    kind(Local, "conda", "simple-default", LOCAL),
    kind(Local, "cran", "simple-default", LOCAL),
    kind(Local, "gems", "simple-default", LOCAL),
    kind(Local, "generic", "simple-default", LOCAL),
    kind(Local, "gitlfs", "simple-default", LOCAL),
    kind(Local, "go", "go-default", LOCAL),
    kind(Local, "huggingfaceml", "simple-default", LOCAL),
    kind(Local, "npm", "npm-default", LOCAL),
    kind(Local, "opkg", "simple-default", LOCAL),
    kind(Local, "pub", "simple-default", LOCAL),
    kind(Local, "puppet", "puppet-default", LOCAL),
    kind(Local, "pypi", "simple-default", LOCAL),
    kind(Local, "swift", "swift-default", LOCAL),
    kind(Local, "terraformbackend", "simple-default", LOCAL),
    kind(Local, "vagrant", "simple-default", LOCAL),
    kind(Local, "machinelearning", "simple-default", LOCAL),
    kind(Local, "nix", "nix-default", LOCAL),
    // [TF] local/resource_artifactory_local_<type>_repository.go, one per type.
    kind(Local, "alpine", "simple-default", &[COMMON, STORED, PRIMARY_KEY]),
    kind(Local, "ansible", "ansible-default", &[COMMON, STORED, PRIMARY_KEY]),
    kind(Local, "cargo", "simple-default", &[COMMON, STORED, CARGO]),
    kind(Local, "conan", "conan-default", &[COMMON, STORED, FORCE_CONAN_AUTH]).fixed(CONAN),
    KindSpec {
        own: &[F::new("ddebSupported", T::Bool, D::Bool(false))],
        ..kind(Local, "debian", "simple-default", &[COMMON, STORED, SIGNING_KEYS, DEBIAN])
    },
    kind(Local, "docker", "simple-default", &[COMMON, STORED, TAGS, SCHEMA1]).fixed(DOCKER_V2),
    kind(Local, "docker", "simple-default", LOCAL).fixed(DOCKER_V1),
    KindSpec {
        // force_non_duplicate_chart, force_metadata_name_version: no schema default.
        own: &[
            F::new("forceNonDuplicateChart", T::Bool, D::None),
            F::new("forceMetadataNameVersion", T::Bool, D::None),
        ],
        ..kind(Local, "helm", "simple-default", LOCAL)
    },
    kind(Local, "helmoci", "simple-default", &[COMMON, STORED, TAGS]),
    KindSpec {
        // hex_primary_keypair_ref: Required.
        own: &[F::new("primaryKeyPairRef", T::Str, D::None).req()],
        ..kind(Local, "hex", "simple-default", LOCAL)
    },
    kind(Local, "nuget", "nuget-default", &[COMMON, STORED, NUGET]),
    kind(Local, "oci", "simple-default", &[COMMON, STORED, TAGS]).fixed(DOCKER_V2),
    kind(Local, "rpm", "simple-default", &[COMMON, STORED, SIGNING_KEYS, RPM]),
    // [TF] local/resource_artifactory_local_java_repository.go.
    kind(Local, "maven", "maven-2-default", &[COMMON, STORED, JAVA_LOCAL]).overrides(POM_CHECKS_ON),
    kind(Local, "gradle", "maven-2-default", &[COMMON, STORED, JAVA_LOCAL]),
    kind(Local, "ivy", "ivy-default", &[COMMON, STORED, JAVA_LOCAL]),
    kind(Local, "sbt", "sbt-default", &[COMMON, STORED, JAVA_LOCAL]),
    // [TF] local/resource_artifactory_local_terraform_repository.go (terraformType).
    kind(Local, "terraform", "terraform-module-default", LOCAL).fixed(TERRAFORM_MODULE),
    kind(Local, "terraform", "terraform-provider-default", LOCAL).fixed(TERRAFORM_PROVIDER),
    // ---- Remote ---------------------------------------------------------------------------
    // Base members only: [TF] remote/remote.go `PackageTypesLikeBasic`, and the nix remote
    // resource.
    kind(Remote, "alpine", "simple-default", REMOTE_BASE),
    kind(Remote, "chef", "simple-default", REMOTE_BASE),
    kind(Remote, "conda", "simple-default", REMOTE_BASE),
    kind(Remote, "cran", "simple-default", REMOTE_BASE),
    kind(Remote, "debian", "simple-default", REMOTE_BASE),
    kind(Remote, "gitlfs", "simple-default", REMOTE_BASE),
    kind(Remote, "opkg", "simple-default", REMOTE_BASE),
    kind(Remote, "p2", "simple-default", REMOTE_BASE),
    kind(Remote, "pub", "simple-default", REMOTE_BASE),
    kind(Remote, "puppet", "puppet-default", REMOTE_BASE),
    kind(Remote, "rpm", "simple-default", REMOTE_BASE),
    kind(Remote, "swift", "swift-default", REMOTE_BASE),
    kind(Remote, "nix", "nix-default", REMOTE_BASE),
    // Not in v12.11.7 (later provider releases; remote only, base members): bazelmodules
    // (provider 12.11.8, PR #1433), jetbrainsplugins (appended to `PackageTypesLikeBasic`,
    // PR #1463). Unverified against a JFrog page.
    kind(Remote, "bazelmodules", "simple-default", REMOTE_BASE),
    kind(Remote, "jetbrainsplugins", "simple-default", REMOTE_BASE),
    // aieditorextensions, remote only: [TF] after v12.11.7, PR #1450 (JTFPR-318),
    // remote/resource_artifactory_remote_aieditorextensions_repository.go
    // `RemoteAIEditorExtensionsAPIModel`: the remote base, `CurationAPIModel`,
    // externalDependenciesEnabled (true: "unlike other package types", the payloads live on
    // the vsassets.io CDN), externalDependenciesPatterns (["**/**vsassets.io/**"], "the
    // pattern Artifactory applies by default for this package type"; stored whether enabled
    // or not), enableTokenAuthentication (false, "matching the Artifactory default for this
    // package type"), propagateQueryParams and retrieveSha256FromServer (false),
    // customHttpHeaders; bypassHeadRequests pinned to true ("Artifactory pins
    // bypassHeadRequests to true for this package type"). `url` required: no default gallery.
    KindSpec {
        own: &[
            F::new("externalDependenciesEnabled", T::Bool, D::Bool(true)),
            F::new("externalDependenciesPatterns", T::StrList, D::Strs(&["**/**vsassets.io/**"])),
            F::new("enableTokenAuthentication", T::Bool, D::Bool(false)),
            F::new("customHttpHeaders", T::ObjList, D::None),
        ],
        ..kind(Remote, "aieditorextensions", "simple-default", &[COMMON, STORED, REMOTE, CURATION, REMOTE_GENERIC])
            .fixed(&[("bypassHeadRequests", D::Bool(true))])
    },
    // [TF] remote/resource_artifactory_remote_<type>_repository.go, one per type (each own
    // member with the resource's schema default, taken as the server's like every other; the
    // url defaults of ansible, huggingfaceml and npm too, unverified against a JFrog page).
    KindSpec {
        own: &[
            F::new("url", T::Str, D::Str("https://galaxy.ansible.com")),
            F::new("bypassHeadRequests", T::Bool, D::Bool(true)),
        ],
        ..kind(Remote, "ansible", "ansible-default", REMOTE_BASE)
    },
    KindSpec {
        own: &[F::new("bowerRegistryUrl", T::Str, D::Str("https://registry.bower.io"))],
        ..kind(Remote, "bower", "bower-default", &[COMMON, STORED, REMOTE, VCS])
    },
    KindSpec {
        own: &[
            F::new("gitRegistryUrl", T::Str, D::Str("https://registry.Cargo.io")),
            F::new("cargoAnonymousAccess", T::Bool, D::None),
            F::new("cargoInternalIndex", T::Bool, D::Bool(false)),
        ],
        ..kind(Remote, "cargo", "simple-default", REMOTE_BASE)
    },
    KindSpec {
        own: &[F::new("podsSpecsRepoUrl", T::Str, D::Str("https://github.com/CocoaPods/Specs"))],
        ..kind(Remote, "cocoapods", "simple-default", &[COMMON, STORED, REMOTE, VCS])
    },
    KindSpec {
        own: &[F::new("composerRegistryUrl", T::Str, D::Str("https://packagist.org"))],
        ..kind(Remote, "composer", "composer-default", &[COMMON, STORED, REMOTE, VCS])
    },
    kind(Remote, "conan", "conan-default", &[COMMON, STORED, REMOTE, CURATION, FORCE_CONAN_AUTH])
        .fixed(CONAN),
    KindSpec {
        own: &[F::new("blockPushingSchema1", T::Bool, D::Bool(false))],
        overrides: &[("enableTokenAuthentication", D::Bool(false))],
        ..kind(Remote, "docker", "simple-default", &[COMMON, STORED, REMOTE, CURATION, REMOTE_OCI])
    },
    kind(Remote, "oci", "simple-default", &[COMMON, STORED, REMOTE, REMOTE_OCI]),
    kind(Remote, "helmoci", "simple-default", &[COMMON, STORED, REMOTE, REMOTE_OCI]),
    kind(Remote, "gems", "simple-default", &[COMMON, STORED, REMOTE, CURATION, REMOTE_GENERIC]),
    KindSpec {
        own: &[F::new("customHttpHeaders", T::ObjList, D::None)],
        ..kind(Remote, "generic", "simple-default", &[COMMON, STORED, REMOTE, REMOTE_GENERIC])
    },
    KindSpec {
        own: &[F::new("vcsGitProvider", T::Str, D::Str("ARTIFACTORY"))],
        ..kind(Remote, "go", "go-default", &[COMMON, STORED, REMOTE, CURATION, REMOTE_GENERIC])
    },
    KindSpec {
        own: &[
            F::new("chartsBaseUrl", T::Str, D::Str("")),
            F::new("externalDependenciesEnabled", T::Bool, D::Bool(false)),
            // None unless sent: "Default value in UI is empty" ([TF]
            // remote/resource_artifactory_remote_helm_repository.go); a Helm remote created
            // without patterns reads back without them (TestAccDataSourceVirtualHelmRepository).
            F::new("externalDependenciesPatterns", T::StrSet, D::None),
        ],
        ..kind(Remote, "helm", "simple-default", REMOTE_BASE)
    },
    KindSpec {
        // hex_primary_keypair_ref and public_key: Required.
        own: &[
            F::new("primaryKeyPairRef", T::Str, D::None).req(),
            F::new("hexPublicKey", T::Str, D::None).req(),
        ],
        ..kind(Remote, "hex", "simple-default", REMOTE_BASE)
    },
    KindSpec {
        own: &[F::new("url", T::Str, D::Str("https://huggingface.co"))],
        ..kind(Remote, "huggingfaceml", "simple-default", &[COMMON, STORED, REMOTE, CURATION])
    },
    KindSpec {
        own: &[F::new("url", T::Str, D::Str("https://registry.npmjs.org/"))],
        ..kind(Remote, "npm", "npm-default", &[COMMON, STORED, REMOTE, CURATION])
    },
    KindSpec {
        own: &[
            F::new("feedContextPath", T::Str, D::Str("api/v2")),
            F::new("downloadContextPath", T::Str, D::Str("api/v2/package")),
            F::new("v3FeedUrl", T::Str, D::Str("https://api.nuget.org/v3/index.json")),
            F::new("forceNugetAuthentication", T::Bool, D::Bool(false)),
            F::new(
                "symbolServerUrl",
                T::Str,
                D::Str("https://symbols.nuget.org/download/symbols"),
            ),
        ],
        ..kind(Remote, "nuget", "nuget-default", &[COMMON, STORED, REMOTE, CURATION])
    },
    KindSpec {
        own: &[
            F::new("pyPIRegistryUrl", T::Str, D::Str("https://pypi.org")),
            F::new("pyPIRepositorySuffix", T::Str, D::Str("simple")),
        ],
        ..kind(Remote, "pypi", "simple-default", &[COMMON, STORED, REMOTE, CURATION])
    },
    KindSpec {
        own: &[
            F::new("terraformRegistryUrl", T::Str, D::Str("https://registry.terraform.io")),
            F::new("terraformProvidersUrl", T::Str, D::Str("https://releases.hashicorp.com")),
        ],
        ..kind(Remote, "terraform", "simple-default", REMOTE_BASE)
    },
    KindSpec {
        own: &[F::new("maxUniqueSnapshots", T::Int, D::Int(0))],
        ..kind(Remote, "vcs", "simple-default", &[COMMON, STORED, REMOTE, VCS])
    },
    // [TF] remote/resource_artifactory_remote_{maven,gradle,java}_repository.go.
    kind(Remote, "maven", "maven-2-default", &[COMMON, STORED, REMOTE, CURATION, JAVA_REMOTE])
        .overrides(POM_CHECKS_ON),
    kind(Remote, "gradle", "maven-2-default", &[COMMON, STORED, REMOTE, CURATION, JAVA_REMOTE]),
    kind(Remote, "ivy", "ivy-default", &[COMMON, STORED, REMOTE, JAVA_REMOTE]),
    kind(Remote, "sbt", "sbt-default", &[COMMON, STORED, REMOTE, JAVA_REMOTE]),
    // ---- Virtual --------------------------------------------------------------------------
    // Base members only: [TF] virtual/virtual.go `PackageTypesLikeGeneric`, and the nix
    // virtual resource.
    kind(Virtual, "cocoapods", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "composer", "composer-default", VIRTUAL_BASE),
    kind(Virtual, "gems", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "generic", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "gitlfs", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "p2", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "pub", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "puppet", "puppet-default", VIRTUAL_BASE),
    kind(Virtual, "pypi", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "swift", "swift-default", VIRTUAL_BASE),
    kind(Virtual, "terraform", "simple-default", VIRTUAL_BASE),
    kind(Virtual, "nix", "nix-default", VIRTUAL_BASE),
    // [TF] virtual/virtual.go `PackageTypesLikeGenericWithRetrievalCachePeriodSecs`.
    kind(Virtual, "ansible", "ansible-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE]),
    kind(Virtual, "chef", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE]),
    kind(Virtual, "conda", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE]),
    kind(Virtual, "cran", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE]),
    // [TF] virtual/resource_artifactory_virtual_<type>_repository.go, one per type.
    KindSpec {
        own: &[F::new("primaryKeyPairRef", T::Str, D::None)],
        ..kind(Virtual, "alpine", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE])
    },
    kind(Virtual, "bower", "bower-default", &[COMMON, VIRTUAL, EXTERNAL_DEPENDENCIES]),
    kind(Virtual, "npm", "npm-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE, EXTERNAL_DEPENDENCIES]),
    kind(Virtual, "conan", "conan-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE, FORCE_CONAN_AUTH])
        .fixed(CONAN),
    KindSpec {
        // index_compression_formats without schema default; debian_default_architectures
        // "amd64,i386"; key pairs without schema default.
        own: &[
            F::new("primaryKeyPairRef", T::Str, D::None),
            F::new("secondaryKeyPairRef", T::Str, D::None),
            F::new("optionalIndexCompressionFormats", T::StrSet, D::None),
            F::new("debianDefaultArchitectures", T::Str, D::Str("amd64,i386")),
        ],
        ..kind(Virtual, "debian", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE])
    },
    KindSpec {
        own: &[
            F::new("primaryKeyPairRef", T::Str, D::None),
            F::new("secondaryKeyPairRef", T::Str, D::None),
        ],
        ..kind(Virtual, "rpm", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE])
    },
    kind(Virtual, "docker", "simple-default", &[COMMON, VIRTUAL, TAGS_BY_TIMESTAMP]),
    kind(Virtual, "oci", "simple-default", &[COMMON, VIRTUAL, TAGS_BY_TIMESTAMP]),
    kind(Virtual, "helmoci", "simple-default", &[COMMON, VIRTUAL, TAGS_BY_TIMESTAMP]),
    KindSpec {
        // external_dependencies_enabled true.
        own: &[
            F::new("externalDependenciesEnabled", T::Bool, D::Bool(true)),
            F::new("externalDependenciesPatterns", T::StrList, D::None),
        ],
        ..kind(Virtual, "go", "go-default", VIRTUAL_BASE)
    },
    KindSpec {
        own: &[F::new("useNamespaces", T::Bool, D::Bool(false))],
        ..kind(Virtual, "helm", "simple-default", &[COMMON, VIRTUAL, RETRIEVAL_CACHE])
    },
    KindSpec {
        // hex_primary_keypair_ref: Required.
        own: &[F::new("primaryKeyPairRef", T::Str, D::None).req()],
        ..kind(Virtual, "hex", "simple-default", VIRTUAL_BASE)
    },
    KindSpec {
        own: &[F::new("forceNugetAuthentication", T::Bool, D::Bool(false))],
        ..kind(Virtual, "nuget", "nuget-default", VIRTUAL_BASE)
    },
    kind(Virtual, "maven", "maven-2-default", &[COMMON, VIRTUAL, JAVA_VIRTUAL]),
    kind(Virtual, "gradle", "maven-2-default", &[COMMON, VIRTUAL, JAVA_VIRTUAL]),
    kind(Virtual, "ivy", "ivy-default", &[COMMON, VIRTUAL, JAVA_VIRTUAL]),
    kind(Virtual, "sbt", "sbt-default", &[COMMON, VIRTUAL, JAVA_VIRTUAL]),
    // ---- Federated ------------------------------------------------------------------------
    // Each federated type is the local type plus the federation members. Base members only:
    // [TF] federated/federated.go `PackageTypesLikeGeneric`.
    kind(Federated, "bower", "bower-default", FEDERATED),
    kind(Federated, "chef", "simple-default", FEDERATED),
    kind(Federated, "cocoapods", "simple-default", FEDERATED),
    kind(Federated, "composer", "composer-default", FEDERATED),
    kind(Federated, "conda", "simple-default", FEDERATED),
    kind(Federated, "cran", "simple-default", FEDERATED),
    kind(Federated, "gems", "simple-default", FEDERATED),
    kind(Federated, "generic", "simple-default", FEDERATED),
    kind(Federated, "gitlfs", "simple-default", FEDERATED),
    kind(Federated, "go", "go-default", FEDERATED),
    kind(Federated, "helm", "simple-default", FEDERATED),
    kind(Federated, "huggingfaceml", "simple-default", FEDERATED),
    kind(Federated, "npm", "npm-default", FEDERATED),
    kind(Federated, "opkg", "simple-default", FEDERATED),
    kind(Federated, "puppet", "puppet-default", FEDERATED),
    kind(Federated, "pypi", "simple-default", FEDERATED),
    kind(Federated, "swift", "swift-default", FEDERATED),
    kind(Federated, "vagrant", "simple-default", FEDERATED),
    kind(Federated, "releasebundles", "maven-2-default", FEDERATED),
    // [TF] federated/resource_artifactory_federated_<type>_repository.go (each embedding the
    // local params of its type, see the local blocks above).
    kind(Federated, "alpine", "simple-default", &[COMMON, STORED, FEDERATION, PRIMARY_KEY]),
    kind(Federated, "ansible", "ansible-default", &[COMMON, STORED, FEDERATION, PRIMARY_KEY]),
    kind(Federated, "cargo", "simple-default", &[COMMON, STORED, FEDERATION, CARGO]),
    kind(Federated, "conan", "conan-default", &[COMMON, STORED, FEDERATION, FORCE_CONAN_AUTH])
        .fixed(CONAN),
    kind(Federated, "debian", "simple-default", &[COMMON, STORED, FEDERATION, SIGNING_KEYS, DEBIAN]),
    kind(Federated, "docker", "simple-default", &[COMMON, STORED, FEDERATION, TAGS, SCHEMA1])
        .fixed(DOCKER_V2),
    kind(Federated, "docker", "simple-default", FEDERATED).fixed(DOCKER_V1),
    kind(Federated, "helmoci", "simple-default", &[COMMON, STORED, FEDERATION, TAGS]),
    kind(Federated, "nuget", "nuget-default", &[COMMON, STORED, FEDERATION, NUGET]),
    kind(Federated, "oci", "simple-default", &[COMMON, STORED, FEDERATION, TAGS]).fixed(DOCKER_V2),
    kind(Federated, "rpm", "simple-default", &[COMMON, STORED, FEDERATION, SIGNING_KEYS, RPM]),
    kind(Federated, "maven", "maven-2-default", &[COMMON, STORED, FEDERATION, JAVA_LOCAL])
        .overrides(POM_CHECKS_ON),
    kind(Federated, "gradle", "maven-2-default", &[COMMON, STORED, FEDERATION, JAVA_LOCAL]),
    kind(Federated, "ivy", "ivy-default", &[COMMON, STORED, FEDERATION, JAVA_LOCAL]),
    kind(Federated, "sbt", "sbt-default", &[COMMON, STORED, FEDERATION, JAVA_LOCAL]),
    kind(Federated, "terraform", "terraform-module-default", FEDERATED).fixed(TERRAFORM_MODULE),
    kind(Federated, "terraform", "terraform-provider-default", FEDERATED).fixed(TERRAFORM_PROVIDER),
];
