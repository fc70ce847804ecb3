//! The coalescing descriptor writer through the real reconciler, the Kubernetes API test
//! server and the simulator (merge-failure emulation on, with a descriptor save time so that
//! unserialised writes would overlap).

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use provider_family::{ClientCache, FamilyKind};
use serde_json::{Value, json};

use crate::family_suite::{Env, Mr, start};
use crate::repository::bulk::BulkMode;

const PATCH: &str = "/artifactory/api/system/configuration";

fn kind(name: &str) -> Arc<FamilyKind> {
    super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == name)
        .cloned()
        .expect("declared")
}

/// A manifest of `kind` named `name` with `params`.
fn mr(kind_name: &str, name: &str, params: Value) -> Value {
    let d = super::tables::KINDS
        .iter()
        .find(|d| d.kind == kind_name)
        .expect("declared");
    provider_family::examples::manifest(d, name, params, false)
}

/// `n` descriptor MRs of mixed Kinds (backups, proxies, property sets, layouts).
fn mixed(n: usize) -> Vec<(Arc<FamilyKind>, Value)> {
    let layout = super::examples::example_params(
        super::tables::KINDS
            .iter()
            .find(|d| d.kind == "RepositoryLayout")
            .expect("declared"),
    );
    (0..n)
        .map(|i| match i % 4 {
            0 => (
                kind("Backup"),
                mr("Backup", &format!("backup-{i}"), json!({"cronExp": "0 0 12 * * ? *"})),
            ),
            1 => (
                kind("Proxy"),
                mr(
                    "Proxy",
                    &format!("proxy-{i}"),
                    json!({"host": format!("proxy-{i}.example.com"), "port": 8080 + i}),
                ),
            ),
            2 => (
                kind("PropertySet"),
                mr(
                    "PropertySet",
                    &format!("props-{i}"),
                    json!({"property": [{"name": "stage", "predefinedValue": [{"name": "dev", "defaultValue": true}]}]}),
                ),
            ),
            _ => (
                kind("RepositoryLayout"),
                mr("RepositoryLayout", &format!("layout-{i}"), layout.clone()),
            ),
        })
        .collect()
}

/// The provider's client cache (its own descriptors: several environments run in one
/// process), with the provider's --poll: the shared descriptor read is used for a minute.
fn provider_cache() -> Arc<ClientCache> {
    let cache = Arc::new(crate::client_cache(
        &provider_common::Connections::default(),
        BulkMode::Off,
    ));
    cache.set_snapshot_ttl(Some(Duration::from_secs(60)));
    cache
}

async fn env_with(mrs: Vec<(Arc<FamilyKind>, Value)>) -> Env {
    let cache = provider_cache();
    let mut env = start(super::kinds(), cache).await;
    env.sim.set_descriptor_merge_emulation(true);
    env.sim.set_write_latency(Duration::from_millis(20));
    for (k, m) in mrs {
        env.add(&k, m).await;
    }
    env
}

/// Reconcile every MR of `mrs` at once, `rounds` times (as the controllers' workers do).
async fn rounds(mrs: &[&Mr], rounds: usize) {
    for _ in 0..rounds {
        join_all(mrs.iter().map(|m| m.reconcile())).await;
    }
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

async fn conditions_text(m: &Mr) -> String {
    format!("{:?}", testkit::conditions(&m.get().await))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_mixed_descriptor_objects_share_one_writer_and_one_read() {
    let env = env_with(mixed(50)).await;
    env.sim.reset_counts();
    let all: Vec<&Mr> = env.mrs.iter().collect();
    converge_together(&all).await;
    let patches = env.sim.request_count("PATCH", PATCH);
    println!(
        "50 mixed descriptor MRs: {patches} descriptor PATCH, {} descriptor GET to converge",
        env.sim.request_count("GET", PATCH)
    );
    assert!(
        (1..=10).contains(&patches),
        "{patches} descriptor patches for 50 MRs"
    );
    for m in &all {
        let c = conditions_text(m).await;
        assert!(!c.contains("Could not merge"), "{}: {c}", m.name);
    }
    // Every object is in the descriptor.
    let xml = {
        let client = jfrog_client::JfrogClient::builder(env.sim.url())
            .credentials(jfrog_client::Credentials::access_token(
                env.sim.admin_token(),
            ))
            .build()
            .expect("client");
        // A platform of its own (not the provider's: its cached read).
        super::descriptor::platform(&Default::default(), &client)
            .tree()
            .await
            .expect("read")
    };
    for m in &all {
        let section = ["backups", "proxies", "propertySets", "repoLayouts"]
            .iter()
            .filter_map(|s| xml.at(s))
            .flat_map(|s| s.children.iter())
            .any(|e| e.children.iter().any(|c| c.text == m.name));
        assert!(section, "{} not in the descriptor", m.name);
    }

    // Steady state: a poll of all 50 (each poll after the shared read expired) costs one
    // descriptor read and no write.
    let poll = Duration::from_millis(300);
    env.cache.set_snapshot_ttl(Some(poll));
    for _ in 0..2 {
        tokio::time::sleep(poll + Duration::from_millis(50)).await;
        env.sim.reset_counts();
        rounds(&all, 1).await;
        let gets = env.sim.request_count("GET", PATCH);
        println!("steady poll of 50 MRs: {gets} descriptor GET");
        assert_eq!(gets, 1, "descriptor reads for one poll of 50 MRs");
        assert_eq!(crate::family_suite::writes(&env.sim), 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_invalid_object_among_twenty_fails_alone() {
    let mut mrs = mixed(20);
    mrs.push((
        kind("Proxy"),
        mr(
            "Proxy",
            "bad-proxy",
            json!({"host": "bad.example.com", "port": 0}),
        ),
    ));
    let env = env_with(mrs).await;
    env.sim.reset_counts();
    let (valid, bad): (Vec<&Mr>, Vec<&Mr>) = env.mrs.iter().partition(|m| m.name != "bad-proxy");
    // The first wave goes together, so the invalid patch is in a batch with valid ones.
    let everyone: Vec<&Mr> = env.mrs.iter().collect();
    rounds(&everyone, 1).await;
    converge_together(&valid).await;
    let bad = bad[0];
    let o = bad.get().await;
    let (status, _, message) = testkit::condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False", "{message}");
    assert!(
        message.contains("Proxy 'bad-proxy': port must be between 1 and 65535"),
        "{message}"
    );
    for m in &valid {
        let c = conditions_text(m).await;
        assert!(!c.contains("bad-proxy"), "{}: {c}", m.name);
    }
    let patches = env.sim.request_count("PATCH", PATCH);
    println!("20 valid + 1 invalid: {patches} descriptor PATCH (split batches included)");
    assert!(patches > 1, "the batch was split");
}

/// JFrog Cloud refuses the system configuration descriptor (400 "Artifactory Online does not
/// support accessing this API endpoint, ...": jfrog/terraform-provider-artifactory issues #452
/// and #550; the simulator's SaaS mode answers so): every descriptor MR is Synced=False with
/// one message naming its Kind and that it needs a self-hosted platform, and all of them share
/// one descriptor `GET` per poll however often they are retried (no retry storm against JFrog).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_jfrog_cloud_descriptor_kinds_say_they_need_a_self_hosted_platform() {
    let cache = provider_cache();
    let sim = jfrog_sim::SimConfig {
        saas: true,
        ..jfrog_sim::SimConfig::default()
    };
    let mut env = crate::family_suite::start_with(super::kinds(), cache, sim).await;
    for (k, m) in mixed(4) {
        env.add(&k, m).await;
    }
    env.sim.reset_counts();
    let all: Vec<&Mr> = env.mrs.iter().collect();
    rounds(&all, 3).await;
    for m in &all {
        let o = m.get().await;
        let (status, _reason, message) =
            testkit::condition(&o, "Synced").expect("a Synced condition");
        assert_eq!(status, "False", "{}", m.name);
        let kind = m.kind.resolved().decl.kind;
        assert!(
            message.contains(&format!("{kind} needs a self-hosted JFrog platform")),
            "{}: {message}",
            m.name
        );
        assert!(message.contains("Artifactory Online"), "{message}");
        println!("{}: {message}", m.name);
    }
    assert_eq!(
        env.sim.request_count("GET", PATCH),
        1,
        "one descriptor read for 4 MRs x 3 rounds"
    );
    assert_eq!(env.sim.request_count("PATCH", PATCH), 0);
}
