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

/// Event service (`/event`): webhook subscriptions. It has no documented health call; the
/// platform's Artifactory ping covers reachability.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    #[expect(
        dead_code,
        reason = "no call goes through it: the webhook Kinds use the family REST binding"
    )]
    client: &'a JfrogClient,
}

/// Xray (`/xray`): policies, watches, reports, settings.
#[derive(Debug, Clone, Copy)]
pub struct Xray<'a> {
    client: &'a JfrogClient,
}

/// Lifecycle (`/lifecycle`): release bundles v2 and promotions. No documented health call.
#[derive(Debug, Clone, Copy)]
pub struct Lifecycle<'a> {
    #[expect(
        dead_code,
        reason = "no call goes through it: the lifecycle Kinds use the family REST binding"
    )]
    client: &'a JfrogClient,
}

/// Workers (`/worker`).
#[derive(Debug, Clone, Copy)]
pub struct Worker<'a> {
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

    /// The Event service.
    pub fn event(&self) -> Event<'_> {
        Event { client: self }
    }

    /// The Xray service.
    pub fn xray(&self) -> Xray<'_> {
        Xray { client: self }
    }

    /// The Lifecycle service.
    pub fn lifecycle(&self) -> Lifecycle<'_> {
        Lifecycle { client: self }
    }

    /// The Worker service.
    pub fn worker(&self) -> Worker<'_> {
        Worker { client: self }
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

impl Worker<'_> {
    /// `GET /worker/api/v1/system/readiness` (no authentication needed; 503 while a
    /// dependency of the Workers service is not ready).
    pub async fn readiness(self) -> Result<(), Error> {
        self.client
            .request(
                Service::Worker,
                Method::GET,
                "/api/v1/system/readiness",
                Idempotency::Idempotent,
            )
            .send_empty()
            .await
    }
}
