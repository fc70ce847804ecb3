//! Start, create, read, delete: the simulator's basic round trip over HTTP.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn create_read_delete_round_trip() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api.get("/artifactory/api/system/ping").await;
    assert_eq!((r.status, r.text.as_str()), (StatusCode::OK, "OK"));
    let r = api
        .create(
            "libs-local",
            json!({"rclass": "local", "packageType": "maven"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.text, "Successfully created repository 'libs-local'");
    let version = r
        .headers
        .get("x-jfrog-version")
        .and_then(|v| v.to_str().ok());
    assert_eq!(version, Some("Artifactory/7.117.5 71175900"));
    let got = api.repo("libs-local").await.json();
    assert_eq!(got["key"], "libs-local");
    assert_eq!(got["rclass"], "local");
    assert_eq!(got["repoLayoutRef"], "maven-2-default");
    assert_eq!(got["checksumPolicyType"], "client-checksums");
    let r = api.delete("/artifactory/api/repositories/libs-local").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(api.repo("libs-local").await.status, StatusCode::NOT_FOUND);
    sim.shutdown().await;
}
