//! Artifactory's validation of repository writes, and the construction of the stored
//! configuration (defaults filled in) from a create body or an update merged onto the stored
//! configuration.
//!
//! Rules and where they come from:
//! - Key: JFrog's repository naming rules, after Artifactory's `RepositoryNameValidator` (not
//!   empty; at most 64 characters, 58 for remote, 63 for Docker/OCI/Helm OCI local and
//!   federated: "Repository key exceeds maximum length (64) chars."; `.`, `..`, `&`: "Invalid
//!   Repository key"; none of `/ \ : | ? * " < >`: "Illegal Repository key : '...' is not
//!   allowed"; an XML name, so no leading digit, `-` or `.` and no `+`, `,`, space...:
//!   "Repository key contains illegal character"; not one of
//!   the reserved names, not starting with `jfrog-system-reserved` / `jfrog-artifactory-system`,
//!   not ending with `-cache`; Docker/OCI/Helm OCI keys lower case without `_`); the reverse-
//!   proxy names `nginx`, `apache`, `direct` fail with the odd message JFrog's knowledge base
//!   documents; a key equal to an existing one ignoring case fails with "error when
//!   validating repository name: Case insensitive repository key already exists" (HTTP 400,
//!   as reported by Terraform users). Upper case in Docker keys: "Docker Repository KEY key
//!   must be in lower case"; a bad remote URL: "Remote URL '' is not valid" (both Artifactory's
//!   wording as reported in Terraform provider issues).
//! - `rclass` is required on create and cannot change on update; `packageType` defaults to
//!   `generic`, must be known (400) and offered for the class (400), and cannot change.
//! - Project: `projectKey` must be 2-32 lower-case alphanumerics and hyphens starting with a
//!   letter, and the repository key must start with `<projectKey>-` on create. An update
//!   (`POST`) does not move a repository between projects: Access's attach/detach does.
//!   `environments` default to `["DEV"]` in a project; outside one a create ignores them
//!   and an update or a detach keeps them; `projectKey: "default"` is no project (no prefix).
//! - Fields of the Kind are type-checked; enumerated values are checked; required fields
//!   (remote `url` unless the package type has a default, hex key pairs) must be non-empty;
//!   a remote URL must be an absolute http(s) URL; `proxy` must be empty with `disableProxy`;
//!   layouts must exist.
//! - Virtual: members must exist, must not be the repository itself nor lead back to it, and
//!   must have a compatible package type (generic virtuals aggregate anything; maven, gradle,
//!   ivy and sbt are mutually compatible). `defaultDeploymentRepo` that is not a local or
//!   federated member is dropped silently (the Terraform provider clears it by sending a
//!   non-existent key), and an empty one on update keeps the current value.
//! - Federated: `members` are `{url, enabled}` objects with absolute URLs; the repository's own
//!   URL (under the custom base URL when one is set) is added as a member when missing, as
//!   Artifactory does. An update answers the members it adds first, then the ones the
//!   repository had, in their previous order (JFrog's Terraform provider's
//!   `resource_artifactory_federated_repository_test.go`: `[self]` updated to
//!   `[self, other]` reads back `[other, self]`).
//! - Docker, OCI and Helm OCI local and federated repositories: `maxUniqueTags` at least 0
//!   (0 = no limit); `dockerTagRetention` at least 1 for OCI and Helm OCI and at least 0 for
//!   Docker (the Terraform provider's validators: `int64validator.AtLeast` in its local OCI,
//!   Helm OCI and Docker V2 resources).
//! - `externalDependenciesPatterns` are stored as sent whether `externalDependenciesEnabled`
//!   is true or not: JFrog's Terraform provider's `TestAccRemoteHelmRepositoryDepFalse`
//!   (`resource_artifactory_remote_helm_repository_test.go`) creates a remote Helm repository
//!   with the flag false and `["**github.com**"]` and reads both back, and its
//!   `aieditorextensions` resource (PR #1450) sends them on every write because Artifactory
//!   stores them either way.
//! - An empty `repoLayoutRef` means the package type's default layout.
//! - Members the class and package type do not have are dropped, neither validated nor
//!   answered (`keep_typed`).

use serde_json::{Map, Value};

use super::spec::{self, ENUMS, RClass, Resolved, is_container_type};
use super::store::{Repo, Store};
use crate::errors::ApiError;

const ILLEGAL_KEY_CHARS: &[char] = &['/', '\\', ':', '|', '?', '*', '"', '<', '>'];

const RESERVED_KEYS: &[&str] = &[
    "jfrog-usage-logs",
    "jfrog-billing-logs",
    "jfrog-logs",
    "artifactory-build-info",
    "artifactory-pipe-info",
    "auto-trashcan",
    "jfrog-support-bundle",
    "_intransit",
    "artifactory-edge-uploads",
    "release-bundles",
];

const RESERVED_PREFIXES: &[&str] = &["jfrog-system-reserved", "jfrog-artifactory-system"];

const PROXY_NAMES: &[&str] = &["nginx", "apache", "direct"];

/// The message for a key that exists ignoring case.
/// Artifactory's answer to a key that exists ignoring case (and, oddly, to the reserved
/// reverse-proxy names).
pub(crate) const KEY_EXISTS: &str =
    "error when validating repository name: Case insensitive repository key already exists";

/// Whether a project key is well formed.
pub(crate) fn valid_project_key(k: &str) -> bool {
    let bytes = k.as_bytes();
    (2..=32).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

fn valid_environment(e: &str) -> bool {
    !e.is_empty()
        && e.len() <= 32
        && e.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `c` may start an XML 1.0 name (fifth edition `NameStartChar`). Artifactory keeps
/// repositories in an XML descriptor and refuses keys that are not XML names (jdom's
/// `Verifier.checkXMLName` in its `RepositoryNameValidator`); `:` is refused earlier.
fn xml_name_start(c: char) -> bool {
    matches!(c,
        'A'..='Z' | 'a'..='z' | '_' | ':'
        | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}' | '\u{F8}'..='\u{2FF}'
        | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
        | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}'
        | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// Whether `c` may follow the first character of an XML 1.0 name (`NameChar`).
fn xml_name_char(c: char) -> bool {
    xml_name_start(c)
        || matches!(c,
            '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// The first character that makes `key` not an XML name.
fn first_non_xml_name_char(key: &str) -> Option<char> {
    let mut chars = key.chars();
    match chars.next() {
        Some(c) if !xml_name_start(c) => Some(c),
        _ => chars.find(|c| !xml_name_char(*c)),
    }
}

/// JFrog's repository key rules for a new repository, in the order of Artifactory's
/// `RepositoryNameValidator`: empty, length, reserved names, `.`/`..`/`&`, the forbidden
/// characters, then "an XML name" (so `IHave++special,Chars`, `1st-local` or `a b` fail with
/// "Repository key contains illegal character"; the offending character is appended, a
/// deviation for clarity). The Terraform provider's own check (no leading digit; none of space
/// and ``!@#$%^&*()+={}[]:;<>,/?~`|\``) refuses nothing that is an XML name.
pub(crate) fn validate_key(key: &str, rclass: RClass, package_type: &str) -> Result<(), ApiError> {
    if key.trim().is_empty() {
        return Err(ApiError::bad_request("Repository key cannot be empty"));
    }
    let max = rclass.max_key_len(package_type);
    if key.chars().count() > max {
        // Artifactory's wording.
        return Err(ApiError::bad_request(format!(
            "Repository key exceeds maximum length ({max}) chars."
        )));
    }
    if matches!(key, "." | ".." | "&") {
        return Err(ApiError::bad_request("Invalid Repository key"));
    }
    if key.chars().any(|c| ILLEGAL_KEY_CHARS.contains(&c)) {
        // Artifactory's wording.
        return Err(ApiError::bad_request(
            "Illegal Repository key : '/,\\,:,|,?,<,>,*,\"' is not allowed",
        ));
    }
    if let Some(c) = first_non_xml_name_char(key) {
        return Err(ApiError::bad_request(format!(
            "Repository key contains illegal character: '{}'",
            c.escape_default()
        )));
    }
    let lower = key.to_lowercase();
    if PROXY_NAMES.contains(&lower.as_str()) {
        return Err(ApiError::bad_request(KEY_EXISTS));
    }
    if RESERVED_KEYS.contains(&lower.as_str()) {
        return Err(ApiError::bad_request(format!(
            "Repository key '{key}' is a reserved name"
        )));
    }
    if let Some(p) = RESERVED_PREFIXES.iter().find(|p| lower.starts_with(*p)) {
        return Err(ApiError::bad_request(format!(
            "Repository key cannot start with '{p}'"
        )));
    }
    if lower.ends_with("-cache") {
        return Err(ApiError::bad_request(
            "Repository key cannot end with '-cache'",
        ));
    }
    if is_container_type(package_type) {
        let kind = match package_type {
            "docker" => "Docker",
            "oci" => "OCI",
            _ => "Helm OCI",
        };
        // Artifactory's wording for upper case; the underscore message is a paraphrase.
        if key.chars().any(char::is_uppercase) {
            return Err(ApiError::bad_request(format!(
                "{kind} Repository {key} key must be in lower case"
            )));
        }
        if key.contains('_') {
            return Err(ApiError::bad_request(format!(
                "{kind} Repository {key} key cannot contain '_'"
            )));
        }
    }
    Ok(())
}

fn as_object(body: Value) -> Result<Map<String, Value>, ApiError> {
    match body {
        Value::Object(m) => Ok(m),
        _ => Err(ApiError::bad_request(
            "Repository configuration must be a JSON object",
        )),
    }
}

fn check_body_key(key: &str, body: &Map<String, Value>) -> Result<(), ApiError> {
    match body.get("key") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(k)) if k == key => Ok(()),
        Some(other) => Err(ApiError::bad_request(format!(
            "Repository key in the request body ({other}) does not match the key in the URL ('{key}')"
        ))),
    }
}

fn resolve(
    rclass: RClass,
    package_type: &str,
    body: &Map<String, Value>,
) -> Result<&'static Resolved, ApiError> {
    if !spec::known_package_type(package_type) {
        return Err(ApiError::bad_request(format!(
            "Unsupported package type '{package_type}'"
        )));
    }
    spec::resolve(rclass, package_type, body).ok_or_else(|| {
        ApiError::bad_request(format!(
            "Package type '{package_type}' is not supported for {} repositories",
            rclass.as_str()
        ))
    })
}

fn str_field<'a>(m: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    m.get(name).and_then(Value::as_str)
}

/// Merges `patch` into `target`: objects recursively, `null` removes (the default returns).
fn deep_merge(target: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (k, v) in patch {
        match v {
            Value::Null => {
                target.remove(&k);
            }
            Value::Object(p) => match target.get_mut(&k) {
                Some(Value::Object(t)) => deep_merge(t, p),
                _ => {
                    target.insert(k, Value::Object(p));
                }
            },
            v => {
                target.insert(k, v);
            }
        }
    }
}

/// Fills in defaults under existing values (objects recursively).
fn fill_defaults(target: &mut Map<String, Value>, defaults: &Map<String, Value>) {
    for (k, d) in defaults {
        match (target.get_mut(k), d) {
            (None, _) => {
                target.insert(k.clone(), d.clone());
            }
            (Some(Value::Object(t)), Value::Object(dm)) => fill_defaults(t, dm),
            _ => {}
        }
    }
}

/// Builds the stored configuration of a new repository.
pub(crate) fn create(
    store: &Store,
    key: &str,
    body: Value,
    base_url: &str,
) -> Result<Repo, ApiError> {
    let body = as_object(body)?;
    check_body_key(key, &body)?;
    let rclass = match body.get("rclass") {
        Some(Value::String(s)) => RClass::parse(s),
        _ => None,
    }
    .ok_or_else(|| {
        ApiError::bad_request("Repository rclass is missing or invalid: expected one of local, remote, virtual, federated")
    })?;
    let package_type = match body.get("packageType") {
        None | Some(Value::Null) => "generic".to_owned(),
        Some(Value::String(s)) => s.to_ascii_lowercase(),
        Some(_) => return Err(ApiError::bad_request("packageType must be a string")),
    };
    validate_key(key, rclass, &package_type)?;
    if store.existing_ci(key).is_some() {
        return Err(ApiError::bad_request(KEY_EXISTS));
    }
    let resolved = resolve(rclass, &package_type, &body)?;
    let project = str_field(&body, "projectKey").unwrap_or("").to_owned();
    // `default` is the default project, i.e. none: no key prefix (JFrog's Terraform provider
    // sent `project_key = "default"` for repositories outside a project, commit 108e2b6c,
    // and its state upgrade `ResourceUpgradeProjectKey` maps it back to "").
    if !project.is_empty() && project != "default" {
        if !valid_project_key(&project) {
            return Err(ApiError::bad_request(format!(
                "Invalid project key '{project}': must be 2 - 32 lowercase alphanumeric and hyphen characters, starting with a letter"
            )));
        }
        if !key.starts_with(&format!("{project}-")) {
            return Err(ApiError::bad_request(format!(
                "Repository key '{key}' must start with the project key prefix '{project}-'"
            )));
        }
    }
    let mut config = resolved.defaults.clone();
    let mut body = body;
    if project.is_empty() || project == "default" {
        // A create outside a project ignores environments; an update keeps them.
        body.remove("environments");
    }
    if str_field(&body, "defaultDeploymentRepo") == Some("") {
        body.remove("defaultDeploymentRepo");
    }
    deep_merge(&mut config, body);
    keep_typed(resolved, &mut config);
    // `null` members mean "the default".
    fill_defaults(&mut config, &resolved.defaults);
    finish(store, key, resolved, &package_type, config, base_url)
}

/// Builds the stored configuration after an update (partial: only members present change).
pub(crate) fn update(
    store: &Store,
    key: &str,
    body: Value,
    existing: &Repo,
    base_url: &str,
) -> Result<Repo, ApiError> {
    let mut body = as_object(body)?;
    check_body_key(key, &body)?;
    if let Some(v) = body.get("rclass").filter(|v| !v.is_null()) {
        let same = v.as_str().and_then(RClass::parse) == Some(existing.rclass);
        if !same {
            return Err(ApiError::bad_request(format!(
                "Repository rclass cannot be changed (repository '{key}' is {})",
                existing.rclass.as_str()
            )));
        }
    }
    if let Some(v) = body.get("packageType").filter(|v| !v.is_null()) {
        let same = v.as_str().map(str::to_ascii_lowercase).as_deref()
            == Some(existing.package_type.as_str());
        if !same {
            // Artifactory's own wording.
            return Err(ApiError::bad_request(
                "Changing a repository's type once it's set is not supported",
            ));
        }
    }
    // The project assignment changes through Access (attach/detach), not through an update.
    body.remove("projectKey");
    if str_field(&body, "defaultDeploymentRepo") == Some("") {
        body.remove("defaultDeploymentRepo");
    }
    if let (Some(Value::Array(sent)), Some(Value::Array(had))) =
        (body.get_mut("members"), existing.config.get("members"))
    {
        updated_members_order(sent, had);
    }
    let mut config = existing.config.clone();
    deep_merge(&mut config, body);
    let resolved = resolve(existing.rclass, &existing.package_type, &config)?;
    keep_typed(resolved, &mut config);
    fill_defaults(&mut config, &resolved.defaults);
    finish(
        store,
        key,
        resolved,
        &existing.package_type,
        config,
        base_url,
    )
}

fn finish(
    store: &Store,
    key: &str,
    resolved: &'static Resolved,
    package_type: &str,
    mut config: Map<String, Value>,
    base_url: &str,
) -> Result<Repo, ApiError> {
    let rclass = resolved.spec.rclass;
    config.remove("key");
    config.remove("rclass");
    config.remove("packageType");
    // Types of the Kind's fields.
    for (name, value) in &config {
        if let Some(f) = resolved.fields.get(name.as_str())
            && !f.ty.accepts(value)
        {
            return Err(ApiError::bad_request(format!(
                "Invalid value for '{name}': expected {}",
                f.ty.describe()
            )));
        }
    }
    for (name, allowed) in ENUMS {
        if let Some(v) = str_field(&config, name)
            && !allowed.contains(&v)
        {
            return Err(ApiError::bad_request(format!(
                "Invalid value '{v}' for '{name}': expected one of {}",
                allowed.join(", ")
            )));
        }
    }
    for f in resolved.fields.values() {
        if !f.required || f.wire == "members" {
            continue;
        }
        let missing = match config.get(f.wire) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if missing && rclass == RClass::Remote && f.wire == "url" {
            // Artifactory's wording for a missing or empty remote URL.
            return Err(ApiError::bad_request("Remote URL '' is not valid"));
        }
        if missing {
            return Err(ApiError::bad_request(format!(
                "'{}' is required for {} {package_type} repositories",
                f.wire,
                rclass.as_str()
            )));
        }
    }
    // An empty layout means the package type's default layout.
    if str_field(&config, "repoLayoutRef") == Some("")
        && let Some(d) = resolved.defaults.get("repoLayoutRef")
    {
        config.insert("repoLayoutRef".into(), d.clone());
    }
    for layout_field in ["repoLayoutRef", "remoteRepoLayoutRef"] {
        if let Some(l) = str_field(&config, layout_field)
            && !l.is_empty()
            && !store.layouts.contains(l)
        {
            return Err(ApiError::bad_request(format!(
                "Repository layout '{l}' does not exist"
            )));
        }
    }
    if config.get("disableProxy").and_then(Value::as_bool) == Some(true)
        && str_field(&config, "proxy").is_some_and(|p| !p.is_empty())
    {
        return Err(ApiError::bad_request(
            "A proxy cannot be set when disableProxy is true",
        ));
    }
    container_tags(rclass, package_type, &config)?;
    project_environments(&mut config)?;
    if str_field(&config, "password") == Some("") {
        config.remove("password");
    }
    match rclass {
        RClass::Remote => remote(&config)?,
        RClass::Virtual => virtual_members(store, key, package_type, &mut config)?,
        RClass::Federated => federated_members(key, base_url, &mut config)?,
        RClass::Local => {}
    }
    let mut out = Map::with_capacity(config.len() + 3);
    out.insert("key".into(), Value::String(key.to_owned()));
    out.insert("packageType".into(), Value::String(package_type.to_owned()));
    out.extend(config);
    out.insert("rclass".into(), Value::String(rclass.as_str().to_owned()));
    Ok(Repo {
        rclass,
        package_type: package_type.to_owned(),
        config: out,
    })
}

/// Artifactory keeps only the typed configuration of the repository's class and package
/// type: a member the type does not have (a misspelling, or `terraformType` and
/// `externalDependenciesPatterns` as clients such as pyartifactory send them on every
/// package type) is dropped, neither validated nor echoed back.
fn keep_typed(resolved: &Resolved, config: &mut Map<String, Value>) {
    config.retain(|k, _| {
        matches!(k.as_str(), "key" | "rclass" | "packageType")
            || resolved.fields.contains_key(k.as_str())
    });
}

/// Tag limits of Docker, OCI and Helm OCI local and federated repositories.
fn container_tags(
    rclass: RClass,
    package_type: &str,
    config: &Map<String, Value>,
) -> Result<(), ApiError> {
    if !is_container_type(package_type) || !matches!(rclass, RClass::Local | RClass::Federated) {
        return Ok(());
    }
    let int = |name: &str| config.get(name).and_then(Value::as_i64);
    if let Some(n) = int("maxUniqueTags")
        && n < 0
    {
        return Err(ApiError::bad_request(format!(
            "Invalid value {n} for 'maxUniqueTags': must be 0 (no limit) or more"
        )));
    }
    let min_retention = if package_type == "docker" { 0 } else { 1 };
    if let Some(n) = int("dockerTagRetention")
        && n < min_retention
    {
        return Err(ApiError::bad_request(format!(
            "Invalid value {n} for 'dockerTagRetention': must be at least {min_retention}"
        )));
    }
    Ok(())
}

fn project_environments(config: &mut Map<String, Value>) -> Result<(), ApiError> {
    let project = str_field(config, "projectKey").unwrap_or("").to_owned();
    let envs: Vec<String> = match config.get("environments") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    if let Some(bad) = envs.iter().find(|e| !valid_environment(e)) {
        return Err(ApiError::bad_request(format!(
            "Invalid project environment '{bad}'"
        )));
    }
    if project.is_empty() || project == "default" {
        // Outside a project the environments are kept as sent (JFrog's Terraform provider's
        // `TestAccRepository_unassign_project_key_gh_329`, `repository_test.go`: after the
        // project is removed, `project_environments = ["DEV"]` reads back unchanged).
        config.remove("projectKey");
        config.insert("environments".into(), Value::from(envs));
        return Ok(());
    }
    let envs = if envs.is_empty() {
        vec!["DEV".to_owned()]
    } else {
        envs
    };
    config.insert("environments".into(), Value::from(envs));
    Ok(())
}

fn remote(config: &Map<String, Value>) -> Result<(), ApiError> {
    let Some(u) = str_field(config, "url") else {
        return Ok(());
    };
    let ok = url::Url::parse(u)
        .is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some());
    if !ok {
        return Err(ApiError::bad_request(format!(
            "Remote URL '{u}' is not valid"
        )));
    }
    Ok(())
}

fn compatible(virtual_type: &str, member_type: &str) -> bool {
    const MAVEN_FAMILY: &[&str] = &["maven", "gradle", "ivy", "sbt"];
    virtual_type == "generic"
        || virtual_type == member_type
        || (MAVEN_FAMILY.contains(&virtual_type) && MAVEN_FAMILY.contains(&member_type))
}

fn virtual_members(
    store: &Store,
    key: &str,
    package_type: &str,
    config: &mut Map<String, Value>,
) -> Result<(), ApiError> {
    let members: Vec<String> = match config.get("repositories") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    for m in &members {
        if m == key {
            return Err(ApiError::bad_request(format!(
                "Virtual repository '{key}' cannot include itself"
            )));
        }
        let Some(repo) = store.get(m) else {
            return Err(ApiError::bad_request(format!(
                "Repository '{m}' does not exist"
            )));
        };
        if !compatible(package_type, &repo.package_type) {
            return Err(ApiError::bad_request(format!(
                "Repository '{m}' of package type '{}' cannot be included in a virtual {package_type} repository",
                repo.package_type
            )));
        }
        if repo.rclass == RClass::Virtual && store.reaches(m, key) {
            return Err(ApiError::bad_request(format!(
                "Including '{m}' in '{key}' would create a cycle of virtual repositories"
            )));
        }
    }
    if let Some(d) = str_field(config, "defaultDeploymentRepo") {
        let deployable = members.iter().any(|m| m == d)
            && store
                .get(d)
                .is_some_and(|r| matches!(r.rclass, RClass::Local | RClass::Federated));
        if !deployable {
            config.remove("defaultDeploymentRepo");
        }
    }
    Ok(())
}

/// The members an update sends, reordered as Artifactory keeps them: those the repository
/// did not have first (in the order sent), then those it had, in its order.
fn updated_members_order(sent: &mut Vec<Value>, had: &[Value]) {
    let url = |m: &Value| {
        m.get("url")
            .and_then(Value::as_str)
            .map(|u| u.trim_end_matches('/').to_owned())
    };
    let before: Vec<Option<String>> = had.iter().map(url).collect();
    let (mut kept, added): (Vec<Value>, Vec<Value>) = std::mem::take(sent)
        .into_iter()
        .partition(|m| url(m).is_some() && before.contains(&url(m)));
    kept.sort_by_key(|m| before.iter().position(|b| *b == url(m)));
    sent.extend(added);
    sent.extend(kept);
}

fn federated_members(
    key: &str,
    base_url: &str,
    config: &mut Map<String, Value>,
) -> Result<(), ApiError> {
    let own = format!("{base_url}/artifactory/{key}");
    let raw = match config.remove("members") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(ApiError::bad_request(
                "Invalid value for 'members': expected a list of objects",
            ));
        }
    };
    let mut members = Vec::with_capacity(raw.len() + 1);
    for m in raw {
        let Value::Object(m) = m else {
            return Err(ApiError::bad_request(
                "Invalid value for 'members': expected a list of objects",
            ));
        };
        let Some(u) = str_field(&m, "url") else {
            return Err(ApiError::bad_request("Federated member 'url' is required"));
        };
        let ok = url::Url::parse(u)
            .is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some());
        if !ok {
            return Err(ApiError::bad_request(format!(
                "Invalid federated member URL '{u}'"
            )));
        }
        let enabled = match m.get("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ApiError::bad_request(
                    "Invalid value for 'enabled': expected a boolean",
                ));
            }
        };
        members.push(serde_json::json!({"url": u.trim_end_matches('/'), "enabled": enabled}));
    }
    if !members
        .iter()
        .any(|m| m["url"].as_str() == Some(own.as_str()))
    {
        members.insert(0, serde_json::json!({"url": own, "enabled": true}));
    }
    config.insert("members".into(), Value::Array(members));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_rules() {
        assert!(validate_key("libs-release", RClass::Local, "maven").is_ok());
        assert!(validate_key(&"a".repeat(64), RClass::Local, "generic").is_ok());
        assert!(validate_key(&"a".repeat(65), RClass::Local, "generic").is_err());
        assert!(validate_key(&"a".repeat(59), RClass::Remote, "generic").is_err());
        assert!(validate_key(&"a".repeat(64), RClass::Local, "docker").is_err());
        assert!(validate_key("a:b", RClass::Local, "generic").is_err());
        for bad in [
            "IHave++special,Chars",
            "1st-local",
            "-x",
            ".x",
            "a#b",
            "a=b",
            "a~b",
            "a(b)",
            "\u{7}x",
        ] {
            let e = validate_key(bad, RClass::Remote, "npm")
                .err()
                .map(|e| e.message);
            assert!(
                e.as_deref()
                    .is_some_and(|m| m.starts_with("Repository key contains illegal character")),
                "{bad}: {e:?}"
            );
        }
        for good in ["libs.release_2-x", "_private", "Generic_Local", "é-local"] {
            assert!(
                validate_key(good, RClass::Local, "generic").is_ok(),
                "{good}"
            );
        }
        assert_eq!(
            validate_key("..", RClass::Local, "generic")
                .err()
                .map(|e| e.message)
                .as_deref(),
            Some("Invalid Repository key")
        );
        assert!(validate_key("a b", RClass::Local, "generic").is_err());
        assert!(validate_key("Jfrog-Logs", RClass::Local, "generic").is_err());
        assert!(validate_key("x-cache", RClass::Local, "generic").is_err());
        assert!(validate_key("jfrog-system-reserved-x", RClass::Local, "generic").is_err());
        assert!(validate_key("Docker_Local", RClass::Local, "docker").is_err());
        assert!(validate_key("Generic_Local", RClass::Local, "generic").is_ok());
        let e = validate_key("NGINX", RClass::Local, "generic")
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some(
                "error when validating repository name: Case insensitive repository key already exists"
            )
        );
    }

    #[test]
    fn container_tag_limits() {
        let cfg = |v: Value| v.as_object().cloned().unwrap_or_default();
        let t = |rclass, pt, v| container_tags(rclass, pt, &cfg(v)).map_err(|e| e.message);
        assert!(
            t(
                RClass::Local,
                "oci",
                serde_json::json!({"maxUniqueTags": -1})
            )
            .is_err()
        );
        assert!(
            t(
                RClass::Local,
                "oci",
                serde_json::json!({"dockerTagRetention": 0})
            )
            .unwrap_err()
            .contains("at least 1")
        );
        assert!(
            t(
                RClass::Federated,
                "helmoci",
                serde_json::json!({"dockerTagRetention": 0})
            )
            .is_err()
        );
        assert!(
            t(
                RClass::Local,
                "docker",
                serde_json::json!({"dockerTagRetention": 0, "maxUniqueTags": 0})
            )
            .is_ok()
        );
        assert!(
            t(
                RClass::Local,
                "docker",
                serde_json::json!({"dockerTagRetention": -1})
            )
            .is_err()
        );
        assert!(
            t(
                RClass::Local,
                "generic",
                serde_json::json!({"maxUniqueTags": -1})
            )
            .is_ok()
        );
    }

    #[test]
    fn project_keys() {
        assert!(valid_project_key("ab"));
        assert!(valid_project_key("my-proj1"));
        assert!(!valid_project_key("a"));
        assert!(!valid_project_key("1ab"));
        assert!(!valid_project_key("Ab"));
        assert!(!valid_project_key(&"a".repeat(33)));
    }
}
