//! Metrics with crossplane-runtime's names (docs/managed-reconciler.md §15.5) and
//! controller-runtime's standard controller and work-queue names, registered into the process's
//! prometheus-client registry.
//!
//! Deviation (allowed, Q7): the first-reconcile and last-up-to-date memories are keyed by
//! namespace and name, not by name only.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Instant;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A label set: `(name, value)` pairs.
pub type Labels = Vec<(String, String)>;

fn tiny_buckets() -> Histogram {
    // 1e-8 × 10^k for k = 0..9, as crossplane-runtime's first_time_to_reconcile.
    Histogram::new(exponential_buckets(1e-8, 10.0, 10))
}

fn human_buckets() -> Histogram {
    Histogram::new([
        1.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
    ])
}

fn reconcile_time_buckets() -> Histogram {
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
        15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
    ])
}

type HistFamily = Family<Labels, Histogram, fn() -> Histogram>;

/// All metrics of the managed controllers of one process.
pub struct ManagedMetrics {
    /// `crossplane_managed_resource_exists{gvk}`.
    pub exists: Family<Labels, Gauge>,
    /// `crossplane_managed_resource_ready{gvk}`.
    pub ready: Family<Labels, Gauge>,
    /// `crossplane_managed_resource_synced{gvk}`.
    pub synced: Family<Labels, Gauge>,
    /// `crossplane_managed_resource_first_time_to_reconcile_seconds{gvk}`.
    pub first_time_to_reconcile: HistFamily,
    /// `crossplane_managed_resource_first_time_to_readiness_seconds{gvk}`.
    pub first_time_to_readiness: HistFamily,
    /// `crossplane_managed_resource_deletion_seconds{gvk}`.
    pub deletion: HistFamily,
    /// `crossplane_managed_resource_drift_seconds{gvk}`.
    pub drift: HistFamily,
    /// `controller_runtime_reconcile_total{controller,result}`.
    pub reconcile_total: Family<Labels, Counter>,
    /// `controller_runtime_reconcile_errors_total{controller}`.
    pub reconcile_errors: Family<Labels, Counter>,
    /// `controller_runtime_reconcile_time_seconds{controller}`.
    pub reconcile_time: HistFamily,
    /// `controller_runtime_max_concurrent_reconciles{controller}`.
    pub max_concurrent: Family<Labels, Gauge>,
    /// `controller_runtime_active_workers{controller}`.
    pub active_workers: Family<Labels, Gauge>,
    /// `workqueue_depth{name}`.
    pub workqueue_depth: Family<Labels, Gauge>,
    /// `workqueue_adds_total{name}`.
    pub workqueue_adds: Family<Labels, Counter>,
    /// `workqueue_retries_total{name}`.
    pub workqueue_retries: Family<Labels, Counter>,
    /// MRs whose first reconcile this process recorded (key: hash of gvk/namespace/name).
    first_reconciled: Mutex<HashSet<u64>>,
    /// Last time each MR was seen up to date (key: hash of gvk/namespace/name). A 64-bit hash
    /// rather than the text: an entry per MR (10,000 MRs: 1.6 MiB as text); two MRs
    /// colliding (about 1 in 10^11 at that count) would only share a histogram sample.
    last_up_to_date: Mutex<HashMap<u64, Instant>>,
    /// The hasher of those keys.
    keys: std::hash::RandomState,
}

impl Default for ManagedMetrics {
    fn default() -> Self {
        Self::unregistered()
    }
}

impl ManagedMetrics {
    /// Metrics not registered anywhere (tests, or a process without a metrics endpoint).
    pub fn unregistered() -> Self {
        ManagedMetrics {
            exists: Family::default(),
            ready: Family::default(),
            synced: Family::default(),
            first_time_to_reconcile: Family::new_with_constructor(tiny_buckets),
            first_time_to_readiness: Family::new_with_constructor(human_buckets),
            deletion: Family::new_with_constructor(human_buckets),
            drift: Family::new_with_constructor(tiny_buckets),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_time_buckets),
            max_concurrent: Family::default(),
            active_workers: Family::default(),
            workqueue_depth: Family::default(),
            workqueue_adds: Family::default(),
            workqueue_retries: Family::default(),
            first_reconciled: Mutex::new(HashSet::new()),
            last_up_to_date: Mutex::new(HashMap::new()),
            keys: std::hash::RandomState::new(),
        }
    }

    /// Create the metrics and register them. prometheus-client appends `_total` to counters
    /// itself, so counters are registered without it.
    pub fn new(registry: &mut Registry) -> Self {
        let m = Self::unregistered();
        registry.register(
            "crossplane_managed_resource_exists",
            "The number of managed resources that exist",
            m.exists.clone(),
        );
        registry.register(
            "crossplane_managed_resource_ready",
            "The number of managed resources in Ready=True state",
            m.ready.clone(),
        );
        registry.register(
            "crossplane_managed_resource_synced",
            "The number of managed resources in Synced=True state",
            m.synced.clone(),
        );
        registry.register(
            "crossplane_managed_resource_first_time_to_reconcile_seconds",
            "The time it took for a managed resource to be detected by the controller",
            m.first_time_to_reconcile.clone(),
        );
        registry.register(
            "crossplane_managed_resource_first_time_to_readiness_seconds",
            "The time it took for a managed resource to become ready first time after creation",
            m.first_time_to_readiness.clone(),
        );
        registry.register(
            "crossplane_managed_resource_deletion_seconds",
            "The time it took for a managed resource to be deleted",
            m.deletion.clone(),
        );
        registry.register(
            "crossplane_managed_resource_drift_seconds",
            "ALPHA: How long since the previous successful reconcile when a resource was found to be out of sync; excludes restart of the provider",
            m.drift.clone(),
        );
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            m.max_concurrent.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active_workers.clone(),
        );
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue",
            m.workqueue_depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            m.workqueue_adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            m.workqueue_retries.clone(),
        );
        m
    }

    /// The `gvk` label set.
    pub fn gvk(gvk: &str) -> Labels {
        vec![("gvk".to_string(), gvk.to_string())]
    }

    /// The `controller` label set.
    pub fn controller(name: &str) -> Labels {
        vec![("controller".to_string(), name.to_string())]
    }

    /// Record that this process saw the MR's first reconcile (Synced absent).
    pub(crate) fn record_first_reconcile(&self, key: &str, gvk: &str, since_creation: f64) {
        self.first_time_to_reconcile
            .get_or_create(&Self::gvk(gvk))
            .observe(since_creation.max(0.0));
        if let Ok(mut m) = self.first_reconciled.lock() {
            m.insert(self.key(key));
        }
    }

    /// Observe first-time-to-readiness once, if this process recorded the first reconcile.
    pub(crate) fn record_ready(&self, key: &str, gvk: &str, since_creation: f64) {
        let first = self
            .first_reconciled
            .lock()
            .map(|mut m| m.remove(&self.key(key)))
            .unwrap_or(false);
        if first {
            self.first_time_to_readiness
                .get_or_create(&Self::gvk(gvk))
                .observe(since_creation.max(0.0));
        }
    }

    fn key(&self, key: &str) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one(key)
    }

    /// Remember the up-to-date time used by the drift metric.
    pub(crate) fn record_up_to_date(&self, key: &str) {
        if let Ok(mut m) = self.last_up_to_date.lock() {
            m.insert(self.key(key), Instant::now());
        }
    }

    /// Observe the drift metric after a successful Update (skipped without a memory).
    pub(crate) fn record_drift(&self, key: &str, gvk: &str) {
        let last = self
            .last_up_to_date
            .lock()
            .ok()
            .and_then(|m| m.get(&self.key(key)).copied());
        if let Some(t) = last {
            self.drift
                .get_or_create(&Self::gvk(gvk))
                .observe(t.elapsed().as_secs_f64());
        }
    }

    /// Observe the deletion duration and forget the MR.
    pub(crate) fn record_deleted(&self, key: &str, gvk: &str, since_deletion: f64) {
        self.deletion
            .get_or_create(&Self::gvk(gvk))
            .observe(since_deletion.max(0.0));
        if let Ok(mut m) = self.last_up_to_date.lock() {
            m.remove(&self.key(key));
        }
        if let Ok(mut m) = self.first_reconciled.lock() {
            m.remove(&self.key(key));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;

    #[test]
    fn names_are_crossplanes() {
        let mut reg = Registry::default();
        let m = ManagedMetrics::new(&mut reg);
        let gvk = "g.example.m.crossplane.io/v1alpha1, Kind=Widget";
        m.record_first_reconcile("k", gvk, 0.5);
        m.record_ready("k", gvk, 2.0);
        m.record_deleted("k", gvk, 1.0);
        m.reconcile_total
            .get_or_create(&vec![
                ("controller".into(), "managed/x".into()),
                ("result".into(), "success".into()),
            ])
            .inc();
        let mut out = String::new();
        encode(&mut out, &reg).expect("encode");
        for name in [
            "crossplane_managed_resource_first_time_to_reconcile_seconds_bucket",
            "crossplane_managed_resource_first_time_to_readiness_seconds_count",
            "crossplane_managed_resource_deletion_seconds_sum",
            "controller_runtime_reconcile_total{controller=\"managed/x\",result=\"success\"} 1",
        ] {
            assert!(out.contains(name), "{name} missing in\n{out}");
        }
    }
}
