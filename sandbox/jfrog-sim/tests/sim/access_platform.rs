//! The Access project and platform services: JFrog's rules for projects, their environments,
//! roles and members, and for groups and their members, lifecycle stages and lifecycles.

use crate::common::{Api, start};
use reqwest::{Method, StatusCode};
use serde_json::json;

const PROJECTS: &str = "/access/api/v1/projects";

async fn project(api: &Api, key: &str) {
    let r = api
        .post(
            PROJECTS,
            json!({"project_key": key, "display_name": key, "admin_privileges": {"manage_members": true}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[tokio::test]
async fn projects_environments_roles_and_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            PROJECTS,
            json!({"project_key": "Bad_Key", "display_name": "x", "admin_privileges": {}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    project(&api, "team").await;
    let r = api
        .post(
            PROJECTS,
            json!({"project_key": "team", "display_name": "again", "admin_privileges": {}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);

    // Environments carry the project prefix.
    let envs = format!("{PROJECTS}/team/environments");
    let r = api.post(&envs, json!({"name": "qa"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = api.post(&envs, json!({"name": "team-qa"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(api.get(&envs).await.json(), json!([{"name": "team-qa"}]));

    // Members need an existing role and an existing project.
    let r = api
        .put(
            &format!("{PROJECTS}/team/users/alice"),
            json!({"name": "alice", "roles": ["reader"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = api
        .post(
            &format!("{PROJECTS}/team/roles"),
            json!({"name": "reader", "type": "CUSTOM", "environments": ["DEV"], "actions": ["READ_REPOSITORY"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // A member must be a user or group of the platform.
    let r = api
        .put(
            &format!("{PROJECTS}/team/users/alice"),
            json!({"name": "alice", "roles": ["reader"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("User 'alice' does not exist"), "{}", r.text);
    let r = api
        .put(
            &format!("{PROJECTS}/team/groups/devs"),
            json!({"name": "devs", "roles": ["reader"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("Group 'devs' does not exist"), "{}", r.text);
    assert!(sim.put_object("users", "alice", json!({"email": "alice@example.com"})));
    assert!(sim.put_object("access_groups", "devs", json!({"description": ""})));
    let r = api
        .put(
            &format!("{PROJECTS}/team/users/alice"),
            json!({"name": "alice", "roles": ["reader"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .put(
            &format!("{PROJECTS}/team/groups/devs"),
            json!({"name": "devs", "roles": ["reader"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .put(
            &format!("{PROJECTS}/nope/users/alice"),
            json!({"name": "alice", "roles": ["Viewer"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(
        api.get(&format!("{PROJECTS}/team/users")).await.json(),
        json!({"members": [{"name": "alice", "roles": ["reader"]}]})
    );

    // A project with a repository cannot be deleted; without, its content goes with it.
    api.create(
        "libs",
        json!({"key": "libs", "rclass": "local", "packageType": "generic"}),
    )
    .await;
    let attach = format!("{PROJECTS}/_/attach/repositories/libs/team");
    assert_eq!(
        api.put(&attach, json!({})).await.status,
        StatusCode::NO_CONTENT
    );
    let r = api.delete(&format!("{PROJECTS}/team")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text.contains("can't be removed"), "{}", r.text);
    let r = api
        .delete(&format!("{PROJECTS}/_/attach/repositories/libs"))
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        api.delete(&format!("{PROJECTS}/team")).await.status,
        StatusCode::NO_CONTENT
    );
    for coll in [
        "access_project_environments",
        "access_project_roles",
        "access_project_users",
    ] {
        assert_eq!(sim.object_count(coll), 0, "{coll}");
    }
    assert!(sim.repository("libs").is_some(), "the repository stays");
}

#[tokio::test]
async fn groups_members_stages_and_lifecycles() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let groups = "/access/api/v2/groups";
    let r = api
        .post(
            groups,
            json!({"name": "devs", "auto_join": true, "admin_privileges": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = api.post(groups, json!({"name": "devs"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let members = format!("{groups}/devs/members");
    // Only users of the platform can be added.
    let r = api
        .call(
            Method::PATCH,
            &members,
            Some(json!({"add": ["bob", "alice"], "remove": []})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("User 'bob' does not exist"), "{}", r.text);
    for u in ["alice", "bob"] {
        assert!(sim.put_object("users", u, json!({"email": format!("{u}@example.com")})));
    }
    let r = api
        .call(
            Method::PATCH,
            &members,
            Some(json!({"add": ["bob", "alice", "admin"], "remove": ["admin"]})),
        )
        .await;
    assert_eq!(r.json(), json!({"members": ["alice", "bob"]}));
    let r = api
        .call(
            Method::PATCH,
            &members,
            Some(json!({"add": [], "remove": ["bob"]})),
        )
        .await;
    assert_eq!(r.json(), json!({"members": ["alice"]}));
    let r = api
        .call(
            Method::PATCH,
            &format!("{groups}/nope/members"),
            Some(json!({"add": ["x"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // A lifecycle promotes through existing stages, never the system ones; a stage in use
    // cannot be deleted.
    let lifecycle = "/access/api/v2/lifecycle";
    let r = api
        .call(
            Method::PATCH,
            lifecycle,
            Some(json!({"promote_stages": ["qa"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = api
        .post(
            "/access/api/v2/stages",
            json!({"name": "qa", "category": "promote"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .call(
            Method::PATCH,
            lifecycle,
            Some(json!({"promote_stages": ["qa", "PROD"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = api
        .call(
            Method::PATCH,
            lifecycle,
            Some(json!({"promote_stages": ["qa"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.get(lifecycle).await.json()["promote_stages"],
        json!(["qa"])
    );
    let r = api.delete("/access/api/v2/stages/qa").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// The stage list as JFrog's "Get Lifecycle Stages" documents it: without `project_key`
/// the global stages (the system ones among them); with it the project's and the global
/// ones, narrowed by `scope` and `category`; 404 for a project that does not exist. The
/// system stages are read like any, and cannot be changed or deleted.
#[tokio::test]
async fn stages_are_listed_per_scope() {
    let sim = start().await;
    let api = Api::admin(&sim);
    project(&api, "team").await;
    let stages = "/access/api/v2/stages";
    for body in [
        json!({"name": "qa", "category": "promote"}),
        json!({"name": "team-qa", "project_key": "team", "category": "promote"}),
        json!({"name": "team-lint", "project_key": "team", "category": "code"}),
    ] {
        let r = api.post(stages, body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let names = |v: serde_json::Value| -> Vec<String> {
        let mut n: Vec<String> = v
            .as_array()
            .expect("an array")
            .iter()
            .map(|s| s["name"].as_str().expect("a name").to_owned())
            .collect();
        n.sort();
        n
    };
    assert_eq!(
        names(api.get(stages).await.json()),
        ["COMMIT", "PR", "PROD", "qa"]
    );
    assert_eq!(
        names(api.get(&format!("{stages}?project_key=team")).await.json()),
        ["COMMIT", "PR", "PROD", "qa", "team-lint", "team-qa"]
    );
    let own = api
        .get(&format!("{stages}?project_key=team&scope=project"))
        .await
        .json();
    assert_eq!(names(own.clone()), ["team-lint", "team-qa"]);
    assert!(
        own.as_array()
            .expect("an array")
            .iter()
            .all(|s| s["scope"] == "project" && s["project_key"] == "team")
    );
    assert_eq!(
        names(
            api.get(&format!(
                "{stages}?project_key=team&scope=project&category=code"
            ))
            .await
            .json()
        ),
        ["team-lint"]
    );
    let r = api
        .get(&format!("{stages}?project_key=nope&scope=project"))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let prod = api.get(&format!("{stages}/PROD")).await;
    assert_eq!(prod.status, StatusCode::OK, "{}", prod.text);
    assert_eq!(prod.json()["scope"], "global");
    let r = api.delete(&format!("{stages}/PROD")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// The platform lists answer in JFrog's shapes: groups and permissions by name and link
/// (`{"groups": [...]}`, `{"permissions": [...]}`), SCIM users and groups as a SCIM
/// `ListResponse` of full resources, workers as `{"workers": [...]}` without their secrets,
/// OIDC configurations and projects as arrays of full objects.
#[tokio::test]
async fn platform_lists_answer_in_jfrogs_shapes() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let created =
        |r: crate::common::Resp| assert!(r.status.is_success(), "{} {}", r.status, r.text);
    created(
        api.post("/access/api/v2/groups", json!({"name": "devs"}))
            .await,
    );
    assert_eq!(
        api.get("/access/api/v2/groups").await.json(),
        // One store: the built-in `readers` group is an Access group too.
        json!({"groups": [{"group_name": "devs", "uri": "/access/api/v2/groups/devs"},
                          {"group_name": "readers", "uri": "/access/api/v2/groups/readers"}],
               "cursor": "readers"})
    );
    let resource = json!({"actions": {"users": {"admin": ["READ"]}, "groups": {}},
        "targets": {"libs": {"include_patterns": ["**"], "exclude_patterns": []}}});
    created(
        api.post(
            "/access/api/v2/permissions",
            json!({"name": "read-libs", "resources": {"artifact": resource}}),
        )
        .await,
    );
    assert_eq!(
        api.get("/access/api/v2/permissions").await.json(),
        json!({"permissions": [{"name": "read-libs", "uri": "/access/api/v2/permissions/read-libs"}],
               "cursor": "read-libs"})
    );
    let user = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": "ann@example.com", "emails": [{"value": "ann@example.com", "primary": true}]});
    created(api.post("/access/api/v1/scim/v2/Users", user).await);
    let users = api.get("/access/api/v1/scim/v2/Users").await.json();
    assert_eq!(
        users["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:ListResponse"])
    );
    assert_eq!(users["totalResults"], 1);
    assert_eq!(
        users["Resources"][0],
        api.get("/access/api/v1/scim/v2/Users/ann@example.com")
            .await
            .json()
    );
    let group = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "id": "ops", "displayName": "ops"});
    created(api.post("/access/api/v1/scim/v2/Groups", group).await);
    let groups = api.get("/access/api/v1/scim/v2/Groups").await.json();
    assert_eq!(groups["Resources"][0]["displayName"], "ops");
    let worker = json!({"key": "w1", "sourceCode": "x", "action": "BEFORE_DOWNLOAD",
        "filterCriteria": {"artifactFilterCriteria": {"repoKeys": ["libs"]}},
        "secrets": [{"key": "token", "value": "s3cr3t"}]});
    created(api.post("/worker/api/v1/workers", worker).await);
    let workers = api.get("/worker/api/v1/workers").await;
    assert!(!workers.text.contains("s3cr3t"), "{}", workers.text);
    assert_eq!(
        workers.json(),
        json!({"workers": [api.get("/worker/api/v1/workers/w1").await.json()]})
    );
    project(&api, "team").await;
    assert_eq!(
        api.get(PROJECTS).await.json(),
        json!([api.get(&format!("{PROJECTS}/team")).await.json()])
    );
}

/// The Access v2 and SCIM lists are paged as JFrog pages them: `limit` and `cursor` (the
/// name of each page's last object), and `startIndex`, `count` and `totalResults`.
#[tokio::test]
async fn access_and_scim_lists_are_paged() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for g in ["g1", "g2", "g3"] {
        let r = api.post("/access/api/v2/groups", json!({"name": g})).await;
        assert!(r.status.is_success(), "{} {}", r.status, r.text);
        let scim = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
            "id": g, "displayName": g});
        let r = api.post("/access/api/v1/scim/v2/Groups", scim).await;
        assert!(r.status.is_success(), "{} {}", r.status, r.text);
    }
    // g1, g2, g3 and the built-in readers, in name order.
    let first = api.get("/access/api/v2/groups?limit=2").await.json();
    assert_eq!(first["groups"][1]["group_name"], "g2");
    assert_eq!(first["cursor"], "g2");
    let last = api
        .get("/access/api/v2/groups?limit=2&cursor=g2")
        .await
        .json();
    let names: Vec<&str> = last["groups"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|g| g["group_name"].as_str())
        .collect();
    assert_eq!(names, ["g3", "readers"]);
    let r = api.get("/access/api/v2/permissions?limit=0").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let page = api
        .get("/access/api/v1/scim/v2/Groups?startIndex=2&count=1")
        .await
        .json();
    assert_eq!(page["totalResults"], 3);
    assert_eq!(page["itemsPerPage"], 1);
    assert_eq!(page["Resources"][0]["id"], "g2");
}
