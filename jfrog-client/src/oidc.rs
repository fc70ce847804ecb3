//! Workload identity: JFrog access tokens obtained through the platform's OIDC token exchange
//! instead of a long-lived token.
//!
//! The caller proves who it is with a signed OIDC token of its own (a Kubernetes
//! service-account token, in the providers) and Access answers with a short-lived JFrog access
//! token whose user, scope and lifetime the platform's identity mapping decides:
//! `POST /access/api/v1/oidc/token` with the RFC 8693 grant
//! `urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token_type`
//! `urn:ietf:params:oauth:token-type:id_token`, the subject token, the integration's
//! `provider_name` and optionally a `project_key`; the answer carries `access_token`,
//! `expires_in`, `token_type`, `scope`, `issued_token_type` and `username`.
//!
//! [`OidcTokenSource`] is one such credential, shared by every client of one ProviderConfig:
//! it exchanges on first use, keeps the token in memory ([`SecretString`]), exchanges again
//! once [`REFRESH_FRACTION`] of its lifetime has passed (a failed refresh keeps using the
//! still-valid token), drops it at once when the platform answers 401 to it (the client then
//! renews it and sends the request once more), and lets one exchange run at a time whatever
//! the number of concurrent requests. A failure is remembered for [`FAILURE_HOLD`] so that a storm of
//! reconciles does not turn into a storm of exchanges.
//!
//! Neither the subject token nor the issued one is ever logged, put in an error or shown by
//! `Debug`; errors carry the platform's message, which names the integration, never a token.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use tokio::time::Instant;

use crate::error::{Error, parse_error_message};
use crate::metrics::ClientMetrics;
use crate::service::ErrorFormat;

/// The RFC 8693 grant type of the exchange.
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The subject token type sent (the JFrog CLI sends the same).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The exchange route, below the platform URL.
pub const EXCHANGE_ROUTE: &str = "/access/api/v1/oidc/token";
/// Share of a token's lifetime after which it is exchanged again (before it expires).
pub const REFRESH_FRACTION: f64 = 0.8;
/// How long a failed exchange is answered from memory before it is tried again.
pub const FAILURE_HOLD: Duration = Duration::from_secs(2);
/// Lifetime assumed when the answer has no `expires_in` (JFrog's default for a mapping).
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(60);
/// Attempts per exchange on a 5xx, 429 or transport failure (the exchange has no side
/// effect beyond the token it issues, so resending it is safe).
const ATTEMPTS: u32 = 3;

/// Where the subject token (the caller's own OIDC identity) comes from.
#[async_trait]
pub trait SubjectTokenSource: Send + Sync {
    /// A currently valid subject token. The error names where it was looked for, never a
    /// token.
    async fn subject_token(&self) -> Result<SecretString, String>;

    /// The identity, for messages: `service account "ns/name"`, `file "/path"`.
    fn describe(&self) -> String;
}

/// What the exchange asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcExchangeSettings {
    /// The platform's OIDC integration (`provider_name`).
    pub provider_name: String,
    /// A project the token is requested for (`project_key`), when the mapping is a project's.
    pub project_key: Option<String>,
}

/// A token issued by the exchange, as this process keeps it.
struct Issued {
    token: SecretString,
    refresh_at: Instant,
    expires_at: Instant,
}

#[derive(Default)]
struct State {
    issued: Option<Issued>,
    failure: Option<(Instant, Error)>,
}

/// An access token obtained and renewed through OIDC token exchange (see the module docs).
pub struct OidcTokenSource {
    settings: OidcExchangeSettings,
    subject: Arc<dyn SubjectTokenSource>,
    origin: String,
    state: tokio::sync::Mutex<State>,
}

impl fmt::Debug for OidcTokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcTokenSource")
            .field("provider_name", &self.settings.provider_name)
            .field("project_key", &self.settings.project_key)
            .field("subject", &self.subject.describe())
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct ExchangeAnswer {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl OidcTokenSource {
    /// A source for `settings`, proving its identity with `subject`; `origin` names the
    /// configuration in messages (`ClusterProviderConfig "default"`).
    pub fn new(
        settings: OidcExchangeSettings,
        subject: Arc<dyn SubjectTokenSource>,
        origin: impl Into<String>,
    ) -> Self {
        OidcTokenSource {
            settings,
            subject,
            origin: origin.into(),
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &OidcExchangeSettings {
        &self.settings
    }

    /// `OIDC integration "k8s" with service account "ns/name"`, for messages.
    pub fn describe(&self) -> String {
        format!(
            "OIDC integration \"{}\"{} with {}",
            self.settings.provider_name,
            self.settings
                .project_key
                .as_deref()
                .map(|p| format!(" (project \"{p}\")"))
                .unwrap_or_default(),
            self.subject.describe()
        )
    }

    /// A valid access token: the kept one, or a fresh one from the exchange.
    pub(crate) async fn token(
        &self,
        http: &reqwest::Client,
        base: &url::Url,
        metrics: &ClientMetrics,
    ) -> Result<SecretString, Error> {
        let mut state = self.state.lock().await;
        let now = Instant::now();
        if let Some(issued) = &state.issued
            && now < issued.refresh_at
        {
            return Ok(issued.token.clone());
        }
        if let Some((at, e)) = &state.failure
            && now < *at + FAILURE_HOLD
        {
            // A token that is still valid serves while the platform refuses to renew it.
            if let Some(issued) = &state.issued
                && now < issued.expires_at
            {
                return Ok(issued.token.clone());
            }
            return Err(e.duplicate());
        }
        match self.exchange(http, base, metrics).await {
            Ok((token, lifetime)) => {
                let now = Instant::now();
                state.issued = Some(Issued {
                    token: token.clone(),
                    refresh_at: now + lifetime.mul_f64(REFRESH_FRACTION),
                    expires_at: now + lifetime,
                });
                state.failure = None;
                tracing::debug!(
                    provider_name = %self.settings.provider_name,
                    lifetime_s = lifetime.as_secs(),
                    "JFrog access token obtained by OIDC token exchange"
                );
                Ok(token)
            }
            Err(e) => {
                tracing::warn!(error = %e, "OIDC token exchange failed");
                let now = Instant::now();
                let still_valid = state
                    .issued
                    .as_ref()
                    .filter(|i| now < i.expires_at)
                    .map(|i| i.token.clone());
                if still_valid.is_none() {
                    state.issued = None;
                }
                state.failure = Some((now, e.duplicate()));
                match still_valid {
                    Some(t) => Ok(t),
                    None => Err(e),
                }
            }
        }
    }

    /// Forgets `token` when it is the kept one (the platform answered 401 to it), so the next
    /// request exchanges again at once.
    pub(crate) async fn invalidate(&self, token: &SecretString) {
        let mut state = self.state.lock().await;
        if state
            .issued
            .as_ref()
            .is_some_and(|i| i.token.expose_secret() == token.expose_secret())
        {
            state.issued = None;
            state.failure = None;
        }
    }

    /// Whether a token is kept and still valid (for tests).
    pub async fn has_valid_token(&self) -> bool {
        let state = self.state.lock().await;
        state
            .issued
            .as_ref()
            .is_some_and(|i| Instant::now() < i.expires_at)
    }

    async fn exchange(
        &self,
        http: &reqwest::Client,
        base: &url::Url,
        metrics: &ClientMetrics,
    ) -> Result<(SecretString, Duration), Error> {
        let refused = |status: Option<u16>, message: String| Error::TokenExchange {
            origin: self.origin.clone(),
            integration: self.describe(),
            status,
            message,
        };
        let subject = self
            .subject
            .subject_token()
            .await
            .map_err(|m| refused(None, format!("no subject token: {m}")))?;
        let mut url = base.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| Error::Config("platform URL cannot be a base".to_owned()))?;
            segments.pop_if_empty();
            segments.extend(EXCHANGE_ROUTE.trim_start_matches('/').split('/'));
        }
        let mut body = serde_json::json!({
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token_type": ID_TOKEN_TYPE,
            "subject_token": subject.expose_secret(),
            "provider_name": self.settings.provider_name,
        });
        if let Some(p) = &self.settings.project_key {
            body["project_key"] = serde_json::json!(p);
        }
        let body = bytes::Bytes::from(body.to_string());
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let sent = http
                .post(url.clone())
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "application/json")
                .body(body.clone())
                .send()
                .await;
            let elapsed = started.elapsed().as_secs_f64();
            let (retry, error) = match sent {
                Ok(resp) => {
                    let status = resp.status();
                    metrics.observe("access", "POST", status.as_str(), elapsed);
                    let bytes = resp.bytes().await.unwrap_or_default();
                    if status.is_success() {
                        let answer: ExchangeAnswer =
                            serde_json::from_slice(&bytes).map_err(|_| {
                                // serde's message could quote the token: a fixed text instead.
                                refused(
                                    Some(status.as_u16()),
                                    "the answer is not a token exchange response".to_owned(),
                                )
                            })?;
                        let lifetime = answer
                            .expires_in
                            .filter(|s| *s > 0)
                            .map(Duration::from_secs)
                            .unwrap_or(DEFAULT_LIFETIME);
                        return Ok((SecretString::from(answer.access_token), lifetime));
                    }
                    let code = status.as_u16();
                    let message = parse_error_message(ErrorFormat::CodeMessageErrors, &bytes);
                    (
                        code == 429 || code >= 500,
                        refused(Some(code), redact(&message, &subject)),
                    )
                }
                Err(e) => {
                    metrics.observe("access", "POST", "transport", elapsed);
                    let e = e.without_url();
                    (true, refused(None, format!("transport error: {e}")))
                }
            };
            if !retry || attempt >= ATTEMPTS {
                return Err(error);
            }
            metrics.retried("access", "POST", "token_exchange");
            tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
        }
    }
}

/// A platform message never echoes the subject token back to a user.
fn redact(message: &str, subject: &SecretString) -> String {
    let s = subject.expose_secret();
    if !s.is_empty() && message.contains(s) {
        message.replace(s, "<subject token>")
    } else {
        message.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    #[async_trait]
    impl SubjectTokenSource for Fixed {
        async fn subject_token(&self) -> Result<SecretString, String> {
            Ok(SecretString::from("subject-SECRET".to_owned()))
        }
        fn describe(&self) -> String {
            "service account \"ns/sa\"".to_owned()
        }
    }

    #[test]
    fn describes_without_secrets() {
        let s = OidcTokenSource::new(
            OidcExchangeSettings {
                provider_name: "k8s".into(),
                project_key: Some("p1".into()),
            },
            Arc::new(Fixed),
            "ClusterProviderConfig \"default\"",
        );
        assert_eq!(
            s.describe(),
            "OIDC integration \"k8s\" (project \"p1\") with service account \"ns/sa\""
        );
        assert!(!format!("{s:?}").contains("SECRET"));
        assert_eq!(
            redact(
                "bad token subject-SECRET",
                &SecretString::from("subject-SECRET".to_owned())
            ),
            "bad token <subject token>"
        );
    }
}
