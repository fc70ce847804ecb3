//! Fault injection over HTTP: latency, error rates with a chosen status, 429 with
//! Retry-After, "commit then drop the connection", limits, and reproducibility by seed.

use std::time::{Duration, Instant};

use crate::common::{Api, client, start, start_with};
use jfrog_sim::{Fault, SimConfig};
use reqwest::StatusCode;
use serde_json::json;

const REPOS: &str = "/artifactory/api/repositories";

#[tokio::test]
async fn latency_delays_matching_requests_only() {
    let sim = start().await;
    let api = Api::admin(&sim);
    sim.add_fault(
        Fault::latency(
            REPOS,
            Duration::from_millis(300),
            Duration::from_millis(100),
        )
        .method("GET"),
    );
    // A lower bound, not a performance assertion: the answer cannot come before the delay.
    let t = Instant::now();
    assert_eq!(api.get(REPOS).await.status, StatusCode::OK);
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(sim.faults().len(), 1);
    // Other methods and paths are not matched.
    assert_eq!(
        api.create("x-local", json!({"rclass": "local"}))
            .await
            .status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn error_faults_answer_the_status_with_the_service_body() {
    let sim = start().await;
    let api = Api::admin(&sim);
    sim.add_fault(Fault::error(REPOS, 503, 1.0).method("PUT").times(2));
    for _ in 0..2 {
        let r = api.create("x-local", json!({"rclass": "local"})).await;
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.art_error(), "Service Unavailable");
    }
    assert_eq!(
        sim.repository_count(),
        0,
        "a failed request changes nothing"
    );
    assert!(sim.faults().is_empty(), "the fault is used up");
    assert_eq!(
        api.create("x-local", json!({"rclass": "local"}))
            .await
            .status,
        StatusCode::OK
    );
    // Access paths get Access's error format, Xray paths Xray's.
    sim.add_fault(Fault::error("/access/", 500, 1.0).times(1));
    let r = api.get("/access/api/v1/system/ping").await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(r.json()["errors"][0]["code"], "INTERNAL_SERVER_ERROR");
    sim.add_fault(Fault::error("/xray/", 502, 1.0).times(1));
    let r = api.get("/xray/api/v1/system/ping").await;
    assert_eq!(r.status, StatusCode::BAD_GATEWAY);
    assert_eq!(r.json()["error"], "Bad Gateway");
}

#[tokio::test]
async fn rate_limit_sends_retry_after() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let id = sim.add_fault(Fault::rate_limit(REPOS, Duration::from_millis(1500), 1.0));
    let r = api.get(REPOS).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        r.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("2")
    );
    assert_eq!(r.art_error(), "Too Many Requests");
    assert!(sim.remove_fault(id));
    assert!(!sim.remove_fault(id));
    assert_eq!(api.get(REPOS).await.status, StatusCode::OK);
}

#[tokio::test]
async fn drop_after_commit_commits_and_loses_the_answer() {
    let sim = start().await;
    let api = Api::admin(&sim);
    sim.add_fault(Fault::drop_after_commit("PUT", REPOS).times(1));
    let err = client()
        .put(format!("{}{REPOS}/lost-local", sim.url()))
        .bearer_auth(sim.admin_token())
        .json(&json!({"rclass": "local"}))
        .send()
        .await;
    assert!(err.is_err(), "the answer must be lost: {err:?}");
    assert!(
        sim.repository("lost-local").is_some(),
        "but the write was committed"
    );
    // A retried create now fails as JFrog would: the key exists.
    let r = api.create("lost-local", json!({"rclass": "local"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.art_error()
            .ends_with("Case insensitive repository key already exists")
    );
    // A failing request is not dropped (nothing was committed).
    sim.add_fault(Fault::drop_after_commit("PUT", REPOS).times(1));
    let r = api.create("lost-local", json!({"rclass": "local"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

async fn pattern(seed: u64) -> Vec<u16> {
    let sim = start_with(SimConfig {
        seed,
        ..SimConfig::default()
    })
    .await;
    let api = Api::admin(&sim);
    sim.add_fault(Fault::error(REPOS, 500, 0.5));
    let mut out = Vec::new();
    for _ in 0..40 {
        out.push(api.get(REPOS).await.status.as_u16());
    }
    out
}

#[tokio::test]
async fn faults_are_reproducible_by_seed() {
    let a = pattern(42).await;
    assert_eq!(a, pattern(42).await);
    assert_ne!(a, pattern(43).await);
    let errors = a.iter().filter(|s| **s == 500).count();
    assert!((5..=35).contains(&errors), "{errors} of 40 at rate 0.5");
}
