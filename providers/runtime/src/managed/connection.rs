//! Connection-details Secrets (docs/managed-reconciler.md §10; crossplane-runtime
//! `APISecretPublisher`).
//!
//! The Secret named by `spec.writeConnectionSecretToRef` is created on the first non-deleting
//! reconcile (even with empty data), owned by the MR through a controller owner reference,
//! typed `connection.crossplane.io/v1alpha1`, and patched additively: keys are never removed.
//! Unpublishing does nothing: garbage collection removes the Secret with the MR.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};

use super::errors::{is_conflict, kube_message as api_message};
use super::external::ConnectionDetails;

/// The connection Secret type.
pub const SECRET_TYPE: &str = "connection.crossplane.io/v1alpha1";

/// Where to publish and who owns the Secret.
#[derive(Debug, Clone)]
pub struct SecretTarget {
    /// Secret name.
    pub name: String,
    /// Secret namespace.
    pub namespace: String,
    /// The controller owner reference (the MR).
    pub owner: OwnerReference,
}

/// A publishing failure. `conflict` marks a Kubernetes 409 (silent back-off).
#[derive(Debug, Clone)]
pub struct PublishError {
    /// `cannot create or update connection secret: ...`.
    pub message: String,
    /// A 409 Conflict.
    pub conflict: bool,
}

/// Publish `details` to the target Secret with client-go's default retry (5 attempts,
/// 10 ms apart).
pub async fn publish(
    client: &kube::Client,
    target: &SecretTarget,
    details: &ConnectionDetails,
) -> Result<(), PublishError> {
    let mut last: Option<(String, bool)> = None;
    for attempt in 0..5 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        match publish_once(client, target, details).await {
            Ok(()) => return Ok(()),
            Err(Attempt::Refused(m)) => {
                return Err(PublishError {
                    message: format!("cannot create or update connection secret: {m}"),
                    conflict: false,
                });
            }
            Err(Attempt::Api(m, conflict)) => last = Some((m, conflict)),
        }
    }
    let (m, conflict) = last.unwrap_or_default();
    Err(PublishError {
        message: format!("cannot create or update connection secret: {m}"),
        conflict,
    })
}

enum Attempt {
    Refused(String),
    Api(String, bool),
}

async fn publish_once(
    client: &kube::Client,
    target: &SecretTarget,
    details: &ConnectionDetails,
) -> Result<(), Attempt> {
    let api: Api<Secret> = Api::namespaced(client.clone(), &target.namespace);
    let data: BTreeMap<String, ByteString> = details
        .0
        .iter()
        .map(|(k, v)| (k.clone(), ByteString(v.clone())))
        .collect();
    let existing = api
        .get_opt(&target.name)
        .await
        .map_err(|e| Attempt::Api(api_message(&e), is_conflict(&e)))?;
    let Some(existing) = existing else {
        let s = Secret {
            metadata: ObjectMeta {
                name: Some(target.name.clone()),
                namespace: Some(target.namespace.clone()),
                owner_references: Some(vec![target.owner.clone()]),
                ..Default::default()
            },
            type_: Some(SECRET_TYPE.to_string()),
            data: Some(data),
            ..Default::default()
        };
        return api
            .create(&PostParams::default(), &s)
            .await
            .map(|_| ())
            .map_err(|e| Attempt::Api(api_message(&e), is_conflict(&e)));
    };
    let controller = existing
        .metadata
        .owner_references
        .as_ref()
        .and_then(|o| o.iter().find(|r| r.controller == Some(true)));
    match controller {
        None => {
            let t = existing.type_.clone().unwrap_or_default();
            if t != SECRET_TYPE {
                return Err(Attempt::Refused(format!(
                    "refusing to modify uncontrolled secret of type \"{t}\""
                )));
            }
        }
        Some(r) if r.uid != target.owner.uid => {
            return Err(Attempt::Refused(format!(
                "existing secret is not controlled by UID \"{}\"",
                r.uid
            )));
        }
        Some(_) => {}
    }
    let current = existing.data.clone().unwrap_or_default();
    // Additive: only a key that is missing or different needs a write.
    let changed = data.iter().any(|(k, v)| current.get(k) != Some(v));
    let adopt = controller.is_none();
    if !changed && !adopt {
        return Ok(());
    }
    let patch = serde_json::json!({
        "metadata": {"ownerReferences": [target.owner]},
        "type": SECRET_TYPE,
        "data": data,
    });
    let patch = if adopt {
        patch
    } else {
        serde_json::json!({"data": patch["data"]})
    };
    api.patch(&target.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(|e| Attempt::Api(api_message(&e), is_conflict(&e)))
}
