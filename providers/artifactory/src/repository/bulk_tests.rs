//! Bulk repository writes through the real reconciler, the Kubernetes API test server and
//! the simulator: the same repositories as the REST path, one offender alone Synced=False,
//! a platform that does not take them gets REST, a batch whose answer was lost is adopted.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use jfrog_sim::Fault;
use provider_family::FamilyKind;
use serde_json::{Value, json};

use super::bulk::BulkMode;
use super::examples::{example, example_key};
use super::tables::KINDS;
use crate::family_suite::{Env, Mr, start};

const PATCH: &str = "/artifactory/api/system/configuration";
const PUT: &str = "/artifactory/api/repositories/{key}";

/// Members before the virtual repositories that aggregate them.
const MIX: &[&str] = &[
    "LocalMavenRepository",
    "LocalDockerV2Repository",
    "LocalPypiRepository",
    "LocalGenericRepository",
    "RemoteMavenRepository",
    "RemoteDockerRepository",
    "RemotePypiRepository",
    "FederatedGenericRepository",
    "FederatedMavenRepository",
    "VirtualMavenRepository",
];

fn kind(name: &str) -> Arc<FamilyKind> {
    super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == name)
        .cloned()
        .expect("declared")
}

/// An environment with the examples of `names` (plus `extra` manifests), its provider's
/// bulk writes in `mode` (each environment's own: several run in one process).
async fn env_with(mode: BulkMode, names: &[&str], extra: Vec<(&str, Value)>) -> Env {
    let cache = Arc::new(crate::client_cache(
        &provider_common::Connections::default(),
        mode,
    ));
    let mut kind_names: Vec<&str> = names.to_vec();
    for (k, _) in &extra {
        if !kind_names.contains(k) {
            kind_names.push(k);
        }
    }
    let kinds: Vec<Arc<FamilyKind>> = kind_names.iter().map(|n| kind(n)).collect();
    let mut env = start(&kinds, cache).await;
    env.sim.set_descriptor_merge_emulation(true);
    env.sim.set_write_latency(Duration::from_millis(20));
    for n in names {
        let d = KINDS.iter().find(|d| d.kind == *n).expect("declared");
        env.add(&kind(n), example(d, false)).await;
    }
    for (n, m) in extra {
        env.add(&kind(n), m).await;
    }
    env
}

/// Reconcile at once until every MR of `mrs` is Ready and Synced.
async fn converge_together(mrs: &[&Mr]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let states = join_all(mrs.iter().map(|m| m.ready_and_synced())).await;
        let pending: Vec<&&Mr> = mrs
            .iter()
            .zip(states)
            .filter(|(_, ok)| !ok)
            .map(|(m, _)| m)
            .collect();
        if pending.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not converged: {:?}",
            pending.iter().map(|m| &m.name).collect::<Vec<_>>()
        );
        join_all(pending.iter().map(|m| m.reconcile())).await;
    }
}

/// The members together, then the virtual repository that aggregates them (last in
/// [`MIX`]), so that no write is refused for a member that does not exist yet.
async fn converge_in_order(mrs: &[&Mr]) {
    converge_together(&mrs[..mrs.len() - 1]).await;
    converge_together(mrs).await;
}

/// What differs between two simulators for the same repository: the instance URL in the
/// federated members.
fn comparable(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("members");
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_writes_store_what_rest_stores() {
    let rest = env_with(BulkMode::Off, MIX, Vec::new()).await;
    let bulk = env_with(BulkMode::On, MIX, Vec::new()).await;
    rest.sim.reset_counts();
    bulk.sim.reset_counts();
    let (r, b): (Vec<&Mr>, Vec<&Mr>) = (rest.mrs.iter().collect(), bulk.mrs.iter().collect());
    // The members first, then the virtual repository that aggregates them.
    let members = MIX.len() - 1;
    converge_together(&r[..members]).await;
    converge_together(&b[..members]).await;
    converge_together(&r).await;
    converge_together(&b).await;
    assert_eq!(rest.sim.request_count("PATCH", PATCH), 0);
    assert_eq!(rest.sim.request_count("PUT", PUT), MIX.len() as u64);
    let patches = bulk.sim.request_count("PATCH", PATCH);
    let puts = bulk.sim.request_count("PUT", PUT);
    println!(
        "{} repositories: REST {} PUT; bulk {patches} PATCH + {puts} PUT",
        MIX.len(),
        MIX.len()
    );
    assert!(patches >= 1, "the first wave went as one patch");
    assert!(
        patches + puts < MIX.len() as u64,
        "{patches} PATCH + {puts} PUT for {} repositories",
        MIX.len()
    );
    for n in MIX {
        let key = example_key(n, false);
        let a = rest.sim.repository_raw(&key).expect("created by REST");
        let b = bulk.sim.repository_raw(&key).expect("created in bulk");
        assert_eq!(comparable(a), comparable(b), "{n}");
    }
    // Updates go the same way: drift of several is reverted, to the same result.
    for env in [&rest, &bulk] {
        for n in &MIX[..4] {
            let key = example_key(n, false);
            let mut raw = env.sim.repository_raw(&key).expect("exists");
            raw["description"] = json!("changed in JFrog");
            assert!(env.sim.put_repository_raw(&key, raw));
        }
    }
    let (r, b): (Vec<&Mr>, Vec<&Mr>) = (rest.mrs.iter().collect(), bulk.mrs.iter().collect());
    bulk.sim.reset_counts();
    join_all(r.iter().chain(b.iter()).map(|m| m.reconcile())).await;
    println!(
        "4 drifted: bulk {} PATCH + {} POST",
        bulk.sim.request_count("PATCH", PATCH),
        bulk.sim.request_count("POST", PUT)
    );
    for n in MIX {
        let key = example_key(n, false);
        let a = rest.sim.repository_raw(&key).expect("kept");
        let b = bulk.sim.repository_raw(&key).expect("kept");
        assert_ne!(a["description"], "changed in JFrog", "{n}");
        assert_eq!(comparable(a), comparable(b), "{n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_invalid_repository_in_a_batch_fails_alone() {
    let d = KINDS
        .iter()
        .find(|d| d.kind == "LocalGenericRepository")
        .expect("declared");
    // A layout the platform does not have: only the platform can tell.
    let bad = provider_family::examples::manifest(
        d,
        "bad-layout-local",
        json!({"repoLayoutRef": "no-such-layout"}),
        false,
    );
    let env = env_with(BulkMode::On, MIX, vec![("LocalGenericRepository", bad)]).await;
    env.sim.reset_counts();
    let everyone: Vec<&Mr> = env.mrs.iter().collect();
    join_all(everyone.iter().map(|m| m.reconcile())).await;
    let (valid, bad): (Vec<&Mr>, Vec<&Mr>) =
        env.mrs.iter().partition(|m| m.name != "bad-layout-local");
    converge_together(&valid).await;
    let o = bad[0].get().await;
    let (status, _, message) = testkit::condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False", "{message}");
    assert!(
        message.contains("Repository 'bad-layout-local'") && message.contains("no-such-layout"),
        "{message}"
    );
    assert!(env.sim.repository_raw("bad-layout-local").is_none());
    for m in &valid {
        let c = format!("{:?}", testkit::conditions(&m.get().await));
        assert!(!c.contains("bad-layout-local"), "{}: {c}", m.name);
    }
    let patches = env.sim.request_count("PATCH", PATCH);
    println!("10 valid + 1 invalid: {patches} PATCH (split batches included)");
    assert!(patches > 1, "the batch was split");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_uses_rest_where_the_platform_does_not_take_repositories() {
    let env = env_with(BulkMode::Auto, MIX, Vec::new()).await;
    env.sim.set_yaml_repositories(false);
    env.sim.reset_counts();
    let all: Vec<&Mr> = env.mrs.iter().collect();
    converge_in_order(&all).await;
    assert_eq!(
        env.sim.request_count("PATCH", PATCH),
        1,
        "one refused probe, then REST"
    );
    assert_eq!(env.sim.request_count("PUT", PUT), MIX.len() as u64);

    // The same platform taking them: the probe passes and batches are used.
    let env = env_with(BulkMode::Auto, MIX, Vec::new()).await;
    env.sim.reset_counts();
    let all: Vec<&Mr> = env.mrs.iter().collect();
    converge_in_order(&all).await;
    let patches = env.sim.request_count("PATCH", PATCH);
    let puts = env.sim.request_count("PUT", PUT);
    assert!(patches >= 2, "probe and a batch: {patches}");
    assert!(puts < MIX.len() as u64, "{puts} PUT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_answer_was_lost_is_adopted_not_duplicated() {
    let env = env_with(BulkMode::On, MIX, Vec::new()).await;
    // Every descriptor patch is saved but its answer lost (the client retries the
    // idempotent patch, whose answers are lost too, then gives up).
    let fault = env.sim.add_fault(Fault {
        method: Some("PATCH".into()),
        path_prefix: PATCH.into(),
        error_rate: 1.0,
        drop_after_commit: true,
        ..Fault::default()
    });
    let all: Vec<&Mr> = env.mrs.iter().collect();
    join_all(all.iter().map(|m| m.reconcile())).await;
    let patched = env.sim.request_count("PATCH", PATCH);
    assert!(patched >= 1, "a batch was sent");
    let keys: Vec<String> = MIX.iter().map(|n| example_key(n, false)).collect();
    let stored = keys
        .iter()
        .filter(|k| env.sim.repository_raw(k).is_some())
        .count();
    assert!(stored >= 2, "the lost batch was saved: {stored}");
    for m in &all {
        let (status, _, message) = testkit::condition(&m.get().await, "Synced").expect("Synced");
        if env.sim.repository_raw(&m.name).is_some() && status == "False" {
            assert!(!message.is_empty());
        }
    }
    env.sim.remove_fault(fault);
    env.sim.reset_counts();
    converge_together(&all).await;
    // The saved repositories were found under their keys and adopted: only the others
    // were written.
    let writes = env.sim.request_count("PATCH", PATCH) + env.sim.request_count("PUT", PUT);
    println!("{stored} saved under lost answers; {writes} writes to converge");
    assert!(
        writes <= (MIX.len() - stored) as u64,
        "{writes} writes for {} unsaved",
        MIX.len() - stored
    );
    assert!(keys.iter().all(|k| env.sim.repository_raw(k).is_some()));
    assert_eq!(env.sim.repository_count(), MIX.len());
}
