//! A Kind's REST binding: how its objects are created, read, updated, deleted and listed.
//!
//! Most families are plain data ([`Paths`]: a service, a method and path per call, a list
//! call and its answer's shape); a family whose client has quirks worth keeping (the
//! repositories' 400-as-missing answers) implements [`Rest`] over its own client calls.

use async_trait::async_trait;
use http::Method;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use serde_json::{Map, Value};

/// An HTTP method (`http::Method` is not `Copy`, so declarations name one of these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl Verb {
    /// The method.
    pub fn method(self) -> Method {
        match self {
            Verb::Get => Method::GET,
            Verb::Post => Method::POST,
            Verb::Put => Method::PUT,
            Verb::Patch => Method::PATCH,
            Verb::Delete => Method::DELETE,
        }
    }
}

/// One call: a method and a path relative to the service (`{key}` is the identifier).
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The HTTP method.
    pub verb: Verb,
    /// The path under the service, e.g. `/api/v1/subscriptions/{key}`.
    pub path: &'static str,
}

impl Call {
    /// A call.
    pub const fn new(verb: Verb, path: &'static str) -> Self {
        Call { verb, path }
    }
}

/// Where the objects are in a list answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListShape {
    /// A JSON array of objects.
    Array,
    /// An object of arrays keyed by a group name, which is copied in lower case into the
    /// named member of each object that lacks it (the repositories' answer grouped by
    /// class, or a plain array).
    Grouped(&'static str),
}

/// The list call that observes every object of a family at once.
#[derive(Debug, Clone, Copy)]
pub struct ListCall {
    /// The service.
    pub service: Service,
    /// The path under the service.
    pub path: &'static str,
    /// The shape of the answer.
    pub shape: ListShape,
    /// The member of each object holding its identifier.
    pub key_member: &'static str,
}

/// How a family talks to JFrog. Errors keep `jfrog_client`'s typing: only
/// [`Error::NotFound`] means "does not exist".
#[async_trait]
pub trait Rest: Send + Sync + std::fmt::Debug {
    /// Read one object.
    async fn read(&self, client: &JfrogClient, key: &str) -> Result<Value, Error>;
    /// Create one object; returns the answer's body (for server-assigned identifiers).
    async fn create(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error>;
    /// Update one object.
    async fn update(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error>;
    /// Delete one object ([`Error::NotFound`] when already gone).
    async fn delete(&self, client: &JfrogClient, key: &str) -> Result<(), Error>;
    /// The list call that observes all objects at once, if the API has one.
    fn list(&self) -> Option<&ListCall>;
    /// Whether identifiers are case-insensitive (`Repo` and `repo` are one object).
    fn case_insensitive(&self) -> bool {
        false
    }
}

/// A REST binding as plain data.
#[derive(Debug, Clone, Copy)]
pub struct Paths {
    /// The service every call goes to.
    pub service: Service,
    /// Create (never resent after a lost answer: the next observe tells).
    pub create: Call,
    /// Read one.
    pub read: Call,
    /// Update one (a full replacement or a merge, as the API does).
    pub update: Call,
    /// Delete one.
    pub delete: Call,
    /// The list call.
    pub list: Option<ListCall>,
    /// Identifiers are case-insensitive.
    pub case_insensitive: bool,
}

/// The request of `call` to `service` for the object `key` (the path's `{key}`, if any).
pub fn request<'a>(
    client: &'a JfrogClient,
    service: Service,
    call: &Call,
    idem: Idempotency,
    key: &str,
) -> jfrog_client::Request<'a> {
    let r = client.request(service, call.verb.method(), call.path, idem);
    if call.path.contains('{') {
        r.param(key)
    } else {
        r
    }
}

impl Paths {
    fn at<'a>(
        &self,
        client: &'a JfrogClient,
        call: &Call,
        idem: Idempotency,
        key: &str,
    ) -> jfrog_client::Request<'a> {
        request(client, self.service, call, idem, key)
    }
}

#[async_trait]
impl Rest for Paths {
    async fn read(&self, client: &JfrogClient, key: &str) -> Result<Value, Error> {
        self.at(client, &self.read, Idempotency::Idempotent, key)
            .send_value()
            .await
    }

    async fn create(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let r = self
            .at(client, &self.create, Idempotency::NonIdempotent, key)
            .json(body)
            .send()
            .await?;
        // An empty or non-JSON answer carries nothing the adapter needs.
        Ok(serde_json::from_slice(r.body()).unwrap_or(Value::Null))
    }

    async fn update(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.at(client, &self.update, Idempotency::Idempotent, key)
            .json(body)
            .send_empty()
            .await
    }

    async fn delete(&self, client: &JfrogClient, key: &str) -> Result<(), Error> {
        self.at(client, &self.delete, Idempotency::Idempotent, key)
            .send_empty()
            .await
    }

    fn list(&self) -> Option<&ListCall> {
        self.list.as_ref()
    }

    fn case_insensitive(&self) -> bool {
        self.case_insensitive
    }
}
