//! End-to-end test of `export` (issue 18): a simulator seeded with every repository and
//! webhook Kind twice (348 objects, some with secrets, some with keys that are not
//! Kubernetes names, and a system repository), exported with `sandbox export`, then the
//! export applied (`kubectl apply -k`) to a fresh sandbox against the same simulator: every
//! MR becomes Ready and Synced and the simulator sees no write during adoption and two more
//! polls. The same with `--legacy`. Exporting twice gives identical files, and no secret
//! value of the simulator is in any of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::{Sandbox, SandboxOptions, TempDir, count, sandbox_binary, wait_for, writes};
use serde_json::{Value, json};

const REPOS: &str = "/artifactory/api/repositories/configurations";
const HOOKS: &str = "/event/api/v1/subscriptions";

fn secret(key: &str) -> String {
    format!("e2e-export-secret-{}-41d9", key.to_ascii_lowercase())
}

/// Every file under `dir` (relative path -> content).
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for e in std::fs::read_dir(dir).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let text = std::fs::read_to_string(&p).expect("read file");
                out.insert(
                    p.strip_prefix(root).expect("under root").to_path_buf(),
                    text,
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `sandbox export --providers artifactory --url URL --token-file F --out OUT [extra]`;
/// returns its standard output.
fn export(url: &str, token_file: &Path, out: &Path, extra: &[&str]) -> String {
    let o = Command::new(sandbox_binary())
        .args(["export", "--providers", "artifactory", "--url", url])
        .arg("--token-file")
        .arg(token_file)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run sandbox export");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "sandbox export failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

/// Every secret value the simulator stores (in clear): repository passwords and webhook
/// handler secrets.
fn stored_secrets(sim: &jfrog_sim::Simulator) -> Vec<String> {
    let mut out = Vec::new();
    for r in sim.objects("repositories").unwrap_or_default() {
        if let Some(p) = r.get("password").and_then(Value::as_str) {
            out.push(p.to_string());
        }
    }
    for w in sim.objects("event_subscriptions").unwrap_or_default() {
        for h in w["handlers"].as_array().into_iter().flatten() {
            if let Some(s) = h.get("secret").and_then(Value::as_str) {
                out.push(s.to_string());
            }
            for s in h["secrets"].as_array().into_iter().flatten() {
                if let Some(v) = s.get("value").and_then(Value::as_str) {
                    out.push(v.to_string());
                }
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Apply the export in `out` to a fresh sandbox against `url`; every MR Ready and Synced;
/// no write from the apply until two more list polls after that. Returns the MR count.
async fn adopt(tag: &str, url: &str, token_file: &Path, out: &Path) -> usize {
    let opts = SandboxOptions::new(tag)
        .jfrog(url, token_file)
        .provider_arg("--max-reconcile-rate=50");
    let sb = Sandbox::start(opts).await;
    sb.sim.reset_requests().await;
    let started = Instant::now();
    // What `kubectl apply -k` would apply: the kustomization renders every manifest.
    let rendered = sb.kubectl_ok(&["kustomize", &out.display().to_string()]);
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&rendered)
        .map(|de| serde::Deserialize::deserialize(de).expect("rendered YAML"))
        .collect();
    assert!(
        docs.iter().all(|d: &Value| d["apiVersion"]
            .as_str()
            .is_some_and(|a| a.contains(".artifactory."))),
        "the kustomization renders only managed resources"
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
    // Two more polls: the provider lists repositories and webhooks twice more.
    let lists = |c: &BTreeMap<String, u64>| count(c, "GET", REPOS).min(count(c, "GET", HOOKS));
    let at_ready = lists(&sb.sim.requests().await);
    let polled = Instant::now();
    let counts = wait_for(
        "two more polls",
        Duration::from_secs(120),
        Duration::from_millis(500),
        || async {
            let c = sb.sim.requests().await;
            (lists(&c) >= at_ready + 2 && polled.elapsed() >= sb.poll * 2).then_some(c)
        },
    )
    .await;
    assert!(
        writes(&counts).is_empty(),
        "{tag}: adoption wrote to JFrog: {:?}",
        writes(&counts)
    );
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
    assert_eq!(seeded.len(), 348);
    assert!(sim.put_repository_raw(
        "artifactory-build-info",
        json!({"rclass": "local", "packageType": "buildinfo"})
    ));
    let dir = TempDir::new("export");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, sim.admin_token()).expect("write token");
    let url = sim.url();

    // Export: two list requests for 348 objects.
    sim.reset_counts();
    let ns = dir.path().join("namespaced");
    let started = Instant::now();
    let summary = export(&url, &token_file, &ns, &[]);
    let took = started.elapsed();
    let requests: u64 = sim.request_counts().values().sum();
    eprintln!(
        "export of {} objects: {requests} JFrog requests, {:.2}s\n{summary}",
        seeded.len(),
        took.as_secs_f64()
    );
    assert_eq!(requests, 2);
    assert!(summary.contains("exported 348 objects"), "{summary}");
    assert!(
        summary.contains("artifactory-build-info: a system repository"),
        "{summary}"
    );
    assert!(!summary.contains("warning"), "{summary}");

    // Twice: identical files; no secret anywhere.
    let again = dir.path().join("again");
    export(&url, &token_file, &again, &[]);
    let files = tree(&ns);
    assert_eq!(files, tree(&again));
    let legacy = dir.path().join("legacy");
    export(&url, &token_file, &legacy, &["--legacy"]);
    let mut secrets = stored_secrets(&sim);
    assert!(secrets.len() >= 40, "seeded secrets: {}", secrets.len());
    secrets.push(sim.admin_token());
    for (path, text) in files.iter().chain(tree(&legacy).iter()) {
        for s in &secrets {
            assert!(
                !text.contains(s.as_str()),
                "{} holds a secret value",
                path.display()
            );
        }
    }

    // Adoption, namespaced then legacy, each by a fresh sandbox against the same platform.
    assert_eq!(adopt("export-ns", &url, &token_file, &ns).await, 348);
    assert_eq!(
        adopt("export-legacy", &url, &token_file, &legacy).await,
        348
    );
}
