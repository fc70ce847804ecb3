//! Unit tests of the declarations, schemas, mapping and diff (pure, no network).

use std::collections::BTreeMap;

use secrecy::SecretString;
use serde_json::{Map, Value, json};

use super::Class;
use super::tables::KINDS;
use provider_family::decl::{Norm, ResolvedKind, Ty};
use provider_family::diff::{self, DiffContext};
use provider_family::schema;
use provider_family::wire::{self, Mode, Secrets};

fn kind(name: &str) -> ResolvedKind {
    KINDS
        .iter()
        .find(|k| k.kind == name)
        .unwrap_or_else(|| panic!("{name} is declared"))
        .resolve()
        .expect("composes")
}

/// What a JFrog server does with a body, approximately: store the members sent; the
/// federation adds itself as a member.
fn server_store(body: &Map<String, Value>, own_prefix: &str) -> Value {
    let mut stored = body.clone();
    if let Some(Value::Array(m)) = stored.get_mut("members") {
        let own = format!("{own_prefix}{}", body["key"].as_str().unwrap_or(""));
        m.insert(0, json!({"url": own, "enabled": true}));
    }
    if stored.contains_key("password") {
        stored.insert("password".into(), json!("JE2ENCRYPTED"));
    }
    Value::Object(stored)
}

fn ctx(key: &str) -> DiffContext {
    DiffContext {
        own_member_prefix: "http://127.0.0.1:1/artifactory/".into(),
        key: key.into(),
    }
}

#[test]
fn every_kind_composes_with_unique_names_and_expected_class_counts() {
    let mut names = std::collections::BTreeSet::new();
    let mut per_class: BTreeMap<Class, usize> = BTreeMap::new();
    for d in KINDS {
        let k = d.resolve().unwrap_or_else(|e| panic!("{e}"));
        assert!(names.insert(d.kind), "{} declared twice", d.kind);
        assert!(d.kind.starts_with(match super::class(d) {
            Class::Local => "Local",
            Class::Remote => "Remote",
            Class::Virtual => "Virtual",
            Class::Federated => "Federated",
        }));
        assert!(k.params().count() > 5, "{}", d.kind);
        *per_class.entry(super::class(d)).or_default() += 1;
    }
    // The catalog's source note: 40 local, 37 remote + RemoteBazelRepository (v12.11.8),
    // 33 virtual, 37 federated; plus the two remote Kinds added upstream later
    // (aieditorextensions, jetbrainsplugins): 150.
    assert_eq!(per_class[&Class::Local], 40);
    assert_eq!(per_class[&Class::Remote], 40);
    assert_eq!(per_class[&Class::Virtual], 33);
    assert_eq!(per_class[&Class::Federated], 37);
    assert_eq!(per_class.values().sum::<usize>(), KINDS.len());
    assert_eq!(KINDS.len(), 150);
}

#[test]
fn composition_order_mixins_then_own_fields_then_overrides() {
    // RemoteNPMRepository redefines url (with a default) over remote-base's required url.
    let npm = kind("RemoteNPMRepository");
    let url = npm.field("url").expect("url");
    assert!(!url.required);
    assert_eq!(
        url.default,
        provider_family::Dv::Str("https://registry.npmjs.org/")
    );
    // A plain remote keeps the required url.
    assert!(
        kind("RemoteAlpineRepository")
            .field("url")
            .expect("url")
            .required
    );
    // Overrides by Kind.
    let gradle = kind("LocalGradleRepository");
    assert_eq!(
        gradle
            .field("suppressPomConsistencyChecks")
            .expect("f")
            .default,
        provider_family::Dv::Bool(true)
    );
    assert_eq!(
        gradle.field("repoLayoutRef").expect("f").default,
        provider_family::Dv::Str("maven-2-default")
    );
    // Mixins: docker remote has curation and oci-like fields.
    let docker = kind("RemoteDockerRepository");
    assert!(docker.field("curated").is_some());
    assert!(docker.field("externalDependenciesPatterns").is_some());
    assert_eq!(
        docker
            .field("enableTokenAuthentication")
            .expect("f")
            .default,
        provider_family::Dv::Bool(false)
    );
}

/// A structural-schema check (what the API server requires of CRD schemas): every node has
/// a type, objects declare properties or additionalProperties, arrays declare items.
fn assert_structural(path: &str, s: &Value) {
    let t = s["type"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: no type"));
    assert!(s.get("$ref").is_none(), "{path}: $ref");
    match t {
        "object" => {
            let props = s.get("properties").and_then(Value::as_object);
            let addl = s.get("additionalProperties");
            assert!(
                props.is_some() || addl.is_some(),
                "{path}: object without properties"
            );
            for (k, v) in props.into_iter().flatten() {
                assert_structural(&format!("{path}.{k}"), v);
            }
            if let Some(a) = addl {
                assert_structural(&format!("{path}.*"), a);
            }
            if let Some(req) = s.get("required").and_then(Value::as_array) {
                for r in req {
                    let r = r.as_str().expect("required name");
                    assert!(
                        props.is_some_and(|p| p.contains_key(r)),
                        "{path}: required {r} not a property"
                    );
                }
            }
        }
        "array" => {
            assert_structural(&format!("{path}[]"), &s["items"]);
            if s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("set") {
                assert_ne!(s["items"]["type"], "object", "{path}: set of objects");
            }
        }
        "string" | "boolean" | "integer" | "number" => {}
        other => panic!("{path}: type {other}"),
    }
}

#[test]
fn every_schema_is_structural_and_secret_fields_are_refs() {
    for d in KINDS {
        let k = d.resolve().expect("composes");
        let p = schema::parameters_schema(&k);
        assert_structural(&format!("{}.forProvider", d.kind), &p);
        let o = schema::observation_schema(&k, d.family.id_description());
        assert_structural(&format!("{}.atProvider", d.kind), &o);
        let props = p["properties"].as_object().expect("props");
        assert!(!props.contains_key("password"));
        assert!(!props.contains_key("key"), "key is the external name");
        if super::class(d) == Class::Remote {
            assert_eq!(
                props["passwordSecretRef"]["required"],
                json!(["key", "name"])
            );
            assert!(
                !o["properties"]
                    .as_object()
                    .expect("p")
                    .contains_key("passwordSecretRef")
            );
        }
        // Output-only fields only in atProvider.
        for f in k.fields.iter().filter(|f| f.status_only) {
            assert!(!props.contains_key(f.crd), "{}: {}", d.kind, f.crd);
        }
        // No schema defaults (they would override initProvider).
        assert!(!p.to_string().contains("\"default\""), "{}", d.kind);
    }
}

#[test]
fn immutable_fields_get_transition_rules() {
    let helm = kind("LocalHelmRepository");
    let s = schema::parameters_schema(&helm);
    let rules = s["x-kubernetes-validations"].as_array().expect("rules");
    assert!(rules.iter().any(|r| {
        r["rule"]
            .as_str()
            .is_some_and(|x| x.contains("oldSelf.forceNonDuplicateChart"))
    }));
    assert!(
        schema::parameters_schema(&kind("LocalGenericRepository"))
            .get("x-kubernetes-validations")
            .is_none()
    );
}

#[test]
fn local_maven_round_trip_is_up_to_date() {
    let k = kind("LocalMavenRepository");
    let params = json!({
        "description": "releases",
        "propertySets": ["artifactory"],
        "handleSnapshots": false,
        "maxUniqueSnapshots": 5,
        "checksumPolicyType": "server-generated-checksums"
    });
    let body = wire::to_wire(
        &k,
        "libs",
        &params,
        &Secrets::new(),
        Mode::Create,
        &[],
        None,
    )
    .expect("maps");
    assert_eq!(body["rclass"], "local");
    assert_eq!(body["packageType"], "maven");
    assert_eq!(body["repoLayoutRef"], "maven-2-default");
    assert_eq!(body["suppressPomConsistencyChecks"], false);
    assert_eq!(
        body["downloadRedirect"], false,
        "download_direct maps to downloadRedirect"
    );
    assert_eq!(body["maxUniqueSnapshots"], 5);
    let stored = server_store(&body, "");
    let observed = wire::from_wire(&k, &stored);
    assert_eq!(observed["downloadDirect"], false);
    assert!(diff::diff(&k, &params, &[], &observed, &ctx("libs")).is_empty());
    // Sets are unordered: JFrog reordering them is not drift.
    let mut reordered = observed.clone();
    reordered.insert("propertySets".into(), json!(["artifactory"]));
    assert!(diff::diff(&k, &params, &[], &reordered, &ctx("libs")).is_empty());
    // A change in JFrog is drift.
    let mut drifted = observed.clone();
    drifted.insert("handleSnapshots".into(), json!(true));
    assert_eq!(
        diff::diff(&k, &params, &[], &drifted, &ctx("libs")),
        vec!["handleSnapshots"]
    );
    // A default changed in JFrog is drift too (unset means the default).
    let mut drifted = observed;
    drifted.insert("xrayIndex".into(), json!(true));
    assert_eq!(
        diff::diff(&k, &params, &[], &drifted, &ctx("libs")),
        vec!["xrayIndex"]
    );
}

#[test]
fn remote_nested_block_maps_to_dotted_wire_paths_and_back() {
    let k = kind("RemoteGenericRepository");
    let params = json!({
        "url": "https://example.com/files",
        "contentSynchronisation": [{"enabled": true, "statisticsEnabled": true}]
    });
    let body =
        wire::to_wire(&k, "r", &params, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    assert_eq!(
        body["contentSynchronisation"],
        json!({"enabled": true, "statistics": {"enabled": true}, "properties": {"enabled": false}, "source": {"originAbsenceDetection": false}})
    );
    assert_eq!(body["retrievalCachePeriodSecs"], 7200);
    assert_eq!(body["missedRetrievalCachePeriodSecs"], 1800);
    let observed = wire::from_wire(&k, &server_store(&body, ""));
    assert_eq!(
        observed["contentSynchronisation"],
        json!([{"enabled": true, "statisticsEnabled": true, "propertiesEnabled": false, "sourceOriginAbsenceDetection": false}])
    );
    assert!(diff::diff(&k, &params, &[], &observed, &ctx("r")).is_empty());
    // Unset block: not sent, and JFrog's value is not drift.
    let bare = json!({"url": "https://example.com/files"});
    let body =
        wire::to_wire(&k, "r", &bare, &Secrets::new(), Mode::Update, &[], None).expect("maps");
    assert!(!body.contains_key("contentSynchronisation"));
    assert!(diff::diff(&k, &bare, &[], &observed, &ctx("r")).is_empty());
    // The description suffix some versions add is not drift.
    let mut suffixed = observed.clone();
    suffixed.insert("description".into(), json!(" (local file cache)"));
    assert!(diff::diff(&k, &bare, &[], &suffixed, &ctx("r")).is_empty());
}

#[test]
fn virtual_members_are_ordered_and_sentinel_clears_default_deployment_repo() {
    let k = kind("VirtualMavenRepository");
    let params = json!({"repositories": ["a", "b"], "defaultDeploymentRepo": "a"});
    let body =
        wire::to_wire(&k, "v", &params, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    assert_eq!(body["repositories"], json!(["a", "b"]));
    // forceMavenAuthentication is server-defaulted: not sent when unset.
    assert!(!body.contains_key("forceMavenAuthentication"));
    let mut stored = server_store(&body, "");
    stored["forceMavenAuthentication"] = json!(true);
    stored["pomRepositoryReferencesCleanupPolicy"] = json!("discard_active_reference");
    let observed = wire::from_wire(&k, &stored);
    assert!(diff::diff(&k, &params, &[], &observed, &ctx("v")).is_empty());
    let swapped = json!({"repositories": ["b", "a"], "defaultDeploymentRepo": "a"});
    assert_eq!(
        diff::diff(&k, &swapped, &[], &observed, &ctx("v")),
        vec!["repositories"]
    );
    // Removing defaultDeploymentRepo: drift, and the update sends the sentinel.
    let removed = json!({"repositories": ["a", "b"]});
    assert_eq!(
        diff::diff(&k, &removed, &[], &observed, &ctx("v")),
        vec!["defaultDeploymentRepo"]
    );
    let body = wire::to_wire(
        &k,
        "v",
        &removed,
        &Secrets::new(),
        Mode::Update,
        &[],
        Some(&Value::Object(observed.clone())),
    )
    .expect("maps");
    assert_eq!(body["defaultDeploymentRepo"], wire::CLEAR_SENTINEL);
    let mut cleared = observed;
    cleared.remove("defaultDeploymentRepo");
    assert!(diff::diff(&k, &removed, &[], &cleared, &ctx("v")).is_empty());
}

#[test]
fn federated_members_ignore_the_server_added_self_member_and_trailing_slash() {
    let k = kind("FederatedGenericRepository");
    let params =
        json!({"member": [{"url": "https://eu.example.com/artifactory/f/", "enabled": true}]});
    let body =
        wire::to_wire(&k, "f", &params, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    assert_eq!(
        body["members"],
        json!([{"url": "https://eu.example.com/artifactory/f/", "enabled": true}])
    );
    assert_eq!(body["terraformType"], "");
    let mut stored = server_store(&body, "http://127.0.0.1:1/artifactory/");
    stored["members"][1]["url"] = json!("https://eu.example.com/artifactory/f");
    let observed = wire::from_wire(&k, &stored);
    assert_eq!(observed["member"].as_array().map(Vec::len), Some(2));
    assert!(diff::diff(&k, &params, &[], &observed, &ctx("f")).is_empty());
    let disabled =
        json!({"member": [{"url": "https://eu.example.com/artifactory/f", "enabled": false}]});
    assert_eq!(
        diff::diff(&k, &disabled, &[], &observed, &ctx("f")),
        vec!["member"]
    );
    // cleanupOnDelete is provider-side only.
    let p = json!({"member": [], "cleanupOnDelete": true});
    let body = wire::to_wire(&k, "f", &p, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    assert!(!body.contains_key("cleanupOnDelete"));
}

#[test]
fn late_init_fills_only_unset_server_defaulted_fields() {
    let k = kind("VirtualMavenRepository");
    let observed: Map<String, Value> = json!({
        "forceMavenAuthentication": true,
        "pomRepositoryReferencesCleanupPolicy": "nothing",
        "description": "from JFrog",
        "repositories": ["x"]
    })
    .as_object()
    .expect("object")
    .clone();
    let mut params = json!({"pomRepositoryReferencesCleanupPolicy": "discard_any_reference"});
    assert!(diff::late_initialize(&k, &mut params, &[], &observed));
    assert_eq!(params["forceMavenAuthentication"], true);
    assert_eq!(
        params["pomRepositoryReferencesCleanupPolicy"],
        "discard_any_reference"
    );
    assert!(params.get("description").is_none(), "not server-defaulted");
    assert!(params.get("repositories").is_none(), "not server-defaulted");
    // Nothing more to fill: no change reported.
    assert!(!diff::late_initialize(&k, &mut params, &[], &observed));
    // A field given in initProvider only is left alone.
    let mut p = json!({});
    diff::late_initialize(
        &k,
        &mut p,
        &["forceMavenAuthentication".to_string()],
        &observed,
    );
    assert!(p.get("forceMavenAuthentication").is_none());
}

#[test]
fn removed_fields_are_cleared_on_update() {
    let k = kind("LocalGenericRepository");
    let before = json!({"description": "d", "propertySets": ["p"], "xrayIndex": true});
    let body =
        wire::to_wire(&k, "l", &before, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    let observed = wire::from_wire(&k, &server_store(&body, ""));
    let after = json!({});
    let mut d = diff::diff(&k, &after, &[], &observed, &ctx("l"));
    d.sort();
    assert_eq!(d, vec!["description", "propertySets", "xrayIndex"]);
    let body =
        wire::to_wire(&k, "l", &after, &Secrets::new(), Mode::Update, &[], None).expect("maps");
    assert_eq!(body["description"], "");
    assert_eq!(body["propertySets"], json!([]));
    assert_eq!(body["xrayIndex"], false);
    // Init-only fields are neither compared nor sent on update.
    let init_only = vec!["description".to_string()];
    let body = wire::to_wire(
        &k,
        "l",
        &after,
        &Secrets::new(),
        Mode::Update,
        &init_only,
        None,
    )
    .expect("maps");
    assert!(!body.contains_key("description"));
    assert!(!diff::diff(&k, &after, &init_only, &observed, &ctx("l")).contains(&"description"));
}

#[test]
fn project_fields_are_unmanaged_when_unset_and_environments_need_a_project() {
    let k = kind("LocalGenericRepository");
    let body = wire::to_wire(
        &k,
        "l",
        &json!({}),
        &Secrets::new(),
        Mode::Update,
        &[],
        None,
    )
    .expect("maps");
    assert!(!body.contains_key("projectKey"));
    assert!(!body.contains_key("environments"));
    let observed: Map<String, Value> = json!({"projectKey": "", "environments": []})
        .as_object()
        .expect("o")
        .clone();
    let p = json!({"projectEnvironments": ["PROD"]});
    assert!(
        !diff::diff(&k, &p, &[], &observed, &ctx("l")).contains(&"projectEnvironments"),
        "ignored outside a project"
    );
    let observed: Map<String, Value> = json!({"projectKey": "proj", "environments": ["DEV"]})
        .as_object()
        .expect("o")
        .clone();
    assert!(diff::diff(&k, &p, &[], &observed, &ctx("l")).contains(&"projectEnvironments"));
    assert!(
        !diff::diff(&k, &p, &[], &observed, &ctx("l")).contains(&"projectKey"),
        "unset = unmanaged"
    );
}

#[test]
fn secrets_are_sent_hashed_and_never_observed() {
    let k = kind("RemoteMavenRepository");
    let params = json!({
        "url": "https://repo1.maven.org/maven2",
        "username": "bot",
        "passwordSecretRef": {"name": "s", "key": "password"}
    });
    // Missing secret value: an error naming the field, not a silent omission.
    let err = wire::to_wire(&k, "r", &params, &Secrets::new(), Mode::Create, &[], None)
        .expect_err("needs the secret");
    assert!(err.to_string().contains("passwordSecretRef"));
    let mut secrets: Secrets = BTreeMap::new();
    secrets.insert("passwordSecretRef".into(), SecretString::from("hunter2"));
    let body = wire::to_wire(&k, "r", &params, &secrets, Mode::Create, &[], None).expect("maps");
    assert_eq!(body["password"], "hunter2");
    let h1 = diff::write_only_hashes(&k, &body, "uid-1", None);
    assert!(h1["password"].starts_with("sha256:"));
    assert!(!h1["password"].contains("hunter2"));
    assert_eq!(h1, diff::write_only_hashes(&k, &body, "uid-1", None));
    assert_ne!(
        h1,
        diff::write_only_hashes(&k, &body, "uid-2", None),
        "salted"
    );
    assert_ne!(
        h1,
        diff::write_only_hashes(&k, &body, "uid-1", Some("2")),
        "version trigger"
    );
    secrets.insert("passwordSecretRef".into(), SecretString::from("changed"));
    let body2 = wire::to_wire(&k, "r", &params, &secrets, Mode::Create, &[], None).expect("maps");
    assert_ne!(h1, diff::write_only_hashes(&k, &body2, "uid-1", None));
    // JFrog's encrypted answer never reaches the observation, and is not drift.
    let observed = wire::from_wire(&k, &server_store(&body, ""));
    assert!(!observed.contains_key("password"));
    assert!(!Value::Object(observed.clone()).to_string().contains("JE2"));
    assert!(diff::diff(&k, &params, &[], &observed, &ctx("r")).is_empty());
    // Debug of the inputs never shows the value.
    assert!(!format!("{secrets:?}").contains("changed"));
    // The write-only variant wins over password.
    let mut s2 = secrets.clone();
    s2.insert("passwordWoSecretRef".into(), SecretString::from("wo"));
    let p2 = json!({"url": "https://x.example.com", "passwordSecretRef": {"name": "s", "key": "p"}, "passwordWoSecretRef": {"name": "s", "key": "w"}});
    let b = wire::to_wire(&k, "r", &p2, &s2, Mode::Create, &[], None).expect("maps");
    assert_eq!(b["password"], "wo");
}

#[test]
fn norms_behave() {
    let vdeb = kind("VirtualDebianRepository");
    let f = vdeb.field("debianDefaultArchitectures").expect("f");
    assert_eq!(f.norm, Norm::CommaSet);
    assert!(diff::equal(
        f,
        Some(&json!("amd64, i386")),
        Some(&json!("i386,amd64")),
        &ctx("x")
    ));
    let nuget = kind("RemoteNugetRepository");
    let f = nuget.field("v3FeedUrl").expect("f");
    assert!(diff::equal(
        f,
        Some(&json!("https://api.nuget.org/v3/index.json")),
        None,
        &ctx("x")
    ));
    let rm = kind("RemoteMavenRepository");
    let f = rm.field("remoteRepoLayoutRef").expect("f");
    assert!(diff::equal(
        f,
        Some(&json!("")),
        Some(&json!("maven-2-default")),
        &ctx("x")
    ));
    assert!(!diff::equal(
        f,
        Some(&json!("ivy-default")),
        Some(&json!("maven-2-default")),
        &ctx("x")
    ));
    // Remote oci-like patterns only while enabled.
    let docker = kind("RemoteDockerRepository");
    let p = json!({"url": "https://registry-1.docker.io", "externalDependenciesPatterns": ["**"]});
    let body =
        wire::to_wire(&docker, "d", &p, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    assert!(!body.contains_key("externalDependenciesPatterns"));
    let p = json!({"url": "https://registry-1.docker.io", "externalDependenciesEnabled": true, "externalDependenciesPatterns": ["**"]});
    let body =
        wire::to_wire(&docker, "d", &p, &Secrets::new(), Mode::Create, &[], None).expect("maps");
    assert_eq!(body["externalDependenciesPatterns"], json!(["**"]));
    assert_eq!(body["dockerProjectId"], "");
    // Ints compare numerically; bools treat absent as false.
    let lm = kind("LocalMavenRepository");
    let f = lm.field("maxUniqueSnapshots").expect("f");
    assert!(diff::equal(f, Some(&json!(0)), None, &ctx("x")));
    assert!(matches!(f.ty, Ty::Int));
}

#[test]
fn docker_v1_fixed_body_wins_over_output_only_fields() {
    let k = kind("LocalDockerV1Repository");
    let body = wire::to_wire(
        &k,
        "d",
        &json!({}),
        &Secrets::new(),
        Mode::Create,
        &[],
        None,
    )
    .expect("maps");
    assert_eq!(body["dockerApiVersion"], "V1");
    assert_eq!(body["maxUniqueTags"], 0);
    assert_eq!(body["dockerTagRetention"], 1);
    let s = schema::parameters_schema(&k);
    assert!(s["properties"].get("apiVersion").is_none());
    let o = wire::from_wire(&k, &server_store(&body, ""));
    assert_eq!(o["apiVersion"], "V1");
    let v2 = kind("LocalDockerV2Repository");
    let body = wire::to_wire(
        &v2,
        "d",
        &json!({"maxUniqueTags": 3}),
        &Secrets::new(),
        Mode::Create,
        &[],
        None,
    )
    .expect("maps");
    assert_eq!(body["dockerApiVersion"], "V2");
    assert_eq!(body["maxUniqueTags"], 3);
    assert_eq!(body["blockPushingSchema1"], true);
}

/// The CRDs the runtime generates from these declarations are accepted by the API-server
/// rules of the test server, and every example validates against its CRD without pruning.
#[test]
fn generated_crds_are_valid_and_accept_the_examples() {
    use super::examples::example;
    let regs = super::registrations(std::sync::Arc::new(provider_family::ClientCache::new(
        crate::PROVIDER,
    )));
    assert_eq!(regs.len(), KINDS.len());
    let crds = provider_runtime::crd::provider_crds_for("artifactory", &regs);
    let mut checked = 0;
    for d in KINDS {
        for legacy in [false, true] {
            let group = if legacy {
                "repository.artifactory.crossplane.io"
            } else {
                "repository.artifactory.m.crossplane.io"
            };
            let plural = provider_runtime::managed::kind::pluralize(d.kind);
            let crd = crds
                .iter()
                .find(|c| c.name == format!("{plural}.{group}"))
                .unwrap_or_else(|| panic!("no CRD for {} in {group}", d.kind));
            let mut doc = crd.document.clone();
            crd_schema::default_crd(&mut doc);
            let errs = crd_schema::validate_crd(&doc, None);
            assert!(errs.is_empty(), "{}: {errs:?}", crd.name);
            let schema = crd_schema::Schema::compile(
                &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            )
            .unwrap_or_else(|e| panic!("{}: {e:?}", crd.name));
            let mut ex = example(d, legacy);
            if legacy {
                ex["spec"]["providerConfigRef"] = json!({"name": "default"});
            }
            let pruned = schema.prune(&mut ex);
            assert!(pruned.is_empty(), "{}: pruned {pruned:?}", d.kind);
            let errs = schema.validate(&ex, None);
            assert!(errs.is_empty(), "{}: {errs:?}", d.kind);
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * KINDS.len());
}

#[test]
fn immutable_field_change_is_rejected_at_admission() {
    let regs = super::registrations(std::sync::Arc::new(provider_family::ClientCache::new(
        crate::PROVIDER,
    )));
    let crds = provider_runtime::crd::provider_crds_for("artifactory", &regs);
    let crd = crds
        .iter()
        .find(|c| c.name == "localhelmrepositories.repository.artifactory.m.crossplane.io")
        .expect("helm CRD");
    let schema = crd_schema::Schema::compile(
        &crd.document["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
    )
    .expect("compiles");
    let obj = |v: Value| {
        json!({
            "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
            "kind": "LocalHelmRepository",
            "metadata": {"name": "h", "namespace": "default"},
            "spec": {"forProvider": v, "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"}}
        })
    };
    let old = obj(json!({"forceNonDuplicateChart": true}));
    let changed = obj(json!({"forceNonDuplicateChart": false}));
    let errs = schema.validate(&changed, Some(&old));
    assert!(
        errs.iter().any(|e| e
            .to_string()
            .contains("forceNonDuplicateChart is immutable")),
        "{errs:?}"
    );
    let removed = obj(json!({}));
    assert!(!schema.validate(&removed, Some(&old)).is_empty());
    // Setting it the first time (e.g. late initialisation) is allowed.
    assert!(schema.validate(&old, Some(&removed)).is_empty());
}

/// OCI and Helm OCI repositories keep at least one tag by digest (upstream `AtLeast(1)`):
/// `tagRetention: 0` is refused at admission, 1 is accepted; Docker V2 still takes 0.
#[test]
fn oci_tag_retention_below_one_is_refused_at_admission() {
    let regs = super::registrations(std::sync::Arc::new(provider_family::ClientCache::new(
        crate::PROVIDER,
    )));
    let crds = provider_runtime::crd::provider_crds_for("artifactory", &regs);
    let check = |plural: &str, kind: &str, retention: i64| {
        let crd = crds
            .iter()
            .find(|c| c.name == format!("{plural}.repository.artifactory.m.crossplane.io"))
            .expect("CRD");
        let schema = crd_schema::Schema::compile(
            &crd.document["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        )
        .expect("compiles");
        let obj = json!({
            "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
            "kind": kind,
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"forProvider": {"tagRetention": retention}, "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"}}
        });
        format!("{:?}", schema.validate(&obj, None))
    };
    assert!(
        check("localocirepositories", "LocalOciRepository", 0)
            .contains("tagRetention must be at least 1")
    );
    assert_eq!(check("localocirepositories", "LocalOciRepository", 1), "[]");
    assert!(
        check(
            "federatedhelmocirepositories",
            "FederatedHelmociRepository",
            0
        )
        .contains("tagRetention")
    );
    assert_eq!(
        check("localdockerv2repositories", "LocalDockerV2Repository", 0),
        "[]"
    );
}
