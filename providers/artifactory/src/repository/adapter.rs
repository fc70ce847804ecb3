//! The one generic repository adapter: a [`RepositoryKind`] (the runtime's `ManagedKind` for
//! any declared repository Kind), its [`RepositoryConnector`] and the per-MR
//! [`RepositoryClient`] (`ExternalClient`) that observes, creates, updates and deletes
//! repositories through `jfrog-client`.
//!
//! - Observe: served from the shared repository snapshot (see `snapshot`) when it has a
//!   fresh enough configuration, else `GET` by key (the external name); only `NotFound` of
//!   that `GET` means "does not exist".
//!   A repository of another class or package type under that key is an error, not drift.
//!   `atProvider` is everything readable; unset server-defaulted fields are late-initialised;
//!   the diff compares what the user manages (see `diff`); write-only values by hash.
//! - Create: `PUT` of the full body (defaults applied); the hashes of write-only values sent
//!   are kept in an annotation (the runtime persists annotations set by Create).
//! - Update: `POST` of every managed field (removed fields reset to default/empty; write-only
//!   values removed are cleared), then project attach/detach on the Access API; the new
//!   hashes go to `atProvider` (the runtime keeps status set by Update).
//! - Delete: `DELETE`; `NotFound` is success. Federated `cleanupOnDelete` also deletes members
//!   on this same instance.
//! - Federated repositories: after a create (except release bundles) and an update,
//!   `POST /artifactory/api/federation/configSync/{key}`, whose failure is only a warning.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use http::Method;
use jfrog_client::{ClientMetrics, Idempotency, JfrogClient, Service};
use provider_runtime::managed::config::{Credentials, ResolvedConfig};
use provider_runtime::managed::external::{
    Connector, ExternalClient, ExternalCreation, ExternalDelete, ExternalError,
    ExternalObservation, ExternalUpdate, Managed, ManagedKind,
};
use provider_runtime::managed::kind::{IdentifierStrategy, KindInfo, SecretRefField};
use secrecy::ExposeSecret;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::decl::{Class, DeclError, KindDecl, ResolvedKind, Ty};
use super::diff::{self, DiffContext};
use super::schema::{self, HASHES_FIELD};
use super::snapshot::{Lookup, RepositorySnapshot, SnapshotSettings, WriteGuard, WriteMarks};
use super::wire::{self, Mode, empty_of, user_value};

/// The annotation holding the write-only hashes of a create (status set by Create is not
/// persisted, annotations are).
pub const HASHES_ANNOTATION: &str = "repository.artifactory.crossplane.io/write-only-hashes";

/// Write-only hashes by wire member.
type Hashes = BTreeMap<String, String>;

/// The most `customHttpHeaders` entries upstream allows; each may carry a Secret reference.
const MAX_CUSTOM_HEADERS: usize = 5;

/// A declared repository Kind as the runtime sees it.
#[derive(Debug)]
pub struct RepositoryKind {
    info: KindInfo,
    kind: Arc<ResolvedKind>,
}

impl RepositoryKind {
    /// Compose a declaration into a Kind.
    pub fn new(decl: &KindDecl) -> Result<Self, DeclError> {
        let kind = decl.resolve()?;
        let mut info = KindInfo::new(
            "artifactory",
            "repository",
            decl.kind,
            "v1alpha1",
            IdentifierStrategy::Name,
        );
        let text = match decl.class {
            Class::Local => format!("A local {} repository.", decl.package_type),
            Class::Remote => format!(
                "A remote {} repository (a caching proxy of an upstream).",
                decl.package_type
            ),
            Class::Virtual => format!(
                "A virtual {} repository (an aggregation of repositories).",
                decl.package_type
            ),
            Class::Federated => format!(
                "A federated {} repository (mirrored across instances).",
                decl.package_type
            ),
        };
        // KindInfo holds `&'static str`; one short text per Kind, built once per process.
        info.description = Box::leak(text.into_boxed_str());
        for f in kind.params() {
            if f.required {
                info.required_params.push(f.crd);
            }
            if f.immutable {
                info.immutable_fields.push(f.crd);
            }
            if f.sensitive {
                info.sensitive_fields.push(f.crd);
                info.secret_refs.push(SecretRefField {
                    field: f.crd,
                    required: false,
                });
            }
            if let Some(children) = f.ty.children() {
                for c in children.iter().filter(|c| c.sensitive && c.wire.is_some()) {
                    for i in 0..MAX_CUSTOM_HEADERS {
                        let path: &'static str =
                            Box::leak(format!("{}.{i}.{}", f.crd, c.crd).into_boxed_str());
                        info.secret_refs.push(SecretRefField {
                            field: path,
                            required: false,
                        });
                    }
                }
            }
        }
        Ok(RepositoryKind {
            info,
            kind: Arc::new(kind),
        })
    }

    /// The composed declaration.
    pub fn resolved(&self) -> &Arc<ResolvedKind> {
        &self.kind
    }
}

impl ManagedKind for RepositoryKind {
    type Parameters = Value;
    type Observation = Value;

    fn info(&self) -> &KindInfo {
        &self.info
    }
    // Built on demand: only CRD generation asks, and holding 296 schemas would cost a
    // running provider megabytes for nothing.
    fn parameters_schema(&self) -> Value {
        schema::parameters_schema(&self.kind)
    }
    fn observation_schema(&self) -> Value {
        schema::observation_schema(&self.kind)
    }
}

/// JfrogClients by ProviderConfig, shared by every repository Kind's connector, with one
/// repository snapshot per client and our write marks (by repository key, for every
/// platform: a key written on one platform costs the same key elsewhere one `GET`, which is
/// cheaper than telling platforms apart by URL spelling). The snapshot is
/// off until a TTL is set ([`ClientCache::set_snapshot_ttl`], or the controllers' `--poll`
/// through [`super::registrations`]).
#[derive(Default)]
pub struct ClientCache {
    metrics: ClientMetrics,
    clients: Mutex<HashMap<String, (JfrogClient, Arc<RepositorySnapshot>)>>,
    marks: Arc<WriteMarks>,
    settings: Arc<SnapshotSettings>,
}

impl std::fmt::Debug for ClientCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientCache")
    }
}

impl ClientCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache whose clients report into `metrics`.
    pub fn with_metrics(metrics: ClientMetrics) -> Self {
        ClientCache {
            metrics,
            ..Self::default()
        }
    }

    /// The snapshot settings shared by every client of this cache.
    pub fn snapshot_settings(&self) -> &Arc<SnapshotSettings> {
        &self.settings
    }

    /// Set the snapshot TTL (the longest time between two reads of all configurations);
    /// `None` turns observation by list off.
    pub fn set_snapshot_ttl(&self, ttl: Option<Duration>) {
        self.settings.set_ttl(ttl);
    }

    /// The client of a resolved config (built once per config and credentials).
    pub fn client(&self, config: &ResolvedConfig) -> Result<JfrogClient, jfrog_client::Error> {
        self.client_and_snapshot(config).map(|(c, _)| c)
    }

    /// The client of a resolved config and its repository snapshot.
    pub fn client_and_snapshot(
        &self,
        config: &ResolvedConfig,
    ) -> Result<(JfrogClient, Arc<RepositorySnapshot>), jfrog_client::Error> {
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
            Credentials::None => h.update(b"\0none"),
        }
        h.update(config.ca_bundle.as_deref().unwrap_or("").as_bytes());
        let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let mut map = self
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = map.get(&key) {
            return Ok(c.clone());
        }
        let client = crate::PROVIDER.client_for(config, &self.metrics)?;
        let snapshot = Arc::new(RepositorySnapshot::new(
            self.settings.clone(),
            self.marks.clone(),
        ));
        map.insert(key, (client.clone(), snapshot.clone()));
        Ok((client, snapshot))
    }
}

/// The connector of one repository Kind.
#[derive(Debug, Clone)]
pub struct RepositoryConnector {
    kind: Arc<ResolvedKind>,
    cache: Arc<ClientCache>,
}

impl RepositoryConnector {
    /// A connector for `kind` using the shared client cache.
    pub fn new(kind: &RepositoryKind, cache: Arc<ClientCache>) -> Self {
        RepositoryConnector {
            kind: kind.resolved().clone(),
            cache,
        }
    }
}

#[async_trait]
impl Connector<RepositoryKind> for RepositoryConnector {
    async fn connect(
        &self,
        config: &ResolvedConfig,
        _mr: &Managed<RepositoryKind>,
    ) -> Result<Box<dyn ExternalClient<RepositoryKind>>, ExternalError> {
        let (client, snapshot) = self
            .cache
            .client_and_snapshot(config)
            .map_err(ExternalError::new)?;
        Ok(Box::new(
            RepositoryClient::new(client, self.kind.clone()).with_snapshot(snapshot),
        ))
    }
}

/// The external client of one repository MR.
#[derive(Debug, Clone)]
pub struct RepositoryClient {
    client: JfrogClient,
    kind: Arc<ResolvedKind>,
    snapshot: Option<Arc<RepositorySnapshot>>,
}

/// Hashes recorded for an MR: those in `atProvider` (written by Update, carried over by
/// Observe; present even when empty) take precedence over those Create put in the
/// annotation.
fn recorded_hashes(mr: &Managed<RepositoryKind>) -> BTreeMap<String, String> {
    if let Some(Value::Object(m)) = mr.at_provider.get(HASHES_FIELD) {
        return m
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
            .collect();
    }
    mr.annotations
        .get(HASHES_ANNOTATION)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default()
}

/// Whether the hashes come from `atProvider` (so they must be carried over even if empty).
fn hashes_in_status(mr: &Managed<RepositoryKind>) -> bool {
    matches!(mr.at_provider.get(HASHES_FIELD), Some(Value::Object(_)))
}

impl RepositoryClient {
    /// A client for one MR of `kind`.
    pub fn new(client: JfrogClient, kind: Arc<ResolvedKind>) -> Self {
        RepositoryClient {
            client,
            kind,
            snapshot: None,
        }
    }

    /// Observe from `snapshot` where it can answer, and mark this client's writes in it.
    pub fn with_snapshot(mut self, snapshot: Arc<RepositorySnapshot>) -> Self {
        self.snapshot = Some(snapshot);
        self
    }

    /// Mark a write to `key` (until the guard is dropped) so no older read is used for it.
    fn begin_write(&self, key: &str) -> Option<WriteGuard> {
        self.snapshot.as_ref().map(|s| s.begin_write(key))
    }

    /// The configuration of `key` (`None`: it does not exist), from the snapshot when it can
    /// answer for the MR's poll interval, else by `GET` (whose result then replaces the
    /// snapshot's entry).
    async fn read(
        &self,
        key: &str,
        mr: &Managed<RepositoryKind>,
    ) -> Result<Option<Arc<Value>>, ExternalError> {
        let snapshot = self
            .snapshot
            .as_ref()
            .and_then(|s| s.max_age(&mr.annotations).map(|age| (s, age)));
        if let Some((s, max_age)) = snapshot {
            match s.lookup(&self.client, key, max_age).await {
                Lookup::Found(v) => return Ok(Some(v)),
                Lookup::Absent => return Ok(None),
                Lookup::Unknown => {}
            }
        }
        let sent = Instant::now();
        let result = match self.client.artifactory().repositories().get(key).await {
            Ok(b) => Some(Arc::new(b)),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(ExternalError::new(e)),
        };
        if let Some((s, _)) = snapshot {
            s.record_read(key, result.as_deref(), sent);
        }
        Ok(result)
    }

    fn key(mr: &Managed<RepositoryKind>) -> String {
        if mr.external_name.is_empty() {
            mr.name.clone()
        } else {
            mr.external_name.clone()
        }
    }

    fn context(&self, key: &str) -> DiffContext {
        DiffContext {
            own_member_prefix: format!(
                "{}/artifactory/",
                self.client.base_url().as_str().trim_end_matches('/')
            ),
            key: key.to_string(),
        }
    }

    /// Wire members of write-only fields the user gives only in initProvider.
    fn init_only_wires(&self, init_only: &[String]) -> Vec<&'static str> {
        self.kind
            .params()
            .filter(|f| (f.write_only || f.sensitive) && init_only.iter().any(|s| s == f.crd))
            .filter_map(|f| f.wire)
            .collect()
    }

    fn wo_version(params: &Value) -> Option<String> {
        user_value(params, "passwordWoVersion").map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// The desired body for an update and its write-only hashes.
    fn update_body(
        &self,
        mr: &Managed<RepositoryKind>,
        key: &str,
    ) -> Result<(Map<String, Value>, Hashes), ExternalError> {
        let observed = match &mr.at_provider {
            Value::Object(_) => Some(&mr.at_provider),
            _ => None,
        };
        let mut body = wire::to_wire(
            &self.kind,
            key,
            &mr.for_provider,
            &mr.secrets,
            Mode::Update,
            &mr.init_only_fields,
            observed,
        )
        .map_err(ExternalError::new)?;
        let hashes = diff::write_only_hashes(
            &self.kind,
            &body,
            &mr.uid,
            Self::wo_version(&mr.for_provider).as_deref(),
        );
        // Clear write-only values that were sent before and are no longer wanted.
        let skip = self.init_only_wires(&mr.init_only_fields);
        for w in recorded_hashes(mr).keys() {
            if !hashes.contains_key(w) && !skip.contains(&w.as_str()) {
                let ty = self
                    .kind
                    .params()
                    .find(|f| f.wire == Some(w.as_str()))
                    .map(|f| f.ty)
                    .unwrap_or(Ty::Str);
                body.insert(w.clone(), empty_of(&ty).unwrap_or(Value::Null));
            }
        }
        Ok((body, hashes))
    }

    /// Ask a federated repository to push its configuration to the members, as upstream
    /// does after each write. Failures are warnings: the write itself succeeded.
    async fn federation_sync(&self, key: &str) {
        if self.kind.decl.class != Class::Federated {
            return;
        }
        let r = self
            .client
            .request(
                Service::Artifactory,
                Method::POST,
                "/api/federation/configSync/{key}",
                Idempotency::Idempotent,
            )
            .param(key)
            .send_empty()
            .await;
        if let Err(e) = r {
            tracing::warn!(repository = %key, error = %e, "federation config sync failed");
        }
    }

    async fn project_assignment(
        &self,
        key: &str,
        desired: Option<&str>,
        observed: &str,
    ) -> Result<(), ExternalError> {
        let Some(desired) = desired else {
            return Ok(());
        };
        if desired == observed {
            return Ok(());
        }
        if !observed.is_empty() {
            self.client
                .request(
                    Service::Access,
                    Method::DELETE,
                    "/api/v1/projects/_/attach/repositories/{key}",
                    Idempotency::Idempotent,
                )
                .param(key)
                .send_empty()
                .await
                .map_err(|e| {
                    ExternalError::new(e).context("cannot detach repository from project")
                })?;
        }
        if !desired.is_empty() {
            self.client
                .request(
                    Service::Access,
                    Method::PUT,
                    "/api/v1/projects/_/attach/repositories/{key}/{project}",
                    Idempotency::Idempotent,
                )
                .param(key)
                .param(desired)
                .send_empty()
                .await
                .map_err(|e| {
                    ExternalError::new(e).context("cannot attach repository to project")
                })?;
        }
        Ok(())
    }
}

#[async_trait]
impl ExternalClient<RepositoryKind> for RepositoryClient {
    async fn observe(
        &self,
        mr: &mut Managed<RepositoryKind>,
    ) -> Result<ExternalObservation, ExternalError> {
        if mr.external_name.is_empty() {
            return Ok(ExternalObservation::default());
        }
        let key = Self::key(mr);
        let Some(body) = self.read(&key, mr).await? else {
            return Ok(ExternalObservation::default());
        };
        let rclass = body.get("rclass").and_then(Value::as_str).unwrap_or("");
        let ptype = body
            .get("packageType")
            .and_then(Value::as_str)
            .unwrap_or("");
        let want = self.kind.decl.class.as_str();
        if !rclass.eq_ignore_ascii_case(want)
            || !ptype.eq_ignore_ascii_case(self.kind.decl.package_type)
        {
            return Err(ExternalError::msg(format!(
                "repository {key} exists as a {rclass} {ptype} repository, not {want} {}",
                self.kind.decl.package_type
            )));
        }
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
        if mr.late_initialize {
            let init_only = mr.init_only_fields.clone();
            obs.resource_late_initialized =
                diff::late_initialize(&self.kind, &mut mr.for_provider, &init_only, &observed);
        }
        let ctx = self.context(&key);
        let mut changed: Vec<String> = diff::diff(
            &self.kind,
            &mr.for_provider,
            &mr.init_only_fields,
            &observed,
            &ctx,
        )
        .into_iter()
        .map(str::to_string)
        .collect();
        let (_, desired_hashes) = self.update_body(mr, &key)?;
        let skip = self.init_only_wires(&mr.init_only_fields);
        let wires: std::collections::BTreeSet<&String> =
            desired_hashes.keys().chain(recorded.keys()).collect();
        for w in wires {
            if skip.contains(&w.as_str()) {
                continue;
            }
            if desired_hashes.get(w) != recorded.get(w) {
                changed.push(format!("{w} (write-only)"));
            }
        }
        if !changed.is_empty() {
            obs.resource_up_to_date = false;
            obs.diff = format!("fields differ: {}", changed.join(", "));
        }
        Ok(obs)
    }

    async fn create(
        &self,
        mr: &mut Managed<RepositoryKind>,
    ) -> Result<ExternalCreation, ExternalError> {
        let key = Self::key(mr);
        let _write = self.begin_write(&key);
        let body = wire::to_wire(
            &self.kind,
            &key,
            &mr.create_parameters,
            &mr.secrets,
            Mode::Create,
            &[],
            None,
        )
        .map_err(ExternalError::new)?;
        self.client
            .artifactory()
            .repositories()
            .create(&key, &body)
            .await
            .map_err(ExternalError::new)?;
        // Upstream skips the sync on create for release-bundle federations.
        if self.kind.decl.package_type != "releasebundles" {
            self.federation_sync(&key).await;
        }
        let hashes = diff::write_only_hashes(
            &self.kind,
            &body,
            &mr.uid,
            Self::wo_version(&mr.create_parameters).as_deref(),
        );
        if hashes.is_empty() {
            mr.annotations.remove(HASHES_ANNOTATION);
        } else {
            mr.annotations.insert(
                HASHES_ANNOTATION.into(),
                serde_json::to_string(&hashes).unwrap_or_default(),
            );
        }
        Ok(ExternalCreation::default())
    }

    async fn update(
        &self,
        mr: &mut Managed<RepositoryKind>,
    ) -> Result<ExternalUpdate, ExternalError> {
        let key = Self::key(mr);
        let _write = self.begin_write(&key);
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
        let (body, hashes) = self.update_body(mr, &key)?;
        self.client
            .artifactory()
            .repositories()
            .update(&key, &body)
            .await
            .map_err(ExternalError::new)?;
        self.federation_sync(&key).await;
        if !mr.init_only_fields.iter().any(|f| f == "projectKey") {
            let desired = user_value(&mr.for_provider, "projectKey").and_then(Value::as_str);
            let observed = mr
                .at_provider
                .get("projectKey")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            self.project_assignment(&key, desired, &observed).await?;
        }
        // Keep the hashes of init-only write-only values recorded at create.
        let mut all = recorded_hashes(mr);
        let skip = self.init_only_wires(&mr.init_only_fields);
        all.retain(|k, _| skip.contains(&k.as_str()));
        all.extend(hashes);
        // An empty map is kept: it overrides the hashes Create recorded in the annotation.
        if let Value::Object(at) = &mut mr.at_provider {
            at.insert(
                HASHES_FIELD.into(),
                serde_json::to_value(&all).unwrap_or_default(),
            );
        } else {
            let mut at = Map::new();
            at.insert(
                HASHES_FIELD.into(),
                serde_json::to_value(&all).unwrap_or_default(),
            );
            mr.at_provider = Value::Object(at);
        }
        Ok(ExternalUpdate::default())
    }

    async fn delete(
        &self,
        mr: &mut Managed<RepositoryKind>,
    ) -> Result<ExternalDelete, ExternalError> {
        let key = Self::key(mr);
        let _write = self.begin_write(&key);
        let repos = self.client.artifactory().repositories();
        if self.kind.decl.class == Class::Federated
            && user_value(&mr.for_provider, "cleanupOnDelete").and_then(Value::as_bool)
                == Some(true)
        {
            let prefix = self.context(&key).own_member_prefix;
            let members = mr
                .at_provider
                .get("member")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for m in members {
                let url = m.get("url").and_then(Value::as_str).unwrap_or("");
                match url.strip_prefix(&prefix) {
                    Some(other) if !other.is_empty() && other.trim_end_matches('/') != key => {
                        let member = other.trim_end_matches('/');
                        let _member_write = self.begin_write(member);
                        match repos.delete(member).await {
                            Ok(()) => {}
                            Err(e) if e.is_not_found() => {}
                            Err(e) => {
                                tracing::warn!(repository = %key, member = %url, error = %e, "cannot delete federation member")
                            }
                        }
                    }
                    Some(_) => {}
                    None => {
                        tracing::warn!(repository = %key, member = %url, "federation member on another instance is not deleted (no member token support)")
                    }
                }
            }
        }
        match repos.delete(&key).await {
            Ok(()) => Ok(ExternalDelete::default()),
            Err(e) if e.is_not_found() => Ok(ExternalDelete::default()),
            Err(e) => Err(ExternalError::new(e)),
        }
    }
}
