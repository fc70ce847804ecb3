//! The platform-wide APIs behind provider-platform: Access global roles, groups (v2) and
//! their members, permissions (v2), SCIM users and groups, OIDC configurations and identity
//! mappings, SAML, Crowd and HTTP SSO settings, AWS IAM role bindings, lifecycle stages and
//! lifecycles; the Worker service's workers; Artifactory's licence and reverse proxy
//! (web server) configuration.
//!
//! Plain keyed collections use the generic collection service (a [`Declaration`] with
//! JFrog's validation and a [`Binding`]); the calls that are not plain CRUD (group PATCH and
//! members, per-resource permission updates, upserts, settings, calls scoped by a
//! `project_key` query parameter) are written here over the same stores, so the admin API
//! sees every object.
//!
//! Rules kept (with JFrog's status codes; messages paraphrased where unverified): a global
//! role is `CUSTOM_GLOBAL` with at least one environment and action; a group cannot
//! auto-join with admin privileges, and `policy_manager` implies `policy_viewer`; group
//! members are added and removed by name, an added member must be a user of the platform
//! (404 "User 'x' does not exist"), and a missing group answers 404; a permission
//! needs at least one resource with at least one target; SCIM bodies carry their schema
//! URN; OIDC provider types are JFrog's spellings and issuers https URLs; identity mappings
//! live under an existing OIDC configuration (per project when `project_key` is given);
//! an IAM role is an ARN; lifecycle stages are `none`, `code` or `promote`, a project stage
//! is prefixed by its project, a stage used by a lifecycle cannot be deleted, and a
//! lifecycle promotes only through existing stages other than PR, COMMIT and PROD (the
//! system stages, listed and read as global stages); the stage list shows the global
//! stages, or with `project_key` the project's and the global ones, filtered by `scope`
//! and `category`. Secrets
//! (Crowd password, worker secrets, the licence key) are never returned.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post, put};
use axum::{Json, Router};
use serde_json::{Map, Value, json};

use crate::auth::Admin;
use crate::collections::{
    Access, Binding, CreateAnswer, Ctx, Declaration, Ids, KeyCase, Op, UpdateAnswer, Written,
    accept_object, as_stored,
};
use crate::errors::{ApiError, Flavor};
use crate::paging;
use crate::server::Shared;
use crate::services::projects::delete_or_404;
use crate::services::security;

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, StatusCode::BAD_REQUEST, msg)
}

fn missing(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, StatusCode::NOT_FOUND, msg)
}

fn not_found(k: &str) -> (StatusCode, String) {
    (StatusCode::NOT_FOUND, format!("'{k}' was not found"))
}

fn exists(k: &str) -> (StatusCode, String) {
    (StatusCode::CONFLICT, format!("'{k}' already exists"))
}

fn obj(body: Value) -> Result<Map<String, Value>, ApiError> {
    match body {
        Value::Object(m) => Ok(m),
        _ => Err(bad("The request body must be a JSON object")),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn need_str<'a>(m: &'a Map<String, Value>, k: &str) -> Result<&'a str, ApiError> {
    match m.get(k).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(bad(format!("'{k}' is required"))),
    }
}

fn https_url(s: &str) -> bool {
    s.starts_with("https://") || s.starts_with("http://")
}

macro_rules! collection {
    ($name:ident, $coll:expr, $key:expr, $validate:expr, $view:expr) => {
        pub(crate) static $name: Declaration = Declaration {
            name: $coll,
            key_field: $key,
            key_case: KeyCase::Sensitive,
            ids: Ids::Body,
            flavor: Flavor::Access,
            not_found,
            exists,
            validate: $validate,
            view: $view,
        };
    };
}

macro_rules! binding {
    ($name:ident, $decl:expr, $base:expr, $item:expr) => {
        static $name: Binding = Binding {
            decl: &$decl,
            base: $base,
            item: $item,
            create_status: StatusCode::CREATED,
            create_answer: CreateAnswer::Object,
            update_status: StatusCode::OK,
            update_answer: UpdateAnswer::Empty,
            delete_status: StatusCode::NO_CONTENT,
            read_access: Access::Admin,
            write_access: Access::Admin,
        };
    };
}

/// A store written only by this module's handlers (keys in a member `id` reads drop).
macro_rules! store_only {
    ($name:ident, $coll:expr) => {
        collection!($name, $coll, "id", accept_object, as_stored);
    };
}

// ---- global roles ----

fn validate_role(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    let name = match op {
        Op::Create => need_str(&m, "name")?.to_owned(),
        Op::Update { key, .. } => key.to_owned(),
    };
    if m.get("type").and_then(Value::as_str) != Some("CUSTOM_GLOBAL") {
        return Err(bad(
            "Only roles of type CUSTOM_GLOBAL can be created or changed",
        ));
    }
    if strings(m.get("environments")).is_empty() {
        return Err(bad("'environments' must not be empty"));
    }
    if strings(m.get("actions")).is_empty() {
        return Err(bad("'actions' must not be empty"));
    }
    m.insert("name".into(), json!(name));
    m.entry("description").or_insert(json!(""));
    Ok(Value::Object(m))
}

collection!(ROLES, "access_roles", "name", validate_role, as_stored);
binding!(
    ROLES_API,
    ROLES,
    "/access/api/v1/roles",
    "/access/api/v1/roles/{key}"
);

// ---- groups ----

const GROUP_FLAGS: &[&str] = &[
    "reports_manager",
    "watch_manager",
    "policy_manager",
    "policy_viewer",
    "manage_resources",
    "manage_webhook",
];

/// The writable members of an Access group besides the flags.
const GROUP_MEMBERS: &[&str] = &[
    "name",
    "description",
    "external_id",
    "auto_join",
    "admin_privileges",
    "members",
];

fn check_group(m: &mut Map<String, Value>) -> Result<(), ApiError> {
    let flag = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_bool) == Some(true);
    if flag(m, "auto_join") && flag(m, "admin_privileges") {
        return Err(bad(
            "auto_join cannot be true when admin_privileges is true",
        ));
    }
    if flag(m, "policy_manager") {
        if m.get("policy_viewer").and_then(Value::as_bool) == Some(false) {
            return Err(bad(
                "policy_viewer cannot be false when policy_manager is true",
            ));
        }
        m.insert("policy_viewer".into(), json!(true));
    }
    if m.get("description").and_then(Value::as_str) == Some("") {
        m.remove("description");
    }
    Ok(())
}

fn validate_group(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    let (name, existing) = match op {
        Op::Create => (need_str(&m, "name")?.to_owned(), None),
        Op::Update { key, existing } => (key.to_owned(), existing.as_object()),
    };
    if name.chars().count() > 64 {
        return Err(bad("Group name must be 1 - 64 characters"));
    }
    // Omitted members keep the stored value (every optional key is omitempty).
    let mut out = existing.cloned().unwrap_or_else(|| {
        let mut d = Map::new();
        d.insert("auto_join".into(), json!(false));
        d.insert("admin_privileges".into(), json!(false));
        d.insert("realm".into(), json!("internal"));
        d.insert("members".into(), json!([]));
        for f in GROUP_FLAGS {
            d.insert((*f).into(), json!(false));
        }
        d
    });
    // Access "Create Group" / "Update Group" (`/access/api/v2/groups`) and the JFrog Platform
    // Terraform provider's `GroupAPIModel`: `realm` and `realm_attributes` are read-only,
    // anything else not listed is dropped (never stored or answered). An internal group
    // has no `realm_attributes` at all (the provider's `resource_group_test.go` checks
    // `TestCheckNoResourceAttr(fqrn, "realm_attributes")` after each step).
    m.retain(|k, _| GROUP_MEMBERS.contains(&k.as_str()) || GROUP_FLAGS.contains(&k.as_str()));
    for (k, v) in m {
        if !v.is_null() {
            out.insert(k, v);
        }
    }
    out.insert("name".into(), json!(name));
    check_group(&mut out)?;
    Ok(Value::Object(out))
}

collection!(GROUPS, "access_groups", "name", validate_group, as_stored);
binding!(
    GROUPS_API,
    GROUPS,
    "/access/api/v2/groups",
    "/access/api/v2/groups/{key}"
);

async fn patch_group(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let existing = s
        .collections
        .get_raw(GROUPS.name, &name)
        .ok_or_else(|| missing(format!("Group '{name}' was not found")))?;
    let body: Value =
        serde_json::from_slice(&body).map_err(|e| bad(format!("Invalid JSON: {e}")))?;
    let ctx = Ctx {
        descriptor: &s.descriptor.content,
    };
    let v = validate_group(
        &ctx,
        body,
        Op::Update {
            key: &name,
            existing: &existing,
        },
    )?;
    s.collections.put_raw(GROUPS.name, &name, v.clone());
    security::sync_group_members(&s, &name);
    Ok(Json(v).into_response())
}

async fn patch_members(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let mut g = s
        .collections
        .get_raw(GROUPS.name, &name)
        .ok_or_else(|| missing(format!("Group '{name}' was not found")))?;
    let mut members = strings(g.get("members"));
    let add = strings(body.get("add"));
    if let Some(u) = add.iter().find(|u| !security::user_exists(&s, u)) {
        return Err(security::missing_member(Flavor::Access, "User", u));
    }
    for a in add {
        if !members.contains(&a) {
            members.push(a);
        }
    }
    let remove = strings(body.get("remove"));
    members.retain(|m| !remove.contains(m));
    members.sort();
    g["members"] = json!(members);
    s.collections.put_raw(GROUPS.name, &name, g);
    security::sync_group_members(&s, &name);
    Ok(Json(json!({"members": members})).into_response())
}

// ---- permissions ----

const RESOURCE_TYPES: &[&str] = &[
    "artifact",
    "build",
    "release_bundle",
    "destination",
    "pipeline_source",
];

fn check_resource(t: &str, r: &Value) -> Result<(), ApiError> {
    if !RESOURCE_TYPES.contains(&t) {
        return Err(bad(format!("Unknown resource type '{t}'")));
    }
    let targets = r.get("targets").and_then(Value::as_object);
    if targets.is_none_or(Map::is_empty) {
        return Err(bad(format!("Resource '{t}' must have at least one target")));
    }
    let actions = &r["actions"];
    for who in ["users", "groups"] {
        if let Some(m) = actions.get(who).and_then(Value::as_object) {
            for (n, p) in m {
                if strings(Some(p)).is_empty() {
                    return Err(bad(format!("{who} '{n}' of '{t}' has no permissions")));
                }
            }
        }
    }
    Ok(())
}

fn validate_permission(_: &Ctx<'_>, body: Value, _: Op<'_>) -> Result<Value, ApiError> {
    let m = obj(body)?;
    let name = need_str(&m, "name")?;
    if name.chars().count() > 255 {
        return Err(bad("Permission name must be 1 - 255 characters"));
    }
    let res = m
        .get("resources")
        .and_then(Value::as_object)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| bad("A permission needs at least one resource"))?;
    for (t, r) in res {
        check_resource(t, r)?;
    }
    Ok(json!({"name": name, "resources": res}))
}

collection!(
    PERMISSIONS,
    "access_permissions",
    "name",
    validate_permission,
    as_stored
);
binding!(
    PERMISSIONS_API,
    PERMISSIONS,
    "/access/api/v2/permissions",
    "/access/api/v2/permissions/{key}"
);

async fn put_resource(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((name, t)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let mut p = s
        .collections
        .get_raw(PERMISSIONS.name, &name)
        .ok_or_else(|| missing(format!("Permission '{name}' was not found")))?;
    check_resource(&t, &body)?;
    p["resources"][t.as_str()] = body;
    s.collections.put_raw(PERMISSIONS.name, &name, p);
    Ok(StatusCode::OK.into_response())
}

async fn delete_resource(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((name, t)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let mut p = s
        .collections
        .get_raw(PERMISSIONS.name, &name)
        .ok_or_else(|| missing(format!("Permission '{name}' was not found")))?;
    let removed = p["resources"]
        .as_object_mut()
        .and_then(|r| r.remove(t.as_str()));
    if removed.is_none() {
        return Err(missing(format!(
            "Permission '{name}' has no '{t}' resource"
        )));
    }
    s.collections.put_raw(PERMISSIONS.name, &name, p);
    Ok(StatusCode::NO_CONTENT.into_response())
}

// ---- SCIM ----

const SCIM_GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
const SCIM_USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";

fn scim_schema(m: &Map<String, Value>, urn: &str) -> Result<(), ApiError> {
    if strings(m.get("schemas")).iter().any(|s| s == urn) {
        Ok(())
    } else {
        Err(bad(format!("'schemas' must contain {urn}")))
    }
}

fn validate_scim_group(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    scim_schema(&m, SCIM_GROUP)?;
    let id = match op {
        Op::Create => need_str(&m, "id")?.to_owned(),
        Op::Update { key, .. } => key.to_owned(),
    };
    need_str(&m, "displayName")?;
    m.insert("id".into(), json!(id));
    m.insert("meta".into(), json!({"resourceType": "Group"}));
    Ok(Value::Object(m))
}

fn validate_scim_user(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    scim_schema(&m, SCIM_USER)?;
    let name = match op {
        Op::Create => need_str(&m, "userName")?.to_owned(),
        Op::Update { key, .. } => key.to_owned(),
    };
    if m.get("emails")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        return Err(bad("'emails' must contain at least one address"));
    }
    m.insert("userName".into(), json!(name));
    m.insert("id".into(), json!(name));
    m.entry("active").or_insert(json!(true));
    m.entry("groups").or_insert(json!([]));
    m.insert("meta".into(), json!({"resourceType": "User"}));
    Ok(Value::Object(m))
}

collection!(
    SCIM_GROUPS,
    "access_scim_groups",
    "id",
    validate_scim_group,
    as_stored
);
collection!(
    SCIM_USERS,
    "access_scim_users",
    "userName",
    validate_scim_user,
    as_stored
);
binding!(
    SCIM_GROUPS_API,
    SCIM_GROUPS,
    "/access/api/v1/scim/v2/Groups",
    "/access/api/v1/scim/v2/Groups/{key}"
);
binding!(
    SCIM_USERS_API,
    SCIM_USERS,
    "/access/api/v1/scim/v2/Users",
    "/access/api/v1/scim/v2/Users/{key}"
);

// ---- OIDC ----

const OIDC_TYPES: &[&str] = &[
    "Generic OpenID Connect",
    "GitHub",
    "GitHub Enterprise",
    "Azure",
];

fn validate_oidc(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    let name = match op {
        Op::Create => need_str(&m, "name")?.to_owned(),
        Op::Update { key, .. } => key.to_owned(),
    };
    let ok_name = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok_name {
        return Err(bad(format!(
            "Invalid OIDC provider name '{name}': lowercase letters, digits and '-', starting with a letter"
        )));
    }
    let t = need_str(&m, "provider_type")?;
    if !OIDC_TYPES.contains(&t) {
        return Err(bad(format!("Unknown provider_type '{t}'")));
    }
    if !need_str(&m, "issuer_url")?.starts_with("https://") {
        return Err(bad("issuer_url must be an https URL"));
    }
    m.insert("name".into(), json!(name));
    m.entry("use_default_proxy").or_insert(json!(false));
    Ok(Value::Object(m))
}

collection!(OIDC, "access_oidc", "name", validate_oidc, as_stored);
binding!(
    OIDC_API,
    OIDC,
    "/access/api/v1/oidc",
    "/access/api/v1/oidc/{key}"
);

/// Identity mappings, stored under `<provider>/<project>/<name>`.
fn validate_mapping(m: &Map<String, Value>) -> Result<(), ApiError> {
    need_str(m, "name")?;
    if m.get("priority")
        .and_then(Value::as_i64)
        .is_none_or(|p| p < 1)
    {
        return Err(bad("'priority' must be a positive integer"));
    }
    if !m.get("claims").is_some_and(Value::is_object) {
        return Err(bad("'claims' must be a JSON object"));
    }
    let Some(spec) = m.get("token_spec").filter(|v| v.is_object()) else {
        return Err(bad("'token_spec' is required"));
    };
    if let Some(e) = spec.get("expires_in").filter(|e| !e.is_null())
        && e.as_i64()
            .is_none_or(|e| !(1..=OIDC_MAX_EXPIRY_SECONDS).contains(&e))
    {
        return Err(bad(format!(
            "Invalid expiry: token_spec.expires_in must be between 1 and {OIDC_MAX_EXPIRY_SECONDS} seconds"
        )));
    }
    Ok(())
}

/// Access's longest lifetime of a token an identity mapping issues, by default
/// (`security.oidc.max-expiry-seconds` of `access.config.yaml`; 86400 s, the bound the
/// Platform Terraform provider enforced itself until v2.2.3, jfrog/terraform-provider-platform
/// issue #216). Beyond it Access refuses the mapping, "Invalid expiry"
/// (`TestAccOIDCIdentityMapping_invalid_expiry`, `expires_in` 1200000000).
const OIDC_MAX_EXPIRY_SECONDS: i64 = 86_400;

store_only!(MAPPINGS, "access_oidc_identity_mappings");

#[derive(serde::Deserialize)]
struct ProjectQuery {
    project_key: Option<String>,
}

fn mapping_key(provider: &str, q: &ProjectQuery, name: &str) -> String {
    format!(
        "{provider}/{}/{name}",
        q.project_key.as_deref().unwrap_or("")
    )
}

fn need_oidc(s: &Shared, provider: &str) -> Result<(), ApiError> {
    s.collections
        .get_raw(OIDC.name, provider)
        .map(|_| ())
        .ok_or_else(|| missing(format!("OIDC configuration '{provider}' was not found")))
}

async fn create_mapping(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(provider): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    need_oidc(&s, &provider)?;
    let mut m = obj(body)?;
    validate_mapping(&m)?;
    let key = mapping_key(&provider, &q, need_str(&m, "name")?);
    if s.collections.get_raw(MAPPINGS.name, &key).is_some() {
        return Err(ApiError::new(
            Flavor::Access,
            StatusCode::CONFLICT,
            "Identity mapping already exists",
        ));
    }
    m.insert("provider_name".into(), json!(provider));
    if let Some(p) = &q.project_key {
        m.insert("project_key".into(), json!(p));
    }
    s.collections
        .put_raw(MAPPINGS.name, &key, Value::Object(m.clone()));
    Ok((StatusCode::CREATED, Json(strip_key(Value::Object(m)))).into_response())
}

fn strip_key(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.remove("id");
    }
    v
}

async fn read_mapping(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((provider, name)): Path<(String, String)>,
    Query(q): Query<ProjectQuery>,
) -> Result<Response, ApiError> {
    s.collections
        .get_raw(MAPPINGS.name, &mapping_key(&provider, &q, &name))
        .map(|v| Json(strip_key(v)).into_response())
        .ok_or_else(|| missing(format!("Identity mapping '{name}' was not found")))
}

async fn update_mapping(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((provider, name)): Path<(String, String)>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let key = mapping_key(&provider, &q, &name);
    if s.collections.get_raw(MAPPINGS.name, &key).is_none() {
        return Err(missing(format!("Identity mapping '{name}' was not found")));
    }
    let mut m = obj(body)?;
    m.insert("name".into(), json!(name));
    validate_mapping(&m)?;
    m.insert("provider_name".into(), json!(provider));
    if let Some(p) = &q.project_key {
        m.insert("project_key".into(), json!(p));
    }
    s.collections.put_raw(MAPPINGS.name, &key, Value::Object(m));
    Ok(StatusCode::OK.into_response())
}

async fn delete_mapping(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((provider, name)): Path<(String, String)>,
    Query(q): Query<ProjectQuery>,
) -> Result<Response, ApiError> {
    delete_or_404(
        &s,
        MAPPINGS.name,
        &mapping_key(&provider, &q, &name),
        || format!("Identity mapping '{name}' was not found"),
    )
}

async fn list_mappings(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(provider): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Response, ApiError> {
    need_oidc(&s, &provider)?;
    // Scoped like the other calls: the platform's mappings, or one project's.
    let project = q.project_key.as_deref().map(|p| json!(p));
    let items: Vec<Value> = s
        .collections
        .list_raw(MAPPINGS.name)
        .unwrap_or_default()
        .into_iter()
        .filter(|v| v["provider_name"] == json!(provider))
        .filter(|v| v.get("project_key") == project.as_ref())
        .map(strip_key)
        .collect();
    Ok(Json(items).into_response())
}

// ---- SAML ----

fn validate_saml(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    let name = match op {
        Op::Create => need_str(&m, "name")?.to_owned(),
        Op::Update { key, .. } => key.to_owned(),
    };
    need_str(&m, "certificate")?;
    need_str(&m, "service_provider_name")?;
    if !https_url(need_str(&m, "login_url")?) {
        return Err(bad("login_url must be an http(s) URL"));
    }
    let logout = need_str(&m, "logout_url")?;
    if !https_url(logout) && !logout.starts_with("{baseUrl}") {
        return Err(bad(
            "logout_url must be an http(s) URL or start with {baseUrl}",
        ));
    }
    m.insert("name".into(), json!(name));
    for (k, d) in [
        ("enable_integration", true),
        ("verify_audience_restriction", true),
        ("auto_user_creation", true),
        ("allow_user_to_access_profile", false),
        ("use_encrypted_assertion", false),
        ("auto_redirect", false),
        ("sync_groups", false),
    ] {
        m.entry(k).or_insert(json!(d));
    }
    for k in ["group_attribute", "email_attribute", "name_id_attribute"] {
        m.entry(k).or_insert(json!(""));
    }
    m.entry("ldap_group_settings").or_insert(json!([]));
    Ok(Value::Object(m))
}

collection!(SAML, "access_saml", "name", validate_saml, as_stored);
binding!(
    SAML_API,
    SAML,
    "/access/api/v1/saml",
    "/access/api/v1/saml/{key}"
);

// ---- settings: Crowd, HTTP SSO, licence, reverse proxy ----

store_only!(SETTINGS, "platform_settings");

fn setting(s: &Shared, name: &str, default: Value) -> Value {
    s.collections
        .get_raw(SETTINGS.name, name)
        .unwrap_or(default)
}

fn without(mut v: Value, secret: &str) -> Value {
    if let Value::Object(m) = &mut v {
        m.remove(secret);
    }
    v
}

async fn get_crowd(State(s): State<Arc<Shared>>, _a: Admin) -> Response {
    let d = json!({
        "enable_integration": false, "server_url": "", "application_name": "",
        "session_validation_interval": 0, "use_default_proxy": false,
        "auto_user_creation": true, "allow_user_to_access_profile": false,
        "direct_authentication": false, "override_all_groups_upon_login": false,
    });
    Json(without(setting(&s, "crowd", d), "password")).into_response()
}

async fn put_crowd(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let m = obj(body)?;
    let url = need_str(&m, "server_url")?;
    if !https_url(url) {
        return Err(bad("server_url must be an http(s) URL"));
    }
    need_str(&m, "application_name")?;
    if m.get("session_validation_interval")
        .and_then(Value::as_i64)
        .is_none_or(|n| n < 0)
    {
        return Err(bad("session_validation_interval must be 0 or more"));
    }
    s.collections
        .put_raw(SETTINGS.name, "crowd", Value::Object(m));
    Ok(StatusCode::OK.into_response())
}

async fn get_httpsso(State(s): State<Arc<Shared>>, _a: Admin) -> Response {
    let d = json!({
        "http_sso_proxied": false, "auto_create_user": false,
        "allow_user_to_access_profile": false, "remote_user_request_variable": "REMOTE_USER",
        "sync_ldap_groups": false,
    });
    Json(setting(&s, "httpsso", d)).into_response()
}

async fn put_httpsso(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let m = obj(body)?;
    if !m.get("http_sso_proxied").is_some_and(Value::is_boolean) {
        return Err(bad("'http_sso_proxied' is required"));
    }
    s.collections
        .put_raw(SETTINGS.name, "httpsso", Value::Object(m));
    Ok(StatusCode::OK.into_response())
}

async fn get_license(State(s): State<Arc<Shared>>, _a: Admin) -> Response {
    let d = json!({"type": "Trial", "validThrough": "", "licensedTo": ""});
    Json(without(setting(&s, "license", d), "licenseKey")).into_response()
}

async fn post_license(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let m = obj(body)?;
    let key = m
        .get("licenseKey")
        .and_then(Value::as_str)
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request("licenseKey is required"))?;
    s.collections.put_raw(
        SETTINGS.name,
        "license",
        json!({"licenseKey": key, "type": "Enterprise Plus", "validThrough": "Dec 31, 2030", "licensedTo": "Example Inc."}),
    );
    Ok(StatusCode::OK.into_response())
}

async fn get_web_server(State(s): State<Arc<Shared>>, _a: Admin) -> Response {
    let d = json!({
        "key": "direct", "webServerType": "DIRECT", "dockerReverseProxyMethod": "SUBDOMAIN",
        "serverName": "", "artifactoryServerName": "", "useHttps": false, "useHttp": true,
        "httpPort": 80, "httpsPort": 443, "sslKey": "", "sslCertificate": "",
        "artifactoryAppContext": "artifactory", "publicAppContext": "artifactory",
    });
    Json(setting(&s, "web_server", d)).into_response()
}

async fn post_web_server(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let m = obj(body)?;
    let t = m.get("webServerType").and_then(Value::as_str).unwrap_or("");
    if !["DIRECT", "NGINX", "APACHE"].contains(&t) {
        return Err(ApiError::bad_request(
            "webServerType must be DIRECT, NGINX or APACHE",
        ));
    }
    let set = |k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    };
    if t != "DIRECT" && (!set("serverName") || !set("artifactoryServerName")) {
        return Err(ApiError::bad_request(
            "serverName and artifactoryServerName are required for NGINX and APACHE",
        ));
    }
    s.collections
        .put_raw(SETTINGS.name, "web_server", Value::Object(m));
    Ok(StatusCode::OK.into_response())
}

// ---- AWS IAM roles ----

store_only!(IAM_ROLES, "access_aws_iam_roles");

async fn put_iam_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let m = obj(body)?;
    let user = need_str(&m, "username")?;
    let arn = need_str(&m, "iam_role")?;
    let ok = arn
        .strip_prefix("arn:aws:iam::")
        .and_then(|r| r.split_once(":role/"))
        .is_some_and(|(acct, role)| {
            acct.len() == 12 && acct.bytes().all(|b| b.is_ascii_digit()) && !role.is_empty()
        });
    if !ok {
        return Err(bad(format!("Invalid IAM role ARN '{arn}'")));
    }
    s.collections.put_raw(
        IAM_ROLES.name,
        user,
        json!({"username": user, "iam_role": arn}),
    );
    Ok(StatusCode::OK.into_response())
}

async fn get_iam_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(user): Path<String>,
) -> Result<Response, ApiError> {
    if let Some(v) = s.collections.get_raw(IAM_ROLES.name, &user) {
        return Ok(Json(strip_key(v)).into_response());
    }
    // Once the role and its user are deleted, Access answers the read 400: the Platform
    // Terraform provider's `testAccAWSIAMRoleDestroy` (`resource_aws_iam_role_test.go`,
    // run after destroying both the `platform_aws_iam_role` and its
    // `artifactory_managed_user`) takes only 400 as "deleted". A user without a role: 404
    // (unverified).
    if security::user_exists(&s, &user) {
        Err(missing(format!("No IAM role is bound to user '{user}'")))
    } else {
        Err(bad(format!("User '{user}' does not exist")))
    }
}

async fn delete_iam_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(user): Path<String>,
) -> Result<Response, ApiError> {
    delete_or_404(&s, IAM_ROLES.name, &user, || {
        format!("No IAM role is bound to user '{user}'")
    })
}

// ---- lifecycle stages and lifecycles ----

store_only!(STAGES, "access_lifecycle_stages");
store_only!(LIFECYCLES, "access_lifecycles");

const SYSTEM_STAGES: &[&str] = &["PR", "COMMIT", "PROD"];

fn stage_key(project: &str, name: &str) -> String {
    format!("{project}/{name}")
}

fn project_of(q: &ProjectQuery) -> &str {
    q.project_key.as_deref().unwrap_or("")
}

/// Whether stage `name` is visible to `project` (its own or a global one).
fn stage_visible(s: &Shared, project: &str, name: &str) -> bool {
    s.collections
        .get_raw(STAGES.name, &stage_key("", name))
        .is_some()
        || (!project.is_empty()
            && s.collections
                .get_raw(STAGES.name, &stage_key(project, name))
                .is_some())
}

fn stage_view(s: &Shared, v: &Value) -> Value {
    let mut v = strip_key(v.clone());
    let name = v["name"].as_str().unwrap_or("").to_owned();
    let used: Vec<String> = s
        .collections
        .list_raw(LIFECYCLES.name)
        .unwrap_or_default()
        .iter()
        .filter(|l| strings(l.get("promote_stages")).contains(&name))
        .map(|l| l["id"].as_str().unwrap_or("").to_owned())
        .collect();
    v["used_in_lifecycles"] = json!(used);
    v
}

fn check_category(c: &str) -> Result<(), ApiError> {
    if ["none", "code", "promote"].contains(&c) {
        Ok(())
    } else {
        Err(bad(format!(
            "Invalid category '{c}': must be none, code or promote"
        )))
    }
}

async fn create_stage(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let m = obj(body)?;
    let name = need_str(&m, "name")?.to_owned();
    let project = m
        .get("project_key")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if SYSTEM_STAGES.contains(&name.as_str()) {
        return Err(bad(format!("'{name}' is a system stage")));
    }
    if !project.is_empty() {
        if !super::projects::project_exists(&s, &project) {
            return Err(missing(format!("Project '{project}' was not found")));
        }
        if !name.starts_with(&format!("{project}-")) {
            return Err(bad(format!(
                "A project stage name must start with '{project}-'"
            )));
        }
    }
    let category = m
        .get("category")
        .and_then(Value::as_str)
        .unwrap_or("promote")
        .to_owned();
    check_category(&category)?;
    let key = stage_key(&project, &name);
    if s.collections.get_raw(STAGES.name, &key).is_some() {
        return Err(ApiError::new(
            Flavor::Access,
            StatusCode::CONFLICT,
            format!("Stage '{name}' already exists"),
        ));
    }
    let mut v = json!({
        "name": name, "category": category,
        "scope": if project.is_empty() { "global" } else { "project" },
        "repositories": [], "total_repository_count": 0,
        "created": 1_700_000_000_000_i64, "modified": 1_700_000_000_000_i64,
    });
    if !project.is_empty() {
        v["project_key"] = json!(project);
    }
    s.collections.put_raw(STAGES.name, &key, v.clone());
    Ok((StatusCode::CREATED, Json(stage_view(&s, &v))).into_response())
}

/// The stages the platform has from the start (global; PR and COMMIT of the code
/// category, PROD the release stage): listed and read like any, never created, changed or
/// deleted.
fn system_stage(name: &str) -> Option<Value> {
    let category = match name {
        "PR" | "COMMIT" => "code",
        "PROD" => "promote",
        _ => return None,
    };
    Some(json!({
        "name": name, "category": category, "scope": "global",
        "repositories": [], "total_repository_count": 0,
        "created": 1_700_000_000_000_i64, "modified": 1_700_000_000_000_i64,
    }))
}

#[derive(serde::Deserialize)]
struct StagesQuery {
    project_key: Option<String>,
    scope: Option<String>,
    category: Option<String>,
}

/// `GET /access/api/v2/stages`: without `project_key` the global stages (the system ones
/// included); with it the project's and the global ones (404 for a project that does not
/// exist); `scope` (`global`/`project`) and `category` filter. An array of full stages, the
/// scope in lower case.
async fn list_stages(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Query(q): Query<StagesQuery>,
) -> Result<Response, ApiError> {
    let project = q.project_key.as_deref().unwrap_or("");
    if !project.is_empty() && !super::projects::project_exists(&s, project) {
        return Err(missing(format!("Project '{project}' was not found")));
    }
    let system = SYSTEM_STAGES.iter().filter_map(|n| system_stage(n));
    let items: Vec<Value> = system
        .chain(s.collections.list_raw(STAGES.name).unwrap_or_default())
        .filter(|v| {
            let own = v.get("project_key").and_then(Value::as_str).unwrap_or("");
            own.is_empty() || own == project
        })
        .filter(|v| {
            q.scope
                .as_deref()
                .is_none_or(|sc| v["scope"] == sc.to_lowercase())
        })
        .filter(|v| {
            q.category
                .as_deref()
                .is_none_or(|c| v["category"] == c.to_lowercase())
        })
        .map(|v| stage_view(&s, &v))
        .collect();
    Ok(Json(items).into_response())
}

async fn read_stage(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Response, ApiError> {
    s.collections
        .get_raw(STAGES.name, &stage_key(project_of(&q), &name))
        .or_else(|| system_stage(&name))
        .map(|v| Json(stage_view(&s, &v)).into_response())
        .ok_or_else(|| missing(format!("Stage '{name}' was not found")))
}

async fn patch_stage(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    if system_stage(&name).is_some() {
        return Err(bad(format!("'{name}' is a system stage")));
    }
    let key = stage_key(project_of(&q), &name);
    let mut v = s
        .collections
        .get_raw(STAGES.name, &key)
        .ok_or_else(|| missing(format!("Stage '{name}' was not found")))?;
    if let Some(c) = body.get("category").and_then(Value::as_str) {
        check_category(c)?;
        v["category"] = json!(c);
    }
    s.collections.put_raw(STAGES.name, &key, v.clone());
    Ok(Json(stage_view(&s, &v)).into_response())
}

async fn delete_stage(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(name): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Response, ApiError> {
    if system_stage(&name).is_some() {
        return Err(bad(format!("'{name}' is a system stage")));
    }
    let key = stage_key(project_of(&q), &name);
    let Some(v) = s.collections.get_raw(STAGES.name, &key) else {
        return Err(missing(format!("Stage '{name}' was not found")));
    };
    if !strings(stage_view(&s, &v).get("used_in_lifecycles")).is_empty() {
        return Err(bad(format!(
            "Stage '{name}' is used in a lifecycle and cannot be deleted"
        )));
    }
    s.collections.delete_raw(STAGES.name, &key);
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn lifecycle_view(promote: &[String]) -> Value {
    let stages: Vec<Value> = promote
        .iter()
        .map(|n| json!({"name": n, "scope": "global"}))
        .collect();
    json!({
        "promote_stages": promote,
        "release_stage": "PROD",
        "categories": [
            {"category": "code", "stages": [{"name": "PR", "scope": "global"}, {"name": "COMMIT", "scope": "global"}]},
            {"category": "promote", "stages": stages},
        ],
    })
}

async fn get_lifecycle(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Query(q): Query<ProjectQuery>,
) -> Result<Response, ApiError> {
    let project = project_of(&q);
    if !project.is_empty() && !super::projects::project_exists(&s, project) {
        return Err(missing(format!("Project '{project}' was not found")));
    }
    let promote = s
        .collections
        .get_raw(
            LIFECYCLES.name,
            if project.is_empty() { "_" } else { project },
        )
        .map(|v| strings(v.get("promote_stages")))
        .unwrap_or_default();
    Ok(Json(lifecycle_view(&promote)).into_response())
}

async fn patch_lifecycle(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let project = project_of(&q).to_owned();
    if !project.is_empty() && !super::projects::project_exists(&s, &project) {
        return Err(missing(format!("Project '{project}' was not found")));
    }
    let promote = strings(body.get("promote_stages"));
    for st in &promote {
        if SYSTEM_STAGES.contains(&st.as_str()) {
            return Err(bad(format!("'{st}' is a system stage")));
        }
        if !stage_visible(&s, &project, st) {
            return Err(missing(format!("Stage '{st}' was not found")));
        }
    }
    let id = if project.is_empty() {
        "_"
    } else {
        project.as_str()
    };
    s.collections
        .put_raw(LIFECYCLES.name, id, json!({"promote_stages": promote}));
    Ok(Json(lifecycle_view(&promote)).into_response())
}

// ---- workers ----

fn validate_worker(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let mut m = obj(body)?;
    let key = match op {
        Op::Create => need_str(&m, "key")?.to_owned(),
        Op::Update { key, .. } => key.to_owned(),
    };
    need_str(&m, "sourceCode")?;
    need_str(&m, "action")?;
    let fc = m
        .get("filterCriteria")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("'filterCriteria' is required"))?;
    let artifact = fc
        .get("artifactFilterCriteria")
        .is_some_and(Value::is_object);
    let schedule = fc.get("schedule").is_some_and(Value::is_object);
    if artifact == schedule {
        return Err(bad(
            "filterCriteria needs exactly one of artifactFilterCriteria or schedule",
        ));
    }
    m.insert("key".into(), json!(key));
    m.entry("description").or_insert(json!(""));
    // Secrets are kept but never returned; a secret marked for removal goes.
    if let Some(Value::Array(secrets)) = m.get_mut("secrets") {
        secrets.retain(|x| x.get("markedForRemoval").and_then(Value::as_bool) != Some(true));
    }
    Ok(Value::Object(m))
}

fn worker_view(v: &Value) -> Value {
    without(v.clone(), "secrets")
}

pub(crate) static WORKERS: Declaration = Declaration {
    name: "workers",
    key_field: "key",
    key_case: KeyCase::Sensitive,
    ids: Ids::Body,
    flavor: Flavor::Access,
    not_found,
    exists,
    validate: validate_worker,
    view: worker_view,
};
binding!(
    WORKERS_API,
    WORKERS,
    "/worker/api/v1/workers",
    "/worker/api/v1/workers/{key}"
);

async fn replace_worker(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let key = body
        .get("key")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let existing = s
        .collections
        .get_raw(WORKERS.name, &key)
        .ok_or_else(|| missing(format!("Worker '{key}' was not found")))?;
    let ctx = Ctx {
        descriptor: &s.descriptor.content,
    };
    let v = validate_worker(
        &ctx,
        body,
        Op::Update {
            key: &key,
            existing: &existing,
        },
    )?;
    s.collections.put_raw(WORKERS.name, &key, v);
    Ok(StatusCode::OK.into_response())
}

/// Every collection of this module (for the admin API).
pub(crate) fn collections() -> Vec<&'static Declaration> {
    vec![
        &ROLES,
        &GROUPS,
        &PERMISSIONS,
        &SCIM_GROUPS,
        &SCIM_USERS,
        &OIDC,
        &MAPPINGS,
        &SAML,
        &SETTINGS,
        &IAM_ROLES,
        &STAGES,
        &LIFECYCLES,
        &WORKERS,
    ]
}

/// `GET /access/api/v2/groups`: `{"groups": [{group_name, uri}], "cursor"}`, a name and a
/// link per group (the details are read by name), one page at a time (`crate::paging`).
fn group_list(items: Vec<Value>, q: &HashMap<String, String>) -> Result<Value, ApiError> {
    let (page, cursor) = paging::access_page(items, |g| g["name"].as_str().unwrap_or(""), q)?;
    let groups: Vec<Value> = page
        .iter()
        .map(|g| {
            let name = g.get("name").cloned().unwrap_or(Value::Null);
            let uri = format!("/access/api/v2/groups/{}", name.as_str().unwrap_or(""));
            json!({"group_name": name, "uri": uri})
        })
        .collect();
    Ok(paging::access_answer("groups", groups, cursor))
}

/// `GET /access/api/v2/permissions`: `{"permissions": [{name, uri}], "cursor"}`, a name and
/// a link per permission, one page at a time (`crate::paging`).
fn permission_list(items: Vec<Value>, q: &HashMap<String, String>) -> Result<Value, ApiError> {
    let (page, cursor) = paging::access_page(items, |p| p["name"].as_str().unwrap_or(""), q)?;
    let permissions: Vec<Value> = page
        .iter()
        .map(|p| {
            let name = p.get("name").cloned().unwrap_or(Value::Null);
            let uri = format!("/access/api/v2/permissions/{}", name.as_str().unwrap_or(""));
            json!({"name": name, "uri": uri})
        })
        .collect();
    Ok(paging::access_answer("permissions", permissions, cursor))
}

/// A SCIM `ListResponse` (RFC 7644 section 3.4.2), one page at a time (`crate::paging`).
fn scim_list(items: Vec<Value>, q: &HashMap<String, String>) -> Result<Value, ApiError> {
    paging::scim_page(items, q)
}

/// The Access groups' routes: those of the binding, and the relation kept on both sides as
/// Access keeps it: a group's `members` written (create, replace, `PATCH .../members`) show in
/// those users' `groups` (`GET /access/api/v2/users/{name}`), and a deleted group leaves them
/// (Access "Delete Group"; the Platform Terraform provider's `resource_group_test.go` deletes
/// a group whose users a later step still updates).
fn group_routes() -> Router<Arc<Shared>> {
    GROUPS_API
        .routes_paged_then(group_list, |s, key, written| match written {
            Written::Created | Written::Updated => security::sync_group_members(s, key),
            Written::Deleted => security::drop_group(s, key),
        })
        .route(GROUPS_API.item, patch(patch_group))
        .route("/access/api/v2/groups/{key}/members", patch(patch_members))
}

/// The SCIM groups' and users' routes: those of the binding, except that a `PUT` answers the
/// object as a read does, with its content type (SCIM's "Replacing with PUT", RFC 7644
/// section 3.5.1; the Platform Terraform provider's `SCIMGroupResource.Update` and
/// `SCIMUserResource.Update` decode the answer of their `Put` into the object they keep,
/// `SetResult(&result)`, which resty does only for a JSON content type:
/// `TestAccSCIMGroup_full`, `TestAccSCIMUser_full`).
fn scim_routes(b: &'static Binding) -> Router<Arc<Shared>> {
    use crate::collections::Caller;
    use axum::body::Bytes;
    let base = get(
        move |s: State<Arc<Shared>>, a: Caller, Query(q): Query<HashMap<String, String>>| async move {
            b.list_paged(&s, a, &q, scim_list).await
        },
    )
        .post(
            move |s: State<Arc<Shared>>, a: Caller, body: Bytes| async move {
                b.create(&s, a, &body).await
            },
        );
    let item = get(
        move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>| async move {
            b.read(&s, a, &key).await
        },
    )
    .put(
        move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>, body: Bytes| async move {
            let updated = b.update(&s, a, &key, &body).await?;
            // The update needed admin rights, so the caller may read.
            let (mut parts, read) = b.read(&s, Caller::Admin, &key).await?.into_parts();
            parts.status = updated.status();
            Ok::<Response, ApiError>(Response::from_parts(parts, read))
        },
    )
    .delete(
        move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>| async move {
            b.delete(&s, a, &key).await
        },
    );
    Router::new().route(b.base, base).route(b.item, item)
}

/// `GET /worker/api/v1/workers`: `{"workers": [...]}`, each as a read shows it.
fn worker_list(items: Vec<Value>) -> Value {
    json!({"workers": items})
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(ROLES_API.routes())
        .merge(group_routes())
        .merge(PERMISSIONS_API.routes_paged_then(permission_list, |_, _, _| {}))
        .route(
            "/access/api/v2/permissions/{key}/{type}",
            put(put_resource).delete(delete_resource),
        )
        .merge(scim_routes(&SCIM_GROUPS_API))
        .merge(scim_routes(&SCIM_USERS_API))
        .merge(OIDC_API.routes())
        .route(
            "/access/api/v1/oidc/{provider}/identity_mappings",
            get(list_mappings).post(create_mapping),
        )
        .route(
            "/access/api/v1/oidc/{provider}/identity_mappings/{name}",
            get(read_mapping).put(update_mapping).delete(delete_mapping),
        )
        .merge(SAML_API.routes())
        .route("/access/api/v1/crowd", get(get_crowd).put(put_crowd))
        .route("/access/api/v1/httpsso", get(get_httpsso).put(put_httpsso))
        .route("/access/api/v1/aws/iam_role", put(put_iam_role))
        .route(
            "/access/api/v1/aws/iam_role/{user}",
            get(get_iam_role).delete(delete_iam_role),
        )
        .route("/access/api/v2/stages", get(list_stages).post(create_stage))
        .route(
            "/access/api/v2/stages/{name}",
            get(read_stage).patch(patch_stage).delete(delete_stage),
        )
        .route(
            "/access/api/v2/lifecycle",
            get(get_lifecycle).patch(patch_lifecycle),
        )
        .route("/artifactory/api/system/license", get(get_license))
        .route("/artifactory/api/system/licenses", post(post_license))
        .route(
            "/artifactory/api/system/configuration/webServer",
            get(get_web_server).post(post_web_server),
        )
        .merge(WORKERS_API.routes_listed(worker_list))
        .route("/worker/api/v1/workers", put(replace_worker))
}
