//! The provider-xray binary: the shared provider process with this provider's Kinds.

use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches, Parser};
use provider_runtime::process::{ProviderFlags, ProviderProcess, kinds_help, run};
use provider_xray::{PROVIDER_NAME, SHORT_NAME, connect::PingVerifier, kinds};

/// Crossplane provider for JFrog Xray (policies, watches, reports, configuration, webhooks).
#[derive(Parser)]
#[command(name = "provider-xray", version)]
struct Cli {
    #[command(flatten)]
    flags: ProviderFlags,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let kinds = kinds();
    let matches = Cli::command()
        .after_help(kinds_help(SHORT_NAME, &kinds))
        .get_matches();
    let cli = Cli::from_arg_matches(&matches)?;
    let metrics = jfrog_client::ClientMetrics::new();
    let hook_metrics = metrics.clone();
    let process = ProviderProcess::new(PROVIDER_NAME, SHORT_NAME)
        .with_kinds(kinds)
        .with_verifier(Arc::new(PingVerifier::new(metrics)))
        .with_metrics(move |registry| hook_metrics.register(registry));
    run(process, cli.flags).await?;
    Ok(())
}
