//! Per-type checks and defaulting of a write, in the order kube-apiserver applies them.
//!
//! Custom resources: unknown fields are pruned (and, under `fieldValidation=Strict`, rejected
//! with a 400 `strict decoding error: unknown field "spec.x"`; under `Warn`, reported in a
//! `Warning` header), then defaults are applied, then the schema (including CEL rules) is
//! validated, giving 422 Invalid with one cause per field error. All schema judgement comes
//! from the `crd-schema` crate: `/status` writes are judged by the status strategy's rules
//! (`Schema::validate_status_update`), versions with a scale subresource get
//! `crd_schema::validate_scale`, and the server's metadata errors count, as upstream, when
//! deciding whether CEL rules are evaluated (`Schema::validate_rules_unless_blocked`).
//! CustomResourceDefinitions: unknown fields (anywhere, e.g. a typo inside an
//! `openAPIV3Schema`) are found by `crd_schema::prune_crd_unknown_fields` and handled like
//! those of custom resources; the status is reset on create and kept on update; then
//! `crd_schema::default_crd` defaults them, `crd_schema::validate_crd` checks them, and the
//! server sets `acceptedNames`, the conditions and `storedVersions`.
//! Built-in kinds get the checks that matter to our clients (unknown top-level and metadata
//! fields, Secret/ConfigMap keys and base64 data, Secret `stringData`, immutability, RBAC
//! rules and role references, events.k8s.io required fields).
//! Unknown fields of built-ins are found at the top level, in metadata (including
//! ownerReferences) and in the nested structures listed in `nested_fields`, reported as
//! `fieldValidation` asks and then dropped, as decoding into upstream's Go types drops them.
//! Deviation: deeper or unlisted nested structures of built-ins are not checked.
//! Deviation: on custom resources, errors of the scale subresource's paths come after the
//! embedded-resource and list-type errors (upstream: right after the OpenAPI schema errors),
//! because `Schema::validate_without_rules` returns those together; the set of errors is the same.

use crate::registry::{Builtin, ResourceType, View, builtin_field_known};
use crate::status::{ApiError, Qualified, go_quote};
use crate::store::{FieldValidation, State, WriteCtx, set_condition};
use base64::Engine;
use crd_schema::{FieldError, FieldErrorKind};
use serde_json::{Value, json};

use crd_schema::prune::OBJECT_META_FIELDS as OBJECT_META;

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_label)
}

/// Checks an object name as the type's registry does.
pub fn validate_name(rt: &ResourceType, name: &str, q: &Qualified) -> Result<(), ApiError> {
    let err = |detail: &str| {
        ApiError::invalid_field(
            q,
            name,
            FieldErrorKind::Invalid,
            "metadata.name",
            Some(go_quote(name)),
            detail,
        )
    };
    match rt.builtin {
        Builtin::Namespace => {
            if !is_label(name) {
                return Err(err(DNS1123_LABEL_MSG));
            }
        }
        Builtin::Role
        | Builtin::ClusterRole
        | Builtin::RoleBinding
        | Builtin::ClusterRoleBinding => {
            if name == "." || name == ".." {
                return Err(err(&format!("may not be '{name}'")));
            }
            for bad in ["/", "%"] {
                if name.contains(bad) {
                    return Err(err(&format!("may not contain '{bad}'")));
                }
            }
        }
        _ => {
            if !is_subdomain(name) {
                return Err(err(DNS1123_SUBDOMAIN_MSG));
            }
        }
    }
    Ok(())
}

fn label_value_ok(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && v.as_bytes()
                .first()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && v.as_bytes()
                .last()
                .is_some_and(|b| b.is_ascii_alphanumeric()))
}

fn qualified_name_ok(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    prefix.is_none_or(is_subdomain) && !name.is_empty() && name.len() <= 63 && label_value_ok(name)
}

fn check_metadata(obj: &Value, errs: &mut Vec<FieldError>, unknown: &mut Vec<String>) {
    let Some(meta) = obj.get("metadata").and_then(|m| m.as_object()) else {
        return;
    };
    for k in meta.keys() {
        if !OBJECT_META.contains(&k.as_str()) {
            unknown.push(format!("metadata.{k}"));
        }
    }
    if let Some(labels) = meta.get("labels").and_then(|l| l.as_object()) {
        for (k, v) in labels {
            if !qualified_name_ok(k) {
                errs.push(FieldError { kind: FieldErrorKind::Invalid, field: "metadata.labels".into(), value: Some(go_quote(k)), detail: "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into() });
            }
            let v = v.as_str().unwrap_or_default();
            if !label_value_ok(v) {
                errs.push(FieldError { kind: FieldErrorKind::Invalid, field: "metadata.labels".to_string(), value: Some(go_quote(v)), detail: "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into() });
            }
        }
    }
    if let Some(ann) = meta.get("annotations").and_then(|l| l.as_object()) {
        let total: usize = ann
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map(str::len).unwrap_or(0))
            .sum();
        if total > 256 * 1024 {
            errs.push(FieldError {
                kind: FieldErrorKind::TooLong,
                field: "metadata.annotations".into(),
                value: None,
                detail: "must have at most 262144 bytes".into(),
            });
        }
        for k in ann.keys() {
            if !qualified_name_ok(k) {
                errs.push(FieldError { kind: FieldErrorKind::Invalid, field: "metadata.annotations".into(), value: Some(go_quote(k)), detail: "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".into() });
            }
        }
    }
    if let Some(refs) = meta.get("ownerReferences").and_then(|r| r.as_array()) {
        for (i, r) in refs.iter().enumerate() {
            if let Some(m) = r.as_object() {
                unknown.extend(
                    m.keys()
                        .filter(|k| !OWNER_REF_FIELDS.contains(&k.as_str()))
                        .map(|k| format!("metadata.ownerReferences[{i}].{k}")),
                );
            }
            for f in ["apiVersion", "kind", "name", "uid"] {
                if r.get(f).and_then(|v| v.as_str()).is_none_or(str::is_empty) {
                    errs.push(FieldError {
                        kind: FieldErrorKind::Invalid,
                        field: format!("metadata.ownerReferences[{i}].{f}"),
                        value: Some("\"\"".into()),
                        detail: format!("{f} must not be empty"),
                    });
                }
            }
        }
    }
}

const OWNER_REF_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];
const OBJECT_REF_FIELDS: &[&str] = &[
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
];

/// Known fields of nested structures of built-ins, by path (`[]` = every list item).
fn nested_fields(b: Builtin) -> &'static [(&'static str, &'static [&'static str])] {
    match b {
        Builtin::Namespace => &[
            ("spec", &["finalizers"]),
            ("status", &["phase", "conditions"]),
        ],
        Builtin::ServiceAccount => &[
            ("secrets[]", OBJECT_REF_FIELDS),
            ("imagePullSecrets[]", &["name"]),
        ],
        Builtin::Lease => &[(
            "spec",
            &[
                "holderIdentity",
                "leaseDurationSeconds",
                "acquireTime",
                "renewTime",
                "leaseTransitions",
                "strategy",
                "preferredHolder",
            ],
        )],
        Builtin::Event => &[
            ("involvedObject", OBJECT_REF_FIELDS),
            ("related", OBJECT_REF_FIELDS),
            ("source", &["component", "host"]),
            ("series", &["count", "lastObservedTime"]),
        ],
        Builtin::Role | Builtin::ClusterRole => &[(
            "rules[]",
            &[
                "verbs",
                "apiGroups",
                "resources",
                "resourceNames",
                "nonResourceURLs",
            ],
        )],
        Builtin::RoleBinding | Builtin::ClusterRoleBinding => &[
            ("subjects[]", &["kind", "apiGroup", "name", "namespace"]),
            ("roleRef", &["apiGroup", "kind", "name"]),
        ],
        _ => &[],
    }
}

/// Collects unknown keys under `path` (dotted, `[]` for list items) as rendered paths.
fn unknown_nested(v: &Value, path: &str, known: &[&str], prefix: &str, out: &mut Vec<String>) {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let (name, each) = match head.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (head, false),
    };
    let Some(child) = v.get(name) else { return };
    let here = if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    };
    let visit = |node: &Value, at: String, out: &mut Vec<String>| match rest {
        Some(r) => unknown_nested(node, r, known, &at, out),
        None => {
            if let Some(m) = node.as_object() {
                out.extend(
                    m.keys()
                        .filter(|k| !known.contains(&k.as_str()))
                        .map(|k| format!("{at}.{k}")),
                );
            }
        }
    };
    if each {
        for (i, item) in child.as_array().into_iter().flatten().enumerate() {
            visit(item, format!("{here}[{i}]"), out);
        }
    } else {
        visit(child, here, out);
    }
}

/// Removes a field given as a rendered path (`a.b`, `a[0].b`).
fn drop_field(obj: &mut Value, path: &str) {
    let mut cur = obj;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (name, idx) = match part.split_once('[') {
            Some((n, r)) => (n, r.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        if i == parts.len() - 1 && idx.is_none() {
            if let Some(m) = cur.as_object_mut() {
                m.remove(name);
            }
            return;
        }
        let Some(next) = cur.get_mut(name) else {
            return;
        };
        cur = match idx {
            Some(n) => match next.get_mut(n) {
                Some(x) => x,
                None => return,
            },
            None => next,
        };
    }
}

fn report_unknown(unknown: Vec<String>, ctx: &mut WriteCtx) -> Result<(), ApiError> {
    if unknown.is_empty() {
        return Ok(());
    }
    let rendered: Vec<String> = unknown
        .iter()
        .map(|u| format!("unknown field {}", go_quote(u.trim_start_matches('.'))))
        .collect();
    match ctx.validation {
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            rendered.join(", ")
        ))),
        FieldValidation::Warn => {
            ctx.warnings.extend(rendered);
            Ok(())
        }
        FieldValidation::Ignore => Ok(()),
    }
}

fn name_of(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

fn key_ok(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 253
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

const KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// Prunes, defaults and validates `obj` for a write of type `rt`; `old` is the stored object
/// on update.
pub fn admit(
    state: &State,
    rt: &ResourceType,
    obj: &mut Value,
    old: Option<&Value>,
    ctx: &mut WriteCtx,
) -> Result<(), ApiError> {
    let q = rt.qualified();
    let name = name_of(obj);
    let mut errs = Vec::new();
    let mut unknown = Vec::new();
    check_metadata(obj, &mut errs, &mut unknown);
    match rt.builtin {
        Builtin::Custom => {
            if let Some(schema) = &rt.schema {
                unknown.extend(schema.prune(obj));
                report_unknown(unknown.clone(), ctx)?;
                for u in std::mem::take(&mut unknown) {
                    drop_field(obj, u.trim_start_matches('.'));
                }
                schema.apply_defaults(obj);
                validate_custom(rt, schema, obj, old, ctx.subresource == "status", &mut errs);
            } else {
                report_unknown(std::mem::take(&mut unknown), ctx)?;
            }
        }
        Builtin::Crd => {
            // CRDs are decoded into typed structs upstream: unknown fields anywhere in them
            // (a typo inside an openAPIV3Schema too) are reported as `fieldValidation` asks
            // and dropped; the walk removes them in place.
            let metadata_unknown = unknown.clone();
            unknown.extend(crd_schema::prune_crd_unknown_fields(obj));
            report_unknown(std::mem::take(&mut unknown), ctx)?;
            for u in metadata_unknown {
                drop_field(obj, &u);
            }
        }
        _ => {
            if let Some(m) = obj.as_object() {
                for k in m.keys() {
                    if !builtin_field_known(rt, k) {
                        unknown.push(k.clone());
                    }
                }
            }
            for (path, known) in nested_fields(rt.builtin) {
                unknown_nested(obj, path, known, "", &mut unknown);
            }
            report_unknown(unknown.clone(), ctx)?;
            // As decoding into upstream's Go types does, unknown fields are dropped.
            for u in std::mem::take(&mut unknown) {
                drop_field(obj, &u);
            }
        }
    }
    match rt.builtin {
        Builtin::Secret => secret(obj, old, &mut errs)?,
        Builtin::ConfigMap => {
            for field in ["data", "binaryData"] {
                if let Some(d) = obj.get(field).and_then(|d| d.as_object()) {
                    for k in d.keys() {
                        if !key_ok(k) {
                            errs.push(FieldError {
                                kind: FieldErrorKind::Invalid,
                                field: format!("{field}[{k}]"),
                                value: Some(go_quote(k)),
                                detail: KEY_MSG.into(),
                            });
                        }
                    }
                }
            }
            immutable(obj, old, &["data", "binaryData"], &mut errs);
        }
        Builtin::Namespace => {
            if obj.pointer("/metadata/deletionTimestamp").is_none() {
                obj["status"] = json!({"phase": "Active"});
            }
            if obj.pointer("/spec/finalizers").is_none() {
                obj["spec"] = json!({"finalizers": ["kubernetes"]});
            }
        }
        Builtin::Event => event(rt, obj, old.is_none(), &mut errs),
        Builtin::Role | Builtin::ClusterRole => {
            if let Some(rules) = obj.get("rules").and_then(|r| r.as_array()) {
                for (i, r) in rules.iter().enumerate() {
                    if r.get("verbs")
                        .and_then(|v| v.as_array())
                        .is_none_or(|v| v.is_empty())
                    {
                        errs.push(FieldError {
                            kind: FieldErrorKind::Required,
                            field: format!("rules[{i}].verbs"),
                            value: None,
                            detail: "verbs must contain at least one value".into(),
                        });
                    }
                    let has_nonres = r
                        .get("nonResourceURLs")
                        .and_then(|v| v.as_array())
                        .is_some_and(|v| !v.is_empty());
                    if !has_nonres
                        && r.get("resources")
                            .and_then(|v| v.as_array())
                            .is_none_or(|v| v.is_empty())
                    {
                        errs.push(FieldError {
                            kind: FieldErrorKind::Required,
                            field: format!("rules[{i}].resources"),
                            value: None,
                            detail: "resource rules must supply at least one resource".into(),
                        });
                    }
                    if !has_nonres
                        && r.get("apiGroups")
                            .and_then(|v| v.as_array())
                            .is_none_or(|v| v.is_empty())
                    {
                        errs.push(FieldError {
                            kind: FieldErrorKind::Required,
                            field: format!("rules[{i}].apiGroups"),
                            value: None,
                            detail: "resource rules must supply at least one api group".into(),
                        });
                    }
                }
            }
        }
        Builtin::RoleBinding | Builtin::ClusterRoleBinding => {
            let rr = &obj["roleRef"];
            let kind = rr["kind"].as_str().unwrap_or_default();
            let allowed: &[&str] = if rt.builtin == Builtin::RoleBinding {
                &["Role", "ClusterRole"]
            } else {
                &["ClusterRole"]
            };
            if !allowed.contains(&kind) {
                errs.push(FieldError {
                    kind: FieldErrorKind::NotSupported,
                    field: "roleRef.kind".into(),
                    value: Some(go_quote(kind)),
                    detail: format!(
                        "supported values: {}",
                        allowed
                            .iter()
                            .map(|a| go_quote(a))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
            if rr["name"].as_str().is_none_or(str::is_empty) {
                errs.push(FieldError {
                    kind: FieldErrorKind::Required,
                    field: "roleRef.name".into(),
                    value: None,
                    detail: String::new(),
                });
            }
            if let Some(o) = old
                && o["roleRef"] != obj["roleRef"]
            {
                errs.push(FieldError {
                    kind: FieldErrorKind::Invalid,
                    field: "roleRef".into(),
                    value: Some(rr.to_string()),
                    detail: "cannot change roleRef".into(),
                });
            }
            if let Some(subjects) = obj.get("subjects").and_then(|s| s.as_array()) {
                for (i, s) in subjects.iter().enumerate() {
                    let k = s["kind"].as_str().unwrap_or_default();
                    if !["User", "Group", "ServiceAccount"].contains(&k) {
                        errs.push(FieldError {
                            kind: FieldErrorKind::NotSupported,
                            field: format!("subjects[{i}].kind"),
                            value: Some(go_quote(k)),
                            detail: "supported values: \"ServiceAccount\", \"User\", \"Group\""
                                .into(),
                        });
                    }
                    if s["name"].as_str().is_none_or(str::is_empty) {
                        errs.push(FieldError {
                            kind: FieldErrorKind::Required,
                            field: format!("subjects[{i}].name"),
                            value: None,
                            detail: String::new(),
                        });
                    }
                }
            }
        }
        Builtin::Crd => crd(state, obj, old, &mut errs),
        Builtin::Lease | Builtin::ServiceAccount | Builtin::Custom => {}
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(&q, &name, &errs))
    }
}

/// Validates a custom resource (already pruned and defaulted) as upstream's strategies do;
/// `errs` holds the metadata errors found so far, which, as upstream, count when deciding
/// whether CEL rules are evaluated at all.
///
/// A write to `/status` is judged by the status strategy: the `status` schema only (so a spec
/// that no longer passes a tightened schema does not block status updates), the scale
/// subresource's status paths, list types and CEL rules. Any other write gets the full schema,
/// both scale paths, then CEL rules unless a blocking error (from metadata too) was found.
fn validate_custom(
    rt: &ResourceType,
    schema: &crd_schema::Schema,
    obj: &Value,
    old: Option<&Value>,
    status_write: bool,
    errs: &mut Vec<FieldError>,
) {
    match old {
        Some(old) if status_write => {
            errs.extend(schema.validate_status_update(obj, old));
            if let Some(scale) = &rt.scale {
                errs.extend(crd_schema::validate_scale(obj, scale, false));
            }
        }
        _ => {
            errs.extend(schema.validate_without_rules(obj, old));
            if let Some(scale) = &rt.scale {
                errs.extend(crd_schema::validate_scale(obj, scale, true));
            }
            let rule_errs = schema.validate_rules_unless_blocked(obj, old, errs);
            errs.extend(rule_errs);
        }
    }
}

fn immutable(obj: &Value, old: Option<&Value>, fields: &[&str], errs: &mut Vec<FieldError>) {
    let Some(old) = old else { return };
    if old.get("immutable").and_then(|v| v.as_bool()) != Some(true) {
        return;
    }
    if obj.get("immutable").and_then(|v| v.as_bool()) != Some(true) {
        errs.push(FieldError {
            kind: FieldErrorKind::Forbidden,
            field: "immutable".into(),
            value: None,
            detail: "field is immutable when `immutable` is set".into(),
        });
    }
    for f in fields {
        if obj.get(*f) != old.get(*f) {
            errs.push(FieldError {
                kind: FieldErrorKind::Forbidden,
                field: (*f).into(),
                value: None,
                detail: "field is immutable when `immutable` is set".into(),
            });
        }
    }
}

fn secret(
    obj: &mut Value,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) -> Result<(), ApiError> {
    if let Some(sd) = obj.as_object_mut().and_then(|m| m.remove("stringData"))
        && let Some(sd) = sd.as_object()
    {
        if !obj.get("data").is_some_and(|d| d.is_object()) {
            obj["data"] = json!({});
        }
        for (k, v) in sd {
            let s = v.as_str().unwrap_or_default();
            obj["data"][k] = json!(base64::engine::general_purpose::STANDARD.encode(s));
        }
    }
    if let Some(d) = obj.get("data").and_then(|d| d.as_object()) {
        for (k, v) in d {
            if !key_ok(k) {
                errs.push(FieldError {
                    kind: FieldErrorKind::Invalid,
                    field: format!("data[{k}]"),
                    value: Some(go_quote(k)),
                    detail: KEY_MSG.into(),
                });
            }
            let s = v.as_str().unwrap_or_default();
            if let Err(e) = base64::engine::general_purpose::STANDARD.decode(s) {
                return Err(ApiError::bad_request(format!(
                    "Secret in version \"v1\" cannot be handled as a Secret: {e}"
                )));
            }
        }
    }
    if obj
        .get("type")
        .and_then(|t| t.as_str())
        .is_none_or(str::is_empty)
    {
        obj["type"] = json!("Opaque");
    }
    if let Some(o) = old
        && o.get("type") != obj.get("type")
    {
        errs.push(FieldError {
            kind: FieldErrorKind::Invalid,
            field: "type".into(),
            value: obj.get("type").map(|t| t.to_string()),
            detail: "field is immutable".into(),
        });
    }
    immutable(obj, old, &["data"], errs);
    Ok(())
}

fn event(rt: &ResourceType, obj: &mut Value, create: bool, errs: &mut Vec<FieldError>) {
    if create && rt.view == View::EventsV1 {
        // events.k8s.io/v1 creates must leave the deprecated (core/v1) fields unset.
        for (core, v1) in [
            ("firstTimestamp", "deprecatedFirstTimestamp"),
            ("lastTimestamp", "deprecatedLastTimestamp"),
            ("count", "deprecatedCount"),
            ("source", "deprecatedSource"),
        ] {
            let set = match obj.get(core) {
                None | Some(Value::Null) => false,
                Some(Value::Number(n)) => n.as_i64() != Some(0),
                Some(Value::Object(m)) => m
                    .values()
                    .any(|v| v.as_str().is_some_and(|s| !s.is_empty())),
                Some(_) => true,
            };
            if set {
                errs.push(FieldError {
                    kind: FieldErrorKind::Invalid,
                    field: v1.into(),
                    value: Some("\"\"".into()),
                    detail: "needs to be unset".into(),
                });
            }
        }
    }
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    if let Some(ins) = obj
        .pointer("/involvedObject/namespace")
        .and_then(|v| v.as_str())
        && !ins.is_empty()
        && ins != ns
    {
        let field = if rt.view == View::EventsV1 {
            "regarding.namespace"
        } else {
            "involvedObject.namespace"
        };
        errs.push(FieldError {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            value: Some(go_quote(ins)),
            detail: "does not match event.namespace".into(),
        });
    }
    let new_style = rt.view == View::EventsV1 || obj.get("eventTime").is_some_and(|t| !t.is_null());
    if new_style {
        // Stored (core) names → events.k8s.io names, for messages in the client's vocabulary.
        let v1 = rt.view == View::EventsV1;
        for (core, v1name, max) in [
            ("reportingComponent", "reportingController", 253),
            ("reportingInstance", "reportingInstance", 128),
            ("action", "action", 128),
            ("reason", "reason", 128),
        ] {
            let field = if v1 { v1name } else { core };
            match obj.get(core).and_then(|v| v.as_str()) {
                None | Some("") => errs.push(FieldError {
                    kind: FieldErrorKind::Required,
                    field: field.into(),
                    value: None,
                    detail: String::new(),
                }),
                Some(s) if s.len() > max => errs.push(FieldError {
                    kind: FieldErrorKind::Invalid,
                    field: field.into(),
                    value: None,
                    detail: format!("can have at most {max} characters"),
                }),
                _ => {}
            }
        }
        if obj.get("eventTime").is_none_or(|t| t.is_null()) {
            errs.push(FieldError {
                kind: FieldErrorKind::Required,
                field: "eventTime".into(),
                value: None,
                detail: String::new(),
            });
        }
        if let Some(m) = obj.get("message").and_then(|v| v.as_str())
            && m.len() > 1024
        {
            errs.push(FieldError {
                kind: FieldErrorKind::TooLong,
                field: if v1 { "note" } else { "message" }.into(),
                value: None,
                detail: "must have at most 1024 bytes".into(),
            });
        }
    }
    if let Some(t) = obj.get("type").and_then(|v| v.as_str())
        && new_style
        && t != "Normal"
        && t != "Warning"
    {
        errs.push(FieldError {
            kind: FieldErrorKind::Invalid,
            field: "type".into(),
            value: Some(go_quote(t)),
            detail: "has invalid value: must be one of [Normal Warning]".into(),
        });
    }
}

fn crd(state: &State, obj: &mut Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    // The status is the server's: reset on create, the stored one on update (upstream's
    // PrepareForCreate/PrepareForUpdate), before defaulting fills storedVersions and
    // validation judges it.
    match old {
        Some(o) => obj["status"] = o.get("status").cloned().unwrap_or(json!({})),
        None => {
            if let Some(m) = obj.as_object_mut() {
                m.remove("status");
            }
        }
    }
    crd_schema::default_crd(obj);
    let crd_errs = crd_schema::validate_crd(obj, old);
    if !crd_errs.is_empty() {
        errs.extend(crd_errs);
        return;
    }
    if let Err(e) = crate::registry::crd_resource_types(obj) {
        errs.extend(e);
        return;
    }
    if old.is_none() {
        let fins = obj
            .pointer("/metadata/finalizers")
            .and_then(|f| f.as_array())
            .cloned()
            .unwrap_or_default();
        if !fins.iter().any(|f| f == crate::store::CRD_FINALIZER) {
            let mut fins = fins;
            fins.push(json!(crate::store::CRD_FINALIZER));
            obj["metadata"]["finalizers"] = json!(fins);
        }
    }
    let names = obj.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let name = name_of(obj);
    let group = obj
        .pointer("/spec/group")
        .and_then(|g| g.as_str())
        .unwrap_or_default()
        .to_string();
    let conflict = state.registry.all().find(|t| {
        t.group == group
            && t.crd_name.as_deref() != Some(name.as_str())
            && (t.kind == names["kind"].as_str().unwrap_or_default()
                || t.plural == names["plural"].as_str().unwrap_or_default())
    });
    let mut storage = Vec::new();
    for v in obj
        .pointer("/spec/versions")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default()
    {
        if v["storage"].as_bool() == Some(true) {
            storage.push(v["name"].clone());
        }
    }
    let mut stored: Vec<Value> = obj
        .pointer("/status/storedVersions")
        .and_then(|s| s.as_array())
        .cloned()
        .unwrap_or_default();
    for s in storage {
        if !stored.contains(&s) {
            stored.push(s);
        }
    }
    match conflict {
        Some(t) => {
            let msg = format!(
                "{} is already in use",
                go_quote(if t.kind == names["kind"].as_str().unwrap_or_default() {
                    &t.kind
                } else {
                    &t.plural
                })
            );
            set_condition(obj, "NamesAccepted", "False", "NameConflict", &msg);
            set_condition(
                obj,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
            );
        }
        None => {
            obj["status"]["acceptedNames"] = names;
            set_condition(
                obj,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found",
            );
            set_condition(
                obj,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            );
        }
    }
    obj["status"]["storedVersions"] = json!(stored);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_unknown_fields_of_builtins() {
        let mut o = json!({"subjects": [{"kind": "User", "name": "u", "nme": "x"}], "roleRef": {"kind": "Role", "name": "r", "extra": 1}});
        let mut unknown = Vec::new();
        for (path, known) in nested_fields(Builtin::RoleBinding) {
            unknown_nested(&o, path, known, "", &mut unknown);
        }
        assert_eq!(unknown, ["subjects[0].nme", "roleRef.extra"]);
        for u in &unknown {
            drop_field(&mut o, u);
        }
        assert_eq!(
            o,
            json!({"subjects": [{"kind": "User", "name": "u"}], "roleRef": {"kind": "Role", "name": "r"}})
        );
    }

    #[test]
    fn names() {
        assert!(is_subdomain("a.b-c"));
        assert!(!is_subdomain("A"));
        assert!(!is_label("a.b"));
        assert!(qualified_name_ok("crossplane.io/external-name"));
        assert!(!qualified_name_ok("bad key"));
    }
}
