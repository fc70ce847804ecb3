//! Checklist section I. Connection details (`shared/reference/managed-reconciler.md` §17).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::PostParams;
use provider_runtime::managed::*;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn conformance_100_secret_created_early() {
    let e = Env::new().await;
    e.script().create_err = Some("400 Bad Request".into());
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "s"}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s = secrets.get("s").await.expect("secret exists");
    assert_eq!(
        s.type_.as_deref(),
        Some("connection.crossplane.io/v1alpha1")
    );
    let owner = &s.metadata.owner_references.expect("owner")[0];
    assert_eq!(owner.controller, Some(true));
    assert_eq!(owner.name, "w1");
    assert!(s.data.unwrap_or_default().is_empty());
}

#[tokio::test]
async fn conformance_101_additive_publishing() {
    let e = Env::new().await;
    e.script().store.insert("w1".into(), json!({}));
    e.script().observe_details = BTreeMap::from([
        ("a".to_string(), b"1".to_vec()),
        ("b".to_string(), b"2".to_vec()),
    ]);
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "s"}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    e.script().observe_details = BTreeMap::from([
        ("b".to_string(), b"3".to_vec()),
        ("c".to_string(), b"4".to_vec()),
    ]);
    e.reconcile(N, "w1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let d = secrets.get("s").await.expect("secret").data.expect("data");
    let get = |k: &str| d.get(k).map(|b| b.0.clone());
    assert_eq!(get("a"), Some(b"1".to_vec()));
    assert_eq!(get("b"), Some(b"3".to_vec()));
    assert_eq!(get("c"), Some(b"4".to_vec()));
}

#[tokio::test]
async fn conformance_102_foreign_secret_refused() {
    let e = Env::new().await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s: Secret =
        serde_json::from_value(json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {}}))
            .expect("secret");
    secrets
        .create(&PostParams::default(), &s)
        .await
        .expect("create secret");
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "s"}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let msg = "cannot create or update connection secret: refusing to modify uncontrolled secret of type \"Opaque\"";
    assert_eq!(synced(&e.must(N, "w1").await).2, msg);
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotPublishConnectionDetails")
        && x.message.as_deref() == Some(msg)));
}

#[tokio::test]
async fn conformance_103_legacy_secret_namespace() {
    let e = Env::new().await;
    e.ensure_ns("elsewhere").await;
    e.create(
        L,
        "l1",
        json!({"writeConnectionSecretToRef": {"name": "s", "namespace": "elsewhere"}}),
        &[],
    )
    .await;
    e.reconcile(L, "l1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), "elsewhere");
    assert!(secrets.get_opt("s").await.expect("get").is_some());
}

// Secret inputs (`...SecretRef`) are read by the reconciler and handed to the adapter.
#[tokio::test]
async fn secret_inputs_reach_the_adapter_not_the_status() {
    let e = Env::new().await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": "pw"}, "stringData": {"password": "hunter2"}}),
    )
    .expect("secret");
    secrets
        .create(&PostParams::default(), &s)
        .await
        .expect("create secret");
    e.create(
        N,
        "w1",
        json!({"forProvider": {"passwordSecretRef": {"name": "pw", "key": "password"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.script().connect_secrets,
        vec![Some("hunter2".to_string())]
    );
    let o = e.must(N, "w1").await;
    assert!(
        !serde_json::to_string(&o.data)
            .expect("json")
            .contains("hunter2")
    );
}
