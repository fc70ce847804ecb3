//! End-to-end test of `preview` (issue 28) over every provider's examples, against a
//! simulator seeded by applying them (a sandbox running the four providers):
//!
//! 1. the unchanged examples preview (with the sandbox's cluster) as all `no change`,
//!    exit 0; without the cluster as `adopt` (or `create` for the server-assigned Kinds,
//!    which a manifest alone cannot name); 0 JFrog writes in both;
//! 2. after editing the description of two repositories and a webhook, adding two
//!    repositories and a second MR of a singleton, the preview lists exactly those three
//!    updates (with the field path, old -> new), two creates and one blocked singleton, exit
//!    2, 0 writes; in text, markdown and JSON, none holding a secret value of the examples;
//! 3. applying the same manifests makes exactly the writes the preview listed (simulator
//!    counts per route), the second singleton stays blocked, and once it is deleted a second
//!    preview is all `no change` again;
//! 4. the `UpdatedExternalResource` events name the changed field: "changed
//!    forProvider.description" for the edit, "reverted drift in forProvider.description
//!    made outside Crossplane" for a change made in JFrog.
//!
//! `cargo build -p sandbox && cargo test -p e2e --test e2e preview:: -- --nocapture`

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::{Sandbox, SandboxOptions, read_manifests, repo_root, sandbox_binary};
use serde_json::{Value, json};

const PROVIDERS: &str = "artifactory,xray,project,platform";
const EDITED_REPOS: [&str; 2] = ["example-local-generic", "example-remote-npm"];
const EDITED_HOOK: &str = "example-artifact-custom-webhook";
const NEW_REPOS: [&str; 2] = ["preview-new-generic", "preview-new-maven"];
const SECOND_SINGLETON: &str = "preview-second-user-lock-policy";

/// Requests that only read though sent as `POST` (Xray's reports search, the Catalog's
/// GraphQL queries, the AQL search for item properties): the running providers poll with
/// them.
const READING_POSTS: [&str; 3] = [
    "POST /xray/api/v1/reports",
    "POST /catalog/api/v1/custom/graphql",
    "POST /artifactory/api/search/aql",
];

/// The writes among request counts (the providers keep polling meanwhile; their polls
/// write nothing, so any write counted would be the preview's or the apply's).
fn writes(counts: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    e2e::writes(counts)
        .into_iter()
        .filter(|(r, _)| !READING_POSTS.contains(&r.as_str()))
        .collect()
}

/// `sandbox preview --state-dir DIR [extra] -f FILE --format F`: (exit code, stdout).
fn preview(sb: &Sandbox, file: &Path, format: &str, extra: &[&str]) -> (i32, String) {
    let o = Command::new(sandbox_binary())
        .args(["preview", "--state-dir"])
        .arg(&sb.dir)
        .args(extra)
        .arg("--")
        .arg("-f")
        .arg(file)
        .args(["--format", format])
        .output()
        .expect("run sandbox preview");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let code = o.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 2,
        "sandbox preview failed ({code}):\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (code, stdout)
}

/// `sandbox preview --state-dir DIR -- --all-namespaces --format json`: the cluster's
/// MRs as they are (exit code, stdout).
fn preview_cluster(sb: &Sandbox) -> (i32, String) {
    let o = Command::new(sandbox_binary())
        .args(["preview", "--state-dir"])
        .arg(&sb.dir)
        .args(["--", "--all-namespaces", "--format", "json"])
        .output()
        .expect("run sandbox preview");
    let code = o.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        code == 0 || code == 2,
        "sandbox preview failed ({code}):\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (code, stdout)
}

/// The JSON reports of every provider (one document each), merged: items and totals.
fn reports(text: &str) -> (Vec<Value>, u64, f64) {
    let mut items = Vec::new();
    let (mut requests, mut seconds) = (0, 0.0);
    for de in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let r = de.expect("a JSON report");
        assert_eq!(r["writes"], 0, "{r}");
        requests += r["requests"].as_u64().unwrap_or(0);
        seconds += r["seconds"].as_f64().unwrap_or(0.0);
        items.extend(r["items"].as_array().cloned().unwrap_or_default());
    }
    (items, requests, seconds)
}

/// The items that are not `no change`, in full (for failure messages).
fn not_unchanged(items: &[Value]) -> Vec<&Value> {
    items
        .iter()
        .filter(|i| i["action"] != "no change")
        .collect()
}

fn by_action(items: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in items {
        out.entry(i["action"].as_str().unwrap_or("").to_string())
            .or_default()
            .push(format!(
                "{} {}",
                i["kind"].as_str().unwrap_or(""),
                i["name"].as_str().unwrap_or("")
            ));
    }
    out
}

/// Every value of the examples' Secrets.
fn secret_values(docs: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for d in docs.iter().filter(|d| d["kind"] == "Secret") {
        for key in ["stringData", "data"] {
            if let Some(m) = d[key].as_object() {
                out.extend(
                    m.values()
                        .filter_map(Value::as_str)
                        .filter(|v| v.len() >= 6)
                        .map(str::to_string),
                );
            }
        }
    }
    out
}

fn write_docs(path: &Path, docs: &[Value]) {
    let text: Vec<String> = docs
        .iter()
        .map(|d| format!("---\n{}\n", serde_json::to_string_pretty(d).unwrap()))
        .collect();
    std::fs::write(path, text.concat()).unwrap();
}

async fn events_of(sb: &Sandbox, name: &str) -> Vec<String> {
    let api: kube::Api<k8s_openapi::api::core::v1::Event> =
        kube::Api::namespaced(sb.client.clone(), "default");
    let list = api
        .list(&kube::api::ListParams::default())
        .await
        .expect("list events");
    list.items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .filter(|e| e.reason.as_deref() == Some("UpdatedExternalResource"))
        .filter_map(|e| e.message)
        .collect()
}

async fn wait_event(sb: &Sandbox, name: &str, part: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(m) = events_of(sb, name)
            .await
            .into_iter()
            .find(|m| m.contains(part))
        {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "no UpdatedExternalResource event of {name} with {part:?}: {:?}",
            events_of(sb, name).await
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn preview_lists_exactly_what_applying_does() {
    let root = repo_root().join("examples");
    // Every example of every provider: none may fight another (two MRs of two providers
    // with different settings for one JFrog object would show as an update here).
    let examples: Vec<Value> = PROVIDERS
        .split(',')
        .flat_map(|p| read_manifests(&root.join(p)))
        .collect();
    let seed = e2e::TempDir::new("preview-seed");
    write_docs(&seed.path().join("examples.yaml"), &examples);
    let opts = SandboxOptions::new("preview")
        .providers(PROVIDERS)
        .poll(Duration::from_secs(5))
        .apply(seed.path());
    let sb = Sandbox::start(opts).await;
    let managed: Vec<&Value> = examples
        .iter()
        .filter(|d| {
            d["apiVersion"].as_str().is_some_and(|a| {
                a.contains(".m.crossplane.io/")
                    || a.split('/').next().is_some_and(|g| {
                        g.matches('.').count() >= 3 && g.ends_with(".crossplane.io")
                    })
            })
        })
        .collect();
    let mrs: Vec<_> = managed.iter().map(|d| sb.mr_of(d)).collect();
    let started = Instant::now();
    sb.wait_all_ready(&mrs, Duration::from_secs(420)).await;
    eprintln!(
        "{} example MRs Ready and Synced after {:.0}s",
        mrs.len(),
        started.elapsed().as_secs_f64()
    );
    let secrets = secret_values(&examples);
    assert!(!secrets.is_empty(), "the examples carry Secrets");
    let dir = e2e::TempDir::new("preview-manifests");
    let unchanged = dir.path().join("unchanged.yaml");
    write_docs(&unchanged, &examples);

    // 1. Unchanged: all no change with the cluster, exit 0; no write.
    sb.sim.reset_requests().await;
    let t = Instant::now();
    let (code, out) = preview(&sb, &unchanged, "json", &[]);
    let wall = t.elapsed();
    let (items, requests, seconds) = reports(&out);
    let actions = by_action(&items);
    assert_eq!(
        actions.keys().collect::<Vec<_>>(),
        ["no change"],
        "unchanged examples with the cluster: {:#?}",
        not_unchanged(&items)
    );
    assert_eq!(items.len(), mrs.len(), "every example MR previewed once");
    assert_eq!(code, 0);
    let counts = sb.sim.requests().await;
    assert!(
        writes(&counts).is_empty(),
        "preview wrote: {:?}",
        writes(&counts)
    );
    eprintln!(
        "preview of {} example MRs (4 providers, with the cluster): {requests} JFrog requests, {seconds:.2}s in the previews, {:.2}s wall with 4 processes",
        items.len(),
        wall.as_secs_f64()
    );
    // Without the cluster: adopt, or create for what a manifest alone cannot name.
    sb.sim.reset_requests().await;
    let (code, out) = preview(&sb, &unchanged, "json", &["--no-cluster"]);
    let (items, requests, _) = reports(&out);
    let actions = by_action(&items);
    eprintln!(
        "without the cluster ({requests} requests): {:?}",
        actions
            .iter()
            .map(|(a, l)| (a, l.len()))
            .collect::<Vec<_>>()
    );
    // Without the cluster nothing is recorded: an object with a write-only secret would be
    // sent its secret once (an update naming only secrets, "(set)"); what a manifest alone
    // cannot name (server-assigned IDs, tokens) would be created.
    assert!(
        actions
            .keys()
            .all(|a| ["adopt", "create", "update"].contains(&a.as_str())),
        "{actions:#?}"
    );
    for i in items.iter().filter(|i| i["action"] == "update") {
        let changes = i["changes"].as_array().expect("changes");
        assert!(
            !changes.is_empty()
                && changes
                    .iter()
                    .all(|c| c["kind"] == "secretSet" && c.get("new").is_none()),
            "{i}"
        );
    }
    assert!(actions["adopt"].len() > mrs.len() / 2, "{actions:#?}");
    assert_eq!(code, if actions.contains_key("create") { 2 } else { 0 });
    assert!(writes(&sb.sim.requests().await).is_empty());

    // 2. Edited, added, a second singleton.
    let mut changed = examples.clone();
    for d in &mut changed {
        let name = d["metadata"]["name"].as_str().unwrap_or("").to_string();
        let kind = d["kind"].as_str().unwrap_or("");
        let edited = [
            "LocalGenericRepository",
            "RemoteNPMRepository",
            "ArtifactCustomWebhook",
        ]
        .contains(&kind)
            && d["apiVersion"].as_str().is_some_and(|a| a.contains(".m."));
        if edited && (EDITED_REPOS.contains(&name.as_str()) || name == EDITED_HOOK) {
            d["spec"]["forProvider"]["description"] =
                json!(format!("{name} edited in a pull request"));
        }
    }
    let base = examples
        .iter()
        .find(|d| {
            d["metadata"]["name"] == "example-local-generic"
                && d["kind"] == "LocalGenericRepository"
        })
        .unwrap()
        .clone();
    for (n, kind) in NEW_REPOS
        .iter()
        .zip(["LocalGenericRepository", "LocalMavenRepository"])
    {
        let mut d = base.clone();
        d["kind"] = json!(kind);
        d["metadata"]["name"] = json!(n);
        d["spec"]["forProvider"] = json!({"description": format!("{n} added in a pull request")});
        changed.push(d);
    }
    let mut second = examples
        .iter()
        .find(|d| d["kind"] == "UserLockPolicy")
        .expect("the UserLockPolicy example")
        .clone();
    second["metadata"]["name"] = json!(SECOND_SINGLETON);
    changed.push(second.clone());
    let edited = dir.path().join("edited.yaml");
    write_docs(&edited, &changed);
    sb.sim.reset_requests().await;
    let (code, out) = preview(&sb, &edited, "json", &[]);
    assert_eq!(code, 2);
    let (items, _, _) = reports(&out);
    let actions = by_action(&items);
    let mut want_updates = vec![
        "LocalGenericRepository example-local-generic".to_string(),
        "RemoteNPMRepository example-remote-npm".to_string(),
        format!("ArtifactCustomWebhook {EDITED_HOOK}"),
    ];
    want_updates.sort();
    let mut got_updates = actions.get("update").cloned().unwrap_or_default();
    got_updates.sort();
    assert_eq!(got_updates, want_updates, "{actions:#?}");
    assert_eq!(
        actions.get("create").cloned().unwrap_or_default(),
        [
            format!("LocalGenericRepository {}", NEW_REPOS[0]),
            format!("LocalMavenRepository {}", NEW_REPOS[1])
        ],
        "{actions:#?}"
    );
    assert_eq!(
        actions.get("blocked").cloned().unwrap_or_default(),
        [format!("UserLockPolicy {SECOND_SINGLETON}")],
        "{actions:#?}"
    );
    assert_eq!(items.len(), mrs.len() + 3, "{actions:#?}");
    assert_eq!(
        actions["no change"].len(),
        mrs.len() - 3,
        "everything else unchanged: {actions:#?}"
    );
    for i in items.iter().filter(|i| i["action"] == "update") {
        let name = i["name"].as_str().unwrap();
        assert_eq!(
            i["changes"],
            json!([{
                "path": "forProvider.description",
                "kind": "update",
                "old": examples.iter().find(|d| d["metadata"]["name"] == name && d["kind"] == i["kind"]).unwrap()["spec"]["forProvider"]["description"],
                "new": format!("{name} edited in a pull request"),
            }]),
            "{i}"
        );
    }
    let blocked = items.iter().find(|i| i["action"] == "blocked").unwrap();
    assert!(
        blocked["message"]
            .as_str()
            .unwrap()
            .contains("already managed by default/example-user-lock-policy"),
        "{blocked}"
    );
    for i in items.iter().filter(|i| i["action"] == "create") {
        assert_eq!(
            i["create"]["description"],
            json!(format!(
                "{} added in a pull request",
                i["name"].as_str().unwrap()
            )),
            "{i}"
        );
    }
    let (_, text) = preview(&sb, &edited, "text", &[]);
    let (_, markdown) = preview(&sb, &edited, "markdown", &[]);
    eprintln!("--- text ---\n{text}\n--- markdown ---\n{markdown}");
    assert!(text.contains("~ forProvider.description: \"Local generic repository managed by Crossplane\" -> \"example-local-generic edited in a pull request\""), "{text}");
    assert!(
        markdown.contains("#### update `default/example-local-generic` LocalGenericRepository"),
        "{markdown}"
    );
    for s in &secrets {
        for (format, o) in [("json", &out), ("text", &text), ("markdown", &markdown)] {
            assert!(
                !o.contains(s.as_str()),
                "{format} output shows a secret value"
            );
        }
    }
    let counts = sb.sim.requests().await;
    assert!(
        writes(&counts).is_empty(),
        "preview wrote: {:?}",
        writes(&counts)
    );

    // 3. Apply the same manifests: exactly the listed writes.
    sb.sim.reset_requests().await;
    let applied: Vec<Value> = changed
        .iter()
        .filter(|d| !examples.contains(d))
        .cloned()
        .collect();
    sb.apply_ok(&applied);
    let touched: Vec<_> = applied
        .iter()
        .filter(|d| d["metadata"]["name"] != SECOND_SINGLETON)
        .map(|d| sb.mr_of(d))
        .collect();
    sb.wait_all_ready(&touched, Duration::from_secs(180)).await;
    let second_mr = sb.mr_of(&second);
    second_mr
        .wait_condition(
            "the second singleton refused",
            "Synced",
            "False",
            "already managed by",
            Duration::from_secs(120),
        )
        .await;
    for name in EDITED_REPOS.iter().chain([&EDITED_HOOK]) {
        let m = wait_event(&sb, name, "changed forProvider.description").await;
        assert_eq!(
            m,
            "Successfully requested update of external resource: changed forProvider.description"
        );
    }
    // Two more polls of the repositories: no further write.
    let counts = sb
        .wait_observed_rounds("repository lists", 2, |c| {
            e2e::count(c, "GET", "/artifactory/api/repositories/configurations")
        })
        .await;
    let w = writes(&counts);
    eprintln!("writes after the apply: {w:?}");
    // Exactly the listed writes: two repository updates (Artifactory updates by POST), two
    // repository creates (PUT), one webhook update; the blocked singleton wrote nothing.
    let want: BTreeMap<String, u64> = [
        ("POST /artifactory/api/repositories/{key}", 2),
        ("PUT /artifactory/api/repositories/{key}", 2),
        ("PUT /event/api/v1/subscriptions/{key}", 1),
    ]
    .into_iter()
    .map(|(r, n)| (r.to_string(), n))
    .collect();
    assert_eq!(w, want);

    // The second singleton deleted: the next preview is all no change.
    sb.delete_and_wait_gone(&[second_mr], Duration::from_secs(60))
        .await;
    let without_second: Vec<Value> = changed
        .iter()
        .filter(|d| d["metadata"]["name"] != SECOND_SINGLETON)
        .cloned()
        .collect();
    let again = dir.path().join("again.yaml");
    write_docs(&again, &without_second);
    sb.sim.reset_requests().await;
    let (code, out) = preview(&sb, &again, "json", &[]);
    let (items, _, _) = reports(&out);
    let actions = by_action(&items);
    assert_eq!(
        actions.keys().collect::<Vec<_>>(),
        ["no change"],
        "{actions:#?}"
    );
    assert_eq!(code, 0);
    assert!(writes(&sb.sim.requests().await).is_empty());

    // Cluster mode: the cluster's MRs as they are, all in sync; then a paused MR edited in
    // the cluster previews as what its first reconcile after unpausing would do.
    let (code, out) = preview_cluster(&sb);
    let (items, requests, seconds) = reports(&out);
    let actions = by_action(&items);
    assert_eq!(
        actions.keys().collect::<Vec<_>>(),
        ["no change"],
        "{:#?}",
        not_unchanged(&items)
    );
    assert_eq!(
        items.len(),
        mrs.len() + NEW_REPOS.len(),
        "every MR of the cluster"
    );
    assert_eq!(code, 0);
    eprintln!(
        "cluster mode: {} MRs, {requests} JFrog requests, {seconds:.2}s",
        items.len()
    );
    let maven = examples
        .iter()
        .find(|d| d["kind"] == "LocalMavenRepository" && d["metadata"]["namespace"] == "default")
        .expect("a namespaced LocalMavenRepository example");
    let maven_mr = sb.mr_of(maven);
    maven_mr
        .api
        .patch(
            &maven_mr.name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({
                "metadata": {"annotations": {"crossplane.io/paused": "true"}},
                "spec": {"forProvider": {"description": "edited while paused"}},
            })),
        )
        .await
        .expect("pause and edit");
    sb.sim.reset_requests().await;
    let (code, out) = preview_cluster(&sb);
    let (items, _, _) = reports(&out);
    let paused: Vec<&Value> = not_unchanged(&items);
    assert_eq!(paused.len(), 1, "{paused:#?}");
    assert_eq!(paused[0]["action"], "update");
    assert_eq!(paused[0]["name"], maven_mr.name.as_str());
    assert_eq!(paused[0]["changes"][0]["path"], "forProvider.description");
    assert_eq!(paused[0]["changes"][0]["new"], "edited while paused");
    assert!(
        paused[0]["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("paused"),
        "{}",
        paused[0]
    );
    assert_eq!(code, 2);
    assert!(writes(&sb.sim.requests().await).is_empty());

    // 4. Drift made in JFrog: reverted, and the event says so.
    let key = EDITED_REPOS[0];
    let mut repo = sb.sim.repository(key).await.expect("the repository");
    repo["description"] = json!("changed in the JFrog UI");
    sb.sim.put_repository(key, &repo).await;
    let m = wait_event(&sb, key, "reverted drift").await;
    assert_eq!(
        m,
        "Successfully requested update of external resource: reverted drift in forProvider.description made outside Crossplane"
    );
}
