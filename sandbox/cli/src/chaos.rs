//! `sandbox bench --fault SPEC --kill-every DURATION`: the fault suite's long runs from the CLI.
//!
//! A `--fault` spec names simulator faults ([`jfrog_sim::Fault`]) on every JFrog request
//! (path prefix `/`; the simulator's own `/__sim/` admin API is never faulted):
//!
//! | spec | faults added |
//! |---|---|
//! | `5xx:RATE` | a share RATE of the requests answered 503 |
//! | `429:RATE[:RETRY_AFTER]` | a share RATE answered 429 with `Retry-After` (default 1s) |
//! | `lost:RATE` | a share RATE of the POST, PUT, PATCH and DELETE requests processed, then the connection closed without the answer (the write is committed, the client never learns it): one fault per method |
//! | `latency:DURATION[:JITTER]` | every request delayed by DURATION plus up to JITTER |
//!
//! RATE is a fraction (`0.2`) or a percentage (`20%`). `--kill-every D` SIGKILLs the provider
//! each time it has led for D, as often as that happens while the faults last; the sandbox's
//! supervision ([`crate::children`]) starts it again after its back-off, as `sandbox up` does,
//! and the next process leads once the dead one's Lease expired.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use jfrog_sim::{Fault, FaultCounts, FaultId, Simulator};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use serde::Serialize;

use crate::children::{ProviderChild, Supervised};
use crate::up;

/// The write methods whose answers `lost:` drops.
const WRITE_METHODS: [&str; 4] = ["POST", "PUT", "PATCH", "DELETE"];

/// One `--fault` spec: its text and the simulator faults it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultArg {
    pub spec: String,
    pub faults: Vec<Fault>,
}

/// Parses a `--fault` spec (clap value parser).
pub fn parse_fault(spec: &str) -> Result<FaultArg, String> {
    let parts: Vec<&str> = spec.split(':').map(str::trim).collect();
    let kind = parts[0].to_ascii_lowercase();
    let args = &parts[1..];
    let arity = |min: usize, max: usize, form: &str| {
        if args.len() < min || args.len() > max {
            Err(format!("invalid fault {spec:?}: expected {form}"))
        } else {
            Ok(())
        }
    };
    let faults = match kind.as_str() {
        "5xx" => {
            arity(1, 1, "5xx:RATE, e.g. 5xx:0.2")?;
            vec![Fault::error("/", 503, rate(spec, args[0])?)]
        }
        "429" => {
            arity(1, 2, "429:RATE[:RETRY_AFTER], e.g. 429:0.3:2s")?;
            let retry_after = match args.get(1) {
                Some(d) => duration(spec, d)?,
                None => Duration::from_secs(1),
            };
            vec![Fault::rate_limit("/", retry_after, rate(spec, args[0])?)]
        }
        "lost" => {
            arity(1, 1, "lost:RATE, e.g. lost:0.1")?;
            let rate = rate(spec, args[0])?;
            WRITE_METHODS
                .iter()
                .map(|m| Fault {
                    error_rate: rate,
                    ..Fault::drop_after_commit(m, "/")
                })
                .collect()
        }
        "latency" => {
            arity(1, 2, "latency:DURATION[:JITTER], e.g. latency:200ms:300ms")?;
            let jitter = match args.get(1) {
                Some(d) => duration(spec, d)?,
                None => Duration::ZERO,
            };
            vec![Fault::latency("/", duration(spec, args[0])?, jitter)]
        }
        _ => {
            return Err(format!(
                "unknown fault {spec:?}: expected 5xx:RATE, 429:RATE[:RETRY_AFTER], lost:RATE \
                 or latency:DURATION[:JITTER]"
            ));
        }
    };
    Ok(FaultArg {
        spec: spec.to_string(),
        faults,
    })
}

/// A rate: a fraction from 0 to 1, or a percentage.
fn rate(spec: &str, s: &str) -> Result<f64, String> {
    let (number, scale) = match s.strip_suffix('%') {
        Some(p) => (p, 100.0),
        None => (s, 1.0),
    };
    let r = number
        .parse::<f64>()
        .ok()
        .map(|v| v / scale)
        .filter(|v| (0.0..=1.0).contains(v))
        .ok_or_else(|| {
            format!("invalid rate {s:?} in fault {spec:?}: expected 0 to 1 (0.2) or 0% to 100%")
        })?;
    Ok(r)
}

fn duration(spec: &str, s: &str) -> Result<Duration, String> {
    crate::up::duration(s).map_err(|e| format!("{e} in fault {spec:?}"))
}

/// What one `--fault` did.
#[derive(Debug, Clone, Serialize)]
pub struct FaultFigures {
    pub spec: String,
    /// JFrog requests its faults matched.
    pub matched: u64,
    /// Requests they failed (error answered, or answer lost).
    pub fired: u64,
}

/// The faults added to the simulator, by spec.
pub struct Injected {
    added: Vec<(String, Vec<FaultId>)>,
}

impl Injected {
    /// Adds every spec's faults to the simulator.
    pub fn add(sim: &Simulator, specs: &[FaultArg]) -> Injected {
        let added = specs
            .iter()
            .map(|a| {
                let ids = a.faults.iter().map(|f| sim.add_fault(f.clone())).collect();
                (a.spec.clone(), ids)
            })
            .collect();
        Injected { added }
    }

    /// Reads each spec's counts, then removes its faults.
    pub fn clear(self, sim: &Simulator) -> Vec<FaultFigures> {
        let active = sim.faults();
        let out = self
            .added
            .iter()
            .map(|(spec, ids)| {
                let (matched, fired) = active
                    .iter()
                    .filter(|(id, _, _)| ids.contains(id))
                    .fold((0, 0), |(m, f), (_, _, c): &(_, _, FaultCounts)| {
                        (m + c.matched, f + c.fired)
                    });
                FaultFigures {
                    spec: spec.clone(),
                    matched,
                    fired,
                }
            })
            .collect();
        for id in self.added.iter().flat_map(|(_, ids)| ids) {
            sim.remove_fault(*id);
        }
        out
    }
}

/// SIGKILLs the provider processes periodically and has the supervision start them again.
pub struct Killer {
    every: Option<Duration>,
    /// When kills may start (the first apply, the first delete): a process is killed once it
    /// has led for D since this.
    since: Instant,
    /// The pids already killed (a process is killed once, then reaped and restarted).
    killed: Vec<u32>,
    /// The leader Lease holders of the killed processes: a restarted process leads once its
    /// Lease names none of them.
    dead_holders: BTreeSet<String>,
    pub kills: u32,
}

impl Killer {
    pub fn new(every: Option<Duration>, since: Instant) -> Killer {
        Killer {
            every,
            since,
            killed: Vec::new(),
            dead_holders: BTreeSet::new(),
            kills: 0,
        }
    }

    /// Starts a new phase of kills: the next comes once a process has led for D after `at`.
    pub fn start_phase(&mut self, at: Instant) {
        self.since = at;
    }

    /// One round: restarts the providers that exited once their back-off passed, notes when a
    /// restarted one leads, and, when `kill` is set, SIGKILLs each that has led for the period
    /// (counted from when it led, so that a period shorter than the Lease still lets each
    /// process work).
    pub async fn tick(
        &mut self,
        children: &mut [ProviderChild],
        leases: &Api<Lease>,
        kill: bool,
    ) -> anyhow::Result<()> {
        for c in children.iter_mut() {
            // The user's view, as `sandbox up` shows it (the CLI prints, it does not log).
            match c.supervise()? {
                Supervised::Unchanged => {}
                Supervised::Exited { status, backoff } => eprintln!(
                    "{} exited ({status}); restarting in {}",
                    c.provider.name(),
                    humantime::format_duration(backoff)
                ),
                Supervised::Restarted { pid } => eprintln!(
                    "{} restarted (pid {pid}, restart {})",
                    c.provider.name(),
                    c.supervision.restarts
                ),
            }
            let up = c.child.id().is_some() && !self.killed.contains(&c.pid);
            if up && c.leader_at.is_none() {
                let holder = up::lease_holder(leases, c.provider).await;
                if holder.is_some_and(|h| !self.dead_holders.contains(&h)) {
                    c.leader_at = Some(Instant::now());
                }
            }
            if let Some(every) = self.every.filter(|_| kill && up)
                && let Some(led) = c.leader_at
                && led.max(self.since).elapsed() >= every
            {
                // It leads, so it holds the Lease (asked twice: a lost answer must not let its
                // successor pass for a leader before the Lease expired).
                let mut holder = up::lease_holder(leases, c.provider).await;
                if holder.is_none() {
                    holder = up::lease_holder(leases, c.provider).await;
                }
                self.dead_holders.extend(holder);
                c.child
                    .start_kill()
                    .map_err(|e| anyhow::anyhow!("cannot kill {}: {e}", c.provider.name()))?;
                self.killed.push(c.pid);
                self.kills += 1;
                eprintln!(
                    "killed {} (pid {}, SIGKILL, kill {})",
                    c.provider.name(),
                    c.pid,
                    self.kills
                );
            }
        }
        Ok(())
    }

    /// Waits until every provider runs again (restarting those due) and leads.
    pub async fn recover(
        &mut self,
        children: &mut [ProviderChild],
        leases: &Api<Lease>,
        deadline: Instant,
    ) -> anyhow::Result<()> {
        loop {
            self.tick(children, leases, false).await?;
            if children
                .iter()
                .all(|c| c.leader_at.is_some() && !self.killed.contains(&c.pid))
            {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "a killed provider did not start again and lead"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The JFrog objects at the end against the expected ones.
#[derive(Debug, PartialEq, Eq)]
pub struct Tally {
    /// Distinct keys found.
    pub found: usize,
    /// Keys listed more than once, plus keys not expected.
    pub duplicates: usize,
    /// Expected keys not found.
    pub missing: usize,
}

/// Tallies the keys JFrog lists (those of the run's prefix) against the expected ones.
pub fn tally<'a>(expected: &BTreeSet<String>, listed: impl Iterator<Item = &'a str>) -> Tally {
    let listed: Vec<&str> = listed.collect();
    let found: BTreeSet<&str> = listed.iter().copied().collect();
    let unexpected = found.iter().filter(|k| !expected.contains(**k)).count();
    Tally {
        found: found.len(),
        duplicates: listed.len() - found.len() + unexpected,
        missing: expected
            .iter()
            .filter(|k| !found.contains(k.as_str()))
            .count(),
    }
}

/// How long the faults (and kills) last from the first apply: `--fault-for`, else until `done`
/// (every object was Ready and Synced, and the kills asked for began).
pub fn phase_over(fault_for: Option<Duration>, started: Instant, done: bool) -> bool {
    match fault_for {
        Some(d) => started.elapsed() >= d,
        None => done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_to_simulator_faults() {
        let f = parse_fault("5xx:0.2").expect("5xx");
        assert_eq!(f.faults, vec![Fault::error("/", 503, 0.2)]);
        assert_eq!(f.spec, "5xx:0.2");
        let f = parse_fault("5xx:20%").expect("percent");
        assert_eq!(f.faults[0].error_rate, 0.2);
        let f = parse_fault("429:0.5:2s").expect("429");
        assert_eq!(
            f.faults,
            vec![Fault::rate_limit("/", Duration::from_secs(2), 0.5)]
        );
        let f = parse_fault("429:1").expect("429 default retry");
        assert_eq!(f.faults[0].retry_after, Some(Duration::from_secs(1)));
        let f = parse_fault("lost:0.1").expect("lost");
        assert_eq!(f.faults.len(), 4);
        assert!(
            f.faults
                .iter()
                .all(|x| x.drop_after_commit && x.error_rate == 0.1 && x.path_prefix == "/")
        );
        let methods: Vec<_> = f.faults.iter().filter_map(|x| x.method.clone()).collect();
        assert_eq!(methods, ["POST", "PUT", "PATCH", "DELETE"]);
        let f = parse_fault("latency:200ms:1s").expect("latency");
        assert_eq!(
            f.faults,
            vec![Fault::latency(
                "/",
                Duration::from_millis(200),
                Duration::from_secs(1)
            )]
        );
        assert_eq!(
            parse_fault("LATENCY:2s").expect("case").faults[0].jitter,
            Duration::ZERO
        );
    }

    #[test]
    fn bad_specs_say_what_is_expected() {
        for (spec, says) in [
            ("", "unknown fault"),
            ("timeout:0.1", "unknown fault"),
            ("5xx", "expected 5xx:RATE"),
            ("5xx:0.2:3", "expected 5xx:RATE"),
            ("5xx:1.5", "expected 0 to 1"),
            ("5xx:-0.1", "expected 0 to 1"),
            ("5xx:150%", "expected 0 to 1"),
            ("lost:much", "invalid rate \"much\""),
            ("429:0.1:soon", "invalid duration \"soon\""),
            ("latency", "expected latency:DURATION"),
            ("latency:fast", "invalid duration"),
        ] {
            let e = parse_fault(spec).expect_err(spec);
            assert!(e.contains(says), "{spec}: {e}");
        }
    }

    #[test]
    fn tally_counts_extra_twice_listed_and_missing_keys() {
        let expected: BTreeSet<String> = ["bench-00000", "bench-00001", "bench-00002"]
            .map(String::from)
            .into();
        assert_eq!(
            tally(&expected, expected.iter().map(String::as_str)),
            Tally {
                found: 3,
                duplicates: 0,
                missing: 0
            }
        );
        assert_eq!(
            tally(
                &expected,
                ["bench-00000", "bench-00000", "bench-00001", "bench-00007"].into_iter()
            ),
            Tally {
                found: 3,
                duplicates: 2,
                missing: 1
            }
        );
    }

    #[test]
    fn the_phase_lasts_for_its_duration_or_until_ready() {
        let long_ago = Instant::now() - Duration::from_secs(10);
        assert!(phase_over(None, long_ago, true));
        assert!(!phase_over(None, long_ago, false));
        assert!(phase_over(Some(Duration::from_secs(5)), long_ago, false));
        assert!(!phase_over(Some(Duration::from_secs(60)), long_ago, true));
    }
}
