//! Which managed resources this replica may reconcile when the provider runs as several
//! active replicas (`--shards`; docs/managed-reconciler.md §15.8).
//!
//! The managed resources are split into `total` shards by a stable hash, of the MR's UID or of
//! the ProviderConfig it references ([`ShardBy`]). A replica reconciles an MR only while it
//! owns the MR's shard; the process's shard manager (`process::shards`) grants and revokes
//! shards as it acquires and gives up their Leases. Controllers skip events of shards they do
//! not own, and re-enqueue every MR of a shard when it is granted.
//!
//! Never two writers: a shard is given up only after the reconciles of it in flight here have
//! ended ([`Shards::in_flight`]): [`Shards::begin`] and [`Shards::revoke`] take one lock, so no
//! reconcile starts on a revoked shard, and a revoked shard's Lease is released only when its
//! count is back at zero. A replica that cannot renew a Lease stops starting reconciles of the
//! shard at the renew deadline, before the Lease can expire for anyone else.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::watch::Watched;
use kube::api::DynamicObject;
use tokio::sync::watch;

/// What an MR's shard is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardBy {
    /// `metadata.uid`: an even spread of MRs over the shards.
    Uid,
    /// The referenced ProviderConfig (kind, namespace for a namespaced `ProviderConfig`, and
    /// name): every MR of one JFrog platform configuration in one shard, so that one replica
    /// holds that configuration's snapshots and descriptor writer.
    ProviderConfig,
}

impl ShardBy {
    /// The flag value, `uid` or `providerconfig`.
    pub fn as_str(self) -> &'static str {
        match self {
            ShardBy::Uid => "uid",
            ShardBy::ProviderConfig => "providerconfig",
        }
    }
}

impl std::str::FromStr for ShardBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "uid" => Ok(ShardBy::Uid),
            "providerconfig" | "provider-config" => Ok(ShardBy::ProviderConfig),
            other => Err(format!(
                "invalid shard key {other:?}: expected uid or providerconfig"
            )),
        }
    }
}

/// 64-bit FNV-1a: stable across processes, versions and platforms (the std hasher is not).
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            // A separator no part contains, so ("ab", "c") and ("a", "bc") differ.
            h ^= 0xff;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        for b in *p {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    // FNV's low bits mix poorly for short inputs: finish with a 64-bit avalanche (splitmix64)
    // so that `hash % total` spreads evenly.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

struct State {
    owned: Vec<bool>,
    in_flight: Vec<usize>,
}

/// The shards of one replica: how MRs map to shards, which ones it owns, and the reconciles
/// of each in flight. Shared by the shard manager and every controller.
pub struct Shards {
    total: u32,
    by: ShardBy,
    state: Mutex<State>,
    /// Bumped on every grant and revoke; controllers re-enqueue newly owned shards. (The end
    /// of a reconcile notifies nobody: the shard manager looks at the counts at each tick.)
    changes: watch::Sender<u64>,
}

impl std::fmt::Debug for Shards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shards")
            .field("total", &self.total)
            .field("by", &self.by)
            .field("owned", &self.owned())
            .finish()
    }
}

/// A reconcile of a shard in flight; dropping it ends it.
pub struct InFlight {
    shards: Arc<Shards>,
    shard: u32,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut st = self.shards.lock();
        if let Some(n) = st.in_flight.get_mut(self.shard as usize) {
            *n = n.saturating_sub(1);
        }
    }
}

impl Shards {
    /// `total` shards (at least 1), none owned yet.
    pub fn new(total: u32, by: ShardBy) -> Arc<Self> {
        let total = total.max(1);
        let (changes, _) = watch::channel(0);
        Arc::new(Shards {
            total,
            by,
            state: Mutex::new(State {
                owned: vec![false; total as usize],
                in_flight: vec![0; total as usize],
            }),
            changes,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of shards.
    pub fn total(&self) -> u32 {
        self.total
    }

    /// What the shard of an MR is computed from.
    pub fn by(&self) -> ShardBy {
        self.by
    }

    /// The shard of an MR.
    pub fn shard_of(&self, o: &DynamicObject) -> u32 {
        self.shard_of_watched(&Watched::of(o))
    }

    /// The shard of an MR, from what its watch read of it.
    pub fn shard_of_watched(&self, o: &Watched) -> u32 {
        match self.by {
            ShardBy::Uid => {
                let uid = o.metadata.uid.as_deref().unwrap_or_default();
                self.bucket(stable_hash(&[uid.as_bytes()]))
            }
            ShardBy::ProviderConfig => {
                let name = o.config_ref("name").unwrap_or("default");
                // A legacy (cluster-scoped) MR's reference has no kind: the legacy
                // ProviderConfig. A namespaced ProviderConfig is the MR's namespace's.
                let kind = o.config_ref("kind").unwrap_or("ProviderConfig");
                let ns = if kind == "ProviderConfig" {
                    o.metadata.namespace.as_deref().unwrap_or_default()
                } else {
                    ""
                };
                self.shard_of_config(kind, ns, name)
            }
        }
    }

    /// The shard of a ProviderConfig (`kind`, its namespace or "", `name`): the replica that
    /// owns it counts the config's users. With [`ShardBy::ProviderConfig`] that is the shard of
    /// every MR that references the config.
    pub fn shard_of_config(&self, kind: &str, namespace: &str, name: &str) -> u32 {
        self.bucket(stable_hash(&[
            kind.as_bytes(),
            namespace.as_bytes(),
            name.as_bytes(),
        ]))
    }

    /// The shard of a stable hash.
    fn bucket(&self, h: u64) -> u32 {
        u32::try_from(h % u64::from(self.total)).unwrap_or(0)
    }

    /// Whether this replica owns `shard`.
    pub fn owns(&self, shard: u32) -> bool {
        self.lock()
            .owned
            .get(shard as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The shards this replica owns.
    pub fn owned(&self) -> Vec<u32> {
        self.lock()
            .owned
            .iter()
            .enumerate()
            .filter(|(_, o)| **o)
            .filter_map(|(i, _)| u32::try_from(i).ok())
            .collect()
    }

    /// Starts a reconcile of `shard`: `None` when this replica does not own it.
    pub fn begin(self: &Arc<Self>, shard: u32) -> Option<InFlight> {
        let mut st = self.lock();
        if !st.owned.get(shard as usize).copied().unwrap_or(false) {
            return None;
        }
        st.in_flight[shard as usize] += 1;
        Some(InFlight {
            shards: self.clone(),
            shard,
        })
    }

    /// This replica owns `shard` (its Lease is held).
    pub fn grant(&self, shard: u32) {
        let changed = {
            let mut st = self.lock();
            match st.owned.get_mut(shard as usize) {
                Some(o) if !*o => {
                    *o = true;
                    true
                }
                _ => false,
            }
        };
        if changed {
            self.changes.send_modify(|g| *g += 1);
        }
    }

    /// This replica no longer owns `shard`: no reconcile of it starts from now on. Returns
    /// the reconciles of it still in flight.
    pub fn revoke(&self, shard: u32) -> usize {
        let (changed, n) = {
            let mut st = self.lock();
            let n = st.in_flight.get(shard as usize).copied().unwrap_or(0);
            match st.owned.get_mut(shard as usize) {
                Some(o) if *o => {
                    *o = false;
                    (true, n)
                }
                _ => (false, n),
            }
        };
        if changed {
            self.changes.send_modify(|g| *g += 1);
        }
        n
    }

    /// The reconciles of `shard` in flight.
    pub fn in_flight(&self, shard: u32) -> usize {
        self.lock()
            .in_flight
            .get(shard as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Notified on every grant and revoke.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mr(uid: &str, ns: Option<&str>, pcr: serde_json::Value) -> DynamicObject {
        let mut o: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "a.b/v1", "kind": "K",
            "metadata": {"name": "x", "uid": uid},
            "spec": {"providerConfigRef": pcr}
        }))
        .expect("object");
        o.metadata.namespace = ns.map(str::to_string);
        o
    }

    #[test]
    fn uids_spread_evenly_and_the_hash_is_stable() {
        // Pinned: the hash must never change between versions, or a rolling upgrade would
        // move MRs between replicas that disagree about their shards.
        assert_eq!(stable_hash(&[b"abc"]), stable_hash(&[b"abc"]));
        assert_ne!(stable_hash(&[b"ab", b"c"]), stable_hash(&[b"a", b"bc"]));
        // Values computed independently (FNV-1a 64, then splitmix64's finaliser).
        assert_eq!(stable_hash(&[b""]), 0xf52a_15e9_a9b5_e89b);
        assert_eq!(
            stable_hash(&[b"3f2504e0-4f89-11d3-9a0c-0305e82c3301"]),
            0x0b61_7c41_ed68_5c08
        );
        let s = Shards::new(10, ShardBy::Uid);
        let mut per = [0u32; 10];
        for i in 0..10_000 {
            let uid = uuid::Uuid::from_u128(i * 7_919 + 13).to_string();
            per[s.shard_of(&mr(&uid, None, json!({}))) as usize] += 1;
        }
        assert!(per.iter().all(|n| (850..1_150).contains(n)), "{per:?}");
    }

    #[test]
    fn by_provider_config_every_mr_of_a_config_shares_a_shard() {
        let s = Shards::new(64, ShardBy::ProviderConfig);
        let a = |uid: &str, ns| {
            s.shard_of(&mr(
                uid,
                ns,
                json!({"kind": "ClusterProviderConfig", "name": "prod"}),
            ))
        };
        assert_eq!(a("1", Some("x")), a("2", Some("y")));
        // A namespaced ProviderConfig named alike in two namespaces is two configs.
        let ns = |ns| {
            s.shard_of(&mr(
                "1",
                Some(ns),
                json!({"kind": "ProviderConfig", "name": "prod"}),
            ))
        };
        let spread: std::collections::BTreeSet<u32> = ["a", "b", "c", "d", "e", "f", "g", "h"]
            .iter()
            .map(|n| ns(n))
            .collect();
        assert!(spread.len() > 1, "{spread:?}");
        // A legacy MR without a reference uses the legacy config `default`.
        assert_eq!(
            s.shard_of(&mr("1", None, json!({}))),
            s.shard_of(&mr("2", None, json!({"name": "default"})))
        );
    }

    #[test]
    fn no_reconcile_starts_on_a_revoked_shard_and_in_flight_ones_are_counted() {
        let s = Shards::new(3, ShardBy::Uid);
        assert!(s.begin(1).is_none(), "not owned");
        s.grant(1);
        let a = s.begin(1).expect("owned");
        let b = s.begin(1).expect("owned");
        assert_eq!(s.in_flight(1), 2);
        assert_eq!(s.revoke(1), 2, "two still in flight");
        assert!(s.begin(1).is_none(), "revoked");
        drop(a);
        drop(b);
        assert_eq!(s.in_flight(1), 0);
        assert_eq!(s.owned(), Vec::<u32>::new());
        s.grant(2);
        s.grant(0);
        assert_eq!(s.owned(), vec![0, 2]);
        assert!("providerconfig".parse::<ShardBy>().is_ok());
        assert!(
            "name"
                .parse::<ShardBy>()
                .unwrap_err()
                .contains("uid or providerconfig")
        );
    }
}
