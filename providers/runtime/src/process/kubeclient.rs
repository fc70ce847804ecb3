//! The provider's Kubernetes client: kube-rs's own middleware (base URI, authentication,
//! extra headers, retry of 429/503/504) over a connection that speaks HTTP/2 when the API
//! server offers it, as client-go does.
//!
//! Why not `kube::Client::try_from(config)`: kube-rs connects with HTTP/1.1 only, so every
//! watch holds its own TCP and TLS connection with its own buffers. A provider watches every
//! managed Kind in both scopes (296 for provider-artifactory), and those connections were
//! most of its idle memory. Over HTTP/2 many watches and requests share one connection;
//! servers without HTTP/2 still get HTTP/1.1. kube-apiserver allows 100 concurrent streams
//! per connection (`--http2-max-streams-per-connection` 0 means 100; 1,000 is only the
//! aggregated servers' default), and hyper opens no second connection when that is reached,
//! so the process opens its own: watches over a pool of connections of at most 80 watches
//! each, the leader election over another (`managed::context::WatchClients`).
//!
//! Liveness: HTTP/2 pings every 30 s, with a 15 s answer timeout, even when idle (client-go's
//! `ReadIdleTimeout` and `PingTimeout`), replace kube-rs's per-connection read timeout, which
//! on a shared connection would cut every watch at once; TCP keep-alive covers HTTP/1.1.

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::ConfigExt;
use kube::client::retry::RetryPolicy;
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder};

/// HTTP/2 ping interval.
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long a ping may go unanswered before the connection is dropped.
const PING_TIMEOUT: Duration = Duration::from_secs(15);
/// TCP keep-alive for HTTP/1.1 connections.
const TCP_KEEPALIVE: Duration = Duration::from_secs(30);

/// A Kubernetes client for `config`, preferring HTTP/2.
pub fn kube_client(config: kube::Config) -> Result<kube::Client, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(config.connect_timeout);
    http.set_keepalive(Some(TCP_KEEPALIVE));
    http.set_nodelay(true);
    let tls = config.rustls_client_config()?;
    let mut https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    if let Some(name) = config.tls_server_name.as_ref() {
        let name = name
            .clone()
            .try_into()
            .map_err(|e| kube::Error::Service(format!("invalid tls-server-name: {e}").into()))?;
        https = https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let connector = https.enable_all_versions().wrap_connector(http);
    let client = hyper_util::client::legacy::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .http2_keep_alive_interval(PING_INTERVAL)
        .http2_keep_alive_timeout(PING_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        .build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(client);
    Ok(kube::Client::new(service, config.default_namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn speaks_http2_to_a_server_that_offers_it() {
        let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
            .await
            .expect("test server");
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&server.kubeconfig(&server.admin_token()))
                .expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("config");
        let client = kube_client(config).expect("client");
        let req = http::Request::get("/version")
            .body(Vec::new())
            .expect("request");
        let resp = client
            .send(req.map(kube::client::Body::from))
            .await
            .expect("version");
        assert_eq!(resp.version(), http::Version::HTTP_2);
        // A watch and a list share the connection.
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
        let list = api.list(&Default::default()).await.expect("list");
        assert!(!list.items.is_empty());
    }
}
