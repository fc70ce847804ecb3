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
}

/// What a provider process is started with.
pub struct Launch<'a> {
    pub provider: Provider,
    pub kubeconfig: &'a Path,
    pub log: PathBuf,
    pub flags: Vec<String>,
    /// A provider binary to run instead of `sandbox provider <name>`. It does not watch its
    /// stdin, so only `PR_SET_PDEATHSIG` (Linux) keeps it from outliving the sandbox.
    pub binary: Option<PathBuf>,
}

/// Starts `sandbox provider <name> <flags>` (or the given binary with `<flags>`) with its own
/// kubeconfig; output goes to `log`.
pub fn spawn(launch: Launch<'_>) -> anyhow::Result<ProviderChild> {
    let log = std::fs::File::create(&launch.log)
        .with_context(|| format!("cannot create log file {}", launch.log.display()))?;
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
    cmd.args(&launch.flags)
        .env("KUBECONFIG", launch.kubeconfig)
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
    let spawned = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", launch.provider.name()))?;
    let pid = child.id().context("the provider process exited at once")?;
    Ok(ProviderChild {
        provider: launch.provider,
        child,
        pid,
        log: launch.log,
        spawned,
        leader_at: None,
    })
}

/// Sends SIGTERM to a process.
fn terminate(pid: u32) {
    #[cfg(unix)]
    {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
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
