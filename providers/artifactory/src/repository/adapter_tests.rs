//! The repository Kinds through the generic adapter against the JFrog simulator: every Kind
//! is created from its example and is up to date on the next Observe; what only repositories
//! have (project assignment, the federation sync, the key rule, parallel creates against the
//! descriptor merge). The adapter's generic behaviour (drift, clearing, late initialisation,
//! write-only secrets, not found, adoption) is tested in `provider-family-suite`
//! (`tests/family_layer/adapter.rs`).

use std::sync::Arc;

use jfrog_sim::{SimConfig, Simulator};
use provider_runtime::managed::config::{Credentials, ResolvedConfig};
use provider_runtime::managed::external::{ExternalClient, Managed};
use secrecy::SecretString;
use serde_json::{Value, json};

use super::Class;
use super::examples::{example_key, example_params};
use super::tables::KINDS;
use provider_family::adapter::{
    ClientCache, FamilyClient as RepositoryClient, FamilyKind as RepositoryKind,
};

pub(super) fn config(sim: &Simulator) -> ResolvedConfig {
    ResolvedConfig {
        config_kind: "ClusterProviderConfig".into(),
        config_name: "default".into(),
        config_namespace: None,
        config_uid: Some("pc-uid".into()),
        url: sim.url(),
        credentials: Credentials::Token(SecretString::from(sim.admin_token())),
        credentials_from: None,
        ca_bundle: None,
    }
}

fn client(sim: &Simulator, cache: &ClientCache, kind: &RepositoryKind) -> RepositoryClient {
    RepositoryClient::new(
        cache.client(&config(sim)).expect("client builds"),
        kind.resolved().clone(),
    )
}

pub(super) fn mr(key: &str, params: Value) -> Managed<RepositoryKind> {
    provider_family::adapter::managed(key, key, params)
}

pub(super) async fn sim() -> Simulator {
    // The adapter writes one repository at a time here; the emulation is exercised
    // elsewhere (jfrog-client serialises descriptor writes).
    let cfg = SimConfig {
        descriptor_merge_emulation: false,
        ..SimConfig::default()
    };
    testkit::start_sim_with(cfg).await
}

pub(super) fn kind(name: &str) -> RepositoryKind {
    let d = KINDS.iter().find(|d| d.kind == name).expect("declared");
    RepositoryKind::new(d).expect("composes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_is_up_to_date_after_create() {
    let sim = sim().await;
    let cache = ClientCache::new(crate::PROVIDER);
    // Members first: virtual repositories aggregate the local and remote examples.
    let mut order: Vec<_> = KINDS.iter().collect();
    order.sort_by_key(|d| match super::class(d) {
        Class::Local => 0,
        Class::Remote => 1,
        Class::Federated => 2,
        Class::Virtual => 3,
    });
    let mut failures = Vec::new();
    for d in order {
        let k = RepositoryKind::new(d).expect("composes");
        let c = client(&sim, &cache, &k);
        let key = example_key(d.kind, false);
        let mut m = mr(&key, example_params(d, false));
        let before = c.observe(&mut m).await.expect("observe");
        assert!(!before.resource_exists, "{}: exists before create", d.kind);
        if let Err(e) = c.create(&mut m).await {
            failures.push(format!("{}: create: {e}", d.kind));
            continue;
        }
        // Create's status is not persisted.
        m.at_provider = Value::Null;
        let o = c.observe(&mut m).await.expect("observe");
        assert!(o.resource_exists, "{}", d.kind);
        if !o.resource_up_to_date {
            failures.push(format!(
                "{}: not up to date after create: {}",
                d.kind, o.diff
            ));
        }
        // Late-initialised values do not create a diff either.
        let o = c.observe(&mut m).await.expect("observe");
        if !o.resource_up_to_date || o.resource_late_initialized {
            failures.push(format!(
                "{}: second observe: {} late={}",
                d.kind, o.diff, o.resource_late_initialized
            ));
        }
        assert_eq!(m.at_provider["id"], json!(key));
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(sim.repository_count(), KINDS.len());
    // Nothing but creates was written.
    assert_eq!(
        sim.request_count("POST", "/artifactory/api/repositories/{key}"),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_assignment_attaches_and_detaches() {
    let sim = sim().await;
    let cache = ClientCache::new(crate::PROVIDER);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("proj-generic", json!({}));
    // Attaching needs the project (the Access simulator answers 404 otherwise).
    assert!(sim.put_object(
        "access_projects",
        "proj",
        json!({"project_key": "proj", "display_name": "proj"})
    ));
    c.create(&mut m).await.expect("create");
    c.observe(&mut m).await.expect("observe");
    m.for_provider = json!({"projectKey": "proj"});
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    c.update(&mut m).await.expect("update attaches");
    assert_eq!(
        sim.request_count(
            "PUT",
            "/access/api/v1/projects/_/attach/repositories/{key}/{project_key}"
        ),
        1
    );
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
    m.for_provider = json!({"projectKey": ""});
    c.update(&mut m).await.expect("update detaches");
    assert_eq!(
        sim.request_count(
            "DELETE",
            "/access/api/v1/projects/_/attach/repositories/{key}"
        ),
        1
    );
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_creates_survive_descriptor_merge_emulation() {
    let sim = testkit::start_sim().await;
    sim.set_write_latency(std::time::Duration::from_millis(2));
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    let k = Arc::new(kind("LocalGenericRepository"));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let c = client(&sim, &cache, &k);
        tasks.push(tokio::spawn(async move {
            let mut m = mr(&format!("parallel-{i}"), json!({"description": "p"}));
            c.create(&mut m).await.map(|_| ())
        }));
    }
    for t in tasks {
        t.await.expect("task").expect("create succeeds");
    }
    assert_eq!(sim.repository_count(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn federated_writes_trigger_a_config_sync() {
    let sim = sim().await;
    let cache = ClientCache::new(crate::PROVIDER);
    let k = kind("FederatedGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr(
        "fed-sync",
        json!({"member": [{"url": "https://eu.example.com/artifactory/fed-sync", "enabled": true}]}),
    );
    c.create(&mut m).await.expect("create");
    let route = "/artifactory/api/federation/configSync/{key}";
    assert_eq!(sim.request_count("POST", route), 1);
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    m.for_provider["description"] = json!("synced");
    c.update(&mut m).await.expect("update");
    assert_eq!(sim.request_count("POST", route), 2);
    // Local repositories never call it.
    let l = kind("LocalGenericRepository");
    client(&sim, &cache, &l)
        .create(&mut mr("not-fed", json!({})))
        .await
        .expect("create");
    assert_eq!(sim.request_count("POST", route), 2);
}

/// Manifests the official provider's validation refuses are refused here too, before any
/// request: a key with `+` and `,`, and `externalDependenciesPatterns` without
/// `externalDependenciesEnabled: true`; the message names the rule. (OCI `tagRetention` 0
/// is refused at admission: `tests::oci_tag_retention_below_one_is_refused_at_admission`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_the_official_validation_refuses_cost_no_request() {
    let sim = sim().await;
    let cache = ClientCache::new(crate::PROVIDER);
    let local = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &local);
    sim.reset_counts();
    let mut m = mr("IHave++special,Chars", json!({}));
    let e = c.create(&mut m).await.expect_err("refused");
    assert!(e.to_string().contains("cannot contain"), "{e}");
    let remote = kind("RemoteDockerRepository");
    let c = client(&sim, &cache, &remote);
    let mut m = mr(
        "docker-remote-patterns",
        json!({"url": "https://registry-1.docker.io", "externalDependenciesPatterns": ["**/github.com/**"]}),
    );
    let e = c.create(&mut m).await.expect_err("refused");
    assert!(
        e.to_string().contains(
            "externalDependenciesPatterns can only be set when externalDependenciesEnabled is true"
        ),
        "{e}"
    );
    assert!(
        sim.request_counts().is_empty(),
        "{:?}",
        sim.request_counts()
    );
    // With the flag, the same manifest is created.
    let mut m = mr(
        "docker-remote-patterns",
        json!({"url": "https://registry-1.docker.io", "externalDependenciesEnabled": true, "externalDependenciesPatterns": ["**/github.com/**"]}),
    );
    c.create(&mut m).await.expect("created");
}

/// RemoteAieditorextensionsRepository takes `externalDependenciesPatterns` while external
/// dependencies are disabled: JFrog's resource for it (jfrog/terraform-provider-artifactory
/// PR #1450) deliberately has no rule against it, because Artifactory stores the patterns
/// either way. Created, up to date, and the patterns read back as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aieditorextensions_patterns_need_no_flag() {
    let sim = sim().await;
    let cache = ClientCache::new(crate::PROVIDER);
    let k = kind("RemoteAieditorextensionsRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr(
        "vsx-staged-remote",
        json!({
            "url": "https://marketplace.visualstudio.com/_apis/public/gallery",
            "externalDependenciesEnabled": false,
            "externalDependenciesPatterns": ["**/**staged.example.com/**"],
        }),
    );
    c.create(&mut m).await.expect("created");
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{:?}", m.at_provider);
    assert_eq!(m.at_provider["externalDependenciesEnabled"], false);
    assert_eq!(
        m.at_provider["externalDependenciesPatterns"],
        json!(["**/**staged.example.com/**"])
    );
}
