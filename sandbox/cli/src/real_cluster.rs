//! `sandbox real-cluster up|down`: a real Kubernetes control plane on loopback (etcd,
//! kube-apiserver, kube-controller-manager; no kubelet), built from the pinned Go modules of
//! `sandbox/real-lane/components`.
//!
//! `up` builds the three binaries into `<target>/real-lane/bin` when they are missing or the pins
//! (`go.mod`, `go.sum`) changed, generates a throwaway CA, serving and client certificates and
//! the service-account signing key, starts the components as detached processes (pid files and
//! logs in the state directory), waits until the API server is ready and the controller manager
//! has created the `default` ServiceAccount, writes `STATE/kubeconfig` (cluster admin) and
//! exits. `down` stops them (SIGTERM, then SIGKILL after 15 s).
//!
//! The API server serves the service-account issuer `https://127.0.0.1:<port>`, TokenRequest and
//! OIDC discovery (`/.well-known/openid-configuration`, `/openid/v1/jwks`), with RBAC
//! authorization; etcd speaks plain HTTP on loopback only.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::Api;

use crate::kubeapi::client_from_path;
use crate::up::{repo_dir, write_private};

/// The version the API server reports; must match `k8s.io/kubernetes` in the components' go.mod.
const KUBERNETES_VERSION: &str = "v1.37.2";
/// The components, in start order.
const COMPONENTS: [&str; 3] = ["etcd", "kube-apiserver", "kube-controller-manager"];

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Build the components when needed, start them and write STATE/kubeconfig.
    Up(StateDir),
    /// Stop the components started by `up`.
    Down(StateDir),
    /// Only build the components (when the pins changed) and print where they are.
    Build,
}

#[derive(Debug, clap::Args)]
struct StateDir {
    /// Certificates, data, logs, pid files and the kubeconfig. Default:
    /// `<target>/real-lane/cluster`.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    match args.action {
        Action::Build => {
            let bin = build().await?;
            println!("{}", bin.display());
            Ok(())
        }
        Action::Up(s) => up(&state_dir(s)).await,
        Action::Down(s) => down(&state_dir(s)),
    }
}

/// The cargo target directory: `CARGO_TARGET_DIR`, else the one this executable was built in.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| repo_dir("target"))
}

fn state_dir(s: StateDir) -> PathBuf {
    s.state_dir
        .unwrap_or_else(|| target_dir().join("real-lane/cluster"))
}

/// Build the components into `<target>/real-lane/bin` unless the binaries there were built from
/// the same pins; returns that directory.
pub async fn build() -> anyhow::Result<PathBuf> {
    let src = repo_dir("sandbox/real-lane/components");
    let bin = target_dir().join("real-lane/bin");
    let mut pins = String::new();
    for f in ["go.mod", "go.sum"] {
        let path = src.join(f);
        pins += &std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    let stamp = bin.join("pins");
    let built = COMPONENTS.iter().all(|c| bin.join(c).is_file())
        && std::fs::read_to_string(&stamp).is_ok_and(|s| s == pins);
    if built {
        return Ok(bin);
    }
    std::fs::create_dir_all(&bin)?;
    let _ = std::fs::remove_file(&stamp);
    let ldflags = format!(
        "-X k8s.io/component-base/version.gitVersion={KUBERNETES_VERSION} \
         -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
    );
    eprintln!(
        "building etcd, kube-apiserver and kube-controller-manager from {} (go build -p 2; the \
         first build takes several minutes)",
        src.display()
    );
    let start = Instant::now();
    let status = tokio::process::Command::new("go")
        .current_dir(&src)
        .env("GOFLAGS", "-mod=readonly")
        .args(["build", "-p", "2", "-trimpath", "-ldflags", &ldflags, "-o"])
        .arg(format!("{}/", bin.display()))
        .args([
            "./etcd",
            "k8s.io/kubernetes/cmd/kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
        ])
        .status()
        .await
        .context("cannot run `go` (the real lane needs Go on PATH)")?;
    if !status.success() {
        bail!("go build of the real-lane components failed ({status})");
    }
    std::fs::write(&stamp, pins)?;
    eprintln!(
        "built the components in {:.1}s",
        start.elapsed().as_secs_f64()
    );
    Ok(bin)
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The throwaway PKI: a CA, the API server's serving certificate, client certificates for the
/// admin and the controller manager, and the service-account signing key.
fn write_pki(dir: &Path) -> anyhow::Result<()> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "real-lane-ca");
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    std::fs::write(dir.join("ca.crt"), ca_cert.pem())?;
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let leaf = |name: &str,
                sans: Vec<String>,
                cn: &str,
                org: Option<&str>,
                usage: rcgen::ExtendedKeyUsagePurpose|
     -> anyhow::Result<()> {
        let key = rcgen::KeyPair::generate()?;
        let mut p = rcgen::CertificateParams::new(sans)?;
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        if let Some(o) = org {
            p.distinguished_name
                .push(rcgen::DnType::OrganizationName, o);
        }
        p.extended_key_usages = vec![usage];
        let cert = p.signed_by(&key, &issuer)?;
        std::fs::write(dir.join(format!("{name}.crt")), cert.pem())?;
        write_private(&dir.join(format!("{name}.key")), &key.serialize_pem())
    };
    let sans = [
        "127.0.0.1",
        "localhost",
        "kubernetes",
        "kubernetes.default.svc",
    ];
    leaf(
        "apiserver",
        sans.map(String::from).to_vec(),
        "kube-apiserver",
        None,
        rcgen::ExtendedKeyUsagePurpose::ServerAuth,
    )?;
    leaf(
        "admin",
        vec![],
        "real-lane-admin",
        Some("system:masters"),
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    )?;
    leaf(
        "controller-manager",
        vec![],
        "system:kube-controller-manager",
        None,
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    )?;
    let sa = rcgen::KeyPair::generate()?;
    write_private(&dir.join("sa.key"), &sa.serialize_pem())?;
    std::fs::write(dir.join("sa.pub"), sa.public_key_pem())?;
    Ok(())
}

/// A kubeconfig for `user` (its `<user>.crt`/`.key` in `dir`) against `server`.
fn kubeconfig(dir: &Path, server: &str, user: &str) -> String {
    let d = dir.display();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: real-lane\n  cluster:\n    server: \
         {server}\n    certificate-authority: {d}/ca.crt\nusers:\n- name: {user}\n  user:\n    \
         client-certificate: {d}/{user}.crt\n    client-key: {d}/{user}.key\ncontexts:\n- name: \
         real-lane\n  context:\n    cluster: real-lane\n    user: {user}\ncurrent-context: \
         real-lane\n"
    )
}

fn spawn(dir: &Path, bin: &Path, name: &str, args: &[String]) -> anyhow::Result<u32> {
    use std::os::unix::process::CommandExt;
    let log = std::fs::File::create(dir.join(format!("{name}.log")))?;
    let child = std::process::Command::new(bin.join(name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // Its own process group: the component outlives this command until `down`.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {name}"))?;
    std::fs::write(dir.join(format!("{name}.pid")), child.id().to_string())?;
    Ok(child.id())
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn read_pid(dir: &Path, name: &str) -> Option<i32> {
    std::fs::read_to_string(dir.join(format!("{name}.pid")))
        .ok()?
        .trim()
        .parse()
        .ok()
}

async fn up(dir: &Path) -> anyhow::Result<()> {
    if COMPONENTS
        .iter()
        .any(|c| read_pid(dir, c).is_some_and(alive))
    {
        bail!(
            "a real cluster is already running in {} (`sandbox real-cluster down` first)",
            dir.display()
        );
    }
    let bin = build().await?;
    let start = Instant::now();
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join("etcd"))?;
    let dir = &dir.canonicalize()?;
    write_pki(dir)?;
    let (etcd_port, peer_port, api_port) = (free_port()?, free_port()?, free_port()?);
    let etcd_url = format!("http://127.0.0.1:{etcd_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let server = format!("https://127.0.0.1:{api_port}");
    let d = dir.display();
    spawn(
        dir,
        &bin,
        "etcd",
        &[
            "--name=real-lane".into(),
            format!("--data-dir={d}/etcd"),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=real-lane={peer_url}"),
            "--listen-metrics-urls=".into(),
            // A throwaway test store: no fsync.
            "--unsafe-no-fsync".into(),
            "--log-level=warn".into(),
        ],
    )?;
    spawn(
        dir,
        &bin,
        "kube-apiserver",
        &[
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={api_port}"),
            format!("--cert-dir={d}"),
            format!("--tls-cert-file={d}/apiserver.crt"),
            format!("--tls-private-key-file={d}/apiserver.key"),
            format!("--client-ca-file={d}/ca.crt"),
            "--authorization-mode=RBAC".into(),
            format!("--service-account-issuer={server}"),
            format!("--service-account-key-file={d}/sa.pub"),
            format!("--service-account-signing-key-file={d}/sa.key"),
            "--service-cluster-ip-range=10.96.0.0/24".into(),
            // The `kubernetes` Endpoints cannot name a loopback address.
            "--endpoint-reconciler-type=none".into(),
            "--profiling=false".into(),
        ],
    )?;
    let admin = dir.join("kubeconfig");
    write_private(&admin, &kubeconfig(dir, &server, "admin"))?;
    let kcm = dir.join("controller-manager.kubeconfig");
    write_private(&kcm, &kubeconfig(dir, &server, "controller-manager"))?;
    let client = client_from_path(&admin).await?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let version = loop {
        match client.apiserver_version().await {
            Ok(v) => break v,
            Err(e) if Instant::now() > deadline => {
                bail!("kube-apiserver not ready after 120 s ({e}); see {d}/kube-apiserver.log")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    };
    let api_ready = start.elapsed();
    spawn(
        dir,
        &bin,
        "kube-controller-manager",
        &[
            format!("--kubeconfig={}", kcm.display()),
            format!("--authentication-kubeconfig={}", kcm.display()),
            format!("--authorization-kubeconfig={}", kcm.display()),
            "--bind-address=127.0.0.1".into(),
            "--secure-port=0".into(),
            "--leader-elect=false".into(),
            "--use-service-account-credentials=true".into(),
            format!("--service-account-private-key-file={d}/sa.key"),
            format!("--root-ca-file={d}/ca.crt"),
        ],
    )?;
    // The controller manager's service-account controller creates `default` in each namespace.
    let sas: Api<ServiceAccount> = Api::namespaced(client, "default");
    loop {
        if sas.get_opt("default").await?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "kube-controller-manager created no default ServiceAccount after 120 s; see \
                 {d}/kube-controller-manager.log"
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    println!(
        "real cluster up in {:.1}s (API server ready after {:.1}s): kube-apiserver {} at {server}",
        start.elapsed().as_secs_f64(),
        api_ready.as_secs_f64(),
        version.git_version
    );
    println!("kubeconfig: {}", admin.display());
    println!("stop it with: sandbox real-cluster down --state-dir {d}");
    Ok(())
}

fn down(dir: &Path) -> anyhow::Result<()> {
    let mut stopped = 0;
    for name in COMPONENTS.iter().rev() {
        let Some(pid) = read_pid(dir, name) else {
            continue;
        };
        if alive(pid) {
            // SAFETY: a plain kill(2) of a pid this command's `up` started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(15);
            while alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            if alive(pid) {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            stopped += 1;
        }
        let _ = std::fs::remove_file(dir.join(format!("{name}.pid")));
    }
    println!("stopped {stopped} component(s) of {}", dir.display());
    Ok(())
}
