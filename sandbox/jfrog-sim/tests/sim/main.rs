//! The simulator's HTTP tests, one module per former test file, in one test binary (each
//! file of `tests/` is a binary of its own, compiled and linked apart). `logs.rs` stays a
//! binary of its own: it captures log lines with a thread-local subscriber, and `tracing`
//! caches each call site's interest for the whole process, so a sibling test reaching a
//! call site first without a subscriber would silence it for the capture too.

#[path = "../common/mod.rs"]
mod common;

mod access_platform;
mod access_provider_answers;
mod admin;
mod aql;
mod auth;
mod bundle_versions;
mod catalog_labels;
mod collections;
mod configuration_lists;
mod descriptor;
mod faults;
mod platform_answers;
mod promotions_by_environment;
mod repositories;
mod saas;
mod scale;
mod security_lists;
mod smoke;
mod subscriptions;
mod tf_acceptance;
mod typed_members;
mod validation;
mod xray_projects;
mod xray_provider_answers;
mod yaml_repositories;
