//! CRD verdicts of a real kube-apiserver (v1.37.2) on synthetic CRDs that exercise the CEL cost
//! estimate (and the rest of CRD validation they touch), replayed against `validate_crd`.
//! How the verdicts were recorded: `tests/real_verdicts/README.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_verdicts")
}

/// The errors `validate_crd` gives for a CRD, as `field: message` (the causes of the `Status`
/// kube-apiserver returns).
fn our_causes(crd: &Value) -> Vec<String> {
    let mut crd = crd.clone();
    crd_schema::default_crd(&mut crd);
    crd_schema::validate_crd(&crd, None)
        .iter()
        .map(|e| format!("{}: {}", e.field, e.body()))
        .collect()
}

fn load_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

#[test]
fn verdicts_match_real_kube_apiserver() {
    let recorded: BTreeMap<String, Vec<String>> = serde_json::from_str(
        &std::fs::read_to_string(dir().join("verdicts.json")).expect("verdicts.json"),
    )
    .expect("verdicts.json is a map of file name to causes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir().join("crds"))
        .expect("crds dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        recorded.len(),
        "every fixture CRD has a recorded verdict"
    );
    let mut mismatches = Vec::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let want = recorded
            .get(name)
            .unwrap_or_else(|| panic!("no recorded verdict for {name}"));
        let got = our_causes(&load_yaml(f));
        // kube-apiserver walks properties in Go map order, so errors of different properties
        // come in any order; compare them as multisets, except for `case-order-*` (one
        // property path per node), whose order is kube-apiserver's.
        let (mut a, mut b) = (got.clone(), want.clone());
        if !name.starts_with("case-order-") {
            a.sort();
            b.sort();
        }
        if a != b {
            mismatches.push(format!("{name}:\n  ours: {got:#?}\n  real: {want:#?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Not a check: prints the CRDs of a directory tree (default: the repository's `crds/`) that
/// `validate_crd` refuses, with their errors. `CRD_DIR=... cargo test -p crd-schema --test
/// real_verdicts -- --ignored --nocapture report_crd_dir`.
#[test]
#[ignore = "a report over a directory of CRDs"]
fn report_crd_dir() {
    let root = std::env::var("CRD_DIR").map_or_else(
        |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crds"),
        PathBuf::from,
    );
    let mut files = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let start = std::time::Instant::now();
    let mut refused = 0;
    let mut all = BTreeMap::new();
    for f in &files {
        let causes = our_causes(&load_yaml(f));
        all.insert(f.display().to_string(), causes.clone());
        if !causes.is_empty() {
            refused += 1;
            println!("REFUSED {}", f.display());
            for c in causes {
                println!("  {c}");
            }
        }
    }
    println!(
        "{refused} of {} refused ({:?})",
        files.len(),
        start.elapsed()
    );
    // With CRD_REPORT_JSON set, also writes every file's causes there (to compare with a
    // real server's answers on the same files).
    if let Ok(out) = std::env::var("CRD_REPORT_JSON") {
        let text = serde_json::to_string_pretty(&all).expect("json");
        std::fs::write(out, text).expect("write report");
    }
}

/// Writes `crds/probe-<name>.yaml` for every probe of `probes.yaml` (see there). Not a check.
#[test]
#[ignore = "regenerates fixture files"]
fn write_probe_fixtures() {
    let probes = load_yaml(&dir().join("probes.yaml"));
    let schemas = &probes["schemas"];
    let list_maps: Vec<&str> = probes["listMap"]
        .as_array()
        .expect("listMap")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let group = "cost.example.com";
    for (name, rule) in probes["probes"].as_object().expect("probes") {
        let rule = rule.as_str().expect("a rule");
        let schema_name = if name.starts_with("string64-") {
            "str64"
        } else if name.starts_with("string-") {
            "str"
        } else {
            "obj"
        };
        let mut items = schemas[schema_name].clone();
        let cost = crd_schema::cost::rule_cost(&items, rule, false)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // About 1.2 times the per-rule limit in total.
        let max_items = (12_000_000u64.div_ceil(cost.max(1))).max(1);
        items["x-kubernetes-validations"] = serde_json::json!([{ "rule": rule }]);
        let mut list = serde_json::json!({"type": "array", "maxItems": max_items, "items": items});
        if list_maps.contains(&name.as_str()) {
            list["x-kubernetes-list-type"] = "map".into();
            list["x-kubernetes-list-map-keys"] = serde_json::json!(["name"]);
        }
        let plural = format!("probe{}", name.replace('-', ""));
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": plural, "kind": format!("K{plural}"),
                          "listKind": format!("K{plural}List")},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": {"probe": list}}}}}}]
            }
        });
        let text = format!(
            "# Our estimate of one evaluation: {cost}; maxItems {max_items}.\n{}",
            serde_yaml::to_string(&crd).expect("yaml")
        );
        std::fs::write(dir().join(format!("crds/probe-{name}.yaml")), text).expect("write");
    }
}
