//! Every repository Kind of provider-artifactory (local, remote, virtual, federated; every
//! package type), declared as data and served by one generic adapter.
//!
//! - [`decl`]: the declaration vocabulary (fields, Kinds, composition).
//! - [`tables`]: the declarations themselves: shared field sets written once and one line per
//!   Kind (generated once from the reference catalog by `tools/gen_tables.py`, checked in).
//! - [`schema`]: the `forProvider`/`atProvider` schemas for the CRDs.
//! - [`wire`]: `forProvider` ⇄ JFrog JSON.
//! - [`diff`]: up-to-date comparison, late initialisation, write-only hashes.
//! - [`adapter`]: the `ManagedKind`, `Connector` and `ExternalClient` for all of them.
//! - [`snapshot`]: observation by list: one shared snapshot of all repository
//!   configurations per JFrog client, refreshed once per poll interval.
//! - [`examples`]: the example manifests, generated from the declarations.
//!
//! # Field semantics
//!
//! Each field is one of: set by the user (sent and compared); unset with a provider default
//! (the default is sent and compared, so removing a field resets it in JFrog, as Terraform
//! does); unset without a default (sent empty on update, compared against empty); unset and
//! server-defaulted (`late_init`: not sent, not compared, late-initialised from JFrog);
//! unset and unmanaged (`ignore_unset`: `projectKey`, `projectEnvironments`,
//! `contentSynchronisation`). Adopting an existing repository therefore resets fields the
//! manifest leaves unset to the provider defaults; copy `atProvider` into the manifest to keep
//! them (or observe first with `managementPolicies: ["Observe"]`).
//!
//! # Catalog corrections (verified against jfrog/terraform-provider-artifactory where noted)
//!
//! - `projectKey` / `projectEnvironments`: the catalog gives local/remote bases a default of
//!   `""`/`[]`, so an unset key would detach a repository a project-side Kind attached.
//!   Here unset means unmanaged; environments are compared only while the repository is in
//!   a project (JFrog ignores them otherwise). A direct move between two projects (which
//!   upstream does not handle) detaches and re-attaches.
//! - Federated `tagRetention`: the catalog has no default and says it is sent as 0; upstream
//!   validates it with `IntAtLeast(1)` (verified in v12.11.7 `local/..._docker_v2_...go`, whose
//!   schema the federated Kinds reuse), so unset sending 0 is a Terraform bug; the local
//!   default (1) is used.
//! - `FederatedDebianRepository` `indexCompressionFormats`: no default and omitted when empty,
//!   after which JFrog answers `["bz2"]` (a perpetual diff upstream); it gets the local Kind's
//!   default `["bz2"]`.
//! - `externalDependenciesPatterns` (remote docker/oci/helmoci/helm, virtual bower/npm/go):
//!   JFrog answers `["**"]` when none were sent, so they are server-defaulted (late-initialised,
//!   not compared while unset) instead of "no default".
//! - `FederatedDockerRepository`/`FederatedDockerV2Repository` `blockPushingSchema1`: sent as
//!   false when unset, so it has the provider default false (not server-defaulted).
//! - `FederatedDockerV1Repository` `maxUniqueTags`: accepted but always sent as 0 upstream;
//!   here output only, like `LocalDockerV1Repository` (the fixed body sends 0).
//! - `RemoteCargoRepository` `anonymousAccess`: "no default, sent as false" is default false.
//! - `VirtualGoRepository` `externalDependenciesEnabled`: upstream omits false from the body
//!   (`json:"externalDependenciesEnabled,omitempty"`, verified), so false can never be sent;
//!   here false is sent.
//! - Kept as upstream although odd: `RemoteCargoRepository` `gitRegistryUrl` defaults to
//!   `https://registry.Cargo.io` (verified in v12.11.7; the UI suggests
//!   `https://index.crates.io/`), so manifests behave as with the official provider.
//! - `RemoteHelmRepository` `externalDependenciesPatterns`: sent and compared only while
//!   `externalDependenciesEnabled` is true, like the other remote Kinds.
//! - Federated `member`: JFrog lists the repository itself as a member; that entry is not
//!   drift unless the user lists it.
//! - The two Kinds the official provider (built on v12.11.14) adds beyond these 148 could not
//!   be established from any stored upstream snapshot, so they are not declared.
//!
//! # Deviations
//!
//! - Secret values inside list elements (`customHttpHeaders[].valueSecretRef`) are declared to
//!   the runtime as `customHttpHeaders.<i>.valueSecretRef` (i < 5); they resolve only if the
//!   runtime walks numeric path segments into arrays.
//! - Federated `cleanupOnDelete` deletes members on this same instance only (member access
//!   tokens for other instances are not resolved).
//! - Write-only values are compared by a salted SHA-256 hash (salt: MR UID) stored in an
//!   annotation after Create and in `atProvider.appliedWriteOnlyHashes` after Update; a hash
//!   of a weak password can be brute-forced by someone who can read the MR.

pub mod adapter;
pub mod decl;
pub mod diff;
pub mod examples;
pub mod schema;
pub mod snapshot;
#[rustfmt::skip]
pub mod tables;
pub mod wire;

#[cfg(test)]
mod adapter_tests;
#[cfg(test)]
mod e2e_tests;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;

use std::sync::{Arc, OnceLock};

use provider_runtime::managed::registration::{KindRegistration, register_shared};

pub use adapter::{ClientCache, RepositoryClient, RepositoryConnector, RepositoryKind};
pub use decl::{Class, KindDecl};

/// Every declared repository Kind.
pub fn declarations() -> &'static [KindDecl] {
    tables::KINDS
}

/// Every repository Kind, composed once per process (their `KindInfo` strings are
/// `'static`). Panics only if a declaration does not compose, which the tests rule out.
pub fn kinds() -> &'static [Arc<RepositoryKind>] {
    static KINDS: OnceLock<Vec<Arc<RepositoryKind>>> = OnceLock::new();
    KINDS.get_or_init(|| {
        tables::KINDS
            .iter()
            .map(|d| {
                Arc::new(RepositoryKind::new(d).expect("repository declarations compose (tested)"))
            })
            .collect()
    })
}

/// The runtime registrations of every repository Kind, sharing one client cache; each hands
/// its controller's `--poll` to the cache when it starts, which turns observation by list on
/// with that TTL.
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    kinds()
        .iter()
        .map(|k| {
            let connector = RepositoryConnector::new(k, cache.clone());
            let inner = register_shared(k.clone(), Arc::new(connector));
            Arc::new(snapshot::PollAwareRegistration::new(
                inner,
                cache.snapshot_settings().clone(),
            )) as Arc<dyn KindRegistration>
        })
        .collect()
}
