//! The `sandbox jfrog` subcommand.

use std::path::PathBuf;

/// Flags of `sandbox jfrog`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Directory to write `jfrog.env` into.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
}

/// Runs the server until interrupted.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let _ = args;
    anyhow::bail!("sandbox jfrog: not built yet")
}
