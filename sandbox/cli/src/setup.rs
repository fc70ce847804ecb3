//! Preparing a cluster for the providers: the CRDs of `crds/`, the `crossplane-system`
//! objects (the JFrog credentials Secret, a `ClusterProviderConfig` and a legacy
//! `ProviderConfig` named `default` per provider), and each provider's RBAC as Crossplane
//! grants it (docs/managed-reconciler.md §15.4).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value, json};

use crate::Provider;
use crate::kubeapi::{FIELD_MANAGER, kube_message, provider_of_group};

/// Namespace of the providers and their Secrets.
pub const NAMESPACE: &str = "crossplane-system";
/// The Secret holding the JFrog credentials.
pub const SECRET_NAME: &str = "jfrog-credentials";

/// A CRD read from `crds/`.
pub struct CrdFile {
    pub file: PathBuf,
    pub crd: CustomResourceDefinition,
}

/// Reads every CRD below `dir` (recursively; every document must be a CRD).
pub fn read_crds(dir: &Path) -> anyhow::Result<Vec<CrdFile>> {
    let manifests = crate::kubeapi::read_manifests(&[dir.to_path_buf()])?;
    let mut out = Vec::new();
    for m in manifests {
        let kind = m
            .object
            .types
            .as_ref()
            .map(|t| t.kind.clone())
            .unwrap_or_default();
        if kind != "CustomResourceDefinition" {
            anyhow::bail!(
                "{}: expected a CustomResourceDefinition, found {kind}",
                m.origin()
            );
        }
        let value = serde_json::to_value(&m.object).context("CRD cannot be serialised")?;
        let crd: CustomResourceDefinition = serde_json::from_value(value)
            .with_context(|| format!("{}: not a valid CustomResourceDefinition", m.origin()))?;
        out.push(CrdFile { file: m.file, crd });
    }
    Ok(out)
}

/// Applies the CRDs (a few at a time) and waits until each is Established. A CRD the server
/// rejects is an error naming its file and carrying the server's message.
pub async fn install_crds(
    client: &kube::Client,
    crds: &[CrdFile],
    timeout: Duration,
) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    // The answer to each apply carries the CRD's status: most are Established at once, so
    // only the others are read again (one GET each) until they are; listing all CRDs per
    // round would move the whole schema set (megabytes) every 200 ms.
    let answers: Vec<Result<String, String>> = futures::stream::iter(crds)
        .map(|c| {
            let (api, pp) = (&api, &pp);
            async move {
                let name = c.crd.metadata.name.clone().unwrap_or_default();
                let mut body = c.crd.clone();
                body.metadata.resource_version = None;
                match api.patch(&name, pp, &Patch::Apply(&body)).await {
                    Ok(applied) if established(&applied) => Ok(String::new()),
                    Ok(_) => Ok(name),
                    Err(e) => Err(format!(
                        "{} ({name}): {}",
                        c.file.display(),
                        kube_message(&e)
                    )),
                }
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let rejected: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().err()).collect();
    if !rejected.is_empty() {
        anyhow::bail!(
            "{} CRD(s) rejected by the API server:\n  {}",
            rejected.len(),
            rejected
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
    let mut pending: Vec<String> = answers
        .into_iter()
        .filter_map(|a| a.ok().filter(|n| !n.is_empty()))
        .collect();
    let deadline = tokio::time::Instant::now() + timeout;
    while let Some(first) = pending.first().cloned() {
        let mut still = Vec::new();
        for name in pending {
            let crd = api
                .get(&name)
                .await
                .with_context(|| format!("reading CRD {name}"))?;
            if !established(&crd) {
                still.push(name);
            }
        }
        pending = still;
        if pending.is_empty() {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            let file = crds
                .iter()
                .find(|c| c.crd.metadata.name.as_deref() == Some(first.as_str()))
                .map(|c| c.file.display().to_string())
                .unwrap_or_default();
            anyhow::bail!(
                "{} CRD(s) not Established after {timeout:?}, e.g. {first} ({file})",
                pending.len(),
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// Whether the CRD's Established condition is True.
fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// The plurals of each provider's CRDs, by API group.
pub fn provider_resources(
    crds: &[CrdFile],
) -> BTreeMap<Provider, BTreeMap<String, BTreeSet<String>>> {
    let mut out: BTreeMap<Provider, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for c in crds {
        let group = &c.crd.spec.group;
        if let Some((p, _)) = provider_of_group(group) {
            out.entry(p)
                .or_default()
                .entry(group.clone())
                .or_default()
                .insert(c.crd.spec.names.plural.clone());
        }
    }
    out
}

/// Where the providers' JFrog platform is.
pub struct Platform {
    pub url: String,
    pub token: String,
}

/// Creates the `crossplane-system` namespace (if missing), the credentials Secret, and per
/// provider the `ClusterProviderConfig` and legacy `ProviderConfig` named `default`.
pub async fn provider_configs(
    client: &kube::Client,
    platform: &Platform,
    providers: &[Provider],
) -> anyhow::Result<()> {
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    let ns_api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    ns_api
        .patch(NAMESPACE, &pp, &Patch::Apply(&ns))
        .await
        .context("creating namespace crossplane-system")?;

    // Both ways the providers read credentials: a bare token (with spec.url), and the JSON
    // object the Upjet JFrog providers read, for users who copy the Secret to their configs.
    let upjet = json!({"url": platform.url, "access_token": platform.token}).to_string();
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), NAMESPACE);
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": SECRET_NAME, "namespace": NAMESPACE},
        "type": "Opaque",
        "stringData": {"token": platform.token, "credentials": upjet},
    });
    secrets
        .patch(SECRET_NAME, &pp, &Patch::Apply(&secret))
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "creating Secret {NAMESPACE}/{SECRET_NAME}: {}",
                kube_message(&e)
            )
        })?;

    let spec = json!({
        "url": platform.url,
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": SECRET_NAME, "namespace": NAMESPACE, "key": "token"},
        },
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
            let ar = ApiResource::from_gvk_with_plural(&gvk, plural);
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
            let obj = json!({
                "apiVersion": format!("{group}/v1beta1"), "kind": kind,
                "metadata": {"name": "default"},
                "spec": spec,
            });
            api.patch("default", &pp, &Patch::Apply(&obj))
                .await
                .map_err(|e| {
                    anyhow::anyhow!("creating {kind} default ({group}): {}", kube_message(&e))
                })?;
        }
    }
    Ok(())
}

/// The name of a provider's ClusterRole and ClusterRoleBinding, as Crossplane names the
/// system role of a provider revision.
pub fn role_name(p: Provider) -> String {
    format!("crossplane:provider:{}:system", p.name())
}

/// Creates the provider's ServiceAccount, and the ClusterRole and ClusterRoleBinding
/// Crossplane v2's RBAC manager would (`rules`, see [`crate::crossplane_rbac`]).
pub async fn provider_rbac(
    client: &kube::Client,
    p: Provider,
    rules: &[Value],
) -> anyhow::Result<()> {
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    let name = p.name();
    let sa_api: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(client.clone(), NAMESPACE);
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": NAMESPACE}});
    sa_api
        .patch(&name, &pp, &Patch::Apply(&sa))
        .await
        .map_err(|e| anyhow::anyhow!("ServiceAccount {name}: {}", kube_message(&e)))?;

    let role = role_name(p);
    let cr_api: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(client.clone());
    let cr = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": role},
        "rules": rules,
    });
    cr_api
        .patch(&role, &pp, &Patch::Apply(&cr))
        .await
        .map_err(|e| anyhow::anyhow!("ClusterRole {role}: {}", kube_message(&e)))?;

    let crb_api: Api<k8s_openapi::api::rbac::v1::ClusterRoleBinding> = Api::all(client.clone());
    let crb = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}],
    });
    crb_api
        .patch(&role, &pp, &Patch::Apply(&crb))
        .await
        .map_err(|e| anyhow::anyhow!("ClusterRoleBinding {role}: {}", kube_message(&e)))?;
    Ok(())
}

/// The service-account user name of a provider.
pub fn service_account_user(p: Provider) -> String {
    format!("system:serviceaccount:{NAMESPACE}:{}", p.name())
}

/// The cluster entry of `kubeconfig`'s current context, a relative certificate-authority path
/// made absolute (it is relative to the kubeconfig).
fn current_cluster(kubeconfig: &Path) -> anyhow::Result<Value> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("cannot read kubeconfig {}", kubeconfig.display()))?;
    let context = kc
        .current_context
        .as_deref()
        .and_then(|c| kc.contexts.iter().find(|n| n.name == c))
        .and_then(|n| n.context.as_ref())
        .with_context(|| format!("{}: no current context", kubeconfig.display()))?;
    let cluster = kc
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.as_ref())
        .with_context(|| format!("{}: no cluster {}", kubeconfig.display(), context.cluster))?;
    let mut cluster = serde_json::to_value(cluster).context("the cluster entry")?;
    if let Some(ca) = cluster["certificate-authority"].as_str()
        && Path::new(ca).is_relative()
    {
        let dir = kubeconfig.parent().unwrap_or(Path::new("."));
        cluster["certificate-authority"] = json!(dir.join(ca).display().to_string());
    }
    Ok(cluster)
}

/// The PEM of the certificate authority `kubeconfig`'s current cluster is verified with
/// (`certificate-authority-data` or the `certificate-authority` file).
pub fn cluster_ca_pem(kubeconfig: &Path) -> anyhow::Result<String> {
    use base64::Engine as _;
    let cluster = current_cluster(kubeconfig)?;
    if let Some(data) = cluster["certificate-authority-data"].as_str() {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .context("certificate-authority-data is not base64")?;
        return String::from_utf8(pem).context("certificate-authority-data is not a PEM text");
    }
    if let Some(path) = cluster["certificate-authority"].as_str() {
        return std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"));
    }
    anyhow::bail!(
        "{}: the cluster names no certificate authority",
        kubeconfig.display()
    )
}

/// A kubeconfig for the provider `p` on a real cluster: the cluster of `admin`'s current
/// context, and a token of the provider's ServiceAccount from the TokenRequest API (valid
/// `lifetime`, or less if the API server caps it), as Crossplane's Deployment mounts one. With
/// it the provider works under exactly the RBAC [`provider_rbac`] created.
pub async fn service_account_kubeconfig(
    client: &kube::Client,
    admin: &Path,
    p: Provider,
    lifetime: Duration,
) -> anyhow::Result<String> {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    let cluster = current_cluster(admin)?;
    let sa: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(client.clone(), NAMESPACE);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(lifetime.as_secs() as i64),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = sa
        .create_token_request(&p.name(), &Default::default(), &request)
        .await
        .map_err(|e| anyhow::anyhow!("TokenRequest for {}: {}", p.name(), kube_message(&e)))?;
    let token = answer
        .status
        .map(|s| s.token)
        .filter(|t| !t.is_empty())
        .with_context(|| format!("TokenRequest for {}: no token in the answer", p.name()))?;
    let name = p.name();
    let doc = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": "cluster", "user": name}}],
        "current-context": name,
    });
    serde_yaml::to_string(&doc).context("the provider's kubeconfig")
}

/// Whether the API server takes the credentials of this kubeconfig: `Err` with the server's
/// answer when it says 401 Unauthorized (any other answer means it knows who is asking).
pub async fn authenticates(kubeconfig: &str) -> Result<(), String> {
    let client = crate::kubeapi::client_from_yaml(kubeconfig)
        .await
        .map_err(|e| format!("{e:#}"))?;
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> = Api::namespaced(client, NAMESPACE);
    match leases
        .list(&kube::api::ListParams::default().limit(1))
        .await
    {
        Err(kube::Error::Api(s)) if s.code == 401 => Err(s.message),
        _ => Ok(()),
    }
}
