//! The `provider-artifactory` binary against the Kubernetes API test server, with the RBAC
//! Crossplane grants a provider (docs/managed-reconciler.md §15.4): it reports healthy, leads on
//! its Lease, serves metrics, starts a Kind's controller only after that Kind's CRD is applied (the
//! ClusterProviderConfig controller is the gated Kind here), and shuts down cleanly on
//! SIGTERM, releasing its Lease. Checklist item 107 (non-root runtime) runs it as UID 2000.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DynamicObject, PostParams};
use serde_json::{Value, json};
use testkit::{free_port, http_get};

const USER: &str = "system:serviceaccount:crossplane-system:provider-artifactory";
const ROLE: &str = "crossplane:provider:provider-artifactory:system";
const WAIT: Duration = Duration::from_secs(120);
const LEASE: &str = "crossplane-leader-election-provider-artifactory";
const CPC_CONTROLLER: &str = "providerconfig/clusterproviderconfig.artifactory.m.crossplane.io";
const PC_CONTROLLER: &str = "providerconfig/providerconfig.artifactory.m.crossplane.io";

/// Waits for `f` (see [`testkit::wait_for_with`]); fails at once, with the provider's log,
/// when the provider exits meanwhile.
async fn wait_for<T, F, Fut>(what: &str, child: &mut Child, log: &Path, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    testkit::wait_for_with(
        what,
        WAIT,
        Duration::from_millis(200),
        || read_log(log),
        || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "provider exited with {status} while waiting for {what}:\n{}",
                    read_log(log)
                );
            }
            f()
        },
    )
    .await
}

fn read_log(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

struct Setup {
    server: kube_testserver::TestServer,
    admin: kube::Client,
    dir: PathBuf,
    gated: Value,
}

/// Test server with every artifactory config CRD but the ClusterProviderConfig one, the
/// provider's RBAC, a credentials Secret and a kubeconfig for the provider's token.
async fn setup(tag: &str) -> Setup {
    let server = testkit::start_kube_server().await;
    let admin = testkit::client_for(&server, &server.admin_token()).await;
    let crds: Vec<Value> = provider_artifactory::crds()
        .into_iter()
        .map(|c| c.document)
        .collect();
    testkit::grant(&admin, testkit::provider_role(ROLE, &crds, &[]), USER).await;

    let config_group = |c: &Value| {
        let g = c["spec"]["group"].as_str().unwrap_or_default();
        g == "artifactory.m.crossplane.io" || g == "artifactory.crossplane.io"
    };
    let mut gated = Value::Null;
    for c in crds.iter().filter(|c| config_group(c)) {
        if c["spec"]["names"]["kind"] == "ClusterProviderConfig" {
            gated = c.clone();
        } else {
            testkit::install_crd(&admin, c).await;
        }
    }
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "jfrog-creds", "namespace": "crossplane-system"},
        "stringData": {"credentials": "{\"url\":\"http://127.0.0.1:9\",\"access_token\":\"tok\"}"}
    }))
    .expect("secret");
    Api::<Secret>::namespaced(admin.clone(), "crossplane-system")
        .create(&PostParams::default(), &secret)
        .await
        .expect("secret");

    let dir = testkit::temp_dir(&format!("provider-artifactory-{tag}"));
    let token = server.issue_token(USER, &[]);
    std::fs::write(dir.join("kubeconfig"), server.kubeconfig(&token)).expect("kubeconfig");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777));
        let _ = std::fs::set_permissions(
            dir.join("kubeconfig"),
            std::fs::Permissions::from_mode(0o644),
        );
    }
    Setup {
        server,
        admin,
        dir,
        gated,
    }
}

fn spawn(
    setup: &Setup,
    metrics: u16,
    health: u16,
    extra: &[&str],
    as_uid: Option<u32>,
) -> (Child, PathBuf) {
    let log = setup.dir.join(format!("provider-{metrics}.log"));
    let log_file = std::fs::File::create(&log).expect("log file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o666));
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_provider-artifactory"));
    cmd.env_clear()
        .env("KUBECONFIG", setup.dir.join("kubeconfig"))
        .env("POD_NAMESPACE", "crossplane-system")
        .env("HOME", "/nonexistent")
        .env("RUST_LOG", "info")
        .current_dir("/")
        .arg(format!("--metrics-bind-address=127.0.0.1:{metrics}"))
        .arg(format!("--health-probe-bind-addr=127.0.0.1:{health}"))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file.try_clone().expect("log"));
    #[cfg(unix)]
    if let Some(uid) = as_uid {
        use std::os::unix::process::CommandExt;
        cmd.uid(uid).gid(uid);
    }
    (cmd.spawn().expect("spawn provider-artifactory"), log)
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("provider did not exit after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_is_healthy_leads_serves_metrics_and_gates_controllers_on_crds() {
    let setup = setup("main").await;
    let (metrics, health) = (free_port(), free_port());
    let (mut child, log) = spawn(
        &setup,
        metrics,
        health,
        &["--leader-election", "--debug"],
        None,
    );

    wait_for("/healthz", &mut child, &log, || async {
        let (s, body) = http_get(health, "/healthz").await?;
        (s == 200 && body.contains("ok")).then_some(())
    })
    .await;
    assert_eq!(http_get(health, "/readyz").await.map(|r| r.0), Some(200));

    let leases: Api<Lease> = Api::namespaced(setup.admin.clone(), "crossplane-system");
    let holder = wait_for("Lease held", &mut child, &log, || async {
        leases
            .get_opt(LEASE)
            .await
            .ok()??
            .spec?
            .holder_identity
            .filter(|h| !h.is_empty())
    })
    .await;
    let (_, uuid) = holder
        .rsplit_once('_')
        .expect("holder is <hostname>_<uuid>");
    assert_eq!(uuid.len(), 36, "{holder}");

    let text = wait_for(
        "metrics with the ProviderConfig controller",
        &mut child,
        &log,
        || async {
            let (s, body) = http_get(metrics, "/metrics").await?;
            (s == 200 && body.contains(PC_CONTROLLER)).then_some(body)
        },
    )
    .await;
    assert!(
        text.contains(&format!(
            "leader_election_master_status{{name=\"{LEASE}\"}} 1"
        )),
        "{text}"
    );
    // (Metric families without samples, such as the JFrog client's before any request, are
    // not printed by prometheus-client, so they cannot be checked here.)
    assert!(
        !text.contains(CPC_CONTROLLER),
        "no ClusterProviderConfig controller before its CRD"
    );

    // The gated Kind's CRD is applied: its controller starts and works.
    testkit::create_crd(&setup.admin, &setup.gated).await;
    wait_for(
        "ClusterProviderConfig controller started",
        &mut child,
        &log,
        || async {
            let (_, body) = http_get(metrics, "/metrics").await?;
            body.contains(CPC_CONTROLLER).then_some(())
        },
    )
    .await;
    let cpc_ar = testkit::api_resource(
        "artifactory.m.crossplane.io",
        "v1beta1",
        "ClusterProviderConfig",
        "clusterproviderconfigs",
    );
    let cpcs: Api<DynamicObject> = Api::all_with(setup.admin.clone(), &cpc_ar);
    let cpc: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "artifactory.m.crossplane.io/v1beta1", "kind": "ClusterProviderConfig",
        "metadata": {"name": "default"},
        "spec": {"credentials": {"source": "Secret", "secretRef":
            {"namespace": "crossplane-system", "name": "jfrog-creds", "key": "credentials"}}}
    }))
    .expect("cpc");
    wait_for(
        "ClusterProviderConfig accepted",
        &mut child,
        &log,
        || async { cpcs.create(&PostParams::default(), &cpc).await.ok() },
    )
    .await;
    wait_for(
        "in-use finalizer on the config",
        &mut child,
        &log,
        || async {
            let c = cpcs.get("default").await.ok()?;
            c.metadata
                .finalizers?
                .iter()
                .any(|f| f == "in-use.crossplane.io")
                .then_some(())
        },
    )
    .await;

    let status = terminate(&mut child);
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        read_log(&log)
    );
    let spec = leases.get(LEASE).await.expect("lease").spec.expect("spec");
    assert!(
        spec.holder_identity.unwrap_or_default().is_empty(),
        "lease released on shutdown"
    );
    assert!(!read_log(&log).contains("tok\""), "no credentials in logs");
    setup.server.shutdown().await;
    let _ = std::fs::remove_dir_all(&setup.dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_107_non_root_runtime() {
    let setup = setup("nonroot").await;
    let (metrics, health) = (free_port(), free_port());
    // As UID/GID 2000 when the test runs as root (as Crossplane runs providers); otherwise as
    // the current non-root user. The process gets no writable HOME and cwd `/`.
    let uid = (Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        == Some("0".to_string()))
    .then_some(2000);
    let (mut child, log) = spawn(&setup, metrics, health, &[], uid);
    wait_for("/healthz", &mut child, &log, || async {
        (http_get(health, "/healthz").await?.0 == 200).then_some(())
    })
    .await;
    wait_for("/metrics", &mut child, &log, || async {
        let (s, body) = http_get(metrics, "/metrics").await?;
        (s == 200 && body.contains("controller_runtime_max_concurrent_reconciles")).then_some(())
    })
    .await;
    if let Some(uid) = uid {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let line = status
            .lines()
            .find(|l| l.starts_with("Uid:"))
            .unwrap_or_default()
            .to_string();
        assert!(
            line.split_whitespace().nth(1) == Some(&uid.to_string()),
            "{line}"
        );
    }
    let status = terminate(&mut child);
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        read_log(&log)
    );
    setup.server.shutdown().await;
    let _ = std::fs::remove_dir_all(&setup.dir);
}

/// Checklist item 106 with the real binary: of two replicas only the Lease holder runs
/// controllers; killing it (no release) makes the other take over after the lease expires.
/// Lease timings are shortened through the hidden test flags.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_only_the_leader_runs_controllers() {
    let setup = setup("replicas").await;
    let timings = [
        "--leader-election",
        "--leader-election-lease-duration=4s",
        "--leader-election-renew-deadline=3s",
        "--leader-election-retry-period=500ms",
    ];
    let (m1, h1, m2, h2) = (free_port(), free_port(), free_port(), free_port());
    let (mut first, log1) = spawn(&setup, m1, h1, &timings, None);
    let leases: Api<Lease> = Api::namespaced(setup.admin.clone(), "crossplane-system");
    wait_for("first replica leads", &mut first, &log1, || async {
        leases
            .get_opt(LEASE)
            .await
            .ok()??
            .spec?
            .holder_identity
            .filter(|h| !h.is_empty())
    })
    .await;
    let (mut second, log2) = spawn(&setup, m2, h2, &timings, None);
    // Both serve health and metrics; only the leader runs controllers.
    wait_for("second replica healthy", &mut second, &log2, || async {
        (http_get(h2, "/healthz").await?.0 == 200).then_some(())
    })
    .await;
    wait_for("leader runs controllers", &mut first, &log1, || async {
        http_get(m1, "/metrics")
            .await?
            .1
            .contains(PC_CONTROLLER)
            .then_some(())
    })
    .await;
    // Give the follower several retry periods: it must stay idle.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let follower = http_get(m2, "/metrics").await.expect("follower metrics").1;
    assert!(
        !follower.contains(PC_CONTROLLER),
        "follower runs no controller:\n{follower}"
    );
    assert!(!follower.contains(&format!(
        "leader_election_master_status{{name=\"{LEASE}\"}} 1"
    )));

    // Kill the leader without a graceful release.
    let _ = first.kill();
    let _ = first.wait();
    wait_for("follower takes over", &mut second, &log2, || async {
        http_get(m2, "/metrics")
            .await?
            .1
            .contains(PC_CONTROLLER)
            .then_some(())
    })
    .await;
    let text = http_get(m2, "/metrics").await.expect("metrics").1;
    assert!(
        text.contains(&format!(
            "leader_election_master_status{{name=\"{LEASE}\"}} 1"
        )),
        "{text}"
    );
    let status = terminate(&mut second);
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        read_log(&log2)
    );
    setup.server.shutdown().await;
    let _ = std::fs::remove_dir_all(&setup.dir);
}

/// With every Kind's CRD installed (about 430 watches, over four times the 100 concurrent
/// streams per connection that kube-apiserver allows and the test server enforces), every
/// controller's watch is served, the reconcilers' requests go through and the Lease keeps
/// being renewed: the watches are spread over connections of their own and the leader
/// election has another (on one shared connection the requests past the 100th stream wait
/// forever and the Lease is lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_is_watched_and_the_lease_renewed_past_the_stream_limit() {
    let setup = setup("streams").await;
    let managed: Vec<Value> = provider_artifactory::crds()
        .into_iter()
        .map(|c| c.document)
        .filter(|c| {
            let g = c["spec"]["group"].as_str().unwrap_or_default();
            g != "artifactory.m.crossplane.io" && g != "artifactory.crossplane.io"
        })
        .collect();
    assert!(managed.len() > 400, "{} managed CRDs", managed.len());
    testkit::install_crds(&setup.admin, &managed).await;
    let (metrics, health) = (free_port(), free_port());
    let (mut child, log) = spawn(
        &setup,
        metrics,
        health,
        &[
            "--leader-election",
            "--leader-election-lease-duration=6s",
            "--leader-election-renew-deadline=4s",
            "--leader-election-retry-period=1s",
        ],
        None,
    );
    wait_for(
        "every managed controller started",
        &mut child,
        &log,
        || async {
            let (_, body) = http_get(metrics, "/metrics").await?;
            let started = body
                .lines()
                .filter(|l| l.starts_with("controller_runtime_max_concurrent_reconciles{"))
                .count();
            (started >= managed.len()).then_some(())
        },
    )
    .await;

    // Observe-only MRs of the first, a middle and the last namespaced repository Kind (whose
    // empty parameters are valid): each is seen by its controller's watch and gets a
    // condition written back (no ProviderConfig exists, so Synced=False).
    let namespaced: Vec<&Value> = managed
        .iter()
        .filter(|c| {
            c["spec"]["scope"] == "Namespaced"
                && c["spec"]["group"] == "repository.artifactory.m.crossplane.io"
        })
        .collect();
    let picks = [
        namespaced[0],
        namespaced[namespaced.len() / 2],
        namespaced[namespaced.len() - 1],
    ];
    for crd in picks {
        let (group, kind, plural) = (
            crd["spec"]["group"].as_str().expect("group"),
            crd["spec"]["names"]["kind"].as_str().expect("kind"),
            crd["spec"]["names"]["plural"].as_str().expect("plural"),
        );
        let ar = testkit::api_resource(group, "v1alpha1", kind, plural);
        let api: Api<DynamicObject> = Api::namespaced_with(setup.admin.clone(), "default", &ar);
        let mr: DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1alpha1"), "kind": kind,
            "metadata": {"name": "stream-test", "namespace": "default"},
            "spec": {"managementPolicies": ["Observe"], "forProvider": {}}
        }))
        .expect("mr");
        api.create(&PostParams::default(), &mr)
            .await
            .unwrap_or_else(|e| panic!("create {kind}: {e}"));
        wait_for(&format!("{kind} reconciled"), &mut child, &log, || async {
            let o = api.get("stream-test").await.ok()?;
            let n = o.data["status"]["conditions"].as_array()?.len();
            (n > 0).then_some(())
        })
        .await;
    }

    // The Lease keeps being renewed, several lease durations past the start of every watch.
    let leases: Api<Lease> = Api::namespaced(setup.admin.clone(), "crossplane-system");
    let renewed = || async { leases.get(LEASE).await.ok()?.spec?.renew_time.map(|t| t.0) };
    let mut last = renewed().await.expect("a renewed Lease");
    for _ in 0..3 {
        last = wait_for("the Lease renewed again", &mut child, &log, || async {
            renewed().await.filter(|t| *t > last)
        })
        .await;
    }
    assert!(
        !read_log(&log).contains("leader election lost"),
        "{}",
        read_log(&log)
    );
    let status = terminate(&mut child);
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        read_log(&log)
    );
    setup.server.shutdown().await;
    let _ = std::fs::remove_dir_all(&setup.dir);
}

/// `--help` names the provider, its own flag beside the shared ones and its Kinds; a bad
/// value of its own flag is refused by the same parser as the shared ones (exit status 2).
#[test]
fn help_shows_the_providers_own_flags_and_kinds() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_provider-artifactory"))
            .args(args)
            .env_clear()
            .output()
            .expect("run the binary")
    };
    let help = run(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.starts_with("Crossplane provider for JFrog Artifactory"),
        "{text}"
    );
    for want in [
        "--bulk-repository-writes <auto|on|off>",
        "--poll <POLL>",
        "LocalGenericRepository (repository.artifactory.m.crossplane.io/v1alpha1",
        "provider-artifactory export --help",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }
    let bad = run(&["--bulk-repository-writes=sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("expected auto, on or off"), "{err}");
}
