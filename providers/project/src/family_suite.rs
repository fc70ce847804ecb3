//! The family suite over provider-project's Kinds: every example (both scopes where there is
//! a legacy one) converges to Ready and Synced through the real managed reconciler (CRDs
//! generated from the declarations, Crossplane's provider RBAC, the JFrog simulator); two
//! more rounds send no write; an object removed in JFrog is restored by one reconcile; and
//! deleting the MRs (members before their project) removes every object.
//!
//! MERGE NOTE: the generic suite lives in provider-artifactory's `family_suite` (a
//! `cfg(test)` module, unreachable from here) while another change moves it into
//! `provider-family`; once it has moved, this module shrinks to one call of it. Two things
//! it must then offer: REST calls by the family's address (an object inside a project is
//! `<projectKey>/<name>`, not its external name), and a drift that every Kind has (these
//! Kinds have no `description`: the drift here is the object removed in JFrog).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use provider_family::{ClientCache, FamilyConnector, FamilyKind};
use provider_runtime::managed::{
    ConfigError, ControllerContext, Credentials, ManagedKind, ManagedRef, Outcome,
    ProviderConfigResolver, Reconciler, ResolvedConfig, Scope,
};
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::projects::{examples, kinds, tables::KINDS};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(120);

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

struct Mr {
    scope: Scope,
    name: String,
    kind: Arc<FamilyKind>,
    rec: Reconciler<FamilyKind>,
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
        testkit::condition(&o, "Ready").is_some_and(|c| c.0 == "True")
            && testkit::condition(&o, "Synced").is_some_and(|c| c.0 == "True")
    }
    /// Where the MR's object is, as the family's REST binding addresses it.
    async fn address(&self) -> String {
        let o = self.get().await;
        let external =
            o.metadata.annotations.unwrap_or_default()["crossplane.io/external-name"].clone();
        let params = o.data["spec"]["forProvider"].clone();
        let k = self.kind.resolved();
        k.decl.hooks.address(k, &external, &params)
    }
}

fn writes(sim: &jfrog_sim::Simulator) -> u64 {
    sim.request_counts()
        .iter()
        .filter(|(k, _)| !k.starts_with("GET"))
        .map(|(_, n)| n)
        .sum()
}

async fn quiet(sim: &jfrog_sim::Simulator, mrs: &[Mr], rounds: usize) {
    sim.reset_counts();
    for _ in 0..rounds {
        for m in mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    assert_eq!(writes(sim), 0, "{:?}", sim.request_counts());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_project_kind_passes_the_suite() {
    let sim = testkit::start_sim().await;
    // The repositories the examples assign and share, as provider-artifactory's examples
    // would have created them.
    for r in examples::REPOSITORIES {
        assert!(sim.put_repository_raw(
            r,
            json!({"key": r, "rclass": "local", "packageType": "generic"})
        ));
    }
    let server = testkit::start_kube_server().await;
    let admin = testkit::client_for(&server, &server.admin_token()).await;
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    let regs = crate::projects::registrations(cache.clone());
    let crds: Vec<Value> = provider_runtime::crd::provider_crds_for("project", &regs)
        .into_iter()
        .filter(|c| !c.name.contains("providerconfig"))
        .map(|c| c.document)
        .collect();
    testkit::install_crds(&admin, &crds).await;
    let user = testkit::provider_user(crate::PROVIDER.name);
    testkit::grant(
        &admin,
        testkit::provider_role("crossplane:provider:project:system", &crds, &[]),
        &user,
    )
    .await;
    let provider = testkit::client_for(&server, &server.issue_token(&user, &[])).await;
    let mut ctx = ControllerContext::new(
        provider,
        Arc::new(SimResolver {
            url: sim.url(),
            token: sim.admin_token(),
        }),
        crate::PROVIDER.name,
    );
    // The drift below removes objects created a moment ago: no grace for their create to
    // show (the grace period would take the removal for JFrog's read-after-write lag).
    ctx.creation_grace_period = Duration::ZERO;

    // Every example, members before their project (order must not matter), legacy ones last.
    let mut manifests: Vec<(usize, Value)> = Vec::new();
    for (i, d) in KINDS.iter().enumerate().rev() {
        manifests.push((i, examples::example(d, false)));
    }
    for (i, d) in KINDS.iter().enumerate() {
        if examples::LEGACY_KINDS.contains(&d.kind) {
            manifests.push((i, examples::example(d, true)));
        }
    }
    let mut mrs = Vec::new();
    for (i, manifest) in manifests {
        let kind = kinds()[i].clone();
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
            Scope::Namespaced => Api::namespaced_with(admin.clone(), NS, &ar),
            Scope::Cluster => Api::all_with(admin.clone(), &ar),
        };
        let obj: DynamicObject = serde_json::from_value(manifest).expect("object");
        testkit::wait_for("CRD served", WAIT, Duration::from_millis(100), || async {
            api.create(&PostParams::default(), &obj).await.ok()
        })
        .await;
        let connector = Arc::new(FamilyConnector::new(&kind, cache.clone()));
        mrs.push(Mr {
            scope,
            name,
            rec: Reconciler::new(kind.clone(), connector, ctx.clone(), scope),
            kind,
            api,
        });
    }

    // Converge by retry, in the (wrong) order applied.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut pending = Vec::new();
        for m in &mrs {
            if !m.ready_and_synced().await {
                pending.push(format!("{}: {:?}", m.name, m.reconcile().await));
            }
        }
        if pending.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not converged: {pending:?}"
        );
    }
    quiet(&sim, &mrs, 2).await;

    // Removed in JFrog: restored by one reconcile (a write), then quiet again.
    let client = jfrog_client::JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client");
    for m in mrs.iter().filter(|m| m.kind.info().kind != "Project") {
        let rest = m.kind.resolved().decl.rest;
        let address = m.address().await;
        rest.delete(&client, &address)
            .await
            .expect("removed in JFrog");
        sim.reset_counts();
        // A create ends with an immediate requeue (Backoff); the next observe confirms it.
        let first = m.reconcile().await;
        assert!(matches!(first, Outcome::Backoff), "{}: {first:?}", m.name);
        let o = m.reconcile().await;
        assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        assert!(writes(&sim) >= 1, "{}: not restored", m.name);
        rest.read(&client, &address).await.expect("restored");
    }
    // A project edited in JFrog is reverted.
    for m in mrs.iter().filter(|m| m.kind.info().kind == "Project") {
        let rest = m.kind.resolved().decl.rest;
        let key = m.address().await;
        let mut body = rest.read(&client, &key).await.expect("read");
        body["description"] = json!("edited in the UI");
        rest.update(&client, &key, body.as_object().expect("object"))
            .await
            .expect("drift");
        m.reconcile().await;
        let after = rest.read(&client, &key).await.expect("read");
        assert_eq!(after["description"], "managed by Crossplane", "{}", m.name);
    }
    quiet(&sim, &mrs, 1).await;

    // Delete: members, roles, environments and assignments first, then the projects.
    for m in mrs
        .iter()
        .filter(|m| m.kind.info().kind != "Project")
        .chain(mrs.iter().filter(|m| m.kind.info().kind == "Project"))
    {
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
                "{} not released",
                m.name
            );
            m.reconcile().await;
        }
        let gone = rest.read(&client, &address).await;
        assert!(
            matches!(&gone, Err(e) if e.is_not_found()),
            "{}: still in JFrog: {gone:?}",
            m.name
        );
    }
    // The repositories themselves are provider-artifactory's: still there.
    for r in examples::REPOSITORIES {
        assert!(sim.repository_raw(r).is_some(), "{r} removed");
    }
}
