//! The user, security and replication Kinds of provider-artifactory (groups `user`,
//! `security` and `replication`: 20 Kinds), declared as data on the family layer.
//!
//! What the family owns: the REST bindings ([`rest`]: one per Kind, data), the hooks of the
//! Kinds that need them ([`hooks`]: the identifier JFrog assigns to a token or API key, the
//! parameter rules the schema cannot express, what `export` skips or tells apart) and the
//! example manifests.
//!
//! # Identifiers
//!
//! - Users, groups, certificates, trusted keys, environments, key pairs, permission targets
//!   and Vault configurations are named by the external name.
//! - The five replication Kinds are named by `repoKey` (the catalog calls them
//!   server-assigned, but every call is `/api/replications/{repo_key}`): a lost create
//!   answer is resolved by the next observe.
//! - The two policies are platform singletons: the first MR to observe one manages it, a
//!   second is refused (Synced=False naming the first) and deleting it leaves the policy
//!   alone; deleting the first resets the policy as JFrog's own UI does (disabled).
//! - A ScopedToken and an APIKey are server-assigned (the token id, the CRC-32 of the key,
//!   as Terraform computes it). Their generated values exist only in the create answer, so a
//!   create whose answer is lost cannot be recovered: the reconciler stops with "cannot
//!   determine creation result" (one token exists in JFrog, none is minted twice). A token
//!   living less than Access's persistency threshold (10800 s by default) is never stored, so
//!   no list shows it: it is taken as existing until it expires, then a new one is issued.
//! - The AnonymousUser can only be observed (imported by its name).
//!
//! # Secrets
//!
//! Passwords, private keys, passphrases, the certificate PEM and Vault AppRole credentials
//! come from Secret references, are sent on writes and never read back: compared by a salted
//! hash. A token's access, refresh and reference tokens and an API key go to the connection
//! Secret only (`attribute.access_token`, ... as the official provider publishes them).
//!
//! # Retired APIs
//!
//! API keys are served while the platform has them (Artifactory before 7.98) and refused
//! otherwise, before any write, with a message naming ScopedToken. Permission targets and
//! the pull/push replications (retired in the Terraform provider) are served through the
//! APIs JFrog still answers (`/api/v2/security/permissions`, `/api/replications`).
//!
//! # Users
//!
//! The user API depends on the platform: the Access API (`/access/api/v2/users`) from
//! Artifactory 7.84.3, the security API (`/artifactory/api/security/users`) before; the
//! version is read once per platform and process. On the Access API an update's `groups`
//! go through `PATCH /access/api/v2/users/{name}/groups` (`{add, remove}` against the
//! user's memberships), since its partial update takes no `groups`.
//!
//! # Observation by list
//!
//! Every Kind whose objects JFrog lists is observed through the family layer's shared
//! snapshot: one list request per family, ProviderConfig and poll, whatever the number of
//! MRs. Certificates, environments, Vault configurations and tokens (`{"tokens": [...]}`)
//! are complete in their list, so an observe costs no further request. The users list
//! (the Access or the security API, by version), the groups and permission targets lists
//! (a name and a link each) and the replications list (one element per target, so a
//! multi-push repository's targets are read together) show which objects exist: an object
//! they lack is missing without a read, a listed one is read by key ("list, then read
//! each"). `export` lists the same way and skips what the platform creates itself (the
//! admin and anonymous users, the `readers` group, the default permission targets); users
//! are exported as User, their password (never shown) a Secret reference to fill.
//!
//! # Generated passwords
//!
//! A User or UnmanagedUser without a password (and with the internal password enabled)
//! gets a random one on create, as the official provider generates one: sent once,
//! published in the connection Secret only (`attribute.password`), compared by hash after.

#[cfg(test)]
mod behaviour_tests;
pub mod examples;
pub mod hooks;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod lost_answer;
pub mod rest;
#[rustfmt::skip]
pub mod tables;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use provider_family::{ClientCache, FamilyHooks, FamilyKind, Hooks, Kind};
use provider_runtime::managed::registration::KindRegistration;
use serde_json::Value;

/// The family's hooks: those of every Kind without its own ([`hooks`]).
pub static HOOKS: AccessHooks = AccessHooks;

/// The family's behaviour shared by every Kind: none beyond the generic adapter (what a
/// Kind needs more is its own, in [`hooks`]).
#[derive(Debug, Clone, Copy)]
pub struct AccessHooks;

/// CRC-32 (IEEE), as Terraform's `schema.HashString` computes an API key's id.
pub fn crc32(s: &str) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for b in s.bytes() {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The Kind of each repository's replication, from its repository's class (`LOCAL`,
/// `REMOTE`, as the repositories list spells it) and how many targets the replications list
/// shows for it; a repository of another class (or gone) gets none.
fn replication_kinds(
    class: &BTreeMap<&str, &str>,
    entries: &[Value],
) -> BTreeMap<String, &'static str> {
    let mut targets: BTreeMap<&str, usize> = BTreeMap::new();
    for e in entries {
        if let Some(k) = e["repoKey"].as_str() {
            *targets.entry(k).or_default() += 1;
        }
    }
    targets
        .into_iter()
        .filter_map(|(key, n)| {
            let kind = match class.get(key).map(|c| c.to_ascii_lowercase()).as_deref() {
                Some("remote") => "RemoteRepositoryReplication",
                Some("local") if n > 1 => "LocalRepositoryMultiReplication",
                Some("local") => "LocalRepositorySingleReplication",
                _ => return None,
            };
            Some((key.to_string(), kind))
        })
        .collect()
}

/// Access's default persistency threshold: a token that lives less is not stored (an admin
/// may change it in `access.config.yaml`; the default is what the providers assume).
pub const PERSISTENCY_THRESHOLD: Duration = Duration::from_secs(10800);

impl FamilyHooks for AccessHooks {}

impl Hooks for AccessHooks {}

/// Every declared Kind of the family.
pub fn declarations() -> &'static [Kind] {
    tables::KINDS
}

/// Every Kind of the family, composed once per process.
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

/// The runtime registrations of every Kind, sharing the provider's client cache.
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    provider_family::registrations(kinds(), cache)
}

#[cfg(test)]
mod replication_kind_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_replication_kind_comes_from_the_class_and_the_targets() {
        let class = BTreeMap::from([
            ("libs", "LOCAL"),
            ("many", "LOCAL"),
            ("npm", "REMOTE"),
            ("v", "VIRTUAL"),
        ]);
        let entries = [
            json!({"repoKey": "libs", "url": "https://a"}),
            json!({"repoKey": "many", "url": "https://a"}),
            json!({"repoKey": "many", "url": "https://b"}),
            json!({"repoKey": "npm"}),
            json!({"repoKey": "v"}),
            json!({"repoKey": "gone"}),
        ];
        let got = replication_kinds(&class, &entries);
        assert_eq!(
            got,
            BTreeMap::from([
                ("libs".to_string(), "LocalRepositorySingleReplication"),
                ("many".to_string(), "LocalRepositoryMultiReplication"),
                ("npm".to_string(), "RemoteRepositoryReplication"),
            ])
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_20_kinds_compose_in_three_groups() {
        assert_eq!(tables::KINDS.len(), 20);
        for g in ["user", "security", "replication"] {
            assert!(tables::KINDS.iter().any(|d| d.group == g), "{g}");
        }
        for d in tables::KINDS {
            d.resolve().unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn api_key_ids_are_terraforms_crc32() {
        // CRC-32 (IEEE) check value.
        assert_eq!(crc32("123456789"), 0xCBF4_3926);
    }

    /// The generated CRDs pass the API server's CRD rules and every example (both scopes)
    /// validates without pruning; the admission rules refuse what the catalog forbids.
    #[test]
    fn crds_accept_the_examples_and_refuse_invalid_objects() {
        use serde_json::json;
        let regs = registrations(Arc::new(ClientCache::new(crate::PROVIDER)));
        let crds = provider_family_suite::CrdSchemas::new("artifactory", &regs);
        crds.accept_examples(tables::KINDS, examples::example);
        let group = tables::KINDS
            .iter()
            .find(|d| d.kind == "Group")
            .expect("declared");
        let mut bad = examples::example(group, false);
        bad["spec"]["forProvider"]["autoJoin"] = json!(true);
        bad["spec"]["forProvider"]["adminPrivileges"] = json!(true);
        let errs = format!("{:?}", crds.schema(group, false).validate(&bad, None));
        assert!(errs.contains("autoJoin cannot be true"), "{errs}");
        let keypair = tables::KINDS
            .iter()
            .find(|d| d.kind == "Keypair")
            .expect("declared");
        let mut bad = examples::example(keypair, false);
        bad["spec"]["forProvider"]["pairType"] = json!("DSA");
        let errs = format!("{:?}", crds.schema(keypair, false).validate(&bad, None));
        assert!(errs.contains("pairType"), "{errs}");
    }

    #[test]
    fn examples_are_current() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/artifactory");
        let stale = provider_family::examples::check_files(&dir, &examples::files());
        assert!(
            stale.is_empty(),
            "stale examples (run with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }
}
