//! The provider-xray binary.
fn main() {}
