//! Artifactory system calls a ProviderConfig check needs: ping and version.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::auth::User;
use crate::errors::text;
use crate::server::Shared;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/artifactory/api/system/ping", get(ping))
        .route("/artifactory/api/system/version", get(version))
}

/// Answers `OK` without authentication, as Artifactory does for health checks.
async fn ping() -> Response {
    text(StatusCode::OK, "OK".to_owned())
}

async fn version(State(s): State<Arc<Shared>>, _user: User) -> Json<Value> {
    let v = &s.config.artifactory_version;
    // Artifactory's revision is the version's digits followed by a build number.
    let revision: String = v.chars().filter(char::is_ascii_digit).collect::<String>() + "900";
    Json(json!({
        "version": v,
        "revision": revision,
        "addons": ["build", "docker", "vagrant", "replication", "filestore", "plugins", "gems", "composer",
                   "npm", "bower", "git-lfs", "nuget", "debian", "opkg", "rpm", "cocoapods", "conan",
                   "vcs", "pypi", "release-bundle", "jf-connect", "replicator", "keys", "chef",
                   "cran", "go", "helm", "rest", "conda", "license", "puppet", "ldap", "sso",
                   "layouts", "properties", "search", "filtered-resources", "p2", "watch",
                   "webstart", "support", "xray", "federated", "huggingfaceml", "terraform"],
        "license": "Enterprise Plus (simulated)",
    }))
}
