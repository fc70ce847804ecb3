//! provider-xray: Kind declarations and adapters for JFrog Xray (policies, watches, reports, configuration, webhooks).
//!
//! - [`kinds`]: the managed Kinds this provider registers (each served in both scopes).
//! - [`PROVIDER`]: its identity; the JFrog connection and the process entry point are
//!   shared by the four providers (`provider-common`).
//!
//! The 21 managed Kinds are declared on the family layer (`provider-family`), one module
//! per API group: [`policy`], [`configuration`], [`report`], [`watch`], [`webhook`]
//! (generated declaration tables plus the group's REST binding and hooks); [`examples`]
//! holds an example manifest per Kind.
#![warn(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use provider_common::Connections;
use provider_common::{Ping, Provider};
use provider_runtime::managed::KindRegistration;

#[rustfmt::skip]
pub mod checks;
mod common;
pub mod configuration;
pub mod examples;
pub mod policy;
pub mod references;
pub mod report;
pub mod seed;
pub mod watch;
pub mod webhook;

#[cfg(test)]
mod admission_tests;
#[cfg(test)]
mod e2e_tests;
#[cfg(test)]
mod export_tests;
#[cfg(test)]
mod family_suite;

/// The API groups of the managed Kinds.
pub const GROUPS: &[&str] = &["policy", "configuration", "report", "watch", "webhook"];

/// This provider's identity.
pub const PROVIDER: Provider = Provider {
    name: "provider-xray",
    short: "xray",
    about: "Crossplane provider for JFrog Xray (policies, watches, reports, configuration, webhooks)",
    ping: Ping::XrayVersion,
};
/// Provider name (the Deployment, Lease and event source name).
pub const PROVIDER_NAME: &str = PROVIDER.name;
/// Short name: first label of the config group, CRD category.
pub const SHORT_NAME: &str = PROVIDER.short;

/// The managed Kinds of this provider; their JFrog clients share `connections`.
pub fn kinds_with(connections: &Connections) -> Vec<Arc<dyn KindRegistration>> {
    let cache = Arc::new(provider_family::ClientCache::with_connections(
        PROVIDER,
        connections.clone(),
    ));
    let mut kinds = Vec::new();
    kinds.extend(policy::registrations(cache.clone()));
    kinds.extend(configuration::registrations(cache.clone()));
    kinds.extend(report::registrations(cache.clone()));
    kinds.extend(watch::registrations(cache.clone()));
    kinds.extend(webhook::registrations(cache));
    kinds
}

/// The managed Kinds of this provider (for CRD generation and `--help`).
pub fn kinds() -> Vec<Arc<dyn KindRegistration>> {
    kinds_with(&Connections::default())
}

/// Every CRD this provider serves, as generated from the code.
pub fn crds() -> Vec<provider_runtime::crd::GeneratedCrd> {
    provider_runtime::crd::provider_crds_for(SHORT_NAME, &kinds())
}

/// Every Kind declared on the family layer (what `export` can export).
pub fn family_kinds() -> Vec<Arc<provider_family::FamilyKind>> {
    [
        policy::kinds(),
        configuration::kinds(),
        report::kinds(),
        watch::kinds(),
        webhook::kinds(),
    ]
    .concat()
}

/// Runs the provider process with these command-line arguments (the first is the program
/// name), exactly as the `provider-xray` binary does; the `sandbox` command calls it in the
/// child processes it starts (`sandbox provider xray ...`). `export` writes manifests that
/// adopt the platform's existing objects (see `provider_family::export`).
pub async fn run_main(args: Vec<String>) -> anyhow::Result<()> {
    provider_family::export::run_main(PROVIDER, kinds_with, family_kinds, args).await
}

/// Every admission check of `checks` names a declared Kind and fits its schema.
#[cfg(test)]
#[test]
fn checks_fit() {
    let problems = provider_family::checks::verify(&family_kinds(), checks::CHECKS);
    assert!(problems.is_empty(), "{problems:#?}");
}
