//! The repositories observed by list against the JFrog simulator: what a snapshot of every
//! repository costs (requests per MR, memory; measurements run on demand) and the virtual
//! repositories' package-type rule checked against it. Observation by list itself (one list
//! per poll, TTL, fallback to `GET`, invalidation by writes, never a duplicate, secrets) is
//! tested in `provider-family-suite` (`tests/family_layer/snapshot.rs`).

use std::sync::Arc;
use std::time::Duration;

use jfrog_sim::Simulator;
use provider_runtime::managed::external::ExternalClient;
use serde_json::json;

use super::adapter_tests::{config, kind, mr, sim};
use provider_family::adapter::{
    ClientCache, FamilyClient as RepositoryClient, FamilyKind as RepositoryKind,
};

const BY_KEY: &str = "/artifactory/api/repositories/{key}";
/// Long enough that nothing in a test outlives it: the tests shorten it when they want the
/// snapshot stale.
const LONG: Duration = Duration::from_secs(3600);

fn cache(ttl: Duration) -> ClientCache {
    let cache = ClientCache::new(crate::PROVIDER);
    cache.set_snapshot_ttl(Some(ttl));
    cache
}

fn client(sim: &Simulator, cache: &ClientCache, kind: &RepositoryKind) -> RepositoryClient {
    let (client, snapshot) = cache
        .client_and_snapshot(&config(sim), kind.resolved())
        .expect("client builds");
    RepositoryClient::new(client, kind.resolved().clone())
        .with_snapshot(snapshot.expect("repositories have a list call"))
}

/// Make every snapshot of `cache` stale: a TTL this short has passed after the sleep.
async fn expire(cache: &ClientCache) {
    cache.set_snapshot_ttl(Some(Duration::from_millis(1)));
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// Requests per MR per poll for 1,000 MRs through the adapter alone (measured, printed, not
/// asserted): `cargo test -p provider-artifactory --release snapshot_requests_per_mr --
/// --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement (printed, not asserted); run on demand with --ignored --nocapture"]
async fn snapshot_requests_per_mr() {
    let sim = sim().await;
    let n = 1000;
    let cache = Arc::new(cache(LONG));
    let kinds = [
        kind("LocalGenericRepository"),
        kind("LocalMavenRepository"),
        kind("RemoteMavenRepository"),
        kind("LocalDockerV2Repository"),
    ];
    let mut mrs = Vec::new();
    let t = std::time::Instant::now();
    for i in 0..n {
        let k = &kinds[i % kinds.len()];
        let params = if k.resolved().decl.kind == "RemoteMavenRepository" {
            json!({"url": "https://repo1.maven.org/maven2", "description": format!("m{i}")})
        } else {
            json!({"description": format!("m{i}")})
        };
        let c = client(&sim, &cache, k);
        let mut m = mr(&format!("bench-{i}"), params);
        c.create(&mut m).await.expect("create");
        mrs.push((c, m));
    }
    let created = t.elapsed();
    let counts = |sim: &Simulator| sim.request_counts().values().sum::<u64>();
    for round in 0..3 {
        if round > 0 {
            // One poll interval passes (a round takes far less than this TTL).
            cache.set_snapshot_ttl(Some(Duration::from_secs(5)));
            tokio::time::sleep(Duration::from_millis(5100)).await;
        }
        sim.reset_counts();
        let t = std::time::Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for (c, mut m) in std::mem::take(&mut mrs) {
            tasks.spawn(async move {
                let o = c.observe(&mut m).await.expect("observe");
                assert!(o.resource_up_to_date, "{}", o.diff);
                (c, m)
            });
        }
        while let Some(r) = tasks.join_next().await {
            mrs.push(r.expect("task"));
        }
        let (_, snapshot) = cache
            .client_and_snapshot(&config(&sim), kind("LocalGenericRepository").resolved())
            .expect("client");
        let snapshot = snapshot.expect("repositories have a list call");
        println!(
            "snapshot: {} repositories, {} bytes of configuration text",
            snapshot.len(),
            snapshot.stored_bytes()
        );
        println!(
            "poll {round}: {n} MRs, {} requests ({:?}), {:.4} requests per MR, {:?}",
            counts(&sim),
            sim.request_counts(),
            counts(&sim) as f64 / n as f64,
            t.elapsed()
        );
    }
    // The same poll without the snapshot.
    let direct_cache = ClientCache::new(crate::PROVIDER);
    sim.reset_counts();
    let t = std::time::Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (_, mut m) in mrs {
        // The JoinSet reordered them: the Kind follows from the name.
        let i: usize = m.name["bench-".len()..].parse().expect("index");
        let c = RepositoryClient::new(
            direct_cache.client(&config(&sim)).expect("client"),
            kinds[i % kinds.len()].resolved().clone(),
        );
        tasks.spawn(async move {
            c.observe(&mut m)
                .await
                .expect("observe")
                .resource_up_to_date
        });
    }
    while let Some(r) = tasks.join_next().await {
        assert!(r.expect("task"));
    }
    println!(
        "without snapshot: {} requests per MR, {:?} (creation of {n}: {created:?})",
        counts(&sim) as f64 / n as f64,
        t.elapsed()
    );
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Memory of a snapshot of 10,000 repositories (measured, printed, not asserted; the
/// process RSS includes the simulator's own copy): `cargo test -p provider-artifactory
/// snapshot_memory_at_10000 -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement of 10,000 repositories (printed, not asserted); run on demand with --ignored --nocapture"]
async fn snapshot_memory_at_10000() {
    let sim = sim().await;
    let cache = cache(LONG);
    let kinds = [
        kind("LocalMavenRepository"),
        kind("RemoteMavenRepository"),
        kind("LocalDockerV2Repository"),
    ];
    // One created through the API per Kind (server defaults filled in), copied in JFrog.
    let mut templates = Vec::new();
    for (i, k) in kinds.iter().enumerate() {
        let params = if k.resolved().decl.kind == "RemoteMavenRepository" {
            json!({"url": "https://repo1.maven.org/maven2"})
        } else {
            json!({})
        };
        let mut m = mr(&format!("tmpl-{i}"), params);
        client(&sim, &cache, k)
            .create(&mut m)
            .await
            .expect("create");
        templates.push(sim.repository_raw(&m.name).expect("stored"));
    }
    for i in 0..10_000 {
        let mut c = templates[i % templates.len()].clone();
        let key = format!("mem-{i}");
        c["key"] = json!(key);
        c["description"] = json!(format!("repository number {i}"));
        assert!(sim.put_repository_raw(&key, c));
    }
    let before = rss_kib();
    let c = client(&sim, &cache, &kinds[0]);
    let mut m = mr("mem-0", json!({}));
    let t = std::time::Instant::now();
    assert!(c.observe(&mut m).await.expect("observe").resource_exists);
    let took = t.elapsed();
    let (_, snapshot) = cache
        .client_and_snapshot(&config(&sim), kind("LocalGenericRepository").resolved())
        .expect("client");
    let snapshot = snapshot.expect("repositories have a list call");
    println!(
        "10,000 repositories: refresh {took:?}, {} entries, {} bytes of text, RSS {} KiB -> {} KiB (+{} KiB, includes the simulator's answer)",
        snapshot.len(),
        snapshot.stored_bytes(),
        before,
        rss_kib(),
        rss_kib().saturating_sub(before)
    );
}

/// A virtual repository over a member of another package type is refused before any write,
/// from the repositories list observation already holds (source: JFrog's virtual
/// repositories aggregate repositories of their own package type; Maven, Gradle, Ivy and SBT
/// mix; a generic virtual takes any), and accepted once the member fits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_virtual_repository_over_another_package_type_is_refused_before_any_write() {
    let sim = sim().await;
    let cache = cache(LONG);
    let npm = kind("LocalNPMRepository");
    let gradle = kind("LocalGradleRepository");
    for (k, key) in [(&npm, "pkgs-npm"), (&gradle, "libs-gradle")] {
        let c = client(&sim, &cache, k);
        let mut m = mr(key, json!({}));
        c.observe(&mut m).await.expect("observe");
        c.create(&mut m).await.expect("create");
    }
    let virt = kind("VirtualMavenRepository");
    let c = client(&sim, &cache, &virt);
    expire(&cache).await;
    cache.set_snapshot_ttl(Some(LONG));
    let mut m = mr(
        "all-maven",
        json!({"repositories": ["libs-gradle", "pkgs-npm"]}),
    );
    c.observe(&mut m).await.expect("observe");
    let puts = sim.request_count("PUT", BY_KEY);
    let err = c.create(&mut m).await.expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("repositories: 'pkgs-npm' is a npm repository")
            && text.contains("virtual maven"),
        "{text}"
    );
    assert_eq!(sim.request_count("PUT", BY_KEY), puts, "no write was sent");
    // Gradle members are fine for a Maven virtual, and a generic virtual takes anything.
    let mut m = mr("all-maven", json!({"repositories": ["libs-gradle"]}));
    c.create(&mut m)
        .await
        .expect("a Maven virtual aggregates Gradle");
    let generic = kind("VirtualGenericRepository");
    let c = client(&sim, &cache, &generic);
    let mut m = mr(
        "everything",
        json!({"repositories": ["libs-gradle", "pkgs-npm"]}),
    );
    c.observe(&mut m).await.expect("observe");
    c.create(&mut m)
        .await
        .expect("a generic virtual aggregates anything");
}
