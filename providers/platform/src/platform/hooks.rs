//! The hooks of the Kinds whose behaviour differs from the family's ([`super::HOOKS`]), one
//! type per Kind: the Kind's table entry binds them (its correction in
//! `catalog/overrides.json` names them, `"hooks": "GroupMembers"`), so no hook asks which
//! Kind it runs for. The table binds the family's key rule ([`super::PlatformHooks`]) to
//! every Kind beside them.

use provider_family::wire::{Mode, user_value};
use provider_family::{Address, Hooks, ResolvedKind};
use serde_json::{Map, Value, json};

use super::rest;

/// The stages every lifecycle has (JFrog's own: never in `promoteStages`, never exported).
const SYSTEM_STAGES: [&str; 3] = ["PR", "COMMIT", "PROD"];

fn str_param<'a>(params: &'a Value, crd: &str) -> &'a str {
    user_value(params, crd)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn bool_param(params: &Value, crd: &str) -> Option<bool> {
    user_value(params, crd).and_then(Value::as_bool)
}

/// A Group: its rule beyond the CRD's (autoJoin with adminPrivileges is a rule of its
/// declaration, checked at admission and, on objects admitted before it, before any write);
/// the default group `readers` is the platform's.
#[derive(Debug, Clone, Copy)]
pub struct Group;

impl Hooks for Group {
    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        if bool_param(params, "policyManager") == Some(true)
            && bool_param(params, "policyViewer") == Some(false)
        {
            return Err("policyViewer cannot be false while policyManager is true".into());
        }
        Ok(())
    }

    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        (key == "readers")
            .then(|| "the platform's default group (every new user joins it)".to_string())
    }
}

/// A GroupMembers: its address carries the declared members.
#[derive(Debug, Clone, Copy)]
pub struct GroupMembers;

impl Hooks for GroupMembers {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        let members = user_value(params, "members")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        Address::new(key).with_detail(rest::DeclaredMembers(members))
    }
}

/// A Permission: each resource's users, groups and targets are maps on the wire; the
/// platform creates `Anything` and `Any Remote`.
#[derive(Debug, Clone, Copy)]
pub struct Permission;

impl Hooks for Permission {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::permission_to_jfrog(body);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        rest::permission_from_jfrog(body)
    }

    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        ["Anything", "Any Remote"]
            .contains(&key)
            .then(|| "a permission the platform creates".to_string())
    }
}

/// An AWSIAMRole: its role ARN's form.
#[derive(Debug, Clone, Copy)]
pub struct AwsIamRole;

/// `^arn:aws:iam::\d{12}:role/[\w+=,.@:-]+$`
fn valid_iam_role(arn: &str) -> bool {
    let Some(rest) = arn.strip_prefix("arn:aws:iam::") else {
        return false;
    };
    let Some((account, role)) = rest.split_once(":role/") else {
        return false;
    };
    account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
        && !role.is_empty()
        && role
            .chars()
            .all(|c| c.is_alphanumeric() || "_+=,.@:-".contains(c))
}

impl Hooks for AwsIamRole {
    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        let arn = str_param(params, "iamRole");
        if !arn.is_empty() && !valid_iam_role(arn) {
            return Err(format!(
                "iamRole {arn:?} must look like arn:aws:iam::<12 digits>:role/<name>"
            ));
        }
        Ok(())
    }
}

/// An OIDCConfiguration: two provider types are spelled differently on the wire.
#[derive(Debug, Clone, Copy)]
pub struct OidcConfiguration;

impl Hooks for OidcConfiguration {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::oidc_to_jfrog(body);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        rest::oidc_from_jfrog(body)
    }
}

/// An OIDCIdentityMapping: addressed through its provider (and project), its claims JSON
/// text on our side and an object on the wire.
#[derive(Debug, Clone, Copy)]
pub struct OidcIdentityMapping;

impl Hooks for OidcIdentityMapping {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        match str_param(params, "providerName") {
            "" => Address::unknown(),
            p => Address::new(key)
                .with_parent(p)
                .with_detail(rest::MappingProject(
                    str_param(params, "projectKey").to_string(),
                )),
        }
    }

    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        let text = str_param(params, "claimsJson");
        if !text.is_empty() && !serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()) {
            return Err("claimsJson must be a JSON object".into());
        }
        Ok(())
    }

    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::mapping_to_jfrog(body);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        rest::mapping_from_jfrog(body)
    }
}

/// The ReverseProxy: its body carries `key`, the lower-cased server type.
#[derive(Debug, Clone, Copy)]
pub struct ReverseProxy;

impl Hooks for ReverseProxy {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        if let Some(t) = body.get("webServerType").and_then(Value::as_str) {
            let key = t.to_lowercase();
            body.insert("key".into(), json!(key));
        }
    }
}

/// A Lifecycle: one per scope, promoting through no system stage; one with no stage of its
/// own is JFrog's default.
#[derive(Debug, Clone, Copy)]
pub struct Lifecycle;

impl Hooks for Lifecycle {
    fn address(&self, _kind: &ResolvedKind, _key: &str, params: &Value) -> Address {
        match str_param(params, "projectKey") {
            "" => Address::new(rest::GLOBAL),
            p => Address::new(p),
        }
    }

    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        let stages = user_value(params, "promoteStages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        for s in stages {
            if SYSTEM_STAGES.contains(&s) {
                return Err(format!("promoteStages cannot contain the system stage {s}"));
            }
        }
        Ok(())
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        rest::lifecycle_from_jfrog(body)
    }

    fn platform_owned(&self, _key: &str, object: &Value) -> Option<String> {
        let own = rest::promote_stages(object)
            .iter()
            .filter_map(Value::as_str)
            .any(|s| !SYSTEM_STAGES.contains(&s));
        (!own).then(|| "a lifecycle with no promote stage (JFrog's default)".to_string())
    }
}

/// A LifecycleStage: addressed with its project and detach switch, answered in another
/// shape than it takes; the system stages are the platform's.
#[derive(Debug, Clone, Copy)]
pub struct LifecycleStage;

impl Hooks for LifecycleStage {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        Address::new(key).with_detail(rest::StageScope {
            project: str_param(params, "projectKey").to_string(),
            detach: bool_param(params, "detachOnDestroy") == Some(true),
        })
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        rest::stage_from_jfrog(body)
    }

    fn platform_owned(&self, key: &str, object: &Value) -> Option<String> {
        // The stages list shows the system stages among the platform's.
        let global = object
            .get("scope")
            .and_then(Value::as_str)
            .is_some_and(|s| s.eq_ignore_ascii_case("global"));
        (global && SYSTEM_STAGES.contains(&key))
            .then(|| "a system stage of every platform's lifecycle".to_string())
    }
}
