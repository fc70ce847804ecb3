//! Every Kind of provider-platform, declared as data on the family layer: groups `access`
//! (GlobalRole, Group, GroupMembers, Permission, SCIMGroup, SCIMUser), `authentication`
//! (AWSIAMRole, CrowdSettings, HTTPSSOSettings, OIDCConfiguration, OIDCIdentityMapping,
//! SAMLSettings), `configuration` (License, ReverseProxy, WorkersService) and `lifecycle`
//! (Lifecycle, LifecycleStage), on the Access, Worker and Artifactory APIs.
//!
//! What the family owns: the REST bindings ([`rest`]), its key rule ([`PlatformHooks`], every
//! Kind's), the hooks of each Kind that needs more ([`hooks`]: the addresses of objects that need more than their
//! identifier, the rules checked before any write, the reverse proxy's `key` member, the
//! objects `export` skips), and the examples.
//!
//! # Identifiers
//!
//! - Name (the external name): GlobalRole, Group, Permission, SCIMGroup, OIDCConfiguration,
//!   OIDCIdentityMapping (with its provider and project from the spec), SAMLSettings,
//!   LifecycleStage (with its project from the spec).
//! - Spec field (`metadata.name` free, the field immutable at admission): GroupMembers
//!   (`name`), SCIMUser (`username`), AWSIAMRole (`username`), WorkersService (`key`).
//! - Singletons: CrowdSettings, HTTPSSOSettings, License, ReverseProxy, and Lifecycle (the
//!   platform's, or one per project when `projectKey` is set). JFrog cannot delete them:
//!   deleting the MR forgets the setting; a Lifecycle's promote stages are emptied first,
//!   since JFrog refuses to delete a stage a lifecycle still names.
//!
//! # Observation by list
//!
//! One list request per poll serves every MR of GlobalRole, SCIMUser, SCIMGroup,
//! OIDCConfiguration, SAMLSettings and WorkersService (their lists carry whole objects).
//! Group and Permission lists name the objects only: an object the list lacks is missing
//! without a read, a listed one is read by key (steady state: one read per MR, no list).
//! OIDCIdentityMapping is observed through its configuration's list
//! (`GET /access/api/v1/oidc/{provider_name}/identity_mappings`, the family's per-parent
//! snapshot filled from `providerName`): one list per configuration and poll; a project's
//! mapping (`projectKey` set) is read by key, since that list shows the platform's only.
//! LifecycleStage is observed per scope through `GET /access/api/v2/stages` (an array of
//! full stages): without `project_key` it lists the platform's stages (the system stages PR,
//! COMMIT and PROD among them); with `project_key` the project's and the platform's, so a
//! project's stages are listed with `project_key=<key>&scope=project` (JFrog's "Get
//! Lifecycle Stages": `project_key`, `scope` `global|project` and `category` filter the
//! list). The project is an optional query parameter of the family's per-parent snapshot
//! ([`provider_family::QueryParent`]): one list per poll for every global stage, one per
//! project for its stages, no read by key; a 404 for a project's list is taken as the
//! project missing (the family's per-parent rule: its stages are then read by key). Not
//! listed: GroupMembers (its group's read is its only source), the settings singletons and
//! AWSIAMRole (no list call). `export` covers the listed Kinds, skipping the default
//! `readers` group, the built-in permissions and the system stages; it lists the platform's
//! stages, then the projects (`GET /access/api/v1/projects`) and each project's stages.
//! Lifecycle is read by key (its one object per scope costs the same as a list) and
//! exported from `GET /access/api/v2/lifecycle` without and with each `project_key` (one
//! object each): only a lifecycle promoting through a stage other than the system ones is
//! exported (`lifecycle`, `<project>-lifecycle`), the others being JFrog's default.
//!
//! # Membership
//!
//! GroupMembers owns its group's member list, as the catalog gives it (upstream reads every
//! member of the group): a member added by hand, or dropped from the spec, is drift and is
//! removed by the next update (one PATCH adding what is missing and removing what is
//! extra); deleting the MR removes the members it declares and leaves the group. The MR's
//! object exists while the group has one of the declared members. Project members are the
//! opposite: a project `User` or `Group` MR manages its one membership and never others'.
//! Group's own `members` list (deprecated upstream) is honoured, as upstream honours it,
//! only with `useGroupMembersResource: false`: then the Group owns its member list (sent at
//! creation, compared with the group's read, changed by the members PATCH: a member added
//! by hand is drift). With the switch on (the default) `members` is ignored, and must not
//! be combined with a GroupMembers MR for the same group when off (both would own the
//! list).
//!
//! # Secrets
//!
//! The SAML certificate and the Crowd password come from Secret references, are sent on
//! every write and compared by a salted hash of what was sent. The licence key and worker
//! secret values are plain strings upstream (kept for compatibility) and are likewise
//! write-only, compared by hash, never in status; each also takes a Secret reference beside
//! it (`keySecretRef`, `secrets[].valueSecretRef`; at most one of the two).

pub mod examples;
pub mod hooks;
pub mod rest;
#[rustfmt::skip]
pub mod tables;

use std::sync::{Arc, OnceLock};

use provider_family::{ClientCache, FamilyHooks, FamilyKind, Hooks};
use provider_runtime::managed::registration::KindRegistration;

/// The family's hooks: those of every Kind without its own ([`hooks`]).
pub static HOOKS: PlatformHooks = PlatformHooks;

/// provider-platform's behaviour beyond the generic adapter, for every Kind: each
/// identifier is one path segment.
#[derive(Debug, Clone, Copy)]
pub struct PlatformHooks;

impl FamilyHooks for PlatformHooks {
    fn check_key(&self, key: &str) -> Result<(), String> {
        if key.contains('/') {
            return Err("an identifier cannot contain '/'".into());
        }
        Ok(())
    }
}

impl Hooks for PlatformHooks {}

/// Every Kind, composed once per process.
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
mod members_tests;
#[cfg(test)]
mod saas_tests;

#[cfg(test)]
mod tests {
    use provider_family::wire::Mode;
    use provider_family::{Address, BoundKind};
    use serde_json::{Map, Value, json};

    use super::*;

    /// A Kind with the hooks its table entry binds.
    fn kind(name: &str) -> BoundKind {
        provider_family_suite::bound(tables::KINDS, name)
    }

    fn address(name: &str, key: &str, params: &Value) -> Address {
        provider_family_suite::address(tables::KINDS, name, key, params)
    }

    fn check_params(name: &str, params: &Value) -> Result<(), String> {
        let k = kind(name);
        k.check_params(params)
    }

    fn platform_owned(name: &str, key: &str, object: &Value) -> Option<String> {
        kind(name).hooks.platform_owned(key, object)
    }

    #[test]
    fn seventeen_kinds_in_four_groups_compose() {
        assert_eq!(tables::KINDS.len(), 17);
        let groups: std::collections::BTreeSet<&str> =
            tables::KINDS.iter().map(|d| d.group).collect();
        assert_eq!(
            groups.into_iter().collect::<Vec<_>>(),
            ["access", "authentication", "configuration", "lifecycle"]
        );
    }

    #[test]
    fn addresses_carry_what_the_calls_need() {
        let m = json!({"name": "devs", "members": ["alice", "bob"]});
        let members = address("GroupMembers", "devs", &m);
        assert_eq!(members.key(), "devs");
        assert_eq!(
            members.detail::<rest::DeclaredMembers>(),
            Some(&rest::DeclaredMembers(vec!["alice".into(), "bob".into()]))
        );
        assert_eq!(members.to_string(), "devs/alice\nbob");
        let global = address("Lifecycle", "global", &json!({}));
        assert_eq!((global.key(), global.to_string()), ("_", "_".to_string()));
        let team = address("Lifecycle", "global", &json!({"projectKey": "team"}));
        assert_eq!((team.key(), team.to_string()), ("team", "team".to_string()));
        let mapping = address(
            "OIDCIdentityMapping",
            "ci",
            &json!({"providerName": "github", "projectKey": "team"}),
        );
        assert_eq!((mapping.parent(), mapping.key()), ("github", "ci"));
        assert_eq!(
            mapping.detail::<rest::MappingProject>(),
            Some(&rest::MappingProject("team".into()))
        );
        assert_eq!(mapping.to_string(), "github/ci/team");
        let unknown = address("OIDCIdentityMapping", "ci", &json!({}));
        assert!(unknown.is_empty());
        assert_eq!(unknown.to_string(), "");
        let stage = address("LifecycleStage", "qa", &json!({}));
        assert_eq!(stage.key(), "qa");
        assert_eq!(
            stage.detail::<rest::StageScope>(),
            Some(&rest::StageScope::default())
        );
        assert_eq!(stage.to_string(), "qa//false");
        let detached = address(
            "LifecycleStage",
            "qa",
            &json!({"projectKey": "team", "detachOnDestroy": true}),
        );
        assert_eq!(detached.to_string(), "qa/team/true");
        assert_eq!(address("Group", "devs", &json!({})).to_string(), "devs");
    }

    #[test]
    fn rules_refuse_bad_manifests_naming_the_field() {
        let e = check_params(
            "Group",
            &json!({"policyManager": true, "policyViewer": false}),
        )
        .expect_err("refused");
        assert!(e.starts_with("policyViewer"), "{e}");
        // Upstream honours the deprecated members with the switch off: so do we.
        assert!(
            check_params(
                "Group",
                &json!({"useGroupMembersResource": false, "members": ["alice"]})
            )
            .is_ok()
        );
        assert!(
            check_params(
                "AWSIAMRole",
                &json!({"iamRole": "arn:aws:iam::123456789012:role/ci"})
            )
            .is_ok()
        );
        let e = check_params("AWSIAMRole", &json!({"iamRole": "role/ci"})).expect_err("refused");
        assert!(e.starts_with("iamRole"), "{e}");
        let e = check_params("Lifecycle", &json!({"promoteStages": ["QA", "PROD"]}))
            .expect_err("refused");
        assert!(e.contains("PROD"), "{e}");
        let e = check_params("OIDCIdentityMapping", &json!({"claimsJson": "[1]"}))
            .expect_err("refused");
        assert!(e.starts_with("claimsJson"), "{e}");
    }

    #[test]
    fn export_skips_the_default_group_built_in_permissions_and_system_stages() {
        let group = json!({"group_name": "readers", "uri": "/access/api/v2/groups/readers"});
        assert!(platform_owned("Group", "readers", &group).is_some());
        let other = json!({"group_name": "devs", "uri": "/access/api/v2/groups/devs"});
        assert_eq!(platform_owned("Group", "devs", &other), None);
        let anything = json!({"name": "Anything", "uri": "/access/api/v2/permissions/Anything"});
        assert!(platform_owned("Permission", "Anything", &anything).is_some());
        let default =
            json!({"categories": [{"category": "promote", "stages": [{"name": "PROD"}]}]});
        assert!(platform_owned("Lifecycle", "_", &default).is_some());
        let own = json!({"promote_stages": ["qa"], "categories": []});
        assert_eq!(platform_owned("Lifecycle", "_", &own), None);
        let prod = json!({"name": "PROD", "scope": "global", "category": "promote"});
        assert!(platform_owned("LifecycleStage", "PROD", &prod).is_some());
        let qa = json!({"name": "qa", "scope": "global", "category": "promote"});
        assert_eq!(platform_owned("LifecycleStage", "qa", &qa), None);
        // A SAML configuration or role of that name is the user's.
        assert_eq!(
            platform_owned("SAMLSettings", "readers", &json!({"name": "readers"})),
            None
        );
    }

    #[test]
    fn the_reverse_proxy_body_carries_its_key() {
        let k = kind("ReverseProxy");
        let mut body: Map<String, Value> =
            serde_json::from_value(json!({"webServerType": "NGINX"})).expect("map");
        k.hooks.encode(&k, Mode::Create, &mut body);
        assert_eq!(body["key"], "nginx");
    }

    /// The generated CRDs pass the API server's CRD rules, every example (both scopes)
    /// validates, and changing the spec field that identifies a WorkersService is refused at
    /// admission.
    #[test]
    fn crds_accept_the_examples_and_refuse_a_changed_identity() {
        provider_family_suite::crds_accept_examples_and_refuse(
            "platform",
            &registrations(Arc::new(ClientCache::new(crate::PROVIDER))),
            tables::KINDS,
            examples::example,
            ("WorkersService", "key", serde_json::json!("other-worker")),
        );
    }

    /// A Group with autoJoin and adminPrivileges both true (admitted before the rule) is
    /// refused before any write by the declaration's rule, naming both fields: the hooks
    /// keep no copy of it.
    #[test]
    fn a_group_that_auto_joins_admins_is_refused_before_a_write() {
        let group = kinds()
            .iter()
            .find(|k| k.resolved().decl.kind == "Group")
            .expect("declared");
        let e = group
            .check_before_write(&json!({"autoJoin": true, "adminPrivileges": true}))
            .expect_err("refused");
        assert!(
            e.contains("autoJoin cannot be true together with adminPrivileges"),
            "{e}"
        );
        group
            .check_before_write(&json!({"autoJoin": true}))
            .expect("one of the two is allowed");
    }

    /// A Group with autoJoin and adminPrivileges both true is refused at admission, with a
    /// message naming both fields (as the artifactory Group is).
    #[test]
    fn crds_refuse_a_group_that_auto_joins_admins() {
        let regs = registrations(Arc::new(ClientCache::new(crate::PROVIDER)));
        let crds = provider_family_suite::CrdSchemas::new("platform", &regs);
        let group = tables::KINDS
            .iter()
            .find(|d| d.kind == "Group")
            .expect("declared");
        for legacy in [false, true] {
            let mut bad = examples::example(group, legacy);
            bad["spec"]["forProvider"]["autoJoin"] = json!(true);
            bad["spec"]["forProvider"]["adminPrivileges"] = json!(true);
            let errs = format!("{:?}", crds.schema(group, legacy).validate(&bad, None));
            assert!(
                errs.contains("autoJoin cannot be true together with adminPrivileges"),
                "{errs}"
            );
            bad["spec"]["forProvider"]["adminPrivileges"] = json!(false);
            assert!(crds.schema(group, legacy).validate(&bad, None).is_empty());
        }
    }
}
