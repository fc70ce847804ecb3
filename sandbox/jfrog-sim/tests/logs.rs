//! No secret (token, password) reaches a log line of the simulator at any level.

#[expect(dead_code, reason = "this binary uses a few of the shared helpers")]
mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{Api, client, start};
use jfrog_sim::Fault;
use reqwest::StatusCode;
use serde_json::json;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_secret_in_any_log_line() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let sim = start().await;
    let api = Api::admin(&sim);
    sim.basic_user("alice", "alice-basic-secret", true);
    let password = "remote-password-secret";
    let body = json!({"rclass": "remote", "url": "https://x.example", "password": password});
    assert_eq!(api.create("r-remote", body).await.status, StatusCode::OK);
    api.post(
        "/artifactory/api/repositories/r-remote",
        json!({"password": "second-secret"}),
    )
    .await;
    api.repo("r-remote").await;
    api.get("/artifactory/api/repositories/configurations")
        .await;
    // Failures, rejected bodies, wrong credentials and faults log too.
    api.create(
        "bad-local",
        json!({"rclass": "local", "password": "third-secret", "xrayIndex": "x"}),
    )
    .await;
    Api::with_token(&sim, Some("wrong-token-secret".into()))
        .repo("r-remote")
        .await;
    let http = client();
    http.get(format!("{}/artifactory/api/repositories", sim.url()))
        .basic_auth("alice", Some("alice-basic-secret"))
        .send()
        .await
        .unwrap();
    sim.add_fault(Fault::drop_after_commit("POST", "/artifactory").times(1));
    let _ = http
        .post(format!(
            "{}/artifactory/api/repositories/r-remote",
            sim.url()
        ))
        .bearer_auth(sim.admin_token())
        .json(&json!({"password": "fourth-secret"}))
        .send()
        .await;
    let admin_token = sim.admin_token();
    sim.shutdown().await;

    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("request"), "logging was captured: {logs}");
    for secret in [
        password,
        "second-secret",
        "third-secret",
        "fourth-secret",
        "wrong-token-secret",
        "alice-basic-secret",
        admin_token.as_str(),
    ] {
        assert!(!logs.contains(secret), "{secret} leaked into the logs");
    }
}
