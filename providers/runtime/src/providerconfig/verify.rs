//! The verifications of resolved configs ([`ConfigVerifier`]), one in flight per config.
//!
//! Every MR that uses a config resolves it; a success is trusted for [`VERIFY_CACHE_TTL`].
//! When that expires (or when the provider starts), every reconcile in flight for that config
//! would otherwise ping JFrog at once: with 10,000 MRs on one config, thousands of identical
//! `GET /api/system/version` in a burst. Here the first caller verifies while the others wait
//! for its outcome: a success serves them all; a failure is returned to those that were
//! already waiting for it (they asked the same question at the same time), and the next caller
//! after it verifies again, so a platform that recovers is seen on the next reconcile.
//!
//! A caller dropped while it verifies (its reconcile cancelled) leaves no outcome: the next
//! waiter verifies instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{ConfigVerifier, ResolvedConfig, VERIFY_CACHE_TTL, fingerprint};

/// The latest outcome per config (by [`fingerprint`]), each behind its own async lock: the
/// caller holding the lock is the one verification in flight for that config.
pub(crate) struct Verifications {
    entries: Mutex<HashMap<[u8; 32], Arc<Latest>>>,
    /// How long a success is trusted ([`VERIFY_CACHE_TTL`]).
    ttl: Duration,
}

impl Default for Verifications {
    fn default() -> Self {
        Self::trusting_for(VERIFY_CACHE_TTL)
    }
}

/// A config's latest outcome; whoever holds the lock is verifying it.
type Latest = tokio::sync::Mutex<Option<Outcome>>;

/// What the last verification of a config said, and when.
struct Outcome {
    at: Instant,
    result: Result<(), String>,
}

impl Verifications {
    /// Verifications whose successes are trusted for `ttl`.
    pub(crate) fn trusting_for(ttl: Duration) -> Self {
        Self {
            entries: Mutex::default(),
            ttl,
        }
    }

    /// Verifies `config` with `verifier`, unless a success younger than the TTL is known, or
    /// a verification already in flight answers for this caller.
    pub(crate) async fn verify(
        &self,
        verifier: &dyn ConfigVerifier,
        config: &ResolvedConfig,
    ) -> Result<(), String> {
        let asked = Instant::now();
        let entry = self.entry(fingerprint(config));
        let mut last = entry.lock().await;
        if let Some(o) = last.as_ref() {
            match &o.result {
                Ok(()) if o.at.elapsed() < self.ttl => return Ok(()),
                // Decided while this caller waited: the same question, answered.
                Err(e) if o.at >= asked => return Err(e.clone()),
                _ => {}
            }
        }
        let result = verifier.verify(config).await;
        *last = Some(Outcome {
            at: Instant::now(),
            result: result.clone(),
        });
        result
    }

    /// The entry of `key`, created if new. Creating one drops the entries nobody waits on
    /// whose outcome no longer serves (credentials rotated away, a config deleted).
    fn entry(&self, key: [u8; 32]) -> Arc<Latest> {
        let mut m = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = m.get(&key) {
            return e.clone();
        }
        m.retain(|_, e| {
            Arc::strong_count(e) > 1
                || e.try_lock().map_or(true, |o| {
                    o.as_ref()
                        .is_some_and(|o| o.result.is_ok() && o.at.elapsed() < self.ttl)
                })
        });
        m.entry(key).or_default().clone()
    }

    /// How many configs have an entry (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    use secrecy::SecretString;

    use super::*;
    use crate::managed::config::Credentials;

    /// Counts calls; each takes `delay` and fails while `failing` is set.
    #[derive(Default)]
    struct Ping {
        calls: AtomicU32,
        failing: AtomicBool,
        delay: Duration,
    }

    #[async_trait::async_trait]
    impl ConfigVerifier for Ping {
        async fn verify(&self, c: &ResolvedConfig) -> Result<(), String> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            if self.failing.load(Ordering::SeqCst) {
                Err(format!("cannot connect to JFrog platform {}: 503", c.url))
            } else {
                Ok(())
            }
        }
    }

    fn ping(delay_ms: u64) -> Arc<Ping> {
        Arc::new(Ping {
            delay: Duration::from_millis(delay_ms),
            ..Ping::default()
        })
    }

    fn calls(p: &Ping) -> u32 {
        p.calls.load(Ordering::SeqCst)
    }

    fn config(token: &str) -> ResolvedConfig {
        ResolvedConfig {
            config_kind: "ClusterProviderConfig".into(),
            config_name: "default".into(),
            config_namespace: None,
            config_uid: None,
            url: "https://a.example/".into(),
            credentials: Credentials::Token(SecretString::from(token.to_string())),
            credentials_from: None,
            ca_bundle: None,
        }
    }

    /// Starts `n` verifications of `c` at once (on the test's one thread, all of them are
    /// waiting before the first verification ends).
    fn start(
        v: &Arc<Verifications>,
        ping: &Arc<Ping>,
        c: &ResolvedConfig,
        n: usize,
    ) -> Vec<tokio::task::JoinHandle<Result<(), String>>> {
        (0..n)
            .map(|_| {
                let (v, ping, c) = (v.clone(), ping.clone(), c.clone());
                tokio::spawn(async move { v.verify(ping.as_ref(), &c).await })
            })
            .collect()
    }

    async fn burst(
        v: &Arc<Verifications>,
        ping: &Arc<Ping>,
        c: &ResolvedConfig,
        n: usize,
    ) -> Vec<Result<(), String>> {
        let mut out = Vec::new();
        for t in start(v, ping, c, n) {
            out.push(t.await.expect("task"));
        }
        out
    }

    #[tokio::test]
    async fn a_burst_for_one_config_verifies_once_and_shares_the_success() {
        let ttl = Duration::from_millis(400);
        let v = Arc::new(Verifications::trusting_for(ttl));
        let ping = ping(50);
        let c = config("t1");
        assert!(burst(&v, &ping, &c, 500).await.iter().all(Result::is_ok));
        assert_eq!(calls(&ping), 1, "one ping for 500 reconciles");
        assert!(burst(&v, &ping, &c, 50).await.iter().all(Result::is_ok));
        assert_eq!(calls(&ping), 1, "the success is trusted");

        // Once the TTL has run out, the next burst verifies once again.
        tokio::time::sleep(ttl).await;
        assert!(burst(&v, &ping, &c, 50).await.iter().all(Result::is_ok));
        assert_eq!(calls(&ping), 2);
        assert_eq!(
            Verifications::default().ttl,
            VERIFY_CACHE_TTL,
            "the provider's TTL"
        );
    }

    #[tokio::test]
    async fn a_failure_answers_its_waiters_and_the_next_caller_asks_again() {
        let v = Arc::new(Verifications::default());
        let ping = ping(100);
        ping.failing.store(true, Ordering::SeqCst);
        let c = config("t1");
        let results = burst(&v, &ping, &c, 100).await;
        assert_eq!(calls(&ping), 1, "one ping for the burst");
        assert!(
            results.iter().all(|r| r
                .as_ref()
                .is_err_and(|e| e == "cannot connect to JFrog platform https://a.example/: 503")),
            "{results:?}"
        );

        // A failure is not trusted: the next caller verifies, and sees the recovery.
        ping.failing.store(false, Ordering::SeqCst);
        assert_eq!(v.verify(ping.as_ref(), &c).await, Ok(()));
        assert_eq!(calls(&ping), 2);
    }

    #[tokio::test]
    async fn configs_are_verified_separately_and_stale_entries_are_dropped() {
        let ttl = Duration::from_millis(200);
        let v = Arc::new(Verifications::trusting_for(ttl));
        let ping = ping(0);
        assert!(
            burst(&v, &ping, &config("t1"), 10)
                .await
                .iter()
                .all(Result::is_ok)
        );
        assert!(
            burst(&v, &ping, &config("t2"), 10)
                .await
                .iter()
                .all(Result::is_ok)
        );
        assert_eq!(calls(&ping), 2, "one per credentials");
        assert_eq!(v.len(), 2);
        // The tokens rotated a while ago: their entries go when a new config arrives.
        tokio::time::sleep(ttl).await;
        assert_eq!(v.verify(ping.as_ref(), &config("t3")).await, Ok(()));
        assert_eq!(v.len(), 1);
    }

    #[tokio::test]
    async fn a_cancelled_verification_leaves_the_next_waiter_to_verify() {
        let v = Arc::new(Verifications::default());
        let ping = ping(300);
        let c = config("t1");
        let mut first = start(&v, &ping, &c, 1);
        let second = start(&v, &ping, &c, 1);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(calls(&ping), 1, "the second waits for the first");
        first.remove(0).abort();
        for t in second {
            assert_eq!(t.await.expect("task"), Ok(()));
        }
        assert_eq!(calls(&ping), 2);
    }
}
