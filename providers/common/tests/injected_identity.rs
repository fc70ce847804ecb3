//! `credentials.source: InjectedIdentity` end to end at library level: the Kubernetes API test
//! server issues the provider's service-account token (TokenRequest) and serves its OIDC
//! discovery, the JFrog simulator verifies it against that discovery and exchanges it under an
//! identity mapping, and the provider's resolver and JFrog client use the exchanged token:
//! refreshed before it expires, renewed at once on a 401, refusals named clearly (missing
//! integration, no matching mapping, audience mismatch), recovery without a restart, and no
//! token in any message.
//!
//! Run: `cargo test -p provider-common --test injected_identity`.

use std::time::Duration;

use clap::Parser;
use jfrog_client::{Idempotency, JfrogClient, Method, Service};
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use provider_common::{Ping, Provider};
use provider_runtime::managed::{ManagedRef, ProviderConfigReference, Scope};
use provider_runtime::providerconfig::{ConfigApi, ConfigKind, KubeConfigResolver};
use serde_json::{Value, json};

const PROVIDER: Provider = Provider {
    name: "provider-artifactory",
    short: "artifactory",
    about: "test",
    ping: Ping::ArtifactoryVersion,
};
const NS: &str = "crossplane-system";
const SA: &str = "provider-artifactory";

fn crd(name: &str) -> Value {
    let path = format!(
        "{}/../../crds/artifactory/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).expect("CRD YAML")
}

async fn sim_call(sim: &jfrog_sim::Simulator, method: Method, path: &'static str, body: Value) {
    let admin = JfrogClient::builder(sim.url())
        .access_token(sim.admin_token())
        .build()
        .expect("client");
    admin
        .request(Service::Access, method, path, Idempotency::Idempotent)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"));
}

async fn sim_admin(sim: &jfrog_sim::Simulator, body: Value) -> Value {
    let resp = http_put(&format!("{}/__sim/oidc", sim.url()), &body).await;
    serde_json::from_str(&resp).unwrap_or(Value::Null)
}

async fn http_put(url: &str, body: &Value) -> String {
    // The admin API is plain HTTP on loopback: a raw request is enough.
    let url = url::Url::parse(url).expect("url");
    let addr = format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port().unwrap_or(80)
    );
    let body = body.to_string();
    let req = format!(
        "PUT {} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        url.path(),
        body.len()
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()
}

async fn exchanges(sim: &jfrog_sim::Simulator) -> u64 {
    let text = http_get(&format!("{}/__sim/oidc", sim.url())).await;
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["issued"].as_u64().unwrap_or(0)
}

async fn http_get(url: &str) -> String {
    let url = url::Url::parse(url).expect("url");
    let addr = format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port().unwrap_or(80)
    );
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n",
        url.path()
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()
}

fn mr() -> ManagedRef {
    ManagedRef {
        scope: Scope::Namespaced,
        api_version: "repository.artifactory.m.crossplane.io/v1alpha1".into(),
        kind: "LocalGenericRepository".into(),
        name: "r".into(),
        namespace: Some("default".into()),
        uid: "u1".into(),
        provider_config_ref: Some(ProviderConfigReference {
            kind: Some("ClusterProviderConfig".into()),
            name: "default".into(),
        }),
    }
}

async fn apply_config(admin: &kube::Client, url: &str, identity: Value) {
    let api: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ConfigApi::new("artifactory").api_resource(ConfigKind::ClusterProviderConfig),
    );
    let mut credentials = json!({"source": "InjectedIdentity"});
    if !identity.is_null() {
        credentials["injectedIdentity"] = identity;
    }
    let obj = json!({
        "apiVersion": "artifactory.m.crossplane.io/v1beta1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "default"},
        "spec": {"url": url, "credentials": credentials},
    });
    api.patch(
        "default",
        &PatchParams::apply("test").force(),
        &Patch::Apply(&obj),
    )
    .await
    .expect("apply ClusterProviderConfig");
}

/// A connection check as the provider makes it; the error text, if any.
async fn ping(
    resolver: &KubeConfigResolver,
    connections: &provider_common::Connections,
) -> Result<(), String> {
    let config = resolver.resolve(&mr()).await.map_err(|e| e.to_string())?;
    let client = PROVIDER
        .client_for(&config, connections)
        .map_err(|e| e.to_string())?;
    client
        .artifactory()
        .version()
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn no_token_in(message: &str) {
    assert!(
        !message.contains("eyJ"),
        "a JWT appears in the message: {message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_identity_exchanges_refreshes_and_reports_refusals() {
    let server = testkit::start_kube_server().await;
    let admin = testkit::client_for(&server, &server.admin_token()).await;
    testkit::install_crds(
        &admin,
        &[
            crd("artifactory.m.crossplane.io_clusterproviderconfigs"),
            crd("artifactory.m.crossplane.io_providerconfigusages"),
        ],
    )
    .await;
    let sas: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(admin.clone(), NS);
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": SA, "namespace": NS}})).unwrap(),
    )
    .await
    .expect("create the provider's ServiceAccount");
    let user = testkit::rbac::provider_user(SA);
    testkit::rbac::grant(
        &admin,
        testkit::rbac::provider_role(
            "crossplane:provider:provider-artifactory:system",
            &[crd("artifactory.m.crossplane.io_clusterproviderconfigs"),
              crd("artifactory.m.crossplane.io_providerconfigusages")],
            &[json!({"apiGroups": [""], "resources": ["serviceaccounts/token"], "resourceNames": [SA], "verbs": ["create"]})],
        ),
        &user,
    )
    .await;
    let provider = testkit::client_for(&server, &server.issue_token(&user, &[])).await;

    let sim = testkit::start_sim().await;
    sim_admin(
        &sim,
        json!({"caPem": server.ca_pem(), "maxTokenLifetimeSeconds": 3}),
    )
    .await;
    let integration = json!({"name": "k8s", "provider_type": "Generic OpenID Connect",
        "issuer_url": server.service_account_issuer(), "audience": "jfrog-generic"});
    sim_call(&sim, Method::POST, "/api/v1/oidc", integration.clone()).await;
    sim_call(&sim, Method::POST, "/api/v1/oidc/k8s/identity_mappings", json!({
        "name": "crossplane", "priority": 1,
        "claims": {"sub": "system:serviceaccount:crossplane-system:provider-*"},
        "token_spec": {"scope": "applied-permissions/admin", "username": "crossplane", "expires_in": 3600},
    })).await;
    apply_config(&admin, &sim.url(), json!({"providerName": "k8s"})).await;

    // The provider's own identity comes from SelfSubjectReview; no Secret exists.
    let resolver = KubeConfigResolver::new(provider.clone(), ConfigApi::new("artifactory"));
    let connections = provider_common::Connections::default();
    ping(&resolver, &connections)
        .await
        .expect("the exchanged token is accepted");
    assert_eq!(exchanges(&sim).await, 1);
    // Many requests, one exchange.
    for _ in 0..10 {
        ping(&resolver, &connections).await.expect("cached token");
    }
    assert_eq!(exchanges(&sim).await, 1, "one exchange per token lifetime");
    // A command acting for the config outside a reconcile (a preview) shares the token.
    let preview = PROVIDER
        .client_for_provider_config(
            &provider,
            ConfigKind::ClusterProviderConfig,
            "default",
            None,
            &connections,
        )
        .await
        .expect("the preview's client");
    preview.artifactory().version().await.expect("preview call");
    assert_eq!(exchanges(&sim).await, 1, "the preview shares the token");
    // `export --oidc-provider-name --oidc-token-file`: the same exchange from a token file.
    let answer = sas
        .create_token_request(
            SA,
            &PostParams::default(),
            &serde_json::from_value(json!({"spec": {"audiences": ["jfrog-generic"]}})).unwrap(),
        )
        .await
        .expect("TokenRequest");
    let file = std::env::temp_dir().join(format!("oidc-export-{}", std::process::id()));
    std::fs::write(&file, answer.status.expect("status").token).expect("token file");
    let args = provider_common::ExportArgs::try_parse_from([
        "export".to_string(),
        "--url".into(),
        sim.url(),
        "--oidc-provider-name".into(),
        "k8s".into(),
        "--oidc-token-file".into(),
        file.display().to_string(),
    ])
    .expect("export flags");
    let export = JfrogClient::builder(sim.url())
        .credentials(args.credentials().expect("credentials"))
        .build()
        .expect("client");
    export.artifactory().version().await.expect("export's call");
    assert_eq!(exchanges(&sim).await, 2, "export exchanged its own token");
    std::fs::remove_file(&file).ok();
    // Refreshed before it expires (3 s lifetime, refreshed after 2.4 s).
    tokio::time::sleep(Duration::from_millis(2600)).await;
    ping(&resolver, &connections)
        .await
        .expect("refreshed token");
    assert_eq!(exchanges(&sim).await, 3);
    // A token revoked early: the 401 renews it at once, the request succeeds.
    sim_admin(&sim, json!({"revokeIssued": true})).await;
    ping(&resolver, &connections)
        .await
        .expect("renewed after 401");
    assert_eq!(exchanges(&sim).await, 4);

    // The integration deleted: a clear refusal, naming the config and the integration.
    sim_call(&sim, Method::DELETE, "/api/v1/oidc/k8s", Value::Null).await;
    sim_admin(&sim, json!({"revokeIssued": true})).await;
    let e = ping(&resolver, &connections)
        .await
        .expect_err("no integration");
    assert!(e.contains("ClusterProviderConfig \"default\""), "{e}");
    assert!(e.contains("OIDC integration \"k8s\""), "{e}");
    assert!(e.contains("OIDC provider 'k8s' was not found"), "{e}");
    assert!(
        e.contains("service account \"crossplane-system/provider-artifactory\""),
        "{e}"
    );
    no_token_in(&e);
    // Restored: recovery without a restart (after the short failure hold).
    // (The simulator keeps the integration's identity mappings.)
    sim_call(&sim, Method::POST, "/api/v1/oidc", integration.clone()).await;
    tokio::time::sleep(jfrog_client::oidc::FAILURE_HOLD).await;
    ping(&resolver, &connections).await.expect("recovered");

    // No mapping matches (a higher-priority mapping for another subject does not help).
    sim_call(
        &sim,
        Method::DELETE,
        "/api/v1/oidc/k8s/identity_mappings/crossplane",
        Value::Null,
    )
    .await;
    sim_call(
        &sim,
        Method::POST,
        "/api/v1/oidc/k8s/identity_mappings",
        json!({
            "name": "others", "priority": 1, "claims": {"sub": "system:serviceaccount:other:*"},
            "token_spec": {"scope": "applied-permissions/admin", "username": "x"},
        }),
    )
    .await;
    sim_admin(&sim, json!({"revokeIssued": true})).await;
    tokio::time::sleep(jfrog_client::oidc::FAILURE_HOLD).await;
    let e = ping(&resolver, &connections).await.expect_err("no mapping");
    assert!(e.contains("no identity mapping matches"), "{e}");
    no_token_in(&e);

    // An audience the integration does not expect.
    apply_config(
        &admin,
        &sim.url(),
        json!({"providerName": "k8s", "audience": "elsewhere"}),
    )
    .await;
    let e = ping(&resolver, &connections).await.expect_err("audience");
    assert!(
        e.contains("does not include the provider's audience 'jfrog-generic'"),
        "{e}"
    );
    no_token_in(&e);

    // A ProviderConfig without the integration's name (made anew: apply would keep the
    // emptied object).
    let configs: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ConfigApi::new("artifactory").api_resource(ConfigKind::ClusterProviderConfig),
    );
    configs
        .delete("default", &Default::default())
        .await
        .expect("delete the config");
    apply_config(&admin, &sim.url(), Value::Null).await;
    let e = ping(&resolver, &connections)
        .await
        .expect_err("no providerName");
    assert!(e.contains("injectedIdentity.providerName"), "{e}");

    // `tokenPath`: the file a projected volume mounts (here written from a TokenRequest).
    sim_call(
        &sim,
        Method::POST,
        "/api/v1/oidc/k8s/identity_mappings",
        json!({"name": "projected", "priority": 2,
               "claims": {"sub": "system:serviceaccount:crossplane-system:provider-*"},
               "token_spec": {"scope": "applied-permissions/admin", "username": "crossplane"}}),
    )
    .await;
    let answer = sas
        .create_token_request(
            SA,
            &PostParams::default(),
            &serde_json::from_value(json!({"spec": {"audiences": ["jfrog-generic"]}})).unwrap(),
        )
        .await
        .expect("TokenRequest");
    let file = std::env::temp_dir().join(format!("oidc-projected-{}", std::process::id()));
    std::fs::write(&file, answer.status.expect("status").token).expect("token file");
    apply_config(
        &admin,
        &sim.url(),
        json!({"providerName": "k8s", "tokenPath": file.display().to_string()}),
    )
    .await;
    ping(&resolver, &connections)
        .await
        .expect("the projected token is exchanged");
    let e = ping(&resolver, &connections).await;
    // The exchanged token is still valid: the file is read again only for the next exchange.
    assert!(e.is_ok(), "{e:?}");

    // A projected token that has expired (signed by the issuer, `exp` in the past) and one
    // that is not signed (`alg: none`): each refused with what is wrong, no token quoted.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let claims = |exp: i64| {
        json!({"iss": server.service_account_issuer(), "aud": ["jfrog-generic"],
               "sub": format!("system:serviceaccount:{NS}:{SA}"), "iat": exp - 3600,
               "nbf": exp - 3600, "exp": exp})
    };
    let b64 = |v: &Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let refusals = [
        (
            server.sign_service_account_claims(&claims(now - 60)),
            "the subject token has expired",
        ),
        (
            format!(
                "{}.{}.",
                b64(&json!({"alg": "none"})),
                b64(&claims(now + 3600))
            ),
            "the subject token is not signed",
        ),
    ];
    for (token, refusal) in refusals {
        std::fs::write(&file, token).expect("token file");
        sim_admin(&sim, json!({"revokeIssued": true})).await;
        tokio::time::sleep(jfrog_client::oidc::FAILURE_HOLD).await;
        let e = ping(&resolver, &connections).await.expect_err(refusal);
        assert!(e.contains(refusal), "{e}");
        assert!(e.contains("OIDC integration \"k8s\""), "{e}");
        no_token_in(&e);
    }
    // A valid projected token again: recovery without a restart.
    let answer = sas
        .create_token_request(
            SA,
            &PostParams::default(),
            &serde_json::from_value(json!({"spec": {"audiences": ["jfrog-generic"]}})).unwrap(),
        )
        .await
        .expect("TokenRequest");
    std::fs::write(&file, answer.status.expect("status").token).expect("token file");
    tokio::time::sleep(jfrog_client::oidc::FAILURE_HOLD).await;
    ping(&resolver, &connections)
        .await
        .expect("recovered with a valid projected token");
    std::fs::remove_file(&file).ok();
}
