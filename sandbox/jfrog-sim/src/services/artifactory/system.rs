//! Artifactory system calls: ping and version (a ProviderConfig check), the custom base URL
//! (`PUT /artifactory/api/system/configuration/baseUrl`, text/plain, as JFrog's Terraform
//! provider's `acctest.PreCheck` sets it; stored as the descriptor's `urlBase`, used where
//! Artifactory builds its own URLs: a federated repository's own member), the usage report
//! (`POST /artifactory/api/system/usage`, the Terraform provider's `SendUsage`: accepted,
//! not kept), and two read views of the descriptor's security section:
//! `GET /artifactory/api/securityconfig` (the Terraform provider's `SecurityAPIModel`:
//! `anonAccessEnabled`, `passwordSettings.encryptionPolicy`, `resource_artifactory_general_security.go`)
//! and `GET /artifactory/api/oauth` (its `OauthSettings`: `enabled`, `persistUsers`,
//! `allowUserToAccessProfile`, `providers: [{name, enabled, providerType, id, apiUrl,
//! authUrl, tokenUrl}]`, `availableTypes`; secrets never answered,
//! `resource_artifactory_oauth_settings.go`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::auth::{Admin, User};
use crate::errors::{ApiError, text};
use crate::server::Shared;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/artifactory/api/system/ping", get(ping))
        .route("/artifactory/api/system/version", get(version))
        .route(
            "/artifactory/api/system/configuration/baseUrl",
            put(set_base_url),
        )
        .route("/artifactory/api/system/usage", post(usage))
        .route("/artifactory/api/securityconfig", get(security_config))
        .route("/artifactory/api/oauth", get(oauth))
}

/// The URL Artifactory names itself with: the custom base URL when one is set, else the
/// address it is reached at.
pub(crate) fn url_base(s: &Shared) -> String {
    s.descriptor
        .content
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get("urlBase")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .map_or_else(
            || s.base_url.clone(),
            |u| u.trim_end_matches('/').to_owned(),
        )
}

async fn set_base_url(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    body: Bytes,
) -> Result<Response, ApiError> {
    let url = String::from_utf8_lossy(&body).trim().to_owned();
    if !(url.is_empty() || url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ApiError::bad_request(format!("Invalid base URL '{url}'")));
    }
    let ticket = s.descriptor.begin().await;
    s.descriptor.commit(ticket, || {
        let mut d = s
            .descriptor
            .content
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Value::Object(m) = &mut *d {
            m.insert("urlBase".into(), Value::String(url.clone()));
        }
        Ok(())
    })?;
    Ok(text(
        StatusCode::OK,
        format!("URL base has been successfully updated to '{url}'"),
    ))
}

async fn usage(_user: User, body: Bytes) -> Result<Response, ApiError> {
    serde_json::from_slice::<Value>(&body)
        .map_err(|e| ApiError::bad_request(format!("Could not parse the usage report: {e}")))?;
    Ok(StatusCode::OK.into_response())
}

fn security(s: &Shared) -> Value {
    s.descriptor
        .content
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get("security")
        .cloned()
        .unwrap_or_else(|| json!({}))
}

async fn security_config(State(s): State<Arc<Shared>>, _admin: Admin) -> Json<Value> {
    let sec = security(&s);
    let mut out = json!({
        "anonAccessEnabled": sec.get("anonAccessEnabled").cloned().unwrap_or(Value::Bool(false)),
        "passwordSettings": {
            "encryptionPolicy": sec.pointer("/passwordSettings/encryptionPolicy").cloned()
                .unwrap_or_else(|| Value::String("SUPPORTED".into())),
        },
    });
    if let Some(v) = sec.get("anonAccessToBuildInfosDisabled") {
        out["anonAccessToBuildInfosDisabled"] = v.clone();
    }
    Json(out)
}

async fn oauth(State(s): State<Arc<Shared>>, _admin: Admin) -> Json<Value> {
    let o = security(&s)
        .get("oauthSettings")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let flag = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
    let providers: Vec<Value> = o
        .get("oauthProvidersSettings")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(_, p)| p.is_object())
                .map(|(name, p)| {
                    let at = |k: &str| p.get(k).cloned().unwrap_or(Value::String(String::new()));
                    json!({
                        "name": name,
                        "enabled": p.get("enabled").and_then(Value::as_bool).unwrap_or(false),
                        "providerType": at("providerType"),
                        "id": at("id"),
                        "apiUrl": at("apiUrl"),
                        "authUrl": at("authUrl"),
                        "tokenUrl": at("tokenUrl"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Json(json!({
        "enabled": flag("enableIntegration"),
        "persistUsers": flag("persistUsers"),
        "allowUserToAccessProfile": flag("allowUserToAccessProfile"),
        "availableTypes": [
            {"displayName": "GitHub", "type": "github"},
            {"displayName": "Google", "type": "google"},
            {"displayName": "OpenID Connect", "type": "openId"},
            {"displayName": "Cloud Foundry UAA", "type": "cloudfoundry"}
        ],
        "providers": providers,
    }))
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
