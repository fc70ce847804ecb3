//! End-to-end test of `sandbox bench`: the built binary creates a few repositories through the
//! real provider process and reports its figures as JSON. Figures are measured, not asserted:
//! only the report's shape and that everything became Ready are checked.

use std::process::Command;
use std::time::Duration;

/// Generous: a debug build on a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(600);

#[test]
fn bench_reports_json_figures_for_five_repositories() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandbox"));
    cmd.env_remove("RUST_LOG").env_remove("KUBECONFIG").args([
        "bench",
        "--resources",
        "5",
        "--latency-ms",
        "5",
        "--poll",
        "2s",
        "--steady-polls",
        "1",
        "--json",
        "--timeout",
        "8m",
    ]);
    let output = testkit::run_with_deadline(cmd, WAIT);
    let status = output.status;
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        status.success(),
        "status {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}\n{err}"));

    for field in [
        "resources",
        "latency_ms",
        "poll_seconds",
        "steady_polls",
        "by_class",
        "applied",
        "apply_failures",
        "ready",
        "all_ready",
        "all_ready_seconds",
        "ready_p50_seconds",
        "ready_p99_seconds",
        "ready_max_seconds",
        "lower_bound_seconds",
        "ratio_to_lower_bound",
        "creation_requests",
        "creation_requests_total",
        "creation_requests_per_resource",
        "kube_writes_creation",
        "kube_writes_creation_per_resource",
        "kube_reads_creation",
        "kube_reads_creation_per_resource",
        "creation_cpu_seconds_sandbox",
        "creation_cpu_seconds_providers",
        "steady_requests_per_poll",
        "steady_requests_per_poll_total",
        "steady_requests_per_resource_per_poll",
        "providers",
    ] {
        assert!(report.get(field).is_some(), "no {field} in {report:#}");
    }
    assert_eq!(report["resources"], 5, "{report:#}");
    assert_eq!(report["applied"], 5, "{report:#}");
    assert_eq!(report["ready"], 5, "{report:#}");
    assert_eq!(report["all_ready"], true, "{report:#}");
    assert!(report["all_ready_seconds"].is_f64(), "{report:#}");
    assert!(report["ready_p99_seconds"].is_f64(), "{report:#}");
    // Local, remote and virtual repositories among the five.
    for class in ["local", "remote", "virtual"] {
        assert!(
            report["by_class"][class].as_u64().unwrap_or(0) > 0,
            "no {class} repository: {report:#}"
        );
    }
    // The repositories were written by the provider: one PUT each, or (bulk repository
    // writes, the default where the platform takes them) descriptor PATCHes carrying several.
    let writes = ["PUT", "PATCH"]
        .iter()
        .map(|m| report["creation_requests"][m].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert!((1..=5).contains(&writes), "{report:#}");
    // Each creation wrote its MR's status at least once, and its finalizer and annotations
    // by updates, all as the provider's service account.
    for verb in ["update", "update/status"] {
        assert!(
            report["kube_writes_creation"][verb].as_u64().unwrap_or(0) >= 5,
            "{verb}: {report:#}"
        );
    }
    let providers = report["providers"].as_array().expect("providers array");
    assert_eq!(providers.len(), 1, "{report:#}");
    let p = &providers[0];
    assert_eq!(p["name"], "provider-artifactory", "{report:#}");
    for field in [
        "pid",
        "idle_rss_mib",
        "peak_rss_mib",
        "cpu_seconds",
        "start_to_leader_seconds",
        "apply_to_first_synced_seconds",
        "start_to_first_reconcile_seconds",
    ] {
        assert!(p.get(field).is_some(), "no {field} in {p:#}");
    }
    if cfg!(target_os = "linux") {
        assert!(p["peak_rss_mib"].as_f64().unwrap_or(0.0) > 0.0, "{p:#}");
        assert!(p["idle_rss_mib"].as_f64().unwrap_or(0.0) > 0.0, "{p:#}");
        // The creation took CPU on both sides of the APIs, and no more than the whole run's.
        let sandbox = report["creation_cpu_seconds_sandbox"]
            .as_f64()
            .unwrap_or(0.0);
        let providers = report["creation_cpu_seconds_providers"]
            .as_f64()
            .unwrap_or(0.0);
        assert!(sandbox > 0.0 && providers > 0.0, "{report:#}");
        assert!(
            providers <= p["cpu_seconds"].as_f64().unwrap_or(0.0),
            "{report:#}"
        );
    }
    assert!(p["start_to_first_reconcile_seconds"].is_f64(), "{p:#}");
}
