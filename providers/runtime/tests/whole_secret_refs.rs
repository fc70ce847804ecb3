//! Secret inputs of a Kind read by the reconciler before Connect: key refs
//! (`KindInfo::secret_refs`, one entry `<field>`) and whole-Secret refs
//! (`KindInfo::whole_secret_refs`, Upjet's sensitive map fields: one entry `<field>.<key>` per
//! key of the Secret), in both scopes, with numeric list segments, and the error of a
//! missing Secret.

mod managed_support;

use std::collections::BTreeMap;

use managed_support::*;
use provider_runtime::managed::*;
use serde_json::json;

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
    e.create_mr(
        &e.part,
        Scope::Namespaced,
        "p1",
        json!({
            "passwordSecretRef": {"name": "pw", "key": "password"},
            // A namespaced MR reads its own namespace; a namespace in the ref is ignored.
            "headersSecretRef": {"name": "hdrs", "namespace": "elsewhere"},
            "handler": [{"name": "h0"}, {"name": "h1", "secretsSecretRef": {"name": "h1s"}}]}),
    )
    .await;
    assert_eq!(
        e.reconcile(&e.part, Scope::Namespaced, "p1").await,
        Outcome::Backoff
    );
    assert_eq!(
        lock(&e.s).connect_secrets,
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
    e.create_mr(
        &e.part,
        Scope::Cluster,
        "p1",
        json!({"headersSecretRef": {"name": "hdrs", "namespace": "team-b"}}),
    )
    .await;
    assert_eq!(
        e.reconcile(&e.part, Scope::Cluster, "p1").await,
        Outcome::Backoff
    );
    assert_eq!(
        lock(&e.s).connect_secrets,
        vec![map(&[("headersSecretRef.a", "1")])]
    );
}

#[tokio::test]
async fn a_missing_whole_secret_fails_connect_like_a_missing_key_ref() {
    let e = Env::new().await;
    e.create_mr(
        &e.part,
        Scope::Namespaced,
        "p1",
        json!({"headersSecretRef": {"name": "gone"}}),
    )
    .await;
    e.create_mr(
        &e.part,
        Scope::Namespaced,
        "p2",
        json!({"passwordSecretRef": {"name": "gone", "key": "password"}}),
    )
    .await;
    for (name, field) in [("p1", "headersSecretRef"), ("p2", "passwordSecretRef")] {
        assert_eq!(
            e.reconcile(&e.part, Scope::Namespaced, name).await,
            Outcome::Backoff
        );
        let o = e.get(&e.part, Scope::Namespaced, name).await;
        let synced = cond(&o, "Synced").expect("Synced");
        let want = format!(
            "connect failed: cannot get secret \"{NS}/gone\" for spec.forProvider.{field}: "
        );
        assert_eq!(synced.status, "False");
        assert!(synced.message.starts_with(&want), "{}", synced.message);
        let events = e.events_in(NS, name).await;
        assert!(
            events.iter().any(|(r, m)| r == "CannotConnectToProvider"
                && m.starts_with(&want["connect failed: ".len()..])),
            "{events:?}"
        );
    }
    assert!(lock(&e.s).connect_secrets.is_empty());
}
