//! Test plumbing shared by the workspace's integration and end-to-end tests.
//!
//! Several test suites need the same steps: start the Kubernetes API test server and the
//! JFrog simulator, build a kube client for a token, give a provider's identity exactly the
//! RBAC Crossplane grants a provider (docs/managed-reconciler.md §15.4), install CRDs and wait
//! until they are Established, poll for a condition with a timeout and a message that says what was
//! awaited, run `kubectl` against a kubeconfig, and make sure no child process outlives a test.
//!
//! - [`wait`]: [`wait_for`] (async), [`wait_for_with`] (with details on timeout) and
//!   [`wait_until`] (blocking, for `#[test]`s that drive processes);
//! - [`cluster`]: [`start_kube_server`], [`client_for`], [`install_crds`], [`Cluster`] (a
//!   server with an admin client and a provider client), condition readers;
//! - [`rbac`]: [`provider_role`] and [`grant`], the ClusterRole and binding Crossplane's RBAC
//!   manager creates for a provider;
//! - [`sim`]: [`start_sim`], the JFrog simulator;
//! - [`process`]: [`ChildGuard`], [`kubectl`], [`temp_dir`], [`run_with_deadline`], ...
//!
//! This crate depends on the sandbox crates and general libraries only, never on a provider
//! crate, so every provider can use it as a dev-dependency. Everything here panics with a
//! message instead of returning errors: it runs inside tests.

pub mod cluster;
pub mod process;
pub mod rbac;
pub mod sim;
pub mod wait;

pub use cluster::{
    Cluster, api_resource, client_for, condition, conditions, create_crd, ensure_namespace,
    install_crd, install_crds, request_count, start_kube_server,
};
pub use process::{
    ChildGuard, TempDir, alive, env_value, free_port, http_get, kubectl, kubectl_ok,
    require_kubectl, run_with_deadline, temp_dir,
};
pub use rbac::{cluster_role, grant, provider_role, provider_rules, provider_user, rbac_api};
pub use sim::{start_sim, start_sim_with};
pub use wait::{wait_for, wait_for_with, wait_until};

/// The first word of the field `field` (`VmRSS`: KiB, `Uid`: the real UID) of
/// `/proc/<pid>/status`; `None` when the process or the field is gone (or not on Linux).
pub fn proc_status(pid: u32, field: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next().map(str::to_string)
    })
}
