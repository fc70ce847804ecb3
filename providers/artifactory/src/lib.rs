//! provider-artifactory: Kind declarations and adapters for JFrog Artifactory (repositories, webhooks, security, replication, users, lifecycle, artifacts).
//!
//! - [`kinds`]: the managed Kinds this provider registers (each served in both scopes).
//! - [`connect`]: building a [`JfrogClient`] from a resolved ProviderConfig, and the
//!   [`PingVerifier`] that reports an unreachable URL or rejected credentials on the managed
//!   resources' `Synced` condition.
//!
//! Status: the managed Kinds are not declared yet; the binary serves the config Kinds.

use std::sync::Arc;

use provider_runtime::managed::KindRegistration;

pub mod repository;

/// Provider name (the Deployment, Lease and event source name).
pub const PROVIDER_NAME: &str = "provider-artifactory";
/// Short name: first label of the config group, CRD category.
pub const SHORT_NAME: &str = "artifactory";

/// The managed Kinds of this provider.
pub fn kinds() -> Vec<Arc<dyn KindRegistration>> {
    let mut kinds = Vec::new();
    kinds.extend(repository::registrations(Arc::new(
        repository::ClientCache::new(),
    )));
    kinds
}

/// Every CRD this provider serves, as generated from the code.
pub fn crds() -> Vec<provider_runtime::crd::GeneratedCrd> {
    provider_runtime::crd::provider_crds_for(SHORT_NAME, &kinds())
}

/// Runs the provider process with these command-line arguments (the first is the program
/// name), exactly as the `provider-artifactory` binary does; the `sandbox` command calls it in the
/// child processes it starts (`sandbox provider artifactory ...`).
pub async fn run_main(args: Vec<String>) -> anyhow::Result<()> {
    use clap::{CommandFactory, FromArgMatches, Parser};
    use provider_runtime::process::{ProviderFlags, ProviderProcess, kinds_help, run};

    /// Crossplane provider for JFrog Artifactory (repositories, webhooks, security, replication, users, lifecycle, artifacts).
    #[derive(Parser)]
    #[command(name = "provider-artifactory", version)]
    struct Cli {
        #[command(flatten)]
        flags: ProviderFlags,
    }

    let kinds = kinds();
    let matches = Cli::command()
        .after_help(kinds_help(SHORT_NAME, &kinds))
        .try_get_matches_from(args)
        .unwrap_or_else(|e| e.exit());
    let cli = Cli::from_arg_matches(&matches)?;
    let metrics = jfrog_client::ClientMetrics::new();
    let hook_metrics = metrics.clone();
    let process = ProviderProcess::new(PROVIDER_NAME, SHORT_NAME)
        .with_kinds(kinds)
        .with_verifier(Arc::new(connect::PingVerifier::new(metrics)))
        .with_metrics(move |registry| hook_metrics.register(registry));
    run(process, cli.flags).await?;
    Ok(())
}

pub mod connect {
    //! From a resolved ProviderConfig to a JFrog client, and the connection check.

    use jfrog_client::{ClientMetrics, Credentials as JfrogCredentials, JfrogClient};
    use provider_runtime::managed::{Credentials, ResolvedConfig};
    use provider_runtime::providerconfig::ConfigVerifier;
    use secrecy::ExposeSecret;

    /// Builds the JFrog client of a resolved config.
    pub fn client_for(
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
            .user_agent(concat!("provider-artifactory/", env!("CARGO_PKG_VERSION")));
        if let Some(ca) = &config.ca_bundle {
            builder = builder.ca_bundle_pem(ca.as_bytes().to_vec());
        }
        builder.build()
    }

    /// Checks a config against the platform with an authenticated call, so that an
    /// unreachable URL or rejected credentials are reported as a Connect error.
    #[derive(Clone, Default)]
    pub struct PingVerifier {
        metrics: ClientMetrics,
    }

    impl PingVerifier {
        /// A verifier whose requests count in these metrics.
        pub fn new(metrics: ClientMetrics) -> Self {
            Self { metrics }
        }
    }

    #[async_trait::async_trait]
    impl ConfigVerifier for PingVerifier {
        async fn verify(&self, config: &ResolvedConfig) -> Result<(), String> {
            let client = client_for(config, &self.metrics).map_err(|e| e.to_string())?;
            client
                .artifactory()
                .version()
                .await
                .map(|_| ())
                .map_err(|e| format!("cannot connect to JFrog platform {}: {e}", config.url))
        }
    }
}
