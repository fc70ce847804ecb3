//! `sandbox`: the embedded local environment (Kubernetes API test server, JFrog simulator, and
//! the providers running against them).
//!
//! Subcommands:
//! - `sandbox up`: everything at once (see [`up`]);
//! - `sandbox bench`: `up`'s start-up, N repositories, and the figures (see [`bench`]);
//! - `sandbox export`: the providers' `export` against a sandbox's simulator (see [`export`]);
//! - `sandbox preview`: the providers' `preview` (what applying manifests would do to JFrog,
//!   with no write) against a sandbox's simulator and cluster (see [`preview`]);
//! - `sandbox activate --state-dir DIR PATTERN...`: activate more managed-resource CRDs in a
//!   running `sandbox up` (see [`activate`]);
//! - `sandbox real-cluster up|down|build`: a real kube-apiserver, etcd and
//!   kube-controller-manager on loopback (see [`real_cluster`]);
//! - `sandbox kube`, `sandbox jfrog`: one server alone;
//! - `sandbox provider-kill <name> --state-dir DIR`: kill a provider of a running `sandbox up`
//!   (which starts it again, see [`children`]);
//! - `sandbox provider <name> [flags]`: one provider process (what `sandbox up` starts in its
//!   child processes: the binary links the four provider crates, so the README's
//!   `cargo run -p sandbox -- up` builds nothing but this package and its dependencies).

mod activate;
mod apply;
mod bench;
mod chaos;
mod children;
mod crossplane_rbac;
mod export;
mod identity;
mod kubeapi;
mod preview;
mod progress;
mod real_cluster;
mod setup;
mod up;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "sandbox",
    version,
    about = "The embedded JFrog + Kubernetes sandbox for the Crossplane JFrog providers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the Kubernetes API test server, the JFrog simulator and the four providers, install
    /// the CRDs, apply manifests and show them converge.
    Up(Box<up::Args>),
    /// Measure provider-artifactory: create N repositories against the simulator with a given
    /// latency and report times, JFrog requests, memory and CPU.
    Bench(Box<bench::Args>),
    /// Write manifests that adopt the existing objects of the sandbox's simulator
    /// (`--state-dir`) or of a platform (`--url`, `--token-file`), for every provider.
    Export(Box<export::Args>),
    /// Show what applying manifests would do to the sandbox's simulator (`--state-dir`) or a
    /// platform (`--url`, `--token-file`), for every provider, without writing anything.
    /// Exit status: 0 nothing would change, 2 something would, 1 error.
    Preview(Box<preview::Args>),
    /// Kill one provider of a running `sandbox up --state-dir DIR` (SIGKILL by default), as a
    /// crash would; `sandbox up` starts it again after its back-off.
    ProviderKill(ProviderKillArgs),
    /// Activate more managed-resource CRDs in a running `sandbox up --state-dir DIR` (install
    /// those matching the patterns); the providers start their controllers without a restart.
    Activate(activate::Args),
    /// A real control plane on loopback (etcd, kube-apiserver, kube-controller-manager; no
    /// kubelet) built from the pinned Go modules of sandbox/real-lane/components: `up`, `down`.
    RealCluster(real_cluster::Args),
    /// Serve the Kubernetes API test server alone.
    Kube(kube_testserver::cli::Args),
    /// Serve the JFrog platform simulator alone.
    Jfrog(jfrog_sim::cli::Args),
    /// Run one provider process (as `sandbox up` does in its child processes); the remaining
    /// arguments are the provider's flags (`sandbox provider artifactory -- --help`).
    Provider(ProviderArgs),
}

/// The four providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Provider {
    Artifactory,
    Xray,
    Project,
    Platform,
}

impl Provider {
    /// All providers, in start order.
    pub const ALL: [Provider; 4] = [
        Provider::Artifactory,
        Provider::Xray,
        Provider::Project,
        Provider::Platform,
    ];

    /// `artifactory`, ...: the first label of the config groups.
    pub fn short(self) -> &'static str {
        match self {
            Provider::Artifactory => "artifactory",
            Provider::Xray => "xray",
            Provider::Project => "project",
            Provider::Platform => "platform",
        }
    }

    /// `provider-artifactory`, ...
    pub fn name(self) -> String {
        format!("provider-{}", self.short())
    }

    /// The provider whose short name is `short`.
    pub fn from_short(short: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.short() == short)
    }

    /// The provider's Kind registrations (the code this executable runs as the provider).
    pub fn kinds(self) -> Vec<std::sync::Arc<dyn provider_runtime::managed::KindRegistration>> {
        match self {
            Provider::Artifactory => provider_artifactory::kinds(),
            Provider::Xray => provider_xray::kinds(),
            Provider::Project => provider_project::kinds(),
            Provider::Platform => provider_platform::kinds(),
        }
    }
}

#[derive(clap::Args)]
struct ProviderArgs {
    /// Which provider.
    #[arg(value_enum)]
    provider: Provider,
    /// The provider's own flags.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    flags: Vec<String>,
}

#[derive(clap::Args)]
struct ProviderKillArgs {
    /// Which provider.
    #[arg(value_enum)]
    provider: Provider,
    /// The `--state-dir` of the running `sandbox up`.
    #[arg(long, value_name = "DIR")]
    state_dir: std::path::PathBuf,
    /// Send SIGTERM (a graceful stop) instead of SIGKILL.
    #[arg(long)]
    term: bool,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::ProviderKill(args) => {
            let signal = if args.term {
                libc::SIGTERM
            } else {
                libc::SIGKILL
            };
            let pid = children::kill_by_pid_file(&args.state_dir, args.provider, signal)?;
            println!(
                "sent signal {signal} to {} (pid {pid})",
                args.provider.name()
            );
            Ok(())
        }
        Command::Provider(args) => {
            children::watch_parent();
            let argv: Vec<String> = std::iter::once(args.provider.name())
                .chain(args.flags)
                .collect();
            runtime.block_on(async move {
                match args.provider {
                    Provider::Artifactory => provider_artifactory::run_main(argv).await,
                    Provider::Xray => provider_xray::run_main(argv).await,
                    Provider::Project => provider_project::run_main(argv).await,
                    Provider::Platform => provider_platform::run_main(argv).await,
                }
            })
        }
        Command::Preview(args) => {
            init_logging("warn");
            let code = runtime.block_on(preview::run(*args))?;
            std::process::exit(code);
        }
        command => {
            // `up` draws a progress view on stderr: only warnings may interrupt it.
            init_logging(
                if matches!(
                    command,
                    Command::Up(_) | Command::Bench(_) | Command::Export(_)
                ) {
                    "warn"
                } else {
                    "info"
                },
            );
            runtime.block_on(async move {
                match command {
                    Command::Up(args) => up::run(*args).await,
                    Command::Bench(args) => bench::run(*args).await,
                    Command::Export(args) => export::run(*args).await,
                    Command::Activate(args) => activate::run(args).await,
                    Command::RealCluster(args) => real_cluster::run(args).await,
                    Command::Kube(args) => kube_testserver::cli::run(args).await,
                    Command::Jfrog(args) => jfrog_sim::cli::run(args).await,
                    Command::Provider(_) | Command::ProviderKill(_) | Command::Preview(_) => {
                        unreachable!("handled above")
                    }
                }
            })
        }
    }
}

fn init_logging(default: &str) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default)),
        )
        .with_writer(std::io::stderr)
        .init();
}
