//! `providers/artifactory/src/access/tables.rs`: the users, security and replication Kinds
//! (groups `user`, `security` and `replication` of `artifactory-other.json`).
//!
//! One `k!` line per Kind with its group and identifier strategy, one const per Kind's own
//! field list and per nested block, and the `user-base` template shared by the three user
//! Kinds. The identifying field of a `name` Kind is not a parameter (the external name is the
//! identifier, as in Upjet): it becomes the Kind's `id_wire`. Corrections come from the
//! `access` section of `catalog/overrides.json` (parsed here: it is this family's own).

use std::cell::Cell;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::{arr, dv, opt_str, rs, str_of, truthy};

/// The catalog file holding these Kinds.
pub const CATALOG_FILE: &str = "artifactory-other.json";

/// The groups of this family.
pub const GROUPS: &[&str] = &["user", "security", "replication"];

/// The text before the generated declarations (imports and macro).
const HEADER: &str = include_str!("access_header.txt");

/// Catalog attributes an override may replace.
const SETTABLE: &[&str] = &[
    "default",
    "status_only",
    "required",
    "sensitive",
    "immutable",
    "computed",
    "type",
    "wire",
    "secret_ref",
    "description",
];

/// A correction of one field (by Terraform name) in some Kinds or everywhere.
#[derive(Debug)]
struct FieldFix {
    field: String,
    contexts: Option<Vec<String>>,
    set: Map<String, Value>,
    /// A generated value of the create answer, published in the connection Secret.
    connection: bool,
    /// How it is compared (a `Norm` expression, as in the other sections' overrides).
    norm: Option<String>,
    enums: Vec<String>,
    rules: Vec<(String, String)>,
    used: Cell<usize>,
}

/// A correction of one Kind.
#[derive(Debug)]
struct KindFix {
    kind: String,
    /// `{"spec_field": crd}` or `{"singleton": constant}`.
    identifier: Option<Value>,
    rules: Vec<(String, String)>,
    /// The Kind's own hooks (a name of the family's `hooks` module), in place of `HOOKS`.
    hooks: Option<String>,
    used: Cell<usize>,
}

#[derive(Debug, Default)]
struct Fixes {
    fields: Vec<FieldFix>,
    kinds: Vec<KindFix>,
}

fn rules_of(v: Option<&Value>) -> Result<Vec<(String, String)>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    v.as_array()
        .context("`rules` is not an array")?
        .iter()
        .map(|r| {
            Ok((
                str_of(r, "cel")?.to_string(),
                str_of(r, "message")?.to_string(),
            ))
        })
        .collect()
}

fn strings(v: Option<&Value>) -> Result<Vec<String>> {
    arr_opt(v)?
        .iter()
        .map(|x| x.as_str().map(str::to_string).context("not a string"))
        .collect()
}

fn arr_opt(v: Option<&Value>) -> Result<&[Value]> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => bail!("not an array: {other}"),
    }
}

impl Fixes {
    fn parse(overrides: &Value) -> Result<Self> {
        let Some(section) = overrides.get("access") else {
            return Ok(Fixes::default());
        };
        let mut fixes = Fixes::default();
        for f in arr(section, "fields")? {
            let m = f
                .as_object()
                .context("an access field entry is not an object")?;
            for k in m.keys() {
                ensure!(
                    [
                        "field",
                        "in",
                        "set",
                        "connection",
                        "norm",
                        "enums",
                        "rules",
                        "reason"
                    ]
                    .contains(&k.as_str()),
                    "unknown member `{k}` in {f}"
                );
            }
            ensure!(
                opt_str(f, "reason").is_some_and(|r| !r.trim().is_empty()),
                "entry without a reason: {f}"
            );
            let set = f
                .get("set")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for k in set.keys() {
                ensure!(SETTABLE.contains(&k.as_str()), "`set` cannot change `{k}`");
            }
            fixes.fields.push(FieldFix {
                field: str_of(f, "field")?.to_string(),
                contexts: f.get("in").map(|c| strings(Some(c))).transpose()?,
                set,
                connection: truthy(f.get("connection")),
                norm: crate::overrides::norm_expr(f.get("norm"))?,
                enums: strings(f.get("enums"))?,
                rules: rules_of(f.get("rules"))?,
                used: Cell::new(0),
            });
        }
        for k in arr(section, "kinds")? {
            ensure!(
                opt_str(k, "reason").is_some_and(|r| !r.trim().is_empty()),
                "entry without a reason: {k}"
            );
            for member in k
                .as_object()
                .context("an access kind entry is not an object")?
                .keys()
            {
                ensure!(
                    ["kind", "identifier", "rules", "hooks", "reason"].contains(&member.as_str()),
                    "unknown member `{member}` in {k}"
                );
            }
            fixes.kinds.push(KindFix {
                kind: str_of(k, "kind")?.to_string(),
                identifier: k.get("identifier").cloned(),
                rules: rules_of(k.get("rules"))?,
                hooks: opt_str(k, "hooks").map(str::to_string),
                used: Cell::new(0),
            });
        }
        Ok(fixes)
    }

    fn check_all_used(&self) -> Result<()> {
        let mut unused: Vec<String> = self
            .fields
            .iter()
            .filter(|f| f.used.get() == 0)
            .map(|f| format!("access field {} in {:?}", f.field, f.contexts))
            .collect();
        unused.extend(
            self.kinds
                .iter()
                .filter(|k| k.used.get() == 0)
                .map(|k| format!("access kind {}", k.kind)),
        );
        ensure!(
            unused.is_empty(),
            "overrides that match nothing in the catalog:\n{}",
            unused.join("\n")
        );
        Ok(())
    }
}

/// `LocalRepositorySingleReplication` -> `LOCAL_REPOSITORY_SINGLE_REPLICATION`, `APIKey` ->
/// `API_KEY`.
pub fn screaming(camel: &str) -> String {
    let chars: Vec<char> = camel.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let boundary = i > 0
            && c.is_ascii_uppercase()
            && (chars[i - 1].is_ascii_lowercase()
                || chars[i - 1].is_ascii_digit()
                || chars[i - 1].is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
        if boundary {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// `access_token` -> `accessToken`.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in snake.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

struct Gen<'a> {
    fixes: &'a Fixes,
    /// Nested block consts, in order of first use.
    blocks: Vec<String>,
    /// (body, const name) of every nested block declared so far.
    seen: Vec<(String, String)>,
}

impl Gen<'_> {
    /// The `Field` expression of one catalog field of `kind` (a Kind or template name);
    /// `None` for a field that is not declared (the identifier, an unused output).
    fn field(&mut self, f: &Value, kind: &str, prefix: &str) -> Result<Option<String>> {
        let tf = str_of(f, "tf")?.to_string();
        let mut m = f.as_object().context("a field is not an object")?.clone();
        let (mut connection, mut norm, mut enums, mut rules) =
            (false, None, Vec::new(), Vec::new());
        for o in &self.fixes.fields {
            let hit = o.field == tf
                && o.contexts
                    .as_ref()
                    .is_none_or(|c| c.iter().any(|x| x == kind));
            if hit {
                o.used.set(o.used.get() + 1);
                for (k, v) in &o.set {
                    m.insert(k.clone(), v.clone());
                }
                connection |= o.connection;
                if o.norm.is_some() {
                    norm.clone_from(&o.norm);
                }
                if !o.enums.is_empty() {
                    enums.clone_from(&o.enums);
                }
                rules.extend(o.rules.iter().cloned());
            }
        }
        let f = Value::Object(m);
        let wire = match opt_str(&f, "wire") {
            Some(w) => format!("Some({})", rs(w)),
            None => "None".to_string(),
        };
        let crd = match opt_str(&f, "crd") {
            Some(c) => c.to_string(),
            None if connection => camel(&tf),
            None => return Ok(None),
        };
        let ty = self.ty_of(&f, kind, prefix)?;
        let mut s = format!("Field::new({}, {}, {wire}, {ty})", rs(&crd), rs(&tf));
        if connection {
            s.push_str(".status_only().connection()");
        } else {
            let status_only = truthy(f.get("status_only"));
            let sensitive = truthy(f.get("sensitive"));
            if let Some(d) = f.get("default").filter(|d| !d.is_null()) {
                s.push_str(&format!(".default({})", dv(d)?));
            }
            if truthy(f.get("required")) && !status_only {
                s.push_str(".required()");
            }
            if sensitive {
                // No sensitive input of these APIs is ever read back.
                s.push_str(".sensitive().write_only()");
            }
            if truthy(f.get("immutable")) {
                s.push_str(".immutable()");
            }
            if status_only {
                s.push_str(".status_only()");
            } else if truthy(f.get("computed"))
                && f.get("default").is_none_or(Value::is_null)
                && !sensitive
                && !truthy(f.get("required"))
            {
                s.push_str(".late_init()");
            }
            if let Some(n) = &norm {
                s.push_str(&format!(".norm({n})"));
            }
        }
        if !enums.is_empty() {
            let e: Vec<String> = enums.iter().map(|x| rs(x)).collect();
            s.push_str(&format!(".enums(&[{}])", e.join(", ")));
        }
        if !rules.is_empty() {
            let r: Vec<String> = rules
                .iter()
                .map(|(cel, msg)| format!("Rule {{ cel: {}, message: {} }}", rs(cel), rs(msg)))
                .collect();
            s.push_str(&format!(".rules(&[{}])", r.join(", ")));
        }
        let suffix = crate::secret_ref_suffix(&f, &crd, &s);
        s.push_str(&suffix);
        s.push_str(&format!(
            ".doc({})",
            rs(opt_str(&f, "description").unwrap_or(""))
        ));
        Ok(Some(s))
    }

    fn ty_of(&mut self, f: &Value, kind: &str, prefix: &str) -> Result<String> {
        let t = str_of(f, "type")?;
        Ok(match t {
            "string" => "Ty::Str".into(),
            "bool" => "Ty::Bool".into(),
            "int" => "Ty::Int".into(),
            "list<string>" => "Ty::List".into(),
            "set<string>" => "Ty::Set".into(),
            "object" | "block" | "list<object>" | "set<object>" => {
                let name = format!("{prefix}_{}_FIELDS", screaming(str_of(f, "crd")?));
                let mut body = Vec::new();
                for c in arr(f, "children")? {
                    if let Some(e) = self.field(c, kind, &name.replace("_FIELDS", ""))? {
                        body.push(format!("    {e},"));
                    }
                }
                let body = body.join("\n");
                // Identical blocks (a permission target's three sections) share one const.
                let name = match self.seen.iter().find(|(b, _)| *b == body) {
                    Some((_, n)) => n.clone(),
                    None => {
                        self.blocks.push(format!(
                            "/// Nested block fields.\npub const {name}: &[Field] = &[\n{body}\n];\n"
                        ));
                        self.seen.push((body, name.clone()));
                        name
                    }
                };
                match t {
                    "object" => format!("Ty::Object({name})"),
                    "block" => format!("Ty::Block({name})"),
                    "set<object>" => format!("Ty::ObjSet({name})"),
                    _ => format!("Ty::ObjList({name})"),
                }
            }
            other => bail!("unknown field type {other}"),
        })
    }
}

pub fn generate(catalog: &Value, overrides: &Value) -> Result<String> {
    let fixes = Fixes::parse(overrides)?;
    let kinds: Vec<&Value> = arr(catalog, "kinds")?
        .iter()
        .filter(|k| opt_str(k, "group").is_some_and(|g| GROUPS.contains(&g)))
        .collect();
    ensure!(
        kinds.len() == 20,
        "expected 20 Kinds, found {}",
        kinds.len()
    );
    let templates = catalog
        .get("templates")
        .and_then(Value::as_object)
        .context("the catalog has no templates")?;
    let mut g = Gen {
        fixes: &fixes,
        blocks: Vec::new(),
        seen: Vec::new(),
    };
    let mut out = vec![HEADER.to_string()];

    // The templates these Kinds extend (the identifier field is the external name).
    let mut used_templates: Vec<&str> =
        kinds.iter().filter_map(|k| opt_str(k, "extends")).collect();
    used_templates.dedup();
    let mut template_ids = Vec::new();
    for t in &used_templates {
        let fields = templates
            .get(*t)
            .and_then(Value::as_array)
            .with_context(|| format!("unknown template {t}"))?;
        let id_field = kinds
            .iter()
            .find(|k| opt_str(k, "extends") == Some(t))
            .and_then(|k| k["identifier"]["fields"].get(0))
            .and_then(Value::as_str);
        let mut lines = Vec::new();
        for f in fields {
            let tf = str_of(f, "tf")?;
            if tf == "id" || Some(tf) == id_field {
                if Some(tf) == id_field {
                    template_ids.push((*t, opt_str(f, "wire").map(str::to_string)));
                }
                continue;
            }
            if let Some(e) = g.field(f, t, &crate::const_name(t))? {
                lines.push(format!("    {e},"));
            }
        }
        out.push(format!(
            "/// Template `{t}`.\npub const {}: &[Field] = &[\n{}\n];\n",
            crate::const_name(t),
            lines.join("\n")
        ));
    }

    let mut kind_lines = Vec::new();
    for k in &kinds {
        let kind = str_of(k, "kind")?;
        let group = str_of(k, "group")?;
        let ident = &k["identifier"];
        let strategy = str_of(ident, "strategy")?;
        let id_field = ident["fields"].get(0).and_then(Value::as_str);
        let fixes_of: Vec<&KindFix> = fixes.kinds.iter().filter(|f| f.kind == kind).collect();
        for f in &fixes_of {
            f.used.set(f.used.get() + 1);
        }
        let hooks = match fixes_of.iter().find_map(|f| f.hooks.as_deref()) {
            Some(h) => format!(", hooks::{h}"),
            None => String::new(),
        };
        let mut id_wire: Option<String> = None;
        let mut skip_id = false;
        let id = match fixes_of.iter().find_map(|f| f.identifier.as_ref()) {
            Some(v) if v.get("spec_field").is_some() => {
                format!("Id::SpecField({})", rs(str_of(v, "spec_field")?))
            }
            Some(other) => bail!("{kind}: unknown identifier override {other}"),
            None => match strategy {
                "name" => {
                    skip_id = true;
                    id_wire = match opt_str(k, "extends") {
                        Some(t) => template_ids
                            .iter()
                            .find(|(n, _)| *n == t)
                            .and_then(|(_, w)| w.clone()),
                        None => arr(k, "fields")?
                            .iter()
                            .find(|f| opt_str(f, "tf") == id_field)
                            .and_then(|f| opt_str(f, "wire"))
                            .map(str::to_string),
                    };
                    "Id::Name".to_string()
                }
                "server-assigned" => "Id::ServerAssigned".to_string(),
                "singleton" => format!("Id::Singleton({})", rs(str_of(ident, "constant")?)),
                other => bail!("{kind}: unknown identifier strategy {other}"),
            },
        };
        let prefix = screaming(kind);
        let mut lines = Vec::new();
        for f in arr(k, "fields")? {
            let tf = str_of(f, "tf")?;
            if tf == "id" || (skip_id && Some(tf) == id_field) {
                continue;
            }
            if let Some(e) = g.field(f, kind, &prefix)? {
                lines.push(format!("    {e},"));
            }
        }
        out.append(&mut g.blocks);
        out.push(format!(
            "/// The own fields of `{kind}`.\npub const {prefix}_FIELDS: &[Field] = &[\n{}\n];\n",
            lines.join("\n")
        ));
        let rules: Vec<String> = fixes_of
            .iter()
            .flat_map(|f| f.rules.clone())
            .collect::<Vec<_>>()
            .iter()
            .map(|(cel, msg)| format!("Rule {{ cel: {}, message: {} }}", rs(cel), rs(msg)))
            .collect();
        let extends = match opt_str(k, "extends") {
            Some(t) => crate::const_name(t),
            None => "NONE".to_string(),
        };
        let id_wire = match id_wire {
            Some(w) => format!("Some({})", rs(&w)),
            None => "None".to_string(),
        };
        let doc = format!(
            "Artifactory {}.",
            str_of(k, "tf_resource")?
                .trim_start_matches("artifactory_")
                .replace('_', " ")
        );
        kind_lines.push(format!(
            "    k!({kind}, {}, {id}, {id_wire}, {extends}, {prefix}_FIELDS, {prefix}, [{}], {}{hooks}),",
            rs(group),
            rules.join(", "),
            rs(&doc)
        ));
    }
    fixes.check_all_used()?;
    out.push(
        "/// Every user, security and replication Kind: `k!(Kind, group, identifier, identifier\n\
         /// member, template, own fields, REST binding, [admission rules], description[, own\n\
         /// hooks])`.\n\
         pub const KINDS: &[Kind] = &["
            .to_string(),
    );
    out.extend(kind_lines);
    out.push("];".to_string());
    Ok(out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(screaming("APIKey"), "API_KEY");
        assert_eq!(
            screaming("LocalRepositorySingleReplication"),
            "LOCAL_REPOSITORY_SINGLE_REPLICATION"
        );
        assert_eq!(screaming("Keypair"), "KEYPAIR");
        assert_eq!(camel("access_token"), "accessToken");
    }
}
