//! The harness of the managed-reconciler conformance tests: two fake Kinds (`Widget`:
//! name-as-identifier with references, a key secret input and whole-Secret inputs; `Gadget`:
//! server-assigned), a
//! scripted, call-recording external system, and [`Env`]: a Kubernetes API test server with
//! their CRDs in both scopes and a provider client with exactly the RBAC Crossplane grants a
//! provider (§15.4), driving the real reconciler.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Event, Secret};
use kube::Api;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use provider_runtime::crd::{ManagedCrdInput, MrScope, managed_crd};
use provider_runtime::managed::conditions::Condition;
use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const NS: &str = "default";
pub const WAIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// The fake Kinds and the scripted external system.

pub struct FakeKind {
    pub info: KindInfo,
}

pub fn ref_schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "policy": {"type": "object", "properties": {
            "resolve": {"type": "string"}, "resolution": {"type": "string"}}}}})
}

pub fn selector_schema() -> Value {
    json!({"type": "object", "properties": {
        "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        "matchControllerRef": {"type": "boolean"},
        "namespace": {"type": "string"},
        "policy": {"type": "object", "properties": {
            "resolve": {"type": "string"}, "resolution": {"type": "string"}}}}})
}

impl ManagedKind for FakeKind {
    type Parameters = Value;
    type Observation = Value;
    fn info(&self) -> &KindInfo {
        &self.info
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "description": {"type": "string"},
            "x": {"type": "string"},
            "size": {"type": "integer"},
            "parentName": {"type": "string"},
            "parentNameRef": ref_schema(),
            "parentNameSelector": selector_schema(),
            "ownerName": {"type": "string"},
            "ownerNameRef": ref_schema(),
            "ownerNameSelector": selector_schema(),
            "gadgetId": {"type": "string"},
            "gadgetIdRef": ref_schema(),
            "gadgetIdSelector": selector_schema(),
            "memberNames": {"type": "array", "items": {"type": "string"}},
            "memberNamesRefs": {"type": "array", "items": ref_schema()},
            "memberNamesSelector": selector_schema(),
            "passwordSecretRef": {"type": "object", "properties": {
                "name": {"type": "string"}, "namespace": {"type": "string"}, "key": {"type": "string"}}},
            "headersSecretRef": whole_secret_ref_schema(),
            "handler": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "secretsSecretRef": whole_secret_ref_schema()}}}
        }})
    }
    fn observation_schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "id": {"type": "string"},
            "description": {"type": "string"},
            "x": {"type": "string"},
            "size": {"type": "integer"}}})
    }
}

/// A reference to a whole Secret (every key is a secret input).
pub fn whole_secret_ref_schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"}, "namespace": {"type": "string"}}})
}

pub fn target(kind: &'static str) -> ReferenceTarget {
    ReferenceTarget {
        provider: "fake",
        group: "test",
        kind,
        version: "v1alpha1",
    }
}

pub fn widget_kind() -> FakeKind {
    let mut info = KindInfo::new(
        "fake",
        "test",
        "Widget",
        "v1alpha1",
        IdentifierStrategy::Name,
    );
    info.references = vec![
        ReferenceField::single("parentName", target("Widget")),
        ReferenceField::single("ownerName", target("Widget")),
        ReferenceField::single("gadgetId", target("Gadget")),
        ReferenceField::multi("memberNames", target("Widget")),
    ];
    info.secret_refs = vec![SecretRefField {
        field: "passwordSecretRef",
        required: false,
    }];
    info.whole_secret_refs = vec![
        SecretRefField::optional("headersSecretRef"),
        SecretRefField::optional("handler.0.secretsSecretRef"),
        SecretRefField::optional("handler.1.secretsSecretRef"),
    ];
    FakeKind { info }
}

pub fn gadget_kind() -> FakeKind {
    FakeKind {
        info: KindInfo::new(
            "fake",
            "test",
            "Gadget",
            "v1alpha1",
            IdentifierStrategy::ServerAssigned,
        ),
    }
}

/// What the fake external system holds and how it misbehaves.
#[derive(Default)]
pub struct Script {
    pub calls: Vec<String>,
    pub store: BTreeMap<String, Value>,
    pub jfrog_requests: u32,
    pub seq: u32,
    pub connect_err: Option<String>,
    pub observe_err: Option<String>,
    pub create_err: Option<String>,
    /// The create error's outcome is unknown (a lost answer): the object may exist.
    pub create_unknown: bool,
    pub update_err: Option<String>,
    pub delete_err: Option<String>,
    pub observe_delay: Option<Duration>,
    pub late_init: bool,
    pub immutable_size: bool,
    pub create_sets: Option<(Value, String, String)>,
    /// An annotation Create removes.
    pub create_removes: Option<String>,
    pub update_sets: Option<Value>,
    pub observe_details: BTreeMap<String, Vec<u8>>,
    pub create_params: Vec<Value>,
    pub update_params: Vec<Value>,
    pub connect_ext_names: Vec<String>,
    pub connect_secrets: Vec<Option<String>>,
    /// Every secret input each Connect saw (key and whole-Secret refs), exposed (a test fake:
    /// real adapters never log or keep them).
    pub connect_all_secrets: Vec<BTreeMap<String, String>>,
    pub bump_on_observe: Option<(kube::Client, ApiResource, Option<String>, String)>,
    pub create_hook: Option<Hook>,
    pub in_flight: HashMap<String, usize>,
    pub max_in_flight: usize,
    pub observe_times: Vec<std::time::Instant>,
    /// Observe reports the object, which then disappears before Delete runs (a 404 there).
    pub vanish_on_observe: bool,
    /// The next Observe panics.
    pub panic_once: bool,
    /// Observe reports the object as existing but not available yet (Ready=False Creating
    /// with this message), as a job still running.
    pub not_ready: Option<String>,
}

pub type Shared = Arc<Mutex<Script>>;

/// A one-shot action run inside the fake's Create (between the create-pending write and the
/// critical annotation update).
pub type Hook = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

pub fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Script> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

pub async fn bump(target: Option<(kube::Client, ApiResource, Option<String>, String)>) {
    if let Some((client, ar, ns, name)) = target {
        let api: Api<DynamicObject> = match ns {
            Some(ns) => Api::namespaced_with(client, &ns, &ar),
            None => Api::all_with(client, &ar),
        };
        let p = json!({"metadata": {"labels": {"bumped": uuid::Uuid::new_v4().to_string()}}});
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&p))
            .await
            .expect("bump the MR");
    }
}

pub struct FakeClient {
    pub s: Shared,
    pub server_assigned: bool,
}

#[async_trait]
impl ExternalClient<FakeKind> for FakeClient {
    async fn observe(
        &self,
        mr: &mut Managed<FakeKind>,
    ) -> Result<ExternalObservation, ExternalError> {
        let key = format!("{}/{}", mr.namespace.clone().unwrap_or_default(), mr.name);
        let (delay, hook) = {
            let mut s = lock(&self.s);
            s.calls.push("observe".into());
            s.observe_times.push(std::time::Instant::now());
            let n = s.in_flight.entry(key.clone()).or_insert(0);
            *n += 1;
            let n = *n;
            s.max_in_flight = s.max_in_flight.max(n);
            (s.observe_delay, s.bump_on_observe.take())
        };
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        bump(hook).await;
        let mut s = lock(&self.s);
        if let Some(n) = s.in_flight.get_mut(&key) {
            *n -= 1;
        }
        if std::mem::take(&mut s.panic_once) {
            drop(s);
            panic!("adapter bug");
        }
        if mr.external_name.is_empty() {
            return Ok(ExternalObservation::default());
        }
        s.jfrog_requests += 1;
        if let Some(e) = &s.observe_err {
            return Err(ExternalError::msg(e.clone()));
        }
        let Some(stored) = s.store.get(&mr.external_name).cloned() else {
            return Ok(ExternalObservation::default());
        };
        if s.vanish_on_observe {
            s.store.remove(&mr.external_name);
        }
        let mut at = stored.clone();
        at["id"] = json!(mr.external_name);
        mr.at_provider = at;
        if let Some(why) = &s.not_ready {
            let mut c = Condition::creating();
            c.message = why.clone();
            mr.set_condition(c);
        }
        let mut late = false;
        if s.late_init && mr.late_initialize {
            for (k, v) in stored.as_object().cloned().unwrap_or_default() {
                if mr.for_provider.get(&k).is_none() && !mr.init_only_fields.contains(&k) {
                    mr.for_provider[&k] = v;
                    late = true;
                }
            }
        }
        let up_to_date = mr.observe_only
            || mr
                .for_provider
                .as_object()
                .map(|m| {
                    m.iter().all(|(k, v)| {
                        k.ends_with("Ref")
                            || k.ends_with("Refs")
                            || k.ends_with("Selector")
                            || mr.init_only_fields.contains(k)
                            || stored.get(k) == Some(v)
                    })
                })
                .unwrap_or(true);
        let mut details = ConnectionDetails::new();
        for (k, v) in &s.observe_details {
            details.insert(k.clone(), v.clone());
        }
        Ok(ExternalObservation {
            resource_exists: true,
            resource_up_to_date: up_to_date,
            resource_late_initialized: late,
            connection_details: details,
            diff: String::new(),
            changes: Vec::new(),
        })
    }

    async fn create(&self, mr: &mut Managed<FakeKind>) -> Result<ExternalCreation, ExternalError> {
        let hook = {
            let mut s = lock(&self.s);
            s.calls.push("create".into());
            s.create_params.push(mr.create_parameters.clone());
            s.create_hook.take()
        };
        if let Some(h) = hook {
            h().await;
        }
        let mut s = lock(&self.s);
        s.jfrog_requests += 1;
        if let Some(e) = &s.create_err {
            let err = ExternalError::msg(e.clone());
            return Err(if s.create_unknown {
                err.outcome_unknown()
            } else {
                err
            });
        }
        let ext = if self.server_assigned {
            s.seq += 1;
            format!("srv-{}", s.seq)
        } else {
            mr.external_name.clone()
        };
        let mut stored = mr.create_parameters.clone();
        if let Some(m) = stored.as_object_mut() {
            m.retain(|k, _| {
                !k.ends_with("Ref") && !k.ends_with("Refs") && !k.ends_with("Selector")
            });
        }
        s.store.insert(ext.clone(), stored);
        if let Some((at, k, v)) = &s.create_sets {
            mr.at_provider = at.clone();
            mr.annotations.insert(k.clone(), v.clone());
        }
        if let Some(k) = &s.create_removes {
            mr.annotations.remove(k);
        }
        Ok(ExternalCreation {
            connection_details: ConnectionDetails::new(),
            external_name: self.server_assigned.then_some(ext),
        })
    }

    async fn update(&self, mr: &mut Managed<FakeKind>) -> Result<ExternalUpdate, ExternalError> {
        let mut s = lock(&self.s);
        s.calls.push("update".into());
        s.update_params.push(mr.for_provider.clone());
        s.jfrog_requests += 1;
        if let Some(e) = &s.update_err {
            return Err(ExternalError::msg(e.clone()));
        }
        let Some(stored) = s.store.get(&mr.external_name).cloned() else {
            return Err(ExternalError::msg(format!(
                "widget \"{}\" not found",
                mr.external_name
            )));
        };
        if s.immutable_size
            && mr.for_provider.get("size").is_some()
            && stored.get("size") != mr.for_provider.get("size")
        {
            return Err(ExternalError::msg(format!(
                "refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument \"size\" from \"{}\" to \"{}\"",
                stored.get("size").cloned().unwrap_or(Value::Null),
                mr.for_provider["size"]
            )));
        }
        let mut next = stored;
        for (k, v) in mr.for_provider.as_object().cloned().unwrap_or_default() {
            if !mr.init_only_fields.contains(&k) {
                next[&k] = v;
            }
        }
        s.store.insert(mr.external_name.clone(), next);
        if let Some(at) = &s.update_sets {
            mr.at_provider = at.clone();
        }
        Ok(ExternalUpdate::default())
    }

    async fn delete(&self, mr: &mut Managed<FakeKind>) -> Result<ExternalDelete, ExternalError> {
        let mut s = lock(&self.s);
        s.calls.push("delete".into());
        s.jfrog_requests += 1;
        if let Some(e) = &s.delete_err {
            return Err(ExternalError::msg(e.clone()));
        }
        // A 404 is success.
        if s.store.remove(&mr.external_name).is_none() {
            s.calls.push("delete:404".into());
        }
        Ok(ExternalDelete::default())
    }

    async fn disconnect(&self) -> Result<(), ExternalError> {
        lock(&self.s).calls.push("disconnect".into());
        Ok(())
    }
}

pub struct FakeConnector {
    pub s: Shared,
    pub server_assigned: bool,
}

#[async_trait]
impl Connector<FakeKind> for FakeConnector {
    async fn connect(
        &self,
        config: &ResolvedConfig,
        mr: &Managed<FakeKind>,
    ) -> Result<Box<dyn ExternalClient<FakeKind>>, ExternalError> {
        assert_eq!(config.url, "https://jfrog.example");
        let mut s = lock(&self.s);
        s.calls.push("connect".into());
        s.connect_ext_names.push(mr.external_name.clone());
        s.connect_secrets.push(
            mr.secret("passwordSecretRef")
                .map(|v| secrecy::ExposeSecret::expose_secret(v).to_string()),
        );
        s.connect_all_secrets.push(
            mr.secrets
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        secrecy::ExposeSecret::expose_secret(v).to_string(),
                    )
                })
                .collect(),
        );
        Ok(Box::new(FakeClient {
            s: self.s.clone(),
            server_assigned: self.server_assigned,
        }))
    }
}

pub struct FakeResolver {
    pub s: Shared,
}

#[async_trait]
impl ProviderConfigResolver for FakeResolver {
    async fn track_usage(&self, _mr: &ManagedRef) -> Result<(), ConfigError> {
        lock(&self.s).calls.push("track".into());
        Ok(())
    }
    async fn resolve(&self, mr: &ManagedRef) -> Result<ResolvedConfig, ConfigError> {
        let s = lock(&self.s);
        if let Some(e) = &s.connect_err {
            return Err(ConfigError::new(e.clone()));
        }
        let r = mr.provider_config_ref.clone().expect("a providerConfigRef");
        Ok(ResolvedConfig {
            config_kind: r.kind.unwrap_or_else(|| "ProviderConfig".into()),
            config_name: r.name,
            config_namespace: None,
            config_uid: None,
            url: "https://jfrog.example".into(),
            credentials: Credentials::Token(secrecy::SecretString::from("t0ken")),
            credentials_from: None,
            ca_bundle: None,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The environment.

pub struct Env {
    _server: kube_testserver::TestServer,
    pub admin: kube::Client,
    pub provider: kube::Client,
    pub s: Shared,
    pub widget: Arc<FakeKind>,
    pub gadget: Arc<FakeKind>,
    pub metrics: Arc<ManagedMetrics>,
    pub mp_enabled: bool,
}

/// Installs the CRDs of `kinds` in both scopes and waits until they are Established.
pub async fn install_crds(admin: &kube::Client, kinds: &[&FakeKind]) {
    let mut docs = Vec::new();
    for k in kinds {
        let reg = register(
            FakeKind {
                info: k.info.clone(),
            },
            NoConnector,
        );
        let input = ManagedCrdInput::from_registration(reg.as_ref());
        for scope in [MrScope::Modern, MrScope::Legacy] {
            docs.push(managed_crd(&input, scope).document);
        }
    }
    testkit::install_crds(admin, &docs).await;
}

pub struct NoConnector;
#[async_trait]
impl Connector<FakeKind> for NoConnector {
    async fn connect(
        &self,
        _: &ResolvedConfig,
        _: &Managed<FakeKind>,
    ) -> Result<Box<dyn ExternalClient<FakeKind>>, ExternalError> {
        Err(ExternalError::msg("unused"))
    }
}

pub const ROLE: &str = "crossplane:provider:fake:system";

pub fn roles_api(admin: &kube::Client) -> Api<DynamicObject> {
    testkit::rbac_api(admin, "ClusterRole", "clusterroles")
}

/// The rules Crossplane's RBAC manager grants a provider (docs/managed-reconciler.md §15.4); with
/// `mr_update = false` the MRs themselves can no longer be updated (their status can).
pub fn provider_rules(mr_update: bool) -> Vec<Value> {
    let groups = json!(["test.fake.m.crossplane.io", "test.fake.crossplane.io"]);
    let mut rules = vec![
        json!({"apiGroups": groups, "resources": ["widgets/status", "gadgets/status"],
               "verbs": ["get", "list", "watch", "update", "patch", "create"]}),
        json!({"apiGroups": groups, "resources": ["*/finalizers"], "verbs": ["update"]}),
        json!({"apiGroups": [""], "resources": ["secrets", "configmaps", "events"], "verbs": ["*"]}),
        json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}),
    ];
    let verbs = if mr_update {
        json!(["get", "list", "watch", "update", "patch", "create"])
    } else {
        json!(["get", "list", "watch", "patch", "create"])
    };
    rules.push(json!({"apiGroups": groups, "resources": ["widgets", "gadgets"], "verbs": verbs}));
    rules
}

pub async fn grant_provider_rbac(admin: &kube::Client, user: &str) {
    testkit::grant(
        admin,
        testkit::cluster_role(ROLE, provider_rules(true)),
        user,
    )
    .await;
}

/// [`testkit::wait_for`] with this suite's timeout ([`WAIT`]) and pace.
pub async fn wait_for<T, F, Fut>(f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    testkit::wait_for("the awaited state", WAIT, Duration::from_millis(50), f).await
}

impl Env {
    pub async fn new() -> Env {
        let server = testkit::start_kube_server().await;
        let admin = testkit::client_for(&server, &server.admin_token()).await;
        let widget = Arc::new(widget_kind());
        let gadget = Arc::new(gadget_kind());
        install_crds(&admin, &[widget.as_ref(), gadget.as_ref()]).await;
        let user = "system:serviceaccount:crossplane-system:provider-fake";
        grant_provider_rbac(&admin, user).await;
        let token = server.issue_token(user, &[]);
        let provider = testkit::client_for(&server, &token).await;
        Env {
            _server: server,
            admin,
            provider,
            s: Arc::new(Mutex::new(Script::default())),
            widget,
            gadget,
            metrics: Arc::new(ManagedMetrics::unregistered()),
            mp_enabled: true,
        }
    }

    pub fn ctx(&self) -> ControllerContext {
        let mut c = ControllerContext::new(
            self.provider.clone(),
            Arc::new(FakeResolver { s: self.s.clone() }),
            "provider-fake",
        );
        c.metrics = self.metrics.clone();
        c.management_policies_enabled = self.mp_enabled;
        c
    }

    pub fn rec(&self, scope: Scope) -> Reconciler<FakeKind> {
        self.rec_with(scope, self.ctx())
    }

    pub fn rec_with(&self, scope: Scope, ctx: ControllerContext) -> Reconciler<FakeKind> {
        Reconciler::new(
            self.widget.clone(),
            Arc::new(FakeConnector {
                s: self.s.clone(),
                server_assigned: false,
            }),
            ctx,
            scope,
        )
    }

    pub fn gadget_rec(&self, scope: Scope) -> Reconciler<FakeKind> {
        Reconciler::new(
            self.gadget.clone(),
            Arc::new(FakeConnector {
                s: self.s.clone(),
                server_assigned: true,
            }),
            self.ctx(),
            scope,
        )
    }

    pub fn ar(&self, kind: &FakeKind, scope: Scope) -> ApiResource {
        kind.info.api_resource(scope)
    }

    pub fn api(&self, scope: Scope) -> Api<DynamicObject> {
        self.api_of(&self.widget, scope, NS)
    }

    pub fn api_of(&self, kind: &FakeKind, scope: Scope, ns: &str) -> Api<DynamicObject> {
        let ar = self.ar(kind, scope);
        match scope {
            Scope::Namespaced => Api::namespaced_with(self.admin.clone(), ns, &ar),
            Scope::Cluster => Api::all_with(self.admin.clone(), &ar),
        }
    }

    /// The provider's requests of `verb` so far (`update/status` for status updates).
    pub fn provider_requests(&self, verb: &str) -> u64 {
        testkit::request_count(
            &self._server,
            verb,
            "system:serviceaccount:crossplane-system:provider-fake",
        )
    }

    pub fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        lock(&self.s)
    }

    pub fn calls(&self) -> Vec<String> {
        self.script().calls.clone()
    }

    /// How many times the fake saw `call`.
    pub fn count(&self, call: &str) -> usize {
        self.calls().iter().filter(|c| *c == call).count()
    }

    pub fn clear(&self) {
        self.script().calls.clear();
    }

    pub async fn ensure_ns(&self, ns: &str) {
        testkit::ensure_namespace(&self.admin, ns).await;
    }

    /// A Secret with the given string data, creating its namespace when needed.
    pub async fn secret(&self, ns: &str, name: &str, data: &[(&str, &str)]) {
        self.ensure_ns(ns).await;
        let data: serde_json::Map<String, Value> = data
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let s: Secret =
            serde_json::from_value(json!({"metadata": {"name": name}, "stringData": data}))
                .expect("secret");
        Api::<Secret>::namespaced(self.admin.clone(), ns)
            .create(&PostParams::default(), &s)
            .await
            .expect("create secret");
    }

    pub async fn create_in(
        &self,
        kind: &FakeKind,
        scope: Scope,
        ns: &str,
        name: &str,
        spec: Value,
        ann: &[(&str, &str)],
    ) -> DynamicObject {
        let ar = self.ar(kind, scope);
        let mut metadata = json!({"name": name});
        if scope == Scope::Namespaced {
            metadata["namespace"] = json!(ns);
        }
        if !ann.is_empty() {
            let m: serde_json::Map<String, Value> =
                ann.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            metadata["annotations"] = Value::Object(m);
        }
        let mut spec = spec;
        if spec.get("forProvider").is_none() {
            spec["forProvider"] = json!({});
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": metadata, "spec": spec}))
        .expect("object");
        self.api_of(kind, scope, ns)
            .create(&PostParams::default(), &obj)
            .await
            .expect("create MR")
    }

    pub async fn create(&self, scope: Scope, name: &str, spec: Value, ann: &[(&str, &str)]) {
        self.create_in(&self.widget, scope, NS, name, spec, ann)
            .await;
    }

    pub async fn get(&self, scope: Scope, name: &str) -> Option<DynamicObject> {
        self.api(scope).get_opt(name).await.expect("get MR")
    }

    pub async fn must(&self, scope: Scope, name: &str) -> DynamicObject {
        self.get(scope, name).await.expect("MR exists")
    }

    pub async fn reconcile(&self, scope: Scope, name: &str) -> Outcome {
        let ns = (scope == Scope::Namespaced).then_some(NS);
        self.rec(scope).reconcile(ns, name).await
    }

    pub async fn patch(&self, scope: Scope, name: &str, p: Value) {
        self.api(scope)
            .patch(name, &PatchParams::default(), &Patch::Merge(&p))
            .await
            .expect("patch MR");
    }

    pub async fn delete(&self, scope: Scope, name: &str) {
        self.api(scope)
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete MR");
    }

    pub async fn events_in(&self, ns: &str, name: &str) -> Vec<Event> {
        let api: Api<Event> = Api::namespaced(self.admin.clone(), ns);
        api.list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .collect()
    }

    pub async fn events(&self, name: &str) -> Vec<Event> {
        self.events_in(NS, name).await
    }

    pub async fn reasons(&self, name: &str) -> Vec<String> {
        self.events(name)
            .await
            .into_iter()
            .filter_map(|e| e.reason)
            .collect()
    }

    pub async fn set_status(&self, scope: Scope, name: &str, status: Value) {
        let mut o = self.must(scope, name).await;
        o.data["status"] = status;
        self.api(scope)
            .replace_status(name, &PostParams::default(), &o)
            .await
            .expect("write status");
    }

    /// Bring a fresh MR to "exists and up to date": the first reconcile creates it, the second
    /// observes it.
    pub async fn converge(&self, scope: Scope, name: &str) {
        assert_eq!(self.reconcile(scope, name).await, Outcome::Backoff);
        // Back-date the creation stamps so that a later deletion is not held by the 30 s
        // creation grace period (Q11).
        self.patch(
            scope,
            name,
            json!({"metadata": {"annotations": {
                meta::EXTERNAL_CREATE_PENDING: stamp_ago(61),
                meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60)}}}),
        )
        .await;
        let o = self.reconcile(scope, name).await;
        assert!(matches!(o, Outcome::After(_)), "{o:?}");
    }
}

pub fn cond(o: &DynamicObject, t: &str) -> Option<Condition> {
    o.data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok())
        .and_then(|l| l.into_iter().find(|c| c.type_ == t))
}

pub fn conds(o: &DynamicObject) -> Vec<Condition> {
    o.data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok())
        .unwrap_or_default()
}

pub fn synced(o: &DynamicObject) -> (String, String, String) {
    let c = cond(o, "Synced").expect("Synced condition");
    (c.status, c.reason, c.message)
}

pub fn ready(o: &DynamicObject) -> Option<(String, String)> {
    cond(o, "Ready").map(|c| (c.status, c.reason))
}

pub fn ann(o: &DynamicObject, k: &str) -> Option<String> {
    o.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(k))
        .cloned()
}

pub fn has_finalizer(o: &DynamicObject) -> bool {
    o.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == meta::FINALIZER))
}

pub fn at_provider(o: &DynamicObject) -> Value {
    o.data
        .get("status")
        .and_then(|s| s.get("atProvider"))
        .cloned()
        .unwrap_or(Value::Null)
}

pub fn hist_text(h: prometheus_client::metrics::histogram::Histogram) -> String {
    let mut r = prometheus_client::registry::Registry::default();
    r.register("h", "h", h);
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &r).expect("encode");
    out
}

pub fn is_after_poll(o: &Outcome) -> bool {
    matches!(o, Outcome::After(d) if *d >= Duration::from_secs(570) && *d <= Duration::from_secs(630))
}

pub fn stamp_ago(secs: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::seconds(secs))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub const N: Scope = Scope::Namespaced;
pub const L: Scope = Scope::Cluster;

pub async fn start_controller(
    e: &Env,
    scope: Scope,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let ctx = e.ctx();
    let stop = ctx.shutdown.clone();
    let reg = register_shared(
        e.widget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: false,
        }),
    );
    (stop, tokio::spawn(reg.start(ctx, scope)))
}
