//! Applying the manifests of `--apply` (server-side apply, like `kubectl apply
//! --server-side`): Namespaces first, then other objects (Secrets, ProviderConfigs, ...), then
//! managed resources, concurrently. A manifest that fails (unknown Kind, rejected by the
//! schema) is recorded with the server's message, and the rest are still applied.

use std::collections::HashSet;

use futures::StreamExt;
use kube::api::{ApiResource, GroupVersionKind};
use kube::discovery::{Discovery, Scope};

use crate::kubeapi::{Manifest, apply, kube_message};

/// How many managed resources are applied at once.
const CONCURRENCY: usize = 16;

/// An object the API server accepted.
#[derive(Debug, Clone)]
pub struct Applied {
    pub resource: ApiResource,
    pub namespace: Option<String>,
    pub name: String,
    pub managed: bool,
}

/// A manifest that could not be applied.
#[derive(Debug, Clone)]
pub struct Failure {
    pub origin: String,
    pub what: String,
    pub message: String,
}

/// The outcome of applying manifests.
#[derive(Debug, Default)]
pub struct Outcome {
    pub applied: Vec<Applied>,
    pub failed: Vec<Failure>,
    /// Manifests of Kinds whose CRDs are known but not activated (see [`crate::activate`]):
    /// not applied, and not failures.
    pub inactive: Vec<Failure>,
}

/// Applies `manifests`; `managed` is the set of (group, Kind) of managed resources,
/// `inactive` that of the Kinds whose CRDs are not activated.
pub async fn apply_all(
    client: &kube::Client,
    manifests: Vec<Manifest>,
    managed: &HashSet<(String, String)>,
    inactive: &HashSet<(String, String)>,
) -> anyhow::Result<Outcome> {
    let discovery = Discovery::new(client.clone()).run().await?;
    let mut outcome = Outcome::default();
    let mut phases: [Vec<(Manifest, ApiResource, bool)>; 3] = Default::default();
    for m in manifests {
        let Some(types) = m.object.types.clone() else {
            continue;
        };
        let gvk = match GroupVersionKind::try_from(&types) {
            Ok(g) => g,
            Err(e) => {
                outcome.failed.push(Failure {
                    origin: m.origin(),
                    what: m.describe(),
                    message: e.to_string(),
                });
                continue;
            }
        };
        let Some((ar, caps)) = discovery.resolve_gvk(&gvk) else {
            if inactive.contains(&(gvk.group.clone(), gvk.kind.clone())) {
                outcome.inactive.push(Failure {
                    origin: m.origin(),
                    what: m.describe(),
                    message: format!("{} is not activated", gvk.kind),
                });
                continue;
            }
            let message = format!(
                "the server does not serve kind {} in {} (is its CRD installed?)",
                gvk.kind, types.api_version
            );
            outcome.failed.push(Failure {
                origin: m.origin(),
                what: m.describe(),
                message,
            });
            continue;
        };
        let namespaced = caps.scope == Scope::Namespaced;
        let phase = if gvk.group.is_empty() && gvk.kind == "Namespace" {
            0
        } else if managed.contains(&(gvk.group.clone(), gvk.kind.clone())) {
            2
        } else {
            1
        };
        phases[phase].push((m, ar, namespaced));
    }
    for (i, phase) in phases.into_iter().enumerate() {
        let is_managed = i == 2;
        let results: Vec<Result<Applied, Failure>> = futures::stream::iter(phase)
            .map(|(m, ar, namespaced)| async move {
                match apply(client, &ar, namespaced, &m.object).await {
                    Ok(obj) => Ok(Applied {
                        resource: ar,
                        namespace: obj.metadata.namespace.clone(),
                        name: obj.metadata.name.clone().unwrap_or_default(),
                        managed: is_managed,
                    }),
                    Err(e) => Err(Failure {
                        origin: m.origin(),
                        what: m.describe(),
                        message: kube_message(&e),
                    }),
                }
            })
            .buffer_unordered(if is_managed { CONCURRENCY } else { 1 })
            .collect()
            .await;
        for r in results {
            match r {
                Ok(a) => outcome.applied.push(a),
                Err(f) => outcome.failed.push(f),
            }
        }
    }
    Ok(outcome)
}
