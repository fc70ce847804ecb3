//! A core/v1 Event recorder that behaves like client-go's (docs/managed-reconciler.md §8.2).
//!
//! kube-runtime's `Recorder` writes `events.k8s.io/v1`, which Crossplane's provider RBAC does
//! not allow, so this one writes core/v1 `Event`s: `source.component` and
//! `reportingComponent` are the controller name, names are `<object>.<hex>`, cluster-scoped
//! objects' events go to `default`. Like client-go it aggregates identical events (same
//! source, object, type, reason and message) by patching `count` and `lastTimestamp`, and it
//! rate-limits floods per object (burst 25, then one per 5 minutes).
//!
//! Events are written inline (awaited) rather than from a background queue, so a test can
//! read them right after a reconcile; a failure to write an event is logged and never fails
//! the reconcile.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};

/// The event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// The object an event is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvolvedObject {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (None for cluster-scoped objects).
    pub namespace: Option<String>,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<String>,
}

const BURST: f64 = 25.0;
const REFILL_EVERY: Duration = Duration::from_secs(300);
const CACHE_MAX: usize = 4096;

struct Spam {
    tokens: f64,
    last: Instant,
}

/// An event already recorded (its name: [`event_name`] of the object and `suffix`).
#[derive(Clone, Copy)]
struct Aggregated {
    suffix: u64,
    count: i32,
}

/// An event's name: `<object name>.<suffix as 16 hex digits>`.
fn event_name(object: &str, suffix: u64) -> String {
    format!("{object}.{suffix:016x}")
}

/// Records core/v1 Events for one component (controller).
///
/// The aggregation and spam caches are keyed by a 64-bit hash of what identifies an event
/// (object, type, reason, message), not by that text: a provider keeps an entry per object
/// it recorded an event for (10,000 repositories: 6.6 MiB of keys as text, heaptrack), and
/// two of at most [`CACHE_MAX`] keys colliding (about 1 in 10^12) would only count one
/// event's repeat on the other.
pub struct EventRecorder {
    client: kube::Client,
    component: String,
    keys: std::hash::RandomState,
    cache: Mutex<HashMap<u64, Aggregated>>,
    spam: Mutex<HashMap<u64, Spam>>,
}

/// The pod's name (`HOSTNAME` in a container), as an event's `source.host`: with several
/// active replicas (docs/managed-reconciler.md §15.8) it says which one acted. None outside a
/// pod that sets it.
fn pod_host() -> Option<String> {
    static HOST: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        std::env::var("HOSTNAME")
            .ok()
            .filter(|h| !h.trim().is_empty())
    })
    .clone()
}

impl EventRecorder {
    /// A recorder whose events carry `component` as source and reporting component.
    pub fn new(client: kube::Client, component: impl Into<String>) -> Self {
        EventRecorder {
            client,
            component: component.into(),
            keys: std::hash::RandomState::new(),
            cache: Mutex::new(HashMap::new()),
            spam: Mutex::new(HashMap::new()),
        }
    }

    fn allow(&self, obj_key: u64) -> bool {
        let Ok(mut m) = self.spam.lock() else {
            return true;
        };
        let now = Instant::now();
        if m.len() >= CACHE_MAX {
            // Forget objects whose budget has refilled completely: they are
            // indistinguishable from new ones, so the map stays bounded.
            let full = REFILL_EVERY.mul_f64(BURST);
            m.retain(|_, s| now.saturating_duration_since(s.last) < full);
        }
        let e = m.entry(obj_key).or_insert(Spam {
            tokens: BURST,
            last: now,
        });
        let refill =
            now.saturating_duration_since(e.last).as_secs_f64() / REFILL_EVERY.as_secs_f64();
        e.tokens = (e.tokens + refill).min(BURST);
        e.last = now;
        if e.tokens >= 1.0 {
            e.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Record an event. `annotations` go on the Event object (the MR events carry
    /// `external-name`).
    pub async fn record(
        &self,
        obj: &InvolvedObject,
        annotations: BTreeMap<String, String>,
        type_: EventType,
        reason: &str,
        message: &str,
    ) {
        use std::hash::BuildHasher;
        let obj_key = self.keys.hash_one((
            &obj.api_version,
            &obj.kind,
            obj.namespace.as_deref().unwrap_or(""),
            &obj.name,
            &obj.uid,
        ));
        if !self.allow(obj_key) {
            tracing::debug!(reason, object = %obj.name, "event dropped by the per-object rate limit");
            return;
        }
        let agg_key = self
            .keys
            .hash_one((obj_key, type_.as_str(), reason, message));
        let namespace = obj
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let now = Time(k8s_openapi::jiff::Timestamp::now());

        let cached = self
            .cache
            .lock()
            .ok()
            .and_then(|m| m.get(&agg_key).copied());
        if let Some(prev) = cached {
            let name = event_name(&obj.name, prev.suffix);
            let count = prev.count + 1;
            let patch = serde_json::json!({
                "count": count,
                "lastTimestamp": now,
                "message": message,
            });
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    if let Ok(mut m) = self.cache.lock() {
                        m.insert(agg_key, Aggregated { count, ..prev });
                    }
                    return;
                }
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    // The event expired (events have a TTL); create a new one below.
                }
                Err(e) => {
                    tracing::warn!(reason, error = %e, "cannot update event");
                    return;
                }
            }
        }

        let suffix = rand::random::<u64>();
        let name = event_name(&obj.name, suffix);
        let ev = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                annotations: if annotations.is_empty() {
                    None
                } else {
                    Some(annotations)
                },
                ..Default::default()
            },
            involved_object: ObjectReference {
                api_version: Some(obj.api_version.clone()),
                kind: Some(obj.kind.clone()),
                name: Some(obj.name.clone()),
                namespace: obj.namespace.clone(),
                uid: Some(obj.uid.clone()),
                resource_version: obj.resource_version.clone(),
                ..Default::default()
            },
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            type_: Some(type_.as_str().to_string()),
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: pod_host(),
            }),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.component.clone()),
            first_timestamp: Some(now.clone()),
            last_timestamp: Some(now),
            count: Some(1),
            ..Default::default()
        };
        match api.create(&PostParams::default(), &ev).await {
            Ok(_) => {
                if let Ok(mut m) = self.cache.lock() {
                    if m.len() >= CACHE_MAX {
                        m.clear();
                    }
                    m.insert(agg_key, Aggregated { suffix, count: 1 });
                }
            }
            Err(e) => tracing::warn!(reason, error = %e, "cannot record event"),
        }
    }
}
