//! Observation by list for the users, groups, permission targets, tokens, key pairs,
//! distribution public keys and replications:
//! N managed resources of a Kind cost one list request per poll (shared by every MR of the
//! family), plus, where the list shows only which objects exist (users, groups,
//! permission targets, replications), one read per existing object; a complete list
//! (tokens, key pairs, trusted keys) needs no read at all (the trusted keys' read by key is
//! the list itself: one request per poll for every key, not one per MR), and an object the
//! list lacks is never read (each family
//! here has one MR whose object does not exist, which is what the partial lists are
//! fetched for: with every object present they are not asked, and a poll costs one read
//! per MR). Counted in the simulator's request log over one poll of every MR, after they
//! converged.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use provider_family::ClientCache;
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use super::examples;
use crate::family_suite::{Env, converge, start_with};

/// Objects per Kind.
const N: usize = 4;
/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);

async fn env(version: &str) -> Env {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let env = start_with(
        super::kinds(),
        cache,
        jfrog_sim::SimConfig {
            artifactory_version: version.into(),
            ..jfrog_sim::SimConfig::default()
        },
    )
    .await;
    env.create_objects(&[examples::secret_manifest()]).await;
    env
}

fn decl(kind: &str) -> &'static provider_family::KindDecl {
    super::tables::KINDS
        .iter()
        .find(|d| d.kind == kind)
        .expect("declared")
}

/// The example of `kind` as object `i` (its own name, and its own connection Secret).
fn nth(kind: &str, i: usize) -> Value {
    let mut m = examples::example(decl(kind), false);
    let name = format!("{}-{i}", examples::example_name(kind, false));
    m["metadata"]["name"] = json!(name);
    if m["spec"].get("writeConnectionSecretToRef").is_some() {
        m["spec"]["writeConnectionSecretToRef"]["name"] = json!(format!("{name}-connection"));
    }
    if kind == "ScopedToken" {
        m["spec"]["forProvider"]["description"] = json!(format!("token {i}"));
    }
    m
}

async fn add(env: &mut Env, kind: &str, manifest: Value) {
    let k = super::kinds()
        .iter()
        .find(|k| k.info().kind == kind)
        .expect("declared")
        .clone();
    env.add(&k, manifest).await;
}

/// Reconcile every MR once, a poll after the last list: the requests it took.
async fn one_poll(env: &Env) -> BTreeMap<String, u64> {
    tokio::time::sleep(POLL + Duration::from_millis(200)).await;
    env.sim.reset_counts();
    for m in &env.mrs {
        m.reconcile().await;
    }
    env.sim.request_counts()
}

fn get(counts: &BTreeMap<String, u64>, route: &str) -> u64 {
    counts.get(&format!("GET {route}")).copied().unwrap_or(0)
}

/// Every request of `counts` is one of `allowed` (a GET).
fn only(counts: &BTreeMap<String, u64>, allowed: &[&str]) {
    let other: Vec<_> = counts
        .keys()
        .filter(|k| !allowed.iter().any(|a| **k == format!("GET {a}")))
        .collect();
    assert!(other.is_empty(), "unexpected requests: {counts:?}");
}

/// `(list route, item route)` of a family, and whether the list shows only which objects
/// exist (each is then read).
struct Case {
    kind: &'static str,
    list: &'static str,
    item: &'static str,
    reads_each: bool,
}

async fn check(version: &str, cases: &[Case]) {
    let mut env = env(version).await;
    for (i, c) in cases.iter().enumerate() {
        for n in 0..N {
            let mut m = nth(c.kind, n);
            if examples::replicated_repo(c.kind).is_some() {
                let repo = format!("list-local-{i}-{n}");
                assert!(env.sim.put_repository_raw(
                    &repo,
                    json!({"key": repo, "rclass": "local", "packageType": "generic"})
                ));
                m["spec"]["forProvider"]["repoKey"] = json!(repo);
            }
            add(&mut env, c.kind, m).await;
        }
    }
    let present = env.mrs.len();
    for c in cases {
        let mut absent = provider_family_suite::observe_only_absent(nth(c.kind, 99));
        if absent["spec"]["forProvider"].get("repoKey").is_some() {
            absent["spec"]["forProvider"]["repoKey"] = json!("no-such-repository");
        }
        add(&mut env, c.kind, absent).await;
    }
    converge(&env.mrs[..present]).await;
    for round in 0..2 {
        let counts = one_poll(&env).await;
        eprintln!("{version} poll {round}: {counts:?}");
        let mut allowed = Vec::new();
        for c in cases {
            let per_object = if c.reads_each { N as u64 } else { 0 };
            assert_eq!(get(&counts, c.list), 1, "{}: {counts:?}", c.kind);
            if c.item != c.list {
                assert_eq!(get(&counts, c.item), per_object, "{}: {counts:?}", c.kind);
            }
            allowed.extend([c.list, c.item]);
        }
        only(&counts, &allowed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_family_per_poll_with_the_access_user_api() {
    check(
        examples::TEST_VERSION,
        &[
            Case {
                kind: "ManagedUser",
                list: "/access/api/v2/users",
                item: "/access/api/v2/users/{name}",
                reads_each: true,
            },
            Case {
                kind: "Group",
                list: "/artifactory/api/security/groups",
                item: "/artifactory/api/security/groups/{name}",
                reads_each: true,
            },
            Case {
                kind: "PermissionTarget",
                list: "/artifactory/api/v2/security/permissions",
                item: "/artifactory/api/v2/security/permissions/{name}",
                reads_each: true,
            },
            Case {
                kind: "ScopedToken",
                list: "/access/api/v1/tokens",
                item: "/access/api/v1/tokens/{id}",
                reads_each: false,
            },
            Case {
                kind: "Keypair",
                list: "/artifactory/api/security/keypair",
                item: "/artifactory/api/security/keypair/{name}",
                reads_each: false,
            },
            // Read by key through the list itself: the list asked once, for all of them.
            Case {
                kind: "DistributionPublicKey",
                list: "/artifactory/api/security/keys/trusted",
                item: "/artifactory/api/security/keys/trusted",
                reads_each: false,
            },
            Case {
                kind: "LocalRepositorySingleReplication",
                list: "/artifactory/api/replications",
                item: "/artifactory/api/replications/{key}",
                reads_each: true,
            },
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_are_listed_through_the_security_api_before_7_84_3() {
    check(
        "7.80.0",
        &[Case {
            kind: "ManagedUser",
            list: "/artifactory/api/security/users",
            item: "/artifactory/api/security/users/{name}",
            reads_each: true,
        }],
    )
    .await;
}
