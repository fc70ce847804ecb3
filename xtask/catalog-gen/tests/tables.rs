//! The checked-in declaration tables are exactly what the generator makes of the vendored
//! catalog. With `UPDATE_TABLES=1` the test rewrites them instead of failing.

use std::path::{Path, PathBuf};

/// The repository root: this crate lives in `xtask/catalog-gen`.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("xtask/catalog-gen has a repository root two levels up")
        .to_path_buf()
}

#[test]
fn checked_in_tables_match_the_catalog() {
    let root = repo_root();
    if std::env::var_os("UPDATE_TABLES").is_some_and(|v| v == "1") {
        for rel in catalog_gen::write(&root).expect("generating the tables") {
            eprintln!("wrote {}", rel.display());
        }
        return;
    }
    let problems = catalog_gen::stale(&root).expect("generating the tables");
    assert!(
        problems.is_empty(),
        "{}\nrun `cargo xtask generate` (or UPDATE_TABLES=1 cargo test -p catalog-gen)",
        problems.join("\n")
    );
}

#[test]
fn generation_is_deterministic() {
    let dir = catalog_gen::catalog_dir(&repo_root());
    let a = catalog_gen::generate(&dir).expect("generating");
    let b = catalog_gen::generate(&dir).expect("generating");
    assert_eq!(a, b);
}
