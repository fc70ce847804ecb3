//! End-to-end tests live in `tests/tests/`; this library holds their shared helpers.
