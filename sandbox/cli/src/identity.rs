//! `sandbox up --injected-identity`: the providers run with `credentials.source:
//! InjectedIdentity` and no token Secret. The simulator gets an OIDC integration whose issuer is
//! the test server (it trusts the test server's CA and fetches its discovery and JWKS) and an
//! identity mapping for the providers' ServiceAccounts; the providers may create tokens for
//! their own ServiceAccounts (a Role, as `examples/install/injected-identity.yaml` grants it);
//! the `default` configs are replaced by InjectedIdentity ones and the credentials Secret is
//! deleted.

use std::time::Duration;

use anyhow::Context;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams,
};
use serde_json::{Value, json};

use crate::Provider;
use crate::kubeapi::{FIELD_MANAGER, kube_message};
use crate::setup::{NAMESPACE, SECRET_NAME};

/// The simulator's OIDC integration of the sandbox cluster.
pub const INTEGRATION: &str = "sandbox-cluster";
/// Its identity mapping of the providers' ServiceAccounts.
pub const MAPPING: &str = "crossplane-providers";
/// The audience the providers request (their default).
pub const AUDIENCE: &str = "jfrog-generic";

/// The integration as the simulator stores it (also for tests that delete and restore it).
pub fn integration(issuer: &str) -> Value {
    json!({"name": INTEGRATION, "provider_type": "Generic OpenID Connect",
           "issuer_url": issuer, "audience": AUDIENCE,
           "description": "the sandbox's cluster"})
}

/// The identity mapping (admin scope, JFrog's default lifetime unless capped).
pub fn mapping() -> Value {
    json!({"name": MAPPING, "priority": 1,
           "claims": {"sub": format!("system:serviceaccount:{NAMESPACE}:provider-*")},
           "token_spec": {"scope": "applied-permissions/admin", "username": "crossplane"}})
}

/// The cluster's service-account issuer, as the platform reaches it.
pub struct Issuer {
    /// The issuer URL (`iss` of the tokens, base of its discovery document).
    pub url: String,
    /// The CA its discovery and JWKS are served under.
    pub ca_pem: String,
}

impl Issuer {
    /// The embedded test server's.
    pub fn test_server(server: &kube_testserver::TestServer) -> Self {
        Self {
            url: server.service_account_issuer(),
            ca_pem: server.ca_pem(),
        }
    }

    /// A real cluster's, as its API server publishes it: the issuer from
    /// `/.well-known/openid-configuration` (read with the admin `client`), served under the CA
    /// of `kubeconfig`. Anonymous callers (the platform) may read the discovery documents once
    /// `system:service-account-issuer-discovery` is bound to `system:unauthenticated`, which
    /// this does, as `examples/install/injected-identity.yaml` tells an admin of a
    /// self-managed cluster to.
    pub async fn real_cluster(
        client: &kube::Client,
        kubeconfig: &std::path::Path,
    ) -> anyhow::Result<Self> {
        let request = http::Request::get("/.well-known/openid-configuration")
            .body(Vec::new())
            .context("the discovery request")?;
        let text = client
            .request_text(request)
            .await
            .map_err(|e| anyhow::anyhow!("the cluster's OIDC discovery: {}", kube_message(&e)))?;
        let discovery: Value =
            serde_json::from_str(&text).context("the cluster's OIDC discovery is not JSON")?;
        let url = discovery["issuer"]
            .as_str()
            .context("the cluster's OIDC discovery names no issuer")?
            .to_owned();
        let name = "jfrog-oidc-discovery";
        let api: Api<DynamicObject> = Api::all_with(
            client.clone(),
            &ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"),
                "clusterrolebindings",
            ),
        );
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:service-account-issuer-discovery"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                          "name": "system:unauthenticated"}]});
        api.patch(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&binding),
        )
        .await
        .map_err(|e| anyhow::anyhow!("creating ClusterRoleBinding {name}: {}", kube_message(&e)))?;
        Ok(Self {
            url,
            ca_pem: crate::setup::cluster_ca_pem(kubeconfig)?,
        })
    }
}

/// Sets the simulator up and switches the providers' `default` configs.
pub async fn configure(
    client: &kube::Client,
    issuer: &Issuer,
    sim_url: &str,
    sim_token: &str,
    providers: &[Provider],
    token_lifetime: Option<Duration>,
) -> anyhow::Result<()> {
    // reqwest is built without a default TLS provider; the simulator is plain HTTP, but the
    // client's construction needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let mut admin = json!({"caPem": issuer.ca_pem});
    if let Some(l) = token_lifetime {
        admin["maxTokenLifetimeSeconds"] = json!(l.as_secs().max(1));
    }
    http.put(format!("{sim_url}/__sim/oidc"))
        .json(&admin)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .context("configuring the simulator's OIDC exchange")?;
    for (path, body) in [
        ("/access/api/v1/oidc".to_string(), integration(&issuer.url)),
        (
            format!("/access/api/v1/oidc/{INTEGRATION}/identity_mappings"),
            mapping(),
        ),
    ] {
        http.post(format!("{sim_url}{path}"))
            .bearer_auth(sim_token)
            .json(&body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("POST {path} to the simulator"))?;
    }

    let pp = PatchParams::apply(FIELD_MANAGER).force();
    let role_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "Role"),
            "roles",
        ),
    );
    let binding_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "RoleBinding"),
            "rolebindings",
        ),
    );
    let name = "jfrog-providers-token-request";
    let names: Vec<String> = providers.iter().map(|p| p.name()).collect();
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"],
                   "resourceNames": names, "verbs": ["create"]}]});
    role_api
        .patch(name, &pp, &Patch::Apply(&role))
        .await
        .map_err(|e| anyhow::anyhow!("creating Role {name}: {}", kube_message(&e)))?;
    let subjects: Vec<Value> = providers
        .iter()
        .map(|p| json!({"kind": "ServiceAccount", "name": p.name(), "namespace": NAMESPACE}))
        .collect();
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": subjects});
    binding_api
        .patch(name, &pp, &Patch::Apply(&binding))
        .await
        .map_err(|e| anyhow::anyhow!("creating RoleBinding {name}: {}", kube_message(&e)))?;

    // A merge patch of the configs `setup::provider_configs` made: `secretRef: null` removes
    // the Secret reference.
    let spec = json!({
        "url": sim_url,
        "credentials": {"source": "InjectedIdentity", "secretRef": null,
                        "injectedIdentity": {"providerName": INTEGRATION}},
    });
    for p in providers {
        for (group, kind, plural) in [
            (
                format!("{}.m.crossplane.io", p.short()),
                "ClusterProviderConfig",
                "clusterproviderconfigs",
            ),
            (
                format!("{}.crossplane.io", p.short()),
                "ProviderConfig",
                "providerconfigs",
            ),
        ] {
            let gvk = GroupVersionKind::gvk(&group, "v1beta1", kind);
            let api: Api<DynamicObject> = Api::all_with(
                client.clone(),
                &ApiResource::from_gvk_with_plural(&gvk, plural),
            );
            let obj = json!({"spec": spec});
            api.patch("default", &PatchParams::default(), &Patch::Merge(&obj))
                .await
                .map_err(|e| {
                    anyhow::anyhow!("creating {kind} default ({group}): {}", kube_message(&e))
                })?;
        }
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), NAMESPACE);
    match secrets.delete(SECRET_NAME, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 404 => {}
        Err(e) => anyhow::bail!("deleting Secret {SECRET_NAME}: {}", kube_message(&e)),
    }
    Ok(())
}
