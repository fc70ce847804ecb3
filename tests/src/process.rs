//! The provider processes of a sandbox as the fault suite sees them: their pids (the pid files
//! `sandbox up` keeps), killing one (`sandbox provider-kill`), their resident memory and
//! open TCP connections (from `/proc`), their `/metrics` (address from their log), and a
//! second replica of a provider started beside the sandbox's own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{Sandbox, sandbox_binary};

/// The pid in `DIR/providers/<provider>.pid` (e.g. `provider-artifactory`), if any.
pub fn provider_pid(sb: &Sandbox, provider: &str) -> Option<u32> {
    std::fs::read_to_string(sb.dir.join("providers").join(format!("{provider}.pid")))
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

/// The log of a provider the sandbox runs (`DIR/providers/<provider>.log`).
pub fn provider_log(sb: &Sandbox, provider: &str) -> PathBuf {
    sb.dir.join("providers").join(format!("{provider}.log"))
}

/// `sandbox provider-kill <short> --state-dir DIR` (SIGKILL); returns the pid it killed.
pub fn kill_provider(sb: &Sandbox, short: &str) -> u32 {
    let out = Command::new(sandbox_binary())
        .args(["provider-kill", short, "--state-dir"])
        .arg(&sb.dir)
        .output()
        .expect("run sandbox provider-kill");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sandbox provider-kill {short} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "sent signal 9 to provider-x (pid N)"
    stdout
        .rsplit("(pid ")
        .next()
        .and_then(|s| s.trim().trim_end_matches(')').parse().ok())
        .unwrap_or_else(|| panic!("no pid in {stdout:?}"))
}

/// Resident memory of a process in KiB (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The established TCP connections a process holds: its socket inodes (`/proc/<pid>/fd`)
/// found in `/proc/net/tcp{,6}` in state 01.
pub fn tcp_established(pid: u32) -> Option<u64> {
    let mut inodes = std::collections::HashSet::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
        if let Ok(target) = std::fs::read_link(e.path())
            && let Some(inode) = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
        {
            inodes.insert(inode.to_string());
        }
    }
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[3] == "01" && inodes.contains(cols[9]) {
                n += 1;
            }
        }
    }
    Some(n)
}

/// Removes ANSI colour sequences (the providers' text logs colour field names).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The address of the last "serving metrics" line of a provider log (`127.0.0.1:PORT`).
pub fn metrics_address(log: &Path) -> Option<String> {
    let text = strip_ansi(&std::fs::read_to_string(log).ok()?);
    text.lines()
        .rev()
        .filter(|l| l.contains("serving metrics"))
        .filter_map(|l| l.split("address=").nth(1))
        .find_map(|a| a.split_whitespace().next())
        .map(str::to_string)
}

/// `GET http://ADDR/metrics`, if it answers.
pub async fn scrape(addr: &str) -> Option<String> {
    let r = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .ok()?
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .ok()?;
    r.text().await.ok()
}

/// The sum of the samples of metric `name` (exact name, with or without labels) whose label
/// text passes `keep`.
pub fn metric_sum(text: &str, name: &str, keep: impl Fn(&str) -> bool) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let labels = match series.strip_prefix(name)? {
                "" => "",
                rest if rest.starts_with('{') => rest,
                _ => return None,
            };
            keep(labels).then(|| value.parse::<f64>().ok()).flatten()
        })
        .sum()
}

/// JFrog requests a provider process sent that change something (non-GET/HEAD), from its
/// `jfrog_client_requests_total`.
pub fn jfrog_writes_of(metrics: &str) -> u64 {
    metric_sum(metrics, "jfrog_client_requests_total", |labels| {
        !labels.contains("method=\"GET\"") && !labels.contains("method=\"HEAD\"")
    }) as u64
}

/// A second replica of a provider, started beside the sandbox's own (`sandbox provider
/// <short> FLAGS` with the provider's kubeconfig of the sandbox), as a Deployment with two
/// replicas would run it; killed when dropped.
pub struct Replica {
    child: Child,
    pub log: PathBuf,
}

impl Replica {
    /// Starts `sandbox provider <short> --leader-election ... FLAGS`; its log is
    /// `DIR/providers/<log_name>.log`.
    pub fn start(sb: &Sandbox, short: &str, log_name: &str, flags: &[String]) -> Replica {
        let provider = format!("provider-{short}");
        let log = sb.dir.join("providers").join(format!("{log_name}.log"));
        let out = std::fs::File::create(&log).expect("create the replica's log");
        let err = out.try_clone().expect("clone the log handle");
        let child = Command::new(sandbox_binary())
            .args(["provider", short, "--leader-election"])
            .arg(format!("--poll={}s", sb.poll.as_secs().max(1)))
            .args([
                "--metrics-bind-address=127.0.0.1:0",
                "--health-probe-bind-addr=127.0.0.1:0",
            ])
            .args(flags)
            .env(
                "KUBECONFIG",
                sb.dir
                    .join("providers")
                    .join(format!("{provider}.kubeconfig")),
            )
            .env("POD_NAMESPACE", "crossplane-system")
            // As a pod's name: the replica's Lease identity and its events' host.
            .env("HOSTNAME", log_name)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .expect("start the second replica");
        Replica { child, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL, as a crashed pod.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_sums_pick_the_named_series() {
        let text = "# HELP x\njfrog_client_requests_total{service=\"artifactory\",method=\"PUT\",status=\"200\"} 3\njfrog_client_requests_total{service=\"artifactory\",method=\"GET\",status=\"200\"} 7\njfrog_client_requests_total_other 5\ntokio_alive_tasks 12\n";
        assert_eq!(jfrog_writes_of(text), 3);
        assert_eq!(metric_sum(text, "tokio_alive_tasks", |_| true), 12.0);
        assert_eq!(
            metric_sum(text, "jfrog_client_requests_total", |_| true),
            10.0
        );
    }

    #[test]
    fn metrics_address_is_the_last_logged() {
        let dir = crate::TempDir::new("metrics-address");
        let log = dir.path().join("p.log");
        std::fs::write(
            &log,
            "INFO serving metrics \u{1b}[3maddress\u{1b}[0m\u{1b}[2m=\u{1b}[0m127.0.0.1:1234\nINFO other\nINFO serving metrics address=127.0.0.1:5678\n",
        )
        .expect("write log");
        assert_eq!(metrics_address(&log).as_deref(), Some("127.0.0.1:5678"));
    }

    #[test]
    fn own_process_has_rss() {
        assert!(rss_kib(std::process::id()).is_some_and(|k| k > 0));
        assert!(tcp_established(std::process::id()).is_some());
    }
}
