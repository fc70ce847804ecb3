//! Identifiers as Upjet's external-name configuration gives them, so manifests written for an
//! Upjet-generated provider apply unchanged: a release bundle's `name` is the external name
//! when `forProvider` leaves it out (`NameAsIdentifier`), and ItemProperties without an
//! `itemPath` are the repository's own properties (upstream's import ID `<repo>`).

use std::sync::Arc;

use jfrog_client::{Idempotency, Service};
use provider_family::ClientCache;
use serde_json::{Value, json};

use super::examples::{EXAMPLE_PATH, EXAMPLE_REPOSITORY};
use crate::family_suite::{assert_no_writes, converge, start};

fn kind(
    name: &str,
) -> (
    Arc<provider_family::FamilyKind>,
    &'static provider_family::KindDecl,
) {
    let k = super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == name)
        .cloned()
        .expect("declared");
    let d = super::tables::KINDS
        .iter()
        .find(|d| d.kind == name)
        .expect("declared");
    (k, d)
}

fn external_name(o: &kube::api::DynamicObject) -> String {
    o.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("crossplane.io/external-name"))
        .cloned()
        .unwrap_or_default()
}

async fn deploy(env: &crate::family_suite::Env) -> jfrog_client::JfrogClient {
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
    client
        .request(
            Service::Artifactory,
            http::Method::PUT,
            "/{*item}",
            Idempotency::Idempotent,
        )
        .param(format!("{EXAMPLE_REPOSITORY}{EXAMPLE_PATH}"))
        .bytes(b"hello".to_vec(), "application/octet-stream")
        .send_empty()
        .await
        .expect("deploy");
    client
}

/// A ReleaseBundleV2 manifest without `forProvider.name` (as the Upjet provider's examples
/// write it) creates the bundle named by `metadata.name` and keeps that as its external
/// name; a second manifest naming the same bundle in `forProvider.name` reaches the same
/// bundle (adopted: no second create, no write).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_bundle_takes_its_name_from_the_external_name() {
    let (k, d) = kind("ReleaseBundleV2");
    let mut env = start(super::kinds(), Arc::new(ClientCache::new(crate::PROVIDER))).await;
    let client = deploy(&env).await;
    let mut params = super::examples::example_params(d);
    params.as_object_mut().expect("object").remove("name");
    env.add(
        &k,
        provider_family::examples::manifest(d, "upjet-bundle", params.clone(), false),
    )
    .await;
    converge(&env.mrs).await;
    let mr = env.mrs[0].get().await;
    assert_eq!(external_name(&mr), "upjet-bundle");
    assert!(mr.data["spec"]["forProvider"].get("name").is_none());
    let record: Value = client
        .request(
            Service::Lifecycle,
            http::Method::GET,
            "/api/v2/release_bundle/records/{name}/{version}",
            Idempotency::Idempotent,
        )
        .param("upjet-bundle")
        .param("1.0.0")
        .send_value()
        .await
        .expect("the bundle is named after the MR");
    assert_eq!(record["release_bundle_name"], "upjet-bundle");
    let creates = env
        .sim
        .request_count("POST", "/lifecycle/api/v2/release_bundle");
    assert_eq!(creates, 1);

    // The same bundle, named in forProvider by an MR of another name: adopted.
    params["name"] = json!("upjet-bundle");
    env.add(
        &k,
        provider_family::examples::manifest(d, "named-bundle", params, false),
    )
    .await;
    converge(&env.mrs).await;
    assert_eq!(
        env.sim
            .request_count("POST", "/lifecycle/api/v2/release_bundle"),
        1,
        "no second bundle"
    );
    assert_eq!(external_name(&env.mrs[1].get().await), "named-bundle");
    assert_no_writes(&env.sim, &env.mrs, 2).await;
}

/// ItemProperties without an `itemPath` manage the repository's own properties, under the
/// identifier `<repo>` (upstream's import ID), and stay quiet afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_properties_without_a_path_are_the_repositorys_own() {
    let (k, d) = kind("ItemProperties");
    let mut env = start(super::kinds(), Arc::new(ClientCache::new(crate::PROVIDER))).await;
    let client = deploy(&env).await;
    env.add(
        &k,
        provider_family::examples::manifest(
            d,
            "repo-properties",
            json!({"repoKey": EXAMPLE_REPOSITORY, "properties": {"owner": ["platform-team"]}}),
            false,
        ),
    )
    .await;
    converge(&env.mrs).await;
    assert_eq!(external_name(&env.mrs[0].get().await), EXAMPLE_REPOSITORY);
    let props: Value = client
        .request(
            Service::Artifactory,
            http::Method::GET,
            "/api/storage/{*item}",
            Idempotency::Idempotent,
        )
        .param(EXAMPLE_REPOSITORY)
        .query("properties", "")
        .send_value()
        .await
        .expect("read");
    assert_eq!(props["properties"]["owner"], json!(["platform-team"]));
    assert_no_writes(&env.sim, &env.mrs, 2).await;
}
