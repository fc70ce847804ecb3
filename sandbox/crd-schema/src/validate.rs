//! OpenAPI value validation of custom resources, as kube-openapi's `validate.SchemaValidator`
//! does it for apiextensions (`ValidateCustomResource`), plus `x-kubernetes-list-type`
//! uniqueness (`listtype.ValidateListSetsAndMaps`) and embedded-resource checks
//! (`objectmeta.Validate`).
//!
//! Messages are kube-openapi's (`spec.x in body must be of type integer: "string"`), converted
//! to field errors the way `kubeOpenAPIResultToFieldErrors` does (Kubernetes 1.33). The field
//! path of kube-openapi errors has no leading dot and indexes as `[i]`
//! (`spec.items[0].name`); errors kube-openapi raises without a path (anyOf/oneOf/allOf/not
//! summaries, numeric range checks) have an empty field, as in kube-apiserver.
//!
//! Deviations: when all `anyOf`/`oneOf` branches fail, kube-openapi reports the errors of the
//! branch with the most successful checks (`MatchCount`); here, of the branch with the fewest
//! errors. Embedded `metadata` is checked for the name only (not the whole `ObjectMeta`
//! validation). Enum membership compares JSON values (kube-openapi's reflection quirks, such as
//! an integer matching a one-rune string, are not reproduced).

use serde_json::Value;

use crate::node::{Additional, Node};
use crate::{FieldError, go_float, go_quote, render_value};

/// Validates `data` against `node` at the root path.
pub(crate) fn validate_value(node: &Node, data: &Value) -> Vec<FieldError> {
    validate_value_ratcheting(node, data, None)
}

/// Validates `data` against `node` with validation ratcheting (`CRDValidationRatcheting`, on by
/// default since Kubernetes 1.30): a subtree equal to its correlated old value (`old` on
/// update) is not validated, so unchanged parts of an object that a newer schema rejects do not
/// block updates. Old values correlate through properties, map keys and the keys of
/// `x-kubernetes-list-type: map` items.
pub(crate) fn validate_value_ratcheting(
    node: &Node,
    data: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_node(node, data, old, "", &mut errs);
    errs
}

/// The field of a kube-openapi error named `name`.
fn field_of(name: &str) -> String {
    if name == "." {
        String::new()
    } else {
        name.trim_start_matches('.').to_string()
    }
}

fn json_type(data: &Value) -> (&'static str, &'static str) {
    match data {
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) if n.is_i64() => ("integer", "int64"),
        Value::Number(_) => ("number", "float64"),
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("null", ""),
    }
}

fn as_float(data: &Value) -> f64 {
    data.as_f64().unwrap_or(0.0)
}

fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.trunc() == f && f.abs() < 9_007_199_254_740_992.0
}

fn type_error(path: &str, ty: &str, got: &str) -> FieldError {
    FieldError::type_invalid(
        field_of(path),
        go_quote(got),
        format!("{path} in body must be of type {ty}: {}", go_quote(got)),
    )
}

fn validate_node(
    n: &Node,
    data: &Value,
    old: Option<&Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if old.is_some_and(|o| o == data) {
        return;
    }
    if data.is_null() {
        if !n.types.is_empty() && !n.types.iter().any(|t| t == "null") && !n.nullable {
            errs.push(type_error(path, &n.types.join(","), "null"));
        }
        validate_enum(n, data, path, errs);
        return;
    }
    validate_type(n, data, path, errs);
    validate_props(n, data, old, path, errs);
    if let Value::String(s) = data {
        validate_string(n, s, path, errs);
        if let (Some(f), Some(name)) = (n.string_format, &n.format)
            && !f.validates(s)
        {
            errs.push(FieldError::type_invalid(
                field_of(path),
                go_quote(s),
                format!("{path} in body must be of type {name}: {}", go_quote(s)),
            ));
        }
    }
    if data.is_number() {
        validate_number(n, data, path, errs);
    }
    if let Value::Array(items) = data {
        validate_slice(n, items, old.and_then(Value::as_array), path, errs);
    }
    validate_enum(n, data, path, errs);
    if let Value::Object(map) = data {
        validate_object(n, map, old.and_then(Value::as_object), path, errs);
    }
}

fn validate_type(n: &Node, data: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if n.types.is_empty() && n.format.is_none() {
        return;
    }
    let (sch_type, data_format) = json_type(data);
    let contains = |t: &str| n.types.iter().any(|x| x == t);
    let is_float_int =
        sch_type == "number" && is_json_integer(as_float(data)) && contains("integer");
    let is_int_float = sch_type == "integer" && contains("number");
    let string_or_slice = matches!(data, Value::String(_) | Value::Array(_));
    if let Some(format) = &n.format
        && !string_or_slice
        && !(contains(sch_type) || data_format == format || is_float_int || is_int_float)
    {
        errs.push(type_error(path, format, data_format));
        return;
    }
    if !(contains("number") || contains("integer")) && n.format.is_some() && string_or_slice {
        return;
    }
    if !(contains(sch_type) || is_float_int || is_int_float) {
        errs.push(type_error(path, &n.types.join(","), sch_type));
    }
}

/// allOf / anyOf / oneOf / not, each branch validated at the same path.
fn validate_props(
    n: &Node,
    data: &Value,
    old: Option<&Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let run = |b: &Node| {
        let mut e = Vec::new();
        validate_node(b, data, old, path, &mut e);
        e
    };
    if !n.any_of.is_empty() {
        let results: Vec<Vec<FieldError>> = n.any_of.iter().map(run).collect();
        if !results.iter().any(Vec::is_empty) {
            errs.push(FieldError::invalid(
                "",
                "\"\"",
                format!(
                    "{} must validate at least one schema (anyOf)",
                    go_quote(path)
                ),
            ));
            if let Some(best) = results.into_iter().min_by_key(Vec::len) {
                errs.extend(best);
            }
        }
    }
    if !n.one_of.is_empty() {
        let results: Vec<Vec<FieldError>> = n.one_of.iter().map(run).collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        if valid != 1 {
            let extra = if valid == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {valid} valid alternatives")
            };
            errs.push(FieldError::invalid(
                "",
                "\"\"",
                format!(
                    "{} must validate one and only one schema (oneOf). {extra}",
                    go_quote(path)
                ),
            ));
            if valid == 0
                && let Some(best) = results.into_iter().min_by_key(Vec::len)
            {
                errs.extend(best);
            }
        }
    }
    if !n.all_of.is_empty() {
        let mut validated = 0;
        for b in &n.all_of {
            let r = run(b);
            if r.is_empty() {
                validated += 1;
            }
            errs.extend(r);
        }
        if validated != n.all_of.len() {
            let extra = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            errs.push(FieldError::invalid(
                "",
                "\"\"",
                format!(
                    "{} must validate all the schemas (allOf){extra}",
                    go_quote(path)
                ),
            ));
        }
    }
    if let Some(not) = &n.not
        && run(not).is_empty()
    {
        errs.push(FieldError::invalid(
            "",
            "\"\"",
            format!("{} must not validate the schema (not)", go_quote(path)),
        ));
    }
}

fn validate_string(n: &Node, s: &str, path: &str, errs: &mut Vec<FieldError>) {
    let len = s.chars().count() as i64;
    if let Some(max) = n.max_length
        && len > max
    {
        errs.push(FieldError::too_long(field_of(path), max));
        return;
    }
    if let Some(min) = n.min_length
        && len < min
    {
        errs.push(FieldError::invalid(
            field_of(path),
            go_quote(s),
            format!("{path} in body should be at least {min} chars long"),
        ));
        return;
    }
    if let Some((pattern, re)) = &n.pattern
        && !re.is_match(s)
    {
        errs.push(FieldError::invalid(
            field_of(path),
            go_quote(s),
            format!("{path} in body should match '{pattern}'"),
        ));
    }
}

/// kube-openapi `IsValueValidAgainstRange` for the checked value.
fn range_check(n: &Node, data: &Value, path: &str) -> Option<FieldError> {
    let single = if n.types.len() == 1 {
        n.types[0].as_str()
    } else {
        ""
    };
    let format = match (single, n.format.as_deref()) {
        ("integer", Some(f @ ("int32" | "int64"))) => f,
        ("number", Some(f @ ("float" | "double"))) => f,
        _ => "",
    };
    let ok = match single {
        "integer" => {
            let as_int = match data.as_i64() {
                Some(i) => Some(i),
                None => {
                    let f = as_float(data);
                    (is_json_integer(f) && f.abs() < 9.2e18).then_some(f as i64)
                }
            };
            match (as_int, format) {
                (None, _) => false,
                (Some(i), "int32") => i32::try_from(i).is_ok(),
                _ => true,
            }
        }
        _ => !(format == "float" && as_float(data).abs() > f64::from(f32::MAX)),
    };
    if ok {
        return None;
    }
    let type_name = if single.is_empty() { "number" } else { single };
    let msg = if format.is_empty() {
        format!("Checked value must be of type {type_name} (default format) in {path}")
    } else {
        format!("Checked value must be of type {type_name} with format {format} in {path}")
    };
    Some(FieldError::invalid("", "\"\"", msg))
}

fn validate_number(n: &Node, data: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(e) = range_check(n, data, path) {
        errs.push(e);
    }
    let int = data.as_i64();
    let value = render_value(data);
    let field = field_of(path);
    if let Some(factor) = n.multiple_of {
        let failed = match int {
            Some(i) if factor.trunc() == factor && factor as i64 != 0 => {
                (i % (factor as i64) != 0).then(|| (factor as i64).to_string())
            }
            _ => {
                let m = as_float(data) / factor;
                (!is_json_integer(m)).then(|| go_float(factor))
            }
        };
        if let Some(f) = failed {
            errs.push(FieldError::invalid(
                field.clone(),
                value.clone(),
                format!("{path} in body should be a multiple of {f}"),
            ));
        }
    }
    if let Some(min) = n.minimum {
        let (fails, shown) = match int {
            Some(i) => {
                let m = min as i64;
                (
                    (!n.exclusive_minimum && i < m) || (n.exclusive_minimum && i <= m),
                    m.to_string(),
                )
            }
            None => {
                let f = as_float(data);
                (
                    (!n.exclusive_minimum && f < min) || (n.exclusive_minimum && f <= min),
                    go_float(min),
                )
            }
        };
        if fails {
            let op = if n.exclusive_minimum {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errs.push(FieldError::invalid(
                field.clone(),
                value.clone(),
                format!("{path} in body should be {op} {shown}"),
            ));
        }
    }
    if let Some(max) = n.maximum {
        let (fails, shown) = match int {
            Some(i) => {
                let m = max as i64;
                (
                    (!n.exclusive_maximum && i > m) || (n.exclusive_maximum && i >= m),
                    m.to_string(),
                )
            }
            None => {
                let f = as_float(data);
                (
                    (!n.exclusive_maximum && f > max) || (n.exclusive_maximum && f >= max),
                    go_float(max),
                )
            }
        };
        if fails {
            let op = if n.exclusive_maximum {
                "less than"
            } else {
                "less than or equal to"
            };
            errs.push(FieldError::invalid(
                field,
                value,
                format!("{path} in body should be {op} {shown}"),
            ));
        }
    }
}

fn validate_slice(
    n: &Node,
    items: &[Value],
    old: Option<&Vec<Value>>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(item) = &n.items {
        for (i, v) in items.iter().enumerate() {
            let o = match (n.list_type.as_deref(), old) {
                (Some("map"), Some(olds)) => correlate_map_item(&n.list_map_keys, v, olds),
                _ => None,
            };
            validate_node(item, v, o, &format!("{path}[{i}]"), errs);
        }
    }
    let size = items.len() as i64;
    if let Some(min) = n.min_items
        && size < min
    {
        errs.push(FieldError::invalid(
            field_of(path),
            size.to_string(),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = n.max_items
        && size > max
    {
        errs.push(FieldError::too_many(field_of(path), size, max));
    }
    if n.unique_items {
        let mut seen = Vec::with_capacity(items.len());
        if items.iter().any(|v| {
            let dup = seen.iter().any(|s: &&Value| json_equal(s, v));
            seen.push(v);
            dup
        }) {
            errs.push(FieldError::invalid(
                field_of(path),
                "\"\"",
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }
}

/// The old item of a `x-kubernetes-list-type: map` list with the same keys as `item`.
pub(crate) fn correlate_map_item<'a>(
    keys: &[String],
    item: &Value,
    olds: &'a [Value],
) -> Option<&'a Value> {
    let item = item.as_object()?;
    olds.iter().find(|o| {
        o.as_object()
            .is_some_and(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
    })
}

/// JSON equality with numbers compared by value (`1` == `1.0`).
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn validate_enum(n: &Node, data: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(values) = &n.enum_values else { return };
    // kube-openapi never matches `null` (a nil value is not comparable by reflection).
    if values.is_empty() || (!data.is_null() && values.iter().any(|v| json_equal(v, data))) {
        return;
    }
    let allowed: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .collect();
    errs.push(FieldError::not_supported(
        field_of(path),
        render_value(data),
        &allowed,
    ));
}

fn validate_object(
    n: &Node,
    map: &serde_json::Map<String, Value>,
    old: Option<&serde_json::Map<String, Value>>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let size = map.len() as i64;
    if let Some(min) = n.min_properties
        && size < min
    {
        errs.push(FieldError::invalid(
            field_of(path),
            size.to_string(),
            format!("{path} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = n.max_properties
        && size > max
    {
        errs.push(FieldError::too_many(field_of(path), size, max));
    }
    match &n.additional {
        Some(Additional::Allows(false)) => {
            for k in map.keys() {
                if !n.properties.contains_key(k) {
                    errs.push(FieldError::invalid(
                        field_of(path),
                        go_quote(k),
                        format!("{path}.{k} in body is a forbidden property"),
                    ));
                }
            }
        }
        Some(Additional::Schema(a)) => {
            for (k, v) in map {
                if !n.properties.contains_key(k) {
                    validate_node(
                        a,
                        v,
                        old.and_then(|o| o.get(k)),
                        &format!("{path}.{k}"),
                        errs,
                    );
                }
            }
        }
        _ => {}
    }
    for (k, prop) in &n.properties {
        if let Some(v) = map.get(k) {
            let child = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            validate_node(prop, v, old.and_then(|o| o.get(k)), &child, errs);
        }
    }
    for k in &n.required {
        if !map.contains_key(k) {
            errs.push(FieldError::required(field_of(&format!("{path}.{k}")), ""));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// scale subresource

/// Go's `%T` of an unstructured value.
fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of an unstructured scalar.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".to_string(),
        other => render_value(other),
    }
}

/// `unstructured.NestedInt64` / `NestedString`: the value at a `.a.b` path, or the accessor
/// error.
fn nested<'a>(obj: &'a Value, path: &str, want: &str) -> Result<Option<&'a Value>, String> {
    let fields: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut cur = obj;
    for (i, f) in fields.iter().enumerate() {
        match cur.as_object() {
            Some(m) => match m.get(*f) {
                Some(v) => cur = v,
                None => return Ok(None),
            },
            None => {
                return Err(format!(
                    ".{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    fields[..i].join("."),
                    go_value(cur),
                    go_type_name(cur)
                ));
            }
        }
    }
    let ok = match want {
        "int64" => cur.as_i64().is_some(),
        _ => cur.is_string(),
    };
    if ok {
        Ok(Some(cur))
    } else {
        Err(format!(
            ".{} accessor error: {} is of the type {}, expected {want}",
            fields.join("."),
            go_value(cur),
            go_type_name(cur)
        ))
    }
}

fn replicas_errors(obj: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if path.is_empty() {
        return;
    }
    match nested(obj, path, "int64") {
        Err(e) => errs.push(FieldError::invalid(path, "0", e)),
        Ok(Some(v)) => {
            let n = v.as_i64().unwrap_or(0);
            if n < 0 {
                errs.push(FieldError::invalid(
                    path,
                    n.to_string(),
                    "should be a non-negative integer",
                ));
            } else if n > i64::from(i32::MAX) {
                errs.push(FieldError::invalid(
                    path,
                    n.to_string(),
                    format!("should be less than or equal to {}", i32::MAX),
                ));
            }
        }
        Ok(None) => {}
    }
}

/// `ValidateScaleSpec` and `ValidateScaleStatus` of a custom resource whose version has the
/// scale subresource `scale` (`{specReplicasPath, statusReplicasPath, labelSelectorPath}`).
/// The field is the JSON path as written (e.g. `.spec.replicas`), as upstream reports it.
/// `spec` is false for writes to `/status`, which only check the status paths.
pub fn validate_scale(obj: &Value, scale: &Value, spec: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let get = |k: &str| scale.get(k).and_then(Value::as_str).unwrap_or("");
    if spec {
        replicas_errors(obj, get("specReplicasPath"), &mut errs);
    }
    replicas_errors(obj, get("statusReplicasPath"), &mut errs);
    let sel = get("labelSelectorPath");
    if !sel.is_empty()
        && let Err(e) = nested(obj, sel, "string")
    {
        errs.push(FieldError::invalid(sel, "\"\"", e));
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// x-kubernetes-list-type

/// `listtype.ValidateListSetsAndMaps` over the whole object.
pub(crate) fn validate_list_types(n: &Node, data: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if n.has_list_types
        && let Value::Object(map) = data
    {
        list_types_object(n, map, path, &mut errs);
    }
    errs
}

fn list_types_object(
    n: &Node,
    map: &serde_json::Map<String, Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(a) = n.additional_schema()
        && a.has_list_types
    {
        for (k, v) in map {
            list_types_value(a, v, &crate::path::key(path, k), errs);
        }
    }
    for (k, v) in map {
        if let Some(sub) = n.properties.get(k)
            && sub.has_list_types
        {
            list_types_value(sub, v, &crate::path::child(path, k), errs);
        }
    }
}

fn list_types_value(n: &Node, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match v {
        Value::Array(items) => list_types_array(n, items, path, errs),
        Value::Object(map) => list_types_object(n, map, path, errs),
        _ => {}
    }
}

fn non_unique(items: &[Value]) -> Vec<usize> {
    let mut seen: Vec<(&Value, usize)> = Vec::new();
    let mut out = Vec::new();
    for (i, x) in items.iter().enumerate() {
        match seen.iter_mut().find(|(s, _)| json_equal(s, x)) {
            Some((_, times)) => {
                *times += 1;
                if *times == 2 {
                    out.push(i);
                }
            }
            None => seen.push((x, 1)),
        }
    }
    out
}

fn list_types_array(n: &Node, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    match n.list_type.as_deref() {
        Some("set") => {
            for i in non_unique(items) {
                errs.push(FieldError::duplicate(
                    crate::path::index(path, i),
                    render_value(&items[i]),
                ));
            }
        }
        Some("map") => list_map(n, items, path, errs),
        _ => {}
    }
    if let Some(item) = &n.items
        && item.has_list_types
    {
        for (i, v) in items.iter().enumerate() {
            list_types_value(item, v, &crate::path::index(path, i), errs);
        }
    }
}

fn list_map(n: &Node, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            errs.push(FieldError::invalid(
                crate::path::index(path, i),
                render_value(x),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if items.len() <= 1 {
        return;
    }
    // A missing key is "unspecified"; two unspecified keys are duplicates of each other.
    let keys: Vec<Value> = items
        .iter()
        .map(|x| {
            let mut key = serde_json::Map::new();
            if let Value::Object(o) = x {
                for k in &n.list_map_keys {
                    if let Some(v) = o.get(k) {
                        key.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    for i in non_unique(&keys) {
        errs.push(FieldError::duplicate(
            crate::path::index(path, i),
            render_value(&keys[i]),
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// x-kubernetes-embedded-resource

/// `objectmeta.Validate` for embedded resources below the root (the root's own metadata is the
/// server's business).
pub(crate) fn validate_embedded(n: &Node, data: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if n.has_embedded {
        embedded_walk(n, data, path, false, &mut errs);
    }
    errs
}

fn embedded_walk(n: &Node, data: &Value, path: &str, check_self: bool, errs: &mut Vec<FieldError>) {
    match data {
        Value::Object(map) => {
            if check_self && n.embedded_resource {
                embedded_resource(map, path, errs);
            }
            for (k, v) in map {
                if let Some(p) = n.properties.get(k) {
                    if p.has_embedded {
                        embedded_walk(p, v, &crate::path::child(path, k), true, errs);
                    }
                } else if let Some(a) = n.additional_schema()
                    && a.has_embedded
                {
                    embedded_walk(a, v, &crate::path::child(path, k), true, errs);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = &n.items
                && item.has_embedded
            {
                for (i, v) in items.iter().enumerate() {
                    embedded_walk(item, v, &crate::path::index(path, i), true, errs);
                }
            }
        }
        _ => {}
    }
}

fn embedded_resource(map: &serde_json::Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    use crate::path::child;
    if !map.contains_key("apiVersion") {
        errs.push(FieldError::required(
            child(path, "apiVersion"),
            "must not be empty",
        ));
    }
    if !map.contains_key("kind") {
        errs.push(FieldError::required(
            child(path, "kind"),
            "must not be empty",
        ));
    }
    for (k, v) in map {
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => errs.push(FieldError::invalid(
                    child(path, "apiVersion"),
                    render_value(v),
                    "must be a string",
                )),
                Some("") => errs.push(FieldError::invalid_str(
                    child(path, "apiVersion"),
                    "",
                    "must not be empty",
                )),
                Some(s) if s.matches('/').count() > 1 => errs.push(FieldError::invalid_str(
                    child(path, "apiVersion"),
                    s,
                    format!("unexpected GroupVersion string: {s}"),
                )),
                _ => {}
            },
            "kind" => match v.as_str() {
                None => errs.push(FieldError::invalid(
                    child(path, "kind"),
                    render_value(v),
                    "must be a string",
                )),
                Some("") => errs.push(FieldError::invalid_str(
                    child(path, "kind"),
                    "",
                    "must not be empty",
                )),
                Some(s) => {
                    let lower = s.to_lowercase();
                    let dns = crate::crd::dns1035_label_errors(&lower);
                    if !dns.is_empty() {
                        errs.push(FieldError::invalid_str(
                            child(path, "kind"),
                            s,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                dns.join(",")
                            ),
                        ));
                    }
                }
            },
            "metadata" if !v.is_object() => {
                errs.push(FieldError::invalid(
                    child(path, "metadata"),
                    render_value(v),
                    "must be an object",
                ));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Schema;

    fn schema(v: serde_json::Value) -> Schema {
        Schema::compile(&v).unwrap_or_else(|e| panic!("schema compiles: {e:?}"))
    }

    fn errors(s: &Schema, obj: serde_json::Value) -> Vec<String> {
        s.validate(&obj, None)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn spec_schema(props: serde_json::Value) -> Schema {
        schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}),
        )
    }

    #[test]
    fn type_mismatch_message() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "forProvider": {"type": "object", "properties": {"port": {"type": "integer"}}}}}}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {"forProvider": {"port": "string"}}})),
            vec![
                r#"spec.forProvider.port: Invalid value: "string": spec.forProvider.port in body must be of type integer: "string""#
            ]
        );
        assert!(errors(&s, json!({"spec": {"forProvider": {"port": 80}}})).is_empty());
    }

    #[test]
    fn each_type_is_checked() {
        let s = spec_schema(json!({
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": "array", "items": {"type": "string"}}
        }));
        assert!(
            errors(
                &s,
                json!({"spec": {"s": "x", "i": 1, "n": 1.5, "b": true, "o": {}, "a": ["x"]}})
            )
            .is_empty()
        );
        assert!(
            errors(&s, json!({"spec": {"n": 3}})).is_empty(),
            "integers are numbers"
        );
        let e = errors(
            &s,
            json!({"spec": {"s": 1, "i": 1.5, "b": "true", "o": [], "a": {}}}),
        );
        assert!(e.contains(&r#"spec.s: Invalid value: "integer": spec.s in body must be of type string: "integer""#.to_string()), "{e:?}");
        assert!(e.contains(&r#"spec.i: Invalid value: "number": spec.i in body must be of type integer: "number""#.to_string()), "{e:?}");
        assert!(e.contains(&r#": Invalid value: "": Checked value must be of type integer (default format) in spec.i"#.to_string()), "{e:?}");
        assert!(e.contains(&r#"spec.b: Invalid value: "string": spec.b in body must be of type boolean: "string""#.to_string()), "{e:?}");
        assert!(e.contains(&r#"spec.o: Invalid value: "array": spec.o in body must be of type object: "array""#.to_string()), "{e:?}");
        assert!(e.contains(&r#"spec.a: Invalid value: "object": spec.a in body must be of type array: "object""#.to_string()), "{e:?}");
    }

    #[test]
    fn integral_float_is_accepted_as_integer_like_upstream() {
        let s = spec_schema(json!({"i": {"type": "integer"}}));
        assert!(errors(&s, json!({"spec": {"i": 2.0}})).is_empty());
    }

    #[test]
    fn null_needs_nullable() {
        let s = spec_schema(
            json!({"a": {"type": "string"}, "b": {"type": "string", "nullable": true}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {"a": null, "b": null}})),
            vec![r#"spec.a: Invalid value: "null": spec.a in body must be of type string: "null""#]
        );
    }

    #[test]
    fn required_fields() {
        let s = schema(
            json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object",
            "required": ["x", "y"], "properties": {"x": {"type": "string"}, "y": {"type": "string"}}}}}),
        );
        assert_eq!(errors(&s, json!({})), vec!["spec: Required value"]);
        assert_eq!(
            errors(&s, json!({"spec": {"y": "a"}})),
            vec!["spec.x: Required value"]
        );
    }

    #[test]
    fn enum_values() {
        let s = spec_schema(
            json!({"x": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "integer", "enum": [1, 2]}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {"x": "c"}})),
            vec![r#"spec.x: Unsupported value: "c": supported values: "a", "b""#]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"n": 3}})),
            vec![r#"spec.n: Unsupported value: 3: supported values: "1", "2""#]
        );
        assert!(errors(&s, json!({"spec": {"x": "b", "n": 2}})).is_empty());
    }

    #[test]
    fn pattern_and_lengths() {
        let s = spec_schema(json!({
            "p": {"type": "string", "pattern": "^[a-z]+$"},
            "max": {"type": "string", "maxLength": 5},
            "min": {"type": "string", "minLength": 2}
        }));
        assert_eq!(
            errors(&s, json!({"spec": {"p": "ABC"}})),
            vec![r#"spec.p: Invalid value: "ABC": spec.p in body should match '^[a-z]+$'"#]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"max": "abcdef"}})),
            vec!["spec.max: Too long: may not be more than 5 bytes"]
        );
        assert!(
            errors(&s, json!({"spec": {"max": "ééééé"}})).is_empty(),
            "length counts runes"
        );
        assert_eq!(
            errors(&s, json!({"spec": {"min": "a"}})),
            vec![
                r#"spec.min: Invalid value: "a": spec.min in body should be at least 2 chars long"#
            ]
        );
    }

    #[test]
    fn numeric_bounds() {
        let s = spec_schema(json!({
            "i": {"type": "integer", "minimum": 1, "maximum": 10},
            "e": {"type": "integer", "minimum": 1, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true},
            "f": {"type": "number", "maximum": 1.5},
            "m": {"type": "integer", "multipleOf": 5},
            "i32": {"type": "integer", "format": "int32"}
        }));
        assert_eq!(
            errors(&s, json!({"spec": {"i": 0}})),
            vec!["spec.i: Invalid value: 0: spec.i in body should be greater than or equal to 1"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"i": 11}})),
            vec!["spec.i: Invalid value: 11: spec.i in body should be less than or equal to 10"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"e": 1}})),
            vec!["spec.e: Invalid value: 1: spec.e in body should be greater than 1"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"e": 10}})),
            vec!["spec.e: Invalid value: 10: spec.e in body should be less than 10"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"f": 2.5}})),
            vec!["spec.f: Invalid value: 2.5: spec.f in body should be less than or equal to 1.5"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"m": 7}})),
            vec!["spec.m: Invalid value: 7: spec.m in body should be a multiple of 5"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"i32": 3_000_000_000i64}})),
            vec![
                r#": Invalid value: "": Checked value must be of type integer with format int32 in spec.i32"#
            ]
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"i": 5, "e": 5, "f": 1.0, "m": 10, "i32": 7}})
            )
            .is_empty()
        );
    }

    #[test]
    fn items_and_properties_counts() {
        let s = spec_schema(json!({
            "l": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            "o": {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {"type": "string"}}
        }));
        assert_eq!(
            errors(&s, json!({"spec": {"l": []}})),
            vec!["spec.l: Invalid value: 0: spec.l in body should have at least 1 items"]
        );
        let e = errors(&s, json!({"spec": {"l": [{"name": "a"}, {}, {"name": 1}]}}));
        assert_eq!(
            e,
            vec![
                "spec.l[1].name: Required value".to_string(),
                r#"spec.l[2].name: Invalid value: "integer": spec.l[2].name in body must be of type string: "integer""#.to_string(),
                "spec.l: Too many: 3: must have at most 2 items".to_string(),
            ]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"o": {}}})),
            vec!["spec.o: Invalid value: 0: spec.o in body should have at least 1 properties"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"o": {"a": "x", "b": 1}}})),
            vec![
                "spec.o: Too many: 2: must have at most 1 items".to_string(),
                r#"spec.o.b: Invalid value: "integer": spec.o.b in body must be of type string: "integer""#.to_string(),
            ]
        );
    }

    #[test]
    fn formats_validated_and_unknown_ignored() {
        let s = spec_schema(json!({
            "t": {"type": "string", "format": "date-time"},
            "b": {"type": "string", "format": "byte"},
            "u": {"type": "string", "format": "made-up"},
            "x": {"type": "string", "format": "int32"}
        }));
        assert_eq!(
            errors(&s, json!({"spec": {"t": "yesterday"}})),
            vec![
                r#"spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday""#
            ]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"b": "not base64!"}})),
            vec![
                r#"spec.b: Invalid value: "not base64!": spec.b in body must be of type byte: "not base64!""#
            ]
        );
        assert!(errors(&s, json!({"spec": {"t": "2024-01-01T00:00:00Z", "b": "aGk=", "u": "anything", "x": "y"}})).is_empty());
    }

    #[test]
    fn int_or_string() {
        let s = spec_schema(json!({"p": {"x-kubernetes-int-or-string": true}}));
        assert!(errors(&s, json!({"spec": {"p": 80}})).is_empty());
        assert!(errors(&s, json!({"spec": {"p": "http"}})).is_empty());
        assert_eq!(
            errors(&s, json!({"spec": {"p": true}})),
            vec![
                r#"spec.p: Invalid value: "boolean": spec.p in body must be of type integer,string: "boolean""#
            ]
        );
    }

    #[test]
    fn any_of_and_not() {
        let s = spec_schema(json!({
            "a": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}},
                  "anyOf": [{"required": ["x"]}, {"required": ["y"]}]},
            "n": {"type": "string", "not": {"enum": ["forbidden"]}}
        }));
        assert!(errors(&s, json!({"spec": {"a": {"y": "1"}}})).is_empty());
        let e = errors(&s, json!({"spec": {"a": {}}}));
        assert_eq!(
            e[0],
            r#": Invalid value: "": "spec.a" must validate at least one schema (anyOf)"#
        );
        assert_eq!(e[1], "spec.a.x: Required value");
        assert_eq!(
            errors(&s, json!({"spec": {"n": "forbidden"}})),
            vec![r#": Invalid value: "": "spec.n" must not validate the schema (not)"#]
        );
    }

    #[test]
    fn list_type_set_and_map_duplicates() {
        let s = spec_schema(json!({
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}}
        }));
        assert_eq!(
            errors(&s, json!({"spec": {"set": ["a", "b", "a", "a"]}})),
            vec![r#"spec.set[2]: Duplicate value: "a""#]
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"map": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]}})
            ),
            vec![r#"spec.map[1]: Duplicate value: map[string]interface {}{"name":"a"}"#]
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"set": ["a", "b"], "map": [{"name": "a"}, {"name": "b"}]}})
            )
            .is_empty()
        );
    }

    #[test]
    fn embedded_resource_needs_kind_and_api_version() {
        let s = spec_schema(json!({
            "tpl": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
        }));
        assert_eq!(
            errors(&s, json!({"spec": {"tpl": {"metadata": {}}}})),
            vec![
                "spec.tpl.apiVersion: Required value: must not be empty",
                "spec.tpl.kind: Required value: must not be empty"
            ]
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"tpl": {"apiVersion": "v1", "kind": "ConfigMap"}}})
            )
            .is_empty()
        );
    }

    #[test]
    fn pattern_uses_ascii_perl_classes_like_re2() {
        let s = spec_schema(json!({"d": {"type": "string", "pattern": "^\\d+$"}}));
        assert!(errors(&s, json!({"spec": {"d": "123"}})).is_empty());
        assert_eq!(errors(&s, json!({"spec": {"d": "١٢٣"}})).len(), 1);
    }

    #[test]
    fn more_formats() {
        let s = spec_schema(json!({
            "u": {"type": "string", "format": "uuid"},
            "ip": {"type": "string", "format": "ipv4"},
            "h": {"type": "string", "format": "hostname"},
            "e": {"type": "string", "format": "email"},
            "d": {"type": "string", "format": "date"},
            "dur": {"type": "string", "format": "duration"}
        }));
        assert!(
            errors(
                &s,
                json!({"spec": {"u": "123e4567-e89b-12d3-a456-426614174000", "ip": "10.1.2.3",
            "h": "example.com", "e": "a@example.com", "d": "2024-02-29", "dur": "10m"}})
            )
            .is_empty()
        );
        let e = errors(
            &s,
            json!({"spec": {"u": "x", "ip": "300.1.1.1", "h": "-bad-", "e": "nope", "d": "2024-02-30", "dur": "ten"}}),
        );
        assert_eq!(
            e,
            vec![
                r#"spec.u: Invalid value: "x": spec.u in body must be of type uuid: "x""#,
                r#"spec.ip: Invalid value: "300.1.1.1": spec.ip in body must be of type ipv4: "300.1.1.1""#,
                r#"spec.h: Invalid value: "-bad-": spec.h in body must be of type hostname: "-bad-""#,
                r#"spec.e: Invalid value: "nope": spec.e in body must be of type email: "nope""#,
                r#"spec.d: Invalid value: "2024-02-30": spec.d in body must be of type date: "2024-02-30""#,
                r#"spec.dur: Invalid value: "ten": spec.dur in body must be of type duration: "ten""#,
            ]
        );
    }

    #[test]
    fn error_body_and_reason() {
        let s = spec_schema(json!({"i": {"type": "integer"}}));
        let e = s.validate(&json!({"spec": {"i": "x"}}), None);
        assert_eq!(e[0].kind.cause_reason(), "FieldValueTypeInvalid");
        assert_eq!(e[0].field, "spec.i");
        assert_eq!(
            e[0].body(),
            r#"Invalid value: "string": spec.i in body must be of type integer: "string""#
        );
    }

    #[test]
    fn scale_subresource_replicas() {
        use super::validate_scale;
        let scale = json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"});
        assert!(
            validate_scale(
                &json!({"spec": {"replicas": 3}, "status": {"replicas": 1, "selector": "a=b"}}),
                &scale,
                true
            )
            .is_empty()
        );
        let e: Vec<String> = validate_scale(
            &json!({"spec": {"replicas": -1}, "status": {"replicas": "x", "selector": 5}}),
            &scale,
            true,
        )
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            e,
            vec![
                ".spec.replicas: Invalid value: -1: should be a non-negative integer",
                ".status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64",
                r#".status.selector: Invalid value: "": .status.selector accessor error: 5 is of the type int64, expected string"#,
            ]
        );
        assert_eq!(
            validate_scale(&json!({"spec": {"replicas": -1}}), &scale, false).len(),
            0,
            "status writes skip spec"
        );
    }
}
