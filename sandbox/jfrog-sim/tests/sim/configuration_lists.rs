//! The list calls that answer the whole settings of every object of a family, as JFrog's REST
//! pages show them (issue 30: a provider observes such a family through one list per poll):
//!
//! - "Get all Package Cleanup Policies API" (`GET /artifactory/api/cleanup/packages/policies`)
//!   and "Get All Smart Archiving Policies API"
//!   (`GET /artifactory/api/archive/v2/packages/policies`): an array of whole policies; a
//!   platform admin asking without `projectKey` gets the global and the project-level ones;
//! - "Get the LDAP Settings" (`GET /access/api/v1/ldap/settings`, Artifactory 7.57.1): an
//!   array of whole settings, `search.manager_password` null;
//! - "Get the LDAP Group Settings" (`GET /access/api/v1/ldap/groups`): an array of whole
//!   group settings;
//! - the trusted keys (`GET /artifactory/api/security/keys/trusted`): `{"keys": [...]}`, each
//!   key with `kid`, `alias`, `key`, `fingerprint`, `issued_on`, `issued_by`, `valid_until`
//!   (the Terraform provider's `DistributionPublicKeysList`).

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn policy(key: &str, project: Option<&str>) -> Value {
    let mut p = json!({
        "key": key,
        "description": format!("policy {key}"),
        "cronExp": "0 0 2 ? * MON-SAT *",
        "durationInMinutes": 60,
        "skipTrashcan": false,
        "searchCriteria": {
            "packageTypes": ["docker", "maven"],
            "repos": ["**"],
            "excludedRepos": [],
            "includedPackages": ["**"],
            "excludedPackages": [],
            "includeAllProjects": project.is_none(),
            "includedProjects": [],
            "createdBeforeInDays": 30
        }
    });
    if let Some(p2) = project {
        p["projectKey"] = json!(p2);
    }
    p
}

/// The list's entry with `member` equal to `key`.
fn entry<'a>(list: &'a [Value], member: &str, key: &str) -> &'a Value {
    list.iter()
        .find(|e| e[member] == key)
        .unwrap_or_else(|| panic!("{key} not listed: {list:?}"))
}

/// The list at `path` (an array, answered 200).
async fn list(api: &Api, path: &str) -> Vec<Value> {
    let r = api.get(path).await;
    assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
    r.json().as_array().cloned().expect("an array")
}

/// The list at `path` holds exactly `keys` (by `member`), each entry being what the read by
/// key (`{path}/{key}`) answers; returns the entries in the order of `keys`.
async fn listed_as_read(api: &Api, path: &str, member: &str, keys: &[&str]) -> Vec<Value> {
    let list = list(api, path).await;
    assert_eq!(list.len(), keys.len(), "{path}: {list:?}");
    let mut entries = Vec::new();
    for key in keys {
        let e = entry(&list, member, key);
        let read = api.get(&format!("{path}/{key}")).await;
        assert_eq!(read.status, StatusCode::OK, "{path}/{key}: {}", read.text);
        assert_eq!(e, &read.json(), "{path}: {key}: the list entry is the read");
        entries.push(e.clone());
    }
    entries
}

#[tokio::test]
async fn policy_lists_answer_every_policy_whole_global_and_project_level() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for base in [
        "/artifactory/api/cleanup/packages/policies",
        "/artifactory/api/archive/v2/packages/policies",
    ] {
        let r = api.get(base).await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        assert_eq!(r.json(), json!([]), "{base}");

        for (key, project) in [("global-1", None), ("team-1", Some("team"))] {
            let r = api
                .post(&format!("{base}/{key}"), policy(key, project))
                .await;
            assert_eq!(r.status, StatusCode::CREATED, "{base}: {}", r.text);
        }
        for e in listed_as_read(&api, base, "key", &["global-1", "team-1"]).await {
            assert_eq!(e["cronExp"], "0 0 2 ? * MON-SAT *", "{base}: {e}");
            assert_eq!(e["durationInMinutes"], 60, "{base}: {e}");
            assert_eq!(e["enabled"], false, "{base}: {e}");
            assert_eq!(e["skipTrashcan"], false, "{base}: {e}");
            assert_eq!(
                e["searchCriteria"]["packageTypes"],
                json!(["docker", "maven"]),
                "{base}: {e}"
            );
        }

        // The enablement shows in the list as in the read.
        let r = api
            .post(
                &format!("{base}/team-1/enablement"),
                json!({"enabled": true}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        let listed = list(&api, base).await;
        assert_eq!(entry(&listed, "key", "team-1")["enabled"], true, "{base}");

        // A deleted policy leaves the list.
        let r = api.delete(&format!("{base}/global-1")).await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        let listed = list(&api, base).await;
        assert_eq!(listed.len(), 1, "{base}: {listed:?}");
        assert_eq!(listed[0]["key"], "team-1", "{base}");
    }
}

#[tokio::test]
async fn the_ldap_settings_list_answers_whole_settings_with_a_null_manager_password() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for key in ["ldap1", "ldap2"] {
        let setting = json!({
            "key": key,
            "enabled": true,
            "ldap_url": format!("ldap://{key}.example.com/dc=example,dc=com"),
            "user_dn_pattern": "uid={0}",
            "auto_create_user": true,
            "email_attribute": "mail",
            "ldap_poisoning_protection": true,
            "allow_user_to_access_profile": false,
            "paging_support_enabled": true,
            "search": {
                "search_filter": "uid={0}",
                "search_base": "ou=people",
                "search_sub_tree": true,
                "manager_dn": "cn=admin,dc=example,dc=com",
                "manager_password": "never-answered"
            }
        });
        let r = api.post("/access/api/v1/ldap/settings", setting).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let path = "/access/api/v1/ldap/settings";
    let r = api.get(path).await;
    assert!(!r.text.contains("never-answered"), "{}", r.text);
    for e in listed_as_read(&api, path, "key", &["ldap1", "ldap2"]).await {
        // Answered, and null (not left out).
        assert_eq!(
            e["search"].get("manager_password"),
            Some(&Value::Null),
            "{e}"
        );
        assert_eq!(
            e["search"]["manager_dn"], "cn=admin,dc=example,dc=com",
            "{e}"
        );
        assert_eq!(e["user_dn_pattern"], "uid={0}", "{e}");
    }
}

#[tokio::test]
async fn the_ldap_groups_list_answers_whole_group_settings() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for name in ["g1", "g2"] {
        let group = json!({
            "name": name,
            "enabled_ldap": "ldap1",
            "group_base_dn": "ou=groups",
            "group_name_attribute": "cn",
            "group_member_attribute": "uniqueMember",
            "sub_tree": true,
            "force_attribute_search": false,
            "filter": "(objectClass=groupOfNames)",
            "description_attribute": "description",
            "strategy": "STATIC"
        });
        let r = api.post("/access/api/v1/ldap/groups", group).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    for e in listed_as_read(&api, "/access/api/v1/ldap/groups", "name", &["g1", "g2"]).await {
        assert_eq!(e["strategy"], "STATIC", "{e}");
        assert_eq!(e["group_member_attribute"], "uniqueMember", "{e}");
    }
}

#[tokio::test]
async fn the_trusted_keys_list_answers_every_key_whole_under_keys() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api.get("/artifactory/api/security/keys/trusted").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json(), json!({"keys": []}));
    let r = api
        .post(
            "/artifactory/api/security/keys/trusted",
            json!({"alias": "k1", "public_key": "", "key": include_str!("testdata/gpg-ed25519.asc")}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let created = r.json();
    let r = api.get("/artifactory/api/security/keys/trusted").await;
    let keys = r.json()["keys"].as_array().cloned().expect("keys");
    assert_eq!(keys.len(), 1, "{keys:?}");
    let k = entry(&keys, "alias", "k1");
    for member in [
        "kid",
        "alias",
        "key",
        "fingerprint",
        "issued_on",
        "issued_by",
        "valid_until",
    ] {
        assert!(k.get(member).is_some(), "{member} missing: {k}");
    }
    assert_eq!(k["kid"], created["kid"], "{k}");
    assert_eq!(k["fingerprint"], created["fingerprint"], "{k}");
}
