//! Project tasks: `cargo xtask generate` writes the generated files (the Kind declaration
//! tables from the vendored `catalog/`, then the CRDs in `crds/` and the package metadata in
//! `package/`), `cargo xtask check` fails when any of them is stale, and
//! `cargo xtask package` assembles each provider's `package.yaml` (the Crossplane package
//! stream: the meta Provider, then every CRD), and `cargo xtask lines` prints each Kind
//! family's hand-written code lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

#[cfg(test)]
mod citations;
mod descriptions;
mod lines;
#[cfg(test)]
mod modules;
mod nesting;
mod reliability;
mod xpkg;

#[derive(Parser)]
#[command(name = "xtask")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the declaration tables from catalog/, then crds/ and package/ from the code.
    Generate,
    /// Fail when the declaration tables, crds/ or package/ differ from what is generated.
    Check,
    /// Write <out>/<provider>/package.yaml and the package as an OCI image layout
    /// (<out>/<provider>/oci) for every provider.
    Package {
        /// Output directory.
        #[arg(long, default_value = "target/xpkg")]
        out: PathBuf,
        /// Directory holding the built provider binaries (`provider-<name>`, e.g.
        /// `target/provider` after `cargo build --profile provider`) to embed as the runtime
        /// (with the Debian files they need); without it the image holds only the package layer.
        #[arg(long)]
        binaries: Option<PathBuf>,
    },
    /// Print each Kind family's Kinds and hand-written code lines (generated tables and
    /// tests left out) as a Markdown table.
    Lines,
    /// Run the fault suite (e2e tests named `reliability_*`) and write its figures into the
    /// README's Reliability table.
    Reliability {
        /// Also run the long scenarios (ignored by `cargo test --workspace`).
        #[arg(long)]
        long: bool,
        /// Run only the scenarios whose test name contains this (their rows are replaced, the
        /// others kept).
        #[arg(long)]
        filter: Option<String>,
        /// Do not run anything: render the rows already in target/reliability.
        #[arg(long)]
        skip_run: bool,
    },
}

/// One provider as xtask sees it.
struct Provider {
    name: &'static str,
    short: &'static str,
    description: &'static str,
    crds: fn() -> Vec<provider_runtime::crd::GeneratedCrd>,
}

fn providers() -> Vec<Provider> {
    vec![
        Provider {
            name: provider_artifactory::PROVIDER_NAME,
            short: provider_artifactory::SHORT_NAME,
            description: "Crossplane provider for JFrog Artifactory: repositories, webhooks, security, replication, users, lifecycle and artifacts.",
            crds: provider_artifactory::crds,
        },
        Provider {
            name: provider_xray::PROVIDER_NAME,
            short: provider_xray::SHORT_NAME,
            description: "Crossplane provider for JFrog Xray: policies, watches, reports, configuration and webhooks.",
            crds: provider_xray::crds,
        },
        Provider {
            name: provider_project::PROVIDER_NAME,
            short: provider_project::SHORT_NAME,
            description: "Crossplane provider for JFrog Projects.",
            crds: provider_project::crds,
        },
        Provider {
            name: provider_platform::PROVIDER_NAME,
            short: provider_platform::SHORT_NAME,
            description: "Crossplane provider for the JFrog Platform: access, authentication, configuration and lifecycle.",
            crds: provider_platform::crds,
        },
    ]
}

/// The workspace root (xtask lives one level below it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The `package/<provider>/crossplane.yaml` meta Provider (docs/managed-reconciler.md §15.7).
fn crossplane_yaml(p: &Provider) -> String {
    let doc = serde_json::json!({
        "apiVersion": "meta.pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {
            "name": p.name,
            // Crossplane v2 lets the members of a provider family (this label, packages of one
            // registry and organisation) use each other's CRDs: the cross-provider references
            // need it (docs/managed-reconciler.md §15.4).
            "labels": {"pkg.crossplane.io/provider-family": "provider-family-jfrog"},
            "annotations": {
                "meta.crossplane.io/maintainer": "JFrog Crossplane provider maintainers",
                "meta.crossplane.io/source": "github.com/jfrog/crossplane-providers",
                "meta.crossplane.io/license": "Apache-2.0",
                "meta.crossplane.io/description": p.description,
                "meta.crossplane.io/readme": format!("{} manages JFrog objects as Crossplane managed resources. Configure it with a ClusterProviderConfig or ProviderConfig in {}.m.crossplane.io/v1beta1.", p.name, p.short),
            }
        },
        "spec": {
            "crossplane": {"version": ">=v2.0.0"},
            "capabilities": ["safe-start"]
        }
    });
    format!("---\n{}", serde_yaml::to_string(&doc).unwrap_or_default())
}

const REFS_BEGIN: &str = "<!-- references:begin -->";
const REFS_END: &str = "<!-- references:end -->";

/// The README's table of declared references (between the `references:begin`/`end`
/// markers), rendered from each provider's reference table.
fn references_table() -> String {
    let tables: [(
        &str,
        Vec<provider_family::KindDecl>,
        &[provider_family::refs::Reference],
    ); 4] = [
        (
            provider_artifactory::SHORT_NAME,
            provider_artifactory::family_kinds()
                .iter()
                .map(|k| k.resolved().decl)
                .collect(),
            provider_artifactory::references::REFERENCES,
        ),
        (
            provider_xray::SHORT_NAME,
            provider_xray::family_kinds()
                .iter()
                .map(|k| k.resolved().decl)
                .collect(),
            provider_xray::references::REFERENCES,
        ),
        (
            provider_project::SHORT_NAME,
            provider_project::family_kinds()
                .iter()
                .map(|k| k.resolved().decl)
                .collect(),
            provider_project::references::REFERENCES,
        ),
        (
            provider_platform::SHORT_NAME,
            provider_platform::family_kinds()
                .iter()
                .map(|k| k.resolved().decl)
                .collect(),
            provider_platform::references::REFERENCES,
        ),
    ];
    let mut s = String::from(
        "| provider | referring Kinds | field | referenced Kinds | value taken |\n|---|---|---|---|---|\n",
    );
    for (short, decls, table) in &tables {
        for row in provider_family::refs::table_rows(short, decls, table)
            .unwrap_or_else(|e| panic!("the {short} reference table: {e}"))
        {
            s.push_str(&row);
            s.push('\n');
        }
    }
    s
}

/// README.md with the references table regenerated (unchanged when it has no markers).
fn readme_with_references(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("README.md")).ok()?;
    let (head, rest) = text.split_once(REFS_BEGIN)?;
    let (_, tail) = rest.split_once(REFS_END)?;
    Some(format!(
        "{head}{REFS_BEGIN}\n{}{REFS_END}{tail}",
        references_table()
    ))
}

/// Every generated file, by path relative to the workspace root.
fn generated_files() -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    if let Some(readme) = readme_with_references(&root()) {
        out.insert(PathBuf::from("README.md"), readme);
    }
    for p in providers() {
        for crd in (p.crds)() {
            out.insert(
                Path::new("crds").join(p.short).join(crd.file_name()),
                crd.to_yaml(),
            );
        }
        out.insert(
            Path::new("package").join(p.short).join("crossplane.yaml"),
            crossplane_yaml(&p),
        );
    }
    out
}

/// Stale or missing files, and extra files in the generated directories.
fn stale_files(root: &Path) -> Vec<String> {
    let files = generated_files();
    let mut problems = Vec::new();
    for (rel, content) in &files {
        match std::fs::read_to_string(root.join(rel)) {
            Ok(existing) if existing == *content => {}
            Ok(_) => problems.push(format!("{} is stale", rel.display())),
            Err(_) => problems.push(format!("{} is missing", rel.display())),
        }
    }
    for p in providers() {
        let dir = root.join("crds").join(p.short);
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let rel = Path::new("crds").join(p.short).join(entry.file_name());
            if !files.contains_key(&rel) {
                problems.push(format!("{} is not generated by the code", rel.display()));
            }
        }
    }
    problems
}

fn generate(root: &Path) -> anyhow::Result<()> {
    // The declaration tables first: the providers (and so the CRDs below) are built from
    // them. After a catalog change, run this twice: the first run writes the tables, the
    // second (rebuilt with them) the CRDs.
    for rel in catalog_gen::write(root)? {
        println!("wrote {}", rel.display());
    }
    for p in providers() {
        let dir = root.join("crds").join(p.short);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    let files = generated_files();
    for (rel, content) in &files {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("wrote {} files", files.len());
    Ok(())
}

/// The package stream: the meta Provider, then every CRD.
fn package_yaml(p: &Provider) -> String {
    let mut s = crossplane_yaml(p);
    for crd in (p.crds)() {
        s.push_str(&crd.to_yaml());
    }
    s
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let root = root();
    match cli.command {
        Command::Generate => generate(&root),
        Command::Check => {
            let mut problems = catalog_gen::stale(&root)?;
            problems.extend(stale_files(&root));
            if problems.is_empty() {
                println!("generated files are up to date");
                Ok(())
            } else {
                bail!("{}\nrun `cargo xtask generate`", problems.join("\n"))
            }
        }
        Command::Lines => {
            print!("{}", lines::table(&lines::families(&root)?));
            Ok(())
        }
        Command::Reliability {
            long,
            filter,
            skip_run,
        } => reliability::run(&root, long, filter.as_deref(), skip_run),
        Command::Package { out, binaries } => {
            for p in providers() {
                let dir = root.join(&out).join(p.name);
                let binary = binaries.as_ref().map(|b| b.join(p.name));
                let w = package(&p, &dir, binary.as_deref())?;
                println!(
                    "{}: {} ({} layers, {:.1} MiB compressed, {:.1} MiB uncompressed), manifest {}",
                    p.name,
                    dir.join("oci").display(),
                    w.manifest["layers"].as_array().map_or(0, Vec::len),
                    w.compressed as f64 / 1048576.0,
                    w.uncompressed as f64 / 1048576.0,
                    w.manifest_digest
                );
            }
            Ok(())
        }
    }
}

/// Writes `<dir>/package.yaml` and the package image `<dir>/oci` (with the runtime when
/// `binary` is given).
fn package(p: &Provider, dir: &Path, binary: Option<&Path>) -> anyhow::Result<xpkg::Written> {
    std::fs::create_dir_all(dir)?;
    let stream = package_yaml(p);
    std::fs::write(dir.join("package.yaml"), &stream)?;
    let runtime = match binary {
        Some(b) => Some(xpkg::Runtime {
            base: xpkg::base(b).with_context(|| format!("the base of {}", b.display()))?,
            binary: std::fs::read(b).with_context(|| format!("reading {}", b.display()))?,
        }),
        None => None,
    };
    let oci = dir.join("oci");
    if oci.exists() {
        std::fs::remove_dir_all(&oci)?;
    }
    let meta = xpkg::Meta {
        name: p.name,
        description: p.description,
        version: env!("CARGO_PKG_VERSION"),
    };
    let written = xpkg::write_layout(&oci, &meta, &stream, runtime.as_ref())?;
    // Read it back as Crossplane's package parser does.
    let (name, crds) = xpkg::parse_package(&oci)
        .map_err(|e| anyhow::anyhow!("{}: not a valid package: {e}", oci.display()))?;
    anyhow::ensure!(
        name == p.name,
        "{}: the package names {name}",
        oci.display()
    );
    anyhow::ensure!(!crds.is_empty(), "{}: no CRDs", oci.display());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_are_up_to_date() {
        let problems = stale_files(&root());
        assert!(
            problems.is_empty(),
            "crds/ or package/ differ from what the code generates:\n{}\nrun `cargo xtask generate`",
            problems.join("\n")
        );
    }

    /// Checklist item 108, for the package stream (the OCI layer annotation is not built
    /// here: see the package README).
    #[test]
    fn conformance_108_package_lint() {
        for p in providers() {
            let stream = package_yaml(&p);
            let mut providers_seen = 0;
            let mut crds = 0;
            for doc in serde_yaml::Deserializer::from_str(&stream) {
                let v = serde_json::to_value(serde_yaml::Value::deserialize(doc).unwrap()).unwrap();
                match (v["apiVersion"].as_str(), v["kind"].as_str()) {
                    (Some("meta.pkg.crossplane.io/v1"), Some("Provider")) => {
                        providers_seen += 1;
                        assert_eq!(v["spec"]["capabilities"], serde_json::json!(["safe-start"]));
                        assert_eq!(v["metadata"]["name"], p.name);
                        // The package is its own runtime image (no controller image), and
                        // Crossplane v2 reads no permissionRequests: the family label is what
                        // grants the cross-provider reads.
                        assert!(v["spec"].get("controller").is_none(), "{}", p.name);
                        assert_eq!(
                            v["metadata"]["labels"]["pkg.crossplane.io/provider-family"],
                            "provider-family-jfrog"
                        );
                        for a in ["maintainer", "source", "license", "description", "readme"] {
                            assert!(
                                v["metadata"]["annotations"][format!("meta.crossplane.io/{a}")]
                                    .is_string()
                            );
                        }
                    }
                    (Some("apiextensions.k8s.io/v1"), Some("CustomResourceDefinition")) => {
                        crds += 1
                    }
                    other => panic!("unexpected document {other:?} in {}", p.name),
                }
            }
            assert_eq!(providers_seen, 1, "{}", p.name);
            assert!(crds >= 6, "{}: {crds} CRDs", p.name);
        }
    }

    /// A small dynamically linked binary of this machine, standing in for a provider.
    fn stand_in_binary() -> PathBuf {
        ["/usr/bin/true", "/bin/true"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .expect("/usr/bin/true")
    }

    /// Checklist item 108 for the image, as Crossplane's package parser reads it, and the
    /// runtime image: base files, binary entrypoint, user, ports, labels.
    #[test]
    fn package_image_is_a_crossplane_package_and_a_runtime_image() {
        let bin = stand_in_binary();
        for p in providers() {
            let dir = std::env::temp_dir().join(format!("xpkg-{}-{}", p.name, std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let w = package(&p, &dir, Some(&bin)).unwrap();
            let oci = dir.join("oci");
            let (name, crds) = xpkg::parse_package(&oci).unwrap();
            assert_eq!(name, p.name);
            let want: std::collections::BTreeSet<String> = (p.crds)()
                .iter()
                .map(|c| {
                    let v: serde_json::Value = serde_yaml::from_str(&c.to_yaml()).unwrap();
                    v["metadata"]["name"].as_str().unwrap().to_string()
                })
                .collect();
            let got: std::collections::BTreeSet<String> = crds.iter().cloned().collect();
            assert_eq!(got.len(), crds.len(), "{}: a CRD twice", p.name);
            assert_eq!(got, want, "{}: the package's CRDs", p.name);
            assert!(crds.iter().all(|c| c.contains(&format!(".{}.", p.short))));

            let layers = w.manifest["layers"].as_array().unwrap();
            assert_eq!(layers.len(), 3);
            assert!(
                layers
                    .iter()
                    .all(|l| l["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip")
            );
            let config: serde_json::Value = serde_json::from_slice(
                &xpkg::read_blob(&oci, w.manifest["config"]["digest"].as_str().unwrap()).unwrap(),
            )
            .unwrap();
            let c = &config["config"];
            assert_eq!(c["Entrypoint"][0], format!("/{}", xpkg::BINARY_PATH));
            assert_eq!(c["User"], "2000:2000");
            assert_eq!(
                c["ExposedPorts"],
                serde_json::json!({"8080/tcp": {}, "8081/tcp": {}})
            );
            assert_eq!(c["Labels"]["org.opencontainers.image.title"], p.name);
            assert_eq!(config["rootfs"]["diff_ids"].as_array().unwrap().len(), 3);

            // The base: loader, libc, CA bundle, the user, /tmp.
            let base = xpkg::read_layer(
                &xpkg::read_blob(&oci, layers[0]["digest"].as_str().unwrap()).unwrap(),
            )
            .unwrap();
            let find = |path: &str| base.iter().find(|e| e.0 == path);
            let passwd = find("etc/passwd").and_then(|e| e.1.clone()).unwrap();
            assert!(
                String::from_utf8(passwd)
                    .unwrap()
                    .contains("provider:x:2000:2000:")
            );
            assert_eq!(find("tmp").unwrap().2, 0o1777);
            assert_eq!(find("home/provider").unwrap().3, 2000);
            assert!(find("etc/ssl/certs/ca-certificates.crt").is_some());
            assert!(base.iter().any(|e| e.0.contains("ld-linux")), "no loader");
            assert!(base.iter().any(|e| e.0.ends_with("libc.so.6")), "no libc");
            let mut paths: Vec<&String> = base.iter().map(|e| &e.0).collect();
            let listed = paths.clone();
            paths.sort();
            assert_eq!(paths, listed, "entries not sorted");
            let binary = xpkg::read_layer(
                &xpkg::read_blob(&oci, layers[1]["digest"].as_str().unwrap()).unwrap(),
            )
            .unwrap();
            let entry = binary.iter().find(|e| e.0 == xpkg::BINARY_PATH).unwrap();
            assert_eq!(
                entry.1.as_deref(),
                Some(std::fs::read(&bin).unwrap().as_slice())
            );
            assert_eq!(entry.2, 0o755);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    /// `examples/install/`: a Provider per package with its DeploymentRuntimeConfig (flags,
    /// memory), a ClusterProviderConfig per provider of a Kind the provider serves, and
    /// activation patterns that each match CRDs of the packages.
    #[test]
    fn install_examples_are_complete() {
        let dir = root().join("examples/install");
        let mut docs = Vec::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            for doc in serde_yaml::Deserializer::from_str(&text) {
                docs.push(
                    serde_json::to_value(serde_yaml::Value::deserialize(doc).unwrap()).unwrap(),
                );
            }
        }
        let find = |api: &str, kind: &str, name: &str| {
            docs.iter()
                .find(|d| {
                    d["apiVersion"] == api && d["kind"] == kind && d["metadata"]["name"] == name
                })
                .unwrap_or_else(|| panic!("no {kind} {name} ({api}) in examples/install"))
        };
        let mut crd_names = Vec::new();
        for p in providers() {
            let provider = find("pkg.crossplane.io/v1", "Provider", p.name);
            assert!(
                provider["spec"]["package"]
                    .as_str()
                    .unwrap()
                    .contains(p.name)
            );
            assert!(provider["spec"]["packagePullPolicy"].is_string());
            let rc = &provider["spec"]["runtimeConfigRef"];
            assert_eq!(rc["kind"], "DeploymentRuntimeConfig");
            let drc = find(
                "pkg.crossplane.io/v1beta1",
                "DeploymentRuntimeConfig",
                rc["name"].as_str().unwrap(),
            );
            let c = &drc["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0];
            assert_eq!(c["name"], "package-runtime");
            let args: Vec<&str> = c["args"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|a| a.as_str())
                .collect();
            for flag in [
                "--poll",
                "--max-reconcile-rate",
                "--enable-management-policies",
            ] {
                assert!(
                    args.iter().any(|a| a.starts_with(flag)),
                    "{}: no {flag}",
                    p.name
                );
            }
            assert!(c["resources"]["requests"]["memory"].is_string());
            assert!(c["resources"]["limits"]["memory"].is_string());
            let group = format!("{}.m.crossplane.io", p.short);
            find(
                &format!("{group}/v1beta1"),
                "ClusterProviderConfig",
                "default",
            );
            for crd in (p.crds)() {
                let v: serde_json::Value = serde_yaml::from_str(&crd.to_yaml()).unwrap();
                crd_names.push(v["metadata"]["name"].as_str().unwrap().to_string());
            }
            assert!(
                crd_names
                    .iter()
                    .any(|n| n == &format!("clusterproviderconfigs.{group}"))
            );
        }
        // Active-active replicas: more shards than replicas, a key the providers accept.
        let sharded = find(
            "pkg.crossplane.io/v1beta1",
            "DeploymentRuntimeConfig",
            "provider-artifactory-sharded",
        );
        let spec = &sharded["spec"]["deploymentTemplate"]["spec"];
        let replicas = spec["replicas"].as_u64().expect("replicas");
        let args = spec["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .unwrap();
        let arg = |flag: &str| {
            args.iter()
                .filter_map(|a| a.as_str()?.strip_prefix(flag))
                .next()
                .unwrap_or_else(|| panic!("the sharded example has no {flag}"))
        };
        let shards: u64 = arg("--shards=").parse().unwrap();
        assert!(
            replicas > 1 && shards >= replicas,
            "{replicas} replicas, {shards} shards"
        );
        assert!(["uid", "providerconfig"].contains(&arg("--shard-by=")));
        let policy = docs
            .iter()
            .find(|d| d["kind"] == "ManagedResourceActivationPolicy")
            .expect("an activation policy");
        assert_eq!(policy["apiVersion"], "apiextensions.crossplane.io/v1alpha1");
        for pattern in policy["spec"]["activate"].as_array().unwrap() {
            let suffix = pattern.as_str().unwrap().strip_prefix('*').unwrap();
            assert!(
                crd_names.iter().any(|n| n.ends_with(suffix)),
                "{pattern} activates nothing"
            );
        }
    }

    /// Two builds give the same blobs, so the same manifest digest.
    #[test]
    fn package_builds_are_reproducible() {
        let bin = stand_in_binary();
        let p = providers()
            .into_iter()
            .find(|p| p.short == "project")
            .unwrap();
        let mut digests = Vec::new();
        let mut blobs = Vec::new();
        for run in 0..2 {
            let dir = std::env::temp_dir().join(format!("xpkg-repro-{run}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            digests.push(package(&p, &dir, Some(&bin)).unwrap().manifest_digest);
            let mut names: Vec<String> = std::fs::read_dir(dir.join("oci/blobs/sha256"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect();
            names.sort();
            blobs.push((names, std::fs::read(dir.join("oci/index.json")).unwrap()));
            let _ = std::fs::remove_dir_all(&dir);
        }
        assert_eq!(digests[0], digests[1]);
        assert_eq!(blobs[0], blobs[1]);
        assert_eq!(blobs[0].0.len(), 5, "3 layers, config, manifest");
    }

    use serde::Deserialize as _;
}
