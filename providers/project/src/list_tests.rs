//! Observation by list for projects: N Project MRs cost one `GET /access/api/v1/projects`
//! per poll and no read by key (the list carries every project in full, its quota in bytes
//! as a read answers it, turned into GiB by the same decode). An observe-only MR whose
//! project does not exist is not read either: the list shows it absent. Counted in the
//! simulator's request log over polls of every MR, after they converged (which also shows
//! the listed projects compare equal to their specs: no write).

use std::sync::Arc;
use std::time::Duration;

use provider_family::{ClientCache, FamilyKind, KindDecl};
use provider_family_suite::{self as suite, ListCase, converge};
use provider_runtime::managed::ManagedKind;
use serde_json::json;

use crate::projects::{examples, kinds, tables::KINDS};

/// Projects.
const N: usize = 4;

/// The registered Kind named `k`.
fn kind(k: &str) -> Arc<FamilyKind> {
    kinds()
        .iter()
        .find(|x| x.info().kind == k)
        .expect("declared")
        .clone()
}

/// The declaration of the Kind named `k`.
fn decl(k: &str) -> &'static KindDecl {
    &KINDS.iter().find(|d| d.kind == k).expect("declared").decl
}
/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);

const CASES: &[ListCase] = &[ListCase {
    kind: "Project",
    list: "/access/api/v1/projects",
    item: "/access/api/v1/projects/{p}",
    reads_each: false,
}];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_poll_for_every_project() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    let kind = kind("Project");
    let d = decl("Project");
    for i in 0..=N {
        let mut m = examples::example(d, false);
        m["metadata"]["name"] = json!(format!("listed-{i}"));
        m["spec"]["forProvider"]["maxStorageInGibibytes"] = json!(i + 1);
        if i == N {
            m["spec"]["managementPolicies"] = json!(["Observe"]);
        }
        env.add(&kind, m).await;
    }
    converge(&env.mrs[..N]).await;
    for round in 0..2 {
        let counts = suite::list_poll(&env, POLL, CASES, N as u64).await;
        eprintln!("poll {round}: {counts:?}");
    }
    assert!(!env.mrs[N].ready_and_synced().await, "absent project found");
    // The quota is observed in GiB from the list's bytes.
    let o = env.mrs[1].get().await;
    assert_eq!(
        o.data["status"]["atProvider"]["maxStorageInGibibytes"],
        json!(2),
        "{:?}",
        o.data["status"]
    );
}

/// The Kinds inside a project, observed through their project's lists.
const IN_PROJECT: &[ListCase] = &[
    ListCase {
        kind: "Environment",
        list: "/access/api/v1/projects/{p}/environments",
        item: "/access/api/v1/projects/{p}/environments/{env}",
        reads_each: false,
    },
    ListCase {
        kind: "Role",
        list: "/access/api/v1/projects/{p}/roles",
        item: "/access/api/v1/projects/{p}/roles/{name}",
        reads_each: false,
    },
    ListCase {
        kind: "User",
        list: "/access/api/v1/projects/{p}/users",
        item: "/access/api/v1/projects/{p}/users/{name}",
        reads_each: false,
    },
    ListCase {
        kind: "Group",
        list: "/access/api/v1/projects/{p}/groups",
        item: "/access/api/v1/projects/{p}/groups/{name}",
        reads_each: false,
    },
];

/// Two environments, two roles, two users and two groups of one project cost one list of
/// each Kind per poll (per project: the snapshot is keyed by the filled list path), no read
/// by key; an observe-only role the project's list lacks is absent without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_poll_per_project_and_kind() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    for n in ["listed-user-0", "listed-user-1"] {
        assert!(
            env.sim
                .put_object("users", n, json!({"email": format!("{n}@example.com")}))
        );
    }
    for n in ["listed-group-0", "listed-group-1"] {
        assert!(
            env.sim
                .put_object("access_groups", n, json!({"description": ""}))
        );
    }
    env.add(&kind("Project"), examples::example(decl("Project"), false))
        .await;
    let names = [
        ("Environment", ["qa", "staging"]),
        ("Role", ["listed-role-0", "listed-role-1"]),
        ("User", ["listed-user-0", "listed-user-1"]),
        ("Group", ["listed-group-0", "listed-group-1"]),
    ];
    for (k, ns) in names {
        for n in ns {
            let mut m = examples::example(decl(k), false);
            m["metadata"]["name"] = json!(n);
            env.add(&kind(k), m).await;
        }
    }
    let mut absent = examples::example(decl("Role"), false);
    absent["metadata"]["name"] = json!("never-created");
    absent["spec"]["managementPolicies"] = json!(["Observe"]);
    env.add(&kind("Role"), absent).await;
    let managed = env.mrs.len() - 1;
    converge(&env.mrs[..managed]).await;
    let mut cases = CASES.to_vec();
    cases.extend_from_slice(IN_PROJECT);
    for round in 0..2 {
        let counts = suite::list_poll(&env, POLL, &cases, 0).await;
        eprintln!("poll {round}: {counts:?}");
    }
    assert!(
        !env.mrs[managed].ready_and_synced().await,
        "absent role found"
    );
}

/// Repository assignments are observed through Artifactory's list of every repository's
/// configuration, whose `projectKey` is the assignment: two assigned repositories cost one
/// list per poll and no read of their Access status; an observe-only MR whose repository
/// exists but is not assigned to its project is absent without a read either, and one
/// whose repository is assigned to another project too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_poll_for_every_repository_assignment() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    let repos = [
        "listed-repo-0",
        "listed-repo-1",
        "not-assigned",
        "elsewhere",
    ];
    for r in repos {
        assert!(env.sim.put_repository_raw(
            r,
            json!({"key": r, "rclass": "local", "packageType": "generic"})
        ));
    }
    env.add(&kind("Project"), examples::example(decl("Project"), false))
        .await;
    let mut other = examples::example(decl("Project"), false);
    other["metadata"]["name"] = json!("other");
    env.add(&kind("Project"), other).await;
    let assignment = |repo: &str, project: &str| {
        let mut m = examples::example(decl("Repository"), false);
        m["metadata"]["name"] = json!(repo);
        m["spec"]["forProvider"]["projectKey"] = json!(project);
        m
    };
    for r in &repos[..2] {
        env.add(&kind("Repository"), assignment(r, examples::PROJECT_KEY))
            .await;
    }
    env.add(&kind("Repository"), assignment("elsewhere", "other"))
        .await;
    let managed = env.mrs.len();
    for r in ["not-assigned", "elsewhere"] {
        let mut m = assignment(r, examples::PROJECT_KEY);
        m["metadata"]["name"] = json!(format!("observed-{r}"));
        m["metadata"]["annotations"] = json!({"crossplane.io/external-name": r});
        m["spec"]["managementPolicies"] = json!(["Observe"]);
        env.add(&kind("Repository"), m).await;
    }
    converge(&env.mrs[..managed]).await;
    for r in ["listed-repo-0", "listed-repo-1"] {
        assert_eq!(
            env.sim.repository_raw(r).expect("stored")["projectKey"],
            examples::PROJECT_KEY
        );
    }
    let mut cases = CASES.to_vec();
    cases.push(ListCase {
        kind: "Repository",
        list: "/artifactory/api/repositories/configurations",
        item: "/access/api/v1/projects/_/repositories/{key}",
        reads_each: false,
    });
    for round in 0..2 {
        let counts = suite::list_poll(&env, POLL, &cases, 0).await;
        eprintln!("poll {round}: {counts:?}");
    }
    for m in &env.mrs[managed..] {
        assert!(!m.ready_and_synced().await, "{}: found", m.name);
    }
}
