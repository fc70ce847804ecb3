//! Checklist section A. Creation and adoption (`docs/managed-reconciler.md` §17).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Patch, PatchParams};
use provider_runtime::managed::meta::{self, FilterKey};
use provider_runtime::managed::*;
use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn conformance_001_external_name_defaults_before_connect() {
    let e = Env::new().await;
    // a reference to a target without an external name yet would fail; the target gets its
    // own name in the same way, and the connector sees our external name.
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("w1"));
    assert_eq!(e.script().connect_ext_names, vec!["w1".to_string()]);
    // visible to a reference resolver at once: another MR resolves it in its first reconcile
    e.create(
        N,
        "w2",
        json!({"forProvider": {"parentNameRef": {"name": "w1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w2").await;
    assert_eq!(
        e.must(N, "w2").await.data["spec"]["forProvider"]["parentName"],
        "w1"
    );
}

/// 1b: the external name is stored even when the reconcile stops before any other write
/// (QUIRK Q14): here Observe fails, and the annotation is written alone before the status
/// update; a failed write of it is reported as step 7's.
#[tokio::test]
async fn conformance_001b_external_name_stored_when_observe_fails() {
    let e = Env::new().await;
    e.script().observe_err = Some("503 Service Unavailable".into());
    e.create(N, "w1", json!({}), &[]).await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("w1"));
    assert!(!has_finalizer(&o));
    let (s, r, m) = synced(&o);
    assert_eq!((s.as_str(), r.as_str()), ("False", "ReconcileError"));
    assert!(m.starts_with("observe failed: "), "{m}");

    // Adoption: the finalizer's write carries it, with no write of its own.
    e.script().observe_err = None;
    e.script().store.insert("w2".into(), json!({}));
    e.create(N, "w2", json!({}), &[]).await;
    let rv0 = e.must(N, "w2").await.metadata.resource_version.expect("rv");
    let mut stream = e
        .api(N)
        .watch(&kube::api::WatchParams::default(), &rv0)
        .await
        .expect("watch")
        .boxed();
    e.reconcile(N, "w2").await;
    let mut first = None;
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        if let Ok(kube::api::WatchEvent::Modified(o)) = ev {
            first = Some(o);
            break;
        }
    }
    let first = first.expect("a write");
    assert_eq!(ann(&first, meta::EXTERNAL_NAME).as_deref(), Some("w2"));
    assert!(has_finalizer(&first));
    assert!(cond(&first, "Synced").is_none());
}

#[tokio::test]
async fn conformance_002_empty_external_name_is_absent() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "")])
        .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        ann(&e.must(N, "w1").await, meta::EXTERNAL_NAME).as_deref(),
        Some("w1")
    );
}

#[tokio::test]
async fn conformance_003_server_assigned_identifier() {
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "g1", json!({}), &[]).await;
    let r = e.gadget_rec(N);
    assert_eq!(r.reconcile(Some(NS), "g1").await, Outcome::Backoff);
    // Observe made no JFrog request (empty external name); Create made one.
    assert_eq!(e.script().jfrog_requests, 1);
    assert_eq!(e.script().connect_ext_names, vec![String::new()]);
    let o = e.api_of(&e.gadget, N, NS).get("g1").await.expect("get");
    assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("srv-1"));
    assert!(ann(&o, meta::EXTERNAL_CREATE_PENDING).is_some());
    assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
}

#[tokio::test]
async fn conformance_004_order_of_writes_on_first_reconcile() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    let rv0 = e.must(N, "w1").await.metadata.resource_version.expect("rv");
    let api = e.api(N);
    let mut stream = api
        .watch(&kube::api::WatchParams::default(), &rv0)
        .await
        .expect("watch")
        .boxed();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let mut states = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        if let Ok(kube::api::WatchEvent::Modified(o)) = ev {
            let has = |k: &str| ann(&o, k).is_some();
            // The external name is stored by the first write (QUIRK Q14), and the finalizer
            // with create-pending, in one write (QUIRK Q13).
            assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some("w1"));
            assert_eq!(
                has_finalizer(&o),
                has(meta::EXTERNAL_CREATE_PENDING),
                "the finalizer and create-pending come in one write"
            );
            let step = if cond(&o, "Synced").is_some() {
                "status"
            } else if has(meta::EXTERNAL_CREATE_SUCCEEDED) {
                "succeeded"
            } else if has(meta::EXTERNAL_CREATE_PENDING) {
                "pending"
            } else if has_finalizer(&o) {
                "finalizer"
            } else if has(meta::EXTERNAL_NAME) {
                "external-name"
            } else {
                "other"
            };
            states.push(step);
            if step == "status" {
                break;
            }
        }
    }
    assert_eq!(states, vec!["pending", "succeeded", "status"]);
    assert_eq!(
        e.calls(),
        vec!["track", "connect", "observe", "create", "disconnect"]
    );
    let o = e.must(N, "w1").await;
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert_eq!(synced(&o).1, "ReconcileSuccess");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CreatedExternalResource".to_string())
    );
    assert!(at_provider(&o).get("id").is_none());
}

#[tokio::test]
async fn conformance_005_create_status_changes_discarded() {
    let e = Env::new().await;
    e.script().create_sets = Some((json!({"id": "x"}), "example.com/extra".into(), "y".into()));
    e.create(N, "w1", json!({}), &[]).await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, "example.com/extra").as_deref(), Some("y"));
    assert!(at_provider(&o).get("id").is_none());
}

/// An annotation Create removes is removed from the MR with those it sets (an adapter
/// renaming one of its own annotations).
#[tokio::test]
async fn conformance_005b_annotations_removed_by_create_are_removed() {
    let e = Env::new().await;
    e.script().create_sets = Some((json!({}), "example.com/new".into(), "y".into()));
    e.script().create_removes = Some("example.com/old".into());
    e.create(
        N,
        "w1",
        json!({}),
        &[("example.com/old", "x"), ("example.com/kept", "z")],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(ann(&o, "example.com/new").as_deref(), Some("y"));
    assert_eq!(ann(&o, "example.com/old"), None);
    assert_eq!(ann(&o, "example.com/kept").as_deref(), Some("z"));
    assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
}

#[tokio::test]
async fn conformance_006_immediate_reobservation_after_create() {
    let e = Env::new().await;
    let ctx = e.ctx();
    let stop = ctx.shutdown.clone();
    let reg = register_shared(
        e.widget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: false,
        }),
    );
    let h = tokio::spawn(reg.start(ctx, N));
    e.create(N, "w1", json!({}), &[]).await;
    let o = wait_for(|| async {
        let o = e.get(N, "w1").await?;
        (ready(&o) == Some(("True".into(), "Available".into()))).then_some(o)
    })
    .await;
    assert_eq!(synced(&o).0, "True");
    // Re-observed once after the create, through the annotation event: exactly 2 observes
    // and no back-off retry of a failure.
    let obs = e.calls().iter().filter(|c| *c == "observe").count();
    assert!(obs >= 2);
    // The state gauges follow the cache.
    let gvk = ManagedMetrics::gvk(&e.widget.info.gvk_label(N));
    wait_for(|| async {
        (e.metrics.exists.get_or_create(&gvk).get() == 1
            && e.metrics.ready.get_or_create(&gvk).get() == 1
            && e.metrics.synced.get_or_create(&gvk).get() == 1)
            .then_some(())
    })
    .await;
    // A second MR counts in; deleting both counts them out (the gauges are kept by the
    // watch's events, not recounted).
    e.create(N, "w2", json!({}), &[]).await;
    wait_for(|| async {
        (e.metrics.exists.get_or_create(&gvk).get() == 2
            && e.metrics.ready.get_or_create(&gvk).get() == 2)
            .then_some(())
    })
    .await;
    e.delete(N, "w1").await;
    e.delete(N, "w2").await;
    wait_for(|| async {
        (e.get(N, "w1").await.is_none()
            && e.get(N, "w2").await.is_none()
            && e.metrics.exists.get_or_create(&gvk).get() == 0
            && e.metrics.ready.get_or_create(&gvk).get() == 0
            && e.metrics.synced.get_or_create(&gvk).get() == 0)
            .then_some(())
    })
    .await;
    stop.cancel();
    h.await.expect("controller stops");
}

#[tokio::test]
async fn conformance_007_adoption() {
    let e = Env::new().await;
    e.script()
        .store
        .insert("existing".into(), json!({"x": "1"}));
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "1"}}),
        &[(meta::EXTERNAL_NAME, "existing")],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.reconcile(N, "w1").await;
    assert!(is_after_poll(&o));
    assert!(!e.calls().contains(&"create".to_string()));
    let m = e.must(N, "w1").await;
    assert!(ann(&m, meta::EXTERNAL_CREATE_PENDING).is_none());
    assert!(ann(&m, meta::EXTERNAL_CREATE_SUCCEEDED).is_none());
    assert_eq!(ready(&m), Some(("True".into(), "Available".into())));
    assert!(
        !e.reasons("w1")
            .await
            .contains(&"CreatedExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_008_create_rejected() {
    let e = Env::new().await;
    e.script().create_err = Some("400 Bad Request: repository key is invalid".into());
    e.create(N, "w1", json!({}), &[]).await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(ann(&o, meta::EXTERNAL_CREATE_FAILED).is_some());
    let (s, r, m) = synced(&o);
    assert_eq!((s.as_str(), r.as_str()), ("False", "ReconcileError"));
    assert!(m.starts_with("create failed: "), "{m}");
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    let ev = e.events("w1").await;
    assert!(ev.iter().any(|x| {
        x.reason.as_deref() == Some("CannotCreateExternalResource")
            && x.message
                .as_deref()
                .is_some_and(|m| m.contains("repository key is invalid"))
    }));
    // Not blocked: Create is retried.
    e.clear();
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
}

/// 8b: a create whose answer was lost (outcome unknown) is not recorded as failed: it stays
/// pending, so a server-assigned Kind stops with "cannot determine creation result" instead
/// of creating a second object, and a deterministic one proceeds to observe (which tells
/// whether the object exists).
#[tokio::test]
async fn conformance_008b_create_outcome_unknown_is_not_retried() {
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "t1", json!({}), &[]).await;
    e.script().create_err = Some("POST /things: the answer was lost".into());
    e.script().create_unknown = true;
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "t1").await,
        Outcome::Backoff
    );
    let get = || async { e.api_of(&e.gadget, N, NS).get("t1").await.expect("get") };
    let o = get().await;
    assert!(ann(&o, meta::EXTERNAL_CREATE_PENDING).is_some());
    assert!(ann(&o, meta::EXTERNAL_CREATE_FAILED).is_none());
    e.clear();
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "t1").await,
        Outcome::Done
    );
    assert!(e.calls().is_empty(), "{:?}", e.calls());
    assert_eq!(synced(&get().await).2, meta::MSG_CREATION_INCOMPLETE);

    // A deterministic identifier: the next reconcile proceeds to observe.
    e.create(N, "w1", json!({}), &[]).await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    e.script().create_err = None;
    e.clear();
    e.reconcile(N, "w1").await;
    let calls = e.calls();
    let observe = calls.iter().position(|c| c == "observe");
    let create = calls.iter().position(|c| c == "create");
    assert!(observe.is_some() && observe < create, "{calls:?}");
}

#[tokio::test]
async fn conformance_009_create_succeeds_annotation_write_fails() {
    // While Create runs, the provider loses `update` on the MR (its status stays writable):
    // the critical annotation updater retries, gives up and reports. A server-assigned Kind:
    // its new ID is lost with the write, which is what the step-8 stop is for (Q6).
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &[]).await;
    let get = || async { e.api_of(&e.gadget, N, NS).get("w1").await.expect("get") };
    let roles = roles_api(&e.admin);
    let r2 = roles.clone();
    e.script().create_hook = Some(Box::new(move || {
        Box::pin(async move {
            r2.patch(
                ROLE,
                &PatchParams::default(),
                &Patch::Merge(&json!({"rules": provider_rules(false)})),
            )
            .await
            .expect("narrow the role");
        })
    }));
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "w1").await,
        Outcome::Backoff
    );
    let o = get().await;
    let (s, _, m) = synced(&o);
    assert_eq!(s, "False");
    assert!(
        m.starts_with(
            "cannot update managed resource annotations: cannot update critical annotations: "
        ),
        "{m}"
    );
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert!(e.events("w1").await.iter().any(|x| x.reason.as_deref()
        == Some("CannotUpdateManagedResource")
        && x.message.as_deref().is_some_and(|t| t.starts_with(
            "cannot update managed resource annotations: cannot update critical annotations: "
        ))));
    // Healed: the next reconcile stops with "cannot determine creation result".
    roles
        .patch(
            ROLE,
            &PatchParams::default(),
            &Patch::Merge(&json!({"rules": provider_rules(true)})),
        )
        .await
        .expect("restore the role");
    e.clear();
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "w1").await,
        Outcome::Done
    );
    assert_eq!(synced(&get().await).2, meta::MSG_CREATION_INCOMPLETE);
    assert!(!e.calls().contains(&"connect".to_string()));
}

#[tokio::test]
async fn conformance_010_critical_update_conflict_once() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    let target = (
        e.admin.clone(),
        e.ar(&e.widget, N),
        Some(NS.to_string()),
        "w1".to_string(),
    );
    e.script().create_hook = Some(Box::new(move || Box::pin(bump(Some(target)))));
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
    assert!(
        o.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("bumped"))
    );
    assert_eq!(synced(&o).0, "True");
}

#[tokio::test]
async fn conformance_011_restart_mid_create_stops() {
    // A server-assigned Kind; deterministic identifiers continue (11b, below).
    let e = Env::new().await;
    let pending = stamp_ago(5);
    let a = [(meta::EXTERNAL_CREATE_PENDING, pending.as_str())];
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &a).await;
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "w1").await,
        Outcome::Done
    );
    assert!(!e.calls().contains(&"connect".to_string()));
    let o = e.api_of(&e.gadget, N, NS).get("w1").await.expect("get");
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert_eq!(synced(&o).2, meta::MSG_CREATION_INCOMPLETE);
    let ev = e.events("w1").await;
    assert!(ev.iter().any(
        |x| x.reason.as_deref() == Some("CannotInitializeManagedResource")
            && x.message.as_deref() == Some(meta::MSG_CREATION_INCOMPLETE)
    ));
}

// Checklist items 11 and 11b per identifier strategy (§2 step 8, §16 Q6). A restart in the
// middle of a create leaves `crossplane.io/external-create-pending` newer than the succeeded
// and failed stamps. A Kind whose identifier is known before Create (name, spec field,
// composite, singleton) continues to Observe: it adopts the object the interrupted create
// made, or creates a missing one once. A server-assigned Kind keeps the stop, because the ID
// the interrupted create returned may be lost.

/// An MR whose last create was interrupted: create-pending set 5 s back, no succeeded or
/// failed stamp.
async fn interrupted(e: &Env, kind: &FakeKind, scope: Scope, name: &str, ext: Option<&str>) {
    let pending = stamp_ago(5);
    let mut a = vec![(meta::EXTERNAL_CREATE_PENDING, pending.as_str())];
    if let Some(x) = ext {
        a.push((meta::EXTERNAL_NAME, x));
    }
    let spec = json!({"forProvider": {"x": "1"}});
    e.create_in(kind, scope, NS, name, spec, &a).await;
}

/// 11b: the interrupted create did reach JFrog. The MR is adopted: Observe finds it, no
/// Create, no stop, in both scopes; the stamps are left as they were.
#[tokio::test]
async fn conformance_011b_restart_mid_create_deterministic_adopts() {
    let e = Env::new().await;
    for scope in Scope::ALL {
        let name = format!("adopt-{}", scope.is_namespaced());
        e.script().store.insert(name.clone(), json!({"x": "1"}));
        interrupted(&e, &e.widget, scope, &name, None).await;
        let pending = ann(&e.must(scope, &name).await, meta::EXTERNAL_CREATE_PENDING);

        let out = e.reconcile(scope, &name).await;
        assert!(matches!(out, Outcome::After(_)), "{scope:?}: {out:?}");
        assert!(e.calls().contains(&"observe".to_string()));
        assert_eq!(e.count("create"), 0, "{scope:?}: {:?}", e.calls());
        let o = e.must(scope, &name).await;
        let (status, reason, _) = synced(&o);
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("True", "ReconcileSuccess")
        );
        // Step 8 only logs: the stamps are not rewritten.
        assert_eq!(ann(&o, meta::EXTERNAL_CREATE_PENDING), pending);
        assert_eq!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED), None);
        assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some(name.as_str()));

        // The stamps still say "incomplete"; the next reconcile adopts again, never creates.
        // (The first reconcile's finalizer write discarded Observe's status,
        // docs/managed-reconciler.md §4.2.)
        let out = e.reconcile(scope, &name).await;
        assert!(matches!(out, Outcome::After(_)), "{scope:?}: {out:?}");
        assert_eq!(e.count("create"), 0);
        let o = e.must(scope, &name).await;
        assert_eq!(ready(&o), Some(("True".into(), "Available".into())));
        e.clear();
    }
    assert!(
        !e.reasons("adopt-true")
            .await
            .contains(&"CannotInitializeManagedResource".to_string())
    );
}

/// 11b: the interrupted create never reached JFrog. Observe reports it missing and it is
/// created exactly once; the next reconcile observes it and creates nothing more.
#[tokio::test]
async fn conformance_011b_restart_mid_create_deterministic_creates_once() {
    let e = Env::new().await;
    for scope in Scope::ALL {
        let name = format!("create-{}", scope.is_namespaced());
        interrupted(&e, &e.widget, scope, &name, None).await;

        assert_eq!(e.reconcile(scope, &name).await, Outcome::Backoff);
        assert_eq!(
            e.calls(),
            vec!["track", "connect", "observe", "create", "disconnect"],
            "{scope:?}: observe before the one create"
        );
        let o = e.must(scope, &name).await;
        assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
        assert!(!meta::external_create_incomplete(
            o.metadata.annotations.as_ref().expect("annotations")
        ));

        // Re-observed, found, adopted: no second create.
        let out = e.reconcile(scope, &name).await;
        assert!(matches!(out, Outcome::After(_)), "{scope:?}: {out:?}");
        assert_eq!(e.count("create"), 1, "{scope:?}: {:?}", e.calls());
        assert_eq!(e.script().store.len(), 1);
        e.script().store.clear();
        e.clear();
    }
}

/// 11: a server-assigned Kind keeps the stop: no Connect, no Observe, the exact message,
/// DONE.
#[tokio::test]
async fn conformance_011_restart_mid_create_server_assigned_stops() {
    let e = Env::new().await;
    // The interrupted create may have returned an ID (or not); either way it was not saved.
    interrupted(&e, &e.gadget, N, "t1", None).await;
    assert_eq!(
        e.gadget_rec(N).reconcile(Some(NS), "t1").await,
        Outcome::Done
    );
    assert!(e.calls().is_empty(), "{:?}", e.calls());
    let o = e.api_of(&e.gadget, N, NS).get("t1").await.expect("get");
    let (status, reason, message) = synced(&o);
    assert_eq!(status, "False");
    assert_eq!(reason, "ReconcileError");
    assert_eq!(message, meta::MSG_CREATION_INCOMPLETE);
    assert_eq!(ready(&o), Some(("False".into(), "Creating".into())));
    assert!(
        e.reasons("t1")
            .await
            .contains(&"CannotInitializeManagedResource".to_string())
    );

    // Also with a saved ID from an earlier create (pending newer than succeeded): still a stop.
    interrupted(&e, &e.gadget, L, "t2", Some("srv-9")).await;
    assert_eq!(e.gadget_rec(L).reconcile(None, "t2").await, Outcome::Done);
    assert!(e.calls().is_empty(), "{:?}", e.calls());
}

async fn blocked_with(pending: &str, succeeded: Option<&str>) -> bool {
    let e = Env::new().await;
    let mut a = vec![(meta::EXTERNAL_CREATE_PENDING, pending)];
    if let Some(s) = succeeded {
        a.push((meta::EXTERNAL_CREATE_SUCCEEDED, s));
    }
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &a).await;
    e.gadget_rec(N).reconcile(Some(NS), "w1").await;
    !e.calls().contains(&"connect".to_string())
}

#[tokio::test]
async fn conformance_012_pending_older_than_succeeded() {
    assert!(!blocked_with("2024-01-01T00:00:00Z", Some("2024-01-01T00:00:05Z")).await);
    assert!(!blocked_with("2024-01-01T00:00:00Z", Some("2024-01-01T00:00:00Z")).await);
}

#[tokio::test]
async fn conformance_013_pending_newer_than_succeeded() {
    assert!(blocked_with("2024-01-01T00:00:05Z", Some("2024-01-01T00:00:00Z")).await);
}

#[tokio::test]
async fn conformance_014_unparseable_stamps() {
    assert!(!blocked_with("yesterday", None).await);
}

#[tokio::test]
async fn conformance_015_removing_pending_alone_needs_a_kick() {
    // The filter: removing only the pending annotation is not a qualifying change. A
    // server-assigned Kind: only those are blocked (Q6).
    let e = Env::new().await;
    let pending = stamp_ago(5);
    let a = [(meta::EXTERNAL_CREATE_PENDING, pending.as_str())];
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &a).await;
    let api = e.api_of(&e.gadget, N, NS);
    let patch = |p: Value| {
        let api = api.clone();
        async move {
            api.patch("w1", &PatchParams::default(), &Patch::Merge(&p))
                .await
                .expect("patch MR");
        }
    };
    let before = api.get("w1").await.expect("get");
    patch(json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: null}}})).await;
    let after = api.get("w1").await.expect("get");
    assert_eq!(
        FilterKey::of(&before.metadata),
        FilterKey::of(&after.metadata)
    );
    // With a reconcile request in the same edit: a reconcile, ReconcileRequestHandled, and
    // Observe/Create proceed (driven by the real controller).
    patch(json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: stamp_ago(5)}}}))
        .await;
    let ctx = e.ctx();
    let stop = ctx.shutdown.clone();
    let reg = register_shared(
        e.gadget.clone(),
        Arc::new(FakeConnector {
            s: e.s.clone(),
            server_assigned: true,
        }),
    );
    let h = tokio::spawn(reg.start(ctx, N));
    wait_for(|| async {
        e.reasons("w1")
            .await
            .contains(&"CannotInitializeManagedResource".to_string())
            .then_some(())
    })
    .await;
    assert!(!e.calls().contains(&"connect".to_string()));
    patch(json!({"metadata": {"annotations": {
        meta::EXTERNAL_CREATE_PENDING: null,
        meta::RECONCILE_REQUESTED_AT: "kick-1"}}}))
    .await;
    wait_for(|| async { e.calls().contains(&"create".to_string()).then_some(()) }).await;
    assert!(
        e.reasons("w1")
            .await
            .contains(&"ReconcileRequestHandled".to_string())
    );
    stop.cancel();
    h.await.expect("stopped");
}

#[tokio::test]
async fn conformance_016_creation_grace_period() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({}),
        &[
            (meta::EXTERNAL_NAME, "w1"),
            (meta::EXTERNAL_CREATE_PENDING, &stamp_ago(11)),
            (meta::EXTERNAL_CREATE_SUCCEEDED, &stamp_ago(10)),
        ],
    )
    .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    let rv = e.must(N, "w1").await.metadata.resource_version;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert_eq!(e.must(N, "w1").await.metadata.resource_version, rv);
    assert!(!e.calls().contains(&"create".to_string()));
    assert!(
        e.reasons("w1")
            .await
            .contains(&"PendingExternalResource".to_string())
    );
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {
            meta::EXTERNAL_CREATE_PENDING: stamp_ago(32),
            meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(31)}}}),
    )
    .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"create".to_string()));
    // finalizer cleanup not needed: the server is dropped with the test
}

#[tokio::test]
async fn conformance_017_stale_cache_protection() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    let target = (
        e.admin.clone(),
        e.ar(&e.widget, N),
        Some(NS.to_string()),
        "w1".to_string(),
    );
    e.script().bump_on_observe = Some(target);
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(!e.calls().contains(&"create".to_string()));
    let o = e.must(N, "w1").await;
    assert!(cond(&o, "Synced").is_none());
    assert!(ann(&o, meta::EXTERNAL_CREATE_PENDING).is_none());
    assert!(e.events("w1").await.is_empty());
}

/// The reconciler's writes leave out `metadata.managedFields` (no step reads them): the API
/// server keeps the stored entries and records each write's own, so what the user's apply
/// owns is still the user's after a creation.
#[tokio::test]
async fn conformance_004b_writes_keep_the_field_owners() {
    let e = Env::new().await;
    let body = json!({
        "apiVersion": e.ar(&e.widget, N).api_version, "kind": e.ar(&e.widget, N).kind,
        "metadata": {"name": "w1", "namespace": NS, "labels": {"team": "a"}},
        "spec": {"forProvider": {"x": "1"}}});
    e.api(N)
        .patch(
            "w1",
            &kube::api::PatchParams::apply("kubectl").force(),
            &kube::api::Patch::Apply(&body),
        )
        .await
        .expect("apply");
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
    let mf = o.metadata.managed_fields.clone().unwrap_or_default();
    let kubectl = mf
        .iter()
        .find(|m| m.manager.as_deref() == Some("kubectl"))
        .unwrap_or_else(|| panic!("the user's apply lost its fields: {mf:?}"));
    let owned = serde_json::to_string(&kubectl.fields_v1).expect("fieldsV1");
    assert!(owned.contains("f:x") && owned.contains("f:team"), "{owned}");
    assert!(
        mf.iter()
            .any(|m| m.operation.as_deref() == Some("Update")
                && m.manager.as_deref() != Some("kubectl")),
        "the provider's writes are recorded as its own: {mf:?}"
    );
}
