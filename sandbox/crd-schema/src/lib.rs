//! Structural-schema checks, validation, pruning, defaulting and CEL rules for CRDs.
//!
//! This crate is the part of the Kubernetes API test server that judges CustomResourceDefinitions
//! and custom resources the way kube-apiserver (apiextensions-apiserver) does. It knows nothing
//! of HTTP or storage: the server calls it with JSON values and turns the errors into `Status`
//! bodies.

use serde_json::Value;

/// One field error, as kube-apiserver's `field.Error` renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The kind of error (`Required`, `Invalid`, `Unsupported value`, `Forbidden`, ...).
    pub kind: FieldErrorKind,
    /// The field path, e.g. `spec.forProvider.description` or `spec.versions[0].schema.openAPIV3Schema`.
    pub field: String,
    /// The offending value rendered as kube-apiserver renders it, when there is one.
    pub value: Option<String>,
    /// The detail text (e.g. `must be of type string`).
    pub detail: String,
}

/// The field error types of `k8s.io/apimachinery/pkg/util/validation/field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    Required,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Duplicate,
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
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::TooMany => "Too many",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::TypeInvalid => "Invalid value",
            FieldErrorKind::UnknownField => "Invalid value",
        };
        match &self.value {
            Some(v) => write!(f, "{}: {}: {}: {}", self.field, kind, v, self.detail),
            None => write!(f, "{}: {}: {}", self.field, kind, self.detail),
        }
    }
}

/// Checks a whole `CustomResourceDefinition` object (apiextensions.k8s.io/v1) as the API server
/// does on create and update: names, group, scope, versions, and that every version's schema is
/// structural. `old` is the stored object on update. Returns every error found.
pub fn validate_crd(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let _ = (crd, old);
    Vec::new()
}

/// A compiled `openAPIV3Schema` of one CRD version, ready to default, prune and validate objects.
#[derive(Debug, Clone)]
pub struct Schema {
    raw: Value,
}

impl Schema {
    /// Compiles a schema that `validate_crd` accepted.
    pub fn compile(open_api_v3_schema: &Value) -> Result<Schema, Vec<FieldError>> {
        Ok(Schema { raw: open_api_v3_schema.clone() })
    }

    /// The schema as given.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// Applies `default`s in place (after pruning, as the API server does).
    pub fn apply_defaults(&self, obj: &mut Value) {
        let _ = obj;
    }

    /// Removes fields the schema does not know, in place, and returns their paths
    /// (e.g. `.spec.forProvider.colour`), so that `fieldValidation=Strict` can reject them and
    /// `Warn` can warn. `apiVersion`, `kind` and standard `metadata` fields are kept.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let _ = obj;
        Vec::new()
    }

    /// Validates an object (after pruning and defaulting) against the schema, including the
    /// `x-kubernetes-validations` CEL rules; `old` is the stored object on update (for
    /// `oldSelf` and transition rules).
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let _ = (obj, old);
        Vec::new()
    }
}
