//! ItemProperties manages only the keys it declares: properties others set on the same item
//! are not drift, and deleting the MR removes its keys only.

use std::sync::Arc;

use jfrog_client::{Idempotency, Service};
use kube::api::DeleteParams;
use provider_family::ClientCache;
use serde_json::json;

use super::examples::{EXAMPLE_PATH, EXAMPLE_REPOSITORY};
use crate::family_suite::{assert_no_writes, converge, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_properties_manage_only_their_declared_keys() {
    let kind = super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "ItemProperties")
        .cloned()
        .expect("declared");
    let mut env = start(super::kinds(), Arc::new(ClientCache::new(crate::PROVIDER))).await;
    assert!(env.sim.put_repository_raw(
        EXAMPLE_REPOSITORY,
        json!({"key": EXAMPLE_REPOSITORY, "rclass": "local", "packageType": "generic"}),
    ));
    let client = jfrog_client::JfrogClient::builder(env.sim.url())
        .credentials(jfrog_client::Credentials::access_token(
            env.sim.admin_token(),
        ))
        .build()
        .expect("client");
    let item = format!("{EXAMPLE_REPOSITORY}{EXAMPLE_PATH}");
    client
        .request(
            Service::Artifactory,
            http::Method::PUT,
            "/{*item}",
            Idempotency::Idempotent,
        )
        .param(&item)
        .bytes(b"hello".to_vec(), "application/octet-stream")
        .send_empty()
        .await
        .expect("deploy");
    // Someone else's property on the same item.
    fn props<'a>(c: &'a jfrog_client::JfrogClient, item: &str) -> jfrog_client::Request<'a> {
        c.request(
            Service::Artifactory,
            http::Method::GET,
            "/api/storage/{*item}",
            Idempotency::Idempotent,
        )
        .param(item)
        .query("properties", "")
    }
    client
        .request(
            Service::Artifactory,
            http::Method::PUT,
            "/api/storage/{*item}",
            Idempotency::Idempotent,
        )
        .param(&item)
        .query("properties", "team=other")
        .send_empty()
        .await
        .expect("foreign property");
    let d = super::tables::KINDS
        .iter()
        .find(|d| d.kind == "ItemProperties")
        .expect("declared");
    env.add(
        &kind,
        provider_family::examples::manifest(d, "props", super::examples::example_params(d), false),
    )
    .await;
    converge(&env.mrs).await;
    assert_no_writes(&env.sim, &env.mrs, 2).await;
    let now = props(&client, &item).send_value().await.expect("read");
    assert_eq!(now["properties"]["team"], json!(["other"]));
    assert_eq!(now["properties"]["stage"], json!(["dev"]));

    let m = &env.mrs[0];
    m.api
        .delete(&m.name, &DeleteParams::default())
        .await
        .expect("delete MR");
    let deadline = tokio::time::Instant::now() + crate::family_suite::WAIT;
    while m.api.get_opt(&m.name).await.expect("get").is_some() {
        assert!(tokio::time::Instant::now() < deadline, "not released");
        m.reconcile().await;
    }
    let after = props(&client, &item).send_value().await.expect("read");
    assert_eq!(
        after["properties"],
        json!({"team": ["other"]}),
        "only the declared keys go"
    );
}

/// The properties of many items are observed by one AQL search per poll (at most 100 items
/// per search) instead of one read per item: files in folders and in a repository's root,
/// a folder, and a repository's own properties (not an AQL item: read by key). A property
/// changed in JFrog is seen in the next poll's search and set back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_items_are_observed_by_one_search_per_poll() {
    use std::time::Duration;
    const POLL: Duration = Duration::from_secs(2);
    const SEARCH: &str = "POST /artifactory/api/search/aql";
    const READ: &str = "GET /artifactory/api/storage/{*item}";
    let kind = super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "ItemProperties")
        .cloned()
        .expect("declared");
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = start(super::kinds(), cache).await;
    let repo = "props-local";
    assert!(env.sim.put_repository_raw(
        repo,
        json!({"key": repo, "rclass": "local", "packageType": "generic"}),
    ));
    let client = jfrog_client::JfrogClient::builder(env.sim.url())
        .credentials(jfrog_client::Credentials::access_token(
            env.sim.admin_token(),
        ))
        .build()
        .expect("client");
    let files = ["a/b/one.txt", "a/two.txt", "root.txt", "c/d/e/three.txt"];
    for f in files {
        client
            .request(
                Service::Artifactory,
                http::Method::PUT,
                "/{*item}",
                Idempotency::Idempotent,
            )
            .param(format!("{repo}/{f}"))
            .bytes(f.as_bytes().to_vec(), "application/octet-stream")
            .send_empty()
            .await
            .expect("deploy");
    }
    let d = super::tables::KINDS
        .iter()
        .find(|d| d.kind == "ItemProperties")
        .expect("declared");
    // The files, a folder, and the repository itself (no item path).
    let items: Vec<Option<&str>> = files
        .iter()
        .map(|f| Some(*f))
        .chain([Some("a/b"), None])
        .collect();
    for (i, item) in items.iter().enumerate() {
        let mut params =
            json!({"repoKey": repo, "properties": {"stage": ["dev"], "n": [i.to_string()]}});
        if let Some(item) = item {
            params["itemPath"] = json!(item);
        }
        env.add(
            &kind,
            provider_family::examples::manifest(d, &format!("props-{i}"), params, false),
        )
        .await;
    }
    converge(&env.mrs).await;
    for round in 0..2 {
        let counts = provider_family_suite::poll(&env, POLL, &format!("poll {round}")).await;
        assert_eq!(counts.get(SEARCH), Some(&1), "one search: {counts:?}");
        assert_eq!(
            counts.get(READ),
            Some(&1),
            "only the repository's own properties read by key: {counts:?}"
        );
        assert_eq!(counts.len(), 2, "nothing else: {counts:?}");
    }

    // Drift made in JFrog: seen by the next search, set back by one write.
    let drifted = format!("{repo}/a/two.txt");
    client
        .request(
            Service::Artifactory,
            http::Method::PUT,
            "/api/storage/{*item}",
            Idempotency::Idempotent,
        )
        .param(&drifted)
        .query("properties", "stage=prod")
        .send_empty()
        .await
        .expect("drift");
    let counts = provider_family_suite::poll(&env, POLL, "after the drift").await;
    assert_eq!(counts.get(SEARCH), Some(&1), "{counts:?}");
    assert_eq!(
        counts.get("PUT /artifactory/api/storage/{*item}"),
        Some(&1),
        "{counts:?}"
    );
    let now = client
        .request(
            Service::Artifactory,
            http::Method::GET,
            "/api/storage/{*item}",
            Idempotency::Idempotent,
        )
        .param(&drifted)
        .query("properties", "")
        .send_value()
        .await
        .expect("read");
    assert_eq!(now["properties"]["stage"], json!(["dev"]), "{now}");
}
