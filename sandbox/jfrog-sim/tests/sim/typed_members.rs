//! JFrog's services bind request bodies to typed models: a member the model lacks (a typo, a
//! member of another domain, type or version) is dropped, never stored or echoed back (issue
//! 26). Each test names the JFrog source of the model it checks; also the one proxy store and
//! the documented answer shapes of Event subscriptions and Xray watches.

use crate::common::{Api, start, start_with};
use jfrog_sim::SimConfig;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

/// JFrog REST API "Create User" (`POST /access/api/v2/users`): the request members, the
/// response `{username, email, groups, realm, status, admin, profile_updatable,
/// internal_password_disabled, disable_ui_access}`; `watch_manager`... "only available starting
/// from Artifactory version 7.128.0".
#[tokio::test]
async fn access_users_keep_only_the_documented_members() {
    let sim = start().await; // Artifactory 7.117.5
    let api = Api::admin(&sim);
    let body = json!({"username": "u1", "email": "u1@example.com", "password": "Passw0rd1",
                      "nickname": "typo", "watch_manager": true, "realm": "ldap"});
    let r = api.post("/access/api/v2/users", body.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let expected = vec![
        "admin",
        "disable_ui_access",
        "email",
        "groups",
        "internal_password_disabled",
        "profile_updatable",
        "realm",
        "status",
        "username",
    ];
    assert_eq!(keys(&r.json()), expected, "{}", r.text);
    let read = api.get("/access/api/v2/users/u1").await.json();
    assert_eq!(keys(&read), expected, "{read}");
    assert_eq!(read["realm"], "internal", "realm is the server's");
    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/users/u1",
            Some(json!({"disable_ui_access": true, "shoe_size": 44})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(keys(&r.json()), expected, "{}", r.text);
    assert_eq!(r.json()["disable_ui_access"], true);

    let sim = start_with(SimConfig {
        artifactory_version: "7.128.0".into(),
        ..SimConfig::default()
    })
    .await;
    let api = Api::admin(&sim);
    let r = api.post("/access/api/v2/users", body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["watch_manager"], true, "{}", r.text);
    assert!(r.json().get("nickname").is_none(), "{}", r.text);
}

/// JFrog REST API "Update a User (Partial Update)" (`PATCH /access/api/v2/users/{username}`):
/// the request is `{email, password, admin, profile_updatable, internal_password_disabled,
/// disable_ui_access}`, no `groups` and no `username`; memberships change through
/// `PATCH /access/api/v2/users/{username}/groups` with `{add, remove}`, as JFrog's Terraform
/// provider changes them (v12.11.7 `pkg/artifactory/resource/user/user.go`,
/// `syncReadersGroup`, `GroupsAddRemove`).
#[tokio::test]
async fn access_user_patch_leaves_groups_to_the_groups_call() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for g in ["devs", "ops"] {
        let r = api.post("/access/api/v2/groups", json!({"name": g})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let r = api
        .post(
            "/access/api/v2/users",
            json!({"username": "u2", "email": "u2@example.com", "password": "Passw0rd1",
                   "groups": ["devs"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/users/u2",
            Some(json!({"email": "u2@corp.example.com", "groups": ["ops"], "username": "other"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let u = api.get("/access/api/v2/users/u2").await.json();
    assert_eq!(u["email"], "u2@corp.example.com");
    assert_eq!(u["groups"], json!(["devs"]), "PATCH leaves the groups: {u}");
    assert_eq!(u["username"], "u2");
    let groups = "/access/api/v2/users/u2/groups";
    let r = api
        .call(
            Method::PATCH,
            groups,
            Some(json!({"add": ["ops"], "remove": ["devs"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let u = api.get("/access/api/v2/users/u2").await.json();
    assert_eq!(u["groups"], json!(["ops"]), "{u}");
    let r = api
        .call(Method::PATCH, groups, Some(json!({"add": ["nobody"]})))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/users/ghost/groups",
            Some(json!({"add": ["ops"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
}

/// REST API "Security Configuration JSON", `application/vnd.org.jfrog.artifactory.security.
/// User+json`: `name`, `email`, `password`, `admin`, `profileUpdatable`, `disableUIAccess`,
/// `internalPasswordDisabled`, `groups`, `watchManager`, `policyManager`, `policyViewer`,
/// `reportsManager`; `realm`, `lastLoggedIn`, `status` are read-only.
#[tokio::test]
async fn security_api_users_keep_only_the_documented_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .put(
            "/artifactory/api/security/users/u2",
            json!({"email": "u2@example.com", "password": "Passw0rd1", "watchManager": true,
                   "nickname": "typo", "realm": "ldap", "lastLoggedIn": "2020-01-01T00:00:00.000Z"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let u = api.get("/artifactory/api/security/users/u2").await.json();
    assert_eq!(u["watchManager"], true, "{u}");
    assert_eq!(u["realm"], "internal", "{u}");
    for gone in ["nickname", "lastLoggedIn", "password"] {
        assert!(u.get(gone).is_none(), "{gone} in {u}");
    }
    let r = api
        .post(
            "/artifactory/api/security/users/u2",
            json!({"disableUIAccess": true, "favouriteColour": "green"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let u = api.get("/artifactory/api/security/users/u2").await.json();
    assert_eq!(u["disableUIAccess"], true);
    assert!(u.get("favouriteColour").is_none(), "{u}");
}

/// Access REST API "Create Group" (`POST /access/api/v2/groups`) and the JFrog Platform
/// Terraform provider's `GroupAPIModel` (`pkg/platform/resource_group.go`, v2.2.10): `name`,
/// `description`, `external_id`, `auto_join`, `admin_privileges`, `members`, the six role flags;
/// `realm` and `realm_attributes` read-only.
#[tokio::test]
async fn access_groups_keep_only_the_documented_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v2/groups",
            json!({"name": "g1", "manage_webhook": true, "colour": "blue", "realm": "ldap"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let g = api.get("/access/api/v2/groups/g1").await.json();
    assert_eq!(g["manage_webhook"], true, "{g}");
    assert_eq!(g["realm"], "internal", "{g}");
    assert!(g.get("colour").is_none(), "{g}");
    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/groups/g1",
            Some(json!({"description": "d", "colour": "red"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json().get("colour").is_none(), "{}", r.text);
    // One group store: the security API reads the same group, without the unknown member.
    let legacy = api.get("/artifactory/api/security/groups/g1").await.json();
    assert_eq!(legacy["description"], "d", "{legacy}");
    assert!(legacy.get("colour").is_none(), "{legacy}");
}

/// JFrog REST API "Add a New Project" and the JFrog Project Terraform provider's
/// `ProjectAPIModel` (`pkg/project/resource/resource_project.go`, v1.9.8).
#[tokio::test]
async fn projects_keep_only_the_documented_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v1/projects",
            json!({"project_key": "team", "display_name": "Team", "budget": 10,
                   "admin_privileges": {"manage_members": true, "launch_rockets": true}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let p = api.get("/access/api/v1/projects/team").await.json();
    assert!(p.get("budget").is_none(), "{p}");
    assert_eq!(
        keys(&p["admin_privileges"]),
        vec![
            "index_resources",
            "manage_members",
            "manage_remote_repository",
            "manage_resources"
        ]
    );
}

fn subscription(key: &str) -> Value {
    json!({
        "key": key,
        "description": "deployments",
        "colour": "blue",
        "event_filter": {
            "domain": "artifact",
            "event_types": ["deployed"],
            "criteria": {"anyLocal": true, "anyRemote": false, "repoKeys": [],
                         "selectedBuilds": ["not-an-artifact-criterion"]},
            "priority": 1
        },
        "handlers": [{
            "handler_type": "webhook",
            "url": "https://hooks.example.com/jfrog",
            "method": "POST",
            "custom_http_headers": [{"name": "X-A", "value": "1", "sensitive": true}]
        }]
    })
}

/// JFrog REST API "Create a New Webhook Subscription" (`POST /event/api/v1/subscriptions`:
/// the sample output is the subscription) and the Artifactory Terraform provider's
/// `WebhookAPIModel`, `RepoCriteriaAPIModel`, `HandlerAPIModel` and `KeyValuePairAPIModel`
/// (`pkg/artifactory/resource/webhook`, v12.11.7): members of other models are dropped.
#[tokio::test]
async fn subscriptions_answer_the_subscription_and_keep_only_typed_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post("/event/api/v1/subscriptions", subscription("audits"))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let created = r.json();
    let expected = json!({
        "key": "audits",
        "description": "deployments",
        "enabled": true,
        "event_filter": {
            "domain": "artifact",
            "event_types": ["deployed"],
            "criteria": {"anyLocal": true, "anyRemote": false, "repoKeys": []}
        },
        "handlers": [{
            "handler_type": "webhook",
            "url": "https://hooks.example.com/jfrog",
            // `use_secret_for_signing` was not sent: not answered.
            "custom_http_headers": [{"name": "X-A", "value": "1"}]
        }]
    });
    assert_eq!(created, expected);
    assert_eq!(
        api.get("/event/api/v1/subscriptions/audits").await.json(),
        expected
    );
    assert_eq!(
        api.get("/event/api/v1/subscriptions").await.json(),
        json!([expected])
    );
    let mut custom = subscription("custom");
    custom["handlers"] = json!([{"handler_type": "custom-webhook", "url": "https://x.example",
        "method": "POST", "payload": "{}", "secret": "not a custom member",
        "http_headers": [{"name": "h", "value": "v"}]}]);
    let r = api.post("/event/api/v1/subscriptions", custom).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(
        keys(&r.json()["handlers"][0]),
        vec!["handler_type", "http_headers", "method", "payload", "url"]
    );
}

async fn patch_descriptor(api: &Api, yaml: &str) -> crate::common::Resp {
    let r = api
        .http
        .patch(format!("{}/artifactory/api/system/configuration", api.base))
        .bearer_auth(api.token.clone().unwrap_or_default())
        .header("Content-Type", "application/yaml")
        .body(yaml.to_owned())
        .send()
        .await
        .expect("patch sent");
    crate::common::Resp {
        status: r.status(),
        headers: r.headers().clone(),
        text: r.text().await.expect("body"),
    }
}

/// One proxy store: a webhook handler's `proxy` names a proxy of the system configuration
/// descriptor (JFrog REST API "Create a New Webhook Subscription": `"proxy": "mainProxy"`, the
/// key of a proxy configured in Artifactory; "proxy with key '...' not found" is the Event
/// service's answer that the Artifactory Terraform provider retries on).
#[tokio::test]
async fn webhook_proxies_are_the_descriptors_proxies() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let mut hook = subscription("proxied");
    hook["handlers"][0]["proxy"] = json!("mainProxy");
    let r = api.post("/event/api/v1/subscriptions", hook.clone()).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(
        r.text.contains("proxy with key 'mainProxy' not found"),
        "{}",
        r.text
    );
    let r = patch_descriptor(
        &api,
        "proxies:\n  mainProxy:\n    host: proxy.example.com\n    port: 3128\n",
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api.post("/event/api/v1/subscriptions", hook.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["handlers"][0]["proxy"], "mainProxy");
    let r = patch_descriptor(&api, "proxies:\n  mainProxy: ~\n").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    hook["key"] = json!("proxied-2");
    let r = api.post("/event/api/v1/subscriptions", hook).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

async fn xray_fixtures(api: &Api) {
    let r = api
        .create(
            "libs-local",
            json!({"rclass": "local", "packageType": "maven"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .post(
            "/xray/api/v2/policies",
            json!({
                "name": "sec", "type": "security", "description": "", "owner": "typo",
                "rules": [{
                    "name": "r1", "priority": 1, "weight": 3,
                    "criteria": {"min_severity": "high", "banana": true},
                    "actions": {"fail_build": true, "block_download": {"active": false, "unscanned": false, "grace": 1}, "launch": true}
                }]
            }),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// terraform-provider-xray v3.1.9 `PolicyAPIModel`, `PolicyRuleAPIModel`,
/// `PolicyRuleCriteriaAPIModel`, `PolicyRuleActionsAPIModel` (`pkg/xray/resource/policies.go`).
#[tokio::test]
async fn xray_policies_keep_only_the_typed_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    xray_fixtures(&api).await;
    let p = api.get("/xray/api/v2/policies/sec").await.json();
    assert_eq!(
        keys(&p),
        vec![
            "author",
            "created",
            "description",
            "modified",
            "name",
            "rules",
            "type"
        ]
    );
    let rule = &p["rules"][0];
    assert_eq!(keys(rule), vec!["actions", "criteria", "name", "priority"]);
    assert_eq!(rule["criteria"], json!({"min_severity": "High"}));
    assert_eq!(
        rule["actions"],
        json!({"fail_build": true, "block_download": {"active": false, "unscanned": false}})
    );
}

/// Xray REST API "Get Watches" / "Get Watch" sample response: `general_data` carries Xray's
/// `id` beside `name`, `description`, `active`, and the watch has no other top-level members
/// than `general_data`, `project_resources`, `assigned_policies`, `watch_recipients`
/// (terraform-provider-xray `WatchAPIModel`, `resource_xray_watch.go`).
#[tokio::test]
async fn xray_watches_answer_the_documented_shape() {
    let sim = start().await;
    let api = Api::admin(&sim);
    xray_fixtures(&api).await;
    let watch = json!({
        "general_data": {"name": "w1", "description": "d", "active": true, "owner": "x"},
        "project_resources": {"resources": [{"type": "repository", "bin_mgr_id": "default",
            "name": "libs-local", "colour": "red",
            "filters": [{"type": "regex", "value": ".*", "x": 1}]}]},
        "assigned_policies": [{"name": "sec", "type": "security", "weight": 2}],
        "watch_recipients": ["a@example.com"],
        "extra": true
    });
    let r = api.post("/xray/api/v2/watches", watch.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let w = api.get("/xray/api/v2/watches/w1").await.json();
    assert_eq!(
        keys(&w),
        vec![
            "assigned_policies",
            "general_data",
            "project_resources",
            "watch_recipients"
        ]
    );
    let id = w["general_data"]["id"].as_str().expect("an id").to_owned();
    assert_eq!(id.len(), 24, "{id}");
    assert_eq!(
        keys(&w["general_data"]),
        vec!["active", "description", "id", "name"]
    );
    assert_eq!(
        w["project_resources"]["resources"][0],
        json!({"type": "repository", "bin_mgr_id": "default", "name": "libs-local",
               "filters": [{"type": "regex", "value": ".*"}]})
    );
    assert_eq!(
        w["assigned_policies"],
        json!([{"name": "sec", "type": "security"}])
    );
    let mut changed = watch.clone();
    changed["general_data"]["description"] = json!("d2");
    let r = api.put("/xray/api/v2/watches/w1", changed).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let list = api.get("/xray/api/v2/watches").await.json();
    assert_eq!(list[0]["general_data"]["id"], id.as_str(), "the id is kept");
    assert_eq!(list[0]["general_data"]["description"], "d2");
    assert_eq!(keys(&list[0]), keys(&w));
}

/// terraform-provider-xray v3.1.9 `WebhookAPIModel` (`resource_xray_webhook.go`); the
/// password is never answered.
#[tokio::test]
async fn xray_webhooks_keep_only_the_typed_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/xray/api/v1/webhooks",
            json!({"name": "wh", "url": "https://x.example", "description": "", "use_proxy": false,
                   "user_name": "u", "password": "p", "headers": {"a": "b"}, "retries": 3}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let w = api.get("/xray/api/v1/webhooks/wh").await.json();
    assert_eq!(
        keys(&w),
        vec![
            "description",
            "headers",
            "name",
            "url",
            "use_proxy",
            "user_name"
        ]
    );
}

/// terraform-provider-xray v3.1.9 `IgnoreRuleAPIModel` / `IgnoreFiltersAPIModel`
/// (`resource_xray_ignore_rule.go`), `CurationPolicyAPIModel`
/// (`resource_xray_curation_policy.go`), `CustomCurationConditionAPIModel`
/// (`resource_xray_custom_curation_condition.go`), `CustomIssueAPIModel`
/// (`resource_xray_custom_issue.go`).
#[tokio::test]
async fn other_xray_objects_keep_only_the_typed_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/xray/api/v1/ignore_rules",
            json!({"notes": "n", "colour": 1,
                   "ignore_filters": {"cves": ["CVE-2024-1"], "shoe": ["x"],
                                      "components": [{"name": "c", "version": "1", "x": 2}]}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let list = api.get("/xray/api/v1/ignore_rules").await.json();
    let rule = list["data"][0].clone();
    assert!(rule.get("colour").is_none(), "{list}");
    assert_eq!(
        rule["ignore_filters"],
        json!({"cves": ["CVE-2024-1"], "components": [{"name": "c", "version": "1"}]}),
        "{list}"
    );

    let r = api
        .post(
            "/xray/api/v1/curation/conditions",
            json!({"name": "cond", "condition_template_id": "OpenSSF", "colour": 1,
                   "param_values": [{"param_id": "p", "value": 5, "x": 1}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let c = r.json();
    assert!(c.get("colour").is_none(), "{c}");
    assert_eq!(c["param_values"], json!([{"param_id": "p", "value": 5}]));
    let r = api
        .post(
            "/xray/api/v1/curation/policies",
            json!({"name": "pol", "condition_id": "1", "scope": "all_repos",
                   "policy_action": "block", "colour": 1}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(r.json().get("colour").is_none(), "{}", r.text);

    let r = api
        .post(
            "/xray/api/v1/events",
            json!({"id": "issue-1", "type": "Security", "provider": "custom", "summary": "s",
                   "description": "d", "package_type": "generic", "severity": "High",
                   "colour": 1, "cves": [{"cve": "CVE-2024-1", "cvss_v2": "", "cvss_v3": "", "x": 1}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let i = api.get("/xray/api/v2/events/issue-1").await.json();
    assert!(i.get("colour").is_none(), "{i}");
    assert_eq!(
        i["cves"],
        json!([{"cve": "CVE-2024-1", "cvss_v2": "", "cvss_v3": ""}])
    );
}

/// terraform-provider-xray v3.1.9 (`pkg/xray/resource/`): `WorkersCountAPIModel`
/// (`resource_xray_workers_count.go`), `BasicSettingsRequestAPIModel`
/// (`resource_xray_settings.go`, Artifactory's `updateXrayBasicSettings`),
/// `RepositoryConfigurationAPIModel` and its parts (`resource_xray_repository_config.go`),
/// `BinaryManagerRepoAPIModel` (`resource_xray_binary_manager_repos.go`).
#[tokio::test]
async fn xray_settings_keep_only_the_typed_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    xray_fixtures(&api).await;
    let r = api
        .put(
            "/xray/api/v1/configuration/workersCount",
            json!({"index": {"new_content": 5, "existing_content": 3, "turbo": true},
                   "colour": {"new_content": 0}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let w = api
        .get("/xray/api/v1/configuration/workersCount")
        .await
        .json();
    assert!(w.get("colour").is_none(), "{w}");
    assert_eq!(w["index"], json!({"new_content": 5, "existing_content": 3}));

    let r = api
        .post(
            "/artifactory/api/xrayRepo/updateXrayBasicSettings",
            json!({"xrayEnabled": true, "allowBlockedArtifactsDownload": true, "colour": 1}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let b = api
        .get("/artifactory/api/xrayRepo/getIntegrationConfig")
        .await
        .json();
    assert!(b.get("colour").is_none(), "{b}");
    // The answer names two settings apart from the write (BasicSettingsResponseAPIModel).
    assert_eq!(b["xrayAllowBlocked"], true, "{b}");
    assert_eq!(b["xrayAllowWhenUnavailable"], false, "{b}");
    assert!(b.get("allowBlockedArtifactsDownload").is_none(), "{b}");

    let r = api
        .put(
            "/xray/api/v1/repos_config",
            json!({"repo_name": "libs-local", "colour": 1,
                   "repo_config": {"retention_in_days": 90, "x": 1,
                                   "exposures": {"scanners_category": {"secrets": true}, "y": 2}},
                   "repo_paths_config": {"patterns": [{"include": "a/**", "exclude": "",
                       "index_new_artifacts": true, "retention_in_days": 30, "z": 3}]}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let c = api.get("/xray/api/v1/repos_config/libs-local").await.json();
    assert_eq!(
        c,
        json!({"repo_name": "libs-local",
               "repo_config": {"retention_in_days": 90,
                               "exposures": {"scanners_category": {"secrets": true}}},
               "repo_paths_config": {"patterns": [{"include": "a/**", "exclude": "",
                   "index_new_artifacts": true, "retention_in_days": 30}]}})
    );

    let r = api
        .put(
            "/xray/api/v1/binMgr/default/repos",
            json!({"indexed_repos": [{"name": "libs-local", "type": "local",
                                      "pkg_type": "Maven", "colour": 1}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let m = api.get("/xray/api/v1/binMgr/default/repos").await.json();
    assert_eq!(
        m["indexed_repos"],
        json!([{"name": "libs-local", "type": "local", "pkg_type": "Maven"}])
    );
}
