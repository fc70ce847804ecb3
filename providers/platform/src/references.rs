//! provider-platform's cross-resource references (see `provider_family::refs`): each field
//! that names another managed object, the Kind(s) it names and the value taken (the external
//! name). Users and repositories are provider-artifactory's, projects provider-project's: the
//! package requests read access to them. Listed in the README's reference table.

use provider_family::refs::{On, Reference, To, t};

const PROJECT: To = To::Kinds(&[t("project", "project", "Project")]);
const USERS: To = To::Kinds(&[
    t("artifactory", "user", "User"),
    t("artifactory", "user", "ManagedUser"),
    t("artifactory", "user", "UnmanagedUser"),
]);
const GROUPS: To = To::Kinds(&[
    t("platform", "access", "Group"),
    t("artifactory", "security", "Group"),
]);
const ANY_REPOSITORY: To = To::Repositories(&[]);

/// The references of provider-platform's Kinds.
pub const REFERENCES: &[Reference] = &[
    Reference::new(
        On::Kinds("authentication", &["OIDCIdentityMapping"]),
        "providerName",
        To::Kinds(&[t("platform", "authentication", "OIDCConfiguration")]),
    ),
    Reference::new(On::Group("authentication"), "projectKey", PROJECT),
    Reference::new(On::Group("lifecycle"), "projectKey", PROJECT),
    Reference::new(
        On::Kinds("lifecycle", &["Lifecycle"]),
        "promoteStages",
        To::Kinds(&[t("platform", "lifecycle", "LifecycleStage")]),
    ),
    Reference::new(On::Kinds("access", &["Group"]), "members", USERS),
    Reference::new(On::Kinds("access", &["GroupMembers"]), "name", GROUPS),
    Reference::new(On::Kinds("access", &["GroupMembers"]), "members", USERS),
    Reference::new(On::Group("access"), "artifact.actions.users.name", USERS),
    Reference::new(On::Group("access"), "artifact.actions.groups.name", GROUPS),
    Reference::new(On::Group("access"), "artifact.targets.name", ANY_REPOSITORY),
    Reference::new(On::Group("access"), "build.actions.users.name", USERS),
    Reference::new(On::Group("access"), "build.actions.groups.name", GROUPS),
    Reference::new(
        On::Group("access"),
        "releaseBundle.actions.users.name",
        USERS,
    ),
    Reference::new(
        On::Group("access"),
        "releaseBundle.actions.groups.name",
        GROUPS,
    ),
    Reference::new(
        On::Kinds("configuration", &["WorkersService"]),
        "filterCriteria.artifactFilterCriteria.repoKeys",
        ANY_REPOSITORY,
    ),
];

#[cfg(test)]
mod tests {
    /// Every entry applies to a Kind that has the field, with the right type.
    #[test]
    fn every_reference_fits_its_kinds() {
        let decls: Vec<provider_family::KindDecl> = crate::platform::kinds()
            .iter()
            .map(|k| k.resolved().decl)
            .collect();
        let n =
            provider_family::refs::check_table(&decls, super::REFERENCES).expect("the table fits");
        println!("{n} references declared");
        assert!(n > 0);
    }
}
