//! Shared helpers of the end-to-end tests in `tests/tests/`.
//!
//! The tests drive the providers as a user would: they start the built `sandbox` binary
//! (`sandbox up`: Kubernetes API test server, JFrog simulator and the real provider processes)
//! as a child process, then talk to it through `kubectl`, kube-rs and the simulator's admin API
//! (`$JFROG_URL/__sim/`). This module holds:
//! - [`Sandbox`]: start one sandbox in its own state directory, wait for `DIR/ready`, and stop
//!   it (SIGTERM, then SIGKILL) when dropped, also while a test panics, so no process is left
//!   behind;
//! - [`SimAdmin`]: the simulator's admin API (request counts, configuration, direct repository
//!   state: "a change made in JFrog") and its REST API with the admin token;
//! - [`Mr`]: a managed resource found through its CRD, with its conditions;
//! - [`wait_for`]: poll a condition with a generous timeout (the tests must hold on a loaded
//!   2-core machine; nothing is asserted on timing).
//!
//! The generic plumbing (waiting, `kubectl`, temporary directories, condition readers) is the
//! shared `testkit`, re-exported here.
//!
//! Deviation: the `sandbox` binary is found next to the test executable (`target/<profile>/`);
//! `cargo test --workspace` builds it, `cargo test -p e2e` alone does not (nor rebuilds a
//! stale one), hence the message asking for `cargo build -p sandbox`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;

/// Where the repository's files are (`examples/`, `crds/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The built `sandbox` binary: `target/<profile>/sandbox`, next to `target/<profile>/deps/`
/// where the test executable is.
pub fn sandbox_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable is in target/<profile>/deps/");
    let bin = profile_dir.join(format!("sandbox{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "the sandbox binary is missing at {}: run `cargo build -p sandbox` (with the same \
         CARGO_TARGET_DIR and profile) before these tests, or run `cargo test --workspace`",
        bin.display()
    );
    warn_if_stale(&bin);
    bin
}

/// Warns (on stderr, visible with --nocapture) when a source file of the crates linked into
/// the `sandbox` binary is newer than the binary: `cargo test -p e2e` does not rebuild it.
fn warn_if_stale(bin: &Path) {
    let Ok(built) = std::fs::metadata(bin).and_then(|m| m.modified()) else {
        return;
    };
    let root = repo_root();
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for dir in ["providers", "sandbox", "jfrog-client", "crds"] {
        newest_file(&root.join(dir), &mut newest);
    }
    if let Some((t, f)) = newest
        && t > built
    {
        eprintln!(
            "warning: {} is newer than {}: run `cargo build -p sandbox` to test the current code",
            f.display(),
            bin.display()
        );
    }
}

fn newest_file(path: &Path, newest: &mut Option<(std::time::SystemTime, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if !p.ends_with("target") {
                newest_file(&p, newest);
            }
        } else if p
            .extension()
            .is_some_and(|x| x == "rs" || x == "yaml" || x == "toml")
            && let Ok(t) = e.metadata().and_then(|m| m.modified())
            && newest.as_ref().is_none_or(|(n, _)| t > *n)
        {
            *newest = Some((t, p));
        }
    }
}

pub use testkit::{TempDir, conditions, require_kubectl, wait_for};

pub mod identity;
pub mod outputs;
pub mod process;
pub mod reliability;

/// The installed CRDs: (group, Kind) -> (plural, namespaced).
async fn installed_crds(client: &kube::Client) -> BTreeMap<(String, String), (String, bool)> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    api.list(&ListParams::default())
        .await
        .expect("list CRDs")
        .items
        .into_iter()
        .map(|crd| {
            let s = crd.spec;
            (
                (s.group, s.names.kind),
                (s.names.plural, s.scope == "Namespaced"),
            )
        })
        .collect()
}

/// A fresh directory `e2e-<tag>-...` under the system temp dir.
pub fn temp_dir(tag: &str) -> PathBuf {
    testkit::temp_dir(&format!("e2e-{tag}"))
}

/// How a sandbox is started.
pub struct SandboxOptions {
    /// A name for the state directory and messages.
    pub tag: String,
    /// The providers' --poll.
    pub poll: Duration,
    /// Manifests for `sandbox up --apply` (none: `--no-apply`, the test applies with kubectl).
    pub apply: Vec<PathBuf>,
    /// A JFrog platform (URL, token file) instead of the sandbox's own simulator (e.g. a
    /// simulator the test seeded and keeps across sandboxes).
    pub jfrog: Option<(String, PathBuf)>,
    /// Extra provider flags (`sandbox up --provider-arg=...`).
    pub provider_args: Vec<String>,
    /// The providers to start (`--providers`), comma-separated.
    pub providers: String,
    /// `sandbox up --activate` patterns (none: everything active).
    pub activate: Vec<String>,
    /// `sandbox up --provider-bin`: run DIR/provider-<name> instead of the built-in copies.
    pub provider_bin: Option<PathBuf>,
    /// Extra flags of `sandbox up` itself (e.g. `--restart-backoff-max=1s`).
    pub sandbox_args: Vec<String>,
}

impl SandboxOptions {
    pub fn new(tag: &str) -> SandboxOptions {
        SandboxOptions {
            tag: tag.to_string(),
            poll: Duration::from_secs(5),
            apply: Vec::new(),
            jfrog: None,
            provider_args: Vec::new(),
            providers: "artifactory".to_string(),
            activate: Vec::new(),
            provider_bin: None,
            sandbox_args: Vec::new(),
        }
    }

    /// Run the providers from `dir` (`dir/provider-<name>`).
    pub fn provider_bin(mut self, dir: impl Into<PathBuf>) -> SandboxOptions {
        self.provider_bin = Some(dir.into());
        self
    }

    /// Activate only the managed-resource CRDs matching `pattern` (repeatable).
    pub fn activate(mut self, pattern: &str) -> SandboxOptions {
        self.activate.push(pattern.to_string());
        self
    }

    /// The providers' --poll.
    pub fn poll(mut self, poll: Duration) -> SandboxOptions {
        self.poll = poll;
        self
    }

    /// An extra flag of `sandbox up` itself.
    pub fn sandbox_arg(mut self, flag: &str) -> SandboxOptions {
        self.sandbox_args.push(flag.to_string());
        self
    }

    pub fn provider_arg(mut self, flag: &str) -> SandboxOptions {
        self.provider_args.push(flag.to_string());
        self
    }

    /// Start these providers (comma-separated, e.g. `artifactory,project`).
    pub fn providers(mut self, providers: &str) -> SandboxOptions {
        self.providers = providers.to_string();
        self
    }

    pub fn jfrog(mut self, url: &str, token_file: impl Into<PathBuf>) -> SandboxOptions {
        self.jfrog = Some((url.to_string(), token_file.into()));
        self
    }

    pub fn apply(mut self, path: impl Into<PathBuf>) -> SandboxOptions {
        self.apply.push(path.into());
        self
    }
}

/// The `sandbox up` process: stopped (SIGTERM, then SIGKILL) and reaped when dropped, also
/// during a panic; its state directory is removed unless the test failed.
struct Process {
    child: std::sync::Mutex<Child>,
    tag: String,
    dir: PathBuf,
}

/// A running `sandbox up` with its providers (artifactory unless told); stopped when dropped.
pub struct Sandbox {
    process: Process,
    pub tag: String,
    pub dir: PathBuf,
    pub kubeconfig: PathBuf,
    pub poll: Duration,
    pub client: kube::Client,
    pub sim: SimAdmin,
    crds: BTreeMap<(String, String), (String, bool)>,
}

impl Sandbox {
    /// Starts `sandbox up --state-dir DIR --poll P --providers <providers> [--apply ...]` and
    /// waits (up to 4 minutes: a loaded machine) for `DIR/ready`.
    pub async fn start(opts: SandboxOptions) -> Sandbox {
        let _ = rustls::crypto::ring::default_provider().install_default();
        require_kubectl();
        let bin = sandbox_binary();
        let dir = temp_dir(&opts.tag);
        let out = std::fs::File::create(dir.join("sandbox.out")).expect("create sandbox.out");
        let err = std::fs::File::create(dir.join("sandbox.err")).expect("create sandbox.err");
        let poll = format!("{}s", opts.poll.as_secs().max(1));
        let mut cmd = Command::new(&bin);
        cmd.arg("up")
            .arg("--state-dir")
            .arg(&dir)
            .args(["--poll", &poll, "--providers", &opts.providers])
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .env_remove("RUST_LOG");
        if opts.apply.is_empty() {
            cmd.arg("--no-apply");
        }
        for p in &opts.apply {
            cmd.arg("--apply").arg(p);
        }
        for a in &opts.provider_args {
            cmd.arg(format!("--provider-arg={a}"));
        }
        for a in &opts.activate {
            cmd.args(["--activate", a]);
        }
        if let Some(dir) = &opts.provider_bin {
            cmd.arg("--provider-bin").arg(dir);
        }
        cmd.args(&opts.sandbox_args);
        if let Some((url, token_file)) = &opts.jfrog {
            cmd.args(["--jfrog-url", url])
                .arg("--jfrog-token-file")
                .arg(token_file);
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let process = Process {
            child: std::sync::Mutex::new(child),
            tag: opts.tag.clone(),
            dir: dir.clone(),
        };
        let ready = dir.join("ready");
        let deadline = Instant::now() + Duration::from_secs(240);
        while !ready.is_file() {
            if let Some(status) = process.exited() {
                panic!(
                    "sandbox up exited before it was ready ({status}):\n{}",
                    logs(&dir)
                );
            }
            assert!(
                Instant::now() < deadline,
                "sandbox up not ready after 240s:\n{}",
                logs(&dir)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let kubeconfig = dir.join("kubeconfig");
        let kc =
            kube::config::Kubeconfig::read_from(&kubeconfig).expect("read the sandbox kubeconfig");
        let cfg =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .expect("kube config from the sandbox kubeconfig");
        let client = kube::Client::try_from(cfg).expect("kube client");
        let env = std::fs::read_to_string(dir.join("jfrog.env")).expect("read jfrog.env");
        let var = |name: &str| testkit::env_value(&env, name);
        let sim = SimAdmin::new(&var("JFROG_URL"), &var("JFROG_ACCESS_TOKEN"));
        let crds = installed_crds(&client).await;
        Sandbox {
            process,
            tag: opts.tag,
            dir,
            kubeconfig,
            poll: opts.poll,
            client,
            sim,
            crds,
        }
    }

    /// Reads the installed CRDs again (after CRDs were installed, e.g. by `sandbox activate`),
    /// for [`Sandbox::mr`].
    pub async fn reload_crds(&mut self) {
        self.crds = installed_crds(&self.client).await;
    }

    /// `kubectl apply -f` of `docs` (through a [`manifests_dir`]); returns whether it
    /// succeeded and its output (stdout, then stderr).
    pub fn apply(&self, docs: &[Value]) -> (bool, String) {
        let dir = manifests_dir(&format!("{}-apply", self.tag), docs);
        let file = dir.path().join("manifests.yaml");
        let out = self.kubectl(&["apply", "-f", file.to_str().expect("utf-8 path")]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// Like [`Sandbox::apply`], failing the test when `kubectl apply` fails; returns stdout.
    pub fn apply_ok(&self, docs: &[Value]) -> String {
        let dir = manifests_dir(&format!("{}-apply", self.tag), docs);
        let file = dir.path().join("manifests.yaml");
        self.kubectl_ok(&["apply", "-f", file.to_str().expect("utf-8 path")])
    }

    /// Deletes every MR with `kubectl delete --timeout=180s`, then waits (up to `timeout`
    /// each) until each is gone, finalizers released.
    pub async fn delete_and_wait_gone(&self, mrs: &[Mr], timeout: Duration) {
        for mr in mrs {
            let resource = mr.resource();
            let mut args = vec![
                "delete",
                "--timeout=180s",
                resource.as_str(),
                mr.name.as_str(),
            ];
            if let Some(ns) = &mr.namespace {
                args.extend(["-n", ns.as_str()]);
            }
            self.kubectl_ok(&args);
        }
        for mr in mrs {
            wait_for(
                &format!("{} to be gone", mr.display()),
                timeout,
                Duration::from_millis(500),
                || async { mr.try_get().await.is_none().then_some(()) },
            )
            .await;
        }
    }

    /// Waits until at least `rounds` poll intervals have passed and `observed` (how many
    /// times the provider has observed its objects, from the simulator's request counts since
    /// the last reset) reaches `rounds`; returns those counts. `what` names the observations
    /// in the timeout message.
    pub async fn wait_observed_rounds(
        &self,
        what: &str,
        rounds: u64,
        observed: impl Fn(&BTreeMap<String, u64>) -> u64,
    ) -> BTreeMap<String, u64> {
        let started = Instant::now();
        let min = self.poll * u32::try_from(rounds).expect("few rounds");
        wait_for(
            &format!("{rounds} more {what}"),
            Duration::from_secs(300),
            Duration::from_secs(1),
            || async {
                let counts = self.sim.requests().await;
                (started.elapsed() >= min && observed(&counts) >= rounds).then_some(counts)
            },
        )
        .await
    }

    /// Waits for two more polls after adoption (each of `lists`, the GET routes every poll
    /// asks, asked twice more, and two poll intervals passed), fails the test if JFrog saw a
    /// write meanwhile, and returns the request counts. `tag` names the run in the message.
    pub async fn two_quiet_polls(
        &self,
        tag: &str,
        lists: &[impl AsRef<str>],
        timeout: Duration,
    ) -> BTreeMap<String, u64> {
        let polls = |c: &BTreeMap<String, u64>| {
            lists
                .iter()
                .map(|r| count(c, "GET", r.as_ref()))
                .min()
                .unwrap_or(0)
        };
        let at_ready = polls(&self.sim.requests().await);
        let polled = Instant::now();
        let counts = wait_for(
            "two more polls",
            timeout,
            Duration::from_millis(300),
            || async {
                let c = self.sim.requests().await;
                (polls(&c) >= at_ready + 2 && polled.elapsed() >= self.poll * 2).then_some(c)
            },
        )
        .await;
        assert!(
            writes(&counts).is_empty(),
            "{tag}: adoption wrote to JFrog: {:?}",
            writes(&counts)
        );
        counts
    }

    /// The tail of the sandbox's own output and of the provider log (for failure messages).
    pub fn logs(&self) -> String {
        logs(&self.dir)
    }

    /// Fails the test at once when `sandbox up` has exited (it does when a provider crashes).
    pub fn assert_running(&self) {
        if let Some(status) = self.process.exited() {
            panic!("sandbox up exited ({status}):\n{}", self.logs());
        }
    }

    /// Runs `kubectl --kubeconfig DIR/kubeconfig ARGS` and returns its output.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        testkit::kubectl(&self.kubeconfig, args)
    }

    /// Like [`Sandbox::kubectl`], failing the test (with stderr) when kubectl fails.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        testkit::kubectl_ok(&self.kubeconfig, args)
    }

    /// The managed resource of a manifest (`apiVersion`, `kind`, `metadata.name`,
    /// `metadata.namespace`), found through the installed CRDs.
    pub fn mr_of(&self, manifest: &Value) -> Mr {
        let api_version = manifest["apiVersion"]
            .as_str()
            .expect("manifest apiVersion");
        let kind = manifest["kind"].as_str().expect("manifest kind");
        let name = manifest["metadata"]["name"]
            .as_str()
            .expect("manifest metadata.name");
        let namespace = manifest["metadata"]["namespace"].as_str();
        self.mr(api_version, kind, name, namespace)
    }

    /// The managed resource `kind`/`name` of `api_version`.
    pub fn mr(&self, api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> Mr {
        let (group, version) = api_version
            .split_once('/')
            .expect("apiVersion is group/version");
        let (plural, namespaced) = self
            .crds
            .get(&(group.to_string(), kind.to_string()))
            .unwrap_or_else(|| panic!("no CRD installed for {kind} in {group}"));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let ar = ApiResource::from_gvk_with_plural(&gvk, plural);
        let namespace = if *namespaced {
            Some(namespace.unwrap_or("default").to_string())
        } else {
            None
        };
        let api = match &namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        Mr {
            api,
            kind: kind.to_string(),
            group: group.to_string(),
            plural: plural.clone(),
            name: name.to_string(),
            namespace,
        }
    }

    /// Waits until every MR is Ready=True and Synced=True; on timeout, fails listing those
    /// that are not with their conditions, and the logs.
    pub async fn wait_all_ready(&self, mrs: &[Mr], timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut pending: Vec<&Mr> = mrs.iter().collect();
        loop {
            let mut still = Vec::new();
            for mr in pending {
                if !mr.ready_and_synced().await {
                    still.push(mr);
                }
            }
            pending = still;
            if pending.is_empty() {
                return;
            }
            self.assert_running();
            if Instant::now() > deadline {
                let mut report = String::new();
                for mr in pending.iter().take(20) {
                    let state = match mr.try_get().await {
                        Some(o) => format!("{:?}", conditions(&o)),
                        None => "absent".to_string(),
                    };
                    report.push_str(&format!("  {}: {state}\n", mr.display()));
                }
                panic!(
                    "{} of {} managed resources not Ready and Synced after {timeout:?}:\n{report}{}",
                    pending.len(),
                    mrs.len(),
                    self.logs()
                );
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// The tail of the sandbox's own output and of the provider log in `dir`.
fn logs(dir: &Path) -> String {
    let mut s = String::new();
    for (name, path) in [
        ("sandbox stderr", dir.join("sandbox.err")),
        ("sandbox stdout", dir.join("sandbox.out")),
        (
            "provider-artifactory log",
            dir.join("providers/provider-artifactory.log"),
        ),
    ] {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .replace('\r', "\n");
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(25)..].join("\n");
        s.push_str(&format!(
            "--- {name} ({}), last lines:\n{tail}\n",
            path.display()
        ));
    }
    s
}

impl Process {
    fn exited(&self) -> Option<std::process::ExitStatus> {
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        child.try_wait().ok().flatten()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let child = self
            .child
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if std::thread::panicking() {
            eprintln!(
                "[{}] sandbox state kept in {}\n{}",
                self.tag,
                self.dir.display(),
                logs(&self.dir)
            );
        }
        // SIGTERM first: the sandbox stops its providers gracefully; SIGKILL after 30 s (the
        // providers then get SIGTERM from the kernel: PR_SET_PDEATHSIG).
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet (only
            // this Drop waits for it), so the pid cannot have been reused.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
            }
        }
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A managed resource in the sandbox.
pub struct Mr {
    pub api: Api<DynamicObject>,
    pub kind: String,
    pub group: String,
    pub plural: String,
    pub name: String,
    pub namespace: Option<String>,
}

impl Mr {
    /// `Kind ns/name` or `Kind name`.
    pub fn display(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}.{} {ns}/{}", self.kind, self.group, self.name),
            None => format!("{}.{} {}", self.kind, self.group, self.name),
        }
    }

    /// `plural.group` for kubectl.
    pub fn resource(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    pub async fn try_get(&self) -> Option<DynamicObject> {
        self.api.get_opt(&self.name).await.ok().flatten()
    }

    /// The condition `type` as (status, reason, message), if the object and condition exist.
    pub async fn condition(&self, type_: &str) -> Option<(String, String, String)> {
        self.try_get()
            .await
            .and_then(|o| conditions(&o).remove(type_))
    }

    /// Waits (up to `timeout`) until the condition `type_` has `status` and a message
    /// containing `message_part`; returns its (status, reason, message). `what` is said on
    /// timeout.
    pub async fn wait_condition(
        &self,
        what: &str,
        type_: &str,
        status: &str,
        message_part: &str,
        timeout: Duration,
    ) -> (String, String, String) {
        wait_for(what, timeout, Duration::from_millis(500), || async {
            self.condition(type_)
                .await
                .filter(|c| c.0 == status && c.2.contains(message_part))
        })
        .await
    }

    pub async fn ready_and_synced(&self) -> bool {
        match self.try_get().await {
            Some(o) => {
                let c = conditions(&o);
                c.get("Ready").is_some_and(|c| c.0 == "True")
                    && c.get("Synced").is_some_and(|c| c.0 == "True")
            }
            None => false,
        }
    }
}

/// The simulator's admin API (`/__sim/`, no auth) and its REST API with the admin token.
pub struct SimAdmin {
    pub url: String,
    token: String,
    http: reqwest::Client,
}

impl SimAdmin {
    pub fn new(url: &str, token: &str) -> SimAdmin {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("reqwest client");
        SimAdmin {
            url: url.trim_end_matches('/').to_string(),
            token: token.to_string(),
            http,
        }
    }

    /// `method path` of the simulator's admin API (with a JSON body, if any); fails the test
    /// unless it succeeds. Every admin call goes through here.
    pub(crate) async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> reqwest::Response {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.url));
        if let Some(body) = body {
            req = req.json(body);
        }
        let r = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert!(r.status().is_success(), "{method} {path}: {}", r.status());
        r
    }

    /// `GET path` of the simulator's admin API, its JSON body.
    pub(crate) async fn admin_get<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        self.admin(reqwest::Method::GET, path, None)
            .await
            .json()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// Per-route request counts (`"PUT /artifactory/api/repositories/{key}"` → n).
    pub async fn requests(&self) -> BTreeMap<String, u64> {
        self.admin_get("/__sim/requests").await
    }

    pub async fn reset_requests(&self) {
        self.admin(reqwest::Method::DELETE, "/__sim/requests", None)
            .await;
    }

    /// `PUT /__sim/config` (`descriptorMergeEmulation`, `writeLatencyMs`, ...).
    pub async fn put_config(&self, config: Value) {
        self.admin(reqwest::Method::PUT, "/__sim/config", Some(&config))
            .await;
    }

    /// `GET /__sim/config`.
    pub async fn config(&self) -> Value {
        self.admin_get("/__sim/config").await
    }

    /// The stored configuration of a repository (secrets in clear), if it exists.
    pub async fn repository(&self, key: &str) -> Option<Value> {
        self.get_opt(&format!("/__sim/repositories/{key}"), false)
            .await
    }

    /// `GET path` of JFrog's REST API with the admin token: the JSON body, or `None` on 404.
    pub async fn rest_get(&self, path: &str) -> Option<Value> {
        self.get_opt(path, true).await
    }

    /// `method path` of JFrog's REST API with the admin token and a JSON body, as a JFrog
    /// admin would (in the UI or with curl); fails the test unless it succeeds.
    pub async fn rest_send(&self, method: reqwest::Method, path: &str, body: &Value) {
        let r = self
            .http
            .request(method.clone(), format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = r.status();
        let text = r.text().await.unwrap_or_default();
        assert!(status.is_success(), "{method} {path}: {status} {text}");
    }

    /// `GET path` (with the admin token when `auth`): the JSON body, or `None` on 404.
    async fn get_opt(&self, path: &str, auth: bool) -> Option<Value> {
        let mut req = self.http.get(format!("{}{path}", self.url));
        if auth {
            req = req.bearer_auth(&self.token);
        }
        let r = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        match r.status().as_u16() {
            404 => None,
            s if (200..300).contains(&s) => Some(r.json().await.expect("JSON body")),
            s => panic!("GET {path}: {s}"),
        }
    }

    /// Stores a configuration directly: "a change made in JFrog" (not counted).
    pub async fn put_repository(&self, key: &str, config: &Value) {
        let path = format!("/__sim/repositories/{key}");
        self.admin(reqwest::Method::PUT, &path, Some(config)).await;
    }

    /// Stores an object of a simulator collection directly (`PUT /__sim/collections/...`):
    /// an object that exists in JFrog already, such as a user made in the UI (not counted).
    pub async fn put_object(&self, collection: &str, key: &str, object: &Value) {
        let path = format!("/__sim/collections/{collection}/{key}");
        self.admin(reqwest::Method::PUT, &path, Some(object)).await;
    }

    /// Creates a repository through JFrog's REST API with the admin token, as a JFrog admin
    /// would (this request is counted).
    pub async fn create_repository_rest(&self, key: &str, config: &Value) {
        self.rest_send(
            reqwest::Method::PUT,
            &format!("/artifactory/api/repositories/{key}"),
            config,
        )
        .await;
    }
}

/// The count of `method route` (e.g. `"GET"`, `"/artifactory/api/repositories/{key}"`) in
/// per-route request counts; 0 when absent.
pub fn count(counts: &BTreeMap<String, u64>, method: &str, route: &str) -> u64 {
    counts
        .get(&format!("{method} {route}"))
        .copied()
        .unwrap_or(0)
}

/// Writes `docs` as one multi-document manifest file, `manifests.yaml`, in a fresh directory
/// (removed on drop). Each document is JSON (valid YAML) after a `---` separator, which both
/// kubectl and `sandbox up --apply` read as a multi-document file: serde_yaml writes YAML 1.2
/// and leaves strings such as `yes` unquoted, which kubectl's YAML 1.1 parser then reads as
/// booleans, so a string field would reach the API server as a boolean.
pub fn manifests_dir(tag: &str, docs: &[Value]) -> TempDir {
    let dir = TempDir::new(&format!("{tag}-manifests"));
    let text: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "---\n{}\n",
                serde_json::to_string_pretty(d).expect("manifest to JSON")
            )
        })
        .collect();
    std::fs::write(dir.path().join("manifests.yaml"), text.concat()).expect("write manifests");
    dir
}

/// The counts of requests that change something (any method but GET/HEAD/OPTIONS).
pub fn writes(counts: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    counts
        .iter()
        .filter(|(route, n)| {
            **n > 0
                && !["GET ", "HEAD ", "OPTIONS "]
                    .iter()
                    .any(|m| route.starts_with(m))
        })
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// Every YAML document of the `.yaml`/`.yml` files under `path` (recursively, sorted).
pub fn read_manifests(path: &Path) -> Vec<Value> {
    let mut files = Vec::new();
    collect_yaml(path, &mut files);
    files.sort();
    let mut docs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
        for de in serde_yaml::Deserializer::from_str(&text) {
            let v: Value = serde::Deserialize::deserialize(de)
                .unwrap_or_else(|e| panic!("parse {}: {e}", f.display()));
            if !v.is_null() {
                docs.push(v);
            }
        }
    }
    docs
}

fn collect_yaml(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for e in
            std::fs::read_dir(path).unwrap_or_else(|e| panic!("read dir {}: {e}", path.display()))
        {
            collect_yaml(&e.expect("dir entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
        out.push(path.to_path_buf());
    }
}

/// Every file under `dir` (relative path -> content): an export's output, to compare two
/// exports or search them.
pub fn file_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for e in std::fs::read_dir(dir).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let text = std::fs::read_to_string(&p).expect("read file");
                out.insert(
                    p.strip_prefix(root).expect("under root").to_path_buf(),
                    text,
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `sandbox export --providers PROVIDERS --url URL --token-file F --out OUT [extra]`; fails
/// the test unless it succeeds; returns its standard output (the summary).
pub fn sandbox_export(
    providers: &[&str],
    url: &str,
    token_file: &Path,
    out: &Path,
    extra: &[&str],
) -> String {
    let o = Command::new(sandbox_binary())
        .args(["export", "--providers", &providers.join(","), "--url", url])
        .arg("--token-file")
        .arg(token_file)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run sandbox export");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "sandbox export failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}
