//! The `provider-artifactory` binary against the Kubernetes API test server, with the RBAC
//! Crossplane grants a provider (reference §15.4): it reports healthy, leads on its Lease,
//! serves metrics, starts a Kind's controller only after that Kind's CRD is applied (the
//! ClusterProviderConfig controller is the gated Kind here), and shuts down cleanly on
//! SIGTERM, releasing its Lease. Checklist item 107 (non-root runtime) runs it as UID 2000.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const USER: &str = "system:serviceaccount:crossplane-system:provider-artifactory";
const WAIT: Duration = Duration::from_secs(120);
const LEASE: &str = "crossplane-leader-election-provider-artifactory";
const CPC_CONTROLLER: &str = "providerconfig/clusterproviderconfig.artifactory.m.crossplane.io";
const PC_CONTROLLER: &str = "providerconfig/providerconfig.artifactory.m.crossplane.io";

async fn client_for(server: &kube_testserver::TestServer, token: &str) -> kube::Client {
    let kc = Kubeconfig::from_yaml(&server.kubeconfig(token)).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(cfg).expect("client")
}

async fn wait_for<T, F, Fut>(what: &str, child: &mut Child, log: &PathBuf, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "provider exited with {status} while waiting for {what}:\n{}",
                read_log(log)
            );
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}:\n{}",
            read_log(log)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn read_log(p: &PathBuf) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A plain HTTP/1.0 GET on loopback: (status, body).
async fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = tokio::net::TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .await
        .ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.ok()?;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Some((status, body))
}

fn crossplane_role(crds: &[Value]) -> Value {
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in crds {
        let g = c["spec"]["group"].as_str().unwrap_or_default().to_string();
        let p = c["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        by_group
            .entry(g)
            .or_default()
            .extend([p.clone(), format!("{p}/status")]);
    }
    let mut rules: Vec<Value> = by_group
        .iter()
        .map(|(g, r)| {
            json!({"apiGroups": [g], "resources": r,
                              "verbs": ["get", "list", "watch", "update", "patch", "create"]})
        })
        .collect();
    let groups: Vec<&String> = by_group.keys().collect();
    rules.push(json!({"apiGroups": groups, "resources": ["*/finalizers"], "verbs": ["update"]}));
    rules.push(json!({"apiGroups": [""], "resources": ["secrets", "configmaps", "events"], "verbs": ["*"]}));
    rules.push(
        json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}),
    );
    rules.push(
        json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
                      "verbs": ["get", "list", "watch"]}),
    );
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": "crossplane:provider:provider-artifactory:system"}, "rules": rules})
}

fn rbac_ar(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "rbac.authorization.k8s.io".into(),
        version: "v1".into(),
        api_version: "rbac.authorization.k8s.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

async fn install_crd(admin: &kube::Client, doc: &Value) {
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(doc.clone()).expect("CRD");
    api.create(&PostParams::default(), &crd)
        .await
        .expect("create CRD");
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
    let server = kube_testserver::TestServer::start(kube_testserver::Config::default())
        .await
        .expect("start test server");
    let admin = client_for(&server, &server.admin_token()).await;
    let crds: Vec<Value> = provider_artifactory::crds()
        .into_iter()
        .map(|c| c.document)
        .collect();
    let roles: Api<DynamicObject> =
        Api::all_with(admin.clone(), &rbac_ar("ClusterRole", "clusterroles"));
    let role: DynamicObject = serde_json::from_value(crossplane_role(&crds)).expect("role");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    let bindings: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &rbac_ar("ClusterRoleBinding", "clusterrolebindings"),
    );
    let b: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "crossplane:provider:provider-artifactory:system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "crossplane:provider:provider-artifactory:system"},
        "subjects": [{"kind": "User", "name": USER}]
    }))
    .expect("binding");
    bindings
        .create(&PostParams::default(), &b)
        .await
        .expect("binding");

    let config_group = |c: &Value| {
        let g = c["spec"]["group"].as_str().unwrap_or_default();
        g == "artifactory.m.crossplane.io" || g == "artifactory.crossplane.io"
    };
    let mut gated = Value::Null;
    for c in crds.iter().filter(|c| config_group(c)) {
        if c["spec"]["names"]["kind"] == "ClusterProviderConfig" {
            gated = c.clone();
        } else {
            install_crd(&admin, c).await;
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

    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "provider-artifactory-{tag}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
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
    install_crd(&setup.admin, &setup.gated).await;
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
    let cpc_ar = ApiResource {
        group: "artifactory.m.crossplane.io".into(),
        version: "v1beta1".into(),
        api_version: "artifactory.m.crossplane.io/v1beta1".into(),
        kind: "ClusterProviderConfig".into(),
        plural: "clusterproviderconfigs".into(),
    };
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
