//! Example manifests for every configuration, lifecycle and artifact Kind, generated from the
//! declarations and checked in under `examples/artifactory/<group>/` (a test fails when they
//! are stale; run the tests with `UPDATE_EXAMPLES=1` to rewrite them). Each is valid as is;
//! the OauthSettings example carries the Secret its client secret comes from; the artifact
//! examples use the repository of the `LocalGenericRepository` example
//! ([`EXAMPLE_REPOSITORY`]), the promotion the release bundle example.

use provider_family::KindDecl;
use provider_family::examples::{NAMESPACE, kebab, manifest, to_yaml};
use serde_json::{Value, json};

use super::tables::KINDS;

/// The Secret the OauthSettings example reads its client secret from.
pub const OAUTH_SECRET: &str = "example-oauth-client";
/// The Secret holding the LDAP v2 example's manager password.
pub const LDAP_SECRET: &str = "example-ldap-manager";

/// The repository the artifact examples deploy into (the `LocalGenericRepository` example).
pub const EXAMPLE_REPOSITORY: &str = "example-local-generic";
/// The path of the example artifact (and of the example item properties).
pub const EXAMPLE_PATH: &str = "/example/hello.txt";

/// The MR name (and JFrog key) of a Kind's example.
pub fn example_key(kind: &str) -> String {
    format!("example-{}", kebab(kind, ""))
}

/// `forProvider` of a Kind's example.
pub fn example_params(d: &KindDecl) -> Value {
    let criteria = json!({
        "packageTypes": ["docker"],
        "repos": ["**"],
        "includedPackages": ["**"],
        "includedProjects": [],
        "createdBeforeInMonths": 6
    });
    match d.kind {
        "ArchivePolicy" | "PackageCleanupPolicy" => json!({
            "description": format!("{} managed by Crossplane", kebab(d.kind, "")),
            "cronExpression": "0 0 2 ? * MON-SAT *",
            "durationInMinutes": 60,
            "enabled": false,
            "searchCriteria": criteria,
        }),
        "ReleaseBundleV2CleanupPolicy" => json!({
            "description": "release-bundle-v2-cleanup-policy managed by Crossplane",
            "cronExpression": "0 0 2 ? * MON-SAT *",
            "durationInMinutes": 60,
            "enabled": false,
            "searchCriteria": {
                "excludePromotedEnvironments": ["PROD"],
                "includeAllProjects": true,
                "createdBeforeInMonths": 24
            },
        }),
        "Backup" => json!({
            "cronExp": "0 0 12 * * ? *",
            "retentionPeriodHours": 1000,
            "excludedRepositories": ["example-repo-local"],
            "createArchive": false,
        }),
        "GeneralSecurity" => json!({"enableAnonymousAccess": false}),
        "LdapSetting" => json!({
            "ldapUrl": "ldap://ldap.example.com:389/dc=example,dc=com",
            "userDnPattern": "uid={0},ou=People",
            "emailAttribute": "mail",
            "searchFilter": "(uid={0})",
            "searchBase": "ou=People",
            "managerDn": "cn=admin,dc=example,dc=com",
        }),
        // The v2 API takes the search settings together: a search filter, base, sub-tree
        // flag, manager DN and password are all set or none (upstream's rule).
        "LdapSettingV2" => json!({
            "ldapUrl": "ldap://ldap.example.com:389/dc=example,dc=com",
            "userDnPattern": "uid={0},ou=People",
            "emailAttribute": "mail",
            "searchFilter": "(uid={0})",
            "searchBase": "ou=People",
            "searchSubTree": true,
            "managerDn": "cn=admin,dc=example,dc=com",
            "managerPasswordSecretRef": {"name": LDAP_SECRET, "key": "password"},
        }),
        "LdapGroupSetting" => json!({
            "ldapSettingKey": "example-ldap-setting",
            "groupBaseDn": "ou=Groups",
            "groupNameAttribute": "cn",
            "groupMemberAttribute": "uniqueMember",
            "filter": "(objectClass=groupOfNames)",
            "descriptionAttribute": "description",
            "strategy": "STATIC",
        }),
        "LdapGroupSettingV2" => json!({
            "enabledLdap": "example-ldap-setting-v2",
            "groupBaseDn": "ou=Groups",
            "groupNameAttribute": "cn",
            "groupMemberAttribute": "uniqueMember",
            "filter": "(objectClass=groupOfNames)",
            "descriptionAttribute": "description",
            "strategy": "STATIC",
        }),
        "MailServer" => json!({
            "enabled": true,
            "host": "smtp.example.com",
            "port": 25,
            "from": "artifactory@example.com",
            "subjectPrefix": "[Artifactory]",
        }),
        "OauthSettings" => json!({
            "enable": true,
            "oauthProvider": [{
                "name": "example-github",
                "type": "github",
                "clientId": "example-client",
                "clientSecretSecretRef": {"name": OAUTH_SECRET, "key": "clientSecret"},
                "apiUrl": "https://api.github.com/user",
                "authUrl": "https://github.com/login/oauth/authorize",
                "tokenUrl": "https://github.com/login/oauth/access_token"
            }],
        }),
        "PropertySet" => json!({
            "visible": true,
            "property": [{
                "name": "stage",
                "closedPredefinedValues": true,
                "multipleChoice": false,
                "predefinedValue": [
                    {"name": "dev", "defaultValue": true},
                    {"name": "prod", "defaultValue": false}
                ]
            }],
        }),
        "Proxy" => json!({
            "host": "proxy.example.com",
            "port": 8080,
            "services": ["jfrt"],
        }),
        "RepositoryLayout" => json!({
            "artifactPathPattern": "[org]/[module]/[baseRev](-[folderItegRev])/[module]-[baseRev](-[fileItegRev])(-[classifier]).[ext]",
            "distinctiveDescriptorPathPattern": true,
            "descriptorPathPattern": "[org]/[module]/[baseRev](-[folderItegRev])/[module]-[baseRev](-[fileItegRev])(-[classifier]).pom",
            "folderIntegrationRevisionRegexp": "SNAPSHOT",
            "fileIntegrationRevisionRegexp": "SNAPSHOT|(?:(?:[0-9]{8}.[0-9]{6})-(?:[0-9]+))",
        }),
        "SamlSettings" => json!({
            "enable": true,
            "loginUrl": "https://idp.example.com/saml/login",
            "logoutUrl": "https://idp.example.com/saml/logout",
            "serviceProviderName": "artifactory",
            "certificate": "MIIC-example",
            "emailAttribute": "email",
            "groupAttribute": "groups",
        }),
        "TrashcanConfig" => json!({"enabled": true, "retentionPeriodDays": 7}),
        "ReleaseBundleV2" => json!({
            "name": "example-bundle",
            "version": "1.0.0",
            "keypairName": "example-keypair",
            "sourceType": "artifacts",
            "source": {"artifacts": [{"path": format!("{EXAMPLE_REPOSITORY}{EXAMPLE_PATH}")}]},
        }),
        "ReleaseBundleV2Promotion" => json!({
            "name": "example-bundle",
            "version": "1.0.0",
            "keypairName": "example-keypair",
            "environment": "PROD",
        }),
        "Artifact" => json!({
            "repository": EXAMPLE_REPOSITORY,
            "path": EXAMPLE_PATH,
            // "hello from Crossplane\n"
            "contentBase64": "aGVsbG8gZnJvbSBDcm9zc3BsYW5lCg==",
        }),
        "ItemProperties" => json!({
            "repoKey": EXAMPLE_REPOSITORY,
            "itemPath": EXAMPLE_PATH.trim_start_matches('/'),
            "properties": {"stage": ["dev"], "owner": ["platform-team"]},
        }),
        other => panic!("no example for {other}"),
    }
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl) -> Value {
    manifest(d, &example_key(d.kind), example_params(d), false)
}

/// The Secret an example needs, if any.
pub fn example_secret(d: &KindDecl) -> Option<Value> {
    let (name, data) = match d.kind {
        "OauthSettings" => (
            OAUTH_SECRET,
            json!({"clientSecret": "example-client-secret"}),
        ),
        "LdapSettingV2" => (LDAP_SECRET, json!({"password": "example-manager-password"})),
        _ => return None,
    };
    Some(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "stringData": data
    }))
}

/// Every example file: (path relative to `examples/artifactory/`, content).
pub fn example_files() -> Vec<(String, String)> {
    KINDS
        .iter()
        .map(|d| {
            let mut text = String::new();
            if let Some(s) = example_secret(d) {
                text.push_str(&to_yaml(&s));
                text.push_str("---\n");
            }
            text.push_str(&to_yaml(&example(d)));
            (format!("{}/{}.yaml", d.group, kebab(d.kind, "")), text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn examples_are_current() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/artifactory");
        let files = example_files();
        assert_eq!(files.len(), KINDS.len());
        let stale = provider_family::examples::check_files(&dir, &files);
        assert!(
            stale.is_empty(),
            "stale examples (run the tests with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }
}
