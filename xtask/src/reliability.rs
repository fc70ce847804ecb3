//! `cargo xtask reliability`: runs the fault suite (the e2e tests named `reliability_*`, see
//! `tests/src/reliability.rs`) with `RELIABILITY_OUT` set, and writes the rows they recorded
//! into the README's "Reliability" table, between the `reliability:begin`/`end` markers.
//!
//! Rows are keyed by their id (first column): a run of some scenarios (`--filter`) replaces
//! those rows and keeps the others, so the long scenarios need not be rerun to refresh a quick
//! one.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

const BEGIN: &str = "<!-- reliability:begin -->";
const END: &str = "<!-- reliability:end -->";
const HEADER: &str = "| id | scenario | size | faults | converged in | JFrog objects (expected / found) | duplicates | missing | writes | secrets in outputs | result |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|";

/// Runs the suite (unless `skip_run`) and rewrites the README table.
pub fn run(root: &Path, long: bool, filter: Option<&str>, skip_run: bool) -> anyhow::Result<()> {
    let out = root.join("target/reliability");
    if !skip_run {
        if out.exists() {
            std::fs::remove_dir_all(&out)?;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        // The scenarios start the `sandbox` binary of their own profile: build it first.
        let built = Command::new(&cargo)
            .current_dir(root)
            .args(["build", "--release", "-p", "sandbox"])
            .status()
            .context("building the sandbox")?;
        if !built.success() {
            bail!("cargo build --release -p sandbox failed");
        }
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(root)
            .args(["test", "-p", "e2e", "--release", "--"])
            .arg(filter.unwrap_or("reliability_"))
            .args(["--test-threads", "1", "--nocapture"])
            .env("RELIABILITY_OUT", &out);
        if long {
            cmd.arg("--include-ignored");
        }
        let status = cmd.status().context("running the fault suite")?;
        if !status.success() {
            eprintln!("some scenarios failed; their rows (pass = no) are still written");
        }
    }
    let rows = read_rows(&out)?;
    if rows.is_empty() {
        bail!("no rows in {}: no scenario ran", out.display());
    }
    let readme = root.join("README.md");
    let text = std::fs::read_to_string(&readme)?;
    let updated = update_table(&text, &rows)?;
    std::fs::write(&readme, updated)?;
    println!("README.md: {} rows updated", rows.len());
    Ok(())
}

fn read_rows(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut rows = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(rows);
    };
    for e in entries {
        let path = e?.path();
        if path.extension().is_some_and(|x| x == "json") {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)
                .with_context(|| format!("reading {}", path.display()))?;
            let id = v["id"].as_str().context("a row without id")?.to_string();
            rows.insert(id, render(&v));
        }
    }
    Ok(rows)
}

/// One table line of a row.
fn render(v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("").replace('|', "\\|");
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    format!(
        "| `{}` | {} | {} | {} | {:.1} s | {} / {} | {} | {} | {} | {} | {} {} |",
        s("id"),
        s("scenario"),
        s("size"),
        n("faults"),
        v["converge_secs"].as_f64().unwrap_or(0.0),
        n("expected_objects"),
        n("jfrog_objects"),
        n("duplicates"),
        n("missing"),
        n("writes"),
        n("secrets_found"),
        if v["pass"].as_bool() == Some(true) {
            "pass:"
        } else {
            "FAIL:"
        },
        s("result"),
    )
}

/// The README with the table between the markers replaced: the new rows plus the old rows
/// whose id was not rerun, sorted by id.
fn update_table(text: &str, new: &BTreeMap<String, String>) -> anyhow::Result<String> {
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        bail!("README.md has no {BEGIN} ... {END} markers");
    };
    let old = &text[b + BEGIN.len()..e];
    let mut rows: BTreeMap<String, String> = old
        .lines()
        .filter_map(|l| {
            let id = l.strip_prefix("| `")?.split('`').next()?;
            Some((id.to_string(), l.to_string()))
        })
        .collect();
    rows.extend(new.iter().map(|(k, v)| (k.clone(), v.clone())));
    let body: Vec<&str> = rows.values().map(String::as_str).collect();
    Ok(format!(
        "{}{BEGIN}\n{HEADER}\n{}\n{}",
        &text[..b],
        body.join("\n"),
        &text[e..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_replaces_its_rows_and_keeps_the_others() {
        let row = |id: &str, pass: bool| {
            serde_json::json!({"id": id, "scenario": "s|x", "size": "1", "faults": 2,
                "converge_secs": 1.25, "expected_objects": 3, "jfrog_objects": 3,
                "duplicates": 0, "missing": 0, "writes": 4, "secrets_found": 0,
                "pass": pass, "result": "ok"})
        };
        let first: BTreeMap<String, String> = [("b".to_string(), render(&row("b", true)))].into();
        let text = format!("intro\n{BEGIN}\n{END}\nafter\n");
        let once = update_table(&text, &first).unwrap();
        assert!(
            once.contains("| `b` | s\\|x | 1 | 2 | 1.2 s | 3 / 3 | 0 | 0 | 4 | 0 | pass: ok |")
        );
        let second: BTreeMap<String, String> = [("a".to_string(), render(&row("a", false)))].into();
        let twice = update_table(&once, &second).unwrap();
        let a = twice.find("| `a`").unwrap();
        let b = twice.find("| `b`").unwrap();
        assert!(a < b, "{twice}");
        assert!(twice.contains("FAIL: ok"));
        assert!(twice.starts_with("intro\n") && twice.ends_with(&format!("{END}\nafter\n")));
        assert!(update_table("no markers", &first).is_err());
    }
}
