//! Read-after-write lag: JFrog documents that on instances with thousands of repositories "changes
//! made by a CUD operation may take up to tens of seconds or several minutes to propagate down
//! and become fully visible" (a repository read right after its creation may still be missing).
//! With a lag configured, the read APIs (`GET` by key, the list, all configurations) keep
//! answering a repository's previous state for that long after each write; writes and their
//! validation always see the current state (so a second create of the same key fails). Off
//! (zero) by default.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::store::Repo;

#[derive(Debug)]
struct Stale {
    visible_at: Instant,
    previous: Option<Repo>,
}

#[derive(Debug, Default)]
pub(crate) struct Lag {
    nanos: AtomicU64,
    stale: Mutex<HashMap<String, Stale>>,
}

impl Lag {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Stale>> {
        self.stale
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn set(&self, lag: Duration) {
        self.nanos.store(
            u64::try_from(lag.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        if lag.is_zero() {
            self.lock().clear();
        }
    }

    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }

    /// Records a committed write of `key`; `previous` is its state before the write. Readers
    /// keep seeing the state before the first of several quick writes until the last one is
    /// visible.
    pub(crate) fn record(&self, key: &str, previous: Option<&Repo>) {
        let lag = self.get();
        if lag.is_zero() {
            return;
        }
        let visible_at = Instant::now() + lag;
        let mut stale = self.lock();
        match stale.get_mut(key) {
            Some(s) => s.visible_at = visible_at,
            None => {
                stale.insert(
                    key.to_owned(),
                    Stale {
                        visible_at,
                        previous: previous.cloned(),
                    },
                );
            }
        }
    }

    /// The state readers still see for `key`, when it is stale (`Some(None)`: not visible yet).
    pub(crate) fn stale_one(&self, key: &str) -> Option<Option<Repo>> {
        if self.get().is_zero() {
            return None;
        }
        let mut stale = self.lock();
        let now = Instant::now();
        match stale.get(key) {
            Some(s) if s.visible_at > now => Some(s.previous.clone()),
            Some(_) => {
                stale.remove(key);
                None
            }
            None => None,
        }
    }

    /// Every stale key with the state readers still see (empty without a lag).
    pub(crate) fn stale_all(&self) -> HashMap<String, Option<Repo>> {
        if self.get().is_zero() {
            return HashMap::new();
        }
        let mut stale = self.lock();
        let now = Instant::now();
        stale.retain(|_, s| s.visible_at > now);
        stale
            .iter()
            .map(|(k, s)| (k.clone(), s.previous.clone()))
            .collect()
    }
}
