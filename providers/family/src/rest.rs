//! A Kind's REST binding: how its objects are created, read, updated, deleted and listed.
//!
//! Most families are plain data ([`Paths`]: a service, a method and path per call, a list
//! call and its answer's shape); a family whose client has quirks worth keeping (the
//! repositories' 400-as-missing answers) implements [`Rest`] over its own client calls.

use async_trait::async_trait;
use http::Method;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use serde_json::{Map, Value};

use crate::address::Address;

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
    /// A list JFrog answers one page at a time, asked for with the largest page JFrog
    /// allows and followed page by page within one observation ([`ListCall::fetch`]): one
    /// request when every object fits in one page. Pages that cannot be followed to the end
    /// are not used (the objects are then read by key).
    Pages(&'static Pages),
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

/// The pages of a [`ListShape::Pages`] list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pages {
    /// The member of each page holding its objects.
    pub member: &'static str,
    /// The objects asked for per page: the most JFrog allows (at least 2).
    pub size: u32,
    /// How the next page is asked for.
    pub next: Next,
}

/// How a [`Pages`] list asks for its next page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// JFrog's Access v2 lists (users, groups, permissions): `limit` asks for a page of that
    /// many objects (1,000 when not given) and `cursor` for the objects after the one it
    /// names; every page's answer carries a `cursor` (the name of its last object, on the
    /// last page too). A page shorter than `limit` is the last; a full page is followed by
    /// the next one (which may be empty).
    Cursor,
    /// A SCIM `ListResponse` (RFC 7644 section 3.4.2.4): `startIndex` (1-based) and `count`
    /// ask for a page (JFrog answers 20 objects when `count` is not given), and the answer's
    /// `totalResults` counts every object. Each next page starts at the last object of the
    /// page before, which must be the same object: a list that shifted between two pages
    /// (an object before it deleted) would hide one, so it is not used.
    Index,
    /// JFrog's lifecycle lists (the promotions of one environment): `offset` (0-based) and
    /// `limit` ask for a page, sent with these fixed query parameters (an order under which
    /// objects created meanwhile come last: `order_by=created&order_asc=true`); the answer's
    /// `total`, when it has one, counts every object. Each next page starts at the last
    /// object of the page before, which must be the same object: a list that shifted
    /// between two pages (an object before it deleted) would hide one, so it is not used.
    /// Without a `total`, a page shorter than `limit` is the last.
    Offset(&'static [(&'static str, &'static str)]),
}

/// The most pages one observation follows (a guard against a cursor that never ends).
pub const MAX_PAGES: u32 = 1_000;

/// Where a paged list stands after one of its pages ([`Pager::take`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageStep {
    /// Ask for the next page with these query parameters.
    Next(Vec<(&'static str, String)>),
    /// Every object has been seen.
    Done,
    /// The pages cannot be followed to the end (why): what was seen is not the whole list.
    Incomplete(&'static str),
}

/// Follows a [`Pages`] list: the query of each page, the objects of every page, and when
/// the last page has been seen.
#[derive(Debug)]
pub struct Pager {
    pages: Pages,
    key_member: &'static str,
    objects: Vec<Value>,
    asked: u32,
    start: u64,
    offset: u64,
    cursor: Option<String>,
}

impl Pager {
    /// A pager of `pages`, whose objects are identified by `key_member`.
    pub fn new(pages: Pages, key_member: &'static str) -> Self {
        Pager {
            pages,
            key_member,
            objects: Vec::new(),
            asked: 0,
            start: 1,
            offset: 0,
            cursor: None,
        }
    }

    /// The query parameters of the first page.
    pub fn first(&self) -> Vec<(&'static str, String)> {
        match self.pages.next {
            Next::Cursor => vec![("limit", self.pages.size.to_string())],
            Next::Index => vec![
                ("startIndex", "1".to_string()),
                ("count", self.pages.size.to_string()),
            ],
            Next::Offset(with) => self.at_offset(0, with),
        }
    }

    /// The query of the page at `offset` of an [`Next::Offset`] list.
    fn at_offset(
        &self,
        offset: u64,
        with: &'static [(&'static str, &'static str)],
    ) -> Vec<(&'static str, String)> {
        let mut q = vec![
            ("offset", offset.to_string()),
            ("limit", self.pages.size.to_string()),
        ];
        q.extend(with.iter().map(|&(n, v)| (n, v.to_string())));
        q
    }

    /// How many pages were taken.
    pub fn pages(&self) -> u32 {
        self.asked
    }

    /// Take the answer to the last query asked for.
    pub fn take(&mut self, mut answer: Value) -> PageStep {
        self.asked += 1;
        let Some(Value::Array(items)) = answer.get_mut(self.pages.member).map(Value::take) else {
            return PageStep::Incomplete("a page without its objects");
        };
        let size = u64::from(self.pages.size);
        let n = items.len() as u64;
        match self.pages.next {
            Next::Cursor => {
                self.objects.extend(items);
                if n < size {
                    return PageStep::Done;
                }
                let Some(cursor) = answer.get("cursor").and_then(Value::as_str) else {
                    return PageStep::Incomplete("a full page without a cursor");
                };
                if cursor.is_empty() || self.cursor.as_deref() == Some(cursor) {
                    return PageStep::Incomplete("a cursor that does not move on");
                }
                if self.asked >= MAX_PAGES {
                    return PageStep::Incomplete("more pages than one observation follows");
                }
                self.cursor = Some(cursor.to_string());
                PageStep::Next(vec![
                    ("limit", self.pages.size.to_string()),
                    ("cursor", cursor.to_string()),
                ])
            }
            Next::Index => {
                let Some(total) = answer.get("totalResults").and_then(Value::as_u64) else {
                    return PageStep::Incomplete("a page without totalResults");
                };
                let mut items = items.into_iter();
                if self.asked > 1 {
                    // The page starts at the last object already seen.
                    let same = match (items.next(), self.objects.last()) {
                        (Some(first), Some(last)) => {
                            key_in(&first, self.key_member) == key_in(last, self.key_member)
                        }
                        _ => false,
                    };
                    if !same {
                        return PageStep::Incomplete("a list that changed between two pages");
                    }
                }
                let before = self.objects.len();
                self.objects.extend(items);
                let new = (self.objects.len() - before) as u64;
                if self.objects.len() as u64 >= total {
                    return PageStep::Done;
                }
                if new == 0 {
                    return PageStep::Incomplete("a page with no new object before the last one");
                }
                if self.asked >= MAX_PAGES {
                    return PageStep::Incomplete("more pages than one observation follows");
                }
                // The next page overlaps this one by its last object.
                self.start += n - 1;
                PageStep::Next(vec![
                    ("startIndex", self.start.to_string()),
                    ("count", self.pages.size.to_string()),
                ])
            }
            Next::Offset(with) => {
                let total = answer.get("total").and_then(Value::as_u64);
                let mut items = items.into_iter();
                if self.asked > 1 {
                    // The page starts at the last object already seen, unchanged.
                    let same = match (items.next(), self.objects.last()) {
                        (Some(first), Some(last)) => first == *last,
                        _ => false,
                    };
                    if !same {
                        return PageStep::Incomplete("a list that changed between two pages");
                    }
                }
                let before = self.objects.len();
                self.objects.extend(items);
                let new = (self.objects.len() - before) as u64;
                let done = match total {
                    Some(total) => self.objects.len() as u64 >= total,
                    None => n < size,
                };
                if done {
                    return PageStep::Done;
                }
                if new == 0 {
                    return PageStep::Incomplete("a page with no new object before the last one");
                }
                if self.asked >= MAX_PAGES {
                    return PageStep::Incomplete("more pages than one observation follows");
                }
                // The next page overlaps this one by its last object.
                self.offset += n - 1;
                PageStep::Next(self.at_offset(self.offset, with))
            }
        }
    }

    /// The objects of every page taken.
    pub fn into_objects(self) -> Vec<Value> {
        self.objects
    }
}

/// The answer of a list call ([`ListCall::fetch`]).
#[derive(Debug)]
pub enum Listing {
    /// One answer holding every object.
    One(jfrog_client::Response),
    /// The objects of every page of a [`ListShape::Pages`] list, as one
    /// `{"<member>": [...]}` (the pages that were asked for).
    Joined(Vec<u8>, u32),
    /// A paged list that could not be followed to its end (why, and the pages asked for):
    /// not the whole list.
    Incomplete(&'static str, u32),
}

impl Listing {
    /// The body holding every object; `None` for an incomplete list.
    pub fn body(&self) -> Option<&[u8]> {
        match self {
            Listing::One(r) => Some(r.body()),
            Listing::Joined(b, _) => Some(b),
            Listing::Incomplete(..) => None,
        }
    }

    /// The requests sent.
    pub fn requests(&self) -> u32 {
        match self {
            Listing::One(_) => 1,
            Listing::Joined(_, n) | Listing::Incomplete(_, n) => *n,
        }
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
    /// The member of each object holding its identifier (dots for nesting), or members
    /// joined by `/` (`projectKey/key`: the object is listed as `<projectKey>/<key>`, and
    /// not at all when one of them is missing or empty).
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
    /// and with `query` the one after them (the optional parent, [`QueryParent`]) goes in
    /// the query parameter (none: the list without it).
    pub fn request_for<'a>(
        &self,
        client: &'a JfrogClient,
        query: Option<QueryParent>,
        parents: &[String],
    ) -> jfrog_client::Request<'a> {
        let (in_path, in_query) = self.split_parents(query, parents);
        let r = in_path.iter().fold(self.request(client), |r, p| r.param(p));
        match (query, in_query) {
            (Some(q), Some(p)) => q
                .with
                .iter()
                .fold(r.query(q.name, p), |r, &(n, v)| r.query(n, v)),
            _ => r,
        }
    }

    /// `parents` split into those filling the path's parameters and, for a list with an
    /// optional query parent, the value after them (`None` when it is unset).
    fn split_parents<'p>(
        &self,
        query: Option<QueryParent>,
        parents: &'p [String],
    ) -> (&'p [String], Option<&'p str>) {
        if query.is_none() {
            return (parents, None);
        }
        let n = self.path.matches('{').count().min(parents.len());
        let (in_path, rest) = parents.split_at(n);
        (in_path, rest.first().map(String::as_str))
    }

    /// Every object the list holds: one request, or for a [`ListShape::Pages`] list one
    /// per page (asked for with the largest page JFrog allows, so one while every object
    /// fits in one page), followed to the last page.
    pub async fn fetch(
        &self,
        client: &JfrogClient,
        query: Option<QueryParent>,
        parents: &[String],
    ) -> Result<Listing, Error> {
        let ListShape::Pages(pages) = self.shape else {
            let r = self.request_for(client, query, parents).send().await?;
            return Ok(Listing::One(r));
        };
        let mut pager = Pager::new(*pages, self.key_member);
        let mut params = pager.first();
        loop {
            let r = params
                .iter()
                .fold(self.request_for(client, query, parents), |r, (n, v)| {
                    r.query(*n, v)
                })
                .send()
                .await?;
            let page: Value = r.json()?;
            match pager.take(page) {
                // One page: its answer as it came.
                PageStep::Done if pager.pages() == 1 => return Ok(Listing::One(r)),
                PageStep::Done => break,
                PageStep::Next(next) => params = next,
                PageStep::Incomplete(why) => return Ok(Listing::Incomplete(why, pager.pages())),
            }
        }
        let asked = pager.pages();
        let mut joined = Map::new();
        joined.insert(pages.member.to_string(), Value::Array(pager.into_objects()));
        let body = serde_json::to_vec(&joined).unwrap_or_default();
        Ok(Listing::Joined(body, asked))
    }

    /// What [`Self::request_for`] asks for, as a label and a snapshot's key
    /// (`/api/v1/projects/team/roles`, `/api/v2/stages?project_key=team&scope=project`): not
    /// a URL (the client encodes the values it sends).
    pub fn path_for(&self, query: Option<QueryParent>, parents: &[String]) -> String {
        let (in_path, in_query) = self.split_parents(query, parents);
        let path = filled_path(self.path, in_path);
        match (query, in_query) {
            (Some(q), Some(p)) => {
                let mut all = vec![(q.name, p)];
                all.extend_from_slice(q.with);
                with_query(path, &all)
            }
            _ => path,
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
/// name is; empty when it has none. Members joined by `/` give their values joined by `/`
/// (a repository's `projectKey/key`), empty when one of them is empty.
pub fn key_in(obj: &Value, member: &str) -> String {
    let one = |member: &str| match crate::wire::get_path(obj, member) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if !member.contains('/') {
        return one(member);
    }
    let parts: Vec<String> = member.split('/').map(one).collect();
    if parts.iter().any(String::is_empty) {
        return String::new();
    }
    parts.join("/")
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

/// What one provider keeps beyond its clients and snapshots, for the REST bindings whose
/// calls depend on it (the repositories' bulk write mode and what each platform was found
/// to take; Artifactory's shared descriptor read and coalescing descriptor writer per
/// platform): values by type, set by the provider when it builds its client cache
/// ([`crate::ClientCache::with_state`]) and handed to every call the adapter makes (in the
/// call's [`Cx`]). Owned by the cache, so two providers (or two test environments) in one
/// process never share it; empty by default.
pub type ProviderState = http::Extensions;

/// The empty [`ProviderState`] of a call made without a provider's ([`Cx::stateless`]).
static NO_STATE: std::sync::LazyLock<ProviderState> = std::sync::LazyLock::new(ProviderState::new);

/// The context of one [`Rest`] call: the client it is sent with and the provider's state
/// ([`ProviderState`]), which the bindings whose calls depend on it read (the
/// repositories' bulk writes, Artifactory's descriptor writer); every other binding uses
/// the client alone. A wrapping binding hands it on as it came.
#[derive(Debug, Clone, Copy)]
pub struct Cx<'a> {
    /// The client of the platform the call goes to.
    pub client: &'a JfrogClient,
    /// The provider's state (empty for a call made outside a provider).
    pub state: &'a ProviderState,
}

impl<'a> Cx<'a> {
    /// The context of a call with `client` and the provider's `state`.
    pub fn new(client: &'a JfrogClient, state: &'a ProviderState) -> Self {
        Cx { client, state }
    }

    /// The context of a call with `client` and no provider's state (an empty one): a call
    /// made outside a provider (a list, `export`, a test).
    pub fn stateless(client: &'a JfrogClient) -> Self {
        Cx {
            client,
            state: &NO_STATE,
        }
    }
}

/// How a family talks to JFrog. Errors keep `jfrog_client`'s typing: only
/// [`Error::NotFound`] means "does not exist".
#[async_trait]
pub trait Rest: Send + Sync + std::fmt::Debug {
    /// Read the object at `address` (built by the family's
    /// [`crate::hooks::Hooks::address`]; its key, parents, detail and query are what the
    /// calls need).
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error>;
    /// Create the object at `address`; returns the answer's body (for server-assigned identifiers).
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error>;
    /// Update the object at `address`.
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error>;
    /// Delete the object at `address` ([`Error::NotFound`] when already gone).
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error>;
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
    /// The list call to use on the platform of `cx`'s client, for an API that depends on the
    /// platform's version (the users list); [`Rest::list`] by default. `list()` stays the
    /// call that names the family (the snapshot's and `export`'s grouping).
    async fn list_on(&self, _cx: &Cx<'_>) -> Result<Option<ListCall>, Error> {
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
    /// For a list per parent whose last parent is an optional query parameter
    /// ([`QueryParent`]); `None` when the parents fill the list path.
    fn parent_query(&self) -> Option<QueryParent> {
        None
    }
    /// The key under which the list shows the object at `address` (`None`: the list cannot
    /// show it, so it is read by key). A per-parent list's objects are keyed
    /// `<parent>/<key member>` (the parent values joined by `/`); a binding whose address
    /// holds more (a switch) or whose list spells the key otherwise (environments listed as
    /// `<project>-<name>`) maps it here. The address's canonical form by default. An address
    /// with a query is not in the list, unless the binding has a [`QueryParent`]: then it
    /// maps its scoped addresses itself.
    fn list_key(&self, address: &Address) -> Option<String> {
        Some(address.to_string())
    }
    /// The inverse for `export`: the object's name (its external name) from the key member
    /// of a per-parent list entry under `parents`; `None` to skip the entry. The key member
    /// itself by default.
    fn listed_address(&self, _parents: &[&str], key: &str) -> Option<String> {
        Some(key.to_string())
    }
    /// Whether an object the (complete) list lacks is absent. `false` for a list that may
    /// leave out objects that exist (the promotions of one environment list each bundle
    /// version where it is now, not where it was promoted before): a listed object is
    /// observed from the list, one it lacks is read by key.
    fn list_shows_absence(&self) -> bool {
        true
    }
    /// Whether a 404 answer to a per-parent list means the platform lacks the list (an
    /// older version: observed by key, the list asked again after an hour) rather than that
    /// the parent is missing (asked again after `min(TTL, 30 s)`).
    fn list_404_is_unsupported(&self) -> bool {
        false
    }
    /// Whether a 404 answer to a per-parent list means that the parent has no object at all
    /// (a release bundle name without a version: JFrog's list of a bundle's versions and its
    /// read by key came in one version and answer alike), so each of its objects is absent as
    /// its read by key would say; otherwise (the default) they are read by key.
    fn list_404_is_empty(&self) -> bool {
        false
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
    /// For a Kind without a list call whose API answers many objects named by key in one
    /// request (an AQL search over items): the call, which names the snapshot of those
    /// reads, and how many keys one request asks for. The snapshot then asks, once per
    /// poll, for every key its MRs observed lately ([`Rest::read_many`]).
    fn read_many_call(&self) -> Option<&ReadMany> {
        None
    }
    /// Read the objects `asks` name (at most [`ReadMany::size`]) in one request: for each
    /// key the answer can tell about, the object as [`Rest::read`] would answer it, or
    /// `None` when that read would answer not found. A key left out of the answer is read
    /// by key.
    async fn read_many(
        &self,
        _cx: &Cx<'_>,
        _asks: &[Ask<'_>],
    ) -> Result<Vec<(String, Option<Value>)>, Error> {
        Ok(Vec::new())
    }
}

/// One key a [`Rest::read_many`] asks for, with the last answer the snapshot holds for it
/// (the JSON text of a read or of an earlier [`Rest::read_many`]), for an API whose search
/// answers less than its read: such a binding may answer the last read again when the
/// search shows the object unchanged.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The key.
    pub key: &'a str,
    /// The last answer about it, if the snapshot holds one.
    pub last: Option<&'a str>,
}

/// A call reading many objects by key at once ([`Rest::read_many_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadMany {
    /// The service it goes to.
    pub service: Service,
    /// Its path (it names the snapshot of the Kind's reads, as a list call's does).
    pub path: &'static str,
    /// The most keys one request asks for.
    pub size: usize,
}

impl ReadMany {
    /// The list call standing for this call in the snapshot's keying and logs (never sent:
    /// the snapshot asks [`Rest::read_many`]).
    pub const fn as_list(&self) -> ListCall {
        ListCall {
            service: self.service,
            path: self.path,
            shape: ListShape::Array,
            key_member: "",
        }
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
        address: &Address,
    ) -> jfrog_client::Request<'a> {
        let r = call_request(client, self.service, call, idem, address.key());
        address.query().iter().fold(r, |r, (n, v)| r.query(n, v))
    }
}

#[async_trait]
impl Rest for Paths {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        // The declared read only reads, whatever its verb.
        self.at(cx.client, &self.read, Idempotency::Idempotent, address)
            .reads_only()
            .send_value()
            .await
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let r = self
            .at(cx.client, &self.create, Idempotency::NonIdempotent, address)
            .json(body)
            .send()
            .await?;
        // An empty or non-JSON answer carries nothing the adapter needs.
        Ok(serde_json::from_slice(r.body()).unwrap_or(Value::Null))
    }

    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.at(cx.client, &self.update, Idempotency::Idempotent, address)
            .json(body)
            .send_empty()
            .await
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        self.at(cx.client, &self.delete, Idempotency::Idempotent, address)
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

/// Another binding with a list call: its calls as they are, its objects observed (and
/// exported) through `list`. Reads and list entries alike are converted by the Kind's
/// `decode` hook ([`crate::Hooks::decode`]).
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
    /// The last parent goes in a query parameter rather than the path, and may be unset
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

/// A per-parent list whose last parent is a query parameter, not a path parameter, and
/// optional (lifecycle stages: `GET /api/v2/stages` lists the platform's own stages,
/// `GET /api/v2/stages?project_key=team&scope=project` a project's; a release bundle name's
/// versions: `GET .../records/{name}` lists the platform's Release Bundles repository,
/// `.../records/{name}?project=team` the project's). The parents before it fill the list
/// path and are required. An MR without the optional parent is observed through the list
/// without the parameter, which has a snapshot of its own (objects keyed by the other
/// parents and their key member), and `export` lists it, for a list with no path parameter
/// before each parent's. A binding with a query parent maps the addresses it scopes
/// ([`Rest::list_key`]) to the keys of the scoped list.
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
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        self.rest.read(cx, address).await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.rest.create(cx, address, body).await
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.rest.update(cx, address, body).await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        self.rest.delete(cx, address).await
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
    fn list_key(&self, address: &Address) -> Option<String> {
        self.rest.list_key(address)
    }
    fn listed_address(&self, parents: &[&str], key: &str) -> Option<String> {
        self.rest.listed_address(parents, key)
    }
    fn list_shows_absence(&self) -> bool {
        self.rest.list_shows_absence()
    }
    fn list_404_is_unsupported(&self) -> bool {
        self.rest.list_404_is_unsupported()
    }
    fn list_404_is_empty(&self) -> bool {
        self.rest.list_404_is_empty()
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

/// A list path with query parameters appended (`/api/v2/stages?project_key=team`): a
/// snapshot's key and a label, not a URL.
fn with_query(path: String, query: &[(&str, &str)]) -> String {
    query.iter().fold(path, |mut a, (n, v)| {
        a.push(if a.contains('?') { '&' } else { '?' });
        a.push_str(n);
        a.push('=');
        a.push_str(v);
        a
    })
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
    async fn read(&self, cx: &Cx<'_>, _address: &Address) -> Result<Value, Error> {
        request(
            cx.client,
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
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.update(cx, address, body).await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        _address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        request(
            cx.client,
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
    async fn delete(&self, _cx: &Cx<'_>, _address: &Address) -> Result<(), Error> {
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
    use serde_json::json;

    /// A binding that answers what the provider's state holds (a `&str`, or null).
    #[derive(Debug)]
    struct StateProbe;

    #[async_trait]
    impl Rest for StateProbe {
        async fn read(&self, cx: &Cx<'_>, _address: &Address) -> Result<Value, Error> {
            Ok(cx.state.get::<&str>().map_or(Value::Null, |s| json!(s)))
        }
        async fn create(
            &self,
            cx: &Cx<'_>,
            address: &Address,
            _body: &Map<String, Value>,
        ) -> Result<Value, Error> {
            self.read(cx, address).await
        }
        async fn update(
            &self,
            _cx: &Cx<'_>,
            _address: &Address,
            _body: &Map<String, Value>,
        ) -> Result<(), Error> {
            Ok(())
        }
        async fn delete(&self, _cx: &Cx<'_>, _address: &Address) -> Result<(), Error> {
            Ok(())
        }
    }

    /// A wrapping binding hands the call's context on as it came: the wrapped binding sees
    /// the provider's state; a call made without one sees an empty state.
    #[test]
    fn a_wrapper_hands_the_provider_state_on() {
        static PROBE: StateProbe = StateProbe;
        let listed = Listed {
            rest: &PROBE,
            list: ListCall {
                service: Service::Access,
                path: "/api/v1/things",
                shape: ListShape::Array,
                key_member: "name",
            },
            reads_each: false,
            parents: &[],
            parent_list: None,
            parent_query: None,
        };
        let client = JfrogClient::builder("http://127.0.0.1:9")
            .build()
            .expect("client");
        let mut state = ProviderState::new();
        state.insert("the provider's");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let cx = Cx::new(&client, &state);
        assert_eq!(
            rt.block_on(listed.read(&cx, &Address::new("k")))
                .expect("read"),
            json!("the provider's")
        );
        assert_eq!(
            rt.block_on(listed.create(&cx, &Address::new("k"), &Map::new()))
                .expect("create"),
            json!("the provider's")
        );
        let stateless = Cx::stateless(&client);
        assert!(stateless.state.is_empty());
        assert_eq!(
            rt.block_on(listed.read(&stateless, &Address::new("k")))
                .expect("read"),
            Value::Null
        );
    }

    /// A key member names one member (nested by dots, a number written in decimal) or
    /// several joined by `/`, whose values are joined alike; an object lacking one of them
    /// has no key (it is not listed).
    #[test]
    fn a_key_is_one_member_or_several_joined() {
        let repo = json!({"key": "libs", "projectKey": "team", "general": {"id": 7}});
        assert_eq!(key_in(&repo, "key"), "libs");
        assert_eq!(key_in(&repo, "general.id"), "7");
        assert_eq!(key_in(&repo, "projectKey/key"), "team/libs");
        assert_eq!(key_in(&repo, "projectKey/general.id"), "team/7");
        let unassigned = json!({"key": "libs"});
        assert_eq!(key_in(&unassigned, "projectKey/key"), "");
        let empty = json!({"key": "libs", "projectKey": ""});
        assert_eq!(key_in(&empty, "projectKey/key"), "");
        assert_eq!(key_in(&unassigned, "missing"), "");
    }

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
        // After a parent filling the path (a bundle name's versions, in a project or not).
        let versions = ListCall {
            path: "/api/v2/release_bundle/records/{name}",
            ..l
        };
        let project = QueryParent {
            name: "project",
            with: &[],
        };
        assert_eq!(
            versions.path_for(Some(project), &["rb".to_string()]),
            "/api/v2/release_bundle/records/rb"
        );
        assert_eq!(
            versions.path_for(Some(project), &["rb".to_string(), "team".to_string()]),
            "/api/v2/release_bundle/records/rb?project=team"
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

    /// Follows `pager` against `serve` (a platform answering a page for a query) to its
    /// end: the objects' keys and the requests sent, or why the list is incomplete.
    fn follow(
        mut pager: Pager,
        mut serve: impl FnMut(&[(&'static str, String)]) -> Value,
    ) -> (Result<Vec<String>, &'static str>, u32) {
        let mut q = pager.first();
        loop {
            match pager.take(serve(&q)) {
                PageStep::Next(next) => q = next,
                PageStep::Done => {
                    let asked = pager.pages();
                    let keys = pager
                        .into_objects()
                        .iter()
                        .map(|o| key_in(o, "name"))
                        .collect();
                    return (Ok(keys), asked);
                }
                PageStep::Incomplete(why) => return (Err(why), pager.pages()),
            }
        }
    }

    fn param<'a>(q: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
        q.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Access v2 as JFrog pages it: sorted by name, `limit` objects after `cursor`, the
    /// page's last name as the next cursor (on every page).
    fn access(names: &[String], q: &[(&'static str, String)], max: usize) -> Value {
        let limit = param(q, "limit")
            .map_or(1000, |l| l.parse().unwrap_or(1000))
            .min(max);
        let after = param(q, "cursor");
        let page: Vec<&String> = names
            .iter()
            .filter(|n| after.is_none_or(|c| n.as_str() > c))
            .take(limit)
            .collect();
        let objects: Vec<Value> = page.iter().map(|n| json!({"name": n})).collect();
        match page.last() {
            Some(last) => json!({"groups": objects, "cursor": last}),
            None => json!({"groups": objects}),
        }
    }

    /// A SCIM list: `count` objects from the 1-based `startIndex`, with `totalResults`.
    fn scim(names: &[String], q: &[(&'static str, String)]) -> Value {
        let start: usize = param(q, "startIndex").map_or(1, |s| s.parse().unwrap_or(1));
        let count: usize = param(q, "count").map_or(20, |c| c.parse().unwrap_or(20));
        let page: Vec<Value> = names
            .iter()
            .skip(start.saturating_sub(1))
            .take(count)
            .map(|n| json!({"name": n}))
            .collect();
        json!({"totalResults": names.len(), "itemsPerPage": page.len(),
               "startIndex": start, "Resources": page})
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("obj-{i:04}")).collect()
    }

    static CURSOR: Pages = Pages {
        member: "groups",
        size: 3,
        next: Next::Cursor,
    };
    static INDEX: Pages = Pages {
        member: "Resources",
        size: 3,
        next: Next::Index,
    };

    /// A cursor-paged list asks for its largest page: what fits in one page costs one
    /// request; more objects than a page are all seen, one request per page (plus an empty
    /// last page when the objects fill the pages exactly).
    #[test]
    fn a_cursor_list_is_followed_to_its_last_page() {
        let pager = || Pager::new(CURSOR, "name");
        assert_eq!(pager().first(), vec![("limit", "3".to_string())]);
        for (n, requests) in [(0, 1), (2, 1), (3, 2), (7, 3), (9, 4)] {
            let all = names(n);
            let (keys, asked) = follow(pager(), |q| access(&all, q, usize::MAX));
            assert_eq!(keys, Ok(all.clone()), "{n} objects");
            assert_eq!(asked, requests, "{n} objects");
        }
    }

    /// A full page the platform answers without a cursor, or with the cursor it was asked
    /// with, cannot be followed: the list is incomplete, never taken as the whole list.
    #[test]
    fn a_cursor_that_cannot_be_followed_is_an_incomplete_list() {
        let all = names(7);
        let (keys, asked) = follow(Pager::new(CURSOR, "name"), |q| {
            let mut page = access(&all, q, usize::MAX);
            page.as_object_mut().map(|m| m.remove("cursor"));
            page
        });
        assert_eq!((keys, asked), (Err("a full page without a cursor"), 1));
        let (keys, _) = follow(Pager::new(CURSOR, "name"), |_| {
            access(&all, &[("limit", "3".into())], usize::MAX)
        });
        assert_eq!(keys, Err("a cursor that does not move on"));
        let (keys, _) = follow(Pager::new(CURSOR, "name"), |_| json!({"cursor": "x"}));
        assert_eq!(keys, Err("a page without its objects"));
    }

    /// A SCIM list asks for `count` objects from index 1: what fits in one page costs one
    /// request; more are all seen, each next page starting at the last object already
    /// seen; a platform capping `count` lower than asked is followed by `totalResults`.
    #[test]
    fn a_scim_list_is_followed_to_its_total() {
        let pager = || Pager::new(INDEX, "name");
        assert_eq!(
            pager().first(),
            vec![("startIndex", "1".to_string()), ("count", "3".to_string())]
        );
        for (n, requests) in [(0, 1), (3, 1), (4, 2), (5, 2), (6, 3), (9, 4)] {
            let all = names(n);
            let (keys, asked) = follow(pager(), |q| scim(&all, q));
            assert_eq!(keys, Ok(all.clone()), "{n} objects");
            assert_eq!(asked, requests, "{n} objects");
        }
        // The platform answers 2 per page whatever is asked.
        let all = names(5);
        let (keys, asked) = follow(pager(), |q| {
            let mut q = q.to_vec();
            q.retain(|(n, _)| *n != "count");
            q.push(("count", "2".into()));
            scim(&all, &q)
        });
        assert_eq!((keys, asked), (Ok(all), 4));
    }

    /// A lifecycle list: `limit` objects from the 0-based `offset`, with `total` (or
    /// without, when `total` is false).
    fn lifecycle(names: &[String], q: &[(&'static str, String)], total: bool) -> Value {
        let offset: usize = param(q, "offset").map_or(0, |s| s.parse().unwrap_or(0));
        let limit: usize = param(q, "limit").map_or(25, |c| c.parse().unwrap_or(25));
        let page: Vec<Value> = names
            .iter()
            .skip(offset)
            .take(limit)
            .map(|n| json!({"name": n}))
            .collect();
        if total {
            json!({"promotions": page, "total": names.len(), "offset": offset, "limit": limit})
        } else {
            json!({"promotions": page})
        }
    }

    static OFFSET: Pages = Pages {
        member: "promotions",
        size: 3,
        next: Next::Offset(&[("order_by", "created"), ("order_asc", "true")]),
    };

    /// An offset list asks for `limit` objects from offset 0 with its fixed parameters: what
    /// fits in one page costs one request; more are all seen, each next page starting at
    /// the last object already seen, by `total` or (without one) until a short page.
    #[test]
    fn an_offset_list_is_followed_to_its_end() {
        let pager = || Pager::new(OFFSET, "name");
        assert_eq!(
            pager().first(),
            vec![
                ("offset", "0".to_string()),
                ("limit", "3".to_string()),
                ("order_by", "created".to_string()),
                ("order_asc", "true".to_string()),
            ]
        );
        for total in [true, false] {
            for (n, with_total, without) in [(0, 1, 1), (2, 1, 1), (3, 1, 2), (4, 2, 2), (7, 3, 4)]
            {
                let all = names(n);
                let (keys, asked) = follow(pager(), |q| {
                    assert_eq!(param(q, "order_asc"), Some("true"));
                    lifecycle(&all, q, total)
                });
                assert_eq!(keys, Ok(all.clone()), "{n} objects, total {total}");
                let requests = if total { with_total } else { without };
                assert_eq!(asked, requests, "{n} objects, total {total}");
            }
        }
    }

    /// An offset list that shifts between two pages (an object before the next page
    /// deleted), or that answers no objects before its total, is incomplete.
    #[test]
    fn an_offset_list_that_shifts_between_pages_is_incomplete() {
        let mut all = names(7);
        let mut asked = 0;
        let (keys, _) = follow(Pager::new(OFFSET, "name"), |q| {
            asked += 1;
            if asked == 2 {
                all.remove(0);
            }
            lifecycle(&all, q, true)
        });
        assert_eq!(keys, Err("a list that changed between two pages"));
        let (keys, _) = follow(
            Pager::new(OFFSET, "name"),
            |_| json!({"promotions": [], "total": 2}),
        );
        assert_eq!(keys, Err("a page with no new object before the last one"));
        let (keys, _) = follow(Pager::new(OFFSET, "name"), |_| json!({"total": 2}));
        assert_eq!(keys, Err("a page without its objects"));
    }

    /// An object deleted before the page being asked for shifts the later ones by one: the
    /// next page would skip one, so the list is incomplete rather than missing it.
    #[test]
    fn a_scim_list_that_shifts_between_pages_is_incomplete() {
        let mut all = names(7);
        let mut asked = 0;
        let (keys, _) = follow(Pager::new(INDEX, "name"), |q| {
            asked += 1;
            if asked == 2 {
                all.remove(0);
            }
            scim(&all, q)
        });
        assert_eq!(keys, Err("a list that changed between two pages"));
        let (keys, _) = follow(Pager::new(INDEX, "name"), |_| json!({"Resources": []}));
        assert_eq!(keys, Err("a page without totalResults"));
    }
}
