//! Structural-schema rules (`apiextensions-apiserver/pkg/apiserver/schema/validation.go` and
//! `complete.go`, Kubernetes 1.33): `ValidateStructural` on a raw `openAPIV3Schema`, with the
//! API server's messages. The result is sorted by the rendered error, as upstream sorts it.

use serde_json::{Map, Value};

use crate::{FieldError, path};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

fn obj(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}

fn is_true(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// `ValidateStructural(fldPath, NewStructural(schema))`. `at` is the schema's path.
pub fn validate_structural(schema: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(m) = obj(schema) {
        invariants(m, Level::Root, at, &mut errs);
        completeness(m, at, &mut errs);
    }
    errs.sort_by_key(ToString::to_string);
    errs
}

fn is_int_or_string_any_of(m: &Map<String, Value>) -> bool {
    let Some(any) = m.get("anyOf").and_then(Value::as_array) else {
        return false;
    };
    any.len() == 2
        && any[0]
            .as_object()
            .is_some_and(|a| a.len() == 1 && str_of(a, "type") == "integer")
        && any[1]
            .as_object()
            .is_some_and(|a| a.len() == 1 && str_of(a, "type") == "string")
}

fn is_int_or_string_all_of(m: &Map<String, Value>) -> bool {
    m.get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_object)
        .is_some_and(is_int_or_string_any_of)
}

fn invariants(m: &Map<String, Value>, lvl: Level, at: &str, errs: &mut Vec<FieldError>) {
    let ty = str_of(m, "type");
    if ty == "array" && !m.contains_key("items") {
        errs.push(FieldError::required(
            path::child(at, "items"),
            "must be specified",
        ));
    }
    if let Some(items) = m.get("items").and_then(obj) {
        invariants(items, Level::Item, &path::child(at, "items"), errs);
    }
    if let Some(props) = m.get("properties").and_then(obj) {
        for (k, v) in props {
            if let Some(p) = obj(v) {
                invariants(
                    p,
                    Level::Field,
                    &path::key(&path::child(at, "properties"), k),
                    errs,
                );
            }
        }
    }
    if let Some(add) = m.get("additionalProperties") {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(
                path::child(at, "additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Some(a) = obj(add) {
            invariants(
                a,
                Level::Field,
                &path::child(at, "additionalProperties"),
                errs,
            );
        }
    }
    let int_or_string = is_true(m, "x-kubernetes-int-or-string");
    let preserve = is_true(m, "x-kubernetes-preserve-unknown-fields");
    let embedded = is_true(m, "x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            path::child(at, "x-kubernetes-preserve-unknown-fields"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            path::child(at, "x-kubernetes-embedded-resource"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(
        m,
        is_int_or_string_any_of(m),
        is_int_or_string_all_of(m),
        lvl,
        at,
        errs,
    );

    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        if ty.is_empty() {
            errs.push(FieldError::required(
                path::child(at, "type"),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        } else {
            errs.push(FieldError::invalid_str(
                path::child(at, "type"),
                ty,
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(path::child(at, "type"), detail));
    }
    if embedded && m.contains_key("additionalProperties") {
        errs.push(FieldError::forbidden(
            path::child(at, "additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid_str(
            path::child(at, "type"),
            ty,
            "must be object at the root",
        ));
    }
    let props = m.get("properties").and_then(obj);
    if check_metadata && let Some(props) = props {
        for key in ["kind", "apiVersion"] {
            if let Some(p) = props.get(key).and_then(obj) {
                let t = str_of(p, "type");
                if t != "string" {
                    errs.push(FieldError::invalid_str(
                        path::child(&path::key(&path::child(at, "properties"), key), "type"),
                        t,
                        "must be string",
                    ));
                }
            }
        }
    }
    if let Some(meta) = props.and_then(|p| p.get("metadata")).and_then(obj) {
        metadata_invariants(
            meta,
            check_metadata,
            lvl,
            &path::key(&path::child(at, "properties"), "metadata"),
            errs,
        );
    }
    if embedded && !preserve && props.is_none_or(Map::is_empty) {
        errs.push(FieldError::required(
            path::child(at, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Keys of a `JSONSchemaProps` that the structural conversion keeps (others, like
/// `description` below metadata, make metadata "specify something").
fn metadata_invariants(
    m: &Map<String, Value>,
    check_metadata: bool,
    lvl: Level,
    at: &str,
    errs: &mut Vec<FieldError>,
) {
    let ty = str_of(m, "type");
    if check_metadata && ty != "object" {
        errs.push(FieldError::invalid_str(
            path::child(at, "type"),
            ty,
            "must be object",
        ));
    }
    if lvl == Level::Root {
        let mut allowed_only = true;
        for (k, v) in m {
            match k.as_str() {
                "type" | "default" => {}
                // Property schemas of name/generateName are dropped before the comparison, but
                // only when they are the only properties.
                "properties" => {
                    let props = v.as_object();
                    let ok = props.is_some_and(|p| {
                        let name = p.contains_key("name");
                        let gen_name = p.contains_key("generateName");
                        (name && gen_name && p.len() == 2)
                            || ((name || gen_name) && p.len() == 1)
                            || p.is_empty()
                    });
                    if !ok {
                        allowed_only = false;
                    }
                }
                // Fields the structural conversion drops (they do not make a difference upstream).
                "example" | "externalDocs" | "$schema" | "id" => {}
                "x-kubernetes-preserve-unknown-fields" if v == &Value::Bool(false) => {}
                "x-kubernetes-embedded-resource"
                | "x-kubernetes-int-or-string"
                | "nullable"
                | "uniqueItems"
                | "exclusiveMaximum"
                | "exclusiveMinimum"
                    if v == &Value::Bool(false) => {}
                _ => allowed_only = false,
            }
        }
        if !allowed_only {
            errs.push(FieldError::forbidden(
                at,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
}

fn value_validation(
    m: &Map<String, Value>,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    at: &str,
    errs: &mut Vec<FieldError>,
) {
    if !skip_any_of && let Some(any) = m.get("anyOf").and_then(Value::as_array) {
        for (i, v) in any.iter().enumerate() {
            if let Some(n) = obj(v) {
                nested(
                    n,
                    false,
                    false,
                    lvl,
                    &path::index(&path::child(at, "anyOf"), i),
                    errs,
                );
            }
        }
    }
    if let Some(all) = m.get("allOf").and_then(Value::as_array) {
        for (i, v) in all.iter().enumerate() {
            if let Some(n) = obj(v) {
                nested(
                    n,
                    skip_first_all_of_any_of && i == 0,
                    false,
                    lvl,
                    &path::index(&path::child(at, "allOf"), i),
                    errs,
                );
            }
        }
    }
    if let Some(one) = m.get("oneOf").and_then(Value::as_array) {
        for (i, v) in one.iter().enumerate() {
            if let Some(n) = obj(v) {
                nested(
                    n,
                    false,
                    false,
                    lvl,
                    &path::index(&path::child(at, "oneOf"), i),
                    errs,
                );
            }
        }
    }
    if let Some(not) = m.get("not").and_then(obj) {
        nested(not, false, false, lvl, &path::child(at, "not"), errs);
    }
    if let Some(p) = m.get("pattern").and_then(Value::as_str)
        && !p.is_empty()
        && let Err(e) = crate::node::compile_go_regex(p)
    {
        let text = e.to_string();
        let text: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        errs.push(FieldError::invalid_str(
            path::child(at, "pattern"),
            p,
            format!(
                "must be a valid regular expression, but isn't: {}",
                text.join(" ")
            ),
        ));
    }
}

fn nested(
    m: &Map<String, Value>,
    skip_any_of: bool,
    skip_all_of_any_of: bool,
    lvl: Level,
    at: &str,
    errs: &mut Vec<FieldError>,
) {
    value_validation(m, skip_any_of, skip_all_of_any_of, lvl, at, errs);
    if let Some(items) = m.get("items").and_then(obj) {
        nested(items, false, false, lvl, &path::child(at, "items"), errs);
    }
    if let Some(props) = m.get("properties").and_then(obj) {
        for (k, v) in props {
            if let Some(p) = obj(v) {
                nested(
                    p,
                    false,
                    false,
                    Level::Field,
                    &path::key(&path::child(at, "properties"), k),
                    errs,
                );
            }
        }
    }
    if !str_of(m, "type").is_empty() {
        errs.push(FieldError::forbidden(
            path::child(at, "type"),
            "must be empty to be structural",
        ));
    }
    if m.contains_key("additionalProperties") {
        errs.push(FieldError::forbidden(
            path::child(at, "additionalProperties"),
            "must be undefined to be structural",
        ));
    }
    if m.get("default").is_some_and(|d| !d.is_null()) {
        errs.push(FieldError::forbidden(
            path::child(at, "default"),
            "must be undefined to be structural",
        ));
    }
    if !str_of(m, "title").is_empty() {
        errs.push(FieldError::forbidden(
            path::child(at, "title"),
            "must be empty to be structural",
        ));
    }
    if !str_of(m, "description").is_empty() {
        errs.push(FieldError::forbidden(
            path::child(at, "description"),
            "must be empty to be structural",
        ));
    }
    if is_true(m, "nullable") {
        errs.push(FieldError::forbidden(
            path::child(at, "nullable"),
            "must be false to be structural",
        ));
    }
    for key in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if is_true(m, key) {
            errs.push(FieldError::forbidden(
                path::child(at, key),
                "must be false to be structural",
            ));
        }
    }
    if m.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        errs.push(FieldError::forbidden(
            path::child(at, "x-kubernetes-list-map-keys"),
            "must be empty to be structural",
        ));
    }
    for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if m.get(key).is_some_and(|v| !v.is_null()) {
            errs.push(FieldError::forbidden(
                path::child(at, key),
                "must be undefined to be structural",
            ));
        }
    }
    if m.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        errs.push(FieldError::forbidden(
            path::child(at, "x-kubernetes-validations"),
            "must be empty to be structural",
        ));
    }
    if m.get("properties")
        .and_then(obj)
        .is_some_and(|p| p.contains_key("metadata"))
    {
        errs.push(FieldError::forbidden(
            path::key(&path::child(at, "properties"), "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: everything a value validation mentions must be specified
/// in the structural part.
fn completeness(m: &Map<String, Value>, at: &str, errs: &mut Vec<FieldError>) {
    value_completeness(m, Some(m), at, at, errs);
    if let Some(items) = m.get("items").and_then(obj) {
        completeness(items, &path::child(at, "items"), errs);
    }
    if let Some(props) = m.get("properties").and_then(obj) {
        for (k, v) in props {
            if let Some(p) = obj(v) {
                completeness(p, &path::key(&path::child(at, "properties"), k), errs);
            }
        }
    }
    if let Some(a) = m.get("additionalProperties").and_then(obj) {
        completeness(a, &path::child(at, "additionalProperties"), errs);
    }
}

fn value_completeness(
    v: &Map<String, Value>,
    s: Option<&Map<String, Value>>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let has_vv = ["not", "allOf", "anyOf", "oneOf"]
        .iter()
        .any(|k| v.contains_key(*k));
    if !has_vv {
        return;
    }
    let Some(s) = s else {
        errs.push(FieldError::required(
            s_path,
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    if let Some(not) = v.get("not").and_then(obj) {
        nested_completeness(not, Some(s), s_path, &path::child(v_path, "not"), errs);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = v.get(key).and_then(Value::as_array) {
            for (i, n) in list.iter().enumerate() {
                if let Some(n) = obj(n) {
                    nested_completeness(
                        n,
                        Some(s),
                        s_path,
                        &path::index(&path::child(v_path, key), i),
                        errs,
                    );
                }
            }
        }
    }
}

fn nested_completeness(
    v: &Map<String, Value>,
    s: Option<&Map<String, Value>>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required(
            s_path,
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    value_completeness(v, Some(s), s_path, v_path, errs);
    if let Some(items) = v.get("items").and_then(obj) {
        nested_completeness(
            items,
            s.get("items").and_then(obj),
            &path::child(s_path, "items"),
            &path::child(v_path, "items"),
            errs,
        );
    }
    if let Some(props) = v.get("properties").and_then(obj) {
        let s_props = s.get("properties").and_then(obj);
        for (k, vf) in props {
            let Some(vf) = obj(vf) else { continue };
            let s_key = path::key(&path::child(s_path, "properties"), k);
            let v_key = path::key(&path::child(v_path, "properties"), k);
            match s_props.and_then(|p| p.get(k)).and_then(obj) {
                Some(sf) => nested_completeness(vf, Some(sf), &s_key, &v_key, errs),
                None => errs.push(FieldError::required(
                    s_key,
                    format!("because it is defined in {v_key}"),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::validate_structural;

    fn errs(v: serde_json::Value) -> Vec<String> {
        validate_structural(&v, "spec.versions[0].schema.openAPIV3Schema")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn missing_types() {
        assert_eq!(
            errs(json!({"properties": {"spec": {"properties": {"x": {"type": "string"}}}}})),
            vec![
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
                "spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root",
            ]
        );
        assert_eq!(
            errs(json!({"type": "object", "properties": {"l": {"type": "array", "items": {}}}})),
            vec![
                "spec.versions[0].schema.openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items"
            ]
        );
        assert_eq!(
            errs(json!({"type": "object", "properties": {"l": {"type": "array"}}})),
            vec![
                "spec.versions[0].schema.openAPIV3Schema.properties[l].items: Required value: must be specified"
            ]
        );
    }

    #[test]
    fn root_rules() {
        assert_eq!(
            errs(json!({"type": "string"})),
            vec![
                r#"spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root"#
            ]
        );
        assert_eq!(
            errs(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            vec![
                "spec.versions[0].schema.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root"
            ]
        );
    }

    #[test]
    fn metadata_may_only_restrict_name() {
        assert!(
            errs(json!({"type": "object", "properties": {"metadata": {"type": "object"}}}))
                .is_empty()
        );
        assert!(
            errs(
                json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"name": {"type": "string", "maxLength": 20}}}}})
            )
            .is_empty()
        );
        assert_eq!(
            errs(
                json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"labels": {"type": "object"}}}}})
            ),
            vec![
                "spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            ]
        );
    }

    #[test]
    fn nested_value_validations_must_be_structural() {
        let e = errs(
            json!({"type": "object", "properties": {"x": {"type": "string",
            "anyOf": [{"type": "string", "description": "d"}, {"properties": {"y": {"minLength": 1}}}]}}}),
        );
        assert_eq!(
            e,
            vec![
                "spec.versions[0].schema.openAPIV3Schema.properties[x].anyOf[0].description: Forbidden: must be empty to be structural",
                "spec.versions[0].schema.openAPIV3Schema.properties[x].anyOf[0].type: Forbidden: must be empty to be structural",
                "spec.versions[0].schema.openAPIV3Schema.properties[x].properties[y]: Required value: because it is defined in spec.versions[0].schema.openAPIV3Schema.properties[x].anyOf[1].properties[y]",
            ]
        );
    }

    #[test]
    fn int_or_string_pattern_is_allowed() {
        assert!(
            errs(
                json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}})
            )
            .is_empty()
        );
        assert_eq!(
            errs(
                json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true,
                "x-kubernetes-preserve-unknown-fields": true}}})
            ),
            vec![
                r#"spec.versions[0].schema.openAPIV3Schema.properties[port].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"#
            ]
        );
    }

    #[test]
    fn embedded_resource_rules() {
        assert_eq!(
            errs(
                json!({"type": "object", "properties": {"t": {"x-kubernetes-embedded-resource": true, "type": "object"}}})
            ),
            vec![
                "spec.versions[0].schema.openAPIV3Schema.properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            ]
        );
    }

    #[test]
    fn invalid_pattern() {
        let e = errs(
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(["}}}),
        );
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with(r#"spec.versions[0].schema.openAPIV3Schema.properties[x].pattern: Invalid value: "([": must be a valid regular expression, but isn't: "#), "{e:?}");
    }
}
