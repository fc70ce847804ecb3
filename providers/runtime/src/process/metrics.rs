//! The Prometheus registry of the process and its `/metrics` text encoding.
//!
//! Everything registers here: the managed reconciler (crossplane-runtime and
//! controller-runtime names), the leader elector (`leader_election_master_status`), and the
//! provider's JFrog client (through [`MetricsRegistry::register_with`]). The process adds
//! `tokio_alive_tasks`, read at each scrape: a task leak shows there as a rising line (Go
//! providers show goroutines in `go_goroutines` for the same reason).

use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The label set of `leader_election_master_status`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct NameLabel {
    /// The lease name.
    pub name: String,
}

/// A shareable registry.
#[derive(Clone)]
pub struct MetricsRegistry {
    registry: Arc<Mutex<Registry>>,
    /// `leader_election_master_status{name}`: 1 while this process leads.
    pub leader_status: Family<NameLabel, Gauge>,
    /// `tokio_alive_tasks`: the tasks alive in the runtime that serves the scrape.
    alive_tasks: Gauge,
}

impl Default for MetricsRegistry {
    fn default() -> Self {
        let mut registry = Registry::default();
        let leader_status = Family::<NameLabel, Gauge>::default();
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            leader_status.clone(),
        );
        let alive_tasks = Gauge::default();
        registry.register(
            "tokio_alive_tasks",
            "Number of tasks alive in the provider's Tokio runtime",
            alive_tasks.clone(),
        );
        Self {
            registry: Arc::new(Mutex::new(registry)),
            leader_status,
            alive_tasks,
        }
    }
}

impl MetricsRegistry {
    /// Lets a component register its metrics (e.g. the JFrog client's request metrics).
    pub fn register_with(&self, f: impl FnOnce(&mut Registry)) {
        match self.registry.lock() {
            Ok(mut r) => f(&mut r),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// The OpenMetrics text of every registered metric.
    pub fn encode(&self) -> String {
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let alive = handle.metrics().num_alive_tasks();
            self.alive_tasks
                .set(i64::try_from(alive).unwrap_or(i64::MAX));
        }
        let mut out = String::new();
        let guard = match self.registry.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        if prometheus_client::encoding::text::encode(&mut out, &guard).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive_tasks(text: &str) -> i64 {
        text.lines()
            .find_map(|l| l.strip_prefix("tokio_alive_tasks "))
            .and_then(|v| v.trim().parse().ok())
            .expect("tokio_alive_tasks in the encoding")
    }

    #[tokio::test]
    async fn alive_tasks_follow_the_runtime() {
        let registry = MetricsRegistry::default();
        let before = alive_tasks(&registry.encode());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = rx.await;
        });
        assert_eq!(alive_tasks(&registry.encode()), before + 1);
        let _ = tx.send(());
        task.await.expect("the task ends");
        assert_eq!(alive_tasks(&registry.encode()), before);
    }
}
