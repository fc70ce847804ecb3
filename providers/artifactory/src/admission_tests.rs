//! The upstream validators refuse invalid manifests at admission, before any JFrog request:
//! one case per rule family (each valid twin is admitted, so no rule fires on valid input).
//! Sources: terraform-provider-artifactory v12.11.7 schemas (the data in
//! `catalog/validators/artifactory.json` names each resource file).

use serde_json::json;

use provider_family::suite::CrdSchemas;

#[test]
fn invalid_manifests_are_refused_at_admission() {
    let crds = CrdSchemas::new("artifactory", &crate::kinds());
    let url = "https://hooks.example.com/in";
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // mail_server: `from` is an e-mail address (IsEmail).
            (
                "MailServer",
                json!({"enabled": true, "host": "smtp.example.com", "port": 25, "from": "ci@example.com"}),
                json!({"enabled": true, "host": "smtp.example.com", "port": 25, "from": "not-an-address"}),
                "spec.forProvider.from in body should match",
            ),
            // mail_server: port at most 65535.
            (
                "MailServer",
                json!({"enabled": true, "host": "smtp.example.com", "port": 25}),
                json!({"enabled": true, "host": "smtp.example.com", "port": 70000}),
                "65535",
            ),
            // repository_layout: a distinctive descriptor path pattern needs the pattern.
            (
                "RepositoryLayout",
                json!({"artifactPathPattern": "[org]/[module]", "folderIntegrationRevisionRegexp": "SNAPSHOT", "fileIntegrationRevisionRegexp": "SNAPSHOT", "distinctiveDescriptorPathPattern": true, "descriptorPathPattern": "[org]/[module].pom"}),
                json!({"artifactPathPattern": "[org]/[module]", "folderIntegrationRevisionRegexp": "SNAPSHOT", "fileIntegrationRevisionRegexp": "SNAPSHOT", "distinctiveDescriptorPathPattern": true}),
                "descriptorPathPattern",
            ),
            // scoped_token: scopes are applied-permissions/... or <service>:<resource>:<actions>.
            (
                "ScopedToken",
                json!({"scopes": ["applied-permissions/user"]}),
                json!({"scopes": ["everything-please"]}),
                "scopes",
            ),
            // webhooks: a handler URL is an http(s) URL, a proxy a proxy key.
            (
                "ArtifactWebhook",
                json!({"eventTypes": ["deployed"], "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}], "handler": [{"url": url}]}),
                json!({"eventTypes": ["deployed"], "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}], "handler": [{"url": "ftp://hooks.example.com"}]}),
                "handler[0].url in body should match",
            ),
            (
                "ArtifactWebhook",
                json!({"eventTypes": ["deployed"], "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}], "handler": [{"url": url, "proxy": "corp-proxy"}]}),
                json!({"eventTypes": ["deployed"], "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}], "handler": [{"url": url, "proxy": "http://proxy:3128"}]}),
                "proxy",
            ),
            // remote repositories: no proxy with disableProxy (ValidateConfig).
            (
                "RemoteGenericRepository",
                json!({"url": "https://example.com/files/", "proxy": "corp-proxy"}),
                json!({"url": "https://example.com/files/", "proxy": "corp-proxy", "disableProxy": true}),
                "proxy cannot be set when disableProxy is true",
            ),
            // every repository: the project key rule (ProjectKey validator).
            (
                "LocalGenericRepository",
                json!({"projectKey": "team-a"}),
                json!({"projectKey": "Team_A!"}),
                "projectKey",
            ),
            // proxy: port in 0..65535, services among JFrog's service IDs.
            (
                "Proxy",
                json!({"host": "proxy.example.com", "port": 3128, "platformDefault": false}),
                json!({"host": "proxy.example.com", "port": 3128, "platformDefault": false, "services": ["jfrt", "email"]}),
                "services",
            ),
        ],
    );
}
