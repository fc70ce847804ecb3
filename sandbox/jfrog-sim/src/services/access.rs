//! The Access service (`/access`): system ping and version, the rename of a global
//! environment, and the project attachment of repositories.
//!
//! The project must exist (`projects`: 404 otherwise). Attaching and detaching change the repository's `projectKey` directly (JFrog
//! does it through Access, outside the repository update), and they are not subject to the
//! descriptor-merge emulation.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, body::Bytes};
use serde_json::{Value, json};

use crate::auth::{Admin, User};
use crate::errors::{ApiError, Flavor, text};
use crate::server::Shared;
use crate::services::artifactory::repositories::validate::valid_project_key;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/access/api/v1/system/ping", get(ping))
        .route("/access/api/v1/system/version", get(version))
        .route(
            "/access/api/v1/environments/{name}/rename",
            post(rename_environment),
        )
        .route(
            "/access/api/v1/projects/_/attach/repositories/{key}/{project_key}",
            put(attach),
        )
        .route(
            "/access/api/v1/projects/_/attach/repositories/{key}",
            delete(detach),
        )
}

async fn ping() -> Response {
    text(StatusCode::OK, "OK".to_owned())
}

/// `GET /access/api/v1/system/version`: the version in `name`, the member JFrog's Terraform
/// providers read (`GetAccessVersion` of jfrog/terraform-provider-shared `util/util.go`,
/// `AccessVersion.Version` bound to `json:"name"`, parsed as a version by the Artifactory
/// provider's `CompareAcessVersions`). The simulator reports Artifactory's version.
async fn version(State(s): State<Arc<Shared>>, _u: User) -> Json<Value> {
    Json(json!({"name": s.config.artifactory_version}))
}

/// `POST /access/api/v1/environments/{name}/rename` with `{"new_name": "<new name>"}`: 200, no
/// body (JFrog's Artifactory Terraform provider's `GlobalEnvironmentResource.Update`, which
/// posts `GlobalEnvironmentPostRenameRequestAPIModel`, `Name` bound to `json:"new_name"`,
/// and requires 200). 404 when the
/// environment does not exist, 409 when the new name is taken, 400 for a name the create
/// refuses.
async fn rename_environment(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let err = |status, msg: String| ApiError::new(Flavor::Access, status, msg);
    let body: Value = serde_json::from_slice(&body)
        .map_err(|e| err(StatusCode::BAD_REQUEST, format!("Invalid JSON: {e}")))?;
    let new = body.get("new_name").and_then(Value::as_str).unwrap_or("");
    let environments = super::security::ENVIRONMENTS.name;
    let Some(existing) = s.collections.get_raw(environments, &name) else {
        return Err(err(
            StatusCode::NOT_FOUND,
            format!("Environment '{name}' not found"),
        ));
    };
    if !super::security::valid_environment(new) {
        return Err(err(
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid environment name '{new}': starts with a letter, letters, digits and '-' only, at most 32 characters"
            ),
        ));
    }
    if new != name && s.collections.get_raw(environments, new).is_some() {
        return Err(err(
            StatusCode::CONFLICT,
            format!("Environment '{new}' already exists"),
        ));
    }
    s.collections.delete_raw(environments, &name);
    s.collections.put_raw(environments, new, existing);
    Ok(StatusCode::OK.into_response())
}

async fn attach(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((key, project_key)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    if !valid_project_key(&project_key) {
        return Err(ApiError::new(
            Flavor::Access,
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid project key '{project_key}': must be 2 - 32 lowercase alphanumeric and hyphen characters, starting with a letter"
            ),
        ));
    }
    if !super::projects::project_exists(&s, &project_key) {
        return Err(ApiError::new(
            Flavor::Access,
            StatusCode::NOT_FOUND,
            format!("Project '{project_key}' was not found"),
        ));
    }
    if s.artifactory.set_project(&key, Some(&project_key)) {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(ApiError::new(
            Flavor::Access,
            StatusCode::NOT_FOUND,
            format!("Repository '{key}' not found"),
        ))
    }
}

async fn detach(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    if s.artifactory.set_project(&key, None) {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(ApiError::new(
            Flavor::Access,
            StatusCode::NOT_FOUND,
            format!("Repository '{key}' not found"),
        ))
    }
}
