//! Observation by list for the configuration Kinds whose JFrog list answers whole objects
//! (issue 30): package cleanup, release bundle v2 cleanup and archive policies
//! (`GET .../policies`, global and project-level policies together), LDAP v2 settings and LDAP v2 group settings
//! (`GET /access/api/v1/ldap/settings`, `.../ldap/groups`). N MRs of a Kind cost one list
//! request per poll and no read by key, project-level policies included; an observe-only MR
//! whose object does not exist is not read either (the list shows it absent). Counted in the
//! simulator's request log over two polls of every MR, after they converged.

use std::sync::Arc;
use std::time::Duration;

use provider_family::ClientCache;
use provider_family_suite::{self as suite, ListCase, converge};
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use super::{examples, kinds, tables::KINDS};

/// Objects per Kind.
const N: usize = 4;
/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);
/// The project of the project-level policies.
const PROJECT: &str = "team";

const CASES: &[ListCase] = &[
    ListCase {
        kind: "PackageCleanupPolicy",
        list: "/artifactory/api/cleanup/packages/policies",
        item: "/artifactory/api/cleanup/packages/policies/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "ReleaseBundleV2CleanupPolicy",
        list: "/artifactory/api/cleanup/bundles/policies",
        item: "/artifactory/api/cleanup/bundles/policies/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "ArchivePolicy",
        list: "/artifactory/api/archive/v2/packages/policies",
        item: "/artifactory/api/archive/v2/packages/policies/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "LdapSettingV2",
        list: "/access/api/v1/ldap/settings",
        item: "/access/api/v1/ldap/settings/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "LdapGroupSettingV2",
        list: "/access/api/v1/ldap/groups",
        item: "/access/api/v1/ldap/groups/{key}",
        reads_each: false,
    },
];

fn kind(k: &str) -> Arc<provider_family::FamilyKind> {
    kinds()
        .iter()
        .find(|f| f.info().kind == k)
        .expect("declared")
        .clone()
}

/// The Secrets the cases' examples refer to.
fn example_secrets() -> Vec<Value> {
    CASES
        .iter()
        .filter_map(|c| {
            let d = KINDS.iter().find(|d| d.kind == c.kind)?;
            examples::example_secret(d)
        })
        .collect()
}

/// The example of `kind` as object `i`; the first policy of each Kind of package policies is
/// project-level (its key starting with the project's, as JFrog asks).
fn nth(kind: &str, i: usize) -> Value {
    let d = KINDS.iter().find(|d| d.kind == kind).expect("declared");
    let mut m = examples::example(d);
    let base = examples::example_key(kind);
    // Release bundle v2 cleanup policies have no project of their own (their search
    // criteria name projects).
    let policy = matches!(kind, "PackageCleanupPolicy" | "ArchivePolicy");
    let name = if policy && i == 0 {
        format!("{PROJECT}-{base}-{i}")
    } else {
        format!("{base}-{i}")
    };
    m["metadata"]["name"] = json!(name);
    if policy && i == 0 {
        m["spec"]["forProvider"]["projectKey"] = json!(PROJECT);
    }
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_kind_per_poll_and_no_read_by_key() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    env.create_objects(&example_secrets()).await;
    for c in CASES {
        for i in 0..N {
            env.add(&kind(c.kind), nth(c.kind, i)).await;
        }
    }
    let present = env.mrs.len();
    for c in CASES {
        env.add(&kind(c.kind), suite::observe_only_absent(nth(c.kind, 99)))
            .await;
    }
    converge(&env.mrs[..present]).await;
    for (name, collection) in [
        (
            "team-example-package-cleanup-policy-0",
            "package_cleanup_policies",
        ),
        ("team-example-archive-policy-0", "archive_policies"),
    ] {
        let p = env.sim.object(collection, name).expect("created");
        assert_eq!(p["projectKey"], PROJECT, "{name}: {p}");
    }
    for round in 0..2 {
        let counts = suite::list_poll(&env, POLL, CASES, 0).await;
        let mrs = env.mrs.len() as f64;
        let requests: u64 = counts.values().sum();
        eprintln!(
            "poll {round}: {} MRs, {requests} requests ({:.2} per MR): {counts:?}",
            env.mrs.len(),
            requests as f64 / mrs
        );
    }
    // Nothing written by the polls.
    crate::family_suite::assert_no_writes(&env.sim, &env.mrs[..present], 1).await;
}

/// A policy changed in JFrog after the list was fetched is seen in the next poll's list
/// (drift reverted by an update), and one deleted in JFrog is recreated: both found through
/// the list, not by a read by key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_in_jfrog_is_seen_in_the_next_list() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    // A policy removed a moment after its create is gone, not JFrog's read-after-write lag.
    env.ctx.creation_grace_period = Duration::ZERO;
    for i in 0..2 {
        env.add(
            &kind("PackageCleanupPolicy"),
            nth("PackageCleanupPolicy", i),
        )
        .await;
    }
    converge(&env.mrs).await;
    let edited = "team-example-package-cleanup-policy-0";
    let mut p = env
        .sim
        .object("package_cleanup_policies", edited)
        .expect("created");
    p["description"] = json!("edited in the UI");
    assert!(env.sim.put_object("package_cleanup_policies", edited, p));
    let gone = "example-package-cleanup-policy-1";
    assert!(env.sim.delete_object("package_cleanup_policies", gone));

    tokio::time::sleep(POLL + Duration::from_millis(200)).await;
    env.sim.reset_counts();
    for m in &env.mrs {
        m.reconcile().await;
    }
    let counts = env.sim.request_counts();
    eprintln!("after the edits: {counts:?}");
    let get = |route: &str| counts.get(route).copied().unwrap_or(0);
    assert_eq!(
        get("GET /artifactory/api/cleanup/packages/policies"),
        1,
        "{counts:?}"
    );
    // A key this poll wrote is read by key afterwards (a write since the list's fetch), no
    // other.
    assert!(
        get("GET /artifactory/api/cleanup/packages/policies/{key}") <= 2,
        "{counts:?}"
    );
    assert_eq!(
        get("PUT /artifactory/api/cleanup/packages/policies/{key}"),
        1,
        "{counts:?}"
    );
    assert_eq!(
        get("POST /artifactory/api/cleanup/packages/policies/{key}"),
        1,
        "{counts:?}"
    );
    let p = env
        .sim
        .object("package_cleanup_policies", edited)
        .expect("kept");
    assert_ne!(p["description"], "edited in the UI", "{p}");
    assert!(
        env.sim.object("package_cleanup_policies", gone).is_some(),
        "recreated"
    );
}

/// With their lists declared, `export` lists these Kinds too: every object JFrog holds
/// (project-level policies included) is exported once, in one list request per Kind, and
/// its manifest is up to date as soon as it is observed (the LDAP manager password, which
/// the list answers null, is not compared), nothing written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listed_kinds_are_exported_and_adopted_without_a_change() {
    use provider_family::export::{self, Options};

    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    env.create_objects(&example_secrets()).await;
    for c in CASES {
        for i in 0..2 {
            env.add(&kind(c.kind), nth(c.kind, i)).await;
        }
    }
    converge(&env.mrs).await;

    let client = jfrog_client::JfrogClient::builder(env.sim.url())
        .credentials(jfrog_client::Credentials::access_token(
            env.sim.admin_token(),
        ))
        .build()
        .expect("client");
    let opts = Options {
        only: CASES.iter().map(|c| c.kind.to_string()).collect(),
        ..Options::default()
    };
    let resolved: Vec<_> = kinds().iter().map(|k| k.resolved().as_ref()).collect();
    env.sim.reset_counts();
    let ex = export::export(&resolved, &client, &opts, &mut |_| {})
        .await
        .expect("export");
    let counts = env.sim.request_counts();
    for c in CASES {
        assert_eq!(
            counts.get(&format!("GET {}", c.list)),
            Some(&1),
            "{}: {counts:?}",
            c.kind
        );
    }
    assert_eq!(ex.requests, CASES.len() as u64, "{counts:?}");
    assert!(ex.warnings.is_empty(), "{:#?}", ex.warnings);
    assert!(ex.skipped.is_empty(), "{:#?}", ex.skipped);
    let mut exported: Vec<(&str, &str)> = ex
        .objects
        .iter()
        .map(|o| (o.kind, o.key.as_str()))
        .collect();
    exported.sort_unstable();
    let mut expected: Vec<(&str, String)> = env
        .mrs
        .iter()
        .map(|m| (m.kind.resolved().decl.kind, m.name.clone()))
        .collect();
    expected.sort_unstable();
    let expected: Vec<(&str, &str)> = expected.iter().map(|(k, n)| (*k, n.as_str())).collect();
    assert_eq!(exported, expected);
    let ldap = ex
        .objects
        .iter()
        .find(|o| o.kind == "LdapSettingV2")
        .expect("exported");
    assert!(
        !ldap
            .manifest
            .to_string()
            .contains("example-manager-password"),
        "{}",
        ldap.manifest
    );

    env.sim.reset_counts();
    let problems = provider_family::seed::observe_exported(kinds(), &client, &ex.objects).await;
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(
        suite::writes(&env.sim, &[]),
        0,
        "{:?}",
        env.sim.request_counts()
    );
}
