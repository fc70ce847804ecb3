//! The upstream validators refuse invalid manifests at admission, before any JFrog request
//! (each valid twin is admitted). Source: terraform-provider-xray (the data in
//! `catalog/validators/xray-policy-watch-report.json` and `xray-curation-indexing.json`
//! names each resource file).

use serde_json::{Value, json};

use provider_family_suite::CrdSchemas;

/// `base` with the members of `extra` added (or replaced).
fn with(base: &Value, extra: Value) -> Value {
    let mut v = base.clone();
    if let (Value::Object(v), Value::Object(e)) = (&mut v, extra) {
        v.extend(e);
    }
    v
}

/// A report's parameters over one repository, with `filters` (a single element).
fn report(filters: Value) -> Value {
    json!({"name": "r", "resources": [{"repository": [{"name": "libs"}]}], "filters": [filters]})
}

#[test]
fn invalid_manifests_are_refused_at_admission() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // operational_risks_report: risks among None, Low, Medium and High.
            (
                "OperationalRisksReport",
                report(json!({"risks": ["High"]})),
                report(json!({"risks": ["Severe"]})),
                "risks",
            ),
            // violations_report: a CVE or an issue ID, not both.
            (
                "ViolationsReport",
                report(json!({"type": "security", "securityFilters": [{"cve": "CVE-2021-44228"}]})),
                report(json!({"type": "security", "securityFilters": [{"cve": "CVE-2021-44228", "issueId": "XRAY-1234"}]})),
                "issueId",
            ),
        ],
    );
}

#[test]
fn invalid_manifests_of_curation_policies_and_conditions_are_refused() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    let policy =
        json!({"name": "p", "conditionId": "1", "scope": "all_repos", "policyAction": "block"});
    let waiver = json!({"pkgType": "npm", "pkgName": "lodash", "justification": "reviewed"});
    let condition = json!({"name": "c", "conditionTemplateId": "CVEName"});
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // curation_policy: condition_id is a numeric string.
            (
                "CurationPolicy",
                with(&policy, json!({"conditionId": "146"})),
                with(&policy, json!({"conditionId": "cve-check"})),
                "forProvider.conditionId",
            ),
            // scopeRequirementsValidator: specific_repos needs repositories (a reference counts:
            // `rules_over_referenced_fields_hold_once_resolved`).
            (
                "CurationPolicy",
                with(&policy, json!({"scope": "specific_repos", "repoInclude": ["libs"]})),
                with(&policy, json!({"scope": "specific_repos"})),
                "repoInclude (or repoIncludeRefs / repoIncludeSelector) must name at least one repository",
            ),
            // ... and repo_exclude only with all_repos.
            (
                "CurationPolicy",
                with(&policy, json!({"repoExclude": ["libs"]})),
                with(&policy, json!({"scope": "pkg_types", "pkgTypesInclude": ["npm"], "repoExclude": ["libs"]})),
                "repoExclude (and repoExcludeRefs / repoExcludeSelector) may be set only when scope is all_repos",
            ),
            // decisionOwnersRequiredValidator.
            (
                "CurationPolicy",
                with(&policy, json!({"waiverRequestConfig": "manual", "decisionOwners": ["security"]})),
                with(&policy, json!({"waiverRequestConfig": "manual"})),
                "decisionOwners must name at least one group",
            ),
            // packageVersionsRequiredValidator.
            (
                "CurationPolicy",
                with(&policy, json!({"waivers": [with(&waiver, json!({"allVersions": false, "pkgVersions": ["4.17.20"]}))]})),
                with(&policy, json!({"waivers": [with(&waiver, json!({"allVersions": false}))]})),
                "pkgVersions must name at least one version when allVersions is false",
            ),
            // custom_curation_condition: a known template, param_values a JSON array of objects.
            (
                "CustomCurationCondition",
                with(&condition, json!({"paramValues": r#"[{"param_id":"cve_name","value":"CVE-2021-44228"}]"#})),
                with(&condition, json!({"paramValues": r#"{"param_id":"cve_name","value":"CVE-2021-44228"}"#})),
                "forProvider.paramValues",
            ),
            (
                "CustomCurationCondition",
                with(&condition, json!({"paramValues": "[{}]"})),
                with(&condition, json!({"conditionTemplateId": "CVE", "paramValues": "[{}]"})),
                "forProvider.conditionTemplateId",
            ),
        ],
    );
}

#[test]
fn invalid_manifests_of_custom_issues_and_ignore_rules_are_refused() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    let issue = json!({"description": "d", "summary": "s", "type": "security", "providerName": "audit",
                       "packageType": "generic", "severity": "High"});
    let rule = json!({"notes": "reviewed"});
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // custom_issue: type among other, performance, security, versions (case matters).
            (
                "CustomIssue",
                issue.clone(),
                with(&issue, json!({"type": "Security"})),
                "forProvider.type",
            ),
            // provider_name must not be jfrog, in any case.
            (
                "CustomIssue",
                with(&issue, json!({"providerName": "jfrog-audit"})),
                with(&issue, json!({"providerName": "JFrog"})),
                "providerName must not be jfrog",
            ),
            // source.url: an http(s) URL.
            (
                "CustomIssue",
                with(
                    &issue,
                    json!({"source": [{"id": "CVE", "url": "https://nvd.nist.gov"}]}),
                ),
                with(
                    &issue,
                    json!({"source": [{"id": "CVE", "url": "nvd.nist.gov"}]}),
                ),
                "forProvider.source[0].url",
            ),
            // ignore_rule: vulnerabilities / cves conflict with licenses and operational_risk.
            (
                "IgnoreRule",
                with(
                    &rule,
                    json!({"vulnerabilities": ["XRAY-1234"], "cves": ["CVE-2021-44228"]}),
                ),
                with(
                    &rule,
                    json!({"vulnerabilities": ["XRAY-1234"], "licenses": ["MIT"]}),
                ),
                "set at most one of vulnerabilities, licenses or operationalRisk",
            ),
            (
                "IgnoreRule",
                with(&rule, json!({"operationalRisk": ["any"]})),
                with(&rule, json!({"operationalRisk": ["high"]})),
                "forProvider.operationalRisk[0]",
            ),
            (
                "IgnoreRule",
                with(
                    &rule,
                    json!({"expirationDate": "2030-12-31", "dockerLayers": ["a".repeat(64)]}),
                ),
                with(
                    &rule,
                    json!({"expirationDate": "2030-12-31", "dockerLayers": ["sha256:abc"]}),
                ),
                "forProvider.dockerLayers[0]",
            ),
            (
                "IgnoreRule",
                with(&rule, json!({"expirationDate": "2030-12-31"})),
                with(&rule, json!({"expirationDate": "31.12.2030"})),
                "forProvider.expirationDate",
            ),
            (
                "IgnoreRule",
                with(
                    &rule,
                    json!({"exposures": {"scanners": ["EXP-123"], "filePath": ["/src/"]}}),
                ),
                with(
                    &rule,
                    json!({"exposures": {"scanners": ["123"], "filePath": ["/src/"]}}),
                ),
                "forProvider.exposures.scanners[0]",
            ),
            (
                "IgnoreRule",
                with(
                    &rule,
                    json!({"artifact": [{"name": "app", "path": "libs/app/"}]}),
                ),
                with(
                    &rule,
                    json!({"artifact": [{"name": "app", "path": "libs/app"}]}),
                ),
                "forProvider.artifact[0].path",
            ),
            (
                "IgnoreRule",
                with(
                    &rule,
                    json!({"releaseBundlesV2": [{"name": "releaseBundleV2://bundle"}]}),
                ),
                with(&rule, json!({"releaseBundlesV2": [{"name": "bundle"}]})),
                "forProvider.releaseBundlesV2[0].name",
            ),
        ],
    );
}

#[test]
fn invalid_manifests_of_repository_and_indexing_configuration_are_refused() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    let paths = json!([{"pattern": [{"include": "core/**"}], "allOtherArtifacts": [{"retentionInDays": 30}]}]);
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // repository_config ValidateConfig: no contextual analysis without JAS.
            (
                "RepositoryConfig",
                json!({"repoName": "libs", "jasEnabled": true, "config": [{"retentionInDays": 90, "vulnContextualAnalysis": true}]}),
                json!({"repoName": "libs", "jasEnabled": false, "config": [{"retentionInDays": 90, "vulnContextualAnalysis": true}]}),
                "config.vulnContextualAnalysis cannot be set when jasEnabled is false",
            ),
            // ... and a retention when no paths configuration is given.
            (
                "RepositoryConfig",
                json!({"repoName": "libs", "jasEnabled": false, "config": [{}], "pathsConfig": paths}),
                json!({"repoName": "libs", "jasEnabled": false, "config": [{}]}),
                "config.retentionInDays must be set when pathsConfig is not set",
            ),
            (
                "RepositoryConfig",
                json!({"repoName": "libs", "config": [{"retentionInDays": 0}]}),
                json!({"repoName": "libs", "config": [{"retentionInDays": -1}]}),
                "forProvider.config[0].retentionInDays",
            ),
            (
                "RepositoryConfig",
                json!({"repoName": "libs", "config": [{"retentionInDays": 90}], "pathsConfig": paths}),
                json!({"repoName": "libs", "config": [{"retentionInDays": 90}],
                       "pathsConfig": [{"pattern": [], "allOtherArtifacts": [{"retentionInDays": 30}]}]}),
                "forProvider.pathsConfig[0].pattern",
            ),
            // binary managers: no Ant-style patterns in build or bundle names.
            (
                "BinaryManagerBuilds",
                json!({"indexedBuilds": ["release-build"]}),
                json!({"indexedBuilds": ["release-*"]}),
                "forProvider.indexedBuilds[0]",
            ),
            (
                "BinaryManagerReleaseBundlesV2",
                json!({"indexedReleaseBundleV2": ["bundle"], "projectKey": "app1"}),
                json!({"indexedReleaseBundleV2": ["bundle?"], "projectKey": "app1"}),
                "forProvider.indexedReleaseBundleV2[0]",
            ),
            (
                "BinaryManagerReleaseBundlesV2",
                json!({"indexedReleaseBundleV2": ["bundle"], "projectKey": "app1"}),
                json!({"indexedReleaseBundleV2": ["bundle"], "projectKey": "A"}),
                "forProvider.projectKey",
            ),
            // binary_manager_repos: Xray's package type names, the repository types, keys.
            (
                "BinaryManagerRepos",
                json!({"indexedRepos": [{"name": "libs", "type": "local", "packageType": "Generic"}]}),
                json!({"indexedRepos": [{"name": "libs", "type": "local", "packageType": "generic"}]}),
                "forProvider.indexedRepos[0].packageType",
            ),
            (
                "BinaryManagerRepos",
                json!({"indexedRepos": [{"name": "libs", "type": "federated", "packageType": "npm"}]}),
                json!({"indexedRepos": [{"name": "libs", "type": "virtual", "packageType": "npm"}]}),
                "forProvider.indexedRepos[0].type",
            ),
            (
                "BinaryManagerRepos",
                json!({"indexedRepos": [{"name": "libs-local", "type": "local", "packageType": "Maven"}]}),
                json!({"indexedRepos": [{"name": "libs local", "type": "local", "packageType": "Maven"}]}),
                "forProvider.indexedRepos[0].name",
            ),
        ],
    );
}

/// A rule on `forProvider` applies to `initProvider` too: with only some of the fields
/// there (or none), nothing the rules read is required, and every example is admitted with
/// an initProvider beside it.
#[test]
fn rules_admit_a_partial_init_provider() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    for k in crate::family_kinds() {
        let d = &k.resolved().decl;
        for init in [json!({}), json!({"description": "given at creation"})] {
            let mut mr = provider_family::examples::manifest(
                d,
                "init",
                crate::examples::example_params(d.kind),
                false,
            );
            mr["spec"]["initProvider"] = init;
            let schema = crds.schema(d, false);
            schema.apply_defaults(&mut mr);
            let _ = schema.prune(&mut mr);
            let errs = schema.validate(&mr, None);
            assert!(errs.is_empty(), "{}: {errs:?}", d.kind);
        }
    }
}

/// A manifest that gives a field through its reference is admitted (the reference resolves
/// after admission), and once resolved the rule holds before the first write: one case per
/// rule family that reads a field a reference fills.
#[test]
fn rules_over_referenced_fields_hold_once_resolved() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    let policy =
        json!({"name": "p", "conditionId": "1", "scope": "all_repos", "policyAction": "block"});
    crds.reference_cases(
        &crate::family_kinds(),
        &[
            // scopeRequirementsValidator: repositories only with specific_repos; by reference
            // the rule tests the reference itself, and after resolution the value.
            (
                "CurationPolicy",
                with(
                    &policy,
                    json!({"scope": "specific_repos", "repoIncludeRefs": [{"name": "libs"}]}),
                ),
                with(
                    &policy,
                    json!({"scope": "specific_repos", "repoIncludeSelector": {"matchLabels": {"team": "a"}}, "repoInclude": []}),
                ),
                "repoInclude (or repoIncludeRefs / repoIncludeSelector) must name at least one repository",
            ),
            // violations_report filters: watch names (a reference counts as naming them) or
            // patterns, not both.
            (
                "ViolationsReport",
                report(json!({"type": "security", "watchNamesRefs": [{"name": "w"}]})),
                report(
                    json!({"type": "security", "watchNamesRefs": [{"name": "w"}], "watchNames": ["w"], "watchPatterns": ["w*"]}),
                ),
                "set at most one of watchNames or watchPatterns",
            ),
        ],
    );
    // ... and the conflict is seen at admission too, the reference counting as the value.
    crds.refuse_cases(
        &crate::family_kinds(),
        &[(
            "ViolationsReport",
            report(json!({"type": "security", "watchNamesRefs": [{"name": "w"}]})),
            report(json!({"type": "security", "watchNamesRefs": [{"name": "w"}], "watchPatterns": ["w*"]})),
            "set at most one of watchNames or watchPatterns",
        )],
    );
}

/// Identifiers taken from the external name (which no CRD rule can read) are checked by the
/// provider before any JFrog request, with upstream's rule.
#[tokio::test]
async fn invalid_manifests_with_invalid_identifiers_are_refused_before_any_request() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    crds.refuse_identifiers(
        &crate::family_kinds(),
        &[
            (
                "CustomIssue",
                "log4shell-internal",
                "Xray-custom-1",
                "must not begin with xray",
            ),
            ("Webhook", "ciHook1", "ci_hook", "letters and digits only"),
        ],
    )
    .await;
}

/// A report's schedule as upstream's IsCronSchedule takes it: minute 00, 15, 30 or 45, a
/// two-digit hour, or a descriptor.
#[test]
fn invalid_manifests_with_report_schedules_upstream_refuses_are_refused() {
    let crds = CrdSchemas::new("xray", &crate::kinds());
    let sched = |s: &str| {
        with(
            &report(json!({"type": "security"})),
            json!({"cronSchedule": s, "cronScheduleTimezone": "UTC"}),
        )
    };
    let mut cases = Vec::new();
    for (valid, invalid) in [
        ("30 09 * * MON", "05 09 * * MON"),
        ("00 * * * *", "15 9 * * *"),
        ("@daily", "@every"),
        ("@every 1h30m", "@every 1 hour"),
        ("45 23 1 * *", "45 24 1 * *"),
    ] {
        for kind in ["ViolationsReport", "VulnerabilitiesReport"] {
            cases.push((kind, sched(valid), sched(invalid), "cronSchedule"));
        }
    }
    crds.refuse_cases(&crate::family_kinds(), &cases);
}
