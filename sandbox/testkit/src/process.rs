//! Child processes, `kubectl`, temporary directories and loopback HTTP: what tests that drive
//! binaries (the `sandbox` command, a provider binary) share.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A child process killed (SIGKILL) and reaped when dropped, so that a failing test leaves
/// nothing running.
#[derive(Debug)]
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for ChildGuard {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for ChildGuard {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// Runs `kubectl --kubeconfig KUBECONFIG ARGS` and returns its output; panics when kubectl
/// cannot be run at all.
pub fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("kubectl must be on PATH for these tests (cannot run it: {e})"))
}

/// Like [`kubectl`], failing the test (with its stderr and stdout) when kubectl fails;
/// returns stdout.
pub fn kubectl_ok(kubeconfig: &Path, args: &[&str]) -> String {
    let out = kubectl(kubeconfig, args);
    assert!(
        out.status.success(),
        "kubectl {} failed: {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Fails the test with a clear message when `kubectl` is not on PATH or does not run.
pub fn require_kubectl() {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        found,
        "kubectl is required on PATH for these tests (none found or it does not run)"
    );
}

/// A fresh directory `<temp>/<prefix>-<pid>-<nanos>-<n>`, left in place (see [`TempDir`]).
pub fn temp_dir(prefix: &str) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("create temp dir {}: {e}", dir.display()));
    dir
}

/// A [`temp_dir`] removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory under the system temp dir, its name starting with `prefix` (panics
    /// when it cannot be created).
    pub fn new(prefix: &str) -> TempDir {
        TempDir(temp_dir(prefix))
    }

    /// Where the directory is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The value of `KEY=value` in an env file's text (`jfrog.env`); panics when missing.
pub fn env_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{key} missing from the env file"))
}

/// Whether a process is alive (a zombie counts as gone: it runs no code). Linux (`/proc`).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next())
                .unwrap_or(None);
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

/// Runs `cmd` with stdout and stderr captured; kills it and fails the test (with both
/// outputs) when it has not exited within `timeout`.
pub fn run_with_deadline(mut cmd: Command, timeout: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    // Drain the pipes while waiting: a chatty child would block on a full pipe.
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut b);
        b
    });
    let start = Instant::now();
    let (status, timed_out) = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break (s, false);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            break (child.wait().expect("reap the child"), true);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    };
    if timed_out {
        panic!(
            "{:?} did not exit within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
            cmd.get_program(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    output
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}

/// A plain HTTP/1.0 GET on `127.0.0.1:port`: `(status, body)`, or `None` when the connection
/// or the response fails (not listening yet).
pub async fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_value_reads_a_key() {
        let text = "JFROG_URL=http://x\nJFROG_ACCESS_TOKEN=t=1\n";
        assert_eq!(env_value(text, "JFROG_URL"), "http://x");
        assert_eq!(env_value(text, "JFROG_ACCESS_TOKEN"), "t=1");
    }

    #[test]
    fn temp_dirs_are_distinct_and_removed() {
        let a = TempDir::new("testkit");
        let b = TempDir::new("testkit");
        assert_ne!(a.path(), b.path());
        let p = a.path().to_path_buf();
        drop(a);
        assert!(!p.exists());
    }
}
