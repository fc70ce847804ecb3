//! The client and its generic request pipeline, shared by every service module.
//!
//! A call is described by a [`Request`]: service, method, *path template* with its
//! parameters (the template, never the concrete path, labels metrics, spans and errors),
//! query, body, and two flags every call must decide on:
//!
//! - [`Idempotency`], given when the request is created: whether the call may be sent again
//!   when its outcome is unknown. A repository create is a `PUT` but is **not** idempotent
//!   (a second PUT of an existing key fails), an update that sends the full document is.
//! - [`Request::descriptor_write`]: the call rewrites Artifactory's configuration descriptor
//!   (repository create/update/delete, system configuration). Such calls are serialised per
//!   platform, because Artifactory fails overlapping descriptor writes with "Could not merge
//!   and save new descriptor".
//!
//! The pipeline for one call: take the descriptor lock (if a descriptor write), then per
//! attempt wait for the platform's throttling pause (set by a `Retry-After`) and the rate
//! limiter, send, classify, and retry according to [`crate::retry`].
//!
//! Contract for non-idempotent calls whose response is lost (connection dropped after the
//! request was sent, timeout): the client returns [`Error::Indeterminate`] and never resends.
//! The caller (the provider's create) must then observe the object by its deterministic key
//! (e.g. `GET /artifactory/api/repositories/{key}`) and only create again when it is absent.
//! Crossplane's reconciler does exactly that on its next pass, since it observes before it
//! creates.
//!
//! Logging: one span per call (`jfrog_request`: service, method, route template, status,
//! attempts, duration), debug events per attempt, a warning per retry. Headers, bodies,
//! query strings and concrete URLs are never logged.

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::{HeaderMap, Method};
use secrecy::ExposeSecret;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;
use tracing::Instrument;

use crate::config::{Credentials, JfrogClientBuilder, RateLimit, normalise_base_url, tls_config};
use crate::error::{Error, RequestContext};
use crate::metrics::ClientMetrics;
use crate::retry::{
    AttemptOutcome, DESCRIPTOR_MERGE_FAILURE, Decision, RetryPolicy, decide, parse_retry_after,
};
use crate::service::Service;

/// Whether a call may be sent again when its outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    /// Sending the call twice has the same effect as once (GET, full-document update,
    /// DELETE): retried on 5xx and lost responses.
    Idempotent,
    /// Sending twice differs from once (creates): retried only when the server certainly
    /// did not apply it (429, descriptor-merge failure, connection never established).
    NonIdempotent,
}

/// A JFrog Platform client: one per ProviderConfig, cheap to clone (shared state).
#[derive(Clone)]
pub struct JfrogClient {
    inner: Arc<Inner>,
    /// Set on a read-only client ([`JfrogClient::read_only`]): every write it was asked to
    /// send (and refused) is counted here.
    read_only: Option<Arc<AtomicU64>>,
}

struct Inner {
    http: reqwest::Client,
    base: url::Url,
    credentials: Credentials,
    retry: RetryPolicy,
    metrics: ClientMetrics,
    platform: Arc<PlatformState>,
    credentials_origin: Option<String>,
}

impl fmt::Debug for JfrogClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JfrogClient")
            .field("base_url", &self.inner.base.as_str())
            .field("credentials", &self.inner.credentials)
            .finish_non_exhaustive()
    }
}

/// State shared by the clients of one platform built with one [`Platforms`]: the rate
/// limiter, the throttling pause, the descriptor-write lock and the Artifactory version.
pub(crate) struct PlatformState {
    rate_limit: Option<RateLimit>,
    limiter: Option<DefaultDirectRateLimiter>,
    pause_until: Mutex<Option<Instant>>,
    descriptor_lock: tokio::sync::Mutex<()>,
    /// The platform's Artifactory version, once a caller asked for it
    /// ([`crate::artifactory::Artifactory::version_once`]).
    pub(crate) artifactory_version: tokio::sync::OnceCell<crate::artifactory::VersionInfo>,
}

impl PlatformState {
    fn new(rate_limit: Option<RateLimit>) -> Self {
        let limiter = rate_limit.map(|rl| {
            let per_second = NonZeroU32::new(rl.per_second.max(1)).unwrap_or(NonZeroU32::MIN);
            let burst = NonZeroU32::new(rl.burst.max(1)).unwrap_or(NonZeroU32::MIN);
            RateLimiter::direct(Quota::per_second(per_second).allow_burst(burst))
        });
        PlatformState {
            rate_limit,
            limiter,
            pause_until: Mutex::new(None),
            descriptor_lock: tokio::sync::Mutex::new(()),
            artifactory_version: tokio::sync::OnceCell::new(),
        }
    }

    /// Waits until the platform is not paused by a `Retry-After` and the limiter admits
    /// one request.
    async fn wait_turn(&self) {
        loop {
            let until = *self
                .pause_until
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t).await,
                _ => break,
            }
        }
        if let Some(limiter) = &self.limiter {
            limiter.until_ready().await;
        }
    }

    fn pause_for(&self, delay: Duration) {
        let until = Instant::now() + delay;
        let mut guard = self
            .pause_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none_or(|t| t < until) {
            *guard = Some(until);
        }
    }
}

/// The state the clients of one platform share (one rate limiter, one `Retry-After` pause,
/// one descriptor-write lock, the Artifactory version), by normalised base URL: clients
/// built with the same `Platforms` ([`crate::JfrogClientBuilder::platforms`]) share it; a
/// client built without one has its own. A provider process keeps one and hands it to
/// every place that builds a client. Weak references, so a platform no client uses any
/// more is dropped.
#[derive(Clone, Default)]
pub struct Platforms(Arc<Mutex<HashMap<String, Weak<PlatformState>>>>);

impl fmt::Debug for Platforms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Platforms")
    }
}

impl Platforms {
    /// An empty set: the first client of each platform starts its state.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self, key: &str, rate_limit: Option<RateLimit>) -> Arc<PlatformState> {
        let mut map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.retain(|_, w| w.strong_count() > 0);
        if let Some(existing) = map.get(key).and_then(Weak::upgrade) {
            // A different rate limit means a reconfigured ProviderConfig: a fresh state.
            if existing.rate_limit == rate_limit {
                return existing;
            }
        }
        let state = Arc::new(PlatformState::new(rate_limit));
        map.insert(key.to_owned(), Arc::downgrade(&state));
        state
    }
}

impl JfrogClient {
    /// Starts configuring a client for the platform at `base_url` (e.g.
    /// `https://acme.jfrog.io`).
    pub fn builder(base_url: impl Into<String>) -> JfrogClientBuilder {
        JfrogClientBuilder::new(base_url)
    }

    pub(crate) fn from_builder(b: JfrogClientBuilder) -> Result<JfrogClient, Error> {
        let base = normalise_base_url(&b.base_url)?;
        let tls = tls_config(b.ca_bundle_pem.as_deref())?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(b.connect_timeout)
            .timeout(b.request_timeout)
            .pool_idle_timeout(b.pool_idle_timeout)
            .pool_max_idle_per_host(b.pool_max_idle_per_host)
            .user_agent(b.user_agent.clone())
            .build()
            .map_err(|e| Error::Config(format!("HTTP client setup failed: {e}")))?;
        let platform = match &b.platforms {
            Some(p) => p.state(base.as_str(), b.rate_limit),
            None => Arc::new(PlatformState::new(b.rate_limit)),
        };
        Ok(JfrogClient {
            inner: Arc::new(Inner {
                http,
                base,
                credentials: b.credentials,
                retry: b.retry,
                metrics: b.metrics.unwrap_or_default(),
                platform,
                credentials_origin: b.credentials_origin,
            }),
            read_only: None,
        })
    }

    /// A read-only view of this client (same connection pool, credentials and limiter):
    /// it sends only `GET`, `HEAD` and requests marked [`Request::reads_only`]; any other
    /// request fails with [`Error::InvalidRequest`] before it leaves the process, and is
    /// counted ([`JfrogClient::refused_writes`]). `preview` observes through one, so that
    /// a write attempted by mistake can neither reach JFrog nor go unnoticed.
    pub fn read_only(&self) -> JfrogClient {
        JfrogClient {
            inner: self.inner.clone(),
            read_only: Some(self.read_only.clone().unwrap_or_default()),
        }
    }

    /// The state this client shares with the other clients of its platform.
    pub(crate) fn platform(&self) -> &PlatformState {
        &self.inner.platform
    }

    /// The writes a read-only client refused to send (0 for any other client).
    pub fn refused_writes(&self) -> u64 {
        self.read_only
            .as_ref()
            .map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// The normalised platform URL.
    pub fn base_url(&self) -> &url::Url {
        &self.inner.base
    }

    /// Whether `other` is this client (a clone of it), not merely one with the same URL:
    /// the same credentials, limiter and pool.
    pub fn same(&self, other: &JfrogClient) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The metric families this client records into.
    pub fn metrics(&self) -> &ClientMetrics {
        &self.inner.metrics
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// Starts a request to `service` with a path template relative to the service prefix
    /// (`"/api/repositories/{key}"`); `{name}` is one path segment, `{*name}` several
    /// (slashes kept). Parameters are given in order with [`Request::param`].
    pub fn request(
        &self,
        service: Service,
        method: Method,
        template: &'static str,
        idempotency: Idempotency,
    ) -> Request<'_> {
        Request {
            client: self,
            service,
            method,
            template,
            params: Vec::new(),
            query: Vec::new(),
            body: None,
            idempotency,
            descriptor_write: false,
            build_error: None,
            timeout: None,
            headers: HeaderMap::new(),
            reads_only: false,
        }
    }
}

/// One call being built; send it with [`Request::send`] or a typed `send_*`.
#[must_use = "a request does nothing until it is sent"]
pub struct Request<'a> {
    client: &'a JfrogClient,
    service: Service,
    method: Method,
    template: &'static str,
    params: Vec<String>,
    query: Vec<(String, String)>,
    body: Option<(Bytes, &'static str)>,
    idempotency: Idempotency,
    descriptor_write: bool,
    build_error: Option<String>,
    timeout: Option<Duration>,
    headers: HeaderMap,
    reads_only: bool,
}

impl fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Parameters and bodies are omitted: a body may hold a remote repository password.
        f.debug_struct("Request")
            .field("service", &self.service)
            .field("method", &self.method)
            .field("template", &self.template)
            .field("idempotency", &self.idempotency)
            .field("descriptor_write", &self.descriptor_write)
            .finish_non_exhaustive()
    }
}

impl<'a> Request<'a> {
    /// This request only reads, whatever its method (a `POST` search, a GraphQL query): a
    /// read-only client sends it.
    pub fn reads_only(mut self) -> Self {
        self.reads_only = true;
        self
    }

    /// The next path parameter, in template order.
    pub fn param(mut self, value: impl fmt::Display) -> Self {
        self.params.push(value.to_string());
        self
    }

    /// A query parameter (never logged).
    pub fn query(mut self, name: impl Into<String>, value: impl fmt::Display) -> Self {
        self.query.push((name.into(), value.to_string()));
        self
    }

    /// A query parameter when `value` is `Some`.
    pub fn query_opt(self, name: impl Into<String>, value: Option<impl fmt::Display>) -> Self {
        match value {
            Some(v) => self.query(name, v),
            None => self,
        }
    }

    /// A JSON body.
    pub fn json<T: Serialize + ?Sized>(mut self, body: &T) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.body = Some((Bytes::from(bytes), "application/json")),
            Err(e) => self.build_error = Some(format!("cannot serialise body: {e}")),
        }
        self
    }

    /// A text body with its content type.
    pub fn text(mut self, body: impl Into<String>, content_type: &'static str) -> Self {
        self.body = Some((Bytes::from(body.into()), content_type));
        self
    }

    /// A binary body with its content type (an artifact's bytes).
    pub fn bytes(mut self, body: impl Into<Bytes>, content_type: &'static str) -> Self {
        self.body = Some((body.into(), content_type));
        self
    }

    /// Overrides the client's per-attempt timeout for this call (e.g. a bulk list of
    /// thousands of repositories).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// An extra request header (never logged). `Authorization`, `Content-Type` and `Accept`
    /// are set by the client and body methods.
    pub fn header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        let name_parsed = http::HeaderName::from_bytes(name.as_bytes());
        match (name_parsed, http::HeaderValue::from_str(value.as_ref())) {
            (Ok(n), Ok(mut v)) => {
                v.set_sensitive(true);
                self.headers.insert(n, v);
            }
            _ => self.build_error = Some(format!("invalid header {name}")),
        }
        self
    }

    /// Marks the call as a configuration-descriptor write: serialised per platform.
    pub fn descriptor_write(mut self) -> Self {
        self.descriptor_write = true;
        self
    }

    fn context(&self) -> RequestContext {
        RequestContext {
            service: self.service,
            method: self.method.clone(),
            route: format!("{}{}", self.service.base_path(), self.template),
        }
    }

    fn build_url(&self, ctx: &RequestContext) -> Result<url::Url, Error> {
        let invalid = |message: String| Error::InvalidRequest {
            ctx: ctx.clone(),
            message,
        };
        let mut url = self.client.inner.base.clone();
        let mut params = self.params.iter();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| invalid("platform URL cannot be a base".to_owned()))?;
            segments.pop_if_empty();
            let literal = self.service.base_path().trim_start_matches('/');
            segments.push(literal);
            for seg in self.template.trim_start_matches('/').split('/') {
                if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    let value = params
                        .next()
                        .ok_or_else(|| invalid(format!("missing path parameter {name}")))?;
                    if value.is_empty() {
                        return Err(invalid(format!("path parameter {name} is empty")));
                    }
                    if name.starts_with('*') {
                        for part in value.split('/').filter(|p| !p.is_empty()) {
                            segments.push(part);
                        }
                    } else {
                        if value == "." || value == ".." {
                            return Err(invalid(format!("path parameter {name} is {value}")));
                        }
                        segments.push(value);
                    }
                } else {
                    // Literal segments are written by us; they need no escaping.
                    segments.extend(std::iter::once(seg));
                }
            }
        }
        if params.next().is_some() {
            return Err(invalid(
                "more path parameters than the template has".to_owned(),
            ));
        }
        if !self.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &self.query {
                pairs.append_pair(k, v);
            }
        }
        Ok(url)
    }

    /// Sends the call and returns the successful (2xx) response; other statuses
    /// become typed [`Error`]s.
    pub async fn send(self) -> Result<Response, Error> {
        let ctx = self.context();
        if let Some(message) = self.build_error.clone() {
            return Err(Error::InvalidRequest { ctx, message });
        }
        if let Some(refused) = &self.client.read_only
            && !self.reads_only
            && !matches!(self.method, Method::GET | Method::HEAD)
        {
            refused.fetch_add(1, Ordering::Relaxed);
            tracing::error!(route = %ctx.route, method = %self.method, "a read-only client refused to send a write");
            return Err(Error::InvalidRequest {
                ctx,
                message: "refused: this client is read-only (preview), and the request writes"
                    .into(),
            });
        }
        let url = self.build_url(&ctx)?;
        let span = tracing::debug_span!(
            "jfrog_request",
            service = self.service.as_str(),
            method = %self.method,
            route = %ctx.route,
            status = tracing::field::Empty,
            attempts = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        self.execute(ctx, url, span.clone()).instrument(span).await
    }

    async fn execute(
        self,
        ctx: RequestContext,
        url: url::Url,
        span: tracing::Span,
    ) -> Result<Response, Error> {
        let inner = &self.client.inner;
        let platform = &inner.platform;
        let started = Instant::now();
        let _descriptor_guard = if self.descriptor_write {
            Some(platform.descriptor_lock.lock().await)
        } else {
            None
        };
        let idempotent = self.idempotency == Idempotency::Idempotent;
        let service = self.service.as_str();
        let method = self.method.as_str();
        let mut retry = 0u32;
        // Recorded on our own span (not `Span::current()`, which is the caller's span
        // when ours is disabled by the level filter).
        let finish = |status: &str, attempts: u32| {
            span.record("status", status);
            span.record("attempts", attempts);
            span.record("duration_ms", started.elapsed().as_millis() as u64);
            tracing::debug!(status, attempts, "JFrog request finished");
        };
        // An exchanged token the platform refused is renewed and the call sent once more,
        // whatever its idempotency: a 401 means the platform did not act on it.
        let mut renewed_after_401 = false;
        loop {
            platform.wait_turn().await;
            let bearer = match &inner.credentials {
                Credentials::OidcExchange(source) => {
                    match source.token(&inner.http, &inner.base, &inner.metrics).await {
                        Ok(t) => Some(t),
                        Err(e) => {
                            finish("token_exchange", retry + 1);
                            return Err(e);
                        }
                    }
                }
                _ => None,
            };
            let attempt_started = Instant::now();
            let result = self.send_once(&url, bearer.as_ref()).await;
            let elapsed = attempt_started.elapsed().as_secs_f64();
            let (outcome, error) = match result {
                Ok((status, headers, body)) => {
                    inner
                        .metrics
                        .observe(service, method, status.as_str(), elapsed);
                    tracing::debug!(
                        status = status.as_u16(),
                        elapsed_ms = (elapsed * 1000.0) as u64,
                        "JFrog attempt"
                    );
                    let code = status.as_u16();
                    if code == 401
                        && !renewed_after_401
                        && let (Credentials::OidcExchange(source), Some(token)) =
                            (&inner.credentials, &bearer)
                    {
                        tracing::debug!("exchanged JFrog token refused (401): renewing it");
                        source.invalidate(token).await;
                        renewed_after_401 = true;
                        continue;
                    }
                    // Redirects were followed by reqwest; a 3xx left over is not a success.
                    if status.is_success() {
                        finish(status.as_str(), retry + 1);
                        return Ok(Response {
                            ctx,
                            status: code,
                            headers,
                            body,
                        });
                    }
                    let retry_after = headers
                        .get(http::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, chrono::Utc::now()));
                    let merge_failure = code >= 400 && contains(&body, DESCRIPTOR_MERGE_FAILURE);
                    let outcome = AttemptOutcome::Status {
                        status: code,
                        merge_failure,
                        retry_after,
                    };
                    let error = Error::from_response(ctx.clone(), code, &body, retry_after)
                        .refused_credentials(inner.credentials_origin.as_deref());
                    (outcome, error)
                }
                Err(e) => {
                    inner.metrics.observe(service, method, "transport", elapsed);
                    let source = e.without_url();
                    let not_sent = source.is_connect();
                    tracing::debug!(error = %source, not_sent, elapsed_ms = (elapsed * 1000.0) as u64, "JFrog attempt failed");
                    if not_sent {
                        (
                            AttemptOutcome::NotSent,
                            Error::Transport {
                                ctx: ctx.clone(),
                                source,
                            },
                        )
                    } else if idempotent {
                        (
                            AttemptOutcome::Lost,
                            Error::Transport {
                                ctx: ctx.clone(),
                                source,
                            },
                        )
                    } else {
                        (
                            AttemptOutcome::Lost,
                            Error::Indeterminate {
                                ctx: ctx.clone(),
                                source,
                            },
                        )
                    }
                }
            };
            match decide(&inner.retry, idempotent, retry, outcome) {
                Decision::Retry {
                    delay,
                    reason,
                    server_requested,
                } => {
                    inner.metrics.retried(service, method, reason.as_str());
                    tracing::warn!(
                        reason = reason.as_str(),
                        retry = retry + 1,
                        delay_ms = delay.as_millis() as u64,
                        error = %error,
                        "retrying JFrog request"
                    );
                    if server_requested {
                        // The platform asked everybody to slow down, not just this call.
                        platform.pause_for(delay);
                    } else {
                        tokio::time::sleep(delay).await;
                    }
                    retry += 1;
                }
                Decision::GiveUp => {
                    // Out of retries, the platform's pause still holds for every other call.
                    if let Some(d) = error.retry_after()
                        && d <= inner.retry.max_retry_after
                    {
                        platform.pause_for(d);
                    }
                    let status = error
                        .status()
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "transport".to_owned());
                    finish(&status, retry + 1);
                    return Err(error);
                }
            }
        }
    }

    async fn send_once(
        &self,
        url: &url::Url,
        bearer: Option<&secrecy::SecretString>,
    ) -> Result<(http::StatusCode, HeaderMap, Bytes), reqwest::Error> {
        let inner = &self.client.inner;
        let mut rb = inner
            .http
            .request(self.method.clone(), url.clone())
            .header(http::header::ACCEPT, "application/json, text/plain, */*")
            .headers(self.headers.clone());
        if let Some(timeout) = self.timeout {
            rb = rb.timeout(timeout);
        }
        rb = match &inner.credentials {
            Credentials::AccessToken(token) => rb.bearer_auth(token.expose_secret()),
            Credentials::Basic { username, password } => {
                rb.basic_auth(username, Some(password.expose_secret()))
            }
            Credentials::ApiKey(key) => {
                match http::HeaderValue::from_str(key.expose_secret()) {
                    Ok(mut value) => {
                        value.set_sensitive(true);
                        rb.header("X-JFrog-Art-Api", value)
                    }
                    // An API key that is not a valid header value cannot authenticate;
                    // sending without it yields a clear 401.
                    Err(_) => rb,
                }
            }
            Credentials::OidcExchange(_) => match bearer {
                Some(token) => rb.bearer_auth(token.expose_secret()),
                None => rb,
            },
            Credentials::Anonymous => rb,
        };
        if let Some((body, content_type)) = &self.body {
            rb = rb
                .header(http::header::CONTENT_TYPE, *content_type)
                .body(body.clone());
        }
        let resp = rb.send().await?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp.bytes().await?;
        Ok((status, headers, body))
    }

    /// Sends and decodes a JSON body into `T`.
    pub async fn send_json<T: DeserializeOwned>(self) -> Result<T, Error> {
        self.send().await?.json()
    }

    /// Sends and returns the JSON body as a [`serde_json::Value`].
    pub async fn send_value(self) -> Result<serde_json::Value, Error> {
        self.send().await?.json()
    }

    /// Sends and returns the body as text.
    pub async fn send_text(self) -> Result<String, Error> {
        Ok(self.send().await?.text())
    }

    /// Sends and discards the body.
    pub async fn send_empty(self) -> Result<(), Error> {
        self.send().await.map(|_| ())
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    let needle = needle.as_bytes();
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A successful response.
#[derive(Debug, Clone)]
pub struct Response {
    ctx: RequestContext,
    status: u16,
    headers: HeaderMap,
    body: Bytes,
}

impl Response {
    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The raw body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The body as (lossy) UTF-8 text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Decodes the body as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|e| Error::Decode {
            ctx: self.ctx.clone(),
            status: self.status,
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(url: &str) -> JfrogClient {
        JfrogClient::builder(url).access_token("t").build().unwrap()
    }

    fn url_of(req: Request<'_>) -> Result<String, Error> {
        let ctx = req.context();
        req.build_url(&ctx).map(|u| u.to_string())
    }

    /// A read-only client refuses every write before it leaves the process (nothing
    /// listens on the URL: a request that were sent would fail as a transport error) and
    /// counts it; reads and `reads_only` requests are sent.
    #[tokio::test]
    async fn a_read_only_client_refuses_writes_and_counts_them() {
        let rw = client("http://127.0.0.1:9");
        let ro = rw.read_only();
        for method in [Method::PUT, Method::POST, Method::DELETE, Method::PATCH] {
            let e = ro
                .request(
                    Service::Artifactory,
                    method,
                    "/api/x",
                    Idempotency::Idempotent,
                )
                .send()
                .await
                .unwrap_err();
            assert!(
                matches!(&e, Error::InvalidRequest { message, .. } if message.contains("read-only")),
                "{e}"
            );
        }
        assert_eq!(ro.refused_writes(), 4);
        // The view of a view shares the count.
        let again = ro.read_only();
        let _ = again
            .request(
                Service::Xray,
                Method::POST,
                "/api/v1/x",
                Idempotency::Idempotent,
            )
            .send()
            .await;
        assert_eq!(ro.refused_writes(), 5);
        // Reads and marked POSTs are sent (and fail only because nothing listens).
        let get = ro
            .request(
                Service::Artifactory,
                Method::GET,
                "/api/x",
                Idempotency::Idempotent,
            )
            .send()
            .await
            .unwrap_err();
        assert!(matches!(get, Error::Transport { .. }), "{get}");
        let search = ro
            .request(
                Service::Xray,
                Method::POST,
                "/api/v1/reports",
                Idempotency::Idempotent,
            )
            .reads_only()
            .send()
            .await
            .unwrap_err();
        assert!(matches!(search, Error::Transport { .. }), "{search}");
        assert_eq!(ro.refused_writes(), 5);
        assert_eq!(rw.refused_writes(), 0);
    }

    #[test]
    fn builds_urls_from_templates() {
        let c = client("https://acme.jfrog.io/artifactory");
        let u = url_of(
            c.request(
                Service::Artifactory,
                Method::GET,
                "/api/repositories/{key}",
                Idempotency::Idempotent,
            )
            .param("libs-release"),
        )
        .unwrap();
        assert_eq!(
            u,
            "https://acme.jfrog.io/artifactory/api/repositories/libs-release"
        );
        // Parameters are escaped as single segments.
        let u = url_of(
            c.request(
                Service::Access,
                Method::GET,
                "/api/v2/users/{name}",
                Idempotency::Idempotent,
            )
            .param("a b/c?d"),
        )
        .unwrap();
        assert_eq!(u, "https://acme.jfrog.io/access/api/v2/users/a%20b%2Fc%3Fd");
        // Multi-segment parameters and queries.
        let u = url_of(
            c.request(
                Service::Artifactory,
                Method::GET,
                "/api/storage/{repo}/{*path}",
                Idempotency::Idempotent,
            )
            .param("r")
            .param("a/b c/d.jar")
            .query("type", "local")
            .query_opt("project", None::<&str>),
        )
        .unwrap();
        assert_eq!(
            u,
            "https://acme.jfrog.io/artifactory/api/storage/r/a/b%20c/d.jar?type=local"
        );
        // A context path is kept.
        let c = client("http://127.0.0.1:8082/jfrog/");
        let u = url_of(c.request(
            Service::Xray,
            Method::GET,
            "/api/v1/system/ping",
            Idempotency::Idempotent,
        ))
        .unwrap();
        assert_eq!(u, "http://127.0.0.1:8082/jfrog/xray/api/v1/system/ping");
    }

    #[test]
    fn rejects_bad_parameters() {
        let c = client("https://acme.jfrog.io");
        let r = |p: Option<&str>| {
            let req = c.request(
                Service::Artifactory,
                Method::DELETE,
                "/api/repositories/{key}",
                Idempotency::Idempotent,
            );
            url_of(match p {
                Some(p) => req.param(p),
                None => req,
            })
        };
        // An empty key would address the whole collection.
        assert!(matches!(r(Some("")), Err(Error::InvalidRequest { .. })));
        assert!(matches!(r(Some("..")), Err(Error::InvalidRequest { .. })));
        assert!(matches!(r(None), Err(Error::InvalidRequest { .. })));
        let e = url_of(
            c.request(
                Service::Artifactory,
                Method::GET,
                "/api/repositories",
                Idempotency::Idempotent,
            )
            .param("x"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "GET /artifactory/api/repositories: invalid request: more path parameters than the template has"
        );
    }

    #[test]
    fn debug_output_has_no_secrets() {
        let c = JfrogClient::builder("https://acme.jfrog.io")
            .basic_auth("admin", "pw-SECRET-1")
            .build()
            .unwrap();
        let s = format!("{c:?}");
        assert!(s.contains("admin") && !s.contains("pw-SECRET-1"), "{s}");
        let req = c
            .request(
                Service::Artifactory,
                Method::PUT,
                "/api/repositories/{key}",
                Idempotency::NonIdempotent,
            )
            .param("k")
            .json(&serde_json::json!({"password": "remote-SECRET-2"}));
        assert!(!format!("{req:?}").contains("SECRET"));
    }

    #[test]
    fn rate_limit_quota_allows_the_burst_then_throttles() {
        let s = PlatformState::new(Some(RateLimit {
            per_second: 1,
            burst: 3,
        }));
        let limiter = s.limiter.as_ref().unwrap();
        for _ in 0..3 {
            assert!(limiter.check().is_ok());
        }
        assert!(limiter.check().is_err());
        assert!(PlatformState::new(None).limiter.is_none());
    }

    #[tokio::test]
    async fn retry_after_pauses_the_whole_platform() {
        let s = PlatformState::new(None);
        // Not paused: a turn is granted at once.
        tokio::time::timeout(Duration::from_secs(30), s.wait_turn())
            .await
            .unwrap();
        s.pause_for(Duration::from_secs(3600));
        // A shorter pause never shortens a longer one.
        s.pause_for(Duration::from_millis(1));
        assert!(
            tokio::time::timeout(Duration::from_millis(100), s.wait_turn())
                .await
                .is_err()
        );
    }

    #[test]
    fn header_values_are_validated() {
        let c = client("https://acme.jfrog.io");
        let req = c
            .request(
                Service::Access,
                Method::GET,
                "/api/v1/system/ping",
                Idempotency::Idempotent,
            )
            .header("x-jfrog-test", "bad\nvalue");
        assert!(req.build_error.is_some());
    }

    #[test]
    fn platform_state_is_shared_per_url_and_rate_limit() {
        let rl = Some(RateLimit {
            per_second: 7,
            burst: 3,
        });
        let platforms = Platforms::new();
        let a = platforms.state("https://shared.example/", rl);
        let b = platforms.state("https://shared.example/", rl);
        assert!(Arc::ptr_eq(&a, &b));
        let c = platforms.state("https://other.example/", rl);
        assert!(!Arc::ptr_eq(&a, &c));
        let d = platforms.state("https://shared.example/", None);
        assert!(!Arc::ptr_eq(&a, &d));
        // Another set (another process's, or a client built without one) has its own.
        let e = Platforms::new().state("https://shared.example/", rl);
        assert!(!Arc::ptr_eq(&a, &e));
    }
}
