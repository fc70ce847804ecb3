//! The admin API of the generic collection service (`/__sim/collections`): seeding an
//! "existing" object, drifting it, counting objects, for any collection and for repositories;
//! and the same through the library API.

use crate::common::{Api, start};
use reqwest::{Method, StatusCode};
use serde_json::json;

const SUBS: &str = "/__sim/collections/event_subscriptions";

fn seeded() -> serde_json::Value {
    json!({
        "description": "made in JFrog",
        "enabled": true,
        "event_filter": {"domain": "user", "event_types": ["locked"]},
        "handlers": [{"handler_type": "webhook", "url": "https://x.example", "secret": "s"}]
    })
}

#[tokio::test]
async fn seed_drift_count_and_delete_over_http() {
    let sim = start().await;
    let admin = Api::with_token(&sim, None); // the admin API needs no credentials
    let api = Api::admin(&sim);

    // Every collection (the families add theirs): empty but for what a fresh platform has
    // (the anonymous user, the readers group).
    let r = admin.get("/__sim/collections").await.json();
    let counts = r.as_object().expect("an object");
    for name in ["event_subscriptions", "repositories"] {
        assert_eq!(counts.get(name), Some(&json!(0)), "{r}");
    }
    for (name, n) in counts {
        let built_in = matches!(name.as_str(), "users" | "access_groups");
        assert_eq!(*n, json!(u8::from(built_in)), "{name} in {r}");
    }

    // Seed: stored as is (no validation), the key field set from the path; 201 then 204.
    let r = admin.put(&format!("{SUBS}/seeded-hook"), seeded()).await;
    assert_eq!(r.status, StatusCode::CREATED);
    let got = api.get("/event/api/v1/subscriptions/seeded-hook").await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.json()["description"], "made in JFrog");
    assert!(got.json()["handlers"][0].get("secret").is_none());
    // Seeding is not a request of the API.
    assert_eq!(
        sim.request_count("PUT", "/event/api/v1/subscriptions/{key}"),
        0
    );

    // Raw read shows the secret and the key.
    let raw = admin.get(&format!("{SUBS}/seeded-hook")).await.json();
    assert_eq!(raw["key"], "seeded-hook");
    assert_eq!(raw["handlers"][0]["secret"], "s");

    // Drift: a merge patch (null removes), or a full replace.
    let r = admin
        .call(
            Method::PATCH,
            &format!("{SUBS}/seeded-hook"),
            Some(json!({"enabled": false, "description": null})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let got = api
        .get("/event/api/v1/subscriptions/seeded-hook")
        .await
        .json();
    assert_eq!(got["enabled"], false);
    assert!(got.get("description").is_none());
    let mut replaced = seeded();
    replaced["description"] = json!("replaced");
    assert_eq!(
        admin
            .put(&format!("{SUBS}/seeded-hook"), replaced)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim.object("event_subscriptions", "seeded-hook").unwrap()["description"],
        "replaced"
    );

    // List and count.
    admin.put(&format!("{SUBS}/another"), seeded()).await;
    let list = admin.get(SUBS).await.json();
    assert_eq!(list.as_array().map(Vec::len), Some(2));
    assert_eq!(list[0]["key"], "another");
    assert_eq!(
        admin.get("/__sim/collections").await.json()["event_subscriptions"],
        2
    );

    // Delete one, then clear.
    assert_eq!(
        admin.delete(&format!("{SUBS}/another")).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        admin.delete(&format!("{SUBS}/another")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(admin.delete(SUBS).await.status, StatusCode::NO_CONTENT);
    assert_eq!(sim.object_count("event_subscriptions"), 0);
    assert_eq!(
        api.get("/event/api/v1/subscriptions/seeded-hook")
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // Errors.
    assert_eq!(
        admin.get("/__sim/collections/nope").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        admin
            .put("/__sim/collections/nope/k", json!({}))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        admin.put(&format!("{SUBS}/k"), json!([1])).await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        admin
            .call(Method::PATCH, &format!("{SUBS}/missing"), Some(json!({})))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // The admin API is neither counted nor faulted.
    assert!(sim.request_counts().keys().all(|k| !k.contains("__sim")));
}

#[tokio::test]
async fn repositories_are_a_collection_too() {
    let sim = start().await;
    let admin = Api::with_token(&sim, None);
    let api = Api::admin(&sim);
    assert_eq!(
        api.create(
            "libs-local",
            json!({"rclass": "local", "packageType": "maven"})
        )
        .await
        .status,
        StatusCode::OK
    );
    let list = admin.get("/__sim/collections/repositories").await.json();
    assert_eq!(list[0]["key"], "libs-local");
    assert_eq!(list[0]["packageType"], "maven");
    assert_eq!(
        admin.get("/__sim/collections").await.json()["repositories"],
        1
    );

    // Drift made in JFrog, seen by the API.
    let r = admin
        .call(
            Method::PATCH,
            "/__sim/collections/repositories/libs-local",
            Some(json!({"description": "drifted"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        api.repo("libs-local").await.json()["description"],
        "drifted"
    );

    // Seeding needs rclass; then it exists for the API.
    assert_eq!(
        admin
            .put(
                "/__sim/collections/repositories/seeded",
                json!({"description": "x"})
            )
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        admin
            .put(
                "/__sim/collections/repositories/seeded",
                json!({"rclass": "local"})
            )
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(api.repo("seeded").await.status, StatusCode::OK);
    assert_eq!(sim.object_count("repositories"), 2);
    assert_eq!(
        admin
            .delete("/__sim/collections/repositories/seeded")
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        admin.delete("/__sim/collections/repositories").await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(sim.repository_count(), 0);
}

#[tokio::test]
async fn library_api() {
    let sim = start().await;
    let names = sim.collection_names();
    for name in ["event_subscriptions", "repositories"] {
        assert!(names.iter().any(|n| n == name), "{names:?}");
    }
    // Proxies live in the system configuration descriptor (the one proxy store), not in a
    // collection of their own.
    assert!(!names.iter().any(|n| n == "proxies"), "{names:?}");
    assert!(sim.put_object("event_subscriptions", "corp-hook", json!({"enabled": true})));
    assert_eq!(
        sim.object("event_subscriptions", "corp-hook"),
        Some(json!({"key": "corp-hook", "enabled": true}))
    );
    assert_eq!(sim.objects("event_subscriptions").map(|v| v.len()), Some(1));
    assert_eq!(sim.object_count("event_subscriptions"), 1);
    assert!(!sim.put_object("event_subscriptions", "x", json!("not an object")));
    assert!(!sim.put_object("unknown", "x", json!({})));
    assert!(sim.objects("unknown").is_none());
    assert_eq!(sim.object_count("unknown"), 0);
    assert!(sim.delete_object("event_subscriptions", "corp-hook"));
    assert!(!sim.delete_object("event_subscriptions", "corp-hook"));
    assert!(sim.put_object("repositories", "r-local", json!({"rclass": "local"})));
    assert_eq!(
        sim.object("repositories", "r-local").unwrap()["rclass"],
        "local"
    );
}
