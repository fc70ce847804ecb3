//! The report group: the five Xray report Kinds. A report is a generation job: creating it
//! (`POST /api/v1/reports/<type>`) starts the generation and answers the server-assigned
//! `report_id`; Observe reports the job's status, progress and counts in `atProvider`;
//! deleting the MR deletes the report. The five Kinds are observed by one list ("Get
//! Reports List": `POST /api/v1/reports?page_num=1&num_of_rows=N` with an empty filter, a
//! `POST` that only reads, answering `{total_reports, reports: [...]}`), whose entries carry
//! what `GET /api/v1/reports/{id}` answers (id, name, type, status, progress and counts), so
//! no report is read by ID while one page holds every report; a larger platform, or a
//! report in a project (listed only with `?projectKey=`), is read by ID. Reports are not
//! exported: their parameters (resources, filters) are in neither answer. The read
//! answers the status only, so the (immutable) parameters are not compared with it, and
//! the public API cannot change a report: a changed report is deleted and created anew
//! by the user (the parameters are immutable at admission). The bindings declare that they
//! have no update call ([`NoUpdate`]), so the adapter never compares the parameters with an
//! answer nor late-initialises them from one, and never sends an update. A report with a `projectKey`
//! is made, read and deleted in that project (`?projectKey=` on every call).

pub mod hooks;
#[rustfmt::skip]
pub mod tables;

use async_trait::async_trait;
use jfrog_client::{Idempotency, Method, Service};
use provider_family::{
    Address, Call, Described, HookCtx, Hooks, ListCall, ListShape, Page, ResolvedKind, Verb,
};
use serde_json::{Map, Value, json};

use crate::common::{self, NoUpdate};

/// The REST bindings, one per Kind.
pub mod rest {
    use super::*;

    /// Every report of the platform (all five types: the Kinds share one list), one page
    /// as large as the list is read; the entries are as complete as a read by ID.
    pub const REPORTS_LIST: ListCall = ListCall {
        service: Service::Xray,
        path: "/api/v1/reports",
        shape: ListShape::Paged(&REPORTS_PAGE),
        key_member: "id",
    };

    /// One page of reports: the paging parameters are mandatory, the filter is empty.
    static REPORTS_PAGE: Page = Page {
        query: &[
            ("direction", "asc"),
            ("page_num", "1"),
            ("num_of_rows", "10000"),
            ("order_by", "name"),
        ],
        member: "reports",
        total: "total_reports",
        post: Some(r#"{"filters": {}}"#),
    };

    macro_rules! report {
        ($name:ident, $create:expr, $doc:expr) => {
            #[doc = $doc]
            // No update call: Xray cannot change a report, and no answer carries its
            // parameters (they are immutable at admission).
            pub static $name: NoUpdate = NoUpdate::new(
                Service::Xray,
                Call::new(Verb::Post, $create),
                Call::new(Verb::Get, "/api/v1/reports/{key}"),
                Call::new(Verb::Delete, "/api/v1/reports/{key}"),
                Some(REPORTS_LIST),
            );
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

/// The rules every report Kind keeps: the identifier's description.
pub static HOOKS: Described = Described("The report ID Xray assigned.");

/// A report Kind's behaviour beyond the generic adapter: the report ID of a create, a lost
/// create's lookup (in the create's project, if any, by name and Xray's report type: the last
/// segment of the Kind's create path), the generation status. Each Kind binds its own value
/// ([`hooks`]).
#[derive(Debug, Clone, Copy)]
pub struct ReportHooks(pub &'static str);

#[async_trait]
impl Hooks for ReportHooks {
    fn unavailable(&self, _kind: &ResolvedKind, at: &Value) -> Option<String> {
        let status = at
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending");
        if status == "completed" {
            return None;
        }
        let progress = at.get("progress").and_then(Value::as_i64).unwrap_or(0);
        Some(format!("report generation {status} ({progress}%)"))
    }

    /// The report of the same name and type (report names are unique in Xray), found
    /// through the reports list (a `POST` with a name filter).
    async fn find_created(
        &self,
        ctx: HookCtx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Option<String>, jfrog_client::Error> {
        let Some(name) = body.get("name").and_then(Value::as_str) else {
            return Ok(None);
        };
        let report_type = self.0;
        // The create's scope: a project's reports are listed with its query only.
        // A search: it only reads.
        let mut request = ctx
            .client
            .request(
                Service::Xray,
                Method::POST,
                "/api/v1/reports",
                Idempotency::Idempotent,
            )
            .reads_only();
        if let Some(project) = common::project_of(address) {
            request = request.query("projectKey", project);
        }
        let answer = request
            .query("direction", "asc")
            .query("page_num", 1)
            .query("num_of_rows", 100)
            .query("order_by", "name")
            .json(&json!({"filters": {"name": name}}))
            .send_value()
            .await?;
        Ok(answer
            .get("reports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| {
                r.get("name").and_then(Value::as_str) == Some(name)
                    && r.get("report_type").and_then(Value::as_str) == Some(report_type)
            })
            .and_then(|r| common::answer_id(r, "id")))
    }

    /// A report's parameters (resources, filters) are in no answer: an exported manifest
    /// could not say what the report covers.
    fn exportable(&self, _kind: &ResolvedKind) -> bool {
        false
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        common::answer_id(answer, "report_id")
    }
}

common::group_fns!();
