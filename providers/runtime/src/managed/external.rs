//! The adapter side of the contract: [`ManagedKind`], the [`Managed`] view, [`ExternalClient`]
//! and [`Connector`] (docs/managed-reconciler.md §12).
//!
//! Adapters never touch Kubernetes. The reconciler reads the MR, decodes `forProvider`,
//! `initProvider` and `atProvider` into the Kind's types (which may be `serde_json::Value` for
//! data-driven families), resolves secret inputs, and hands the adapter a [`Managed`] view.
//! Whatever the adapter changes on that view is written back by the reconciler under the
//! Crossplane persistence rules (docs/managed-reconciler.md §4): annotations set by Create are
//! persisted, `forProvider` changes from Observe only with LateInitialize, status changes from
//! Create are discarded, status changes from Update kept.

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use secrecy::SecretString;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::conditions::{Condition, set_condition};
use super::config::ResolvedConfig;
use super::kind::{KindInfo, Scope};

/// A Kind's parameter and observation types.
///
/// `Parameters` is the shape of `spec.forProvider` (and of `spec.initProvider`); every field
/// should be optional, as Upjet generates them, because required parameters may be given in
/// either block. `Observation` is the shape of `status.atProvider`. Both may be
/// `serde_json::Value`, with the schema supplied by [`ManagedKind::parameters_schema`].
pub trait ManagedKind: Send + Sync + 'static {
    /// `spec.forProvider` / `spec.initProvider`.
    type Parameters: Serialize + DeserializeOwned + Clone + Default + Send + Sync + 'static;
    /// `status.atProvider`.
    type Observation: Serialize + DeserializeOwned + Clone + Default + Send + Sync + 'static;

    /// The Kind declaration.
    fn info(&self) -> &KindInfo;

    /// The JSON schema of `Parameters` (for CRD generation). For typed parameters this is
    /// usually `schemars::schema_for!(P)` as JSON; data-driven Kinds return their declared
    /// schema.
    fn parameters_schema(&self) -> serde_json::Value;

    /// The JSON schema of `Observation`.
    fn observation_schema(&self) -> serde_json::Value;
}

/// The JSON schema of a typed parameter or observation struct, for
/// [`ManagedKind::parameters_schema`] / [`ManagedKind::observation_schema`] (schemars output;
/// the CRD generator makes it structural).
pub fn json_schema_for<T: schemars::JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(serde_json::Value::Null)
}

/// Connection details: key → bytes. `Debug` prints the keys only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ConnectionDetails(pub BTreeMap<String, Vec<u8>>);

impl ConnectionDetails {
    /// No details.
    pub fn new() -> Self {
        Self::default()
    }
    /// Add one key.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) {
        self.0.insert(key.into(), value.into());
    }
    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ConnectionDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// What Observe found (docs/managed-reconciler.md §12.1).
#[derive(Debug, Clone, Default)]
pub struct ExternalObservation {
    /// The external resource exists.
    pub resource_exists: bool,
    /// An Update would be a no-op.
    pub resource_up_to_date: bool,
    /// Observe changed `forProvider` (or the external name) and the reconciler should
    /// persist it (only done with the LateInitialize policy).
    pub resource_late_initialized: bool,
    /// All known connection details (publishing is additive).
    pub connection_details: ConnectionDetails,
    /// A human-readable diff, for debug logs only. Never put secret values here.
    pub diff: String,
    /// What differs, field by field: the paths an Update would change (and, with
    /// LateInitialize, the fields Observe filled in). The reconciler names the paths in its
    /// `UpdatedExternalResource` event and `preview` shows them; values of sensitive fields
    /// are never carried ([`FieldChange::old`] / [`FieldChange::new`] are `None` for them).
    pub changes: Vec<FieldChange>,
}

/// What happens to one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// The desired value differs from JFrog's: an Update sends it.
    Update,
    /// Unset in `forProvider`, filled in from JFrog's value (LateInitialize): written to the
    /// MR, not to JFrog.
    LateInit,
    /// A write-only secret JFrog never shows, none recorded for it: an Update sends it.
    SecretSet,
    /// A write-only secret whose recorded hash differs from the desired value's: an Update
    /// sends it.
    SecretChanged,
    /// A write-only secret that was sent before and is no longer wanted: an Update clears it.
    SecretCleared,
}

/// One field of an [`ExternalObservation`] that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// The field's path in the MR, e.g. `forProvider.description` or
    /// `forProvider.handler[0].url`.
    pub path: String,
    /// What happens to it.
    pub kind: ChangeKind,
    /// JFrog's value (`None`: absent, or a sensitive field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<serde_json::Value>,
    /// The desired value (`None`: unset, or a sensitive field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<serde_json::Value>,
}

impl FieldChange {
    /// Whether the change is made in JFrog (an Update sends it), as opposed to a late
    /// initialisation, which only writes the MR.
    pub fn is_external(&self) -> bool {
        self.kind != ChangeKind::LateInit
    }
}

/// What Create returned.
#[derive(Debug, Clone, Default)]
pub struct ExternalCreation {
    /// Connection details known after create.
    pub connection_details: ConnectionDetails,
    /// The identifier JFrog assigned (server-assigned Kinds); the reconciler stores it in
    /// `crossplane.io/external-name`. Setting `Managed::external_name` has the same effect.
    pub external_name: Option<String>,
}

/// What Update returned.
#[derive(Debug, Clone, Default)]
pub struct ExternalUpdate {
    /// Connection details known after update.
    pub connection_details: ConnectionDetails,
}

/// What Delete returned.
#[derive(Debug, Clone, Default)]
pub struct ExternalDelete {}

/// An error from an external client or connector. Its `Display` is the message users see
/// (wrapped by the reconciler, e.g. `observe failed: <this>`), so it must never carry secret
/// values; keep it stable across retries (no request IDs or timestamps).
pub struct ExternalError {
    inner: Box<dyn std::error::Error + Send + Sync + 'static>,
    outcome_unknown: bool,
}

impl ExternalError {
    /// Wrap any error. Its source chain is joined Go-style (`outer: inner`) unless the outer
    /// message already contains the inner one.
    pub fn new(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        ExternalError {
            inner: Box::new(err),
            outcome_unknown: false,
        }
    }

    /// An error from a message.
    pub fn msg(message: impl Into<String>) -> Self {
        ExternalError {
            inner: Box::new(MessageError(message.into())),
            outcome_unknown: false,
        }
    }

    /// Prefix the message: `<context>: <err>`.
    pub fn context(self, context: impl Into<String>) -> Self {
        let unknown = self.outcome_unknown;
        let mut e = ExternalError::msg(format!("{}: {}", context.into(), self));
        e.outcome_unknown = unknown;
        e
    }

    /// The call may have taken effect (its answer was lost): a create failing so is not
    /// recorded as failed, so the next reconcile treats it as incomplete (a deterministic
    /// identifier proceeds to observe; a server-assigned one stops with "cannot determine
    /// creation result" instead of creating a second object).
    pub fn outcome_unknown(mut self) -> Self {
        self.outcome_unknown = true;
        self
    }

    /// Whether the call may have taken effect.
    pub fn is_outcome_unknown(&self) -> bool {
        self.outcome_unknown
    }

    /// The wrapped error, for downcasting.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self.inner.as_ref()
    }
}

#[derive(Debug)]
struct MessageError(String);
impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for MessageError {}

impl fmt::Display for ExternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = self.inner.to_string();
        let mut src = self.inner.source();
        while let Some(s) = src {
            let m = s.to_string();
            if !text.contains(&m) {
                text.push_str(": ");
                text.push_str(&m);
            }
            src = s.source();
        }
        f.write_str(&text)
    }
}

impl fmt::Debug for ExternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExternalError({self})")
    }
}

impl std::error::Error for ExternalError {}

/// The view of one MR that the reconciler hands to an adapter.
///
/// Fields the adapter may change, and what becomes of the change:
/// - `for_provider` in Observe: persisted (full update) when Observe reports
///   `resource_late_initialized` and LateInitialize is allowed; otherwise discarded.
/// - `external_name` / `annotations` in Create: persisted with the create-succeeded stamp
///   (an annotation removed is removed, unless the write met a conflict); in
///   Observe: persisted like late initialisation; in Update: discarded
///   (docs/managed-reconciler.md §4.2).
/// - `at_provider` and conditions: persisted after Observe and Update, discarded after Create.
#[derive(Debug, Clone)]
pub struct Managed<K: ManagedKind> {
    /// Scope of the MR.
    pub scope: Scope,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (None for legacy MRs).
    pub namespace: Option<String>,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.generation`.
    pub generation: i64,
    /// `crossplane.io/external-name`, empty when unset.
    pub external_name: String,
    /// All annotations of the MR.
    pub annotations: BTreeMap<String, String>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `spec.forProvider`, with resolved references.
    pub for_provider: K::Parameters,
    /// `spec.initProvider` as written (empty object when absent, or when the
    /// management-policy feature is disabled).
    pub init_provider: serde_json::Value,
    /// The parameters of a create request: `forProvider` deep-merged over `initProvider`
    /// (docs/managed-reconciler.md §12.3). Equal to `for_provider` when initProvider is empty or
    /// ignored.
    pub create_parameters: K::Parameters,
    /// Top-level `forProvider` keys that are set only in `initProvider`: adapters must not
    /// compare them for drift, nor send them in Update.
    pub init_only_fields: Vec<String>,
    /// `status.atProvider`.
    pub at_provider: K::Observation,
    /// `status.conditions`.
    pub conditions: Vec<Condition>,
    /// Values of the Kind's `...SecretRef` inputs, keyed by the ref field's path
    /// (e.g. `passwordSecretRef`), and for whole-Secret refs by `<field>.<key>` per key of the
    /// Secret (e.g. `handler.0.secretsSecretRef.token`). Absent when the ref is unset.
    pub secrets: BTreeMap<String, SecretString>,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// The LateInitialize policy allows late initialisation: Observe may fill unset
    /// `forProvider` fields only when this is true.
    pub late_initialize: bool,
    /// The policy set is exactly `{Observe}`: Observe should not compute a diff.
    pub observe_only: bool,
}

impl<K: ManagedKind> Managed<K> {
    /// Set a condition with the Crossplane set semantics.
    pub fn set_condition(&mut self, c: Condition) {
        set_condition(&mut self.conditions, c);
    }

    /// The secret value of a `...SecretRef` input, if set.
    pub fn secret(&self, field: &str) -> Option<&SecretString> {
        self.secrets.get(field)
    }

    /// The entries of a whole-Secret ref (`KindInfo::whole_secret_refs`) by Secret key; empty
    /// when the ref is unset.
    pub fn secret_map(&self, field: &str) -> BTreeMap<&str, &SecretString> {
        entries_under(&self.secrets, field)
    }
}

/// The entries `<field>.<key>` of a secrets map, by key. The map is sorted, so they are one
/// contiguous range starting at `<field>.`.
fn entries_under<'a>(
    secrets: &'a BTreeMap<String, SecretString>,
    field: &str,
) -> BTreeMap<&'a str, &'a SecretString> {
    let prefix = format!("{field}.");
    secrets
        .range(prefix.clone()..)
        .map_while(|(k, v)| k.strip_prefix(&prefix).map(|key| (key, v)))
        .collect()
}

/// The per-MR client an adapter implements (docs/managed-reconciler.md §12).
#[async_trait]
pub trait ExternalClient<K: ManagedKind>: Send + Sync {
    /// Read the external resource. MUST NOT change it. A JFrog "not found" is
    /// `resource_exists=false`; every other failure is an error. With an empty external name
    /// (server-assigned Kinds before Create) return not-exists without calling JFrog.
    /// The runtime sets `Ready=True Available` itself when the resource exists.
    async fn observe(&self, mr: &mut Managed<K>) -> Result<ExternalObservation, ExternalError>;

    /// Create it from `mr.create_parameters`. MUST be safe to retry.
    async fn create(&self, mr: &mut Managed<K>) -> Result<ExternalCreation, ExternalError>;

    /// Apply `mr.for_provider` (never init-only fields). Fail on immutable-field changes.
    async fn update(&self, mr: &mut Managed<K>) -> Result<ExternalUpdate, ExternalError>;

    /// Delete it; "already gone" is success.
    async fn delete(&self, mr: &mut Managed<K>) -> Result<ExternalDelete, ExternalError>;

    /// The checks Create (`create`) or Update makes before it writes, without writing:
    /// `preview` asks them so that a write the provider would refuse is shown refused.
    /// `Ok` carries the identifier the write would address, when known. None by default.
    async fn check_write(
        &self,
        _mr: &Managed<K>,
        _create: bool,
    ) -> Result<Option<String>, ExternalError> {
        Ok(None)
    }

    /// Release per-MR resources; called on every exit path after Connect.
    async fn disconnect(&self) -> Result<(), ExternalError> {
        Ok(())
    }
}

/// Builds the external client of one MR from its resolved ProviderConfig. Providers cache
/// one REST client per config inside their connector.
#[async_trait]
pub trait Connector<K: ManagedKind>: Send + Sync {
    /// Build the client. Errors become `connect failed: <err>`.
    async fn connect(
        &self,
        config: &ResolvedConfig,
        mr: &Managed<K>,
    ) -> Result<Box<dyn ExternalClient<K>>, ExternalError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] MessageError);

    #[test]
    fn error_chain_is_joined() {
        let e = ExternalError::new(Outer(MessageError("inner".into())));
        assert_eq!(e.to_string(), "outer: inner");
        assert_eq!(e.context("ctx").to_string(), "ctx: outer: inner");
    }

    #[test]
    fn secret_map_strips_the_field_prefix() {
        use secrecy::ExposeSecret;
        let mut secrets = BTreeMap::new();
        for k in [
            "headersSecretRef.a",
            "headersSecretRef.b.c",
            "headersSecretRefX.z",
            "headersSecretRef",
            "passwordSecretRef",
        ] {
            secrets.insert(k.to_string(), SecretString::from(format!("v-{k}")));
        }
        let m = entries_under(&secrets, "headersSecretRef");
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (*k, v.expose_secret())).collect();
        assert_eq!(
            got,
            vec![
                ("a", "v-headersSecretRef.a"),
                ("b.c", "v-headersSecretRef.b.c")
            ]
        );
        assert!(entries_under(&secrets, "nothing").is_empty());
    }

    #[test]
    fn connection_details_debug_hides_values() {
        let mut d = ConnectionDetails::new();
        d.insert("token", b"s3cr3t".to_vec());
        let s = format!("{d:?}");
        assert!(s.contains("token"));
        assert!(!s.contains("s3cr3t"));
    }
}
