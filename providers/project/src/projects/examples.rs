//! Example manifests for every Kind of provider-project, generated from the declarations and
//! checked in under `examples/project/<group>/` (a test fails when they are stale; run the
//! tests with `UPDATE_EXAMPLES=1` to rewrite them). Together they form one working set: the
//! project `example-project` with an environment, a custom role, a user and a group member,
//! a repository of provider-artifactory's examples assigned to it, one shared with it and
//! one shared with every project. Legacy (cluster-scoped) examples sit in `legacy/`.

use provider_family::KindDecl;
use provider_family::examples::{kebab, manifest};
use serde_json::{Value, json};

use super::tables::KINDS;

/// Kinds that get a legacy (cluster-scoped) example too.
pub const LEGACY_KINDS: &[&str] = &["Project", "Role"];

/// The project of the examples.
pub const PROJECT_KEY: &str = "example-project";

/// Repositories of provider-artifactory's examples the examples assign and share.
pub const REPOSITORIES: &[&str] = &[
    "example-local-generic",
    "example-local-npm",
    "example-local-maven",
];

/// The external name (metadata.name) of a Kind's example.
pub fn example_name(kind: &str, legacy: bool) -> String {
    match (kind, legacy) {
        ("Project", false) => PROJECT_KEY.into(),
        ("Environment", false) => "qa".into(),
        ("Repository", false) => REPOSITORIES[0].into(),
        (k, false) => format!("example-{}", kebab(k, "")),
        (k, true) => format!("legacy-{}", kebab(k, "")),
    }
}

/// `forProvider` of a Kind's example.
pub fn example_params(d: &KindDecl, legacy: bool) -> Value {
    match d.kind {
        "Project" => json!({
            "displayName": if legacy { "Legacy project" } else { "Example project" },
            "description": "managed by Crossplane",
            "adminPrivileges": [{"manageMembers": true, "manageResources": true, "indexResources": false}],
            "maxStorageInGibibytes": 10,
        }),
        "Environment" => json!({"projectKey": PROJECT_KEY}),
        "Role" => json!({
            "projectKey": PROJECT_KEY,
            "type": "CUSTOM",
            "environments": ["DEV"],
            "actions": ["READ_REPOSITORY", "READ_BUILD"],
        }),
        "User" => json!({"projectKey": PROJECT_KEY, "roles": ["Developer"]}),
        "Group" => json!({"projectKey": PROJECT_KEY, "roles": ["Viewer"]}),
        "Repository" => json!({"projectKey": PROJECT_KEY}),
        "ShareRepository" => json!({
            "repoKey": REPOSITORIES[1],
            "targetProjectKey": PROJECT_KEY,
            "readOnly": true,
        }),
        "ShareRepositoryWithAll" => json!({"repoKey": REPOSITORIES[2]}),
        other => unreachable!("no example for {other}"),
    }
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl, legacy: bool) -> Value {
    manifest(
        d,
        &example_name(d.kind, legacy),
        example_params(d, legacy),
        legacy,
    )
}

/// Every example file: (path relative to `examples/project/`, content).
pub fn example_files() -> Vec<(String, String)> {
    provider_family::examples::files_by_group(KINDS, LEGACY_KINDS, example)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn examples_are_current() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/project");
        let files = example_files();
        assert_eq!(files.len(), KINDS.len() + LEGACY_KINDS.len());
        let stale = provider_family::examples::check_files(&dir, &files);
        assert!(
            stale.is_empty(),
            "stale examples (run the tests with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }
}
