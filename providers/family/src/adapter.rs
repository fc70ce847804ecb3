//! The one generic adapter: a [`FamilyKind`] (the runtime's `ManagedKind` for any declared
//! Kind), its [`FamilyConnector`] and the per-MR [`FamilyClient`] (`ExternalClient`) that
//! observes, creates, updates and deletes through the Kind's REST binding.
//!
//! - Observe: served from the family's shared snapshot (see `snapshot`) when it has a fresh
//!   enough answer, else a read by identifier; only `NotFound` of that read means "does not
//!   exist". An object whose identity members (`rclass`/`packageType`, a webhook's domain)
//!   differ is an error, not drift. `atProvider` is everything readable; unset
//!   server-defaulted fields are late-initialised; the diff compares what the user manages
//!   (see `diff`); write-only values by hash.
//! - Create: the identifier and the parameters are checked first (the family's key rule,
//!   its parameter rules: a refused manifest costs no request), then the full body
//!   (defaults applied) is sent; the hashes of write-only values sent are kept in an
//!   annotation (the runtime persists annotations set by Create).
//! - Update: every managed field (removed fields reset to default/empty; write-only values
//!   removed are cleared), then the family's `after_update`; the new hashes go to
//!   `atProvider` (the runtime keeps status set by Update).
//! - Delete: the family's `before_delete`, then the delete call; `NotFound` is success.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jfrog_client::{ClientMetrics, JfrogClient};
use provider_common::{Connections, Provider};
use provider_runtime::managed::Condition;
use provider_runtime::managed::config::{Credentials, ResolvedConfig};
use provider_runtime::managed::external::{
    ChangeKind, ConnectionDetails, Connector, ExternalClient, ExternalCreation, ExternalDelete,
    ExternalError, ExternalObservation, ExternalUpdate, FieldChange, Managed, ManagedKind,
};
use provider_runtime::managed::kind::{KindInfo, ReferenceField, SecretRefField};
use provider_runtime::managed::meta::{self, EXTERNAL_CREATE_FAILED, EXTERNAL_CREATE_SUCCEEDED};
use provider_runtime::managed::registration::{KindRegistration, register_shared};
use secrecy::ExposeSecret;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::address::Address;
use crate::checks::{self, KindChecks};
use crate::decl::{DeclError, Id, ResolvedKind, Ty};
use crate::diff::{self, DiffContext};
use crate::hooks::{HookCtx, MrState};
use crate::kind::{BoundKind, Kind};
use crate::rest::{Cx, ProviderState};
use crate::schema::{self, HASHES_FIELD};
use crate::snapshot::{
    Lookup, PollAwareRegistration, Snapshot, SnapshotSettings, WriteGuard, WriteMarks,
};
use crate::wire::{self, Mode, empty_of, get_path, user_value};

/// The annotation holding the write-only hashes of a create (status set by Create is not
/// persisted, annotations are), for every Kind of every provider of this project.
pub const HASHES_ANNOTATION: &str = "jfrog.crossplane.io/write-only-hashes";

/// The name [`HASHES_ANNOTATION`] had before, the repository family's (the first to need
/// it), which MRs created until then carry: read when the new name is absent, so they keep
/// their hashes; removed when a create writes the new name, so an MR migrates on its next
/// create (an update records its hashes in `atProvider`, which takes precedence).
pub const LEGACY_HASHES_ANNOTATION: &str = "repository.artifactory.crossplane.io/write-only-hashes";

/// Write-only hashes by wire member.
type Hashes = BTreeMap<String, String>;

/// How many elements of an object list may carry Secret references (upstream allows at
/// most 5 custom headers per repository; webhooks rarely have more handlers).
const MAX_LIST_SECRETS: usize = 5;

/// Which MR manages each platform singleton (by platform, Kind and identifier): one object
/// of JFrog must not be managed by two MRs that would undo each other's changes. The first
/// MR to observe it claims it until its delete resets it (or forgets it), or until it has
/// not observed for `CLAIM_LAPSE` polls (an MR deleted without a delete call, e.g.
/// orphaned); another gets an error naming it. Claims live in the provider process (after a
/// restart, the first MR to observe claims again).
#[derive(Debug, Default)]
pub struct Singletons(Mutex<HashMap<String, Claim>>);

/// Who manages a platform singleton.
#[derive(Debug)]
struct Claim {
    uid: String,
    /// `namespace/name` of the MR.
    holder: String,
    /// The MR deleted (reset) it.
    released: bool,
    /// When its MR last observed it.
    seen: Instant,
}

/// How many poll intervals an unrefreshed singleton claim lasts.
const CLAIM_LAPSE: u32 = 3;

impl Singletons {
    /// Claim `key` for the MR `uid` (`holder` names it in messages): `Ok(true)` it holds
    /// it; `Ok(false)` its own delete reset it (gone as far as it is concerned); `Err` the
    /// name of the MR that holds it (a claim not refreshed for `lapse` is void).
    pub fn claim(
        &self,
        key: &str,
        uid: &str,
        holder: &str,
        lapse: Duration,
    ) -> Result<bool, String> {
        let mut m = lock(&self.0);
        let now = Instant::now();
        match m.get_mut(key) {
            Some(c) if c.uid == uid => {
                c.seen = now;
                Ok(!c.released)
            }
            Some(c) if !c.released && now.duration_since(c.seen) < lapse => Err(c.holder.clone()),
            _ => {
                m.insert(
                    key.to_string(),
                    Claim {
                        uid: uid.to_string(),
                        holder: holder.to_string(),
                        released: false,
                        seen: now,
                    },
                );
                Ok(true)
            }
        }
    }

    /// Release `key` after `uid`'s delete reset it: the next MR may claim it.
    pub fn release(&self, key: &str, uid: &str) {
        if let Some(c) = lock(&self.0).get_mut(key)
            && c.uid == uid
        {
            c.released = true;
        }
    }
}

/// A declared Kind as the runtime sees it.
#[derive(Debug)]
pub struct FamilyKind {
    info: KindInfo,
    kind: Arc<BoundKind>,
    /// The upstream validators checked at admission (the table entries that match it).
    checks: Vec<&'static KindChecks>,
    /// The same checks, every one, on the resolved parameters before any write.
    strict: Arc<StrictSchema>,
}

/// How long a compiled strict schema is kept after its last use. A compiled schema takes 0.5 to
/// 3 MiB (a repository Kind's about 1.5 MiB), and writes come in bursts (an apply, a sync): it
/// is compiled at a burst's first write, serves the burst, and is dropped once the Kind has
/// not been written for this long, so that a provider between bursts holds none.
pub const COMPILED_IDLE: Duration = Duration::from_secs(60);

/// A compiled schema (`None`: it does not compile) and when it was last used.
type Compiled = Option<(Arc<Option<crd_schema::Schema>>, Instant)>;

/// Every strict schema's compiled slot, for the sweeper that drops the idle ones.
fn compiled_slots() -> &'static Mutex<Vec<std::sync::Weak<Mutex<Compiled>>>> {
    static SLOTS: std::sync::OnceLock<Mutex<Vec<std::sync::Weak<Mutex<Compiled>>>>> =
        std::sync::OnceLock::new();
    SLOTS.get_or_init(Mutex::default)
}

/// Starts the sweeper thread, once per process, at the first compilation: every half
/// [`COMPILED_IDLE`] it drops the compiled schemas idle for longer.
fn start_sweeper() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new()
            .name("strict-schema-sweep".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(COMPILED_IDLE / 2);
                    sweep_compiled(Instant::now());
                }
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, "cannot start the strict-schema sweeper: compiled schemas stay");
        }
    });
}

/// Drops the compiled schemas not used since `now - COMPILED_IDLE`; forgets the slots of
/// schemas that no longer exist.
pub fn sweep_compiled(now: Instant) {
    let mut slots = compiled_slots()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    slots.retain(|w| {
        let Some(slot) = w.upgrade() else {
            return false;
        };
        let mut c = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if c.as_ref()
            .is_some_and(|(_, used)| now.saturating_duration_since(*used) >= COMPILED_IDLE)
        {
            *c = None;
        }
        true
    });
}

/// The strict schema of a Kind's `forProvider` ([`checks::strict_schema`]): every upstream
/// rule, those the API server cannot afford at admission included, checked on the resolved
/// parameters (references filled in) before any write. Compiled at the first write, dropped
/// when idle for [`COMPILED_IDLE`].
pub struct StrictSchema {
    kind: Arc<BoundKind>,
    checks: Vec<&'static KindChecks>,
    references: Vec<ReferenceField>,
    compiled: Arc<Mutex<Compiled>>,
}

impl std::fmt::Debug for StrictSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrictSchema")
            .field("kind", &self.kind.decl.kind)
            .finish_non_exhaustive()
    }
}

impl StrictSchema {
    fn new(
        kind: Arc<BoundKind>,
        checks: Vec<&'static KindChecks>,
        references: Vec<ReferenceField>,
    ) -> Self {
        let compiled: Arc<Mutex<Compiled>> = Arc::default();
        if !checks.is_empty() {
            compiled_slots()
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(Arc::downgrade(&compiled));
        }
        StrictSchema {
            kind,
            checks,
            references,
            compiled,
        }
    }

    /// Whether the schema is compiled now (tests).
    pub fn is_compiled(&self) -> bool {
        self.compiled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }

    /// The rules `params` (a resolved `forProvider`) breaks, worded as the API server words
    /// them (`spec.forProvider.handler[0]: Invalid value: "object": <message>`), or `Ok`.
    /// A schema that does not compile checks nothing (every provider's `checks_fit` test
    /// compiles each).
    pub fn check(&self, params: &Value) -> Result<(), String> {
        if self.checks.is_empty() {
            return Ok(());
        }
        let compiled = {
            let mut slot = self
                .compiled
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let entry = slot.get_or_insert_with(|| {
                start_sweeper();
                let schema = checks::strict_schema(&self.kind, &self.checks, &self.references)
                    .ok()
                    .and_then(|s| crd_schema::Schema::compile(&s).ok());
                (Arc::new(schema), Instant::now())
            });
            entry.1 = Instant::now();
            entry.0.clone()
        };
        let Some(schema) = compiled.as_ref() else {
            return Ok(());
        };
        let errs = schema.validate(&serde_json::json!({"spec": {"forProvider": params}}), None);
        if errs.is_empty() {
            return Ok(());
        }
        Err(errs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "))
    }
}

impl FamilyKind {
    /// Compose a declaration into a Kind.
    pub fn new(decl: &Kind) -> Result<Self, DeclError> {
        let kind = decl.bound()?;
        let mut info = KindInfo::new(
            decl.provider,
            decl.group,
            decl.kind,
            "v1alpha1",
            decl.id.strategy(),
        );
        // KindInfo holds `&'static str`; one short text per Kind, built once per process.
        info.description = Box::leak(
            crate::describe::for_users(&decl.hooks.description(&decl.decl)).into_boxed_str(),
        );
        for f in kind.params() {
            // A field with a Secret-reference form is required as "one of the two", checked
            // before any write (`check_params`).
            if f.required && f.secret_ref.is_none() {
                info.required_params.push(f.crd);
            }
            if let Some(r) = f.secret_ref {
                declare_secret(&mut info, r, &f.ty);
            }
            if f.immutable {
                info.immutable_fields.push(f.crd);
            }
            if f.sensitive {
                info.sensitive_fields.push(f.crd);
                declare_secret(&mut info, f.crd, &f.ty);
            }
            declare_nested_secrets(&mut info, f.crd, &f.ty);
        }
        let kind = Arc::new(kind);
        Ok(FamilyKind {
            info,
            strict: Arc::new(StrictSchema::new(kind.clone(), Vec::new(), Vec::new())),
            kind,
            checks: Vec::new(),
        })
    }

    /// Attach the entries of a provider's reference table that apply to this Kind (see
    /// [`crate::refs`]).
    pub fn with_references(mut self, table: &[crate::refs::Reference]) -> Result<Self, DeclError> {
        self.info.references =
            crate::refs::reference_fields(&self.kind, table).map_err(|message| DeclError {
                kind: self.kind.decl.kind,
                message,
            })?;
        self.strict = Arc::new(StrictSchema::new(
            self.kind.clone(),
            self.checks.clone(),
            self.info.references.clone(),
        ));
        Ok(self)
    }

    /// The Kind with the admission checks of its upstream validators.
    pub fn with_checks(mut self, checks: Vec<&'static KindChecks>) -> Self {
        self.strict = Arc::new(StrictSchema::new(
            self.kind.clone(),
            checks.clone(),
            self.info.references.clone(),
        ));
        self.checks = checks;
        self
    }

    /// The composed declaration.
    pub fn resolved(&self) -> &Arc<BoundKind> {
        &self.kind
    }

    /// The reference fields of the Kind (`<field>Ref(s)` / `<field>Selector`).
    pub fn references(&self) -> &[ReferenceField] {
        &self.info.references
    }

    /// The rules a resolved `forProvider` breaks, as the provider checks them before any
    /// write (every upstream rule, [`StrictSchema::check`]).
    pub fn check_before_write(&self, params: &Value) -> Result<(), String> {
        self.strict.check(params)
    }

    /// Whether the keys of the MR's whole-Secret references (`secrets`: the resolved Secret
    /// entries by `<field path>.<key>`) pass upstream's checks on them
    /// ([`checks::check_secret_keys`]).
    pub fn check_secret_keys<'a>(
        &self,
        secrets: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), String> {
        checks::check_secret_keys(&self.strict.checks, secrets)
    }

    /// Whether `key` may identify an object of this Kind: the family's rule and, when the
    /// identifier is the external name, upstream's checks on it (which no CRD rule can read),
    /// some with the `forProvider` `params`.
    /// `Err` is the message the provider gives before any request.
    pub fn check_identifier(&self, key: &str, params: &Value) -> Result<(), String> {
        identifier_rules(&self.kind, Some(&self.strict), key, params)
    }
}

impl checks::Verified for FamilyKind {
    fn resolved_kind(&self) -> &ResolvedKind {
        &self.kind
    }
    fn reference_fields(&self) -> &[ReferenceField] {
        &self.info.references
    }
    fn admission_schema(&self) -> Value {
        self.parameters_schema()
    }
}

/// Declare the Secret references inside the elements of object field `path` of type `ty`
/// (the first [`MAX_LIST_SECRETS`] elements of a list, the object itself for a
/// single-nested object; objects nest, e.g. `config.auth.roleIdSecretRef`).
fn declare_nested_secrets(info: &mut KindInfo, path: &str, ty: &Ty) {
    let Some(children) = ty.children() else {
        return;
    };
    let elems: Vec<String> = if matches!(ty, Ty::Object(_)) {
        vec![path.to_string()]
    } else {
        (0..MAX_LIST_SECRETS)
            .map(|i| format!("{path}.{i}"))
            .collect()
    };
    for elem in &elems {
        for c in children.iter().filter(|c| c.wire.is_some()) {
            let cpath = format!("{elem}.{}", c.crd);
            if let Some(r) = c.secret_ref {
                let rpath = format!("{elem}.{r}");
                declare_secret(info, Box::leak(rpath.into_boxed_str()), &c.ty);
            }
            if c.sensitive {
                declare_secret(info, Box::leak(cpath.into_boxed_str()), &c.ty);
            } else {
                declare_nested_secrets(info, &cpath, &c.ty);
            }
        }
    }
}

/// Declare the Secret reference of a sensitive field to the runtime: a key of a Secret for
/// a value, the whole Secret for a map (every key an entry).
fn declare_secret(info: &mut KindInfo, field: &'static str, ty: &Ty) {
    let r = SecretRefField::optional(field);
    if matches!(ty, Ty::Map(_)) {
        info.whole_secret_refs.push(r);
    } else {
        info.secret_refs.push(r);
    }
}

impl ManagedKind for FamilyKind {
    type Parameters = Value;
    type Observation = Value;

    fn info(&self) -> &KindInfo {
        &self.info
    }
    // Built on demand: only CRD generation asks, and holding hundreds of schemas would cost
    // a running provider megabytes for nothing.
    #[expect(
        clippy::expect_used,
        reason = "the checks are compiled-in tables; every provider's `checks_fit` test applies each to its Kind"
    )]
    fn parameters_schema(&self) -> Value {
        let mut s = schema::parameters_schema(&self.kind);
        for c in &self.checks {
            // Every provider's tests apply its checks to every Kind (`checks_fit`).
            checks::apply_as(&mut s, c, &self.info.references, checks::Mode::Admission)
                .expect("checks fit the schema (tested)");
        }
        checks::afford(&mut s, &self.info.references);
        s
    }
    fn observation_schema(&self) -> Value {
        schema::observation_schema(&self.kind, self.kind.id_description())
    }
}

/// A client and the snapshots of its families' list calls.
#[derive(Clone)]
struct Cached {
    client: JfrogClient,
    /// By list path, filled with the parent for a per-parent list (one snapshot per
    /// project's roles, ...).
    snapshots: Arc<Mutex<HashMap<String, Arc<Snapshot>>>>,
}

/// JfrogClients by ProviderConfig, shared by every Kind of a provider (one client, so one
/// rate limiter and connection pool, per platform), with one snapshot per client and list
/// call, and our write marks per list call (by key, for every platform: a key written on
/// one platform costs the same key elsewhere one read, which is cheaper than telling
/// platforms apart by URL spelling). Snapshots are off until a TTL is set
/// ([`ClientCache::set_snapshot_ttl`], or the controllers' `--poll` through
/// [`registrations`]).
pub struct ClientCache {
    provider: Provider,
    connections: Connections,
    clients: Mutex<HashMap<String, Cached>>,
    marks: Mutex<HashMap<&'static str, Arc<WriteMarks>>>,
    settings: Arc<SnapshotSettings>,
    singletons: Arc<Singletons>,
    /// The provider's own state, handed to its REST bindings' calls
    /// ([`ClientCache::with_state`]).
    state: Arc<ProviderState>,
    /// Clients are read-only (`preview`): see [`JfrogClient::read_only`].
    read_only: bool,
}

impl std::fmt::Debug for ClientCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientCache")
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ClientCache {
    /// An empty cache for `provider`'s clients.
    pub fn new(provider: Provider) -> Self {
        Self::with_metrics(provider, ClientMetrics::new())
    }

    /// An empty cache whose clients report into `metrics`.
    pub fn with_metrics(provider: Provider, metrics: ClientMetrics) -> Self {
        Self::with_connections(provider, Connections::with_metrics(metrics))
    }

    /// An empty cache whose clients share `connections` (the process's, so that they share
    /// the platforms' state and token exchanges with its connection check).
    pub fn with_connections(provider: Provider, connections: Connections) -> Self {
        ClientCache {
            provider,
            connections,
            clients: Mutex::default(),
            marks: Mutex::default(),
            settings: Arc::default(),
            singletons: Arc::default(),
            state: Arc::default(),
            read_only: false,
        }
    }

    /// This cache, holding `value` in the provider's state ([`ProviderState`]): what its
    /// REST bindings' calls find there (one value per type; a later one replaces it).
    pub fn with_state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.state).insert(value);
        self
    }

    /// The provider's state ([`ClientCache::with_state`]).
    pub fn state(&self) -> &Arc<ProviderState> {
        &self.state
    }

    /// This cache, building read-only clients only ([`JfrogClient::read_only`]): a write
    /// any adapter attempts through them fails before it leaves the process, and is counted.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The snapshot settings shared by every client of this cache.
    pub fn snapshot_settings(&self) -> &Arc<SnapshotSettings> {
        &self.settings
    }

    /// Set the snapshot TTL (the longest time between two list reads); `None` turns
    /// observation by list off.
    pub fn set_snapshot_ttl(&self, ttl: Option<Duration>) {
        self.settings.set_ttl(ttl);
    }

    /// The client of a resolved config (built once per config and credentials).
    pub fn client(&self, config: &ResolvedConfig) -> Result<JfrogClient, jfrog_client::Error> {
        self.cached(config).map(|c| c.client)
    }

    /// The client of a resolved config and the snapshot of `kind`'s list call (none when the
    /// Kind has no list call, or lists per parent: see [`Self::client_and_snapshot_for`]).
    pub fn client_and_snapshot(
        &self,
        config: &ResolvedConfig,
        kind: &BoundKind,
    ) -> Result<(JfrogClient, Option<Arc<Snapshot>>), jfrog_client::Error> {
        self.client_and_snapshot_for(config, kind, &Value::Null)
    }

    /// The client of a resolved config and the snapshot of `kind`'s list call for an MR with
    /// these parameters: for a list per parent ([`crate::rest::Rest::list_parents`]) the
    /// snapshot of the parent the parameters name (none while one of them is unset, or for
    /// an optional parent, [`crate::rest::QueryParent`], the platform's list), shared by
    /// every MR of that parent, so N objects of one project cost one list per poll.
    pub fn client_and_snapshot_for(
        &self,
        config: &ResolvedConfig,
        kind: &BoundKind,
        params: &Value,
    ) -> Result<(JfrogClient, Option<Arc<Snapshot>>), jfrog_client::Error> {
        let cached = self.cached(config)?;
        let rest = kind.rest;
        // A Kind read many at a time has a snapshot of those reads, named by their call.
        let many = rest.read_many_call().map(|m| m.as_list());
        let Some(list) = rest.list().or(many.as_ref()) else {
            return Ok((cached.client, None));
        };
        let query = rest.parent_query();
        let fields = rest.list_parents();
        let mut parents = Vec::new();
        for (i, field) in fields.iter().enumerate() {
            match user_value(params, field) {
                Some(Value::String(v)) if !v.is_empty() => parents.push(v.clone()),
                // The optional parent (the last) unset: the list without it.
                _ if query.is_some() && i + 1 == fields.len() => {}
                _ => return Ok((cached.client, None)),
            }
        }
        // Reads of many keys are the Kind's own (two Kinds may search with one call, as
        // artifacts and item properties do with AQL): one snapshot and marks per Kind.
        let own = rest.list().is_none().then_some(kind.decl.kind);
        let path = match own {
            Some(k) => format!("{} {k}", list.path),
            None => list.path_for(query, &parents),
        };
        let marks = lock(&self.marks)
            .entry(own.unwrap_or(list.path))
            .or_default()
            .clone();
        let snapshot = lock(&cached.snapshots)
            .entry(path)
            .or_insert_with(|| {
                Arc::new(
                    Snapshot::new(self.settings.clone(), marks, *list, rest.case_insensitive())
                        .with_rest(rest)
                        .with_parents(parents),
                )
            })
            .clone();
        Ok((cached.client, Some(snapshot)))
    }

    fn cached(&self, config: &ResolvedConfig) -> Result<Cached, jfrog_client::Error> {
        // The cache key carries a digest of the credentials so a rotated token gets a new
        // client; the digest is never logged.
        let mut h = Sha256::new();
        h.update(config.url.as_bytes());
        h.update(b"\0");
        h.update(config.config_kind.as_bytes());
        h.update(config.config_namespace.as_deref().unwrap_or("").as_bytes());
        h.update(config.config_name.as_bytes());
        match &config.credentials {
            Credentials::Token(t) => {
                h.update(b"\0token\0");
                h.update(t.expose_secret().as_bytes());
            }
            Credentials::Basic { username, password } => {
                h.update(b"\0basic\0");
                h.update(username.as_bytes());
                h.update(b"\0");
                h.update(password.expose_secret().as_bytes());
            }
            // The exchanged token changes every lifetime; the client (and its observation
            // snapshots) stays, since its token source renews the token itself.
            Credentials::Injected(i) => {
                h.update(b"\0injected\0");
                h.update(i.provider_name.as_bytes());
                h.update(b"\0");
                h.update(i.audience.as_bytes());
                h.update(b"\0");
                h.update(i.project_key.as_deref().unwrap_or("").as_bytes());
                h.update(b"\0");
                h.update(i.subject.key().as_bytes());
            }
            Credentials::None => h.update(b"\0none"),
        }
        h.update(config.ca_bundle.as_deref().unwrap_or("").as_bytes());
        let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let mut map = lock(&self.clients);
        if let Some(c) = map.get(&key) {
            return Ok(c.clone());
        }
        let client = self.provider.client_for(config, &self.connections)?;
        let cached = Cached {
            client: if self.read_only {
                client.read_only()
            } else {
                client
            },
            snapshots: Arc::default(),
        };
        map.insert(key, cached.clone());
        Ok(cached)
    }
}

/// Every Kind of `decls`, composed once (the caller keeps them for the life of the
/// process: their `KindInfo` strings are `'static`). Panics only if a declaration does not
/// compose, which each family's tests rule out.
pub fn compose(decls: &[Kind]) -> Vec<Arc<FamilyKind>> {
    compose_checked(decls, &[])
}

/// As [`compose`], each Kind with its admission checks from `checks` (the provider's
/// generated table of upstream validators).
pub fn compose_checked(decls: &[Kind], checks: &'static [KindChecks]) -> Vec<Arc<FamilyKind>> {
    compose_with_references(decls, checks, &[])
}

/// As [`compose_checked`], each Kind also with the references of the provider's table (see
/// [`crate::refs`]).
#[expect(
    clippy::expect_used,
    reason = "the declarations are compiled in; each family's tests compose every one of them"
)]
pub fn compose_with_references(
    decls: &[Kind],
    checks: &'static [KindChecks],
    table: &[crate::refs::Reference],
) -> Vec<Arc<FamilyKind>> {
    decls
        .iter()
        .map(|d| {
            let k = FamilyKind::new(d)
                .and_then(|k| k.with_references(table))
                .expect("declarations compose (tested)");
            Arc::new(k.with_checks(checks::of(checks, d.kind)))
        })
        .collect()
}

/// The runtime registrations of `kinds`, sharing one client cache; each hands its
/// controller's `--poll` to the cache when it starts, which turns observation by list on
/// with that TTL.
pub fn registrations(
    kinds: &[Arc<FamilyKind>],
    cache: Arc<ClientCache>,
) -> Vec<Arc<dyn KindRegistration>> {
    kinds
        .iter()
        .map(|k| {
            let connector = FamilyConnector::new(k, cache.clone());
            let inner = register_shared(k.clone(), Arc::new(connector));
            Arc::new(PollAwareRegistration::new(
                inner,
                cache.snapshot_settings().clone(),
            )) as Arc<dyn KindRegistration>
        })
        .collect()
}

/// A namespaced MR (namespace `default`, UID `uid-<name>`) as the reconciler hands it to an
/// adapter before any status: for tests and for tools that drive the adapter directly.
pub fn managed(name: &str, external_name: &str, params: Value) -> Managed<FamilyKind> {
    Managed {
        scope: provider_runtime::managed::kind::Scope::Namespaced,
        name: name.into(),
        namespace: Some("default".into()),
        uid: format!("uid-{name}"),
        generation: 1,
        external_name: external_name.into(),
        annotations: BTreeMap::new(),
        labels: BTreeMap::new(),
        for_provider: params.clone(),
        init_provider: Value::Object(Map::new()),
        create_parameters: params,
        init_only_fields: Vec::new(),
        at_provider: Value::Null,
        conditions: Vec::new(),
        secrets: BTreeMap::new(),
        deleting: false,
        late_initialize: true,
        observe_only: false,
    }
}

/// The connector of one Kind.
#[derive(Debug, Clone)]
pub struct FamilyConnector {
    kind: Arc<BoundKind>,
    strict: Arc<StrictSchema>,
    cache: Arc<ClientCache>,
}

impl FamilyConnector {
    /// A connector for `kind` using the shared client cache.
    pub fn new(kind: &FamilyKind, cache: Arc<ClientCache>) -> Self {
        FamilyConnector {
            kind: kind.resolved().clone(),
            strict: kind.strict.clone(),
            cache,
        }
    }
}

#[async_trait]
impl Connector<FamilyKind> for FamilyConnector {
    async fn connect(
        &self,
        config: &ResolvedConfig,
        mr: &Managed<FamilyKind>,
    ) -> Result<Box<dyn ExternalClient<FamilyKind>>, ExternalError> {
        // A parent taken from the MR's name when unset (`Field::from_name`: a release
        // bundle's name) names its list all the same.
        let mut params = std::borrow::Cow::Borrowed(&mr.for_provider);
        for f in self.kind.rest.list_parents() {
            if self.kind.field(f).is_some_and(|d| d.from_name)
                && user_value(&params, f).is_none()
                && let Value::Object(m) = params.to_mut()
            {
                let name = if mr.external_name.is_empty() {
                    &mr.name
                } else {
                    &mr.external_name
                };
                m.insert(f.to_string(), Value::String(name.clone()));
            }
        }
        let (client, snapshot) = self
            .cache
            .client_and_snapshot_for(config, &self.kind, &params)
            .map_err(ExternalError::new)?;
        let mut c = FamilyClient::new(client, self.kind.clone());
        c.strict = Some(self.strict.clone());
        c.snapshot = snapshot;
        c.singletons = self.cache.singletons.clone();
        c.state = self.cache.state.clone();
        c.claim_lapse = self.cache.settings.ttl().unwrap_or(Duration::from_secs(60)) * CLAIM_LAPSE;
        Ok(Box::new(c))
    }
}

/// The family's rule for `key` and, when it is the external name, the key checks of the
/// Kind's upstream validators, as one message naming the Kind and the identifier.
fn identifier_rules(
    kind: &BoundKind,
    strict: Option<&StrictSchema>,
    key: &str,
    params: &Value,
) -> Result<(), String> {
    let external_name = kind.decl.id == Id::Name;
    kind.check_key(key)
        .and_then(|()| match strict {
            Some(s) if external_name => checks::check_key(&s.checks, key, params),
            _ => Ok(()),
        })
        .map_err(|rule| {
            let source = if external_name {
                " (the crossplane.io/external-name annotation, else metadata.name)"
            } else {
                ""
            };
            format!(
                "invalid {} identifier {key:?}{source}: {rule}",
                kind.decl.kind
            )
        })
}

/// The external client of one MR.
#[derive(Debug, Clone)]
pub struct FamilyClient {
    client: JfrogClient,
    kind: Arc<BoundKind>,
    /// Every upstream rule, checked on the resolved parameters before any write.
    strict: Option<Arc<StrictSchema>>,
    snapshot: Option<Arc<Snapshot>>,
    /// The provider's singleton claims.
    singletons: Arc<Singletons>,
    /// The provider's state, handed to the Kind's REST calls.
    state: Arc<ProviderState>,
    /// How long a claim lasts when its MR stops observing (an MR deleted without a delete
    /// call, e.g. orphaned).
    claim_lapse: Duration,
}

/// Hashes recorded for an MR: those in `atProvider` (written by Update, carried over by
/// Observe; present even when empty) take precedence over those Create put in the
/// annotation.
fn recorded_hashes(mr: &Managed<FamilyKind>) -> BTreeMap<String, String> {
    if let Some(Value::Object(m)) = mr.at_provider.get(HASHES_FIELD) {
        return m
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
            .collect();
    }
    mr.annotations
        .get(HASHES_ANNOTATION)
        .or_else(|| mr.annotations.get(LEGACY_HASHES_ANNOTATION))
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default()
}

/// The generated values of a create answer (the Kind's `connection` fields), under the
/// official providers' keys `attribute.<terraform name>`.
pub fn connection_details(kind: &ResolvedKind, answer: &Value) -> ConnectionDetails {
    let mut out = ConnectionDetails::default();
    for f in kind.fields.iter().filter(|f| f.connection) {
        if let Some(Value::String(v)) = f.wire.and_then(|w| get_path(answer, w))
            && !v.is_empty()
        {
            out.0
                .insert(format!("attribute.{}", f.tf), v.as_bytes().to_vec());
        }
    }
    out
}

fn display_name(mr: &Managed<FamilyKind>) -> String {
    match &mr.namespace {
        Some(ns) => format!("{ns}/{}", mr.name),
        None => mr.name.clone(),
    }
}

/// Whether the reconciler recorded a successful delete of this MR (Ready=False Deleting and
/// Synced=True, as it marks them after the delete call).
fn delete_requested(mr: &Managed<FamilyKind>) -> bool {
    use provider_runtime::managed::conditions::Condition;
    let deleting = Condition::deleting();
    let success = Condition::reconcile_success();
    let has = |c: &Condition| {
        mr.conditions
            .iter()
            .any(|x| x.type_ == c.type_ && x.status == c.status && x.reason == c.reason)
    };
    has(&deleting) && has(&success)
}

/// A random password for a generated secret: 16 characters with at least one upper-case
/// letter, lower-case letter, digit and symbol (what JFrog's password policies ask; the
/// official provider generates 12 of the same classes).
pub fn generate_password() -> String {
    use rand::Rng;
    use rand::seq::{IndexedRandom, SliceRandom};
    const UPPER: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ";
    const LOWER: &[u8] = b"abcdefghijkmnopqrstuvwxyz";
    const DIGIT: &[u8] = b"23456789";
    const SYMBOL: &[u8] = b"!#%+-.:=?@_";
    let mut rng = rand::rng();
    let classes = [UPPER, LOWER, DIGIT, SYMBOL];
    let mut out: Vec<u8> = classes
        .iter()
        .filter_map(|c| c.choose(&mut rng).copied())
        .collect();
    while out.len() < 16 {
        let class = classes[rng.random_range(0..classes.len())];
        out.extend(class.choose(&mut rng));
    }
    out.shuffle(&mut rng);
    out.into_iter().map(char::from).collect()
}

/// Whether the hashes come from `atProvider` (so they must be carried over even if empty).
/// What the family's hooks see of `mr`.
fn mr_state(mr: &Managed<FamilyKind>) -> MrState<'_> {
    MrState {
        for_provider: &mr.for_provider,
        at_provider: &mr.at_provider,
        init_only_fields: &mr.init_only_fields,
    }
}

fn hashes_in_status(mr: &Managed<FamilyKind>) -> bool {
    matches!(mr.at_provider.get(HASHES_FIELD), Some(Value::Object(_)))
}

impl FamilyClient {
    /// A client for one MR of `kind`.
    pub fn new(client: JfrogClient, kind: Arc<BoundKind>) -> Self {
        FamilyClient {
            client,
            kind,
            strict: None,
            snapshot: None,
            singletons: Arc::default(),
            state: Arc::default(),
            claim_lapse: Duration::from_secs(60) * CLAIM_LAPSE,
        }
    }

    /// Check every rule of `kind` on the resolved parameters before any write, as a client
    /// its connector made does.
    pub fn with_rules_of(mut self, kind: &FamilyKind) -> Self {
        self.strict = Some(kind.strict.clone());
        self
    }

    /// Observe from `snapshot` where it can answer, and mark this client's writes in it.
    pub fn with_snapshot(mut self, snapshot: Arc<Snapshot>) -> Self {
        self.snapshot = Some(snapshot);
        self
    }

    /// The context of the Kind's REST calls: the MR's client and the provider's state.
    fn cx(&self) -> Cx<'_> {
        Cx::new(&self.client, &self.state)
    }

    fn hook_ctx<'a>(&'a self, address: &'a Address) -> HookCtx<'a> {
        HookCtx {
            client: &self.client,
            kind: &self.kind,
            address,
            rest: self.kind.rest,
            state: &self.state,
            snapshot: self.snapshot.as_ref(),
        }
    }

    /// Mark a write to `address` (until the guard is dropped) so no older read is used for
    /// it.
    fn begin_write(&self, address: &Address) -> Option<WriteGuard> {
        let s = self.snapshot.as_ref()?;
        let key = self
            .list_key(address)
            .unwrap_or_else(|| address.to_string());
        Some(s.begin_write(&key))
    }

    /// The key under which the list shows the object at `address` (`None`: it cannot).
    fn list_key(&self, address: &Address) -> Option<String> {
        // A scoped object (an address with a query) is not in the global list; a binding
        // with a query parent maps it to its scope's list.
        let rest = self.kind.rest;
        if !address.query().is_empty() && rest.parent_query().is_none() {
            return None;
        }
        rest.list_key(address)
    }

    /// The object at `address` (`None`: it does not exist), from the snapshot when it can
    /// answer for the MR's poll interval, else by a read (whose result then replaces the
    /// snapshot's entry).
    async fn read(
        &self,
        address: &Address,
        mr: &Managed<FamilyKind>,
    ) -> Result<Option<Arc<Value>>, ExternalError> {
        let listed = self.list_key(address);
        let snapshot = listed.as_deref().and_then(|listed| {
            let s = self.snapshot.as_ref()?;
            s.max_age(&mr.annotations).map(|age| (s, age, listed))
        });
        if let Some((s, max_age, listed)) = snapshot {
            match s.lookup(&self.client, listed, max_age).await {
                Lookup::Found(v) => return Ok(Some(v)),
                // An MR whose object was created (by another replica, or by this provider
                // before it restarted: writes whose marks are not ours) may be missing from
                // a list fetched before that create: it is read by key.
                Lookup::Absent if !mr.annotations.contains_key(EXTERNAL_CREATE_SUCCEEDED) => {
                    return Ok(None);
                }
                Lookup::Absent | Lookup::Unknown => {}
            }
        }
        let sent = Instant::now();
        let result = match self.kind.rest.read(&self.cx(), address).await {
            Ok(b) => Some(Arc::new(b)),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(ExternalError::new(e)),
        };
        if let Some((s, _, listed)) = snapshot {
            s.record_read(listed, result.as_deref(), sent);
        }
        Ok(result)
    }

    /// The JFrog identifier of an MR under the Kind's strategy; empty when not known yet
    /// (a server-assigned identifier before create).
    pub fn key(&self, mr: &Managed<FamilyKind>, params: &Value) -> String {
        let field = |f: &str| match user_value(params, f) {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        match self.kind.decl.id {
            Id::Name => {
                if mr.external_name.is_empty() {
                    mr.name.clone()
                } else {
                    mr.external_name.clone()
                }
            }
            Id::SpecField(f) => field(f),
            Id::Composite(fields, sep) => {
                let decl = |f: &str| self.kind.field(f);
                let mut parts: Vec<String> = fields
                    .iter()
                    .map(|f| match field(f) {
                        v if v.is_empty() && decl(f).is_some_and(|d| d.from_name) => {
                            if mr.external_name.is_empty() {
                                mr.name.clone()
                            } else {
                                mr.external_name.clone()
                            }
                        }
                        v => v,
                    })
                    .collect();
                // Optional trailing parts left unset are left out with their separator
                // (ItemProperties of the repository itself: `<repo>`, as upstream imports it).
                while parts.len() > 1
                    && parts.last().is_some_and(String::is_empty)
                    && !decl(fields[parts.len() - 1]).is_some_and(|d| d.required)
                {
                    parts.pop();
                }
                if parts.iter().any(String::is_empty) {
                    String::new()
                } else {
                    parts.join(sep)
                }
            }
            Id::ServerAssigned => mr.external_name.clone(),
            Id::Singleton(s) => s.to_string(),
        }
    }

    /// The external name recorded for the JFrog identifier `key`: the key itself, or, for a
    /// composite identifier with a part taken from the external name when unset
    /// ([`Field::from_name`]), that part (so a manifest without it keeps reaching the object).
    fn recorded_name(&self, key: &str) -> String {
        if let Id::Composite(fields, sep) = self.kind.decl.id
            && let Some(i) = fields
                .iter()
                .position(|f| self.kind.field(f).is_some_and(|d| d.from_name))
            && let Some(part) = key.splitn(fields.len(), sep).nth(i)
        {
            return part.to_string();
        }
        key.to_string()
    }

    /// `params` with the identifier parts taken from the external name filled in from
    /// `key`, so the body carries them as upstream sends them.
    fn with_identity<'a>(&self, key: &str, params: &'a Value) -> std::borrow::Cow<'a, Value> {
        let Id::Composite(fields, sep) = self.kind.decl.id else {
            return std::borrow::Cow::Borrowed(params);
        };
        let mut out = std::borrow::Cow::Borrowed(params);
        for (f, part) in fields.iter().zip(key.splitn(fields.len(), sep)) {
            if self.kind.field(f).is_some_and(|d| d.from_name)
                && user_value(params, f).is_none()
                && let Value::Object(m) = out.to_mut()
            {
                m.insert(f.to_string(), Value::String(part.to_string()));
            }
        }
        out
    }

    /// The claim key of a singleton on this client's platform.
    fn claim_key(&self, address: &Address) -> String {
        format!(
            "{}|{}.{}|{address}",
            self.client.base_url(),
            self.kind.decl.group,
            self.kind.decl.kind
        )
    }

    /// Claim a platform singleton for `mr` (the first MR to observe it keeps it until it is
    /// deleted). `Ok(false)`: another MR holds it and `mr` is being deleted; an error names
    /// the holder otherwise. Always `Ok(true)` for other identifier strategies.
    fn claim_singleton(
        &self,
        address: &Address,
        mr: &Managed<FamilyKind>,
    ) -> Result<bool, ExternalError> {
        if !matches!(self.kind.decl.id, Id::Singleton(_)) {
            return Ok(true);
        }
        match self.singletons.claim(
            &self.claim_key(address),
            &mr.uid,
            &display_name(mr),
            self.claim_lapse,
        ) {
            Ok(held) => Ok(held),
            // Deleting an MR that never managed the singleton must not reset it.
            Err(_) if mr.deleting => Ok(false),
            Err(holder) => Err(ExternalError::msg(format!(
                "{} {address} is a platform singleton already managed by {holder}: one managed resource per singleton (delete one of them)",
                self.kind.decl.kind
            ))),
        }
    }

    /// Whether the MR's object is one JFrog never stores ([`crate::hooks::Hooks::unstored_lifetime`])
    /// and its lifetime, counted from the create that made it, has not run out.
    fn unstored_and_alive(&self, mr: &Managed<FamilyKind>) -> bool {
        let Some(life) = self
            .kind
            .hooks
            .unstored_lifetime(&self.kind, &mr.for_provider)
        else {
            return false;
        };
        let Some(created) = meta::parse_stamp(mr.annotations.get(meta::EXTERNAL_CREATE_SUCCEEDED))
        else {
            return false;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(i64::MAX);
        now < created.timestamp().saturating_add(life.as_secs() as i64)
    }

    /// Release `mr`'s claim on a singleton after its delete (the reset): the next MR may
    /// claim it, and `mr` observes it as gone.
    fn release_singleton(&self, address: &Address, mr: &Managed<FamilyKind>) {
        if matches!(self.kind.decl.id, Id::Singleton(_)) {
            self.singletons.release(&self.claim_key(address), &mr.uid);
        }
    }

    /// Where the object of `key` is for the REST binding (the family's `address` hook).
    /// A field sent as a query parameter (see [`crate::Field::query`]) scopes the object: its
    /// value is carried in the address's query.
    fn address(&self, key: &str, params: &Value, at_provider: &Value) -> Address {
        let address = self
            .kind
            .hooks
            .address_observed(&self.kind, key, params, at_provider);
        // A server-assigned object has no key before its create, but its create (and the
        // lookup of a create whose answer was lost) is made in its scope all the same.
        if address.is_empty() && self.kind.decl.id != Id::ServerAssigned {
            return address;
        }
        self.kind
            .params()
            .filter(|f| f.query)
            .filter_map(|f| match user_value(params, f.crd) {
                Some(Value::String(v)) if !v.is_empty() => Some((f.crd, v.as_str())),
                _ => None,
            })
            .fold(address, |a, (n, v)| a.with_query(n, v))
    }

    fn context(&self, key: &str) -> DiffContext {
        self.kind.hooks.diff_context(&self.client, key)
    }

    /// Wire members of write-only fields the user gives only in initProvider.
    fn init_only_wires(&self, init_only: &[String]) -> Vec<&'static str> {
        self.kind
            .params()
            .filter(|f| {
                (f.write_only || f.sensitive)
                    && init_only
                        .iter()
                        .any(|s| s == f.crd || f.secret_ref == Some(s.as_str()))
            })
            .filter_map(|f| f.wire)
            .collect()
    }

    fn wo_version(params: &Value) -> Option<String> {
        user_value(params, "passwordWoVersion").map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// The request body for `mode`.
    fn body(
        &self,
        key: &str,
        params: &Value,
        secrets: &wire::Secrets,
        mode: Mode,
        skip: &[String],
        observed: Option<&Value>,
    ) -> Result<Map<String, Value>, ExternalError> {
        let params = self.with_identity(key, params);
        let mut body = wire::to_wire(&self.kind, key, &params, secrets, mode, skip, observed)
            .map_err(ExternalError::new)?;
        self.kind.hooks.encode(&self.kind, mode, &mut body);
        Ok(body)
    }

    /// The wire member of the Kind's generated secret when `params` leave it unset.
    fn generated_wire(&self, params: &Value) -> Option<&'static str> {
        self.kind.hooks.generated_secret(&self.kind, params)
    }

    /// Put a generated value into a create `body` whose generated secret is unset; returns
    /// the field's Terraform name and the value (for the connection Secret only).
    fn generate_secret(
        &self,
        params: &Value,
        body: &mut Map<String, Value>,
    ) -> Option<(&'static str, String)> {
        let wire = self.generated_wire(params)?;
        if body.get(wire).is_some_and(|v| !diff::is_empty(Some(v))) {
            return None;
        }
        let field = self.kind.params().find(|f| f.wire == Some(wire))?;
        let value = generate_password();
        body.insert(wire.to_string(), Value::String(value.clone()));
        Some((field.tf, value))
    }

    /// The desired body for an update and its write-only hashes; `recorded`: the hashes
    /// recorded for the MR ([`recorded_hashes`]).
    fn update_body(
        &self,
        mr: &Managed<FamilyKind>,
        key: &str,
        recorded: &Hashes,
    ) -> Result<(Map<String, Value>, Hashes), ExternalError> {
        let observed = match &mr.at_provider {
            Value::Object(_) => Some(&mr.at_provider),
            _ => None,
        };
        let mut body = self.body(
            key,
            &mr.for_provider,
            &mr.secrets,
            Mode::Update,
            &mr.init_only_fields,
            observed,
        )?;
        let hashes = diff::write_only_hashes(
            &self.kind,
            &body,
            &mr.uid,
            Self::wo_version(&mr.for_provider).as_deref(),
        );
        // Clear write-only values that were sent before and are no longer wanted (a
        // generated value stays while the parameters leave it unset).
        let skip = self.init_only_wires(&mr.init_only_fields);
        let generated = self.generated_wire(&mr.for_provider);
        for w in recorded.keys() {
            if !hashes.contains_key(w)
                && !skip.contains(&w.as_str())
                && generated != Some(w.as_str())
            {
                let Some(f) = self.kind.params().find(|f| f.wire == Some(w.as_str())) else {
                    // A nested write-only value (a handler's secret) goes with its element.
                    continue;
                };
                body.insert(w.clone(), empty_of(&f.ty).unwrap_or(Value::Null));
            }
        }
        Ok((body, hashes))
    }

    /// Create a server-assigned object and return its identifier and the create's answer
    /// (`Null` for an adopted object: its generated values are gone). When an earlier attempt
    /// failed (its outcome may be unknown) the object is looked for first; when this
    /// attempt fails (an answer lost after JFrog committed) it is looked for again: a found
    /// object is adopted, so a lost answer never makes a second one.
    async fn create_server_assigned(
        &self,
        mr: &Managed<FamilyKind>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(String, Value), ExternalError> {
        let hooks = self.kind.hooks;
        let find = || async {
            hooks
                .find_created(self.hook_ctx(address), address, body)
                .await
                .map_err(ExternalError::new)
        };
        if mr.annotations.contains_key(EXTERNAL_CREATE_FAILED)
            && let Some(id) = find().await?
        {
            tracing::info!(kind = self.kind.decl.kind, %id, "adopting the object an earlier create made");
            return Ok((id, Value::Null));
        }
        match self.kind.rest.create(&self.cx(), address, body).await {
            Ok(answer) => hooks
                .created_id(&self.kind, &answer)
                .map(|id| (id, answer))
                .ok_or_else(|| ExternalError::msg("the create answer carries no identifier")),
            Err(e) => match find().await {
                Ok(Some(id)) => {
                    tracing::info!(kind = self.kind.decl.kind, %id, error = %e, "create answer lost; adopting the object it made");
                    Ok((id, Value::Null))
                }
                _ => Err(create_error(e)),
            },
        }
    }

    /// Upstream's checks on the keys of the MR's whole-Secret references, before any write.
    fn check_secret_keys(&self, mr: &Managed<FamilyKind>) -> Result<(), ExternalError> {
        match &self.strict {
            Some(s) => checks::check_secret_keys(&s.checks, mr.secrets.keys().map(String::as_str))
                .map_err(ExternalError::msg),
            None => Ok(()),
        }
    }

    /// The family's rule for the identifier and upstream's checks on it, before any request.
    fn check_key(&self, key: &str, params: &Value) -> Result<(), ExternalError> {
        identifier_rules(&self.kind, self.strict.as_deref(), key, params)
            .map_err(ExternalError::msg)
    }

    /// The declared cross-field rules and the family's parameter rules, before any write.
    fn check_params(&self, params: &Value) -> Result<(), ExternalError> {
        let bad = |rule: String| ExternalError::msg(format!("invalid spec.forProvider: {rule}"));
        for f in self.kind.params() {
            if let Some(r) = f.secret_ref
                && f.required
                && user_value(params, f.crd).is_none()
                && user_value(params, r).is_none()
            {
                return Err(bad(format!("{} or {r} is required", f.crd)));
            }
            if let Some(gate) = f.requires
                && user_value(params, f.crd).is_some_and(|v| !diff::is_empty(Some(v)))
                && !wire::desired_bool(&self.kind, params, gate)
            {
                return Err(bad(format!(
                    "{} can only be set when {gate} is true (JFrog ignores it otherwise)",
                    f.crd
                )));
            }
        }
        self.kind.check_params(params).map_err(bad)?;
        if let Some(strict) = &self.strict {
            strict
                .check(params)
                .map_err(|e| ExternalError::msg(format!("invalid {e}")))?;
        }
        Ok(())
    }

    /// The family's rules that need other objects of the platform, before any write.
    async fn check_against_platform(
        &self,
        address: &Address,
        params: &Value,
    ) -> Result<(), ExternalError> {
        self.kind
            .hooks
            .check_against_platform(self.hook_ctx(address), params)
            .await
            .map_err(|rule| ExternalError::msg(format!("invalid spec.forProvider: {rule}")))
    }

    /// The changes of the field `crd` (a top-level parameter that differs): JFrog's value and
    /// the desired one (the declared default when unset), neither for a sensitive field; in an
    /// object, at the paths of the members that differ ([`diff::changed_paths`]).
    fn field_changes(
        &self,
        crd: &str,
        params: &Value,
        observed: &Map<String, Value>,
    ) -> Vec<FieldChange> {
        let field = self.kind.field(crd);
        let sensitive = field.is_some_and(|f| f.sensitive || f.write_only);
        let desired = user_value(params, crd)
            .cloned()
            .or_else(|| field.and_then(|f| f.default.to_json()));
        if sensitive {
            return vec![FieldChange {
                path: format!("forProvider.{crd}"),
                kind: ChangeKind::Update,
                old: None,
                new: None,
            }];
        }
        diff::changed_paths(crd, observed.get(crd), desired.as_ref())
            .into_iter()
            .map(|(path, old, new)| FieldChange {
                path: format!("forProvider.{path}"),
                kind: ChangeKind::Update,
                old,
                new,
            })
            .collect()
    }

    /// The CRD path of a write-only wire member (`password` -> `password`, or the
    /// `...SecretRef` beside it; `handler[]` -> `handler[].secret`).
    fn secret_path(&self, wire: &str) -> String {
        let (wire, nested) = match wire.strip_suffix("[]") {
            Some(w) => (w, true),
            None => (wire, false),
        };
        let Some(f) = self.kind.params().find(|f| f.wire == Some(wire)) else {
            return wire.to_string();
        };
        if nested {
            let inner: Vec<&str> =
                f.ty.children()
                    .unwrap_or_default()
                    .iter()
                    .filter(|c| c.sensitive || c.write_only)
                    .map(|c| c.crd)
                    .collect();
            return format!("{}[].{}", f.crd, inner.join(","));
        }
        f.crd.to_string()
    }

    /// Whether the observed object is of this Kind (its identity members match).
    fn check_identity(&self, key: &str, body: &Value) -> Result<(), ExternalError> {
        for (wire, want) in self.kind.decl.identity {
            let got = get_path(body, wire).and_then(Value::as_str).unwrap_or("");
            if !got.eq_ignore_ascii_case(want) {
                let have: Vec<String> = self
                    .kind
                    .decl
                    .identity
                    .iter()
                    .map(|(w, _)| {
                        format!(
                            "{w}={}",
                            get_path(body, w).and_then(Value::as_str).unwrap_or("")
                        )
                    })
                    .collect();
                let wanted: Vec<String> = self
                    .kind
                    .decl
                    .identity
                    .iter()
                    .map(|(w, v)| format!("{w}={v}"))
                    .collect();
                return Err(ExternalError::msg(format!(
                    "{key} exists in JFrog as another kind of object ({}), not a {} ({})",
                    have.join(", "),
                    self.kind.decl.kind,
                    wanted.join(", ")
                )));
            }
        }
        Ok(())
    }
}

#[async_trait]
impl ExternalClient<FamilyKind> for FamilyClient {
    async fn observe(
        &self,
        mr: &mut Managed<FamilyKind>,
    ) -> Result<ExternalObservation, ExternalError> {
        if mr.external_name.is_empty() && matches!(self.kind.decl.id, Id::Name | Id::ServerAssigned)
        {
            return Ok(ExternalObservation::default());
        }
        if mr.deleting
            && (matches!(self.kind.decl.id, Id::Singleton(_))
                || self.kind.hooks.gone_after_delete(&self.kind))
            && delete_requested(mr)
        {
            // A platform singleton is reset (or kept), never removed (and some objects stay
            // with what others own): once the delete succeeded it is gone for this MR.
            return Ok(ExternalObservation::default());
        }
        let key = self.key(mr, &mr.for_provider.clone());
        if key.is_empty() {
            return Ok(ExternalObservation::default());
        }
        let address = self.address(&key, &mr.for_provider, &mr.at_provider);
        // What JFrog cannot delete is forgotten: nothing is left to wait for.
        if mr.deleting && self.kind.rest.forgets_on_delete() {
            // A singleton forgotten by its MR may be claimed by the next one.
            self.release_singleton(&address, mr);
            return Ok(ExternalObservation::default());
        }
        if address.is_empty() {
            return Ok(ExternalObservation::default());
        }
        if !self.claim_singleton(&address, mr)? {
            // Another MR manages this singleton: deleting this one must not reset it.
            return Ok(ExternalObservation::default());
        }
        let Some(mut body) = self.read(&address, mr).await? else {
            if !mr.deleting && self.unstored_and_alive(mr) {
                return Ok(ExternalObservation {
                    resource_exists: true,
                    resource_up_to_date: true,
                    ..Default::default()
                });
            }
            return Ok(ExternalObservation::default());
        };
        if let Some(decoded) = self.kind.hooks.decode(&self.kind, &body) {
            body = Arc::new(decoded);
        }
        self.check_identity(&key, &body)?;
        let observed = wire::from_wire(&self.kind, &body);
        let recorded = recorded_hashes(mr);
        let mut at = observed.clone();
        at.insert("id".into(), Value::String(key.clone()));
        if !recorded.is_empty() || hashes_in_status(mr) {
            at.insert(
                HASHES_FIELD.into(),
                serde_json::to_value(&recorded).unwrap_or_default(),
            );
        }
        mr.at_provider = Value::Object(at);
        if let Some(why) = self.kind.hooks.unavailable(&self.kind, &mr.at_provider) {
            let mut c = Condition::creating();
            c.message = why;
            mr.set_condition(c);
        }
        let mut obs = ExternalObservation {
            resource_exists: true,
            resource_up_to_date: true,
            ..Default::default()
        };
        // Observe-only MRs are never updated, and an MR being deleted needs no diff (nor its
        // secrets, which may already be gone).
        if mr.observe_only || mr.deleting {
            return Ok(obs);
        }
        // Parameters fixed at create are in no answer: nothing to compare, nothing to send.
        if !self.kind.rest.updatable() {
            return Ok(obs);
        }
        if mr.late_initialize {
            let init_only = mr.init_only_fields.clone();
            let before = mr.for_provider.clone();
            obs.resource_late_initialized =
                diff::late_initialize(&self.kind, &mut mr.for_provider, &init_only, &observed);
            if obs.resource_late_initialized {
                obs.changes
                    .extend(late_initialized(&before, &mr.for_provider));
            }
        }
        let ctx = self.context(&key);
        let differ = diff::diff(
            &self.kind,
            &mr.for_provider,
            &mr.init_only_fields,
            &observed,
            &ctx,
        );
        obs.changes.extend(
            differ
                .iter()
                .flat_map(|crd| self.field_changes(crd, &mr.for_provider, &observed)),
        );
        let mut changed: Vec<String> = differ.into_iter().map(str::to_string).collect();
        // Write-only values are compared by hash: a Kind without them (most) and without a
        // recorded hash has nothing to compare, and builds no update body for it.
        let desired_hashes = if recorded.is_empty() && !diff::has_write_only(&self.kind) {
            Hashes::new()
        } else {
            self.update_body(mr, &key, &recorded)?.1
        };
        let skip = self.init_only_wires(&mr.init_only_fields);
        let generated = self.generated_wire(&mr.for_provider);
        let wires: std::collections::BTreeSet<&String> =
            desired_hashes.keys().chain(recorded.keys()).collect();
        for w in wires {
            if skip.contains(&w.as_str()) {
                continue;
            }
            // A generated value (its hash recorded at create) stands while the parameters
            // leave it unset.
            if generated == Some(w.as_str()) && !desired_hashes.contains_key(w) {
                continue;
            }
            // An immutable write-only value without a record (the create's answer was lost,
            // or the object was adopted) cannot differ from what was sent, nor be changed.
            let immutable = self
                .kind
                .params()
                .any(|f| f.immutable && f.wire == Some(w.as_str()));
            if immutable && !recorded.contains_key(w) {
                continue;
            }
            if desired_hashes.get(w) != recorded.get(w) {
                changed.push(format!("{w} (write-only)"));
                let kind = match (desired_hashes.contains_key(w), recorded.contains_key(w)) {
                    (true, false) => ChangeKind::SecretSet,
                    (false, _) => ChangeKind::SecretCleared,
                    (true, true) => ChangeKind::SecretChanged,
                };
                obs.changes.push(FieldChange {
                    path: format!("forProvider.{}", self.secret_path(w)),
                    kind,
                    old: None,
                    new: None,
                });
            }
        }
        if !changed.is_empty() {
            obs.resource_up_to_date = false;
            obs.diff = format!("fields differ: {}", changed.join(", "));
        }
        Ok(obs)
    }

    async fn check_write(
        &self,
        mr: &Managed<FamilyKind>,
        create: bool,
    ) -> Result<Option<String>, ExternalError> {
        if create {
            let key = self.key(mr, &mr.create_parameters);
            if self.kind.decl.id == Id::ServerAssigned {
                self.check_params(&mr.create_parameters)?;
                return Ok(None);
            }
            if key.is_empty() {
                return Err(ExternalError::msg(format!(
                    "cannot create: the identifier of this {} is not set in spec.forProvider",
                    self.kind.decl.kind
                )));
            }
            self.check_key(&key, &mr.create_parameters)?;
            self.check_params(&mr.create_parameters)?;
            self.check_secret_keys(mr)?;
            let address = self.address(&key, &mr.create_parameters, &Value::Null);
            self.check_against_platform(&address, &mr.create_parameters)
                .await?;
            if address.is_empty() {
                return Err(ExternalError::msg(format!(
                    "cannot create: the {} belongs to an object not named in spec.forProvider",
                    self.kind.decl.kind
                )));
            }
            return Ok(Some(key));
        }
        if !self.kind.rest.updatable() {
            return Err(ExternalError::msg(format!(
                "a {} cannot be changed in JFrog: its parameters are fixed at create (delete the managed resource and create it anew)",
                self.kind.decl.kind
            )));
        }
        let key = self.key(mr, &mr.for_provider);
        self.check_params(&mr.for_provider)?;
        self.check_secret_keys(mr)?;
        let address = self.address(&key, &mr.for_provider, &mr.at_provider);
        self.check_against_platform(&address, &mr.for_provider)
            .await?;
        for f in self.kind.params().filter(|f| f.immutable) {
            if let (Some(d), Some(o)) = (
                user_value(&mr.for_provider, f.crd),
                mr.at_provider.get(f.crd),
            ) && !o.is_null()
                && d != o
            {
                return Err(ExternalError::msg(format!(
                    "{} is immutable: JFrog has {o}, the spec asks for {d}",
                    f.crd
                )));
            }
        }
        Ok(Some(key))
    }

    async fn create(
        &self,
        mr: &mut Managed<FamilyKind>,
    ) -> Result<ExternalCreation, ExternalError> {
        let key = self.key(mr, &mr.create_parameters.clone());
        if key.is_empty() && self.kind.decl.id != Id::ServerAssigned {
            return Err(ExternalError::msg(format!(
                "cannot create: the identifier of this {} is not set in spec.forProvider",
                self.kind.decl.kind
            )));
        }
        if self.kind.decl.id != Id::ServerAssigned {
            self.check_key(&key, &mr.create_parameters)?;
        }
        self.check_params(&mr.create_parameters)?;
        self.check_secret_keys(mr)?;
        let address = self.address(&key, &mr.create_parameters, &Value::Null);
        self.check_against_platform(&address, &mr.create_parameters)
            .await?;
        if address.is_empty() && self.kind.decl.id != Id::ServerAssigned {
            return Err(ExternalError::msg(format!(
                "cannot create: the {} belongs to an object not named in spec.forProvider",
                self.kind.decl.kind
            )));
        }
        let _write = self.begin_write(&address);
        let mut body = self.body(
            &key,
            &mr.create_parameters,
            &mr.secrets,
            Mode::Create,
            &[],
            None,
        )?;
        let generated = self.generate_secret(&mr.create_parameters, &mut body);
        let (key, answer) = match self.kind.decl.id {
            Id::ServerAssigned => self.create_server_assigned(mr, &address, &body).await?,
            _ => {
                let answer = self
                    .kind
                    .rest
                    .create(&self.cx(), &address, &body)
                    .await
                    .map_err(create_error)?;
                (key, answer)
            }
        };
        let recorded = self.recorded_name(&key);
        if mr.external_name != recorded {
            mr.external_name = recorded;
        }
        let mut connection_details = connection_details(&self.kind, &answer);
        if let Some((tf, value)) = generated {
            connection_details
                .0
                .insert(format!("attribute.{tf}"), value.into_bytes());
        }
        let created = self.address(&key, &mr.create_parameters, &Value::Null);
        self.kind.hooks.after_create(self.hook_ctx(&created)).await;
        let hashes = diff::write_only_hashes(
            &self.kind,
            &body,
            &mr.uid,
            Self::wo_version(&mr.create_parameters).as_deref(),
        );
        mr.annotations.remove(LEGACY_HASHES_ANNOTATION);
        if hashes.is_empty() {
            mr.annotations.remove(HASHES_ANNOTATION);
        } else {
            mr.annotations.insert(
                HASHES_ANNOTATION.into(),
                serde_json::to_string(&hashes).unwrap_or_default(),
            );
        }
        Ok(ExternalCreation {
            connection_details,
            external_name: None,
        })
    }

    async fn update(&self, mr: &mut Managed<FamilyKind>) -> Result<ExternalUpdate, ExternalError> {
        if !self.kind.rest.updatable() {
            return Err(ExternalError::msg(format!(
                "a {} cannot be changed in JFrog: its parameters are fixed at create (delete the managed resource and create it anew)",
                self.kind.decl.kind
            )));
        }
        let key = self.key(mr, &mr.for_provider.clone());
        self.check_params(&mr.for_provider)?;
        self.check_secret_keys(mr)?;
        let address = self.address(&key, &mr.for_provider, &mr.at_provider);
        self.check_against_platform(&address, &mr.for_provider)
            .await?;
        let _write = self.begin_write(&address);
        // Immutable fields are guarded at admission; a value that differs here was set
        // outside Kubernetes or before the rule existed.
        for f in self.kind.params().filter(|f| f.immutable) {
            if let (Some(d), Some(o)) = (
                user_value(&mr.for_provider, f.crd),
                mr.at_provider.get(f.crd),
            ) && !o.is_null()
                && d != o
            {
                return Err(ExternalError::msg(format!(
                    "{} is immutable: JFrog has {o}, the spec asks for {d}",
                    f.crd
                )));
            }
        }
        let recorded = recorded_hashes(mr);
        let (body, hashes) = self.update_body(mr, &key, &recorded)?;
        self.kind
            .rest
            .update(&self.cx(), &address, &body)
            .await
            .map_err(ExternalError::new)?;
        self.kind
            .hooks
            .after_update(self.hook_ctx(&address), mr_state(mr))
            .await?;
        // Keep the hashes of init-only write-only values recorded at create.
        let mut all = recorded;
        let skip = self.init_only_wires(&mr.init_only_fields);
        let generated = self.generated_wire(&mr.for_provider);
        all.retain(|k, _| skip.contains(&k.as_str()) || generated == Some(k.as_str()));
        all.extend(hashes);
        // An empty map is kept: it overrides the hashes Create recorded in the annotation.
        let hashes = serde_json::to_value(&all).unwrap_or_default();
        if let Value::Object(at) = &mut mr.at_provider {
            at.insert(HASHES_FIELD.into(), hashes);
        } else {
            let mut at = Map::new();
            at.insert(HASHES_FIELD.into(), hashes);
            mr.at_provider = Value::Object(at);
        }
        Ok(ExternalUpdate::default())
    }

    async fn delete(&self, mr: &mut Managed<FamilyKind>) -> Result<ExternalDelete, ExternalError> {
        let key = self.key(mr, &mr.for_provider.clone());
        if key.is_empty() {
            return Ok(ExternalDelete::default());
        }
        let address = self.address(&key, &mr.for_provider, &mr.at_provider);
        let _write = self.begin_write(&address);
        self.kind
            .hooks
            .before_delete(self.hook_ctx(&address), mr_state(mr))
            .await;
        match self.kind.rest.delete(&self.cx(), &address).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(ExternalError::new(e)),
        }
        self.release_singleton(&address, mr);
        Ok(ExternalDelete::default())
    }
}

/// The fields late initialisation filled in (`after` against `before`), with JFrog's value.
fn late_initialized(before: &Value, after: &Value) -> Vec<FieldChange> {
    let Value::Object(after) = after else {
        return Vec::new();
    };
    after
        .iter()
        .filter(|(k, v)| !v.is_null() && before.get(k.as_str()).is_none_or(Value::is_null))
        .map(|(k, v)| FieldChange {
            path: format!("forProvider.{k}"),
            kind: ChangeKind::LateInit,
            old: None,
            new: Some(v.clone()),
        })
        .collect()
}

/// The error of a create call: one whose outcome is unknown (the answer was lost after
/// JFrog may have committed) is marked so, and the runtime keeps the create pending.
fn create_error(e: jfrog_client::Error) -> ExternalError {
    let unknown = e.is_indeterminate();
    let e = ExternalError::new(e);
    if unknown { e.outcome_unknown() } else { e }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use jfrog_client::Service;
    use serde_json::json;

    use super::*;
    use crate::decl::{Dv, Field, Id, KindDecl};
    use crate::hooks::NoHooks;
    use crate::rest::{Call, Paths, Verb};

    static REST: Paths = Paths {
        service: Service::Access,
        create: Call::new(Verb::Post, "/api/v1/things"),
        read: Call::new(Verb::Get, "/api/v1/things/{key}"),
        update: Call::new(Verb::Put, "/api/v1/things/{key}"),
        delete: Call::new(Verb::Delete, "/api/v1/things/{key}"),
        list: None,
        case_insensitive: false,
    };
    static HOOKS: NoHooks = NoHooks;
    const FIELDS: &[Field] = &[
        Field::new("repoKey", "repo_key", Some("repoKey"), Ty::Str),
        Field::new("projectKey", "project_key", Some("projectKey"), Ty::Str),
        Field::new("enabled", "enabled", Some("enabled"), Ty::Bool).default(Dv::Bool(true)),
    ];

    const REQUIRED_PARTS: &[Field] = &[
        Field::new("repoKey", "repo_key", Some("repoKey"), Ty::Str).required(),
        Field::new("projectKey", "project_key", Some("projectKey"), Ty::Str).required(),
    ];
    const NAME_PARTS: &[Field] = &[
        Field::new("name", "name", Some("name"), Ty::Str).from_name(),
        Field::new("version", "version", Some("version"), Ty::Str).required(),
    ];

    fn decl(id: Id) -> KindDecl {
        KindDecl {
            provider: "platform",
            group: "access",
            kind: "Thing",
            description: "A thing.",
            id,
            id_wire: Some("key"),
            extends: FIELDS,
            mixins: &[],
            fields: &[],
            default_overrides: &[],
            enum_overrides: &[],
            identity: &[],
            fixed_body: &[],
            rules: &[],
        }
    }

    /// `d` with the test family's behaviour.
    fn bound(d: KindDecl) -> Kind {
        Kind {
            decl: d,
            rest: &REST,
            family: &HOOKS,
            hooks: &HOOKS,
        }
    }

    static REPO_KEY_CHECKS: KindChecks = KindChecks {
        kind: "Thing",
        fields: &[("repoKey", &[checks::Check::Length(Some(2), Some(10))])],
        rules: &[],
        late_init_safe: &[],
        key: &[],
        secret_keys: &[],
    };

    /// Observe builds the update body (for its write-only hashes) only for a Kind that has
    /// write-only or sensitive values.
    #[test]
    fn only_a_kind_with_write_only_values_has_hashes_to_compare() {
        let plain = FamilyKind::new(&bound(decl(Id::Name))).expect("kind");
        assert!(!diff::has_write_only(plain.resolved()));
        const SECRET: &[Field] = &[
            Field::new("repoKey", "repo_key", Some("repoKey"), Ty::Str),
            Field::new("passwordSecretRef", "password", Some("password"), Ty::Str)
                .sensitive()
                .write_only(),
        ];
        let with_secret = FamilyKind::new(&bound(KindDecl {
            extends: SECRET,
            ..decl(Id::Name)
        }))
        .expect("kind");
        assert!(diff::has_write_only(with_secret.resolved()));
    }

    #[test]
    fn a_compiled_strict_schema_is_dropped_once_idle_and_compiled_again_when_needed() {
        let kind = FamilyKind::new(&bound(decl(Id::Name)))
            .expect("kind")
            .with_checks(vec![&REPO_KEY_CHECKS]);
        let strict = kind.strict.clone();
        assert!(
            !strict.is_compiled(),
            "compiled at the first write, not before"
        );
        let err = strict
            .check(&json!({"repoKey": "x"}))
            .expect_err("too short");
        assert!(err.contains("spec.forProvider.repoKey"), "{err}");
        assert!(strict.is_compiled());
        // Used within the idle time: kept.
        sweep_compiled(Instant::now() + COMPILED_IDLE / 2);
        assert!(strict.is_compiled());
        // Idle for longer: dropped, and compiled again by the next write.
        sweep_compiled(Instant::now() + COMPILED_IDLE);
        assert!(!strict.is_compiled());
        assert!(strict.check(&json!({"repoKey": "repo"})).is_ok());
        assert!(
            strict
                .check(&json!({"repoKey": "far-too-long-key"}))
                .is_err()
        );
        assert!(strict.is_compiled());
    }

    fn mr(name: &str, external_name: &str, params: Value) -> Managed<FamilyKind> {
        managed(name, external_name, params)
    }

    fn client(id: Id) -> FamilyClient {
        client_of(decl(id))
    }

    fn client_of(d: KindDecl) -> FamilyClient {
        let jfrog = JfrogClient::builder("http://127.0.0.1:1")
            .build()
            .expect("client");
        let kind = FamilyKind::new(&bound(d)).expect("composes");
        FamilyClient::new(jfrog, kind.resolved().clone())
    }

    /// Every identifier strategy derives the JFrog identifier the runtime expects, and the
    /// runtime learns which strategies are deterministic from the declaration.
    #[test]
    fn the_five_identifier_strategies() {
        let params = json!({"repoKey": "libs-local", "projectKey": "team"});
        let m = mr("my-thing", "my-thing", params.clone());
        assert_eq!(client(Id::Name).key(&m, &params), "my-thing");
        let renamed = mr("my-thing", "Other_Name", params.clone());
        assert_eq!(client(Id::Name).key(&renamed, &params), "Other_Name");
        assert_eq!(
            client(Id::SpecField("repoKey")).key(&m, &params),
            "libs-local"
        );
        assert_eq!(
            client(Id::Composite(&["repoKey", "projectKey"], ":")).key(&m, &params),
            "libs-local:team"
        );
        // A composite with a required part missing is not known yet (no request with half
        // a key); an optional trailing part left unset is left out with its separator.
        let half = json!({"repoKey": "libs-local"});
        assert_eq!(
            client(Id::Composite(&["repoKey", "projectKey"], ":")).key(&m, &half),
            "libs-local"
        );
        let required = client_of(KindDecl {
            extends: REQUIRED_PARTS,
            ..decl(Id::Composite(&["repoKey", "projectKey"], ":"))
        });
        assert_eq!(required.key(&m, &half), "");
        assert_eq!(required.key(&m, &json!({"projectKey": "team"})), "");
        // A part taken from the external name when unset (Upjet's NameAsIdentifier).
        let named = client_of(KindDecl {
            extends: NAME_PARTS,
            ..decl(Id::Composite(&["name", "version"], ":"))
        });
        let bundle = mr("bundle-a", "bundle-a", json!({"version": "1.0"}));
        assert_eq!(
            named.key(&bundle, &json!({"version": "1.0"})),
            "bundle-a:1.0"
        );
        assert_eq!(named.recorded_name("bundle-a:1.0"), "bundle-a");
        assert_eq!(
            named.key(&bundle, &json!({"name": "given", "version": "1.0"})),
            "given:1.0"
        );
        assert_eq!(
            client(Id::ServerAssigned).key(&mr("my-thing", "", params.clone()), &params),
            ""
        );
        assert_eq!(
            client(Id::ServerAssigned).key(&mr("my-thing", "4711", params.clone()), &params),
            "4711"
        );
        assert_eq!(
            client(Id::Singleton("lock-policy")).key(&m, &params),
            "lock-policy"
        );
        for (id, deterministic) in [
            (Id::Name, true),
            (Id::SpecField("repoKey"), true),
            (Id::Composite(&["repoKey"], ":"), true),
            (Id::Singleton("s"), true),
            (Id::ServerAssigned, false),
        ] {
            let k = FamilyKind::new(&bound(decl(id))).expect("composes");
            assert_eq!(
                k.info().identifier.is_deterministic(),
                deterministic,
                "{id:?}"
            );
            assert_eq!(k.info().provider, "platform");
            assert_eq!(k.info().group, "access");
        }
    }

    /// The body carries the identifier, the identity and the defaults; a server-assigned
    /// Kind sends no identifier before it has one.
    #[test]
    fn bodies_carry_the_identifier_where_it_is_known() {
        let c = client(Id::Name);
        let body = c
            .body(
                "my-thing",
                &json!({"repoKey": "r"}),
                &BTreeMap::new(),
                Mode::Create,
                &[],
                None,
            )
            .expect("body");
        assert_eq!(
            Value::Object(body),
            json!({"key": "my-thing", "repoKey": "r", "enabled": true})
        );
        let c = client(Id::ServerAssigned);
        let body = c
            .body("", &json!({}), &BTreeMap::new(), Mode::Create, &[], None)
            .expect("body");
        assert_eq!(Value::Object(body), json!({"enabled": true}));
    }

    const RANGE: &[Field] = &[
        Field::new("from", "from", Some("from"), Ty::Num),
        Field::new("to", "to", Some("to"), Ty::Num),
    ];
    const EXTRA: &[Field] =
        &[
            Field::new("minSeverity", "min_severity", Some("min_severity"), Ty::Str)
                .default(Dv::Str("All severities")),
        ];
    const CRITERIA: &[Field] = &[
        Field::new("minSeverity", "min_severity", Some("min_severity"), Ty::Str)
            .norm(crate::decl::Norm::IgnoreCase),
        Field::new(
            "cvssRange",
            "cvss_range",
            Some("cvss_range"),
            Ty::Block(RANGE),
        ),
        Field::new(
            "exposures",
            "exposures",
            Some("exposures"),
            Ty::Block(EXTRA),
        ),
    ];
    const RULE: &[Field] = &[
        Field::new("name", "name", Some("name"), Ty::Str),
        Field::new(
            "criteria",
            "criteria",
            Some("criteria"),
            Ty::Block(CRITERIA),
        ),
        Field::new("active", "active", Some("actions.active"), Ty::Bool),
    ];
    const RULES: &[Field] = &[Field::new("rule", "rule", Some("rules"), Ty::ObjSet(RULE))];

    /// The first MR of a singleton claims it; a second one is refused with the first's
    /// name until the first is deleted.
    #[test]
    fn a_singleton_has_one_mr() {
        const L: Duration = Duration::from_secs(3600);
        let s = Singletons::default();
        assert_eq!(s.claim("url|Settings", "uid-a", "default/a", L), Ok(true));
        assert_eq!(s.claim("url|Settings", "uid-a", "default/a", L), Ok(true));
        assert_eq!(
            s.claim("url|Settings", "uid-b", "default/b", L),
            Err("default/a".to_string())
        );
        assert_eq!(s.claim("other|Settings", "uid-b", "default/b", L), Ok(true));
        s.release("url|Settings", "uid-b");
        assert!(s.claim("url|Settings", "uid-b", "default/b", L).is_err());
        s.release("url|Settings", "uid-a");
        // Reset by its own delete: gone for the first MR; the next one may claim it.
        assert_eq!(s.claim("url|Settings", "uid-a", "default/a", L), Ok(false));
        assert_eq!(s.claim("url|Settings", "uid-b", "default/b", L), Ok(true));
        // A claim its MR stopped refreshing lapses.
        assert_eq!(
            s.claim("url|Settings", "uid-c", "default/c", Duration::ZERO),
            Ok(true)
        );
    }

    /// Objects nest on the wire (a rule's criteria's CVSS range, numbers kept as numbers,
    /// dotted members inside elements); read back in any order, with severities in another
    /// casing and without the blocks nobody set, they are up to date.
    #[test]
    fn nested_objects_map_and_compare() {
        let d = KindDecl {
            extends: RULES,
            ..decl(Id::Name)
        };
        let kind = d.resolve().expect("composes");
        let params = json!({"rule": [
            {"name": "a", "criteria": [{"cvssRange": [{"from": 7.5, "to": 10}]}], "active": true},
            {"name": "b", "criteria": [{"minSeverity": "All severities"}]}
        ]});
        let body = wire::to_wire(
            &kind,
            "p",
            &params,
            &BTreeMap::new(),
            Mode::Create,
            &[],
            None,
        )
        .expect("body");
        assert_eq!(
            body["rules"][0],
            json!({"name": "a", "criteria": {"cvss_range": {"from": 7.5, "to": 10}}, "actions": {"active": true}})
        );
        let answer = json!({"key": "p", "rules": [
            {"name": "b", "criteria": {"min_severity": "All Severities"}},
            {"name": "a", "criteria": {"cvss_range": {"from": 7.5, "to": 10.0}}, "actions": {"active": true}}
        ]});
        let observed = wire::from_wire(&kind, &answer);
        let ctx = DiffContext::default();
        assert!(diff::diff(&kind, &params, &[], &observed, &ctx).is_empty());
        let mut changed = answer.clone();
        changed["rules"][1]["criteria"]["cvss_range"]["from"] = json!(4.0);
        let observed = wire::from_wire(&kind, &changed);
        assert_eq!(
            diff::diff(&kind, &params, &[], &observed, &ctx),
            vec!["rule"]
        );
    }

    const LEAF: &[Field] = &[
        Field::new("digit", "digit", Some("digit"), Ty::Int),
        Field::new("name", "name", Some("name"), Ty::Str),
    ];
    const NESTINGS: &[Field] = &[
        Field::new("single", "single", Some("single"), Ty::Object(LEAF)),
        Field::new("block", "block", Some("block"), Ty::Block(LEAF)),
        Field::new("list", "list", Some("list"), Ty::ObjList(LEAF)),
        Field::new("set", "set", Some("set"), Ty::ObjSet(LEAF)),
        Field::new("map", "map", Some("map"), Ty::Map(crate::MapWire::Object)),
    ];

    /// Each Terraform nesting mode as Upjet renders it: a single-nested attribute or block
    /// is a plain object in the CRD, a list block of at most one an array of one (both one
    /// JSON object on the wire), list and set blocks arrays (a set compares in any order), a
    /// map an object of strings; each reads back in its CRD shape and compares equal.
    #[test]
    fn each_nesting_mode_renders_maps_and_compares_as_terraform_defines_it() {
        let d = KindDecl {
            extends: NESTINGS,
            ..decl(Id::Name)
        };
        let kind = d.resolve().expect("composes");
        let schema = crate::schema::parameters_schema(&kind);
        let p = &schema["properties"];
        assert_eq!(p["single"]["type"], "object");
        assert!(p["single"].get("items").is_none());
        assert_eq!(p["single"]["properties"]["digit"]["type"], "integer");
        assert_eq!(p["block"]["type"], "array");
        assert_eq!(p["block"]["maxItems"], 1);
        assert_eq!(
            p["block"]["items"]["properties"]["digit"]["type"],
            "integer"
        );
        assert_eq!(p["list"]["type"], "array");
        assert!(p["list"].get("maxItems").is_none());
        assert_eq!(p["set"]["type"], "array");
        assert_eq!(p["map"]["type"], "object");
        assert_eq!(p["map"]["additionalProperties"]["type"], "string");

        let params = json!({
            "single": {"digit": 1, "name": "s"},
            "block": [{"digit": 2}],
            "list": [{"name": "a"}, {"name": "b"}],
            "set": [{"name": "x"}, {"name": "y"}],
            "map": {"k": "v"},
        });
        let body = wire::to_wire(
            &kind,
            "p",
            &params,
            &BTreeMap::new(),
            Mode::Create,
            &[],
            None,
        )
        .expect("body");
        assert_eq!(body["single"], json!({"digit": 1, "name": "s"}));
        assert_eq!(body["block"], json!({"digit": 2}));
        assert_eq!(body["list"], json!([{"name": "a"}, {"name": "b"}]));
        assert_eq!(body["map"], json!({"k": "v"}));
        let mut answer = Value::Object(body.clone());
        answer["set"] = json!([{"name": "y"}, {"name": "x"}]);
        let observed = wire::from_wire(&kind, &answer);
        assert_eq!(observed["single"], params["single"]);
        assert_eq!(observed["block"], params["block"]);
        let ctx = DiffContext::default();
        assert!(diff::diff(&kind, &params, &[], &observed, &ctx).is_empty());
        // A change inside the single-nested object is drift of that field only; a list's
        // order is meaningful.
        let mut changed = answer.clone();
        changed["single"]["digit"] = json!(3);
        changed["list"] = json!([{"name": "b"}, {"name": "a"}]);
        let observed = wire::from_wire(&kind, &changed);
        assert_eq!(
            diff::diff(&kind, &params, &[], &observed, &ctx),
            vec!["single", "list"]
        );
    }

    const PLAIN_SECRET_ELEM: &[Field] = &[
        Field::new("key", "key", Some("key"), Ty::Str).required(),
        Field::new("value", "value", Some("value"), Ty::Str)
            .required()
            .write_only()
            .secret_ref("valueSecretRef"),
    ];
    const PLAIN_SECRET_FIELDS: &[Field] = &[
        Field::new("key", "key", Some("licenseKey"), Ty::Str)
            .required()
            .write_only()
            .secret_ref("keySecretRef"),
        Field::new(
            "secrets",
            "secrets",
            Some("secrets"),
            Ty::ObjSet(PLAIN_SECRET_ELEM),
        )
        .write_only(),
    ];

    fn plain_secret_kind(fields: &'static [Field]) -> FamilyKind {
        FamilyKind::new(&bound(KindDecl {
            id_wire: None,
            extends: &[],
            fields,
            ..decl(Id::Singleton("thing"))
        }))
        .expect("composes")
    }

    /// A secret upstream keeps as a plain string takes a Secret reference beside it: the
    /// runtime fetches the reference (top level and inside list elements), both forms send
    /// the same member and hash alike (switching form is not drift), at most one is allowed
    /// at admission, a required one needs either before any write, and a reference whose
    /// Secret is missing fails naming the field, never a value.
    #[test]
    fn a_plain_secret_takes_a_secret_reference_beside_it() {
        let kind = plain_secret_kind(PLAIN_SECRET_FIELDS);
        let info = kind.info();
        let refs: Vec<&str> = info.secret_refs.iter().map(|r| r.field).collect();
        assert!(refs.contains(&"keySecretRef"), "{refs:?}");
        assert!(refs.contains(&"secrets.0.valueSecretRef"), "{refs:?}");
        assert!(info.secret_refs.iter().all(|r| !r.required));
        // Required as "one of the two": not by the runtime's rule on `key` alone.
        assert!(!info.required_params.contains(&"key"));

        let jfrog = JfrogClient::builder("http://127.0.0.1:1")
            .build()
            .expect("client");
        let c = FamilyClient::new(jfrog, kind.resolved().clone());
        let plain = json!({"key": "LIC-123", "secrets": [{"key": "token", "value": "s3cr3t"}]});
        let by_ref = json!({
            "keySecretRef": {"name": "licence", "key": "key"},
            "secrets": [{"key": "token", "valueSecretRef": {"name": "w", "key": "token"}}],
        });
        let secrets: wire::Secrets = [
            ("keySecretRef".to_string(), "LIC-123".to_string().into()),
            (
                "secrets.0.valueSecretRef".to_string(),
                "s3cr3t".to_string().into(),
            ),
        ]
        .into_iter()
        .collect();
        let body = |params: &Value, secrets: &wire::Secrets| {
            c.body("thing", params, secrets, Mode::Update, &[], None)
                .expect("body")
        };
        let a = body(&plain, &BTreeMap::new());
        let b = body(&by_ref, &secrets);
        assert_eq!(
            Value::Object(a.clone()),
            json!({"licenseKey": "LIC-123", "secrets": [{"key": "token", "value": "s3cr3t"}]})
        );
        assert_eq!(a, b);
        let hashes = |body| diff::write_only_hashes(kind.resolved(), body, "uid", None);
        assert_eq!(hashes(&a), hashes(&b));
        assert!(hashes(&a).contains_key("licenseKey"));
        let other = body(&json!({"key": "LIC-456"}), &BTreeMap::new());
        assert_ne!(hashes(&other)["licenseKey"], hashes(&a)["licenseKey"]);

        // The Secret not resolved: an error naming the field, not a value.
        let e = c
            .body("thing", &by_ref, &BTreeMap::new(), Mode::Update, &[], None)
            .expect_err("missing secret");
        assert!(e.to_string().contains("keySecretRef"), "{e}");
        assert!(!e.to_string().contains("LIC-123"));

        // Neither form of a required one: refused before any write, naming both.
        let e = c.check_params(&json!({})).expect_err("required");
        assert!(
            e.to_string().contains("key or keySecretRef is required"),
            "{e}"
        );
        c.check_params(&by_ref).expect("the reference is enough");
        // Either form given only in initProvider: its member is sent on create, never
        // compared (nor cleared) afterwards.
        for init in ["key", "keySecretRef"] {
            assert_eq!(c.init_only_wires(&[init.to_string()]), ["licenseKey"]);
        }
        c.check_params(&plain).expect("the plain value is enough");

        // The schema: both forms, at most one (top level and in elements), one of the two
        // in an element where the plain one is required.
        let s = schema::parameters_schema(kind.resolved());
        assert_eq!(
            s["properties"]["keySecretRef"]["required"],
            json!(["key", "name"])
        );
        assert_eq!(s["properties"]["key"]["type"], "string");
        let rules = s["x-kubernetes-validations"].to_string();
        assert!(
            rules.contains("!(has(self.key) && has(self.keySecretRef))"),
            "{rules}"
        );
        let items = &s["properties"]["secrets"]["items"];
        assert!(items["properties"]["valueSecretRef"].is_object());
        assert_eq!(items["required"], json!(["key"]));
        let rules = items["x-kubernetes-validations"].to_string();
        assert!(
            rules.contains("!(has(self.value) && has(self.valueSecretRef))"),
            "{rules}"
        );
        assert!(
            rules.contains("has(self.value) || has(self.valueSecretRef)"),
            "{rules}"
        );
        // The reference never reaches the observation.
        let o = schema::observation_schema(kind.resolved(), kind.resolved().id_description());
        assert!(o["properties"].get("keySecretRef").is_none());
        assert!(o["properties"].get("key").is_none());
    }

    /// A Secret-reference form is refused on a field that is not a write-only plain string,
    /// or under another name than `<name>SecretRef`.
    #[test]
    fn a_secret_reference_form_needs_a_write_only_plain_string() {
        const NOT_WO: &[Field] =
            &[Field::new("key", "key", Some("k"), Ty::Str).secret_ref("keySecretRef")];
        const BAD_NAME: &[Field] = &[Field::new("key", "key", Some("k"), Ty::Str)
            .write_only()
            .secret_ref("licenceRef")];
        const NESTED: &[Field] = &[Field::new("value", "value", Some("v"), Ty::Bool)
            .write_only()
            .secret_ref("valueSecretRef")];
        const IN_BLOCK: &[Field] = &[Field::new("s", "s", Some("s"), Ty::ObjList(NESTED))];
        for fields in [NOT_WO, BAD_NAME, IN_BLOCK] {
            let d = KindDecl {
                id_wire: None,
                extends: &[],
                fields,
                ..decl(Id::Singleton("thing"))
            };
            assert!(FamilyKind::new(&bound(d)).is_err(), "{fields:?}");
        }
    }
}
