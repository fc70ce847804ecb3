//! A Project's embedded member, group, role and repository lists (upstream's deprecated
//! form): owned by the Project when their `useProject*Resource` switch is false, ignored
//! while it is true (the default).

use std::sync::Arc;

use jfrog_client::{Idempotency, JfrogClient, Service};
use kube::api::{Patch, PatchParams};
use provider_family::ClientCache;
use provider_family_suite::{self as suite, Env, assert_no_writes, converge};
use serde_json::{Value, json};

use super::{examples, kinds, tables::KINDS};

const REPO: &str = "team-local";

async fn env() -> Env {
    let env = suite::start(
        crate::PROVIDER,
        kinds(),
        Arc::new(ClientCache::new(crate::PROVIDER)),
    )
    .await;
    for u in ["alice", "bob"] {
        assert!(
            env.sim
                .put_object("users", u, json!({"email": format!("{u}@example.com")}))
        );
    }
    assert!(
        env.sim
            .put_object("access_groups", "devs", json!({"description": ""}))
    );
    assert!(env.sim.put_repository_raw(
        REPO,
        json!({"key": REPO, "rclass": "local", "packageType": "generic"})
    ));
    env
}

fn project(name: &str, extra: Value) -> Value {
    let d = KINDS
        .iter()
        .find(|d| d.kind == "Project")
        .expect("declared");
    let mut params = examples::example_params(d, false);
    for (k, v) in extra.as_object().expect("object") {
        params[k] = v.clone();
    }
    provider_family::examples::manifest(d, name, params, false)
}

fn project_kind() -> Arc<provider_family::FamilyKind> {
    kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "Project")
        .cloned()
        .expect("declared")
}

fn jfrog(env: &Env) -> JfrogClient {
    JfrogClient::builder(env.sim.url())
        .credentials(jfrog_client::Credentials::access_token(
            env.sim.admin_token(),
        ))
        .build()
        .expect("client")
}

async fn get(env: &Env, path: &'static str, p: &str) -> Value {
    jfrog(env)
        .request(
            Service::Access,
            jfrog_client::Method::GET,
            path,
            Idempotency::Idempotent,
        )
        .param(p)
        .send_value()
        .await
        .expect("read")
}

fn names(v: &Value) -> Vec<String> {
    let mut n: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["name"].as_str().map(str::to_string))
        .collect();
    n.sort();
    n
}

async fn assigned_to(env: &Env, repo: &str) -> Value {
    get(env, "/api/v1/projects/_/repositories/{key}", repo).await["assigned_to"].clone()
}

/// Every switch off: the Project creates its members, group, custom role and repository
/// assignment, stays quiet, removes a member added by hand and follows an edit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_its_switches_off_owns_its_lists() {
    let mut env = env().await;
    env.add(
        &project_kind(),
        project(
            "team",
            json!({
                "useProjectUserResource": false,
                "member": [{"name": "alice", "roles": ["Developer"]}],
                "useProjectGroupResource": false,
                "group": [{"name": "devs", "roles": ["Viewer"]}],
                "useProjectRoleResource": false,
                "role": [{"name": "qa", "type": "CUSTOM", "environments": ["DEV"], "actions": ["READ_REPOSITORY"]}],
                "useProjectRepositoryResource": false,
                "repos": [REPO],
            }),
        ),
    )
    .await;
    converge(&env.mrs).await;
    let users = get(&env, "/api/v1/projects/{p}/users", "team").await;
    assert_eq!(names(&users["members"]), ["alice"]);
    assert_eq!(users["members"][0]["roles"], json!(["Developer"]));
    let groups = get(&env, "/api/v1/projects/{p}/groups", "team").await;
    assert_eq!(names(&groups["members"]), ["devs"]);
    let roles = get(&env, "/api/v1/projects/{p}/roles", "team").await;
    assert!(names(&roles).contains(&"qa".to_string()), "{roles}");
    assert_eq!(assigned_to(&env, REPO).await, json!("team"));
    assert_eq!(env.sim.request_count("POST", "/access/api/v1/projects"), 1);
    assert_no_writes(&env.sim, &env.mrs, 2, &[]).await;

    // A member added in the UI is drift: the Project removes it (one DELETE).
    jfrog(&env)
        .request(
            Service::Access,
            jfrog_client::Method::PUT,
            "/api/v1/projects/{p}/users/{name}",
            Idempotency::Idempotent,
        )
        .param("team")
        .param("bob")
        .json(&json!({"name": "bob", "roles": ["Viewer"]}))
        .send_empty()
        .await
        .expect("added by hand");
    env.sim.reset_counts();
    env.mrs[0].reconcile().await;
    converge(&env.mrs).await;
    let users = get(&env, "/api/v1/projects/{p}/users", "team").await;
    assert_eq!(names(&users["members"]), ["alice"]);
    assert_eq!(
        env.sim
            .request_count("DELETE", "/access/api/v1/projects/{p}/users/{name}"),
        1
    );

    // The spec edited: alice's roles change, and the repository list removed (the switch
    // still off: no repository is the project's, so it is detached, as upstream does).
    env.mrs[0]
        .api
        .patch(
            "team",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {
                "member": [{"name": "alice", "roles": ["Contributor"]}],
                "repos": null,
            }}})),
        )
        .await
        .expect("edit");
    env.mrs[0].reconcile().await;
    converge(&env.mrs).await;
    let users = get(&env, "/api/v1/projects/{p}/users", "team").await;
    assert_eq!(users["members"][0]["roles"], json!(["Contributor"]));
    assert_eq!(assigned_to(&env, REPO).await.as_str().unwrap_or(""), "");
    assert_no_writes(&env.sim, &env.mrs, 2, &[]).await;
}

/// Switches on (the default): the embedded lists are never sent or compared, so members
/// that `User` MRs (or people) add are nobody's drift.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_its_switches_on_ignores_the_lists() {
    let mut env = env().await;
    env.add(
        &project_kind(),
        project(
            "ops",
            json!({"member": [{"name": "alice", "roles": ["Developer"]}], "repos": [REPO]}),
        ),
    )
    .await;
    converge(&env.mrs).await;
    let users = get(&env, "/api/v1/projects/{p}/users", "ops").await;
    assert!(names(&users["members"]).is_empty(), "{users}");
    assert_eq!(assigned_to(&env, REPO).await.as_str().unwrap_or(""), "");
    assert_no_writes(&env.sim, &env.mrs, 2, &[]).await;
}
