//! Issue 17: the fault suite from the CLI. The built `sandbox bench` creates 20 repositories
//! while the simulator answers 20 % of the JFrog requests 503 and loses the answer of 30 % of
//! the writes it committed, and while provider-artifactory is SIGKILLed every 3 s (restarted by
//! the sandbox's supervision); the faults go after 8 s. Its JSON report must show the faults
//! and kills it injected, and the end state: every repository in JFrog once, none missing,
//! every managed resource Ready and Synced, the verdict "pass" and exit status 0.
//!
//! About 25 s in a debug build (most of it the sandbox's start-up and the restarted
//! process's wait for the dead one's 5 s leader Lease).

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

/// Generous: a debug build on a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(300);

const RESOURCES: u64 = 20;

#[test]
fn bench_with_faults_and_kills_reports_a_clean_end_state() {
    let mut cmd = Command::new(e2e::sandbox_binary());
    cmd.env_remove("RUST_LOG")
        .env_remove("KUBECONFIG")
        .current_dir(e2e::repo_root())
        .args([
            "bench",
            "--resources",
            &RESOURCES.to_string(),
            "--latency-ms",
            "20",
            "--poll",
            "2s",
            "--steady-polls",
            "1",
            "--fault",
            "5xx:0.2",
            "--fault",
            "lost:30%",
            "--kill-every",
            "3s",
            "--fault-for",
            "8s",
            "--timeout",
            "4m",
            "--json",
        ]);
    let output = testkit::run_with_deadline(cmd, WAIT);
    let status = output.status;
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    let report: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("not JSON ({e}), status {status}:\n{out}\nstderr:\n{err}"));
    let f = &report["fault_run"];
    let context = format!("status {status}\nreport:\n{out}\nstderr:\n{err}");

    // What was injected.
    let faults = f["faults"].as_array().expect("faults per spec");
    let specs: Vec<&str> = faults.iter().filter_map(|x| x["spec"].as_str()).collect();
    assert_eq!(specs, ["5xx:0.2", "lost:30%"], "{context}");
    for x in faults {
        assert!(
            x["matched"].as_u64() > Some(0),
            "{x} matched nothing\n{context}"
        );
    }
    let fired: u64 = faults.iter().filter_map(|x| x["fired"].as_u64()).sum();
    assert!(fired > 0, "no fault fired\n{context}");
    assert_eq!(f["faults_fired"].as_u64(), Some(fired), "{context}");
    let kills = f["kills"].as_u64().expect("kills");
    assert!(kills > 0, "no kill\n{context}");
    assert!(
        f["restarts"].as_u64() >= Some(kills),
        "every killed process was started again\n{context}"
    );
    assert!(f["fault_seconds"].as_f64() >= Some(8.0), "{context}");

    // What was left.
    assert_eq!(f["expected_objects"].as_u64(), Some(RESOURCES), "{context}");
    assert_eq!(f["jfrog_objects"].as_u64(), Some(RESOURCES), "{context}");
    assert_eq!(f["duplicates"].as_u64(), Some(0), "duplicates\n{context}");
    assert_eq!(f["missing"].as_u64(), Some(0), "missing\n{context}");
    assert_eq!(f["not_ready"].as_u64(), Some(0), "not Ready\n{context}");
    assert!(f["converged_seconds"].as_f64().is_some(), "{context}");
    assert_eq!(report["ready"].as_u64(), Some(RESOURCES), "{context}");
    assert_eq!(report["all_ready"], true, "{context}");
    assert_eq!(f["pass"], true, "{context}");
    assert!(status.success(), "{context}");
    assert!(
        err.contains("killed provider-artifactory") && err.contains("faults removed after"),
        "{context}"
    );
}
