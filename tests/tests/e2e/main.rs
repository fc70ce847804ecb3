//! The end-to-end suites, one test binary: `cargo test` runs a binary's tests in parallel but
//! the binaries one after another, so the suites share one binary (one link instead of one
//! per suite, and a suite waiting on its sandbox leaves the CPU to another). A suite is a
//! module: `cargo test -p e2e -- repositories::` runs one.

mod activation;
mod bench_faults;
mod export;
mod export_access;
mod injected_identity;
mod package;
mod preview;
mod projects;
mod references;
mod reliability_credentials;
mod reliability_input;
mod reliability_jfrog;
mod reliability_process;
mod repositories;
mod security;
mod webhooks;
