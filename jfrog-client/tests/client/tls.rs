//! TLS against a platform with a private CA: trusted with the CA bundle, refused without.
//!
//! The fixtures are a test CA (its key was discarded after signing) and a server
//! certificate for 127.0.0.1 signed by it, valid until 2126. The server is a minimal HTTPS
//! responder on a loopback port, built on rustls directly.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use jfrog_client::{Error, JfrogClient, RetryPolicy};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const CA: &[u8] = include_bytes!("fixtures/ca.pem");
const CERT: &[u8] = include_bytes!("fixtures/server.pem");
const KEY: &[u8] = include_bytes!("fixtures/server.key");

/// Serves `200 OK` with body `OK` to every HTTPS request; returns the base URL.
fn https_server() -> String {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(CERT)
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(KEY).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let config = config.clone();
            std::thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK",
                );
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    url
}

fn builder(url: &str) -> jfrog_client::JfrogClientBuilder {
    JfrogClient::builder(url)
        .access_token("tls-test-token")
        .rate_limit(None)
        .connect_timeout(Duration::from_secs(20))
        .retry_policy(RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_retry_after: Duration::from_secs(1),
        })
}

#[tokio::test]
async fn private_ca_is_trusted_with_the_bundle_only() {
    let url = https_server();

    let trusted = builder(&url).ca_bundle_pem(CA).build().unwrap();
    trusted.artifactory().ping().await.unwrap();
    trusted.xray().ping().await.unwrap();

    let untrusted = builder(&url).build().unwrap();
    let e = untrusted.artifactory().ping().await.unwrap_err();
    assert!(matches!(e, Error::Transport { .. }), "{e}");
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    // A failed handshake means nothing was sent, so it was retried once.
    assert_eq!(
        untrusted
            .metrics()
            .retry_count("artifactory", "GET", "transport"),
        1
    );
}
