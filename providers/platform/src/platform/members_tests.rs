//! A Group's own `members` (upstream's deprecated form): owned by the Group only with
//! `useGroupMembersResource: false`, as upstream honours it; ignored otherwise.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use provider_family::ClientCache;
use provider_family_suite::{self as suite, Env, assert_no_writes, converge};
use serde_json::{Value, json};

use super::{kinds, tables::KINDS};

const GROUP_MEMBERS_PATCH: &str = "/access/api/v2/groups/{key}/members";
const GROUP_ITEM: &str = "/access/api/v2/groups/{key}";

async fn env_with_users() -> Env {
    let env = suite::start(
        crate::PROVIDER,
        kinds(),
        Arc::new(ClientCache::new(crate::PROVIDER)),
    )
    .await;
    for u in ["alice", "bob", "carol"] {
        assert!(env.sim.put_object(
            "users",
            u,
            json!({"username": u, "email": format!("{u}@example.com"), "admin": false}),
        ));
    }
    env
}

fn group_manifest(name: &str, params: Value) -> Value {
    let d = KINDS.iter().find(|d| d.kind == "Group").expect("declared");
    provider_family::examples::manifest(d, name, params, false)
}

fn members_of(env: &Env, group: &str) -> Vec<String> {
    let g = env
        .sim
        .object("access_groups", group)
        .expect("group exists");
    let mut m: Vec<String> = g["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    m.sort();
    m
}

fn group_kind() -> Arc<provider_family::FamilyKind> {
    kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "Group")
        .cloned()
        .expect("declared")
}

/// With the switch off the Group is created with its members (one POST, no members PATCH),
/// stays quiet, reverts a member added by hand with one members PATCH, and follows an edit
/// of its list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_with_the_switch_off_owns_its_members() {
    let mut env = env_with_users().await;
    env.add(
        &group_kind(),
        group_manifest(
            "devs",
            json!({"useGroupMembersResource": false, "members": ["alice", "bob"]}),
        ),
    )
    .await;
    converge(&env.mrs).await;
    assert_eq!(members_of(&env, "devs"), ["alice", "bob"]);
    assert_eq!(env.sim.request_count("POST", "/access/api/v2/groups"), 1);
    assert_eq!(env.sim.request_count("PATCH", GROUP_MEMBERS_PATCH), 0);
    assert_no_writes(&env.sim, &env.mrs, 2, &[]).await;

    // A member added in the UI is drift: removed by one members PATCH.
    let mut g = env.sim.object("access_groups", "devs").expect("group");
    g["members"] = json!(["alice", "bob", "carol"]);
    assert!(env.sim.put_object("access_groups", "devs", g));
    env.sim.reset_counts();
    env.mrs[0].reconcile().await;
    converge(&env.mrs).await;
    assert_eq!(members_of(&env, "devs"), ["alice", "bob"]);
    assert_eq!(env.sim.request_count("PATCH", GROUP_MEMBERS_PATCH), 1);

    // The spec's list edited: the group follows.
    env.mrs[0]
        .api
        .patch(
            "devs",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"members": ["alice", "carol"]}}})),
        )
        .await
        .expect("edit");
    env.mrs[0].reconcile().await;
    converge(&env.mrs).await;
    assert_eq!(members_of(&env, "devs"), ["alice", "carol"]);
    assert_no_writes(&env.sim, &env.mrs, 2, &[]).await;
}

/// With the switch on (the default) `members` is ignored as upstream ignores it: never
/// sent, never compared, so members GroupMembers (or a person) adds are nobody's drift.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_with_the_switch_on_ignores_members() {
    let mut env = env_with_users().await;
    env.add(
        &group_kind(),
        group_manifest("ops", json!({"members": ["alice"]})),
    )
    .await;
    converge(&env.mrs).await;
    assert!(members_of(&env, "ops").is_empty(), "members not sent");
    let mut g = env.sim.object("access_groups", "ops").expect("group");
    g["members"] = json!(["bob"]);
    assert!(env.sim.put_object("access_groups", "ops", g));
    assert_no_writes(&env.sim, &env.mrs, 2, &[]).await;
    assert_eq!(members_of(&env, "ops"), ["bob"]);
    assert_eq!(env.sim.request_count("PATCH", GROUP_ITEM), 0);
}
