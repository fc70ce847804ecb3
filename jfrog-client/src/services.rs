//! Thin modules for the other JFrog services: their base paths and the health calls they
//! offer. Their entities (users, groups, permissions, webhooks, Xray policies, ...) are
//! declared in the providers' Kind families, which call them through
//! [`crate::JfrogClient::request`].

use http::Method;

use crate::client::{Idempotency, JfrogClient};
use crate::error::Error;
use crate::service::Service;

/// Access (`/access`): users, groups, permissions, tokens, projects.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    client: &'a JfrogClient,
}

/// Xray (`/xray`): policies, watches, reports, settings.
#[derive(Debug, Clone, Copy)]
pub struct Xray<'a> {
    client: &'a JfrogClient,
}

/// `GET /xray/api/v1/system/version`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct XrayVersion {
    /// The Xray version.
    pub xray_version: String,
    /// The build revision.
    #[serde(default)]
    pub xray_revision: Option<String>,
}

impl JfrogClient {
    /// The Access service.
    pub fn access(&self) -> Access<'_> {
        Access { client: self }
    }

    /// The Xray service.
    pub fn xray(&self) -> Xray<'_> {
        Xray { client: self }
    }
}

impl Access<'_> {
    /// `GET /access/api/v1/system/ping`.
    pub async fn ping(self) -> Result<(), Error> {
        self.client
            .request(
                Service::Access,
                Method::GET,
                "/api/v1/system/ping",
                Idempotency::Idempotent,
            )
            .send_empty()
            .await
    }
}

impl Xray<'_> {
    /// `GET /xray/api/v1/system/ping` (answers `{"status":"pong"}`).
    pub async fn ping(self) -> Result<(), Error> {
        self.client
            .request(
                Service::Xray,
                Method::GET,
                "/api/v1/system/ping",
                Idempotency::Idempotent,
            )
            .send_empty()
            .await
    }

    /// `GET /xray/api/v1/system/version`.
    pub async fn version(self) -> Result<XrayVersion, Error> {
        self.client
            .request(
                Service::Xray,
                Method::GET,
                "/api/v1/system/version",
                Idempotency::Idempotent,
            )
            .send_json()
            .await
    }
}
