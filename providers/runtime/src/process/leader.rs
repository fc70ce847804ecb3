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
    clock: LeaseClock,
}

fn micro_now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

/// Lease expiry judged as client-go judges it: from the local time at which a Lease's record
/// (holder, renew time) was last seen to change, never from the timestamps in it. Shared by
/// the leader election and the shard Leases (`super::shards`).
#[derive(Debug, Default)]
pub(crate) struct LeaseClock {
    seen: std::collections::HashMap<String, (Option<String>, Option<String>, Instant)>,
}

impl LeaseClock {
    /// Records `lease` as seen at `now`; true when its record has not changed for its
    /// duration (`default_secs` when it names none).
    pub(crate) fn expired(&mut self, lease: &Lease, default_secs: i32, now: Instant) -> bool {
        let name = lease.metadata.name.clone().unwrap_or_default();
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.filter(|h| !h.is_empty());
        let renew = spec.renew_time.map(|t| t.0.to_string());
        let entry = self
            .seen
            .entry(name)
            .or_insert_with(|| (holder.clone(), renew.clone(), now));
        if (&entry.0, &entry.1) != (&holder, &renew) {
            *entry = (holder, renew, now);
        }
        let secs = spec.lease_duration_seconds.unwrap_or(default_secs).max(1);
        entry.2 + Duration::from_secs(secs.unsigned_abs().into()) <= now
    }

    /// Forgets the Leases `keep` refuses.
    pub(crate) fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.seen.retain(|name, _| keep(name));
    }
}

/// A new Lease's spec, held by `identity` for `secs`.
pub(crate) fn fresh_spec(identity: &str, secs: i32) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(identity.to_string()),
        lease_duration_seconds: Some(secs),
        acquire_time: Some(micro_now()),
        renew_time: Some(micro_now()),
        lease_transitions: Some(0),
        ..LeaseSpec::default()
    }
}

/// `spec` held (or renewed) by `identity` for `secs`; a change of hands moves the acquire
/// time and counts a transition.
pub(crate) fn held_spec(mut spec: LeaseSpec, identity: &str, secs: i32) -> LeaseSpec {
    if spec.holder_identity.as_deref() != Some(identity) {
        spec.acquire_time = Some(micro_now());
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
    }
    spec.holder_identity = Some(identity.to_string());
    spec.lease_duration_seconds = Some(secs);
    spec.renew_time = Some(micro_now());
    spec
}

/// Empties the holder of Lease `name` (`current`, else read) if `identity` holds it, so the
/// next holder takes it at once. `Ok(false)` when `identity` does not hold it.
pub(crate) async fn release_lease(
    api: &Api<Lease>,
    name: &str,
    current: Option<Lease>,
    identity: &str,
) -> Result<bool, kube::Error> {
    let lease = match current {
        Some(l) => Some(l),
        None => api.get_opt(name).await?,
    };
    let Some(mut lease) = lease else {
        return Ok(false);
    };
    let Some(spec) = lease.spec.as_mut() else {
        return Ok(false);
    };
    if spec.holder_identity.as_deref() != Some(identity) {
        return Ok(false);
    }
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.renew_time = Some(micro_now());
    api.replace(name, &PostParams::default(), &lease).await?;
    Ok(true)
}

impl LeaderElector {
    /// An elector over the Lease API.
    pub fn new(client: kube::Client, cfg: LeaderElectionConfig, metrics: MetricsRegistry) -> Self {
        let api = Api::namespaced(client, &cfg.namespace);
        Self {
            api,
            cfg,
            metrics,
            clock: LeaseClock::default(),
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
                spec: Some(fresh_spec(&self.cfg.identity, secs)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => {
                    let name = self.cfg.name.clone();
                    self.clock.retain(|n| n != name);
                    Ok(true)
                }
                Err(kube::Error::Api(s)) if s.is_already_exists() => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let held_by_me = holder.as_deref() == Some(self.cfg.identity.as_str());
        let expired = self.clock.expired(&lease, secs, Instant::now());
        if !held_by_me && holder.is_some() && !expired {
            return Ok(false);
        }
        lease.spec = Some(held_spec(spec, &self.cfg.identity, secs));
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
        if let Err(e) = release_lease(&self.api, &self.cfg.name, None, &self.cfg.identity).await {
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
