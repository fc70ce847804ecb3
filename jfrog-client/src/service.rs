//! The JFrog Platform services this client talks to, their URL prefixes and the shape of
//! their error bodies.
//!
//! One platform URL (`https://acme.jfrog.io`) serves every product under its own prefix;
//! the prefix is what routes a request to Artifactory, Access, Xray and so on. Each service
//! was written by a different team and reports errors in its own JSON shape, so the error
//! parser needs to know which one answered.

use std::fmt;

/// A JFrog Platform service, addressed under its own path prefix of the platform URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// Artifactory: repositories, replication, system configuration, artifacts, security.
    Artifactory,
    /// Access: users, groups, permissions, tokens, projects, platform authentication.
    Access,
    /// Event service: webhook subscriptions.
    Event,
    /// Xray: policies, watches, reports, settings.
    Xray,
    /// Lifecycle (release bundles v2, promotions).
    Lifecycle,
    /// Workers service.
    Worker,
    /// Catalog service (custom catalog labels, GraphQL).
    Catalog,
}

/// The JSON shape a service uses for its error bodies.
///
/// All shapes are parsed tolerantly (see [`crate::error::parse_error_message`]); the format
/// only decides which member is tried first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorFormat {
    /// Artifactory, Lifecycle, Worker: `{"errors":[{"status":400,"message":"..."}]}`.
    ArtifactoryErrors,
    /// Access, Event, Catalog: `{"errors":[{"code":"...","message":"..."}]}`, or a
    /// single `{"code":"...","message":"...","detail":"..."}` object on some Access endpoints.
    CodeMessageErrors,
    /// Xray: `{"error":"..."}`.
    XrayError,
}

impl Service {
    /// Every service, for iteration (e.g. a connectivity check).
    pub const ALL: [Service; 7] = [
        Service::Artifactory,
        Service::Access,
        Service::Event,
        Service::Xray,
        Service::Lifecycle,
        Service::Worker,
        Service::Catalog,
    ];

    /// The path prefix under the platform URL, without a trailing slash.
    pub fn base_path(self) -> &'static str {
        match self {
            Service::Artifactory => "/artifactory",
            Service::Access => "/access",
            Service::Event => "/event",
            Service::Xray => "/xray",
            Service::Lifecycle => "/lifecycle",
            Service::Worker => "/worker",
            Service::Catalog => "/catalog",
        }
    }

    /// A short lowercase name, used as the `service` label of metrics and spans.
    pub fn as_str(self) -> &'static str {
        match self {
            Service::Artifactory => "artifactory",
            Service::Access => "access",
            Service::Event => "event",
            Service::Xray => "xray",
            Service::Lifecycle => "lifecycle",
            Service::Worker => "worker",
            Service::Catalog => "catalog",
        }
    }

    /// The error body shape this service answers with.
    pub fn error_format(self) -> ErrorFormat {
        match self {
            // Lifecycle runs inside Artifactory; the Workers docs show the same shape.
            Service::Artifactory | Service::Lifecycle | Service::Worker => {
                ErrorFormat::ArtifactoryErrors
            }
            Service::Xray => ErrorFormat::XrayError,
            Service::Access | Service::Event | Service::Catalog => ErrorFormat::CodeMessageErrors,
        }
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
