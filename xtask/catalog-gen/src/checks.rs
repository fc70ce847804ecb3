//! The admission checks of each provider (`providers/<provider>/src/checks.rs`), from
//! `catalog/validators/*.json`: the rules the JFrog Terraform providers' schemas state,
//! recorded as data (see `catalog/validators/README.md` for the format). Each file lists
//! Kinds with their single-field checks and cross-field rules; entries marked `existing`
//! (already enforced by the Kind's declaration) and checks on secrets (their values live in
//! Secrets, which admission cannot read) are left out. A regular expression that does not
//! compile, a format we do not know or a check of an unknown shape fails the generation; a
//! path that names no field fails the provider's `checks_fit` test, which applies every
//! check to its Kind's schema.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{read_json, rs};

/// Where the validator data lives, relative to the catalog directory.
pub const DIR: &str = "validators";

/// The generated file of a provider.
pub fn tables_path(provider: &str) -> String {
    format!("providers/{provider}/src/checks.rs")
}

/// The providers that get a checks table (each has one, empty or not).
pub const PROVIDERS: &[&str] = &["artifactory", "xray", "project", "platform"];

/// A format's pattern and what it means, in our words.
fn format(name: &str) -> Result<(&'static str, &'static str)> {
    Ok(match name {
        "email" => (
            r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
            "an e-mail address (name@domain)",
        ),
        "url" | "http_or_https_url" => {
            (r"^https?://[^\s/$.?#][^\s]*$", "an http:// or https:// URL")
        }
        "https_url" => (r"^https://[^\s/$.?#][^\s]*$", "an https:// URL"),
        "ipv4" => (
            r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$",
            "an IPv4 address",
        ),
        "cidr" => (
            r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/([0-9]|[12][0-9]|3[0-2])$",
            "an IPv4 CIDR range (a.b.c.d/n)",
        ),
        "rfc3339" => (
            r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$",
            "an RFC 3339 date and time (2024-01-31T12:00:00Z)",
        ),
        "pem_private_key" => (
            r"(?s)(BEGIN PGP PRIVATE KEY BLOCK|^\s*-----BEGIN ([A-Z]+ )?PRIVATE KEY-----.+-----END ([A-Z]+ )?PRIVATE KEY-----\s*$)",
            "a PEM-encoded private key or a PGP private key block",
        ),
        "pem_public_key" => (
            r"(?s)(BEGIN PGP PUBLIC KEY BLOCK|^\s*-----BEGIN ([A-Z]+ )?PUBLIC KEY-----.+-----END ([A-Z]+ )?PUBLIC KEY-----\s*$)",
            "a PEM-encoded public key or a PGP public key block (as upstream accepts GPG keys)",
        ),
        "pem_certificate" => (
            r"(?s)^\s*-----BEGIN CERTIFICATE-----.+-----END CERTIFICATE-----\s*$",
            "a PEM-encoded certificate",
        ),
        "semver" => (
            r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$",
            "a semantic version (1.2.3)",
        ),
        "cron" => (
            r"^\s*\S+(\s+\S+){5,6}\s*$",
            "a Quartz cron expression (6 or 7 fields, seconds first)",
        ),
        "cron_5" => (
            r"^\s*\S+(\s+\S+){4}\s*$",
            "a cron expression of 5 fields (minute hour day-of-month month day-of-week)",
        ),
        // The Xray reports' schedule (the shared IsCronSchedule validator): 5 fields whose
        // minute is 00, 15, 30 or 45 and hour two digits 00-23 or `*`, or a descriptor.
        "xray_cron" => (
            r"^\s*(00|15|30|45)\s+(\*|[01][0-9]|2[0-3])\s+\S+\s+\S+\s+\S+\s*$|^@(hourly|daily|midnight|weekly|monthly|yearly|annually)$|^@every (([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$",
            "a schedule of 5 fields whose minute is 00, 15, 30 or 45 and hour 00-23 (two digits) or *, or @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually or @every <duration>",
        ),
        "duration" => (
            r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$",
            "a duration (30s, 5m, 1h)",
        ),
        other => bail!("unknown format {other:?}"),
    })
}

fn bound_u(v: &Value, i: usize) -> Result<String> {
    Ok(match v.get(i) {
        None | Some(Value::Null) => "None".into(),
        Some(n) => format!(
            "Some({})",
            n.as_u64()
                .with_context(|| format!("bound {n} is not a count"))?
        ),
    })
}

fn float(n: &Value) -> Result<String> {
    let f = n.as_f64().with_context(|| format!("{n} is not a number"))?;
    Ok(if f.fract() == 0.0 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    })
}

fn bound_f(v: &Value, i: usize) -> Result<String> {
    Ok(match v.get(i) {
        None | Some(Value::Null) => "None".into(),
        Some(n) => format!("Some({})", float(n)?),
    })
}

fn strs(v: &Value) -> Result<String> {
    let a = v.as_array().context("expected a list of strings")?;
    let items: Vec<String> = a
        .iter()
        .map(|s| s.as_str().map(rs).context("expected a string"))
        .collect::<Result<_>>()?;
    Ok(format!("&[{}]", items.join(", ")))
}

fn regex_ok(p: &str) -> Result<()> {
    regex::Regex::new(p)
        .map(|_| ())
        .with_context(|| format!("pattern {p:?} does not compile"))
}

/// One CHECK object as a `Check` expression.
fn check(c: &Value) -> Result<String> {
    let o = c.as_object().context("a check is an object")?;
    let (k, v) = o
        .iter()
        .find(|(k, _)| k.as_str() != "message" && k.as_str() != "note")
        .context("an empty check")?;
    Ok(match k.as_str() {
        "pattern" => {
            let p = v.as_str().context("pattern is a string")?;
            regex_ok(p)?;
            match o.get("message").and_then(Value::as_str) {
                Some(m) => format!("Check::Format({}, {})", rs(p), rs(m)),
                None => format!("Check::Pattern({})", rs(p)),
            }
        }
        "format" => {
            let (p, what) = format(v.as_str().context("format is a string")?)?;
            regex_ok(p)?;
            format!("Check::Format({}, {})", rs(p), rs(what))
        }
        "length" => format!("Check::Length({}, {})", bound_u(v, 0)?, bound_u(v, 1)?),
        "range" => format!("Check::Range({}, {})", bound_f(v, 0)?, bound_f(v, 1)?),
        "items" => format!("Check::Items({}, {})", bound_u(v, 0)?, bound_u(v, 1)?),
        "not" => {
            let a = v.as_array().context("not is a list")?;
            let items: Vec<String> = a.iter().map(float).collect::<Result<_>>()?;
            format!("Check::Not(&[{}])", items.join(", "))
        }
        "one_of" => format!("Check::OneOf({})", strs(v)?),
        "unique" => format!("Check::Unique({})", rs(v.as_str().unwrap_or_default())),
        "each" => format!("Check::Each(&{})", check(v)?),
        "prefixed_by" => format!(
            "Check::PrefixedBy({})",
            rs(v.as_str().context("prefixed_by names a parameter")?)
        ),
        "joined_length" => {
            let a = v.as_array().context("joined_length is [parameter, max]")?;
            let p = a
                .first()
                .and_then(Value::as_str)
                .context("joined_length: a parameter")?;
            let max = a
                .get(1)
                .and_then(Value::as_u64)
                .context("joined_length: a maximum")?;
            format!("Check::JoinedLength({}, {max})", rs(p))
        }
        other => bail!("unknown check {other:?}"),
    })
}

/// One RULE object as `(at, RuleCheck)`.
fn rule(r: &Value) -> Result<String> {
    let at = r.get("at").and_then(Value::as_str).unwrap_or_default();
    let body = if let Some(f) = r.get("conflicts") {
        format!("RuleCheck::Conflicts({})", strs(f)?)
    } else if let Some(f) = r.get("exactly_one_of") {
        format!("RuleCheck::ExactlyOneOf({})", strs(f)?)
    } else if let Some(f) = r.get("at_least_one_of") {
        format!("RuleCheck::AtLeastOneOf({})", strs(f)?)
    } else if let Some(f) = r.get("required_with") {
        let f = f.as_str().context("required_with is a field name")?;
        let requires = r.get("requires").context("required_with needs requires")?;
        format!("RuleCheck::RequiredWith({}, {})", rs(f), strs(requires)?)
    } else if let Some(when) = r.get("when") {
        let when = when.as_str().context("when is a CEL condition")?;
        let requires = r.get("requires").context("when needs requires")?;
        format!("RuleCheck::RequiredWhen({}, {})", rs(when), strs(requires)?)
    } else if let Some(cel) = r.get("cel") {
        let cel = cel.as_str().context("cel is a string")?;
        let message = r
            .get("message")
            .and_then(Value::as_str)
            .context("a cel rule needs a message")?;
        format!("RuleCheck::Cel({}, {})", rs(cel), rs(message))
    } else {
        bail!("unknown rule {r}")
    };
    Ok(format!("({}, {body})", rs(at)))
}

fn truthy(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool).unwrap_or(false)
}

/// Whether an entry checks a secret's value (its note starts with "secret"): the value lives
/// in a Secret, which admission cannot read. (A rule on whether a secret is set still applies,
/// to its Secret reference.)
fn secret(v: &Value) -> bool {
    v.get("note")
        .and_then(Value::as_str)
        .is_some_and(|n| n.trim_start().to_lowercase().starts_with("secret"))
}

/// A provider's rendered checks of one Kind.
#[derive(Default)]
struct Rendered {
    fields: Vec<String>,
    rules: Vec<String>,
    late_init_safe: Vec<String>,
    key: Vec<String>,
    secret_keys: Vec<String>,
}

/// A provider's rendered checks, by Kind.
type ByKind = BTreeMap<String, Rendered>;

/// Every provider's checks table: (path relative to the repository root, exact text).
pub fn generate(catalog_dir: &Path) -> Result<Vec<(String, String)>> {
    let dir = catalog_dir.join(DIR);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut by: BTreeMap<String, ByKind> = PROVIDERS
        .iter()
        .map(|p| (p.to_string(), BTreeMap::new()))
        .collect();
    for path in &files {
        let data = read_json(path)?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        for k in data
            .get("kinds")
            .and_then(Value::as_array)
            .with_context(|| format!("{name}: no kinds"))?
        {
            let kind = k
                .get("kind")
                .and_then(Value::as_str)
                .with_context(|| format!("{name}: a kind without a name"))?;
            let provider = k
                .get("provider")
                .and_then(Value::as_str)
                .with_context(|| format!("{name}: {kind} without a provider"))?;
            let Some(kinds) = by.get_mut(provider) else {
                bail!("{name}: {kind}: unknown provider {provider:?}");
            };
            let entry = kinds.entry(kind.to_string()).or_default();
            if let Some(safe) = k.get("late_init_safe").and_then(Value::as_object) {
                entry.late_init_safe.extend(safe.keys().map(|f| rs(f)));
            }
            for f in k
                .get("fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if truthy(f.get("existing")) || secret(f) {
                    continue;
                }
                let path = f
                    .get("path")
                    .and_then(Value::as_str)
                    .with_context(|| format!("{name}: {kind}: a field without a path"))?;
                let checks: Vec<String> = f
                    .get("checks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|c| !truthy(c.get("existing")))
                    .map(|c| check(c).with_context(|| format!("{name}: {kind}.{path}")))
                    .collect::<Result<_>>()?;
                if !checks.is_empty() {
                    entry
                        .fields
                        .push(format!("({}, &[{}])", rs(path), checks.join(", ")));
                }
            }
            for r in k
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if truthy(r.get("existing")) || secret(r) {
                    continue;
                }
                entry
                    .rules
                    .push(rule(r).with_context(|| format!("{name}: {kind}: rule {r}"))?);
            }
            // Checks on the identifier (the external name): patterns, formats and lengths.
            for c in k.get("key").and_then(Value::as_array).into_iter().flatten() {
                let shape = c
                    .as_object()
                    .and_then(|o| o.keys().find(|k| *k != "message" && *k != "note").cloned());
                if !matches!(
                    shape.as_deref(),
                    Some("pattern" | "format" | "length" | "prefixed_by" | "joined_length")
                ) {
                    bail!(
                        "{name}: {kind}: a key check is a pattern, a format, a length, prefixed_by or joined_length: {c}"
                    );
                }
                entry
                    .key
                    .push(check(c).with_context(|| format!("{name}: {kind}: key"))?);
            }
            // Checks on the keys of a whole-Secret reference.
            for e in k
                .get("secret_keys")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let path = e
                    .get("path")
                    .and_then(Value::as_str)
                    .with_context(|| format!("{name}: {kind}: secret_keys without a path"))?;
                let checks: Vec<String> = e
                    .get("checks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|c| check(c).with_context(|| format!("{name}: {kind}: {path}")))
                    .collect::<Result<_>>()?;
                entry
                    .secret_keys
                    .push(format!("({}, &[{}])", rs(path), checks.join(", ")));
            }
        }
    }
    let mut out = Vec::new();
    for (provider, kinds) in by {
        let mut table = String::new();
        for (kind, r) in kinds {
            let Rendered {
                fields,
                rules,
                late_init_safe: safe,
                key,
                secret_keys,
            } = r;
            if fields.is_empty() && rules.is_empty() && key.is_empty() && secret_keys.is_empty() {
                continue;
            }
            table.push_str(&format!(
                "    KindChecks {{\n        kind: {},\n",
                rs(&kind)
            ));
            table.push_str("        fields: &[\n");
            for f in fields {
                table.push_str(&format!("            {f},\n"));
            }
            table.push_str("        ],\n        rules: &[\n");
            for r in rules {
                table.push_str(&format!("            {r},\n"));
            }
            table.push_str(&format!(
                "        ],\n        late_init_safe: &[{}],\n        key: &[{}],\n        secret_keys: &[{}],\n    }},\n",
                safe.join(", "),
                key.join(", "),
                secret_keys.join(", ")
            ));
        }
        // Import exactly what the table names (an unused import would warn).
        let mut uses = Vec::new();
        if table.contains("Check::") {
            uses.push("Check");
        }
        uses.push("KindChecks");
        if table.contains("RuleCheck::") {
            uses.push("RuleCheck");
        }
        let uses = match uses.as_slice() {
            [one] => one.to_string(),
            many => format!("{{{}}}", many.join(", ")),
        };
        let s = format!(
            "//! GENERATED by `cargo xtask generate` from `catalog/validators/*.json`: the rules the\n\
             //! JFrog Terraform provider states for provider-{provider}'s Kinds, checked at admission\n\
             //! (`provider_family::checks`). Edit the data, not this file.\n\n\
             use provider_family::{uses};\n\n\
             /// The admission checks of provider-{provider}'s Kinds, by Kind.\n\
             pub static CHECKS: &[KindChecks] = &[\n{table}];\n"
        );
        out.push((tables_path(&provider), s));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checks_and_rules_render_as_declarations() {
        assert_eq!(
            check(&json!({"length": [1, 15]})).unwrap(),
            "Check::Length(Some(1), Some(15))"
        );
        assert_eq!(
            check(&json!({"range": [-1, null]})).unwrap(),
            "Check::Range(Some(-1.0), None)"
        );
        assert_eq!(
            check(&json!({"each": {"one_of": ["a", "b"]}})).unwrap(),
            "Check::Each(&Check::OneOf(&[\"a\", \"b\"]))"
        );
        assert!(
            check(&json!({"format": "email"}))
                .unwrap()
                .starts_with("Check::Format(")
        );
        assert_eq!(
            rule(&json!({"at": "filters", "conflicts": ["cve", "issueId"]})).unwrap(),
            "(\"filters\", RuleCheck::Conflicts(&[\"cve\", \"issueId\"]))"
        );
        assert_eq!(
            rule(&json!({"required_with": "a", "requires": ["b"]})).unwrap(),
            "(\"\", RuleCheck::RequiredWith(\"a\", &[\"b\"]))"
        );
    }

    #[test]
    fn bad_data_fails_the_generation() {
        assert!(check(&json!({"pattern": "(["})).is_err());
        assert!(check(&json!({"format": "colour"})).is_err());
        assert!(check(&json!({"shape": 1})).is_err());
        assert!(
            rule(&json!({"cel": "self.a"})).is_err(),
            "a cel rule needs a message"
        );
        assert!(rule(&json!({"at": ""})).is_err());
    }
}
