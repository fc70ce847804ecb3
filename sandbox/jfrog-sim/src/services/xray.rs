//! The Xray service (`/xray`), with the Xray settings Artifactory keeps
//! (`/artifactory/api/xrayRepo/...`) and the Catalog service's custom-label GraphQL API:
//!
//! - system ping and version;
//! - policies (`/api/v2/policies`), webhooks, curation policies and conditions (server
//!   IDs), custom issues (events: written through v1, read through v2) on the generic
//!   collection service; Xray's validation: a policy's type and rules, a security rule's
//!   criteria (a severity or a CVSS range, not both), severities answered in Xray's casing
//!   (`All Severities`) and the rules in Xray's order (not the request's);
//! - watches: every watched repository must exist in Artifactory and every assigned policy
//!   in Xray (else 400 with Xray's message; nothing is stored);
//! - project-scoped policies and watches (`?projectKey=<project>` on every call): kept apart
//!   from the global ones and from other projects' (a policy `p` of project `team` is not
//!   the global `p`), absent from the global list; the project must exist (404 otherwise),
//!   and a project's watch assigns the project's policies and the global ones;
//!   a project's watch names the project's build-info repository (`build_repo`) in each
//!   `build` resource (400 otherwise);
//! - ignore rules: server-assigned IDs answered in an `info` sentence; no update;
//! - reports: `POST /api/v1/reports/<type>` starts a job (`report_id`), each read or listing
//!   advances it (pending, running, completed), `DELETE` removes it; the list
//!   (`POST /api/v1/reports`, a request that only reads) is paged and filtered;
//! - ignore rules, reports and the binary manager's indexing configuration in a project
//!   (`?projectKey=` on every call, the list included): apart from the global ones (an ID
//!   or configuration of the project is not found globally, nor a global one in the
//!   project); the project must exist (404 otherwise);
//! - configuration: the workers count, the DB sync time and the integration settings
//!   (singletons, defaults until set), a repository's Xray configuration (the repository
//!   must exist), the binary manager's indexed builds, repositories and release bundles;
//!   each body keeps only the members of the Xray Terraform provider's API model;
//! - catalog labels on `POST /catalog/api/v1/custom/graphql` (GraphQL documents with literal
//!   arguments or variables, answers selecting what the document asks): `getLabel`,
//!   `searchLabels`, create/update/delete of one label and of several, assign/remove a label
//!   to/from a public package, a package version and several versions at once, and the labels
//!   connection of `publicPackage.getPackage` and `publicPackageVersion.getVersion`; the
//!   Catalog's limits (2-15 name and 300 description characters, 500 per operation, one
//!   label per package and per version) and error texts, answered as 400 with
//!   `{errors: [{message}]}`; deleting a label removes its assignments.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use graphql_parser::query as gql;
use serde_json::{Map, Value, json};

use crate::auth::User;
use crate::collections::{
    Access, Binding, Caller, CreateAnswer, Ctx, Declaration, Ids, KeyCase, Op, UpdateAnswer,
    as_stored,
};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;
use crate::shape::{Shape, prune};

// ---- the models Xray binds bodies to (terraform-provider-xray v3.1.9,
// `pkg/xray/resource/policies.go`, `resource_xray_watch.go`, `resource_xray_webhook.go`, and
// the Xray REST API "Create Watch" / "Get Watches" samples); other members are dropped ----

const CVSS_RANGE: Shape = Shape::Object(&[("to", Shape::Leaf), ("from", Shape::Leaf)]);
const EXPOSURES: Shape = Shape::Object(&[
    ("min_severity", Shape::Leaf),
    ("secrets", Shape::Leaf),
    ("applications", Shape::Leaf),
    ("services", Shape::Leaf),
    ("iac", Shape::Leaf),
]);
const OP_RISK_CUSTOM: Shape = Shape::Object(&[
    ("use_and_condition", Shape::Leaf),
    ("is_eol", Shape::Leaf),
    ("release_date_greater_than_months", Shape::Leaf),
    ("newer_versions_greater_than", Shape::Leaf),
    ("release_cadence_per_year_less_than", Shape::Leaf),
    ("commits_less_than", Shape::Leaf),
    ("committers_less_than", Shape::Leaf),
    ("risk", Shape::Leaf),
]);
/// `PolicyRuleCriteriaAPIModel`: security, license and operational-risk criteria.
const CRITERIA: Shape = Shape::Object(&[
    ("min_severity", Shape::Leaf),
    ("cvss_range", CVSS_RANGE),
    ("fix_version_dependant", Shape::Leaf),
    ("applicable_cves_only", Shape::Leaf),
    ("malicious_package", Shape::Leaf),
    ("vulnerability_ids", Shape::Leaf),
    ("exposures", EXPOSURES),
    ("package_name", Shape::Leaf),
    ("package_type", Shape::Leaf),
    ("package_versions", Shape::Leaf),
    ("allow_unknown", Shape::Leaf),
    ("multi_license_permissive", Shape::Leaf),
    ("banned_licenses", Shape::Leaf),
    ("allowed_licenses", Shape::Leaf),
    ("op_risk_custom", OP_RISK_CUSTOM),
    ("op_risk_min_risk", Shape::Leaf),
]);
/// `PolicyRuleActionsAPIModel`.
const ACTIONS: Shape = Shape::Object(&[
    ("webhooks", Shape::Leaf),
    ("mails", Shape::Leaf),
    ("fail_build", Shape::Leaf),
    (
        "block_download",
        Shape::Object(&[
            ("unscanned", Shape::Leaf),
            ("active", Shape::Leaf),
            ("grace_period_days", Shape::Leaf),
        ]),
    ),
    ("block_release_bundle_distribution", Shape::Leaf),
    ("block_release_bundle_promotion", Shape::Leaf),
    ("notify_watch_recipients", Shape::Leaf),
    ("notify_deployer", Shape::Leaf),
    ("create_ticket_enabled", Shape::Leaf),
    (
        "fail_pull_request",
        Shape::Object(&[("active", Shape::Leaf)]),
    ),
    ("build_failure_grace_period_in_days", Shape::Leaf),
    ("custom_severity", Shape::Leaf),
]);
const RULE: Shape = Shape::Object(&[
    ("name", Shape::Leaf),
    ("priority", Shape::Leaf),
    ("criteria", CRITERIA),
    ("actions", ACTIONS),
]);
/// `PolicyAPIModel` (`author`, `created`, `modified` are Xray's).
const POLICY: Shape = Shape::Object(&[
    ("name", Shape::Leaf),
    ("type", Shape::Leaf),
    ("author", Shape::Leaf),
    ("description", Shape::Leaf),
    ("rules", Shape::Items(&RULE)),
    ("created", Shape::Leaf),
    ("modified", Shape::Leaf),
]);
const WATCH_RESOURCE: Shape = Shape::Object(&[
    ("type", Shape::Leaf),
    ("bin_mgr_id", Shape::Leaf),
    (
        "filters",
        Shape::Items(&Shape::Object(&[
            ("type", Shape::Leaf),
            ("value", Shape::Leaf),
        ])),
    ),
    ("name", Shape::Leaf),
    ("build_repo", Shape::Leaf),
    ("repo_type", Shape::Leaf),
]);
/// `WatchAPIModel`; `general_data.id` is Xray's ("Get Watches" sample response).
const WATCH: Shape = Shape::Object(&[
    (
        "general_data",
        Shape::Object(&[
            ("id", Shape::Leaf),
            ("name", Shape::Leaf),
            ("description", Shape::Leaf),
            ("active", Shape::Leaf),
        ]),
    ),
    (
        "project_resources",
        Shape::Object(&[("resources", Shape::Items(&WATCH_RESOURCE))]),
    ),
    (
        "assigned_policies",
        Shape::Items(&Shape::Object(&[
            ("name", Shape::Leaf),
            ("type", Shape::Leaf),
        ])),
    ),
    ("watch_recipients", Shape::Leaf),
]);
/// `WebhookAPIModel`.
const WEBHOOK: Shape = Shape::Object(&[
    ("name", Shape::Leaf),
    ("url", Shape::Leaf),
    ("description", Shape::Leaf),
    ("use_proxy", Shape::Leaf),
    ("user_name", Shape::Leaf),
    ("password", Shape::Leaf),
    ("headers", Shape::Leaf),
]);

const NAME_VERSION: Shape = Shape::Object(&[("name", Shape::Leaf), ("version", Shape::Leaf)]);
/// `IgnoreRuleAPIModel` and `IgnoreFiltersAPIModel` (`resource_xray_ignore_rule.go`).
const IGNORE_RULE: Shape = Shape::Object(&[
    ("id", Shape::Leaf),
    ("author", Shape::Leaf),
    ("created", Shape::Leaf),
    ("is_expired", Shape::Leaf),
    ("notes", Shape::Leaf),
    ("expires_at", Shape::Leaf),
    (
        "ignore_filters",
        Shape::Object(&[
            ("vulnerabilities", Shape::Leaf),
            ("licenses", Shape::Leaf),
            ("cves", Shape::Leaf),
            ("policies", Shape::Leaf),
            ("watches", Shape::Leaf),
            ("docker-layers", Shape::Leaf),
            ("operational_risk", Shape::Leaf),
            ("release-bundles", Shape::Items(&NAME_VERSION)),
            ("release_bundles_v2", Shape::Items(&NAME_VERSION)),
            (
                "exposures",
                Shape::Object(&[
                    ("scanners", Shape::Leaf),
                    ("categories", Shape::Leaf),
                    ("file_path", Shape::Leaf),
                ]),
            ),
            (
                "builds",
                Shape::Items(&Shape::Object(&[
                    ("name", Shape::Leaf),
                    ("version", Shape::Leaf),
                    ("project", Shape::Leaf),
                ])),
            ),
            ("components", Shape::Items(&NAME_VERSION)),
            (
                "artifacts",
                Shape::Items(&Shape::Object(&[
                    ("name", Shape::Leaf),
                    ("version", Shape::Leaf),
                    ("path", Shape::Leaf),
                ])),
            ),
        ]),
    ),
]);
/// `CurationPolicyAPIModel` (`resource_xray_curation_policy.go`).
const CURATION_POLICY: Shape = Shape::Object(&[
    ("id", Shape::Leaf),
    ("name", Shape::Leaf),
    ("condition_id", Shape::Leaf),
    ("scope", Shape::Leaf),
    ("repo_exclude", Shape::Leaf),
    ("repo_include", Shape::Leaf),
    ("pkg_types_include", Shape::Leaf),
    ("policy_action", Shape::Leaf),
    (
        "waivers",
        Shape::Items(&Shape::Object(&[
            ("pkg_type", Shape::Leaf),
            ("pkg_name", Shape::Leaf),
            ("all_versions", Shape::Leaf),
            ("pkg_versions", Shape::Leaf),
            ("justification", Shape::Leaf),
        ])),
    ),
    (
        "label_waivers",
        Shape::Items(&Shape::Object(&[
            ("label", Shape::Leaf),
            ("justification", Shape::Leaf),
        ])),
    ),
    ("notify_emails", Shape::Leaf),
    ("waiver_request_config", Shape::Leaf),
    ("decision_owners", Shape::Leaf),
]);
/// `CustomCurationConditionAPIModel` (`resource_xray_custom_curation_condition.go`).
const CURATION_CONDITION: Shape = Shape::Object(&[
    ("id", Shape::Leaf),
    ("name", Shape::Leaf),
    ("condition_template_id", Shape::Leaf),
    (
        "param_values",
        Shape::Items(&Shape::Object(&[
            ("param_id", Shape::Leaf),
            ("value", Shape::Leaf),
        ])),
    ),
    ("is_custom", Shape::Leaf),
    ("created_by", Shape::Leaf),
    ("created_at", Shape::Leaf),
    ("updated_by", Shape::Leaf),
    ("updated_at", Shape::Leaf),
    ("risk_type", Shape::Leaf),
    ("supported_pkg_types", Shape::Leaf),
]);
/// `CustomIssueAPIModel` (`resource_xray_custom_issue.go`).
const CUSTOM_ISSUE: Shape = Shape::Object(&[
    ("id", Shape::Leaf),
    ("description", Shape::Leaf),
    ("summary", Shape::Leaf),
    ("type", Shape::Leaf),
    ("provider", Shape::Leaf),
    ("package_type", Shape::Leaf),
    ("severity", Shape::Leaf),
    (
        "components",
        Shape::Items(&Shape::Object(&[
            ("id", Shape::Leaf),
            ("vulnerable_versions", Shape::Leaf),
            ("fixed_versions", Shape::Leaf),
            (
                "vulnerable_ranges",
                Shape::Items(&Shape::Object(&[
                    ("vulnerable_versions", Shape::Leaf),
                    ("fixed_versions", Shape::Leaf),
                ])),
            ),
        ])),
    ),
    (
        "cves",
        Shape::Items(&Shape::Object(&[
            ("cve", Shape::Leaf),
            ("cvss_v2", Shape::Leaf),
            ("cvss_v3", Shape::Leaf),
        ])),
    ),
    (
        "sources",
        Shape::Items(&Shape::Object(&[
            ("source_id", Shape::Leaf),
            ("name", Shape::Leaf),
            ("url", Shape::Leaf),
        ])),
    ),
]);

/// A watch as Xray stores it: its members only, `general_data.id` Xray's (kept on update).
fn watch_stored(mut body: Value, existing: Option<&Value>) -> Value {
    prune(&mut body, &WATCH);
    let id = existing
        .and_then(|e| e.pointer("/general_data/id").cloned())
        .unwrap_or_else(|| json!(uuid::Uuid::new_v4().simple().to_string()[..24].to_owned()));
    if let Some(g) = body.get_mut("general_data").and_then(Value::as_object_mut) {
        g.insert("id".into(), id);
    }
    body
}

/// A watch as a read answers it: `WatchAPIModel`'s members only (the store's own key member
/// is not one of them).
fn watch_view(v: &Value) -> Value {
    let mut v = v.clone();
    prune(&mut v, &WATCH);
    v
}

/// The Xray version the simulator reports: one that serves everything the simulator does,
/// custom curation conditions included (JFrog's Xray Terraform provider refuses them below
/// 3.116.0, `resource_xray_custom_curation_condition.go`; 20 `TestAccCustomCurationCondition_*`
/// stopped at plan time on 3.111.17).
const XRAY_VERSION: &str = "3.117.10";

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Xray, StatusCode::BAD_REQUEST, msg)
}

fn not_found(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Xray, StatusCode::NOT_FOUND, msg)
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Xray's canonical casing of a severity.
fn canonical_severity(s: &str) -> Option<&'static str> {
    Some(match s.to_ascii_lowercase().as_str() {
        "all severities" => "All Severities",
        "critical" => "Critical",
        "high" => "High",
        "medium" => "Medium",
        "low" => "Low",
        _ => return None,
    })
}

/// Xray's refusal of a policy whose rules contradict themselves: 400 "Found Invalid
/// Policy", which the Xray Terraform provider's acceptance tests expect
/// (`TestAccLicensePolicy_badLicenseCriteria`, `TestAccLicensePolicy_badGracePeriod`,
/// `TestAccSecurityPolicy_badTypeInSecurityPolicy`, `TestAccSecurityPolicy_badGracePeriod`,
/// `TestAccSecurityPolicy_blockMismatchCVSS`); what follows the colon is the simulator's.
fn invalid_policy(reason: String) -> ApiError {
    bad(format!("Found Invalid Policy: {reason}"))
}

/// A rule's actions Xray refuses: a build-failure grace period without failing the build,
/// blocking unscanned artifacts without blocking downloads.
fn invalid_actions(rname: &str, actions: &Value) -> Result<(), ApiError> {
    let flag = |p: &str| actions.pointer(p).and_then(Value::as_bool).unwrap_or(false);
    let grace = actions
        .get("build_failure_grace_period_in_days")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if grace > 0 && !flag("/fail_build") {
        return Err(invalid_policy(format!(
            "rule '{rname}': build_failure_grace_period_in_days needs fail_build"
        )));
    }
    if flag("/block_download/unscanned") && !flag("/block_download/active") {
        return Err(invalid_policy(format!(
            "rule '{rname}': block_download.unscanned needs block_download.active"
        )));
    }
    Ok(())
}

fn validate_policy(_: &Ctx<'_>, mut body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    prune(&mut body, &POLICY);
    let name = str_at(&body, "/name").to_string();
    if name.is_empty() {
        return Err(bad("Policy name is required"));
    }
    if let Op::Update { key, .. } = op
        && key != name
    {
        return Err(bad("Policy name cannot be changed"));
    }
    let ty = str_at(&body, "/type").to_string();
    if !["security", "license", "operational_risk"].contains(&ty.as_str()) {
        return Err(bad(format!("Invalid policy type: '{ty}'")));
    }
    let Some(Value::Array(rules)) = body.get_mut("rules") else {
        return Err(bad("Policy must have at least one rule"));
    };
    if rules.is_empty() {
        return Err(bad("Policy must have at least one rule"));
    }
    let mut names = std::collections::BTreeSet::new();
    for r in rules.iter_mut() {
        let rname = str_at(r, "/name").to_string();
        if rname.is_empty() || !names.insert(rname.clone()) {
            return Err(bad(format!(
                "Rule names must be unique and not empty: '{rname}'"
            )));
        }
        if r.get("priority")
            .and_then(Value::as_i64)
            .is_none_or(|p| p < 1)
        {
            return Err(bad(format!("Rule '{rname}': priority must be 1 or more")));
        }
        if !r.get("actions").is_some_and(Value::is_object) {
            return Err(bad(format!("Rule '{rname}': actions are required")));
        }
        invalid_actions(&rname, &r["actions"])?;
        let Some(c) = r.get_mut("criteria").and_then(Value::as_object_mut) else {
            return Err(bad(format!("Rule '{rname}': criteria are required")));
        };
        if ty == "license" && c.contains_key("cvss_range") {
            return Err(invalid_policy(format!(
                "rule '{rname}': a license policy's criteria take no cvss_range"
            )));
        }
        if ty == "security" {
            if c.contains_key("min_severity") && c.contains_key("cvss_range") {
                return Err(bad(format!(
                    "Rule '{rname}': min_severity and cvss_range cannot be used together"
                )));
            }
            if let Some(Value::String(s)) = c.get("min_severity") {
                let canon = canonical_severity(s)
                    .ok_or_else(|| bad(format!("Rule '{rname}': invalid severity '{s}'")))?;
                c.insert("min_severity".into(), json!(canon));
            }
            if let Some(Value::Object(range)) = c.get_mut("cvss_range") {
                for bound in ["from", "to"] {
                    let x = range.get(bound).and_then(Value::as_f64).unwrap_or(-1.0);
                    if !(0.0..=10.0).contains(&x) {
                        return Err(bad(format!(
                            "Rule '{rname}': cvss_range.{bound} must be between 0 and 10"
                        )));
                    }
                    // Xray answers scores as decimals.
                    range.insert(bound.into(), json!(x));
                }
            }
        }
    }
    // Xray answers the rules in its own order, not the request's.
    rules.sort_by(|a, b| str_at(b, "/name").cmp(str_at(a, "/name")));
    let now = "2026-01-01T00:00:00Z";
    if let Value::Object(m) = &mut body {
        let created = match op {
            Op::Update { existing, .. } => existing.get("created").cloned(),
            Op::Create => None,
        };
        m.insert("author".into(), json!("admin"));
        m.insert("created".into(), created.unwrap_or(json!(now)));
        m.insert("modified".into(), json!(now));
    }
    Ok(body)
}

fn object_body(_: &Ctx<'_>, body: Value, _: Op<'_>) -> Result<Value, ApiError> {
    if body.is_object() {
        Ok(body)
    } else {
        Err(bad("The request body must be a JSON object"))
    }
}

fn named_body(ctx: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    if str_at(&body, "/name").is_empty() {
        return Err(bad("name is required"));
    }
    object_body(ctx, body, op)
}

/// An Xray webhook: a name, and only `WebhookAPIModel`'s members.
fn validate_webhook(ctx: &Ctx<'_>, mut body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    prune(&mut body, &WEBHOOK);
    named_body(ctx, body, op)
}

fn validate_curation_policy(ctx: &Ctx<'_>, mut body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    prune(&mut body, &CURATION_POLICY);
    named_body(ctx, body, op)
}

fn validate_curation_condition(
    ctx: &Ctx<'_>,
    mut body: Value,
    op: Op<'_>,
) -> Result<Value, ApiError> {
    prune(&mut body, &CURATION_CONDITION);
    named_body(ctx, body, op)
}

fn validate_custom_issue(ctx: &Ctx<'_>, mut body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    prune(&mut body, &CUSTOM_ISSUE);
    object_body(ctx, body, op)
}

/// A webhook's password is never answered.
fn webhook_view(v: &Value) -> Value {
    let mut v = v.clone();
    if let Value::Object(m) = &mut v {
        m.remove("password");
    }
    v
}

macro_rules! collection {
    ($static:ident, $name:expr, $key:expr, $ids:expr, $what:expr, $validate:expr, $view:expr) => {
        pub(crate) static $static: Declaration = Declaration {
            name: $name,
            key_field: $key,
            key_case: KeyCase::Sensitive,
            ids: $ids,
            flavor: Flavor::Xray,
            not_found: |k| {
                (
                    StatusCode::NOT_FOUND,
                    format!("{} {k} does not exist", $what),
                )
            },
            exists: |k| {
                (
                    StatusCode::CONFLICT,
                    format!("{} {k} already exists", $what),
                )
            },
            validate: $validate,
            view: $view,
        };
    };
}

collection!(
    POLICIES,
    "xray_policies",
    "name",
    Ids::Body,
    "Policy",
    validate_policy,
    as_stored
);
collection!(
    WEBHOOKS,
    "xray_webhooks",
    "name",
    Ids::Body,
    "Webhook",
    validate_webhook,
    webhook_view
);
collection!(
    CURATION_POLICIES,
    "xray_curation_policies",
    "id",
    Ids::Counter,
    "Curation policy",
    validate_curation_policy,
    as_stored
);
collection!(
    CURATION_CONDITIONS,
    "xray_curation_conditions",
    "id",
    Ids::CounterText,
    "Curation condition",
    validate_curation_condition,
    as_stored
);
collection!(
    EVENTS,
    "xray_custom_issues",
    "id",
    Ids::Body,
    "Custom issue",
    validate_custom_issue,
    as_stored
);
collection!(
    WATCHES,
    "xray_watches",
    "name",
    Ids::Body,
    "Watch",
    object_body,
    as_stored
);
collection!(
    IGNORE_RULES,
    "xray_ignore_rules",
    "id",
    Ids::Uuid,
    "Ignore rule",
    object_body,
    as_stored
);
collection!(
    REPORTS,
    "xray_reports",
    "report_id",
    Ids::Counter,
    "Report",
    object_body,
    as_stored
);
collection!(
    CONFIG,
    "xray_configuration",
    "key",
    Ids::Body,
    "Configuration",
    object_body,
    as_stored
);
collection!(
    CATALOG_LABELS,
    "catalog_labels",
    "name",
    Ids::Body,
    "Label",
    object_body,
    as_stored
);

collection!(
    CATALOG_ASSIGNMENTS,
    "catalog_assignments",
    "key",
    Ids::Body,
    "Assignment",
    object_body,
    as_stored
);

collection!(
    PROJECT_OBJECTS,
    "xray_project_objects",
    "key",
    Ids::Body,
    "Project object",
    object_body,
    as_stored
);

/// Every collection of this service.
pub(crate) fn collections() -> Vec<&'static Declaration> {
    vec![
        &POLICIES,
        &WEBHOOKS,
        &CURATION_POLICIES,
        &CURATION_CONDITIONS,
        &EVENTS,
        &WATCHES,
        &IGNORE_RULES,
        &REPORTS,
        &CONFIG,
        &CATALOG_LABELS,
        &CATALOG_ASSIGNMENTS,
        &PROJECT_OBJECTS,
    ]
}

macro_rules! binding {
    ($static:ident, $decl:expr, $base:expr, $item:expr, $answer:expr) => {
        binding!($static, $decl, $base, $item, $answer, UpdateAnswer::Empty);
    };
    ($static:ident, $decl:expr, $base:expr, $item:expr, $answer:expr, $update:expr) => {
        static $static: Binding = Binding {
            decl: $decl,
            base: $base,
            item: $item,
            create_status: StatusCode::CREATED,
            create_answer: $answer,
            update_status: StatusCode::OK,
            update_answer: $update,
            delete_status: StatusCode::OK,
            read_access: Access::User,
            write_access: Access::Admin,
        };
    };
}

binding!(
    POLICY_ROUTES,
    &POLICIES,
    "/xray/api/v2/policies",
    "/xray/api/v2/policies/{key}",
    CreateAnswer::Empty
);
binding!(
    WEBHOOK_ROUTES,
    &WEBHOOKS,
    "/xray/api/v1/webhooks",
    "/xray/api/v1/webhooks/{key}",
    CreateAnswer::Empty
);
binding!(
    CURATION_POLICY_ROUTES,
    &CURATION_POLICIES,
    "/xray/api/v1/curation/policies",
    "/xray/api/v1/curation/policies/{key}",
    CreateAnswer::Object,
    UpdateAnswer::Object
);
binding!(
    CURATION_CONDITION_ROUTES,
    &CURATION_CONDITIONS,
    "/xray/api/v1/curation/conditions",
    "/xray/api/v1/curation/conditions/{key}",
    CreateAnswer::Object,
    UpdateAnswer::Object
);
binding!(
    EVENT_ROUTES,
    &EVENTS,
    "/xray/api/v1/events",
    "/xray/api/v1/events/{key}",
    CreateAnswer::Empty
);
binding!(
    EVENT_V2_ROUTES,
    &EVENTS,
    "/xray/api/v2/events",
    "/xray/api/v2/events/{key}",
    CreateAnswer::Empty
);

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/xray/api/v1/system/ping", get(ping))
        .route("/xray/api/v1/system/version", get(version))
        .route("/xray/api/v2/policies", get(policies).post(policies))
        .route(
            "/xray/api/v2/policies/{key}",
            get(policy).put(policy).delete(policy),
        )
        .merge(WEBHOOK_ROUTES.routes())
        .merge(CURATION_POLICY_ROUTES.routes())
        .merge(CURATION_CONDITION_ROUTES.routes())
        .merge(EVENT_ROUTES.routes())
        .merge(EVENT_V2_ROUTES.routes())
        .route("/xray/api/v2/watches", get(watches).post(watches))
        .route(
            "/xray/api/v2/watches/{name}",
            get(watch).put(watch).delete(watch),
        )
        .route(
            "/xray/api/v1/ignore_rules",
            get(list_ignore_rules).post(create_ignore_rule),
        )
        .route("/xray/api/v1/reports", post(list_reports))
        .route(
            "/xray/api/v1/ignore_rules/{id}",
            get(read_ignore_rule).delete(delete_ignore_rule),
        )
        .route(
            "/xray/api/v1/reports/{id}",
            get(read_report).delete(delete_report).post(create_report),
        )
        .route(
            "/xray/api/v1/configuration/workersCount",
            get(read_workers).put(write_workers),
        )
        .route(
            "/xray/api/v1/configuration/dbsync/time",
            get(read_dbsync).put(write_dbsync),
        )
        .route(
            "/artifactory/api/xrayRepo/getIntegrationConfig",
            get(read_integration),
        )
        .route(
            "/artifactory/api/xrayRepo/updateXrayBasicSettings",
            post(write_integration),
        )
        .route("/xray/api/v1/repos_config", put(write_repo_config))
        .route("/xray/api/v1/repos_config/{repo}", get(read_repo_config))
        .route(
            "/xray/api/v1/binMgr/{id}/{what}",
            get(read_bin_mgr).put(write_bin_mgr),
        )
        .route("/catalog/api/v1/custom/graphql", post(graphql))
        .route("/catalog/api/v1/system/app_health", get(catalog_health))
}

/// `GET /catalog/api/v1/system/app_health`: the Catalog's health, which the Xray Terraform
/// provider checks before its first curation or catalog call (`CheckCatalogHealth` of
/// `jfrog/terraform-provider-shared` `util/util.go`, called by `ValidateCatalogHealth`):
/// `code` "OK", entitled, a Central token that has not expired, the database and Central
/// connections working.
async fn catalog_health(_user: User) -> Json<Value> {
    Json(json!({
        "code": "OK",
        "entitlements": {
            "entitled_for_catalog": true,
            "has_central_token": true,
            "token_expired": false
        },
        "central": {"central_connection_working": true},
        "db_connection_working": true,
        "one_model_available": true
    }))
}

/// Answers `{"status":"pong"}` without authentication.
async fn ping() -> Json<Value> {
    Json(json!({"status": "pong"}))
}

async fn version(_user: User) -> Json<Value> {
    Json(json!({"xray_version": XRAY_VERSION, "xray_revision": "a1b2c3d"}))
}

fn json_of(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| bad(format!("Could not parse the request body as JSON: {e}")))
}

// --- watches ---

/// Xray's checks of a watch: its resources exist in Artifactory, its policies in Xray.
fn check_watch(s: &Shared, project: Option<&str>, body: &Value) -> Result<String, ApiError> {
    let name = str_at(body, "/general_data/name").to_string();
    if name.is_empty() {
        return Err(bad("Watch name is required"));
    }
    let resources = body
        .pointer("/project_resources/resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for r in &resources {
        let ty = str_at(r, "/type");
        // A project's build resources name the project's build-info repository (an
        // undocumented member Xray requires there).
        if let Some(p) = project
            && ty == "build"
            && str_at(r, "/build_repo") != format!("{p}-build-info")
        {
            return Err(bad(format!(
                "Failed to create watch: build '{}' of project {p} must have build_repo '{p}-build-info'",
                str_at(r, "/name")
            )));
        }
        if ty == "repository" {
            let repo = str_at(r, "/name");
            if s.artifactory.repository_view(repo).is_none() {
                return Err(bad(format!(
                    "Failed to create watch: repository '{repo}' does not exist"
                )));
            }
        }
    }
    let policies = body
        .get("assigned_policies")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for p in &policies {
        let pname = str_at(p, "/name");
        // A project's watch may assign the project's policies and the global ones (the
        // Xray Terraform provider's `TestAccWatch_allReposWithProjectKey` assigns a global
        // policy to a watch of a project).
        let found = project
            .and_then(|p| scoped_get(s, Scoped::Policy, p, pname))
            .or_else(|| s.collections.get_raw(POLICIES.name, pname));
        if found.is_none() {
            return Err(bad(format!(
                "Failed to create watch: policy '{pname}' does not exist"
            )));
        }
    }
    Ok(name)
}

async fn list_watches(State(s): State<Arc<Shared>>, _u: User) -> Json<Value> {
    Json(Value::Array(
        s.collections
            .list_raw(WATCHES.name)
            .unwrap_or_default()
            .iter()
            .map(watch_view)
            .collect(),
    ))
}

async fn create_watch(
    State(s): State<Arc<Shared>>,
    _u: User,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let body = json_of(&body)?;
    let name = check_watch(&s, None, &body)?;
    if s.collections.get_raw(WATCHES.name, &name).is_some() {
        return Err(ApiError::new(
            Flavor::Xray,
            StatusCode::CONFLICT,
            format!("Watch {name} already exists"),
        ));
    }
    s.collections
        .put_raw(WATCHES.name, &name, watch_stored(body, None));
    Ok((
        StatusCode::CREATED,
        Json(json!({"info": "Watch has been successfully created"})),
    )
        .into_response())
}

async fn read_watch(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    s.collections
        .get_raw(WATCHES.name, &name)
        .map(|w| Json(watch_view(&w)))
        .ok_or_else(|| not_found(format!("Failed to find watch: watch {name} does not exist")))
}

async fn update_watch(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let body = json_of(&body)?;
    let Some(existing) = s.collections.get_raw(WATCHES.name, &name) else {
        return Err(not_found(format!(
            "Failed to find watch: watch {name} does not exist"
        )));
    };
    let new_name = check_watch(&s, None, &body)?;
    if new_name != name {
        return Err(bad("Watch name cannot be changed"));
    }
    s.collections
        .put_raw(WATCHES.name, &name, watch_stored(body, Some(&existing)));
    Ok(Json(json!({"info": "Watch was successfully updated"})))
}

async fn delete_watch(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    if s.collections.delete_raw(WATCHES.name, &name) {
        Ok(Json(json!({"info": "Watch was successfully deleted"})))
    } else {
        Err(not_found(format!(
            "Failed to find watch: watch {name} does not exist"
        )))
    }
}

// --- project-scoped policies and watches ---

/// The `?projectKey=` of a call (empty: the global scope).
#[derive(Debug, serde::Deserialize)]
struct ProjectQuery {
    #[serde(rename = "projectKey", default)]
    project_key: String,
}

impl ProjectQuery {
    fn project(&self) -> Option<&str> {
        Some(self.project_key.as_str()).filter(|p| !p.is_empty())
    }
}

/// What a project-scoped call addresses.
#[derive(Debug, Clone, Copy)]
enum Scoped {
    Policy,
    Watch,
}

impl Scoped {
    fn scope(self, project: &str) -> String {
        match self {
            Scoped::Policy => format!("policy|{project}"),
            Scoped::Watch => format!("watch|{project}"),
        }
    }
}

fn scoped_get(s: &Shared, what: Scoped, project: &str, name: &str) -> Option<Value> {
    s.collections
        .get_raw(
            PROJECT_OBJECTS.name,
            &format!("{}|{name}", what.scope(project)),
        )
        .map(|v| v["object"].clone())
}

/// One call on a project's policies or watches (`name` empty: the collection).
fn scoped_call(
    s: &Shared,
    what: Scoped,
    project: &str,
    name: &str,
    method: &Method,
    caller: &Caller,
    body: &[u8],
) -> Result<Response, ApiError> {
    if *method != Method::GET && !matches!(caller, Caller::Admin) {
        return Err(ApiError::new(
            Flavor::Xray,
            StatusCode::FORBIDDEN,
            "Forbidden",
        ));
    }
    if !super::projects::project_exists(s, project) {
        return Err(not_found(format!("Project '{project}' does not exist")));
    }
    let scope = what.scope(project);
    let missing = || {
        not_found(format!(
            "{what:?} {name} does not exist in project {project}"
        ))
    };
    // Xray's own checks of the body; the name it addresses.
    let check = |body: Value, key: Option<&str>| -> Result<(String, Value), ApiError> {
        match what {
            Scoped::Policy => {
                let ctx = Ctx {
                    descriptor: &s.descriptor.content,
                };
                let existing = Value::Null;
                let op = match key {
                    Some(key) => Op::Update {
                        key,
                        existing: &existing,
                    },
                    None => Op::Create,
                };
                let v = validate_policy(&ctx, body, op)?;
                Ok((str_at(&v, "/name").to_string(), v))
            }
            Scoped::Watch => {
                let n = check_watch(s, Some(project), &body)?;
                if key.is_some_and(|k| k != n) {
                    return Err(bad("Watch name cannot be changed"));
                }
                let existing = scoped_get(s, what, project, &n);
                Ok((n, watch_stored(body, existing.as_ref())))
            }
        }
    };
    let put = |n: &str, v: Value| {
        s.collections.put_raw(
            PROJECT_OBJECTS.name,
            &format!("{scope}|{n}"),
            json!({"scope": scope, "object": v}),
        )
    };
    match (method.clone(), name.is_empty()) {
        (Method::GET, true) => {
            let all = s
                .collections
                .list_raw(PROJECT_OBJECTS.name)
                .unwrap_or_default();
            let mine: Vec<Value> = all
                .into_iter()
                .filter(|v| v["scope"] == scope.as_str())
                .map(|v| v["object"].clone())
                .collect();
            Ok(Json(Value::Array(mine)).into_response())
        }
        (Method::GET, false) => scoped_get(s, what, project, name)
            .map(|v| Json(v).into_response())
            .ok_or_else(missing),
        (Method::POST, true) => {
            let (n, v) = check(json_of(body)?, None)?;
            if scoped_get(s, what, project, &n).is_some() {
                return Err(ApiError::new(
                    Flavor::Xray,
                    StatusCode::CONFLICT,
                    format!("{what:?} {n} already exists in project {project}"),
                ));
            }
            put(&n, v);
            Ok(StatusCode::CREATED.into_response())
        }
        (Method::PUT, false) => {
            if scoped_get(s, what, project, name).is_none() {
                return Err(missing());
            }
            let (n, v) = check(json_of(body)?, Some(name))?;
            put(&n, v);
            Ok(StatusCode::OK.into_response())
        }
        (Method::DELETE, false) => {
            if s.collections
                .delete_raw(PROJECT_OBJECTS.name, &format!("{scope}|{name}"))
            {
                Ok(StatusCode::OK.into_response())
            } else {
                Err(missing())
            }
        }
        _ => Err(ApiError::new(
            Flavor::Xray,
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed",
        )),
    }
}

async fn policies(
    State(s): State<Arc<Shared>>,
    Query(q): Query<ProjectQuery>,
    caller: Caller,
    method: Method,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    match (q.project(), method) {
        (Some(p), m) => scoped_call(&s, Scoped::Policy, p, "", &m, &caller, &body),
        (None, Method::POST) => POLICY_ROUTES.create(&s, caller, &body).await,
        (None, _) => POLICY_ROUTES.list(&s, caller).await,
    }
}

async fn policy(
    State(s): State<Arc<Shared>>,
    Path(name): Path<String>,
    Query(q): Query<ProjectQuery>,
    caller: Caller,
    method: Method,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    match (q.project(), method) {
        (Some(p), m) => scoped_call(&s, Scoped::Policy, p, &name, &m, &caller, &body),
        (None, Method::PUT) => POLICY_ROUTES.update(&s, caller, &name, &body).await,
        (None, Method::DELETE) => POLICY_ROUTES.delete(&s, caller, &name).await,
        (None, _) => POLICY_ROUTES.read(&s, caller, &name).await,
    }
}

async fn watches(
    State(s): State<Arc<Shared>>,
    Query(q): Query<ProjectQuery>,
    caller: Caller,
    u: User,
    method: Method,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    match (q.project(), method) {
        (Some(p), m) => scoped_call(&s, Scoped::Watch, p, "", &m, &caller, &body),
        (None, Method::POST) => create_watch(State(s), u, body).await,
        (None, _) => Ok(list_watches(State(s), u).await.into_response()),
    }
}

async fn watch(
    State(s): State<Arc<Shared>>,
    Path(name): Path<String>,
    Query(q): Query<ProjectQuery>,
    caller: Caller,
    u: User,
    method: Method,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let path = Path(name.clone());
    match (q.project(), method) {
        (Some(p), m) => scoped_call(&s, Scoped::Watch, p, &name, &m, &caller, &body),
        (None, Method::PUT) => Ok(update_watch(State(s), u, path, body).await?.into_response()),
        (None, Method::DELETE) => Ok(delete_watch(State(s), u, path).await?.into_response()),
        (None, _) => Ok(read_watch(State(s), u, path).await?.into_response()),
    }
}

// --- project scope of ignore rules, reports and indexing configuration ---

/// Where the objects of one call live: the global collection, or the project's part of
/// the project objects (`<what>|<project>|<id>`, apart from the global object of the same
/// ID and from other projects'). A project scope needs the project (404 otherwise).
struct Store<'a> {
    s: &'a Shared,
    global: &'static str,
    scope: Option<String>,
}

impl<'a> Store<'a> {
    fn of(
        s: &'a Shared,
        global: &'static str,
        what: &str,
        q: &ProjectQuery,
    ) -> Result<Self, ApiError> {
        let scope = match q.project() {
            None => None,
            Some(p) if super::projects::project_exists(s, p) => Some(format!("{what}|{p}")),
            Some(p) => return Err(not_found(format!("Project '{p}' does not exist"))),
        };
        Ok(Store { s, global, scope })
    }

    fn get(&self, id: &str) -> Option<Value> {
        match &self.scope {
            None => self.s.collections.get_raw(self.global, id),
            Some(scope) => self
                .s
                .collections
                .get_raw(PROJECT_OBJECTS.name, &format!("{scope}|{id}"))
                .map(|v| v["object"].clone()),
        }
    }

    fn put(&self, id: &str, v: Value) {
        match &self.scope {
            None => self.s.collections.put_raw(self.global, id, v),
            Some(scope) => self.s.collections.put_raw(
                PROJECT_OBJECTS.name,
                &format!("{scope}|{id}"),
                json!({"scope": scope, "object": v}),
            ),
        };
    }

    fn delete(&self, id: &str) -> bool {
        match &self.scope {
            None => self.s.collections.delete_raw(self.global, id),
            Some(scope) => self
                .s
                .collections
                .delete_raw(PROJECT_OBJECTS.name, &format!("{scope}|{id}")),
        }
    }

    fn list(&self) -> Vec<Value> {
        match &self.scope {
            None => self.s.collections.list_raw(self.global).unwrap_or_default(),
            Some(scope) => self
                .s
                .collections
                .list_raw(PROJECT_OBJECTS.name)
                .unwrap_or_default()
                .into_iter()
                .filter(|v| v["scope"] == scope.as_str())
                .map(|v| v["object"].clone())
                .collect(),
        }
    }
}

// --- ignore rules ---

async fn create_ignore_rule(
    State(s): State<Arc<Shared>>,
    _u: User,
    Query(q): Query<ProjectQuery>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let store = Store::of(&s, IGNORE_RULES.name, "ignore_rule", &q)?;
    let mut body = json_of(&body)?;
    prune(&mut body, &IGNORE_RULE);
    if str_at(&body, "/notes").is_empty() {
        return Err(bad("notes is required"));
    }
    if !body
        .get("ignore_filters")
        .and_then(Value::as_object)
        .is_some_and(|f| f.values().any(|v| !v.as_array().is_some_and(Vec::is_empty)))
    {
        return Err(bad("An ignore rule must have at least one ignore filter"));
    }
    let id = s.collections.next_id(IGNORE_RULES.name).unwrap_or_default();
    if let Value::Object(m) = &mut body {
        m.insert("id".into(), json!(id));
        m.insert("author".into(), json!("admin"));
        m.insert("created".into(), json!("2026-01-01T00:00:00Z"));
        m.insert("is_expired".into(), json!(false));
    }
    store.put(&id, body);
    Ok((
        StatusCode::CREATED,
        Json(json!({"info": format!("Successfully added Ignore rule with id: {id}")})),
    )
        .into_response())
}

/// The paging of a list call (`page_num` from 1, `num_of_rows`); without them, one page
/// holds every object.
#[derive(Debug, serde::Deserialize)]
struct Paging {
    page_num: Option<usize>,
    num_of_rows: Option<usize>,
}

/// Ignore rules (of the project, if any), paged as
/// `{data, total_count}` (`total_count` counts every rule, not the page).
async fn list_ignore_rules(
    State(s): State<Arc<Shared>>,
    _u: User,
    Query(q): Query<ProjectQuery>,
    Query(paging): Query<Paging>,
) -> Result<Json<Value>, ApiError> {
    let all = Store::of(&s, IGNORE_RULES.name, "ignore_rule", &q)?.list();
    let total = all.len();
    let rows = paging.num_of_rows.unwrap_or(total.max(1));
    if rows == 0 || paging.page_num == Some(0) {
        return Err(bad("page_num and num_of_rows must be 1 or more"));
    }
    let page = paging.page_num.unwrap_or(1);
    let data: Vec<Value> = all.into_iter().skip((page - 1) * rows).take(rows).collect();
    Ok(Json(json!({"total_count": total, "data": data})))
}

async fn read_ignore_rule(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    Store::of(&s, IGNORE_RULES.name, "ignore_rule", &q)?
        .get(&id)
        .map(Json)
        .ok_or_else(|| not_found(format!("Ignore rule {id} not found")))
}

async fn delete_ignore_rule(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    if Store::of(&s, IGNORE_RULES.name, "ignore_rule", &q)?.delete(&id) {
        Ok(Json(json!({"info": "Successfully deleted Ignore rule"})))
    } else {
        Err(not_found(format!("Ignore rule {id} not found")))
    }
}

// --- reports ---

/// The report types of `POST /api/v1/reports/<type>`.
const REPORT_TYPES: &[&str] = &[
    "vulnerabilities",
    "licenses",
    "violations",
    "operationalRisks",
    "exposures",
];

/// `POST /api/v1/reports/<type>` (the path segment is the type, not an ID).
async fn create_report(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(kind): Path<String>,
    Query(q): Query<ProjectQuery>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    if !REPORT_TYPES.contains(&kind.as_str()) {
        return Err(not_found(format!("Unknown report type {kind}")));
    }
    let store = Store::of(&s, REPORTS.name, "report", &q)?;
    let body = json_of(&body)?;
    let name = str_at(&body, "/name").to_string();
    if name.is_empty() {
        return Err(bad("Report name is required"));
    }
    if !body.get("resources").is_some_and(Value::is_object) {
        return Err(bad("Report resources are required"));
    }
    let id = s.collections.next_id(REPORTS.name).unwrap_or_default();
    let report = json!({
        "id": id.parse::<u64>().unwrap_or_default(),
        "name": name,
        "report_type": kind,
        "status": "pending",
        "progress": 0,
        "total_artifacts": 0,
        "num_of_processed_artifacts": 0,
        "number_of_rows": 0,
        "author": "admin",
    });
    store.put(&id, report);
    Ok((
        StatusCode::OK,
        Json(json!({"report_id": id.parse::<u64>().unwrap_or_default(), "status": "pending"})),
    )
        .into_response())
}

/// The query of the reports list: its paging is mandatory (`page_num` from 1,
/// `num_of_rows`), the order by name, type, author, start time or status.
#[derive(Debug, serde::Deserialize)]
struct ReportsPaging {
    page_num: Option<usize>,
    num_of_rows: Option<usize>,
    #[serde(default)]
    direction: String,
    #[serde(default)]
    order_by: String,
}

/// `POST /api/v1/reports?direction=&page_num=&num_of_rows=&order_by=` with
/// `{filters: {name, report_type, status}}` (the name a substring): one page of the reports
/// (of the project, if any) as `{total_reports, reports}`, `total_reports` counting every
/// matching report. Listing a report, like reading it, advances its generation.
async fn list_reports(
    State(s): State<Arc<Shared>>,
    _u: User,
    Query(q): Query<ProjectQuery>,
    Query(paging): Query<ReportsPaging>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let (Some(page), Some(rows)) = (paging.page_num, paging.num_of_rows) else {
        return Err(bad("page_num and num_of_rows are mandatory"));
    };
    if page == 0 || rows == 0 {
        return Err(bad("page_num and num_of_rows must be 1 or more"));
    }
    let store = Store::of(&s, REPORTS.name, "report", &q)?;
    let body = if body.is_empty() {
        json!({})
    } else {
        json_of(&body)?
    };
    let name = str_at(&body, "/filters/name").to_string();
    let among = |pointer: &str, value: &str| match body.pointer(pointer).and_then(Value::as_array) {
        Some(allowed) => allowed.iter().any(|a| a.as_str() == Some(value)),
        None => true,
    };
    let mut reports: Vec<Value> = store
        .list()
        .into_iter()
        .filter(|r| str_at(r, "/name").contains(&name))
        .filter(|r| among("/filters/report_type", str_at(r, "/report_type")))
        .filter(|r| among("/filters/status", str_at(r, "/status")))
        .collect();
    let order = match paging.order_by.as_str() {
        "type" => "/report_type",
        "author" => "/author",
        "status" => "/status",
        "start_time" => "/start_time",
        _ => "/name",
    };
    reports.sort_by(|a, b| str_at(a, order).cmp(str_at(b, order)));
    if paging.direction == "desc" {
        reports.reverse();
    }
    let total = reports.len();
    let page: Vec<Value> = reports
        .into_iter()
        .skip((page - 1).saturating_mul(rows))
        .take(rows)
        .collect();
    for r in &page {
        if let Some(id) = r.get("id").map(|id| id.to_string()) {
            advance_report(&store, &id, r.clone());
        }
    }
    Ok(Json(json!({"total_reports": total, "reports": page})))
}

/// The next step of a report's generation (pending, running, completed), stored.
fn advance_report(store: &Store<'_>, id: &str, mut r: Value) {
    let next = match str_at(&r, "/status") {
        "pending" => {
            json!({"status": "running", "progress": 50, "total_artifacts": 2, "num_of_processed_artifacts": 1})
        }
        "running" => {
            json!({"status": "completed", "progress": 100, "total_artifacts": 2, "num_of_processed_artifacts": 2, "number_of_rows": 3})
        }
        _ => Value::Null,
    };
    if let (Value::Object(m), Value::Object(n)) = (&mut r, next) {
        m.extend(n);
        store.put(id, r);
    }
}

/// Each read advances a report's generation: pending, running, completed.
async fn read_report(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    let store = Store::of(&s, REPORTS.name, "report", &q)?;
    let r = store
        .get(&id)
        .ok_or_else(|| not_found("failed to get report details"))?;
    // "Get Report Details": the job (ID, name, type, status, progress, counts, author), and
    // in a project its key; never the report's parameters (resources, filters, schedule).
    let mut answer = r.clone();
    if let (Some(project), Value::Object(m)) = (q.project(), &mut answer) {
        m.insert("project_key".into(), json!(project));
    }
    advance_report(&store, &id, r);
    Ok(Json(answer))
}

async fn delete_report(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    if Store::of(&s, REPORTS.name, "report", &q)?.delete(&id) {
        Ok(Json(json!({"info": "Report successfully deleted"})))
    } else {
        Err(not_found("failed to get report details"))
    }
}

// --- configuration singletons ---

// The models Xray and Artifactory bind the configuration bodies to (terraform-provider-xray
// v3.1.9, `pkg/xray/resource/`); other members are dropped, never stored or answered.

/// `WorkersCountNewContentAPIModel` (`resource_xray_workers_count.go`).
const NEW_CONTENT: Shape = Shape::Object(&[("new_content", Shape::Leaf)]);
/// `WorkersCountNewExistingContentAPIModel`.
const NEW_EXISTING_CONTENT: Shape = Shape::Object(&[
    ("new_content", Shape::Leaf),
    ("existing_content", Shape::Leaf),
]);
/// `WorkersCountAPIModel` (`resource_xray_workers_count.go`).
const WORKERS_COUNT: Shape = Shape::Object(&[
    ("index", NEW_EXISTING_CONTENT),
    ("persist", NEW_EXISTING_CONTENT),
    ("analysis", NEW_EXISTING_CONTENT),
    ("policy_enforcer", NEW_EXISTING_CONTENT),
    ("sbom", NEW_EXISTING_CONTENT),
    ("usercatalog", NEW_EXISTING_CONTENT),
    ("sbomimpactanalysis", NEW_EXISTING_CONTENT),
    ("migrationsbom", NEW_EXISTING_CONTENT),
    ("impact_analysis", NEW_CONTENT),
    ("notification", NEW_CONTENT),
    ("panoramic", NEW_CONTENT),
    ("sbomenricher", NEW_EXISTING_CONTENT),
    ("sbomdependencies", NEW_EXISTING_CONTENT),
    ("sbomdeleter", NEW_EXISTING_CONTENT),
]);
/// `BasicSettingsRequestAPIModel` (`resource_xray_settings.go`), the body of Artifactory's
/// `POST /api/xrayRepo/updateXrayBasicSettings`.
const BASIC_SETTINGS: Shape = Shape::Object(&[
    ("xrayEnabled", Shape::Leaf),
    ("allowBlockedArtifactsDownload", Shape::Leaf),
    ("allowDownloadsXrayUnavailable", Shape::Leaf),
    ("blockUnscannedTimeoutSeconds", Shape::Leaf),
    ("blockUnfinishedScansTimeoutSeconds", Shape::Leaf),
]);
/// `PatternAPIModel` / `AllOtherArtifactsAPIModel` (`resource_xray_repository_config.go`).
const PATH_PATTERN: Shape = Shape::Object(&[
    ("include", Shape::Leaf),
    ("exclude", Shape::Leaf),
    ("index_new_artifacts", Shape::Leaf),
    ("retention_in_days", Shape::Leaf),
]);
/// `RepositoryConfigurationAPIModel`, `RepoConfigurationAPIModel`, `ExposuresAPIModel`
/// (`scanners_category` a map of booleans, kept whole), `PathsConfigurationAPIModel`
/// (`resource_xray_repository_config.go`).
const REPOSITORY_CONFIG: Shape = Shape::Object(&[
    ("repo_name", Shape::Leaf),
    (
        "repo_config",
        Shape::Object(&[
            ("vuln_contextual_analysis", Shape::Leaf),
            ("retention_in_days", Shape::Leaf),
            (
                "exposures",
                Shape::Object(&[("scanners_category", Shape::Leaf)]),
            ),
        ]),
    ),
    (
        "repo_paths_config",
        Shape::Object(&[
            ("patterns", Shape::Items(&PATH_PATTERN)),
            (
                "all_other_artifacts",
                Shape::Object(&[
                    ("index_new_artifacts", Shape::Leaf),
                    ("retention_in_days", Shape::Leaf),
                ]),
            ),
        ]),
    ),
]);
/// `BinaryManagerRepoAPIModel` (`resource_xray_binary_manager_repos.go`): an indexed
/// repository of the binary manager.
const BIN_MGR_REPO: Shape = Shape::Object(&[
    ("name", Shape::Leaf),
    ("type", Shape::Leaf),
    ("pkg_type", Shape::Leaf),
]);

fn config_get(s: &Shared, key: &str, default: Value) -> Value {
    let mut v = s.collections.get_raw(CONFIG.name, key).unwrap_or(default);
    if let Value::Object(m) = &mut v {
        m.remove("key");
    }
    v
}

fn config_put(s: &Shared, key: &str, mut v: Value) {
    if let Value::Object(m) = &mut v {
        m.insert("key".into(), json!(key));
    }
    s.collections.put_raw(CONFIG.name, key, v);
}

/// The queues whose workers may be set to 0: the SBOM and catalog ones (the Xray Terraform
/// provider's `TestAccWorkersCount_full` sets `sbom`, `user_catalog`,
/// `sbom_impact_analysis` and `migration_sbom` to 0 new and 0 existing workers and reads
/// them back so).
const WORKERS_MAY_BE_ZERO: &[&str] =
    &["sbom", "usercatalog", "sbomimpactanalysis", "migrationsbom"];

fn default_workers() -> Value {
    let both = json!({"new_content": 4, "existing_content": 2});
    json!({
        "index": both, "persist": both, "analysis": both, "policy_enforcer": both,
        "sbom": both, "usercatalog": both, "sbomimpactanalysis": both, "migrationsbom": both,
        "impact_analysis": {"new_content": 2}, "notification": {"new_content": 2},
        "panoramic": {"new_content": 2}, "sbomenricher": both, "sbomdependencies": both,
        "sbomdeleter": both
    })
}

async fn read_workers(State(s): State<Arc<Shared>>, _u: User) -> Json<Value> {
    Json(config_get(&s, "workersCount", default_workers()))
}

async fn write_workers(
    State(s): State<Arc<Shared>>,
    _u: User,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let mut body = json_of(&body)?;
    prune(&mut body, &WORKERS_COUNT);
    let Value::Object(m) = &body else {
        return Err(bad("The request body must be a JSON object"));
    };
    for (k, v) in m {
        let n = v.get("new_content").and_then(Value::as_i64).unwrap_or(0);
        let least = if WORKERS_MAY_BE_ZERO.contains(&k.as_str()) {
            0
        } else {
            1
        };
        if n < least {
            return Err(bad(format!("{k}: new_content must be {least} or more")));
        }
    }
    let mut merged = config_get(&s, "workersCount", default_workers());
    if let Value::Object(cur) = &mut merged {
        cur.extend(m.clone());
    }
    config_put(&s, "workersCount", merged);
    Ok(Json(
        json!({"info": "Workers count was updated successfully"}),
    ))
}

async fn read_dbsync(State(s): State<Arc<Shared>>, _u: User) -> Json<Value> {
    Json(config_get(
        &s,
        "dbsync",
        json!({"db_sync_updates_time": "00:00"}),
    ))
}

async fn write_dbsync(
    State(s): State<Arc<Shared>>,
    _u: User,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let body = json_of(&body)?;
    let t = str_at(&body, "/db_sync_updates_time");
    let ok = t.len() == 5
        && t.split_once(':').is_some_and(|(h, m)| {
            h.parse::<u8>().is_ok_and(|h| h < 24) && m.parse::<u8>().is_ok_and(|m| m < 60)
        });
    if !ok {
        return Err(bad(format!("Invalid db sync time '{t}', expected HH:mm")));
    }
    config_put(&s, "dbsync", json!({"db_sync_updates_time": t}));
    Ok(Json(
        json!({"info": "Database sync time was updated successfully"}),
    ))
}

fn default_integration() -> Value {
    json!({
        "xrayEnabled": true,
        "allowBlockedArtifactsDownload": false,
        "allowDownloadsXrayUnavailable": false,
        "blockUnscannedTimeoutSeconds": 60,
        "blockUnfinishedScansTimeoutSeconds": 1800
    })
}

/// `GET /artifactory/api/xrayRepo/getIntegrationConfig`: the basic settings under the names
/// the answer uses, which for two of them are not the write's (`allowBlockedArtifactsDownload`
/// is read back as `xrayAllowBlocked`, `allowDownloadsXrayUnavailable` as
/// `xrayAllowWhenUnavailable`: the Xray Terraform provider v3.1.9's
/// `BasicSettingsResponseAPIModel`, "schemas for request and response are not identical").
async fn read_integration(State(s): State<Arc<Shared>>, _u: User) -> Json<Value> {
    let mut v = config_get(&s, "integration", default_integration());
    if let Value::Object(m) = &mut v {
        for (write, read) in [
            ("allowBlockedArtifactsDownload", "xrayAllowBlocked"),
            ("allowDownloadsXrayUnavailable", "xrayAllowWhenUnavailable"),
        ] {
            if let Some(x) = m.remove(write) {
                m.insert(read.to_owned(), x);
            }
        }
    }
    Json(v)
}

async fn write_integration(
    State(s): State<Arc<Shared>>,
    _u: User,
    body: axum::body::Bytes,
) -> Result<StatusCode, ApiError> {
    let mut body = json_of(&body)?;
    prune(&mut body, &BASIC_SETTINGS);
    let Value::Object(m) = body else {
        return Err(bad("The request body must be a JSON object"));
    };
    let mut merged = config_get(&s, "integration", default_integration());
    if let Value::Object(cur) = &mut merged {
        cur.extend(m);
    }
    config_put(&s, "integration", merged);
    Ok(StatusCode::OK)
}

async fn write_repo_config(
    State(s): State<Arc<Shared>>,
    _u: User,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let mut body = json_of(&body)?;
    prune(&mut body, &REPOSITORY_CONFIG);
    let repo = str_at(&body, "/repo_name").to_string();
    if s.artifactory.repository_view(&repo).is_none() {
        return Err(bad(format!("Repository '{repo}' does not exist")));
    }
    if body.get("repo_config").is_none() && body.get("repo_paths_config").is_none() {
        return Err(bad("Either repo_config or repo_paths_config is required"));
    }
    config_put(&s, &format!("repos_config/{repo}"), body);
    Ok(Json(
        json!({"info": "Repository configuration was updated successfully"}),
    ))
}

async fn read_repo_config(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path(repo): Path<String>,
) -> Result<Json<Value>, ApiError> {
    s.collections
        .get_raw(CONFIG.name, &format!("repos_config/{repo}"))
        .map(|mut v| {
            if let Value::Object(m) = &mut v {
                m.remove("key");
            }
            Json(v)
        })
        .ok_or_else(|| not_found(format!("Repository {repo} has no Xray configuration")))
}

/// The indexed and non-indexed members of each binary manager configuration.
fn bin_mgr_members(what: &str) -> Option<(&'static str, &'static str)> {
    Some(match what {
        "builds" => ("indexed_builds", "non_indexed_builds"),
        "repos" => ("indexed_repos", "non_indexed_repos"),
        "release_bundle_v2" => ("indexed_release_bundle_v2", "non_indexed_release_bundle_v2"),
        _ => return None,
    })
}

/// A binary manager's indexing configuration of `what`, globally or in a project (the
/// project's part of its indexing, apart from the global one).
async fn read_bin_mgr(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path((_id, what)): Path<(String, String)>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    let (indexed, non) = bin_mgr_members(&what).ok_or_else(|| not_found("Not found"))?;
    // Xray has the one binary manager, `default`, and answers it whatever ID the read
    // names: the Xray Terraform provider imports `xray_binary_manager_builds` and
    // `_release_bundle_v2` under the resource's name (`ImportStateId: resourceName`) and
    // verifies the imported `id` is "default" (`resource_xray_binary_manager_*_test.go`).
    let id = "default";
    let default = json!({"bin_mgr_id": id, indexed: [], non: []});
    let key = format!("binMgr/{id}/{what}");
    let store = Store::of(&s, CONFIG.name, "bin_mgr", &q)?;
    Ok(Json(match store.scope {
        None => config_get(&s, &key, default),
        Some(_) => store.get(&key).unwrap_or(default),
    }))
}

async fn write_bin_mgr(
    State(s): State<Arc<Shared>>,
    _u: User,
    Path((id, what)): Path<(String, String)>,
    Query(q): Query<ProjectQuery>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let (indexed, non) = bin_mgr_members(&what).ok_or_else(|| not_found("Not found"))?;
    if id != "default" {
        return Err(not_found(format!("Binary manager {id} does not exist")));
    }
    let store = Store::of(&s, CONFIG.name, "bin_mgr", &q)?;
    let body = json_of(&body)?;
    let mut list = body.get(indexed).cloned().unwrap_or(json!([]));
    if what == "repos" {
        prune(&mut list, &Shape::Items(&BIN_MGR_REPO));
        for r in list.as_array().into_iter().flatten() {
            let name = str_at(r, "/name");
            if s.artifactory.repository_view(name).is_none() {
                return Err(bad(format!("Repository '{name}' does not exist")));
            }
        }
    }
    let key = format!("binMgr/{id}/{what}");
    let config = json!({"bin_mgr_id": id, indexed: list, non: []});
    match store.scope {
        None => config_put(&s, &key, config),
        Some(_) => store.put(&key, config),
    }
    Ok(Json(
        json!({"info": "Indexing configuration was updated successfully"}),
    ))
}

// --- catalog labels (GraphQL) ---

/// The Catalog's limit of one operation (labels created or deleted, versions assigned,
/// assignments removed).
const CATALOG_MAX: usize = 500;

/// A GraphQL document's values as JSON, its variables substituted.
fn gql_value(v: &gql::Value<'_, String>, vars: &Value) -> Value {
    match v {
        gql::Value::Variable(n) => vars.get(n).cloned().unwrap_or(Value::Null),
        gql::Value::Int(i) => i.as_i64().map(Value::from).unwrap_or(Value::Null),
        gql::Value::Float(f) => json!(f),
        gql::Value::String(s) => json!(s),
        gql::Value::Boolean(b) => json!(b),
        gql::Value::Null => Value::Null,
        gql::Value::Enum(e) => json!(e),
        gql::Value::List(l) => Value::Array(l.iter().map(|v| gql_value(v, vars)).collect()),
        gql::Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), gql_value(v, vars)))
                .collect(),
        ),
    }
}

/// The fields of a selection set (fragments are not used by the Catalog's clients).
fn gql_fields<'a, 'd>(
    set: &'a gql::SelectionSet<'d, String>,
) -> impl Iterator<Item = &'a gql::Field<'d, String>> {
    set.items.iter().filter_map(|s| match s {
        gql::Selection::Field(f) => Some(f),
        _ => None,
    })
}

/// `value` reduced to what `set` selects (aliases honoured), as a GraphQL server answers.
fn gql_project<'d>(value: &Value, set: &gql::SelectionSet<'d, String>) -> Value {
    if set.items.is_empty() {
        return value.clone();
    }
    match value {
        Value::Array(a) => Value::Array(a.iter().map(|v| gql_project(v, set)).collect()),
        Value::Object(m) => Value::Object(
            gql_fields(set)
                .map(|f| {
                    let v = m.get(&f.name).cloned().unwrap_or(Value::Null);
                    (
                        f.alias.clone().unwrap_or_else(|| f.name.clone()),
                        gql_project(&v, &f.selection_set),
                    )
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The key of a package's (or a package version's) assignments.
fn assignment_key(pkg: &Value, version: Option<&str>) -> String {
    let (name, kind) = (str_at(pkg, "/name"), str_at(pkg, "/type"));
    match version {
        Some(v) => format!("version|{kind}|{name}|{v}"),
        None => format!("package|{kind}|{name}"),
    }
}

fn label_names_of(s: &Shared, key: &str) -> Vec<String> {
    s.collections
        .get_raw(CATALOG_ASSIGNMENTS.name, key)
        .and_then(|a| a.get("labels").cloned())
        .and_then(|l| serde_json::from_value(l).ok())
        .unwrap_or_default()
}

fn set_label_names(s: &Shared, key: &str, labels: Vec<String>) {
    if labels.is_empty() {
        s.collections.delete_raw(CATALOG_ASSIGNMENTS.name, key);
    } else {
        s.collections.put_raw(
            CATALOG_ASSIGNMENTS.name,
            key,
            json!({"key": key, "labels": labels}),
        );
    }
}

/// The labels connection of a package or version: the labels assigned, as nodes.
fn labels_connection(s: &Shared, key: &str) -> Value {
    let edges: Vec<Value> = label_names_of(s, key)
        .into_iter()
        .filter_map(|n| s.collections.get_raw(CATALOG_LABELS.name, &n))
        .map(|l| json!({"node": l}))
        .collect();
    json!({"edges": edges, "totalCount": edges.len()})
}

fn strings_of(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// Every named label exists (`Labels [..] were not found` otherwise).
fn labels_exist(s: &Shared, names: &[String]) -> Result<(), String> {
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| s.collections.get_raw(CATALOG_LABELS.name, n).is_none())
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("Labels [{}] were not found", missing.join(", ")))
    }
}

/// A new label's checks: name and description lengths, and that it is new.
fn check_new_label(s: &Shared, l: &Value) -> Result<(), String> {
    let name = str_at(l, "/name");
    if name.is_empty() {
        return Err("A label name cannot be empty".into());
    }
    if name.chars().count() > 15 {
        return Err("Label name is too long".into());
    }
    if str_at(l, "/description").chars().count() > 300 {
        return Err("Label description is too long".into());
    }
    if s.collections.get_raw(CATALOG_LABELS.name, name).is_some() {
        return Err(format!("Label {name} already exists"));
    }
    Ok(())
}

fn put_label(s: &Shared, l: &Value) -> Value {
    let label = json!({"name": str_at(l, "/name"), "description": str_at(l, "/description")});
    s.collections
        .put_raw(CATALOG_LABELS.name, str_at(l, "/name"), label.clone());
    label
}

/// Delete a label and every assignment of it.
fn delete_label(s: &Shared, name: &str) {
    s.collections.delete_raw(CATALOG_LABELS.name, name);
    for a in s
        .collections
        .list_raw(CATALOG_ASSIGNMENTS.name)
        .unwrap_or_default()
    {
        let key = str_at(&a, "/key").to_string();
        let labels: Vec<String> = strings_of(&a["labels"])
            .into_iter()
            .filter(|l| l != name)
            .collect();
        set_label_names(s, &key, labels);
    }
}

/// Assign one label to packages or versions (`keys`), each of which may carry one label.
fn assign(s: &Shared, keys: &[String], label: &str, what: &str) -> Result<(), String> {
    labels_exist(s, &[label.to_string()])?;
    if keys.iter().any(|k| !label_names_of(s, k).is_empty()) {
        return Err(format!(
            "A requested {what} already has a label assigned. More than one label per {what} is not supported yet"
        ));
    }
    for k in keys {
        set_label_names(s, k, vec![label.to_string()]);
    }
    Ok(())
}

/// Remove labels from packages or versions (labels not assigned are ignored).
fn unassign(s: &Shared, keys: &[String], labels: &[String]) -> Result<(), String> {
    if keys.len() * labels.len().max(1) > CATALOG_MAX {
        return Err(format!(
            "Removing more than {CATALOG_MAX} labels assignments in a single operation is not supported"
        ));
    }
    labels_exist(s, labels)?;
    for k in keys {
        let left: Vec<String> = label_names_of(s, k)
            .into_iter()
            .filter(|l| !labels.contains(l))
            .collect();
        set_label_names(s, k, left);
    }
    Ok(())
}

/// One field of `customCatalogLabel` (a query's or a mutation's).
fn catalog_label_field(
    s: &Shared,
    mutation: bool,
    field: &str,
    args: &Value,
) -> Result<Value, String> {
    let single_label = |a: &Value| -> Result<Vec<String>, String> {
        let names = strings_of(&a["labelNames"]);
        match names.len() {
            0 => Err("Labels must be specified for the assignment".into()),
            1 => Ok(names),
            _ => Err("Assigning more than 1 label is not supported".into()),
        }
    };
    match (mutation, field) {
        (false, "getLabel") => Ok(s
            .collections
            .get_raw(CATALOG_LABELS.name, str_at(args, "/name"))
            .unwrap_or(Value::Null)),
        (false, "searchLabels") => {
            let mut labels = s
                .collections
                .list_raw(CATALOG_LABELS.name)
                .unwrap_or_default();
            labels.sort_by(|a, b| str_at(a, "/name").cmp(str_at(b, "/name")));
            let edges: Vec<Value> = labels.into_iter().map(|l| json!({"node": l})).collect();
            Ok(json!({"edges": edges, "totalCount": edges.len()}))
        }
        (true, "createCustomCatalogLabel") => {
            check_new_label(s, &args["label"])?;
            Ok(put_label(s, &args["label"]))
        }
        (true, "createCustomCatalogLabels") => {
            let labels = args["labels"].as_array().cloned().unwrap_or_default();
            if labels.len() > CATALOG_MAX {
                return Err(format!(
                    "Creating more than {CATALOG_MAX} labels is not supported"
                ));
            }
            let mut names: Vec<&str> = labels.iter().map(|l| str_at(l, "/name")).collect();
            names.sort_unstable();
            let unique = names.windows(2).all(|w| w[0] != w[1]);
            for l in &labels {
                check_new_label(s, l).map_err(|e| {
                    if e.contains("already exists") {
                        "Some of the labels already exist".to_string()
                    } else {
                        e
                    }
                })?;
            }
            if !unique {
                return Err("Some of the labels already exist".into());
            }
            Ok(Value::Array(
                labels.iter().map(|l| put_label(s, l)).collect(),
            ))
        }
        (true, "updateCustomCatalogLabel") => {
            let l = &args["label"];
            let name = str_at(l, "/name");
            let Some(old) = s.collections.get_raw(CATALOG_LABELS.name, name) else {
                return Err(format!("Label {name} does not exist"));
            };
            let new_name = match str_at(l, "/updatedName") {
                "" => name,
                n => n,
            };
            let description = match l.get("updatedDescription").and_then(Value::as_str) {
                Some(d) => d.to_string(),
                None => str_at(&old, "/description").to_string(),
            };
            if new_name.chars().count() > 15 {
                return Err("Label name is too long".into());
            }
            if description.chars().count() > 300 {
                return Err("Label description is too long".into());
            }
            if new_name != name {
                if s.collections
                    .get_raw(CATALOG_LABELS.name, new_name)
                    .is_some()
                {
                    return Err(format!("Label {new_name} already exists"));
                }
                s.collections.delete_raw(CATALOG_LABELS.name, name);
            }
            Ok(put_label(
                s,
                &json!({"name": new_name, "description": description}),
            ))
        }
        (true, "deleteCustomCatalogLabel") => {
            let name = str_at(&args["label"], "/name").to_string();
            labels_exist(s, std::slice::from_ref(&name))?;
            delete_label(s, &name);
            Ok(json!(true))
        }
        (true, "deleteCustomCatalogLabels") => {
            let names: Vec<String> = args["labels"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| str_at(l, "/name").to_string())
                .collect();
            if names.len() > CATALOG_MAX {
                return Err(format!(
                    "Deleting more than {CATALOG_MAX} labels is not supported"
                ));
            }
            labels_exist(s, &names)?;
            for n in &names {
                delete_label(s, n);
            }
            Ok(json!(true))
        }
        (true, "assignCustomCatalogLabelsToPublicPackage") => {
            let a = &args["publicPackageLabels"];
            let label = single_label(a)?;
            let key = assignment_key(&a["publicPackage"], None);
            assign(s, &[key], &label[0], "package")?;
            Ok(json!(true))
        }
        (true, "removeCustomCatalogLabelsFromPublicPackage") => {
            let a = &args["publicPackageLabels"];
            let key = assignment_key(&a["publicPackage"], None);
            unassign(s, &[key], &strings_of(&a["labelNames"]))?;
            Ok(json!(true))
        }
        (true, "assignCustomCatalogLabelsToPublicPackageVersion") => {
            let a = &args["publicPackageVersionLabels"];
            let label = single_label(a)?;
            let v = &a["publicPackageVersion"];
            let key = assignment_key(&v["publicPackage"], Some(str_at(v, "/version")));
            assign(s, &[key], &label[0], "package version")?;
            Ok(json!(true))
        }
        (true, "removeCustomCatalogLabelsFromPublicPackageVersion") => {
            let a = &args["publicPackageVersionLabels"];
            let v = &a["publicPackageVersion"];
            let key = assignment_key(&v["publicPackage"], Some(str_at(v, "/version")));
            unassign(s, &[key], &strings_of(&a["labelNames"]))?;
            Ok(json!(true))
        }
        (true, "assignCustomCatalogLabelToPublicPackageVersions")
        | (true, "removeCustomCatalogLabelFromPublicPackageVersions") => {
            let a = &args["publicPackageVersionsLabel"];
            let keys: Vec<String> = a["publicPackageVersions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| assignment_key(&v["publicPackage"], Some(str_at(v, "/version"))))
                .collect();
            let label = str_at(a, "/labelName").to_string();
            if label.is_empty() {
                return Err("Labels must be specified for the assignment".into());
            }
            if field.starts_with("assign") {
                if keys.len() > CATALOG_MAX {
                    return Err(format!(
                        "Assigning a label to more than {CATALOG_MAX} package versions in a single operation is not supported"
                    ));
                }
                assign(s, &keys, &label, "package version")?;
            } else {
                unassign(s, &keys, &[label])?;
            }
            Ok(json!(true))
        }
        _ => Err(format!(
            "Cannot query field \"{field}\" on type \"{}\"",
            if mutation {
                "CustomCatalogLabelMutation"
            } else {
                "CustomCatalogLabelQuery"
            }
        )),
    }
}

/// `publicPackage.getPackage(name, type)` and `publicPackageVersion.getVersion(name, type,
/// version)`: a public package (or version) with the labels assigned to it.
fn public_package_field(s: &Shared, top: &str, field: &str, args: &Value) -> Result<Value, String> {
    match (top, field) {
        ("publicPackage", "getPackage") => {
            let pkg = json!({"name": str_at(args, "/name"), "type": str_at(args, "/type")});
            let mut answer = pkg.clone();
            answer["customCatalogLabelsConnection"] =
                labels_connection(s, &assignment_key(&pkg, None));
            Ok(answer)
        }
        ("publicPackageVersion", "getVersion") => {
            let pkg = json!({"name": str_at(args, "/name"), "type": str_at(args, "/type")});
            let version = str_at(args, "/version");
            Ok(json!({
                "version": version,
                "publicPackage": pkg,
                "customCatalogLabelsConnection": labels_connection(s, &assignment_key(&pkg, Some(version))),
            }))
        }
        _ => Err(format!("Cannot query field \"{field}\" on type \"{top}\"")),
    }
}

/// The Catalog's GraphQL endpoint: one operation per document (queries and mutations, with
/// literal arguments or variables); the answer selects what the document asks. A failed
/// operation answers 400 with `{errors: [{message}], data: null}` and the Catalog's text;
/// nothing of a refused mutation is applied. Besides the route, each mutation field is
/// counted as `MUTATION customCatalogLabel.<field>` (queries only by the route).
async fn graphql(
    State(s): State<Arc<Shared>>,
    _u: User,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let body = json_of(&body)?;
    let vars = body.get("variables").cloned().unwrap_or(json!({}));
    let failed = |msg: String| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"errors": [{"message": msg}], "data": Value::Null})),
        )
            .into_response()
    };
    let doc = match gql::parse_query::<String>(str_at(&body, "/query")) {
        Ok(d) => d,
        Err(e) => return Ok(failed(format!("Syntax Error: {e}"))),
    };
    let op = doc.definitions.iter().find_map(|d| match d {
        gql::Definition::Operation(op) => Some(op),
        gql::Definition::Fragment(_) => None,
    });
    let (mutation, set) = match op {
        Some(gql::OperationDefinition::SelectionSet(set)) => (false, set),
        Some(gql::OperationDefinition::Query(q)) => (false, &q.selection_set),
        Some(gql::OperationDefinition::Mutation(m)) => (true, &m.selection_set),
        _ => return Ok(failed("Unsupported operation".into())),
    };
    let mut data = Map::new();
    for top in gql_fields(set) {
        let mut inner = Map::new();
        for f in gql_fields(&top.selection_set) {
            let args = Value::Object(
                f.arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), gql_value(v, &vars)))
                    .collect(),
            );
            if mutation {
                // Each mutation is counted too, so that a test tells writes from reads.
                s.counts
                    .record("MUTATION", &format!("{}.{}", top.name, f.name));
            }
            let result = match top.name.as_str() {
                "customCatalogLabel" => catalog_label_field(&s, mutation, &f.name, &args),
                "publicPackage" | "publicPackageVersion" if !mutation => {
                    public_package_field(&s, &top.name, &f.name, &args)
                }
                other => Err(format!("Cannot query field \"{other}\"")),
            };
            match result {
                Ok(v) => {
                    inner.insert(
                        f.alias.clone().unwrap_or_else(|| f.name.clone()),
                        gql_project(&v, &f.selection_set),
                    );
                }
                Err(msg) => return Ok(failed(msg)),
            }
        }
        data.insert(
            top.alias.clone().unwrap_or_else(|| top.name.clone()),
            Value::Object(inner),
        );
    }
    Ok(Json(json!({"data": data})).into_response())
}
