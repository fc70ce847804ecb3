//! A JFrog Platform simulator: the REST APIs behind our Kinds, failures included.
//!
//! `jfrog-sim` is a real HTTP/1.1 server on loopback that behaves like a JFrog Platform for the
//! providers' tests, end-to-end tests and benchmarks: JFrog's paths, status codes, error bodies,
//! validation messages, server-side defaults and authentication, plus the ways JFrog fails
//! (Artifactory's "Could not merge and save new descriptor" on overlapping configuration writes,
//! 429 with `Retry-After`, 5xx, latency, a write that commits but whose response is lost, and
//! optionally the read-after-write propagation delay JFrog documents for large instances).
//!
//! # Library use
//!
//! ```no_run
//! # async fn demo() -> Result<(), jfrog_sim::Error> {
//! use jfrog_sim::{Fault, SimConfig, Simulator};
//! let sim = Simulator::start(SimConfig::default()).await?;
//! let base = sim.url(); // http://127.0.0.1:PORT; services under /artifactory, /access, ...
//! let token = sim.admin_token(); // send as `Authorization: Bearer <token>`
//! sim.add_fault(Fault::rate_limit("/artifactory/api/repositories", std::time::Duration::from_secs(1), 1.0).times(1));
//! // ... drive a client against `base` ...
//! assert_eq!(sim.request_count("PUT", "/artifactory/api/repositories/{key}"), 0);
//! sim.shutdown().await;
//! # let _ = (base, token); Ok(()) }
//! ```
//!
//! The same admin functions are served over HTTP under `/__sim/` (a path no JFrog API uses), so
//! the `sandbox` command and benchmarks can drive a simulator in another process; see
//! [`admin`] and the crate README.
//!
//! # Layout
//!
//! - [`server`]: the [`Simulator`] handle, its configuration and the connection loop.
//! - [`faults`]: seeded, reproducible fault injection ([`Fault`]).
//! - `auth`, `counts`, `descriptor`, `errors`: authentication, per-route request counts,
//!   the configuration-descriptor write emulation, JFrog's error bodies.
//! - `collections`: the generic collection service (keyed stores, CRUD and list bindings,
//!   server-assigned IDs, validation hooks), reached by the admin API under
//!   `/__sim/collections`; object families declare their rules on it instead of writing a
//!   server.
//! - [`services`]: one module per JFrog API area (`artifactory`, `access`, `security`,
//!   `projects`, `event`, `xray`, and `platform`, which also holds the lifecycle and worker
//!   APIs), each registering its routes. The repository behaviour is data:
//!   `services::artifactory::repositories::spec` (classes, package types, defaults; the
//!   hand-written `rules`) and its `validate` rules.
//!
//! # Deviations from JFrog (known simplifications)
//!
//! - Validation messages whose exact wording could not be verified against a live Artifactory
//!   are plausible paraphrases (listed in the README); status codes follow JFrog's docs.
//! - Only HTTP/1.1 without TLS (loopback only).
//! - Project existence, proxies and key pairs referenced by repositories are not checked;
//!   repository layouts are checked against the layouts a
//!   fresh Artifactory ships with.
//! - Permissions are binary: an admin token may do everything, a non-admin token may read.
//! - A missing repository answers 404 by default; [`SimConfig::missing_repository_status`]
//!   = 400 reproduces the Artifactory versions that answer 400.
//! - Access project attach/detach is not a descriptor write; project members are not
//!   checked against the platform's users and groups.

pub mod admin;
mod auth;
pub mod cli;
mod collections;
mod counts;
mod descriptor;
mod errors;
pub mod faults;
mod oidc_exchange;
mod paging;
mod saas;
pub mod server;
pub mod services;
mod shape;

pub use faults::{Fault, FaultCounts, FaultId};
pub use server::{SimConfig, Simulator};

/// Errors of the simulator's library API.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// Any other I/O failure.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
