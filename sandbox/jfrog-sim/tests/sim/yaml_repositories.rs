//! Repositories through the YAML configuration patch (`PATCH /artifactory/api/system/configuration`
//! with `localRepositories:` ... sections): the same stored configuration as the repository
//! REST API, all or nothing, and a platform that does not take them.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::{Value, json};

const PATH: &str = "/artifactory/api/system/configuration";

async fn patch_yaml(sim: &jfrog_sim::Simulator, yaml: &str) -> (StatusCode, String) {
    let r = crate::common::client()
        .patch(format!("{}{PATH}", sim.url()))
        .bearer_auth(sim.admin_token())
        .header("Content-Type", "application/yaml")
        .body(yaml.to_owned())
        .send()
        .await
        .expect("sent");
    let status = r.status();
    (status, r.text().await.expect("body"))
}

/// (class, key, REST body without rclass): several package types of every class.
fn repositories() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "local",
            "libs-maven-local",
            json!({"packageType": "maven", "description": "d", "handleSnapshots": false, "maxUniqueSnapshots": 3}),
        ),
        (
            "local",
            "images-local",
            json!({"packageType": "docker", "maxUniqueTags": 5, "xrayIndex": true}),
        ),
        (
            "remote",
            "npm-remote",
            json!({"packageType": "npm", "url": "https://registry.npmjs.org", "retrievalCachePeriodSecs": 600}),
        ),
        ("local", "py-local", json!({"packageType": "pypi"})),
        (
            "virtual",
            "maven-virtual",
            json!({"packageType": "maven", "repositories": ["libs-maven-local"]}),
        ),
        (
            "federated",
            "gen-federated",
            json!({"packageType": "generic", "members": []}),
        ),
    ]
}

fn section(class: &str) -> &'static str {
    match class {
        "local" => "localRepositories",
        "remote" => "remoteRepositories",
        "virtual" => "virtualRepositories",
        _ => "federatedRepositories",
    }
}

/// The YAML patch creating `repos`: the REST body with `type` for `packageType`.
fn yaml_of(repos: &[(&str, &str, Value)]) -> String {
    let mut doc = serde_json::Map::new();
    for (class, key, body) in repos {
        let mut entry = body.as_object().expect("object").clone();
        if let Some(t) = entry.remove("packageType") {
            entry.insert("type".into(), t);
        }
        doc.entry(section(class))
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("object")
            .insert((*key).to_owned(), Value::Object(entry));
    }
    // JSON is YAML (1.2); written as flow YAML.
    Value::Object(doc).to_string()
}

#[tokio::test]
async fn yaml_repositories_are_stored_as_the_rest_api_stores_them() {
    let rest = start().await;
    let yaml = start().await;
    let api = Api::admin(&rest);
    for (class, key, body) in repositories() {
        let mut b = body.clone();
        b["rclass"] = json!(class);
        let r = api.create(key, b).await;
        assert_eq!(r.status, StatusCode::OK, "{key}: {}", r.text);
    }
    let (status, text) = patch_yaml(&yaml, &yaml_of(&repositories())).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    for (_, key, _) in repositories() {
        let a = rest.repository_raw(key).expect("created by REST");
        let b = yaml.repository_raw(key).expect("created by YAML");
        // Federated members name the instance's own URL, which differs between the two.
        let strip = |mut v: Value| {
            v.as_object_mut().expect("object").remove("members");
            v
        };
        assert_eq!(strip(a), strip(b), "{key}");
    }
    // An existing key is updated (merged), as a POST does.
    let (status, text) = patch_yaml(
        &yaml,
        "localRepositories:\n  py-local:\n    description: changed\n",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let r = yaml.repository_raw("py-local").expect("kept");
    assert_eq!(r["description"], "changed");
    assert_eq!(r["packageType"], "pypi");
    // `~` removes.
    let (status, text) = patch_yaml(&yaml, "localRepositories:\n  py-local: ~\n").await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(yaml.repository_raw("py-local").is_none());
}

#[tokio::test]
async fn one_invalid_entry_fails_the_whole_patch_naming_it() {
    let sim = start().await;
    let yaml = "localRepositories:\n  good-one:\n    type: generic\n  bad-one:\n    type: nosuchtype\n  good-two:\n    type: npm\n";
    let (status, text) = patch_yaml(&sim, yaml).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("Repository 'bad-one'"), "{text}");
    assert_eq!(sim.repository_count(), 0, "nothing is saved");
    // A key that exists in another class is refused too.
    let (status, _) =
        patch_yaml(&sim, "localRepositories:\n  good-one:\n    type: generic\n").await;
    assert_eq!(status, StatusCode::OK);
    let (status, text) = patch_yaml(
        &sim,
        "remoteRepositories:\n  good-one:\n    type: generic\n    url: https://example.com\n",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("Repository 'good-one'"), "{text}");
}

/// A failing patch puts back everything its valid entries changed before the invalid one:
/// an update, a deletion (and what it edited in the virtual repository aggregating the
/// deleted one) and a creation.
#[tokio::test]
async fn a_failed_patch_leaves_every_repository_as_it_was() {
    let sim = start().await;
    let setup = "localRepositories:\n  a-local:\n    type: generic\n  b-local:\n    type: generic\n    description: before\nvirtualRepositories:\n  v-virtual:\n    type: generic\n    repositories: [a-local, b-local]\n    defaultDeploymentRepo: a-local\n";
    let (status, text) = patch_yaml(&sim, setup).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let keys = ["a-local", "b-local", "v-virtual"];
    let before: Vec<Option<Value>> = keys.iter().map(|k| sim.repository_raw(k)).collect();
    assert!(before.iter().all(Option::is_some));
    let api = Api::admin(&sim);
    let list = || async {
        api.get("/artifactory/api/repositories/configurations")
            .await
            .json()
    };
    let listed = list().await;

    let failing = "localRepositories:\n  b-local:\n    description: changed\n  a-local: ~\n  c-new:\n    type: generic\n  bad-one:\n    type: nosuchtype\n";
    let (status, text) = patch_yaml(&sim, failing).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("Repository 'bad-one'"), "{text}");
    let after: Vec<Option<Value>> = keys.iter().map(|k| sim.repository_raw(k)).collect();
    assert_eq!(after, before);
    assert!(sim.repository_raw("c-new").is_none());
    assert_eq!(list().await, listed);

    // Without the invalid entry the same changes are saved, the virtual repository edited.
    let valid = failing.replace("  bad-one:\n    type: nosuchtype\n", "");
    let (status, text) = patch_yaml(&sim, &valid).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(sim.repository_raw("a-local").is_none());
    assert!(sim.repository_raw("c-new").is_some());
    let v = sim.repository_raw("v-virtual").expect("kept");
    assert_eq!(v["repositories"], json!(["b-local"]));
    assert!(v.get("defaultDeploymentRepo").is_none(), "{v}");
}

#[tokio::test]
async fn a_platform_without_yaml_repositories_refuses_the_sections() {
    let sim = start().await;
    sim.set_yaml_repositories(false);
    let (status, text) = patch_yaml(&sim, "localRepositories: {}\n").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("localRepositories"), "{text}");
    // The other descriptor sections still patch.
    let (status, text) = patch_yaml(&sim, "trashcanConfig:\n  retentionPeriodDays: 7\n").await;
    assert_eq!(status, StatusCode::OK, "{text}");
    sim.set_yaml_repositories(true);
    let (status, text) = patch_yaml(&sim, "localRepositories: {}\n").await;
    assert_eq!(status, StatusCode::OK, "{text}");
}
