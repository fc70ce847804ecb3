//! The managed reconciler: the state machine of docs/managed-reconciler.md §2, step by step, for
//! any Kind in either scope, on `DynamicObject`.
//!
//! Each step's comment names its number in `docs/managed-reconciler.md` §2. One
//! call of [`Reconciler::reconcile`] is one reconcile; it returns an [`Outcome`] that the
//! work queue (`controller`) turns into DONE / BACKOFF / AFTER(d).
//!
//! Deviations (documented, all deliberate):
//! - A `forProvider`/`initProvider`/`atProvider` that does not decode into the Kind's types,
//!   or a `...SecretRef` that cannot be read, fails Connect (`connect failed: ...`), which is
//!   where Upjet reads sensitive parameters too.
//! - The Kinds run synchronously (docs/managed-reconciler.md §13 recommends it); for Kinds with
//!   `last_async_operation` the reconciler sets `LastAsyncOperation` itself with Upjet's
//!   reasons and messages, and the error texts carry Upjet's `async <op> failed: ` prefix.
//! - Messages of Kubernetes API errors are the API server's `Status.message` (as Go's
//!   `StatusError.Error()` prints), not kube-rs's debug rendering.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use secrecy::SecretString;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::conditions::{
    AsyncOp, Condition, TYPE_READY, TYPE_SYNCED, get_condition, set_condition,
};
use super::config::{ManagedRef, ProviderConfigReference, ResolvedConfig};
use super::connection::{self, SecretTarget};
use super::context::ControllerContext;
use super::errors::{
    ERR_CONTEXT_DEADLINE, ERR_EXTERNAL_RESOURCE_NOT_EXIST, ERR_GET_MANAGED, ERR_PATCH_MANAGED,
    ERR_RECONCILE_CONNECT, ERR_RECONCILE_CREATE, ERR_RECONCILE_DEADLINE, ERR_RECONCILE_DELETE,
    ERR_RECONCILE_OBSERVE, ERR_RECONCILE_UPDATE, ERR_RESOLVE_REFERENCES,
    ERR_UPDATE_CRITICAL_ANNOTATIONS, ERR_UPDATE_MANAGED, ERR_UPDATE_MANAGED_ANNOTATIONS,
    ERR_UPDATE_MANAGED_STATUS, ERR_UPDATE_OBJECT, MSG_CREATION_INCOMPLETE, StepError, is_not_found,
};
use super::events::{EventRecorder, EventType, InvolvedObject};
use super::explain;
use super::external::{
    ConnectionDetails, Connector, ExternalClient, ExternalError, ExternalObservation, Managed,
    ManagedKind,
};
use super::kind::{KindInfo, Scope};
use super::meta::{self, EXTERNAL_NAME, FINALIZER};
use super::mr_api::MrApi;
use super::policy::PolicyResolver;
use super::reasons::event;
use super::references::{self, KubeLookup, RefContext};

/// The SSA field manager of the reference resolver.
pub const REFERENCE_FIELD_MANAGER: &str = "managed.crossplane.io/api-simple-reference-resolver";

/// The result of one reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Finished; nothing queued; the failure count is reset.
    Done,
    /// Requeue through the per-object exponential limiter.
    Backoff,
    /// Reset the failure count and requeue after the duration.
    After(Duration),
    /// An error: requeue through the limiter (like BACKOFF), counted as an error in metrics.
    Error(String),
}

// Kept at its old path for existing users; the text helpers live in `errors`.
pub use super::errors::kube_message;

/// Seconds from a Kubernetes timestamp until now.
fn secs_since(t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time) -> f64 {
    k8s_openapi::jiff::Timestamp::now()
        .duration_since(t.0)
        .as_secs_f64()
}

/// The generic reconciler of one Kind in one scope.
pub struct Reconciler<K: ManagedKind> {
    kind: Arc<K>,
    connector: Arc<dyn Connector<K>>,
    ctx: ControllerContext,
    scope: Scope,
    ar: ApiResource,
    recorder: EventRecorder,
    gvk_label: String,
}

/// The state of one reconcile.
struct Run {
    api: MrApi,
    obj: DynamicObject,
    token: Option<String>,
    external_name_at_start: String,
    /// `Synced=True` for the current generation when the reconcile began: what an update
    /// changes now was changed outside Crossplane (see [`explain::in_sync`]).
    in_sync_at_start: bool,
    /// The status as the API server last answered it (the get, or the answer of our last
    /// write): a final status update that would send exactly this is skipped (QUIRK Q10).
    server_status: Option<Value>,
    /// The external name step 7 set but no write has stored yet (QUIRK Q14): it goes with
    /// this reconcile's first full update, or on its own before the final status update.
    unsaved_external_name: Option<String>,
}

impl Run {
    /// The object as the API server answered a write or a read. An external name not yet
    /// stored is kept on it (a server-side apply or a status update answers without it).
    fn stored(&mut self, o: DynamicObject) {
        self.server_status = o.data.get("status").cloned();
        self.obj = without_managed_fields(o);
        if let Some(n) = &self.unsaved_external_name {
            set_annotation(&mut self.obj, EXTERNAL_NAME, n);
        }
    }

    /// A full update (whose body carries the whole object) was stored.
    fn updated(&mut self, o: DynamicObject) {
        self.unsaved_external_name = None;
        self.stored(o);
    }
}

/// The object without `metadata.managedFields`, which no step reads. Every write of a
/// reconcile sends the whole object, and an update without `managedFields` keeps the stored
/// ones (the API server then records the update's own changes as ever; only a list with one
/// empty entry would reset them): each write's body is the object alone, often less than
/// half as long for an MR that several managers wrote.
fn without_managed_fields(mut o: DynamicObject) -> DynamicObject {
    o.metadata.managed_fields = None;
    o
}

/// The MR's annotations, borrowed (most reads want one key, not a copy of all of them).
fn annotations(obj: &DynamicObject) -> &BTreeMap<String, String> {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    obj.metadata.annotations.as_ref().unwrap_or(&NONE)
}

fn set_annotation(obj: &mut DynamicObject, k: &str, v: &str) {
    obj.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(k.to_string(), v.to_string());
}

fn spec(obj: &DynamicObject) -> Option<&Value> {
    obj.data.get("spec")
}

#[expect(
    clippy::expect_used,
    reason = "each value is made an object just before it is taken as one"
)]
fn status_mut(obj: &mut DynamicObject) -> &mut Map<String, Value> {
    if !obj.data.is_object() {
        obj.data = Value::Object(Map::new());
    }
    let data = obj
        .data
        .as_object_mut()
        .expect("data was just made an object");
    let st = data
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if !st.is_object() {
        *st = Value::Object(Map::new());
    }
    st.as_object_mut().expect("status was just made an object")
}

fn conditions_of(obj: &DynamicObject) -> Vec<Condition> {
    obj.data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| Vec::<Condition>::deserialize(c).ok())
        .unwrap_or_default()
}

fn write_conditions(obj: &mut DynamicObject, list: &[Condition]) {
    let v = serde_json::to_value(list).unwrap_or(Value::Array(Vec::new()));
    status_mut(obj).insert("conditions".into(), v);
}

/// Deep-merge `over` onto `base`: objects merge recursively, every other value in `over` wins.
pub fn deep_merge(base: &Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            let mut out = b.clone();
            for (k, ov) in o {
                let merged = match b.get(k) {
                    Some(bv) => deep_merge(bv, ov),
                    None => ov.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (_, o) => o.clone(),
    }
}

fn strip_nulls(v: &mut Value) {
    if let Value::Object(m) = v {
        m.retain(|_, x| !x.is_null());
        for x in m.values_mut() {
            strip_nulls(x);
        }
    }
}

impl<K: ManagedKind> Reconciler<K> {
    /// A reconciler for `kind` in `scope`.
    pub fn new(
        kind: Arc<K>,
        connector: Arc<dyn Connector<K>>,
        ctx: ControllerContext,
        scope: Scope,
    ) -> Self {
        let info = kind.info();
        let ar = info.api_resource(scope);
        let recorder = EventRecorder::new(ctx.client.clone(), info.controller_name(scope));
        let gvk_label = info.gvk_label(scope);
        Reconciler {
            kind,
            connector,
            ctx,
            scope,
            ar,
            recorder,
            gvk_label,
        }
    }

    fn info(&self) -> &KindInfo {
        self.kind.info()
    }

    fn api(&self, namespace: Option<&str>) -> MrApi {
        let ns = namespace.filter(|_| self.scope.is_namespaced());
        MrApi::new(self.ctx.client.clone(), &self.ar, ns)
    }

    fn metric_key(&self, namespace: Option<&str>, name: &str) -> String {
        format!("{}/{}/{}", self.gvk_label, namespace.unwrap_or(""), name)
    }

    /// Reconcile one MR: the whole §2 state machine under the overall deadline
    /// (`timeout + 30 s`, docs/managed-reconciler.md §1.5).
    pub async fn reconcile(&self, namespace: Option<&str>, name: &str) -> Outcome {
        let overall = self.ctx.timeout + Duration::from_secs(30);
        match tokio::time::timeout(overall, self.reconcile_inner(namespace, name)).await {
            Ok(o) => o,
            Err(_) => Outcome::Error(ERR_RECONCILE_DEADLINE.into()),
        }
    }

    fn mark(&self, run: &mut Run, c: Condition) {
        let generation = run.obj.metadata.generation.unwrap_or(0);
        let mut list = conditions_of(&run.obj);
        set_condition(&mut list, c.with_generation(generation));
        write_conditions(&mut run.obj, &list);
    }

    /// Set a condition as the external client would: no observedGeneration.
    fn mark_external(&self, run: &mut Run, c: Condition) {
        let mut list = conditions_of(&run.obj);
        set_condition(&mut list, c);
        write_conditions(&mut run.obj, &list);
    }

    async fn event(&self, run: &Run, t: EventType, reason: &str, message: &str) {
        let obj = InvolvedObject {
            api_version: self.ar.api_version.clone(),
            kind: self.ar.kind.clone(),
            name: run.obj.metadata.name.clone().unwrap_or_default(),
            namespace: run.obj.metadata.namespace.clone(),
            uid: run.obj.metadata.uid.clone().unwrap_or_default(),
            resource_version: run.obj.metadata.resource_version.clone(),
        };
        let mut ann = BTreeMap::new();
        ann.insert(
            "external-name".to_string(),
            run.external_name_at_start.clone(),
        );
        self.recorder.record(&obj, ann, t, reason, message).await;
    }

    /// "finish with R": a status update, then R (docs/managed-reconciler.md §2 preamble).
    /// Step 10 failed (the MR's view or the connection): a warning event, Synced=False,
    /// back off.
    async fn connect_failed(&self, run: &mut Run, m: &str) -> Outcome {
        self.event(
            run,
            EventType::Warning,
            event::CANNOT_CONNECT_TO_PROVIDER,
            m,
        )
        .await;
        self.mark(
            run,
            Condition::reconcile_error(format!("{ERR_RECONCILE_CONNECT}: {m}")),
        );
        self.finish(run, Outcome::Backoff).await
    }

    async fn finish(&self, run: &mut Run, mut r: Outcome) -> Outcome {
        match self.save_external_name(run).await {
            Ok(()) => {}
            Err(StepError::Conflict(_)) => return Outcome::Backoff,
            Err(StepError::Failed(m)) => {
                self.mark(run, Condition::reconcile_error(m));
                r = Outcome::Backoff;
            }
        }
        if let Some(t) = &run.token {
            status_mut(&mut run.obj)
                .insert("lastHandledReconcileAt".into(), Value::String(t.clone()));
        }
        // QUIRK Q10: upstream always sends the final status update; one that changes nothing
        // (an up-to-date poll) is skipped, which saves the API server a write per MR and poll.
        if run.obj.data.get("status") == run.server_status.as_ref() {
            return r;
        }
        let name = run.obj.metadata.name.clone().unwrap_or_default();
        match run
            .api
            .replace_status(&name, &PostParams::default(), &run.obj)
            .await
        {
            Ok(o) => {
                run.stored(o);
                r
            }
            Err(e) => match StepError::from(e) {
                StepError::Conflict(_) => Outcome::Backoff,
                StepError::Failed(m) => Outcome::Error(format!("{ERR_UPDATE_MANAGED_STATUS}: {m}")),
            },
        }
    }

    /// Step 7's write, when no full update of this reconcile has carried the external name
    /// yet (QUIRK Q14). On failure: Warning `CannotInitializeManagedResource`, and the text
    /// for `Synced=False`.
    async fn save_external_name(&self, run: &mut Run) -> Result<(), StepError> {
        if run.unsaved_external_name.is_none() {
            return Ok(());
        }
        // Upstream stores it before any step changes the status: keep this reconcile's.
        let status = run.obj.data.get("status").cloned();
        match self.full_update(run).await {
            Ok(()) => {
                if let (Some(st), Some(d)) = (status, run.obj.data.as_object_mut()) {
                    d.insert("status".into(), st);
                }
                Ok(())
            }
            Err(c @ StepError::Conflict(_)) => Err(c),
            Err(StepError::Failed(m)) => {
                let msg = format!("{ERR_UPDATE_MANAGED}: {m}");
                self.event(
                    run,
                    EventType::Warning,
                    event::CANNOT_INITIALIZE_MANAGED_RESOURCE,
                    &msg,
                )
                .await;
                Err(StepError::Failed(msg))
            }
        }
    }

    /// A full update guarded by resourceVersion; the response replaces the in-memory object.
    async fn full_update(&self, run: &mut Run) -> Result<(), StepError> {
        Ok(self.replace(run).await?)
    }

    /// [`Self::full_update`] with the Kubernetes error, for callers that treat a 404 apart.
    async fn replace(&self, run: &mut Run) -> Result<(), kube::Error> {
        let name = run.obj.metadata.name.clone().unwrap_or_default();
        let o = run
            .api
            .replace(&name, &PostParams::default(), &run.obj)
            .await?;
        run.updated(o);
        Ok(())
    }

    /// The critical annotation updater (docs/managed-reconciler.md §4.3): retries any error 5
    /// times, 10 ms apart; on a conflict re-reads the object and merges our annotations over it.
    async fn update_critical_annotations(&self, run: &mut Run) -> Result<(), StepError> {
        let ours = annotations(&run.obj).clone();
        let name = run.obj.metadata.name.clone().unwrap_or_default();
        let mut last: Option<StepError> = None;
        for attempt in 0..5 {
            if attempt > 0 {
                let jitter = rand::random_range(0.0..=0.1);
                tokio::time::sleep(Duration::from_secs_f64(0.01 * (1.0 + jitter))).await;
            }
            match run
                .api
                .replace(&name, &PostParams::default(), &run.obj)
                .await
            {
                Ok(o) => {
                    run.updated(o);
                    return Ok(());
                }
                Err(e) => {
                    let e = StepError::from(e);
                    if e.is_conflict() {
                        match run.api.get(&name).await {
                            Ok(fresh) => {
                                run.stored(fresh);
                                let a = run
                                    .obj
                                    .metadata
                                    .annotations
                                    .get_or_insert_with(BTreeMap::new);
                                for (k, v) in &ours {
                                    a.insert(k.clone(), v.clone());
                                }
                            }
                            Err(ge) => {
                                last = Some(ge.into());
                                continue;
                            }
                        }
                    }
                    last = Some(e);
                }
            }
        }
        match last {
            Some(e) => Err(e.context(ERR_UPDATE_CRITICAL_ANNOTATIONS)),
            None => Ok(()),
        }
    }

    /// Remove our finalizer with a full update; NotFound counts as success.
    async fn remove_finalizer(&self, run: &mut Run) -> Result<(), StepError> {
        let Some(fins) = run.obj.metadata.finalizers.as_mut() else {
            return Ok(());
        };
        if !fins.iter().any(|f| f == FINALIZER) {
            return Ok(());
        }
        fins.retain(|f| f != FINALIZER);
        match self.replace(run).await {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => match StepError::from(e) {
                c @ StepError::Conflict(_) => Err(c),
                f => Err(f.context(ERR_UPDATE_OBJECT)),
            },
        }
    }

    fn record_deleted_metric(&self, run: &Run) {
        let since = run
            .obj
            .metadata
            .deletion_timestamp
            .as_ref()
            .map(secs_since)
            .unwrap_or(0.0);
        let key = self.metric_key(
            run.obj.metadata.namespace.as_deref(),
            run.obj.metadata.name.as_deref().unwrap_or(""),
        );
        self.ctx
            .metrics
            .record_deleted(&key, &self.gvk_label, since);
    }

    fn poll_after(&self, run: &Run) -> Outcome {
        let d = meta::effective_poll(
            annotations(&run.obj),
            self.ctx.poll,
            self.ctx.min_poll_interval,
        );
        Outcome::After(meta::jittered(d, self.ctx.poll_jitter))
    }

    async fn with_timeout<T>(
        &self,
        f: impl Future<Output = Result<T, ExternalError>>,
    ) -> Result<T, ExternalError> {
        match tokio::time::timeout(self.ctx.timeout, f).await {
            Ok(r) => r,
            // The call was cut off: it may have taken effect.
            Err(_) => Err(ExternalError::msg(ERR_CONTEXT_DEADLINE).outcome_unknown()),
        }
    }

    fn err_text(&self, op: AsyncOp, e: &ExternalError) -> String {
        if self.info().last_async_operation {
            let verb = match op {
                AsyncOp::Create => "create",
                AsyncOp::Update => "update",
                AsyncOp::Delete => "delete",
            };
            format!("async {verb} failed: {e}")
        } else {
            e.to_string()
        }
    }

    fn mark_async(&self, run: &mut Run, result: Result<(), (AsyncOp, &str)>) {
        if !self.info().last_async_operation {
            return;
        }
        match result {
            Ok(()) => self.mark_external(run, Condition::async_success()),
            Err((op, e)) => {
                // The text already carries `async <op> failed: `.
                let mut c = Condition::async_failure(op, "");
                c.message = e.to_string();
                self.mark_external(run, c)
            }
        }
    }

    fn managed_ref(&self, obj: &DynamicObject) -> ManagedRef {
        let pcr = spec(obj).and_then(|s| s.get("providerConfigRef"));
        let reference = match self.scope {
            Scope::Namespaced => Some(match pcr {
                Some(r) => ProviderConfigReference {
                    kind: Some(
                        r.get("kind")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    ),
                    name: r
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                },
                None => ProviderConfigReference {
                    kind: Some("ClusterProviderConfig".into()),
                    name: "default".into(),
                },
            }),
            Scope::Cluster => Some(ProviderConfigReference {
                kind: None,
                name: pcr
                    .and_then(|r| r.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("default")
                    .to_string(),
            }),
        };
        ManagedRef {
            scope: self.scope,
            api_version: self.ar.api_version.clone(),
            kind: self.ar.kind.clone(),
            name: obj.metadata.name.clone().unwrap_or_default(),
            namespace: obj.metadata.namespace.clone(),
            uid: obj.metadata.uid.clone().unwrap_or_default(),
            provider_config_ref: reference,
        }
    }

    /// Build the adapter's view of the MR.
    fn view(&self, obj: &DynamicObject, policies: &PolicyResolver) -> Result<Managed<K>, String> {
        view_of(self.scope, obj, policies)
    }

    async fn read_secrets(
        &self,
        obj: &DynamicObject,
    ) -> Result<BTreeMap<String, SecretString>, String> {
        read_secrets(
            &self.ctx.client,
            self.info(),
            self.scope,
            self.ctx.management_policies_enabled,
            obj,
        )
        .await
    }

    async fn connect(
        &self,
        obj: &DynamicObject,
        view: &mut Managed<K>,
    ) -> Result<Box<dyn ExternalClient<K>>, StepError> {
        let mref = self.managed_ref(obj);
        let fut = async {
            self.ctx
                .resolver
                .track_usage(&mref)
                .await
                .map_err(|e| StepError::new(e.is_conflict(), e.to_string()))?;
            let cfg: ResolvedConfig = self
                .ctx
                .resolver
                .resolve(&mref)
                .await
                .map_err(|e| StepError::new(e.is_conflict(), e.to_string()))?;
            view.secrets = self.read_secrets(obj).await.map_err(StepError::Failed)?;
            self.connector
                .connect(&cfg, view)
                .await
                .map_err(|e| StepError::Failed(e.to_string()))
        };
        match tokio::time::timeout(self.ctx.timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(StepError::Failed(ERR_CONTEXT_DEADLINE.into())),
        }
    }

    fn secret_target(&self, obj: &DynamicObject) -> Option<SecretTarget> {
        let r = spec(obj).and_then(|s| s.get("writeConnectionSecretToRef"))?;
        let name = r.get("name").and_then(Value::as_str)?.to_string();
        if name.is_empty() {
            return None;
        }
        let namespace = if self.scope.is_namespaced() {
            obj.metadata.namespace.clone().unwrap_or_default()
        } else {
            r.get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string()
        };
        Some(SecretTarget {
            name,
            namespace,
            owner: OwnerReference {
                api_version: self.ar.api_version.clone(),
                kind: self.ar.kind.clone(),
                name: obj.metadata.name.clone().unwrap_or_default(),
                uid: obj.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            },
        })
    }

    /// Publish connection details; on failure, record `CannotPublishConnectionDetails`, mark
    /// `Synced=False` (after `extra`, e.g. `Creating`) and return the reconcile's outcome. A
    /// conflict returns a silent back-off.
    async fn publish_or_fail(
        &self,
        run: &mut Run,
        d: &ConnectionDetails,
        extra: Option<Condition>,
    ) -> Option<Outcome> {
        match self.publish(&run.obj, d).await {
            Ok(()) => None,
            Err(StepError::Conflict(_)) => Some(Outcome::Backoff),
            Err(StepError::Failed(m)) => {
                self.event(
                    run,
                    EventType::Warning,
                    event::CANNOT_PUBLISH_CONNECTION_DETAILS,
                    &m,
                )
                .await;
                if let Some(c) = extra {
                    self.mark(run, c);
                }
                self.mark(run, Condition::reconcile_error(m));
                Some(self.finish(run, Outcome::Backoff).await)
            }
        }
    }

    /// Publish the details to the MR's connection Secret, if it names one.
    async fn publish(&self, obj: &DynamicObject, d: &ConnectionDetails) -> Result<(), StepError> {
        let Some(t) = self.secret_target(obj) else {
            return Ok(());
        };
        connection::publish(&self.ctx.client, &t, d)
            .await
            .map_err(|e| StepError::new(e.conflict, e.message))
    }

    /// Copy the adapter's status changes (atProvider, conditions) into the object. Only the
    /// conditions the adapter changed during the call (against `before`, the view's conditions
    /// when the call began) are copied: the view's other conditions are a stale copy, and
    /// writing them back would undo what the reconciler marked since (e.g. `Available`).
    fn apply_view_status(&self, run: &mut Run, view: &Managed<K>, before: &[Condition]) {
        // A `null` atProvider (Value-typed Kinds before the first observation) is not
        // written: a structural schema has no nullable atProvider.
        if let Ok(v) = serde_json::to_value(&view.at_provider)
            && !v.is_null()
        {
            status_mut(&mut run.obj).insert("atProvider".into(), v);
        }
        let mut list = conditions_of(&run.obj);
        for c in view.conditions.iter().filter(|c| !before.contains(c)) {
            set_condition(&mut list, c.clone());
        }
        write_conditions(&mut run.obj, &list);
    }

    /// Copy the adapter's annotation and external-name changes into the object.
    fn apply_view_annotations(&self, run: &mut Run, view: &Managed<K>) {
        let a = run
            .obj
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new);
        for (k, v) in &view.annotations {
            if k != EXTERNAL_NAME {
                a.insert(k.clone(), v.clone());
            }
        }
        if !view.external_name.is_empty() {
            a.insert(EXTERNAL_NAME.into(), view.external_name.clone());
        }
    }

    async fn reconcile_inner(&self, namespace: Option<&str>, name: &str) -> Outcome {
        let api = self.api(namespace);

        // Step 1: get.
        let obj = match api.get_opt(name).await {
            Ok(Some(o)) => o,
            Ok(None) => return Outcome::Done,
            Err(e) => {
                return Outcome::Error(format!("{ERR_GET_MANAGED}: {}", kube_message(&e)));
            }
        };
        let external_name = annotations(&obj)
            .get(EXTERNAL_NAME)
            .cloned()
            .unwrap_or_default();
        let in_sync_at_start =
            explain::in_sync(&conditions_of(&obj), obj.metadata.generation.unwrap_or(0));
        let server_status = obj.data.get("status").cloned();
        let mut run = Run {
            api,
            obj: without_managed_fields(obj),
            token: None,
            external_name_at_start: external_name,
            in_sync_at_start,
            server_status,
            unsaved_external_name: None,
        };
        let metric_key = self.metric_key(namespace, name);
        if get_condition(&conditions_of(&run.obj), TYPE_SYNCED).is_none() {
            let since = run
                .obj
                .metadata
                .creation_timestamp
                .as_ref()
                .map(secs_since)
                .unwrap_or(0.0);
            self.ctx
                .metrics
                .record_first_reconcile(&metric_key, &self.gvk_label, since);
        }
        if self.ctx.debug {
            tracing::debug!(
                controller = %self.info().controller_name(self.scope),
                namespace = namespace.unwrap_or(""),
                name,
                uid = run.obj.metadata.uid.as_deref().unwrap_or(""),
                version = run.obj.metadata.resource_version.as_deref().unwrap_or(""),
                external_name = %run.external_name_at_start,
                "Reconciling"
            );
        }

        // Step 2: policies.
        let sp = spec(&run.obj);
        let policies_raw: Option<Vec<String>> = sp
            .and_then(|s| s.get("managementPolicies"))
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        let deletion_policy = sp
            .and_then(|s| s.get("deletionPolicy"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let policies = PolicyResolver::new(
            policies_raw,
            self.ctx.management_policies_enabled,
            !self.scope.is_namespaced(),
            deletion_policy,
        );

        // Step 3: paused.
        let ann = annotations(&run.obj);
        if meta::is_paused(ann) || policies.is_paused() {
            self.event(
                &run,
                EventType::Normal,
                event::RECONCILIATION_PAUSED,
                "Reconciliation is paused either through the `spec.managementPolicies` or the pause annotation",
            )
            .await;
            self.mark(&mut run, Condition::reconcile_paused());
            return self.finish(&mut run, Outcome::Done).await;
        }

        // Step 4: reconcile-request token.
        if let Some(tok) = ann
            .get(meta::RECONCILE_REQUESTED_AT)
            .filter(|t| !t.is_empty())
        {
            let handled = run
                .obj
                .data
                .get("status")
                .and_then(|s| s.get("lastHandledReconcileAt"))
                .and_then(Value::as_str);
            if handled != Some(tok.as_str()) {
                self.event(
                    &run,
                    EventType::Normal,
                    event::RECONCILE_REQUEST_HANDLED,
                    "Handling reconcile request",
                )
                .await;
                run.token = Some(tok.clone());
            }
        }

        // Step 5: validate the policies.
        if let Err(msg) = policies.validate() {
            self.event(
                &run,
                EventType::Warning,
                event::CANNOT_USE_INVALID_MANAGEMENT_POLICY,
                &msg,
            )
            .await;
            self.mark(&mut run, Condition::reconcile_error(msg));
            return self.finish(&mut run, Outcome::Done).await;
        }

        let deleting = run.obj.metadata.deletion_timestamp.is_some();

        // Step 6: deletion without Delete (orphan). Unpublishing does nothing (§10).
        if deleting && !policies.should_delete() {
            return match self.remove_finalizer(&mut run).await {
                Ok(()) => {
                    self.record_deleted_metric(&run);
                    Outcome::Done
                }
                Err(StepError::Conflict(_)) => Outcome::Backoff,
                Err(StepError::Failed(m)) => {
                    self.mark(&mut run, Condition::deleting());
                    self.mark(&mut run, Condition::reconcile_error(m));
                    self.finish(&mut run, Outcome::Backoff).await
                }
            };
        }

        // Step 7: initialise the external name. Outside a deletion it is set here and stored
        // by this reconcile's first full update (the finalizer's or create-pending's, before
        // Create), or alone before its final status update (QUIRK Q14).
        if self.info().identifier.initialises_external_name()
            && annotations(&run.obj)
                .get(EXTERNAL_NAME)
                .is_none_or(|v| v.is_empty())
        {
            set_annotation(&mut run.obj, EXTERNAL_NAME, name);
            if !deleting {
                run.unsaved_external_name = Some(name.to_string());
            } else if let Err(e) = self.full_update(&mut run).await {
                let StepError::Failed(m) = e else {
                    return Outcome::Backoff;
                };
                let msg = format!("{ERR_UPDATE_MANAGED}: {m}");
                self.event(
                    &run,
                    EventType::Warning,
                    event::CANNOT_INITIALIZE_MANAGED_RESOURCE,
                    &msg,
                )
                .await;
                self.mark(&mut run, Condition::reconcile_error(msg));
                return self.finish(&mut run, Outcome::Backoff).await;
            }
        }

        // Step 8: creation-incomplete guard. `deterministicExternalName` comes from the
        // identifier strategy (docs/managed-reconciler.md §16 Q6): a deterministic identifier lets
        // Observe tell whether the interrupted create happened, so only server-assigned IDs stop
        // here. The annotations are left as they are: the next Create rewrites pending and
        // succeeded.
        let incomplete = meta::external_create_incomplete(annotations(&run.obj));
        if incomplete && self.info().identifier.is_deterministic() {
            tracing::debug!(
                controller = %self.info().controller_name(self.scope),
                namespace = namespace.unwrap_or(""),
                name,
                "Cannot determine creation result, but proceeding due to deterministic external name"
            );
        } else if incomplete {
            self.event(
                &run,
                EventType::Warning,
                event::CANNOT_INITIALIZE_MANAGED_RESOURCE,
                MSG_CREATION_INCOMPLETE,
            )
            .await;
            self.mark(&mut run, Condition::creating());
            self.mark(
                &mut run,
                Condition::reconcile_error(MSG_CREATION_INCOMPLETE),
            );
            return self.finish(&mut run, Outcome::Done).await;
        }

        // Step 9: references (not while deleting).
        if !deleting && !self.info().references.is_empty() {
            match self.resolve_references(&mut run).await {
                Ok(()) => {}
                Err(StepError::Conflict(_)) => return Outcome::Backoff,
                Err(StepError::Failed(msg)) => {
                    self.event(
                        &run,
                        EventType::Warning,
                        event::CANNOT_RESOLVE_RESOURCE_REFERENCES,
                        &msg,
                    )
                    .await;
                    self.mark(&mut run, Condition::reconcile_error(msg));
                    return self.finish(&mut run, Outcome::Backoff).await;
                }
            }
        }

        // Step 10: connect.
        let mut view = match self.view(&run.obj, &policies) {
            Ok(v) => v,
            Err(m) => return self.connect_failed(&mut run, &m).await,
        };
        let client = match self.connect(&run.obj, &mut view).await {
            Ok(c) => c,
            Err(StepError::Conflict(_)) => return Outcome::Backoff,
            Err(StepError::Failed(m)) => return self.connect_failed(&mut run, &m).await,
        };

        let outcome = self
            .connected(&mut run, &policies, client.as_ref(), view, &metric_key)
            .await;

        // Disconnect on every exit path, after the status update.
        if let Err(e) = self.with_timeout(client.disconnect()).await {
            self.event(
                &run,
                EventType::Warning,
                event::CANNOT_DISCONNECT_FROM_PROVIDER,
                &e.to_string(),
            )
            .await;
        }
        outcome
    }

    /// Resolve references and persist them with one SSA patch.
    async fn resolve_references(&self, run: &mut Run) -> Result<(), StepError> {
        let controller_uid = run
            .obj
            .metadata
            .owner_references
            .as_ref()
            .and_then(|o| o.iter().find(|r| r.controller == Some(true)))
            .map(|r| r.uid.clone());
        let lookup = KubeLookup {
            client: &self.ctx.client,
            scope: self.scope,
        };
        let rctx = RefContext {
            scope: self.scope,
            namespace: run.obj.metadata.namespace.as_deref(),
            controller_uid: controller_uid.as_deref(),
        };
        let mut spec_diff = Map::new();
        for (key, block) in [
            ("forProvider", "ForProvider"),
            ("initProvider", "InitProvider"),
        ] {
            let Some(before) = spec(&run.obj).and_then(|s| s.get(key)).cloned() else {
                continue;
            };
            let mut after = before.clone();
            references::resolve_all(&lookup, &rctx, &self.info().references, &mut after, block)
                .await
                .map_err(|e| {
                    StepError::Failed(format!("{ERR_RESOLVE_REFERENCES}: {}", e.message))
                })?;
            if let Some(d) = references::merge_diff(&before, &after) {
                spec_diff.insert(key.to_string(), d);
            }
        }
        if spec_diff.is_empty() {
            return Ok(());
        }
        let mut metadata = Map::new();
        metadata.insert(
            "name".into(),
            Value::String(run.obj.metadata.name.clone().unwrap_or_default()),
        );
        if let Some(ns) = &run.obj.metadata.namespace {
            metadata.insert("namespace".into(), Value::String(ns.clone()));
        }
        let body = serde_json::json!({
            "apiVersion": self.ar.api_version,
            "kind": self.ar.kind,
            "metadata": metadata,
            "spec": spec_diff,
        });
        let name = run.obj.metadata.name.clone().unwrap_or_default();
        let pp = PatchParams::apply(REFERENCE_FIELD_MANAGER).force();
        match run.api.patch(&name, &pp, &Patch::Apply(&body)).await {
            Ok(o) => {
                // Carry on with the resolved values; keep this reconcile's in-memory status.
                let status = run.obj.data.get("status").cloned();
                run.stored(o);
                if let (Some(st), Some(d)) = (status, run.obj.data.as_object_mut()) {
                    d.insert("status".into(), st);
                }
                Ok(())
            }
            Err(e) => Err(StepError::from(e)
                .context(&format!("{ERR_RESOLVE_REFERENCES}: {ERR_PATCH_MANAGED}"))),
        }
    }

    /// Steps 11 to 21, with a connected client.
    async fn connected(
        &self,
        run: &mut Run,
        policies: &PolicyResolver,
        client: &dyn ExternalClient<K>,
        mut view: Managed<K>,
        metric_key: &str,
    ) -> Outcome {
        let deleting = run.obj.metadata.deletion_timestamp.is_some();

        // Step 11: observe. Outside a delete the adapter sees no Ready condition, so one it
        // sets is its own; during a delete it sees the Deleting condition (which tells it
        // whether the delete call already succeeded).
        if !deleting {
            view.conditions.retain(|c| c.type_ != TYPE_READY);
        }
        let before_observe = view.conditions.clone();
        let obs: ExternalObservation = match self.with_timeout(client.observe(&mut view)).await {
            Ok(o) => o,
            Err(e) => {
                let m = e.to_string();
                self.event(
                    run,
                    EventType::Warning,
                    event::CANNOT_OBSERVE_EXTERNAL_RESOURCE,
                    &m,
                )
                .await;
                self.mark(
                    run,
                    Condition::reconcile_error(format!("{ERR_RECONCILE_OBSERVE}: {m}")),
                );
                return self.finish(run, Outcome::Backoff).await;
            }
        };
        if self.ctx.debug && (!obs.diff.is_empty() || !obs.changes.is_empty()) {
            tracing::debug!(
                name = %view.name,
                diff = %obs.diff,
                fields = %explain::named_paths(&obs.changes),
                drift = run.in_sync_at_start,
                "observed a diff"
            );
        }
        self.apply_view_status(run, &view, &before_observe);
        // An adapter that set Ready itself during Observe (an object that exists but is not
        // available yet, such as a report still generating) keeps it, as in Go, where the
        // adapter sets Available.
        let adapter_ready = !deleting && view.conditions.iter().any(|c| c.type_ == TYPE_READY);
        if obs.resource_exists {
            if !adapter_ready {
                self.mark_external(run, Condition::available());
            }
            if obs.resource_up_to_date && !deleting {
                self.mark_async(run, Ok(()));
            }
        }

        // Step 12: observe-only and missing.
        if !obs.resource_exists && policies.should_only_observe() {
            let m = ERR_EXTERNAL_RESOURCE_NOT_EXIST;
            self.event(
                run,
                EventType::Warning,
                event::CANNOT_OBSERVE_EXTERNAL_RESOURCE,
                m,
            )
            .await;
            self.mark(
                run,
                Condition::reconcile_error(format!("{ERR_RECONCILE_OBSERVE}: {m}")),
            );
            let after = self.poll_after(run);
            return self.finish(run, after).await;
        }

        // Step 13: creation grace period.
        if !obs.resource_exists
            && let Some(t) =
                meta::parse_stamp(annotations(&run.obj).get(meta::EXTERNAL_CREATE_SUCCEEDED))
        {
            let age = Utc::now() - t;
            if age.to_std().unwrap_or(Duration::ZERO) < self.ctx.creation_grace_period {
                self.event(
                    run,
                    EventType::Normal,
                    event::PENDING_EXTERNAL_RESOURCE,
                    "Waiting for external resource existence to be confirmed",
                )
                .await;
                // No status update here; an external name step 7 set is still stored.
                return match self.save_external_name(run).await {
                    Err(StepError::Failed(m)) => {
                        self.mark(run, Condition::reconcile_error(m));
                        self.finish(run, Outcome::Backoff).await
                    }
                    _ => Outcome::Backoff,
                };
            }
        }

        // Step 14: deletion with Delete allowed.
        if deleting {
            let fins = run
                .obj
                .metadata
                .finalizers
                .as_ref()
                .map(Vec::len)
                .unwrap_or(0);
            if fins > 1 {
                return Outcome::Backoff;
            }
            if obs.resource_exists {
                match self.with_timeout(client.delete(&mut view)).await {
                    Err(e) => {
                        let m = self.err_text(AsyncOp::Delete, &e);
                        self.event(
                            run,
                            EventType::Warning,
                            event::CANNOT_DELETE_EXTERNAL_RESOURCE,
                            &m,
                        )
                        .await;
                        self.mark(run, Condition::deleting());
                        self.mark(
                            run,
                            Condition::reconcile_error(format!("{ERR_RECONCILE_DELETE}: {m}")),
                        );
                        self.mark_async(run, Err((AsyncOp::Delete, &m)));
                        return self.finish(run, Outcome::Backoff).await;
                    }
                    Ok(_) => {
                        self.event(
                            run,
                            EventType::Normal,
                            event::DELETED_EXTERNAL_RESOURCE,
                            "Successfully requested deletion of external resource",
                        )
                        .await;
                        self.mark(run, Condition::deleting());
                        self.mark(run, Condition::reconcile_success());
                        self.mark_async(run, Ok(()));
                        return self.finish(run, Outcome::Backoff).await;
                    }
                }
            }
            return match self.remove_finalizer(run).await {
                Ok(()) => {
                    self.record_deleted_metric(run);
                    Outcome::Done
                }
                Err(StepError::Conflict(_)) => Outcome::Backoff,
                Err(StepError::Failed(m)) => {
                    self.mark(run, Condition::deleting());
                    self.mark(run, Condition::reconcile_error(m));
                    self.finish(run, Outcome::Backoff).await
                }
            };
        }

        // Step 15: publish the observation's connection details.
        if let Some(out) = self
            .publish_or_fail(run, &obs.connection_details, None)
            .await
        {
            return out;
        }

        // Step 16: add the finalizer. Before a create it goes with the create-pending write
        // (step 17.1), which is guarded by the same resourceVersion and must succeed before
        // Create is called: one Kubernetes write fewer per creation (§16, Q13).
        let has_finalizer = run
            .obj
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == FINALIZER));
        let creating = !obs.resource_exists && policies.should_create();
        if !has_finalizer {
            run.obj
                .metadata
                .finalizers
                .get_or_insert_with(Vec::new)
                .push(FINALIZER.to_string());
        }
        if !has_finalizer
            && !creating
            && let Err(e) = self.full_update(run).await
        {
            let StepError::Failed(m) = e else {
                return Outcome::Backoff;
            };
            self.mark(
                run,
                Condition::reconcile_error(format!("{ERR_UPDATE_OBJECT}: {m}")),
            );
            return self.finish(run, Outcome::Backoff).await;
        }

        // Step 17: create.
        if creating {
            return self.create(run, client, view).await;
        }

        // Step 18: late initialisation.
        if obs.resource_late_initialized && policies.should_late_initialize() {
            let current = spec(&run.obj)
                .and_then(|s| s.get("forProvider"))
                .cloned()
                .unwrap_or(Value::Object(Map::new()));
            let mut observed = serde_json::to_value(&view.for_provider).unwrap_or(Value::Null);
            strip_nulls(&mut observed);
            let merged = deep_merge(&current, &observed);
            if let Some(Value::Object(s)) = run.obj.data.get_mut("spec") {
                s.insert("forProvider".into(), merged);
            }
            self.apply_view_annotations(run, &view);
            if let Err(e) = self.full_update(run).await {
                let m = e.message().to_string();
                self.event(
                    run,
                    EventType::Warning,
                    event::CANNOT_UPDATE_MANAGED_RESOURCE,
                    &m,
                )
                .await;
                self.mark(
                    run,
                    Condition::reconcile_error(format!("{ERR_UPDATE_MANAGED}: {m}")),
                );
                return self.finish(run, Outcome::Backoff).await;
            }
        }

        // Step 19: up to date.
        if obs.resource_up_to_date {
            self.mark(run, Condition::reconcile_success());
            let conds = conditions_of(&run.obj);
            if get_condition(&conds, TYPE_READY).is_some_and(Condition::is_true) {
                let since = run
                    .obj
                    .metadata
                    .creation_timestamp
                    .as_ref()
                    .map(secs_since)
                    .unwrap_or(0.0);
                self.ctx
                    .metrics
                    .record_ready(metric_key, &self.gvk_label, since);
            }
            self.ctx.metrics.record_up_to_date(metric_key);
            let after = self.poll_after(run);
            return self.finish(run, after).await;
        }

        // Step 20: update not allowed.
        if !policies.should_update() {
            self.mark(run, Condition::reconcile_success());
            let after = self.poll_after(run);
            return self.finish(run, after).await;
        }

        // Step 21: update.
        let before_update = view.conditions.clone();
        match self.with_timeout(client.update(&mut view)).await {
            Err(e) => {
                let m = self.err_text(AsyncOp::Update, &e);
                self.event(
                    run,
                    EventType::Warning,
                    event::CANNOT_UPDATE_EXTERNAL_RESOURCE,
                    &m,
                )
                .await;
                self.mark(
                    run,
                    Condition::reconcile_error(format!("{ERR_RECONCILE_UPDATE}: {m}")),
                );
                self.mark_async(run, Err((AsyncOp::Update, &m)));
                self.finish(run, Outcome::Backoff).await
            }
            Ok(upd) => {
                self.ctx.metrics.record_drift(metric_key, &self.gvk_label);
                self.apply_view_status(run, &view, &before_update);
                if let Some(out) = self
                    .publish_or_fail(run, &upd.connection_details, None)
                    .await
                {
                    return out;
                }
                // The fields that differed (never a value), and whether JFrog had been
                // changed outside Crossplane (drift reverted) or the spec had.
                let message = explain::update_message(&obs.changes, run.in_sync_at_start);
                self.event(
                    run,
                    EventType::Normal,
                    event::UPDATED_EXTERNAL_RESOURCE,
                    &message,
                )
                .await;
                self.mark(run, Condition::reconcile_success());
                self.mark_async(run, Ok(()));
                let after = self.poll_after(run);
                self.finish(run, after).await
            }
        }
    }

    /// Step 17.
    async fn create(
        &self,
        run: &mut Run,
        client: &dyn ExternalClient<K>,
        mut view: Managed<K>,
    ) -> Outcome {
        // 17.1: create-pending, guarded by resourceVersion.
        set_annotation(
            &mut run.obj,
            meta::EXTERNAL_CREATE_PENDING,
            &meta::now_stamp(),
        );
        if let Err(e) = self.full_update(run).await {
            let StepError::Failed(m) = e else {
                return Outcome::Backoff;
            };
            let m = format!("{ERR_UPDATE_MANAGED}: {m}");
            self.event(
                run,
                EventType::Warning,
                event::CANNOT_UPDATE_MANAGED_RESOURCE,
                &m,
            )
            .await;
            self.mark(run, Condition::creating());
            self.mark(run, Condition::reconcile_error(m));
            return self.finish(run, Outcome::Backoff).await;
        }
        view.annotations = annotations(&run.obj).clone();
        let before: Vec<String> = view.annotations.keys().cloned().collect();
        view.external_name = view
            .annotations
            .get(EXTERNAL_NAME)
            .cloned()
            .unwrap_or_default();

        // 17.2: create.
        match self.with_timeout(client.create(&mut view)).await {
            Err(e) => {
                // 17.3
                let m = self.err_text(AsyncOp::Create, &e);
                self.event(
                    run,
                    EventType::Warning,
                    event::CANNOT_CREATE_EXTERNAL_RESOURCE,
                    &m,
                )
                .await;
                // A create whose outcome is unknown stays pending (incomplete): the next
                // reconcile decides by the identifier strategy, never by creating again.
                if !e.is_outcome_unknown() {
                    set_annotation(
                        &mut run.obj,
                        meta::EXTERNAL_CREATE_FAILED,
                        &meta::now_stamp(),
                    );
                }
                if let Err(e) = self.update_critical_annotations(run).await {
                    let msg = format!("{ERR_UPDATE_MANAGED_ANNOTATIONS}: {e}");
                    self.event(
                        run,
                        EventType::Warning,
                        event::CANNOT_UPDATE_MANAGED_RESOURCE,
                        &msg,
                    )
                    .await;
                }
                self.mark(run, Condition::creating());
                self.mark(
                    run,
                    Condition::reconcile_error(format!("{ERR_RECONCILE_CREATE}: {m}")),
                );
                self.mark_async(run, Err((AsyncOp::Create, &m)));
                self.finish(run, Outcome::Backoff).await
            }
            Ok(creation) => {
                // 17.4
                if let Some(n) = creation.external_name.as_ref().filter(|n| !n.is_empty()) {
                    view.external_name = n.clone();
                }
                // Annotations Create removed are removed (as the full update of Crossplane's
                // critical annotation updater does; after a conflict only ours are merged).
                if let Some(a) = run.obj.metadata.annotations.as_mut() {
                    for k in before.iter().filter(|k| {
                        *k != EXTERNAL_NAME && !view.annotations.contains_key(k.as_str())
                    }) {
                        a.remove(k);
                    }
                }
                self.apply_view_annotations(run, &view);
                set_annotation(
                    &mut run.obj,
                    meta::EXTERNAL_CREATE_SUCCEEDED,
                    &meta::now_stamp(),
                );
                match self.update_critical_annotations(run).await {
                    Ok(()) => {}
                    Err(StepError::Conflict(_)) => return Outcome::Backoff,
                    Err(StepError::Failed(um)) => {
                        let msg = format!("{ERR_UPDATE_MANAGED_ANNOTATIONS}: {um}");
                        self.event(
                            run,
                            EventType::Warning,
                            event::CANNOT_UPDATE_MANAGED_RESOURCE,
                            &msg,
                        )
                        .await;
                        self.mark(run, Condition::creating());
                        self.mark(run, Condition::reconcile_error(msg));
                        return self.finish(run, Outcome::Backoff).await;
                    }
                }
                run.external_name_at_start = annotations(&run.obj)
                    .get(EXTERNAL_NAME)
                    .cloned()
                    .unwrap_or_default();
                if let Some(out) = self
                    .publish_or_fail(
                        run,
                        &creation.connection_details,
                        Some(Condition::creating()),
                    )
                    .await
                {
                    return out;
                }
                self.event(
                    run,
                    EventType::Normal,
                    event::CREATED_EXTERNAL_RESOURCE,
                    "Successfully requested creation of external resource",
                )
                .await;
                self.mark(run, Condition::creating());
                self.mark(run, Condition::reconcile_success());
                self.mark_async(run, Ok(()));
                self.finish(run, Outcome::Backoff).await
            }
        }
    }
}

/// The namespace and name of the Secret a `...SecretRef` value points to: a namespaced MR
/// reads Secrets of its own namespace only (the ref has no namespace), a legacy cluster-scoped
/// MR names the namespace in the ref.
fn secret_ref_location(scope: Scope, mr_namespace: Option<&str>, r: &Value) -> (String, String) {
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    let ns = if scope.is_namespaced() {
        mr_namespace.unwrap_or_default()
    } else {
        r.get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    (ns.to_string(), name.to_string())
}

/// One key of a Secret as text: `data` first, then `stringData`.
fn secret_key_text(s: &Secret, ns: &str, name: &str, key: &str) -> Result<String, String> {
    let val = s
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| b.0.clone())
        .or_else(|| {
            s.string_data
                .as_ref()
                .and_then(|d| d.get(key))
                .map(|x| x.clone().into_bytes())
        })
        .ok_or_else(|| format!("secret \"{ns}/{name}\" has no key \"{key}\""))?;
    String::from_utf8(val).map_err(|_| format!("secret \"{ns}/{name}\" key \"{key}\" is not UTF-8"))
}

/// Every key `k` of a Secret as the entry `<field>.<k>` (Upjet's sensitive map fields: the
/// whole Secret is the map). `data` wins over `stringData` for a key in both.
fn whole_secret_entries(
    field: &str,
    s: &Secret,
    ns: &str,
    name: &str,
) -> Result<Vec<(String, SecretString)>, String> {
    let mut keys: Vec<&String> = s.data.iter().flat_map(BTreeMap::keys).collect();
    keys.extend(s.string_data.iter().flat_map(BTreeMap::keys));
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let text = secret_key_text(s, ns, name, k)?;
            Ok((format!("{field}.{k}"), SecretString::from(text)))
        })
        .collect()
}

/// The value at a dotted field path such as `customHttpHeaders.0.valueSecretRef`, where a
/// numeric segment indexes a list.
pub(crate) fn field_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(root, |v, seg| match v {
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => v.get(seg),
    })
}

/// The adapter's view of an MR (step 10), as the reconciler builds it; `preview` builds
/// its views with it too, so an adapter sees a previewed MR exactly as it would see it.
pub fn view_of<K: ManagedKind>(
    scope: Scope,
    obj: &DynamicObject,
    policies: &PolicyResolver,
) -> Result<Managed<K>, String> {
    // Borrowed and decoded in place: a reconcile decodes its MR's view once, and copying the
    // spec (and the observation) first was a good part of its allocations.
    let empty = Value::Object(Map::new());
    let sp = spec(obj).unwrap_or(&empty);
    let mut fp = sp
        .get("forProvider")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    strip_nulls(&mut fp);
    let init = if policies.enabled() {
        let mut i = sp
            .get("initProvider")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        strip_nulls(&mut i);
        i
    } else {
        Value::Object(Map::new())
    };
    let for_provider = K::Parameters::deserialize(&fp)
        .map_err(|e| format!("cannot decode spec.forProvider: {e}"))?;
    let create_parameters: K::Parameters = serde_json::from_value(deep_merge(&init, &fp))
        .map_err(|e| format!("cannot decode spec.initProvider: {e}"))?;
    let init_only_fields = match (&init, &fp) {
        (Value::Object(i), Value::Object(f)) => {
            i.keys().filter(|k| !f.contains_key(*k)).cloned().collect()
        }
        _ => Vec::new(),
    };
    let at_provider: K::Observation = match obj.data.get("status").and_then(|s| s.get("atProvider"))
    {
        Some(v) if !v.is_null() => K::Observation::deserialize(v).unwrap_or_default(),
        _ => K::Observation::default(),
    };
    let ann = annotations(obj).clone();
    Ok(Managed {
        scope,
        name: obj.metadata.name.clone().unwrap_or_default(),
        namespace: obj.metadata.namespace.clone(),
        uid: obj.metadata.uid.clone().unwrap_or_default(),
        generation: obj.metadata.generation.unwrap_or(0),
        external_name: ann.get(EXTERNAL_NAME).cloned().unwrap_or_default(),
        annotations: ann,
        labels: obj.metadata.labels.clone().unwrap_or_default(),
        for_provider,
        init_provider: init,
        create_parameters,
        init_only_fields,
        at_provider,
        conditions: conditions_of(obj),
        secrets: BTreeMap::new(),
        deleting: obj.metadata.deletion_timestamp.is_some(),
        late_initialize: policies.should_late_initialize(),
        observe_only: policies.should_only_observe(),
    })
}

/// Read the Kind's `...SecretRef` inputs: a key ref gives one entry under its field path,
/// a whole-Secret ref one entry `<field>.<key>` per key of the Secret. Values never reach
/// a log or an error message; keys and Secret names may.
///
/// A ref given only in `initProvider` (management policies enabled) is read too, since
/// Create uses initProvider; as it matters only to Create, a missing Secret or key there
/// is left out rather than failing Connect (the adapter names the missing value if a
/// Create needs it). This lets an adopted object carry the reference of a write-only
/// value JFrog keeps without the Secret existing.
pub async fn read_secrets(
    client: &kube::Client,
    info: &KindInfo,
    scope: Scope,
    management_policies_enabled: bool,
    obj: &DynamicObject,
) -> Result<BTreeMap<String, SecretString>, String> {
    let mut out = BTreeMap::new();
    let fp = spec(obj).and_then(|s| s.get("forProvider"));
    let ip = spec(obj)
        .and_then(|s| s.get("initProvider"))
        .filter(|_| management_policies_enabled);
    let refs = info.secret_refs.iter().map(|sr| (sr, false));
    let wholes = info.whole_secret_refs.iter().map(|sr| (sr, true));
    for (sr, whole) in refs.chain(wholes) {
        let at = |root: Option<&'_ Value>| {
            root.and_then(|v| field_at(v, sr.field))
                .filter(|x| !x.is_null())
                .cloned()
        };
        let (r, init_only) = match (at(fp), at(ip)) {
            (Some(r), _) => (r, false),
            (None, Some(r)) => (r, true),
            (None, None) => {
                if sr.required {
                    return Err(format!("spec.forProvider.{} is required", sr.field));
                }
                continue;
            }
        };
        let section = if init_only {
            "initProvider"
        } else {
            "forProvider"
        };
        let (ns, name) = secret_ref_location(scope, obj.metadata.namespace.as_deref(), &r);
        let api: Api<Secret> = Api::namespaced(client.clone(), &ns);
        let s = match api.get(&name).await {
            Ok(s) => s,
            Err(kube::Error::Api(e)) if init_only && e.code == 404 => continue,
            Err(e) => {
                return Err(format!(
                    "cannot get secret \"{ns}/{name}\" for spec.{section}.{}: {}",
                    sr.field,
                    kube_message(&e)
                ));
            }
        };
        if whole {
            out.extend(whole_secret_entries(sr.field, &s, &ns, &name)?);
        } else {
            let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
            match secret_key_text(&s, &ns, &name, key) {
                Ok(text) => {
                    out.insert(sr.field.to_string(), SecretString::from(text));
                }
                Err(_) if init_only => continue,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_merge_for_provider_wins() {
        let init = json!({"description": "a", "x": "a", "list": [1], "nested": {"p": 1, "q": 1}});
        let fp = json!({"x": "b", "nested": {"q": 2}});
        assert_eq!(
            deep_merge(&init, &fp),
            json!({"description": "a", "x": "b", "list": [1], "nested": {"p": 1, "q": 2}})
        );
    }

    fn secret(data: &[(&str, &[u8])], string_data: &[(&str, &str)]) -> Secret {
        Secret {
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), k8s_openapi::ByteString(v.to_vec())))
                    .collect(),
            ),
            string_data: Some(
                string_data
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    fn exposed(entries: Vec<(String, SecretString)>) -> Vec<(String, String)> {
        use secrecy::ExposeSecret;
        entries
            .into_iter()
            .map(|(k, v)| (k, v.expose_secret().to_string()))
            .collect()
    }

    #[test]
    fn whole_secret_refs_give_one_entry_per_key() {
        let s = secret(
            &[("token", b"t1"), ("user", b"u1")],
            &[("extra", "e1"), ("token", "no")],
        );
        let got =
            whole_secret_entries("handler.0.secretsSecretRef", &s, "ns", "creds").expect("entries");
        assert_eq!(
            exposed(got),
            vec![
                (
                    "handler.0.secretsSecretRef.extra".to_string(),
                    "e1".to_string()
                ),
                (
                    "handler.0.secretsSecretRef.token".to_string(),
                    "t1".to_string()
                ),
                (
                    "handler.0.secretsSecretRef.user".to_string(),
                    "u1".to_string()
                ),
            ]
        );
        // An empty Secret is an empty map, not an error.
        assert!(
            whole_secret_entries("headersSecretRef", &Secret::default(), "ns", "empty")
                .expect("entries")
                .is_empty()
        );
        // A value that is not text names the key, never the value.
        let bad = secret(&[("bin", &[0xff, 0xfe])], &[]);
        let err =
            whole_secret_entries("headersSecretRef", &bad, "ns", "creds").expect_err("not UTF-8");
        assert_eq!(err, "secret \"ns/creds\" key \"bin\" is not UTF-8");
    }

    #[test]
    fn key_refs_read_data_then_string_data() {
        let s = secret(&[("password", b"p1")], &[("other", "o1")]);
        assert_eq!(
            secret_key_text(&s, "ns", "creds", "password").as_deref(),
            Ok("p1")
        );
        assert_eq!(
            secret_key_text(&s, "ns", "creds", "other").as_deref(),
            Ok("o1")
        );
        assert_eq!(
            secret_key_text(&s, "ns", "creds", "nope"),
            Err("secret \"ns/creds\" has no key \"nope\"".to_string())
        );
    }

    #[test]
    fn secret_ref_namespace_follows_the_scope() {
        let r = json!({"name": "creds", "namespace": "elsewhere"});
        // A namespaced MR reads its own namespace, whatever the ref says.
        assert_eq!(
            secret_ref_location(Scope::Namespaced, Some("team-a"), &r),
            ("team-a".to_string(), "creds".to_string())
        );
        // A legacy cluster-scoped MR names the namespace in the ref.
        assert_eq!(
            secret_ref_location(Scope::Cluster, None, &r),
            ("elsewhere".to_string(), "creds".to_string())
        );
    }

    #[test]
    fn field_paths_index_lists() {
        let fp = json!({"passwordSecretRef": {"name": "s", "key": "k"},
                        "customHttpHeaders": [{"name": "a"}, {"name": "b", "valueSecretRef": {"name": "h", "key": "v"}}]});
        assert_eq!(
            field_at(&fp, "passwordSecretRef").map(|r| &r["name"]),
            Some(&json!("s"))
        );
        assert_eq!(
            field_at(&fp, "customHttpHeaders.1.valueSecretRef"),
            Some(&json!({"name": "h", "key": "v"}))
        );
        assert_eq!(field_at(&fp, "customHttpHeaders.0.valueSecretRef"), None);
        assert_eq!(field_at(&fp, "customHttpHeaders.2.valueSecretRef"), None);
        assert_eq!(field_at(&fp, "customHttpHeaders.x"), None);
    }
}
