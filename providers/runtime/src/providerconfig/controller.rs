//! The config controllers (docs/managed-reconciler.md §9.5): one per config Kind. Each counts the
//! usage records that point at a config into `status.users`, holds the `in-use.crossplane.io`
//! finalizer, and blocks deletion while users remain (`Terminating=True`, reason `InUse`,
//! Warning event `UsageAccounting`).
//!
//! Usage watch mapping: a usage maps to the config it references; on a change of reference
//! both the old and the new config are enqueued (kube-runtime only hands the mapper the new
//! object, so the mapper remembers each usage's last reference).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use sha2::{Digest, Sha256};

use super::types::{Condition, ConfigApi, ConfigKind};
use super::{
    FINALIZER_IN_USE, LABEL_PROVIDER_CONFIG, LABEL_PROVIDER_CONFIG_KIND, MSG_BLOCK_DELETION,
    REASON_USAGE_ACCOUNTING, kube_message,
};
use crate::managed::GlobalRateLimiter;
use crate::managed::conditions::set_condition;
use crate::managed::reasons;
use crate::managed::shards::Shards;

/// Usage references remembered by the watch mapper before it starts over.
const MAPPER_MEMORY_LIMIT: usize = 100_000;

/// Requeue after a failed list/delete/finalizer write (upstream's short wait).
pub const REQUEUE_AFTER_ERROR: Duration = Duration::from_secs(30);

/// Usage records per page of a recount.
const USAGE_PAGE: u32 = 500;

/// The shortest time between two recounts of one config that is not being deleted.
/// Upstream recounts on every usage event from its informer cache, which costs nothing; here
/// a recount is a paged list from the API server, and creating N MRs would cost N lists of up
/// to N records. `status.users` therefore lags by up to this much (or [`RECOUNT_PER_USER`]
/// times the last count, when longer); deletion is never delayed.
pub const RECOUNT_INTERVAL: Duration = Duration::from_secs(5);

/// How much longer a config waits between recounts per user it had at the last one: a recount
/// reads one page per [`USAGE_PAGE`] users, so a config with many users is recounted at about
/// two pages per second at most (100,000 users: every 100 s, 200 pages; 5,000 or fewer: every
/// [`RECOUNT_INTERVAL`]). With `--shards`, only the replica owning the config's shard counts.
pub const RECOUNT_PER_USER: Duration = Duration::from_millis(1);

/// How long after a recount that found `users` the config may be recounted again.
pub fn recount_interval(users: i64) -> Duration {
    let per_user = RECOUNT_PER_USER.saturating_mul(u32::try_from(users.max(0)).unwrap_or(u32::MAX));
    RECOUNT_INTERVAL.max(per_user)
}

/// Shared state of one config controller.
pub struct ConfigController {
    client: kube::Client,
    api: ConfigApi,
    kind: ConfigKind,
    component: String,
    limiter: Option<Arc<GlobalRateLimiter>>,
    /// When each config (`namespace/name`) was last recounted, and how long until the next.
    recounted: Mutex<HashMap<String, (Instant, Duration)>>,
    /// Where this controller's cache is published for the resolver.
    stores: Option<Arc<super::ConfigStores>>,
    /// `--shards`: only the replica owning a config's shard counts its users and writes it.
    shards: Option<Arc<Shards>>,
}

/// Errors that end a reconcile with back-off (conflicts and transient API errors).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReconcileError(String);

impl ConfigController {
    /// A controller for one config Kind (`ClusterProviderConfig`, `ProviderConfig` or the
    /// legacy `ProviderConfig`); `component` is the event source (`provider-<name>`).
    pub fn new(client: kube::Client, api: ConfigApi, kind: ConfigKind, component: String) -> Self {
        Self {
            client,
            api,
            kind,
            component,
            limiter: None,
            recounted: Mutex::default(),
            stores: None,
            shards: None,
        }
    }

    /// How long until `config` may be recounted, if it was recounted too recently.
    fn recount_wait(&self, config: &str) -> Option<Duration> {
        let m = self.recounted.lock().ok()?;
        let (at, interval) = m.get(config)?;
        interval.checked_sub(at.elapsed()).filter(|w| !w.is_zero())
    }

    fn counted(&self, config: &str, users: i64) {
        if let Ok(mut m) = self.recounted.lock() {
            m.insert(
                config.to_string(),
                (Instant::now(), recount_interval(users)),
            );
        }
    }

    /// Publishes this controller's cache of its Kind for the resolver.
    pub fn with_config_stores(mut self, stores: Arc<super::ConfigStores>) -> Self {
        self.stores = Some(stores);
        self
    }

    /// With several active replicas (`--shards`): reconciles only the configs of the shards
    /// this replica owns, so one replica, not every one, lists a config's usage records and
    /// writes its status and finalizer (a config of another shard is looked at again every
    /// [`RECOUNT_INTERVAL`], which picks it up after a takeover).
    pub fn with_shards(mut self, shards: Option<Arc<Shards>>) -> Self {
        self.shards = shards;
        self
    }

    /// Runs reconciles under the process-wide reconcile rate limit (§9.5).
    pub fn with_rate_limiter(mut self, limiter: Arc<GlobalRateLimiter>) -> Self {
        self.limiter = Some(limiter);
        self
    }

    fn config_api(&self, namespace: Option<&str>) -> Api<DynamicObject> {
        let ar = self.api.api_resource(self.kind);
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    fn usage_ar(&self) -> ApiResource {
        self.api.api_resource(self.kind.usage_kind())
    }

    /// Runs the controller until `shutdown` resolves.
    pub async fn run(
        self,
        concurrency: u16,
        shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
    ) {
        let ar = self.api.api_resource(self.kind);
        let usage_ar = self.usage_ar();
        let main: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        let usages: Api<DynamicObject> = Api::all_with(self.client.clone(), &usage_ar);
        let mapper = usage_mapper(self.kind, ar.clone());
        let stores = self.stores.clone();
        let kind = self.kind;
        let ctx = Arc::new(self);
        let controller = Controller::new_with(main, watcher::Config::default(), ar);
        if let Some(stores) = stores {
            stores.publish(kind, controller.store());
        }
        controller
            .with_config(ControllerConfig::default().concurrency(concurrency))
            .watches_with(usages, usage_ar, watcher::Config::default(), mapper)
            .graceful_shutdown_on(shutdown)
            .run(reconcile, error_policy, ctx)
            .for_each(|res| async move {
                if let Err(e) = res {
                    tracing::debug!(error = %e, "config controller");
                }
            })
            .await;
    }

    async fn record_warning(&self, obj: &DynamicObject, message: &str) {
        record_event(
            &self.client,
            &self.component,
            obj,
            "Warning",
            REASON_USAGE_ACCOUNTING,
            message,
        )
        .await;
    }
}

/// Maps a usage record to the config(s) to recount: its current reference and, when the
/// reference changed, the previous one.
fn usage_mapper(
    kind: ConfigKind,
    ar: ApiResource,
) -> impl Fn(DynamicObject) -> Vec<ObjectRef<DynamicObject>> + Send + Sync + 'static {
    // Per usage record, the config it referenced last, as `namespace/name` (an `ObjectRef`
    // would carry a copy of the config Kind's `ApiResource` per record).
    let last: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    move |usage: DynamicObject| {
        let key = format!(
            "{}/{}",
            usage.namespace().unwrap_or_default(),
            usage.name_any()
        );
        let current = usage_target(kind, &ar, &usage);
        let mut out = Vec::with_capacity(2);
        if let Ok(mut m) = last.lock() {
            // The mapper cannot tell deletions apart, so records of deleted MRs stay here;
            // bound the memory. Forgetting only loses the "old reference" of a switch that
            // happens later, and that old config is recounted at its own next event.
            if m.len() >= MAPPER_MEMORY_LIMIT && !m.contains_key(&key) {
                m.clear();
            }
            let previous = match &current {
                Some(c) => m.insert(key, config_key(c)),
                None => m.remove(&key),
            };
            if let Some(p) = previous
                && current.as_ref().is_none_or(|c| config_key(c) != p)
            {
                let (ns, name) = p.split_once('/').unwrap_or(("", p.as_str()));
                let r = ObjectRef::new_with(name, ar.clone());
                out.push(if ns.is_empty() { r } else { r.within(ns) });
            }
        }
        out.extend(current);
        out
    }
}

fn config_key(r: &ObjectRef<DynamicObject>) -> String {
    format!("{}/{}", r.namespace.as_deref().unwrap_or_default(), r.name)
}

/// The config of this controller's Kind that a usage references, if any.
fn usage_target(
    kind: ConfigKind,
    ar: &ApiResource,
    usage: &DynamicObject,
) -> Option<ObjectRef<DynamicObject>> {
    let pc = usage.data.get("providerConfigRef")?;
    let name = pc.get("name")?.as_str()?;
    let make = || ObjectRef::new_with(name, ar.clone());
    match kind {
        ConfigKind::LegacyProviderConfig => Some(make()),
        ConfigKind::ClusterProviderConfig | ConfigKind::ProviderConfig => {
            let ref_kind = pc.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            let cluster = ref_kind.starts_with("Cluster");
            match (kind, cluster) {
                (ConfigKind::ClusterProviderConfig, true) => Some(make()),
                (ConfigKind::ProviderConfig, false) => {
                    Some(make().within(&usage.namespace().unwrap_or_default()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn error_policy(
    _obj: Arc<DynamicObject>,
    err: &ReconcileError,
    _ctx: Arc<ConfigController>,
) -> Action {
    tracing::debug!(error = %err, "config reconcile failed; backing off");
    Action::requeue(Duration::from_secs(5))
}

async fn reconcile(
    obj: Arc<DynamicObject>,
    ctx: Arc<ConfigController>,
) -> Result<Action, ReconcileError> {
    let name = obj.name_any();
    // Held until the reconcile ends: the shard is not given up while it writes.
    let _in_flight = match &ctx.shards {
        Some(shards) => {
            let ns = if ctx.kind.namespaced() {
                obj.namespace().unwrap_or_default()
            } else {
                String::new()
            };
            let shard = shards.shard_of_config(ctx.kind.kind(), &ns, &name);
            match shards.begin(shard) {
                Some(f) => Some(f),
                None => return Ok(Action::requeue(RECOUNT_INTERVAL)),
            }
        }
        None => None,
    };
    if let Some(limiter) = &ctx.limiter {
        let key = format!(
            "providerconfig/{}/{}/{name}",
            ctx.kind.kind(),
            obj.namespace().unwrap_or_default()
        );
        let wait = limiter.when(&key);
        if !wait.is_zero() {
            return Ok(Action::requeue(wait));
        }
    }
    let namespace = if ctx.kind.namespaced() {
        obj.namespace()
    } else {
        None
    };
    let configs = ctx.config_api(namespace.as_deref());
    let Some(mut config) = configs
        .get_opt(&name)
        .await
        .map_err(|e| ReconcileError(kube_message(&e)))?
    else {
        return Ok(Action::await_change());
    };

    // List this config's usage records.
    let mut selector = format!("{LABEL_PROVIDER_CONFIG}={name}");
    if !ctx.kind.legacy() {
        selector.push_str(&format!(
            ",{LABEL_PROVIDER_CONFIG_KIND}={}",
            ctx.kind.kind()
        ));
    }
    let usage_ar = ctx.usage_ar();
    let usages: Api<DynamicObject> = match &namespace {
        Some(ns) => Api::namespaced_with(ctx.client.clone(), ns, &usage_ar),
        None => Api::all_with(ctx.client.clone(), &usage_ar),
    };
    let deleting = config.metadata.deletion_timestamp.is_some();
    // A config with thousands of users is recounted at most every RECOUNT_INTERVAL (longer
    // with more users: `recount_interval`) while it is not being deleted (every new MR
    // touches a usage record and enqueues its config).
    let config_key = format!("{}/{name}", namespace.as_deref().unwrap_or_default());
    if !deleting && let Some(wait) = ctx.recount_wait(&config_key) {
        return Ok(Action::requeue(wait));
    }
    let mut users: i64 = 0;
    let mut stray: Vec<(Option<String>, String)> = Vec::new();
    // Metadata only, a page at a time: memory stays bounded whatever the number of users.
    let mut params = ListParams::default().labels(&selector).limit(USAGE_PAGE);
    loop {
        let page = match usages.list_metadata(&params).await {
            Ok(l) => l,
            Err(e) => {
                ctx.record_warning(
                    &config,
                    &format!("cannot list ProviderConfigUsages: {}", kube_message(&e)),
                )
                .await;
                return Ok(Action::requeue(REQUEUE_AFTER_ERROR));
            }
        };
        for u in &page.items {
            let controlled = u
                .metadata
                .owner_references
                .as_ref()
                .is_some_and(|o| o.iter().any(|o| o.controller == Some(true)));
            if controlled {
                users += 1;
            } else {
                stray.push((u.metadata.namespace.clone(), u.name_any()));
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    ctx.counted(&config_key, users);

    // A record without a controller (e.g. stripped by a backup restore) is stray.
    for (ns, usage_name) in stray {
        let ns_api: Api<DynamicObject> = match ns {
            Some(ns) => Api::namespaced_with(ctx.client.clone(), &ns, &usage_ar),
            None => Api::all_with(ctx.client.clone(), &usage_ar),
        };
        match ns_api.delete(&usage_name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => {
                ctx.record_warning(
                    &config,
                    &format!("cannot delete ProviderConfigUsage: {}", kube_message(&e)),
                )
                .await;
                return Ok(Action::requeue(REQUEUE_AFTER_ERROR));
            }
        }
    }

    let has_finalizer = config.finalizers().iter().any(|f| f == FINALIZER_IN_USE);
    if deleting {
        if users > 0 {
            set_status(&mut config, users, true);
            ctx.record_warning(&config, MSG_BLOCK_DELETION).await;
            configs
                .replace_status(&name, &PostParams::default(), &config)
                .await
                .map_err(|e| ReconcileError(kube_message(&e)))?;
            return Ok(Action::await_change());
        }
        if has_finalizer {
            config.finalizers_mut().retain(|f| f != FINALIZER_IN_USE);
            if let Err(e) = configs
                .replace(&name, &PostParams::default(), &config)
                .await
            {
                tracing::debug!(error = %kube_message(&e), "cannot remove finalizer");
                return Ok(Action::requeue(REQUEUE_AFTER_ERROR));
            }
        }
        return Ok(Action::await_change());
    }

    if !has_finalizer {
        config.finalizers_mut().push(FINALIZER_IN_USE.to_string());
        match configs
            .replace(&name, &PostParams::default(), &config)
            .await
        {
            Ok(updated) => config = updated,
            Err(e) => {
                tracing::debug!(error = %kube_message(&e), "cannot add finalizer");
                return Ok(Action::requeue(REQUEUE_AFTER_ERROR));
            }
        }
    }
    let before = config.data.get("status").cloned();
    set_status(&mut config, users, false);
    // Q10: a status PUT that changes nothing is skipped.
    if config.data.get("status") != before.as_ref() {
        configs
            .replace_status(&name, &PostParams::default(), &config)
            .await
            .map_err(|e| ReconcileError(kube_message(&e)))?;
    }
    Ok(Action::await_change())
}

/// Writes `status.users` (omitted when 0) and, when blocking deletion, the Terminating
/// condition.
fn set_status(config: &mut DynamicObject, users: i64, blocking: bool) {
    if !config.data.is_object() {
        config.data = serde_json::json!({});
    }
    let Some(data) = config.data.as_object_mut() else {
        return;
    };
    let status = data
        .entry("status")
        .or_insert_with(|| serde_json::json!({}));
    if !status.is_object() {
        *status = serde_json::json!({});
    }
    let Some(status) = status.as_object_mut() else {
        return;
    };
    if users > 0 {
        status.insert("users".into(), users.into());
    } else {
        status.remove("users");
    }
    if blocking {
        let conds = status
            .entry("conditions")
            .or_insert_with(|| serde_json::json!([]));
        let mut list: Vec<Condition> = serde_json::from_value(conds.clone()).unwrap_or_default();
        set_condition(
            &mut list,
            Condition::new(
                "Terminating",
                true,
                reasons::condition::IN_USE,
                MSG_BLOCK_DELETION,
            ),
        );
        *conds = serde_json::to_value(list).unwrap_or_else(|_| serde_json::json!([]));
    }
}

/// Records a core/v1 Event on an object, aggregating repeats (same object, type, reason and
/// message) into `count` as client-go does. Failures are logged, never returned: an event is
/// best effort.
pub async fn record_event(
    client: &kube::Client,
    component: &str,
    obj: &DynamicObject,
    type_: &str,
    reason: &str,
    message: &str,
) {
    let types = obj.types.clone().unwrap_or_default();
    let ns = obj.namespace().unwrap_or_else(|| "default".to_string());
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let digest = Sha256::digest(format!("{uid}\0{type_}\0{reason}\0{message}\0{component}"));
    let suffix: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let name = format!("{}.{suffix}", obj.name_any());
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    let now = k8s_openapi::jiff::Timestamp::now();
    if let Ok(Some(existing)) = events.get_opt(&name).await {
        let patch = serde_json::json!({
            "count": existing.count.unwrap_or(1) + 1,
            "lastTimestamp": Time(now),
        });
        if let Err(e) = events
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            tracing::debug!(error = %kube_message(&e), "cannot update event");
        }
        return;
    }
    let event = Event {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(ns),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some(types.api_version),
            kind: Some(types.kind),
            name: obj.metadata.name.clone(),
            namespace: obj.namespace(),
            uid: obj.metadata.uid.clone(),
            resource_version: obj.metadata.resource_version.clone(),
            field_path: None,
        },
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        type_: Some(type_.to_string()),
        source: Some(EventSource {
            component: Some(component.to_string()),
            host: None,
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: None::<MicroTime>,
        count: Some(1),
        reporting_component: Some(component.to_string()),
        reporting_instance: Some(component.to_string()),
        ..Event::default()
    };
    if let Err(e) = events.create(&PostParams::default(), &event).await {
        tracing::debug!(error = %kube_message(&e), "cannot record event");
    }
}

/// Labels a test or tool can use to list the usage records of a config.
pub fn usage_selector(kind: ConfigKind, name: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert(LABEL_PROVIDER_CONFIG.to_string(), name.to_string());
    if !kind.legacy() {
        m.insert(
            LABEL_PROVIDER_CONFIG_KIND.to_string(),
            kind.kind().to_string(),
        );
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_with_many_users_are_recounted_less_often() {
        assert_eq!(recount_interval(0), RECOUNT_INTERVAL);
        assert_eq!(recount_interval(-1), RECOUNT_INTERVAL);
        assert_eq!(recount_interval(5_000), RECOUNT_INTERVAL);
        assert_eq!(recount_interval(20_000), Duration::from_secs(20));
        assert_eq!(recount_interval(100_000), Duration::from_secs(100));
        // About two pages a second, whatever the count.
        let pages = 100_000 / i64::from(USAGE_PAGE);
        assert_eq!(
            recount_interval(100_000) / u32::try_from(pages).unwrap_or(1),
            Duration::from_millis(500)
        );
    }

    fn usage(ns: &str, kind: &str, name: &str) -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "artifactory.m.crossplane.io/v1beta1", "kind": "ProviderConfigUsage",
            "metadata": {"name": "u1", "namespace": ns},
            "providerConfigRef": {"kind": kind, "name": name},
            "resourceRef": {"apiVersion": "x/v1", "kind": "K", "name": "n"}
        }))
        .unwrap()
    }

    #[test]
    fn mapper_enqueues_old_and_new() {
        let api = ConfigApi::new("artifactory");
        let ar = api.api_resource(ConfigKind::ClusterProviderConfig);
        let m = usage_mapper(ConfigKind::ClusterProviderConfig, ar);
        let first = m(usage("a", "ClusterProviderConfig", "one"));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].name, "one");
        let second = m(usage("a", "ClusterProviderConfig", "two"));
        let names: Vec<_> = second.iter().map(|r| r.name.clone()).collect();
        assert_eq!(names, vec!["one", "two"]);
        // A namespaced ProviderConfig reference is not this controller's.
        assert!(
            m(usage("a", "ProviderConfig", "p"))
                .iter()
                .all(|r| r.name != "p")
        );
    }

    #[test]
    fn namespaced_mapping_uses_usage_namespace() {
        let api = ConfigApi::new("artifactory");
        let ar = api.api_resource(ConfigKind::ProviderConfig);
        let refs = usage_target(
            ConfigKind::ProviderConfig,
            &ar,
            &usage("b", "ProviderConfig", "p"),
        );
        assert_eq!(refs.unwrap().namespace.as_deref(), Some("b"));
        // An empty kind counts as ProviderConfig.
        assert!(usage_target(ConfigKind::ProviderConfig, &ar, &usage("b", "", "p")).is_some());
    }

    #[test]
    fn status_users_and_terminating() {
        let mut obj: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}
        }))
        .unwrap();
        set_status(&mut obj, 2, true);
        assert_eq!(obj.data["status"]["users"], 2);
        assert_eq!(obj.data["status"]["conditions"][0]["reason"], "InUse");
        set_status(&mut obj, 0, false);
        assert!(obj.data["status"].get("users").is_none());
    }
}
