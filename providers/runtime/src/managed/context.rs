//! What the process hands every controller: the [`ControllerContext`] (client, ProviderConfig
//! resolver, poll, limits, metrics, shutdown token) and the defaults of the provider flags.
//!
//! A leaf of the `managed` modules (it depends only on the config contract, metrics and the
//! rate limiter), so that the reconciler, the controller and the registration can all use it
//! without importing one another.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::config::ProviderConfigResolver;
use super::metrics::ManagedMetrics;
use super::ratelimit::GlobalRateLimiter;

/// The JFrog providers' default poll interval (docs/managed-reconciler.md §5: Upjet providers use
/// 10 m).
pub const DEFAULT_POLL: Duration = Duration::from_secs(600);
/// The external-call deadline (docs/managed-reconciler.md §1.5: Upjet providers use 3 minutes).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);
/// The creation grace period (docs/managed-reconciler.md §2 step 13).
pub const DEFAULT_CREATION_GRACE_PERIOD: Duration = Duration::from_secs(30);
/// The default `--max-reconcile-rate`.
pub const DEFAULT_MAX_RECONCILE_RATE: usize = 10;
/// The default `--min-poll-interval`.
pub const DEFAULT_MIN_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// `--poll-state-metric` default.
pub const DEFAULT_POLL_STATE_METRIC: Duration = Duration::from_secs(5);

/// How many long-lived watches one connection carries at most. kube-apiserver allows 100
/// concurrent HTTP/2 streams per connection by default (`--http2-max-streams-per-connection`
/// 0 means 100 in `k8s.io/apiserver`), and hyper opens no second connection when a server's
/// limit is reached: a request beyond it waits for a free stream, and on a connection full of
/// watches, which never end, it waits forever. Room is left for the list that starts each
/// watch and for its restarts.
pub const WATCHES_PER_CONNECTION: usize = 80;

/// Kubernetes clients for long-lived watches, each over its own connection and carrying at
/// most [`WATCHES_PER_CONNECTION`] watches; a client is made when the others are full. The
/// process's main client (reconciler reads and writes, events, ProviderConfigs, Secrets)
/// carries no watch, and the leader election has a client of its own, so neither waits behind
/// watches whatever the number of Kinds. Cheap to clone.
#[derive(Clone)]
pub struct WatchClients {
    inner: Arc<Mutex<WatchPool>>,
}

type MakeClient = dyn Fn() -> Result<kube::Client, kube::Error> + Send + Sync;

struct WatchPool {
    make: Box<MakeClient>,
    /// Each client and how many watches it was handed.
    clients: Vec<(kube::Client, usize)>,
    /// `kube_watch_connections` and `kube_watches` (see [`WatchClients::register`]).
    connections: prometheus_client::metrics::gauge::Gauge,
    watches: prometheus_client::metrics::gauge::Gauge,
}

impl WatchClients {
    /// Clients made by `make`, which must open a new connection each time (a new
    /// `kube::Client` with its own connection pool).
    pub fn new(
        make: impl Fn() -> Result<kube::Client, kube::Error> + Send + Sync + 'static,
    ) -> Self {
        WatchClients {
            inner: Arc::new(Mutex::new(WatchPool {
                make: Box::new(make),
                clients: Vec::new(),
                connections: Default::default(),
                watches: Default::default(),
            })),
        }
    }

    /// The client for one more long-lived watch: the first with room, else a new one.
    pub fn next(&self) -> Result<kube::Client, kube::Error> {
        let mut pool = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((client, n)) = pool
            .clients
            .iter_mut()
            .find(|(_, n)| *n < WATCHES_PER_CONNECTION)
        {
            *n += 1;
            let client = client.clone();
            pool.watches.inc();
            return Ok(client);
        }
        let client = (pool.make)()?;
        pool.clients.push((client.clone(), 1));
        pool.connections.inc();
        pool.watches.inc();
        Ok(client)
    }

    /// Registers `kube_watch_connections` (connections made for watches) and `kube_watches`
    /// (long-lived watches handed out; a watch that restarts keeps its client and is counted
    /// once), so what the API server carries for this provider can be read off the provider.
    pub fn register(&self, registry: &mut prometheus_client::registry::Registry) {
        let pool = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        registry.register(
            "kube_watch_connections",
            "Connections to the Kubernetes API server opened for long-lived watches",
            pool.connections.clone(),
        );
        registry.register(
            "kube_watches",
            "Long-lived watches on the Kubernetes API server",
            pool.watches.clone(),
        );
    }

    /// How many watch connections have been made.
    pub fn connections(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clients
            .len()
    }
}

/// Everything a Kind's controller needs from the process. Cheap to clone.
#[derive(Clone)]
pub struct ControllerContext {
    /// The Kubernetes client (with the provider's identity).
    pub client: kube::Client,
    /// Clients for long-lived watches ([`WatchClients`]); `None`: watches use `client`.
    pub watch_clients: Option<WatchClients>,
    /// ProviderConfig resolution and usage tracking.
    pub resolver: Arc<dyn ProviderConfigResolver>,
    /// `--poll`.
    pub poll: Duration,
    /// The jitter bound `j`: AFTER(poll) becomes `poll + U(-j, +j)`. The providers set 5 % of
    /// `--poll` ([`ControllerContext::new`] does).
    pub poll_jitter: Duration,
    /// `--min-poll-interval`: the floor for the poll-interval annotation.
    pub min_poll_interval: Duration,
    /// `--max-reconcile-rate`: also each controller's number of concurrent reconciles.
    pub max_reconcile_rate: usize,
    /// The process-wide reconcile limiter (shared by every controller).
    pub rate_limiter: Arc<GlobalRateLimiter>,
    /// The process-wide cap on reconciles in flight (shared by every controller):
    /// [`IN_FLIGHT_PER_RATE`] × `--max-reconcile-rate`.
    pub reconcile_slots: Arc<Semaphore>,
    /// `--enable-management-policies`.
    pub management_policies_enabled: bool,
    /// Deadline of each external call; one reconcile may take `timeout + 30 s`.
    pub timeout: Duration,
    /// The creation grace period (30 s).
    pub creation_grace_period: Duration,
    /// `--debug`: debug logs of every reconcile.
    pub debug: bool,
    /// Metrics shared by every controller.
    pub metrics: Arc<ManagedMetrics>,
    /// The provider's name, e.g. `provider-artifactory` (used in logs; events use the
    /// controller name as source, as crossplane-runtime does).
    pub provider_name: String,
    /// Cancelled on shutdown (or when the Kind's CRD goes away).
    pub shutdown: CancellationToken,
    /// `--poll-state-metric`, accepted as upstream's flag: upstream recounts the state gauges
    /// (`crossplane_managed_resource_{exists,ready,synced}`) this often; here the watch keeps
    /// them current, so nothing reads it.
    pub poll_state_metric: Duration,
    /// `--shards`: the shards this replica reconciles (`None`: every MR).
    pub shards: Option<Arc<super::shards::Shards>>,
}

impl ControllerContext {
    /// A context with the JFrog defaults: poll 10 m with 5 % jitter, rate 10, timeout 3 m,
    /// management policies on, minimum poll 1 s, unregistered metrics.
    pub fn new(
        client: kube::Client,
        resolver: Arc<dyn ProviderConfigResolver>,
        provider_name: impl Into<String>,
    ) -> Self {
        ControllerContext {
            client,
            watch_clients: None,
            resolver,
            poll: DEFAULT_POLL,
            poll_jitter: DEFAULT_POLL / 20,
            min_poll_interval: DEFAULT_MIN_POLL_INTERVAL,
            max_reconcile_rate: DEFAULT_MAX_RECONCILE_RATE,
            rate_limiter: Arc::new(GlobalRateLimiter::new(DEFAULT_MAX_RECONCILE_RATE)),
            reconcile_slots: Arc::new(Semaphore::new(in_flight(DEFAULT_MAX_RECONCILE_RATE))),
            management_policies_enabled: true,
            timeout: DEFAULT_TIMEOUT,
            creation_grace_period: DEFAULT_CREATION_GRACE_PERIOD,
            debug: false,
            metrics: Arc::new(ManagedMetrics::unregistered()),
            provider_name: provider_name.into(),
            shutdown: CancellationToken::new(),
            poll_state_metric: DEFAULT_POLL_STATE_METRIC,
            shards: None,
        }
    }

    /// Watches over `clients` rather than the main client.
    pub fn with_watch_clients(mut self, clients: WatchClients) -> Self {
        self.watch_clients = Some(clients);
        self
    }

    /// The client for one more long-lived watch: from [`ControllerContext::watch_clients`]
    /// when set (the main client when none can be made, with a warning).
    pub fn watch_client(&self) -> kube::Client {
        match self.watch_clients.as_ref().map(WatchClients::next) {
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "cannot open a watch connection; the watch shares the main one");
                self.client.clone()
            }
            None => self.client.clone(),
        }
    }

    /// Set `--poll` and its 5 % jitter together.
    pub fn with_poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self.poll_jitter = poll / 20;
        self
    }

    /// Set `--max-reconcile-rate` and a fresh shared limiter for it. Processes that run
    /// several controllers must build the context once and clone it, so they share the
    /// limiter.
    pub fn with_max_reconcile_rate(mut self, rate: usize) -> Self {
        self.max_reconcile_rate = rate;
        self.rate_limiter = Arc::new(GlobalRateLimiter::new(rate));
        self.reconcile_slots = Arc::new(Semaphore::new(in_flight(rate)));
        self
    }
}

/// Reconciles in flight per unit of `--max-reconcile-rate`, process-wide (at least
/// [`MIN_IN_FLIGHT`]).
///
/// Upstream runs `--max-reconcile-rate` workers per controller, so a provider with 296
/// controllers could have thousands of reconciles in flight, each holding its object; when
/// the platform is the bottleneck (JFrog serialises configuration writes) they only wait,
/// and memory grows with the backlog. The token bucket starts at most `rate` reconciles per
/// second, so by Little's law `2 × rate` in flight keeps the bucket's pace while a reconcile
/// takes under 2 s on average; beyond that, requests wait in their controllers' queues
/// (merged per object, costing a key each) instead of in memory-holding reconciles. Each
/// controller keeps its own limit of `rate`, as upstream.
pub const IN_FLIGHT_PER_RATE: usize = 2;

/// The smallest process-wide cap on reconciles in flight.
pub const MIN_IN_FLIGHT: usize = 20;

fn in_flight(rate: usize) -> usize {
    rate.saturating_mul(IN_FLIGHT_PER_RATE).max(MIN_IN_FLIGHT)
}

#[cfg(test)]
mod watch_client_tests {
    use super::*;

    /// A client that connects nowhere (no request is made).
    fn client() -> Result<kube::Client, kube::Error> {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("uri"));
        kube::Client::try_from(config)
    }

    /// Watches fill a connection up to the limit, then a new one is made: 300 watches (about
    /// provider-artifactory's) take 4 connections, none over 80 streams.
    #[tokio::test]
    async fn watches_spread_over_connections_under_the_stream_limit() {
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = made.clone();
        let clients = WatchClients::new(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            client()
        });
        for _ in 0..WATCHES_PER_CONNECTION {
            clients.next().expect("client");
        }
        assert_eq!(clients.connections(), 1);
        clients.next().expect("client");
        assert_eq!(clients.connections(), 2);
        for _ in 0..(300 - WATCHES_PER_CONNECTION - 1) {
            clients.next().expect("client");
        }
        assert_eq!(clients.connections(), 4);
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 4);
        let mut registry = prometheus_client::registry::Registry::default();
        clients.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        assert!(text.contains("\nkube_watch_connections 4\n"), "{text}");
        assert!(text.contains("\nkube_watches 300\n"), "{text}");
    }
}
