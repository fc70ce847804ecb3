//! Seeded, reproducible fault injection by method and path prefix.
//!
//! A [`Fault`] applies to every request whose method matches (`None` = any) and whose path
//! starts with `path_prefix`. Each matching request is delayed by `latency` plus a uniform
//! random share of `jitter`, and then the fault *fires* with probability `error_rate`:
//! - without `drop_after_commit`, the request is answered with `status` and the service's
//!   error body (plus `Retry-After` when `retry_after` is set, in whole seconds rounded up);
//! - with `drop_after_commit`, the request is processed normally and, when it succeeded
//!   (2xx), the connection is closed without sending the response: the write is committed but
//!   the client never learns it.
//!
//! `times` limits how many matching requests the fault affects; after that it is removed.
//! Each fault draws from its own random generator seeded from the simulator's seed and the
//! fault's id, so a given sequence of requests always sees the same faults.

use std::sync::Mutex;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Identifies an added fault (for removal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FaultId(pub u64);

/// A fault to inject. Build one with the constructors and adjust with the builder methods, or
/// set the fields directly.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// HTTP method to match (case-insensitive); `None` matches any.
    pub method: Option<String>,
    /// Path prefix to match, e.g. `/artifactory/api/repositories`.
    pub path_prefix: String,
    /// Added latency for every matching request.
    pub latency: Duration,
    /// Up to this much extra latency, uniformly distributed.
    pub jitter: Duration,
    /// Probability (0.0 to 1.0) that the fault fires on a matching request.
    pub error_rate: f64,
    /// Status answered when the fault fires (ignored with `drop_after_commit`).
    pub status: u16,
    /// `Retry-After` sent with the error answer.
    pub retry_after: Option<Duration>,
    /// When firing, process the request and then drop the connection instead of answering.
    pub drop_after_commit: bool,
    /// Affect at most this many matching requests, then remove the fault.
    pub times: Option<u64>,
}

impl Default for Fault {
    fn default() -> Fault {
        Fault {
            method: None,
            path_prefix: "/".to_owned(),
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            error_rate: 0.0,
            status: 500,
            retry_after: None,
            drop_after_commit: false,
            times: None,
        }
    }
}

impl Fault {
    /// Latency (with jitter) on every request under `path_prefix`.
    pub fn latency(path_prefix: &str, latency: Duration, jitter: Duration) -> Fault {
        Fault {
            path_prefix: path_prefix.to_owned(),
            latency,
            jitter,
            ..Fault::default()
        }
    }

    /// Answer `status` with probability `error_rate` on requests under `path_prefix`.
    pub fn error(path_prefix: &str, status: u16, error_rate: f64) -> Fault {
        Fault {
            path_prefix: path_prefix.to_owned(),
            status,
            error_rate,
            ..Fault::default()
        }
    }

    /// Answer 429 with `Retry-After` with probability `error_rate`.
    pub fn rate_limit(path_prefix: &str, retry_after: Duration, error_rate: f64) -> Fault {
        Fault {
            retry_after: Some(retry_after),
            ..Fault::error(path_prefix, 429, error_rate)
        }
    }

    /// Process `method` requests under `path_prefix`, then drop the connection (always).
    pub fn drop_after_commit(method: &str, path_prefix: &str) -> Fault {
        Fault {
            method: Some(method.to_owned()),
            path_prefix: path_prefix.to_owned(),
            error_rate: 1.0,
            drop_after_commit: true,
            ..Fault::default()
        }
    }

    /// Restricts the fault to one HTTP method.
    pub fn method(mut self, method: &str) -> Fault {
        self.method = Some(method.to_owned());
        self
    }

    /// Limits the fault to `n` matching requests.
    pub fn times(mut self, n: u64) -> Fault {
        self.times = Some(n);
        self
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && path.starts_with(&self.path_prefix)
    }
}

/// The JSON form of a fault in the admin API (durations in milliseconds, camelCase).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FaultSpec {
    pub method: Option<String>,
    pub path_prefix: Option<String>,
    pub latency_ms: u64,
    pub jitter_ms: u64,
    pub error_rate: f64,
    pub status: Option<u16>,
    pub retry_after_ms: Option<u64>,
    pub drop_after_commit: bool,
    pub times: Option<u64>,
}

impl From<FaultSpec> for Fault {
    fn from(s: FaultSpec) -> Fault {
        Fault {
            method: s.method,
            path_prefix: s.path_prefix.unwrap_or_else(|| "/".to_owned()),
            latency: Duration::from_millis(s.latency_ms),
            jitter: Duration::from_millis(s.jitter_ms),
            error_rate: s.error_rate,
            status: s.status.unwrap_or(500),
            retry_after: s.retry_after_ms.map(Duration::from_millis),
            drop_after_commit: s.drop_after_commit,
            times: s.times,
        }
    }
}

impl From<&Fault> for FaultSpec {
    fn from(f: &Fault) -> FaultSpec {
        FaultSpec {
            method: f.method.clone(),
            path_prefix: Some(f.path_prefix.clone()),
            latency_ms: u64::try_from(f.latency.as_millis()).unwrap_or(u64::MAX),
            jitter_ms: u64::try_from(f.jitter.as_millis()).unwrap_or(u64::MAX),
            error_rate: f.error_rate,
            status: Some(f.status),
            retry_after_ms: f
                .retry_after
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            drop_after_commit: f.drop_after_commit,
            times: f.times,
        }
    }
}

struct Active {
    id: FaultId,
    fault: Fault,
    rng: StdRng,
    remaining: Option<u64>,
    added: std::time::Instant,
    counts: FaultCounts,
}

/// How many match times a fault keeps (the first ones).
const MATCH_TIMES_KEPT: usize = 10_000;

/// How many requests a fault matched and how many times it fired (answered an error or lost
/// an answer): what a fault suite reports as "faults injected".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultCounts {
    pub matched: u64,
    pub fired: u64,
    /// When the fault matched each request, in milliseconds after it was added (the first
    /// 10,000): what a test needs to see how a client spaced its retries, exactly rather than
    /// by sampling the counts.
    pub matched_at_ms: Vec<u64>,
}

/// What to do with a request.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Decision {
    pub delay: Duration,
    pub action: Option<Action>,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Action {
    Error {
        status: u16,
        retry_after: Option<Duration>,
    },
    DropAfterCommit,
}

pub(crate) struct Faults {
    seed: u64,
    inner: Mutex<(u64, Vec<Active>)>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults")
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Faults {
    pub(crate) fn new(seed: u64) -> Faults {
        Faults {
            seed,
            inner: Mutex::new((0, Vec::new())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, Vec<Active>)> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn add(&self, fault: Fault) -> FaultId {
        let mut g = self.lock();
        g.0 += 1;
        let id = FaultId(g.0);
        // Mix the id into the seed so faults added in the same order draw the same numbers.
        let rng = StdRng::seed_from_u64(self.seed ^ id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let remaining = fault.times;
        g.1.push(Active {
            id,
            fault,
            rng,
            remaining,
            added: std::time::Instant::now(),
            counts: FaultCounts::default(),
        });
        id
    }

    pub(crate) fn remove(&self, id: FaultId) -> bool {
        let mut g = self.lock();
        let before = g.1.len();
        g.1.retain(|a| a.id != id);
        g.1.len() != before
    }

    pub(crate) fn clear(&self) {
        self.lock().1.clear();
    }

    /// The active faults with their counts (a fault limited by `times` is gone once used up).
    pub(crate) fn list(&self) -> Vec<(FaultId, Fault, FaultCounts)> {
        self.lock()
            .1
            .iter()
            .map(|a| (a.id, a.fault.clone(), a.counts.clone()))
            .collect()
    }

    /// Decides the fate of one request (all matching faults add their latency; the first one
    /// that fires decides the action).
    pub(crate) fn decide(&self, method: &str, path: &str) -> Decision {
        let mut g = self.lock();
        if g.1.is_empty() {
            return Decision::default();
        }
        let mut decision = Decision::default();
        for a in g.1.iter_mut() {
            if !a.fault.matches(method, path) || a.remaining == Some(0) {
                continue;
            }
            if let Some(r) = a.remaining.as_mut() {
                *r -= 1;
            }
            a.counts.matched += 1;
            if a.counts.matched_at_ms.len() < MATCH_TIMES_KEPT {
                let ms = u64::try_from(a.added.elapsed().as_millis()).unwrap_or(u64::MAX);
                a.counts.matched_at_ms.push(ms);
            }
            decision.delay += a.fault.latency;
            if !a.fault.jitter.is_zero() {
                decision.delay += a.fault.jitter.mul_f64(a.rng.random::<f64>());
            }
            if a.fault.error_rate > 0.0
                && a.rng.random::<f64>() < a.fault.error_rate
                && decision.action.is_none()
            {
                a.counts.fired += 1;
                decision.action = Some(if a.fault.drop_after_commit {
                    Action::DropAfterCommit
                } else {
                    Action::Error {
                        status: a.fault.status,
                        retry_after: a.fault.retry_after,
                    }
                });
            }
        }
        g.1.retain(|a| a.remaining != Some(0));
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_decisions() {
        let run = |seed| {
            let f = Faults::new(seed);
            f.add(Fault::error("/a", 503, 0.5));
            f.add(Fault::latency(
                "/a",
                Duration::ZERO,
                Duration::from_millis(100),
            ));
            (0..50).map(|_| f.decide("GET", "/a/b")).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let fired = run(7).iter().filter(|d| d.action.is_some()).count();
        assert!(
            fired > 5 && fired < 45,
            "error rate 0.5 fired {fired} of 50"
        );
    }

    #[test]
    fn times_and_method_limit_a_fault() {
        let f = Faults::new(1);
        f.add(Fault::error("/x", 500, 1.0).method("put").times(2));
        assert_eq!(f.decide("GET", "/x"), Decision::default());
        assert!(f.decide("PUT", "/x/1").action.is_some());
        let counts = f.list()[0].2.clone();
        assert_eq!(
            (counts.matched, counts.fired),
            (1, 1),
            "the GET did not match"
        );
        assert_eq!(counts.matched_at_ms.len(), 1, "one match time per match");
        assert!(f.decide("PUT", "/x/2").action.is_some());
        assert_eq!(f.decide("PUT", "/x/3"), Decision::default());
        assert!(f.list().is_empty());
    }
}
