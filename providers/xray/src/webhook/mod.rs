//! The webhook group: Xray's own webhooks (`/api/v1/webhooks`, keyed by name, observed by
//! one list call per poll); the password is write-only (compared by a salted hash).

#[rustfmt::skip]
pub mod tables;

use jfrog_client::Service;
use provider_family::{Call, Described, ListCall, ListShape, Paths, Verb};

use crate::common;

/// The REST bindings, one per Kind.
pub mod rest {
    use super::*;

    /// Webhooks.
    pub static WEBHOOK: Paths = Paths {
        service: Service::Xray,
        create: Call::new(Verb::Post, "/api/v1/webhooks"),
        read: Call::new(Verb::Get, "/api/v1/webhooks/{key}"),
        update: Call::new(Verb::Put, "/api/v1/webhooks/{key}"),
        delete: Call::new(Verb::Delete, "/api/v1/webhooks/{key}"),
        list: Some(ListCall {
            service: Service::Xray,
            path: "/api/v1/webhooks",
            shape: ListShape::Array,
            key_member: "name",
        }),
        case_insensitive: false,
    };
}

/// The webhook group's hooks.
pub static HOOKS: Described = Described("The webhook name.");

common::group_fns!();
