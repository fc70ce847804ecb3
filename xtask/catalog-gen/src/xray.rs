//! `providers/xray/src/<group>/tables.rs`: every Kind of `xray.json`, one table per API
//! group (policy, configuration, report, watch, webhook).
//!
//! Each template (`xray_policy`, `xray_report`, `xray_binary_manager`) becomes a field-set
//! const a Kind `extends`; each object block one const of its children (identical blocks
//! share one const), and every Kind one `Kind` (its `KindDecl`) whose REST binding and hooks are the
//! group module's `rest::<KIND>` and `HOOKS` (or the Kind's own hooks, `hooks::<name>`, when
//! its correction names them).
//!
//! Catalog rules applied here (the catalog's notes state them):
//! - the identifier fields of a `name` Kind come from the external name: not parameters,
//!   their wire member is the Kind's `id_wire`; a server-assigned `id` is the adapter's
//!   `atProvider.id`; TF's computed `id` attributes without a wire member are dropped;
//! - a single-nested attribute or block (`object`) is a `Ty::Object` (a plain object in the
//!   CRD, as Upjet renders it); a list or set block of at most one element ("exactly/at most
//!   one element" in its description) is a `Ty::Block` (an array of one in the CRD); both are
//!   one JSON object on the wire;
//! - a wire member that is a filter on a shared list (`filters[type=...]`) is declared as
//!   `x_<crd>`: the group's hooks fold those into the list and back;
//! - computed attributes are output-only when their description says "Read-only", carry
//!   their default when they have one, and are late-initialised otherwise.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::overrides::Overrides;
use crate::{arr, const_name, dv, opt_str, rs, str_of, truthy};

/// The catalog file of provider-xray.
pub const CATALOG_FILE: &str = "xray.json";

/// The groups, in the order their tables are written.
pub const GROUPS: &[&str] = &["policy", "configuration", "report", "watch", "webhook"];

/// Where a group's table lives, relative to the repository root.
pub fn tables_path(group: &str) -> String {
    format!("providers/xray/src/{group}/tables.rs")
}

/// One generated table per group: (group, text).
pub fn generate(catalog: &Value, overrides: &Overrides) -> Result<Vec<(String, String)>> {
    let templates = catalog
        .get("templates")
        .and_then(Value::as_object)
        .context("the catalog has no templates")?;
    let kinds = arr(catalog, "kinds")?;
    ensure!(
        kinds.len() == 21,
        "expected 21 Xray Kinds, found {}",
        kinds.len()
    );
    let mut out = Vec::new();
    for group in GROUPS {
        let mut g = Gen {
            overrides,
            consts: Vec::new(),
            blocks: BTreeMap::new(),
        };
        let members: Vec<&Value> = kinds
            .iter()
            .filter(|k| opt_str(k, "group") == Some(group))
            .collect();
        ensure!(!members.is_empty(), "no Kinds in group {group}");
        let mut used_templates = Vec::new();
        let mut decls = Vec::new();
        for k in &members {
            let kind = str_of(k, "kind")?;
            let ids = id_fields(k)?;
            let extends = match opt_str(k, "extends") {
                Some(t) => {
                    if !used_templates.contains(&t) {
                        used_templates.push(t);
                        let fields = templates
                            .get(t)
                            .and_then(Value::as_array)
                            .with_context(|| format!("unknown template {t}"))?;
                        let lines = g.fields(fields, t, &ids)?;
                        g.consts.push(format!(
                            "/// Template `{t}`.\npub const {}: &[Field] = &[\n{}\n];\n",
                            const_name(t),
                            indent(&lines)
                        ));
                    }
                    const_name(t)
                }
                None => "NONE".to_string(),
            };
            let lines = g.fields(arr(k, "fields")?, kind, &ids)?;
            let fields_const = format!("{}_FIELDS", const_name(&snake(kind)));
            g.consts.push(format!(
                "/// The fields of {kind}.\npub const {fields_const}: &[Field] = &[\n{}\n];\n",
                indent(&lines)
            ));
            decls.push(g.decl(k, group, &extends, &fields_const, &ids, templates)?);
        }
        let mut body = g.consts;
        body.push(format!(
            "/// Every Kind of the {group} group.\npub const KINDS: &[Kind] = &[\n{}\n];",
            decls.join("\n")
        ));
        let body = body.join("\n");
        out.push((
            group.to_string(),
            header(group, &body) + "\n" + &body + "\n",
        ));
    }
    Ok(out)
}

/// The opening of a group's file: its doc, the imports `body` uses (only those, so that
/// no group needs an `allow(unused_imports)`) and the empty field list `NONE` when `body`
/// names it.
fn header(group: &str, body: &str) -> String {
    const IMPORTS: [&str; 9] = [
        "Dv", "Field", "Id", "Kind", "KindDecl", "MapWire", "Norm", "Rule", "Ty",
    ];
    let none = if body.contains("extends: NONE,") {
        "\n/// No fields (a Kind without a template).\nconst NONE: &[Field] = &[];\n"
    } else {
        ""
    };
    let code = format!("{none}{body}");
    let imports: Vec<&str> = IMPORTS
        .into_iter()
        .filter(|name| uses(&code, name))
        .collect();
    let imports = match imports.as_slice() {
        [one] => (*one).to_string(),
        _ => format!("{{{}}}", imports.join(", ")),
    };
    // The group's hooks (every Kind's family rules), and the Kinds' own.
    let hooks = if body.contains("hooks: &hooks::") {
        "HOOKS, hooks, rest"
    } else {
        "HOOKS, rest"
    };
    format!(
        "//! The {group} Kind declarations of provider-xray as data.\n//!\n//! GENERATED by `cargo xtask generate` from the vendored catalog (`catalog/xray.json`,\n//! extracted from jfrog/terraform-provider-xray) with the corrections recorded in\n//! `catalog/overrides.json` (section `xray`); regenerate rather than edit by hand.\n\nuse provider_family::{imports};\n\nuse super::{{{hooks}}};\n{none}"
    )
}

/// Whether generated `code` uses the type `name`: as a path (`Ty::Str`), a slice element
/// type (`&[Field]`) or a struct literal (`KindDecl {`); a word of a doc string is none of
/// these.
fn uses(code: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(name).any(|(at, _)| {
        let after = &code[at + name.len()..];
        !code[..at].chars().next_back().is_some_and(ident)
            && (after.starts_with("::") || after.starts_with(']') || after.starts_with(" {"))
    })
}

/// The identifier fields of a Kind (Terraform names) that are not parameters.
fn id_fields(k: &Value) -> Result<Vec<String>> {
    let id = k.get("identifier").context("no identifier")?;
    Ok(match str_of(id, "strategy")? {
        "name" | "server-assigned" => arr(id, "fields")?
            .iter()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    })
}

/// `SecurityPolicy` -> `security_policy`.
fn snake(kind: &str) -> String {
    let mut out = String::new();
    for (i, c) in kind.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

struct Gen<'a> {
    overrides: &'a Overrides,
    consts: Vec<String>,
    /// Rendered children -> const name (identical blocks share one const).
    blocks: BTreeMap<String, String>,
}

impl Gen<'_> {
    /// The `Field` lines of `fields` in context `ctx`, without the identifier fields and
    /// TF-only `id` attributes; plus the fields the overrides add to `ctx`.
    fn fields(&mut self, fields: &[Value], ctx: &str, ids: &[String]) -> Result<Vec<String>> {
        let mut all: Vec<Value> = fields.to_vec();
        for a in &self.overrides.xray_added {
            if a.applies(ctx) {
                all.extend(a.fields.iter().cloned());
            }
        }
        let mut lines = Vec::new();
        for f in &all {
            let tf = str_of(f, "tf")?;
            if ids.iter().any(|i| i == tf) || (tf == "id" && opt_str(f, "wire").is_none()) {
                continue;
            }
            lines.push(self.field(f, ctx)?);
        }
        Ok(lines)
    }

    /// The `Field` expression of one catalog field whose parent is `ctx`.
    fn field(&mut self, f: &Value, ctx: &str) -> Result<String> {
        let tf = str_of(f, "tf")?;
        let mut m: Map<String, Value> = f.as_object().context("a field is not an object")?.clone();
        let (mut flags, mut norm) = (Vec::new(), String::new());
        let mut enums: Vec<String> = Vec::new();
        for o in &self.overrides.xray_fields {
            if o.applies(tf, ctx) {
                o.apply(&mut m, &mut flags, &mut norm);
                if let Some(e) = &o.enums {
                    enums.clone_from(e);
                }
            }
        }
        let f = Value::Object(m);
        let crd = str_of(&f, "crd")?;
        let wire = match opt_str(&f, "wire") {
            Some(w) if w.contains('[') => format!("Some({})", rs(&format!("x_{crd}"))),
            Some(w) => format!("Some({})", rs(w)),
            None => "None".to_string(),
        };
        let t = str_of(&f, "type")?;
        let desc = opt_str(&f, "description").unwrap_or("");
        let ty = if t.contains("object") {
            let children = arr(&f, "children")?;
            let path = format!("{ctx}.{tf}");
            let mut lines = Vec::new();
            for c in children {
                lines.push(self.field(c, &path)?);
            }
            let body = indent(&lines);
            let name = match self.blocks.get(&body) {
                Some(n) => n.clone(),
                None => {
                    let n = const_name(&format!("{}_{tf}", ctx.replace('.', "_")));
                    self.consts.push(format!(
                        "/// The children of `{path}`.\npub const {n}: &[Field] = &[\n{body}\n];\n"
                    ));
                    self.blocks.insert(body, n.clone());
                    n
                }
            };
            let one = {
                let d = desc.to_ascii_lowercase();
                d.starts_with("exactly one element") || d.starts_with("at most one element")
            };
            if t == "object" {
                format!("Ty::Object({name})")
            } else if one {
                format!("Ty::Block({name})")
            } else if t.starts_with("set") {
                format!("Ty::ObjSet({name})")
            } else {
                format!("Ty::ObjList({name})")
            }
        } else {
            match t {
                "string" => "Ty::Str",
                "bool" => "Ty::Bool",
                "int" => "Ty::Int",
                "float" => "Ty::Num",
                "set<string>" => "Ty::Set",
                "list<string>" => "Ty::List",
                "map<string>" => "Ty::Map(MapWire::Object)",
                other => bail!("unknown field type {other} ({ctx}.{tf})"),
            }
            .to_string()
        };
        let mut s = format!("Field::new({}, {}, {wire}, {ty})", rs(crd), rs(tf));
        let computed = truthy(f.get("computed"));
        let read_only = desc.starts_with("Read-only");
        let default = f.get("default").filter(|d| !d.is_null());
        if truthy(f.get("status_only")) || (computed && read_only) {
            s.push_str(".status_only()");
        } else if let Some(d) = default {
            s.push_str(&format!(".default({})", dv(d)?));
        } else if computed && !flags.iter().any(|x| x == "late_init") {
            flags.push("late_init".into());
        }
        if truthy(f.get("required")) && !(computed && read_only) {
            s.push_str(".required()");
        }
        if truthy(f.get("sensitive")) {
            s.push_str(".sensitive().write_only()");
        }
        if truthy(f.get("immutable")) {
            s.push_str(".immutable()");
        }
        for flag in &flags {
            s.push_str(&format!(".{flag}()"));
        }
        if !norm.is_empty() {
            s.push_str(&format!(".norm({norm})"));
        }
        if !enums.is_empty() {
            let e: Vec<String> = enums.iter().map(|x| rs(x)).collect();
            s.push_str(&format!(".enums(&[{}])", e.join(", ")));
        }
        s.push_str(&format!(".doc({})", rs(desc)));
        Ok(s)
    }

    /// The `KindDecl` of one Kind.
    fn decl(
        &self,
        k: &Value,
        group: &str,
        extends: &str,
        fields: &str,
        ids: &[String],
        templates: &Map<String, Value>,
    ) -> Result<String> {
        let kind = str_of(k, "kind")?;
        let ident = k.get("identifier").context("no identifier")?;
        let id_fields = arr(ident, "fields")?;
        let first_id = id_fields.first().and_then(Value::as_str).unwrap_or("");
        let fixes: Vec<_> = self
            .overrides
            .xray_kinds
            .iter()
            .filter(|o| o.kind == kind)
            .collect();
        for f in &fixes {
            f.used.set(f.used.get() + 1);
        }
        let strategy = match fixes.iter().find_map(|f| f.identifier.as_deref()) {
            // The external name, with no field of its own (nothing carries it on the wire).
            Some("name") => "external-name",
            _ => str_of(ident, "strategy")?,
        };
        let (id, id_wire) = match strategy {
            "external-name" => ("Id::Name".to_string(), "None".to_string()),
            "name" => {
                // The identifier's wire member, from the Kind's fields or its template.
                let own = arr(k, "fields")?.iter();
                let tpl = opt_str(k, "extends")
                    .and_then(|t| templates.get(t))
                    .and_then(Value::as_array)
                    .map(|a| a.iter())
                    .into_iter()
                    .flatten();
                let wire = own
                    .chain(tpl)
                    .find(|f| opt_str(f, "tf") == Some(first_id))
                    .and_then(|f| opt_str(f, "wire"))
                    .with_context(|| format!("{kind}: identifier {first_id} has no wire"))?;
                ("Id::Name".to_string(), format!("Some({})", rs(wire)))
            }
            "server-assigned" => ("Id::ServerAssigned".to_string(), "None".to_string()),
            "spec-field" => {
                let crd = arr(k, "fields")?
                    .iter()
                    .find(|f| opt_str(f, "tf") == Some(first_id))
                    .and_then(|f| opt_str(f, "crd"))
                    .with_context(|| format!("{kind}: no spec field {first_id}"))?;
                (format!("Id::SpecField({})", rs(crd)), "None".to_string())
            }
            "singleton" => (
                format!("Id::Singleton({})", rs(str_of(ident, "constant")?)),
                "None".to_string(),
            ),
            other => bail!("{kind}: unknown identifier strategy {other}"),
        };
        let _ = ids;
        let rules: Vec<&(String, String)> = fixes.iter().flat_map(|f| &f.rules).collect();
        let rules = match Some(rules).filter(|r| !r.is_empty()) {
            None => "&[]".to_string(),
            Some(r) => format!(
                "&[{}]",
                r.iter()
                    .map(|(cel, message)| format!(
                        "Rule {{ cel: {}, message: {} }}",
                        rs(cel),
                        rs(message)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let hooks = match fixes.iter().find_map(|f| f.hooks.as_deref()) {
            Some(h) => format!("hooks::{h}"),
            None => "HOOKS".to_string(),
        };
        let tf = str_of(k, "tf_resource")?;
        let doc = format!("A JFrog Xray {} (Terraform `{tf}`).", words(kind));
        Ok(format!(
            "    Kind {{\n        decl: KindDecl {{\n            provider: \"xray\",\n            group: {},\n            kind: {},\n            description: {},\n            id: {id},\n            id_wire: {id_wire},\n            extends: {extends},\n            mixins: &[],\n            fields: {fields},\n            default_overrides: &[],\n            enum_overrides: &[],\n            identity: &[],\n            fixed_body: &[],\n            rules: {rules},\n        }},\n        rest: &rest::{},\n        family: &HOOKS,\n        hooks: &{hooks},\n    }},",
            rs(group),
            rs(kind),
            rs(&doc),
            const_name(&snake(kind)),
        ))
    }
}

/// `SecurityPolicy` -> `security policy`.
fn words(kind: &str) -> String {
    snake(kind).replace('_', " ")
}

/// `    line,` per line.
fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    {l},"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(snake("SecurityPolicy"), "security_policy");
        assert_eq!(
            const_name(&snake("BinaryManagerReleaseBundlesV2")),
            "BINARY_MANAGER_RELEASE_BUNDLES_V2"
        );
        assert_eq!(words("IgnoreRule"), "ignore rule");
    }
}
