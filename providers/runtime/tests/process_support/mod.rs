//! Shared environment of the ProviderConfig and process conformance tests (sections G and
//! J): a Kubernetes API test server with the config CRDs of a fake provider `fake` and the
//! CRDs of a fake managed Kind `test.fake.../Thing`, a client with exactly the RBAC
//! Crossplane grants a provider (docs/managed-reconciler.md §15.4), and a scripted external system
//! keyed by external name. The server, RBAC, CRD and waiting plumbing is the shared `testkit`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Event, Secret};
use kube::Api;
use kube::api::{DynamicObject, ListParams, PostParams};
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

#[expect(
    unused_imports,
    reason = "each test binary that includes this module leaves some of these unused"
)]
pub use testkit::{api_resource as ar, client_for, condition, grant, install_crd, provider_role};

/// [`testkit::wait_for`] with this suite's timeout ([`WAIT`]) and pace.
pub async fn wait_for<T, F, Fut>(what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    testkit::wait_for(what, WAIT, Duration::from_millis(100), f).await
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
        let mut crds = config_crd_docs();
        crds.extend(thing_crd_docs());
        let cluster = testkit::Cluster::start("provider-fake", &crds, &crds, extra).await;
        assert_eq!(cluster.user, USER);
        Env {
            server: cluster.server,
            admin: cluster.admin,
            provider: cluster.provider,
            api: ConfigApi::new(PROVIDER),
            s: Shared::default(),
        }
    }

    pub fn resolver(&self) -> Arc<provider_runtime::providerconfig::KubeConfigResolver> {
        Arc::new(self.resolver_plain())
    }

    /// The provider's resolver, before it is shared (to add a verifier or caches).
    pub fn resolver_plain(&self) -> provider_runtime::providerconfig::KubeConfigResolver {
        provider_runtime::providerconfig::KubeConfigResolver::new(
            self.provider.clone(),
            self.api.clone(),
        )
    }

    pub fn ctx(&self) -> ControllerContext {
        ControllerContext::new(self.provider.clone(), self.resolver(), "provider-fake")
    }

    pub fn reconciler(&self, scope: Scope) -> Reconciler<Thing> {
        self.reconciler_with(scope, self.ctx())
    }

    /// A reconciler whose configs come from `resolver` (one resolver for every reconcile, as
    /// in a provider process).
    pub fn reconciler_resolving(
        &self,
        scope: Scope,
        resolver: provider_runtime::providerconfig::KubeConfigResolver,
    ) -> Reconciler<Thing> {
        let ctx =
            ControllerContext::new(self.provider.clone(), Arc::new(resolver), "provider-fake");
        self.reconciler_with(scope, ctx)
    }

    fn reconciler_with(&self, scope: Scope, ctx: ControllerContext) -> Reconciler<Thing> {
        Reconciler::new(
            Arc::new(thing()),
            Arc::new(FakeConnector { s: self.s.clone() }),
            ctx,
            scope,
        )
    }

    /// The provider's requests so far under a test server counting key (`get secrets`,
    /// `update/status`, ...).
    pub fn provider_requests(&self, key: &str) -> u64 {
        testkit::request_count(&self.server, key, USER)
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
        testkit::ensure_namespace(&self.admin, ns).await;
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

    /// A ClusterProviderConfig `name` whose token is key `token` of Secret
    /// `crossplane-system/creds`.
    pub async fn cluster_config_on_creds(&self, name: &str) {
        self.config(
            ConfigKind::ClusterProviderConfig,
            None,
            name,
            json!({"namespace": "crossplane-system", "name": "creds", "key": "token"}),
        )
        .await;
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
        self.start_config_controllers_with(None)
    }

    /// The config controllers, publishing their caches into `stores` when given.
    pub fn start_config_controllers_with(
        &self,
        stores: Option<Arc<provider_runtime::providerconfig::ConfigStores>>,
    ) -> tokio_util::sync::CancellationToken {
        self.start_config_controllers_of(stores, None)
    }

    /// The config controllers of a replica that reconciles the configs of `shards`' owned
    /// shards only (`--shards`); every config when `None`.
    pub fn start_config_controllers_of(
        &self,
        stores: Option<Arc<provider_runtime::providerconfig::ConfigStores>>,
        shards: Option<Arc<provider_runtime::managed::shards::Shards>>,
    ) -> tokio_util::sync::CancellationToken {
        let token = tokio_util::sync::CancellationToken::new();
        for kind in ConfigKind::CONFIGS {
            let mut c = provider_runtime::providerconfig::controller::ConfigController::new(
                self.provider.clone(),
                self.api.clone(),
                kind,
                "provider-fake".into(),
            );
            if let Some(s) = &stores {
                c = c.with_config_stores(s.clone());
            }
            c = c.with_shards(shards.clone());
            let t = token.clone();
            tokio::spawn(async move { c.run(2, t.cancelled_owned()).await });
        }
        token
    }
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
