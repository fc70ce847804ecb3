//! Per-route request counts, keyed `"METHOD /path/{template}"` (axum's matched route), so
//! benchmarks and tests can assert how many calls a client made. Requests that match no route
//! are counted under their raw path; the admin API under `/__sim` is not counted. The
//! Catalog's GraphQL mutations are also counted one by one, as `MUTATION <type>.<field>`.

use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub(crate) struct Counts {
    map: Mutex<BTreeMap<String, u64>>,
}

impl Counts {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn record(&self, method: &str, route: &str) {
        *self.lock().entry(format!("{method} {route}")).or_default() += 1;
    }

    pub(crate) fn get(&self, method: &str, route: &str) -> u64 {
        self.lock()
            .get(&format!("{} {route}", method.to_ascii_uppercase()))
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn all(&self) -> BTreeMap<String, u64> {
        self.lock().clone()
    }

    pub(crate) fn reset(&self) {
        self.lock().clear();
    }
}
