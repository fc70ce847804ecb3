//! The Xray service (`/xray`): system ping and version, which a ProviderConfig check of
//! provider-xray needs. Policies, watches and reports arrive with the Xray Kinds.

use std::sync::Arc;

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::auth::User;
use crate::server::Shared;

/// The Xray version the simulator reports.
const XRAY_VERSION: &str = "3.111.17";

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/xray/api/v1/system/ping", get(ping))
        .route("/xray/api/v1/system/version", get(version))
}

/// Answers `{"status":"pong"}` without authentication.
async fn ping() -> Json<Value> {
    Json(json!({"status": "pong"}))
}

async fn version(_user: User) -> Json<Value> {
    Json(json!({"xray_version": XRAY_VERSION, "xray_revision": "a1b2c3d"}))
}
