//! Conformance tests of checklist section G (ProviderConfig and credentials) of
//! `docs/managed-reconciler.md` §17: the real reconciler, the real
//! `KubeConfigResolver` and the real config controllers against the Kubernetes API test
//! server, with the RBAC Crossplane grants a provider.
//!
//! A test binary of its own (not a module of `conformance_managed`): it installs the
//! process's global `tracing` subscriber and checks that no log line of the process holds a
//! secret, so it needs the process to itself.

mod process_support;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use process_support::*;
use provider_runtime::managed::Outcome;
use provider_runtime::providerconfig::{ConfigKind, FINALIZER_IN_USE, MSG_BLOCK_DELETION};
use serde_json::json;

/// Every log line of this test binary (to check that no secret value is logged).
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let w = buf.clone();
        let _ = tracing_subscriber::fmt()
            .with_env_filter("debug")
            .with_writer(move || LogWriter(w.clone()))
            .try_init();
        buf
    })
    .clone()
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);
impl Write for LogWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn cpc_ref(name: &str) -> serde_json::Value {
    json!({"providerConfigRef": {"kind": "ClusterProviderConfig", "name": name}})
}

async fn default_cpc(env: &Env, name: &str, token: &str) {
    env.secret(
        "crossplane-system",
        &format!("{name}-creds"),
        &[("token", token)],
    )
    .await;
    env.config(
        ConfigKind::ClusterProviderConfig,
        None,
        name,
        json!({"namespace": "crossplane-system", "name": format!("{name}-creds"), "key": "token"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_081_default_reference() {
    let env = Env::new(&[]).await;
    let o = env
        .thing(Some("default"), "t", json!({}))
        .await
        .expect("create");
    assert_eq!(
        o.data["spec"]["providerConfigRef"],
        json!({"kind": "ClusterProviderConfig", "name": "default"})
    );
    let legacy = env
        .thing(None, "t", json!({}))
        .await
        .expect("create legacy");
    assert_eq!(
        legacy.data["spec"]["providerConfigRef"],
        json!({"name": "default"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_082_name_without_kind_is_rejected() {
    let env = Env::new(&[]).await;
    let err = env
        .thing(
            Some("default"),
            "t",
            json!({"providerConfigRef": {"name": "x"}}),
        )
        .await
        .expect_err("a reference without kind must be rejected");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert!(s.message.contains("kind"), "{}", s.message);
        }
        other => panic!("unexpected error {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_083_provider_config_missing() {
    let env = Env::new(&[]).await;
    env.thing(Some("default"), "t", json!({}))
        .await
        .expect("create");
    let outcome = env.reconcile(Some("default"), "t").await;
    assert!(
        matches!(outcome, Outcome::Backoff | Outcome::Error(_)),
        "{outcome:?}"
    );
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    let (status, reason, message) = condition(&o, "Synced").expect("Synced");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ReconcileError")
    );
    assert!(message.starts_with("connect failed: "), "{message}");
    assert!(message.contains("not found"), "{message}");
    let events = env.events("default", "t").await;
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("CannotConnectToProvider")
                && e.type_.as_deref() == Some("Warning")),
        "{events:?}"
    );
    // Track before use: the usage record exists although the config does not.
    let uid = o.metadata.uid.clone().expect("uid");
    assert!(
        env.usage_api(Some("default"))
            .get_opt(&uid)
            .await
            .expect("get usage")
            .is_some()
    );

    // Creating the config later makes the MR converge at its next retry.
    default_cpc(&env, "default", "tok-83").await;
    env.reconcile(Some("default"), "t").await;
    env.reconcile(Some("default"), "t").await;
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    assert_eq!(condition(&o, "Synced").expect("Synced").0, "True");
    assert_eq!(token_of(&lock(&env.s).connects[0]), "tok-83");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_084_credentials_secret_missing() {
    let env = Env::new(&[]).await;
    env.config(
        ConfigKind::ClusterProviderConfig,
        None,
        "default",
        json!({"namespace": "crossplane-system", "name": "absent", "key": "token"}),
    )
    .await;
    env.thing(Some("default"), "t", json!({}))
        .await
        .expect("create");
    env.reconcile(Some("default"), "t").await;
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    let (status, _, message) = condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False");
    assert!(message.starts_with("connect failed:"), "{message}");
    assert!(
        message.contains("cannot get credentials secret"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_085_secret_key_missing_names_secret_and_key_never_value() {
    let logs = logs();
    let env = Env::new(&[]).await;
    let secret_value = "s3cr3t-value-085";
    env.secret("crossplane-system", "creds", &[("other", secret_value)])
        .await;
    env.cluster_config_on_creds("default").await;
    env.thing(Some("default"), "t", json!({}))
        .await
        .expect("create");
    env.reconcile(Some("default"), "t").await;
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    let (status, _, message) = condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False");
    assert!(message.contains("\"crossplane-system/creds\""), "{message}");
    assert!(message.contains("\"token\""), "{message}");
    let events = env.events("default", "t").await;
    assert!(!events.is_empty());
    for e in &events {
        assert!(!e.message.clone().unwrap_or_default().contains(secret_value));
    }
    assert!(
        !serde_json::to_string(&o.data)
            .expect("json")
            .contains(secret_value)
    );
    let text = String::from_utf8_lossy(&logs.lock().unwrap_or_else(|p| p.into_inner())).to_string();
    assert!(
        !text.contains(secret_value),
        "a log line contains the secret value"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_086_namespaced_provider_config_reads_mr_namespace() {
    let env = Env::new(&[]).await;
    env.secret("a", "creds", &[("token", "tok-from-a")]).await;
    env.secret("b", "creds", &[("token", "tok-from-b")]).await;
    env.config(
        ConfigKind::ProviderConfig,
        Some("a"),
        "pc",
        json!({"namespace": "b", "name": "creds", "key": "token"}),
    )
    .await;
    env.thing(
        Some("a"),
        "t",
        json!({"providerConfigRef": {"kind": "ProviderConfig", "name": "pc"}}),
    )
    .await
    .expect("create");
    env.reconcile(Some("a"), "t").await;
    let connects = &lock(&env.s).connects;
    assert_eq!(connects.len(), 1, "connect was reached");
    assert_eq!(token_of(&connects[0]), "tok-from-a");
    assert_eq!(connects[0].config_kind, "ProviderConfig");
    assert_eq!(connects[0].config_namespace.as_deref(), Some("a"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_087_usage_record_contents() {
    let env = Env::new(&[]).await;
    default_cpc(&env, "default", "tok").await;
    let mr = env.thing(Some("a"), "t", json!({})).await.expect("create");
    env.reconcile(Some("a"), "t").await;
    let uid = mr.metadata.uid.clone().expect("uid");
    let u = env
        .usage_api(Some("a"))
        .get(&uid)
        .await
        .expect("usage record");
    assert_eq!(u.metadata.name.as_deref(), Some(uid.as_str()));
    assert_eq!(u.metadata.namespace.as_deref(), Some("a"));
    let labels = u.metadata.labels.clone().expect("labels");
    assert_eq!(labels["crossplane.io/provider-config"], "default");
    assert_eq!(
        labels["crossplane.io/provider-config-kind"],
        "ClusterProviderConfig"
    );
    let owners = u.metadata.owner_references.clone().expect("owners");
    assert_eq!(owners.len(), 1);
    assert_eq!(owners[0].uid, uid);
    assert_eq!(owners[0].controller, Some(true));
    assert_eq!(owners[0].block_owner_deletion, Some(true));
    assert_eq!(
        u.data["providerConfigRef"],
        json!({"kind": "ClusterProviderConfig", "name": "default"})
    );
    assert_eq!(
        u.data["resourceRef"],
        json!({"apiVersion": "test.fake.m.crossplane.io/v1alpha1", "kind": "Thing", "name": "t"})
    );
    assert!(u.data.get("spec").is_none());
}

/// ClusterProviderConfigs `one` and `two`, and the MR `a/t` referring to `one`: its UID.
async fn two_configs_and_a_thing_on_one(env: &Env) -> String {
    default_cpc(env, "one", "tok-1").await;
    default_cpc(env, "two", "tok-2").await;
    let mr = env
        .thing(Some("a"), "t", cpc_ref("one"))
        .await
        .expect("create");
    mr.metadata.uid.clone().expect("uid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_088_switching_configs() {
    let env = Env::new(&[]).await;
    let _controllers = env.start_config_controllers().drop_guard();
    let uid = two_configs_and_a_thing_on_one(&env).await;
    env.reconcile(Some("a"), "t").await;
    let cpcs = env.config_api(ConfigKind::ClusterProviderConfig, None);
    wait_for("one has 1 user", || async {
        (users(&cpcs.get("one").await.ok()?) == 1).then_some(())
    })
    .await;
    let before = env.usage_api(Some("a")).get(&uid).await.expect("usage");

    env.thing_api(Some("a"))
        .patch(
            "t",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": cpc_ref("two")})),
        )
        .await
        .expect("switch");
    env.reconcile(Some("a"), "t").await;
    let after = env
        .usage_api(Some("a"))
        .get(&uid)
        .await
        .expect("same usage record");
    assert_eq!(
        after.metadata.uid, before.metadata.uid,
        "the same record is updated"
    );
    assert_eq!(after.data["providerConfigRef"]["name"], "two");
    wait_for("two has 1 user", || async {
        (users(&cpcs.get("two").await.ok()?) == 1).then_some(())
    })
    .await;
    wait_for("one has 0 users", || async {
        (users(&cpcs.get("one").await.ok()?) == 0).then_some(())
    })
    .await;
}

/// A usage record this process created or found is not read again at every poll (within
/// `USAGE_RECHECK`, as crossplane-runtime reads it from its informer cache), but a switch of
/// config is still recorded at once, and switching back too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_088b_usage_is_not_read_at_every_poll() {
    let env = Env::new(&[]).await;
    let uid = two_configs_and_a_thing_on_one(&env).await;
    // One reconciler (one resolver), as in a provider process.
    let rec = env.reconciler(provider_runtime::managed::Scope::Namespaced);
    let usage_gets = || env.provider_requests("get providerconfigusages");
    rec.reconcile(Some("a"), "t").await;
    let after_first = usage_gets();
    assert_eq!(after_first, 1, "the first reconcile looks the record up");
    rec.reconcile(Some("a"), "t").await;
    rec.reconcile(Some("a"), "t").await;
    assert_eq!(
        usage_gets(),
        after_first,
        "later polls do not read it again"
    );

    for to in ["two", "one"] {
        env.thing_api(Some("a"))
            .patch(
                "t",
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": cpc_ref(to)})),
            )
            .await
            .expect("switch");
        rec.reconcile(Some("a"), "t").await;
        let u = env.usage_api(Some("a")).get(&uid).await.expect("usage");
        assert_eq!(u.data["providerConfigRef"]["name"], to);
    }
}

/// With the config controllers' caches (as a provider process runs them), a reconcile takes
/// its ProviderConfig from the cache instead of the API server, as crossplane-runtime reads
/// it from its informer cache; a change of the config reaches the next reconcile through
/// the watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_088c_configs_are_read_from_the_controllers_cache() {
    let env = Env::new(&[]).await;
    let stores = Arc::new(provider_runtime::providerconfig::ConfigStores::default());
    let _controllers = env
        .start_config_controllers_with(Some(stores.clone()))
        .drop_guard();
    default_cpc(&env, "one", "tok-1").await;
    env.thing(Some("a"), "t", cpc_ref("one"))
        .await
        .expect("create");
    let rec = env.reconciler_resolving(
        provider_runtime::managed::Scope::Namespaced,
        env.resolver_plain().with_config_stores(stores.clone()),
    );
    let config_gets = || env.provider_requests("get clusterproviderconfigs");
    // Once the cache holds the config, reconciles do not read it.
    wait_for("the cache holds the config", || async {
        stores
            .get(&env.api, ConfigKind::ClusterProviderConfig, None, "one")
            .map(|_| ())
    })
    .await;
    // The first reconcile records the usage; the config controller then recounts its users
    // (reading the config itself): wait for that before counting.
    rec.reconcile(Some("a"), "t").await;
    let cpcs = env.config_api(ConfigKind::ClusterProviderConfig, None);
    wait_for("one has 1 user", || async {
        (users(&cpcs.get("one").await.ok()?) == 1).then_some(())
    })
    .await;
    let before = config_gets();
    for _ in 0..3 {
        rec.reconcile(Some("a"), "t").await;
    }
    assert_eq!(
        config_gets(),
        before,
        "no ProviderConfig read per reconcile"
    );
    let last_token = || token_of(lock(&env.s).connects.last().expect("a connect"));
    assert_eq!(last_token(), "tok-1");

    // A config pointed at another Secret: the next reconcile after the watch event uses it.
    env.secret("crossplane-system", "other", &[("token", "tok-other")])
        .await;
    cpcs.patch(
        "one",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"credentials": {"secretRef": {"name": "other"}}}})),
    )
    .await
    .expect("patch config");
    wait_for("the cache sees the change", || async {
        let o = stores.get(&env.api, ConfigKind::ClusterProviderConfig, None, "one")?;
        (o.data["spec"]["credentials"]["secretRef"]["name"] == "other").then_some(())
    })
    .await;
    rec.reconcile(Some("a"), "t").await;
    assert_eq!(last_token(), "tok-other");
}

/// With the credentials Secrets watched (as a provider process watches them), a reconcile
/// reads its config's Secret from the watch once it has listed, instead of a `GET` per
/// reconcile, as crossplane-runtime reads it from its informer cache: a rotated token reaches
/// the next reconcile after the watch delivers it, and a deleted Secret fails the connect as a
/// read of it would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_088d_credentials_secrets_are_read_from_their_watch() {
    use provider_runtime::managed::context::WatchClients;
    use provider_runtime::providerconfig::secrets::{Cached, SecretWatches};
    let env = Env::new(&[]).await;
    default_cpc(&env, "one", "tok-1").await;
    env.thing(Some("a"), "t", cpc_ref("one"))
        .await
        .expect("create");
    let client = env.provider.clone();
    let watches = Arc::new(SecretWatches::new(WatchClients::new(move || {
        Ok(client.clone())
    })));
    let rec = env.reconciler_resolving(
        provider_runtime::managed::Scope::Namespaced,
        env.resolver_plain().with_secret_watches(watches.clone()),
    );
    let secret_gets = || env.provider_requests("get secrets");
    let last_token = || token_of(lock(&env.s).connects.last().expect("a connect"));
    // The first reconcile reads the Secret and starts its watch.
    rec.reconcile(Some("a"), "t").await;
    assert_eq!(secret_gets(), 1);
    assert_eq!(last_token(), "tok-1");
    wait_for("the watch has listed the Secret", || async {
        matches!(
            watches.get("crossplane-system", "one-creds"),
            Cached::Present(_)
        )
        .then_some(())
    })
    .await;
    for _ in 0..3 {
        rec.reconcile(Some("a"), "t").await;
    }
    assert_eq!(secret_gets(), 1, "no Secret read per reconcile");
    assert_eq!(last_token(), "tok-1");

    // A rotated token.
    let secrets = kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(
        env.admin.clone(),
        "crossplane-system",
    );
    secrets
        .patch(
            "one-creds",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": {"token": "tok-2"}})),
        )
        .await
        .expect("rotate");
    wait_for("the watch delivers the rotation", || async {
        let Cached::Present(s) = watches.get("crossplane-system", "one-creds") else {
            return None;
        };
        let token = s.data.as_ref()?.get("token")?;
        (token.0 == b"tok-2").then_some(())
    })
    .await;
    rec.reconcile(Some("a"), "t").await;
    assert_eq!(last_token(), "tok-2");

    // A deleted Secret.
    secrets
        .delete("one-creds", &DeleteParams::default())
        .await
        .expect("delete");
    wait_for("the watch delivers the deletion", || async {
        (watches.get("crossplane-system", "one-creds") == Cached::Absent).then_some(())
    })
    .await;
    rec.reconcile(Some("a"), "t").await;
    let o = env.get_thing(Some("a"), "t").await.expect("exists");
    let (status, _, message) = condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False");
    assert!(
        message.contains("cannot get credentials secret: secrets \"one-creds\" not found"),
        "{message}"
    );
    assert_eq!(secret_gets(), 1, "still no read: the watch says it is gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_089_counting() {
    let env = Env::new(&[]).await;
    let _controllers = env.start_config_controllers().drop_guard();
    default_cpc(&env, "default", "tok").await;
    env.secret("a", "creds", &[("token", "tok-a")]).await;
    env.config(
        ConfigKind::ProviderConfig,
        Some("a"),
        "default",
        json!({"name": "creds", "key": "token"}),
    )
    .await;
    env.config(
        ConfigKind::ProviderConfig,
        Some("b"),
        "default",
        json!({"name": "creds", "key": "token"}),
    )
    .await;
    let pc_ref = json!({"providerConfigRef": {"kind": "ProviderConfig", "name": "default"}});
    env.thing(Some("a"), "c1", json!({})).await.expect("create");
    env.thing(Some("b"), "c2", json!({})).await.expect("create");
    env.thing(Some("a"), "p1", pc_ref.clone())
        .await
        .expect("create");
    env.thing(Some("a"), "p2", pc_ref.clone())
        .await
        .expect("create");
    env.thing(Some("b"), "p3", pc_ref).await.expect("create");
    for (ns, n) in [
        ("a", "c1"),
        ("b", "c2"),
        ("a", "p1"),
        ("a", "p2"),
        ("b", "p3"),
    ] {
        env.reconcile(Some(ns), n).await;
    }
    let cpcs = env.config_api(ConfigKind::ClusterProviderConfig, None);
    wait_for("cluster config counts MRs in a and b", || async {
        (users(&cpcs.get("default").await.ok()?) == 2).then_some(())
    })
    .await;
    let pcs_a = env.config_api(ConfigKind::ProviderConfig, Some("a"));
    wait_for("namespaced config in a counts only a's MRs", || async {
        (users(&pcs_a.get("default").await.ok()?) == 2).then_some(())
    })
    .await;
    let pcs_b = env.config_api(ConfigKind::ProviderConfig, Some("b"));
    wait_for("namespaced config in b counts only b's MRs", || async {
        (users(&pcs_b.get("default").await.ok()?) == 1).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_090_config_in_use_cannot_be_deleted() {
    let env = Env::new(&[]).await;
    let _controllers = env.start_config_controllers().drop_guard();
    default_cpc(&env, "default", "tok").await;
    env.thing(Some("a"), "t", json!({})).await.expect("create");
    env.reconcile(Some("a"), "t").await;
    env.reconcile(Some("a"), "t").await;
    let cpcs = env.config_api(ConfigKind::ClusterProviderConfig, None);
    wait_for("finalizer and one user", || async {
        let c = cpcs.get("default").await.ok()?;
        (users(&c) == 1
            && c.metadata
                .finalizers
                .unwrap_or_default()
                .iter()
                .any(|f| f == FINALIZER_IN_USE))
        .then_some(())
    })
    .await;

    cpcs.delete("default", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let blocked = wait_for("Terminating=True InUse", || async {
        let c = cpcs.get("default").await.ok()?;
        let (s, r, m) = condition(&c, "Terminating")?;
        (s == "True" && r == "InUse" && m == MSG_BLOCK_DELETION).then_some(c)
    })
    .await;
    assert!(blocked.metadata.deletion_timestamp.is_some());
    wait_for("UsageAccounting event", || async {
        env.events("default", "default")
            .await
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("UsageAccounting")
                    && e.type_.as_deref() == Some("Warning")
                    && e.message.as_deref() == Some(MSG_BLOCK_DELETION)
            })
            .then_some(())
    })
    .await;

    // Deleting the last MR removes the config.
    env.thing_api(Some("a"))
        .delete("t", &DeleteParams::default())
        .await
        .expect("delete MR");
    wait_for("MR gone", || async {
        env.reconcile(Some("a"), "t").await;
        env.get_thing(Some("a"), "t").await.is_none().then_some(())
    })
    .await;
    wait_for("config gone", || async {
        cpcs.get_opt("default").await.ok()?.is_none().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_091_stray_usages_deleted_and_not_counted() {
    // Deleting a stray record needs `delete` on usage records, which Crossplane's RBAC (§15.4)
    // does not grant (upstream bug crossplane/crossplane#6665: with the real RBAC the
    // controller emits `UsageAccounting: cannot delete ProviderConfigUsage: ... forbidden`).
    // The test grants exactly that verb.
    let extra = json!({"apiGroups": ["fake.m.crossplane.io", "fake.crossplane.io"],
                        "resources": ["providerconfigusages"], "verbs": ["delete"]});
    let env = Env::new(&[extra]).await;
    let _controllers = env.start_config_controllers().drop_guard();
    default_cpc(&env, "default", "tok").await;
    env.ensure_ns("a").await;
    let ar = env.api.api_resource(ConfigKind::ProviderConfigUsage);
    let stray: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": ar.api_version, "kind": ar.kind,
        "metadata": {"name": "stray", "namespace": "a", "labels": {
            "crossplane.io/provider-config": "default",
            "crossplane.io/provider-config-kind": "ClusterProviderConfig"}},
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
        "resourceRef": {"apiVersion": "test.fake.m.crossplane.io/v1alpha1", "kind": "Thing", "name": "gone"}
    }))
    .expect("usage");
    env.usage_api(Some("a"))
        .create(&PostParams::default(), &stray)
        .await
        .expect("create stray");
    env.thing(Some("a"), "t", json!({})).await.expect("create");
    env.reconcile(Some("a"), "t").await;
    wait_for("stray deleted", || async {
        env.usage_api(Some("a"))
            .get_opt("stray")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    let cpcs = env.config_api(ConfigKind::ClusterProviderConfig, None);
    wait_for("only the owned record counts", || async {
        (users(&cpcs.get("default").await.ok()?) == 1).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_092_unknown_kind() {
    let env = Env::new(&[]).await;
    env.thing(
        Some("default"),
        "t",
        json!({"providerConfigRef": {"kind": "Foo", "name": "x"}}),
    )
    .await
    .expect("create");
    env.reconcile(Some("default"), "t").await;
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    let (status, _, message) = condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False");
    assert!(message.starts_with("connect failed:"), "{message}");
    assert!(
        message.contains("unsupported provider config kind: Foo"),
        "{message}"
    );
}

/// A verifier that rejects the first `fail` calls, then accepts; counts calls.
struct CountingVerifier {
    calls: std::sync::atomic::AtomicU32,
    fail: u32,
}

#[async_trait::async_trait]
impl provider_runtime::providerconfig::ConfigVerifier for CountingVerifier {
    async fn verify(&self, c: &provider_runtime::managed::ResolvedConfig) -> Result<(), String> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n < self.fail {
            Err(format!(
                "cannot connect to JFrog platform {}: 401 unauthorized: Bad credentials",
                c.url
            ))
        } else {
            Ok(())
        }
    }
}

/// Issue 4: rejected credentials (the provider's ping) reach Synced and an event; a
/// successful check is cached so that a healthy config is not pinged on every reconcile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_credentials_reach_synced_and_successes_are_cached() {
    let env = Env::new(&[]).await;
    default_cpc(&env, "default", "tok").await;
    env.thing(Some("default"), "t", json!({}))
        .await
        .expect("create");
    let verifier = Arc::new(CountingVerifier {
        calls: Default::default(),
        fail: 1,
    });
    let rec = env.reconciler_resolving(
        provider_runtime::managed::Scope::Namespaced,
        env.resolver_plain().with_verifier(verifier.clone()),
    );
    rec.reconcile(Some("default"), "t").await;
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    let (status, _, message) = condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False");
    assert_eq!(
        message,
        "connect failed: cannot connect to JFrog platform https://jfrog.example/: 401 unauthorized: Bad credentials"
    );
    assert!(
        env.events("default", "t")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("CannotConnectToProvider"))
    );
    for _ in 0..3 {
        rec.reconcile(Some("default"), "t").await;
    }
    let o = env.get_thing(Some("default"), "t").await.expect("exists");
    assert_eq!(condition(&o, "Synced").expect("Synced").0, "True");
    assert_eq!(
        verifier.calls.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one failure, then one cached success"
    );
}
