//! ReleaseBundleV2Promotion observed through the list of its environment (issue 30):
//! `GET /lifecycle/api/v2/promotion/release-bundles-by-environment/{environment}` answers
//! every bundle version whose current location is that environment, so N promotion MRs into
//! E environments cost E list requests per poll and no per-version read
//! (`GET /lifecycle/api/v2/promotion/records/{name}/{version}`). A promotion the list lacks
//! is read by key before it is taken as absent (a version promoted on since is listed in its
//! new environment only, and must not be promoted again); a platform without the list (404)
//! is observed by per-version reads. Counted in the simulator's request log.

use std::sync::Arc;
use std::time::Duration;

use jfrog_sim::Fault;
use provider_family::ClientCache;
use provider_family_suite::{self as suite, Env, converge};
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use super::{examples, kinds, tables::KINDS};

/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);
const LIST: &str = "GET /lifecycle/api/v2/promotion/release-bundles-by-environment/{environment}";
const RECORDS: &str = "GET /lifecycle/api/v2/promotion/records/{name}/{version}";
const PROMOTE: &str = "POST /lifecycle/api/v2/promotion/records/{name}/{version}";

fn kind() -> Arc<provider_family::FamilyKind> {
    kinds()
        .iter()
        .find(|f| f.info().kind == "ReleaseBundleV2Promotion")
        .expect("declared")
        .clone()
}

/// The bundle versions, made directly in JFrog (the simulator).
fn seed_bundles(env: &Env, versions: &[(&str, &str)]) {
    for (name, version) in versions {
        assert!(env.sim.put_object(
            "release_bundles",
            &format!("{name}/{version}"),
            json!({"release_bundle_name": name, "release_bundle_version": version,
                   "status": "COMPLETED", "repository_key": "release-bundles-v2",
                   "created_by": "admin",
                   "created": "2025-01-23T11:39:04.815Z"}),
        ));
    }
}

/// The promotion of `name:version` to `environment`, as MR `mr`.
fn promotion(mr: &str, name: &str, version: &str, environment: &str) -> Value {
    let d = KINDS
        .iter()
        .find(|d| d.kind == "ReleaseBundleV2Promotion")
        .expect("declared");
    let mut m = examples::example(d);
    m["metadata"]["name"] = json!(mr);
    let p = &mut m["spec"]["forProvider"];
    p["name"] = json!(name);
    p["version"] = json!(version);
    p["environment"] = json!(environment);
    m
}

/// One poll of every MR after the TTL has passed: the requests, printed with their cost per
/// MR.
async fn poll(env: &Env, label: &str) -> std::collections::BTreeMap<String, u64> {
    suite::poll(env, POLL, label).await
}

fn count(counts: &std::collections::BTreeMap<String, u64>, route: &str) -> u64 {
    counts.get(route).copied().unwrap_or(0)
}

/// The promotions of `name/version` JFrog holds (its records).
fn records(env: &Env, name: &str, version: &str) -> Vec<Value> {
    let prefix = format!("{name}/{version}/");
    env.sim
        .objects("promotions")
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p["__key"].as_str().is_some_and(|k| k.starts_with(&prefix)))
        .collect()
}

async fn start() -> Env {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    // A promotion removed a moment after its create is gone, not JFrog's read-after-write lag.
    env.ctx.creation_grace_period = Duration::ZERO;
    env
}

/// Five promotions of five bundle versions into two environments converge (one declaring
/// the repositories it promotes into, which no answer carries); then each poll costs one
/// list per environment, no per-version read and no write; the status shows the
/// promotion's times as JFrog recorded them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_environment_per_poll_and_no_per_version_read() {
    let mut env = start().await;
    let versions = [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2"), ("c", "1")];
    seed_bundles(&env, &versions);
    let k = kind();
    for (i, (name, version)) in versions.iter().enumerate() {
        let environment = if i < 3 { "DEV" } else { "PROD" };
        let mut m = promotion(&format!("promo-{i}"), name, version, environment);
        if i == 1 {
            m["spec"]["forProvider"]["includedRepositoryKeys"] = json!(["generic-local"]);
        }
        env.add(&k, m).await;
    }
    converge(&env.mrs).await;
    for (name, version) in versions {
        assert_eq!(records(&env, name, version).len(), 1, "{name}:{version}");
    }
    for round in 0..2 {
        let counts = poll(&env, &format!("by environment, poll {round}")).await;
        assert_eq!(
            count(&counts, LIST),
            2,
            "one list per environment: {counts:?}"
        );
        assert_eq!(
            count(&counts, RECORDS),
            0,
            "no per-version read: {counts:?}"
        );
        assert_eq!(counts.values().sum::<u64>(), 2, "nothing else: {counts:?}");
    }
    // The status as the per-version read gives it: JFrog's times of the promotion.
    let record = &records(&env, "b", "2")[0];
    let mr = env.mrs[3].get().await;
    let at = &mr.data["status"]["atProvider"];
    assert_eq!(at["createdMillis"], record["created_millis"], "{at}");
    assert_eq!(at["created"], record["created"], "{at}");
    assert_eq!(at["environment"], "PROD", "{at}");
    assert!(at.get("projectKey").is_none_or(Value::is_null), "{at}");
    for m in &env.mrs {
        assert!(m.ready_and_synced().await, "{}", m.name);
    }
}

/// A version promoted on to another environment is listed there only: its earlier
/// promotion, made in JFrog and adopted by an MR, is read by key (found, not promoted
/// again). A promotion deleted in JFrog is missing from the list and from the read, so it
/// is made again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promotion_the_list_lacks_is_read_before_it_is_made_again() {
    let mut env = start().await;
    seed_bundles(&env, &[("a", "1"), ("b", "1")]);
    // a:1 promoted to DEV, then on to PROD, in JFrog.
    for (millis, environment) in [(1_737_632_334_499_i64, "DEV"), (1_737_632_344_815, "PROD")] {
        assert!(env.sim.put_object(
            "promotions",
            &format!("a/1/{millis}"),
            json!({"release_bundle_name": "a", "release_bundle_version": "1",
                   "environment": environment, "status": "COMPLETED",
                   "included_repository_keys": [], "excluded_repository_keys": [],
                   "created": "2025-01-23T11:38:54.499Z", "created_millis": millis}),
        ));
    }
    let k = kind();
    env.add(&k, promotion("a-dev", "a", "1", "DEV")).await;
    env.add(&k, promotion("a-prod", "a", "1", "PROD")).await;
    env.add(&k, promotion("b-dev", "b", "1", "DEV")).await;
    converge(&env.mrs).await;
    assert_eq!(
        records(&env, "a", "1").len(),
        2,
        "adopted, not promoted again"
    );
    assert_eq!(records(&env, "b", "1").len(), 1);

    // The DEV list lacks a:1 (now in PROD): a-dev is read by key, and kept.
    let counts = poll(&env, "a version promoted on").await;
    assert_eq!(count(&counts, LIST), 2, "{counts:?}");
    assert_eq!(count(&counts, RECORDS), 1, "{counts:?}");
    assert_eq!(suite::writes(&env.sim, &[]), 0, "{counts:?}");
    assert_eq!(records(&env, "a", "1").len(), 2, "not promoted again");

    // b:1's promotion deleted in JFrog: absent, and promoted again.
    let gone = records(&env, "b", "1");
    let key = gone[0]["__key"].as_str().expect("key").to_string();
    assert!(env.sim.delete_object("promotions", &key));
    let counts = poll(&env, "a promotion deleted in JFrog").await;
    assert_eq!(count(&counts, LIST), 2, "{counts:?}");
    assert_eq!(count(&counts, PROMOTE), 1, "{counts:?}");
    let again = records(&env, "b", "1");
    assert_eq!(again.len(), 1, "promoted again");
    assert_eq!(again[0]["environment"], "DEV");
    assert_ne!(again[0]["created_millis"], gone[0]["created_millis"]);
    converge(&env.mrs).await;
}

/// An Artifactory older than 7.107.1 answers 404 to the list: the promotions converge by
/// per-version reads, one per MR and poll, and the list is not asked again in those polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_list_promotions_are_read_per_version() {
    let mut env = start().await;
    env.sim.add_fault(Fault {
        method: Some("GET".into()),
        path_prefix: "/lifecycle/api/v2/promotion/release-bundles-by-environment".into(),
        error_rate: 1.0,
        status: 404,
        ..Fault::default()
    });
    let versions = [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")];
    seed_bundles(&env, &versions);
    let k = kind();
    for (i, (name, version)) in versions.iter().enumerate() {
        let environment = if i % 2 == 0 { "DEV" } else { "PROD" };
        env.add(
            &k,
            promotion(&format!("promo-{i}"), name, version, environment),
        )
        .await;
    }
    converge(&env.mrs).await;
    for (name, version) in versions {
        assert_eq!(records(&env, name, version).len(), 1, "{name}:{version}");
    }
    for round in 0..2 {
        let counts = poll(&env, &format!("per version (no list), poll {round}")).await;
        assert_eq!(count(&counts, RECORDS), versions.len() as u64, "{counts:?}");
        assert_eq!(suite::writes(&env.sim, &[]), 0, "{counts:?}");
        assert_eq!(
            counts.values().sum::<u64>(),
            versions.len() as u64,
            "{counts:?}"
        );
    }
}

/// A promotion of a project's bundle is made, observed and deleted with the project
/// (`?project=`), since JFrog looks for the bundle in the project's Release Bundles
/// repository: it is promoted once, then observed through its environment's list asked with
/// the project (one list per poll beside the platform's, no per-version read) with no second
/// promotion, and its delete removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_bundles_promotion_is_listed_and_deleted_with_its_project() {
    let mut env = start().await;
    seed_bundles(&env, &[("p", "1")]);
    for version in ["1", "2"] {
        assert!(env.sim.put_object(
            "release_bundles",
            &format!("t/{version}"),
            json!({"release_bundle_name": "t", "release_bundle_version": version,
                   "status": "COMPLETED", "repository_key": "team-release-bundles-v2",
                   "created_by": "admin", "created": "2025-01-23T11:39:04.815Z"}),
        ));
    }
    for version in ["1", "2"] {
        let mut m = promotion(&format!("t-{version}-dev"), "t", version, "DEV");
        m["spec"]["forProvider"]["projectKey"] = json!("team");
        env.add(&kind(), m).await;
    }
    env.add(&kind(), promotion("p-1-dev", "p", "1", "DEV"))
        .await;
    converge(&env.mrs).await;
    assert_eq!(records(&env, "t", "1").len(), 1);
    assert_eq!(records(&env, "t", "2").len(), 1);
    for round in 0..2 {
        let counts = poll(&env, &format!("a project's promotions, poll {round}")).await;
        assert_eq!(
            count(&counts, LIST),
            2,
            "the platform's and the project's: {counts:?}"
        );
        assert_eq!(count(&counts, RECORDS), 0, "{counts:?}");
        assert_eq!(count(&counts, PROMOTE), 0, "{counts:?}");
        assert_eq!(counts.values().sum::<u64>(), 2, "nothing else: {counts:?}");
    }
    for m in &env.mrs {
        assert!(m.ready_and_synced().await, "{}", m.name);
    }
    let mr = &env.mrs[0];
    mr.api
        .delete(&mr.name, &kube::api::DeleteParams::default())
        .await
        .expect("delete MR");
    let deadline = tokio::time::Instant::now() + suite::WAIT;
    while mr.api.get_opt(&mr.name).await.expect("get").is_some() {
        assert!(tokio::time::Instant::now() < deadline, "not released");
        mr.reconcile().await;
    }
    assert!(records(&env, "t", "1").is_empty(), "promotion deleted");
}
