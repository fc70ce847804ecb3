//! What only repositories have, on top of the family layer's generic adapter:
//!
//! - [`REST`]: the calls, through `jfrog-client`'s repository API (create is a `PUT`, update
//!   a `POST`, or, for the adapter's writes, entries of a YAML configuration patch where the
//!   provider's bulk writes are on, see [`super::bulk`]; a delete answered 400 counts as
//!   gone only once a `GET` confirms it), and observation by list through `GET /artifactory/api/repositories/configurations`
//!   (grouped by class; keys are case-insensitive).
//! - [`HOOKS`]: the repository key rule (checked before any request), the class-based
//!   description, the federated member of the instance itself (not drift), a federated
//!   create's empty member list, the federation config sync after writes (failures are
//!   warnings: the write itself succeeded; upstream skips it on create for release-bundle
//!   federations), project attach/detach on the Access API after an update, and the
//!   federated `cleanupOnDelete` of members on this same instance.

use async_trait::async_trait;
use http::Method;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use provider_family::decl::ResolvedKind;
use provider_family::diff::DiffContext;
use provider_family::wire::{Mode, user_value};
use provider_family::{
    Address, Cx, FamilyHooks, HookCtx, Hooks, KindDecl, ListCall, ListShape, MrState, Rest,
};
use provider_runtime::managed::external::ExternalError;
use serde_json::{Map, Value};

/// The repository class (`rclass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// `local`.
    Local,
    /// `remote`.
    Remote,
    /// `virtual`.
    Virtual,
    /// `federated`.
    Federated,
}

impl Class {
    /// All classes.
    pub const ALL: [Class; 4] = [
        Class::Local,
        Class::Remote,
        Class::Virtual,
        Class::Federated,
    ];

    /// The `rclass` wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Local => "local",
            Class::Remote => "remote",
            Class::Virtual => "virtual",
            Class::Federated => "federated",
        }
    }
}

/// The class of a declaration (its `rclass` identity member; local when absent, which the
/// tables never do).
pub fn class_of(d: &KindDecl) -> Class {
    match d.identity_value("rclass") {
        Some("remote") => Class::Remote,
        Some("virtual") => Class::Virtual,
        Some("federated") => Class::Federated,
        _ => Class::Local,
    }
}

/// The repository REST calls.
pub static REST: RepositoryRest = RepositoryRest;

/// The repository family's hooks.
pub static HOOKS: RepositoryHooks = RepositoryHooks;

/// The list call every repository MR is observed through.
const LIST: ListCall = ListCall {
    service: Service::Artifactory,
    path: "/api/repositories/configurations",
    shape: ListShape::Grouped("rclass"),
    key_member: "key",
};

/// The repository calls of `jfrog-client`.
#[derive(Debug, Clone, Copy)]
pub struct RepositoryRest;

#[async_trait]
impl Rest for RepositoryRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let key = address.key();
        cx.client.artifactory().repositories().get(key).await
    }
    /// Through the bulk writes of the provider's state, if it has them
    /// ([`super::bulk::write`]); else by the repository's REST call.
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let key = address.key();
        super::bulk::write(cx.state, cx.client, key, body, true)
            .await
            .map(|()| Value::Null)
    }
    /// As [`Self::create`].
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let key = address.key();
        super::bulk::write(cx.state, cx.client, key, body, false).await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let key = address.key();
        cx.client.artifactory().repositories().delete(key).await
    }
    fn list(&self) -> Option<&ListCall> {
        Some(&LIST)
    }
    fn case_insensitive(&self) -> bool {
        true
    }
}

/// Characters a repository key may not contain (upstream's repository key validator).
const FORBIDDEN_KEY_CHARS: &str = " !@#$%^&*()+={}[]:;<>,/?~`|\\\"'";
/// The longest repository key Artifactory accepts.
const MAX_KEY_LEN: usize = 64;

/// The repository key rule: 1 to 64 characters, not starting with a digit, none of
/// [`FORBIDDEN_KEY_CHARS`] (the rule of the official provider's key validator, so a
/// manifest it refuses is refused here too, before any request).
pub fn check_repository_key(key: &str) -> Result<(), String> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(format!(
            "a repository key has 1 to {MAX_KEY_LEN} characters, this one has {}",
            key.len()
        ));
    }
    if key.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("a repository key cannot start with a digit".into());
    }
    let bad: String = key
        .chars()
        .filter(|c| FORBIDDEN_KEY_CHARS.contains(*c) || c.is_control())
        .collect();
    if !bad.is_empty() {
        return Err(format!(
            "a repository key cannot contain spaces or any of {FORBIDDEN_KEY_CHARS} (found {bad:?})"
        ));
    }
    Ok(())
}

/// The repository family's behaviour.
#[derive(Debug, Clone, Copy)]
pub struct RepositoryHooks;

impl RepositoryHooks {
    /// Ask a federated repository to push its configuration to the members, as upstream
    /// does after each write. Failures are warnings: the write itself succeeded.
    async fn federation_sync(&self, ctx: HookCtx<'_>) {
        if class_of(&ctx.kind.decl) != Class::Federated {
            return;
        }
        let r = ctx
            .client
            .request(
                Service::Artifactory,
                Method::POST,
                "/api/federation/configSync/{key}",
                Idempotency::Idempotent,
            )
            .param(ctx.key())
            .send_empty()
            .await;
        if let Err(e) = r {
            tracing::warn!(repository = %ctx.key(), error = %e, "federation config sync failed");
        }
    }

    async fn project_assignment(
        &self,
        ctx: HookCtx<'_>,
        desired: Option<&str>,
        observed: &str,
    ) -> Result<(), ExternalError> {
        let Some(desired) = desired else {
            return Ok(());
        };
        if desired == observed {
            return Ok(());
        }
        if !observed.is_empty() {
            ctx.client
                .request(
                    Service::Access,
                    Method::DELETE,
                    "/api/v1/projects/_/attach/repositories/{key}",
                    Idempotency::Idempotent,
                )
                .param(ctx.key())
                .send_empty()
                .await
                .map_err(|e| {
                    ExternalError::new(e).context("cannot detach repository from project")
                })?;
        }
        if !desired.is_empty() {
            ctx.client
                .request(
                    Service::Access,
                    Method::PUT,
                    "/api/v1/projects/_/attach/repositories/{key}/{project}",
                    Idempotency::Idempotent,
                )
                .param(ctx.key())
                .param(desired)
                .send_empty()
                .await
                .map_err(|e| {
                    ExternalError::new(e).context("cannot attach repository to project")
                })?;
        }
        Ok(())
    }
}

/// Repositories Artifactory creates and manages itself (build-info, release bundles, logs,
/// trash can, support bundles, edge uploads).
const SYSTEM_KEYS: &[&str] = &[
    "artifactory-build-info",
    "artifactory-pipe-info",
    "artifactory-edge-uploads",
    "auto-trashcan",
    "jfrog-billing-logs",
    "jfrog-logs",
    "jfrog-support-bundle",
    "jfrog-usage-logs",
    "release-bundles",
    "_intransit",
];
/// Key prefixes of Artifactory's own repositories.
const SYSTEM_PREFIXES: &[&str] = &["jfrog-system-reserved", "jfrog-artifactory-system"];
/// Package types only Artifactory creates repositories of (each project's build-info
/// repository).
const SYSTEM_PACKAGE_TYPES: &[&str] = &["buildinfo"];

/// Why a repository is one Artifactory created itself.
pub fn system_repository(key: &str, config: &Value) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    if SYSTEM_KEYS.contains(&lower.as_str()) {
        return Some("a system repository Artifactory creates itself".into());
    }
    if SYSTEM_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        return Some("a reserved system repository".into());
    }
    let pt = config
        .get("packageType")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    SYSTEM_PACKAGE_TYPES
        .contains(&pt.as_str())
        .then(|| format!("a {pt} repository Artifactory creates itself"))
}

/// Whether a virtual repository of package type `own` can aggregate a member of package
/// type `member` (JFrog's rule: the same type; a generic virtual takes any; the Maven family
/// mixes; an unknown type is left for JFrog to judge).
fn aggregates(own: &str, member: &str) -> bool {
    const JAVA: &[&str] = &["maven", "gradle", "ivy", "sbt"];
    let (own, member) = (own.to_ascii_lowercase(), member.to_ascii_lowercase());
    member.is_empty()
        || own == member
        || own == "generic"
        || (JAVA.contains(&own.as_str()) && JAVA.contains(&member.as_str()))
}

impl FamilyHooks for RepositoryHooks {
    fn id_description(&self) -> &'static str {
        "The repository key."
    }

    fn check_key(&self, key: &str) -> Result<(), String> {
        check_repository_key(key)
    }
}

#[async_trait]
impl Hooks for RepositoryHooks {
    fn platform_owned(&self, key: &str, object: &Value) -> Option<String> {
        system_repository(key, object)
    }

    fn description(&self, decl: &KindDecl) -> String {
        let pt = decl.identity_value("packageType").unwrap_or_default();
        match class_of(decl) {
            Class::Local => format!("A local {pt} repository."),
            Class::Remote => format!("A remote {pt} repository (a caching proxy of an upstream)."),
            Class::Virtual => {
                format!("A virtual {pt} repository (an aggregation of repositories).")
            }
            Class::Federated => format!("A federated {pt} repository (mirrored across instances)."),
        }
    }

    fn encode(&self, kind: &ResolvedKind, mode: Mode, body: &mut Map<String, Value>) {
        if class_of(&kind.decl) == Class::Federated
            && mode == Mode::Create
            && !body.contains_key("members")
        {
            body.insert("members".into(), Value::Array(Vec::new()));
        }
    }

    /// A virtual repository aggregates only repositories of its package type (a generic one
    /// anything; Maven, Gradle, Ivy and SBT one another): a member the repositories list
    /// shows with another type is refused before the write that JFrog would refuse.
    async fn check_against_platform(&self, ctx: HookCtx<'_>, params: &Value) -> Result<(), String> {
        if class_of(&ctx.kind.decl) != Class::Virtual {
            return Ok(());
        }
        let Some(own) = ctx.kind.decl.identity_value("packageType") else {
            return Ok(());
        };
        let members = user_value(params, "repositories")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for m in members.iter().filter_map(Value::as_str) {
            let Some(listed) = ctx.listed(m).await else {
                continue;
            };
            let theirs = listed
                .get("packageType")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !aggregates(own, theirs) {
                return Err(format!(
                    "repositories: '{m}' is a {theirs} repository; a virtual {own} repository can only aggregate {own} repositories"
                ));
            }
        }
        Ok(())
    }

    fn diff_context(&self, client: &JfrogClient, key: &str) -> DiffContext {
        DiffContext {
            own_member_prefix: format!(
                "{}/artifactory/",
                client.base_url().as_str().trim_end_matches('/')
            ),
            key: key.to_string(),
        }
    }

    async fn after_create(&self, ctx: HookCtx<'_>) {
        // Upstream skips the sync on create for release-bundle federations.
        if ctx.kind.decl.identity_value("packageType") != Some("releasebundles") {
            self.federation_sync(ctx).await;
        }
    }

    async fn after_update(&self, ctx: HookCtx<'_>, mr: MrState<'_>) -> Result<(), ExternalError> {
        self.federation_sync(ctx).await;
        if !mr.init_only_fields.iter().any(|f| f == "projectKey") {
            let desired = user_value(mr.for_provider, "projectKey").and_then(Value::as_str);
            let observed = mr
                .at_provider
                .get("projectKey")
                .and_then(Value::as_str)
                .unwrap_or("");
            self.project_assignment(ctx, desired, observed).await?;
        }
        Ok(())
    }

    async fn before_delete(&self, ctx: HookCtx<'_>, mr: MrState<'_>) {
        if class_of(&ctx.kind.decl) != Class::Federated
            || user_value(mr.for_provider, "cleanupOnDelete").and_then(Value::as_bool) != Some(true)
        {
            return;
        }
        let key = ctx.key();
        let prefix = self.diff_context(ctx.client, key).own_member_prefix;
        let repos = ctx.client.artifactory().repositories();
        let members = mr
            .at_provider
            .get("member")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for m in members {
            let url = m.get("url").and_then(Value::as_str).unwrap_or("");
            match url.strip_prefix(&prefix) {
                Some(other) if !other.is_empty() && other.trim_end_matches('/') != key => {
                    let member = other.trim_end_matches('/');
                    let _member_write = ctx.begin_write(member);
                    match repos.delete(member).await {
                        Ok(()) => {}
                        Err(e) if e.is_not_found() => {}
                        Err(e) => {
                            tracing::warn!(repository = %key, member = %url, error = %e, "cannot delete federation member")
                        }
                    }
                }
                Some(_) => {}
                None => {
                    tracing::warn!(repository = %key, member = %url, "federation member on another instance is not deleted (no member token support)")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_keys_follow_the_official_rule() {
        for ok in ["libs-release-local", "A_b.c-1", "docker-remote"] {
            assert!(check_repository_key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "IHave++special,Chars",
            "has space",
            "",
            "1starts-with-digit",
            "a/b",
        ] {
            assert!(check_repository_key(bad).is_err(), "{bad}");
        }
        assert!(check_repository_key(&"k".repeat(65)).is_err());
        assert!(check_repository_key(&"k".repeat(64)).is_ok());
    }
}
