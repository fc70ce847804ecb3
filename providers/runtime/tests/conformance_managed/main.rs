//! Conformance tests of the managed reconciler: checklist sections A–F, H, I and J of
//! `docs/managed-reconciler.md` §17, one test per item (`conformance_NNN_...`).
//!
//! Each test starts its own Kubernetes API test server (random port), installs the CRDs of
//! two fake Kinds (`Widget`: name-as-identifier with references, a key secret input and
//! whole-Secret inputs; `Gadget`: server-assigned) in both scopes, and drives the real
//! reconciler with a client that has exactly the RBAC Crossplane grants a provider (§15.4).
//! The external system is a scripted, call-recording fake.
//!
//! One test binary (one link) with a module per checklist section: `harness` holds the fake
//! Kinds, the scripted external system and `Env`; `a_creation` … `i_connection_details` hold
//! the items of sections A–F, H and I (with the tests of the same topic that are not numbered
//! items); `general` holds what no section covers (panic recovery, typed parameters).
//! `j_process` and `j_shards` hold section J (shared external objects, leader election, the
//! safe-start gate, active-active shards) on the environment they share with section G,
//! `process_support`. Section G (`conformance_g_providerconfig.rs`) stays a binary of its
//! own: it installs the process's global `tracing` subscriber to check every log line, and
//! `connection_memory.rs` measures the process's resident memory.

mod harness;
#[path = "../process_support/mod.rs"]
#[expect(
    dead_code,
    reason = "section G's binary uses the rest of the shared environment"
)]
mod process_support;

mod a_creation;
mod b_observe;
mod c_deletion;
mod d_policies;
mod e_conditions;
mod f_references;
mod general;
mod h_timing;
mod i_connection_details;
mod j_process;
mod j_shards;
