//! `cargo xtask lines`: the hand-written cost of each Kind family, so a change that moves
//! per-Kind code into declarations can say what it saved.
//!
//! A family is a folder `providers/<provider>/src/<family>/` with a generated `tables.rs`
//! (the Kind declarations `catalog-gen` writes from `catalog/`). Its Kinds are the entries of
//! that table. Its hand-written lines are those of every other `.rs` file in the folder,
//! leaving out:
//! - generated files (`tables.rs`);
//! - tests: files named `tests.rs` or `*_tests.rs`, and items under `#[cfg(test)]`;
//! - blank lines and comment lines (`//`, `///`, `//!`), counted apart as documentation.
//!
//! A provider's files outside its family folders (its `lib.rs`, shared helpers such as
//! Xray's `common.rs`, reference tables) serve all its families and are not counted here.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// One family's counts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Family {
    /// `providers/<provider>/src/<family>`, relative to the repository root.
    pub dir: String,
    /// Kinds declared in its `tables.rs`.
    pub kinds: usize,
    /// Hand-written code lines (not blank, not comment, not test).
    pub code: usize,
    /// Comment lines of the same files.
    pub comments: usize,
}

/// Counts of one Rust source text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Code lines outside `#[cfg(test)]` items.
    pub code: usize,
    /// Comment lines outside `#[cfg(test)]` items.
    pub comments: usize,
}

/// Count `source`'s code and comment lines, leaving out blank lines and every item under a
/// `#[cfg(test)]` attribute (a `mod tests { ... }` block, a test-only function or `use`).
pub fn count(source: &str) -> Counts {
    let mut out = Counts::default();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            skip_item(&mut lines);
            continue;
        }
        if t.starts_with("//") {
            out.comments += 1;
        } else {
            out.code += 1;
        }
    }
    out
}

/// Skip the item after a `#[cfg(test)]` attribute: up to the `;` ending a one-line item, or
/// to the brace closing its block (braces inside strings and comments are not told apart,
/// which test modules here do not need).
fn skip_item<'a>(lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) {
    let mut depth: i64 = 0;
    let mut opened = false;
    for line in lines.by_ref() {
        let code = line.split("//").next().unwrap_or_default();
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        let t = code.trim();
        if (opened && depth <= 0) || (!opened && t.ends_with(';')) {
            return;
        }
    }
}

/// Kinds declared in a generated table: one `kind: "..."` member (a `KindDecl` literal) or
/// one `k!(...)` entry each.
pub fn kinds_in(tables: &str) -> usize {
    tables
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("kind: \"") || l.starts_with("k!("))
        .count()
}

fn is_test_file(name: &str) -> bool {
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// Every family folder under `root/providers`, counted.
pub fn families(root: &Path) -> anyhow::Result<Vec<Family>> {
    let mut out = Vec::new();
    let mut providers: Vec<PathBuf> = std::fs::read_dir(root.join("providers"))?
        .filter_map(Result::ok)
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    providers.sort();
    for src in providers {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&src)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("tables.rs").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let tables = std::fs::read_to_string(dir.join("tables.rs"))
                .with_context(|| format!("reading {}", dir.display()))?;
            let mut family = Family {
                dir: dir
                    .strip_prefix(root)
                    .unwrap_or(&dir)
                    .to_string_lossy()
                    .into_owned(),
                kinds: kinds_in(&tables),
                ..Family::default()
            };
            for file in std::fs::read_dir(&dir)?.filter_map(Result::ok) {
                let name = file.file_name().to_string_lossy().into_owned();
                if !name.ends_with(".rs") || name == "tables.rs" || is_test_file(&name) {
                    continue;
                }
                let c = count(&std::fs::read_to_string(file.path())?);
                family.code += c.code;
                family.comments += c.comments;
            }
            out.push(family);
        }
    }
    Ok(out)
}

/// The families as a Markdown table, with the totals.
pub fn table(families: &[Family]) -> String {
    let mut s = String::from(
        "| family | Kinds | hand-written code lines | per Kind | comment lines |\n|---|---|---|---|---|\n",
    );
    for f in families {
        s.push_str(&format!(
            "| {} | {} | {} | {:.1} | {} |\n",
            f.dir,
            f.kinds,
            f.code,
            f.code as f64 / f.kinds.max(1) as f64,
            f.comments
        ));
    }
    let kinds: usize = families.iter().map(|f| f.kinds).sum();
    let code: usize = families.iter().map(|f| f.code).sum();
    let comments: usize = families.iter().map(|f| f.comments).sum();
    s.push_str(&format!(
        "| all | {kinds} | {code} | {:.1} | {comments} |\n",
        code as f64 / kinds.max(1) as f64
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_comments_and_test_items_are_told_apart() {
        let src = r#"//! The module.

use std::fmt;

/// A thing.
pub fn f() -> u8 {
    // inline comment
    1
}

#[cfg(test)]
use std::collections::BTreeMap;

#[cfg(test)]
mod tests {
    fn helper() { if true { } }
    #[test]
    fn t() {
        assert_eq!(super::f(), 1);
    }
}

pub const C: u8 = 2;
"#;
        assert_eq!(
            count(src),
            Counts {
                code: 5,
                comments: 3
            }
        );
    }

    #[test]
    fn kinds_are_the_entries_of_a_table() {
        let tables = "pub const K: &[Kind] = &[\n    Kind {\n        decl: KindDecl {\n            kind: \"A\",\n        },\n    },\n    k!(B, \"g\"),\n];\n// kind: \"not counted\"\n";
        assert_eq!(kinds_in(tables), 2);
    }

    /// Every Kind the four providers register is in a family folder, and each family has
    /// hand-written code.
    #[test]
    fn every_kind_is_counted_in_a_family() {
        let root = crate::root();
        let families = families(&root).expect("families");
        let registered = provider_artifactory::family_kinds().len()
            + provider_xray::family_kinds().len()
            + provider_project::family_kinds().len()
            + provider_platform::family_kinds().len();
        assert_eq!(families.iter().map(|f| f.kinds).sum::<usize>(), registered);
        for f in &families {
            assert!(f.code > 0, "{}: no code", f.dir);
        }
    }
}
