//! The configuration Kinds' API types and where each Kind lives.
//!
//! The config Kinds are generic over the provider's short name (`artifactory`, `xray`, ...):
//! their API groups differ per provider but their shape does not, so they are handled as
//! [`DynamicObject`]s addressed through [`ConfigApi`], and their spec/status are the typed
//! structs below (which also give the CRD schemas).
//!
//! The spec accepts both ways JFrog users write credentials:
//!
//! - the Upjet way of the official JFrog providers: `credentials.source: Secret` and a
//!   `secretRef` whose value is a JSON object `{"url": ..., "access_token": ...}` (or
//!   `username`/`password`);
//! - the explicit way: `spec.url`, and a `secretRef` whose value is the bare access token, or
//!   `credentials.usernameSecretRef` + `credentials.passwordSecretRef`.
//!
//! `spec.url` wins over a `url` in the JSON when both are given. `caBundleSecretRef` names a
//! PEM bundle that the JFrog client trusts in addition to the system roots.

use kube::api::{ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of every config Kind.
pub const CONFIG_VERSION: &str = "v1beta1";

/// Where credentials come from (crossplane `apis/core/v2` `CredentialsSource`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CredentialsSource {
    /// No credentials (anonymous access).
    None,
    /// From a Kubernetes Secret.
    #[default]
    Secret,
    /// The provider's own workload identity: its Kubernetes service-account token,
    /// exchanged by the platform for a short-lived access token (see `injectedIdentity`).
    InjectedIdentity,
    /// From an environment variable of the provider process.
    Environment,
    /// From a file in the provider's filesystem.
    Filesystem,
}

impl CredentialsSource {
    /// The spelling users write.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Secret => "Secret",
            Self::InjectedIdentity => "InjectedIdentity",
            Self::Environment => "Environment",
            Self::Filesystem => "Filesystem",
        }
    }
}

/// A key of a Secret. `namespace` is ignored for namespaced ProviderConfigs (the MR's
/// namespace is used) and required for cluster-scoped configs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeySelector {
    /// Name of the Secret.
    pub name: String,
    /// Namespace of the Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The key to select.
    pub key: String,
}

/// An environment variable selector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnvSelector {
    /// Name of the environment variable.
    pub name: String,
}

/// A filesystem selector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FsSelector {
    /// Path of the file.
    pub path: String,
}

/// Credentials of a ProviderConfig.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderCredentials {
    /// Source of the credentials.
    pub source: CredentialsSource,
    /// A Secret key holding an access token, or a JSON object with `url` and `access_token`
    /// (or `username` and `password`), as the official JFrog providers read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
    /// An environment variable holding the same content as `secretRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvSelector>,
    /// A file holding the same content as `secretRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsSelector>,
    /// A Secret key holding a user name for basic authentication (with `passwordSecretRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username_secret_ref: Option<SecretKeySelector>,
    /// A Secret key holding the password for basic authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret_ref: Option<SecretKeySelector>,
    /// With `source: InjectedIdentity`: how the provider's service-account token is exchanged
    /// for a short-lived access token (no Secret is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected_identity: Option<InjectedIdentitySpec>,
}

/// The settings of `source: InjectedIdentity`: the provider proves who it is with its
/// Kubernetes service-account token and the platform's OIDC integration answers with a
/// short-lived access token whose user and scope its identity mapping sets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InjectedIdentitySpec {
    /// Name of the platform's OIDC integration (an OIDCConfiguration) that trusts the
    /// cluster's service-account issuer.
    #[schemars(length(min = 1))]
    pub provider_name: String,
    /// Audience of the service-account token, as the OIDC integration expects it
    /// (default `jfrog-generic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// A service-account token file mounted by a projected volume (its audience is the
    /// volume's); without it the provider requests a token for its own ServiceAccount
    /// through the TokenRequest API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_path: Option<String>,
    /// A project whose identity mappings apply (the exchange's `project_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
}

/// Spec of ClusterProviderConfig, ProviderConfig and the legacy ProviderConfig.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigSpec {
    /// Base URL of the JFrog Platform, e.g. `https://acme.jfrog.io`. Optional when the
    /// credentials JSON carries a `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Credentials required to authenticate to the JFrog Platform.
    pub credentials: ProviderCredentials,
    /// A Secret key holding a PEM CA bundle to trust for the JFrog URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<SecretKeySelector>,
}

pub use crate::managed::conditions::Condition;

/// Status of the config Kinds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigStatus {
    /// Conditions of the resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The number of objects using this ProviderConfig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<i64>,
}

/// `providerConfigRef` of a modern usage record (and of a modern MR).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TypedReference {
    /// Kind of the referenced config.
    pub kind: String,
    /// Name of the referenced config.
    pub name: String,
}

/// `providerConfigRef` of a legacy usage record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NameReference {
    /// Name of the referenced config.
    pub name: String,
}

/// `resourceRef` of a usage record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceReference {
    /// API version of the referent.
    pub api_version: String,
    /// Kind of the referent.
    pub kind: String,
    /// Name of the referent.
    pub name: String,
}

/// The top-level fields of a modern `ProviderConfigUsage` (no `spec`, as upstream).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigUsageBody {
    /// The config in use.
    pub provider_config_ref: TypedReference,
    /// The managed resource using it.
    pub resource_ref: ResourceReference,
}

/// The top-level fields of a legacy `ProviderConfigUsage`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LegacyProviderConfigUsageBody {
    /// The config in use.
    pub provider_config_ref: NameReference,
    /// The managed resource using it.
    pub resource_ref: ResourceReference,
}

/// Every configuration Kind a provider serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfigKind {
    /// `ClusterProviderConfig` in `<p>.m.crossplane.io` (cluster-scoped).
    ClusterProviderConfig,
    /// `ProviderConfig` in `<p>.m.crossplane.io` (namespaced).
    ProviderConfig,
    /// `ProviderConfigUsage` in `<p>.m.crossplane.io` (namespaced).
    ProviderConfigUsage,
    /// `ClusterProviderConfigUsage` in `<p>.m.crossplane.io` (cluster-scoped; served for
    /// compatibility with Upjet, never written: MRs always record a namespaced usage).
    ClusterProviderConfigUsage,
    /// Legacy `ProviderConfig` in `<p>.crossplane.io` (cluster-scoped).
    LegacyProviderConfig,
    /// Legacy `ProviderConfigUsage` in `<p>.crossplane.io` (cluster-scoped).
    LegacyProviderConfigUsage,
}

impl ConfigKind {
    /// All config Kinds.
    pub const ALL: [ConfigKind; 6] = [
        Self::ClusterProviderConfig,
        Self::ProviderConfig,
        Self::ProviderConfigUsage,
        Self::ClusterProviderConfigUsage,
        Self::LegacyProviderConfig,
        Self::LegacyProviderConfigUsage,
    ];

    /// The Kinds that are configs (have a controller), not usage records.
    pub const CONFIGS: [ConfigKind; 3] = [
        Self::ClusterProviderConfig,
        Self::ProviderConfig,
        Self::LegacyProviderConfig,
    ];

    /// The Kind name.
    pub fn kind(self) -> &'static str {
        match self {
            Self::ClusterProviderConfig => "ClusterProviderConfig",
            Self::ProviderConfig | Self::LegacyProviderConfig => "ProviderConfig",
            Self::ProviderConfigUsage | Self::LegacyProviderConfigUsage => "ProviderConfigUsage",
            Self::ClusterProviderConfigUsage => "ClusterProviderConfigUsage",
        }
    }

    /// Whether objects of this Kind live in a namespace.
    pub fn namespaced(self) -> bool {
        matches!(self, Self::ProviderConfig | Self::ProviderConfigUsage)
    }

    /// Whether this is a legacy (`<p>.crossplane.io`) Kind.
    pub fn legacy(self) -> bool {
        matches!(
            self,
            Self::LegacyProviderConfig | Self::LegacyProviderConfigUsage
        )
    }

    /// Whether this is a usage Kind.
    pub fn is_usage(self) -> bool {
        matches!(
            self,
            Self::ProviderConfigUsage
                | Self::ClusterProviderConfigUsage
                | Self::LegacyProviderConfigUsage
        )
    }

    /// The usage Kind that MRs referencing this config Kind record.
    pub fn usage_kind(self) -> ConfigKind {
        if self.legacy() {
            Self::LegacyProviderConfigUsage
        } else {
            Self::ProviderConfigUsage
        }
    }
}

/// Addresses the config Kinds of one provider (`artifactory`, `xray`, `project`, `platform`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConfigApi {
    provider: String,
}

impl ConfigApi {
    /// For the provider with this short name (the first label of its config group).
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
        }
    }

    /// The provider's short name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The modern config group, `<p>.m.crossplane.io`.
    pub fn modern_group(&self) -> String {
        format!("{}.m.crossplane.io", self.provider)
    }

    /// The legacy config group, `<p>.crossplane.io`.
    pub fn legacy_group(&self) -> String {
        format!("{}.crossplane.io", self.provider)
    }

    /// The group of a config Kind.
    pub fn group(&self, kind: ConfigKind) -> String {
        if kind.legacy() {
            self.legacy_group()
        } else {
            self.modern_group()
        }
    }

    /// The plural resource name of a config Kind.
    pub fn plural(kind: ConfigKind) -> String {
        format!("{}s", kind.kind().to_ascii_lowercase())
    }

    /// The GVK of a config Kind.
    pub fn gvk(&self, kind: ConfigKind) -> GroupVersionKind {
        GroupVersionKind::gvk(&self.group(kind), CONFIG_VERSION, kind.kind())
    }

    /// The [`ApiResource`] of a config Kind, for dynamic clients.
    pub fn api_resource(&self, kind: ConfigKind) -> ApiResource {
        ApiResource::from_gvk_with_plural(&self.gvk(kind), &Self::plural(kind))
    }

    /// The CRD name (`<plural>.<group>`) of a config Kind.
    pub fn crd_name(&self, kind: ConfigKind) -> String {
        format!("{}.{}", Self::plural(kind), self.group(kind))
    }

    /// The config Kind of a modern `providerConfigRef.kind`, if it is one this provider serves.
    pub fn modern_config_kind(kind: &str) -> Option<ConfigKind> {
        match kind {
            "ClusterProviderConfig" => Some(ConfigKind::ClusterProviderConfig),
            "ProviderConfig" => Some(ConfigKind::ProviderConfig),
            _ => None,
        }
    }
}

/// Reads the typed spec of a config object.
pub fn config_spec(obj: &DynamicObject) -> Result<ProviderConfigSpec, serde_json::Error> {
    serde_json::from_value(obj.data.get("spec").cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_plurals() {
        let api = ConfigApi::new("artifactory");
        assert_eq!(
            api.crd_name(ConfigKind::ClusterProviderConfig),
            "clusterproviderconfigs.artifactory.m.crossplane.io"
        );
        assert_eq!(
            api.crd_name(ConfigKind::LegacyProviderConfig),
            "providerconfigs.artifactory.crossplane.io"
        );
        assert_eq!(
            api.api_resource(ConfigKind::ProviderConfigUsage)
                .api_version,
            "artifactory.m.crossplane.io/v1beta1"
        );
    }

    #[test]
    fn spec_accepts_upjet_and_explicit_shapes() {
        let upjet: ProviderConfigSpec = serde_json::from_value(serde_json::json!({
            "credentials": {"source": "Secret",
                "secretRef": {"namespace": "crossplane-system", "name": "jfrog", "key": "credentials"}}
        }))
        .unwrap();
        assert_eq!(upjet.credentials.source, CredentialsSource::Secret);
        assert!(upjet.url.is_none());
        let explicit: ProviderConfigSpec = serde_json::from_value(serde_json::json!({
            "url": "https://acme.jfrog.io",
            "credentials": {"source": "Secret",
                "usernameSecretRef": {"name": "jfrog", "key": "user"},
                "passwordSecretRef": {"name": "jfrog", "key": "password"}},
            "caBundleSecretRef": {"name": "ca", "key": "ca.crt"}
        }))
        .unwrap();
        assert_eq!(explicit.url.as_deref(), Some("https://acme.jfrog.io"));
        assert!(explicit.ca_bundle_secret_ref.is_some());
    }
}
