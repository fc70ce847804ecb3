//! The `sandbox jfrog` subcommand: runs a simulator until interrupted and writes
//! `--state-dir DIR/jfrog.env` (`JFROG_URL`, `JFROG_ACCESS_TOKEN`) for other processes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use crate::{SimConfig, Simulator};

/// Flags of `sandbox jfrog`.
#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Directory to write `jfrog.env` into.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Seed of the fault generators.
    #[arg(long, default_value_t = 0x5EED)]
    pub seed: u64,
    /// Time each configuration write takes (e.g. `50ms`).
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub write_latency: Duration,
    /// Do not fail overlapping configuration writes with "Could not merge and save new descriptor".
    #[arg(long)]
    pub no_descriptor_merge_emulation: bool,
    /// Admin token to accept instead of a generated one (kept across restarts).
    #[arg(long, env = "JFROG_SIM_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
}

impl std::fmt::Debug for Args {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Args")
            .field("listen", &self.listen)
            .field("state_dir", &self.state_dir)
            .field("seed", &self.seed)
            .field("write_latency", &self.write_latency)
            .field(
                "no_descriptor_merge_emulation",
                &self.no_descriptor_merge_emulation,
            )
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Runs the server until interrupted (Ctrl-C / SIGTERM).
pub async fn run(args: Args) -> anyhow::Result<()> {
    let cfg = SimConfig {
        listen: args.listen,
        seed: args.seed,
        descriptor_merge_emulation: !args.no_descriptor_merge_emulation,
        write_latency: args.write_latency,
        admin_token: args.admin_token,
        ..SimConfig::default()
    };
    let sim = Simulator::start(cfg)
        .await
        .context("starting the JFrog simulator")?;
    if let Some(dir) = &args.state_dir {
        sim.write_env_file(dir)
            .with_context(|| format!("writing {}/jfrog.env", dir.display()))?;
        tracing::info!(path = %dir.join("jfrog.env").display(), "wrote JFrog environment file");
    }
    println!("JFrog simulator listening on {}", sim.url());
    wait_for_signal().await;
    tracing::info!("shutting down the JFrog simulator");
    sim.shutdown().await;
    Ok(())
}

async fn wait_for_signal() {
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
