//! The Artifactory service (`/artifactory`): system calls and the repository API, and the
//! `proxies` collection (no routes: the Proxy Kind writes the system configuration descriptor,
//! which is not this collection; tests seed proxies through the admin API so that webhook
//! handlers can name one).

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;

use crate::collections::{Declaration, Ids, KeyCase, accept_object, as_stored};
use crate::errors::Flavor;

use crate::server::Shared;

pub(crate) mod configuration;
pub mod repositories;
pub(crate) mod storage;
mod system;

pub(crate) use repositories::State;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(system::routes())
        .merge(repositories::routes())
        .merge(configuration::routes())
        .merge(storage::routes())
        .merge(storage::item_routes())
}

/// Artifactory's proxies (`proxy` references of remote repositories and webhook handlers).
pub(crate) static PROXIES: Declaration = Declaration {
    name: "proxies",
    key_field: "key",
    key_case: KeyCase::Sensitive,
    ids: Ids::Body,
    flavor: Flavor::Artifactory,
    not_found: |k| (StatusCode::NOT_FOUND, format!("Proxy '{k}' not found")),
    exists: |k| (StatusCode::CONFLICT, format!("Proxy '{k}' already exists")),
    validate: accept_object,
    view: as_stored,
};
