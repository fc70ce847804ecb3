//! provider-artifactory's cross-resource references (see `provider_family::refs`): each field
//! that names another managed object, the Kind(s) it names and the value taken (the external
//! name: the JFrog key or name). Listed in the README's reference table.

use provider_family::refs::{On, Reference, Taken, To, t};

const KEYPAIR: To = To::Kinds(&[t("artifactory", "security", "Keypair")]);
const USERS: To = To::Kinds(&[
    t("artifactory", "user", "User"),
    t("artifactory", "user", "ManagedUser"),
    t("artifactory", "user", "UnmanagedUser"),
]);
const GROUP: To = To::Kinds(&[t("artifactory", "security", "Group")]);
const PROXY: To = To::Kinds(&[t("artifactory", "configuration", "Proxy")]);
const LAYOUT: To = To::Kinds(&[t("artifactory", "configuration", "RepositoryLayout")]);
const PROJECT: To = To::Kinds(&[t("project", "project", "Project")]);
const ANY_REPOSITORY: To = To::Repositories(&[]);
const LOCAL_REPOSITORY: To = To::Repositories(&["local", "federated"]);
const REMOTE_REPOSITORY: To = To::Repositories(&["remote"]);

/// The references of provider-artifactory's Kinds.
pub const REFERENCES: &[Reference] = &[
    // Repositories.
    Reference::new(
        On::Identity("repository", "rclass", "virtual"),
        "repositories",
        To::SamePackage(&["local", "remote", "virtual", "federated"]),
    ),
    Reference::new(
        On::Identity("repository", "rclass", "virtual"),
        "defaultDeploymentRepo",
        To::SamePackage(&["local", "federated"]),
    ),
    Reference::new(On::Group("repository"), "primaryKeypairRef", KEYPAIR),
    Reference::new(On::Group("repository"), "secondaryKeypairRef", KEYPAIR),
    Reference::new(On::Group("repository"), "hexPrimaryKeypairRef", KEYPAIR),
    Reference::new(On::Group("repository"), "proxy", PROXY),
    Reference::new(On::Group("repository"), "repoLayoutRef", LAYOUT),
    Reference::new(On::Group("repository"), "remoteRepoLayoutRef", LAYOUT),
    Reference::new(On::Group("repository"), "projectKey", PROJECT),
    // Webhooks.
    Reference::new(On::Group("webhook"), "handler.proxy", PROXY),
    Reference::new(On::Group("webhook"), "criteria.repoKeys", ANY_REPOSITORY),
    // Security and users.
    Reference::new(On::Kinds("security", &["Group"]), "usersNames", USERS),
    Reference::new(On::Group("user"), "groups", GROUP),
    Reference::new(
        On::Kinds("security", &["PermissionTarget"]),
        "repo.repositories",
        ANY_REPOSITORY,
    ),
    Reference::new(On::Group("security"), "repo.actions.users.name", USERS),
    Reference::new(On::Group("security"), "repo.actions.groups.name", GROUP),
    Reference::new(On::Group("security"), "build.actions.users.name", USERS),
    Reference::new(On::Group("security"), "build.actions.groups.name", GROUP),
    Reference::new(
        On::Group("security"),
        "releaseBundle.actions.users.name",
        USERS,
    ),
    Reference::new(
        On::Group("security"),
        "releaseBundle.actions.groups.name",
        GROUP,
    ),
    Reference::new(
        On::Kinds("security", &["ScopedToken"]),
        "projectKey",
        PROJECT,
    ),
    // Replication.
    Reference::new(
        On::Kinds(
            "replication",
            &[
                "LocalRepositorySingleReplication",
                "LocalRepositoryMultiReplication",
                "PushReplication",
            ],
        ),
        "repoKey",
        LOCAL_REPOSITORY,
    ),
    Reference::new(
        On::Kinds(
            "replication",
            &["RemoteRepositoryReplication", "PullReplication"],
        ),
        "repoKey",
        REMOTE_REPOSITORY,
    ),
    Reference::new(On::Group("replication"), "proxy", PROXY),
    Reference::new(On::Group("replication"), "replication.proxy", PROXY),
    Reference::new(On::Group("replication"), "replications.proxy", PROXY),
    // Configuration.
    Reference::new(
        On::Kinds("configuration", &["Backup"]),
        "excludedRepositories",
        ANY_REPOSITORY,
    ),
    Reference::new(
        On::Kinds("configuration", &["LdapGroupSetting"]),
        "ldapSettingKey",
        To::Kinds(&[
            t("artifactory", "configuration", "LdapSetting"),
            t("artifactory", "configuration", "LdapSettingV2"),
        ]),
    ),
    Reference::new(On::Group("configuration"), "projectKey", PROJECT),
    Reference::new(
        On::Group("configuration"),
        "searchCriteria.repos",
        ANY_REPOSITORY,
    ),
    Reference::new(
        On::Group("configuration"),
        "searchCriteria.excludedRepos",
        ANY_REPOSITORY,
    ),
    // Lifecycle.
    Reference::new(On::Group("lifecycle"), "keypairName", KEYPAIR),
    Reference::new(On::Group("lifecycle"), "projectKey", PROJECT),
    Reference::new(
        On::Kinds("lifecycle", &["ReleaseBundleV2Promotion"]),
        "name",
        To::Kinds(&[t("artifactory", "lifecycle", "ReleaseBundleV2")]),
    )
    .taking(Taken::AtProvider("name")),
    Reference::new(
        On::Kinds("lifecycle", &["ReleaseBundleV2Promotion"]),
        "includedRepositoryKeys",
        ANY_REPOSITORY,
    ),
    Reference::new(
        On::Kinds("lifecycle", &["ReleaseBundleV2Promotion"]),
        "excludedRepositoryKeys",
        ANY_REPOSITORY,
    ),
    // Artifacts.
    Reference::new(
        On::Kinds("artifact", &["Artifact"]),
        "repository",
        ANY_REPOSITORY,
    ),
    Reference::new(
        On::Kinds("artifact", &["ItemProperties"]),
        "repoKey",
        ANY_REPOSITORY,
    ),
];

#[cfg(test)]
mod tests {
    /// Every entry applies to a Kind that has the field, with the right type.
    #[test]
    fn every_reference_fits_its_kinds() {
        let decls: Vec<provider_family::KindDecl> = [
            crate::repository::declarations(),
            crate::access::declarations(),
            crate::configuration::declarations(),
            crate::webhook::declarations(),
        ]
        .concat()
        .into_iter()
        .map(|k| k.decl)
        .collect();
        let n =
            provider_family::refs::check_table(&decls, super::REFERENCES).expect("the table fits");
        println!("{n} references declared");
        assert!(n > 0);
    }

    /// The family's list of repository Kinds (what other providers' references name) is
    /// this provider's repository table.
    #[test]
    fn the_family_list_of_repository_kinds_is_the_repository_table() {
        let mut declared: Vec<(&str, &str, &str)> = crate::repository::declarations()
            .iter()
            .map(|d| {
                (
                    d.kind,
                    d.identity_value("rclass").unwrap_or_default(),
                    d.identity_value("packageType").unwrap_or_default(),
                )
            })
            .collect();
        declared.sort();
        let mut listed = provider_family::refs::REPOSITORY_KINDS.to_vec();
        listed.sort();
        assert_eq!(declared, listed);
    }
}
