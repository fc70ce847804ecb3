//! The repository API over HTTP: server-side defaults for every class and package type,
//! partial updates, write-only secrets, virtual and federated members, list filters, the
//! all-configurations list, deletes, and project attachment.

use crate::common::{Api, start};
use jfrog_sim::services::artifactory::repositories::spec::{RClass, all_pairs};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn minimal_body(rclass: RClass, package_type: &str) -> Value {
    let mut b = json!({"rclass": rclass.as_str(), "packageType": package_type});
    if rclass == RClass::Remote {
        b["url"] = json!("https://upstream.example.com/repo");
    }
    if package_type == "hex" {
        b["primaryKeyPairRef"] = json!("hex-keys");
        b["hexPublicKey"] = json!("-----BEGIN PUBLIC KEY-----");
    }
    b
}

#[tokio::test]
async fn every_class_and_package_type_gets_server_defaults() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let pairs = all_pairs();
    assert!(pairs.len() >= 140, "{}", pairs.len());
    for (rclass, pt) in &pairs {
        let key = format!("{}-{}", pt, rclass.as_str());
        let r = api.create(&key, minimal_body(*rclass, pt)).await;
        assert_eq!(r.status, StatusCode::OK, "{key}: {}", r.text);
        let got = api.repo(&key).await.json();
        assert_eq!(got["key"], key.as_str());
        assert_eq!(got["rclass"], rclass.as_str());
        assert_eq!(got["packageType"], *pt);
        assert!(
            got["repoLayoutRef"]
                .as_str()
                .is_some_and(|l| l.ends_with("-default")),
            "{key}: {got}"
        );
        assert_eq!(got["includesPattern"], "**/*", "{key}");
        assert_eq!(got["description"], "", "{key}");
        assert_eq!(got["environments"], json!([]), "{key}");
        assert!(got.get("projectKey").is_none(), "{key}");
        match rclass {
            RClass::Local => assert_eq!(got["xrayIndex"], false, "{key}"),
            RClass::Remote => {
                assert_eq!(got["storeArtifactsLocally"], true, "{key}");
                assert_eq!(got["retrievalCachePeriodSecs"], 7200, "{key}");
                assert_eq!(
                    got["contentSynchronisation"]["statistics"]["enabled"], false,
                    "{key}"
                );
            }
            RClass::Virtual => assert_eq!(got["repositories"], json!([]), "{key}"),
            RClass::Federated => {
                let own = format!("{}/artifactory/{key}", sim.url());
                assert_eq!(
                    got["members"],
                    json!([{"url": own, "enabled": true}]),
                    "{key}"
                );
            }
        }
    }
    assert_eq!(sim.repository_count(), pairs.len());
}

#[tokio::test]
async fn package_specific_defaults() {
    let sim = start().await;
    let api = Api::admin(&sim);
    api.create(
        "mvn-local",
        json!({"rclass": "local", "packageType": "maven"}),
    )
    .await;
    let m = api.repo("mvn-local").await.json();
    assert_eq!(m["repoLayoutRef"], "maven-2-default");
    assert_eq!(m["snapshotVersionBehavior"], "unique");
    assert_eq!(m["suppressPomConsistencyChecks"], false);
    api.create(
        "gradle-local",
        json!({"rclass": "local", "packageType": "gradle"}),
    )
    .await;
    assert_eq!(
        api.repo("gradle-local").await.json()["suppressPomConsistencyChecks"],
        true
    );
    api.create(
        "docker-local",
        json!({"rclass": "local", "packageType": "docker"}),
    )
    .await;
    let d = api.repo("docker-local").await.json();
    assert_eq!(
        (
            d["dockerApiVersion"].clone(),
            d["blockPushingSchema1"].clone()
        ),
        (json!("V2"), json!(true))
    );
    api.create(
        "docker1-local",
        json!({"rclass": "local", "packageType": "docker", "dockerApiVersion": "V1"}),
    )
    .await;
    assert_eq!(
        api.repo("docker1-local").await.json()["blockPushingSchema1"],
        false
    );
    api.create(
        "tfp-local",
        json!({"rclass": "local", "packageType": "terraform", "terraformType": "provider"}),
    )
    .await;
    assert_eq!(
        api.repo("tfp-local").await.json()["repoLayoutRef"],
        "terraform-provider-default"
    );
    // A remote npm repository has a default URL.
    assert_eq!(
        api.create(
            "npm-remote",
            json!({"rclass": "remote", "packageType": "npm"})
        )
        .await
        .status,
        StatusCode::OK
    );
    assert_eq!(
        api.repo("npm-remote").await.json()["url"],
        "https://registry.npmjs.org/"
    );
    // Virtual maven: server-defaulted fields for late initialisation.
    api.create(
        "mvn-virtual",
        json!({"rclass": "virtual", "packageType": "maven"}),
    )
    .await;
    let v = api.repo("mvn-virtual").await.json();
    assert_eq!(
        v["pomRepositoryReferencesCleanupPolicy"],
        "discard_active_reference"
    );
    assert_eq!(v["forceMavenAuthentication"], false);
    // An empty layout means the default layout.
    api.create(
        "go-local",
        json!({"rclass": "local", "packageType": "go", "repoLayoutRef": ""}),
    )
    .await;
    assert_eq!(
        api.repo("go-local").await.json()["repoLayoutRef"],
        "go-default"
    );
    // null means the default.
    api.create(
        "null-local",
        json!({"rclass": "local", "xrayIndex": null, "includesPattern": null}),
    )
    .await;
    assert_eq!(
        api.repo("null-local").await.json()["includesPattern"],
        "**/*"
    );
    // Missing packageType means generic.
    api.create("plain-local", json!({"rclass": "local"})).await;
    assert_eq!(
        api.repo("plain-local").await.json()["packageType"],
        "generic"
    );
}

/// Remote `aieditorextensions` as JFrog's Terraform resource for it models the repository
/// (jfrog/terraform-provider-artifactory PR #1450,
/// `remote/resource_artifactory_remote_aieditorextensions_repository.go`): external
/// dependencies on by default with the vsassets.io pattern, token authentication, the
/// curation and generic members, HEAD requests bypassed, `url` required, and patterns stored
/// whether external dependencies are enabled or not.
#[tokio::test]
async fn remote_aieditorextensions_follows_jfrogs_resource() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let gallery = "https://marketplace.visualstudio.com/_apis/public/gallery";
    let r = api
        .create(
            "vsx-remote",
            json!({"rclass": "remote", "packageType": "aieditorextensions"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert_eq!(r.art_error(), "Remote URL '' is not valid");
    let r = api
        .create(
            "vsx-remote",
            json!({"rclass": "remote", "packageType": "aieditorextensions", "url": gallery}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api.repo("vsx-remote").await.json();
    for (member, want) in [
        ("externalDependenciesEnabled", json!(true)),
        (
            "externalDependenciesPatterns",
            json!(["**/**vsassets.io/**"]),
        ),
        ("bypassHeadRequests", json!(true)),
        ("enableTokenAuthentication", json!(false)),
        ("propagateQueryParams", json!(false)),
        ("retrieveSha256FromServer", json!(false)),
        ("curated", json!(false)),
        ("passThrough", json!(false)),
        ("listRemoteFolderItems", json!(false)),
        ("repoLayoutRef", json!("simple-default")),
    ] {
        assert_eq!(got[member], want, "{member}: {got}");
    }
    // Every member of the resource's request struct is kept.
    let r = api
        .post(
            "/artifactory/api/repositories/vsx-remote",
            json!({
                "externalDependenciesEnabled": false,
                "externalDependenciesPatterns": ["**/**staged.example.com/**"],
                "enableTokenAuthentication": true,
                "propagateQueryParams": true,
                "retrieveSha256FromServer": true,
                "curated": true,
                "passThrough": true,
                "customHttpHeaders": [{"name": "x-team", "value": "editors"}],
            }),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api.repo("vsx-remote").await.json();
    assert_eq!(got["externalDependenciesEnabled"], false);
    assert_eq!(
        got["externalDependenciesPatterns"],
        json!(["**/**staged.example.com/**"])
    );
    for member in [
        "enableTokenAuthentication",
        "propagateQueryParams",
        "retrieveSha256FromServer",
        "curated",
        "passThrough",
    ] {
        assert_eq!(got[member], true, "{member}");
    }
    assert_eq!(got["customHttpHeaders"][0]["name"], "x-team");
    // An update that omits the patterns keeps the stored ones.
    api.post(
        "/artifactory/api/repositories/vsx-remote",
        json!({"externalDependenciesEnabled": true}),
    )
    .await;
    assert_eq!(
        api.repo("vsx-remote").await.json()["externalDependenciesPatterns"],
        json!(["**/**staged.example.com/**"])
    );
    // Other package types store them too (`TestAccRemoteHelmRepositoryDepFalse`).
    api.create(
        "helm-remote",
        json!({"rclass": "remote", "packageType": "helm", "url": "https://charts.example.com"}),
    )
    .await;
    let r = api
        .post(
            "/artifactory/api/repositories/helm-remote",
            json!({"externalDependenciesPatterns": ["**/charts.example.com/**"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn remote_password_is_write_only() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let secret = "hunter2-very-secret";
    let body = json!({"rclass": "remote", "packageType": "generic", "url": "https://example.com/files",
        "username": "u", "password": secret,
        "customHttpHeaders": [{"name": "X-Key", "value": "header-secret", "sensitive": true}, {"name": "X-Plain", "value": "p"}]});
    assert_eq!(api.create("gen-remote", body).await.status, StatusCode::OK);
    let r = api.repo("gen-remote").await;
    assert!(
        !r.text.contains(secret) && !r.text.contains("header-secret"),
        "{}",
        r.text
    );
    let got = r.json();
    let enc = got["password"].as_str().unwrap();
    assert!(enc.starts_with("JE2") && enc != secret);
    assert_eq!(got["customHttpHeaders"][1]["value"], "p");
    let all = api
        .get("/artifactory/api/repositories/configurations")
        .await;
    assert!(!all.text.contains(secret));
    assert!(!format!("{:?}", sim.repository("gen-remote")).contains(secret));
    // Stored in clear, and an update without the password keeps it.
    assert_eq!(
        sim.repository_raw("gen-remote").unwrap()["password"],
        secret
    );
    api.post(
        "/artifactory/api/repositories/gen-remote",
        json!({"description": "d"}),
    )
    .await;
    assert_eq!(
        sim.repository_raw("gen-remote").unwrap()["password"],
        secret
    );
    // A new password changes the encrypted form.
    api.post(
        "/artifactory/api/repositories/gen-remote",
        json!({"password": "other"}),
    )
    .await;
    assert_ne!(
        api.repo("gen-remote").await.json()["password"].as_str(),
        Some(enc)
    );
    // An empty password removes it.
    api.post(
        "/artifactory/api/repositories/gen-remote",
        json!({"password": ""}),
    )
    .await;
    assert!(
        api.repo("gen-remote")
            .await
            .json()
            .get("password")
            .is_none()
    );
}

#[tokio::test]
async fn update_is_partial_and_guards_class_and_type() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let body = json!({"rclass": "local", "packageType": "npm", "description": "first", "xrayIndex": true, "notes": "n"});
    api.create("npm-local", body).await;
    let r = api
        .post(
            "/artifactory/api/repositories/npm-local",
            json!({"description": "second"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.text, "Repository 'npm-local' update successful.");
    let got = api.repo("npm-local").await.json();
    assert_eq!(
        (
            got["description"].clone(),
            got["xrayIndex"].clone(),
            got["notes"].clone()
        ),
        (json!("second"), json!(true), json!("n"))
    );
    // null resets to the server default.
    api.post(
        "/artifactory/api/repositories/npm-local",
        json!({"xrayIndex": null}),
    )
    .await;
    assert_eq!(api.repo("npm-local").await.json()["xrayIndex"], false);
    let r = api
        .post(
            "/artifactory/api/repositories/npm-local",
            json!({"rclass": "remote"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.art_error().contains("rclass cannot be changed"));
    let r = api
        .post(
            "/artifactory/api/repositories/npm-local",
            json!({"packageType": "maven"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        r.art_error(),
        "Changing a repository's type once it's set is not supported"
    );
    let r = api
        .post(
            "/artifactory/api/repositories/npm-local",
            json!({"xrayIndex": "yes"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        r.art_error(),
        "Invalid value for 'xrayIndex': expected a boolean"
    );
    // The rejected updates changed nothing.
    assert_eq!(api.repo("npm-local").await.json()["description"], "second");
    let r = api
        .post(
            "/artifactory/api/repositories/missing",
            json!({"description": "x"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.art_error(), "Repository 'missing' not found");
}

#[tokio::test]
async fn virtual_members_are_checked_and_follow_deletes() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for (k, c) in [("a-local", "local"), ("b-local", "local")] {
        api.create(k, json!({"rclass": c, "packageType": "npm"}))
            .await;
    }
    api.create(
        "c-remote",
        json!({"rclass": "remote", "packageType": "npm"}),
    )
    .await;
    api.create(
        "mvn-local",
        json!({"rclass": "local", "packageType": "maven"}),
    )
    .await;
    let r = api
        .create(
            "v",
            json!({"rclass": "virtual", "packageType": "npm", "repositories": ["a-local", "nope"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.art_error(), "Repository 'nope' does not exist");
    let r = api
        .create(
            "v",
            json!({"rclass": "virtual", "packageType": "npm", "repositories": ["mvn-local"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.art_error().contains("cannot be included"));
    let body = json!({"rclass": "virtual", "packageType": "npm", "repositories": ["b-local", "a-local", "c-remote"], "defaultDeploymentRepo": "a-local"});
    assert_eq!(api.create("npm-virtual", body).await.status, StatusCode::OK);
    let got = api.repo("npm-virtual").await.json();
    assert_eq!(
        got["repositories"],
        json!(["b-local", "a-local", "c-remote"]),
        "order is kept"
    );
    assert_eq!(got["defaultDeploymentRepo"], "a-local");
    // An empty default on update keeps it; a non-member key clears it (the Terraform trick).
    api.post(
        "/artifactory/api/repositories/npm-virtual",
        json!({"defaultDeploymentRepo": ""}),
    )
    .await;
    assert_eq!(
        api.repo("npm-virtual").await.json()["defaultDeploymentRepo"],
        "a-local"
    );
    api.post(
        "/artifactory/api/repositories/npm-virtual",
        json!({"defaultDeploymentRepo": "non-existant-value-42"}),
    )
    .await;
    assert!(
        api.repo("npm-virtual")
            .await
            .json()
            .get("defaultDeploymentRepo")
            .is_none()
    );
    // Cycles are refused.
    api.create(
        "outer-virtual",
        json!({"rclass": "virtual", "packageType": "npm", "repositories": ["npm-virtual"]}),
    )
    .await;
    let r = api
        .post(
            "/artifactory/api/repositories/npm-virtual",
            json!({"repositories": ["outer-virtual"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.art_error().contains("cycle"));
    // A generic virtual aggregates anything.
    let r = api
        .create(
            "gen-virtual",
            json!({"rclass": "virtual", "repositories": ["mvn-local", "a-local"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // Deleting a member removes it from the virtual repositories.
    let r = api.delete("/artifactory/api/repositories/a-local").await;
    assert_eq!(
        r.text,
        "Repository 'a-local' and all its content have been removed successfully."
    );
    assert_eq!(
        api.repo("npm-virtual").await.json()["repositories"],
        json!(["b-local", "c-remote"])
    );
    assert_eq!(
        api.repo("gen-virtual").await.json()["repositories"],
        json!(["mvn-local"])
    );
    let r = api
        .delete("/artifactory/api/repositories/gen-virtual")
        .await;
    assert_eq!(
        r.text,
        "Repository 'gen-virtual' has been removed successfully."
    );
    let r = api
        .delete("/artifactory/api/repositories/gen-virtual")
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn federated_members() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let body = json!({"rclass": "federated", "packageType": "generic",
        "members": [{"url": "https://other.example.com/artifactory/fed-local", "enabled": true}]});
    assert_eq!(api.create("fed-local", body).await.status, StatusCode::OK);
    let got = api.repo("fed-local").await.json();
    let own = format!("{}/artifactory/fed-local", sim.url());
    assert_eq!(
        got["members"],
        json!([{"url": own, "enabled": true}, {"url": "https://other.example.com/artifactory/fed-local", "enabled": true}])
    );
    let r = api
        .create(
            "fed2-local",
            json!({"rclass": "federated", "members": [{"url": "not a url"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.art_error(), "Invalid federated member URL 'not a url'");
}

#[tokio::test]
async fn list_filters_and_all_configurations() {
    let sim = start().await;
    let api = Api::admin(&sim);
    api.create(
        "alpine-local",
        json!({"rclass": "local", "packageType": "alpine", "description": "apk"}),
    )
    .await;
    api.create(
        "proj-npm-local",
        json!({"rclass": "local", "packageType": "npm", "projectKey": "proj"}),
    )
    .await;
    api.create(
        "npm-remote",
        json!({"rclass": "remote", "packageType": "npm"}),
    )
    .await;
    api.create(
        "npm-virtual",
        json!({"rclass": "virtual", "packageType": "npm"}),
    )
    .await;
    api.create(
        "gen-fed",
        json!({"rclass": "federated", "packageType": "generic"}),
    )
    .await;
    let keys = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| e["key"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = api.get("/artifactory/api/repositories").await.json();
    assert_eq!(
        keys(all.clone()),
        [
            "alpine-local",
            "proj-npm-local",
            "npm-remote",
            "npm-virtual",
            "gen-fed"
        ]
    );
    let alpine = &all[0];
    assert_eq!(alpine["type"], "LOCAL");
    assert_eq!(alpine["packageType"], "Alpine");
    assert_eq!(alpine["description"], "apk");
    assert_eq!(
        alpine["url"],
        format!("{}/artifactory/alpine-local", sim.url())
    );
    assert_eq!(all[2]["url"], "https://registry.npmjs.org/");
    let q = |s: &str| format!("/artifactory/api/repositories?{s}");
    assert_eq!(
        keys(api.get(&q("type=local")).await.json()),
        ["alpine-local", "proj-npm-local"]
    );
    assert_eq!(
        keys(api.get(&q("type=REMOTE")).await.json()),
        ["npm-remote"]
    );
    assert_eq!(
        keys(api.get(&q("packageType=npm")).await.json()),
        ["proj-npm-local", "npm-remote", "npm-virtual"]
    );
    assert_eq!(
        keys(api.get(&q("type=local&packageType=npm")).await.json()),
        ["proj-npm-local"]
    );
    assert_eq!(
        keys(api.get(&q("project=proj")).await.json()),
        ["proj-npm-local"]
    );
    assert_eq!(
        keys(
            api.get(&q("type=federated&packageType=generic"))
                .await
                .json()
        ),
        ["gen-fed"]
    );
    assert!(keys(api.get(&q("type=virtual&packageType=maven")).await.json()).is_empty());
    let r = api.get(&q("type=bogus")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(keys(api.get(&q("type=distribution")).await.json()).is_empty());
    assert_eq!(all[1]["description"], "", "description is always listed");
    let conf = api
        .get("/artifactory/api/repositories/configurations")
        .await
        .json();
    let groups: Vec<&str> = conf
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        groups,
        ["LOCAL", "REMOTE", "VIRTUAL", "FEDERATED", "RELEASE_BUNDLE"]
    );
    assert_eq!(conf["LOCAL"].as_array().unwrap().len(), 2);
    assert_eq!(conf["LOCAL"][1]["projectKey"], "proj");
    assert_eq!(conf["LOCAL"][1]["environments"], json!(["DEV"]));
    assert_eq!(conf["REMOTE"][0]["rclass"], "remote");
    assert_eq!(conf["REMOTE"][0]["socketTimeoutMillis"], 15000);
    assert_eq!(conf["VIRTUAL"][0]["key"], "npm-virtual");
    assert_eq!(conf["FEDERATED"][0]["key"], "gen-fed");
}

#[tokio::test]
async fn project_assignment() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create(
            "other-local",
            json!({"rclass": "local", "projectKey": "proj"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        r.art_error(),
        "Repository key 'other-local' must start with the project key prefix 'proj-'"
    );
    let r = api
        .create("P-local", json!({"rclass": "local", "projectKey": "P"}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let body = json!({"rclass": "local", "projectKey": "proj", "environments": ["PROD"]});
    assert_eq!(api.create("proj-local", body).await.status, StatusCode::OK);
    assert_eq!(
        api.repo("proj-local").await.json()["environments"],
        json!(["PROD"])
    );
    // A create without a project ignores environments.
    api.create(
        "plain-local",
        json!({"rclass": "local", "environments": ["PROD"]}),
    )
    .await;
    assert_eq!(
        api.repo("plain-local").await.json()["environments"],
        json!([])
    );
    // An update does not move a repository between projects; Access attach/detach does.
    api.post(
        "/artifactory/api/repositories/plain-local",
        json!({"projectKey": "proj"}),
    )
    .await;
    assert!(
        api.repo("plain-local")
            .await
            .json()
            .get("projectKey")
            .is_none()
    );
    // Attaching needs the project.
    let r = api
        .put(
            "/access/api/v1/projects/_/attach/repositories/plain-local/proj",
            json!({}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = api
        .post(
            "/access/api/v1/projects",
            json!({"project_key": "proj", "display_name": "Proj", "admin_privileges": {}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .put(
            "/access/api/v1/projects/_/attach/repositories/plain-local/proj",
            json!({}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let got = api.repo("plain-local").await.json();
    assert_eq!(
        (got["projectKey"].clone(), got["environments"].clone()),
        (json!("proj"), json!(["DEV"]))
    );
    let r = api
        .delete("/access/api/v1/projects/_/attach/repositories/plain-local")
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert!(
        api.repo("plain-local")
            .await
            .json()
            .get("projectKey")
            .is_none()
    );
    let r = api
        .delete("/access/api/v1/projects/_/attach/repositories/missing")
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.json()["errors"][0]["code"], "NOT_FOUND");
}

#[tokio::test]
async fn direct_changes_are_visible_through_the_api() {
    let sim = start().await;
    let api = Api::admin(&sim);
    api.create(
        "drift-local",
        json!({"rclass": "local", "description": "desired"}),
    )
    .await;
    let mut raw = sim.repository_raw("drift-local").unwrap();
    raw["description"] = json!("changed in JFrog");
    assert!(sim.put_repository_raw("drift-local", raw));
    assert_eq!(
        api.repo("drift-local").await.json()["description"],
        "changed in JFrog"
    );
    assert!(sim.delete_repository_raw("drift-local"));
    assert_eq!(api.repo("drift-local").await.status, StatusCode::NOT_FOUND);
    assert!(!sim.put_repository_raw("x", json!({"no": "rclass"})));
}

async fn list_descriptions(api: &Api) -> Vec<String> {
    let list = api
        .get("/artifactory/api/repositories?type=local")
        .await
        .json();
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["description"].as_str().unwrap().to_owned())
        .collect()
}

/// Polls until `check` holds (generous deadline; no timing assertion).
async fn eventually<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "condition never held");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn read_after_write_lag_shows_the_previous_state_for_a_while() {
    let sim = start().await;
    let api = Api::admin(&sim);
    // A lag far longer than the checks below take, so that they see the stale state.
    sim.set_read_after_write_lag(std::time::Duration::from_secs(30));
    assert_eq!(
        api.create("lag-local", json!({"rclass": "local", "description": "v1"}))
            .await
            .status,
        StatusCode::OK
    );
    // Not visible yet, but it exists for writes.
    assert_eq!(api.repo("lag-local").await.status, StatusCode::NOT_FOUND);
    assert!(list_descriptions(&api).await.is_empty());
    assert!(
        api.get("/artifactory/api/repositories/configurations")
            .await
            .json()["LOCAL"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let r = api.create("lag-local", json!({"rclass": "local"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        sim.repository("lag-local").is_some(),
        "direct state access is not lagged"
    );
    // Turning the lag off shows the current state at once.
    sim.set_read_after_write_lag(std::time::Duration::ZERO);
    assert_eq!(api.repo("lag-local").await.json()["description"], "v1");
    // An update and a delete are seen late too.
    sim.set_read_after_write_lag(std::time::Duration::from_secs(30));
    api.post(
        "/artifactory/api/repositories/lag-local",
        json!({"description": "v2"}),
    )
    .await;
    assert_eq!(api.repo("lag-local").await.json()["description"], "v1");
    assert_eq!(list_descriptions(&api).await, ["v1"]);
    api.delete("/artifactory/api/repositories/lag-local").await;
    assert_eq!(api.repo("lag-local").await.json()["description"], "v1");
    sim.set_read_after_write_lag(std::time::Duration::ZERO);
    assert_eq!(api.repo("lag-local").await.status, StatusCode::NOT_FOUND);
    assert!(list_descriptions(&api).await.is_empty());
    // A short lag passes by itself.
    sim.set_read_after_write_lag(std::time::Duration::from_millis(200));
    api.create(
        "lag2-local",
        json!({"rclass": "local", "description": "late"}),
    )
    .await;
    eventually(|| async { api.repo("lag2-local").await.status == StatusCode::OK }).await;
    assert_eq!(list_descriptions(&api).await, ["late"]);
}
