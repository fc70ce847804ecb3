//! Conformance tests of checklist section J (shared external objects and process) of
//! `docs/managed-reconciler.md` §17, against the Kubernetes API test server with
//! the RBAC Crossplane grants a provider. Items 107 (non-root runtime, with the real binary)
//! and 108 (package lint) are tested in `providers/artifactory/tests` and `xtask`.

use std::sync::Arc;
use std::time::Duration;

use crate::process_support::*;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use provider_runtime::managed::{ControllerContext, register};
use provider_runtime::process::{
    GateState, LeaderElectionConfig, LeaderElector, MetricsRegistry, ProviderProcess,
    SafeStartGate, lease_name,
};
use serde_json::json;

fn updated_events(events: &[k8s_openapi::api::core::v1::Event]) -> i32 {
    events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("UpdatedExternalResource"))
        .map(|e| e.count.unwrap_or(1))
        .sum()
}

async fn reconcile_until_gone(env: &Env, ns: &str, name: &str) {
    wait_for(&format!("{name} deleted"), || async {
        env.reconcile(Some(ns), name).await;
        env.get_thing(Some(ns), name).await.is_none().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_104_two_mrs_same_identifier() {
    let env = Env::new(&[]).await;
    env.secret("crossplane-system", "creds", &[("token", "tok")])
        .await;
    env.cluster_config_on_creds("default").await;
    let ext = |n: &str| json!({"crossplane.io/external-name": n});
    for (name, x) in [("a", "1"), ("b", "2")] {
        env.thing(Some("ns"), name, json!({"forProvider": {"x": x}}))
            .await
            .expect("create");
        env.thing_api(Some("ns"))
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"annotations": ext("shared")}})),
            )
            .await
            .expect("annotate");
    }
    // Both reconcile a few "polls": each reverts the other.
    for _ in 0..3 {
        env.reconcile(Some("ns"), "a").await;
        env.reconcile(Some("ns"), "b").await;
    }
    for name in ["a", "b"] {
        let o = env.get_thing(Some("ns"), name).await.expect("exists");
        assert_eq!(
            condition(&o, "Ready").expect("Ready").0,
            "True",
            "{name} is Ready: {:?}",
            o.data["status"]
        );
        assert!(
            updated_events(&env.events("ns", name).await) >= 2,
            "{name} keeps updating"
        );
    }
    assert!(lock(&env.s).updates >= 4, "the JFrog object flaps");

    // Deleting one (Delete allowed) deletes the object; the other recreates it.
    env.thing_api(Some("ns"))
        .delete("a", &DeleteParams::default())
        .await
        .expect("delete a");
    reconcile_until_gone(&env, "ns", "a").await;
    assert!(
        !lock(&env.s).objects.contains_key("shared"),
        "deleted in JFrog"
    );
    env.reconcile(Some("ns"), "b").await;
    assert_eq!(
        lock(&env.s).objects.get("shared"),
        Some(&json!({"x": "2"})),
        "recreated by b"
    );

    // With the second MR Observe-only: no flapping, and deleting it orphans the object.
    for (name, x, policies) in [("c", "1", json!(["*"])), ("d", "2", json!(["Observe"]))] {
        env.thing(
            Some("ns"),
            name,
            json!({"forProvider": {"x": x}, "managementPolicies": policies}),
        )
        .await
        .expect("create");
        env.thing_api(Some("ns"))
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"annotations": ext("shared2")}})),
            )
            .await
            .expect("annotate");
    }
    env.reconcile(Some("ns"), "c").await;
    let updates_before = lock(&env.s).updates;
    for _ in 0..3 {
        env.reconcile(Some("ns"), "d").await;
        env.reconcile(Some("ns"), "c").await;
    }
    assert_eq!(lock(&env.s).updates, updates_before, "no flapping");
    let d = env.get_thing(Some("ns"), "d").await.expect("d");
    assert_eq!(condition(&d, "Ready").expect("Ready").0, "True");
    env.thing_api(Some("ns"))
        .delete("d", &DeleteParams::default())
        .await
        .expect("delete d");
    reconcile_until_gone(&env, "ns", "d").await;
    assert_eq!(
        lock(&env.s).objects.get("shared2"),
        Some(&json!({"x": "1"})),
        "orphaned"
    );
}

/// A gate over the config controllers and the Thing Kind in both scopes, run with `client`.
fn start_gate(env: &Env, client: kube::Client) -> (GateState, tokio_util::sync::DropGuard) {
    let process = ProviderProcess::new("provider-fake", PROVIDER)
        .with_kinds(vec![register(thing(), FakeConnector { s: env.s.clone() })]);
    let gate = SafeStartGate::new(process.controllers());
    let state = gate.state();
    let mut ctx = ControllerContext::new(client, env.resolver(), "provider-fake");
    let token = tokio_util::sync::CancellationToken::new();
    ctx.shutdown = token.clone();
    tokio::spawn(gate.run(ctx));
    (state, token.drop_guard())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_105_safe_start() {
    let server = testkit::start_kube_server().await;
    let admin = client_for(&server, &server.admin_token()).await;
    let config_crds = config_crd_docs();
    let thing_crds = thing_crd_docs();
    let mut all = config_crds.clone();
    all.extend(thing_crds.clone());
    grant(
        &admin,
        provider_role("crossplane:provider:provider-fake:system", &all, &[]),
        USER,
    )
    .await;
    // Only the config CRDs and the namespaced Thing are established at start.
    for c in config_crds.iter().chain(thing_crds.iter().take(1)) {
        install_crd(&admin, c).await;
    }
    let provider = client_for(&server, &server.issue_token(USER, &[])).await;
    let env = Env {
        admin: admin.clone(),
        provider: provider.clone(),
        api: provider_runtime::providerconfig::ConfigApi::new(PROVIDER),
        s: Shared::default(),
        server,
    };
    let (state, _guard) = start_gate(&env, provider.clone());
    let modern = "managed/thing.test.fake.m.crossplane.io";
    let legacy = "managed/thing.test.fake.crossplane.io";
    wait_for("established Kinds' controllers run", || async {
        let r = state.running();
        (r.contains(modern)
            && r.contains("providerconfig/clusterproviderconfig.fake.m.crossplane.io")
            && r.contains("providerconfig/providerconfig.fake.m.crossplane.io")
            && r.contains("providerconfig/providerconfig.fake.crossplane.io"))
        .then_some(())
    })
    .await;
    assert!(
        !state.running().contains(legacy),
        "no controller without its CRD"
    );

    // The missing CRD appears: its controller starts and reconciles.
    install_crd(&admin, &thing_crds[1]).await;
    wait_for("legacy controller started", || async {
        state.running().contains(legacy).then_some(())
    })
    .await;
    env.thing(None, "late", json!({}))
        .await
        .expect("create legacy MR");
    wait_for("legacy MR reconciled", || async {
        let o = env.get_thing(None, "late").await?;
        condition(&o, "Synced").map(|_| ())
    })
    .await;
    assert_eq!(state.running().len(), 5, "{:?}", state.running());

    // The CRD goes away: its controller stops (issue 4); it comes back: the controller
    // starts again.
    env.thing_api(None)
        .patch(
            "late",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("drop finalizer");
    let crd_api: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(admin.clone());
    let legacy_crd = thing_crds[1]["metadata"]["name"]
        .as_str()
        .expect("name")
        .to_string();
    crd_api
        .delete(&legacy_crd, &DeleteParams::default())
        .await
        .expect("delete CRD");
    wait_for("legacy controller stopped", || async {
        (!state.running().contains(legacy)).then_some(())
    })
    .await;
    assert!(state.running().contains(modern));
    wait_for("CRD gone", || async {
        crd_api
            .get_opt(&legacy_crd)
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    install_crd(&admin, &thing_crds[1]).await;
    wait_for("legacy controller restarted", || async {
        state.running().contains(legacy).then_some(())
    })
    .await;

    // Without permission to watch CRDs, every controller starts at once.
    let other = "system:serviceaccount:crossplane-system:no-crd-access";
    let mut role = provider_role("no-crd-access", &all, &[]);
    if let Some(rules) = role["rules"].as_array_mut() {
        rules.retain(|r| r["apiGroups"][0] != "apiextensions.k8s.io");
    }
    grant(&admin, role, other).await;
    let limited = client_for(&env.server, &env.server.issue_token(other, &[])).await;
    let (state2, _guard2) = start_gate(&env, limited);
    wait_for("every controller started", || async {
        (state2.running().len() == 5).then_some(())
    })
    .await;
}

fn elector(client: &kube::Client, identity: &str) -> LeaderElector {
    let cfg = LeaderElectionConfig {
        name: lease_name("provider-fake"),
        namespace: "crossplane-system".into(),
        identity: identity.into(),
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(200),
    };
    LeaderElector::new(client.clone(), cfg, MetricsRegistry::default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_106_leader_election() {
    let env = Env::new(&[]).await;
    let leases: Api<Lease> = Api::namespaced(env.admin.clone(), "crossplane-system");
    let never = tokio_util::sync::CancellationToken::new();

    let mut a = elector(&env.provider, "host-a_1");
    assert!(a.acquire(&never).await);
    let mut b = elector(&env.provider, "host-b_2");
    for _ in 0..5 {
        assert!(
            !b.try_acquire_or_renew().await.expect("try"),
            "only one replica leads"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let lease = leases
        .get("crossplane-leader-election-provider-fake")
        .await
        .expect("lease");
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("host-a_1"));
    assert_eq!(spec.lease_duration_seconds, Some(4));

    // A keeps renewing while B waits: B must not take over.
    let stop_a = tokio_util::sync::CancellationToken::new();
    let holding = {
        let stop = stop_a.clone();
        tokio::spawn(async move {
            let r = a.hold(&stop).await;
            (a, r)
        })
    };
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(
        !b.try_acquire_or_renew().await.expect("try"),
        "a renewing leader keeps the lease"
    );

    // "Kill" A: it stops renewing without releasing (abort the task).
    holding.abort();
    let started = tokio::time::Instant::now();
    assert!(b.acquire(&never).await);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took over after {:?}",
        started.elapsed()
    );
    let spec = leases
        .get("crossplane-leader-election-provider-fake")
        .await
        .expect("lease")
        .spec
        .expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("host-b_2"));
    assert_eq!(spec.lease_transitions, Some(1));

    // A replica that finds another holder on renewal has lost and must exit.
    let mut a2 = elector(&env.provider, "host-a_1");
    let stop = tokio_util::sync::CancellationToken::new();
    assert!(
        a2.hold(&stop).await.is_err(),
        "the old leader learns it lost"
    );

    // Graceful release lets the next replica lead at once.
    b.release().await;
    let spec = leases
        .get("crossplane-leader-election-provider-fake")
        .await
        .expect("lease")
        .spec
        .expect("spec");
    assert!(spec.holder_identity.is_none());
    let mut c = elector(&env.provider, "host-c_3");
    assert!(c.try_acquire_or_renew().await.expect("try"));
    let _ = Arc::new(());
}
