//! The fault suite's JFrog outage scenarios (issue 17): the real providers, driven through
//! `sandbox up`, against a JFrog simulator that answers 5xx, storms 429 with `Retry-After`,
//! loses the answer of writes it committed, slows down by seconds, or keeps answering the
//! previous state after a write. Every scenario runs its manifests twice in one sandbox: once
//! without faults (the baseline: how many objects each simulator collection gains, and keeps
//! after the deletes) and once with the faults; then
//! - duplicates = objects the faulty run made beyond the baseline, per collection,
//! - missing = objects it lacks, plus managed resources that never became Ready,
//! - writes = write requests JFrog received during the faulty run,
//! - faults = requests the simulator failed or whose answer it dropped (its own counts),
//! - secrets = the access token or an example Secret value found in any log, event or MR.
//!
//! The quick variants (a few dozen MRs) run in `cargo test --workspace`; the full-size ones
//! are `#[ignore]`d and run with `cargo xtask reliability --long`, or:
//! `cargo build -p sandbox && RELIABILITY_OUT=$PWD/target/reliability cargo test -p e2e --test e2e
//! reliability_jfrog:: -- --include-ignored --test-threads 1 --nocapture`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use e2e::reliability::{Row, record};
use e2e::{Mr, Sandbox, SandboxOptions, manifests_dir, read_manifests, repo_root, writes};
use serde_json::{Value, json};

/// The message of a managed resource whose create outcome is unknown and that the runtime
/// leaves for a human (Crossplane's create-pending stop).
const FOR_A_HUMAN: &str = "cannot determine creation result";

/// The simulator collection that holds the objects of each Kind the runtime may leave for a
/// human: a server-assigned identifier and a value that only the create's answer carries (a
/// token, an API key), so a lost answer leaves an object no observe can find again.
const FOR_A_HUMAN_COLLECTIONS: &[(&str, &str)] =
    &[("APIKey", "api_keys"), ("ScopedToken", "tokens")];

/// The delete deadline when no fault slows JFrog down.
const DELETE_BASE: Duration = Duration::from_secs(180);

/// The namespaced examples of every provider (`legacy/` folders left out; `examples/install/`
/// too: it installs the packages and would replace the sandbox's ProviderConfig).
fn all_examples() -> Vec<Value> {
    let mut dirs: Vec<_> = std::fs::read_dir(repo_root().join("examples"))
        .expect("read examples/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir() && !p.ends_with("install"))
        .collect();
    dirs.sort();
    dirs.iter()
        .flat_map(|d| read_manifests(d))
        .filter(|d| {
            d["kind"] == "Secret"
                || d["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.contains(".m.crossplane.io/"))
        })
        .collect()
}

/// A small cross-section of the examples: every provider, the repository classes, webhooks,
/// users, groups, permissions, tokens and key pairs (server-assigned IDs), replication,
/// system configuration, Xray policies, ignore rules, watches and reports, projects and
/// platform Kinds, with the objects they refer to.
fn quick_examples() -> Vec<Value> {
    let files = [
        "artifactory/repository/local-generic.yaml",
        "artifactory/repository/local-maven.yaml",
        "artifactory/repository/local-npm.yaml",
        "artifactory/repository/remote-npm.yaml",
        "artifactory/repository/virtual-npm.yaml",
        "artifactory/repository/federated-generic.yaml",
        "artifactory/webhook/artifact-webhook.yaml",
        "artifactory/security",
        "artifactory/user",
        "artifactory/artifact",
        "artifactory/replication/local-repository-single-replication.yaml",
        "artifactory/configuration/backup.yaml",
        "artifactory/configuration/property-set.yaml",
        "xray/policy/security-policy.yaml",
        "xray/policy/ignore-rule.yaml",
        "xray/watch/watch.yaml",
        "xray/report/licenses-report.yaml",
        "project/project/project.yaml",
        "platform/access/group.yaml",
        "platform/lifecycle/lifecycle-stage.yaml",
    ];
    let docs: Vec<Value> = files
        .iter()
        .flat_map(|f| read_manifests(&repo_root().join("examples").join(f)))
        .filter(|d| {
            d["kind"] == "Secret"
                || d["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.contains(".m.crossplane.io/"))
        })
        .collect();
    assert!(docs.len() >= 25, "quick set: {} documents", docs.len());
    docs
}

/// `n` namespaced local generic repositories (deterministic keys).
fn repositories(prefix: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({
                "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
                "kind": "LocalGenericRepository",
                "metadata": {"name": format!("{prefix}-{i:04}"), "namespace": "default"},
                "spec": {"forProvider": {"description": "reliability"}},
            })
        })
        .collect()
}

/// What a scenario does.
struct Plan {
    id: &'static str,
    scenario: &'static str,
    size: String,
    providers: &'static str,
    docs: Vec<Value>,
    /// FaultSpecs added for the faulty run.
    faults: Vec<Value>,
    /// Simulator configuration during the faulty run (and reset after it).
    config: Option<(Value, Value)>,
    /// Change the description of every generated repository under the faults, and wait for
    /// JFrog to show it.
    update: bool,
    /// Keep polling under the faults this long after convergence.
    hold: Duration,
    /// How long the faulty run may take to converge.
    timeout: Duration,
}

/// What one run (baseline or faulty) measured.
#[derive(Default)]
struct Measured {
    converge_secs: f64,
    ready: usize,
    /// MRs left for a human (create outcome unknown), with their message.
    for_a_human: Vec<String>,
    /// MRs neither Ready nor left for a human at the timeout.
    not_converged: Vec<String>,
    /// Objects gained per collection once converged.
    gained: BTreeMap<String, i64>,
    /// Objects still there per collection after every MR was deleted.
    left: BTreeMap<String, i64>,
    /// MRs not gone after the delete.
    not_deleted: Vec<String>,
    /// The objects the run created and its deletes left, as (collection, object).
    leftovers: Vec<(String, Value)>,
    writes: u64,
    fired: u64,
    matched: u64,
    requests: u64,
}

fn delta(after: &BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> BTreeMap<String, i64> {
    after
        .iter()
        .map(|(k, a)| {
            let b = before.get(k).copied().unwrap_or(0);
            let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            (k.clone(), signed(*a) - signed(b))
        })
        .filter(|(_, d)| *d != 0)
        .collect()
}

/// Waits until every MR is Ready and Synced, or is left for a human, or `timeout` passes.
async fn converge(
    sb: &Sandbox,
    mrs: &[Mr],
    timeout: Duration,
) -> (usize, Vec<String>, Vec<String>) {
    let deadline = Instant::now() + timeout;
    loop {
        let (mut ready, mut human, mut other) = (0, Vec::new(), Vec::new());
        for mr in mrs {
            let Some(o) = mr.try_get().await else {
                other.push(format!("{}: absent", mr.display()));
                continue;
            };
            let c = e2e::conditions(&o);
            let is = |t: &str| c.get(t).is_some_and(|c| c.0 == "True");
            if is("Ready") && is("Synced") {
                ready += 1;
            } else if let Some((_, _, m)) = c.get("Synced").filter(|c| c.2.contains(FOR_A_HUMAN)) {
                human.push(format!("{}: {m}", mr.display()));
            } else {
                other.push(format!("{}: {:?}", mr.display(), c.get("Synced")));
            }
        }
        if other.is_empty() || Instant::now() > deadline {
            return (ready, human, other);
        }
        sb.assert_running();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Sum of the active faults' (matched, fired) counts.
async fn fault_counts(sb: &Sandbox) -> (u64, u64) {
    sb.sim.faults().await.iter().fold((0, 0), |(m, f), x| {
        (
            m + x["matched"].as_u64().unwrap_or(0),
            f + x["fired"].as_u64().unwrap_or(0),
        )
    })
}

/// The generated repositories' description changed (for `Plan::update`).
fn updated(docs: &[Value]) -> Vec<Value> {
    docs.iter()
        .filter(|d| d["spec"]["forProvider"]["description"] == "reliability")
        .map(|d| {
            let mut d = d.clone();
            d["spec"]["forProvider"]["description"] = json!("reliability, updated");
            d
        })
        .collect()
}

/// How long the deletes of a run may take. The platform serialises its JFrog writes, so when
/// a fault slows every request down the deletes queue behind each other: a fixed deadline
/// that is ample without latency (180 s) ended in the latency run while 57 repository deletes
/// still waited their turn at about 3.5 s each. So the deadline grows by the faults' worst
/// latency of one request (`latencyMs` + `jitterMs`) for every MR, each of which deletes with
/// at least one write.
fn delete_deadline(plan: &Plan, faulty: bool) -> Duration {
    let worst_ms = plan
        .faults
        .iter()
        .filter(|_| faulty)
        .map(|f| f["latencyMs"].as_u64().unwrap_or(0) + f["jitterMs"].as_u64().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let mrs = plan.docs.iter().filter(|d| d["kind"] != "Secret").count();
    DELETE_BASE + Duration::from_millis(worst_ms) * u32::try_from(mrs).unwrap_or(u32::MAX)
}

/// Every object of every simulator collection.
async fn objects(sb: &Sandbox) -> BTreeMap<String, Vec<Value>> {
    let mut all = BTreeMap::new();
    for name in sb.sim.collection_counts().await.into_keys() {
        let objects = sb.sim.collection(&name).await;
        all.insert(name, objects);
    }
    all
}

/// The objects of `after` that `before` lacks, as (collection, object), in the collections
/// of `left` (those holding more objects than before).
fn new_objects(
    before: &BTreeMap<String, Vec<Value>>,
    after: &BTreeMap<String, Vec<Value>>,
    left: &BTreeMap<String, i64>,
) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for (c, _) in left.iter().filter(|(_, n)| **n > 0) {
        let mut old: Vec<&Value> = before.get(c).into_iter().flatten().collect();
        for o in after.get(c).into_iter().flatten() {
            match old.iter().position(|b| *b == o) {
                Some(i) => {
                    old.swap_remove(i);
                }
                None => found.push((c.clone(), o.clone())),
            }
        }
    }
    found
}

/// One run of the plan's manifests: apply, converge, (update, hold), delete; with the plan's
/// faults when `faulty`.
async fn run(sb: &Sandbox, plan: &Plan, faulty: bool) -> Measured {
    let mut m = Measured::default();
    let before = sb.sim.collection_counts().await;
    let objects_before = objects(sb).await;
    if faulty {
        if let Some((on, _)) = &plan.config {
            sb.sim.put_config(on.clone()).await;
        }
        for f in &plan.faults {
            sb.sim.add_fault(f).await;
        }
    }
    sb.sim.reset_requests().await;
    let mrs: Vec<Mr> = plan
        .docs
        .iter()
        .filter(|d| d["kind"] != "Secret")
        .map(|d| sb.mr_of(d))
        .collect();
    let started = Instant::now();
    sb.apply_ok(&plan.docs);
    let timeout = if faulty {
        plan.timeout
    } else {
        Duration::from_secs(150)
    };
    let (ready, human, other) = converge(sb, &mrs, timeout).await;
    m.converge_secs = started.elapsed().as_secs_f64();
    (m.ready, m.for_a_human, m.not_converged) = (ready, human, other);
    if faulty && plan.update {
        let changed = updated(&plan.docs);
        sb.apply_ok(&changed);
        let deadline = Instant::now() + plan.timeout;
        for d in &changed {
            let key = d["metadata"]["name"].as_str().expect("name");
            loop {
                let seen = sb.sim.repository(key).await;
                if seen.is_some_and(|r| r["description"] == "reliability, updated") {
                    break;
                }
                if Instant::now() > deadline {
                    m.not_converged.push(format!("{key}: update not in JFrog"));
                    break;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        m.converge_secs = started.elapsed().as_secs_f64();
    }
    if faulty && !plan.hold.is_zero() {
        tokio::time::sleep(plan.hold).await;
        sb.assert_running();
    }
    m.gained = delta(&sb.sim.collection_counts().await, &before);

    // Delete every MR (still under the faults): a delete whose answer is lost must not leave
    // the object nor the managed resource behind. The Secrets stay: an MR being deleted still
    // connects with them.
    let to_delete: Vec<Value> = plan
        .docs
        .iter()
        .filter(|d| d["kind"] != "Secret")
        .cloned()
        .collect();
    let dir = manifests_dir(&format!("{}-delete", plan.id), &to_delete);
    let file = dir.path().join("manifests.yaml");
    sb.kubectl_ok(&[
        "delete",
        "--wait=false",
        "--ignore-not-found",
        "-f",
        file.to_str().expect("utf-8"),
    ]);
    let deleting = Instant::now();
    let deadline = deleting + delete_deadline(plan, faulty);
    for mr in &mrs {
        // An MR left for a human cannot go until a person removes its create-pending
        // annotation (crossplane-runtime stops before the delete, too): no use waiting.
        let prefix = format!("{}: ", mr.display());
        if m.for_a_human.iter().any(|h| h.starts_with(&prefix)) {
            if mr.try_get().await.is_some() {
                m.not_deleted.push(mr.display());
            }
            continue;
        }
        while mr.try_get().await.is_some() {
            if Instant::now() > deadline {
                m.not_deleted.push(mr.display());
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    eprintln!(
        "[{}] {} run: converged in {:.1}s, deleted in {:.1}s",
        plan.id,
        if faulty { "faulty" } else { "baseline" },
        m.converge_secs,
        deleting.elapsed().as_secs_f64()
    );
    let counts = sb.sim.requests().await;
    m.requests = counts.values().sum();
    m.writes = writes(&counts).values().sum();
    if faulty {
        (m.matched, m.fired) = fault_counts(sb).await;
        sb.sim.clear_faults().await;
        if let Some((_, off)) = &plan.config {
            sb.sim.put_config(off.clone()).await;
        }
    }
    m.left = delta(&sb.sim.collection_counts().await, &before);
    m.leftovers = new_objects(&objects_before, &objects(sb).await, &m.left);
    m
}

/// Whether `display` (from [`Mr::display`]) names an MR of `for_a_human`.
fn left_for_a_human(for_a_human: &[String], display: &str) -> bool {
    let prefix = format!("{display}: ");
    for_a_human.iter().any(|h| h.starts_with(&prefix))
}

/// Whether a stored object agrees with what a manifest asked for: every scalar field of its
/// `spec.forProvider` that the object also holds has the same value.
fn agrees(doc: &Value, object: &Value) -> bool {
    doc["spec"]["forProvider"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .all(|(k, v)| object.get(k).is_none_or(|o| o == v))
}

/// A leftover object named without its secrets: its key, name or description field.
fn describe(object: &Value) -> String {
    ["key", "name", "username", "description", "subject"]
        .iter()
        .find_map(|f| object[*f].as_str().map(|s| format!("{f} '{s}'")))
        .unwrap_or_else(|| "an object without a name".into())
}

/// The faulty run's leftovers told apart. Explained: the objects of the MRs left for a human
/// with the create-pending message, each of which claims one new object of its Kind's
/// collection ([`FOR_A_HUMAN_COLLECTIONS`]) that agrees with its manifest; such an MR waits
/// for a person, deletion included, so its object stays. Unexplained: every other object the
/// run created and its deletes left. Returns (explained, unexplained), each named.
fn tell_leftovers(sb: &Sandbox, plan: &Plan, fault: &Measured) -> (Vec<String>, Vec<String>) {
    let mut rest: Vec<&(String, Value)> = fault.leftovers.iter().collect();
    let mut explained = Vec::new();
    for d in plan.docs.iter().filter(|d| d["kind"] != "Secret") {
        let display = sb.mr_of(d).display();
        let kind = d["kind"].as_str().unwrap_or_default();
        let collection = FOR_A_HUMAN_COLLECTIONS
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, c)| *c);
        let (true, Some(collection)) = (left_for_a_human(&fault.for_a_human, &display), collection)
        else {
            continue;
        };
        if let Some(i) = rest
            .iter()
            .position(|(c, o)| c == collection && agrees(d, o))
        {
            rest.remove(i);
            explained.push(format!("the {kind} of {display} (in {collection})"));
        }
    }
    let unexplained = rest
        .iter()
        .map(|(c, o)| format!("{c}: {}", describe(o)))
        .collect();
    (explained, unexplained)
}

/// The access token of the sandbox's platform and the values of the manifests' Secrets.
fn secret_values(sb: &Sandbox, docs: &[Value]) -> Vec<String> {
    let env = std::fs::read_to_string(sb.dir.join("jfrog.env")).expect("jfrog.env");
    let mut values = vec![testkit::env_value(&env, "JFROG_ACCESS_TOKEN")];
    for d in docs.iter().filter(|d| d["kind"] == "Secret") {
        for v in d["stringData"].as_object().into_iter().flatten() {
            if let Some(s) = v.1.as_str().filter(|s| s.len() >= 8) {
                values.push(s.to_string());
            }
        }
    }
    values
}

/// Runs the plan (baseline, then with faults), records its row and checks it: every MR
/// converges or is left for a human with the create-pending message, 0 duplicates, nothing
/// missing, every delete done but those of the MRs left for a human, no object left after the
/// deletes but theirs, no secret in any output. Returns the faulty run's figures.
async fn scenario(plan: Plan) -> Measured {
    let sb = Sandbox::start(SandboxOptions::new(plan.id).providers(plan.providers)).await;
    let base = run(&sb, &plan, false).await;
    assert!(
        base.not_converged.is_empty() && base.for_a_human.is_empty(),
        "the baseline did not converge: {:?} {:?}",
        base.not_converged,
        base.for_a_human
    );
    // Every example deletes without faults (a Lifecycle's delete empties its promote stages,
    // so its LifecycleStages go too): an MR still there would be applied again under faults.
    assert!(
        base.not_deleted.is_empty(),
        "the baseline's deletes did not finish: {:?}",
        base.not_deleted
    );
    let fault = run(&sb, &plan, true).await;
    // What the faulty run should have gained: the baseline's objects, less those the
    // baseline's deletes left behind (adopted, not created again).
    let mut duplicates = 0i64;
    let mut missing_objects = 0i64;
    let collections: std::collections::BTreeSet<&String> =
        base.gained.keys().chain(fault.gained.keys()).collect();
    let mut diffs = Vec::new();
    for c in collections {
        let expected =
            base.gained.get(c).copied().unwrap_or(0) - base.left.get(c).copied().unwrap_or(0);
        let got = fault.gained.get(c).copied().unwrap_or(0);
        if got != expected {
            diffs.push(format!("{c}: {got} gained, {expected} expected"));
        }
        duplicates += (got - expected).max(0);
        missing_objects += (expected - got).max(0);
    }
    let (explained, unexplained) = tell_leftovers(&sb, &plan, &fault);
    let expected_objects: i64 = base.gained.values().filter(|n| **n > 0).sum();
    let missing = u64::try_from(missing_objects).unwrap_or(0)
        + u64::try_from(fault.not_converged.len()).unwrap_or(0);
    let secrets = secret_values(&sb, &plan.docs);
    let secret_refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let secrets_found = sb.secrets_in_outputs(&[], &secret_refs).await;
    let mrs = plan.docs.iter().filter(|d| d["kind"] != "Secret").count();
    // An MR left for a human cannot be deleted either until the human removes the
    // create-pending annotation (crossplane-runtime stops before the delete, too).
    let extra_not_deleted: Vec<&String> = fault
        .not_deleted
        .iter()
        .filter(|d| !left_for_a_human(&fault.for_a_human, d))
        .collect();
    let pass = duplicates == 0
        && missing == 0
        && extra_not_deleted.is_empty()
        && unexplained.is_empty()
        && secrets_found == 0;
    let human = if fault.for_a_human.is_empty() {
        String::new()
    } else {
        format!(
            ", {} left for a human with the create-pending message",
            fault.for_a_human.len()
        )
    };
    let leftovers = match (explained.len(), unexplained.len()) {
        (0, 0) => "no object left after the deletes".to_string(),
        (_, 0) => format!(
            "{} objects left after the deletes, all explained: {}, whose MRs wait for a person",
            explained.len(),
            explained.join(", ")
        ),
        _ => format!(
            "{} objects left after the deletes: {} unexplained ({}), {} explained ({})",
            explained.len() + unexplained.len(),
            unexplained.len(),
            unexplained.join(", "),
            explained.len(),
            explained.join(", ")
        ),
    };
    record(&Row {
        id: plan.id.into(),
        scenario: plan.scenario.into(),
        size: plan.size.clone(),
        faults: fault.fired,
        converge_secs: fault.converge_secs,
        expected_objects: u64::try_from(expected_objects).unwrap_or(0),
        jfrog_objects: u64::try_from(
            fault.gained.values().filter(|n| **n > 0).sum::<i64>()
                + base.left.values().filter(|n| **n > 0).sum::<i64>(),
        )
        .unwrap_or(0),
        duplicates: u64::try_from(duplicates).unwrap_or(0),
        missing,
        writes: fault.writes,
        secrets_found,
        pass,
        result: format!(
            "{} of {mrs} MRs Ready{human}; {} of {} requests faulted; {} deletes not done; \
             {leftovers}; baseline {:.1}s",
            fault.ready,
            fault.fired,
            fault.requests,
            extra_not_deleted.len(),
            base.converge_secs
        ),
    });
    for h in &fault.for_a_human {
        eprintln!("[{}] left for a human: {h}", plan.id);
    }
    assert!(
        fault.not_converged.is_empty(),
        "not converged: {:#?}",
        fault.not_converged
    );
    assert!(
        diffs.is_empty(),
        "objects differ from the baseline: {diffs:#?}"
    );
    assert!(
        extra_not_deleted.is_empty(),
        "not deleted: {extra_not_deleted:#?}"
    );
    assert!(
        unexplained.is_empty(),
        "objects left after the deletes that no MR left for a human explains: {unexplained:#?}"
    );
    assert_eq!(secrets_found, 0, "a secret value reached an output");
    fault
}

/// Every write method (POST, PUT, PATCH, DELETE) on every path, each answer lost after
/// commit with probability `rate`.
fn lost_answers(rate: f64) -> Vec<Value> {
    ["POST", "PUT", "PATCH", "DELETE"]
        .iter()
        .map(
            |m| json!({"method": m, "pathPrefix": "/", "errorRate": rate, "dropAfterCommit": true}),
        )
        .collect()
}

/// A plan of `docs` for the four providers with `faults`: the size column counts its MRs
/// (then `size`), no configuration change, no update and no hold unless the scenario sets
/// them.
fn plan(
    id: &'static str,
    scenario: &'static str,
    size: &str,
    docs: Vec<Value>,
    faults: Vec<Value>,
    timeout: Duration,
) -> Plan {
    let n = docs.iter().filter(|d| d["kind"] != "Secret").count();
    Plan {
        id,
        scenario,
        size: format!("{n} MRs, 4 providers{size}"),
        providers: "artifactory,xray,project,platform",
        docs,
        faults,
        config: None,
        update: false,
        hold: Duration::ZERO,
        timeout,
    }
}

/// The quick cross-section plus `n` generated repositories named `prefix-NNNN`.
fn quick_and_repositories(prefix: &str, n: usize) -> Vec<Value> {
    let mut docs = quick_examples();
    docs.extend(repositories(prefix, n));
    docs
}

/// Issue 17: answers lost after commit on every write call of every family, quick size.
/// Ignored in the default run: its two runs with deletes take about 150 s in a debug build,
/// over the default run's budget of 60 s a scenario.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "150 s in debug: cargo xtask reliability --long"]
async fn reliability_jfrog_lost_answers_quick() {
    scenario(plan(
        "jfrog-lost-answers-quick",
        "JFrog answers lost after commit (50 % of every POST/PUT/PATCH/DELETE), one example per family",
        ", create + delete",
        quick_examples(),
        lost_answers(0.5),
        Duration::from_secs(240),
    ))
    .await;
}

/// Issue 17: answers lost after commit on every write call of every example of the four
/// providers (every declared Kind).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: every example of the four providers; cargo xtask reliability --long"]
async fn reliability_jfrog_lost_answers() {
    scenario(plan(
        "jfrog-lost-answers",
        "JFrog answers lost after commit (50 % of every POST/PUT/PATCH/DELETE), every example of every Kind",
        ", create + delete",
        all_examples(),
        lost_answers(0.5),
        Duration::from_secs(600),
    ))
    .await;
}

/// 20 % of every request answered 503, on every path.
fn five_xx() -> Vec<Value> {
    vec![json!({"pathPrefix": "/", "errorRate": 0.2, "status": 503})]
}

/// Issue 17: 20 % 5xx on every path for minutes while ~200 MRs across families are created,
/// updated, polled and deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: minutes of 5xx; cargo xtask reliability --long"]
async fn reliability_jfrog_5xx() {
    scenario(Plan {
        update: true,
        hold: Duration::from_secs(180),
        ..plan(
            "jfrog-5xx",
            "20 % of JFrog requests answered 503 on every path for 3 minutes (create, update, poll, delete)",
            ", poll 5 s",
            quick_and_repositories("r5xx", 170),
            five_xx(),
            Duration::from_secs(600),
        )
    })
    .await;
}

/// Issue 17: seconds of latency (2-5 s) on every JFrog request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: seconds per request; cargo xtask reliability --long"]
async fn reliability_jfrog_latency() {
    scenario(Plan {
        update: true,
        hold: Duration::from_secs(30),
        ..plan(
            "jfrog-latency",
            "latency spikes: every JFrog request takes 2-5 s (create, update, poll, delete)",
            "",
            quick_and_repositories("rlat", 100),
            vec![json!({"pathPrefix": "/", "latencyMs": 2000, "jitterMs": 3000})],
            Duration::from_secs(900),
        )
    })
    .await;
}

/// Issue 17: read-after-write lag: reads answer a repository's previous state for 3 s after
/// each write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: cargo xtask reliability --long"]
async fn reliability_jfrog_read_after_write_lag() {
    scenario(Plan {
        config: Some((
            json!({"readAfterWriteLagMs": 3000}),
            json!({"readAfterWriteLagMs": 0}),
        )),
        update: true,
        hold: Duration::from_secs(20),
        ..plan(
            "jfrog-read-lag",
            "read-after-write lag: JFrog reads answer the previous state for 3 s after every write",
            "",
            quick_and_repositories("rlag", 100),
            Vec::new(),
            Duration::from_secs(600),
        )
    })
    .await;
}

/// Issue 17: a 429 storm with `Retry-After`: for `storm`, JFrog answers every request 429
/// with `Retry-After: retry_after` while managed repositories are updated. The client must
/// pause the whole platform for the `Retry-After` (requests come in bursts at most once per
/// pause, not in a retry loop) and every update must land once the storm ends.
async fn rate_limit_storm(id: &str, n: usize, storm: Duration, retry_after: Duration) {
    let sb = Sandbox::start(SandboxOptions::new(id)).await;
    let docs = repositories(id, n);
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    sb.apply_ok(&docs);
    sb.wait_all_ready(&mrs, Duration::from_secs(300)).await;
    let repos_before = sb.sim.collection_counts().await["repositories"];
    sb.sim.reset_requests().await;

    let started = Instant::now();
    let spec = json!({"pathPrefix": "/", "errorRate": 1.0, "status": 429,
        "retryAfterMs": u64::try_from(retry_after.as_millis()).expect("ms")});
    let fault = sb.sim.add_fault(&spec).await;
    let changed = updated(&docs);
    // kubectl's discovery of hundreds of CRDs can take seconds on a loaded machine: the storm
    // lasts `storm` from the end of the apply.
    sb.apply_ok(&changed);
    tokio::time::sleep_until((Instant::now() + storm).into()).await;
    // When the fault matched each request, as the simulator timed it (exact, where sampling
    // the counts from here would stamp the requests made during the apply late).
    let state = sb.sim.faults().await;
    let ours = state
        .iter()
        .find(|f| f["id"] == fault)
        .expect("the storm's fault is active");
    let matched = ours["matched"].as_u64().expect("matched");
    let fired = ours["fired"].as_u64().expect("fired");
    let times: Vec<Duration> = ours["matchedAtMs"]
        .as_array()
        .expect("matchedAtMs")
        .iter()
        .map(|t| Duration::from_millis(t.as_u64().expect("ms")))
        .collect();
    sb.sim.clear_faults().await;
    let stormed = started.elapsed();
    // Bursts: requests less than a second after a burst's first one belong to it.
    let mut bursts: Vec<Duration> = Vec::new();
    for t in &times {
        if bursts
            .last()
            .is_none_or(|b| *t - *b > Duration::from_secs(1))
        {
            bursts.push(*t);
        }
    }
    let gaps: Vec<f64> = bursts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    let min_gap = gaps.iter().copied().fold(f64::INFINITY, f64::min);

    // After the storm: every update lands.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut not_updated = Vec::new();
    for d in &changed {
        let key = d["metadata"]["name"].as_str().expect("name");
        loop {
            if sb
                .sim
                .repository(key)
                .await
                .is_some_and(|r| r["description"] == "reliability, updated")
            {
                break;
            }
            if Instant::now() > deadline {
                not_updated.push(key.to_string());
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    let (ready, _, not_ready) = converge(&sb, &mrs, Duration::from_secs(120)).await;
    let converge_secs = started.elapsed().as_secs_f64();
    let repos_after = sb.sim.collection_counts().await["repositories"];
    let counts = sb.sim.requests().await;
    let write_count: u64 = writes(&counts).values().sum();
    let secrets = secret_values(&sb, &[]);
    let secret_refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let secrets_found = sb.secrets_in_outputs(&mrs, &secret_refs).await;
    // Honouring Retry-After: one burst per pause at most (plus the first and the one the
    // storm's end may cut), never a tight retry loop.
    let max_bursts =
        usize::try_from(stormed.as_millis() / retry_after.as_millis()).expect("small") + 2;
    let honoured = bursts.len() <= max_bursts
        && (gaps.is_empty() || min_gap >= retry_after.as_secs_f64() * 0.8);
    let duplicates = repos_after.saturating_sub(repos_before);
    let missing = u64::try_from(not_updated.len() + not_ready.len()).expect("small");
    let pass = honoured && duplicates == 0 && missing == 0 && secrets_found == 0;
    record(&Row {
        id: id.into(),
        scenario: format!(
            "429 storm: every JFrog request answered 429 with Retry-After {} s for {} s while repositories are updated",
            retry_after.as_secs(),
            stormed.as_secs()
        ),
        size: format!("{n} MRs, provider-artifactory"),
        faults: fired,
        converge_secs,
        expected_objects: u64::try_from(n).expect("small"),
        jfrog_objects: repos_after,
        duplicates,
        missing,
        writes: write_count,
        secrets_found,
        pass,
        result: format!(
            "{matched} requests during the storm in {} bursts (min gap {:.1} s, Retry-After {} s: honoured={honoured}); {ready} of {n} Ready, {} updates landed",
            bursts.len(),
            if gaps.is_empty() { 0.0 } else { min_gap },
            retry_after.as_secs(),
            changed.len() - not_updated.len()
        ),
    });
    assert!(
        honoured,
        "Retry-After not honoured: {} bursts at {bursts:?} (at most {max_bursts} expected)",
        bursts.len()
    );
    assert!(
        not_updated.is_empty(),
        "updates not in JFrog: {not_updated:?}"
    );
    assert!(not_ready.is_empty(), "not Ready: {not_ready:#?}");
    assert_eq!(duplicates, 0);
    assert_eq!(secrets_found, 0, "a secret value reached an output");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliability_jfrog_rate_limit_quick() {
    rate_limit_storm(
        "jfrog-429-quick",
        20,
        Duration::from_secs(15),
        Duration::from_secs(3),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: a two-minute storm over 200 MRs; cargo xtask reliability --long"]
async fn reliability_jfrog_rate_limit() {
    rate_limit_storm(
        "jfrog-429",
        200,
        Duration::from_secs(120),
        Duration::from_secs(5),
    )
    .await;
}
