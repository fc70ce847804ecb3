//! Project tasks: `cargo xtask generate` writes the generated files (the Kind declaration
//! tables from the vendored `catalog/`, then the CRDs in `crds/` and the package metadata in
//! `package/`), `cargo xtask check` fails when any of them is stale, and
//! `cargo xtask package` assembles each provider's `package.yaml` (the Crossplane package
//! stream: the meta Provider, then every CRD).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

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
        /// Directory holding the built provider binaries (`provider-<name>`) to embed as the
        /// runtime; without it the image holds only the package layer.
        #[arg(long)]
        binaries: Option<PathBuf>,
    },
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

/// The `package/<provider>/crossplane.yaml` meta Provider (reference §15.7).
fn crossplane_yaml(p: &Provider) -> String {
    let doc = serde_json::json!({
        "apiVersion": "meta.pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {
            "name": p.name,
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

/// Every generated file, by path relative to the workspace root.
fn generated_files() -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
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
        Command::Reliability {
            long,
            filter,
            skip_run,
        } => reliability::run(&root, long, filter.as_deref(), skip_run),
        Command::Package { out, binaries } => {
            for p in providers() {
                let dir = root.join(&out).join(p.name);
                std::fs::create_dir_all(&dir)?;
                let stream = package_yaml(&p);
                std::fs::write(dir.join("package.yaml"), &stream)?;
                let binary = match &binaries {
                    Some(b) => Some(
                        std::fs::read(b.join(p.name))
                            .with_context(|| format!("reading the {} binary", p.name))?,
                    ),
                    None => None,
                };
                let oci = dir.join("oci");
                if oci.exists() {
                    std::fs::remove_dir_all(&oci)?;
                }
                xpkg::write_layout(&oci, &stream, binary.as_deref())?;
                println!(
                    "wrote {} and {}",
                    dir.join("package.yaml").display(),
                    oci.display()
                );
            }
            Ok(())
        }
    }
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
                        assert!(v["spec"].get("controller").is_none());
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

            // The OCI layout: the package layer is annotated base, recorded as a config
            // label, and holds package.yaml at its root; the binary is the entrypoint.
            let dir = std::env::temp_dir().join(format!("xpkg-{}-{}", p.name, std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let manifest = xpkg::write_layout(&dir, &stream, Some(b"#!/bin/true\n")).unwrap();
            let layers = manifest["layers"].as_array().unwrap();
            let base: Vec<&serde_json::Value> = layers
                .iter()
                .filter(|l| l["annotations"]["io.crossplane.xpkg"] == "base")
                .collect();
            assert_eq!(base.len(), 1);
            let digest = base[0]["digest"].as_str().unwrap();
            let files = xpkg::untar(&xpkg::read_blob(&dir, digest).unwrap());
            assert_eq!(files.len(), 1);
            assert_eq!(files[0].0, "package.yaml");
            assert_eq!(String::from_utf8(files[0].1.clone()).unwrap(), stream);
            let config: serde_json::Value = serde_json::from_slice(
                &xpkg::read_blob(&dir, manifest["config"]["digest"].as_str().unwrap()).unwrap(),
            )
            .unwrap();
            assert_eq!(
                config["config"]["Labels"][format!("io.crossplane.xpkg:{digest}")],
                "base"
            );
            assert_eq!(
                config["config"]["Entrypoint"][0],
                format!("/{}", xpkg::BINARY_PATH)
            );
            assert_eq!(config["config"]["User"], "2000:2000");
            assert_eq!(config["rootfs"]["diff_ids"].as_array().unwrap().len(), 2);
            let index: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
            assert_eq!(index["manifests"][0]["mediaType"], xpkg::MANIFEST);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    use serde::Deserialize as _;
}
