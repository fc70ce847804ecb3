//! The hooks of the Kinds whose behaviour differs from the family's ([`super::HOOKS`]), one
//! type per behaviour: the Kind's table entry binds them (its correction in
//! `catalog/overrides.json` names them, `"hooks": "InProject"`), so no hook asks which Kind
//! it runs for. The table binds the family's identifier description, key rule and project
//! key rule ([`super::ProjectHooks`]) to every Kind beside them.

use provider_family::wire::{Mode, user_value};
use provider_family::{Address, Hooks, ResolvedKind};
use serde_json::{Map, Value};

use super::rest;

/// The switch that hands each of [`rest::EMBEDDED`] to the Project when false.
const EMBEDDED_SWITCHES: [&str; 4] = [
    "useProjectUserResource",
    "useProjectGroupResource",
    "useProjectRoleResource",
    "useProjectRepositoryResource",
];

fn str_param<'a>(params: &'a Value, crd: &str) -> &'a str {
    user_value(params, crd)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The address of an object inside a project (`spec.forProvider.projectKey`), unknown while
/// the project is unset.
fn in_project(key: &str, params: &Value) -> Address {
    match str_param(params, "projectKey") {
        "" => Address::unknown(),
        p => Address::new(key).with_parent(p),
    }
}

/// A Project: the embedded lists its MR owns, and its quota in our units (JFrog's on the wire).
#[derive(Debug, Clone, Copy)]
pub struct Project;

impl Hooks for Project {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        let owned: Vec<&'static str> = rest::EMBEDDED
            .into_iter()
            .zip(EMBEDDED_SWITCHES)
            .filter(|(_, switch)| {
                user_value(params, switch).and_then(Value::as_bool) == Some(false)
            })
            .map(|(list, _)| list)
            .collect();
        if owned.is_empty() {
            Address::new(key)
        } else {
            Address::new(key).with_detail(rest::EmbeddedLists(owned))
        }
    }

    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::project_to_jfrog(body);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        Some(rest::project_from_jfrog(body))
    }
}

/// An object inside a project (an Environment, a Group): addressed through it.
#[derive(Debug, Clone, Copy)]
pub struct InProject;

impl Hooks for InProject {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        in_project(key, params)
    }
}

/// A project's Role: inside its project; Access gives every project the predefined roles.
#[derive(Debug, Clone, Copy)]
pub struct Role;

impl Hooks for Role {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        in_project(key, params)
    }

    fn platform_owned(&self, _key: &str, object: &Value) -> Option<String> {
        // A project's roles list shows the roles Access gives every project.
        (object.get("type").and_then(Value::as_str) == Some("PREDEFINED"))
            .then(|| "a predefined role (Access creates it with every project)".to_string())
    }
}

/// A project User: inside its project, and whether a missing user is skipped.
#[derive(Debug, Clone, Copy)]
pub struct User;

impl Hooks for User {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        let address = in_project(key, params);
        let ignoring =
            user_value(params, "ignoreMissingUser").and_then(Value::as_bool) == Some(true);
        if ignoring && !address.is_empty() {
            address.with_detail(rest::IgnoreMissingUser)
        } else {
            address
        }
    }
}

/// A repository's assignment to a project: inside its project, and not exported.
#[derive(Debug, Clone, Copy)]
pub struct Repository;

impl Hooks for Repository {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        in_project(key, params)
    }

    fn exportable(&self, _kind: &ResolvedKind) -> bool {
        // Its list (every repository's configuration) says which repositories are assigned,
        // but a manifest needs the project as a field, which the listed key only implies.
        false
    }
}

/// A repository shared with one project: addressed by the repository, with the target
/// project and the share's mode.
#[derive(Debug, Clone, Copy)]
pub struct ShareRepository;

impl Hooks for ShareRepository {
    fn address(&self, _kind: &ResolvedKind, _key: &str, params: &Value) -> Address {
        Address::new(str_param(params, "repoKey")).with_detail(rest::ShareScope {
            target: str_param(params, "targetProjectKey").to_string(),
            read_only: read_only(params),
        })
    }
}

/// A repository shared with every project: the share's mode.
#[derive(Debug, Clone, Copy)]
pub struct ShareRepositoryWithAll;

impl Hooks for ShareRepositoryWithAll {
    fn address(&self, _kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        Address::new(key).with_detail(rest::ShareScope {
            target: String::new(),
            read_only: read_only(params),
        })
    }
}

fn read_only(params: &Value) -> bool {
    user_value(params, "readOnly").and_then(Value::as_bool) == Some(true)
}
