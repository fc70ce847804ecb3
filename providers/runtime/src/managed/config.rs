//! The contract between the managed reconciler and ProviderConfig handling
//! (docs/managed-reconciler.md §9).
//!
//! The reconciler knows nothing about how configs are stored or credentials extracted: it
//! hands a [`ManagedRef`] to a [`ProviderConfigResolver`] (implemented in `providerconfig`)
//! and gets a [`ResolvedConfig`] back, which the Kind's connector turns into a client.
//!
//! Order (docs/managed-reconciler.md §9.4, "track before use"): `track_usage` is called first, on
//! every reconcile that reaches Connect, then `resolve`. A missing config therefore still produces
//! a usage record. (The brief proposed `track_usage(mr, &ResolvedConfig)` after resolving;
//! that would skip the record for a missing config, which the reference rules out.)

use std::fmt;

use async_trait::async_trait;
use secrecy::SecretString;

use super::kind::Scope;

/// The MR's `spec.providerConfigRef`, with defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfigReference {
    /// `ClusterProviderConfig` or `ProviderConfig` for modern MRs; `None` for legacy MRs
    /// (whose ref has no kind and always means the legacy cluster-scoped `ProviderConfig`).
    /// `Some("")` is a modern ref without a kind (an error at resolve time).
    pub kind: Option<String>,
    /// The config name.
    pub name: String,
}

/// The identity of the MR that needs a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedRef {
    /// The MR's scope.
    pub scope: Scope,
    /// `apiVersion` of the MR, e.g. `repository.artifactory.m.crossplane.io/v1alpha1`.
    pub api_version: String,
    /// Kind of the MR.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (None for legacy MRs).
    pub namespace: Option<String>,
    /// `metadata.uid`: the name of the usage record.
    pub uid: String,
    /// The reference, or None when the MR has no `providerConfigRef` (an error:
    /// `managed resource does not reference a ProviderConfig`).
    pub provider_config_ref: Option<ProviderConfigReference>,
}

/// Credentials of a resolved config. `Debug` never prints values (secrecy).
#[derive(Clone)]
pub enum Credentials {
    /// An access token (Bearer).
    Token(SecretString),
    /// Username and password (Basic).
    Basic {
        /// The user.
        username: String,
        /// The password.
        password: SecretString,
    },
    /// The provider's workload identity (`source: InjectedIdentity`): the provider exchanges
    /// its subject token for its platform's credential.
    Injected(crate::providerconfig::identity::InjectedIdentity),
    /// No credentials (`source: None`).
    None,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Token(_) => f.write_str("Token(<redacted>)"),
            Credentials::Basic { username, .. } => {
                write!(
                    f,
                    "Basic {{ username: {username:?}, password: <redacted> }}"
                )
            }
            Credentials::Injected(i) => write!(f, "Injected({i:?})"),
            Credentials::None => f.write_str("None"),
        }
    }
}

/// A resolved ProviderConfig: where to connect and with what.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    /// `ClusterProviderConfig`, `ProviderConfig` (modern or legacy).
    pub config_kind: String,
    /// Config name.
    pub config_name: String,
    /// Config namespace, for a namespaced ProviderConfig.
    pub config_namespace: Option<String>,
    /// Config UID, when known (lets connectors key their client cache).
    pub config_uid: Option<String>,
    /// The platform base URL.
    pub url: String,
    /// The credentials.
    pub credentials: Credentials,
    /// Where the credentials were read from, for messages: `secret "ns/name" key "token"`,
    /// an environment variable or a file (never the value).
    pub credentials_from: Option<String>,
    /// PEM CA bundle for the platform's TLS, if configured.
    pub ca_bundle: Option<String>,
}

/// An error resolving a config or tracking usage. Its text reaches users as
/// `connect failed: <text>` and must never contain a credential value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    message: String,
    conflict: bool,
}

impl ConfigError {
    /// A plain error.
    pub fn new(message: impl Into<String>) -> Self {
        ConfigError {
            message: message.into(),
            conflict: false,
        }
    }

    /// A Kubernetes 409 Conflict (e.g. on the usage record update): the reconciler turns it
    /// into a silent back-off (docs/managed-reconciler.md §1.4).
    pub fn conflict(message: impl Into<String>) -> Self {
        ConfigError {
            message: message.into(),
            conflict: true,
        }
    }

    /// Whether this is a Kubernetes conflict.
    pub fn is_conflict(&self) -> bool {
        self.conflict
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Resolves ProviderConfigs and records their usage. Implemented by `providerconfig`.
#[async_trait]
pub trait ProviderConfigResolver: Send + Sync {
    /// Create or update the ProviderConfigUsage of this MR (docs/managed-reconciler.md §9.4).
    /// Called before `resolve` on every reconcile that reaches Connect.
    async fn track_usage(&self, mr: &ManagedRef) -> Result<(), ConfigError>;

    /// Read the config and its credentials (docs/managed-reconciler.md §9.2, §9.3).
    async fn resolve(&self, mr: &ManagedRef) -> Result<ResolvedConfig, ConfigError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_debug_is_redacted() {
        let c = Credentials::Basic {
            username: "admin".into(),
            password: SecretString::from("hunter2"),
        };
        let s = format!("{c:?}");
        assert!(s.contains("admin"));
        assert!(!s.contains("hunter2"));
        let t = Credentials::Token(SecretString::from("tok123"));
        assert!(!format!("{t:?}").contains("tok123"));
    }
}
