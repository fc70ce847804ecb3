//! The upstream validators refuse invalid manifests at admission, before any JFrog request
//! (each valid twin is admitted). Source: terraform-provider-project (the data in
//! `catalog/validators/project.json` names each resource file).

use serde_json::json;

use provider_family::suite::CrdSchemas;

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
