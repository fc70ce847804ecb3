//! provider-artifactory: Kind declarations and adapters for JFrog Artifactory (repositories, webhooks, security, replication, users, lifecycle, artifacts).
//!
//! - [`kinds`]: the managed Kinds this provider registers (each served in both scopes).
//! - [`PROVIDER`]: its identity; the JFrog connection and the process entry point are
//!   shared by the four providers (`provider-common`).
//!
//! Every Kind is declared on the family layer (`provider-family`), one module per family:
//! repositories ([`repository`]), webhooks ([`webhook`]), users, security and replication
//! ([`access`]), and system configuration, lifecycle and artifacts ([`configuration`]).
#![warn(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use provider_common::Connections;
use provider_common::{Ping, Provider};
use provider_runtime::managed::KindRegistration;
use repository::bulk::BulkMode;

#[rustfmt::skip]
pub mod checks;
pub mod access;
pub mod configuration;
pub mod local_file;
pub mod references;
pub mod repository;
pub mod seed;
pub mod webhook;

#[cfg(test)]
mod admission_tests;
#[cfg(test)]
mod export_tests;
#[cfg(test)]
mod preview_tests;
#[cfg(test)]
mod upjet_tests;

#[cfg(test)]
mod family_suite;

/// This provider's identity.
pub const PROVIDER: Provider = Provider {
    name: "provider-artifactory",
    short: "artifactory",
    about: "Crossplane provider for JFrog Artifactory (repositories, webhooks, security, replication, users, lifecycle, artifacts)",
    ping: Ping::ArtifactoryVersion,
};
/// Provider name (the Deployment, Lease and event source name).
pub const PROVIDER_NAME: &str = PROVIDER.name;
/// Short name: first label of the config group, CRD category.
pub const SHORT_NAME: &str = PROVIDER.short;

/// This provider's client cache: its clients share `connections`, and it holds the
/// provider's system configuration descriptors (one shared read, its TTL the cache's
/// `--poll`, and one coalescing writer per platform: [`configuration::descriptor::Descriptors`])
/// and its repository bulk writes in `bulk` mode ([`repository::bulk::BulkWrites`]).
pub fn client_cache(connections: &Connections, bulk: BulkMode) -> provider_family::ClientCache {
    let cache = provider_family::ClientCache::with_connections(PROVIDER, connections.clone());
    let descriptors =
        configuration::descriptor::Descriptors::new(cache.snapshot_settings().clone());
    cache
        .with_state(descriptors)
        .with_state(repository::bulk::BulkWrites::new(bulk))
}

/// The managed Kinds of this provider; their JFrog clients share `connections`, and
/// repository writes go in bulk per `bulk` (see [`repository::bulk`]).
pub fn kinds_with(connections: &Connections, bulk: BulkMode) -> Vec<Arc<dyn KindRegistration>> {
    let mut kinds = Vec::new();
    let cache = Arc::new(client_cache(connections, bulk));
    kinds.extend(repository::registrations(cache.clone()));
    kinds.extend(webhook::registrations(cache.clone()));
    kinds.extend(access::registrations(cache.clone()));
    kinds.extend(configuration::registrations(cache));
    kinds
}

/// The managed Kinds of this provider (for CRD generation and `--help`).
pub fn kinds() -> Vec<Arc<dyn KindRegistration>> {
    kinds_with(&Connections::default(), BulkMode::Off)
}

/// Every CRD this provider serves, as generated from the code.
pub fn crds() -> Vec<provider_runtime::crd::GeneratedCrd> {
    provider_runtime::crd::provider_crds_for(SHORT_NAME, &kinds())
}

/// Every Kind declared on the family layer (what `export` can export).
pub fn family_kinds() -> Vec<Arc<provider_family::FamilyKind>> {
    let mut kinds = Vec::new();
    kinds.extend_from_slice(repository::kinds());
    kinds.extend_from_slice(webhook::kinds());
    kinds.extend_from_slice(access::kinds());
    kinds.extend_from_slice(configuration::kinds());
    kinds
}

/// Runs the provider process with these command-line arguments (the first is the program
/// name), exactly as the `provider-artifactory` binary does; the `sandbox` command calls it in the
/// child processes it starts (`sandbox provider artifactory ...`). `export` writes manifests
/// that adopt the platform's existing objects (see `provider_family::export`).
///
/// Beyond the shared flags: `--bulk-repository-writes=auto|on|off` (default `auto`), whether
/// repository creations and updates may go through the descriptor writer as YAML
/// configuration patches (see [`repository::bulk`]).
pub async fn run_main(args: Vec<String>) -> anyhow::Result<()> {
    provider_family::export::run_main_with_flags(
        PROVIDER,
        |connections, flags: &repository::bulk::Flags| kinds_with(connections, flags.bulk),
        family_kinds,
        args,
    )
    .await
}

/// Every admission check of `checks` names a declared Kind and fits its schema.
#[cfg(test)]
#[test]
fn checks_fit() {
    let problems = provider_family::checks::verify(&family_kinds(), checks::CHECKS);
    assert!(problems.is_empty(), "{problems:#?}");
}
