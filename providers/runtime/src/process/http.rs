//! The HTTP endpoints every replica serves: `/healthz`, `/readyz` (and `/readyz/<check>`)
//! on the health address, `/metrics` on the metrics address.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use super::metrics::MetricsRegistry;

/// Named readiness checks: `true` when passing.
#[derive(Clone, Default)]
pub struct ReadinessChecks {
    checks: Arc<Mutex<BTreeMap<String, bool>>>,
}

impl ReadinessChecks {
    /// Sets a check's state.
    pub fn set(&self, name: &str, ok: bool) {
        if let Ok(mut m) = self.checks.lock() {
            m.insert(name.to_string(), ok);
        }
    }

    fn snapshot(&self) -> BTreeMap<String, bool> {
        self.checks.lock().map(|m| m.clone()).unwrap_or_default()
    }
}

async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, "ok")
}

async fn readyz(State(checks): State<ReadinessChecks>) -> impl IntoResponse {
    let snapshot = checks.snapshot();
    let mut body = String::new();
    let mut ok = true;
    for (name, pass) in &snapshot {
        body.push_str(&format!(
            "[{}]{name} {}\n",
            if *pass { "+" } else { "-" },
            if *pass { "ok" } else { "failed" }
        ));
        ok &= *pass;
    }
    body.push_str(if ok {
        "readyz check passed\n"
    } else {
        "readyz check failed\n"
    });
    (
        if ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        body,
    )
}

async fn readyz_named(
    State(checks): State<ReadinessChecks>,
    Path(name): Path<String>,
) -> impl IntoResponse {
    match checks.snapshot().get(&name) {
        Some(true) => (StatusCode::OK, "ok".to_string()),
        Some(false) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{name} check failed"),
        ),
        None => (StatusCode::NOT_FOUND, format!("no check named {name}")),
    }
}

async fn metrics(State(registry): State<MetricsRegistry>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        registry.encode(),
    )
}

/// Binds and serves the health endpoints; returns the bound address.
pub async fn serve_health(
    addr: SocketAddr,
    checks: ReadinessChecks,
    shutdown: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let app = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/readyz/{name}", get(readyz_named))
        .with_state(checks);
    serve(addr, app, shutdown).await
}

/// Binds and serves `/metrics`; returns the bound address.
pub async fn serve_metrics(
    addr: SocketAddr,
    registry: MetricsRegistry,
    shutdown: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let app = Router::new()
        .route("/metrics", get(metrics))
        .with_state(registry);
    serve(addr, app, shutdown).await
}

async fn serve(
    addr: SocketAddr,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        let result = axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        if let Err(e) = result {
            tracing::error!(error = %e, "http server failed");
        }
    });
    Ok(bound)
}
