//! A kube-runtime `Controller` with a finalizer and status updates runs a create / update /
//! delete cycle against the server without errors; two tasks doing leader election on one
//! Lease never both lead.

use crate::common::*;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use kube::runtime::watcher;
use kube::{CustomResource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.crossplane.io",
    version = "v1alpha1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
/// The spec of the test's managed Kind `Widget`.
pub struct WidgetSpec {
    #[serde(rename = "forProvider")]
    /// The desired state.
    pub for_provider: ForProvider,
}

#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
/// A Widget's desired state.
pub struct ForProvider {
    /// The colour (required).
    pub colour: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A free-text description.
    pub description: Option<String>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
/// What the test controller reports of a Widget.
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The Crossplane conditions (`Ready`, `Synced`).
    pub conditions: Option<Vec<serde_json::Value>>,
    #[serde(
        default,
        rename = "atProvider",
        skip_serializing_if = "Option::is_none"
    )]
    /// The observed state.
    pub at_provider: Option<serde_json::Value>,
}

struct Ctx {
    client: kube::Client,
    errors: AtomicUsize,
    cleanups: AtomicUsize,
}

#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error("finalizer: {0}")]
    Finalizer(#[from] Box<kube::runtime::finalizer::Error<kube::Error>>),
}

async fn reconcile(w: Arc<Widget>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let api: Api<Widget> = Api::namespaced(ctx.client.clone(), &w.namespace().unwrap_or_default());
    finalizer(&api, "example.crossplane.io/cleanup", w, |ev| async {
        match ev {
            FinalizerEvent::Apply(w) => {
                let status = serde_json::json!({
                    "apiVersion": "example.crossplane.io/v1alpha1",
                    "kind": "Widget",
                    "status": {
                        "conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2024-01-01T00:00:00Z"}],
                        "atProvider": {"observedGeneration": w.metadata.generation, "colour": w.spec.for_provider.colour},
                    }
                });
                api.patch_status(&w.name_any(), &PatchParams::apply("widget-controller").force(), &Patch::Apply(&status)).await?;
                Ok(Action::await_change())
            }
            FinalizerEvent::Cleanup(_) => {
                ctx.cleanups.fetch_add(1, Ordering::SeqCst);
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| ReconcileError::Finalizer(Box::new(e)))
}

fn error_policy(_w: Arc<Widget>, err: &ReconcileError, ctx: Arc<Ctx>) -> Action {
    eprintln!("reconcile error: {err}");
    ctx.errors.fetch_add(1, Ordering::SeqCst);
    Action::requeue(Duration::from_secs(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_create_update_delete_cycle() {
    let server = server().await;
    let client = admin(&server).await;
    install_widget_crd(&client).await;
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        errors: AtomicUsize::new(0),
        cleanups: AtomicUsize::new(0),
    });
    let all: Api<Widget> = Api::all(client.clone());
    let controller = Controller::new(all, watcher::Config::default())
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|_| async {});
    let handle = tokio::spawn(controller);

    let api: Api<Widget> = Api::namespaced(client.clone(), "default");
    let w = Widget::new(
        "cycle",
        WidgetSpec {
            for_provider: ForProvider {
                colour: "red".into(),
                description: None,
            },
        },
    );
    api.create(&PostParams::default(), &w)
        .await
        .expect("created");
    let observed = |generation: i64| {
        let api = api.clone();
        async move {
            let w = api.get("cycle").await.ok()?;
            let at = w.status?.at_provider?;
            (at["observedGeneration"] == generation).then_some(())
        }
    };
    eventually("first reconcile", || observed(1)).await;
    let w = api.get("cycle").await.expect("get");
    assert_eq!(
        w.finalizers(),
        &["example.crossplane.io/cleanup".to_string()]
    );
    assert_eq!(
        w.metadata.generation,
        Some(1),
        "status writes do not bump the generation"
    );

    api.patch(
        "cycle",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"forProvider": {"colour": "blue"}}})),
    )
    .await
    .expect("patched");
    eventually("second reconcile", || observed(2)).await;

    api.delete("cycle", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually("deletion", || {
        let api = api.clone();
        async move { api.get_opt("cycle").await.ok()?.is_none().then_some(()) }
    })
    .await;
    assert_eq!(ctx.cleanups.load(Ordering::SeqCst), 1);
    assert_eq!(
        ctx.errors.load(Ordering::SeqCst),
        0,
        "the controller saw errors"
    );
    handle.abort();
}

/// One contender's lease loop, as client-go's leader elector does it: acquire or renew with an
/// optimistic-concurrency update (409 when somebody else wrote first), take over only an
/// expired lease, lead for a few renewals, then step down by no longer renewing.
async fn contend(
    api: Api<Lease>,
    me: String,
    leaders: Arc<AtomicUsize>,
    max_seen: Arc<AtomicUsize>,
    terms: Arc<AtomicUsize>,
    stop: tokio_util::sync::CancellationToken,
) {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::Timestamp;
    let lease_secs = 5i32;
    let mut renewals = 0;
    while !stop.is_cancelled() {
        let now = Timestamp::now();
        let mut lease = match api.get_opt("leader").await.expect("get lease") {
            Some(l) => l,
            None => {
                let l: Lease = serde_json::from_value(
                    serde_json::json!({"metadata": {"name": "leader"}, "spec": {}}),
                )
                .expect("lease");
                match api.create(&PostParams::default(), &l).await {
                    Ok(l) => l,
                    Err(kube::Error::Api(e)) if e.code == 409 => continue,
                    Err(e) => panic!("unexpected lease error: {e}"),
                }
            }
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let renewed = spec
            .renew_time
            .as_ref()
            .map(|t| t.0)
            .unwrap_or(Timestamp::MIN);
        let expired = now.duration_since(renewed).as_millis()
            > i128::from(spec.lease_duration_seconds.unwrap_or(0)) * 1000;
        if holder == me || holder.is_empty() || expired {
            let mut s = spec.clone();
            s.holder_identity = Some(me.clone());
            s.lease_duration_seconds = Some(lease_secs);
            s.renew_time = Some(MicroTime(now));
            if holder != me {
                s.acquire_time = Some(MicroTime(now));
                s.lease_transitions = Some(s.lease_transitions.unwrap_or(0) + 1);
            }
            lease.spec = Some(s);
            // The resourceVersion we read makes this a 409 if anybody wrote in between.
            match api.replace("leader", &PostParams::default(), &lease).await {
                Ok(_) => {
                    if renewals == 0 {
                        let n = leaders.fetch_add(1, Ordering::SeqCst) + 1;
                        max_seen.fetch_max(n, Ordering::SeqCst);
                        terms.fetch_add(1, Ordering::SeqCst);
                    }
                    renewals += 1;
                    if renewals == 3 {
                        // Step down: stop leading first, then stop renewing and wait out the lease.
                        leaders.fetch_sub(1, Ordering::SeqCst);
                        renewals = 0;
                        tokio::time::sleep(Duration::from_secs(lease_secs as u64 + 1)).await;
                        continue;
                    }
                }
                Err(kube::Error::Api(e)) if e.code == 409 => {}
                Err(e) => panic!("unexpected lease error: {e}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if renewals > 0 {
        leaders.fetch_sub(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_election_never_two_leaders() {
    let server = server().await;
    let leaders = Arc::new(AtomicUsize::new(0));
    let max_seen = Arc::new(AtomicUsize::new(0));
    let terms = Arc::new(AtomicUsize::new(0));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut tasks = Vec::new();
    for me in ["a", "b"] {
        // Separate clients, as two processes would have.
        let client = admin(&server).await;
        let api: Api<Lease> = Api::namespaced(client, "crossplane-system");
        tasks.push(tokio::spawn(contend(
            api,
            me.to_string(),
            leaders.clone(),
            max_seen.clone(),
            terms.clone(),
            stop.clone(),
        )));
    }
    let t = terms.clone();
    eventually("three leadership terms", || {
        let t = t.clone();
        async move { (t.load(Ordering::SeqCst) >= 3).then_some(()) }
    })
    .await;
    stop.cancel();
    for t in tasks {
        t.await.expect("contender finished");
    }
    assert_eq!(
        max_seen.load(Ordering::SeqCst),
        1,
        "two contenders led at once"
    );
    let lease: Api<Lease> = Api::namespaced(admin(&server).await, "crossplane-system");
    let l = lease.get("leader").await.expect("lease");
    assert!(l.spec.and_then(|s| s.lease_transitions).unwrap_or(0) >= 3);
    let _ = server;
}
