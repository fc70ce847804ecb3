//! Build info (JFrog REST API "Build Upload", "All Builds", "Build Runs", "Build Info",
//! "Delete Builds"), as JFrog's Terraform provider's release bundle tests use it
//! (`pkg/artifactory/resource/lifecycle/resource_artifactory_release_bundle_v2_test.go`:
//! `uploadBuild`, `deleteBuild`):
//!
//! - `PUT /artifactory/api/build[?project=KEY]` stores a build info (`name`, `number`,
//!   `started` required) in the build-info repository (`artifactory-build-info`, or
//!   `KEY-build-info` for a project) → 204;
//! - `GET /artifactory/api/build[?project=]` → `{"uri", "builds": [{"uri": "/name",
//!   "lastStarted"}]}`; `GET /artifactory/api/build/{name}` → `{"uri", "buildsNumbers":
//!   [{"uri": "/number", "started"}]}`; `GET /artifactory/api/build/{name}/{number}` →
//!   `{"uri", "buildInfo": {...}}` (404 otherwise);
//! - `POST /artifactory/api/build/delete` with `{"buildName", "buildNumbers", "deleteAll",
//!   "buildRepo"}` → 200.
//!
//! Builds are the `builds` collection (key `repo/name/number`), without generic routes.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::auth::Admin;
use crate::collections::{Declaration, Ids, KeyCase, accept_object, as_stored};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

pub(crate) static BUILDS: Declaration = Declaration {
    name: "builds",
    key_field: "__key",
    key_case: KeyCase::Sensitive,
    ids: Ids::Body,
    flavor: Flavor::Artifactory,
    not_found: |k| {
        (
            StatusCode::NOT_FOUND,
            format!("No build was found for '{k}'"),
        )
    },
    exists: |k| (StatusCode::CONFLICT, format!("Build '{k}' already exists")),
    validate: accept_object,
    view: as_stored,
};

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/artifactory/api/build", get(list).put(upload))
        .route("/artifactory/api/build/delete", post(delete))
        .route("/artifactory/api/build/{name}", get(runs))
        .route("/artifactory/api/build/{name}/{number}", get(info))
}

type Q = Query<HashMap<String, String>>;

fn repo_of(q: &HashMap<String, String>) -> String {
    q.get("buildRepo")
        .filter(|r| !r.is_empty())
        .cloned()
        .or_else(|| {
            q.get("project")
                .filter(|p| !p.is_empty())
                .map(|p| format!("{p}-build-info"))
        })
        .unwrap_or_else(|| "artifactory-build-info".to_owned())
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// The builds of one build-info repository.
fn builds(s: &Shared, repo: &str) -> Vec<Value> {
    s.collections
        .list_raw(BUILDS.name)
        .unwrap_or_default()
        .into_iter()
        .filter(|b| str_of(b, "__repo") == repo)
        .collect()
}

fn public(b: &Value) -> Value {
    let mut b = b.clone();
    if let Value::Object(m) = &mut b {
        m.remove("__key");
        m.remove("__repo");
    }
    b
}

async fn upload(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Query(q): Q,
    body: Bytes,
) -> Result<Response, ApiError> {
    let mut b: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("Could not parse the build info: {e}")))?;
    if !b.is_object() {
        return Err(ApiError::bad_request(
            "The build info must be a JSON object",
        ));
    }
    for k in ["name", "number", "started"] {
        if str_of(&b, k).is_empty() {
            return Err(ApiError::bad_request(format!("Build {k} is required")));
        }
    }
    let repo = repo_of(&q);
    let key = format!("{repo}/{}/{}", str_of(&b, "name"), str_of(&b, "number"));
    b["__repo"] = Value::String(repo);
    s.collections.put_raw(BUILDS.name, &key, b);
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn list(State(s): State<Arc<Shared>>, _admin: Admin, Query(q): Q) -> Response {
    let mut last: std::collections::BTreeMap<String, String> = Default::default();
    for b in builds(&s, &repo_of(&q)) {
        let e = last.entry(str_of(&b, "name").to_owned()).or_default();
        if str_of(&b, "started") > e.as_str() {
            *e = str_of(&b, "started").to_owned();
        }
    }
    let builds: Vec<Value> = last
        .into_iter()
        .map(|(n, t)| json!({"uri": format!("/{n}"), "lastStarted": t}))
        .collect();
    axum::Json(json!({"uri": format!("{}/artifactory/api/build", s.base_url), "builds": builds}))
        .into_response()
}

fn missing(what: &str) -> ApiError {
    ApiError::new(
        Flavor::Artifactory,
        StatusCode::NOT_FOUND,
        format!("No build was found for {what}"),
    )
}

async fn runs(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(name): Path<String>,
    Query(q): Q,
) -> Result<Response, ApiError> {
    let numbers: Vec<Value> = builds(&s, &repo_of(&q))
        .iter()
        .filter(|b| str_of(b, "name") == name)
        .map(|b| json!({"uri": format!("/{}", str_of(b, "number")), "started": str_of(b, "started")}))
        .collect();
    if numbers.is_empty() {
        return Err(missing(&format!("build name {name}")));
    }
    Ok(axum::Json(json!({
        "uri": format!("{}/artifactory/api/build/{name}", s.base_url),
        "buildsNumbers": numbers,
    }))
    .into_response())
}

async fn info(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((name, number)): Path<(String, String)>,
    Query(q): Q,
) -> Result<Response, ApiError> {
    let key = format!("{}/{name}/{number}", repo_of(&q));
    let b = s
        .collections
        .get_raw(BUILDS.name, &key)
        .ok_or_else(|| missing(&format!("name {name} , number {number}")))?;
    Ok(axum::Json(json!({
        "uri": format!("{}/artifactory/api/build/{name}/{number}", s.base_url),
        "buildInfo": public(&b),
    }))
    .into_response())
}

async fn delete(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    body: Bytes,
) -> Result<Response, ApiError> {
    let b: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("Could not parse the request: {e}")))?;
    let name = str_of(&b, "buildName");
    if name.is_empty() {
        return Err(ApiError::bad_request("buildName is required"));
    }
    let mut q = HashMap::new();
    q.insert("buildRepo".to_owned(), str_of(&b, "buildRepo").to_owned());
    let all = b.get("deleteAll").and_then(Value::as_bool).unwrap_or(false);
    let numbers: Vec<&str> = b
        .get("buildNumbers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for x in builds(&s, &repo_of(&q)) {
        if str_of(&x, "name") == name && (all || numbers.contains(&str_of(&x, "number"))) {
            s.collections.delete_raw(BUILDS.name, str_of(&x, "__key"));
        }
    }
    Ok(crate::errors::text(
        StatusCode::OK,
        format!("Build '{name}' was deleted successfully"),
    ))
}
