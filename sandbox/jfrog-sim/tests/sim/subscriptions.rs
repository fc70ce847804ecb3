//! The Event service's webhook subscription API: CRUD, list, JFrog-style errors, validation,
//! write-only secrets, auth, request counts and faults on its routes.

use std::time::Duration;

use crate::common::{Api, Resp, client, start};
use jfrog_sim::Fault;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const BASE: &str = "/event/api/v1/subscriptions";
const ITEM: &str = "/event/api/v1/subscriptions/{key}";

fn hook(key: &str) -> Value {
    json!({
        "key": key,
        "description": "deployments",
        "event_filter": {
            "domain": "artifact",
            "event_types": ["deployed", "deleted"],
            "criteria": {"anyLocal": true, "anyRemote": false, "repoKeys": [], "includePatterns": ["org/**"]}
        },
        "handlers": [{
            "handler_type": "webhook",
            "url": "https://hooks.example.com/jfrog",
            "secret": "the-secret",
            "custom_http_headers": [{"name": "X-Team", "value": "platform"}]
        }]
    })
}

/// The message of an Access-style error body, checking its shape.
fn access_error(r: &Resp, code: &str) -> String {
    let v = r.json();
    assert_eq!(v["errors"][0]["code"], code, "{}", r.text);
    v["errors"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn create_read_list_replace_delete() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let r = api.post(BASE, hook("deploy-hook")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // "Create a New Webhook Subscription": the answer is the subscription (as a read shows it).
    let created = r.json();

    let got = api.get(&format!("{BASE}/deploy-hook")).await;
    assert_eq!(got.status, StatusCode::OK);
    let got = got.json();
    assert_eq!(created, got);
    assert_eq!(got["key"], "deploy-hook");
    assert_eq!(got["enabled"], true, "enabled defaults to true");
    assert_eq!(
        got["event_filter"]["event_types"],
        json!(["deployed", "deleted"])
    );
    assert_eq!(got["handlers"][0]["url"], "https://hooks.example.com/jfrog");
    // Never sent, never answered (`resource_artifactory_webhook.go`: optional, not computed).
    assert!(
        got["handlers"][0].get("use_secret_for_signing").is_none(),
        "{got}"
    );
    assert_eq!(
        got["handlers"][0]["custom_http_headers"],
        json!([{"name": "X-Team", "value": "platform"}])
    );
    assert!(
        got["handlers"][0].get("secret").is_none(),
        "the secret is write-only: {got}"
    );

    let mut custom = hook("custom-hook");
    custom["enabled"] = json!(false);
    custom["event_filter"] = json!({"domain": "user", "event_types": ["locked"]});
    custom["handlers"] = json!([{
        "handler_type": "custom-webhook",
        "url": "https://ci.example.com/trigger",
        "method": "POST",
        "secrets": [{"name": "token", "value": "hunter2"}],
        "http_headers": [{"name": "Authorization", "value": "Bearer {{.secrets.token}}"}],
        "payload": "{\"ref\": \"main\"}"
    }]);
    assert_eq!(api.post(BASE, custom).await.status, StatusCode::CREATED);

    let list = api.get(BASE).await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(!list.text.contains("hunter2") && !list.text.contains("the-secret"));
    let list = list.json();
    let keys: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["custom-hook", "deploy-hook"]);
    assert_eq!(list[0]["enabled"], false);
    assert_eq!(
        list[0]["handlers"][0]["secrets"],
        json!([{"name": "token", "value": ""}])
    );
    assert_eq!(list[0]["handlers"][0]["payload"], "{\"ref\": \"main\"}");
    assert_eq!(
        list[1],
        api.get(&format!("{BASE}/deploy-hook")).await.json()
    );

    // The admin API shows the secrets in clear.
    assert_eq!(
        sim.object("event_subscriptions", "custom-hook").unwrap()["handlers"][0]["secrets"][0]["value"],
        "hunter2"
    );

    // Replace: the whole object.
    let mut changed = hook("deploy-hook");
    changed["description"] = json!("changed");
    changed["event_filter"]["event_types"] = json!(["moved"]);
    let r = api.put(&format!("{BASE}/deploy-hook"), changed).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got = api.get(&format!("{BASE}/deploy-hook")).await.json();
    assert_eq!(got["description"], "changed");
    assert_eq!(got["event_filter"]["event_types"], json!(["moved"]));
    // The key may be left out of a replace body.
    let mut no_key = hook("x");
    no_key.as_object_mut().unwrap().remove("key");
    assert_eq!(
        api.put(&format!("{BASE}/deploy-hook"), no_key).await.status,
        StatusCode::OK
    );
    assert_eq!(
        api.get(&format!("{BASE}/deploy-hook")).await.json()["description"],
        "deployments"
    );

    assert_eq!(
        api.delete(&format!("{BASE}/deploy-hook")).await.status,
        StatusCode::OK
    );
    assert_eq!(sim.object_count("event_subscriptions"), 1);

    assert_eq!(sim.request_count("POST", BASE), 2);
    assert_eq!(sim.request_count("GET", BASE), 1);
    assert_eq!(sim.request_count("GET", ITEM), 4);
    assert_eq!(sim.request_count("PUT", ITEM), 2);
    assert_eq!(sim.request_count("DELETE", ITEM), 1);
}

#[tokio::test]
async fn not_found_and_conflict() {
    let sim = start().await;
    let api = Api::admin(&sim);
    for r in [
        api.get(&format!("{BASE}/nope")).await,
        api.delete(&format!("{BASE}/nope")).await,
        api.put(&format!("{BASE}/nope"), hook("nope")).await,
    ] {
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        assert_eq!(
            access_error(&r, "NOT_FOUND"),
            "Subscription with key 'nope' was not found"
        );
    }
    assert_eq!(
        api.post(BASE, hook("dup")).await.status,
        StatusCode::CREATED
    );
    let r = api.post(BASE, hook("dup")).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        access_error(&r, "CONFLICT"),
        "Subscription with key 'dup' already exists"
    );
    // Keys are case-sensitive.
    assert_eq!(
        api.post(BASE, hook("DUP")).await.status,
        StatusCode::CREATED
    );
    // A replace cannot rename.
    let r = api.put(&format!("{BASE}/dup"), hook("other")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(access_error(&r, "BAD_REQUEST").contains("does not match the key in the path"));
    // Nothing is written by refused calls.
    assert_eq!(sim.object_count("event_subscriptions"), 2);
}

#[tokio::test]
async fn validation_messages() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let cases: Vec<(Value, &str)> = vec![
        (json!({"key": "a"}), "2 - 200"),
        (hook("has space"), "2 - 200"),
        (
            {
                let mut h = hook("k1");
                h["description"] = json!("d".repeat(1001));
                h
            },
            "1000",
        ),
        (
            {
                let mut h = hook("k2");
                h["event_filter"]["domain"] = json!("repository");
                h
            },
            "Invalid domain 'repository'",
        ),
        (
            {
                let mut h = hook("k3");
                h["event_filter"]["event_types"] = json!(["pushed"]);
                h
            },
            "Event type 'pushed' is not supported for domain 'artifact'",
        ),
        (
            {
                let mut h = hook("k4");
                h["event_filter"]["event_types"] = json!([]);
                h
            },
            "event_types' cannot be empty",
        ),
        (
            {
                let mut h = hook("k5");
                h["event_filter"]["criteria"] = json!({"anyLocal": false, "anyRemote": false, "anyFederated": false, "repoKeys": []});
                h
            },
            "repoKeys cannot be empty when anyLocal, anyRemote and anyFederated are false",
        ),
        (
            json!({"key": "k6", "event_filter": {"domain": "build", "event_types": ["uploaded"], "criteria": {"anyBuild": false}},
                   "handlers": [{"handler_type": "webhook", "url": "https://x.example"}]}),
            "selectedBuilds or includePatterns cannot be empty when anyBuild is false",
        ),
        (
            json!({"key": "k7", "event_filter": {"domain": "release_bundle_v2", "event_types": ["release_bundle_v2_failed"], "criteria": {"anyReleaseBundle": false, "selectedReleaseBundles": {"release-bundles-v2": []}}},
                   "handlers": [{"handler_type": "webhook", "url": "https://x.example"}]}),
            "selectedReleaseBundles cannot be empty",
        ),
        (
            {
                let mut h = hook("k8");
                h["handlers"] = json!([]);
                h
            },
            "At least one handler is required",
        ),
        (
            {
                let mut h = hook("k9");
                h["handlers"][0]["url"] = json!("not a url");
                h
            },
            "Invalid handler url 'not a url'",
        ),
        (
            {
                let mut h = hook("k10");
                h["handlers"][0]["proxy"] = json!("http://proxy.example:3128");
                h
            },
            "expected the key of a proxy, not a URL",
        ),
        (
            {
                let mut h = hook("k11");
                h["handlers"][0]["proxy"] = json!("corp-proxy");
                h
            },
            "proxy with key 'corp-proxy' not found",
        ),
        (
            {
                let mut h = hook("k12");
                h["handlers"] = json!([{"handler_type": "custom-webhook", "url": "https://x.example", "secrets": [{"name": "bad-name", "value": "v"}]}]);
                h
            },
            "Invalid secret name 'bad-name'",
        ),
    ];
    for (body, expected) in cases {
        let r = api.post(BASE, body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
        let msg = access_error(&r, "BAD_REQUEST");
        assert!(msg.contains(expected), "{body}: {msg}");
    }
    let r = api.post(BASE, json!("[")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(sim.object_count("event_subscriptions"), 0);

    // A proxy of the system configuration descriptor can be named.
    let r = api
        .text(
            Method::PATCH,
            "/artifactory/api/system/configuration",
            "application/yaml",
            "proxies:\n  corp-proxy:\n    host: proxy.example\n    port: 3128\n",
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let mut h = hook("k11");
    h["handlers"][0]["proxy"] = json!("corp-proxy");
    assert_eq!(api.post(BASE, h).await.status, StatusCode::CREATED);
}

#[tokio::test]
async fn admin_rights_are_required() {
    let sim = start().await;
    let reader = Api::with_token(&sim, Some(sim.issue_token(false)));
    let anonymous = Api::with_token(&sim, None);
    let r = reader.get(BASE).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(access_error(&r, "FORBIDDEN"), "Forbidden");
    assert_eq!(
        reader.post(BASE, hook("x-hook")).await.status,
        StatusCode::FORBIDDEN
    );
    let r = anonymous.get(&format!("{BASE}/x")).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    access_error(&r, "UNAUTHORIZED");
    assert_eq!(sim.object_count("event_subscriptions"), 0);
}

#[tokio::test]
async fn faults_apply_to_subscription_routes() {
    let sim = start().await;
    let api = Api::admin(&sim);
    // 429 with Retry-After, once.
    sim.add_fault(Fault::rate_limit(BASE, Duration::from_millis(1500), 1.0).times(1));
    let r = api.post(BASE, hook("limited")).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers["retry-after"], "2");
    access_error(&r, "TOO_MANY_REQUESTS");
    assert_eq!(sim.object_count("event_subscriptions"), 0);
    assert_eq!(
        api.post(BASE, hook("limited")).await.status,
        StatusCode::CREATED
    );

    // 503 on reads of one method only.
    sim.add_fault(Fault::error(BASE, 503, 1.0).method("GET").times(1));
    assert_eq!(
        api.get(&format!("{BASE}/limited")).await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(
        api.get(&format!("{BASE}/limited")).await.status,
        StatusCode::OK
    );

    // A create applied whose answer is lost.
    sim.add_fault(Fault::drop_after_commit("POST", BASE).times(1));
    let lost = client()
        .post(format!("{}{BASE}", sim.url()))
        .bearer_auth(sim.admin_token())
        .json(&hook("lost-answer"))
        .send()
        .await;
    assert!(lost.is_err(), "the answer is dropped");
    assert!(sim.object("event_subscriptions", "lost-answer").is_some());
    let r = api.post(BASE, hook("lost-answer")).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "a blind retry conflicts");

    // Latency.
    sim.add_fault(Fault::latency(BASE, Duration::from_millis(200), Duration::ZERO).times(1));
    let t = std::time::Instant::now();
    assert_eq!(api.get(BASE).await.status, StatusCode::OK);
    assert!(t.elapsed() >= Duration::from_millis(200));
    // Every attempt is counted, faulted or not.
    assert_eq!(sim.request_count("POST", BASE), 4);
}
