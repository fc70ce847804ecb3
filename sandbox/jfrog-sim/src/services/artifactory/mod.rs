//! The Artifactory service (`/artifactory`): system calls, the repository API, the system
//! configuration descriptor (whose `proxies` section is the platform's one proxy store:
//! webhook handlers name those proxies) and artifacts.

use std::sync::Arc;

use crate::server::Shared;
use axum::Router;

pub(crate) mod aql;
pub(crate) mod builds;
pub(crate) mod configuration;
pub mod repositories;
pub(crate) mod storage;
pub(crate) mod system;

pub(crate) use repositories::State;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(system::routes())
        .merge(repositories::routes())
        .merge(configuration::routes())
        .merge(storage::routes())
        .merge(storage::item_routes())
        .merge(builds::routes())
}
