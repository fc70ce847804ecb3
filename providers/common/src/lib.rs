//! What the four provider binaries share on top of the runtime: the JFrog connection (a
//! [`JfrogClient`] per resolved ProviderConfig, and the [`PingVerifier`] that turns an
//! unreachable URL or rejected credentials into a clear `Synced=False` message) and the
//! process entry point ([`Provider::run_main`]).
//!
//! It is the one place where the JFrog-agnostic runtime meets the JFrog client, so each
//! provider crate only declares its identity ([`Provider`]) and its Kinds.

use std::sync::Arc;

use clap::{Args, Command, FromArgMatches};
use jfrog_client::{ClientMetrics, Credentials as JfrogCredentials, JfrogClient};
use provider_runtime::managed::{Credentials, KindRegistration, ResolvedConfig};
use provider_runtime::process::{ProviderFlags, ProviderProcess, kinds_help, run};
use provider_runtime::providerconfig::ConfigVerifier;
use secrecy::ExposeSecret;

/// The authenticated call that checks a ProviderConfig against the platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ping {
    /// `GET /artifactory/api/system/version`.
    ArtifactoryVersion,
    /// `GET /xray/api/v1/system/version`.
    XrayVersion,
}

/// A provider's identity.
#[derive(Clone, Copy, Debug)]
pub struct Provider {
    /// The package, Deployment, Lease and event source name, e.g. `provider-artifactory`.
    pub name: &'static str,
    /// The short name: first label of the config group and the CRD category, e.g. `artifactory`.
    pub short: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// How a ProviderConfig is checked.
    pub ping: Ping,
}

impl Provider {
    /// The User-Agent of this provider's JFrog requests.
    pub fn user_agent(&self) -> String {
        format!("{}/{}", self.name, env!("CARGO_PKG_VERSION"))
    }

    /// Builds the JFrog client of a resolved config; its requests count in `metrics`.
    pub fn client_for(
        &self,
        config: &ResolvedConfig,
        metrics: &ClientMetrics,
    ) -> Result<JfrogClient, jfrog_client::Error> {
        let credentials = match &config.credentials {
            Credentials::Token(t) => JfrogCredentials::access_token(t.expose_secret()),
            Credentials::Basic { username, password } => {
                JfrogCredentials::basic(username.clone(), password.expose_secret())
            }
            Credentials::None => JfrogCredentials::Anonymous,
        };
        let mut builder = JfrogClient::builder(config.url.clone())
            .credentials(credentials)
            .metrics(metrics.clone())
            .user_agent(self.user_agent());
        if let Some(ca) = &config.ca_bundle {
            builder = builder.ca_bundle_pem(ca.as_bytes().to_vec());
        }
        builder.build()
    }

    /// The connection check of this provider's configs.
    pub fn verifier(&self, metrics: ClientMetrics) -> PingVerifier {
        PingVerifier {
            provider: *self,
            metrics,
        }
    }

    /// Runs the provider process with these command-line arguments (the first is the program
    /// name), as the provider binary does; the `sandbox` command calls it in the child
    /// processes it starts. `kinds` receives the metrics the process exports, so that the
    /// Kinds' JFrog clients report into them.
    pub async fn run_main(
        &self,
        kinds: impl FnOnce(&ClientMetrics) -> Vec<Arc<dyn KindRegistration>>,
        args: Vec<String>,
    ) -> anyhow::Result<()> {
        let metrics = ClientMetrics::new();
        let kinds = kinds(&metrics);
        let command = Command::new(self.name)
            .about(self.about)
            .version(env!("CARGO_PKG_VERSION"))
            .after_help(kinds_help(self.short, &kinds));
        let matches = ProviderFlags::augment_args(command)
            .try_get_matches_from(args)
            .unwrap_or_else(|e| e.exit());
        let flags = ProviderFlags::from_arg_matches(&matches)?;
        let hook_metrics = metrics.clone();
        let process = ProviderProcess::new(self.name, self.short)
            .with_kinds(kinds)
            .with_verifier(Arc::new(self.verifier(metrics)))
            .with_metrics(move |registry| hook_metrics.register(registry));
        run(process, flags).await?;
        Ok(())
    }
}

/// Checks a config against the platform with an authenticated call, so that an unreachable
/// URL or rejected credentials are reported as a Connect error.
#[derive(Clone)]
pub struct PingVerifier {
    provider: Provider,
    metrics: ClientMetrics,
}

#[async_trait::async_trait]
impl ConfigVerifier for PingVerifier {
    async fn verify(&self, config: &ResolvedConfig) -> Result<(), String> {
        let client = self
            .provider
            .client_for(config, &self.metrics)
            .map_err(|e| e.to_string())?;
        let checked = match self.provider.ping {
            Ping::ArtifactoryVersion => client.artifactory().version().await.map(|_| ()),
            Ping::XrayVersion => client.xray().version().await.map(|_| ()),
        };
        checked.map_err(|e| format!("cannot connect to JFrog platform {}: {e}", config.url))
    }
}
