//! provider-project's run of the generic family suite (`provider_family_suite`): every
//! example, applied members first (the order must not matter), plus the legacy ones;
//! afterwards the repositories that were assigned and shared are still there (they are
//! provider-artifactory's).

use provider_family_suite::{self as suite, Suite};
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use crate::projects::{examples, kinds, tables::KINDS};

/// A Project's description, a Role's actions and a member's roles are edited in JFrog.
fn drift(kind: &str) -> Option<(&'static str, Value)> {
    Some(match kind {
        "Project" => ("/description", json!("edited in the UI")),
        "Role" => ("/actions", json!(["READ_BUILD"])),
        "User" | "Group" => ("/roles", json!(["Contributor"])),
        _ => return None,
    })
}

/// The other Kinds' objects are removed in JFrog.
fn removes(kind: &str) -> bool {
    drift(kind).is_none()
}

/// The repositories the examples assign and share, and the user and group the member
/// examples name, as provider-artifactory's examples create them.
fn seed(sim: &jfrog_sim::Simulator) {
    for r in examples::REPOSITORIES {
        assert!(sim.put_repository_raw(
            r,
            json!({"key": r, "rclass": "local", "packageType": "generic"})
        ));
    }
    assert!(sim.put_object(
        "users",
        "example-user",
        json!({"email": "example-user@example.com"})
    ));
    assert!(sim.put_object("access_groups", "example-group", json!({"description": ""})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_project_kind_passes_the_suite() {
    project_suite(None).await;
}

/// The same with observation by list (a 1 ms TTL: every observe lists afresh, so a drift
/// of a project is found in the list entries).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_project_kind_passes_the_suite_observed_by_list() {
    project_suite(Some(std::time::Duration::from_millis(1))).await;
}

async fn project_suite(ttl: Option<std::time::Duration>) {
    let s = Suite {
        provider: crate::PROVIDER,
        drift,
        deletes: suite::always_deletes,
        seed,
        read_calls: &[],
        removes,
        delete_last: &["Project"],
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
    for k in kinds() {
        assert!(
            examples.iter().any(|(n, _)| n == k.info().kind),
            "{} has no example in the suite",
            k.info().kind
        );
    }
    let cache = std::sync::Arc::new(provider_family::ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(ttl);
    let env = suite::start(crate::PROVIDER, kinds(), cache).await;
    seed(&env.sim);
    let env = suite::run(&s, env, kinds(), examples).await;
    for r in examples::REPOSITORIES {
        assert!(env.sim.repository_raw(r).is_some(), "{r} removed");
    }
}

/// `ignoreMissingUser`, as upstream: a membership of a user the platform lacks is skipped
/// (Synced stays True, nothing stored) and made once the user exists; without the switch
/// the MR is Synced=False with JFrog's message; the switch does not hide a missing project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_user_is_skipped_only_with_ignore_missing_user() {
    use provider_family::ClientCache;
    use std::sync::Arc;

    let find = |k: &str| {
        let i = KINDS.iter().position(|d| d.kind == k).expect("declared");
        (&KINDS[i], kinds()[i].clone())
    };
    let (project_d, project) = find("Project");
    let (user_d, user) = find("User");
    let mut env = suite::start(
        crate::PROVIDER,
        kinds(),
        Arc::new(ClientCache::new(crate::PROVIDER)),
    )
    .await;
    // The membership is skipped a moment after its create: no grace for it to show.
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    let member = |name: &str, project: &str, ignore: Option<bool>| {
        let mut m = examples::example(user_d, false);
        m["metadata"]["name"] = json!(name);
        m["spec"]["forProvider"]["projectKey"] = json!(project);
        if let Some(i) = ignore {
            m["spec"]["forProvider"]["ignoreMissingUser"] = json!(i);
        }
        m
    };
    env.add(&project, examples::example(project_d, false)).await;
    env.add(&user, member("ghost", examples::PROJECT_KEY, Some(true)))
        .await;
    env.add(&user, member("phantom", examples::PROJECT_KEY, None))
        .await;
    // A user that exists, in a project that does not.
    assert!(
        env.sim
            .put_object("users", "present", json!({"email": "present@example.com"}))
    );
    env.add(&user, member("present", "no-such-project", Some(true)))
        .await;
    suite::converge(&env.mrs[..1]).await;
    let (ghost, phantom, present) = (&env.mrs[1], &env.mrs[2], &env.mrs[3]);
    let stored = |sim: &jfrog_sim::Simulator, name: &str| {
        sim.object(
            "access_project_users",
            &format!("{}/{name}", examples::PROJECT_KEY),
        )
        .is_some()
    };
    for _ in 0..2 {
        for m in [ghost, phantom, present] {
            m.reconcile().await;
        }
    }
    let s = synced(ghost).await;
    assert_eq!(s.0, "True", "{s:?}");
    assert!(!stored(&env.sim, "ghost"));
    let s = synced(phantom).await;
    assert_eq!(s.0, "False", "{s:?}");
    assert!(s.2.contains("User 'phantom' does not exist"), "{s:?}");
    let s = synced(present).await;
    assert_eq!(s.0, "False", "{s:?}");
    assert!(s.2.contains("no-such-project"), "{s:?}");

    // The user appears: the membership is made and the MR is Ready.
    assert!(
        env.sim
            .put_object("users", "ghost", json!({"email": "ghost@example.com"}))
    );
    suite::converge(std::slice::from_ref(ghost)).await;
    assert!(stored(&env.sim, "ghost"));
}

async fn synced(m: &suite::Mr) -> (String, String, String) {
    testkit::condition(&m.get().await, "Synced").expect("Synced")
}
