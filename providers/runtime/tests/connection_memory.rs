//! What a connection to the API server and a watch stream on it cost the provider in memory,
//! measured against a real kube-apiserver (the real lane's), with the providers' own client
//! (`process::kubeclient::kube_client`: rustls, HTTP/2) and the same split as the providers'
//! `WatchClients`. A measurement, not a check: it prints figures and asserts only that the
//! watches were established.
//!
//! Run: `sandbox real-cluster up --state-dir S`, then
//! `REAL_KUBECONFIG=S/kubeconfig cargo test -p provider-runtime --test connection_memory --
//! --ignored --nocapture`.
//!
//! A test binary of its own: it reads the resident memory of the whole process, which other
//! tests in the same process would change.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::WatchParams;
use provider_runtime::process::kubeclient::kube_client;

/// The process's resident memory in KiB (`VmRSS`).
fn rss_kib() -> u64 {
    testkit::proc_status(std::process::id(), "VmRSS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Opens `streams` watches on `client` and waits until each has its first answer (the initial
/// ADDED events or a bookmark), so the stream exists on the server. Returns the open streams.
async fn open_watches(client: &kube::Client, streams: usize) -> Vec<impl futures::Stream + use<>> {
    let mut out = Vec::new();
    for i in 0..streams {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
        let params = WatchParams::default()
            .labels(&format!("connection-memory-{i}"))
            .timeout(290)
            .disable_bookmarks();
        let stream = api
            .watch(&params, "0")
            .await
            .expect("the watch is established")
            .boxed();
        out.push(stream);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real API server: REAL_KUBECONFIG"]
async fn memory_per_connection_and_per_watch() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let path = std::env::var("REAL_KUBECONFIG").expect("REAL_KUBECONFIG names a kubeconfig");
    let kc = kube::config::Kubeconfig::read_from(&path).expect("kubeconfig");
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
    // Warm up: one client, one request, so the TLS and HTTP/2 code is loaded.
    let warm = kube_client(config.clone()).expect("client");
    let _keep_warm = open_watches(&warm, 1).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    const CONNECTIONS: usize = 40;
    let before = rss_kib();
    let mut clients = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..CONNECTIONS {
        let c = kube_client(config.clone()).expect("client");
        streams.extend(open_watches(&c, 1).await);
        clients.push(c);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let per_connection = (rss_kib().saturating_sub(before)) as f64 / CONNECTIONS as f64;

    const WATCHES: usize = 80;
    let one = kube_client(config.clone()).expect("client");
    let base = open_watches(&one, 1).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = rss_kib();
    let more = open_watches(&one, WATCHES - 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let per_watch = (rss_kib().saturating_sub(before)) as f64 / (WATCHES - 1) as f64;
    println!(
        "a connection with one watch: {per_connection:.0} KiB ({CONNECTIONS} connections); each \
         further watch stream on a connection: {per_watch:.1} KiB ({} streams)",
        WATCHES - 1
    );
    assert_eq!(streams.len(), CONNECTIONS);
    assert_eq!(base.len() + more.len(), WATCHES);
}
