//! provider-platform: Kind declarations and adapters for the JFrog Platform (access, authentication, configuration, lifecycle).
//!
//! - [`kinds`]: the managed Kinds this provider registers (each served in both scopes).
//! - [`PROVIDER`]: its identity; the JFrog connection and the process entry point are
//!   shared by the four providers (`provider-common`).
//!
//! The 17 Kinds of the platform catalog ([`platform`]) are declared on the family
//! layer (`provider-family`), each in both scopes.
#![warn(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use provider_common::Connections;
use provider_common::{Ping, Provider};
use provider_runtime::managed::KindRegistration;

#[rustfmt::skip]
pub mod checks;
pub mod platform;
pub mod references;

#[cfg(test)]
mod admission_tests;
#[cfg(test)]
mod family_suite;
#[cfg(test)]
mod list_tests;

/// This provider's identity.
pub const PROVIDER: Provider = Provider {
    name: "provider-platform",
    short: "platform",
    about: "Crossplane provider for the JFrog Platform (access, authentication, configuration, lifecycle)",
    ping: Ping::ArtifactoryVersion,
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
    platform::registrations(cache)
}

/// The declared Kinds of this provider (what `export` lists).
pub fn family_kinds() -> Vec<Arc<provider_family::FamilyKind>> {
    platform::kinds().to_vec()
}

/// The managed Kinds of this provider (for CRD generation and `--help`).
pub fn kinds() -> Vec<Arc<dyn KindRegistration>> {
    kinds_with(&Connections::default())
}

/// Every CRD this provider serves, as generated from the code.
pub fn crds() -> Vec<provider_runtime::crd::GeneratedCrd> {
    provider_runtime::crd::provider_crds_for(SHORT_NAME, &kinds())
}

/// Runs the provider process with these command-line arguments (the first is the program
/// name), exactly as the `provider-platform` binary does; the `sandbox` command calls it in the
/// child processes it starts (`sandbox provider platform ...`).
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
