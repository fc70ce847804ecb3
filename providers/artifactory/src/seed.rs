//! A platform with many existing objects, for `export`'s tests and measurements: every
//! repository and webhook Kind's example and every exportable access Kind's example
//! (certificates, distribution public keys, environments, Vault configurations, key pairs,
//! users, groups, permission targets),
//! `copies` times (the five replication Kinds' once: a replication is its repository's), created through the adapter (so JFrog's server-side defaults apply as
//! for any object made in JFrog), some with upper-case and underscore keys, some remote
//! repositories with a password, some webhooks with handler secrets and every access
//! object's secrets (the values given by `secret`, which never appear in an export).

use jfrog_client::JfrogClient;
use provider_family::seed::{create, create_copy, variant};
use serde_json::{Value, json};

pub use provider_family::seed::{SeedError, Seeded};

use crate::{access, repository, webhook};

/// Create `copies` objects of every repository and webhook Kind and of every access Kind
/// `export` can list (copy 0 under the example's key, which the virtual repositories'
/// examples refer to). Odd copies have a key that is not a valid Kubernetes name; every
/// third remote repository a password, every second webhook a handler secret and every
/// access object each secret of its example, from `secret(key)`.
pub async fn seed(
    client: &JfrogClient,
    copies: usize,
    secret: &dyn Fn(&str) -> String,
) -> Result<Vec<Seeded>, SeedError> {
    let mut out = Vec::new();
    for copy in 0..copies {
        for k in repository::kinds() {
            let d = &k.resolved().decl;
            let base = repository::examples::example_key(d.kind, false);
            let mut params = repository::examples::example_params(d, false);
            let mut secrets = Vec::new();
            let with_secret = d.kind.starts_with("Remote") && copy % 3 == 0;
            if with_secret {
                params["username"] = json!("seed-user");
                params["passwordSecretRef"] = json!({"name": "s", "key": "password"});
                secrets.push((
                    "passwordSecretRef".to_string(),
                    secret(&variant(&base, copy)),
                ));
            }
            let key = create_copy(client, k, &base, copy, params, secrets).await?;
            out.push(Seeded {
                kind: d.kind,
                key,
                with_secret,
            });
        }
        for k in webhook::kinds() {
            let d = &k.resolved().decl;
            let base = webhook::examples::example_key(d.kind, false);
            let key = variant(&base, copy);
            let mut params = webhook::examples::example_params(d);
            let mut secrets = Vec::new();
            let with_secret = copy % 2 == 0;
            if with_secret {
                if d.kind.ends_with("CustomWebhook") {
                    params["handler"][0]["secretsSecretRef"] = json!({"name": "s"});
                    secrets.push(("handler.0.secretsSecretRef.token".to_string(), secret(&key)));
                } else {
                    params["handler"][0]["secretSecretRef"] = json!({"name": "s", "key": "k"});
                    secrets.push(("handler.0.secretSecretRef".to_string(), secret(&key)));
                }
            }
            create(client, k, &key, params, secrets).await?;
            out.push(Seeded {
                kind: d.kind,
                key,
                with_secret,
            });
        }
        for k in access::kinds() {
            let d = &k.resolved().decl;
            if k.resolved().rest.list().is_none() || !k.resolved().hooks.exportable(k.resolved()) {
                continue;
            }
            // A replication is its repository's: one copy of each (another would replace it).
            if d.group == "replication" && copy > 0 {
                continue;
            }
            let base = access::examples::example_name(d.kind, false);
            let key = variant(&base, copy);
            let params = access::examples::example_params(d);
            let secrets: Vec<(String, String)> = secret_refs(&params, "")
                .into_iter()
                .map(|(path, name)| {
                    let mut value = secret_value(&name, &secret(&format!("{key}-{path}")));
                    if name == "password" {
                        // JFrog's password policy: upper- and lower-case letters and a digit.
                        value.push_str("-Pw1");
                    }
                    (path, value)
                })
                .collect();
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

/// The paths of the `...SecretRef` members of `params` (`config.0.auth.0.roleIdSecretRef`),
/// each with the key of the example Secret it names.
fn secret_refs(params: &Value, at: &str) -> Vec<(String, String)> {
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match params {
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, v)| {
                if k.ends_with("SecretRef") {
                    let name = v["key"].as_str().unwrap_or_default().to_string();
                    vec![(join(k), name)]
                } else {
                    secret_refs(v, &join(k))
                }
            })
            .collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .flat_map(|(i, v)| secret_refs(v, &join(&i.to_string())))
            .collect(),
        _ => Vec::new(),
    }
}

/// The value of a seeded secret: `unique`, or for a PEM (a certificate with its private
/// key) the example's PEM with `unique` inside its private key.
fn secret_value(example_key: &str, unique: &str) -> String {
    match access::examples::secret_data()[example_key].as_str() {
        Some(pem) if pem.contains("PRIVATE KEY-----\n") => pem.replacen(
            "PRIVATE KEY-----\n",
            &format!("PRIVATE KEY-----\n{unique}\n"),
            1,
        ),
        _ => unique.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn secret_references_are_found_at_any_depth() {
        let params = json!({
            "passwordSecretRef": {"name": "s", "key": "p"},
            "config": [{"auth": [{"type": "AppRole", "roleIdSecretRef": {"name": "s"}}]}],
        });
        let mut refs = super::secret_refs(&params, "");
        refs.sort();
        assert_eq!(
            refs,
            vec![
                ("config.0.auth.0.roleIdSecretRef".to_string(), String::new()),
                ("passwordSecretRef".to_string(), "p".to_string())
            ]
        );
    }
}
