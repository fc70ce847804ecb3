//! `providers/artifactory/src/webhook/tables.rs`: the webhook Kinds (the `webhook` group of
//! `artifactory-other.json`).
//!
//! The two handler bases (webhook and custom webhook) become a template const and a handler
//! const each (the handler gets the constant `handlerType` member), each distinct criteria
//! block one `*_CRITERIA` field (with its admission rules from the overrides), and every Kind
//! one `k!` line with its event domain and event types.

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::overrides::Overrides;
use crate::{arr, const_name, dv, opt_str, rs, str_of, truthy};

/// The catalog file holding the webhook Kinds.
pub const CATALOG_FILE: &str = "artifactory-other.json";

/// The text before the generated declarations (imports and macro).
const HEADER: &str = include_str!("webhook_header.txt");

/// The context of the criteria block's fields in `catalog/overrides.json`.
const CRITERIA_CONTEXT: &str = "criteria";

pub fn generate(catalog: &Value, overrides: &Overrides) -> Result<String> {
    let templates = catalog
        .get("templates")
        .and_then(Value::as_object)
        .context("the catalog has no templates")?;
    let kinds: Vec<&Value> = arr(catalog, "kinds")?
        .iter()
        .filter(|k| opt_str(k, "group") == Some("webhook"))
        .collect();
    ensure!(!kinds.is_empty(), "no webhook Kinds in the catalog");
    let mut out = vec![HEADER.to_string()];

    // The handler bases, in catalog order.
    for (tpl, fields) in templates {
        if !kinds.iter().any(|k| opt_str(k, "extends") == Some(tpl)) {
            continue;
        }
        let name = const_name(tpl);
        let handler_type = tpl.strip_suffix("-base").unwrap_or(tpl);
        let mut lines = Vec::new();
        for f in fields.as_array().context("a template is not an array")? {
            match str_of(f, "tf")? {
                "key" => {}
                "handler" => {
                    let mut children = arr(f, "children")?
                        .iter()
                        .map(|c| field(c, tpl, None, overrides))
                        .collect::<Result<Vec<_>>>()?;
                    children.push(format!(
                        "Field::new(\"handlerType\", \"handler_type\", Some(\"handler_type\"), Ty::Str).constant(Dv::Str({})).doc(\"The handler type (constant).\")",
                        rs(handler_type)
                    ));
                    let cname = format!("{name}_HANDLER");
                    out.push(format!(
                        "/// The handler of template `{tpl}`.\npub const {cname}: &[Field] = &[\n{}\n];\n",
                        indent(&children)
                    ));
                    lines.push(field(
                        f,
                        tpl,
                        Some(&format!("Ty::ObjSet({cname})")),
                        overrides,
                    )?);
                }
                _ => lines.push(field(f, tpl, None, overrides)?),
            }
        }
        out.push(format!(
            "/// Template `{tpl}`.\npub const {name}: &[Field] = &[\n{}\n];\n",
            indent(&lines)
        ));
    }

    // The criteria blocks, one per distinct set of criteria fields.
    let mut seen: Vec<(&Value, String)> = Vec::new();
    let mut kind_lines = Vec::new();
    for k in &kinds {
        let kind = str_of(k, "kind")?;
        let mut crit_name = String::new();
        if let Some(c) = arr(k, "fields")?
            .iter()
            .find(|f| opt_str(f, "tf") == Some("criteria"))
        {
            let children = c.get("children").context("criteria without children")?;
            match seen.iter().find(|(v, _)| *v == children) {
                Some((_, n)) => crit_name.clone_from(n),
                None => {
                    let n = criteria_block(c, overrides, &mut out)?;
                    seen.push((children, n.clone()));
                    crit_name = n;
                }
            }
        }
        let extends = str_of(k, "extends")?;
        let events = arr(k, "event_types")?
            .iter()
            .map(|e| e.as_str().map(rs).context("an event type is not a string"))
            .collect::<Result<Vec<_>>>()?;
        let domain = str_of(k, "domain")?;
        let doc = format!(
            "A {} on {domain} events (an Event service subscription).",
            extends
                .strip_suffix("-base")
                .unwrap_or(extends)
                .replace('-', " ")
        );
        kind_lines.push(format!(
            "    k!({kind}, {}, {}, [{crit_name}], [{}], {}),",
            rs(domain),
            const_name(extends),
            events.join(", "),
            rs(&doc)
        ));
    }
    out.push("/// Every webhook Kind.\npub const KINDS: &[Kind] = &[".to_string());
    out.extend(kind_lines);
    out.push("];".to_string());
    Ok(out.join("\n") + "\n")
}

/// Write the consts of one criteria block; returns its const name.
fn criteria_block(c: &Value, overrides: &Overrides, out: &mut Vec<String>) -> Result<String> {
    let children = arr(c, "children")?;
    let has = |tf: &str| children.iter().any(|x| opt_str(x, "tf") == Some(tf));
    let (name, domains) = if has("any_local") {
        ("REPO_CRITERIA", "repo")
    } else if has("any_build") {
        ("BUILD_CRITERIA", "build")
    } else if has("registered_release_bundle_names") {
        ("RELEASE_BUNDLE_CRITERIA", "rb")
    } else if has("selected_release_bundles") {
        ("RELEASE_BUNDLE_V2_CRITERIA", "rbv2")
    } else {
        ("PROMOTION_CRITERIA", "promo")
    };
    let fields = children
        .iter()
        .map(|x| field(x, CRITERIA_CONTEXT, None, overrides))
        .collect::<Result<Vec<_>>>()?;
    out.push(format!(
        "/// The criteria of the {domains} domains.\npub const {name}_FIELDS: &[Field] = &[\n{}\n];\n",
        indent(&fields)
    ));
    let mut rules = Vec::new();
    for r in &overrides.criteria_rules {
        if r.applies(name) {
            rules.extend(r.rules.iter().cloned());
        }
    }
    let mut with_rules = String::new();
    if !rules.is_empty() {
        let lines: Vec<String> = rules
            .iter()
            .map(|(cel, msg)| format!("Rule {{ cel: {}, message: {} }}", rs(cel), rs(msg)))
            .collect();
        out.push(format!(
            "/// The rules of the {domains} criteria.\npub const {name}_RULES: &[Rule] = &[\n{}\n];\n",
            indent(&lines)
        ));
        with_rules = format!(".rules({name}_RULES)");
    }
    out.push(format!(
        "/// The `criteria` block of the {domains} domains.\npub const {name}: Field = Field::new(\"criteria\", \"criteria\", Some(\"event_filter.criteria\"), Ty::Block({name}_FIELDS)).required(){with_rules}.doc({});\n",
        rs(opt_str(c, "description").unwrap_or(""))
    ));
    Ok(name.to_string())
}

/// `    line,` per line.
fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    {l},"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `Field` expression of one catalog field in context `ctx`; `ty` replaces the type.
fn field(f: &Value, ctx: &str, ty: Option<&str>, overrides: &Overrides) -> Result<String> {
    let tf = str_of(f, "tf")?;
    let mut m: Map<String, Value> = f.as_object().context("a field is not an object")?.clone();
    let mut enums = Vec::new();
    for o in &overrides.webhook_fields {
        if o.applies(tf, ctx) {
            let (mut flags, mut norm) = (Vec::new(), String::new());
            o.apply(&mut m, &mut flags, &mut norm);
            ensure!(
                flags.is_empty() && norm.is_empty(),
                "webhook overrides cannot set flags or a norm ({tf})"
            );
            if let Some(e) = &o.enums {
                enums.clone_from(e);
            }
        }
    }
    let f = Value::Object(m);
    let wire = match opt_str(&f, "wire") {
        Some(w) => format!("Some({})", rs(w)),
        None => "None".to_string(),
    };
    let ty = match ty {
        Some(t) => t.to_string(),
        None => ty_of(str_of(&f, "type")?)?.to_string(),
    };
    let mut s = format!(
        "Field::new({}, {}, {wire}, {ty})",
        rs(str_of(&f, "crd")?),
        rs(tf)
    );
    for attr in ["required", "sensitive", "write_only"] {
        if truthy(f.get(attr)) {
            s.push_str(&format!(".{attr}()"));
        }
    }
    if let Some(d) = f.get("default").filter(|d| !d.is_null()) {
        s.push_str(&format!(".default({})", dv(d)?));
    }
    if !enums.is_empty() {
        let e: Vec<String> = enums.iter().map(|x| rs(x)).collect();
        s.push_str(&format!(".enums(&[{}])", e.join(", ")));
    }
    s.push_str(&format!(
        ".doc({})",
        rs(opt_str(&f, "description").unwrap_or(""))
    ));
    Ok(s)
}

fn ty_of(t: &str) -> Result<&'static str> {
    Ok(match t {
        "string" => "Ty::Str",
        "bool" => "Ty::Bool",
        "int" | "number" => "Ty::Int",
        "set<string>" => "Ty::Set",
        "list<string>" => "Ty::List",
        "map<string>" => "Ty::Map(MapWire::NameValue)",
        other => bail!("unknown webhook field type {other}"),
    })
}
