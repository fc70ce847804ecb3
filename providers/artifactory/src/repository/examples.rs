//! Example manifests for every repository Kind, generated from the declarations and checked
//! in under `examples/artifactory/repository/` (a test fails when they are stale; run the
//! tests with `UPDATE_EXAMPLES=1` to rewrite them).
//!
//! Each namespaced example is valid as is: remote repositories name a real upstream, virtual
//! repositories aggregate the local and remote examples of their package type, federated
//! repositories name a member on a second (example) instance. A few legacy cluster-scoped
//! examples sit in `legacy/`.

use provider_family::KindDecl;
use provider_family::examples::{manifest, to_yaml};
use serde_json::{Map, Value, json};

use super::tables::KINDS;
use super::{Class, class, package_type};

/// Kinds that get a legacy (cluster-scoped) example too.
pub const LEGACY_KINDS: &[&str] = &[
    "LocalGenericRepository",
    "RemoteNPMRepository",
    "VirtualNPMRepository",
    "FederatedGenericRepository",
];

/// `LocalDockerV2Repository` → `local-docker-v2`.
pub fn kebab(kind: &str) -> String {
    provider_family::examples::kebab(kind, "Repository")
}

/// The repository key (metadata.name) of a Kind's example.
pub fn example_key(kind: &str, legacy: bool) -> String {
    if legacy {
        format!("legacy-{}", kebab(kind))
    } else {
        format!("example-{}", kebab(kind))
    }
}

/// A realistic upstream for a remote repository of a package type.
fn upstream(package_type: &str) -> &'static str {
    match package_type {
        "aieditorextensions" => "https://open-vsx.org",
        "alpine" => "https://dl-cdn.alpinelinux.org/alpine",
        "bazelmodules" => "https://bcr.bazel.build",
        "bower" => "https://github.com",
        "cargo" => "https://index.crates.io",
        "chef" => "https://supermarket.chef.io",
        "cocoapods" => "https://github.com",
        "composer" => "https://github.com",
        "conan" => "https://center2.conan.io",
        "conda" => "https://repo.anaconda.com/pkgs/main",
        "cran" => "https://cran.r-project.org",
        "debian" => "http://deb.debian.org/debian",
        "docker" | "oci" => "https://registry-1.docker.io",
        "helmoci" => "https://registry-1.docker.io",
        "gems" => "https://rubygems.org",
        "generic" => "https://downloads.example.com/releases",
        "gitlfs" => "https://github.com",
        "go" => "https://proxy.golang.org",
        "gradle" | "maven" | "ivy" | "sbt" => "https://repo1.maven.org/maven2",
        "helm" => "https://charts.bitnami.com/bitnami",
        "hex" => "https://repo.hex.pm",
        "jetbrainsplugins" => "https://plugins.jetbrains.com",
        "nix" => "https://cache.nixos.org",
        "nuget" => "https://www.nuget.org",
        "opkg" => "https://downloads.openwrt.org",
        "p2" => "https://download.eclipse.org/releases/latest",
        "pub" => "https://pub.dev",
        "puppet" => "https://forgeapi.puppet.com",
        "pypi" => "https://files.pythonhosted.org",
        "rpm" => "https://dl.fedoraproject.org/pub/epel",
        "swift" => "https://github.com",
        "terraform" => "https://github.com",
        "vcs" => "https://github.com",
        _ => "https://upstream.example.com",
    }
}

fn class_word(c: Class) -> &'static str {
    match c {
        Class::Local => "Local",
        Class::Remote => "Remote",
        Class::Virtual => "Virtual",
        Class::Federated => "Federated",
    }
}

/// `forProvider` of a Kind's example.
pub fn example_params(d: &KindDecl, legacy: bool) -> Value {
    let mut p = Map::new();
    p.insert(
        "description".into(),
        json!(format!(
            "{} {} repository managed by Crossplane",
            class_word(class(d)),
            package_type(d)
        )),
    );
    let has = |crd: &str| {
        d.resolve()
            .map(|k| k.field(crd).is_some_and(|f| !f.status_only))
            .unwrap_or(false)
    };
    match class(d) {
        Class::Local => {
            p.insert("xrayIndex".into(), json!(true));
        }
        Class::Remote => {
            let needs_url = d
                .resolve()
                .map(|k| k.field("url").is_some_and(|f| f.required))
                .unwrap_or(true);
            if needs_url {
                p.insert("url".into(), json!(upstream(package_type(d))));
            }
            p.insert("storeArtifactsLocally".into(), json!(true));
        }
        Class::Virtual => {
            let mut members = Vec::new();
            let mut deploy = None;
            for c in [Class::Local, Class::Remote] {
                for m in KINDS.iter().filter(|m| class(m) == c) {
                    // Docker V1 is legacy; the V2 local is the member of the docker virtual.
                    if package_type(m) != package_type(d) || m.kind.contains("V1") {
                        continue;
                    }
                    // One member per class.
                    if members.iter().any(|(cls, _): &(Class, String)| *cls == c) {
                        continue;
                    }
                    if legacy && !LEGACY_KINDS.contains(&m.kind) {
                        continue;
                    }
                    let key = example_key(m.kind, legacy);
                    if c == Class::Local {
                        deploy = Some(key.clone());
                    }
                    members.push((c, key));
                }
            }
            p.insert(
                "repositories".into(),
                Value::Array(members.into_iter().map(|(_, k)| json!(k)).collect()),
            );
            if let Some(k) = deploy {
                p.insert("defaultDeploymentRepo".into(), json!(k));
            }
        }
        Class::Federated => {
            p.insert(
                "member".into(),
                json!([{
                    "url": format!("https://jfrog-eu.example.com/artifactory/{}", example_key(d.kind, legacy)),
                    "enabled": true
                }]),
            );
        }
    }
    if has("hexPrimaryKeypairRef") {
        p.insert("hexPrimaryKeypairRef".into(), json!("hex-signing-keypair"));
    }
    if has("publicKey") {
        p.insert(
            "publicKey".into(),
            json!("-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n"),
        );
    }
    Value::Object(p)
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl, legacy: bool) -> Value {
    manifest(
        d,
        &example_key(d.kind, legacy),
        example_params(d, legacy),
        legacy,
    )
}

/// Every example file: (path relative to `examples/artifactory/repository/`, content).
pub fn example_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in KINDS {
        out.push((
            format!("{}.yaml", kebab(d.kind)),
            to_yaml(&example(d, false)),
        ));
    }
    for d in KINDS.iter().filter(|d| LEGACY_KINDS.contains(&d.kind)) {
        out.push((
            format!("legacy/{}.yaml", kebab(d.kind)),
            to_yaml(&example(d, true)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        // EXAMPLES_DIR lets the tests run from another crate layout.
        std::env::var_os("EXAMPLES_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../examples/artifactory/repository")
            })
    }

    #[test]
    fn kebab_names() {
        assert_eq!(kebab("LocalDockerV2Repository"), "local-docker-v2");
        assert_eq!(kebab("RemoteNPMRepository"), "remote-npm");
        assert_eq!(
            kebab("LocalTerraformModuleRepository"),
            "local-terraform-module"
        );
        assert_eq!(kebab("RemoteP2Repository"), "remote-p2");
    }

    #[test]
    fn examples_are_current() {
        let files = example_files();
        assert_eq!(files.len(), KINDS.len() + LEGACY_KINDS.len());
        let stale = provider_family::examples::check_files(&dir(), &files);
        assert!(
            stale.is_empty(),
            "stale examples (run the tests with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }

    #[test]
    fn every_example_sets_required_params_and_valid_keys() {
        for d in KINDS {
            let k = d.resolve().expect("composes");
            let ex = example(d, false);
            let fp = &ex["spec"]["forProvider"];
            for f in k.params().filter(|f| f.required) {
                assert!(fp.get(f.crd).is_some(), "{}: {} missing", d.kind, f.crd);
            }
            let key = example_key(d.kind, false);
            assert!(key.len() <= 58 && !key.ends_with("-cache"), "{key}");
            assert_eq!(key, key.to_lowercase());
            if class(d) == Class::Virtual {
                // Every member is another example.
                for m in fp["repositories"].as_array().expect("repositories") {
                    let m = m.as_str().expect("key");
                    assert!(
                        KINDS.iter().any(|o| example_key(o.kind, false) == m),
                        "{}: member {m} has no example",
                        d.kind
                    );
                }
            }
        }
    }
}
