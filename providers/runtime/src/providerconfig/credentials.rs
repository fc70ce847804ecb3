//! Credentials resolution: from a managed resource's `providerConfigRef` to a
//! [`ResolvedConfig`] (URL, credentials, CA bundle).
//!
//! Rules (docs/managed-reconciler.md §9.2, §9.3):
//! - a modern MR reads a `ClusterProviderConfig` (cluster-scoped) or a `ProviderConfig` in the
//!   MR's own namespace; any other kind is `unsupported provider config kind: <kind>`;
//! - a legacy MR reads the legacy cluster-scoped `ProviderConfig`;
//! - for a namespaced `ProviderConfig`, every Secret is read from the MR's namespace, whatever
//!   `secretRef.namespace` says;
//! - Deviation Q8 (allowed): a Secret key that is absent or empty is an error naming the Secret
//!   and key (upstream silently returns empty credentials).
//!
//! No error built here contains a credential value: errors name Secrets, keys, variables and
//! files, never their contents, and content parse errors are replaced by fixed text.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::DynamicObject;
use secrecy::SecretString;

use super::identity::{self, IdentityContext, InjectedIdentity};
use super::secrets::{Cached, SecretWatches};
use super::types::{
    ConfigApi, ConfigKind, CredentialsSource, ProviderConfigSpec, SecretKeySelector, config_spec,
};
use super::{Credentials, ResolveError, ResolvedConfig};

/// Which config object an MR's reference designates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigTarget {
    /// The config Kind.
    pub kind: ConfigKind,
    /// Its name.
    pub name: String,
    /// Its namespace (namespaced ProviderConfig only).
    pub namespace: Option<String>,
}

/// Where the Secrets of a config are read: the MR's namespace for a namespaced
/// ProviderConfig, the selector's namespace otherwise.
fn secret_namespace(
    target: &ConfigTarget,
    sel: &SecretKeySelector,
) -> Result<String, ResolveError> {
    match (&target.namespace, &sel.namespace) {
        (Some(ns), _) => Ok(ns.clone()),
        (None, Some(ns)) if !ns.is_empty() => Ok(ns.clone()),
        _ => Err(ResolveError::SecretNamespaceRequired {
            kind: target.kind.kind().to_string(),
            name: target.name.clone(),
            secret: sel.name.clone(),
        }),
    }
}

/// Reads one key of a Secret; absent or empty keys are errors (Q8).
/// The Secret comes from `watched` when its watch knows it ([`SecretWatches`]), else from the
/// API server.
async fn read_secret_key(
    client: &kube::Client,
    watched: Option<&SecretWatches>,
    namespace: &str,
    sel: &SecretKeySelector,
) -> Result<Vec<u8>, ResolveError> {
    let secret = match watched.map(|w| w.get(namespace, &sel.name)) {
        Some(Cached::Present(s)) => s,
        Some(Cached::Absent) => {
            return Err(ResolveError::GetSecret(format!(
                "secrets \"{}\" not found",
                sel.name
            )));
        }
        Some(Cached::Unknown) | None => {
            let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
            Arc::new(
                api.get(&sel.name)
                    .await
                    .map_err(|e| ResolveError::GetSecret(super::kube_message(&e)))?,
            )
        }
    };
    let value = secret
        .data
        .as_ref()
        .and_then(|d| d.get(&sel.key))
        .map(|b| b.0.clone())
        .or_else(|| {
            secret
                .string_data
                .as_ref()
                .and_then(|d| d.get(&sel.key))
                .map(|s| s.clone().into_bytes())
        })
        .unwrap_or_default();
    if value.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ResolveError::MissingKey {
            namespace: namespace.to_string(),
            name: sel.name.clone(),
            key: sel.key.clone(),
        });
    }
    Ok(value)
}

/// What the main credentials blob says.
#[derive(Default)]
struct Blob {
    url: Option<String>,
    token: Option<SecretString>,
    username: Option<String>,
    password: Option<SecretString>,
}

/// Interprets the extracted bytes: a JSON object with `url` / `access_token` / `username` /
/// `password` (Upjet's shape), or else a bare access token.
fn parse_blob(bytes: &[u8], origin: &str) -> Result<Blob, ResolveError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ResolveError::BadCredentials {
        origin: origin.to_string(),
        reason: "is not UTF-8 text".to_string(),
    })?;
    let text = text.trim();
    if !text.starts_with('{') {
        return Ok(Blob {
            token: Some(SecretString::from(text.to_string())),
            ..Blob::default()
        });
    }
    // serde's message could quote the content: replace it with a fixed text.
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|_| ResolveError::BadCredentials {
            origin: origin.to_string(),
            reason: "starts with '{' but is not a valid JSON object".to_string(),
        })?;
    let get = |k: &str| -> Option<String> {
        map.get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .filter(|s| !s.is_empty())
    };
    let blob = Blob {
        url: get("url"),
        token: get("access_token")
            .or_else(|| get("accessToken"))
            .map(SecretString::from),
        username: get("username"),
        password: get("password").map(SecretString::from),
    };
    if blob.token.is_none() && (blob.username.is_none() || blob.password.is_none()) {
        return Err(ResolveError::BadCredentials {
            origin: origin.to_string(),
            reason: "has neither \"access_token\" nor both \"username\" and \"password\""
                .to_string(),
        });
    }
    Ok(blob)
}

/// Validates the JFrog URL; the message never echoes a URL that carries user info.
pub fn parse_url(kind: &str, name: &str, raw: &str) -> Result<url::Url, ResolveError> {
    let bad = |reason: String| ResolveError::BadUrl {
        kind: kind.to_string(),
        name: name.to_string(),
        reason,
    };
    let url = url::Url::parse(raw.trim()).map_err(|e| bad(format!("cannot parse url: {e}")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("the url must not contain credentials".to_string()));
    }
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(bad(format!(
            "unsupported scheme {:?} in {url}: use http or https",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad(format!("no host in {url}")));
    }
    Ok(url)
}

/// Resolves a config object (already read) into URL, credentials and CA bundle (an
/// InjectedIdentity config with a context of its own: use [`resolve_config_object_with`] to
/// keep its subject tokens across calls).
pub async fn resolve_config_object(
    client: &kube::Client,
    target: &ConfigTarget,
    obj: &DynamicObject,
) -> Result<ResolvedConfig, ResolveError> {
    let identity = std::sync::Arc::new(IdentityContext::new(client.clone(), None));
    resolve_config_object_with(client, &identity, target, obj).await
}

/// [`resolve_config_object`], InjectedIdentity's subject tokens coming from `identity`.
pub async fn resolve_config_object_with(
    client: &kube::Client,
    identity: &std::sync::Arc<IdentityContext>,
    target: &ConfigTarget,
    obj: &DynamicObject,
) -> Result<ResolvedConfig, ResolveError> {
    resolve_config_object_watched(client, identity, None, target, obj).await
}

/// [`resolve_config_object_with`], the Secrets read from `watched` when it knows them.
pub async fn resolve_config_object_watched(
    client: &kube::Client,
    identity: &std::sync::Arc<IdentityContext>,
    watched: Option<&SecretWatches>,
    target: &ConfigTarget,
    obj: &DynamicObject,
) -> Result<ResolvedConfig, ResolveError> {
    let kind = target.kind.kind();
    let spec: ProviderConfigSpec = config_spec(obj).map_err(|e| ResolveError::InvalidSpec {
        kind: kind.to_string(),
        name: target.name.clone(),
        reason: e.to_string(),
    })?;
    let creds = &spec.credentials;

    // Where the credentials come from, for messages (never the value).
    let mut from: Option<String> = None;
    let mut injected: Option<InjectedIdentity> = None;
    let blob = match creds.source {
        CredentialsSource::None => None,
        CredentialsSource::Secret => match (&creds.secret_ref, &creds.username_secret_ref) {
            (Some(sel), _) => {
                let ns = secret_namespace(target, sel)?;
                let bytes = read_secret_key(client, watched, &ns, sel).await?;
                let origin = format!("secret \"{ns}/{}\" key \"{}\"", sel.name, sel.key);
                let blob = parse_blob(&bytes, &origin)?;
                from = Some(origin);
                Some(blob)
            }
            (None, Some(user_sel)) => {
                let Some(pass_sel) = &creds.password_secret_ref else {
                    return Err(ResolveError::BadCredentials {
                        origin: format!("{kind} \"{}\"", target.name),
                        reason: "sets usernameSecretRef without passwordSecretRef".to_string(),
                    });
                };
                let uns = secret_namespace(target, user_sel)?;
                let pns = secret_namespace(target, pass_sel)?;
                from = Some(format!(
                    "secrets \"{uns}/{}\" and \"{pns}/{}\"",
                    user_sel.name, pass_sel.name
                ));
                let user = read_secret_key(client, watched, &uns, user_sel).await?;
                let pass = read_secret_key(client, watched, &pns, pass_sel).await?;
                let username = String::from_utf8(user)
                    .map_err(|_| ResolveError::BadCredentials {
                        origin: format!(
                            "secret \"{uns}/{}\" key \"{}\"",
                            user_sel.name, user_sel.key
                        ),
                        reason: "is not UTF-8 text".to_string(),
                    })?
                    .trim()
                    .to_string();
                let password =
                    String::from_utf8(pass).map_err(|_| ResolveError::BadCredentials {
                        origin: format!(
                            "secret \"{pns}/{}\" key \"{}\"",
                            pass_sel.name, pass_sel.key
                        ),
                        reason: "is not UTF-8 text".to_string(),
                    })?;
                Some(Blob {
                    username: Some(username),
                    password: Some(SecretString::from(
                        password.trim_end_matches(['\r', '\n']).to_string(),
                    )),
                    ..Blob::default()
                })
            }
            (None, None) => return Err(ResolveError::NoSecretSelector),
        },
        CredentialsSource::Environment => {
            let Some(env) = &creds.env else {
                return Err(ResolveError::NoEnvSelector);
            };
            let value = std::env::var(&env.name).unwrap_or_default();
            if value.trim().is_empty() {
                return Err(ResolveError::EnvEmpty(env.name.clone()));
            }
            let origin = format!("environment variable \"{}\"", env.name);
            let blob = parse_blob(value.as_bytes(), &origin)?;
            from = Some(origin);
            Some(blob)
        }
        CredentialsSource::Filesystem => {
            let Some(fs) = &creds.fs else {
                return Err(ResolveError::NoFsSelector);
            };
            let bytes = tokio::fs::read(&fs.path)
                .await
                .map_err(|e| ResolveError::ReadFile {
                    path: fs.path.clone(),
                    reason: e.kind().to_string(),
                })?;
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Err(ResolveError::FileEmpty(fs.path.clone()));
            }
            let origin = format!("file \"{}\"", fs.path);
            let blob = parse_blob(&bytes, &origin)?;
            from = Some(origin);
            Some(blob)
        }
        CredentialsSource::InjectedIdentity => {
            let Some(ii) = creds
                .injected_identity
                .as_ref()
                .filter(|i| !i.provider_name.trim().is_empty())
            else {
                return Err(ResolveError::NoInjectedIdentity {
                    kind: kind.to_string(),
                    name: target.name.clone(),
                });
            };
            let audience = ii
                .audience
                .clone()
                .filter(|a| !a.trim().is_empty())
                .unwrap_or_else(|| identity::DEFAULT_AUDIENCE.to_string());
            let token_path = ii.token_path.as_deref().filter(|p| !p.trim().is_empty());
            let subject = identity.subject(&audience, token_path);
            from = Some(format!(
                "injected identity: {}, OIDC integration \"{}\"",
                subject.describe(),
                ii.provider_name
            ));
            injected = Some(InjectedIdentity {
                provider_name: ii.provider_name.trim().to_string(),
                audience,
                project_key: ii.project_key.clone().filter(|p| !p.trim().is_empty()),
                subject,
            });
            None
        }
    };

    let raw_url = spec
        .url
        .clone()
        .filter(|u| !u.trim().is_empty())
        .or_else(|| blob.as_ref().and_then(|b| b.url.clone()))
        .ok_or_else(|| ResolveError::NoUrl {
            kind: kind.to_string(),
            name: target.name.clone(),
        })?;
    let url = parse_url(kind, &target.name, &raw_url)?.to_string();

    let credentials = match blob {
        None => match injected {
            Some(i) => Credentials::Injected(i),
            None => Credentials::None,
        },
        Some(Blob { token: Some(t), .. }) => Credentials::Token(t),
        Some(Blob {
            username: Some(u),
            password: Some(p),
            ..
        }) => Credentials::Basic {
            username: u,
            password: p,
        },
        Some(_) => Credentials::None,
    };

    let ca_bundle = match &spec.ca_bundle_secret_ref {
        Some(sel) => {
            let ns = secret_namespace(target, sel)?;
            let pem = read_secret_key(client, watched, &ns, sel).await?;
            Some(
                String::from_utf8(pem).map_err(|_| ResolveError::BadCredentials {
                    origin: format!("secret \"{ns}/{}\" key \"{}\"", sel.name, sel.key),
                    reason: "is not a PEM text".to_string(),
                })?,
            )
        }
        None => None,
    };

    Ok(ResolvedConfig {
        config_kind: kind.to_string(),
        config_name: target.name.clone(),
        config_namespace: target.namespace.clone(),
        config_uid: obj.metadata.uid.clone(),
        url,
        credentials,
        credentials_from: from,
        ca_bundle,
    })
}

/// Reads the config object a target designates.
pub async fn get_config(
    client: &kube::Client,
    api: &ConfigApi,
    target: &ConfigTarget,
) -> Result<DynamicObject, ResolveError> {
    let ar = api.api_resource(target.kind);
    let dyn_api: Api<DynamicObject> = match &target.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    dyn_api
        .get(&target.name)
        .await
        .map_err(|e| ResolveError::GetConfig {
            kind: target.kind.kind().to_string(),
            reason: super::kube_message(&e),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn blob_json_and_bare_token() {
        let b = parse_blob(br#"{"url":"https://x.jfrog.io","access_token":"tok"}"#, "o").unwrap();
        assert_eq!(b.url.as_deref(), Some("https://x.jfrog.io"));
        assert_eq!(b.token.unwrap().expose_secret(), "tok");
        let b = parse_blob(b"  tok123\n", "o").unwrap();
        assert_eq!(b.token.unwrap().expose_secret(), "tok123");
        let b = parse_blob(br#"{"username":"u","password":"p"}"#, "o").unwrap();
        assert_eq!(b.username.as_deref(), Some("u"));
    }

    #[test]
    fn blob_errors_do_not_leak_content() {
        let err = parse_blob(
            br#"{"access_token": "supersecret""#,
            "secret \"a/b\" key \"c\"",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(!err.contains("supersecret"), "{err}");
        assert!(err.contains("secret \"a/b\" key \"c\""), "{err}");
        let err = parse_blob(br#"{"password": "supersecret"}"#, "o")
            .err()
            .unwrap()
            .to_string();
        assert!(!err.contains("supersecret"), "{err}");
    }

    #[test]
    fn url_validation() {
        assert!(parse_url("ClusterProviderConfig", "d", "https://acme.jfrog.io").is_ok());
        let e = parse_url("ClusterProviderConfig", "d", "ftp://acme")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ClusterProviderConfig \"d\""), "{e}");
        let e = parse_url("P", "d", "https://u:hunter2@acme.io")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("hunter2"), "{e}");
        assert!(parse_url("P", "d", "not a url").is_err());
    }
}
