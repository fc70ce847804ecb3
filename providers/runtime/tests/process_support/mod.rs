//! Shared environment of the ProviderConfig and process conformance tests (sections G and
//! J): a Kubernetes API test server with the config CRDs of a fake provider `fake` and the
//! CRDs of a fake managed Kind `test.fake.../Thing`, a client with exactly the RBAC
//! Crossplane grants a provider (reference §15.4), and a scripted external system keyed by
//! external name.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Event, Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use provider_runtime::crd::{ManagedCrdInput, MrScope, config_crd, managed_crd};
use provider_runtime::managed::*;
use provider_runtime::providerconfig::{ConfigApi, ConfigKind};
use secrecy::ExposeSecret;
use serde_json::{Value, json};

pub const PROVIDER: &str = "fake";
pub const USER: &str = "system:serviceaccount:crossplane-system:provider-fake";
pub const WAIT: Duration = Duration::from_secs(90);

/// The fake managed Kind.
pub struct Thing {
    pub info: KindInfo,
}

impl ManagedKind for Thing {
    type Parameters = Value;
    type Observation = Value;
    fn info(&self) -> &KindInfo {
        &self.info
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"x": {"type": "string"}}})
    }
    fn observation_schema(&self) -> Value {
        json!({"type": "object", "properties": {"x": {"type": "string"}}})
    }
}

pub fn thing() -> Thing {
    Thing {
        info: KindInfo::new(
            PROVIDER,
            "test",
            "Thing",
            "v1alpha1",
            IdentifierStrategy::Name,
        ),
    }
}

/// The scripted external system: objects by external name, and what Connect saw.
#[derive(Default)]
pub struct External {
    pub objects: BTreeMap<String, Value>,
    pub connects: Vec<ResolvedConfig>,
    pub updates: u32,
}

pub type Shared = Arc<Mutex<External>>;

pub fn lock(s: &Shared) -> std::sync::MutexGuard<'_, External> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct FakeConnector {
    pub s: Shared,
}

#[async_trait]
impl Connector<Thing> for FakeConnector {
    async fn connect(
        &self,
        config: &ResolvedConfig,
        _mr: &Managed<Thing>,
    ) -> Result<Box<dyn ExternalClient<Thing>>, ExternalError> {
        lock(&self.s).connects.push(config.clone());
        Ok(Box::new(FakeClient { s: self.s.clone() }))
    }
}

pub struct FakeClient {
    s: Shared,
}

#[async_trait]
impl ExternalClient<Thing> for FakeClient {
    async fn observe(&self, mr: &mut Managed<Thing>) -> Result<ExternalObservation, ExternalError> {
        let s = lock(&self.s);
        match s.objects.get(&mr.external_name) {
            None => Ok(ExternalObservation::default()),
            Some(v) => {
                mr.at_provider = v.clone();
                // As Go adapters do (`SetConditions(Available())`). The reconciler marks it too,
                // but re-applies the view's conditions after Update, which would otherwise
                // bring back a stale `Ready=False Creating` on MRs that update at every poll.
                mr.set_condition(provider_runtime::managed::Condition::available());
                Ok(ExternalObservation {
                    resource_exists: true,
                    resource_up_to_date: mr.observe_only || *v == mr.for_provider,
                    ..ExternalObservation::default()
                })
            }
        }
    }
    async fn create(&self, mr: &mut Managed<Thing>) -> Result<ExternalCreation, ExternalError> {
        lock(&self.s)
            .objects
            .insert(mr.external_name.clone(), mr.create_parameters.clone());
        Ok(ExternalCreation::default())
    }
    async fn update(&self, mr: &mut Managed<Thing>) -> Result<ExternalUpdate, ExternalError> {
        let mut s = lock(&self.s);
        s.updates += 1;
        s.objects
            .insert(mr.external_name.clone(), mr.for_provider.clone());
        Ok(ExternalUpdate::default())
    }
    async fn delete(&self, mr: &mut Managed<Thing>) -> Result<ExternalDelete, ExternalError> {
        lock(&self.s).objects.remove(&mr.external_name);
        Ok(ExternalDelete::default())
    }
}

pub async fn client_for(server: &kube_testserver::TestServer, token: &str) -> kube::Client {
    let kc = Kubeconfig::from_yaml(&server.kubeconfig(token)).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(cfg).expect("client")
}

pub async fn wait_for<T, F, Fut>(what: &str, mut f: F) -> T
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
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: if group.is_empty() {
            version.into()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Creates a CRD document and waits until it is Established.
pub async fn install_crd(admin: &kube::Client, doc: &Value) {
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(doc.clone()).expect("CRD document");
    let name = crd.metadata.name.clone().expect("CRD name");
    api.create(&PostParams::default(), &crd)
        .await
        .expect("create CRD");
    wait_for(&format!("CRD {name} established"), || {
        let api = api.clone();
        let name = name.clone();
        async move {
            let c = api.get(&name).await.ok()?;
            c.status?
                .conditions?
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
                .then_some(())
        }
    })
    .await;
}

/// The ClusterRole Crossplane's RBAC manager gives a provider (reference §15.4) for these
/// CRDs: `get list watch update patch create` on each resource and its status, `update` on
/// `*/finalizers`, `*` on core secrets/configmaps/events and leases, `get list watch` on CRDs.
pub fn provider_role(name: &str, crds: &[Value], extra: &[Value]) -> Value {
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in crds {
        let g = c["spec"]["group"].as_str().unwrap_or_default().to_string();
        let p = c["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        by_group
            .entry(g)
            .or_default()
            .extend([p.clone(), format!("{p}/status")]);
    }
    let system = json!(["get", "list", "watch", "update", "patch", "create"]);
    let mut rules: Vec<Value> = by_group
        .iter()
        .map(|(g, r)| json!({"apiGroups": [g], "resources": r, "verbs": system}))
        .collect();
    let groups: Vec<&String> = by_group.keys().collect();
    rules.push(json!({"apiGroups": groups, "resources": ["*/finalizers"], "verbs": ["update"]}));
    rules.push(json!({"apiGroups": [""], "resources": ["secrets", "configmaps", "events"], "verbs": ["*"]}));
    rules.push(
        json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}),
    );
    rules.push(json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "watch"]}));
    rules.extend(extra.iter().cloned());
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name}, "rules": rules})
}

/// Creates the role and binds it to `user`.
pub async fn grant(admin: &kube::Client, role: Value, user: &str) {
    let name = role["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let roles: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ar(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
        ),
    );
    let role: DynamicObject = serde_json::from_value(role).expect("role");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let bindings: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ar(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
        ),
    );
    let b: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "User", "name": user}]
    }))
    .expect("binding");
    bindings
        .create(&PostParams::default(), &b)
        .await
        .expect("create binding");
}

pub fn config_crd_docs() -> Vec<Value> {
    let api = ConfigApi::new(PROVIDER);
    ConfigKind::ALL
        .iter()
        .map(|k| config_crd(&api, *k).document)
        .collect()
}

pub fn thing_crd_docs() -> Vec<Value> {
    let reg = register(
        thing(),
        FakeConnector {
            s: Shared::default(),
        },
    );
    let input = ManagedCrdInput::from_registration(reg.as_ref());
    [MrScope::Modern, MrScope::Legacy]
        .iter()
        .map(|s| managed_crd(&input, *s).document)
        .collect()
}

/// The test environment.
pub struct Env {
    pub server: kube_testserver::TestServer,
    pub admin: kube::Client,
    pub provider: kube::Client,
    pub api: ConfigApi,
    pub s: Shared,
}

impl Env {
    /// All CRDs installed, provider RBAC granted (plus `extra` rules).
    pub async fn new(extra: &[Value]) -> Env {
        let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
            .await
            .expect("start test server");
        let admin = client_for(&server, &server.admin_token()).await;
        let mut crds = config_crd_docs();
        crds.extend(thing_crd_docs());
        for c in &crds {
            install_crd(&admin, c).await;
        }
        grant(
            &admin,
            provider_role("crossplane:provider:provider-fake:system", &crds, extra),
            USER,
        )
        .await;
        let token = server.issue_token(USER, &[]);
        let provider = client_for(&server, &token).await;
        Env {
            server,
            admin,
            provider,
            api: ConfigApi::new(PROVIDER),
            s: Shared::default(),
        }
    }

    pub fn resolver(&self) -> Arc<provider_runtime::providerconfig::KubeConfigResolver> {
        Arc::new(provider_runtime::providerconfig::KubeConfigResolver::new(
            self.provider.clone(),
            self.api.clone(),
        ))
    }

    pub fn ctx(&self) -> ControllerContext {
        ControllerContext::new(self.provider.clone(), self.resolver(), "provider-fake")
    }

    pub fn reconciler(&self, scope: Scope) -> Reconciler<Thing> {
        Reconciler::new(
            Arc::new(thing()),
            Arc::new(FakeConnector { s: self.s.clone() }),
            self.ctx(),
            scope,
        )
    }

    pub async fn reconcile(&self, ns: Option<&str>, name: &str) -> Outcome {
        let scope = if ns.is_some() {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        self.reconciler(scope).reconcile(ns, name).await
    }

    pub async fn ensure_ns(&self, ns: &str) {
        let api: Api<Namespace> = Api::all(self.admin.clone());
        if api.get_opt(ns).await.expect("get ns").is_none() {
            let n: Namespace =
                serde_json::from_value(json!({"metadata": {"name": ns}})).expect("ns");
            api.create(&PostParams::default(), &n)
                .await
                .expect("create ns");
        }
    }

    pub async fn secret(&self, ns: &str, name: &str, data: &[(&str, &str)]) {
        self.ensure_ns(ns).await;
        let string_data: BTreeMap<String, String> = data
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let s: Secret = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns}, "stringData": string_data
        }))
        .expect("secret");
        Api::<Secret>::namespaced(self.admin.clone(), ns)
            .create(&PostParams::default(), &s)
            .await
            .expect("create secret");
    }

    pub fn config_api(&self, kind: ConfigKind, ns: Option<&str>) -> Api<DynamicObject> {
        let ar = self.api.api_resource(kind);
        match ns {
            Some(ns) => Api::namespaced_with(self.admin.clone(), ns, &ar),
            None => Api::all_with(self.admin.clone(), &ar),
        }
    }

    /// A config with `url` and a Secret reference.
    pub async fn config(&self, kind: ConfigKind, ns: Option<&str>, name: &str, secret: Value) {
        if let Some(ns) = ns {
            self.ensure_ns(ns).await;
        }
        let ar = self.api.api_resource(kind);
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind, "metadata": meta,
            "spec": {"url": "https://jfrog.example", "credentials": {"source": "Secret", "secretRef": secret}}
        }))
        .expect("config");
        self.config_api(kind, ns)
            .create(&PostParams::default(), &obj)
            .await
            .expect("create config");
    }

    pub fn thing_api(&self, ns: Option<&str>) -> Api<DynamicObject> {
        let info = thing().info;
        match ns {
            Some(ns) => Api::namespaced_with(
                self.admin.clone(),
                ns,
                &info.api_resource(Scope::Namespaced),
            ),
            None => Api::all_with(self.admin.clone(), &info.api_resource(Scope::Cluster)),
        }
    }

    /// Creates a Thing with this spec (forProvider defaulted to `{}`).
    pub async fn thing(
        &self,
        ns: Option<&str>,
        name: &str,
        mut spec: Value,
    ) -> Result<DynamicObject, kube::Error> {
        if let Some(ns) = ns {
            self.ensure_ns(ns).await;
        }
        let scope = if ns.is_some() {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        let ar = thing().info.api_resource(scope);
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        if spec.get("forProvider").is_none() {
            spec["forProvider"] = json!({});
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind, "metadata": meta, "spec": spec
        }))
        .expect("object");
        self.thing_api(ns)
            .create(&PostParams::default(), &obj)
            .await
    }

    pub async fn get_thing(&self, ns: Option<&str>, name: &str) -> Option<DynamicObject> {
        self.thing_api(ns).get_opt(name).await.expect("get thing")
    }

    pub async fn events(&self, ns: &str, name: &str) -> Vec<Event> {
        Api::<Event>::namespaced(self.admin.clone(), ns)
            .list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .collect()
    }

    pub fn usage_api(&self, ns: Option<&str>) -> Api<DynamicObject> {
        match ns {
            Some(ns) => self.config_api(ConfigKind::ProviderConfigUsage, Some(ns)),
            None => Api::all_with(
                self.admin.clone(),
                &self.api.api_resource(ConfigKind::ProviderConfigUsage),
            ),
        }
    }

    /// Runs the three config controllers with the provider's identity.
    pub fn start_config_controllers(&self) -> tokio_util::sync::CancellationToken {
        let token = tokio_util::sync::CancellationToken::new();
        for kind in ConfigKind::CONFIGS {
            let c = provider_runtime::providerconfig::controller::ConfigController::new(
                self.provider.clone(),
                self.api.clone(),
                kind,
                "provider-fake".into(),
            );
            let t = token.clone();
            tokio::spawn(async move { c.run(2, t.cancelled_owned()).await });
        }
        token
    }
}

/// `(status, reason, message)` of a condition.
pub fn condition(o: &DynamicObject, t: &str) -> Option<(String, String, String)> {
    let list = o.data.get("status")?.get("conditions")?.as_array()?;
    let c = list.iter().find(|c| c["type"] == t)?;
    Some((
        c["status"].as_str()?.to_string(),
        c["reason"].as_str()?.to_string(),
        c["message"].as_str().unwrap_or_default().to_string(),
    ))
}

pub fn token_of(c: &ResolvedConfig) -> String {
    match &c.credentials {
        Credentials::Token(t) => t.expose_secret().to_string(),
        other => format!("{other:?}"),
    }
}

pub fn users(o: &DynamicObject) -> i64 {
    o.data
        .get("status")
        .and_then(|s| s.get("users"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}
