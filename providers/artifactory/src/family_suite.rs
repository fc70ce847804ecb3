//! The generic family test suite: every declared Kind of a family, through the real managed
//! reconciler, against the Kubernetes API test server (CRDs generated from the
//! declarations, Crossplane's provider RBAC) and the JFrog simulator. For each family:
//! every example (both scopes where the family has legacy examples) converges to Ready and
//! Synced; two more rounds of reconciles send no write; a change made in JFrog is reverted
//! by one reconcile; deleting the MR deletes the object. It runs over every declared Kind of
//! every family (150 repository and 24 webhook Kinds, and the legacy examples); a new family
//! gets it by adding one call to [`every_family_passes_the_suite`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jfrog_sim::Simulator;
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use provider_family::{ClientCache, FamilyConnector, FamilyKind};
use provider_runtime::managed::{
    ConfigError, ControllerContext, Credentials, ManagedKind, ManagedRef, Outcome,
    ProviderConfigResolver, Reconciler, ResolvedConfig, Scope,
};
use secrecy::SecretString;
use serde_json::{Value, json};

pub(crate) const NS: &str = "default";
pub(crate) const WAIT: Duration = Duration::from_secs(120);
/// The ClusterRole Crossplane's RBAC manager creates for this provider.
const ROLE: &str = "crossplane:provider:artifactory:system";

pub(crate) struct SimResolver {
    pub(crate) url: String,
    pub(crate) token: String,
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

/// One MR and its reconciler.
pub(crate) struct Mr {
    pub(crate) scope: Scope,
    pub(crate) name: String,
    pub(crate) kind: Arc<FamilyKind>,
    pub(crate) rec: Reconciler<FamilyKind>,
    pub(crate) api: Api<DynamicObject>,
}

impl Mr {
    pub(crate) async fn reconcile(&self) -> Outcome {
        let ns = (self.scope == Scope::Namespaced).then_some(NS);
        self.rec.reconcile(ns, &self.name).await
    }
    pub(crate) async fn get(&self) -> DynamicObject {
        self.api.get(&self.name).await.expect("get MR")
    }
    pub(crate) async fn ready_and_synced(&self) -> bool {
        let o = self.get().await;
        testkit::condition(&o, "Ready").is_some_and(|c| c.0 == "True")
            && testkit::condition(&o, "Synced").is_some_and(|c| c.0 == "True")
    }
}

/// The servers, the admin client, the MRs.
pub(crate) struct Env {
    pub(crate) sim: Simulator,
    pub(crate) _server: kube_testserver::TestServer,
    pub(crate) admin: kube::Client,
    pub(crate) ctx: ControllerContext,
    pub(crate) cache: Arc<ClientCache>,
    pub(crate) mrs: Vec<Mr>,
}

/// Start both servers, install the CRDs of `kinds` (both scopes) and grant the provider
/// exactly the RBAC Crossplane grants it for them.
pub(crate) async fn start(kinds: &[Arc<FamilyKind>], cache: Arc<ClientCache>) -> Env {
    let sim = testkit::start_sim().await;
    let server = testkit::start_kube_server().await;
    let admin = testkit::client_for(&server, &server.admin_token()).await;
    let regs: Vec<_> = kinds
        .iter()
        .map(|k| {
            provider_runtime::managed::register_shared(
                k.clone(),
                Arc::new(FamilyConnector::new(k, cache.clone())),
            )
        })
        .collect();
    let crds: Vec<Value> = provider_runtime::crd::provider_crds_for("artifactory", &regs)
        .into_iter()
        .filter(|c| {
            kinds.iter().any(|k| {
                c.name
                    .contains(&format!(".{}.artifactory.", k.info().group))
            })
        })
        .map(|c| c.document)
        .collect();
    testkit::install_crds(&admin, &crds).await;
    let user = testkit::provider_user(crate::PROVIDER.name);
    testkit::grant(&admin, testkit::provider_role(ROLE, &crds, &[]), &user).await;
    let provider = testkit::client_for(&server, &server.issue_token(&user, &[])).await;
    let ctx = ControllerContext::new(
        provider,
        Arc::new(SimResolver {
            url: sim.url(),
            token: sim.admin_token(),
        }),
        "provider-artifactory",
    );
    Env {
        sim,
        _server: server,
        admin,
        ctx,
        cache,
        mrs: Vec::new(),
    }
}

impl Env {
    /// Create `manifest` (an MR of `kind`) and keep a reconciler for it; waits for the CRD to
    /// be served.
    pub(crate) async fn add(&mut self, kind: &Arc<FamilyKind>, manifest: Value) {
        let scope = if manifest["metadata"]["namespace"].is_string() {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        let name = manifest["metadata"]["name"]
            .as_str()
            .expect("manifest name")
            .to_string();
        let ar = kind.info().api_resource(scope);
        let api: Api<DynamicObject> = match scope {
            Scope::Namespaced => Api::namespaced_with(self.admin.clone(), NS, &ar),
            Scope::Cluster => Api::all_with(self.admin.clone(), &ar),
        };
        let obj: DynamicObject = serde_json::from_value(manifest).expect("object");
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match api.create(&PostParams::default(), &obj).await {
                Ok(_) => break,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!(error = %e, "waiting for CRD");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("create {name}: {e}"),
            }
        }
        let connector = Arc::new(FamilyConnector::new(kind, self.cache.clone()));
        self.mrs.push(Mr {
            scope,
            name,
            kind: kind.clone(),
            rec: Reconciler::new(kind.clone(), connector, self.ctx.clone(), scope),
            api,
        });
    }
}

/// Reconcile every MR that is not Ready and Synced, in order, until all are.
pub(crate) async fn converge(mrs: &[Mr]) {
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
            "not converged: {pending:?} {:?}",
            {
                let mut c = Vec::new();
                for m in mrs {
                    let o = m.get().await;
                    c.push(format!("{}: {:?}", m.name, o.data.get("status")));
                }
                c
            }
        );
    }
}

/// JFrog writes (every request but a GET) since the last reset of the counts.
pub(crate) fn writes(sim: &Simulator) -> u64 {
    sim.request_counts()
        .iter()
        .filter(|(k, _)| !k.starts_with("GET"))
        .map(|(_, n)| n)
        .sum()
}

/// Reconcile every MR `rounds` times; none may write to JFrog.
pub(crate) async fn assert_no_writes(sim: &Simulator, mrs: &[Mr], rounds: usize) {
    sim.reset_counts();
    for _ in 0..rounds {
        for m in mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    assert_eq!(writes(sim), 0, "{:?}", sim.request_counts());
}

/// The JFrog client the suite uses to act as a person editing JFrog.
fn jfrog(sim: &Simulator) -> jfrog_client::JfrogClient {
    jfrog_client::JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client")
}

/// The suite over one family: `kinds` are the family's Kinds (their CRDs are installed),
/// `examples` (Kind name, manifest) pairs; `every_kind` asks for an example of each Kind.
pub(crate) async fn family_suite(
    kinds: &[Arc<FamilyKind>],
    examples: Vec<(String, Value)>,
    every_kind: bool,
) {
    family_suite_with(kinds, examples, every_kind, |_| {}).await;
}

/// [`family_suite`] with objects the examples need seeded in JFrog first (`seed`).
pub(crate) async fn family_suite_with(
    kinds: &[Arc<FamilyKind>],
    examples: Vec<(String, Value)>,
    every_kind: bool,
    seed: impl FnOnce(&Simulator),
) {
    if every_kind {
        for k in kinds {
            assert!(
                examples.iter().any(|(n, _)| n == k.info().kind),
                "{} has no example in the suite",
                k.info().kind
            );
        }
    }
    let mut env = start(kinds, Arc::new(ClientCache::new(crate::PROVIDER))).await;
    seed(&env.sim);
    for (kind, manifest) in examples {
        if kind == "Secret" {
            // A Secret an example reads (created first, as the example file lists it).
            let secret: k8s_openapi::api::core::v1::Secret =
                serde_json::from_value(manifest).expect("Secret");
            Api::<k8s_openapi::api::core::v1::Secret>::namespaced(env.admin.clone(), NS)
                .create(&PostParams::default(), &secret)
                .await
                .expect("create Secret");
            continue;
        }
        let k = kinds
            .iter()
            .find(|k| k.info().kind == kind)
            .unwrap_or_else(|| panic!("{kind} is declared"));
        env.add(k, manifest).await;
    }
    converge(&env.mrs).await;
    assert_no_writes(&env.sim, &env.mrs, 2).await;

    // A change made in JFrog is reverted by one reconcile, then nothing more is written.
    let client = jfrog(&env.sim);
    for m in &env.mrs {
        let rest = m.kind.resolved().decl.rest;
        let Some((wire, edited)) = drift_member(m.kind.resolved()) else {
            continue;
        };
        let key =
            m.get().await.metadata.annotations.unwrap_or_default()["crossplane.io/external-name"]
                .clone();
        let mut body = rest.read(&client, &key).await.expect("read");
        let edited = set_wire(&mut body, wire, edited);
        let map = body.as_object().cloned().expect("object");
        rest.update(&client, &key, &map).await.expect("drift");
        env.sim.reset_counts();
        let o = m.reconcile().await;
        assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        assert!(writes(&env.sim) >= 1, "{}: drift not reverted", m.name);
        let after = rest.read(&client, &key).await.expect("read");
        assert_ne!(
            provider_family::wire::get_path(&after, wire),
            Some(&edited),
            "{}",
            m.name
        );
    }
    assert_no_writes(&env.sim, &env.mrs, 1).await;

    // Deleting the MR deletes the object and releases the MR (in reverse order of creation:
    // aggregates before their members).
    for m in env.mrs.iter().rev() {
        let rest = m.kind.resolved().decl.rest;
        let key =
            m.get().await.metadata.annotations.unwrap_or_default()["crossplane.io/external-name"]
                .clone();
        m.api
            .delete(&m.name, &DeleteParams::default())
            .await
            .expect("delete MR");
        let deadline = tokio::time::Instant::now() + WAIT;
        while m.api.get_opt(&m.name).await.expect("get").is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} not released",
                m.name
            );
            m.reconcile().await;
        }
        if matches!(m.kind.resolved().decl.id, provider_family::Id::Singleton(_)) {
            // A singleton is reset (or kept), as upstream does, not removed.
            continue;
        }
        let gone = rest.read(&client, &key).await;
        assert!(
            matches!(&gone, Err(e) if e.is_not_found()),
            "{}: still in JFrog: {gone:?}",
            m.name
        );
    }
}

/// The member a person edits in JFrog to make drift, and the edited value: the
/// description where the Kind has one, else the first mutable boolean (`null`: flipped).
fn drift_member(kind: &provider_family::ResolvedKind) -> Option<(&'static str, Value)> {
    // Values JFrog does not return cannot drift.
    let params: Vec<_> = kind
        .params()
        .filter(|f| !f.immutable && !f.sensitive && !f.write_only)
        .filter(|f| f.norm != provider_family::Norm::KeepWhenServerEmpty)
        .collect();
    if let Some(w) = params
        .iter()
        .find(|f| f.wire == Some("description"))
        .and_then(|f| f.wire)
    {
        return Some((w, json!("edited in the UI")));
    }
    params
        .iter()
        .find(|f| matches!(f.ty, provider_family::Ty::Bool) && f.wire.is_some())
        .and_then(|f| f.wire)
        .map(|w| (w, Value::Null))
}

/// Set a dotted wire member (a `null` edit of a boolean flips it); returns the value set.
fn set_wire(body: &mut Value, wire: &str, edited: Value) -> Value {
    let mut cur = body;
    let mut parts = wire.split('.').peekable();
    while let Some(p) = parts.next() {
        if parts.peek().is_none() {
            let v = if edited.is_null() {
                json!(!cur.get(p).and_then(Value::as_bool).unwrap_or(false))
            } else {
                edited
            };
            cur[p] = v.clone();
            return v;
        }
        cur = &mut cur[p];
    }
    Value::Null
}

/// Every family: its Kinds' examples through the suite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_passes_the_suite() {
    // Webhooks: every Kind, plus the legacy examples.
    let mut examples: Vec<(String, Value)> = crate::webhook::tables::KINDS
        .iter()
        .map(|d| {
            (
                d.kind.to_string(),
                crate::webhook::examples::example(d, false),
            )
        })
        .collect();
    for d in crate::webhook::tables::KINDS
        .iter()
        .filter(|d| crate::webhook::examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((
            d.kind.to_string(),
            crate::webhook::examples::example(d, true),
        ));
    }
    family_suite(crate::webhook::kinds(), examples, true).await;

    // Repositories: every Kind (members before the virtual repositories that aggregate
    // them), plus the legacy examples.
    use crate::repository::{Class, class, examples as repo_examples, tables::KINDS as REPOS};
    let rank = |d: &provider_family::KindDecl| match class(d) {
        Class::Local => 0,
        Class::Remote => 1,
        Class::Federated => 2,
        Class::Virtual => 3,
    };
    let mut decls: Vec<_> = REPOS.iter().collect();
    decls.sort_by_key(|d| rank(d));
    let mut examples: Vec<(String, Value)> = decls
        .iter()
        .map(|d| (d.kind.to_string(), repo_examples::example(d, false)))
        .collect();
    for d in decls
        .iter()
        .filter(|d| repo_examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((d.kind.to_string(), repo_examples::example(d, true)));
    }
    family_suite(crate::repository::kinds(), examples, true).await;
}

/// The configuration, lifecycle and artifact Kinds (the descriptor sections share one read
/// and one writer per platform).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_family_passes_the_suite() {
    let mut examples: Vec<(String, Value)> = Vec::new();
    for d in crate::configuration::tables::KINDS {
        if let Some(secret) = crate::configuration::examples::example_secret(d) {
            examples.push(("Secret".to_string(), secret));
        }
        examples.push((
            d.kind.to_string(),
            crate::configuration::examples::example(d),
        ));
    }
    // The artifact examples deploy into the generic local repository example.
    family_suite_with(crate::configuration::kinds(), examples, true, |sim| {
        assert!(sim.put_repository_raw(
            crate::configuration::examples::EXAMPLE_REPOSITORY,
            json!({"key": crate::configuration::examples::EXAMPLE_REPOSITORY, "rclass": "local", "packageType": "generic"}),
        ));
    })
    .await;
}
