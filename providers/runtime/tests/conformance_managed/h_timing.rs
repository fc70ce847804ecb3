//! Checklist section H. Timing, triggers, annotations (`docs/managed-reconciler.md` §17).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use kube::api::DynamicObject;
use provider_runtime::managed::meta::{self, FilterKey};
use provider_runtime::managed::*;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn conformance_093_backoff_resets_after_success() {
    // The limiter sequence is unit-tested in `ratelimit`; here the controller resets it after
    // an up-to-date reconcile.
    let q = provider_runtime::managed::controller::WorkQueue::new(
        "t",
        Arc::new(ManagedMetrics::unregistered()),
    );
    let k = provider_runtime::managed::controller::ObjectKey {
        namespace: NS.into(),
        name: "w1".into(),
    };
    for _ in 0..3 {
        q.add_rate_limited(k.clone());
    }
    assert_eq!(q.failures(&k), 3);
    q.forget(&k);
    assert_eq!(q.failures(&k), 0);
    let b = provider_runtime::managed::ratelimit::ItemBackoff::default();
    let seq: Vec<u64> = (0..8).map(|_| b.next("x").as_secs()).collect();
    assert_eq!(seq, vec![1, 2, 4, 8, 16, 32, 60, 60]);
}

#[tokio::test]
async fn conformance_094_poll_interval_annotation() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::POLL_INTERVAL, "30s")])
        .await;
    e.converge(N, "w1").await;
    match e.reconcile(N, "w1").await {
        Outcome::After(d) => assert!(d <= Duration::from_secs(60), "{d:?}"),
        o => panic!("{o:?}"),
    }
    for v in ["1d", "0s", "-5m"] {
        e.patch(
            N,
            "w1",
            json!({"metadata": {"annotations": {meta::POLL_INTERVAL: v}}}),
        )
        .await;
        assert!(is_after_poll(&e.reconcile(N, "w1").await), "{v}");
    }
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::POLL_INTERVAL: "100ms"}}}),
    )
    .await;
    let mut ctx = e.ctx();
    ctx.poll_jitter = Duration::ZERO;
    assert_eq!(
        e.rec_with(N, ctx).reconcile(Some(NS), "w1").await,
        Outcome::After(Duration::from_secs(1))
    );
}

#[tokio::test]
async fn conformance_095_reconcile_request() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::RECONCILE_REQUESTED_AT, "t1")])
        .await;
    e.reconcile(N, "w1").await; // the create path
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["status"]["lastHandledReconcileAt"], "t1");
    let handled = |v: Vec<Event>| {
        v.into_iter()
            .filter(|x| x.reason.as_deref() == Some("ReconcileRequestHandled"))
            .map(|x| x.count.unwrap_or(1))
            .sum::<i32>()
    };
    assert_eq!(handled(e.events("w1").await), 1);
    e.reconcile(N, "w1").await;
    assert_eq!(handled(e.events("w1").await), 1);
}

#[tokio::test]
async fn conformance_096_event_filter() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    let key = |o: &DynamicObject| FilterKey::of(&o.metadata);
    let base = e.must(N, "w1").await;
    // status-only edit
    e.set_status(N, "w1", json!({"atProvider": {"x": "1"}}))
        .await;
    assert_eq!(key(&e.must(N, "w1").await), key(&base));
    // pending / failed alone
    e.patch(N, "w1", json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: "p", meta::EXTERNAL_CREATE_FAILED: "f"}}}))
        .await;
    assert_eq!(key(&e.must(N, "w1").await), key(&base));
    // label, annotation and spec edits qualify, and the controller reacts to them
    let (stop, h) = start_controller(&e, N).await;
    wait_for(|| async {
        let o = e.get(N, "w1").await?;
        (ready(&o) == Some(("True".into(), "Available".into()))).then_some(())
    })
    .await;
    for (i, p) in [
        json!({"metadata": {"labels": {"l": "1"}}}),
        json!({"metadata": {"annotations": {"reconcile/kick": "1"}}}),
        json!({"spec": {"forProvider": {"description": "new"}}}),
    ]
    .into_iter()
    .enumerate()
    {
        let before = e.must(N, "w1").await;
        let n = e.calls().iter().filter(|c| *c == "observe").count();
        e.patch(N, "w1", p).await;
        assert_ne!(key(&e.must(N, "w1").await), key(&before), "edit {i}");
        wait_for(|| async {
            (e.calls().iter().filter(|c| *c == "observe").count() > n).then_some(())
        })
        .await;
    }
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_097_global_rate_limit() {
    let e = Env::new().await;
    for i in 0..30 {
        e.create(
            N,
            &format!("w{i}"),
            json!({}),
            &[(meta::EXTERNAL_NAME, &format!("w{i}"))],
        )
        .await;
        e.script().store.insert(format!("w{i}"), json!({}));
    }
    let mut reg = prometheus_client::registry::Registry::default();
    let metrics = Arc::new(ManagedMetrics::new(&mut reg));
    let mut ctx = e.ctx().with_max_reconcile_rate(2);
    ctx.metrics = metrics.clone();
    let stop = ctx.shutdown.clone();
    let reg_k = register_shared(
        e.widget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: false,
        }),
    );
    // The bucket was full (20 tokens) before this instant and cannot hold more.
    let t0 = std::time::Instant::now();
    let h = tokio::spawn(reg_k.start(ctx, N));
    // All 30 are eventually reconciled (observed at least once)...
    wait_for(|| async {
        let s = e.script();
        (s.calls.iter().filter(|c| *c == "observe").count() >= 30).then_some(())
    })
    .await;
    // ...and the bucket (rate 2/s, burst 20) let the 30th first reconcile start only after
    // 10 more tokens had accrued: at least 5 s after t0. This is a lower bound, so a slow
    // machine cannot break it. Limited requests were deferred (AFTER), not parked on a
    // worker: both workers stayed free to serve the burst.
    let times = e.script().observe_times.clone();
    let thirtieth = times[29];
    assert!(
        thirtieth.duration_since(t0) >= Duration::from_millis(4900),
        "30 reconciles in {:?}",
        thirtieth.duration_since(t0)
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &reg).expect("encode");
    assert!(
        text.contains("controller_runtime_max_concurrent_reconciles"),
        "{text}"
    );
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_098_conflict_on_finalizer_write_is_silent() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    let target = (
        e.admin.clone(),
        e.ar(&e.widget, N),
        Some(NS.to_string()),
        "w1".to_string(),
    );
    e.script().bump_on_observe = Some(target);
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(!has_finalizer(&o));
    assert!(cond(&o, "Synced").is_none());
    assert!(e.events("w1").await.is_empty());
}

#[tokio::test]
async fn conformance_099_no_concurrent_reconciles_of_one_mr() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.script().store.insert("w1".into(), json!({}));
    e.script().observe_delay = Some(Duration::from_millis(400));
    let (stop, h) = start_controller(&e, N).await;
    for i in 0..5 {
        e.patch(
            N,
            "w1",
            json!({"metadata": {"labels": {"n": i.to_string()}}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_for(|| async {
        (e.calls().iter().filter(|c| *c == "observe").count() >= 2).then_some(())
    })
    .await;
    assert_eq!(e.script().max_in_flight, 1);
    stop.cancel();
    h.await.expect("stopped");
}
