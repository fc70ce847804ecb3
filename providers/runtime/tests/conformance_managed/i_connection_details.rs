//! Checklist section I. Connection details (`docs/managed-reconciler.md` §17).

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
    e.secret(NS, "pw", &[("password", "hunter2")]).await;
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

// A Secret input given only in initProvider is read too (Create uses initProvider), and
// its absence does not block Connect: it matters only when the object must be created.
#[tokio::test]
async fn init_provider_secret_inputs_are_read_and_may_be_missing() {
    let e = Env::new().await;
    e.secret(NS, "pw", &[("password", "hunter2")]).await;
    e.create(
        N,
        "i1",
        json!({"initProvider": {"passwordSecretRef": {"name": "pw", "key": "password"}}}),
        &[],
    )
    .await;
    e.create(
        N,
        "i2",
        json!({"initProvider": {"passwordSecretRef": {"name": "gone", "key": "password"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "i1").await;
    e.reconcile(N, "i2").await;
    assert_eq!(
        e.script().connect_secrets,
        vec![Some("hunter2".to_string()), None]
    );
    let (status, _, message) = synced(&e.must(N, "i2").await);
    assert!(
        !message.contains("cannot get secret"),
        "{status}: {message}"
    );
}

// Whole-Secret inputs (`KindInfo::whole_secret_refs`, Upjet's sensitive map fields) reach the
// adapter as one entry `<field>.<key>` per key of the Secret, next to the key refs
// (`KindInfo::secret_refs`, one entry `<field>`), in both scopes, with numeric list segments;
// a missing Secret fails Connect.

fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn whole_secret_refs_give_every_key_namespaced() {
    let e = Env::new().await;
    e.secret(NS, "hdrs", &[("X-One", "1"), ("x.two", "2")])
        .await;
    e.secret(NS, "h1s", &[("token", "t1")]).await;
    e.secret(NS, "pw", &[("password", "p"), ("unused", "u")])
        .await;
    e.create(
        N,
        "p1",
        json!({"forProvider": {
            "passwordSecretRef": {"name": "pw", "key": "password"},
            // A namespaced MR reads its own namespace; a namespace in the ref is ignored.
            "headersSecretRef": {"name": "hdrs", "namespace": "elsewhere"},
            "handler": [{"name": "h0"}, {"name": "h1", "secretsSecretRef": {"name": "h1s"}}]}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "p1").await, Outcome::Backoff);
    assert_eq!(
        e.script().connect_all_secrets,
        vec![map(&[
            ("handler.1.secretsSecretRef.token", "t1"),
            ("headersSecretRef.X-One", "1"),
            ("headersSecretRef.x.two", "2"),
            ("passwordSecretRef", "p"),
        ])]
    );
}

#[tokio::test]
async fn whole_secret_refs_name_their_namespace_legacy() {
    let e = Env::new().await;
    e.secret("team-b", "hdrs", &[("a", "1")]).await;
    e.create(
        L,
        "p1",
        json!({"forProvider": {"headersSecretRef": {"name": "hdrs", "namespace": "team-b"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(L, "p1").await, Outcome::Backoff);
    assert_eq!(
        e.script().connect_all_secrets,
        vec![map(&[("headersSecretRef.a", "1")])]
    );
}

#[tokio::test]
async fn a_missing_whole_secret_fails_connect_like_a_missing_key_ref() {
    let e = Env::new().await;
    e.create(
        N,
        "p1",
        json!({"forProvider": {"headersSecretRef": {"name": "gone"}}}),
        &[],
    )
    .await;
    e.create(
        N,
        "p2",
        json!({"forProvider": {"passwordSecretRef": {"name": "gone", "key": "password"}}}),
        &[],
    )
    .await;
    for (name, field) in [("p1", "headersSecretRef"), ("p2", "passwordSecretRef")] {
        assert_eq!(e.reconcile(N, name).await, Outcome::Backoff);
        let o = e.must(N, name).await;
        let (status, _, message) = synced(&o);
        let want = format!(
            "connect failed: cannot get secret \"{NS}/gone\" for spec.forProvider.{field}: "
        );
        assert_eq!(status, "False");
        assert!(message.starts_with(&want), "{message}");
        let events = e.events_in(NS, name).await;
        assert!(
            events
                .iter()
                .any(|ev| ev.reason.as_deref() == Some("CannotConnectToProvider")
                    && ev
                        .message
                        .as_deref()
                        .is_some_and(|m| m.starts_with(&want["connect failed: ".len()..]))),
            "{events:?}"
        );
    }
    assert!(e.script().connect_all_secrets.is_empty());
}
