//! The Access service's projects (`/access/api/v1/projects`): projects, their environments,
//! custom roles and members (users and groups), and the repository status and sharing calls
//! (`/access/api/v1/projects/_/...`). Attaching a repository stays in `access`.
//!
//! Objects live in the generic collection stores (so the admin API can read and edit them
//! as "a change made in JFrog"); the handlers are written here because the paths nest under
//! a project. Nested objects are stored under `<project>/<name>` in a member `id` that reads
//! never show.
//!
//! JFrog's rules kept: project keys (2-32 lowercase letters, digits and `-`, starting with a
//! letter), a display name of 1-128 characters, `admin_privileges` required; environments
//! stored as `<project>-<name>` (at most 32 characters), custom roles of type `CUSTOM` only,
//! members with at least one role, each a user or group the platform has (404 "User 'x'
//! does not exist" otherwise); a call under a missing project answers 404. Deleting a
//! project that still has repositories answers 400 ("project containing resources can't be
//! removed"); otherwise its environments, roles and members go with it, and other
//! repositories stop being shared with it.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::auth::Admin;
use crate::collections::{Declaration, Ids, KeyCase, accept_object, as_stored};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;
use crate::services::artifactory::repositories::validate::valid_project_key;
use crate::services::security;

fn not_found(key: &str) -> (StatusCode, String) {
    (StatusCode::NOT_FOUND, format!("Could not find '{key}'"))
}

fn exists(key: &str) -> (StatusCode, String) {
    (StatusCode::CONFLICT, format!("'{key}' already exists"))
}

macro_rules! store {
    ($name:ident, $coll:expr, $key:expr) => {
        pub(crate) static $name: Declaration = Declaration {
            name: $coll,
            key_field: $key,
            key_case: KeyCase::Sensitive,
            ids: Ids::Body,
            flavor: Flavor::Access,
            not_found,
            exists,
            validate: accept_object,
            view: as_stored,
        };
    };
}

store!(PROJECTS, "access_projects", "project_key");
store!(ENVIRONMENTS, "access_project_environments", "id");
store!(ROLES, "access_project_roles", "id");
store!(USERS, "access_project_users", "id");
store!(GROUPS, "access_project_groups", "id");
store!(SHARES, "access_repository_shares", "resource_name");

/// The project roles JFrog predefines (listed with the custom ones, never changed).
/// "Release Manager" is assigned to project members by the Project Terraform provider's
/// `resource_project_test.go` (`roles = ["Release Manager"]`) without being created.
const PREDEFINED_ROLES: &[&str] = &[
    "Project Admin",
    "Developer",
    "Contributor",
    "Viewer",
    "Release Manager",
];

/// The actions a project role may grant.
const ROLE_ACTIONS: &[&str] = &[
    "READ_REPOSITORY",
    "ANNOTATE_REPOSITORY",
    "DEPLOY_CACHE_REPOSITORY",
    "DELETE_OVERWRITE_REPOSITORY",
    "MANAGE_XRAY_MD_REPOSITORY",
    "READ_RELEASE_BUNDLE",
    "ANNOTATE_RELEASE_BUNDLE",
    "CREATE_RELEASE_BUNDLE",
    "DISTRIBUTE_RELEASE_BUNDLE",
    "DELETE_RELEASE_BUNDLE",
    "MANAGE_XRAY_MD_RELEASE_BUNDLE",
    "READ_BUILD",
    "ANNOTATE_BUILD",
    "DEPLOY_BUILD",
    "DELETE_BUILD",
    "MANAGE_XRAY_MD_BUILD",
    "READ_SOURCES_PIPELINE",
    "TRIGGER_PIPELINE",
    "READ_INTEGRATIONS_PIPELINE",
    "READ_POOLS_PIPELINE",
    "MANAGE_INTEGRATIONS_PIPELINE",
    "MANAGE_SOURCES_PIPELINE",
    "MANAGE_POOLS_PIPELINE",
    "TRIGGER_SECURITY",
    "ISSUES_SECURITY",
    "LICENCES_SECURITY",
    "REPORTS_SECURITY",
    "WATCHES_SECURITY",
    "POLICIES_SECURITY",
    "RULES_SECURITY",
    "MANAGE_MEMBERS",
    "MANAGE_RESOURCES",
];

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/access/api/v1/projects",
            get(list_projects).post(create_project),
        )
        .route(
            "/access/api/v1/projects/{p}",
            get(read_project).put(update_project).delete(delete_project),
        )
        .route(
            "/access/api/v1/projects/{p}/environments",
            get(list_environments).post(create_environment),
        )
        .route(
            "/access/api/v1/projects/{p}/environments/{env}",
            delete(delete_environment),
        )
        .route(
            "/access/api/v1/projects/{p}/environments/{env}/rename",
            post(rename_environment),
        )
        .route(
            "/access/api/v1/projects/{p}/roles",
            get(list_roles).post(create_role),
        )
        .route(
            "/access/api/v1/projects/{p}/roles/{name}",
            get(read_role).put(update_role).delete(delete_role),
        )
        .merge(member_routes(
            USERS.name,
            "User",
            "/access/api/v1/projects/{p}/users",
            "/access/api/v1/projects/{p}/users/{name}",
        ))
        .merge(member_routes(
            GROUPS.name,
            "Group",
            "/access/api/v1/projects/{p}/groups",
            "/access/api/v1/projects/{p}/groups/{name}",
        ))
        .route(
            "/access/api/v1/projects/_/repositories/{key}",
            get(repository_status),
        )
        .route(
            "/access/api/v1/projects/_/share/repositories/{key}/{target}",
            put(share).delete(unshare),
        )
        .route(
            "/access/api/v1/projects/_/share/repositories/{key}",
            put(share_all).delete(unshare_all),
        )
}

fn err(status: StatusCode, msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, status, msg)
}

fn bad(msg: impl Into<String>) -> ApiError {
    err(StatusCode::BAD_REQUEST, msg)
}

fn get_obj(s: &Shared, coll: &str, key: &str) -> Option<Value> {
    s.collections.get_raw(coll, key)
}

fn put_obj(s: &Shared, coll: &str, key: &str, v: Value) {
    s.collections.put_raw(coll, key, v);
}

fn list_obj(s: &Shared, coll: &str) -> Vec<Value> {
    s.collections.list_raw(coll).unwrap_or_default()
}

/// Whether project `p` exists (other services' checks, e.g. attaching a repository).
pub(crate) fn project_exists(s: &Shared, p: &str) -> bool {
    get_obj(s, PROJECTS.name, p).is_some()
}

fn need_project(s: &Shared, p: &str) -> Result<(), ApiError> {
    if project_exists(s, p) {
        Ok(())
    } else {
        Err(err(
            StatusCode::NOT_FOUND,
            format!("Project '{p}' was not found"),
        ))
    }
}

fn parse(body: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(bad("The request body must be a JSON object")),
        Err(e) => Err(bad(format!(
            "Could not parse the request body as JSON: {e}"
        ))),
    }
}

/// Deletes `key` from `coll`: 204, or 404 with `missing`'s message.
pub(crate) fn delete_or_404(
    s: &Shared,
    coll: &str,
    key: &str,
    missing: impl FnOnce() -> String,
) -> Result<Response, ApiError> {
    if s.collections.delete_raw(coll, key) {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(err(StatusCode::NOT_FOUND, missing()))
    }
}

fn strip_id(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.remove("id");
    }
    v
}

/// The nested objects of project `p` in `coll`.
fn nested(s: &Shared, coll: &str, p: &str) -> Vec<Value> {
    let prefix = format!("{p}/");
    list_obj(s, coll)
        .into_iter()
        .filter(|v| v["id"].as_str().is_some_and(|k| k.starts_with(&prefix)))
        .map(strip_id)
        .collect()
}

// ---- projects ----

fn valid_project(body: &Value, key: &str) -> Result<Value, ApiError> {
    if !valid_project_key(key) {
        return Err(bad(format!(
            "Invalid project key '{key}': must be 2 - 32 lowercase alphanumeric and hyphen characters, starting with a letter"
        )));
    }
    let name = body["display_name"].as_str().unwrap_or("");
    if name.is_empty() || name.chars().count() > 128 {
        return Err(bad("display_name must be 1 - 128 characters"));
    }
    let Some(admin) = body.get("admin_privileges").filter(|a| a.is_object()) else {
        return Err(bad("admin_privileges is required"));
    };
    let flag = |k: &str| admin.get(k).and_then(Value::as_bool).unwrap_or(false);
    let quota = match body.get("storage_quota_bytes") {
        None | Some(Value::Null) => -1,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| bad("storage_quota_bytes must be an integer"))?,
    };
    if quota == 0 || quota < -1 {
        return Err(bad(
            "storage_quota_bytes must be -1 (unlimited) or positive",
        ));
    }
    Ok(json!({
        "project_key": key,
        "display_name": name,
        "description": body["description"].as_str().unwrap_or(""),
        "admin_privileges": {
            "manage_members": flag("manage_members"),
            "manage_resources": flag("manage_resources"),
            "manage_remote_repository": flag("manage_remote_repository"),
            "index_resources": flag("index_resources"),
        },
        "storage_quota_bytes": quota,
        "soft_limit": body["soft_limit"].as_bool().unwrap_or(false),
        "storage_quota_email_notification": body["storage_quota_email_notification"].as_bool().unwrap_or(true),
    }))
}

async fn list_projects(State(s): State<Arc<Shared>>, _a: Admin) -> Response {
    Json(Value::Array(list_obj(&s, PROJECTS.name))).into_response()
}

async fn create_project(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let body = parse(&body)?;
    let key = body["project_key"].as_str().unwrap_or("").to_owned();
    let v = valid_project(&body, &key)?;
    if project_exists(&s, &key) {
        return Err(err(
            StatusCode::CONFLICT,
            format!("Project '{key}' already exists"),
        ));
    }
    put_obj(&s, PROJECTS.name, &key, v.clone());
    Ok((StatusCode::CREATED, Json(v)).into_response())
}

async fn read_project(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    Ok(Json(get_obj(&s, PROJECTS.name, &p).unwrap_or_default()).into_response())
}

async fn update_project(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    let body = parse(&body)?;
    if let Some(k) = body["project_key"].as_str()
        && k != p
    {
        return Err(bad("project_key cannot be changed"));
    }
    let v = valid_project(&body, &p)?;
    put_obj(&s, PROJECTS.name, &p, v.clone());
    Ok(Json(v).into_response())
}

async fn delete_project(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    let attached = s
        .artifactory
        .repositories_raw()
        .iter()
        .any(|r| r["projectKey"].as_str() == Some(p.as_str()));
    if attached {
        return Err(bad("project containing resources can't be removed"));
    }
    s.collections.delete_raw(PROJECTS.name, &p);
    let prefix = format!("{p}/");
    for coll in [ENVIRONMENTS.name, ROLES.name, USERS.name, GROUPS.name] {
        for v in list_obj(&s, coll) {
            if let Some(k) = v["id"].as_str().filter(|k| k.starts_with(&prefix)) {
                s.collections.delete_raw(coll, k);
            }
        }
    }
    for mut v in list_obj(&s, SHARES.name) {
        let key = v["resource_name"].as_str().unwrap_or("").to_owned();
        if let Some(Value::Array(with)) = v.get_mut("shared_with_projects") {
            let before = with.len();
            with.retain(|t| t.as_str() != Some(p.as_str()));
            if with.len() != before {
                put_obj(&s, SHARES.name, &key, v);
            }
        }
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

// ---- environments ----

fn valid_env_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && name.len() >= 2
        && c.all(|x| x.is_ascii_alphanumeric() || x == '-')
}

async fn list_environments(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    Ok(Json(Value::Array(nested(&s, ENVIRONMENTS.name, &p))).into_response())
}

fn check_env(p: &str, full: &str) -> Result<(), ApiError> {
    let Some(short) = full.strip_prefix(&format!("{p}-")) else {
        return Err(bad(format!(
            "Environment name '{full}' must start with the project key prefix '{p}-'"
        )));
    };
    if !valid_env_name(short) {
        return Err(bad(format!(
            "Invalid environment name '{short}': must start with a letter and contain only letters, digits and '-'"
        )));
    }
    if full.len() > 32 {
        return Err(bad(format!(
            "Environment name '{full}' is longer than 32 characters"
        )));
    }
    Ok(())
}

async fn create_environment(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    let body = parse(&body)?;
    let full = body["name"].as_str().unwrap_or("").to_owned();
    check_env(&p, &full)?;
    let id = format!("{p}/{full}");
    if get_obj(&s, ENVIRONMENTS.name, &id).is_some() {
        return Err(err(
            StatusCode::CONFLICT,
            format!("Environment '{full}' already exists"),
        ));
    }
    put_obj(&s, ENVIRONMENTS.name, &id, json!({"name": full}));
    Ok((StatusCode::CREATED, Json(json!({"name": full}))).into_response())
}

async fn delete_environment(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((p, env)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    delete_or_404(&s, ENVIRONMENTS.name, &format!("{p}/{env}"), || {
        format!("Environment '{env}' was not found")
    })
}

async fn rename_environment(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((p, env)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    let body = parse(&body)?;
    let new = body["new_name"].as_str().unwrap_or("").to_owned();
    check_env(&p, &new)?;
    if get_obj(&s, ENVIRONMENTS.name, &format!("{p}/{env}")).is_none() {
        return Err(err(
            StatusCode::NOT_FOUND,
            format!("Environment '{env}' was not found"),
        ));
    }
    s.collections
        .delete_raw(ENVIRONMENTS.name, &format!("{p}/{env}"));
    put_obj(
        &s,
        ENVIRONMENTS.name,
        &format!("{p}/{new}"),
        json!({"name": new}),
    );
    Ok(StatusCode::OK.into_response())
}

// ---- roles ----

fn valid_role(body: &Value, name: &str) -> Result<Value, ApiError> {
    if name.is_empty() || name.chars().count() > 64 {
        return Err(bad("Role name must be 1 - 64 characters"));
    }
    if PREDEFINED_ROLES.contains(&name) {
        return Err(bad(format!(
            "Role '{name}' is predefined and cannot be changed"
        )));
    }
    if body["type"].as_str() != Some("CUSTOM") {
        return Err(bad("Role type must be CUSTOM"));
    }
    let strings = |k: &str| -> Vec<String> {
        body[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let environments = strings("environments");
    let actions = strings("actions");
    if environments.is_empty() {
        return Err(bad("environments must not be empty"));
    }
    if actions.is_empty() {
        return Err(bad("actions must not be empty"));
    }
    if let Some(a) = actions.iter().find(|a| !ROLE_ACTIONS.contains(&a.as_str())) {
        return Err(bad(format!("Unknown action '{a}'")));
    }
    let mut role = json!({
        "name": name,
        "type": "CUSTOM",
        "environments": environments,
        "actions": actions,
    });
    // A role keeps its description: the Project Terraform provider's `Role` API model
    // (`pkg/project/resource/role.go`) sends and reads `description`, and `role_test.go`
    // configures a description per `role` block, so a dropped one reads back as a diff.
    if let Some(d) = body.get("description").and_then(Value::as_str) {
        role["description"] = json!(d);
    }
    Ok(role)
}

async fn list_roles(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    let mut out: Vec<Value> = PREDEFINED_ROLES
        .iter()
        .map(|r| json!({"name": r, "type": "PREDEFINED", "environments": ["DEV", "PROD"], "actions": []}))
        .collect();
    out.extend(nested(&s, ROLES.name, &p));
    Ok(Json(Value::Array(out)).into_response())
}

async fn create_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(p): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    need_project(&s, &p)?;
    let body = parse(&body)?;
    let name = body["name"].as_str().unwrap_or("").to_owned();
    let v = valid_role(&body, &name)?;
    let id = format!("{p}/{name}");
    if get_obj(&s, ROLES.name, &id).is_some() {
        return Err(err(
            StatusCode::CONFLICT,
            format!("Role '{name}' already exists"),
        ));
    }
    put_obj(&s, ROLES.name, &id, v.clone());
    Ok((StatusCode::CREATED, Json(v)).into_response())
}

fn nested_get(s: &Shared, coll: &str, p: &str, name: &str, what: &str) -> Result<Value, ApiError> {
    need_project(s, p)?;
    get_obj(s, coll, &format!("{p}/{name}"))
        .map(strip_id)
        .ok_or_else(|| {
            err(
                StatusCode::NOT_FOUND,
                format!("{what} '{name}' was not found in project '{p}'"),
            )
        })
}

fn nested_delete(
    s: &Shared,
    coll: &str,
    p: &str,
    name: &str,
    what: &str,
) -> Result<Response, ApiError> {
    need_project(s, p)?;
    delete_or_404(s, coll, &format!("{p}/{name}"), || {
        format!("{what} '{name}' was not found in project '{p}'")
    })
}

async fn read_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((p, name)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    Ok(Json(nested_get(&s, ROLES.name, &p, &name, "Role")?).into_response())
}

async fn update_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((p, name)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    nested_get(&s, ROLES.name, &p, &name, "Role")?;
    let v = valid_role(&parse(&body)?, &name)?;
    put_obj(&s, ROLES.name, &format!("{p}/{name}"), v.clone());
    Ok(Json(v).into_response())
}

async fn delete_role(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((p, name)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    nested_delete(&s, ROLES.name, &p, &name, "Role")
}

// ---- members ----

/// Whether `role` is a role of project `p` (predefined or custom).
fn role_exists(s: &Shared, p: &str, role: &str) -> bool {
    PREDEFINED_ROLES.contains(&role) || get_obj(s, ROLES.name, &format!("{p}/{role}")).is_some()
}

fn put_member(
    s: &Shared,
    coll: &str,
    what: &str,
    p: &str,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    need_project(s, p)?;
    let body = parse(body)?;
    let exists = if what == "User" {
        security::user_exists(s, name)
    } else {
        security::group_exists(s, name)
    };
    if !exists {
        return Err(security::missing_member(Flavor::Access, what, name));
    }
    let roles: Vec<String> = body["roles"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if roles.is_empty() {
        return Err(bad("roles must not be empty"));
    }
    if let Some(r) = roles.iter().find(|r| !role_exists(s, p, r)) {
        return Err(err(
            StatusCode::NOT_FOUND,
            format!("Role '{r}' was not found in project '{p}'"),
        ));
    }
    let v = json!({"name": name, "roles": roles});
    put_obj(s, coll, &format!("{p}/{name}"), v.clone());
    Ok(Json(v).into_response())
}

fn list_members(s: &Shared, coll: &str, p: &str) -> Result<Response, ApiError> {
    need_project(s, p)?;
    Ok(Json(json!({"members": nested(s, coll, p)})).into_response())
}

/// The state extractor of the handlers below.
type SharedState = State<Arc<Shared>>;

/// The list, read, upsert and delete routes of one kind of project member (users, groups),
/// stored in `coll`.
fn member_routes(
    coll: &'static str,
    what: &'static str,
    list: &'static str,
    item: &'static str,
) -> Router<Arc<Shared>> {
    Router::new()
        .route(
            list,
            get(
                move |State(s): SharedState, _a: Admin, Path(p): Path<String>| async move {
                    list_members(&s, coll, &p)
                },
            ),
        )
        .route(
            item,
            get(
                move |State(s): SharedState, _a: Admin, Path((p, n)): Path<(String, String)>| async move {
                    nested_get(&s, coll, &p, &n, what).map(|v| Json(v).into_response())
                },
            )
            .put(
                move |State(s): SharedState,
                      _a: Admin,
                      Path((p, n)): Path<(String, String)>,
                      body: axum::body::Bytes| async move {
                    put_member(&s, coll, what, &p, &n, &body)
                },
            )
            .delete(
                move |State(s): SharedState, _a: Admin, Path((p, n)): Path<(String, String)>| async move {
                    nested_delete(&s, coll, &p, &n, what)
                },
            ),
        )
}

// ---- repository status and sharing ----

fn repo_missing(key: &str) -> ApiError {
    err(
        StatusCode::NOT_FOUND,
        format!("Repository '{key}' was not found"),
    )
}

fn share_of(s: &Shared, key: &str) -> Value {
    get_obj(s, SHARES.name, key).unwrap_or_else(|| {
        json!({"resource_name": key, "shared_with_projects": [], "shared_with_all_projects": false, "shared_read_only": false})
    })
}

async fn repository_status(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let repo = s
        .artifactory
        .repository_raw(&key)
        .ok_or_else(|| repo_missing(&key))?;
    let mut v = share_of(&s, &key);
    v["assigned_to"] = json!(repo["projectKey"].as_str().unwrap_or(""));
    v["environments"] = repo
        .get("environments")
        .cloned()
        .unwrap_or_else(|| json!([]));
    Ok(Json(v).into_response())
}

#[derive(serde::Deserialize)]
struct ShareQuery {
    #[serde(rename = "readOnly")]
    read_only: Option<bool>,
}

fn share_target(
    s: &Shared,
    key: &str,
    target: Option<&str>,
    read_only: Option<bool>,
    on: bool,
) -> Result<Response, ApiError> {
    if s.artifactory.repository_raw(key).is_none() {
        return Err(repo_missing(key));
    }
    let mut v = share_of(s, key);
    match target {
        Some(t) => {
            need_project(s, t)?;
            let mut with: Vec<String> = v["shared_with_projects"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            with.retain(|x| x != t);
            if on {
                with.push(t.to_owned());
                with.sort();
            }
            v["shared_with_projects"] = json!(with);
        }
        None => v["shared_with_all_projects"] = json!(on),
    }
    if on {
        v["shared_read_only"] = json!(read_only.unwrap_or(false));
    }
    put_obj(s, SHARES.name, key, v);
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn share(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((key, target)): Path<(String, String)>,
    Query(q): Query<ShareQuery>,
) -> Result<Response, ApiError> {
    share_target(&s, &key, Some(&target), q.read_only, true)
}

async fn unshare(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path((key, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    share_target(&s, &key, Some(&target), None, false)
}

async fn share_all(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
    Query(q): Query<ShareQuery>,
) -> Result<Response, ApiError> {
    share_target(&s, &key, None, q.read_only, true)
}

async fn unshare_all(
    State(s): State<Arc<Shared>>,
    _a: Admin,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    share_target(&s, &key, None, None, false)
}
