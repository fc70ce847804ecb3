//! Every Kind of provider-project, declared as data on the family layer: `Project` and
//! `Environment` (group `project`), `Role`, `User` and `Group` (group `access`), and
//! `Repository`, `ShareRepository` and `ShareRepositoryWithAll` (group `repository`), on the
//! Access API (`/access/api/v1/projects`).
//!
//! What the family owns: the REST bindings ([`rest`]: a project's quota in GiB against
//! JFrog's bytes, environments read from their project's list, nested paths under a
//! project, repository assignment and sharing read from the repository's Access status),
//! the addresses of the Kinds inside a project or a share ([`hooks`], each Kind's own), the
//! key rules and the parameter rules checked before any write, and the example manifests.
//!
//! # Identifiers
//!
//! - `Project`, `Environment`, `Role`, `User`, `Group`, `Repository`: the external name
//!   (`metadata.name` by default) is the project key, environment name, role name, member
//!   name or repository key; the project comes from `spec.forProvider.projectKey`
//!   (immutable).
//! - `ShareRepository`: composite `<repoKey>:<targetProjectKey>`; `ShareRepositoryWithAll`:
//!   the spec field `repoKey` (`metadata.name` is free). Both fields are immutable at
//!   admission.
//!
//! # Observation by list
//!
//! Projects are observed by one `GET /access/api/v1/projects` per poll for all Project MRs
//! (the list carries whole projects; the quota in bytes and the inverted `soft_limit` are
//! converted by the `decode` hook for list entries and reads alike), and exported from it.
//! Environments, roles, users and groups are observed through their project's lists
//! (`GET /access/api/v1/projects/{project_key}/environments`, `.../roles`, `.../users`,
//! `.../groups`; the family's per-parent snapshot, filled from `projectKey`): one list per
//! project, Kind and poll, whatever the number of MRs. A project the list answers 404 for
//! is missing: its objects are then read by key (and created once it exists).
//!
//! Repository assignment (`Repository`) is observed through Artifactory's list of every
//! repository's configuration (`GET /artifactory/api/repositories/configurations`, one per
//! poll for all Repository MRs, the list provider-artifactory's repositories use): each
//! configuration carries the repository's `projectKey`, its assignment (the field the
//! Terraform provider read before Artifactory 7.90.1, when Access's status call came). A
//! platform without that list, or a token that may not call it (an admin call), reads
//! each repository's Access status by key (below). It is not exported (the manifest needs
//! the project as a field).
//!
//! Sharing (`ShareRepository`, `ShareRepositoryWithAll`) is read by key from the
//! repository's Access status (`GET /access/api/v1/projects/_/repositories/{repo}`:
//! `assigned_to`, `shared_with_projects`, `shared_with_all_projects`, `shared_read_only`),
//! and not exported, because no list carries that state:
//!
//! - Access answers the status per repository only (JFrog REST APIs, "Get Status of Project
//!   Repository", since 7.90.0); there is no list form of it.
//! - Artifactory's `GET /artifactory/api/repositories?project=<key>` (JFrog REST APIs, "Get
//!   Repositories by Type and Project"; upstream's deprecated `project.repos` reads a
//!   project's repositories with it: jfrog/terraform-provider-project
//!   `pkg/project/resource/repo.go`) gives `{key, type, description, url, packageType}`
//!   per repository, and shows repositories shared with the project beside the ones
//!   assigned to it (jfrog/terraform-provider-project issue #55: a repository shared with
//!   all projects is listed for a new project, and upstream then failed detaching it). It
//!   cannot tell an assignment from a share, the share's mode, or a share with one project
//!   from a share with all; the only list of share targets would be per repository, which
//!   Artifactory lacks (jfrog/terraform-provider-artifactory issue #639: "no public API to
//!   gather the information about which project/projects the repository is shared
//!   with"). Used as a list of names, it would spare a read only for an MR whose
//!   repository is neither assigned to nor shared with its project; the steady state would
//!   still read each status, so it is not used.
//!
//! # Membership
//!
//! A `User` or `Group` MR manages exactly one membership (one member's roles in one
//! project): it never reads, sets or removes other members, whoever added them. The
//! project's embedded member, group, role and repository lists (deprecated upstream) are
//! ignored while the `useProject*Resource` switches are true, their default; a switch set
//! to false hands that list to the Project, as upstream does: the Project MR then owns it
//! whole (read beside the project, each entry added, changed or removed to match the spec:
//! [`rest::ProjectRest`]), so it must not be combined with `User`, `Group`, `Role` or
//! `Repository` MRs for the same project and list.
//!
//! # Order
//!
//! Nothing needs sequencing: a member, role, environment or assignment applied before its
//! project fails its create with JFrog's 404 ("Project '...' was not found", Synced=False)
//! and is retried; a repository attached before it exists likewise ("Repository '...' was
//! not found"). Each create is keyed by the identifier, so a retry never duplicates.
//! A member that is not a user (group) of the platform fails likewise with JFrog's 404
//! ("User '...' does not exist") and is retried. With `ignoreMissingUser: true` a `User`
//! whose user does not exist is not an error, as upstream: the membership is skipped (a
//! warning in the provider's log, Synced stays True), reported missing by the next
//! observe and created once the user exists. The switch only covers a missing user: a
//! missing project or role still fails.
//!
//! # Repository assignment
//!
//! A repository MR of provider-artifactory leaves `projectKey` unmanaged when unset, so a
//! `Repository` MR here can assign it without either fighting the other.

pub mod examples;
pub mod hooks;
pub mod rest;
#[rustfmt::skip]
pub mod tables;

use std::sync::{Arc, OnceLock};

use provider_family::wire::user_value;
use provider_family::{ClientCache, FamilyHooks, FamilyKind, Hooks, ResolvedKind};
use provider_runtime::managed::registration::KindRegistration;
use serde_json::Value;

/// The family's hooks: those of every Kind without its own ([`hooks`]).
pub static HOOKS: ProjectHooks = ProjectHooks;

/// provider-project's behaviour beyond the generic adapter, for every Kind: the identifier's
/// description, the key rule and the project key rule.
#[derive(Debug, Clone, Copy)]
pub struct ProjectHooks;

fn str_param<'a>(params: &'a Value, crd: &str) -> &'a str {
    user_value(params, crd)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// JFrog's project key rule.
pub fn check_project_key(key: &str) -> Result<(), String> {
    let b = key.as_bytes();
    let ok = (2..=32).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "project key {key:?} must be 2-32 lowercase letters, digits or '-', starting with a letter"
        ))
    }
}

impl FamilyHooks for ProjectHooks {
    fn id_description(&self) -> &'static str {
        "The JFrog identifier (project key, name, or repository key and project)."
    }

    fn check_key(&self, key: &str) -> Result<(), String> {
        // The rules that differ per Kind are in check_params; every identifier is one path
        // segment.
        if key.contains('/') {
            return Err("an identifier cannot contain '/'".into());
        }
        Ok(())
    }

    fn check_params(&self, kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        for f in ["projectKey", "targetProjectKey"] {
            let v = str_param(params, f);
            if kind.field(f).is_some() && !v.is_empty() {
                check_project_key(v).map_err(|e| format!("{f}: {e}"))?;
            }
        }
        Ok(())
    }
}

impl Hooks for ProjectHooks {}

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
mod embedded_tests;

#[cfg(test)]
mod tests {
    use provider_family::{Address, BoundKind};
    use serde_json::json;

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

    #[test]
    fn eight_kinds_in_three_groups_compose() {
        assert_eq!(tables::KINDS.len(), 8);
        let groups: std::collections::BTreeSet<&str> =
            tables::KINDS.iter().map(|d| d.group).collect();
        assert_eq!(
            groups.into_iter().collect::<Vec<_>>(),
            ["access", "project", "repository"]
        );
        for d in tables::KINDS {
            d.resolve().expect("composes");
        }
    }

    #[test]
    fn objects_inside_a_project_are_addressed_through_it() {
        let p = json!({"projectKey": "team"});
        let role = address("Role", "dev", &p);
        assert_eq!((role.parent(), role.key()), ("team", "dev"));
        assert_eq!(role.to_string(), "team/dev");
        let user = address("User", "alice", &p);
        assert_eq!((user.parent(), user.key()), ("team", "alice"));
        assert_eq!(user.detail::<rest::IgnoreMissingUser>(), None);
        assert_eq!(user.to_string(), "team/alice");
        let ignoring = json!({"projectKey": "team", "ignoreMissingUser": true});
        let user = address("User", "alice", &ignoring);
        assert_eq!((user.parent(), user.key()), ("team", "alice"));
        assert_eq!(
            user.detail::<rest::IgnoreMissingUser>(),
            Some(&rest::IgnoreMissingUser)
        );
        assert_eq!(user.to_string(), "team/alice/ignore-missing-user");
        let unknown = address("Role", "dev", &json!({}));
        assert!(unknown.is_empty());
        assert_eq!(unknown.to_string(), "");
        let project = address("Project", "team", &json!({}));
        assert_eq!(project, Address::new("team"));
        assert_eq!(project.to_string(), "team");
        let share = json!({"repoKey": "libs", "targetProjectKey": "other", "readOnly": true});
        let share = address("ShareRepository", "libs:other", &share);
        assert_eq!(share.key(), "libs");
        assert_eq!(
            share.detail::<rest::ShareScope>(),
            Some(&rest::ShareScope {
                target: "other".into(),
                read_only: true
            })
        );
        assert_eq!(share.to_string(), "libs/other/true");
        let all = address(
            "ShareRepositoryWithAll",
            "libs",
            &json!({"repoKey": "libs"}),
        );
        assert_eq!(all.key(), "libs");
        assert_eq!(
            all.detail::<rest::ShareScope>(),
            Some(&rest::ShareScope::default())
        );
        assert_eq!(all.to_string(), "libs//false");
    }

    #[test]
    fn bad_keys_and_switches_are_refused_naming_the_field() {
        let e = check_params("User", &json!({"projectKey": "Team_1"})).expect_err("refused");
        assert!(e.starts_with("projectKey:"), "{e}");
        // A switch off hands its list to the Project (upstream's deprecated form): accepted,
        // and the address names the lists the Project then owns.
        let off = json!({"useProjectUserResource": false, "useProjectRepositoryResource": false});
        assert!(check_params("Project", &off).is_ok());
        let owning = address("Project", "team", &off);
        assert_eq!(owning.key(), "team");
        assert_eq!(
            owning.detail::<rest::EmbeddedLists>(),
            Some(&rest::EmbeddedLists(vec!["member", "repos"]))
        );
        assert_eq!(owning.to_string(), "team/member,repos");
        let plain = address("Project", "team", &json!({"useProjectUserResource": true}));
        assert_eq!(plain.detail::<rest::EmbeddedLists>(), None);
        assert_eq!(plain.to_string(), "team");
        assert!(check_params("Project", &json!({"displayName": "x"})).is_ok());
        assert!(check_project_key("a").is_err());
        assert!(check_project_key("team-1").is_ok());
    }

    /// The generated CRDs pass the API server's CRD rules, every example (both scopes)
    /// validates, and changing the spec field that identifies a ShareRepositoryWithAll is refused at
    /// admission.
    #[test]
    fn crds_accept_the_examples_and_refuse_a_changed_identity() {
        provider_family_suite::crds_accept_examples_and_refuse(
            "project",
            &registrations(Arc::new(ClientCache::new(crate::PROVIDER))),
            tables::KINDS,
            examples::example,
            (
                "ShareRepositoryWithAll",
                "repoKey",
                serde_json::json!("other-repo"),
            ),
        );
    }
}
