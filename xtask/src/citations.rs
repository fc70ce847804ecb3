//! The check that every citation of the contract in the code resolves
//! (`cargo test -p xtask citations`).
//!
//! Comments cite `docs/managed-reconciler.md` by section (the section sign and a number,
//! e.g. 9.4, "2 step 17", "16 Q6") and tests cite its checklist by name
//! (`conformance_011b_...` is item 11b of section 17). Every section sign in a `.rs` file of
//! the workspace refers to that document. A citation that names a section, a step of
//! section 2, a quirk of section 16 or a checklist item the document does not have fails the
//! test, and so does a `docs/<file>.md` named in code that does not exist. (This file spells
//! the sign as [`SIGN`] so that it cites nothing itself.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The section sign.
const SIGN: char = '\u{a7}';

/// The document's anchors: section numbers, steps of section 2, quirks of section 16 and
/// checklist items of section 17.
#[derive(Debug, Default)]
struct Anchors {
    sections: BTreeSet<String>,
    steps: BTreeSet<String>,
    quirks: BTreeSet<String>,
    items: BTreeSet<String>,
}

/// Leading digits of `s` (and the rest).
fn digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// A section number at the start of `s`: `9`, `9.4`, `15.4` (a trailing `.` is not part of
/// it).
fn section_number(s: &str) -> Option<&str> {
    let (first, _) = digits(s);
    if first.is_empty() {
        return None;
    }
    let mut end = first.len();
    loop {
        let rest = &s[end..];
        let Some(after_dot) = rest.strip_prefix('.') else {
            break;
        };
        let (more, _) = digits(after_dot);
        if more.is_empty() {
            break;
        }
        end += 1 + more.len();
    }
    Some(&s[..end])
}

/// A checklist item at the start of `s`: digits with an optional lowercase letter (`8b`).
fn item_number(s: &str) -> Option<String> {
    let (n, rest) = digits(s);
    if n.is_empty() {
        return None;
    }
    let n = n.trim_start_matches('0');
    let n = if n.is_empty() { "0" } else { n };
    match rest.chars().next() {
        Some(c)
            if c.is_ascii_lowercase()
                && !rest[1..].starts_with(|c: char| c.is_ascii_lowercase()) =>
        {
            Some(format!("{n}{c}"))
        }
        _ => Some(n.to_string()),
    }
}

fn anchors(doc: &str) -> Anchors {
    let mut a = Anchors::default();
    let mut section = String::new();
    for line in doc.lines() {
        if let Some(h) = line
            .strip_prefix("## ")
            .or_else(|| line.strip_prefix("### "))
        {
            if let Some(n) = section_number(h) {
                a.sections.insert(n.to_string());
                if line.starts_with("## ") {
                    section = n.to_string();
                }
            } else if line.starts_with("## ") {
                section.clear();
            }
            continue;
        }
        match section.as_str() {
            "2" => {
                if let Some(rest) = line.strip_prefix("**Step ") {
                    let (n, _) = digits(rest);
                    if !n.is_empty() {
                        a.steps.insert(n.to_string());
                    }
                }
            }
            "16" => {
                if let Some(rest) = line.strip_prefix("| Q") {
                    let (n, _) = digits(rest);
                    if !n.is_empty() {
                        a.quirks.insert(n.to_string());
                    }
                }
            }
            "17" => {
                let (n, rest) = digits(line);
                let rest = rest.trim_start_matches(|c: char| c.is_ascii_lowercase());
                if !n.is_empty()
                    && rest.starts_with(". **")
                    && let Some(item) = item_number(line)
                {
                    a.items.insert(item);
                }
            }
            _ => {}
        }
    }
    a
}

/// What one file cites and does not resolve, as `path:line: message`.
fn unresolved(path: &str, text: &str, a: &Anchors, docs_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = |msg: String| format!("{path}:{}: {msg}", i + 1);
        for (pos, _) in line.match_indices(SIGN) {
            let rest = line[pos + SIGN.len_utf8()..].trim_start();
            let Some(n) = section_number(rest) else {
                out.push(at(format!("{SIGN} without a section number")));
                continue;
            };
            if !a.sections.contains(n) {
                out.push(at(format!("{SIGN}{n}: no such section")));
                continue;
            }
            let after = rest[n.len()..].trim_start();
            if n == "2"
                && let Some(s) = after.strip_prefix("step ")
            {
                let (step, _) = digits(s);
                if !step.is_empty() && !a.steps.contains(step) {
                    out.push(at(format!("{SIGN}2 step {step}: no such step")));
                }
            }
            if n == "16"
                && let Some(q) = after.strip_prefix('Q')
            {
                let (q, _) = digits(q);
                if !q.is_empty() && !a.quirks.contains(q) {
                    out.push(at(format!("{SIGN}16 Q{q}: no such quirk")));
                }
            }
        }
        for (pos, _) in line.match_indices("conformance_") {
            let rest = &line[pos + "conformance_".len()..];
            let (n, _) = digits(rest);
            // `conformance_managed`, `conformance_g_...`: file names, not items.
            if n.len() != 3 {
                continue;
            }
            let Some(item) = item_number(rest) else {
                continue;
            };
            if !a.items.contains(&item) {
                out.push(at(format!(
                    "conformance_{n}...: no checklist item {item} in {SIGN}17"
                )));
            }
        }
        for (pos, _) in line.match_indices("docs/") {
            let rest = &line[pos + "docs/".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                .unwrap_or(rest.len());
            let name = rest[..end].trim_end_matches('.');
            if name.ends_with(".md") && !docs_dir.join(name).is_file() {
                out.push(at(format!("docs/{name}: no such file")));
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, skipping build output and hidden folders.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !(name.starts_with('.') || name == "target" || name.starts_with("target-")) {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

#[test]
fn citations_resolve_in_docs_managed_reconciler() {
    let root = crate::root();
    let docs = root.join("docs");
    let doc = std::fs::read_to_string(docs.join("managed-reconciler.md"))
        .expect("docs/managed-reconciler.md");
    let a = anchors(&doc);
    assert!(
        a.items.len() >= 108,
        "checklist items not found: {:?}",
        a.items
    );
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut cited = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        cited += text.matches(SIGN).count() + text.matches("conformance_").count();
        let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        problems.extend(unresolved(&rel, &text, &a, &docs));
    }
    assert!(cited > 0, "no citations found under {}", root.display());
    assert!(
        problems.is_empty(),
        "citations that docs/managed-reconciler.md does not resolve:\n{}",
        problems.join("\n")
    );
}

#[test]
fn citations_check_finds_what_is_missing() {
    // Built from pieces so that this file itself cites nothing.
    let sect = SIGN;
    let doc = "## 2. Machine\n**Step 7, init.**\n### 2.1 Exits\n## 16. Quirks\n| Q6 | x |\n\
               ## 17. Checklist\n### A. Creation\n8. **Create.**\n8b. **Lost.**\n";
    let a = anchors(doc);
    assert_eq!(
        a.sections,
        ["16", "17", "2", "2.1"].map(String::from).into()
    );
    assert_eq!(a.items, ["8", "8b"].map(String::from).into());
    let docs = Path::new("/nonexistent");
    let good = format!(
        "{sect}2 step 7, {sect}2.1. {sect}16 Q6; conformance_{}_x conformance_{}b_y",
        "008", "008"
    );
    assert!(unresolved("f.rs", &good, &a, docs).is_empty());
    let bad = format!(
        "{sect}3, {sect}2.2, {sect}2 step 9, {sect}16 Q7, conformance_{}_x, conformance_{}c, docs/{}.md",
        "009", "008", "none"
    );
    assert_eq!(unresolved("f.rs", &bad, &a, docs).len(), 7);
    // Test-file names are not items.
    assert!(
        unresolved(
            "f.rs",
            "conformance_managed conformance_g_providerconfig",
            &a,
            docs
        )
        .is_empty()
    );
}
