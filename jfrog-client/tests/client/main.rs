//! The client's integration tests, one module per area, in one test binary (each file of
//! `tests/` is a binary of its own, compiled and linked apart). `tests/logs.rs` stays a
//! binary of its own: it installs the process's global `tracing` subscriber and checks every
//! line it sees, so it must be the only test in its process.

mod mock;
mod sim;
mod tls;
