//! Typed errors the reconciler can act on, and the parsing of JFrog's error bodies.
//!
//! The classes matter more than the messages: `NotFound` must never be confused with any
//! other failure (a misread 404 makes the provider create a duplicate; an error misread as
//! 404 makes it create something that exists), `RateLimited` carries the server's
//! `Retry-After`, and [`Error::Indeterminate`] tells the caller that a non-idempotent write
//! may or may not have happened.
//!
//! Every error names the request by method and *path template* (`PUT
//! /artifactory/api/repositories/{key}`), never by its concrete URL or query string, and
//! never carries a request body or header: no secret can leak through an error message.

use std::fmt;
use std::time::Duration;

use http::Method;

use crate::service::{ErrorFormat, Service};

/// Longest JFrog message kept in an error; bodies beyond this are truncated (an HTML error
/// page from a proxy can be large).
const MAX_MESSAGE_LEN: usize = 1024;

/// The request an error belongs to: service, method and path template. Displayed as
/// `PUT /artifactory/api/repositories/{key}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// The service that was called.
    pub service: Service,
    /// The HTTP method.
    pub method: Method,
    /// The full path template, service prefix included (`/artifactory/api/repositories/{key}`).
    pub route: String,
}

impl fmt::Display for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.route)
    }
}

/// Errors returned by [`crate::JfrogClient`] calls.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// 404 (and, where a service uses it for a missing object, its documented equivalent):
    /// the object does not exist.
    #[error("{ctx}: 404 not found: {message}")]
    NotFound {
        /// The request.
        ctx: RequestContext,
        /// JFrog's message.
        message: String,
    },
    /// 400 or 422: JFrog refused the request; the message says why (validation).
    #[error("{ctx}: {status} bad request: {message}")]
    BadRequest {
        /// The request.
        ctx: RequestContext,
        /// 400 or 422.
        status: u16,
        /// JFrog's message.
        message: String,
    },
    /// 401: credentials missing, wrong or expired.
    #[error("{ctx}: 401 unauthorized: {message}")]
    Unauthorized {
        /// The request.
        ctx: RequestContext,
        /// JFrog's message.
        message: String,
    },
    /// 403: the credentials are valid but lack the permission.
    #[error("{ctx}: 403 forbidden: {message}")]
    Forbidden {
        /// The request.
        ctx: RequestContext,
        /// JFrog's message.
        message: String,
    },
    /// 409: the object exists already or was changed concurrently.
    #[error("{ctx}: 409 conflict: {message}")]
    Conflict {
        /// The request.
        ctx: RequestContext,
        /// JFrog's message.
        message: String,
    },
    /// 429 after the retry budget was spent, or with a `Retry-After` longer than the client
    /// is willing to wait: requeue after `retry_after`.
    #[error("{ctx}: 429 rate limited (retry after {}): {message}", fmt_retry_after(*retry_after))]
    RateLimited {
        /// The request.
        ctx: RequestContext,
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
        /// JFrog's message.
        message: String,
    },
    /// 5xx after the retry budget was spent (or at once for a non-idempotent call).
    #[error("{ctx}: {status} server error: {message}")]
    Server {
        /// The request.
        ctx: RequestContext,
        /// The status code.
        status: u16,
        /// JFrog's message.
        message: String,
    },
    /// Any other non-success status (405, 412, 415, ...).
    #[error("{ctx}: unexpected status {status}: {message}")]
    UnexpectedStatus {
        /// The request.
        ctx: RequestContext,
        /// The status code.
        status: u16,
        /// JFrog's message.
        message: String,
    },
    /// The request could not be completed and was certainly not applied (connection refused,
    /// DNS failure, TLS failure), or it was idempotent and retrying did not help.
    #[error("{ctx}: transport error: {}", chain(source))]
    Transport {
        /// The request.
        ctx: RequestContext,
        /// The underlying error (its URL removed).
        #[source]
        source: reqwest::Error,
    },
    /// A non-idempotent request (a create) was sent but its response was lost (connection
    /// dropped, timeout): the server may or may not have applied it. The client never
    /// retries this blindly; the caller must observe the object (by its deterministic key)
    /// before deciding to create it again.
    #[error(
        "{ctx}: outcome unknown, the request was sent but no response arrived: {}",
        chain(source)
    )]
    Indeterminate {
        /// The request.
        ctx: RequestContext,
        /// The underlying error (its URL removed).
        #[source]
        source: reqwest::Error,
    },
    /// The response arrived but its body could not be decoded into the expected type.
    #[error("{ctx}: cannot decode {status} response: {message}")]
    Decode {
        /// The request.
        ctx: RequestContext,
        /// The status code of the response.
        status: u16,
        /// What failed.
        message: String,
    },
    /// The request could not be built (invalid path parameter, body serialisation).
    #[error("{ctx}: invalid request: {message}")]
    InvalidRequest {
        /// The request.
        ctx: RequestContext,
        /// What is wrong.
        message: String,
    },
    /// The client configuration is invalid (URL, CA bundle, TLS setup).
    #[error("invalid JFrog client configuration: {0}")]
    Config(String),
    /// No access token could be obtained through the OIDC token exchange (see
    /// [`crate::oidc`]): the platform refused it, or the subject token was missing. No request
    /// was sent with the missing token.
    #[error("{origin}: cannot obtain a JFrog access token through {integration}: {}{message}", status_prefix(*status))]
    TokenExchange {
        /// The configuration the credential belongs to (`ClusterProviderConfig "default"`).
        origin: String,
        /// The integration and identity (`OIDC integration "k8s" with service account ...`).
        integration: String,
        /// The exchange's status, when the platform answered.
        status: Option<u16>,
        /// The platform's message (or what failed before the exchange).
        message: String,
    },
}

fn status_prefix(status: Option<u16>) -> String {
    match status {
        Some(s) => format!("the platform answered {s}: "),
        None => String::new(),
    }
}

/// An error and its causes, `": "`-joined: reqwest's own message ("error sending
/// request") says little without the cause ("Connection refused", "UnknownIssuer").
fn chain(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

fn fmt_retry_after(d: Option<Duration>) -> String {
    match d {
        Some(d) => format!("{}s", d.as_secs_f64()),
        None => "unspecified".to_owned(),
    }
}

impl Error {
    /// True for [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// True for [`Error::Indeterminate`]: observe before retrying the write.
    pub fn is_indeterminate(&self) -> bool {
        matches!(self, Error::Indeterminate { .. })
    }

    /// The HTTP status, for errors that come from a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::NotFound { .. } => Some(404),
            Error::Unauthorized { .. } => Some(401),
            Error::Forbidden { .. } => Some(403),
            Error::Conflict { .. } => Some(409),
            Error::RateLimited { .. } => Some(429),
            Error::BadRequest { status, .. }
            | Error::Server { status, .. }
            | Error::UnexpectedStatus { status, .. }
            | Error::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// JFrog's message, for errors that come from a response.
    pub fn jfrog_message(&self) -> Option<&str> {
        match self {
            Error::NotFound { message, .. }
            | Error::BadRequest { message, .. }
            | Error::Unauthorized { message, .. }
            | Error::Forbidden { message, .. }
            | Error::Conflict { message, .. }
            | Error::RateLimited { message, .. }
            | Error::Server { message, .. }
            | Error::UnexpectedStatus { message, .. } => Some(message),
            _ => None,
        }
    }

    /// The request the error belongs to.
    pub fn context(&self) -> Option<&RequestContext> {
        match self {
            Error::NotFound { ctx, .. }
            | Error::BadRequest { ctx, .. }
            | Error::Unauthorized { ctx, .. }
            | Error::Forbidden { ctx, .. }
            | Error::Conflict { ctx, .. }
            | Error::RateLimited { ctx, .. }
            | Error::Server { ctx, .. }
            | Error::UnexpectedStatus { ctx, .. }
            | Error::Transport { ctx, .. }
            | Error::Indeterminate { ctx, .. }
            | Error::Decode { ctx, .. }
            | Error::InvalidRequest { ctx, .. } => Some(ctx),
            Error::Config(_) | Error::TokenExchange { .. } => None,
        }
    }

    /// A 401 names the credentials the platform refused (`origin`, in words, never the
    /// value); any other error is returned as it is.
    pub fn refused_credentials(self, origin: Option<&str>) -> Error {
        match (self, origin) {
            (Error::Unauthorized { ctx, message }, Some(origin)) => Error::Unauthorized {
                ctx,
                message: format!("{message} (the platform refused {origin})"),
            },
            (e, _) => e,
        }
    }

    /// How long the server asked to wait, for [`Error::RateLimited`] (its `Retry-After`, when
    /// it sent one); `None` for every other error.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// True when trying the same call again later may succeed (throttling, server errors,
    /// transport failures); false for errors that need a change first (validation,
    /// permissions, not found). [`Error::Indeterminate`] is transient too, but the caller
    /// must observe before it retries a create.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::RateLimited { .. }
            | Error::Server { .. }
            | Error::Transport { .. }
            | Error::Indeterminate { .. } => true,
            Error::TokenExchange { status, .. } => status.is_none_or(|s| s == 429 || s >= 500),
            _ => false,
        }
    }

    /// A copy of an error kept for answering again ([`Error::TokenExchange`] and
    /// [`Error::Config`] exactly; any other as a configuration error with its text).
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::TokenExchange {
                origin,
                integration,
                status,
                message,
            } => Error::TokenExchange {
                origin: origin.clone(),
                integration: integration.clone(),
                status: *status,
                message: message.clone(),
            },
            Error::Config(m) => Error::Config(m.clone()),
            other => Error::Config(other.to_string()),
        }
    }

    /// Builds the error for a non-success response, classifying by status.
    pub(crate) fn from_response(
        ctx: RequestContext,
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
    ) -> Error {
        let message = parse_error_message(ctx.service.error_format(), body);
        match status {
            404 => Error::NotFound { ctx, message },
            400 | 422 => Error::BadRequest {
                ctx,
                status,
                message,
            },
            401 => Error::Unauthorized { ctx, message },
            403 => Error::Forbidden { ctx, message },
            409 => Error::Conflict { ctx, message },
            429 => Error::RateLimited {
                ctx,
                retry_after,
                message,
            },
            500..=599 => Error::Server {
                ctx,
                status,
                message,
            },
            _ => Error::UnexpectedStatus {
                ctx,
                status,
                message,
            },
        }
    }
}

/// Extracts the human message from a JFrog error body.
///
/// Tries the service's own format first, then the others (services are not always
/// consistent, and proxies in front of a platform answer with their own bodies), then falls
/// back to the body as text, whitespace-collapsed and truncated. Multiple entries of an
/// `errors` array are joined with `"; "`.
pub fn parse_error_message(format: ErrorFormat, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        let order: [fn(&serde_json::Value) -> Option<String>; 3] = match format {
            ErrorFormat::XrayError => [single_error, errors_array, single_message],
            ErrorFormat::ArtifactoryErrors | ErrorFormat::CodeMessageErrors => {
                [errors_array, single_error, single_message]
            }
        };
        if let Some(m) = order.iter().find_map(|f| f(&value)) {
            return truncate(&m);
        }
        if let serde_json::Value::String(s) = &value {
            return truncate(s);
        }
    }
    truncate(&trimmed.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `{"errors":[{"status":400,"message":"..."}]}` or `{"errors":[{"code":"X","message":"..."}]}`.
fn errors_array(v: &serde_json::Value) -> Option<String> {
    let errors = v.get("errors")?.as_array()?;
    let parts: Vec<String> = errors
        .iter()
        .filter_map(|e| match e {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(_) => {
                let msg = e
                    .get("message")
                    .or_else(|| e.get("detail"))
                    .and_then(|m| m.as_str())
                    .map(str::to_owned);
                let code = e.get("code").and_then(|c| c.as_str());
                match (code, msg) {
                    (Some(code), Some(msg)) if !code.is_empty() => Some(format!("{code}: {msg}")),
                    (_, Some(msg)) => Some(msg),
                    (Some(code), None) => Some(code.to_owned()),
                    (None, None) => None,
                }
            }
            _ => None,
        })
        .filter(|s| !s.trim().is_empty())
        .collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("; "))
    }
}

/// Xray's `{"error":"..."}` (sometimes `{"error":{"message":"..."}}`).
fn single_error(v: &serde_json::Value) -> Option<String> {
    match v.get("error")? {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        obj @ serde_json::Value::Object(_) => obj
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_owned),
        _ => None,
    }
}

/// `{"code":"...","message":"...","detail":"..."}` (Access token API) or SCIM's
/// `{"status":..,"detail":".."}`.
fn single_message(v: &serde_json::Value) -> Option<String> {
    let msg = v
        .get("message")
        .or_else(|| v.get("detail"))
        .and_then(|m| m.as_str())?;
    if msg.trim().is_empty() {
        return None;
    }
    match v.get("code").and_then(|c| c.as_str()) {
        Some(code) if !code.is_empty() => Some(format!("{code}: {msg}")),
        _ => Some(msg.to_owned()),
    }
}

fn truncate(s: &str) -> String {
    let s = s.trim();
    if s.len() <= MAX_MESSAGE_LEN {
        return s.to_owned();
    }
    let mut end = MAX_MESSAGE_LEN;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(service: Service) -> RequestContext {
        RequestContext {
            service,
            method: Method::PUT,
            route: format!("{}/api/repositories/{{key}}", service.base_path()),
        }
    }

    #[test]
    fn a_refused_token_names_its_origin_and_other_errors_stay() {
        let e = Error::from_response(ctx(Service::Artifactory), 401, b"Bad credentials", None)
            .refused_credentials(Some("the credentials of ClusterProviderConfig \"default\""));
        let text = e.to_string();
        assert!(text.contains("401 unauthorized: Bad credentials"), "{text}");
        assert!(text.contains("ClusterProviderConfig \"default\""), "{text}");
        let e = Error::from_response(ctx(Service::Artifactory), 404, b"gone", None)
            .refused_credentials(Some("the credentials of X"));
        assert!(!e.to_string().contains("credentials of X"), "{e}");
    }

    #[test]
    fn artifactory_errors_array() {
        let body = br#"{"errors":[{"status":400,"message":"Repository key must not be empty"}]}"#;
        assert_eq!(
            parse_error_message(ErrorFormat::ArtifactoryErrors, body),
            "Repository key must not be empty"
        );
        let body = br#"{"errors":[{"status":400,"message":"a"},{"status":400,"message":"b"}]}"#;
        assert_eq!(
            parse_error_message(ErrorFormat::ArtifactoryErrors, body),
            "a; b"
        );
    }

    #[test]
    fn access_code_message() {
        let body = br#"{"errors":[{"code":"BAD_REQUEST","message":"Project key is invalid"}]}"#;
        assert_eq!(
            parse_error_message(ErrorFormat::CodeMessageErrors, body),
            "BAD_REQUEST: Project key is invalid"
        );
        let body = br#"{"code":"NOT_FOUND","message":"token not found","detail":"x"}"#;
        assert_eq!(
            parse_error_message(ErrorFormat::CodeMessageErrors, body),
            "NOT_FOUND: token not found"
        );
    }

    #[test]
    fn xray_error() {
        let body = br#"{"error":"Policy already exists"}"#;
        assert_eq!(
            parse_error_message(ErrorFormat::XrayError, body),
            "Policy already exists"
        );
        // An Xray endpoint answering in the errors-array shape is still understood.
        let body = br#"{"errors":[{"message":"watch missing"}]}"#;
        assert_eq!(
            parse_error_message(ErrorFormat::XrayError, body),
            "watch missing"
        );
    }

    #[test]
    fn text_and_html_bodies() {
        assert_eq!(
            parse_error_message(ErrorFormat::ArtifactoryErrors, b"  Bad   Request\n"),
            "Bad Request"
        );
        assert_eq!(parse_error_message(ErrorFormat::XrayError, b""), "");
        let long = "x".repeat(5000);
        let m = parse_error_message(ErrorFormat::ArtifactoryErrors, long.as_bytes());
        assert_eq!(m.len(), MAX_MESSAGE_LEN + 3);
        // A JSON string body.
        assert_eq!(
            parse_error_message(ErrorFormat::ArtifactoryErrors, br#""plain""#),
            "plain"
        );
    }

    #[test]
    fn classification_by_status() {
        let body = br#"{"errors":[{"status":418,"message":"m"}]}"#;
        type Check = fn(&Error) -> bool;
        let cases: [(u16, Check); 11] = [
            (404, |e| matches!(e, Error::NotFound { .. })),
            (400, |e| matches!(e, Error::BadRequest { status: 400, .. })),
            (422, |e| matches!(e, Error::BadRequest { status: 422, .. })),
            (401, |e| matches!(e, Error::Unauthorized { .. })),
            (403, |e| matches!(e, Error::Forbidden { .. })),
            (409, |e| matches!(e, Error::Conflict { .. })),
            (429, |e| matches!(e, Error::RateLimited { .. })),
            (500, |e| matches!(e, Error::Server { status: 500, .. })),
            (503, |e| matches!(e, Error::Server { status: 503, .. })),
            (405, |e| {
                matches!(e, Error::UnexpectedStatus { status: 405, .. })
            }),
            (412, |e| {
                matches!(e, Error::UnexpectedStatus { status: 412, .. })
            }),
        ];
        for (status, check) in cases {
            let e = Error::from_response(ctx(Service::Artifactory), status, body, None);
            assert!(check(&e), "status {status} classified as {e:?}");
            assert_eq!(e.status(), Some(status));
            assert_eq!(e.jfrog_message(), Some("m"));
            assert_eq!(e.is_not_found(), status == 404);
        }
    }

    #[test]
    fn display_names_method_route_status_and_message() {
        let body = br#"{"error":"Xray is down"}"#;
        let e = Error::from_response(ctx(Service::Xray), 503, body, None);
        assert_eq!(
            e.to_string(),
            "PUT /xray/api/repositories/{key}: 503 server error: Xray is down"
        );
        let e = Error::from_response(
            ctx(Service::Artifactory),
            429,
            b"",
            Some(Duration::from_secs(3)),
        );
        assert_eq!(
            e.to_string(),
            "PUT /artifactory/api/repositories/{key}: 429 rate limited (retry after 3s): "
        );
        assert_eq!(e.retry_after(), Some(Duration::from_secs(3)));
        assert!(e.is_transient());
    }
}
