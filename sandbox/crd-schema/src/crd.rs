//! CustomResourceDefinition defaulting and validation, after apiextensions-apiserver's
//! `v1/defaults.go`, the v1-to-internal conversion and `validation/validation.go`
//! (Kubernetes 1.33), with kube-apiserver's field paths and messages.
//!
//! As upstream, a CRD is judged in its internal form: when every version has the same schema
//! (or subresources, or printer columns) they are moved to the top level, so the errors of a
//! single-version CRD are reported at `spec.validation.openAPIV3Schema...`,
//! `spec.subresources...` and `spec.additionalPrinterColumns[i]...`, exactly as kube-apiserver
//! reports them.
//!
//! On update the stored CRD is assumed `Established` (as the test server establishes CRDs at
//! once), so `spec.scope` and `spec.names.kind` are immutable besides `spec.group` and
//! `spec.names.plural`.
//!
//! Deviations: bad values that Go renders as whole structs (`%#v` of the versions list, of a
//! JSONSchemaProps) are rendered as a short Go-like placeholder. Webhook conversion URLs and
//! CA bundles, the CEL cost estimates and `metadata` fields other than the name (labels,
//! annotations syntax: the server's generic metadata checks) are not checked here. Defaults
//! inside resource metadata are forbidden at the top level as upstream; inside embedded
//! resources they are checked by the common `ObjectMeta` rules (field types, names, labels,
//! annotations), not all of `ValidateObjectMeta`, and not inside metadata lists.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::node::Node;
use crate::{FieldError, FieldErrorKind, go_quote, path, render_value};

const PRINTER_COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
const PRINTER_COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];
const ALLOWED_AT_ROOT_WITH_STATUS: [(&str, &str); 22] = [
    ("description", "Description"),
    ("type", "Type"),
    ("format", "Format"),
    ("title", "Title"),
    ("maximum", "Maximum"),
    ("exclusiveMaximum", "ExclusiveMaximum"),
    ("minimum", "Minimum"),
    ("exclusiveMinimum", "ExclusiveMinimum"),
    ("maxLength", "MaxLength"),
    ("minLength", "MinLength"),
    ("pattern", "Pattern"),
    ("maxItems", "MaxItems"),
    ("minItems", "MinItems"),
    ("uniqueItems", "UniqueItems"),
    ("multipleOf", "MultipleOf"),
    ("required", "Required"),
    ("items", "Items"),
    ("properties", "Properties"),
    ("externalDocs", "ExternalDocs"),
    ("example", "Example"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "XPreserveUnknownFields",
    ),
    ("x-kubernetes-validations", "XValidations"),
];

const VERSIONS_VALUE: &str = "[]apiextensions.CustomResourceDefinitionVersion{...}";

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

// ---------------------------------------------------------------------------------------------
// Name validation helpers (k8s.io/apimachinery/pkg/util/validation)

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let ex: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        ex.join("or ")
    )
}

fn is_dns1035_label(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[b.len() - 1] != b'-'
}

fn is_dns1123_label(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// `IsDNS1035Label`.
pub fn dns1035_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1035_label(v) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if v.is_empty() || !v.split('.').all(is_dns1123_label) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Defaulting

/// Fills the defaults kube-apiserver sets on a v1 CRD: `names.singular` (lower-cased kind),
/// `names.listKind` (`<Kind>List`), `conversion.strategy: None`, the webhook service port 443,
/// and `status.storedVersions` (the storage version) when empty.
pub fn default_crd(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), Value::String(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && !kind.is_empty()
        {
            names.insert("listKind".into(), Value::String(format!("{kind}List")));
        }
    }
    match spec.get_mut("conversion") {
        Some(Value::Object(conv)) => {
            if let Some(svc) = conv
                .get_mut("webhook")
                .and_then(|w| w.get_mut("clientConfig"))
                .and_then(|c| c.get_mut("service"))
                .and_then(Value::as_object_mut)
                && !svc.contains_key("port")
            {
                svc.insert("port".into(), json!(443));
            }
        }
        _ => {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
    }
    let storage = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        })
        .map(|v| s(v, "name").to_string());
    if let Some(storage) = storage
        && let Some(obj) = crd.as_object_mut()
    {
        let status = obj.entry("status").or_insert_with(|| json!({}));
        if let Some(status) = status.as_object_mut() {
            let empty = status
                .get("storedVersions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if empty {
                status.insert("storedVersions".into(), json!([storage]));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CRD validation

/// Checks a whole `CustomResourceDefinition` object (apiextensions.k8s.io/v1), already
/// defaulted with [`default_crd`], as the API server does on create (`old` = `None`) and update
/// (`old` = the stored object, assumed `Established`). Returns every error found, in
/// kube-apiserver's order.
pub fn validate_crd(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let null = Value::Null;
    let spec = crd.get("spec").unwrap_or(&null);
    let names = spec.get("names").unwrap_or(&null);
    let group = s(spec, "group");
    let plural = s(names, "plural");

    // metadata
    let meta = crd.get("metadata").unwrap_or(&null);
    let name = s(meta, "name");
    if name.is_empty() && s(meta, "generateName").is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else if !name.is_empty() {
        for e in dns1123_subdomain_errors(name) {
            errs.push(FieldError::invalid_str("metadata.name", name, e));
        }
        if name != format!("{plural}.{group}") {
            errs.push(FieldError::invalid_str(
                "metadata.name",
                name,
                r#"must be spec.names.plural+"."+spec.group"#,
            ));
        }
    }

    errs.extend(validate_spec(spec, old.and_then(|o| o.get("spec"))));

    // status
    if let Some(accepted) = crd.get("status").and_then(|st| st.get("acceptedNames"))
        && accepted.is_object()
    {
        errs.extend(validate_names(accepted, "status.acceptedNames"));
    }
    errs.extend(validate_stored_versions(crd, old));

    // API approval for protected groups
    let protected = group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io");
    if protected {
        errs.extend(validate_api_approval(crd, old));
    }
    // validatePreserveUnknownFields
    let preserve = |o: &Value| {
        o.pointer("/spec/preserveUnknownFields")
            .and_then(Value::as_bool)
            == Some(true)
    };
    if !old.is_some_and(preserve) && preserve(crd) {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            "true",
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errs
}

fn validate_api_approval(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    const ANN: &str = "api-approved.kubernetes.io";
    let state = |o: &Value| -> (u8, String) {
        let a = o
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .map(|a| s(a, ANN))
            .unwrap_or("");
        if a.is_empty() {
            (
                0,
                format!(
                    "protected groups must have approval annotation {}, see https://github.com/kubernetes/enhancements/pull/1111",
                    go_quote(ANN)
                ),
            )
        } else if a.starts_with("unapproved") {
            (1, String::new())
        } else if crate::formats::Format::Uri.validates(a) && a.contains("://") {
            (2, String::new())
        } else {
            (
                3,
                format!(
                    "protected groups must have approval annotation {} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111",
                    go_quote(ANN)
                ),
            )
        }
    };
    let (new_state, reason) = state(crd);
    if let Some(o) = old
        && state(o).0 == new_state
    {
        return Vec::new();
    }
    let field = format!("metadata.annotations[{ANN}]");
    let value = crd
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .map(|a| s(a, ANN))
        .unwrap_or("");
    match new_state {
        0 => vec![FieldError::required(field, reason)],
        3 => vec![FieldError::invalid_str(field, value, reason)],
        _ => Vec::new(),
    }
}

fn validate_stored_versions(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let versions: Vec<(&str, bool)> = crd
        .get("spec")
        .and_then(|sp| sp.get("versions"))
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    (
                        s(v, "name"),
                        v.get("storage").and_then(Value::as_bool) == Some(true),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    // The strategies decide the status: on create it is reset, on update the stored object's is
    // kept; then the (first) storage version is added when missing.
    let mut stored: Vec<String> = old
        .and_then(|o| o.get("status"))
        .and_then(|st| st.get("storedVersions"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some((name, _)) = versions.iter().find(|(_, storage)| *storage)
        && !stored.iter().any(|s| s == name)
    {
        stored.push(name.to_string());
    }
    let mut errs = Vec::new();
    if stored.is_empty() {
        errs.push(FieldError::invalid(
            "status.storedVersions",
            "[]string(nil)",
            "must have at least one stored version",
        ));
        return errs;
    }
    for (i, v) in stored.iter().enumerate() {
        if !versions.iter().any(|(name, _)| name == v) {
            errs.push(FieldError::invalid_str(
                format!("status.storedVersions[{i}]"),
                v,
                format!(
                    "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
                ),
            ));
        }
    }
    errs
}

fn all_identical<'a>(versions: &'a [Value], key: &str) -> Option<Option<&'a Value>> {
    let first = versions.first()?.get(key);
    versions
        .iter()
        .all(|v| v.get(key).filter(|x| !x.is_null()) == first.filter(|x| !x.is_null()))
        .then_some(first.filter(|x| !x.is_null()))
}

fn subresources_status_enabled(sub: Option<&Value>) -> bool {
    sub.and_then(|s| s.get("status"))
        .is_some_and(|st| !st.is_null())
}

fn validate_spec(spec: &Value, old_spec: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let group = s(spec, "group");
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let e = dns1123_subdomain_errors(group);
        if !e.is_empty() {
            errs.push(FieldError::invalid_str("spec.group", group, e.join(",")));
        } else if group.split('.').count() < 2 {
            errs.push(FieldError::invalid_str(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    let scope = s(spec, "scope");
    if scope.is_empty() {
        errs.push(FieldError::required("spec.scope", ""));
    } else if scope != "Cluster" && scope != "Namespaced" {
        errs.push(FieldError::not_supported(
            "spec.scope",
            go_quote(scope),
            &["Cluster", "Namespaced"],
        ));
    }

    let empty = Vec::new();
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let preserve_unknown = spec
        .get("preserveUnknownFields")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    // v1 -> internal: identical per-version fields move to the top level.
    let top_schema = all_identical(versions, "schema");
    let top_subresources = all_identical(versions, "subresources");
    let top_columns = all_identical(versions, "additionalPrinterColumns");
    let top_selectable = all_identical(versions, "selectableFields");

    let top_validation = top_schema
        .flatten()
        .and_then(|sc| sc.get("openAPIV3Schema"))
        .filter(|v| !v.is_null());
    if top_validation.is_none() {
        for (i, v) in versions.iter().enumerate() {
            if v.get("schema")
                .and_then(|sc| sc.get("openAPIV3Schema"))
                .is_none_or(Value::is_null)
            {
                errs.push(FieldError::required(
                    format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    "schemas are required",
                ));
            }
        }
    }
    if preserve_unknown
        && versions
            .iter()
            .any(|v| v.get("schema").is_some_and(schema_has_defaults))
    {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            "true",
            "must be false in order to use defaults in the schema",
        ));
    }

    let mut storage = 0;
    let mut seen = HashSet::new();
    let mut unique = true;
    for (i, v) in versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if v.get("storage").and_then(Value::as_bool) == Some(true) {
            storage += 1;
        }
        let vname = s(v, "name");
        if !seen.insert(vname.to_string()) {
            unique = false;
        }
        let e = dns1035_label_errors(vname);
        if !e.is_empty() {
            errs.push(FieldError::invalid_str(
                path::child(&at, "name"),
                vname,
                e.join(","),
            ));
        }
        // deprecationWarning
        let deprecated = v
            .get("deprecated")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if let Some(w) = v.get("deprecationWarning").and_then(Value::as_str) {
            let field = path::child(&at, "deprecationWarning");
            if !deprecated {
                errs.push(FieldError::invalid_str(
                    &field,
                    w,
                    "can only be set for deprecated versions",
                ));
            } else {
                if w.len() > 256 {
                    errs.push(FieldError::invalid_str(
                        &field,
                        w,
                        "must be <= 256 characters long",
                    ));
                }
                if w.is_empty() {
                    errs.push(FieldError::invalid_str(
                        &field,
                        w,
                        "must not be an empty string",
                    ));
                }
                if let Some((idx, _)) = w.char_indices().find(|(_, c)| c.is_control()) {
                    errs.push(FieldError::invalid_str(
                        &field,
                        w,
                        format!("must only contain printable UTF-8 characters; non-printable character found at index {idx}"),
                    ));
                }
            }
        }
        let status_enabled = if top_subresources.is_some() {
            subresources_status_enabled(top_subresources.flatten())
        } else {
            subresources_status_enabled(v.get("subresources"))
        };
        if top_schema.is_none()
            && let Some(schema) = v
                .get("schema")
                .and_then(|sc| sc.get("openAPIV3Schema"))
                .filter(|x| !x.is_null())
        {
            errs.extend(validate_crd_schema_with(
                schema,
                &format!("{at}.schema.openAPIV3Schema"),
                status_enabled,
                schema_unchanged(versions, old_spec, s(v, "name")),
            ));
        }
        if top_subresources.is_none() {
            errs.extend(validate_subresources(
                v.get("subresources"),
                &path::child(&at, "subresources"),
            ));
        }
        if top_columns.is_none() {
            errs.extend(validate_columns(
                v.get("additionalPrinterColumns"),
                &path::child(&at, "additionalPrinterColumns"),
            ));
        }
        if top_selectable.is_none() {
            let schema = v
                .get("schema")
                .and_then(|sc| sc.get("openAPIV3Schema"))
                .filter(|x| !x.is_null());
            errs.extend(validate_selectable_fields(
                v.get("selectableFields"),
                schema,
                &path::child(&at, "selectableFields"),
                false,
            ));
        }
    }
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            VERSIONS_VALUE,
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            VERSIONS_VALUE,
            "must have exactly one version marked as storage version",
        ));
    }

    let names = spec.get("names").cloned().unwrap_or(Value::Null);
    for key in ["plural", "singular", "kind", "listKind"] {
        if s(&names, key).is_empty() {
            errs.push(FieldError::required(format!("spec.names.{key}"), ""));
        }
    }
    errs.extend(validate_names(&names, "spec.names"));

    if let Some(schema) = top_validation {
        let status_enabled = top_subresources.is_some_and(subresources_status_enabled)
            || versions
                .iter()
                .any(|v| subresources_status_enabled(v.get("subresources")));
        let first = versions.first().map(|v| s(v, "name")).unwrap_or_default();
        errs.extend(validate_crd_schema_with(
            schema,
            "spec.validation.openAPIV3Schema",
            status_enabled,
            schema_unchanged(versions, old_spec, first),
        ));
    }
    if let Some(sub) = top_subresources {
        errs.extend(validate_subresources(sub, "spec.subresources"));
    }
    if let Some(cols) = top_columns {
        errs.extend(validate_columns(cols, "spec.additionalPrinterColumns"));
    }
    if let Some(fields) = top_selectable {
        errs.extend(validate_selectable_fields(
            fields,
            top_validation,
            "spec.selectableFields",
            true,
        ));
    }

    // conversion
    if let Some(conv) = spec.get("conversion").filter(|c| c.is_object()) {
        let strategy = s(conv, "strategy");
        if strategy != "None" && preserve_unknown {
            errs.push(FieldError::invalid_str(
                "spec.conversion.strategy",
                strategy,
                "must be None if spec.preserveUnknownFields is true",
            ));
        }
        if strategy.is_empty() {
            errs.push(FieldError::required("spec.conversion.strategy", ""));
        } else if strategy != "None" && strategy != "Webhook" {
            errs.push(FieldError::not_supported(
                "spec.conversion.strategy",
                go_quote(strategy),
                &["None", "Webhook"],
            ));
        }
        let webhook = conv.get("webhook").filter(|w| !w.is_null());
        let client_config = webhook
            .and_then(|w| w.get("clientConfig"))
            .filter(|c| !c.is_null());
        let review_versions = webhook
            .and_then(|w| w.get("conversionReviewVersions"))
            .and_then(Value::as_array);
        if strategy == "Webhook" {
            match client_config {
                None => errs.push(FieldError::required(
                    "spec.conversion.webhookClientConfig",
                    "required when strategy is set to Webhook",
                )),
                Some(cc) => {
                    let has_url = cc.get("url").is_some_and(|u| !u.is_null());
                    let has_svc = cc.get("service").is_some_and(|u| !u.is_null());
                    if has_url == has_svc {
                        errs.push(FieldError::required(
                            "spec.conversion.webhookClientConfig",
                            "exactly one of url or service is required",
                        ));
                    }
                }
            }
            match review_versions {
                None => errs.push(FieldError::required(
                    "spec.conversion.conversionReviewVersions",
                    "",
                )),
                Some(rv) if rv.is_empty() => errs.push(FieldError::required(
                    "spec.conversion.conversionReviewVersions",
                    "",
                )),
                Some(rv) => {
                    let mut seen = HashSet::new();
                    let mut accepted = false;
                    for (i, v) in rv.iter().enumerate() {
                        let v = v.as_str().unwrap_or_default();
                        let f = format!("spec.conversion.conversionReviewVersions[{i}]");
                        if !seen.insert(v) {
                            errs.push(FieldError::invalid_str(&f, v, "duplicate version"));
                            continue;
                        }
                        for e in dns1035_label_errors(v) {
                            errs.push(FieldError::invalid_str(&f, v, e));
                        }
                        accepted |= v == "v1" || v == "v1beta1";
                    }
                    if !accepted {
                        let list: Vec<String> = rv
                            .iter()
                            .map(|v| v.as_str().unwrap_or_default().to_string())
                            .collect();
                        errs.push(FieldError::invalid(
                            "spec.conversion.conversionReviewVersions",
                            format!(
                                "[]string{{{}}}",
                                list.iter()
                                    .map(|v| go_quote(v))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            "must include at least one of v1, v1beta1",
                        ));
                    }
                }
            }
        } else {
            if client_config.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.conversion.webhookClientConfig",
                    "should not be set when strategy is not set to Webhook",
                ));
            }
            if review_versions.is_some_and(|r| !r.is_empty()) {
                errs.push(FieldError::forbidden(
                    "spec.conversion.conversionReviewVersions",
                    "should not be set when strategy is not set to Webhook",
                ));
            }
        }
    }

    // immutable fields on update (the stored CRD is Established)
    if let Some(old) = old_spec {
        let old_names = old.get("names").cloned().unwrap_or(Value::Null);
        let immutable = |field: &str, new: &str, old: &str| -> Option<FieldError> {
            (new != old).then(|| FieldError::invalid_str(field, new, "field is immutable"))
        };
        errs.extend(immutable("spec.scope", scope, s(old, "scope")));
        errs.extend(immutable(
            "spec.names.kind",
            s(&names, "kind"),
            s(&old_names, "kind"),
        ));
        errs.extend(immutable("spec.group", group, s(old, "group")));
        errs.extend(immutable(
            "spec.names.plural",
            s(&names, "plural"),
            s(&old_names, "plural"),
        ));
    }
    errs
}

fn schema_has_defaults(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            m.get("default").is_some_and(|d| !d.is_null()) || m.values().any(schema_has_defaults)
        }
        Value::Array(a) => a.iter().any(schema_has_defaults),
        _ => false,
    }
}

fn validate_names(names: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for key in ["plural", "singular"] {
        let v = s(names, key);
        let e = dns1035_label_errors(v);
        if !v.is_empty() && !e.is_empty() {
            errs.push(FieldError::invalid_str(
                path::child(at, key),
                v,
                e.join(","),
            ));
        }
    }
    for key in ["kind", "listKind"] {
        let v = s(names, key);
        let e = dns1035_label_errors(&v.to_lowercase());
        if !v.is_empty() && !e.is_empty() {
            errs.push(FieldError::invalid_str(
                path::child(at, key),
                v,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    e.join(",")
                ),
            ));
        }
    }
    for key in ["shortNames", "categories"] {
        if let Some(list) = names.get(key).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                let v = v.as_str().unwrap_or_default();
                let e = dns1035_label_errors(v);
                if !e.is_empty() {
                    errs.push(FieldError::invalid_str(
                        format!("{at}.{key}[{i}]"),
                        v,
                        e.join(","),
                    ));
                }
            }
        }
    }
    let kind = s(names, "kind");
    if !kind.is_empty() && kind == s(names, "listKind") {
        errs.push(FieldError::invalid_str(
            path::child(at, "listKind"),
            kind,
            "kind and listKind may not be the same",
        ));
    }
    errs
}

fn simple_json_path_errors(p: &str, field: &str) -> Vec<FieldError> {
    if p.is_empty() {
        vec![FieldError::invalid_str(field, p, "must not be empty")]
    } else if !p.starts_with('.') {
        vec![FieldError::invalid_str(
            field,
            p,
            "must be a simple json path starting with .",
        )]
    } else {
        Vec::new()
    }
}

fn validate_subresources(sub: Option<&Value>, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(scale) = sub.and_then(|s| s.get("scale")).filter(|s| s.is_object()) else {
        return errs;
    };
    for (key, prefix, under) in [
        ("specReplicasPath", ".spec.", ".spec"),
        ("statusReplicasPath", ".status.", ".status"),
    ] {
        let field = format!("{at}.scale.{key}");
        let p = s(scale, key);
        if p.is_empty() {
            errs.push(FieldError::required(field, ""));
        } else {
            let e = simple_json_path_errors(p, &field);
            if !e.is_empty() {
                errs.extend(e);
            } else if !p.starts_with(prefix) {
                errs.push(FieldError::invalid_str(
                    field,
                    p,
                    format!("should be a json path under {under}"),
                ));
            }
        }
    }
    let sel = s(scale, "labelSelectorPath");
    if !sel.is_empty() {
        let field = format!("{at}.scale.labelSelectorPath");
        let e = simple_json_path_errors(sel, &field);
        if !e.is_empty() {
            errs.extend(e);
        } else if !sel.starts_with(".spec.") && !sel.starts_with(".status.") {
            errs.push(FieldError::invalid_str(
                field,
                sel,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errs
}

fn validate_columns(cols: Option<&Value>, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(cols) = cols.and_then(Value::as_array) else {
        return errs;
    };
    for (i, col) in cols.iter().enumerate() {
        let at = format!("{at}[{i}]");
        if s(col, "name").is_empty() {
            errs.push(FieldError::required(path::child(&at, "name"), ""));
        }
        let ty = s(col, "type");
        let types = PRINTER_COLUMN_TYPES.join(",");
        if ty.is_empty() {
            errs.push(FieldError::required(
                path::child(&at, "type"),
                format!("must be one of {types}"),
            ));
        } else if !PRINTER_COLUMN_TYPES.contains(&ty) {
            errs.push(FieldError::invalid_str(
                path::child(&at, "type"),
                ty,
                format!("must be one of {types}"),
            ));
        }
        let format = s(col, "format");
        if !format.is_empty() && !PRINTER_COLUMN_FORMATS.contains(&format) {
            errs.push(FieldError::invalid_str(
                path::child(&at, "format"),
                format,
                format!("must be one of {}", PRINTER_COLUMN_FORMATS.join(",")),
            ));
        }
        let jp = s(col, "jsonPath");
        if jp.is_empty() {
            errs.push(FieldError::required(path::child(&at, "JSONPath"), ""));
        } else {
            errs.extend(simple_json_path_errors(jp, &path::child(&at, "JSONPath")));
        }
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Schema validation (validateCustomResourceDefinitionValidation)

/// Why a schema cannot be converted to a structural schema (`NewStructural`), if it cannot.
pub(crate) fn structural_conversion_error(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    let checks = [
        ("id", "OpenAPIV3Schema 'id' is not supported"),
        ("$schema", "OpenAPIV3Schema 'schema' is not supported"),
        ("$ref", "OpenAPIV3Schema '$ref' is not supported"),
        (
            "patternProperties",
            "OpenAPIV3Schema 'patternProperties' is not supported",
        ),
        (
            "dependencies",
            "OpenAPIV3Schema 'dependencies' is not supported",
        ),
        (
            "additionalItems",
            "OpenAPIV3Schema 'additionalItems' is not supported",
        ),
        (
            "definitions",
            "OpenAPIV3Schema 'definitions' is not supported",
        ),
    ];
    for (k, msg) in checks {
        if m.get(k)
            .is_some_and(|x| !x.is_null() && x != &json!("") && x != &json!({}))
        {
            return Some(msg.to_string());
        }
    }
    if m.get("items").is_some_and(Value::is_array) {
        return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".to_string());
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .to_string(),
        );
    }
    let children = m
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
        .chain(m.get("items").filter(|i| i.is_object()))
        .chain(m.get("additionalProperties").filter(|a| a.is_object()))
        .chain(m.get("not"))
        .chain(
            ["allOf", "anyOf", "oneOf"]
                .iter()
                .filter_map(|k| m.get(*k))
                .filter_map(Value::as_array)
                .flatten(),
        );
    for c in children {
        if let Some(e) = structural_conversion_error(c) {
            return Some(e);
        }
    }
    None
}

/// Validates one `openAPIV3Schema` as `validateCustomResourceDefinitionValidation` does. `sat`
/// is the path of the schema (e.g. `spec.validation.openAPIV3Schema`, or empty for paths
/// relative to the schema); `status_enabled` whether the version has the status subresource.
pub fn validate_crd_schema(schema: &Value, sat: &str, status_enabled: bool) -> Vec<FieldError> {
    validate_crd_schema_with(schema, sat, status_enabled, false)
}

/// Whether an update leaves the schema of version `name` as it was: kube-apiserver then skips
/// the per-rule cost limit for it (`suppressPerExpressionCost`), so that CRDs admitted by an
/// older estimator stay updatable.
fn schema_unchanged(versions: &[Value], old_spec: Option<&Value>, name: &str) -> bool {
    let schema_of = |vs: &[Value]| {
        vs.iter()
            .find(|v| s(v, "name") == name)
            .and_then(|v| v.get("schema"))
            .filter(|x| !x.is_null())
            .cloned()
    };
    let Some(old) = old_spec
        .and_then(|o| o.get("versions"))
        .and_then(Value::as_array)
    else {
        return false;
    };
    match (schema_of(versions), schema_of(old)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Where kube-apiserver puts a CEL error of a rule among the others: the node (its subtree
/// first, see [`crate::cost::SchemaCost::order`]), the rule's index, then the rule's cost, its
/// compile error, its `messageExpression`, and its `oldSelf` use.
fn cel_error_key(e: &FieldError, order: &HashMap<&str, usize>) -> (usize, usize, u8) {
    let Some((node, rest)) = e.field.split_once(".x-kubernetes-validations[") else {
        return (usize::MAX, usize::MAX, u8::MAX);
    };
    let (idx, what) = rest.split_once("].").unwrap_or((rest, ""));
    let cat = match what {
        "rule" if e.kind == FieldErrorKind::Forbidden => 0,
        "rule" if e.detail.starts_with("oldSelf cannot be used") => 3,
        "rule" => 1,
        "messageExpression" => 2,
        _ => 3,
    };
    (
        order.get(node).copied().unwrap_or(usize::MAX),
        idx.parse().unwrap_or(usize::MAX),
        cat,
    )
}

fn validate_crd_schema_with(
    schema: &Value,
    sat: &str,
    status_enabled: bool,
    suppress_per_expression_cost: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sat = sat.to_string();
    let Some(m) = schema.as_object() else {
        errs.push(FieldError::invalid(
            sat,
            render_value(schema),
            "must be an object",
        ));
        return errs;
    };
    if status_enabled {
        for (k, v) in m {
            if is_zero(v) {
                continue;
            }
            if k == "type" {
                if v.as_str() != Some("object") {
                    errs.push(FieldError::invalid_str(
                        path::child(&sat, "type"),
                        v.as_str().unwrap_or_default(),
                        r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                    ));
                    break;
                }
                continue;
            }
            if !ALLOWED_AT_ROOT_WITH_STATUS
                .iter()
                .any(|(json_name, _)| json_name == k)
            {
                let names: Vec<&str> = ALLOWED_AT_ROOT_WITH_STATUS
                    .iter()
                    .map(|(_, go)| *go)
                    .collect();
                errs.push(FieldError::invalid(
                    &sat,
                    "apiextensions.JSONSchemaProps{...}",
                    format!("only [{}] fields are allowed at the root of the schema if the status subresource is enabled", names.join(" ")),
                ));
                break;
            }
        }
    }
    if m.get("nullable").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            path::child(&sat, "nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let conversion_error = structural_conversion_error(schema);
    let mut cel_ok = false;
    if conversion_error.is_none() {
        let structural = crate::structural::validate_structural(schema, &sat);
        if !structural.is_empty() {
            errs.extend(structural);
        } else {
            let (node, cel_errs) = Node::compile(schema, &sat);
            let defaults = validate_defaults(&node, schema, &sat);
            if !defaults.is_empty() {
                errs.extend(defaults);
            } else {
                cel_ok = true;
            }
            let mut openapi = OpenApiCheck::new(cel_ok);
            openapi.check(schema, &sat, Ctx::root());
            errs.extend(openapi.schema_errs);
            if cel_ok {
                // Compile errors only count where upstream compiles: nodes whose subtree has no
                // schema errors.
                let mut cel_all: Vec<FieldError> = cel_errs
                    .into_iter()
                    .filter(|e| {
                        let node_path = e
                            .field
                            .split(".x-kubernetes-validations[")
                            .next()
                            .unwrap_or_default();
                        openapi.cel_nodes.contains(node_path)
                    })
                    .collect();
                cel_all.extend(openapi.cel_errs);
                let priced = crate::cost::price_schema(
                    &node,
                    &sat,
                    &|p| openapi.cel_nodes.contains(p),
                    suppress_per_expression_cost,
                );
                cel_all.extend(priced.rule_errors.iter().cloned());
                let order: HashMap<&str, usize> = priced
                    .order
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.as_str(), i))
                    .collect();
                cel_all.sort_by_cached_key(|e| cel_error_key(e, &order));
                errs.extend(cel_all);
                errs.extend(priced.total_errors(&sat));
            }
            return errs;
        }
    }
    let mut openapi = OpenApiCheck::new(false);
    openapi.check(schema, &sat, Ctx::root());
    errs.extend(openapi.schema_errs);
    if errs.is_empty()
        && let Some(e) = conversion_error
    {
        errs.push(FieldError::invalid(sat, "\"\"", e));
    }
    errs
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

#[derive(Clone)]
struct Ctx {
    root: bool,
    allow_defaults: bool,
    disallow_defaults_reason: String,
    inside_resource_meta: bool,
    forbid_old_self: Option<String>,
}

impl Ctx {
    fn root() -> Ctx {
        Ctx {
            root: true,
            allow_defaults: true,
            disallow_defaults_reason: String::new(),
            inside_resource_meta: false,
            forbid_old_self: None,
        }
    }
}

struct OpenApiCheck {
    /// `OpenAPISchemaErrorList.SchemaErrors`.
    schema_errs: Vec<FieldError>,
    /// `OpenAPISchemaErrorList.CELErrors` found here (oldSelf / optionalOldSelf misuse).
    cel_errs: Vec<FieldError>,
    /// Whether CEL is checked at all (the structural schema and defaults are valid).
    cel_enabled: bool,
    /// Schema paths of the nodes with rules whose subtree has no schema errors: the nodes
    /// whose rules upstream compiles.
    cel_nodes: HashSet<String>,
}

impl OpenApiCheck {
    fn new(cel_enabled: bool) -> OpenApiCheck {
        OpenApiCheck {
            schema_errs: Vec::new(),
            cel_errs: Vec::new(),
            cel_enabled,
            cel_nodes: HashSet::new(),
        }
    }

    fn push(&mut self, _node: &str, e: FieldError) {
        self.schema_errs.push(e);
    }

    /// `ValidateCustomResourceDefinitionOpenAPISchema` minus the CEL compilation (done by
    /// [`Node::compile`]).
    fn check(&mut self, v: &Value, at: &str, ctx: Ctx) {
        let Some(m) = v.as_object() else { return };
        let errs_before = self.schema_errs.len();
        let ty = s(v, "type");
        // specStandardValidatorV3
        if !ty.is_empty() && !OPENAPI_V3_TYPES.contains(&ty) {
            self.push(
                at,
                FieldError::not_supported(path::child(at, "type"), go_quote(ty), &OPENAPI_V3_TYPES),
            );
        }
        if m.get("default").is_some_and(|d| !d.is_null()) && !ctx.allow_defaults {
            let mut detail = "must not be set".to_string();
            if !ctx.disallow_defaults_reason.is_empty() {
                detail.push(' ');
                detail.push_str(&ctx.disallow_defaults_reason);
            }
            self.push(
                at,
                FieldError::forbidden(path::child(at, "default"), detail),
            );
        }
        let forbidden_keys = [
            ("id", "id is not supported"),
            ("additionalItems", "additionalItems is not supported"),
            ("patternProperties", "patternProperties is not supported"),
            ("definitions", "definitions is not supported"),
            ("dependencies", "dependencies is not supported"),
            ("$ref", "$ref is not supported"),
        ];
        for (k, msg) in forbidden_keys {
            if m.get(k).is_some_and(|x| !is_zero(x)) {
                self.push(at, FieldError::forbidden(path::child(at, k), msg));
            }
        }
        if ty == "null" {
            self.push(
                at,
                FieldError::forbidden(
                    path::child(at, "type"),
                    "type cannot be set to null, use nullable as an alternative",
                ),
            );
        }
        if m.get("items")
            .is_some_and(|i| i.as_array().is_some_and(|a| !a.is_empty()))
        {
            self.push(
                at,
                FieldError::forbidden(
                    path::child(at, "items"),
                    "items must be a schema object and not an array",
                ),
            );
        }
        let embedded = m
            .get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true);
        if ctx.inside_resource_meta && embedded {
            self.push(
                at,
                FieldError::forbidden(
                    path::child(at, "x-kubernetes-embedded-resource"),
                    "must not be used inside of resource meta",
                ),
            );
        }
        if m.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
            self.push(
                at,
                FieldError::forbidden(path::child(at, "uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
            );
        }
        let props = m
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty());
        if let Some(add) = m.get("additionalProperties").filter(|a| !a.is_null()) {
            if props.is_some() && (add == &Value::Bool(false) || add.is_object()) {
                self.push(
                    at,
                    FieldError::forbidden(
                        path::child(at, "additionalProperties"),
                        "additionalProperties and properties are mutual exclusive",
                    ),
                );
            }
            if add.is_object() {
                let mut sub = ctx.clone();
                sub.root = false;
                if ctx.inside_resource_meta {
                    sub.allow_defaults = false;
                    sub.disallow_defaults_reason =
                        "inside additionalProperties applying to object metadata".into();
                }
                self.check(add, &path::child(at, "additionalProperties"), sub);
            }
        }
        if let Some(props) = props {
            for (k, p) in props {
                let mut sub = ctx.clone();
                sub.root = false;
                // Every known map type (granular, atomic) correlates old values by key
                // (`MapIsCorrelatable`); others are rejected by the map-type check.
                let map_type = s(v, "x-kubernetes-map-type");
                if !map_type.is_empty() && map_type != "atomic" && map_type != "granular" {
                    sub.forbid_old_self.get_or_insert_with(|| at.to_string());
                }
                if (ctx.root || embedded) && META_FIELDS.contains(&k.as_str()) {
                    sub.inside_resource_meta = true;
                    if ctx.root {
                        sub.allow_defaults = false;
                        sub.disallow_defaults_reason = format!("in top-level {k}");
                    }
                }
                self.check(p, &path::key(&path::child(at, "properties"), k), sub);
            }
        }
        let mut plain = ctx.clone();
        plain.root = false;
        if let Some(not) = m.get("not") {
            self.check(not, &path::child(at, "not"), plain.clone());
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            if let Some(list) = m.get(key).and_then(Value::as_array) {
                for (i, b) in list.iter().enumerate() {
                    self.check(b, &path::index(&path::child(at, key), i), plain.clone());
                }
            }
        }
        let list_type = m.get("x-kubernetes-list-type").and_then(Value::as_str);
        if let Some(items) = m.get("items").filter(|i| i.is_object()) {
            let mut sub = plain.clone();
            if list_type != Some("map") {
                sub.forbid_old_self.get_or_insert_with(|| at.to_string());
            }
            self.check(items, &path::child(at, "items"), sub);
        }
        if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
            self.push(
                at,
                FieldError::invalid(
                    path::child(at, "x-kubernetes-preserve-unknown-fields"),
                    "false",
                    "must be true or undefined",
                ),
            );
        }
        if let Some(map_type) = m.get("x-kubernetes-map-type").and_then(Value::as_str) {
            if ty != "object" {
                if ty.is_empty() {
                    self.push(
                        at,
                        FieldError::required(
                            path::child(at, "type"),
                            "must be object if x-kubernetes-map-type is specified",
                        ),
                    );
                } else {
                    self.push(
                        at,
                        FieldError::invalid_str(
                            path::child(at, "type"),
                            ty,
                            "must be object if x-kubernetes-map-type is specified",
                        ),
                    );
                }
            }
            if map_type != "atomic" && map_type != "granular" {
                self.push(
                    at,
                    FieldError::not_supported(
                        path::child(at, "x-kubernetes-map-type"),
                        go_quote(map_type),
                        &["atomic", "granular"],
                    ),
                );
            }
        }
        let items = m.get("items").and_then(Value::as_object);
        if let Some(lt) = list_type {
            if ty != "array" {
                if ty.is_empty() {
                    self.push(
                        at,
                        FieldError::required(
                            path::child(at, "type"),
                            "must be array if x-kubernetes-list-type is specified",
                        ),
                    );
                } else {
                    self.push(
                        at,
                        FieldError::invalid_str(
                            path::child(at, "type"),
                            ty,
                            "must be array if x-kubernetes-list-type is specified",
                        ),
                    );
                }
            } else if lt == "set"
                && let Some(is) = items
            {
                let ity = is.get("type").and_then(Value::as_str).unwrap_or("");
                let ilt = is.get("x-kubernetes-list-type").and_then(Value::as_str);
                let imt = is.get("x-kubernetes-map-type").and_then(Value::as_str);
                if ity == "array" && ilt.is_some_and(|l| l != "atomic") {
                    self.push(
                        at,
                        FieldError::invalid_str(
                            format!("{at}.items.x-kubernetes-list-type"),
                            ilt.unwrap_or_default(),
                            "must be atomic as item of a list with x-kubernetes-list-type=set",
                        ),
                    );
                }
                if ity == "object" && imt != Some("atomic") {
                    self.push(
                        at,
                        FieldError::invalid(
                            format!("{at}.items.x-kubernetes-map-type"),
                            ilt.map(go_quote).unwrap_or_else(|| "null".into()),
                            "must be atomic as item of a list with x-kubernetes-list-type=set",
                        ),
                    );
                }
            }
            if lt != "atomic" && lt != "set" && lt != "map" {
                self.push(
                    at,
                    FieldError::not_supported(
                        path::child(at, "x-kubernetes-list-type"),
                        go_quote(lt),
                        &["atomic", "set", "map"],
                    ),
                );
            }
        }
        let keys: Vec<String> = m
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let keys_value = format!(
            "[]string{{{}}}",
            keys.iter()
                .map(|k| go_quote(k))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !keys.is_empty() {
            match list_type {
                None => self.push(
                    at,
                    FieldError::required(
                        path::child(at, "x-kubernetes-list-type"),
                        "must be map if x-kubernetes-list-map-keys is non-empty",
                    ),
                ),
                Some("map") => {}
                Some(lt) => self.push(
                    at,
                    FieldError::invalid_str(
                        path::child(at, "x-kubernetes-list-type"),
                        lt,
                        "must be map if x-kubernetes-list-map-keys is non-empty",
                    ),
                ),
            }
        }
        if list_type == Some("map") {
            if keys.is_empty() {
                self.push(
                    at,
                    FieldError::required(
                        path::child(at, "x-kubernetes-list-map-keys"),
                        "must not be empty if x-kubernetes-list-type is map",
                    ),
                );
            }
            match m.get("items") {
                None => self.push(
                    at,
                    FieldError::required(
                        path::child(at, "items"),
                        "must have a schema if x-kubernetes-list-type is map",
                    ),
                ),
                Some(Value::Object(is)) => {
                    let ity = is.get("type").and_then(Value::as_str).unwrap_or("");
                    if ity != "object" {
                        self.push(
                            at,
                            FieldError::invalid_str(
                                format!("{at}.items.type"),
                                ity,
                                "must be object if parent array's x-kubernetes-list-type is map",
                            ),
                        );
                    } else {
                        let iprops = is.get("properties").and_then(Value::as_object);
                        let mut seen = HashSet::new();
                        for k in &keys {
                            match iprops.and_then(|p| p.get(k)) {
                                Some(p) => {
                                    let pt = s(p, "type");
                                    if pt == "array" || pt == "object" {
                                        self.push(
                                            at,
                                            FieldError::invalid_str(
                                                format!("{at}.items.properties[{k}].type"),
                                                ity,
                                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                            ),
                                        );
                                    }
                                }
                                None => self.push(
                                    at,
                                    FieldError::invalid(
                                        path::child(at, "x-kubernetes-list-map-keys"),
                                        keys_value.clone(),
                                        "entries must all be names of item properties",
                                    ),
                                ),
                            }
                            if !seen.insert(k.clone()) {
                                self.push(
                                    at,
                                    FieldError::invalid(
                                        path::child(at, "x-kubernetes-list-map-keys"),
                                        keys_value.clone(),
                                        "must not contain duplicate entries",
                                    ),
                                );
                            }
                        }
                    }
                }
                Some(other) => self.push(
                    at,
                    FieldError::invalid(
                        path::child(at, "items"),
                        render_value(other),
                        "must only have a single schema if x-kubernetes-list-type is map",
                    ),
                ),
            }
        }
        // validateMapListKeysMapSet
        if let (Some(is), Some(lt)) = (items, list_type)
            && (lt == "set" || lt == "map")
        {
            if is.get("nullable").and_then(Value::as_bool) == Some(true) {
                self.push(
                    at,
                    FieldError::forbidden(
                        format!("{at}.items.nullable"),
                        format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
                    ),
                );
            }
            if lt == "map" {
                let required: Vec<&str> = is
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for k in &keys {
                    let Some(p) = is.get("properties").and_then(|p| p.get(k)) else {
                        continue;
                    };
                    if !required.contains(&k.as_str())
                        && p.get("default").is_none_or(Value::is_null)
                    {
                        self.push(
                            at,
                            FieldError::required(
                                format!("{at}.items.properties[{k}].default"),
                                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                            ),
                        );
                    }
                    if p.get("nullable").and_then(Value::as_bool) == Some(true) {
                        self.push(
                            at,
                            FieldError::forbidden(
                                format!("{at}.items.properties[{k}].nullable"),
                                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                            ),
                        );
                    }
                }
            }
        }
        if let Some(rules) = m.get("x-kubernetes-validations").and_then(Value::as_array) {
            self.check_rules(rules, v, at, &ctx);
            if self.cel_enabled && self.schema_errs.len() == errs_before {
                self.cel_nodes.insert(at.to_string());
                self.check_rules_cel(rules, at, &ctx);
            }
        }
    }

    /// The CEL part: transition rules where old values cannot be correlated, and
    /// `optionalOldSelf` on rules without `oldSelf`.
    fn check_rules_cel(&mut self, rules: &[Value], at: &str, ctx: &Ctx) {
        for (i, rule) in rules.iter().enumerate() {
            let rat = format!("{at}.x-kubernetes-validations[{i}]");
            let r = s(rule, "rule");
            if r.trim().is_empty() {
                continue;
            }
            let uses_old_self = crate::cel::compile_program(r)
                .map(|p| p.references().has_variable("oldSelf"))
                .unwrap_or(false);
            if uses_old_self {
                if let Some(p) = &ctx.forbid_old_self {
                    self.cel_errs.push(FieldError::invalid_str(
                        format!("{rat}.rule"),
                        r,
                        format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {p}"),
                    ));
                }
            } else if let Some(b) = rule.get("optionalOldSelf").and_then(Value::as_bool) {
                self.cel_errs.push(FieldError::invalid(
                    format!("{rat}.optionalOldSelf"),
                    b.to_string(),
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
    }

    fn check_rules(&mut self, rules: &[Value], schema: &Value, at: &str, _ctx: &Ctx) {
        let has_newlines = |s: &str| s.contains('\n') || s.contains('\r');
        for (i, rule) in rules.iter().enumerate() {
            let rat = format!("{at}.x-kubernetes-validations[{i}]");
            let r = s(rule, "rule");
            let msg_raw = rule.get("message").and_then(Value::as_str).unwrap_or("");
            let msg = msg_raw.trim();
            if r.trim().is_empty() {
                self.push(
                    at,
                    FieldError::required(format!("{rat}.rule"), "rule is not specified"),
                );
            } else if !msg_raw.is_empty() && msg.is_empty() {
                self.push(
                    at,
                    FieldError::invalid_str(
                        format!("{rat}.message"),
                        msg_raw,
                        "message must be non-empty if specified",
                    ),
                );
            } else if has_newlines(msg) {
                self.push(
                    at,
                    FieldError::invalid_str(
                        format!("{rat}.message"),
                        msg_raw,
                        "message must not contain line breaks",
                    ),
                );
            } else if has_newlines(r.trim()) && msg.is_empty() {
                self.push(
                    at,
                    FieldError::required(
                        format!("{rat}.message"),
                        "message must be specified if rule contains line breaks",
                    ),
                );
            }
            let me = rule
                .get("messageExpression")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !me.is_empty() && me.trim().is_empty() {
                self.push(
                    at,
                    FieldError::required(
                        format!("{rat}.messageExpression"),
                        "messageExpression must be non-empty if specified",
                    ),
                );
            }
            if let Some(reason) = rule.get("reason").and_then(Value::as_str)
                && !crate::cel::SUPPORTED_REASONS.contains(&reason)
            {
                self.push(
                    at,
                    FieldError::not_supported(
                        format!("{rat}.reason"),
                        go_quote(reason),
                        &crate::cel::SUPPORTED_REASONS,
                    ),
                );
            }
            if let Some(fp) = rule.get("fieldPath").and_then(Value::as_str) {
                if !fp.is_empty() && fp.trim().is_empty() {
                    self.push(
                        at,
                        FieldError::invalid_str(
                            format!("{rat}.fieldPath"),
                            fp,
                            "fieldPath must be non-empty if specified",
                        ),
                    );
                }
                if has_newlines(fp) {
                    self.push(
                        at,
                        FieldError::invalid_str(
                            format!("{rat}.fieldPath"),
                            fp,
                            "fieldPath must not contain line breaks",
                        ),
                    );
                }
                if !fp.is_empty() && !field_path_valid(schema, fp) {
                    self.push(
                        at,
                        FieldError::invalid_str(
                            format!("{rat}.fieldPath"),
                            fp,
                            "fieldPath must be a valid path",
                        ),
                    );
                }
            }
        }
    }
}

/// `cel.ValidFieldPath`: every segment must name a property (or a key of an
/// `additionalProperties` map), following the schema.
fn field_path_valid(schema: &Value, fp: &str) -> bool {
    resolve_field_path(schema, fp, true).is_ok()
}

/// Splits a field path into `.`, `[`, `]` and the text between them; single-quoted strings
/// are kept whole (the scanner of `cel.ValidFieldPath`).
fn field_path_tokens(p: &str) -> Vec<&str> {
    let b = p.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let mut j = i + 1;
            while j < b.len() && !(b[j] == b'\'' && b[j - 1] != b'\\') {
                j += 1;
            }
            let end = (j + 1).min(b.len());
            out.push(&p[i..end]);
            i = end;
        } else if matches!(b[i], b'.' | b'[' | b']') {
            out.push(&p[i..i + 1]);
            i += 1;
        } else {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b'.' | b'[' | b']') {
                j += 1;
            }
            out.push(&p[i..j]);
            i = j;
        }
    }
    out
}

/// `cel.ValidFieldPath`: resolves a JSON path against a schema, returning the normalized field
/// path (`a.b[key]`) and the schema found, or the upstream error text.
fn resolve_field_path<'a>(
    schema: &'a Value,
    fp: &str,
    allow_array: bool,
) -> Result<(String, &'a Value), String> {
    let mut path = String::new();
    let mut cur = schema;
    let step = |name: &str, cur: &mut &'a Value, path: &mut String| -> Result<(), String> {
        if let Some(props) = cur.get("properties").and_then(Value::as_object) {
            *cur = props
                .get(name)
                .ok_or_else(|| "does not refer to a valid field".to_string())?;
            *path = crate::path::child(path, name);
        } else if let Some(a) = cur.get("additionalProperties").filter(|a| !a.is_null()) {
            *cur = a;
            *path = crate::path::key(path, name);
        } else {
            return Err("does not refer to a valid field".to_string());
        }
        Ok(())
    };
    let tokens = field_path_tokens(fp);
    let mut it = tokens.into_iter();
    while let Some(tok) = it.next() {
        match tok {
            "[" => {
                if !allow_array {
                    return Err("array notation is not allowed".into());
                }
                let Some(t) = it.next() else {
                    return Err("unexpected end of JSON path".into());
                };
                if t.len() < 2 || !t.starts_with('\'') || !t.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {t}"));
                }
                let name = t[1..t.len() - 1].replace("\\'", "'");
                step(&name, &mut cur, &mut path)?;
                match it.next() {
                    Some("]") => {}
                    Some(t) => return Err(format!("expected ] but got {t}")),
                    None => return Err("unexpected end of JSON path".into()),
                }
            }
            "." => {
                let Some(t) = it.next() else {
                    return Err("unexpected end of JSON path".into());
                };
                step(t, &mut cur, &mut path)?;
            }
            t => return Err(format!("expected [ or . but got: {t}")),
        }
    }
    Ok((path, cur))
}

/// `ValidateCustomResourceSelectableFields`.
fn validate_selectable_fields(
    fields: Option<&Value>,
    schema: Option<&Value>,
    at: &str,
    top_level: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(fields) = fields.and_then(Value::as_array).filter(|f| !f.is_empty()) else {
        return errs;
    };
    let Some(schema) = schema else {
        let detail = if top_level {
            "selectableFields may only be set when validations.schema is included"
        } else {
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included"
        };
        errs.push(FieldError::invalid(at, "\"\"", detail));
        return errs;
    };
    let mut unique: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let field = format!("{at}[{i}].jsonPath");
        let jp = s(f, "jsonPath");
        if jp.is_empty() {
            errs.push(FieldError::required(field, ""));
            continue;
        }
        let (p, found) = match resolve_field_path(schema, jp, false) {
            Ok(r) => r,
            Err(e) => {
                errs.push(FieldError::invalid_str(
                    field,
                    jp,
                    format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if p.split(['.', '[']).next() == Some("metadata") {
            errs.push(FieldError::invalid_str(
                &field,
                jp,
                "must not point to fields in metadata",
            ));
        }
        if !matches!(s(found, "type"), "string" | "boolean" | "integer") {
            errs.push(FieldError::invalid_str(
                &field,
                jp,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if unique.contains(&p) {
            errs.push(FieldError::duplicate(&field, go_quote(jp)));
        } else {
            unique.push(p);
        }
    }
    if unique.len() > 8 {
        errs.push(FieldError::too_many(at, unique.len() as i64, 8));
    }
    errs
}

/// `structuraldefaulting.ValidateDefaults`: every `default` (below the root, outside resource
/// metadata) must be pruned, valid against its schema and its CEL rules.
fn validate_defaults(root: &Node, schema: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    defaults_walk(root, schema, at, true, Meta::Outside, &mut errs);
    errs
}

/// Where a schema node is relative to resource metadata (for defaults).
#[derive(Clone)]
enum Meta {
    Outside,
    /// Inside `apiVersion`/`kind`/`metadata` of a resource, at these keys below the resource.
    Inside(Vec<String>),
    /// Inside a list within resource metadata (not checked).
    InsideList,
}

fn defaults_walk(
    n: &Node,
    v: &Value,
    at: &str,
    resource_root: bool,
    meta: Meta,
    errs: &mut Vec<FieldError>,
) {
    let resource_root = resource_root || n.embedded_resource;
    let meta = if n.embedded_resource {
        Meta::Outside
    } else {
        meta
    };
    if let Some(def) = &n.default
        && !def.is_null()
    {
        let dat = path::child(at, "default");
        let prefixed = |e: FieldError| FieldError {
            field: if e.field.is_empty() {
                dat.clone()
            } else {
                format!("{dat}.{}", e.field)
            },
            ..e
        };
        let checked = match &meta {
            Meta::Outside => {
                let mut pruned = def.clone();
                let mut removed = Vec::new();
                crate::prune::prune_with(&mut pruned, n, n.embedded_resource, &mut removed);
                if !removed.is_empty() {
                    errs.push(FieldError::invalid(
                        &dat,
                        render_value(def),
                        "must not have unknown fields",
                    ));
                }
                true
            }
            Meta::Inside(rel) => {
                let meta_errs = embedded_meta_errors(&surrounding_object(rel, def));
                if meta_errs.is_empty() {
                    true
                } else {
                    let agg = if meta_errs.len() == 1 {
                        meta_errs[0].clone()
                    } else {
                        format!("[{}]", meta_errs.join(", "))
                    };
                    errs.push(FieldError::invalid(
                        &dat,
                        render_value(def),
                        format!("must result in valid metadata: {agg}"),
                    ));
                    false
                }
            }
            Meta::InsideList => false,
        };
        if checked {
            let value_errs = crate::validate::validate_value(n, def);
            if !value_errs.is_empty() {
                errs.extend(value_errs.into_iter().map(prefixed));
            } else {
                errs.extend(
                    crate::cel::validate_rules_at(n, def, Some(def), n.embedded_resource)
                        .into_iter()
                        .map(prefixed),
                );
            }
        }
    }
    if let Some(items) = &n.items {
        let sub = match meta {
            Meta::Outside => Meta::Outside,
            _ => Meta::InsideList,
        };
        defaults_walk(
            items,
            v.get("items").unwrap_or(&Value::Null),
            &path::child(at, "items"),
            false,
            sub,
            errs,
        );
    }
    for (k, p) in &n.properties {
        let sub = match &meta {
            Meta::Outside if resource_root && META_FIELDS.contains(&k.as_str()) => {
                Meta::Inside(vec![k.clone()])
            }
            Meta::Outside => Meta::Outside,
            Meta::Inside(rel) => {
                let mut rel = rel.clone();
                rel.push(k.clone());
                Meta::Inside(rel)
            }
            Meta::InsideList => Meta::InsideList,
        };
        let pv = v
            .get("properties")
            .and_then(|ps| ps.get(k))
            .unwrap_or(&Value::Null);
        defaults_walk(
            p,
            pv,
            &path::key(&path::child(at, "properties"), k),
            false,
            sub,
            errs,
        );
    }
}

/// The resource a default inside metadata ends up in (`NewRootObjectFunc` with
/// `validation/v1` `Validation` type meta).
fn surrounding_object(rel: &[String], def: &Value) -> Value {
    let mut root = json!({"apiVersion": "validation/v1", "kind": "Validation"});
    let mut cur = &mut root;
    for (i, k) in rel.iter().enumerate() {
        let Some(m) = cur.as_object_mut() else { break };
        if i + 1 == rel.len() {
            m.insert(k.clone(), def.clone());
            break;
        }
        cur = m.entry(k.clone()).or_insert_with(|| json!({}));
    }
    root
}

fn is_qualified_name_part(n: &str) -> bool {
    let b = n.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName` (as used for label and annotation keys), in short form.
fn qualified_name_errors(k: &str) -> Vec<String> {
    let parts: Vec<&str> = k.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [n] => (None, *n),
        [p, n] => (Some(*p), *n),
        _ => return vec!["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into()],
    };
    let mut errs = Vec::new();
    if let Some(p) = prefix {
        errs.extend(
            dns1123_subdomain_errors(p)
                .into_iter()
                .map(|e| format!("prefix part {e}")),
        );
    }
    if !is_qualified_name_part(name) {
        errs.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into());
    }
    errs
}

/// `objectmeta.Coerce` + `Validate` of an embedded resource, as error strings: type meta,
/// the types of the `ObjectMeta` fields, names, labels and annotations.
fn embedded_meta_errors(obj: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let invalid =
        |f: &str, v: &Value, d: &str| format!("{f}: Invalid value: {}: {d}", render_value(v));
    for key in ["apiVersion", "kind"] {
        match obj.get(key) {
            Some(Value::String(s)) if s.is_empty() => {
                errs.push(invalid(key, &json!(""), "must not be empty"))
            }
            Some(Value::String(s)) if key == "kind" => {
                let e = dns1035_label_errors(&s.to_lowercase());
                if !e.is_empty() {
                    errs.push(invalid(
                        key,
                        &json!(s),
                        &format!(
                            "may have mixed case, but should otherwise match: {}",
                            e.join(",")
                        ),
                    ));
                }
            }
            Some(Value::String(s)) if s.matches('/').count() > 1 => {
                errs.push(invalid(
                    key,
                    &json!(s),
                    &format!("unexpected GroupVersion string: {s}"),
                ));
            }
            Some(Value::String(_)) | None => {}
            Some(other) => errs.push(invalid(key, other, "must be a string")),
        }
    }
    let Some(meta) = obj.get("metadata") else {
        return errs;
    };
    let Some(meta) = meta.as_object() else {
        errs.push(invalid("metadata", meta, "must be an object"));
        return errs;
    };
    for (k, v) in meta {
        let ok = match k.as_str() {
            "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion"
            | "creationTimestamp" | "deletionTimestamp" => v.is_string() || v.is_null(),
            "generation" | "deletionGracePeriodSeconds" => v.is_i64() || v.is_null(),
            "labels" | "annotations" => {
                v.is_null()
                    || v.as_object()
                        .is_some_and(|m| m.values().all(Value::is_string))
            }
            "finalizers" => {
                v.is_null() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            }
            "ownerReferences" | "managedFields" => v.is_null() || v.is_array(),
            _ => true,
        };
        if !ok {
            errs.push(invalid(&format!("metadata.{k}"), v, "has the wrong type"));
        }
    }
    if !errs.is_empty() {
        return errs;
    }
    for key in ["name", "generateName"] {
        if let Some(n) = meta
            .get(key)
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            for bad in [".", ".."] {
                if n == bad && key == "name" {
                    errs.push(invalid(
                        &format!("metadata.{key}"),
                        &json!(n),
                        &format!("may not be '{bad}'"),
                    ));
                }
            }
            for c in ["/", "%"] {
                if n.contains(c) {
                    errs.push(invalid(
                        &format!("metadata.{key}"),
                        &json!(n),
                        &format!("may not contain '{c}'"),
                    ));
                }
            }
        }
    }
    if let Some(ns) = meta
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        && !is_dns1123_label(ns)
    {
        errs.push(invalid("metadata.namespace", &json!(ns), "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
    }
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            for e in qualified_name_errors(k) {
                errs.push(invalid("metadata.labels", &json!(k), &e));
            }
            let v = v.as_str().unwrap_or_default();
            let value_ok = v.is_empty() || is_qualified_name_part(v);
            if !value_ok {
                errs.push(invalid("metadata.labels", &json!(v), "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
            }
        }
    }
    if let Some(ann) = meta.get("annotations").and_then(Value::as_object) {
        for k in ann.keys() {
            for e in qualified_name_errors(&k.to_lowercase()) {
                errs.push(invalid("metadata.annotations", &json!(k), &e));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests;
