//! Example manifests generated from the declarations: the manifest envelope of either scope,
//! a YAML writer, and the check that the checked-in files are current (a family's test
//! calls [`check_files`]; run the tests with `UPDATE_EXAMPLES=1` to rewrite them).

use std::borrow::Borrow;
use std::path::Path;

use serde_json::{Value, json};

use crate::decl::KindDecl;

/// The namespace of the namespaced examples.
pub const NAMESPACE: &str = "default";

/// `LocalDockerV2Repository` without the suffix `Repository` → `local-docker-v2`.
pub fn kebab(kind: &str, suffix: &str) -> String {
    let base = kind.strip_suffix(suffix).unwrap_or(kind);
    let mut out = String::new();
    let chars: Vec<char> = base.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        let boundary = i > 0
            && (c.is_ascii_uppercase()
                && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit())
                || c.is_ascii_uppercase()
                    && chars[i - 1].is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
        if boundary {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// A full manifest of `d` named `name` with these parameters, in the namespaced scope (the
/// `default` ClusterProviderConfig) or the legacy one (the `default` ProviderConfig).
pub fn manifest(d: &KindDecl, name: &str, for_provider: Value, legacy: bool) -> Value {
    let group = if legacy {
        format!("{}.{}.crossplane.io/v1alpha1", d.group, d.provider)
    } else {
        format!("{}.{}.m.crossplane.io/v1alpha1", d.group, d.provider)
    };
    let mut metadata = json!({"name": name});
    let provider_config = if legacy {
        json!({"name": "default"})
    } else {
        metadata["namespace"] = json!(NAMESPACE);
        json!({"kind": "ClusterProviderConfig", "name": "default"})
    };
    json!({
        "apiVersion": group,
        "kind": d.kind,
        "metadata": metadata,
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": provider_config,
        }
    })
}

/// Every example file of a family whose examples sit in one folder per group:
/// `<group>/<kebab-kind>.yaml` per Kind (namespaced) and `<group>/legacy/<kebab-kind>.yaml`
/// for the `legacy` Kinds (cluster-scoped), as (path, YAML). `decls` are declarations, or
/// anything that holds one (a family's table of `Kind`s).
pub fn files_by_group<D: Borrow<KindDecl>>(
    decls: &[D],
    legacy: &[&str],
    example: impl Fn(&KindDecl, bool) -> Value,
) -> Vec<(String, String)> {
    let decls: Vec<&KindDecl> = decls.iter().map(Borrow::borrow).collect();
    let mut out: Vec<(String, String)> = decls
        .iter()
        .map(|d| {
            (
                format!("{}/{}.yaml", d.group, kebab(d.kind, "")),
                to_yaml(&example(d, false)),
            )
        })
        .collect();
    for d in decls.iter().filter(|d| legacy.contains(&d.kind)) {
        out.push((
            format!("{}/legacy/{}.yaml", d.group, kebab(d.kind, "")),
            to_yaml(&example(d, true)),
        ));
    }
    out
}

fn yaml_scalar(v: &Value) -> String {
    match v {
        // A JSON string literal is a valid YAML double-quoted scalar.
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        other => other.to_string(),
    }
}

fn yaml_into(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::Object(c) if !c.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        yaml_into(v, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        yaml_into(v, indent + 2, out);
                    }
                    Value::Object(_) => out.push_str(&format!("{pad}{k}: {{}}\n")),
                    Value::Array(_) => out.push_str(&format!("{pad}{k}: []\n")),
                    s => out.push_str(&format!("{pad}{k}: {}\n", yaml_scalar(s))),
                }
            }
        }
        Value::Array(a) => {
            for e in a {
                match e {
                    Value::Object(o) if o.is_empty() => out.push_str(&format!("{pad}- {{}}\n")),
                    Value::Object(_) => {
                        let mut inner = String::new();
                        yaml_into(e, indent + 2, &mut inner);
                        // The first line of the element goes after "- ".
                        let trimmed = inner.trim_start_matches(' ');
                        out.push_str(&format!("{pad}- {trimmed}"));
                    }
                    s => out.push_str(&format!("{pad}- {}\n", yaml_scalar(s))),
                }
            }
        }
        s => out.push_str(&format!("{pad}{}\n", yaml_scalar(s))),
    }
}

/// A manifest as YAML.
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    yaml_into(v, 0, &mut out);
    out
}

/// Compare `files` (paths relative to `dir`, contents) with the files on disk; with
/// `UPDATE_EXAMPLES` set, write them first. Returns the stale paths.
pub fn check_files(dir: &Path, files: &[(String, String)]) -> Vec<String> {
    if std::env::var_os("UPDATE_EXAMPLES").is_some() {
        for (path, content) in files {
            let p = dir.join(path);
            if let Some(parent) = p.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(&p, content);
        }
    }
    files
        .iter()
        .filter(|(path, content)| {
            std::fs::read_to_string(dir.join(path)).ok().as_deref() != Some(content.as_str())
        })
        .map(|(p, _)| p.clone())
        .collect()
}
