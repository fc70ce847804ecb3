//! provider-project's cross-resource references (see `provider_family::refs`): each field
//! that names another managed object, the Kind(s) it names and the value taken (the external
//! name). Users, groups and repositories are provider-artifactory's: the package requests
//! read access to them. Listed in the README's reference table.

use provider_family::refs::{On, Reference, To, t};

const PROJECT: To = To::Kinds(&[t("project", "project", "Project")]);
const ANY_REPOSITORY: To = To::Repositories(&[]);

/// The references of provider-project's Kinds.
pub const REFERENCES: &[Reference] = &[
    Reference::new(On::Group("project"), "projectKey", PROJECT),
    Reference::new(On::Group("access"), "projectKey", PROJECT),
    Reference::new(On::Group("repository"), "projectKey", PROJECT),
    Reference::new(
        On::Kinds("project", &["Project"]),
        "member.name",
        To::Kinds(&[
            t("artifactory", "user", "User"),
            t("artifactory", "user", "ManagedUser"),
            t("artifactory", "user", "UnmanagedUser"),
        ]),
    ),
    Reference::new(
        On::Kinds("project", &["Project"]),
        "group.name",
        To::Kinds(&[t("artifactory", "security", "Group")]),
    ),
    Reference::new(On::Kinds("project", &["Project"]), "repos", ANY_REPOSITORY),
    Reference::new(
        On::Kinds("repository", &["ShareRepository", "ShareRepositoryWithAll"]),
        "repoKey",
        To::Repositories(&["local", "remote", "federated"]),
    ),
    Reference::new(
        On::Kinds("repository", &["ShareRepository"]),
        "targetProjectKey",
        PROJECT,
    ),
];

#[cfg(test)]
mod tests {
    /// Every entry applies to a Kind that has the field, with the right type.
    #[test]
    fn every_reference_fits_its_kinds() {
        let decls: Vec<provider_family::KindDecl> = crate::projects::kinds()
            .iter()
            .map(|k| k.resolved().decl)
            .collect();
        let n =
            provider_family::refs::check_table(&decls, super::REFERENCES).expect("the table fits");
        println!("{n} references declared");
        assert!(n > 0);
    }
}
