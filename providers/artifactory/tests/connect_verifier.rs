//! The connection check behind the issue's "an unreachable URL or rejected credentials puts a
//! clear message on the managed resources' Synced condition": the artifactory `PingVerifier` against the
//! JFrog simulator. Its error becomes `connect failed: <message>` through the resolver.

use provider_artifactory::PROVIDER;
use provider_runtime::managed::{Credentials, ResolvedConfig};
use provider_runtime::providerconfig::ConfigVerifier;
use secrecy::SecretString;

fn config(url: String, token: &str) -> ResolvedConfig {
    ResolvedConfig {
        config_kind: "ClusterProviderConfig".into(),
        config_name: "default".into(),
        config_namespace: None,
        config_uid: None,
        url,
        credentials: Credentials::Token(SecretString::from(token.to_string())),
        credentials_from: None,
        ca_bundle: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verifier_accepts_good_and_reports_rejected_and_unreachable() {
    let sim = testkit::start_sim().await;
    let verifier = PROVIDER.verifier(provider_common::Connections::default());

    verifier
        .verify(&config(sim.url(), &sim.admin_token()))
        .await
        .expect("valid credentials");

    let bad = "not-a-valid-token-8f2e";
    let err = verifier
        .verify(&config(sim.url(), bad))
        .await
        .expect_err("rejected credentials");
    assert!(err.contains("401"), "{err}");
    assert!(err.contains(&sim.url()), "names the platform: {err}");
    assert!(!err.contains(bad), "never the token: {err}");

    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let err = verifier
        .verify(&config(format!("http://127.0.0.1:{port}"), "tok"))
        .await
        .expect_err("unreachable");
    assert!(err.contains("cannot connect to JFrog platform"), "{err}");
    assert!(
        err.contains("transport") || err.contains("connect"),
        "{err}"
    );

    // The client built for a config carries its credentials without printing them.
    let c = PROVIDER
        .client_for(
            &config(sim.url(), "secret-token-x"),
            &provider_common::Connections::default(),
        )
        .expect("client");
    assert!(!format!("{c:?}").contains("secret-token-x"));
    sim.shutdown().await;
}
