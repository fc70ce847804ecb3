//! TLS for the server: a fresh CA and a serving certificate for `127.0.0.1`/`localhost` per
//! server, because kubectl (client-go) sends bearer tokens only over HTTPS. The kubeconfig
//! carries the CA (`certificate-authority-data`), so kubectl and kube-rs verify the server.
//! The same port also answers plain HTTP (the first byte of a connection tells which), for
//! clients that do not need TLS.

use std::sync::Arc;

/// The CA (PEM) and a rustls server config using a certificate it signed.
pub struct Tls {
    /// The CA certificate (PEM), for a kubeconfig's `certificate-authority-data`.
    pub ca_pem: String,
    /// Accepts TLS connections with the serving certificate, offering `h2` and `http/1.1` (or
    /// the protocols given to [`generate_with_alpn`]).
    pub acceptor: tokio_rustls::TlsAcceptor,
}

/// Errors while making certificates.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot generate certificate: {0}")]
    /// A certificate or key could not be generated.
    Cert(#[from] rcgen::Error),
    #[error("cannot build TLS config: {0}")]
    /// rustls refused the certificate and key for a server config.
    Rustls(#[from] rustls::Error),
}

/// A fresh CA and a serving certificate it signed for `127.0.0.1` and `localhost`, offering
/// HTTP/2 and HTTP/1.1.
pub fn generate() -> Result<Tls, TlsError> {
    generate_with_alpn(&[b"h2", b"http/1.1"])
}

/// Like [`generate`], offering only the `alpn` protocols (e.g. only `http/1.1`, for a TLS
/// front of an HTTP/1.1-only server such as the tests' TLS JFrog platform).
pub fn generate_with_alpn(alpn: &[&[u8]]) -> Result<Tls, TlsError> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-testserver-ca");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        "::1".to_string(),
    ])?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-apiserver");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &issuer)?;
    let key_der = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone(), ca_cert.der().clone()], key_der)?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Tls {
        ca_pem: ca_cert.pem(),
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
    })
}
