//! The Artifactory service (`/artifactory`): system calls and the repository API.

use std::sync::Arc;

use axum::Router;

use crate::server::Shared;

pub mod repositories;
mod system;

pub(crate) use repositories::State;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(system::routes())
        .merge(repositories::routes())
}
