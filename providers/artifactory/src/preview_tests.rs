//! `preview` against the simulator: N repositories (default 1,000; `PREVIEW_REPOS`)
//! previewed with one list, 0 writes, each previewed as what the provider would do; a write
//! attempted during a preview fails it and never reaches JFrog.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use jfrog_client::{Idempotency, Method, Service};
use jfrog_sim::{SimConfig, Simulator};
use provider_family::preview::{self, Format, PreviewArgs, PreviewError};
use provider_family::{HookCtx, Hooks};
use provider_runtime::managed::external::ExternalClient;
use serde_json::{Value, json};

fn args(url: &str, token: &Path, files: &[&Path], format: Format) -> PreviewArgs {
    PreviewArgs {
        url: Some(url.to_string()),
        token_file: Some(token.to_path_buf()),
        token_env: None,
        provider_config: None,
        service_account: None,
        files: files.iter().map(|f| f.display().to_string()).collect(),
        format,
        namespace: None,
        kubeconfig: None,
        all_namespaces: false,
        hide_skipped: false,
    }
}

fn writes(sim: &Simulator) -> Vec<(String, u64)> {
    sim.request_counts()
        .into_iter()
        .filter(|(k, n)| *n > 0 && !k.starts_with("GET"))
        .collect()
}

fn manifest(kind: &str, name: &str, description: &str) -> Value {
    json!({
        "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"forProvider": {"description": description}},
    })
}

fn write_stream(path: &Path, docs: &[Value]) {
    let text: Vec<String> = docs
        .iter()
        .map(|d| format!("---\n{}\n", serde_json::to_string(d).unwrap()))
        .collect();
    std::fs::write(path, text.concat()).unwrap();
}

async fn sim() -> (Simulator, testkit::TempDir, std::path::PathBuf) {
    let sim = testkit::start_sim_with(SimConfig {
        descriptor_merge_emulation: false,
        ..SimConfig::default()
    })
    .await;
    let dir = testkit::TempDir::new("preview");
    let token = dir.path().join("token");
    std::fs::write(&token, sim.admin_token()).unwrap();
    (sim, dir, token)
}

/// N repositories: 90 % exist and match, 5 % differ in their description, 5 % are new;
/// one list answers every observation, nothing is written, every item is what the
/// provider would do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_of_many_repositories_costs_one_list_and_no_write() {
    let n: usize = std::env::var("PREVIEW_REPOS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let (sim, dir, token) = sim().await;
    let kind = crate::repository::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "LocalGenericRepository")
        .expect("the Kind");
    let seeder = provider_family::FamilyClient::new(
        jfrog_client::JfrogClient::builder(sim.url())
            .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
            .build()
            .expect("client"),
        kind.resolved().clone(),
    );
    let mut docs = Vec::new();
    for i in 0..n {
        let key = format!("libs-{i:04}");
        let new = i % 20 == 19;
        if !new {
            // Created as the provider creates it (its adapter, its defaults).
            let mut mr = provider_family::adapter::managed(
                &key,
                &key,
                json!({"description": "team libraries"}),
            );
            seeder.create(&mut mr).await.expect("seed a repository");
        }
        let description = if i % 20 == 9 {
            "team libraries, edited"
        } else {
            "team libraries"
        };
        docs.push(manifest("LocalGenericRepository", &key, description));
    }
    let file = dir.path().join("repos.yaml");
    write_stream(&file, &docs);
    sim.reset_counts();
    let started = Instant::now();
    let report = preview::run(
        &crate::PROVIDER,
        &crate::family_kinds(),
        &args(&sim.url(), &token, &[&file], Format::Json),
    )
    .await
    .expect("preview");
    let took = started.elapsed();
    let counts = sim.request_counts();
    println!(
        "preview of {n} repositories: {} JFrog requests ({:?}), {:.2}s; summary {:?}",
        report.requests,
        counts.iter().filter(|(_, v)| **v > 0).collect::<Vec<_>>(),
        took.as_secs_f64(),
        report.summary
    );
    assert!(writes(&sim).is_empty(), "{:?}", writes(&sim));
    assert_eq!(report.writes, 0);
    assert_eq!(report.items.len(), n);
    let count = |a: &str| report.items.iter().filter(|i| i.action == a).count();
    assert_eq!(count("create"), n / 20);
    assert_eq!(count("update"), n / 20);
    assert_eq!(count("adopt"), n - 2 * (n / 20));
    // The version check and one list of every repository; no read by key.
    assert_eq!(
        counts
            .get("GET /artifactory/api/repositories/configurations")
            .copied(),
        Some(1),
        "{counts:?}"
    );
    assert_eq!(
        counts
            .get("GET /artifactory/api/repositories/{key}")
            .copied()
            .unwrap_or(0),
        0
    );
    assert!(report.requests <= 3, "{}", report.requests);
    let update = report
        .items
        .iter()
        .find(|i| i.action == "update")
        .expect("an update");
    assert_eq!(update.name, "libs-0009");
    assert_eq!(
        serde_json::to_value(&update.changes).unwrap(),
        json!([{"path": "forProvider.description", "kind": "update",
                "old": "team libraries", "new": "team libraries, edited"}])
    );
    let create = report
        .items
        .iter()
        .find(|i| i.action == "create")
        .expect("a create");
    assert_eq!(create.name, "libs-0019");
    assert_eq!(create.external_name, "libs-0019");
    assert_eq!(
        create.create,
        Some(json!({"description": "team libraries"}))
    );
    assert_eq!(report.exit_code(), 2);
    for f in [Format::Text, Format::Markdown] {
        let out = preview::render(&report, f);
        if n <= 40 {
            println!("{out}");
        }
        assert!(out.contains("libs-0009"), "{out}");
        assert!(
            out.contains("\"team libraries\" -> \"team libraries, edited\""),
            "{out}"
        );
    }
}

/// Admission, a singleton's second MR, another provider's object and a secret: refused,
/// blocked, skipped, and the secret's value nowhere in any output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_blocked_skipped_and_secrets() {
    let (sim, dir, token) = sim().await;
    let secret = "preview-secret-value-5d1c";
    let docs = vec![
        // Unknown field: the API server's strict field validation refuses it.
        json!({"apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
               "kind": "LocalGenericRepository",
               "metadata": {"name": "bad-field", "namespace": "default"},
               "spec": {"forProvider": {"colour": "blue"}}}),
        // Two MRs of one singleton: the second is blocked, naming the first.
        json!({"apiVersion": "security.artifactory.m.crossplane.io/v1alpha1",
               "kind": "UserLockPolicy",
               "metadata": {"name": "first", "namespace": "default"},
               "spec": {"forProvider": {"name": "user-lock", "enabled": true, "loginAttempts": 5}}}),
        json!({"apiVersion": "security.artifactory.m.crossplane.io/v1alpha1",
               "kind": "UserLockPolicy",
               "metadata": {"name": "second", "namespace": "default"},
               "spec": {"forProvider": {"name": "user-lock", "enabled": true, "loginAttempts": 3}}}),
        // Another provider's object.
        json!({"apiVersion": "policy.xray.m.crossplane.io/v1alpha1", "kind": "SecurityPolicy",
               "metadata": {"name": "p", "namespace": "default"}, "spec": {"forProvider": {}}}),
        // A remote repository with a password from a Secret (and the Secret itself).
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "creds", "namespace": "default"},
               "stringData": {"password": secret}}),
        json!({"apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
               "kind": "RemoteNPMRepository",
               "metadata": {"name": "npm-remote", "namespace": "default"},
               "spec": {"forProvider": {"url": "https://registry.npmjs.org", "username": "u",
                        "passwordSecretRef": {"name": "creds", "key": "password"}}}}),
    ];
    let file = dir.path().join("mixed.yaml");
    write_stream(&file, &docs);
    sim.reset_counts();
    let report = preview::run(
        &crate::PROVIDER,
        &crate::family_kinds(),
        &args(&sim.url(), &token, &[&file], Format::Text),
    )
    .await
    .expect("preview");
    assert!(writes(&sim).is_empty(), "{:?}", writes(&sim));
    let item = |name: &str| {
        report
            .items
            .iter()
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("{name}: {:#?}", report.items))
    };
    let bad = item("bad-field");
    assert_eq!(bad.action, "refused");
    assert!(
        bad.message
            .contains("unknown field \"spec.forProvider.colour\""),
        "{}",
        bad.message
    );
    // The platform always has its user lock policy: the first MR updates it.
    let first = item("first");
    assert_eq!(first.action, "update", "{first:?}");
    let second = item("second");
    assert_eq!(second.action, "blocked", "{second:?}");
    assert!(
        second.message.contains("already managed by default/first"),
        "{}",
        second.message
    );
    assert_eq!(item("p").action, "skipped");
    assert!(item("p").message.contains("provider-xray"));
    let npm = item("npm-remote");
    assert_eq!(npm.action, "create", "{npm:?}");
    assert_eq!(
        report.items.len(),
        5,
        "the Secret is not a managed resource"
    );
    for f in [Format::Text, Format::Markdown, Format::Json] {
        let out = preview::render(&report, f);
        assert!(!out.contains(secret), "{f:?}: {out}");
    }
    println!("{}", preview::render(&report, Format::Text));
}

/// A hook that writes (a bug a preview must catch): its check sends a `PUT` and ignores
/// the answer.
#[derive(Debug)]
struct Writing;

#[async_trait]
impl Hooks for Writing {
    async fn check_against_platform(
        &self,
        ctx: HookCtx<'_>,
        _params: &Value,
    ) -> Result<(), String> {
        let _ = ctx
            .client
            .request(
                Service::Artifactory,
                Method::PUT,
                "/api/repositories/{key}",
                Idempotency::Idempotent,
            )
            .param(ctx.key())
            .json(&json!({"rclass": "local", "packageType": "generic"}))
            .send()
            .await;
        Ok(())
    }
}

static WRITING: Writing = Writing;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_attempted_during_a_preview_fails_it_and_never_reaches_jfrog() {
    let (sim, dir, token) = sim().await;
    let mut decl = crate::repository::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "LocalGenericRepository")
        .expect("the Kind")
        .resolved()
        .declared();
    decl.hooks = &WRITING;
    let kinds: Vec<Arc<provider_family::FamilyKind>> = provider_family::compose(&[decl]);
    let file = dir.path().join("one.yaml");
    write_stream(
        &file,
        &[manifest("LocalGenericRepository", "new-repo", "x")],
    );
    sim.reset_counts();
    let e = preview::run(
        &crate::PROVIDER,
        &kinds,
        &args(&sim.url(), &token, &[&file], Format::Json),
    )
    .await
    .expect_err("a write was attempted");
    assert!(matches!(e, PreviewError::WriteAttempted(1)), "{e}");
    assert!(writes(&sim).is_empty(), "{:?}", writes(&sim));
    assert!(sim.repository("new-repo").is_none());
}
