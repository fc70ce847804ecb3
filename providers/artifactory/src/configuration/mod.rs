//! The configuration Kinds of provider-artifactory (group `configuration`), declared as data
//! on the family layer.
//!
//! Two kinds of REST binding ([`rest`]):
//!
//! - the system configuration descriptor Kinds (Backup, Proxy, PropertySet,
//!   RepositoryLayout, LdapSetting, LdapGroupSetting, MailServer, TrashcanConfig,
//!   GeneralSecurity, OauthSettings, SamlSettings): each a [`descriptor::Section`] of the
//!   one descriptor per platform, observed by one shared `GET` per poll and written through
//!   one coalescing writer (see [`descriptor`]);
//! - plain REST objects (archive and cleanup policies, LDAP v2 settings and groups) as
//!   [`provider_family::Paths`].
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
pub mod rest;
#[rustfmt::skip]
pub mod tables;

use std::sync::{Arc, OnceLock};

use provider_family::{ClientCache, FamilyKind, Hooks, KindDecl};
use provider_runtime::managed::registration::KindRegistration;

/// The family's hooks.
pub static HOOKS: ConfigurationHooks = ConfigurationHooks;

/// The family's behaviour beyond the generic adapter: the identifier description.
#[derive(Debug, Clone, Copy)]
pub struct ConfigurationHooks;

impl Hooks for ConfigurationHooks {
    fn id_description(&self) -> &'static str {
        "The JFrog identifier (key or name; the constant of a singleton)."
    }
}

/// Every declared configuration Kind.
pub fn declarations() -> &'static [KindDecl] {
    tables::KINDS
}

/// Every configuration Kind, composed once per process.
pub fn kinds() -> &'static [Arc<FamilyKind>] {
    static KINDS: OnceLock<Vec<Arc<FamilyKind>>> = OnceLock::new();
    KINDS.get_or_init(|| provider_family::compose(tables::KINDS))
}

/// The runtime registrations of every configuration Kind, sharing the provider's client cache
/// (whose `--poll` is the TTL of the shared descriptor read).
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    descriptor::use_settings_of(&cache);
    provider_family::registrations(kinds(), cache)
}

#[cfg(test)]
mod descriptor_tests;
#[cfg(test)]
mod tests;
