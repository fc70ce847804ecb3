//! An Xray with many existing objects, for `export`'s tests and measurements: every Xray
//! Kind `export` can list (policies, curation policies and conditions, ignore rules,
//! watches, webhooks),
//! `copies` times, from its example, created through the adapter (so Xray's server-side
//! defaults apply as for any object made in Xray), odd copies with keys that are not
//! Kubernetes names and every webhook with a password (from `secret`, never in an export).
//! The watches watch provider-artifactory's example repository
//! ([`crate::examples::REPOSITORY`]), which must exist.

use jfrog_client::JfrogClient;
use provider_family::decl::Id;
use provider_family::seed::{create_copy, variant};
use serde_json::{Value, json};

pub use provider_family::seed::{SeedError, Seeded};

use crate::examples;

/// Create `copies` objects of every listable, exportable Kind, in the examples' order (policies before
/// the watches that apply them). Server-assigned objects get a name of their own per copy.
pub async fn seed(
    client: &JfrogClient,
    copies: usize,
    secret: &dyn Fn(&str) -> String,
) -> Result<Vec<Seeded>, SeedError> {
    let kinds = crate::family_kinds();
    let mut out = Vec::new();
    for copy in 0..copies {
        for d in examples::declarations() {
            if d.rest.list().is_none() {
                continue;
            }
            let k = kinds
                .iter()
                .find(|k| k.resolved().decl.kind == d.kind)
                .ok_or_else(|| SeedError {
                    kind: d.kind,
                    key: String::new(),
                    message: "the declaration is not among the provider's Kinds".to_string(),
                })?;
            // Listed but not exported (reports): nothing to adopt.
            if !d.hooks.exportable(k.resolved()) {
                continue;
            }
            let base = examples::example_name(d.kind, false);
            let mut params = examples::example_params(d.kind);
            if d.id == Id::ServerAssigned
                && let Some(Value::String(name)) = params.get("name")
            {
                params["name"] = json!(variant(name, copy).replace('_', "-"));
            }
            let mut secrets = Vec::new();
            if d.fields.iter().any(|f| f.crd == "passwordSecretRef") {
                params["passwordSecretRef"] = json!({"name": "s", "key": "password"});
                secrets.push((
                    "passwordSecretRef".to_string(),
                    secret(&variant(&base, copy)),
                ));
            }
            let with_secret = !secrets.is_empty();
            let key = create_copy(client, k, &base, copy, params, secrets).await?;
            out.push(Seeded {
                kind: d.kind,
                key,
                with_secret,
            });
        }
    }
    Ok(out)
}
