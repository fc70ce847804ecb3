//! The Kind-family layer, shared by the four providers: a Kind is declared as data and one
//! generic adapter serves every declared Kind.
//!
//! - [`decl`]: the declaration vocabulary: fields (CRD name, wire path, type, default,
//!   required, sensitive, immutable, server-defaulted, admission rules), identifier strategy
//!   ([`decl::Id`], all five), identity and fixed body members.
//! - [`address`]: where an object is for its REST binding ([`address::Address`]: key,
//!   parents, the binding's typed detail, query), with one canonical string form.
//! - [`rest`]: the REST binding ([`rest::Paths`] as data, or a family's own [`rest::Rest`]).
//! - [`hooks`]: what a family truly owns: the rules every Kind of it keeps (identifier
//!   description, key and parameter rules), and each Kind's own behaviour (post-write calls,
//!   parameter rules, delete side effects, body adjustments).
//! - [`kind`]: a declaration bound to its behaviour ([`kind::Kind`], what a family's table
//!   lists, and [`kind::BoundKind`] once composed).
//! - [`schema`], [`wire`], [`diff`]: the `forProvider`/`atProvider` schemas, `forProvider` ⇄
//!   JSON, up-to-date comparison, late initialisation and write-only hashes, generic over the
//!   declared fields.
//! - [`snapshot`]: observation by list, for any family with a list call.
//! - [`adapter`]: the `ManagedKind`, `Connector` and `ExternalClient` of every declared Kind,
//!   and the client cache a provider's Kinds share.
//! - [`refs`]: cross-resource references as data (a provider's table: referring Kinds and
//!   field, referenced Kinds, the value taken).
//! - [`checks`]: the upstream validators as admission checks (OpenAPI keywords and CEL).
//! - [`examples`]: example manifests generated from the declarations.
//! - [`export`]: manifests that adopt a live platform's objects, from the list calls.
//! - [`preview`]: what applying manifests would do to JFrog, with no write.
//!
//! The generic family test suite is a crate of its own, `provider-family-suite`
//! (`providers/family-suite`), which the providers name only as a dev-dependency.
//!
//! # Layers
//!
//! Each module uses only modules listed before it here, so each can be read and changed
//! knowing only those: `decl`, `describe`; `wire`, `diff`, `schema`, `refs`, `checks`,
//! `examples` (declarations as data); `address`, `rest`, `snapshot`, `hooks` (behaviour);
//! `kind` (a declaration bound to its behaviour); `adapter`; `preview`, `export`, `seed`.
//! `cargo test -p xtask modules` fails, naming the circle, when an import would close one.
//!
//! # Field semantics
//!
//! Each field is one of: set by the user (sent and compared); unset with a provider default
//! (the default is sent and compared, so removing a field resets it in JFrog, as Terraform
//! does); unset without a default (sent empty on update, compared against empty); unset and
//! server-defaulted (`late_init`: not sent, not compared, late-initialised from JFrog);
//! unset and unmanaged (`ignore_unset`); a constant (always sent, never a parameter).
//! Adopting an existing object therefore resets fields the manifest leaves unset to the
//! provider defaults; copy `atProvider` into the manifest to keep them (or observe first
//! with `managementPolicies: ["Observe"]`), or let [`export`] write manifests that hold
//! exactly the values that differ from those defaults.
//!
//! # Deviations
//!
//! - Secret values inside list elements (`customHttpHeaders[].valueSecretRef`,
//!   `handler[].secretSecretRef`) are declared to the runtime for the first five elements.
//! - Write-only values are compared by a salted SHA-256 hash (salt: MR UID) stored in an
//!   annotation after Create and in `atProvider.appliedWriteOnlyHashes` after Update; a hash
//!   of a weak password can be brute-forced by someone who can read the MR.
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod adapter;
pub mod address;
pub mod checks;
pub mod decl;
pub mod describe;
pub mod diff;
pub mod examples;
pub mod export;
pub mod hooks;
pub mod kind;
pub mod preview;
pub mod refs;
pub mod rest;
pub mod schema;
pub mod seed;
pub mod snapshot;
pub mod wire;

pub use adapter::{
    ClientCache, FamilyClient, FamilyConnector, FamilyKind, compose, compose_checked,
    compose_with_references, registrations,
};
pub use address::{Address, Detail};
pub use checks::{Check, KindChecks, RuleCheck};
pub use decl::{Dv, Field, Id, KindDecl, MapWire, Norm, ResolvedKind, Rule, Ty};
pub use hooks::{Described, FamilyHooks, HookCtx, Hooks, MrState, NoHooks};
pub use kind::{BoundKind, Kind};
pub use rest::{
    Ask, Call, Cx, ListCall, ListShape, Listed, Next, Page, Pages, Paths, ProviderState,
    QueryParent, ReadMany, Rest, Settings, Verb,
};
