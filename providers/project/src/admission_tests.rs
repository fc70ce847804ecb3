//! The upstream validators refuse invalid manifests at admission, before any JFrog request
//! (each valid twin is admitted). Source: terraform-provider-project (the data in
//! `catalog/validators/project.json` names each resource file).

use serde_json::json;

use provider_family_suite::CrdSchemas;

#[test]
fn invalid_manifests_are_refused_at_admission() {
    let crds = CrdSchemas::new("project", &crate::kinds());
    let project = |quota: i64| json!({"displayName": "Example project", "adminPrivileges": [{"manageMembers": true, "manageResources": true, "indexResources": false}], "maxStorageInGibibytes": quota});
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // project: a quota is -1 (unlimited) or 1..8589934591 GiB, never 0.
            ("Project", project(-1), project(0), "maxStorageInGibibytes may not be 0"),
            ("Project", project(10), project(-5), "maxStorageInGibibytes"),
            // project: a display name of at most 128 characters.
            (
                "Project",
                project(10),
                json!({"displayName": "x".repeat(129), "adminPrivileges": [{"manageMembers": true, "manageResources": true, "indexResources": false}], "maxStorageInGibibytes": 10}),
                "displayName",
            ),
            // every project-scoped Kind: the project key rule.
            (
                "Role",
                json!({"projectKey": "team-a", "type": "CUSTOM", "environments": ["DEV"], "actions": ["READ_REPOSITORY"]}),
                json!({"projectKey": "A", "type": "CUSTOM", "environments": ["DEV"], "actions": ["READ_REPOSITORY"]}),
                "projectKey",
            ),
        ],
    );
}

/// Identifiers taken from the external name (which no CRD rule can read) are checked by the
/// provider before any JFrog request, with upstream's rule.
#[tokio::test]
async fn invalid_manifests_with_invalid_identifiers_are_refused_before_any_request() {
    let crds = CrdSchemas::new("project", &crate::kinds());
    crds.refuse_identifiers(
        &crate::family_kinds(),
        &[
            (
                "Project",
                "peer3proj",
                "Peer3Proj",
                "2-32 lowercase letters, digits and '-'",
            ),
            ("Project", "p3", "p", "2-32 lowercase letters"),
            (
                "Environment",
                "peer3-env",
                "peer3_env",
                "letters, digits and '-' only",
            ),
            ("Role", "developer", &"r".repeat(65), "1 to 64 characters"),
        ],
    )
    .await;
    // JFrog names a project environment "<projectKey>-<name>", at most 32 characters.
    crds.refuse_identifiers_given(
        &crate::family_kinds(),
        &json!({"projectKey": "myproj"}),
        &[(
            "Environment",
            "staging",
            "staging-environment-europe-west",
            "at most 32 characters",
        )],
    )
    .await;
}
