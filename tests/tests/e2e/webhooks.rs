//! End-to-end tests of the webhook Kinds (issue 11), driving the real provider process
//! through `sandbox up` as a user would: manifests applied by the sandbox or `kubectl`, state
//! read with kube-rs and `kubectl`, JFrog's side read and changed through the Event service's
//! REST API with the admin token (as a JFrog admin would, in the UI or with curl).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use e2e::{
    Mr, Sandbox, SandboxOptions, SimAdmin, count, manifests_dir, read_manifests, repo_root,
    wait_for, writes,
};
use serde_json::{Value, json};

const CONVERGE: Duration = Duration::from_secs(240);
const NAMESPACED: &str = "webhook.artifactory.m.crossplane.io/v1alpha1";
const LEGACY: &str = "webhook.artifactory.crossplane.io/v1alpha1";
const ROUTE: &str = "/event/api/v1/subscriptions";
const ROUTE_KEY: &str = "/event/api/v1/subscriptions/{key}";

/// The Event service's REST API with the sandbox's admin token.
struct Events<'a>(&'a SimAdmin);

impl Events<'_> {
    fn of(sb: &Sandbox) -> Events<'_> {
        Events(&sb.sim)
    }

    async fn get(&self, key: &str) -> Option<Value> {
        self.0.rest_get(&format!("{ROUTE}/{key}")).await
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: &Value) {
        self.0.rest_send(method, path, body).await
    }
}

/// Waits `rounds` poll intervals and until the provider has read the subscription list at
/// least `rounds` times since the last reset; returns the counts.
async fn wait_polls(sb: &Sandbox, rounds: u64) -> BTreeMap<String, u64> {
    sb.wait_observed_rounds("polls", rounds, |counts| {
        count(counts, "GET", ROUTE) + count(counts, "GET", ROUTE_KEY)
    })
    .await
}

fn artifact_webhook(name: &str, description: &str) -> Value {
    json!({
        "apiVersion": NAMESPACED, "kind": "ArtifactWebhook",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"forProvider": {
            "description": description,
            "eventTypes": ["deployed"],
            "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}],
            "handler": [{"url": "https://hooks.example.com/jfrog"}],
        }},
    })
}

/// Every example (both scopes) becomes Ready and Synced; two more polls send no write; a
/// change made in JFrog is reverted by the next poll; a custom webhook's secrets (from a
/// Secret) reach JFrog and nothing else: not the MR, not an event, not a log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn examples_converge_stay_quiet_and_revert_drift_without_leaking_secrets() {
    const SECRET_VALUE: &str = "s3cr3t-webhook-value-7f2a";
    const SIGNING_VALUE: &str = "signing-key-value-91cd";
    let examples = repo_root().join("examples/artifactory/webhook");
    let mut docs = read_manifests(&examples);
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "webhook-secrets", "namespace": "default"},
        "stringData": {"token": SECRET_VALUE, "signing": SIGNING_VALUE},
    });
    let custom = json!({
        "apiVersion": NAMESPACED, "kind": "ArtifactCustomWebhook",
        "metadata": {"name": "custom-with-secrets", "namespace": "default"},
        "spec": {"forProvider": {
            "eventTypes": ["deployed", "deleted"],
            "criteria": [{"anyLocal": true, "anyRemote": true, "anyFederated": false, "repoKeys": []}],
            "handler": [{
                "url": "https://hooks.example.com/custom",
                "method": "POST",
                "secretsSecretRef": {"name": "webhook-secrets"},
                "httpHeaders": {"Authorization": "Bearer {{.secrets.token}}"},
                "payload": "{\"event\": \"{{.type}}\"}",
            }],
        }},
    });
    let signed = json!({
        "apiVersion": NAMESPACED, "kind": "DockerWebhook",
        "metadata": {"name": "signed-docker", "namespace": "default"},
        "spec": {"forProvider": {
            "eventTypes": ["pushed"],
            "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}],
            "handler": [{
                "url": "https://hooks.example.com/signed",
                "secretSecretRef": {"name": "webhook-secrets", "key": "signing"},
                "useSecretForSigning": true,
            }],
        }},
    });
    let extra = manifests_dir("webhook-extra", &[secret, custom.clone(), signed.clone()]);
    let sb = Sandbox::start(
        SandboxOptions::new("webhooks")
            .apply(&examples)
            .apply(extra.path()),
    )
    .await;
    docs.push(custom.clone());
    docs.push(signed.clone());
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    let kinds: std::collections::BTreeSet<&str> = mrs.iter().map(|m| m.kind.as_str()).collect();
    println!("webhook MRs applied: {} ({} Kinds)", mrs.len(), kinds.len());
    assert_eq!(kinds.len(), 24, "every webhook Kind has an example");
    let started = Instant::now();
    sb.wait_all_ready(&mrs, Duration::from_secs(480)).await;
    println!(
        "all {} Ready and Synced in {:.1}s; requests: {:?}",
        mrs.len(),
        started.elapsed().as_secs_f64(),
        sb.sim.requests().await
    );

    // No perpetual diff: two more polls, no write.
    sb.sim.reset_requests().await;
    let counts = wait_polls(&sb, 2).await;
    println!("requests during two polls: {counts:?}");
    assert!(
        writes(&counts).is_empty(),
        "perpetual diff: {:?}",
        writes(&counts)
    );

    // A change made in JFrog is reverted within a poll.
    let events = Events::of(&sb);
    let key = "example-docker-webhook";
    let mut stored = events.get(key).await.expect("the subscription exists");
    stored["description"] = json!("changed in the JFrog UI");
    events
        .send(reqwest::Method::PUT, &format!("{ROUTE}/{key}"), &stored)
        .await;
    sb.sim.reset_requests().await;
    wait_for(
        "the drift to be reverted",
        CONVERGE,
        Duration::from_millis(500),
        || async {
            let s = events.get(key).await?;
            (s["description"] != json!("changed in the JFrog UI")).then_some(())
        },
    )
    .await;
    let counts = sb.sim.requests().await;
    assert_eq!(
        count(&counts, "PUT", ROUTE_KEY),
        1,
        "one update: {counts:?}"
    );

    // Secrets: sent to JFrog (the simulator keeps them), never shown back.
    for mr in [sb.mr_of(&custom), sb.mr_of(&signed)] {
        let o = mr.try_get().await.expect("MR");
        let text = serde_json::to_string(&o).expect("json");
        assert!(
            !text.contains(SECRET_VALUE) && !text.contains(SIGNING_VALUE),
            "secret in the MR: {text}"
        );
        assert!(
            o.data["status"]["atProvider"]["appliedWriteOnlyHashes"].is_object()
                || o.metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key("jfrog.crossplane.io/write-only-hashes")),
            "write-only hashes recorded: {text}"
        );
    }
    let events_out = sb.kubectl_ok(&["get", "events", "-A", "-o", "json"]);
    assert!(!events_out.contains(SECRET_VALUE) && !events_out.contains(SIGNING_VALUE));
    let logs = sb.logs();
    assert!(!logs.contains(SECRET_VALUE) && !logs.contains(SIGNING_VALUE));
    let all_logs: String = std::fs::read_dir(&sb.dir)
        .expect("state dir")
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "log" || x == "err" || x == "out")
        })
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        !all_logs.contains(SECRET_VALUE) && !all_logs.contains(SIGNING_VALUE),
        "a secret value in the logs"
    );
    let listed = sb.kubectl_ok(&[
        "get",
        "artifactcustomwebhooks.webhook.artifactory.m.crossplane.io",
        "-A",
        "-o",
        "yaml",
    ]);
    assert!(!listed.contains(SECRET_VALUE));
}

/// Deleting deletes unless orphaned; an existing subscription is adopted by key with no
/// create; Observe-only writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_orphan_adopt_and_observe_only() {
    let sb = Sandbox::start(SandboxOptions::new("webhook-lifecycle")).await;
    let events = Events::of(&sb);
    let existing = |key: &str, description: &str| {
        json!({
            "key": key, "description": description, "enabled": true,
            "event_filter": {"domain": "artifact", "event_types": ["deployed"],
                "criteria": {"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}},
            "handlers": [{"handler_type": "webhook", "url": "https://hooks.example.com/jfrog"}],
        })
    };
    for (key, description) in [
        ("adopted-hook", "made before Crossplane"),
        ("observed-hook", "owned by another team"),
    ] {
        events
            .send(reqwest::Method::POST, ROUTE, &existing(key, description))
            .await;
    }
    sb.sim.reset_requests().await;

    let mut kept = artifact_webhook("kept-hook", "kept: no Delete policy");
    kept["spec"]["managementPolicies"] = json!(["Observe", "Create", "Update", "LateInitialize"]);
    let mut orphan = json!({
        "apiVersion": LEGACY, "kind": "ArtifactWebhook",
        "metadata": {"name": "orphan-hook"},
        "spec": {"deletionPolicy": "Orphan", "providerConfigRef": {"name": "default"}, "forProvider": {
            "eventTypes": ["deployed"],
            "criteria": [{"anyLocal": true, "anyRemote": false, "anyFederated": false, "repoKeys": []}],
            "handler": [{"url": "https://hooks.example.com/jfrog"}],
        }},
    });
    orphan["spec"]["forProvider"]["description"] = json!("kept: deletionPolicy Orphan");
    let mut observed = artifact_webhook("observed-hook", "what Crossplane would want");
    observed["spec"]["managementPolicies"] = json!(["Observe"]);
    let docs = [
        artifact_webhook("deleted-hook", "deleted with its MR"),
        kept,
        orphan,
        artifact_webhook("adopted-hook", "adopted by Crossplane"),
        observed,
    ];
    let (ok, out) = sb.apply(&docs);
    assert!(ok, "{out}");
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    sb.wait_all_ready(&mrs, CONVERGE).await;
    let counts = sb.sim.requests().await;
    assert_eq!(
        count(&counts, "POST", ROUTE),
        3,
        "three creates, none for the adopted and observed subscriptions: {counts:?}"
    );
    assert_eq!(
        events.get("adopted-hook").await.expect("adopted")["description"],
        json!("adopted by Crossplane")
    );
    let observed_mr = &mrs[4];
    let o = observed_mr.try_get().await.expect("observed MR");
    assert_eq!(
        o.data["status"]["atProvider"]["description"],
        json!("owned by another team"),
        "atProvider from JFrog"
    );
    assert_eq!(
        events.get("observed-hook").await.expect("observed")["description"],
        json!("owned by another team"),
        "Observe-only writes nothing"
    );

    sb.delete_and_wait_gone(&mrs[..3], CONVERGE).await;
    assert!(
        events.get("deleted-hook").await.is_none(),
        "deleted with its MR"
    );
    assert!(
        events.get("kept-hook").await.is_some(),
        "no Delete policy keeps it"
    );
    assert!(events.get("orphan-hook").await.is_some(), "Orphan keeps it");
}

/// Invalid manifests: an event type of another domain and criteria breaking the domain's
/// rule are refused at admission; a key JFrog would refuse gives Synced=False naming the
/// rule, with no write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_webhooks_are_refused_before_any_write() {
    let sb = Sandbox::start(SandboxOptions::new("webhook-invalid")).await;
    let mut bad_event = artifact_webhook("bad-event", "event of another domain");
    bad_event["spec"]["forProvider"]["eventTypes"] = json!(["pushed"]);
    let (ok, out) = sb.apply(&[bad_event]);
    assert!(!ok, "an event type of another domain is refused: {out}");
    assert!(out.contains("eventTypes"), "{out}");
    println!("refused at admission: {}", out.trim());

    let mut bad_criteria = artifact_webhook("bad-criteria", "nothing to watch");
    bad_criteria["spec"]["forProvider"]["criteria"] =
        json!([{"anyLocal": false, "anyRemote": false, "anyFederated": false, "repoKeys": []}]);
    let (ok, out) = sb.apply(&[bad_criteria]);
    assert!(!ok, "criteria without any repository are refused: {out}");
    assert!(out.contains("repoKeys"), "{out}");
    println!("refused at admission: {}", out.trim());

    let mut bad_key = artifact_webhook("bad-key", "a one-character key");
    bad_key["metadata"]["annotations"] = json!({"crossplane.io/external-name": "x"});
    sb.sim.reset_requests().await;
    let (ok, out) = sb.apply(std::slice::from_ref(&bad_key));
    assert!(ok, "{out}");
    let mr = sb.mr_of(&bad_key);
    let (_, reason, message) = mr
        .wait_condition(
            "Synced=False naming the key rule",
            "Synced",
            "False",
            "2 to 200 characters",
            CONVERGE,
        )
        .await;
    println!("Synced=False reason={reason} message={message}");
    let counts = sb.sim.requests().await;
    assert!(writes(&counts).is_empty(), "no write: {counts:?}");
}
