//! The `sandbox kube` subcommand.

use std::path::PathBuf;

/// Flags of `sandbox kube`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Directory to write `kubeconfig` into.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
}

/// Runs the server until interrupted.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let _ = args;
    anyhow::bail!("sandbox kube: not built yet")
}
