//! Checklist section B. Observe, drift, updates (`docs/managed-reconciler.md` §17).

use std::time::Duration;

use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn conformance_018_not_found_leads_to_create() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
    assert!(e.script().store.contains_key("w1"));
}

async fn observe_error_case(err: &str) {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().observe_err = Some(err.into());
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    let (s, _, m) = synced(&o);
    assert_eq!(s, "False");
    assert_eq!(m, format!("observe failed: {err}"));
    assert_eq!(ready(&o), Some(("True".into(), "Available".into())));
    assert!(!e.calls().contains(&"create".to_string()));
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotObserveExternalResource")
        && x.message.as_deref() == Some(err)));
}

#[tokio::test]
async fn conformance_019_observe_500() {
    observe_error_case("500 Internal Server Error: storage is down").await;
}

#[tokio::test]
async fn conformance_020_observe_401_403() {
    observe_error_case("401 Unauthorized: bad credentials").await;
    observe_error_case("403 Forbidden: not an admin").await;
}

#[tokio::test]
async fn conformance_021_observe_timeout() {
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(180));
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.script().observe_delay = Some(Duration::from_secs(5));
    let mut ctx = e.ctx();
    ctx.timeout = Duration::from_millis(500);
    let o = e.rec_with(N, ctx).reconcile(Some(NS), "w1").await;
    assert_eq!(o, Outcome::Backoff);
    let m = e.must(N, "w1").await;
    assert_eq!(synced(&m).2, "observe failed: context deadline exceeded");
    assert!(!e.calls().contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_022_up_to_date() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    let before = e.events("w1").await.len();
    let status_writes = e.provider_requests("update/status");
    assert!(status_writes > 0, "converging wrote the status");
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    let m = e.must(N, "w1").await;
    assert_eq!(
        synced(&m),
        ("True".into(), "ReconcileSuccess".into(), String::new())
    );
    assert_eq!(e.events("w1").await.len(), before);
    // QUIRK Q10: a poll that changes nothing sends no status update (upstream sends one).
    assert_eq!(e.provider_requests("update/status"), status_writes);
    // One that changes the status still does: a new reconcile-request token.
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {"crossplane.io/reconcile-requested-at": "kick-1"}}}),
    )
    .await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(e.provider_requests("update/status"), status_writes + 1);
    assert_eq!(
        e.must(N, "w1").await.data["status"]["lastHandledReconcileAt"],
        "kick-1"
    );
}

#[tokio::test]
async fn conformance_023_drift_reverted() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(
        e.script().update_params.last().expect("update")["x"],
        "want"
    );
    assert!(
        e.reasons("w1")
            .await
            .contains(&"UpdatedExternalResource".to_string())
    );
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
    // The drift histogram has one observation.
    let gvk = e.widget.info.gvk_label(N);
    let h = e
        .metrics
        .drift
        .get_or_create(&ManagedMetrics::gvk(&gvk))
        .clone();
    let text = hist_text(h);
    assert!(text.contains("h_count 1"), "{text}");
}

#[tokio::test]
async fn update_right_after_create_marks_available() {
    // The adapter's view still carries `Ready=False Creating` from the create; a successful
    // update must not write that stale copy back over the `Available` marked at observe.
    let e = Env::new().await;
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("False".to_string(), "Creating".to_string()))
    );
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {
            meta::EXTERNAL_CREATE_PENDING: stamp_ago(61),
            meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60)}}}),
    )
    .await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert!(e.calls().contains(&"update".to_string()));
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("True".to_string(), "Available".to_string()))
    );
}

#[tokio::test]
async fn conformance_024_update_fails() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.script().update_err = Some("500 Internal Server Error".into());
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with("update failed: "), "{m}");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotUpdateExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_025_immutable_field() {
    let e = Env::new().await;
    e.script().immutable_size = true;
    e.create(N, "w1", json!({"forProvider": {"size": 1}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.patch(N, "w1", json!({"spec": {"forProvider": {"size": 2}}}))
        .await;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with("update failed: "), "{m}");
    assert!(
        m.contains("refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument \"size\""),
        "{m}"
    );
    let calls = e.calls();
    assert!(!calls.contains(&"delete".to_string()) && !calls.contains(&"create".to_string()));
}

#[tokio::test]
async fn conformance_026_deleted_out_of_band_is_recreated() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().store.clear();
    e.clear();
    // create-succeeded is fresh; wait out the grace period by back-dating it
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60), meta::EXTERNAL_CREATE_PENDING: stamp_ago(61)}}}),
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(e.calls().contains(&"create".to_string()));
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("False".into(), "Creating".into()))
    );
    e.reconcile(N, "w1").await;
    assert_eq!(
        ready(&e.must(N, "w1").await),
        Some(("True".into(), "Available".into()))
    );
}

#[tokio::test]
async fn conformance_027_update_status_kept() {
    let e = Env::new().await;
    e.script().update_sets = Some(json!({"x": "from-update"}));
    e.create(N, "w1", json!({"forProvider": {"x": "want"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    e.reconcile(N, "w1").await;
    assert_eq!(at_provider(&e.must(N, "w1").await)["x"], "from-update");
}

#[tokio::test]
async fn conformance_028_late_initialisation() {
    let e = Env::new().await;
    e.script().late_init = true;
    e.script().store.insert(
        "w1".into(),
        json!({"description": "server-default", "x": "mine"}),
    );
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "mine"}}),
        &[(meta::EXTERNAL_NAME, "w1")],
    )
    .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    let g1 = e.must(N, "w1").await.metadata.generation;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(
        o.data["spec"]["forProvider"]["description"],
        "server-default"
    );
    assert!(o.metadata.generation > g1);
    assert!(
        at_provider(&o).get("id").is_none(),
        "atProvider not persisted in the late-init reconcile"
    );
    e.reconcile(N, "w1").await;
    assert_eq!(at_provider(&e.must(N, "w1").await)["id"], "w1");

    // A value the user set is never overwritten.
    e.script().store.insert(
        "w2".into(),
        json!({"description": "server-default", "x": "theirs"}),
    );
    e.create(
        N,
        "w2",
        json!({"forProvider": {"x": "mine"}}),
        &[(meta::EXTERNAL_NAME, "w2")],
    )
    .await;
    e.reconcile(N, "w2").await;
    e.reconcile(N, "w2").await;
    let o = e.must(N, "w2").await;
    assert_eq!(o.data["spec"]["forProvider"]["x"], "mine");
    assert_eq!(
        o.data["spec"]["forProvider"]["description"],
        "server-default"
    );
}

#[tokio::test]
async fn conformance_029_late_initialize_disabled() {
    let e = Env::new().await;
    e.script().late_init = true;
    e.script()
        .store
        .insert("w1".into(), json!({"description": "server-default"}));
    e.create(
        N,
        "w1",
        json!({"managementPolicies": ["Observe", "Create", "Update", "Delete"]}),
        &[(meta::EXTERNAL_NAME, "w1")],
    )
    .await;
    let g = e.must(N, "w1").await.metadata.generation;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.metadata.generation, g);
    assert!(o.data["spec"]["forProvider"].get("description").is_none());
}

#[tokio::test]
async fn conformance_030_init_provider_at_create() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "b"}, "initProvider": {"description": "a", "x": "a"}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let p = e.script().create_params[0].clone();
    assert_eq!(p["description"], "a");
    assert_eq!(p["x"], "b");
}

#[tokio::test]
async fn conformance_031_init_provider_ignored_after_create() {
    let e = Env::new().await;
    e.create(N, "w1", json!({"initProvider": {"description": "a"}}), &[])
        .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"description": "changed"}));
    e.patch(
        N,
        "w1",
        json!({"spec": {"initProvider": {"description": "edited"}}}),
    )
    .await;
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert!(!e.calls().contains(&"update".to_string()));
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
}

#[tokio::test]
async fn conformance_032_init_provider_with_feature_disabled() {
    let mut e = Env::new().await;
    e.mp_enabled = false;
    e.create(N, "w1", json!({"initProvider": {"description": "a"}}), &[])
        .await;
    e.reconcile(N, "w1").await;
    assert!(e.script().create_params[0].get("description").is_none());
}

#[tokio::test]
async fn conformance_033_policy_without_update_leaves_drift() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "want"}, "managementPolicies": ["Observe", "Create", "Delete", "LateInitialize"]}),
        &[],
    )
    .await;
    e.converge(N, "w1").await;
    e.script()
        .store
        .insert("w1".into(), json!({"x": "changed"}));
    let before = e.events("w1").await.len();
    e.clear();
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert!(!e.calls().contains(&"update".to_string()));
    assert_eq!(e.events("w1").await.len(), before);
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
}
