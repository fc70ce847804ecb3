//! No secret value appears in any log line at any level.
//!
//! A global subscriber at TRACE (all targets, including hyper, reqwest and rustls through
//! the `log` bridge) writes into a buffer while the client runs success and error paths with
//! a token, a wrong token, basic credentials and a remote repository password in a body.
//! This file holds a single test, so the global subscriber sees only this test's traffic.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jfrog_client::{JfrogClient, RetryPolicy};
use jfrog_sim::{Fault, SimConfig, Simulator};
use serde_json::json;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Buffer {
    type Writer = Buffer;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[tokio::test]
async fn no_secret_in_any_log_line() {
    let buffer = Buffer::default();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(buffer.clone())
        .with_ansi(false)
        .init();

    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let admin_token = sim.admin_token();
    let wrong_token = "wrong-token-7c1f9e2d44";
    let basic_password = "basic-password-5b8e1a";
    let remote_password = "remote-password-93d0c7";
    sim.basic_user("alice", basic_password, true);

    let retries = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
    };
    let admin = JfrogClient::builder(sim.url())
        .access_token(admin_token.clone())
        .rate_limit(None)
        .retry_policy(retries.clone())
        .build()
        .unwrap();
    let basic = JfrogClient::builder(sim.url())
        .basic_auth("alice", basic_password)
        .rate_limit(None)
        .retry_policy(retries.clone())
        .build()
        .unwrap();
    let wrong = JfrogClient::builder(sim.url())
        .access_token(wrong_token)
        .rate_limit(None)
        .build()
        .unwrap();

    // Success paths.
    let repos = admin.artifactory().repositories();
    admin.artifactory().ping().await.unwrap();
    admin.artifactory().version().await.unwrap();
    basic.artifactory().version().await.unwrap();
    let remote = json!({
        "rclass": "remote",
        "packageType": "generic",
        "url": "https://example.org/files",
        "username": "mirror",
        "password": remote_password,
    });
    repos.create("logs-remote", &remote).await.unwrap();
    let got = repos.get("logs-remote").await.unwrap();
    repos.update("logs-remote", &remote).await.unwrap();
    repos
        .list(&jfrog_client::artifactory::ListFilter::all())
        .await
        .unwrap();

    // Error paths: every one must be logged without secrets, and its error text too.
    let mut errors = Vec::new();
    errors.push(wrong.artifactory().version().await.unwrap_err());
    errors.push(repos.get("missing").await.unwrap_err());
    errors.push(repos.create("logs-remote", &remote).await.unwrap_err());
    sim.add_fault(
        Fault::error("/artifactory/api/repositories", 500, 1.0)
            .method("GET")
            .times(4),
    );
    errors.push(repos.get("logs-remote").await.unwrap_err());
    sim.add_fault(
        Fault::rate_limit("/artifactory/api/repositories", Duration::from_secs(1), 1.0).times(1),
    );
    repos.get("logs-remote").await.unwrap();
    sim.add_fault(Fault::drop_after_commit("PUT", "/artifactory/api/repositories").times(1));
    errors.push(repos.create("logs-remote-2", &remote).await.unwrap_err());
    sim.shutdown().await;

    let logs = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let error_text: String = errors.iter().map(|e| format!("{e} / {e:?}\n")).collect();
    // The capture works and covers the client's spans, retries and the HTTP stack.
    assert!(logs.contains("jfrog_request"), "no client span captured");
    assert!(logs.contains("retrying JFrog request"), "no retry captured");
    assert!(logs.lines().count() > 20, "too few lines captured:\n{logs}");

    let basic_header = base64(format!("alice:{basic_password}").as_bytes());
    let secrets = [
        admin_token.as_str(),
        wrong_token,
        basic_password,
        remote_password,
        basic_header.as_str(),
    ];
    for secret in secrets {
        assert!(!logs.contains(secret), "a secret appears in the logs");
        assert!(!error_text.contains(secret), "a secret appears in an error");
    }
    // The body the simulator returned does not echo the password either.
    assert!(!got.to_string().contains(remote_password));
}
