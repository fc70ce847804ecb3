//! The Access service (`/access`): system ping and the project attachment of repositories.
//!
//! The project must exist (`projects`: 404 otherwise). Attaching and detaching change the repository's `projectKey` directly (JFrog
//! does it through Access, outside the repository update), and they are not subject to the
//! descriptor-merge emulation.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, put};

use crate::auth::Admin;
use crate::errors::{ApiError, Flavor, text};
use crate::server::Shared;
use crate::services::artifactory::repositories::validate::valid_project_key;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/access/api/v1/system/ping", get(ping))
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
