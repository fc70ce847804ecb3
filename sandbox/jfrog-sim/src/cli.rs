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
    /// Answer as JFrog Cloud (SaaS) does: the system configuration descriptor and licence
    /// calls are refused with Cloud's answers.
    #[arg(long)]
    pub saas: bool,
}

impl std::fmt::Debug for Args {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Args")
            .field("listen", &self.listen)
            .field("state_dir", &self.state_dir)
            .field("seed", &self.seed)
            .field("write_latency", &self.write_latency)
            .field("saas", &self.saas)
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
    run_until(args, wait_for_signal()).await
}

/// Runs the server until `stop` completes.
async fn run_until(args: Args, stop: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    let cfg = SimConfig {
        listen: args.listen,
        seed: args.seed,
        descriptor_merge_emulation: !args.no_descriptor_merge_emulation,
        write_latency: args.write_latency,
        admin_token: args.admin_token,
        saas: args.saas,
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
    stop.await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serves_and_writes_the_env_file_until_stopped() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = std::env::temp_dir().join(format!("jfrog-sim-cli-{}", uuid::Uuid::new_v4()));
        let args = Args {
            listen: "127.0.0.1:0".parse().unwrap(),
            state_dir: Some(dir.clone()),
            seed: 1,
            write_latency: Duration::ZERO,
            no_descriptor_merge_emulation: false,
            admin_token: Some("cli-test-token".into()),
            saas: false,
        };
        assert!(!format!("{args:?}").contains("cli-test-token"));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(run_until(args, async move {
            let _ = rx.await;
        }));
        let env_file = dir.join("jfrog.env");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !env_file.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "env file never written"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let env = std::fs::read_to_string(&env_file).unwrap();
        let url = env
            .lines()
            .find_map(|l| l.strip_prefix("JFROG_URL="))
            .unwrap()
            .to_owned();
        assert!(env.contains("JFROG_ACCESS_TOKEN=cli-test-token\n"));
        let r = reqwest::Client::new()
            .get(format!("{url}/artifactory/api/system/version"))
            .bearer_auth("cli-test-token")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), reqwest::StatusCode::OK);
        tx.send(()).unwrap();
        server.await.unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
