//! OpenAPI v3 schemas (structural, as a CRD needs them) of a declared Kind's
//! `forProvider`/`initProvider` and `atProvider`, generated from its declared fields.
//!
//! - Names are the Terraform attribute names in camelCase; every parameter is optional in the
//!   schema (required parameters are enforced by the runtime's CEL rule over forProvider and
//!   initProvider, from `KindInfo::required_params`).
//! - Provider defaults are stated in the descriptions, not as schema `default`s: a schema
//!   default would be written into `forProvider` by the API server and override
//!   `initProvider`; the adapter applies the defaults itself.
//! - Sensitive values are Secret references: `{name, key}` plus an optional `namespace`
//!   (required by legacy cluster-scoped MRs, ignored for namespaced ones, whose Secret lives
//!   in the MR's namespace).
//! - A secret upstream keeps as a plain string also takes a Secret reference beside it
//!   (`<name>SecretRef`, see `Field::secret_ref`); a CEL rule allows at most one of the two.
//! - Immutable fields get a transition rule on the forProvider object: once set, a value
//!   cannot change or be removed.

use serde_json::{Map, Value, json};

use crate::decl::{Dv, Field, MapWire, ResolvedKind, Ty};

/// The `atProvider` member holding the hashes of the write-only values last sent.
pub const HASHES_FIELD: &str = "appliedWriteOnlyHashes";

fn default_text(d: Dv) -> Option<String> {
    match d {
        Dv::None => None,
        Dv::Bool(b) => Some(b.to_string()),
        Dv::Int(i) => Some(i.to_string()),
        Dv::Str("") => Some("\"\" (empty)".to_string()),
        Dv::Str(s) => Some(format!("\"{s}\"")),
        Dv::List([]) => Some("[] (empty)".to_string()),
        Dv::List(l) => Some(format!("{l:?}")),
    }
}

fn describe(f: &Field, for_params: bool) -> String {
    let mut d = crate::describe::for_users(f.doc);
    if for_params {
        if let Some(t) = default_text(f.default) {
            d.push_str(&format!(" Defaults to {t}."));
        } else if f.late_init {
            d.push_str(" When unset, JFrog's value is adopted.");
        }
        if f.immutable {
            d.push_str(" Cannot be changed once set.");
        }
        if f.write_only {
            d.push_str(" Write-only: JFrog never returns it.");
        }
    }
    d.trim_start().to_string()
}

/// The schema of a Secret key reference.
pub fn secret_ref_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "required": ["key", "name"],
        "properties": {
            "key": {"type": "string", "description": "The key of the Secret to select from."},
            "name": {"type": "string", "description": "Name of the Secret."},
            "namespace": {"type": "string", "description": "Namespace of the Secret (legacy cluster-scoped resources only; namespaced resources use their own namespace)."}
        }
    })
}

/// The schema of a whole-Secret reference (a sensitive map: every key of the Secret is an
/// entry).
pub fn secret_whole_ref_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "description": "Name of the Secret."},
            "namespace": {"type": "string", "description": "Namespace of the Secret (legacy cluster-scoped resources only; namespaced resources use their own namespace)."}
        }
    })
}

fn field_schema(f: &Field, for_params: bool) -> Value {
    let description = describe(f, for_params);
    if f.sensitive {
        return match f.ty {
            Ty::Map(_) => secret_whole_ref_schema(&description),
            _ => secret_ref_schema(&description),
        };
    }
    let mut s = match f.ty {
        Ty::Str => json!({"type": "string"}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::Int => json!({"type": "integer", "format": "int64"}),
        Ty::Num => json!({"type": "number"}),
        Ty::List => json!({"type": "array", "items": {"type": "string"}}),
        Ty::Set => {
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"})
        }
        Ty::Map(MapWire::Lists) => {
            json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}})
        }
        Ty::Map(_) => json!({"type": "object", "additionalProperties": {"type": "string"}}),
        Ty::Block(children) => {
            json!({"type": "array", "maxItems": 1, "items": object_schema(children, for_params)})
        }
        Ty::Object(children) => object_schema(children, for_params),
        Ty::ObjList(children) | Ty::ObjSet(children) => {
            json!({"type": "array", "items": object_schema(children, for_params)})
        }
    };
    if for_params {
        if let Some(min) = f.min {
            s["minimum"] = json!(min);
        }
        if !f.rules.is_empty() {
            let rules: Vec<Value> = f
                .rules
                .iter()
                .map(|r| json!({"rule": r.cel, "message": r.message}))
                .collect();
            let target = if f.ty.children().is_some() && !matches!(f.ty, Ty::Object(_)) {
                &mut s["items"]
            } else {
                &mut s
            };
            match target.get_mut("x-kubernetes-validations") {
                Some(Value::Array(have)) => have.extend(rules),
                _ => target["x-kubernetes-validations"] = Value::Array(rules),
            }
        }
    }
    if !f.enums.is_empty() {
        let target = if matches!(f.ty, Ty::Set | Ty::List) {
            &mut s["items"]
        } else {
            &mut s
        };
        if for_params {
            target["enum"] = json!(f.enums);
        }
    }
    if let Value::Object(m) = &mut s {
        m.insert("description".into(), Value::String(description));
    }
    s
}

fn object_schema(fields: &[Field], for_params: bool) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    let mut rules = Vec::new();
    for f in fields {
        if for_params && !f.is_param() {
            continue;
        }
        if !for_params && !f.is_observed() {
            continue;
        }
        props.insert(f.crd.to_string(), field_schema(f, for_params));
        if for_params && let Some(r) = f.secret_ref {
            props.insert(r.to_string(), secret_ref_schema(&secret_ref_text(f)));
            rules.push(one_of_rule(f, r));
            if f.required {
                let c = f.crd;
                rules.push(json!({
                    "rule": format!("has(self.{c}) || has(self.{r})"),
                    "message": format!("{c} or {r} is required"),
                }));
            }
            continue;
        }
        // Inside a list element, required children are required by the schema itself (the
        // element exists only if the user wrote it).
        if for_params && f.required {
            required.push(f.crd);
        }
    }
    let mut o = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        o["required"] = json!(required);
    }
    if !rules.is_empty() {
        o["x-kubernetes-validations"] = Value::Array(rules);
    }
    o
}

/// The description of a plain field's Secret-reference form.
fn secret_ref_text(f: &Field) -> String {
    format!(
        "A reference to a key of a Secret holding {}: the same value as {} (kept for compatibility with the upstream providers), read from a Secret instead; set one of the two. Write-only: compared by a hash of what was sent.",
        f.crd, f.crd
    )
}

/// At most one of a plain field and its Secret-reference form.
fn one_of_rule(f: &Field, r: &str) -> Value {
    let c = f.crd;
    json!({
        "rule": format!("!(has(self.{c}) && has(self.{r}))"),
        "message": format!("set {c} or {r}, not both"),
    })
}

/// The schema of `forProvider` / `initProvider`.
pub fn parameters_schema(kind: &ResolvedKind) -> Value {
    let mut props = Map::new();
    let mut rules = Vec::new();
    for f in kind.params() {
        props.insert(f.crd.to_string(), field_schema(f, true));
        if let Some(r) = f.secret_ref {
            props.insert(r.to_string(), secret_ref_schema(&secret_ref_text(f)));
            rules.push(one_of_rule(f, r));
        }
        if f.immutable {
            let c = f.crd;
            rules.push(json!({
                "rule": format!("!has(oldSelf.{c}) || (has(self.{c}) && self.{c} == oldSelf.{c})"),
                "message": format!("{c} is immutable: it cannot be changed or removed once set"),
            }));
        }
    }
    for r in kind.decl.rules {
        rules.push(json!({"rule": r.cel, "message": r.message}));
    }
    let mut s = json!({"type": "object", "properties": props});
    if !rules.is_empty() {
        s["x-kubernetes-validations"] = Value::Array(rules);
    }
    s
}

/// The schema of `atProvider`; `id_description` describes `atProvider.id` (the family's
/// `FamilyHooks::id_description`).
pub fn observation_schema(kind: &ResolvedKind, id_description: &str) -> Value {
    let mut props = Map::new();
    props.insert(
        "id".into(),
        json!({"type": "string", "description": id_description}),
    );
    for f in &kind.fields {
        if f.is_observed() {
            props.insert(f.crd.to_string(), field_schema(f, false));
        }
    }
    props.insert(
        HASHES_FIELD.into(),
        json!({
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Salted SHA-256 hashes of the write-only values (such as the upstream password) last sent to JFrog, by JSON member; used to detect a changed Secret without reading the value back."
        }),
    );
    json!({"type": "object", "properties": props})
}
