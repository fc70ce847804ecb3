//! `credentials.source: InjectedIdentity`: the provider's own Kubernetes identity, as a signed,
//! audience-bound, expiring service-account token (the *subject token* an OIDC token exchange
//! takes).
//!
//! Two ways to get one:
//! - `injectedIdentity.tokenPath`: the file a projected service-account-token volume mounts
//!   (the kubelet renews it; it is read again for each exchange);
//! - otherwise the TokenRequest API (`POST .../serviceaccounts/<name>/token`) for the
//!   provider's own ServiceAccount, with the configured audience. Its namespace and name come
//!   from `--service-account-name` / `SERVICE_ACCOUNT_NAME` and `POD_NAMESPACE`, else from
//!   the API server (`SelfSubjectReview` of this process's credentials). The ServiceAccount
//!   needs `create` on its own `serviceaccounts/token` (Crossplane grants a provider no such
//!   right: `examples/install/` shows the Role). A token is requested for
//!   [`REQUESTED_LIFETIME`] and reused until [`REUSE_FRACTION`] of it has passed.
//!
//! The runtime knows nothing of JFrog: it hands the provider an [`InjectedIdentity`] (the
//! spec's settings and a [`SubjectToken`] source, one per config and identity, kept for the
//! life of the process so that what is cached behind it survives reconciles) and the provider
//! turns it into its platform's credential. No token ever reaches a log, an error or `Debug`.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::authentication::v1::{SelfSubjectReview, TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::Api;
use kube::api::PostParams;
use secrecy::SecretString;
use tokio::time::Instant;

/// Audience of the requested service-account tokens when `injectedIdentity.audience` is not
/// set; the platform's OIDC integration must expect it (its `audience`).
pub const DEFAULT_AUDIENCE: &str = "jfrog-generic";
/// Lifetime asked of the TokenRequest API (the API's minimum is 10 minutes).
pub const REQUESTED_LIFETIME: Duration = Duration::from_secs(3600);
/// Share of a requested token's lifetime after which a new one is requested.
pub const REUSE_FRACTION: f64 = 0.8;

/// A source of the provider's subject token.
#[async_trait]
pub trait SubjectToken: Send + Sync {
    /// A currently valid token; the error says where it was looked for, never a token.
    async fn token(&self) -> Result<SecretString, String>;
    /// `service account "ns/name"` or `file "/path"`, for messages (it may become more
    /// precise once the ServiceAccount is known).
    fn describe(&self) -> String;
    /// What identifies this source for caches (stable for its life, no secret).
    fn key(&self) -> String;
}

/// The spec of an InjectedIdentity config, resolved.
#[derive(Clone)]
pub struct InjectedIdentity {
    /// The platform's OIDC integration (`injectedIdentity.providerName`).
    pub provider_name: String,
    /// The audience of the subject token.
    pub audience: String,
    /// The project the token is requested for, if any.
    pub project_key: Option<String>,
    /// Where the subject token comes from (the same instance for every resolve of the same
    /// config and settings).
    pub subject: Arc<dyn SubjectToken>,
}

impl fmt::Debug for InjectedIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InjectedIdentity")
            .field("provider_name", &self.provider_name)
            .field("audience", &self.audience)
            .field("project_key", &self.project_key)
            .field("subject", &self.subject.describe())
            .finish()
    }
}

/// A projected-volume token file.
struct FileSubject {
    path: PathBuf,
}

#[async_trait]
impl SubjectToken for FileSubject {
    async fn token(&self) -> Result<SecretString, String> {
        let text = tokio::fs::read_to_string(&self.path)
            .await
            .map_err(|e| format!("cannot read {}: {}", self.describe(), e.kind()))?;
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("{} is empty", self.describe()));
        }
        Ok(SecretString::from(text.to_owned()))
    }

    fn describe(&self) -> String {
        format!("token file \"{}\"", self.path.display())
    }

    fn key(&self) -> String {
        format!("file\0{}", self.path.display())
    }
}

/// The provider's ServiceAccount, once known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceAccountRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// Tokens of the provider's own ServiceAccount from the TokenRequest API.
struct TokenRequestSubject {
    context: Arc<IdentityContext>,
    audience: String,
    cached: tokio::sync::Mutex<Option<(SecretString, Instant)>>,
}

#[async_trait]
impl SubjectToken for TokenRequestSubject {
    async fn token(&self) -> Result<SecretString, String> {
        let mut cached = self.cached.lock().await;
        if let Some((t, reuse_until)) = cached.as_ref()
            && Instant::now() < *reuse_until
        {
            return Ok(t.clone());
        }
        let sa = self.context.service_account().await?;
        let api: Api<ServiceAccount> = Api::namespaced(self.context.client.clone(), &sa.namespace);
        let request = TokenRequest {
            spec: TokenRequestSpec {
                audiences: vec![self.audience.clone()],
                expiration_seconds: Some(REQUESTED_LIFETIME.as_secs() as i64),
                bound_object_ref: None,
            },
            ..TokenRequest::default()
        };
        let answer = api
            .create_token_request(&sa.name, &PostParams::default(), &request)
            .await
            .map_err(|e| {
                format!(
                    "TokenRequest for service account \"{}/{}\" failed: {}",
                    sa.namespace,
                    sa.name,
                    super::kube_message(&e)
                )
            })?;
        let status = answer
            .status
            .ok_or_else(|| "the TokenRequest answer has no status".to_owned())?;
        let remaining = status.expiration_timestamp.0.as_second() - chrono::Utc::now().timestamp();
        let lifetime = Duration::from_secs(u64::try_from(remaining).unwrap_or(0));
        let token = SecretString::from(status.token);
        *cached = Some((
            token.clone(),
            Instant::now() + lifetime.mul_f64(REUSE_FRACTION),
        ));
        Ok(token)
    }

    fn describe(&self) -> String {
        match self.context.known_service_account() {
            Some(sa) => format!(
                "service account \"{}/{}\" (audience \"{}\")",
                sa.namespace, sa.name, self.audience
            ),
            None => format!(
                "the provider's service account (audience \"{}\")",
                self.audience
            ),
        }
    }

    fn key(&self) -> String {
        format!("token-request\0{}", self.audience)
    }
}

/// What InjectedIdentity needs from the process: the Kubernetes client, the provider's
/// ServiceAccount, and the subject sources made so far (kept per config and settings).
pub struct IdentityContext {
    client: kube::Client,
    explicit: Option<ServiceAccountRef>,
    discovered: Mutex<Option<ServiceAccountRef>>,
    subjects: Mutex<HashMap<String, Arc<dyn SubjectToken>>>,
}

impl IdentityContext {
    /// With the provider's ServiceAccount when the flags name it (else it is asked of the
    /// API server when first needed).
    pub fn new(client: kube::Client, service_account: Option<ServiceAccountRef>) -> Self {
        IdentityContext {
            client,
            explicit: service_account,
            discovered: Mutex::new(None),
            subjects: Mutex::new(HashMap::new()),
        }
    }

    fn known_service_account(&self) -> Option<ServiceAccountRef> {
        self.explicit.clone().or_else(|| {
            self.discovered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        })
    }

    /// The provider's ServiceAccount: from the flags, else `SelfSubjectReview`.
    pub async fn service_account(&self) -> Result<ServiceAccountRef, String> {
        if let Some(sa) = self.known_service_account() {
            return Ok(sa);
        }
        let api: Api<SelfSubjectReview> = Api::all(self.client.clone());
        let review = api
            .create(&PostParams::default(), &SelfSubjectReview::default())
            .await
            .map_err(|e| {
                format!(
                    "cannot tell the provider's service account (set --service-account-name): SelfSubjectReview failed: {}",
                    super::kube_message(&e)
                )
            })?;
        let user = review
            .status
            .and_then(|s| s.user_info)
            .and_then(|u| u.username)
            .unwrap_or_default();
        let sa = parse_service_account_user(&user).ok_or_else(|| {
            format!(
                "the provider runs as \"{user}\", not as a service account: set --service-account-name, or injectedIdentity.tokenPath"
            )
        })?;
        *self
            .discovered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(sa.clone());
        Ok(sa)
    }

    /// The subject source for these settings (one per `tokenPath`, else per audience).
    pub(crate) fn subject(
        self: &Arc<Self>,
        audience: &str,
        token_path: Option<&str>,
    ) -> Arc<dyn SubjectToken> {
        let key = match token_path {
            Some(p) => format!("file\0{p}"),
            None => format!("sa\0{audience}"),
        };
        let mut map = self
            .subjects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.entry(key)
            .or_insert_with(|| match token_path {
                Some(p) => Arc::new(FileSubject { path: p.into() }) as Arc<dyn SubjectToken>,
                None => Arc::new(TokenRequestSubject {
                    context: self.clone(),
                    audience: audience.to_owned(),
                    cached: tokio::sync::Mutex::new(None),
                }),
            })
            .clone()
    }
}

/// `system:serviceaccount:<ns>:<name>` -> the ServiceAccount.
pub fn parse_service_account_user(user: &str) -> Option<ServiceAccountRef> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty()).then(|| ServiceAccountRef {
        namespace: ns.to_owned(),
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_account_users() {
        assert_eq!(
            parse_service_account_user("system:serviceaccount:crossplane-system:provider-a"),
            Some(ServiceAccountRef {
                namespace: "crossplane-system".into(),
                name: "provider-a".into()
            })
        );
        assert_eq!(parse_service_account_user("admin"), None);
        assert_eq!(parse_service_account_user("system:serviceaccount:x"), None);
    }

    #[tokio::test]
    async fn file_subject_reads_and_names_the_file() {
        let dir = std::env::temp_dir().join(format!("identity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "eyJ.SECRET.sig\n").unwrap();
        let s = FileSubject { path: path.clone() };
        use secrecy::ExposeSecret;
        assert_eq!(s.token().await.unwrap().expose_secret(), "eyJ.SECRET.sig");
        std::fs::write(&path, "").unwrap();
        let e = s.token().await.unwrap_err();
        assert!(e.contains("is empty") && e.contains("token file"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
