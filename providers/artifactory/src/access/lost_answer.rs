//! A create whose answer is lost (the simulator commits it and drops the connection), for
//! every Kind of the family that JFrog can create: exactly one object exists afterwards,
//! and the MR is Ready (identifiers known before the create: the next observe finds the
//! object) or stopped with Crossplane's "cannot determine creation result" (a token or API
//! key, whose identifier and generated value only the lost answer carried); further
//! reconciles of a stopped MR send no create.

use std::sync::Arc;

use jfrog_sim::Fault;
use provider_family::{ClientCache, Id};
use provider_runtime::managed::{ManagedKind, Outcome};

use super::examples;
use crate::family_suite::{Env, start_with};

/// The create call of each Kind (method, path prefix) and the simulator collection that
/// holds its objects.
const CASES: &[(&str, &str, &str, &str)] = &[
    ("ScopedToken", "POST", "/access/api/v1/tokens", "tokens"),
    (
        "APIKey",
        "POST",
        "/artifactory/api/security/apiKey",
        "api_keys",
    ),
    ("User", "POST", "/access/api/v2/users", "users"),
    ("ManagedUser", "POST", "/access/api/v2/users", "users"),
    ("UnmanagedUser", "POST", "/access/api/v2/users", "users"),
    (
        "Group",
        "PUT",
        "/artifactory/api/security/groups/",
        "access_groups",
    ),
    (
        "Certificate",
        "POST",
        "/artifactory/api/system/security/certificates/",
        "certificates",
    ),
    (
        "DistributionPublicKey",
        "POST",
        "/artifactory/api/security/keys/trusted",
        "trusted_keys",
    ),
    (
        "GlobalEnvironment",
        "POST",
        "/access/api/v1/environments",
        "environments",
    ),
    (
        "Keypair",
        "POST",
        "/artifactory/api/security/keypair",
        "keypairs",
    ),
    (
        "PermissionTarget",
        "POST",
        "/artifactory/api/v2/security/permissions/",
        "permission_targets",
    ),
    (
        "VaultConfiguration",
        "PUT",
        "/access/api/v1/vault/configs/",
        "vault_configs",
    ),
    (
        "LocalRepositorySingleReplication",
        "PUT",
        "/artifactory/api/replications/example-local-generic",
        "replications",
    ),
    (
        "LocalRepositoryMultiReplication",
        "PUT",
        "/artifactory/api/replications/multiple/example-local-maven",
        "replications",
    ),
    (
        "PushReplication",
        "PUT",
        "/artifactory/api/replications/multiple/example-local-npm",
        "replications",
    ),
    (
        "RemoteRepositoryReplication",
        "PUT",
        "/artifactory/api/replications/example-remote-generic",
        "replications",
    ),
    (
        "PullReplication",
        "PUT",
        "/artifactory/api/replications/example-remote-maven",
        "replications",
    ),
];

const STOPPED: &str = "cannot determine creation result";

fn synced(o: &kube::api::DynamicObject) -> (String, String) {
    testkit::condition(o, "Synced")
        .map(|(s, _, m)| (s, m))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_create_answer_never_makes_a_second_object() {
    let suite = examples::suite();
    let kinds = super::kinds();
    let mut env: Env = start_with(
        kinds,
        Arc::new(ClientCache::new(crate::PROVIDER)),
        suite.sim.clone(),
    )
    .await;
    env.create_objects(&suite.objects).await;
    for (key, config) in &suite.repositories {
        assert!(env.sim.put_repository_raw(key, config.clone()), "{key}");
    }
    let mut report = Vec::new();
    for (kind, method, prefix, collection) in CASES {
        let k = kinds
            .iter()
            .find(|k| k.info().kind == *kind)
            .unwrap_or_else(|| panic!("{kind} declared"));
        let before = env.sim.object_count(collection);
        env.sim
            .add_fault(Fault::drop_after_commit(method, prefix).times(1));
        let d = super::tables::KINDS
            .iter()
            .find(|d| d.kind == *kind)
            .expect("declared");
        env.add(k, examples::example(d, false)).await;
        let m = env.mrs.last().expect("added");
        let mut state = String::new();
        for _ in 0..12 {
            let o = m.reconcile().await;
            if m.ready_and_synced().await {
                state = "Ready".into();
                break;
            }
            let (status, message) = synced(&m.get().await);
            if status == "False" && message.contains(STOPPED) {
                state = format!("stopped: {message}");
                // Stopped for good: more reconciles create nothing.
                env.sim.reset_counts();
                for _ in 0..3 {
                    m.reconcile().await;
                }
                let writes: u64 = env
                    .sim
                    .request_counts()
                    .iter()
                    .filter(|(k, _)| k.starts_with(&format!("{method} ")))
                    .map(|(_, n)| n)
                    .sum();
                assert_eq!(writes, 0, "{kind}: created again after stopping");
                break;
            }
            if let Outcome::After(_) = o {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
        let after = env.sim.object_count(collection);
        assert_eq!(
            after,
            before + 1,
            "{kind}: {after} objects (was {before}), {state}"
        );
        let server_assigned = k.resolved().decl.id == Id::ServerAssigned;
        if server_assigned {
            assert!(state.starts_with("stopped"), "{kind}: {state}");
        } else {
            assert_eq!(state, "Ready", "{kind}");
        }
        report.push(format!("{kind}: 1 object, {state}"));
    }
    // Zero duplicates: every collection holds one object per case (plus what the platform
    // starts with: the anonymous user and the readers group).
    assert_eq!(env.sim.object_count("users"), 1 + 3);
    assert_eq!(env.sim.object_count("tokens"), 1);
    assert_eq!(env.sim.object_count("api_keys"), 1);
    assert_eq!(env.sim.object_count("replications"), 5);
    eprintln!("{}", report.join("\n"));
}
