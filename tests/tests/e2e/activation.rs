//! Managed-resource activation (issue 16), as Crossplane v2 does it with a
//! ManagedResourceActivationPolicy: `sandbox up --activate PATTERN` installs only the matching
//! managed-resource CRDs (and every provider's configuration CRDs); `sandbox activate` installs
//! more into the running sandbox, and the provider (safe-start) starts their controllers
//! without a restart.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use e2e::{Sandbox, SandboxOptions, read_manifests, repo_root, sandbox_binary};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::ListParams;

const CONVERGE: Duration = Duration::from_secs(240);
const REPOSITORIES: &str = "repository.artifactory.m.crossplane.io";
const WEBHOOKS: &str = "webhook.artifactory.m.crossplane.io";

/// The groups of the installed CRDs, with how many CRDs each.
async fn installed_groups(sb: &Sandbox) -> Vec<(String, usize)> {
    let api: Api<CustomResourceDefinition> = Api::all(sb.client.clone());
    let mut groups: std::collections::BTreeMap<String, usize> = Default::default();
    for crd in api
        .list(&ListParams::default())
        .await
        .expect("list CRDs")
        .items
    {
        *groups.entry(crd.spec.group).or_default() += 1;
    }
    groups.into_iter().collect()
}

/// How many CRDs of `crds/` are in `group`.
fn crds_in_group(group: &str) -> usize {
    let mut n = 0;
    for dir in std::fs::read_dir(repo_root().join("crds"))
        .expect("crds/")
        .flatten()
    {
        for f in std::fs::read_dir(dir.path())
            .expect("crds/<provider>")
            .flatten()
        {
            let text = std::fs::read_to_string(f.path()).expect("read CRD");
            if text.contains(&format!("\n  group: {group}\n")) {
                n += 1;
            }
        }
    }
    n
}

/// A provider configuration group (`artifactory.m.crossplane.io`, `xray.crossplane.io`, ...).
fn is_config_group(group: &str) -> bool {
    ["artifactory", "xray", "project", "platform"]
        .iter()
        .any(|p| group == format!("{p}.m.crossplane.io") || group == format!("{p}.crossplane.io"))
}

/// The PID and resident memory (KiB) of a provider of the sandbox.
fn provider_pid_rss(sb: &Sandbox, provider: &str) -> (u32, u64) {
    let pid: u32 = std::fs::read_to_string(sb.dir.join(format!("providers/{provider}.pid")))
        .expect("provider pid file")
        .trim()
        .parse()
        .expect("pid");
    (
        pid,
        testkit::proc_status(pid, "VmRSS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    )
}

fn example(path: &str) -> serde_json::Value {
    read_manifests(&repo_root().join("examples").join(path))
        .into_iter()
        .next()
        .expect("an example")
}

#[tokio::test(flavor = "multi_thread")]
async fn activation_installs_only_the_active_crds_and_activating_more_needs_no_restart() {
    let mut sb = Sandbox::start(SandboxOptions::new("activation").activate(REPOSITORIES)).await;

    // Only the repository CRDs, and the configuration CRDs of every provider.
    let groups = installed_groups(&sb).await;
    for (group, _) in &groups {
        assert!(
            group == REPOSITORIES || is_config_group(group),
            "CRD group {group} installed though not activated: {groups:?}"
        );
    }
    let repositories = groups
        .iter()
        .find(|(g, _)| g == REPOSITORIES)
        .map_or(0, |(_, n)| *n);
    assert_eq!(repositories, crds_in_group(REPOSITORIES));
    assert!(repositories > 100, "{repositories} repository CRDs");

    // A repository becomes Ready.
    let repo = example("artifactory/repository/local-generic.yaml");
    sb.apply_ok(std::slice::from_ref(&repo));
    sb.wait_all_ready(&[sb.mr_of(&repo)], CONVERGE).await;

    // A webhook cannot be applied: its Kind is not served.
    let webhook = example("artifactory/webhook/artifact-webhook.yaml");
    let (ok, out) = sb.apply(std::slice::from_ref(&webhook));
    assert!(
        !ok,
        "a webhook was accepted before its CRD was activated: {out}"
    );

    let (pid, rss_one) = provider_pid_rss(&sb, "provider-artifactory");
    let crds_one: usize = groups.iter().map(|(_, n)| n).sum();

    // Activate the webhooks in the running sandbox.
    let out = Command::new(sandbox_binary())
        .arg("activate")
        .arg("--state-dir")
        .arg(&sb.dir)
        .arg(WEBHOOKS)
        .output()
        .expect("run sandbox activate");
    assert!(
        out.status.success(),
        "sandbox activate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    sb.reload_crds().await;
    let after = installed_groups(&sb).await;
    let webhooks = after
        .iter()
        .find(|(g, _)| g == WEBHOOKS)
        .map_or(0, |(_, n)| *n);
    assert_eq!(webhooks, crds_in_group(WEBHOOKS));

    // The running provider starts the webhook controllers: the example becomes Ready.
    sb.apply_ok(std::slice::from_ref(&webhook));
    sb.wait_all_ready(&[sb.mr_of(&webhook)], CONVERGE).await;
    let (pid_after, rss_two) = provider_pid_rss(&sb, "provider-artifactory");
    assert_eq!(pid, pid_after, "the provider was restarted");
    let names: BTreeSet<&str> = after.iter().map(|(g, _)| g.as_str()).collect();
    assert!(names.contains(WEBHOOKS) && names.contains(REPOSITORIES));
    eprintln!(
        "activation figures (debug build): {crds_one} CRDs with {REPOSITORIES} active, provider-artifactory RSS {rss_one} KiB; \
         +{webhooks} CRDs after activating {WEBHOOKS}, RSS {rss_two} KiB"
    );
    sb.assert_running();
}

/// The figures of the package README: API server CRDs and idle provider-artifactory RSS with
/// one group active versus everything. Run on demand:
/// `cargo test -p e2e --test e2e activation:: -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "measurement, run on demand"]
async fn activation_figures() {
    for activate in [Some(REPOSITORIES), None] {
        let mut opts = SandboxOptions::new("activation-figures");
        // The size-optimised binaries a package ships, when built
        // (`cargo build --profile provider -p provider-artifactory`).
        let shipped = sandbox_binary()
            .parent()
            .and_then(Path::parent)
            .map(|t| t.join("provider"))
            .filter(|d| d.join("provider-artifactory").is_file());
        if let Some(dir) = &shipped {
            opts = opts.provider_bin(dir);
        }
        if let Some(a) = activate {
            opts = opts.activate(a);
        }
        let sb = Sandbox::start(opts).await;
        // Let the provider settle (controllers started, caches filled).
        tokio::time::sleep(Duration::from_secs(20)).await;
        let groups = installed_groups(&sb).await;
        let crds: usize = groups.iter().map(|(_, n)| n).sum();
        let (_, rss) = provider_pid_rss(&sb, "provider-artifactory");
        let api: Api<CustomResourceDefinition> = Api::all(sb.client.clone());
        let bytes =
            serde_json::to_vec(&api.list(&ListParams::default()).await.expect("list").items)
                .expect("json")
                .len();
        eprintln!(
            "active {:<40} CRDs {crds:>4} ({:.1} MiB of CRD objects), provider-artifactory RSS {:.1} MiB ({})",
            activate.unwrap_or("everything"),
            bytes as f64 / 1048576.0,
            rss as f64 / 1024.0,
            shipped.as_ref().map_or(
                "the sandbox's built-in debug copy".to_string(),
                |d| format!("{}/provider-artifactory", d.display())
            )
        );
    }
}
