//! End-to-end tests of the repository Kinds (issue 5), driving the real provider process
//! through `sandbox up` (Kubernetes API test server + JFrog simulator + provider-artifactory)
//! as a user would: manifests applied by the sandbox or `kubectl`, state read with kube-rs and
//! `kubectl`, JFrog's side read and changed through the simulator's admin API.
//!
//! Each test runs its own sandbox (own ports, own state directory), so they run in parallel.
//! Run with `cargo test -p e2e --test e2e repositories:: -- --nocapture` after `cargo build -p
//! sandbox` (or `cargo test --workspace`, which builds it) to see the measured counts.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use e2e::{
    Mr, Sandbox, SandboxOptions, count, manifests_dir, read_manifests, repo_root, wait_for, writes,
};
use serde_json::{Value, json};

/// How long a handful of managed resources may take to become Ready on a loaded machine.
const CONVERGE: Duration = Duration::from_secs(240);

const NAMESPACED: &str = "repository.artifactory.m.crossplane.io/v1alpha1";
const LEGACY: &str = "repository.artifactory.crossplane.io/v1alpha1";

/// A namespaced local generic repository manifest.
fn local_generic(name: &str, description: &str) -> Value {
    json!({
        "apiVersion": NAMESPACED, "kind": "LocalGenericRepository",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"forProvider": {"description": description}},
    })
}

/// A legacy (cluster-scoped) local generic repository manifest.
fn legacy_local_generic(name: &str, description: &str) -> Value {
    json!({
        "apiVersion": LEGACY, "kind": "LocalGenericRepository",
        "metadata": {"name": name},
        "spec": {"forProvider": {"description": description}, "providerConfigRef": {"name": "default"}},
    })
}

/// The repository class of a Kind: `Local`, `Remote`, `Virtual` or `Federated`.
fn class_of(kind: &str) -> &'static str {
    ["Local", "Remote", "Virtual", "Federated"]
        .into_iter()
        .find(|c| kind.starts_with(c))
        .unwrap_or("other")
}

const REPO_ROUTE: &str = "/artifactory/api/repositories/{key}";

/// How many times, at least, the provider has observed each of `n` repositories according
/// to the simulator's counts since the last reset: per-repository `GET`s shared out over the
/// repositories, plus the whole-list reads (`GET .../configurations` or the list) that observe
/// every repository at once.
fn observation_rounds(counts: &BTreeMap<String, u64>, n: u64) -> u64 {
    count(counts, "GET", REPO_ROUTE) / n.max(1)
        + count(
            counts,
            "GET",
            "/artifactory/api/repositories/configurations",
        )
        + count(counts, "GET", "/artifactory/api/repositories")
}

/// Waits until at least `rounds` poll intervals have passed and the provider has observed
/// the `n` repositories at least `rounds` times (see [`observation_rounds`]); returns the
/// counts since the last reset.
async fn wait_observed(sb: &Sandbox, n: u64, rounds: u64) -> BTreeMap<String, u64> {
    sb.wait_observed_rounds(
        &format!("observations of {n} repositories"),
        rounds,
        |counts| observation_rounds(counts, n),
    )
    .await
}

/// Issue 5, "Must show" 1: every example (namespaced and legacy) becomes Ready and Synced,
/// then two more poll intervals send no write to JFrog: no perpetual diff, for every Kind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_converges_and_stays_without_writes() {
    let examples = repo_root().join("examples/artifactory/repository");
    let docs = read_manifests(&examples);
    let sb = Sandbox::start(SandboxOptions::new("examples").apply(&examples)).await;
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();

    let mut per_class: BTreeMap<(String, &str), u64> = BTreeMap::new();
    for mr in &mrs {
        let scope = if mr.namespace.is_some() {
            "namespaced"
        } else {
            "legacy"
        };
        *per_class
            .entry((class_of(&mr.kind).to_string(), scope))
            .or_default() += 1;
    }
    let kinds: std::collections::BTreeSet<(&str, &str)> = mrs
        .iter()
        .map(|m| (m.group.as_str(), m.kind.as_str()))
        .collect();
    println!(
        "examples applied: {} ({} Kinds across both API groups)",
        mrs.len(),
        kinds.len()
    );
    for ((class, scope), n) in &per_class {
        println!("  {class:<10} {scope:<11} {n}");
    }
    assert!(
        mrs.len() >= 154,
        "expected the 150 namespaced + 4 legacy examples, found {}",
        mrs.len()
    );

    let started = Instant::now();
    sb.wait_all_ready(&mrs, Duration::from_secs(480)).await;
    let converged = started.elapsed();
    let counts = sb.sim.requests().await;
    println!(
        "all {} Ready and Synced {:.1}s after the sandbox was ready; requests until then:",
        mrs.len(),
        converged.as_secs_f64()
    );
    for (route, n) in &counts {
        println!("  {route}: {n}");
    }

    sb.sim.reset_requests().await;
    let counts = wait_observed(&sb, u64::try_from(mrs.len()).expect("count"), 2).await;
    println!(
        "requests during two more poll intervals (poll {:?}):",
        sb.poll
    );
    for (route, n) in &counts {
        println!("  {route}: {n}");
    }
    let writes = writes(&counts);
    println!(
        "writes in the no-diff run: {}",
        writes.values().sum::<u64>()
    );
    assert!(
        writes.is_empty(),
        "perpetual diff: writes sent to JFrog while nothing changed: {writes:?}"
    );
    for mr in &mrs {
        assert!(
            mr.ready_and_synced().await,
            "{} no longer Ready and Synced",
            mr.display()
        );
    }
}

/// A change made directly in JFrog is reverted by the next poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_made_in_jfrog_is_reverted() {
    let docs = [local_generic("drift-local", "managed by Crossplane")];
    let dir = manifests_dir("drift", &docs);
    let sb = Sandbox::start(SandboxOptions::new("drift").apply(dir.path())).await;
    let mr = sb.mr_of(&docs[0]);
    sb.wait_all_ready(std::slice::from_ref(&mr), CONVERGE).await;

    let mut stored = sb
        .sim
        .repository("drift-local")
        .await
        .expect("the repository exists in JFrog");
    stored["description"] = json!("changed in the JFrog UI");
    sb.sim.reset_requests().await;
    sb.sim.put_repository("drift-local", &stored).await;
    let changed = Instant::now();
    wait_for(
        "the description to be reverted in JFrog",
        Duration::from_secs(180),
        Duration::from_millis(250),
        || async {
            let r = sb.sim.repository("drift-local").await?;
            (r["description"] == json!("managed by Crossplane")).then_some(())
        },
    )
    .await;
    let counts = sb.sim.requests().await;
    println!(
        "drift reverted {:.1}s after the change (poll {:?}); requests: {counts:?}",
        changed.elapsed().as_secs_f64(),
        sb.poll
    );
    assert!(
        count(&counts, "POST", REPO_ROUTE) >= 1,
        "the revert is an update: {counts:?}"
    );
    assert_eq!(
        count(&counts, "PUT", REPO_ROUTE),
        0,
        "the repository must be updated, not recreated: {counts:?}"
    );
    assert_eq!(
        count(&counts, "DELETE", REPO_ROUTE),
        0,
        "nothing deleted: {counts:?}"
    );
    sb.wait_all_ready(std::slice::from_ref(&mr), CONVERGE).await;
}

/// Deleting a managed resource deletes the repository; without the Delete management policy
/// (namespaced) or with `deletionPolicy: Orphan` (legacy) the repository is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_deletes_unless_orphaned() {
    let mut kept = local_generic("kept-local", "kept: no Delete policy");
    kept["spec"]["managementPolicies"] = json!(["Observe", "Create", "Update", "LateInitialize"]);
    let mut orphan = legacy_local_generic("legacy-orphan-local", "kept: deletionPolicy Orphan");
    orphan["spec"]["deletionPolicy"] = json!("Orphan");
    let docs = [
        local_generic("deleted-local", "deleted with its MR"),
        kept,
        legacy_local_generic("legacy-deleted-local", "deleted with its legacy MR"),
        orphan,
    ];
    let dir = manifests_dir("delete", &docs);
    let sb = Sandbox::start(SandboxOptions::new("delete").apply(dir.path())).await;
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    sb.wait_all_ready(&mrs, CONVERGE).await;
    for mr in &mrs {
        assert!(
            sb.sim.repository(&mr.name).await.is_some(),
            "{} was created",
            mr.name
        );
    }

    sb.delete_and_wait_gone(&mrs, CONVERGE).await;
    assert!(
        sb.sim.repository("deleted-local").await.is_none(),
        "deleting the namespaced MR deletes the repository"
    );
    assert!(
        sb.sim.repository("legacy-deleted-local").await.is_none(),
        "deleting the legacy MR deletes the repository"
    );
    assert!(
        sb.sim.repository("kept-local").await.is_some(),
        "managementPolicies without Delete keep the repository"
    );
    assert!(
        sb.sim.repository("legacy-orphan-local").await.is_some(),
        "deletionPolicy: Orphan keeps the repository"
    );
    let counts = sb.sim.requests().await;
    println!("delete test requests: {counts:?}");
    assert_eq!(
        count(&counts, "DELETE", REPO_ROUTE),
        2,
        "exactly the two deletable repositories: {counts:?}"
    );
}

/// A repository that exists in JFrog is adopted by name (identifier strategy "name"): no
/// create is sent, the MR's spec is applied by an update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_repository_is_adopted_without_recreate() {
    let sb = Sandbox::start(SandboxOptions::new("adopt")).await;
    let body = json!({"key": "adopted-local", "rclass": "local", "packageType": "generic", "description": "created before Crossplane"});
    sb.sim.create_repository_rest("adopted-local", &body).await;
    sb.sim.reset_requests().await;

    let doc = local_generic("adopted-local", "adopted by Crossplane");
    sb.apply_ok(std::slice::from_ref(&doc));
    let mr = sb.mr_of(&doc);
    sb.wait_all_ready(std::slice::from_ref(&mr), CONVERGE).await;
    wait_for(
        "the adopted repository to carry the MR's description",
        CONVERGE,
        Duration::from_millis(500),
        || async {
            let r = sb.sim.repository("adopted-local").await?;
            (r["description"] == json!("adopted by Crossplane")).then_some(())
        },
    )
    .await;
    let counts = sb.sim.requests().await;
    println!("adoption requests: {counts:?}");
    assert_eq!(
        count(&counts, "PUT", REPO_ROUTE),
        0,
        "an existing repository must not be created again: {counts:?}"
    );
    assert_eq!(
        count(&counts, "DELETE", REPO_ROUTE),
        0,
        "nothing deleted: {counts:?}"
    );
    assert!(
        count(&counts, "POST", REPO_ROUTE) >= 1,
        "the spec is applied by an update: {counts:?}"
    );
    let obj = mr.try_get().await.expect("MR exists");
    assert_eq!(
        obj.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("crossplane.io/external-name"))
            .map(String::as_str),
        Some("adopted-local"),
        "the external name is the repository key"
    );
}

/// `managementPolicies: ["Observe"]` fills status.atProvider from JFrog and writes nothing,
/// even when the spec differs from JFrog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_only_fills_at_provider_and_writes_nothing() {
    let sb = Sandbox::start(SandboxOptions::new("observe")).await;
    let body = json!({"key": "observed-local", "rclass": "local", "packageType": "generic", "description": "owned by another team", "notes": "hands off"});
    sb.sim.create_repository_rest("observed-local", &body).await;
    sb.sim.reset_requests().await;

    let mut doc = local_generic("observed-local", "what Crossplane would want");
    doc["spec"]["managementPolicies"] = json!(["Observe"]);
    sb.apply_ok(std::slice::from_ref(&doc));
    let mr = sb.mr_of(&doc);
    let at_provider = wait_for(
        "status.atProvider to be filled",
        CONVERGE,
        Duration::from_millis(500),
        || async {
            let o = mr.try_get().await?;
            let synced = e2e::conditions(&o)
                .get("Synced")
                .is_some_and(|c| c.0 == "True");
            let at = o.data["status"]["atProvider"].clone();
            (synced && at["description"] == json!("owned by another team")).then_some(at)
        },
    )
    .await;
    println!("atProvider of the observed repository: {at_provider}");
    assert_eq!(
        at_provider["notes"],
        json!("hands off"),
        "atProvider maps JFrog's fields: {at_provider}"
    );

    let counts = wait_observed(&sb, 1, 2).await;
    println!("observe-only requests: {counts:?}");
    assert!(
        writes(&counts).is_empty(),
        "Observe-only must not write: {counts:?}"
    );
    let stored = sb
        .sim
        .repository("observed-local")
        .await
        .expect("still exists");
    assert_eq!(stored["description"], json!("owned by another team"));
    assert_eq!(
        mr.condition("Ready").await.map(|c| c.0),
        Some("True".to_string()),
        "an observed repository that exists is available"
    );
}

/// A spec JFrog rejects (a remote URL that is no URL; the CRD allows any string) gives
/// Synced=False with JFrog's message on the condition and in an event, and the retries back
/// off instead of hammering JFrog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_spec_reports_jfrogs_message_and_backs_off() {
    let doc = json!({
        "apiVersion": NAMESPACED, "kind": "RemoteGenericRepository",
        "metadata": {"name": "rejected-remote", "namespace": "default"},
        "spec": {"forProvider": {"url": "not-a-url", "description": "JFrog refuses this URL"}},
    });
    let dir = manifests_dir("rejected", std::slice::from_ref(&doc));
    let sb = Sandbox::start(SandboxOptions::new("rejected").apply(dir.path())).await;
    let mr = sb.mr_of(&doc);
    let jfrog_message = "Remote URL 'not-a-url' is not valid";
    let (status, reason, message) = mr
        .wait_condition(
            "Synced=False with JFrog's message",
            "Synced",
            "False",
            jfrog_message,
            CONVERGE,
        )
        .await;
    println!("Synced={status} reason={reason} message={message}");
    assert!(
        sb.sim.repository("rejected-remote").await.is_none(),
        "nothing was created"
    );
    wait_for(
        "an event carrying JFrog's message in kubectl describe",
        CONVERGE,
        Duration::from_secs(1),
        || async {
            let out = sb.kubectl_ok(&["describe", &mr.resource(), &mr.name, "-n", "default"]);
            out.contains(jfrog_message).then_some(())
        },
    )
    .await;
    let describe = sb.kubectl_ok(&["describe", &mr.resource(), &mr.name, "-n", "default"]);
    let events: Vec<&str> = describe
        .lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .collect();
    println!("{}", events.join("\n"));
    assert!(
        events.iter().any(|l| l.contains(jfrog_message)),
        "the Events section carries JFrog's message:\n{describe}"
    );

    // The window is a measurement of the retry rate: with an exponential back-off from 1 s
    // (doubling, capped at 60 s) that started at the first failure, a 20 s window sees at
    // most 5 create attempts (gaps of 1, 2, 4, 8 s, then 16 s); 8 leaves room for an extra
    // watch-triggered reconcile, not for a retry loop.
    sb.sim.reset_requests().await;
    let window = Duration::from_secs(20);
    tokio::time::sleep(window).await;
    let counts = sb.sim.requests().await;
    let creates = count(&counts, "PUT", REPO_ROUTE);
    let gets = count(&counts, "GET", REPO_ROUTE);
    println!("requests for the rejected repository over {window:?}: {counts:?}");
    assert!(
        creates >= 1,
        "the provider keeps retrying (with back-off): {counts:?}"
    );
    assert!(
        creates <= 8,
        "{creates} create attempts in {window:?}: retries must back off: {counts:?}"
    );
    assert!(
        gets <= 16,
        "{gets} observations in {window:?}: retries must back off: {counts:?}"
    );
    assert_eq!(
        mr.condition("Synced").await.map(|c| c.0),
        Some("False".to_string())
    );
}

/// 100 repositories applied at once all become Ready with the simulator's descriptor-merge
/// emulation on (overlapping configuration writes fail with HTTP 500) and a write latency,
/// each written by its own REST call (bulk repository writes off: they are what this
/// measures; the bulk path has its tests in provider-artifactory's `repository::bulk_tests`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_repositories_at_once_become_ready_with_descriptor_merge_emulation() {
    let sb =
        Sandbox::start(SandboxOptions::new("hundred").provider_arg("--bulk-repository-writes=off"))
            .await;
    sb.sim
        .put_config(json!({"descriptorMergeEmulation": true, "writeLatencyMs": 50}))
        .await;
    let config = sb.sim.config().await;
    assert_eq!(config["descriptorMergeEmulation"], json!(true), "{config}");
    assert_eq!(config["writeLatencyMs"], json!(50), "{config}");
    sb.sim.reset_requests().await;
    let docs: Vec<Value> = (0..100)
        .map(|i| local_generic(&format!("bulk-{i:03}"), &format!("bulk repository {i}")))
        .collect();
    let started = Instant::now();
    sb.apply_ok(&docs);
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    sb.wait_all_ready(&mrs, Duration::from_secs(480)).await;
    let counts = sb.sim.requests().await;
    println!(
        "100 repositories Ready and Synced {:.1}s after kubectl apply; requests: {counts:?}",
        started.elapsed().as_secs_f64()
    );
    for d in &docs {
        let key = d["metadata"]["name"].as_str().expect("name");
        let stored = sb
            .sim
            .repository(key)
            .await
            .unwrap_or_else(|| panic!("{key} exists in JFrog"));
        assert_eq!(
            stored["description"], d["spec"]["forProvider"]["description"],
            "{key}"
        );
    }
    let creates = count(&counts, "PUT", REPO_ROUTE);
    println!(
        "create requests for 100 repositories: {creates} (each above 100 is a retry after a failed write)"
    );
    assert!(creates >= 100, "{counts:?}");
}
