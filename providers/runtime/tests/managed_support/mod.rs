//! Shared environment of the managed-reconciler tests outside `conformance_managed.rs`: a
//! Kubernetes API test server with the CRDs of two fake Kinds, `Part` (name-as-identifier,
//! with a key secret input `passwordSecretRef` and whole-Secret inputs `headersSecretRef` and
//! `handler.N.secretsSecretRef`) and `Token` (server-assigned), an admin client, and a
//! call-recording fake external system.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Event, Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{DynamicObject, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use provider_runtime::crd::{ManagedCrdInput, MrScope, managed_crd};
use provider_runtime::managed::conditions::Condition;
use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::{Value, json};

pub const NS: &str = "default";
pub const WAIT: Duration = Duration::from_secs(60);

pub struct FakeKind {
    pub info: KindInfo,
}

impl ManagedKind for FakeKind {
    type Parameters = Value;
    type Observation = Value;
    fn info(&self) -> &KindInfo {
        &self.info
    }
    fn parameters_schema(&self) -> Value {
        let secret_key_ref = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "namespace": {"type": "string"}, "key": {"type": "string"}}});
        let secret_ref = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "namespace": {"type": "string"}}});
        json!({"type": "object", "properties": {
            "x": {"type": "string"},
            "passwordSecretRef": secret_key_ref,
            "headersSecretRef": secret_ref,
            "handler": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "secretsSecretRef": secret_ref}}}}})
    }
    fn observation_schema(&self) -> Value {
        json!({"type": "object", "properties": {"id": {"type": "string"}}})
    }
}

pub fn kind(name: &'static str, identifier: IdentifierStrategy) -> FakeKind {
    let mut info = KindInfo::new("fake", "test", name, "v1alpha1", identifier);
    info.secret_refs = vec![SecretRefField::optional("passwordSecretRef")];
    info.whole_secret_refs = vec![
        SecretRefField::optional("headersSecretRef"),
        SecretRefField::optional("handler.0.secretsSecretRef"),
        SecretRefField::optional("handler.1.secretsSecretRef"),
    ];
    FakeKind { info }
}

/// The external system: objects by identifier, and the calls made.
#[derive(Default)]
pub struct External {
    pub objects: BTreeMap<String, Value>,
    pub calls: Vec<String>,
    pub seq: u32,
    /// The secret inputs each Connect saw, exposed (a test fake: real adapters never log
    /// or keep them).
    pub connect_secrets: Vec<BTreeMap<String, String>>,
}

pub type Shared = Arc<Mutex<External>>;

pub fn lock(s: &Shared) -> std::sync::MutexGuard<'_, External> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct FakeClient {
    s: Shared,
    server_assigned: bool,
}

#[async_trait]
impl ExternalClient<FakeKind> for FakeClient {
    async fn observe(
        &self,
        mr: &mut Managed<FakeKind>,
    ) -> Result<ExternalObservation, ExternalError> {
        let mut s = lock(&self.s);
        s.calls.push("observe".into());
        if mr.external_name.is_empty() || !s.objects.contains_key(&mr.external_name) {
            return Ok(ExternalObservation::default());
        }
        mr.at_provider = json!({"id": mr.external_name});
        Ok(ExternalObservation {
            resource_exists: true,
            resource_up_to_date: true,
            ..ExternalObservation::default()
        })
    }

    async fn create(&self, mr: &mut Managed<FakeKind>) -> Result<ExternalCreation, ExternalError> {
        let mut s = lock(&self.s);
        s.calls.push("create".into());
        let id = if self.server_assigned {
            s.seq += 1;
            format!("srv-{}", s.seq)
        } else {
            mr.external_name.clone()
        };
        if s.objects.contains_key(&id) {
            // What JFrog answers to a second create of the same key.
            return Err(ExternalError::msg(format!("\"{id}\" already exists")));
        }
        s.objects.insert(id.clone(), mr.create_parameters.clone());
        Ok(ExternalCreation {
            external_name: self.server_assigned.then_some(id),
            ..ExternalCreation::default()
        })
    }

    async fn update(&self, _mr: &mut Managed<FakeKind>) -> Result<ExternalUpdate, ExternalError> {
        lock(&self.s).calls.push("update".into());
        Ok(ExternalUpdate::default())
    }

    async fn delete(&self, mr: &mut Managed<FakeKind>) -> Result<ExternalDelete, ExternalError> {
        let mut s = lock(&self.s);
        s.calls.push("delete".into());
        s.objects.remove(&mr.external_name);
        Ok(ExternalDelete::default())
    }
}

pub struct FakeConnector {
    s: Shared,
    server_assigned: bool,
}

#[async_trait]
impl Connector<FakeKind> for FakeConnector {
    async fn connect(
        &self,
        _config: &ResolvedConfig,
        mr: &Managed<FakeKind>,
    ) -> Result<Box<dyn ExternalClient<FakeKind>>, ExternalError> {
        let seen = mr
            .secrets
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    secrecy::ExposeSecret::expose_secret(v).to_string(),
                )
            })
            .collect();
        let mut s = lock(&self.s);
        s.calls.push("connect".into());
        s.connect_secrets.push(seen);
        drop(s);
        Ok(Box::new(FakeClient {
            s: self.s.clone(),
            server_assigned: self.server_assigned,
        }))
    }
}

pub struct FakeResolver;

#[async_trait]
impl ProviderConfigResolver for FakeResolver {
    async fn track_usage(&self, _mr: &ManagedRef) -> Result<(), ConfigError> {
        Ok(())
    }
    async fn resolve(&self, mr: &ManagedRef) -> Result<ResolvedConfig, ConfigError> {
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

pub struct Env {
    _server: kube_testserver::TestServer,
    pub client: kube::Client,
    pub s: Shared,
    pub part: Arc<FakeKind>,
    pub token: Arc<FakeKind>,
}

pub async fn wait_for<T, F, Fut>(mut f: F) -> T
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

impl Env {
    pub async fn new() -> Env {
        let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
            .await
            .expect("start test server");
        let kc =
            Kubeconfig::from_yaml(&server.kubeconfig(&server.admin_token())).expect("kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .expect("config");
        let client = kube::Client::try_from(cfg).expect("client");
        let part = Arc::new(kind("Part", IdentifierStrategy::Name));
        let token = Arc::new(kind("Token", IdentifierStrategy::ServerAssigned));
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let mut names = Vec::new();
        for k in [&part, &token] {
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
                crds.create(&PostParams::default(), &doc)
                    .await
                    .expect("create CRD");
                names.push(crd.name.clone());
            }
        }
        for n in names {
            wait_for(|| {
                let crds = crds.clone();
                let n = n.clone();
                async move {
                    let c = crds.get(&n).await.ok()?;
                    c.status?
                        .conditions?
                        .iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                        .then_some(())
                }
            })
            .await;
        }
        Env {
            _server: server,
            client,
            s: Arc::new(Mutex::new(External::default())),
            part,
            token,
        }
    }

    pub fn api(&self, k: &FakeKind, scope: Scope) -> Api<DynamicObject> {
        let ar = k.info.api_resource(scope);
        match scope {
            Scope::Namespaced => Api::namespaced_with(self.client.clone(), NS, &ar),
            Scope::Cluster => Api::all_with(self.client.clone(), &ar),
        }
    }

    pub fn reconciler(&self, k: &Arc<FakeKind>, scope: Scope) -> Reconciler<FakeKind> {
        let ctx = ControllerContext::new(self.client.clone(), Arc::new(FakeResolver), "fake");
        Reconciler::new(
            k.clone(),
            Arc::new(FakeConnector {
                s: self.s.clone(),
                server_assigned: !k.info.identifier.is_deterministic(),
            }),
            ctx,
            scope,
        )
    }

    pub async fn reconcile(&self, k: &Arc<FakeKind>, scope: Scope, name: &str) -> Outcome {
        let ns = scope.is_namespaced().then_some(NS);
        self.reconciler(k, scope).reconcile(ns, name).await
    }

    /// An MR whose last create was interrupted: create-pending set `ago` seconds back, no
    /// succeeded or failed stamp.
    pub async fn interrupted(&self, k: &FakeKind, scope: Scope, name: &str, ext: Option<&str>) {
        let ar = k.info.api_resource(scope);
        let mut ann = json!({meta::EXTERNAL_CREATE_PENDING: stamp_ago(5)});
        if let Some(e) = ext {
            ann[meta::EXTERNAL_NAME] = json!(e);
        }
        let mut metadata = json!({"name": name, "annotations": ann});
        if scope.is_namespaced() {
            metadata["namespace"] = json!(NS);
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": metadata, "spec": {"forProvider": {"x": "1"}}}))
        .expect("object");
        self.api(k, scope)
            .create(&PostParams::default(), &obj)
            .await
            .expect("create MR");
    }

    /// An MR with the given `forProvider`.
    pub async fn create_mr(&self, k: &FakeKind, scope: Scope, name: &str, for_provider: Value) {
        let ar = k.info.api_resource(scope);
        let mut metadata = json!({"name": name});
        if scope.is_namespaced() {
            metadata["namespace"] = json!(NS);
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": metadata, "spec": {"forProvider": for_provider}}))
        .expect("object");
        self.api(k, scope)
            .create(&PostParams::default(), &obj)
            .await
            .expect("create MR");
    }

    /// A Secret with the given string data, creating its namespace when needed.
    pub async fn secret(&self, ns: &str, name: &str, data: &[(&str, &str)]) {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        if namespaces.get_opt(ns).await.expect("get ns").is_none() {
            let n: Namespace =
                serde_json::from_value(json!({"metadata": {"name": ns}})).expect("ns");
            namespaces
                .create(&PostParams::default(), &n)
                .await
                .expect("create ns");
        }
        let data: BTreeMap<String, k8s_openapi::ByteString> = data
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    k8s_openapi::ByteString(v.as_bytes().to_vec()),
                )
            })
            .collect();
        let secret = Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        };
        Api::<Secret>::namespaced(self.client.clone(), ns)
            .create(&PostParams::default(), &secret)
            .await
            .expect("create secret");
    }

    /// The messages of the events of an object in a namespace, by reason.
    pub async fn events_in(&self, ns: &str, name: &str) -> Vec<(String, String)> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), ns);
        api.list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
            .collect()
    }

    pub async fn get(&self, k: &FakeKind, scope: Scope, name: &str) -> DynamicObject {
        self.api(k, scope).get(name).await.expect("get MR")
    }

    pub fn calls(&self) -> Vec<String> {
        lock(&self.s).calls.clone()
    }

    pub fn count(&self, call: &str) -> usize {
        self.calls().iter().filter(|c| *c == call).count()
    }

    pub async fn reasons(&self, name: &str) -> Vec<String> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), NS);
        api.list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .filter_map(|e| e.reason)
            .collect()
    }
}

pub fn stamp_ago(secs: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::seconds(secs))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub fn cond(o: &DynamicObject, t: &str) -> Option<Condition> {
    o.data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok())
        .and_then(|l| l.into_iter().find(|c| c.type_ == t))
}

pub fn ann(o: &DynamicObject, k: &str) -> Option<String> {
    o.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(k))
        .cloned()
}
