//! The hooks of the Kinds whose behaviour differs from the family's ([`super::HOOKS`]): the
//! Kind's table line names them (its correction in `catalog/overrides.json`, section
//! `access.kinds`), so no hook asks which Kind it runs for.

use std::collections::BTreeMap;
use std::time::Duration;

use provider_family::wire::Mode;
use provider_family::{Hooks, ResolvedKind};
use serde_json::{Map, Value};

use super::{PERSISTENCY_THRESHOLD, crc32, replication_kinds, rest};

/// The users JFrog creates itself (in the users list).
fn platform_user(key: &str) -> Option<String> {
    matches!(key, "admin" | "anonymous" | "_internal" | "access-admin")
        .then(|| "a user JFrog creates itself".to_string())
}

/// A user without a password (and with the internal password enabled) gets a generated
/// one, as the official provider does.
fn generated_password(params: &Value) -> Option<&'static str> {
    let disabled = params
        .get("internalPasswordDisabled")
        .and_then(Value::as_bool)
        == Some(true);
    (!disabled).then_some("password")
}

/// A User: the Kind users are exported as (the password optional in the schema, so its
/// reference can wait in `initProvider` without blocking adoption), with a generated
/// password when none is given.
#[derive(Debug, Clone, Copy)]
pub struct User;

impl Hooks for User {
    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        platform_user(key)
    }

    fn generated_secret(&self, _kind: &ResolvedKind, params: &Value) -> Option<&'static str> {
        generated_password(params)
    }
}

/// A ManagedUser: never chosen for a listed user (it requires the password in
/// `forProvider`, where it would be compared and sent).
#[derive(Debug, Clone, Copy)]
pub struct ManagedUser;

impl Hooks for ManagedUser {
    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        platform_user(key)
    }

    fn lists_as(&self, _kind: &ResolvedKind, _object: &Value) -> bool {
        false
    }
}

/// An UnmanagedUser: never chosen for a listed user; a generated password when none is
/// given.
#[derive(Debug, Clone, Copy)]
pub struct UnmanagedUser;

impl Hooks for UnmanagedUser {
    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        platform_user(key)
    }

    fn lists_as(&self, _kind: &ResolvedKind, _object: &Value) -> bool {
        false
    }

    fn generated_secret(&self, _kind: &ResolvedKind, params: &Value) -> Option<&'static str> {
        generated_password(params)
    }
}

/// The AnonymousUser: JFrog's own, never exported.
#[derive(Debug, Clone, Copy)]
pub struct AnonymousUser;

impl Hooks for AnonymousUser {
    fn lists_as(&self, _kind: &ResolvedKind, _object: &Value) -> bool {
        false
    }

    fn exportable(&self, _kind: &ResolvedKind) -> bool {
        false
    }
}

/// A Group: `readers` is JFrog's own.
#[derive(Debug, Clone, Copy)]
pub struct Group;

impl Hooks for Group {
    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        (key == "readers").then(|| "the group JFrog creates itself".to_string())
    }
}

/// A PermissionTarget: its user and group actions maps on the wire; its build target's one
/// repository; the default targets are JFrog's.
#[derive(Debug, Clone, Copy)]
pub struct PermissionTarget;

impl Hooks for PermissionTarget {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::actions_to_maps(body);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        Some(rest::actions_from_maps(body))
    }

    fn platform_owned(&self, key: &str, _object: &Value) -> Option<String> {
        matches!(key, "Anything" | "Any Remote")
            .then(|| "a permission target JFrog creates itself".to_string())
    }

    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        if let Some(repos) = params
            .get("build")
            .and_then(|b| b.get(0).or(Some(b)))
            .and_then(|b| b.get("repositories"))
            .and_then(Value::as_array)
            && (repos.len() != 1 || repos[0] != "artifactory-build-info")
        {
            return Err(
                "build.repositories must be exactly [\"artifactory-build-info\"]".to_string(),
            );
        }
        Ok(())
    }
}

/// A GlobalEnvironment: DEV and PROD are every platform's.
#[derive(Debug, Clone, Copy)]
pub struct GlobalEnvironment;

impl Hooks for GlobalEnvironment {
    fn platform_owned(&self, key: &str, object: &Value) -> Option<String> {
        (matches!(key, "DEV" | "PROD") && object["name"] == key)
            .then(|| "a global environment of every JFrog Platform".to_string())
    }
}

/// A ScopedToken: server-assigned, its scopes and audiences space-separated on the wire,
/// never exported (its values exist only in its create answer), and a short-lived one is
/// never stored.
#[derive(Debug, Clone, Copy)]
pub struct ScopedToken;

impl Hooks for ScopedToken {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::token_to_jfrog(body);
    }

    fn exportable(&self, _kind: &ResolvedKind) -> bool {
        false
    }

    /// A ScopedToken whose `expiresIn` is under Access's persistency threshold is answered
    /// once and never stored (JFrog's "Persistency Threshold"; the Terraform provider's
    /// `expires_in` documentation), so no list shows it: it stands until it expires, then a
    /// new one is issued into the connection Secret. Never two at once.
    fn unstored_lifetime(&self, _kind: &ResolvedKind, params: &Value) -> Option<Duration> {
        let secs = params.get("expiresIn").and_then(Value::as_u64)?;
        (secs > 0 && secs < PERSISTENCY_THRESHOLD.as_secs()).then(|| Duration::from_secs(secs))
    }

    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        answer
            .get("token_id")
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// An APIKey: its identifier is the CRC-32 of the key, as Terraform computes it.
#[derive(Debug, Clone, Copy)]
pub struct ApiKey;

impl Hooks for ApiKey {
    fn created_id(&self, _kind: &ResolvedKind, answer: &Value) -> Option<String> {
        answer
            .get("apiKey")
            .and_then(Value::as_str)
            .map(|k| crc32(k).to_string())
    }
}

/// A replication: each push target carries the repository key and cron expression on the
/// wire, and is answered with `proxyRef` for `proxy`; the replications list shows one entry
/// per target, not the Kind.
#[derive(Debug, Clone, Copy)]
pub struct Replication;

#[async_trait::async_trait]
impl Hooks for Replication {
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, body: &mut Map<String, Value>) {
        rest::targets_to_jfrog(body);
    }

    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        rest::replication_from_jfrog(body)
    }

    /// The Kind comes from the repository's class (`GET /artifactory/api/repositories`, one
    /// request): a remote repository's (pull) replication is a RemoteRepositoryReplication,
    /// a local repository's with one target a LocalRepositorySingleReplication, with several
    /// a LocalRepositoryMultiReplication. (PullReplication and PushReplication are the
    /// retired names of the same calls: never chosen.)
    async fn export_kinds(
        &self,
        client: &jfrog_client::JfrogClient,
        _kind: &ResolvedKind,
        entries: &[Value],
    ) -> Result<Option<(BTreeMap<String, &'static str>, u64)>, jfrog_client::Error> {
        let repos = provider_family::rest::request(
            client,
            jfrog_client::Service::Artifactory,
            provider_family::Verb::Get,
            "/api/repositories",
            jfrog_client::Idempotency::Idempotent,
            &[],
        )
        .send_value()
        .await?;
        let class: BTreeMap<&str, &str> = repos
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| Some((r["key"].as_str()?, r["type"].as_str()?)))
            .collect();
        Ok(Some((replication_kinds(&class, entries), 1)))
    }
}
