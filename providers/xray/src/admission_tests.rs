//! The upstream validators refuse invalid manifests at admission, before any JFrog request
//! (each valid twin is admitted). Source: terraform-provider-xray (the data in
//! `catalog/validators/xray-policy-watch-report.json` names each resource file).

use serde_json::{Value, json};

use provider_family::suite::CrdSchemas;

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
