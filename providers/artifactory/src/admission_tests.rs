//! The upstream validators refuse invalid manifests at admission, before any JFrog request:
//! one case per rule family (each valid twin is admitted, so no rule fires on valid input).
//! Sources: terraform-provider-artifactory v12.11.7 schemas (the data in
//! `catalog/validators/artifactory.json` names each resource file).

use serde_json::json;

use provider_family_suite::CrdSchemas;

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

/// A manifest that gives a field through its reference, as the official providers' users
/// write them, is admitted (references resolve after admission, so a rule cannot see the
/// value yet), and once resolved the rule holds before the first write. One case per rule
/// family that reads a field a reference fills.
#[test]
fn rules_over_referenced_fields_hold_once_resolved() {
    let crds = CrdSchemas::new("artifactory", &crate::kinds());
    let url = "https://hooks.example.com/in";
    let selector = json!({"matchLabels": {"team": "a"}});
    crds.reference_cases(
        &crate::family_kinds(),
        &[
            // webhook criteria: repoKeys named by reference while every any* is false; the
            // selector then matched nothing.
            (
                "ArtifactWebhook",
                json!({"eventTypes": ["deployed"], "handler": [{"url": url}],
                    "criteria": [{"anyLocal": false, "anyRemote": false, "anyFederated": false,
                        "repoKeysRefs": [{"name": "libs-local"}]}]}),
                json!({"eventTypes": ["deployed"], "handler": [{"url": url}],
                    "criteria": [{"anyLocal": false, "anyRemote": false, "anyFederated": false,
                        "repoKeysSelector": selector, "repoKeys": []}]}),
                "repoKeys must not be empty when anyLocal, anyRemote and anyFederated are all false",
            ),
            (
                "DockerCustomWebhook",
                json!({"eventTypes": ["pushed"], "handler": [{"url": url, "payload": "{}"}],
                    "criteria": [{"anyLocal": false, "anyRemote": false, "anyFederated": false,
                        "repoKeysSelector": selector}]}),
                json!({"eventTypes": ["pushed"], "handler": [{"url": url, "payload": "{}"}],
                    "criteria": [{"anyLocal": false, "anyRemote": false, "anyFederated": false,
                        "repoKeysSelector": selector, "repoKeys": []}]}),
                "repoKeys must not be empty",
            ),
            // remote repositories: a proxy named by reference with disableProxy.
            (
                "RemoteGenericRepository",
                json!({"url": "https://example.com/files/", "disableProxy": true,
                    "proxyRef": {"name": "corp-proxy"}}),
                json!({"url": "https://example.com/files/", "disableProxy": true,
                    "proxyRef": {"name": "corp-proxy"}, "proxy": "corp-proxy"}),
                "proxy cannot be set when disableProxy is true",
            ),
            // cleanup policies: a project-level policy (project by reference) cannot span
            // all projects.
            (
                "PackageCleanupPolicy",
                json!({"cronExpression": "0 0 2 ? * MON-SAT *", "durationInMinutes": 60,
                    "projectKeyRef": {"name": "team-a"},
                    "searchCriteria": {"packageTypes": ["docker"], "repos": ["**"],
                        "includedPackages": ["**"], "includedProjects": [],
                        "includeAllProjects": true, "createdBeforeInMonths": 6}}),
                json!({"cronExpression": "0 0 2 ? * MON-SAT *", "durationInMinutes": 60,
                    "projectKeyRef": {"name": "team-a"}, "projectKey": "team-a",
                    "searchCriteria": {"packageTypes": ["docker"], "repos": ["**"],
                        "includedPackages": ["**"], "includedProjects": [],
                        "includeAllProjects": true, "createdBeforeInMonths": 6}}),
                "cannot set searchCriteria.includeAllProjects to true",
            ),
        ],
    );
}

/// The check before a write is the provider's: a webhook whose resolved criteria break the
/// rule is refused by `check_write` with the rule's message, naming the field, before any
/// request (the client points at a closed port, so a request would fail differently).
#[tokio::test]
async fn a_rule_left_out_of_the_crd_refuses_before_any_request() {
    use provider_runtime::managed::external::ExternalClient;
    let kinds = crate::family_kinds();
    let kind = provider_family_suite::kind_named(&kinds, "ArtifactWebhook");
    let client = provider_family_suite::offline_client(kind);
    let url = "https://hooks.example.com/in";
    let criteria =
        json!([{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}]);
    // A handler proxy that is a URL: the rule the API server could not afford on a list
    // without a bound.
    let bad = provider_family::adapter::managed(
        "hook",
        "hook",
        json!({"eventTypes": ["deployed"], "criteria": criteria,
            "handler": [{"url": url}, {"url": url, "proxy": "http://proxy:3128"}]}),
    );
    let err = client
        .check_write(&bad, true)
        .await
        .expect_err("refused before the write")
        .to_string();
    assert!(
        err.contains("spec.forProvider.handler[1]")
            && err.contains("must be the key of an Artifactory proxy, not a URL"),
        "{err}"
    );
    let good = provider_family::adapter::managed(
        "hook",
        "hook",
        json!({"eventTypes": ["deployed"], "criteria": criteria,
            "handler": [{"url": url, "proxy": "corp-proxy"}]}),
    );
    client
        .check_write(&good, true)
        .await
        .expect("the valid twin passes");
}

/// Identifiers taken from the external name (which no CRD rule can read) are checked by the
/// provider before any JFrog request, with upstream's rule.
#[tokio::test]
async fn invalid_manifests_with_invalid_identifiers_are_refused_before_any_request() {
    let crds = CrdSchemas::new("artifactory", &crate::kinds());
    crds.refuse_identifiers(
        &crate::family_kinds(),
        &[
            (
                "GlobalEnvironment",
                "peer3-env",
                "peer3_env",
                "letters, digits and '-' only",
            ),
            ("User", "peer3.upper", "Peer3.Upper", "lowercase letters"),
            ("ManagedUser", "ci-bot@corp", "CI Bot", "lowercase letters"),
            ("Group", "readers", &"g".repeat(65), "1 to 64 characters"),
            (
                "PackageCleanupPolicy",
                "npm-30d",
                "ab",
                "at least 3 characters",
            ),
            (
                "ArchivePolicy",
                "archive_old",
                "archive old",
                "letters, digits, '_' and '-' only",
            ),
        ],
    )
    .await;
    // A project-level cleanup policy's key starts with "<projectKey>-" (upstream
    // ValidateConfig).
    crds.refuse_identifiers_given(
        &crate::family_kinds(),
        &json!({"projectKey": "team-a"}),
        &[(
            "PackageCleanupPolicy",
            "team-a-npm-30d",
            "npm-30d",
            "with projectKey \"team-a\" it must start with \"team-a-\"",
        )],
    )
    .await;
}

/// A custom webhook's secret names are the keys of the Secret its handler names, which no
/// CRD rule can read: checked once the provider has read the Secret, before any JFrog
/// request, naming the handler and the key (never a value).
#[tokio::test]
async fn invalid_manifests_with_invalid_custom_webhook_secret_names_are_refused_before_any_request()
{
    use provider_runtime::managed::external::ExternalClient;
    use secrecy::SecretString;
    let kinds = crate::family_kinds();
    let kind = provider_family_suite::kind_named(&kinds, "ArtifactCustomWebhook");
    let client = provider_family_suite::offline_client(kind);
    let params = json!({"eventTypes": ["deployed"],
    "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}],
    "handler": [
        {"url": "https://a.example.com/in", "payload": "{}"},
        {"url": "https://b.example.com/in", "payload": "{}", "secretsSecretRef": {"name": "hook-secrets"}},
    ]});
    let mut mr = provider_family::adapter::managed("hook", "hook", params);
    for key in ["token", "_second"] {
        mr.secrets.insert(
            format!("handler.1.secretsSecretRef.{key}"),
            SecretString::from("s3cr3t-value"),
        );
    }
    kind.check_secret_keys(mr.secrets.keys().map(String::as_str))
        .expect("valid secret names pass");
    mr.secrets.insert(
        "handler.1.secretsSecretRef.2nd_secret".into(),
        SecretString::from("s3cr3t-value"),
    );
    let err = client
        .check_write(&mr, true)
        .await
        .expect_err("refused before the write")
        .to_string();
    assert!(
        err.contains("spec.forProvider.handler[1].secretsSecretRef")
            && err.contains("\"2nd_secret\"")
            && err.contains("starts with a letter or '_'")
            && !err.contains("s3cr3t"),
        "{err}"
    );
    // The reconciler's own create makes the same check first.
    let created = client
        .create(&mut mr)
        .await
        .map(|_| ())
        .expect_err("create refuses too")
        .to_string();
    assert_eq!(created, err);
}
