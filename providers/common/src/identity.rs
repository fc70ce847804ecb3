//! `credentials.source: InjectedIdentity` on the JFrog side: the runtime's subject token (the
//! provider's service-account token) exchanged for a short-lived JFrog access token through
//! the platform's OIDC integration ([`jfrog_client::oidc`]).
//!
//! One [`OidcTokenSource`] per ProviderConfig and settings, kept for the life of the process
//! in its [`crate::Connections`]: every client built for that config (the Kinds' cached
//! clients, the connection check, the descriptor writer, a preview) shares its token, so a
//! token is exchanged once per lifetime whatever the number of reconciles, and a refusal is
//! seen by all of them at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jfrog_client::{OidcExchangeSettings, OidcTokenSource, SubjectTokenSource};
use provider_runtime::managed::ResolvedConfig;
use provider_runtime::providerconfig::identity::{InjectedIdentity, SubjectToken};
use secrecy::SecretString;

/// The runtime's subject source, as the JFrog client asks for it.
struct Subject(Arc<dyn SubjectToken>);

#[async_trait::async_trait]
impl SubjectTokenSource for Subject {
    async fn subject_token(&self) -> Result<SecretString, String> {
        self.0.token().await
    }

    fn describe(&self) -> String {
        self.0.describe()
    }
}

/// The token exchanges of a process, by ProviderConfig and identity.
#[derive(Clone, Default)]
pub struct Exchanges(Arc<Mutex<HashMap<String, Arc<OidcTokenSource>>>>);

/// The exchange of this config and identity, shared by the clients built with `exchanges`.
pub fn exchange_for(
    exchanges: &Exchanges,
    config: &ResolvedConfig,
    config_name: &str,
    identity: &InjectedIdentity,
) -> Arc<OidcTokenSource> {
    let key = [
        config.url.as_str(),
        config.config_kind.as_str(),
        config_name,
        config.config_uid.as_deref().unwrap_or(""),
        identity.provider_name.as_str(),
        identity.audience.as_str(),
        identity.project_key.as_deref().unwrap_or(""),
        &identity.subject.key(),
    ]
    .join("\0");
    let mut map = exchanges
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    map.entry(key)
        .or_insert_with(|| {
            Arc::new(OidcTokenSource::new(
                OidcExchangeSettings {
                    provider_name: identity.provider_name.clone(),
                    project_key: identity.project_key.clone(),
                },
                Arc::new(Subject(identity.subject.clone())),
                format!("{} \"{config_name}\"", config.config_kind),
            ))
        })
        .clone()
}

/// A JFrog token source proving its identity with a subject token file (export's
/// `--oidc-token-file`).
pub fn file_exchange(
    provider_name: &str,
    project_key: Option<String>,
    token_file: std::path::PathBuf,
) -> Arc<OidcTokenSource> {
    struct File(std::path::PathBuf);
    #[async_trait::async_trait]
    impl SubjectTokenSource for File {
        async fn subject_token(&self) -> Result<SecretString, String> {
            let text = tokio::fs::read_to_string(&self.0)
                .await
                .map_err(|e| format!("cannot read {}: {}", self.describe(), e.kind()))?;
            let text = text.trim();
            if text.is_empty() {
                return Err(format!("{} is empty", self.describe()));
            }
            Ok(SecretString::from(text.to_owned()))
        }
        fn describe(&self) -> String {
            format!("token file \"{}\"", self.0.display())
        }
    }
    Arc::new(OidcTokenSource::new(
        OidcExchangeSettings {
            provider_name: provider_name.to_owned(),
            project_key,
        },
        Arc::new(File(token_file)),
        "export",
    ))
}
