//! Serves the test server and writes a kubeconfig: `cargo run -p kube-testserver --example serve -- DIR`.
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let server = kube_testserver::TestServer::start(kube_testserver::Config::default()).await?;
    let path = std::path::Path::new(&dir).join("kubeconfig");
    server.write_kubeconfig(&path)?;
    println!("{} {}", server.url(), path.display());
    tokio::signal::ctrl_c().await?;
    Ok(())
}
