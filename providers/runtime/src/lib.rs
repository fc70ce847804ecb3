//! The Crossplane managed-resource runtime: one generic reconciler for every Kind and scope.
//!
//! It knows nothing of JFrog. Layout (each module has one owner and one job):
//!
//! - [`managed`]: the managed reconciler (the state machine of
//!   `docs/managed-reconciler.md`), the `ExternalClient` / `Connector` traits that
//!   adapters implement, Kind declarations (`KindInfo`, `KindRegistration`), conditions, events
//!   (core/v1), management policies, references, connection-details Secrets, and the
//!   kube-runtime controller wiring (work queue, poll with jitter, per-object back-off, global
//!   reconcile rate limit).
//! - [`providerconfig`]: ClusterProviderConfig / ProviderConfig / legacy ProviderConfig and
//!   usage types, credentials resolution from Secrets, usage tracking, the config controllers.
//! - [`process`]: the provider process shared by the four binaries: flags, leader election,
//!   health and metrics endpoints, the safe-start CRD gate that starts a Kind's controllers when
//!   its CRD is established.
//! - [`crd`]: CRD generation from Kind declarations (managed Kinds in both scopes, config Kinds).
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod crd;
pub mod managed;
pub mod process;
pub mod providerconfig;
