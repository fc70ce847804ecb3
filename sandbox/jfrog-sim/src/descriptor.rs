//! Emulation of Artifactory's configuration descriptor.
//!
//! Artifactory keeps repositories (and the system configuration) in one configuration
//! descriptor. A configuration write reads the descriptor, takes time to apply and save, and then
//! merges its change into the current descriptor; when another write was saved in between, the
//! merge fails and the request answers HTTP 500 with "Could not merge and save new descriptor".
//! This module reproduces that with optimistic concurrency: a write takes a [`Ticket`] (the
//! descriptor version it read), spends `write_latency`, and commits only if the version is
//! unchanged (when emulation is on). A client that serialises its configuration writes never
//! sees the failure; one that doesn't, does.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axum::http::StatusCode;

use crate::errors::ApiError;

/// The message Artifactory answers a failed descriptor merge with (the Terraform provider and
/// the JFrog client retry on this substring).
pub(crate) const MERGE_FAILURE: &str = "Could not merge and save new descriptor [org.jfrog.common.ExecutionFailed: \
     Configuration descriptor was modified concurrently by another configuration change]";

#[derive(Debug)]
pub(crate) struct Descriptor {
    version: Mutex<u64>,
    /// The configuration sections the descriptor serves (backups, proxies, security, ...), in
    /// the shape of the YAML patch (see `services::artifactory::configuration`).
    pub(crate) content: Mutex<serde_json::Value>,
    emulation: AtomicBool,
    write_latency_nanos: AtomicU64,
}

/// The descriptor version a write started from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket(u64);

impl Descriptor {
    pub(crate) fn new(emulation: bool, write_latency: Duration) -> Descriptor {
        Descriptor {
            version: Mutex::new(0),
            content: Mutex::new(crate::services::artifactory::configuration::initial()),
            emulation: AtomicBool::new(emulation),
            write_latency_nanos: AtomicU64::new(nanos(write_latency)),
        }
    }

    pub(crate) fn set_emulation(&self, on: bool) {
        self.emulation.store(on, Ordering::SeqCst);
    }

    pub(crate) fn emulation(&self) -> bool {
        self.emulation.load(Ordering::SeqCst)
    }

    pub(crate) fn set_write_latency(&self, d: Duration) {
        self.write_latency_nanos.store(nanos(d), Ordering::SeqCst);
    }

    pub(crate) fn write_latency(&self) -> Duration {
        Duration::from_nanos(self.write_latency_nanos.load(Ordering::SeqCst))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.version
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a configuration write and spends the configured write latency.
    pub(crate) async fn begin(&self) -> Ticket {
        let ticket = Ticket(*self.lock());
        let latency = self.write_latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        ticket
    }

    /// Commits a write: `apply` validates and mutates the state; it runs only when the merge
    /// succeeds, and a successful apply advances the descriptor version. Validation errors of
    /// `apply` take precedence over nothing: the merge check comes first, as a stale write never
    /// reaches validation against the newer descriptor in Artifactory either.
    pub(crate) fn commit<T>(
        &self,
        ticket: Ticket,
        apply: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let mut version = self.lock();
        if self.emulation() && *version != ticket.0 {
            tracing::debug!("descriptor merge conflict emulated");
            return Err(ApiError::art(
                StatusCode::INTERNAL_SERVER_ERROR,
                MERGE_FAILURE,
            ));
        }
        let out = apply()?;
        *version += 1;
        Ok(out)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
