//! provider-platform's run of the generic family suite (`provider_family_suite`): every
//! example, applied in reverse order (the order must not matter), plus the legacy ones and
//! the Secret the examples read.

use std::sync::Arc;

use provider_family::ClientCache;
use provider_family_suite::{self as suite, Env, Suite};
use serde_json::{Value, json};

use crate::platform::{examples, kinds, tables::KINDS};

/// One member edited in JFrog per Kind where the API can change it.
fn drift(kind: &str) -> Option<(&'static str, Value)> {
    Some(match kind {
        "GlobalRole" | "Group" | "OIDCConfiguration" | "WorkersService" => {
            ("/description", json!("edited in the UI"))
        }
        "SCIMUser" => ("/active", json!(false)),
        "AWSIAMRole" => ("/iam_role", json!("arn:aws:iam::123456789012:role/other")),
        "CrowdSettings" => ("/application_name", json!("other")),
        "HTTPSSOSettings" => ("/auto_create_user", json!(true)),
        "OIDCIdentityMapping" => ("/priority", json!(7)),
        "SAMLSettings" => ("/login_url", json!("https://other.example.com/login")),
        "ReverseProxy" => ("/httpPort", json!(8080)),
        "Lifecycle" => ("/promote_stages", json!([])),
        "LifecycleStage" => ("/category", json!("code")),
        _ => return None,
    })
}

/// Objects that can be removed are removed for the others; the licence key is never read
/// back (a drift JFrog does not show).
fn removes(kind: &str) -> bool {
    kind != "License" && drift(kind).is_none()
}

/// The repository the examples refer to (provider-artifactory's example).
fn seed(sim: &jfrog_sim::Simulator) {
    assert!(sim.put_repository_raw(
        "example-local-generic",
        json!({"key": "example-local-generic", "rclass": "local", "packageType": "generic"})
    ));
}

/// Both servers with provider-platform's CRDs, the Secret the examples read and the
/// repository they refer to.
async fn start() -> Env {
    start_listing(None).await
}

/// [`start`] with observation by list at snapshot TTL `ttl` (`None`: by key only).
async fn start_listing(ttl: Option<std::time::Duration>) -> Env {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(ttl);
    let env = suite::start(crate::PROVIDER, kinds(), cache).await;
    env.create_objects(&[examples::secret()]).await;
    seed(&env.sim);
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_platform_kind_passes_the_suite() {
    platform_suite(None).await;
}

/// The same with observation by list (a 1 ms TTL: every observe lists afresh, so a drift
/// is found in the list entries, or by the read a name-only list leads to).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_platform_kind_passes_the_suite_observed_by_list() {
    platform_suite(Some(std::time::Duration::from_millis(1))).await;
}

async fn platform_suite(ttl: Option<std::time::Duration>) {
    let s = Suite {
        provider: crate::PROVIDER,
        drift,
        deletes: suite::always_deletes,
        seed,
        read_calls: &[],
        removes,
        delete_last: &["LifecycleStage", "OIDCConfiguration", "Group"],
        // No reset by hand: deleting the Lifecycle MR empties its promote stages, which
        // frees the stage deleted after it.
        resets: &[],
    };
    let mut examples: Vec<(String, Value)> = KINDS
        .iter()
        .rev()
        .map(|d| (d.kind.to_string(), examples::example(d, false)))
        .collect();
    for d in KINDS
        .iter()
        .filter(|d| examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((d.kind.to_string(), examples::example(d, true)));
    }
    suite::run(&s, start_listing(ttl).await, kinds(), examples).await;
}

/// A second MR for a singleton is refused (Synced=False naming the first) without a write,
/// and takes over once the first is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_mr_for_a_singleton_is_refused_naming_the_first() {
    let (i, d) = KINDS
        .iter()
        .enumerate()
        .find(|(_, d)| d.kind == "CrowdSettings")
        .expect("declared");
    let kind = &kinds()[i];
    let mut env = start().await;
    env.add(kind, examples::example(d, false)).await;
    let mut second = examples::example(d, false);
    second["metadata"]["name"] = json!("second-crowd");
    second["spec"]["forProvider"]["applicationName"] = json!("other");
    env.add(kind, second).await;
    let (first, second) = (&env.mrs[0], &env.mrs[1]);
    while !first.ready_and_synced().await {
        first.reconcile().await;
    }
    env.sim.reset_counts();
    second.reconcile().await;
    let synced = testkit::condition(&second.get().await, "Synced").expect("Synced");
    assert_eq!(synced.0, "False");
    assert!(
        synced.2.contains("default/example-crowd-settings"),
        "{synced:?}"
    );
    assert_eq!(
        suite::writes(&env.sim, &[]),
        0,
        "{:?}",
        env.sim.request_counts()
    );

    first
        .api
        .delete(&first.name, &Default::default())
        .await
        .expect("delete");
    while first.api.get_opt(&first.name).await.expect("get").is_some() {
        first.reconcile().await;
    }
    for _ in 0..5 {
        if second.ready_and_synced().await {
            break;
        }
        second.reconcile().await;
    }
    assert!(second.ready_and_synced().await, "the second MR took over");
}

/// GroupMembers owns its group's member list, as upstream does: a member added by hand is
/// drift and removed, a member dropped from the spec is removed, the declared ones are
/// added; deleting the MR removes the members it declares and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_own_the_member_list() {
    let (i, d) = KINDS
        .iter()
        .enumerate()
        .find(|(_, d)| d.kind == "GroupMembers")
        .expect("declared");
    let kind = &kinds()[i];
    let mut env = start().await;
    // The MR is deleted a moment after its create: no grace for the create to show.
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    let group = "example-group";
    let members = |sim: &jfrog_sim::Simulator| {
        let g = sim.object("access_groups", group).expect("the group");
        let mut m: Vec<String> = g["members"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        m.sort();
        m
    };
    for user in ["alice", "bob", "carol", "dave"] {
        assert!(env.sim.put_object(
            "users",
            user,
            json!({"email": format!("{user}@example.com")})
        ));
    }
    // The group exists with a member added by hand.
    assert!(env.sim.put_object(
        "access_groups",
        group,
        json!({"name": group, "description": "", "members": ["bob"]})
    ));
    let mut manifest = examples::example(d, false);
    manifest["spec"]["forProvider"]["members"] = json!(["alice", "carol"]);
    env.add(kind, manifest).await;
    let m = &env.mrs[0];
    suite::converge(std::slice::from_ref(m)).await;
    assert_eq!(members(&env.sim), ["alice", "carol"]);
    suite::assert_no_writes(&env.sim, std::slice::from_ref(m), 2, &[]).await;

    // A member added by hand again is drift: removed by the next reconcile.
    let mut g = env.sim.object("access_groups", group).expect("the group");
    g["members"] = json!(["alice", "carol", "dave"]);
    assert!(env.sim.put_object("access_groups", group, g));
    m.reconcile().await;
    assert_eq!(members(&env.sim), ["alice", "carol"]);

    // A member dropped from the spec is removed.
    let mut o = m.get().await;
    o.data["spec"]["forProvider"]["members"] = json!(["alice"]);
    m.api
        .replace(&m.name, &Default::default(), &o)
        .await
        .expect("update MR");
    suite::converge(std::slice::from_ref(m)).await;
    for _ in 0..3 {
        m.reconcile().await;
    }
    assert_eq!(members(&env.sim), ["alice"]);

    // Deleting the MR removes the members it declares and nothing else (a member added by
    // hand meanwhile stays); the group stays.
    let mut g = env.sim.object("access_groups", group).expect("the group");
    g["members"] = json!(["alice", "dave"]);
    assert!(env.sim.put_object("access_groups", group, g));
    m.api
        .delete(&m.name, &Default::default())
        .await
        .expect("delete MR");
    for _ in 0..5 {
        if m.api.get_opt(&m.name).await.expect("get").is_none() {
            break;
        }
        m.reconcile().await;
    }
    assert!(
        m.api.get_opt(&m.name).await.expect("get").is_none(),
        "not released: {:?}",
        testkit::condition(&m.get().await, "Synced")
    );
    assert_eq!(members(&env.sim), ["dave"]);
}

/// The licence key from a Secret (`keySecretRef`, beside upstream's plain `key`): sent as
/// JFrog's `licenseKey`, quiet afterwards, the plain form with the same value is not drift,
/// a changed Secret is sent again, a missing Secret is Synced=False naming the Secret and
/// key (never a value) without a write, and both forms at once are refused at admission.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_licence_key_comes_from_a_secret_or_the_plain_field() {
    let (i, d) = KINDS
        .iter()
        .enumerate()
        .find(|(_, d)| d.kind == "License")
        .expect("declared");
    let kind = &kinds()[i];
    let mut env = start().await;
    let secret = |value: &str| {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "licence", "namespace": "default"},
            "stringData": {"key": value},
        })
    };
    env.create_objects(&[secret("LIC-FROM-SECRET")]).await;
    let stored = |sim: &jfrog_sim::Simulator| {
        sim.object("platform_settings", "license")
            .and_then(|l| l["licenseKey"].as_str().map(str::to_string))
    };
    let mut manifest = examples::example(d, false);
    manifest["spec"]["forProvider"] = json!({"keySecretRef": {"name": "licence", "key": "key"}});
    env.add(kind, manifest).await;
    let m = &env.mrs[0];
    suite::converge(std::slice::from_ref(m)).await;
    assert_eq!(stored(&env.sim).as_deref(), Some("LIC-FROM-SECRET"));
    suite::assert_no_writes(&env.sim, std::slice::from_ref(m), 2, &[]).await;

    let set_params = |params: Value| async move {
        let mut o = m.get().await;
        o.data["spec"]["forProvider"] = params;
        m.api
            .replace(&m.name, &Default::default(), &o)
            .await
            .expect("update MR");
    };
    // The same value given plainly: the same hash, nothing to send.
    set_params(json!({"key": "LIC-FROM-SECRET"})).await;
    suite::assert_no_writes(&env.sim, std::slice::from_ref(m), 2, &[]).await;
    assert!(m.ready_and_synced().await);

    // A new value in the Secret is sent.
    set_params(json!({"keySecretRef": {"name": "licence", "key": "key"}})).await;
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(env.admin.clone(), "default");
    secrets
        .delete("licence", &Default::default())
        .await
        .expect("delete Secret");
    env.create_objects(&[secret("LIC-ROTATED")]).await;
    for _ in 0..3 {
        m.reconcile().await;
    }
    assert_eq!(stored(&env.sim).as_deref(), Some("LIC-ROTATED"));

    // A missing Secret: Synced=False naming it and its key, no write, no value shown.
    set_params(json!({"keySecretRef": {"name": "nope", "key": "licence-key"}})).await;
    env.sim.reset_counts();
    m.reconcile().await;
    let synced = testkit::condition(&m.get().await, "Synced").expect("Synced");
    assert_eq!(synced.0, "False", "{synced:?}");
    assert!(synced.2.contains("default/nope"), "{synced:?}");
    assert!(synced.2.contains("keySecretRef"), "{synced:?}");
    assert!(!synced.2.contains("LIC-"), "{synced:?}");
    assert_eq!(suite::writes(&env.sim, &[]), 0);

    // Both forms, or neither, refused (admission; neither before any write).
    let crds = suite::CrdSchemas::new(
        "platform",
        &crate::platform::registrations(Arc::new(ClientCache::new(crate::PROVIDER))),
    );
    let mut both = examples::example(d, false);
    both["spec"]["forProvider"]["keySecretRef"] = json!({"name": "licence", "key": "key"});
    let errs = format!("{:?}", crds.schema(d, false).validate(&both, None));
    assert!(errs.contains("set key or keySecretRef, not both"), "{errs}");
    set_params(json!({"name": "no key"})).await;
    env.sim.reset_counts();
    m.reconcile().await;
    let synced = testkit::condition(&m.get().await, "Synced").expect("Synced");
    assert!(
        synced.2.contains("key or keySecretRef is required"),
        "{synced:?}"
    );
    assert_eq!(suite::writes(&env.sim, &[]), 0);
}
