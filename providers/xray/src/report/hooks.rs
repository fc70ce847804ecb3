//! Each report Kind's hooks: the report type Xray gives its reports (the last segment of
//! the Kind's create path), bound by the Kind's table entry (its correction in
//! `catalog/overrides.json`, section `xray.kinds`).

use super::ReportHooks;

/// VulnerabilitiesReport's.
pub static VULNERABILITIES_REPORT: ReportHooks = ReportHooks("vulnerabilities");
/// LicensesReport's.
pub static LICENSES_REPORT: ReportHooks = ReportHooks("licenses");
/// ViolationsReport's.
pub static VIOLATIONS_REPORT: ReportHooks = ReportHooks("violations");
/// OperationalRisksReport's.
pub static OPERATIONAL_RISKS_REPORT: ReportHooks = ReportHooks("operationalRisks");
/// ExposuresReport's.
pub static EXPOSURES_REPORT: ReportHooks = ReportHooks("exposures");
