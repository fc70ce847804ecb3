//! Conformance of the step-8 creation-incomplete guard per identifier strategy
//! (`shared/reference/managed-reconciler.md` §2 step 8, §16 Q6, checklist items 11 and 11b).
//!
//! A restart in the middle of a create leaves `crossplane.io/external-create-pending` newer
//! than the succeeded and failed stamps. A Kind whose identifier is known before Create
//! (name, spec field, composite, singleton) continues to Observe: it adopts the object the
//! interrupted create made, or creates a missing one once. A server-assigned Kind keeps the
//! stop, because the ID the interrupted create returned may be lost.
//!
//! Each test starts its own Kubernetes API test server with the CRDs of two fake Kinds,
//! `Part` (name-as-identifier) and `Token` (server-assigned), and drives the real reconciler
//! against a call-recording fake external system.

mod managed_support;

use managed_support::*;
use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::json;

/// 11b: the interrupted create did reach JFrog. The MR is adopted: Observe finds it, no
/// Create, no stop, in both scopes; the stamps are left as they were.
#[tokio::test]
async fn conformance_011b_restart_mid_create_deterministic_adopts() {
    let e = Env::new().await;
    for scope in Scope::ALL {
        let name = format!("adopt-{}", scope.is_namespaced());
        lock(&e.s).objects.insert(name.clone(), json!({"x": "1"}));
        e.interrupted(&e.part, scope, &name, None).await;
        let pending = ann(
            &e.get(&e.part, scope, &name).await,
            meta::EXTERNAL_CREATE_PENDING,
        );

        let out = e.reconcile(&e.part, scope, &name).await;
        assert!(matches!(out, Outcome::After(_)), "{scope:?}: {out:?}");
        assert!(e.calls().contains(&"observe".to_string()));
        assert_eq!(e.count("create"), 0, "{scope:?}: {:?}", e.calls());
        let o = e.get(&e.part, scope, &name).await;
        let synced = cond(&o, "Synced").expect("Synced");
        assert_eq!(
            (synced.status.as_str(), synced.reason.as_str()),
            ("True", "ReconcileSuccess")
        );
        // Step 8 only logs: the stamps are not rewritten.
        assert_eq!(ann(&o, meta::EXTERNAL_CREATE_PENDING), pending);
        assert_eq!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED), None);
        assert_eq!(ann(&o, meta::EXTERNAL_NAME).as_deref(), Some(name.as_str()));

        // The stamps still say "incomplete"; the next reconcile adopts again, never creates.
        // (The first reconcile's finalizer write discarded Observe's status, reference §4.2.)
        let out = e.reconcile(&e.part, scope, &name).await;
        assert!(matches!(out, Outcome::After(_)), "{scope:?}: {out:?}");
        assert_eq!(e.count("create"), 0);
        let o = e.get(&e.part, scope, &name).await;
        let ready = cond(&o, "Ready").expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("True", "Available")
        );
        lock(&e.s).calls.clear();
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
        e.interrupted(&e.part, scope, &name, None).await;

        assert_eq!(e.reconcile(&e.part, scope, &name).await, Outcome::Backoff);
        assert_eq!(
            e.calls(),
            vec!["connect", "observe", "create"],
            "{scope:?}: observe before the one create"
        );
        let o = e.get(&e.part, scope, &name).await;
        assert!(ann(&o, meta::EXTERNAL_CREATE_SUCCEEDED).is_some());
        assert!(!meta::external_create_incomplete(
            o.metadata.annotations.as_ref().expect("annotations")
        ));

        // Re-observed, found, adopted: no second create.
        let out = e.reconcile(&e.part, scope, &name).await;
        assert!(matches!(out, Outcome::After(_)), "{scope:?}: {out:?}");
        assert_eq!(e.count("create"), 1, "{scope:?}: {:?}", e.calls());
        assert_eq!(lock(&e.s).objects.len(), 1);
        lock(&e.s).objects.clear();
        lock(&e.s).calls.clear();
    }
}

/// 11: a server-assigned Kind keeps the stop: no Connect, no Observe, the exact message,
/// DONE.
#[tokio::test]
async fn conformance_011_restart_mid_create_server_assigned_stops() {
    let e = Env::new().await;
    // The interrupted create may have returned an ID (or not); either way it was not saved.
    e.interrupted(&e.token, Scope::Namespaced, "t1", None).await;
    assert_eq!(
        e.reconcile(&e.token, Scope::Namespaced, "t1").await,
        Outcome::Done
    );
    assert!(e.calls().is_empty(), "{:?}", e.calls());
    let o = e.get(&e.token, Scope::Namespaced, "t1").await;
    let synced = cond(&o, "Synced").expect("Synced");
    assert_eq!(synced.status, "False");
    assert_eq!(synced.reason, "ReconcileError");
    assert_eq!(synced.message, meta::MSG_CREATION_INCOMPLETE);
    let ready = cond(&o, "Ready").expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Creating")
    );
    assert!(
        e.reasons("t1")
            .await
            .contains(&"CannotInitializeManagedResource".to_string())
    );

    // Also with a saved ID from an earlier create (pending newer than succeeded): still a stop.
    e.interrupted(&e.token, Scope::Cluster, "t2", Some("srv-9"))
        .await;
    assert_eq!(
        e.reconcile(&e.token, Scope::Cluster, "t2").await,
        Outcome::Done
    );
    assert!(e.calls().is_empty(), "{:?}", e.calls());
}
