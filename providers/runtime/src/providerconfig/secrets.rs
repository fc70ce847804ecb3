//! The credentials Secrets a reconcile reads, from watches instead of a `GET` each time.
//!
//! crossplane-runtime reads a ProviderConfig's Secret through the manager's client, which
//! serves it from an informer cache; a reconcile of ours read it from the API server, one
//! `GET` per Secret and reconcile (two per creation, one per MR and poll). [`SecretWatches`]
//! watches each Secret a config names, by itself (field selector `metadata.name`, in its
//! namespace: never every Secret of the cluster), from its first read on, and answers from
//! what the watch last delivered:
//! - until the watch has listed, the Secret is read from the API server as before;
//! - a changed Secret (a rotated token) is seen as soon as the watch delivers it, a deleted
//!   one as missing, as an informer cache sees them;
//! - a watch that cannot list (no `watch` permission, say) keeps retrying with kube-runtime's
//!   back-off, and meanwhile every read goes to the API server.
//!
//! A watched Secret stays watched for the life of the process (a config names few Secrets,
//! and a watch's client of the pool is counted once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};

use crate::managed::context::WatchClients;

/// What the watch of one Secret last delivered.
#[derive(Default)]
struct Slot {
    /// `None` until the watch's first list ended; then the Secret, or `None` if it is absent.
    synced: Option<Option<Arc<Secret>>>,
    /// The objects of a list in progress (a relist keeps serving the previous state until it
    /// ends, as an informer does).
    listing: Option<Option<Arc<Secret>>>,
}

/// A watched Secret's slot, shared by its watch and its readers.
type SharedSlot = Arc<Mutex<Slot>>;

/// The watched credentials Secrets, by namespace and name.
pub struct SecretWatches {
    clients: WatchClients,
    slots: Mutex<HashMap<(String, String), SharedSlot>>,
}

/// What the watches know of one Secret.
#[derive(Debug, PartialEq)]
pub enum Cached {
    /// Not known yet (no watch, or its first list has not ended): read it from the API server.
    Unknown,
    /// The Secret is absent.
    Absent,
    /// The Secret as the watch last delivered it.
    Present(Arc<Secret>),
}

impl SecretWatches {
    /// Watches made with clients of `clients` (the pool of long-lived watches).
    pub fn new(clients: WatchClients) -> Self {
        SecretWatches {
            clients,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The Secret `namespace/name` as watched; the first call for a Secret starts its watch
    /// (and answers [`Cached::Unknown`]).
    pub fn get(&self, namespace: &str, name: &str) -> Cached {
        let key = (namespace.to_string(), name.to_string());
        let slot = {
            let Ok(mut slots) = self.slots.lock() else {
                return Cached::Unknown;
            };
            match slots.get(&key) {
                Some(s) => s.clone(),
                None => {
                    let slot = Arc::new(Mutex::new(Slot::default()));
                    if self.start(namespace, name, slot.clone()) {
                        slots.insert(key, slot);
                    }
                    return Cached::Unknown;
                }
            }
        };
        let Ok(s) = slot.lock() else {
            return Cached::Unknown;
        };
        match &s.synced {
            None => Cached::Unknown,
            Some(None) => Cached::Absent,
            Some(Some(secret)) => Cached::Present(secret.clone()),
        }
    }

    /// Starts the watch of one Secret feeding `slot`; false if no client could be made.
    fn start(&self, namespace: &str, name: &str, slot: SharedSlot) -> bool {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let client = match self.clients.next() {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(namespace, name, error = %e, "cannot watch a credentials Secret: it is read at each use");
                return false;
            }
        };
        let api: Api<Secret> = Api::namespaced(client, namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let (namespace, name) = (namespace.to_string(), name.to_string());
        handle.spawn(async move {
            let mut events = watcher(api, config).default_backoff().boxed();
            while let Some(event) = events.next().await {
                match event {
                    Ok(ev) => apply(&slot, &name, ev),
                    Err(e) => {
                        tracing::debug!(%namespace, %name, error = %e, "credentials Secret watch")
                    }
                }
            }
        });
        true
    }
}

/// One watch event into the slot of the Secret `name` (an object of another name, which a
/// server that ignored the field selector would send, is not it).
fn apply(slot: &Mutex<Slot>, name: &str, event: watcher::Event<Secret>) {
    let named = |s: &Secret| s.metadata.name.as_deref() == Some(name);
    let Ok(mut s) = slot.lock() else { return };
    match event {
        watcher::Event::Init => s.listing = Some(None),
        watcher::Event::InitApply(secret) if named(&secret) => {
            s.listing = Some(Some(Arc::new(secret)));
        }
        watcher::Event::InitDone => s.synced = Some(s.listing.take().unwrap_or(None)),
        watcher::Event::Apply(secret) if named(&secret) => {
            s.synced = Some(Some(Arc::new(secret)));
        }
        watcher::Event::Delete(secret) if named(&secret) => s.synced = Some(None),
        watcher::Event::InitApply(_) | watcher::Event::Apply(_) | watcher::Event::Delete(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(value: &str) -> Secret {
        let mut s = Secret::default();
        s.metadata.name = Some("creds".into());
        s.string_data = Some([("token".to_string(), value.to_string())].into());
        s
    }

    fn state(slot: &Mutex<Slot>) -> Option<Option<String>> {
        let s = slot.lock().expect("slot");
        s.synced.as_ref().map(|o| {
            o.as_ref()
                .and_then(|x| x.string_data.as_ref()?.get("token").cloned())
        })
    }

    #[test]
    fn a_slot_follows_the_watch_and_serves_the_previous_state_during_a_relist() {
        let slot = Mutex::new(Slot::default());
        assert_eq!(state(&slot), None, "unknown before the first list");
        apply(&slot, "creds", watcher::Event::Init);
        apply(&slot, "creds", watcher::Event::InitApply(secret("a")));
        assert_eq!(state(&slot), None, "still unknown while listing");
        apply(&slot, "creds", watcher::Event::InitDone);
        assert_eq!(state(&slot), Some(Some("a".into())));
        // A rotation.
        apply(&slot, "creds", watcher::Event::Apply(secret("b")));
        assert_eq!(state(&slot), Some(Some("b".into())));
        // A relist keeps the last state until it ends, then takes the list's.
        apply(&slot, "creds", watcher::Event::Init);
        assert_eq!(state(&slot), Some(Some("b".into())));
        apply(&slot, "creds", watcher::Event::InitDone);
        assert_eq!(state(&slot), Some(None), "gone while the watch was down");
        apply(&slot, "creds", watcher::Event::Apply(secret("c")));
        apply(&slot, "creds", watcher::Event::Delete(secret("c")));
        assert_eq!(state(&slot), Some(None));
        // Another Secret is not this one.
        let mut other = secret("x");
        other.metadata.name = Some("other".into());
        apply(&slot, "creds", watcher::Event::Apply(other));
        assert_eq!(state(&slot), Some(None));
    }
}
