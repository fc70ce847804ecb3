//! Access answers that JFrog's Terraform providers (jfrog/terraform-provider-platform v2.2.x,
//! -project v1.9.x, the Access parts of -artifactory v12.11.x) and their acceptance tests
//! rely on; each test names the source that shows the behaviour.

use crate::common::{Api, start};
use reqwest::{Method, StatusCode};
use serde_json::json;

/// LDAP settings and LDAP group settings are created (`POST`, 201) and updated (`PUT`, 200)
/// on the collection path with its trailing slash: JFrog's Artifactory Terraform provider's
/// `LdapEndpoint` (`access/api/v1/ldap/settings/`, `resource_artifactory_ldap_setting_v2.go`)
/// and `LdapGroupEndpoint` (`access/api/v1/ldap/groups/`,
/// `resource_artifactory_ldap_group_setting_v2.go`).
#[tokio::test]
async fn ldap_settings_and_groups_are_written_on_the_slash_path() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let setting = json!({"key": "ldap1", "enabled": true, "ldap_url": "ldap://ldap.example.com/dc=x",
        "search": {"search_filter": "uid={0}", "search_sub_tree": true}});
    let r = api
        .post("/access/api/v1/ldap/settings/", setting.clone())
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mut changed = setting;
    changed["enabled"] = json!(false);
    let r = api.put("/access/api/v1/ldap/settings/", changed).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let s = api.get("/access/api/v1/ldap/settings/ldap1").await.json();
    assert_eq!(s["enabled"], false, "{s}");

    let group = json!({"name": "g1", "enabled_ldap": "ldap1", "strategy": "STATIC",
        "group_base_dn": "", "group_name_attribute": "cn"});
    let r = api.post("/access/api/v1/ldap/groups/", group.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mut changed = group;
    changed["group_name_attribute"] = json!("ou");
    let r = api.put("/access/api/v1/ldap/groups/", changed).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let g = api.get("/access/api/v1/ldap/groups/g1").await.json();
    assert_eq!(g["group_name_attribute"], "ou", "{g}");
}

/// `GET /access/api/v1/system/version` answers the version in `name`: `GetAccessVersion`
/// of jfrog/terraform-provider-shared `util/util.go` (`AccessVersion.Version`,
/// `json:"name"`), parsed as a version by the Artifactory provider's `CompareAcessVersions`
/// (`pkg/acctest/test.go`).
#[tokio::test]
async fn access_version_is_answered_in_name() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api.get("/access/api/v1/system/version").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let v = r.json();
    let name = v["name"].as_str().unwrap_or_default();
    assert!(
        name.split('.').count() == 3 && name.split('.').all(|p| p.parse::<u32>().is_ok()),
        "{v}"
    );
}

/// A global environment is renamed with `POST /access/api/v1/environments/{name}/rename`
/// and `{"new_name": "<new>"}`, answered 200: JFrog's Artifactory Terraform provider's
/// `GlobalEnvironmentResource.Update` (`resource_artifactory_global_environment.go`, its
/// `GlobalEnvironmentPostRenameRequestAPIModel` binds the name to `json:"new_name"`;
/// `TestAccGlobalEnvironment_full` renames).
#[tokio::test]
async fn a_global_environment_is_renamed() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for name in ["env-a", "env-c"] {
        let r = api
            .post("/access/api/v1/environments", json!({"name": name}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let rename = |from: &str| format!("/access/api/v1/environments/{from}/rename");
    let r = api
        .post(&rename("env-a"), json!({"new_name": "env-b"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let names: Vec<String> = api
        .get("/access/api/v1/environments")
        .await
        .json()
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect();
    assert!(names.contains(&"env-b".to_owned()), "{names:?}");
    assert!(!names.contains(&"env-a".to_owned()), "{names:?}");
    let r = api
        .post(&rename("env-a"), json!({"new_name": "env-d"}))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = api
        .post(&rename("env-b"), json!({"new_name": "env-c"}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let r = api
        .post(&rename("env-b"), json!({"new_name": "1bad"}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// A token scoped to groups is issued for a `username` that is no user: JFrog's
/// Artifactory Terraform provider's `TestAccScopedToken_WithSingleGroupScope` creates a
/// token with `username` the group's name and scope `applied-permissions/groups:<group>`
/// (Access's "Create Token": a transient user). A user-scoped token still needs the user.
#[tokio::test]
async fn a_group_scoped_token_is_issued_for_a_name_that_is_no_user() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v1/tokens",
            json!({"username": "test-group-1", "scope": "applied-permissions/groups:test-group-1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .post(
            "/access/api/v1/tokens",
            json!({"username": "nobody", "scope": "applied-permissions/user"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// A token that expires before Access's persistency threshold (10800 s by default) is
/// issued but not stored: reading it by ID answers 404. JFrog's Artifactory Terraform
/// provider's `TestAccScopedToken_WithExpiresInLessThanPersistencyThreshold` (`expires_in`
/// 600: the read after the create finds nothing, so the plan is not empty) and its
/// `expires_in` documentation; a non-expiring token (0) and one at the threshold are kept.
#[tokio::test]
async fn a_token_below_the_persistency_threshold_is_not_stored() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for (expires_in, stored) in [(600, false), (10_799, false), (10_800, true), (0, true)] {
        let r = api
            .post(
                "/access/api/v1/tokens",
                json!({"username": "admin", "expires_in": expires_in}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{expires_in}: {}", r.text);
        let t = r.json();
        assert!(t["access_token"].is_string(), "{expires_in}: {t}");
        let id = t["token_id"].as_str().unwrap_or_default().to_owned();
        let r = api.get(&format!("/access/api/v1/tokens/{id}")).await;
        let want = if stored {
            StatusCode::OK
        } else {
            StatusCode::NOT_FOUND
        };
        assert_eq!(r.status, want, "{expires_in}: {}", r.text);
    }
}

/// An internal Access group has no `realm_attributes`: the Platform Terraform provider's
/// `resource_group_test.go` checks `TestCheckNoResourceAttr(fqrn, "realm_attributes")` after
/// create, update and import (`GroupAPIModel.RealmAttributes` is `omitempty`, read-only).
#[tokio::test]
async fn an_access_group_answers_no_realm_attributes() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v2/groups",
            json!({"name": "g1", "description": "d"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(r.json().get("realm_attributes").is_none(), "{}", r.text);
    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/groups/g1",
            Some(json!({"description": "e"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let g = api.get("/access/api/v2/groups/g1").await.json();
    assert_eq!(g["realm"], "internal", "{g}");
    assert!(g.get("realm_attributes").is_none(), "{g}");
}

/// A project role keeps its `description` (the Project Terraform provider's `Role` API
/// model, `pkg/project/resource/role.go`, and `role_test.go`'s roles with descriptions),
/// and "Release Manager" is a predefined project role members are given without creating
/// it (`resource_project_test.go`, `roles = ["Release Manager"]`).
#[tokio::test]
async fn project_roles_keep_descriptions_and_release_manager_is_predefined() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v1/projects",
            json!({"project_key": "team", "display_name": "Team",
                   "admin_privileges": {"manage_members": true, "manage_resources": true,
                                        "index_resources": true}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let role = json!({"name": "r1", "description": "test description", "type": "CUSTOM",
        "environments": ["DEV"], "actions": ["READ_REPOSITORY"]});
    let r = api.post("/access/api/v1/projects/team/roles", role).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r1 = api
        .get("/access/api/v1/projects/team/roles/r1")
        .await
        .json();
    assert_eq!(r1["description"], "test description", "{r1}");
    let mut changed = r1.clone();
    changed["description"] = json!("test description 2");
    let r = api
        .put("/access/api/v1/projects/team/roles/r1", changed)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r1 = api
        .get("/access/api/v1/projects/team/roles/r1")
        .await
        .json();
    assert_eq!(r1["description"], "test description 2", "{r1}");

    let roles = api.get("/access/api/v1/projects/team/roles").await.json();
    assert!(
        roles
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["name"] == "Release Manager" && r["type"] == "PREDEFINED"),
        "{roles}"
    );
    let r = api
        .post("/access/api/v2/groups", json!({"name": "devs"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .put(
            "/access/api/v1/projects/team/groups/devs",
            json!({"name": "devs", "roles": ["Release Manager"]}),
        )
        .await;
    assert!(r.status.is_success(), "{}: {}", r.status, r.text);
}

/// A SCIM group `PUT` answers the group as a read does: SCIM "Replacing with PUT" (RFC 7644
/// section 3.5.1) and the Platform Terraform provider's `SCIMGroupResource.Update`
/// (`resource_scim_group.go`), which decodes the answer of its `Put` into the group it keeps.
#[tokio::test]
async fn a_scim_group_put_answers_the_group() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let group = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "id": "scim-g", "displayName": "scim-g", "members": []});
    let r = api
        .post("/access/api/v1/scim/v2/Groups", group.clone())
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mut changed = group;
    changed["members"] = json!([{"value": "admin", "display": "admin"}]);
    let r = api
        .put("/access/api/v1/scim/v2/Groups/scim-g", changed)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // resty decodes into the provider's model only for a JSON content type.
    let json_type = |r: &crate::common::Resp| {
        r.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"))
    };
    assert!(json_type(&r), "{:?}", r.headers);
    let answered = r.json();
    assert_eq!(answered["id"], "scim-g", "{answered}");
    assert_eq!(answered["displayName"], "scim-g", "{answered}");
    assert_eq!(
        answered,
        api.get("/access/api/v1/scim/v2/Groups/scim-g").await.json()
    );

    // A SCIM user's PUT answers the user the same way (`SCIMUserResource.Update`).
    let user = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": "scim-u@example.com", "active": true,
        "emails": [{"value": "scim-u@example.com", "primary": true}]});
    let r = api.post("/access/api/v1/scim/v2/Users", user.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mut changed = user;
    changed["active"] = json!(false);
    let r = api
        .put("/access/api/v1/scim/v2/Users/scim-u@example.com", changed)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(json_type(&r), "{:?}", r.headers);
    assert_eq!(r.json()["active"], false, "{}", r.text);
    assert_eq!(
        r.json(),
        api.get("/access/api/v1/scim/v2/Users/scim-u@example.com")
            .await
            .json()
    );
}

/// An identity mapping whose token lifetime exceeds Access's default OIDC maximum (86400 s,
/// `security.oidc.max-expiry-seconds`, jfrog/terraform-provider-platform issue #216) is
/// refused "Invalid expiry": the Platform Terraform provider's
/// `TestAccOIDCIdentityMapping_invalid_expiry` (`expires_in` 1200000000, `ExpectError`
/// `Invalid\s+expiry`); nothing is stored.
#[tokio::test]
async fn an_identity_mapping_with_an_out_of_range_expiry_is_refused() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v1/oidc",
            json!({"name": "gh", "provider_type": "GitHub", "issuer_url": "https://token.actions.githubusercontent.com"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mapping = |expires_in: i64| {
        json!({"name": "m", "priority": 1, "claims": {"sub": "x"},
               "token_spec": {"username": "u", "scope": "applied-permissions/user",
                              "audience": "*@*", "expires_in": expires_in}})
    };
    for bad in [1_200_000_000, 86_401, 0] {
        let r = api
            .post("/access/api/v1/oidc/gh/identity_mappings", mapping(bad))
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.text);
        assert!(r.text.contains("Invalid expiry"), "{bad}: {}", r.text);
    }
    let r = api.get("/access/api/v1/oidc/gh/identity_mappings/m").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = api
        .post("/access/api/v1/oidc/gh/identity_mappings", mapping(86_400))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// Once an AWS IAM role and its user are deleted, reading the role answers 400: the
/// Platform Terraform provider's `testAccAWSIAMRoleDestroy` (`resource_aws_iam_role_test.go`,
/// run after destroying the `platform_aws_iam_role` and its `artifactory_managed_user`)
/// takes only 400 as "deleted".
#[tokio::test]
async fn a_deleted_iam_role_of_a_deleted_user_reads_400() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/access/api/v2/users",
            json!({"username": "iam-user", "email": "iam-user@example.com",
                   "password": "Passsw0rd!12"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .put(
            "/access/api/v1/aws/iam_role",
            json!({"username": "iam-user", "iam_role": "arn:aws:iam::000000000000:role/example"}),
        )
        .await;
    assert!(r.status.is_success(), "{}: {}", r.status, r.text);
    let path = "/access/api/v1/aws/iam_role/iam-user";
    assert_eq!(api.get(path).await.status, StatusCode::OK);
    let r = api.delete(path).await;
    assert!(r.status.is_success(), "{}: {}", r.status, r.text);
    let r = api.delete("/access/api/v2/users/iam-user").await;
    assert!(r.status.is_success(), "{}: {}", r.status, r.text);
    let r = api.get(path).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

/// Access's groups and users are one relation on both sides (Access "Create Group", "Add or
/// Remove Group Members", "Delete Group", "Get User Details"): members written through
/// `/access/api/v2/groups` show in the users' `groups`, and a deleted group leaves them. The
/// Platform Terraform provider's `resource_group_test.go` (members managed on the group) and
/// the Artifactory provider's `user.go` (a user's `groups` read back from Access) rely on it.
/// A group made through the security API answers no `realm_attributes` through Access
/// either (the `""` there is the security API's default, never stored).
#[tokio::test]
async fn access_group_members_show_in_their_users_and_a_deleted_group_leaves_them() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for u in ["u1", "u2"] {
        let r = api
            .post(
                "/access/api/v2/users",
                json!({"username": u, "email": format!("{u}@example.com"), "password": "Passw0rd!x"}),
            )
            .await;
        assert!(r.status.is_success(), "{}", r.text);
    }
    let groups_of = |u: &'static str| {
        let api = &api;
        async move {
            api.get(&format!("/access/api/v2/users/{u}"))
                .await
                .json()
                .get("groups")
                .cloned()
                .unwrap_or(json!([]))
        }
    };
    let r = api
        .post(
            "/access/api/v2/groups",
            json!({"name": "g1", "members": ["u1"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(groups_of("u1").await, json!(["g1"]));

    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/groups/g1/members",
            Some(json!({"add": ["u2"], "remove": ["u1"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(groups_of("u1").await, json!([]));
    assert_eq!(groups_of("u2").await, json!(["g1"]));

    let r = api.delete("/access/api/v2/groups/g1").await;
    assert!(r.status.is_success(), "{}", r.text);
    assert_eq!(groups_of("u2").await, json!([]));
    let r = api
        .call(
            Method::PATCH,
            "/access/api/v2/users/u2",
            Some(json!({"email": "u2b@example.com"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    let r = api
        .put("/artifactory/api/security/groups/legacy", json!({}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let g = api.get("/access/api/v2/groups/legacy").await.json();
    assert!(g.get("realm_attributes").is_none(), "{g}");
}
