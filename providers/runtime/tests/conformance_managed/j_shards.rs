//! Active-active replicas (`--shards`, docs/managed-reconciler.md §15.8), against the
//! Kubernetes API test server with the RBAC Crossplane grants a provider: three replicas of a
//! fake provider, each with its own controllers and shard manager, split the MRs between them;
//! each MR is reconciled by exactly one replica; a joining replica is handed its shards; a
//! killed replica's shards are taken over within the lease time; a replica that stops hands its
//! shards over at once; no object is ever created twice.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::process_support::*;
use async_trait::async_trait;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use provider_runtime::managed::shards::{ShardBy, Shards};
use provider_runtime::managed::*;
use provider_runtime::process::{
    MetricsRegistry, ProviderProcess, SafeStartGate, ShardConfig, ShardManager,
};
use provider_runtime::providerconfig::ConfigKind;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const SHARDS: u32 = 6;
const LEASE: Duration = Duration::from_secs(3);

/// What each replica did to which external object: (replica, external name, operation).
type Log = Arc<Mutex<Vec<(String, String, &'static str)>>>;

fn entries(l: &Log) -> std::sync::MutexGuard<'_, Vec<(String, String, &'static str)>> {
    l.lock().unwrap_or_else(|p| p.into_inner())
}

/// The fake external system, with every call recorded under the replica that made it.
struct Recording {
    inner: FakeConnector,
    replica: String,
    log: Log,
}

#[async_trait]
impl Connector<Thing> for Recording {
    async fn connect(
        &self,
        config: &ResolvedConfig,
        mr: &Managed<Thing>,
    ) -> Result<Box<dyn ExternalClient<Thing>>, ExternalError> {
        Ok(Box::new(RecordingClient {
            inner: self.inner.connect(config, mr).await?,
            replica: self.replica.clone(),
            log: self.log.clone(),
        }))
    }
}

struct RecordingClient {
    inner: Box<dyn ExternalClient<Thing>>,
    replica: String,
    log: Log,
}

impl RecordingClient {
    fn note(&self, mr: &Managed<Thing>, op: &'static str) {
        entries(&self.log).push((self.replica.clone(), mr.external_name.clone(), op));
    }
}

#[async_trait]
impl ExternalClient<Thing> for RecordingClient {
    async fn observe(&self, mr: &mut Managed<Thing>) -> Result<ExternalObservation, ExternalError> {
        self.note(mr, "observe");
        self.inner.observe(mr).await
    }
    async fn create(&self, mr: &mut Managed<Thing>) -> Result<ExternalCreation, ExternalError> {
        self.note(mr, "create");
        self.inner.create(mr).await
    }
    async fn update(&self, mr: &mut Managed<Thing>) -> Result<ExternalUpdate, ExternalError> {
        self.note(mr, "update");
        self.inner.update(mr).await
    }
    async fn delete(&self, mr: &mut Managed<Thing>) -> Result<ExternalDelete, ExternalError> {
        self.note(mr, "delete");
        self.inner.delete(mr).await
    }
}

/// One replica: its controllers, its shard manager and the shards it owns.
struct Replica {
    name: String,
    shards: Arc<Shards>,
    controllers: CancellationToken,
    stop: CancellationToken,
    manager: tokio::task::JoinHandle<()>,
}

fn start_replica(env: &Env, name: &str, log: &Log) -> Replica {
    start_replica_by(env, name, log, ShardBy::Uid)
}

fn start_replica_by(env: &Env, name: &str, log: &Log, by: ShardBy) -> Replica {
    let process = ProviderProcess::new("provider-fake", PROVIDER).with_kinds(vec![register(
        thing(),
        Recording {
            inner: FakeConnector { s: env.s.clone() },
            replica: name.to_string(),
            log: log.clone(),
        },
    )]);
    let gate = SafeStartGate::new(process.controllers());
    let shards = Shards::new(SHARDS, by);
    let controllers = CancellationToken::new();
    let mut ctx = env.ctx().with_poll(Duration::from_secs(1));
    ctx.poll_jitter = Duration::ZERO;
    ctx.shards = Some(shards.clone());
    ctx.shutdown = controllers.clone();
    tokio::spawn(gate.run(ctx));
    let cfg = ShardConfig {
        provider: "provider-fake".into(),
        namespace: "crossplane-system".into(),
        identity: format!("host-{name}_{}", uuid::Uuid::new_v4()),
        lease_duration: LEASE,
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(200),
    };
    let stop = CancellationToken::new();
    let manager = ShardManager::new(
        env.provider.clone(),
        cfg,
        shards.clone(),
        MetricsRegistry::default(),
    );
    let manager = tokio::spawn(manager.run(stop.clone(), Duration::from_secs(5)));
    Replica {
        name: name.to_string(),
        shards,
        controllers,
        stop,
        manager,
    }
}

/// Owned shards per replica; panics if two replicas own one shard at once.
fn owners(replicas: &[&Replica]) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for r in replicas {
        for s in r.shards.owned() {
            if let Some(other) = out.insert(s, r.name.clone()) {
                panic!("shard {s} owned by {other} and {} at once", r.name);
            }
        }
    }
    out
}

async fn all_owned_by(replicas: &[&Replica], what: &str) -> BTreeMap<u32, String> {
    wait_for(what, || async {
        let o = owners(replicas);
        (o.len() == SHARDS as usize).then_some(o)
    })
    .await
}

async fn all_ready(env: &Env, n: usize) {
    wait_for(&format!("{n} Things Ready"), || async {
        let list = env
            .thing_api(Some("ns"))
            .list(&Default::default())
            .await
            .ok()?;
        let ready = list
            .items
            .iter()
            .filter(|o| condition(o, "Ready").is_some_and(|c| c.0 == "True"))
            .count();
        (ready == n).then_some(())
    })
    .await;
}

/// After `mark` in the log: each external object observed at least twice, and by exactly one
/// replica, the owner of its shard.
async fn each_reconciled_by_its_owner(
    env: &Env,
    log: &Log,
    mark: usize,
    replicas: &[&Replica],
    names: &[String],
) {
    let owner = owners(replicas);
    let shard_of: BTreeMap<String, u32> = {
        let list = env
            .thing_api(Some("ns"))
            .list(&Default::default())
            .await
            .expect("list");
        let s = Shards::new(SHARDS, ShardBy::Uid);
        list.items
            .iter()
            .map(|o| (o.metadata.name.clone().unwrap_or_default(), s.shard_of(o)))
            .collect()
    };
    let seen = wait_for("every MR reconciled twice more", || async {
        let l = entries(log);
        let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (r, ext, op) in &l[mark..] {
            if *op == "observe" {
                by.entry(ext.clone()).or_default().push(r.clone());
            }
        }
        names
            .iter()
            .all(|n| by.get(n).is_some_and(|v| v.len() >= 2))
            .then_some(by)
    })
    .await;
    for n in names {
        let who: BTreeSet<&String> = seen[n].iter().collect();
        assert_eq!(
            who,
            BTreeSet::from([&owner[&shard_of[n]]]),
            "{n} (shard {}) is reconciled by its shard's owner alone",
            shard_of[n]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_109_replicas_split_the_mrs_by_shard_and_take_over_a_dead_ones() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let env = Env::new(&[]).await;
    env.secret("crossplane-system", "creds", &[("token", "tok")])
        .await;
    env.cluster_config_on_creds("default").await;
    let _configs = env.start_config_controllers();
    let log: Log = Arc::default();
    let mut names: Vec<String> = (0..60).map(|i| format!("t{i:02}")).collect();
    for n in &names {
        env.thing(Some("ns"), n, json!({"forProvider": {"x": n}}))
            .await
            .expect("create");
    }

    // One replica takes every shard; two more join and are handed theirs.
    let a = start_replica(&env, "a", &log);
    all_owned_by(&[&a], "a owns every shard").await;
    let b = start_replica(&env, "b", &log);
    let c = start_replica(&env, "c", &log);
    let split = wait_for("two shards each for a, b and c", || async {
        let o = owners(&[&a, &b, &c]);
        let per = |r: &str| o.values().filter(|h| *h == r).count();
        (o.len() == SHARDS as usize && ["a", "b", "c"].iter().all(|r| per(r) == 2)).then_some(o)
    })
    .await;
    all_ready(&env, 60).await;
    let mark = entries(&log).len();
    each_reconciled_by_its_owner(&env, &log, mark, &[&a, &b, &c], &names).await;
    // The Leases say the same.
    let leases: Api<Lease> = Api::namespaced(env.admin.clone(), "crossplane-system");
    for (s, r) in &split {
        let l = leases
            .get(&format!("crossplane-shard-provider-fake-{s}"))
            .await
            .expect("shard lease");
        let holder = l.spec.and_then(|s| s.holder_identity).unwrap_or_default();
        assert!(holder.starts_with(&format!("host-{r}_")), "{s}: {holder}");
    }

    // b dies: it stops without giving anything up. a and c take its shards within the lease
    // time (plus a round of the retry period), and new MRs are created once each.
    let b_shards = b.shards.owned();
    assert!(!b_shards.is_empty());
    b.manager.abort();
    b.controllers.cancel();
    let killed = Instant::now();
    let after = all_owned_by(&[&a, &c], "a and c own every shard").await;
    let took = killed.elapsed();
    assert!(
        took >= LEASE - Duration::from_millis(500) && took < LEASE * 3,
        "b's shards {b_shards:?} taken over after {took:?}"
    );
    for s in &b_shards {
        assert_ne!(after[s], "b");
    }
    for i in 60..90 {
        let n = format!("t{i:02}");
        env.thing(Some("ns"), &n, json!({"forProvider": {"x": n}}))
            .await
            .expect("create");
        names.push(n);
    }
    all_ready(&env, 90).await;
    let mark = entries(&log).len();
    each_reconciled_by_its_owner(&env, &log, mark, &[&a, &c], &names).await;

    // a stops gracefully: it gives its shards up, and c takes them at once.
    a.stop.cancel();
    a.controllers.cancel();
    let stopped = Instant::now();
    let _ = a.manager.await;
    all_owned_by(&[&c], "c owns every shard").await;
    assert!(
        stopped.elapsed() < LEASE,
        "a graceful hand-over waits for no lease to expire: {:?}",
        stopped.elapsed()
    );

    // Never a duplicate: every object created exactly once, by one replica.
    let l = entries(&log);
    let mut creates: BTreeMap<&String, Vec<&String>> = BTreeMap::new();
    for (r, ext, op) in l.iter() {
        if *op == "create" {
            creates.entry(ext).or_default().push(r);
        }
    }
    assert_eq!(creates.len(), 90, "{creates:?}");
    assert!(
        creates.values().all(|v| v.len() == 1),
        "created twice: {:?}",
        creates
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .collect::<Vec<_>>()
    );
    assert_eq!(lock(&env.s).objects.len(), 90);
    c.stop.cancel();
    c.controllers.cancel();
}

/// `--shard-by providerconfig`: every MR of one ClusterProviderConfig is reconciled by one
/// replica, the owner of that configuration's shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_109b_sharding_by_provider_config_keeps_a_config_in_one_replica() {
    let env = Env::new(&[]).await;
    env.secret("crossplane-system", "creds", &[("token", "tok")])
        .await;
    let configs = ["alpha", "beta", "gamma", "delta"];
    for c in configs {
        env.cluster_config_on_creds(c).await;
    }
    let _configs = env.start_config_controllers();
    let log: Log = Arc::default();
    let mut config_of = BTreeMap::new();
    for i in 0..40 {
        let n = format!("p{i:02}");
        let c = configs[i % configs.len()];
        env.thing(
            Some("ns"),
            &n,
            json!({"forProvider": {"x": n},
                   "providerConfigRef": {"kind": "ClusterProviderConfig", "name": c}}),
        )
        .await
        .expect("create");
        config_of.insert(n, c);
    }
    let a = start_replica_by(&env, "a", &log, ShardBy::ProviderConfig);
    let b = start_replica_by(&env, "b", &log, ShardBy::ProviderConfig);
    let c = start_replica_by(&env, "c", &log, ShardBy::ProviderConfig);
    all_owned_by(&[&a, &b, &c], "the shards owned").await;
    all_ready(&env, 40).await;
    let mark = entries(&log).len();
    wait_for("every MR reconciled twice more", || async {
        let l = entries(&log);
        let mut seen: BTreeMap<&String, usize> = BTreeMap::new();
        for (_, ext, op) in &l[mark..] {
            if *op == "observe" {
                *seen.entry(ext).or_default() += 1;
            }
        }
        (seen.len() == 40 && seen.values().all(|n| *n >= 2)).then_some(())
    })
    .await;
    let l = entries(&log);
    let mut replicas_of: BTreeMap<&str, BTreeSet<&String>> = BTreeMap::new();
    for (r, ext, op) in &l[mark..] {
        if *op == "observe" {
            replicas_of.entry(config_of[ext]).or_default().insert(r);
        }
    }
    assert_eq!(replicas_of.len(), configs.len());
    for (config, replicas) in &replicas_of {
        assert_eq!(
            replicas.len(),
            1,
            "the MRs of {config} are reconciled by one replica: {replicas:?}"
        );
    }
    drop(l);
    for r in [a, b, c] {
        r.stop.cancel();
        r.controllers.cancel();
    }
}

/// With `--shards`, a ProviderConfig's users are counted (its `status.users` and finalizer
/// written) by the replica owning the config's shard alone: a replica without it leaves the
/// config alone however many usage events it sees, and counts it once granted the shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_109c_a_config_is_counted_by_the_owner_of_its_shard_alone() {
    let env = Env::new(&[]).await;
    env.secret("crossplane-system", "creds", &[("token", "tok")])
        .await;
    // Two configs in different shards; this replica owns the second's shard only.
    let counting = Shards::new(SHARDS, ShardBy::Uid);
    let shard = |name: &str| counting.shard_of_config("ClusterProviderConfig", "", name);
    let alpha = "alpha";
    let beta = (0..)
        .map(|i| format!("beta-{i}"))
        .find(|b| shard(b) != shard(alpha))
        .expect("a name in another shard");
    counting.grant(shard(&beta));
    for c in [alpha, beta.as_str()] {
        env.cluster_config_on_creds(c).await;
    }
    let _configs = env.start_config_controllers_of(None, Some(counting.clone()));
    // Usage records, the ones of alpha first (one reconcile each tracks its MR's usage).
    for (config, name) in [(alpha, "a0"), (alpha, "a1"), (alpha, "a2"), (&beta, "b0")] {
        env.thing(
            Some("ns"),
            name,
            json!({"forProvider": {"x": name},
                   "providerConfigRef": {"kind": "ClusterProviderConfig", "name": config}}),
        )
        .await
        .expect("create");
        env.reconcile(Some("ns"), name).await;
    }
    let config = |name: String| {
        let api = env.config_api(ConfigKind::ClusterProviderConfig, None);
        async move { api.get(&name).await.expect("config") }
    };
    let in_use = |c: &kube::api::DynamicObject| {
        c.metadata.finalizers.as_ref().is_some_and(|f| {
            f.iter()
                .any(|f| f == provider_runtime::providerconfig::FINALIZER_IN_USE)
        })
    };
    // Its own config counted (after the events of alpha's records, which came first) ...
    wait_for("beta counted by its shard's owner", || async {
        let c = config(beta.clone()).await;
        (users(&c) == 1 && in_use(&c)).then_some(())
    })
    .await;
    // ... the other left alone ...
    let before = config(alpha.to_string()).await;
    assert_eq!(
        users(&before),
        0,
        "not counted by a replica without its shard"
    );
    assert!(
        !in_use(&before),
        "no finalizer from a replica without its shard"
    );
    // ... until its shard is granted.
    counting.grant(shard(alpha));
    wait_for("alpha counted once its shard is owned", || async {
        let c = config(alpha.to_string()).await;
        (users(&c) == 3 && in_use(&c)).then_some(())
    })
    .await;
}
