//! The fault suite's bad-input scenario (issue 17): every invalid manifest of the corpus in
//! `tests/corpus/bad-input/` (wrong types, unknown fields, bad enums, missing required
//! parameters, rules across fields, invalid keys, references to missing ProviderConfigs,
//! missing Secrets and Secret keys, for every provider) is refused at admission or becomes
//! `Synced=False` with a message naming what is wrong, and JFrog sees no write at all.
//!
//! Run: `cargo build -p sandbox && RELIABILITY_OUT=$PWD/target/reliability cargo test -p e2e
//! --test reliability_input -- --nocapture`.

use std::time::{Duration, Instant};

use e2e::reliability::{Row, record};
use e2e::{Mr, Sandbox, SandboxOptions, read_manifests, repo_root, writes};
use serde_json::Value;

const EXPECT: &str = "bad-input.e2e/expect";
const NAMES: &str = "bad-input.e2e/names";

/// One corpus case: the manifest, the outcome it must have and the text its refusal names.
struct Case {
    doc: Value,
    expect: String,
    names: String,
}

fn annotation(doc: &Value, key: &str) -> Option<String> {
    doc["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_string)
}

fn display(doc: &Value) -> String {
    format!(
        "{} {}",
        doc["kind"].as_str().unwrap_or("?"),
        doc["metadata"]["name"].as_str().unwrap_or("?")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliability_bad_input() {
    let docs = read_manifests(&repo_root().join("tests/corpus/bad-input"));
    let (cases, fixtures): (Vec<Value>, Vec<Value>) = docs
        .into_iter()
        .partition(|d| annotation(d, EXPECT).is_some());
    let cases: Vec<Case> = cases
        .into_iter()
        .map(|doc| Case {
            expect: annotation(&doc, EXPECT).expect("partitioned on it"),
            names: annotation(&doc, NAMES)
                .unwrap_or_else(|| panic!("{} has no {NAMES} annotation", display(&doc))),
            doc,
        })
        .collect();
    assert!(cases.len() >= 20, "the corpus has {} cases", cases.len());
    // Secret values of the corpus: they must not reach any output.
    let secret_values: Vec<String> = fixtures
        .iter()
        .filter(|d| d["kind"] == "Secret")
        .flat_map(|d| {
            d["stringData"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(_, v)| v.as_str().map(str::to_string))
        })
        .collect();

    // The hold after the refusals counts in polls (two more, still refused and without
    // writes): a 2 s poll keeps it and shortens this quick scenario of `cargo test --workspace`.
    let sb = Sandbox::start(
        SandboxOptions::new("bad-input")
            .providers("artifactory,xray,project,platform")
            .poll(Duration::from_secs(2)),
    )
    .await;
    if !fixtures.is_empty() {
        sb.apply_ok(&fixtures);
    }
    let objects_before: u64 = sb.sim.collection_counts().await.values().sum();
    sb.sim.reset_requests().await;
    let started = Instant::now();

    let mut failures: Vec<String> = Vec::new();
    let mut accepted: Vec<(Mr, &Case)> = Vec::new();
    let (mut admission, mut synced_false) = (0u64, 0u64);
    for case in &cases {
        let (ok, out) = sb.apply(std::slice::from_ref(&case.doc));
        match (case.expect.as_str(), ok) {
            ("admission", false) if out.contains(&case.names) => admission += 1,
            ("admission", _) => failures.push(format!(
                "{}: expected a refusal at admission naming {:?}; kubectl said (ok={ok}): {}",
                display(&case.doc),
                case.names,
                out.trim()
            )),
            ("synced-false", true) => accepted.push((sb.mr_of(&case.doc), case)),
            ("synced-false", false) => failures.push(format!(
                "{}: expected to be accepted and then Synced=False; refused: {}",
                display(&case.doc),
                out.trim()
            )),
            (other, _) => panic!("{}: unknown outcome {other:?}", display(&case.doc)),
        }
    }
    // Each accepted one must turn Synced=False naming the field (and never Ready).
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut pending: Vec<&(Mr, &Case)> = accepted.iter().collect();
    let mut last: Vec<String> = Vec::new();
    while !pending.is_empty() && Instant::now() < deadline {
        let mut still = Vec::new();
        last.clear();
        for item in pending {
            let (mr, case) = item;
            match mr.condition("Synced").await {
                Some((s, _, m)) if s == "False" && m.contains(&case.names) => synced_false += 1,
                c => {
                    last.push(format!("{}: Synced {c:?}", mr.display()));
                    still.push(item);
                }
            }
        }
        pending = still;
        if !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    for l in &last {
        failures.push(format!(
            "expected Synced=False with a message naming the field: {l}"
        ));
    }
    let converge_secs = started.elapsed().as_secs_f64();
    // Two more polls: a refused object must stay refused, still without writes.
    tokio::time::sleep(sb.poll * 2).await;
    for (mr, _) in &accepted {
        if mr.condition("Ready").await.is_some_and(|c| c.0 == "True") {
            failures.push(format!("{} became Ready", mr.display()));
        }
    }
    let counts = sb.sim.requests().await;
    let written = writes(&counts);
    let write_count: u64 = written.values().sum();
    let objects_after: u64 = sb.sim.collection_counts().await.values().sum();
    let created = objects_after.saturating_sub(objects_before);
    let mrs: Vec<Mr> = accepted.iter().map(|(_, c)| sb.mr_of(&c.doc)).collect();
    let secret_refs: Vec<&str> = secret_values.iter().map(String::as_str).collect();
    let secrets_found = sb.secrets_in_outputs(&mrs, &secret_refs).await;

    let pass = failures.is_empty() && write_count == 0 && created == 0 && secrets_found == 0;
    record(&Row {
        id: "bad-input".into(),
        scenario: "invalid manifests for every provider (wrong types, unknown fields, bad enums, \
                   missing required, cross-field rules, invalid keys, missing ProviderConfigs, \
                   Secrets and Secret keys)"
            .into(),
        size: format!(
            "{} manifests, 4 providers ({} Kinds)",
            cases.len(),
            cases
                .iter()
                .map(|c| c.doc["kind"].as_str().unwrap_or("?"))
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        ),
        faults: u64::try_from(cases.len()).expect("few"),
        converge_secs,
        expected_objects: 0,
        jfrog_objects: created,
        duplicates: 0,
        missing: 0,
        writes: write_count,
        secrets_found,
        pass,
        result: format!(
            "{admission} refused at admission and {synced_false} Synced=False, each naming the \
             field; {write_count} JFrog writes; {} not as expected",
            failures.len()
        ),
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(write_count, 0, "JFrog writes: {written:?}");
    assert_eq!(created, 0, "objects were created in JFrog");
    assert_eq!(secrets_found, 0, "a Secret value reached an output");
}
