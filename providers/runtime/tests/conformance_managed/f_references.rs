//! Checklist section F. References (`docs/managed-reconciler.md` §17).

use kube::Api;
use kube::api::PostParams;
use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn conformance_071_ref_resolves_by_external_name_with_ssa() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "ext-t1")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["forProvider"]["parentName"], "ext-t1");
    // The target is not Ready (never reconciled), yet the reference resolved.
    assert!(cond(&e.must(N, "t1").await, "Ready").is_none());
    // The resolver's SSA patch owns the resolved field.
    let mf = o.metadata.managed_fields.clone().unwrap_or_default();
    let entry = mf
        .iter()
        .find(|m| {
            m.manager.as_deref() == Some("managed.crossplane.io/api-simple-reference-resolver")
        })
        .unwrap_or_else(|| panic!("no managedFields entry of the resolver: {mf:?}"));
    assert_eq!(entry.operation.as_deref(), Some("Apply"));
    let owned = serde_json::to_string(&entry.fields_v1).expect("fieldsV1");
    assert!(owned.contains("f:parentName"), "{owned}");
}

#[tokio::test]
async fn conformance_072_ref_to_missing_mr() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "nope"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(!e.calls().contains(&"connect".to_string()));
    let (s, _, m) = synced(&e.must(N, "w1").await);
    assert_eq!(s, "False");
    assert!(m.starts_with("cannot resolve references: mg.Spec.ForProvider.ParentName: cannot get referenced resource: "), "{m}");
    assert!(m.ends_with("not found"), "{m}");
    assert!(
        e.reasons("w1")
            .await
            .contains(&"CannotResolveResourceReferences".to_string())
    );
}

#[tokio::test]
async fn conformance_073_ref_to_uncreated_server_assigned_mr() {
    let e = Env::new().await;
    e.create_in(&e.gadget, N, NS, "g1", json!({}), &[]).await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"gadgetIdRef": {"name": "g1"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    assert!(
        synced(&e.must(N, "w1").await)
            .2
            .ends_with("referenced field was empty (referenced resource may not yet be ready)")
    );
}

#[tokio::test]
async fn conformance_074_optional_resolution() {
    let e = Env::new().await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "nope", "policy": {"resolution": "Optional"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert!(e.calls().contains(&"connect".to_string()));
    assert!(
        e.must(N, "w1").await.data["spec"]["forProvider"]
            .get("parentName")
            .is_none()
    );
}

#[tokio::test]
async fn conformance_075_if_not_present_caches() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "new-ext")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentName": "old-ext", "parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "old-ext"
    );
}

#[tokio::test]
async fn conformance_076_always_follows_target() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "a")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentName": "old", "parentNameRef": {"name": "t1", "policy": {"resolve": "Always"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "a"
    );
    e.patch(
        N,
        "t1",
        json!({"metadata": {"annotations": {meta::EXTERNAL_NAME: "b"}}}),
    )
    .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "b"
    );
}

#[tokio::test]
async fn conformance_077_selector_picks_first_in_list_order() {
    let e = Env::new().await;
    for n in ["b", "a"] {
        e.create(
            N,
            n,
            json!({}),
            &[(meta::EXTERNAL_NAME, &format!("ext-{n}"))],
        )
        .await;
        e.patch(N, n, json!({"metadata": {"labels": {"team": "x"}}}))
            .await;
    }
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameSelector": {"matchLabels": {"team": "x"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["forProvider"]["parentName"], "ext-a");
    assert_eq!(o.data["spec"]["forProvider"]["parentNameRef"]["name"], "a");
    e.create(N, "0", json!({}), &[(meta::EXTERNAL_NAME, "ext-0")])
        .await;
    e.patch(N, "0", json!({"metadata": {"labels": {"team": "x"}}}))
        .await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentNameRef"]["name"],
        "a"
    );
}

#[tokio::test]
async fn conformance_078_match_controller_ref() {
    let e = Env::new().await;
    // Two real controllers (ConfigMaps stand in for composite resources), so that garbage
    // collection keeps the dependants.
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(e.admin.clone(), NS);
    let mut uids = Vec::new();
    for n in ["xr-other", "xr-mine"] {
        let cm: k8s_openapi::api::core::v1::ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": n}})).expect("cm");
        let c = cms
            .create(&PostParams::default(), &cm)
            .await
            .expect("create cm");
        uids.push((n, c.metadata.uid.expect("uid")));
    }
    let owner = |i: usize| {
        let (n, uid) = &uids[i];
        json!({"metadata": {"labels": {"team": "x"}, "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": uid, "controller": true}]}})
    };
    e.create(N, "a", json!({}), &[(meta::EXTERNAL_NAME, "ext-a")])
        .await;
    e.patch(N, "a", owner(0)).await;
    e.create(N, "b", json!({}), &[(meta::EXTERNAL_NAME, "ext-b")])
        .await;
    e.patch(N, "b", owner(1)).await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameSelector": {"matchLabels": {"team": "x"}, "matchControllerRef": true}}}),
        &[],
    )
    .await;
    e.patch(N, "w1", owner(1)).await;
    e.reconcile(N, "w1").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "ext-b"
    );
}

#[tokio::test]
async fn conformance_079_cross_namespace_ref() {
    let e = Env::new().await;
    e.ensure_ns("other").await;
    e.create_in(
        &e.widget,
        N,
        "other",
        "t1",
        json!({}),
        &[(meta::EXTERNAL_NAME, "in-other")],
    )
    .await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "in-default")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "t1", "namespace": "other"}}}),
        &[],
    )
    .await;
    e.create(
        N,
        "w2",
        json!({"forProvider": {"parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w2").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["parentName"],
        "in-other"
    );
    assert_eq!(
        e.must(N, "w2").await.data["spec"]["forProvider"]["parentName"],
        "in-default"
    );
}

#[tokio::test]
async fn conformance_080_all_or_nothing() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "ext-t1")])
        .await;
    e.create(
        N,
        "w1",
        json!({"forProvider": {"parentNameRef": {"name": "t1"}, "ownerNameRef": {"name": "missing"}}}),
        &[],
    )
    .await;
    assert_eq!(e.reconcile(N, "w1").await, Outcome::Backoff);
    let fp = e.must(N, "w1").await.data["spec"]["forProvider"].clone();
    assert!(fp.get("parentName").is_none(), "{fp}");
    assert!(
        synced(&e.must(N, "w1").await)
            .2
            .contains("mg.Spec.ForProvider.OwnerName")
    );
}

// List references: Refs keep their order; a selector collects, deduplicates and sorts values.
#[tokio::test]
async fn multi_value_references() {
    let e = Env::new().await;
    for (n, ext) in [("m1", "zeta"), ("m2", "alpha"), ("m3", "alpha")] {
        e.create(N, n, json!({}), &[(meta::EXTERNAL_NAME, ext)])
            .await;
        e.patch(N, n, json!({"metadata": {"labels": {"group": "g"}}}))
            .await;
    }
    e.create(
        N,
        "w1",
        json!({"forProvider": {"memberNamesRefs": [{"name": "m1"}, {"name": "m2"}]}}),
        &[],
    )
    .await;
    e.create(
        N,
        "w2",
        json!({"forProvider": {"memberNamesSelector": {"matchLabels": {"group": "g"}}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    e.reconcile(N, "w2").await;
    assert_eq!(
        e.must(N, "w1").await.data["spec"]["forProvider"]["memberNames"],
        json!(["zeta", "alpha"])
    );
    let fp = e.must(N, "w2").await.data["spec"]["forProvider"].clone();
    assert_eq!(fp["memberNames"], json!(["alpha", "zeta"]));
    assert_eq!(fp["memberNamesRefs"].as_array().map(Vec::len), Some(2));
}

// References inside spec.initProvider resolve too, and reach the create request.
#[tokio::test]
async fn init_provider_references_resolve() {
    let e = Env::new().await;
    e.create(N, "t1", json!({}), &[(meta::EXTERNAL_NAME, "ext-t1")])
        .await;
    e.create(
        N,
        "w1",
        json!({"initProvider": {"parentNameRef": {"name": "t1"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w1").await;
    let o = e.must(N, "w1").await;
    assert_eq!(o.data["spec"]["initProvider"]["parentName"], "ext-t1");
    assert_eq!(e.script().create_params[0]["parentName"], "ext-t1");
    // A failure names the InitProvider path.
    e.create(
        N,
        "w2",
        json!({"initProvider": {"parentNameRef": {"name": "missing"}}}),
        &[],
    )
    .await;
    e.reconcile(N, "w2").await;
    assert!(
        synced(&e.must(N, "w2").await)
            .2
            .starts_with("cannot resolve references: mg.Spec.InitProvider.ParentName: ")
    );
}
