//! `<provider> preview`: what applying a set of manifests (or the next reconcile of a live
//! cluster's managed resources) would do to JFrog, before it happens, with no write.
//!
//! ```text
//! provider-artifactory preview --url URL (--token-file F | --token-env VAR)
//!     -f PATH [-f PATH]... [--format text|markdown|json] [--namespace NS]
//!     [--kubeconfig K [--all-namespaces]]
//! ```
//!
//! For every managed resource of this provider's Kinds (files, folders searched
//! recursively, or `-` for a stream such as `kustomize build`), in input order:
//!
//! 1. admission as the API server would judge the manifest: the generated CRD's schema,
//!    pruning (strict field validation refuses unknown fields), defaults, validation and
//!    CEL rules (`crd-schema`, the code the sandbox's API server runs), so a manifest the
//!    cluster would refuse is `refused` with the API server's message;
//! 2. references resolved as the reconciler resolves them (step 9), against the manifests
//!    previewed together (any provider's) and, with `--kubeconfig`, the cluster;
//! 3. the reconciler's own steps ([`provider_runtime::managed::preview::plan`]): policies,
//!    the external-name initialiser, the adapter's view, the Kind's connector and Observe
//!    (with the same list observation the provider uses: one list per family and platform,
//!    read once, then every MR answered from it), then the decision: `create`, `update`
//!    (field paths, old -> new, late-initialised fields, write-only secrets as set or
//!    changed, never a value), `no change`, `adopt`, `refused` or `blocked`.
//!
//! Objects of the other providers are listed as skipped, naming the binary to run.
//!
//! **No write.** The JFrog client is read-only ([`jfrog_client::JfrogClient::read_only`]):
//! a write any adapter attempted would fail before leaving the process; if one was
//! attempted the command fails (exit 1). The Kubernetes API is only read (GET and LIST).
//!
//! **Cluster mode.** With `--kubeconfig`, every manifest is previewed as it would be
//! applied over the live MR of the same name (its external name, recorded write-only
//! hashes, status and UID are the live ones; its spec is the manifest's over the live one),
//! and an MR already in the cluster that matches is `no change` (an unknown one `adopt`).
//! Without `-f`, the managed resources of the cluster (`--namespace`, default `default`,
//! or `--all-namespaces`; legacy ones always) are previewed as they are: what their next
//! reconcile would do (paused ones: the first reconcile after unpausing). Credentials are
//! always those given on the command line (a read-only token is enough): the MRs'
//! ProviderConfigs are not read.
//!
//! Exit status: 0 when nothing would change in JFrog and every MR would reconcile
//! (every item `no change`, `adopt` or skipped), 2 when something would (a create or an
//! update) or an MR would be refused or blocked, 1 on an error of the command itself (as
//! `terraform plan -detailed-exitcode`).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use futures::StreamExt;
use jfrog_client::ClientMetrics;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use provider_runtime::managed::KindRegistration;
use provider_runtime::managed::config::{Credentials, ResolvedConfig};
use provider_runtime::managed::external::{ChangeKind, FieldChange};
use provider_runtime::managed::kind::{ReferenceTarget, Scope};
use provider_runtime::managed::meta::EXTERNAL_NAME;
use provider_runtime::managed::preview::{Action, Planned, PreviewInput, placeholder_secrets};
use provider_runtime::managed::reconciler::{deep_merge, read_secrets};
use provider_runtime::managed::references::{self, KubeLookup, Lookup, RefContext};
use secrecy::SecretString;
use serde::Serialize;
use serde_json::{Value, json};

use crate::adapter::ClientCache;

/// The four providers' short names (to name the binary that previews another's object).
const PROVIDERS: [&str; 4] = ["artifactory", "xray", "project", "platform"];

/// How long one MR's observation may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// MRs observed at once (in input order: the first MR of a singleton claims it first).
const CONCURRENCY: usize = 8;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for a terminal.
    Text,
    /// A pull-request comment: counts first, then one section per change.
    Markdown,
    /// Stable JSON (fields documented in the README).
    Json,
}

/// The flags of `<provider> preview`.
#[derive(Parser, Debug, Clone)]
#[command(
    about = "Show what applying manifests (or the next reconcile of a cluster's managed resources) would do to JFrog, without writing anything",
    after_help = "Exit status: 0 nothing would change, 2 something would (or an MR would be refused or blocked), 1 error."
)]
pub struct PreviewArgs {
    /// The platform's URL, e.g. https://acme.jfrog.io.
    #[arg(long, required_unless_present = "provider_config")]
    pub url: Option<String>,
    /// A file holding an access token (read-only rights are enough; never printed).
    #[arg(long, value_name = "FILE", conflicts_with = "token_env")]
    pub token_file: Option<PathBuf>,
    /// An environment variable holding the access token (never printed).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// With `--kubeconfig`: the platform and credentials of this ProviderConfig, as the
    /// provider resolves them (a Secret's token or InjectedIdentity's OIDC exchange): `NAME`
    /// for a ClusterProviderConfig, `NAMESPACE/NAME` for a namespaced ProviderConfig.
    #[arg(long, value_name = "[NAMESPACE/]NAME", requires = "kubeconfig",
          conflicts_with_all = ["url", "token_file", "token_env"])]
    pub provider_config: Option<String>,
    /// With an InjectedIdentity `--provider-config`: the ServiceAccount (`NAMESPACE/NAME`)
    /// whose token (TokenRequest, with the kubeconfig's rights) is exchanged; default: the
    /// kubeconfig's own identity when it is a service account.
    #[arg(long, value_name = "NAMESPACE/NAME", requires = "provider_config")]
    pub service_account: Option<String>,
    /// Manifests: a file, a folder (searched recursively for .yaml, .yml and .json), or `-`
    /// for standard input (e.g. `kustomize build | ... -f -`). Repeatable.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The namespace of namespaced manifests that name none, and of the cluster's MRs
    /// previewed without `-f` (default `default`).
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// A kubeconfig: preview against the live managed resources of that cluster.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// With `--kubeconfig` and no `-f`: the MRs of every namespace.
    #[arg(long, short = 'A', requires = "kubeconfig")]
    pub all_namespaces: bool,
    /// Leave other providers' objects out of the list (they are still counted as skipped).
    #[arg(long)]
    pub hide_skipped: bool,
}

/// One previewed object, as the outputs show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// `create`, `update`, `adopt`, `no change`, `refused`, `blocked` or `skipped`.
    pub action: String,
    /// The manifest's `apiVersion`.
    pub api_version: String,
    /// Its `kind`.
    pub kind: String,
    /// Its namespace (namespaced MRs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The JFrog identifier, when known.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub external_name: String,
    /// Where it came from: a file, `-`, or `cluster`.
    pub source: String,
    /// The fields that change (updates) or that late initialisation fills in the MR.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    /// A create's parameters (sensitive values as `"(set)"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create: Option<Value>,
    /// Why it is refused or blocked; for skipped objects, the binary to run.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Remarks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Item {
    fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The whole preview (the JSON output; field names are stable).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The provider, e.g. `provider-artifactory`.
    pub provider: String,
    /// Items per action (`create`, `update`, `adopt`, `no change`, `refused`, `blocked`,
    /// `skipped`), every action present.
    pub summary: BTreeMap<String, usize>,
    /// Every managed resource, in input order.
    pub items: Vec<Item>,
    /// JFrog requests sent.
    pub requests: u64,
    /// Writes sent to JFrog: always 0 (a write attempt fails the command).
    pub writes: u64,
    /// Seconds the preview took.
    pub seconds: f64,
}

impl Report {
    /// The exit status: 0 nothing would change, 2 something would (or would be refused
    /// or blocked).
    pub fn exit_code(&self) -> i32 {
        let changing = ["create", "update", "refused", "blocked"];
        if self
            .items
            .iter()
            .any(|i| changing.contains(&i.action.as_str()))
        {
            2
        } else {
            0
        }
    }
}

/// What can make the command fail.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// The token could not be read.
    #[error("cannot read the token from {from}: {message}")]
    Token {
        /// Where from (a path or a variable name, never the value).
        from: String,
        /// Why.
        message: String,
    },
    /// A manifest could not be read or parsed.
    #[error("{path}: {message}")]
    Manifest {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The JFrog client could not be built, or the platform did not answer.
    #[error("{0}")]
    Platform(String),
    /// The cluster could not be reached.
    #[error("cluster: {0}")]
    Cluster(String),
    /// A write was attempted (a bug): it was refused and the preview is not trustworthy.
    #[error("{0} write(s) to JFrog were attempted during the preview and refused (this is a bug)")]
    WriteAttempted(u64),
    /// Nothing to preview.
    #[error("give manifests (-f) or a cluster (--kubeconfig)")]
    Nothing,
}

/// A manifest read from the input.
#[derive(Debug, Clone)]
struct Doc {
    value: Value,
    source: String,
}

/// The ProviderConfig `--provider-config` names, resolved as the provider resolves it.
async fn provider_config(
    provider: &provider_common::Provider,
    kube: &kube::Client,
    named: &str,
    args: &PreviewArgs,
) -> Result<ResolvedConfig, PreviewError> {
    use provider_runtime::providerconfig::ConfigKind;
    use provider_runtime::providerconfig::identity::ServiceAccountRef;
    let (kind, namespace, name) = match named.split_once('/') {
        Some((ns, name)) => (ConfigKind::ProviderConfig, Some(ns), name),
        None => (ConfigKind::ClusterProviderConfig, None, named),
    };
    let service_account = match &args.service_account {
        None => None,
        Some(sa) => match sa.split_once('/') {
            Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
                Some(ServiceAccountRef {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                })
            }
            _ => {
                return Err(PreviewError::Platform(format!(
                    "--service-account {sa:?}: give NAMESPACE/NAME"
                )));
            }
        },
    };
    provider
        .resolve_provider_config(kube, kind, name, namespace, service_account)
        .await
        .map_err(PreviewError::Platform)
}

fn read_token(args: &PreviewArgs) -> Result<String, PreviewError> {
    let (from, text) = match (&args.token_file, &args.token_env) {
        (Some(f), _) => (
            f.display().to_string(),
            std::fs::read_to_string(f).map_err(|e| e.to_string()),
        ),
        (None, Some(var)) => (
            format!("${var}"),
            std::env::var(var).map_err(|_| "the variable is not set".to_string()),
        ),
        (None, None) => (
            "the command line".to_string(),
            Err("give --token-file or --token-env".to_string()),
        ),
    };
    let token = text
        .map(|t| t.trim().to_string())
        .and_then(|t| {
            if t.is_empty() {
                Err("it is empty".to_string())
            } else {
                Ok(t)
            }
        })
        .map_err(|message| PreviewError::Token {
            from: from.clone(),
            message,
        })?;
    Ok(token)
}

fn collect_files(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            collect_files(&e, out)?;
        }
    } else if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
    {
        out.push(path.to_path_buf());
    }
    Ok(())
}

fn parse_docs(text: &str, source: &str, out: &mut Vec<Doc>) -> Result<(), PreviewError> {
    for de in serde_yaml::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(de).map_err(|e| PreviewError::Manifest {
            path: source.to_string(),
            message: e.to_string(),
        })?;
        match v {
            Value::Null => {}
            // `kind: List` (kubectl's and kustomize's lists) holds its objects in `items`.
            Value::Object(ref m)
                if m.get("kind").and_then(Value::as_str) == Some("List")
                    && m.get("items").is_some_and(Value::is_array) =>
            {
                for item in m["items"].as_array().into_iter().flatten() {
                    out.push(Doc {
                        value: item.clone(),
                        source: source.to_string(),
                    });
                }
            }
            v => out.push(Doc {
                value: v,
                source: source.to_string(),
            }),
        }
    }
    Ok(())
}

/// Every manifest of `paths`, in order (folders sorted, recursively).
fn load(paths: &[String]) -> Result<Vec<Doc>, PreviewError> {
    let mut docs = Vec::new();
    for p in paths {
        if p == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| PreviewError::Manifest {
                    path: "-".into(),
                    message: e.to_string(),
                })?;
            parse_docs(&text, "-", &mut docs)?;
            continue;
        }
        let mut files = Vec::new();
        let path = Path::new(p);
        if path.is_file() {
            files.push(path.to_path_buf());
        } else {
            collect_files(path, &mut files).map_err(|e| PreviewError::Manifest {
                path: p.clone(),
                message: e.to_string(),
            })?;
            if !path.exists() {
                return Err(PreviewError::Manifest {
                    path: p.clone(),
                    message: "no such file or directory".into(),
                });
            }
        }
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|e| PreviewError::Manifest {
                path: f.display().to_string(),
                message: e.to_string(),
            })?;
            parse_docs(&text, &f.display().to_string(), &mut docs)?;
        }
    }
    Ok(docs)
}

/// Whose object a manifest is.
enum Owner {
    /// One of this provider's Kinds (index into the registrations) in a scope.
    Ours(usize, Scope),
    /// A group of this provider that no Kind serves.
    Unknown,
    /// Another provider's managed resource.
    Other(&'static str),
    /// Not a managed resource (a Secret, a ProviderConfig, a kustomization).
    NotManaged,
}

/// The index of a provider's Kinds by `apiVersion` and `kind`, both scopes.
struct Index {
    short: &'static str,
    kinds: HashMap<(String, String), (usize, Scope)>,
}

impl Index {
    fn new(short: &'static str, regs: &[Arc<dyn KindRegistration>]) -> Self {
        let mut kinds = HashMap::new();
        for (i, r) in regs.iter().enumerate() {
            for scope in [Scope::Namespaced, Scope::Cluster] {
                let info = r.info();
                kinds.insert((info.api_version(scope), info.kind.to_string()), (i, scope));
            }
        }
        Index { short, kinds }
    }

    fn owner(&self, doc: &Value) -> Owner {
        let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        if let Some((i, scope)) = self.kinds.get(&(api_version.to_string(), kind.to_string())) {
            return Owner::Ours(*i, *scope);
        }
        let group = api_version.split('/').next().unwrap_or("");
        for p in PROVIDERS {
            // `<group>.<p>.m.crossplane.io` or `<group>.<p>.crossplane.io`: a managed
            // resource; `<p>.m.crossplane.io` itself holds the configuration Kinds.
            let managed = [
                format!(".{p}.m.crossplane.io"),
                format!(".{p}.crossplane.io"),
            ]
            .iter()
            .any(|suffix| group.ends_with(suffix.as_str()));
            if managed {
                return if p == self.short {
                    Owner::Unknown
                } else {
                    Owner::Other(p)
                };
            }
        }
        Owner::NotManaged
    }
}

/// The API server's judgement of a manifest: the generated CRDs' schemas, compiled once
/// each when first needed.
struct Admission {
    crds: HashMap<String, Value>,
    compiled: HashMap<String, Option<crd_schema::Schema>>,
}

impl Admission {
    fn new(short: &str, regs: &[Arc<dyn KindRegistration>]) -> Self {
        let crds = provider_runtime::crd::provider_crds_for(short, regs)
            .into_iter()
            .map(|c| (c.name, c.document))
            .collect();
        Admission {
            crds,
            compiled: HashMap::new(),
        }
    }

    /// Prune, default and validate `obj` (a create, or an update of `old`) as the API
    /// server would; `Err` is its message. `sensitive`: paths whose values are never shown.
    fn admit(
        &mut self,
        crd: &str,
        obj: &mut Value,
        old: Option<&Value>,
        sensitive: &[&str],
    ) -> Result<(), String> {
        let version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|a| a.split('/').nth(1))
            .unwrap_or("")
            .to_string();
        let schema = self.compiled.entry(crd.to_string()).or_insert_with(|| {
            let doc = self.crds.get(crd)?;
            let versions = doc.pointer("/spec/versions")?.as_array()?;
            let v = versions
                .iter()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(version.as_str()))?;
            crd_schema::Schema::compile(v.pointer("/schema/openAPIV3Schema")?).ok()
        });
        let Some(schema) = schema else {
            return Ok(());
        };
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let group = crd.split_once('.').map(|(_, g)| g).unwrap_or("");
        let unknown = schema.prune(obj);
        if !unknown.is_empty() {
            let fields: Vec<String> = unknown
                .iter()
                .map(|p| format!("unknown field \"{p}\""))
                .collect();
            return Err(format!(
                "{kind}.{group} \"{name}\": strict decoding error: {}",
                fields.join(", ")
            ));
        }
        schema.apply_defaults(obj);
        let errs = schema.validate(obj, old);
        if errs.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = errs
            .into_iter()
            .map(|mut e| {
                if sensitive
                    .iter()
                    .any(|s| e.field.ends_with(&format!("forProvider.{s}")))
                {
                    e.value = None;
                }
                e.to_string()
            })
            .collect();
        let joined = if shown.len() == 1 {
            shown.concat()
        } else {
            format!("[{}]", shown.join(", "))
        };
        Err(format!("{kind}.{group} \"{name}\" is invalid: {joined}"))
    }
}

/// References resolved against the manifests previewed together and, in cluster mode,
/// the cluster.
struct DocLookup<'a> {
    docs: &'a [Value],
    kube: Option<&'a kube::Client>,
    scope: Scope,
}

/// A manifest as the reconciler's reference resolver sees an MR: its external name is
/// the annotation, else the name (what the external-name initialiser would set).
fn as_target(doc: &Value) -> Option<DynamicObject> {
    let mut o: DynamicObject = serde_json::from_value(doc.clone()).ok()?;
    let name = o.metadata.name.clone().unwrap_or_default();
    let ann = o.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if ann.get(EXTERNAL_NAME).is_none_or(|v| v.is_empty()) {
        ann.insert(EXTERNAL_NAME.to_string(), name);
    }
    Some(o)
}

impl DocLookup<'_> {
    fn matching<'d>(
        &'d self,
        target: &ReferenceTarget,
        namespace: Option<&'d str>,
    ) -> impl Iterator<Item = &'d Value> + 'd {
        let ar = target.api_resource(self.scope);
        let namespaced = self.scope.is_namespaced();
        self.docs.iter().filter(move |d| {
            d.get("apiVersion").and_then(Value::as_str) == Some(ar.api_version.as_str())
                && d.get("kind").and_then(Value::as_str) == Some(ar.kind.as_str())
                && (!namespaced
                    || namespace.is_none()
                    || d.pointer("/metadata/namespace").and_then(Value::as_str) == namespace)
        })
    }
}

fn labels_match(doc: &Value, selector: &str) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        doc.pointer("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
            == Some(v)
    })
}

impl Lookup for DocLookup<'_> {
    async fn get(
        &self,
        target: &ReferenceTarget,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<DynamicObject>, String> {
        if let Some(d) = self
            .matching(target, namespace)
            .find(|d| d.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
        {
            return Ok(as_target(d));
        }
        match self.kube {
            Some(client) => {
                KubeLookup {
                    client,
                    scope: self.scope,
                }
                .get(target, namespace, name)
                .await
            }
            None => Ok(None),
        }
    }

    async fn list(
        &self,
        target: &ReferenceTarget,
        namespace: Option<&str>,
        labels: &str,
    ) -> Result<Option<Vec<DynamicObject>>, String> {
        let mut out: Vec<DynamicObject> = self
            .matching(target, namespace)
            .filter(|d| labels_match(d, labels))
            .filter_map(as_target)
            .collect();
        if let Some(client) = self.kube {
            let live = KubeLookup {
                client,
                scope: self.scope,
            }
            .list(target, namespace, labels)
            .await?;
            for o in live.into_iter().flatten() {
                if !out.iter().any(|m| m.metadata.name == o.metadata.name) {
                    out.push(o);
                }
            }
        }
        Ok(Some(out))
    }
}

/// The manifest applied over the live MR (cluster mode), as `kubectl apply` would leave it:
/// the live object's metadata and status, the manifest's labels and annotations over the
/// live ones, the manifest's spec over the live spec, minus the `forProvider` and
/// `initProvider` fields the last `kubectl apply` set and the manifest no longer has.
fn applied_over(live: &DynamicObject, doc: &Value) -> DynamicObject {
    let mut out = live.clone();
    let spec_live = live.data.get("spec").cloned().unwrap_or(json!({}));
    let spec_doc = doc.get("spec").cloned().unwrap_or(json!({}));
    let mut spec = deep_merge(&spec_live, &spec_doc);
    let last: Option<Value> = live
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("kubectl.kubernetes.io/last-applied-configuration"))
        .and_then(|t| serde_json::from_str(t).ok());
    if let Some(last) = last {
        for block in ["forProvider", "initProvider"] {
            let Some(Value::Object(before)) = last.pointer(&format!("/spec/{block}")) else {
                continue;
            };
            if let Some(Value::Object(now)) = spec.get_mut(block) {
                for k in before.keys() {
                    if spec_doc.get(block).and_then(|b| b.get(k)).is_none() {
                        now.remove(k);
                    }
                }
            }
        }
    }
    if spec != spec_live {
        out.metadata.generation = Some(live.metadata.generation.unwrap_or(1) + 1);
    }
    if let Some(Value::Object(m)) = doc.pointer("/metadata/labels") {
        let l = out.metadata.labels.get_or_insert_with(BTreeMap::new);
        for (k, v) in m {
            l.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
    }
    if let Some(Value::Object(m)) = doc.pointer("/metadata/annotations") {
        let a = out.metadata.annotations.get_or_insert_with(BTreeMap::new);
        for (k, v) in m {
            a.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
    }
    if let Some(d) = out.data.as_object_mut() {
        d.insert("spec".into(), spec);
    }
    out
}

async fn kube_client(path: &Path) -> Result<kube::Client, PreviewError> {
    let kc = kube::config::Kubeconfig::read_from(path)
        .map_err(|e| PreviewError::Cluster(e.to_string()))?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .map_err(|e| PreviewError::Cluster(e.to_string()))?;
    kube::Client::try_from(cfg).map_err(|e| PreviewError::Cluster(e.to_string()))
}

fn api_of(
    client: &kube::Client,
    ar: &ApiResource,
    scope: Scope,
    ns: Option<&str>,
) -> Api<DynamicObject> {
    match (scope, ns) {
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(client.clone(), ns, ar),
        _ => Api::all_with(client.clone(), ar),
    }
}

/// One MR ready to plan.
struct Pending {
    reg: usize,
    scope: Scope,
    object: DynamicObject,
    known: bool,
    source: String,
    /// Set when the preview decided already (refused at admission, unresolved reference).
    decided: Option<Planned>,
    /// Secret values read from the cluster (None: placeholders).
    secrets: Option<BTreeMap<String, SecretString>>,
}

fn planned(action: Action, message: String) -> Planned {
    Planned {
        action,
        external_name: String::new(),
        changes: Vec::new(),
        create: None,
        message,
        notes: Vec::new(),
    }
}

fn item_of(object: &DynamicObject, source: &str, p: Planned) -> Item {
    Item {
        action: p.action.as_str().to_string(),
        api_version: object
            .types
            .as_ref()
            .map(|t| t.api_version.clone())
            .unwrap_or_default(),
        kind: object
            .types
            .as_ref()
            .map(|t| t.kind.clone())
            .unwrap_or_default(),
        namespace: object.metadata.namespace.clone(),
        name: object.metadata.name.clone().unwrap_or_default(),
        external_name: p.external_name,
        source: source.to_string(),
        changes: p.changes,
        create: p.create,
        message: p.message,
        notes: p.notes,
    }
}

/// An item straight from a manifest (skipped, or refused before any step).
fn item_of_doc(doc: &Value, source: &str, action: &str, message: String) -> Item {
    let text = |p: &str| doc.pointer(p).and_then(Value::as_str).map(str::to_string);
    Item {
        action: action.to_string(),
        api_version: text("/apiVersion").unwrap_or_default(),
        kind: text("/kind").unwrap_or_default(),
        namespace: text("/metadata/namespace"),
        name: text("/metadata/name").unwrap_or_default(),
        external_name: String::new(),
        source: source.to_string(),
        changes: Vec::new(),
        create: None,
        message,
        notes: Vec::new(),
    }
}

/// Runs a preview: the report, or the error that made it fail.
pub async fn run(
    provider: &provider_common::Provider,
    family_kinds: &[Arc<crate::FamilyKind>],
    args: &PreviewArgs,
) -> Result<Report, PreviewError> {
    let started = Instant::now();
    if args.files.is_empty() && args.kubeconfig.is_none() {
        return Err(PreviewError::Nothing);
    }
    let kube = match &args.kubeconfig {
        Some(k) => Some(kube_client(k).await?),
        None => None,
    };
    let metrics = ClientMetrics::new();
    let cache = Arc::new(ClientCache::with_metrics(*provider, metrics.clone()).read_only());
    // Observation by list, each list read once for the whole preview.
    cache.set_snapshot_ttl(Some(Duration::from_secs(3600)));
    let regs = crate::adapter::registrations(family_kinds, cache.clone());
    let config = match (&args.provider_config, &kube) {
        (Some(named), Some(kube)) => provider_config(provider, kube, named, args).await?,
        _ => ResolvedConfig {
            config_kind: "ClusterProviderConfig".into(),
            config_name: "preview".into(),
            config_namespace: None,
            config_uid: None,
            url: args.url.clone().unwrap_or_default(),
            credentials: Credentials::Token(SecretString::from(read_token(args)?)),
            credentials_from: Some(match (&args.token_file, &args.token_env) {
                (Some(f), _) => format!("--token-file {}", f.display()),
                (None, Some(v)) => format!("--token-env {v}"),
                _ => "the command line".into(),
            }),
            ca_bundle: None,
        },
    };
    let client = cache
        .client(&config)
        .map_err(|e| PreviewError::Platform(e.to_string()))?;
    let pinged = match provider.ping {
        provider_common::Ping::ArtifactoryVersion => client.artifactory().version().await.map(drop),
        provider_common::Ping::XrayVersion => client.xray().version().await.map(drop),
    };
    pinged.map_err(|e| {
        PreviewError::Platform(format!(
            "cannot connect to JFrog platform {}: {e}",
            config.url
        ))
    })?;
    let index = Index::new(provider.short, &regs);
    let mut admission = Admission::new(provider.short, &regs);
    let default_ns = args.namespace.clone().unwrap_or_else(|| "default".into());

    let mut items: Vec<Option<Item>> = Vec::new();
    let mut pending: Vec<(usize, Pending)> = Vec::new();
    if !args.files.is_empty() {
        let mut docs = load(&args.files)?;
        // Namespaced MRs that name no namespace go to --namespace (as kubectl -n does).
        for d in &mut docs {
            if let Owner::Ours(_, Scope::Namespaced) = index.owner(&d.value)
                && d.value.pointer("/metadata/namespace").is_none()
                && let Some(Value::Object(m)) = d.value.get_mut("metadata")
            {
                m.insert("namespace".into(), Value::String(default_ns.clone()));
            }
        }
        let all: Vec<Value> = docs.iter().map(|d| d.value.clone()).collect();
        for doc in &docs {
            let mut value = doc.value.clone();
            let (reg, scope) = match index.owner(&value) {
                Owner::NotManaged => continue,
                Owner::Other(p) => {
                    items.push(Some(item_of_doc(
                        &value,
                        &doc.source,
                        "skipped",
                        format!("previewed by provider-{p} preview"),
                    )));
                    continue;
                }
                Owner::Unknown => {
                    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
                    let message = format!(
                        "no matches for kind \"{kind}\" in version \"{}\": {} serves no such Kind",
                        value
                            .get("apiVersion")
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                        provider.name
                    );
                    items.push(Some(item_of_doc(&value, &doc.source, "refused", message)));
                    continue;
                }
                Owner::Ours(i, s) => (i, s),
            };
            let info = regs[reg].info();
            let ar = info.api_resource(scope);
            let name = value
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let ns = value
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .map(str::to_string)
                .filter(|_| scope.is_namespaced());
            let live = match &kube {
                Some(c) => match api_of(c, &ar, scope, ns.as_deref()).get_opt(&name).await {
                    Ok(o) => o,
                    Err(e) => return Err(PreviewError::Cluster(e.to_string())),
                },
                None => None,
            };
            let old = live.as_ref().and_then(|l| serde_json::to_value(l).ok());
            // What the API server judges is the object as applied: over the live MR (whose
            // late-initialised fields an apply keeps), else the manifest itself.
            if let Some(l) = &live {
                value = serde_json::to_value(applied_over(l, &value)).unwrap_or(value);
            }
            let decided = admission
                .admit(
                    &info.crd_name(scope),
                    &mut value,
                    old.as_ref(),
                    &info.sensitive_fields,
                )
                .err()
                .map(|m| planned(Action::Refused, m));
            let object: DynamicObject = match serde_json::from_value(value.clone()) {
                Ok(o) => o,
                Err(e) => {
                    return Err(PreviewError::Manifest {
                        path: doc.source.clone(),
                        message: e.to_string(),
                    });
                }
            };
            let known = live.is_some();
            items.push(None);
            pending.push((
                items.len() - 1,
                Pending {
                    reg,
                    scope,
                    object,
                    known,
                    source: doc.source.clone(),
                    decided,
                    secrets: None,
                },
            ));
        }
        resolve_all(&regs, &mut pending, &all, kube.as_ref()).await;
    } else if let Some(c) = &kube {
        for (reg, r) in regs.iter().enumerate() {
            for scope in [Scope::Namespaced, Scope::Cluster] {
                let ar = r.info().api_resource(scope);
                let ns =
                    (!args.all_namespaces && scope.is_namespaced()).then_some(default_ns.as_str());
                let list = match api_of(c, &ar, scope, ns).list(&ListParams::default()).await {
                    Ok(l) => l.items,
                    // The CRD is not installed (not activated): nothing of that Kind.
                    Err(kube::Error::Api(e)) if e.code == 404 => continue,
                    Err(e) => return Err(PreviewError::Cluster(e.to_string())),
                };
                for mut object in list {
                    if object.types.is_none() {
                        object.types = Some(kube::api::TypeMeta {
                            api_version: ar.api_version.clone(),
                            kind: ar.kind.clone(),
                        });
                    }
                    items.push(None);
                    pending.push((
                        items.len() - 1,
                        Pending {
                            reg,
                            scope,
                            object,
                            known: true,
                            source: "cluster".into(),
                            decided: None,
                            secrets: None,
                        },
                    ));
                }
            }
        }
    }
    // Secret values: from the cluster when there is one (as the reconciler reads them), else
    // placeholders that only say "set".
    if let Some(c) = &kube {
        for (_, p) in pending.iter_mut().filter(|(_, p)| p.decided.is_none()) {
            let info = regs[p.reg].info();
            if info.secret_refs.is_empty() && info.whole_secret_refs.is_empty() {
                continue;
            }
            if let Ok(s) = read_secrets(c, info, p.scope, true, &p.object).await {
                p.secrets = Some(s);
            }
        }
    }
    let plans: Vec<(usize, Planned, DynamicObject, String)> =
        futures::stream::iter(pending.into_iter().map(|(slot, p)| {
            let reg = regs[p.reg].clone();
            let config = config.clone();
            async move {
                let object = p.object.clone();
                let planned = match p.decided {
                    Some(d) => d,
                    None => {
                        let secrets = p
                            .secrets
                            .unwrap_or_else(|| placeholder_secrets(reg.info(), &p.object, true));
                        reg.preview(PreviewInput {
                            scope: p.scope,
                            object: p.object,
                            config,
                            secrets,
                            management_policies_enabled: true,
                            known: p.known,
                            timeout: TIMEOUT,
                        })
                        .await
                    }
                };
                (slot, planned, object, p.source)
            }
        }))
        .buffered(CONCURRENCY)
        .collect()
        .await;
    for (slot, p, object, source) in plans {
        items[slot] = Some(item_of(&object, &source, p));
    }
    let items: Vec<Item> = items.into_iter().flatten().collect();
    let refused_writes = client.refused_writes();
    if refused_writes > 0 {
        return Err(PreviewError::WriteAttempted(refused_writes));
    }
    let mut summary: BTreeMap<String, usize> = [
        "create",
        "update",
        "adopt",
        "no change",
        "refused",
        "blocked",
        "skipped",
    ]
    .iter()
    .map(|a| (a.to_string(), 0))
    .collect();
    for i in &items {
        *summary.entry(i.action.clone()).or_default() += 1;
    }
    let (requests, _) = metrics.totals();
    let items = if args.hide_skipped {
        items
            .into_iter()
            .filter(|i| i.action != "skipped")
            .collect()
    } else {
        items
    };
    Ok(Report {
        provider: provider.name.to_string(),
        summary,
        items,
        requests,
        writes: 0,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Step 9 for every pending MR with references: resolved against the manifests and the
/// cluster; one that cannot resolve is blocked with the reconciler's message.
async fn resolve_all(
    regs: &[Arc<dyn KindRegistration>],
    pending: &mut [(usize, Pending)],
    docs: &[Value],
    kube: Option<&kube::Client>,
) {
    for (_, p) in pending.iter_mut().filter(|(_, p)| p.decided.is_none()) {
        let info = regs[p.reg].info();
        if info.references.is_empty() {
            continue;
        }
        let lookup = DocLookup {
            docs,
            kube,
            scope: p.scope,
        };
        let namespace = p.object.metadata.namespace.clone();
        let ctx = RefContext {
            scope: p.scope,
            namespace: namespace.as_deref(),
            controller_uid: None,
        };
        for (key, block) in [
            ("forProvider", "ForProvider"),
            ("initProvider", "InitProvider"),
        ] {
            let Some(mut params) = p.object.data.get("spec").and_then(|s| s.get(key)).cloned()
            else {
                continue;
            };
            match references::resolve_all(&lookup, &ctx, &info.references, &mut params, block).await
            {
                Ok(()) => {
                    if let Some(Value::Object(spec)) = p.object.data.get_mut("spec") {
                        spec.insert(key.to_string(), params);
                    }
                }
                Err(e) => {
                    p.decided = Some(planned(
                        Action::Blocked,
                        format!("cannot resolve references: {}", e.message),
                    ));
                    break;
                }
            }
        }
    }
}

fn show(v: &Option<Value>) -> String {
    match v {
        None => "(unset)".into(),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(v) => v.to_string(),
    }
}

/// One line per change: `~ path: old -> new`, `+ path: (set)` for a secret, `= path:
/// value (late-initialised: written to the MR, not to JFrog)`.
pub fn change_line(c: &FieldChange) -> String {
    match c.kind {
        ChangeKind::Update => format!("~ {}: {} -> {}", c.path, show(&c.old), show(&c.new)),
        ChangeKind::LateInit => format!(
            "= {}: {} (late-initialised from JFrog: written to the managed resource, not to JFrog)",
            c.path,
            show(&c.new)
        ),
        ChangeKind::SecretSet => format!("~ {}: (set)", c.path),
        ChangeKind::SecretChanged => format!("~ {}: (changed)", c.path),
        ChangeKind::SecretCleared => format!("~ {}: (cleared)", c.path),
    }
}

fn create_lines(v: &Value) -> Vec<String> {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, x, out);
                }
            }
            other => out.push(format!("+ forProvider.{prefix} = {other}")),
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out
}

/// The lines under an item: its changes, a create's values, its message and notes.
fn detail_lines(i: &Item) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &i.create {
        out.extend(create_lines(c));
    }
    out.extend(i.changes.iter().map(change_line));
    if !i.message.is_empty() {
        out.push(format!("! {}", i.message));
    }
    out.extend(i.notes.iter().map(|n| format!("note: {n}")));
    out
}

fn summary_line(r: &Report) -> String {
    let order = [
        "create",
        "update",
        "adopt",
        "no change",
        "refused",
        "blocked",
        "skipped",
    ];
    let parts: Vec<String> = order
        .iter()
        .map(|a| format!("{} {a}", r.summary.get(*a).copied().unwrap_or(0)))
        .collect();
    parts.join(", ")
}

/// The text table.
pub fn text(r: &Report) -> String {
    let mut out = format!("{} preview: {}\n", r.provider, summary_line(r));
    // Unchanged and skipped objects are counted in the summary line only.
    let shown: Vec<&Item> = r
        .items
        .iter()
        .filter(|i| !matches!(i.action.as_str(), "no change" | "skipped"))
        .collect();
    if shown.is_empty() {
        out.push_str(&format!(
            "Nothing would change in JFrog. {} JFrog requests, 0 writes, {:.2}s\n",
            r.requests, r.seconds
        ));
        return out;
    }
    let w_action = r
        .items
        .iter()
        .map(|i| i.action.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let w_kind = r
        .items
        .iter()
        .map(|i| i.kind.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let w_name = r
        .items
        .iter()
        .map(|i| i.display_name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:<w_action$}  {:<w_kind$}  {:<w_name$}  EXTERNAL-NAME\n",
        "ACTION", "KIND", "NAME"
    ));
    for i in shown {
        out.push_str(&format!(
            "{:<w_action$}  {:<w_kind$}  {:<w_name$}  {}\n",
            i.action,
            i.kind,
            i.display_name(),
            i.external_name
        ));
        for l in detail_lines(i) {
            out.push_str(&format!("    {l}\n"));
        }
    }
    out.push_str(&format!(
        "{} JFrog requests, 0 writes, {:.2}s\n",
        r.requests, r.seconds
    ));
    out
}

/// The pull-request comment.
pub fn markdown(r: &Report) -> String {
    let mut out = format!("### {} preview\n\n", r.provider);
    out.push_str("| create | update | adopt | no change | refused | blocked | skipped |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|\n");
    let n = |a: &str| r.summary.get(a).copied().unwrap_or(0);
    out.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} | {} |\n\n",
        n("create"),
        n("update"),
        n("adopt"),
        n("no change"),
        n("refused"),
        n("blocked"),
        n("skipped")
    ));
    let interesting: Vec<&Item> = r
        .items
        .iter()
        .filter(|i| !matches!(i.action.as_str(), "no change" | "adopt" | "skipped"))
        .collect();
    if interesting.is_empty() {
        out.push_str("Nothing would change in JFrog.\n\n");
    }
    for i in interesting {
        out.push_str(&format!(
            "#### {} `{}` {}\n\n",
            i.action,
            i.display_name(),
            i.kind
        ));
        if !i.external_name.is_empty() {
            out.push_str(&format!("JFrog identifier: `{}`\n\n", i.external_name));
        }
        let lines = detail_lines(i);
        if !lines.is_empty() {
            out.push_str("```diff\n");
            for l in lines {
                out.push_str(&l);
                out.push('\n');
            }
            out.push_str("```\n\n");
        }
    }
    let adopted: Vec<&Item> = r.items.iter().filter(|i| i.action == "adopt").collect();
    if !adopted.is_empty() {
        out.push_str(&format!(
            "<details><summary>{} adopted without a write</summary>\n\n",
            adopted.len()
        ));
        for i in adopted {
            out.push_str(&format!("- {} `{}`\n", i.kind, i.display_name()));
        }
        out.push_str("\n</details>\n\n");
    }
    out.push_str(&format!(
        "_{} JFrog requests, 0 writes, {:.2}s._\n",
        r.requests, r.seconds
    ));
    out
}

/// The report in `format`.
pub fn render(r: &Report, format: Format) -> String {
    match format {
        Format::Text => text(r),
        Format::Markdown => markdown(r),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}

/// `<provider> preview ...` (the arguments after the subcommand's name): prints the
/// report and returns the exit status (0, 2, or 1 after printing the error).
pub async fn main(
    provider: &provider_common::Provider,
    family_kinds: &[Arc<crate::FamilyKind>],
    args: Vec<String>,
) -> i32 {
    let program = format!("{} preview", provider.name);
    let parsed = match PreviewArgs::try_parse_from(std::iter::once(program).chain(args)) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    match run(provider, family_kinds, &parsed).await {
        Ok(report) => {
            print!("{}", render(&report, parsed.format));
            report.exit_code()
        }
        Err(e) => {
            eprintln!("{}: preview failed: {e}", provider.name);
            1
        }
    }
}

/// A JSON object with `k` set (for tests).
#[cfg(test)]
fn obj(pairs: &[(&str, Value)]) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in pairs {
        m.insert(k.to_string(), v.clone());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CI examples in `docs/` (GitHub Actions, GitLab CI) call `preview` only with flags it
    /// takes: a renamed flag fails here, not in a user's pipeline.
    #[test]
    fn the_ci_examples_call_preview_with_its_flags() {
        use clap::CommandFactory;
        let command = PreviewArgs::command();
        let known: Vec<String> = command
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .chain(["-f".to_string()])
            .collect();
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        for file in ["preview-github-actions.yaml", "preview-gitlab-ci.yml"] {
            let text = std::fs::read_to_string(docs.join(file)).expect("read the CI example");
            // The preview call and its continuation lines.
            let mut call = String::new();
            let mut lines = text.lines();
            while let Some(line) = lines.next() {
                if line.contains(" preview --") {
                    call.push_str(line);
                    let mut last = line;
                    while last.trim_end().ends_with('\\') {
                        last = lines.next().expect("a continuation line");
                        call.push(' ');
                        call.push_str(last);
                    }
                }
            }
            let flags: Vec<&str> = call
                .split_whitespace()
                .filter(|w| w.starts_with('-'))
                .collect();
            assert!(
                flags.contains(&"--format") && flags.contains(&"-f"),
                "{file}: no preview call found ({call})"
            );
            for f in flags {
                assert!(
                    known.iter().any(|k| k == f),
                    "{file}: preview has no flag {f}"
                );
            }
        }
    }

    #[test]
    fn change_lines_never_show_secret_values() {
        let c = FieldChange {
            path: "forProvider.password".into(),
            kind: ChangeKind::SecretChanged,
            old: None,
            new: None,
        };
        assert_eq!(change_line(&c), "~ forProvider.password: (changed)");
        let c = FieldChange {
            path: "forProvider.description".into(),
            kind: ChangeKind::Update,
            old: Some(json!("a")),
            new: Some(json!("b")),
        };
        assert_eq!(change_line(&c), "~ forProvider.description: \"a\" -> \"b\"");
    }

    #[test]
    fn lists_and_streams_are_read_in_order() {
        let mut docs = Vec::new();
        parse_docs(
            "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: a/v1, kind: A, metadata: {name: x}}\n- {apiVersion: a/v1, kind: B, metadata: {name: y}}\n---\n---\napiVersion: a/v1\nkind: C\nmetadata: {name: z}\n",
            "-",
            &mut docs,
        )
        .unwrap();
        let kinds: Vec<&str> = docs
            .iter()
            .map(|d| d.value["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["A", "B", "C"]);
    }

    #[test]
    fn applying_over_a_live_mr_keeps_its_state_and_drops_removed_fields() {
        let live: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
            "kind": "LocalGenericRepository",
            "metadata": {
                "name": "r", "namespace": "default", "uid": "u1", "generation": 3,
                "annotations": {
                    "crossplane.io/external-name": "r",
                    "kubectl.kubernetes.io/last-applied-configuration":
                        "{\"spec\":{\"forProvider\":{\"description\":\"d\",\"notes\":\"n\"}}}"
                }
            },
            "spec": {"forProvider": {"description": "d", "notes": "n", "repoLayoutRef": "simple-default"}},
            "status": {"atProvider": {"id": "r"}}
        }))
        .unwrap();
        let doc = obj(&[
            (
                "apiVersion",
                json!("repository.artifactory.m.crossplane.io/v1alpha1"),
            ),
            ("kind", json!("LocalGenericRepository")),
            ("metadata", json!({"name": "r", "namespace": "default"})),
            ("spec", json!({"forProvider": {"description": "e"}})),
        ]);
        let out = applied_over(&live, &doc);
        assert_eq!(
            out.data["spec"]["forProvider"],
            json!({"description": "e", "repoLayoutRef": "simple-default"}),
            "notes was applied before and is gone from the manifest; the late-initialised layout stays"
        );
        assert_eq!(out.metadata.generation, Some(4));
        assert_eq!(out.metadata.uid.as_deref(), Some("u1"));
        assert_eq!(out.data["status"]["atProvider"]["id"], "r");
        let same = applied_over(&live, &obj(&[("spec", live.data["spec"].clone())]));
        assert_eq!(same.metadata.generation, Some(3));
    }

    #[test]
    fn the_exit_code_says_whether_anything_would_change() {
        let item = |action: &str| Item {
            action: action.into(),
            api_version: String::new(),
            kind: "K".into(),
            namespace: None,
            name: "n".into(),
            external_name: String::new(),
            source: "-".into(),
            changes: Vec::new(),
            create: None,
            message: String::new(),
            notes: Vec::new(),
        };
        let report = |actions: &[&str]| Report {
            provider: "p".into(),
            summary: BTreeMap::new(),
            items: actions.iter().map(|a| item(a)).collect(),
            requests: 0,
            writes: 0,
            seconds: 0.0,
        };
        assert_eq!(report(&["no change", "adopt", "skipped"]).exit_code(), 0);
        assert_eq!(report(&[]).exit_code(), 0);
        for a in ["create", "update", "refused", "blocked"] {
            assert_eq!(report(&["no change", a]).exit_code(), 2, "{a}");
        }
    }
}
