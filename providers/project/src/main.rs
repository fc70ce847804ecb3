//! The provider-project binary: the shared provider process with this provider's Kinds (see
//! [`provider_project::run_main`], which the `sandbox` command also uses).
#![warn(clippy::unwrap_used, clippy::expect_used)]

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    provider_project::run_main(std::env::args().collect()).await
}
