//! The provider-platform binary.
fn main() {}
