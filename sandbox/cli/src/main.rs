//! `sandbox`: the embedded local environment (Kubernetes API test server, JFrog simulator, and
//! the providers running against them).

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "sandbox", about = "The embedded JFrog + Kubernetes sandbox for the Crossplane JFrog providers")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the Kubernetes API test server alone.
    Kube(kube_testserver::cli::Args),
    /// Serve the JFrog platform simulator alone.
    Jfrog(jfrog_sim::cli::Args),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Kube(args) => kube_testserver::cli::run(args).await,
        Command::Jfrog(args) => jfrog_sim::cli::run(args).await,
    }
}
