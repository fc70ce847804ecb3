//! The Artifactory repository API for all four classes and every package type `rules.rs` lists.
//!
//! | call | path | who | answer |
//! |---|---|---|---|
//! | create | `PUT /artifactory/api/repositories/{key}` | admin | 200 text `Successfully created repository '{key}'` |
//! | read | `GET /artifactory/api/repositories/{key}` | admin: full config; others: key, rclass, packageType, description, url | 200 JSON / 404 |
//! | update | `POST /artifactory/api/repositories/{key}` | admin | 200 text `Repository '{key}' update successful.` (partial update) |
//! | delete | `DELETE /artifactory/api/repositories/{key}` | admin | 200 text / 404 |
//! | list | `GET /artifactory/api/repositories?type=&packageType=&project=` | any user | `[{key,type,description,url,packageType}]` |
//! | federation config sync | `POST /artifactory/api/federation/configSync/{key}` | admin | 200 / 404 / 400 (not federated) |
//! | all configurations | `GET /artifactory/api/repositories/configurations` | admin | `{"LOCAL":[..],"REMOTE":[..],"VIRTUAL":[..],"FEDERATED":[..],"RELEASE_BUNDLE":[]}` |
//!
//! Behaviour is data-driven from `rules.rs` (members, types, defaults per class and package
//! type, written by hand from JFrog's sources) and `spec.rs` (server-side defaults, enums,
//! layouts); the rules are in `validate.rs`. Create, update and delete are configuration-descriptor writes (see
//! `crate::descriptor`): an invalid write is refused at once; a valid one takes
//! `write_latency` and fails with 500 "Could not merge and save new descriptor" when another
//! write committed meanwhile and the emulation is on.
//!
//! Write-only secrets: a remote repository's `password` (and sensitive `customHttpHeaders`
//! values) are stored in clear but answered only in an encrypted form (`JE2...`, a digest,
//! never the clear text), like Artifactory's encrypted-password answers.
//!
//! Deviations: the success texts and most 400 messages are paraphrases where JFrog's exact
//! wording was not verifiable; the list's `packageType` display names are a best effort;
//! a missing repository answers 404 by default; `SimConfig::missing_repository_status = 400`
//! reproduces the Artifactory versions that answer 400 (which is why the Terraform provider
//! treats 400 and 404 alike as "gone").

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::body::Bytes;
use axum::extract::{Path, Query, State as AxState};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::auth::{Admin, User};
use crate::errors::{ApiError, text};
use crate::server::Shared;

mod lag;
pub mod spec;
mod store;
#[rustfmt::skip]
mod rules;
pub(crate) mod validate;

use spec::RClass;
use store::{Repo, Store};

/// The repository state of the Artifactory service.
#[derive(Debug)]
pub(crate) struct State {
    store: RwLock<Store>,
    /// Status answered for a missing repository (404, or 400 as some Artifactory versions do).
    missing_status: AtomicU16,
    /// Read-after-write lag of the read APIs.
    pub(crate) lag: lag::Lag,
    /// Whether the YAML configuration patch takes the repository sections (a self-hosted
    /// platform does; a platform that does not answers 400 naming the section).
    yaml_repositories: AtomicBool,
}

impl Default for State {
    fn default() -> State {
        State {
            store: RwLock::default(),
            missing_status: AtomicU16::new(404),
            lag: lag::Lag::default(),
            yaml_repositories: AtomicBool::new(true),
        }
    }
}

impl State {
    pub(crate) fn set_missing_status(&self, status: u16) {
        let status = if status == 400 { 400 } else { 404 };
        self.missing_status.store(status, Ordering::Relaxed);
    }

    pub(crate) fn set_yaml_repositories(&self, on: bool) {
        self.yaml_repositories.store(on, Ordering::SeqCst);
    }

    pub(crate) fn yaml_repositories(&self) -> bool {
        self.yaml_repositories.load(Ordering::SeqCst)
    }

    pub(crate) fn missing_status(&self) -> u16 {
        self.missing_status.load(Ordering::Relaxed)
    }

    fn not_found(&self, key: &str) -> ApiError {
        let status = StatusCode::from_u16(self.missing_status()).unwrap_or(StatusCode::NOT_FOUND);
        ApiError::art(status, format!("Repository '{key}' not found"))
    }

    fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn repository_view(&self, key: &str) -> Option<Value> {
        self.read().get(key).map(|r| Value::Object(admin_view(r)))
    }

    pub(crate) fn repository_raw(&self, key: &str) -> Option<Value> {
        self.read()
            .get(key)
            .map(|r| Value::Object(r.config.clone()))
    }

    pub(crate) fn put_raw(&self, key: &str, config: Value) -> bool {
        let Value::Object(mut config) = config else {
            return false;
        };
        let Some(rclass) = config
            .get("rclass")
            .and_then(Value::as_str)
            .and_then(RClass::parse)
        else {
            return false;
        };
        let package_type = config
            .get("packageType")
            .and_then(Value::as_str)
            .unwrap_or("generic")
            .to_ascii_lowercase();
        config.insert("key".into(), Value::String(key.to_owned()));
        config.insert("packageType".into(), Value::String(package_type.clone()));
        self.write().insert(
            key,
            Repo {
                rclass,
                package_type,
                config,
            },
        );
        true
    }

    /// Every repository's stored configuration (secrets in clear), sorted by key.
    pub(crate) fn repositories_raw(&self) -> Vec<Value> {
        self.read()
            .iter()
            .map(|(_, r)| Value::Object(r.config.clone()))
            .collect()
    }

    pub(crate) fn delete_raw(&self, key: &str) -> bool {
        self.write().remove(key).is_some()
    }

    pub(crate) fn repository_count(&self) -> usize {
        self.read().len()
    }

    /// Attaches a repository to a project (or detaches it); false when it does not exist.
    pub(crate) fn set_project(&self, key: &str, project: Option<&str>) -> bool {
        let mut store = self.write();
        let Some(mut repo) = store.get(key).cloned() else {
            return false;
        };
        match project {
            Some(p) => {
                repo.config
                    .insert("projectKey".into(), Value::String(p.to_owned()));
                let empty = repo
                    .config
                    .get("environments")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
                if empty {
                    repo.config.insert("environments".into(), json!(["DEV"]));
                }
            }
            None => {
                // The environments stay (`TestAccRepository_unassign_project_key_gh_329`).
                repo.config.remove("projectKey");
            }
        }
        self.lag.record(key, store.get(key));
        store.insert(key, repo);
        true
    }
}

/// The repository sections of Artifactory's YAML configuration, by class.
pub(crate) const YAML_SECTIONS: [(&str, RClass); 4] = [
    ("localRepositories", RClass::Local),
    ("remoteRepositories", RClass::Remote),
    ("virtualRepositories", RClass::Virtual),
    ("federatedRepositories", RClass::Federated),
];

/// The repository entries of a YAML configuration patch, taken out of it: (class, key,
/// entry; `null` removes the repository). `Err` names a section that is not a map.
pub(crate) fn take_yaml_sections(
    patch: &mut Map<String, Value>,
) -> Result<Vec<(RClass, String, Value)>, ApiError> {
    let mut out = Vec::new();
    for (section, rclass) in YAML_SECTIONS {
        match patch.remove(section) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                out.extend(m.into_iter().map(|(k, v)| (rclass, k, v)));
            }
            Some(_) => {
                return Err(ApiError::bad_request(format!(
                    "Configuration section '{section}' must be a map from repository key to configuration"
                )));
            }
        }
    }
    Ok(out)
}

impl State {
    /// Applies the repository entries of a YAML configuration patch to a copy of the store,
    /// in order, all or nothing: the first invalid entry fails the whole patch with its key
    /// and the rule it breaks. An entry's members are the repository configuration JSON's,
    /// with `type` for the package type and the class given by its section; an existing key
    /// is updated as a `POST` would (merge), a new one created as a `PUT` would (the same
    /// validation and defaults, so both paths store the same configuration).
    pub(crate) fn apply_yaml(
        &self,
        entries: &[(RClass, String, Value)],
        base_url: &str,
        commit: bool,
    ) -> Result<(), ApiError> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut guard = self.write();
        // Applied in place, each change's previous state kept so that a failure (or a
        // validation pass) puts the store back as it was: copying the store per patch costs
        // what the whole store holds, for a patch of a few repositories.
        let mut undo = Undo::default();
        let applied = apply_entries(&mut guard, entries, base_url, &mut undo);
        if applied.is_err() || !commit {
            undo.roll_back(&mut guard);
            return applied;
        }
        for c in undo.changes.iter().filter(|c| c.entry) {
            self.lag.record(&c.key, c.previous.as_ref());
        }
        Ok(())
    }
}

/// The previous states of what a YAML patch changed, in the order it changed them.
#[derive(Default)]
struct Undo {
    changes: Vec<Change>,
}

/// One repository changed by a YAML patch.
struct Change {
    key: String,
    /// The repository before the change (`None`: new).
    previous: Option<Repo>,
    /// An entry of the patch, not a virtual repository a deletion edited.
    entry: bool,
}

impl Undo {
    fn push(&mut self, key: &str, previous: Option<Repo>, entry: bool) {
        self.changes.push(Change {
            key: key.to_owned(),
            previous,
            entry,
        });
    }

    /// Puts every change back, the last first.
    fn roll_back(self, store: &mut Store) {
        for c in self.changes.into_iter().rev() {
            match c.previous {
                Some(repo) => store.insert(&c.key, repo),
                None => {
                    store.remove(&c.key);
                }
            }
        }
    }
}

/// Applies a YAML patch's repository entries to `store` in order, recording each change in
/// `undo`; the first invalid entry stops it with its key and the rule it breaks.
fn apply_entries(
    store: &mut Store,
    entries: &[(RClass, String, Value)],
    base_url: &str,
    undo: &mut Undo,
) -> Result<(), ApiError> {
    for (rclass, key, entry) in entries {
        let named = |e: ApiError| {
            ApiError::new(
                e.flavor,
                e.status,
                format!("Repository '{key}': {}", e.message),
            )
        };
        if entry.is_null() {
            if let Some(previous) = store.get(key).cloned() {
                // Deleting a repository edits the virtual repositories that aggregate it.
                for v in store.aggregated_by(key) {
                    undo.push(&v, store.get(&v).cloned(), false);
                }
                store.remove(key);
                undo.push(key, Some(previous), true);
            }
            continue;
        }
        let Value::Object(m) = entry else {
            return Err(named(ApiError::bad_request(
                "the configuration must be a map",
            )));
        };
        let mut body = m.clone();
        if let Some(t) = body.remove("type") {
            body.insert("packageType".into(), t);
        }
        body.insert("rclass".into(), Value::String(rclass.as_str().to_owned()));
        let (repo, previous) = match store.get(key) {
            Some(existing) => {
                if existing.rclass != *rclass {
                    return Err(named(ApiError::bad_request(format!(
                        "the repository is {}, not {}",
                        existing.rclass.as_str(),
                        rclass.as_str()
                    ))));
                }
                let repo = validate::update(store, key, Value::Object(body), existing, base_url)
                    .map_err(named)?;
                (repo, Some(existing.clone()))
            }
            None => {
                let repo =
                    validate::create(store, key, Value::Object(body), base_url).map_err(named)?;
                (repo, None)
            }
        };
        store.insert(key, repo);
        undo.push(key, previous, true);
    }
    Ok(())
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/artifactory/api/federation/configSync/{key}",
            post(config_sync),
        )
        .route("/artifactory/api/repositories", get(list))
        // JFrog's Artifactory Terraform provider lists with the trailing slash
        // (`datasource_artifactory_repositories.go`, `artifactory/api/repositories/`).
        .route("/artifactory/api/repositories/", get(list))
        .route(
            "/artifactory/api/repositories/configurations",
            get(configurations),
        )
        .route(
            "/artifactory/api/repositories/{key}",
            get(read_one).put(create).post(update).delete(delete),
        )
}

/// The encrypted form Artifactory answers instead of a secret (never the clear text).
fn encrypted(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    format!(
        "JE2{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(&digest[..24])
    )
}

/// The configuration as an admin reads it: secrets encrypted.
fn admin_view(repo: &Repo) -> Map<String, Value> {
    let mut c = repo.config.clone();
    if let Some(Value::String(p)) = c.get_mut("password") {
        *p = encrypted(p);
    }
    if let Some(Value::Array(headers)) = c.get_mut("customHttpHeaders") {
        for h in headers.iter_mut().filter_map(Value::as_object_mut) {
            if h.get("sensitive").and_then(Value::as_bool) == Some(true)
                && let Some(Value::String(v)) = h.get_mut("value")
            {
                *v = encrypted(v);
            }
        }
    }
    c
}

/// The partial configuration a non-admin user reads.
fn user_view(repo: &Repo) -> Map<String, Value> {
    ["key", "rclass", "packageType", "description", "url"]
        .iter()
        .filter_map(|k| repo.config.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect()
}

/// Checks the media type (Artifactory consumes `application/json` and its
/// `application/vnd.org.jfrog...+json` variants only) and parses the body.
fn parse_body(headers: &HeaderMap, body: &Bytes) -> Result<Value, ApiError> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    let json = media.as_deref().is_some_and(|m| {
        m == "application/json" || (m.starts_with("application/vnd.") && m.ends_with("+json"))
    });
    if !json {
        return Err(ApiError::art(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type",
        ));
    }
    // serde_json's syntax errors carry positions, never the body's content.
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("Could not parse the request body as JSON: {e}"))
    })
}

async fn read_one(
    AxState(s): AxState<Arc<Shared>>,
    User(caller): User,
    Path(key): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let repo = match s.artifactory.lag.stale_one(&key) {
        Some(previous) => previous,
        None => s.artifactory.read().get(&key).cloned(),
    };
    let repo = repo.ok_or_else(|| s.artifactory.not_found(&key))?;
    let view = if caller.admin {
        admin_view(&repo)
    } else {
        user_view(&repo)
    };
    Ok(Json(Value::Object(view)))
}

async fn create(
    AxState(s): AxState<Arc<Shared>>,
    _admin: Admin,
    Path(key): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let value = parse_body(&headers, &body)?;
    // Validation answers at once; only a valid write spends the descriptor-save time (and is
    // validated again on commit, against the descriptor it merges into).
    let base = crate::services::artifactory::system::url_base(&s);
    validate::create(&s.artifactory.read(), &key, value.clone(), &base)?;
    let ticket = s.descriptor.begin().await;
    s.descriptor.commit(ticket, || {
        let mut store = s.artifactory.write();
        let repo = validate::create(&store, &key, value, &base)?;
        store.insert(&key, repo);
        s.artifactory.lag.record(&key, None);
        Ok(())
    })?;
    tracing::debug!(%key, "repository created");
    Ok(text(
        StatusCode::OK,
        format!("Successfully created repository '{key}'"),
    ))
}

async fn update(
    AxState(s): AxState<Arc<Shared>>,
    _admin: Admin,
    Path(key): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let value = parse_body(&headers, &body)?;
    let base = crate::services::artifactory::system::url_base(&s);
    {
        let store = s.artifactory.read();
        let existing = store
            .get(&key)
            .ok_or_else(|| s.artifactory.not_found(&key))?;
        validate::update(&store, &key, value.clone(), existing, &base)?;
    }
    let ticket = s.descriptor.begin().await;
    s.descriptor.commit(ticket, || {
        let mut store = s.artifactory.write();
        let existing = store
            .get(&key)
            .ok_or_else(|| s.artifactory.not_found(&key))?;
        let repo = validate::update(&store, &key, value, existing, &base)?;
        s.artifactory.lag.record(&key, Some(existing));
        store.insert(&key, repo);
        Ok(())
    })?;
    tracing::debug!(%key, "repository updated");
    Ok(text(
        StatusCode::OK,
        format!("Repository '{key}' update successful."),
    ))
}

async fn delete(
    AxState(s): AxState<Arc<Shared>>,
    _admin: Admin,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    if s.artifactory.read().get(&key).is_none() {
        return Err(s.artifactory.not_found(&key));
    }
    let ticket = s.descriptor.begin().await;
    let removed = s.descriptor.commit(ticket, || {
        let removed = s
            .artifactory
            .write()
            .remove(&key)
            .ok_or_else(|| s.artifactory.not_found(&key))?;
        s.artifactory.lag.record(&key, Some(&removed));
        Ok(removed)
    })?;
    crate::services::security::forget_replications(&s, &key);
    tracing::debug!(%key, "repository deleted");
    let msg = if removed.rclass == RClass::Virtual {
        format!("Repository '{key}' has been removed successfully.")
    } else {
        format!("Repository '{key}' and all its content have been removed successfully.")
    };
    Ok(text(StatusCode::OK, msg))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    #[serde(rename = "type")]
    rtype: Option<String>,
    package_type: Option<String>,
    project: Option<String>,
}

async fn list(
    AxState(s): AxState<Arc<Shared>>,
    _user: User,
    Query(q): Query<ListQuery>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let rclass = match q.rtype.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        // Distribution repositories exist in JFrog but not in the simulator: none to list.
        Some(t) if t.eq_ignore_ascii_case("distribution") => return Ok(Json(Vec::new())),
        Some(t) => Some(RClass::parse(t).ok_or_else(|| {
            ApiError::bad_request(format!(
                "Invalid repository type '{t}': expected one of local, remote, virtual, federated, distribution"
            ))
        })?),
    };
    // `yum` is the historical name of the rpm package type.
    let package_type = q
        .package_type
        .filter(|p| !p.is_empty())
        .map(|p| p.to_ascii_lowercase())
        .map(|p| if p == "yum" { "rpm".to_owned() } else { p });
    let project = q.project.filter(|p| !p.is_empty());
    let stale = s.artifactory.lag.stale_all();
    let store = s.artifactory.read();
    let repos = visible(&store, &stale);
    let mut out = Vec::new();
    for class in RClass::ALL {
        if rclass.is_some_and(|c| c != class) {
            continue;
        }
        for &(key, repo) in &repos {
            if repo.rclass != class
                || package_type
                    .as_deref()
                    .is_some_and(|p| p != repo.package_type)
                || project
                    .as_deref()
                    .is_some_and(|p| repo.project_key() != Some(p))
            {
                continue;
            }
            let url = match (class, repo.config.get("url").and_then(Value::as_str)) {
                (RClass::Remote, Some(u)) => u.to_owned(),
                _ => format!("{}/artifactory/{key}", s.base_url),
            };
            let mut item = Map::new();
            item.insert("key".into(), Value::String(key.to_owned()));
            item.insert("type".into(), Value::String(class.upper().to_owned()));
            let description = repo
                .config
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            item.insert("description".into(), Value::String(description.to_owned()));
            item.insert("url".into(), Value::String(url));
            item.insert(
                "packageType".into(),
                Value::String(spec::display_package_type(&repo.package_type)),
            );
            out.push(Value::Object(item));
        }
    }
    Ok(Json(out))
}

/// The repositories the read APIs show, sorted by key: the current ones, with the stale
/// entries of the read-after-write lag in their previous state.
fn visible<'a>(
    store: &'a Store,
    stale: &'a HashMap<String, Option<Repo>>,
) -> Vec<(&'a str, &'a Repo)> {
    if stale.is_empty() {
        return store.iter().map(|(k, r)| (k.as_str(), r)).collect();
    }
    let mut merged: BTreeMap<&str, &Repo> = store
        .iter()
        .filter(|(k, _)| !stale.contains_key(k.as_str()))
        .map(|(k, r)| (k.as_str(), r))
        .collect();
    for (k, previous) in stale {
        if let Some(r) = previous {
            merged.insert(k.as_str(), r);
        }
    }
    merged.into_iter().collect()
}

/// `GET /artifactory/api/repositories/configurations`: every repository's configuration by
/// class, joined from the store's serialised configurations (a stale entry of the
/// read-after-write lag is serialised from its previous state).
async fn configurations(AxState(s): AxState<Arc<Shared>>, _admin: Admin) -> Response {
    let stale = s.artifactory.lag.stale_all();
    let store = s.artifactory.read();
    let body = configurations_json(&store, &stale);
    drop(store);
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The configurations list's body: `{"LOCAL":[..],"REMOTE":[..],"VIRTUAL":[..],
/// "FEDERATED":[..],"RELEASE_BUNDLE":[]}`, each class's repositories sorted by key.
fn configurations_json(store: &Store, stale: &HashMap<String, Option<Repo>>) -> String {
    let repos = visible(store, stale);
    let rendered: Vec<(RClass, Arc<str>)> = repos
        .iter()
        .map(|&(key, r)| {
            let json = match store.admin_json(key) {
                Some(j) if !stale.contains_key(key) => j.clone(),
                _ => store::render(r),
            };
            (r.rclass, json)
        })
        .collect();
    let mut out =
        String::with_capacity(rendered.iter().map(|(_, j)| j.len() + 1).sum::<usize>() + 128);
    out.push('{');
    for class in RClass::ALL {
        out.push('"');
        out.push_str(class.upper());
        out.push_str("\":[");
        let mut first = true;
        for (_, json) in rendered.iter().filter(|(c, _)| *c == class) {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(json);
        }
        out.push_str("],");
    }
    out.push_str("\"RELEASE_BUNDLE\":[]}");
    out
}

/// `POST /artifactory/api/federation/configSync/{key}`: synchronises a federated
/// repository's configuration to its members (a no-op here beyond the checks).
async fn config_sync(
    AxState(s): AxState<Arc<Shared>>,
    _admin: Admin,
    Path(key): Path<String>,
) -> Result<StatusCode, ApiError> {
    let store = s.artifactory.read();
    let repo = store
        .get(&key)
        .ok_or_else(|| s.artifactory.not_found(&key))?;
    if repo.rclass != RClass::Federated {
        return Err(ApiError::bad_request(format!(
            "Repository '{key}' is not a federated repository"
        )));
    }
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(rclass: RClass, key: &str, extra: Value) -> Repo {
        let mut config = Map::new();
        config.insert("key".into(), json!(key));
        config.insert("rclass".into(), json!(rclass.as_str()));
        config.insert("packageType".into(), json!("generic"));
        if let Value::Object(m) = extra {
            config.extend(m);
        }
        Repo {
            rclass,
            package_type: "generic".into(),
            config,
        }
    }

    /// The list as built from each visible repository's admin view, object by object.
    fn expected(store: &Store, stale: &HashMap<String, Option<Repo>>) -> Value {
        let repos = visible(store, stale);
        let mut groups = Map::new();
        for class in RClass::ALL {
            let items: Vec<Value> = repos
                .iter()
                .filter(|(_, r)| r.rclass == class)
                .map(|(_, r)| Value::Object(admin_view(r)))
                .collect();
            groups.insert(class.upper().to_owned(), Value::Array(items));
        }
        groups.insert("RELEASE_BUNDLE".to_owned(), json!([]));
        Value::Object(groups)
    }

    fn listed(store: &Store, stale: &HashMap<String, Option<Repo>>) -> Value {
        serde_json::from_str(&configurations_json(store, stale)).expect("valid JSON")
    }

    #[test]
    fn the_configurations_list_follows_every_change_of_the_store() {
        let mut store = Store::default();
        let none = HashMap::new();
        assert_eq!(
            configurations_json(&store, &none),
            r#"{"LOCAL":[],"REMOTE":[],"VIRTUAL":[],"FEDERATED":[],"RELEASE_BUNDLE":[]}"#
        );
        store.insert("b-local", repo(RClass::Local, "b-local", json!({})));
        store.insert("a-local", repo(RClass::Local, "a-local", json!({})));
        store.insert(
            "remote",
            repo(
                RClass::Remote,
                "remote",
                json!({"url": "https://example.org/", "password": "s3cret",
                       "customHttpHeaders": [{"name": "X", "value": "v", "sensitive": true}]}),
            ),
        );
        store.insert(
            "virtual",
            repo(
                RClass::Virtual,
                "virtual",
                json!({"repositories": ["a-local", "b-local"], "defaultDeploymentRepo": "a-local"}),
            ),
        );
        let list = listed(&store, &none);
        assert_eq!(list, expected(&store, &none));
        let text = configurations_json(&store, &none);
        assert!(!text.contains("s3cret") && text.contains("JE2"), "{text}");
        assert_eq!(list["LOCAL"][0]["key"], "a-local", "sorted by key");

        // A replaced repository, and a member removed from the virtual repository that
        // aggregates it: both answered as they are now.
        store.insert(
            "b-local",
            repo(RClass::Local, "b-local", json!({"description": "changed"})),
        );
        store.remove("a-local");
        let list = listed(&store, &none);
        assert_eq!(list, expected(&store, &none));
        assert_eq!(list["LOCAL"][0]["description"], "changed");
        assert_eq!(list["VIRTUAL"][0]["repositories"], json!(["b-local"]));
        assert!(list["VIRTUAL"][0].get("defaultDeploymentRepo").is_none());

        // The read-after-write lag: a stale entry answers its previous state, a repository
        // created within the lag is not listed yet.
        let mut stale = HashMap::new();
        stale.insert(
            "b-local".to_owned(),
            Some(repo(
                RClass::Local,
                "b-local",
                json!({"description": "before"}),
            )),
        );
        store.insert("c-new", repo(RClass::Local, "c-new", json!({})));
        stale.insert("c-new".to_owned(), None);
        let list = listed(&store, &stale);
        assert_eq!(list, expected(&store, &stale));
        assert_eq!(list["LOCAL"][0]["description"], "before");
        assert_eq!(list["LOCAL"].as_array().map(Vec::len), Some(1));
    }
}
