//! `sandbox up`: the whole provider family on one machine.
//!
//! Steps: start the Kubernetes API test server and the JFrog simulator (or use `--kubeconfig`
//! and `--jfrog-url`/`--jfrog-token-file` instead); install every CRD of `crds/`; create the
//! `crossplane-system` objects (credentials Secret, `ClusterProviderConfig` and legacy
//! `ProviderConfig` named `default` per provider) and, on the embedded server, each provider's
//! RBAC and own token; start the four providers as child processes (`sandbox provider <name>`,
//! the real provider code) with leader election; write `DIR/ready` once they lead; apply the
//! `--apply` manifests; show the managed resources converge, then a summary; run until
//! Ctrl-C/SIGTERM (or, with `--once`, until everything applied is Ready and Synced or
//! `--timeout` passes) and shut everything down.
//!
//! Deviations and simplifications:
//! - Against a real cluster (`--kubeconfig`), each provider gets its ServiceAccount, the
//!   ClusterRole Crossplane v2 would render and its binding, and a token from the TokenRequest
//!   API valid [`PROVIDER_TOKEN_LIFETIME`] (a pod's projected token is rotated; this one is
//!   not).
//! - Only cluster-scoped `ClusterProviderConfig`s and legacy `ProviderConfig`s named `default`
//!   are created, no namespaced `ProviderConfig` (it would need the Secret in every namespace).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use crate::Provider;
use crate::children::{self, Launch, ProviderChild};
use crate::kubeapi::{client_from_path, client_from_yaml, read_manifests};
use crate::progress::{self, Renderer, Watcher};
use crate::setup::{self, NAMESPACE, Platform};

pub(crate) fn duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("invalid duration {s:?}: {e}"))
}

/// How long the providers' service-account tokens are valid on a real cluster.
pub const PROVIDER_TOKEN_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// `PROVIDER=REFERENCE` of `--package`.
fn package_override(s: &str) -> Result<(Provider, String), String> {
    use clap::ValueEnum;
    let (p, r) = s
        .split_once('=')
        .ok_or_else(|| format!("expected PROVIDER=REFERENCE, got {s:?}"))?;
    let p = Provider::from_str(p, true)
        .map_err(|_| format!("unknown provider {p:?} (artifactory, xray, project or platform)"))?;
    if r.is_empty() {
        return Err(format!("{s:?}: the reference is empty"));
    }
    Ok((p, r.to_string()))
}

/// The repository's directory of `name` (`crds`, `examples`), as this binary was built from
/// it, if it still exists; else `./name`.
pub(crate) fn repo_dir(name: &str) -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    match built.canonicalize() {
        Ok(p) if p.is_dir() => p,
        _ => PathBuf::from(name),
    }
}

/// Flags of `sandbox up`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write DIR/kubeconfig (admin), DIR/jfrog.env, DIR/ready (once CRDs are installed and the
    /// providers lead), and DIR/providers/<name>.{kubeconfig,log,pid}.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Latency the embedded JFrog simulator adds to every request, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub jfrog_latency_ms: u64,
    /// The Artifactory version the embedded simulator answers as. The default has every API
    /// the examples use, the retired API keys included (gone from 7.98.0) and the Access user
    /// API (from 7.84.3); e.g. 7.117.5 shows an APIKey refused, naming ScopedToken.
    #[arg(long, value_name = "VERSION", default_value = "7.90.1")]
    pub artifactory_version: String,
    /// Let the embedded simulator answer as JFrog Cloud (SaaS) does: the system configuration
    /// descriptor and licence calls are refused with Cloud's answers, so the Kinds that need
    /// a self-hosted platform show what they do there.
    #[arg(long)]
    pub jfrog_saas: bool,
    /// The providers' --poll (how often an up-to-date managed resource is checked for drift).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = duration)]
    pub poll: Duration,
    /// Exit once every applied managed resource is Ready and Synced (status 0), or when
    /// --timeout passes or a manifest could not be applied (status 1).
    #[arg(long)]
    pub once: bool,
    /// With --once: how long to wait for everything to become Ready and Synced.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration)]
    pub timeout: Duration,
    /// Manifests to apply: YAML files or directories (recursively; multi-document files).
    /// Repeatable. Default: the repository's examples/ but examples/install/.
    #[arg(long = "apply", value_name = "PATH")]
    pub apply: Vec<PathBuf>,
    /// Apply nothing (only set up the sandbox).
    #[arg(long, conflicts_with = "apply")]
    pub no_apply: bool,
    /// Directory of the CRDs to install. Default: the repository's crds/.
    #[arg(long, value_name = "DIR")]
    pub crds: Option<PathBuf>,
    /// Activate only the managed-resource CRDs matching PATTERN (repeatable): a CRD name
    /// (`<plural>.<group>`) or an API group, `*` as a wildcard, as a Crossplane v2
    /// ManagedResourceActivationPolicy does. The providers' configuration CRDs are always
    /// installed; `sandbox activate` activates more later. Default: everything.
    #[arg(long = "activate", value_name = "PATTERN")]
    pub activate: Vec<String>,
    /// Which providers to start (comma-separated). Default: all four.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub providers: Vec<Provider>,
    /// Run each provider as active-active replicas that split the managed resources into
    /// this many shards (`--shards`, docs/managed-reconciler.md §15.8) instead of under leader
    /// election; more replicas can then be started beside it (`sandbox provider <name>
    /// --shards N`). 1: leader election, as Crossplane runs a provider.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub shards: u32,
    /// Start this many replicas of each provider, as a Deployment with that many replicas runs
    /// them: active-active with --shards, else one leader and standbys
    /// (`HOSTNAME=provider-<name>-<i>`, logs and pid files
    /// `DIR/providers/provider-<name>[-<i>].{log,pid}`, replica 0 without the suffix).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub replicas: u32,
    /// An extra flag passed to every provider (repeatable), e.g. --provider-arg=--debug.
    #[arg(long = "provider-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub provider_args: Vec<String>,
    /// Install a provider's package as if from this OCI reference (repeatable,
    /// `PROVIDER=REFERENCE`; default: `spec.package` of examples/install/provider-<name>.yaml).
    /// The providers get the RBAC Crossplane v2 renders for the packages: a package from
    /// another registry or organisation is no member of the family, so its references to the
    /// other providers' Kinds are forbidden.
    #[arg(long = "package", value_name = "PROVIDER=REFERENCE", value_parser = package_override)]
    pub packages: Vec<(Provider, String)>,
    /// Run the provider binaries DIR/provider-<name> (built with `cargo build --release -p
    /// provider-<name>`) instead of this executable's built-in copies (`sandbox provider
    /// <name>`, the same code). The built-in copies are the default because they are always
    /// as new as the sandbox; a separate binary is what a cluster runs, and smaller.
    #[arg(long, value_name = "DIR")]
    pub provider_bin: Option<PathBuf>,
    /// Use this cluster instead of the embedded Kubernetes API test server.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Use this JFrog platform instead of the embedded simulator (with --jfrog-token-file).
    #[arg(long, value_name = "URL", requires = "jfrog_token_file")]
    pub jfrog_url: Option<String>,
    /// File holding the access token for --jfrog-url.
    #[arg(long, value_name = "FILE", requires = "jfrog_url")]
    pub jfrog_token_file: Option<PathBuf>,
    /// Run the providers with `credentials.source: InjectedIdentity` and no token Secret: the
    /// simulator exchanges their service-account tokens (TokenRequest of the cluster) under an
    /// OIDC integration `sandbox-cluster` whose issuer is the cluster's (embedded simulator
    /// only; with --kubeconfig the cluster's discovery is made readable to anonymous callers,
    /// and must be reachable from this machine).
    #[arg(long, conflicts_with = "jfrog_url")]
    pub injected_identity: bool,
    /// With --injected-identity: the longest lifetime of the exchanged JFrog tokens (default:
    /// the identity mapping's, JFrog's 60 s).
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "injected_identity")]
    pub oidc_token_lifetime: Option<Duration>,
    /// The longest back-off before a provider that exited is started again (it doubles from
    /// 1 s per consecutive crash). A fault test that kills a provider dozens of times lowers
    /// it so that the run measures the recovery, not the back-off.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub restart_backoff_max: Duration,
    /// Set by `sandbox bench`: the latency is spent by reads and inside the simulator's
    /// descriptor window of repository writes (see `bench`), instead of in front of every
    /// request.
    #[arg(skip)]
    pub latency_in_descriptor: bool,
}

/// Everything started, to be stopped at the end whatever happened.
#[derive(Default)]
pub(crate) struct Running {
    server: Option<kube_testserver::TestServer>,
    pub(crate) sim: Option<jfrog_sim::Simulator>,
    /// Keeps the simulator's own runtime thread alive (dropped after `sim`).
    sim_runtime: Option<tokio::sync::oneshot::Sender<()>>,
    pub(crate) children: Vec<ProviderChild>,
    temp_dir: Option<PathBuf>,
    ready_file: Option<PathBuf>,
}

impl Running {
    /// Observes the embedded Kubernetes API test server's objects in this process, when this
    /// sandbox runs one.
    pub(crate) fn observer(&self) -> Option<kube_testserver::Observer> {
        self.server
            .as_ref()
            .map(kube_testserver::TestServer::observer)
    }

    /// The Kubernetes API test server's request counts (`{verb: {user: n}}`), when this
    /// sandbox runs one.
    pub(crate) fn kube_request_counts(&self) -> Option<serde_json::Value> {
        self.server
            .as_ref()
            .map(kube_testserver::TestServer::request_counts)
    }
}

/// Starts the simulator on a runtime thread of its own. It stands for a remote platform: its
/// answers must take the latency asked for, not that plus whatever the Kubernetes API test
/// server's CPU-bound handlers (schema validation, CEL) keep the shared runtime busy with;
/// under a benchmark's load that added 7-10 ms to every 50 ms request.
async fn start_simulator(
    artifactory_version: String,
    saas: bool,
) -> anyhow::Result<(jfrog_sim::Simulator, tokio::sync::oneshot::Sender<()>)> {
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let (keep_tx, keep_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("jfrog-sim".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = started_tx.send(Err(anyhow::anyhow!(e)));
                    return;
                }
            };
            rt.block_on(async move {
                let sim = jfrog_sim::Simulator::start(jfrog_sim::SimConfig {
                    artifactory_version,
                    saas,
                    ..jfrog_sim::SimConfig::default()
                })
                .await
                .map_err(anyhow::Error::from);
                let _ = started_tx.send(sim);
                // Serve until the sandbox lets go.
                let _ = keep_rx.await;
            });
        })
        .context("cannot start the simulator's thread")?;
    let sim = started_rx
        .await
        .context("the simulator's thread ended")?
        .context("starting the JFrog simulator")?;
    Ok((sim, keep_tx))
}

/// Runs `sandbox up`.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let mut running = Running::default();
    let result = {
        let mut rx = stop_rx.clone();
        tokio::select! {
            r = up(&args, &mut running, stop_rx) => r,
            _ = rx.wait_for(|s| *s) => {
                eprintln!("interrupted");
                Ok(())
            }
        }
    };
    shutdown(running).await;
    result
}

pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

pub(crate) async fn shutdown(mut running: Running) {
    if running.server.is_some() || running.sim.is_some() || !running.children.is_empty() {
        eprintln!("shutting down");
    }
    for (p, status) in children::stop_all(&mut running.children, Duration::from_secs(15)).await {
        eprintln!("  {} stopped ({status})", p.name());
    }
    if let Some(f) = running.ready_file.take() {
        let _ = std::fs::remove_file(f);
    }
    if let Some(sim) = running.sim.take() {
        sim.shutdown().await;
    }
    drop(running.sim_runtime.take());
    if let Some(server) = running.server.take() {
        server.shutdown().await;
    }
    if let Some(dir) = running.temp_dir.take() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Writes a file readable by its owner only (it holds a credential).
pub(crate) fn write_private(path: &Path, content: &str) -> anyhow::Result<()> {
    std::fs::write(path, content).with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot restrict {}", path.display()))?;
    }
    Ok(())
}

async fn up(
    args: &Args,
    running: &mut Running,
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    // Fail on a mistyped path before starting anything.
    for p in args
        .apply
        .iter()
        .chain(args.crds.iter())
        .chain(args.jfrog_token_file.iter())
        .chain(args.kubeconfig.iter())
    {
        anyhow::ensure!(p.exists(), "{} does not exist", p.display());
    }
    let client = start(args, running).await?;
    watch(args, running, &client, stop, started).await
}

/// Starts the environment (servers, CRDs, configs, providers) and returns an admin client
/// once every provider leads. What `sandbox bench` will reuse.
pub(crate) async fn start(args: &Args, running: &mut Running) -> anyhow::Result<kube::Client> {
    let providers: Vec<Provider> = if args.providers.is_empty() {
        Provider::ALL.to_vec()
    } else {
        args.providers.clone()
    };

    // Where files go: the state dir, or a temporary dir removed at exit.
    let dir = match &args.state_dir {
        Some(d) => d.clone(),
        None => {
            let d = std::env::temp_dir().join(format!("sandbox-{}", std::process::id()));
            running.temp_dir = Some(d.clone());
            d
        }
    };
    let providers_dir = dir.join("providers");
    std::fs::create_dir_all(&providers_dir)
        .with_context(|| format!("cannot create {}", providers_dir.display()))?;
    if let Some(d) = &args.state_dir {
        let _ = std::fs::remove_file(d.join("ready"));
    }

    // The cluster.
    let client = match &args.kubeconfig {
        Some(path) => {
            let client = client_from_path(path).await?;
            if let Some(d) = &args.state_dir {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                write_private(&d.join("kubeconfig"), &text)?;
            }
            eprintln!("Kubernetes: the cluster of {}", path.display());
            client
        }
        None => {
            let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
                .await
                .context("starting the Kubernetes API test server")?;
            let client = client_from_yaml(&server.kubeconfig(&server.admin_token())).await?;
            if let Some(d) = &args.state_dir {
                server
                    .write_kubeconfig(&d.join("kubeconfig"))
                    .context("writing the kubeconfig")?;
            }
            eprintln!("Kubernetes API test server: {}", server.url());
            running.server = Some(server);
            client
        }
    };

    // The JFrog platform.
    let platform = match (&args.jfrog_url, &args.jfrog_token_file) {
        (Some(url), Some(file)) => {
            let token = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read token file {}", file.display()))?
                .trim()
                .to_string();
            anyhow::ensure!(!token.is_empty(), "token file {} is empty", file.display());
            if let Some(d) = &args.state_dir {
                write_private(
                    &d.join("jfrog.env"),
                    &format!("JFROG_URL={url}\nJFROG_ACCESS_TOKEN={token}\n"),
                )?;
            }
            eprintln!("JFrog platform: {url}");
            Platform {
                url: url.clone(),
                token,
            }
        }
        _ => {
            let (sim, sim_runtime) =
                start_simulator(args.artifactory_version.clone(), args.jfrog_saas).await?;
            running.sim_runtime = Some(sim_runtime);
            if args.jfrog_latency_ms > 0 {
                let latency = Duration::from_millis(args.jfrog_latency_ms);
                if args.latency_in_descriptor {
                    // Repository writes spend it inside the descriptor window (where the
                    // platform serialises them); every other request in front of its handler.
                    sim.set_write_latency(latency);
                    for method in ["GET", "HEAD"] {
                        sim.add_fault(
                            jfrog_sim::Fault::latency("/artifactory", latency, Duration::ZERO)
                                .method(method),
                        );
                    }
                    for prefix in ["/access", "/xray"] {
                        sim.add_fault(jfrog_sim::Fault::latency(prefix, latency, Duration::ZERO));
                    }
                } else {
                    sim.add_fault(jfrog_sim::Fault::latency("/", latency, Duration::ZERO));
                }
            }
            if let Some(d) = &args.state_dir {
                sim.write_env_file(d).context("writing jfrog.env")?;
            }
            eprintln!(
                "JFrog simulator: {} (latency {} ms)",
                sim.url(),
                args.jfrog_latency_ms
            );
            let platform = Platform {
                url: sim.url(),
                token: sim.admin_token(),
            };
            running.sim = Some(sim);
            platform
        }
    };

    // CRDs and configuration.
    let crds_dir = args.crds.clone().unwrap_or_else(|| repo_dir("crds"));
    let crds = setup::read_crds(&crds_dir)?;
    anyhow::ensure!(!crds.is_empty(), "no CRDs found in {}", crds_dir.display());
    // Crossplane grants a provider RBAC on every CRD of its package, active or not, and on
    // those of the installed members of its family (crate::crossplane_rbac).
    let resources = setup::provider_resources(&crds);
    let packages = resources
        .keys()
        .map(|&p| {
            let reference = args.packages.iter().rev().find(|(q, _)| *q == p);
            crate::crossplane_rbac::Package::read(
                &repo_dir("package"),
                &repo_dir("examples").join("install"),
                p,
                reference.map(|(_, r)| r.as_str()),
            )
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (crds, inactive) = crate::activate::split(&args.activate, crds);
    let step = Instant::now();
    setup::install_crds(&client, &crds, Duration::from_secs(120)).await?;
    eprintln!(
        "installed {} CRDs from {} in {:.1}s{}",
        crds.len(),
        crds_dir.display(),
        step.elapsed().as_secs_f64(),
        if inactive.is_empty() {
            String::new()
        } else {
            format!(
                " ({} not activated: `sandbox activate` installs them)",
                inactive.len()
            )
        }
    );
    setup::provider_configs(&client, &platform, &providers).await?;
    if args.injected_identity {
        let issuer = match (&running.server, &args.kubeconfig) {
            (Some(server), _) => crate::identity::Issuer::test_server(server),
            (None, Some(path)) => crate::identity::Issuer::real_cluster(&client, path).await?,
            (None, None) => unreachable!("a cluster is either embedded or given"),
        };
        crate::identity::configure(
            &client,
            &issuer,
            &platform.url,
            &platform.token,
            &providers,
            args.oidc_token_lifetime,
        )
        .await?;
        eprintln!(
            "credentials: InjectedIdentity through the simulator's OIDC integration {} (no token Secret)",
            crate::identity::INTEGRATION
        );
    }

    // The providers.
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    let mut previous_holders = BTreeMap::new();
    for &p in &providers {
        // Each provider runs under the RBAC Crossplane v2 renders for the packages, with a
        // token of its own ServiceAccount.
        let rules = match packages.iter().find(|k| k.provider == p) {
            Some(pkg) => crate::crossplane_rbac::system_rules(
                &crate::crossplane_rbac::granted_resources(pkg, &packages, &resources),
            ),
            None => crate::crossplane_rbac::system_rules(&BTreeMap::new()),
        };
        setup::provider_rbac(&client, p, &rules).await?;
        let text = match (&running.server, &args.kubeconfig) {
            (Some(server), _) => {
                server.kubeconfig(&server.issue_token(&setup::service_account_user(p), &[]))
            }
            (None, Some(admin)) => {
                let text =
                    setup::service_account_kubeconfig(&client, admin, p, PROVIDER_TOKEN_LIFETIME)
                        .await?;
                // A cluster that does not take its own service-account tokens as credentials
                // (`sandbox kube`, the embedded test server, issues them only for relying
                // parties): the providers use the given kubeconfig, as before.
                match setup::authenticates(&text).await {
                    Ok(()) => text,
                    Err(why) => {
                        eprintln!(
                            "{}: the cluster does not accept its ServiceAccount token ({why}); \
                             it runs with the given kubeconfig",
                            p.name()
                        );
                        std::fs::read_to_string(admin)
                            .with_context(|| format!("reading {}", admin.display()))?
                    }
                }
            }
            (None, None) => anyhow::bail!("no cluster"),
        };
        let kubeconfig = providers_dir.join(format!("{}.kubeconfig", p.name()));
        write_private(&kubeconfig, &text)?;
        previous_holders.insert(p, holders(&leases, p, args.shards).await);
        let mut flags = vec![
            if args.shards > 1 {
                format!("--shards={}", args.shards)
            } else {
                "--leader-election".to_string()
            },
            format!("--poll={}", humantime::format_duration(args.poll)),
            "--metrics-bind-address=127.0.0.1:0".to_string(),
            "--health-probe-bind-addr=127.0.0.1:0".to_string(),
        ];
        flags.extend(args.provider_args.iter().cloned());
        for replica in 0..args.replicas.max(1) {
            let file = replica_file(p, replica);
            let child = children::spawn(Launch {
                provider: p,
                kubeconfig: kubeconfig.clone(),
                log: providers_dir.join(format!("{file}.log")),
                flags: flags.clone(),
                binary: args.provider_bin.as_ref().map(|d| d.join(p.name())),
                pid_file: Some(providers_dir.join(format!("{file}.pid"))),
                // A pod's HOSTNAME is its name: the replica's Lease identity and events' host.
                host: Some(format!("{}-{replica}", p.name())),
                max_backoff: args.restart_backoff_max,
            })?;
            eprintln!(
                "started {} (pid {}, log {})",
                p.name(),
                child.pid,
                child.log.display()
            );
            running.children.push(child);
        }
    }
    let step = Instant::now();
    wait_for_leaders(
        &leases,
        &mut running.children,
        &previous_holders,
        args.shards,
        Duration::from_secs(120),
    )
    .await?;
    eprintln!(
        "providers {} after {:.1}s",
        if args.shards > 1 {
            "hold every shard"
        } else {
            "are leaders"
        },
        step.elapsed().as_secs_f64()
    );
    if let Some(d) = &args.state_dir {
        let ready = d.join("ready");
        std::fs::write(&ready, "ready\n").context("writing the ready file")?;
        running.ready_file = Some(ready);
        eprintln!(
            "ready: kubectl --kubeconfig {} get managed",
            d.join("kubeconfig").display()
        );
    }
    Ok(client)
}

/// Applies the manifests and shows them converge, until done (`--once`) or stopped.
async fn watch(
    args: &Args,
    running: &mut Running,
    client: &kube::Client,
    stop: tokio::sync::watch::Receiver<bool>,
    started: Instant,
) -> anyhow::Result<()> {
    let client = client.clone();
    let kinds = progress::managed_kinds(&client).await?;
    let watcher = Watcher::start(&client, &kinds);
    let outcome = if args.no_apply {
        Default::default()
    } else {
        let paths = if args.apply.is_empty() {
            default_examples()?
        } else {
            args.apply.clone()
        };
        let manifests = read_manifests(&paths)?;
        eprintln!(
            "applying {} manifests from {}",
            manifests.len(),
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        crate::apply::apply_all(
            &client,
            manifests,
            &progress::managed_set(&kinds),
            &inactive_kinds(args)?,
        )
        .await?
    };
    for f in &outcome.failed {
        eprintln!("  not applied: {} ({}): {}", f.what, f.origin, f.message);
    }
    if !outcome.inactive.is_empty() {
        eprintln!(
            "  {} manifests skipped: their Kinds are not activated (e.g. {})",
            outcome.inactive.len(),
            outcome.inactive[0].what
        );
    }
    watcher.wait_ready(Duration::from_secs(30)).await;

    let tty = std::io::stderr().is_terminal();
    let mut renderer = Renderer::new(tty);
    let mut summarised = false;
    let apply_started = Instant::now();
    let tick = if tty {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(1)
    };
    loop {
        if *stop.borrow() {
            return Ok(());
        }
        supervise(&mut running.children, &mut renderer);
        let snap = watcher.snapshot(&outcome.applied);
        renderer.draw(&snap);
        let done = snap.all_done();
        let timed_out = args.once && apply_started.elapsed() >= args.timeout;
        if (done || timed_out) && !summarised {
            renderer.finish();
            println!(
                "{}",
                progress::summary(&snap, &outcome.failed, started.elapsed())
            );
            for c in running
                .children
                .iter()
                .filter(|c| c.supervision.restarts > 0)
            {
                println!(
                    "  {} restarted {} time(s); last exit: {}",
                    c.provider.name(),
                    c.supervision.restarts,
                    c.supervision.last_exit.as_deref().unwrap_or("-")
                );
            }
            summarised = true;
            if args.once {
                if !done {
                    anyhow::bail!(
                        "{} of {} applied managed resources not Ready and Synced after {}",
                        snap.tracked_total - snap.tracked_done,
                        snap.tracked_total,
                        humantime::format_duration(args.timeout)
                    );
                }
                if !outcome.failed.is_empty() {
                    anyhow::bail!("{} manifests could not be applied", outcome.failed.len());
                }
                return Ok(());
            }
            renderer.lines_only(&snap);
            eprintln!("sandbox running; changes are shown below; press Ctrl-C to stop");
        }
        tokio::time::sleep(tick).await;
    }
}

/// The default `--apply`: every directory of the repository's examples/ but `install/` (the
/// Crossplane installation objects, for a real cluster).
fn default_examples() -> anyhow::Result<Vec<PathBuf>> {
    let root = repo_dir("examples");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .with_context(|| format!("cannot read {}", root.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "install"))
        .collect();
    out.sort();
    Ok(out)
}

/// The (group, Kind) of the CRDs `--activate` left out.
fn inactive_kinds(args: &Args) -> anyhow::Result<std::collections::HashSet<(String, String)>> {
    if args.activate.is_empty() {
        return Ok(Default::default());
    }
    let dir = args.crds.clone().unwrap_or_else(|| repo_dir("crds"));
    let (_, inactive) = crate::activate::split(&args.activate, setup::read_crds(&dir)?);
    Ok(inactive
        .into_iter()
        .map(|c| (c.crd.spec.group, c.crd.spec.names.kind))
        .collect())
}

/// Restarts the providers that exited on their own (see [`children::Supervision`]), and
/// says so above the live view, as `kubectl get pods` would show RESTARTS and the last state.
fn supervise(children: &mut [ProviderChild], renderer: &mut Renderer) {
    for c in children.iter_mut() {
        let line = match c.supervise() {
            Ok(children::Supervised::Unchanged) => continue,
            Ok(children::Supervised::Exited { status, backoff }) => format!(
                "{} exited unexpectedly ({status}); restarting in {}; last lines of {}:\n{}",
                c.provider.name(),
                humantime::format_duration(backoff),
                c.log.display(),
                children::log_tail(&c.log, 5)
            ),
            Ok(children::Supervised::Restarted { pid }) => format!(
                "{} restarted (pid {pid}, restart {})",
                c.provider.name(),
                c.supervision.restarts
            ),
            Err(e) => format!("{} cannot be restarted: {e:#}", c.provider.name()),
        };
        renderer.message(&line);
    }
}

/// The holder of Lease `name`, if it has one.
async fn holder_of(leases: &Api<Lease>, name: &str) -> Option<String> {
    leases
        .get_opt(name)
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}

/// The holder of a provider's leader-election Lease.
pub(crate) async fn lease_holder(leases: &Api<Lease>, p: Provider) -> Option<String> {
    holder_of(leases, &provider_runtime::process::lease_name(&p.name())).await
}

/// The file name (without extension) of a provider replica's log and pid file:
/// `provider-<name>` for the first, `provider-<name>-<i>` for the others.
pub(crate) fn replica_file(p: Provider, replica: u32) -> String {
    if replica == 0 {
        p.name()
    } else {
        format!("{}-{replica}", p.name())
    }
}

/// Who holds a provider's Leases: the leader-election Lease, or with `shards` > 1 every shard
/// Lease (`None` until each has a holder).
pub(crate) async fn holders(leases: &Api<Lease>, p: Provider, shards: u32) -> Option<String> {
    if shards <= 1 {
        return lease_holder(leases, p).await;
    }
    let mut all = Vec::new();
    for i in 0..shards {
        let name = provider_runtime::process::shards::shard_lease_name(&p.name(), i);
        all.push(holder_of(leases, &name).await?);
    }
    Some(all.join(","))
}

/// Waits until each provider holds its leader-election Lease, or with `shards` > 1 until every
/// shard Lease is held (holders other than those before it started, so a stale Lease of an
/// earlier run does not count).
async fn wait_for_leaders(
    leases: &Api<Lease>,
    children: &mut [ProviderChild],
    previous: &BTreeMap<Provider, Option<String>>,
    shards: u32,
    timeout: Duration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    let mut pending: Vec<Provider> = children.iter().map(|c| c.provider).collect();
    while !pending.is_empty() {
        children::bail_if_exited(children, "during start-up")?;
        let mut still = Vec::new();
        for p in pending {
            let holder = holders(leases, p, shards).await;
            if holder.is_none() || holder == previous.get(&p).cloned().flatten() {
                still.push(p);
            } else if let Some(c) = children.iter_mut().find(|c| c.provider == p) {
                c.leader_at = Some(Instant::now());
            }
        }
        pending = still;
        if pending.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            let names: Vec<String> = pending.iter().map(|p| p.name()).collect();
            anyhow::bail!(
                "{} did not become leader within {}",
                names.join(", "),
                humantime::format_duration(timeout)
            );
        }
        // Short: `sandbox bench` reports the time to leadership from this.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}
