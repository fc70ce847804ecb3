//! The generic Crossplane managed reconciler: one code path for every Kind and both scopes.
//!
//! It follows `docs/managed-reconciler.md` rule by rule and knows nothing of JFrog.
//!
//! # How a provider uses it
//!
//! 1. Declare the Kind: a type implementing [`ManagedKind`] with its [`KindInfo`] (provider,
//!    group, Kind, version, [`IdentifierStrategy`], required parameters, reference fields,
//!    secret inputs) and its `Parameters` / `Observation` types. These may be typed structs
//!    (serde + schemars) or `serde_json::Value` with a declared JSON schema (data-driven
//!    families).
//! 2. Implement [`Connector`] (builds a client from a [`ResolvedConfig`]; cache one REST client
//!    per config) and [`ExternalClient`] (observe / create / update / delete / disconnect over
//!    the [`Managed`] view). Adapters never touch Kubernetes.
//! 3. `register(kind, connector)` gives an object-safe [`KindRegistration`]; the process calls
//!    `start(ctx, scope)` for each scope whose CRD is established, with one shared
//!    [`ControllerContext`] (client, [`ProviderConfigResolver`], poll and jitter, global rate
//!    limiter, metrics, shutdown token).
//!
//! # Contract with `providerconfig`
//!
//! [`ProviderConfigResolver`] is implemented by the `providerconfig` module: the reconciler
//! calls `track_usage(&ManagedRef)` and then `resolve(&ManagedRef)` on every reconcile that
//! reaches Connect (track before use, docs/managed-reconciler.md §9.4), then the Kind's connector.
//!
//! # Modules
//!
//! - [`kind`]: Kind declarations and names (groups per scope, plural, CRD name).
//! - [`external`]: the adapter traits and the view handed to adapters.
//! - [`config`]: the ProviderConfig resolution contract.
//! - [`registration`]: `KindRegistration`, `register`.
//! - [`context`]: `ControllerContext` and the defaults of the provider flags.
//! - [`errors`]: shared error text (the reference's fixed messages, Kubernetes error text).
//! - [`reasons`]: every event and condition reason, as named constants.
//! - [`reconciler`]: the §2 state machine on `DynamicObject`.
//! - [`controller`]: watch, event filter (§1.2), work queue with per-object back-off and the
//!   global limiter (§1.3).
//! - [`policy`], [`conditions`], [`meta`], [`events`], [`connection`], [`references`],
//!   [`metrics`], [`ratelimit`]: the rules of §6, §7, §3, §8, §10, §11, §15.5 and §1.3.
//!
//! Dependencies between these modules point one way: the leaves (`errors`, `reasons`,
//! `kind`, `conditions`, `meta`, `config`, `metrics`, `ratelimit`, `context`) import no
//! module that imports them; `reconciler` uses the leaves and the rule modules; `controller`
//! uses `reconciler`; `registration` uses `controller`.
//!
//! # Deviations
//!
//! - Operations are synchronous (docs/managed-reconciler.md §13 recommends it);
//!   `LastAsyncOperation` is set by the reconciler with Upjet's reasons and messages for Kinds that
//!   declare it.
//! - The event filter also reacts to `deletionTimestamp` appearing (see [`meta::FilterKey`]).
//! - Undecodable parameters and unreadable `...SecretRef` inputs fail Connect.
//! - Events are written inline (awaited, failures only logged) rather than from a background
//!   broadcaster; identical events are aggregated (count, lastTimestamp) and floods limited per
//!   object as client-go does, but client-go's "similar events" combining (same reason,
//!   different messages, more than 10 in 10 minutes) is not reproduced.
//! - Step 1 reads the MR from the API server, not from the watch cache: one GET per
//!   reconcile, and in exchange the state machine never starts from a stale object (the
//!   guarded create-pending write still catches a change made after the read).
//! - The controller is built on kube-runtime's `watcher` with our own work queue instead of
//!   `kube::runtime::Controller` (why: see [`controller`]); the global token bucket is ours
//!   (why: see [`ratelimit`]).
//! - Besides each controller's `--max-reconcile-rate` concurrent reconciles, the process runs
//!   at most [`context::IN_FLIGHT_PER_RATE`] x `--max-reconcile-rate` reconciles at once
//!   (at least [`context::MIN_IN_FLIGHT`]); why: see there.

pub mod conditions;
pub mod config;
pub mod connection;
pub mod context;
pub mod controller;
pub mod errors;
pub mod events;
pub mod explain;
pub mod external;
pub mod kind;
pub mod meta;
pub mod metrics;
mod mr_api;
pub mod policy;
pub mod preview;
pub mod ratelimit;
pub mod reasons;
pub mod reconciler;
pub mod references;
pub mod registration;
pub mod shards;
pub mod watch;

pub use conditions::{AsyncOp, Condition};
pub use config::{
    ConfigError, Credentials, ManagedRef, ProviderConfigReference, ProviderConfigResolver,
    ResolvedConfig,
};
pub use external::{
    ConnectionDetails, Connector, ExternalClient, ExternalCreation, ExternalDelete, ExternalError,
    ExternalObservation, ExternalUpdate, Managed, ManagedKind, json_schema_for,
};
pub use kind::{
    IdentifierStrategy, KindInfo, ReferenceField, ReferenceSource, ReferenceTarget, Scope,
    SecretRefField,
};
pub use metrics::ManagedMetrics;
pub use ratelimit::GlobalRateLimiter;
pub use reconciler::{Outcome, Reconciler};
pub use registration::{
    ControllerContext, DEFAULT_POLL, DEFAULT_TIMEOUT, KindRegistration, register, register_shared,
};
