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
        // come in any order; compare them as multisets.
        let (mut a, mut b) = (got.clone(), want.clone());
        a.sort();
        b.sort();
        if a != b {
            mismatches.push(format!("{name}:\n  ours: {got:#?}\n  real: {want:#?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Not a check: prints the CRDs of a directory tree (default: the repository's `crds/`) that
/// `validate_crd` refuses, with their errors. `CRD_DIR=... cargo test -p crd-schema --test
/// real_verdicts -- --ignored --nocapture`.
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
    for f in &files {
        let causes = our_causes(&load_yaml(f));
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
}
