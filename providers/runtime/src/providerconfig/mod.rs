//! ProviderConfig handling (docs/managed-reconciler.md §9): the config and usage Kinds, credentials
//! resolution from Secrets, usage records, and the config controllers.
//!
//! - [`types`]: the spec/status types and [`ConfigApi`], which addresses the config Kinds of
//!   one provider (`<p>.m.crossplane.io/v1beta1` ClusterProviderConfig, ProviderConfig,
//!   ProviderConfigUsage, ClusterProviderConfigUsage; `<p>.crossplane.io/v1beta1` legacy
//!   ProviderConfig and ProviderConfigUsage). Generic over the provider name.
//! - [`credentials`]: from an MR's reference to a [`ResolvedConfig`].
//! - [`usage`]: the per-MR usage record.
//! - [`controller`]: one controller per config Kind that counts users and blocks deletion
//!   while the config is in use.
//!
//! [`KubeConfigResolver`] ties these together for the managed reconciler: it tracks usage
//! (before reading the config, as crossplane-runtime does), reads the config and its
//! Secrets, and runs an optional [`ConfigVerifier`] (the provider's JFrog ping), whose
//! successes are cached for a while so a healthy config is not pinged on every reconcile, and
//! which runs once at a time per config however many reconciles ask (`verify`).
//!
//! Deviations: an absent or empty Secret key is an error (Q8). The `secretRef` namespace is
//! optional in the schema (it is ignored for namespaced ProviderConfigs) and required at
//! resolution time for cluster-scoped configs. A config that is not being deleted is recounted
//! at most every [`controller::RECOUNT_INTERVAL`], or 1 ms per user when longer
//! ([`controller::recount_interval`]; its `status.users` lags by up to that much), because a
//! recount is a paged list from the API server rather than a read of an informer cache.

pub mod controller;
pub mod credentials;
pub mod identity;
pub mod secrets;
pub mod types;
pub mod usage;
mod verify;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::DynamicObject;
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};

pub use crate::managed::config::{
    ConfigError, Credentials, ManagedRef, ProviderConfigReference, ProviderConfigResolver,
    ResolvedConfig,
};
use crate::managed::kind::Scope;
pub use credentials::ConfigTarget;
pub use types::{ConfigApi, ConfigKind, ProviderConfigSpec, ProviderConfigStatus};

/// Finalizer that blocks deletion of a config in use.
pub const FINALIZER_IN_USE: &str = "in-use.crossplane.io";
/// Label naming the config a usage record points to.
pub const LABEL_PROVIDER_CONFIG: &str = "crossplane.io/provider-config";
/// Label naming the config Kind a modern usage record points to.
pub const LABEL_PROVIDER_CONFIG_KIND: &str = "crossplane.io/provider-config-kind";
/// Message (condition and event) while deletion is blocked.
pub const MSG_BLOCK_DELETION: &str = "Blocking deletion while usages still exist";
/// Event reason of the config controllers (one of [`crate::managed::reasons::event`]).
pub const REASON_USAGE_ACCOUNTING: &str = crate::managed::reasons::event::USAGE_ACCOUNTING;

/// Errors of config resolution and usage tracking. Messages follow crossplane-runtime's
/// wording (Appendix A) and never contain credential values.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The MR has no `providerConfigRef`.
    #[error("managed resource does not reference a ProviderConfig")]
    NoReference,
    /// A modern MR's reference has no kind.
    #[error("managed resource ProviderConfig reference has no Kind")]
    NoKind,
    /// A modern MR references a kind other than ClusterProviderConfig/ProviderConfig.
    #[error("unsupported provider config kind: {0}")]
    UnsupportedKind(String),
    /// The usage record could not be written.
    #[error("cannot apply ProviderConfigUsage: {0}")]
    ApplyUsage(String),
    /// The usage record update hit a Kubernetes 409 Conflict (a silent back-off).
    #[error("cannot apply ProviderConfigUsage: {0}")]
    ApplyUsageConflict(String),
    /// The config could not be read (e.g. not found).
    #[error("cannot get referenced {kind}: {reason}")]
    GetConfig {
        /// Config Kind.
        kind: String,
        /// The API server's message.
        reason: String,
    },
    /// The config's spec does not parse.
    #[error("cannot parse spec of {kind} \"{name}\": {reason}")]
    InvalidSpec {
        /// Config Kind.
        kind: String,
        /// Config name.
        name: String,
        /// Parse error (of the spec, which holds no secret).
        reason: String,
    },
    /// The credentials Secret could not be read.
    #[error("cannot get credentials secret: {0}")]
    GetSecret(String),
    /// `source: Secret` without a selector.
    #[error("cannot extract from secret key when none specified")]
    NoSecretSelector,
    /// `source: Environment` without a selector.
    #[error("cannot extract from environment variable when none specified")]
    NoEnvSelector,
    /// `source: Filesystem` without a selector.
    #[error("cannot extract from filesystem when no path specified")]
    NoFsSelector,
    /// A source with no handler.
    #[error("no extraction handler registered for source: {0}")]
    NoHandler(String),
    /// `source: InjectedIdentity` without `injectedIdentity.providerName`.
    #[error(
        "{kind} \"{name}\" uses source InjectedIdentity but sets no credentials.injectedIdentity.providerName (the platform's OIDC integration)"
    )]
    NoInjectedIdentity {
        /// Config Kind.
        kind: String,
        /// Config name.
        name: String,
    },
    /// Deviation Q8: the Secret has no such key, or it is empty.
    #[error("credentials secret \"{namespace}/{name}\" has no key \"{key}\" (or it is empty)")]
    MissingKey {
        /// Secret namespace.
        namespace: String,
        /// Secret name.
        name: String,
        /// The key.
        key: String,
    },
    /// A cluster-scoped config names a Secret without a namespace.
    #[error("{kind} \"{name}\": secret reference \"{secret}\" has no namespace")]
    SecretNamespaceRequired {
        /// Config Kind.
        kind: String,
        /// Config name.
        name: String,
        /// Secret name.
        secret: String,
    },
    /// The credentials environment variable is empty.
    #[error("credentials environment variable \"{0}\" is not set or empty")]
    EnvEmpty(String),
    /// The credentials file cannot be read.
    #[error("cannot read credentials file \"{path}\": {reason}")]
    ReadFile {
        /// Path.
        path: String,
        /// I/O error kind.
        reason: String,
    },
    /// The credentials file is empty.
    #[error("credentials file \"{0}\" is empty")]
    FileEmpty(String),
    /// The extracted credentials have an unusable shape.
    #[error("credentials in {origin} {reason}")]
    BadCredentials {
        /// Where they came from (Secret/key, variable or file; never the value).
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// No URL in spec nor in the credentials.
    #[error("{kind} \"{name}\" has no url: set spec.url, or \"url\" in the credentials JSON")]
    NoUrl {
        /// Config Kind.
        kind: String,
        /// Config name.
        name: String,
    },
    /// The URL is invalid.
    #[error("invalid url in {kind} \"{name}\": {reason}")]
    BadUrl {
        /// Config Kind.
        kind: String,
        /// Config name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The provider's verifier (JFrog ping) rejected the config.
    #[error("{0}")]
    Verify(String),
}

/// The API server's message of a kube error, without kube's Debug dump (shared with the
/// managed reconciler).
pub use crate::managed::errors::kube_message;

/// Reads the identity and `providerConfigRef` of a dynamic MR object (tests and tools; the
/// reconciler builds [`ManagedRef`] itself).
pub fn managed_ref_from_dynamic(obj: &DynamicObject) -> ManagedRef {
    let types = obj.types.clone().unwrap_or_default();
    let pc = obj
        .data
        .get("spec")
        .and_then(|s| s.get("providerConfigRef"));
    let provider_config_ref = pc.and_then(|pc| {
        let name = pc.get("name")?.as_str()?.to_string();
        let kind = pc.get("kind").and_then(|k| k.as_str()).map(str::to_string);
        Some(ProviderConfigReference { kind, name })
    });
    let scope = if obj.metadata.namespace.is_some() {
        Scope::Namespaced
    } else {
        Scope::Cluster
    };
    ManagedRef {
        scope,
        api_version: types.api_version,
        kind: types.kind,
        name: obj.metadata.name.clone().unwrap_or_default(),
        namespace: obj.metadata.namespace.clone(),
        uid: obj.metadata.uid.clone().unwrap_or_default(),
        provider_config_ref,
    }
}

/// The config object an MR's reference designates (§9.2).
pub fn config_target(mr: &ManagedRef) -> Result<ConfigTarget, ResolveError> {
    let r = mr
        .provider_config_ref
        .as_ref()
        .ok_or(ResolveError::NoReference)?;
    if !mr.scope.is_namespaced() {
        return Ok(ConfigTarget {
            kind: ConfigKind::LegacyProviderConfig,
            name: r.name.clone(),
            namespace: None,
        });
    }
    let kind = r
        .kind
        .as_deref()
        .filter(|k| !k.is_empty())
        .ok_or(ResolveError::NoKind)?;
    match ConfigApi::modern_config_kind(kind) {
        Some(ConfigKind::ClusterProviderConfig) => Ok(ConfigTarget {
            kind: ConfigKind::ClusterProviderConfig,
            name: r.name.clone(),
            namespace: None,
        }),
        Some(k) => Ok(ConfigTarget {
            kind: k,
            name: r.name.clone(),
            namespace: mr.namespace.clone(),
        }),
        None => Err(ResolveError::UnsupportedKind(kind.to_string())),
    }
}

/// The provider's check of a resolved config (the JFrog ping: unreachable URL, rejected
/// credentials). Its error message must not contain credential values.
#[async_trait::async_trait]
pub trait ConfigVerifier: Send + Sync {
    /// Checks that the platform is reachable and accepts the credentials.
    async fn verify(&self, config: &ResolvedConfig) -> Result<(), String>;
}

/// How long a successful verification is trusted.
pub const VERIFY_CACHE_TTL: Duration = Duration::from_secs(300);

/// Resolves MRs' configs against the Kubernetes API and tracks their usage.
#[derive(Clone)]
pub struct KubeConfigResolver {
    client: kube::Client,
    api: ConfigApi,
    identity: Arc<identity::IdentityContext>,
    verifier: Option<Arc<dyn ConfigVerifier>>,
    verified: Arc<verify::Verifications>,
    /// Usage records this process created or found matching, by a hash of the MR's UID and
    /// its config reference: within [`USAGE_RECHECK`] of that, tracking the same reference
    /// again costs no request (crossplane-runtime reads the record from its informer cache).
    usage_seen: Arc<Mutex<HashMap<u64, (u64, Instant)>>>,
    /// The config controllers' caches, when the process runs them.
    stores: Option<Arc<ConfigStores>>,
    /// The watched credentials Secrets, when the process watches them.
    secrets: Option<Arc<secrets::SecretWatches>>,
}

/// The config controllers' caches (their watches' stores), shared with the resolver: a
/// reconcile reads its ProviderConfig from there, as crossplane-runtime reads it from its
/// informer cache, instead of asking the API server each time. An object the cache does not
/// hold (not synced yet, or missing) is read from the API server as before.
#[derive(Default)]
pub struct ConfigStores {
    stores: std::sync::RwLock<HashMap<ConfigKind, kube::runtime::reflector::Store<DynamicObject>>>,
}

impl ConfigStores {
    /// The store of `kind`'s controller.
    pub fn publish(&self, kind: ConfigKind, store: kube::runtime::reflector::Store<DynamicObject>) {
        if let Ok(mut m) = self.stores.write() {
            m.insert(kind, store);
        }
    }

    /// `kind`'s object `name` (in `namespace`) as the cache holds it.
    pub fn get(
        &self,
        api: &ConfigApi,
        kind: ConfigKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<DynamicObject> {
        let m = self.stores.read().ok()?;
        let store = m.get(&kind)?;
        let mut key = kube::runtime::reflector::ObjectRef::new_with(name, api.api_resource(kind));
        if let Some(ns) = namespace {
            key = key.within(ns);
        }
        store.get(&key).map(|o| o.as_ref().clone())
    }
}

/// How long a usage record this process created or found is trusted without reading it
/// again: a record deleted behind our back is recreated within this (plus a poll).
pub const USAGE_RECHECK: Duration = Duration::from_secs(600);

/// (the MR, the config it refers to), hashed.
fn usage_key(mr: &ManagedRef) -> (u64, u64) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    mr.uid.hash(&mut h);
    mr.namespace.hash(&mut h);
    let object = h.finish();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if let Some(r) = &mr.provider_config_ref {
        r.kind.hash(&mut h);
        r.name.hash(&mut h);
    }
    (object, h.finish())
}

impl KubeConfigResolver {
    /// A resolver for the given provider's config Kinds.
    pub fn new(client: kube::Client, api: ConfigApi) -> Self {
        Self {
            identity: Arc::new(identity::IdentityContext::new(client.clone(), None)),
            client,
            api,
            verifier: None,
            verified: Arc::default(),
            usage_seen: Arc::default(),
            stores: None,
            secrets: None,
        }
    }

    /// Adds the provider's verifier (JFrog ping).
    pub fn with_verifier(mut self, verifier: Arc<dyn ConfigVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// Reads configs from the config controllers' caches when they hold them.
    pub fn with_config_stores(mut self, stores: Arc<ConfigStores>) -> Self {
        self.stores = Some(stores);
        self
    }

    /// Reads the configs' Secrets from watches of them ([`secrets::SecretWatches`]) once they
    /// have listed, instead of a `GET` per Secret and reconcile.
    pub fn with_secret_watches(mut self, watches: Arc<secrets::SecretWatches>) -> Self {
        self.secrets = Some(watches);
        self
    }

    /// Names the provider's ServiceAccount (for InjectedIdentity's TokenRequest) instead of
    /// asking the API server who this process is.
    pub fn with_service_account(mut self, sa: Option<identity::ServiceAccountRef>) -> Self {
        self.identity = Arc::new(identity::IdentityContext::new(self.client.clone(), sa));
        self
    }

    /// The config Kinds served.
    pub fn config_api(&self) -> &ConfigApi {
        &self.api
    }

    /// Records usage of the referenced config (call before [`Self::resolve`]).
    pub async fn track_usage(&self, mr: &ManagedRef) -> Result<(), ResolveError> {
        let (object, reference) = usage_key(mr);
        let seen = self
            .usage_seen
            .lock()
            .ok()
            .and_then(|m| m.get(&object).copied())
            .is_some_and(|(r, t)| r == reference && t.elapsed() < USAGE_RECHECK);
        if seen {
            return Ok(());
        }
        usage::track_usage(&self.client, &self.api, mr).await?;
        if let Ok(mut m) = self.usage_seen.lock() {
            // Entries of MRs gone (or re-pointed) expire; drop them now and then.
            if m.len() % 1024 == 1023 {
                m.retain(|_, (_, t)| t.elapsed() < USAGE_RECHECK);
            }
            m.insert(object, (reference, Instant::now()));
        }
        Ok(())
    }

    /// Reads the referenced config and its Secrets, and verifies it.
    pub async fn resolve(&self, mr: &ManagedRef) -> Result<ResolvedConfig, ResolveError> {
        let target = config_target(mr)?;
        let cached = self.stores.as_ref().and_then(|s| {
            s.get(
                &self.api,
                target.kind,
                target.namespace.as_deref(),
                &target.name,
            )
        });
        let obj = match cached {
            Some(o) => o,
            None => credentials::get_config(&self.client, &self.api, &target).await?,
        };
        let resolved = credentials::resolve_config_object_watched(
            &self.client,
            &self.identity,
            self.secrets.as_deref(),
            &target,
            &obj,
        )
        .await?;
        if let Some(verifier) = &self.verifier {
            self.verified
                .verify(verifier.as_ref(), &resolved)
                .await
                .map_err(ResolveError::Verify)?;
        }
        Ok(resolved)
    }
}

impl From<ResolveError> for ConfigError {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::ApplyUsageConflict(_) => ConfigError::conflict(e.to_string()),
            other => ConfigError::new(other.to_string()),
        }
    }
}

#[async_trait::async_trait]
impl ProviderConfigResolver for KubeConfigResolver {
    async fn track_usage(&self, mr: &ManagedRef) -> Result<(), ConfigError> {
        KubeConfigResolver::track_usage(self, mr)
            .await
            .map_err(ConfigError::from)
    }

    async fn resolve(&self, mr: &ManagedRef) -> Result<ResolvedConfig, ConfigError> {
        KubeConfigResolver::resolve(self, mr)
            .await
            .map_err(ConfigError::from)
    }
}

/// A digest of everything that identifies a resolved config (values stay in memory only).
fn fingerprint(c: &ResolvedConfig) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(c.url.as_bytes());
    h.update([0]);
    match &c.credentials {
        Credentials::Injected(i) => {
            h.update(b"injected\0");
            h.update(i.provider_name.as_bytes());
            h.update([0]);
            h.update(i.audience.as_bytes());
            h.update([0]);
            h.update(i.project_key.as_deref().unwrap_or("").as_bytes());
            h.update([0]);
            h.update(i.subject.key().as_bytes());
        }
        Credentials::None => h.update(b"none"),
        Credentials::Token(t) => {
            h.update(b"token\0");
            h.update(t.expose_secret());
        }
        Credentials::Basic { username, password } => {
            h.update(b"basic\0");
            h.update(username);
            h.update([0]);
            h.update(password.expose_secret());
        }
    }
    h.update([0]);
    if let Some(ca) = &c.ca_bundle {
        h.update(ca.as_bytes());
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mr(ns: Option<&str>, kind: Option<&str>) -> ManagedRef {
        ManagedRef {
            scope: if ns.is_some() {
                Scope::Namespaced
            } else {
                Scope::Cluster
            },
            api_version: "g/v1".into(),
            kind: "K".into(),
            name: "n".into(),
            namespace: ns.map(str::to_string),
            uid: "u".into(),
            provider_config_ref: Some(ProviderConfigReference {
                kind: kind.map(str::to_string),
                name: "default".into(),
            }),
        }
    }

    #[test]
    fn targets() {
        let t = config_target(&mr(Some("a"), Some("ProviderConfig"))).unwrap();
        assert_eq!(t.namespace.as_deref(), Some("a"));
        let t = config_target(&mr(Some("a"), Some("ClusterProviderConfig"))).unwrap();
        assert_eq!(t.kind, ConfigKind::ClusterProviderConfig);
        assert!(t.namespace.is_none());
        let t = config_target(&mr(None, None)).unwrap();
        assert_eq!(t.kind, ConfigKind::LegacyProviderConfig);
        assert_eq!(
            config_target(&mr(Some("a"), Some("Foo")))
                .unwrap_err()
                .to_string(),
            "unsupported provider config kind: Foo"
        );
    }

    #[test]
    fn from_dynamic_reads_reference() {
        let obj: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
            "kind": "LocalGenericRepository",
            "metadata": {"name": "r", "namespace": "a", "uid": "u1"},
            "spec": {"providerConfigRef": {"kind": "ProviderConfig", "name": "p"}, "forProvider": {}}
        }))
        .unwrap();
        let m = managed_ref_from_dynamic(&obj);
        assert_eq!(m.kind, "LocalGenericRepository");
        assert_eq!(
            m.provider_config_ref.unwrap().kind.as_deref(),
            Some("ProviderConfig")
        );
    }
}
