//! The provider packages as runtime images (issue 16): `cargo xtask package` builds each
//! image; a standard OCI tool (`skopeo`) reads it and `umoci` unpacks it; the entrypoint runs
//! in a chroot of the unpacked root filesystem as UID 2000 with only what a pod gets
//! (`KUBERNETES_SERVICE_HOST`/`PORT`, `POD_NAMESPACE`, the service-account token, CA and
//! namespace at `/var/run/secrets/kubernetes.io/serviceaccount/`) against the sandbox's
//! Kubernetes API test server and JFrog simulator; it takes its lease and makes an example
//! Ready.
//!
//! Needs root (chroot), `umoci` and `skopeo` (installed with apt-get when missing), so it is
//! ignored by `cargo test --workspace`. Run it with
//! `cargo test -p e2e --test e2e package:: -- --ignored --nocapture`; it builds the provider binaries
//! with the `provider` profile (`E2E_PROVIDER_PROFILE=debug` uses the debug binaries instead).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use e2e::{Sandbox, SandboxOptions, read_manifests, repo_root, sandbox_binary, temp_dir};

const CONVERGE: Duration = Duration::from_secs(240);

/// provider short name, an example it makes Ready.
const PROVIDERS: [(&str, &str); 4] = [
    ("artifactory", "artifactory/repository/local-generic.yaml"),
    ("xray", "xray/policy/security-policy.yaml"),
    ("project", "project/project/project.yaml"),
    ("platform", "platform/lifecycle/lifecycle-stage.yaml"),
];

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `umoci` and `skopeo`, from Debian's packages when missing.
fn ensure_tools() {
    if !have("umoci") || !have("skopeo") {
        run(Command::new("apt-get").args(["install", "-y", "umoci", "skopeo"]));
    }
}

/// A nested `cargo` with the environment cargo gave this test removed (the package's
/// `CARGO_PKG_*` and the like would change the fingerprints of the nested build and rebuild
/// everything).
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (k, _) in std::env::vars() {
        if (k.starts_with("CARGO_") && k != "CARGO_HOME" && k != "CARGO_TARGET_DIR")
            || k == "OUT_DIR"
        {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(repo_root());
    cmd
}

/// `target/<profile>` next to the `sandbox` binary's `target/debug`.
fn target_dir(profile: &str) -> PathBuf {
    sandbox_binary()
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join(profile)
}

/// The in-cluster wrapper `sandbox up --provider-bin` starts: it turns the provider's
/// kubeconfig into the service-account files a pod gets, then runs the image's entrypoint in
/// a chroot as UID 2000 with only a pod's environment.
fn wrapper(rootfs: &Path) -> String {
    let sa = rootfs.join("var/run/secrets/kubernetes.io/serviceaccount");
    format!(
        r#"#!/bin/sh
set -eu
SA='{sa}'
server=$(sed -n 's|^    server: https://||p' "$KUBECONFIG")
sed -n 's|^    certificate-authority-data: ||p' "$KUBECONFIG" | base64 -d > "$SA/ca.crt"
printf '%s' "$(sed -n 's|^    token: ||p' "$KUBECONFIG")" > "$SA/token"
printf '%s' crossplane-system > "$SA/namespace"
CHROOT=$(command -v chroot)
exec env -i KUBERNETES_SERVICE_HOST="${{server%:*}}" KUBERNETES_SERVICE_PORT="${{server##*:}}" \
  POD_NAMESPACE=crossplane-system \
  "$CHROOT" --userspec=2000:2000 '{root}' /usr/local/bin/provider "$@"
"#,
        sa = sa.display(),
        root = rootfs.display()
    )
}

/// A process's real UID and its root directory.
fn uid_and_root(pid: u32) -> (String, PathBuf) {
    let uid = testkit::proc_status(pid, "Uid").unwrap_or_default();
    let root = std::fs::read_link(format!("/proc/{pid}/root")).unwrap_or_default();
    (uid, root)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs root, umoci and skopeo; run on demand (see the package README)"]
async fn package_images_boot_in_a_chroot() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: the chroot boot test needs root");
        return;
    }
    ensure_tools();
    let profile = std::env::var("E2E_PROVIDER_PROFILE").unwrap_or_else(|_| "provider".into());
    let mut build = cargo();
    build.args(["build", "--profile", &profile]);
    for (p, _) in PROVIDERS {
        build.args(["-p", &format!("provider-{p}")]);
    }
    run(&mut build);
    let bins = target_dir(if profile == "dev" { "debug" } else { &profile });

    // Two builds: the same digests.
    let work = temp_dir("package");
    let mut outputs = Vec::new();
    for n in 0..2 {
        let out = work.join(format!("xpkg{n}"));
        outputs.push(run(cargo().args([
            "xtask",
            "package",
            "--binaries",
            bins.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ])));
    }
    eprintln!("{}", outputs[0]);
    let digests = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.split("manifest ").nth(1).map(str::to_string))
            .collect()
    };
    assert_eq!(digests(&outputs[0]).len(), 4, "{}", outputs[0]);
    assert_eq!(digests(&outputs[0]), digests(&outputs[1]), "digests differ");

    for (p, example) in PROVIDERS {
        let name = format!("provider-{p}");
        let oci = work.join("xpkg0").join(&name).join("oci");
        let image = format!("{}:{}", oci.display(), env!("CARGO_PKG_VERSION"));
        let inspect: serde_json::Value = serde_json::from_str(&run(
            Command::new("skopeo").args(["inspect", &format!("oci:{image}")])
        ))
        .expect("skopeo inspect JSON");
        assert_eq!(
            inspect["Layers"].as_array().map(Vec::len),
            Some(3),
            "{inspect}"
        );
        assert_eq!(
            inspect["Labels"]["org.opencontainers.image.title"],
            name.as_str()
        );
        let config: serde_json::Value = serde_json::from_str(&run(Command::new("skopeo").args([
            "inspect",
            "--config",
            &format!("oci:{image}"),
        ])))
        .expect("skopeo inspect --config JSON");
        assert_eq!(config["config"]["User"], "2000:2000");

        let bundle = work.join(format!("bundle-{p}"));
        run(Command::new("umoci")
            .args(["unpack", "--image", &image])
            .arg(&bundle));
        let rootfs = bundle.join("rootfs");
        assert!(rootfs.join("usr/local/bin/provider").is_file());

        let bin_dir = work.join(format!("bin-{p}"));
        std::fs::create_dir_all(&bin_dir).expect("bin dir");
        let script = bin_dir.join(&name);
        std::fs::write(&script, wrapper(&rootfs)).expect("write wrapper");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod wrapper");
        }

        // The sandbox waits until the provider holds its Lease.
        let sb = Sandbox::start(
            SandboxOptions::new(&format!("package-{p}"))
                .providers(p)
                .provider_bin(&bin_dir),
        )
        .await;
        let pid: u32 = std::fs::read_to_string(sb.dir.join(format!("providers/{name}.pid")))
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid");
        let (uid, root) = uid_and_root(pid);
        assert_eq!(uid, "2000", "{name} does not run as UID 2000");
        assert_eq!(
            root.canonicalize().ok(),
            rootfs.canonicalize().ok(),
            "{name} does not run in the image's root filesystem"
        );
        let manifest = read_manifests(&repo_root().join("examples").join(example))
            .into_iter()
            .next()
            .expect("example");
        sb.apply_ok(std::slice::from_ref(&manifest));
        sb.wait_all_ready(&[sb.mr_of(&manifest)], CONVERGE).await;
        let holder = sb.kubectl_ok(&[
            "get",
            "lease",
            "-n",
            "crossplane-system",
            &format!("crossplane-leader-election-{name}"),
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ]);
        let rss_kib: u64 = testkit::proc_status(pid, "VmRSS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        eprintln!(
            "{name}: booted from the image (pid {pid}, uid {uid}, root {}), lease holder {holder}, {} Ready, RSS {:.1} MiB",
            root.display(),
            example,
            rss_kib as f64 / 1024.0
        );
        sb.assert_running();
        drop(sb);
        let _ = std::fs::remove_dir_all(&bundle);
    }
    let _ = std::fs::remove_dir_all(&work);
}
