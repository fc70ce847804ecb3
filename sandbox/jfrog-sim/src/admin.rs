//! The simulator's admin API over HTTP, under `/__sim/` (a path no JFrog API uses), so the
//! `sandbox` command and benchmarks can drive a simulator running in another process. It needs
//! no authentication (the simulator only listens on loopback) and its requests are neither
//! counted nor subject to faults.
//!
//! | method | path | body / answer |
//! |---|---|---|
//! | GET | `/__sim/health` | `OK` |
//! | GET | `/__sim/requests` | `{"GET /artifactory/api/repositories/{key}": 3, ...}` |
//! | DELETE | `/__sim/requests` | resets the counts (204) |
//! | GET | `/__sim/faults` | `[{"id":1,"fault":{FaultSpec},"matched":10,"fired":2,"matchedAtMs":[..]}]` (requests the fault matched, and errors or lost answers it caused; when it matched each, in ms after it was added) |
//! | POST | `/__sim/faults` | [`FaultSpec`] JSON → `{"id":1}` |
//! | DELETE | `/__sim/faults` | removes all faults (204) |
//! | DELETE | `/__sim/faults/{id}` | removes one fault (204 / 404) |
//! | GET | `/__sim/config` | `{"descriptorMergeEmulation":true,"writeLatencyMs":0,"seed":..}` |
//! | PUT | `/__sim/config` | `{"descriptorMergeEmulation":false,"writeLatencyMs":50,"missingRepositoryStatus":400,"readAfterWriteLagMs":2000}` (fields optional) |
//! | POST | `/__sim/tokens` | `{"admin":false}` → `{"token":"..."}` |
//! | POST | `/__sim/tokens/revoke` | `{"token":"..."}` → 204 (404 when unknown) |
//! | PUT | `/__sim/users/{name}` | `{"password":"..","admin":true}` (204) |
//! | GET | `/__sim/repositories/{key}` | stored configuration, secrets in clear (404 if absent) |
//! | PUT | `/__sim/repositories/{key}` | stores a configuration directly (no validation) (204 / 400) |
//! | DELETE | `/__sim/repositories/{key}` | deletes directly (204 / 404) |
//! | GET | `/__sim/collections` | object count per collection: `{"event_subscriptions":2,"proxies":0,"repositories":5}` |
//! | GET | `/__sim/collections/{name}` | JSON array of the stored objects, secrets in clear, sorted by key (404 unknown collection) |
//! | DELETE | `/__sim/collections/{name}` | removes every object of the collection (204 / 404) |
//! | GET | `/__sim/collections/{name}/{key}` | the stored object, secrets in clear (404) |
//! | PUT | `/__sim/collections/{name}/{key}` | stores a JSON object directly, no validation: 201 created / 204 replaced (400 not an object, 404 unknown collection) |
//! | PATCH | `/__sim/collections/{name}/{key}` | JSON merge patch (RFC 7386) onto the stored object: 204 (404 missing) |
//! | DELETE | `/__sim/collections/{name}/{key}` | deletes directly (204 / 404) |
//!
//! The collection routes reach every collection of the generic collection service
//! (`event_subscriptions`, `proxies`, ...) and `repositories` (the repository store; a PUT
//! needs `rclass` there). They simulate changes made directly in JFrog: seed an existing object,
//! mutate it (drift), count objects; they are neither validated nor counted nor faulted.
//!
//! A [`FaultSpec`] is `{"method":"PUT","pathPrefix":"/artifactory/api/repositories",
//! "latencyMs":0,"jitterMs":0,"errorRate":1.0,"status":503,"retryAfterMs":1000,
//! "dropAfterCommit":false,"times":3}`; every field is optional.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::faults::{Fault, FaultId, FaultSpec};
use crate::server::Shared;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/__sim/health", get(|| async { "OK" }))
        .route("/__sim/requests", get(requests).delete(reset_requests))
        .route(
            "/__sim/faults",
            get(faults).post(add_fault).delete(clear_faults),
        )
        .route("/__sim/faults/{id}", delete(remove_fault))
        .route("/__sim/config", get(config).put(set_config))
        .route("/__sim/tokens", post(token))
        .route("/__sim/tokens/revoke", post(revoke))
        .route("/__sim/users/{name}", put(user))
        .route(
            "/__sim/repositories/{key}",
            get(repo_get).put(repo_put).delete(repo_delete),
        )
        .route("/__sim/collections", get(collections))
        .route(
            "/__sim/collections/{name}",
            get(collection_list).delete(collection_clear),
        )
        .route(
            "/__sim/collections/{name}/{key}",
            get(object_get)
                .put(object_put)
                .patch(object_patch)
                .delete(object_delete),
        )
}

async fn collections(State(s): State<Arc<Shared>>) -> Json<Value> {
    let counts: serde_json::Map<String, Value> = s
        .collection_names()
        .into_iter()
        .map(|n| {
            let count = s.object_count(&n).unwrap_or(0);
            (n, Value::from(count))
        })
        .collect();
    Json(Value::Object(counts))
}

fn unknown(name: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("unknown collection '{name}'"),
    )
        .into_response()
}

async fn collection_list(State(s): State<Arc<Shared>>, Path(name): Path<String>) -> Response {
    match s.objects(&name) {
        Some(v) => Json(Value::Array(v)).into_response(),
        None => unknown(&name),
    }
}

async fn collection_clear(State(s): State<Arc<Shared>>, Path(name): Path<String>) -> Response {
    let Some(objects) = s.objects(&name) else {
        return unknown(&name);
    };
    if name == crate::server::REPOSITORIES {
        for o in objects {
            if let Some(k) = o.get("key").and_then(Value::as_str) {
                s.delete_object(&name, k);
            }
        }
    } else {
        s.collections.clear(&name);
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn object_get(
    State(s): State<Arc<Shared>>,
    Path((name, key)): Path<(String, String)>,
) -> Response {
    if !s.has_collection(&name) {
        return unknown(&name);
    }
    match s.object(&name, &key) {
        Some(v) => Json(v).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn object_put(
    State(s): State<Arc<Shared>>,
    Path((name, key)): Path<(String, String)>,
    Json(v): Json<Value>,
) -> Response {
    if !s.has_collection(&name) {
        return unknown(&name);
    }
    let existed = s.object(&name, &key).is_some();
    if !s.put_object(&name, &key, v) {
        return (StatusCode::BAD_REQUEST, "not a storable JSON object").into_response();
    }
    tracing::debug!(collection = %name, %key, "object stored through the admin API");
    if existed {
        StatusCode::NO_CONTENT.into_response()
    } else {
        StatusCode::CREATED.into_response()
    }
}

/// RFC 7386 JSON merge patch.
fn merge_patch(target: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in patch {
            if v.is_null() {
                t.remove(&k);
            } else {
                merge_patch(t.entry(k).or_insert(Value::Null), v);
            }
        }
    }
}

async fn object_patch(
    State(s): State<Arc<Shared>>,
    Path((name, key)): Path<(String, String)>,
    Json(patch): Json<Value>,
) -> Response {
    if !s.has_collection(&name) {
        return unknown(&name);
    }
    let Some(mut current) = s.object(&name, &key) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    merge_patch(&mut current, patch);
    if !s.put_object(&name, &key, current) {
        return (StatusCode::BAD_REQUEST, "the patched value is not storable").into_response();
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn object_delete(
    State(s): State<Arc<Shared>>,
    Path((name, key)): Path<(String, String)>,
) -> Response {
    if !s.has_collection(&name) {
        return unknown(&name);
    }
    if s.delete_object(&name, &key) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn requests(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(json!(s.counts.all()))
}

async fn reset_requests(State(s): State<Arc<Shared>>) -> StatusCode {
    s.counts.reset();
    StatusCode::NO_CONTENT
}

async fn faults(State(s): State<Arc<Shared>>) -> Json<Value> {
    let list: Vec<Value> = s
        .faults
        .list()
        .iter()
        .map(|(id, f, c)| {
            json!({"id": id.0, "fault": FaultSpec::from(f), "matched": c.matched, "fired": c.fired,
                "matchedAtMs": c.matched_at_ms})
        })
        .collect();
    Json(Value::Array(list))
}

async fn add_fault(State(s): State<Arc<Shared>>, Json(spec): Json<FaultSpec>) -> Json<Value> {
    let id = s.faults.add(Fault::from(spec));
    Json(json!({"id": id.0}))
}

async fn clear_faults(State(s): State<Arc<Shared>>) -> StatusCode {
    s.faults.clear();
    StatusCode::NO_CONTENT
}

async fn remove_fault(State(s): State<Arc<Shared>>, Path(id): Path<u64>) -> StatusCode {
    if s.faults.remove(FaultId(id)) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

async fn config(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({
        "descriptorMergeEmulation": s.descriptor.emulation(),
        "writeLatencyMs": u64::try_from(s.descriptor.write_latency().as_millis()).unwrap_or(u64::MAX),
        "seed": s.config.seed,
        "missingRepositoryStatus": s.artifactory.missing_status(),
        "readAfterWriteLagMs": u64::try_from(s.artifactory.lag.get().as_millis()).unwrap_or(u64::MAX),
        "yamlRepositories": s.artifactory.yaml_repositories(),
        "url": s.base_url,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigPatch {
    descriptor_merge_emulation: Option<bool>,
    write_latency_ms: Option<u64>,
    missing_repository_status: Option<u16>,
    read_after_write_lag_ms: Option<u64>,
    yaml_repositories: Option<bool>,
}

async fn set_config(State(s): State<Arc<Shared>>, Json(p): Json<ConfigPatch>) -> Json<Value> {
    if let Some(on) = p.descriptor_merge_emulation {
        s.descriptor.set_emulation(on);
    }
    if let Some(ms) = p.read_after_write_lag_ms {
        s.artifactory.lag.set(Duration::from_millis(ms));
    }
    if let Some(status) = p.missing_repository_status {
        s.artifactory.set_missing_status(status);
    }
    if let Some(on) = p.yaml_repositories {
        s.artifactory.set_yaml_repositories(on);
    }
    if let Some(ms) = p.write_latency_ms {
        s.descriptor.set_write_latency(Duration::from_millis(ms));
    }
    config(State(s)).await
}

#[derive(Debug, Deserialize)]
struct TokenRequest {
    #[serde(default)]
    admin: bool,
    username: Option<String>,
}

async fn token(State(s): State<Arc<Shared>>, Json(r): Json<TokenRequest>) -> Json<Value> {
    let user = r.username.unwrap_or_else(|| {
        if r.admin {
            "admin".into()
        } else {
            "reader".into()
        }
    });
    Json(json!({"token": s.auth.issue_token(&user, r.admin)}))
}

#[derive(Deserialize)]
struct RevokeRequest {
    token: String,
}

async fn revoke(State(s): State<Arc<Shared>>, Json(r): Json<RevokeRequest>) -> StatusCode {
    if s.auth.revoke_token(&r.token) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

#[derive(Deserialize)]
struct UserRequest {
    password: String,
    #[serde(default)]
    admin: bool,
}

async fn user(
    State(s): State<Arc<Shared>>,
    Path(name): Path<String>,
    Json(r): Json<UserRequest>,
) -> StatusCode {
    s.auth.set_user(&name, &r.password, r.admin);
    StatusCode::NO_CONTENT
}

async fn repo_get(State(s): State<Arc<Shared>>, Path(key): Path<String>) -> Response {
    match s.artifactory.repository_raw(&key) {
        Some(v) => Json(v).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn repo_put(
    State(s): State<Arc<Shared>>,
    Path(key): Path<String>,
    Json(v): Json<Value>,
) -> StatusCode {
    if s.artifactory.put_raw(&key, v) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::BAD_REQUEST
    }
}

async fn repo_delete(State(s): State<Arc<Shared>>, Path(key): Path<String>) -> StatusCode {
    if s.artifactory.delete_raw(&key) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}
