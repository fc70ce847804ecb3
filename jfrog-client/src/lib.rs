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

pub mod artifactory;
pub mod client;
pub mod config;
pub mod error;
pub mod metrics;
pub mod retry;
pub mod service;
pub mod services;

pub use client::{Idempotency, JfrogClient, Request, Response};
pub use config::{Credentials, JfrogClientBuilder, RateLimit};
pub use error::{Error, RequestContext};
pub use metrics::ClientMetrics;
pub use retry::RetryPolicy;
pub use service::{ErrorFormat, Service};
pub use services::{Access, Event, Lifecycle, Worker, Xray, XrayVersion};
