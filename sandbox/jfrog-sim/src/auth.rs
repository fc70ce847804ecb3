//! Authentication: Access tokens (Bearer, or as the password of basic auth) and basic-auth
//! users, each either admin or not.
//!
//! Handlers take [`User`] (any valid credentials, else 401) or [`Admin`] (admin credentials,
//! else 401 without valid credentials and 403 with non-admin ones) as extractors; the error
//! body follows the flavour of the service the path belongs to. Tokens look like JFrog access
//! tokens (a JWT with `sub`, `scp`, `iat`, `exp`, `jti`) but are only checked by lookup.
//! Secrets are never logged and never part of a `Debug` output.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rand::RngCore;

use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// User name (the token's subject user, or the basic-auth user).
    pub username: String,
    /// Whether the caller has platform admin rights.
    pub admin: bool,
}

struct TokenInfo {
    caller: Caller,
    /// Unix seconds after which the token is refused (exchanged tokens only).
    expires_at: Option<i64>,
}

struct BasicUser {
    password: String,
    admin: bool,
}

/// The credential stores.
#[derive(Default)]
pub(crate) struct Auth {
    tokens: RwLock<HashMap<String, TokenInfo>>,
    users: RwLock<HashMap<String, BasicUser>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").finish_non_exhaustive()
    }
}

/// Why a request is not authenticated.
enum Denied {
    Missing,
    Bad,
}

/// A JFrog-shaped access token (a JWT with a random signature: the simulator knows its own
/// tokens by their text) for `username` with `scope`, issued at `iat`, expiring at `exp`.
fn jwt(username: &str, scope: &str, iat: i64, exp: i64, ext: Option<&str>) -> String {
    let header = serde_json::json!({"ver": "2", "typ": "JWT", "alg": "RS256", "kid": "jfrog-sim"});
    let mut payload = serde_json::json!({
        "sub": format!("jfac@01jfrogsim/users/{username}"),
        "scp": scope,
        "aud": "*@*",
        "iss": "jfac@01jfrogsim",
        "exp": exp,
        "iat": iat,
        "jti": uuid::Uuid::new_v4().to_string(),
    });
    if let Some(ext) = ext {
        payload["ext"] = serde_json::json!(ext);
    }
    let mut sig = [0u8; 64];
    rand::rng().fill_bytes(&mut sig);
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(payload.to_string()),
        URL_SAFE_NO_PAD.encode(sig)
    )
}

impl Auth {
    /// Issues a new token for `username`.
    pub(crate) fn issue_token(&self, username: &str, admin: bool) -> String {
        let scope = if admin {
            "applied-permissions/admin"
        } else {
            "applied-permissions/user"
        };
        let now = chrono::Utc::now().timestamp();
        let token = jwt(
            username,
            scope,
            now,
            now + 365 * 24 * 3600,
            Some("{\"revocable\":\"true\"}"),
        );
        write(&self.tokens).insert(
            token.clone(),
            TokenInfo {
                caller: Caller {
                    username: username.to_owned(),
                    admin,
                },
                expires_at: None,
            },
        );
        token
    }

    /// Issues a token for `username` that is refused after `lifetime` (the OIDC exchange's).
    pub(crate) fn issue_expiring_token(
        &self,
        username: &str,
        admin: bool,
        scope: &str,
        lifetime: std::time::Duration,
    ) -> String {
        let now = chrono::Utc::now().timestamp();
        let exp = now + lifetime.as_secs() as i64;
        let token = jwt(username, scope, now, exp, None);
        let mut tokens = write(&self.tokens);
        // Expired exchanged tokens are dropped as new ones are issued.
        tokens.retain(|_, t| t.expires_at.is_none_or(|e| e > now));
        tokens.insert(
            token.clone(),
            TokenInfo {
                caller: Caller {
                    username: username.to_owned(),
                    admin,
                },
                expires_at: Some(exp),
            },
        );
        token
    }

    /// Registers a token chosen by the caller.
    pub(crate) fn register_token(&self, token: &str, username: &str, admin: bool) {
        let caller = Caller {
            username: username.to_owned(),
            admin,
        };
        write(&self.tokens).insert(
            token.to_owned(),
            TokenInfo {
                caller,
                expires_at: None,
            },
        );
    }

    /// Revokes every token the OIDC exchange issued; returns how many.
    pub(crate) fn revoke_expiring_tokens(&self) -> usize {
        let mut tokens = write(&self.tokens);
        let before = tokens.len();
        tokens.retain(|_, t| t.expires_at.is_none());
        before - tokens.len()
    }

    /// Revokes a token; false when it was not known.
    pub(crate) fn revoke_token(&self, token: &str) -> bool {
        write(&self.tokens).remove(token).is_some()
    }

    /// Adds or replaces a basic-auth user.
    pub(crate) fn set_user(&self, username: &str, password: &str, admin: bool) {
        write(&self.users).insert(
            username.to_owned(),
            BasicUser {
                password: password.to_owned(),
                admin,
            },
        );
    }

    fn token(&self, token: &str) -> Option<Caller> {
        let now = chrono::Utc::now().timestamp();
        read(&self.tokens)
            .get(token)
            .filter(|t| t.expires_at.is_none_or(|e| e > now))
            .map(|t| t.caller.clone())
    }

    fn check(&self, authorization: Option<&str>) -> Result<Caller, Denied> {
        let Some(value) = authorization else {
            return Err(Denied::Missing);
        };
        let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return self.token(rest).ok_or(Denied::Bad);
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let decoded = STANDARD.decode(rest).map_err(|_| Denied::Bad)?;
            let decoded = String::from_utf8(decoded).map_err(|_| Denied::Bad)?;
            let (user, password) = decoded.split_once(':').ok_or(Denied::Bad)?;
            if let Some(u) = read(&self.users).get(user)
                && u.password == password
            {
                return Ok(Caller {
                    username: user.to_owned(),
                    admin: u.admin,
                });
            }
            // JFrog accepts an access token as the password of basic auth.
            return self.token(password).ok_or(Denied::Bad);
        }
        Err(Denied::Bad)
    }
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn authenticate(parts: &Parts, state: &Arc<Shared>) -> Result<Caller, ApiError> {
    let flavor = Flavor::for_path(parts.uri.path());
    let header = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    state.auth.check(header).map_err(|d| {
        let msg = match (flavor, d) {
            (Flavor::Artifactory, Denied::Missing) => "Authentication is required",
            (Flavor::Artifactory, Denied::Bad) => "Bad credentials",
            (_, Denied::Missing) => "Missing authentication",
            (_, Denied::Bad) => "Bad credentials",
        };
        ApiError::new(flavor, StatusCode::UNAUTHORIZED, msg)
    })
}

/// Any authenticated caller.
pub(crate) struct User(pub Caller);

/// An authenticated caller with admin rights.
pub(crate) struct Admin(pub Caller);

impl FromRequestParts<Arc<Shared>> for User {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        authenticate(parts, state).map(User)
    }
}

impl FromRequestParts<Arc<Shared>> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let caller = authenticate(parts, state)?;
        if !caller.admin {
            let flavor = Flavor::for_path(parts.uri.path());
            return Err(ApiError::new(flavor, StatusCode::FORBIDDEN, "Forbidden"));
        }
        Ok(Admin(caller))
    }
}
