//! Small Kubernetes helpers shared by the `up` steps: clients from kubeconfigs, manifests read
//! from files and directories, server-side apply of untyped objects, and how a CRD's API
//! group maps to a provider and a Kind family.

use std::path::{Path, PathBuf};

use anyhow::Context;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::Provider;

/// The field manager of everything the sandbox applies.
pub const FIELD_MANAGER: &str = "sandbox";

/// A client for a kubeconfig given as YAML text.
pub async fn client_from_yaml(yaml: &str) -> anyhow::Result<kube::Client> {
    let kc = Kubeconfig::from_yaml(yaml).context("invalid kubeconfig")?;
    client_from_kubeconfig(kc).await
}

/// A client for a kubeconfig file (its current context).
pub async fn client_from_path(path: &Path) -> anyhow::Result<kube::Client> {
    let kc = Kubeconfig::read_from(path)
        .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
    client_from_kubeconfig(kc).await
}

async fn client_from_kubeconfig(kc: Kubeconfig) -> anyhow::Result<kube::Client> {
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .context("unusable kubeconfig")?;
    kube::Client::try_from(config).context("cannot build a Kubernetes client")
}

/// One YAML document of a manifest file.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file it came from.
    pub file: PathBuf,
    /// Its index among the file's documents (0-based).
    pub index: usize,
    /// The object.
    pub object: DynamicObject,
}

impl Manifest {
    /// `file` or `file#N` for a document of a multi-document file.
    pub fn origin(&self) -> String {
        if self.index == 0 {
            self.file.display().to_string()
        } else {
            format!("{}#{}", self.file.display(), self.index + 1)
        }
    }

    /// `Kind/name` or `Kind namespace/name`.
    pub fn describe(&self) -> String {
        let kind = self
            .object
            .types
            .as_ref()
            .map(|t| t.kind.as_str())
            .unwrap_or("?");
        let name = self.object.metadata.name.as_deref().unwrap_or("?");
        match &self.object.metadata.namespace {
            Some(ns) => format!("{kind} {ns}/{name}"),
            None => format!("{kind} {name}"),
        }
    }
}

/// Every `.yaml`/`.yml` file at `path` (the file itself, or a directory walked recursively,
/// in name order so that runs are reproducible).
pub fn yaml_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot list {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(yaml_files(&p)?);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Reads the documents of the YAML files at `paths` (empty documents are skipped; a document
/// without `apiVersion`/`kind`/`metadata.name` is an error naming the file).
pub fn read_manifests(paths: &[PathBuf]) -> anyhow::Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for root in paths {
        for file in yaml_files(root)? {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            for (index, doc) in serde_yaml::Deserializer::from_str(&text).enumerate() {
                let value = <serde_yaml::Value as serde::Deserialize>::deserialize(doc)
                    .with_context(|| {
                        format!(
                            "{}: document {} is not valid YAML",
                            file.display(),
                            index + 1
                        )
                    })?;
                if value.is_null() {
                    continue;
                }
                let json = serde_json::to_value(&value).with_context(|| {
                    format!(
                        "{}: document {} cannot be read as JSON",
                        file.display(),
                        index + 1
                    )
                })?;
                let object: DynamicObject = serde_json::from_value(json).with_context(|| {
                    format!(
                        "{}: document {} is not a Kubernetes object",
                        file.display(),
                        index + 1
                    )
                })?;
                if object.types.is_none() || object.metadata.name.is_none() {
                    anyhow::bail!(
                        "{}: document {} lacks apiVersion, kind or metadata.name",
                        file.display(),
                        index + 1
                    );
                }
                out.push(Manifest {
                    file: file.clone(),
                    index,
                    object,
                });
            }
        }
    }
    Ok(out)
}

/// Server-side applies `object` (force: the sandbox owns what it applies).
pub async fn apply(
    client: &kube::Client,
    resource: &ApiResource,
    namespaced: bool,
    object: &DynamicObject,
) -> Result<DynamicObject, kube::Error> {
    let name = object.metadata.name.clone().unwrap_or_default();
    let api: Api<DynamicObject> = if namespaced {
        let ns = object
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        Api::namespaced_with(client.clone(), &ns, resource)
    } else {
        Api::all_with(client.clone(), resource)
    };
    let mut body = object.clone();
    body.types = Some(kube::api::TypeMeta {
        api_version: resource.api_version.clone(),
        kind: resource.kind.clone(),
    });
    body.metadata.resource_version = None;
    body.metadata.managed_fields = None;
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
}

/// The message of a Kubernetes API error as the server wrote it.
pub fn kube_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    }
}

/// The provider and Kind family of an API group: `repository.artifactory.m.crossplane.io` is
/// (artifactory, `repository`); the config groups `artifactory.m.crossplane.io` and
/// `artifactory.crossplane.io` are (artifactory, ``). `None` for groups of no provider.
pub fn provider_of_group(group: &str) -> Option<(Provider, String)> {
    let rest = group
        .strip_suffix(".m.crossplane.io")
        .or_else(|| group.strip_suffix(".crossplane.io"))?;
    let (family, short) = match rest.rsplit_once('.') {
        Some((family, short)) => (family.to_string(), short),
        None => (String::new(), rest),
    };
    Provider::from_short(short).map(|p| (p, family))
}

/// Whether an API group is the legacy (cluster-scoped) form.
pub fn is_legacy_group(group: &str) -> bool {
    !group.ends_with(".m.crossplane.io")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_map_to_providers() {
        assert_eq!(
            provider_of_group("repository.artifactory.m.crossplane.io"),
            Some((Provider::Artifactory, "repository".into()))
        );
        assert_eq!(
            provider_of_group("policy.xray.crossplane.io"),
            Some((Provider::Xray, "policy".into()))
        );
        assert_eq!(
            provider_of_group("project.m.crossplane.io"),
            Some((Provider::Project, String::new()))
        );
        assert_eq!(
            provider_of_group("repository.project.m.crossplane.io"),
            Some((Provider::Project, "repository".into()))
        );
        assert_eq!(provider_of_group("apiextensions.crossplane.io"), None);
        assert_eq!(provider_of_group("apps"), None);
        assert!(is_legacy_group("repository.artifactory.crossplane.io"));
        assert!(!is_legacy_group("repository.artifactory.m.crossplane.io"));
    }

    #[test]
    fn manifests_from_directories_and_multi_document_files() {
        let dir = std::env::temp_dir().join(format!("sandbox-kubeapi-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(
            dir.join("a.yaml"),
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: a\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("sub/b.yml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        )
        .unwrap();
        std::fs::write(dir.join("notes.txt"), "not yaml").unwrap();
        let m = read_manifests(std::slice::from_ref(&dir)).unwrap();
        let names: Vec<String> = m.iter().map(|m| m.describe()).collect();
        assert_eq!(names, ["Namespace a", "Secret a/s", "ConfigMap c"]);
        assert!(m[1].origin().ends_with("a.yaml#3"), "{}", m[1].origin());
        std::fs::write(dir.join("bad.yaml"), "kind: Foo\n").unwrap();
        let err = read_manifests(std::slice::from_ref(&dir)).unwrap_err();
        assert!(format!("{err:#}").contains("bad.yaml"), "{err:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
