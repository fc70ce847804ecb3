//! The OpenAPI documents: `/openapi/v3` (per group/version) and `/openapi/v2` (one Swagger 2.0
//! document, JSON or protobuf).
//!
//! kubectl (`--validate=strict`, its default) asks `/openapi/v3` whether the PATCH operation of
//! a kind accepts the `fieldValidation` query parameter before relying on the server to reject
//! unknown fields. Each group/version document lists, per resource, the item path with a PATCH
//! operation carrying `x-kubernetes-group-version-kind` and that parameter.
//!
//! Custom resources' documents also carry their CRD's `openAPIV3Schema`, so `kubectl explain`
//! works for them.
//!
//! When `/openapi/v3` does not know a Kind (a misspelt one, say), kubectl asks `/openapi/v2`
//! the same question and validates the object against the v2 definitions; only then does it
//! report `no matches for kind`. [`v2`] builds that document as kube-apiserver does for custom
//! resources (apiextensions-apiserver's `BuildOpenAPIV2`): per served CRD version a definition
//! named `<reversed group>.<version>.<Kind>` with the schema converted to v2 (`allOf`, `anyOf`,
//! `oneOf` and `not` dropped; a `nullable` schema loses its type, items and properties and leaves
//! its parent's `required`; `x-kubernetes-preserve-unknown-fields` drops items and properties and
//! the `object` type; an array without items loses its type; defaults pruned), `metadata` a
//! reference to `ObjectMeta`, `apiVersion` and `kind` from `TypeMeta`, embedded resources given
//! the same three, and `x-kubernetes-group-version-kind`; a `<ListKind>` definition; and paths
//! for the collection, the item and the `status`/`scale` subresources with the operations'
//! actions, GVKs and query parameters. It is served as JSON or, for client-go, as gnostic
//! protobuf (see [`crate::openapi_proto`]), with an ETag, as kube-openapi's handler does
//! ([`negotiate`]).
//!
//! Deviations: built-in kinds have no schemas (in either document), so `kubectl explain` does
//! not work for them and kubectl falls back to its compiled-in strategic merge patch metadata;
//! their v2 paths are there (with GVKs and parameters) but their operations reference no
//! definitions. The v2 document's `ObjectMeta`, `ListMeta` and the few other `meta/v1`
//! definitions it references have upstream's types and list/patch extensions but no
//! descriptions; parameters are written inline (kube-apiserver shares some through
//! `#/parameters/...` references); there are no `/watch/` paths; responses are not gzipped and
//! `Range` requests are not honoured.

use crate::registry::{Builtin, Registry, ResourceType};
use serde_json::{Map, Value, json};
use std::sync::Arc;

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

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
const API_CONVENTIONS: &str =
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md";

fn def_ref(name: &str) -> String {
    format!("#/definitions/{name}")
}

fn meta_ref(kind: &str) -> Value {
    json!({"$ref": def_ref(&format!("{META}.{kind}"))})
}

/// The definition name of a kind: `<group reversed>.<version>.<kind>`.
fn model_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The `meta/v1` definitions the custom resource definitions and operations reference, with
/// upstream's types and extensions (not its descriptions).
fn meta_definitions() -> Map<String, Value> {
    let string = || json!({"type": "string"});
    let int64 = || json!({"type": "integer", "format": "int64"});
    let string_map = || json!({"type": "object", "additionalProperties": {"type": "string"}});
    let defs = json!({
        "ObjectMeta": {"type": "object", "properties": {
            "annotations": string_map(),
            "creationTimestamp": meta_ref("Time"),
            "deletionGracePeriodSeconds": int64(),
            "deletionTimestamp": meta_ref("Time"),
            "finalizers": {"type": "array", "items": string(), "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"},
            "generateName": string(),
            "generation": int64(),
            "labels": string_map(),
            "managedFields": {"type": "array", "items": meta_ref("ManagedFieldsEntry"), "x-kubernetes-list-type": "atomic"},
            "name": string(),
            "namespace": string(),
            "ownerReferences": {"type": "array", "items": meta_ref("OwnerReference"), "x-kubernetes-list-map-keys": ["uid"], "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge"},
            "resourceVersion": string(),
            "selfLink": string(),
            "uid": string(),
        }},
        "ListMeta": {"type": "object", "properties": {
            "continue": string(),
            "remainingItemCount": int64(),
            "resourceVersion": string(),
            "selfLink": string(),
        }},
        "ManagedFieldsEntry": {"type": "object", "properties": {
            "apiVersion": string(),
            "fieldsType": string(),
            "fieldsV1": meta_ref("FieldsV1"),
            "manager": string(),
            "operation": string(),
            "subresource": string(),
            "time": meta_ref("Time"),
        }},
        "OwnerReference": {"type": "object", "properties": {
            "apiVersion": string(),
            "blockOwnerDeletion": {"type": "boolean"},
            "controller": {"type": "boolean"},
            "kind": string(),
            "name": string(),
            "uid": string(),
        }, "required": ["apiVersion", "kind", "name", "uid"], "x-kubernetes-map-type": "atomic"},
        "Time": {"type": "string", "format": "date-time"},
        "FieldsV1": {"type": "object"},
        "Patch": {"type": "object"},
        "Status": {"type": "object", "properties": {
            "apiVersion": string(),
            "code": {"type": "integer", "format": "int32"},
            "details": meta_ref("StatusDetails"),
            "kind": string(),
            "message": string(),
            "metadata": meta_ref("ListMeta"),
            "reason": string(),
            "status": string(),
        }, "x-kubernetes-group-version-kind": [{"group": "", "kind": "Status", "version": "v1"}]},
        "StatusDetails": {"type": "object", "properties": {
            "causes": {"type": "array", "items": meta_ref("StatusCause"), "x-kubernetes-list-type": "atomic"},
            "group": string(),
            "kind": string(),
            "name": string(),
            "retryAfterSeconds": {"type": "integer", "format": "int32"},
            "uid": string(),
        }},
        "StatusCause": {"type": "object", "properties": {
            "field": string(),
            "message": string(),
            "reason": string(),
        }},
    });
    let mut out = Map::new();
    for (k, v) in defs.as_object().into_iter().flatten() {
        out.insert(format!("{META}.{k}"), v.clone());
    }
    out
}

fn type_meta_api_version() -> Value {
    json!({"type": "string", "description": format!("APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: {API_CONVENTIONS}#resources")})
}

fn type_meta_kind() -> Value {
    json!({"type": "string", "description": format!("Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: {API_CONVENTIONS}#types-kinds")})
}

fn object_meta_property() -> Value {
    let mut m = meta_ref("ObjectMeta");
    m["description"] = json!(format!(
        "Standard object's metadata. More info: {API_CONVENTIONS}#metadata"
    ));
    m
}

fn is_true(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

/// A CRD schema node as kube-apiserver serves it in `/openapi/v2`: what its structural schema
/// keeps (`ToKubeOpenAPI`), converted by `ToStructuralOpenAPIV2`, defaults pruned.
fn schema_to_v2(s: &Value) -> Value {
    let Some(s) = s.as_object() else {
        return json!({});
    };
    let mut out = Map::new();
    for key in [
        "description",
        "type",
        "title",
        "externalDocs",
        "example",
        "format",
        "maximum",
        "minimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "multipleOf",
        "maxProperties",
        "minProperties",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
    ] {
        if let Some(v) = s
            .get(key)
            .filter(|v| !v.is_null() && v.as_str() != Some(""))
        {
            out.insert(key.into(), v.clone());
        }
    }
    for key in ["exclusiveMaximum", "exclusiveMinimum", "uniqueItems"]
        .into_iter()
        .chain([
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-embedded-resource",
            "x-kubernetes-int-or-string",
        ])
    {
        if is_true(s, key) {
            out.insert(key.into(), json!(true));
        }
    }
    for key in [
        "enum",
        "required",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
    ] {
        if let Some(v) = s
            .get(key)
            .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        {
            out.insert(key.into(), v.clone());
        }
    }
    let nullable = is_true(s, "nullable");
    let preserve = is_true(s, "x-kubernetes-preserve-unknown-fields");
    let mut items = s.get("items").filter(|i| i.is_object()).map(schema_to_v2);
    let mut properties: Option<Map<String, Value>> = s
        .get("properties")
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.clone(), schema_to_v2(v)))
                .collect()
        });
    if nullable {
        out.remove("type");
        items = None;
        properties = None;
    }
    if preserve {
        items = None;
        properties = None;
    }
    if items.is_none() && out.get("type").and_then(Value::as_str) == Some("array") {
        out.remove("type");
    }
    if preserve && out.get("type").and_then(Value::as_str) == Some("object") {
        out.remove("type");
    }
    // Fields that may be null are not required in v2 (a required field must be present).
    if let Some(required) = out.get_mut("required").and_then(Value::as_array_mut) {
        let props = s.get("properties").and_then(Value::as_object);
        required.retain(|r| {
            !r.as_str()
                .and_then(|r| props?.get(r)?.as_object())
                .is_some_and(|p| is_true(p, "nullable"))
        });
    }
    if s.get("additionalProperties")
        .and_then(Value::as_object)
        .is_some_and(|a| is_true(a, "nullable"))
    {
        out.remove("required");
    }
    if out
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.is_empty())
    {
        out.remove("required");
    }
    if let Some(items) = items {
        out.insert("items".into(), items);
    }
    if let Some(p) = properties {
        out.insert("properties".into(), Value::Object(p));
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            out.insert("additionalProperties".into(), json!(b));
        }
        Some(a @ Value::Object(_)) => {
            out.insert("additionalProperties".into(), schema_to_v2(a));
        }
        _ => {}
    }
    Value::Object(out)
}

/// apiextensions-apiserver's `addEmbeddedProperties`: an embedded resource (outside preserved
/// unknown fields) gets `apiVersion`, `kind` and `metadata`, the first two required.
fn add_embedded_properties(s: &mut Value) {
    let Some(m) = s.as_object_mut() else {
        return;
    };
    if let Some(props) = m.get_mut("properties").and_then(Value::as_object_mut) {
        props.values_mut().for_each(add_embedded_properties);
    }
    if let Some(items) = m.get_mut("items") {
        add_embedded_properties(items);
    }
    if let Some(a) = m.get_mut("additionalProperties").filter(|a| a.is_object()) {
        add_embedded_properties(a);
    }
    if is_true(m, "x-kubernetes-preserve-unknown-fields")
        || !is_true(m, "x-kubernetes-embedded-resource")
    {
        return;
    }
    let props = m
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    if let Some(props) = props {
        props.insert("apiVersion".into(), json!({"type": "string", "description": format!("apiVersion defines the versioned schema of this representation of an object. More info: {API_CONVENTIONS}#resources")}));
        props.insert("kind".into(), json!({"type": "string", "description": format!("kind is a string value representing the type of this object. In CamelCase. More info: {API_CONVENTIONS}#types-kinds")}));
        props.insert("metadata".into(), object_meta_property());
    }
    let required = m.entry("required").or_insert_with(|| json!([]));
    if let Some(r) = required.as_array_mut() {
        for f in ["kind", "apiVersion"] {
            if !r.iter().any(|x| x == f) {
                r.push(json!(f));
            }
        }
    }
}

/// The v2 definition of a custom resource's Kind.
fn kind_definition(t: &ResourceType) -> Value {
    let raw = t.schema.as_ref().map(|s| s.raw());
    let mut def = match raw {
        Some(raw)
            if !raw
                .as_object()
                .is_some_and(|r| is_true(r, "x-kubernetes-preserve-unknown-fields")) =>
        {
            let mut def = schema_to_v2(raw);
            if let Some(m) = def.as_object_mut() {
                let props = m.entry("properties").or_insert_with(|| json!({}));
                props["metadata"] = object_meta_property();
                props["apiVersion"] = type_meta_api_version();
                props["kind"] = type_meta_kind();
            }
            add_embedded_properties(&mut def);
            def
        }
        _ => json!({"type": "object"}),
    };
    def["x-kubernetes-group-version-kind"] =
        json!([{"group": t.group, "kind": t.kind, "version": t.version}]);
    def
}

/// The v2 definition of a custom resource's list Kind.
fn list_definition(t: &ResourceType, model: &str) -> Value {
    json!({
        "description": format!("{} is a list of {}", t.list_kind, t.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": type_meta_api_version(),
            "items": {
                "description": format!("List of {}. More info: {API_CONVENTIONS}", t.plural),
                "type": "array",
                "items": {"$ref": def_ref(model)},
            },
            "kind": type_meta_kind(),
            "metadata": {"$ref": def_ref(&format!("{META}.ListMeta")), "description": format!("Standard list metadata. More info: {API_CONVENTIONS}#types-kinds")},
        },
        "x-kubernetes-group-version-kind": [{"group": t.group, "kind": t.list_kind, "version": t.version}],
    })
}

/// apiserver's `ToValidOperationID`: letters, `_` and (not first) digits kept, the letter after
/// anything else capitalised.
fn operation_id_part(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

fn query_param(name: &str, type_: &str) -> Value {
    json!({"name": name, "in": "query", "type": type_, "uniqueItems": true})
}

fn path_param(name: &str, description: String) -> Value {
    json!({"description": description, "in": "path", "name": name, "required": true, "type": "string", "uniqueItems": true})
}

/// The query parameters of an action (from the options struct kube-apiserver reads for it).
fn action_params(verb: &str) -> Vec<Value> {
    let list = [
        ("allowWatchBookmarks", "boolean"),
        ("continue", "string"),
        ("fieldSelector", "string"),
        ("labelSelector", "string"),
        ("limit", "integer"),
        ("resourceVersion", "string"),
        ("resourceVersionMatch", "string"),
        ("sendInitialEvents", "boolean"),
        ("timeoutSeconds", "integer"),
        ("watch", "boolean"),
    ];
    let write = [
        ("dryRun", "string"),
        ("fieldManager", "string"),
        ("fieldValidation", "string"),
    ];
    let delete = [
        ("dryRun", "string"),
        ("gracePeriodSeconds", "integer"),
        (
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            "boolean",
        ),
        ("orphanDependents", "boolean"),
        ("propagationPolicy", "string"),
    ];
    let params: Vec<(&str, &str)> = match verb {
        "list" => list.to_vec(),
        "create" | "replace" => write.to_vec(),
        "patch" => write.into_iter().chain([("force", "boolean")]).collect(),
        "delete" => delete.to_vec(),
        "deletecollection" => list.to_vec(),
        _ => vec![],
    };
    params.into_iter().map(|(n, t)| query_param(n, t)).collect()
}

/// Adds the paths of one resource type, as apiextensions-apiserver's builder lays them out.
fn add_paths(paths: &mut Map<String, Value>, t: &ResourceType, model: Option<&str>) {
    let custom = t.builtin == Builtin::Custom;
    let base = if t.group.is_empty() {
        format!("/api/{}", t.version)
    } else {
        format!("/apis/{}/{}", t.group, t.version)
    };
    let group_id = if t.group.is_empty() {
        "core"
    } else {
        t.group.strip_suffix(".k8s.io").unwrap_or(&t.group)
    };
    let id_prefix = format!(
        "{}{}",
        operation_id_part(group_id, true),
        operation_id_part(&t.version, true)
    );
    let tag = format!(
        "{}_{}",
        operation_id_part(group_id, false),
        operation_id_part(&t.version, false)
    );
    let gvk = json!({"group": t.group, "kind": t.kind, "version": t.version});
    let schema = |m: &str| json!({"$ref": def_ref(m)});
    let kind_schema = model.map(schema);
    let list_model = model.map(|_| model_name(&t.group, &t.version, &t.list_kind));
    let list_schema = list_model.as_deref().map(schema);
    let status_schema = Some(meta_ref("Status"));
    let article = if t.kind.ends_with('s') && !t.kind.ends_with("ss") {
        " "
    } else if t
        .kind
        .starts_with(|c: char| "aeiou".contains(c.to_ascii_lowercase()))
    {
        " an "
    } else {
        " a "
    };
    let namespaced = if t.namespaced { "Namespaced" } else { "" };
    // (verb, action, subresource, all namespaces) → operation.
    let op = |verb: &str, action: &str, sub: &str, all_ns: bool| -> Value {
        let sub_title = {
            let mut c = sub.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        };
        let operation_id = if all_ns {
            format!("{verb}{id_prefix}{}ForAllNamespaces", t.kind)
        } else {
            format!("{verb}{id_prefix}{namespaced}{}{sub_title}", t.kind)
        };
        let of = if sub.is_empty() {
            String::new()
        } else {
            format!(" {sub} of")
        };
        let description = match verb {
            "list" => format!("list{of} objects of kind {}", t.kind),
            "read" | "replace" => format!("{verb}{of} the specified {}", t.kind),
            "patch" => format!("partially update{of} the specified {}", t.kind),
            "create" | "delete" => format!("{verb}{of}{article}{}", t.kind),
            "deletecollection" => format!("delete collection of {}", t.kind),
            _ => verb.to_string(),
        };
        let (ok, extra): (Option<Value>, &[(&str, &str)]) = match verb {
            "list" => (list_schema.clone(), &[]),
            "create" => (
                kind_schema.clone(),
                &[("201", "Created"), ("202", "Accepted")],
            ),
            "replace" | "patch" => (kind_schema.clone(), &[("201", "Created")]),
            "delete" => (status_schema.clone(), &[("202", "Accepted")]),
            "deletecollection" => (status_schema.clone(), &[]),
            _ => (kind_schema.clone(), &[]),
        };
        let ok = if sub == "scale" && verb != "delete" {
            None
        } else {
            ok
        };
        let response = |description: &str| {
            let mut r = json!({"description": description});
            if let Some(s) = &ok {
                r["schema"] = s.clone();
            }
            r
        };
        let mut responses = json!({"200": response("OK"), "401": {"description": "Unauthorized"}});
        for (code, text) in extra {
            responses[*code] = response(text);
        }
        let mut params = Vec::new();
        match verb {
            "create" | "replace" => {
                let body_schema = if sub == "scale" {
                    None
                } else {
                    kind_schema.clone()
                };
                params.push(json!({"in": "body", "name": "body", "required": true, "schema": body_schema.unwrap_or_else(|| json!({"type": "object"}))}));
            }
            "patch" => params.push(json!({"in": "body", "name": "body", "required": true, "schema": meta_ref("Patch")})),
            _ => {}
        }
        params.extend(action_params(verb));
        let consumes = match (verb, custom) {
            ("patch", true) => json!([
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml"
            ]),
            ("patch", false) => json!([
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"
            ]),
            (_, true) => json!(["application/json", "application/yaml"]),
            (_, false) => json!(["*/*"]),
        };
        let mut o = json!({
            "consumes": consumes,
            "description": description,
            "operationId": operation_id,
            "produces": ["application/json", "application/yaml"],
            "responses": responses,
            "schemes": ["https"],
            "tags": [tag],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        });
        if !params.is_empty() {
            o["parameters"] = json!(params);
        }
        o
    };
    let pretty = json!({"description": "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).", "in": "query", "name": "pretty", "type": "string", "uniqueItems": true});
    let ns_param = path_param(
        "namespace",
        "object name and auth scope, such as for teams and projects".into(),
    );
    let name_param = path_param("name", format!("name of the {}", t.kind));
    let mut root = format!("{base}/{}", t.plural);
    if t.namespaced {
        paths.insert(
            root.clone(),
            json!({"get": op("list", "list", "", true), "parameters": [pretty.clone()]}),
        );
        root = format!("{base}/namespaces/{{namespace}}/{}", t.plural);
    }
    let with_ns = |mut v: Vec<Value>| -> Value {
        if t.namespaced {
            v.insert(0, ns_param.clone());
        }
        v.push(pretty.clone());
        json!(v)
    };
    paths.insert(
        root.clone(),
        json!({
            "get": op("list", "list", "", false),
            "post": op("create", "post", "", false),
            "delete": op("deletecollection", "deletecollection", "", false),
            "parameters": with_ns(vec![]),
        }),
    );
    paths.insert(
        format!("{root}/{{name}}"),
        json!({
            "get": op("read", "get", "", false),
            "put": op("replace", "put", "", false),
            "delete": op("delete", "delete", "", false),
            "patch": op("patch", "patch", "", false),
            "parameters": with_ns(vec![name_param.clone()]),
        }),
    );
    for (sub, served) in [
        ("status", t.status_subresource),
        ("scale", t.scale.is_some()),
    ] {
        if served {
            paths.insert(
                format!("{root}/{{name}}/{sub}"),
                json!({
                    "get": op("read", "get", sub, false),
                    "put": op("replace", "put", sub, false),
                    "patch": op("patch", "patch", sub, false),
                    "parameters": with_ns(vec![name_param.clone()]),
                }),
            );
        }
    }
}

/// Sorts every object's keys, as Go's encoding of maps does.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        v => v,
    }
}

/// The `/openapi/v2` document of the given served types.
pub fn v2(types: &[Arc<ResourceType>]) -> Value {
    let mut definitions = meta_definitions();
    let mut paths = Map::new();
    for t in types {
        let model =
            (t.builtin == Builtin::Custom).then(|| model_name(&t.group, &t.version, &t.kind));
        if let Some(model) = &model {
            definitions.insert(model.clone(), kind_definition(t));
            definitions.insert(
                model_name(&t.group, &t.version, &t.list_kind),
                list_definition(t, model),
            );
        }
        add_paths(&mut paths, t, model.as_deref());
    }
    sorted(json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": crate::VERSION},
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"}},
        "security": [{"BearerToken": []}],
    }))
}

/// The media type kube-openapi serves the v2 document's protobuf form as.
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The forms the v2 document is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V2Format {
    Json,
    Protobuf,
}

/// kube-openapi's negotiation for `/openapi/v2`: the `Accept` clauses (an empty header is
/// `*/*`) sorted by quality, then specific types before wildcards, and the first that matches
/// `application/json`, `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (what
/// client-go asks for) or `application/com.github.proto-openapi.spec.v2.v1.0+protobuf` wins;
/// None (406) if no clause matches.
pub fn negotiate(accept: &str) -> Option<V2Format> {
    let accept = if accept.trim().is_empty() {
        "*/*"
    } else {
        accept
    };
    let mut clauses: Vec<(f64, String, String)> = Vec::new();
    for part in accept.split(',') {
        let mut params = part.split(';');
        let media = params.next().unwrap_or_default().trim_matches(' ');
        let (type_, sub) = match media.split_once('/') {
            Some((t, s)) if !s.contains('/') => (t.trim_matches(' '), s.trim_matches(' ')),
            None if media == "*" => ("*", "*"),
            _ => continue,
        };
        let mut q = 1.0;
        for p in params {
            if let Some((k, v)) = p.split_once('=')
                && k.trim_matches(' ') == "q"
            {
                q = v.parse().unwrap_or(0.0);
            }
        }
        clauses.push((q, type_.to_string(), sub.to_string()));
    }
    clauses.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then((a.1 == "*").cmp(&(b.1 == "*")))
            .then((a.2 == "*").cmp(&(b.2 == "*")))
    });
    let offered = [
        ("json", V2Format::Json),
        (
            "com.github.proto-openapi.spec.v2@v1.0+protobuf",
            V2Format::Protobuf,
        ),
        (
            "com.github.proto-openapi.spec.v2.v1.0+protobuf",
            V2Format::Protobuf,
        ),
    ];
    clauses.iter().find_map(|(_, t, s)| {
        offered
            .iter()
            .find(|(sub, _)| (t == "application" || t == "*") && (s == sub || s == "*"))
            .map(|(_, f)| *f)
    })
}

/// The v2 document of one registry generation, in both forms, with its ETag.
#[derive(Debug)]
pub struct V2Cached {
    pub generation: u64,
    pub json: bytes::Bytes,
    pub protobuf: bytes::Bytes,
    /// Quoted, as sent in `ETag`: the upper-case hex SHA-512 of the JSON form (both forms share
    /// it, as upstream: the response varies by `Accept`).
    pub etag: String,
    pub last_modified: chrono::DateTime<chrono::Utc>,
}

impl V2Cached {
    pub fn build(generation: u64, types: &[Arc<ResourceType>]) -> V2Cached {
        let doc = v2(types);
        let json = serde_json::to_vec(&doc).unwrap_or_default();
        let protobuf = crate::openapi_proto::document(&doc);
        let digest = ring::digest::digest(&ring::digest::SHA512, &json);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        V2Cached {
            generation,
            json: json.into(),
            protobuf: protobuf.into(),
            etag: format!("\"{hex}\""),
            last_modified: chrono::Utc::now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi_proto::tests::{extension, named, one, text};

    #[test]
    fn crd_schema_is_converted_to_v2_as_kube_apiserver_does() {
        let raw = json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["a", "maybe"],
                    "x-kubernetes-validations": [{"rule": "self.a != ''", "message": "m"}],
                    "properties": {
                        "a": {"type": "string", "default": "x", "enum": ["x", "y"], "maxLength": 3, "anyOf": [{"pattern": "x"}]},
                        "maybe": {"type": "object", "nullable": true, "properties": {"b": {"type": "string"}}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"c": {"type": "string"}}},
                        "list": {"type": "array", "items": {"type": "integer", "format": "int64"}, "x-kubernetes-list-type": "set"},
                        "empty": {"type": "object", "properties": {}, "uniqueItems": false},
                        "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}, "required": ["k"]},
                    },
                },
                "metadata": {"type": "object"},
            },
        });
        let spec = &schema_to_v2(&raw)["properties"]["spec"];
        // `nullable` leaves `required`, validation rules stay.
        assert_eq!(spec["required"], json!(["a"]));
        assert_eq!(spec["x-kubernetes-validations"][0]["rule"], "self.a != ''");
        let p = &spec["properties"];
        // Value validations stay; `anyOf` and defaults go.
        assert_eq!(
            p["a"],
            json!({"type": "string", "enum": ["x", "y"], "maxLength": 3})
        );
        assert_eq!(p["maybe"], json!({}));
        assert_eq!(
            p["free"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            p["list"],
            json!({"type": "array", "items": {"type": "integer", "format": "int64"}, "x-kubernetes-list-type": "set"})
        );
        assert_eq!(p["empty"], json!({"type": "object"}));
        assert_eq!(
            p["labels"],
            json!({"type": "object", "additionalProperties": {}})
        );

        let rt = crate::registry::crd_resource_types(&json!({
            "metadata": {"name": "things.example.org"},
            "spec": {
                "group": "example.org",
                "names": {"kind": "Thing", "plural": "things"},
                "scope": "Cluster",
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": raw}, "subresources": {"status": {}}}],
            },
        }))
        .expect("CRD accepted")
        .remove(0);
        let def = kind_definition(&rt);
        assert_eq!(
            def["x-kubernetes-group-version-kind"],
            json!([{"group": "example.org", "kind": "Thing", "version": "v1"}])
        );
        assert_eq!(
            def["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(def["properties"]["kind"]["type"], "string");
        // An embedded resource gets apiVersion, kind and metadata.
        let tmpl = &def["properties"]["spec"]["properties"]["tmpl"];
        assert_eq!(tmpl["required"], json!(["kind", "apiVersion"]));
        assert!(tmpl["properties"]["metadata"]["$ref"].is_string());
        assert!(tmpl["properties"]["spec"].is_object());

        // The whole document, and its protobuf form.
        let doc = v2(&[Arc::new(rt)]);
        assert_eq!(doc["swagger"], "2.0");
        assert_eq!(
            doc["info"],
            json!({"title": "Kubernetes", "version": crate::VERSION})
        );
        let list = &doc["definitions"]["org.example.v1.ThingList"];
        assert_eq!(
            list["properties"]["items"]["items"]["$ref"],
            "#/definitions/org.example.v1.Thing"
        );
        let patch = &doc["paths"]["/apis/example.org/v1/things/{name}"]["patch"];
        assert_eq!(patch["operationId"], "patchExampleOrgV1Thing");
        assert_eq!(patch["x-kubernetes-action"], "patch");
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        assert!(doc["paths"]["/apis/example.org/v1/things/{name}/status"]["put"].is_object());

        let pb = crate::openapi_proto::document(&doc);
        assert_eq!(text(one(&pb, 1)), "2.0");
        assert_eq!(text(one(one(&pb, 2), 2)), crate::VERSION);
        let thing = named(one(&pb, 9), 1, "org.example.v1.Thing");
        assert_eq!(
            extension(thing, 31, "x-kubernetes-group-version-kind"),
            json!([{"group": "example.org", "kind": "Thing", "version": "v1"}])
        );
    }

    #[test]
    fn negotiation_follows_kube_openapi() {
        use V2Format::*;
        // client-go's OpenAPISchema() and the current protobuf name.
        assert_eq!(
            negotiate("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
            Some(Protobuf)
        );
        assert_eq!(negotiate(V2_PROTOBUF), Some(Protobuf));
        assert_eq!(negotiate("application/json"), Some(Json));
        assert_eq!(negotiate(""), Some(Json));
        assert_eq!(negotiate("*/*"), Some(Json));
        assert_eq!(negotiate("application/*"), Some(Json));
        // Higher quality first, then specific types before wildcards.
        assert_eq!(
            negotiate(
                "application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
            ),
            Some(Protobuf)
        );
        assert_eq!(
            negotiate("*/*, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
            Some(Protobuf)
        );
        assert_eq!(negotiate("text/html, application/json"), Some(Json));
        assert_eq!(negotiate("application/yaml"), None);
        assert_eq!(negotiate("text/plain"), None);
    }
}
