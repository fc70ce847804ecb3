//! Answers and requests as JFrog documents them (issue 26). Each test names its source.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::json;

/// JFrog REST API "Deploy Artifact", "File Info", "Folder Info", "Retrieve Artifact", "Set
/// Item Properties": a deploy at `repo/a/b/file` creates the folders `a` and `a/b`, which
/// carry folder info and properties; file info has every checksum and the modification
/// members; a download answers the content.
#[tokio::test]
async fn deploy_creates_parent_folders_with_info_and_properties() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create(
            "files",
            json!({"rclass": "local", "packageType": "generic"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let put = api
        .http
        .put(format!("{}/artifactory/files/a/b/f.txt", sim.url()))
        .bearer_auth(sim.admin_token())
        .body("abc")
        .send()
        .await
        .expect("deploy");
    assert_eq!(put.status(), StatusCode::CREATED);
    let file = api
        .get("/artifactory/api/storage/files/a/b/f.txt")
        .await
        .json();
    // md5/sha1/sha256 of "abc".
    assert_eq!(file["checksums"]["md5"], "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(
        file["checksums"]["sha1"],
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
    assert_eq!(
        file["checksums"]["sha256"],
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(file["originalChecksums"], file["checksums"]);
    for m in [
        "created",
        "createdBy",
        "lastModified",
        "modifiedBy",
        "lastUpdated",
        "downloadUri",
    ] {
        assert!(file[m].is_string(), "{m} in {file}");
    }
    assert_eq!(file["size"], "3");
    let a = api.get("/artifactory/api/storage/files/a").await.json();
    assert_eq!(a["children"], json!([{"uri": "/b", "folder": true}]));
    assert_eq!(a["path"], "/a");
    let root = api.get("/artifactory/api/storage/files").await.json();
    assert_eq!(root["children"], json!([{"uri": "/a", "folder": true}]));
    let r = api
        .call(
            reqwest::Method::PUT,
            "/artifactory/api/storage/files/a/b?properties=team=ci",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let p = api
        .get("/artifactory/api/storage/files/a/b?properties")
        .await
        .json();
    assert_eq!(p["properties"], json!({"team": ["ci"]}));
    let d = api.get("/artifactory/files/a/b/f.txt").await;
    assert_eq!((d.status, d.text.as_str()), (StatusCode::OK, "abc"));
    assert_eq!(
        d.headers["x-checksum-sha1"],
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
    // Deleting a folder removes what is below it.
    assert_eq!(
        api.delete("/artifactory/files/a").await.status,
        StatusCode::NO_CONTENT
    );
    let gone = api.get("/artifactory/api/storage/files/a/b/f.txt").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

/// Artifactory's error body (`{"errors":[{"status","message"}]}`) for an `/api/...` path it
/// does not serve, whatever the method: never "Repository 'api' not found" or an empty 405.
#[tokio::test]
async fn unserved_api_paths_answer_artifactorys_404() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for m in [
        reqwest::Method::GET,
        reqwest::Method::PUT,
        reqwest::Method::POST,
        reqwest::Method::DELETE,
    ] {
        let r = api
            .call(m.clone(), "/artifactory/api/no/such/thing", None)
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{m} {}", r.text);
        assert_eq!(r.art_error(), "Not Found");
    }
}

/// Security Configuration JSON (User) and Access "Create User": `disableUIAccess` /
/// `disable_ui_access` default to false; Access answers 201 with the user; REST API "Delete
/// User" answers "User 'NAME' has been removed successfully.".
#[tokio::test]
async fn users_default_ui_access_and_answer_as_documented() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .put(
            "/artifactory/api/security/users/bob",
            json!({"email": "bob@example.org", "password": "Passw0rdXY"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let u = api.get("/artifactory/api/security/users/bob").await.json();
    assert_eq!(u["disableUIAccess"], false);
    let r = api
        .post(
            "/access/api/v2/users",
            json!({"username": "carol", "email": "carol@example.org", "password": "Passw0rdXY"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let body = r.json();
    assert_eq!(body["username"], "carol");
    assert_eq!(body["disable_ui_access"], false);
    assert!(body.get("password").is_none());
    let r = api.delete("/artifactory/api/security/users/bob").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.text, "User 'bob' has been removed successfully.");
}

/// One state per platform: groups made through `/api/security/groups` are Access groups
/// (`/access/api/v2/groups`), the built-in `readers` included, and the other way round;
/// `includeUsers=True` parses as Artifactory parses booleans (case-insensitive "true").
#[tokio::test]
async fn groups_are_one_store_for_both_apis() {
    let sim = start().await;
    let api = Api::admin(&sim);
    assert_eq!(
        api.get("/access/api/v2/groups/readers").await.status,
        StatusCode::OK
    );
    let r = api
        .put(
            "/artifactory/api/security/groups/devs",
            json!({"description": "developers", "autoJoin": true, "bogus": 1}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let g = api.get("/access/api/v2/groups/devs").await.json();
    assert_eq!(
        (g["description"].as_str(), g["auto_join"].as_bool()),
        (Some("developers"), Some(true))
    );
    assert!(g.get("bogus").is_none(), "unknown members are dropped: {g}");
    let r = api
        .post(
            "/access/api/v2/groups",
            json!({"name": "ops", "members": ["admin"]}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let legacy = api
        .get("/artifactory/api/security/groups/ops?includeUsers=True")
        .await
        .json();
    assert_eq!(legacy["userNames"], json!(["admin"]));
    let without = api.get("/artifactory/api/security/groups/ops").await.json();
    assert!(without.get("userNames").is_none());
    assert_eq!(
        api.delete("/access/api/v2/groups/devs").await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        api.get("/artifactory/api/security/groups/devs")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

/// REST API Permission Targets: v2 `PUT /api/v2/security/permissions/{name}` is "Create or
/// Replace"; the v1 API (`/api/security/permissions/{name}`, Security Configuration JSON
/// PermissionTarget with one-letter permissions) reads and writes the same targets.
#[tokio::test]
async fn permission_targets_v1_and_v2_share_one_store() {
    let sim = start().await;
    let api = Api::admin(&sim);
    api.create("libs", json!({"rclass": "local", "packageType": "generic"}))
        .await;
    let v2 = json!({"name": "p2", "repo": {"repositories": ["libs"],
        "actions": {"groups": {"readers": ["read", "write"]}}}, "extra": true});
    let r = api
        .put("/artifactory/api/v2/security/permissions/p2", v2.clone())
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .put("/artifactory/api/v2/security/permissions/p2", v2)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api
        .get("/artifactory/api/v2/security/permissions/p2")
        .await
        .json();
    assert!(got.get("extra").is_none(), "{got}");
    let v1 = api
        .get("/artifactory/api/security/permissions/p2")
        .await
        .json();
    assert_eq!(v1["repositories"], json!(["libs"]));
    assert_eq!(v1["includesPattern"], "**");
    assert_eq!(v1["principals"]["groups"]["readers"], json!(["r", "w"]));
    let r = api
        .put(
            "/artifactory/api/security/permissions/p1",
            json!({"name": "p1", "includesPattern": "a/**,b/**", "repositories": ["libs"],
                   "principals": {"users": {"admin": ["r", "d", "m"]}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let got = api
        .get("/artifactory/api/v2/security/permissions/p1")
        .await
        .json();
    assert_eq!(got["repo"]["include-patterns"], json!(["a/**", "b/**"]));
    assert_eq!(
        got["repo"]["actions"]["users"]["admin"],
        json!(["read", "delete", "manage"])
    );
    let r = api.delete("/artifactory/api/security/permissions/p1").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        api.get("/artifactory/api/v2/security/permissions/p1")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

/// Access "Create Token": the documented request is form-urlencoded (`-d username=...`).
#[tokio::test]
async fn tokens_accept_form_bodies() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .http
        .post(format!("{}/access/api/v1/tokens", sim.url()))
        .bearer_auth(sim.admin_token())
        .header("content-type", "application/x-www-form-urlencoded")
        .body("username=admin&expires_in=60&refreshable=True&scope=applied-permissions%2Fuser")
        .send()
        .await
        .expect("token request");
    assert_eq!(r.status(), StatusCode::OK);
    let v: serde_json::Value = r.json().await.expect("JSON");
    assert_eq!(v["expires_in"], 60);
    assert!(v["refresh_token"].is_string(), "{v}");
}

/// Repository Configuration JSON: Artifactory keeps only the typed configuration of the
/// class and package type; a member the type lacks (`terraformType: "MODULE"` on Maven,
/// as pyartifactory sends it, or a misspelling) is dropped, not validated or echoed.
#[tokio::test]
async fn repository_members_the_type_lacks_are_dropped() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create(
            "mvn",
            json!({"rclass": "local", "packageType": "maven", "terraformType": "MODULE",
                   "descripton": "typo"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api.repo("mvn").await.json();
    assert!(
        got.get("terraformType").is_none() && got.get("descripton").is_none(),
        "{got}"
    );
}
