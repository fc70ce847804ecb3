//! End-to-end tests of `sandbox up`: the built binary, its embedded servers and its four
//! provider child processes, driven as a user would (exit status, summary output, `kubectl`
//! against the state dir's kubeconfig, Ctrl-C/SIGTERM, no orphaned provider processes).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testkit::{ChildGuard, alive, env_value, kubectl, kubectl_ok, run_with_deadline};

/// Generous: a debug build on a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(600);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn temp_dir(tag: &str) -> PathBuf {
    testkit::temp_dir(&format!("sandbox-test-{tag}"))
}

fn sandbox() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandbox"));
    c.env_remove("RUST_LOG").env_remove("KUBECONFIG");
    c
}

fn wait_until(what: &str, f: impl FnMut() -> bool) {
    testkit::wait_until(what, WAIT, Duration::from_millis(250), f);
}

/// A small manifest directory: a namespace and three repositories (two namespaced, one legacy).
fn write_manifests(dir: &Path) {
    std::fs::create_dir_all(dir.join("more")).unwrap();
    std::fs::write(
        dir.join("repos.yaml"),
        r#"apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
apiVersion: repository.artifactory.m.crossplane.io/v1alpha1
kind: LocalGenericRepository
metadata:
  name: test-local-generic
  namespace: team-a
spec:
  forProvider:
    description: "from the sandbox test"
  providerConfigRef:
    kind: ClusterProviderConfig
    name: default
---
apiVersion: repository.artifactory.m.crossplane.io/v1alpha1
kind: RemoteNPMRepository
metadata:
  name: test-remote-npm
  namespace: team-a
spec:
  forProvider:
    url: https://registry.npmjs.org
  providerConfigRef:
    kind: ClusterProviderConfig
    name: default
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("more/legacy.yml"),
        r#"apiVersion: repository.artifactory.crossplane.io/v1alpha1
kind: LocalMavenRepository
metadata:
  name: test-legacy-maven
spec:
  forProvider:
    description: "legacy scope"
  providerConfigRef:
    name: default
"#,
    )
    .unwrap();
}

fn pids(state: &Path) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(state.join("providers")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) == Some("pid") {
            let pid = std::fs::read_to_string(&p).unwrap().trim().parse().unwrap();
            out.push((p.file_stem().unwrap().to_string_lossy().into_owned(), pid));
        }
    }
    out.sort();
    out
}

#[test]
fn once_applies_manifests_and_examples_and_exits_zero() {
    let tmp = temp_dir("once");
    let state = tmp.join("state");
    let manifests = tmp.join("manifests");
    write_manifests(&manifests);
    let examples = repo_root().join("examples/artifactory/repository");
    let mut cmd = sandbox();
    cmd.args([
        "up",
        "--once",
        "--timeout",
        "300s",
        "--poll",
        "10s",
        "--state-dir",
    ])
    .arg(&state)
    .arg("--apply")
    .arg(&manifests)
    .arg("--apply")
    .arg(examples.join("local-go.yaml"))
    .arg("--apply")
    .arg(examples.join("legacy/local-generic.yaml"));
    let out = run_with_deadline(cmd, WAIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(stdout.contains("Summary after"), "{stdout}");
    assert!(
        stdout.contains(
            "applied managed resources: 5 total, 5 Ready and Synced, 0 not yet (0 of them failing)"
        ),
        "{stdout}"
    );
    let row = |group: &str| {
        stdout
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| {
                w.first() == Some(&"provider-artifactory") && w[1..w.len() - 4].join(" ") == group
            })
            .unwrap_or_else(|| panic!("no row for {group}:\n{stdout}"))
            .iter()
            .rev()
            .take(4)
            .rev()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(row("repository"), ["3", "3", "3", "0"], "{stdout}");
    assert_eq!(row("repository (legacy)"), ["2", "2", "2", "0"], "{stdout}");
    // The state dir: admin kubeconfig, the simulator's env file; `ready` is gone after exit.
    assert!(
        std::fs::read_to_string(state.join("kubeconfig"))
            .unwrap()
            .contains("server: https://127.0.0.1:")
    );
    let env = std::fs::read_to_string(state.join("jfrog.env")).unwrap();
    assert!(
        env.contains("JFROG_URL=http://127.0.0.1:") && env.contains("JFROG_ACCESS_TOKEN="),
        "{env}"
    );
    assert!(!state.join("ready").exists());
    for (name, pid) in pids(&state) {
        assert!(
            !alive(pid),
            "{name} (pid {pid}) still runs after the sandbox exited"
        );
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn once_fails_when_a_manifest_is_rejected() {
    let tmp = temp_dir("reject");
    let manifests = tmp.join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    std::fs::write(
        manifests.join("bad.yaml"),
        r#"apiVersion: example.org/v1
kind: NoSuchKind
metadata:
  name: nothing
---
apiVersion: repository.artifactory.m.crossplane.io/v1alpha1
kind: LocalGenericRepository
metadata:
  name: no-config-name
  namespace: default
spec:
  forProvider: {}
  providerConfigRef:
    kind: ClusterProviderConfig
"#,
    )
    .unwrap();
    let mut cmd = sandbox();
    cmd.args([
        "up",
        "--once",
        "--timeout",
        "300s",
        "--providers",
        "artifactory",
        "--apply",
    ])
    .arg(&manifests);
    let out = run_with_deadline(cmd, WAIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("manifests not applied: 2"), "{stdout}");
    assert!(stdout.contains("NoSuchKind nothing"), "{stdout}");
    assert!(
        stdout.contains("LocalGenericRepository default/no-config-name"),
        "{stdout}"
    );
    assert!(
        stdout.contains("spec.providerConfigRef.name"),
        "the server's schema message is shown: {stdout}"
    );
    assert!(
        stderr.contains("2 manifests could not be applied"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn kubectl_works_while_running_a_killed_provider_restarts_and_sigterm_stops_everything() {
    let tmp = temp_dir("run");
    let state = tmp.join("state");
    let manifests = tmp.join("manifests");
    write_manifests(&manifests);
    let mut cmd = sandbox();
    cmd.args(["up", "--poll", "10s", "--state-dir"])
        .arg(&state)
        .arg("--apply")
        .arg(&manifests);
    let log = std::fs::File::create(tmp.join("sandbox.out")).unwrap();
    let mut child = ChildGuard(
        cmd.stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let output = || std::fs::read_to_string(tmp.join("sandbox.out")).unwrap_or_default();
    wait_until("the ready file", || {
        assert!(
            child.try_wait().unwrap().is_none(),
            "sandbox exited early:\n{}",
            output()
        );
        state.join("ready").exists()
    });
    let kc = state.join("kubeconfig");
    let configs = kubectl_ok(&kc, &["get", "clusterproviderconfigs"]);
    for p in ["artifactory", "xray", "project", "platform"] {
        let out = kubectl_ok(
            &kc,
            &[
                "get",
                &format!("clusterproviderconfigs.{p}.m.crossplane.io"),
                "default",
                "-o",
                "jsonpath={.spec.url}",
            ],
        );
        assert!(out.starts_with("http://127.0.0.1:"), "{p}: {out}");
        kubectl_ok(
            &kc,
            &[
                "get",
                &format!("providerconfigs.{p}.crossplane.io"),
                "default",
            ],
        );
    }
    assert!(configs.contains("default"), "{configs}");
    // The providers run with their own, restricted identity: none may delete a CRD.
    let pkc = state.join("providers/provider-artifactory.kubeconfig");
    let can = kubectl(
        &pkc,
        &["auth", "can-i", "delete", "customresourcedefinitions"],
    );
    assert_eq!(String::from_utf8_lossy(&can.stdout).trim(), "no");
    wait_until("the summary", || {
        assert!(
            child.try_wait().unwrap().is_none(),
            "sandbox exited early:\n{}",
            output()
        );
        output().contains("Summary after")
    });
    let managed = kubectl_ok(&kc, &["get", "managed", "-A"]);
    for name in ["test-local-generic", "test-remote-npm", "test-legacy-maven"] {
        assert!(
            managed.contains(name),
            "{name} missing from `kubectl get managed`:\n{managed}"
        );
    }
    let wide = kubectl_ok(
        &kc,
        &[
            "get",
            "localgenericrepositories.repository.artifactory.m.crossplane.io",
            "-n",
            "team-a",
            "-o",
            "wide",
        ],
    );
    let header: Vec<&str> = wide
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        &header[..5],
        ["NAME", "SYNCED", "READY", "EXTERNAL-NAME", "AGE"],
        "{wide}"
    );
    assert!(
        wide.lines()
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .eq(["test-local-generic", "True", "True"]),
        "{wide}"
    );

    let described = kubectl_ok(
        &kc,
        &[
            "describe",
            "localgenericrepositories.repository.artifactory.m.crossplane.io",
            "-n",
            "team-a",
            "test-local-generic",
        ],
    );
    for expected in ["Conditions:", "Available", "ReconcileSuccess", "Events:"] {
        assert!(
            described.contains(expected),
            "{expected:?} missing from `kubectl describe`:\n{described}"
        );
    }

    // A provider that exits on its own is started again, as a Deployment's pod would be, and
    // goes on reconciling: a repository applied after the exit becomes Ready. (SIGTERM, so
    // that it hands its leader Lease back; after a SIGKILL the new process waits out the
    // Lease, 60 s as in Crossplane, which the fault suite measures.)
    let pid_of = |name: &str| {
        pids(&state)
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
            .unwrap()
    };
    let crashed = pid_of("provider-artifactory");
    let killed = sandbox()
        .args(["provider-kill", "artifactory", "--term", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    assert!(
        killed.status.success(),
        "{}",
        String::from_utf8_lossy(&killed.stderr)
    );
    wait_until("provider-artifactory to be restarted", || {
        assert!(
            child.try_wait().unwrap().is_none(),
            "sandbox exited when a provider was killed:\n{}",
            output()
        );
        output().contains("provider-artifactory restarted")
    });
    assert!(
        output().contains("provider-artifactory exited unexpectedly (exit status: 0)"),
        "{}",
        output()
    );
    let restarted = pid_of("provider-artifactory");
    assert_ne!(restarted, crashed);
    assert!(alive(restarted) && !alive(crashed));
    let after = tmp.join("after-restart.yaml");
    std::fs::write(
        &after,
        r#"apiVersion: repository.artifactory.m.crossplane.io/v1alpha1
kind: LocalGenericRepository
metadata:
  name: after-restart
  namespace: team-a
spec:
  forProvider: {}
  providerConfigRef:
    kind: ClusterProviderConfig
    name: default
"#,
    )
    .unwrap();
    kubectl_ok(&kc, &["apply", "-f", after.to_str().unwrap()]);
    wait_until(
        "the repository applied after the restart to be Ready",
        || {
            kubectl_ok(
                &kc,
                &[
                    "get",
                    "localgenericrepositories.repository.artifactory.m.crossplane.io",
                    "-n",
                    "team-a",
                    "after-restart",
                    "-o",
                    "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
                ],
            ) == "True"
        },
    );

    let provider_pids = pids(&state);
    assert_eq!(provider_pids.len(), 4, "{provider_pids:?}");
    assert!(
        provider_pids.iter().all(|(_, pid)| alive(*pid)),
        "{provider_pids:?}"
    );
    // SAFETY: kill(2) on the child we started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < WAIT,
            "sandbox did not stop on SIGTERM:\n{}",
            output()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(status.success(), "exit {status:?}:\n{}", output());
    for (name, pid) in provider_pids {
        assert!(!alive(pid), "{name} (pid {pid}) outlived the sandbox");
    }
    assert!(
        output().contains("provider-artifactory stopped"),
        "{}",
        output()
    );
    assert!(!state.join("ready").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn providers_die_with_a_killed_sandbox() {
    let tmp = temp_dir("kill");
    let state = tmp.join("state");
    let mut cmd = sandbox();
    cmd.args(["up", "--no-apply", "--state-dir"]).arg(&state);
    let mut child = ChildGuard(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the ready file", || {
        assert!(child.try_wait().unwrap().is_none(), "sandbox exited early");
        state.join("ready").exists()
    });
    let provider_pids = pids(&state);
    assert_eq!(provider_pids.len(), 4);
    child.kill().unwrap();
    child.wait().unwrap();
    for (name, pid) in provider_pids {
        wait_until(
            &format!("{name} (pid {pid}) to exit after its parent was killed"),
            || !alive(pid),
        );
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// The issue's acceptance run: every example of `examples/` Ready and Synced, exit 0.
/// Polled every 15 s: Xray's reports are Ready once generated, and the simulator
/// advances a generation one step per read, so at the default 1 m poll the last ones took
/// 2 more minutes (the test ran 234 s, now 74 s).
#[test]
fn once_over_all_examples() {
    let mut cmd = sandbox();
    cmd.args([
        "up",
        "--once",
        "--timeout",
        "480s",
        "--poll",
        "15s",
        "--jfrog-latency-ms",
        "5",
    ]);
    let out = run_with_deadline(cmd, WAIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("applied managed resources:"))
        .unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(numbers.len() == 4 && numbers[0] > 0, "{line}");
    assert_eq!(
        numbers[0], numbers[1],
        "not every example is Ready and Synced: {line}\n{stdout}"
    );
    assert!(!stdout.contains("manifests not applied"), "{stdout}");
    assert!(
        stderr.contains("applying") && stderr.contains("examples"),
        "{stderr}"
    );
}

/// `--kubeconfig` and `--jfrog-url`/`--jfrog-token-file`: no embedded server, the given
/// cluster and platform (here a `sandbox kube` and a `sandbox jfrog` in other processes).
#[test]
fn once_against_an_external_cluster_and_platform() {
    let tmp = temp_dir("external");
    let kube_dir = tmp.join("kube");
    let jfrog_dir = tmp.join("jfrog");
    let kube = ChildGuard(
        sandbox()
            .args(["kube", "--state-dir"])
            .arg(&kube_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let jfrog = ChildGuard(
        sandbox()
            .args(["jfrog", "--state-dir"])
            .arg(&jfrog_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the external servers' state files", || {
        kube_dir.join("kubeconfig").exists() && jfrog_dir.join("jfrog.env").exists()
    });
    let env = std::fs::read_to_string(jfrog_dir.join("jfrog.env")).unwrap();
    let value = |key: &str| env_value(&env, key);
    std::fs::write(tmp.join("token"), value("JFROG_ACCESS_TOKEN")).unwrap();
    let manifests = tmp.join("manifests");
    write_manifests(&manifests);
    let state = tmp.join("state");
    let mut cmd = sandbox();
    cmd.args(["up", "--once", "--timeout", "300s", "--state-dir"])
        .arg(&state)
        .arg("--apply")
        .arg(&manifests)
        .arg("--kubeconfig")
        .arg(kube_dir.join("kubeconfig"))
        .args(["--jfrog-url", &value("JFROG_URL")])
        .arg("--jfrog-token-file")
        .arg(tmp.join("token"));
    let out = run_with_deadline(cmd, WAIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(stdout.contains("3 total, 3 Ready and Synced"), "{stdout}");
    assert!(
        !stderr.contains("Kubernetes API test server:") && !stderr.contains("JFrog simulator:"),
        "{stderr}"
    );
    // The objects stay in the external cluster after the sandbox is gone.
    let managed = kubectl_ok(&state.join("kubeconfig"), &["get", "managed", "-A"]);
    assert!(
        managed.contains("test-local-generic") && managed.contains("test-legacy-maven"),
        "{managed}"
    );
    drop((kube, jfrog));
    std::fs::remove_dir_all(&tmp).unwrap();
}
