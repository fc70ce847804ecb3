//! AQL item searches (`POST /artifactory/api/search/aql`) over artifacts deployed through the
//! simulator's own routes, as JFrog's REST API documents them ("AQL Execution", "Properties
//! Criteria", "Display Specific Fields", "Display Limits and Pagination").

use crate::common::{Api, Resp, start};
use jfrog_sim::Simulator;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const AQL: &str = "/artifactory/api/search/aql";

async fn aql(api: &Api, query: &str) -> Resp {
    api.text(Method::POST, AQL, "text/plain", query).await
}

async fn ok(api: &Api, query: &str) -> Value {
    let r = aql(api, query).await;
    assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text);
    r.json()
}

async fn deploy(sim: &Simulator, api: &Api, item: &str, body: &str) {
    let r = api
        .http
        .put(format!("{}/artifactory/{item}", sim.url()))
        .bearer_auth(sim.admin_token())
        .body(body.to_owned())
        .send()
        .await
        .expect("deploy");
    assert_eq!(r.status(), StatusCode::CREATED, "deploy {item}");
}

async fn sha1_of(api: &Api, item: &str) -> Value {
    api.get(&format!("/artifactory/api/storage/{item}"))
        .await
        .json()["checksums"]["sha1"]
        .clone()
}

/// Two repositories, four files, properties set through "Set Item Properties" and "Update
/// Item Properties".
async fn fixture() -> (Simulator, Api) {
    let sim = start().await;
    let api = Api::admin(&sim);
    for key in ["libs", "other"] {
        let r = api
            .create(key, json!({"rclass": "local", "packageType": "generic"}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    deploy(&sim, &api, "libs/app/1.0/app.jar", "jar-bytes").await;
    deploy(&sim, &api, "libs/app/1.0/app.pom", "pom").await;
    deploy(&sim, &api, "libs/readme.txt", "hi").await;
    deploy(&sim, &api, "other/app/1.0/app.jar", "other-jar").await;
    let r = api
        .call(
            Method::PUT,
            "/artifactory/api/storage/libs/app/1.0/app.jar?properties=build.name=app;build.number=7",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = api
        .call(
            Method::PATCH,
            "/artifactory/api/metadata/libs/readme.txt",
            Some(json!({"props": {"team": ["a", "b"]}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    (sim, api)
}

/// A client observing several files at once: `$or` over repo/path/name triples (one absent,
/// one in the repository's root, path "."), `include` with properties: each present file
/// once, its properties one entry per value, no `properties` member without properties, the
/// absent file simply not there.
#[tokio::test]
async fn or_over_triples_answers_present_files_with_properties() {
    let (_sim, api) = fixture().await;
    let query = r#"items.find({
        "$or": [
            {"$and": [{"repo": "libs"}, {"path": "app/1.0"}, {"name": "app.jar"}]},
            {"repo": "libs", "path": ".", "name": "readme.txt"},
            {"repo": "libs", "path": "app/1.0", "name": "missing.jar"},
            {"repo": {"$eq": "other"}, "path": "app/1.0", "name": "app.jar"}
        ]
    }).include("repo", "path", "name", "actual_sha1", "property")
      .sort({"$asc": ["repo", "path", "name"]})"#;
    let v = ok(&api, query).await;
    assert_eq!(
        v["results"],
        json!([
            {"repo": "libs", "path": ".", "name": "readme.txt",
             "actual_sha1": sha1_of(&api, "libs/readme.txt").await,
             "properties": [{"key": "team", "value": "a"}, {"key": "team", "value": "b"}]},
            {"repo": "libs", "path": "app/1.0", "name": "app.jar",
             "actual_sha1": sha1_of(&api, "libs/app/1.0/app.jar").await,
             "properties": [{"key": "build.name", "value": "app"},
                            {"key": "build.number", "value": "7"}]},
            {"repo": "other", "path": "app/1.0", "name": "app.jar",
             "actual_sha1": sha1_of(&api, "other/app/1.0/app.jar").await}
        ])
    );
    assert_eq!(
        v["range"],
        json!({"start_pos": 0, "end_pos": 3, "total": 3})
    );
    // Property criteria, short and operator notation.
    let v = ok(
        &api,
        r#"items.find({"@build.name": "app", "@build.number": {"$match": "7*"}}).include("name")"#,
    )
    .await;
    assert_eq!(v["results"], json!([{"name": "app.jar"}]));
}

/// Without `include`, JFrog's default item fields (AQL Execution's sample: repo, path, name,
/// type, size as a number, created, created_by, modified, modified_by, updated); folders only
/// when `type` asks for them, the repository's root being the folder "." in ".".
#[tokio::test]
async fn default_fields_and_folders() {
    let (_sim, api) = fixture().await;
    let v = ok(&api, r#"items.find({"repo": "libs", "name": "app.pom"})"#).await;
    let info = api
        .get("/artifactory/api/storage/libs/app/1.0/app.pom")
        .await
        .json();
    assert_eq!(
        v["results"],
        json!([{
            "repo": "libs", "path": "app/1.0", "name": "app.pom", "type": "file", "size": 3,
            "created": info["created"], "created_by": info["createdBy"],
            "modified": info["lastModified"], "modified_by": info["modifiedBy"],
            "updated": info["lastUpdated"]
        }])
    );
    let v = ok(
        &api,
        r#"items.find({"repo": "libs", "type": "folder"}).include("path", "name", "type")"#,
    )
    .await;
    assert_eq!(
        v["results"],
        json!([
            {"path": ".", "name": ".", "type": "folder"},
            {"path": ".", "name": "app", "type": "folder"},
            {"path": "app", "name": "1.0", "type": "folder"}
        ])
    );
    let v = ok(
        &api,
        r#"items.find({"repo": "libs", "type": "any", "depth": {"$lte": 1}}).include("name")"#,
    )
    .await;
    assert_eq!(
        v["results"],
        json!([{"name": "."}, {"name": "app"}, {"name": "readme.txt"}])
    );
}

/// `.sort`, `.offset` and `.limit`: the range counts the answered rows from `start_pos` and
/// names the limit.
#[tokio::test]
async fn sort_offset_limit_and_range() {
    let (_sim, api) = fixture().await;
    let v = ok(
        &api,
        r#"items.find().include("repo", "name").sort({"$desc": ["name"]}).limit(2)"#,
    )
    .await;
    assert_eq!(
        v["results"],
        json!([{"repo": "libs", "name": "readme.txt"}, {"repo": "libs", "name": "app.pom"}])
    );
    assert_eq!(
        v["range"],
        json!({"start_pos": 0, "end_pos": 2, "total": 2, "limit": 2})
    );
    let v = ok(
        &api,
        r#"items.find().include("repo", "name").sort({"$desc": ["name"]}).offset(2).limit(5)"#,
    )
    .await;
    assert_eq!(
        v["results"],
        json!([{"repo": "libs", "name": "app.jar"}, {"repo": "other", "name": "app.jar"}])
    );
    assert_eq!(
        v["range"],
        json!({"start_pos": 2, "end_pos": 4, "total": 2, "limit": 5})
    );
    let v = ok(
        &api,
        r#"items.find({"size": {"$gt": 2}}).include("name", "size").sort({"$asc": ["size"]})"#,
    )
    .await;
    // Both app.jar files (9 bytes) give the same row: answered once (distinct by default).
    assert_eq!(
        v["results"],
        json!([{"name": "app.pom", "size": 3}, {"name": "app.jar", "size": 9}])
    );
}

/// A syntax error answers 400 with Artifactory's error body; callers without credentials 401;
/// a caller without read permission (a non-admin: the simulator's permissions are binary)
/// sees no items; a deleted repository's items are gone.
#[tokio::test]
async fn errors_permissions_and_deleted_repositories() {
    let (sim, api) = fixture().await;
    let r = aql(&api, r#"items.find({"repo": "libs"}"#).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let msg = r.art_error();
    assert!(
        msg.starts_with(r#"Failed to parse query: items.find({"repo": "libs"}, it looks like there is syntax error near the following sub-query"#),
        "{msg}"
    );
    let r = aql(&api, r#"items.find({"colour": "red"})"#).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(r.art_error().contains("colour"), "{}", r.text);

    let anonymous = Api::with_token(&sim, None);
    assert_eq!(
        aql(&anonymous, "items.find()").await.status,
        StatusCode::UNAUTHORIZED
    );
    let reader = Api::with_token(&sim, Some(sim.issue_token(false)));
    let v = ok(&reader, "items.find()").await;
    assert_eq!(
        v,
        json!({"results": [], "range": {"start_pos": 0, "end_pos": 0, "total": 0}})
    );

    assert_eq!(
        api.delete("/artifactory/api/repositories/other")
            .await
            .status,
        StatusCode::OK
    );
    let v = ok(&api, r#"items.find({"name": "app.jar"}).include("repo")"#).await;
    assert_eq!(v["results"], json!([{"repo": "libs"}]));
}
