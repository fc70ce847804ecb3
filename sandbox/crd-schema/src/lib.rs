//! Structural-schema checks, validation, pruning, defaulting and CEL rules for CRDs.
//!
//! This crate is the part of the Kubernetes API test server that judges CustomResourceDefinitions
//! and custom resources the way kube-apiserver (apiextensions-apiserver, Kubernetes 1.33) does. It
//! knows nothing of HTTP or storage: the server calls it with JSON values and turns the errors into
//! `Status` bodies.
//!
//! Entry points:
//! - [`prune_crd_unknown_fields`] removes (and lists) fields a CRD object does not have,
//!   for strict field validation of CRDs themselves.
//! - [`default_crd`] fills the defaults the API server sets on a CRD (`listKind`, `singular`,
//!   `conversion.strategy`, ...), then [`validate_crd`] checks the CRD as the API server's
//!   `ValidateCustomResourceDefinition(Update)` does (names, versions, structural schemas,
//!   defaults, list types, CEL rules and their estimated cost, printer columns, subresources).
//! - [`Schema::compile`] turns one version's `openAPIV3Schema` into a tree with pre-compiled
//!   regexes and CEL programs; per object the server calls, in this order,
//!   [`Schema::prune`], [`Schema::apply_defaults`] and [`Schema::validate`] (or
//!   [`Schema::validate_status_update`] for writes to `/status`), plus [`validate_scale`] when
//!   the version has the scale subresource.
//!
//! Error format: every error is a [`FieldError`] whose `Display` is kube-apiserver's
//! `field.Error.Error()` (`<field>: <type>[: <value>][: <detail>]`), and [`FieldError::body`] is
//! its `ErrorBody()` (the `message` of a `Status` cause, whose `field` is [`FieldError::field`]).
//!
//! Paths and messages the server uses:
//! - [`Schema::prune`] and [`prune_crd_unknown_fields`] return paths like
//!   `spec.forProvider.colour` / `spec.items[0].x` (no leading dot); strict field validation
//!   reports `unknown field "<path>"` ([`FieldError::unknown_field`]), joined by `, ` after
//!   `strict decoding error: `, as kube-apiserver does.
//! - Field errors of custom resources look like
//!   `spec.forProvider.port: Invalid value: "string": spec.forProvider.port in body must be of type integer: "string"`,
//!   `spec.x: Unsupported value: "c": supported values: "a", "b"`, `spec.x: Required value`,
//!   `spec.x: Too long: may not be more than 5 bytes`, and for CEL rules
//!   `spec: Invalid value: "object": <message>`. Errors kube-openapi raises without a path have
//!   an empty field (rendered `: Invalid value: ...`), exactly as kube-apiserver renders them.
//!
//! Deviations from kube-apiserver, all known and deliberate:
//! - Validation ratcheting (`CRDValidationRatcheting`, on by default since 1.30) is
//!   implemented for the OpenAPI schema and CEL rules (unchanged subtrees are not judged); the
//!   warnings kube-apiserver returns for ratcheted CEL failures are not produced.
//! - CEL: no full type checker; see [`cel`]. The static cost of rules is estimated as
//!   kube-apiserver 1.37 does (per rule, times the node's cardinality, and per schema), and
//!   over-budget rules and schemas are refused with its messages; see [`cost`] for the
//!   estimator and its few deviations. The cost budget at evaluation time is not enforced.
//! - Messages of the `cel` crate and of Rust's regex parser differ from cel-go's and Go's.
//! - CRD defaults inside resource metadata are checked for "must result in valid metadata" by
//!   the common `ObjectMeta` rules (types, names, labels, annotations), not all of them.
//! - See also the module docs of [`crd`], [`validate`], [`cel`] and [`formats`].

pub mod cel;
pub mod cost;
pub mod crd;
pub mod crd_fields;
pub mod formats;
mod node;
mod path;
pub mod prune;
pub mod structural;
pub mod validate;

use std::sync::Arc;

use serde_json::Value;

pub use crd::{default_crd, validate_crd};
pub use crd_fields::prune_crd_unknown_fields;
pub use node::{Additional, Node};
pub use validate::validate_scale;

/// One field error, as kube-apiserver's `field.Error` renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The kind of error (`Required`, `Invalid`, `Unsupported value`, `Forbidden`, ...).
    pub kind: FieldErrorKind,
    /// The field path, e.g. `spec.forProvider.description` or `spec.versions[0].schema.openAPIV3Schema`.
    pub field: String,
    /// The offending value rendered as kube-apiserver renders it (Go `%q` for strings, bare
    /// numbers and booleans, JSON for objects and arrays), when the error type shows one.
    pub value: Option<String>,
    /// The detail text (e.g. `must be of type string`); may be empty.
    pub detail: String,
}

/// The field error types of `k8s.io/apimachinery/pkg/util/validation/field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// A required field is missing (`Required value`).
    Required,
    /// A value is not valid (`Invalid value`).
    Invalid,
    /// A value is not one of the allowed values (`Unsupported value`).
    NotSupported,
    /// A field or value is not allowed here (`Forbidden`).
    Forbidden,
    /// A string is longer than its maximum (`Too long`).
    TooLong,
    /// A list or map has more entries than its maximum (`Too many`).
    TooMany,
    /// A list entry repeats one that must be unique (`Duplicate value`).
    Duplicate,
    /// A value has the wrong type (`Invalid value`).
    TypeInvalid,
    /// A field the schema does not know (only reported under `fieldValidation=Strict`).
    UnknownField,
}

impl FieldErrorKind {
    /// The `reason` string used in a `Status` cause (`FieldValueRequired`, ...).
    pub fn cause_reason(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::TooLong => "FieldValueTooLong",
            FieldErrorKind::TooMany => "FieldValueTooMany",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
            FieldErrorKind::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorKind::UnknownField => "FieldValueInvalid",
        }
    }

    /// The text `field.ErrorType.String()` gives.
    pub fn label(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::TooMany => "Too many",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::TypeInvalid => "Invalid value",
            FieldErrorKind::UnknownField => "Invalid value",
        }
    }
}

impl FieldError {
    /// `field.Required(path, detail)`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Required,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Forbidden,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// `field.Invalid(path, value, detail)` with the value already rendered (see [`render_value`]).
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            value: Some(value.into()),
            detail: detail.into(),
        }
    }

    /// `field.Invalid(path, "<string>", detail)`: the common case of a string bad value.
    pub fn invalid_str(
        field: impl Into<String>,
        value: &str,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError::invalid(field, go_quote(value), detail)
    }

    /// `field.TypeInvalid(path, value, detail)` with the value already rendered.
    pub fn type_invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            kind: FieldErrorKind::TypeInvalid,
            field: field.into(),
            value: Some(value.into()),
            detail: detail.into(),
        }
    }

    /// `field.NotSupported(path, value, validValues)`.
    pub fn not_supported<S: AsRef<str>>(
        field: impl Into<String>,
        value: impl Into<String>,
        valid: &[S],
    ) -> FieldError {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v.as_ref())).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError {
            kind: FieldErrorKind::NotSupported,
            field: field.into(),
            value: Some(value.into()),
            detail,
        }
    }

    /// `field.Duplicate(path, value)`.
    pub fn duplicate(field: impl Into<String>, value: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Duplicate,
            field: field.into(),
            value: Some(value.into()),
            detail: String::new(),
        }
    }

    /// `field.TooLong(path, _, max)` (Kubernetes 1.33 wording).
    pub fn too_long(field: impl Into<String>, max: i64) -> FieldError {
        let detail = if max >= 0 {
            format!("may not be more than {max} bytes")
        } else {
            "value is too long".to_string()
        };
        FieldError {
            kind: FieldErrorKind::TooLong,
            field: field.into(),
            value: None,
            detail,
        }
    }

    /// `field.TooMany(path, actual, max)`.
    pub fn too_many(field: impl Into<String>, actual: i64, max: i64) -> FieldError {
        let detail = if max >= 0 {
            format!("must have at most {max} items")
        } else {
            "has too many items".to_string()
        };
        FieldError {
            kind: FieldErrorKind::TooMany,
            field: field.into(),
            value: (actual >= 0).then(|| actual.to_string()),
            detail,
        }
    }

    /// An unknown field found by pruning, as strict field validation reports it
    /// (`unknown field "spec.x"`); `field` is the pruned path.
    pub fn unknown_field(path: impl Into<String>) -> FieldError {
        let path = path.into();
        FieldError {
            kind: FieldErrorKind::UnknownField,
            detail: format!("unknown field {}", go_quote(&path)),
            field: path,
            value: None,
        }
    }

    /// `field.Error.ErrorBody()`: the error without its field path (a `Status` cause `message`).
    pub fn body(&self) -> String {
        if self.kind == FieldErrorKind::UnknownField {
            return self.detail.clone();
        }
        let mut s = self.kind.label().to_string();
        match self.kind {
            FieldErrorKind::Required | FieldErrorKind::Forbidden | FieldErrorKind::TooLong => {}
            _ => {
                if let Some(v) = &self.value {
                    s.push_str(": ");
                    s.push_str(v);
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.kind == FieldErrorKind::UnknownField {
            return f.write_str(&self.detail);
        }
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Renders a string as Go's `%q` does (double quotes, Go escapes, printable Unicode kept).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32))
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32))
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Formats a float as Go's `%v` does (`strconv.FormatFloat(f, 'g', -1, 64)`: shortest digits,
/// exponent form when the decimal exponent is below -4 or at least 21 is NOT what Go does: it
/// switches at 6 for the shortest form, so `1e6` prints as `1e+06`).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    let exp = f.abs().log10().floor() as i32;
    if (-4..6).contains(&exp) {
        format!("{f}")
    } else {
        // Rust's `{:e}` gives the shortest mantissa, e.g. `1e21`; Go writes `1e+21`.
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                let digits = if digits.len() < 2 {
                    format!("0{digits}")
                } else {
                    digits.to_string()
                };
                format!("{m}e{sign}{digits}")
            }
            None => s,
        }
    }
}

/// Renders a JSON value as `field.Error` (1.33) renders a bad value: strings quoted (`%q`),
/// numbers and booleans bare, `null` as `"null"`, objects and arrays as Go's `%#v` of
/// unstructured data (`map[string]interface {}{"k":"v"}`, `[]interface {}{1, 2}`).
pub fn render_value(v: &Value) -> String {
    match v {
        Value::Null => "\"null\"".to_string(),
        Value::String(s) => go_quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => go_number(v),
        other => go_sharp_v(other),
    }
}

fn go_number(v: &Value) -> String {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or(0.0)),
        },
        _ => String::new(),
    }
}

/// Go's `%#v` of an unstructured JSON value.
fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::String(s) => go_quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => go_number(v),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(go_sharp_v).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", go_quote(k), go_sharp_v(&m[*k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", items.join(", "))
        }
    }
}

/// A compiled `openAPIV3Schema` of one CRD version, ready to default, prune and validate objects.
///
/// Compiling builds a tree of [`Node`]s with every regex and CEL program compiled once; the
/// per-object calls only walk the tree. `Schema` is cheap to clone (the tree is shared) and
/// `Send + Sync`.
#[derive(Debug, Clone)]
pub struct Schema {
    raw: Value,
    root: Arc<Node>,
}

impl Schema {
    /// Compiles a schema that `validate_crd` accepted. A schema that is not structural, has an
    /// invalid pattern or a CEL rule that does not compile is refused with the errors
    /// `validate_crd` would report for these (paths relative to the schema, e.g.
    /// `properties[spec].type`); the other CRD schema rules (defaults, list types, ...) are
    /// only checked by [`validate_crd`] / [`crd::validate_crd_schema`].
    pub fn compile(open_api_v3_schema: &Value) -> Result<Schema, Vec<FieldError>> {
        // The full CRD schema checks are `validate_crd`'s job (and expensive on large schemas);
        // compiling only insists on what pruning, defaulting and validation rely on.
        if let Some(e) = crd::structural_conversion_error(open_api_v3_schema) {
            return Err(vec![FieldError::invalid("", "\"\"", e)]);
        }
        let errs = structural::validate_structural(open_api_v3_schema, "");
        if !errs.is_empty() {
            return Err(errs);
        }
        let (root, compile_errs) = Node::compile(open_api_v3_schema, "");
        if !compile_errs.is_empty() {
            return Err(compile_errs);
        }
        Ok(Schema {
            raw: open_api_v3_schema.clone(),
            root: Arc::new(root),
        })
    }

    /// The schema as given.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The compiled root node.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// Applies `default`s in place, as the API server does after pruning: absent fields (and
    /// `null`s where the field is not nullable) get their default, recursively (inside arrays
    /// and `additionalProperties` maps too, and defaults get their own nested defaults); then
    /// `null`s of non-nullable fields without a default are dropped
    /// (`PruneNonNullableNullsWithoutDefaults`).
    pub fn apply_defaults(&self, obj: &mut Value) {
        prune::default_value(obj, Some(&self.root));
        prune::prune_non_nullable_nulls(obj, Some(&self.root));
    }

    /// Removes fields the schema does not know, in place, and returns their paths, sorted, in
    /// kube-apiserver's format: keys joined by `.`, list indexes as `[i]`, no leading dot
    /// (e.g. `spec.forProvider.colour`, `spec.items[0].x`). Strict field validation reports each
    /// as `unknown field "<path>"` (see [`FieldError::unknown_field`]). `apiVersion`, `kind`
    /// and `metadata` at the root (and in embedded resources) are kept.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut paths = Vec::new();
        prune::prune_root(obj, &self.root, &mut paths);
        paths.sort();
        paths
    }

    /// Validates an object (after pruning and defaulting) against the schema, including the
    /// `x-kubernetes-validations` CEL rules; `old` is the stored object on update (for
    /// `oldSelf` and transition rules). Errors come in kube-apiserver's order (its
    /// `customResourceStrategy.Validate`): OpenAPI schema errors, embedded-resource errors,
    /// list-type errors (on update only when the old object had none), then CEL errors. As
    /// upstream, CEL rules are not evaluated when an earlier error is of a blocking type
    /// (Unsupported value, Required, Too long, Too many, type errors); a single
    /// `: Invalid value: "null": some validation rules were not checked ...` error says so.
    ///
    /// Metadata (`metadata.*`) is not validated here: that is the server's generic part.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = self.validate_without_rules(obj, old);
        errs.extend(self.validate_rules_unless_blocked(obj, old, &errs));
        errs
    }

    /// Validates a write to the `/status` subresource as kube-apiserver's status strategy does:
    /// the OpenAPI schema of `status` only (errors under `status.`, with kube-openapi's
    /// messages naming paths relative to `status`, e.g.
    /// `status.atProvider.id: Invalid value: "integer": atProvider.id in body must be of type string: "integer"`),
    /// list types of the whole object (when the old object had no such error), then the CEL
    /// rules of the whole object (unless blocked, as in [`Schema::validate`]).
    pub fn validate_status_update(&self, obj: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let (Some(status), Some(node)) = (obj.get("status"), self.root.properties.get("status"))
        {
            for mut e in validate::validate_value_ratcheting(node, status, old.get("status")) {
                e.field = if e.field.is_empty() {
                    "status".to_string()
                } else {
                    format!("status.{}", e.field)
                };
                errs.push(e);
            }
        }
        let new_list = validate::validate_list_types(&self.root, obj, "");
        if !new_list.is_empty() && validate::validate_list_types(&self.root, old, "").is_empty() {
            errs.extend(new_list);
        }
        errs.extend(self.validate_rules_unless_blocked(obj, Some(old), &errs));
        errs
    }

    /// The schema part of [`Schema::validate`] (OpenAPI, embedded resources, list types).
    pub fn validate_without_rules(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = validate::validate_value_ratcheting(&self.root, obj, old);
        errs.extend(validate::validate_embedded(&self.root, obj, ""));
        let old_list_ok =
            old.is_none_or(|o| validate::validate_list_types(&self.root, o, "").is_empty());
        if old_list_ok {
            errs.extend(validate::validate_list_types(&self.root, obj, ""));
        }
        errs
    }

    /// The CEL part of [`Schema::validate`]: `prior` are the errors found so far (including
    /// the server's own metadata errors, if it wants them to block CEL as upstream does).
    pub fn validate_rules_unless_blocked(
        &self,
        obj: &Value,
        old: Option<&Value>,
        prior: &[FieldError],
    ) -> Vec<FieldError> {
        let blocking = prior.iter().any(|e| {
            matches!(
                e.kind,
                FieldErrorKind::NotSupported
                    | FieldErrorKind::Required
                    | FieldErrorKind::TooLong
                    | FieldErrorKind::TooMany
                    | FieldErrorKind::TypeInvalid
            )
        });
        if blocking {
            if self.root.has_rules {
                return vec![FieldError::invalid(
                    "",
                    "\"null\"",
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                )];
            }
            return Vec::new();
        }
        cel::validate_rules(&self.root, obj, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Schema>();
    }

    #[test]
    fn renders_like_field_error() {
        let e = FieldError::required("spec.x", "");
        assert_eq!(e.to_string(), "spec.x: Required value");
        let e = FieldError::not_supported("spec.x", go_quote("c"), &["a", "b"]);
        assert_eq!(
            e.to_string(),
            r#"spec.x: Unsupported value: "c": supported values: "a", "b""#
        );
        let e = FieldError::too_long("spec.x", 5);
        assert_eq!(
            e.to_string(),
            "spec.x: Too long: may not be more than 5 bytes"
        );
        let e = FieldError::too_many("spec.x", 4, 3);
        assert_eq!(
            e.to_string(),
            "spec.x: Too many: 4: must have at most 3 items"
        );
        let e = FieldError::forbidden("spec.x", "nope");
        assert_eq!(e.body(), "Forbidden: nope");
        let e = FieldError::unknown_field("spec.colour");
        assert_eq!(e.to_string(), r#"unknown field "spec.colour""#);
    }

    #[test]
    fn go_formatting() {
        assert_eq!(go_quote("a\"b\n"), r#""a\"b\n""#);
        assert_eq!(go_float(10.0), "10");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(
            render_value(&serde_json::json!({"b": "x", "a": 1})),
            r#"map[string]interface {}{"a":1, "b":"x"}"#
        );
        assert_eq!(
            render_value(&serde_json::json!([1, "a"])),
            r#"[]interface {}{1, "a"}"#
        );
        assert_eq!(render_value(&Value::Null), r#""null""#);
    }

    #[test]
    fn status_update_validates_status_only() {
        let s = Schema::compile(&serde_json::json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}},
            "status": {"type": "object", "properties": {"atProvider": {"type": "object", "properties": {"id": {"type": "string"}}}}}
        }}))
        .unwrap_or_else(|e| panic!("{e:?}"));
        let old = serde_json::json!({"spec": {}});
        let new = serde_json::json!({"spec": {}, "status": {"atProvider": {"id": 5}}});
        let errs: Vec<String> = s
            .validate_status_update(&new, &old)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                r#"status.atProvider.id: Invalid value: "integer": atProvider.id in body must be of type string: "integer""#
            ]
        );
        assert_eq!(
            s.validate(&new, None).len(),
            2,
            "a main-resource create checks spec too"
        );
    }

    #[test]
    fn updates_ratchet_unchanged_invalid_values() {
        let s = Schema::compile(&serde_json::json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "a": {"type": "string", "maxLength": 3},
                "b": {"type": "string"},
                "c": {"type": "string", "x-kubernetes-validations": [{"rule": "self != 'bad'", "message": "not bad"}]}
            }}
        }}))
        .unwrap_or_else(|e| panic!("{e:?}"));
        // Stored under an older, looser schema.
        let old = serde_json::json!({"spec": {"a": "toolong", "b": "x", "c": "bad"}});
        let unchanged_a = serde_json::json!({"spec": {"a": "toolong", "b": "y", "c": "bad"}});
        assert!(s.validate(&unchanged_a, Some(&old)).is_empty());
        let changed_a = serde_json::json!({"spec": {"a": "stillbad", "b": "y", "c": "bad"}});
        let errs: Vec<String> = s
            .validate(&changed_a, Some(&old))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.a: Too long: may not be more than 3 bytes",
                r#": Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#
            ]
        );
        let new_c = serde_json::json!({"spec": {"a": "toolong", "b": "x", "c": "worse"}});
        let errs: Vec<String> = s
            .validate(&new_c, Some(&old))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            errs.is_empty(),
            "c changed but valid, a unchanged: {errs:?}"
        );
        let new_bad_c = serde_json::json!({"spec": {"a": "toolong", "b": "y", "c": "bad"}});
        let old_good_c = serde_json::json!({"spec": {"a": "toolong", "b": "y", "c": "good"}});
        let errs: Vec<String> = s
            .validate(&new_bad_c, Some(&old_good_c))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(errs, vec![r#"spec.c: Invalid value: "string": not bad"#]);
        assert_eq!(
            s.validate(&unchanged_a, None).len(),
            2,
            "no ratcheting on create"
        );
    }
}
