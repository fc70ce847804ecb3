//! "Get Release Bundle v2 Versions in a Specific Environment" (`GET
//! /lifecycle/api/v2/promotion/release-bundles-by-environment/{environment}`, Artifactory
//! 7.107.1+): the bundle versions whose current location is one environment, of one Release
//! Bundles repository (the default one, a project's by `project`), paged by `offset` and
//! `limit` (default 25, at most 255) with the count of every version in `total`.

use crate::common::{Api, start};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const BY_ENV: &str = "/lifecycle/api/v2/promotion/release-bundles-by-environment";

async fn signed(api: &Api, path: &str, body: Value) -> Value {
    let r = api
        .send(
            api.request(Method::POST, path)
                .header("X-JFrog-Signing-Key-Name", "key1")
                .json(&body),
        )
        .await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text);
    r.json()
}

async fn bundle(api: &Api, name: &str, version: &str, project: Option<&str>) {
    let path = match project {
        Some(p) => format!("/lifecycle/api/v2/release_bundle?project={p}"),
        None => "/lifecycle/api/v2/release_bundle".to_string(),
    };
    signed(
        api,
        &path,
        json!({"release_bundle_name": name, "release_bundle_version": version,
               "source_type": "artifacts",
               "source": {"artifacts": [{"path": "generic-local/a.txt"}]}}),
    )
    .await;
}

async fn promote(api: &Api, name: &str, version: &str, env: &str) -> i64 {
    promote_in(api, name, version, env, None).await
}

/// Promote a version of a project's bundle (`project`: its Release Bundles repository).
async fn promote_in(api: &Api, name: &str, version: &str, env: &str, project: Option<&str>) -> i64 {
    let query = project.map(|p| format!("?project={p}")).unwrap_or_default();
    let r = signed(
        api,
        &format!("/lifecycle/api/v2/promotion/records/{name}/{version}{query}"),
        json!({"environment": env}),
    )
    .await;
    r["created_millis"].as_i64().expect("created_millis")
}

/// `name:version` of each entry of a page.
fn versions(page: &Value) -> Vec<String> {
    let mut v: Vec<String> = page["promotions"]
        .as_array()
        .expect("promotions")
        .iter()
        .map(|p| {
            format!(
                "{}:{}",
                p["release_bundle_name"].as_str().unwrap_or_default(),
                p["release_bundle_version"].as_str().unwrap_or_default()
            )
        })
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn promotions_are_listed_per_environment_by_current_location() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for (name, version) in [("a", "1"), ("a", "2"), ("b", "1"), ("c", "1")] {
        bundle(&api, name, version, None).await;
    }
    bundle(&api, "t", "1", Some("team")).await;
    let a1 = promote(&api, "a", "1", "DEV").await;
    promote(&api, "a", "2", "DEV").await;
    promote(&api, "b", "1", "PROD").await;
    promote(&api, "c", "1", "DEV").await;
    // A project's bundle is found only with its project.
    let without = api
        .send(
            api.request(Method::POST, "/lifecycle/api/v2/promotion/records/t/1")
                .header("X-JFrog-Signing-Key-Name", "key1")
                .json(&json!({"environment": "DEV"})),
        )
        .await;
    assert_eq!(without.status, StatusCode::NOT_FOUND, "{}", without.text);
    promote_in(&api, "t", "1", "DEV", Some("team")).await;
    // c:1 moves on to PROD: its current location is PROD.
    promote(&api, "c", "1", "PROD").await;

    let dev = api.get(&format!("{BY_ENV}/DEV")).await;
    assert_eq!(dev.status, StatusCode::OK, "{}", dev.text);
    let dev = dev.json();
    assert_eq!(versions(&dev), ["a:1", "a:2"], "{dev}");
    assert_eq!(dev["total"], 2, "{dev}");
    let a = dev["promotions"]
        .as_array()
        .and_then(|l| l.iter().find(|p| p["release_bundle_version"] == "1"))
        .expect("a:1")
        .clone();
    // The members JFrog documents, the promotion's times those of its record.
    assert_eq!(a["environment"], "DEV", "{a}");
    assert_eq!(a["created_millis"], a1, "{a}");
    assert!(
        a["created"].as_str().is_some_and(|t| t.contains('T')),
        "{a}"
    );
    assert_eq!(a["repository_key"], "release-bundles-v2", "{a}");
    assert_eq!(a["project_key"], "default", "{a}");
    assert_eq!(a["created_by"], "admin", "{a}");

    let prod = api.get(&format!("{BY_ENV}/PROD")).await.json();
    assert_eq!(versions(&prod), ["b:1", "c:1"], "{prod}");
    // A project's bundles are listed with the project (its own repository).
    let team = api.get(&format!("{BY_ENV}/DEV?project=team")).await.json();
    assert_eq!(versions(&team), ["t:1"], "{team}");
    assert_eq!(team["promotions"][0]["project_key"], "team", "{team}");
    let by_repo = api
        .get(&format!(
            "{BY_ENV}/DEV?repository_key=team-release-bundles-v2"
        ))
        .await
        .json();
    assert_eq!(versions(&by_repo), ["t:1"], "{by_repo}");

    // An environment without promotions: an empty list.
    let none = api.get(&format!("{BY_ENV}/QA")).await;
    assert_eq!(none.status, StatusCode::OK, "{}", none.text);
    assert_eq!(none.json()["promotions"], json!([]), "{}", none.text);
    assert_eq!(none.json()["total"], 0, "{}", none.text);

    // A deleted promotion moves the version back to where it was before.
    let c_prod = api.get(&format!("{BY_ENV}/PROD")).await.json()["promotions"]
        .as_array()
        .and_then(|l| l.iter().find(|p| p["release_bundle_name"] == "c"))
        .map(|p| p["created_millis"].clone())
        .expect("c in PROD");
    let r = api
        .call(
            Method::DELETE,
            &format!("/lifecycle/api/v2/promotion/records/c/1/{c_prod}"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let dev = api.get(&format!("{BY_ENV}/DEV")).await.json();
    assert_eq!(versions(&dev), ["a:1", "a:2", "c:1"], "{dev}");
}

#[tokio::test]
async fn the_list_is_paged_by_offset_and_limit() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for i in 0..30 {
        let v = format!("{i:02}");
        bundle(&api, "p", &v, None).await;
        promote(&api, "p", &v, "DEV").await;
    }
    // 25 by default, with the count of every version.
    let first = api.get(&format!("{BY_ENV}/DEV")).await.json();
    assert_eq!(first["promotions"].as_array().map(Vec::len), Some(25));
    assert_eq!(first["total"], 30);
    assert_eq!(
        (first["offset"].clone(), first["limit"].clone()),
        (json!(0), json!(25))
    );
    // Newest first by default; ascending on request.
    let asc = api
        .get(&format!(
            "{BY_ENV}/DEV?order_by=created&order_asc=true&limit=10&offset=0"
        ))
        .await
        .json();
    assert_eq!(
        asc["promotions"][0]["release_bundle_version"], "00",
        "{asc}"
    );
    assert_eq!(
        first["promotions"][0]["release_bundle_version"], "29",
        "{first}"
    );
    // Pages by offset: every version once.
    let mut seen = Vec::new();
    for offset in [0, 10, 20, 30] {
        let page = api
            .get(&format!(
                "{BY_ENV}/DEV?order_by=release_bundle_version&order_asc=true&limit=10&offset={offset}"
            ))
            .await
            .json();
        assert_eq!(page["total"], 30);
        seen.extend(versions(&page));
    }
    let all: Vec<String> = (0..30).map(|i| format!("p:{i:02}")).collect();
    assert_eq!(seen, all);
    // At most 255 per page.
    let big = api.get(&format!("{BY_ENV}/DEV?limit=1000")).await.json();
    assert_eq!(big["limit"], 255, "{big}");
    assert_eq!(big["promotions"].as_array().map(Vec::len), Some(30));
    let bad = api.get(&format!("{BY_ENV}/DEV?limit=many")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
}
