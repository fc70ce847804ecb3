//! Users, groups, permission targets, tokens, keys, certificates, environments, Vault
//! configurations, the two security policies, API keys and replications: the APIs behind
//! provider-artifactory's `user`, `security` and `replication` Kinds.
//!
//! Objects live in the generic collection stores (so the admin API sees them under
//! `/__sim/collections/{name}`); the handlers are written out because these APIs differ in
//! every way a keyed collection can (create by `PUT` or `POST` on the item or the
//! collection, partial updates by `POST` or `PATCH`, text bodies, reads only through a
//! list, server-assigned ids).
//!
//! JFrog's rules enforced here, independently of the providers' declarations: user names,
//! e-mails and password rules, group and user existence in permission targets, the
//! `artifactory-build-info` build section, auto-join with admin privileges, PEM contents,
//! key pair types, environment names, Vault settings, token description and scope lengths,
//! the repository class a replication needs and its cron expression, and the version
//! dependence: the Access user API from Artifactory 7.84.3, API keys only before 7.98.0.
//! Secrets (passwords, private keys, Vault credentials) are never answered: passwords are
//! not stored at all, replication passwords come back scrambled.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use base64::Engine;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::auth::Admin;
use crate::collections::{Declaration, Ids, KeyCase, accept_object, as_stored};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

fn nf(k: &str) -> (StatusCode, String) {
    (StatusCode::NOT_FOUND, format!("'{k}' not found"))
}
fn ex(k: &str) -> (StatusCode, String) {
    (StatusCode::CONFLICT, format!("'{k}' already exists"))
}

const fn decl(name: &'static str, key_field: &'static str, key_case: KeyCase) -> Declaration {
    Declaration {
        name,
        key_field,
        key_case,
        ids: Ids::Body,
        flavor: Flavor::Artifactory,
        not_found: nf,
        exists: ex,
        validate: accept_object,
        view: as_stored,
    }
}

pub(crate) static USERS: Declaration = decl("users", "username", KeyCase::Insensitive);
/// Groups live in one store, the Access groups (`/access/api/v2/groups`), which the
/// security API (`/api/security/groups`) reads and writes in its own member names, as on a
/// JFrog Platform where Artifactory's groups are Access's.
pub(crate) use super::platform::GROUPS;
pub(crate) static PERMISSIONS: Declaration = decl("permission_targets", "name", KeyCase::Sensitive);
pub(crate) static CERTIFICATES: Declaration =
    decl("certificates", "certificateAlias", KeyCase::Sensitive);
pub(crate) static TRUSTED_KEYS: Declaration = decl("trusted_keys", "kid", KeyCase::Sensitive);
pub(crate) static ENVIRONMENTS: Declaration = decl("environments", "name", KeyCase::Sensitive);
pub(crate) static KEYPAIRS: Declaration = decl("keypairs", "pairName", KeyCase::Sensitive);
pub(crate) static VAULT: Declaration = decl("vault_configs", "key", KeyCase::Sensitive);
pub(crate) static TOKENS: Declaration = decl("tokens", "token_id", KeyCase::Sensitive);
pub(crate) static POLICIES: Declaration = decl("security_policies", "policy", KeyCase::Sensitive);
pub(crate) static API_KEYS: Declaration = decl("api_keys", "user", KeyCase::Sensitive);
pub(crate) static REPLICATIONS: Declaration = decl("replications", "repoKey", KeyCase::Sensitive);

/// The collections of this module.
pub(crate) fn collections() -> Vec<&'static Declaration> {
    vec![
        &USERS,
        &PERMISSIONS,
        &CERTIFICATES,
        &TRUSTED_KEYS,
        &ENVIRONMENTS,
        &KEYPAIRS,
        &VAULT,
        &TOKENS,
        &POLICIES,
        &API_KEYS,
        &REPLICATIONS,
    ]
}

/// Whether the platform has user `name` (the admin the platform starts with included: it
/// is the token's user, not a stored one).
pub(crate) fn user_exists(s: &Shared, name: &str) -> bool {
    name == "admin" || s.collections.get_raw(USERS.name, name).is_some()
}

/// Whether the platform has group `name` (made through the security API or Access v2).
pub(crate) fn group_exists(s: &Shared, name: &str) -> bool {
    s.collections.get_raw(GROUPS.name, name).is_some()
}

/// JFrog's 404 for a member that is not a user or group of the platform.
pub(crate) fn missing_member(flavor: Flavor, what: &str, name: &str) -> ApiError {
    ApiError::new(
        flavor,
        StatusCode::NOT_FOUND,
        format!("{what} '{name}' does not exist"),
    )
}

/// What a fresh platform has: the anonymous user and the `readers` group.
pub(crate) fn seed(s: &Shared) {
    s.collections.put_raw(
        USERS.name,
        "anonymous",
        json!({"email": "", "admin": false, "profile_updatable": false, "disable_ui_access": true,
               "internal_password_disabled": true, "groups": [], "realm": "internal", "status": "enabled"}),
    );
    s.collections.put_raw(
        GROUPS.name,
        "readers",
        access_group(&group_defaults(json!({"name": "readers"}))),
    );
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        // Users: the Access API (>= 7.84.3) and the security API.
        .route("/access/api/v2/users", get(users_list).post(user_create))
        .route(
            "/access/api/v2/users/{name}",
            get(user_read).patch(user_patch).delete(user_delete),
        )
        .route(
            "/access/api/v2/users/{name}/groups",
            axum::routing::patch(user_groups_patch),
        )
        .route("/artifactory/api/security/users", get(legacy_users_list))
        .route(
            "/artifactory/api/security/users/{name}",
            get(legacy_user_read)
                .put(legacy_user_create)
                .post(legacy_user_update)
                .delete(legacy_user_delete),
        )
        .route("/artifactory/api/security/groups", get(groups_list))
        .route(
            "/artifactory/api/security/groups/{name}",
            get(group_read)
                .put(group_put)
                .post(group_post)
                .delete(group_delete),
        )
        .route(
            "/artifactory/api/v2/security/permissions",
            get(permissions_list),
        )
        .route(
            "/artifactory/api/v2/security/permissions/{name}",
            get(permission_read)
                .post(permission_create)
                .put(permission_replace)
                .delete(permission_delete),
        )
        .route(
            "/artifactory/api/security/permissions",
            get(permissions_v1_list),
        )
        .route(
            "/artifactory/api/security/permissions/{name}",
            get(permission_v1_read)
                .put(permission_v1_put)
                .delete(permission_v1_delete),
        )
        .route(
            "/artifactory/api/system/security/certificates",
            get(certificates_list),
        )
        .route(
            "/artifactory/api/system/security/certificates/",
            get(certificates_list),
        )
        .route(
            "/artifactory/api/system/security/certificates/{alias}",
            post(certificate_upload).delete(certificate_delete),
        )
        .route(
            "/artifactory/api/security/keys/trusted",
            get(trusted_list).post(trusted_create),
        )
        .route(
            "/artifactory/api/security/keys/trusted/{kid}",
            axum::routing::delete(trusted_delete),
        )
        .route(
            "/access/api/v1/environments",
            get(environments_list).post(environment_create),
        )
        .route(
            "/access/api/v1/environments/{name}",
            axum::routing::delete(environment_delete),
        )
        .route(
            "/artifactory/api/security/keypair",
            get(keypairs_list).post(keypair_create),
        )
        .route("/artifactory/api/security/keypair/", post(keypair_create))
        .route(
            "/artifactory/api/security/keypair/{name}",
            get(keypair_read).delete(keypair_delete),
        )
        .route(
            "/artifactory/api/security/configuration/passwordExpirationPolicy",
            get(|s, a| policy_read(s, a, PASSWORD_EXPIRATION))
                .put(|s, a, b| policy_write(s, a, b, PASSWORD_EXPIRATION)),
        )
        .route(
            "/artifactory/api/security/userLockPolicy",
            get(|s, a| policy_read(s, a, USER_LOCK))
                .put(|s, a, b| policy_write(s, a, b, USER_LOCK)),
        )
        .route("/access/api/v1/vault/configs", get(vault_list))
        .route(
            "/access/api/v1/vault/configs/{name}",
            get(vault_read).put(vault_put).delete(vault_delete),
        )
        .route("/access/api/v1/tokens", get(tokens_list).post(token_create))
        .route(
            "/access/api/v1/tokens/{id}",
            get(token_read).delete(token_revoke),
        )
        .route(
            "/artifactory/api/security/apiKey",
            get(api_key_read)
                .post(api_key_create)
                .delete(api_key_delete),
        )
        .route("/artifactory/api/replications", get(replications_list))
        .route(
            "/artifactory/api/replications/{key}",
            get(replication_read)
                .put(replication_put)
                .post(replication_post)
                .delete(replication_delete),
        )
        .route(
            "/artifactory/api/replications/multiple/{key}",
            put(replications_put).post(replications_post),
        )
}

type R = Result<Response, ApiError>;

fn art(status: StatusCode, m: impl Into<String>) -> ApiError {
    ApiError::art(status, m)
}
fn acc(status: StatusCode, m: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, status, m)
}
fn parse(body: &Bytes, flavor: Flavor) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::new(
            flavor,
            StatusCode::BAD_REQUEST,
            "The request body must be a JSON object",
        )),
        Err(e) => Err(ApiError::new(
            flavor,
            StatusCode::BAD_REQUEST,
            format!("Could not parse the request body as JSON: {e}"),
        )),
    }
}
/// `DELETE` of one object: `ok` when it existed, 404 with `missing` otherwise.
fn remove(
    s: &Shared,
    coll: &Declaration,
    key: &str,
    ok: StatusCode,
    flavor: Flavor,
    missing: String,
) -> R {
    if s.collections.delete_raw(coll.name, key) {
        Ok(ok.into_response())
    } else {
        Err(ApiError::new(flavor, StatusCode::NOT_FOUND, missing))
    }
}

/// One stored object, or 404 with `missing`.
fn fetch(
    s: &Shared,
    coll: &Declaration,
    key: &str,
    flavor: Flavor,
    missing: String,
) -> Result<Value, ApiError> {
    s.collections
        .get_raw(coll.name, key)
        .ok_or_else(|| ApiError::new(flavor, StatusCode::NOT_FOUND, missing))
}

fn version_at_least(s: &Shared, want: (u64, u64, u64)) -> bool {
    let mut p = s
        .config
        .artifactory_version
        .split(|c: char| !c.is_ascii_digit())
        .map(|x| x.parse::<u64>().unwrap_or(0));
    let v = (
        p.next().unwrap_or(0),
        p.next().unwrap_or(0),
        p.next().unwrap_or(0),
    );
    v >= want
}
fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}
fn bool_of(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}
fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
fn fingerprint(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

// ---------------------------------------------------------------------------------------
// Users

const ACCESS_USERS_SINCE: (u64, u64, u64) = (7, 84, 3);
/// Security API member -> Access API member.
const LEGACY: &[(&str, &str)] = &[
    ("name", "username"),
    ("profileUpdatable", "profile_updatable"),
    ("disableUIAccess", "disable_ui_access"),
    ("internalPasswordDisabled", "internal_password_disabled"),
    ("watchManager", "watch_manager"),
    ("policyManager", "policy_manager"),
    ("policyViewer", "policy_viewer"),
    ("reportsManager", "reports_manager"),
];

/// The members a security-API user write keeps (REST API "Security Configuration JSON",
/// `application/vnd.org.jfrog.artifactory.security.User+json`: the optional and mandatory
/// elements). The read-only ones (`lastLoggedIn`, `realm`, `status`, `mfaStatus`) and unknown
/// members are dropped, never stored or answered.
const LEGACY_USER_MEMBERS: &[&str] = &[
    "name",
    "email",
    "password",
    "admin",
    "profileUpdatable",
    "disableUIAccess",
    "internalPasswordDisabled",
    "groups",
    "watchManager",
    "policyManager",
    "policyViewer",
    "reportsManager",
];

/// The members an Access user write keeps (JFrog REST API "Create User" and "Update a User
/// (Partial Update)", `/access/api/v2/users`); `realm` and `status` are the server's.
const ACCESS_USER_MEMBERS: &[&str] = &[
    "username",
    "password",
    "email",
    "groups",
    "admin",
    "profile_updatable",
    "internal_password_disabled",
    "disable_ui_access",
];

/// The members "Update a User (Partial Update)" (`PATCH /access/api/v2/users/{username}`)
/// takes: `{email, password, admin, profile_updatable, internal_password_disabled,
/// disable_ui_access}` ("All fields are optional; if a specific field is not specified the
/// value will not change"), with the role flags from 7.128.0. No `username` (the path names
/// the user) and no `groups`: memberships change through `PATCH .../{username}/groups`
/// (`{add, remove}`), which is how JFrog's Terraform provider (v12.11.7,
/// `pkg/artifactory/resource/user/user.go`, `syncReadersGroup` after every create and
/// update) keeps them in line.
const ACCESS_USER_PATCH_MEMBERS: &[&str] = &[
    "password",
    "email",
    "admin",
    "profile_updatable",
    "internal_password_disabled",
    "disable_ui_access",
];

/// "Create User": "this parameter is only available starting from Artifactory version
/// 7.128.0" (before it, the Access API drops them like any unknown member).
const ACCESS_USER_ROLES: &[&str] = &[
    "watch_manager",
    "policy_viewer",
    "policy_manager",
    "reports_manager",
    "resources_manager",
    "manage_webhook",
];
const ACCESS_USER_ROLES_SINCE: (u64, u64, u64) = (7, 128, 0);

/// An Access user body with only the members the platform's version keeps.
fn access_user_members(s: &Shared, mut m: Map<String, Value>) -> Map<String, Value> {
    let roles = version_at_least(s, ACCESS_USER_ROLES_SINCE);
    m.retain(|k, _| {
        ACCESS_USER_MEMBERS.contains(&k.as_str())
            || (roles && ACCESS_USER_ROLES.contains(&k.as_str()))
    });
    m
}

/// A security-API user body with only its documented members, renamed to the Access store's.
fn legacy_user_members(mut m: Map<String, Value>) -> Map<String, Value> {
    m.retain(|k, _| LEGACY_USER_MEMBERS.contains(&k.as_str()));
    rename(&mut m, LEGACY, true);
    m
}

fn rename(m: &mut Map<String, Value>, pairs: &[(&str, &str)], forward: bool) {
    for (a, b) in pairs {
        let (from, to) = if forward { (a, b) } else { (b, a) };
        if let Some(v) = m.remove(*from) {
            m.insert((*to).to_string(), v);
        }
    }
}

fn valid_username(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_' | '@')
        })
}

/// Artifactory's default password rules: 8+ characters with an upper-case letter, a
/// lower-case letter and a digit.
fn strong(p: &str) -> bool {
    p.len() >= 8
        && p.chars().any(|c| c.is_ascii_uppercase())
        && p.chars().any(|c| c.is_ascii_lowercase())
        && p.chars().any(|c| c.is_ascii_digit())
}

/// Validate a user (Access API member names) and return what is stored.
fn check_user(
    s: &Shared,
    mut m: Map<String, Value>,
    existing: Option<&Value>,
    flavor: Flavor,
) -> Result<Value, ApiError> {
    let bad = |msg: String| ApiError::new(flavor, StatusCode::BAD_REQUEST, msg);
    let password = m.remove("password");
    let mut user = existing
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(|| {
            json!({"admin": false, "profile_updatable": true, "disable_ui_access": false,
                   "internal_password_disabled": false, "groups": [], "realm": "internal",
                   "status": "enabled"})
            .as_object()
            .cloned()
            .unwrap_or_default()
        });
    for (k, v) in m {
        if !v.is_null() {
            user.insert(k, v);
        }
    }
    let email = str_of(&user, "email");
    if !email.contains('@') {
        return Err(bad(format!("Invalid email address '{email}'")));
    }
    match password.as_ref().and_then(Value::as_str) {
        Some(p) if !strong(p) => {
            return Err(bad(
                "Password does not meet the password policy: at least 8 characters with upper-case and lower-case letters and a digit".into(),
            ));
        }
        None if existing.is_none() && !bool_of(&user, "internal_password_disabled") => {
            return Err(bad("Password is required for an internal user".into()));
        }
        _ => {}
    }
    if bool_of(&user, "admin") && bool_of(&user, "disable_ui_access") {
        return Err(bad(
            "An admin user cannot have UI access disabled (disable_ui_access)".into(),
        ));
    }
    if let Some(Value::Array(groups)) = user.get("groups") {
        for g in groups.iter().filter_map(Value::as_str) {
            if s.collections.get_raw(GROUPS.name, g).is_none() {
                return Err(bad(format!("Group '{g}' does not exist")));
            }
        }
    }
    Ok(Value::Object(user))
}

fn user_create_common(s: &Shared, m: Map<String, Value>, flavor: Flavor) -> R {
    let name = str_of(&m, "username").to_string();
    if !valid_username(&name) {
        return Err(ApiError::new(
            flavor,
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid username '{name}': lower-case letters, digits and . - _ @ only (at most 64)"
            ),
        ));
    }
    if s.collections.get_raw(USERS.name, &name).is_some() {
        return Err(ApiError::new(
            flavor,
            StatusCode::CONFLICT,
            format!("User '{name}' already exists"),
        ));
    }
    let user = check_user(s, m, None, flavor)?;
    s.collections.put_raw(USERS.name, &name, user.clone());
    sync_user_groups(s, &name);
    // Access "Create User" answers 201 with the user; the security API answers 201 empty.
    Ok(match flavor {
        Flavor::Access => (StatusCode::CREATED, axum::Json(user)).into_response(),
        _ => StatusCode::CREATED.into_response(),
    })
}

fn access_api(s: &Shared) -> Result<(), ApiError> {
    if version_at_least(s, ACCESS_USERS_SINCE) {
        Ok(())
    } else {
        Err(acc(StatusCode::NOT_FOUND, "Not Found"))
    }
}

/// Every object of a collection, each as its list answer shows it.
fn listed(s: &Shared, decl: &Declaration, show: impl Fn(Value) -> Value) -> Vec<Value> {
    s.collections
        .list_raw(decl.name)
        .unwrap_or_default()
        .into_iter()
        .map(show)
        .collect()
}

/// `GET /access/api/v2/users`: `{"users": [{username, uri, realm, status}], "cursor"}`, a
/// name and a link per user (no settings), as JFrog answers it, one page at a time
/// (`crate::paging`).
async fn users_list(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Query(q): Query<HashMap<String, String>>,
) -> R {
    access_api(&s)?;
    let base = &s.base_url;
    let all = listed(&s, &USERS, |u| u);
    let (page, cursor) =
        crate::paging::access_page(all, |u| u["username"].as_str().unwrap_or_default(), &q)?;
    let users: Vec<Value> = page
        .into_iter()
        .map(|u| {
            let name = u["username"].as_str().unwrap_or_default();
            json!({"username": name, "uri": format!("{base}/access/api/v2/users/{name}"),
                   "realm": u["realm"], "status": u["status"]})
        })
        .collect();
    Ok(axum::Json(crate::paging::access_answer("users", users, cursor)).into_response())
}

/// `GET /artifactory/api/security/users`: `[{name, uri, realm}]` (every version).
async fn legacy_users_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let base = &s.base_url;
    let users = listed(&s, &USERS, |u| {
        let name = u["username"].as_str().unwrap_or_default();
        json!({"name": name, "uri": format!("{base}/artifactory/api/security/users/{name}"),
               "realm": u["realm"]})
    });
    Ok(axum::Json(users).into_response())
}

async fn user_create(State(s): State<Arc<Shared>>, _a: Admin, body: Bytes) -> R {
    access_api(&s)?;
    let m = access_user_members(&s, parse(&body, Flavor::Access)?);
    user_create_common(&s, m, Flavor::Access)
}

fn user_get(s: &Shared, name: &str, flavor: Flavor) -> Result<Value, ApiError> {
    s.collections.get_raw(USERS.name, name).ok_or_else(|| {
        ApiError::new(
            flavor,
            StatusCode::NOT_FOUND,
            format!("User '{name}' not found"),
        )
    })
}

async fn user_read(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    access_api(&s)?;
    Ok(axum::Json(user_get(&s, &name, Flavor::Access)?).into_response())
}

/// "Update a User (Partial Update)": only the members it documents change (see
/// [`ACCESS_USER_PATCH_MEMBERS`]); a `groups` member is ignored like any other.
async fn user_patch(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    access_api(&s)?;
    let existing = user_get(&s, &name, Flavor::Access)?;
    let mut m = access_user_members(&s, parse(&body, Flavor::Access)?);
    m.retain(|k, _| {
        ACCESS_USER_PATCH_MEMBERS.contains(&k.as_str()) || ACCESS_USER_ROLES.contains(&k.as_str())
    });
    let user = check_user(&s, m, Some(&existing), Flavor::Access)?;
    s.collections.put_raw(USERS.name, &name, user.clone());
    sync_user_groups(&s, &name);
    Ok(axum::Json(user).into_response())
}

/// `PATCH /access/api/v2/users/{name}/groups` with `{add: [..], remove: [..]}`: the user's
/// memberships, as JFrog's Terraform provider changes them (`GroupsAddRemove`,
/// `UserGroupEndpointPath` in `pkg/artifactory/resource/user/user.go`, v12.11.7). Added
/// groups must exist (400); removing a group the user is not in changes nothing. Answers
/// the user as a read does (unverified: the provider reads only the error).
async fn user_groups_patch(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    access_api(&s)?;
    let existing = user_get(&s, &name, Flavor::Access)?;
    let m = parse(&body, Flavor::Access)?;
    let names = |member: &str| -> Result<Vec<String>, ApiError> {
        match m.get(member) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()),
            Some(_) => Err(acc(
                StatusCode::BAD_REQUEST,
                format!("'{member}' must be a list of group names"),
            )),
        }
    };
    let (add, remove) = (names("add")?, names("remove")?);
    let mut groups: Vec<String> = existing
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    for g in &add {
        if s.collections.get_raw(GROUPS.name, g).is_none() {
            return Err(acc(
                StatusCode::BAD_REQUEST,
                format!("Group '{g}' does not exist"),
            ));
        }
        if !groups.contains(g) {
            groups.push(g.clone());
        }
    }
    groups.retain(|g| !remove.contains(g));
    let mut user = existing;
    user["groups"] = json!(groups);
    s.collections.put_raw(USERS.name, &name, user.clone());
    sync_user_groups(&s, &name);
    Ok(axum::Json(user).into_response())
}

async fn user_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    access_api(&s)?;
    if s.collections.delete_raw(USERS.name, &name) {
        drop_user(&s, &name);
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(acc(
            StatusCode::NOT_FOUND,
            format!("User '{name}' not found"),
        ))
    }
}

async fn legacy_user_read(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    let mut u = user_get(&s, &name, Flavor::Artifactory)?
        .as_object()
        .cloned()
        .unwrap_or_default();
    rename(&mut u, LEGACY, false);
    Ok(axum::Json(Value::Object(u)).into_response())
}

async fn legacy_user_create(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    let mut m = legacy_user_members(parse(&body, Flavor::Artifactory)?);
    m.insert("username".into(), json!(name));
    user_create_common(&s, m, Flavor::Artifactory)
}

async fn legacy_user_update(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    let existing = user_get(&s, &name, Flavor::Artifactory)?;
    let mut m = legacy_user_members(parse(&body, Flavor::Artifactory)?);
    m.remove("username");
    let user = check_user(&s, m, Some(&existing), Flavor::Artifactory)?;
    s.collections.put_raw(USERS.name, &name, user);
    sync_user_groups(&s, &name);
    Ok(StatusCode::OK.into_response())
}

async fn legacy_user_delete(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
) -> R {
    // REST API "Delete User": 200 with the text "User 'NAME' has been removed successfully."
    remove(
        &s,
        &USERS,
        &name,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("User '{name}' not found"),
    )?;
    drop_user(&s, &name);
    Ok((
        StatusCode::OK,
        format!("User '{name}' has been removed successfully."),
    )
        .into_response())
}

// ---------------------------------------------------------------------------------------
// Groups

/// Security API member <-> Access v2 member of a group ("Security Configuration JSON"
/// Group and Access "Create Group"); other members are not kept.
const GROUP_MEMBERS: &[(&str, &str)] = &[
    ("name", "name"),
    ("description", "description"),
    ("autoJoin", "auto_join"),
    ("adminPrivileges", "admin_privileges"),
    ("realm", "realm"),
    ("realmAttributes", "realm_attributes"),
    ("externalId", "external_id"),
    ("watchManager", "watch_manager"),
    ("policyManager", "policy_manager"),
    ("reportsManager", "reports_manager"),
    ("userNames", "members"),
];

/// A security-API group (with its defaults) as the Access store keeps it.
fn access_group(legacy: &Value) -> Value {
    let mut out = Map::new();
    for (l, a) in GROUP_MEMBERS {
        if let Some(v) = legacy.get(*l).filter(|v| !v.is_null()) {
            out.insert((*a).to_string(), v.clone());
        }
    }
    // An internal group has no realm attributes in Access (the security API's `""` is its
    // own default, never stored).
    for empty in ["description", "realm_attributes"] {
        if out.get(empty).and_then(Value::as_str) == Some("") {
            out.remove(empty);
        }
    }
    // Artifactory keeps the realm in lower case: JFrog's `TestAccGroup_basic_datasource`
    // (terraform-provider-artifactory) writes "Realm name internal" through this API and
    // reads back "realm name internal".
    if let Some(Value::String(realm)) = out.get_mut("realm") {
        *realm = realm.to_lowercase();
    }
    Value::Object(out)
}

/// A stored (Access) group as the security API answers it.
fn legacy_group(stored: &Value) -> Value {
    let mut out = Map::new();
    for (l, a) in GROUP_MEMBERS {
        if let Some(v) = stored.get(*a).filter(|v| !v.is_null()) {
            out.insert((*l).to_string(), v.clone());
        }
    }
    group_defaults(Value::Object(out))
}

fn group_defaults(v: Value) -> Value {
    let mut g = json!({"description": "", "autoJoin": false, "adminPrivileges": false,
        "realm": "internal", "realmAttributes": "", "externalId": "", "watchManager": false,
        "policyManager": false, "reportsManager": false, "userNames": []});
    if let (Some(g), Value::Object(m)) = (g.as_object_mut(), v) {
        for (k, v) in m {
            if !v.is_null() {
                g.insert(k, v);
            }
        }
    }
    g
}

fn check_group(s: &Shared, name: &str, g: &Value) -> Result<(), ApiError> {
    if name.is_empty() || name.chars().count() > 64 {
        return Err(ApiError::bad_request(
            "Group name must be 1 to 64 characters",
        ));
    }
    if g["autoJoin"] == true && g["adminPrivileges"] == true {
        return Err(ApiError::bad_request(
            "Auto join cannot be enabled for a group with admin privileges",
        ));
    }
    if let Some(users) = g["userNames"].as_array() {
        for u in users.iter().filter_map(Value::as_str) {
            if !user_exists(s, u) {
                return Err(ApiError::bad_request(format!("User '{u}' does not exist")));
            }
        }
    }
    Ok(())
}

async fn groups_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let base = &s.base_url;
    let list = listed(&s, &GROUPS, |g| {
        let name = g["name"].as_str().unwrap_or_default();
        json!({"name": name, "uri": format!("{base}/artifactory/api/security/groups/{name}")})
    });
    Ok(axum::Json(list).into_response())
}

#[derive(serde::Deserialize)]
struct IncludeUsers {
    #[serde(rename = "includeUsers")]
    include_users: Option<String>,
}

/// A boolean query parameter as Artifactory's JAX-RS layer parses it (`Boolean.valueOf`):
/// `true` in any letter case is true, anything else false (Python clients send `True`).
pub(crate) fn query_bool(v: Option<&str>) -> bool {
    v.is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

async fn group_read(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    Query(q): Query<IncludeUsers>,
) -> R {
    let mut g = legacy_group(&fetch(
        &s,
        &GROUPS,
        &name,
        Flavor::Artifactory,
        format!("Group '{name}' not found"),
    )?);
    if !query_bool(q.include_users.as_deref())
        && let Some(m) = g.as_object_mut()
    {
        m.remove("userNames");
    }
    Ok(axum::Json(g).into_response())
}

async fn group_put(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    let mut g = group_defaults(Value::Object(parse(&body, Flavor::Artifactory)?));
    g["name"] = json!(name);
    check_group(&s, &name, &g)?;
    s.collections.put_raw(GROUPS.name, &name, access_group(&g));
    sync_group_members(&s, &name);
    Ok(StatusCode::CREATED.into_response())
}

async fn group_post(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    let mut g = legacy_group(&fetch(
        &s,
        &GROUPS,
        &name,
        Flavor::Artifactory,
        format!("Group '{name}' not found"),
    )?);
    for (k, v) in parse(&body, Flavor::Artifactory)? {
        // An empty `userNames` keeps the members: JFrog's Terraform provider updates a group
        // whose `users_names` it does not manage with this POST and `"userNames": []`, which
        // "prevents removing users" (`resource_artifactory_group.go`, Update).
        let keeps = k == "userNames" && v.as_array().is_some_and(Vec::is_empty);
        if !v.is_null() && k != "name" && !keeps {
            g[k] = v;
        }
    }
    check_group(&s, &name, &g)?;
    s.collections.put_raw(GROUPS.name, &name, access_group(&g));
    sync_group_members(&s, &name);
    Ok(StatusCode::OK.into_response())
}

async fn group_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    let r = remove(
        &s,
        &GROUPS,
        &name,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("Group '{name}' not found"),
    )?;
    drop_group(&s, &name);
    Ok(r)
}

// Memberships: a user's `groups` and a group's `members` are two views of one relation, kept
// alike on every write through this module (a membership made through the user API shows in
// `GET .../groups/{g}?includeUsers=true`, and a deleted group leaves its users' `groups`, so
// that their next update does not name a missing group).

fn names_in(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Sets or clears one member of a list member of a stored object; true when it changed.
fn set_in(v: &mut Value, member: &str, name: &str, on: bool, same: fn(&str, &str) -> bool) -> bool {
    let mut list = names_in(v.get(member));
    let has = list.iter().any(|x| same(x, name));
    if has == on {
        return false;
    }
    if on {
        list.push(name.to_owned());
    } else {
        list.retain(|x| !same(x, name));
    }
    v[member] = json!(list);
    true
}

fn same_user(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn same_group(a: &str, b: &str) -> bool {
    a == b
}

/// One side of the user–group relation kept in step with the other: in every object of
/// `side` (users or groups), the list `member` names `name` (compared by `same`) exactly when
/// `on(the object's key)`.
fn mirror(
    s: &Shared,
    side: &Declaration,
    member: &str,
    name: &str,
    same: fn(&str, &str) -> bool,
    on: impl Fn(&str) -> bool,
) {
    for mut o in s.collections.list_raw(side.name).unwrap_or_default() {
        let key = o
            .get(side.key_field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if set_in(&mut o, member, name, on(&key), same) {
            s.collections.put_raw(side.name, &key, o);
        }
    }
}

/// The groups' `members` after a write of `user`'s `groups`.
fn sync_user_groups(s: &Shared, user: &str) {
    let Some(u) = s.collections.get_raw(USERS.name, user) else {
        return;
    };
    let groups = names_in(u.get("groups"));
    mirror(s, &GROUPS, "members", user, same_user, |g| {
        groups.iter().any(|x| same_group(x, g))
    });
}

/// The users' `groups` after a write of `group`'s `members`.
pub(crate) fn sync_group_members(s: &Shared, group: &str) {
    let Some(g) = s.collections.get_raw(GROUPS.name, group) else {
        return;
    };
    let members = names_in(g.get("members"));
    mirror(s, &USERS, "groups", group, same_group, |u| {
        members.iter().any(|x| same_user(x, u))
    });
}

pub(crate) fn drop_group(s: &Shared, group: &str) {
    mirror(s, &USERS, "groups", group, same_group, |_| false);
}

fn drop_user(s: &Shared, user: &str) {
    mirror(s, &GROUPS, "members", user, same_user, |_| false);
}

// ---------------------------------------------------------------------------------------
// Permission targets (the v2 security API)

fn check_permission(s: &Shared, p: &mut Map<String, Value>) -> Result<(), ApiError> {
    let mut any = false;
    for section in ["repo", "build", "releaseBundle"] {
        let Some(Value::Object(sec)) = p.get_mut(section) else {
            continue;
        };
        any = true;
        let repos: Vec<&str> = sec
            .get("repositories")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if repos.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{section}.repositories must not be empty"
            )));
        }
        if section == "build" && repos != ["artifactory-build-info"] {
            return Err(ApiError::bad_request(
                "build.repositories must be [\"artifactory-build-info\"]",
            ));
        }
        if section == "repo" {
            for r in &repos {
                if !matches!(*r, "ANY" | "ANY LOCAL" | "ANY REMOTE" | "ANY DISTRIBUTION")
                    && s.artifactory.repository_raw(r).is_none()
                {
                    return Err(ApiError::bad_request(format!(
                        "Repository '{r}' does not exist"
                    )));
                }
            }
        }
        if sec.get("include-patterns").is_none() {
            sec.insert("include-patterns".into(), json!(["**"]));
        }
        if let Some(Value::Object(actions)) = sec.get("actions") {
            for (who, store) in [("users", USERS.name), ("groups", GROUPS.name)] {
                if let Some(Value::Object(map)) = actions.get(who) {
                    for (n, perms) in map {
                        let known = if who == "users" {
                            user_exists(s, n)
                        } else {
                            s.collections.get_raw(store, n).is_some()
                        };
                        if !known {
                            return Err(ApiError::bad_request(format!(
                                "{} '{n}' does not exist",
                                if who == "users" { "User" } else { "Group" }
                            )));
                        }
                        for perm in perms.as_array().into_iter().flatten() {
                            let ok = perm.as_str().is_some_and(|x| {
                                [
                                    "read",
                                    "write",
                                    "annotate",
                                    "delete",
                                    "manage",
                                    "managedXrayMeta",
                                    "distribute",
                                ]
                                .contains(&x)
                            });
                            if !ok {
                                return Err(ApiError::bad_request(format!(
                                    "Invalid permission {perm}"
                                )));
                            }
                        }
                    }
                }
            }
        }
    }
    if !any {
        return Err(ApiError::bad_request(
            "A permission target needs a repo, build or releaseBundle section",
        ));
    }
    Ok(())
}

/// `GET /api/v2/security/permissions`: `[{name, uri}]`.
async fn permissions_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let base = &s.base_url;
    let list = listed(&s, &PERMISSIONS, |p| {
        let name = p["name"].as_str().unwrap_or_default();
        json!({"name": name,
               "uri": format!("{base}/artifactory/api/v2/security/permissions/{name}")})
    });
    Ok(axum::Json(list).into_response())
}

async fn permission_read(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    let p = fetch(
        &s,
        &PERMISSIONS,
        &name,
        Flavor::Artifactory,
        format!("Permission target '{name}' not found"),
    )?;
    Ok(axum::Json(p).into_response())
}

async fn permission_create(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    permission_write(&s, &name, &body, true)
}

async fn permission_replace(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    permission_write(&s, &name, &body, false)
}

/// `POST` creates (409 when it exists); `PUT` is the documented "Create or Replace
/// Permission Target" (REST API, Permission Targets v2): 201 when it creates, 200 when it
/// replaces.
fn permission_write(s: &Shared, name: &str, body: &Bytes, create: bool) -> R {
    let exists = s.collections.get_raw(PERMISSIONS.name, name).is_some();
    if exists && create {
        return Err(art(
            StatusCode::CONFLICT,
            format!("Permission target '{name}' already exists"),
        ));
    }
    let p = permission_v2_of(parse(body, Flavor::Artifactory)?);
    store_permission(s, name, p)?;
    Ok(if exists {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    }
    .into_response())
}

/// The members of a v2 permission target Artifactory keeps (REST API "Permission Target
/// v2" JSON: `name` and the `repo`, `build`, `releaseBundle` sections, each with
/// `repositories`, `include-patterns`, `exclude-patterns` and `actions.{users,groups}`);
/// anything else is dropped.
fn permission_v2_of(mut m: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for section in ["repo", "build", "releaseBundle"] {
        if let Some(Value::Object(mut sec)) = m.remove(section) {
            sec.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "repositories" | "include-patterns" | "exclude-patterns" | "actions"
                )
            });
            if let Some(Value::Object(a)) = sec.get_mut("actions") {
                a.retain(|k, _| k == "users" || k == "groups");
            }
            out.insert(section.into(), Value::Object(sec));
        }
    }
    out
}

fn store_permission(s: &Shared, name: &str, mut p: Map<String, Value>) -> Result<(), ApiError> {
    check_permission(s, &mut p)?;
    for section in ["repo", "build", "releaseBundle"] {
        if let Some(Value::Object(sec)) = p.get_mut(section) {
            sec.entry("exclude-patterns").or_insert_with(|| json!([]));
            sec.entry("actions").or_insert_with(|| json!({}));
        }
    }
    p.insert("name".into(), json!(name));
    s.collections
        .put_raw(PERMISSIONS.name, name, Value::Object(p));
    Ok(())
}

// The v1 permission target API (`/api/security/permissions/{name}`, "Security
// Configuration JSON" PermissionTarget): one store with v2; a v1 target is the v2 `repo`
// section with comma-separated patterns and one-letter permissions.

/// v1 letter <-> v2 action (Security Configuration JSON: m=admin/manage, d=delete,
/// w=deploy/write, n=annotate, r=read, mxm=managedXrayMeta, x=distribute).
const V1_ACTIONS: &[(&str, &str)] = &[
    ("m", "manage"),
    ("d", "delete"),
    ("w", "write"),
    ("n", "annotate"),
    ("r", "read"),
    ("mxm", "managedXrayMeta"),
    ("x", "distribute"),
];

fn map_actions(v: Option<&Value>, to_v2: bool) -> Result<Value, ApiError> {
    let mut out = Map::new();
    for who in ["users", "groups"] {
        let mut names = Map::new();
        for (n, perms) in v
            .and_then(|p| p.get(who))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let mut mapped = Vec::new();
            for perm in perms.as_array().into_iter().flatten() {
                let p = perm.as_str().unwrap_or_default();
                let hit = V1_ACTIONS
                    .iter()
                    .find(|(l, a)| if to_v2 { *l == p } else { *a == p });
                match hit {
                    Some((l, a)) => mapped.push(json!(if to_v2 { a } else { l })),
                    None => {
                        return Err(ApiError::bad_request(format!("Invalid permission {perm}")));
                    }
                }
            }
            names.insert(n.clone(), Value::Array(mapped));
        }
        out.insert(who.into(), Value::Object(names));
    }
    Ok(Value::Object(out))
}

fn split_patterns(v: Option<&Value>, default: &str) -> Value {
    let s = v.and_then(Value::as_str).unwrap_or(default);
    Value::Array(
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| json!(p))
            .collect(),
    )
}

fn join_patterns(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

fn permission_v1_view(p: &Value) -> Result<Value, ApiError> {
    let repo = &p["repo"];
    Ok(json!({
        "name": p["name"],
        "includesPattern": join_patterns(&repo["include-patterns"]),
        "excludesPattern": join_patterns(&repo["exclude-patterns"]),
        "repositories": repo.get("repositories").cloned().unwrap_or(json!([])),
        "principals": map_actions(repo.get("actions"), false)?,
    }))
}

async fn permissions_v1_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let base = &s.base_url;
    let list = listed(&s, &PERMISSIONS, |p| {
        let name = p["name"].as_str().unwrap_or_default();
        json!({"name": name,
               "uri": format!("{base}/artifactory/api/security/permissions/{name}")})
    });
    Ok(axum::Json(list).into_response())
}

async fn permission_v1_read(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
) -> R {
    let p = fetch(
        &s,
        &PERMISSIONS,
        &name,
        Flavor::Artifactory,
        format!("Permission target '{name}' not found"),
    )?;
    Ok(axum::Json(permission_v1_view(&p)?).into_response())
}

/// v1 "Create or Replace Permission Target": 201 either way (no body).
async fn permission_v1_put(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    let m = parse(&body, Flavor::Artifactory)?;
    let mut repo = Map::new();
    repo.insert(
        "repositories".into(),
        m.get("repositories").cloned().unwrap_or(json!([])),
    );
    repo.insert(
        "include-patterns".into(),
        split_patterns(m.get("includesPattern"), "**"),
    );
    repo.insert(
        "exclude-patterns".into(),
        split_patterns(m.get("excludesPattern"), ""),
    );
    repo.insert("actions".into(), map_actions(m.get("principals"), true)?);
    let mut p = Map::new();
    p.insert("repo".into(), Value::Object(repo));
    store_permission(&s, &name, p)?;
    Ok(StatusCode::CREATED.into_response())
}

async fn permission_v1_delete(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
) -> R {
    remove(
        &s,
        &PERMISSIONS,
        &name,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("Permission target '{name}' not found"),
    )?;
    Ok((
        StatusCode::OK,
        format!("Permission Target '{name}' has been removed successfully."),
    )
        .into_response())
}

async fn permission_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    remove(
        &s,
        &PERMISSIONS,
        &name,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("Permission target '{name}' not found"),
    )
}

// ---------------------------------------------------------------------------------------
// Certificates (text/plain PEM uploads) and trusted keys

async fn certificates_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    Ok(axum::Json(
        s.collections
            .list_raw(CERTIFICATES.name)
            .unwrap_or_default(),
    )
    .into_response())
}

async fn certificate_upload(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(alias): Path<String>,
    body: Bytes,
) -> R {
    let pem = String::from_utf8_lossy(&body);
    if !pem.contains("-----BEGIN CERTIFICATE-----") || !pem.contains("PRIVATE KEY-----") {
        return Err(ApiError::bad_request(
            "Invalid PEM: expected a certificate followed by its private key",
        ));
    }
    let meta = certificate_meta(&pem)?;
    s.collections.put_raw(CERTIFICATES.name, &alias, meta);
    Ok(StatusCode::OK.into_response())
}

/// The metadata Artifactory answers for an uploaded certificate, from the certificate itself
/// (JFrog's Terraform provider, `resource_artifactory_certificate.go` and its acceptance test:
/// `fingerprint` the SHA-256 of the DER in upper-case hex pairs joined by `:`, `issuedOn` /
/// `validUntil` the validity bounds as `2019-05-17T10:03:26.000Z`, `issuedBy` / `issuedTo`
/// the issuer's and the subject's common name, `Unknown` without one).
fn certificate_meta(pem: &str) -> Result<Value, ApiError> {
    let invalid = |e: String| ApiError::bad_request(format!("Invalid certificate: {e}"));
    let b64: String = pem
        .split("-----BEGIN CERTIFICATE-----")
        .nth(1)
        .and_then(|r| r.split("-----END CERTIFICATE-----").next())
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| invalid(e.to_string()))?;
    let (_, cert) =
        x509_parser::parse_x509_certificate(&der).map_err(|e| invalid(e.to_string()))?;
    let cn = |n: &x509_parser::x509::X509Name<'_>| {
        n.iter_common_name()
            .next()
            .and_then(|c| c.as_str().ok())
            .map_or_else(|| "Unknown".to_owned(), str::to_owned)
    };
    let time = |t: x509_parser::time::ASN1Time| {
        chrono::DateTime::from_timestamp(t.timestamp(), 0)
            .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default()
    };
    let fp = Sha256::digest(&der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    Ok(json!({
        "fingerprint": fp,
        "issuedOn": time(cert.validity().not_before),
        "issuedBy": cn(cert.issuer()),
        "issuedTo": cn(cert.subject()),
        "validUntil": time(cert.validity().not_after),
    }))
}

/// An armoured OpenPGP public key's v4 fingerprint (SHA-1 over `0x99`, the two-byte length
/// and the body of the public-key packet, tag 6; lower-case hex pairs joined by `:`) and its
/// first User ID (tag 13), as Artifactory answers a distribution public key (JFrog's Terraform
/// provider, `resource_artifactory_distribution_public_key_test.go`: `fingerprint`
/// `10:16:2c:...`, `issued_by` the key's UID). `None` when it is not such a key.
fn openpgp_identity(armoured: &str) -> Option<(String, String)> {
    let body = armoured
        .split("-----BEGIN PGP PUBLIC KEY BLOCK-----")
        .nth(1)?;
    let body = body.split("-----END PGP PUBLIC KEY BLOCK-----").next()?;
    // After the marker's line: optional armour headers (`Name: value`) up to an empty line,
    // the base64 data, then the CRC line starting with `=`.
    let lines: Vec<&str> = body.lines().skip(1).map(str::trim).collect();
    let start = match lines.iter().position(|l| l.is_empty()) {
        Some(e) if lines[..e].iter().all(|l| l.contains(": ")) => e + 1,
        _ => 0,
    };
    let b64: String = lines[start..]
        .iter()
        .filter(|l| !l.is_empty() && !l.starts_with('='))
        .copied()
        .collect();
    let data = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let (mut fpr, mut uid) = (None, None);
    let mut i = 0;
    while i < data.len() && (fpr.is_none() || uid.is_none()) {
        let (tag, len, head) = packet_header(&data[i..])?;
        let body = data.get(i + head..i + head + len)?;
        match tag {
            6 if fpr.is_none() && body.first() == Some(&4) => {
                let mut h = sha1::Sha1::new();
                sha1::Digest::update(&mut h, [0x99]);
                sha1::Digest::update(&mut h, u16::try_from(len).ok()?.to_be_bytes());
                sha1::Digest::update(&mut h, body);
                let d = sha1::Digest::finalize(h);
                fpr = Some(
                    d.iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(":"),
                );
            }
            13 if uid.is_none() => uid = Some(String::from_utf8_lossy(body).into_owned()),
            _ => {}
        }
        i += head + len;
    }
    Some((fpr?, uid.unwrap_or_default()))
}

/// An OpenPGP packet header (RFC 4880 4.2): tag, body length, header length.
fn packet_header(d: &[u8]) -> Option<(u8, usize, usize)> {
    let first = *d.first()?;
    if first & 0x80 == 0 {
        return None;
    }
    if first & 0x40 == 0 {
        // Old format: tag in bits 5-2, length type in bits 1-0.
        let tag = (first >> 2) & 0x0f;
        let n = match first & 3 {
            0 => 1,
            1 => 2,
            2 => 4,
            _ => return None,
        };
        let len = d
            .get(1..1 + n)?
            .iter()
            .fold(0usize, |a, b| (a << 8) | usize::from(*b));
        return Some((tag, len, 1 + n));
    }
    let tag = first & 0x3f;
    let l0 = usize::from(*d.get(1)?);
    match l0 {
        0..=191 => Some((tag, l0, 2)),
        192..=223 => Some((tag, ((l0 - 192) << 8) + usize::from(*d.get(2)?) + 192, 3)),
        255 => {
            let len = d
                .get(2..6)?
                .iter()
                .fold(0usize, |a, b| (a << 8) | usize::from(*b));
            Some((tag, len, 6))
        }
        _ => None, // partial lengths are not used by key packets
    }
}

async fn certificate_delete(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(alias): Path<String>,
) -> R {
    remove(
        &s,
        &CERTIFICATES,
        &alias,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("Certificate '{alias}' not found"),
    )
}

async fn trusted_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let keys = s
        .collections
        .list_raw(TRUSTED_KEYS.name)
        .unwrap_or_default();
    Ok(axum::Json(json!({"keys": keys})).into_response())
}

async fn trusted_create(State(s): State<Arc<Shared>>, _a: Admin, body: Bytes) -> R {
    let m = parse(&body, Flavor::Artifactory)?;
    let alias = str_of(&m, "alias").to_string();
    let key = str_of(&m, "key").to_string();
    if alias.is_empty() {
        return Err(ApiError::bad_request("'alias' is required"));
    }
    if !key.contains("-----BEGIN PUBLIC KEY-----")
        && !key.contains("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    {
        return Err(ApiError::bad_request(
            "Invalid key: expected a PEM public key or an armored GPG public key",
        ));
    }
    let taken = s
        .collections
        .list_raw(TRUSTED_KEYS.name)
        .unwrap_or_default()
        .iter()
        .any(|k| k["alias"] == alias.as_str());
    if taken {
        return Err(art(
            StatusCode::CONFLICT,
            format!("A trusted key with alias '{alias}' already exists"),
        ));
    }
    let kid = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let (fpr, issued_by) = if key.contains("-----BEGIN PGP PUBLIC KEY BLOCK-----") {
        openpgp_identity(&key).ok_or_else(|| {
            ApiError::bad_request("Invalid key: the armored GPG public key could not be read")
        })?
    } else {
        (fingerprint(&key), "admin".to_owned())
    };
    let v = json!({"alias": alias, "key": key, "fingerprint": fpr,
        "issued_on": now(), "issued_by": issued_by, "valid_until": "2036-01-01T00:00:00.000Z"});
    s.collections.put_raw(TRUSTED_KEYS.name, &kid, v);
    let stored = s.collections.get_raw(TRUSTED_KEYS.name, &kid);
    Ok((StatusCode::CREATED, axum::Json(stored)).into_response())
}

async fn trusted_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(kid): Path<String>) -> R {
    remove(
        &s,
        &TRUSTED_KEYS,
        &kid,
        StatusCode::NO_CONTENT,
        Flavor::Artifactory,
        format!("Key '{kid}' not found"),
    )
}

// ---------------------------------------------------------------------------------------
// Global environments

pub(crate) fn valid_environment(n: &str) -> bool {
    let mut c = n.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && n.len() <= 32
        && c.all(|x| x.is_ascii_alphanumeric() || x == '-')
}

async fn environments_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    Ok(axum::Json(
        s.collections
            .list_raw(ENVIRONMENTS.name)
            .unwrap_or_default(),
    )
    .into_response())
}

async fn environment_create(State(s): State<Arc<Shared>>, _a: Admin, body: Bytes) -> R {
    let m = parse(&body, Flavor::Access)?;
    let name = str_of(&m, "name").to_string();
    if !valid_environment(&name) {
        return Err(acc(
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid environment name '{name}': starts with a letter, letters, digits and '-' only, at most 32 characters"
            ),
        ));
    }
    if s.collections.get_raw(ENVIRONMENTS.name, &name).is_some() {
        return Err(acc(
            StatusCode::CONFLICT,
            format!("Environment '{name}' already exists"),
        ));
    }
    s.collections.put_raw(ENVIRONMENTS.name, &name, json!({}));
    Ok(StatusCode::CREATED.into_response())
}

async fn environment_delete(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
) -> R {
    remove(
        &s,
        &ENVIRONMENTS,
        &name,
        StatusCode::NO_CONTENT,
        Flavor::Access,
        format!("Environment '{name}' not found"),
    )
}

// ---------------------------------------------------------------------------------------
// Key pairs

async fn keypair_create(State(s): State<Arc<Shared>>, _a: Admin, body: Bytes) -> R {
    let m = parse(&body, Flavor::Artifactory)?;
    let name = str_of(&m, "pairName").to_string();
    let ty = str_of(&m, "pairType");
    if name.is_empty() {
        return Err(ApiError::bad_request("'pairName' is required"));
    }
    if !matches!(ty, "RSA" | "GPG") {
        return Err(ApiError::bad_request(format!(
            "Invalid pairType '{ty}': RSA or GPG"
        )));
    }
    let private = str_of(&m, "privateKey");
    if !private.contains("PRIVATE KEY") {
        return Err(ApiError::bad_request("Invalid private key"));
    }
    if str_of(&m, "alias").is_empty() || str_of(&m, "publicKey").is_empty() {
        return Err(ApiError::bad_request(
            "'alias' and 'publicKey' are required",
        ));
    }
    if s.collections.get_raw(KEYPAIRS.name, &name).is_some() {
        return Err(art(
            StatusCode::CONFLICT,
            format!("Key pair '{name}' already exists"),
        ));
    }
    // The private key and passphrase are kept only as a digest (never answered).
    let v = json!({"pairType": ty, "alias": m["alias"], "publicKey": m["publicKey"],
        "privateKeyDigest": fingerprint(private)});
    s.collections.put_raw(KEYPAIRS.name, &name, v);
    Ok(StatusCode::CREATED.into_response())
}

/// "Get all key pairs" (7.19): what each pair's read answers, never the private key.
async fn keypairs_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    Ok(axum::Json(listed(&s, &KEYPAIRS, keypair_shown)).into_response())
}

/// A stored key pair as JFrog shows it: without the private key's digest.
fn keypair_shown(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("privateKeyDigest");
    }
    v
}

async fn keypair_read(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    let v = fetch(
        &s,
        &KEYPAIRS,
        &name,
        Flavor::Artifactory,
        format!("Key pair '{name}' not found"),
    )?;
    Ok(axum::Json(keypair_shown(v)).into_response())
}

async fn keypair_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    remove(
        &s,
        &KEYPAIRS,
        &name,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("Key pair '{name}' not found"),
    )
}

// ---------------------------------------------------------------------------------------
// The two security policies (platform singletons with defaults)

/// A policy: its key, its defaults, and its rule.
struct Policy {
    key: &'static str,
    defaults: fn() -> Value,
    check: fn(&Value) -> Result<(), String>,
}

const PASSWORD_EXPIRATION: &Policy = &Policy {
    key: "passwordExpirationPolicy",
    defaults: || json!({"enabled": false, "passwordMaxAge": 60, "notifyByEmail": true}),
    check: |v| {
        let age = v["passwordMaxAge"].as_i64().unwrap_or(0);
        if v["enabled"] == true && age < 1 {
            return Err(format!(
                "passwordMaxAge must be at least 1 day when enabled (got {age})"
            ));
        }
        Ok(())
    },
};

const USER_LOCK: &Policy = &Policy {
    key: "userLockPolicy",
    defaults: || json!({"enabled": false, "loginAttempts": 5}),
    check: |v| {
        let n = v["loginAttempts"].as_i64().unwrap_or(-1);
        if v["enabled"] == true && !(1..=100).contains(&n) {
            return Err(format!(
                "loginAttempts must be between 1 and 100 when enabled (got {n})"
            ));
        }
        if n < 0 {
            return Err("loginAttempts cannot be negative".into());
        }
        Ok(())
    },
};

fn policy_now(s: &Shared, p: &Policy) -> Value {
    let mut v = s
        .collections
        .get_raw(POLICIES.name, p.key)
        .unwrap_or_else(p.defaults);
    if let Some(m) = v.as_object_mut() {
        m.remove(POLICIES.key_field);
    }
    v
}

async fn policy_read(State(s): State<Arc<Shared>>, _a: Admin, p: &'static Policy) -> R {
    Ok(axum::Json(policy_now(&s, p)).into_response())
}

async fn policy_write(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    body: Bytes,
    p: &'static Policy,
) -> R {
    let mut v = policy_now(&s, p);
    for (k, x) in parse(&body, Flavor::Artifactory)? {
        if (p.defaults)().get(&k).is_some() && !x.is_null() {
            v[k] = x;
        }
    }
    (p.check)(&v).map_err(ApiError::bad_request)?;
    s.collections.put_raw(POLICIES.name, p.key, v.clone());
    Ok(axum::Json(v).into_response())
}

// ---------------------------------------------------------------------------------------
// Vault configurations

fn check_vault(v: &Map<String, Value>) -> Result<(), String> {
    if str_of(v, "type") != "HashicorpVault" {
        return Err("type must be HashicorpVault".into());
    }
    let c = v
        .get("config")
        .and_then(Value::as_object)
        .ok_or("config is required")?;
    let url = str_of(c, "url");
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("config.url must be an http(s) URL (got '{url}')"));
    }
    let auth = c
        .get("auth")
        .and_then(Value::as_object)
        .ok_or("config.auth is required")?;
    match str_of(auth, "type") {
        "AppRole" if str_of(auth, "roleId").is_empty() || str_of(auth, "secretId").is_empty() => {
            return Err("AppRole authentication needs roleId and secretId".into());
        }
        "Certificate"
            if str_of(auth, "certificate").is_empty()
                || str_of(auth, "certificateKey").is_empty() =>
        {
            return Err("Certificate authentication needs certificate and certificateKey".into());
        }
        "AppRole" | "Certificate" | "Agent" => {}
        other => {
            return Err(format!(
                "config.auth.type must be Certificate, AppRole or Agent (got '{other}')"
            ));
        }
    }
    let mounts = c
        .get("mounts")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or("config.mounts needs at least one mount")?;
    for m in mounts {
        if !matches!(m["type"].as_str(), Some("KV1" | "KV2")) || m["path"].as_str().is_none() {
            return Err(format!("invalid mount {m}: path and type KV1 or KV2"));
        }
    }
    Ok(())
}

/// What a read answers: the AppRole credentials hashed, the certificate key removed.
fn vault_view(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(auth) = v
        .get_mut("config")
        .and_then(|c| c.get_mut("auth"))
        .and_then(Value::as_object_mut)
    {
        for k in ["roleId", "secretId"] {
            if let Some(x) = auth.get(k).and_then(Value::as_str) {
                let h = fingerprint(x);
                auth.insert(k.into(), json!(h));
            }
        }
        auth.remove("certificateKey");
    }
    v
}

async fn vault_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let list: Vec<Value> = s
        .collections
        .list_raw(VAULT.name)
        .unwrap_or_default()
        .iter()
        .map(vault_view)
        .collect();
    Ok(axum::Json(list).into_response())
}

async fn vault_read(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    let v = fetch(
        &s,
        &VAULT,
        &name,
        Flavor::Access,
        format!("Vault configuration '{name}' not found"),
    )?;
    Ok(axum::Json(vault_view(&v)).into_response())
}

async fn vault_put(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> R {
    let mut m = parse(&body, Flavor::Access)?;
    check_vault(&m).map_err(|e| acc(StatusCode::BAD_REQUEST, e))?;
    m.insert("key".into(), json!(name));
    let existed = s.collections.get_raw(VAULT.name, &name).is_some();
    s.collections.put_raw(VAULT.name, &name, Value::Object(m));
    Ok(if existed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    }
    .into_response())
}

async fn vault_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(name): Path<String>) -> R {
    remove(
        &s,
        &VAULT,
        &name,
        StatusCode::NO_CONTENT,
        Flavor::Access,
        format!("Vault configuration '{name}' not found"),
    )
}

// ---------------------------------------------------------------------------------------
// Scoped tokens

fn secret_token(prefix: &str) -> String {
    use base64::Engine;
    let raw = format!("{}{}", uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    format!(
        "{prefix}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    )
}

async fn tokens_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let tokens = s.collections.list_raw(TOKENS.name).unwrap_or_default();
    Ok(axum::Json(json!({"tokens": tokens})).into_response())
}

/// `POST /access/api/v1/tokens` takes JSON or, as the Access REST API documents ("Create
/// Token", `-d "username=..." -d "scope=..."`), `application/x-www-form-urlencoded`; form
/// values are strings, so numbers and booleans are read from their text.
fn token_request(
    headers: &axum::http::HeaderMap,
    body: &Bytes,
) -> Result<Map<String, Value>, ApiError> {
    let form = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !form {
        return parse(body, Flavor::Access);
    }
    let mut m = Map::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        let value = match k.as_ref() {
            "expires_in" => v
                .parse::<i64>()
                .map(|n| json!(n))
                .map_err(|_| acc(StatusCode::BAD_REQUEST, format!("Invalid expires_in '{v}'")))?,
            "refreshable" | "include_reference_token" | "force_revocable" => {
                json!(query_bool(Some(&v)))
            }
            _ => json!(v),
        };
        m.insert(k.into_owned(), value);
    }
    Ok(m)
}

/// Access's default token persistency threshold in seconds, as the Artifactory Terraform
/// provider's `expires_in` documentation gives it.
const PERSISTENCY_THRESHOLD_SECONDS: i64 = 10_800;

async fn token_create(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> R {
    let m = token_request(&headers, &body)?;
    let bad = |msg: String| acc(StatusCode::BAD_REQUEST, msg);
    let grant = m
        .get("grant_type")
        .and_then(Value::as_str)
        .unwrap_or("client_credentials");
    if grant != "client_credentials" {
        return Err(bad(format!("Unsupported grant_type '{grant}'")));
    }
    let description = str_of(&m, "description");
    if description.chars().count() > 1024 {
        return Err(bad("description is longer than 1024 characters".into()));
    }
    let scope = m
        .get("scope")
        .and_then(Value::as_str)
        .unwrap_or("applied-permissions/user");
    if scope.len() > 500 {
        return Err(bad("scope is longer than 500 characters".into()));
    }
    let audience = str_of(&m, "audience");
    if audience.len() > 255 {
        return Err(bad("audience is longer than 255 characters".into()));
    }
    let username = m.get("username").and_then(Value::as_str).unwrap_or("admin");
    // A token scoped to groups is issued for a name that is no user (Access creates a
    // transient user): JFrog's Artifactory Terraform provider's
    // `TestAccScopedToken_WithSingleGroupScope` names the group as `username`.
    let groups_scoped = scope
        .split_whitespace()
        .any(|sc| sc.starts_with("applied-permissions/groups:"));
    if username != "admin"
        && !groups_scoped
        && s.collections.get_raw(USERS.name, username).is_none()
    {
        return Err(bad(format!("User '{username}' does not exist")));
    }
    let expires_in = m
        .get("expires_in")
        .and_then(Value::as_i64)
        .unwrap_or(31_536_000);
    let refreshable = bool_of(&m, "refreshable");
    let id = uuid::Uuid::new_v4().to_string();
    let issued = chrono::Utc::now().timestamp();
    let mut stored = json!({"subject": format!("jfac@sim/users/{username}"), "issued_at": issued,
        "issuer": "jfac@sim", "description": description, "refreshable": refreshable});
    if expires_in > 0 {
        stored["expiry"] = json!(issued + expires_in);
    }
    // Access keeps only tokens that live at least its persistency threshold (10800 s by
    // default) or never expire; a shorter one is issued but never stored, so reading or
    // revoking it by ID answers 404 (JFrog's Artifactory Terraform provider's
    // `TestAccScopedToken_WithExpiresInLessThanPersistencyThreshold`, `expires_in` 600, and
    // its `expires_in` documentation; "Persistency Threshold" in JFrog's platform
    // administration documentation).
    if expires_in == 0 || expires_in >= PERSISTENCY_THRESHOLD_SECONDS {
        s.collections.put_raw(TOKENS.name, &id, stored);
    }
    let mut answer = json!({"token_id": id, "access_token": secret_token("eyJ2ZXIiOiIyIn0."),
        "expires_in": expires_in, "scope": scope, "token_type": "Bearer"});
    if refreshable {
        answer["refresh_token"] = json!(secret_token("rft-"));
    }
    if bool_of(&m, "include_reference_token") {
        answer["reference_token"] = json!(secret_token("cmVmdGtu"));
    }
    Ok(axum::Json(answer).into_response())
}

async fn token_read(State(s): State<Arc<Shared>>, _a: Admin, Path(id): Path<String>) -> R {
    let v = fetch(
        &s,
        &TOKENS,
        &id,
        Flavor::Access,
        format!("Token '{id}' not found"),
    )?;
    Ok(axum::Json(v).into_response())
}

async fn token_revoke(State(s): State<Arc<Shared>>, _a: Admin, Path(id): Path<String>) -> R {
    remove(
        &s,
        &TOKENS,
        &id,
        StatusCode::OK,
        Flavor::Access,
        format!("Token '{id}' not found"),
    )
}

// ---------------------------------------------------------------------------------------
// API keys (removed from Artifactory 7.98.0)

const API_KEYS_REMOVED_IN: (u64, u64, u64) = (7, 98, 0);

fn api_keys(s: &Shared) -> Result<(), ApiError> {
    if version_at_least(s, API_KEYS_REMOVED_IN) {
        Err(art(StatusCode::NOT_FOUND, "Not Found"))
    } else {
        Ok(())
    }
}

async fn api_key_read(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    api_keys(&s)?;
    let key = s
        .collections
        .get_raw(API_KEYS.name, "admin")
        .and_then(|v| v["apiKey"].as_str().map(str::to_string))
        .unwrap_or_default();
    Ok(axum::Json(json!({"apiKey": key})).into_response())
}

async fn api_key_create(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    api_keys(&s)?;
    if s.collections.get_raw(API_KEYS.name, "admin").is_some() {
        return Err(ApiError::bad_request(
            "Api key already exists for user: admin",
        ));
    }
    let key = secret_token("AKCp8");
    s.collections
        .put_raw(API_KEYS.name, "admin", json!({"apiKey": key}));
    Ok((StatusCode::CREATED, axum::Json(json!({"apiKey": key}))).into_response())
}

async fn api_key_delete(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    api_keys(&s)?;
    s.collections.delete_raw(API_KEYS.name, "admin");
    Ok(axum::Json(json!({"info": "Api key deleted"})).into_response())
}

// ---------------------------------------------------------------------------------------
// Replications

use crate::services::artifactory::configuration::valid_cron;

/// Artifactory's refusal of a replication's cron expression: the Terraform provider's
/// replication acceptance tests expect `.*Invalid cronExp.*` for `0 0 xoxo xoxoxo * ?`
/// (`resource_artifactory_local_repository_single_replication_test.go`).
fn invalid_cron(cron: &str) -> ApiError {
    ApiError::bad_request(format!(
        "Invalid cronExp: '{cron}' is not a valid cron expression"
    ))
}

fn rclass(s: &Shared, key: &str) -> Result<String, ApiError> {
    s.artifactory
        .repository_raw(key)
        .and_then(|r| r["rclass"].as_str().map(str::to_string))
        .ok_or_else(|| {
            art(
                StatusCode::NOT_FOUND,
                format!("Repository '{key}' not found"),
            )
        })
}

/// One target as stored: defaults filled, `proxy` kept as `proxyRef`, the password scrambled.
fn target(key: &str, class: &str, mut t: Map<String, Value>, n: usize) -> Result<Value, ApiError> {
    let cron = str_of(&t, "cronExp");
    if !cron.is_empty() && !valid_cron(cron) {
        return Err(invalid_cron(cron));
    }
    if class == "local" {
        if str_of(&t, "url").is_empty() || str_of(&t, "username").is_empty() {
            return Err(ApiError::bad_request(
                "A push replication needs url and username",
            ));
        }
    } else if !str_of(&t, "url").is_empty() {
        return Err(ApiError::bad_request(
            "A pull replication of a remote repository takes no url (the repository's own is used)",
        ));
    }
    if let Some(p) = t.remove("proxy") {
        t.insert("proxyRef".into(), p);
    }
    if let Some(Value::String(p)) = t.get("password")
        && !p.is_empty()
    {
        let scrambled = format!("AM.{}", &fingerprint(p)[..16]);
        t.insert("password".into(), json!(scrambled));
    }
    let mut out = json!({"socketTimeoutMillis": 15000, "syncDeletes": class == "remote",
        "syncProperties": true, "syncStatistics": false, "enabled": true,
        "includePathPrefixPattern": "", "excludePathPrefixPattern": "", "proxyRef": "",
        "disableProxy": false, "checkBinaryExistenceInFilestore": false,
        "enableEventReplication": false});
    for (k, v) in t {
        if !v.is_null() {
            out[k] = v;
        }
    }
    out["repoKey"] = json!(key);
    out["replicationKey"] = json!(format!("{key}_{n}"));
    Ok(out)
}

fn targets_of(s: &Shared, key: &str) -> Option<Vec<Value>> {
    s.collections
        .get_raw(REPLICATIONS.name, key)
        .and_then(|v| v["targets"].as_array().cloned())
}

/// Artifactory removes a repository's replication configuration with the repository.
pub(crate) fn forget_replications(s: &Shared, key: &str) {
    s.collections.delete_raw(REPLICATIONS.name, key);
}

fn store_targets(s: &Shared, key: &str, targets: Vec<Value>) {
    s.collections
        .put_raw(REPLICATIONS.name, key, json!({"targets": targets}));
}

/// `GET /api/replications`: every replication target of every repository (a multi-push
/// repository once per target), passwords left out.
async fn replications_list(State(s): State<Arc<Shared>>, _a: Admin) -> R {
    let list: Vec<Value> = s
        .collections
        .list_raw(REPLICATIONS.name)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|r| r["targets"].as_array().cloned().unwrap_or_default())
        .map(|mut t| {
            if let Some(m) = t.as_object_mut() {
                m.remove("password");
            }
            t
        })
        .collect();
    Ok(axum::Json(list).into_response())
}

async fn replication_read(State(s): State<Arc<Shared>>, _a: Admin, Path(key): Path<String>) -> R {
    let class = rclass(&s, &key)?;
    let targets = targets_of(&s, &key).ok_or_else(|| {
        art(
            StatusCode::NOT_FOUND,
            format!("No replication configured for repository '{key}'"),
        )
    })?;
    Ok(if class == "remote" {
        axum::Json(targets.into_iter().next().unwrap_or(Value::Null)).into_response()
    } else {
        axum::Json(targets).into_response()
    })
}

async fn replication_put(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
    body: Bytes,
) -> R {
    let class = rclass(&s, &key)?;
    if class != "local" && class != "remote" {
        return Err(ApiError::bad_request(format!(
            "Replication is only supported for local and remote repositories ('{key}' is {class})"
        )));
    }
    let t = target(&key, &class, parse(&body, Flavor::Artifactory)?, 0)?;
    store_targets(&s, &key, vec![t]);
    Ok(StatusCode::CREATED.into_response())
}

async fn replication_post(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
    body: Bytes,
) -> R {
    let class = rclass(&s, &key)?;
    let old = targets_of(&s, &key).ok_or_else(|| {
        art(
            StatusCode::NOT_FOUND,
            format!("No replication configured for repository '{key}'"),
        )
    })?;
    let mut merged = old
        .first()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(p) = merged.remove("proxyRef") {
        merged.insert("proxy".into(), p);
    }
    for (k, v) in parse(&body, Flavor::Artifactory)? {
        merged.insert(k, v);
    }
    let t = target(&key, &class, merged, 0)?;
    store_targets(&s, &key, vec![t]);
    Ok(StatusCode::OK.into_response())
}

fn multi(s: &Shared, key: &str, body: &Bytes) -> Result<Vec<Value>, ApiError> {
    let class = rclass(s, key)?;
    if class != "local" {
        return Err(ApiError::bad_request(format!(
            "Multi-push replication is only supported for local repositories ('{key}' is {class})"
        )));
    }
    let m = parse(body, Flavor::Artifactory)?;
    let cron = str_of(&m, "cronExp");
    if !valid_cron(cron) {
        return Err(invalid_cron(cron));
    }
    let list = m
        .get("replications")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| ApiError::bad_request("At least one replication target is required"))?;
    let mut urls = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let mut t = t.as_object().cloned().unwrap_or_default();
        if !urls.insert(str_of(&t, "url").to_string()) {
            return Err(ApiError::bad_request(format!(
                "Duplicate replication url '{}'",
                str_of(&t, "url")
            )));
        }
        t.insert("cronExp".into(), json!(cron));
        t.insert(
            "enableEventReplication".into(),
            m.get("enableEventReplication")
                .cloned()
                .unwrap_or(json!(false)),
        );
        out.push(target(key, &class, t, i)?);
    }
    Ok(out)
}

async fn replications_put(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
    body: Bytes,
) -> R {
    let targets = multi(&s, &key, &body)?;
    store_targets(&s, &key, targets);
    Ok(StatusCode::CREATED.into_response())
}

async fn replications_post(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
    body: Bytes,
) -> R {
    if targets_of(&s, &key).is_none() {
        return Err(art(
            StatusCode::NOT_FOUND,
            format!("No replication configured for repository '{key}'"),
        ));
    }
    let targets = multi(&s, &key, &body)?;
    store_targets(&s, &key, targets);
    Ok(StatusCode::OK.into_response())
}

async fn replication_delete(State(s): State<Arc<Shared>>, _a: Admin, Path(key): Path<String>) -> R {
    remove(
        &s,
        &REPLICATIONS,
        &key,
        StatusCode::OK,
        Flavor::Artifactory,
        format!("No replication configured for repository '{key}'"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jfrog_rules() {
        assert!(valid_username("ci.bot-1@x"));
        assert!(!valid_username("CI"));
        assert!(strong("Passw0rdX"));
        assert!(!strong("password"));
        assert!(valid_environment("PROD-1"));
        assert!(!valid_environment("1prod"));
        assert!(valid_cron("0 0 2 * * ?"));
        assert!(!valid_cron("0 2 * *"));
        assert!((USER_LOCK.check)(&json!({"enabled": true, "loginAttempts": 0})).is_err());
        assert!((USER_LOCK.check)(&json!({"enabled": false, "loginAttempts": 0})).is_ok());
    }
}
