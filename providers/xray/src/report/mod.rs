//! The report group: the five Xray report Kinds. A report is a generation job: creating it
//! (`POST /api/v1/reports/<type>`) starts the generation and answers the server-assigned
//! `report_id`; Observe reads `GET /api/v1/reports/{id}` and reports the job's status,
//! progress and counts in `atProvider`; deleting the MR deletes the report. The read
//! answers the status only, so the (immutable) parameters are not compared with it, and
//! the public API cannot change a report: a changed report is deleted and created anew
//! by the user (the parameters are immutable at admission).

#[rustfmt::skip]
pub mod tables;

use jfrog_client::Service;
use provider_family::{Call, Hooks, Paths, ResolvedKind, Verb};
use serde_json::Value;

use crate::common;

/// The REST bindings, one per Kind.
pub mod rest {
    use super::*;

    macro_rules! report {
        ($name:ident, $create:expr, $doc:expr) => {
            #[doc = $doc]
            pub static $name: Paths = Paths {
                service: Service::Xray,
                create: Call::new(Verb::Post, $create),
                read: Call::new(Verb::Get, "/api/v1/reports/{key}"),
                // No update API: every parameter is immutable, so no update is sent.
                update: Call::new(Verb::Put, "/api/v1/reports/{key}"),
                delete: Call::new(Verb::Delete, "/api/v1/reports/{key}"),
                // The list is a POST with filters and paging: each MR is read by ID.
                list: None,
                case_insensitive: false,
            };
        };
    }
    report!(
        VULNERABILITIES_REPORT,
        "/api/v1/reports/vulnerabilities",
        "Vulnerabilities reports."
    );
    report!(
        LICENSES_REPORT,
        "/api/v1/reports/licenses",
        "Licenses reports."
    );
    report!(
        VIOLATIONS_REPORT,
        "/api/v1/reports/violations",
        "Violations reports."
    );
    report!(
        OPERATIONAL_RISKS_REPORT,
        "/api/v1/reports/operationalRisks",
        "Operational risks reports."
    );
    report!(
        EXPOSURES_REPORT,
        "/api/v1/reports/exposures",
        "Exposures reports."
    );
}

/// The report group's hooks.
pub static HOOKS: ReportHooks = ReportHooks;

/// The report group's behaviour: the report ID of a create, the project-scope rule.
#[derive(Debug, Clone, Copy)]
pub struct ReportHooks;

impl Hooks for ReportHooks {
    fn id_description(&self) -> &'static str {
        "The report ID Xray assigned."
    }

    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        common::refuse_project_key(params)
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        common::answer_id(answer, "report_id")
    }
}

common::group_fns!();
