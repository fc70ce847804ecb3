//! The controller wiring of one Kind in one scope: watch, event filter, work queue, workers
//! (docs/managed-reconciler.md §1).
//!
//! Built on our own list-and-watch ([`super::watch`], kube-runtime's `watcher` semantics with
//! less memory per idle watch) and our own work queue rather than on
//! `kube::runtime::Controller`, because the Crossplane rules need things `Controller` does not
//! express:
//! - the event filter compares the *old and new* object (generation, labels, annotations minus
//!   two keys), which needs the previous state per object;
//! - BACKOFF goes through a per-object exponential limiter that AFTER and DONE reset but watch
//!   events do not; `Controller`'s error policy has no per-object failure memory;
//! - the global token bucket must answer "requeue after the wait" *without* holding a worker
//!   and let the same request pass on its return;
//! - a request that arrives while the object is being reconciled is held and run once after
//!   (client-go's dirty/processing sets), and of several pending requeues the earliest wins.
//!
//! The queue below is client-go's rate-limited delaying work queue, in the few lines these
//! rules take.
//!
//! Workers are spawned per reconcile rather than parked per controller: each controller may
//! run `--max-reconcile-rate` reconciles at once, as upstream, but an idle controller holds
//! none, and the whole process runs at most
//! [`IN_FLIGHT_PER_RATE`](super::context::IN_FLIGHT_PER_RATE) × `--max-reconcile-rate` (at least
//! [`MIN_IN_FLIGHT`](super::context::MIN_IN_FLIGHT))
//! at once (see there why).

use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use kube::runtime::watcher::Event;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{Notify, Semaphore};

use super::conditions::{Condition, TYPE_READY, TYPE_SYNCED};
use super::context::ControllerContext;
use super::external::{Connector, ManagedKind};
use super::kind::Scope;
use super::meta::FilterKey;
use super::metrics::{Labels, ManagedMetrics};
use super::ratelimit::ItemBackoff;
use super::reconciler::{Outcome, Reconciler};
use super::shards::Shards;
use super::watch::Watched;

/// Objects per page of a watch's initial list: small pages keep the memory of a restart
/// with thousands of existing objects low (each page is held whole while it is decoded).
pub const LIST_PAGE: u32 = 100;

/// An object key: namespace (empty for cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// Namespace, or empty.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    fn of(o: &Watched) -> Self {
        ObjectKey {
            namespace: o.metadata.namespace.clone().unwrap_or_default(),
            name: o.metadata.name.clone().unwrap_or_default(),
        }
    }
    fn string(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

#[derive(Default)]
struct QueueState {
    /// Keys whose first rate-limited requeue came due (see [`WorkQueue::add_rate_limited`]);
    /// handed out before `queue`.
    first_retries: VecDeque<ObjectKey>,
    queue: VecDeque<ObjectKey>,
    dirty: HashSet<ObjectKey>,
    processing: HashSet<ObjectKey>,
    /// Delayed requests: when, and whether it is a first rate-limited requeue.
    waiting: HashMap<ObjectKey, (Instant, bool)>,
    /// Keys being processed whose held request is a first rate-limited requeue.
    urgent: HashSet<ObjectKey>,
    shutdown: bool,
}

/// client-go's rate-limited delaying work queue.
pub struct WorkQueue {
    state: Mutex<QueueState>,
    notify: Notify,
    backoff: ItemBackoff,
    name: String,
    metrics: Arc<ManagedMetrics>,
}

impl WorkQueue {
    /// A queue; `name` is the `name` label of the workqueue metrics.
    pub fn new(name: impl Into<String>, metrics: Arc<ManagedMetrics>) -> Self {
        WorkQueue {
            state: Mutex::new(QueueState::default()),
            notify: Notify::new(),
            backoff: ItemBackoff::default(),
            name: name.into(),
            metrics,
        }
    }

    fn labels(&self) -> Labels {
        vec![("name".to_string(), self.name.clone())]
    }

    fn add_locked(&self, st: &mut QueueState, key: ObjectKey, first_retry: bool) {
        if st.shutdown {
            return;
        }
        if st.dirty.contains(&key) {
            // Already requested (typically by the watch event of our own write): the
            // request merges, and takes the urgent lane if this one is a first retry.
            if first_retry {
                if st.processing.contains(&key) {
                    st.urgent.insert(key);
                } else if let Some(i) = st.queue.iter().position(|k| *k == key) {
                    st.queue.remove(i);
                    st.first_retries.push_back(key);
                }
            }
            return;
        }
        self.metrics
            .workqueue_adds
            .get_or_create(&self.labels())
            .inc();
        st.dirty.insert(key.clone());
        if st.processing.contains(&key) {
            return;
        }
        if first_retry {
            st.first_retries.push_back(key);
        } else {
            st.queue.push_back(key);
        }
        self.metrics
            .workqueue_depth
            .get_or_create(&self.labels())
            .set((st.queue.len() + st.first_retries.len()) as i64);
    }

    /// Enqueue now (merging with an already queued request).
    pub fn add(&self, key: ObjectKey) {
        if let Ok(mut st) = self.state.lock() {
            self.add_locked(&mut st, key, false);
        }
        self.notify.notify_waiters();
        self.notify.notify_one();
    }

    /// Enqueue after `d`; of several pending delays the earliest wins.
    pub fn add_after(&self, key: ObjectKey, d: Duration) {
        self.add_after_marked(key, d, false);
    }

    fn add_after_marked(&self, key: ObjectKey, d: Duration, first_retry: bool) {
        if d.is_zero() && !first_retry {
            return self.add(key);
        }
        let at = Instant::now() + d;
        if let Ok(mut st) = self.state.lock() {
            if st.shutdown {
                return;
            }
            let e = st.waiting.entry(key).or_insert((at, first_retry));
            if at < e.0 {
                e.0 = at;
            }
            e.1 |= first_retry;
        }
        self.notify.notify_waiters();
        self.notify.notify_one();
    }

    /// The requeue a finished reconcile asks for (`next`: AFTER(d), or `None` for DONE)
    /// replaces the delayed requeue an earlier reconcile's result left: that reconcile's
    /// reason to come back (typically the create's back-off requeue, when the observe the
    /// create-succeeded stamp triggered has run meanwhile) is served by the one that just
    /// ended. A request of a watch event is never dropped (it is queued, not delayed).
    pub fn settle(&self, key: ObjectKey, next: Option<Duration>) {
        if let Ok(mut st) = self.state.lock() {
            st.waiting.remove(&key);
        }
        if let Some(d) = next {
            self.add_after(key, d);
        }
    }

    /// Enqueue through the per-object exponential limiter.
    ///
    /// The first such requeue after a success (the observe that follows a create, or a
    /// first error) is handed out, once due, before the keys that arrived by watch events
    /// and polls. Without that, when thousands of MRs are created at once, the observe that
    /// makes each one Ready queued behind every create pending in its controller, and all
    /// became Ready together at the end. Later requeues of a failing object keep the plain
    /// order, so failures cannot crowd out new work.
    pub fn add_rate_limited(&self, key: ObjectKey) {
        let d = self.backoff.next(&key.string());
        let first = self.backoff.failures(&key.string()) == 1;
        self.metrics
            .workqueue_retries
            .get_or_create(&self.labels())
            .inc();
        self.add_after_marked(key, d, first);
    }

    /// Reset the object's failure count.
    pub fn forget(&self, key: &ObjectKey) {
        self.backoff.forget(&key.string());
    }

    /// The object's consecutive rate-limited requeues.
    pub fn failures(&self, key: &ObjectKey) -> u32 {
        self.backoff.failures(&key.string())
    }

    /// Wait until a key can be handed out (without taking it); false after shutdown.
    pub async fn wait_ready(&self) -> bool {
        self.wait_for(false).await.is_some()
    }

    /// Wait for the next key to process; None after shutdown.
    pub async fn get(&self) -> Option<ObjectKey> {
        self.wait_for(true).await.flatten()
    }

    /// Wait until a key can be handed out, and take it if `take`: `Some(Some(key))` when
    /// taken, `Some(None)` when one is ready, `None` after shutdown.
    async fn wait_for(&self, take: bool) -> Option<Option<ObjectKey>> {
        loop {
            let notified = self.notify.notified();
            let wait = {
                let Ok(mut st) = self.state.lock() else {
                    return None;
                };
                if st.shutdown {
                    return None;
                }
                let now = Instant::now();
                self.promote_due(&mut st, now);
                let ready = !st.first_retries.is_empty() || !st.queue.is_empty();
                if ready && !take {
                    return Some(None);
                }
                let next = match st.first_retries.pop_front() {
                    Some(k) => Some(k),
                    None => st.queue.pop_front(),
                };
                if let Some(k) = next {
                    st.dirty.remove(&k);
                    st.processing.insert(k.clone());
                    self.metrics
                        .workqueue_depth
                        .get_or_create(&self.labels())
                        .set((st.queue.len() + st.first_retries.len()) as i64);
                    return Some(Some(k));
                }
                st.waiting
                    .values()
                    .map(|(t, _)| *t)
                    .min()
                    .map(|t| t.saturating_duration_since(now))
            };
            match wait {
                Some(d) => {
                    let _ = tokio::time::timeout(d, notified).await;
                }
                None => notified.await,
            }
        }
    }

    /// Move the delayed requests that are due into their lanes.
    fn promote_due(&self, st: &mut QueueState, now: Instant) {
        let due: Vec<(ObjectKey, bool)> = st
            .waiting
            .iter()
            .filter(|(_, (t, _))| *t <= now)
            .map(|(k, (_, first))| (k.clone(), *first))
            .collect();
        for (k, first) in due {
            st.waiting.remove(&k);
            self.add_locked(st, k, first);
        }
    }

    /// Mark the key as processed; a request that arrived meanwhile is queued now.
    pub fn done(&self, key: &ObjectKey) {
        if let Ok(mut st) = self.state.lock() {
            st.processing.remove(key);
            let urgent = st.urgent.remove(key);
            if st.dirty.contains(key) {
                if urgent {
                    st.first_retries.push_back(key.clone());
                } else {
                    st.queue.push_back(key.clone());
                }
            }
        }
        self.notify.notify_one();
    }

    /// Stop handing out keys.
    pub fn shutdown(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.shutdown = true;
        }
        self.notify.notify_waiters();
    }
}

/// Per-object cache entry for the event filter and the state gauges.
struct Cached {
    /// [`FilterKey::digest`] of the last event's metadata.
    filter: u64,
    ready: bool,
    synced: bool,
    /// The MR's shard (`--shards`; 0 without).
    shard: u32,
}

/// Whether this replica reconciles an MR of `shard`: always without `--shards`.
fn mine(shards: Option<&Arc<Shards>>, shard: u32) -> bool {
    shards.is_none_or(|s| s.owns(shard))
}

fn cached(o: &Watched, shards: Option<&Arc<Shards>>) -> Cached {
    let conds: Vec<Condition> = o.conditions();
    let is = |t: &str| conds.iter().any(|c| c.type_ == t && c.is_true());
    Cached {
        filter: FilterKey::of_watched(&o.metadata).digest(),
        ready: is(TYPE_READY),
        synced: is(TYPE_SYNCED),
        shard: shards.map_or(0, |s| s.shard_of_watched(o)),
    }
}

/// The state gauges of one Kind and scope (`crossplane_managed_resource_exists`, `_ready`,
/// `_synced`), kept current by the watch as objects enter, change and leave the controller's
/// cache, instead of a task per controller recounting the cache every `--poll-state-metric`
/// (which a provider with hundreds of Kinds would run hundreds of).
struct StateGauges {
    exists: Gauge,
    ready: Gauge,
    synced: Gauge,
}

impl StateGauges {
    fn new(metrics: &ManagedMetrics, gvk_label: &str) -> Self {
        let labels = ManagedMetrics::gvk(gvk_label);
        let gauges = StateGauges {
            exists: metrics.exists.get_or_create(&labels).clone(),
            ready: metrics.ready.get_or_create(&labels).clone(),
            synced: metrics.synced.get_or_create(&labels).clone(),
        };
        // A controller started again (its CRD came back) starts from an empty cache.
        for g in [&gauges.exists, &gauges.ready, &gauges.synced] {
            g.set(0);
        }
        gauges
    }

    /// Count `c` in (`add`) or out (`remove`) of the gauges.
    fn count(&self, c: &Cached, by: i64) {
        self.exists.inc_by(by);
        if c.ready {
            self.ready.inc_by(by);
        }
        if c.synced {
            self.synced.inc_by(by);
        }
    }

    fn add(&self, c: &Cached) {
        self.count(c, 1);
    }

    fn remove(&self, c: &Cached) {
        self.count(c, -1);
    }
}

/// Run the controller of `kind` in `scope` until `ctx.shutdown` is cancelled.
pub async fn run<K: ManagedKind>(
    kind: Arc<K>,
    connector: Arc<dyn Connector<K>>,
    ctx: ControllerContext,
    scope: Scope,
) {
    let (controller_name, ar) = {
        let info = kind.info();
        (info.controller_name(scope), info.api_resource(scope))
    };
    let state = StateGauges::new(&ctx.metrics, &kind.info().gvk_label(scope));
    let reconciler = Arc::new(Reconciler::new(kind, connector, ctx.clone(), scope));
    let queue = Arc::new(WorkQueue::new(controller_name.clone(), ctx.metrics.clone()));
    let cache: Arc<Mutex<HashMap<ObjectKey, Cached>>> = Arc::new(Mutex::new(HashMap::new()));
    let workers = ctx.max_reconcile_rate.max(1);
    let clabels = ManagedMetrics::controller(&controller_name);
    ctx.metrics
        .max_concurrent
        .get_or_create(&clabels)
        .set(workers as i64);
    tracing::info!(controller = %controller_name, workers, "starting managed controller");

    // Watch and filter.
    // A watch never ends: it gets a connection of the watch pool, never the main one.
    let client = ctx.watch_client();
    let watch = {
        let queue = queue.clone();
        let cache = cache.clone();
        let controller_name = controller_name.clone();
        let shards = ctx.shards.clone();
        async move {
            let mut seen: HashSet<ObjectKey> = HashSet::new();
            let on = |ev: Event<Watched>| match ev {
                Event::Init => seen.clear(),
                Event::InitApply(o) | Event::Apply(o) => {
                    let key = ObjectKey::of(&o);
                    seen.insert(key.clone());
                    let c = cached(&o, shards.as_ref());
                    let shard = c.shard;
                    let enqueue = match cache.lock() {
                        Ok(mut m) => {
                            let changed = m.get(&key).is_none_or(|p| p.filter != c.filter);
                            state.add(&c);
                            if let Some(old) = m.insert(key.clone(), c) {
                                state.remove(&old);
                            }
                            changed
                        }
                        Err(_) => true,
                    } && mine(shards.as_ref(), shard);
                    if enqueue {
                        queue.add(key);
                    }
                }
                Event::InitDone => {
                    // Objects that vanished while the watch was down.
                    let gone: Vec<(ObjectKey, u32)> = match cache.lock() {
                        Ok(mut m) => {
                            let g: Vec<ObjectKey> =
                                m.keys().filter(|k| !seen.contains(*k)).cloned().collect();
                            g.into_iter()
                                .filter_map(|k| {
                                    let c = m.remove(&k)?;
                                    state.remove(&c);
                                    Some((k, c.shard))
                                })
                                .collect()
                        }
                        Err(_) => Vec::new(),
                    };
                    // The keys of the list are not needed until the next one.
                    seen = HashSet::new();
                    for (k, shard) in gone {
                        if mine(shards.as_ref(), shard) {
                            queue.add(k);
                        }
                    }
                }
                Event::Delete(o) => {
                    let key = ObjectKey::of(&o);
                    if let Some(old) = cache.lock().ok().and_then(|mut m| m.remove(&key)) {
                        state.remove(&old);
                    }
                    if mine(
                        shards.as_ref(),
                        shards.as_ref().map_or(0, |s| s.shard_of_watched(&o)),
                    ) {
                        queue.add(key);
                    }
                }
            };
            super::watch::run(client, &ar, LIST_PAGE, &controller_name, on).await;
        }
    };

    // Workers, on demand: one dispatcher takes keys off the queue and spawns a task per
    // reconcile, at most `workers` at once for this controller and at most
    // `ctx.reconcile_slots` for the whole process. An idle controller holds no worker task,
    // so a provider with hundreds of Kinds and few objects costs a watch per Kind, not
    // `--max-reconcile-rate` parked tasks per Kind.
    let slots = Arc::new(Semaphore::new(workers));
    let watch_task = tokio::spawn(watch);
    let grants_task = ctx
        .shards
        .clone()
        .map(|shards| tokio::spawn(enqueue_granted_shards(shards, cache.clone(), queue.clone())));
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p,
            () = ctx.shutdown.cancelled() => break,
        };
        let Ok(permit) = permit else { break };
        // Wait for work, then for a process-wide slot, and only then pick the key: a key
        // that became urgent meanwhile (a first retry) is picked over those queued earlier.
        let ready = tokio::select! {
            r = queue.wait_ready() => r,
            () = ctx.shutdown.cancelled() => false,
        };
        if !ready {
            break;
        }
        let slot = tokio::select! {
            s = ctx.reconcile_slots.clone().acquire_owned() => s.ok(),
            () = ctx.shutdown.cancelled() => None,
        };
        let Some(slot) = slot else { break };
        let key = tokio::select! {
            k = queue.get() => k,
            () = ctx.shutdown.cancelled() => None,
        };
        let Some(key) = key else { break };
        // `--shards`: only MRs of the shards this replica owns, each counted in flight until
        // its reconcile ends, so that a shard is given up only when none of it is running.
        let in_flight = match &ctx.shards {
            None => None,
            Some(shards) => {
                let shard = cache.lock().ok().and_then(|m| m.get(&key).map(|c| c.shard));
                match shard.and_then(|s| shards.begin(s)) {
                    Some(guard) => Some(guard),
                    None => {
                        queue.forget(&key);
                        queue.done(&key);
                        continue;
                    }
                }
            }
        };
        // The global limiter: a limited request returns AFTER(wait) without reconciling.
        let wait = ctx
            .rate_limiter
            .when(&format!("{controller_name}/{}", key.string()));
        if !wait.is_zero() {
            queue.forget(&key);
            queue.add_after(key.clone(), wait);
            queue.done(&key);
            count(&ctx, &controller_name, "requeue_after");
            continue;
        }
        let queue = queue.clone();
        let reconciler = reconciler.clone();
        let ctx = ctx.clone();
        let controller_name = controller_name.clone();
        tokio::spawn(async move {
            process(&queue, &reconciler, &ctx, &controller_name, key).await;
            drop(in_flight);
            drop(slot);
            drop(permit);
        });
    }
    queue.shutdown();
    watch_task.abort();
    if let Some(t) = grants_task {
        t.abort();
    }
    // Let the reconciles in flight finish.
    let _ = slots
        .acquire_many(u32::try_from(workers).unwrap_or(u32::MAX))
        .await;
    tracing::info!(controller = %controller_name, "stopped managed controller");
}

/// `--shards`: enqueues every MR of a shard when this replica is granted it (the MRs of a
/// shard it does not own are watched but not queued).
async fn enqueue_granted_shards(
    shards: Arc<Shards>,
    cache: Arc<Mutex<HashMap<ObjectKey, Cached>>>,
    queue: Arc<WorkQueue>,
) {
    let mut changes = shards.subscribe();
    let mut owned: HashSet<u32> = HashSet::new();
    loop {
        let now: HashSet<u32> = shards.owned().into_iter().collect();
        let granted: HashSet<u32> = now.difference(&owned).copied().collect();
        if !granted.is_empty() {
            let keys: Vec<ObjectKey> = match cache.lock() {
                Ok(m) => m
                    .iter()
                    .filter(|(_, c)| granted.contains(&c.shard))
                    .map(|(k, _)| k.clone())
                    .collect(),
                Err(_) => Vec::new(),
            };
            for k in keys {
                queue.add(k);
            }
        }
        owned = now;
        if changes.changed().await.is_err() {
            return;
        }
    }
}

/// One reconcile of `key` and the queue bookkeeping of its outcome.
async fn process<K: ManagedKind>(
    queue: &WorkQueue,
    reconciler: &Reconciler<K>,
    ctx: &ControllerContext,
    controller_name: &str,
    key: ObjectKey,
) {
    let clabels = ManagedMetrics::controller(controller_name);
    ctx.metrics.active_workers.get_or_create(&clabels).inc();
    let started = Instant::now();
    let ns = if key.namespace.is_empty() {
        None
    } else {
        Some(key.namespace.as_str())
    };
    let outcome = AssertUnwindSafe(reconciler.reconcile(ns, &key.name))
        .catch_unwind()
        .await
        .unwrap_or_else(|_| Outcome::Error("reconciler panicked".into()));
    ctx.metrics
        .reconcile_time
        .get_or_create(&clabels)
        .observe(started.elapsed().as_secs_f64());
    ctx.metrics.active_workers.get_or_create(&clabels).dec();
    match outcome {
        Outcome::Done => {
            queue.forget(&key);
            queue.settle(key.clone(), None);
            count(ctx, controller_name, "success");
        }
        Outcome::After(d) => {
            queue.forget(&key);
            queue.settle(key.clone(), Some(d));
            count(ctx, controller_name, "requeue_after");
        }
        Outcome::Backoff => {
            queue.add_rate_limited(key.clone());
            count(ctx, controller_name, "requeue");
        }
        Outcome::Error(e) => {
            tracing::warn!(controller = %controller_name, object = %key.string(), error = %e, "reconcile failed");
            queue.add_rate_limited(key.clone());
            count(ctx, controller_name, "error");
            ctx.metrics.reconcile_errors.get_or_create(&clabels).inc();
        }
    }
    queue.done(&key);
}

fn count(ctx: &ControllerContext, controller: &str, result: &str) {
    ctx.metrics
        .reconcile_total
        .get_or_create(&vec![
            ("controller".to_string(), controller.to_string()),
            ("result".to_string(), result.to_string()),
        ])
        .inc();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> WorkQueue {
        WorkQueue::new("t", Arc::new(ManagedMetrics::unregistered()))
    }

    fn k(n: &str) -> ObjectKey {
        ObjectKey {
            namespace: "ns".into(),
            name: n.into(),
        }
    }

    #[tokio::test]
    async fn queue_merges_and_holds_while_processing() {
        let q = queue();
        q.add(k("a"));
        q.add(k("a"));
        q.add(k("b"));
        let first = q.get().await.expect("a");
        assert_eq!(first, k("a"));
        // a request while processing is held
        q.add(k("a"));
        assert_eq!(q.get().await.expect("b"), k("b"));
        q.done(&k("b"));
        q.done(&k("a"));
        assert_eq!(q.get().await.expect("a again"), k("a"));
        q.done(&k("a"));
        // earliest delayed requeue wins
        q.add_after(k("c"), Duration::from_secs(3600));
        q.add_after(k("c"), Duration::from_millis(10));
        let got = tokio::time::timeout(Duration::from_secs(30), q.get())
            .await
            .expect("earliest wins")
            .expect("c");
        assert_eq!(got, k("c"));
    }

    #[tokio::test]
    async fn a_first_rate_limited_requeue_goes_before_earlier_events_later_ones_do_not() {
        let q = queue();
        q.add(k("a"));
        assert_eq!(q.get().await.expect("a"), k("a"));
        // The observe after a create: the first rate-limited requeue (due in 1 s).
        q.add_rate_limited(k("a"));
        q.done(&k("a"));
        q.add(k("b"));
        q.add(k("c"));
        // Wait until it is due; then it is handed out before b and c.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(q.get().await.expect("a first"), k("a"));
        // A second consecutive requeue (a failing object) keeps the plain order.
        q.add_rate_limited(k("a"));
        q.done(&k("a"));
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert_eq!(q.get().await.expect("b"), k("b"));
        q.done(&k("b"));
        assert_eq!(q.get().await.expect("c"), k("c"));
        q.done(&k("c"));
        assert_eq!(q.get().await.expect("a last"), k("a"));
        q.forget(&k("a"));
        // A key already queued by an event moves up when its first retry comes due.
        q.add(k("d"));
        q.add(k("a"));
        q.add_rate_limited(k("a"));
        q.done(&k("a"));
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(q.get().await.expect("a moved up"), k("a"));
    }

    /// The create's back-off requeue is dropped once the observe its create-succeeded stamp
    /// triggered has ended up to date: two reconciles per creation, not three. A watch
    /// event's request is kept.
    #[tokio::test]
    async fn a_finished_reconcile_replaces_the_requeue_an_earlier_one_left() {
        let q = queue();
        q.add(k("a"));
        assert_eq!(q.get().await.expect("create"), k("a"));
        // The create: BACKOFF, and the watch event of its create-succeeded stamp.
        q.add_rate_limited(k("a"));
        q.add(k("a"));
        q.done(&k("a"));
        assert_eq!(q.get().await.expect("the observe"), k("a"));
        // The observe ends up to date: AFTER(poll).
        q.forget(&k("a"));
        q.settle(k("a"), Some(Duration::from_secs(3600)));
        q.done(&k("a"));
        let third = tokio::time::timeout(Duration::from_millis(1500), q.get()).await;
        assert!(third.is_err(), "a third reconcile: {third:?}");
        // An event while a reconcile runs is still served after it, whatever it settles.
        q.add(k("b"));
        assert_eq!(q.get().await.expect("b"), k("b"));
        q.add(k("b"));
        q.settle(k("b"), None);
        q.done(&k("b"));
        assert_eq!(q.get().await.expect("b's event"), k("b"));
        q.done(&k("b"));
    }
}
