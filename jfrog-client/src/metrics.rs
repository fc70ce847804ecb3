//! Request metrics: how many HTTP exchanges each service answered, with which status, how
//! long they took, and how many were retried.
//!
//! Every attempt (not every call) is one observation, so retries show up as traffic. The
//! `status` label is the HTTP status code, or `transport` when no response arrived. Labels
//! never carry a URL, key or query, so cardinality stays bounded by services x methods x
//! statuses. One [`ClientMetrics`] can be shared by all clients of a process (pass it to
//! each builder) and registered once with [`ClientMetrics::register`].

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of one request observation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct RequestLabels {
    /// `artifactory`, `access`, ...
    pub service: String,
    /// `GET`, `PUT`, ...
    pub method: String,
    /// `200`, `404`, ..., or `transport`.
    pub status: String,
}

/// Labels of one retry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct RetryLabels {
    /// `artifactory`, `access`, ...
    pub service: String,
    /// `GET`, `PUT`, ...
    pub method: String,
    /// `descriptor_merge`, `rate_limited`, `server`, `transport`.
    pub reason: String,
}

type HistogramFamily = Family<RequestLabels, Histogram, fn() -> Histogram>;

fn new_histogram() -> Histogram {
    // 5 ms .. ~41 s.
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

/// The client's metric families; cheap to clone (shared state).
#[derive(Debug, Clone)]
pub struct ClientMetrics {
    requests: Family<RequestLabels, Counter>,
    duration: HistogramFamily,
    retries: Family<RetryLabels, Counter>,
}

impl Default for ClientMetrics {
    fn default() -> Self {
        ClientMetrics {
            requests: Family::default(),
            duration: Family::new_with_constructor(new_histogram),
            retries: Family::default(),
        }
    }
}

impl ClientMetrics {
    /// Fresh, unregistered families.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the families (`jfrog_client_requests_total`,
    /// `jfrog_client_request_duration_seconds`, `jfrog_client_retries_total`) with a
    /// registry; call once per process.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "jfrog_client_requests",
            "HTTP requests sent to the JFrog Platform, by service, method and status",
            self.requests.clone(),
        );
        registry.register(
            "jfrog_client_request_duration_seconds",
            "Latency of HTTP requests to the JFrog Platform, by service, method and status",
            self.duration.clone(),
        );
        registry.register(
            "jfrog_client_retries",
            "Retried JFrog Platform requests, by service, method and reason",
            self.retries.clone(),
        );
    }

    pub(crate) fn observe(&self, service: &str, method: &str, status: &str, seconds: f64) {
        let labels = RequestLabels {
            service: service.to_owned(),
            method: method.to_owned(),
            status: status.to_owned(),
        };
        self.requests.get_or_create(&labels).inc();
        self.duration.get_or_create(&labels).observe(seconds);
    }

    pub(crate) fn retried(&self, service: &str, method: &str, reason: &str) {
        self.retries
            .get_or_create(&RetryLabels {
                service: service.to_owned(),
                method: method.to_owned(),
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// The request count for one label set (for tests and diagnostics).
    pub fn request_count(&self, service: &str, method: &str, status: &str) -> u64 {
        self.requests
            .get_or_create(&RequestLabels {
                service: service.to_owned(),
                method: method.to_owned(),
                status: status.to_owned(),
            })
            .get()
    }

    /// Every request counted so far, whatever its labels, and how many of them were not
    /// `GET`s (for reports such as `preview`'s; read from the families' text encoding,
    /// which is the one way the families list their label sets).
    pub fn totals(&self) -> (u64, u64) {
        let mut registry = Registry::default();
        registry.register("r", "", self.requests.clone());
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &registry).is_err() {
            return (0, 0);
        }
        let mut all = 0;
        let mut not_get = 0;
        for line in text.lines().filter(|l| l.starts_with("r_total{")) {
            let n: u64 = line
                .rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .map_or(0, |v| v as u64);
            all += n;
            if !line.contains("method=\"GET\"") {
                not_get += n;
            }
        }
        (all, not_get)
    }

    /// The retry count for one label set (for tests and diagnostics).
    pub fn retry_count(&self, service: &str, method: &str, reason: &str) -> u64 {
        self.retries
            .get_or_create(&RetryLabels {
                service: service.to_owned(),
                method: method.to_owned(),
                reason: reason.to_owned(),
            })
            .get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_and_encodes() {
        let m = ClientMetrics::new();
        m.observe("artifactory", "GET", "200", 0.01);
        m.observe("artifactory", "GET", "200", 0.02);
        m.retried("artifactory", "PUT", "descriptor_merge");
        let mut registry = Registry::default();
        m.register(&mut registry);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        assert!(out.contains(
            r#"jfrog_client_requests_total{service="artifactory",method="GET",status="200"} 2"#
        ));
        assert!(out.contains("jfrog_client_request_duration_seconds_bucket"));
        assert!(out.contains(
            r#"jfrog_client_retries_total{service="artifactory",method="PUT",reason="descriptor_merge"} 1"#
        ));
        assert_eq!(m.request_count("artifactory", "GET", "200"), 2);
    }
}
