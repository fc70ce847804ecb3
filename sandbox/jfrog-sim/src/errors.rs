//! JFrog's error bodies, per service.
//!
//! Artifactory (and Lifecycle) answer `{"errors":[{"status":N,"message":"..."}]}`; Access
//! (and Event, Worker) answer `{"errors":[{"code":"...","message":"..."}]}`; Xray answers
//! `{"error":"..."}`. Handlers build an [`ApiError`] with the flavour of their service.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Which service's error body format to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Artifactory,
    Access,
    Xray,
}

impl Flavor {
    /// The flavour of the service a request path belongs to.
    pub(crate) fn for_path(path: &str) -> Flavor {
        if path.starts_with("/access") || path.starts_with("/event") || path.starts_with("/worker")
        {
            Flavor::Access
        } else if path.starts_with("/xray") {
            Flavor::Xray
        } else {
            Flavor::Artifactory
        }
    }
}

/// An error answer in a JFrog service's format.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub flavor: Flavor,
    pub retry_after_secs: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(flavor: Flavor, status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            flavor,
            retry_after_secs: None,
        }
    }

    /// An Artifactory error.
    pub(crate) fn art(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError::new(Flavor::Artifactory, status, message)
    }

    /// An Artifactory 400 error.
    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::art(StatusCode::BAD_REQUEST, message)
    }

    fn access_code(&self) -> &'static str {
        match self.status {
            StatusCode::BAD_REQUEST => "BAD_REQUEST",
            StatusCode::UNAUTHORIZED => "UNAUTHORIZED",
            StatusCode::FORBIDDEN => "FORBIDDEN",
            StatusCode::NOT_FOUND => "NOT_FOUND",
            StatusCode::CONFLICT => "CONFLICT",
            StatusCode::TOO_MANY_REQUESTS => "TOO_MANY_REQUESTS",
            _ => "INTERNAL_SERVER_ERROR",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = match self.flavor {
            Flavor::Artifactory => {
                json!({"errors": [{"status": self.status.as_u16(), "message": self.message}]})
            }
            Flavor::Access => {
                json!({"errors": [{"code": self.access_code(), "message": self.message}]})
            }
            Flavor::Xray => json!({"error": self.message}),
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after_secs {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.status == StatusCode::UNAUTHORIZED && self.flavor == Flavor::Artifactory {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"Artifactory Realm\""),
            );
        }
        resp
    }
}

/// A plain-text success answer (Artifactory answers repository writes with text).
pub(crate) fn text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain")], body).into_response()
}
