//! A platform with many existing objects, for `export`'s tests and measurements: every
//! repository and webhook Kind's example, `copies` times, created through the adapter (so
//! JFrog's server-side defaults apply as for any object made in JFrog), some with upper-case
//! and underscore keys, some remote repositories with a password and some webhooks with
//! handler secrets (the values given by `secret`, which never appear in an export).

use jfrog_client::JfrogClient;
use provider_family::FamilyClient;
use provider_runtime::managed::external::ExternalClient;
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::{repository, webhook};

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

/// A failed seed (which object, and JFrog's answer).
#[derive(Debug, thiserror::Error)]
#[error("cannot create {kind} {key}: {message}")]
pub struct SeedError {
    kind: &'static str,
    key: String,
    message: String,
}

/// Create `copies` objects of every repository and webhook Kind (copy 0 under the
/// example's key, which the virtual repositories' examples refer to). Odd copies have a key
/// that is not a valid Kubernetes name; every third remote repository a password and
/// every second webhook a handler secret, from `secret(key)`.
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
            let mut key = variant(&base, copy);
            let mut params = repository::examples::example_params(d, false);
            let mut secrets = Vec::new();
            let with_secret = d.kind.starts_with("Remote") && copy % 3 == 0;
            if with_secret {
                params["username"] = json!("seed-user");
                params["passwordSecretRef"] = json!({"name": "s", "key": "password"});
                secrets.push(("passwordSecretRef".to_string(), secret(&key)));
            }
            match create(client, k, &key, params.clone(), secrets.clone()).await {
                Ok(()) => {}
                Err(_) if copy % 2 == 1 => {
                    key = format!("{base}-{copy}");
                    create(client, k, &key, params, secrets).await?;
                }
                Err(e) => return Err(e),
            }
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
    }
    Ok(out)
}

/// The key of copy `n` of an example: the example's key, then `<key>-<n>`, odd copies in a
/// form that is not a Kubernetes name (`example_local_go_1`) where JFrog allows one
/// (Docker repository keys have neither `_` nor upper case: `<key>-<n>` then).
fn variant(base: &str, n: usize) -> String {
    match n {
        0 => base.to_string(),
        n if n % 2 == 1 => format!("{}_{n}", base.replace('-', "_")),
        n => format!("{base}-{n}"),
    }
}

async fn create(
    client: &JfrogClient,
    kind: &std::sync::Arc<provider_family::FamilyKind>,
    key: &str,
    params: Value,
    secrets: Vec<(String, String)>,
) -> Result<(), SeedError> {
    let fc = FamilyClient::new(client.clone(), kind.resolved().clone());
    let mut mr = provider_family::adapter::managed(key, key, params);
    mr.secrets = secrets
        .into_iter()
        .map(|(k, v)| (k, SecretString::from(v)))
        .collect();
    fc.create(&mut mr).await.map_err(|e| SeedError {
        kind: kind.resolved().decl.kind,
        key: key.to_string(),
        message: e.to_string(),
    })?;
    Ok(())
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
