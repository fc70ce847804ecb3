//! The configuration, lifecycle and artifact Kinds of provider-artifactory (groups
//! `configuration`, `lifecycle`, `artifact`), declared as data on the family layer.
//!
//! Two kinds of REST binding ([`rest`]):
//!
//! - the system configuration descriptor Kinds (Backup, Proxy, PropertySet,
//!   RepositoryLayout, LdapSetting, LdapGroupSetting, MailServer, TrashcanConfig,
//!   GeneralSecurity, OauthSettings, SamlSettings): each a [`descriptor::Section`] of the
//!   one descriptor per platform, observed by one shared `GET` per poll and written through
//!   one coalescing writer (see [`descriptor`]);
//! - plain REST objects (archive and cleanup policies, LDAP v2 settings and groups) as
//!   [`provider_family::Paths`];
//! - the lifecycle and artifact Kinds (groups `lifecycle`, `artifact`: ReleaseBundleV2
//!   `<name>:<version>`, ReleaseBundleV2Promotion `<name>:<version>:<environment>`, Artifact
//!   with the server-assigned `<repository>/<path>`, ItemProperties `<repo>:<path>`) with
//!   their own bindings ([`objects`]). ItemProperties manages only the keys it declares.
//!
//! Singletons (MailServer, TrashcanConfig, GeneralSecurity, OauthSettings, SamlSettings)
//! have a constant identifier; deleting one resets it to JFrog's defaults (TrashcanConfig,
//! OauthSettings, SamlSettings), removes it (MailServer) or leaves it (GeneralSecurity), as
//! upstream does. Secrets (LDAP manager passwords, proxy passwords, OAuth client secrets)
//! come from Secret references, are never read back and are compared by a salted hash.
//!
//! # Catalog corrections (data, in `catalog/overrides.json`, section `configuration`)
//!
//! - GeneralSecurity, OauthSettings and SamlSettings are singletons with upstream's constant
//!   identifiers, not server-assigned.
//! - LDAP manager passwords are write-only secrets, not server-defaulted.

pub mod descriptor;
pub mod examples;
pub mod hooks;
pub mod objects;
pub mod rest;
#[rustfmt::skip]
pub mod tables;

use std::sync::{Arc, OnceLock};

use provider_family::{ClientCache, Described, FamilyKind, Kind};
use provider_runtime::managed::registration::KindRegistration;

/// The family's hooks: those of every Kind without its own ([`hooks`]: an artifact's
/// identifier from its deploy answer and content rule, the removal of an ItemProperties
/// MR's declared keys on delete, a policy's enablement, a project's bundle address).
pub static HOOKS: Described = Described(
    "The JFrog identifier (key or name; the constant of a singleton; <repository>/<path> of an artifact).",
);

/// Every declared configuration Kind.
pub fn declarations() -> &'static [Kind] {
    tables::KINDS
}

/// Every configuration Kind, composed once per process.
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

/// The runtime registrations of every configuration Kind, sharing the provider's client cache
/// (the descriptor Kinds share the platform's read and writer through the cache's
/// [`descriptor::Descriptors`], see [`crate::client_cache`]).
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    provider_family::registrations(kinds(), cache)
}

#[cfg(test)]
mod artifact_search_tests;
#[cfg(test)]
mod bundle_list_tests;
#[cfg(test)]
mod descriptor_tests;
#[cfg(test)]
mod enablement_tests;
#[cfg(test)]
mod file_path_tests;
#[cfg(test)]
mod identifier_tests;
#[cfg(test)]
mod item_properties_tests;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod promotion_list_tests;
#[cfg(test)]
mod secret_ref_tests;
#[cfg(test)]
mod tests;
