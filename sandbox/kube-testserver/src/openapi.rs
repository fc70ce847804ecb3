//! Minimal OpenAPI v3 documents, enough for kubectl's server-side field validation check.
//!
//! kubectl (`--validate=strict`, its default) asks `/openapi/v3` whether the PATCH operation of
//! a kind accepts the `fieldValidation` query parameter before relying on the server to reject
//! unknown fields. Each group/version document lists, per resource, the item path with a PATCH
//! operation carrying `x-kubernetes-group-version-kind` and that parameter.
//!
//! Custom resources' documents also carry their CRD's `openAPIV3Schema`, so `kubectl explain`
//! works for them.
//!
//! Deviation: built-in kinds have no schemas, so `kubectl explain` does not work for them and
//! kubectl falls back to its compiled-in strategic merge patch metadata. `/openapi/v2` answers
//! 404.

use crate::registry::Registry;
use serde_json::{Value, json};

/// The `/openapi/v3` discovery document.
pub fn root(reg: &Registry) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, versions) in reg.groups() {
        for v in versions {
            let p = if g.is_empty() {
                format!("api/{v}")
            } else {
                format!("apis/{g}/{v}")
            };
            paths.insert(p.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={:016X}", reg.generation)}));
        }
    }
    json!({"paths": paths})
}

/// The document of one group/version, or None if it is not served.
pub fn group_version(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for t in reg
        .all()
        .filter(|t| t.group == group && t.version == version)
    {
        // Custom resources carry their CRD schema, so `kubectl explain` works for them.
        if let Some(schema) = &t.schema {
            let mut sch = schema.raw().clone();
            sch["x-kubernetes-group-version-kind"] =
                json!([{"group": group, "version": version, "kind": t.kind}]);
            let reversed: Vec<&str> = group.split('.').rev().collect();
            schemas.insert(
                format!("{}.{}.{}", reversed.join("."), version, t.kind),
                sch,
            );
        }
        let prefix = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let item = if t.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
        } else {
            format!("{prefix}/{}/{{name}}", t.plural)
        };
        let gvk = json!({"group": group, "version": version, "kind": t.kind});
        let param = |n: &str| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        let op = |action: &str| {
            json!({
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [param("dryRun"), param("fieldManager"), param("fieldValidation")],
                "responses": {"200": {"description": "OK"}},
            })
        };
        paths.insert(item, json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}));
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": crate::VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}
