//! "Get Release Bundle v2 Versions" (`GET /lifecycle/api/v2/release_bundle/records/{name}`,
//! Artifactory 7.63.2+): the versions of one bundle name, whatever their status, of one
//! Release Bundles repository (the default one, a project's by `project`), paged by `offset`
//! and `limit` (default 25, at most 255) with the count of every version in `total`; a name
//! without a version there answers 404, as the read of its versions does. And "Get Release
//! Bundle v2 Names" (`GET /lifecycle/api/v2/release_bundle/names`).

use crate::common::{Api, start};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const RECORDS: &str = "/lifecycle/api/v2/release_bundle/records";

async fn bundle(api: &Api, name: &str, version: &str, project: Option<&str>) {
    let path = match project {
        Some(p) => format!("/lifecycle/api/v2/release_bundle?project={p}"),
        None => "/lifecycle/api/v2/release_bundle".to_string(),
    };
    let r = api
        .send(
            api.request(Method::POST, &path)
                .header("X-JFrog-Signing-Key-Name", "key1")
                .json(
                    &json!({"release_bundle_name": name, "release_bundle_version": version,
                       "source_type": "artifacts",
                       "source": {"artifacts": [{"path": "generic-local/a.txt"}]}}),
                ),
        )
        .await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text);
}

/// The versions of a page, in its order.
fn versions(page: &Value) -> Vec<String> {
    page["release_bundles"]
        .as_array()
        .expect("release_bundles")
        .iter()
        .map(|b| {
            b["release_bundle_version"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn the_versions_of_one_name_are_listed_per_repository() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for (name, version) in [("a", "1"), ("a", "2"), ("b", "1")] {
        bundle(&api, name, version, None).await;
    }
    bundle(&api, "t", "1", Some("team")).await;

    let a = api
        .get(&format!(
            "{RECORDS}/a?order_by=release_bundle_version&order_asc=true"
        ))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let a = a.json();
    assert_eq!(versions(&a), ["1", "2"], "{a}");
    assert_eq!(a["total"], 2, "{a}");
    // The members JFrog documents, as the read by key has them.
    let entry = a["release_bundles"][0].clone();
    let read = api.get(&format!("{RECORDS}/a/1")).await.json();
    for k in [
        "status",
        "repository_key",
        "release_bundle_name",
        "release_bundle_version",
        "service_id",
        "created_by",
        "created",
    ] {
        assert!(entry.get(k).is_some_and(|v| !v.is_null()), "{k}: {entry}");
        assert_eq!(entry[k], read[k], "{k}");
    }
    assert_eq!(entry["repository_key"], "release-bundles-v2", "{entry}");

    // A project's bundle is listed with the project (its own repository) only.
    let t = api.get(&format!("{RECORDS}/t")).await;
    assert_eq!(t.status, StatusCode::NOT_FOUND, "{}", t.text);
    let team = api.get(&format!("{RECORDS}/t?project=team")).await.json();
    assert_eq!(versions(&team), ["1"], "{team}");
    let by_repo = api
        .get(&format!(
            "{RECORDS}/t?repository_key=team-release-bundles-v2"
        ))
        .await
        .json();
    assert_eq!(versions(&by_repo), ["1"], "{by_repo}");

    // A name without a version: 404, as the read of its versions.
    let none = api.get(&format!("{RECORDS}/zzz")).await;
    assert_eq!(none.status, StatusCode::NOT_FOUND, "{}", none.text);

    // A deleted version leaves the list; the last one takes the name with it.
    for version in ["1", "2"] {
        let r = api
            .call(
                Method::DELETE,
                &format!("{RECORDS}/a/{version}?async=false"),
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
        let after = api.get(&format!("{RECORDS}/a")).await;
        if version == "1" {
            assert_eq!(versions(&after.json()), ["2"], "{}", after.text);
        } else {
            assert_eq!(after.status, StatusCode::NOT_FOUND, "{}", after.text);
        }
    }

    // The names, each with its repository and project.
    let names = api.get("/lifecycle/api/v2/release_bundle/names").await;
    assert_eq!(names.status, StatusCode::OK, "{}", names.text);
    let names = names.json();
    assert_eq!(
        names["release_bundles"],
        json!([
            {"repository_key": "release-bundles-v2", "release_bundle_name": "b",
             "project_key": "default", "project_name": "Default"},
            {"repository_key": "team-release-bundles-v2", "release_bundle_name": "t",
             "project_key": "team", "project_name": "team"},
        ]),
        "{names}"
    );
    let team = api
        .get("/lifecycle/api/v2/release_bundle/names?project=team")
        .await
        .json();
    assert_eq!(team["release_bundles"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn the_versions_are_paged_by_offset_and_limit() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for i in 0..30 {
        bundle(&api, "p", &format!("{i:02}"), None).await;
    }
    // 25 by default, with the count of every version.
    let first = api.get(&format!("{RECORDS}/p")).await.json();
    assert_eq!(first["release_bundles"].as_array().map(Vec::len), Some(25));
    assert_eq!(first["total"], 30);
    assert_eq!(
        (first["offset"].clone(), first["limit"].clone()),
        (json!(0), json!(25))
    );
    // Descending by default; ascending on request.
    let desc = api
        .get(&format!("{RECORDS}/p?order_by=release_bundle_version"))
        .await
        .json();
    assert_eq!(versions(&desc)[0], "29", "{desc}");
    let asc = api
        .get(&format!(
            "{RECORDS}/p?order_by=created&order_asc=true&limit=10&offset=0"
        ))
        .await
        .json();
    assert_eq!(versions(&asc)[0], "00", "{asc}");
    // Pages by offset: every version once.
    let mut seen = Vec::new();
    for offset in [0, 10, 20, 30] {
        let page = api
            .get(&format!(
                "{RECORDS}/p?order_by=release_bundle_version&order_asc=true&limit=10&offset={offset}"
            ))
            .await
            .json();
        assert_eq!(page["total"], 30);
        seen.extend(versions(&page));
    }
    let all: Vec<String> = (0..30).map(|i| format!("{i:02}")).collect();
    assert_eq!(seen, all);
    // At most 255 per page.
    let big = api.get(&format!("{RECORDS}/p?limit=1000")).await.json();
    assert_eq!(big["limit"], 255, "{big}");
    assert_eq!(big["release_bundles"].as_array().map(Vec::len), Some(30));
    for bad in ["limit=many", "order_by=environment"] {
        let r = api.get(&format!("{RECORDS}/p?{bad}")).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.text);
    }
}
