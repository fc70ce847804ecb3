//! The family layer's tests against the JFrog simulator, one test binary: the generic adapter
//! ([`adapter`]) and observation by list ([`snapshot`]), on the small family of [`family`].

mod adapter;
mod family;
mod snapshot;
