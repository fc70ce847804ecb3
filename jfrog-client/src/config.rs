//! Client configuration: platform URL, credentials, TLS trust, timeouts, pooling, rate
//! limit and retry policy, and the builder that turns them into a [`JfrogClient`].
//!
//! Credentials live in [`secrecy::SecretString`] and are exposed only while a request's
//! `Authorization` header is written (a header reqwest marks sensitive). Neither the
//! builder nor the client prints them in `Debug`.
//!
//! TLS: the workspace builds reqwest without a default crypto provider, so the client builds
//! its own rustls `ClientConfig` with the *ring* provider and hands it to reqwest
//! preconfigured. Trust roots are the system's (honouring `SSL_CERT_FILE` / `SSL_CERT_DIR`),
//! falling back to the compiled-in Mozilla roots when the system has none (distroless
//! images), plus the PEM CA bundle of a self-signed on-prem platform when one is given.
//!
//! Deviation: a base URL ending in `/artifactory` is accepted and the suffix dropped, since
//! users copy Artifactory URLs; any other path prefix (a platform behind a context path) is
//! kept.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use secrecy::SecretString;

use crate::client::JfrogClient;
use crate::error::Error;
use crate::metrics::ClientMetrics;
use crate::oidc::OidcTokenSource;
use crate::retry::RetryPolicy;

/// How the client authenticates.
#[derive(Clone, Default)]
pub enum Credentials {
    /// An access token, sent as `Authorization: Bearer <token>` (the recommended form).
    AccessToken(SecretString),
    /// Basic authentication: a user name with a password, an API key or an access token as
    /// the password.
    Basic {
        /// The user name (not secret).
        username: String,
        /// The password, API key or token.
        password: SecretString,
    },
    /// A (deprecated) Artifactory API key sent in the `X-JFrog-Art-Api` header.
    ApiKey(SecretString),
    /// An access token obtained and renewed through the platform's OIDC token exchange
    /// (shared by every client of one configuration; see [`crate::oidc`]).
    OidcExchange(Arc<OidcTokenSource>),
    /// No credentials (anonymous access, ping).
    #[default]
    Anonymous,
}

impl Credentials {
    /// An access token.
    pub fn access_token(token: impl Into<String>) -> Self {
        Credentials::AccessToken(SecretString::from(token.into()))
    }

    /// A user name and password (or API key, or token).
    pub fn basic(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials::Basic {
            username: username.into(),
            password: SecretString::from(password.into()),
        }
    }

    /// An Artifactory API key.
    pub fn api_key(key: impl Into<String>) -> Self {
        Credentials::ApiKey(SecretString::from(key.into()))
    }

    /// The kind of credentials, for diagnostics: never the secret.
    pub fn kind(&self) -> &'static str {
        match self {
            Credentials::AccessToken(_) => "access-token",
            Credentials::Basic { .. } => "basic",
            Credentials::ApiKey(_) => "api-key",
            Credentials::OidcExchange(_) => "oidc-exchange",
            Credentials::Anonymous => "anonymous",
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::AccessToken(_) => f.write_str("AccessToken([REDACTED])"),
            Credentials::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"[REDACTED]")
                .finish(),
            Credentials::ApiKey(_) => f.write_str("ApiKey([REDACTED])"),
            Credentials::OidcExchange(source) => {
                f.debug_tuple("OidcExchange").field(source).finish()
            }
            Credentials::Anonymous => f.write_str("Anonymous"),
        }
    }
}

/// A token-bucket limit on requests sent to one platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained requests per second.
    pub per_second: u32,
    /// Requests that may be sent at once after a quiet period.
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            per_second: 50,
            burst: 100,
        }
    }
}

/// Builder of a [`JfrogClient`]; obtained from [`JfrogClient::builder`].
#[derive(Clone)]
pub struct JfrogClientBuilder {
    pub(crate) base_url: String,
    pub(crate) credentials: Credentials,
    pub(crate) ca_bundle_pem: Option<Vec<u8>>,
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) pool_idle_timeout: Duration,
    pub(crate) pool_max_idle_per_host: usize,
    pub(crate) rate_limit: Option<RateLimit>,
    pub(crate) retry: RetryPolicy,
    pub(crate) metrics: Option<ClientMetrics>,
    pub(crate) user_agent: String,
    pub(crate) platforms: Option<crate::client::Platforms>,
    pub(crate) credentials_origin: Option<String>,
}

impl fmt::Debug for JfrogClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JfrogClientBuilder")
            .field("base_url", &self.base_url)
            .field("credentials", &self.credentials)
            .field("ca_bundle", &self.ca_bundle_pem.as_ref().map(|b| b.len()))
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("rate_limit", &self.rate_limit)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl JfrogClientBuilder {
    pub(crate) fn new(base_url: impl Into<String>) -> Self {
        JfrogClientBuilder {
            base_url: base_url.into(),
            credentials: Credentials::Anonymous,
            ca_bundle_pem: None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            pool_idle_timeout: Duration::from_secs(90),
            pool_max_idle_per_host: 32,
            rate_limit: Some(RateLimit::default()),
            retry: RetryPolicy::default(),
            metrics: None,
            user_agent: format!("crossplane-provider-jfrog/{}", env!("CARGO_PKG_VERSION")),
            platforms: None,
            credentials_origin: None,
        }
    }

    /// Sets the credentials.
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// Authenticates with an access token (Bearer).
    pub fn access_token(self, token: impl Into<String>) -> Self {
        self.credentials(Credentials::access_token(token))
    }

    /// Authenticates with a user name and password (or API key or token as password).
    pub fn basic_auth(self, username: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials(Credentials::basic(username, password))
    }

    /// Trusts the certificates of this PEM bundle in addition to the system roots (for a
    /// platform with a self-signed or private CA).
    pub fn ca_bundle_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_bundle_pem = Some(pem.into());
        self
    }

    /// Time allowed to establish a connection (TCP and TLS). Default 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for one attempt, from sending to the end of the response body.
    /// Default 60 s.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long an idle pooled connection is kept. Default 90 s.
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.pool_idle_timeout = timeout;
        self
    }

    /// Most idle connections kept to the platform. Default 32.
    pub fn pool_max_idle_per_host(mut self, max: usize) -> Self {
        self.pool_max_idle_per_host = max;
        self
    }

    /// The client-side rate limit for the platform; `None` disables it. Default 50 rps,
    /// burst 100.
    pub fn rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }

    /// The retry policy. Default: 5 retries, 200 ms base, 10 s cap, `Retry-After` up to 60 s.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Records request metrics into these families (share one across all clients of a
    /// process). Default: private families, readable with [`JfrogClient::metrics`].
    pub fn metrics(mut self, metrics: ClientMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The `User-Agent` header.
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Where the credentials come from, in words (e.g. `the credentials of
    /// ClusterProviderConfig "default" (secret "ns/name" key "token")`), never the value: a 401
    /// answer then says which credentials the platform refused, so a user knows what to fix.
    pub fn credentials_origin(mut self, origin: impl Into<String>) -> Self {
        self.credentials_origin = Some(origin.into());
        self
    }

    /// Share the platform's state (one rate limiter, one throttling pause, one
    /// descriptor-write lock, the Artifactory version) with the other clients built with
    /// `platforms` for the same URL: several ProviderConfigs may point at one platform.
    /// Without it this client has its own.
    pub fn platforms(mut self, platforms: &crate::client::Platforms) -> Self {
        self.platforms = Some(platforms.clone());
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<JfrogClient, Error> {
        JfrogClient::from_builder(self)
    }
}

/// Normalises the platform URL: parses it, requires http(s), drops a trailing slash and a
/// trailing `/artifactory`, and rejects credentials, query and fragment in the URL.
pub(crate) fn normalise_base_url(raw: &str) -> Result<url::Url, Error> {
    let mut url = url::Url::parse(raw.trim())
        .map_err(|e| Error::Config(format!("platform URL is not a valid URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::Config(format!(
            "platform URL must use http or https, not {}",
            url.scheme()
        )));
    }
    if url.host_str().is_none() {
        return Err(Error::Config("platform URL has no host".to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        // Never echo the URL here: it holds credentials.
        return Err(Error::Config(
            "platform URL must not contain credentials; configure them separately".to_owned(),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::Config(
            "platform URL must not contain a query or fragment".to_owned(),
        ));
    }
    let mut path = url.path().trim_end_matches('/').to_owned();
    if let Some(stripped) = path.strip_suffix("/artifactory") {
        path = stripped.to_owned();
    }
    url.set_path(&path);
    Ok(url)
}

/// The system's trust roots, or Mozilla's when the system has none; loaded once per
/// process (reading a certificate directory for every client would be wasteful, since a
/// client is built per ProviderConfig).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let native = rustls_native_certs::load_native_certs();
        let mut probe = rustls::RootCertStore::empty();
        let (added, _ignored) = probe.add_parsable_certificates(native.certs.iter().cloned());
        if added > 0 {
            native.certs
        } else {
            webpki_root_certs::TLS_SERVER_ROOT_CERTS.to_vec()
        }
    })
}

/// Builds the rustls configuration: ring provider, system roots (or Mozilla's when the
/// system has none) plus the optional PEM bundle.
pub(crate) fn tls_config(ca_bundle_pem: Option<&[u8]>) -> Result<rustls::ClientConfig, Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(system_roots().iter().cloned());
    if let Some(pem) = ca_bundle_pem {
        let mut count = 0usize;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert =
                cert.map_err(|e| Error::Config(format!("CA bundle is not valid PEM: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| Error::Config(format!("CA bundle certificate rejected: {e}")))?;
            count += 1;
        }
        if count == 0 {
            return Err(Error::Config(
                "CA bundle contains no PEM certificate".to_owned(),
            ));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_secrets() {
        let b = JfrogClientBuilder::new("https://acme.jfrog.io").basic_auth("admin", "hunter2-pw");
        let s = format!("{b:?}");
        assert!(s.contains("admin"));
        assert!(!s.contains("hunter2-pw"), "{s}");
        let c = Credentials::access_token("tok-SECRET-123");
        assert!(!format!("{c:?}").contains("SECRET"));
        let c = Credentials::api_key("key-SECRET-123");
        assert!(!format!("{c:?}").contains("SECRET"));
        assert_eq!(c.kind(), "api-key");
    }

    #[test]
    fn base_url_normalisation() {
        let u = normalise_base_url("https://acme.jfrog.io/").unwrap();
        assert_eq!(u.as_str(), "https://acme.jfrog.io/");
        let u = normalise_base_url("https://acme.jfrog.io/artifactory/").unwrap();
        assert_eq!(u.path(), "/");
        let u = normalise_base_url("http://host:8082/jfrog/artifactory").unwrap();
        assert_eq!(u.path(), "/jfrog");
        assert!(normalise_base_url("ftp://x").is_err());
        assert!(normalise_base_url("not a url").is_err());
        assert!(normalise_base_url("https://h/?a=b").is_err());
        let e = normalise_base_url("https://admin:pw-SECRET@h/").unwrap_err();
        assert!(!e.to_string().contains("pw-SECRET"));
    }

    #[test]
    fn ca_bundle_validation() {
        assert!(tls_config(None).is_ok());
        let e = tls_config(Some(b"not pem")).unwrap_err();
        assert!(e.to_string().contains("no PEM certificate"), "{e}");
        // A PEM block with garbage inside is rejected too.
        let bad = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(tls_config(Some(bad)).is_err());
    }
}
