//! Project-scoped Xray policies (`?projectKey=`): apart from the global ones and from other
//! projects', absent from the global list; the project must exist.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn policy(description: &str) -> Value {
    json!({
        "name": "p",
        "type": "security",
        "description": description,
        "rules": [{"name": "r", "priority": 1, "criteria": {"min_severity": "High"}, "actions": {}}]
    })
}

#[tokio::test]
async fn project_policies_live_apart_from_the_global_ones() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let base = "/xray/api/v2/policies";
    // The project must exist.
    let r = api
        .post(&format!("{base}?projectKey=team"), policy("team"))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("team"), "{}", r.text);
    sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    for (path, what) in [
        (base.to_string(), "global"),
        (format!("{base}?projectKey=team"), "team"),
    ] {
        let r = api.post(&path, policy(what)).await;
        assert_eq!(r.status, StatusCode::CREATED, "{what}: {}", r.text);
    }
    // The same name again in the project: a conflict, not a second object.
    let r = api
        .post(&format!("{base}?projectKey=team"), policy("again"))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let global = api.get(base).await.json();
    assert_eq!(global.as_array().map(Vec::len), Some(1), "{global}");
    assert_eq!(global[0]["description"], "global");
    let team = api.get(&format!("{base}?projectKey=team")).await.json();
    assert_eq!(team.as_array().map(Vec::len), Some(1), "{team}");
    assert_eq!(team[0]["description"], "team");
    assert_eq!(
        api.get(&format!("{base}/p?projectKey=team")).await.json()["description"],
        "team"
    );

    // Deleting the project's policy leaves the global one.
    let r = api.delete(&format!("{base}/p?projectKey=team")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api.get(&format!("{base}/p?projectKey=team")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert_eq!(
        api.get(&format!("{base}/p")).await.json()["description"],
        "global"
    );
}

/// Ignore rules, reports and indexing configuration of project `team` (`?projectKey=team`)
/// live apart from the global ones: not found globally nor in another project, absent from
/// the global list, deleted in their scope only.
#[tokio::test]
async fn project_ignore_rules_reports_and_indexing_live_apart() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let rule = json!({"notes": "n", "ignore_filters": {"cves": ["any"]}});
    // The project must exist.
    let r = api
        .post("/xray/api/v1/ignore_rules?projectKey=team", rule.clone())
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("team"), "{}", r.text);
    for p in ["team", "other"] {
        sim.put_object(
            "access_projects",
            p,
            json!({"project_key": p, "display_name": p}),
        );
    }

    // Ignore rules.
    let global = api.post("/xray/api/v1/ignore_rules", rule.clone()).await;
    assert_eq!(global.status, StatusCode::CREATED, "{}", global.text);
    let team = api
        .post("/xray/api/v1/ignore_rules?projectKey=team", rule.clone())
        .await;
    assert_eq!(team.status, StatusCode::CREATED, "{}", team.text);
    let id = |r: &crate::common::Resp| {
        r.json()["info"]
            .as_str()
            .and_then(|i| i.rsplit(' ').next())
            .expect("id")
            .to_string()
    };
    let (gid, tid) = (id(&global), id(&team));
    assert_ne!(gid, tid);
    let list = api.get("/xray/api/v1/ignore_rules").await.json();
    assert_eq!(list["total_count"], 1, "{list}");
    assert_eq!(list["data"][0]["id"], gid.as_str());
    let list = api
        .get("/xray/api/v1/ignore_rules?projectKey=team")
        .await
        .json();
    assert_eq!(list["total_count"], 1, "{list}");
    assert_eq!(list["data"][0]["id"], tid.as_str());
    for (path, status) in [
        (
            format!("/xray/api/v1/ignore_rules/{tid}?projectKey=team"),
            StatusCode::OK,
        ),
        (
            format!("/xray/api/v1/ignore_rules/{tid}"),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("/xray/api/v1/ignore_rules/{tid}?projectKey=other"),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("/xray/api/v1/ignore_rules/{gid}?projectKey=team"),
            StatusCode::NOT_FOUND,
        ),
    ] {
        assert_eq!(api.get(&path).await.status, status, "{path}");
    }
    let r = api
        .delete(&format!("/xray/api/v1/ignore_rules/{tid}?projectKey=team"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api.get(&format!("/xray/api/v1/ignore_rules/{gid}")).await;
    assert_eq!(r.status, StatusCode::OK, "the global rule stays");

    // Reports.
    let report = json!({"name": "r", "resources": {"repositories": [{"name": "libs"}]}});
    let g = api
        .post("/xray/api/v1/reports/vulnerabilities", report.clone())
        .await
        .json()["report_id"]
        .clone();
    let t = api
        .post(
            "/xray/api/v1/reports/vulnerabilities?projectKey=team",
            report.clone(),
        )
        .await
        .json()["report_id"]
        .clone();
    assert_ne!(g, t);
    let listed = |body: Value| {
        body["reports"]
            .as_array()
            .map(|a| a.iter().map(|r| r["id"].clone()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let filter = json!({"filters": {"name": "r"}});
    assert_eq!(
        listed(
            api.post(
                "/xray/api/v1/reports?page_num=1&num_of_rows=10",
                filter.clone()
            )
            .await
            .json()
        ),
        vec![g.clone()]
    );
    assert_eq!(
        listed(
            api.post(
                "/xray/api/v1/reports?projectKey=team&page_num=1&num_of_rows=10",
                filter.clone()
            )
            .await
            .json()
        ),
        vec![t.clone()]
    );
    let r = api.get(&format!("/xray/api/v1/reports/{t}")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = api
        .get(&format!("/xray/api/v1/reports/{t}?projectKey=team"))
        .await;
    // Listed once: its generation went on from pending.
    assert_eq!(r.json()["status"], "running", "{}", r.text);
    let r = api
        .delete(&format!("/xray/api/v1/reports/{t}?projectKey=team"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api.get(&format!("/xray/api/v1/reports/{g}")).await;
    assert_eq!(r.status, StatusCode::OK, "the global report stays");

    // The binary manager's indexed builds.
    let r = api
        .put(
            "/xray/api/v1/binMgr/default/builds?projectKey=team",
            json!({"bin_mgr_id": "default", "indexed_builds": ["team-app"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.get("/xray/api/v1/binMgr/default/builds?projectKey=team")
            .await
            .json()["indexed_builds"],
        json!(["team-app"])
    );
    assert_eq!(
        api.get("/xray/api/v1/binMgr/default/builds").await.json()["indexed_builds"],
        json!([])
    );
}

/// A project watch's build resources name the project's build-info repository.
#[tokio::test]
async fn a_project_watch_of_a_build_names_its_build_info_repository() {
    let sim = start().await;
    let api = Api::admin(&sim);
    sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    let watch = |build_repo: Option<&str>| {
        let mut r = json!({"type": "build", "name": "app", "bin_mgr_id": "default"});
        if let Some(b) = build_repo {
            r["build_repo"] = json!(b);
        }
        json!({"general_data": {"name": "w", "active": true}, "project_resources": {"resources": [r]}})
    };
    let r = api
        .post("/xray/api/v2/watches?projectKey=team", watch(None))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(r.text.contains("team-build-info"), "{}", r.text);
    let r = api
        .post(
            "/xray/api/v2/watches?projectKey=team",
            watch(Some("team-build-info")),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // Outside a project no build_repo is needed.
    let r = api.post("/xray/api/v2/watches", watch(None)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// The ignore rules' list is paged: `total_count` counts every rule, `data` holds the page.
#[tokio::test]
async fn ignore_rules_are_listed_in_pages() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for n in 0..3 {
        let r = api
            .post(
                "/xray/api/v1/ignore_rules",
                json!({"notes": format!("rule {n}"), "ignore_filters": {"cves": ["any"]}}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let page = |q: &'static str| {
        let api = &api;
        async move {
            api.get(&format!("/xray/api/v1/ignore_rules{q}"))
                .await
                .json()
        }
    };
    let all = page("").await;
    assert_eq!(
        (
            all["total_count"].clone(),
            all["data"].as_array().map(Vec::len)
        ),
        (json!(3), Some(3))
    );
    let first = page("?page_num=1&num_of_rows=2").await;
    assert_eq!(
        (
            first["total_count"].clone(),
            first["data"].as_array().map(Vec::len)
        ),
        (json!(3), Some(2))
    );
    let second = page("?page_num=2&num_of_rows=2").await;
    assert_eq!(second["data"].as_array().map(Vec::len), Some(1));
    assert_ne!(first["data"][0]["id"], second["data"][0]["id"]);
    let r = api.get("/xray/api/v1/ignore_rules?num_of_rows=0").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// The reports list (`POST /api/v1/reports`, a request that only reads): its paging is
/// mandatory, a page holds `num_of_rows` reports in name order and `total_reports` counts
/// every matching one; the entries carry what a read by ID answers, and listing a report
/// advances its generation as reading it does.
#[tokio::test]
async fn the_reports_list_is_paged_in_xrays_shape() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let mut ids = Vec::new();
    for (name, kind) in [
        ("c", "licenses"),
        ("a", "vulnerabilities"),
        ("b", "violations"),
    ] {
        let r = api
            .post(
                &format!("/xray/api/v1/reports/{kind}"),
                json!({"name": name, "resources": {"repositories": [{"name": "libs"}]}}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        ids.push(r.json()["report_id"].clone());
    }
    let all = json!({"filters": {}});
    let r = api.post("/xray/api/v1/reports", all.clone()).await;
    assert_eq!(
        r.status,
        StatusCode::BAD_REQUEST,
        "paging is mandatory: {}",
        r.text
    );

    let list = |page: usize, rows: usize, order: &'static str| {
        let api = &api;
        let all = all.clone();
        async move {
            api.post(
                &format!(
                    "/xray/api/v1/reports?direction={order}&page_num={page}&num_of_rows={rows}&order_by=name"
                ),
                all,
            )
            .await
            .json()
        }
    };
    let names = |answer: &Value| {
        answer["reports"]
            .as_array()
            .map(|a| a.iter().map(|r| r["name"].clone()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let first = list(1, 2, "asc").await;
    assert_eq!(first["total_reports"], 3, "{first}");
    assert_eq!(names(&first), vec![json!("a"), json!("b")], "{first}");
    let second = list(2, 2, "asc").await;
    assert_eq!(second["total_reports"], 3, "{second}");
    assert_eq!(names(&second), vec![json!("c")], "{second}");
    let desc = list(1, 10, "desc").await;
    assert_eq!(names(&desc), vec![json!("c"), json!("b"), json!("a")]);

    // An entry carries what the read by ID answers; "a" and "c" were listed twice each
    // (pending, running, completed).
    let one = &desc["reports"][2];
    assert_eq!(one["id"], ids[1]);
    assert_eq!(one["report_type"], "vulnerabilities");
    let read = api
        .get(&format!("/xray/api/v1/reports/{}", ids[1]))
        .await
        .json();
    assert_eq!(read["status"], "completed", "{read}");
    for member in [
        "id",
        "name",
        "report_type",
        "status",
        "progress",
        "total_artifacts",
        "num_of_processed_artifacts",
        "author",
    ] {
        assert!(one.get(member).is_some(), "{member} listed: {one}");
        assert!(read.get(member).is_some(), "{member} read: {read}");
    }
    let c = api
        .get(&format!("/xray/api/v1/reports/{}", ids[0]))
        .await
        .json();
    assert_eq!(c["status"], "completed", "pending, listed twice: {c}");

    // Filters: a name substring, a type.
    let by_type = api
        .post(
            "/xray/api/v1/reports?page_num=1&num_of_rows=10",
            json!({"filters": {"report_type": ["licenses"]}}),
        )
        .await
        .json();
    assert_eq!(names(&by_type), vec![json!("c")], "{by_type}");
    assert_eq!(by_type["total_reports"], 1);
}
