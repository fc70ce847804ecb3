//! The family suite for the Access-family providers (provider-project, and provider-platform,
//! whose tests compile this same file through `#[path]`): every example (both scopes where
//! there is a legacy one) converges to Ready and Synced through the real managed reconciler
//! (CRDs generated from the declarations, Crossplane's provider RBAC, the JFrog simulator),
//! in whatever order they are applied; two more rounds send no write; a change made in JFrog
//! (an edited member, or the object removed) is reverted by reconciling; and deleting the MRs
//! (children before parents) removes every object, except the settings JFrog cannot delete,
//! which are only forgotten.
//!
//! MERGE NOTE: provider-artifactory's generic suite (a `cfg(test)` module there) is being moved
//! into `provider-family`; once it has, this file shrinks to calls of it. What it must then
//! offer: REST calls by the family's address (an object inside a project is
//! `<projectKey>/<name>`, not its external name), a drift for Kinds without a `description`
//! (an edited member, or the object removed), Secrets the examples read, and Kinds that are
//! only forgotten on delete.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jfrog_client::{Idempotency, JfrogClient, Service};
use jfrog_sim::Simulator;
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use provider_common::Provider;
use provider_family::rest::request;
use provider_family::{ClientCache, FamilyClient, FamilyConnector, FamilyKind, Id, Verb};
use provider_runtime::managed::{
    ConfigError, ControllerContext, Credentials, ManagedKind, ManagedRef, Outcome,
    ProviderConfigResolver, Reconciler, ResolvedConfig, Scope,
};
use secrecy::SecretString;
use serde_json::Value;

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(30);

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
    /// Where the MR's object is, as the family's REST binding addresses it.
    pub(crate) async fn address(&self) -> String {
        let o = self.get().await;
        let external =
            o.metadata.annotations.unwrap_or_default()["crossplane.io/external-name"].clone();
        let params = o.data["spec"]["forProvider"].clone();
        let k = self.kind.resolved();
        // The identifier as the adapter derives it (a spec field, a composite, ...).
        let jfrog = JfrogClient::builder("http://127.0.0.1:1")
            .build()
            .expect("client");
        let key = FamilyClient::new(jfrog, k.clone()).key(
            &provider_family::adapter::managed(&self.name, &external, params.clone()),
            &params,
        );
        k.decl.hooks.address(k, &key, &params)
    }
    fn kind_name(&self) -> &'static str {
        self.kind.resolved().decl.kind
    }
    fn singleton(&self) -> bool {
        matches!(self.kind.resolved().decl.id, Id::Singleton(_))
    }
}

/// The servers and the reconcilers of every MR applied.
pub(crate) struct Env {
    pub(crate) sim: Simulator,
    _server: kube_testserver::TestServer,
    pub(crate) admin: kube::Client,
    pub(crate) ctx: ControllerContext,
    pub(crate) cache: Arc<ClientCache>,
    pub(crate) mrs: Vec<Mr>,
}

/// Start both servers with the CRDs of `kinds` (both scopes) installed and the provider's
/// Crossplane RBAC; `secrets` are created in the MRs' namespace.
pub(crate) async fn start(provider: Provider, kinds: &[Arc<FamilyKind>], secrets: &[Value]) -> Env {
    let sim = testkit::start_sim().await;
    let server = testkit::start_kube_server().await;
    let admin = testkit::client_for(&server, &server.admin_token()).await;
    let cache = Arc::new(ClientCache::new(provider));
    let regs = provider_family::registrations(kinds, cache.clone());
    let crds: Vec<Value> = provider_runtime::crd::provider_crds_for(provider.short, &regs)
        .into_iter()
        .filter(|c| !c.name.contains("providerconfig"))
        .map(|c| c.document)
        .collect();
    testkit::install_crds(&admin, &crds).await;
    let user = testkit::provider_user(provider.name);
    let role = format!("crossplane:provider:{}:system", provider.short);
    testkit::grant(&admin, testkit::provider_role(&role, &crds, &[]), &user).await;
    let secret_api: Api<DynamicObject> = Api::namespaced_with(
        admin.clone(),
        NS,
        &testkit::api_resource("", "v1", "Secret", "secrets"),
    );
    for s in secrets {
        let obj: DynamicObject = serde_json::from_value(s.clone()).expect("secret");
        secret_api
            .create(&PostParams::default(), &obj)
            .await
            .expect("create secret");
    }
    let client = testkit::client_for(&server, &server.issue_token(&user, &[])).await;
    let mut ctx = ControllerContext::new(
        client,
        Arc::new(SimResolver {
            url: sim.url(),
            token: sim.admin_token(),
        }),
        provider.name,
    );
    // The drift below removes objects created a moment ago: no grace for their create to
    // show (the grace period would take the removal for JFrog's read-after-write lag).
    ctx.creation_grace_period = Duration::ZERO;
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
    /// Create `manifest` (an MR of `kind`) and keep a reconciler for it.
    pub(crate) async fn add(&mut self, kind: &Arc<FamilyKind>, manifest: Value) {
        let scope = if manifest["metadata"]["namespace"].is_string() {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        let name = manifest["metadata"]["name"]
            .as_str()
            .expect("name")
            .to_string();
        let ar = kind.info().api_resource(scope);
        let api: Api<DynamicObject> = match scope {
            Scope::Namespaced => Api::namespaced_with(self.admin.clone(), NS, &ar),
            Scope::Cluster => Api::all_with(self.admin.clone(), &ar),
        };
        let obj: DynamicObject = serde_json::from_value(manifest).expect("object");
        testkit::wait_for("CRD served", WAIT, Duration::from_millis(100), || async {
            api.create(&PostParams::default(), &obj).await.ok()
        })
        .await;
        let connector = Arc::new(FamilyConnector::new(kind, self.cache.clone()));
        self.mrs.push(Mr {
            scope,
            name,
            rec: Reconciler::new(kind.clone(), connector, self.ctx.clone(), scope),
            kind: kind.clone(),
            api,
        });
    }

    /// Reconcile every MR that is not Ready and Synced until all are (retries stand in for
    /// the controllers' requeues).
    pub(crate) async fn converge(&self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let mut pending = Vec::new();
            for m in &self.mrs {
                if !m.ready_and_synced().await {
                    let o = m.reconcile().await;
                    let synced = testkit::condition(&m.get().await, "Synced");
                    pending.push(format!("{}: {o:?} {synced:?}", m.name));
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

    /// JFrog writes (every request but a GET) since the last reset of the counts.
    pub(crate) fn writes(&self) -> u64 {
        self.sim
            .request_counts()
            .iter()
            .filter(|(k, _)| !k.starts_with("GET"))
            .map(|(_, n)| n)
            .sum()
    }

    /// Reconcile every MR `rounds` times: no write to JFrog.
    pub(crate) async fn quiet(&self, rounds: usize) {
        self.sim.reset_counts();
        for _ in 0..rounds {
            for m in &self.mrs {
                let o = m.reconcile().await;
                assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
            }
        }
        assert_eq!(self.writes(), 0, "{:?}", self.sim.request_counts());
    }

    /// A client acting as a person in JFrog.
    pub(crate) fn jfrog(&self) -> JfrogClient {
        JfrogClient::builder(self.sim.url())
            .credentials(jfrog_client::Credentials::access_token(
                self.sim.admin_token(),
            ))
            .build()
            .expect("client")
    }
}

/// What the suite changes in JFrog for a Kind.
#[allow(dead_code)] // each of the two crates compiling this file uses some
pub(crate) enum Drift {
    /// A wire member set to a value (reverted by an update).
    Set(&'static str, Value),
    /// The object removed (restored by a create).
    Remove,
    /// Nothing: a drift JFrog does not show (a write-only licence key).
    Undetectable,
}

/// The drift of each Kind.
pub(crate) type Edit = fn(&str) -> Drift;

/// The suite over `env.mrs` (already added, in any order): converge, quiet, drift reverted,
/// quiet, delete (Kinds in `parents` last, in the order given; `resets` sent between, as a
/// person would before deleting what a forgotten setting still uses).
pub(crate) async fn run(
    env: &Env,
    edit: Edit,
    parents: &[&str],
    resets: &[(Service, Verb, &'static str, Value)],
) {
    env.converge().await;
    env.quiet(2).await;

    let client = env.jfrog();
    for m in &env.mrs {
        let rest = m.kind.resolved().decl.rest;
        let address = m.address().await;
        env.sim.reset_counts();
        match edit(m.kind_name()) {
            Drift::Undetectable => continue,
            Drift::Set(member, value) => {
                let mut body = rest.read(&client, &address).await.expect("read");
                body[member] = value.clone();
                rest.update(&client, &address, body.as_object().expect("object"))
                    .await
                    .expect("edit in JFrog");
                env.sim.reset_counts();
                let o = m.reconcile().await;
                assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
                let after = rest.read(&client, &address).await.expect("read");
                assert_ne!(after[member], value, "{}: edit not reverted", m.name);
            }
            Drift::Remove => {
                let before = rest.read(&client, &address).await.expect("read");
                rest.delete(&client, &address)
                    .await
                    .expect("removed in JFrog");
                env.sim.reset_counts();
                // A create ends with an immediate requeue, the next observe confirms it; an
                // object that only loses its content (a group's members) is updated.
                let mut rounds = 0;
                loop {
                    let o = m.reconcile().await;
                    rounds += 1;
                    if matches!(o, Outcome::After(_)) {
                        break;
                    }
                    assert!(rounds < 3, "{}: {o:?}", m.name);
                }
                let after = rest.read(&client, &address).await.expect("restored");
                assert_eq!(after, before, "{}: not restored", m.name);
            }
        }
        assert!(env.writes() >= 1, "{}: drift not reverted", m.name);
    }
    env.quiet(1).await;

    let rank = |m: &Mr| {
        parents
            .iter()
            .position(|p| *p == m.kind_name())
            .map_or(0, |i| i + 1)
    };
    let mut order: Vec<&Mr> = env.mrs.iter().collect();
    order.sort_by_key(|m| rank(m));
    let mut reset = false;
    for m in order {
        if !reset && rank(m) > 0 {
            for (service, verb, path, body) in resets {
                request(&client, *service, *verb, path, Idempotency::Idempotent, &[])
                    .json(body)
                    .send_empty()
                    .await
                    .expect("reset");
            }
            reset = true;
        }
        let rest = m.kind.resolved().decl.rest;
        let address = m.address().await;
        m.api
            .delete(&m.name, &DeleteParams::default())
            .await
            .expect("delete MR");
        let deadline = tokio::time::Instant::now() + WAIT;
        while m.api.get_opt(&m.name).await.expect("get").is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} not released: {:?}",
                m.name,
                testkit::condition(&m.get().await, "Synced")
            );
            m.reconcile().await;
        }
        let gone = rest.read(&client, &address).await;
        if m.singleton() {
            assert!(gone.is_ok(), "{}: a setting is only forgotten", m.name);
        } else {
            assert!(
                matches!(&gone, Err(e) if e.is_not_found()),
                "{}: still in JFrog: {gone:?}",
                m.name
            );
        }
    }
}

/// The CRDs of `regs` pass the API server's CRD rules, every example of `decls` (both scopes)
/// validates without pruning, and changing `field` of `kind`'s example to `value` is refused
/// at admission (the identity a spec field holds is immutable).
pub(crate) fn crds_accept_examples_and_refuse(
    provider: &str,
    regs: &[Arc<dyn provider_runtime::managed::KindRegistration>],
    decls: &[provider_family::KindDecl],
    example: fn(&provider_family::KindDecl, bool) -> Value,
    (kind, field, value): (&str, &str, Value),
) {
    let crds = provider_runtime::crd::provider_crds_for(provider, regs);
    let schema_of = |d: &provider_family::KindDecl, legacy: bool| {
        let scope = if legacy { "" } else { ".m" };
        let name = format!(
            "{}.{}.{provider}{scope}.crossplane.io",
            provider_runtime::managed::kind::pluralize(d.kind),
            d.group
        );
        let crd = crds
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no CRD {name}"));
        let mut doc = crd.document.clone();
        crd_schema::default_crd(&mut doc);
        let errs = crd_schema::validate_crd(&doc, None);
        assert!(errs.is_empty(), "{name}: {errs:?}");
        crd_schema::Schema::compile(&doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
            .unwrap_or_else(|e| panic!("{name}: {e:?}"))
    };
    for d in decls {
        for legacy in [false, true] {
            let schema = schema_of(d, legacy);
            let mut ex = example(d, legacy);
            let pruned = schema.prune(&mut ex);
            assert!(pruned.is_empty(), "{}: pruned {pruned:?}", d.kind);
            let errs = schema.validate(&ex, None);
            assert!(errs.is_empty(), "{}: {errs:?}", d.kind);
        }
    }
    let d = decls.iter().find(|d| d.kind == kind).expect("declared");
    let old = example(d, false);
    let mut new = old.clone();
    new["spec"]["forProvider"][field] = value;
    let errs = format!("{:?}", schema_of(d, false).validate(&new, Some(&old)));
    assert!(errs.contains(field), "{errs}");
}
