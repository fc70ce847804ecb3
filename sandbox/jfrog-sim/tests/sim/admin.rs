//! Request counts per route and the admin HTTP API under /__sim.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::json;

const REPO: &str = "/artifactory/api/repositories/{key}";

#[tokio::test]
async fn request_counts_per_route_template() {
    let sim = start().await;
    let api = Api::admin(&sim);
    api.create("a-local", json!({"rclass": "local"})).await;
    api.create("b-local", json!({"rclass": "local"})).await;
    api.repo("a-local").await;
    api.repo("missing").await;
    api.get("/artifactory/api/repositories?type=local").await;
    api.get("/artifactory/api/repositories/configurations")
        .await;
    api.get("/nothing/here").await;
    Api::with_token(&sim, None).repo("a-local").await; // 401s are counted too
    assert_eq!(sim.request_count("PUT", REPO), 2);
    assert_eq!(sim.request_count("get", REPO), 3);
    assert_eq!(sim.request_count("GET", "/artifactory/api/repositories"), 1);
    assert_eq!(
        sim.request_count("GET", "/artifactory/api/repositories/configurations"),
        1
    );
    let all = sim.request_counts();
    assert_eq!(all.get("GET /nothing/here"), Some(&1));
    assert_eq!(all.values().sum::<u64>(), 8, "{all:?}");
    // The admin API is not counted.
    let r = api.get("/__sim/requests").await.json();
    assert_eq!(r[format!("PUT {REPO}")], 2);
    assert_eq!(sim.request_counts().values().sum::<u64>(), 8);
    assert_eq!(
        api.delete("/__sim/requests").await.status,
        StatusCode::NO_CONTENT
    );
    assert!(sim.request_counts().is_empty());
    sim.reset_counts();
}

#[tokio::test]
async fn admin_http_api() {
    let sim = start().await;
    let api = Api::with_token(&sim, None);
    assert_eq!(api.get("/__sim/health").await.text, "OK");
    // Faults.
    let id = api.post("/__sim/faults", json!({"method": "GET", "pathPrefix": "/artifactory/api/system/ping", "errorRate": 1.0, "status": 429, "retryAfterMs": 2000, "times": 1})).await.json()["id"].as_u64().unwrap();
    let faults = api.get("/__sim/faults").await.json();
    assert_eq!(faults[0]["id"], id);
    assert_eq!(faults[0]["fault"]["status"], 429);
    let r = api.get("/artifactory/api/system/ping").await;
    assert_eq!(
        (
            r.status,
            r.headers.get("retry-after").unwrap().to_str().unwrap()
        ),
        (StatusCode::TOO_MANY_REQUESTS, "2")
    );
    assert_eq!(
        api.get("/artifactory/api/system/ping").await.status,
        StatusCode::OK
    );
    let id = api
        .post("/__sim/faults", json!({"errorRate": 1.0, "status": 500}))
        .await
        .json()["id"]
        .as_u64()
        .unwrap();
    assert_eq!(
        api.get("/artifactory/api/system/ping").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert_eq!(
        api.delete(&format!("/__sim/faults/{id}")).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        api.delete(&format!("/__sim/faults/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    api.post("/__sim/faults", json!({"errorRate": 1.0})).await;
    assert_eq!(
        api.delete("/__sim/faults").await.status,
        StatusCode::NO_CONTENT
    );
    assert!(sim.faults().is_empty());
    // Configuration.
    let c = api
        .put(
            "/__sim/config",
            json!({"descriptorMergeEmulation": false, "writeLatencyMs": 20}),
        )
        .await
        .json();
    assert_eq!(
        (
            c["descriptorMergeEmulation"].clone(),
            c["writeLatencyMs"].clone()
        ),
        (json!(false), json!(20))
    );
    assert_eq!(api.get("/__sim/config").await.json()["url"], sim.url());
    // Tokens and users.
    let token = api
        .post("/__sim/tokens", json!({"admin": false}))
        .await
        .json()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let reader = Api::with_token(&sim, Some(token));
    assert_eq!(
        reader.get("/artifactory/api/repositories").await.status,
        StatusCode::OK
    );
    assert_eq!(
        reader
            .create("x-local", json!({"rclass": "local"}))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let revoke = json!({"token": reader.token.clone().unwrap()});
    let r = api.post("/__sim/tokens/revoke", revoke.clone()).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = api.post("/__sim/tokens/revoke", revoke).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = reader.get("/artifactory/api/repositories").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        api.put(
            "/__sim/users/carol",
            json!({"password": "pw", "admin": true})
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    let r = api
        .http
        .get(format!(
            "{}/artifactory/api/repositories/configurations",
            sim.url()
        ))
        .basic_auth("carol", Some("pw"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // Direct state access.
    assert_eq!(
        api.put(
            "/__sim/repositories/raw-local",
            json!({"rclass": "local", "password": "p"})
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        api.get("/__sim/repositories/raw-local").await.json()["password"],
        "p"
    );
    assert_eq!(
        Api::admin(&sim).repo("raw-local").await.status,
        StatusCode::OK
    );
    assert_eq!(
        api.delete("/__sim/repositories/raw-local").await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        api.get("/__sim/repositories/raw-local").await.status,
        StatusCode::NOT_FOUND
    );
    assert!(sim.request_counts().keys().all(|k| !k.contains("__sim")));
}
