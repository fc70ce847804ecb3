//! Example manifests for every provider-xray Kind, checked in under `examples/xray/<group>/`
//! (a test fails when they are stale; run the tests with `UPDATE_EXAMPLES=1` to rewrite
//! them). They work together: the watch applies the security policy and watches the
//! repository `example-local-generic` of provider-artifactory's examples, which the
//! repository configuration, the indexed repositories and the reports name too. One legacy
//! (cluster-scoped) example sits in `webhook/legacy/`.

use provider_family::examples::{kebab, manifest, to_yaml};
use provider_family::{Kind, KindDecl};
use serde_json::{Value, json};

/// The repository the examples refer to (an example of provider-artifactory).
pub const REPOSITORY: &str = "example-local-generic";

/// Kinds that get a legacy (cluster-scoped) example too.
pub const LEGACY_KINDS: &[&str] = &["Webhook"];

/// Every declaration, in the order the examples depend on each other (policies before the
/// watch that uses them).
pub fn declarations() -> Vec<&'static Kind> {
    crate::policy::declarations()
        .iter()
        .chain(crate::configuration::declarations())
        .chain(crate::report::declarations())
        .chain(crate::watch::declarations())
        .chain(crate::webhook::declarations())
        .collect()
}

/// `metadata.name` of a Kind's example (the external name of name-keyed Kinds).
pub fn example_name(kind: &str, legacy: bool) -> String {
    match kind {
        // The binary manager ID is the external name: the platform's default one.
        k if k.starts_with("BinaryManager") && !legacy => "default".to_string(),
        // Xray takes only letters and digits in a webhook name (upstream's RegexMatches).
        "Webhook" if legacy => "legacywebhook".to_string(),
        "Webhook" => "examplewebhook".to_string(),
        k if legacy => format!("legacy-{}", kebab(k, "")),
        k => format!("example-{}", kebab(k, "")),
    }
}

/// Actions that only block nothing and notify.
fn actions(extra: Value) -> Value {
    let mut a = json!({"blockDownload": [{"active": false, "unscanned": false}], "notifyWatchRecipients": true});
    if let (Value::Object(a), Value::Object(e)) = (&mut a, extra) {
        a.extend(e);
    }
    json!([a])
}

/// `forProvider` of a Kind's example.
pub fn example_params(kind: &str) -> Value {
    let repo = json!([{"repository": [{"name": REPOSITORY}]}]);
    match kind {
        "SecurityPolicy" => json!({
            "type": "security",
            "description": "Block high and critical vulnerabilities",
            "rule": [
                {"name": "high-and-above", "priority": 1,
                 "criteria": [{"minSeverity": "High"}],
                 "actions": [{"blockDownload": [{"active": true, "unscanned": false}], "failBuild": true, "notifyWatchRecipients": true}]},
                {"name": "cvss-critical", "priority": 2,
                 "criteria": [{"cvssRange": [{"from": 9.0, "to": 10.0}]}],
                 "actions": actions(json!({"failBuild": true}))},
                {"name": "all-severities", "priority": 3,
                 "criteria": [{"minSeverity": "All severities"}],
                 "actions": actions(json!({"notifyDeployer": true}))}
            ]
        }),
        "LicensePolicy" => json!({
            "type": "license",
            "description": "Ban strong copyleft licenses",
            "rule": [{"name": "banned-licenses", "priority": 1,
                      "criteria": [{"bannedLicenses": ["AGPL-3.0"], "allowUnknown": true}],
                      "actions": actions(json!({"customSeverity": "High"}))}]
        }),
        "OperationalRiskPolicy" => json!({
            "type": "operational_risk",
            "description": "Flag unmaintained packages",
            "rule": [{"name": "high-risk", "priority": 1,
                      "criteria": [{"opRiskMinRisk": "High"}],
                      "actions": actions(json!({}))}]
        }),
        "CurationPolicy" => json!({
            "name": "example-curation-policy",
            "conditionId": "1",
            "scope": "all_repos",
            "policyAction": "block",
            "notifyEmails": ["security@example.com"]
        }),
        "CustomCurationCondition" => json!({
            "name": "example-custom-curation-condition",
            "conditionTemplateId": "CVEName",
            "paramValues": "[{\"param_id\":\"cve_name\",\"value\":\"CVE-2021-44228\"}]"
        }),
        "IgnoreRule" => json!({
            "notes": "False positive: the vulnerable code path is not shipped",
            "cves": ["CVE-2021-44228"]
        }),
        "CustomIssue" => json!({
            "description": "A vulnerability found by an internal audit",
            "summary": "Internal audit finding",
            "type": "security",
            "providerName": "custom",
            "packageType": "generic",
            "severity": "High",
            "component": [{"id": "generic://example-lib", "vulnerableVersions": ["[1.0]"], "fixedVersions": ["[1.1]"]}]
        }),
        "Settings" => json!({
            "dbSyncUpdatesTime": "18:40",
            "enabled": true,
            "allowBlocked": false,
            "allowWhenUnavailable": false,
            "blockUnscannedTimeout": 60,
            "blockUnfinishedScansTimeout": 1800
        }),
        "WorkersCount" => {
            let both = json!([{"newContent": 4, "existingContent": 2}]);
            json!({
                "index": both, "persist": both, "analysis": both,
                "policyEnforcer": both, "sbom": both, "userCatalog": both,
                "sbomImpactAnalysis": both, "migrationSbom": both,
                "impactAnalysis": [{"newContent": 4}], "notification": [{"newContent": 4}],
                "panoramic": [{"newContent": 4}],
                "sbomEnricher": both, "sbomDependencies": both, "sbomDeleter": both
            })
        }
        "RepositoryConfig" => json!({
            "repoName": REPOSITORY,
            "config": [{"retentionInDays": 90}]
        }),
        "CatalogLabels" => json!({
            "labels": [
                {"name": "approved", "description": "Approved for production"},
                {"name": "under-review", "description": "Waiting for a security review"}
            ],
            "packageAssignments": [
                {"labelName": "approved", "packageName": "lodash", "packageType": "npm"}
            ],
            "versionAssignments": [
                {"labelName": "under-review", "packageName": "lodash", "packageType": "npm", "versions": ["4.17.20", "4.17.21"]}
            ]
        }),
        "BinaryManagerBuilds" => json!({"indexedBuilds": ["example-build"]}),
        "BinaryManagerRepos" => json!({
            "indexedRepos": [{"name": REPOSITORY, "type": "local", "packageType": "Generic"}]
        }),
        "BinaryManagerReleaseBundlesV2" => json!({"indexedReleaseBundleV2": ["example-bundle"]}),
        "VulnerabilitiesReport" => json!({
            "name": "example-vulnerabilities-report", "resources": repo,
            "filters": [{"severities": ["High", "Critical"]}]
        }),
        "LicensesReport" => json!({
            "name": "example-licenses-report", "resources": repo,
            "filters": [{"unknown": false, "licenseNames": ["MIT"]}]
        }),
        "ViolationsReport" => json!({
            "name": "example-violations-report", "resources": repo,
            "filters": [{"type": "security", "severities": ["High"]}]
        }),
        "OperationalRisksReport" => json!({
            "name": "example-operational-risks-report", "resources": repo,
            "filters": [{"risks": ["High"]}]
        }),
        "ExposuresReport" => json!({
            "name": "example-exposures-report", "resources": repo,
            "filters": [{"category": "secrets"}]
        }),
        "Watch" => json!({
            "description": "Apply the security policy to the generic repository",
            "active": true,
            "watchResource": [{
                "type": "repository", "name": REPOSITORY, "repoType": "local",
                "filter": [{"type": "regex", "value": ".*"}]
            }],
            "assignedPolicy": [{"name": "example-security-policy", "type": "security"}],
            "watchRecipients": ["security@example.com"]
        }),
        "Webhook" => json!({
            "url": "https://hooks.example.com/xray",
            "description": "Xray violations",
            "useProxy": false,
            "userName": "xray",
            "headers": {"X-Source": "xray"}
        }),
        other => panic!("no example for {other}"),
    }
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl, legacy: bool) -> Value {
    manifest(
        d,
        &example_name(d.kind, legacy),
        example_params(d.kind),
        legacy,
    )
}

/// Every example file: (path relative to `examples/xray/`, content).
pub fn example_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in declarations() {
        out.push((
            format!("{}/{}.yaml", d.group, kebab(d.kind, "")),
            to_yaml(&example(d, false)),
        ));
        if LEGACY_KINDS.contains(&d.kind) {
            out.push((
                format!("{}/legacy/{}.yaml", d.group, kebab(d.kind, "")),
                to_yaml(&example(d, true)),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// 21 Kinds, each in both scopes; the generated CRDs pass the API server's CRD rules and
    /// every example (both scopes) validates without pruning.
    #[test]
    fn crds_accept_every_example_in_both_scopes() {
        let crds = crate::crds();
        let managed = crds
            .iter()
            .filter(|c| {
                crate::GROUPS
                    .iter()
                    .any(|g| c.name.contains(&format!(".{g}.xray.")))
            })
            .count();
        assert_eq!(managed, 42, "21 Kinds x 2 scopes");
        provider_family_suite::CrdSchemas::new("xray", &crate::kinds())
            .accept_examples(declarations(), example);
    }

    #[test]
    fn examples_are_current() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/xray");
        let files = example_files();
        assert_eq!(files.len(), 21 + LEGACY_KINDS.len());
        let stale = provider_family::examples::check_files(&dir, &files);
        assert!(
            stale.is_empty(),
            "stale examples (run the tests with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }
}
