//! ReleaseBundleV2 observed through the versions list of its name (issue 30):
//! `GET /lifecycle/api/v2/release_bundle/records/{name}` answers every version of one bundle
//! name, so N version MRs of B bundle names cost B list requests per poll and no read by key
//! (`GET /lifecycle/api/v2/release_bundle/records/{name}/{version}`). A version the list
//! lacks is absent, and so is every version of a name whose list answers 404 (JFrog's list
//! and read came together in Artifactory 7.63.2: a 404 is the name without a version, as
//! the read of each would answer); both are made again, as a bundle gone from JFrog always
//! was. A project's bundles are listed per name with `project` (the project's Release
//! Bundles repository); a list that cannot be used is read by key. Counted in the
//! simulator's request log.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jfrog_sim::Fault;
use provider_family::ClientCache;
use provider_family_suite::{self as suite, Env, converge};
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use super::{examples, kinds, tables::KINDS};

/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);
const LIST: &str = "GET /lifecycle/api/v2/release_bundle/records/{name}";
const READ: &str = "GET /lifecycle/api/v2/release_bundle/records/{name}/{version}";
const CREATE: &str = "POST /lifecycle/api/v2/release_bundle";

fn kind() -> Arc<provider_family::FamilyKind> {
    kinds()
        .iter()
        .find(|f| f.info().kind == "ReleaseBundleV2")
        .expect("declared")
        .clone()
}

/// The bundle version `name:version` as MR `mr` (`name` left unset when `None`: the MR's
/// name is the bundle's).
fn bundle(mr: &str, name: Option<&str>, version: &str) -> Value {
    let d = KINDS
        .iter()
        .find(|d| d.kind == "ReleaseBundleV2")
        .expect("declared");
    let mut m = examples::example(d);
    m["metadata"]["name"] = json!(mr);
    let p = &mut m["spec"]["forProvider"];
    match name {
        Some(n) => p["name"] = json!(n),
        None => {
            p.as_object_mut().expect("object").remove("name");
        }
    }
    p["version"] = json!(version);
    m
}

/// One poll of every MR after the TTL has passed: the requests, printed with their cost per
/// MR.
async fn poll(env: &Env, label: &str) -> BTreeMap<String, u64> {
    suite::poll(env, POLL, label).await
}

fn count(counts: &BTreeMap<String, u64>, route: &str) -> u64 {
    counts.get(route).copied().unwrap_or(0)
}

/// The record JFrog holds of `name:version`, if any.
fn record(env: &Env, name: &str, version: &str) -> Option<Value> {
    env.sim
        .objects("release_bundles")
        .unwrap_or_default()
        .into_iter()
        .find(|b| b["__key"] == format!("{name}/{version}"))
}

/// The status of every MR (what the Kind observes of its bundle).
async fn observed(env: &Env) -> Vec<Value> {
    let mut out = Vec::new();
    for m in &env.mrs {
        out.push(m.get().await.data["status"]["atProvider"].clone());
    }
    out
}

/// The list of bundle `name` answers 403 once (no permission to list): observed by key.
fn forbid_list(env: &Env, name: &str) {
    env.sim.add_fault(Fault {
        method: Some("GET".into()),
        path_prefix: format!("/lifecycle/api/v2/release_bundle/records/{name}"),
        error_rate: 1.0,
        status: 403,
        times: Some(1),
        ..Fault::default()
    });
}

async fn start() -> Env {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    // A bundle removed a moment after its create is gone, not JFrog's read-after-write lag.
    env.ctx.creation_grace_period = Duration::ZERO;
    env
}

/// The versions of the two-name tests: `a` three times, `b` twice and once more as the MR
/// named `b` (its name taken from the MR).
const VERSIONS: [(&str, Option<&str>, &str); 6] = [
    ("a-1", Some("a"), "1"),
    ("a-2", Some("a"), "2"),
    ("a-3", Some("a"), "3"),
    ("b-1", Some("b"), "1"),
    ("b-2", Some("b"), "2"),
    ("b", None, "3"),
];

async fn add_versions(env: &mut Env) {
    let k = kind();
    for (mr, name, version) in VERSIONS {
        env.add(&k, bundle(mr, name, version)).await;
    }
}

/// Six versions of two bundle names converge, created without a read by key (each name's
/// list answers 404 before its first version: absent); then each poll costs one list per
/// name and nothing else; what the Kind observes is what the read by key gives (the same
/// status once the list is refused and each version is read by key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_bundle_name_per_poll_and_no_read_by_key() {
    let mut env = start().await;
    add_versions(&mut env).await;
    env.sim.reset_counts();
    for m in &env.mrs {
        m.reconcile().await;
    }
    let counts = env.sim.request_counts();
    assert_eq!(count(&counts, CREATE), 6, "{counts:?}");
    assert_eq!(count(&counts, READ), 0, "absent from the list: {counts:?}");
    converge(&env.mrs).await;
    for (mr, name, version) in VERSIONS {
        assert!(
            record(&env, name.unwrap_or(mr), version).is_some(),
            "{mr}: {:?}",
            env.sim.objects("release_bundles")
        );
    }
    for round in 0..2 {
        let counts = poll(&env, &format!("by bundle name, poll {round}")).await;
        assert_eq!(count(&counts, LIST), 2, "one list per name: {counts:?}");
        assert_eq!(count(&counts, READ), 0, "no read by key: {counts:?}");
        assert_eq!(counts.values().sum::<u64>(), 2, "nothing else: {counts:?}");
    }
    // The status as JFrog recorded each version.
    let by_list = observed(&env).await;
    for ((mr, name, version), at) in VERSIONS.iter().zip(&by_list) {
        let r = record(&env, name.unwrap_or(mr), version).expect("recorded");
        assert_eq!(at["created"], r["created"], "{mr}: {at}");
        assert_eq!(at["createdBy"], r["created_by"], "{mr}: {at}");
        assert_eq!(at["serviceId"], r["service_id"], "{mr}: {at}");
    }
    // The same observation by key: each list refused once (no permission), then read by key.
    forbid_list(&env, "a");
    forbid_list(&env, "b");
    let counts = poll(&env, "by key (list refused)").await;
    assert_eq!(count(&counts, READ), 6, "{counts:?}");
    assert_eq!(suite::writes(&env.sim, &[]), 0, "{counts:?}");
    assert_eq!(observed(&env).await, by_list);
    for m in &env.mrs {
        assert!(m.ready_and_synced().await, "{}", m.name);
    }
}

/// A version deleted in JFrog is missing from its name's list: absent (once a read by key
/// confirms it, the family's rule for an object its MR created), and created again (its
/// parameters are immutable, as for a bundle gone from the read by key); a name whose every
/// version is deleted answers 404 to its list: each absent and created again alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_deleted_in_jfrog_is_absent_and_made_again() {
    let mut env = start().await;
    add_versions(&mut env).await;
    converge(&env.mrs).await;
    // The steady state: every version shown by its name's list.
    let counts = poll(&env, "steady").await;
    assert_eq!(counts.values().sum::<u64>(), 2, "{counts:?}");
    let before = record(&env, "a", "2").expect("a:2");

    // Missing from the list; the MR created it, so (as for every listed Kind) one read by
    // key confirms it is gone before it is made again.
    assert!(env.sim.delete_object("release_bundles", "a/2"));
    let counts = poll(&env, "a version deleted in JFrog").await;
    assert_eq!(count(&counts, LIST), 2, "{counts:?}");
    assert_eq!(count(&counts, READ), 1, "{counts:?}");
    assert_eq!(count(&counts, CREATE), 1, "{counts:?}");
    let again = record(&env, "a", "2").expect("made again");
    assert_eq!(again["release_bundle_name"], before["release_bundle_name"]);

    for version in ["1", "2", "3"] {
        assert!(
            env.sim
                .delete_object("release_bundles", &format!("b/{version}"))
        );
    }
    let counts = poll(&env, "every version of a name deleted in JFrog").await;
    assert_eq!(count(&counts, LIST), 2, "{counts:?}");
    assert_eq!(count(&counts, READ), 3, "one confirmation each: {counts:?}");
    assert_eq!(count(&counts, CREATE), 3, "{counts:?}");
    for version in ["1", "2", "3"] {
        assert!(record(&env, "b", version).is_some(), "b:{version}");
    }
    converge(&env.mrs).await;
    let counts = poll(&env, "after").await;
    assert_eq!(counts.values().sum::<u64>(), 2, "{counts:?}");
}

/// A project's bundle lives in the project's Release Bundles repository, which the list
/// shows only when asked with `project`: a project's versions of a name share one list (the
/// name's, asked with the project) beside the platform's versions of that name, and none is
/// read by key. One made in JFrog is adopted (not made again, which JFrog would refuse);
/// one deleted in JFrog is missing from its project's list and made again in the project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_bundles_are_listed_with_the_project() {
    let mut env = start().await;
    assert!(env.sim.put_object(
        "release_bundles",
        "a/5",
        json!({"release_bundle_name": "a", "release_bundle_version": "5",
               "status": "COMPLETED", "repository_key": "team-release-bundles-v2",
               "service_id": "jfrt@sim", "created_by": "admin",
               "created": "2025-01-23T11:39:04.815Z"}),
    ));
    let k = kind();
    env.add(&k, bundle("a-1", Some("a"), "1")).await;
    for version in ["5", "6"] {
        let mut team = bundle(&format!("a-{version}"), Some("a"), version);
        team["spec"]["forProvider"]["projectKey"] = json!("team");
        env.add(&k, team).await;
    }
    converge(&env.mrs).await;
    assert_eq!(
        count(&env.sim.request_counts(), CREATE),
        2,
        "a:1 and a:6 made, a:5 adopted"
    );
    let made = record(&env, "a", "6").expect("a:6 made");
    assert_eq!(made["repository_key"], "team-release-bundles-v2", "{made}");
    for round in 0..2 {
        let counts = poll(&env, &format!("a project's bundles, poll {round}")).await;
        assert_eq!(
            count(&counts, LIST),
            2,
            "the platform's and the project's: {counts:?}"
        );
        assert_eq!(count(&counts, READ), 0, "{counts:?}");
        assert_eq!(counts.values().sum::<u64>(), 2, "nothing else: {counts:?}");
    }
    let adopted = record(&env, "a", "5").expect("a:5");
    let by_list = observed(&env).await;
    assert_eq!(
        by_list[1]["createdBy"], adopted["created_by"],
        "{}",
        by_list[1]
    );
    assert_eq!(
        by_list[1]["serviceId"], adopted["service_id"],
        "{}",
        by_list[1]
    );
    for m in &env.mrs {
        assert!(m.ready_and_synced().await, "{}", m.name);
    }

    // Gone from the project's list: confirmed by one read (with the project) and made
    // again in the project.
    assert!(env.sim.delete_object("release_bundles", "a/6"));
    let counts = poll(&env, "a project's version deleted in JFrog").await;
    assert_eq!(count(&counts, LIST), 2, "{counts:?}");
    assert_eq!(count(&counts, READ), 1, "{counts:?}");
    assert_eq!(count(&counts, CREATE), 1, "{counts:?}");
    let again = record(&env, "a", "6").expect("made again");
    assert_eq!(
        again["repository_key"], "team-release-bundles-v2",
        "{again}"
    );
    converge(&env.mrs).await;
    let counts = poll(&env, "after").await;
    assert_eq!(counts.values().sum::<u64>(), 2, "{counts:?}");
}

/// Without the list (refused: no permission to list), the versions converge by reads by
/// key, one per MR and poll, and the list is not asked again in those polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_list_versions_are_read_by_key() {
    let mut env = start().await;
    forbid_list(&env, "a");
    forbid_list(&env, "b");
    add_versions(&mut env).await;
    converge(&env.mrs).await;
    for (mr, name, version) in VERSIONS {
        assert!(record(&env, name.unwrap_or(mr), version).is_some(), "{mr}");
    }
    for round in 0..2 {
        let counts = poll(&env, &format!("by key (no list), poll {round}")).await;
        assert_eq!(count(&counts, READ), 6, "{counts:?}");
        assert_eq!(count(&counts, LIST), 0, "{counts:?}");
        assert_eq!(counts.values().sum::<u64>(), 6, "{counts:?}");
    }
}
