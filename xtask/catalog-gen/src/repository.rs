//! `providers/artifactory/src/repository/tables.rs`: the repository Kinds.
//!
//! Shared field sets (class bases and mixins) become one `pub const` each, nested blocks one
//! `*_FIELDS` const, Kind-specific fields one const each (shared when two Kinds declare the
//! very same field), and every Kind one `k!` line.
//!
//! Per field, the generic rules (from the catalog as extracted) come first: a field the
//! server fills when unset (computed, no default, not output-only, not secret) is
//! late-initialised, and allowed values come from the notes ("One of a, b" / "Values a, b").
//! Then the matching `catalog/overrides.json` entries apply, in file order.

use std::collections::HashMap;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::overrides::Overrides;
use crate::{arr, const_name, dv, opt_str, rs, str_of, truthy};

/// The repository catalog files: the first holds the templates; each later one adds Kinds
/// that use them.
pub const CATALOG_FILES: &[&str] = &[
    "artifactory-repository.json",
    "artifactory-repository-extra.json",
];

/// The text before the generated declarations (imports and macros).
const HEADER: &str = include_str!("repository_header.txt");

/// The class order of the `KINDS` list (then Kinds sort by name within a class).
const CLASS_ORDER: &[&str] = &["local", "remote", "virtual", "federated"];

struct Gen<'a> {
    overrides: &'a Overrides,
    /// Nested block field sets by const name, in first-seen order.
    children: Vec<(String, Vec<String>)>,
    /// Kind-specific field consts: expression -> name, and the const lines in order.
    kfield_names: HashMap<String, String>,
    kfield_out: Vec<String>,
}

pub fn generate(catalogs: &[Value], overrides: &Overrides) -> Result<String> {
    let (first, _) = catalogs.split_first().context("no repository catalog")?;
    let templates = first
        .get("templates")
        .and_then(Value::as_object)
        .context("the repository catalog has no templates")?;
    let mut gen_ = Gen {
        overrides,
        children: Vec::new(),
        kfield_names: HashMap::new(),
        kfield_out: Vec::new(),
    };
    let mut out = vec![HEADER.to_string()];

    let mut template_consts = HashMap::new();
    for (tname, fields) in templates {
        let cname = const_name(tname);
        template_consts.insert(tname.as_str(), cname.clone());
        let mut s = format!("/// Template `{tname}`.\npub const {cname}: &[Field] = &[\n");
        for f in fields.as_array().context("a template is not an array")? {
            if truthy(f.get("crd")) {
                s.push_str(&format!("    {},\n", gen_.field_expr(f, tname)?));
            }
        }
        s.push_str("];\n");
        out.push(s);
    }

    // Kind-specific fields are named in catalog order, file by file, so that a Kind added by
    // a later file never renames a field of an earlier one.
    let mut kinds = Vec::new();
    for catalog in catalogs {
        for k in arr(catalog, "kinds")? {
            let kind = str_of(k, "kind")?;
            let mut names = Vec::new();
            for f in arr(k, "fields")? {
                if truthy(f.get("crd")) {
                    names.push(gen_.kfield(f, kind)?);
                }
            }
            kinds.push((k, names));
        }
    }
    let key = |k: &Value| -> Result<(usize, String)> {
        let rclass = str_of(k, "rclass")?;
        let class = CLASS_ORDER
            .iter()
            .position(|c| *c == rclass)
            .with_context(|| format!("unknown rclass {rclass}"))?;
        Ok((class, str_of(k, "kind")?.to_string()))
    };
    let mut keyed = kinds
        .into_iter()
        .map(|(k, names)| Ok((key(k)?, k, names)))
        .collect::<Result<Vec<_>>>()?;
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen_kinds = std::collections::HashSet::new();
    let mut kind_lines = Vec::new();
    for (_, k, names) in keyed {
        ensure!(
            seen_kinds.insert(str_of(k, "kind")?),
            "duplicate Kind {}",
            str_of(k, "kind")?
        );
        kind_lines.push(gen_.kind_line(k, &names, &template_consts)?);
    }

    for (name, body) in &gen_.children {
        let mut s = format!("/// Nested block fields.\npub const {name}: &[Field] = &[\n");
        for e in body {
            s.push_str(&format!("    {e},\n"));
        }
        s.push_str("];\n");
        out.push(s);
    }
    out.push(format!(
        "// Kind-specific fields (shared where two Kinds declare the same field).\n{}",
        gen_.kfield_out.concat()
    ));
    out.push(format!(
        "/// Every repository Kind: `k!(Kind, class, packageType, extends, [mixins], [own fields],\n\
         /// {{default overrides by Terraform name}}, {{fixed body members besides rclass/packageType}})`.\n\
         pub const KINDS: &[Kind] = &[\n{}];\n",
        kind_lines.concat()
    ));
    Ok(out.join("\n"))
}

impl Gen<'_> {
    /// The `Field` expression of one catalog field in context `ctx` (a template name, a Kind
    /// name, or `member` inside the federated member block).
    fn field_expr(&mut self, f: &Value, ctx: &str) -> Result<String> {
        let mut m: Map<String, Value> = f.as_object().context("a field is not an object")?.clone();
        let tf = str_of(f, "tf")?.to_string();
        let mut flags = Vec::new();
        let has_default = |m: &Map<String, Value>| m.get("default").is_some_and(|d| !d.is_null());
        if truthy(m.get("computed"))
            && !has_default(&m)
            && !truthy(m.get("status_only"))
            && !truthy(m.get("sensitive"))
        {
            flags.push("late_init".to_string());
        }
        let mut norm = "Norm::Plain".to_string();
        let mut enums = enums_from_notes(opt_str(f, "notes").unwrap_or(""));
        let mut min = None;
        let mut requires = None;
        for o in &self.overrides.repository_fields {
            if o.applies(&tf, ctx) {
                o.apply(&mut m, &mut flags, &mut norm);
                if let Some(e) = &o.enums {
                    enums.clone_from(e);
                }
                min = o.min.or(min);
                requires = o.requires.clone().or(requires);
            }
        }
        let f = Value::Object(m);
        let wire = match f.get("wire") {
            w if truthy(w) => format!("Some({})", rs(str_of(&f, "wire")?)),
            _ => "None".to_string(),
        };
        let ty = self.ty_of(&f, ctx)?;
        let mut s = format!(
            "Field::new({}, {}, {wire}, {ty})",
            rs(str_of(&f, "crd")?),
            rs(&tf)
        );
        if let Some(d) = f.get("default").filter(|d| !d.is_null()) {
            s.push_str(&format!(".default({})", dv(d)?));
        }
        for attr in [
            "required",
            "sensitive",
            "write_only",
            "immutable",
            "status_only",
        ] {
            if truthy(f.get(attr)) {
                s.push_str(&format!(".{attr}()"));
            }
        }
        for fl in &flags {
            s.push_str(&format!(".{fl}()"));
        }
        if norm != "Norm::Plain" {
            s.push_str(&format!(".norm({norm})"));
        }
        if !enums.is_empty() {
            let e: Vec<String> = enums.iter().map(|x| rs(x)).collect();
            s.push_str(&format!(".enums(&[{}])", e.join(", ")));
        }
        if let Some(n) = min {
            s.push_str(&format!(".min({n})"));
        }
        if let Some(g) = requires {
            s.push_str(&format!(".requires({})", rs(&g)));
        }
        s.push_str(&format!(
            ".doc({})",
            rs(opt_str(&f, "description").unwrap_or(""))
        ));
        Ok(s)
    }

    fn ty_of(&mut self, f: &Value, ctx: &str) -> Result<String> {
        let t = str_of(f, "type")?;
        Ok(match t {
            "string" => "Ty::Str".into(),
            "bool" => "Ty::Bool".into(),
            "int" => "Ty::Int".into(),
            "list<string>" => "Ty::List".into(),
            "set<string>" => "Ty::Set".into(),
            "list<object>" | "set<object>" | "block" => {
                let name = format!("{}_FIELDS", const_name(str_of(f, "crd")?));
                let child_ctx = if str_of(f, "tf")? == "member" {
                    "member"
                } else {
                    ctx
                };
                let body = arr(f, "children")?
                    .iter()
                    .map(|c| self.field_expr(c, child_ctx))
                    .collect::<Result<Vec<_>>>()?;
                match self.children.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, b)) => {
                        ensure!(
                            *b == body,
                            "two different nested blocks would share the name {name}"
                        );
                    }
                    None => self.children.push((name.clone(), body)),
                }
                match t {
                    "block" => format!("Ty::Block({name})"),
                    "set<object>" => format!("Ty::ObjSet({name})"),
                    _ => format!("Ty::ObjList({name})"),
                }
            }
            other => bail!("unknown field type {other}"),
        })
    }

    /// The const name of a Kind-specific field (declared on first use).
    fn kfield(&mut self, f: &Value, kind: &str) -> Result<String> {
        let e = self.field_expr(f, kind)?;
        if let Some(n) = self.kfield_names.get(&e) {
            return Ok(n.clone());
        }
        let base = const_name(str_of(f, "tf")?);
        let taken = |n: &str| self.kfield_names.values().any(|v| v == n);
        let mut name = base.clone();
        if taken(&name) {
            name = format!("{base}_{}", class_word(kind).to_uppercase());
        }
        if taken(&name) {
            name = format!(
                "{base}_{}",
                const_name(kind.strip_suffix("Repository").unwrap_or(kind))
            );
        }
        ensure!(!taken(&name), "no free const name for {base} of {kind}");
        self.kfield_out
            .push(format!("const {name}: Field = {e};\n"));
        self.kfield_names.insert(e, name.clone());
        Ok(name)
    }

    fn kind_line(
        &self,
        k: &Value,
        names: &[String],
        template_consts: &HashMap<&str, String>,
    ) -> Result<String> {
        let kind = str_of(k, "kind")?;
        let tconst = |t: &str| {
            template_consts
                .get(t)
                .cloned()
                .with_context(|| format!("{kind}: unknown template {t}"))
        };
        let mixins = arr(k, "mixins")?
            .iter()
            .map(|m| tconst(m.as_str().context("a mixin is not a string")?))
            .collect::<Result<Vec<_>>>()?;
        let mut defaults = Vec::new();
        if let Some(ov) = k.get("default_overrides").and_then(Value::as_object) {
            for (tf, d) in ov {
                defaults.push(format!("({}, {})", rs(tf), dv(d)?));
            }
        }
        let mut fixed_body = k
            .get("fixed_body")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut rules = Vec::new();
        for o in &self.overrides.repository_kinds {
            if o.applies(kind) {
                for (w, v) in &o.fixed_body {
                    fixed_body.insert(w.clone(), v.clone());
                }
                for (cel, message) in &o.rules {
                    rules.push(format!(
                        "Rule {{ cel: {}, message: {} }}",
                        rs(cel),
                        rs(message)
                    ));
                }
            }
        }
        let rules = if rules.is_empty() {
            String::new()
        } else {
            format!(", rules [{}]", rules.join(", "))
        };
        let mut fixed = Vec::new();
        for (w, v) in &fixed_body {
            if w != "rclass" && w != "packageType" {
                fixed.push(format!("({}, {})", rs(w), dv(v)?));
            }
        }
        Ok(format!(
            "    k!({kind}, {}, {}, {}, [{}], [{}], {{{}}}, {{{}}}{rules}),\n",
            capitalize(str_of(k, "rclass")?),
            rs(str_of(k, "package_type")?),
            tconst(str_of(k, "extends")?)?,
            mixins.join(", "),
            names.join(", "),
            defaults.join(", "),
            fixed.join(", ")
        ))
    }
}

/// The leading capitalised word of a Kind name (`Remote` of `RemoteNPMRepository`).
fn class_word(kind: &str) -> &str {
    let mut end = 0;
    for (i, c) in kind.char_indices() {
        let ok = if i == 0 {
            c.is_ascii_uppercase()
        } else {
            c.is_ascii_lowercase()
        };
        if !ok {
            break;
        }
        end = i + c.len_utf8();
    }
    &kind[..end]
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first
            .to_uppercase()
            .chain(c.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// Allowed values stated in the notes: the first "One of a, b[, c...]" or "Values a, b[...]"
/// (at least two names of letters, digits, `_` and `-`, separated by ", ").
fn enums_from_notes(notes: &str) -> Vec<String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    for (i, _) in notes.char_indices() {
        let rest = &notes[i..];
        let Some(list) = rest
            .strip_prefix("One of ")
            .or_else(|| rest.strip_prefix("Values "))
        else {
            continue;
        };
        let mut names = Vec::new();
        let mut s = list;
        loop {
            let n = s.find(|c: char| !is_name(c)).unwrap_or(s.len());
            if n == 0 {
                break;
            }
            names.push(s[..n].to_string());
            s = &s[n..];
            match s.strip_prefix(", ") {
                Some(next) if next.starts_with(is_name) => s = next,
                _ => break,
            }
        }
        if names.len() >= 2 {
            return names;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_come_from_the_first_list_in_the_notes() {
        assert_eq!(
            enums_from_notes("Values x. One of a, b-c, d_e. Values f, g"),
            ["a", "b-c", "d_e"]
        );
        assert_eq!(
            enums_from_notes("One of a or b, Values c"),
            Vec::<String>::new()
        );
        assert_eq!(enums_from_notes("One of a,b. Values c, d,"), ["c", "d"]);
    }

    #[test]
    fn class_words() {
        assert_eq!(class_word("RemoteNPMRepository"), "Remote");
        assert_eq!(capitalize("federated"), "Federated");
    }
}
