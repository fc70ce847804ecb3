//! Artifactory (`/artifactory`): system calls a ProviderConfig check needs, and the
//! repository API ([`repositories`]). Replication, bulk repository writes (YAML),
//! system configuration, artifacts and security are in provider-artifactory's Kind
//! families, which call them through [`crate::JfrogClient::request`].

pub mod repositories;

use http::Method;
use serde::{Deserialize, Serialize};

use crate::client::{Idempotency, JfrogClient};
use crate::error::Error;
use crate::service::Service;

pub use repositories::{
    ListFilter, Repositories, RepositoryClass, RepositoryConfigurations, RepositorySummary,
};

/// `GET /artifactory/api/system/version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// The Artifactory version (`7.104.5`).
    pub version: String,
    /// The build revision.
    #[serde(default)]
    pub revision: Option<String>,
    /// Installed add-ons.
    #[serde(default)]
    pub addons: Vec<String>,
    /// The license hash (not the key).
    #[serde(default)]
    pub license: Option<String>,
}

/// Artifactory calls of a client; obtained from [`JfrogClient::artifactory`].
#[derive(Debug, Clone, Copy)]
pub struct Artifactory<'a> {
    client: &'a JfrogClient,
}

impl JfrogClient {
    /// The Artifactory service.
    pub fn artifactory(&self) -> Artifactory<'_> {
        Artifactory { client: self }
    }
}

impl<'a> Artifactory<'a> {
    /// The repository API.
    pub fn repositories(self) -> Repositories<'a> {
        Repositories::new(self.client)
    }

    /// `GET /artifactory/api/system/ping`: Ok when Artifactory answers (it needs no
    /// credentials, so this checks reachability only).
    pub async fn ping(self) -> Result<(), Error> {
        self.client
            .request(
                Service::Artifactory,
                Method::GET,
                "/api/system/ping",
                Idempotency::Idempotent,
            )
            .send_empty()
            .await
    }

    /// [`Self::version`], asked once per platform: the clients that share its state
    /// ([`crate::JfrogClientBuilder::platforms`]) share the answer, callers asking
    /// at the same time wait for one request, and a failure is not kept (the next caller
    /// asks again).
    pub async fn version_once(self) -> Result<VersionInfo, Error> {
        self.client
            .platform()
            .artifactory_version
            .get_or_try_init(|| self.version())
            .await
            .cloned()
    }

    /// `GET /artifactory/api/system/version`: needs valid credentials, so it checks both
    /// reachability and authentication.
    pub async fn version(self) -> Result<VersionInfo, Error> {
        self.client
            .request(
                Service::Artifactory,
                Method::GET,
                "/api/system/version",
                Idempotency::Idempotent,
            )
            .send_json()
            .await
    }
}
