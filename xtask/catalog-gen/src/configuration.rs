//! `providers/artifactory/src/configuration/tables.rs`: the Kinds of the groups
//! `configuration`, `lifecycle` and `artifact` of `artifactory-other.json`.
//!
//! Each Kind becomes a field-list const (nested blocks get their own consts) and one `k!`
//! line; its REST binding is named after the Kind (`rest::BACKUP`) and written by hand in
//! the family (descriptor sections or plain paths); its hooks are the family's `HOOKS`, or
//! its own when its correction names them (`configuration.kinds[].hooks`: `"Artifact"`
//! binds `hooks::Artifact`). Identifier fields of `name` Kinds are
//! not parameters (the external name is the key, as in Upjet); composite parts are.

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::overrides::Overrides;
use crate::{arr, const_name, dv, opt_str, rs, str_of, truthy};

/// The catalog file holding these Kinds.
pub const CATALOG_FILE: &str = "artifactory-other.json";
/// The groups generated here.
pub const GROUPS: &[&str] = &["configuration", "lifecycle", "artifact"];

const HEADER: &str = include_str!("configuration_header.txt");

pub fn generate(catalog: &Value, overrides: &Overrides) -> Result<String> {
    let kinds: Vec<&Value> = arr(catalog, "kinds")?
        .iter()
        .filter(|k| opt_str(k, "group").is_some_and(|g| GROUPS.contains(&g)))
        .collect();
    ensure!(
        kinds.len() == 20,
        "expected 20 Kinds, found {}",
        kinds.len()
    );
    let mut out = vec![HEADER.to_string()];
    let mut lines = Vec::new();
    for k in &kinds {
        let kind = str_of(k, "kind")?;
        let group = str_of(k, "group")?;
        let ident = k.get("identifier").context("no identifier")?;
        let mut strategy = str_of(ident, "strategy")?.to_string();
        let mut constant = opt_str(ident, "constant").unwrap_or_default().to_string();
        for (kk, s, c) in &overrides.configuration_ids {
            if kk == kind {
                strategy.clone_from(s);
                constant.clone_from(c);
            }
        }
        let id_fields: Vec<&str> = arr(ident, "fields")?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let fields = arr(k, "fields")?;
        let crd_of = |tf: &str| -> Result<String> {
            let f = fields
                .iter()
                .find(|f| opt_str(f, "tf") == Some(tf))
                .with_context(|| format!("{kind}: identifier field {tf} not declared"))?;
            Ok(str_of(f, "crd")?.to_string())
        };
        let (id, id_wire, skip) = match strategy.as_str() {
            "name" => {
                let tf = id_fields.first().context("name without field")?;
                let f = fields
                    .iter()
                    .find(|f| opt_str(f, "tf") == Some(*tf))
                    .context("identifier field")?;
                let wire = match opt_str(f, "wire") {
                    Some(w) => format!("Some({})", rs(w)),
                    None => "None".into(),
                };
                ("Id::Name".to_string(), wire, vec![tf.to_string()])
            }
            "composite" => {
                let parts = id_fields
                    .iter()
                    .map(|tf| crd_of(tf).map(|c| rs(&c)))
                    .collect::<Result<Vec<_>>>()?;
                (
                    format!("Id::Composite(&[{}], \":\")", parts.join(", ")),
                    "None".into(),
                    Vec::new(),
                )
            }
            "server-assigned" => ("Id::ServerAssigned".into(), "None".into(), Vec::new()),
            "singleton" => (
                format!("Id::Singleton({})", rs(&constant)),
                "None".into(),
                Vec::new(),
            ),
            other => bail!("{kind}: unknown strategy {other}"),
        };
        let name = const_name(kind);
        let list = field_list(kind, &name, fields, &skip, overrides, &mut out)?;
        out.push(format!(
            "/// The fields of `{kind}`.\npub const {name}: &[Field] = &[\n{list}\n];\n"
        ));
        let doc = opt_str(k, "description")
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "Artifactory {} ({}).",
                    words(kind),
                    str_of(k, "tf_resource").unwrap_or("")
                )
            });
        // The Kind's own hooks, when its correction names them (the family's otherwise).
        let mut hooks = String::new();
        for ko in &overrides.configuration_kinds {
            if ko.applies(kind) {
                ensure!(
                    ko.fixed_body.is_empty() && ko.rules.is_empty() && ko.description.is_none(),
                    "{kind}: configuration.kinds entries name hooks only"
                );
                if let Some(h) = &ko.hooks {
                    hooks = format!(", hooks::{h}");
                }
            }
        }
        lines.push(format!(
            "    k!({kind}, {}, {id}, {id_wire}, {name}, &rest::{name}, {}{hooks}),",
            rs(group),
            rs(&doc)
        ));
    }
    out.push(
        "/// Every configuration, lifecycle and artifact Kind.\npub const KINDS: &[Kind] = &["
            .to_string(),
    );
    out.extend(lines);
    out.push("];".to_string());
    Ok(out.join("\n") + "\n")
}

/// `ReleaseBundleV2Promotion` -> `release bundle v2 promotion`.
fn words(kind: &str) -> String {
    let mut s = String::new();
    for (i, c) in kind.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push(' ');
        }
        s.push(c.to_ascii_lowercase());
    }
    s
}

/// The `Field` lines of `fields` (nested blocks written to `out` first).
fn field_list(
    kind: &str,
    prefix: &str,
    fields: &[Value],
    skip: &[String],
    overrides: &Overrides,
    out: &mut Vec<String>,
) -> Result<String> {
    let mut lines = Vec::new();
    for f in fields {
        let tf = str_of(f, "tf")?;
        if skip.iter().any(|s| s == tf) || (tf == "id" && opt_str(f, "wire").is_none()) {
            continue;
        }
        lines.push(format!("    {},", field(kind, prefix, f, overrides, out)?));
    }
    Ok(lines.join("\n"))
}

/// The `Field` expression of one catalog field of `kind`.
fn field(
    kind: &str,
    prefix: &str,
    f: &Value,
    overrides: &Overrides,
    out: &mut Vec<String>,
) -> Result<String> {
    let tf = str_of(f, "tf")?;
    let mut m: Map<String, Value> = f.as_object().context("a field is not an object")?.clone();
    let mut flags: Vec<String> = Vec::new();
    let mut norm = String::new();
    for o in &overrides.configuration_fields {
        if o.applies(tf, kind) {
            o.apply(&mut m, &mut flags, &mut norm);
        }
    }
    let f = Value::Object(m);
    let wire = match opt_str(&f, "wire") {
        Some(w) => format!("Some({})", rs(w)),
        None => "None".to_string(),
    };
    let ty = match str_of(&f, "type")? {
        "string" => "Ty::Str".to_string(),
        "bool" => "Ty::Bool".into(),
        "int" | "number" => "Ty::Int".into(),
        "set<string>" => "Ty::Set".into(),
        "list<string>" => "Ty::List".into(),
        "map<string>" => "Ty::Map(MapWire::Object)".into(),
        "map<list<string>>" | "map<set<string>>" => "Ty::Map(MapWire::Lists)".into(),
        t @ ("object" | "set<object>" | "list<object>") => {
            let cname = format!("{prefix}_{}", const_name(tf));
            // A nested field's override context is `<Kind>.<block path>`.
            let inner = format!("{kind}.{tf}");
            let list = field_list(&inner, &cname, arr(&f, "children")?, &[], overrides, out)?;
            out.push(format!(
                "/// `{kind}`: the elements of `{tf}`.\npub const {cname}: &[Field] = &[\n{list}\n];\n"
            ));
            match t {
                "object" => format!("Ty::Object({cname})"),
                "set<object>" => format!("Ty::ObjSet({cname})"),
                _ => format!("Ty::ObjList({cname})"),
            }
        }
        other => bail!("{kind}.{tf}: unknown type {other}"),
    };
    let mut s = format!(
        "Field::new({}, {}, {wire}, {ty})",
        rs(str_of(&f, "crd")?),
        rs(tf)
    );
    let status_only = truthy(f.get("status_only"));
    if status_only {
        s.push_str(".status_only()");
    } else {
        if truthy(f.get("required")) {
            s.push_str(".required()");
        }
        if truthy(f.get("sensitive")) {
            s.push_str(".sensitive().write_only()");
        } else if truthy(f.get("write_only")) {
            s.push_str(".write_only()");
        }
        if truthy(f.get("immutable")) {
            s.push_str(".immutable()");
        }
        if truthy(f.get("from_name")) {
            s.push_str(".from_name()");
        }
        match f.get("default").filter(|d| !d.is_null()) {
            Some(d) => s.push_str(&format!(".default({})", dv(d)?)),
            None if truthy(f.get("computed"))
                && !truthy(f.get("required"))
                && !flags.iter().any(|x| x == "ignore_unset") =>
            {
                s.push_str(".late_init()");
            }
            None => {}
        }
    }
    for fl in &flags {
        match fl.as_str() {
            "ignore_unset" => s.push_str(".ignore_unset()"),
            "late_init" if !s.contains(".late_init()") => s.push_str(".late_init()"),
            _ => {}
        }
    }
    if !norm.is_empty() {
        s.push_str(&format!(".norm({norm})"));
    }
    let suffix = crate::secret_ref_suffix(&f, str_of(&f, "crd")?, &s);
    s.push_str(&suffix);
    s.push_str(&format!(
        ".doc({})",
        rs(opt_str(&f, "description").unwrap_or(""))
    ));
    Ok(s)
}
