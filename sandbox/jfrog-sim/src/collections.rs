//! The generic collection service: a keyed store per JFrog object family, generic CRUD and list
//! handlers, server-assigned IDs, per-collection validation hooks, and direct ("made in JFrog")
//! access for the admin API.
//!
//! A family declares *what* differs and nothing else:
//!
//! - a [`Declaration`]: the collection's name (used by the admin API), its key field and key
//!   case rule, where keys come from ([`Ids`]: the body, a counter or a UUID), the service's
//!   error flavour and wording, a `validate` hook (JSON body in, normalised object or a
//!   JFrog-style [`ApiError`] out) and a `view` hook (what a read answers: write-only secrets
//!   removed or masked);
//! - a [`Binding`]: the REST paths and status codes of its create, list, read, replace and
//!   delete calls, turned into axum routes by [`Binding::routes`].
//!
//! The routes are ordinary service routes: they go through the server's pipeline, so request
//! counts (`"POST /event/api/v1/subscriptions"`) and every fault (latency, 5xx, 429 with
//! `Retry-After`, a create applied whose answer is lost) apply to them like to the others.
//!
//! Collections without generic routes (stores written by hand-written handlers) still exist for
//! the admin API. Proxies are not a collection: they are the system configuration descriptor's
//! (`Ctx::proxy_exists`), the platform's one proxy store.
//!
//! Locking: each collection has its own mutex; a validation hook may read other collections
//! through [`Ctx`] (never its own: the write path re-checks existence under the lock).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use serde_json::{Map, Value};

use crate::auth::User;
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

/// How keys compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyCase {
    /// `Abc` and `abc` are two objects.
    Sensitive,
    /// `Abc` and `abc` are the same object; the spelling of the create is kept.
    Insensitive,
}

/// Where an object's key comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ids {
    /// The client names the object: the body's key field (or the path, for create-by-PUT).
    Body,
    /// The server assigns 1, 2, 3... stored as a JSON number in the key field.
    Counter,
    /// The server assigns 1, 2, 3... stored as a JSON string in the key field (Xray's custom
    /// curation conditions: JFrog's REST docs type the created condition's `id` as a string).
    CounterText,
    /// The server assigns a random UUID string stored in the key field.
    Uuid,
}

/// Create, replace or a direct admin write.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op<'a> {
    Create,
    /// Replace of the object stored under `key` (the stored object is `existing`).
    Update {
        key: &'a str,
        existing: &'a Value,
    },
}

/// What a validation hook may look at besides the body.
pub(crate) struct Ctx<'a> {
    /// The system configuration descriptor's sections (the one store of proxies).
    pub(crate) descriptor: &'a Mutex<Value>,
}

impl Ctx<'_> {
    /// Whether the system configuration descriptor has a proxy with this key (the proxies of
    /// `GET/PATCH /artifactory/api/system/configuration`: one proxy store for remote
    /// repositories, webhook handlers and the descriptor).
    pub(crate) fn proxy_exists(&self, key: &str) -> bool {
        self.descriptor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pointer(&format!(
                "/proxies/{}",
                key.replace('~', "~0").replace('/', "~1")
            ))
            .is_some_and(|p| !p.is_null())
    }
}

/// A validation hook: the request body in, the object to store (normalised, defaults filled
/// in) or the error JFrog answers.
pub(crate) type Validate = fn(&Ctx<'_>, Value, Op<'_>) -> Result<Value, ApiError>;

/// A read hook: the stored object in, what a read answers out.
pub(crate) type View = fn(&Value) -> Value;

/// A collection's declaration.
#[derive(Debug)]
pub(crate) struct Declaration {
    /// Name in the admin API (`/__sim/collections/{name}`), e.g. `event_subscriptions`.
    pub name: &'static str,
    /// The body member holding the key (or the server-assigned ID).
    pub key_field: &'static str,
    pub key_case: KeyCase,
    pub ids: Ids,
    /// Error body format of the service.
    pub flavor: Flavor,
    /// Status and message of a read, replace or delete of a missing object.
    pub not_found: fn(&str) -> (StatusCode, String),
    /// Status and message of a create whose key exists.
    pub exists: fn(&str) -> (StatusCode, String),
    pub validate: Validate,
    pub view: View,
}

/// Accepts any JSON object as is.
pub(crate) fn accept_object(_: &Ctx<'_>, body: Value, _: Op<'_>) -> Result<Value, ApiError> {
    match body {
        Value::Object(_) => Ok(body),
        _ => Err(ApiError::new(
            Flavor::Artifactory,
            StatusCode::BAD_REQUEST,
            "The request body must be a JSON object",
        )),
    }
}

/// Answers the stored object as is.
pub(crate) fn as_stored(v: &Value) -> Value {
    v.clone()
}

/// A stored object with the key as created.
#[derive(Debug, Clone)]
struct Entry {
    key: String,
    value: Value,
}

/// One collection's objects.
#[derive(Debug)]
pub(crate) struct Store {
    decl: &'static Declaration,
    /// Normalised key (lower case for [`KeyCase::Insensitive`]) -> entry; sorted, so lists are
    /// stable.
    objects: BTreeMap<String, Entry>,
    next_id: u64,
}

impl Store {
    fn norm(&self, key: &str) -> String {
        match self.decl.key_case {
            KeyCase::Sensitive => key.to_owned(),
            KeyCase::Insensitive => key.to_lowercase(),
        }
    }

    /// The stored object under `key` (following the case rule).
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.objects.get(&self.norm(key)).map(|e| &e.value)
    }

    /// The key as created, of the object stored under `key`.
    fn spelled(&self, key: &str) -> Option<&str> {
        self.objects.get(&self.norm(key)).map(|e| e.key.as_str())
    }

    /// Stores `value` under `key`, writing the key into the key field. A replace keeps the
    /// spelling of the create.
    fn put(&mut self, key: &str, mut value: Value) {
        let norm = self.norm(key);
        let spelled = self
            .objects
            .get(&norm)
            .map_or_else(|| key.to_owned(), |e| e.key.clone());
        if let Value::Object(m) = &mut value {
            let id = match (self.decl.ids, spelled.parse::<u64>()) {
                (Ids::Counter, Ok(n)) => Value::from(n),
                _ => Value::String(spelled.clone()),
            };
            m.insert(self.decl.key_field.to_owned(), id);
        }
        if matches!(self.decl.ids, Ids::Counter | Ids::CounterText)
            && let Ok(n) = spelled.parse::<u64>()
        {
            self.next_id = self.next_id.max(n);
        }
        self.objects.insert(
            norm,
            Entry {
                key: spelled,
                value,
            },
        );
    }

    fn remove(&mut self, key: &str) -> Option<Value> {
        let norm = self.norm(key);
        self.objects.remove(&norm).map(|e| e.value)
    }

    fn assign_id(&mut self) -> String {
        match self.decl.ids {
            Ids::Counter | Ids::CounterText => {
                self.next_id += 1;
                self.next_id.to_string()
            }
            _ => uuid::Uuid::new_v4().to_string(),
        }
    }

    /// All stored objects, sorted by key.
    pub(crate) fn values(&self) -> Vec<Value> {
        self.objects.values().map(|e| e.value.clone()).collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.objects.len()
    }
}

/// All collections, created once from the services' declarations.
#[derive(Debug)]
pub(crate) struct Collections {
    stores: HashMap<&'static str, Mutex<Store>>,
}

/// A locked collection.
pub(crate) struct Locked<'a>(MutexGuard<'a, Store>);

impl std::ops::Deref for Locked<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.0
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.0
    }
}

/// A handle on one collection.
pub(crate) struct Handle<'a>(&'a Mutex<Store>);

impl<'a> Handle<'a> {
    pub(crate) fn lock(&self) -> Locked<'a> {
        Locked(
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl Collections {
    pub(crate) fn new(decls: &[&'static Declaration]) -> Collections {
        let stores = decls
            .iter()
            .map(|d| {
                (
                    d.name,
                    Mutex::new(Store {
                        decl: d,
                        objects: BTreeMap::new(),
                        next_id: 0,
                    }),
                )
            })
            .collect();
        Collections { stores }
    }

    pub(crate) fn get(&self, name: &str) -> Option<Handle<'_>> {
        self.stores.get(name).map(Handle)
    }

    /// The declared collection names, sorted.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.stores.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Stores an object directly (no validation, no counts, no faults): "a change made in
    /// JFrog". For collections with server-assigned IDs the key is the ID. False when the
    /// collection does not exist or the value is not an object.
    pub(crate) fn put_raw(&self, name: &str, key: &str, value: Value) -> bool {
        let Some(h) = self.get(name) else {
            return false;
        };
        if !value.is_object() {
            return false;
        }
        h.lock().put(key, value);
        true
    }

    pub(crate) fn get_raw(&self, name: &str, key: &str) -> Option<Value> {
        self.get(name)?.lock().get(key).cloned()
    }

    pub(crate) fn delete_raw(&self, name: &str, key: &str) -> bool {
        self.get(name)
            .is_some_and(|h| h.lock().remove(key).is_some())
    }

    /// The next server-assigned ID of a collection (for families with their own routes).
    pub(crate) fn next_id(&self, name: &str) -> Option<String> {
        self.get(name).map(|h| h.lock().assign_id())
    }

    pub(crate) fn count(&self, name: &str) -> Option<usize> {
        self.get(name).map(|h| h.lock().len())
    }

    pub(crate) fn list_raw(&self, name: &str) -> Option<Vec<Value>> {
        self.get(name).map(|h| h.lock().values())
    }

    /// Removes every object of a collection; false when it does not exist.
    pub(crate) fn clear(&self, name: &str) -> bool {
        self.get(name).is_some_and(|h| {
            h.lock().objects.clear();
            true
        })
    }
}

/// One page of a paged list: the listed views and the request's query parameters.
pub(crate) type PageFn = fn(Vec<Value>, &HashMap<String, String>) -> Result<Value, ApiError>;

/// How a binding's list answers.
#[derive(Clone, Copy)]
enum Lister {
    /// Every object, in this shape.
    Shaped(fn(Vec<Value>) -> Value),
    /// One page for the query.
    Paged(PageFn),
}

/// What a write through [`Binding::routes_listed_then`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    Created,
    Updated,
    Deleted,
}

/// How a create is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CreateAnswer {
    /// No body.
    Empty,
    /// The object as a read answers it (server-assigned ID included).
    Object,
    /// `{"<key field>": <key or ID>}`.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "no JFrog family answers so yet; the tests cover the shape"
        )
    )]
    Id,
}

/// What a successful replace (`PUT` on the item path) answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateAnswer {
    /// No body.
    Empty,
    /// The object as a read answers it (Xray's curation policies and conditions: JFrog's
    /// Xray Terraform provider reads the replaced object, its `id` included, from the answer).
    Object,
}

/// Who may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Any authenticated caller.
    User,
    /// Admin credentials (403 otherwise).
    Admin,
}

/// The REST binding of a collection: paths and status codes.
#[derive(Debug)]
pub(crate) struct Binding {
    pub decl: &'static Declaration,
    /// List (`GET`) and create (`POST`) path, e.g. `/event/api/v1/subscriptions`.
    pub base: &'static str,
    /// Read, replace and delete path with a `{key}` segment.
    pub item: &'static str,
    pub create_status: StatusCode,
    pub create_answer: CreateAnswer,
    pub update_status: StatusCode,
    pub update_answer: UpdateAnswer,
    pub delete_status: StatusCode,
    pub read_access: Access,
    pub write_access: Access,
}

impl Binding {
    /// The axum routes of this binding: `GET`/`POST` on `base`, `GET`/`PUT`/`DELETE` on `item`.
    pub(crate) fn routes(&'static self) -> Router<Arc<Shared>> {
        self.routes_listed(Value::Array)
    }

    /// [`Binding::routes`] whose list answer is `shape` of the listed views (JFrog's
    /// `{"groups": [...]}`, a SCIM `ListResponse`).
    pub(crate) fn routes_listed(
        &'static self,
        shape: fn(Vec<Value>) -> Value,
    ) -> Router<Arc<Shared>> {
        self.routes_listed_then(shape, |_, _, _| {})
    }

    /// [`Binding::routes_listed`] calling `after` with the key of every object a create,
    /// update or delete through them wrote (to keep another store in step, e.g. a group's
    /// members in its users).
    pub(crate) fn routes_listed_then(
        &'static self,
        shape: fn(Vec<Value>) -> Value,
        after: fn(&Shared, &str, Written),
    ) -> Router<Arc<Shared>> {
        self.routes_lister_then(Lister::Shaped(shape), after)
    }

    /// [`Binding::routes_listed_then`] for a list JFrog pages: `page` answers one page of
    /// the listed views for the request's query parameters (see `crate::paging`).
    pub(crate) fn routes_paged_then(
        &'static self,
        page: PageFn,
        after: fn(&Shared, &str, Written),
    ) -> Router<Arc<Shared>> {
        self.routes_lister_then(Lister::Paged(page), after)
    }

    fn routes_lister_then(
        &'static self,
        lister: Lister,
        after: fn(&Shared, &str, Written),
    ) -> Router<Arc<Shared>> {
        let base: MethodRouter<Arc<Shared>> =
            get(
                move |s: State<Arc<Shared>>,
                      a: Caller,
                      Query(q): Query<HashMap<String, String>>| async move {
                    match lister {
                        Lister::Shaped(shape) => self.list_shaped(&s, a, shape).await,
                        Lister::Paged(page) => self.list_paged(&s, a, &q, page).await,
                    }
                },
            )
            .post(
                move |s: State<Arc<Shared>>, a: Caller, body: Bytes| async move {
                    let (key, created) = self.create_keyed(&s, a, &body).await?;
                    after(&s, &key, Written::Created);
                    Ok::<Response, ApiError>(created)
                },
            );
        let item: MethodRouter<Arc<Shared>> = get(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>| async move {
                self.read(&s, a, &key).await
            },
        )
        .put(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>, body: Bytes| async move {
                let updated = self.update(&s, a, &key, &body).await?;
                after(&s, &key, Written::Updated);
                Ok::<Response, ApiError>(updated)
            },
        )
        .delete(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>| async move {
                let deleted = self.delete(&s, a, &key).await?;
                after(&s, &key, Written::Deleted);
                Ok::<Response, ApiError>(deleted)
            },
        );
        Router::new().route(self.base, base).route(self.item, item)
    }

    /// The routes of a family whose create is a `POST` on the item path (Artifactory's
    /// cleanup and archive policies): the key comes from the path into the key field; `GET`
    /// on `base` lists.
    pub(crate) fn routes_create_on_item(&'static self) -> Router<Arc<Shared>> {
        let item: MethodRouter<Arc<Shared>> = get(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>| async move {
                self.read(&s, a, &key).await
            },
        )
        .post(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>, body: Bytes| async move {
                let mut v = self.parse(&body)?;
                if let Value::Object(m) = &mut v {
                    m.insert(self.decl.key_field.to_owned(), Value::String(key));
                }
                self.create(&s, a, &Bytes::from(v.to_string())).await
            },
        )
        .put(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>, body: Bytes| async move {
                self.update(&s, a, &key, &body).await
            },
        )
        .delete(
            move |s: State<Arc<Shared>>, a: Caller, Path(key): Path<String>| async move {
                self.delete(&s, a, &key).await
            },
        );
        let base: MethodRouter<Arc<Shared>> =
            get(move |s: State<Arc<Shared>>, a: Caller| async move { self.list(&s, a).await });
        Router::new().route(self.base, base).route(self.item, item)
    }

    /// A `PUT` on `path` that replaces the object named by the body's key field, and a `POST`
    /// on it that creates (the Access service's LDAP settings and groups are written on the
    /// collection path with a trailing slash, `access/api/v1/ldap/settings/` and
    /// `.../ldap/groups/`: JFrog's Artifactory Terraform provider's `LdapEndpoint` and
    /// `LdapGroupEndpoint`, both `Post` and `Put`).
    pub(crate) fn update_by_body(&'static self, path: &'static str) -> Router<Arc<Shared>> {
        let create = move |s: State<Arc<Shared>>, a: Caller, body: Bytes| async move {
            self.create(&s, a, &body).await
        };
        let put: MethodRouter<Arc<Shared>> = axum::routing::put(
            move |s: State<Arc<Shared>>, a: Caller, body: Bytes| async move {
                let v = self.parse(&body)?;
                let key = match v.get(self.decl.key_field) {
                    Some(Value::String(k)) => k.clone(),
                    _ => {
                        return Err(self.err(
                            StatusCode::BAD_REQUEST,
                            format!("{} is required", self.decl.key_field),
                        ));
                    }
                };
                self.update(&s, a, &key, &body).await
            },
        );
        Router::new().route(path, put.post(create))
    }

    fn err(&self, status: StatusCode, msg: impl Into<String>) -> ApiError {
        ApiError::new(self.decl.flavor, status, msg)
    }

    fn check(&self, caller: &Caller, access: Access) -> Result<(), ApiError> {
        match (access, caller) {
            (Access::User, _) | (Access::Admin, Caller::Admin) => Ok(()),
            (Access::Admin, Caller::User(flavor)) => {
                Err(ApiError::new(*flavor, StatusCode::FORBIDDEN, "Forbidden"))
            }
        }
    }

    fn parse(&self, body: &Bytes) -> Result<Value, ApiError> {
        // serde_json's syntax errors carry positions, never the body's content.
        serde_json::from_slice(body).map_err(|e| {
            self.err(
                StatusCode::BAD_REQUEST,
                format!("Could not parse the request body as JSON: {e}"),
            )
        })
    }

    fn not_found(&self, key: &str) -> ApiError {
        let (status, msg) = (self.decl.not_found)(key);
        self.err(status, msg)
    }

    fn store<'a>(&self, s: &'a Shared) -> Handle<'a> {
        s.collections
            .get(self.decl.name)
            .unwrap_or_else(|| unreachable!("collection {} is declared", self.decl.name))
    }

    pub(crate) async fn list(&self, s: &Shared, caller: Caller) -> Result<Response, ApiError> {
        self.list_shaped(s, caller, Value::Array).await
    }

    pub(crate) async fn list_shaped(
        &self,
        s: &Shared,
        caller: Caller,
        shape: fn(Vec<Value>) -> Value,
    ) -> Result<Response, ApiError> {
        self.check(&caller, self.read_access)?;
        Ok(axum::Json(shape(self.views(s))).into_response())
    }

    /// One page of the list, as `page` answers it for the request's `query`.
    pub(crate) async fn list_paged(
        &self,
        s: &Shared,
        caller: Caller,
        query: &HashMap<String, String>,
        page: PageFn,
    ) -> Result<Response, ApiError> {
        self.check(&caller, self.read_access)?;
        Ok(axum::Json(page(self.views(s), query)?).into_response())
    }

    /// Every stored object as a read answers it.
    fn views(&self, s: &Shared) -> Vec<Value> {
        self.store(s)
            .lock()
            .objects
            .values()
            .map(|e| (self.decl.view)(&e.value))
            .collect()
    }

    pub(crate) async fn read(
        &self,
        s: &Shared,
        caller: Caller,
        key: &str,
    ) -> Result<Response, ApiError> {
        self.check(&caller, self.read_access)?;
        let store = self.store(s);
        let store = store.lock();
        let v = store.get(key).ok_or_else(|| self.not_found(key))?;
        Ok(self.object_answer(StatusCode::OK, v))
    }

    pub(crate) async fn create(
        &self,
        s: &Shared,
        caller: Caller,
        body: &Bytes,
    ) -> Result<Response, ApiError> {
        Ok(self.create_keyed(s, caller, body).await?.1)
    }

    /// [`Binding::create`], with the key the object was stored under.
    pub(crate) async fn create_keyed(
        &self,
        s: &Shared,
        caller: Caller,
        body: &Bytes,
    ) -> Result<(String, Response), ApiError> {
        self.check(&caller, self.write_access)?;
        let body = self.parse(body)?;
        let ctx = Ctx {
            descriptor: &s.descriptor.content,
        };
        let value = (self.decl.validate)(&ctx, body, Op::Create)?;
        let handle = self.store(s);
        let mut store = handle.lock();
        let key = match self.decl.ids {
            Ids::Body => match value.get(self.decl.key_field) {
                Some(Value::String(k)) if !k.is_empty() => k.clone(),
                _ => {
                    return Err(self.err(
                        StatusCode::BAD_REQUEST,
                        format!("'{}' is required", self.decl.key_field),
                    ));
                }
            },
            Ids::Counter | Ids::CounterText | Ids::Uuid => store.assign_id(),
        };
        if store.get(&key).is_some() {
            let (status, msg) = (self.decl.exists)(&key);
            return Err(self.err(status, msg));
        }
        store.put(&key, value);
        let stored = store.get(&key).cloned().unwrap_or(Value::Null);
        drop(store);
        tracing::debug!(collection = self.decl.name, %key, "object created");
        let resp = match self.create_answer {
            CreateAnswer::Empty => self.create_status.into_response(),
            CreateAnswer::Object => self.object_answer(self.create_status, &stored),
            CreateAnswer::Id => {
                let mut m = Map::new();
                m.insert(
                    self.decl.key_field.to_owned(),
                    stored
                        .get(self.decl.key_field)
                        .cloned()
                        .unwrap_or_else(|| Value::String(key.clone())),
                );
                (self.create_status, axum::Json(Value::Object(m))).into_response()
            }
        };
        Ok((key, resp))
    }

    pub(crate) async fn update(
        &self,
        s: &Shared,
        caller: Caller,
        key: &str,
        body: &Bytes,
    ) -> Result<Response, ApiError> {
        self.check(&caller, self.write_access)?;
        let body = self.parse(body)?;
        let existing = self
            .store(s)
            .lock()
            .get(key)
            .cloned()
            .ok_or_else(|| self.not_found(key))?;
        let ctx = Ctx {
            descriptor: &s.descriptor.content,
        };
        let value = (self.decl.validate)(
            &ctx,
            body,
            Op::Update {
                key,
                existing: &existing,
            },
        )?;
        let handle = self.store(s);
        let mut store = handle.lock();
        let spelled = store
            .spelled(key)
            .map(str::to_owned)
            .ok_or_else(|| self.not_found(key))?;
        store.put(&spelled, value);
        let stored = store.get(&spelled).cloned().unwrap_or(Value::Null);
        drop(store);
        tracing::debug!(collection = self.decl.name, %key, "object replaced");
        Ok(match self.update_answer {
            UpdateAnswer::Empty => self.update_status.into_response(),
            UpdateAnswer::Object => self.object_answer(self.update_status, &stored),
        })
    }

    /// `status` with the object as a read answers it.
    fn object_answer(&self, status: StatusCode, stored: &Value) -> Response {
        (status, axum::Json((self.decl.view)(stored))).into_response()
    }

    pub(crate) async fn delete(
        &self,
        s: &Shared,
        caller: Caller,
        key: &str,
    ) -> Result<Response, ApiError> {
        self.check(&caller, self.write_access)?;
        self.store(s)
            .lock()
            .remove(key)
            .ok_or_else(|| self.not_found(key))?;
        tracing::debug!(collection = self.decl.name, %key, "object deleted");
        Ok(self.delete_status.into_response())
    }
}

/// The caller of a collection route: authentication is checked by the extractor (401), the
/// access level by the binding (403).
pub(crate) enum Caller {
    Admin,
    User(Flavor),
}

impl axum::extract::FromRequestParts<Arc<Shared>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let flavor = Flavor::for_path(parts.uri.path());
        let User(caller) = User::from_request_parts(parts, state).await?;
        Ok(if caller.admin {
            Caller::Admin
        } else {
            Caller::User(flavor)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nf(k: &str) -> (StatusCode, String) {
        (StatusCode::NOT_FOUND, format!("'{k}' not found"))
    }

    fn ex(k: &str) -> (StatusCode, String) {
        (StatusCode::CONFLICT, format!("'{k}' exists"))
    }

    static CI: Declaration = Declaration {
        name: "ci",
        key_field: "name",
        key_case: KeyCase::Insensitive,
        ids: Ids::Body,
        flavor: Flavor::Access,
        not_found: nf,
        exists: ex,
        validate: accept_object,
        view: as_stored,
    };

    static CS: Declaration = Declaration {
        name: "cs",
        key_case: KeyCase::Sensitive,
        ..CI
    };

    static COUNTER: Declaration = Declaration {
        name: "counter",
        key_field: "id",
        ids: Ids::Counter,
        ..CI
    };

    #[test]
    fn case_insensitive_keys_keep_the_first_spelling() {
        let c = Collections::new(&[&CI, &CS]);
        assert!(c.put_raw("ci", "MyKey", json!({"a": 1})));
        assert_eq!(
            c.get_raw("ci", "mykey"),
            Some(json!({"a": 1, "name": "MyKey"}))
        );
        assert!(c.put_raw("ci", "MYKEY", json!({"a": 2})));
        assert_eq!(
            c.list_raw("ci"),
            Some(vec![json!({"a": 2, "name": "MyKey"})])
        );
        assert!(c.put_raw("cs", "MyKey", json!({})));
        assert!(c.put_raw("cs", "mykey", json!({})));
        assert_eq!(c.list_raw("cs").map(|v| v.len()), Some(2));
        assert!(c.get_raw("cs", "MYKEY").is_none());
        assert!(c.delete_raw("ci", "MYKEY"));
        assert!(!c.delete_raw("ci", "MYKEY"));
        assert!(!c.put_raw("nope", "k", json!({})));
        assert!(!c.put_raw("ci", "k", json!([])));
        assert_eq!(c.names(), vec!["ci", "cs"]);
    }

    static UUIDS: Declaration = Declaration {
        name: "uuids",
        key_field: "id",
        ids: Ids::Uuid,
        ..CI
    };

    static COUNTER_ROUTES: Binding = Binding {
        decl: &COUNTER,
        base: "/t/counter",
        item: "/t/counter/{key}",
        create_status: StatusCode::CREATED,
        create_answer: CreateAnswer::Id,
        update_status: StatusCode::OK,
        update_answer: UpdateAnswer::Empty,
        delete_status: StatusCode::NO_CONTENT,
        read_access: Access::User,
        write_access: Access::Admin,
    };

    static UUID_ROUTES: Binding = Binding {
        decl: &UUIDS,
        base: "/t/uuids",
        item: "/t/uuids/{key}",
        create_answer: CreateAnswer::Object,
        ..COUNTER_ROUTES
    };

    static CI_ROUTES: Binding = Binding {
        decl: &CI,
        base: "/t/ci",
        item: "/t/ci/{key}",
        create_answer: CreateAnswer::Empty,
        ..COUNTER_ROUTES
    };

    /// A router over the test bindings, and an admin and a reader token.
    fn router() -> (Router, String, String) {
        let mut shared = Shared::new(crate::SimConfig::default(), "http://t".into());
        shared.collections = Collections::new(&[&COUNTER, &UUIDS, &CI]);
        let admin = shared.auth.issue_token("admin", true);
        let reader = shared.auth.issue_token("reader", false);
        let router = Router::new()
            .merge(COUNTER_ROUTES.routes())
            .merge(UUID_ROUTES.routes())
            .merge(CI_ROUTES.routes())
            .with_state(Arc::new(shared));
        (router, admin, reader)
    }

    async fn call(
        router: &Router,
        token: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        use tower::ServiceExt;
        let req = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {token}"))
            .body(axum::body::Body::from(
                body.map(|b| b.to_string()).unwrap_or_default(),
            ))
            .unwrap();
        let resp = router.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, v)
    }

    #[tokio::test]
    async fn server_assigned_ids_are_answered_by_the_create() {
        let (r, admin, _) = router();
        let (st, v) = call(&r, &admin, "POST", "/t/counter", Some(json!({"x": 1}))).await;
        assert_eq!((st, v), (StatusCode::CREATED, json!({"id": 1})));
        let (_, v) = call(
            &r,
            &admin,
            "POST",
            "/t/counter",
            Some(json!({"id": 99, "x": 2})),
        )
        .await;
        assert_eq!(v, json!({"id": 2}), "the server ignores a client-sent ID");
        let (st, v) = call(&r, &admin, "GET", "/t/counter/2", None).await;
        assert_eq!((st, v), (StatusCode::OK, json!({"id": 2, "x": 2})));
        let (_, list) = call(&r, &admin, "GET", "/t/counter", None).await;
        assert_eq!(list.as_array().map(Vec::len), Some(2));

        let (st, v) = call(&r, &admin, "POST", "/t/uuids", Some(json!({"x": 1}))).await;
        assert_eq!(st, StatusCode::CREATED);
        let id = v["id"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(v["x"], 1, "the create answers the object");
        let (st, got) = call(&r, &admin, "GET", &format!("/t/uuids/{id}"), None).await;
        assert_eq!((st, got), (StatusCode::OK, v));
    }

    #[tokio::test]
    async fn generic_crud_with_case_rule_and_access() {
        let (r, admin, reader) = router();
        let (st, v) = call(&r, &admin, "POST", "/t/ci", Some(json!({"name": "Team-A"}))).await;
        assert_eq!((st, v), (StatusCode::CREATED, Value::Null));
        let (st, v) = call(&r, &admin, "POST", "/t/ci", Some(json!({"name": "team-a"}))).await;
        assert_eq!(st, StatusCode::CONFLICT);
        assert_eq!(v["errors"][0]["message"], "'team-a' exists");
        let (st, v) = call(&r, &admin, "POST", "/t/ci", Some(json!({"other": 1}))).await;
        assert_eq!(st, StatusCode::BAD_REQUEST);
        assert_eq!(v["errors"][0]["message"], "'name' is required");
        // Reads follow the case rule and answer the spelling of the create.
        let (st, v) = call(&r, &reader, "GET", "/t/ci/TEAM-A", None).await;
        assert_eq!((st, v), (StatusCode::OK, json!({"name": "Team-A"})));
        let (st, _) = call(&r, &reader, "PUT", "/t/ci/team-a", Some(json!({"y": 1}))).await;
        assert_eq!(st, StatusCode::FORBIDDEN);
        let (st, _) = call(&r, &admin, "PUT", "/t/ci/team-a", Some(json!({"y": 1}))).await;
        assert_eq!(st, StatusCode::OK);
        let (_, v) = call(&r, &reader, "GET", "/t/ci", None).await;
        assert_eq!(v, json!([{"name": "Team-A", "y": 1}]));
        let (st, v) = call(&r, &admin, "PUT", "/t/ci/nobody", Some(json!({}))).await;
        assert_eq!(st, StatusCode::NOT_FOUND);
        assert_eq!(v["errors"][0]["message"], "'nobody' not found");
        let (st, _) = call(&r, &admin, "DELETE", "/t/ci/TEAM-a", None).await;
        assert_eq!(st, StatusCode::NO_CONTENT);
        let (st, _) = call(&r, &admin, "DELETE", "/t/ci/TEAM-a", None).await;
        assert_eq!(st, StatusCode::NOT_FOUND);
        let (st, _) = call(&r, &admin, "POST", "/t/ci", Some(json!([1]))).await;
        assert_eq!(st, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn counter_ids_continue_after_seeded_ones() {
        let c = Collections::new(&[&COUNTER]);
        let h = c.get("counter").unwrap();
        assert_eq!(h.lock().assign_id(), "1");
        assert!(c.put_raw("counter", "7", json!({})));
        assert_eq!(c.get_raw("counter", "7"), Some(json!({"id": 7})));
        assert_eq!(h.lock().assign_id(), "8");
        assert!(c.clear("counter"));
        assert_eq!(h.lock().len(), 0);
    }
}
