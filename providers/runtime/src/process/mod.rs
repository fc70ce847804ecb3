//! The provider process shared by the four binaries (docs/managed-reconciler.md §15): flags, logs,
//! the Kubernetes client, health and metrics endpoints, leader election, the safe-start gate that
//! starts each Kind's controllers once its CRD is established, and graceful shutdown on
//! SIGTERM/SIGINT.
//!
//! A binary builds a [`ProviderProcess`] (its name, its managed Kinds, its config verifier and
//! metric hooks) and calls [`run`] with the parsed [`ProviderFlags`].
//!
//! Deviations: the webhook server is not started (every CRD has one version, so there are
//! no conversion webhooks; `--webhook-port` and `--certs-dir` are accepted); change logs are
//! accepted and ignored; kube-rs has no client-side QPS limiter, so the API client is not
//! throttled at 5x `--max-reconcile-rate` (the global reconcile limiter bounds the load);
//! `--sync` is accepted but kube-runtime watches do not re-list periodically (drift checks
//! follow `--poll` anyway).

pub mod flags;
pub mod gate;
pub mod http;
pub mod kubeclient;
pub mod leader;
pub mod logging;
pub mod metrics;
pub mod shards;

use std::sync::Arc;

use futures::future::BoxFuture;
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

pub use flags::{LogFormat, ProviderFlags, parse_bind_address};
pub use gate::{CrdHead, GateState, GatedController, SafeStartGate, crd_ready};
pub use http::ReadinessChecks;
pub use kubeclient::kube_client;
pub use leader::{LeaderElectionConfig, LeaderElector, lease_name};
pub use metrics::MetricsRegistry;
pub use shards::{ShardConfig, ShardManager};

use crate::managed::context::WatchClients;
use crate::managed::kind::Scope;
use crate::managed::{ControllerContext, KindRegistration, ManagedMetrics};
use crate::providerconfig::controller::ConfigController;
use crate::providerconfig::secrets::SecretWatches;
use crate::providerconfig::{ConfigApi, ConfigKind, ConfigVerifier, KubeConfigResolver};

/// A hook that registers extra metrics (e.g. the JFrog client's request metrics).
pub type MetricsHook = Box<dyn FnOnce(&mut Registry) + Send>;

/// What a provider binary runs.
pub struct ProviderProcess {
    /// `provider-artifactory`, ...
    pub name: String,
    /// `artifactory`, ...: the first label of the config group.
    pub short: String,
    /// The managed Kinds (each started in both scopes).
    pub kinds: Vec<Arc<dyn KindRegistration>>,
    /// The JFrog ping run on resolved configs.
    pub verifier: Option<Arc<dyn ConfigVerifier>>,
    /// Extra metric registrations.
    pub metrics_hooks: Vec<MetricsHook>,
    /// The config controllers' caches, which the resolver reads configs from.
    pub config_stores: Arc<crate::providerconfig::ConfigStores>,
}

impl ProviderProcess {
    /// A process with no managed Kinds yet.
    pub fn new(name: impl Into<String>, short: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            short: short.into(),
            kinds: Vec::new(),
            verifier: None,
            metrics_hooks: Vec::new(),
            config_stores: Arc::default(),
        }
    }

    /// Sets the managed Kinds.
    pub fn with_kinds(mut self, kinds: Vec<Arc<dyn KindRegistration>>) -> Self {
        self.kinds = kinds;
        self
    }

    /// Sets the config verifier.
    pub fn with_verifier(mut self, verifier: Arc<dyn ConfigVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// Adds a metrics hook.
    pub fn with_metrics(mut self, hook: impl FnOnce(&mut Registry) + Send + 'static) -> Self {
        self.metrics_hooks.push(Box::new(hook));
        self
    }

    /// The gated controllers: the config controllers, then each Kind in both scopes.
    pub fn controllers(&self) -> Vec<Arc<dyn GatedController>> {
        let api = ConfigApi::new(&self.short);
        let mut out: Vec<Arc<dyn GatedController>> = ConfigKind::CONFIGS
            .iter()
            .map(|k| {
                Arc::new(ConfigGated {
                    api: api.clone(),
                    kind: *k,
                    stores: self.config_stores.clone(),
                }) as Arc<dyn GatedController>
            })
            .collect();
        for k in &self.kinds {
            for scope in Scope::ALL {
                out.push(Arc::new(KindGated {
                    kind: k.clone(),
                    scope,
                }));
            }
        }
        out
    }
}

/// The Kinds a provider serves, for `--help`.
pub fn kinds_help(short: &str, kinds: &[Arc<dyn KindRegistration>]) -> String {
    let api = ConfigApi::new(short);
    let mut s = String::from("Kinds served:\n");
    for k in ConfigKind::ALL {
        s.push_str(&format!(
            "  {} ({})\n",
            k.kind(),
            api.api_resource(k).api_version
        ));
    }
    if kinds.is_empty() {
        s.push_str("  (no managed Kinds yet)\n");
    }
    for k in kinds {
        let info = k.info();
        s.push_str(&format!(
            "  {} ({}, legacy {})\n",
            info.kind,
            info.api_version(Scope::Namespaced),
            info.api_version(Scope::Cluster)
        ));
    }
    s
}

/// A config controller behind the gate.
struct ConfigGated {
    api: ConfigApi,
    kind: ConfigKind,
    stores: Arc<crate::providerconfig::ConfigStores>,
}

impl GatedController for ConfigGated {
    fn name(&self) -> String {
        format!(
            "providerconfig/{}.{}",
            self.kind.kind(),
            self.api.group(self.kind)
        )
        .to_lowercase()
    }
    fn crd_name(&self) -> String {
        self.api.crd_name(self.kind)
    }
    fn version(&self) -> String {
        crate::providerconfig::types::CONFIG_VERSION.to_string()
    }
    fn start(&self, ctx: ControllerContext) -> BoxFuture<'static, ()> {
        // Events carry the controller name as their source, as crossplane-runtime's recorder
        // for `providerconfig/<kind>.<group>` does.
        // The controller watches its Kind: a client of the watch pool.
        let c = ConfigController::new(ctx.watch_client(), self.api.clone(), self.kind, self.name())
            .with_rate_limiter(ctx.rate_limiter.clone())
            .with_config_stores(self.stores.clone())
            .with_shards(ctx.shards.clone());
        let concurrency = u16::try_from(ctx.max_reconcile_rate)
            .unwrap_or(u16::MAX)
            .max(1);
        let token = ctx.shutdown.clone();
        Box::pin(async move { c.run(concurrency, token.cancelled_owned()).await })
    }
}

/// A managed Kind in one scope behind the gate.
struct KindGated {
    kind: Arc<dyn KindRegistration>,
    scope: Scope,
}

impl GatedController for KindGated {
    fn name(&self) -> String {
        self.kind.info().controller_name(self.scope)
    }
    fn crd_name(&self) -> String {
        self.kind.info().crd_name(self.scope)
    }
    fn version(&self) -> String {
        self.kind.info().version.to_string()
    }
    fn start(&self, ctx: ControllerContext) -> BoxFuture<'static, ()> {
        self.kind.start(ctx, self.scope)
    }
}

/// Errors that end the process.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// No usable kubeconfig or in-cluster config.
    #[error("cannot build Kubernetes client: {0}")]
    Kubeconfig(String),
    /// A flag value is invalid.
    #[error("{0}")]
    Flag(String),
    /// An endpoint could not bind.
    #[error("cannot bind {what} on {addr}: {source}")]
    Bind {
        /// Which endpoint.
        what: &'static str,
        /// Address.
        addr: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Leadership was lost: the process must exit so it restarts.
    #[error(transparent)]
    LeaderLost(#[from] leader::LeaderError),
}

/// How often the heap's free memory is handed back to the system.
pub const HEAP_TRIM_PERIOD: std::time::Duration = std::time::Duration::from_secs(30);

/// Hands the heap's free memory back to the system. glibc's allocator keeps what a burst of
/// work freed (a creation of thousands of MRs decodes and encodes many objects at once, and a
/// Kind's compiled strict schema is dropped when idle) inside its arenas, so without this a
/// provider's RSS stays at its peak. Measured: 3,000 repositories, RSS 106 MiB at the peak and
/// still 106 MiB two polls later.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(
    unsafe_code,
    reason = "malloc_trim(3) is a plain glibc call with no memory-safety precondition"
)]
pub fn trim_heap() {
    // SAFETY: malloc_trim takes a byte count and touches only the allocator's own state,
    // under the allocator's locks; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The size from which glibc serves an allocation by its own `mmap` (given back whole when
/// freed) instead of from an arena: glibc's own starting value, kept fixed.
pub const MMAP_THRESHOLD: usize = 128 * 1024;

/// Keeps glibc's `mmap` threshold at [`MMAP_THRESHOLD`]. By default glibc raises the
/// threshold to the size of each `mmap`ed block freed (up to 32 MiB), so after the first
/// large answer (a list of thousands of repository configurations, a page of MRs) every later
/// one is carved from an arena, among long-lived objects, and what it leaves cannot be handed
/// back. Setting the threshold turns that adjustment off. Measured (provider-artifactory, the
/// `provider` build, 10,000 repositories, `sandbox bench`): steady RSS 95.8 -> 83.6 MiB, idle
/// 22.9 -> 20.2 MiB, creation time unchanged (70.0 / 71.6 s). Capping the arenas at two on
/// top changed nothing (84.8 MiB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(
    unsafe_code,
    reason = "mallopt(3) is a plain glibc call with no memory-safety precondition"
)]
pub fn tune_heap() {
    let threshold = i32::try_from(MMAP_THRESHOLD).unwrap_or(i32::MAX);
    // SAFETY: mallopt sets one of the allocator's parameters under its own lock; it takes
    // integers only and is safe to call from any thread at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, threshold);
    }
}

/// Tunes the heap (a no-op but with glibc).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tune_heap() {}

/// Hands the heap's free memory back to the system (a no-op but with glibc).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim_heap() {}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs a provider until SIGTERM/SIGINT (Ok) or lost leadership (Err).
pub async fn run(process: ProviderProcess, flags: ProviderFlags) -> Result<(), ProcessError> {
    logging::init_logging(flags.debug, flags.log_format);
    for f in flags.deprecated_flags_used() {
        eprintln!("warning: flag {f} is deprecated and ignored by this provider");
        tracing::warn!(flag = f, "deprecated flag ignored");
    }
    if flags.enable_changelogs {
        tracing::warn!("--enable-changelogs is accepted but change logs are not supported");
    }
    let shutdown = CancellationToken::new();
    {
        let token = shutdown.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutdown signal received");
            token.cancel();
        });
    }
    run_until(process, flags, shutdown).await
}

/// Like [`run`], with an explicit shutdown token (tests, embedding).
pub async fn run_until(
    process: ProviderProcess,
    flags: ProviderFlags,
    shutdown: CancellationToken,
) -> Result<(), ProcessError> {
    let config = kube::Config::infer()
        .await
        .map_err(|e| ProcessError::Kubeconfig(e.to_string()))?;
    let client = kubeclient::kube_client(config.clone())
        .map_err(|e| ProcessError::Kubeconfig(e.to_string()))?;
    // Watches over connections of their own, at most WATCHES_PER_CONNECTION each, and the
    // leader election over another: see `managed::context::WatchClients`.
    let watch_config = config.clone();
    let watch_clients = WatchClients::new(move || kubeclient::kube_client(watch_config.clone()));
    let lease_client =
        kubeclient::kube_client(config).map_err(|e| ProcessError::Kubeconfig(e.to_string()))?;

    let registry = MetricsRegistry::default();
    let mut managed_metrics = None;
    registry.register_with(|r| managed_metrics = Some(ManagedMetrics::new(r)));
    registry.register_with(|r| watch_clients.register(r));
    let ProviderProcess {
        name,
        short,
        kinds,
        verifier,
        metrics_hooks,
        config_stores,
    } = process;
    for hook in metrics_hooks {
        registry.register_with(hook);
    }

    // Free memory back to the system after each burst of work (see `tune_heap`, `trim_heap`).
    tune_heap();
    {
        let token = shutdown.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(HEAP_TRIM_PERIOD);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = token.cancelled() => break,
                    _ = tick.tick() => {
                        let _ = tokio::task::spawn_blocking(trim_heap).await;
                    }
                }
            }
        });
    }

    let checks = ReadinessChecks::default();
    checks.set("ping", true);
    if let Some(addr) =
        parse_bind_address(&flags.health_probe_bind_addr).map_err(ProcessError::Flag)?
    {
        let bound = http::serve_health(addr, checks.clone(), shutdown.clone())
            .await
            .map_err(|source| ProcessError::Bind {
                what: "health probes",
                addr: flags.health_probe_bind_addr.clone(),
                source,
            })?;
        tracing::info!(address = %bound, "serving health probes");
    }
    if let Some(addr) =
        parse_bind_address(&flags.metrics_bind_address).map_err(ProcessError::Flag)?
    {
        let bound = http::serve_metrics(addr, registry.clone(), shutdown.clone())
            .await
            .map_err(|source| ProcessError::Bind {
                what: "metrics",
                addr: flags.metrics_bind_address.clone(),
                source,
            })?;
        tracing::info!(address = %bound, "serving metrics");
    }

    let mut resolver = KubeConfigResolver::new(client.clone(), ConfigApi::new(&short))
        .with_service_account(flags.service_account())
        .with_config_stores(config_stores.clone())
        .with_secret_watches(Arc::new(SecretWatches::new(watch_clients.clone())));
    if let Some(v) = verifier {
        resolver = resolver.with_verifier(v);
    }
    let rate = usize::try_from(flags.max_reconcile_rate)
        .unwrap_or(usize::MAX)
        .max(1);
    let mut ctx = ControllerContext::new(client.clone(), Arc::new(resolver), name.clone())
        .with_watch_clients(watch_clients)
        .with_poll(flags.poll)
        .with_max_reconcile_rate(rate);
    ctx.min_poll_interval = flags.min_poll_interval;
    ctx.poll_state_metric = flags.poll_state_metric;
    ctx.management_policies_enabled = flags.enable_management_policies;
    ctx.debug = flags.debug;
    if let Some(m) = managed_metrics {
        ctx.metrics = Arc::new(m);
    }
    let controllers_token = shutdown.child_token();
    ctx.shutdown = controllers_token.clone();

    let process = ProviderProcess {
        name: name.clone(),
        short,
        kinds,
        verifier: None,
        metrics_hooks: Vec::new(),
        config_stores,
    };
    let gate = SafeStartGate::new(process.controllers());

    // `--shards`: active replicas, each reconciling the shards whose Leases it holds; the
    // shard Leases replace the leader election.
    let mut sharding = None;
    if flags.shards > 1 {
        if flags.leader_election {
            tracing::info!("--shards: the shard Leases replace the leader election");
        }
        let shards = crate::managed::shards::Shards::new(flags.shards, flags.shard_by);
        ctx.shards = Some(shards.clone());
        let cfg = ShardConfig {
            provider: name.clone(),
            namespace: flags.effective_namespace(),
            identity: leader::default_identity(),
            lease_duration: flags.leader_election_lease_duration,
            renew_deadline: flags.leader_election_renew_deadline,
            retry_period: flags.leader_election_retry_period,
        };
        let manager = ShardManager::new(lease_client.clone(), cfg, shards, registry.clone());
        sharding = Some(tokio::spawn(
            manager.run(shutdown.clone(), std::time::Duration::from_secs(10)),
        ));
    }

    let mut elector = None;
    if flags.leader_election && sharding.is_none() {
        let cfg = LeaderElectionConfig {
            name: lease_name(&name),
            namespace: flags.effective_namespace(),
            identity: leader::default_identity(),
            lease_duration: flags.leader_election_lease_duration,
            renew_deadline: flags.leader_election_renew_deadline,
            retry_period: flags.leader_election_retry_period,
        };
        tracing::info!(lease = %cfg.name, namespace = %cfg.namespace, identity = %cfg.identity, "waiting for leadership");
        let mut e = LeaderElector::new(lease_client, cfg, registry.clone());
        if !e.acquire(&shutdown).await {
            return Ok(());
        }
        elector = Some(e);
    }

    let gate_task = tokio::spawn(gate.run(ctx));
    let result = match elector.as_mut() {
        Some(e) => e.hold(&shutdown).await.map_err(ProcessError::from),
        None => {
            shutdown.cancelled().await;
            Ok(())
        }
    };
    controllers_token.cancel();
    // Give controllers a moment to finish their current reconcile.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), gate_task).await;
    if let Some(manager) = sharding {
        // It gives its shards up once their reconciles have ended.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(15), manager).await;
    }
    if let Err(e) = &result {
        tracing::error!(error = %e, "exiting");
    }
    result
}
