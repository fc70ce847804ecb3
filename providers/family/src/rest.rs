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
    /// The array under the named member of an object (`{"tokens": [...]}`), or a plain
    /// array.
    Wrapped(&'static str),
    /// One page of a paged list: an object whose member holds the array and another the
    /// count of every object (Xray's ignore rules: `{data, total_count}`), asked for with
    /// the page's query parameters (and, for a list asked for by a `POST` that only reads,
    /// Xray's reports, the page's fixed body). An answer whose page does not hold every object is not
    /// used (the objects are then read by key): an object missing from it is not gone.
    Paged(&'static Page),
    /// One object, a singleton's (a lifecycle: the platform's, or with a parent a
    /// project's): the list's `key_member` is then the key it is listed under (a constant,
    /// not a member), which a parent's binding maps with [`Rest::listed_address`].
    One,
}

/// The page of a [`ListShape::Paged`] list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// The query parameters asking for one page as large as JFrog allows.
    pub query: &'static [(&'static str, &'static str)],
    /// The member holding the objects.
    pub member: &'static str,
    /// The member holding the count of every object.
    pub total: &'static str,
    /// The fixed JSON body of a list asked for by `POST` (a request that only reads, e.g.
    /// Xray's reports list with its filters); `None` for a `GET`.
    pub post: Option<&'static str>,
}

impl Page {
    /// The objects of a page's answer, if the page holds every object.
    pub fn objects(&self, answer: &serde_json::Value) -> Option<Vec<serde_json::Value>> {
        let items = answer.get(self.member)?.as_array()?;
        let total = answer.get(self.total)?.as_u64()?;
        (total == items.len() as u64).then(|| items.clone())
    }
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
    /// The member of each object holding its identifier (dots for nesting).
    pub key_member: &'static str,
}

impl ListCall {
    /// The method of the list request: `GET`, or `POST` for a page with a fixed body (a
    /// `POST` that only reads, resent after a lost answer like any read).
    pub fn verb(&self) -> Verb {
        match self.body() {
            Some(_) => Verb::Post,
            None => Verb::Get,
        }
    }

    /// The fixed JSON body of the list request, if it is a `POST`.
    pub fn body(&self) -> Option<&'static str> {
        match self.shape {
            ListShape::Paged(page) => page.post,
            _ => None,
        }
    }

    /// The request as the simulator counts it (`METHOD /service-base/path`), e.g. to tell a
    /// `POST` that only reads from the writes.
    pub fn counted_as(&self) -> String {
        format!(
            "{} {}{}",
            self.verb().method(),
            self.service.base_path(),
            self.path
        )
    }

    /// The list request (with a paged list's query parameters and fixed body).
    pub fn request<'a>(&self, client: &'a JfrogClient) -> jfrog_client::Request<'a> {
        // A list only reads, even when asked for by `POST`: a read-only client sends it.
        let r = client
            .request(
                self.service,
                self.verb().method(),
                self.path,
                Idempotency::Idempotent,
            )
            .reads_only();
        let r = match self.shape {
            ListShape::Paged(page) => page.query.iter().fold(r, |r, &(n, v)| r.query(n, v)),
            _ => r,
        };
        match self.body() {
            Some(body) => match serde_json::from_str::<Value>(body) {
                Ok(v) => r.json(&v),
                // A declaration error: sent as it is, JFrog then says what is wrong.
                Err(_) => r.json(body),
            },
            None => r,
        }
    }

    /// The list request for one parent's objects: `parents` fill the path's parameters,
    /// or with `query` the query parameter (none: the platform's own list).
    pub fn request_for<'a>(
        &self,
        client: &'a JfrogClient,
        query: Option<QueryParent>,
        parents: &[String],
    ) -> jfrog_client::Request<'a> {
        let r = self.request(client);
        match (query, parents.first()) {
            (Some(q), Some(p)) => q
                .with
                .iter()
                .fold(r.query(q.name, p), |r, &(n, v)| r.query(n, v)),
            (Some(_), None) => r,
            (None, _) => parents.iter().fold(r, |r, p| r.param(p)),
        }
    }

    /// What [`Self::request_for`] asks for, as a label and a snapshot's key
    /// (`/api/v1/projects/team/roles`, `/api/v2/stages?project_key=team&scope=project`): not
    /// a URL (the client encodes the values it sends).
    pub fn path_for(&self, query: Option<QueryParent>, parents: &[String]) -> String {
        match (query, parents.first()) {
            (Some(q), Some(p)) => {
                let mut all = vec![(q.name, p.as_str())];
                all.extend_from_slice(q.with);
                with_query(self.path.to_string(), &all)
            }
            (Some(_), None) => self.path.to_string(),
            (None, _) => filled_path(self.path, parents),
        }
    }

    /// The identifier of one listed object (see [`key_in`]).
    pub fn key_of(&self, obj: &Value) -> String {
        match self.shape {
            ListShape::One => self.key_member.to_string(),
            _ => key_in(obj, self.key_member),
        }
    }
}

/// The identifier of one listed object in its `member`, nested by dots (a watch's
/// `general_data.name`); a number (Xray's curation IDs) written in decimal, as the external
/// name is; empty when it has none.
pub fn key_in(obj: &Value, member: &str) -> String {
    match crate::wire::get_path(obj, member) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// What JFrog Cloud's 400 for a call only a self-hosted platform serves says: "Artifactory
/// Online does not support accessing this API endpoint, ..." (the system configuration
/// descriptor and its parts), "Artifactory Online does not require license, ..."
/// (jfrog/terraform-provider-artifactory issues #452, #550, #95;
/// jfrog/terraform-provider-project #221).
pub const CLOUD_REFUSAL: &str = "Artifactory Online does not";

/// The start of the message of a Kind that needs a self-hosted platform.
pub const NEEDS_SELF_HOSTED: &str = "needs a self-hosted JFrog platform";

/// The message for `kind` (empty: no Kind named) on JFrog Cloud, which does not serve
/// `what` and answered `message`.
pub fn needs_self_hosted(kind: &str, what: &str, message: &str) -> String {
    let sep = if kind.is_empty() { "" } else { " " };
    format!(
        "{kind}{sep}{NEEDS_SELF_HOSTED}: this platform (JFrog Cloud) does not serve {what} ({message})"
    )
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
    fn list(&self) -> Option<&ListCall> {
        None
    }
    /// Whether the API can change an object after its create. `false` for objects whose
    /// parameters are fixed at create and absent from every answer (an Xray report: no
    /// update call, the read answers the generation status only): the adapter then never
    /// compares the parameters with an answer, never late-initialises them from one and
    /// never sends an update.
    fn updatable(&self) -> bool {
        true
    }
    /// The list call to use on `client`'s platform, for an API that depends on the
    /// platform's version (the users list); [`Rest::list`] by default. `list()` stays the
    /// call that names the family (the snapshot's and `export`'s grouping).
    async fn list_on(&self, _client: &JfrogClient) -> Result<Option<ListCall>, Error> {
        Ok(self.list().copied())
    }
    /// Whether the list answer shows only which objects exist (a name and a link, as the
    /// users, groups and permission targets lists do): an object the list lacks needs no
    /// read, a listed one is still read by key for its details ("list, then read each").
    fn list_reads_each(&self) -> bool {
        false
    }
    /// For a list per parent ([`Listed::parents`]): the Kind's fields whose values fill the
    /// list path's parameters, in order (one list, and one snapshot, per parent); empty for
    /// a list of the whole platform.
    fn list_parents(&self) -> &'static [&'static str] {
        &[]
    }
    /// For a list per parent: the list of the parents (every project, every OIDC
    /// configuration), whose key member fills the one parameter of the list path, so that
    /// `export` lists the parents and then each parent's objects.
    fn parent_list(&self) -> Option<&'static ListCall> {
        None
    }
    /// For a list per parent whose parent is an optional query parameter
    /// ([`QueryParent`]); `None` when the parents fill the list path.
    fn parent_query(&self) -> Option<QueryParent> {
        None
    }
    /// The key under which the list shows the object at `address` (`None`: the list cannot
    /// show it, so it is read by key). A per-parent list's objects are keyed
    /// `<parent>/<key member>` (the parent values joined by `/`); a binding whose address
    /// holds more (a switch) or whose list spells the key otherwise (environments listed as
    /// `<project>-<name>`) maps it here. The address itself by default.
    fn list_key(&self, address: &str) -> Option<String> {
        Some(address.to_string())
    }
    /// The inverse for `export`: the object's name (its external name) from the key member
    /// of a per-parent list entry under `parents`; `None` to skip the entry. The key member
    /// itself by default.
    fn listed_address(&self, _parents: &[&str], key: &str) -> Option<String> {
        Some(key.to_string())
    }
    /// Whether identifiers are case-insensitive (`Repo` and `repo` are one object).
    fn case_insensitive(&self) -> bool {
        false
    }
    /// Whether the object stays in JFrog when its MR is deleted (configuration JFrog
    /// cannot delete): the MR is then released without waiting for it to disappear.
    fn forgets_on_delete(&self) -> bool {
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
pub fn call_request<'a>(
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
        let (key, query) = split_query(key);
        let r = call_request(client, self.service, call, idem, key);
        query.into_iter().fold(r, |r, (n, v)| r.query(n, v))
    }
}

#[async_trait]
impl Rest for Paths {
    async fn read(&self, client: &JfrogClient, key: &str) -> Result<Value, Error> {
        // The declared read only reads, whatever its verb.
        self.at(client, &self.read, Idempotency::Idempotent, key)
            .reads_only()
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

/// A request to `service` with the path parameters given in order (for a family's own
/// [`Rest`] whose calls take more than the identifier).
pub fn request<'a>(
    client: &'a JfrogClient,
    service: Service,
    verb: Verb,
    path: &'static str,
    idem: Idempotency,
    params: &[&str],
) -> jfrog_client::Request<'a> {
    params.iter().fold(
        client.request(service, verb.method(), path, idem),
        |r, p| r.param(p),
    )
}

/// The [`Error::NotFound`] of an object that an answer shows missing (a list without it, a
/// status saying it belongs elsewhere): the only error that means "does not exist".
pub fn not_found(service: Service, verb: Verb, path: &str, message: String) -> Error {
    Error::NotFound {
        ctx: jfrog_client::RequestContext {
            service,
            method: verb.method(),
            route: format!("{}{path}", service.base_path()),
        },
        message,
    }
}

/// A [`Paths`] binding whose bodies JFrog spells differently from the Kind (units, enum
/// spellings, inverted flags): `to_jfrog` adjusts every body sent, `from_jfrog` every object
/// read. It has no list call of its own (a list answer would need converting too): wrap it
/// in [`Listed`] and convert in the family's `decode` hook instead of `from_jfrog`.
#[derive(Debug, Clone, Copy)]
pub struct Converted {
    /// The calls.
    pub paths: Paths,
    /// Adjusts a body before it is sent.
    pub to_jfrog: fn(&mut Map<String, Value>),
    /// Adjusts an object after it is read.
    pub from_jfrog: fn(&mut Value),
}

#[async_trait]
impl Rest for Converted {
    async fn read(&self, client: &JfrogClient, key: &str) -> Result<Value, Error> {
        let mut v = self.paths.read(client, key).await?;
        (self.from_jfrog)(&mut v);
        Ok(v)
    }
    async fn create(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let mut b = body.clone();
        (self.to_jfrog)(&mut b);
        self.paths.create(client, key, &b).await
    }
    async fn update(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let mut b = body.clone();
        (self.to_jfrog)(&mut b);
        self.paths.update(client, key, &b).await
    }
    async fn delete(&self, client: &JfrogClient, key: &str) -> Result<(), Error> {
        self.paths.delete(client, key).await
    }
    fn case_insensitive(&self) -> bool {
        self.paths.case_insensitive
    }
}

/// Another binding with a list call: its calls as they are, its objects observed (and
/// exported) through `list`. A list answer is used as JFrog gives it, so a Kind whose reads
/// are converted ([`Converted`]) converts in its `decode` hook instead (which serves reads
/// and list entries alike) and leaves `from_jfrog` empty.
#[derive(Debug, Clone, Copy)]
pub struct Listed {
    /// The calls.
    pub rest: &'static (dyn Rest + 'static),
    /// The list call.
    pub list: ListCall,
    /// The list shows only which objects exist ([`Rest::list_reads_each`]).
    pub reads_each: bool,
    /// For a list per parent (a path with `{...}` parameters, e.g. a project's roles): the
    /// Kind's fields (CRD names) whose values fill the parameters, in order; empty for a
    /// list of the whole platform ([`Rest::list_parents`]).
    pub parents: &'static [&'static str],
    /// The list of the parents ([`Rest::parent_list`]).
    pub parent_list: Option<&'static ListCall>,
    /// The parent goes in a query parameter rather than the path, and may be unset
    /// ([`Rest::parent_query`]).
    pub parent_query: Option<QueryParent>,
}

impl Listed {
    /// A binding observed through one list per parent (a path parameter each: a project's
    /// roles), its entries whole objects: `parents` fill the list path, `parent_list` lists
    /// the parents.
    pub const fn per_parent(
        rest: &'static (dyn Rest + 'static),
        list: ListCall,
        parents: &'static [&'static str],
        parent_list: &'static ListCall,
    ) -> Listed {
        Listed {
            rest,
            list,
            reads_each: false,
            parents,
            parent_list: Some(parent_list),
            parent_query: None,
        }
    }
}

/// A per-parent list whose one parent is a query parameter, not a path parameter, and
/// optional (lifecycle stages: `GET /api/v2/stages` lists the platform's own stages,
/// `GET /api/v2/stages?project_key=team&scope=project` a project's): an MR without the
/// parent is observed through the list without the parameter, which has a snapshot of its
/// own (objects keyed by their key member alone), and `export` lists it before each
/// parent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryParent {
    /// The query parameter carrying the parent's value (`project_key`).
    pub name: &'static str,
    /// Further query parameters sent with a parent, narrowing the answer to the parent's
    /// own objects (`scope=project`: without it a project's list shows the platform's
    /// stages too).
    pub with: &'static [(&'static str, &'static str)],
}

#[async_trait]
impl Rest for Listed {
    async fn read(&self, client: &JfrogClient, key: &str) -> Result<Value, Error> {
        self.rest.read(client, key).await
    }
    async fn create(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.rest.create(client, key, body).await
    }
    async fn update(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.rest.update(client, key, body).await
    }
    async fn delete(&self, client: &JfrogClient, key: &str) -> Result<(), Error> {
        self.rest.delete(client, key).await
    }
    fn list(&self) -> Option<&ListCall> {
        Some(&self.list)
    }
    fn list_reads_each(&self) -> bool {
        self.reads_each
    }
    fn list_parents(&self) -> &'static [&'static str] {
        self.parents
    }
    fn parent_list(&self) -> Option<&'static ListCall> {
        self.parent_list
    }
    fn parent_query(&self) -> Option<QueryParent> {
        self.parent_query
    }
    fn list_key(&self, address: &str) -> Option<String> {
        self.rest.list_key(address)
    }
    fn listed_address(&self, parents: &[&str], key: &str) -> Option<String> {
        self.rest.listed_address(parents, key)
    }
    fn case_insensitive(&self) -> bool {
        self.rest.case_insensitive()
    }
    fn forgets_on_delete(&self) -> bool {
        self.rest.forgets_on_delete()
    }
}

/// `template` with its `{...}` parameters replaced by `values` in order (a per-parent list's
/// path, e.g. `/api/v1/projects/team/roles`): the snapshot's key, not a URL (the client
/// encodes the values it sends).
pub fn filled_path(template: &str, values: &[String]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    let mut values = values.iter();
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        match values.next() {
            Some(v) => out.push_str(v),
            None => out.push_str(&rest[open..open + close + 1]),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// The two parts of a `<parent>/<name>` address built by a family's `address` hook (the
/// name keeps any further separators; a missing part is empty).
pub fn address_pair(address: &str) -> (&str, &str) {
    address.split_once('/').unwrap_or((address, ""))
}

/// An address with the query parameters of a scoped object appended
/// (`policy?projectKey=team`); the address itself when there are none.
pub fn with_query(address: String, query: &[(&str, &str)]) -> String {
    query.iter().fold(address, |mut a, (n, v)| {
        a.push(if a.contains('?') { '&' } else { '?' });
        a.push_str(n);
        a.push('=');
        a.push_str(v);
        a
    })
}

/// An address and the query parameters it carries (see [`with_query`]).
pub fn split_query(address: &str) -> (&str, Vec<(&str, &str)>) {
    match address.split_once('?') {
        None => (address, Vec::new()),
        Some((a, q)) => (
            a,
            q.split('&')
                .map(|p| p.split_once('=').unwrap_or((p, "")))
                .collect(),
        ),
    }
}

/// The three parts of an `<a>/<b>/<c>` address (missing parts empty).
pub fn address_triple(address: &str) -> (&str, &str, &str) {
    let (a, rest) = address_pair(address);
    let (b, c) = address_pair(rest);
    (a, b, c)
}

/// A platform setting that always exists and cannot be deleted (the Crowd or HTTP SSO
/// settings, the licence, the reverse proxy): read by GET, created and updated by the same
/// write call, and only forgotten on delete (JFrog has no delete call).
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The service.
    pub service: Service,
    /// The read path.
    pub read: &'static str,
    /// The write call (create and update).
    pub write: Call,
}

#[async_trait]
impl Rest for Settings {
    async fn read(&self, client: &JfrogClient, _key: &str) -> Result<Value, Error> {
        request(
            client,
            self.service,
            Verb::Get,
            self.read,
            Idempotency::Idempotent,
            &[],
        )
        .send_value()
        .await
    }
    async fn create(
        &self,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.update(client, key, body).await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        client: &JfrogClient,
        _key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        request(
            client,
            self.service,
            self.write.verb,
            self.write.path,
            Idempotency::Idempotent,
            &[],
        )
        .json(body)
        .send_empty()
        .await
    }
    async fn delete(&self, _client: &JfrogClient, _key: &str) -> Result<(), Error> {
        // No delete call: deleting the MR forgets the setting.
        Ok(())
    }
    fn forgets_on_delete(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page with a fixed body is asked for by `POST` (counted as such), any other list by
    /// `GET`; the body is the page's.
    #[test]
    fn a_page_with_a_body_is_a_post_list() {
        static GET_PAGE: Page = Page {
            query: &[("page_num", "1")],
            member: "data",
            total: "total_count",
            post: None,
        };
        static POST_PAGE: Page = Page {
            query: &[("page_num", "1")],
            member: "reports",
            total: "total_reports",
            post: Some(r#"{"filters": {}}"#),
        };
        let list = |shape| ListCall {
            service: Service::Xray,
            path: "/api/v1/things",
            shape,
            key_member: "id",
        };
        for (shape, verb, body, counted) in [
            (ListShape::Array, Verb::Get, None, "GET /xray/api/v1/things"),
            (
                ListShape::Wrapped("items"),
                Verb::Get,
                None,
                "GET /xray/api/v1/things",
            ),
            (
                ListShape::Paged(&GET_PAGE),
                Verb::Get,
                None,
                "GET /xray/api/v1/things",
            ),
            (
                ListShape::Paged(&POST_PAGE),
                Verb::Post,
                Some(r#"{"filters": {}}"#),
                "POST /xray/api/v1/things",
            ),
        ] {
            let l = list(shape);
            assert_eq!(l.verb(), verb, "{shape:?}");
            assert_eq!(l.body(), body, "{shape:?}");
            assert_eq!(l.counted_as(), counted, "{shape:?}");
        }
    }

    #[test]
    fn an_optional_query_parent_names_its_own_list() {
        let l = ListCall {
            service: Service::Access,
            path: "/api/v2/stages",
            shape: ListShape::Array,
            key_member: "name",
        };
        let q = QueryParent {
            name: "project_key",
            with: &[("scope", "project")],
        };
        assert_eq!(l.path_for(Some(q), &[]), "/api/v2/stages");
        assert_eq!(
            l.path_for(Some(q), &["team".to_string()]),
            "/api/v2/stages?project_key=team&scope=project"
        );
        let roles = ListCall {
            path: "/api/v1/projects/{project}/roles",
            ..l
        };
        assert_eq!(
            roles.path_for(None, &["team".to_string()]),
            "/api/v1/projects/team/roles"
        );
    }

    #[test]
    fn a_singletons_answer_is_listed_under_its_constant_key() {
        let l = ListCall {
            service: Service::Access,
            path: "/api/v2/lifecycle",
            shape: ListShape::One,
            key_member: "_",
        };
        assert_eq!(l.key_of(&serde_json::json!({"promote_stages": []})), "_");
    }

    #[test]
    fn a_per_parent_list_path_is_filled_in_order() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            filled_path("/api/v1/projects/{project}/roles", &v(&["team"])),
            "/api/v1/projects/team/roles"
        );
        assert_eq!(filled_path("/a/{x}/b/{y}", &v(&["1", "2"])), "/a/1/b/2");
        assert_eq!(filled_path("/a/{x}/b/{y}", &v(&["1"])), "/a/1/b/{y}");
        assert_eq!(filled_path("/api/v1/projects", &[]), "/api/v1/projects");
    }

    #[test]
    fn addresses_split_into_their_parts() {
        assert_eq!(address_pair("team/dev"), ("team", "dev"));
        assert_eq!(address_pair("alone"), ("alone", ""));
        assert_eq!(address_pair("a/b/c"), ("a", "b/c"));
        assert_eq!(address_triple("libs//true"), ("libs", "", "true"));
    }

    #[test]
    fn scoped_addresses_carry_their_query() {
        let a = with_query("p".into(), &[("projectKey", "team")]);
        assert_eq!(a, "p?projectKey=team");
        assert_eq!(split_query(&a), ("p", vec![("projectKey", "team")]));
        let two = with_query(a, &[("x", "1")]);
        assert_eq!(
            split_query(&two),
            ("p", vec![("projectKey", "team"), ("x", "1")])
        );
        assert_eq!(with_query("p".into(), &[]), "p");
        assert_eq!(split_query("p"), ("p", vec![]));
    }
}
