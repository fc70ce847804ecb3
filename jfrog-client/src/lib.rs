//! Native JFrog Platform REST client for the Crossplane providers.
//!
//! One [`JfrogClient`] per ProviderConfig talks to every service of one platform
//! (Artifactory, Access, Event, Xray, Lifecycle, Worker, Catalog) under its path prefix.
//! It owns what every call needs, so that service modules only describe calls:
//!
//! - credentials in [`secrecy`] types, never logged or printed ([`config`]);
//! - rustls with the ring provider, system or bundled roots plus an optional CA bundle;
//! - typed errors with `NotFound` apart from everything else, parsed from each service's
//!   error body format ([`error`]);
//! - a per-platform rate limiter, a per-platform pause on `Retry-After`, bounded jittered
//!   retries that respect each call's idempotency, and per-platform serialisation of
//!   Artifactory configuration-descriptor writes ([`client`], [`retry`]);
//! - Prometheus metrics and tracing spans labelled by path template ([`metrics`]).
//!
//! # Contracts for callers
//!
//! - Every call states its [`Idempotency`]; configuration-descriptor writes say so with
//!   [`Request::descriptor_write`].
//! - A non-idempotent call whose response was lost fails with [`Error::Indeterminate`] and
//!   is never resent: observe the object by its key before creating it again.
//! - [`Error::NotFound`] is returned only for a missing object (404, and 400 on a repository
//!   `GET`, which some Artifactory versions answer for an unknown key).
//!
//! # Deviations
//!
//! - "Per platform" means per normalised base URL among the clients built with one
//!   [`Platforms`] ([`JfrogClientBuilder::platforms`]; a provider process keeps one): they
//!   share one rate limiter, one `Retry-After` pause and one descriptor-write lock. Writers
//!   outside them are not serialised; their overlaps are absorbed by the merge-failure retry.
//! - A 429 is retried for non-idempotent calls too (the platform refused the request
//!   without processing it); other 5xx are not.
//! - Event, Lifecycle, Worker and Catalog have no service module: only their base paths
//!   ([`Service`]); the Kinds call them through [`JfrogClient::request`].
//!
//! ```no_run
//! # async fn example() -> Result<(), jfrog_client::Error> {
//! use jfrog_client::{JfrogClient, artifactory::ListFilter};
//! let client = JfrogClient::builder("https://acme.jfrog.io")
//!     .access_token("...")
//!     .build()?;
//! let version = client.artifactory().version().await?;
//! let repos = client.artifactory().repositories().list(&ListFilter::all()).await?;
//! # let _ = (version, repos); Ok(()) }
//! ```
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod artifactory;
pub mod client;
pub mod config;
pub mod error;
pub mod metrics;
pub mod oidc;
pub mod retry;
pub mod service;
pub mod services;

pub use client::{Idempotency, JfrogClient, Platforms, Request, Response};
pub use config::{Credentials, JfrogClientBuilder, RateLimit};
pub use error::{Error, RequestContext};
/// The HTTP method type of [`JfrogClient::request`].
pub use http::Method;
pub use metrics::ClientMetrics;
pub use oidc::{OidcExchangeSettings, OidcTokenSource, SubjectTokenSource};
pub use retry::RetryPolicy;
pub use service::{ErrorFormat, Service};
pub use services::{Access, Xray, XrayVersion};
