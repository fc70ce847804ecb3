//! The mail server password, a plain string upstream, from a Secret (`passwordSecretRef`
//! beside `password`) through the real reconciler, the Kubernetes API test server and the
//! simulator.

use std::sync::Arc;

use provider_family::ClientCache;
use provider_family_suite as suite;
use serde_json::{Value, json};

use crate::family_suite::{assert_no_writes, converge, start};

/// The password from a Secret is what JFrog stores; the plain form with the same value is
/// not drift; a missing Secret is Synced=False naming it without a write or a value; both
/// forms at once are refused at admission.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mail_server_password_comes_from_a_secret_or_the_plain_field() {
    let (i, d) = super::tables::KINDS
        .iter()
        .enumerate()
        .find(|(_, d)| d.kind == "MailServer")
        .expect("declared");
    let kind = super::kinds()[i].clone();
    let cache = Arc::new(crate::client_cache(
        &provider_common::Connections::default(),
        crate::repository::bulk::BulkMode::Off,
    ));
    let mut env = start(super::kinds(), cache).await;
    env.create_objects(&[json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "smtp", "namespace": "default"},
        "stringData": {"password": "smtp-from-secret"},
    })])
    .await;
    let base = super::examples::example_params(d);
    let with = |extra: Value| {
        let mut p = base.clone();
        for (k, v) in extra.as_object().expect("object") {
            p[k] = v.clone();
        }
        p
    };
    let manifest = provider_family::examples::manifest(
        d,
        "mail",
        with(
            json!({"username": "robot", "passwordSecretRef": {"name": "smtp", "key": "password"}}),
        ),
        false,
    );
    env.add(&kind, manifest).await;
    let m = &env.mrs[0];
    converge(std::slice::from_ref(m)).await;
    let stored =
        |sim: &jfrog_sim::Simulator| sim.system_configuration()["mailServer"]["password"].clone();
    assert_eq!(stored(&env.sim), json!("smtp-from-secret"));
    assert_no_writes(&env.sim, std::slice::from_ref(m), 2).await;

    let set_params = |params: Value| async move {
        let mut o = m.get().await;
        o.data["spec"]["forProvider"] = params;
        m.api
            .replace(&m.name, &Default::default(), &o)
            .await
            .expect("update MR");
    };
    // The same value given plainly: the same hash, nothing sent.
    set_params(with(
        json!({"username": "robot", "password": "smtp-from-secret"}),
    ))
    .await;
    assert_no_writes(&env.sim, std::slice::from_ref(m), 2).await;
    assert!(m.ready_and_synced().await);
    // Another plain value is sent.
    set_params(with(
        json!({"username": "robot", "password": "plain-changed"}),
    ))
    .await;
    for _ in 0..3 {
        m.reconcile().await;
    }
    assert_eq!(stored(&env.sim), json!("plain-changed"));

    // A missing Secret: Synced=False naming it, no write, no value.
    set_params(with(
        json!({"username": "robot", "passwordSecretRef": {"name": "gone", "key": "password"}}),
    ))
    .await;
    env.sim.reset_counts();
    m.reconcile().await;
    let synced = testkit::condition(&m.get().await, "Synced").expect("Synced");
    assert_eq!(synced.0, "False", "{synced:?}");
    assert!(synced.2.contains("default/gone"), "{synced:?}");
    assert!(!synced.2.contains("smtp-from-secret") && !synced.2.contains("plain-changed"));
    assert_eq!(suite::writes(&env.sim, &[]), 0);

    // Both forms at once: refused at admission.
    let crds = suite::CrdSchemas::new(
        "artifactory",
        &super::registrations(Arc::new(ClientCache::new(crate::PROVIDER))),
    );
    let both = provider_family::examples::manifest(
        d,
        "mail",
        with(json!({"password": "x", "passwordSecretRef": {"name": "smtp", "key": "password"}})),
        false,
    );
    let errs = format!("{:?}", crds.schema(d, false).validate(&both, None));
    assert!(
        errs.contains("set password or passwordSecretRef, not both"),
        "{errs}"
    );
}
