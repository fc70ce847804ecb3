//! The repository adapter driven by the real managed reconciler, against the Kubernetes API
//! test server (CRDs generated from the declarations, provider RBAC) and the JFrog
//! simulator: examples converge to Ready/Synced, stay without writes, drift is reverted, a
//! rotated Secret is re-sent once, and no secret value reaches the MR; with observation by
//! list, steady-state polls read no repository by key and a deletion made in JFrog is seen
//! and repaired. The servers, RBAC, MRs and convergence are the family suite's
//! ([`crate::family_suite`]); what is added here is the remote repository's Secret.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use provider_runtime::managed::Outcome;
use serde_json::json;

use super::examples::example;
use super::tables::KINDS;
use crate::family_suite::{Env, NS, WAIT, assert_no_writes, converge, start};
use provider_family::adapter::{ClientCache, FamilyKind as RepositoryKind};

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
    let kinds: Vec<Arc<RepositoryKind>> = names
        .iter()
        .map(|n| {
            let d = KINDS.iter().find(|d| d.kind == *n).expect("declared");
            Arc::new(RepositoryKind::new(d).expect("composes"))
        })
        .collect();
    let mut env = start(&kinds, cache).await;

    // The upstream password of the remote repository.
    let secrets: Api<Secret> = Api::namespaced(env.admin.clone(), NS);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "upstream-credentials", "namespace": NS},
        "stringData": {"password": "first-pass"}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create secret");

    // The MRs: every chosen Kind's example, namespaced and (for some) legacy.
    let pairs = kinds.iter().zip(names.iter().copied()).flat_map(|(k, n)| {
        let legacy = legacy_kinds.contains(&n);
        [(k, n, false), (k, n, true)]
            .into_iter()
            .filter(move |(_, _, l)| !*l || legacy)
    });
    for (k, name, legacy) in pairs {
        let d = KINDS.iter().find(|d| d.kind == name).expect("declared");
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
        env.add(k, obj).await;
    }
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciler_converges_examples_without_perpetual_updates() {
    let Env {
        sim,
        _server,
        admin,
        mrs,
        ..
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
