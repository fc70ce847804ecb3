//! The generic family test suite (a dev-dependency of the providers, never a normal one):
//! every declared Kind of a family, through the real managed
//! reconciler, against the Kubernetes API test server (CRDs generated from the
//! declarations, Crossplane's provider RBAC) and the JFrog simulator. For each family:
//! every example (both scopes where the family has legacy examples) converges to Ready and
//! Synced; two more rounds of reconciles send no write; a change made in JFrog is reverted
//! by one reconcile; deleting the MR deletes the object. It runs over every declared Kind of
//! every family; a provider's test calls [`family_suite`] once per family, with its
//! [`Suite`] (the provider, how each Kind's object is changed in JFrog, which Kinds JFrog
//! can delete, which Kinds go last). Objects are read and changed where the family's REST
//! binding addresses them ([`provider_family::Hooks::address`]: an object inside a project
//! is `<projectKey>/<name>`). [`crds_accept_examples_and_refuse`] checks a family's CRDs
//! against its examples at admission.
//!
//! Test code: a failed step panics (with a message) and fails the provider test that runs it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jfrog_client::{Idempotency, JfrogClient, Service};
use jfrog_sim::Simulator;
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use provider_common::Provider;

use provider_family::{
    ClientCache, Cx, FamilyClient, FamilyConnector, FamilyKind, Id, KindDecl, Verb,
};
use provider_runtime::managed::{
    ConfigError, ControllerContext, Credentials, ManagedKind, ManagedRef, Outcome,
    ProviderConfigResolver, Reconciler, ResolvedConfig, Scope,
};
use secrecy::SecretString;
use serde_json::{Value, json};

/// The namespace of the suite's namespaced MRs and of the Secrets its examples name.
pub const NS: &str = "default";
/// How long the suite waits for an MR to converge or a CRD to be served.
pub const WAIT: Duration = Duration::from_secs(120);

/// What a provider tells the suite about its families.
#[derive(Debug, Clone, Copy)]
pub struct Suite {
    /// The provider (its name, short name and JFrog client identity).
    pub provider: Provider,
    /// The change a person makes in JFrog to an object of a Kind: a JSON pointer into the
    /// object as read and the value put there (`null`: the boolean there flipped); `None`:
    /// the Kind cannot be changed (no update API), so the drift step skips it.
    pub drift: fn(kind: &str) -> Option<(&'static str, Value)>,
    /// Whether deleting an MR of a Kind deletes the object in JFrog (false for
    /// configuration JFrog cannot delete: the MR only forgets it).
    pub deletes: fn(kind: &str) -> bool,
    /// Objects of other families the examples refer to, put into the simulator first.
    pub seed: fn(&Simulator),
    /// Requests (`METHOD path` as the simulator counts them) that only read although
    /// their method is not GET (a GraphQL query).
    pub read_calls: &'static [&'static str],
    /// Kinds whose drift (where [`Suite::drift`] gives none) is the object removed in JFrog,
    /// restored by a create (or, for an object that only loses its content, an update).
    pub removes: fn(kind: &str) -> bool,
    /// Kinds whose MRs are deleted last, in this order (parents after their members; the
    /// others go in reverse order of creation).
    pub delete_last: &'static [&'static str],
    /// Requests a person sends before the first [`Suite::delete_last`] Kind goes (freeing
    /// what a setting that is only forgotten still uses): service, verb, path, JSON body.
    pub resets: &'static [(Service, Verb, &'static str, &'static str)],
}

/// Nothing to seed.
pub fn no_seed(_sim: &Simulator) {}

/// The usual change made in JFrog: a new `description`.
pub fn description_drift(_kind: &str) -> Option<(&'static str, Value)> {
    Some(("/description", json!("edited in the UI")))
}

/// Every Kind's objects can be deleted.
pub fn always_deletes(_kind: &str) -> bool {
    true
}

/// No Kind's object is removed in JFrog by the drift step.
/// A [`Suite::removes`] for a family none of whose Kinds JFrog can delete behind the provider's
/// back.
pub fn never_removes(_kind: &str) -> bool {
    false
}

/// A ProviderConfig resolver that gives every MR the simulator's URL and admin token (no
/// ProviderConfig object is read).
pub struct SimResolver {
    /// The simulator's base URL.
    pub url: String,
    /// The simulator's admin token, sent as the MR's credentials.
    pub token: String,
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
            credentials_from: None,
            ca_bundle: None,
        })
    }
}

/// One MR and its reconciler.
pub struct Mr {
    /// Whether the MR is namespaced or cluster-scoped.
    pub scope: Scope,
    /// The MR's name.
    pub name: String,
    /// The MR's Kind.
    pub kind: Arc<FamilyKind>,
    /// The reconciler the suite drives for it, one reconcile at a time.
    pub rec: Reconciler<FamilyKind>,
    /// The API of the MR's resource (in [`NS`] when namespaced).
    pub api: Api<DynamicObject>,
}

impl Mr {
    /// Run one reconcile of the MR and return what it decided.
    pub async fn reconcile(&self) -> Outcome {
        let ns = (self.scope == Scope::Namespaced).then_some(NS);
        self.rec.reconcile(ns, &self.name).await
    }
    /// The MR as the API server has it now (panics when it cannot be read).
    pub async fn get(&self) -> DynamicObject {
        self.api.get(&self.name).await.expect("get MR")
    }
    /// Whether the MR's `Ready` and `Synced` conditions are both `True`.
    pub async fn ready_and_synced(&self) -> bool {
        let o = self.get().await;
        testkit::condition(&o, "Ready").is_some_and(|c| c.0 == "True")
            && testkit::condition(&o, "Synced").is_some_and(|c| c.0 == "True")
    }
    /// Where the MR's object is, as the family's REST binding addresses it (the identifier
    /// as the adapter derives it, through the family's
    /// [`provider_family::Hooks::address_observed`]).
    pub async fn address(&self) -> provider_family::Address {
        let o = self.get().await;
        let external =
            o.metadata.annotations.unwrap_or_default()["crossplane.io/external-name"].clone();
        let params = o.data["spec"]["forProvider"].clone();
        let k = self.kind.resolved();
        let key = offline_client(&self.kind).key(
            &provider_family::adapter::managed(&self.name, &external, params.clone()),
            &params,
        );
        k.hooks
            .address_observed(k, &key, &params, &o.data["status"]["atProvider"])
    }
}

/// The servers, the admin client, the MRs.
pub struct Env {
    /// The JFrog simulator.
    pub sim: Simulator,
    /// The Kubernetes API test server, kept running while the environment lives.
    pub _server: kube_testserver::TestServer,
    /// A client with the test server's admin token (creates the CRDs, examples and Secrets).
    pub admin: kube::Client,
    /// The controller context the reconcilers share, its client holding only the provider's
    /// RBAC.
    pub ctx: ControllerContext,
    /// The cache of JFrog clients the family's connectors share.
    pub cache: Arc<ClientCache>,
    /// The MRs added so far ([`Env::add`]), each with its reconciler.
    pub mrs: Vec<Mr>,
}

/// Start both servers, install the CRDs of `kinds` (both scopes) and grant the provider
/// exactly the RBAC Crossplane grants it for them.
pub async fn start(provider: Provider, kinds: &[Arc<FamilyKind>], cache: Arc<ClientCache>) -> Env {
    start_with(provider, kinds, cache, jfrog_sim::SimConfig::default()).await
}

/// [`start`] with a simulator configured as `sim` (e.g. another Artifactory version).
pub async fn start_with(
    provider: Provider,
    kinds: &[Arc<FamilyKind>],
    cache: Arc<ClientCache>,
    sim: jfrog_sim::SimConfig,
) -> Env {
    let sim = testkit::start_sim_with(sim).await;
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
    let crds: Vec<Value> = provider_runtime::crd::provider_crds_for(provider.short, &regs)
        .into_iter()
        .filter(|c| {
            kinds.iter().any(|k| {
                c.name
                    .contains(&format!(".{}.{}.", k.info().group, provider.short))
            })
        })
        .map(|c| c.document)
        .collect();
    testkit::install_crds(&admin, &crds).await;
    let user = testkit::provider_user(provider.name);
    // The ClusterRole Crossplane's RBAC manager creates for this provider.
    let role = format!("crossplane:provider:{}:system", provider.short);
    testkit::grant(&admin, testkit::provider_role(&role, &crds, &[]), &user).await;
    let client = testkit::client_for(&server, &server.issue_token(&user, &[])).await;
    let ctx = ControllerContext::new(
        client,
        Arc::new(SimResolver {
            url: sim.url(),
            token: sim.admin_token(),
        }),
        provider.name,
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
    /// Create Kubernetes objects the examples refer to (Secrets).
    pub async fn create_objects(&self, objects: &[Value]) {
        for o in objects {
            let ns = o["metadata"]["namespace"].as_str().unwrap_or(NS);
            let secrets: Api<k8s_openapi::api::core::v1::Secret> =
                Api::namespaced(self.admin.clone(), ns);
            let secret = serde_json::from_value(o.clone()).expect("a Secret");
            secrets
                .create(&PostParams::default(), &secret)
                .await
                .expect("create Secret");
        }
    }

    /// Create `manifest` (an MR of `kind`) and keep a reconciler for it; waits for the CRD to
    /// be served.
    pub async fn add(&mut self, kind: &Arc<FamilyKind>, manifest: Value) {
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
pub async fn converge(mrs: &[Mr]) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut pending = Vec::new();
        for m in mrs {
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

/// The requests that only read although their method is not GET: the suite's
/// `read_calls` and the list calls of `kinds` sent as a `POST` (Xray's reports list), as the
/// simulator counts them.
pub fn read_calls(suite_calls: &[&str], kinds: &[Arc<FamilyKind>]) -> Vec<String> {
    let mut calls: Vec<String> = suite_calls.iter().map(|c| c.to_string()).collect();
    for k in kinds {
        if let Some(list) = k.resolved().rest.list()
            && list.verb() != Verb::Get
        {
            let call = list.counted_as();
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
    }
    calls
}

/// One Kind observed by list, as the simulator names its routes: the list route, the route
/// that reads one object, and whether the list shows only which objects exist (each listed
/// object is then read by key).
#[derive(Debug, Clone, Copy)]
pub struct ListCase {
    /// The Kind.
    pub kind: &'static str,
    /// The list route (`/access/api/v2/groups`).
    pub list: &'static str,
    /// The read route (`/access/api/v2/groups/{key}`).
    pub item: &'static str,
    /// [`provider_family::Rest::list_reads_each`].
    pub reads_each: bool,
}

/// `manifest` made an MR whose object JFrog does not have: observe-only (so nothing creates
/// it), with the external name `absent-99`.
pub fn observe_only_absent(mut manifest: Value) -> Value {
    manifest["spec"]["managementPolicies"] = serde_json::json!(["Observe"]);
    manifest["metadata"]["annotations"] =
        serde_json::json!({"crossplane.io/external-name": "absent-99"});
    manifest
}

/// One poll of every MR of `env` (each reconciled once), after the snapshot TTL `ttl` has
/// passed since the previous one: the JFrog requests it sent, printed under `label` with
/// their cost per MR.
pub async fn poll(
    env: &Env,
    ttl: Duration,
    label: &str,
) -> std::collections::BTreeMap<String, u64> {
    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    env.sim.reset_counts();
    for m in &env.mrs {
        m.reconcile().await;
    }
    let counts = env.sim.request_counts();
    let requests: u64 = counts.values().sum();
    eprintln!(
        "{label}: {} MRs, {requests} requests ({:.2} per MR): {counts:?}",
        env.mrs.len(),
        requests as f64 / env.mrs.len().max(1) as f64
    );
    counts
}

/// The requests of one poll of every MR of `env` ([`poll`]), taken after the
/// snapshot TTL `poll` has passed since the previous one, checked against `cases`: each
/// case's list asked exactly once, its read route asked `present` times when the list shows
/// only which objects exist and never otherwise (an object the list lacks is not read), and
/// nothing else requested. Returns the counts.
pub async fn list_poll(
    env: &Env,
    poll: Duration,
    cases: &[ListCase],
    present: u64,
) -> std::collections::BTreeMap<String, u64> {
    let counts = self::poll(env, poll, "list poll").await;
    let get = |route: &str| counts.get(&format!("GET {route}")).copied().unwrap_or(0);
    for c in cases {
        assert_eq!(get(c.list), 1, "{}: one list per poll: {counts:?}", c.kind);
        let reads = if c.reads_each { present } else { 0 };
        assert_eq!(get(c.item), reads, "{}: reads by key: {counts:?}", c.kind);
    }
    let other: Vec<_> = counts
        .keys()
        .filter(|k| {
            !cases
                .iter()
                .any(|c| **k == format!("GET {}", c.list) || **k == format!("GET {}", c.item))
        })
        .collect();
    assert!(other.is_empty(), "unexpected requests: {counts:?}");
    counts
}

/// JFrog writes (every request but a GET and the `read_calls`) since the last reset of the
/// counts.
pub fn writes(sim: &Simulator, read_calls: &[&str]) -> u64 {
    sim.request_counts()
        .iter()
        .filter(|(k, _)| !k.starts_with("GET") && !read_calls.contains(&k.as_str()))
        .map(|(_, n)| n)
        .sum()
}

/// Reconcile every MR `rounds` times; none may write to JFrog.
pub async fn assert_no_writes(sim: &Simulator, mrs: &[Mr], rounds: usize, read_calls: &[&str]) {
    sim.reset_counts();
    for _ in 0..rounds {
        for m in mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    assert_eq!(writes(sim, read_calls), 0, "{:?}", sim.request_counts());
}

/// The JFrog client the suite uses to act as a person editing JFrog.
fn jfrog(sim: &Simulator) -> JfrogClient {
    jfrog_client::JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client")
}

/// The suite over one family: `kinds` are the family's Kinds (their CRDs are installed),
/// `examples` (Kind name, manifest) pairs; `every_kind` asks for an example of each Kind.
/// Gives the environment back (see [`run`]).
pub async fn family_suite(
    suite: &Suite,
    kinds: &[Arc<FamilyKind>],
    examples: Vec<(String, Value)>,
    every_kind: bool,
) -> Env {
    if every_kind {
        for k in kinds {
            assert!(
                examples.iter().any(|(n, _)| n == k.info().kind),
                "{} has no example in the suite",
                k.info().kind
            );
        }
    }
    let env = start(
        suite.provider,
        kinds,
        Arc::new(ClientCache::new(suite.provider)),
    )
    .await;
    (suite.seed)(&env.sim);
    run(suite, env, kinds, examples).await
}

/// The suite's steps in an environment already started and seeded (see [`start_with`],
/// [`Env::create_objects`]): converge, two quiet rounds, drift reverted, delete.
/// Singletons are reset, not deleted; observe-only MRs leave the object alone. Gives the
/// environment back (to look at the simulator afterwards).
pub async fn run(
    suite: &Suite,
    mut env: Env,
    kinds: &[Arc<FamilyKind>],
    examples: Vec<(String, Value)>,
) -> Env {
    if kinds.iter().any(|k| (suite.removes)(k.info().kind)) {
        // The drift removes objects created a moment ago: no grace for their create to
        // show (the grace period would take the removal for JFrog's read-after-write lag).
        env.ctx.creation_grace_period = Duration::ZERO;
    }
    for (kind, manifest) in examples {
        let k = kinds
            .iter()
            .find(|k| k.info().kind == kind)
            .unwrap_or_else(|| panic!("{kind} is declared"));
        env.add(k, manifest).await;
    }
    converge(&env.mrs).await;
    let reads = read_calls(suite.read_calls, kinds);
    let reads: Vec<&str> = reads.iter().map(String::as_str).collect();
    assert_no_writes(&env.sim, &env.mrs, 2, &reads).await;

    // A change made in JFrog is reverted by reconciling, then nothing more is written.
    let client = jfrog(&env.sim);
    for m in &env.mrs {
        drift_reverted(suite, &reads, &env.sim, &client, m).await;
    }
    assert_no_writes(&env.sim, &env.mrs, 1, &reads).await;

    // Deleting the MR deletes the object and releases the MR (in reverse order of creation:
    // aggregates before their members; the `delete_last` Kinds after all others).
    let rank = |m: &Mr| {
        suite
            .delete_last
            .iter()
            .position(|p| *p == m.kind.info().kind)
            .map_or(0, |i| i + 1)
    };
    let mut order: Vec<&Mr> = env.mrs.iter().rev().collect();
    order.sort_by_key(|m| rank(m));
    let mut reset = false;
    for m in order {
        if !reset && rank(m) > 0 {
            for (service, verb, path, body) in suite.resets {
                let body: Value = serde_json::from_str(body).expect("a JSON reset");
                provider_family::rest::request(
                    &client,
                    *service,
                    *verb,
                    path,
                    Idempotency::Idempotent,
                    &[],
                )
                .json(&body)
                .send_empty()
                .await
                .expect("reset");
            }
            reset = true;
        }
        let rest = m.kind.resolved().rest;
        let obj = m.get().await;
        let observe_only = obj.data["spec"]["managementPolicies"] == json!(["Observe"]);
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
        if !(suite.deletes)(m.kind.info().kind) {
            continue;
        }
        let gone = rest.read(&Cx::stateless(&client), &address).await;
        if observe_only {
            // An observed object stays.
            assert!(gone.is_ok(), "{}: {gone:?}", m.name);
            continue;
        }
        if matches!(m.kind.resolved().decl.id, Id::Singleton(_)) {
            // A singleton is reset to the platform's default, only forgotten, or its
            // section removed, as upstream does: the MR is released above either way.
            continue;
        }
        assert!(
            matches!(&gone, Err(e) if e.is_not_found()),
            "{}: still in JFrog: {gone:?}",
            m.name
        );
    }
    env
}

/// The suite's drift step for one MR: the [`Suite::drift`] change (or, for the
/// [`Suite::removes`] Kinds, the object removed) made in JFrog is reverted by reconciling.
async fn drift_reverted(
    suite: &Suite,
    read_calls: &[&str],
    sim: &Simulator,
    client: &JfrogClient,
    m: &Mr,
) {
    let kind = m.kind.info().kind;
    let rest = m.kind.resolved().rest;
    let address = m.address().await;
    let cx = Cx::stateless(client);
    if let Some((pointer, edited)) = (suite.drift)(kind) {
        let mut body = rest.read(&cx, &address).await.expect("read");
        // `null`: the boolean there is flipped.
        let edited = match edited {
            Value::Null => json!(
                !body
                    .pointer(pointer)
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
            v => v,
        };
        set_pointer(&mut body, pointer, edited.clone());
        let map = body.as_object().cloned().expect("object");
        rest.update(&cx, &address, &map).await.expect("drift");
        sim.reset_counts();
        let o = m.reconcile().await;
        assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        assert!(
            writes(sim, read_calls) >= 1,
            "{}: drift not reverted",
            m.name
        );
        let after = rest.read(&cx, &address).await.expect("read");
        assert_ne!(after.pointer(pointer), Some(&edited), "{}", m.name);
    } else if (suite.removes)(kind) {
        let before = rest.read(&cx, &address).await.expect("read");
        rest.delete(&cx, &address).await.expect("removed in JFrog");
        sim.reset_counts();
        // A create ends with an immediate requeue, the next observe confirms it; an object
        // that only loses its content (a group's members) is updated.
        let mut rounds = 0;
        loop {
            let o = m.reconcile().await;
            rounds += 1;
            if matches!(o, Outcome::After(_)) {
                break;
            }
            assert!(rounds < 3, "{}: {o:?}", m.name);
        }
        assert!(
            writes(sim, read_calls) >= 1,
            "{}: drift not reverted",
            m.name
        );
        let after = rest.read(&cx, &address).await.expect("restored");
        assert_eq!(after, before, "{}: not restored", m.name);
    }
}

/// Set the member at a JSON pointer, creating the objects on the way.
fn set_pointer(v: &mut Value, pointer: &str, value: Value) {
    let mut cur = v;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (i, p) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let m = cur.as_object_mut().expect("an object");
        if i + 1 == parts.len() {
            m.insert((*p).to_string(), value);
            return;
        }
        cur = m.entry((*p).to_string()).or_insert_with(|| json!({}));
    }
}

/// The Kind of `kinds` named `kind` (a test fails naming it when there is none).
pub fn kind_named<'a>(kinds: &'a [Arc<FamilyKind>], kind: &str) -> &'a Arc<FamilyKind> {
    kinds
        .iter()
        .find(|k| k.resolved().decl.kind == kind)
        .unwrap_or_else(|| panic!("no Kind {kind}"))
}

/// The declared Kind of a family's table named `kind`, composed with the REST binding and
/// hooks its table line binds (a test fails naming it when there is none, or when it does not
/// compose).
pub fn bound(kinds: &[provider_family::Kind], kind: &str) -> provider_family::BoundKind {
    kinds
        .iter()
        .find(|d| d.kind == kind)
        .unwrap_or_else(|| panic!("no Kind {kind}"))
        .bound()
        .unwrap_or_else(|e| panic!("{kind} does not compose: {e}"))
}

/// The address [`bound`]'s hooks give the MR of `kind` with identifier `key` and these
/// parameters.
pub fn address(
    kinds: &[provider_family::Kind],
    kind: &str,
    key: &str,
    params: &serde_json::Value,
) -> provider_family::Address {
    let k = bound(kinds, kind);
    k.hooks.address(&k, key, params)
}

/// A client of `kind`, with its rules checked before a write, whose JFrog is a closed port:
/// a request fails with a connection error, so an error that names a rule came before any
/// request.
pub fn offline_client(kind: &FamilyKind) -> FamilyClient {
    let jfrog = JfrogClient::builder("http://127.0.0.1:1")
        .build()
        .expect("a client");
    FamilyClient::new(jfrog, kind.resolved().clone()).with_rules_of(kind)
}

/// A provider's generated CRDs, checked against the API server's CRD rules as they are
/// compiled into schemas (admission as the API server does it).
pub struct CrdSchemas {
    provider: String,
    crds: Vec<provider_runtime::crd::GeneratedCrd>,
}

impl CrdSchemas {
    /// The CRDs `provider` (its short name) generates for `regs`.
    pub fn new(
        provider: &str,
        regs: &[Arc<dyn provider_runtime::managed::KindRegistration>],
    ) -> Self {
        CrdSchemas {
            provider: provider.to_string(),
            crds: provider_runtime::crd::provider_crds_for(provider, regs),
        }
    }

    /// The schema of `d`'s CRD in one scope (`legacy`: cluster scope), after checking the CRD
    /// passes the API server's CRD rules.
    pub fn schema(&self, d: &KindDecl, legacy: bool) -> crd_schema::Schema {
        let scope = if legacy { "" } else { ".m" };
        let name = format!(
            "{}.{}.{}{scope}.crossplane.io",
            provider_runtime::managed::kind::pluralize(d.kind),
            d.group,
            self.provider
        );
        let crd = self
            .crds
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no CRD {name}"));
        let mut doc = crd.document.clone();
        crd_schema::default_crd(&mut doc);
        let errs = crd_schema::validate_crd(&doc, None);
        assert!(errs.is_empty(), "{name}: {errs:?}");
        crd_schema::Schema::compile(&doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
            .unwrap_or_else(|e| panic!("{name}: {e:?}"))
    }

    /// The admission errors (field and message) of an MR of `d` whose `forProvider` is
    /// `for_provider`, in both scopes (the same rules apply to each).
    pub fn admission_errors(&self, d: &KindDecl, for_provider: Value) -> Vec<String> {
        let mut errors = Vec::new();
        for legacy in [false, true] {
            let mut mr = provider_family::examples::manifest(
                d,
                "admission-test",
                for_provider.clone(),
                legacy,
            );
            // As the API server does: defaults first (managementPolicies, ...), then rules.
            let schema = self.schema(d, legacy);
            schema.apply_defaults(&mut mr);
            let errs = schema.validate(&mr, None);
            errors.extend(errs.iter().map(|e| format!("{}: {}", e.field, e.detail)));
        }
        errors
    }

    /// Each case `(kind, valid, invalid, message)` of a provider's upstream validators: the
    /// valid `forProvider` is admitted and passes the check before a write, the invalid one
    /// is refused with an error containing `message`, at admission or (for a rule the API
    /// server could not afford, [`provider_family::checks::afford`]) before any write (so a
    /// rule that never fires, or fires on valid input, fails).
    pub fn refuse_cases(&self, kinds: &[Arc<FamilyKind>], cases: &[(&str, Value, Value, &str)]) {
        for (kind, valid, invalid, message) in cases {
            let k = kind_named(kinds, kind);
            let d = &k.resolved().decl;
            let ok = self.admission_errors(d, valid.clone());
            assert!(ok.is_empty(), "{kind}: the valid case is refused: {ok:?}");
            let before_write = k.check_before_write(valid);
            assert!(
                before_write.is_ok(),
                "{kind}: the valid case is refused before the write: {before_write:?}"
            );
            let mut refused = self.admission_errors(d, invalid.clone());
            refused.extend(k.check_before_write(invalid).err());
            assert!(
                refused.iter().any(|e| e.contains(message)),
                "{kind}: {invalid} should be refused with {message:?}, got {refused:?}"
            );
        }
    }

    /// Each case `(kind, valid, invalid, message)` of an identifier taken from the external
    /// name, which no CRD rule can read: the valid identifier passes the provider's check,
    /// and an MR named with the invalid one is refused by `check_write` with an error
    /// containing `message` before any JFrog request (the client points at a closed port, so
    /// a request would fail with a connection error instead).
    pub async fn refuse_identifiers(
        &self,
        kinds: &[Arc<FamilyKind>],
        cases: &[(&str, &str, &str, &str)],
    ) {
        self.refuse_identifiers_given(kinds, &json!({}), cases)
            .await;
    }

    /// [`CrdSchemas::refuse_identifiers`] with the `forProvider` `params` (for the checks of
    /// an identifier that involve a parameter, such as a `<projectKey>-` prefix).
    pub async fn refuse_identifiers_given(
        &self,
        kinds: &[Arc<FamilyKind>],
        params: &Value,
        cases: &[(&str, &str, &str, &str)],
    ) {
        use provider_runtime::managed::external::ExternalClient;
        for (kind, valid, invalid, message) in cases {
            let k = kind_named(kinds, kind);
            let ok = k.check_identifier(valid, params);
            assert!(ok.is_ok(), "{kind}: {valid:?} is refused: {ok:?}");
            let client = offline_client(k);
            let mr = provider_family::adapter::managed("identifier-test", invalid, params.clone());
            let err = client
                .check_write(&mr, true)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert!(
                err.as_ref()
                    .is_err_and(|e| e.contains(message) && e.contains(invalid)),
                "{kind}: {invalid:?} should be refused before any request with {message:?}, got {err:?}"
            );
        }
    }

    /// Each case `(kind, by_reference, resolved, message)`: a `forProvider` that gives a
    /// field through its reference (`<field>Ref(s)` / `<field>Selector`) is admitted, since
    /// the reference resolves after admission; once resolved (`resolved`: the reference and
    /// the value it filled in) the rule applies before any write and refuses it with an error
    /// containing `message`.
    pub fn reference_cases(&self, kinds: &[Arc<FamilyKind>], cases: &[(&str, Value, Value, &str)]) {
        for (kind, by_reference, resolved, message) in cases {
            let k = kind_named(kinds, kind);
            let admitted = self.admission_errors(&k.resolved().decl, by_reference.clone());
            assert!(
                admitted.is_empty(),
                "{kind}: {by_reference} is refused at admission: {admitted:?}"
            );
            let refused = k.check_before_write(resolved);
            assert!(
                refused.as_ref().is_err_and(|e| e.contains(message)),
                "{kind}: {resolved} should be refused before the write with {message:?}, got {refused:?}"
            );
        }
    }

    /// Every example of `decls` (both scopes) validates without pruning.
    pub fn accept_examples<'a, D: std::borrow::Borrow<KindDecl> + 'a>(
        &self,
        decls: impl IntoIterator<Item = &'a D>,
        example: fn(&KindDecl, bool) -> Value,
    ) {
        for d in decls {
            let d: &KindDecl = d.borrow();
            for legacy in [false, true] {
                let schema = self.schema(d, legacy);
                let mut ex = example(d, legacy);
                let pruned = schema.prune(&mut ex);
                assert!(pruned.is_empty(), "{}: pruned {pruned:?}", d.kind);
                let errs = schema.validate(&ex, None);
                assert!(errs.is_empty(), "{}: {errs:?}", d.kind);
            }
        }
    }
}

/// The CRDs of `regs` pass the API server's CRD rules, every example of `decls` (both scopes)
/// validates without pruning, and changing `field` of `kind`'s example to `value` is refused
/// at admission (the identity a spec field holds is immutable).
pub fn crds_accept_examples_and_refuse<D: std::borrow::Borrow<KindDecl>>(
    provider: &str,
    regs: &[Arc<dyn provider_runtime::managed::KindRegistration>],
    decls: &[D],
    example: fn(&KindDecl, bool) -> Value,
    (kind, field, value): (&str, &str, Value),
) {
    let crds = CrdSchemas::new(provider, regs);
    crds.accept_examples(decls, example);
    let d: &KindDecl = decls
        .iter()
        .map(std::borrow::Borrow::borrow)
        .find(|d: &&KindDecl| d.kind == kind)
        .expect("declared");
    let old = example(d, false);
    let mut new = old.clone();
    new["spec"]["forProvider"][field] = value;
    let errs = format!("{:?}", crds.schema(d, false).validate(&new, Some(&old)));
    assert!(errs.contains(field), "{errs}");
}
