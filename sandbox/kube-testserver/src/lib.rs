//! An in-process Kubernetes API server for tests, benchmarks and the sandbox.
pub mod cli;
