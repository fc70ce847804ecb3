//! Example manifests for every webhook Kind, generated from the declarations and checked in
//! under `examples/artifactory/webhook/` (a test fails when they are stale; run the tests
//! with `UPDATE_EXAMPLES=1` to rewrite them). Each is valid as is: the first allowed event
//! type of its domain, criteria that satisfy the domain's rules, and one handler (a custom
//! one with a method, a header and a payload template). Two legacy cluster-scoped examples
//! sit in `legacy/`.

use provider_family::KindDecl;
use provider_family::examples::{kebab, manifest, to_yaml};
use serde_json::{Value, json};

use super::tables::KINDS;

/// Kinds that get a legacy (cluster-scoped) example too.
pub const LEGACY_KINDS: &[&str] = &["ArtifactWebhook", "BuildCustomWebhook"];

/// The webhook key (metadata.name) of a Kind's example.
pub fn example_key(kind: &str, legacy: bool) -> String {
    let k = kebab(kind, "");
    if legacy {
        format!("legacy-{k}")
    } else {
        format!("example-{k}")
    }
}

/// Criteria that satisfy the domain's rules, by the fields the criteria block declares.
fn criteria(d: &KindDecl) -> Option<Value> {
    let k = d.resolve().ok()?;
    let f = k.field("criteria")?;
    let children = f.ty.children()?;
    let has = |n: &str| children.iter().any(|c| c.crd == n);
    let c = if has("anyLocal") {
        json!({"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": [], "includePatterns": ["org/example/**"]})
    } else if has("anyBuild") {
        json!({"anyBuild": false, "selectedBuilds": ["example-build"]})
    } else if has("registeredReleaseBundleNames") {
        json!({"anyReleaseBundle": false, "registeredReleaseBundleNames": ["example-bundle"]})
    } else if has("selectedReleaseBundles") {
        json!({"anyReleaseBundle": true})
    } else {
        json!({"selectedEnvironments": ["PROD"]})
    };
    Some(json!([c]))
}

/// `forProvider` of a Kind's example.
#[expect(
    clippy::expect_used,
    reason = "the webhook declarations are compiled in; the family's tests resolve every one of them"
)]
pub fn example_params(d: &KindDecl) -> Value {
    let k = d.resolve().expect("webhook declarations compose (tested)");
    let events = k.field("eventTypes").map(|f| f.enums).unwrap_or_default();
    let custom = d.kind.ends_with("CustomWebhook");
    let handler = if custom {
        json!({
            "url": "https://hooks.example.com/jfrog",
            "method": "POST",
            "httpHeaders": {"Content-Type": "application/json"},
            "payload": "{\"event\": \"{{.type}}\"}"
        })
    } else {
        json!({
            "url": "https://hooks.example.com/jfrog",
            "customHttpHeaders": {"X-Source": "jfrog"}
        })
    };
    let mut p = json!({
        "description": format!("{} managed by Crossplane", kebab(d.kind, "")),
        "eventTypes": events.first().map(|e| vec![*e]).unwrap_or_default(),
        "handler": [handler],
    });
    if let Some(c) = criteria(d) {
        p["criteria"] = c;
    }
    p
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl, legacy: bool) -> Value {
    manifest(d, &example_key(d.kind, legacy), example_params(d), legacy)
}

/// Every example file: (path relative to `examples/artifactory/webhook/`, content).
pub fn example_files() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = KINDS
        .iter()
        .map(|d| {
            (
                format!("{}.yaml", kebab(d.kind, "")),
                to_yaml(&example(d, false)),
            )
        })
        .collect();
    for d in KINDS.iter().filter(|d| LEGACY_KINDS.contains(&d.kind)) {
        out.push((
            format!("legacy/{}.yaml", kebab(d.kind, "")),
            to_yaml(&example(d, true)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn examples_are_current() {
        let dir =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/artifactory/webhook");
        let files = example_files();
        assert_eq!(files.len(), KINDS.len() + LEGACY_KINDS.len());
        let stale = provider_family::examples::check_files(&dir, &files);
        assert!(
            stale.is_empty(),
            "stale examples (run the tests with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }
}
