//! End-to-end test of provider-project (issue 15), driving the real provider-project and
//! provider-artifactory processes through `sandbox up`: a project with two environments, a
//! role, a user and a group member, and two repositories assigned to it (one managed by a
//! provider-artifactory repository MR, one made outside Kubernetes), all applied at once.
//! JFrog's side is read through the simulator's admin API and the Access REST API, as a
//! JFrog admin would. While quiet, the environments, role and members cost one list of the
//! project per Kind and poll (observation by the project's lists), never a read by key.

use std::time::{Duration, Instant};

use e2e::{Mr, Sandbox, SandboxOptions, count, manifests_dir, wait_for, writes};
use serde_json::{Value, json};

const PROJECT: &str = "project.project.m.crossplane.io/v1alpha1";
const ACCESS: &str = "access.project.m.crossplane.io/v1alpha1";
const REPOSITORY: &str = "repository.project.m.crossplane.io/v1alpha1";
const ARTIFACTORY: &str = "repository.artifactory.m.crossplane.io/v1alpha1";
const KEY: &str = "team";

fn mr(api_version: &str, kind: &str, name: &str, params: Value) -> Value {
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "forProvider": params,
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
        },
    })
}

/// The manifests, members and assignments first (the order must not matter: `sandbox up`
/// applies them concurrently anyway).
fn manifests() -> Vec<Value> {
    vec![
        mr(
            ACCESS,
            "User",
            "alice",
            json!({"projectKey": KEY, "roles": ["Developer", "reader"]}),
        ),
        mr(
            ACCESS,
            "Group",
            "devs",
            json!({"projectKey": KEY, "roles": ["reader"]}),
        ),
        mr(
            REPOSITORY,
            "Repository",
            "team-libs",
            json!({"projectKey": KEY}),
        ),
        mr(
            REPOSITORY,
            "Repository",
            "team-legacy",
            json!({"projectKey": KEY}),
        ),
        mr(
            ACCESS,
            "Role",
            "reader",
            json!({
                "projectKey": KEY, "type": "CUSTOM",
                "environments": ["DEV"], "actions": ["READ_REPOSITORY", "READ_BUILD"],
            }),
        ),
        mr(PROJECT, "Environment", "qa", json!({"projectKey": KEY})),
        mr(
            PROJECT,
            "Environment",
            "staging",
            json!({"projectKey": KEY}),
        ),
        mr(
            ARTIFACTORY,
            "LocalGenericRepository",
            "team-libs",
            json!({"description": "the team's libraries"}),
        ),
        mr(
            PROJECT,
            "Project",
            KEY,
            json!({
                "displayName": "Team",
                "adminPrivileges": [{"manageMembers": true, "manageResources": true, "indexResources": false}],
            }),
        ),
    ]
}

/// The Access object behind a path, or None (404).
async fn access(sb: &Sandbox, path: &str) -> Option<Value> {
    sb.sim
        .rest_get(&format!("/access/api/v1/projects{path}"))
        .await
}

/// How many times the project was observed: by the projects list (one per poll) or, when
/// the list is unavailable, by its own read.
fn project_observations(counts: &std::collections::BTreeMap<String, u64>) -> u64 {
    count(counts, "GET", "/access/api/v1/projects")
        + count(counts, "GET", "/access/api/v1/projects/{p}")
}

/// Every MR applied at once converges; two more polls write nothing; deleting the project MR
/// waits (with JFrog's reason in Synced) while repositories are assigned, then removes the
/// project and what JFrog removes with it (environments, roles, members) and nothing else:
/// the repositories stay, the repository MR stays Ready and quiet, the member MRs report the
/// missing project in their Synced condition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_applied_at_once_converges_stays_quiet_and_deletes_only_its_own() {
    let docs = manifests();
    let dir = manifests_dir("projects", &docs);
    let sb = Sandbox::start(
        SandboxOptions::new("projects")
            .providers("artifactory,project")
            .apply(dir.path()),
    )
    .await;
    // The user and group the members name exist on the platform (made in the UI).
    sb.sim
        .put_object("users", "alice", &json!({"email": "alice@example.com"}))
        .await;
    sb.sim
        .put_object("access_groups", "devs", &json!({"description": ""}))
        .await;
    // A repository made outside Kubernetes (as a JFrog admin would), assigned by an MR.
    sb.sim
        .create_repository_rest(
            "team-legacy",
            &json!({"key": "team-legacy", "rclass": "local", "packageType": "generic"}),
        )
        .await;
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    let started = Instant::now();
    sb.wait_all_ready(&mrs, Duration::from_secs(300)).await;
    println!(
        "{} MRs Ready and Synced in {:.1}s",
        mrs.len(),
        started.elapsed().as_secs_f64()
    );

    // JFrog has exactly what was declared.
    let project = access(&sb, "/team").await.expect("project");
    assert_eq!(project["display_name"], "Team");
    let envs = access(&sb, "/team/environments")
        .await
        .expect("environments");
    let mut names: Vec<&str> = envs
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["team-qa", "team-staging"]);
    assert!(access(&sb, "/team/roles/reader").await.is_some());
    assert_eq!(
        access(&sb, "/team/users/alice").await.expect("user")["roles"],
        json!(["Developer", "reader"])
    );
    assert!(access(&sb, "/team/groups/devs").await.is_some());
    for repo in ["team-libs", "team-legacy"] {
        let r = sb.sim.repository(repo).await.expect("repository");
        assert_eq!(r["projectKey"], KEY, "{repo}");
    }

    // Two polls: reads only.
    sb.sim.reset_requests().await;
    let window = Instant::now();
    let counts = sb
        .wait_observed_rounds("polls", 2, project_observations)
        .await;
    let window = window.elapsed();
    assert!(
        writes(&counts).is_empty(),
        "writes while quiet: {:?}",
        writes(&counts)
    );
    let reads: u64 = counts
        .iter()
        .filter(|(k, _)| k.starts_with("GET"))
        .map(|(_, n)| n)
        .sum();
    let polls = project_observations(&counts).max(1);
    println!(
        "quiet: 0 writes; {reads} reads in {polls} polls of {} MRs = {:.2} requests per MR per poll; {counts:?}",
        mrs.len(),
        reads as f64 / (polls as f64 * mrs.len() as f64)
    );
    // The environments, the role and the members are observed through the project's lists:
    // one list per Kind and poll, no read by key. A list's snapshot is refreshed by the first
    // observe that finds it older than --poll, so two lists of one Kind are more than a poll
    // apart and the window holds at most one more than the polls it spans. (Counting polls by
    // the project's own list would undercount them: the project MR's poll skips that list when
    // its jitter brings it back before the list is a poll old.) An environment has no read by
    // key (its read is the list), so an extra read shows as an extra list.
    let most = (window.as_secs_f64() / sb.poll.as_secs_f64()).floor() as u64 + 1;
    for kind in ["environments", "roles", "users", "groups"] {
        let lists = count(
            &counts,
            "GET",
            &format!("/access/api/v1/projects/{{p}}/{kind}"),
        );
        println!(
            "{kind}: {lists} lists in {:.1}s ({polls} project polls)",
            window.as_secs_f64()
        );
        assert!(
            (1..=most).contains(&lists),
            "{kind}: one list per poll, at most {most} in {window:?}: {counts:?}"
        );
        if kind != "environments" {
            let reads = count(
                &counts,
                "GET",
                &format!("/access/api/v1/projects/{{p}}/{kind}/{{name}}"),
            );
            assert_eq!(reads, 0, "{kind} read by key: {counts:?}");
        }
    }

    // Deleting the project while repositories are assigned: JFrog refuses, the MR says why.
    let project_mr = sb.mr_of(&docs[8]);
    sb.kubectl_ok(&[
        "delete",
        "--wait=false",
        &project_mr.resource(),
        KEY,
        "-n",
        "default",
    ]);
    project_mr
        .wait_condition(
            "the project delete to be refused",
            "Synced",
            "False",
            "can't be removed",
            Duration::from_secs(120),
        )
        .await;
    assert!(
        access(&sb, "/team").await.is_some(),
        "project deleted with repositories"
    );

    // Unassigning the repositories (deleting their assignment MRs) lets the delete finish.
    sb.delete_and_wait_gone(
        &[sb.mr_of(&docs[2]), sb.mr_of(&docs[3])],
        Duration::from_secs(120),
    )
    .await;
    // The refused delete is retried with Crossplane's per-object back-off (up to a minute);
    // an admin who just fixed the cause touches the object to retry now, as here. (That the
    // back-off retries on its own is the runtime's conformance item, not this test's.)
    sb.kubectl_ok(&[
        "annotate",
        "--overwrite",
        &project_mr.resource(),
        KEY,
        "-n",
        "default",
        "e2e.example.com/retry=now",
    ]);
    wait_for(
        "the project MR to be gone",
        Duration::from_secs(120),
        Duration::from_millis(500),
        || async { project_mr.try_get().await.is_none().then_some(()) },
    )
    .await;

    // JFrog removed the project with its environments, roles and members ...
    assert!(access(&sb, "/team").await.is_none(), "project still there");
    let api = reqwest::Client::new();
    for coll in [
        "access_project_environments",
        "access_project_roles",
        "access_project_users",
        "access_project_groups",
    ] {
        let r: Value = api
            .get(format!("{}/__sim/collections/{coll}", sb.sim.url))
            .send()
            .await
            .expect("admin API")
            .json()
            .await
            .expect("json");
        assert_eq!(r, json!([]), "{coll} left behind");
    }
    // ... and nothing else: both repositories are still there, unassigned, and the
    // repository MR stays Ready and Synced.
    for repo in ["team-libs", "team-legacy"] {
        let r = sb.sim.repository(repo).await.expect("repository kept");
        assert!(
            r.get("projectKey").is_none_or(|p| p == ""),
            "{repo} still assigned: {r}"
        );
    }
    let repo_mr = sb.mr_of(&docs[7]);
    assert!(
        repo_mr.ready_and_synced().await,
        "the repository MR changed"
    );
    // The project's members were JFrog's to remove; their MRs (not deleted) now say that
    // the project is missing.
    for i in [0, 1, 4] {
        sb.mr_of(&docs[i])
            .wait_condition(
                "the missing project reported",
                "Synced",
                "False",
                "was not found",
                Duration::from_secs(120),
            )
            .await;
    }
    assert!(sb.mr_of(&docs[0]).try_get().await.is_some());
}
