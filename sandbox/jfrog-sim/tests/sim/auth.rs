//! Authentication and authorisation: 401 with Artifactory's error body without valid
//! credentials, 403 for non-admin callers on admin APIs, Bearer tokens and basic auth.

use crate::common::{Api, client, start};
use base64::Engine;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn missing_and_bad_credentials_get_401_with_artifactory_body() {
    let sim = start().await;
    let anon = Api::with_token(&sim, None);
    let r = anon.get("/artifactory/api/repositories").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.art_error(), "Authentication is required");
    assert!(r.headers.get("www-authenticate").is_some());
    let bad = Api::with_token(&sim, Some("not-a-token".into()));
    let r = bad.get("/artifactory/api/system/version").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.art_error(), "Bad credentials");
    let r = bad.create("x-local", json!({"rclass": "local"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(sim.repository_count(), 0);
    // Access answers in its own error format.
    let r = bad
        .put(
            "/access/api/v1/projects/_/attach/repositories/x/proj",
            json!({}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.json()["errors"][0]["code"], "UNAUTHORIZED");
    // Ping needs no credentials.
    let r = anon.get("/artifactory/api/system/ping").await;
    assert_eq!((r.status, r.text.as_str()), (StatusCode::OK, "OK"));
    let r = anon.get("/access/api/v1/system/ping").await;
    assert_eq!((r.status, r.text.as_str()), (StatusCode::OK, "OK"));
    let r = anon.get("/xray/api/v1/system/ping").await;
    assert_eq!(r.json()["status"], "pong");
    // Xray answers in its own error format.
    let r = anon.get("/xray/api/v1/system/version").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.json()["error"], "Missing authentication");
    let r = Api::admin(&sim).get("/xray/api/v1/system/version").await;
    assert!(r.json()["xray_version"].is_string());
}

#[tokio::test]
async fn non_admin_token_gets_403_on_admin_apis_and_reads_partially() {
    let sim = start().await;
    let admin = Api::admin(&sim);
    let body = json!({"rclass": "remote", "packageType": "npm", "url": "https://registry.npmjs.org/", "password": "s3cret"});
    assert_eq!(
        admin.create("npm-remote", body).await.status,
        StatusCode::OK
    );
    let reader = Api::with_token(&sim, Some(sim.issue_token(false)));
    for r in [
        reader.create("r-local", json!({"rclass": "local"})).await,
        reader
            .post(
                "/artifactory/api/repositories/npm-remote",
                json!({"description": "x"}),
            )
            .await,
        reader
            .delete("/artifactory/api/repositories/npm-remote")
            .await,
        reader
            .get("/artifactory/api/repositories/configurations")
            .await,
    ] {
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        assert_eq!(r.art_error(), "Forbidden");
    }
    let r = reader.get("/artifactory/api/repositories").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json().as_array().map(Vec::len), Some(1));
    let partial = reader.repo("npm-remote").await.json();
    assert_eq!(partial["key"], "npm-remote");
    assert!(
        partial.get("password").is_none() && partial.get("socketTimeoutMillis").is_none(),
        "{partial}"
    );
    let r = reader.get("/artifactory/api/system/version").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["version"], "7.117.5");
    // An issued admin token is as good as the initial one, until it is revoked.
    let token = sim.issue_token(true);
    let admin2 = Api::with_token(&sim, Some(token.clone()));
    let all = "/artifactory/api/repositories/configurations";
    assert_eq!(admin2.get(all).await.status, StatusCode::OK);
    assert!(sim.revoke_token(&token));
    let r = admin2.get(all).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.art_error(), "Bad credentials");
}

#[tokio::test]
async fn basic_auth_with_password_or_token() {
    let sim = start().await;
    sim.basic_user("alice", "alice-pw", true);
    sim.basic_user("bob", "bob-pw", false);
    let http = client();
    let url = format!("{}/artifactory/api/repositories/configurations", sim.url());
    let s = |r: reqwest::Response| r.status();
    assert_eq!(
        s(http
            .get(&url)
            .basic_auth("alice", Some("alice-pw"))
            .send()
            .await
            .unwrap()),
        StatusCode::OK
    );
    assert_eq!(
        s(http
            .get(&url)
            .basic_auth("alice", Some("wrong"))
            .send()
            .await
            .unwrap()),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        s(http
            .get(&url)
            .basic_auth("bob", Some("bob-pw"))
            .send()
            .await
            .unwrap()),
        StatusCode::FORBIDDEN
    );
    let token = sim.admin_token();
    assert_eq!(
        s(http
            .get(&url)
            .basic_auth("anyone", Some(&token))
            .send()
            .await
            .unwrap()),
        StatusCode::OK
    );
    // Tokens look like JFrog access tokens (JWT with subject and scope).
    let payload = token.split('.').nth(1).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["scp"], "applied-permissions/admin");
    assert!(claims["sub"].as_str().unwrap().ends_with("/users/admin"));
}

#[tokio::test]
async fn a_configured_admin_token_is_accepted_and_redacted() {
    let token = "fixed-admin-token-for-restarts";
    let sim = crate::common::start_with(jfrog_sim::SimConfig {
        admin_token: Some(token.into()),
        ..Default::default()
    })
    .await;
    assert_eq!(sim.admin_token(), token);
    let api = Api::with_token(&sim, Some(token.into()));
    assert_eq!(
        api.get("/artifactory/api/repositories/configurations")
            .await
            .status,
        StatusCode::OK
    );
    let cfg = jfrog_sim::SimConfig {
        admin_token: Some(token.into()),
        ..Default::default()
    };
    assert!(!format!("{cfg:?}").contains(token));
}

#[tokio::test]
async fn env_file_has_url_and_admin_token() {
    let sim = start().await;
    let dir = std::env::temp_dir().join(format!("jfrog-sim-env-{}", uuid::Uuid::new_v4()));
    sim.write_env_file(&dir).unwrap();
    let text = std::fs::read_to_string(dir.join("jfrog.env")).unwrap();
    assert_eq!(
        text,
        format!(
            "JFROG_URL={}\nJFROG_ACCESS_TOKEN={}\n",
            sim.url(),
            sim.admin_token()
        )
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("jfrog.env"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // The simulator's Debug output shows no token.
    assert!(!format!("{sim:?}").contains(&sim.admin_token()));
}
