//! Checklist section D. Pause and management policies (`docs/managed-reconciler.md` §17).

use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn conformance_050_paused_by_annotation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::PAUSED, "true")])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.calls().is_empty());
    let o = e.must(N, "w1").await;
    assert_eq!(
        synced(&o),
        ("False".into(), "ReconcilePaused".into(), String::new())
    );
    assert!(ready(&o).is_none());
    let ev = e.events("w1").await;
    assert!(ev.iter().any(|x| x.reason.as_deref() == Some("ReconciliationPaused")
        && x.type_.as_deref() == Some("Normal")
        && x.message.as_deref() == Some("Reconciliation is paused either through the `spec.managementPolicies` or the pause annotation")));
}

#[tokio::test]
async fn conformance_051_paused_capital_true_not_paused() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::PAUSED, "True")])
        .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"connect".to_string()));
}

#[tokio::test]
async fn conformance_052_unpause_triggers_reconcile() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::PAUSED, "true")])
        .await;
    let (stop, h) = start_controller(&e, N).await;
    wait_for(|| async {
        e.reasons("w1")
            .await
            .contains(&"ReconciliationPaused".to_string())
            .then_some(())
    })
    .await;
    assert!(e.calls().is_empty());
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::PAUSED: null}}}),
    )
    .await;
    wait_for(|| async { e.calls().contains(&"connect".to_string()).then_some(()) }).await;
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_053_empty_policies_pause() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"managementPolicies": []}), &[])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.calls().is_empty());
    assert_eq!(synced(&e.must(N, "w1").await).1, "ReconcilePaused");
}

#[tokio::test]
async fn conformance_054_empty_policies_feature_disabled_full_control() {
    let mut e = Env::new().await;
    e.mp_enabled = false;
    e.create(N, "w1", json!({"managementPolicies": []}), &[])
        .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_055_non_default_policy_feature_disabled() {
    let mut e = Env::new().await;
    e.mp_enabled = false;
    e.create(N, "w1", json!({"managementPolicies": ["Observe"]}), &[])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.calls().is_empty());
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with(
        "`spec.managementPolicies` is set to a non-default value but the feature is not enabled: "
    ));
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotUseInvalidManagementPolicy".to_string())
    );
}

#[tokio::test]
async fn conformance_056_unsupported_policy_set() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Create", "Delete"]}),
        &[],
    )
    .await;
    e.create(
        N,
        "w2",
        json!({"managementPolicies": ["*", "Observe"]}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert_eq!(e.reconcile(N, "w2").await, Outcome::Done);
    assert_eq!(
        synced(&e.must(N, "w1").await).2,
        "`spec.managementPolicies` is set to a value([Create Delete]) which is not supported. Check docs for supported policies"
    );
    assert_eq!(
        synced(&e.must(N, "w2").await).2,
        "`spec.managementPolicies` is set to a value([* Observe]) which is not supported. Check docs for supported policies"
    );
}

#[tokio::test]
async fn conformance_057_duplicate_actions() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Observe"]}),
        &[],
    )
    .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(
        synced(&e.must(N, "w1").await).2,
        "observe failed: external resource does not exist"
    );
    assert!(!e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_058_observe_only_existing() {
    let e = Env::new().await;
    e.script().store.insert("w1".into(), json!({"x": "theirs"}));
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "mine"}, "managementPolicies": ["Observe"]}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let g = e.must(N, "w1").await.metadata.generation;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("w1"));
    assert!(has_finalizer(&o));
    assert_eq!(at_provider(&o)["x"], "theirs");
    assert_eq!(ready(&o), Some(("True".into(), "Available".into())));
    assert_eq!(synced(&o).0, "True");
    assert!(!e.calls().contains(&"update".to_string()));
    assert_eq!(o.metadata.generation, g);
}

#[tokio::test]
async fn conformance_059_observe_only_missing() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"managementPolicies": ["Observe"]}), &[])
        .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    let m = e.must(N, "w1").await;
    assert_eq!(
        synced(&m).2,
        "observe failed: external resource does not exist"
    );
    assert!(ready(&m).is_none());
    assert!(!e.calls().contains(&"create".to_string()));
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotObserveExternalResource")
        && x.message.as_deref() == Some("external resource does not exist")));
}

#[tokio::test]
async fn conformance_060_import() {
    let e = Env::new().await;
    e.script().late_init = true;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "theirs", "description": "d"}));
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "LateInitialize"]}),
        &[],
    )
    .await;
    for _ in 0..3 {
        e.reconcile(N, "w1").await;
    }
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["forProvider"]["x"], "theirs");
    let calls = e.calls();
    for c in ["create", "update", "delete"] {
        assert!(!calls.contains(&c.to_string()));
    }
}

#[tokio::test]
async fn conformance_061_observe_update_missing_calls_update() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Update"]}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let calls = e.calls();
    assert!(!calls.contains(&"create".to_string()));
    assert!(calls.contains(&"update".to_string()));
    assert!(
        synced(&e.must(N, "w1").await)
            .2
            .starts_with("update failed: ")
    );
}

#[tokio::test]
async fn conformance_062_observe_delete_missing() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Delete"]}),
        &[],
    )
    .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
    assert!(!e.calls().contains(&"create".to_string()));
}
