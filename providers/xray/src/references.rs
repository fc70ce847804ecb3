//! provider-xray's cross-resource references (see `provider_family::refs`): each field that
//! names another managed object, the Kind(s) it names and the value taken (the external name:
//! the JFrog name or key). Repositories are provider-artifactory's, projects
//! provider-project's: the package requests read access to them. Listed in the README's
//! reference table.

use provider_family::refs::{On, Reference, To, t};

const POLICIES: To = To::Kinds(&[
    t("xray", "policy", "SecurityPolicy"),
    t("xray", "policy", "LicensePolicy"),
    t("xray", "policy", "OperationalRiskPolicy"),
]);
const WATCH: To = To::Kinds(&[t("xray", "watch", "Watch")]);
const WEBHOOK: To = To::Kinds(&[t("xray", "webhook", "Webhook")]);
const PROJECT: To = To::Kinds(&[t("project", "project", "Project")]);
const ANY_REPOSITORY: To = To::Repositories(&[]);

/// The references of provider-xray's Kinds.
pub const REFERENCES: &[Reference] = &[
    // Watches.
    Reference::new(
        On::Kinds("watch", &["Watch"]),
        "assignedPolicy.name",
        POLICIES,
    ),
    Reference::new(
        On::Kinds("watch", &["Watch"]),
        "watchResource.name",
        ANY_REPOSITORY,
    ),
    Reference::new(On::Group("watch"), "projectKey", PROJECT),
    // Policies.
    Reference::new(On::Group("policy"), "projectKey", PROJECT),
    Reference::new(On::Group("policy"), "rule.actions.webhooks", WEBHOOK),
    Reference::new(On::Kinds("policy", &["IgnoreRule"]), "policies", POLICIES),
    Reference::new(On::Kinds("policy", &["IgnoreRule"]), "watches", WATCH),
    Reference::new(
        On::Kinds("policy", &["CurationPolicy"]),
        "conditionId",
        To::Kinds(&[t("xray", "policy", "CustomCurationCondition")]),
    ),
    Reference::new(
        On::Kinds("policy", &["CurationPolicy"]),
        "repoInclude",
        To::Repositories(&["remote"]),
    ),
    Reference::new(
        On::Kinds("policy", &["CurationPolicy"]),
        "repoExclude",
        To::Repositories(&["remote"]),
    ),
    // Reports.
    Reference::new(On::Group("report"), "projectKey", PROJECT),
    Reference::new(
        On::Group("report"),
        "resources.repository.name",
        ANY_REPOSITORY,
    ),
    Reference::new(
        On::Kinds("report", &["ViolationsReport"]),
        "filters.watchNames",
        WATCH,
    ),
    Reference::new(
        On::Kinds("report", &["ViolationsReport"]),
        "filters.policyNames",
        POLICIES,
    ),
    // Configuration.
    Reference::new(
        On::Kinds("configuration", &["RepositoryConfig"]),
        "repoName",
        ANY_REPOSITORY,
    ),
    Reference::new(
        On::Kinds("configuration", &["BinaryManagerRepos"]),
        "indexedRepos.name",
        ANY_REPOSITORY,
    ),
    Reference::new(On::Group("configuration"), "projectKey", PROJECT),
];

#[cfg(test)]
mod tests {
    /// Every entry applies to a Kind that has the field, with the right type.
    #[test]
    fn every_reference_fits_its_kinds() {
        let decls: Vec<provider_family::KindDecl> = [
            crate::policy::declarations(),
            crate::configuration::declarations(),
            crate::report::declarations(),
            crate::watch::declarations(),
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
}
