//! `Status` error bodies as kube-apiserver writes them (`k8s.io/apimachinery/pkg/api/errors`).
//!
//! Every failed request ends as an [`ApiError`], which renders to a `meta/v1 Status` object
//! with the same `reason`, `code`, `message` shape and `details` a real server sends, so that
//! clients (kubectl, kube-rs, client-go) classify errors exactly as they would against a cluster.

use serde_json::{Value, json};

/// A failed API request, rendered as a `Status` body.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason` (`NotFound`, `Conflict`, ...).
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, when there are some.
    pub details: Option<Value>,
}

/// The identity of the object an error is about: its group, resource (plural) and kind.
#[derive(Debug, Clone, Default)]
pub struct Qualified {
    pub group: String,
    pub resource: String,
    pub kind: String,
}

impl Qualified {
    /// `resource.group`, or `resource` for the core group (as `GroupResource.String()`).
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
    /// `Kind.group`, or `Kind` for the core group (as `GroupKind.String()`).
    pub fn group_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }
    pub fn internal(message: impl Into<String>) -> Self {
        let mut e = Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        );
        e.details = Some(json!({"causes": [{"message": e.message.clone()}]}));
        e
    }
    pub fn not_found(q: &Qualified, name: &str) -> Self {
        let mut e = Self::new(
            404,
            "NotFound",
            format!("{} \"{}\" not found", q.group_resource(), name),
        );
        e.details = Some(details(q, name));
        e
    }
    pub fn not_found_path() -> Self {
        let mut e = Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
        e.details = Some(json!({}));
        e
    }
    pub fn already_exists(q: &Qualified, name: &str) -> Self {
        let mut e = Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{}\" already exists", q.group_resource(), name),
        );
        e.details = Some(details(q, name));
        e
    }
    pub fn conflict(q: &Qualified, name: &str, why: &str) -> Self {
        let mut e = Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{}\": {}",
                q.group_resource(),
                name,
                why
            ),
        );
        e.details = Some(details(q, name));
        e
    }
    pub fn stale(q: &Qualified, name: &str) -> Self {
        Self::conflict(
            q,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }
    pub fn forbidden(q: &Qualified, name: &str, why: &str) -> Self {
        let subject = if name.is_empty() {
            q.group_resource()
        } else {
            format!("{} \"{}\"", q.group_resource(), name)
        };
        let mut e = Self::new(403, "Forbidden", format!("{subject} is forbidden: {why}"));
        e.details = Some(details(q, name));
        e
    }
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        let mut e = Self::new(405, "MethodNotAllowed", message);
        e.details = Some(json!({}));
        e
    }
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(413, "RequestEntityTooLarge", message)
    }
    /// 422 Invalid with one cause per field error (`NewInvalid`).
    pub fn invalid(q: &Qualified, name: &str, errs: &[crd_schema::FieldError]) -> Self {
        // A root-level error (empty path) renders as upstream's nil field.Path: `<nil>`.
        let rendered: Vec<String> = errs
            .iter()
            .map(|e| {
                let full = e.to_string();
                if e.field.is_empty() {
                    format!("<nil>{full}")
                } else {
                    full
                }
            })
            .collect();
        let agg = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let causes: Vec<Value> = errs
            .iter()
            .map(|e| {
                let full = e.to_string();
                let body = full
                    .strip_prefix(&format!("{}: ", e.field))
                    .unwrap_or(&full)
                    .to_string();
                let field = if e.field.is_empty() { "<nil>" } else { e.field.as_str() };
                json!({"reason": e.kind.cause_reason(), "message": body.trim_start_matches(": "), "field": field})
            })
            .collect();
        let mut d = details(q, name);
        d["kind"] = json!(q.kind);
        d["causes"] = json!(causes);
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{} \"{}\" is invalid: {}", q.group_kind(), name, agg),
        );
        e.details = Some(d);
        e
    }
    /// A single field error on `field` as 422 Invalid.
    pub fn invalid_field(
        q: &Qualified,
        name: &str,
        kind: crd_schema::FieldErrorKind,
        field: &str,
        value: Option<String>,
        detail: &str,
    ) -> Self {
        Self::invalid(
            q,
            name,
            &[crd_schema::FieldError {
                kind,
                field: field.to_string(),
                value,
                detail: detail.to_string(),
            }],
        )
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

fn details(q: &Qualified, name: &str) -> Value {
    let mut d = json!({"group": q.group, "kind": q.resource});
    if !name.is_empty() {
        d["name"] = json!(name);
    }
    if q.group.is_empty()
        && let Some(m) = d.as_object_mut()
    {
        m.remove("group");
    }
    d
}

/// A go-style quoted string (`%q`), used where upstream messages quote values.
pub fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crd_schema::{FieldError, FieldErrorKind};

    #[test]
    fn invalid_renders_like_upstream() {
        let q = Qualified {
            group: "example.crossplane.io".into(),
            resource: "widgets".into(),
            kind: "Widget".into(),
        };
        let errs = [
            FieldError {
                kind: FieldErrorKind::Required,
                field: "spec.a".into(),
                value: None,
                detail: String::new(),
            },
            FieldError {
                kind: FieldErrorKind::Invalid,
                field: String::new(),
                value: Some("null".into()),
                detail: "some validation rules were not checked".into(),
            },
        ];
        let e = ApiError::invalid(&q, "w", &errs);
        assert_eq!(e.code, 422);
        assert!(
            e.message.starts_with(
                "Widget.example.crossplane.io \"w\" is invalid: [spec.a: Required value"
            ),
            "{}",
            e.message
        );
        assert!(
            e.message
                .contains(", <nil>: Invalid value: null: some validation rules were not checked]"),
            "{}",
            e.message
        );
        let causes = &e.to_status()["details"]["causes"];
        assert_eq!(causes[1]["field"], "<nil>");
        assert_eq!(causes[0]["reason"], "FieldValueRequired");
        let nf = ApiError::not_found(&q, "w").to_status();
        assert_eq!(
            nf["message"],
            "widgets.example.crossplane.io \"w\" not found"
        );
        assert_eq!(nf["details"]["kind"], "widgets");
    }
}
