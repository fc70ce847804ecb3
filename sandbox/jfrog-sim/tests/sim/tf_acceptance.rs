//! Behaviours JFrog's Terraform provider for Artifactory (v12.11.x) relies on in its
//! acceptance tests, run unchanged against the simulator. Each test names its source.

use crate::common::{Api, start};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn policy_body(key: &str) -> Value {
    json!({
        "key": key,
        "cronExp": "0 0 2 ? * MON-SAT *",
        "durationInMinutes": 60,
        "skipTrashcan": false,
        "searchCriteria": {
            "packageTypes": ["docker"],
            "repos": ["**"],
            "includedPackages": ["**"],
            "createdBeforeInMonths": 6
        }
    })
}

/// `pkg/artifactory/resource/configuration/resource_artifactory_package_cleanup_policy.go`
/// (and `resource_artifactory_archive_policy.go`,
/// `resource_artifactory_release_bundles_cleanup_policy_v2.go`): the create omits `enabled`
/// (`json:"enabled,omitempty"`, never set by `toAPIModel`), then `POST
/// .../policies/{key}/enablement` with `{"enabled": true}`; the schema's `enabled`: "A cleanup
/// policy must be created inactive ... If set to `true` ... the API call will fail". JFrog's
/// "Update a Package-Level Cleanup Policy API": `enabled` "change only with enable/disable API".
#[tokio::test]
async fn policies_are_created_disabled_and_toggled_by_the_enablement_call() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for base in [
        "/artifactory/api/cleanup/packages/policies",
        "/artifactory/api/cleanup/bundles/policies",
        "/artifactory/api/archive/v2/packages/policies",
    ] {
        let item = format!("{base}/p1");
        let r = api.post(&item, policy_body("p1")).await;
        assert_eq!(r.status, StatusCode::CREATED, "{base}: {}", r.text);
        let got = api.get(&item).await;
        assert_eq!(got.json()["enabled"], false, "{base}: {}", got.text);

        let mut on = policy_body("p2");
        on["enabled"] = json!(true);
        let r = api.post(&format!("{base}/p2"), on).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{base}: {}", r.text);

        let en = format!("{item}/enablement");
        let r = api.post(&en, json!({"enabled": true})).await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        assert_eq!(api.get(&item).await.json()["enabled"], true, "{base}");

        // An update keeps `enabled` whatever it sends.
        let mut upd = policy_body("p1");
        upd["enabled"] = json!(false);
        upd["durationInMinutes"] = json!(90);
        let r = api.put(&item, upd).await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        let got = api.get(&item).await.json();
        assert_eq!(
            (got["enabled"].clone(), got["durationInMinutes"].clone()),
            (json!(true), json!(90))
        );

        let r = api.post(&en, json!({"enabled": false})).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(api.get(&item).await.json()["enabled"], false);
        let r = api
            .post(&format!("{base}/nope/enablement"), json!({"enabled": true}))
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{base}");
        // Delete answers 200, the only status JFrog's provider takes
        // (`resource_artifactory_archive_policy.go`,
        // `resource_artifactory_package_cleanup_policy.go`, Delete; the 18
        // `TestAccPackageCleanupPolicy_*`/`TestAccReleaseBundleV2Cleanup_*` destroys).
        let r = api.call(Method::DELETE, &item, None).await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        assert_eq!(api.get(&item).await.status, StatusCode::NOT_FOUND, "{base}");
    }
}

/// `pkg/artifactory/datasource/repository/datasource_artifactory_repositories.go` lists
/// repositories at `artifactory/api/repositories/` (trailing slash) with `?type=` and
/// `?packageType=` (`TestAccDataSourceRepositories`): the same list as without the slash.
#[tokio::test]
async fn the_repositories_list_answers_on_the_slash_path() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create(
            "gen-local",
            json!({"rclass": "local", "packageType": "generic"}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let plain = api
        .get("/artifactory/api/repositories?type=local")
        .await
        .json();
    let slash = api.get("/artifactory/api/repositories/?type=local").await;
    assert_eq!(slash.status, StatusCode::OK, "{}", slash.text);
    assert_eq!(slash.json(), plain);
    assert!(plain.to_string().contains("gen-local"), "{plain}");
}

/// `pkg/artifactory/resource/lifecycle/resource_artifactory_release_bundle_v2_test.go`
/// (`uploadBuild`: `PUT artifactory/api/build[?project=]` with `{version, name, number,
/// started, modules}`; `deleteBuild`: `POST artifactory/api/build/delete` with `{buildName,
/// buildRepo, deleteAll}`); JFrog REST API "Build Upload", "All Builds", "Build Runs",
/// "Build Info" for the read shapes.
#[tokio::test]
async fn a_build_info_upload_is_read_listed_and_deleted() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let build = json!({
        "version": "1.0.1", "name": "b1", "number": "7",
        "started": "2026-01-02T03:04:05.000+0000",
        "modules": [{"id": "org.jfrog.test:multi1:3.7-SNAPSHOT",
                     "artifacts": [{"type": "jar", "name": "multi1-3.7-SNAPSHOT.jar",
                                    "sha1": "f142780623aed30ba41d15a8db1ec24da8fd67e8"}]}]
    });
    let r = api.put("/artifactory/api/build", build.clone()).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = api
        .put("/artifactory/api/build?project=proj", build.clone())
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let all = api.get("/artifactory/api/build").await.json();
    assert_eq!(all["builds"][0]["uri"], "/b1", "{all}");
    let runs = api.get("/artifactory/api/build/b1").await.json();
    assert_eq!(runs["buildsNumbers"][0]["uri"], "/7", "{runs}");
    let info = api.get("/artifactory/api/build/b1/7").await.json();
    assert_eq!(info["buildInfo"]["modules"], build["modules"]);
    let r = api
        .post(
            "/artifactory/api/build/delete",
            json!({"buildName": "b1", "deleteAll": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.get("/artifactory/api/build/b1/7").await.status,
        StatusCode::NOT_FOUND
    );
    // The project's build stays until deleted from its build-info repository.
    assert_eq!(
        api.get("/artifactory/api/build/b1/7?project=proj")
            .await
            .status,
        StatusCode::OK
    );
    let r = api
        .post(
            "/artifactory/api/build/delete",
            json!({"buildName": "b1", "buildRepo": "proj-build-info", "deleteAll": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        api.get("/artifactory/api/build/b1/7?project=proj")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

/// `pkg/acctest/test.go` (`PreCheck`: `PUT /artifactory/api/system/configuration/baseUrl`,
/// `Content-Type: text/plain`, the platform URL as body) and
/// `pkg/artifactory/resource/repository/federated/resource_artifactory_federated_repository_test.go`
/// (the member `{JFROG_URL}/artifactory/{key}` is the repository itself).
#[tokio::test]
async fn the_custom_base_url_names_a_federated_repository_itself() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .text(
            Method::PUT,
            "/artifactory/api/system/configuration/baseUrl",
            "text/plain",
            "https://art.example.test",
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = api
        .create(
            "fed1",
            json!({"rclass": "federated", "packageType": "generic"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let repo = api.repo("fed1").await.json();
    assert_eq!(
        repo["members"],
        json!([{"url": "https://art.example.test/artifactory/fed1", "enabled": true}])
    );
}

/// `pkg/artifactory/resource/configuration/resource_artifactory_general_security.go` (read:
/// `GET artifactory/api/securityconfig` into `SecurityAPIModel`: `anonAccessEnabled`,
/// `passwordSettings.encryptionPolicy`), `resource_artifactory_oauth_settings.go` (read:
/// `GET artifactory/api/oauth` into `OauthSettings`: `enabled`, `persistUsers`,
/// `allowUserToAccessProfile`, `providers`), and the providers' `SendUsage` (`POST
/// artifactory/api/system/usage`).
#[tokio::test]
async fn security_config_oauth_and_usage_answer() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let sec = api.get("/artifactory/api/securityconfig").await.json();
    assert_eq!(sec["anonAccessEnabled"], false);
    assert_eq!(sec["passwordSettings"]["encryptionPolicy"], "SUPPORTED");
    let o = api.get("/artifactory/api/oauth").await.json();
    assert_eq!(
        (o["enabled"].clone(), o["providers"].clone()),
        (json!(false), json!([]))
    );
    let yaml = "security:\n  oauthSettings:\n    enableIntegration: true\n    oauthProvidersSettings:\n      kc:\n        enabled: true\n        providerType: openId\n        id: foo\n        secret: bar\n        apiUrl: https://kc.example/userinfo\n        authUrl: https://kc.example/auth\n        tokenUrl: https://kc.example/token\n";
    let r = api
        .text(
            Method::PATCH,
            "/artifactory/api/system/configuration",
            "application/yaml",
            yaml,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let o = api.get("/artifactory/api/oauth").await.json();
    assert_eq!(o["enabled"], true);
    assert_eq!(o["providers"][0]["name"], "kc");
    assert_eq!(o["providers"][0]["providerType"], "openId");
    assert!(o["providers"][0].get("secret").is_none(), "{o}");
    let r = api
        .post(
            "/artifactory/api/system/usage",
            json!({"productId": "terraform-provider-artifactory/12.11.7", "features": [{"featureId": "Partner/ACC-007450"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// `pkg/artifactory/resource/webhook/resource_artifactory_webhook.go`: the handler's
/// `use_secret_for_signing` is optional and not computed, and a read leaves it null when the
/// answer lacks it (`UseSecretForSigning *bool ... omitempty`); an answer with `false` that
/// was never sent makes the provider's result inconsistent with the plan.
#[tokio::test]
async fn a_webhook_handler_answers_use_secret_for_signing_only_when_sent() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let sub = |key: &str, handler: Value| {
        json!({
            "key": key,
            "event_filter": {"domain": "artifact", "event_types": ["deployed"],
                             "criteria": {"anyLocal": true, "anyRemote": false, "anyFederated": false,
                                          "repoKeys": [], "includePatterns": [], "excludePatterns": []}},
            "handlers": [handler]
        })
    };
    let r = api
        .post(
            "/event/api/v1/subscriptions",
            sub(
                "w1",
                json!({"handler_type": "webhook", "url": "https://h.example/x"}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let got = api.get("/event/api/v1/subscriptions/w1").await.json();
    assert!(
        got["handlers"][0].get("use_secret_for_signing").is_none(),
        "{got}"
    );
    let r = api
        .post(
            "/event/api/v1/subscriptions",
            sub("w2", json!({"handler_type": "webhook", "url": "https://h.example/x", "use_secret_for_signing": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let got = api.get("/event/api/v1/subscriptions/w2").await.json();
    assert_eq!(got["handlers"][0]["use_secret_for_signing"], true);
}

async fn security_group(api: &Api, method: Method, name: &str, body: Value) -> StatusCode {
    api.call(
        method,
        &format!("/artifactory/api/security/groups/{name}"),
        Some(body),
    )
    .await
    .status
}

/// `pkg/artifactory/resource/security/resource_artifactory_group.go` (Update: a group whose
/// `users_names` Terraform does not manage is updated with `POST` and `"userNames": []`,
/// which "prevents removing users"; Read asks `?includeUsers=` for the members) and
/// `pkg/artifactory/resource/user/user.go` (memberships changed through the user API, `PATCH
/// /access/api/v2/users/{name}/groups`): both sides show one relation.
#[tokio::test]
async fn group_members_survive_an_update_and_follow_the_user_api() {
    let sim = start().await;
    let api = Api::admin(&sim);
    assert_eq!(
        security_group(&api, Method::PUT, "g1", json!({"name": "g1"})).await,
        StatusCode::CREATED
    );
    let r = api
        .put(
            "/artifactory/api/security/users/u1",
            json!({"email": "u1@example.com", "password": "Passw0rd!x", "groups": ["g1"]}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let g = api
        .get("/artifactory/api/security/groups/g1?includeUsers=true")
        .await
        .json();
    assert_eq!(g["userNames"], json!(["u1"]), "{g}");

    let st = security_group(
        &api,
        Method::POST,
        "g1",
        json!({"name": "g1", "description": "d", "userNames": []}),
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    let g = api
        .get("/artifactory/api/security/groups/g1?includeUsers=true")
        .await
        .json();
    assert_eq!(
        (g["userNames"].clone(), g["description"].clone()),
        (json!(["u1"]), json!("d"))
    );

    // A group's PUT with members replaces them, on the users' side too.
    assert_eq!(
        security_group(&api, Method::PUT, "g2", json!({"userNames": ["u1"]})).await,
        StatusCode::CREATED
    );
    let u = api.get("/artifactory/api/security/users/u1").await.json();
    assert_eq!(u["groups"], json!(["g1", "g2"]), "{u}");
}

/// `pkg/artifactory/resource/user/resource_artifactory_user_test.go` (`TestAccUser_full_groups`:
/// its last step takes the user out of a group and destroys that group) with
/// `resource_artifactory_group.go` (Delete): a deleted group leaves its users' `groups`, so
/// the user's next update does not name a missing group.
#[tokio::test]
async fn deleting_a_group_removes_it_from_its_users() {
    let sim = start().await;
    let api = Api::admin(&sim);
    assert_eq!(
        security_group(&api, Method::PUT, "gone", json!({})).await,
        StatusCode::CREATED
    );
    let r = api
        .put(
            "/artifactory/api/security/users/u2",
            json!({"email": "u2@example.com", "password": "Passw0rd!x", "groups": ["gone"]}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let r = api.delete("/artifactory/api/security/groups/gone").await;
    assert_eq!(r.status, StatusCode::OK);
    let u = api.get("/artifactory/api/security/users/u2").await.json();
    assert_eq!(u["groups"], json!([]), "{u}");
    let r = api
        .post(
            "/artifactory/api/security/users/u2",
            json!({"email": "u2b@example.com"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// `pkg/artifactory/datasource/security/datasource_artifactory_group_test.go`
/// (`TestAccGroup_basic_datasource`: a group `PUT` through the security API with realm
/// "Realm name internal" reads back "realm name internal").
#[tokio::test]
async fn a_group_realm_is_kept_in_lower_case() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let status = security_group(
        &api,
        Method::PUT,
        "realm-group",
        json!({"name": "realm-group", "realm": "Realm name internal",
               "realmAttributes": "Realm attributes for use by internal"}),
    )
    .await;
    assert!(status.is_success(), "{status}");
    let g = api
        .get("/artifactory/api/security/groups/realm-group")
        .await
        .json();
    assert_eq!(g["realm"], "realm name internal", "{g}");
    assert_eq!(
        g["realmAttributes"], "Realm attributes for use by internal",
        "{g}"
    );
}

async fn upload_certificate(api: &Api, alias: &str, pem: &str) -> StatusCode {
    api.text(
        Method::POST,
        &format!("/artifactory/api/system/security/certificates/{alias}"),
        "text/plain",
        pem,
    )
    .await
    .status
}

/// `pkg/artifactory/resource/security/resource_artifactory_certificate_test.go` (the uploaded
/// certificate's `fingerprint` is its SHA-256 in upper-case pairs, `issued_on` / `valid_until`
/// its validity, `issued_by` / `issued_to` "Unknown" for a certificate without a common name)
/// and `resource_artifactory_certificate.go` (`CertificateAPIModel`). The test certificates
/// were made with `openssl req -x509`; the expected values are `openssl x509 -fingerprint
/// -sha256 -dates`'s.
#[tokio::test]
async fn certificate_metadata_is_the_certificates_own() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let st = upload_certificate(&api, "c1", include_str!("testdata/cert-cn.pem")).await;
    assert_eq!(st, StatusCode::OK);
    let st = upload_certificate(&api, "c2", include_str!("testdata/cert-no-cn.pem")).await;
    assert_eq!(st, StatusCode::OK);
    let list = api
        .get("/artifactory/api/system/security/certificates")
        .await
        .json();
    let find = |a: &str| {
        list.as_array()
            .and_then(|l| l.iter().find(|c| c["certificateAlias"] == a).cloned())
            .unwrap_or_else(|| panic!("{a} in {list}"))
    };
    let c1 = find("c1");
    assert_eq!(
        c1["fingerprint"],
        "D4:A5:FC:43:51:07:41:0F:E7:8D:66:05:69:62:83:6D:05:61:01:86:34:E9:A5:68:1D:54:F3:F2:34:02:4E:5C"
    );
    assert_eq!(c1["issuedBy"], "sim.example.test");
    assert_eq!(c1["issuedTo"], "sim.example.test");
    assert_eq!(c1["issuedOn"], "2026-12-06T08:39:27.000Z");
    assert_eq!(c1["validUntil"], "2036-12-03T08:39:27.000Z");
    let c2 = find("c2");
    assert_eq!(
        c2["fingerprint"],
        "2F:C1:E0:FF:19:23:3A:0C:F3:A5:D5:EE:8B:A4:E4:73:20:A3:98:36:4E:29:5C:70:01:F0:D5:B5:19:A3:29:7B"
    );
    assert_eq!(
        (c2["issuedBy"].clone(), c2["issuedTo"].clone()),
        (json!("Unknown"), json!("Unknown"))
    );
    assert_eq!(c2["validUntil"], "2027-01-05T08:39:27.000Z");
    let st = upload_certificate(&api, "bad", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
}

/// `pkg/artifactory/resource/security/resource_artifactory_distribution_public_key_test.go`
/// (`fingerprint` the key's OpenPGP v4 fingerprint as lower-case pairs joined by `:`,
/// `issued_by` its User ID "name <email>"). The key was made with `gpg --quick-gen-key`; the
/// expected fingerprint is `gpg --fingerprint`'s.
#[tokio::test]
async fn a_distribution_public_key_answers_its_openpgp_fingerprint_and_uid() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .post(
            "/artifactory/api/security/keys/trusted",
            json!({"alias": "k1", "public_key": "", "key": include_str!("testdata/gpg-ed25519.asc")}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let k = r.json();
    assert_eq!(
        k["fingerprint"],
        "c2:50:00:d4:fe:54:70:dd:db:51:7b:13:97:0e:dd:df:fe:c1:70:e5"
    );
    assert_eq!(k["issued_by"], "Sim Tester <sim@example.test>");
}

/// `pkg/artifactory/resource/replication/resource_artifactory_local_repository_single_replication_test.go`,
/// `..._multi_replication_test.go` and `resource_artifactory_remote_repository_replication_test.go`:
/// `cron_exp = "0 0 xoxo xoxoxo * ?"` fails with `.*Invalid cronExp.*` (Artifactory's error body).
#[tokio::test]
async fn a_replication_with_an_invalid_cron_is_refused() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create("rl", json!({"rclass": "local", "packageType": "generic"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let body = |cron: &str| {
        json!({"cronExp": cron, "enableEventReplication": true, "url": "https://other.example/artifactory/rl",
               "username": "u", "password": "p", "enabled": true})
    };
    let r = api
        .put(
            "/artifactory/api/replications/rl",
            body("0 0 xoxo xoxoxo * ?"),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(r.art_error().contains("Invalid cronExp"), "{}", r.text);
    let r = api
        .put(
            "/artifactory/api/replications/rl",
            body("0 0 2 ? * MON-SAT *"),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
}

/// `pkg/artifactory/resource/repository/remote/remote.go` (`vcs_git_provider`: one of GITHUB,
/// GITHUBENTERPRISE, BITBUCKET, OLDSTASH, STASH, ARTIFACTORY, GITLAB, CUSTOM).
#[tokio::test]
async fn a_remote_vcs_repository_takes_gitlab() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create(
            "vcs-remote",
            json!({"rclass": "remote", "packageType": "vcs", "url": "https://gitlab.com/", "vcsGitProvider": "GITLAB"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.repo("vcs-remote").await.json()["vcsGitProvider"],
        "GITLAB"
    );
}

/// `pkg/artifactory/resource/repository/remote/resource_artifactory_remote_helm_repository.go`
/// (`external_dependencies_patterns`: "Default value in UI is empty"; a Helm remote created
/// without them reads back without them, else `TestAccDataSourceVirtualHelmRepository`'s
/// refresh plans a replacement) and `_docker_`, `_oci_`, `_helmoci_` ("set to '**' in the UI").
#[tokio::test]
async fn remote_external_dependency_patterns_default_per_package_type() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for (key, package_type, want) in [
        ("helm-remote", "helm", None),
        ("docker-remote", "docker", Some(json!(["**"]))),
        ("oci-remote", "oci", Some(json!(["**"]))),
        ("helmoci-remote", "helmoci", Some(json!(["**"]))),
    ] {
        let r = api
            .create(
                key,
                json!({"rclass": "remote", "packageType": package_type,
                       "url": "https://example.com/", "externalDependenciesPatterns": null}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{key}: {}", r.text);
        let repo = api.repo(key).await.json();
        let got = repo
            .get("externalDependenciesPatterns")
            .filter(|v| !v.is_null())
            .cloned();
        assert_eq!(got, want, "{key}: {repo}");
    }
    // Sent, they are kept.
    let r = api
        .create(
            "helm-remote-2",
            json!({"rclass": "remote", "packageType": "helm", "url": "https://example.com/",
                   "externalDependenciesEnabled": true,
                   "externalDependenciesPatterns": ["**github.com**"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.repo("helm-remote-2").await.json()["externalDependenciesPatterns"],
        json!(["**github.com**"])
    );
}

/// `pkg/artifactory/resource/repository/repository_test.go`
/// (`TestAccRepository_unassign_project_key_gh_329`: a repository leaves its project and keeps
/// `project_environments = ["DEV"]`) and `repository.go` (`ResourceUpgradeProjectKey`: the
/// provider once sent `project_key = "default"` for a repository outside any project, whose
/// key has no project prefix).
#[tokio::test]
async fn environments_outside_a_project_and_the_default_project() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .call(
            Method::POST,
            "/access/api/v1/projects",
            Some(json!({"project_key": "tp", "display_name": "tp", "admin_privileges": {}})),
        )
        .await;
    assert!(
        r.status.is_success() || r.status == StatusCode::CONFLICT,
        "{}",
        r.text
    );
    let r = api
        .create(
            "tp-gen",
            json!({"rclass": "local", "projectKey": "tp", "environments": ["DEV"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .delete("/access/api/v1/projects/_/attach/repositories/tp-gen")
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let r = api
        .post(
            "/artifactory/api/repositories/tp-gen",
            json!({"environments": ["DEV"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api.repo("tp-gen").await.json();
    assert!(got.get("projectKey").is_none(), "{got}");
    assert_eq!(got["environments"], json!(["DEV"]));

    let r = api
        .create(
            "plain-gen",
            json!({"rclass": "local", "projectKey": "default"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// `pkg/artifactory/resource/repository/federated/resource_artifactory_federated_repository_test.go`
/// (`TestAccFederatedRepoWithMembers`: the repository with itself as member, then
/// updated with `[itself, other]`, reads back `member.0` the other and `member.1` itself).
#[tokio::test]
async fn federated_members_after_an_update() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let own = format!("{}/artifactory/fed-g", sim.url());
    let other = "https://other.example.test/artifactory/fed-g";
    let r = api
        .create(
            "fed-g",
            json!({"rclass": "federated", "packageType": "generic", "members": [{"url": own, "enabled": true}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .post(
            "/artifactory/api/repositories/fed-g",
            json!({"members": [{"url": own, "enabled": true}, {"url": other, "enabled": true}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.repo("fed-g").await.json()["members"],
        json!([{"url": other, "enabled": true}, {"url": own, "enabled": true}])
    );
}

/// JFrog REST API "File List" as `pkg/artifactory/datasource/datasource_artifactory_file_list.go`
/// reads it (`GET artifactory/api/storage/{repo}/{folder}?list&deep=&depth=&listFolders=
/// &mdTimestamps=&includeRootPath=` into `FileListAPIModel`: `files[].uri`, `size`,
/// `lastModified`, `folder`, `sha1`, `sha2`); `TestAccDataSourceFileList` and its variants
/// expect the deployed files listed.
#[tokio::test]
async fn a_folder_lists_its_files_flat_deep_and_with_folders() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api
        .create(
            "files-local",
            json!({"rclass": "local", "packageType": "generic"}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    for path in ["dir/a.json", "dir/sub/b.json"] {
        let r = api
            .put(&format!("/artifactory/files-local/{path}"), json!({"x": 1}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let list = |q: &'static str| {
        let api = &api;
        async move {
            let r = api
                .get(&format!("/artifactory/api/storage/files-local/dir?list{q}"))
                .await;
            assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.text);
            let v = r.json();
            let uris: Vec<String> = v["files"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["uri"].as_str().map(str::to_owned))
                .collect();
            (v, uris)
        }
    };
    let (flat, uris) = list("&deep=0&depth=0&listFolders=0&mdTimestamps=0&includeRootPath=0").await;
    assert_eq!(uris, ["/a.json"], "{flat}");
    let file = &flat["files"][0];
    assert_eq!(file["folder"], false);
    assert_eq!(file["size"], 7, "{file}");
    assert_eq!(file["sha2"].as_str().map(str::len), Some(64), "{file}");
    assert!(
        file["lastModified"]
            .as_str()
            .is_some_and(|t| t.contains('T'))
    );
    assert!(
        flat["uri"]
            .as_str()
            .is_some_and(|u| u.ends_with("/api/storage/files-local/dir"))
    );

    let (_, uris) = list("&deep=1").await;
    assert_eq!(uris, ["/a.json", "/sub/b.json"]);
    let (v, uris) = list("&deep=1&listFolders=1&includeRootPath=1").await;
    assert_eq!(uris, ["/", "/a.json", "/sub", "/sub/b.json"], "{v}");
    assert_eq!(v["files"][2]["size"], -1);
    let (_, uris) = list("&deep=1&depth=1&listFolders=1").await;
    assert_eq!(uris, ["/a.json", "/sub"]);
}

/// Release Bundle v2 as JFrog's Artifactory Terraform provider drives it: the create answers
/// `ReleaseBundleV2ResponseAPIModel` (`repository_key`, `release_bundle_name`,
/// `release_bundle_version`, `created`; `resource_artifactory_release_bundle_v2.go`), and a
/// promotion is read back by its `created_millis` (`ReleaseBundleV2PromotionDetailsEndpoint`,
/// `resource_artifactory_release_bundle_v2_promotion.go`); `TestAccReleaseBundleV2_full_artifacts`
/// and `TestAccReleaseBundleV2Promotion_full`.
#[tokio::test]
async fn a_release_bundle_answers_its_create_and_a_promotion_is_read_by_its_millis() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let signed = |method: Method, path: String, body: Option<Value>| {
        let api = &api;
        async move {
            let mut rb = api
                .request(method, &path)
                .header("X-JFrog-Signing-Key-Name", "key1");
            if let Some(b) = body {
                rb = rb.json(&b);
            }
            let r = api.send(rb).await;
            (r.status, r.text)
        }
    };
    let (status, text) = signed(
        Method::POST,
        "/lifecycle/api/v2/release_bundle".into(),
        Some(
            json!({"release_bundle_name": "rb1", "release_bundle_version": "1.0",
            "source_type": "artifacts",
            "source": {"artifacts": [{"path": "generic-local/a.txt"}]}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{text}");
    let created: Value = serde_json::from_str(&text).expect("a JSON answer");
    assert_eq!(created["release_bundle_name"], "rb1", "{created}");
    assert_eq!(created["release_bundle_version"], "1.0", "{created}");
    assert!(created["repository_key"].is_string(), "{created}");
    assert!(
        created["created"].as_str().is_some_and(|t| t.contains('T')),
        "{created}"
    );

    let (status, text) = signed(
        Method::POST,
        "/lifecycle/api/v2/promotion/records/rb1/1.0".into(),
        Some(json!({"environment": "DEV"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let promoted: Value = serde_json::from_str(&text).expect("a JSON answer");
    let millis = promoted["created_millis"].as_i64().expect("created_millis");
    let one = format!("/lifecycle/api/v2/promotion/records/rb1/1.0/{millis}");
    let r = api.get(&one).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["environment"], "DEV");
    assert_eq!(r.json()["created_millis"], millis);
    assert_eq!(
        api.call(Method::DELETE, &one, None).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(api.get(&one).await.status, StatusCode::NOT_FOUND);
}
