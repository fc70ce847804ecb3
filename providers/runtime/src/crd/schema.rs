//! JSON Schema (as schemars writes it) to a Kubernetes structural OpenAPI v3 schema.
//!
//! A CRD schema must be structural: every node has a type (or
//! `x-kubernetes-preserve-unknown-fields`), no `$ref`, no `additionalProperties` next to
//! `properties`, no `uniqueItems: true`, no type arrays. This module inlines references,
//! turns `Option` (`anyOf [X, null]`, `type: [x, "null"]`) into `X`, enum variants
//! (`oneOf` of `const`s) into `enum`, free-form values into preserve-unknown-fields nodes,
//! and drops JSON Schema keywords Kubernetes rejects or ignores.

use serde_json::{Map, Value, json};

/// How deep references are inlined before a node is left schemaless (recursive types).
const MAX_DEPTH: usize = 24;

/// Formats Kubernetes knows; others are dropped (uint formats become `minimum: 0`).
const KNOWN_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "date",
    "date-time",
    "password",
    "uri",
    "email",
    "uuid",
    "hostname",
    "ipv4",
    "ipv6",
    "duration",
];

/// Converts a schemars root schema to a structural schema.
pub fn structural(root: &Value) -> Value {
    convert(root, root, 0)
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn preserve() -> Value {
    json!({"x-kubernetes-preserve-unknown-fields": true})
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
        || v.get("const").is_some_and(Value::is_null)
        || v.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|a| a.len() == 1 && a[0].is_null())
}

fn convert(node: &Value, root: &Value, depth: usize) -> Value {
    let obj = match node {
        Value::Bool(_) => return preserve(),
        Value::Object(o) => o,
        _ => return preserve(),
    };
    if depth > MAX_DEPTH {
        return preserve();
    }

    // `$ref` (possibly with sibling keywords such as description/default).
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let Some(target) = resolve(root, r) else {
            return preserve();
        };
        let mut inner = convert(target, root, depth + 1);
        merge_annotations(&mut inner, obj);
        return inner;
    }

    // anyOf/oneOf/allOf wrappers.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = obj.get(key) {
            let non_null: Vec<&Value> = alts.iter().filter(|a| !is_null_schema(a)).collect();
            if non_null.len() == 1 {
                let mut inner = convert(non_null[0], root, depth + 1);
                merge_annotations(&mut inner, obj);
                return inner;
            }
            // A string enum written as one variant per alternative.
            let consts: Option<Vec<Value>> = non_null
                .iter()
                .map(|a| {
                    a.get("const").cloned().or_else(|| {
                        a.get("enum")
                            .and_then(Value::as_array)
                            .filter(|e| e.len() == 1)
                            .map(|e| e[0].clone())
                    })
                })
                .collect();
            if let Some(values) = consts.filter(|v| v.iter().all(Value::is_string)) {
                let mut out = json!({"type": "string", "enum": values});
                merge_annotations(&mut out, obj);
                return out;
            }
            // Anything else (untagged unions) cannot be structural with one type.
            let mut out = preserve();
            merge_annotations(&mut out, obj);
            return out;
        }
    }
    if let Some(Value::Array(parts)) = obj.get("allOf") {
        let mut merged = Map::new();
        for p in parts {
            if let Value::Object(c) = convert(p, root, depth + 1) {
                for (k, v) in c {
                    merged.entry(k).or_insert(v);
                }
            }
        }
        let mut out = Value::Object(merged);
        merge_annotations(&mut out, obj);
        return out;
    }

    let mut out = Map::new();
    // Type: drop "null" from type arrays.
    let ty = match obj.get("type") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(a)) => {
            let t: Vec<&str> = a
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            if t.len() == 1 {
                Some(t[0].to_string())
            } else {
                None
            }
        }
        _ => None,
    };
    let ty = ty.or_else(|| {
        if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
            Some("object".into())
        } else if obj.contains_key("items") {
            Some("array".into())
        } else if let Some(Value::Array(e)) = obj.get("enum") {
            e.iter().all(Value::is_string).then(|| "string".into())
        } else if let Some(Value::String(_)) = obj.get("const") {
            Some("string".into())
        } else {
            None
        }
    });
    let Some(ty) = ty else {
        let mut p = preserve();
        merge_annotations(&mut p, obj);
        return p;
    };
    out.insert("type".into(), Value::String(ty.clone()));

    for (k, v) in obj {
        match k.as_str() {
            "description" | "default" | "minimum" | "maximum" | "minLength" | "maxLength"
            | "pattern" | "minItems" | "maxItems" | "minProperties" | "maxProperties"
            | "multipleOf" => {
                out.insert(k.clone(), v.clone());
            }
            "exclusiveMinimum" | "exclusiveMaximum" => {
                if let Some(n) = v.as_f64() {
                    let base = if k == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    out.insert(base.into(), json!(n));
                    out.insert(k.clone(), Value::Bool(true));
                } else {
                    out.insert(k.clone(), v.clone());
                }
            }
            "enum" => {
                let vals: Vec<Value> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|x| !x.is_null())
                    .cloned()
                    .collect();
                out.insert("enum".into(), Value::Array(vals));
            }
            "const" if !v.is_null() => {
                out.insert("enum".into(), json!([v]));
            }
            "format" => {
                if let Some(f) = v.as_str() {
                    if KNOWN_FORMATS.contains(&f) {
                        out.insert("format".into(), v.clone());
                    } else if f.starts_with("uint") && !obj.contains_key("minimum") {
                        out.insert("minimum".into(), json!(0));
                    }
                }
            }
            "items" => {
                let items = match v {
                    Value::Array(a) if !a.is_empty() => convert(&a[0], root, depth + 1),
                    other => convert(other, root, depth + 1),
                };
                out.insert("items".into(), items);
            }
            "properties" => {
                if let Value::Object(props) = v {
                    let converted: Map<String, Value> = props
                        .iter()
                        .map(|(name, s)| (name.clone(), convert(s, root, depth + 1)))
                        .collect();
                    out.insert("properties".into(), Value::Object(converted));
                }
            }
            "required" if v.as_array().is_some_and(|a| !a.is_empty()) => {
                out.insert("required".into(), v.clone());
            }
            k if k.starts_with("x-kubernetes-") => {
                out.insert(k.to_string(), v.clone());
            }
            _ => {}
        }
    }

    if ty == "object" && !obj.contains_key("properties") {
        match obj.get("additionalProperties") {
            Some(Value::Object(_)) => {
                let ap = convert(&obj["additionalProperties"], root, depth + 1);
                out.insert("additionalProperties".into(), ap);
            }
            Some(Value::Bool(false)) => {}
            _ => {
                out.insert(
                    "x-kubernetes-preserve-unknown-fields".into(),
                    Value::Bool(true),
                );
            }
        }
    }
    if ty == "array" {
        if !out.contains_key("items") {
            out.insert("items".into(), preserve());
        }
        if obj.get("uniqueItems") == Some(&Value::Bool(true))
            && !out.contains_key("x-kubernetes-list-type")
        {
            let scalar = out["items"]
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t != "object" && t != "array");
            if scalar {
                out.insert("x-kubernetes-list-type".into(), json!("set"));
            }
        }
    }
    Value::Object(out)
}

/// Copies description/default from a wrapper node onto its converted content.
fn merge_annotations(target: &mut Value, wrapper: &Map<String, Value>) {
    if let Value::Object(t) = target {
        for key in ["description", "default"] {
            if let Some(v) = wrapper.get(key)
                && !v.is_null()
            {
                t.insert(key.into(), v.clone());
            }
        }
    }
}

/// Removes `required` at every level (initProvider has forProvider's shape, all optional).
pub fn strip_required(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            o.remove("required");
            for (k, v) in o.iter_mut() {
                if k == "properties" {
                    if let Value::Object(props) = v {
                        props.values_mut().for_each(strip_required);
                    }
                } else if k == "items" || k == "additionalProperties" {
                    strip_required(v);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_required),
        _ => {}
    }
}

/// Checks the structural-schema rules this module promises, returning the first violation's
/// path. Used by tests and by the generator as a guard.
pub fn check_structural(schema: &Value, path: &str) -> Result<(), String> {
    let Value::Object(o) = schema else {
        return Err(format!("{path}: not an object"));
    };
    for forbidden in [
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "$defs",
        "definitions",
        "uniqueItems",
    ] {
        if o.contains_key(forbidden) {
            return Err(format!("{path}: has {forbidden}"));
        }
    }
    let preserve = o.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    match o.get("type") {
        Some(Value::String(_)) => {}
        None if preserve || o.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) => {}
        other => return Err(format!("{path}: bad type {other:?}")),
    }
    if o.contains_key("properties") && o.contains_key("additionalProperties") {
        return Err(format!("{path}: properties and additionalProperties"));
    }
    if let Some(Value::Object(props)) = o.get("properties") {
        for (k, v) in props {
            check_structural(v, &format!("{path}.{k}"))?;
        }
    }
    if let Some(items) = o.get("items") {
        check_structural(items, &format!("{path}[]"))?;
    }
    if let Some(ap @ Value::Object(_)) = o.get("additionalProperties") {
        check_structural(ap, &format!("{path}{{}}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its derived schema is used")]
    enum Color {
        Red,
        Blue,
    }

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its derived schema is used")]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        /// A name.
        name: String,
        count: Option<u32>,
    }

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its derived schema is used")]
    #[serde(rename_all = "camelCase")]
    struct Params {
        /// Description of the thing.
        description: Option<String>,
        inner: Option<Inner>,
        many: Vec<Inner>,
        tags: std::collections::BTreeSet<String>,
        labels: std::collections::BTreeMap<String, String>,
        color: Option<Color>,
        free: serde_json::Value,
        size: i64,
    }

    #[test]
    fn converts_schemars_output_to_structural() {
        let root = serde_json::to_value(schemars::schema_for!(Params)).unwrap();
        let s = structural(&root);
        check_structural(&s, "").unwrap();
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["description"]["type"], "string");
        assert_eq!(
            s["properties"]["description"]["description"],
            "Description of the thing."
        );
        assert_eq!(
            s["properties"]["inner"]["properties"]["name"]["type"],
            "string"
        );
        assert_eq!(
            s["properties"]["inner"]["properties"]["count"]["minimum"],
            0
        );
        assert_eq!(s["properties"]["many"]["items"]["type"], "object");
        assert_eq!(s["properties"]["tags"]["x-kubernetes-list-type"], "set");
        assert_eq!(
            s["properties"]["labels"]["additionalProperties"]["type"],
            "string"
        );
        assert_eq!(s["properties"]["color"]["enum"], json!(["Red", "Blue"]));
        assert_eq!(
            s["properties"]["free"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(s["properties"]["size"]["format"], "int64");
    }

    #[test]
    fn strip_required_everywhere() {
        let root = serde_json::to_value(schemars::schema_for!(Params)).unwrap();
        let mut s = structural(&root);
        assert!(s.get("required").is_some());
        strip_required(&mut s);
        assert!(s.get("required").is_none());
        assert!(s["properties"]["many"]["items"].get("required").is_none());
    }
}
