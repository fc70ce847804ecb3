//! When a failed attempt is tried again, and after how long.
//!
//! The rules (pure functions here, so they are unit-tested without a server):
//!
//! | outcome of an attempt | idempotent call | non-idempotent call (create) |
//! |---|---|---|
//! | body says "Could not merge and save new descriptor" (any error status) | retry | retry: the server did not save the change |
//! | 429 | retry after `Retry-After` (or backoff) | same: the request was refused, not processed |
//! | 500, 502, 503, 504 | retry (503 honours `Retry-After`) | no: the write may have happened |
//! | connection not established (refused, DNS, TLS) | retry | retry: nothing was sent |
//! | sent, no response (reset, timeout, body lost) | retry | no: [`crate::Error::Indeterminate`] |
//! | anything else | no | no |
//!
//! A `Retry-After` longer than [`RetryPolicy::max_retry_after`] is not waited for in-process:
//! the call fails with `RateLimited { retry_after }` and the reconciler requeues instead of
//! holding a worker. Backoff is exponential with full jitter (a uniformly random delay
//! between zero and the exponential bound), which spreads the retries of many concurrent
//! reconciles instead of synchronising them.

use std::time::Duration;

use rand::Rng;

/// The message Artifactory returns when two configuration-descriptor writes overlap.
pub const DESCRIPTOR_MERGE_FAILURE: &str = "Could not merge and save new descriptor";

/// Bounds of the retry loop of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retries).
    pub max_retries: u32,
    /// Bound of the first backoff; doubled for each retry.
    pub base_delay: Duration,
    /// Upper bound of any single backoff.
    pub max_delay: Duration,
    /// The longest `Retry-After` waited for inside a call; longer ones are returned to the
    /// caller as `RateLimited`.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The exponential bound for retry number `retry` (0-based): `base * 2^retry`, capped.
    pub fn backoff_bound(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// A full-jitter backoff for retry number `retry`: uniform in `[0, backoff_bound]`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let bound = self.backoff_bound(retry);
        if bound.is_zero() {
            return bound;
        }
        let nanos = rand::rng().random_range(0..=bound.as_nanos().min(u64::MAX as u128) as u64);
        Duration::from_nanos(nanos)
    }
}

/// What happened on one attempt, reduced to what the retry decision needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// A response with a non-success status.
    Status {
        /// The status code.
        status: u16,
        /// The body carries Artifactory's descriptor-merge failure.
        merge_failure: bool,
        /// The parsed `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// The connection could not be established: the request was certainly not sent.
    NotSent,
    /// The request may have been sent but no complete response arrived.
    Lost,
}

/// Why an attempt is retried (metrics label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryReason {
    /// Descriptor merge failure.
    DescriptorMerge,
    /// 429.
    RateLimited,
    /// 5xx.
    Server,
    /// Transport failure.
    Transport,
}

impl RetryReason {
    /// The metrics label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryReason::DescriptorMerge => "descriptor_merge",
            RetryReason::RateLimited => "rate_limited",
            RetryReason::Server => "server",
            RetryReason::Transport => "transport",
        }
    }
}

/// The decision after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then try again.
    Retry {
        /// The wait.
        delay: Duration,
        /// Why.
        reason: RetryReason,
        /// The wait is the server's `Retry-After` (it then pauses every call to the platform).
        server_requested: bool,
    },
    /// Return the error to the caller.
    GiveUp,
}

/// Decides whether retry number `retry` (0-based: the retry after the first attempt is 0)
/// happens, following the table in the module docs.
pub fn decide(
    policy: &RetryPolicy,
    idempotent: bool,
    retry: u32,
    outcome: AttemptOutcome,
) -> Decision {
    if retry >= policy.max_retries {
        return Decision::GiveUp;
    }
    let backoff = |reason| Decision::Retry {
        delay: policy.backoff(retry),
        reason,
        server_requested: false,
    };
    let after = |retry_after: Option<Duration>, reason| match retry_after {
        Some(d) if d > policy.max_retry_after => Decision::GiveUp,
        Some(d) => Decision::Retry {
            delay: d,
            reason,
            server_requested: true,
        },
        None => backoff(reason),
    };
    match outcome {
        AttemptOutcome::Status {
            merge_failure: true,
            ..
        } => backoff(RetryReason::DescriptorMerge),
        AttemptOutcome::Status {
            status: 429,
            retry_after,
            ..
        } => after(retry_after, RetryReason::RateLimited),
        AttemptOutcome::Status {
            status: 503,
            retry_after,
            ..
        } if idempotent => after(retry_after, RetryReason::Server),
        AttemptOutcome::Status {
            status: 500 | 502 | 504,
            ..
        } if idempotent => backoff(RetryReason::Server),
        AttemptOutcome::Status { .. } => Decision::GiveUp,
        AttemptOutcome::NotSent => backoff(RetryReason::Transport),
        AttemptOutcome::Lost if idempotent => backoff(RetryReason::Transport),
        AttemptOutcome::Lost => Decision::GiveUp,
    }
}

/// Parses a `Retry-After` header: delay-seconds or an HTTP date (RFC 9110 section 10.2.3).
/// A date in the past yields zero; garbage yields `None`.
pub fn parse_retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // Some servers send fractional seconds; accept them.
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let delta = date.with_timezone(&chrono::Utc) - now;
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> AttemptOutcome {
        AttemptOutcome::Status {
            status,
            merge_failure: false,
            retry_after: None,
        }
    }

    fn is_retry(d: Decision) -> bool {
        matches!(d, Decision::Retry { .. })
    }

    #[test]
    fn backoff_is_bounded_exponential_with_jitter() {
        let p = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(60),
        };
        assert_eq!(p.backoff_bound(0), Duration::from_millis(100));
        assert_eq!(p.backoff_bound(1), Duration::from_millis(200));
        assert_eq!(p.backoff_bound(3), Duration::from_millis(800));
        assert_eq!(p.backoff_bound(5), Duration::from_secs(2));
        assert_eq!(p.backoff_bound(200), Duration::from_secs(2));
        let mut distinct = std::collections::HashSet::new();
        for retry in 0..10 {
            for _ in 0..50 {
                let d = p.backoff(retry);
                assert!(d <= p.backoff_bound(retry));
                distinct.insert(d);
            }
        }
        // Full jitter: the delays are spread, not a fixed schedule.
        assert!(
            distinct.len() > 100,
            "only {} distinct delays",
            distinct.len()
        );
    }

    #[test]
    fn idempotent_calls_retry_on_5xx_and_transport() {
        let p = RetryPolicy::default();
        for s in [500, 502, 503, 504] {
            assert!(is_retry(decide(&p, true, 0, status(s))), "{s}");
        }
        assert!(is_retry(decide(&p, true, 0, AttemptOutcome::Lost)));
        assert!(is_retry(decide(&p, true, 0, AttemptOutcome::NotSent)));
        for s in [400, 401, 403, 404, 409, 501, 505] {
            assert_eq!(decide(&p, true, 0, status(s)), Decision::GiveUp, "{s}");
        }
    }

    #[test]
    fn non_idempotent_calls_retry_only_when_nothing_was_applied() {
        let p = RetryPolicy::default();
        for s in [500, 502, 503, 504] {
            assert_eq!(decide(&p, false, 0, status(s)), Decision::GiveUp, "{s}");
        }
        assert_eq!(decide(&p, false, 0, AttemptOutcome::Lost), Decision::GiveUp);
        assert!(is_retry(decide(&p, false, 0, AttemptOutcome::NotSent)));
        assert!(is_retry(decide(&p, false, 0, status(429))));
        let merge = AttemptOutcome::Status {
            status: 500,
            merge_failure: true,
            retry_after: None,
        };
        assert!(matches!(
            decide(&p, false, 0, merge),
            Decision::Retry {
                reason: RetryReason::DescriptorMerge,
                ..
            }
        ));
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let p = RetryPolicy::default();
        let limited = |secs| AttemptOutcome::Status {
            status: 429,
            merge_failure: false,
            retry_after: Some(Duration::from_secs(secs)),
        };
        assert_eq!(
            decide(&p, false, 0, limited(3)),
            Decision::Retry {
                delay: Duration::from_secs(3),
                reason: RetryReason::RateLimited,
                server_requested: true
            }
        );
        assert_eq!(decide(&p, true, 0, limited(3600)), Decision::GiveUp);
        let unavailable = AttemptOutcome::Status {
            status: 503,
            merge_failure: false,
            retry_after: Some(Duration::from_secs(2)),
        };
        assert!(matches!(
            decide(&p, true, 0, unavailable),
            Decision::Retry {
                server_requested: true,
                ..
            }
        ));
    }

    #[test]
    fn budget_is_bounded() {
        let p = RetryPolicy {
            max_retries: 2,
            ..RetryPolicy::default()
        };
        assert!(is_retry(decide(&p, true, 1, status(500))));
        assert_eq!(decide(&p, true, 2, status(500)), Decision::GiveUp);
        assert_eq!(
            decide(&RetryPolicy::none(), true, 0, status(500)),
            Decision::GiveUp
        );
    }

    #[test]
    fn parses_retry_after_forms() {
        let now = chrono::DateTime::parse_from_rfc3339("2015-10-21T07:28:00Z")
            .map(|d| d.with_timezone(&chrono::Utc))
            .unwrap();
        assert_eq!(parse_retry_after("5", now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }
}
