//! The provider child processes: starting them, stopping them, and making sure none outlives
//! the `sandbox` process.
//!
//! Two mechanisms keep children from becoming orphans:
//! - on Linux, each child asks the kernel for SIGTERM when its parent dies
//!   (`PR_SET_PDEATHSIG`), which covers a `sandbox` killed with SIGKILL;
//! - everywhere, a child's stdin is a pipe from the parent: when it reaches end-of-file (the
//!   parent is gone, however it died), the child sends itself SIGTERM and, if it is still
//!   alive 20 s later, exits.
//!
//! A normal shutdown sends SIGTERM (the provider's graceful shutdown: controllers finish,
//! the leader Lease is released), waits, then kills what is left.
//!
//! While the sandbox runs, a provider that exits on its own is started again, as a
//! Deployment's pod would be: after a back-off that doubles from 1 s to at most 60 s and
//! starts over once the process has run for 60 s ([`Supervision`]). `sandbox provider-kill`
//! kills one by its pid file, for fault tests.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::process::{Child, Command};

use crate::Provider;

/// Set in a child's environment so that `sandbox provider` watches its stdin for the parent's
/// death (a provider started by hand from a shell does not).
const PARENT_WATCH_ENV: &str = "SANDBOX_PARENT_WATCH";

/// A running provider process.
pub struct ProviderChild {
    pub provider: Provider,
    pub child: Child,
    pub pid: u32,
    pub log: PathBuf,
    /// When the process was started.
    pub spawned: Instant,
    /// When the sandbox first saw it hold its leader Lease.
    pub leader_at: Option<Instant>,
    /// How it was started, to start it again.
    launch: Launch,
    /// The restarts and the last unexpected exit.
    pub supervision: Supervision,
}

/// What a provider process is started with.
#[derive(Clone)]
pub struct Launch {
    pub provider: Provider,
    pub kubeconfig: PathBuf,
    pub log: PathBuf,
    pub flags: Vec<String>,
    /// A provider binary to run instead of `sandbox provider <name>`. It does not watch its
    /// stdin, so only `PR_SET_PDEATHSIG` (Linux) keeps it from outliving the sandbox.
    pub binary: Option<PathBuf>,
    /// Where the pid is written (`sandbox provider-kill` reads it), if anywhere.
    pub pid_file: Option<PathBuf>,
    /// The longest restart back-off ([`MAX_BACKOFF`] unless a fault test asks for less).
    pub max_backoff: Duration,
    /// `HOSTNAME`, as a pod's name: the Lease identity's and the events' host.
    pub host: Option<String>,
}

/// A provider's restarts, as `kubectl get pods` shows them (RESTARTS, last state).
#[derive(Debug, Clone, Default)]
pub struct Supervision {
    /// How many times it was started again.
    pub restarts: u32,
    /// How the last unexpected exit ended (`signal: 9 (SIGKILL)`, `exit status: 1`).
    pub last_exit: Option<String>,
    /// When it is due to start again, while it is down.
    restart_at: Option<Instant>,
    /// Consecutive exits without a run of [`STABLE_RUN`] in between.
    crashes: u32,
}

/// The first restart back-off; it doubles per consecutive crash.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest restart back-off, by default.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A process that ran this long before exiting starts over at the first back-off.
const STABLE_RUN: Duration = Duration::from_secs(60);

/// What [`ProviderChild::supervise`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Supervised {
    /// Running, or waiting out its back-off.
    Unchanged,
    /// It exited unexpectedly; it starts again after the back-off.
    Exited { status: String, backoff: Duration },
    /// It was started again (new pid).
    Restarted { pid: u32 },
}

impl ProviderChild {
    /// Checks the process: records an unexpected exit and schedules its restart, or starts
    /// it again once its back-off has passed.
    pub fn supervise(&mut self) -> anyhow::Result<Supervised> {
        if let Some(at) = self.supervision.restart_at {
            if Instant::now() < at {
                return Ok(Supervised::Unchanged);
            }
            let next = spawn_process(&self.launch, true)?;
            self.child = next.0;
            self.pid = next.1;
            self.spawned = Instant::now();
            self.leader_at = None;
            self.supervision.restart_at = None;
            self.supervision.restarts += 1;
            return Ok(Supervised::Restarted { pid: self.pid });
        }
        let Ok(Some(status)) = self.child.try_wait() else {
            return Ok(Supervised::Unchanged);
        };
        let status = status.to_string();
        if self.spawned.elapsed() >= STABLE_RUN {
            self.supervision.crashes = 0;
        }
        let backoff = FIRST_BACKOFF
            .saturating_mul(1u32 << self.supervision.crashes.min(6))
            .min(self.launch.max_backoff);
        self.supervision.crashes += 1;
        self.supervision.last_exit = Some(status.clone());
        self.supervision.restart_at = Some(Instant::now() + backoff);
        Ok(Supervised::Exited { status, backoff })
    }
}

/// Starts `sandbox provider <name> <flags>` (or the given binary with `<flags>`) with its own
/// kubeconfig; output goes to `log`.
pub fn spawn(launch: Launch) -> anyhow::Result<ProviderChild> {
    let (child, pid) = spawn_process(&launch, false)?;
    Ok(ProviderChild {
        provider: launch.provider,
        child,
        pid,
        log: launch.log.clone(),
        spawned: Instant::now(),
        leader_at: None,
        launch,
        supervision: Supervision::default(),
    })
}

/// Starts the process (appending to its log when it is a restart) and writes its pid file.
fn spawn_process(launch: &Launch, restart: bool) -> anyhow::Result<(Child, u32)> {
    let log = if restart {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&launch.log)
    } else {
        std::fs::File::create(&launch.log)
    }
    .with_context(|| format!("cannot open log file {}", launch.log.display()))?;
    let log_err = log
        .try_clone()
        .context("cannot duplicate the log file handle")?;
    let mut cmd = match &launch.binary {
        Some(bin) => {
            anyhow::ensure!(
                bin.is_file(),
                "no provider binary {} (build it with `cargo build --release -p {}`)",
                bin.display(),
                launch.provider.name()
            );
            Command::new(bin)
        }
        None => {
            let exe = std::env::current_exe()
                .context("cannot find the sandbox executable to start providers")?;
            let mut cmd = Command::new(exe);
            cmd.arg("provider").arg(launch.provider.short());
            cmd
        }
    };
    if let Some(host) = &launch.host {
        cmd.env("HOSTNAME", host);
    }
    cmd.args(&launch.flags)
        .env("KUBECONFIG", &launch.kubeconfig)
        .env("POD_NAMESPACE", "crossplane-system")
        .env(PARENT_WATCH_ENV, "1")
        // The sandbox's own log filter is meant for the sandbox, not the providers.
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_err))
        .kill_on_drop(true);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of the calling (child) process;
        // it allocates nothing and is async-signal-safe, as pre_exec requires.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGTERM as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", launch.provider.name()))?;
    let pid = child.id().context("the provider process exited at once")?;
    if let Some(f) = &launch.pid_file {
        std::fs::write(f, format!("{pid}\n"))
            .with_context(|| format!("cannot write {}", f.display()))?;
    }
    Ok((child, pid))
}

/// `sandbox provider-kill`: sends a signal to a provider of a running `sandbox up
/// --state-dir DIR`, by the pid file the sandbox keeps for it. Returns the pid.
pub fn kill_by_pid_file(state_dir: &Path, provider: Provider, signal: i32) -> anyhow::Result<u32> {
    let file = state_dir
        .join("providers")
        .join(format!("{}.pid", provider.name()));
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "no pid file {} (is `sandbox up --state-dir {}` running?)",
            file.display(),
            state_dir.display()
        )
    })?;
    let pid: u32 = text
        .trim()
        .parse()
        .with_context(|| format!("{} holds no pid", file.display()))?;
    send(pid, signal).with_context(|| format!("cannot signal {} (pid {pid})", provider.name()))?;
    Ok(pid)
}

/// Sends a signal to a process.
fn send(pid: u32, signal: i32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let pid =
            libc::pid_t::try_from(pid).map_err(|_| std::io::Error::other("pid out of range"))?;
        // SAFETY: kill(2) has no memory-safety preconditions.
        if unsafe { libc::kill(pid, signal) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, signal);
        Err(std::io::Error::other("signals need a unix system"))
    }
}

/// Sends SIGTERM to a process.
fn terminate(pid: u32) {
    #[cfg(unix)]
    let _ = send(pid, libc::SIGTERM);
    #[cfg(not(unix))]
    let _ = pid;
}

/// Stops every child: SIGTERM, up to `grace` for them to exit, then SIGKILL. Returns each
/// provider's exit description.
pub async fn stop_all(children: &mut [ProviderChild], grace: Duration) -> Vec<(Provider, String)> {
    for c in children.iter() {
        if c.child.id().is_some() {
            terminate(c.pid);
        }
    }
    let mut out = Vec::new();
    for c in children.iter_mut() {
        let status = match tokio::time::timeout(grace, c.child.wait()).await {
            Ok(Ok(s)) => s.to_string(),
            Ok(Err(e)) => format!("wait failed: {e}"),
            Err(_) => {
                let _ = c.child.kill().await;
                "killed after the grace period".to_string()
            }
        };
        out.push((c.provider, status));
    }
    out
}

/// An error naming the first of `children` that has exited (`when`: "unexpectedly",
/// "during start-up") with the last lines of its log; `Ok` while all run.
pub fn bail_if_exited(children: &mut [ProviderChild], when: &str) -> anyhow::Result<()> {
    for c in children.iter_mut() {
        if let Ok(Some(status)) = c.child.try_wait() {
            anyhow::bail!(
                "{} exited {when} ({status}); last lines of {}:\n{}",
                c.provider.name(),
                c.log.display(),
                log_tail(&c.log, 20)
            );
        }
    }
    Ok(())
}

/// The last `lines` lines of a log file (for error messages about a provider that died).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// In a child started by `sandbox up`: when stdin closes (the parent died), shut down.
pub fn watch_parent() {
    if std::env::var_os(PARENT_WATCH_ENV).is_none() {
        return;
    }
    std::thread::spawn(|| {
        use std::io::Read;
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(_) => continue,
            }
        }
        terminate(std::process::id());
        std::thread::sleep(Duration::from_secs(20));
        std::process::exit(1);
    });
}
