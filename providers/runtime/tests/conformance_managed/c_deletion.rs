//! Checklist section C. Deletion (`docs/managed-reconciler.md` §17).

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn conformance_034_delete_existing() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(e.calls().contains(&"delete".to_string()));
    let o = e.must(N, "w1").await;
    assert!(has_finalizer(&o));
    assert_eq!(ready(&o), Some(("False".into(), "Deleting".into())));
    assert_eq!(synced(&o).0, "True");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"DeletedExternalResource".to_string())
    );
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_none());
    let gvk = e.widget.info.gvk_label(N);
    let text = hist_text(
        e.metrics
            .deletion
            .get_or_create(&ManagedMetrics::gvk(&gvk))
            .clone(),
    );
    assert!(text.contains("h_count 1"), "{text}");
}

#[tokio::test]
async fn conformance_035_already_gone() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().store.clear();
    e.patch(N, "w1", json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_SUCCEEDED: stamp_ago(60), meta::EXTERNAL_CREATE_PENDING: stamp_ago(61)}}})).await;
    e.delete(N, "w1").await;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(!e.calls().contains(&"delete".to_string()));
    assert!(e.get(N, "w1").await.is_none());
    assert!(
        !e.reasons("w1")
            .await
            .contains(&"DeletedExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_036_delete_fails() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().delete_err = Some("500 Internal Server Error".into());
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let o = e.must(N, "w1").await;
    assert!(has_finalizer(&o));
    assert_eq!(ready(&o), Some(("False".into(), "Deleting".into())));
    let (s, _, m) = synced(&o);
    assert_eq!(s, "False");
    assert!(m.starts_with("delete failed: "), "{m}");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotDeleteExternalResource".to_string())
    );
}

#[tokio::test]
async fn conformance_037_delete_404_is_success() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.delete(N, "w1").await;
    // Observe still sees it, but it is gone (404) by the time Delete runs.
    e.script().vanish_on_observe = true;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(e.calls().contains(&"delete:404".to_string()));
    assert_eq!(synced(&e.must(N, "w1").await).0, "True");
    // The next Observe sees not-exists, and the finalizer is removed.
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_none());
}

async fn orphan_case(scope: Scope, spec: Value, expect_delete: bool, mp: bool) {
    let mut e = Env::new().await;
    e.mp_enabled = mp;
    e.create(scope, "w1", spec, &[]).await;
    e.converge(scope, "w1").await;
    e.delete(scope, "w1").await;
    e.clear();
    let mut n = 0;
    while e.get(scope, "w1").await.is_some() {
        e.reconcile(scope, "w1").await;
        n += 1;
        assert!(n < 5, "deletion did not finish");
    }
    let calls = e.calls();
    assert_eq!(
        calls.contains(&"delete".to_string()),
        expect_delete,
        "{calls:?}"
    );
    if !expect_delete {
        assert!(!calls.contains(&"connect".to_string()));
        assert!(!calls.contains(&"observe".to_string()));
        assert!(e.script().store.contains_key("w1"));
    }
}

#[tokio::test]
async fn conformance_038_orphan_by_policy() {
    orphan_case(
        N,
        json!({"managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}),
        false,
        true,
    )
    .await;
}

#[tokio::test]
async fn conformance_039_orphan_by_deletion_policy() {
    orphan_case(L, json!({"deletionPolicy": "Orphan"}), false, true).await;
}

#[tokio::test]
async fn conformance_040_legacy_orphan_with_delete_policy_deletes() {
    orphan_case(
        L,
        json!({"deletionPolicy": "Orphan", "managementPolicies": ["Observe", "Create", "Update", "Delete"]}),
        true,
        true,
    )
    .await;
}

#[tokio::test]
async fn conformance_041_legacy_delete_without_delete_policy_orphans() {
    orphan_case(
        L,
        json!({"deletionPolicy": "Delete", "managementPolicies": ["Observe", "Create", "Update"]}),
        false,
        true,
    )
    .await;
}

#[tokio::test]
async fn conformance_042_legacy_feature_disabled() {
    orphan_case(L, json!({"deletionPolicy": "Orphan"}), false, false).await;
    orphan_case(L, json!({"deletionPolicy": "Delete"}), true, false).await;
}

#[tokio::test]
async fn conformance_043_extra_finalizer_waits() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER, "example.com/hold"]}}),
    )
    .await;
    e.delete(N, "w1").await;
    let rv = e.must(N, "w1").await.metadata.resource_version;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(!e.calls().contains(&"delete".to_string()));
    assert_eq!(e.must(N, "w1").await.metadata.resource_version, rv);
    e.patch(
        N,
        "w1",
        json!({"metadata": {"finalizers": [meta::FINALIZER]}}),
    )
    .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"delete".to_string()));
}

#[tokio::test]
async fn conformance_044_credentials_gone() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.script().connect_err =
        Some("cannot get credentials secret: secrets \"jfrog\" not found".into());
    e.delete(N, "w1").await;
    for _ in 0..2 {
        assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    }
    let o = e.must(N, "w1").await;
    assert!(synced(&o).2.starts_with("connect failed: "));
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotConnectToProvider".to_string())
    );
    // With an Orphan policy it completes.
    e.patch(
        N,
        "w1",
        json!({"spec": {"managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}}),
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_none());
}

#[tokio::test]
async fn conformance_045_no_reference_resolution_during_deletion() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "gone"}, "parentName": "x"}}),
        &[],
    )
    .await;
    e.converge(N, "w1").await;
    e.patch(N, "w1", json!({"spec": {"forProvider": {"parentName": null, "parentNameRef": {"policy": {"resolve": "Always"}}}}}))
        .await;
    e.delete(N, "w1").await;
    let mut n = 0;
    while e.get(N, "w1").await.is_some() {
        e.reconcile(N, "w1").await;
        n += 1;
        assert!(n < 5);
    }
    assert!(
        !e.reasons("w1")
            .await
            .contains(&"CannotResolveResourceReferences".to_string())
    );
}

#[tokio::test]
async fn conformance_046_paused_mr_cannot_be_deleted() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::PAUSED: "true"}}}),
    )
    .await;
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    let o = e.must(N, "w1").await;
    assert!(o.metadata.deletion_timestamp.is_some() && has_finalizer(&o));
    assert_eq!(synced(&o).1, "ReconcilePaused");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"ReconciliationPaused".to_string())
    );
    e.patch(
        N,
        "w1",
        json!({"metadata": {"annotations": {meta::PAUSED: null}}}),
    )
    .await;
    let mut n = 0;
    while e.get(N, "w1").await.is_some() {
        e.reconcile(N, "w1").await;
        n += 1;
        assert!(n < 5);
    }
}

#[tokio::test]
async fn conformance_047_creation_incomplete_during_deletion() {
    // A server-assigned Kind: only those are blocked (Q6).
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "w1", json!({}), &[]).await;
    let api = e.api_of(&e.gadget, N, NS);
    let r = e.gadget_rec(N);
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Backoff);
    let patch = |p: Value| {
        let api = api.clone();
        async move {
            api.patch("w1", &PatchParams::default(), &Patch::Merge(&p))
                .await
                .expect("patch MR");
        }
    };
    patch(json!({"metadata": {"annotations": {meta::EXTERNAL_CREATE_PENDING: "2999-01-01T00:00:00Z"}}}))
        .await;
    api.delete("w1", &DeleteParams::default())
        .await
        .expect("delete MR");
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Done);
    let o = api.get("w1").await.expect("get");
    assert_eq!(synced(&o).2, meta::MSG_CREATION_INCOMPLETE);
    patch(
        json!({"spec": {"managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}}),
    )
    .await;
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Done);
    assert!(api.get_opt("w1").await.expect("get").is_none());
}

#[tokio::test]
async fn conformance_048_deletion_with_invalid_policy() {
    let e = Env::new().await;
    e.create(N, "w1", json!({}), &[]).await;
    e.converge(N, "w1").await;
    e.patch(
        N,
        "w1",
        json!({"spec": {"managementPolicies": ["Create", "Delete"]}}),
    )
    .await;
    e.delete(N, "w1").await;
    e.clear();
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    assert!(e.get(N, "w1").await.is_some());
    assert!(e.calls().is_empty());
    e.patch(N, "w1", json!({"spec": {"managementPolicies": ["*"]}}))
        .await;
    let mut n = 0;
    while e.get(N, "w1").await.is_some() {
        e.reconcile(N, "w1").await;
        n += 1;
        assert!(n < 5);
    }
}

#[tokio::test]
async fn conformance_049_connection_secret_removed_by_gc() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"writeConnectionSecretToRef": {"name": "w1-conn"},
               "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]}),
        &[],
    )
    .await;
    e.converge(N, "w1").await;
    let secrets: Api<Secret> = Api::namespaced(e.admin.clone(), NS);
    let s = secrets.get("w1-conn").await.expect("secret");
    let owner = &s.metadata.owner_references.expect("owner")[0];
    assert_eq!(owner.controller, Some(true));
    e.delete(N, "w1").await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Done);
    wait_for(|| async {
        secrets
            .get_opt("w1-conn")
            .await
            .expect("get secret")
            .is_none()
            .then_some(())
    })
    .await;
}
