//! The configuration, lifecycle and artifact Kinds of provider-artifactory (groups
//! `configuration`, `lifecycle`, `artifact`), declared as data on the family layer.
//!
//! Two kinds of REST binding ([`rest`]):
//!
//! - the system configuration descriptor Kinds (Backup, Proxy, PropertySet,
//!   RepositoryLayout, LdapSetting, LdapGroupSetting, MailServer, TrashcanConfig,
//!   GeneralSecurity, OauthSettings, SamlSettings): each a [`descriptor::Section`] of the
//!   one descriptor per platform, observed by one shared `GET` per poll and written through
//!   one coalescing writer (see [`descriptor`]);
//! - plain REST objects (archive and cleanup policies, LDAP v2 settings and groups) as
//!   [`provider_family::Paths`];
//! - the lifecycle and artifact Kinds (groups `lifecycle`, `artifact`: ReleaseBundleV2
//!   `<name>:<version>`, ReleaseBundleV2Promotion `<name>:<version>:<environment>`, Artifact
//!   with the server-assigned `<repository>/<path>`, ItemProperties `<repo>:<path>`) with
//!   their own bindings ([`objects`]). ItemProperties manages only the keys it declares.
//!
//! Singletons (MailServer, TrashcanConfig, GeneralSecurity, OauthSettings, SamlSettings)
//! have a constant identifier; deleting one resets it to JFrog's defaults (TrashcanConfig,
//! OauthSettings, SamlSettings), removes it (MailServer) or leaves it (GeneralSecurity), as
//! upstream does. Secrets (LDAP manager passwords, proxy passwords, OAuth client secrets)
//! come from Secret references, are never read back and are compared by a salted hash.
//!
//! # Catalog corrections (data, in `catalog/overrides.json`, section `configuration`)
//!
//! - GeneralSecurity, OauthSettings and SamlSettings are singletons with upstream's constant
//!   identifiers, not server-assigned.
//! - LDAP manager passwords are write-only secrets, not server-defaulted.

pub mod descriptor;
pub mod examples;
pub mod objects;
pub mod rest;
#[rustfmt::skip]
pub mod tables;

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use provider_family::wire::Mode;
use provider_family::{
    Address, ClientCache, FamilyKind, HookCtx, Hooks, Kind, MrState, ResolvedKind,
};
use provider_runtime::managed::external::ExternalError;
use provider_runtime::managed::registration::KindRegistration;
use serde_json::{Map, Value};

/// The family's hooks.
pub static HOOKS: ConfigurationHooks = ConfigurationHooks;

/// The family's behaviour beyond the generic adapter: an artifact's identifier from its
/// deploy answer, the artifact content rule, and the removal of an ItemProperties MR's
/// declared keys on delete.
#[derive(Debug, Clone, Copy)]
pub struct ConfigurationHooks;

#[async_trait]
impl Hooks for ConfigurationHooks {
    /// A project's release bundle or promotion is addressed with its project in the query
    /// (canonically `<name>:<version>?project=<key>`): every call on it sends `project`,
    /// since JFrog looks in the project's Release Bundles repository (the Release Lifecycle
    /// Management APIs' common query parameters; Terraform sends it on read too). Such an
    /// address is outside the platform's lists, so it is read by key.
    fn address(&self, kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        match (
            kind.decl.kind,
            params.get("projectKey").and_then(Value::as_str),
        ) {
            ("ReleaseBundleV2" | "ReleaseBundleV2Promotion", Some(p)) if !p.is_empty() => {
                Address::new(key).with_query("project", p)
            }
            _ => Address::new(key),
        }
    }

    fn id_description(&self) -> &'static str {
        "The JFrog identifier (key or name; the constant of a singleton; <repository>/<path> of an artifact)."
    }

    fn check_params(&self, kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        if kind.decl.kind == "Artifact" {
            let set = |f: &str| {
                params
                    .get(f)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
            };
            match (set("filePath"), set("contentBase64")) {
                (true, true) => {
                    return Err("filePath and contentBase64 conflict: give exactly one".into());
                }
                (false, false) => {
                    return Err("one of filePath (a file on the provider's filesystem) or contentBase64 (the content, base64-encoded) is required".into());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An item keeps the properties others set after an ItemProperties MR's keys went.
    fn gone_after_delete(&self, kind: &ResolvedKind) -> bool {
        kind.decl.kind == "ItemProperties"
    }

    /// A promotion observed from its environment's list looks as one read by key.
    fn decode(&self, kind: &ResolvedKind, body: &Value) -> Option<Value> {
        match kind.decl.kind {
            "ReleaseBundleV2Promotion" => objects::promotion_from_jfrog(body),
            _ => None,
        }
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        objects::artifact_id(answer)
    }

    /// Artifactory creates cleanup and archive policies disabled and refuses a create with
    /// `enabled: true` (the Terraform provider's `enabled` attribute: "A cleanup policy must
    /// be created inactive"); `enabled` changes only through the enablement call. So a
    /// create never sends it; an update sends it but JFrog keeps its own value.
    fn finish_body(&self, kind: &ResolvedKind, mode: Mode, body: &mut Map<String, Value>) {
        if enablement_path(kind).is_some() && matches!(mode, Mode::Create) {
            body.remove("enabled");
        }
    }

    /// A policy whose `enabled` is declared otherwise than JFrog has it is toggled through
    /// `POST .../policies/{key}/enablement` (`{"enabled": bool}`), as the Terraform provider
    /// does: after a create, the next observation sees the difference and updates.
    async fn after_update(&self, ctx: HookCtx<'_>, mr: MrState<'_>) -> Result<(), ExternalError> {
        let Some(path) = enablement_path(ctx.kind) else {
            return Ok(());
        };
        let enabled = mr
            .for_provider
            .get("enabled")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        objects::set_enabled(ctx.client, path, ctx.key, enabled)
            .await
            .map_err(ExternalError::new)
    }

    async fn before_delete(&self, ctx: HookCtx<'_>, mr: MrState<'_>) {
        if ctx.kind.decl.kind != "ItemProperties" {
            return;
        }
        // Only the keys this MR declares; properties others set stay.
        let names: Vec<String> = mr
            .for_provider
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if let Err(e) = objects::remove_properties(ctx.client, ctx.key, &names).await {
            tracing::warn!(key = ctx.key, error = %e, "could not remove the declared properties");
        }
    }
}

/// The enablement path of a cleanup or archive policy Kind.
fn enablement_path(kind: &ResolvedKind) -> Option<&'static str> {
    match kind.decl.kind {
        "ArchivePolicy" => Some("/api/archive/v2/packages/policies/{key}/enablement"),
        "PackageCleanupPolicy" => Some("/api/cleanup/packages/policies/{key}/enablement"),
        "ReleaseBundleV2CleanupPolicy" => Some("/api/cleanup/bundles/policies/{key}/enablement"),
        _ => None,
    }
}

/// Every declared configuration Kind.
pub fn declarations() -> &'static [Kind] {
    tables::KINDS
}

/// Every configuration Kind, composed once per process.
pub fn kinds() -> &'static [Arc<FamilyKind>] {
    static KINDS: OnceLock<Vec<Arc<FamilyKind>>> = OnceLock::new();
    KINDS.get_or_init(|| {
        provider_family::compose_with_references(
            tables::KINDS,
            crate::checks::CHECKS,
            crate::references::REFERENCES,
        )
    })
}

/// The runtime registrations of every configuration Kind, sharing the provider's client cache
/// (the descriptor Kinds share the platform's read and writer through the cache's
/// [`descriptor::Descriptors`], see [`crate::client_cache`]).
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    provider_family::registrations(kinds(), cache)
}

#[cfg(test)]
mod artifact_search_tests;
#[cfg(test)]
mod bundle_list_tests;
#[cfg(test)]
mod descriptor_tests;
#[cfg(test)]
mod enablement_tests;
#[cfg(test)]
mod file_path_tests;
#[cfg(test)]
mod identifier_tests;
#[cfg(test)]
mod item_properties_tests;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod promotion_list_tests;
#[cfg(test)]
mod secret_ref_tests;
#[cfg(test)]
mod tests;
