//! Artifacts and their properties, and the Lifecycle service's release bundles v2 and
//! promotions, as JFrog documents them:
//!
//! - `PUT /artifactory/{repo}/{path}` deploys the raw body (the repository must exist) and
//!   answers 201 with the item's storage info; `DELETE /artifactory/{repo}/{path}` removes it;
//!   `GET /artifactory/api/storage/{repo}/{path}` answers the storage info (size as a
//!   string, checksums, URIs).
//! - `GET /artifactory/api/storage/{item}?properties` answers `{"properties": {k: [v]}}` or
//!   404 "No properties could be found."; `PUT ...?properties=k1=v1,v2;k2=v3` sets keys (others
//!   stay); `DELETE ...?properties=k1,k2` removes keys.
//! - `POST /lifecycle/api/v2/release_bundle` creates a bundle version (the signing key in
//!   `X-JFrog-Signing-Key-Name`, a source of the declared type); its record is read and
//!   deleted under `/records/{name}/{version}`; promotions are created and listed under
//!   `/lifecycle/api/v2/promotion/records/{name}/{version}` and deleted by creation time.
//! - `GET /lifecycle/api/v2/promotion/release-bundles-by-environment/{environment}` (JFrog's
//!   "Get Release Bundle v2 Versions in a Specific Environment", Artifactory 7.107.1+) lists
//!   the bundle versions whose current location is that environment (the environment of
//!   their newest promotion), of one Release Bundles repository: `repository_key`, else
//!   `project` (`<project>-release-bundles-v2`), else `release-bundles-v2`. Paged by `offset`
//!   (default 0) and `limit` (default 25, at most 255), ordered by `order_by` (`created`,
//!   `created_by`, `release_bundle_name`, `release_bundle_version`, `environment`) and
//!   `order_asc` (default false); the answer `{promotions, total, offset, limit}` counts
//!   every matching version in `total` (as the sibling lifecycle lists do).
//! - `GET /lifecycle/api/v2/release_bundle/records/{name}` (JFrog's "Get Release Bundle v2
//!   Versions", Artifactory 7.63.2+) lists the versions of one bundle name, whatever their
//!   status, in one Release Bundles repository (named as above): each with `status`,
//!   `repository_key`, `release_bundle_name`, `release_bundle_version`, `service_id`,
//!   `created_by` and `created`. Paged by `offset` (default 0) and `limit` (default 25, at
//!   most 255), ordered by `order_by` (`created`, the default, `created_by`,
//!   `release_bundle_version`) and `order_asc` (default false); the answer
//!   `{release_bundles, total, offset, limit}`. A name without a version in that repository
//!   answers 404, as the read of any of its versions does (`filter_by` and `include` are not
//!   served).
//! - `GET /lifecycle/api/v2/release_bundle/names` ("Get Release Bundle v2 Names") lists the
//!   bundle names, each with its `repository_key`, `project_key` and `project_name`: of every
//!   repository, or of the one `repository_key` or `project` names.
//!
//! Items, bundles and promotions are collections of the generic collection service without
//! generic routes (visible through the admin API).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::auth::Admin;
use crate::collections::{Declaration, Ids, KeyCase, accept_object, as_stored};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

macro_rules! store {
    ($name:ident, $coll:expr, $what:expr) => {
        pub(crate) static $name: Declaration = Declaration {
            name: $coll,
            key_field: "__key",
            key_case: KeyCase::Sensitive,
            ids: Ids::Body,
            flavor: Flavor::Artifactory,
            not_found: |k| (StatusCode::NOT_FOUND, format!("{} '{k}' not found", $what)),
            exists: |k| {
                (
                    StatusCode::CONFLICT,
                    format!("{} '{k}' already exists", $what),
                )
            },
            validate: accept_object,
            view: as_stored,
        };
    };
}

store!(ITEMS, "artifacts", "Item");
store!(BUNDLES, "release_bundles", "Release bundle");
store!(PROMOTIONS, "promotions", "Promotion");

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/artifactory/api/storage/{*item}",
            get(storage_get).put(props_put).delete(props_delete),
        )
        .route(
            "/artifactory/api/metadata/{*item}",
            axum::routing::patch(props_patch),
        )
        .route("/artifactory/api/search/aql", post(super::aql::search))
        .route("/lifecycle/api/v2/release_bundle", post(bundle_create))
        .route(
            "/lifecycle/api/v2/release_bundle/records/{name}",
            get(bundle_versions),
        )
        .route("/lifecycle/api/v2/release_bundle/names", get(bundle_names))
        .route(
            "/lifecycle/api/v2/release_bundle/records/{name}/{version}",
            get(bundle_read).delete(bundle_delete),
        )
        .route(
            "/lifecycle/api/v2/promotion/records/{name}/{version}",
            get(promotion_list).post(promotion_create),
        )
        .route(
            "/lifecycle/api/v2/promotion/records/{name}/{version}/{millis}",
            get(promotion_read).delete(promotion_delete),
        )
        .route(
            "/lifecycle/api/v2/promotion/release-bundles-by-environment/{environment}",
            get(promotions_by_environment),
        )
}

/// The artifact routes (`/artifactory/{repo}/{path}`: deploy, download, delete): a
/// catch-all, merged last. `/artifactory/api/...` paths that no route serves answer
/// Artifactory's 404 body instead of being taken for a repository named `api`.
pub(crate) fn item_routes() -> Router<Arc<Shared>> {
    Router::new().route(
        "/artifactory/{*item}",
        get(download)
            .put(deploy)
            .delete(undeploy)
            .fallback(unserved),
    )
}

fn not_found(msg: impl Into<String>) -> ApiError {
    ApiError::art(StatusCode::NOT_FOUND, msg)
}

/// An `/artifactory/api/...` path the simulator does not serve, or a method the artifact
/// catch-all does not take: Artifactory's error body (404 / 405), never an empty answer.
fn api_path(item: &str) -> Result<(), ApiError> {
    if item == "api" || item.starts_with("api/") {
        Err(not_found("Not Found"))
    } else {
        Ok(())
    }
}

async fn unserved(Path(item): Path<String>) -> ApiError {
    match api_path(&item) {
        Err(e) => e,
        Ok(()) => ApiError::art(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"),
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `repo/path` split; the path keeps its leading `/` (`/` for the repository's root).
fn split(item: &str) -> Result<(String, String), ApiError> {
    let item = item.trim_start_matches('/');
    let (r, p) = item.split_once('/').unwrap_or((item, ""));
    if r.is_empty() {
        return Err(ApiError::bad_request(format!(
            "'{item}' is not a repository path"
        )));
    }
    Ok((r.to_string(), format!("/{}", p.trim_matches('/'))))
}

fn key_of(repo: &str, path: &str) -> String {
    if path == "/" {
        format!("{repo}/")
    } else {
        format!("{repo}{path}")
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn is_folder(v: &Value) -> bool {
    v.get("folder").and_then(Value::as_bool).unwrap_or(false)
}

/// The storage info of an item as the REST API's File Info / Folder Info answer it
/// (JFrog REST API "File Info" and "Folder Info" sample responses): a file has `downloadUri`,
/// `size` (a string), `mimeType`, `checksums` and `originalChecksums` (md5, sha1, sha256); a
/// folder has `children` (`[{uri: "/name", folder}]`); both have `uri`, `repo`, `path`,
/// `created`, `createdBy`, `lastModified`, `modifiedBy` and `lastUpdated`.
fn info(s: &Shared, item: &Value) -> Value {
    let mut v = item.clone();
    if let Value::Object(m) = &mut v {
        m.remove("__key");
        m.remove("properties");
        m.remove("content");
        let folder = m
            .remove("folder")
            .and_then(|f| f.as_bool())
            .unwrap_or(false);
        let repo = m
            .get("repo")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let path = m
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let shown = if path == "/" { "" } else { path.as_str() };
        if folder {
            m.insert("children".into(), Value::Array(children(s, &repo, &path)));
        } else {
            m.insert(
                "downloadUri".into(),
                json!(format!("{}/artifactory/{repo}{shown}", s.base_url)),
            );
        }
        m.insert(
            "uri".into(),
            json!(format!(
                "{}/artifactory/api/storage/{repo}{shown}",
                s.base_url
            )),
        );
    }
    v
}

/// The direct children of a folder: `[{"uri": "/name", "folder": bool}]`.
fn children(s: &Shared, repo: &str, path: &str) -> Vec<Value> {
    let prefix = if path == "/" {
        format!("{repo}/")
    } else {
        format!("{repo}{path}/")
    };
    s.collections
        .list_raw(ITEMS.name)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| {
            let key = v.get("__key").and_then(Value::as_str)?;
            let rest = key.strip_prefix(&prefix)?;
            (!rest.is_empty() && !rest.contains('/'))
                .then(|| json!({"uri": format!("/{rest}"), "folder": is_folder(&v)}))
        })
        .collect()
}

/// A folder record (the repository root is the folder `/`).
fn folder_record(repo: &str, path: &str, by: &str) -> Value {
    let t = now();
    json!({"repo": repo, "path": path, "folder": true, "created": t, "createdBy": by,
           "lastModified": t, "modifiedBy": by, "lastUpdated": t, "properties": {}})
}

/// Artifactory creates the parent folders of a deployed item (and the repository's root),
/// each a storage item of its own with folder info and properties.
fn ensure_folders(s: &Shared, repo: &str, path: &str, by: &str) -> Result<(), ApiError> {
    let mut at = String::new();
    let parents: Vec<&str> = path.trim_matches('/').split('/').collect();
    let mut folders = vec!["/".to_string()];
    for seg in &parents[..parents.len().saturating_sub(1)] {
        at.push('/');
        at.push_str(seg);
        folders.push(at.clone());
    }
    for f in folders {
        let key = key_of(repo, &f);
        match s.collections.get_raw(ITEMS.name, &key) {
            Some(v) if !is_folder(&v) => {
                return Err(ApiError::bad_request(format!(
                    "Cannot create folder '{repo}:{f}': a file exists at that path"
                )));
            }
            Some(_) => {}
            None => {
                s.collections
                    .put_raw(ITEMS.name, &key, folder_record(repo, &f, by));
            }
        }
    }
    Ok(())
}

async fn deploy(
    State(s): State<Arc<Shared>>,
    admin: Admin,
    Path(item): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    api_path(&item)?;
    let (repo, path) = split(&item)?;
    if s.artifactory.repository_raw(&repo).is_none() {
        return Err(not_found(format!("Repository '{repo}' not found")));
    }
    if path == "/" {
        return Err(ApiError::bad_request(
            "A path inside the repository is required",
        ));
    }
    let by = admin.0.username.clone();
    ensure_folders(&s, &repo, &path, &by)?;
    let key = key_of(&repo, &path);
    let previous = s.collections.get_raw(ITEMS.name, &key);
    let t = now();
    // `PUT .../folder/` creates a folder (REST API "Create Directory").
    if item.ends_with('/') {
        if previous.as_ref().is_some_and(|v| !is_folder(v)) {
            return Err(ApiError::bad_request(format!(
                "Cannot create folder '{repo}:{path}': a file exists at that path"
            )));
        }
        let stored = previous.unwrap_or_else(|| folder_record(&repo, &path, &by));
        s.collections.put_raw(ITEMS.name, &key, stored.clone());
        return Ok((StatusCode::CREATED, axum::Json(info(&s, &stored))).into_response());
    }
    if previous.as_ref().is_some_and(is_folder) {
        return Err(ApiError::bad_request(format!(
            "Cannot deploy file '{repo}:{path}': a folder exists at that path"
        )));
    }
    let checksums = json!({
        "md5": hex(&md5::Md5::digest(&body)),
        "sha1": hex(&sha1::Sha1::digest(&body)),
        "sha256": hex(&Sha256::digest(&body)),
    });
    let properties = previous
        .as_ref()
        .and_then(|v| v.get("properties").cloned())
        .unwrap_or_else(|| json!({}));
    let (created, created_by) = previous
        .as_ref()
        .map(|v| (v["created"].clone(), v["createdBy"].clone()))
        .unwrap_or((json!(t), json!(by)));
    use base64::Engine;
    let stored = json!({
        "repo": repo,
        "path": path,
        "created": created,
        "createdBy": created_by,
        "lastModified": t,
        "modifiedBy": by,
        "lastUpdated": t,
        "mimeType": mime_type(&path),
        "size": body.len().to_string(),
        "checksums": checksums,
        "originalChecksums": checksums,
        "properties": properties,
        "content": base64::engine::general_purpose::STANDARD.encode(&body),
    });
    s.collections.put_raw(ITEMS.name, &key, stored.clone());
    Ok((StatusCode::CREATED, axum::Json(info(&s, &stored))).into_response())
}

/// The MIME type Artifactory derives from a file name's extension (its default mime types).
fn mime_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "json" => "application/json",
        "xml" | "pom" => "application/xml",
        "txt" => "text/plain",
        "jar" | "war" | "zip" => "application/zip",
        "tgz" | "gz" => "application/x-gzip",
        _ => "application/octet-stream",
    }
}

/// `GET /artifactory/{repo}/{path}`: the file's content with its checksum headers
/// (REST API "Retrieve Artifact").
async fn download(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    api_path(&raw)?;
    let (repo, path) = split(&raw)?;
    if s.artifactory.repository_raw(&repo).is_none() {
        return Err(not_found(format!("Repository '{repo}' not found")));
    }
    let v = s
        .collections
        .get_raw(ITEMS.name, &key_of(&repo, &path))
        .ok_or_else(|| not_found(format!("Could not locate artifact '{repo}:{path}'")))?;
    if is_folder(&v) {
        let names: Vec<String> = children(&s, &repo, &path)
            .iter()
            .filter_map(|c| {
                c["uri"]
                    .as_str()
                    .map(|u| u.trim_start_matches('/').to_string())
            })
            .collect();
        return Ok((
            [(axum::http::header::CONTENT_TYPE, "text/html")],
            names.join("\n"),
        )
            .into_response());
    }
    use base64::Engine;
    let body = base64::engine::general_purpose::STANDARD
        .decode(v["content"].as_str().unwrap_or_default())
        .unwrap_or_default();
    let str_at = |k: &str| v["checksums"][k].as_str().unwrap_or_default().to_string();
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                v["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream")
                    .to_string(),
            ),
            (
                axum::http::HeaderName::from_static("x-checksum-sha1"),
                str_at("sha1"),
            ),
            (
                axum::http::HeaderName::from_static("x-checksum-sha256"),
                str_at("sha256"),
            ),
            (
                axum::http::HeaderName::from_static("x-checksum-md5"),
                str_at("md5"),
            ),
        ],
        body,
    )
        .into_response())
}

/// `DELETE /artifactory/{repo}/{path}`: the item, and everything below a folder.
async fn undeploy(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(item): Path<String>,
) -> Result<Response, ApiError> {
    api_path(&item)?;
    let (repo, path) = split(&item)?;
    let key = key_of(&repo, &path);
    let Some(v) = s.collections.get_raw(ITEMS.name, &key) else {
        return Err(not_found(format!(
            "Could not locate artifact '{repo}:{path}'"
        )));
    };
    if is_folder(&v) {
        let below = format!("{}/", key.trim_end_matches('/'));
        for k in s
            .collections
            .list_raw(ITEMS.name)
            .unwrap_or_default()
            .iter()
            .filter_map(|x| x.get("__key").and_then(Value::as_str))
            .filter(|k| k.starts_with(&below))
        {
            s.collections.delete_raw(ITEMS.name, k);
        }
    }
    if path != "/" {
        s.collections.delete_raw(ITEMS.name, &key);
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn item(s: &Shared, raw: &str) -> Result<(String, Value), ApiError> {
    let (repo, path) = split(raw)?;
    if s.artifactory.repository_raw(&repo).is_none() {
        return Err(not_found(format!("Repository '{repo}' not found")));
    }
    let key = key_of(&repo, &path);
    // A repository's root exists as soon as the repository does.
    if path == "/" && s.collections.get_raw(ITEMS.name, &key).is_none() {
        s.collections
            .put_raw(ITEMS.name, &key, folder_record(&repo, "/", "admin"));
    }
    let v = s
        .collections
        .get_raw(ITEMS.name, &key)
        .ok_or_else(|| not_found(format!("Unable to find item '{repo}:{path}'")))?;
    Ok((key, v))
}

async fn storage_get(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(raw): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let (_, v) = item(&s, &raw)?;
    if q.contains_key("list") {
        return file_list(&s, &v, &q).map(|l| axum::Json(l).into_response());
    }
    if q.contains_key("properties") {
        let props = v.get("properties").cloned().unwrap_or_else(|| json!({}));
        if props.as_object().is_none_or(Map::is_empty) {
            return Err(not_found("No properties could be found."));
        }
        let uri = info(&s, &v)["uri"].clone();
        return Ok(axum::Json(json!({"properties": props, "uri": uri})).into_response());
    }
    Ok(axum::Json(info(&s, &v)).into_response())
}

/// JFrog REST API "File List" (`GET /api/storage/{repo}/{folder}?list[&deep=0|1][&depth=n]
/// [&listFolders=0|1][&mdTimestamps=0|1][&includeRootPath=0|1]`), the shape JFrog's Artifactory
/// Terraform provider reads (`FileListAPIModel` in `datasource_artifactory_file_list.go`):
/// `{uri, created, files: [{uri, size, lastModified, folder, sha1, sha2, mdTimestamps}]}`,
/// each `uri` relative to the listed folder, a folder's `size` -1. Only the folder's direct
/// children unless `deep`, at most `depth` levels down when it is above 0; folders only with
/// `listFolders`; the folder itself (`/`) too with `includeRootPath`.
fn file_list(s: &Shared, folder: &Value, q: &HashMap<String, String>) -> Result<Value, ApiError> {
    let flag = |k: &str| q.get(k).is_some_and(|v| v == "1" || v == "true");
    let repo = folder["repo"].as_str().unwrap_or_default().to_string();
    let path = folder["path"].as_str().unwrap_or("/").to_string();
    if !is_folder(folder) {
        return Err(ApiError::bad_request(format!(
            "Expected a folder but found a file: '{repo}:{path}'"
        )));
    }
    let (deep, list_folders) = (flag("deep"), flag("listFolders"));
    let depth = q
        .get("depth")
        .and_then(|d| d.parse::<usize>().ok())
        .filter(|d| *d > 0);
    let prefix = if path == "/" {
        format!("{repo}/")
    } else {
        format!("{repo}{path}/")
    };
    let entry = |uri: String, v: &Value| {
        let folder = is_folder(v);
        let mut e = json!({"uri": uri, "folder": folder,
        "lastModified": v["lastModified"].clone(),
        "size": if folder { -1 } else {
            v["size"].as_str().and_then(|n| n.parse::<i64>().ok()).unwrap_or(0)
        }});
        if !folder {
            e["sha1"] = v["checksums"]["sha1"].clone();
            e["sha2"] = v["checksums"]["sha256"].clone();
        }
        if flag("mdTimestamps") {
            e["mdTimestamps"] = json!({"properties": v["lastModified"].clone()});
        }
        e
    };
    let mut files: Vec<Value> = s
        .collections
        .list_raw(ITEMS.name)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| {
            let key = v.get("__key").and_then(Value::as_str)?;
            let rest = key.strip_prefix(&prefix)?.to_string();
            let level = rest.matches('/').count() + 1;
            let within = if deep {
                depth.is_none_or(|d| level <= d)
            } else {
                level == 1
            };
            (!rest.is_empty() && within && (list_folders || !is_folder(&v)))
                .then(|| entry(format!("/{rest}"), &v))
        })
        .collect();
    if flag("includeRootPath") && list_folders {
        files.push(entry("/".into(), folder));
    }
    files.sort_by(|a, b| a["uri"].as_str().cmp(&b["uri"].as_str()));
    Ok(json!({
        "uri": info(s, folder)["uri"].clone(),
        "created": now(),
        "files": files,
    }))
}

/// A property name: starts with a letter; letters, digits, `.`, `-`, `_`, `:`.
fn valid_property(k: &str) -> bool {
    k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.len() <= 255
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
}

async fn props_put(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(raw): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let (key, mut v) = item(&s, &raw)?;
    let spec = q
        .get("properties")
        .ok_or_else(|| ApiError::bad_request("the properties parameter is required"))?;
    let mut set = Map::new();
    for pair in spec.split(';').filter(|p| !p.is_empty()) {
        let (k, vals) = pair.split_once('=').unwrap_or((pair, ""));
        if !valid_property(k) {
            return Err(ApiError::bad_request(format!(
                "Invalid property name '{k}'"
            )));
        }
        let vals: Vec<Value> = vals
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| Value::String(x.to_string()))
            .collect();
        set.insert(k.to_string(), Value::Array(vals));
    }
    if let Some(Value::Object(p)) = v.get_mut("properties") {
        p.extend(set);
    }
    s.collections.put_raw(ITEMS.name, &key, v);
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn props_delete(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(raw): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let (key, mut v) = item(&s, &raw)?;
    let names = q
        .get("properties")
        .ok_or_else(|| ApiError::bad_request("the properties parameter is required"))?;
    if let Some(Value::Object(p)) = v.get_mut("properties") {
        for n in names.split(',') {
            p.remove(n);
        }
    }
    s.collections.put_raw(ITEMS.name, &key, v);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `PATCH /api/metadata/{repo}/{path}` (REST API "Update Item Properties"): `{"props":
/// {k: v | [v] | null}}`, a merge where `null` removes the key; 204.
async fn props_patch(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(raw): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (key, mut v) = item(&s, &raw)?;
    let b: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON: {e}")))?;
    let Some(Value::Object(props)) = b.get("props") else {
        return Err(ApiError::bad_request("The body needs a 'props' object"));
    };
    let mut set = Map::new();
    let mut unset = Vec::new();
    for (k, val) in props {
        if !valid_property(k) {
            return Err(ApiError::bad_request(format!(
                "Invalid property name '{k}'"
            )));
        }
        let vals: Vec<Value> = match val {
            Value::Null => {
                unset.push(k.clone());
                continue;
            }
            Value::Array(a) => a
                .iter()
                .map(|x| Value::String(x.as_str().map_or_else(|| x.to_string(), str::to_string)))
                .collect(),
            Value::String(x) => x.split(',').map(|x| Value::String(x.to_string())).collect(),
            other => vec![Value::String(other.to_string())],
        };
        set.insert(k.clone(), Value::Array(vals));
    }
    if let Some(Value::Object(p)) = v.get_mut("properties") {
        p.extend(set);
        for k in unset {
            p.remove(&k);
        }
    }
    s.collections.put_raw(ITEMS.name, &key, v);
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn signing_key(h: &HeaderMap) -> Result<String, ApiError> {
    h.get("X-JFrog-Signing-Key-Name")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .ok_or_else(|| ApiError::bad_request("X-JFrog-Signing-Key-Name header is required"))
}

fn bundle_key(name: &str, version: &str) -> String {
    format!("{name}/{version}")
}

/// The Release Bundles repository a lifecycle call names: `repository_key`, else the
/// project's (`<project>-release-bundles-v2`), else `release-bundles-v2` (JFrog's "Common
/// Optional Query Parameters" of the Release Lifecycle Management APIs).
fn bundles_repository(q: &HashMap<String, String>) -> String {
    let set = |k: &str| q.get(k).filter(|v| !v.is_empty());
    match (set("repository_key"), set("project")) {
        (Some(r), _) => r.clone(),
        (None, Some(p)) => format!("{p}-release-bundles-v2"),
        (None, None) => "release-bundles-v2".to_string(),
    }
}

/// The project of a Release Bundles repository (`default` for the platform's own).
fn project_of(repository: &str) -> &str {
    repository
        .strip_suffix("-release-bundles-v2")
        .unwrap_or("default")
}

async fn bundle_create(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    signing_key(&headers)?;
    let repository = bundles_repository(&q);
    let b: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON: {e}")))?;
    let str_at = |k: &str| {
        b.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (name, version, source_type) = (
        str_at("release_bundle_name"),
        str_at("release_bundle_version"),
        str_at("source_type"),
    );
    if name.is_empty() || version.is_empty() {
        return Err(ApiError::bad_request(
            "release_bundle_name and release_bundle_version are required",
        ));
    }
    if !matches!(
        source_type.as_str(),
        "aql" | "artifacts" | "builds" | "release_bundles"
    ) {
        return Err(ApiError::bad_request(format!(
            "Invalid source_type '{source_type}': expected aql, artifacts, builds or release_bundles"
        )));
    }
    let has_source = b
        .get("source")
        .and_then(|s| s.get(&source_type))
        .is_some_and(|v| !(v.is_null() || v.as_array().is_some_and(Vec::is_empty) || v == ""));
    if !has_source {
        return Err(ApiError::bad_request(format!(
            "source.{source_type} is required for source_type {source_type}"
        )));
    }
    let key = bundle_key(&name, &version);
    let created = now();
    if s.collections.get_raw(BUNDLES.name, &key).is_some() {
        return Err(ApiError::art(
            StatusCode::CONFLICT,
            format!("Release bundle {name}:{version} already exists"),
        ));
    }
    s.collections.put_raw(
        BUNDLES.name,
        &key,
        json!({
            "release_bundle_name": name,
            "release_bundle_version": version,
            "status": "COMPLETED",
            "repository_key": repository,
            "service_id": "jfrt@sim",
            "created_by": "admin",
            "created": created,
        }),
    );
    // JFrog's Artifactory Terraform provider decodes the answer
    // (`ReleaseBundleV2ResponseAPIModel` in `resource_artifactory_release_bundle_v2.go`: the
    // repository, name, version and `created`; `TestAccReleaseBundleV2_full_artifacts`).
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({
            "repository_key": repository,
            "release_bundle_name": name,
            "release_bundle_version": version,
            "created": created,
        })),
    )
        .into_response())
}

fn bundle(s: &Shared, name: &str, version: &str) -> Result<Value, ApiError> {
    s.collections
        .get_raw(BUNDLES.name, &bundle_key(name, version))
        .map(|mut v| {
            if let Value::Object(m) = &mut v {
                m.remove("__key");
            }
            v
        })
        .ok_or_else(|| not_found(format!("Release bundle {name}:{version} not found")))
}

/// A bundle version of the Release Bundles repository the call names (`project` or
/// `repository_key`, else the platform's `release-bundles-v2`): a project's bundle is not
/// found without its project, as the Release Lifecycle Management APIs' common query
/// parameters say.
fn bundle_in(
    s: &Shared,
    name: &str,
    version: &str,
    q: &HashMap<String, String>,
) -> Result<Value, ApiError> {
    let b = bundle(s, name, version)?;
    let stored = b
        .get("repository_key")
        .and_then(Value::as_str)
        .unwrap_or("release-bundles-v2");
    if stored != bundles_repository(q) {
        return Err(not_found(format!(
            "Release bundle {name}:{version} not found"
        )));
    }
    Ok(b)
}

/// A non-negative integer query parameter, `default` when absent.
fn number(q: &HashMap<String, String>, k: &str, default: usize) -> Result<usize, ApiError> {
    match q.get(k) {
        None => Ok(default),
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("Invalid value '{v}' for {k}"))),
    }
}

fn text_of(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The versions of one bundle name as "Get Release Bundle v2 Versions" answers them: one page
/// of the versions of the named Release Bundles repository; 404 when the name has none there.
async fn bundle_versions(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(name): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let offset = number(&q, "offset", 0)?;
    // The largest page JFrog answers.
    let limit = number(&q, "limit", 25)?.clamp(1, 255);
    let order_by = q.get("order_by").map_or("created", String::as_str);
    if !matches!(
        order_by,
        "created" | "created_by" | "release_bundle_version"
    ) {
        return Err(ApiError::bad_request(format!(
            "Invalid order_by '{order_by}'"
        )));
    }
    let ascending = q.get("order_asc").is_some_and(|v| v == "true");
    let repository = bundles_repository(&q);
    let mut rows: Vec<Value> = s
        .collections
        .list_raw(BUNDLES.name)
        .unwrap_or_default()
        .into_iter()
        .filter(|b| text_of(b, "release_bundle_name") == name)
        .filter(|b| text_of(b, "repository_key") == repository)
        .map(|b| {
            let mut row = Map::new();
            for k in [
                "status",
                "repository_key",
                "release_bundle_name",
                "release_bundle_version",
                "service_id",
                "created_by",
                "created",
            ] {
                if let Some(v) = b.get(k) {
                    row.insert(k.to_string(), v.clone());
                }
            }
            Value::Object(row)
        })
        .collect();
    if rows.is_empty() {
        return Err(not_found(format!("Release bundle {name} not found")));
    }
    rows.sort_by(|a, b| {
        let o = text_of(a, order_by)
            .cmp(&text_of(b, order_by))
            .then_with(|| {
                text_of(a, "release_bundle_version").cmp(&text_of(b, "release_bundle_version"))
            });
        if ascending { o } else { o.reverse() }
    });
    let total = rows.len();
    let page: Vec<Value> = rows.into_iter().skip(offset).take(limit).collect();
    Ok(axum::Json(json!({
        "release_bundles": page,
        "total": total,
        "offset": offset,
        "limit": limit,
    }))
    .into_response())
}

/// The bundle names as "Get Release Bundle v2 Names" answers them: of every Release Bundles
/// repository, or of the one `repository_key` or `project` names.
async fn bundle_names(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let scoped = ["repository_key", "project"]
        .iter()
        .any(|k| q.get(*k).is_some_and(|v| !v.is_empty()));
    let only = scoped.then(|| bundles_repository(&q));
    let mut names: Vec<(String, String)> = s
        .collections
        .list_raw(BUNDLES.name)
        .unwrap_or_default()
        .iter()
        .map(|b| {
            (
                text_of(b, "repository_key"),
                text_of(b, "release_bundle_name"),
            )
        })
        .filter(|(r, _)| only.as_ref().is_none_or(|o| o == r))
        .collect();
    names.sort();
    names.dedup();
    let list: Vec<Value> = names
        .into_iter()
        .map(|(repository, name)| {
            let project = project_of(&repository).to_string();
            let project_name = if project == "default" {
                "Default".to_string()
            } else {
                project.clone()
            };
            json!({
                "repository_key": repository,
                "release_bundle_name": name,
                "project_key": project,
                "project_name": project_name,
            })
        })
        .collect();
    Ok(axum::Json(json!({"release_bundles": list})).into_response())
}

async fn bundle_read(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((name, version)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    Ok(axum::Json(bundle_in(&s, &name, &version, &q)?).into_response())
}

async fn bundle_delete(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((name, version)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    bundle_in(&s, &name, &version, &q)?;
    s.collections
        .delete_raw(BUNDLES.name, &bundle_key(&name, &version));
    for p in promotions(&s, &name, &version) {
        if let Some(k) = p.get("__key").and_then(Value::as_str) {
            s.collections.delete_raw(PROMOTIONS.name, k);
        }
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn promotions(s: &Shared, name: &str, version: &str) -> Vec<Value> {
    let prefix = format!("{}/", bundle_key(name, version));
    s.collections
        .list_raw(PROMOTIONS.name)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p.get("__key")
                .and_then(Value::as_str)
                .is_some_and(|k| k.starts_with(&prefix))
        })
        .collect()
}

async fn promotion_create(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    headers: HeaderMap,
    Path((name, version)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    signing_key(&headers)?;
    bundle_in(&s, &name, &version, &q)?;
    let b: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON: {e}")))?;
    let env = b
        .get("environment")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if env.is_empty() {
        return Err(ApiError::bad_request("environment is required"));
    }
    let mut millis = chrono::Utc::now().timestamp_millis();
    let existing = promotions(&s, &name, &version);
    while existing
        .iter()
        .any(|p| p.get("created_millis").and_then(Value::as_i64) == Some(millis))
    {
        millis += 1;
    }
    let record = json!({
        "release_bundle_name": name,
        "release_bundle_version": version,
        "environment": env,
        "included_repository_keys": b.get("included_repository_keys").cloned().unwrap_or(json!([])),
        "excluded_repository_keys": b.get("excluded_repository_keys").cloned().unwrap_or(json!([])),
        "status": "COMPLETED",
        "created": now(),
        "created_millis": millis,
    });
    s.collections.put_raw(
        PROMOTIONS.name,
        &format!("{}/{millis}", bundle_key(&name, &version)),
        record.clone(),
    );
    Ok((StatusCode::OK, axum::Json(record)).into_response())
}

async fn promotion_list(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((name, version)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    bundle_in(&s, &name, &version, &q)?;
    let list: Vec<Value> = promotions(&s, &name, &version)
        .into_iter()
        .map(|mut p| {
            if let Value::Object(m) = &mut p {
                m.remove("__key");
            }
            p
        })
        .collect();
    Ok(axum::Json(json!({"promotions": list, "total": list.len()})).into_response())
}

/// One promotion by its `created_millis`, as JFrog's Artifactory Terraform provider reads it
/// (`ReleaseBundleV2PromotionDetailsEndpoint` and `ReleaseBundleV2PromotionGetAPIModel` in
/// `resource_artifactory_release_bundle_v2_promotion.go`: `environment`, `created`,
/// `created_millis`; `TestAccReleaseBundleV2Promotion_full`).
async fn promotion_read(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((name, version, millis)): Path<(String, String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    bundle_in(&s, &name, &version, &q)?;
    let key = format!("{}/{millis}", bundle_key(&name, &version));
    let mut p = s
        .collections
        .get_raw(PROMOTIONS.name, &key)
        .ok_or_else(|| not_found(format!("Promotion {millis} of {name}:{version} not found")))?;
    if let Value::Object(m) = &mut p {
        m.remove("__key");
    }
    Ok(axum::Json(p).into_response())
}

async fn promotion_delete(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path((name, version, millis)): Path<(String, String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    bundle_in(&s, &name, &version, &q)?;
    let key = format!("{}/{millis}", bundle_key(&name, &version));
    if !s.collections.delete_raw(PROMOTIONS.name, &key) {
        return Err(not_found(format!(
            "Promotion {millis} of {name}:{version} not found"
        )));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The promotions of one environment as "Get Release Bundle v2 Versions in a Specific
/// Environment" answers them: each bundle version of the named Release Bundles repository
/// whose newest promotion is to `environment` (its current location), one page of them.
async fn promotions_by_environment(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(environment): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let number = |k: &str, default: usize| match q.get(k) {
        None => Ok(default),
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("Invalid value '{v}' for {k}"))),
    };
    let offset = number("offset", 0)?;
    // The largest page JFrog answers.
    let limit = number("limit", 25)?.clamp(1, 255);
    let order_by = q.get("order_by").map_or("created", String::as_str);
    if !matches!(
        order_by,
        "created" | "created_by" | "release_bundle_name" | "release_bundle_version" | "environment"
    ) {
        return Err(ApiError::bad_request(format!(
            "Invalid order_by '{order_by}'"
        )));
    }
    let ascending = q.get("order_asc").is_some_and(|v| v == "true");
    let repository = bundles_repository(&q);
    let text = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    // The newest promotion of each bundle version.
    let mut newest: HashMap<(String, String), Value> = HashMap::new();
    for p in s.collections.list_raw(PROMOTIONS.name).unwrap_or_default() {
        let at = |v: &Value| v.get("created_millis").and_then(Value::as_i64).unwrap_or(0);
        let version = (
            text(&p, "release_bundle_name"),
            text(&p, "release_bundle_version"),
        );
        if newest.get(&version).is_none_or(|n| at(n) < at(&p)) {
            newest.insert(version, p);
        }
    }
    let mut rows: Vec<Value> = newest
        .into_iter()
        .filter(|(_, p)| text(p, "environment") == environment)
        .filter_map(|((name, version), p)| {
            let b = bundle(&s, &name, &version).ok()?;
            (text(&b, "repository_key") == repository).then(|| {
                json!({
                    "repository_key": repository,
                    "release_bundle_name": name,
                    "release_bundle_version": version,
                    "environment": environment,
                    "created": p["created"],
                    "created_millis": p["created_millis"],
                    "created_by": "admin",
                    "project_key": project_of(&repository),
                })
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        let key = |v: &Value| match order_by {
            "created" => format!("{:020}", v["created_millis"].as_i64().unwrap_or(0)),
            k => text(v, k),
        };
        let o = key(a).cmp(&key(b)).then_with(|| {
            (
                text(a, "release_bundle_name"),
                text(a, "release_bundle_version"),
            )
                .cmp(&(
                    text(b, "release_bundle_name"),
                    text(b, "release_bundle_version"),
                ))
        });
        if ascending { o } else { o.reverse() }
    });
    let total = rows.len();
    let page: Vec<Value> = rows.into_iter().skip(offset).take(limit).collect();
    Ok(axum::Json(json!({
        "promotions": page,
        "total": total,
        "offset": offset,
        "limit": limit,
    }))
    .into_response())
}
