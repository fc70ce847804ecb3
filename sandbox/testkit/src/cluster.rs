//! The Kubernetes API test server from a test's side: start it, build clients for its tokens,
//! install CRDs (waiting until they are Established), and read conditions.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_testserver::TestServer;
use serde_json::Value;

use crate::rbac;
use crate::wait::wait_for;

/// How long a CRD may take to become Established.
pub const CRD_WAIT: Duration = Duration::from_secs(90);

/// `user`'s requests to `server` so far under one of its counting keys (`get secrets`,
/// `update/status`, ...; [`TestServer::request_counts`]).
pub fn request_count(server: &TestServer, key: &str, user: &str) -> u64 {
    server.request_counts()[key][user].as_u64().unwrap_or(0)
}

/// Starts a test server with the default configuration (loopback, a free port).
pub async fn start_kube_server() -> TestServer {
    TestServer::start(kube_testserver::Config::default())
        .await
        .expect("start the Kubernetes API test server")
}

/// A kube client for `server` that authenticates with `token`.
pub async fn client_for(server: &TestServer, token: &str) -> kube::Client {
    let kc = Kubeconfig::from_yaml(&server.kubeconfig(token)).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("kube config from the test server's kubeconfig");
    kube::Client::try_from(cfg).expect("kube client")
}

/// Creates a CRD from its document without waiting for it.
pub async fn create_crd(admin: &kube::Client, doc: &Value) -> String {
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(doc.clone()).expect("CRD document");
    let name = crd.metadata.name.clone().expect("CRD name");
    api.create(&PostParams::default(), &crd)
        .await
        .unwrap_or_else(|e| panic!("create CRD {name}: {e}"));
    name
}

/// Creates a CRD and waits until it is Established.
pub async fn install_crd(admin: &kube::Client, doc: &Value) {
    install_crds(admin, std::slice::from_ref(doc)).await;
}

/// Creates every CRD, then waits until all of them are Established.
pub async fn install_crds(admin: &kube::Client, docs: &[Value]) {
    let mut names = Vec::new();
    for doc in docs {
        names.push(create_crd(admin, doc).await);
    }
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    for name in names {
        wait_for(
            &format!("CRD {name} established"),
            CRD_WAIT,
            Duration::from_millis(50),
            || {
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
            },
        )
        .await;
    }
}

/// Creates the namespace unless it exists.
pub async fn ensure_namespace(admin: &kube::Client, ns: &str) {
    let api: Api<Namespace> = Api::all(admin.clone());
    if api.get_opt(ns).await.expect("get namespace").is_none() {
        let n: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).expect("ns");
        api.create(&PostParams::default(), &n)
            .await
            .unwrap_or_else(|e| panic!("create namespace {ns}: {e}"));
    }
}

/// An [`ApiResource`] (the core group is `""`).
pub fn api_resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
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

/// `(status, reason, message)` of the condition `type_` of an object, if it has one.
pub fn condition(o: &DynamicObject, type_: &str) -> Option<(String, String, String)> {
    let list = o.data.get("status")?.get("conditions")?.as_array()?;
    let c = list.iter().find(|c| c["type"] == type_)?;
    Some((
        c["status"].as_str()?.to_string(),
        c["reason"].as_str()?.to_string(),
        c["message"].as_str().unwrap_or_default().to_string(),
    ))
}

/// Every condition of an object: type → (status, reason, message); missing fields are empty.
pub fn conditions(o: &DynamicObject) -> BTreeMap<String, (String, String, String)> {
    let mut out = BTreeMap::new();
    if let Some(list) = o.data["status"]["conditions"].as_array() {
        for c in list {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            out.insert(s("type"), (s("status"), s("reason"), s("message")));
        }
    }
    out
}

/// A test server with an admin client and a client with a provider's identity and exactly
/// the RBAC Crossplane grants that provider for the given CRDs.
pub struct Cluster {
    /// The Kubernetes API test server, running while the cluster lives.
    pub server: TestServer,
    /// The all-powerful client (`system:masters`).
    pub admin: kube::Client,
    /// The provider's client (`system:serviceaccount:crossplane-system:<provider>`).
    pub provider: kube::Client,
    /// The provider's user name.
    pub user: String,
}

impl Cluster {
    /// Starts a server, installs `crds` (waiting until Established) and grants the provider
    /// service account `provider` (e.g. `provider-fake`) the ClusterRole
    /// `crossplane:provider:<provider>:system` of [`rbac::provider_role`] over `rbac_crds`
    /// (usually the same CRDs, or a superset when a test installs some later), plus `extra`
    /// rules.
    pub async fn start(
        provider: &str,
        crds: &[Value],
        rbac_crds: &[Value],
        extra: &[Value],
    ) -> Cluster {
        let server = start_kube_server().await;
        let admin = client_for(&server, &server.admin_token()).await;
        install_crds(&admin, crds).await;
        let user = rbac::provider_user(provider);
        rbac::grant(
            &admin,
            rbac::provider_role(
                &format!("crossplane:provider:{provider}:system"),
                rbac_crds,
                extra,
            ),
            &user,
        )
        .await;
        let provider = client_for(&server, &server.issue_token(&user, &[])).await;
        Cluster {
            server,
            admin,
            provider,
            user,
        }
    }

    /// A fresh token for the provider's user (e.g. for a kubeconfig handed to a process).
    pub fn provider_token(&self) -> String {
        self.server.issue_token(&self.user, &[])
    }

    /// A kubeconfig (YAML) with the provider's identity.
    pub fn provider_kubeconfig(&self) -> String {
        self.server.kubeconfig(&self.provider_token())
    }
}
