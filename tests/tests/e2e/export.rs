//! End-to-end test of `export` (issue 18): a simulator seeded twice with every Kind `export`
//! can list (389 objects: provider-artifactory's 150 repository, 24 webhook and 10
//! exportable access Kinds (certificates, distribution public keys, environments, Vault
//! configurations, key pairs; users of
//! three Kinds, exported as ManagedUser or User; groups and permission targets, whose lists
//! show names only, so each is read) and one replication of each of the five replication
//! Kinds (exported as the single, multi-push or remote replication their repository's class
//! and targets say), provider-xray's 8 listable Kinds (policies, curation
//! policies and conditions, ignore rules, watches, webhooks); some with secrets, some with
//! keys that are not Kubernetes names; and objects the platform makes itself: a system
//! repository, the DEV environment, a built-in curation condition, the anonymous user, the
//! readers group),
//! exported with `sandbox export --providers artifactory,xray`, then the export applied
//! (`kubectl apply -k` per provider) to a fresh sandbox running both providers against the
//! same simulator: every MR becomes Ready and Synced and the simulator sees no write during
//! adoption and two more polls. The same with `--legacy`. Exporting twice gives identical
//! files, and no secret value of the simulator is in any of them.

use std::time::{Duration, Instant};

use e2e::{Sandbox, SandboxOptions, TempDir, file_tree, sandbox_export};
use serde_json::{Value, json};
use std::path::Path;

const REPOS: &str = "/artifactory/api/repositories/configurations";
const HOOKS: &str = "/event/api/v1/subscriptions";
const WATCHES: &str = "/xray/api/v2/watches";
/// The providers exported and adopted.
const PROVIDERS: [&str; 2] = ["artifactory", "xray"];
/// provider-artifactory's seeded objects (2 x (150 + 24 + 10), and one replication of each
/// of the five Kinds), provider-xray's (2 x 8).
const ARTIFACTORY_OBJECTS: usize = 373;
/// The users, groups and permission targets among them, and the replications: read one by
/// one by the export.
const READ_EACH: u64 = 2 * 5 + 5;
const XRAY_OBJECTS: usize = 16;

fn secret(key: &str) -> String {
    format!("e2e-export-secret-{}-41d9", key.to_ascii_lowercase())
}

/// `sandbox export` of both providers; returns its summary.
fn export(url: &str, token_file: &Path, out: &Path, extra: &[&str]) -> String {
    sandbox_export(&PROVIDERS, url, token_file, out, extra)
}

/// Every seeded secret value the simulator stores (in clear) in any collection: repository
/// passwords, webhook handler secrets, certificates' private keys, Vault role and secret
/// IDs, Xray webhook passwords.
fn stored_secrets(sim: &jfrog_sim::Simulator) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) if s.contains("e2e-export-secret-") => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::Object(m) => m.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in [
        "repositories",
        "event_subscriptions",
        "certificates",
        "vault_configs",
        "xray_webhooks",
    ] {
        for o in sim.objects(c).unwrap_or_default() {
            walk(&o, &mut out);
        }
    }
    out
}

/// Apply the export in `out` to a fresh sandbox against `url`; every MR Ready and Synced;
/// no write from the apply until two more list polls after that. Returns the MR count.
async fn adopt(tag: &str, url: &str, token_file: &Path, out: &Path) -> usize {
    let opts = SandboxOptions::new(tag)
        .providers(&PROVIDERS.join(","))
        .jfrog(url, token_file)
        .provider_arg("--max-reconcile-rate=50");
    let sb = Sandbox::start(opts).await;
    sb.sim.reset_requests().await;
    let started = Instant::now();
    // What `kubectl apply -k` would apply: the top kustomization renders every provider's
    // manifests.
    let rendered = sb.kubectl_ok(&["kustomize", &out.display().to_string()]);
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&rendered)
        .map(|de| serde::Deserialize::deserialize(de).expect("rendered YAML"))
        .collect();
    let of = |p: &str| {
        docs.iter()
            .filter(|d| {
                d["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.contains(&format!(".{p}.")))
            })
            .count()
    };
    assert_eq!(
        (of("artifactory"), of("xray")),
        (ARTIFACTORY_OBJECTS, XRAY_OBJECTS),
        "the kustomization renders only managed resources, every one"
    );
    // Applied (server-side, as `kubectl apply --server-side` does) 16 at a time: kubectl
    // sends one object after another, which takes minutes for hundreds on a loaded machine.
    let mrs: Vec<_> = docs.iter().map(|d| sb.mr_of(d)).collect();
    for chunk in mrs.iter().zip(&docs).collect::<Vec<_>>().chunks(16) {
        let mut set = tokio::task::JoinSet::new();
        for (mr, doc) in chunk {
            let (api, name, doc) = (mr.api.clone(), mr.name.clone(), (*doc).clone());
            set.spawn(async move {
                let pp = kube::api::PatchParams::apply("e2e-export").force();
                api.patch(&name, &pp, &kube::api::Patch::Apply(&doc))
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("apply {name}: {e}"))
            });
        }
        while let Some(r) = set.join_next().await {
            r.expect("apply task").expect("apply");
        }
    }
    let applied_after = started.elapsed();
    sb.wait_all_ready(&mrs, Duration::from_secs(240)).await;
    let ready_after = started.elapsed();
    // Two more polls: the providers list repositories, webhooks and watches twice more.
    let counts = sb
        .two_quiet_polls(tag, &[REPOS, HOOKS, WATCHES], Duration::from_secs(120))
        .await;
    eprintln!(
        "{tag}: {} MRs applied in {:.1}s, Ready and Synced {:.1}s after the apply began; JFrog requests until two more polls: {:?}",
        mrs.len(),
        applied_after.as_secs_f64(),
        ready_after.as_secs_f64(),
        counts
    );
    mrs.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exported_platform_is_adopted_without_a_write_in_both_scopes() {
    let sim = testkit::start_sim().await;
    let client = jfrog_client::JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client");
    let seeded = provider_artifactory::seed::seed(&client, 2, &secret)
        .await
        .expect("seed");
    assert_eq!(seeded.len(), ARTIFACTORY_OBJECTS);
    // The watches watch a seeded repository (provider-artifactory's example).
    let xray = provider_xray::seed::seed(&client, 2, &secret)
        .await
        .expect("seed Xray");
    assert_eq!(xray.len(), XRAY_OBJECTS);
    let total = seeded.len() + xray.len();
    // Objects the platform makes itself.
    assert!(sim.put_repository_raw(
        "artifactory-build-info",
        json!({"rclass": "local", "packageType": "buildinfo"})
    ));
    assert!(sim.put_object("environments", "DEV", json!({"name": "DEV"})));
    assert!(sim.put_object(
        "xray_curation_conditions",
        "9001",
        json!({"id": 9001, "name": "Malicious package", "condition_template_id": "Malicious", "is_custom": false})
    ));
    let dir = TempDir::new("export");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, sim.admin_token()).expect("write token");
    let url = sim.url();

    // Export: one list request per list call (16 for provider-artifactory, 6 for
    // provider-xray), one read per user, group, permission target and replication, the
    // repositories list (a replication's Kind follows its repository's class), the
    // Artifactory version (which users API), one list of release bundle promotions per
    // environment and the release bundle names (none seeded, so no name's versions are
    // listed), for 389 objects.
    let environments = sim.objects("environments").map_or(0, |e| e.len()) as u64;
    sim.reset_counts();
    let ns = dir.path().join("namespaced");
    let started = Instant::now();
    let summary = export(&url, &token_file, &ns, &[]);
    let took = started.elapsed();
    let requests: u64 = sim.request_counts().values().sum();
    eprintln!(
        "export of {total} objects: {requests} JFrog requests, {:.2}s\n{summary}",
        took.as_secs_f64()
    );
    assert_eq!(
        requests,
        23 + READ_EACH + 2 + environments,
        "{:?}",
        sim.request_counts()
    );
    // Replications exported with the Kind their repository and targets say.
    for kind in [
        "LocalRepositorySingleReplication",
        "LocalRepositoryMultiReplication",
        "RemoteRepositoryReplication",
    ] {
        assert!(summary.contains(kind), "{kind}: {summary}");
    }
    for list in [
        "GET /access/api/v2/users",
        "GET /artifactory/api/security/groups",
        "GET /artifactory/api/v2/security/permissions",
    ] {
        assert_eq!(sim.request_counts().get(list), Some(&1), "{list}");
    }
    assert!(
        summary.contains(&format!("exported {ARTIFACTORY_OBJECTS} objects"))
            && summary.contains(&format!("exported {XRAY_OBJECTS} objects")),
        "{summary}"
    );
    for owned in [
        "artifactory-build-info: a system repository",
        "DEV: a global environment",
        "9001: a built-in curation condition",
        "anonymous: a user JFrog creates itself",
        "readers: the group JFrog creates itself",
    ] {
        assert!(summary.contains(owned), "{owned}: {summary}");
    }
    assert!(!summary.contains("warning"), "{summary}");

    // Twice: identical files; no secret anywhere.
    let again = dir.path().join("again");
    export(&url, &token_file, &again, &[]);
    let files = file_tree(&ns);
    assert_eq!(files, file_tree(&again));
    let legacy = dir.path().join("legacy");
    export(&url, &token_file, &legacy, &["--legacy"]);
    let mut secrets = stored_secrets(&sim);
    assert!(secrets.len() >= 60, "seeded secrets: {}", secrets.len());
    secrets.push(sim.admin_token());
    for (path, text) in files.iter().chain(file_tree(&legacy).iter()) {
        for s in &secrets {
            assert!(
                !text.contains(s.as_str()),
                "{} holds a secret value",
                path.display()
            );
        }
        assert!(
            !text.contains("PRIVATE KEY"),
            "{} holds a private key",
            path.display()
        );
    }

    // Adoption, namespaced then legacy, each by a fresh sandbox against the same platform.
    assert_eq!(adopt("export-ns", &url, &token_file, &ns).await, total);
    assert_eq!(
        adopt("export-legacy", &url, &token_file, &legacy).await,
        total
    );
}
