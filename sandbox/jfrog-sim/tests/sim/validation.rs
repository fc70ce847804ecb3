//! JFrog's validation of repository creates, with its status codes and messages.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::json;

async fn create_err(api: &Api, key: &str, body: serde_json::Value) -> String {
    let r = api.create(key, body).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{key}: {}", r.text);
    r.art_error()
}

#[tokio::test]
async fn keys_are_unique_ignoring_case() {
    let sim = start().await;
    let api = Api::admin(&sim);
    assert_eq!(
        api.create("Libs-Local", json!({"rclass": "local"}))
            .await
            .status,
        StatusCode::OK
    );
    for k in ["libs-local", "LIBS-LOCAL", "Libs-Local"] {
        assert_eq!(
            create_err(
                &api,
                k,
                json!({"rclass": "remote", "url": "https://x.example"})
            )
            .await,
            "error when validating repository name: Case insensitive repository key already exists"
        );
    }
    assert_eq!(api.repo("libs-local").await.status, StatusCode::NOT_FOUND);
    assert_eq!(api.repo("Libs-Local").await.status, StatusCode::OK);
    // After a delete the key is free again, in any case.
    api.delete("/artifactory/api/repositories/Libs-Local").await;
    assert_eq!(
        api.create("libs-local", json!({"rclass": "local"}))
            .await
            .status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn key_rules() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let local = json!({"rclass": "local"});
    assert_eq!(
        create_err(&api, "a%3Ab", local.clone()).await,
        "Illegal Repository key : '/,\\,:,|,?,<,>,*,\"' is not allowed"
    );
    assert!(
        create_err(&api, &"k".repeat(65), local.clone())
            .await
            .contains("exceeds maximum length (64)")
    );
    assert_eq!(
        api.create(&"k".repeat(64), local.clone()).await.status,
        StatusCode::OK
    );
    let remote = json!({"rclass": "remote", "url": "https://x.example"});
    assert!(
        create_err(&api, &"r".repeat(59), remote)
            .await
            .contains("exceeds maximum length (58)")
    );
    assert_eq!(
        create_err(&api, "jfrog-logs", local.clone()).await,
        "Repository key 'jfrog-logs' is a reserved name"
    );
    assert_eq!(
        create_err(&api, "Apache", local.clone()).await,
        "error when validating repository name: Case insensitive repository key already exists"
    );
    assert_eq!(
        create_err(&api, "libs-cache", local.clone()).await,
        "Repository key cannot end with '-cache'"
    );
    assert!(
        create_err(&api, "jfrog-artifactory-system-x", local.clone())
            .await
            .contains("cannot start with")
    );
    let docker = json!({"rclass": "local", "packageType": "docker"});
    assert_eq!(
        create_err(&api, "Docker-local", docker.clone()).await,
        "Docker Repository Docker-local key must be in lower case"
    );
    assert_eq!(
        create_err(&api, "docker_local", docker).await,
        "Docker Repository docker_local key cannot contain '_'"
    );
    assert!(
        create_err(&api, "a", json!({"rclass": "local", "key": "b"}))
            .await
            .contains("does not match the key in the URL")
    );
}

#[tokio::test]
async fn class_and_package_type() {
    let sim = start().await;
    let api = Api::admin(&sim);
    assert_eq!(
        create_err(&api, "x", json!({"packageType": "generic"})).await,
        "Repository rclass is missing or invalid: expected one of local, remote, virtual, federated"
    );
    assert!(
        create_err(&api, "x", json!({"rclass": "distant"}))
            .await
            .starts_with("Repository rclass is missing or invalid")
    );
    assert_eq!(
        create_err(
            &api,
            "x",
            json!({"rclass": "local", "packageType": "cobol"})
        )
        .await,
        "Unsupported package type 'cobol'"
    );
    assert_eq!(
        create_err(
            &api,
            "x",
            json!({"rclass": "virtual", "packageType": "vagrant"})
        )
        .await,
        "Package type 'vagrant' is not supported for virtual repositories"
    );
    assert_eq!(
        create_err(&api, "x", json!(["not", "an", "object"])).await,
        "Repository configuration must be a JSON object"
    );
    let r = api
        .http
        .put(format!("{}/artifactory/api/repositories/x", api.base))
        .bearer_auth(api.token.as_ref().unwrap())
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    // Artifactory consumes JSON only (its vendor media types included).
    let send = |content_type: Option<&'static str>| {
        let mut req = api
            .http
            .put(format!(
                "{}/artifactory/api/repositories/typed-local",
                api.base
            ))
            .bearer_auth(api.token.clone().unwrap())
            .body(r#"{"rclass":"local"}"#);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        req.send()
    };
    assert_eq!(
        send(None).await.unwrap().status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    assert_eq!(
        send(Some("text/plain")).await.unwrap().status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    let vnd =
        "application/vnd.org.jfrog.artifactory.repositories.LocalRepositoryConfiguration+json";
    assert_eq!(send(Some(vnd)).await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn required_fields_types_and_values() {
    let sim = start().await;
    let api = Api::admin(&sim);
    assert_eq!(
        create_err(
            &api,
            "mvn-remote",
            json!({"rclass": "remote", "packageType": "maven"})
        )
        .await,
        "Remote URL '' is not valid"
    );
    assert_eq!(
        create_err(
            &api,
            "mvn-remote",
            json!({"rclass": "remote", "url": "ftp://x"})
        )
        .await,
        "Remote URL 'ftp://x' is not valid"
    );
    assert_eq!(
        create_err(
            &api,
            "hex-local",
            json!({"rclass": "local", "packageType": "hex"})
        )
        .await,
        "'primaryKeyPairRef' is required for local hex repositories"
    );
    assert_eq!(
        create_err(&api, "hex-remote", json!({"rclass": "remote", "packageType": "hex", "url": "https://repo.hex.pm", "primaryKeyPairRef": "k"})).await,
        "'hexPublicKey' is required for remote hex repositories"
    );
    assert_eq!(
        create_err(&api, "x", json!({"rclass": "local", "xrayIndex": 1})).await,
        "Invalid value for 'xrayIndex': expected a boolean"
    );
    assert_eq!(
        create_err(&api, "x", json!({"rclass": "local", "propertySets": "a"})).await,
        "Invalid value for 'propertySets': expected a list of strings"
    );
    assert_eq!(
        create_err(
            &api,
            "x",
            json!({"rclass": "local", "packageType": "maven", "checksumPolicyType": "trust-me"})
        )
        .await,
        "Invalid value 'trust-me' for 'checksumPolicyType': expected one of client-checksums, server-generated-checksums"
    );
    assert_eq!(
        create_err(
            &api,
            "x",
            json!({"rclass": "local", "repoLayoutRef": "my-layout"})
        )
        .await,
        "Repository layout 'my-layout' does not exist"
    );
    assert_eq!(
        create_err(&api, "x", json!({"rclass": "remote", "url": "https://x.example", "proxy": "corp", "disableProxy": true})).await,
        "A proxy cannot be set when disableProxy is true"
    );
    assert_eq!(sim.repository_count(), 0, "no rejected create was stored");
}

#[tokio::test]
async fn keys_must_be_xml_names() {
    let sim = start().await;
    let api = Api::admin(&sim);
    // The Terraform provider's own test key.
    let msg = create_err(
        &api,
        "IHave++special,Chars",
        json!({"rclass": "remote", "packageType": "npm", "url": "https://registry.npmjs.org/"}),
    )
    .await;
    assert_eq!(msg, "Repository key contains illegal character: '+'");
    for key in [
        "1st-local",
        "-dash-local",
        "a%2Cb",
        "a%20b",
        "a(b)",
        "a%23b",
    ] {
        let msg = create_err(&api, key, json!({"rclass": "local"})).await;
        assert!(
            msg.starts_with("Repository key contains illegal character"),
            "{key}: {msg}"
        );
    }
    assert_eq!(
        create_err(&api, "%26", json!({"rclass": "local"})).await,
        "Invalid Repository key"
    );
    for key in ["libs.release_2-local", "_under-local", "Generic_Local"] {
        assert_eq!(
            api.create(key, json!({"rclass": "local"})).await.status,
            StatusCode::OK,
            "{key}"
        );
    }
    assert_eq!(sim.repository_count(), 3);
}

#[tokio::test]
async fn container_tag_limits() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let msg = create_err(
        &api,
        "oci-local",
        json!({"rclass": "local", "packageType": "oci", "maxUniqueTags": -1}),
    )
    .await;
    assert!(msg.contains("'maxUniqueTags'"), "{msg}");
    let msg = create_err(
        &api,
        "oci-local",
        json!({"rclass": "local", "packageType": "oci", "dockerTagRetention": 0}),
    )
    .await;
    assert!(
        msg.contains("'dockerTagRetention': must be at least 1"),
        "{msg}"
    );
    let msg = create_err(
        &api,
        "helmoci-fed",
        json!({"rclass": "federated", "packageType": "helmoci", "dockerTagRetention": 0}),
    )
    .await;
    assert!(msg.contains("at least 1"), "{msg}");
    // Docker allows a retention of 0 (the Terraform provider's Docker V2 validator), not -1.
    assert_eq!(
        api.create(
            "docker-local",
            json!({"rclass": "local", "packageType": "docker", "dockerTagRetention": 0, "maxUniqueTags": 0})
        )
        .await
        .status,
        StatusCode::OK
    );
    let r = api
        .post(
            "/artifactory/api/repositories/docker-local",
            json!({"dockerTagRetention": -1}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert_eq!(
        api.create(
            "oci-local",
            json!({"rclass": "local", "packageType": "oci", "maxUniqueTags": 5, "dockerTagRetention": 3})
        )
        .await
        .status,
        StatusCode::OK
    );
    let r = api
        .post(
            "/artifactory/api/repositories/oci-local",
            json!({"dockerTagRetention": 0}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(api.repo("oci-local").await.json()["dockerTagRetention"], 3);
}

/// `pkg/artifactory/resource/repository/remote/resource_artifactory_remote_helm_repository_test.go`
/// (`TestAccRemoteHelmRepositoryDepFalse`: `external_dependencies_enabled = false` with
/// `external_dependencies_patterns = ["**github.com**"]`, both read back as set): Artifactory
/// stores the patterns whether the flag is on or not.
#[tokio::test]
async fn external_dependency_patterns_are_stored_with_the_flag_off() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let body = json!({"rclass": "remote", "packageType": "helm", "url": "https://github.com/",
        "externalDependenciesEnabled": false, "externalDependenciesPatterns": ["**github.com**"]});
    let r = api.create("helm-remote", body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api.repo("helm-remote").await.json();
    assert_eq!(got["externalDependenciesEnabled"], false);
    assert_eq!(
        got["externalDependenciesPatterns"],
        json!(["**github.com**"])
    );
    let r = api
        .post(
            "/artifactory/api/repositories/helm-remote",
            json!({"externalDependenciesPatterns": ["**/github.com/**"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        api.repo("helm-remote").await.json()["externalDependenciesPatterns"],
        json!(["**/github.com/**"])
    );
}
