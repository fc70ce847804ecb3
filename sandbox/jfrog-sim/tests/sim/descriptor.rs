//! Descriptor-merge emulation: overlapping configuration writes fail with HTTP 500 and
//! "Could not merge and save new descriptor"; serialised writes never do.

use std::time::Duration;

use crate::common::{Api, start_with};
use jfrog_sim::SimConfig;
use reqwest::StatusCode;
use serde_json::json;

fn cfg(emulation: bool) -> SimConfig {
    SimConfig {
        descriptor_merge_emulation: emulation,
        write_latency: Duration::from_millis(800),
        ..SimConfig::default()
    }
}

/// Waits until the simulator has seen `n` requests of a route (the first write is in flight).
async fn wait_for(sim: &jfrog_sim::Simulator, method: &str, n: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while sim.request_count(method, "/artifactory/api/repositories/{key}") < n {
        assert!(
            std::time::Instant::now() < deadline,
            "request never arrived"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_write_started_while_another_is_in_flight_fails() {
    let sim = start_with(cfg(true)).await;
    let api = Api::admin(&sim);
    let first = api.create("first-local", json!({"rclass": "local"}));
    let second = async {
        wait_for(&sim, "PUT", 1).await;
        api.create("second-local", json!({"rclass": "local"})).await
    };
    let (a, b) = tokio::join!(first, second);
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert_eq!(b.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", b.text);
    assert!(
        b.art_error()
            .starts_with("Could not merge and save new descriptor")
    );
    assert!(sim.repository("second-local").is_none());
    // An update overlapping a delete: the later one fails.
    let path = "/artifactory/api/repositories/first-local";
    let update = api.post(path, json!({"description": "x"}));
    let delete = async {
        wait_for(&sim, "POST", 1).await;
        api.delete(path).await
    };
    let (u, d) = tokio::join!(update, delete);
    assert_eq!(
        (u.status, d.status),
        (StatusCode::OK, StatusCode::INTERNAL_SERVER_ERROR),
        "{} {}",
        u.text,
        d.text
    );
    assert_eq!(sim.repository("first-local").unwrap()["description"], "x");
}

async fn concurrent_creates(api: &Api, n: usize) -> Vec<(StatusCode, String)> {
    let futs = (0..n).map(|i| async move {
        let r = api
            .create(&format!("c{i}-local"), json!({"rclass": "local"}))
            .await;
        (r.status, r.text)
    });
    futures::future::join_all(futs).await
}

#[tokio::test]
async fn overlapping_writes_fail_with_merge_error() {
    // A long write window so that concurrent requests overlap even on a loaded machine.
    let sim = start_with(SimConfig {
        write_latency: Duration::from_secs(2),
        ..cfg(true)
    })
    .await;
    let api = Api::admin(&sim);
    let results = concurrent_creates(&api, 8).await;
    let ok = results.iter().filter(|(s, _)| *s == StatusCode::OK).count();
    let failed: Vec<_> = results
        .iter()
        .filter(|(s, _)| *s != StatusCode::OK)
        .collect();
    assert!(ok >= 1, "the first write to commit succeeds");
    assert!(!failed.is_empty(), "overlapping writes fail: {results:?}");
    for (status, text) in &failed {
        assert_eq!(*status, StatusCode::INTERNAL_SERVER_ERROR);
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["errors"][0]["status"], 500);
        assert!(
            v["errors"][0]["message"]
                .as_str()
                .unwrap()
                .starts_with("Could not merge and save new descriptor")
        );
    }
    assert_eq!(sim.repository_count(), ok, "failed writes stored nothing");
}

#[tokio::test]
async fn serialised_writes_and_disabled_emulation_never_fail() {
    let sim = start_with(SimConfig {
        write_latency: Duration::from_millis(100),
        ..cfg(true)
    })
    .await;
    let api = Api::admin(&sim);
    for i in 0..4 {
        let r = api
            .create(&format!("s{i}-local"), json!({"rclass": "local"}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    // Reads never conflict with a write in flight.
    let path = "/artifactory/api/repositories/s0-local";
    let (w, r) = tokio::join!(
        api.post(path, json!({"description": "d"})),
        api.repo("s1-local")
    );
    assert_eq!((w.status, r.status), (StatusCode::OK, StatusCode::OK));
    sim.set_descriptor_merge_emulation(false);
    let results = concurrent_creates(&api, 8).await;
    assert!(
        results.iter().all(|(s, _)| *s == StatusCode::OK),
        "{results:?}"
    );
    assert_eq!(sim.repository_count(), 12);
}

#[tokio::test]
async fn invalid_writes_are_refused_before_the_descriptor_merge() {
    let sim = start_with(cfg(true)).await;
    let api = Api::admin(&sim);
    let valid = api.create("valid-local", json!({"rclass": "local"}));
    let invalid = async {
        wait_for(&sim, "PUT", 1).await;
        api.create("invalid-local", json!({"rclass": "nowhere"}))
            .await
    };
    let (a, b) = tokio::join!(valid, invalid);
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    // The validation error, not a merge failure, although a write was in flight.
    assert_eq!(b.status, StatusCode::BAD_REQUEST, "{}", b.text);
    assert!(
        b.art_error()
            .starts_with("Repository rclass is missing or invalid")
    );
}
