//! The JFrog services, one module per service, each contributing its routes.
//!
//! A service module exposes `routes() -> Router<Arc<Shared>>` with JFrog's paths (under
//! `/artifactory`, `/access`, `/event`, `/xray`, `/lifecycle`, `/worker`), its state in a
//! `State` type held by `crate::server::Shared`, and uses `crate::errors::ApiError` with
//! its service's error flavour. Later Kind families add modules here (xray, lifecycle, worker)
//! and one `merge` line in `routes`; object families that are plain keyed collections declare a
//! `crate::collections::Declaration` (listed in [`collections`]) and a `Binding` for their
//! routes instead of writing handlers (see `event`).

use std::sync::Arc;

use axum::Router;

use crate::server::Shared;

mod access;
pub mod artifactory;
mod event;
mod platform;
mod projects;
mod security;
mod xray;

use crate::collections::Declaration;

/// Every collection of the generic collection service (see `crate::collections`); a family adds
/// its declaration here and its `Binding`'s routes in [`routes`].
pub(crate) fn collections() -> Vec<&'static Declaration> {
    let mut all = vec![
        &event::SUBSCRIPTIONS,
        &projects::PROJECTS,
        &projects::ENVIRONMENTS,
        &projects::ROLES,
        &projects::USERS,
        &projects::GROUPS,
        &projects::SHARES,
    ];
    all.extend(platform::collections());
    all.extend(xray::collections());
    all.extend(security::collections());
    all.extend(artifactory::configuration::collections());
    all.extend([
        &artifactory::storage::ITEMS,
        &artifactory::storage::BUNDLES,
        &artifactory::storage::PROMOTIONS,
    ]);
    all
}

/// All service routes.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(artifactory::routes())
        .merge(access::routes())
        .merge(xray::routes())
        .merge(event::routes())
        .merge(projects::routes())
        .merge(platform::routes())
        .merge(security::routes())
}

/// What a fresh platform has besides its configuration (the anonymous user, ...).
pub(crate) fn seed(shared: &Shared) {
    security::seed(shared);
}
