//! What the four provider binaries share on top of the runtime: the JFrog connection (a
//! [`JfrogClient`] per resolved ProviderConfig, and the [`PingVerifier`] that turns an
//! unreachable URL or rejected credentials into a clear `Synced=False` message) and the
//! process entry point ([`Provider::run_main`]).
//!
//! It is the one place where the JFrog-agnostic runtime meets the JFrog client, so each
//! provider crate only declares its identity ([`Provider`]) and its Kinds.
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod identity;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Command, FromArgMatches, Parser};
use jfrog_client::{ClientMetrics, Credentials as JfrogCredentials, JfrogClient};
use provider_runtime::managed::{Credentials, KindRegistration, ResolvedConfig};
use provider_runtime::process::{ProviderFlags, ProviderProcess, kinds_help, run};
use provider_runtime::providerconfig::identity::{IdentityContext, ServiceAccountRef};
use provider_runtime::providerconfig::{ConfigApi, ConfigKind, ConfigTarget, ConfigVerifier};
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

    /// Builds the JFrog client of a resolved config, sharing `connections` (its requests
    /// count in their metrics).
    pub fn client_for(
        &self,
        config: &ResolvedConfig,
        connections: &Connections,
    ) -> Result<JfrogClient, jfrog_client::Error> {
        let config_name = match &config.config_namespace {
            Some(ns) => format!("{ns}/{}", config.config_name),
            None => config.config_name.clone(),
        };
        let credentials = match &config.credentials {
            Credentials::Token(t) => JfrogCredentials::access_token(t.expose_secret()),
            Credentials::Basic { username, password } => {
                JfrogCredentials::basic(username.clone(), password.expose_secret())
            }
            Credentials::Injected(identity) => JfrogCredentials::OidcExchange(
                identity::exchange_for(&connections.exchanges, config, &config_name, identity),
            ),
            Credentials::None => JfrogCredentials::Anonymous,
        };
        let origin = match &config.credentials_from {
            Some(from) => format!(
                "the credentials of {} \"{config_name}\" ({from})",
                config.config_kind
            ),
            None => format!(
                "the credentials of {} \"{config_name}\"",
                config.config_kind
            ),
        };
        let mut builder = JfrogClient::builder(config.url.clone())
            .credentials(credentials)
            .credentials_origin(origin)
            .metrics(connections.metrics.clone())
            .platforms(&connections.platforms)
            .user_agent(self.user_agent());
        if let Some(ca) = &config.ca_bundle {
            builder = builder.ca_bundle_pem(ca.as_bytes().to_vec());
        }
        builder.build()
    }

    /// The JFrog client of the ProviderConfig `kind`/`name` (`namespace` for a namespaced
    /// ProviderConfig), read from the cluster with the reconcilers' rules and credential
    /// sources: a Secret, or InjectedIdentity's exchange (whose token, cached per ProviderConfig
    /// in `connections`, the clients built with them share). For commands that act for a ProviderConfig
    /// outside a reconcile (a preview); the error names the config, never a credential.
    pub async fn client_for_provider_config(
        &self,
        kube: &kube::Client,
        kind: ConfigKind,
        name: &str,
        namespace: Option<&str>,
        connections: &Connections,
    ) -> Result<JfrogClient, String> {
        let config = self
            .resolve_provider_config(kube, kind, name, namespace, None)
            .await?;
        self.client_for(&config, connections)
            .map_err(|e| e.to_string())
    }

    /// The ProviderConfig `kind`/`name` resolved as the reconcilers resolve it (URL, CA and
    /// credentials: a Secret's, or InjectedIdentity's exchange for `service_account`'s token,
    /// else for the identity the API server says `kube` is). The error names the config,
    /// never a credential.
    pub async fn resolve_provider_config(
        &self,
        kube: &kube::Client,
        kind: ConfigKind,
        name: &str,
        namespace: Option<&str>,
        service_account: Option<ServiceAccountRef>,
    ) -> Result<ResolvedConfig, String> {
        let api = ConfigApi::new(self.short);
        let target = ConfigTarget {
            kind,
            name: name.to_string(),
            namespace: namespace.map(str::to_string),
        };
        let obj = provider_runtime::providerconfig::credentials::get_config(kube, &api, &target)
            .await
            .map_err(|e| e.to_string())?;
        let identity = Arc::new(IdentityContext::new(kube.clone(), service_account));
        provider_runtime::providerconfig::credentials::resolve_config_object_with(
            kube, &identity, &target, &obj,
        )
        .await
        .map_err(|e| e.to_string())
    }

    /// The connection check of this provider's configs.
    pub fn verifier(&self, connections: Connections) -> PingVerifier {
        PingVerifier {
            provider: *self,
            connections,
        }
    }

    /// Runs the provider process with these command-line arguments (the first is the program
    /// name), as the provider binary does; the `sandbox` command calls it in the child
    /// processes it starts. `kinds` receives what the process's JFrog clients share (the
    /// metrics it exports among them), so that the Kinds' clients share it with the
    /// connection check.
    pub async fn run_main(
        &self,
        kinds: impl FnOnce(&Connections) -> Vec<Arc<dyn KindRegistration>>,
        args: Vec<String>,
    ) -> anyhow::Result<()> {
        let name = self.name;
        self.run_main_with_export(
            kinds,
            |_| async move {
                println!("{name}: no Kind to export yet");
                Ok(())
            },
            args,
        )
        .await
    }

    /// [`Self::run_main`], with the `export` subcommand (`<provider> export --url URL
    /// --token-file F ...`, see [`ExportArgs`]) served by `export`.
    pub async fn run_main_with_export<F, Fut>(
        &self,
        kinds: impl FnOnce(&Connections) -> Vec<Arc<dyn KindRegistration>>,
        export: F,
        args: Vec<String>,
    ) -> anyhow::Result<()>
    where
        F: FnOnce(ExportArgs) -> Fut,
        Fut: Future<Output = anyhow::Result<()>>,
    {
        self.run_main_with_flags(|c, _: &NoFlags| kinds(c), export, args)
            .await
    }

    /// [`Self::run_main_with_export`] for a provider with flags of its own beyond the shared
    /// ones (`E`, parsed with them, shown in `--help` and handed to `kinds`).
    pub async fn run_main_with_flags<E, F, Fut>(
        &self,
        kinds: impl FnOnce(&Connections, &E) -> Vec<Arc<dyn KindRegistration>>,
        export: F,
        args: Vec<String>,
    ) -> anyhow::Result<()>
    where
        E: Args + FromArgMatches + Default,
        F: FnOnce(ExportArgs) -> Fut,
        Fut: Future<Output = anyhow::Result<()>>,
    {
        if args.get(1).map(String::as_str) == Some("export") {
            let program = format!("{} export", self.name);
            let export_args = ExportArgs::try_parse_from(
                std::iter::once(program).chain(args.into_iter().skip(2)),
            )
            .unwrap_or_else(|e| e.exit());
            return export(export_args).await;
        }
        let connections = Connections::default();
        // The flag sets first: a set's doc comment would replace the command's about.
        let command = || {
            E::augment_args(ProviderFlags::augment_args(Command::new(self.name)))
                .about(self.about)
                .long_about(None)
                .version(env!("CARGO_PKG_VERSION"))
        };
        let matches = match command().try_get_matches_from(&args) {
            Ok(m) => m,
            Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
                // The help ends with the Kinds, built with the default flags to be named.
                let kinds = kinds(&connections, &E::default());
                let help = command().after_help(format!(
                    "{}\n\n`{} export --help`: write manifests that adopt the platform's existing objects.\n`{} preview --help`: show what applying manifests would do to JFrog, with no write.",
                    kinds_help(self.short, &kinds),
                    self.name,
                    self.name
                ));
                help.try_get_matches_from(args).err().unwrap_or(e).exit()
            }
            Err(e) => e.exit(),
        };
        let flags = ProviderFlags::from_arg_matches(&matches)?;
        let own = E::from_arg_matches(&matches)?;
        let kinds = kinds(&connections, &own);
        let hook_metrics = connections.metrics.clone();
        let process = ProviderProcess::new(self.name, self.short)
            .with_kinds(kinds)
            .with_verifier(Arc::new(self.verifier(connections)))
            .with_metrics(move |registry| hook_metrics.register(registry));
        run(process, flags).await?;
        Ok(())
    }
}

/// The flags of a provider that has none beyond the shared ones.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct NoFlags {}

/// The flags of `<provider> export`: write one manifest per object the platform already has,
/// ready to apply (or commit for Argo CD), adopting each object without changing it.
#[derive(Parser, Debug, Clone)]
#[command(about = "Write manifests that adopt the JFrog platform's existing objects")]
pub struct ExportArgs {
    /// The platform's URL, e.g. https://acme.jfrog.io.
    #[arg(long)]
    pub url: String,
    /// A file holding an access token with admin rights (read, never written anywhere).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "oidc_provider_name"
    )]
    pub token_file: Option<PathBuf>,
    /// Instead of a token: the platform's OIDC integration that exchanges the token of
    /// `--oidc-token-file` for a short-lived access token (as InjectedIdentity does).
    #[arg(
        long,
        value_name = "NAME",
        requires = "oidc_token_file",
        conflicts_with = "token_file"
    )]
    pub oidc_provider_name: Option<String>,
    /// A file holding the OIDC token (e.g. a projected service-account token) to exchange.
    #[arg(long, value_name = "FILE", requires = "oidc_provider_name")]
    pub oidc_token_file: Option<PathBuf>,
    /// The project of the exchange (`project_key`), when its identity mapping is a project's.
    #[arg(long, value_name = "KEY", requires = "oidc_provider_name")]
    pub oidc_project_key: Option<String>,
    /// Groups or Kinds to export (comma-separated, e.g. repository,webhook); default: all.
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// Namespace of the namespaced manifests (default `default`).
    #[arg(long, conflicts_with = "legacy")]
    pub namespace: Option<String>,
    /// Write legacy cluster-scoped manifests instead of namespaced ones.
    #[arg(long)]
    pub legacy: bool,
    /// The ProviderConfig of the manifests: NAME (a ClusterProviderConfig for namespaced
    /// manifests, the ProviderConfig for legacy ones) or ProviderConfig/NAME.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub provider_config: String,
    /// Observe only: `managementPolicies: ["Observe"]`, no Secret references.
    #[arg(long)]
    pub observe_only: bool,
    /// Output directory (files go to DIR/<provider>/<group>/).
    #[arg(long, default_value = "export", value_name = "DIR")]
    pub out: PathBuf,
}

impl ExportArgs {
    /// The credentials these flags give: the token file's token, or the OIDC exchange.
    pub fn credentials(&self) -> Result<JfrogCredentials, (String, String)> {
        if let (Some(name), Some(file)) = (&self.oidc_provider_name, &self.oidc_token_file) {
            return Ok(JfrogCredentials::OidcExchange(identity::file_exchange(
                name,
                self.oidc_project_key.clone(),
                file.clone(),
            )));
        }
        let path = self.token_file.clone().unwrap_or_default();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| (shown.clone(), e.to_string()))?;
        let token = text.trim();
        if token.is_empty() {
            return Err((shown, "the file is empty".to_string()));
        }
        Ok(JfrogCredentials::access_token(token))
    }
}

/// What the JFrog clients of one provider process share, handed to every place that builds
/// one (the Kinds' client cache, the connection check): the metrics their requests count
/// in, the state of each platform ([`jfrog_client::Platforms`]: one rate limiter,
/// `Retry-After` pause and descriptor-write lock per platform) and one OIDC token exchange
/// per ProviderConfig and identity ([`identity`]). Cloning shares it.
#[derive(Clone, Default)]
pub struct Connections {
    /// Where their requests are counted.
    pub metrics: ClientMetrics,
    platforms: jfrog_client::Platforms,
    exchanges: identity::Exchanges,
}

impl Connections {
    /// Fresh state, with requests counted in `metrics`.
    pub fn with_metrics(metrics: ClientMetrics) -> Self {
        Connections {
            metrics,
            ..Self::default()
        }
    }
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Connections")
    }
}

/// Checks a config against the platform with an authenticated call, so that an unreachable
/// URL or rejected credentials are reported as a Connect error.
#[derive(Clone)]
pub struct PingVerifier {
    provider: Provider,
    connections: Connections,
}

#[async_trait::async_trait]
impl ConfigVerifier for PingVerifier {
    async fn verify(&self, config: &ResolvedConfig) -> Result<(), String> {
        let client = self
            .provider
            .client_for(config, &self.connections)
            .map_err(|e| e.to_string())?;
        let checked = match self.provider.ping {
            Ping::ArtifactoryVersion => client.artifactory().version().await.map(|_| ()),
            Ping::XrayVersion => client.xray().version().await.map(|_| ()),
        };
        checked.map_err(|e| format!("cannot connect to JFrog platform {}: {e}", config.url))
    }
}
