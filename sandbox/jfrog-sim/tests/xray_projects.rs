//! Project-scoped Xray policies (`?projectKey=`): apart from the global ones and from other
//! projects', absent from the global list; the project must exist.

mod common;

use common::{Api, start};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn policy(description: &str) -> Value {
    json!({
        "name": "p",
        "type": "security",
        "description": description,
        "rules": [{"name": "r", "priority": 1, "criteria": {"min_severity": "High"}, "actions": {}}]
    })
}

#[tokio::test]
async fn project_policies_live_apart_from_the_global_ones() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let base = "/xray/api/v2/policies";
    // The project must exist.
    let r = api
        .post(&format!("{base}?projectKey=team"), policy("team"))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("team"), "{}", r.text);
    sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    for (path, what) in [
        (base.to_string(), "global"),
        (format!("{base}?projectKey=team"), "team"),
    ] {
        let r = api.post(&path, policy(what)).await;
        assert_eq!(r.status, StatusCode::CREATED, "{what}: {}", r.text);
    }
    // The same name again in the project: a conflict, not a second object.
    let r = api
        .post(&format!("{base}?projectKey=team"), policy("again"))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let global = api.get(base).await.json();
    assert_eq!(global.as_array().map(Vec::len), Some(1), "{global}");
    assert_eq!(global[0]["description"], "global");
    let team = api.get(&format!("{base}?projectKey=team")).await.json();
    assert_eq!(team.as_array().map(Vec::len), Some(1), "{team}");
    assert_eq!(team[0]["description"], "team");
    assert_eq!(
        api.get(&format!("{base}/p?projectKey=team")).await.json()["description"],
        "team"
    );

    // Deleting the project's policy leaves the global one.
    let r = api.delete(&format!("{base}/p?projectKey=team")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api.get(&format!("{base}/p?projectKey=team")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert_eq!(
        api.get(&format!("{base}/p")).await.json()["description"],
        "global"
    );
}
