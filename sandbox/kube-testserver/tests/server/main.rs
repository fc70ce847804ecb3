//! The server's integration tests, one module per area, in one test binary (each file of
//! `tests/` is a binary of its own, compiled and linked apart). `common` starts a server per
//! test, so the modules share nothing but the process's `tracing` subscriber, which each
//! installs the same way.

mod common;

mod api;
mod controller;
mod kubectl;
mod schema_integration;
