//! The OIDC token exchange, as the Access service does it: `POST /access/api/v1/oidc/token`
//! turns a workload's signed OIDC token into a short-lived JFrog access token, under the
//! platform's OIDC integrations (`/access/api/v1/oidc`, the OIDCConfiguration Kind) and
//! identity mappings (`/access/api/v1/oidc/{provider}/identity_mappings`, OIDCIdentityMapping).
//!
//! The request is RFC 8693's: `grant_type` `urn:ietf:params:oauth:grant-type:token-exchange`,
//! `subject_token_type` `urn:ietf:params:oauth:token-type:id_token` (or `...:jwt`),
//! `subject_token`, the integration's `provider_name` and optionally `project_key` (the
//! project's mappings then apply). What is checked, in order, each refusal with its own
//! Access error:
//!
//! 1. the integration exists (else 404);
//! 2. the subject token is a JWS whose `iss` is the integration's `issuer_url`; the issuer's
//!    discovery document (`<issuer>/.well-known/openid-configuration`) and the JWKS it names
//!    are fetched over HTTPS, and the signature verified with the key of the token's `kid`
//!    (RS256 or ES256; an unsigned `alg: none` token is refused);
//! 3. `exp` is in the future (and `nbf`, when present, not ahead by more than a minute);
//! 4. `aud` holds the integration's `audience`, when the integration sets one;
//! 5. an identity mapping matches: the mappings of the integration (the project's, with
//!    `project_key`) in ascending `priority` (1 is the highest), the first whose every
//!    `claims` entry matches the token's claim of that name (strings with `*` wildcards, nested
//!    objects member by member, a list claim when one element matches, anything else by
//!    equality);
//! 6. the token is issued with the mapping's `token_spec`: `scope` (default
//!    `applied-permissions/user`; `applied-permissions/admin` gives admin rights), `username`
//!    (else `username_pattern` with `{{claim}}` replaced, else the token's `sub`) and
//!    `expires_in` (default 60 s, JFrog's), capped by the simulator's
//!    `maxTokenLifetimeSeconds`; a request with an expired issued token gets 401.
//!
//! The answer: `access_token`, `token_type` (`Bearer`), `expires_in`, `scope`,
//! `issued_token_type` (`urn:ietf:params:oauth:token-type:access_token`) and `username`.
//!
//! Admin API (no authentication, like the rest of `/__sim/`): `PUT /__sim/oidc` with
//! `{"caPem": "...", "maxTokenLifetimeSeconds": 30}` adds a CA certificate trusted for
//! issuers (the simulator trusts no public roots) and sets the lifetime cap, and
//! `{"revokeIssued": true}` revokes every token the exchange issued; `GET /__sim/oidc`
//! shows them with the number of exchanges answered and refused (and answered per subject
//! `sub`), `GET /__sim/oidc/tokens` the last issued tokens (for tests that look for them where
//! they must not be).
//!
//! Deviations: the issuer's documents are fetched for every exchange (no JWKS cache); the
//! refusal texts are the simulator's own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

/// Collections the platform Kinds write (see `services::platform`).
const INTEGRATIONS: &str = "access_oidc";
const MAPPINGS: &str = "access_oidc_identity_mappings";
/// JFrog's default `token_spec.expires_in`.
const DEFAULT_EXPIRES_IN: u64 = 60;
/// Clock skew allowed for `nbf`/`iat`.
const LEEWAY_SECONDS: i64 = 60;

/// The exchange's settings and counters.
#[derive(Default)]
pub(crate) struct OidcState {
    inner: Mutex<Settings>,
}

#[derive(Default, Clone)]
struct Settings {
    ca_pem: Vec<String>,
    max_lifetime: Option<u64>,
    issued: u64,
    refused: u64,
    /// Issued tokens per subject token `sub`.
    by_subject: std::collections::BTreeMap<String, u64>,
    /// The last issued tokens (for tests that look for them where they must not be).
    tokens: std::collections::VecDeque<String>,
}

/// Issued tokens kept for `GET /__sim/oidc/tokens`.
const KEPT_TOKENS: usize = 2000;

impl std::fmt::Debug for OidcState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcState").finish_non_exhaustive()
    }
}

impl OidcState {
    fn settings(&self) -> Settings {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn count(&self, issued: Option<(&str, &str)>) {
        let mut s = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match issued {
            Some((subject, token)) => {
                s.issued += 1;
                *s.by_subject.entry(subject.to_owned()).or_default() += 1;
                if s.tokens.len() >= KEPT_TOKENS {
                    s.tokens.pop_front();
                }
                s.tokens.push_back(token.to_owned());
            }
            None => s.refused += 1,
        }
    }
}

/// The exchange route (behind the request pipeline: counted, faults applied).
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/access/api/v1/oidc/token", post(exchange))
}

/// The admin route.
pub(crate) fn admin_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/__sim/oidc", get(get_settings).put(put_settings))
        .route("/__sim/oidc/tokens", get(get_tokens))
}

async fn get_tokens(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({"tokens": s.oidc.settings().tokens}))
}

async fn get_settings(State(s): State<Arc<Shared>>) -> Json<Value> {
    let st = s.oidc.settings();
    Json(json!({
        "caCertificates": st.ca_pem.len(),
        "maxTokenLifetimeSeconds": st.max_lifetime,
        "issued": st.issued,
        "refused": st.refused,
        "issuedBySubject": st.by_subject,
    }))
}

async fn put_settings(State(s): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let mut st = s
        .oidc
        .inner
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(pem) = body.get("caPem").and_then(Value::as_str) {
        st.ca_pem.push(pem.to_owned());
    }
    if let Some(v) = body.get("maxTokenLifetimeSeconds") {
        st.max_lifetime = v.as_u64().filter(|s| *s > 0);
    }
    drop(st);
    if body.get("revokeIssued").and_then(Value::as_bool) == Some(true) {
        let revoked = s.auth.revoke_expiring_tokens();
        return Json(json!({"revoked": revoked})).into_response();
    }
    StatusCode::NO_CONTENT.into_response()
}

fn refuse(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, status, message)
}

async fn exchange(State(s): State<Arc<Shared>>, body: axum::body::Bytes) -> Response {
    let result = exchange_inner(&s, &body).await;
    match result {
        Ok((v, subject)) => {
            s.oidc
                .count(Some((&subject, v["access_token"].as_str().unwrap_or(""))));
            Json(v).into_response()
        }
        Err(e) => {
            s.oidc.count(None);
            e.into_response()
        }
    }
}

/// The answer and the subject token's `sub`.
async fn exchange_inner(s: &Shared, body: &[u8]) -> Result<(Value, String), ApiError> {
    // JFrog's clients send JSON; a form body (RFC 8693's encoding) is read as well.
    let req: Map<String, Value> = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => m,
        _ => url::form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
            .collect(),
    };
    let field = |k: &str| req.get(k).and_then(Value::as_str).unwrap_or("").trim();
    if field("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "grant_type must be urn:ietf:params:oauth:grant-type:token-exchange",
        ));
    }
    if !matches!(
        field("subject_token_type"),
        "urn:ietf:params:oauth:token-type:id_token" | "urn:ietf:params:oauth:token-type:jwt"
    ) {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "subject_token_type must be urn:ietf:params:oauth:token-type:id_token or urn:ietf:params:oauth:token-type:jwt",
        ));
    }
    let provider = field("provider_name");
    if provider.is_empty() {
        return Err(refuse(StatusCode::BAD_REQUEST, "provider_name is required"));
    }
    let subject = field("subject_token");
    if subject.is_empty() {
        return Err(refuse(StatusCode::BAD_REQUEST, "subject_token is required"));
    }
    let project = Some(field("project_key")).filter(|p| !p.is_empty());
    let integration = s
        .collections
        .get_raw(INTEGRATIONS, provider)
        .ok_or_else(|| {
            refuse(
                StatusCode::NOT_FOUND,
                format!("OIDC provider '{provider}' was not found"),
            )
        })?;
    let unauthorized = |m: String| refuse(StatusCode::UNAUTHORIZED, m);
    let settings = s.oidc.settings();
    let claims = verify(subject, &integration, &settings.ca_pem)
        .await
        .map_err(|m| unauthorized(format!("OIDC provider '{provider}': {m}")))?;
    let mut mappings: Vec<Value> = s
        .collections
        .list_raw(MAPPINGS)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["provider_name"] == json!(provider))
        .filter(|m| m.get("project_key").and_then(Value::as_str) == project)
        .collect();
    mappings.sort_by_key(|m| {
        (
            m["priority"].as_i64().unwrap_or(i64::MAX),
            m["name"].as_str().unwrap_or("").to_owned(),
        )
    });
    let mapping = mappings
        .iter()
        .find(|m| {
            m["claims"]
                .as_object()
                .is_some_and(|want| matches_claims(want, &claims))
        })
        .ok_or_else(|| {
            unauthorized(format!(
                "OIDC provider '{provider}': no identity mapping{} matches the token's claims (sub '{}')",
                project.map(|p| format!(" of project '{p}'")).unwrap_or_default(),
                claims.get("sub").and_then(Value::as_str).unwrap_or("")
            ))
        })?;
    let spec = mapping["token_spec"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let scope = spec
        .get("scope")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("applied-permissions/user")
        .to_owned();
    let username = spec
        .get("username")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            spec.get("username_pattern")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|p| fill_pattern(p, &claims))
        })
        .or_else(|| claims.get("sub").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "oidc-user".to_owned());
    let mut expires_in = spec
        .get("expires_in")
        .and_then(Value::as_u64)
        .filter(|e| *e > 0)
        .unwrap_or(DEFAULT_EXPIRES_IN);
    if let Some(max) = settings.max_lifetime {
        expires_in = expires_in.min(max);
    }
    let admin = scope.contains("applied-permissions/admin");
    let token =
        s.auth
            .issue_expiring_token(&username, admin, &scope, Duration::from_secs(expires_in));
    tracing::debug!(provider, mapping = %mapping["name"], expires_in, "OIDC token exchanged");
    let sub = claims
        .get("sub")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    Ok((
        json!({
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": expires_in,
            "scope": scope,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "username": username,
        }),
        sub,
    ))
}

/// `{{claim}}` in a pattern replaced by the token's claim.
fn fill_pattern(pattern: &str, claims: &Map<String, Value>) -> String {
    let mut out = pattern.to_owned();
    for (k, v) in claims {
        if let Some(s) = v.as_str() {
            out = out.replace(&format!("{{{{{k}}}}}"), s);
        }
    }
    out
}

/// Every wanted claim matches the token's claim of the same name.
fn matches_claims(want: &Map<String, Value>, claims: &Map<String, Value>) -> bool {
    want.iter()
        .all(|(k, w)| claims.get(k).is_some_and(|c| matches_value(w, c)))
}

fn matches_value(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => matches_claims(w, g),
        (w, Value::Array(items)) if !w.is_array() => items.iter().any(|i| matches_value(w, i)),
        (Value::Array(ws), g) if !g.is_array() => ws.iter().any(|w| matches_value(w, g)),
        (Value::String(w), Value::String(g)) => glob(w, g),
        (w, g) => w == g,
    }
}

/// `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else if let Some(pos) = rest.find(part) {
            rest = &rest[pos + part.len()..];
        } else {
            return false;
        }
    }
    true
}

fn decode_part(part: &str) -> Result<Value, String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|_| "the subject token is not a JWT (bad base64url)".to_owned())?;
    serde_json::from_slice(&bytes)
        .map_err(|_| "the subject token is not a JWT (bad JSON)".to_owned())
}

/// Verifies the subject token against the integration (issuer, signature, expiry, audience);
/// the error text never quotes the token.
async fn verify(
    token: &str,
    integration: &Value,
    ca_pem: &[String],
) -> Result<Map<String, Value>, String> {
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err("the subject token is not a signed JWT".to_owned());
    }
    let header = decode_part(parts[0])?;
    let Value::Object(claims) = decode_part(parts[1])? else {
        return Err("the subject token's claims are not an object".to_owned());
    };
    let alg = header["alg"].as_str().unwrap_or("");
    if alg.is_empty() || alg.eq_ignore_ascii_case("none") || parts[2].is_empty() {
        return Err("the subject token is not signed".to_owned());
    }
    let issuer = integration["issuer_url"]
        .as_str()
        .unwrap_or("")
        .trim_end_matches('/');
    let iss = claims.get("iss").and_then(Value::as_str).unwrap_or("");
    if iss.trim_end_matches('/') != issuer {
        return Err(format!(
            "the token's issuer '{iss}' is not the provider's issuer '{issuer}'"
        ));
    }
    let keys = fetch_keys(issuer, ca_pem).await?;
    let kid = header["kid"].as_str();
    let key = keys
        .iter()
        .find(|k| kid.is_none() || k["kid"].as_str() == kid)
        .ok_or_else(|| {
            format!(
                "no key '{}' in the issuer's JWKS",
                kid.unwrap_or("(no kid)")
            )
        })?;
    let signed = format!("{}.{}", parts[0], parts[1]);
    let signature = URL_SAFE_NO_PAD
        .decode(parts[2])
        .map_err(|_| "the subject token's signature is not base64url".to_owned())?;
    verify_signature(alg, key, signed.as_bytes(), &signature)?;
    let now = chrono::Utc::now().timestamp();
    match claims.get("exp").and_then(Value::as_i64) {
        Some(exp) if exp > now => {}
        Some(_) => return Err("the subject token has expired".to_owned()),
        None => return Err("the subject token has no 'exp'".to_owned()),
    }
    if let Some(nbf) = claims.get("nbf").and_then(Value::as_i64)
        && nbf > now + LEEWAY_SECONDS
    {
        return Err("the subject token is not valid yet ('nbf')".to_owned());
    }
    if let Some(want) = integration["audience"].as_str().filter(|a| !a.is_empty()) {
        let ok = match claims.get("aud") {
            Some(Value::String(a)) => a == want,
            Some(Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(want)),
            _ => false,
        };
        if !ok {
            return Err(format!(
                "the token's audience {} does not include the provider's audience '{want}'",
                claims.get("aud").cloned().unwrap_or(Value::Null)
            ));
        }
    }
    Ok(claims)
}

/// The issuer's signing keys: its discovery document, then the JWKS it names.
async fn fetch_keys(issuer: &str, ca_pem: &[String]) -> Result<Vec<Value>, String> {
    let client = http_client(ca_pem)?;
    let get = |url: String| {
        let client = client.clone();
        async move {
            let resp = client
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("cannot fetch {url}: {}", chain(&e)))?;
            if !resp.status().is_success() {
                return Err(format!("{url} answered {}", resp.status().as_u16()));
            }
            resp.json::<Value>()
                .await
                .map_err(|_| format!("{url} did not answer JSON"))
        }
    };
    let discovery = get(format!("{issuer}/.well-known/openid-configuration")).await?;
    if discovery["issuer"]
        .as_str()
        .map(|i| i.trim_end_matches('/'))
        != Some(issuer)
    {
        return Err("the issuer's discovery document names another issuer".to_owned());
    }
    let jwks_uri = discovery["jwks_uri"]
        .as_str()
        .ok_or("the issuer's discovery document has no jwks_uri")?
        .to_owned();
    let jwks = get(jwks_uri).await?;
    Ok(jwks["keys"].as_array().cloned().unwrap_or_default())
}

/// A fetch failure with its causes, without the URL's query (there is none) or any header.
fn chain(e: &reqwest::Error) -> String {
    let mut out = if e.is_connect() {
        "connection failed".to_owned()
    } else if e.is_timeout() {
        "timed out".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

fn http_client(ca_pem: &[String]) -> Result<reqwest::Client, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for pem in ca_pem {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()).flatten() {
            let _ = roots.add(cert);
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

fn verify_signature(alg: &str, key: &Value, signed: &[u8], sig: &[u8]) -> Result<(), String> {
    use ring::signature;
    let b64 = |k: &str| {
        key[k]
            .as_str()
            .and_then(|s| URL_SAFE_NO_PAD.decode(s).ok())
            .ok_or_else(|| format!("the issuer's key has no valid '{k}'"))
    };
    let ok = match alg {
        "RS256" => {
            let rsa = signature::RsaPublicKeyComponents {
                n: b64("n")?,
                e: b64("e")?,
            };
            rsa.verify(&signature::RSA_PKCS1_2048_8192_SHA256, signed, sig)
                .is_ok()
        }
        "ES256" => {
            let mut point = vec![4u8];
            point.extend(b64("x")?);
            point.extend(b64("y")?);
            signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                .verify(signed, sig)
                .is_ok()
        }
        other => return Err(format!("unsupported signature algorithm '{other}'")),
    };
    if ok {
        Ok(())
    } else {
        Err("the subject token's signature does not verify against the issuer's keys".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_match_as_documented() {
        let claims = json!({
            "sub": "system:serviceaccount:crossplane-system:provider-artifactory",
            "aud": ["jfrog-generic"],
            "kubernetes.io": {"namespace": "crossplane-system", "serviceaccount": {"name": "provider-artifactory"}},
        });
        let claims = claims.as_object().unwrap();
        let m = |w: Value| matches_claims(w.as_object().unwrap(), claims);
        assert!(m(
            json!({"sub": "system:serviceaccount:crossplane-system:*"})
        ));
        assert!(m(json!({"aud": "jfrog-generic"})));
        assert!(m(
            json!({"kubernetes.io": {"namespace": "crossplane-system"}})
        ));
        assert!(!m(json!({"sub": "system:serviceaccount:other:*"})));
        assert!(!m(json!({"missing": "x"})));
        assert!(glob("a*c*e", "abcde") && !glob("a*c", "abd") && glob("*", ""));
        assert_eq!(
            fill_pattern(
                "k8s-{{sub}}",
                &json!({"sub": "x"}).as_object().unwrap().clone()
            ),
            "k8s-x"
        );
    }
}
