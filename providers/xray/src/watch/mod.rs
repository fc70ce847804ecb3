//! The watch group: Xray watches (`/api/v2/watches`, keyed by `general_data.name`, observed
//! by one list call per poll).
//!
//! What the group owns is the shape of a watched resource's filters: the four filter blocks
//! of the CRD (`filter`, `antFilter`, `pathAntFilter`, `kvFilter`) share one `filters` array
//! on the wire, told apart by `type` (a string `value` for the simple filters, an object for
//! the others). The declarations name them `x_<block>`; [`WatchHooks`] folds them into
//! `filters` when a body is sent and unfolds an answer.

#[rustfmt::skip]
pub mod tables;

use jfrog_client::Service;
use provider_family::wire::Mode;
use provider_family::{Call, FamilyHooks, Hooks, ListCall, ListShape, Paths, ResolvedKind, Verb};
use serde_json::{Map, Value, json};

use crate::common;

/// The REST bindings, one per Kind.
pub mod rest {
    use super::*;

    /// Watches; in a project, build resources name the project's build-info repository
    /// (see [`watch_in_project`]).
    pub static WATCH: common::ProjectScoped = common::ProjectScoped {
        in_project: watch_in_project,
        paths: Paths {
            service: Service::Xray,
            create: Call::new(Verb::Post, "/api/v2/watches"),
            read: Call::new(Verb::Get, "/api/v2/watches/{key}"),
            update: Call::new(Verb::Put, "/api/v2/watches/{key}"),
            delete: Call::new(Verb::Delete, "/api/v2/watches/{key}"),
            list: Some(ListCall {
                service: Service::Xray,
                path: "/api/v2/watches",
                shape: ListShape::Array,
                key_member: "general_data.name",
            }),
            case_insensitive: false,
        },
    };
}

/// A watch made in a project names the project's build-info repository
/// (`<project>-build-info`) as the `build_repo` of each `build` resource, which Xray requires
/// there (undocumented; upstream sends it).
fn watch_in_project(project: &str, body: &mut Map<String, Value>) {
    if let Some(Value::Array(resources)) = body
        .get_mut("project_resources")
        .and_then(|p| p.get_mut("resources"))
    {
        for r in resources.iter_mut().filter_map(Value::as_object_mut) {
            if r.get("type").and_then(Value::as_str) == Some("build") {
                r.insert(
                    "build_repo".into(),
                    Value::String(format!("{project}-build-info")),
                );
            }
        }
    }
}

/// The watch group's hooks.
pub static HOOKS: WatchHooks = WatchHooks;

/// The watch group's behaviour: the filters' wire shape and the project-scope rule.
#[derive(Debug, Clone, Copy)]
pub struct WatchHooks;

/// The simple filter types (a string value).
const SIMPLE: &[&str] = &["regex", "path-regex", "package-type", "mime-type"];

/// Fold the `x_*` filter blocks of one resource into `filters`.
fn fold(resource: &mut Map<String, Value>) {
    let mut filters = Vec::new();
    let mut take = |member: &str| -> Vec<Value> {
        match resource.remove(member) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        }
    };
    for f in take("x_filter") {
        filters.push(json!({"type": f.get("type"), "value": f.get("value")}));
    }
    for (member, ty) in [
        ("x_antFilter", "ant-patterns"),
        ("x_pathAntFilter", "path-ant-patterns"),
    ] {
        for f in take(member) {
            filters.push(json!({"type": ty, "value": f}));
        }
    }
    for f in take("x_kvFilter") {
        filters.push(
            json!({"type": "property", "value": {"key": f.get("key"), "value": f.get("value")}}),
        );
    }
    if !filters.is_empty() {
        resource.insert("filters".into(), Value::Array(filters));
    }
}

/// Unfold one answered resource's `filters` into the `x_*` blocks.
fn unfold(resource: &mut Map<String, Value>) {
    let Some(Value::Array(filters)) = resource.remove("filters") else {
        return;
    };
    let mut blocks: Map<String, Value> = Map::new();
    let mut push = |member: &str, v: Value| {
        if let Value::Array(a) = blocks
            .entry(member.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            a.push(v);
        }
    };
    for f in filters {
        let ty = f.get("type").and_then(Value::as_str).unwrap_or_default();
        let value = f.get("value").cloned().unwrap_or(Value::Null);
        match ty {
            t if SIMPLE.contains(&t) => push("x_filter", json!({"type": t, "value": value})),
            "ant-patterns" => push("x_antFilter", value),
            "path-ant-patterns" => push("x_pathAntFilter", value),
            "property" => push(
                "x_kvFilter",
                json!({"type": "property", "key": value.get("key"), "value": value.get("value")}),
            ),
            _ => {}
        }
    }
    resource.extend(blocks);
}

/// Apply `f` to every resource of a watch body.
fn each_resource(body: &mut Map<String, Value>, f: fn(&mut Map<String, Value>)) {
    if let Some(Value::Array(resources)) = body
        .get_mut("project_resources")
        .and_then(|p| p.get_mut("resources"))
    {
        for r in resources.iter_mut() {
            if let Value::Object(m) = r {
                f(m);
            }
        }
    }
}

impl FamilyHooks for WatchHooks {
    fn id_description(&self) -> &'static str {
        "The watch name."
    }
}

impl Hooks for WatchHooks {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        each_resource(body, fold);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        let mut b = body.as_object()?.clone();
        each_resource(&mut b, unfold);
        Some(Value::Object(b))
    }
}

common::group_fns!();

#[cfg(test)]
mod tests {
    use provider_family::Address;

    use super::*;

    #[test]
    fn filters_fold_and_unfold() {
        let mut r: Map<String, Value> = serde_json::from_value(json!({
            "type": "repository",
            "name": "libs",
            "x_filter": [{"type": "regex", "value": ".*"}],
            "x_antFilter": [{"IncludePatterns": ["a/**"]}],
            "x_kvFilter": [{"type": "property", "key": "k", "value": "v"}],
        }))
        .expect("object");
        let before = r.clone();
        fold(&mut r);
        assert_eq!(
            r["filters"],
            json!([
                {"type": "regex", "value": ".*"},
                {"type": "ant-patterns", "value": {"IncludePatterns": ["a/**"]}},
                {"type": "property", "value": {"key": "k", "value": "v"}},
            ])
        );
        unfold(&mut r);
        assert_eq!(r, before);
    }

    #[test]
    fn a_project_watch_names_the_build_info_repository_of_its_builds() {
        let body: Map<String, Value> = serde_json::from_value(json!({
            "general_data": {"name": "w"},
            "project_resources": {"resources": [
                {"type": "build", "name": "app", "bin_mgr_id": "default"},
                {"type": "repository", "name": "libs", "bin_mgr_id": "default"},
            ]},
        }))
        .expect("object");
        let scoped = rest::WATCH.body(&Address::new("w").with_query("projectKey", "team"), &body);
        let resources = &scoped["project_resources"]["resources"];
        assert_eq!(resources[0]["build_repo"], "team-build-info");
        assert_eq!(resources[0]["bin_mgr_id"], "default");
        assert!(resources[1].get("build_repo").is_none());
        // Outside a project nothing is added.
        assert_eq!(rest::WATCH.body(&Address::new("w"), &body), body);
    }
}
