//! The list calls of users, groups, permission targets, tokens and replications, answered
//! as JFrog answers them: the Access users list (`{"users": [...]}`, from 7.84.3) and the
//! security API's (`[...]`), each a name, a link and the realm; groups and permission
//! targets as a name and a link; tokens wrapped as `{"tokens": [...]}`; replications one
//! element per target, passwords left out.

use crate::common::{Api, start_with};
use jfrog_sim::SimConfig;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn sim_config(version: &str) -> SimConfig {
    SimConfig {
        artifactory_version: version.into(),
        ..SimConfig::default()
    }
}

fn names(v: &Value, member: &str) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|o| o[member].as_str().expect("name").to_string())
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn users_groups_and_permission_targets_are_listed_by_name_and_link() {
    let sim = start_with(sim_config("7.90.1")).await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v2/users",
            json!({"username": "alice", "email": "alice@example.com", "password": "Passw0rdX1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .put("/artifactory/api/security/groups/devs", json!({}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .post(
            "/artifactory/api/v2/security/permissions/read-all",
            json!({"repo": {"repositories": ["ANY"], "actions": {"users": {"alice": ["read"]}}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);

    let users = api.get("/access/api/v2/users").await.json();
    let list = &users["users"];
    assert_eq!(names(list, "username"), ["alice", "anonymous"]);
    let alice = list
        .as_array()
        .expect("array")
        .iter()
        .find(|u| u["username"] == "alice")
        .expect("alice");
    assert_eq!(
        alice,
        &json!({"username": "alice", "uri": format!("{}/access/api/v2/users/alice", sim.url()),
                "realm": "internal", "status": "enabled"})
    );
    let legacy = api.get("/artifactory/api/security/users").await.json();
    assert_eq!(names(&legacy, "name"), ["alice", "anonymous"]);
    assert!(legacy[0].get("email").is_none(), "names only: {legacy}");
    let groups = api.get("/artifactory/api/security/groups").await.json();
    assert_eq!(names(&groups, "name"), ["devs", "readers"]);
    let perms = api
        .get("/artifactory/api/v2/security/permissions")
        .await
        .json();
    assert_eq!(
        perms,
        json!([{"name": "read-all",
                "uri": format!("{}/artifactory/api/v2/security/permissions/read-all", sim.url())}])
    );

    // Before 7.84.3 only the security API answers.
    let old = start_with(sim_config("7.80.0")).await;
    let old_api = Api::admin(&old);
    assert_eq!(
        old_api.get("/access/api/v2/users").await.status,
        StatusCode::NOT_FOUND
    );
    let legacy = old_api.get("/artifactory/api/security/users").await.json();
    assert_eq!(names(&legacy, "name"), ["anonymous"]);
}

#[tokio::test]
async fn tokens_are_wrapped_and_replications_listed_per_target_without_passwords() {
    let sim = start_with(sim_config("7.90.1")).await;
    let api = Api::admin(&sim);
    let r = api
        .post("/access/api/v1/tokens", json!({"description": "ci"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let id = r.json()["token_id"].as_str().expect("id").to_string();
    let tokens = api.get("/access/api/v1/tokens").await.json();
    assert_eq!(tokens["tokens"][0]["token_id"], id.as_str());
    assert_eq!(tokens["tokens"][0]["description"], "ci");
    assert!(!tokens.to_string().contains("access_token"), "{tokens}");

    assert!(sim.put_repository_raw(
        "libs",
        json!({"key": "libs", "rclass": "local", "packageType": "generic"})
    ));
    let target = |n: u32| {
        json!({"url": format!("https://r{n}.example.com/artifactory/libs"),
               "username": "replicator", "password": "Secret-Passw0rd"})
    };
    let r = api
        .put(
            "/artifactory/api/replications/multiple/libs",
            json!({"cronExp": "0 0 2 * * ?", "replications": [target(1), target(2)]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let all = api.get("/artifactory/api/replications").await.json();
    assert_eq!(all.as_array().map(Vec::len), Some(2), "{all}");
    assert!(
        all.as_array()
            .expect("array")
            .iter()
            .all(|t| t["repoKey"] == "libs")
    );
    assert!(!all.to_string().contains("password"), "{all}");
    // Deleting the repository removes its replication configuration, as Artifactory does.
    let r = api.delete("/artifactory/api/repositories/libs").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let all = api.get("/artifactory/api/replications").await.json();
    assert_eq!(all, json!([]), "{all}");
}
