//! End-to-end tests of the `sandbox` binary, one module per command, in one test binary (each
//! file of `tests/` is a binary of its own, compiled and linked apart). Each test runs the
//! built binary in its own state directory and checks only the processes it started.

mod bench;
mod up;
