//! Manifests written for the Upjet-generated provider (hmlkao/provider-jfrog-artifactory,
//! generated from terraform-provider-artifactory) apply to ours after only the mechanical
//! change of API group and Kind: `<group>.artifactory.jfrog[.m].crossplane.io` becomes
//! `<group>.artifactory[.m].crossplane.io`, and the repository groups `local`, `remote`,
//! `federated`, `virtual` become `repository` with the class in front of the Kind
//! (`local` `AnsibleRepository` -> `repository` `LocalAnsibleRepository`; Kind names compare
//! ignoring case, as that provider spells some `CRANRepository`, others `CranRepository`).
//!
//! Always: the Upjet-shaped manifests in `testdata/upjet/` (ours, written in that provider's
//! naming from the Terraform docs: single-nested objects, identifiers from the external name,
//! references) are admitted by our CRDs, unknown fields refused as the API server's strict
//! field validation refuses them. On demand: with `UPJET_PROVIDER_DIR` naming a work tree of
//! the Upjet provider, every example manifest of it that its own CRDs admit is admitted by
//! ours (see README.md, "Manifests from the Upjet-generated provider").

use std::path::{Path, PathBuf};

use provider_family_suite::CrdSchemas;
use serde_json::Value;

/// Our (Kind, legacy scope) for an Upjet manifest's apiVersion and Kind, if it is one of
/// that provider's managed resources.
fn mechanical(api_version: &str, kind: &str) -> Option<(String, bool)> {
    let group = api_version.split('/').next()?;
    let (short, legacy) = if let Some(g) = group.strip_suffix(".artifactory.jfrog.m.crossplane.io")
    {
        (g, false)
    } else {
        (
            group.strip_suffix(".artifactory.jfrog.crossplane.io")?,
            true,
        )
    };
    let (our_group, candidate) = match short {
        "local" | "remote" | "federated" | "virtual" => ("repository", format!("{short}{kind}")),
        g => (g, kind.to_string()),
    };
    let found = crate::family_kinds().into_iter().find(|k| {
        let d = &k.resolved().decl;
        d.group == our_group && d.kind.eq_ignore_ascii_case(&candidate)
    })?;
    Some((found.resolved().decl.kind.to_string(), legacy))
}

/// Our admission errors for an Upjet manifest (mechanically renamed), or why it does not map.
fn our_admission(doc: &Value) -> Result<Vec<String>, String> {
    let api = doc["apiVersion"].as_str().unwrap_or("");
    let kind = doc["kind"].as_str().unwrap_or("");
    let (ours, legacy) =
        mechanical(api, kind).ok_or_else(|| format!("{api} {kind}: no Kind of ours"))?;
    let kinds = crate::family_kinds();
    let d = &kinds
        .iter()
        .find(|k| k.resolved().decl.kind == ours)
        .expect("found above")
        .resolved()
        .decl;
    let scope = if legacy { "" } else { ".m" };
    let mut mr = doc.clone();
    mr["apiVersion"] = Value::String(format!(
        "{}.artifactory{scope}.crossplane.io/v1alpha1",
        d.group
    ));
    mr["kind"] = Value::String(ours.clone());
    let schema = CrdSchemas::new("artifactory", &crate::kinds()).schema(d, legacy);
    schema.apply_defaults(&mut mr);
    // kubectl's server-side field validation (Strict) refuses what pruning would drop.
    let mut errors: Vec<String> = schema
        .prune(&mut mr)
        .into_iter()
        .map(|f| format!("unknown field {f:?}"))
        .collect();
    errors.extend(
        schema
            .validate(&mr, None)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.detail)),
    );
    Ok(errors)
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .filter_map(|d| {
            let v: Value = serde::Deserialize::deserialize(d).ok()?;
            (!v.is_null()).then_some(v)
        })
        .collect()
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("entry").path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
    out.sort();
}

#[test]
fn the_mechanical_change_finds_our_kinds() {
    let cases = [
        (
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "AnsibleRepository",
            "LocalAnsibleRepository",
            true,
        ),
        (
            "remote.artifactory.jfrog.crossplane.io/v1alpha1",
            "CRANRepository",
            "RemoteCranRepository",
            true,
        ),
        (
            "federated.artifactory.jfrog.m.crossplane.io/v1alpha1",
            "HuggingFaceMLRepository",
            "FederatedHuggingfacemlRepository",
            false,
        ),
        (
            "user.artifactory.jfrog.m.crossplane.io/v1alpha1",
            "User",
            "User",
            false,
        ),
        (
            "artifact.artifactory.jfrog.crossplane.io/v1alpha1",
            "ItemProperties",
            "ItemProperties",
            true,
        ),
        (
            "lifecycle.artifactory.jfrog.crossplane.io/v1alpha1",
            "ReleaseBundleV2",
            "ReleaseBundleV2",
            true,
        ),
    ];
    for (api, kind, ours, legacy) in cases {
        assert_eq!(
            mechanical(api, kind),
            Some((ours.to_string(), legacy)),
            "{api} {kind}"
        );
    }
    assert_eq!(
        mechanical("artifactory.jfrog.crossplane.io/v1beta1", "ProviderConfig"),
        None
    );
}

/// Our own Upjet-shaped manifests (testdata/upjet): every document is one of our Kinds and
/// is admitted; the refusal check is live (a misspelt member is refused).
#[test]
fn upjet_shaped_manifests_are_admitted_unchanged() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/upjet");
    let mut files = Vec::new();
    yaml_files(&dir, &mut files);
    let mut admitted = 0;
    for f in &files {
        for doc in yaml_docs(f) {
            let errors = our_admission(&doc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(
                errors.is_empty(),
                "{} {}: {errors:?}",
                f.display(),
                doc["metadata"]["name"]
            );
            admitted += 1;
        }
    }
    assert!(admitted >= 12, "{admitted} manifests");
    let mut typo = yaml_docs(&dir.join("user.yaml")).remove(0);
    typo["spec"]["forProvider"]["passwordPolicy"]["digits"] = Value::from(1);
    let errors = our_admission(&typo).expect("maps");
    assert!(errors.iter().any(|e| e.contains("digits")), "{errors:?}");
}

/// With `UPJET_PROVIDER_DIR` (a work tree of hmlkao/provider-jfrog-artifactory with its
/// `examples/` and `package/crds/`): every example of a managed resource that the Upjet
/// provider's own CRD admits is admitted by ours. Without it the test says so and passes.
#[test]
fn the_upjet_providers_examples_are_admitted() {
    let Some(root) = std::env::var_os("UPJET_PROVIDER_DIR").map(PathBuf::from) else {
        eprintln!("UPJET_PROVIDER_DIR is not set: the Upjet provider's examples were not tried");
        return;
    };
    let mut theirs: Vec<(String, crd_schema::Schema)> = Vec::new();
    let mut crd_files = Vec::new();
    yaml_files(&root.join("package/crds"), &mut crd_files);
    for f in crd_files {
        for mut crd in yaml_docs(&f) {
            crd_schema::default_crd(&mut crd);
            let group = crd["spec"]["group"].as_str().unwrap_or("").to_string();
            let kind = crd["spec"]["names"]["kind"]
                .as_str()
                .unwrap_or("")
                .to_string();
            for v in crd["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                let s = crd_schema::Schema::compile(&v["schema"]["openAPIV3Schema"])
                    .unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
                theirs.push((
                    format!("{group}/{}|{kind}", v["name"].as_str().unwrap_or("")),
                    s,
                ));
            }
        }
    }
    let mut examples = Vec::new();
    yaml_files(&root.join("examples"), &mut examples);
    let (mut tried, mut refused_by_theirs, mut failures) = (0, Vec::new(), Vec::new());
    for f in &examples {
        for doc in yaml_docs(f) {
            let api = doc["apiVersion"].as_str().unwrap_or("");
            let kind = doc["kind"].as_str().unwrap_or("");
            if mechanical(api, kind).is_none() {
                continue;
            }
            let key = format!("{api}|{kind}");
            // Some of that provider's examples spell a Kind its CRDs do not have
            // (`CocoapodsRepository` beside `CocoaPodsRepository`): refused there too.
            let Some((_, schema)) = theirs.iter().find(|(k, _)| *k == key) else {
                refused_by_theirs.push(format!("{} (no such Kind there: {key})", f.display()));
                continue;
            };
            let mut mr = doc.clone();
            schema.apply_defaults(&mut mr);
            // As strict field validation: an unknown field is a refusal there too.
            if !schema.prune(&mut mr).is_empty() || !schema.validate(&mr, None).is_empty() {
                refused_by_theirs.push(format!("{} {}", f.display(), doc["metadata"]["name"]));
                continue;
            }
            tried += 1;
            match our_admission(&doc) {
                Ok(e) if e.is_empty() => {}
                Ok(e) => failures.push(format!(
                    "{} {}: {e:?}",
                    f.display(),
                    doc["metadata"]["name"]
                )),
                Err(e) => failures.push(format!("{}: {e}", f.display())),
            }
        }
    }
    eprintln!(
        "{tried} Upjet example manifests tried, all admitted; {} refused by the Upjet provider's own CRDs: {refused_by_theirs:#?}",
        refused_by_theirs.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(tried > 0, "no example found under {}", root.display());
}
