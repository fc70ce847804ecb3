//! The mapping between a Kind's `forProvider` (CRD names, Secret references) and JFrog's
//! repository JSON (wire names, nested objects, fixed `rclass`/`packageType`), both ways.
//!
//! Building a body: a set field is sent as given; an unset field gets the provider default
//! (so a field the user removes is reset in JFrog, not left behind), or its empty value
//! when it has none; unset server-defaulted fields are not sent (JFrog keeps or fills them).
//! Reading a body: every readable field is reported under its CRD name; secrets and
//! write-only values never are.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Map, Value};

use super::decl::{Class, Dv, Field, Norm, ResolvedKind, Ty};

/// What is being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `PUT` of a new repository.
    Create,
    /// `POST` of an existing one (JFrog merges the members sent).
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
fn desired_bool(kind: &ResolvedKind, params: &Value, crd: &str) -> bool {
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
        Ty::Bool | Ty::Int | Ty::Block(_) => None,
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
        let v = if c.sensitive {
            if user_value(elem, c.crd).is_none() {
                continue;
            }
            let s = secrets
                .get(&cpath)
                .ok_or_else(|| MapError::MissingSecret(cpath.clone()))?;
            Value::String(s.expose_secret().to_string())
        } else {
            match user_value(elem, c.crd) {
                Some(v) => scalar(c, v, &cpath)?,
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
        Ty::List | Ty::Set if v.is_array() => v.clone(),
        Ty::Str => return Err(bad("expected a string")),
        Ty::Bool => return Err(bad("expected a boolean")),
        _ => return Err(bad("expected a list")),
    })
}

/// The wire value of one set field.
fn field_to_wire(f: &Field, v: &Value, secrets: &Secrets) -> Result<Value, MapError> {
    match f.ty {
        Ty::Block(children) => {
            let first = v
                .as_array()
                .and_then(|a| a.first())
                .cloned()
                .unwrap_or_else(|| v.clone());
            let path = format!("{}.0", f.crd);
            Ok(Value::Object(object_to_wire(
                children, &first, &path, secrets,
            )?))
        }
        Ty::ObjList(children) | Ty::ObjSet(children) => {
            let arr = v.as_array().ok_or_else(|| MapError::Invalid {
                field: f.crd.to_string(),
                message: "expected a list".into(),
            })?;
            let mut out = Vec::with_capacity(arr.len());
            for (i, e) in arr.iter().enumerate() {
                let path = format!("{}.{i}", f.crd);
                out.push(Value::Object(object_to_wire(children, e, &path, secrets)?));
            }
            Ok(Value::Array(out))
        }
        _ => scalar(f, v, f.crd),
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
    body.insert("key".into(), Value::String(key.to_string()));
    body.insert(
        "rclass".into(),
        Value::String(kind.decl.class.as_str().into()),
    );
    body.insert(
        "packageType".into(),
        Value::String(kind.decl.package_type.into()),
    );
    // Which secret input wins for the shared `password` member: the write-only variant.
    let wo_set = user_value(params, "passwordWoSecretRef").is_some();
    for f in kind.params() {
        let Some(wire) = f.wire else { continue };
        if skip.iter().any(|s| s == f.crd) {
            continue;
        }
        if let Norm::OnlyWhen(gate) = f.norm
            && !desired_bool(kind, params, gate)
        {
            continue;
        }
        if f.sensitive {
            if f.crd == "passwordSecretRef" && wo_set {
                continue;
            }
            if user_value(params, f.crd).is_some() {
                let s = secrets
                    .get(f.crd)
                    .ok_or_else(|| MapError::MissingSecret(f.crd.to_string()))?;
                set_path(
                    &mut body,
                    wire,
                    Value::String(s.expose_secret().to_string()),
                );
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
            body.insert((*member).to_string(), v);
        }
    }
    if kind.decl.class == Class::Federated && mode == Mode::Create && !body.contains_key("members")
    {
        body.insert("members".into(), Value::Array(Vec::new()));
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
        if let Some(wire) = c.wire
            && let Some(v) = get_path(elem, wire)
        {
            out.insert(c.crd.to_string(), v.clone());
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
        Ty::ObjList(children) | Ty::ObjSet(children) => Value::Array(
            v.as_array()?
                .iter()
                .map(|e| Value::Object(object_from_wire(children, e)))
                .collect(),
        ),
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
