//! Scale: 10,000 repositories through the HTTP API. Ignored by default (it measures, it does
//! not assert timings); run with
//! `cargo test -p jfrog-sim --release --test sim scale:: -- --ignored --nocapture`.

use std::time::Instant;

use crate::common::{Api, start_with};
use futures::StreamExt;
use jfrog_sim::SimConfig;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run explicitly"]
async fn ten_thousand_repositories() {
    const N: usize = 10_000;
    let sim = start_with(SimConfig {
        descriptor_merge_emulation: false,
        ..SimConfig::default()
    })
    .await;
    let api = Api::admin(&sim);
    let t = Instant::now();
    let statuses: Vec<StatusCode> = futures::stream::iter(0..N)
        .map(|i| {
            let api = &api;
            async move {
                let body = if i % 4 == 1 {
                    json!({"rclass": "remote", "packageType": "npm", "password": "p"})
                } else {
                    {
                        let package_type = ["generic", "maven", "docker", "npm"][i % 4];
                        json!({"rclass": "local", "packageType": package_type})
                    }
                };
                api.create(&format!("repo-{i:05}"), body).await.status
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let create = t.elapsed();
    assert!(statuses.iter().all(|s| *s == StatusCode::OK));
    assert_eq!(sim.repository_count(), N);
    let t = Instant::now();
    for i in (0..N).step_by(10) {
        assert_eq!(
            api.repo(&format!("repo-{i:05}")).await.status,
            StatusCode::OK
        );
    }
    let get = t.elapsed() / (N as u32 / 10);
    let t = Instant::now();
    let list = api
        .get("/artifactory/api/repositories?type=local&packageType=docker")
        .await;
    let list_time = t.elapsed();
    assert_eq!(list.json().as_array().map(Vec::len), Some(N / 4));
    let t = Instant::now();
    let all = api
        .get("/artifactory/api/repositories/configurations")
        .await;
    let all_time = t.elapsed();
    println!(
        "created {N} repositories in {create:?} ({:.0}/s, 32 concurrent); GET one: {get:?} average; \
         filtered list: {list_time:?}; all configurations ({} bytes): {all_time:?}",
        N as f64 / create.as_secs_f64(),
        all.text.len()
    );
}
