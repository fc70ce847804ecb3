//! The provider-project binary.
fn main() {}
