//! The Artifactory system configuration descriptor as one shared resource per platform.
//!
//! Backups, proxies, property sets, repository layouts, LDAP settings, the mail server, the
//! trash can, OAuth, SAML and general security are not REST objects but parts of one
//! document: read whole as XML (`GET /artifactory/api/system/configuration`) and written as
//! YAML merge patches (`PATCH` of the same path; `~` removes an entry). Artifactory
//! serialises descriptor writes and answers "Could not merge and save new descriptor" to
//! overlapping ones. Each descriptor Kind's REST binding is a [`Section`] of the document,
//! and every section of a platform shares one [`Platform`], held by the provider's
//! [`Descriptors`] (in its client cache's state, never in a static, so two providers or two
//! test environments in one process never share one):
//!
//! - **Reads**: one `GET` serves every descriptor MR of the platform: the answer is parsed
//!   once into a tree and kept while it is younger than the provider's `--poll` (the TTL of
//!   the client cache's snapshot settings) and no write of ours ended since; concurrent
//!   observes wait for one fetch (single-flight). Without a TTL every observe gets a fetch
//!   that started after it asked (still shared by concurrent observes).
//! - **Writes**: a create, update or delete becomes a patch fragment queued on the
//!   platform's writer. The first writer to get the (fair) write lock waits a short window,
//!   then takes every pending fragment of its client, merges them into one YAML document and
//!   sends one `PATCH` (`jfrog-client` serialises it with other descriptor writes and retries
//!   the merge-failure answer). A rejected batch is split in halves and each half sent again,
//!   down to the single fragment the platform refuses: only its MR gets the platform's
//!   message, every other write lands.
//! - **Updates** patch from what the descriptor holds to what the MR wants: members the MR
//!   no longer sets, and entries of keyed lists it dropped (a property set's properties),
//!   are sent as `~`.
//!
//! - **Repositories** (`crate::repository::bulk`) queue their creations and updates here too,
//!   as entries of the YAML configuration's repository sections, each with its REST call as
//!   a fallback: a fragment alone in its window is made by that call instead of a patch.
//!
//! Fragments are only merged with fragments of the same JFrog client (ProviderConfig and
//! credentials): a write is never sent with another configuration's credentials.
//!
//! A call without the provider's [`Descriptors`] (a client cache built without them, a call
//! made outside a provider with [`Cx::stateless`]) gets a platform of its own: a fresh
//! read, a write sent alone.
//!
//! # Deviations
//!
//! - OAuth, SAML and general security are read from the descriptor (`security`) instead of
//!   their JSON endpoints, so that the same one `GET` per poll observes them.
//! - A section is read only through the fields its Kind declares; members the descriptor
//!   holds beyond them are neither compared nor touched.

use provider_family::rest::{CLOUD_REFUSAL, NEEDS_SELF_HOSTED as SELF_HOSTED_ONLY};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use http::Method;
use jfrog_client::{Error, Idempotency, JfrogClient, RequestContext, Service};
use provider_family::{Address, Cx, Field, ListCall, ProviderState, Rest, Ty};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use provider_family::snapshot::SnapshotSettings;

/// The descriptor's path under the Artifactory service.
pub const PATH: &str = "/api/system/configuration";

/// How long the first writer waits for more fragments before sending.
const WINDOW: Duration = Duration::from_millis(25);

/// Lists whose elements the YAML patch keys by a member (the XML has them as repeated
/// elements; the patch as a map from that member to the rest of the element).
const KEYED_LISTS: &[(&str, &str)] = &[
    ("properties", "name"),
    ("predefinedValues", "value"),
    ("oauthProvidersSettings", "name"),
];

/// Where a Kind lives in the descriptor.
#[derive(Debug, Clone, Copy)]
pub enum Place {
    /// One entry of a keyed section (`backups`, `security.ldapSettings`): the XML element
    /// `path` holds one child per entry, whose `key_member` is its key.
    Keyed {
        /// The section (dots for nesting).
        path: &'static str,
        /// The member holding the key.
        key_member: &'static str,
    },
    /// A fixed block; `at` is where the Kind's wire members start (empty: the root).
    Block {
        /// The block (dots for nesting; empty for the root).
        at: &'static str,
        /// The member whose presence says the block exists (dots for nesting, relative to
        /// `at`); `None`: it always exists.
        exists: Option<&'static str>,
    },
}

/// What a delete does.
#[derive(Debug, Clone, Copy)]
pub enum Delete {
    /// Removes the entry or block (`~`).
    Remove,
    /// Writes this YAML fragment (relative to the block): a reset to defaults.
    Reset(&'static str),
    /// Nothing (the platform keeps the settings).
    Keep,
}

/// One descriptor Kind's REST binding.
#[derive(Debug)]
pub struct Section {
    /// The Kind it serves (named in the message a platform without a descriptor gets).
    pub kind: &'static str,
    /// Where it lives.
    pub place: Place,
    /// Its fields (wire names are YAML/XML member names, relative to the place).
    pub fields: &'static [Field],
    /// What a delete does.
    pub delete: Delete,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn ctx(method: Method) -> RequestContext {
    RequestContext {
        service: Service::Artifactory,
        method,
        route: format!("/artifactory{PATH}"),
    }
}

/// The error of a platform that refuses the descriptor (`message`: JFrog's answer).
fn self_hosted_only(status: u16, kind: &str, message: &str) -> Error {
    Error::BadRequest {
        ctx: ctx(Method::GET),
        status,
        message: provider_family::rest::needs_self_hosted(
            kind,
            "the system configuration descriptor",
            message,
        ),
    }
}

fn not_found(what: &str) -> Error {
    Error::NotFound {
        ctx: ctx(Method::GET),
        message: format!("{what} is not in the configuration descriptor"),
    }
}

// ---------------------------------------------------------------------------------------
// The XML tree.

/// An XML element: its name, text and child elements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// The element name.
    pub name: String,
    /// Its text (trimmed).
    pub text: String,
    /// Its child elements, in order.
    pub children: Vec<Node>,
}

impl Node {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The element at a dotted path below this one (empty: this one).
    pub fn at(&self, path: &str) -> Option<&Node> {
        if path.is_empty() {
            return Some(self);
        }
        path.split('.').try_fold(self, |n, p| n.child(p))
    }
}

/// Parse an XML document into its root element.
pub fn parse_xml(text: &[u8]) -> Result<Node, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(text);
    let mut stack: Vec<Node> = vec![Node::default()];
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => stack.push(Node {
                name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                ..Node::default()
            }),
            Ok(Event::Empty(e)) => {
                let n = Node {
                    name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    ..Node::default()
                };
                if let Some(top) = stack.last_mut() {
                    top.children.push(n);
                }
            }
            Ok(Event::End(_)) => {
                let mut n = stack.pop().ok_or("unbalanced XML")?;
                n.text = n.text.trim().to_string();
                stack.last_mut().ok_or("unbalanced XML")?.children.push(n);
            }
            Ok(Event::Text(t)) => {
                let s = t.decode().map_err(|e| e.to_string())?;
                let s = quick_xml::escape::unescape(&s).map_err(|e| e.to_string())?;
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&s);
                }
            }
            Ok(Event::CData(t)) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Ok(Event::GeneralRef(r)) => {
                let name = String::from_utf8_lossy(&r).into_owned();
                let s = quick_xml::escape::unescape(&format!("&{name};"))
                    .map_err(|e| e.to_string())?
                    .into_owned();
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&s);
                }
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("invalid XML at {}: {e}", reader.buffer_position())),
        }
        buf.clear();
    }
    let doc = stack.pop().ok_or("empty XML")?;
    doc.children
        .into_iter()
        .next()
        .ok_or_else(|| "empty XML".into())
}

/// The wire JSON of `node` through `fields` (only declared members, typed as declared).
pub fn typed(fields: &[Field], node: &Node) -> Map<String, Value> {
    let mut out = Map::new();
    for f in fields {
        let Some(wire) = f.wire else { continue };
        let Some(n) = node.at(wire) else { continue };
        let v = match f.ty {
            Ty::Str => Value::String(n.text.clone()),
            Ty::Bool => Value::Bool(n.text.eq_ignore_ascii_case("true")),
            Ty::Int => match n.text.parse::<i64>() {
                Ok(i) => Value::from(i),
                Err(_) => continue,
            },
            Ty::Num => match n.text.parse::<f64>() {
                Ok(x) => Value::from(x),
                Err(_) => continue,
            },
            Ty::List | Ty::Set => Value::Array(
                n.children
                    .iter()
                    .map(|c| Value::String(c.text.clone()))
                    .collect(),
            ),
            Ty::Block(children) | Ty::Object(children) => Value::Object(typed(children, n)),
            Ty::ObjList(children) | Ty::ObjSet(children) => Value::Array(
                n.children
                    .iter()
                    .map(|c| Value::Object(typed(children, c)))
                    .collect(),
            ),
            Ty::Map(_) => Value::Object(
                n.children
                    .iter()
                    .map(|c| (c.name.clone(), Value::String(c.text.clone())))
                    .collect(),
            ),
        };
        set_path(&mut out, wire, v);
    }
    out
}

fn set_path(m: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        None => {
            m.insert(path.to_string(), v);
        }
        Some((head, rest)) => {
            let e = m
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !e.is_object() {
                *e = Value::Object(Map::new());
            }
            if let Value::Object(inner) = e {
                set_path(inner, rest, v);
            }
        }
    }
}

/// A wire body in YAML-patch shape: keyed lists become maps by their key member.
pub fn to_patch_shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let keyed = KEYED_LISTS.iter().find(|(n, _)| n == k).map(|(_, m)| *m);
                    let v = match (keyed, v) {
                        (Some(member), Value::Array(items)) => Value::Object(
                            items
                                .iter()
                                .filter_map(|e| {
                                    let key = e.get(member)?.as_str()?.to_string();
                                    let mut rest = to_patch_shape(e);
                                    if let Value::Object(r) = &mut rest {
                                        r.remove(member);
                                    }
                                    Some((key, rest))
                                })
                                .collect(),
                        ),
                        _ => to_patch_shape(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The merge patch that turns `current` into `want` (members and keyed entries `want`
/// lacks become `null`; lists are replaced whole).
pub fn merge_diff(current: &Value, want: &Value) -> Value {
    match (current, want) {
        (Value::Object(c), Value::Object(w)) => {
            let mut out = Map::new();
            for (k, v) in w {
                match c.get(k) {
                    Some(cv) if cv == v => {}
                    Some(cv) => {
                        out.insert(k.clone(), merge_diff(cv, v));
                    }
                    None => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            for k in c.keys() {
                if !w.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(out)
        }
        _ => want.clone(),
    }
}

/// Deep-merge `patch` into `into` (later fragments win on the same member).
fn merge_into(into: &mut Value, patch: Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(slot) if slot.is_object() && v.is_object() => merge_into(slot, v),
                    _ => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// `value` nested under the dotted `path` (empty: as is).
fn nest(path: &str, value: Value) -> Value {
    path.rsplit('.')
        .filter(|p| !p.is_empty())
        .fold(value, |v, p| {
            let mut m = Map::new();
            m.insert(p.to_string(), v);
            Value::Object(m)
        })
}

// ---------------------------------------------------------------------------------------
// One platform: the shared read and the coalescing writer.

/// JFrog Cloud's refusal of the descriptor, kept like an answer (for the poll, so that every
/// descriptor MR of the platform shares one `GET` per poll instead of each retrying it).
struct Refused {
    status: u16,
    message: String,
    sent: Instant,
}

struct Cached {
    tree: Arc<Node>,
    /// When the request was sent.
    sent: Instant,
    /// The write generation when it was sent.
    generation: u64,
}

/// A write that can also be made by its own REST call (a repository's `PUT`/`POST`): taken
/// when it is the only fragment of its window, so a lone write costs what it costs without
/// the descriptor.
pub type Fallback = Box<
    dyn FnOnce(
            JfrogClient,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), Error>> + Send>>
        + Send,
>;

struct Pending {
    patch: Value,
    fallback: Option<Fallback>,
    /// `Ok(true)`: written by a descriptor patch; `Ok(false)`: by its fallback.
    answer: oneshot::Sender<Result<bool, Error>>,
}

/// The descriptor of one JFrog client (ProviderConfig and credentials).
pub struct Platform {
    client: JfrogClient,
    /// The TTL of the shared read (the provider's `--poll`).
    settings: Arc<SnapshotSettings>,
    cached: Mutex<Option<Cached>>,
    refused: Mutex<Option<Refused>>,
    fetch: tokio::sync::Mutex<()>,
    write: tokio::sync::Mutex<()>,
    pending: Mutex<Vec<Pending>>,
    generation: Mutex<u64>,
}

impl std::fmt::Debug for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("descriptor::Platform")
    }
}

/// The descriptors of one provider: every platform (JFrog client) its descriptor Kinds and
/// bulk repository writes talk to, each with its shared read and coalescing writer, and the
/// TTL of the shared read (the provider's `--poll`: its client cache's snapshot settings).
/// The provider's client cache holds it ([`provider_family::ClientCache::with_state`], see
/// [`crate::client_cache`]) and hands it to every call of a descriptor Kind and every bulk
/// repository write, so two providers, or two test environments, in one process never
/// share it. Clones share the state.
#[derive(Clone)]
pub struct Descriptors {
    platforms: Arc<Mutex<Vec<Arc<Platform>>>>,
    settings: Arc<SnapshotSettings>,
}

impl std::fmt::Debug for Descriptors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Descriptors")
            .field("ttl", &self.settings.ttl())
            .finish_non_exhaustive()
    }
}

impl Descriptors {
    /// No platform known yet; reads shared while younger than the TTL of `settings` (a
    /// client cache's [`provider_family::ClientCache::snapshot_settings`]; none: every
    /// observe gets a fetch that started after it asked).
    pub fn new(settings: Arc<SnapshotSettings>) -> Self {
        Descriptors {
            platforms: Arc::default(),
            settings,
        }
    }

    /// The descriptors a provider's state holds (`None`: each call gets a platform of its
    /// own, see [`platform`]).
    pub fn of(state: &ProviderState) -> Option<&Descriptors> {
        state.get::<Descriptors>()
    }

    /// The platform of `client`.
    pub fn platform(&self, client: &JfrogClient) -> Arc<Platform> {
        let mut all = lock(&self.platforms);
        if let Some(p) = all.iter().find(|p| p.client.same(client)) {
            return p.clone();
        }
        let p = Arc::new(Platform {
            client: client.clone(),
            settings: self.settings.clone(),
            cached: Mutex::new(None),
            refused: Mutex::new(None),
            fetch: tokio::sync::Mutex::new(()),
            write: tokio::sync::Mutex::new(()),
            pending: Mutex::new(Vec::new()),
            generation: Mutex::new(0),
        });
        all.push(p.clone());
        p
    }
}

/// The platform of `client` in the descriptors of `state`; without them, one of its own for
/// this call only (no TTL: a fresh read; a write alone in its window).
pub fn platform(state: &ProviderState, client: &JfrogClient) -> Arc<Platform> {
    match Descriptors::of(state) {
        Some(d) => d.platform(client),
        None => Descriptors::new(Arc::default()).platform(client),
    }
}

impl Platform {
    fn generation(&self) -> u64 {
        *lock(&self.generation)
    }

    /// How long a read serves (`None`: only readers that asked before it was sent).
    fn ttl(&self) -> Option<Duration> {
        self.settings.ttl()
    }

    /// A usable cached refusal (JFrog Cloud) for a reader that asked at `asked`.
    fn refusal(&self, asked: Instant) -> Option<Error> {
        let r = lock(&self.refused);
        let r = r.as_ref()?;
        let fresh = match self.ttl() {
            Some(ttl) => r.sent.elapsed() <= ttl,
            None => r.sent >= asked,
        };
        fresh.then(|| self_hosted_only(r.status, "", &r.message))
    }

    /// A usable cached tree for a reader that asked at `asked`.
    fn usable(&self, asked: Instant) -> Option<Arc<Node>> {
        let c = lock(&self.cached);
        let c = c.as_ref()?;
        if c.generation != self.generation() {
            return None;
        }
        let fresh = match self.ttl() {
            Some(ttl) => c.sent.elapsed() <= ttl,
            None => c.sent >= asked,
        };
        fresh.then(|| c.tree.clone())
    }

    /// The descriptor, from the shared answer when it can serve, else from one fetch.
    pub async fn tree(&self) -> Result<Arc<Node>, Error> {
        let asked = Instant::now();
        if let Some(t) = self.usable(asked) {
            return Ok(t);
        }
        if let Some(e) = self.refusal(asked) {
            return Err(e);
        }
        let _flight = self.fetch.lock().await;
        if let Some(t) = self.usable(asked) {
            return Ok(t);
        }
        if let Some(e) = self.refusal(asked) {
            return Err(e);
        }
        let generation = self.generation();
        let sent = Instant::now();
        let r = match self
            .client
            .request(
                Service::Artifactory,
                Method::GET,
                PATH,
                Idempotency::Idempotent,
            )
            .header("Accept", "application/xml")
            .send()
            .await
        {
            Err(Error::BadRequest {
                status, message, ..
            }) if message.contains(CLOUD_REFUSAL) => {
                let e = self_hosted_only(status, "", &message);
                *lock(&self.refused) = Some(Refused {
                    status,
                    message,
                    sent,
                });
                return Err(e);
            }
            r => r?,
        };
        *lock(&self.refused) = None;
        let tree = Arc::new(
            parse_xml(r.body()).map_err(|message| Error::UnexpectedStatus {
                ctx: ctx(Method::GET),
                status: r.status(),
                message,
            })?,
        );
        *lock(&self.cached) = Some(Cached {
            tree: tree.clone(),
            sent,
            generation,
        });
        Ok(tree)
    }

    /// Queue `patch` and wait until the batch carrying it is answered.
    pub async fn write(&self, patch: Value) -> Result<(), Error> {
        self.write_or(patch, None).await.map(|_| ())
    }

    /// Queue `patch` and wait until the batch carrying it is answered; when it is the only
    /// fragment of its window and has a `fallback`, the fallback is made instead. `Ok(true)`:
    /// a descriptor patch carried it; `Ok(false)`: its fallback did.
    pub async fn write_or(&self, patch: Value, fallback: Option<Fallback>) -> Result<bool, Error> {
        let (tx, mut rx) = oneshot::channel();
        lock(&self.pending).push(Pending {
            patch,
            fallback,
            answer: tx,
        });
        let guard = self.write.lock().await;
        if let Ok(r) = rx.try_recv() {
            return r;
        }
        tokio::time::sleep(WINDOW).await;
        let mut batch: Vec<Pending> = std::mem::take(&mut *lock(&self.pending));
        match batch.pop() {
            Some(Pending {
                fallback: Some(f),
                answer,
                ..
            }) if batch.is_empty() => {
                let _ = answer.send(f(self.client.clone()).await.map(|()| false));
            }
            Some(last) => {
                batch.push(last);
                self.send_batch(batch).await;
            }
            None => {}
        }
        *lock(&self.generation) += 1;
        drop(guard);
        rx.await.unwrap_or_else(|_| {
            Err(Error::UnexpectedStatus {
                ctx: ctx(Method::PATCH),
                status: 0,
                message: "the descriptor writer stopped".into(),
            })
        })
    }

    /// Send a batch as one patch; on a refusal, split it to find the offender.
    async fn send_batch(&self, batch: Vec<Pending>) {
        let mut queue = vec![batch];
        while let Some(b) = queue.pop() {
            if b.is_empty() {
                continue;
            }
            let mut doc = Value::Object(Map::new());
            for p in &b {
                merge_into(&mut doc, p.patch.clone());
            }
            match self.patch(&doc).await {
                Ok(()) => {
                    for p in b {
                        let _ = p.answer.send(Ok(true));
                    }
                }
                Err(e) if b.len() > 1 && matches!(e, Error::BadRequest { .. }) => {
                    tracing::info!(
                        batch = b.len(),
                        "descriptor patch refused, splitting the batch"
                    );
                    let mut b = b;
                    let second = b.split_off(b.len() / 2);
                    queue.push(second);
                    queue.push(b);
                }
                Err(e) => {
                    let shared = Arc::new(e);
                    for p in b {
                        let _ = p.answer.send(Err(copy_error(&shared)));
                    }
                }
            }
        }
    }

    async fn patch(&self, doc: &Value) -> Result<(), Error> {
        let yaml = serde_yaml::to_string(doc).map_err(|e| Error::InvalidRequest {
            ctx: ctx(Method::PATCH),
            message: e.to_string(),
        })?;
        self.client
            .request(
                Service::Artifactory,
                Method::PATCH,
                PATH,
                Idempotency::Idempotent,
            )
            .descriptor_write()
            .text(yaml, "application/yaml")
            .send_empty()
            .await
    }
}

/// One error for each MR of a batch that failed as a whole (errors are not `Clone`).
fn copy_error(e: &Error) -> Error {
    let c = ctx(Method::PATCH);
    match e {
        Error::BadRequest {
            status, message, ..
        } => Error::BadRequest {
            ctx: c,
            status: *status,
            message: message.clone(),
        },
        Error::NotFound { message, .. } => Error::NotFound {
            ctx: c,
            message: message.clone(),
        },
        Error::Unauthorized { message, .. } => Error::Unauthorized {
            ctx: c,
            message: message.clone(),
        },
        Error::Forbidden { message, .. } => Error::Forbidden {
            ctx: c,
            message: message.clone(),
        },
        Error::Conflict { message, .. } => Error::Conflict {
            ctx: c,
            message: message.clone(),
        },
        Error::Server {
            status, message, ..
        } => Error::Server {
            ctx: c,
            status: *status,
            message: message.clone(),
        },
        other => Error::UnexpectedStatus {
            ctx: c,
            status: 0,
            message: other.to_string(),
        },
    }
}

// ---------------------------------------------------------------------------------------
// The REST binding of one section.

impl Section {
    /// The wire JSON of `key` in `tree`, if present.
    pub fn find(&self, tree: &Node, key: &str) -> Option<Map<String, Value>> {
        match self.place {
            Place::Keyed { path, key_member } => {
                let section = tree.at(path)?;
                let entry = section
                    .children
                    .iter()
                    .find(|c| c.child(key_member).is_some_and(|k| k.text == key))?;
                let mut m = typed(self.fields, entry);
                m.insert(key_member.to_string(), Value::String(key.to_string()));
                Some(m)
            }
            Place::Block { at, exists } => {
                let block = tree.at(at)?;
                if let Some(e) = exists {
                    let n = block.at(e)?;
                    if n.text.is_empty() && n.children.is_empty() {
                        return None;
                    }
                }
                Some(typed(self.fields, block))
            }
        }
    }

    /// The patch that makes `key` hold `body` (from `current`).
    fn patch(
        &self,
        key: &str,
        current: Option<&Map<String, Value>>,
        body: &Map<String, Value>,
    ) -> Value {
        let mut want = body.clone();
        let mut cur = current.cloned().unwrap_or_default();
        let (path, nested_key) = match self.place {
            Place::Keyed { path, key_member } => {
                want.remove(key_member);
                cur.remove(key_member);
                (path, Some(key))
            }
            Place::Block { at, .. } => (at, None),
        };
        let want = to_patch_shape(&Value::Object(want));
        let diff = match current {
            Some(_) => merge_diff(&to_patch_shape(&Value::Object(cur)), &want),
            None => want,
        };
        let inner = match nested_key {
            Some(k) => {
                let mut m = Map::new();
                m.insert(k.to_string(), diff);
                Value::Object(m)
            }
            None => diff,
        };
        nest(path, inner)
    }

    async fn put(
        &self,
        p: &Platform,
        key: &str,
        body: &Map<String, Value>,
        create: bool,
    ) -> Result<(), Error> {
        let current = if create {
            None
        } else {
            self.find(&*p.tree().await.map_err(|e| self.named(e))?, key)
        };
        p.write(self.patch(key, current.as_ref(), body)).await
    }
}

impl Section {
    /// Names the Kind in the error of a platform without a descriptor.
    fn named(&self, e: Error) -> Error {
        match e {
            Error::BadRequest {
                status, message, ..
            } if message.starts_with(SELF_HOSTED_ONLY) => {
                let jfrog = message
                    .split_once(" descriptor (")
                    .map_or(message.as_str(), |(_, m)| m.trim_end_matches(')'));
                self_hosted_only(status, self.kind, jfrog)
            }
            e => e,
        }
    }
}

impl Section {
    async fn read_at(&self, p: &Platform, key: &str) -> Result<Value, Error> {
        let tree = p.tree().await.map_err(|e| self.named(e))?;
        self.find(&tree, key)
            .map(Value::Object)
            .ok_or_else(|| not_found(key))
    }

    async fn delete_at(&self, p: &Platform, key: &str) -> Result<(), Error> {
        let patch = match (self.place, self.delete) {
            (_, Delete::Keep) => return Ok(()),
            (Place::Keyed { path, .. }, _) => {
                if self
                    .find(&*p.tree().await.map_err(|e| self.named(e))?, key)
                    .is_none()
                {
                    return Err(not_found(key));
                }
                let mut m = Map::new();
                m.insert(key.to_string(), Value::Null);
                nest(path, Value::Object(m))
            }
            (Place::Block { at, .. }, Delete::Remove) => nest(at, Value::Null),
            (Place::Block { at, .. }, Delete::Reset(yaml)) => {
                let v: Value = serde_yaml::from_str(yaml).map_err(|e| Error::InvalidRequest {
                    ctx: ctx(Method::PATCH),
                    message: e.to_string(),
                })?;
                nest(at, v)
            }
        };
        p.write(patch).await
    }
}

/// The calls go through the platform of the [`Descriptors`] in the provider's state
/// ([`Cx::state`]); without them (a call made outside a provider), through a platform of
/// their own (see [`platform`]).
#[async_trait]
impl Rest for Section {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let key = address.key();
        self.read_at(&platform(cx.state, cx.client), key).await
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let key = address.key();
        self.put(&platform(cx.state, cx.client), key, body, true)
            .await?;
        Ok(Value::Null)
    }

    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let key = address.key();
        self.put(&platform(cx.state, cx.client), key, body, false)
            .await
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let key = address.key();
        self.delete_at(&platform(cx.state, cx.client), key).await
    }

    fn list(&self) -> Option<&ListCall> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn xml_is_read_through_the_declared_fields() {
        let xml = br#"<?xml version="1.0"?><config xmlns="http://artifactory.jfrog.org/xsd/3.1.0">
          <backups><backup><key>b1</key><enabled>true</enabled><cronExp>0 0 2 ? * *</cronExp>
          <retentionPeriodHours>168</retentionPeriodHours><excludedRepositories><repositoryRef>a</repositoryRef><repositoryRef>b &amp; c</repositoryRef></excludedRepositories></backup></backups>
          </config>"#;
        let tree = parse_xml(xml).expect("parses");
        const FIELDS: &[Field] = &[
            Field::new("enabled", "enabled", Some("enabled"), Ty::Bool),
            Field::new("cronExp", "cron_exp", Some("cronExp"), Ty::Str),
            Field::new(
                "retentionPeriodHours",
                "r",
                Some("retentionPeriodHours"),
                Ty::Int,
            ),
            Field::new(
                "excludedRepositories",
                "e",
                Some("excludedRepositories"),
                Ty::List,
            ),
        ];
        let s = Section {
            kind: "Backup",
            place: Place::Keyed {
                path: "backups",
                key_member: "key",
            },
            fields: FIELDS,
            delete: Delete::Remove,
        };
        let got = s.find(&tree, "b1").expect("found");
        assert_eq!(
            Value::Object(got),
            json!({"enabled": true, "cronExp": "0 0 2 ? * *", "retentionPeriodHours": 168,
                   "excludedRepositories": ["a", "b & c"], "key": "b1"})
        );
        assert!(s.find(&tree, "b2").is_none());
    }

    #[test]
    fn each_client_cache_holds_its_own_descriptors() {
        use crate::repository::bulk::BulkMode;
        let connections = provider_common::Connections::default();
        let one = crate::client_cache(&connections, BulkMode::Off);
        let two = crate::client_cache(&connections, BulkMode::Off);
        one.set_snapshot_ttl(Some(Duration::from_secs(60)));
        let client = JfrogClient::builder("http://jfrog.example")
            .build()
            .expect("client");
        let p = Descriptors::of(one.state())
            .expect("the provider's descriptors")
            .platform(&client);
        assert!(Arc::ptr_eq(&p, &platform(one.state(), &client)));
        assert_eq!(p.ttl(), Some(Duration::from_secs(60)));
        // Another provider's (or test environment's) is its own.
        let q = platform(two.state(), &client);
        assert!(!Arc::ptr_eq(&p, &q));
        assert_eq!(q.ttl(), None);
        // Without descriptors, each call gets a platform of its own.
        let bare = provider_family::ClientCache::new(crate::PROVIDER);
        assert!(Descriptors::of(bare.state()).is_none());
        let r = platform(bare.state(), &client);
        assert!(!Arc::ptr_eq(&r, &platform(bare.state(), &client)));
    }

    #[test]
    fn updates_patch_from_the_current_entry() {
        let cur = json!({"visible": true, "properties": [{"name": "a", "multipleChoice": false}, {"name": "b"}]});
        let want = json!({"visible": true, "properties": [{"name": "a", "multipleChoice": true}]});
        let d = merge_diff(&to_patch_shape(&cur), &to_patch_shape(&want));
        assert_eq!(
            d,
            json!({"properties": {"a": {"multipleChoice": true}, "b": null}})
        );
        assert_eq!(
            nest("security.ldapSettings", json!({"k": null})),
            json!({"security": {"ldapSettings": {"k": null}}})
        );
        let mut doc = json!({});
        merge_into(&mut doc, json!({"backups": {"a": {"enabled": true}}}));
        merge_into(
            &mut doc,
            json!({"backups": {"b": {"enabled": false}}, "proxies": {"p": null}}),
        );
        assert_eq!(
            doc,
            json!({"backups": {"a": {"enabled": true}, "b": {"enabled": false}}, "proxies": {"p": null}})
        );
    }
}
