//! `export` against the simulator holding every repository and webhook Kind and every
//! exportable access Kind (users, groups, permission targets read one by one) (twice, with
//! secrets, with keys that are not Kubernetes names, and a system repository): every object
//! is exported once under its Kind, its manifest is up to date for the adapter as soon as
//! it is observed (adoption changes nothing), no secret value is in any file, and a second
//! export is byte-identical.

use std::collections::BTreeSet;

use jfrog_client::JfrogClient;
use jfrog_sim::{SimConfig, Simulator};
use provider_family::export::{self, Options, Scope};
use serde_json::json;

use crate::seed::{Seeded, seed};

/// The seeded replications: one of each of the five Kinds.
const REPLICATIONS: usize = 5;

fn secret(key: &str) -> String {
    format!("seed-secret-{}-7c1e", key.to_ascii_lowercase())
}

async fn seeded_sim(copies: usize) -> (Simulator, JfrogClient, Vec<Seeded>) {
    let sim = testkit::start_sim_with(SimConfig {
        descriptor_merge_emulation: false,
        ..SimConfig::default()
    })
    .await;
    let client = JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client");
    let seeded = seed(&client, copies, &secret).await.expect("seed");
    // A repository Artifactory creates itself.
    assert!(sim.put_repository_raw(
        "artifactory-build-info",
        json!({"rclass": "local", "packageType": "buildinfo"})
    ));
    // A global environment every platform has.
    assert!(sim.put_object("environments", "DEV", json!({"name": "DEV"})));
    (sim, client, seeded)
}

fn writes(sim: &Simulator) -> u64 {
    sim.request_counts()
        .iter()
        .filter(|(k, _)| !k.starts_with("GET"))
        .map(|(_, n)| n)
        .sum()
}

async fn run(client: &JfrogClient, opts: &Options) -> export::Export {
    let kinds = crate::family_kinds();
    let resolved: Vec<_> = kinds.iter().map(|k| k.resolved().as_ref()).collect();
    export::export(&resolved, client, opts, &mut |_| {})
        .await
        .expect("export")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_object_is_exported_once_and_adopted_without_a_change() {
    let (sim, client, seeded) = seeded_sim(2).await;
    // Every repository and webhook Kind, and the exportable access Kinds (certificates,
    // distribution public keys, environments, Vault configurations, key pairs; users of
    // three Kinds, groups, permission targets).
    // The five replication Kinds once each (a replication is its repository's).
    assert_eq!(seeded.len(), 2 * (150 + 24 + 10) + REPLICATIONS);
    sim.reset_counts();
    let opts = Options::default();
    let ex = run(&client, &opts).await;
    // One list request per list call (repositories, webhooks, certificates, trusted keys,
    // environments, Vault configurations, key pairs, users, groups, permission targets,
    // replications; package cleanup, release bundle v2 cleanup and archive policies, LDAP v2
    // settings and groups, none seeded), one read of each user, group and permission target
    // (their lists show names only) and of each replicated repository's replication, and the
    // repositories list that tells a replication's Kind; and the promotions of each
    // environment (none seeded), whose parents are the environments already listed; and the
    // release bundle v2 names, whose versions are each name's list (no bundle seeded: none).
    let environments = sim.objects("environments").map_or(0, |e| e.len()) as u64;
    assert_eq!(
        ex.requests,
        16 + 2 * 5 + REPLICATIONS as u64 + 1 + environments + 1,
        "{:?}",
        sim.request_counts()
    );
    let replications: Vec<(&str, &str)> = ex
        .objects
        .iter()
        .filter(|o| o.group == "replication")
        .map(|o| (o.kind, o.key.as_str()))
        .collect();
    // A push replication with one target is a single replication; a pull replication a
    // remote repository's.
    assert_eq!(
        replications,
        [
            ("LocalRepositoryMultiReplication", "example-local-maven"),
            ("LocalRepositorySingleReplication", "example-local-generic"),
            ("LocalRepositorySingleReplication", "example-local-npm"),
            ("RemoteRepositoryReplication", "example-remote-generic"),
            ("RemoteRepositoryReplication", "example-remote-maven"),
        ]
    );
    assert_eq!(sim.request_counts().values().sum::<u64>(), ex.requests);
    for list in [
        "GET /access/api/v2/users",
        "GET /artifactory/api/security/groups",
        "GET /artifactory/api/v2/security/permissions",
    ] {
        assert_eq!(sim.request_counts().get(list), Some(&1), "{list}");
    }
    assert!(ex.warnings.is_empty(), "{:#?}", ex.warnings);
    assert!(ex.skipped.is_empty(), "{:#?}", ex.skipped);
    let owned: Vec<&str> = ex.platform_owned.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        owned,
        ["artifactory-build-info", "readers", "DEV", "anonymous"],
        "{:?}",
        ex.platform_owned
    );
    // Each object under its Kind (or a Kind declared alike: FederatedDockerRepository is
    // FederatedDockerV2Repository's alias, and the first declared is used).
    let decl = |kind: &str| {
        crate::family_kinds()
            .iter()
            .map(|k| k.resolved().decl)
            .find(|d| d.kind == kind)
            .expect("declared")
    };
    let alike = |a: &str, b: &str| {
        let (a, b) = (decl(a), decl(b));
        a.identity == b.identity && format!("{:?}", a.fixed_body) == format!("{:?}", b.fixed_body)
    };
    let missing: Vec<&Seeded> = seeded
        .iter()
        .filter(|s| {
            !ex.objects
                .iter()
                .any(|o| o.key == s.key && alike(o.kind, s.kind))
        })
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    assert_eq!(ex.objects.len(), seeded.len());
    // (A replication's key is its repository's.)
    let keys: BTreeSet<(bool, &str)> = ex
        .objects
        .iter()
        .map(|o| (o.group == "replication", o.key.as_str()))
        .collect();
    assert_eq!(keys.len(), seeded.len());

    // Names: valid, and the identifier in the annotation where the name is not it.
    for o in &ex.objects {
        let ann = &o.manifest["metadata"]["annotations"][export::EXTERNAL_NAME];
        // (A replication, identified by its spec field `repoKey`, always carries it.)
        if o.name == o.key && o.group != "replication" {
            assert!(ann.is_null(), "{}", o.name);
        } else {
            assert_eq!(ann, &json!(o.key), "{}", o.name);
            assert_eq!(export::object_name(&o.key), o.name);
            assert!(
                o.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            );
        }
    }

    // Secrets: a remote repository's password is referenced (initProvider) and listed.
    for s in seeded
        .iter()
        .filter(|s| s.with_secret && s.kind.starts_with("Remote"))
    {
        let o = ex
            .objects
            .iter()
            .find(|o| o.key == s.key && o.kind == s.kind)
            .expect("exported");
        let r = &o.manifest["spec"]["initProvider"]["passwordSecretRef"];
        assert_eq!(r["key"], "password", "{}", s.key);
        assert!(
            o.manifest["spec"]["forProvider"]
                .get("passwordSecretRef")
                .is_none()
        );
        assert!(
            ex.secrets
                .iter()
                .any(|x| x.object == format!("{}/{}", o.kind, o.name) && x.referenced)
        );
    }

    // Users: exported as User; with an internal password, its password (never shown by
    // JFrog) is a reference (initProvider) to a Secret of a predictable name, listed.
    for o in ex.objects.iter().filter(|o| o.group == "user") {
        let seeded_kind = seeded.iter().find(|s| s.key == o.key).expect("seeded").kind;
        assert_eq!(o.kind, "User", "{}", o.key);
        let init = &o.manifest["spec"]["initProvider"];
        if seeded_kind == "UnmanagedUser" {
            assert!(init.get("passwordSecretRef").is_none(), "{}", o.key);
        } else {
            assert_eq!(
                init["passwordSecretRef"],
                json!({"name": format!("user-{}", o.name), "key": "password"})
            );
            assert!(
                ex.secrets
                    .iter()
                    .any(|x| x.object == format!("User/{}", o.name)
                        && x.field == "passwordSecretRef"
                        && x.referenced
                        && !x.needed_for_adoption)
            );
        }
    }

    // The access manifests are what the API server accepts (the CRD schema and its
    // rules: a required secret reference cannot wait in initProvider).
    let regs = crate::access::registrations(std::sync::Arc::new(
        provider_family::ClientCache::new(crate::PROVIDER),
    ));
    let crds = provider_family_suite::CrdSchemas::new("artifactory", &regs);
    for o in ex
        .objects
        .iter()
        .filter(|o| matches!(o.group, "user" | "security"))
    {
        let d = crate::access::declarations()
            .iter()
            .find(|d| d.kind == o.kind)
            .expect("declared");
        let schema = crds.schema(d, false);
        let mut m = o.manifest.clone();
        assert!(schema.prune(&mut m).is_empty(), "{}: pruned", o.name);
        let errs = schema.validate(&m, None);
        assert!(errs.is_empty(), "{} {}: {errs:?}", o.kind, o.name);
    }

    // Adoption: each manifest as the reconciler hands it to the adapter is up to date at
    // once, without late initialisation, and nothing is written.
    let problems =
        provider_family::seed::observe_exported(&crate::family_kinds(), &client, &ex.objects).await;
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(writes(&sim), 0);

    // Files: no secret value anywhere; a second export is byte-identical.
    let files = ex.files("artifactory");
    for (path, content) in &files {
        for s in &seeded {
            assert!(!content.contains(&secret(&s.key)), "{path} holds a secret");
        }
        assert!(!content.contains("seed-secret-"), "{path} holds a secret");
        assert!(
            !content.contains("PRIVATE KEY"),
            "{path} holds a private key"
        );
    }
    assert_eq!(run(&client, &opts).await.files("artifactory"), files);
    assert!(files.contains_key("artifactory/repository/kustomization.yaml"));
    assert!(files.contains_key("artifactory/webhook/kustomization.yaml"));
    assert_eq!(
        files.keys().filter(|p| p.ends_with(".yaml")).count(),
        // A kustomization per group (repository, webhook, security, user, replication) and
        // the top one, and the list of Secrets to fill.
        seeded.len() + 7
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_observe_only_and_selected_kinds() {
    let (_sim, client, seeded) = seeded_sim(1).await;
    let opts = Options {
        scope: Scope::Legacy,
        provider_config: "jfrog".into(),
        observe_only: true,
        only: vec!["webhook".into(), "LocalGenericRepository".into()],
    };
    let ex = run(&client, &opts).await;
    let want = seeded
        .iter()
        .filter(|s| s.kind.ends_with("Webhook") || s.kind == "LocalGenericRepository")
        .count();
    assert_eq!(ex.objects.len(), want);
    // The other repositories are in the same list: counted as not selected.
    assert!(ex.skipped.is_empty(), "{:?}", ex.skipped);
    assert_eq!(ex.not_selected, 149);
    for o in &ex.objects {
        let m = &o.manifest;
        assert!(
            m["apiVersion"]
                .as_str()
                .is_some_and(|a| a.ends_with(".artifactory.crossplane.io/v1alpha1"))
        );
        assert!(m["metadata"].get("namespace").is_none());
        assert_eq!(m["spec"]["managementPolicies"], json!(["Observe"]));
        assert_eq!(m["spec"]["providerConfigRef"], json!({"name": "jfrog"}));
        assert!(m["spec"].get("initProvider").is_none());
    }
}

#[test]
fn object_names() {
    assert_eq!(export::object_name("libs-release"), "libs-release");
    let n = export::object_name("Team_Libs");
    assert!(
        n.starts_with("team-libs-") && n.len() == "team-libs-".len() + 8,
        "{n}"
    );
    assert_ne!(export::object_name("a_b"), export::object_name("a.b_"));
    assert!(export::object_name("___").starts_with("x-"));
}

/// The figures of the README: requests and time of an export of N objects (a measurement,
/// not a test: `cargo test -p provider-artifactory --lib measure_export -- --ignored
/// --nocapture`, with `EXPORT_COPIES` copies of every Kind, default 10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement"]
async fn measure_export() {
    let copies = std::env::var("EXPORT_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let (sim, client, seeded) = seeded_sim(copies).await;
    sim.reset_counts();
    let started = std::time::Instant::now();
    let ex = run(&client, &Options::default()).await;
    let listed = started.elapsed();
    let files = ex.files("artifactory");
    let total = started.elapsed();
    let bytes: usize = files.values().map(String::len).sum();
    println!(
        "export of {} objects: {} JFrog requests, {:.2}s to list and build, {:.2}s with the files ({} files, {} KiB)",
        seeded.len(),
        sim.request_counts().values().sum::<u64>(),
        listed.as_secs_f64(),
        total.as_secs_f64(),
        files.len(),
        bytes / 1024
    );
    assert_eq!(ex.objects.len(), seeded.len());
}

/// A family registered with the provider but missing from `family_kinds` would be silently
/// left out of `export`.
#[test]
fn every_registered_kind_is_exportable() {
    let registered: BTreeSet<String> = crate::kinds()
        .iter()
        .map(|r| r.info().kind.to_string())
        .collect();
    let exportable: BTreeSet<String> = crate::family_kinds()
        .iter()
        .map(|k| k.resolved().decl.kind.to_string())
        .collect();
    let missing: Vec<&String> = registered.difference(&exportable).collect();
    assert!(
        missing.is_empty(),
        "add their family to family_kinds(): {missing:?}"
    );
}
