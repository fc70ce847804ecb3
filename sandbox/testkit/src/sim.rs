//! The JFrog simulator from a test's side.

use jfrog_sim::{SimConfig, Simulator};

/// Starts a simulator with the default configuration (loopback, a free port).
pub async fn start_sim() -> Simulator {
    start_sim_with(SimConfig::default()).await
}

/// Starts a simulator with `cfg` (fault injection, latency, ...).
pub async fn start_sim_with(cfg: SimConfig) -> Simulator {
    Simulator::start(cfg)
        .await
        .expect("start the JFrog simulator")
}
