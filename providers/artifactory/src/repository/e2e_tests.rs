//! The repository adapter driven by the real managed reconciler, against the Kubernetes API
//! test server (CRDs generated from the declarations, provider RBAC) and the JFrog
//! simulator: examples converge to Ready/Synced, stay without writes, drift is reverted, a
//! rotated Secret is re-sent once, and no secret value reaches the MR; with observation by
//! list, steady-state polls read no repository by key and a deletion made in JFrog is seen
//! and repaired.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jfrog_sim::{SimConfig, Simulator};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use provider_runtime::managed::{
    ConfigError, ControllerContext, Credentials, ManagedKind, ManagedRef, Outcome,
    ProviderConfigResolver, Reconciler, ResolvedConfig, Scope,
};
use secrecy::SecretString;
use serde_json::json;

use super::examples::{example, example_key};
use super::tables::KINDS;
use provider_family::adapter::{
    ClientCache, FamilyConnector as RepositoryConnector, FamilyKind as RepositoryKind,
};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(120);
const USER: &str = "system:serviceaccount:crossplane-system:provider-artifactory";

struct SimResolver {
    url: String,
    token: String,
}

#[async_trait]
impl ProviderConfigResolver for SimResolver {
    async fn track_usage(&self, _mr: &ManagedRef) -> Result<(), ConfigError> {
        Ok(())
    }
    async fn resolve(&self, _mr: &ManagedRef) -> Result<ResolvedConfig, ConfigError> {
        Ok(ResolvedConfig {
            config_kind: "ClusterProviderConfig".into(),
            config_name: "default".into(),
            config_namespace: None,
            config_uid: Some("pc".into()),
            url: self.url.clone(),
            credentials: Credentials::Token(SecretString::from(self.token.clone())),
            ca_bundle: None,
        })
    }
}

async fn client_for(server: &kube_testserver::TestServer, token: &str) -> kube::Client {
    let kc = Kubeconfig::from_yaml(&server.kubeconfig(token)).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(cfg).expect("client")
}

fn rbac_api(admin: &kube::Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::all_with(
        admin.clone(),
        &ApiResource {
            group: "rbac.authorization.k8s.io".into(),
            version: "v1".into(),
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: kind.into(),
            plural: plural.into(),
        },
    )
}

/// What Crossplane's RBAC manager grants a provider for its own groups.
async fn grant(admin: &kube::Client, plurals: &[String]) {
    let groups = json!([
        "repository.artifactory.m.crossplane.io",
        "repository.artifactory.crossplane.io"
    ]);
    let status: Vec<String> = plurals.iter().map(|p| format!("{p}/status")).collect();
    let role: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "crossplane:provider:artifactory:system"},
        "rules": [
            {"apiGroups": groups, "resources": plurals, "verbs": ["get", "list", "watch", "update", "patch", "create"]},
            {"apiGroups": groups, "resources": status, "verbs": ["get", "list", "watch", "update", "patch", "create"]},
            {"apiGroups": groups, "resources": ["*/finalizers"], "verbs": ["update"]},
            {"apiGroups": [""], "resources": ["secrets", "configmaps", "events"], "verbs": ["*"]},
        ]
    }))
    .expect("role");
    rbac_api(admin, "ClusterRole", "clusterroles")
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let binding: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "crossplane:provider:artifactory:system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "crossplane:provider:artifactory:system"},
        "subjects": [{"kind": "User", "name": USER}]
    }))
    .expect("binding");
    rbac_api(admin, "ClusterRoleBinding", "clusterrolebindings")
        .create(&PostParams::default(), &binding)
        .await
        .expect("create binding");
}

fn condition(o: &DynamicObject, t: &str) -> Option<(String, String)> {
    o.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

struct Mr {
    scope: Scope,
    name: String,
    rec: Reconciler<RepositoryKind>,
    api: Api<DynamicObject>,
}

impl Mr {
    async fn reconcile(&self) -> Outcome {
        let ns = (self.scope == Scope::Namespaced).then_some(NS);
        self.rec.reconcile(ns, &self.name).await
    }
    async fn get(&self) -> DynamicObject {
        self.api.get(&self.name).await.expect("get MR")
    }
    async fn ready_and_synced(&self) -> bool {
        let o = self.get().await;
        condition(&o, "Ready").is_some_and(|c| c.0 == "True")
            && condition(&o, "Synced").is_some_and(|c| c.0 == "True")
    }
}

struct Env {
    sim: Simulator,
    _server: kube_testserver::TestServer,
    admin: kube::Client,
    mrs: Vec<Mr>,
}

/// Start both servers, install the CRDs of `names` (both scopes), grant the provider RBAC
/// and create the example MR of each (namespaced; legacy too for those in `legacy`), in
/// the given order; the remote maven example gets a password from a Secret.
async fn env(names: &[&str], legacy_kinds: &[&str]) -> Env {
    env_with(
        names,
        legacy_kinds,
        Arc::new(ClientCache::new(crate::PROVIDER)),
    )
    .await
}

/// [`env`] with the connectors sharing `cache` (e.g. with observation by list on).
async fn env_with(names: &[&str], legacy_kinds: &[&str], cache: Arc<ClientCache>) -> Env {
    let sim = Simulator::start(SimConfig::default())
        .await
        .expect("simulator");
    let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
        .await
        .expect("test server");
    let admin = client_for(&server, &server.admin_token()).await;

    let kinds: Vec<Arc<RepositoryKind>> = names
        .iter()
        .map(|n| {
            let d = KINDS.iter().find(|d| d.kind == *n).expect("declared");
            Arc::new(RepositoryKind::new(d).expect("composes"))
        })
        .collect();
    let regs: Vec<_> = kinds
        .iter()
        .map(|k| {
            provider_runtime::managed::register_shared(
                k.clone(),
                Arc::new(RepositoryConnector::new(k, cache.clone())),
            )
        })
        .collect();
    let crd_api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let mut plurals = Vec::new();
    for crd in provider_runtime::crd::provider_crds_for("artifactory", &regs)
        .into_iter()
        .filter(|c| c.name.contains(".repository.artifactory."))
    {
        let doc: CustomResourceDefinition =
            serde_json::from_value(crd.document.clone()).expect("CRD document");
        crd_api
            .create(&PostParams::default(), &doc)
            .await
            .unwrap_or_else(|e| panic!("install {}: {e}", crd.name));
        plurals.push(crd.name.split('.').next().unwrap_or_default().to_string());
    }
    plurals.sort();
    plurals.dedup();
    grant(&admin, &plurals).await;
    let provider = client_for(&server, &server.issue_token(USER, &[])).await;
    let ctx = ControllerContext::new(
        provider,
        Arc::new(SimResolver {
            url: sim.url(),
            token: sim.admin_token(),
        }),
        "provider-artifactory",
    );

    // The upstream password of the remote repository.
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), NS);
    let secret = |pw: &str| -> Secret {
        serde_json::from_value(json!({
            "metadata": {"name": "upstream-credentials", "namespace": NS},
            "stringData": {"password": pw}
        }))
        .expect("secret")
    };
    secrets
        .create(&PostParams::default(), &secret("first-pass"))
        .await
        .expect("create secret");

    // The MRs: every chosen Kind's example, namespaced and (for some) legacy.
    let mut mrs = Vec::new();
    let pairs = kinds.iter().zip(names.iter().copied()).flat_map(|(k, n)| {
        let legacy = legacy_kinds.contains(&n);
        [(k, n, false), (k, n, true)]
            .into_iter()
            .filter(move |(_, _, l)| !*l || legacy)
    });
    for (k, name, legacy) in pairs {
        let d = KINDS.iter().find(|d| d.kind == name).expect("declared");
        let scope = if legacy {
            Scope::Cluster
        } else {
            Scope::Namespaced
        };
        let mut obj = example(d, legacy);
        if name == "RemoteMavenRepository" {
            obj["spec"]["forProvider"]["username"] = json!("ci-bot");
            // Legacy MRs name the Secret's namespace; namespaced ones use their own.
            obj["spec"]["forProvider"]["passwordSecretRef"] = if legacy {
                json!({"name": "upstream-credentials", "key": "password", "namespace": NS})
            } else {
                json!({"name": "upstream-credentials", "key": "password"})
            };
        }
        let ar = k.info().api_resource(scope);
        let api: Api<DynamicObject> = match scope {
            Scope::Namespaced => Api::namespaced_with(admin.clone(), NS, &ar),
            Scope::Cluster => Api::all_with(admin.clone(), &ar),
        };
        let dynobj: DynamicObject = serde_json::from_value(obj).expect("object");
        // The CRD may take a moment to be served.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match api.create(&PostParams::default(), &dynobj).await {
                Ok(_) => break,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!(error = %e, "waiting for CRD");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("create {name}: {e}"),
            }
        }
        let connector = Arc::new(RepositoryConnector::new(k, cache.clone()));
        mrs.push(Mr {
            scope,
            name: example_key(name, legacy),
            rec: Reconciler::new(k.clone(), connector, ctx.clone(), scope),
            api,
        });
    }

    Env {
        sim,
        _server: server,
        admin,
        mrs,
    }
}

/// Reconcile every MR that is not Ready and Synced, in order, until all are.
async fn converge(mrs: &[Mr]) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut pending = Vec::new();
        for m in mrs {
            if !m.ready_and_synced().await {
                let o = m.reconcile().await;
                pending.push(format!("{}: {o:?}", m.name));
            }
        }
        if pending.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not converged: {pending:?}"
        );
    }
}

/// Reconcile every MR `rounds` times; none may write to JFrog.
async fn assert_no_writes(sim: &Simulator, mrs: &[Mr], rounds: usize) {
    sim.reset_counts();
    for _ in 0..rounds {
        for m in mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    let writes: u64 = ["PUT", "POST", "DELETE"]
        .iter()
        .map(|v| sim.request_count(v, "/artifactory/api/repositories/{key}"))
        .sum();
    assert_eq!(writes, 0, "{:?}", sim.request_counts());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciler_converges_examples_without_perpetual_updates() {
    let Env {
        sim,
        _server,
        admin,
        mrs,
    } = env(
        &[
            "LocalMavenRepository",
            "RemoteMavenRepository",
            "VirtualMavenRepository",
            "FederatedMavenRepository",
            "LocalGenericRepository",
        ],
        &["LocalGenericRepository", "RemoteMavenRepository"],
    )
    .await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), NS);
    converge(&mrs).await;
    assert_eq!(sim.repository_count(), mrs.len());
    assert_eq!(
        sim.repository_raw("legacy-remote-maven").expect("stored")["password"],
        "first-pass",
        "legacy secret reference with a namespace"
    );
    assert_no_writes(&sim, &mrs, 2).await;

    // Drift made directly in JFrog is reverted by one reconcile.
    let local = &mrs[0];
    let mut raw = sim.repository_raw(&local.name).expect("stored");
    raw["description"] = json!("edited in the UI");
    assert!(sim.put_repository_raw(&local.name, raw));
    local.reconcile().await;
    assert_eq!(
        sim.request_count("POST", "/artifactory/api/repositories/{key}"),
        1
    );
    assert_ne!(
        sim.repository(&local.name).expect("stored")["description"],
        "edited in the UI"
    );
    local.reconcile().await;
    assert_eq!(
        sim.request_count("POST", "/artifactory/api/repositories/{key}"),
        1
    );

    // A rotated Secret is sent once, then compared by hash.
    let remote = &mrs[1];
    assert_eq!(
        sim.repository_raw(&remote.name).expect("stored")["password"],
        "first-pass"
    );
    secrets
        .patch(
            "upstream-credentials",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": "second-pass"}})),
        )
        .await
        .expect("rotate secret");
    remote.reconcile().await;
    assert_eq!(
        sim.repository_raw(&remote.name).expect("stored")["password"],
        "second-pass"
    );
    assert_eq!(
        sim.request_count("POST", "/artifactory/api/repositories/{key}"),
        2
    );
    remote.reconcile().await;
    remote.reconcile().await;
    assert_eq!(
        sim.request_count("POST", "/artifactory/api/repositories/{key}"),
        2,
        "no perpetual update of the write-only password"
    );
    let o = remote.get().await;
    let text = serde_json::to_string(&o).expect("json");
    assert!(!text.contains("first-pass") && !text.contains("second-pass"));
    assert!(o.data["status"]["atProvider"]["appliedWriteOnlyHashes"]["password"].is_string());
    assert!(remote.ready_and_synced().await);
}

/// Every repository Kind's example (and the legacy examples) through the real reconciler:
/// all become Ready and Synced, then two more rounds of reconciles send no write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_converges_and_stays_without_writes() {
    use super::Class;
    use super::examples::LEGACY_KINDS;
    let mut order: Vec<&str> = KINDS.iter().map(|d| d.kind).collect();
    let rank = |k: &str| match KINDS.iter().find(|d| d.kind == k).map(super::class) {
        Some(Class::Local) => 0,
        Some(Class::Remote) => 1,
        Some(Class::Federated) => 2,
        _ => 3,
    };
    order.sort_by_key(|k| rank(k));
    // `_server` keeps the API server alive for the whole test.
    let Env {
        sim, mrs, _server, ..
    } = env(&order, LEGACY_KINDS).await;
    assert_eq!(mrs.len(), KINDS.len() + LEGACY_KINDS.len());
    converge(&mrs).await;
    assert_eq!(sim.repository_count(), mrs.len());
    assert_no_writes(&sim, &mrs, 2).await;
}

/// Observation by list through the real reconciler: after convergence a round of polls costs
/// at most one list call and no read by key; a repository deleted in JFrog is seen once the
/// TTL has passed and created again; the MRs end Ready and Synced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observation_by_list_sees_a_deletion_in_jfrog_and_recreates() {
    const BY_KEY: &str = "/artifactory/api/repositories/{key}";
    const LIST: &str = "/artifactory/api/repositories/configurations";
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(Duration::from_secs(3600)));
    let Env {
        sim, mrs, _server, ..
    } = env_with(
        &[
            "LocalGenericRepository",
            "LocalMavenRepository",
            "RemoteMavenRepository",
        ],
        &["LocalGenericRepository"],
        cache.clone(),
    )
    .await;
    converge(&mrs).await;
    assert_eq!(sim.repository_count(), mrs.len());
    // Steady state: polls are served by the snapshot (and the reads by key that followed our
    // own creates), with no write.
    assert_no_writes(&sim, &mrs, 2).await;
    assert_eq!(
        sim.request_count("GET", BY_KEY),
        0,
        "{:?}",
        sim.request_counts()
    );
    assert!(
        sim.request_count("GET", LIST) <= 1,
        "{:?}",
        sim.request_counts()
    );

    // Deleted in JFrog: within the TTL the snapshot still shows it...
    let victim = &mrs[0];
    assert!(sim.delete_repository_raw(&victim.name));
    sim.reset_counts();
    let o = victim.reconcile().await;
    assert!(matches!(o, Outcome::After(_)), "{o:?}");
    assert_eq!(sim.request_count("PUT", BY_KEY), 0);
    // ...once the TTL has passed, the next reconcile sees it gone and creates it again.
    cache.set_snapshot_ttl(Some(Duration::from_millis(1)));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while sim.repository(&victim.name).is_none() {
        assert!(tokio::time::Instant::now() < deadline, "not recreated");
        // Within the creation grace period of the first create the reconciler waits.
        victim.reconcile().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        sim.request_count("PUT", BY_KEY),
        1,
        "{:?}",
        sim.request_counts()
    );
    assert!(sim.request_count("GET", LIST) >= 1);
    cache.set_snapshot_ttl(Some(Duration::from_secs(3600)));
    converge(&mrs).await;
    assert_eq!(sim.repository_count(), mrs.len());
    assert_no_writes(&sim, &mrs, 1).await;
}
