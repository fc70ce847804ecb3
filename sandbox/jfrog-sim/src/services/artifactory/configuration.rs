//! The system configuration descriptor's configuration sections and the REST configuration
//! objects beside them.
//!
//! - `GET /artifactory/api/system/configuration` answers the descriptor as XML (root
//!   `<config>`): keyed sections (`backups`, `proxies`, `propertySets`, `repoLayouts`,
//!   `security.ldapSettings`, `security.ldapGroupSettings`, and inside them property lists,
//!   predefined values and OAuth providers) as repeated elements carrying their key, other
//!   objects as nested elements, string lists as repeated child elements. Passwords and
//!   secrets are not rendered.
//! - `PATCH /artifactory/api/system/configuration` takes a YAML merge patch (a `~` removes a
//!   member or entry), as Artifactory does for self-hosted platforms. It goes through the
//!   descriptor's optimistic concurrency (an overlapping write answers "Could not merge and
//!   save new descriptor"). The patched descriptor is validated as a whole before it is
//!   saved: one invalid entry fails the whole patch with a 400 naming the entry and the
//!   rule, and nothing is saved.
//! - The same patch takes repositories (`localRepositories`, `remoteRepositories`,
//!   `virtualRepositories`, `federatedRepositories`: maps from repository key to its
//!   configuration, `type` being the package type), validated and stored exactly as the
//!   repository REST API does, all or nothing with the descriptor sections; a platform set
//!   not to accept them (`yamlRepositories: false` in the admin API: SaaS, or a version that
//!   keeps repositories out of the descriptor) answers 400 naming the section.
//! - Archive and cleanup policies and the Access service's LDAP v2 settings and groups are
//!   keyed collections of the generic collection service.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};

use crate::auth::Admin;
use crate::collections::{
    Access, Binding, CreateAnswer, Ctx, Declaration, Ids, KeyCase, Op, UpdateAnswer, as_stored,
};
use crate::errors::{ApiError, Flavor};
use crate::server::Shared;
use crate::services::artifactory::repositories::{YAML_SECTIONS, take_yaml_sections};

const PATH: &str = "/artifactory/api/system/configuration";

/// Keyed sections and lists: (member, XML element of one entry, key member).
const KEYED: &[(&str, &str, &str)] = &[
    ("backups", "backup", "key"),
    ("proxies", "proxy", "key"),
    ("propertySets", "propertySet", "name"),
    ("properties", "property", "name"),
    ("predefinedValues", "predefinedValue", "value"),
    ("repoLayouts", "repoLayout", "name"),
    ("ldapSettings", "ldapSetting", "key"),
    ("ldapGroupSettings", "ldapGroupSetting", "name"),
    ("oauthProvidersSettings", "oauthProvider", "name"),
];

/// Members never rendered (secrets; Artifactory returns them encrypted at best).
const SECRET: &[&str] = &["password", "managerPassword", "secret"];

/// The descriptor of a fresh platform.
pub(crate) fn initial() -> Value {
    json!({
        "trashcanConfig": {"enabled": true, "retentionPeriodDays": 14},
        "security": {
            "anonAccessEnabled": false,
            "passwordSettings": {"encryptionPolicy": "SUPPORTED"}
        }
    })
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(PATH, get(read).patch(patch))
        .merge(ARCHIVE.routes_create_on_item())
        .merge(PACKAGE_CLEANUP.routes_create_on_item())
        .merge(BUNDLE_CLEANUP.routes_create_on_item())
        .route(
            "/artifactory/api/archive/v2/packages/policies/{key}/enablement",
            post(
                |s: State<Arc<Shared>>, a: Admin, k: Path<String>, b: Bytes| {
                    enablement(&ARCHIVE_POLICIES, s, a, k, b)
                },
            ),
        )
        .route(
            "/artifactory/api/cleanup/packages/policies/{key}/enablement",
            post(
                |s: State<Arc<Shared>>, a: Admin, k: Path<String>, b: Bytes| {
                    enablement(&PACKAGE_CLEANUP_POLICIES, s, a, k, b)
                },
            ),
        )
        .route(
            "/artifactory/api/cleanup/bundles/policies/{key}/enablement",
            post(
                |s: State<Arc<Shared>>, a: Admin, k: Path<String>, b: Bytes| {
                    enablement(&BUNDLE_CLEANUP_POLICIES, s, a, k, b)
                },
            ),
        )
        .merge(LDAP_SETTINGS.routes())
        .merge(LDAP_SETTINGS.update_by_body("/access/api/v1/ldap/settings/"))
        .merge(LDAP_GROUPS.routes())
        .merge(LDAP_GROUPS.update_by_body("/access/api/v1/ldap/groups/"))
}

fn content(s: &Shared) -> std::sync::MutexGuard<'_, Value> {
    s.descriptor
        .content
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn read(State(s): State<Arc<Shared>>, _admin: Admin) -> Response {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<config xmlns=\"http://artifactory.jfrog.org/xsd/3.1.0\">",
    );
    if let Value::Object(m) = &*content(&s) {
        for (k, v) in m {
            render(k, v, &mut xml);
        }
    }
    xml.push_str("</config>\n");
    ([(header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => escape(s),
        other => other.to_string(),
    }
}

fn render(name: &str, v: &Value, out: &mut String) {
    if SECRET.contains(&name) || v.is_null() {
        return;
    }
    out.push_str(&format!("<{name}>"));
    match v {
        Value::Object(m) => {
            let keyed = KEYED.iter().find(|(n, _, _)| *n == name);
            for (k, e) in m {
                match keyed {
                    Some((_, item, key)) => {
                        out.push_str(&format!("<{item}><{key}>{}</{key}>", escape(k)));
                        if let Value::Object(inner) = e {
                            for (ik, iv) in inner {
                                render(ik, iv, out);
                            }
                        }
                        out.push_str(&format!("</{item}>"));
                    }
                    None => render(k, e, out),
                }
            }
        }
        Value::Array(items) => {
            let item = if name == "excludedRepositories" {
                "repositoryRef"
            } else {
                "value"
            };
            for i in items {
                out.push_str(&format!("<{item}>{}</{item}>", scalar(i)));
            }
        }
        other => out.push_str(&scalar(other)),
    }
    out.push_str(&format!("</{name}>"));
}

/// RFC 7396 merge patch.
fn merge(target: &mut Value, patch: Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Value::Object(t) = target {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(&k);
                    } else {
                        merge(t.entry(k).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other,
    }
}

async fn patch(
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    body: Bytes,
) -> Result<Response, ApiError> {
    let patch: Value = serde_yaml::from_slice(&body).map_err(|e| {
        ApiError::bad_request(format!(
            "Could not parse the configuration patch as YAML: {e}"
        ))
    })?;
    let Value::Object(mut patch) = patch else {
        return Err(ApiError::bad_request(
            "The configuration patch must be a YAML map",
        ));
    };
    if !s.artifactory.yaml_repositories()
        && let Some((section, _)) = YAML_SECTIONS
            .iter()
            .find(|(section, _)| patch.contains_key(*section))
    {
        return Err(ApiError::bad_request(format!(
            "Unsupported configuration section '{section}': repositories are configured through the repositories REST API on this platform"
        )));
    }
    let repositories = take_yaml_sections(&mut patch)?;
    let patch = Value::Object(patch);
    // Validation answers at once; only a valid patch spends the descriptor-save time (and
    // is validated again on commit, against the descriptor it merges into).
    {
        let mut next = content(&s).clone();
        merge(&mut next, patch.clone());
        validate(&next)?;
        s.artifactory
            .apply_yaml(&repositories, &s.base_url, false)?;
    }
    let ticket = s.descriptor.begin().await;
    s.descriptor.commit(ticket, || {
        let mut c = content(&s);
        let mut next = c.clone();
        merge(&mut next, patch);
        validate(&next)?;
        s.artifactory.apply_yaml(&repositories, &s.base_url, true)?;
        *c = next;
        Ok(())
    })?;
    Ok((StatusCode::OK, "Configuration patched successfully\n").into_response())
}

fn str_at<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn entries<'a>(v: &'a Value, path: &[&str]) -> Vec<(&'a String, &'a Value)> {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(n) => cur = n,
            None => return Vec::new(),
        }
    }
    cur.as_object()
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 64
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A cron expression as Artifactory's Quartz takes it: 6 or 7 fields.
/// A Quartz cron expression, as Artifactory's scheduler parses it: seconds, minutes, hours,
/// day of month, month, day of week and an optional year; each field a list of `*`, values,
/// ranges and `/` increments in its range (names for months and days), `?` for one of the two
/// day fields, `L`/`W` in the day of month, `L`/`#` in the day of week.
pub(crate) fn valid_cron(c: &str) -> bool {
    let f: Vec<&str> = c.split_whitespace().collect();
    if !(f.len() == 6 || f.len() == 7) {
        return false;
    }
    const MONTHS: &[&str] = &[
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ];
    const DAYS: &[&str] = &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
    let ok = cron_field(f[0], 0, 59, &[], "")
        && cron_field(f[1], 0, 59, &[], "")
        && cron_field(f[2], 0, 23, &[], "")
        && cron_field(f[3], 1, 31, &[], "?LW")
        && cron_field(f[4], 1, 12, MONTHS, "")
        && cron_field(f[5], 1, 7, DAYS, "?L#")
        && f.get(6).is_none_or(|y| cron_field(y, 1970, 2199, &[], ""));
    // Quartz needs `?` in exactly one of the two day fields.
    ok && ((f[3] == "?") != (f[5] == "?"))
}

fn cron_value(v: &str, lo: u32, hi: u32, names: &[&str]) -> bool {
    let n = v.parse::<u32>().ok().or_else(|| {
        names
            .iter()
            .position(|x| x.eq_ignore_ascii_case(v))
            .and_then(|i| u32::try_from(i).ok())
            .map(|i| i + lo)
    });
    n.is_some_and(|n| (lo..=hi).contains(&n))
}

fn cron_field(f: &str, lo: u32, hi: u32, names: &[&str], special: &str) -> bool {
    if f == "?" {
        return special.contains('?');
    }
    f.split(',').all(|item| {
        let (base, step) = match item.split_once('/') {
            Some((b, s)) => (b, Some(s)),
            None => (item, None),
        };
        if step.is_some_and(|s| s.parse::<u32>().map_or(true, |s| s == 0)) {
            return false;
        }
        if base == "*" {
            return true;
        }
        if special.contains('L') && step.is_none() {
            // Day of month: L, LW, L-n, nW; day of week: nL.
            if matches!(base, "L" | "LW") && special.contains('W') {
                return true;
            }
            if let Some(off) = base.strip_prefix("L-") {
                return special.contains('W') && off.parse::<u32>().is_ok_and(|n| n < 31);
            }
            if let Some(d) = base.strip_suffix('W') {
                return special.contains('W') && cron_value(d, lo, hi, names);
            }
            if base == "L" {
                return true;
            }
            if let Some(d) = base.strip_suffix('L') {
                return cron_value(d, lo, hi, names);
            }
        }
        if special.contains('#')
            && let Some((d, n)) = base.split_once('#')
        {
            return step.is_none()
                && cron_value(d, lo, hi, names)
                && n.parse::<u32>().is_ok_and(|n| (1..=5).contains(&n));
        }
        match base.split_once('-') {
            Some((a, b)) => cron_value(a, lo, hi, names) && cron_value(b, lo, hi, names),
            None => cron_value(base, lo, hi, names),
        }
    })
}

fn port(v: &Value) -> Option<i64> {
    v.get("port")
        .and_then(|p| p.as_i64().or_else(|| p.as_str()?.parse().ok()))
}

/// The whole descriptor's rules; the first broken one, naming its entry.
fn validate(d: &Value) -> Result<(), ApiError> {
    let bad = |what: &str, key: &str, msg: &str| {
        Err(ApiError::bad_request(format!("{what} '{key}': {msg}")))
    };
    for (k, b) in entries(d, &["backups"]) {
        if !valid_key(k) {
            return bad(
                "Backup",
                k,
                "the key may contain only letters, digits, '-', '_' and '.'",
            );
        }
        if !valid_cron(str_at(b, "cronExp")) {
            return bad("Backup", k, "cronExp is not a valid cron expression");
        }
    }
    for (k, p) in entries(d, &["proxies"]) {
        if !valid_key(k) {
            return bad(
                "Proxy",
                k,
                "the key may contain only letters, digits, '-', '_' and '.'",
            );
        }
        if str_at(p, "host").is_empty() {
            return bad("Proxy", k, "host is required");
        }
        if !port(p).is_some_and(|n| (1..=65535).contains(&n)) {
            return bad("Proxy", k, "port must be between 1 and 65535");
        }
    }
    for (k, l) in entries(d, &["repoLayouts"]) {
        let pattern = str_at(l, "artifactPathPattern");
        if pattern.is_empty() || !pattern.contains("[module]") {
            return bad(
                "Repository layout",
                k,
                "artifactPathPattern must contain [module]",
            );
        }
    }
    for (k, p) in entries(d, &["propertySets"]) {
        if !valid_key(k) {
            return bad(
                "Property set",
                k,
                "the name may contain only letters, digits, '-', '_' and '.'",
            );
        }
        for (name, prop) in entries(p, &["properties"]) {
            let defaults = entries(prop, &["predefinedValues"])
                .iter()
                .filter(|(_, v)| v.get("defaultValue").and_then(Value::as_bool) == Some(true))
                .count();
            if defaults > 1 && prop.get("multipleChoice").and_then(Value::as_bool) != Some(true) {
                return bad(
                    "Property set",
                    k,
                    &format!("property '{name}' has several default values but is single choice"),
                );
            }
        }
    }
    let ldaps = entries(d, &["security", "ldapSettings"]);
    for (k, l) in &ldaps {
        let url = str_at(l, "ldapUrl");
        if !(url.starts_with("ldap://") || url.starts_with("ldaps://")) {
            return bad(
                "LDAP setting",
                k,
                "ldapUrl must be an ldap:// or ldaps:// URL",
            );
        }
    }
    for (k, g) in entries(d, &["security", "ldapGroupSettings"]) {
        if !matches!(
            str_at(g, "strategy").to_ascii_uppercase().as_str(),
            "STATIC" | "DYNAMIC" | "HIERARCHICAL"
        ) {
            return bad(
                "LDAP group setting",
                k,
                "strategy must be STATIC, DYNAMIC or HIERARCHICAL",
            );
        }
    }
    if let Some(m) = d.get("mailServer") {
        if str_at(m, "host").is_empty() {
            return bad("Mail server", "mailServer", "host is required");
        }
        if !port(m).is_some_and(|n| (1..=65535).contains(&n)) {
            return bad(
                "Mail server",
                "mailServer",
                "port must be between 1 and 65535",
            );
        }
    }
    if let Some(t) = d.get("trashcanConfig")
        && t.get("retentionPeriodDays")
            .and_then(Value::as_i64)
            .is_some_and(|n| n < 0)
    {
        return bad(
            "Trash can",
            "trashcanConfig",
            "retentionPeriodDays cannot be negative",
        );
    }
    for (k, p) in entries(d, &["security", "oauthSettings", "oauthProvidersSettings"]) {
        let t = str_at(p, "providerType");
        if !matches!(t, "github" | "google" | "openId" | "cloudfoundry") {
            return bad(
                "OAuth provider",
                k,
                "providerType must be github, google, openId or cloudfoundry",
            );
        }
    }
    if let Some(saml) = d.get("security").and_then(|s| s.get("samlSettings"))
        && saml.get("enableIntegration").and_then(Value::as_bool) == Some(true)
        && str_at(saml, "loginUrl").is_empty()
    {
        return bad(
            "SAML settings",
            "samlSettings",
            "loginUrl is required when SAML is enabled",
        );
    }
    if let Some(p) = d
        .get("security")
        .and_then(|s| s.get("passwordSettings"))
        .and_then(|p| p.get("encryptionPolicy"))
        .and_then(Value::as_str)
        && !matches!(p, "REQUIRED" | "SUPPORTED" | "UNSUPPORTED")
    {
        return bad(
            "Security",
            "passwordSettings",
            "encryptionPolicy must be REQUIRED, SUPPORTED or UNSUPPORTED",
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// REST configuration objects.

fn art_bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Artifactory, StatusCode::BAD_REQUEST, msg)
}

/// A cleanup or archive policy: a key, a cron expression and search criteria naming at
/// least one package type.
fn validate_policy(_: &Ctx<'_>, body: Value, op: Op<'_>) -> Result<Value, ApiError> {
    let Value::Object(mut m) = body else {
        return Err(art_bad("The request body must be a JSON object"));
    };
    // `enabled` changes only through the enablement call ("Update a Package-Level Cleanup
    // Policy API": "change only with enable/disable API"): an update keeps the stored value,
    // a create without it is disabled (the Terraform provider omits it on create and then
    // calls the enablement endpoint, `resource_artifactory_package_cleanup_policy.go`).
    match op {
        Op::Update { key, existing } => {
            m.insert("key".into(), Value::String(key.to_string()));
            let enabled = existing
                .get("enabled")
                .cloned()
                .unwrap_or(Value::Bool(false));
            m.insert("enabled".into(), enabled);
        }
        Op::Create => {
            // "A cleanup policy must be created inactive ... If set to `true` when calling
            // this API, the API call will fail" (the Terraform provider's `enabled`).
            if m.get("enabled").and_then(Value::as_bool) == Some(true) {
                let key = m.get("key").and_then(Value::as_str).unwrap_or_default();
                return Err(art_bad(format!(
                    "Policy '{key}': a policy must be created disabled; enable it with the enablement API"
                )));
            }
            m.insert("enabled".into(), Value::Bool(false));
        }
    }
    let key = m.get("key").and_then(Value::as_str).unwrap_or_default();
    if !valid_key(key) {
        return Err(art_bad(format!("Invalid policy key '{key}'")));
    }
    if let Some(c) = m.get("cronExp").and_then(Value::as_str)
        && !valid_cron(c)
    {
        return Err(art_bad(format!(
            "Policy '{key}': invalid cron expression '{c}'"
        )));
    }
    if !m.get("searchCriteria").is_some_and(Value::is_object) {
        return Err(art_bad(format!(
            "Policy '{key}': searchCriteria is required"
        )));
    }
    m.entry("skipTrashcan").or_insert(Value::Bool(false));
    Ok(Value::Object(m))
}

/// `POST .../policies/{key}/enablement` with `{"enabled": bool}`: the one way to enable or
/// disable a cleanup or archive policy (the Terraform provider's `...EnablementAPIModel`,
/// `resource_artifactory_package_cleanup_policy.go`, `resource_artifactory_archive_policy.go`,
/// `resource_artifactory_release_bundles_cleanup_policy_v2.go`); 200 without a body.
async fn enablement(
    decl: &'static Declaration,
    State(s): State<Arc<Shared>>,
    _admin: Admin,
    Path(key): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let v: Value = serde_json::from_slice(&body)
        .map_err(|e| art_bad(format!("Could not parse the request body: {e}")))?;
    let Some(enabled) = v.get("enabled").and_then(Value::as_bool) else {
        return Err(art_bad("enabled (true or false) is required"));
    };
    let Some(mut policy) = s.collections.get_raw(decl.name, &key) else {
        let (status, msg) = (decl.not_found)(&key);
        return Err(ApiError::new(Flavor::Artifactory, status, msg));
    };
    let ticket = s.descriptor.begin().await;
    s.descriptor.commit(ticket, || {
        policy["enabled"] = Value::Bool(enabled);
        s.collections.put_raw(decl.name, &key, policy);
        Ok(())
    })?;
    Ok(StatusCode::OK.into_response())
}

/// A policy path's key comes from the path on create (`POST .../policies/{key}`): the
/// generic create takes it from the body, which the provider sends too.
macro_rules! policies {
    ($decl:ident, $binding:ident, $name:expr, $base:expr, $item:expr) => {
        static $decl: Declaration = Declaration {
            name: $name,
            key_field: "key",
            key_case: KeyCase::Sensitive,
            ids: Ids::Body,
            flavor: Flavor::Artifactory,
            not_found: |k| (StatusCode::NOT_FOUND, format!("Policy '{k}' was not found")),
            exists: |k| (StatusCode::CONFLICT, format!("Policy '{k}' already exists")),
            validate: validate_policy,
            view: as_stored,
        };
        static $binding: Binding = Binding {
            decl: &$decl,
            base: $base,
            item: $item,
            create_status: StatusCode::CREATED,
            create_answer: CreateAnswer::Empty,
            update_status: StatusCode::OK,
            update_answer: UpdateAnswer::Empty,
            // 200: JFrog's Artifactory Terraform provider deletes archive and cleanup
            // policies and takes nothing but 200 as success
            // (`resource_artifactory_archive_policy.go`,
            // `resource_artifactory_package_cleanup_policy.go`, Delete).
            delete_status: StatusCode::OK,
            read_access: Access::Admin,
            write_access: Access::Admin,
        };
    };
}

policies!(
    ARCHIVE_POLICIES,
    ARCHIVE,
    "archive_policies",
    "/artifactory/api/archive/v2/packages/policies",
    "/artifactory/api/archive/v2/packages/policies/{key}"
);
policies!(
    PACKAGE_CLEANUP_POLICIES,
    PACKAGE_CLEANUP,
    "package_cleanup_policies",
    "/artifactory/api/cleanup/packages/policies",
    "/artifactory/api/cleanup/packages/policies/{key}"
);
policies!(
    BUNDLE_CLEANUP_POLICIES,
    BUNDLE_CLEANUP,
    "bundle_cleanup_policies",
    "/artifactory/api/cleanup/bundles/policies",
    "/artifactory/api/cleanup/bundles/policies/{key}"
);

fn access_bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, StatusCode::BAD_REQUEST, msg)
}

fn validate_ldap_setting(_: &Ctx<'_>, body: Value, _: Op<'_>) -> Result<Value, ApiError> {
    let Value::Object(m) = body else {
        return Err(access_bad("The request body must be a JSON object"));
    };
    let key = m.get("key").and_then(Value::as_str).unwrap_or_default();
    if !valid_key(key) {
        return Err(access_bad(format!("Invalid LDAP setting key '{key}'")));
    }
    let url = m
        .get("ldap_url")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !(url.starts_with("ldap://") || url.starts_with("ldaps://")) {
        return Err(access_bad(format!(
            "LDAP setting '{key}': ldap_url must be an ldap:// or ldaps:// URL"
        )));
    }
    Ok(Value::Object(m))
}

fn validate_ldap_group(_: &Ctx<'_>, body: Value, _: Op<'_>) -> Result<Value, ApiError> {
    let Value::Object(m) = body else {
        return Err(access_bad("The request body must be a JSON object"));
    };
    let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
    if !valid_key(name) {
        return Err(access_bad(format!(
            "Invalid LDAP group setting name '{name}'"
        )));
    }
    let strategy = m
        .get("strategy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !matches!(
        strategy.to_ascii_uppercase().as_str(),
        "STATIC" | "DYNAMIC" | "HIERARCHICAL"
    ) {
        return Err(access_bad(format!(
            "LDAP group setting '{name}': strategy must be STATIC, DYNAMIC or HIERARCHICAL"
        )));
    }
    Ok(Value::Object(m))
}

/// The manager password is write-only: the read and the list answer it as null (JFrog's
/// "Get the LDAP Settings": `"search": {..., "manager_password": null}`).
fn ldap_view(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(Value::Object(s)) = v.get_mut("search") {
        s.insert("manager_password".into(), Value::Null);
    }
    v
}

static LDAP_SETTINGS_DECL: Declaration = Declaration {
    name: "ldap_settings",
    key_field: "key",
    key_case: KeyCase::Sensitive,
    ids: Ids::Body,
    flavor: Flavor::Access,
    not_found: |k| {
        (
            StatusCode::NOT_FOUND,
            format!("LDAP setting '{k}' not found"),
        )
    },
    exists: |k| {
        (
            StatusCode::CONFLICT,
            format!("LDAP setting '{k}' already exists"),
        )
    },
    validate: validate_ldap_setting,
    view: ldap_view,
};

static LDAP_SETTINGS: Binding = Binding {
    decl: &LDAP_SETTINGS_DECL,
    base: "/access/api/v1/ldap/settings",
    item: "/access/api/v1/ldap/settings/{key}",
    create_status: StatusCode::CREATED,
    create_answer: CreateAnswer::Empty,
    update_status: StatusCode::OK,
    update_answer: UpdateAnswer::Empty,
    delete_status: StatusCode::NO_CONTENT,
    read_access: Access::Admin,
    write_access: Access::Admin,
};

static LDAP_GROUPS_DECL: Declaration = Declaration {
    name: "ldap_groups",
    key_field: "name",
    key_case: KeyCase::Sensitive,
    ids: Ids::Body,
    flavor: Flavor::Access,
    not_found: |k| {
        (
            StatusCode::NOT_FOUND,
            format!("LDAP group setting '{k}' not found"),
        )
    },
    exists: |k| {
        (
            StatusCode::CONFLICT,
            format!("LDAP group setting '{k}' already exists"),
        )
    },
    validate: validate_ldap_group,
    view: as_stored,
};

static LDAP_GROUPS: Binding = Binding {
    decl: &LDAP_GROUPS_DECL,
    base: "/access/api/v1/ldap/groups",
    item: "/access/api/v1/ldap/groups/{key}",
    create_status: StatusCode::CREATED,
    create_answer: CreateAnswer::Empty,
    update_status: StatusCode::OK,
    update_answer: UpdateAnswer::Empty,
    delete_status: StatusCode::NO_CONTENT,
    read_access: Access::Admin,
    write_access: Access::Admin,
};

/// This module's collections.
pub(crate) fn collections() -> [&'static Declaration; 6] {
    [
        &super::builds::BUILDS,
        &ARCHIVE_POLICIES,
        &PACKAGE_CLEANUP_POLICIES,
        &BUNDLE_CLEANUP_POLICIES,
        &LDAP_SETTINGS_DECL,
        &LDAP_GROUPS_DECL,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quartz's syntax (the CronTrigger tutorial's examples); `0 0 xoxo xoxoxo * ?` is the
    /// Terraform provider's replication acceptance tests' invalid expression.
    #[test]
    fn quartz_cron_expressions() {
        for ok in [
            "0 0 2 ? * MON-SAT *",
            "0 0 12 * * ? *",
            "0 0 2 * * ?",
            "0 15 10 ? * 6L 2002-2005",
            "0 0/5 14,18 * * ?",
            "0 15 10 L * ?",
            "0 15 10 ? * 6#3",
            "0 11 11 11 11 ?",
            "0 0 12 1/5 * ?",
        ] {
            assert!(valid_cron(ok), "{ok}");
        }
        for bad in [
            "0 0 xoxo xoxoxo * ?",
            "0 2 * *",
            "0 0 2 * * *",
            "0 0 24 * * ?",
            "60 0 2 * * ?",
            "0 0 2 ? FOO MON",
            "0 0/0 2 * * ?",
        ] {
            assert!(!valid_cron(bad), "{bad}");
        }
    }

    #[test]
    fn merge_patch_and_xml() {
        let mut d = initial();
        merge(
            &mut d,
            serde_yaml::from_str("backups: {b1: {cronExp: '0 0 2 ? * *', excludedRepositories: [a]}}\nmailServer: {host: h, port: 25, password: s}").unwrap(),
        );
        validate(&d).expect("valid");
        let mut xml = String::new();
        render("backups", &d["backups"], &mut xml);
        assert_eq!(
            xml,
            "<backups><backup><key>b1</key><cronExp>0 0 2 ? * *</cronExp><excludedRepositories><repositoryRef>a</repositoryRef></excludedRepositories></backup></backups>"
        );
        let mut xml = String::new();
        render("mailServer", &d["mailServer"], &mut xml);
        assert!(!xml.contains("password"), "{xml}");
        merge(&mut d, serde_yaml::from_str("backups: {b1: ~}").unwrap());
        assert_eq!(d["backups"], json!({}));
        merge(
            &mut d,
            serde_yaml::from_str("proxies: {p: {host: h, port: 0}}").unwrap(),
        );
        let e = validate(&d).expect_err("invalid");
        assert!(e.message.contains("Proxy 'p'"), "{}", e.message);
    }
}
