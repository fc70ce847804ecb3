//! The build script of the four provider binaries (`build = "../common/link.rs"` in each
//! provider's manifest): they are linked as position-dependent executables on Linux.
//!
//! A position-independent executable is relocated by the dynamic loader at start: it reads
//! every entry of `.rela.dyn` (provider-artifactory: 0.9 MB, mostly the pointers of the
//! static Kind tables) and writes every page of `.data.rel.ro` (0.7 MB), which then stays
//! in the process as anonymous memory. Linked at a fixed address, both are resolved by the
//! linker: idle RSS of provider-artifactory with all 428 controllers 20.3-20.6 -> 19.3-19.4
//! MiB (README, "Benchmarks"). The code stays position-independent; only the final link
//! changes, as Go links its binaries (Crossplane's providers among them) by default.
//! glibc targets only.

fn main() {
    println!("cargo::rerun-if-changed=../common/link.rs");
    // glibc targets only: a musl target links a static PIE (`-static-pie`) by default.
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
