//! The hooks of the Kinds whose behaviour differs from the family's ([`super::HOOKS`]): the
//! Kind's table line names them (its correction in `catalog/overrides.json`, section
//! `configuration.kinds`), so no hook asks which Kind it runs for. The table binds the
//! family's identifier description ([`super::HOOKS`]) to every Kind beside them.

use async_trait::async_trait;
use provider_family::wire::Mode;
use provider_family::{Address, HookCtx, Hooks, MrState, ResolvedKind};
use provider_runtime::managed::external::ExternalError;
use serde_json::{Map, Value};

use super::objects;

/// A project's release bundle or promotion is addressed with its project in the query
/// (canonically `<name>:<version>?project=<key>`): every call on it sends `project`, since
/// JFrog looks in the project's Release Bundles repository (the Release Lifecycle Management
/// APIs' common query parameters; Terraform sends it on read too). Such an address is
/// observed through the lists asked with the project (`rest::RELEASEBUNDLEV2`).
fn in_project(key: &str, params: &Value) -> Address {
    match params.get("projectKey").and_then(Value::as_str) {
        Some(p) if !p.is_empty() => Address::new(key).with_query("project", p),
        _ => Address::new(key),
    }
}

/// A ReleaseBundleV2: addressed with its project.
#[derive(Debug, Clone, Copy)]
pub struct ReleaseBundle;

impl Hooks for ReleaseBundle {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        in_project(key, params)
    }
}

/// A ReleaseBundleV2Promotion: addressed with its project; one observed from its
/// environment's list looks as one read by key.
#[derive(Debug, Clone, Copy)]
pub struct Promotion;

impl Hooks for Promotion {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        in_project(key, params)
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        objects::promotion_from_jfrog(body)
    }
}

/// An Artifact: its content rule, and its identifier from its deploy answer.
#[derive(Debug, Clone, Copy)]
pub struct Artifact;

impl Hooks for Artifact {
    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        let set = |f: &str| {
            params
                .get(f)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        };
        match (set("filePath"), set("contentBase64")) {
            (true, true) => Err("filePath and contentBase64 conflict: give exactly one".into()),
            (false, false) => Err("one of filePath (a file on the provider's filesystem) or contentBase64 (the content, base64-encoded) is required".into()),
            _ => Ok(()),
        }
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        objects::artifact_id(answer)
    }
}

/// An ItemProperties: its delete removes the keys it declares, and the item stays.
#[derive(Debug, Clone, Copy)]
pub struct ItemProperties;

#[async_trait]
impl Hooks for ItemProperties {
    /// An item keeps the properties others set after an ItemProperties MR's keys went.
    fn gone_after_delete(&self, _kind: &ResolvedKind) -> bool {
        true
    }

    async fn before_delete(&self, ctx: HookCtx<'_>, mr: MrState<'_>) {
        // Only the keys this MR declares; properties others set stay.
        let names: Vec<String> = mr
            .for_provider
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if let Err(e) = objects::remove_properties(ctx.client, ctx.key(), &names).await {
            tracing::warn!(key = ctx.key(), error = %e, "could not remove the declared properties");
        }
    }
}

/// A cleanup or archive policy, whose `enabled` changes only through its enablement call
/// (the path, `{key}` for the policy's).
#[derive(Debug, Clone, Copy)]
pub struct Enablement(pub &'static str);

/// ArchivePolicy's.
pub static ARCHIVE_POLICY: Enablement =
    Enablement("/api/archive/v2/packages/policies/{key}/enablement");
/// PackageCleanupPolicy's.
pub static PACKAGE_CLEANUP_POLICY: Enablement =
    Enablement("/api/cleanup/packages/policies/{key}/enablement");
/// ReleaseBundleV2CleanupPolicy's.
pub static RELEASE_BUNDLE_V2_CLEANUP_POLICY: Enablement =
    Enablement("/api/cleanup/bundles/policies/{key}/enablement");

#[async_trait]
impl Hooks for Enablement {
    /// Artifactory creates cleanup and archive policies disabled and refuses a create with
    /// `enabled: true` (the Terraform provider's `enabled` attribute: "A cleanup policy must
    /// be created inactive"); `enabled` changes only through the enablement call. So a
    /// create never sends it; an update sends it but JFrog keeps its own value.
    fn encode(&self, _kind: &ResolvedKind, mode: Mode, body: &mut Map<String, Value>) {
        if matches!(mode, Mode::Create) {
            body.remove("enabled");
        }
    }

    /// A policy whose `enabled` is declared otherwise than JFrog has it is toggled through
    /// `POST .../policies/{key}/enablement` (`{"enabled": bool}`), as the Terraform provider
    /// does: after a create, the next observation sees the difference and updates.
    async fn after_update(&self, ctx: HookCtx<'_>, mr: MrState<'_>) -> Result<(), ExternalError> {
        let enabled = mr
            .for_provider
            .get("enabled")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        objects::set_enabled(ctx.client, self.0, ctx.key(), enabled)
            .await
            .map_err(ExternalError::new)
    }
}
