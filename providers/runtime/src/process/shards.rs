//! Active-active replicas (`--shards N`, docs/managed-reconciler.md §15.8): the managed
//! resources are split into N shards ([`crate::managed::shards`]), each owned through a
//! `coordination.k8s.io/v1` Lease of its own, and every replica of the provider's Deployment
//! takes a share of them. Kubernetes is the engine: Leases and the Deployment's replicas;
//! what is ours is the assignment rule.
//!
//! - **Members.** Each replica renews a member Lease of its own
//!   (`crossplane-shard-member-<provider>-<uuid>`) and lists the provider's Leases (label
//!   `crossplane.io/shard-group=<provider>`) once per retry period. A member whose Lease has
//!   not changed for its duration (judged by local time, as client-go judges a leader's Lease)
//!   is gone.
//! - **Assignment.** Rendezvous hashing with bounded load ([`assignment`]): shard `i` goes to
//!   the live member with the highest [`stable_hash`] of (identity, i) among those below their
//!   fair share (the shard count divided by the members, rounded down or up). Every replica computes the same answer from the
//!   same members, and a member joining or leaving moves few shards besides its own.
//! - **Ownership.** A shard is reconciled only while its Lease
//!   (`crossplane-shard-<provider>-<i>`) is held: the assigned member takes a shard whose
//!   Lease is free, released or expired; a holder that is no longer assigned it stops starting
//!   reconciles of it, waits for those in flight to end, and only then releases the Lease, so
//!   the next owner never overlaps it. A holder that cannot renew stops at the renew deadline,
//!   before the Lease expires for anyone else. A replica that dies without releasing loses its
//!   shards to the others after the lease duration.
//! - **Agreement.** Members advertise their shard count and key (annotation
//!   `crossplane.io/shards`, e.g. `6/uid`). While any live member disagrees (a rolling update
//!   that changes `--shards`), a replica gives up all its shards and takes none: two mappings
//!   at once could give one MR two owners. Work resumes once the old replicas are gone.
//! - **Shutdown.** A replica that stops gives up its shards and deletes its member Lease, so
//!   the others take over at once.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};
use tokio_util::sync::CancellationToken;

use super::leader::{LeaseClock, fresh_spec, held_spec, release_lease};
use super::metrics::{MetricsRegistry, NameLabel};
use crate::managed::shards::{Shards, stable_hash};

/// Label on every Lease of a provider's shards: the provider's name.
pub const GROUP_LABEL: &str = "crossplane.io/shard-group";
/// Label telling member Leases (`member`) from shard Leases (`shard`).
pub const ROLE_LABEL: &str = "crossplane.io/shard-role";
/// Annotation on member Leases: `<shards>/<key>`.
pub const LAYOUT_ANNOTATION: &str = "crossplane.io/shards";

/// Settings of the shard manager.
#[derive(Clone, Debug)]
pub struct ShardConfig {
    /// `provider-artifactory`, ...
    pub provider: String,
    /// Namespace of the Leases.
    pub namespace: String,
    /// This replica's identity (`<hostname>_<uuid>`).
    pub identity: String,
    /// Lease duration.
    pub lease_duration: Duration,
    /// Renew deadline.
    pub renew_deadline: Duration,
    /// Retry period: how often the Leases are listed and renewed.
    pub retry_period: Duration,
}

/// `crossplane-shard-<provider>-<i>`.
pub fn shard_lease_name(provider: &str, shard: u32) -> String {
    format!("crossplane-shard-{provider}-{shard}")
}

/// `crossplane-shard-member-<provider>-<id>`, `<id>` twelve hex digits of the identity's
/// [`stable_hash`] (the name stays a DNS label, at most 63 characters, for every provider).
pub fn member_lease_name(provider: &str, identity: &str) -> String {
    let id = stable_hash(&[identity.as_bytes()]) >> 16;
    format!("crossplane-shard-member-{provider}-{id:012x}")
}

/// The owner of every shard among the live `members`: rendezvous hashing with bounded load.
/// Shard `i` goes to the member with the highest [`stable_hash`] of (member, i) that is still
/// below its share (`floor(total / members)`, one more for `total % members` of them), shards
/// taken in order. Every replica
/// computes the same answer from the same members; each gets its fair share; a member joining
/// or leaving moves few shards besides the ones it gains or held.
pub fn assignment<'a>(total: u32, members: &[&'a str]) -> Vec<&'a str> {
    if members.is_empty() {
        return Vec::new();
    }
    let n = u32::try_from(members.len()).unwrap_or(u32::MAX);
    // Every member gets `base` shards, and `extra` of them one more.
    let (base, extra) = (total / n, total % n);
    let mut at_ceil = 0;
    let mut load: HashMap<&str, u32> = HashMap::new();
    (0..total)
        .map(|shard| {
            let mut ranked: Vec<(u64, &'a str)> = members
                .iter()
                .map(|m| (stable_hash(&[m.as_bytes(), &shard.to_le_bytes()]), *m))
                .collect();
            ranked.sort_unstable_by(|a, b| b.cmp(a));
            let room = |l: u32| l < base || (l == base && at_ceil < extra);
            let m = ranked
                .iter()
                .map(|(_, m)| *m)
                .find(|m| room(load.get(m).copied().unwrap_or(0)))
                .unwrap_or(ranked[0].1);
            let l = load.entry(m).or_default();
            *l += 1;
            if *l == base + 1 {
                at_ceil += 1;
            }
            m
        })
        .collect()
}

/// A shard Lease this replica holds.
#[derive(Debug)]
struct Held {
    last_renew: Instant,
    /// No longer ours to keep (assigned to another member, or the layout disagrees):
    /// revoked, released once its reconciles in flight have ended.
    draining: bool,
}

/// One replica's shard manager.
pub struct ShardManager {
    api: Api<Lease>,
    cfg: ShardConfig,
    shards: Arc<Shards>,
    metrics: MetricsRegistry,
    layout: String,
    /// Per Lease name: (holder, renew time) as last seen, and the local instant it changed.
    clock: LeaseClock,
    held: BTreeMap<u32, Held>,
    ticks: u64,
}

impl ShardManager {
    /// A manager of `shards` over the Lease API.
    pub fn new(
        client: kube::Client,
        cfg: ShardConfig,
        shards: Arc<Shards>,
        metrics: MetricsRegistry,
    ) -> Self {
        let layout = format!("{}/{}", shards.total(), shards.by().as_str());
        ShardManager {
            api: Api::namespaced(client, &cfg.namespace),
            cfg,
            shards,
            metrics,
            layout,
            clock: LeaseClock::default(),
            held: BTreeMap::new(),
            ticks: 0,
        }
    }

    /// The shards this replica owns.
    pub fn shards(&self) -> &Arc<Shards> {
        &self.shards
    }

    fn set_metric(&self, shard: u32, held: bool) {
        self.metrics
            .leader_status
            .get_or_create(&NameLabel {
                name: shard_lease_name(&self.cfg.provider, shard),
            })
            .set(i64::from(held));
    }

    fn lease_secs(&self) -> i32 {
        i32::try_from(self.cfg.lease_duration.as_secs())
            .unwrap_or(i32::MAX)
            .max(1)
    }

    /// A new Lease of this replica's, `role` `member` or `shard`.
    fn lease(&self, name: String, role: &str) -> Lease {
        let mut labels = BTreeMap::new();
        labels.insert(GROUP_LABEL.to_string(), self.cfg.provider.clone());
        labels.insert(ROLE_LABEL.to_string(), role.to_string());
        let annotations = (role == "member")
            .then(|| BTreeMap::from([(LAYOUT_ANNOTATION.to_string(), self.layout.clone())]));
        Lease {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(self.cfg.namespace.clone()),
                labels: Some(labels),
                annotations,
                ..ObjectMeta::default()
            },
            spec: Some(fresh_spec(&self.cfg.identity, self.lease_secs())),
        }
    }

    /// Creates `fresh`, or replaces `current` with this replica as holder. `Ok(false)` when
    /// another replica won the race (already exists, or a conflict).
    async fn write_holder(
        &self,
        name: &str,
        current: Option<&Lease>,
        fresh: Lease,
    ) -> Result<bool, kube::Error> {
        let result = match current {
            None => self.api.create(&PostParams::default(), &fresh).await,
            Some(cur) => {
                let mut next = cur.clone();
                next.spec = Some(held_spec(
                    next.spec.take().unwrap_or_default(),
                    &self.cfg.identity,
                    self.lease_secs(),
                ));
                if let Some(a) = fresh.metadata.annotations {
                    next.metadata.annotations.get_or_insert_default().extend(a);
                }
                self.api.replace(name, &PostParams::default(), &next).await
            }
        };
        match result {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Empties the holder of a shard Lease this replica holds, so the next owner takes it at
    /// once.
    async fn release(&mut self, shard: u32, current: Option<&Lease>) {
        self.held.remove(&shard);
        self.set_metric(shard, false);
        let name = shard_lease_name(&self.cfg.provider, shard);
        match release_lease(&self.api, &name, current.cloned(), &self.cfg.identity).await {
            Ok(true) => tracing::info!(lease = %name, "released shard"),
            Ok(false) => {}
            Err(e) => tracing::warn!(lease = %name, error = %e, "cannot release shard lease"),
        }
    }

    /// One round: list the Leases, renew this replica's member Lease, and take, renew, drain
    /// or release each shard. Errors are logged; a shard whose Lease could not be renewed
    /// within the renew deadline is revoked.
    pub async fn tick(&mut self) {
        let now = Instant::now();
        self.ticks += 1;
        let selector = format!("{GROUP_LABEL}={}", self.cfg.provider);
        let leases = match self
            .api
            .list(&ListParams::default().labels(&selector))
            .await
        {
            Ok(l) => l.items,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list shard leases");
                self.revoke_overdue();
                return;
            }
        };
        let by_name: HashMap<String, Lease> = leases
            .into_iter()
            .filter_map(|l| l.metadata.name.clone().map(|n| (n, l)))
            .collect();
        self.clock.retain(|n| by_name.contains_key(n));

        // Members: this replica, and every other member Lease not expired.
        let member_name = member_lease_name(&self.cfg.provider, &self.cfg.identity);
        let mut members: Vec<String> = vec![self.cfg.identity.clone()];
        let mut agree = true;
        for l in by_name.values() {
            let is_member = l
                .metadata
                .labels
                .as_ref()
                .and_then(|m| m.get(ROLE_LABEL))
                .is_some_and(|r| r == "member");
            let expired = self.clock.expired(l, 1, now);
            if !is_member || l.metadata.name.as_deref() == Some(member_name.as_str()) {
                continue;
            }
            let Some(holder) = l
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone())
                .filter(|h| !h.is_empty())
            else {
                continue;
            };
            if expired {
                continue;
            }
            let layout = l
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(LAYOUT_ANNOTATION));
            if layout != Some(&self.layout) {
                if agree {
                    tracing::warn!(member = %holder, theirs = ?layout, ours = %self.layout, "a live replica shards differently: taking no shard until it is gone");
                }
                agree = false;
            }
            members.push(holder);
        }
        members.sort();
        members.dedup();
        match self
            .write_holder(
                &member_name,
                by_name.get(&member_name),
                self.lease(member_name.clone(), "member"),
            )
            .await
        {
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot renew member lease"),
        }
        // Members starting together see one another before the first of them takes shards.
        let settled = self.ticks > 1;
        let refs: Vec<&str> = members.iter().map(String::as_str).collect();
        let owners = assignment(self.shards.total(), &refs);

        for shard in 0..self.shards.total() {
            let name = shard_lease_name(&self.cfg.provider, shard);
            let current = by_name.get(&name);
            let holder = current
                .and_then(|l| l.spec.as_ref())
                .and_then(|s| s.holder_identity.clone())
                .filter(|h| !h.is_empty());
            let free = holder.is_none() || current.is_some_and(|l| self.clock.expired(l, 1, now));
            let mine = holder.as_deref() == Some(self.cfg.identity.as_str());
            let wanted = agree
                && settled
                && owners.get(shard as usize).copied() == Some(self.cfg.identity.as_str());
            if let Some(h) = self.held.get_mut(&shard) {
                if !mine {
                    // Taken by another replica: it judged our Lease expired.
                    self.held.remove(&shard);
                    self.shards.revoke(shard);
                    self.set_metric(shard, false);
                    tracing::warn!(lease = %name, holder = ?holder, "lost shard");
                    continue;
                }
                if !wanted && !h.draining {
                    h.draining = true;
                    let n = self.shards.revoke(shard);
                    tracing::info!(lease = %name, in_flight = n, "handing shard over");
                }
                if h.draining && self.shards.in_flight(shard) == 0 {
                    self.release(shard, current).await;
                    continue;
                }
            } else if !(wanted && (free || mine)) {
                continue;
            }
            let fresh = self.lease(name.clone(), "shard");
            match self.write_holder(&name, current, fresh).await {
                Ok(true) => {
                    let h = self.held.entry(shard).or_insert(Held {
                        last_renew: now,
                        draining: false,
                    });
                    h.last_renew = now;
                    if !h.draining && !self.shards.owns(shard) {
                        self.shards.grant(shard);
                        self.set_metric(shard, true);
                        tracing::info!(lease = %name, identity = %self.cfg.identity, "acquired shard");
                    }
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(lease = %name, error = %e, "cannot write shard lease"),
            }
        }
        self.revoke_overdue();
    }

    /// Revokes the shards whose Lease was not renewed within the renew deadline.
    fn revoke_overdue(&mut self) {
        let overdue: Vec<u32> = self
            .held
            .iter()
            .filter(|(_, h)| h.last_renew.elapsed() >= self.cfg.renew_deadline)
            .map(|(s, _)| *s)
            .collect();
        for shard in overdue {
            self.held.remove(&shard);
            self.shards.revoke(shard);
            self.set_metric(shard, false);
            tracing::warn!(
                lease = %shard_lease_name(&self.cfg.provider, shard),
                "shard lease not renewed within the renew deadline: stopped reconciling it"
            );
        }
    }

    /// Runs rounds every retry period until `shutdown`, then gives every shard up (after its
    /// reconciles in flight, at most `drain` later) and deletes the member Lease.
    pub async fn run(mut self, shutdown: CancellationToken, drain: Duration) {
        tracing::info!(identity = %self.cfg.identity, layout = %self.layout, "sharding managed resources");
        loop {
            self.tick().await;
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(self.cfg.retry_period) => {}
            }
        }
        self.stop(drain).await;
    }

    /// Gives up every shard (waiting at most `drain` for reconciles in flight) and deletes the
    /// member Lease.
    pub async fn stop(&mut self, drain: Duration) {
        let held: Vec<u32> = self.held.keys().copied().collect();
        for s in &held {
            self.shards.revoke(*s);
        }
        let until = Instant::now() + drain;
        while held.iter().any(|s| self.shards.in_flight(*s) > 0) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for s in held {
            self.release(s, None).await;
        }
        let member = member_lease_name(&self.cfg.provider, &self.cfg.identity);
        if let Err(e) = self.api.delete(&member, &DeleteParams::default()).await {
            tracing::warn!(lease = %member, error = %e, "cannot delete member lease");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        let long = member_lease_name(
            "provider-artifactory",
            "provider-artifactory-5d8f7c9b4-x2x7q_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        );
        assert!(long.len() <= 63, "{long}");
        assert!(long.starts_with("crossplane-shard-member-provider-artifactory-"));
        assert_ne!(long, member_lease_name("provider-artifactory", "other_1"));
        assert_eq!(
            shard_lease_name("provider-xray", 3),
            "crossplane-shard-provider-xray-3"
        );
    }

    #[test]
    fn every_member_gets_its_share_and_few_shards_move() {
        let three = ["a_1", "b_2", "c_3"];
        let four = ["a_1", "b_2", "c_3", "d_4"];
        let count = |a: &[&str], m: &str| a.iter().filter(|x| **x == m).count();
        for total in [3, 6, 7, 10, 64] {
            let a3 = assignment(total, &three);
            let a4 = assignment(total, &four);
            let cap3 = total.div_ceil(3) as usize;
            assert!(
                three.iter().all(|m| count(&a3, m) <= cap3),
                "{total}: {a3:?}"
            );
            assert!(
                three.iter().all(|m| count(&a3, m) + 1 >= cap3),
                "{total}: {a3:?}"
            );
            // d joins: what moves is mostly what d gains.
            let moved = a3.iter().zip(&a4).filter(|(x, y)| x != y).count();
            assert!(moved <= count(&a4, "d_4") * 2, "{total}: {a3:?} -> {a4:?}");
            // The same members in another order: the same answer.
            assert_eq!(a3, assignment(total, &["c_3", "a_1", "b_2"]));
        }
        assert!(assignment(4, &[]).is_empty());
        assert_eq!(assignment(3, &["x_1"]), ["x_1"; 3]);
    }
}
