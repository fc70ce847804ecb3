//! The family's own behaviour through the real reconciler: a second MR for a singleton is
//! refused (naming the first) and its delete leaves the policy alone, the first one's delete
//! resets it; an API JFrog removed is refused before any write, naming its replacement; the
//! user API follows the platform's version.

use std::sync::Arc;

use kube::api::DeleteParams;
use provider_family::ClientCache;
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use super::examples;
use crate::family_suite::{Env, Mr, converge, start_with};

async fn env(version: &str) -> Env {
    let suite = examples::suite();
    let mut env = start_with(
        super::kinds(),
        Arc::new(ClientCache::new(crate::PROVIDER)),
        jfrog_sim::SimConfig {
            artifactory_version: version.into(),
            ..jfrog_sim::SimConfig::default()
        },
    )
    .await;
    env.create_objects(&suite.objects).await;
    // Deletes right after creates: no grace period for the object to appear.
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    env
}

async fn add(env: &mut Env, kind: &str, manifest: Value) {
    let k = super::kinds()
        .iter()
        .find(|k| k.info().kind == kind)
        .expect("declared")
        .clone();
    env.add(&k, manifest).await;
}

fn decl(kind: &str) -> &'static provider_family::KindDecl {
    super::tables::KINDS
        .iter()
        .find(|d| d.kind == kind)
        .expect("declared")
}

fn synced(o: &kube::api::DynamicObject) -> (String, String) {
    testkit::condition(o, "Synced")
        .map(|(s, _, m)| (s, m))
        .unwrap_or_default()
}

async fn delete(m: &Mr) {
    m.api
        .delete(&m.name, &DeleteParams::default())
        .await
        .expect("delete MR");
    for _ in 0..50 {
        if m.api.get_opt(&m.name).await.expect("get").is_none() {
            return;
        }
        m.reconcile().await;
    }
    let o = m.get().await;
    panic!("{} not released: {:?}", m.name, testkit::conditions(&o));
}

fn writes(env: &Env) -> u64 {
    crate::family_suite::writes(&env.sim)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_mr_for_a_singleton_is_refused_and_only_the_first_resets_it() {
    let mut env = env(examples::TEST_VERSION).await;
    let d = decl("UserLockPolicy");
    add(&mut env, "UserLockPolicy", examples::example(d, false)).await;
    let mut second = examples::example(d, false);
    second["metadata"]["name"] = json!("another-lock-policy");
    second["spec"]["forProvider"]["loginAttempts"] = json!(3);
    add(&mut env, "UserLockPolicy", second).await;
    converge(&env.mrs[..1]).await;
    env.sim.reset_counts();
    for _ in 0..2 {
        env.mrs[1].reconcile().await;
    }
    let (status, message) = synced(&env.mrs[1].get().await);
    assert_eq!(status, "False", "{message}");
    assert!(
        message.contains("already managed by default/example-user-lock-policy"),
        "{message}"
    );
    assert_eq!(writes(&env), 0, "the second MR wrote");
    let policy = |env: &Env| env.sim.object("security_policies", "userLockPolicy");
    assert_eq!(policy(&env).expect("policy")["loginAttempts"], 5);

    // Deleting the second leaves the policy as the first set it.
    delete(&env.mrs[1]).await;
    assert_eq!(policy(&env).expect("policy")["loginAttempts"], 5);
    assert_eq!(policy(&env).expect("policy")["enabled"], true);
    // Deleting the first resets it (disabled, 0 attempts), as the catalog says.
    delete(&env.mrs[0]).await;
    let p = policy(&env).expect("policy");
    assert_eq!(
        (p["enabled"].clone(), p["loginAttempts"].clone()),
        (json!(false), json!(0))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_api_is_refused_naming_its_replacement() {
    // The simulator's default version has no API keys any more.
    let mut env = env("7.117.5").await;
    add(&mut env, "APIKey", examples::example(decl("APIKey"), false)).await;
    env.sim.reset_counts();
    for _ in 0..2 {
        env.mrs[0].reconcile().await;
    }
    let (status, message) = synced(&env.mrs[0].get().await);
    assert_eq!(status, "False");
    assert!(message.contains("use ScopedToken"), "{message}");
    assert!(message.contains("7.98.0"), "{message}");
    assert_eq!(writes(&env), 0, "{:?}", env.sim.request_counts());
    assert_eq!(env.sim.object_count("api_keys"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_go_through_the_api_of_the_platforms_version() {
    for (version, route, other) in [
        (
            "7.80.0",
            "/artifactory/api/security/users/{name}",
            "/access/api/v2/users",
        ),
        (
            examples::TEST_VERSION,
            "/access/api/v2/users/{name}",
            "/artifactory/api/security/users/{name}",
        ),
    ] {
        let mut env = env(version).await;
        add(
            &mut env,
            "ManagedUser",
            examples::example(decl("ManagedUser"), false),
        )
        .await;
        converge(&env.mrs).await;
        let counts = env.sim.request_counts();
        assert!(
            counts.iter().any(|(k, _)| k.ends_with(route)),
            "{version}: {counts:?}"
        );
        assert!(
            !counts.iter().any(|(k, _)| k.ends_with(other)),
            "{version}: {counts:?}"
        );
        let user = env
            .sim
            .object("users", "example-managed-user")
            .expect("created");
        assert_eq!(user["email"], "managed-user@example.com");
        assert!(
            user.get("password").is_none(),
            "the simulator keeps no password"
        );
        // Quiet afterwards, then the delete goes through the same API.
        env.sim.reset_counts();
        env.mrs[0].reconcile().await;
        assert_eq!(writes(&env), 0, "{version}: {:?}", env.sim.request_counts());
        delete(&env.mrs[0]).await;
        assert!(env.sim.object("users", "example-managed-user").is_none());
    }
}

/// A user's memberships change through `PATCH /access/api/v2/users/{name}/groups` with
/// `{add, remove}`: JFrog's "Update a User (Partial Update)" takes no `groups`, and JFrog's
/// Terraform provider syncs them that way after every update (`syncReadersGroup`, v12.11.7
/// `pkg/artifactory/resource/user/user.go`). One update adds, another removes; quiet after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_groups_change_through_the_groups_call() {
    let mut env = env(examples::TEST_VERSION).await;
    add(
        &mut env,
        "ManagedUser",
        examples::example(decl("ManagedUser"), false),
    )
    .await;
    converge(&env.mrs).await;
    let groups_call = "PATCH /access/api/v2/users/{name}/groups";
    for groups in [json!(["readers"]), json!([])] {
        let mut o = env.mrs[0].get().await;
        o.data["spec"]["forProvider"]["groups"] = groups.clone();
        env.mrs[0]
            .api
            .replace(&env.mrs[0].name, &Default::default(), &o)
            .await
            .expect("replace");
        env.sim.reset_counts();
        for _ in 0..3 {
            env.mrs[0].reconcile().await;
        }
        let counts = env.sim.request_counts();
        assert_eq!(counts.get(groups_call), Some(&1), "{groups}: {counts:?}");
        let user = env
            .sim
            .object("users", "example-managed-user")
            .expect("user");
        assert_eq!(user["groups"], groups, "{user}");
        assert!(env.mrs[0].ready_and_synced().await, "{groups}");
    }
    env.sim.reset_counts();
    env.mrs[0].reconcile().await;
    assert_eq!(writes(&env), 0, "{:?}", env.sim.request_counts());
}

/// Requests per MR per poll in steady state, with observation by list on (as the provider
/// runs it: the snapshot TTL is the controllers' --poll): every example, one poll, counted.
/// Printed for the record; asserted only as "no MR costs more than one request per poll and
/// the list-observed families cost one list per poll".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_per_mr_per_poll() {
    let suite = examples::suite();
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    // A poll of one second, so that the poll below comes after the snapshots expired.
    cache.set_snapshot_ttl(Some(std::time::Duration::from_secs(1)));
    let mut env = start_with(super::kinds(), cache, suite.sim.clone()).await;
    env.create_objects(&suite.objects).await;
    for (key, config) in &suite.repositories {
        assert!(env.sim.put_repository_raw(key, config.clone()), "{key}");
    }
    for (kind, manifest) in examples::all_examples() {
        add(&mut env, &kind, manifest).await;
    }
    converge(&env.mrs).await;
    // Let the snapshots' answers expire, then one poll.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    env.sim.reset_counts();
    for m in &env.mrs {
        m.reconcile().await;
    }
    let counts = env.sim.request_counts();
    let total: u64 = counts.values().sum();
    let mrs = env.mrs.len() as u64;
    eprintln!(
        "{mrs} MRs, one poll: {total} requests ({:.2} per MR): {counts:?}",
        total as f64 / mrs as f64
    );
    assert_eq!(writes(&env), 0, "{counts:?}");
    assert!(total <= mrs, "{counts:?}");
    // One list call serves both environment MRs.
    assert_eq!(
        counts.get("GET /access/api/v1/environments"),
        Some(&1),
        "{counts:?}"
    );
}

/// A User without a password gets one generated, as the official provider does: it is sent
/// on create (JFrog refuses an internal user without one), published in the connection
/// Secret under `attribute.password` only (not in the MR, its events, other Secrets or the
/// simulator's objects), and compared by hash afterwards: later polls write nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_password_reaches_the_connection_secret_only_and_does_not_churn() {
    use k8s_openapi::api::core::v1::{Event, Secret};
    use kube::Api;
    use kube::api::ListParams;

    let mut env = env(examples::TEST_VERSION).await;
    let mut m = examples::example(decl("User"), false);
    let params = m["spec"]["forProvider"]
        .as_object_mut()
        .expect("forProvider");
    assert!(params.remove("passwordSecretRef").is_some());
    m["spec"]["writeConnectionSecretToRef"] = json!({"name": "generated-user-connection"});
    add(&mut env, "User", m).await;
    converge(&env.mrs).await;
    let user = env.sim.object("users", "example-user").expect("created");
    assert_eq!(user["internal_password_disabled"], false);

    let ns = crate::family_suite::NS;
    let secrets: Api<Secret> = Api::namespaced(env.admin.clone(), ns);
    let conn = secrets
        .get("generated-user-connection")
        .await
        .expect("connection Secret");
    let data = conn.data.clone().unwrap_or_default();
    let password = String::from_utf8(data["attribute.password"].0.clone()).expect("utf-8");
    assert_eq!(password.len(), 16, "generated");
    for class in [
        char::is_ascii_uppercase,
        char::is_ascii_lowercase,
        char::is_ascii_digit,
        char::is_ascii_punctuation,
    ] {
        assert!(password.chars().any(|c| class(&c)), "every class");
    }

    // No churn: two more polls write nothing, the MR stays Ready and Synced.
    env.sim.reset_counts();
    for _ in 0..2 {
        env.mrs[0].reconcile().await;
    }
    assert_eq!(writes(&env), 0, "{:?}", env.sim.request_counts());
    assert!(env.mrs[0].ready_and_synced().await);

    // Nowhere else.
    let mut places: Vec<(String, String)> = vec![
        (
            "the MR".into(),
            serde_json::to_string(&env.mrs[0].get().await).expect("json"),
        ),
        ("the simulator's user".into(), user.to_string()),
    ];
    let events: Api<Event> = Api::all(env.admin.clone());
    for e in events.list(&ListParams::default()).await.expect("events") {
        places.push(("an event".into(), serde_json::to_string(&e).expect("json")));
    }
    for s in secrets.list(&ListParams::default()).await.expect("secrets") {
        if s.metadata.name.as_deref() != Some("generated-user-connection") {
            places.push((
                "another Secret".into(),
                serde_json::to_string(&s).expect("json"),
            ));
        }
    }
    assert!(places.len() > 2, "events were recorded");
    for (place, text) in &places {
        assert!(
            !text.contains(&password),
            "the password leaked into {place}"
        );
    }

    // A password given later replaces the generated one (its hash differs): one update.
    let mut o = env.mrs[0].get().await;
    o.data["spec"]["forProvider"]["passwordSecretRef"] =
        json!({"name": examples::SECRET, "namespace": ns, "key": "password"});
    env.mrs[0]
        .api
        .replace(&env.mrs[0].name, &Default::default(), &o)
        .await
        .expect("replace");
    env.sim.reset_counts();
    for _ in 0..3 {
        env.mrs[0].reconcile().await;
    }
    assert_eq!(writes(&env), 1, "{:?}", env.sim.request_counts());
}

/// A certificate's `fileSecretRef` (upstream's `file`, as the Upjet provider renders it): a
/// Secret holding the path of a PEM file on the provider's filesystem. The provider reads
/// the file and uploads its PEM (one create, quiet afterwards); a path that cannot be read
/// gives Synced=False naming the field, never the Secret's value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_from_a_file_on_the_providers_filesystem() {
    let mut env = env(examples::TEST_VERSION).await;
    let dir = std::env::temp_dir().join(format!("cert-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pem = dir.join("client.pem");
    std::fs::write(&pem, examples::PEM).expect("write");
    let missing = dir.join("not-mounted.pem");
    let ns = crate::family_suite::NS;
    env.create_objects(&[json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "certificate-paths", "namespace": ns},
        "stringData": {"path": pem.to_str().expect("utf-8"), "missing": missing.to_str().expect("utf-8")},
    })])
    .await;
    let d = decl("Certificate");
    let from_file = |name: &str, key: &str| {
        provider_family::examples::manifest(
            d,
            name,
            json!({"fileSecretRef": {"name": "certificate-paths", "namespace": ns, "key": key}}),
            false,
        )
    };
    add(&mut env, "Certificate", from_file("from-file", "path")).await;
    converge(&env.mrs).await;
    assert!(env.sim.object("certificates", "from-file").is_some());
    env.sim.reset_counts();
    for _ in 0..2 {
        env.mrs[0].reconcile().await;
    }
    assert_eq!(writes(&env), 0, "{:?}", env.sim.request_counts());

    add(&mut env, "Certificate", from_file("not-mounted", "missing")).await;
    env.mrs[1].reconcile().await;
    let (status, message) = synced(&env.mrs[1].get().await);
    assert_eq!(status, "False");
    assert!(
        message.contains("the file named by fileSecretRef")
            && message.contains("DeploymentRuntimeConfig"),
        "{message}"
    );
    assert!(!message.contains("not-mounted.pem"), "{message}");
    assert!(env.sim.object("certificates", "not-mounted").is_none());
    std::fs::remove_dir_all(&dir).ok();
}

/// A ScopedToken living less than Access's persistency threshold is never stored (the
/// Terraform provider's `TestAccScopedToken_WithExpiresInLessThanPersistencyThreshold`: no
/// read finds it), so no poll can see it: it stands until it expires, with one token issued
/// however many polls come, and only then is a new one issued. A token over the threshold is
/// observed as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_under_the_persistency_threshold_is_issued_once_until_it_expires() {
    let mut env = env("7.90.1").await;
    let (_, example) = examples::all_examples()
        .into_iter()
        .find(|(k, _)| k == "ScopedToken")
        .expect("a ScopedToken example");
    let mut short = example.clone();
    short["metadata"]["name"] = json!("short-lived");
    short["spec"]["forProvider"]["expiresIn"] = json!(3);
    short["spec"]["writeConnectionSecretToRef"]["name"] = json!("short-lived-connection");
    add(&mut env, "ScopedToken", short).await;
    converge(&env.mrs).await;
    let issued = |env: &Env| {
        env.sim
            .request_counts()
            .get("POST /access/api/v1/tokens")
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(issued(&env), 1);
    // Polls while it lives: the token is not in JFrog's list, yet none is issued again.
    for _ in 0..3 {
        env.mrs[0].reconcile().await;
    }
    assert_eq!(issued(&env), 1, "{:?}", env.sim.request_counts());
    let o = env.mrs[0].get().await;
    assert_eq!(
        testkit::condition(&o, "Ready").map(|c| c.0).as_deref(),
        Some("True")
    );
    let first =
        o.metadata.annotations.clone().unwrap_or_default()["crossplane.io/external-name"].clone();
    // Once it expired, a new one replaces it (one more, not one per poll).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while issued(&env) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no new token after expiry"
        );
        env.mrs[0].reconcile().await;
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    env.mrs[0].reconcile().await;
    assert_eq!(issued(&env), 2);
    let o = env.mrs[0].get().await;
    let second =
        o.metadata.annotations.clone().unwrap_or_default()["crossplane.io/external-name"].clone();
    assert_ne!(first, second);
}

/// Artifactory keeps a group's realm in lower case (JFrog's `TestAccGroup_basic_datasource`):
/// a Group whose realm is written in another casing is created once and then up to date, not
/// rewritten at every poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_realm_in_another_casing_is_not_drift() {
    let mut env = env(examples::TEST_VERSION).await;
    let mut m = examples::example(decl("Group"), false);
    m["spec"]["forProvider"]["realm"] = json!("LDAP");
    add(&mut env, "Group", m).await;
    converge(&env.mrs).await;
    let name = env.mrs[0]
        .get()
        .await
        .metadata
        .annotations
        .unwrap_or_default()["crossplane.io/external-name"]
        .clone();
    let stored = env.sim.object("access_groups", &name).expect("group");
    assert_eq!(stored["realm"], "ldap", "{stored}");
    env.sim.reset_counts();
    for _ in 0..2 {
        env.mrs[0].reconcile().await;
    }
    assert_eq!(writes(&env), 0, "{:?}", env.sim.request_counts());
    assert!(env.mrs[0].ready_and_synced().await);
}
