//! The policy group: security, license and operational-risk policies (`/api/v2/policies`,
//! keyed by name, observed by one list call per poll), curation policies and custom
//! curation conditions (server-assigned IDs), ignore rules (server-assigned, immutable) and
//! custom issues (`/api/v1/events`, keyed by the issue ID).
//!
//! A policy's rules are compared as a set (Xray does not keep their order; each rule carries
//! its priority) and severities ignoring case (Xray answers `All Severities`), so a created
//! policy is up to date on the next observe (see `catalog/overrides.json`, section `xray`).
//!
//! Policies and ignore rules with a `projectKey` live in that project (`?projectKey=` on
//! every call, the lookup of a lost create included), apart from the global ones.

pub mod hooks;
#[rustfmt::skip]
pub mod tables;

use jfrog_client::{Idempotency, JfrogClient, Method, Service};
use provider_family::{Address, Call, FamilyHooks, Hooks, ListCall, ListShape, Page, Paths, Verb};
use serde_json::{Map, Value};

use crate::common;

/// The REST bindings, one per Kind.
pub mod rest {
    use super::*;

    const POLICIES: Paths = Paths {
        service: Service::Xray,
        create: Call::new(Verb::Post, "/api/v2/policies"),
        read: Call::new(Verb::Get, "/api/v2/policies/{key}"),
        update: Call::new(Verb::Put, "/api/v2/policies/{key}"),
        delete: Call::new(Verb::Delete, "/api/v2/policies/{key}"),
        list: Some(ListCall {
            service: Service::Xray,
            path: "/api/v2/policies",
            shape: ListShape::Array,
            key_member: "name",
        }),
        case_insensitive: false,
    };
    /// Security policies.
    pub static SECURITY_POLICY: Paths = POLICIES;
    /// License policies.
    pub static LICENSE_POLICY: Paths = POLICIES;
    /// Operational-risk policies.
    pub static OPERATIONAL_RISK_POLICY: Paths = POLICIES;
    /// Curation policies.
    pub static CURATION_POLICY: Paths = Paths {
        service: Service::Xray,
        create: Call::new(Verb::Post, "/api/v1/curation/policies"),
        read: Call::new(Verb::Get, "/api/v1/curation/policies/{key}"),
        update: Call::new(Verb::Put, "/api/v1/curation/policies/{key}"),
        delete: Call::new(Verb::Delete, "/api/v1/curation/policies/{key}"),
        list: Some(ListCall {
            service: Service::Xray,
            path: "/api/v1/curation/policies",
            shape: ListShape::Array,
            key_member: "id",
        }),
        case_insensitive: false,
    };
    /// Custom curation conditions.
    pub static CUSTOM_CURATION_CONDITION: Paths = Paths {
        service: Service::Xray,
        create: Call::new(Verb::Post, "/api/v1/curation/conditions"),
        read: Call::new(Verb::Get, "/api/v1/curation/conditions/{key}"),
        update: Call::new(Verb::Put, "/api/v1/curation/conditions/{key}"),
        delete: Call::new(Verb::Delete, "/api/v1/curation/conditions/{key}"),
        list: Some(ListCall {
            service: Service::Xray,
            path: "/api/v1/curation/conditions",
            shape: ListShape::Array,
            key_member: "id",
        }),
        case_insensitive: false,
    };
    /// Ignore rules: no update API (every field is immutable). The list answer is paged
    /// (`{data, total_count}`): it is asked for in one large page and used only when that
    /// page holds every rule (else each MR is read by ID). In a project, each build filter
    /// names the project (see [`ignore_rule_in_project`]).
    pub static IGNORE_RULE: common::ProjectScoped = common::ProjectScoped {
        in_project: ignore_rule_in_project,
        paths: Paths {
            service: Service::Xray,
            create: Call::new(Verb::Post, "/api/v1/ignore_rules"),
            read: Call::new(Verb::Get, "/api/v1/ignore_rules/{key}"),
            update: Call::new(Verb::Put, "/api/v1/ignore_rules/{key}"),
            delete: Call::new(Verb::Delete, "/api/v1/ignore_rules/{key}"),
            list: Some(ListCall {
                service: Service::Xray,
                path: "/api/v1/ignore_rules",
                shape: ListShape::Paged(&IGNORE_RULES_PAGE),
                key_member: "id",
            }),
            case_insensitive: false,
        },
    };

    /// One page of ignore rules, as large as the list is read.
    static IGNORE_RULES_PAGE: Page = Page {
        query: &[("page_num", "1"), ("num_of_rows", "10000")],
        member: "data",
        total: "total_count",
        post: None,
    };
    /// Custom issues (Xray events): read through v2, written through v1; no list.
    pub static CUSTOM_ISSUE: Paths = Paths {
        service: Service::Xray,
        create: Call::new(Verb::Post, "/api/v1/events"),
        read: Call::new(Verb::Get, "/api/v2/events/{key}"),
        update: Call::new(Verb::Put, "/api/v1/events/{key}"),
        delete: Call::new(Verb::Delete, "/api/v1/events/{key}"),
        list: None,
        case_insensitive: false,
    };
}

/// An ignore rule made in a project names the project in each of its build filters
/// (`ignore_filters.builds[].project`), as upstream sends it.
fn ignore_rule_in_project(project: &str, body: &mut Map<String, Value>) {
    if let Some(Value::Array(builds)) = body
        .get_mut("ignore_filters")
        .and_then(|f| f.get_mut("builds"))
    {
        for b in builds.iter_mut().filter_map(Value::as_object_mut) {
            b.insert("project".into(), Value::String(project.to_string()));
        }
    }
}

/// The policy group's hooks: those of every Kind without its own ([`hooks`]).
pub static HOOKS: PolicyHooks = PolicyHooks;

/// The policy group's behaviour shared by every Kind: none beyond the generic adapter
/// (the policies' types and the server-assigned Kinds' IDs are the Kinds' own, [`hooks`]).
#[derive(Debug, Clone, Copy)]
pub struct PolicyHooks;

impl FamilyHooks for PolicyHooks {}

impl Hooks for PolicyHooks {}

/// Whether a listed object is the one a create body describes.
type SameObject = fn(&Value, &Map<String, Value>) -> bool;

/// The server-assigned object in the list at `path` that `same` says `body` describes.
async fn find_created(
    client: &JfrogClient,
    address: &Address,
    path: &'static str,
    same: SameObject,
    body: &Map<String, Value>,
) -> Result<Option<String>, jfrog_client::Error> {
    // The create's scope: a project's objects are listed with its query only.
    let body = &rest::IGNORE_RULE.body(address, body);
    let answer = address
        .query()
        .iter()
        .fold(
            client.request(Service::Xray, Method::GET, path, Idempotency::Idempotent),
            |r, (n, v)| r.query(n, v),
        )
        .send_value()
        .await?;
    // Ignore rules are listed as `{data, total_count}`, curation objects as an array.
    let items = answer
        .get("data")
        .unwrap_or(&answer)
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(items
        .iter()
        .find(|o| same(o, body))
        .and_then(|o| common::answer_id(o, "id")))
}

common::group_fns!();

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_policy_type_matches_its_kind() {
        let security = tables::KINDS[0].bound().expect("composes");
        assert_eq!(security.decl.kind, "SecurityPolicy");
        assert!(
            security
                .hooks
                .check_params(&security, &json!({"type": "security"}))
                .is_ok()
        );
        let err = security
            .hooks
            .check_params(&security, &json!({"type": "license"}))
            .unwrap_err();
        assert!(
            err.contains("type \"license\"") && err.contains("\"security\""),
            "{err}"
        );
        // A policy may live in a project (sent as `?projectKey=`).
        assert!(
            security
                .hooks
                .check_params(
                    &security,
                    &json!({"type": "security", "projectKey": "team"}),
                )
                .is_ok()
        );
    }

    #[test]
    fn a_project_ignore_rule_names_the_project_in_its_build_filters() {
        let body: Map<String, Value> = serde_json::from_value(json!({
            "notes": "n",
            "ignore_filters": {"builds": [{"name": "b", "version": "1"}], "cves": ["any"]},
        }))
        .expect("object");
        let scoped =
            rest::IGNORE_RULE.body(&Address::unknown().with_query("projectKey", "team"), &body);
        assert_eq!(
            scoped["ignore_filters"]["builds"],
            json!([{"name": "b", "version": "1", "project": "team"}])
        );
        assert_eq!(scoped["ignore_filters"]["cves"], json!(["any"]));
        assert_eq!(rest::IGNORE_RULE.body(&Address::unknown(), &body), body);
        assert_eq!(rest::IGNORE_RULE.body(&Address::new("12"), &body), body);
    }

    #[test]
    fn a_listed_policy_is_of_the_kind_its_type_names() {
        let kind = |k: &str| provider_family_suite::bound(tables::KINDS, k);
        let license = json!({"name": "p", "type": "license"});
        assert!(
            kind("LicensePolicy")
                .hooks
                .lists_as(&kind("LicensePolicy"), &license)
        );
        assert!(
            !kind("SecurityPolicy")
                .hooks
                .lists_as(&kind("SecurityPolicy"), &license)
        );
        assert!(
            !kind("OperationalRiskPolicy")
                .hooks
                .lists_as(&kind("OperationalRiskPolicy"), &license)
        );
        assert!(kind("OperationalRiskPolicy").hooks.lists_as(
            &kind("OperationalRiskPolicy"),
            &json!({"type": "operational_risk"})
        ));
    }

    #[test]
    fn created_ids() {
        let kind = |k: &str| provider_family_suite::bound(tables::KINDS, k);
        assert_eq!(
            kind("IgnoreRule")
                .hooks
                .created_id(
                    &kind("IgnoreRule"),
                    &json!({"info": "Successfully added Ignore rule with id: 1a2b"})
                )
                .as_deref(),
            Some("1a2b")
        );
        assert_eq!(
            kind("CurationPolicy")
                .hooks
                .created_id(&kind("CurationPolicy"), &json!({"id": 7}))
                .as_deref(),
            Some("7")
        );
    }
}
