//! What the next reconcile of one MR would do to the external system, without doing it.
//!
//! [`plan`] runs the reconciler's own steps on an MR that is given (from a manifest, or as
//! a live cluster holds it) rather than read: management policies (§6), the pause, the
//! external-name initialiser (step 7), the creation-incomplete guard (step 8), the adapter's
//! view ([`super::reconciler::view_of`], step 10), the Kind's connector and its Observe
//! (step 11), then the decision of steps 12 to 21. Observe is the adapter's own: the diff a
//! preview shows is the one an Update would act on ([`ExternalObservation::changes`]), never
//! a second implementation of it. Nothing is written: not to Kubernetes (the MR is a value
//! here), and not to the external system, provided the connector's client is read-only (the
//! caller's job: JFrog's providers build a read-only `JfrogClient` for it). Before a planned
//! Create or Update the adapter's own pre-write checks run ([`ExternalClient::check_write`]),
//! so a write the provider would refuse is reported as refused.
//!
//! References are resolved by the caller (against the manifests previewed together, or the
//! cluster) before [`plan`], as the reconciler resolves them at step 9.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::DynamicObject;
use secrecy::SecretString;
use serde::Serialize;
use serde_json::Value;

use super::config::ResolvedConfig;
use super::errors::{
    ERR_CONTEXT_DEADLINE, ERR_EXTERNAL_RESOURCE_NOT_EXIST, ERR_RECONCILE_CONNECT,
    ERR_RECONCILE_CREATE, ERR_RECONCILE_OBSERVE, ERR_RECONCILE_UPDATE, MSG_CREATION_INCOMPLETE,
};
use super::external::{Connector, ExternalClient, FieldChange, ManagedKind};
use super::kind::{KindInfo, Scope};
use super::meta::{self, EXTERNAL_NAME};
use super::policy::PolicyResolver;
use super::reconciler::{field_at, view_of};

/// What the next reconcile would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Create the external resource.
    Create,
    /// Update it: [`Planned::changes`] lists the fields.
    Update,
    /// Adopt an existing external resource that matches: no write to it.
    Adopt,
    /// Nothing: it exists and matches (or the policies allow no write).
    NoChange,
    /// The cluster or the provider would refuse the MR (validation): [`Planned::message`].
    Refused,
    /// The reconcile cannot proceed (a second MR of a singleton, an unresolved reference,
    /// an observation that failed): [`Planned::message`].
    Blocked,
}

impl Action {
    /// The word the outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Adopt => "adopt",
            Action::NoChange => "no change",
            Action::Refused => "refused",
            Action::Blocked => "blocked",
        }
    }

    /// Whether the external system would be written.
    pub fn writes(self) -> bool {
        matches!(self, Action::Create | Action::Update)
    }
}

/// One MR to preview.
pub struct PreviewInput {
    /// The MR's scope.
    pub scope: Scope,
    /// The MR, references resolved. A manifest needs no UID (one is made up per MR).
    pub object: DynamicObject,
    /// The ProviderConfig the connector is given.
    pub config: ResolvedConfig,
    /// The values of its `...SecretRef` inputs (see [`placeholder_secrets`]).
    pub secrets: BTreeMap<String, SecretString>,
    /// Whether management policies are honoured (the provider's flag).
    pub management_policies_enabled: bool,
    /// The MR exists in the cluster already: an existing external resource that matches
    /// is "no change" rather than "adopt".
    pub known: bool,
    /// The longest an observation may take.
    pub timeout: Duration,
}

/// What [`plan`] found for one MR.
#[derive(Debug, Clone, Serialize)]
pub struct Planned {
    /// The action.
    pub action: Action,
    /// The external identifier, when known (server-assigned ones are not before create).
    pub external_name: String,
    /// The fields an Update changes (and fields late initialisation fills in the MR);
    /// values of sensitive fields never appear.
    pub changes: Vec<FieldChange>,
    /// For a create: the parameters sent (`forProvider` over `initProvider`), sensitive
    /// fields as `"(set)"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create: Option<Value>,
    /// Why a refused or blocked MR is, as the MR's `Synced` condition would say it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Remarks (paused, observe-only, a difference the policies do not let an Update fix).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Planned {
    fn new(action: Action, message: impl Into<String>) -> Self {
        Planned {
            action,
            external_name: String::new(),
            changes: Vec::new(),
            create: None,
            message: message.into(),
            notes: Vec::new(),
        }
    }
}

/// The value given to a `...SecretRef` input whose Secret is not read (a manifest previewed
/// without a cluster): it is never sent, only hashed to compare with a recorded hash, so
/// an MR with a secret previews as "set" for it.
pub const PLACEHOLDER_SECRET: &str = "(preview: the Secret is not read)";

/// Placeholder values ([`PLACEHOLDER_SECRET`]) for every key `...SecretRef` input `obj`
/// sets (whole-Secret references have no known keys and are left out).
pub fn placeholder_secrets(
    info: &KindInfo,
    obj: &DynamicObject,
    management_policies_enabled: bool,
) -> BTreeMap<String, SecretString> {
    let spec = obj.data.get("spec");
    let fp = spec.and_then(|s| s.get("forProvider"));
    let ip = spec
        .and_then(|s| s.get("initProvider"))
        .filter(|_| management_policies_enabled);
    info.secret_refs
        .iter()
        .filter(|sr| {
            [fp, ip].iter().any(|root| {
                root.and_then(|v| field_at(v, sr.field))
                    .is_some_and(|v| !v.is_null())
            })
        })
        .map(|sr| (sr.field.to_string(), SecretString::from(PLACEHOLDER_SECRET)))
        .collect()
}

/// `params` with the sensitive fields of `info` shown as `"(set)"`.
fn masked(info: &KindInfo, mut params: Value) -> Value {
    for f in &info.sensitive_fields {
        let mut node = Some(&mut params);
        let segs: Vec<&str> = f.split('.').collect();
        for (i, seg) in segs.iter().enumerate() {
            let Some(Value::Object(m)) = node else { break };
            if i + 1 == segs.len() {
                // A `...SecretRef` names a Secret (no value): shown as it is.
                if let Some(v) = m.get_mut(*seg)
                    && !v.is_null()
                    && !(seg.ends_with("SecretRef") && v.is_object())
                {
                    *v = Value::String("(set)".into());
                }
                break;
            }
            node = m.get_mut(*seg);
        }
    }
    params
}

/// The next reconcile of `input.object`, without a write (see the module documentation).
pub async fn plan<K: ManagedKind>(
    kind: &K,
    connector: &dyn Connector<K>,
    mut input: PreviewInput,
) -> Planned {
    let info = kind.info();
    let obj = &mut input.object;
    let name = obj.metadata.name.clone().unwrap_or_default();
    if obj.metadata.uid.as_deref().is_none_or(str::is_empty) {
        // A manifest: a UID of its own, so claims and hashes tell MRs apart.
        obj.metadata.uid = Some(format!(
            "preview-{}-{name}",
            obj.metadata.namespace.as_deref().unwrap_or("")
        ));
    }
    let spec = obj.data.get("spec");
    let policies = PolicyResolver::new(
        spec.and_then(|s| s.get("managementPolicies"))
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
        input.management_policies_enabled,
        !input.scope.is_namespaced(),
        spec.and_then(|s| s.get("deletionPolicy"))
            .and_then(Value::as_str)
            .map(str::to_string),
    );
    let mut notes = Vec::new();
    let annotations = obj.metadata.annotations.clone().unwrap_or_default();
    // Step 3: a paused MR does nothing until it is unpaused; what it would do then is
    // what a preview is for.
    if meta::is_paused(&annotations) || policies.is_paused() {
        notes.push("paused: nothing happens until it is unpaused; this is what the first reconcile after that would do".to_string());
    }
    // Step 5.
    if let Err(m) = policies.validate() {
        return Planned::new(Action::Refused, m);
    }
    if obj.metadata.deletion_timestamp.is_some() {
        let mut p = Planned::new(
            Action::Blocked,
            "being deleted: the next reconcile deletes the external resource (or orphans it)",
        );
        p.notes = notes;
        return p;
    }
    // Step 7.
    if info.identifier.initialises_external_name()
        && annotations.get(EXTERNAL_NAME).is_none_or(|v| v.is_empty())
    {
        obj.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(EXTERNAL_NAME.to_string(), name.clone());
    }
    // Step 8.
    if meta::external_create_incomplete(&annotations) && !info.identifier.is_deterministic() {
        return Planned::new(Action::Blocked, MSG_CREATION_INCOMPLETE);
    }
    // Step 10.
    let mut view = match view_of::<K>(input.scope, obj, &policies) {
        Ok(v) => v,
        Err(m) => return Planned::new(Action::Refused, format!("{ERR_RECONCILE_CONNECT}: {m}")),
    };
    view.secrets = std::mem::take(&mut input.secrets);
    let client: Box<dyn ExternalClient<K>> =
        match tokio::time::timeout(input.timeout, connector.connect(&input.config, &view)).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                return Planned::new(Action::Blocked, format!("{ERR_RECONCILE_CONNECT}: {e}"));
            }
            Err(_) => {
                return Planned::new(
                    Action::Blocked,
                    format!("{ERR_RECONCILE_CONNECT}: {ERR_CONTEXT_DEADLINE}"),
                );
            }
        };
    let mut planned = decide(
        info,
        client.as_ref(),
        &mut view,
        &policies,
        input.known,
        input.timeout,
    )
    .await;
    let _ = client.disconnect().await;
    if planned.external_name.is_empty() {
        planned.external_name = view.external_name.clone();
    }
    notes.append(&mut planned.notes);
    planned.notes = notes;
    planned
}

/// Steps 11 to 21 on a connected client.
async fn decide<K: ManagedKind>(
    info: &KindInfo,
    client: &dyn ExternalClient<K>,
    view: &mut super::external::Managed<K>,
    policies: &PolicyResolver,
    known: bool,
    timeout: Duration,
) -> Planned {
    let observed = match tokio::time::timeout(timeout, client.observe(view)).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            return Planned::new(Action::Blocked, format!("{ERR_RECONCILE_OBSERVE}: {e}"));
        }
        Err(_) => {
            return Planned::new(
                Action::Blocked,
                format!("{ERR_RECONCILE_OBSERVE}: {ERR_CONTEXT_DEADLINE}"),
            );
        }
    };
    let view: &super::external::Managed<K> = view;
    // Step 12.
    if !observed.resource_exists && policies.should_only_observe() {
        return Planned::new(
            Action::Blocked,
            format!("{ERR_RECONCILE_OBSERVE}: {ERR_EXTERNAL_RESOURCE_NOT_EXIST}"),
        );
    }
    let check = |create: bool| async move {
        match tokio::time::timeout(timeout, client.check_write(view, create)).await {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err(ERR_CONTEXT_DEADLINE.to_string()),
        }
    };
    // Step 17.
    if !observed.resource_exists {
        if !policies.should_create() {
            return Planned::new(
                Action::Blocked,
                "the external resource does not exist and spec.managementPolicies do not allow Create",
            );
        }
        let create = serde_json::to_value(&view.create_parameters)
            .ok()
            .map(|p| masked(info, p));
        return match check(true).await {
            Ok(id) => Planned {
                external_name: id.unwrap_or_default(),
                create,
                ..Planned::new(Action::Create, "")
            },
            Err(m) => Planned::new(Action::Refused, format!("{ERR_RECONCILE_CREATE}: {m}")),
        };
    }
    let late: Vec<FieldChange> = observed
        .changes
        .iter()
        .filter(|c| !c.is_external())
        .cloned()
        .collect();
    // Steps 18 and 19: late initialisation writes the MR, not the external resource.
    let mut planned = if observed.resource_up_to_date {
        Planned {
            changes: late,
            ..Planned::new(
                if known {
                    Action::NoChange
                } else {
                    Action::Adopt
                },
                "",
            )
        }
    } else if !policies.should_update() {
        // Step 20.
        Planned {
            changes: observed.changes.clone(),
            notes: vec![
                "differs, but spec.managementPolicies do not allow Update: nothing is written"
                    .into(),
            ],
            ..Planned::new(Action::NoChange, "")
        }
    } else {
        // Step 21.
        match check(false).await {
            Ok(_) => Planned {
                changes: observed.changes.clone(),
                ..Planned::new(Action::Update, "")
            },
            Err(m) => Planned {
                changes: observed.changes.clone(),
                ..Planned::new(Action::Refused, format!("{ERR_RECONCILE_UPDATE}: {m}"))
            },
        }
    };
    if observed.resource_exists && policies.should_only_observe() {
        planned.notes.push("observe only".into());
    }
    if let Some(Value::String(id)) = serde_json::to_value(&view.at_provider)
        .ok()
        .as_ref()
        .and_then(|a| a.get("id"))
    {
        planned.external_name = id.clone();
    }
    planned
}
