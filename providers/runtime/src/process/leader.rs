//! Leader election on a `coordination.k8s.io/v1` Lease (docs/managed-reconciler.md §15.2), as
//! controller-runtime does it: Lease `crossplane-leader-election-<provider>` in the pod's
//! namespace, duration 60 s, renew deadline 50 s, retry period 2 s, holder
//! `<hostname>_<uuid>`.
//!
//! Expiry is judged as client-go judges it: from the local time at which this process last
//! saw the Lease record change, not from the timestamps in it, so clock skew between
//! replicas does not matter. A leader that cannot renew within the renew deadline has lost;
//! the caller must then exit (controller-runtime's behaviour). On graceful shutdown the
//! Lease is released so that another replica takes over at once.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use tokio_util::sync::CancellationToken;

use super::metrics::{MetricsRegistry, NameLabel};

/// Leader-election settings.
#[derive(Clone, Debug)]
pub struct LeaderElectionConfig {
    /// Lease name.
    pub name: String,
    /// Lease namespace.
    pub namespace: String,
    /// This replica's identity.
    pub identity: String,
    /// Lease duration.
    pub lease_duration: Duration,
    /// Renew deadline.
    pub renew_deadline: Duration,
    /// Retry period.
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// The upstream defaults for a provider (`provider-artifactory`, ...).
    pub fn for_provider(provider_name: &str, namespace: &str) -> Self {
        Self {
            name: lease_name(provider_name),
            namespace: namespace.to_string(),
            identity: default_identity(),
            lease_duration: Duration::from_secs(60),
            renew_deadline: Duration::from_secs(50),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// `crossplane-leader-election-<provider-name>`.
pub fn lease_name(provider_name: &str) -> String {
    format!("crossplane-leader-election-{provider_name}")
}

/// `<hostname>_<uuid>`.
pub fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Errors of leader election.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The lease could not be renewed within the renew deadline.
    #[error("leader election lost: lease {0} not renewed within the renew deadline")]
    Lost(String),
}

/// One replica's elector.
pub struct LeaderElector {
    api: Api<Lease>,
    cfg: LeaderElectionConfig,
    metrics: MetricsRegistry,
    observed: Option<(Option<String>, Option<String>, Instant)>,
}

fn micro_now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

impl LeaderElector {
    /// An elector over the Lease API.
    pub fn new(client: kube::Client, cfg: LeaderElectionConfig, metrics: MetricsRegistry) -> Self {
        let api = Api::namespaced(client, &cfg.namespace);
        Self {
            api,
            cfg,
            metrics,
            observed: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.cfg
    }

    fn set_metric(&self, leading: bool) {
        self.metrics
            .leader_status
            .get_or_create(&NameLabel {
                name: self.cfg.name.clone(),
            })
            .set(i64::from(leading));
    }

    /// One attempt to acquire or renew. `Ok(true)` when this replica holds the Lease.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let secs = i32::try_from(self.cfg.lease_duration.as_secs())
            .unwrap_or(i32::MAX)
            .max(1);
        let Some(mut lease) = self.api.get_opt(&self.cfg.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.cfg.name.clone()),
                    namespace: Some(self.cfg.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.cfg.identity.clone()),
                    lease_duration_seconds: Some(secs),
                    acquire_time: Some(micro_now()),
                    renew_time: Some(micro_now()),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => {
                    self.observed = None;
                    Ok(true)
                }
                Err(kube::Error::Api(s)) if s.is_already_exists() => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let renew = spec.renew_time.as_ref().map(|t| t.0.to_string());
        let record = (holder.clone(), renew);
        let now = Instant::now();
        let changed = self
            .observed
            .as_ref()
            .is_none_or(|(h, r, _)| (h, r) != (&record.0, &record.1));
        if changed {
            self.observed = Some((record.0.clone(), record.1.clone(), now));
        }
        let observed_at = self.observed.as_ref().map_or(now, |o| o.2);
        let held_by_me = holder.as_deref() == Some(self.cfg.identity.as_str());
        let lease_secs = spec.lease_duration_seconds.unwrap_or(secs).max(1);
        let expired = observed_at + Duration::from_secs(lease_secs.unsigned_abs().into()) <= now;
        if !held_by_me && holder.is_some() && !expired {
            return Ok(false);
        }
        let mut next = spec;
        if !held_by_me {
            next.acquire_time = Some(micro_now());
            next.lease_transitions = Some(next.lease_transitions.unwrap_or(0) + 1);
        }
        next.holder_identity = Some(self.cfg.identity.clone());
        next.lease_duration_seconds = Some(secs);
        next.renew_time = Some(micro_now());
        lease.spec = Some(next);
        match self
            .api
            .replace(&self.cfg.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.is_conflict() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Waits until this replica leads; `false` if `shutdown` fired first.
    pub async fn acquire(&mut self, shutdown: &CancellationToken) -> bool {
        self.set_metric(false);
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    tracing::info!(lease = %self.cfg.name, identity = %self.cfg.identity, "successfully acquired lease");
                    self.set_metric(true);
                    return true;
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, lease = %self.cfg.name, "error acquiring lease")
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => return false,
                () = tokio::time::sleep(self.cfg.retry_period) => {}
            }
        }
    }

    /// Renews until `shutdown` (then releases the Lease and returns `Ok`) or until a renewal
    /// fails for longer than the renew deadline (`Err(Lost)`).
    pub async fn hold(&mut self, shutdown: &CancellationToken) -> Result<(), LeaderError> {
        let mut last_renew = Instant::now();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => {
                    self.release().await;
                    return Ok(());
                }
                () = tokio::time::sleep(self.cfg.retry_period) => {}
            }
            let attempt =
                tokio::time::timeout(self.cfg.renew_deadline, self.try_acquire_or_renew()).await;
            match attempt {
                Ok(Ok(true)) => last_renew = Instant::now(),
                Ok(Ok(false)) => {
                    // Someone else holds it: we lost it.
                    self.set_metric(false);
                    return Err(LeaderError::Lost(self.cfg.name.clone()));
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "failed to renew lease"),
                Err(_) => tracing::warn!("lease renewal timed out"),
            }
            if last_renew.elapsed() >= self.cfg.renew_deadline {
                self.set_metric(false);
                return Err(LeaderError::Lost(self.cfg.name.clone()));
            }
        }
    }

    /// Gives up the Lease (holder emptied) if this replica still holds it.
    pub async fn release(&mut self) {
        self.set_metric(false);
        let Ok(Some(mut lease)) = self.api.get_opt(&self.cfg.name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.cfg.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(micro_now());
        if let Err(e) = self
            .api
            .replace(&self.cfg.name, &PostParams::default(), &lease)
            .await
        {
            tracing::warn!(error = %e, "cannot release lease");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_identity() {
        assert_eq!(
            lease_name("provider-artifactory"),
            "crossplane-leader-election-provider-artifactory"
        );
        let id = default_identity();
        let (_, uuid) = id.rsplit_once('_').unwrap();
        assert!(uuid::Uuid::parse_str(uuid).is_ok(), "{id}");
        let cfg = LeaderElectionConfig::for_provider("provider-xray", "ns");
        assert_eq!(cfg.lease_duration, Duration::from_secs(60));
        assert_eq!(cfg.renew_deadline, Duration::from_secs(50));
        assert_eq!(cfg.retry_period, Duration::from_secs(2));
    }
}
