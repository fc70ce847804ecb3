//! The Kind declaration tables, generated from the vendored catalog.
//!
//! The catalog (`catalog/*.json` at the repository root) describes every Kind as extracted
//! from the Terraform provider; `catalog/overrides.json` records, as data, each correction
//! and provider-side rule applied on top of it (with its reason). [`generate`] turns both into
//! the exact text of the checked-in declaration tables; the providers never read the catalog.
//!
//! `cargo xtask generate` writes the tables ([`write`]) and `cargo xtask check` (and this
//! crate's test) fails when a checked-in table differs ([`stale`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

mod access;
mod access_api;
mod checks;
mod configuration;
mod overrides;
mod repository;
mod webhook;
mod xray;

use overrides::Overrides;

/// Where the repository declaration table lives, relative to the repository root.
pub const REPOSITORY_TABLES: &str = "providers/artifactory/src/repository/tables.rs";
/// Where the webhook declaration table lives, relative to the repository root.
pub const WEBHOOK_TABLES: &str = "providers/artifactory/src/webhook/tables.rs";
/// Where the user, security and replication declaration table lives.
pub const ACCESS_TABLES: &str = "providers/artifactory/src/access/tables.rs";

/// Where provider-project's declaration table lives, relative to the repository root.
pub const PROJECT_TABLES: &str = "providers/project/src/projects/tables.rs";
/// Where provider-platform's declaration table lives, relative to the repository root.
pub const PLATFORM_TABLES: &str = "providers/platform/src/platform/tables.rs";
/// Where the configuration, lifecycle and artifact declaration table lives.
pub const CONFIGURATION_TABLES: &str = "providers/artifactory/src/configuration/tables.rs";

/// The catalog directory of a repository root.
pub fn catalog_dir(repo_root: &Path) -> PathBuf {
    repo_root.join("catalog")
}

/// Every generated declaration table: (path relative to the repository root, exact text).
pub fn generate(catalog_dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let overrides = Overrides::load(&catalog_dir.join("overrides.json"))?;
    let repository_catalogs = repository::CATALOG_FILES
        .iter()
        .map(|f| read_json(&catalog_dir.join(f)))
        .collect::<Result<Vec<_>>>()?;
    let repository = repository::generate(&repository_catalogs, &overrides)?;
    let webhook = webhook::generate(
        &read_json(&catalog_dir.join(webhook::CATALOG_FILE))?,
        &overrides,
    )?;
    let xray = xray::generate(
        &read_json(&catalog_dir.join(xray::CATALOG_FILE))?,
        &overrides,
    )?;
    let project = access_api::generate(
        &access_api::PROJECT,
        &read_json(&catalog_dir.join(access_api::PROJECT.catalog))?,
        &access_api::Section {
            fields: &overrides.project_fields,
            kinds: &overrides.project_kinds,
        },
    )?;
    let platform = access_api::generate(
        &access_api::PLATFORM,
        &read_json(&catalog_dir.join(access_api::PLATFORM.catalog))?,
        &access_api::Section {
            fields: &overrides.platform_fields,
            kinds: &overrides.platform_kinds,
        },
    )?;
    let configuration = configuration::generate(
        &read_json(&catalog_dir.join(configuration::CATALOG_FILE))?,
        &overrides,
    )?;
    overrides.check_all_used()?;
    let access = access::generate(
        &read_json(&catalog_dir.join(access::CATALOG_FILE))?,
        &read_json(&catalog_dir.join("overrides.json"))?,
    )?;
    let mut out = vec![
        (PathBuf::from(REPOSITORY_TABLES), repository),
        (PathBuf::from(WEBHOOK_TABLES), webhook),
        (PathBuf::from(ACCESS_TABLES), access),
        (PathBuf::from(PROJECT_TABLES), project),
        (PathBuf::from(PLATFORM_TABLES), platform),
        (PathBuf::from(CONFIGURATION_TABLES), configuration),
    ];
    out.extend(
        xray.into_iter()
            .map(|(group, text)| (PathBuf::from(xray::tables_path(&group)), text)),
    );
    out.extend(
        checks::generate(catalog_dir)?
            .into_iter()
            .map(|(path, text)| (PathBuf::from(path), text)),
    );
    Ok(out)
}

/// Write every generated table under `repo_root`; returns the paths written.
pub fn write(repo_root: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (rel, text) in generate(&catalog_dir(repo_root))? {
        let path = repo_root.join(&rel);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(rel);
    }
    Ok(written)
}

/// One message per checked-in table that differs from the generated text (which file, and
/// the first differing line); empty when all are up to date.
pub fn stale(repo_root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for (rel, text) in generate(&catalog_dir(repo_root))? {
        match std::fs::read_to_string(repo_root.join(&rel)) {
            Ok(existing) if existing == text => {}
            Ok(existing) => problems.push(format!(
                "{} is stale: {}",
                rel.display(),
                first_difference(&existing, &text)
            )),
            Err(e) => problems.push(format!("{} is unreadable: {e}", rel.display())),
        }
    }
    Ok(problems)
}

/// The first line where `existing` and `generated` differ, for a readable failure.
fn first_difference(existing: &str, generated: &str) -> String {
    let mut old = existing.split('\n');
    let mut new = generated.split('\n');
    let mut line = 1;
    loop {
        match (old.next(), new.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (a, b) => {
                return format!(
                    "first difference at line {line}:\n  checked in: {}\n  generated:  {}",
                    a.unwrap_or("<end of file>"),
                    b.unwrap_or("<end of file>")
                );
            }
        }
    }
}

fn read_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// A Rust string literal for `s` (the text between the quotes is what JSON would write for
/// plain ASCII; other characters use Rust escapes).
fn rs(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || !c.is_ascii() => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `SCREAMING_SNAKE` constant name: runs of anything but A-Z/0-9 (after upper-casing) become
/// one `_`, trimmed at both ends.
fn const_name(name: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in name.to_uppercase().chars() {
        if c.is_ascii_uppercase() || c.is_ascii_digit() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

/// A `Dv` expression for a JSON default.
fn dv(d: &Value) -> Result<String> {
    Ok(match d {
        Value::Null => "Dv::None".into(),
        Value::Bool(b) => format!("Dv::Bool({b})"),
        Value::Number(n) => match n.as_i64() {
            Some(i) => format!("Dv::Int({i})"),
            None => bail!("non-integer default {n}"),
        },
        Value::String(s) => format!("Dv::Str({})", rs(s)),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(rs)
                        .context("a list default holds a non-string")
                })
                .collect::<Result<Vec<_>>>()?;
            format!("Dv::List(&[{}])", items.join(", "))
        }
        Value::Object(_) => bail!("object default {d}"),
    })
}

/// Python-like truthiness of an optional JSON member (absent, null, false, 0, "" and empty
/// collections are false).
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// A string member.
fn str_of<'a>(v: &'a Value, key: &str) -> Result<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .with_context(|| format!("missing string `{key}` in {}", short(v)))
}

/// An optional string member (absent or null is `None`).
fn opt_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// An array member (absent is empty).
fn arr<'a>(v: &'a Value, key: &str) -> Result<&'a [Value]> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => bail!("`{key}` is not an array in {}", short(v)),
    }
}

/// The start of a JSON value, for error messages.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// `.write_only().secret_ref("<crd>SecretRef")` for a field the overrides give a
/// Secret-reference form beside its plain value (`"secret_ref": true`), else nothing.
pub fn secret_ref_suffix(f: &serde_json::Value, crd: &str, built: &str) -> String {
    if !truthy(f.get("secret_ref")) {
        return String::new();
    }
    let wo = if built.contains(".write_only()") {
        ""
    } else {
        ".write_only()"
    };
    format!("{wo}.secret_ref({})", rs(&format!("{crd}SecretRef")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(const_name("remote-oci-like"), "REMOTE_OCI_LIKE");
        assert_eq!(
            const_name("contentSynchronisation"),
            "CONTENTSYNCHRONISATION"
        );
        assert_eq!(const_name("__a b__"), "A_B");
        assert_eq!(rs("a \"b\" \\ \n"), r#""a \"b\" \\ \n""#);
        assert_eq!(
            dv(&serde_json::json!(["x", "y"])).unwrap(),
            r#"Dv::List(&["x", "y"])"#
        );
        assert_eq!(dv(&serde_json::json!(false)).unwrap(), "Dv::Bool(false)");
        assert!(
            first_difference("a\nb\n", "a\nc\n").contains("line 2"),
            "line numbers start at 1"
        );
    }
}
