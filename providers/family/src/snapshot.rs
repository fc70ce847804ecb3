//! Observation by list: one shared snapshot of every object of a family per JFrog client
//! (ProviderConfig and credentials) and list call, so that N MRs of a family observed in
//! one poll interval cost one list request (`GET /artifactory/api/repositories/configurations`,
//! `GET /event/api/v1/subscriptions`, ...) instead of N reads by key. The examples below
//! speak of repositories, the first family; every family with a list call gets the same
//! rules.
//!
//! # Rules (correctness first)
//!
//! - The snapshot is refreshed at most once per TTL (the provider's `--poll`, given to the
//!   cache by the registrations when their controllers start), by whichever observe first
//!   finds it older than the TTL; concurrent observes wait for that one fetch
//!   (single-flight) instead of fetching themselves.
//! - A configuration is used only when it is no older than the MR's own poll interval (its
//!   `crossplane.io/poll-interval` annotation, raised to `--min-poll-interval`, capped by the
//!   TTL). Older means a direct `GET`.
//! - A key the snapshot lacks is reported missing without a `GET` only when the snapshot is
//!   fresh for the MR (no older than its poll interval) and nothing since says otherwise: no
//!   write of ours to the key since the fetch, and no `GET` that found the key while a
//!   snapshot lacked it (such keys, e.g. repositories the token's bulk answer does not show,
//!   are always read by `GET` until a snapshot shows them), and the MR does not say its
//!   object was created (`crossplane.io/external-create-succeeded`: another replica, such as
//!   a shard's earlier owner, may have created it after the fetch, and its write marks are
//!   not ours; such an MR is read by `GET`, checked in the adapter). This saves a `GET`
//!   per new MR.
//!   It cannot make a duplicate: Artifactory refuses to create a key that exists ("Case
//!   insensitive repository key already exists"); should a repository have been created
//!   elsewhere between the fetch and the create, that create fails, its write mark sends
//!   the next observe to `GET`, and the MR adopts the repository.
//! - Catching up after many writes: when at least [`CATCH_UP_WRITES`] of our writes of the
//!   family (and one per sixteen objects the snapshot holds, so that churn on a large family
//!   keeps reading by key) ended since the snapshot was fetched (a bulk creation), an
//!   observe of a key written since then refreshes the list instead of reading the key: one
//!   list request
//!   sent after the write ended answers for every key written before it (concurrent
//!   observes wait for that one fetch), where reads by key would cost one request per
//!   object. Fewer writes keep the read by key (a list answer is larger than one object).
//! - Our own writes invalidate: create, update and delete mark the key (shared by every
//!   client of the cache, so a rotated credential's new client sees the marks of the old
//!   one) while the write is in flight and with its end time afterwards. A key written
//!   after the snapshot was fetched (or being written) is read by `GET`; that read replaces
//!   the key's entry, so later observes use it again. A read (snapshot or `GET`) counts from the instant its request
//!   was sent, so a write ending after that instant always wins.
//! - A failed refresh falls back to `GET` and is retried after `min(TTL, 30 s)`. A platform
//!   without the endpoint (404) or a token without the admin right it needs (403) is probed
//!   again after an hour; meanwhile every observe uses `GET`.
//!
//! Staleness bound: a configuration is never older than the poll interval when it is used,
//! so a change made in JFrog at time t is seen by every observe after t + poll (in practice
//! by the MR's first or second poll after the change; one `GET` per poll sees it at the
//! first).
//!
//! Memory: one compact JSON text per repository, keyed by the lower-cased key (Artifactory
//! keys are case-insensitive). The answer is decoded one configuration at a time, so no
//! parsed copy of the whole answer is held; each observe parses its own configuration
//! (microseconds) into the `Value` the adapter compares. Plus one small write mark per key
//! this process wrote (kept for the life of the process: marks are shared by every client,
//! so none can tell when a mark stopped mattering to all of them).
//!
//! Lists that show only which objects exist (a name and a link per user or group,
//! [`crate::rest::Rest::list_reads_each`]): the snapshot then says only "absent" (the rules
//! above) or "present, read it"; the read by key serves the MR's poll like any entry. An
//! object the last answer showed is read without refreshing the list (the list would add
//! nothing), so the list is fetched (at most once per TTL) only for keys not known to exist:
//! MRs whose object is not created yet or is gone. Steady state: one read per MR. A
//! list call that depends on the platform ([`crate::rest::Rest::list_on`], e.g. the users
//! API by Artifactory version) is chosen at each refresh.
//!
//! Lists per parent (a project's roles, environments and members: a list path with
//! parameters, [`crate::rest::Listed::parents`]): the parameters come from fields of the
//! MR, and there is one snapshot per filled path (per project) and client, so N objects of
//! one project cost one list per poll and project. Listed objects are keyed
//! `<parent>/<key member>`, which is the canonical form of the address the family builds
//! for them (or what the binding's [`Rest::list_key`] maps an address to); the rules above
//! hold per snapshot. A
//! 404 answer to a parent's list means the parent is missing, not that the platform lacks
//! the call: its objects are read by key (which finds them missing, and a create then fails
//! with JFrog's "Project '...' was not found" and is retried), and the list is asked again
//! after `min(TTL, 30 s)`. A parent carried by an optional query parameter
//! ([`crate::rest::QueryParent`], a project's lifecycle stages, the project of a release
//! bundle or of a promotion) works alike, after any parents filling the path, and an MR
//! without it uses the list without it (its own snapshot, objects keyed by the other parents
//! and their key member).
//!
//! A list that may leave out objects that exist ([`Rest::list_shows_absence`] false: the
//! promotions of one environment list each bundle version where it is now) answers only for
//! the objects it shows; one it lacks is read by key (whose "not found" then serves the MR's
//! poll interval like any entry). A per-parent list whose 404 means an older platform
//! ([`Rest::list_404_is_unsupported`]) is then asked again after an hour, not after
//! `min(TTL, 30 s)`.
//! A per-parent list whose 404 means that the parent has no object
//! ([`Rest::list_404_is_empty`]: the versions of a release bundle name that has none) is
//! taken as an empty list.
//!
//! Paged lists ([`crate::rest::ListShape::Pages`]: the Access v2 users, groups and
//! permissions, the SCIM users and groups) are asked for with the largest page JFrog allows
//! and followed page by page within one refresh, so one request while every object fits in
//! one page. A list whose pages cannot be followed to the end (a full page without a cursor,
//! a SCIM list that shifted between two pages) is not used: the refresh counts as failed
//! and the objects are read by key, since an object past the pages seen is not absent.
//!
//! Reads of many keys at once ([`crate::rest::Rest::read_many`]: a Kind without a list
//! whose API answers many objects named by key in one request, such as an AQL search over
//! items): a refresh asks for every key looked up within the last two TTLs, so a poll
//! costs one request per [`crate::rest::ReadMany::size`] keys. Such an answer tells only
//! about the keys it asked for: a key it did not ask (a new MR) or left out is read by key,
//! never taken as absent for want of an answer; a key it says is gone is absent under the
//! rules above. There is no catch-up refresh after writes: a written key is read by key
//! until the next refresh.
//!
//! # Deviations
//!
//! - Platforms without `GET /api/repositories/configurations` are observed by one `GET`
//!   per MR, not through the per-class list: the list carries no configuration, and
//!   `jfrog-client`'s fallback (the list plus one `GET` per repository on the platform,
//!   managed or not) costs more than one `GET` per MR. The endpoint is therefore called
//!   directly rather than through `Repositories::list_configurations`.
//! - The endpoint has no paging: one answer holds every configuration.
//! - The snapshot is used whenever it is enabled, even for a single MR on a platform with
//!   many repositories (one large answer instead of one small one per poll).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use jfrog_client::JfrogClient;
use provider_runtime::managed::kind::{KindInfo, Scope};
use provider_runtime::managed::meta;
use provider_runtime::managed::registration::{ControllerContext, KindRegistration};
use serde::Deserialize;
use serde_json::Value;

use crate::rest::{Cx, ListCall, ListShape, Rest};
/// The longest wait before a failed refresh is tried again.
const FAILURE_RETRY: Duration = Duration::from_secs(30);
/// How long a platform that lacks the endpoint (or refuses it) is not asked again.
const UNSUPPORTED_RETRY: Duration = Duration::from_secs(3600);
/// Writes ended since the snapshot's fetch from which an observe of a written key refreshes
/// the list rather than reading the key (see the module docs).
pub const CATCH_UP_WRITES: u64 = 8;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The snapshot settings shared by every client of a [`super::ClientCache`].
#[derive(Debug)]
pub struct SnapshotSettings {
    inner: Mutex<Settings>,
}

#[derive(Debug, Clone, Copy)]
struct Settings {
    ttl: Option<Duration>,
    min_poll: Duration,
}

impl Default for SnapshotSettings {
    fn default() -> Self {
        SnapshotSettings {
            inner: Mutex::new(Settings {
                ttl: None,
                min_poll: provider_runtime::managed::registration::DEFAULT_MIN_POLL_INTERVAL,
            }),
        }
    }
}

impl SnapshotSettings {
    /// The TTL; `None` disables the snapshot (every observe is a `GET`).
    pub fn ttl(&self) -> Option<Duration> {
        lock(&self.inner).ttl
    }

    /// Set the TTL (`None` disables the snapshot).
    pub fn set_ttl(&self, ttl: Option<Duration>) {
        lock(&self.inner).ttl = ttl.filter(|t| !t.is_zero());
    }

    /// Use the provider's `--poll` as TTL and its `--min-poll-interval` as the floor of the
    /// per-MR poll-interval annotation.
    pub fn use_poll(&self, poll: Duration, min_poll: Duration) {
        let mut s = lock(&self.inner);
        s.ttl = Some(poll).filter(|t| !t.is_zero());
        s.min_poll = min_poll;
    }

    /// How old an answer may be for an MR with these annotations; `None` when disabled.
    pub fn max_age(&self, annotations: &BTreeMap<String, String>) -> Option<Duration> {
        let s = *lock(&self.inner);
        let ttl = s.ttl?;
        Some(meta::effective_poll(annotations, ttl, s.min_poll).min(ttl))
    }
}

/// Our own writes to the objects of one family (by key, lower-cased where keys are
/// case-insensitive).
#[derive(Debug, Default)]
pub struct WriteMarks {
    marks: Mutex<HashMap<String, Mark>>,
    /// How many writes ended so far (any key).
    ended: std::sync::atomic::AtomicU64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Mark {
    in_flight: u32,
    last_end: Option<Instant>,
}

impl WriteMarks {
    /// Mark `key` as being written until the guard is dropped (also when the write's future
    /// is cancelled, since a cancelled write may have committed).
    pub fn begin(self: &Arc<Self>, key: &str) -> WriteGuard {
        let key = key.to_string();
        lock(&self.marks).entry(key.clone()).or_default().in_flight += 1;
        WriteGuard {
            marks: self.clone(),
            key,
        }
    }

    fn get(&self, key: &str) -> Mark {
        lock(&self.marks).get(key).copied().unwrap_or_default()
    }

    /// How many writes ended so far.
    fn ended(&self) -> u64 {
        self.ended.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// Ends a write mark when dropped.
#[derive(Debug)]
pub struct WriteGuard {
    marks: Arc<WriteMarks>,
    key: String,
}

impl Drop for WriteGuard {
    fn drop(&mut self) {
        let mut marks = lock(&self.marks.marks);
        let m = marks.entry(std::mem::take(&mut self.key)).or_default();
        m.in_flight = m.in_flight.saturating_sub(1);
        m.last_end = Some(Instant::now());
        self.marks
            .ended
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }
}

#[derive(Debug)]
struct Entry {
    /// The configuration as compact JSON text (a parsed `Value` costs several times its
    /// text); `None`: a `GET` answered not found after the snapshot was fetched (a
    /// tombstone, so that no older read brings the key back).
    json: Option<Arc<str>>,
    /// The (lower-cased) name of the answer's group, for an object without the member
    /// the group names (a repository without `rclass`).
    group: Option<Arc<str>>,
    /// When the request that read it was sent.
    read_at: Instant,
    /// Whether it comes from a list answer (rather than a read by key): for a list that
    /// shows only which objects exist, such an entry says "present, read it".
    listed: bool,
}

/// One configuration of the bulk answer, kept as compact JSON text: the answer is decoded
/// one configuration at a time, so no parsed copy of the whole answer is ever held.
struct Compact {
    /// As the object has it; empty when it has none.
    key: String,
    json: Box<str>,
}

/// Decodes a [`Compact`] taking its key from the named member.
struct CompactSeed(&'static str);

impl<'de> serde::de::DeserializeSeed<'de> for CompactSeed {
    type Value = Compact;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Compact, D::Error> {
        let v = Value::deserialize(d)?;
        let key = crate::rest::key_in(&v, self.0);
        let json = serde_json::to_string(&v).map_err(serde::de::Error::custom)?;
        Ok(Compact {
            key,
            json: json.into_boxed_str(),
        })
    }
}

/// Decodes a JSON array of [`Compact`]s one element at a time.
struct ArraySeed(&'static str);

impl<'de> serde::de::DeserializeSeed<'de> for ArraySeed {
    type Value = Vec<Compact>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<Compact>, D::Error> {
        struct V(&'static str);
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vec<Compact>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of objects")
            }
            fn visit_unit<E>(self) -> Result<Vec<Compact>, E> {
                Ok(Vec::new())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vec<Compact>, A::Error> {
                let mut out = Vec::new();
                while let Some(c) = seq.next_element_seed(CompactSeed(self.0))? {
                    out.push(c);
                }
                Ok(out)
            }
        }
        d.deserialize_any(V(self.0))
    }
}

/// Decodes an object of arrays (the grouped answer), keeping each group's name.
struct GroupsSeed(&'static str);

impl<'de> serde::de::DeserializeSeed<'de> for GroupsSeed {
    type Value = Vec<(String, Vec<Compact>)>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct V(&'static str);
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vec<(String, Vec<Compact>)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of arrays")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(group) = map.next_key::<String>()? {
                    out.push((group, map.next_value_seed(ArraySeed(self.0))?));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V(self.0))
    }
}

/// Decodes the array under one member of an object (`{"tokens": [...]}`); `None` when the
/// object lacks it.
struct WrappedSeed(&'static str, &'static str);

impl<'de> serde::de::DeserializeSeed<'de> for WrappedSeed {
    type Value = Option<Vec<Compact>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct V(&'static str, &'static str);
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Option<Vec<Compact>>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object holding an array")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = None;
                while let Some(member) = map.next_key::<String>()? {
                    if member == self.0 {
                        out = Some(map.next_value_seed(ArraySeed(self.1))?);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V(self.0, self.1))
    }
}

#[derive(Debug, Default)]
struct State {
    /// When the request of the current snapshot was sent.
    fetched_at: Option<Instant>,
    /// [`WriteMarks::ended`] when that request was sent.
    ended_at_fetch: u64,
    entries: HashMap<String, Entry>,
    /// When the last refresh failed, and whether because the platform lacks (or refuses)
    /// the endpoint.
    failed: Option<(Instant, bool)>,
    /// Keys a `GET` found while the snapshot lacked them: never reported missing from the
    /// snapshot alone, until a snapshot shows them.
    hidden: HashSet<String>,
    /// For reads of many keys at once ([`Rest::read_many`]): each key looked up lately, with
    /// when; a refresh asks for these.
    interest: HashMap<String, Instant>,
}

/// What the snapshot says about a key.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// Its configuration, fresh enough.
    Found(Arc<Value>),
    /// It does not exist (the snapshot is fresh and nothing since says otherwise).
    Absent,
    /// The snapshot cannot tell: read it with `GET`.
    Unknown,
}

/// The shared snapshot of one JFrog client and list call.
pub struct Snapshot {
    settings: Arc<SnapshotSettings>,
    marks: Arc<WriteMarks>,
    list: ListCall,
    case_insensitive: bool,
    /// The binding that chooses the list call per platform ([`Rest::list_on`]).
    rest: Option<&'static dyn Rest>,
    /// The list shows only which objects exist ([`Rest::list_reads_each`]).
    reads_each: bool,
    /// No list: the objects are read many at a time by key ([`Rest::read_many`]), this many
    /// per request; 0 for a list.
    many: usize,
    /// An object the list lacks is absent ([`Rest::list_shows_absence`]); otherwise it is
    /// read by key.
    shows_absence: bool,
    /// A 404 to a per-parent list means the platform lacks it
    /// ([`Rest::list_404_is_unsupported`]).
    unsupported_404: bool,
    /// A 404 to a per-parent list means the parent has no object
    /// ([`Rest::list_404_is_empty`]).
    empty_404: bool,
    /// The values filling a per-parent list's path parameters ([`Rest::list_parents`]);
    /// empty for a list of the whole platform.
    parents: Vec<String>,
    /// What the listed keys are prefixed with: the parents joined by `/`, then `/`.
    prefix: String,
    state: Mutex<State>,
    flight: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Snapshot {
    // Not the objects: thousands of them, with encrypted secret forms.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = lock(&self.state);
        f.debug_struct("Snapshot")
            .field("list", &self.list.path)
            .field("parents", &self.parents)
            .field("objects", &st.entries.len())
            .field("age", &st.fetched_at.map(|t| t.elapsed()))
            .finish()
    }
}

impl Snapshot {
    /// An empty snapshot of what `list` answers, using these settings and the family's
    /// write marks.
    pub fn new(
        settings: Arc<SnapshotSettings>,
        marks: Arc<WriteMarks>,
        list: ListCall,
        case_insensitive: bool,
    ) -> Self {
        Snapshot {
            settings,
            marks,
            list,
            case_insensitive,
            rest: None,
            reads_each: false,
            many: 0,
            shows_absence: true,
            unsupported_404: false,
            empty_404: false,
            parents: Vec::new(),
            prefix: String::new(),
            state: Mutex::default(),
            flight: tokio::sync::Mutex::new(()),
        }
    }

    /// Make this the snapshot of one parent's list: `parents` fill the list path's
    /// parameters, and each listed object is keyed `<parents joined by '/'>/<key member>`
    /// (the canonical form of the address the family's `address` hook builds, or what
    /// [`Rest::list_key`] maps it to). A 404 answer then means the parent is missing (not
    /// that the platform lacks the call): its objects are read by key, and the list is asked
    /// again after `min(TTL, 30 s)`.
    pub fn with_parents(mut self, parents: Vec<String>) -> Self {
        self.prefix = parents.iter().fold(String::new(), |mut p, v| {
            p.push_str(v);
            p.push('/');
            p
        });
        if self.case_insensitive {
            self.prefix.make_ascii_lowercase();
        }
        self.parents = parents;
        self
    }

    /// Take the list call from `rest` on each refresh ([`Rest::list_on`]), and when its list
    /// shows only which objects exist ([`Rest::list_reads_each`]), use the snapshot only to
    /// know that an object is absent: a listed one is read by key (the read then serves the
    /// MR's poll interval like any entry).
    pub fn with_rest(mut self, rest: &'static dyn Rest) -> Self {
        self.reads_each = rest.list_reads_each();
        if rest.list().is_none() {
            self.many = rest.read_many_call().map_or(0, |m| m.size.max(1));
        }
        // Reads of many keys tell nothing of a key they did not ask for: a key without an
        // entry is never absent.
        self.shows_absence = rest.list_shows_absence() && self.many == 0;
        self.unsupported_404 = rest.list_404_is_unsupported();
        self.empty_404 = rest.list_404_is_empty();
        self.rest = Some(rest);
        self
    }

    /// How old an answer may be for an MR with these annotations; `None` when disabled.
    pub fn max_age(&self, annotations: &BTreeMap<String, String>) -> Option<Duration> {
        self.settings.max_age(annotations)
    }

    /// Mark `key` as written by us until the guard is dropped.
    pub fn begin_write(&self, key: &str) -> WriteGuard {
        self.marks.begin(&self.norm(key))
    }

    /// The key as the snapshot indexes it.
    fn norm(&self, key: &str) -> String {
        if self.case_insensitive {
            key.to_ascii_lowercase()
        } else {
            key.to_string()
        }
    }

    /// How many objects the current snapshot holds.
    pub fn len(&self) -> usize {
        lock(&self.state).entries.len()
    }

    /// The bytes of configuration text and keys held (a lower bound of the memory used).
    pub fn stored_bytes(&self) -> usize {
        lock(&self.state)
            .entries
            .iter()
            .map(|(k, e)| k.len() + e.json.as_deref().map_or(0, str::len))
            .sum()
    }

    /// Whether the snapshot holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the snapshot knows of `key` within `max_age` (refreshing it first when it is
    /// older than the TTL): its configuration when one no older than `max_age` and newer
    /// than our last write to it is at hand, [`Lookup::Absent`] under the rule of the module
    /// docs, else [`Lookup::Unknown`]: read it with `GET` (and give the result to
    /// [`Self::record_read`]).
    pub async fn lookup(&self, client: &JfrogClient, key: &str, max_age: Duration) -> Lookup {
        let key = self.norm(key);
        if self.many > 0 {
            lock(&self.state)
                .interest
                .insert(key.clone(), Instant::now());
        }
        let known = self.known(&key, max_age);
        if !matches!(known, Lookup::Unknown) {
            return known;
        }
        // A list that shows only which objects exist can tell nothing a read of an object
        // known to exist would not tell better: it is fetched for the others (new MRs,
        // objects gone), so that steady state costs one read per MR and no list.
        if self.reads_each && self.shown(&key) {
            return Lookup::Unknown;
        }
        if self.needs_refresh(Instant::now()) {
            self.refresh(client, None).await;
            return self.known(&key, max_age);
        }
        if let Some(written) = self.catch_up(&key) {
            self.refresh(client, Some(written)).await;
            return self.known(&key, max_age);
        }
        Lookup::Unknown
    }

    /// When `key` was written (the write has ended) after the snapshot was fetched and at
    /// least [`CATCH_UP_WRITES`] writes ended since that fetch: the end of its last write,
    /// which a list refresh must start after to answer for it.
    fn catch_up(&self, key: &str) -> Option<Instant> {
        // A list of names only would send the key to a read anyway; reads of many keys
        // answer only for the keys they asked.
        if self.reads_each || self.many > 0 {
            return None;
        }
        self.settings.ttl()?;
        let mark = self.marks.get(key);
        let written = mark.last_end.filter(|_| mark.in_flight == 0)?;
        let st = lock(&self.state);
        if st.failed.is_some() || st.fetched_at.is_none_or(|f| f >= written) {
            return None;
        }
        // A list answer grows with the objects it holds: the writes it catches up must be
        // worth it (a few per sixteen objects), so churn on a large family is read by key.
        let worth = CATCH_UP_WRITES.max(st.entries.len() as u64 / 16);
        (self.marks.ended().saturating_sub(st.ended_at_fetch) >= worth).then_some(written)
    }

    /// Whether the last answer about `key` (a list or a read) showed it.
    fn shown(&self, key: &str) -> bool {
        lock(&self.state)
            .entries
            .get(key)
            .is_some_and(|e| e.json.is_some())
    }

    /// Keep the result of a direct `GET` of `key` sent at `read_at` (`None`: not found), so
    /// that the next observes of the key use it.
    pub fn record_read(&self, key: &str, value: Option<&Value>, read_at: Instant) {
        let key = self.norm(key);
        let mark = self.marks.get(&key);
        // A read that overlapped one of our writes may show either state.
        if mark.in_flight > 0 || mark.last_end.is_some_and(|w| w >= read_at) {
            return;
        }
        let mut st = lock(&self.state);
        let newer = match st.entries.get(&key) {
            Some(e) => e.read_at < read_at,
            None => st.fetched_at.is_none_or(|f| f < read_at),
        };
        if newer {
            let shown = st.entries.get(&key).is_some_and(|e| e.json.is_some());
            if value.is_some() && !shown && st.fetched_at.is_some() {
                st.hidden.insert(key.clone());
            }
            let json = value.map(|v| Arc::from(v.to_string()));
            st.entries.insert(
                key,
                Entry {
                    json,
                    group: None,
                    read_at,
                    listed: false,
                },
            );
        }
    }

    fn known(&self, key: &str, max_age: Duration) -> Lookup {
        let mark = self.marks.get(key);
        if mark.in_flight > 0 {
            return Lookup::Unknown;
        }
        let now = Instant::now();
        let usable =
            |at: Instant| mark.last_end.is_none_or(|w| at > w) && now.duration_since(at) <= max_age;
        let (json, group) = {
            let st = lock(&self.state);
            match st.entries.get(key) {
                // Listed, but the list lacks its details: read it.
                Some(e) if e.listed && self.reads_each && e.json.is_some() => {
                    return Lookup::Unknown;
                }
                Some(e) if usable(e.read_at) => match &e.json {
                    Some(json) => (json.clone(), e.group.clone()),
                    // A `GET` answered not found after our last write.
                    None => return Lookup::Absent,
                },
                Some(_) => return Lookup::Unknown,
                None => {
                    let fresh = st.fetched_at.is_some_and(usable);
                    return if fresh && self.shows_absence && !st.hidden.contains(key) {
                        Lookup::Absent
                    } else {
                        Lookup::Unknown
                    };
                }
            }
        };
        let Ok(mut v) = serde_json::from_str::<Value>(&json) else {
            return Lookup::Unknown;
        };
        if let (ListShape::Grouped(member), Some(group), Some(obj)) =
            (self.list.shape, group, v.as_object_mut())
        {
            obj.entry(member)
                .or_insert_with(|| Value::String(group.to_string()));
        }
        Lookup::Found(Arc::new(v))
    }

    fn needs_refresh(&self, now: Instant) -> bool {
        let Some(ttl) = self.settings.ttl() else {
            return false;
        };
        let st = lock(&self.state);
        if let Some((at, unsupported)) = st.failed {
            let wait = if unsupported {
                UNSUPPORTED_RETRY
            } else {
                ttl.min(FAILURE_RETRY)
            };
            if now.duration_since(at) < wait {
                return false;
            }
        }
        st.fetched_at.is_none_or(|f| now.duration_since(f) > ttl)
    }

    /// Fetch the list again, when it is older than the TTL or, with `after`, when it was
    /// sent before that instant (a catch-up after our writes).
    async fn refresh(&self, client: &JfrogClient, after: Option<Instant>) {
        let _flight = self.flight.lock().await;
        // Another observe refreshed (or failed to) while this one waited.
        let due = match after {
            None => self.needs_refresh(Instant::now()),
            Some(w) => {
                let st = lock(&self.state);
                st.failed.is_none() && st.fetched_at.is_none_or(|f| f < w)
            }
        };
        if !due {
            return;
        }
        let ended_before = self.marks.ended();
        let started = Instant::now();
        if let (Some(rest), true) = (self.rest, self.many > 0) {
            self.refresh_many(client, rest, started, ended_before).await;
            return;
        }
        let list = match self.rest {
            Some(rest) => rest.list_on(&Cx::stateless(client)).await,
            None => Ok(Some(self.list)),
        };
        let list = match list {
            Ok(Some(l)) => l,
            Ok(None) => {
                lock(&self.state).failed = Some((Instant::now(), true));
                return;
            }
            Err(e) => {
                tracing::warn!(list = self.list.path, error = %e, "cannot choose the list call, observing by key");
                lock(&self.state).failed = Some((Instant::now(), false));
                return;
            }
        };
        let query = self.rest.and_then(|r| r.parent_query());
        let answer = list.fetch(client, query, &self.parents).await;
        let indexed = match answer {
            Ok(listing) => {
                let Some(body) = listing.body() else {
                    // Objects past the pages seen would be taken as absent.
                    if let crate::rest::Listing::Incomplete(why, pages) = listing {
                        tracing::warn!(
                            list = self.list.path,
                            reason = why,
                            pages,
                            "cannot follow the list's pages to the end, observing by key"
                        );
                    }
                    lock(&self.state).failed = Some((Instant::now(), false));
                    return;
                };
                // Unchanged configurations keep the text the old snapshot holds: the old and
                // the new snapshot share it instead of both being in memory at once.
                let previous: HashMap<String, Arc<str>> = lock(&self.state)
                    .entries
                    .iter()
                    .filter_map(|(k, e)| Some((k.clone(), e.json.clone()?)))
                    .collect();
                index_reusing(
                    &list,
                    self.case_insensitive,
                    &self.prefix,
                    body,
                    started,
                    &previous,
                )
                .ok_or(
                    "expected an array, an object of arrays, an object holding an array, or a page holding every object",
                )
            }
            // The parent has no object: each is absent, as its read by key would answer.
            Err(e) if e.is_not_found() && !self.parents.is_empty() && self.empty_404 => {
                tracing::debug!(list = self.list.path, parents = ?self.parents, "the parent has no object");
                Ok(HashMap::new())
            }
            Err(e) if e.is_not_found() && !self.parents.is_empty() && !self.unsupported_404 => {
                tracing::info!(list = self.list.path, parents = ?self.parents, "parent not found, observing its objects by key");
                lock(&self.state).failed = Some((Instant::now(), false));
                return;
            }
            Err(e) if e.is_not_found() || matches!(e, jfrog_client::Error::Forbidden { .. }) => {
                tracing::info!(list = self.list.path, error = %e, "list unavailable, observing by key for an hour");
                lock(&self.state).failed = Some((Instant::now(), true));
                return;
            }
            Err(e) => {
                tracing::warn!(list = self.list.path, error = %e, "cannot read the list, observing by key");
                lock(&self.state).failed = Some((Instant::now(), false));
                return;
            }
        };
        let mut entries = match indexed {
            Ok(e) => e,
            Err(msg) => {
                tracing::warn!(
                    list = self.list.path,
                    error = msg,
                    "cannot decode the list, observing by key"
                );
                lock(&self.state).failed = Some((Instant::now(), false));
                return;
            }
        };
        tracing::debug!(
            list = self.list.path,
            objects = entries.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "list read"
        );
        let mut st = lock(&self.state);
        // Reads by key sent after this fetch began are newer than its answer.
        for (k, e) in std::mem::take(&mut st.entries) {
            if e.read_at > started {
                entries.insert(k, e);
            }
        }
        st.hidden.retain(|k| !entries.contains_key(k));
        st.entries = entries;
        st.fetched_at = Some(started);
        st.ended_at_fetch = ended_before;
        st.failed = None;
    }

    /// A refresh of a Kind read many at a time: ask for every key looked up within the last
    /// two TTLs (keys of MRs gone are forgotten after that), [`Self::many`] keys per request.
    /// Each answer counts from `started`, as a list's does; a key an answer did not tell
    /// about is read by key. A failed request leaves its keys to reads by key, and the
    /// refresh is tried again after `min(TTL, 30 s)`.
    async fn refresh_many(
        &self,
        client: &JfrogClient,
        rest: &'static dyn Rest,
        started: Instant,
        ended_before: u64,
    ) {
        let window = self.settings.ttl().unwrap_or(FAILURE_RETRY) * 2;
        let keys: Vec<String> = {
            let mut st = lock(&self.state);
            st.interest
                .retain(|_, at| started.saturating_duration_since(*at) <= window);
            let mut keys: Vec<String> = st.interest.keys().cloned().collect();
            keys.sort_unstable();
            keys
        };
        let cx = Cx::stateless(client);
        let mut entries = HashMap::new();
        let mut failed = false;
        for chunk in keys.chunks(self.many) {
            let last: Vec<Option<Arc<str>>> = {
                let st = lock(&self.state);
                chunk
                    .iter()
                    .map(|k| st.entries.get(k).and_then(|e| e.json.clone()))
                    .collect()
            };
            let asks: Vec<crate::rest::Ask<'_>> = chunk
                .iter()
                .zip(&last)
                .map(|(key, last)| crate::rest::Ask {
                    key,
                    last: last.as_deref(),
                })
                .collect();
            match rest.read_many(&cx, &asks).await {
                Ok(answers) => {
                    for (key, value) in answers {
                        let key = self.norm(&key);
                        if !chunk.contains(&key) {
                            continue;
                        }
                        let json = value.map(|v| Arc::from(v.to_string()));
                        entries.insert(
                            key,
                            Entry {
                                json,
                                group: None,
                                read_at: started,
                                listed: true,
                            },
                        );
                    }
                }
                Err(e) => {
                    tracing::warn!(call = self.list.path, keys = chunk.len(), error = %e, "cannot read many, reading them by key");
                    failed = true;
                }
            }
        }
        tracing::debug!(
            call = self.list.path,
            keys = keys.len(),
            answered = entries.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "read many"
        );
        let mut st = lock(&self.state);
        for (k, e) in std::mem::take(&mut st.entries) {
            if e.read_at > started {
                entries.insert(k, e);
            }
        }
        st.entries = entries;
        st.fetched_at = Some(started);
        st.ended_at_fetch = ended_before;
        st.failed = failed.then(|| (Instant::now(), false));
    }
}

/// The list answer (an array, or for [`ListShape::Grouped`] an object of arrays or an
/// array) by key, each with the lower-cased name of its group. `None` for any other shape.
#[cfg(test)]
fn index(list: &ListCall, body: &[u8], read_at: Instant) -> Option<HashMap<String, Entry>> {
    index_reusing(list, true, "", body, read_at, &HashMap::new())
}

/// [`index`], taking the text of an object from `previous` when it is the same.
fn index_reusing(
    list: &ListCall,
    case_insensitive: bool,
    prefix: &str,
    body: &[u8],
    read_at: Instant,
    previous: &HashMap<String, Arc<str>>,
) -> Option<HashMap<String, Entry>> {
    use serde::de::DeserializeSeed;
    let mut out = HashMap::new();
    let mut push = |c: Compact, group: Option<Arc<str>>| {
        if !c.key.is_empty() {
            let key = if case_insensitive {
                format!("{prefix}{}", c.key.to_ascii_lowercase())
            } else if prefix.is_empty() {
                c.key
            } else {
                format!("{prefix}{}", c.key)
            };
            let json = match previous.get(&key) {
                Some(old) if **old == *c.json => Some(old.clone()),
                _ => Some(Arc::from(c.json)),
            };
            out.insert(
                key,
                Entry {
                    json,
                    group,
                    read_at,
                    listed: true,
                },
            );
        }
    };
    let grouped = match list.shape {
        ListShape::Grouped(_) => GroupsSeed(list.key_member)
            .deserialize(&mut serde_json::Deserializer::from_slice(body))
            .ok(),
        ListShape::Wrapped(member) | ListShape::Pages(&crate::rest::Pages { member, .. }) => {
            if let Some(objects) = WrappedSeed(member, list.key_member)
                .deserialize(&mut serde_json::Deserializer::from_slice(body))
                .ok()
                .flatten()
            {
                objects.into_iter().for_each(|c| push(c, None));
                return Some(out);
            }
            None
        }
        ListShape::Paged(page) => {
            let answer: serde_json::Value = serde_json::from_slice(body).ok()?;
            let objects = serde_json::to_vec(&page.objects(&answer)?).ok()?;
            let objects = ArraySeed(list.key_member)
                .deserialize(&mut serde_json::Deserializer::from_slice(&objects))
                .ok()?;
            objects.into_iter().for_each(|c| push(c, None));
            return Some(out);
        }
        ListShape::One => {
            let one = CompactSeed(list.key_member)
                .deserialize(&mut serde_json::Deserializer::from_slice(body))
                .ok()?;
            push(
                Compact {
                    key: list.key_member.to_string(),
                    json: one.json,
                },
                None,
            );
            return Some(out);
        }
        ListShape::Array => None,
    };
    if let Some(groups) = grouped {
        for (group, objects) in groups {
            let group: Arc<str> = Arc::from(group.to_ascii_lowercase());
            objects
                .into_iter()
                .for_each(|c| push(c, Some(group.clone())));
        }
    } else {
        let objects = ArraySeed(list.key_member)
            .deserialize(&mut serde_json::Deserializer::from_slice(body))
            .ok()?;
        objects.into_iter().for_each(|c| push(c, None));
    }
    Some(out)
}

/// A registration that hands the controller's `--poll` and `--min-poll-interval` to the
/// snapshot settings when its controller starts, then runs the wrapped registration.
pub struct PollAwareRegistration {
    inner: Arc<dyn KindRegistration>,
    settings: Arc<SnapshotSettings>,
}

impl PollAwareRegistration {
    /// Wrap `inner`; `settings` are those of the client cache its connector uses.
    pub fn new(inner: Arc<dyn KindRegistration>, settings: Arc<SnapshotSettings>) -> Self {
        PollAwareRegistration { inner, settings }
    }
}

impl KindRegistration for PollAwareRegistration {
    fn info(&self) -> &KindInfo {
        self.inner.info()
    }
    fn parameters_schema(&self) -> Value {
        self.inner.parameters_schema()
    }
    fn observation_schema(&self) -> Value {
        self.inner.observation_schema()
    }
    fn start(
        &self,
        ctx: ControllerContext,
        scope: Scope,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>> {
        self.settings.use_poll(ctx.poll, ctx.min_poll_interval);
        self.inner.start(ctx, scope)
    }
    fn preview(
        &self,
        input: provider_runtime::managed::preview::PreviewInput,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = provider_runtime::managed::preview::Planned>
                + Send
                + 'static,
        >,
    > {
        self.inner.preview(input)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const LIST: ListCall = ListCall {
        service: jfrog_client::Service::Artifactory,
        path: "/api/repositories/configurations",
        shape: ListShape::Grouped("rclass"),
        key_member: "key",
    };

    fn index(body: &[u8], read_at: Instant) -> Option<HashMap<String, Entry>> {
        super::index(&LIST, body, read_at)
    }

    fn index_reusing(
        body: &[u8],
        read_at: Instant,
        previous: &HashMap<String, Arc<str>>,
    ) -> Option<HashMap<String, Entry>> {
        super::index_reusing(&LIST, true, "", body, read_at, previous)
    }

    fn snapshot() -> Snapshot {
        let settings = Arc::new(SnapshotSettings::default());
        settings.set_ttl(Some(Duration::from_secs(3600)));
        Snapshot::new(settings, Arc::default(), LIST, true)
    }

    const HOUR: Duration = Duration::from_secs(3600);

    /// A client whose every request fails (nothing listens on port 9 of loopback), so a list
    /// that was asked leaves `failed` set; and a runtime to drive it.
    fn failing_client() -> (JfrogClient, tokio::runtime::Runtime) {
        let client = JfrogClient::builder("http://127.0.0.1:9")
            .credentials(jfrog_client::Credentials::access_token("t".to_string()))
            .build()
            .expect("client");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        (client, rt)
    }

    fn found(s: &Snapshot, key: &str, max_age: Duration) -> Option<Arc<Value>> {
        match s.known(key, max_age) {
            Lookup::Found(v) => Some(v),
            _ => None,
        }
    }

    /// Keys may be nested (`general_data.name`) or numbers (written in decimal).
    #[test]
    fn a_page_is_used_only_when_it_holds_every_object() {
        static PAGE: crate::rest::Page = crate::rest::Page {
            query: &[("page_num", "1")],
            member: "data",
            total: "total_count",
            post: None,
        };
        let paged = ListCall {
            shape: ListShape::Paged(&PAGE),
            key_member: "id",
            ..LIST
        };
        let got = super::index(
            &paged,
            br#"{"total_count": 2, "data": [{"id": "a"}, {"id": "b"}]}"#,
            Instant::now(),
        )
        .expect("indexed");
        assert_eq!(got.len(), 2);
        // A page short of the total would make the missing objects look gone.
        assert!(
            super::index(
                &paged,
                br#"{"total_count": 3, "data": [{"id": "a"}, {"id": "b"}]}"#,
                Instant::now(),
            )
            .is_none()
        );
        assert!(super::index(&paged, br#"[{"id": "a"}]"#, Instant::now()).is_none());
    }

    #[test]
    fn nested_and_numeric_keys_are_indexed() {
        let nested = ListCall {
            key_member: "general_data.name",
            ..LIST
        };
        let got = super::index(
            &nested,
            br#"[{"general_data": {"name": "Watch-A"}}, {"general_data": {}}]"#,
            Instant::now(),
        )
        .expect("indexed");
        assert_eq!(got.keys().collect::<Vec<_>>(), vec!["watch-a"]);
        let numeric = ListCall {
            key_member: "id",
            ..LIST
        };
        let got = super::index(&numeric, br#"[{"id": 12}, {"id": "x-1"}]"#, Instant::now())
            .expect("indexed");
        let mut keys: Vec<_> = got.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, vec!["12", "x-1"]);
    }

    #[test]
    fn a_key_the_fresh_snapshot_lacks_is_absent_unless_something_says_otherwise() {
        let s = snapshot();
        // No snapshot yet: unknown.
        assert!(matches!(s.known("k", HOUR), Lookup::Unknown));
        let fetched = Instant::now();
        lock(&s.state).fetched_at = Some(fetched);
        assert!(matches!(s.known("k", HOUR), Lookup::Absent));
        // Too old for the MR's poll interval.
        assert!(matches!(s.known("k", Duration::ZERO), Lookup::Unknown));
        // Our write since the fetch: unknown, during and after it.
        let guard = s.begin_write("k");
        assert!(matches!(s.known("k", HOUR), Lookup::Unknown));
        drop(guard);
        assert!(matches!(s.known("k", HOUR), Lookup::Unknown));
        // A GET that found a key the snapshot lacked: never absent from the snapshot alone...
        s.record_read("h", Some(&json!({"key": "h"})), Instant::now());
        assert!(found(&s, "h", HOUR).is_some());
        lock(&s.state).entries.clear();
        assert!(matches!(s.known("h", HOUR), Lookup::Unknown));
        // ...until a snapshot shows it.
        let shown = index(br#"[{"key": "h"}]"#, Instant::now()).expect("indexed");
        let mut st = lock(&s.state);
        st.hidden.retain(|k| !shown.contains_key(k));
        assert!(st.hidden.is_empty());
    }

    #[test]
    fn the_bulk_answer_is_indexed_by_lower_cased_key_with_its_class() {
        let now = Instant::now();
        let grouped = json!({
            "LOCAL": [{"key": "Libs-Local", "packageType": "maven"}],
            "REMOTE": [{"key": "npm-remote", "rclass": "remote"}],
            "RELEASE_BUNDLE": [],
            "VIRTUAL": [{"packageType": "npm"}],
        });
        let bytes = |v: Value| serde_json::to_vec(&v).expect("json");
        let idx = index(&bytes(grouped), now).expect("indexed");
        assert_eq!(idx.len(), 2);
        assert_eq!(idx["libs-local"].group.as_deref(), Some("local"));
        let s = Snapshot::new(Arc::default(), Arc::default(), LIST, true);
        lock(&s.state).entries = idx;
        let local = found(&s, "libs-local", HOUR).expect("value");
        assert_eq!(local["rclass"], "local");
        assert_eq!(local["key"], "Libs-Local");
        assert_eq!(local["packageType"], "maven");
        let flat = index(&bytes(json!([{"key": "a", "rclass": "virtual"}])), now).expect("indexed");
        assert_eq!(flat["a"].group, None);
        assert!(
            flat["a"]
                .json
                .as_deref()
                .is_some_and(|j| j.contains("virtual"))
        );
        assert!(index(&bytes(json!("nope")), now).is_none());
    }

    #[test]
    fn a_refresh_shares_the_text_of_unchanged_configurations() {
        let now = Instant::now();
        let body = |d: &str| {
            serde_json::to_vec(&json!([{"key": "same"}, {"key": "changed", "description": d}]))
                .expect("json")
        };
        let first = index(&body("a"), now).expect("indexed");
        let previous: HashMap<String, Arc<str>> = first
            .iter()
            .filter_map(|(k, e)| Some((k.clone(), e.json.clone()?)))
            .collect();
        let second = index_reusing(&body("b"), now, &previous).expect("indexed");
        let text = |m: &HashMap<String, Entry>, k: &str| m[k].json.clone().expect("text");
        assert!(Arc::ptr_eq(&text(&first, "same"), &text(&second, "same")));
        assert!(!Arc::ptr_eq(
            &text(&first, "changed"),
            &text(&second, "changed")
        ));
        assert!(text(&second, "changed").contains("\"b\""));
    }

    #[test]
    fn reads_overlapping_our_writes_are_not_used() {
        let s = snapshot();
        let v = json!({"key": "k"});
        let guard = s.begin_write("K");
        s.record_read("k", Some(&v), Instant::now());
        assert!(found(&s, "k", HOUR).is_none(), "read during the write");
        let before_end = Instant::now();
        drop(guard);
        s.record_read("k", Some(&v), before_end);
        assert!(
            found(&s, "k", HOUR).is_none(),
            "read sent before the write ended"
        );
        s.record_read("k", Some(&v), Instant::now());
        assert!(found(&s, "k", HOUR).is_some());
        // Older than the MR's poll interval: not used.
        assert!(found(&s, "k", Duration::ZERO).is_none());
        // A later "not found" is a tombstone no older read brings back.
        let gone = Instant::now();
        s.record_read("k", None, gone);
        s.record_read("k", Some(&v), gone - Duration::from_millis(1));
        assert!(found(&s, "k", HOUR).is_none());
    }

    /// `{"tokens": [...]}` is indexed like an array; a plain array too.
    #[test]
    fn a_wrapped_answer_is_indexed_by_the_array_it_holds() {
        let wrapped = ListCall {
            shape: ListShape::Wrapped("tokens"),
            key_member: "token_id",
            ..LIST
        };
        let now = Instant::now();
        let got = super::index(
            &wrapped,
            br#"{"cursor": "x", "tokens": [{"token_id": "a"}, {"token_id": "b"}], "more": [1]}"#,
            now,
        )
        .expect("indexed");
        let mut keys: Vec<_> = got.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, vec!["a", "b"]);
        assert!(got["a"].listed);
        let plain = super::index(&wrapped, br#"[{"token_id": "c"}]"#, now).expect("indexed");
        assert!(plain.contains_key("c"));
        assert!(super::index(&wrapped, br#"{"other": []}"#, now).is_none_or(|m| m.is_empty()));
    }

    /// An array list answered by an object (an older Artifactory's summaries of release
    /// bundle cleanup policies, `{"policies": [...]}`, which lack the settings) is no list:
    /// nothing is taken for absent, the objects are read by key.
    #[test]
    fn an_object_answer_to_an_array_list_is_no_list() {
        let array = ListCall {
            shape: ListShape::Array,
            ..LIST
        };
        let now = Instant::now();
        let summaries = br#"{"policies": [{"policyKey": "k1", "enabled": true}]}"#;
        assert!(super::index(&array, summaries, now).is_none());
        let whole = br#"[{"key": "k1", "enabled": true, "searchCriteria": {}}]"#;
        let got = super::index(&array, whole, now).expect("indexed");
        assert!(got["k1"].listed);
    }

    /// A list that only shows which objects exist: a listed key is read by `GET` (and that
    /// read is then used), a key it lacks is absent without one.
    #[test]
    fn a_partial_list_says_which_keys_exist_and_listed_ones_are_read() {
        #[derive(Debug)]
        struct Partial;
        #[async_trait::async_trait]
        impl Rest for Partial {
            async fn read(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
            ) -> Result<Value, jfrog_client::Error> {
                Ok(Value::Null)
            }
            async fn create(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
                _: &serde_json::Map<String, Value>,
            ) -> Result<Value, jfrog_client::Error> {
                Ok(Value::Null)
            }
            async fn update(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
                _: &serde_json::Map<String, Value>,
            ) -> Result<(), jfrog_client::Error> {
                Ok(())
            }
            async fn delete(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
            ) -> Result<(), jfrog_client::Error> {
                Ok(())
            }
            fn list_reads_each(&self) -> bool {
                true
            }
        }
        static PARTIAL: Partial = Partial;
        let s = snapshot().with_rest(&PARTIAL);
        let now = Instant::now();
        let listed = index(br#"[{"key": "g1", "uri": "http://x/g1"}]"#, now).expect("indexed");
        {
            let mut st = lock(&s.state);
            st.entries = listed;
            st.fetched_at = Some(now);
        }
        assert!(
            matches!(s.known("g1", HOUR), Lookup::Unknown),
            "listed: read it"
        );
        assert!(
            matches!(s.known("g2", HOUR), Lookup::Absent),
            "not listed: absent"
        );
        s.record_read(
            "g1",
            Some(&json!({"key": "g1", "description": "d"})),
            Instant::now(),
        );
        let v = found(&s, "g1", HOUR).expect("the read is used");
        assert_eq!(v["description"], "d");
        // An object known to exist is read without asking the list again (which could add
        // nothing), even when the list is due: no request goes out (this client would fail).
        lock(&s.state).fetched_at = Some(now - 2 * HOUR);
        let (client, rt) = failing_client();
        let got = rt.block_on(s.lookup(&client, "g1", Duration::ZERO));
        assert!(matches!(got, Lookup::Unknown));
        assert!(lock(&s.state).failed.is_none(), "the list was not asked");
        // A key not known to exist asks it (and here fails: read by key).
        let got = rt.block_on(s.lookup(&client, "g2", Duration::ZERO));
        assert!(matches!(got, Lookup::Unknown));
        assert!(lock(&s.state).failed.is_some(), "the list was asked");
        // The same list without the "read each" mode answers from the list.
        let complete = snapshot();
        lock(&complete.state).entries =
            index(br#"[{"key": "g1", "uri": "http://x/g1"}]"#, now).expect("indexed");
        assert!(found(&complete, "g1", HOUR).is_some());
    }

    /// After many writes (a bulk creation), an observe of a written key asks the list again
    /// instead of reading the key; after a few, it reads the key.
    #[test]
    fn many_writes_since_the_fetch_are_caught_up_by_one_list() {
        let s = snapshot();
        {
            let mut st = lock(&s.state);
            st.fetched_at = Some(Instant::now());
            st.ended_at_fetch = s.marks.ended();
        }
        std::thread::sleep(Duration::from_millis(2));
        let (client, rt) = failing_client();
        let write = |k: &str| drop(s.begin_write(k));
        write("k0");
        write("k1");
        assert!(matches!(
            rt.block_on(s.lookup(&client, "k0", HOUR)),
            Lookup::Unknown
        ));
        assert!(lock(&s.state).failed.is_none(), "two writes: read by key");
        // A write still in flight is never caught up (its outcome is not known).
        let pending = s.begin_write("k-pending");
        for i in 2..CATCH_UP_WRITES {
            write(&format!("k{i}"));
        }
        assert!(s.catch_up("k-pending").is_none());
        drop(pending);
        // A key not written since the fetch has nothing to catch up.
        assert!(s.catch_up("other").is_none());
        assert!(s.catch_up("k1").is_some());
        assert!(matches!(
            rt.block_on(s.lookup(&client, "k1", HOUR)),
            Lookup::Unknown
        ));
        assert!(
            lock(&s.state).failed.is_some(),
            "many writes: the list was asked"
        );
        // A failed list is not asked again for every key: they are read by key.
        assert!(s.catch_up("k2").is_none());
    }

    /// A per-parent list's objects are keyed under their parent (the address the family
    /// builds), so one project's snapshot never answers for another's objects.
    #[test]
    fn a_parents_list_keys_its_objects_under_the_parent() {
        let members = ListCall {
            service: jfrog_client::Service::Access,
            path: "/api/v1/projects/{project}/users",
            shape: ListShape::Wrapped("members"),
            key_member: "name",
        };
        let settings = Arc::new(SnapshotSettings::default());
        settings.set_ttl(Some(HOUR));
        let s = Snapshot::new(settings, Arc::default(), members, false)
            .with_parents(vec!["team".into()]);
        assert_eq!(s.prefix, "team/");
        let now = Instant::now();
        let body = br#"{"members": [{"name": "Alice", "roles": ["Viewer"]}]}"#;
        let entries = super::index_reusing(&members, false, &s.prefix, body, now, &HashMap::new())
            .expect("indexed");
        {
            let mut st = lock(&s.state);
            st.entries = entries;
            st.fetched_at = Some(now);
        }
        let v = found(&s, "team/Alice", HOUR).expect("listed under its project");
        assert_eq!(v["roles"], json!(["Viewer"]));
        assert!(matches!(s.known("Alice", HOUR), Lookup::Absent));
        assert!(matches!(s.known("team/bob", HOUR), Lookup::Absent));
        // Written since the fetch: read by key.
        drop(s.begin_write("team/bob"));
        assert!(matches!(s.known("team/bob", HOUR), Lookup::Unknown));
        // A case-insensitive family lower-cases the parent too.
        let ci = Snapshot::new(Arc::default(), Arc::default(), members, true)
            .with_parents(vec!["Team".into()]);
        assert_eq!(ci.prefix, "team/");
    }

    /// A list that may leave out objects that exist answers for the objects it shows; one
    /// it lacks is read by key (never absent from the list alone), and that read's "not
    /// found" is then used.
    #[test]
    fn a_list_that_may_leave_objects_out_never_says_absent() {
        #[derive(Debug)]
        struct Where;
        #[async_trait::async_trait]
        impl Rest for Where {
            async fn read(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
            ) -> Result<Value, jfrog_client::Error> {
                Ok(Value::Null)
            }
            async fn create(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
                _: &serde_json::Map<String, Value>,
            ) -> Result<Value, jfrog_client::Error> {
                Ok(Value::Null)
            }
            async fn update(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
                _: &serde_json::Map<String, Value>,
            ) -> Result<(), jfrog_client::Error> {
                Ok(())
            }
            async fn delete(
                &self,
                _: &crate::rest::Cx<'_>,
                _: &crate::Address,
            ) -> Result<(), jfrog_client::Error> {
                Ok(())
            }
            fn list_shows_absence(&self) -> bool {
                false
            }
        }
        static WHERE: Where = Where;
        let s = snapshot().with_rest(&WHERE);
        let now = Instant::now();
        {
            let mut st = lock(&s.state);
            st.entries = index(br#"[{"key": "shown", "created": "t"}]"#, now).expect("indexed");
            st.fetched_at = Some(now);
        }
        assert_eq!(found(&s, "shown", HOUR).expect("listed")["created"], "t");
        assert!(matches!(s.known("elsewhere", HOUR), Lookup::Unknown));
        s.record_read("elsewhere", None, Instant::now());
        assert!(matches!(s.known("elsewhere", HOUR), Lookup::Absent));
        // The same list that shows absence says so without a read.
        let complete = snapshot();
        {
            let mut st = lock(&complete.state);
            st.entries = index(br#"[{"key": "shown"}]"#, now).expect("indexed");
            st.fetched_at = Some(now);
        }
        assert!(matches!(complete.known("elsewhere", HOUR), Lookup::Absent));
    }

    #[test]
    fn debug_shows_no_configuration() {
        let s = snapshot();
        s.record_read(
            "k",
            Some(&json!({"key": "k", "password": "JE2abc"})),
            Instant::now(),
        );
        let text = format!("{s:?}");
        assert!(
            text.contains("objects: 1") && !text.contains("JE2"),
            "{text}"
        );
    }

    /// Objects read many at a time: two keys per request, `a` and `b` exist, `c` does not,
    /// and the answer never tells about `d`.
    #[derive(Debug, Default)]
    struct Many {
        asked: Mutex<Vec<Vec<String>>>,
    }

    static MANY: crate::rest::ReadMany = crate::rest::ReadMany {
        service: jfrog_client::Service::Artifactory,
        path: "/api/search/aql",
        size: 2,
    };

    #[async_trait::async_trait]
    impl Rest for Many {
        async fn read(&self, _: &Cx<'_>, _: &crate::Address) -> Result<Value, jfrog_client::Error> {
            unreachable!("the snapshot never reads by key")
        }
        async fn create(
            &self,
            _: &Cx<'_>,
            _: &crate::Address,
            _: &serde_json::Map<String, Value>,
        ) -> Result<Value, jfrog_client::Error> {
            unreachable!()
        }
        async fn update(
            &self,
            _: &Cx<'_>,
            _: &crate::Address,
            _: &serde_json::Map<String, Value>,
        ) -> Result<(), jfrog_client::Error> {
            unreachable!()
        }
        async fn delete(&self, _: &Cx<'_>, _: &crate::Address) -> Result<(), jfrog_client::Error> {
            unreachable!()
        }
        fn read_many_call(&self) -> Option<&crate::rest::ReadMany> {
            Some(&MANY)
        }
        async fn read_many(
            &self,
            _: &Cx<'_>,
            asks: &[crate::rest::Ask<'_>],
        ) -> Result<Vec<(String, Option<Value>)>, jfrog_client::Error> {
            let keys: Vec<String> = asks.iter().map(|a| a.key.to_string()).collect();
            assert!(keys.len() <= MANY.size, "{keys:?}");
            lock(&self.asked).push(keys.clone());
            Ok(keys
                .iter()
                .filter(|k| *k != "d")
                .map(|k| {
                    let v = matches!(k.as_str(), "a" | "b").then(|| json!({"name": k}));
                    (k.clone(), v)
                })
                .collect())
        }
    }

    /// A Kind read many at a time: a refresh asks only for the keys looked up lately, so a
    /// key it never asked is read by key (never absent for want of an answer); once asked,
    /// every key is served from one request per two keys and poll, an object the answer
    /// says is gone is absent, a key the answer leaves out is read by key, and a key written
    /// after the refresh began is read by key.
    #[test]
    fn reads_of_many_keys_answer_only_for_the_keys_they_asked() {
        let (client, rt) = failing_client();
        let many: &'static Many = Box::leak(Box::default());
        let settings = Arc::new(SnapshotSettings::default());
        settings.set_ttl(Some(HOUR));
        let s = Snapshot::new(settings, Arc::default(), MANY.as_list(), false).with_rest(many);
        let look = |k: &str| rt.block_on(s.lookup(&client, k, HOUR));
        // The first lookup refreshes with its own key; the others were never asked.
        assert!(matches!(look("a"), Lookup::Found(v) if v["name"] == "a"));
        for k in ["b", "c", "d"] {
            assert!(matches!(look(k), Lookup::Unknown), "{k}");
        }
        assert_eq!(*lock(&many.asked), vec![vec!["a".to_string()]]);
        // A poll later every key looked up is asked, two per request.
        lock(&s.state).fetched_at = Instant::now().checked_sub(2 * HOUR);
        assert!(matches!(look("b"), Lookup::Found(v) if v["name"] == "b"));
        assert_eq!(
            lock(&many.asked)[1..],
            [
                vec!["a".to_string(), "b".to_string()],
                vec!["c".to_string(), "d".to_string()]
            ]
        );
        assert!(matches!(look("a"), Lookup::Found(_)));
        assert!(matches!(look("c"), Lookup::Absent));
        assert!(matches!(look("d"), Lookup::Unknown));
        assert_eq!(lock(&many.asked).len(), 3, "one refresh per poll");
        // Our write to `a` after the refresh: read by key until the next refresh.
        drop(s.begin_write("a"));
        assert!(matches!(look("a"), Lookup::Unknown));
        // Keys not looked up for two polls are no longer asked.
        {
            let mut st = lock(&s.state);
            let old = Instant::now().checked_sub(3 * HOUR);
            for k in ["c", "d"] {
                if let (Some(at), Some(old)) = (st.interest.get_mut(k), old) {
                    *at = old;
                }
            }
            st.fetched_at = Instant::now().checked_sub(2 * HOUR);
        }
        assert!(matches!(look("a"), Lookup::Found(_)));
        assert_eq!(
            lock(&many.asked).last().cloned(),
            Some(vec!["a".to_string(), "b".to_string()])
        );
    }
}
