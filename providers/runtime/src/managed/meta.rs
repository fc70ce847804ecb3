//! Crossplane annotations, their timestamp format, the Go duration syntax of the poll-interval
//! annotation, and the watch event filter key (docs/managed-reconciler.md §1.2, §3;
//! crossplane-runtime `pkg/meta/meta.go`, `pkg/resource/predicates.go`).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

/// The external name.
pub const EXTERNAL_NAME: &str = "crossplane.io/external-name";
/// Set just before Create.
pub const EXTERNAL_CREATE_PENDING: &str = "crossplane.io/external-create-pending";
/// Set after Create succeeded.
pub const EXTERNAL_CREATE_SUCCEEDED: &str = "crossplane.io/external-create-succeeded";
/// Set after Create failed.
pub const EXTERNAL_CREATE_FAILED: &str = "crossplane.io/external-create-failed";
/// `"true"` pauses.
pub const PAUSED: &str = "crossplane.io/paused";
/// Per-MR poll interval (Go duration).
pub const POLL_INTERVAL: &str = "crossplane.io/poll-interval";
/// Reconcile-request token.
pub const RECONCILE_REQUESTED_AT: &str = "crossplane.io/reconcile-requested-at";
/// The MR finalizer.
pub const FINALIZER: &str = "finalizer.managedresource.crossplane.io";

// The creation-incomplete stop message lives with the other error text; kept at this path.
pub use super::errors::MSG_CREATION_INCOMPLETE;

/// Now, formatted as crossplane-runtime writes stamps: RFC 3339, whole seconds, UTC `Z`.
pub fn now_stamp() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parse an RFC 3339 stamp (any offset, optional fraction). Unparseable means absent.
pub fn parse_stamp(v: Option<&String>) -> Option<DateTime<Utc>> {
    v.and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&Utc))
}

/// Creation is incomplete when `pending` is strictly later than the later of `succeeded` and
/// `failed` (absent values count as the zero time).
pub fn external_create_incomplete(annotations: &BTreeMap<String, String>) -> bool {
    let Some(pending) = parse_stamp(annotations.get(EXTERNAL_CREATE_PENDING)) else {
        return false;
    };
    let succeeded = parse_stamp(annotations.get(EXTERNAL_CREATE_SUCCEEDED));
    let failed = parse_stamp(annotations.get(EXTERNAL_CREATE_FAILED));
    let latest = match (succeeded, failed) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    match latest {
        Some(l) => pending > l,
        None => true,
    }
}

/// The paused annotation is exactly `"true"`.
pub fn is_paused(annotations: &BTreeMap<String, String>) -> bool {
    annotations.get(PAUSED).map(String::as_str) == Some("true")
}

/// Parse a Go duration (`300ms`, `1.5h`, `2h45m`, `-1m`). Returns None when invalid;
/// negative durations are reported as None too (callers treat them as "no override").
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let (neg, mut rest) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_end == 0 {
            return None;
        }
        let num: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let mult = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += num * mult;
    }
    if neg && total > 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(total))
}

/// The effective poll interval (docs/managed-reconciler.md §3.4): the annotation if valid and
/// positive, raised to the minimum; otherwise `--poll`.
pub fn effective_poll(
    annotations: &BTreeMap<String, String>,
    poll: Duration,
    min: Duration,
) -> Duration {
    match annotations
        .get(POLL_INTERVAL)
        .and_then(|v| parse_go_duration(v))
    {
        Some(d) if !d.is_zero() => d.max(min),
        _ => poll,
    }
}

/// `d + U(-j, +j)`, never below zero.
pub fn jittered(d: Duration, j: Duration) -> Duration {
    if j.is_zero() {
        return d;
    }
    let r: f64 = rand::random_range(-1.0..=1.0);
    let secs = d.as_secs_f64() + r * j.as_secs_f64();
    Duration::from_secs_f64(secs.max(0.0))
}

/// The part of an object the event filter compares (docs/managed-reconciler.md §1.2): generation,
/// labels and annotations without the create-pending and create-failed keys. Our deviation: whether
/// the object is being deleted is included too, so that `kubectl delete` of an MR always triggers
/// a reconcile even on an API server that does not bump `generation` when it sets
/// `deletionTimestamp` (a real one does, so this adds nothing there).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FilterKey {
    generation: Option<i64>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    deleting: bool,
}

impl FilterKey {
    /// Compute the key of an object's metadata.
    pub fn of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Self {
        Self::from_parts(
            meta.generation,
            meta.labels.as_ref(),
            meta.annotations.as_ref(),
            meta.deletion_timestamp.is_some(),
        )
    }

    /// The key of the metadata a watch read ([`super::watch::Watched`]): the same as
    /// [`FilterKey::of`] the whole object's.
    pub fn of_watched(meta: &super::watch::WatchedMeta) -> Self {
        Self::from_parts(
            meta.generation,
            meta.labels.as_ref(),
            meta.annotations.as_ref(),
            meta.deleting,
        )
    }

    fn from_parts(
        generation: Option<i64>,
        labels: Option<&BTreeMap<String, String>>,
        annotations: Option<&BTreeMap<String, String>>,
        deleting: bool,
    ) -> Self {
        let mut annotations = annotations.cloned().unwrap_or_default();
        annotations.remove(EXTERNAL_CREATE_PENDING);
        annotations.remove(EXTERNAL_CREATE_FAILED);
        FilterKey {
            generation,
            labels: labels.cloned().unwrap_or_default(),
            annotations,
            deleting,
        }
    }

    /// A 64-bit digest of the key: what a controller keeps per object to compare the next
    /// event with (labels and annotations cost far more to keep than to hash). Two keys
    /// that differ collide with probability 2^-64, which would only skip one event-driven
    /// reconcile; the next poll reconciles anyway.
    pub fn digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn conformance_012_pending_older_or_equal_not_blocked() {
        let a = ann(&[
            (EXTERNAL_CREATE_PENDING, "2024-01-01T00:00:00Z"),
            (EXTERNAL_CREATE_SUCCEEDED, "2024-01-01T00:00:05Z"),
        ]);
        assert!(!external_create_incomplete(&a));
        let a = ann(&[
            (EXTERNAL_CREATE_PENDING, "2024-01-01T00:00:00Z"),
            (EXTERNAL_CREATE_SUCCEEDED, "2024-01-01T00:00:00Z"),
        ]);
        assert!(!external_create_incomplete(&a));
        // a failed stamp after pending unblocks too (scenario 8)
        let a = ann(&[
            (EXTERNAL_CREATE_PENDING, "2024-01-01T00:00:00Z"),
            (EXTERNAL_CREATE_FAILED, "2024-01-01T00:00:00Z"),
        ]);
        assert!(!external_create_incomplete(&a));
    }

    #[test]
    fn conformance_013_pending_newer_than_succeeded_blocked() {
        let a = ann(&[
            (EXTERNAL_CREATE_SUCCEEDED, "2024-01-01T00:00:00Z"),
            (EXTERNAL_CREATE_PENDING, "2024-01-01T00:00:01Z"),
        ]);
        assert!(external_create_incomplete(&a));
        // any offset and fractions parse
        let a = ann(&[
            (EXTERNAL_CREATE_SUCCEEDED, "2024-01-01T01:00:00+01:00"),
            (EXTERNAL_CREATE_PENDING, "2024-01-01T00:00:00.5Z"),
        ]);
        assert!(external_create_incomplete(&a));
        assert!(external_create_incomplete(&ann(&[(
            EXTERNAL_CREATE_PENDING,
            "2024-01-01T00:00:00Z"
        )])));
    }

    #[test]
    fn conformance_014_unparseable_stamps_are_absent() {
        let a = ann(&[(EXTERNAL_CREATE_PENDING, "yesterday")]);
        assert!(!external_create_incomplete(&a));
    }

    #[test]
    fn conformance_051_paused_true_capitalised_is_not_paused() {
        assert!(is_paused(&ann(&[(PAUSED, "true")])));
        assert!(!is_paused(&ann(&[(PAUSED, "True")])));
        assert!(!is_paused(&ann(&[])));
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_go_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("100ms"), Some(Duration::from_millis(100)));
        assert_eq!(parse_go_duration("1d"), None);
        assert_eq!(parse_go_duration("-5m"), None);
        assert_eq!(parse_go_duration("0s"), Some(Duration::ZERO));
        assert_eq!(parse_go_duration(""), None);
        assert_eq!(parse_go_duration("s"), None);
    }

    #[test]
    fn conformance_094_poll_interval_annotation() {
        let poll = Duration::from_secs(600);
        let min = Duration::from_secs(1);
        let e = |v: &str| effective_poll(&ann(&[(POLL_INTERVAL, v)]), poll, min);
        assert_eq!(e("30s"), Duration::from_secs(30));
        assert_eq!(e("1d"), poll);
        assert_eq!(e("0s"), poll);
        assert_eq!(e("-5m"), poll);
        assert_eq!(e("100ms"), Duration::from_secs(1));
        assert_eq!(effective_poll(&ann(&[]), poll, min), poll);
        // jitter is computed from --poll (5 % = 30 s) and applied to the annotation value
        for _ in 0..200 {
            let d = jittered(e("30s"), poll / 20);
            assert!(d <= Duration::from_secs(60));
        }
    }

    #[test]
    fn conformance_022_jitter_bounds() {
        let poll = Duration::from_secs(600);
        for _ in 0..500 {
            let d = jittered(poll, poll / 20);
            assert!(d >= Duration::from_secs(570) && d <= Duration::from_secs(630));
        }
    }

    #[test]
    fn stamps_are_whole_seconds_utc() {
        let s = now_stamp();
        assert!(s.ends_with('Z'));
        assert!(!s.contains('.'));
        assert!(parse_stamp(Some(&s)).is_some());
    }
}
