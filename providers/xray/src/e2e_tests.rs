//! provider-xray through the real managed reconciler against the Kubernetes API test server
//! and the JFrog simulator (the family suite's environment): a security policy with several
//! rules and a watch that applies it stay quiet and have a change made in Xray reverted; a
//! watch of a missing repository is refused with Xray's message; a create whose answer is
//! lost makes exactly one object for every server-assigned Kind; a report is Ready only
//! when its generation has completed.

use std::sync::Arc;

use jfrog_sim::Fault;
use provider_family::{ClientCache, Cx, FamilyKind};
use provider_family_suite::{self as suite, Env, converge, writes};
use provider_runtime::managed::Outcome;
use serde_json::{Value, json};

use crate::examples::{REPOSITORY, example};

/// The snapshot TTL, and the pause between two rounds of reconciles (two polls).
const POLL: std::time::Duration = std::time::Duration::from_millis(20);

fn kind(kinds: &[Arc<FamilyKind>], name: &str) -> Arc<FamilyKind> {
    kinds
        .iter()
        .find(|k| k.resolved().decl.kind == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} is declared"))
}

async fn env(kinds: &[Arc<FamilyKind>]) -> Env {
    // Observation by list on, as in a running provider; each round of reconciles below is
    // one poll, so the list answer lives shorter than a round.
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let env = suite::start(crate::PROVIDER, kinds, cache).await;
    env.sim.put_repository_raw(
        REPOSITORY,
        json!({"key": REPOSITORY, "rclass": "local", "packageType": "generic"}),
    );
    env
}

fn all_kinds() -> Vec<Arc<FamilyKind>> {
    let mut kinds: Vec<Arc<FamilyKind>> = Vec::new();
    kinds.extend(crate::policy::kinds().iter().cloned());
    kinds.extend(crate::report::kinds().iter().cloned());
    kinds.extend(crate::watch::kinds().iter().cloned());
    kinds
}

fn decl(name: &str) -> &'static provider_family::KindDecl {
    crate::examples::declarations()
        .into_iter()
        .find(|d| d.kind == name)
        .unwrap_or_else(|| panic!("{name} is declared"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_security_policy_and_its_watch_stay_quiet_and_drift_is_reverted() {
    let kinds = all_kinds();
    let mut env = env(&kinds).await;
    let policy = example(decl("SecurityPolicy"), false);
    assert_eq!(
        policy["spec"]["forProvider"]["rule"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
    env.add(&kind(&kinds, "SecurityPolicy"), policy).await;
    env.add(&kind(&kinds, "Watch"), example(decl("Watch"), false))
        .await;
    converge(&env.mrs).await;
    let stored = env
        .sim
        .object("xray_policies", "example-security-policy")
        .expect("policy stored");
    // Xray answers the rules in its own order and severities in its own casing.
    assert_eq!(stored["rules"][0]["name"], "high-and-above");
    assert_eq!(
        stored["rules"][2]["criteria"]["min_severity"],
        "All Severities"
    );

    // Two polls: not a single write; the requests per MR per poll.
    env.sim.reset_counts();
    for _ in 0..2 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    let counts = env.sim.request_counts();
    assert_eq!(writes(&env.sim, &[]), 0, "{counts:?}");
    let requests: u64 = counts.values().sum();
    eprintln!(
        "quiet polls: {requests} requests for 2 MRs x 2 polls = {} per MR per poll, 0 writes",
        requests as f64 / 4.0
    );
    // Observed by list: one list call per family and poll, no read by name.
    assert_eq!(
        counts.get("GET /xray/api/v2/policies"),
        Some(&2),
        "{counts:?}"
    );
    assert_eq!(
        counts.get("GET /xray/api/v2/watches"),
        Some(&2),
        "{counts:?}"
    );
    assert_eq!(requests, 4, "{counts:?}");

    // A change made in Xray (a rule's severity, another rule dropped) is reverted by one
    // reconcile.
    let mut edited = stored.clone();
    edited["rules"][0]["criteria"]["min_severity"] = json!("Low");
    if let Some(rules) = edited["rules"].as_array_mut() {
        rules.pop();
    }
    assert!(
        env.sim
            .put_object("xray_policies", "example-security-policy", edited)
    );
    // The next poll: the list answer the last one read has expired.
    tokio::time::sleep(POLL * 2).await;
    env.sim.reset_counts();
    let o = env.mrs[0].reconcile().await;
    assert!(matches!(o, Outcome::After(_)), "{o:?}");
    assert_eq!(
        env.sim
            .request_counts()
            .get("PUT /xray/api/v2/policies/{key}"),
        Some(&1)
    );
    let restored = env
        .sim
        .object("xray_policies", "example-security-policy")
        .expect("policy");
    assert_eq!(restored["rules"], stored["rules"]);
    tokio::time::sleep(POLL * 2).await;
    env.sim.reset_counts();
    let o = env.mrs[0].reconcile().await;
    assert!(matches!(o, Outcome::After(_)), "{o:?}");
    assert_eq!(writes(&env.sim, &[]), 0);

    // A watch of a repository that does not exist: Synced=False with Xray's message, and
    // nothing is written.
    let mut bad = example(decl("Watch"), false);
    bad["metadata"]["name"] = json!("watch-of-a-missing-repository");
    bad["spec"]["forProvider"]["watchResource"][0]["name"] = json!("no-such-repository");
    env.add(&kind(&kinds, "Watch"), bad).await;
    env.sim.reset_counts();
    let m = env.mrs.last().expect("bad watch");
    let o = m.reconcile().await;
    assert!(!matches!(o, Outcome::After(_)), "{o:?}");
    let synced = testkit::condition(&m.get().await, "Synced").expect("Synced");
    assert_eq!(synced.0, "False");
    assert!(
        synced
            .2
            .contains("repository 'no-such-repository' does not exist"),
        "{synced:?}"
    );
    assert_eq!(env.sim.object_count("xray_watches"), 1, "nothing stored");
    let counts = env.sim.request_counts();
    assert_eq!(
        counts.get("POST /xray/api/v2/watches"),
        Some(&1),
        "one create, refused: {counts:?}"
    );
}

/// Every server-assigned Kind: the first create's answer is lost after Xray stored the
/// object; the MR still ends Ready with exactly one object, the one Xray made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_create_answer_makes_exactly_one_object() {
    let kinds = all_kinds();
    let mut env = env(&kinds).await;
    // (Kind, create path, collection, the lookup that finds the object).
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "CurationPolicy",
            "/xray/api/v1/curation/policies",
            "xray_curation_policies",
            "GET /xray/api/v1/curation/policies",
        ),
        (
            "CustomCurationCondition",
            "/xray/api/v1/curation/conditions",
            "xray_curation_conditions",
            "GET /xray/api/v1/curation/conditions",
        ),
        (
            "IgnoreRule",
            "/xray/api/v1/ignore_rules",
            "xray_ignore_rules",
            "GET /xray/api/v1/ignore_rules",
        ),
        (
            "VulnerabilitiesReport",
            "/xray/api/v1/reports/vulnerabilities",
            "xray_reports",
            "POST /xray/api/v1/reports",
        ),
        (
            "LicensesReport",
            "/xray/api/v1/reports/licenses",
            "xray_reports",
            "POST /xray/api/v1/reports",
        ),
        (
            "ViolationsReport",
            "/xray/api/v1/reports/violations",
            "xray_reports",
            "POST /xray/api/v1/reports",
        ),
        (
            "OperationalRisksReport",
            "/xray/api/v1/reports/operationalRisks",
            "xray_reports",
            "POST /xray/api/v1/reports",
        ),
        (
            "ExposuresReport",
            "/xray/api/v1/reports/exposures",
            "xray_reports",
            "POST /xray/api/v1/reports",
        ),
    ];
    for (i, (name, path, collection, lookup)) in cases.iter().enumerate() {
        let before = env.sim.object_count(collection);
        env.sim.reset_counts();
        env.sim
            .add_fault(Fault::drop_after_commit("POST", path).times(1));
        env.add(&kind(&kinds, name), example(decl(name), false))
            .await;
        let m = &env.mrs[i];
        converge(std::slice::from_ref(m)).await;
        let counts = env.sim.request_counts();
        assert_eq!(
            env.sim.object_count(collection),
            before + 1,
            "{name}: exactly one object: {counts:?}"
        );
        assert!(
            counts.get(*lookup).is_some_and(|n| *n >= 1),
            "{name}: the lost answer was recovered by a lookup: {counts:?}"
        );
        let o = m.get().await;
        let id = o.metadata.annotations.unwrap_or_default()["crossplane.io/external-name"].clone();
        let stored: Vec<Value> = env.sim.objects(collection).unwrap_or_default();
        assert!(
            stored.iter().any(|s| {
                ["id", "report_id"]
                    .iter()
                    .any(|k| crate::common::answer_id(s, k).as_deref() == Some(id.as_str()))
            }),
            "{name}: external name {id} is the object Xray made"
        );
    }
}

/// A report is Ready only once its generation has completed; its status and counts are in
/// atProvider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_is_ready_when_generated() {
    let kinds = all_kinds();
    let mut env = env(&kinds).await;
    let d = decl("VulnerabilitiesReport");
    env.add(&kind(&kinds, d.kind), example(d, false)).await;
    let m = &env.mrs[0];
    let mut seen = Vec::new();
    for _ in 0..6 {
        // One poll each: the reports list answer lives one poll.
        tokio::time::sleep(POLL * 2).await;
        m.reconcile().await;
        let o = m.get().await;
        let ready = testkit::condition(&o, "Ready")
            .map(|c| c.0)
            .unwrap_or_default();
        let status = o.data["status"]["atProvider"]["status"]
            .as_str()
            .unwrap_or("")
            .to_string();
        seen.push((status.clone(), ready.clone()));
        if status == "completed" {
            assert_eq!(ready, "True", "{seen:?}");
            assert_eq!(o.data["status"]["atProvider"]["numberOfRows"], 3);
            break;
        }
        if !status.is_empty() {
            assert_eq!(ready, "False", "not Ready while {status}: {seen:?}");
        }
    }
    assert!(
        seen.iter().any(|(s, _)| s == "running") && seen.iter().any(|(s, _)| s == "completed"),
        "{seen:?}"
    );
}

/// A second MR of a singleton (the Xray settings) is refused, naming the first; once the
/// first is deleted, the second manages it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_mr_of_a_singleton_is_refused() {
    let kinds: Vec<Arc<FamilyKind>> = crate::configuration::kinds().to_vec();
    let mut env = env(&kinds).await;
    let d = decl("Settings");
    env.add(&kind(&kinds, "Settings"), example(d, false)).await;
    let mut second = example(d, false);
    second["metadata"]["name"] = json!("second-settings");
    second["spec"]["forProvider"]["allowBlocked"] = json!(true);
    env.add(&kind(&kinds, "Settings"), second).await;
    converge(std::slice::from_ref(&env.mrs[0])).await;
    env.sim.reset_counts();
    let o = env.mrs[1].reconcile().await;
    assert!(!matches!(o, Outcome::After(_)), "{o:?}");
    let synced = testkit::condition(&env.mrs[1].get().await, "Synced").expect("Synced");
    assert_eq!(synced.0, "False");
    assert!(
        synced
            .2
            .contains("already managed by default/example-settings"),
        "{synced:?}"
    );
    assert!(env.sim.request_counts().is_empty(), "no request");

    // The first one deleted, the second one takes over.
    let first = &env.mrs[0];
    first
        .api
        .delete(&first.name, &Default::default())
        .await
        .expect("delete");
    while first.api.get_opt(&first.name).await.expect("get").is_some() {
        first.reconcile().await;
    }
    converge(std::slice::from_ref(&env.mrs[1])).await;
}

/// A security policy and a watch in project `team` (`?projectKey=team` on every call) live
/// apart from the global policy and watch of the same names: they converge, stay quiet (each
/// observed by its own read: the global list does not hold them), have a change made in
/// Xray reverted, and deleting their MRs deletes only the project's objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_scoped_policy_and_watch_live_apart_from_the_global_ones() {
    const SCOPED: &str = "xray_project_objects";
    let policy_key = "policy|team|example-security-policy";
    let watch_key = "watch|team|example-watch";
    let kinds = all_kinds();
    let mut env = env(&kinds).await;
    env.sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    // A deleted object is confirmed gone at once (not only after the creation grace).
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    let mut policy = example(decl("SecurityPolicy"), false);
    policy["spec"]["forProvider"]["projectKey"] = json!("team");
    let mut watch = example(decl("Watch"), false);
    watch["spec"]["forProvider"]["projectKey"] = json!("team");
    env.add(&kind(&kinds, "SecurityPolicy"), policy).await;
    env.add(&kind(&kinds, "Watch"), watch).await;
    converge(&env.mrs).await;
    let stored = env.sim.object(SCOPED, policy_key).expect("project policy")["object"].clone();
    let stored_watch = env.sim.object(SCOPED, watch_key).expect("project watch")["object"].clone();
    assert_eq!(env.sim.object_count("xray_policies"), 0, "no global policy");
    assert_eq!(env.sim.object_count("xray_watches"), 0, "no global watch");

    // A global policy and watch of the same names (made in Xray, not by these MRs).
    let mut global = stored.clone();
    global["description"] = json!("the global one");
    assert!(
        env.sim
            .put_object("xray_policies", "example-security-policy", global.clone())
    );
    assert!(
        env.sim
            .put_object("xray_watches", "example-watch", stored_watch)
    );
    let global = env
        .sim
        .object("xray_policies", "example-security-policy")
        .expect("global policy");
    let global_watch = env
        .sim
        .object("xray_watches", "example-watch")
        .expect("global watch");

    // Two polls: no write; each MR read by its own GET with the project's query.
    env.sim.reset_counts();
    for _ in 0..2 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    let counts = env.sim.request_counts();
    assert_eq!(writes(&env.sim, &[]), 0, "{counts:?}");
    assert_eq!(
        counts.get("GET /xray/api/v2/policies/{key}"),
        Some(&2),
        "{counts:?}"
    );
    assert_eq!(
        counts.get("GET /xray/api/v2/watches/{name}"),
        Some(&2),
        "{counts:?}"
    );
    let requests: u64 = counts.values().sum();
    assert_eq!(requests, 4, "no list call: {counts:?}");

    // A change made in the project's policy is reverted by one reconcile; the global policy
    // is untouched.
    let mut edited = json!({"scope": "policy|team", "object": stored.clone()});
    edited["object"]["rules"][0]["criteria"]["min_severity"] = json!("Low");
    assert!(env.sim.put_object(SCOPED, policy_key, edited));
    env.sim.reset_counts();
    let o = env.mrs[0].reconcile().await;
    assert!(matches!(o, Outcome::After(_)), "{o:?}");
    assert_eq!(
        env.sim
            .request_counts()
            .get("PUT /xray/api/v2/policies/{key}"),
        Some(&1)
    );
    let restored = env.sim.object(SCOPED, policy_key).expect("policy")["object"].clone();
    assert_eq!(restored["rules"], stored["rules"]);
    assert_eq!(
        env.sim.object("xray_policies", "example-security-policy"),
        Some(global.clone())
    );

    // Deleting the MRs (watch first: it assigns the policy) deletes the project's objects
    // only.
    env.sim.reset_counts();
    for m in env.mrs.iter().rev() {
        m.api
            .delete(&m.name, &Default::default())
            .await
            .expect("delete");
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while m.api.get_opt(&m.name).await.expect("get").is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} not released",
                m.name
            );
            m.reconcile().await;
        }
    }
    assert_eq!(env.sim.object(SCOPED, policy_key), None);
    assert_eq!(env.sim.object(SCOPED, watch_key), None);
    assert_eq!(
        env.sim.object("xray_policies", "example-security-policy"),
        Some(global)
    );
    assert_eq!(
        env.sim.object("xray_watches", "example-watch"),
        Some(global_watch)
    );
}

/// The project's part of the simulator's project objects: `(key, object)` of `scope`
/// (`ignore_rule|team`, `report|team`, ...).
fn scoped(env: &Env, scope: &str) -> Vec<Value> {
    env.sim
        .objects("xray_project_objects")
        .unwrap_or_default()
        .into_iter()
        .filter(|v| v["scope"] == scope)
        .map(|v| v["object"].clone())
        .collect()
}

/// An ignore rule (with a build filter), a vulnerabilities report, the binary manager's
/// indexed builds and a watch of a build in project `team` (`?projectKey=team` on every
/// call): they converge in the project, apart from the global objects; the ignore rule's
/// build filters and the watch's build resources name the project as upstream sends them;
/// two polls make 0 writes (each MR read by its own GET in the project); a change made in
/// Xray is reverted in the project; a create whose answer is lost makes exactly one rule in
/// the project; deleting the MRs deletes the project's objects only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_scoped_ignore_rule_report_indexing_and_build_watch() {
    let mut kinds = all_kinds();
    kinds.extend(crate::configuration::kinds().iter().cloned());
    let mut env = env(&kinds).await;
    env.sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    // Global objects of the same Kinds, made in Xray (not by these MRs).
    let global_rule =
        json!({"id": "global-rule", "notes": "global", "ignore_filters": {"cves": ["any"]}});
    env.sim
        .put_object("xray_ignore_rules", "global-rule", global_rule.clone());
    let in_team = |mut m: Value| {
        m["spec"]["forProvider"]["projectKey"] = json!("team");
        m
    };
    let mut rule = in_team(example(decl("IgnoreRule"), false));
    rule["spec"]["forProvider"]["build"] = json!([{"name": "app", "version": "1"}]);
    let report = in_team(example(decl("VulnerabilitiesReport"), false));
    let builds = in_team(example(decl("BinaryManagerBuilds"), false));
    let mut watch = in_team(example(decl("Watch"), false));
    watch["spec"]["forProvider"]["watchResource"] =
        json!([{"type": "build", "name": "app", "binMgrId": "default"}]);
    watch["spec"]["forProvider"]
        .as_object_mut()
        .expect("forProvider")
        .remove("assignedPolicy");
    for (k, m) in [
        ("IgnoreRule", rule),
        ("VulnerabilitiesReport", report),
        ("BinaryManagerBuilds", builds),
        ("Watch", watch),
    ] {
        env.add(&kind(&kinds, k), m).await;
    }
    converge(&env.mrs).await;

    let rules = scoped(&env, "ignore_rule|team");
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(
        rules[0]["ignore_filters"]["builds"],
        json!([{"name": "app", "version": "1", "project": "team"}])
    );
    assert_eq!(
        env.sim.objects("xray_ignore_rules").unwrap_or_default(),
        vec![global_rule.clone()],
        "no global rule made"
    );
    assert_eq!(scoped(&env, "report|team").len(), 1);
    assert_eq!(env.sim.object_count("xray_reports"), 0, "no global report");
    assert_eq!(
        scoped(&env, "bin_mgr|team")[0]["indexed_builds"],
        json!(["example-build"])
    );
    let watches = scoped(&env, "watch|team");
    assert_eq!(
        watches[0]["project_resources"]["resources"][0]["build_repo"],
        "team-build-info"
    );
    assert_eq!(env.sim.object_count("xray_watches"), 0, "no global watch");

    // Two polls: 0 writes; each MR read by its own GET with the project's query.
    env.sim.reset_counts();
    for _ in 0..2 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    let counts = env.sim.request_counts();
    assert_eq!(writes(&env.sim, &[]), 0, "{counts:?}");
    for read in [
        "GET /xray/api/v1/ignore_rules/{id}",
        "GET /xray/api/v1/reports/{id}",
        "GET /xray/api/v1/binMgr/{id}/{what}",
        "GET /xray/api/v2/watches/{name}",
    ] {
        assert_eq!(counts.get(read), Some(&2), "{read}: {counts:?}");
    }
    assert_eq!(counts.values().sum::<u64>(), 8, "{counts:?}");

    // A change made in Xray to the project's indexing and watch is reverted by one
    // reconcile each, in the project (the watch keeps its build_repo).
    let key = "bin_mgr|team|binMgr/default/builds";
    let mut edited = env
        .sim
        .object("xray_project_objects", key)
        .expect("indexing");
    edited["object"]["indexed_builds"] = json!(["other-build"]);
    assert!(env.sim.put_object("xray_project_objects", key, edited));
    let key = "watch|team|example-watch";
    let mut edited = env.sim.object("xray_project_objects", key).expect("watch");
    edited["object"]["general_data"]["description"] = json!("edited in the UI");
    assert!(env.sim.put_object("xray_project_objects", key, edited));
    env.sim.reset_counts();
    for m in &env.mrs[2..4] {
        let o = m.reconcile().await;
        assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
    }
    let counts = env.sim.request_counts();
    assert_eq!(
        counts.get("PUT /xray/api/v1/binMgr/{id}/{what}"),
        Some(&1),
        "{counts:?}"
    );
    assert_eq!(
        counts.get("PUT /xray/api/v2/watches/{name}"),
        Some(&1),
        "{counts:?}"
    );
    assert_eq!(writes(&env.sim, &[]), 2, "{counts:?}");
    assert_eq!(
        scoped(&env, "bin_mgr|team")[0]["indexed_builds"],
        json!(["example-build"])
    );
    let watch = &scoped(&env, "watch|team")[0];
    assert_eq!(
        watch["general_data"]["description"],
        "Apply the security policy to the generic repository"
    );
    assert_eq!(
        watch["project_resources"]["resources"][0]["build_repo"],
        "team-build-info"
    );
    assert_eq!(
        env.sim
            .object("xray_configuration", "binMgr/default/builds"),
        None,
        "the global indexing is not written"
    );

    // A lost create answer in the project: exactly one rule, found by the project's list.
    env.sim.reset_counts();
    env.sim
        .add_fault(Fault::drop_after_commit("POST", "/xray/api/v1/ignore_rules").times(1));
    let mut second = in_team(example(decl("IgnoreRule"), false));
    second["metadata"]["name"] = json!("second-ignore-rule");
    second["spec"]["forProvider"]["notes"] = json!("another rule");
    second["spec"]["forProvider"]["build"] = json!([{"name": "app"}]);
    env.add(&kind(&kinds, "IgnoreRule"), second).await;
    let m = env.mrs.last().expect("second rule");
    converge(std::slice::from_ref(m)).await;
    assert_eq!(scoped(&env, "ignore_rule|team").len(), 2);
    assert_eq!(
        env.sim.object_count("xray_ignore_rules"),
        1,
        "the global one only"
    );
    let counts = env.sim.request_counts();
    assert!(
        counts
            .get("GET /xray/api/v1/ignore_rules")
            .is_some_and(|n| *n >= 1),
        "{counts:?}"
    );

    // Deleting the MRs deletes the project's rules, report and watch (the indexing, which
    // Xray cannot delete, is forgotten); the global objects stay.
    for m in env.mrs.iter().rev() {
        m.api
            .delete(&m.name, &Default::default())
            .await
            .expect("delete");
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while m.api.get_opt(&m.name).await.expect("get").is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} not released",
                m.name
            );
            m.reconcile().await;
        }
    }
    assert!(scoped(&env, "ignore_rule|team").is_empty());
    assert!(scoped(&env, "report|team").is_empty());
    assert!(scoped(&env, "watch|team").is_empty());
    assert_eq!(
        scoped(&env, "bin_mgr|team").len(),
        1,
        "forgotten, not deleted"
    );
    assert_eq!(
        env.sim.objects("xray_ignore_rules").unwrap_or_default(),
        vec![global_rule]
    );
}

/// Every Kind's example plus `EXTRA` ignore rules and `EXTRA` security policies, observed for
/// two polls with observation by list on: 0 writes; every family Xray lists (policies,
/// curation policies and conditions, ignore rules, watches, webhooks) is read by one list
/// call per poll and none of its objects by key; the rest (reports, custom issues, the
/// configuration) is read by key. Prints the requests per MR per poll by call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_are_observed_by_list_where_xray_lists() {
    const EXTRA: usize = 20;
    /// Long enough for a round of reconciles of every MR to share one list answer.
    const ROUND: std::time::Duration = std::time::Duration::from_secs(2);
    let kinds = crate::family_kinds();
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(ROUND));
    let mut env = suite::start(crate::PROVIDER, &kinds, cache).await;
    env.sim.put_repository_raw(
        REPOSITORY,
        json!({"key": REPOSITORY, "rclass": "local", "packageType": "generic"}),
    );
    for d in crate::examples::declarations() {
        env.add(&kind(&kinds, d.kind), example(d, false)).await;
    }
    for n in 0..EXTRA {
        let mut rule = example(decl("IgnoreRule"), false);
        rule["metadata"]["name"] = json!(format!("ignore-rule-{n}"));
        rule["spec"]["forProvider"]["notes"] = json!(format!("rule {n}"));
        env.add(&kind(&kinds, "IgnoreRule"), rule).await;
        let mut policy = example(decl("SecurityPolicy"), false);
        policy["metadata"]["name"] = json!(format!("security-policy-{n}"));
        env.add(&kind(&kinds, "SecurityPolicy"), policy).await;
    }
    converge(&env.mrs).await;

    env.sim.reset_counts();
    for _ in 0..2 {
        tokio::time::sleep(ROUND + ROUND / 4).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    let counts = env.sim.request_counts();
    // The GraphQL queries and the reports list are POSTs that only read.
    let reads = suite::read_calls(&["POST /catalog/api/v1/custom/graphql"], &kinds);
    let reads: Vec<&str> = reads.iter().map(String::as_str).collect();
    assert!(reads.contains(&"POST /xray/api/v1/reports"), "{reads:?}");
    assert_eq!(writes(&env.sim, &reads), 0, "{counts:?}");
    let reports = env
        .mrs
        .iter()
        .filter(|m| m.kind.resolved().decl.kind.ends_with("Report"))
        .count();
    assert_eq!(reports, 5, "one example of each report Kind");
    for list in [
        "GET /xray/api/v2/policies",
        "GET /xray/api/v1/curation/policies",
        "GET /xray/api/v1/curation/conditions",
        "GET /xray/api/v1/ignore_rules",
        "GET /xray/api/v2/watches",
        "GET /xray/api/v1/webhooks",
        // One list for the five report Kinds.
        "POST /xray/api/v1/reports",
    ] {
        assert_eq!(counts.get(list), Some(&2), "{list}: {counts:?}");
    }
    for by_key in [
        "GET /xray/api/v2/policies/{key}",
        "GET /xray/api/v1/curation/policies/{key}",
        "GET /xray/api/v1/curation/conditions/{key}",
        "GET /xray/api/v1/ignore_rules/{id}",
        "GET /xray/api/v2/watches/{name}",
        "GET /xray/api/v1/webhooks/{key}",
        "GET /xray/api/v1/reports/{id}",
    ] {
        assert_eq!(counts.get(by_key), None, "{by_key}: {counts:?}");
    }
    let mrs = env.mrs.len() as f64;
    let requests: u64 = counts.values().sum();
    eprintln!(
        "{} MRs ({} examples + {EXTRA} ignore rules + {EXTRA} security policies), 2 polls: {requests} requests = {:.2} per MR per poll, 0 writes",
        env.mrs.len(),
        env.mrs.len() - 2 * EXTRA,
        requests as f64 / (2.0 * mrs)
    );
    for (call, n) in &counts {
        eprintln!("  {call}: {:.1} per poll", *n as f64 / 2.0);
    }
    eprintln!(
        "  report family: {reports} MRs, {:.1} list call per poll, {:.2} requests per report MR per poll",
        counts
            .get("POST /xray/api/v1/reports")
            .copied()
            .unwrap_or(0) as f64
            / 2.0,
        counts
            .get("POST /xray/api/v1/reports")
            .copied()
            .unwrap_or(0) as f64
            / (2.0 * reports as f64)
    );

    // A report deleted in JFrog: the list shows it gone. The MR says its report was created,
    // and a list can lack an object another replica created after fetching it, so one read
    // by ID confirms it gone before the report is created again.
    let m = env
        .mrs
        .iter()
        .find(|m| m.kind.resolved().decl.kind == "VulnerabilitiesReport")
        .expect("a report MR");
    let client = jfrog_client::JfrogClient::builder(env.sim.url())
        .credentials(jfrog_client::Credentials::access_token(
            env.sim.admin_token(),
        ))
        .build()
        .expect("client");
    let address = m.address().await;
    m.kind
        .resolved()
        .rest
        .delete(&Cx::stateless(&client), &address)
        .await
        .expect("deleted in JFrog");
    tokio::time::sleep(ROUND + ROUND / 4).await;
    env.sim.reset_counts();
    m.reconcile().await;
    let counts = env.sim.request_counts();
    eprintln!("a report deleted in JFrog, one reconcile: {counts:?}");
    assert_eq!(
        counts.get("POST /xray/api/v1/reports"),
        Some(&1),
        "{counts:?}"
    );
    assert_eq!(
        counts.get("GET /xray/api/v1/reports/{id}"),
        Some(&1),
        "{counts:?}"
    );
}

/// A single-nested block in the form the CRDs take (an object, or the legacy list of one):
/// the example manifests tell which.
fn nested(v: Value) -> Value {
    let d = decl("VulnerabilitiesReport");
    if example(d, false)["spec"]["forProvider"]["resources"].is_array() {
        json!([v])
    } else {
        v
    }
}

/// A report with every kind of filter (CVSS range, published and scan-date ranges, runtime
/// and contextual-analysis filters) over two repositories, the same in a project, and a
/// violations report likewise, become Ready and then send no update across several polls, not even when Xray's answer
/// carries (other) parameters: the report bindings have no update call and the adapter
/// never compares a report's parameters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_with_filters_are_never_updated() {
    const SECOND: &str = "second-local";
    let kinds = all_kinds();
    let mut env = env(&kinds).await;
    env.sim.put_repository_raw(
        SECOND,
        json!({"key": SECOND, "rclass": "local", "packageType": "generic"}),
    );
    let resources = nested(json!({"repository": [{"name": REPOSITORY}, {"name": SECOND}]}));
    let range = |s: &str, e: &str| nested(json!({"start": s, "end": e}));
    let cvss = nested(json!({"minScore": 5.5, "maxScore": 9.8}));
    let ca = nested(json!({"allowedCaStatuses": ["applicable", "not_scanned"]}));
    let runtime = nested(json!({"timePeriod": "7 days"}));
    let manifest = |kind: &str, name: &str, filters: Value| {
        let mut m = example(decl(kind), false);
        m["metadata"]["name"] = json!(name);
        m["spec"]["forProvider"] = json!({
            "name": name,
            "resources": resources.clone(),
            "cronSchedule": "30 09 * * MON",
            "filters": nested(filters),
        });
        m
    };
    let vulnerabilities = manifest(
        "VulnerabilitiesReport",
        "filtered-vulnerabilities",
        json!({
            "cvssScore": cvss.clone(),
            "published": range("2024-01-01T00:00:00Z", "2024-06-30T00:00:00Z"),
            "scanDate": range("2024-02-01T00:00:00Z", "2024-07-31T00:00:00Z"),
            "runtimeFilter": runtime.clone(),
            "caFilter": ca.clone(),
            "hasRemediation": true,
        }),
    );
    let violations = manifest(
        "ViolationsReport",
        "filtered-violations",
        json!({
            "type": "security",
            "watchNames": ["w1"],
            "severities": ["High", "Critical"],
            "updated": range("2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z"),
            "securityFilters": nested(json!({
                "cvssScore": cvss,
                "published": range("2023-01-01T00:00:00Z", "2023-12-31T00:00:00Z"),
                "hasRemediation": false,
            })),
            "caFilter": ca,
            "runtimeFilter": runtime,
        }),
    );
    // The same report in a project (made, read and deleted with `?projectKey=team`).
    env.sim.put_object(
        "access_projects",
        "team",
        json!({"project_key": "team", "display_name": "Team"}),
    );
    let mut in_team = vulnerabilities.clone();
    in_team["metadata"]["name"] = json!("team-vulnerabilities");
    in_team["spec"]["forProvider"]["projectKey"] = json!("team");
    env.add(&kind(&kinds, "VulnerabilitiesReport"), vulnerabilities)
        .await;
    env.add(&kind(&kinds, "ViolationsReport"), violations).await;
    env.add(&kind(&kinds, "VulnerabilitiesReport"), in_team)
        .await;
    // Until generated, each poll reads the job's progress; then Ready.
    for _ in 0..8 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            m.reconcile().await;
        }
    }
    converge(&env.mrs).await;
    let read_calls = suite::read_calls(&[], &kinds);
    let read_calls: Vec<&str> = read_calls.iter().map(String::as_str).collect();
    let put = |env: &Env| {
        env.sim
            .request_counts()
            .iter()
            .filter(|(k, _)| k.starts_with("PUT /xray/api/v1/reports"))
            .map(|(_, n)| n)
            .sum::<u64>()
    };
    env.sim.reset_counts();
    for _ in 0..4 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    assert_eq!(put(&env), 0, "{:?}", env.sim.request_counts());
    assert_eq!(
        writes(&env.sim, &read_calls),
        0,
        "{:?}",
        env.sim.request_counts()
    );
    // Xray answers with parameters that differ from the spec (another scope, filters,
    // time zone): still no update, still Ready and Synced.
    let differ = |r: &mut Value| {
        r["resources"] = json!({"repositories": [{"name": "elsewhere"}]});
        r["filters"] = json!({"severities": ["Low"], "cvss_score": {"min_score": 1}});
        r["cron_schedule"] = json!("00 01 * * *");
        r["cron_schedule_timezone"] = json!("Europe/Paris");
        r["notify"] = json!({"emails": ["someone@example.com"]});
    };
    for mut r in env.sim.objects("xray_reports").unwrap_or_default() {
        let id = r["id"].to_string();
        differ(&mut r);
        assert!(env.sim.put_object("xray_reports", &id, r));
    }
    // The project's report (stored with its scope).
    let mut scoped = 0;
    for mut o in env.sim.objects("xray_project_objects").unwrap_or_default() {
        if o["scope"] == "report|team" {
            let id = o["object"]["id"].to_string();
            differ(&mut o["object"]);
            assert!(
                env.sim
                    .put_object("xray_project_objects", &format!("report|team|{id}"), o)
            );
            scoped += 1;
        }
    }
    assert_eq!(scoped, 1);
    env.sim.reset_counts();
    for _ in 0..4 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    assert_eq!(put(&env), 0, "{:?}", env.sim.request_counts());
    assert_eq!(
        writes(&env.sim, &read_calls),
        0,
        "{:?}",
        env.sim.request_counts()
    );
    for m in &env.mrs {
        assert!(
            m.ready_and_synced().await,
            "{}: {:?}",
            m.name,
            m.get().await.data["status"]
        );
    }
}

/// The GraphQL mutations the simulator saw since its counts were reset, by field.
fn mutations(env: &Env) -> std::collections::BTreeMap<String, u64> {
    env.sim
        .request_counts()
        .into_iter()
        .filter_map(|(k, n)| {
            k.strip_prefix("MUTATION customCatalogLabel.")
                .map(|f| (f.to_string(), n))
        })
        .collect()
}

/// The labels assigned to a package (`version`: to one of its versions) in the simulator.
fn assigned(env: &Env, name: &str, version: Option<&str>) -> Vec<String> {
    let key = match version {
        Some(v) => format!("version|npm|{name}|{v}"),
        None => format!("package|npm|{name}"),
    };
    env.sim
        .object("catalog_assignments", &key)
        .map(|a| {
            a["labels"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn label_names(env: &Env) -> Vec<String> {
    let mut names: Vec<String> = env
        .sim
        .objects("catalog_labels")
        .unwrap_or_default()
        .iter()
        .map(|l| l["name"].as_str().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

/// Two CatalogLabels MRs, each with labels and package and version assignments, beside a
/// label a person made and one the first MR adopts: both converge (the adopted label is not
/// created again), stay quiet for two polls with no mutation, have an assignment removed in
/// the Catalog made again, and editing one's assignments sends only the mutations needed;
/// deleting one removes only its labels and assignments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_catalog_labels_mrs_own_only_their_labels_and_assignments() {
    use kube::api::{Patch, PatchParams};
    let kinds: Vec<Arc<FamilyKind>> = crate::configuration::kinds().to_vec();
    let labels = kind(&kinds, "CatalogLabels");
    let mut env = env(&kinds).await;
    // The MRs are deleted moments after their create: no grace for the create to show.
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    let person = |name: &str| json!({"name": name, "description": "made in the UI"});
    assert!(
        env.sim
            .put_object("catalog_labels", "by-hand", person("by-hand"))
    );
    assert!(
        env.sim
            .put_object("catalog_labels", "adopted", person("adopted"))
    );
    let manifest = |name: &str, spec: Value| {
        let mut m = example(decl("CatalogLabels"), false);
        m["metadata"]["name"] = json!(name);
        m["spec"]["forProvider"] = spec;
        m
    };
    let first = json!({
        "labels": [
            {"name": "approved", "description": "Approved for production"},
            {"name": "adopted", "description": "made in the UI"}
        ],
        "packageAssignments": [
            {"labelName": "approved", "packageName": "lodash", "packageType": "npm"}
        ],
        "versionAssignments": [
            {"labelName": "approved", "packageName": "react", "packageType": "npm", "versions": ["18.2.0", "18.3.0"]}
        ]
    });
    let second = json!({
        "labels": [{"name": "blocked", "description": "Never in production"}],
        "packageAssignments": [
            {"labelName": "blocked", "packageName": "left-pad", "packageType": "npm"}
        ],
        "versionAssignments": [
            {"labelName": "blocked", "packageName": "lodash", "packageType": "npm", "versions": ["4.17.20"]}
        ]
    });
    env.sim.reset_counts();
    env.add(&labels, manifest("team-a-labels", first)).await;
    env.add(&labels, manifest("team-b-labels", second)).await;
    converge(&env.mrs).await;
    assert_eq!(
        label_names(&env),
        ["adopted", "approved", "blocked", "by-hand"],
        "no label twice, none lost"
    );
    // The adopted label was not created; each MR's labels in one create (one or several).
    let made = mutations(&env);
    assert_eq!(made.get("createCustomCatalogLabel"), Some(&2), "{made:?}");
    assert_eq!(made.get("createCustomCatalogLabels"), None, "{made:?}");
    assert_eq!(assigned(&env, "lodash", None), ["approved"]);
    assert_eq!(assigned(&env, "left-pad", None), ["blocked"]);
    assert_eq!(assigned(&env, "react", Some("18.2.0")), ["approved"]);
    assert_eq!(assigned(&env, "react", Some("18.3.0")), ["approved"]);
    assert_eq!(assigned(&env, "lodash", Some("4.17.20")), ["blocked"]);
    assert_eq!(
        made.get("assignCustomCatalogLabelToPublicPackageVersions"),
        Some(&1)
    );
    assert_eq!(
        made.get("assignCustomCatalogLabelsToPublicPackageVersion"),
        Some(&1)
    );

    // Quiet: two polls, one query per MR each, no mutation.
    env.sim.reset_counts();
    for _ in 0..2 {
        tokio::time::sleep(POLL * 2).await;
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
    }
    assert!(mutations(&env).is_empty(), "{:?}", env.sim.request_counts());
    // At most one query per MR and poll: one query answers both MRs when the second
    // observes within the snapshot's life (20 ms here; see
    // `catalog_labels_mrs_are_read_by_one_query_per_poll`).
    let queries = env
        .sim
        .request_count("POST", "/catalog/api/v1/custom/graphql");
    assert!((2..=4).contains(&queries), "{:?}", env.sim.request_counts());

    // An assignment removed in the Catalog is made again; nothing else is sent.
    assert!(
        env.sim
            .delete_object("catalog_assignments", "package|npm|left-pad")
    );
    // Seen once the last query's answer is older than a poll.
    tokio::time::sleep(POLL * 2).await;
    env.sim.reset_counts();
    converge(&env.mrs).await;
    for m in &env.mrs {
        m.reconcile().await;
    }
    assert_eq!(assigned(&env, "left-pad", None), ["blocked"]);
    assert_eq!(
        mutations(&env),
        [("assignCustomCatalogLabelsToPublicPackage".to_string(), 1)].into(),
    );

    // The first MR moves its package label to express, drops one version and the adopted
    // label: exactly those mutations are sent.
    let a = &env.mrs[0];
    let edit = json!({"spec": {"forProvider": {
        "labels": [{"name": "approved", "description": "Approved for production"}],
        "packageAssignments": [
            {"labelName": "approved", "packageName": "express", "packageType": "npm"}
        ],
        "versionAssignments": [
            {"labelName": "approved", "packageName": "react", "packageType": "npm", "versions": ["18.3.0"]}
        ]
    }}});
    a.api
        .patch(&a.name, &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .expect("patch");
    env.sim.reset_counts();
    converge(&env.mrs).await;
    for m in &env.mrs {
        m.reconcile().await;
    }
    assert_eq!(
        mutations(&env),
        [
            ("removeCustomCatalogLabelsFromPublicPackage".to_string(), 1),
            (
                "removeCustomCatalogLabelsFromPublicPackageVersion".to_string(),
                1
            ),
            ("assignCustomCatalogLabelsToPublicPackage".to_string(), 1),
            ("deleteCustomCatalogLabel".to_string(), 1),
        ]
        .into(),
    );
    assert_eq!(label_names(&env), ["approved", "blocked", "by-hand"]);
    assert!(assigned(&env, "lodash", None).is_empty());
    assert_eq!(assigned(&env, "express", None), ["approved"]);
    assert!(assigned(&env, "react", Some("18.2.0")).is_empty());
    assert_eq!(assigned(&env, "react", Some("18.3.0")), ["approved"]);

    // Deleting the second MR removes its label and assignments only.
    let b = &env.mrs[1];
    b.api
        .delete(&b.name, &Default::default())
        .await
        .expect("delete");
    while b.api.get_opt(&b.name).await.expect("get").is_some() {
        b.reconcile().await;
    }
    assert_eq!(label_names(&env), ["approved", "by-hand"]);
    assert!(assigned(&env, "left-pad", None).is_empty());
    assert!(assigned(&env, "lodash", Some("4.17.20")).is_empty());
    assert_eq!(assigned(&env, "express", None), ["approved"]);
    assert_eq!(assigned(&env, "react", Some("18.3.0")), ["approved"]);
    assert!(env.mrs[0].ready_and_synced().await);
}

/// Many CatalogLabels MRs are observed by one GraphQL query per poll (what they all reach,
/// asked at once; at most 50 MRs per query), not one query each: each gets its own labels
/// and assignments, nothing is written, and a label removed in the Catalog (with its
/// assignment) is seen by the next poll's query and made again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_labels_mrs_are_read_by_one_query_per_poll() {
    const TTL: std::time::Duration = std::time::Duration::from_secs(1);
    let kinds: Vec<Arc<FamilyKind>> = crate::configuration::kinds().to_vec();
    let labels = kind(&kinds, "CatalogLabels");
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(TTL));
    let mut env = suite::start(crate::PROVIDER, &kinds, cache).await;
    // The label is removed seconds after its create: no grace for the create to show.
    env.ctx.creation_grace_period = std::time::Duration::ZERO;
    for i in 0..3 {
        let mut m = example(decl("CatalogLabels"), false);
        m["metadata"]["name"] = json!(format!("labels-{i}"));
        m["spec"]["forProvider"] = json!({
            "labels": [{"name": format!("label-{i}"), "description": format!("label {i}")}],
            "packageAssignments": [
                {"labelName": format!("label-{i}"), "packageName": format!("pkg-{i}"), "packageType": "npm"}
            ]
        });
        env.add(&labels, m).await;
    }
    converge(&env.mrs).await;
    for round in 0..2 {
        tokio::time::sleep(TTL + std::time::Duration::from_millis(200)).await;
        env.sim.reset_counts();
        for m in &env.mrs {
            let o = m.reconcile().await;
            assert!(matches!(o, Outcome::After(_)), "{}: {o:?}", m.name);
        }
        let counts = env.sim.request_counts();
        eprintln!("poll {round}: {counts:?}");
        assert_eq!(
            counts.get("POST /catalog/api/v1/custom/graphql"),
            Some(&1),
            "{counts:?}"
        );
        assert_eq!(counts.len(), 1, "{counts:?}");
    }
    assert!(env.sim.delete_object("catalog_labels", "label-1"));
    suite::poll(&env, TTL, "after the label's removal").await;
    // The Catalog removed the label's assignment with it: both are made again.
    assert_eq!(
        mutations(&env),
        [
            ("assignCustomCatalogLabelsToPublicPackage".to_string(), 1),
            ("createCustomCatalogLabel".to_string(), 1)
        ]
        .into(),
        "{:?}",
        env.sim.request_counts()
    );
    assert_eq!(label_names(&env), ["label-0", "label-1", "label-2"]);
    assert_eq!(assigned(&env, "pkg-1", None), ["label-1"]);
}
