//! Checklist section E. Conditions and events (`docs/managed-reconciler.md` §17).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Event;
use provider_runtime::managed::*;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn conformance_063_stable_last_transition_time() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    let t1 = cond(&e.must(N, "w1").await, "Synced")
        .expect("s")
        .last_transition_time;
    e.reconcile(N, "w1").await;
    let t2 = cond(&e.must(N, "w1").await, "Synced")
        .expect("s")
        .last_transition_time;
    assert_eq!(t1, t2);
}

#[tokio::test]
async fn conformance_064_message_change_new_transition_time() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.set_status(
        N,
        "w1",
        json!({"conditions": [{"type": "Synced", "status": "False", "reason": "ReconcileError",
            "message": "observe failed: old", "lastTransitionTime": "2020-01-01T00:00:00Z",
            "observedGeneration": 1}]}),
    )
    .await;
    e.script().observe_err = Some("new".into());
    e.reconcile(N, "w1").await;
    let c = cond(&e.must(N, "w1").await, "Synced").expect("s");
    assert_eq!(c.message, "observe failed: new");
    assert_ne!(c.last_transition_time, "2020-01-01T00:00:00Z");
}

#[tokio::test]
async fn conformance_065_generation_change() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    let g1 = e.must(N, "w1").await.metadata.generation.expect("g");
    let mut st = e.must(N, "w1").await.data["status"].clone();
    for c in st["conditions"].as_array_mut().expect("conds") {
        c["lastTransitionTime"] = json!("2020-01-01T00:00:00Z");
    }
    e.set_status(N, "w1", st).await;
    e.patch(
        N,
        "w1",
        json!({"spec": {"forProvider": {"description": "d"}}}),
    )
    .await;
    e.script()
        .store
        .insert("w1".into(), json!({"description": "d"}));
    e.reconcile(N, "w1").await;
    let c = cond(&e.must(N, "w1").await, "Synced").expect("s");
    assert_eq!(c.observed_generation, g1 + 1);
    assert_ne!(c.last_transition_time, "2020-01-01T00:00:00Z");
}

#[tokio::test]
async fn conformance_066_condition_order() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    e.set_status(
        N,
        "w1",
        json!({"conditions": [
            {"type": "Custom", "status": "True", "reason": "X", "lastTransitionTime": "2020-01-01T00:00:00Z"},
            {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "m", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}),
    )
    .await;
    e.reconcile(N, "w1").await;
    let types: Vec<String> = conds(&e.must(N, "w1").await)
        .into_iter()
        .map(|c| c.type_)
        .collect();
    assert_eq!(&types[..3], &["Custom", "Synced", "Ready"]);
    let mut dedup = types.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), types.len());
}

#[tokio::test]
async fn conformance_067_no_top_level_observed_generation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    assert!(
        e.must(N, "w1").await.data["status"]
            .get("observedGeneration")
            .is_none()
    );
}

#[tokio::test]
async fn conformance_068_core_v1_events_with_source_and_annotation() {
    let e = Env::new().await;
    // The reconciler runs with the provider's RBAC (no events.k8s.io).
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let ev = e.events("w1").await;
    let created = ev
        .iter()
        .find(|x| x.reason.as_deref() == Some("CreatedExternalResource"))
        .expect("event");
    assert_eq!(
        created.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("managed/widget.test.fake.m.crossplane.io")
    );
    assert_eq!(
        created
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("external-name"))
            .map(String::as_str),
        Some("w1")
    );
    // legacy MR: events in `default`
    e.create(L, "l1", json!({}), &[]).await;
    e.reconcile(L, "l1").await;
    let lev = e.events_in("default", "l1").await;
    assert!(
        lev.iter()
            .any(|x| x.source.as_ref().and_then(|s| s.component.as_deref())
                == Some("managed/widget.test.fake.crossplane.io"))
    );
}

#[tokio::test]
async fn conformance_069_event_aggregation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.script().observe_err = Some("500 Internal Server Error".into());
    let r = e.rec(N);
    r.reconcile(Some(NS), "w1").await;
    r.reconcile(Some(NS), "w1").await;
    let ev: Vec<Event> = e
        .events("w1")
        .await
        .into_iter()
        .filter(|x| x.reason.as_deref() == Some("CannotObserveExternalResource"))
        .collect();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].count, Some(2));
}

#[tokio::test]
async fn conformance_070_last_async_operation() {
    let e = Env::new().await;
    e.script().create_err = Some("400 Bad Request: bad".into());
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    let la = cond(&o, "LastAsyncOperation").expect("LastAsyncOperation");
    assert_eq!(
        (la.status.as_str(), la.reason.as_str()),
        ("False", "AsyncCreateFailure")
    );
    assert_eq!(la.message, "async create failed: 400 Bad Request: bad");
    assert_eq!(
        synced(&o).2,
        "create failed: async create failed: 400 Bad Request: bad"
    );
    e.script().create_err = None;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w1").await;
    let la = cond(&e.must(N, "w1").await, "LastAsyncOperation").expect("lao");
    assert_eq!(
        (la.status.as_str(), la.reason.as_str()),
        ("True", "Success")
    );
}

// §8.2: floods are limited per object (burst 25), like client-go's spam filter.
#[tokio::test]
async fn event_flood_is_limited_per_object() {
    use provider_runtime::managed::events::{EventRecorder, EventType, InvolvedObject};
    let e = Env::new().await;
    let rec = EventRecorder::new(
        e.provider.clone(),
        "managed/widget.test.fake.m.crossplane.io",
    );
    let obj = InvolvedObject {
        api_version: "test.fake.m.crossplane.io/v1alpha1".into(),
        kind: "Widget".into(),
        name: "w1".into(),
        namespace: Some(NS.into()),
        uid: "u1".into(),
        resource_version: None,
    };
    for i in 0..30 {
        rec.record(
            &obj,
            BTreeMap::new(),
            EventType::Warning,
            "CannotObserveExternalResource",
            &format!("failure {i}"),
        )
        .await;
    }
    assert_eq!(e.events("w1").await.len(), 25);
    // Another object has its own budget.
    let other = InvolvedObject {
        name: "w2".into(),
        uid: "u2".into(),
        ..obj
    };
    rec.record(&other, BTreeMap::new(), EventType::Normal, "X", "y")
        .await;
    assert_eq!(e.events("w2").await.len(), 1);
}

/// An adapter that sets Ready itself during Observe (an object that exists but is not
/// available yet) keeps it; once it stops, the object is Available.
#[tokio::test]
async fn an_adapter_set_ready_condition_is_kept() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.script().not_ready = Some("generating (50%)".into());
    e.converge(N, "w1").await;
    e.reconcile(N, "w1").await;
    let ready = cond(&e.must(N, "w1").await, "Ready").expect("Ready");
    assert_eq!(
        (
            ready.status.as_str(),
            ready.reason.as_str(),
            ready.message.as_str()
        ),
        ("False", "Creating", "generating (50%)")
    );
    e.script().not_ready = None;
    e.reconcile(N, "w1").await;
    let ready = cond(&e.must(N, "w1").await, "Ready").expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Available")
    );
}
