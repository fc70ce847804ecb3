//! SaaS mode (`SimConfig::saas`, `sandbox jfrog --saas`, `sandbox up --jfrog-saas`): the
//! simulator answers as JFrog Cloud does (issue 26). Sources: JFrog Cloud's answers quoted in
//! jfrog/terraform-provider-artifactory issues #452 and #550 and pull request #95, and
//! jfrog/terraform-provider-project issue #221.

use crate::common::{Api, start, start_with};
use jfrog_sim::SimConfig;
use reqwest::{Method, StatusCode};
use serde_json::json;

const NO_ENDPOINT: &str = "Artifactory Online does not support accessing this API endpoint, please contact support@jfrog.com for further assistance if required.";

async fn saas() -> jfrog_sim::Simulator {
    start_with(SimConfig {
        saas: true,
        ..SimConfig::default()
    })
    .await
}

#[tokio::test]
async fn cloud_refuses_the_system_configuration_descriptor() {
    let sim = saas().await;
    let api = Api::admin(&sim);
    for (method, path) in [
        (Method::GET, "/artifactory/api/system/configuration"),
        (Method::POST, "/artifactory/api/system/configuration"),
        (Method::PATCH, "/artifactory/api/system/configuration"),
        (
            Method::GET,
            "/artifactory/api/system/configuration/webServer",
        ),
    ] {
        let r = api.call(method.clone(), path, Some(json!({}))).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{method} {path}");
        assert_eq!(r.art_error(), NO_ENDPOINT, "{method} {path}");
    }
    let r = api.get("/artifactory/api/system/licenses").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.art_error()
            .starts_with("Artifactory Online does not require license"),
        "{}",
        r.text
    );
    // Everything else answers as on a self-hosted platform.
    let r = api
        .create(
            "c-local",
            json!({"rclass": "local", "packageType": "generic"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.get("/artifactory/api/system/ping").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn self_hosted_serves_the_descriptor() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api.get("/artifactory/api/system/configuration").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.starts_with("<?xml"), "{}", r.text);
}
