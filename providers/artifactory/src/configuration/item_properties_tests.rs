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
