//! What a family owns beyond the generic adapter: the rules every Kind of a family keeps
//! ([`FamilyHooks`]: the identifier's description, key and parameter rules), declared once
//! per family, and each Kind's own behaviour ([`Hooks`]: post-write calls, parameter rules,
//! delete side effects, body adjustments). A table binds both to every Kind (the family's
//! `family`, the Kind's `hooks`), and the adapter always applies the family's rules before
//! the Kind's. Every hook has a default that does nothing, so a family with none declares
//! [`NoHooks`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jfrog_client::JfrogClient;
use provider_runtime::managed::external::ExternalError;
use serde_json::{Map, Value};

use crate::address::Address;
use crate::decl::{KindDecl, ResolvedKind};
use crate::diff::DiffContext;
use crate::rest::{Cx, ProviderState, Rest};
use crate::snapshot::{Lookup, Snapshot, WriteGuard};
use crate::wire::Mode;

/// What a hook may use: the client, the Kind, the object's address, and the write marks of
/// the family's snapshot (so a side write to another object of the family is not mistaken
/// for the state an older read saw).
#[derive(Debug, Clone, Copy)]
pub struct HookCtx<'a> {
    /// The JFrog client of the MR's ProviderConfig.
    pub client: &'a JfrogClient,
    /// The Kind.
    pub kind: &'a ResolvedKind,
    /// Where the object is: its identifier ([`Self::key`]), its parents and its query.
    pub address: &'a Address,
    /// The Kind's REST binding.
    pub(crate) rest: &'a dyn Rest,
    /// The provider's state, handed to the binding's read.
    pub(crate) state: &'a ProviderState,
    pub(crate) snapshot: Option<&'a Arc<Snapshot>>,
}

/// What a hook sees of the MR it runs for (the adapter's `Managed`): its parameters and its
/// last observation.
#[derive(Debug, Clone, Copy)]
pub struct MrState<'a> {
    /// `spec.forProvider`, with resolved references.
    pub for_provider: &'a Value,
    /// `status.atProvider`.
    pub at_provider: &'a Value,
    /// Top-level `forProvider` keys set only in `initProvider` (not compared, not updated).
    pub init_only_fields: &'a [String],
}

impl<'a> HookCtx<'a> {
    /// The object's identifier (its address's key).
    pub fn key(&self) -> &'a str {
        self.address.key()
    }

    /// Another object of this family (one its REST binding reads at `key`), for rules that
    /// need other objects: as the family's list shows it when the list can tell (no request
    /// in steady state), else read once; `None` when it does not exist or cannot be read
    /// (the rule is then left to JFrog).
    pub async fn listed(&self, key: &str) -> Option<Arc<Value>> {
        if let Some(s) = self.snapshot {
            match s.lookup(self.client, key, Duration::MAX).await {
                Lookup::Found(v) => return Some(v),
                Lookup::Absent => return None,
                Lookup::Unknown => {}
            }
        }
        self.rest
            .read(&Cx::new(self.client, self.state), &Address::new(key))
            .await
            .ok()
            .map(Arc::new)
    }

    /// Mark another object of the family as written by us until the guard is dropped.
    pub fn begin_write(&self, key: &str) -> Option<WriteGuard> {
        self.snapshot.map(|s| s.begin_write(key))
    }
}

/// The rules every Kind of a family keeps, declared once per family: the table binds them
/// to each Kind beside its own [`Hooks`], and the adapter applies them whatever those are.
pub trait FamilyHooks: Send + Sync + std::fmt::Debug {
    /// The description of `atProvider.id`.
    fn id_description(&self) -> &'static str {
        "The JFrog identifier."
    }

    /// Check an identifier before any request; the error names the rule broken.
    fn check_key(&self, _key: &str) -> Result<(), String> {
        Ok(())
    }

    /// Check `forProvider` before any write, for rules the CRD schema cannot express and
    /// every Kind of the family keeps (before the Kind's own, [`Hooks::check_params`]); the
    /// error names the field and the rule.
    fn check_params(&self, _kind: &ResolvedKind, _params: &Value) -> Result<(), String> {
        Ok(())
    }
}

/// A Kind's own behaviour (the family's default for Kinds without their own).
#[async_trait]
pub trait Hooks: Send + Sync + std::fmt::Debug {
    /// The CRD description of a Kind.
    fn description(&self, decl: &KindDecl) -> String {
        decl.description.to_string()
    }

    /// Where an object is, for the REST binding: the identifier by default; a Kind that lives
    /// inside another object (a project's role, a project member) adds the parent's key from
    /// its parameters (canonically `team/developer`), and a binding that needs more adds its
    /// [`crate::address::Detail`], which its own [`crate::rest::Rest`] reads back. An empty
    /// address ([`Address::unknown`]) means "not known yet" (a parent key unset).
    fn address(&self, _kind: &ResolvedKind, key: &str, _params: &Value) -> Address {
        Address::new(key)
    }

    /// [`Hooks::address`] for a Kind whose object is what the MR applied: given also the MR's
    /// last observation (`atProvider`, `Null` before the first), so that the binding also
    /// reaches what the MR applied before and its spec no longer names (catalog labels
    /// dropped from the spec are deleted only because the MR had them). `address` by default.
    fn address_observed(
        &self,
        kind: &ResolvedKind,
        key: &str,
        params: &Value,
        _at_provider: &Value,
    ) -> Address {
        self.address(kind, key, params)
    }

    /// Check `forProvider` before any write, for the Kind's rules the CRD schema cannot
    /// express (after the family's, [`FamilyHooks::check_params`]); the error names the
    /// field and the rule.
    fn check_params(&self, _kind: &ResolvedKind, _params: &Value) -> Result<(), String> {
        Ok(())
    }

    /// Rules that need the platform's other objects (see [`HookCtx::listed`]), checked
    /// before a create or an update, with no write: `Err` says which field breaks which rule.
    async fn check_against_platform(
        &self,
        _ctx: HookCtx<'_>,
        _params: &Value,
    ) -> Result<(), String> {
        Ok(())
    }

    /// The Kind's wire conversion, writes: turn a request body the generic mapping built
    /// from the declared wire names ([`crate::wire::to_wire`]) into what JFrog takes (units,
    /// spellings, maps for named lists, members JFrog needs that no field holds). With
    /// [`Hooks::decode`] this is the only place a Kind's body is converted: its REST binding
    /// sends the body as it is given.
    fn encode(&self, _kind: &ResolvedKind, _mode: Mode, _body: &mut Map<String, Value>) {}

    /// The Kind's wire conversion, reads: reshape an object as JFrog answers it, read by key
    /// or as a list entry, into the shape the declared wire names describe (the inverse of
    /// [`Hooks::encode`]); `None` keeps it as it is.
    fn decode(&self, _kind: &ResolvedKind, _body: &Value) -> Option<Value> {
        None
    }

    /// The comparison context of one object.
    fn diff_context(&self, _client: &JfrogClient, key: &str) -> DiffContext {
        DiffContext {
            key: key.to_string(),
            ..DiffContext::default()
        }
    }

    /// After a successful create. Failures here are the family's to report (the object
    /// exists, so the create succeeded).
    async fn after_create(&self, _ctx: HookCtx<'_>) {}

    /// After a successful update; an error fails the update.
    async fn after_update(&self, _ctx: HookCtx<'_>, _mr: MrState<'_>) -> Result<(), ExternalError> {
        Ok(())
    }

    /// Before the delete call (side effects such as deleting federation members).
    async fn before_delete(&self, _ctx: HookCtx<'_>, _mr: MrState<'_>) {}

    /// Whether a successful delete leaves an object a read still finds, which then counts as
    /// gone for the MR (singletons are always treated so: reset or kept, never removed).
    fn gone_after_delete(&self, _kind: &ResolvedKind) -> bool {
        false
    }

    /// The identifier JFrog assigned, from a create's answer (server-assigned Kinds).
    fn created_id(&self, _kind: &ResolvedKind, _answer: &Value) -> Option<String> {
        None
    }

    /// Why an object of a list answer is one the platform creates itself (a system
    /// repository, a built-in group): `export` skips and lists it.
    fn platform_owned(&self, _key: &str, _object: &Value) -> Option<String> {
        None
    }
    /// Whether an object of a list answer that several Kinds of the list could hold is one
    /// of `kind` (Kinds alike but for a value JFrog shows, such as a policy's `type`):
    /// `export` picks the Kinds that say yes.
    fn lists_as(&self, _kind: &ResolvedKind, _object: &Value) -> bool {
        true
    }
    /// Whether `export` writes manifests for objects of `kind` found in its list (`false`
    /// for Kinds whose objects cannot be adopted from a list, e.g. tokens whose values exist
    /// only in their create answer): such Kinds are reported as not exported.
    fn exportable(&self, _kind: &ResolvedKind) -> bool {
        true
    }
    /// The wire member of a write-only secret that is generated when the parameters leave it
    /// unset (a user's password, as the official provider generates one): the adapter sends
    /// a random value on create, publishes it in the connection Secret only (under
    /// `attribute.<terraform name>`), and compares it by hash afterwards.
    fn generated_secret(&self, _kind: &ResolvedKind, _params: &Value) -> Option<&'static str> {
        None
    }
    /// The lifetime of an object JFrog answers once and never stores (an access token whose
    /// lifetime is under Access's persistency threshold): no read or list can show it, so it
    /// is taken as existing, unchanged, for that long after its create succeeded, and only
    /// then made anew. `None` (the default): an object no read shows does not exist.
    fn unstored_lifetime(&self, _kind: &ResolvedKind, _params: &Value) -> Option<Duration> {
        None
    }

    /// Why an existing object is not available yet (a job still running), from its
    /// `atProvider`; `None`: it is available.
    fn unavailable(&self, _kind: &ResolvedKind, _at_provider: &Value) -> Option<String> {
        None
    }

    /// The identifier of the object a server-assigned create with this `body` made, found
    /// in JFrog by what the body says about it (its name, its notes): asked when a create's
    /// outcome is unknown (its answer was lost, or a previous attempt failed) so that the
    /// object is adopted rather than created twice. `Ok(None)`: no such object. `address`
    /// is the create's: no key yet (the context's key is empty), and the scope's query
    /// (`projectKey=team`) when a query field scopes the object.
    async fn find_created(
        &self,
        _ctx: HookCtx<'_>,
        _address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<Option<String>, jfrog_client::Error> {
        Ok(None)
    }

    /// For `export`, when several Kinds share a list and what tells them apart is not in
    /// the objects (a repository's replication: its repository's class, and how many
    /// targets the list shows for it): the Kind of each listed key, given every entry of
    /// the list answer (a key may appear once per target; `kind` is the list's first Kind),
    /// with the number of requests
    /// asked to decide. Objects are then read with their Kind's binding. `Ok(None)`: the
    /// generic matching.
    async fn export_kinds(
        &self,
        _client: &JfrogClient,
        _kind: &ResolvedKind,
        _entries: &[Value],
    ) -> Result<Option<(std::collections::BTreeMap<String, &'static str>, u64)>, jfrog_client::Error>
    {
        Ok(None)
    }
}

/// A family without hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl FamilyHooks for NoHooks {}

impl Hooks for NoHooks {}

/// A family whose one rule is its identifier's description, and whose Kinds without hooks of
/// their own have the default behaviour.
#[derive(Debug, Clone, Copy)]
pub struct Described(pub &'static str);

impl FamilyHooks for Described {
    fn id_description(&self) -> &'static str {
        self.0
    }
}

impl Hooks for Described {}
