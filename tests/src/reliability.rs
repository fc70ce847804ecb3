//! The fault suite's figures (README "Reliability"): every scenario of the fault suite records
//! one [`Row`] of what it measured, and `cargo xtask reliability` turns the rows into the
//! README's table.
//!
//! A scenario calls [`record`] once, at its end, with the figures it measured (never figures
//! it assumed): the row is printed on stderr (`RELIABILITY {...}`) and, when
//! `RELIABILITY_OUT` names a directory, written there as `<id>.json`, which is what the xtask
//! command collects. Scenario tests are named `reliability_*` so that one test filter runs
//! them all; the long ones are `#[ignore]`d and run with `--include-ignored`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One scenario's measured figures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Stable key and sort order of the row, e.g. `crash-500`; also the file name.
    pub id: String,
    /// What was done, in a few words ("provider SIGKILLed during creation").
    pub scenario: String,
    /// The size of the run ("500 repositories", "10,000 MRs for 30 min").
    pub size: String,
    /// Faults injected (kills, failed requests, restarts, invalid manifests...).
    pub faults: u64,
    /// Seconds from the first fault (or the apply) until every managed resource converged.
    pub converge_secs: f64,
    /// JFrog objects expected at the end.
    pub expected_objects: u64,
    /// JFrog objects found at the end (simulator state).
    pub jfrog_objects: u64,
    /// Objects found more than once (or under a second identity).
    pub duplicates: u64,
    /// Expected objects not found.
    pub missing: u64,
    /// JFrog write requests sent (simulator counts).
    pub writes: u64,
    /// Secret values found in logs, events, conditions or other outputs.
    pub secrets_found: u64,
    /// Whether every expectation of the scenario held.
    pub pass: bool,
    /// What was seen, one sentence (what converged, what was refused and how).
    pub result: String,
}

/// Where rows are written: `$RELIABILITY_OUT`, if set.
pub fn out_dir() -> Option<PathBuf> {
    std::env::var_os("RELIABILITY_OUT").map(PathBuf::from)
}

/// Records a scenario's row: printed on stderr, and written to `$RELIABILITY_OUT/<id>.json`
/// when that is set.
pub fn record(row: &Row) {
    let json = serde_json::to_string(row).expect("a row serialises");
    eprintln!("RELIABILITY {json}");
    if let Some(dir) = out_dir() {
        std::fs::create_dir_all(&dir).expect("creating RELIABILITY_OUT");
        std::fs::write(dir.join(format!("{}.json", row.id)), json + "\n")
            .expect("writing the reliability row");
    }
}

/// The simulator's token the providers use (their credentials Secret holds it), from
/// `DIR/jfrog.env`.
pub fn jfrog_token(sb: &crate::Sandbox) -> String {
    let env = std::fs::read_to_string(sb.dir.join("jfrog.env")).expect("read jfrog.env");
    testkit::env_value(&env, "JFROG_ACCESS_TOKEN")
}

/// Occurrences of any of `secrets` in what the sandbox put out ([`crate::Sandbox::outputs`]:
/// every log under its state directory, the Events) and in the objects of `resources`
/// (`kubectl get RESOURCE -A -o json`: the managed resources, their conditions and status).
pub async fn secrets_in_outputs(
    sb: &crate::Sandbox,
    secrets: &[String],
    resources: &[&str],
) -> u64 {
    let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let mut found = sb.secrets_in_outputs(&[], &refs).await;
    for r in resources {
        let text = sb.kubectl_ok(&["get", r, "-A", "-o", "json"]);
        found += refs
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| text.matches(s).count() as u64)
            .sum::<u64>();
    }
    found
}
