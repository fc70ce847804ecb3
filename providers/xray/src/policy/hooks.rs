//! The hooks of the group's Kinds whose behaviour differs from the group's
//! ([`super::HOOKS`]): the Kind's table entry binds them (its correction in
//! `catalog/overrides.json`, section `xray.kinds`), so no hook asks which Kind it runs for.

use async_trait::async_trait;
use provider_family::{Address, HookCtx, Hooks, ResolvedKind};
use serde_json::{Map, Value};

use super::{SameObject, find_created};
use crate::common;

/// A security, license or operational-risk policy: the type its Kind fixes (the three
/// share one list, where a policy's `type` tells its Kind).
#[derive(Debug, Clone, Copy)]
pub struct Typed(pub &'static str);

/// SecurityPolicy's.
pub static SECURITY_POLICY: Typed = Typed("security");
/// LicensePolicy's.
pub static LICENSE_POLICY: Typed = Typed("license");
/// OperationalRiskPolicy's.
pub static OPERATIONAL_RISK_POLICY: Typed = Typed("operational_risk");

impl Hooks for Typed {
    /// Terraform accepts any of the three types on each policy resource; Xray would make a
    /// SecurityPolicy MR a license policy. The type must match the Kind.
    fn check_params(&self, kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        let got = params
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if got != self.0 {
            return Err(format!(
                "type {got:?}: a {} has type {:?}",
                kind.decl.kind, self.0
            ));
        }
        Ok(())
    }

    fn lists_as(&self, _kind: &ResolvedKind, object: &Value) -> bool {
        object["type"].as_str().is_none_or(|t| t == self.0)
    }
}

/// A server-assigned object found again, after a create whose answer was lost, in the list
/// at `path` as the one `same` says the create's body describes.
#[derive(Debug, Clone, Copy)]
pub struct Found {
    path: &'static str,
    same: SameObject,
    /// Whether the list shows Xray's built-ins beside it (`is_custom: false`).
    built_ins: bool,
}

/// CurationPolicy's: the curation policy of that name.
pub static CURATION_POLICY: Found = Found {
    path: "/api/v1/curation/policies",
    same: |o, b| o.get("name") == b.get("name"),
    built_ins: false,
};
/// CustomCurationCondition's: the condition of that name, listed with Xray's built-in ones.
pub static CUSTOM_CURATION_CONDITION: Found = Found {
    path: "/api/v1/curation/conditions",
    same: |o, b| o.get("name") == b.get("name"),
    built_ins: true,
};

#[async_trait]
impl Hooks for Found {
    async fn find_created(
        &self,
        ctx: HookCtx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Option<String>, jfrog_client::Error> {
        find_created(ctx.client, address, self.path, self.same, body).await
    }

    /// Xray's built-in curation conditions (listed with the custom ones).
    fn platform_owned(&self, _key: &str, object: &Value) -> Option<String> {
        (self.built_ins && object["is_custom"] == false)
            .then(|| "a built-in curation condition".to_string())
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        common::answer_id(answer, "id")
    }
}

/// An IgnoreRule: found again by its notes and filters; its ID is in its create answer's
/// text.
#[derive(Debug, Clone, Copy)]
pub struct IgnoreRule;

/// The text before an ignore rule's ID in its create answer.
const IGNORE_RULE_CREATED: &str = "Successfully added Ignore rule with id: ";

#[async_trait]
impl Hooks for IgnoreRule {
    async fn find_created(
        &self,
        ctx: HookCtx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Option<String>, jfrog_client::Error> {
        find_created(
            ctx.client,
            address,
            "/api/v1/ignore_rules",
            |o, b| {
                o.get("notes") == b.get("notes")
                    && o.get("ignore_filters") == b.get("ignore_filters")
            },
            body,
        )
        .await
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        let info = answer.get("info")?.as_str()?;
        let id = info.split_once(IGNORE_RULE_CREATED)?.1.trim();
        (!id.is_empty()).then(|| id.to_string())
    }
}
