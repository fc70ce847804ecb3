//! Seeding a platform with existing objects (for `export`'s tests and measurements): an
//! object created through the adapter (so JFrog's server-side defaults apply as for any
//! object made in JFrog), and the key of the n-th copy of an example.

use std::sync::Arc;

use jfrog_client::JfrogClient;
use provider_runtime::managed::external::ExternalClient;
use secrecy::SecretString;
use serde_json::Value;

use crate::{FamilyClient, FamilyKind};

/// One seeded object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seeded {
    /// The Kind.
    pub kind: &'static str,
    /// The JFrog identifier.
    pub key: String,
    /// Whether it was given a secret.
    pub with_secret: bool,
}

/// A failed seed (which object, and JFrog's answer; never a secret).
#[derive(Debug, thiserror::Error)]
#[error("cannot create {kind} {key}: {message}")]
pub struct SeedError {
    /// The Kind.
    pub kind: &'static str,
    /// The identifier asked for (empty for server-assigned ones).
    pub key: String,
    /// Why.
    pub message: String,
}

/// Create one object of `kind` with `params` and `secrets` (path -> value, as
/// [`crate::wire::Secrets`]); `key` is the identifier (ignored by server-assigned Kinds).
/// Returns the identifier of the object made.
pub async fn create(
    client: &JfrogClient,
    kind: &Arc<FamilyKind>,
    key: &str,
    params: Value,
    secrets: Vec<(String, String)>,
) -> Result<String, SeedError> {
    let fc = FamilyClient::new(client.clone(), kind.resolved().clone());
    let name = if key.is_empty() { "seed" } else { key };
    let mut mr = crate::adapter::managed(name, key, params);
    mr.secrets = secrets
        .into_iter()
        .map(|(k, v)| (k, SecretString::from(v)))
        .collect();
    fc.create(&mut mr).await.map_err(|e| SeedError {
        kind: kind.resolved().decl.kind,
        key: key.to_string(),
        message: e.to_string(),
    })?;
    Ok(mr.external_name)
}

/// Create copy `copy` of an example whose key is `base` (see [`variant`]); an odd copy
/// JFrog refuses under a key that is not a Kubernetes name (Docker repositories, Access
/// environments) is created as `<base>-<copy>`. Returns the identifier of the object made.
pub async fn create_copy(
    client: &JfrogClient,
    kind: &Arc<FamilyKind>,
    base: &str,
    copy: usize,
    params: Value,
    secrets: Vec<(String, String)>,
) -> Result<String, SeedError> {
    let key = variant(base, copy);
    match create(client, kind, &key, params.clone(), secrets.clone()).await {
        Err(_) if copy % 2 == 1 => {
            create(client, kind, &format!("{base}-{copy}"), params, secrets).await
        }
        made => made,
    }
}

/// What adopting each exported object would find, as the reconciler hands its manifest to
/// the adapter (`forProvider`, `initProvider` as init-only, the external name): one line per
/// object that is missing, not up to date or late-initialised (empty: adoption changes
/// nothing).
pub async fn observe_exported(
    kinds: &[Arc<FamilyKind>],
    client: &JfrogClient,
    objects: &[crate::export::Object],
) -> Vec<String> {
    let mut problems = Vec::new();
    for o in objects {
        let Some(k) = kinds.iter().find(|k| k.resolved().decl.kind == o.kind) else {
            problems.push(format!("{} {}: not declared", o.kind, o.key));
            continue;
        };
        let spec = &o.manifest["spec"];
        let external = o.manifest["metadata"]["annotations"][crate::export::EXTERNAL_NAME]
            .as_str()
            .unwrap_or(&o.name);
        let mut mr = crate::adapter::managed(&o.name, external, spec["forProvider"].clone());
        if let Some(Value::Object(init)) = spec.get("initProvider") {
            mr.init_only_fields = init.keys().cloned().collect();
            mr.init_provider = spec["initProvider"].clone();
        }
        let fc = FamilyClient::new(client.clone(), k.resolved().clone());
        match fc.observe(&mut mr).await {
            Err(e) => problems.push(format!("{} {}: {e}", o.kind, o.key)),
            Ok(obs) if !obs.resource_exists => {
                problems.push(format!("{} {}: not found", o.kind, o.key))
            }
            Ok(obs) if !obs.resource_up_to_date => {
                problems.push(format!("{} {}: {}", o.kind, o.key, obs.diff))
            }
            Ok(obs) if obs.resource_late_initialized => {
                problems.push(format!("{} {}: late-initialised", o.kind, o.key))
            }
            Ok(_) => {}
        }
    }
    problems
}

/// The key of copy `n` of an example: the example's key, then `<key>-<n>`, odd copies in a
/// form that is not a Kubernetes name (`example_local_go_1`).
pub fn variant(base: &str, n: usize) -> String {
    match n {
        0 => base.to_string(),
        n if n % 2 == 1 => format!("{}_{n}", base.replace('-', "_")),
        n => format!("{base}-{n}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn variants_are_unique_and_some_are_not_names() {
        let keys: Vec<String> = (0..11)
            .map(|n| super::variant("example-local-go", n))
            .collect();
        assert_eq!(keys[0], "example-local-go");
        assert_eq!(keys[1], "example_local_go_1");
        assert_eq!(keys[2], "example-local-go-2");
        let set: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(set.len(), keys.len());
    }
}
