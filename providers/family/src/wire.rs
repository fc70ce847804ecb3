//! The mapping between a Kind's `forProvider` (CRD names, Secret references) and JFrog's
//! JSON (wire names, nested objects, identity and fixed members), both ways.
//!
//! Building a body: a set field is sent as given; an unset field gets the provider default
//! (so a field the user removes is reset in JFrog, not left behind), or its empty value
//! when it has none; unset server-defaulted fields are not sent (JFrog keeps or fills them).
//! Reading a body: every readable field is reported under its CRD name; secrets and
//! write-only values never are.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Map, Value};

use crate::decl::{Dv, Field, MapWire, Norm, ResolvedKind, Ty};

/// What is being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A new object.
    Create,
    /// An existing one.
    Update,
}

/// A value that cannot be mapped. Never carries a secret value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// A Secret reference is set but its value was not resolved.
    #[error("secret of spec.forProvider.{0} is not available")]
    MissingSecret(String),
    /// A value of the wrong shape (the CRD schema should prevent this).
    #[error("spec.forProvider.{field}: {message}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// The key sent to clear `defaultDeploymentRepo` (JFrog ignores an empty value and drops a
/// key that is not one of the members).
pub const CLEAR_SENTINEL: &str = "crossplane-cleared-default-deployment-repo";

/// The value of `forProvider.<crd>` when set (null counts as unset).
pub fn user_value<'a>(params: &'a Value, crd: &str) -> Option<&'a Value> {
    params.get(crd).filter(|v| !v.is_null())
}

/// The desired boolean of a field (user value or default).
pub fn desired_bool(kind: &ResolvedKind, params: &Value, crd: &str) -> bool {
    match user_value(params, crd) {
        Some(v) => v.as_bool().unwrap_or(false),
        None => kind
            .field(crd)
            .map(|f| f.default == Dv::Bool(true))
            .unwrap_or(false),
    }
}

/// The empty value JFrog accepts for "nothing" of a type, if there is one.
pub fn empty_of(ty: &Ty) -> Option<Value> {
    match ty {
        Ty::Str => Some(Value::String(String::new())),
        Ty::List | Ty::Set | Ty::ObjList(_) | Ty::ObjSet(_) => Some(Value::Array(Vec::new())),
        Ty::Map(MapWire::NameValue) => Some(Value::Array(Vec::new())),
        Ty::Map(MapWire::Object | MapWire::Lists) => Some(Value::Object(Map::new())),
        Ty::Bool | Ty::Int | Ty::Num | Ty::Block(_) | Ty::Object(_) => None,
    }
}

/// Set a dotted wire path in an object.
fn set_path(obj: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        None => {
            obj.insert(path.to_string(), v);
        }
        Some((head, rest)) => {
            let child = obj
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(m) = child {
                set_path(m, rest, v);
            }
        }
    }
}

/// Read a dotted wire path.
pub fn get_path<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.split('.') {
        cur = cur.get(seg)?;
    }
    (!cur.is_null()).then_some(cur)
}

/// [`get_path`] in an object's members (no copy of the object).
pub fn get_in<'a>(m: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let (first, rest) = path.split_once('.').unwrap_or((path, ""));
    let v = m.get(first)?;
    if rest.is_empty() {
        (!v.is_null()).then_some(v)
    } else {
        get_path(v, rest)
    }
}

/// Secrets by path (`passwordSecretRef`, `customHttpHeaders.0.valueSecretRef`).
pub type Secrets = BTreeMap<String, SecretString>;

/// Map the children of one object element.
fn object_to_wire(
    children: &[Field],
    elem: &Value,
    path: &str,
    secrets: &Secrets,
) -> Result<Map<String, Value>, MapError> {
    let mut out = Map::new();
    for c in children {
        let Some(wire) = c.wire else { continue };
        let cpath = format!("{path}.{}", c.crd);
        let v = if c.constant {
            match c.default.to_json() {
                Some(d) => d,
                None => continue,
            }
        } else if c.sensitive {
            if user_value(elem, c.crd).is_none() {
                continue;
            }
            secret_value(c, &cpath, secrets)?
        } else if let Some(r) = c.secret_ref
            && user_value(elem, r).is_some()
        {
            secret_value(c, &format!("{path}.{r}"), secrets)?
        } else {
            match user_value(elem, c.crd) {
                Some(v) => nested_to_wire(c, v, &cpath, secrets)?,
                None => match c.default.to_json() {
                    Some(d) => d,
                    None => continue,
                },
            }
        };
        set_path(&mut out, wire, v);
    }
    Ok(out)
}

/// The wire value of a sensitive field from the resolved secrets: one value for a key
/// reference, every key of the Secret for a map (a whole-Secret reference).
fn secret_value(f: &Field, path: &str, secrets: &Secrets) -> Result<Value, MapError> {
    if let Ty::Map(enc) = f.ty {
        let prefix = format!("{path}.");
        let entries: BTreeMap<&str, &SecretString> = secrets
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (&k[prefix.len()..], v))
            .collect();
        if entries.is_empty() {
            return Err(MapError::MissingSecret(path.to_string()));
        }
        let map: Map<String, Value> = entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.expose_secret().to_string())))
            .collect();
        return Ok(map_to_wire(enc, &map));
    }
    let s = secrets
        .get(path)
        .ok_or_else(|| MapError::MissingSecret(path.to_string()))?;
    Ok(Value::String(s.expose_secret().to_string()))
}

/// A map of strings as the API takes it.
fn map_to_wire(enc: MapWire, map: &Map<String, Value>) -> Value {
    match enc {
        MapWire::Object | MapWire::Lists => Value::Object(map.clone()),
        MapWire::NameValue => Value::Array(
            map.iter()
                .map(|(k, v)| serde_json::json!({"name": k, "value": v}))
                .collect(),
        ),
    }
}

/// A map of strings as the API answers it, in CRD shape (an object); `None` for another
/// shape.
pub fn map_from_wire(enc: MapWire, v: &Value) -> Option<Value> {
    match enc {
        MapWire::Object | MapWire::Lists => v.as_object().map(|_| v.clone()),
        MapWire::NameValue => {
            let mut out = Map::new();
            for e in v.as_array()? {
                let name = e.get("name").and_then(Value::as_str)?;
                let value = e
                    .get("value")
                    .cloned()
                    .unwrap_or(Value::String(String::new()));
                out.insert(name.to_string(), value);
            }
            Some(Value::Object(out))
        }
    }
}

fn scalar(f: &Field, v: &Value, path: &str) -> Result<Value, MapError> {
    let bad = |m: &str| MapError::Invalid {
        field: path.to_string(),
        message: m.to_string(),
    };
    Ok(match f.ty {
        Ty::Str if v.is_string() => v.clone(),
        Ty::Bool if v.is_boolean() => v.clone(),
        Ty::Int => match v.as_i64().or_else(|| v.as_f64().map(|x| x as i64)) {
            Some(i) => Value::from(i),
            None => return Err(bad("expected an integer")),
        },
        Ty::Num if v.is_number() => v.clone(),
        Ty::Num => return Err(bad("expected a number")),
        Ty::List | Ty::Set if v.is_array() => v.clone(),
        Ty::Map(enc) => match v.as_object() {
            Some(m) => map_to_wire(enc, m),
            None => return Err(bad("expected a map of strings")),
        },
        Ty::Str => return Err(bad("expected a string")),
        Ty::Bool => return Err(bad("expected a boolean")),
        _ => return Err(bad("expected a list")),
    })
}

/// The wire value of one set field.
fn field_to_wire(f: &Field, v: &Value, secrets: &Secrets) -> Result<Value, MapError> {
    nested_to_wire(f, v, f.crd, secrets)
}

/// The wire value of a set field at `path` (objects nest: a rule's criteria's CVSS range).
fn nested_to_wire(f: &Field, v: &Value, path: &str, secrets: &Secrets) -> Result<Value, MapError> {
    match f.ty {
        Ty::Block(children) => {
            let first = v
                .as_array()
                .and_then(|a| a.first())
                .cloned()
                .unwrap_or_else(|| v.clone());
            let path = format!("{path}.0");
            Ok(Value::Object(object_to_wire(
                children, &first, &path, secrets,
            )?))
        }
        Ty::Object(children) => Ok(Value::Object(object_to_wire(children, v, path, secrets)?)),
        Ty::ObjList(children) | Ty::ObjSet(children) => {
            let arr = v.as_array().ok_or_else(|| MapError::Invalid {
                field: path.to_string(),
                message: "expected a list".into(),
            })?;
            let mut out = Vec::with_capacity(arr.len());
            for (i, e) in arr.iter().enumerate() {
                let path = format!("{path}.{i}");
                out.push(Value::Object(object_to_wire(children, e, &path, secrets)?));
            }
            Ok(Value::Array(out))
        }
        _ => scalar(f, v, path),
    }
}

/// Build the request body for `key` from `params` (a `forProvider`-shaped object).
///
/// `skip` lists top-level fields not to send (init-only fields on update). `observed` is the
/// current state in CRD names (`from_wire`) on update, used to clear values JFrog only
/// clears in special ways.
pub fn to_wire(
    kind: &ResolvedKind,
    key: &str,
    params: &Value,
    secrets: &Secrets,
    mode: Mode,
    skip: &[String],
    observed: Option<&Value>,
) -> Result<Map<String, Value>, MapError> {
    let mut body = Map::new();
    if let Some(w) = kind.decl.id_wire
        && !key.is_empty()
    {
        set_path(&mut body, w, Value::String(key.to_string()));
    }
    for (w, v) in kind.decl.identity {
        set_path(&mut body, w, Value::String((*v).to_string()));
    }
    // Which secret input wins for the shared `password` member: the write-only variant.
    let wo_set = user_value(params, "passwordWoSecretRef").is_some();
    for f in kind.fields.iter().filter(|f| f.constant) {
        if let (Some(wire), Some(v)) = (f.wire, f.default.to_json()) {
            set_path(&mut body, wire, v);
        }
    }
    for f in kind.params() {
        let Some(wire) = f.wire else { continue };
        if skip.iter().any(|s| s == f.crd) {
            continue;
        }
        if let Some((gate, on)) = f.norm.gate()
            && desired_bool(kind, params, gate) != on
        {
            continue;
        }
        if let Some(r) = f.secret_ref
            && user_value(params, r).is_some()
        {
            // The plain field's Secret-reference form: the same member, from the Secret.
            set_path(&mut body, wire, secret_value(f, r, secrets)?);
            continue;
        }
        if f.sensitive {
            if f.crd == "passwordSecretRef" && wo_set {
                continue;
            }
            if user_value(params, f.crd).is_some() {
                set_path(&mut body, wire, secret_value(f, f.crd, secrets)?);
            }
            continue;
        }
        let value = match user_value(params, f.crd) {
            Some(v) => field_to_wire(f, v, secrets)?,
            None if f.ignore_unset => continue,
            None => match f.default.to_json() {
                Some(d) => d,
                None => {
                    if f.norm == Norm::ClearWithSentinel {
                        let current = observed
                            .and_then(|o| o.get(f.crd))
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        if mode == Mode::Update && !current.is_empty() {
                            set_path(&mut body, wire, Value::String(CLEAR_SENTINEL.into()));
                        }
                        continue;
                    }
                    // Write-only values are sent only when set; clearing one is a separate
                    // decision (see `clear_write_only`).
                    if f.write_only || mode == Mode::Create {
                        continue;
                    }
                    match empty_of(&f.ty) {
                        Some(e) => e,
                        None => continue,
                    }
                }
            },
        };
        // Sending an explicit empty value of a field JFrog stores as "absent" is harmless on
        // update and avoids leaving a removed value behind.
        set_path(&mut body, wire, value);
    }
    for (member, dv) in kind.decl.fixed_body {
        if let Some(v) = dv.to_json() {
            set_path(&mut body, member, v);
        }
    }
    Ok(body)
}

/// Convert the children of one wire object to CRD names.
fn object_from_wire(children: &[Field], elem: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for c in children {
        if !c.is_observed() {
            continue;
        }
        if let Some(v) = field_from_wire(c, elem) {
            out.insert(c.crd.to_string(), v);
        }
    }
    out
}

/// One field's observed value in CRD shape.
pub fn field_from_wire(f: &Field, body: &Value) -> Option<Value> {
    let wire = f.wire?;
    let v = get_path(body, wire)?;
    Some(match f.ty {
        Ty::Block(children) => Value::Array(vec![Value::Object(object_from_wire(children, v))]),
        Ty::Object(children) => Value::Object(object_from_wire(children, v)),
        Ty::ObjList(children) | Ty::ObjSet(children) => Value::Array(
            v.as_array()?
                .iter()
                .map(|e| Value::Object(object_from_wire(children, e)))
                .collect(),
        ),
        Ty::Map(enc) => map_from_wire(enc, v)?,
        _ => v.clone(),
    })
}

/// Every readable field of a JFrog body under its CRD name (the observed parameters plus
/// output-only fields). Secrets and write-only values are never included.
pub fn from_wire(kind: &ResolvedKind, body: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for f in &kind.fields {
        if !f.is_observed() {
            continue;
        }
        if let Some(v) = field_from_wire(f, body) {
            out.insert(f.crd.to_string(), v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::decl::Field;

    /// A path in an object's members is read as in the object itself.
    #[test]
    fn a_path_in_members_is_read_without_the_object() {
        let v = json!({"a": {"b": [1]}, "n": null, "s": "x"});
        let m = v.as_object().expect("object");
        for path in ["a", "a.b", "s", "n", "a.c", "missing", "s.t"] {
            assert_eq!(get_in(m, path), get_path(&v, path), "{path}");
        }
    }

    const INNER: &[Field] = &[Field::new(
        "repoKeys",
        "repo_keys",
        Some("repoKeys"),
        Ty::Set,
    )];
    const OUTER: &[Field] = &[
        Field::new(
            "artifactFilterCriteria",
            "artifact_filter_criteria",
            Some("artifactFilterCriteria"),
            Ty::Block(INNER),
        ),
        Field::new("name", "name", Some("name"), Ty::Str),
    ];

    /// A block inside a block is one object inside one object on the wire, and reads back
    /// in CRD shape (arrays of one object).
    #[test]
    fn nested_blocks_map_both_ways() {
        let f = Field::new(
            "filterCriteria",
            "filter_criteria",
            Some("fc"),
            Ty::Block(OUTER),
        );
        let crd = json!([{"artifactFilterCriteria": [{"repoKeys": ["libs"]}], "name": "n"}]);
        let wire = field_to_wire(&f, &crd, &Secrets::new()).expect("maps");
        assert_eq!(
            wire,
            json!({"artifactFilterCriteria": {"repoKeys": ["libs"]}, "name": "n"})
        );
        let back = field_from_wire(&f, &json!({"fc": wire})).expect("reads");
        assert_eq!(back, crd);
    }
}
