//! The `sandbox kube` subcommand: serves the Kubernetes API test server alone until interrupted.

use crate::{Config, TestServer};
use std::path::PathBuf;

/// Flags of `sandbox kube`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Directory to write `kubeconfig` (with the admin token) into.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Watch events kept per resource.
    #[arg(long, default_value_t = 1000)]
    pub watch_history: usize,
}

/// Runs the server until interrupted.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let config = Config {
        listen: args.listen,
        watch_history: args.watch_history,
        ..Config::default()
    };
    let server = TestServer::start(config).await?;
    println!("Kubernetes API test server listening on {}", server.url());
    if let Some(dir) = &args.state_dir {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("kubeconfig");
        server.write_kubeconfig(&path)?;
        println!(
            "kubeconfig written to {} (export KUBECONFIG={})",
            path.display(),
            path.display()
        );
    } else {
        println!("no --state-dir given: no kubeconfig written, and the admin token is not shown");
    }
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
