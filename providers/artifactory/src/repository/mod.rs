//! Every repository Kind of provider-artifactory (150: local, remote, virtual, federated; every
//! package type), declared as data on the family layer (`provider-family`) and served by its
//! generic adapter; this module holds what only repositories have.
//!
//! - [`tables`]: the declarations: shared field sets written once and one line per Kind
//!   (generated from the vendored catalog by `cargo xtask generate`, checked in).
//! - [`hooks`]: the repository family's own behaviour: the key rule, federation sync,
//!   project attach/detach, federated member cleanup, and its REST calls (through
//!   `jfrog-client`'s repository API, whose quirks they keep), with observation by list
//!   through `GET /artifactory/api/repositories/configurations`.
//! - [`bulk`]: creations and updates carried by the coalescing descriptor writer as YAML
//!   configuration patches where the platform takes them (`--bulk-repository-writes`).
//! - [`examples`]: the example manifests, generated from the declarations.
//!
//! Unset `projectKey`, `projectEnvironments` and `contentSynchronisation` are unmanaged
//! (`ignore_unset`); the other field semantics are the family layer's.
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
//! - The two Kinds the official provider (built on v12.11.14) adds beyond these 148
//!   (`RemoteAieditorextensionsRepository`, `RemoteJetbrainspluginsRepository`) come from
//!   `catalog/artifactory-repository-extra.json`; Artifactory pins `bypassHeadRequests` to
//!   true for the first, so it is a fixed body member there.
//! - Repository keys follow the official provider's rule (1 to 64 characters, not starting
//!   with a digit, no spaces and none of the special characters its validator refuses, see
//!   `hooks::check_repository_key`), checked before any
//!   request; OCI and Helm OCI `tagRetention` is at least 1 and `maxUniqueTags` at least 0
//!   (admission); `externalDependenciesPatterns` can only be set with
//!   `externalDependenciesEnabled: true` (checked before any write; JFrog would silently
//!   ignore them). The corrections and rules are data in `catalog/overrides.json`.
//!
//! # Deviations
//!
//! - Federated `cleanupOnDelete` deletes members on this same instance only (member access
//!   tokens for other instances are not resolved).

pub mod bulk;
pub mod examples;
pub mod hooks;
#[rustfmt::skip]
pub mod tables;

#[cfg(test)]
mod adapter_tests;
#[cfg(test)]
mod bulk_tests;
#[cfg(test)]
mod e2e_tests;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;

use std::sync::{Arc, OnceLock};

use provider_family::{ClientCache, FamilyKind, Kind, KindDecl};
use provider_runtime::managed::registration::KindRegistration;

pub use hooks::Class;

/// Every declared repository Kind.
pub fn declarations() -> &'static [Kind] {
    tables::KINDS
}

/// The class of a repository Kind (from its `rclass` identity member).
pub fn class(d: &KindDecl) -> Class {
    hooks::class_of(d)
}

/// The package type of a repository Kind (its `packageType` identity member).
pub fn package_type(d: &KindDecl) -> &'static str {
    d.identity_value("packageType").unwrap_or_default()
}

/// Every repository Kind, composed once per process (their `KindInfo` strings are
/// `'static`). Panics only if a declaration does not compose, which the tests rule out.
pub fn kinds() -> &'static [Arc<FamilyKind>] {
    static KINDS: OnceLock<Vec<Arc<FamilyKind>>> = OnceLock::new();
    KINDS.get_or_init(|| {
        provider_family::compose_with_references(
            tables::KINDS,
            crate::checks::CHECKS,
            crate::references::REFERENCES,
        )
    })
}

/// The runtime registrations of every repository Kind, sharing one client cache; each hands
/// its controller's `--poll` to the cache when it starts, which turns observation by list on
/// with that TTL.
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    provider_family::registrations(kinds(), cache)
}
