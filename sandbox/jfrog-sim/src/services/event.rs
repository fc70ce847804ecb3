//! The Event service (`/event`): webhook subscriptions, declared on the generic collection
//! service (`crate::collections`).
//!
//! | call | path | answer |
//! |---|---|---|
//! | create | `POST /event/api/v1/subscriptions` | 201, the subscription (read view); 409 when the key exists; 400 invalid |
//! | list | `GET /event/api/v1/subscriptions` | 200, JSON array of every subscription (read view) |
//! | read | `GET /event/api/v1/subscriptions/{key}` | 200 JSON / 404 |
//! | replace | `PUT /event/api/v1/subscriptions/{key}` | 200, no body / 404 / 400 |
//! | delete | `DELETE /event/api/v1/subscriptions/{key}` | 200, no body / 404 |
//!
//! All calls need admin rights (JFrog: "Requires a user with Admin permission"); errors use the
//! Access-style body `{"errors":[{"code":"NOT_FOUND","message":"..."}]}` of the platform
//! services. Keys are case-sensitive.
//!
//! Rules (from the JFrog webhook documentation and the validations of the Terraform provider,
//! `jfrog/terraform-provider-artifactory`, `pkg/artifactory/resource/webhook`):
//! - `key`: 2-200 characters, no whitespace; `description`: at most 1000 characters;
//!   `enabled` defaults to true.
//! - `event_filter.domain` is one of the twelve domains and every `event_types` entry (at least
//!   one) must belong to it.
//! - `event_filter.criteria` per domain: repository domains (`artifact`, `artifact_property`,
//!   `docker`) need `repoKeys` when `anyLocal`, `anyRemote` and `anyFederated` are all false;
//!   `build` needs `selectedBuilds` or `includePatterns` when `anyBuild` is false; the release
//!   bundle domains need `registeredReleaseBundlesNames` when `anyReleaseBundle` is false;
//!   `release_bundle_v2` needs `selectedReleaseBundles` when `anyReleaseBundle` is false;
//!   `release_bundle_v2_promotion` needs a `selectedEnvironments` list; `user` and
//!   `artifact_lifecycle` take no criteria (absent, null or `{}`).
//! - `handlers`: at least one; `handler_type` is `webhook` or `custom-webhook`; `url` an
//!   absolute http(s) URL; `proxy` the key of a proxy of the system configuration descriptor
//!   (`proxies`, the platform's one proxy store): a URL is refused, a missing proxy gets
//!   JFrog's "proxy with key 'X' not found" (the Terraform provider retries on that text);
//!   header and secret lists are `[{name, value}]`; custom-webhook secret names match
//!   `^[a-zA-Z_][a-zA-Z0-9_]*$`; a custom-webhook `method` is an HTTP method.
//!
//! Write-only values on read (list and read answer the same view): a `webhook` handler's
//! `secret` is never answered (the member is absent; the Terraform provider keeps it from its
//! state because JFrog does not return it), and a `custom-webhook` handler's `secrets` keep their
//! names with an empty `value`. The admin API (`/__sim/collections/event_subscriptions`) shows
//! them in clear.
//!
//! Members the Event service's types lack (see `TOP_MEMBERS`) are dropped, never answered.
//!
//! Deviations: the error messages are paraphrases (JFrog's exact wording is not documented); the
//! replace answer carries no body.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::collections::{
    Access, Binding, CreateAnswer, Ctx, Declaration, Ids, KeyCase, Op, UpdateAnswer,
};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;

/// The subscription collection.
pub(crate) static SUBSCRIPTIONS: Declaration = Declaration {
    name: "event_subscriptions",
    key_field: "key",
    key_case: KeyCase::Sensitive,
    ids: Ids::Body,
    flavor: Flavor::Access,
    not_found: |k| {
        (
            StatusCode::NOT_FOUND,
            format!("Subscription with key '{k}' was not found"),
        )
    },
    exists: |k| {
        (
            StatusCode::CONFLICT,
            format!("Subscription with key '{k}' already exists"),
        )
    },
    validate,
    view,
};

static BINDING: Binding = Binding {
    decl: &SUBSCRIPTIONS,
    base: "/event/api/v1/subscriptions",
    item: "/event/api/v1/subscriptions/{key}",
    create_status: StatusCode::CREATED,
    // "Create a New Webhook Subscription": the sample output is the subscription.
    create_answer: CreateAnswer::Object,
    update_status: StatusCode::OK,
    update_answer: UpdateAnswer::Empty,
    delete_status: StatusCode::OK,
    read_access: Access::Admin,
    write_access: Access::Admin,
};

pub(crate) fn routes() -> Router<Arc<Shared>> {
    BINDING.routes()
}

/// The domains and their event types.
pub(crate) const DOMAINS: &[(&str, &[&str])] = &[
    (
        "artifact",
        &["deployed", "deleted", "moved", "copied", "cached"],
    ),
    ("artifact_property", &["added", "deleted"]),
    ("docker", &["pushed", "deleted", "promoted"]),
    ("build", &["uploaded", "deleted", "promoted"]),
    ("release_bundle", &["signed", "deleted", "created"]),
    (
        "distribution",
        &[
            "distribute_started",
            "distribute_completed",
            "distribute_aborted",
            "distribute_failed",
            "delete_started",
            "delete_completed",
            "delete_failed",
        ],
    ),
    (
        "artifactory_release_bundle",
        &[
            "received",
            "delete_started",
            "delete_completed",
            "delete_failed",
        ],
    ),
    (
        "destination",
        &[
            "received",
            "delete_started",
            "delete_completed",
            "delete_failed",
        ],
    ),
    (
        "release_bundle_v2",
        &[
            "release_bundle_v2_started",
            "release_bundle_v2_failed",
            "release_bundle_v2_completed",
        ],
    ),
    (
        "release_bundle_v2_promotion",
        &[
            "release_bundle_v2_promotion_started",
            "release_bundle_v2_promotion_failed",
            "release_bundle_v2_promotion_completed",
        ],
    ),
    ("user", &["locked"]),
    ("artifact_lifecycle", &["archive", "restore"]),
];

const HTTP_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];

/// The members a subscription keeps: JFrog REST API "Create a New Webhook Subscription" (its
/// sample input, `project_key` included) and the Terraform provider's `WebhookAPIModel`,
/// `EventFilterAPIModel`, the per-domain criteria models, `HandlerAPIModel` and
/// `CustomHandlerAPIModel` (`pkg/artifactory/resource/webhook`, v12.11.7). The Event service
/// binds the body to those types, so anything else is dropped: never stored, never answered.
const TOP_MEMBERS: &[&str] = &[
    "key",
    "project_key",
    "description",
    "enabled",
    "event_filter",
    "handlers",
];
const FILTER_MEMBERS: &[&str] = &["domain", "event_types", "criteria"];
const WEBHOOK_HANDLER_MEMBERS: &[&str] = &[
    "handler_type",
    "url",
    "secret",
    "use_secret_for_signing",
    "proxy",
    "custom_http_headers",
];
const CUSTOM_HANDLER_MEMBERS: &[&str] = &[
    "handler_type",
    "url",
    "method",
    "secrets",
    "proxy",
    "http_headers",
    "payload",
];
const PAIR_MEMBERS: &[&str] = &["name", "value"];

/// A domain's criteria members (`BaseCriteriaAPIModel` and the domain's criteria model).
fn criteria_members(domain: &str) -> &'static [&'static str] {
    match domain {
        "artifact" | "artifact_property" | "docker" => &[
            "includePatterns",
            "excludePatterns",
            "anyLocal",
            "anyRemote",
            "anyFederated",
            "repoKeys",
        ],
        "build" => &[
            "includePatterns",
            "excludePatterns",
            "anyBuild",
            "selectedBuilds",
        ],
        "release_bundle" | "distribution" | "artifactory_release_bundle" | "destination" => &[
            "includePatterns",
            "excludePatterns",
            "anyReleaseBundle",
            "registeredReleaseBundlesNames",
        ],
        "release_bundle_v2" => &[
            "includePatterns",
            "excludePatterns",
            "anyReleaseBundle",
            "selectedReleaseBundles",
        ],
        "release_bundle_v2_promotion" => &["selectedEnvironments"],
        _ => &[],
    }
}

fn keep(v: &mut Value, members: &[&str]) {
    if let Value::Object(m) = v {
        m.retain(|k, _| members.contains(&k.as_str()));
    }
}

/// Drops every member the Event service's types do not have (the body is valid).
fn drop_unknown(m: &mut Map<String, Value>) {
    m.retain(|k, _| TOP_MEMBERS.contains(&k.as_str()));
    if let Some(f) = m.get_mut("event_filter") {
        keep(f, FILTER_MEMBERS);
        let domain = f["domain"].as_str().unwrap_or_default().to_owned();
        if let Some(c) = f.get_mut("criteria") {
            keep(c, criteria_members(&domain));
        }
    }
    for h in m
        .get_mut("handlers")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let custom = h["handler_type"] == "custom-webhook";
        keep(
            h,
            if custom {
                CUSTOM_HANDLER_MEMBERS
            } else {
                WEBHOOK_HANDLER_MEMBERS
            },
        );
        for list in ["custom_http_headers", "secrets", "http_headers"] {
            for p in h
                .get_mut(list)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                keep(p, PAIR_MEMBERS);
            }
        }
    }
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, StatusCode::BAD_REQUEST, msg)
}

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ApiError> {
    v.as_object()
        .ok_or_else(|| bad(format!("'{path}' must be an object")))
}

fn opt_bool(m: &Map<String, Value>, name: &str, path: &str) -> Result<bool, ApiError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(format!("'{path}.{name}' must be a boolean"))),
    }
}

fn opt_str<'a>(
    m: &'a Map<String, Value>,
    name: &str,
    path: &str,
) -> Result<Option<&'a str>, ApiError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad(format!("'{path}{name}' must be a string"))),
    }
}

fn str_list(m: &Map<String, Value>, name: &str, path: &str) -> Result<Vec<String>, ApiError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(format!("'{path}.{name}' must be a list of strings")))
            })
            .collect(),
        Some(_) => Err(bad(format!("'{path}.{name}' must be a list of strings"))),
    }
}

/// `[{name, value}]` lists; returns the names.
fn pairs(m: &Map<String, Value>, name: &str, path: &str) -> Result<Vec<String>, ApiError> {
    let msg = || {
        bad(format!(
            "'{path}.{name}' must be a list of {{name, value}} objects"
        ))
    };
    match m.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|p| {
                let p = p.as_object().ok_or_else(msg)?;
                let n = p
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty());
                let v_ok = matches!(p.get("value"), None | Some(Value::Null | Value::String(_)));
                match n {
                    Some(n) if v_ok => Ok(n.to_owned()),
                    _ => Err(msg()),
                }
            })
            .collect(),
        Some(_) => Err(msg()),
    }
}

fn valid_http_url(u: &str) -> bool {
    url::Url::parse(u).is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some())
}

fn valid_secret_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn validate_key(key: &str) -> Result<(), ApiError> {
    let n = key.chars().count();
    if !(2..=200).contains(&n) || key.chars().any(char::is_whitespace) {
        return Err(bad(format!(
            "Invalid subscription key '{key}': the key must be 2 - 200 characters long and cannot contain spaces"
        )));
    }
    Ok(())
}

fn validate_criteria(domain: &str, filter: &Map<String, Value>) -> Result<(), ApiError> {
    const P: &str = "event_filter.criteria";
    let criteria = match filter.get("criteria") {
        None | Some(Value::Null) => None,
        Some(v) => Some(obj(v, P)?),
    };
    if matches!(domain, "user" | "artifact_lifecycle") {
        if criteria.is_some_and(|c| !c.is_empty()) {
            return Err(bad(format!("The '{domain}' domain does not take criteria")));
        }
        return Ok(());
    }
    let Some(c) = criteria else {
        return Err(bad(format!("'{P}' is required for the '{domain}' domain")));
    };
    str_list(c, "includePatterns", P)?;
    str_list(c, "excludePatterns", P)?;
    match domain {
        "artifact" | "artifact_property" | "docker" => {
            let any = opt_bool(c, "anyLocal", P)?
                | opt_bool(c, "anyRemote", P)?
                | opt_bool(c, "anyFederated", P)?;
            if !any && str_list(c, "repoKeys", P)?.is_empty() {
                return Err(bad(
                    "repoKeys cannot be empty when anyLocal, anyRemote and anyFederated are false",
                ));
            }
        }
        "build" => {
            let any = opt_bool(c, "anyBuild", P)?;
            let selected = str_list(c, "selectedBuilds", P)?;
            let include = str_list(c, "includePatterns", P)?;
            if !any && selected.is_empty() && include.is_empty() {
                return Err(bad(
                    "selectedBuilds or includePatterns cannot be empty when anyBuild is false",
                ));
            }
        }
        "release_bundle" | "distribution" | "artifactory_release_bundle" | "destination" => {
            let any = opt_bool(c, "anyReleaseBundle", P)?;
            if !any && str_list(c, "registeredReleaseBundlesNames", P)?.is_empty() {
                return Err(bad(
                    "registeredReleaseBundlesNames cannot be empty when anyReleaseBundle is false",
                ));
            }
        }
        "release_bundle_v2" => {
            let any = opt_bool(c, "anyReleaseBundle", P)?;
            // Either a plain list of names or JFrog's `{"release-bundles-v2": [...]}` form.
            let selected = match c.get("selectedReleaseBundles") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(_)) => str_list(c, "selectedReleaseBundles", P)?,
                Some(Value::Object(m)) => str_list(
                    m,
                    "release-bundles-v2",
                    &format!("{P}.selectedReleaseBundles"),
                )?,
                Some(_) => {
                    return Err(bad(format!(
                        "'{P}.selectedReleaseBundles' must be a list of release bundle names"
                    )));
                }
            };
            if !any && selected.is_empty() {
                return Err(bad(
                    "selectedReleaseBundles cannot be empty when anyReleaseBundle is false",
                ));
            }
        }
        "release_bundle_v2_promotion" => {
            if !matches!(c.get("selectedEnvironments"), Some(Value::Array(_))) {
                return Err(bad(format!(
                    "'{P}.selectedEnvironments' is required for the '{domain}' domain"
                )));
            }
            str_list(c, "selectedEnvironments", P)?;
        }
        _ => {}
    }
    Ok(())
}

fn validate_handler(ctx: &Ctx<'_>, i: usize, h: &mut Value) -> Result<(), ApiError> {
    let path = format!("handlers[{i}]");
    let m = h
        .as_object_mut()
        .ok_or_else(|| bad(format!("'{path}' must be an object")))?;
    let kind = match m.get("handler_type") {
        Some(Value::String(t)) if t == "webhook" || t == "custom-webhook" => t.clone(),
        Some(Value::String(t)) => {
            return Err(bad(format!(
                "Invalid handler_type '{t}': expected webhook or custom-webhook"
            )));
        }
        _ => return Err(bad(format!("'{path}.handler_type' is required"))),
    };
    let url = opt_str(m, "url", &format!("{path}."))?.unwrap_or("");
    if !valid_http_url(url) {
        return Err(bad(format!(
            "Invalid handler url '{url}': expected an absolute http or https URL"
        )));
    }
    if let Some(proxy) = opt_str(m, "proxy", &format!("{path}."))?.filter(|p| !p.is_empty()) {
        if proxy.starts_with("http") || proxy.contains("://") {
            return Err(bad(format!(
                "Invalid proxy '{proxy}': expected the key of a proxy, not a URL"
            )));
        }
        if !ctx.proxy_exists(proxy) {
            // JFrog's wording (the Terraform provider retries on it).
            return Err(bad(format!("proxy with key '{proxy}' not found")));
        }
    }
    if kind == "webhook" {
        opt_str(m, "secret", &format!("{path}."))?;
        opt_bool(m, "use_secret_for_signing", &path)?;
        pairs(m, "custom_http_headers", &path)?;
        // No default: a handler without `use_secret_for_signing` is answered without it (the
        // Terraform provider's attribute is optional, not computed, and reads a missing
        // member as null: `resource_artifactory_webhook.go`).
    } else {
        for name in pairs(m, "secrets", &path)? {
            if !valid_secret_name(&name) {
                return Err(bad(format!(
                    "Invalid secret name '{name}': must match '^[a-zA-Z_][a-zA-Z0-9_]*$'"
                )));
            }
        }
        pairs(m, "http_headers", &path)?;
        opt_str(m, "payload", &format!("{path}."))?;
        if let Some(method) = opt_str(m, "method", &format!("{path}."))?
            && !HTTP_METHODS.contains(&method)
        {
            return Err(bad(format!(
                "Invalid method '{method}': expected one of {}",
                HTTP_METHODS.join(", ")
            )));
        }
    }
    Ok(())
}

/// The subscription rules; returns the object to store.
fn validate(ctx: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let Value::Object(mut m) = body else {
        return Err(bad("The subscription must be a JSON object"));
    };
    let key = match (m.get("key"), op) {
        (Some(Value::String(k)), Op::Update { key, .. }) if k != key => {
            return Err(bad(format!(
                "The subscription key in the body ('{k}') does not match the key in the path ('{key}')"
            )));
        }
        (Some(Value::String(k)), _) => k.clone(),
        (None | Some(Value::Null), Op::Update { key, .. }) => key.to_owned(),
        (None | Some(Value::Null), Op::Create) => return Err(bad("'key' is required")),
        (Some(_), _) => return Err(bad("'key' must be a string")),
    };
    if matches!(op, Op::Create) {
        validate_key(&key)?;
    }
    m.insert("key".into(), Value::String(key));
    if let Some(d) = opt_str(&m, "description", "")?
        && d.chars().count() > 1000
    {
        return Err(bad(
            "Invalid description: at most 1000 characters are allowed",
        ));
    }
    match m.get("enabled") {
        None | Some(Value::Null) => {
            m.insert("enabled".into(), Value::Bool(true));
        }
        Some(Value::Bool(_)) => {}
        Some(_) => return Err(bad("'enabled' must be a boolean")),
    }
    let filter = m
        .get("event_filter")
        .filter(|v| !v.is_null())
        .ok_or_else(|| bad("'event_filter' is required"))?;
    let filter = obj(filter, "event_filter")?;
    let domain = opt_str(filter, "domain", "event_filter.")?
        .ok_or_else(|| bad("'event_filter.domain' is required"))?;
    let Some((_, allowed)) = DOMAINS.iter().find(|(d, _)| *d == domain) else {
        let names: Vec<&str> = DOMAINS.iter().map(|(d, _)| *d).collect();
        return Err(bad(format!(
            "Invalid domain '{domain}': expected one of {}",
            names.join(", ")
        )));
    };
    let types = str_list(filter, "event_types", "event_filter")?;
    if types.is_empty() {
        return Err(bad("'event_filter.event_types' cannot be empty"));
    }
    if let Some(t) = types.iter().find(|t| !allowed.contains(&t.as_str())) {
        return Err(bad(format!(
            "Event type '{t}' is not supported for domain '{domain}': expected one of {}",
            allowed.join(", ")
        )));
    }
    validate_criteria(domain, filter)?;
    let handlers = match m.get_mut("handlers") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            return Err(bad("At least one handler is required"));
        }
        Some(_) => return Err(bad("'handlers' must be a list")),
    };
    for (i, h) in handlers.iter_mut().enumerate() {
        validate_handler(ctx, i, h)?;
    }
    drop_unknown(&mut m);
    Ok(Value::Object(m))
}

/// What a read answers: no webhook `secret`, custom-webhook `secrets` without values.
fn view(stored: &Value) -> Value {
    let mut v = stored.clone();
    if let Some(Value::Array(handlers)) = v.get_mut("handlers") {
        for h in handlers.iter_mut().filter_map(Value::as_object_mut) {
            h.remove("secret");
            if let Some(Value::Array(secrets)) = h.get_mut("secrets") {
                for s in secrets.iter_mut().filter_map(Value::as_object_mut) {
                    s.insert("value".into(), json!(""));
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: Value) -> Result<Value, String> {
        let descriptor = std::sync::Mutex::new(
            json!({"proxies": {"corp-proxy": {"host": "p.example", "port": 3128}}}),
        );
        let ctx = Ctx {
            descriptor: &descriptor,
        };
        validate(&ctx, body, Op::Create).map_err(|e| e.message)
    }

    fn sub(domain: &str, types: Value, criteria: Value) -> Value {
        json!({
            "key": "my-hook",
            "event_filter": {"domain": domain, "event_types": types, "criteria": criteria},
            "handlers": [{"handler_type": "webhook", "url": "https://example.com/hook"}]
        })
    }

    #[test]
    fn defaults_are_filled_in() {
        let v = check(sub(
            "artifact",
            json!(["deployed"]),
            json!({"anyLocal": true}),
        ))
        .unwrap();
        assert_eq!(v["enabled"], true);
        assert!(v["handlers"][0].get("use_secret_for_signing").is_none());
    }

    #[test]
    fn keys() {
        for bad_key in ["a", "has space", &"k".repeat(201)] {
            let mut b = sub("user", json!(["locked"]), Value::Null);
            b["key"] = json!(bad_key);
            assert!(check(b).unwrap_err().contains("2 - 200"), "{bad_key}");
        }
        let mut b = sub("user", json!(["locked"]), Value::Null);
        b["key"] = json!("k".repeat(200));
        assert!(check(b).is_ok());
        let mut b = sub("user", json!(["locked"]), Value::Null);
        b["description"] = json!("d".repeat(1001));
        assert!(check(b).unwrap_err().contains("1000"));
    }

    #[test]
    fn domains_and_event_types() {
        for (domain, types) in DOMAINS {
            let criteria = match *domain {
                "artifact" | "artifact_property" | "docker" => json!({"anyRemote": true}),
                "build" => json!({"anyBuild": true}),
                "release_bundle_v2_promotion" => json!({"selectedEnvironments": ["PROD"]}),
                "user" | "artifact_lifecycle" => Value::Null,
                _ => json!({"anyReleaseBundle": true}),
            };
            assert!(
                check(sub(domain, json!(types), criteria.clone())).is_ok(),
                "{domain}"
            );
            let e = check(sub(domain, json!(["nope"]), criteria)).unwrap_err();
            assert!(e.contains("'nope' is not supported"), "{e}");
        }
        assert!(
            check(sub("weird", json!(["x"]), Value::Null))
                .unwrap_err()
                .contains("Invalid domain 'weird'")
        );
        assert!(
            check(sub("user", json!([]), Value::Null))
                .unwrap_err()
                .contains("cannot be empty")
        );
    }

    #[test]
    fn criteria_rules() {
        let e = check(sub("docker", json!(["pushed"]), json!({"anyLocal": false}))).unwrap_err();
        assert!(e.contains("repoKeys cannot be empty"), "{e}");
        assert!(check(sub("docker", json!(["pushed"]), json!({"repoKeys": ["d"]}))).is_ok());
        let e = check(sub(
            "build",
            json!(["uploaded"]),
            json!({"anyBuild": false}),
        ))
        .unwrap_err();
        assert!(e.contains("selectedBuilds or includePatterns"), "{e}");
        assert!(
            check(sub(
                "build",
                json!(["uploaded"]),
                json!({"includePatterns": ["a/**"]})
            ))
            .is_ok()
        );
        let e = check(sub("distribution", json!(["delete_failed"]), json!({}))).unwrap_err();
        assert!(e.contains("registeredReleaseBundlesNames"), "{e}");
        let e = check(sub(
            "release_bundle_v2",
            json!(["release_bundle_v2_started"]),
            json!({"anyReleaseBundle": false}),
        ))
        .unwrap_err();
        assert!(e.contains("selectedReleaseBundles"), "{e}");
        assert!(
            check(sub(
                "release_bundle_v2",
                json!(["release_bundle_v2_started"]),
                json!({"selectedReleaseBundles": {"release-bundles-v2": ["rb"]}})
            ))
            .is_ok()
        );
        let e = check(sub(
            "release_bundle_v2_promotion",
            json!(["release_bundle_v2_promotion_failed"]),
            json!({}),
        ))
        .unwrap_err();
        assert!(e.contains("selectedEnvironments"), "{e}");
        assert!(
            check(sub("user", json!(["locked"]), json!({"anyLocal": true})))
                .unwrap_err()
                .contains("does not take criteria")
        );
        assert!(
            check(sub("artifact", json!(["deployed"]), Value::Null))
                .unwrap_err()
                .contains("required")
        );
        assert!(
            check(sub(
                "artifact",
                json!(["deployed"]),
                json!({"anyLocal": "yes"})
            ))
            .unwrap_err()
            .contains("boolean")
        );
    }

    #[test]
    fn handlers() {
        let with = |h: Value| {
            let mut b = sub("user", json!(["locked"]), Value::Null);
            b["handlers"] = json!([h]);
            check(b)
        };
        assert!(
            with(json!({"handler_type": "webhook", "url": "ftp://x"}))
                .unwrap_err()
                .contains("Invalid handler url")
        );
        assert!(
            with(json!({"handler_type": "email", "url": "https://x"}))
                .unwrap_err()
                .contains("handler_type")
        );
        assert!(
            with(json!({"url": "https://x"}))
                .unwrap_err()
                .contains("handler_type")
        );
        assert!(
            with(json!({"handler_type": "webhook", "url": "https://x", "proxy": "https://p:3128"}))
                .unwrap_err()
                .contains("not a URL")
        );
        assert_eq!(
            with(json!({"handler_type": "webhook", "url": "https://x", "proxy": "other"}))
                .unwrap_err(),
            "proxy with key 'other' not found"
        );
        assert!(
            with(json!({"handler_type": "webhook", "url": "https://x", "proxy": "corp-proxy"}))
                .is_ok()
        );
        assert!(with(json!({"handler_type": "custom-webhook", "url": "https://x", "secrets": [{"name": "1bad", "value": "v"}]})).unwrap_err().contains("Invalid secret name '1bad'"));
        assert!(with(json!({"handler_type": "custom-webhook", "url": "https://x", "secrets": [{"name": "_ok1", "value": "v"}], "method": "POST"})).is_ok());
        assert!(
            with(json!({"handler_type": "custom-webhook", "url": "https://x", "method": "BREW"}))
                .unwrap_err()
                .contains("Invalid method")
        );
        assert!(with(json!({"handler_type": "webhook", "url": "https://x", "custom_http_headers": [{"value": "v"}]})).unwrap_err().contains("{name, value}"));
        let mut b = sub("user", json!(["locked"]), Value::Null);
        b["handlers"] = json!([]);
        assert!(check(b).unwrap_err().contains("At least one handler"));
    }

    #[test]
    fn view_hides_secrets() {
        let stored = json!({"key": "k", "handlers": [
            {"handler_type": "webhook", "url": "https://x", "secret": "s3cr3t"},
            {"handler_type": "custom-webhook", "url": "https://y", "secrets": [{"name": "token", "value": "s3cr3t"}]}
        ]});
        let v = view(&stored);
        assert!(v["handlers"][0].get("secret").is_none());
        assert_eq!(
            v["handlers"][1]["secrets"],
            json!([{"name": "token", "value": ""}])
        );
        assert!(!v.to_string().contains("s3cr3t"));
    }
}
