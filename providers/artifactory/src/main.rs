//! The provider-artifactory binary.
fn main() {}
