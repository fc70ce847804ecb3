//! Conformance tests of the managed reconciler: checklist sections A–F, H and I of
//! `shared/reference/managed-reconciler.md` §17, one test per item (`conformance_NNN_...`).
//!
//! Each test starts its own Kubernetes API test server (random port), installs the CRDs of
//! two fake Kinds (`Widget`: name-as-identifier with references and a secret input; `Gadget`:
//! server-assigned) in both scopes, and drives the real reconciler with a client that has
//! exactly the RBAC Crossplane grants a provider (§15.4). The external system is a scripted,
//! call-recording fake.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event, Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use provider_runtime::crd::{ManagedCrdInput, MrScope, managed_crd};
use provider_runtime::managed::conditions::Condition;
use provider_runtime::managed::meta::{self, FilterKey};
use provider_runtime::managed::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// The fake Kinds and the scripted external system.

struct FakeKind {
    info: KindInfo,
}

fn ref_schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "policy": {"type": "object", "properties": {
            "resolve": {"type": "string"}, "resolution": {"type": "string"}}}}})
}

fn selector_schema() -> Value {
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
            "memberNameRefs": {"type": "array", "items": ref_schema()},
            "memberNameSelector": selector_schema(),
            "passwordSecretRef": {"type": "object", "properties": {
                "name": {"type": "string"}, "namespace": {"type": "string"}, "key": {"type": "string"}}}
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

fn target(kind: &'static str) -> ReferenceTarget {
    ReferenceTarget {
        provider: "fake",
        group: "test",
        kind,
        version: "v1alpha1",
    }
}

fn widget_kind() -> FakeKind {
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
    FakeKind { info }
}

fn gadget_kind() -> FakeKind {
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
struct Script {
    calls: Vec<String>,
    store: BTreeMap<String, Value>,
    jfrog_requests: u32,
    seq: u32,
    connect_err: Option<String>,
    observe_err: Option<String>,
    create_err: Option<String>,
    update_err: Option<String>,
    delete_err: Option<String>,
    observe_delay: Option<Duration>,
    late_init: bool,
    immutable_size: bool,
    create_sets: Option<(Value, String, String)>,
    update_sets: Option<Value>,
    observe_details: BTreeMap<String, Vec<u8>>,
    create_params: Vec<Value>,
    update_params: Vec<Value>,
    connect_ext_names: Vec<String>,
    connect_secrets: Vec<Option<String>>,
    bump_on_observe: Option<(kube::Client, ApiResource, Option<String>, String)>,
    create_hook: Option<Hook>,
    in_flight: HashMap<String, usize>,
    max_in_flight: usize,
    observe_times: Vec<std::time::Instant>,
    /// Observe reports the object, which then disappears before Delete runs (a 404 there).
    vanish_on_observe: bool,
    /// The next Observe panics.
    panic_once: bool,
}

type Shared = Arc<Mutex<Script>>;

/// A one-shot action run inside the fake's Create (between the create-pending write and the
/// critical annotation update).
type Hook = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Script> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

async fn bump(target: Option<(kube::Client, ApiResource, Option<String>, String)>) {
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

struct FakeClient {
    s: Shared,
    server_assigned: bool,
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
            return Err(ExternalError::msg(e.clone()));
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

struct FakeConnector {
    s: Shared,
    server_assigned: bool,
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
        Ok(Box::new(FakeClient {
            s: self.s.clone(),
            server_assigned: self.server_assigned,
        }))
    }
}

struct FakeResolver {
    s: Shared,
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
            ca_bundle: None,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The environment.

struct Env {
    _server: kube_testserver::TestServer,
    admin: kube::Client,
    provider: kube::Client,
    s: Shared,
    widget: Arc<FakeKind>,
    gadget: Arc<FakeKind>,
    metrics: Arc<ManagedMetrics>,
    mp_enabled: bool,
}

async fn client_for(server: &kube_testserver::TestServer, token: &str) -> kube::Client {
    let kc = Kubeconfig::from_yaml(&server.kubeconfig(token)).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(cfg).expect("client")
}

async fn install_crds(admin: &kube::Client, kinds: &[&FakeKind]) {
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let mut names = Vec::new();
    for k in kinds {
        let reg = register(
            FakeKind {
                info: k.info.clone(),
            },
            NoConnector,
        );
        let input = ManagedCrdInput::from_registration(reg.as_ref());
        for scope in [MrScope::Modern, MrScope::Legacy] {
            let crd = managed_crd(&input, scope);
            let doc: CustomResourceDefinition =
                serde_json::from_value(crd.document.clone()).expect("CRD document");
            api.create(&PostParams::default(), &doc)
                .await
                .expect("create CRD");
            names.push(crd.name.clone());
        }
    }
    for n in names {
        wait_for(|| {
            let api = api.clone();
            let n = n.clone();
            async move {
                let c = api.get(&n).await.ok()?;
                let established = c
                    .status?
                    .conditions?
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True");
                established.then_some(())
            }
        })
        .await;
    }
}

struct NoConnector;
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

const ROLE: &str = "crossplane:provider:fake:system";

fn roles_api(admin: &kube::Client) -> Api<DynamicObject> {
    Api::all_with(
        admin.clone(),
        &ApiResource {
            group: "rbac.authorization.k8s.io".into(),
            version: "v1".into(),
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: "ClusterRole".into(),
            plural: "clusterroles".into(),
        },
    )
}

/// The rules Crossplane's RBAC manager grants a provider (reference §15.4); with
/// `mr_update = false` the MRs themselves can no longer be updated (their status can).
fn provider_rules(mr_update: bool) -> Value {
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
    Value::Array(rules)
}

async fn grant_provider_rbac(admin: &kube::Client, user: &str) {
    let roles = roles_api(admin);
    let role: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": ROLE},
        "rules": provider_rules(true)
    }))
    .expect("role");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let bindings: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ApiResource {
            group: "rbac.authorization.k8s.io".into(),
            version: "v1".into(),
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: "ClusterRoleBinding".into(),
            plural: "clusterrolebindings".into(),
        },
    );
    let b: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "crossplane:provider:fake:system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "crossplane:provider:fake:system"},
        "subjects": [{"kind": "User", "name": user}]
    }))
    .expect("binding");
    bindings
        .create(&PostParams::default(), &b)
        .await
        .expect("create binding");
}

async fn wait_for<T, F, Fut>(mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not reached in time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Env {
    async fn new() -> Env {
        let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
            .await
            .expect("start test server");
        let admin = client_for(&server, &server.admin_token()).await;
        let widget = Arc::new(widget_kind());
        let gadget = Arc::new(gadget_kind());
        install_crds(&admin, &[widget.as_ref(), gadget.as_ref()]).await;
        let user = "system:serviceaccount:crossplane-system:provider-fake";
        grant_provider_rbac(&admin, user).await;
        let token = server.issue_token(user, &[]);
        let provider = client_for(&server, &token).await;
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

    fn ctx(&self) -> ControllerContext {
        let mut c = ControllerContext::new(
            self.provider.clone(),
            Arc::new(FakeResolver { s: self.s.clone() }),
            "provider-fake",
        );
        c.metrics = self.metrics.clone();
        c.management_policies_enabled = self.mp_enabled;
        c
    }

    fn rec(&self, scope: Scope) -> Reconciler<FakeKind> {
        self.rec_with(scope, self.ctx())
    }

    fn rec_with(&self, scope: Scope, ctx: ControllerContext) -> Reconciler<FakeKind> {
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

    fn gadget_rec(&self, scope: Scope) -> Reconciler<FakeKind> {
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

    fn ar(&self, kind: &FakeKind, scope: Scope) -> ApiResource {
        kind.info.api_resource(scope)
    }

    fn api(&self, scope: Scope) -> Api<DynamicObject> {
        self.api_of(&self.widget, scope, NS)
    }

    fn api_of(&self, kind: &FakeKind, scope: Scope, ns: &str) -> Api<DynamicObject> {
        let ar = self.ar(kind, scope);
        match scope {
            Scope::Namespaced => Api::namespaced_with(self.admin.clone(), ns, &ar),
            Scope::Cluster => Api::all_with(self.admin.clone(), &ar),
        }
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        lock(&self.s)
    }

    fn calls(&self) -> Vec<String> {
        self.script().calls.clone()
    }

    fn clear(&self) {
        self.script().calls.clear();
    }

    async fn ensure_ns(&self, ns: &str) {
        let api: Api<Namespace> = Api::all(self.admin.clone());
        if api.get_opt(ns).await.expect("get ns").is_none() {
            let n: Namespace =
                serde_json::from_value(json!({"metadata": {"name": ns}})).expect("ns");
            api.create(&PostParams::default(), &n)
                .await
                .expect("create ns");
        }
    }

    async fn create_in(
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

    async fn create(&self, scope: Scope, name: &str, spec: Value, ann: &[(&str, &str)]) {
        self.create_in(&self.widget, scope, NS, name, spec, ann)
            .await;
    }

    async fn get(&self, scope: Scope, name: &str) -> Option<DynamicObject> {
        self.api(scope).get_opt(name).await.expect("get MR")
    }

    async fn must(&self, scope: Scope, name: &str) -> DynamicObject {
        self.get(scope, name).await.expect("MR exists")
    }

    async fn reconcile(&self, scope: Scope, name: &str) -> Outcome {
        let ns = (scope == Scope::Namespaced).then_some(NS);
        self.rec(scope).reconcile(ns, name).await
    }

    async fn patch(&self, scope: Scope, name: &str, p: Value) {
        self.api(scope)
            .patch(name, &PatchParams::default(), &Patch::Merge(&p))
            .await
            .expect("patch MR");
    }

    async fn delete(&self, scope: Scope, name: &str) {
        self.api(scope)
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete MR");
    }

    async fn events_in(&self, ns: &str, name: &str) -> Vec<Event> {
        let api: Api<Event> = Api::namespaced(self.admin.clone(), ns);
        api.list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .collect()
    }

    async fn events(&self, name: &str) -> Vec<Event> {
        self.events_in(NS, name).await
    }

    async fn reasons(&self, name: &str) -> Vec<String> {
        self.events(name)
            .await
            .into_iter()
            .filter_map(|e| e.reason)
            .collect()
    }

    async fn set_status(&self, scope: Scope, name: &str, status: Value) {
        let mut o = self.must(scope, name).await;
        o.data["status"] = status;
        self.api(scope)
            .replace_status(name, &PostParams::default(), &o)
            .await
            .expect("write status");
    }

    /// Bring a fresh MR to "exists and up to date": the first reconcile creates it, the second
    /// observes it.
    async fn converge(&self, scope: Scope, name: &str) {
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

fn cond(o: &DynamicObject, t: &str) -> Option<Condition> {
    o.data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok())
        .and_then(|l| l.into_iter().find(|c| c.type_ == t))
}

fn conds(o: &DynamicObject) -> Vec<Condition> {
    o.data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok())
        .unwrap_or_default()
}

fn synced(o: &DynamicObject) -> (String, String, String) {
    let c = cond(o, "Synced").expect("Synced condition");
    (c.status, c.reason, c.message)
}

fn ready(o: &DynamicObject) -> Option<(String, String)> {
    cond(o, "Ready").map(|c| (c.status, c.reason))
}

fn ann(o: &DynamicObject, k: &str) -> Option<String> {
    o.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(k))
        .cloned()
}

fn has_finalizer(o: &DynamicObject) -> bool {
    o.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == meta::FINALIZER))
}

fn at_provider(o: &DynamicObject) -> Value {
    o.data
        .get("status")
        .and_then(|s| s.get("atProvider"))
        .cloned()
        .unwrap_or(Value::Null)
}

fn hist_text(h: prometheus_client::metrics::histogram::Histogram) -> String {
    let mut r = prometheus_client::registry::Registry::default();
    r.register("h", "h", h);
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &r).expect("encode");
    out
}

fn is_after_poll(o: &Outcome) -> bool {
    matches!(o, Outcome::After(d) if *d >= Duration::from_secs(570) && *d <= Duration::from_secs(630))
}

fn stamp_ago(secs: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::seconds(secs))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

const N: Scope = Scope::Namespaced;
const L: Scope = Scope::Cluster;

// ---------------------------------------------------------------------------------------------
// A. Creation and adoption

#[tokio::test]
async fn conformance_001_external_name_defaults_before_connect() {
    let e = Env::new().await;
    // a reference to a target without an external name yet would fail; the target gets its
    // own name in the same way, and the connector sees our external name.
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("w1"));
    assert_eq!(e.script().connect_ext_names, vec!["w1".to_string()]);
    // visible to a reference resolver at once: another MR resolves it in its first reconcile
    e.create(
        N,
        "w2",
        json!({"forProvider": {"parentNameRef": {"name": "w1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w2").await;
    assert_eq!(
        e.must(N, "w2").await.data["spec"]["forProvider"]["parentName"],
        "w1"
    );
}

#[tokio::test]
async fn conformance_002_empty_external_name_is_absent() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "")])
        .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        ann(&e.must(N, "w1").await, meta::EXTERNAL_NAME).as_deref(),
        Some("w1")
    );
}

#[tokio::test]
async fn conformance_003_server_assigned_identifier() {
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "g1", json!({}), &[]).await;
    let r = e.gadget_rec(N);
    assert_eq!(r.reconcile(Some(NS), "g1").await, Outcome::Backoff);
    // Observe made no JFrog request (empty external name); Create made one.
    assert_eq!(e.script().jfrog_requests, 1);
    assert_eq!(e.script().connect_ext_names, vec![String::new()]);
    let o = e.api_of(&e.gadget, N, NS).get("g1").await.expect("get");
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("srv-1"));
    assert!(ann(&o, meta::EXTERNAL_CREATE_PENDING).is_some());
    assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
}

#[tokio::test]
async fn conformance_004_order_of_writes_on_first_reconcile() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    let rv0 = e.must(N, "w1").await.metadata.resource_version.expect("rv");
    let api = e.api(N);
    let mut stream = api
        .watch(&kube::api::WatchParams::default(), &rv0)
        .await
        .expect("watch")
        .boxed();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let mut states = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        if let Ok(kube::api::WatchEvent::Modified(o)) = ev {
            let has = |k: &str| ann(&o, k).is_some();
            let step = if cond(&o, "Synced").is_some() {
                "status"
            } else if has(meta::EXTERNAL_CREATE_SUCCEEDED) {
                "succeeded"
            } else if has(meta::EXTERNAL_CREATE_PENDING) {
                "pending"
            } else if has_finalizer(&o) {
                "finalizer"
            } else if has(meta::EXTERNAL_NAME) {
                "external-name"
            } else {
                "other"
            };
            states.push(step);
            if step == "status" {
                break;
            }
        }
    }
    assert_eq!(
        states,
        vec![
            "external-name",
            "finalizer",
            "pending",
            "succeeded",
            "status"
        ]
    );
    assert_eq!(
        e.calls(),
        vec!["track", "connect", "observe", "create", "disconnect"]
    );
    let o = e.must(N, "w1").await;
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert_eq!(synced(&o).1, "ReconcileSuccess");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CreatedExternalResource".to_string())
    );
    assert!(at_provider(&o).get("id").is_none());
}

#[tokio::test]
async fn conformance_005_create_status_changes_discarded() {
    let e = Env::new().await;
    e.script().create_sets = Some((json!({"id": "x"}), "example.com/extra".into(), "y".into()));
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, "example.com/extra").as_deref(), Some("y"));
    assert!(at_provider(&o).get("id").is_none());
}

#[tokio::test]
async fn conformance_006_immediate_reobservation_after_create() {
    let e = Env::new().await;
    let ctx = e.ctx();
    let stop = ctx.shutdown.clone();
    let reg = register_shared(
        e.widget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: false,
        }),
    );
    let h = tokio::spawn(reg.start(ctx, N));
    e.create(N, "w1", json!({}), &[]).await;
    let o = wait_for(|| async {
        let o = e.get(N, "w1").await?;
        (ready(&o) == Some(("True".into(), "Available".into()))).then_some(o)
    })
    .await;
    assert_eq!(synced(&o).0, "True");
    // Re-observed once after the create, through the annotation event: exactly 2 observes
    // and no back-off retry of a failure.
    let obs = e.calls().iter().filter(|c| *c == "observe").count();
    assert!(obs >= 2);
    // The state gauges follow the cache.
    let gvk = ManagedMetrics::gvk(&e.widget.info.gvk_label(N));
    wait_for(|| async {
        (e.metrics.exists.get_or_create(&gvk).get() == 1
            && e.metrics.ready.get_or_create(&gvk).get() == 1
            && e.metrics.synced.get_or_create(&gvk).get() == 1)
            .then_some(())
    })
    .await;
    stop.cancel();
    h.await.expect("controller stops");
}

#[tokio::test]
async fn conformance_007_adoption() {
    let e = Env::new().await;
    e.script()
        .store
        .insert("existing".into(), json!({"x": "1"}));
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "1"}}),
        &[(meta::EXTERNAL_NAME, "existing")],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert!(!e.calls().contains(&"create".to_string()));
    let m = e.must(N, "w1").await;
    assert!(ann(&m, meta::EXTERNAL_CREATE_PENDING).is_none());
    assert!(ann(&m, meta::EXTERNAL_CREATE_SUCCEEDED).is_none());
    assert_eq!(ready(&m), Some(("True".into(), "Available".into())));
    assert!(
        !e.reasons("w1")
            .await
            .contains(&"CreatedExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_008_create_rejected() {
    let e = Env::new().await;
    e.script().create_err = Some("400 Bad Request: repository key is invalid".into());
    e.create(N, "w1", json!({}), &[]).await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(ann(&o, meta::EXTERNAL_CREATE_FAILED).is_some());
    let (s, r, m) = synced(&o);
    assert_eq!((s.as_str(), r.as_str()), ("False", "ReconcileError"));
    assert!(m.starts_with("create failed: "), "{m}");
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    let ev = e.events("w1").await;
    assert!(ev.iter().any(|x| {
        x.reason.as_deref() == Some("CannotCreateExternalResource")
            && x.message
                .as_deref()
                .is_some_and(|m| m.contains("repository key is invalid"))
    }));
    // Not blocked: Create is retried.
    e.clear();
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_009_create_succeeds_annotation_write_fails() {
    // While Create runs, the provider loses `update` on the MR (its status stays writable):
    // the critical annotation updater retries, gives up and reports. A server-assigned Kind:
    // its new ID is lost with the write, which is what the step-8 stop is for (Q6).
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &[]).await;
    let get = || async { e.api_of(&e.gadget, N, NS).get("w1").await.expect("get") };
    let roles = roles_api(&e.admin);
    let r2 = roles.clone();
    e.script().create_hook = Some(Box::new(move || {
        Box::pin(async move {
            r2.patch(
                ROLE,
                &PatchParams::default(),
                &Patch::Merge(&json!({"rules": provider_rules(false)})),
            )
            .await
            .expect("narrow the role");
        })
    }));
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "w1").await,
        Outcome::Backoff
    );
    let o = get().await;
    let (s, _, m) = synced(&o);
    assert_eq!(s, "False");
    assert!(
        m.starts_with(
            "cannot update managed resource annotations: cannot update critical annotations: "
        ),
        "{m}"
    );
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotUpdateManagedResource")
        && x.message.as_deref().is_some_and(|t| t.starts_with(
            "cannot update managed resource annotations: cannot update critical annotations: "
        ))));
    // Healed: the next reconcile stops with "cannot determine creation result".
    roles
        .patch(
            ROLE,
            &PatchParams::default(),
            &Patch::Merge(&json!({"rules": provider_rules(true)})),
        )
        .await
        .expect("restore the role");
    e.clear();
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "w1").await,
        Outcome::Done
    );
    assert_eq!(synced(&get().await).2, meta::MSG_CREATION_INCOMPLETE);
    assert!(!e.calls().contains(&"connect".to_string()));
}

#[tokio::test]
async fn conformance_010_critical_update_conflict_once() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    let target = (
        e.admin.clone(),
        e.ar(&e.widget, N),
        Some(NS.to_string()),
        "w1".to_string(),
    );
    e.script().create_hook = Some(Box::new(move || Box::pin(bump(Some(target)))));
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
    assert!(
        o.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("bumped"))
    );
    assert_eq!(synced(&o).0, "True");
}

#[tokio::test]
async fn conformance_011_restart_mid_create_stops() {
    // A server-assigned Kind; deterministic identifiers continue (11b,
    // conformance_deterministic.rs).
    let e = Env::new().await;
    let pending = stamp_ago(5);
    let a = [(meta::EXTERNAL_CREATE_PENDING, pending.as_str())];
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &a).await;
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "w1").await,
        Outcome::Done
    );
    assert!(!e.calls().contains(&"connect".to_string()));
    let o = e.api_of(&e.gadget, N, NS).get("w1").await.expect("get");
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert_eq!(synced(&o).2, meta::MSG_CREATION_INCOMPLETE);
    let ev = e.events("w1").await;
    assert!(ev.iter().any(
        |x| x.reason.as_deref() == Some("CannotInitializeManagedResource")
            && x.message.as_deref() == Some(meta::MSG_CREATION_INCOMPLETE)
    ));
}

async fn blocked_with(pending: &str, succeeded: Option<&str>) -> bool {
    let e = Env::new().await;
    let mut a = vec![(meta::EXTERNAL_CREATE_PENDING, pending)];
    if let Some(s) = succeeded {
        a.push((meta::EXTERNAL_CREATE_SUCCEEDED, s));
    }
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &a).await;
    e.gadget_rec(N).reconcile(Some(NS), "w1").await;
    !e.calls().contains(&"connect".to_string())
}

#[tokio::test]
async fn conformance_012_pending_older_than_succeeded() {
    assert!(!blocked_with("2024-01-01T00:00:00Z", Some("2024-01-01T00:00:05Z")).await);
    assert!(!blocked_with("2024-01-01T00:00:00Z", Some("2024-01-01T00:00:00Z")).await);
}

#[tokio::test]
async fn conformance_013_pending_newer_than_succeeded() {
    assert!(blocked_with("2024-01-01T00:00:05Z", Some("2024-01-01T00:00:00Z")).await);
}

#[tokio::test]
async fn conformance_014_unparseable_stamps() {
    assert!(!blocked_with("yesterday", None).await);
}

#[tokio::test]
async fn conformance_015_removing_pending_alone_needs_a_kick() {
    // The filter: removing only the pending annotation is not a qualifying change. A
    // server-assigned Kind: only those are blocked (Q6).
    let e = Env::new().await;
    let pending = stamp_ago(5);
    let a = [(meta::EXTERNAL_CREATE_PENDING, pending.as_str())];
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &a).await;
    let api = e.api_of(&e.gadget, N, NS);
    let patch = |p: Value| {
        let api = api.clone();
        async move {
            api.patch("w1", &PatchParams::default(), &Patch::Merge(&p))
                .await
                .expect("patch MR");
        }
    };
    let before = api.get("w1").await.expect("get");
    patch(json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: null}}})).await;
    let after = api.get("w1").await.expect("get");
    assert_eq!(
        FilterKey::of(&before.metadata),
        FilterKey::of(&after.metadata)
    );
    // With a reconcile request in the same edit: a reconcile, ReconcileRequestHandled, and
    // Observe/Create proceed (driven by the real controller).
    patch(json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: stamp_ago(5)}}}))
        .await;
    let ctx = e.ctx();
    let stop = ctx.shutdown.clone();
    let reg = register_shared(
        e.gadget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: true,
        }),
    );
    let h = tokio::spawn(reg.start(ctx, N));
    wait_for(|| async {
        e.reasons("w1")
            .await
            .contains(&"CannotInitializeManagedResource".to_string())
            .then_some(())
    })
    .await;
    assert!(!e.calls().contains(&"connect".to_string()));
    patch(json!({"metadata": {"annotations": {
        meta::EXTERNAL_CREATE_PENDING: null,
        meta::RECONCILE_REQUESTED_AT: "kick-1"}}}))
    .await;
    wait_for(|| async { e.calls().contains(&"create".to_string()).then_some(()) }).await;
    assert!(
        e.reasons("w1")
            .await
            .contains(&"ReconcileRequestHandled".to_string())
    );
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_016_creation_grace_period() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({}),
        &[
            (meta::EXTERNAL_NAME, "w1"),
            (meta::EXTERNAL_CREATE_PENDING, &stamp_ago(11)),
            (meta::EXTERNAL_CREATE_SUCCEEDED, &stamp_ago(10)),
        ],
    )
    .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    let rv = e.must(N, "w1").await.metadata.resource_version;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert_eq!(e.must(N, "w1").await.metadata.resource_version, rv);
    assert!(!e.calls().contains(&"create".to_string()));
    assert!(
        e.reasons("w1")
            .await
            .contains(&"PendingExternalResource".to_string())
    );
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {
            meta::EXTERNAL_CREATE_PENDING: stamp_ago(32),
            meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(31)}}}),
    )
    .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
    // finalizer cleanup not needed: the server is dropped with the test
}

#[tokio::test]
async fn conformance_017_stale_cache_protection() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    let target = (
        e.admin.clone(),
        e.ar(&e.widget, N),
        Some(NS.to_string()),
        "w1".to_string(),
    );
    e.script().bump_on_observe = Some(target);
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(!e.calls().contains(&"create".to_string()));
    let o = e.must(N, "w1").await;
    assert!(cond(&o, "Synced").is_none());
    assert!(ann(&o, meta::EXTERNAL_CREATE_PENDING).is_none());
    assert!(e.events("w1").await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// B. Observe, drift, updates

#[tokio::test]
async fn conformance_018_not_found_leads_to_create() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
    assert!(e.script().store.contains_key("w1"));
}

async fn observe_error_case(err: &str) {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().observe_err = Some(err.into());
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    let (s, _, m) = synced(&o);
    assert_eq!(s, "False");
    assert_eq!(m, format!("observe failed: {err}"));
    assert_eq!(ready(&o), Some(("True".into(), "Available".into())));
    assert!(!e.calls().contains(&"create".to_string()));
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotObserveExternalResource")
        && x.message.as_deref() == Some(err)));
}

#[tokio::test]
async fn conformance_019_observe_500() {
    observe_error_case("500 Internal Server Error: storage is down").await;
}

#[tokio::test]
async fn conformance_020_observe_401_403() {
    observe_error_case("401 Unauthorized: bad credentials").await;
    observe_error_case("403 Forbidden: not an admin").await;
}

#[tokio::test]
async fn conformance_021_observe_timeout() {
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(180));
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.script().observe_delay = Some(Duration::from_secs(5));
    let mut ctx = e.ctx();
    ctx.timeout = Duration::from_millis(500);
    let o = e.rec_with(N, ctx).reconcile(Some(NS), "w1").await;
    assert_eq!(o, Outcome::Backoff);
    let m = e.must(N, "w1").await;
    assert_eq!(synced(&m).2, "observe failed: context deadline exceeded");
    assert!(!e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_022_up_to_date() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    let before = e.events("w1").await.len();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    let m = e.must(N, "w1").await;
    assert_eq!(
        synced(&m),
        ("True".into(), "ReconcileSuccess".into(), String::new())
    );
    assert_eq!(e.events("w1").await.len(), before);
}

#[tokio::test]
async fn conformance_023_drift_reverted() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(
        e.script().update_params.last().expect("update")["x"],
        "want"
    );
    assert!(
        e.reasons("w1")
            .await
            .contains(&"UpdatedExternalResource".to_string())
    );
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
    // The drift histogram has one observation.
    let gvk = e.widget.info.gvk_label(N);
    let h = e
        .metrics
        .drift
        .get_or_create(&ManagedMetrics::gvk(&gvk))
        .clone();
    let text = hist_text(h);
    assert!(text.contains("h_count 1"), "{text}");
}

#[tokio::test]
async fn update_right_after_create_marks_available() {
    // The adapter's view still carries `Ready=False Creating` from the create; a successful
    // update must not write that stale copy back over the `Available` marked at observe.
    let e = Env::new().await;
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("False".to_string(), "Creating".to_string()))
    );
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {
            meta::EXTERNAL_CREATE_PENDING: stamp_ago(61),
            meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60)}}}),
    )
    .await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert!(e.calls().contains(&"update".to_string()));
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("True".to_string(), "Available".to_string()))
    );
}

#[tokio::test]
async fn conformance_024_update_fails() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.script().update_err = Some("500 Internal Server Error".into());
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with("update failed: "), "{m}");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotUpdateExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_025_immutable_field() {
    let e = Env::new().await;
    e.script().immutable_size = true;
    e.create(N, "w1", json!({"forProvider": {"size": 1}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.patch(N, "w1", json!({"spec": {"forProvider": {"size": 2}}}))
        .await;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with("update failed: "), "{m}");
    assert!(
        m.contains("refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument \"size\""),
        "{m}"
    );
    let calls = e.calls();
    assert!(!calls.contains(&"delete".to_string()) && !calls.contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_026_deleted_out_of_band_is_recreated() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().store.clear();
    e.clear();
    // create-succeeded is fresh; wait out the grace period by back-dating it
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60), meta::EXTERNAL_CREATE_PENDING: stamp_ago(61)}}}),
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(e.calls().contains(&"create".to_string()));
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("False".into(), "Creating".into()))
    );
    e.reconcile(N, "w1").await;
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("True".into(), "Available".into()))
    );
}

#[tokio::test]
async fn conformance_027_update_status_kept() {
    let e = Env::new().await;
    e.script().update_sets = Some(json!({"x": "from-update"}));
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.reconcile(N, "w1").await;
    assert_eq!(at_provider(&e.must(N, "w1").await)["x"], "from-update");
}

#[tokio::test]
async fn conformance_028_late_initialisation() {
    let e = Env::new().await;
    e.script().late_init = true;
    e.script().store.insert(
        "w1".into(),
        json!({"description": "server-default", "x": "mine"}),
    );
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "mine"}}),
        &[(meta::EXTERNAL_NAME, "w1")],
    )
    .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    let g1 = e.must(N, "w1").await.metadata.generation;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(
        o.data["spec"]["forProvider"]["description"],
        "server-default"
    );
    assert!(o.metadata.generation > g1);
    assert!(
        at_provider(&o).get("id").is_none(),
        "atProvider not persisted in the late-init reconcile"
    );
    e.reconcile(N, "w1").await;
    assert_eq!(at_provider(&e.must(N, "w1").await)["id"], "w1");

    // A value the user set is never overwritten.
    e.script().store.insert(
        "w2".into(),
        json!({"description": "server-default", "x": "theirs"}),
    );
    e.create(
        N,
        "w2",
        json!({"forProvider": {"x": "mine"}}),
        &[(meta::EXTERNAL_NAME, "w2")],
    )
    .await;
    e.reconcile(N, "w2").await;
    e.reconcile(N, "w2").await;
    let o = e.must(N, "w2").await;
    assert_eq!(o.data["spec"]["forProvider"]["x"], "mine");
    assert_eq!(
        o.data["spec"]["forProvider"]["description"],
        "server-default"
    );
}

#[tokio::test]
async fn conformance_029_late_initialize_disabled() {
    let e = Env::new().await;
    e.script().late_init = true;
    e.script()
        .store
        .insert("w1".into(), json!({"description": "server-default"}));
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Create", "Update", "Delete"]}),
        &[(meta::EXTERNAL_NAME, "w1")],
    )
    .await;
    let g = e.must(N, "w1").await.metadata.generation;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.metadata.generation, g);
    assert!(o.data["spec"]["forProvider"].get("description").is_none());
}

#[tokio::test]
async fn conformance_030_init_provider_at_create() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "b"}, "initProvider": {"description": "a", "x": "a"}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let p = e.script().create_params[0].clone();
    assert_eq!(p["description"], "a");
    assert_eq!(p["x"], "b");
}

#[tokio::test]
async fn conformance_031_init_provider_ignored_after_create() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"initProvider": {"description": "a"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"description": "changed"}));
    e.patch(
        N,
        "w1",
        json!({"spec": {"initProvider": {"description": "edited"}}}),
    )
    .await;
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert!(!e.calls().contains(&"update".to_string()));
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
}

#[tokio::test]
async fn conformance_032_init_provider_with_feature_disabled() {
    let mut e = Env::new().await;
    e.mp_enabled = false;
    e.create(N, "w1", json!({"initProvider": {"description": "a"}}), &[])
        .await;
    e.reconcile(N, "w1").await;
    assert!(e.script().create_params[0].get("description").is_none());
}

#[tokio::test]
async fn conformance_033_policy_without_update_leaves_drift() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "want"}, "managementPolicies": ["Observe", "Create", "Delete", "LateInitialize"]}),
        &[],
    )
    .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    let before = e.events("w1").await.len();
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert!(!e.calls().contains(&"update".to_string()));
    assert_eq!(e.events("w1").await.len(), before);
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
}

// ---------------------------------------------------------------------------------------------
// C. Deletion

#[tokio::test]
async fn conformance_034_delete_existing() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(e.calls().contains(&"delete".to_string()));
    let o = e.must(N, "w1").await;
    assert!(has_finalizer(&o));
    assert_eq!(ready(&o), Some(("False".into(), "Deleting".into())));
    assert_eq!(synced(&o).0, "True");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"DeletedExternalResource".to_string())
    );
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_none());
    let gvk = e.widget.info.gvk_label(N);
    let text = hist_text(
        e.metrics
            .deletion
            .get_or_create(&ManagedMetrics::gvk(&gvk))
            .clone(),
    );
    assert!(text.contains("h_count 1"), "{text}");
}

#[tokio::test]
async fn conformance_035_already_gone() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().store.clear();
    e.patch(N, "w1", json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60), meta::EXTERNAL_CREATE_PENDING: stamp_ago(61)}}})).await;
    e.delete(N, "w1").await;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(!e.calls().contains(&"delete".to_string()));
    assert!(e.get(N, "w1").await.is_none());
    assert!(
        !e.reasons("w1")
            .await
            .contains(&"DeletedExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_036_delete_fails() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().delete_err = Some("500 Internal Server Error".into());
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(has_finalizer(&o));
    assert_eq!(ready(&o), Some(("False".into(), "Deleting".into())));
    let (s, _, m) = synced(&o);
    assert_eq!(s, "False");
    assert!(m.starts_with("delete failed: "), "{m}");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotDeleteExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_037_delete_404_is_success() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.delete(N, "w1").await;
    // Observe still sees it, but it is gone (404) by the time Delete runs.
    e.script().vanish_on_observe = true;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(e.calls().contains(&"delete:404".to_string()));
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
    // The next Observe sees not-exists, and the finalizer is removed.
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_none());
}

async fn orphan_case(scope: Scope, spec: Value, expect_delete: bool, mp: bool) {
    let mut e = Env::new().await;
    e.mp_enabled = mp;
    e.create(scope, "w1", spec, &[]).await;
    e.converge(scope, "w1").await;
    e.delete(scope, "w1").await;
    e.clear();
    let mut n = 0;
    while e.get(scope, "w1").await.is_some() {
        e.reconcile(scope, "w1").await;
        n += 1;
        assert!(n < 5, "deletion did not finish");
    }
    let calls = e.calls();
    assert_eq!(
        calls.contains(&"delete".to_string()),
        expect_delete,
        "{calls:?}"
    );
    if !expect_delete {
        assert!(!calls.contains(&"connect".to_string()));
        assert!(!calls.contains(&"observe".to_string()));
        assert!(e.script().store.contains_key("w1"));
    }
}

#[tokio::test]
async fn conformance_038_orphan_by_policy() {
    orphan_case(
        N,
        json!({"managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}),
        false,
        true,
    )
    .await;
}

#[tokio::test]
async fn conformance_039_orphan_by_deletion_policy() {
    orphan_case(L, json!({"deletionPolicy": "Orphan"}), false, true).await;
}

#[tokio::test]
async fn conformance_040_legacy_orphan_with_delete_policy_deletes() {
    orphan_case(
        L,
        json!({"deletionPolicy": "Orphan", "managementPolicies": ["Observe", "Create", "Update", "Delete"]}),
        true,
        true,
    )
    .await;
}

#[tokio::test]
async fn conformance_041_legacy_delete_without_delete_policy_orphans() {
    orphan_case(
        L,
        json!({"deletionPolicy": "Delete", "managementPolicies": ["Observe", "Create", "Update"]}),
        false,
        true,
    )
    .await;
}

#[tokio::test]
async fn conformance_042_legacy_feature_disabled() {
    orphan_case(L, json!({"deletionPolicy": "Orphan"}), false, false).await;
    orphan_case(L, json!({"deletionPolicy": "Delete"}), true, false).await;
}

#[tokio::test]
async fn conformance_043_extra_finalizer_waits() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER, "example.com/hold"]}}),
    )
    .await;
    e.delete(N, "w1").await;
    let rv = e.must(N, "w1").await.metadata.resource_version;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(!e.calls().contains(&"delete".to_string()));
    assert_eq!(e.must(N, "w1").await.metadata.resource_version, rv);
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"delete".to_string()));
}

#[tokio::test]
async fn conformance_044_credentials_gone() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().connect_err =
        Some("cannot get credentials secret: secrets \"jfrog\" not found".into());
    e.delete(N, "w1").await;
    for _ in 0..2 {
        assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    }
    let o = e.must(N, "w1").await;
    assert!(synced(&o).2.starts_with("connect failed: "));
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotConnectToProvider".to_string())
    );
    // With an Orphan policy it completes.
    e.patch(
        N,
        "w1",
        json!({"spec": {"managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}}),
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_none());
}

#[tokio::test]
async fn conformance_045_no_reference_resolution_during_deletion() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "gone"}, "parentName": "x"}}),
        &[],
    )
    .await;
    e.converge(N, "w1").await;
    e.patch(N, "w1", json!({"spec": {"forProvider": {"parentName": null, "parentNameRef": {"policy": {"resolve": "Always"}}}}}))
        .await;
    e.delete(N, "w1").await;
    let mut n = 0;
    while e.get(N, "w1").await.is_some() {
        e.reconcile(N, "w1").await;
        n += 1;
        assert!(n < 5);
    }
    assert!(
        !e.reasons("w1")
            .await
            .contains(&"CannotResolveResourceReferences".to_string())
    );
}

#[tokio::test]
async fn conformance_046_paused_mr_cannot_be_deleted() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::PAUSED: "true"}}}),
    )
    .await;
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    let o = e.must(N, "w1").await;
    assert!(o.metadata.deletion_timestamp.is_some() && has_finalizer(&o));
    assert_eq!(synced(&o).1, "ReconcilePaused");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"ReconciliationPaused".to_string())
    );
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::PAUSED: null}}}),
    )
    .await;
    let mut n = 0;
    while e.get(N, "w1").await.is_some() {
        e.reconcile(N, "w1").await;
        n += 1;
        assert!(n < 5);
    }
}

#[tokio::test]
async fn conformance_047_creation_incomplete_during_deletion() {
    // A server-assigned Kind: only those are blocked (Q6).
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &[]).await;
    let api = e.api_of(&e.gadget, N, NS);
    let r = e.gadget_rec(N);
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Backoff);
    let patch = |p: Value| {
        let api = api.clone();
        async move {
            api.patch("w1", &PatchParams::default(), &Patch::Merge(&p))
                .await
                .expect("patch MR");
        }
    };
    patch(json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: "2999-01-01T00:00:00Z"}}}))
        .await;
    api.delete("w1", &DeleteParams::default())
        .await
        .expect("delete MR");
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Done);
    let o = api.get("w1").await.expect("get");
    assert_eq!(synced(&o).2, meta::MSG_CREATION_INCOMPLETE);
    patch(
        json!({"spec": {"managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}}),
    )
    .await;
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Done);
    assert!(api.get_opt("w1").await.expect("get").is_none());
}

#[tokio::test]
async fn conformance_048_deletion_with_invalid_policy() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.patch(
        N,
        "w1",
        json!({"spec": {"managementPolicies": ["Create", "Delete"]}}),
    )
    .await;
    e.delete(N, "w1").await;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_some());
    assert!(e.calls().is_empty());
    e.patch(N, "w1", json!({"spec": {"managementPolicies": ["*"]}}))
        .await;
    let mut n = 0;
    while e.get(N, "w1").await.is_some() {
        e.reconcile(N, "w1").await;
        n += 1;
        assert!(n < 5);
    }
}

#[tokio::test]
async fn conformance_049_connection_secret_removed_by_gc() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "w1-conn"},
               "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}),
        &[],
    )
    .await;
    e.converge(N, "w1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s = secrets.get("w1-conn").await.expect("secret");
    let owner = &s.metadata.owner_references.expect("owner")[0];
    assert_eq!(owner.controller, Some(true));
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    wait_for(|| async {
        secrets
            .get_opt("w1-conn")
            .await
            .expect("get secret")
            .is_none()
            .then_some(())
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// D. Pause and management policies

#[tokio::test]
async fn conformance_050_paused_by_annotation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::PAUSED, "true")])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.calls().is_empty());
    let o = e.must(N, "w1").await;
    assert_eq!(
        synced(&o),
        ("False".into(), "ReconcilePaused".into(), String::new())
    );
    assert!(ready(&o).is_none());
    let ev = e.events("w1").await;
    assert!(ev.iter().any(|x| x.reason.as_deref() == Some("ReconciliationPaused")
        && x.type_.as_deref() == Some("Normal")
        && x.message.as_deref() == Some("Reconciliation is paused either through the `spec.managementPolicies` or the pause annotation")));
}

#[tokio::test]
async fn conformance_051_paused_capital_true_not_paused() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::PAUSED, "True")])
        .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"connect".to_string()));
}

async fn start_controller(
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

#[tokio::test]
async fn conformance_052_unpause_triggers_reconcile() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::PAUSED, "true")])
        .await;
    let (stop, h) = start_controller(&e, N).await;
    wait_for(|| async {
        e.reasons("w1")
            .await
            .contains(&"ReconciliationPaused".to_string())
            .then_some(())
    })
    .await;
    assert!(e.calls().is_empty());
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::PAUSED: null}}}),
    )
    .await;
    wait_for(|| async { e.calls().contains(&"connect".to_string()).then_some(()) }).await;
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_053_empty_policies_pause() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"managementPolicies": []}), &[])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.calls().is_empty());
    assert_eq!(synced(&e.must(N, "w1").await).1, "ReconcilePaused");
}

#[tokio::test]
async fn conformance_054_empty_policies_feature_disabled_full_control() {
    let mut e = Env::new().await;
    e.mp_enabled = false;
    e.create(N, "w1", json!({"managementPolicies": []}), &[])
        .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_055_non_default_policy_feature_disabled() {
    let mut e = Env::new().await;
    e.mp_enabled = false;
    e.create(N, "w1", json!({"managementPolicies": ["Observe"]}), &[])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.calls().is_empty());
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with(
        "`spec.managementPolicies` is set to a non-default value but the feature is not enabled: "
    ));
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotUseInvalidManagementPolicy".to_string())
    );
}

#[tokio::test]
async fn conformance_056_unsupported_policy_set() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Create", "Delete"]}),
        &[],
    )
    .await;
    e.create(
        N,
        "w2",
        json!({"managementPolicies": ["*", "Observe"]}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert_eq!(e.reconcile(N, "w2").await, Outcome::Done);
    assert_eq!(
        synced(&e.must(N, "w1").await).2,
        "`spec.managementPolicies` is set to a value([Create Delete]) which is not supported. Check docs for supported policies"
    );
    assert_eq!(
        synced(&e.must(N, "w2").await).2,
        "`spec.managementPolicies` is set to a value([* Observe]) which is not supported. Check docs for supported policies"
    );
}

#[tokio::test]
async fn conformance_057_duplicate_actions() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Observe"]}),
        &[],
    )
    .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(
        synced(&e.must(N, "w1").await).2,
        "observe failed: external resource does not exist"
    );
    assert!(!e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_058_observe_only_existing() {
    let e = Env::new().await;
    e.script().store.insert("w1".into(), json!({"x": "theirs"}));
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "mine"}, "managementPolicies": ["Observe"]}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let g = e.must(N, "w1").await.metadata.generation;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("w1"));
    assert!(has_finalizer(&o));
    assert_eq!(at_provider(&o)["x"], "theirs");
    assert_eq!(ready(&o), Some(("True".into(), "Available".into())));
    assert_eq!(synced(&o).0, "True");
    assert!(!e.calls().contains(&"update".to_string()));
    assert_eq!(o.metadata.generation, g);
}

#[tokio::test]
async fn conformance_059_observe_only_missing() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"managementPolicies": ["Observe"]}), &[])
        .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    let m = e.must(N, "w1").await;
    assert_eq!(
        synced(&m).2,
        "observe failed: external resource does not exist"
    );
    assert!(ready(&m).is_none());
    assert!(!e.calls().contains(&"create".to_string()));
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotObserveExternalResource")
        && x.message.as_deref() == Some("external resource does not exist")));
}

#[tokio::test]
async fn conformance_060_import() {
    let e = Env::new().await;
    e.script().late_init = true;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "theirs", "description": "d"}));
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "LateInitialize"]}),
        &[],
    )
    .await;
    for _ in 0..3 {
        e.reconcile(N, "w1").await;
    }
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["forProvider"]["x"], "theirs");
    let calls = e.calls();
    for c in ["create", "update", "delete"] {
        assert!(!calls.contains(&c.to_string()));
    }
}

#[tokio::test]
async fn conformance_061_observe_update_missing_calls_update() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Update"]}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let calls = e.calls();
    assert!(!calls.contains(&"create".to_string()));
    assert!(calls.contains(&"update".to_string()));
    assert!(
        synced(&e.must(N, "w1").await)
            .2
            .starts_with("update failed: ")
    );
}

#[tokio::test]
async fn conformance_062_observe_delete_missing() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Delete"]}),
        &[],
    )
    .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
    assert!(!e.calls().contains(&"create".to_string()));
}

// ---------------------------------------------------------------------------------------------
// E. Conditions and events

#[tokio::test]
async fn conformance_063_stable_last_transition_time() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    let t1 = cond(&e.must(N, "w1").await, "Synced")
        .expect("s")
        .last_transition_time;
    e.reconcile(N, "w1").await;
    let t2 = cond(&e.must(N, "w1").await, "Synced")
        .expect("s")
        .last_transition_time;
    assert_eq!(t1, t2);
}

#[tokio::test]
async fn conformance_064_message_change_new_transition_time() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.set_status(
        N,
        "w1",
        json!({"conditions": [{"type": "Synced", "status": "False", "reason": "ReconcileError",
            "message": "observe failed: old", "lastTransitionTime": "2020-01-01T00:00:00Z",
            "observedGeneration": 1}]}),
    )
    .await;
    e.script().observe_err = Some("new".into());
    e.reconcile(N, "w1").await;
    let c = cond(&e.must(N, "w1").await, "Synced").expect("s");
    assert_eq!(c.message, "observe failed: new");
    assert_ne!(c.last_transition_time, "2020-01-01T00:00:00Z");
}

#[tokio::test]
async fn conformance_065_generation_change() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    let g1 = e.must(N, "w1").await.metadata.generation.expect("g");
    let mut st = e.must(N, "w1").await.data["status"].clone();
    for c in st["conditions"].as_array_mut().expect("conds") {
        c["lastTransitionTime"] = json!("2020-01-01T00:00:00Z");
    }
    e.set_status(N, "w1", st).await;
    e.patch(
        N,
        "w1",
        json!({"spec": {"forProvider": {"description": "d"}}}),
    )
    .await;
    e.script()
        .store
        .insert("w1".into(), json!({"description": "d"}));
    e.reconcile(N, "w1").await;
    let c = cond(&e.must(N, "w1").await, "Synced").expect("s");
    assert_eq!(c.observed_generation, g1 + 1);
    assert_ne!(c.last_transition_time, "2020-01-01T00:00:00Z");
}

#[tokio::test]
async fn conformance_066_condition_order() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    e.set_status(
        N,
        "w1",
        json!({"conditions": [
            {"type": "Custom", "status": "True", "reason": "X", "lastTransitionTime": "2020-01-01T00:00:00Z"},
            {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "m", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}),
    )
    .await;
    e.reconcile(N, "w1").await;
    let types: Vec<String> = conds(&e.must(N, "w1").await)
        .into_iter()
        .map(|c| c.type_)
        .collect();
    assert_eq!(&types[..3], &["Custom", "Synced", "Ready"]);
    let mut dedup = types.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), types.len());
}

#[tokio::test]
async fn conformance_067_no_top_level_observed_generation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    assert!(
        e.must(N, "w1").await.data["status"]
            .get("observedGeneration")
            .is_none()
    );
}

#[tokio::test]
async fn conformance_068_core_v1_events_with_source_and_annotation() {
    let e = Env::new().await;
    // The reconciler runs with the provider's RBAC (no events.k8s.io).
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let ev = e.events("w1").await;
    let created = ev
        .iter()
        .find(|x| x.reason.as_deref() == Some("CreatedExternalResource"))
        .expect("event");
    assert_eq!(
        created.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("managed/widget.test.fake.m.crossplane.io")
    );
    assert_eq!(
        created
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("external-name"))
            .map(String::as_str),
        Some("w1")
    );
    // legacy MR: events in `default`
    e.create(L, "l1", json!({}), &[]).await;
    e.reconcile(L, "l1").await;
    let lev = e.events_in("default", "l1").await;
    assert!(
        lev.iter()
            .any(|x| x.source.as_ref().and_then(|s| s.component.as_deref())
                == Some("managed/widget.test.fake.crossplane.io"))
    );
}

#[tokio::test]
async fn conformance_069_event_aggregation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.script().observe_err = Some("500 Internal Server Error".into());
    let r = e.rec(N);
    r.reconcile(Some(NS), "w1").await;
    r.reconcile(Some(NS), "w1").await;
    let ev: Vec<Event> = e
        .events("w1")
        .await
        .into_iter()
        .filter(|x| x.reason.as_deref() == Some("CannotObserveExternalResource"))
        .collect();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].count, Some(2));
}

#[tokio::test]
async fn conformance_070_last_async_operation() {
    let e = Env::new().await;
    e.script().create_err = Some("400 Bad Request: bad".into());
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    let la = cond(&o, "LastAsyncOperation").expect("LastAsyncOperation");
    assert_eq!(
        (la.status.as_str(), la.reason.as_str()),
        ("False", "AsyncCreateFailure")
    );
    assert_eq!(la.message, "async create failed: 400 Bad Request: bad");
    assert_eq!(
        synced(&o).2,
        "create failed: async create failed: 400 Bad Request: bad"
    );
    e.script().create_err = None;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w1").await;
    let la = cond(&e.must(N, "w1").await, "LastAsyncOperation").expect("lao");
    assert_eq!(
        (la.status.as_str(), la.reason.as_str()),
        ("True", "Success")
    );
}

// ---------------------------------------------------------------------------------------------
// F. References

#[tokio::test]
async fn conformance_071_ref_resolves_by_external_name_with_ssa() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "ext-t1")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["forProvider"]["parentName"], "ext-t1");
    // The target is not Ready (never reconciled), yet the reference resolved.
    assert!(cond(&e.must(N, "t1").await, "Ready").is_none());
    // The resolver's SSA patch owns the resolved field.
    let mf = o.metadata.managed_fields.clone().unwrap_or_default();
    let entry = mf
        .iter()
        .find(|m| {
            m.manager.as_deref() == Some("managed.crossplane.io/api-simple-reference-resolver")
        })
        .unwrap_or_else(|| panic!("no managedFields entry of the resolver: {mf:?}"));
    assert_eq!(entry.operation.as_deref(), Some("Apply"));
    let owned = serde_json::to_string(&entry.fields_v1).expect("fieldsV1");
    assert!(owned.contains("f:parentName"), "{owned}");
}

#[tokio::test]
async fn conformance_072_ref_to_missing_mr() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "nope"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(!e.calls().contains(&"connect".to_string()));
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with("cannot resolve references: mg.Spec.ForProvider.ParentName: cannot get referenced resource: "), "{m}");
    assert!(m.ends_with("not found"), "{m}");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotResolveResourceReferences".to_string())
    );
}

#[tokio::test]
async fn conformance_073_ref_to_uncreated_server_assigned_mr() {
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "g1", json!({}), &[]).await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"gadgetIdRef": {"name": "g1"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(
        synced(&e.must(N, "w1").await)
            .2
            .ends_with("referenced field was empty (referenced resource may not yet be ready)")
    );
}

#[tokio::test]
async fn conformance_074_optional_resolution() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "nope", "policy": {"resolution": "Optional"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"connect".to_string()));
    assert!(
        e.must(N, "w1").await.data["spec"]["forProvider"]
            .get("parentName")
            .is_none()
    );
}

#[tokio::test]
async fn conformance_075_if_not_present_caches() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "new-ext")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentName": "old-ext", "parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "old-ext"
    );
}

#[tokio::test]
async fn conformance_076_always_follows_target() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "a")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentName": "old", "parentNameRef": {"name": "t1", "policy": {"resolve": "Always"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "a"
    );
    e.patch(
        N,
        "t1",
        json!({"metadata": {"annotations": {meta::EXTERNAL_NAME: "b"}}}),
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "b"
    );
}

#[tokio::test]
async fn conformance_077_selector_picks_first_in_list_order() {
    let e = Env::new().await;
    for n in ["b", "a"] {
        e.create(
            N,
            n,
            json!({}),
            &[(meta::EXTERNAL_NAME, &format!("ext-{n}"))],
        )
        .await;
        e.patch(N, n, json!({"metadata": {"labels": {"team": "x"}}}))
            .await;
    }
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameSelector": {"matchLabels": {"team": "x"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["forProvider"]["parentName"], "ext-a");
    assert_eq!(o.data["spec"]["forProvider"]["parentNameRef"]["name"], "a");
    e.create(N, "0", json!({}), &[(meta::EXTERNAL_NAME, "ext-0")])
        .await;
    e.patch(N, "0", json!({"metadata": {"labels": {"team": "x"}}}))
        .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentNameRef"]["name"],
        "a"
    );
}

#[tokio::test]
async fn conformance_078_match_controller_ref() {
    let e = Env::new().await;
    // Two real controllers (ConfigMaps stand in for composite resources), so that garbage
    // collection keeps the dependants.
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(e.admin.clone(), NS);
    let mut uids = Vec::new();
    for n in ["xr-other", "xr-mine"] {
        let cm: k8s_openapi::api::core::v1::ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": n}})).expect("cm");
        let c = cms
            .create(&PostParams::default(), &cm)
            .await
            .expect("create cm");
        uids.push((n, c.metadata.uid.expect("uid")));
    }
    let owner = |i: usize| {
        let (n, uid) = &uids[i];
        json!({"metadata": {"labels": {"team": "x"}, "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": uid, "controller": true}]}})
    };
    e.create(N, "a", json!({}), &[(meta::EXTERNAL_NAME, "ext-a")])
        .await;
    e.patch(N, "a", owner(0)).await;
    e.create(N, "b", json!({}), &[(meta::EXTERNAL_NAME, "ext-b")])
        .await;
    e.patch(N, "b", owner(1)).await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameSelector": {"matchLabels": {"team": "x"}, "matchControllerRef": true}}}),
        &[],
    )
    .await;
    e.patch(N, "w1", owner(1)).await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "ext-b"
    );
}

#[tokio::test]
async fn conformance_079_cross_namespace_ref() {
    let e = Env::new().await;
    e.ensure_ns("other").await;
    e.create_in(
        &e.widget,
        N,
        "other",
        "t1",
        json!({}),
        &[(meta::EXTERNAL_NAME, "in-other")],
    )
    .await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "in-default")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "t1", "namespace": "other"}}}),
        &[],
    )
    .await;
    e.create(
        N,
        "w2",
        json!({"forProvider": {"parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w2").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "in-other"
    );
    assert_eq!(
        e.must(N, "w2").await.data["spec"]["forProvider"]["parentName"],
        "in-default"
    );
}

#[tokio::test]
async fn conformance_080_all_or_nothing() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "ext-t1")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "t1"}, "ownerNameRef": {"name": "missing"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let fp = e.must(N, "w1").await.data["spec"]["forProvider"].clone();
    assert!(fp.get("parentName").is_none(), "{fp}");
    assert!(
        synced(&e.must(N, "w1").await)
            .2
            .contains("mg.Spec.ForProvider.OwnerName")
    );
}

// ---------------------------------------------------------------------------------------------
// H. Timing, triggers, annotations

#[tokio::test]
async fn conformance_093_backoff_resets_after_success() {
    // The limiter sequence is unit-tested in `ratelimit`; here the controller resets it after
    // an up-to-date reconcile.
    let q = provider_runtime::managed::controller::WorkQueue::new(
        "t",
        Arc::new(ManagedMetrics::unregistered()),
    );
    let k = provider_runtime::managed::controller::ObjectKey {
        namespace: NS.into(),
        name: "w1".into(),
    };
    for _ in 0..3 {
        q.add_rate_limited(k.clone());
    }
    assert_eq!(q.failures(&k), 3);
    q.forget(&k);
    assert_eq!(q.failures(&k), 0);
    let b = provider_runtime::managed::ratelimit::ItemBackoff::default();
    let seq: Vec<u64> = (0..8).map(|_| b.next("x").as_secs()).collect();
    assert_eq!(seq, vec![1, 2, 4, 8, 16, 32, 60, 60]);
}

#[tokio::test]
async fn conformance_094_poll_interval_annotation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::POLL_INTERVAL, "30s")])
        .await;
    e.converge(N, "w1").await;
    match e.reconcile(N, "w1").await {
        Outcome::After(d) => assert!(d <= Duration::from_secs(60), "{d:?}"),
        o => panic!("{o:?}"),
    }
    for v in ["1d", "0s", "-5m"] {
        e.patch(
            N,
            "w1",
            json!({"metadata": {"annotations": {meta::POLL_INTERVAL: v}}}),
        )
        .await;
        assert!(is_after_poll(&e.reconcile(N, "w1").await), "{v}");
    }
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::POLL_INTERVAL: "100ms"}}}),
    )
    .await;
    let mut ctx = e.ctx();
    ctx.poll_jitter = Duration::ZERO;
    assert_eq!(
        e.rec_with(N, ctx).reconcile(Some(NS), "w1").await,
        Outcome::After(Duration::from_secs(1))
    );
}

#[tokio::test]
async fn conformance_095_reconcile_request() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::RECONCILE_REQUESTED_AT, "t1")])
        .await;
    e.reconcile(N, "w1").await; // the create path
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["status"]["lastHandledReconcileAt"], "t1");
    let handled = |v: Vec<Event>| {
        v.into_iter()
            .filter(|x| x.reason.as_deref() == Some("ReconcileRequestHandled"))
            .map(|x| x.count.unwrap_or(1))
            .sum::<i32>()
    };
    assert_eq!(handled(e.events("w1").await), 1);
    e.reconcile(N, "w1").await;
    assert_eq!(handled(e.events("w1").await), 1);
}

#[tokio::test]
async fn conformance_096_event_filter() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    let key = |o: &DynamicObject| FilterKey::of(&o.metadata);
    let base = e.must(N, "w1").await;
    // status-only edit
    e.set_status(N, "w1", json!({"atProvider": {"x": "1"}}))
        .await;
    assert_eq!(key(&e.must(N, "w1").await), key(&base));
    // pending / failed alone
    e.patch(N, "w1", json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: "p", meta::EXTERNAL_CREATE_FAILED: "f"}}}))
        .await;
    assert_eq!(key(&e.must(N, "w1").await), key(&base));
    // label, annotation and spec edits qualify, and the controller reacts to them
    let (stop, h) = start_controller(&e, N).await;
    wait_for(|| async {
        let o = e.get(N, "w1").await?;
        (ready(&o) == Some(("True".into(), "Available".into()))).then_some(())
    })
    .await;
    for (i, p) in [
        json!({"metadata": {"labels": {"l": "1"}}}),
        json!({"metadata": {"annotations": {"reconcile/kick": "1"}}}),
        json!({"spec": {"forProvider": {"description": "new"}}}),
    ]
    .into_iter()
    .enumerate()
    {
        let before = e.must(N, "w1").await;
        let n = e.calls().iter().filter(|c| *c == "observe").count();
        e.patch(N, "w1", p).await;
        assert_ne!(key(&e.must(N, "w1").await), key(&before), "edit {i}");
        wait_for(|| async {
            (e.calls().iter().filter(|c| *c == "observe").count() > n).then_some(())
        })
        .await;
    }
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_097_global_rate_limit() {
    let e = Env::new().await;
    for i in 0..30 {
        e.create(
            N,
            &format!("w{i}"),
            json!({}),
            &[(meta::EXTERNAL_NAME, &format!("w{i}"))],
        )
        .await;
        e.script().store.insert(format!("w{i}"), json!({}));
    }
    let mut reg = prometheus_client::registry::Registry::default();
    let metrics = Arc::new(ManagedMetrics::new(&mut reg));
    let mut ctx = e.ctx().with_max_reconcile_rate(2);
    ctx.metrics = metrics.clone();
    let stop = ctx.shutdown.clone();
    let reg_k = register_shared(
        e.widget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: false,
        }),
    );
    // The bucket was full (20 tokens) before this instant and cannot hold more.
    let t0 = std::time::Instant::now();
    let h = tokio::spawn(reg_k.start(ctx, N));
    // All 30 are eventually reconciled (observed at least once)...
    wait_for(|| async {
        let s = e.script();
        (s.calls.iter().filter(|c| *c == "observe").count() >= 30).then_some(())
    })
    .await;
    // ...and the bucket (rate 2/s, burst 20) let the 30th first reconcile start only after
    // 10 more tokens had accrued: at least 5 s after t0. This is a lower bound, so a slow
    // machine cannot break it. Limited requests were deferred (AFTER), not parked on a
    // worker: both workers stayed free to serve the burst.
    let times = e.script().observe_times.clone();
    let thirtieth = times[29];
    assert!(
        thirtieth.duration_since(t0) >= Duration::from_millis(4900),
        "30 reconciles in {:?}",
        thirtieth.duration_since(t0)
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &reg).expect("encode");
    assert!(
        text.contains("controller_runtime_max_concurrent_reconciles"),
        "{text}"
    );
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_098_conflict_on_finalizer_write_is_silent() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    let target = (
        e.admin.clone(),
        e.ar(&e.widget, N),
        Some(NS.to_string()),
        "w1".to_string(),
    );
    e.script().bump_on_observe = Some(target);
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(!has_finalizer(&o));
    assert!(cond(&o, "Synced").is_none());
    assert!(e.events("w1").await.is_empty());
}

#[tokio::test]
async fn conformance_099_no_concurrent_reconciles_of_one_mr() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.script().store.insert("w1".into(), json!({}));
    e.script().observe_delay = Some(Duration::from_millis(400));
    let (stop, h) = start_controller(&e, N).await;
    for i in 0..5 {
        e.patch(
            N,
            "w1",
            json!({"metadata": {"labels": {"n": i.to_string()}}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_for(|| async {
        (e.calls().iter().filter(|c| *c == "observe").count() >= 2).then_some(())
    })
    .await;
    assert_eq!(e.script().max_in_flight, 1);
    stop.cancel();
    h.await.expect("stopped");
}

// ---------------------------------------------------------------------------------------------
// I. Connection details

#[tokio::test]
async fn conformance_100_secret_created_early() {
    let e = Env::new().await;
    e.script().create_err = Some("400 Bad Request".into());
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "s"}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s = secrets.get("s").await.expect("secret exists");
    assert_eq!(
        s.type_.as_deref(),
        Some("connection.crossplane.io/v1alpha1")
    );
    let owner = &s.metadata.owner_references.expect("owner")[0];
    assert_eq!(owner.controller, Some(true));
    assert_eq!(owner.name, "w1");
    assert!(s.data.unwrap_or_default().is_empty());
}

#[tokio::test]
async fn conformance_101_additive_publishing() {
    let e = Env::new().await;
    e.script().store.insert("w1".into(), json!({}));
    e.script().observe_details = BTreeMap::from([
        ("a".to_string(), b"1".to_vec()),
        ("b".to_string(), b"2".to_vec()),
    ]);
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "s"}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    e.script().observe_details = BTreeMap::from([
        ("b".to_string(), b"3".to_vec()),
        ("c".to_string(), b"4".to_vec()),
    ]);
    e.reconcile(N, "w1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let d = secrets.get("s").await.expect("secret").data.expect("data");
    let get = |k: &str| d.get(k).map(|b| b.0.clone());
    assert_eq!(get("a"), Some(b"1".to_vec()));
    assert_eq!(get("b"), Some(b"3".to_vec()));
    assert_eq!(get("c"), Some(b"4".to_vec()));
}

#[tokio::test]
async fn conformance_102_foreign_secret_refused() {
    let e = Env::new().await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s: Secret =
        serde_json::from_value(json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {}}))
            .expect("secret");
    secrets
        .create(&PostParams::default(), &s)
        .await
        .expect("create secret");
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "s"}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let msg = "cannot create or update connection secret: refusing to modify uncontrolled secret of type \"Opaque\"";
    assert_eq!(synced(&e.must(N, "w1").await).2, msg);
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotPublishConnectionDetails")
        && x.message.as_deref() == Some(msg)));
}

#[tokio::test]
async fn conformance_103_legacy_secret_namespace() {
    let e = Env::new().await;
    e.ensure_ns("elsewhere").await;
    e.create(
        L,
        "l1",
        json!({"writeConnectionSecretToRef": {"name": "s", "namespace": "elsewhere"}}),
        &[],
    )
    .await;
    e.reconcile(L, "l1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), "elsewhere");
    assert!(secrets.get_opt("s").await.expect("get").is_some());
}

// Secret inputs (`...SecretRef`) are read by the reconciler and handed to the adapter.
#[tokio::test]
async fn secret_inputs_reach_the_adapter_not_the_status() {
    let e = Env::new().await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": "pw"}, "stringData": {"password": "hunter2"}}),
    )
    .expect("secret");
    secrets
        .create(&PostParams::default(), &s)
        .await
        .expect("create secret");
    e.create(
        N,
        "w1",
        json!({"forProvider": {"passwordSecretRef": {"name": "pw", "key": "password"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.script().connect_secrets,
        vec![Some("hunter2".to_string())]
    );
    let o = e.must(N, "w1").await;
    assert!(
        !serde_json::to_string(&o.data)
            .expect("json")
            .contains("hunter2")
    );
}

// §1.3: the reconciler runs with panic recovery; a panic counts as an error (BACKOFF).
#[tokio::test]
async fn panicking_adapter_backs_off_and_recovers() {
    let e = Env::new().await;
    e.script().store.insert("w1".into(), json!({}));
    e.script().panic_once = true;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    let (stop, h) = start_controller(&e, N).await;
    wait_for(|| async {
        let o = e.get(N, "w1").await?;
        (cond(&o, "Synced").is_some_and(|c| c.status == "True")).then_some(())
    })
    .await;
    assert!(e.calls().iter().filter(|c| *c == "observe").count() >= 2);
    stop.cancel();
    h.await.expect("controller survives the panic and stops");
}

// Typed parameters work like `serde_json::Value` ones: the same CRD, a struct with optional
// fields, initProvider merged into the create parameters.
#[derive(Clone, Default, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TypedParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<String>,
}

#[derive(Clone, Default, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct TypedObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
}

struct TypedWidget {
    info: KindInfo,
}

impl ManagedKind for TypedWidget {
    type Parameters = TypedParams;
    type Observation = TypedObservation;
    fn info(&self) -> &KindInfo {
        &self.info
    }
    fn parameters_schema(&self) -> Value {
        json_schema_for::<TypedParams>()
    }
    fn observation_schema(&self) -> Value {
        json_schema_for::<TypedObservation>()
    }
}

#[derive(Default)]
struct TypedStore {
    created: Vec<TypedParams>,
    exists: bool,
}

struct TypedClient(Arc<Mutex<TypedStore>>);

#[async_trait]
impl ExternalClient<TypedWidget> for TypedClient {
    async fn observe(
        &self,
        mr: &mut Managed<TypedWidget>,
    ) -> Result<ExternalObservation, ExternalError> {
        let exists = self.0.lock().expect("store").exists;
        if exists {
            mr.at_provider.id = Some(mr.external_name.clone());
        }
        Ok(ExternalObservation {
            resource_exists: exists,
            resource_up_to_date: true,
            ..Default::default()
        })
    }
    async fn create(
        &self,
        mr: &mut Managed<TypedWidget>,
    ) -> Result<ExternalCreation, ExternalError> {
        let mut s = self.0.lock().expect("store");
        s.created.push(mr.create_parameters.clone());
        s.exists = true;
        Ok(ExternalCreation::default())
    }
    async fn update(&self, _: &mut Managed<TypedWidget>) -> Result<ExternalUpdate, ExternalError> {
        Ok(ExternalUpdate::default())
    }
    async fn delete(&self, _: &mut Managed<TypedWidget>) -> Result<ExternalDelete, ExternalError> {
        Ok(ExternalDelete::default())
    }
}

struct TypedConnector(Arc<Mutex<TypedStore>>);

#[async_trait]
impl Connector<TypedWidget> for TypedConnector {
    async fn connect(
        &self,
        _: &ResolvedConfig,
        _: &Managed<TypedWidget>,
    ) -> Result<Box<dyn ExternalClient<TypedWidget>>, ExternalError> {
        Ok(Box::new(TypedClient(self.0.clone())))
    }
}

#[tokio::test]
async fn typed_parameters_round_trip() {
    let e = Env::new().await;
    let store = Arc::new(Mutex::new(TypedStore::default()));
    let r = Reconciler::new(
        Arc::new(TypedWidget {
            info: widget_kind().info,
        }),
        Arc::new(TypedConnector(store.clone())),
        e.ctx(),
        N,
    );
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "b"}, "initProvider": {"description": "a", "x": "a"}}),
        &[],
    )
    .await;
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Backoff);
    let created = store.lock().expect("store").created.clone();
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].description.as_deref(), Some("a"));
    assert_eq!(created[0].x.as_deref(), Some("b"));
    let o = r.reconcile(Some(NS), "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(at_provider(&e.must(N, "w1").await)["id"], "w1");
    // The schema helper gives an object schema with the fields.
    let schema = json_schema_for::<TypedParams>();
    assert!(
        schema["properties"].get("description").is_some(),
        "{schema}"
    );
}

// List references: Refs keep their order; a selector collects, deduplicates and sorts values.
#[tokio::test]
async fn multi_value_references() {
    let e = Env::new().await;
    for (n, ext) in [("m1", "zeta"), ("m2", "alpha"), ("m3", "alpha")] {
        e.create(N, n, json!({}), &[(meta::EXTERNAL_NAME, ext)])
            .await;
        e.patch(N, n, json!({"metadata": {"labels": {"group": "g"}}}))
            .await;
    }
    e.create(
        N,
        "w1",
        json!({"forProvider": {"memberNameRefs": [{"name": "m1"}, {"name": "m2"}]}}),
        &[],
    )
    .await;
    e.create(
        N,
        "w2",
        json!({"forProvider": {"memberNameSelector": {"matchLabels": {"group": "g"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w2").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["memberNames"],
        json!(["zeta", "alpha"])
    );
    let fp = e.must(N, "w2").await.data["spec"]["forProvider"].clone();
    assert_eq!(fp["memberNames"], json!(["alpha", "zeta"]));
    assert_eq!(fp["memberNameRefs"].as_array().map(Vec::len), Some(2));
}

// §8.2: floods are limited per object (burst 25), like client-go's spam filter.
#[tokio::test]
async fn event_flood_is_limited_per_object() {
    use provider_runtime::managed::events::{EventRecorder, EventType, InvolvedObject};
    let e = Env::new().await;
    let rec = EventRecorder::new(
        e.provider.clone(),
        "managed/widget.test.fake.m.crossplane.io",
    );
    let obj = InvolvedObject {
        api_version: "test.fake.m.crossplane.io/v1alpha1".into(),
        kind: "Widget".into(),
        name: "w1".into(),
        namespace: Some(NS.into()),
        uid: "u1".into(),
        resource_version: None,
    };
    for i in 0..30 {
        rec.record(
            &obj,
            BTreeMap::new(),
            EventType::Warning,
            "CannotObserveExternalResource",
            &format!("failure {i}"),
        )
        .await;
    }
    assert_eq!(e.events("w1").await.len(), 25);
    // Another object has its own budget.
    let other = InvolvedObject {
        name: "w2".into(),
        uid: "u2".into(),
        ..obj
    };
    rec.record(&other, BTreeMap::new(), EventType::Normal, "X", "y")
        .await;
    assert_eq!(e.events("w2").await.len(), 1);
}

// References inside spec.initProvider resolve too, and reach the create request.
#[tokio::test]
async fn init_provider_references_resolve() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "ext-t1")])
        .await;
    e.create(
        N,
        "w1",
        json!({"initProvider": {"parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["initProvider"]["parentName"], "ext-t1");
    assert_eq!(e.script().create_params[0]["parentName"], "ext-t1");
    // A failure names the InitProvider path.
    e.create(
        N,
        "w2",
        json!({"initProvider": {"parentNameRef": {"name": "missing"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w2").await;
    assert!(
        synced(&e.must(N, "w2").await)
            .2
            .starts_with("cannot resolve references: mg.Spec.InitProvider.ParentName: ")
    );
}
