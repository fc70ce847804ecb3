//! Xray and Catalog answers that JFrog's Xray Terraform provider (jfrog/terraform-provider-xray
//! v3.1.x) and its acceptance tests rely on; each test names the source that shows the
//! behaviour.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The Catalog health check the provider makes before its first curation or catalog call:
/// `CheckCatalogHealth` in jfrog/terraform-provider-shared `util/util.go` (`GET
/// /catalog/api/v1/system/app_health`, decoded as `CatalogHealthResponse`; healthy when
/// `code` is "OK", `entitlements.entitled_for_catalog`, not `entitlements.token_expired`,
/// `db_connection_working` and `central.central_connection_working`).
#[tokio::test]
async fn catalog_app_health_answers_healthy() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api.get("/catalog/api/v1/system/app_health").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let h = r.json();
    assert_eq!(h["code"], "OK", "{h}");
    assert_eq!(h["entitlements"]["entitled_for_catalog"], true, "{h}");
    assert_eq!(h["entitlements"]["token_expired"], false, "{h}");
    assert_eq!(h["db_connection_working"], true, "{h}");
    assert_eq!(h["central"]["central_connection_working"], true, "{h}");
    // Like every Catalog call, it needs credentials.
    let anonymous = Api::with_token(&sim, None);
    let r = anonymous.get("/catalog/api/v1/system/app_health").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
}

fn policy(ty: &str, criteria: Value, actions: Value) -> Value {
    json!({
        "name": "bad-policy",
        "type": ty,
        "description": "d",
        "rules": [{"name": "r", "priority": 1, "criteria": criteria, "actions": actions}]
    })
}

/// Xray refuses contradictory policies with 400 "Found Invalid Policy" in its error body
/// `{"error": ...}`: the Xray Terraform provider's `TestAccLicensePolicy_badLicenseCriteria`
/// and `TestAccSecurityPolicy_badTypeInSecurityPolicy` (a license policy with a
/// `cvss_range` criterion), `TestAccLicensePolicy_badGracePeriod` and
/// `TestAccSecurityPolicy_badGracePeriod` (`build_failure_grace_period_in_days` 5 with
/// `fail_build` false), `TestAccSecurityPolicy_blockMismatchCVSS` (`block_download`
/// `unscanned` true, `active` false); nothing is stored.
#[tokio::test]
async fn contradictory_policies_are_refused_as_invalid() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let block = json!({"block_download": {"unscanned": true, "active": true}});
    let cases = [
        (
            "license with cvss_range",
            policy(
                "license",
                json!({"cvss_range": {"from": 1, "to": 5}}),
                block.clone(),
            ),
        ),
        (
            "security grace period without fail_build",
            policy(
                "security",
                json!({"cvss_range": {"from": 1, "to": 5}}),
                json!({"fail_build": false, "build_failure_grace_period_in_days": 5}),
            ),
        ),
        (
            "license grace period without fail_build",
            policy(
                "license",
                json!({"allow_unknown": true, "banned_licenses": ["MIT"]}),
                json!({"fail_build": false, "build_failure_grace_period_in_days": 5}),
            ),
        ),
        (
            "unscanned without active",
            policy(
                "security",
                json!({"cvss_range": {"from": 1, "to": 5}}),
                json!({"block_download": {"unscanned": true, "active": false}}),
            ),
        ),
    ];
    for (what, body) in cases {
        let r = api.post("/xray/api/v2/policies", body).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{what}: {}", r.text);
        let e = r.json();
        assert!(
            e["error"]
                .as_str()
                .is_some_and(|m| m.starts_with("Found Invalid Policy")),
            "{what}: {e}"
        );
        let r = api.get("/xray/api/v2/policies/bad-policy").await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{what}: {}", r.text);
    }
    // The consistent forms are taken: fail_build with its grace period, unscanned with active.
    let ok = policy(
        "security",
        json!({"cvss_range": {"from": 1, "to": 5}}),
        json!({"fail_build": true, "build_failure_grace_period_in_days": 5,
               "block_download": {"unscanned": true, "active": true}}),
    );
    let r = api.post("/xray/api/v2/policies", ok).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// A watch of a project may assign a global policy: the Xray Terraform provider's
/// `TestAccWatch_allReposWithProjectKey` creates `xray_security_policy` without
/// `project_key` and assigns it to an `xray_watch` with `project_key`. A policy that exists
/// nowhere is still refused.
#[tokio::test]
async fn a_project_watch_assigns_a_global_policy() {
    let sim = start().await;
    let api = Api::admin(&sim);
    sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    let global = json!({"name": "global-p", "type": "security", "rules": [{"name": "r",
        "priority": 1, "criteria": {"min_severity": "High"}, "actions": {}}]});
    let r = api.post("/xray/api/v2/policies", global).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let watch = |policy: &str| {
        json!({
            "general_data": {"name": "w", "description": "", "active": true},
            "project_resources": {"resources": [{"type": "all-repos", "filters": []}]},
            "assigned_policies": [{"name": policy, "type": "security"}]
        })
    };
    let r = api
        .post("/xray/api/v2/watches?projectKey=team", watch("nowhere"))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(r.text.contains("does not exist"), "{}", r.text);
    let r = api
        .post("/xray/api/v2/watches?projectKey=team", watch("global-p"))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let w = api
        .get("/xray/api/v2/watches/w?projectKey=team")
        .await
        .json();
    assert_eq!(w["assigned_policies"][0]["name"], "global-p", "{w}");
}

/// The SBOM and catalog queues take 0 workers: the Xray Terraform provider's
/// `TestAccWorkersCount_full` sets `sbom`, `user_catalog`, `sbom_impact_analysis` and
/// `migration_sbom` to 0 new and 0 existing and checks them so after the read. Other
/// queues keep at least one new-content worker.
#[tokio::test]
async fn sbom_and_catalog_workers_may_be_zero() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let zero = json!({"new_content": 0, "existing_content": 0});
    let body = json!({"sbom": zero, "usercatalog": zero, "sbomimpactanalysis": zero,
        "migrationsbom": zero, "index": {"new_content": 8, "existing_content": 4}});
    let r = api
        .put("/xray/api/v1/configuration/workersCount", body)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let w = api
        .get("/xray/api/v1/configuration/workersCount")
        .await
        .json();
    for k in ["sbom", "usercatalog", "sbomimpactanalysis", "migrationsbom"] {
        assert_eq!(w[k], zero, "{k}: {w}");
    }
    assert_eq!(w["index"]["new_content"], 8, "{w}");
    let r = api
        .put(
            "/xray/api/v1/configuration/workersCount",
            json!({"index": {"new_content": 0, "existing_content": 4}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// Xray has the one binary manager `default` and answers it whatever ID a read names: the
/// Xray Terraform provider's binary manager builds and release bundles v2 tests import the
/// resource under its Terraform name (`ImportStateId: resourceName`) and verify the
/// imported `id` is "default" (`resource_xray_binary_manager_builds_test.go`,
/// `resource_xray_binary_manager_release_bundle_v2_test.go`).
#[tokio::test]
async fn a_binary_manager_read_by_another_id_answers_the_default() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .put(
            "/xray/api/v1/binMgr/default/builds",
            json!({"indexed_builds": ["b1"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for what in ["builds", "release_bundle_v2"] {
        let r = api
            .get(&format!("/xray/api/v1/binMgr/binary-manager-123/{what}"))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{what}: {}", r.text);
        assert_eq!(r.json()["bin_mgr_id"], "default", "{what}: {}", r.text);
    }
    let b = api
        .get("/xray/api/v1/binMgr/binary-manager-123/builds")
        .await
        .json();
    assert_eq!(b["indexed_builds"], json!(["b1"]), "{b}");
}

/// Reports and the DB sync setting keep no member their API models lack: the Xray
/// Terraform provider v3.1.9's `ReportAPIModel` (`reports.go`; a report's read is its job,
/// never its request) and the DB sync member of `resource_xray_settings.go`
/// (`db_sync_updates_time` only).
#[tokio::test]
async fn reports_and_db_sync_drop_unknown_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/xray/api/v1/reports/vulnerabilities",
            json!({"name": "rep", "colour": "blue",
                   "resources": {"repositories": [{"name": "x"}]}, "filters": {"x": 1}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let created = r.json();
    assert!(created.get("colour").is_none(), "{created}");
    let id = created["report_id"].to_string();
    let rep = api.get(&format!("/xray/api/v1/reports/{id}")).await.json();
    for k in ["colour", "filters", "resources"] {
        assert!(rep.get(k).is_none(), "{k}: {rep}");
    }
    let r = api
        .put(
            "/xray/api/v1/configuration/dbsync/time",
            json!({"db_sync_updates_time": "18:45", "colour": "blue"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let d = api
        .get("/xray/api/v1/configuration/dbsync/time")
        .await
        .json();
    assert_eq!(d, json!({"db_sync_updates_time": "18:45"}));
}

/// The reported Xray version serves custom curation conditions: JFrog's Xray Terraform
/// provider refuses `xray_custom_curation_condition` at plan time below 3.116.0
/// (`resource_xray_custom_curation_condition.go`, "Incompatible Xray version"), and the
/// simulator serves them (`/xray/api/v1/curation/conditions`).
#[tokio::test]
async fn the_xray_version_serves_custom_curation_conditions() {
    let sim = start().await;
    let v = Api::admin(&sim)
        .get("/xray/api/v1/system/version")
        .await
        .json();
    let version = v["xray_version"].as_str().unwrap_or_default().to_owned();
    let parts: Vec<u64> = version.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    assert!(
        parts.len() == 3 && (parts[0], parts[1]) >= (3, 116),
        "{version}"
    );
}

/// A custom curation condition's server-assigned `id` is a string, in the create's answer, the
/// read and the list: JFrog's REST docs ("Create Custom Curation Condition": response `id`,
/// string) and the Xray Terraform provider's `CustomCurationConditionAPIModel.ID string`
/// (`resource_xray_custom_curation_condition.go`), which cannot decode a number; the
/// `TestAccCustomCurationCondition_*` tests read it back by that id.
#[tokio::test]
async fn a_custom_curation_condition_id_is_a_string() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let body = |name: &str| {
        json!({"name": name, "condition_template_id": "OpenSSF",
               "param_values": [{"param_id": "list_of_scorecard_checks", "value": {"maintained": 0}}]})
    };
    let mut ids = Vec::new();
    for name in ["cond-a", "cond-b"] {
        let r = api
            .post("/xray/api/v1/curation/conditions", body(name))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let created = r.json();
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        assert!(!id.is_empty(), "the id is not a string: {created}");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
    let r = api
        .get(&format!("/xray/api/v1/curation/conditions/{}", ids[1]))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["id"], json!(ids[1]));
    assert_eq!(r.json()["name"], "cond-b");
    let list = api.get("/xray/api/v1/curation/conditions").await.json();
    let listed: Vec<&Value> = list
        .as_array()
        .map(|a| a.iter().map(|c| &c["id"]).collect())
        .unwrap_or_default();
    assert_eq!(listed, vec![&json!(ids[0]), &json!(ids[1])], "{list}");
    let r = api
        .put(
            &format!("/xray/api/v1/curation/conditions/{}", ids[0]),
            body("cond-a2"),
        )
        .await;
    // The replace answers the condition, its id included (`Update` reads it with
    // `SetResult`; `TestAccCustomCurationCondition_CVEName_Update`).
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["id"], json!(ids[0]), "{}", r.text);
    assert_eq!(r.json()["name"], "cond-a2", "{}", r.text);
    let r = api
        .get(&format!("/xray/api/v1/curation/conditions/{}", ids[0]))
        .await;
    assert_eq!(r.json()["id"], json!(ids[0]), "{}", r.text);
    assert_eq!(r.json()["name"], "cond-a2", "{}", r.text);
}
