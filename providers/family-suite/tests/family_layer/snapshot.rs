//! Observation by list against the JFrog simulator, on the small repository family of
//! `family.rs`: one list call serves a poll's observes, changes made in JFrog are seen
//! once the TTL has passed, the snapshot falls back to `GET` when it fails or is missing,
//! our own writes invalidate it (for every client of the cache), a stale snapshot never
//! reports an existing object missing and a fresh one never leads to a duplicate, secrets
//! compare the same on both paths, and the registrations take the TTL from the controller.

use std::sync::Arc;
use std::time::Duration;

use jfrog_sim::{Fault, Simulator};
use provider_family::adapter::{
    ClientCache, FamilyClient as RepositoryClient, FamilyKind as RepositoryKind,
};
use provider_runtime::managed::external::{ExternalClient, Managed};
use provider_runtime::managed::meta::EXTERNAL_CREATE_SUCCEEDED;
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::family::{BY_KEY, PROVIDER, config, kind, mr, sim};

/// The list route, as the simulator counts it.
const CONFIGURATIONS: &str = "/artifactory/api/repositories/configurations";

/// Long enough that nothing in a test outlives it: the tests shorten it when they want the
/// snapshot stale.
const LONG: Duration = Duration::from_secs(3600);

fn cache(ttl: Duration) -> ClientCache {
    let cache = ClientCache::new(PROVIDER);
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

fn gets(sim: &Simulator) -> u64 {
    sim.request_count("GET", BY_KEY)
}

fn lists(sim: &Simulator) -> u64 {
    sim.request_count("GET", CONFIGURATIONS)
}

/// Make every snapshot of `cache` stale: a TTL this short has passed after the sleep.
async fn expire(cache: &ClientCache) {
    cache.set_snapshot_ttl(Some(Duration::from_millis(1)));
    tokio::time::sleep(Duration::from_millis(20)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_call_serves_every_observe_of_a_poll() {
    let sim = sim().await;
    let cache = cache(LONG);
    let kinds = [
        kind("LocalGenericRepository"),
        kind("LocalMavenRepository"),
        kind("RemoteNPMRepository"),
    ];
    let mut mrs: Vec<(RepositoryClient, Managed<RepositoryKind>)> = Vec::new();
    for i in 0..30 {
        let k = &kinds[i % kinds.len()];
        let params = if k.resolved().decl.kind == "RemoteNPMRepository" {
            json!({"url": "https://registry.npmjs.org", "description": format!("n{i}")})
        } else {
            json!({"description": format!("n{i}")})
        };
        let c = client(&sim, &cache, k);
        let mut m = mr(&format!("poll-{i}"), params);
        c.create(&mut m).await.expect("create");
        mrs.push((c, m));
    }
    sim.reset_counts();
    // One poll: every MR observed at once; they wait for one fetch.
    let mut tasks = tokio::task::JoinSet::new();
    for (c, mut m) in mrs {
        tasks.spawn(async move {
            let o = c.observe(&mut m).await.expect("observe");
            (m.name.clone(), o, c, m)
        });
    }
    let mut again = Vec::new();
    while let Some(r) = tasks.join_next().await {
        let (name, o, c, m) = r.expect("task");
        assert!(
            o.resource_exists && o.resource_up_to_date,
            "{name}: {}",
            o.diff
        );
        assert_eq!(m.at_provider["description"], m.for_provider["description"]);
        again.push((c, m));
    }
    assert_eq!(lists(&sim), 1, "{:?}", sim.request_counts());
    assert_eq!(gets(&sim), 0, "{:?}", sim.request_counts());
    // The next round within the TTL costs nothing at all.
    for (c, m) in &mut again {
        assert!(c.observe(m).await.expect("observe").resource_up_to_date);
    }
    assert_eq!(sim.request_counts().values().sum::<u64>(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_made_in_jfrog_is_seen_once_the_ttl_has_passed() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("oob-change", json!({"description": "managed"}));
    c.create(&mut m).await.expect("create");
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    let mut raw = sim.repository_raw("oob-change").expect("stored");
    raw["description"] = json!("edited in the UI");
    assert!(sim.put_repository_raw("oob-change", raw));
    // Within the TTL the snapshot answers (no request at all).
    sim.reset_counts();
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    assert_eq!(sim.request_counts().values().sum::<u64>(), 0);
    // Once it has passed, the next observe reads JFrog again and sees the change.
    expire(&cache).await;
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    assert!(o.diff.contains("description"), "{}", o.diff);
    assert_eq!(m.at_provider["description"], "edited in the UI");
    assert_eq!(lists(&sim), 1, "{:?}", sim.request_counts());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_mr_poll_interval_shorter_than_the_ttl_reads_by_key() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("short-poll", json!({"description": "managed"}));
    c.create(&mut m).await.expect("create");
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    let mut raw = sim.repository_raw("short-poll").expect("stored");
    raw["description"] = json!("edited in the UI");
    assert!(sim.put_repository_raw("short-poll", raw));
    // This MR polls every second: a snapshot older than that is not used for it.
    m.annotations
        .insert("crossplane.io/poll-interval".into(), "1s".into());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    sim.reset_counts();
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date, "{}", o.diff);
    assert_eq!((lists(&sim), gets(&sim)), (0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_failure_falls_back_to_get() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("fallback", json!({"description": "managed"}));
    c.create(&mut m).await.expect("create");
    sim.add_fault(Fault::error(CONFIGURATIONS, 500, 1.0).method("GET"));
    sim.reset_counts();
    let o = c
        .observe(&mut m)
        .await
        .expect("observe despite the failed list");
    assert!(o.resource_exists && o.resource_up_to_date, "{}", o.diff);
    assert!(lists(&sim) >= 1);
    assert_eq!(gets(&sim), 1);
    // A missing repository is still reported missing (by GET).
    let mut gone = mr("fallback-missing", json!({}));
    assert!(!c.observe(&mut gone).await.expect("observe").resource_exists);
    assert_eq!(gets(&sim), 2);
    // The failed list is not retried by every observe (the GET's answer serves meanwhile).
    let failed = lists(&sim);
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
    assert_eq!((lists(&sim), gets(&sim)), (failed, 2));
    // The endpoint recovers; once the retry delay (capped by the TTL) has passed, the
    // snapshot is read again and shows a change made in JFrog.
    sim.clear_faults();
    let mut raw = sim.repository_raw("fallback").expect("stored");
    raw["description"] = json!("edited in the UI");
    assert!(sim.put_repository_raw("fallback", raw));
    expire(&cache).await;
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date, "{}", o.diff);
    assert_eq!(lists(&sim), failed + 1, "{:?}", sim.request_counts());
    // And serves the next observes.
    cache.set_snapshot_ttl(Some(LONG));
    let before = sim.request_counts().values().sum::<u64>();
    assert!(
        !c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    assert_eq!(sim.request_counts().values().sum::<u64>(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn platform_without_the_endpoint_is_observed_by_key() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("old-platform", json!({"description": "managed"}));
    c.create(&mut m).await.expect("create");
    sim.add_fault(Fault::error(CONFIGURATIONS, 404, 1.0).method("GET"));
    sim.reset_counts();
    for _ in 0..3 {
        expire(&cache).await;
        let o = c.observe(&mut m).await.expect("observe");
        assert!(o.resource_up_to_date, "{}", o.diff);
    }
    // One probe, then one GET per observe; never the per-repository fallback's list.
    assert_eq!(lists(&sim), 1, "{:?}", sim.request_counts());
    assert_eq!(gets(&sim), 3);
    assert_eq!(sim.request_count("GET", "/artifactory/api/repositories"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_write_invalidates_the_key() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("own-write", json!({"description": "first"}));
    c.create(&mut m).await.expect("create");
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    m.for_provider["description"] = json!("second");
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    c.update(&mut m).await.expect("update");
    sim.reset_counts();
    // The snapshot predates the update: the key is read by GET...
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
    assert_eq!(m.at_provider["description"], "second");
    assert_eq!((lists(&sim), gets(&sim)), (0, 1));
    // ...which replaces the snapshot's entry.
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    assert_eq!((lists(&sim), gets(&sim)), (0, 1));
    // Our delete invalidates too: the repository is reported gone at once.
    c.delete(&mut m).await.expect("delete");
    assert!(!c.observe(&mut m).await.expect("observe").resource_exists);
    assert_eq!(gets(&sim), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_never_reports_an_existing_repository_missing() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    // The snapshot is fetched before either repository exists.
    let mut first = mr("late-own", json!({"description": "x"}));
    assert!(
        !c.observe(&mut first)
            .await
            .expect("observe")
            .resource_exists
    );
    assert_eq!(lists(&sim), 1);
    // Created by us after the snapshot.
    c.create(&mut first).await.expect("create");
    let o = c.observe(&mut first).await.expect("observe");
    assert!(o.resource_exists && o.resource_up_to_date, "{}", o.diff);
    // Created in JFrog after the snapshot (an MR adopting it), snapshot within its TTL: the
    // fresh snapshot reports it missing, the create is refused by Artifactory (no
    // duplicate), and the refused write sends the next observe to GET, which adopts it.
    let raw = sim.repository_raw("late-own").expect("stored");
    let mut other = raw.clone();
    other["key"] = json!("late-adopted");
    other["description"] = json!("made elsewhere");
    assert!(sim.put_repository_raw("late-adopted", other));
    let mut adopted = mr("late-adopted", json!({"description": "x"}));
    assert!(
        !c.observe(&mut adopted)
            .await
            .expect("observe")
            .resource_exists
    );
    let refused = c.create(&mut adopted).await.expect_err("exists");
    assert!(refused.to_string().contains("already exists"), "{refused}");
    assert!(
        c.observe(&mut adopted)
            .await
            .expect("observe")
            .resource_exists
    );
    assert_eq!(
        sim.repository_raw("late-adopted").expect("kept")["description"],
        "made elsewhere"
    );
    // The same when the snapshot is stale and cannot be refreshed.
    sim.add_fault(Fault::error(CONFIGURATIONS, 503, 1.0).method("GET"));
    expire(&cache).await;
    let mut third = raw;
    third["key"] = json!("late-stale");
    assert!(sim.put_repository_raw("late-stale", third));
    let mut stale = mr("late-stale", json!({"description": "x"}));
    assert!(
        c.observe(&mut stale)
            .await
            .expect("observe")
            .resource_exists
    );
    // Nothing was created twice: one create of ours, one refused.
    assert_eq!(sim.request_count("PUT", BY_KEY), 2);
    // Differently cased keys are the same repository.
    cache.set_snapshot_ttl(Some(LONG));
    let mut upper = mr("LATE-OWN", json!({"description": "x"}));
    assert!(
        c.observe(&mut upper)
            .await
            .expect("observe")
            .resource_exists
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_another_replica_created_after_the_snapshot_is_read_by_key() {
    let sim = sim().await;
    let k = kind("LocalGenericRepository");
    // This replica's snapshot is fetched before the repository exists.
    let ours = cache(LONG);
    let c = client(&sim, &ours, &k);
    let mut first = mr("shard-moved", json!({"description": "x"}));
    assert!(
        !c.observe(&mut first)
            .await
            .expect("observe")
            .resource_exists
    );
    // Another replica (its own cache: its write marks are not ours) creates it, and the MR
    // records that its create succeeded; then its shard comes to this replica.
    let theirs = cache(LONG);
    let other = client(&sim, &theirs, &k);
    other.create(&mut first).await.expect("create");
    first.annotations.insert(
        EXTERNAL_CREATE_SUCCEEDED.to_string(),
        provider_runtime::managed::meta::now_stamp(),
    );
    sim.reset_counts();
    // The fresh snapshot lacks it, but the MR says it was created: read by key, found, no
    // second create.
    let o = c.observe(&mut first).await.expect("observe");
    assert!(o.resource_exists && o.resource_up_to_date, "{}", o.diff);
    assert_eq!((lists(&sim), gets(&sim)), (0, 1));
    // The read replaces the snapshot's entry: the next observe needs no request.
    assert!(
        c.observe(&mut first)
            .await
            .expect("observe")
            .resource_exists
    );
    assert_eq!((lists(&sim), gets(&sim)), (0, 1));
    // Deleted in JFrog since: the read by key finds it gone (one more GET), so the MR's
    // object is created again rather than taken to exist.
    let mut gone = mr("shard-moved-gone", json!({"description": "x"}));
    gone.annotations.insert(
        EXTERNAL_CREATE_SUCCEEDED.to_string(),
        provider_runtime::managed::meta::now_stamp(),
    );
    assert!(!c.observe(&mut gone).await.expect("observe").resource_exists);
    assert_eq!((lists(&sim), gets(&sim)), (0, 2));
    // An MR never created is still reported missing from the fresh snapshot alone.
    let mut new = mr("shard-new", json!({"description": "x"}));
    assert!(!c.observe(&mut new).await.expect("observe").resource_exists);
    assert_eq!((lists(&sim), gets(&sim)), (0, 2));
    assert_eq!(sim.request_count("PUT", BY_KEY), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_compare_the_same_from_the_snapshot_and_by_key() {
    let sim = sim().await;
    let k = kind("RemoteMavenRepository");
    let direct_cache = ClientCache::new(PROVIDER);
    let direct = RepositoryClient::new(
        direct_cache.client(&config(&sim)).expect("client"),
        k.resolved().clone(),
    );
    let cache = cache(LONG);
    let listed = client(&sim, &cache, &k);
    let params = json!({
        "url": "https://repo1.maven.org/maven2",
        "username": "bot",
        "passwordSecretRef": {"name": "upstream", "key": "password"},
    });
    let make = || {
        let mut m = mr("secret-listed", params.clone());
        m.secrets
            .insert("passwordSecretRef".into(), SecretString::from("s3cr3t-one"));
        m
    };
    let mut m = make();
    direct.create(&mut m).await.expect("create");
    // The snapshot is fetched after the create (a different client, no write mark here).
    let mut by_key = make();
    let mut by_list = make();
    by_key.annotations = m.annotations.clone();
    by_list.annotations = m.annotations.clone();
    sim.reset_counts();
    let o1 = direct.observe(&mut by_key).await.expect("observe");
    let o2 = listed.observe(&mut by_list).await.expect("observe");
    assert_eq!(
        (lists(&sim), gets(&sim)),
        (1, 1),
        "{:?}",
        sim.request_counts()
    );
    assert!(o1.resource_up_to_date, "{}", o1.diff);
    assert!(o2.resource_up_to_date, "{}", o2.diff);
    assert_eq!(by_key.at_provider, by_list.at_provider);
    assert_eq!(by_key.for_provider, by_list.for_provider);
    assert!(!by_list.at_provider.to_string().contains("s3cr3t"));
    // A rotated Secret is a diff on both paths, and the same diff.
    for mm in [&mut by_key, &mut by_list] {
        mm.secrets
            .insert("passwordSecretRef".into(), SecretString::from("s3cr3t-two"));
    }
    let o1 = direct.observe(&mut by_key).await.expect("observe");
    let o2 = listed.observe(&mut by_list).await.expect("observe");
    assert!(!o1.resource_up_to_date && !o2.resource_up_to_date);
    assert_eq!(o1.diff, o2.diff);
    assert!(o2.diff.contains("password (write-only)"), "{}", o2.diff);
    // The encrypted form is the same in both answers.
    let body: Value = sim.repository("secret-listed").expect("stored");
    assert!(
        body["password"]
            .as_str()
            .is_some_and(|p| p.starts_with("JE2"))
    );
    assert_eq!(lists(&sim), 1);
}

/// The registrations hand the controllers' `--poll` to the cache: observation by list is off
/// until a controller starts, then uses `--poll` as TTL, capped per MR by its poll-interval
/// annotation (raised to `--min-poll-interval`).
#[tokio::test]
async fn registrations_take_the_ttl_from_the_controller_context() {
    use provider_runtime::managed::registration::ControllerContext;
    use provider_runtime::managed::{ConfigError, ManagedRef, ProviderConfigResolver, Scope};

    struct NoConfig;
    #[async_trait::async_trait]
    impl ProviderConfigResolver for NoConfig {
        async fn track_usage(&self, _mr: &ManagedRef) -> Result<(), ConfigError> {
            Ok(())
        }
        async fn resolve(
            &self,
            _mr: &ManagedRef,
        ) -> Result<provider_runtime::managed::ResolvedConfig, ConfigError> {
            Err(ConfigError::new("none"))
        }
    }

    let cache = Arc::new(ClientCache::new(PROVIDER));
    let settings = cache.snapshot_settings().clone();
    assert_eq!(settings.ttl(), None);
    let kinds = provider_family::compose(crate::family::KINDS);
    let regs = provider_family::registrations(&kinds, cache.clone());
    let kube = kube::Client::try_from(kube::Config::new(
        "http://127.0.0.1:9".parse().expect("url"),
    ))
    .expect("client");
    let mut ctx = ControllerContext::new(kube, Arc::new(NoConfig), PROVIDER.name)
        .with_poll(Duration::from_secs(90));
    ctx.min_poll_interval = Duration::from_secs(5);
    // Starting builds the controller's future; it is not run here.
    drop(regs[0].start(ctx, Scope::Namespaced));
    assert_eq!(settings.ttl(), Some(Duration::from_secs(90)));
    let ann = |v: &str| {
        [("crossplane.io/poll-interval".to_string(), v.to_string())]
            .into_iter()
            .collect()
    };
    assert_eq!(
        settings.max_age(&Default::default()),
        Some(Duration::from_secs(90))
    );
    assert_eq!(settings.max_age(&ann("30s")), Some(Duration::from_secs(30)));
    assert_eq!(settings.max_age(&ann("1s")), Some(Duration::from_secs(5)));
    assert_eq!(settings.max_age(&ann("1h")), Some(Duration::from_secs(90)));
    cache.set_snapshot_ttl(None);
    assert_eq!(settings.max_age(&Default::default()), None);
}

/// A write through one client invalidates the key in the snapshots of the cache's other
/// clients (another ProviderConfig for the platform, or a rotated credential's new client).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_invalidate_the_key_for_every_client_of_the_cache() {
    let sim = sim().await;
    let cache = cache(LONG);
    let k = kind("LocalGenericRepository");
    let a = client(&sim, &cache, &k);
    let mut other = config(&sim);
    other.config_name = "rotated".into();
    let (bc, bs) = cache
        .client_and_snapshot(&other, k.resolved())
        .expect("client");
    let b = RepositoryClient::new(bc, k.resolved().clone())
        .with_snapshot(bs.expect("repositories have a list call"));
    let mut m = mr("shared-marks", json!({"description": "first"}));
    a.create(&mut m).await.expect("create");
    let mut mb = mr("shared-marks", json!({"description": "first"}));
    assert!(
        b.observe(&mut mb)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    m.for_provider["description"] = json!("second");
    a.observe(&mut m).await.expect("observe");
    a.update(&mut m).await.expect("update");
    sim.reset_counts();
    let o = b.observe(&mut mb).await.expect("observe");
    assert_eq!(mb.at_provider["description"], "second");
    assert!(!o.resource_up_to_date);
    assert_eq!(gets(&sim), 1);
}
