//! The JFrog services, one module per service, each contributing its routes.
//!
//! A service module exposes `routes() -> Router<Arc<Shared>>` with JFrog's paths (under
//! `/artifactory`, `/access`, `/event`, `/xray`, `/lifecycle`, `/worker`), its state in a
//! `State` type held by `crate::server::Shared`, and uses `crate::errors::ApiError` with
//! its service's error flavour. Later Kind families add modules here (event, xray, lifecycle,
//! worker) and one `merge` line in `routes`.

use std::sync::Arc;

use axum::Router;

use crate::server::Shared;

mod access;
pub mod artifactory;
mod xray;

/// All service routes.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(artifactory::routes())
        .merge(access::routes())
        .merge(xray::routes())
}
