//! `catalog/overrides.json`: the corrections and provider-side rules applied on top of the
//! catalog, each with its reason (see `catalog/README.md` for the format).

use std::cell::Cell;
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::{read_json, rs};

/// Flags an override may add to or drop from a field.
const FLAGS: &[&str] = &["ignore_unset", "late_init", "query"];
/// Catalog attributes of a field an override may replace.
const SETTABLE: &[&str] = &[
    "default",
    "status_only",
    "write_only",
    "required",
    "sensitive",
    "immutable",
    "computed",
    "type",
    "wire",
    "secret_ref",
    "description",
    "from_name",
];

/// A correction of one field (by Terraform name), in some contexts or everywhere.
#[derive(Debug)]
pub struct FieldOverride {
    /// The Terraform name of the field.
    pub field: String,
    /// Template names, Kind names or block contexts (`member`, `criteria`) it applies to;
    /// `None` = everywhere.
    pub contexts: Option<Vec<String>>,
    /// Catalog attributes replaced (after the generic rules derived from the catalog).
    pub set: Map<String, Value>,
    /// Derived flags removed.
    pub drop_flags: Vec<String>,
    /// Flags added (after the derived ones, once each).
    pub add_flags: Vec<String>,
    /// The comparison rule, as a Rust `Norm` expression.
    pub norm: Option<String>,
    /// The allowed values.
    pub enums: Option<Vec<String>>,
    /// The smallest allowed integer (a schema `minimum`).
    pub min: Option<i64>,
    /// The boolean field that must be true for this one to be set.
    pub requires: Option<String>,
    /// The wire member (Access families: a value the REST binding moves to a query
    /// parameter or reads from another member).
    pub wire: Option<String>,
    used: Cell<usize>,
    reason: String,
}

/// A correction of one Kind.
#[derive(Debug)]
pub struct KindOverride {
    pub kind: String,
    /// Members added to the fixed body.
    pub fixed_body: Map<String, Value>,
    /// Admission rules on the Kind's `forProvider`: (CEL expression, message).
    pub rules: Vec<(String, String)>,
    /// The Kind's description (its CRD's), replacing the generated one.
    pub description: Option<String>,
    /// The Kind's own hooks, in place of the family's `HOOKS` (whose family rules every Kind
    /// keeps): a type of the family's `hooks` module (the table binds `&hooks::<name>`).
    pub hooks: Option<String>,
    used: Cell<usize>,
}

/// A correction of one Xray Kind: its identifier strategy (`"name"`: the external name,
/// nothing in `forProvider`) and admission rules on its `forProvider`.
#[derive(Debug)]
pub struct XrayKind {
    pub kind: String,
    /// The strategy replacing the catalog's (`name` only).
    pub identifier: Option<String>,
    /// (CEL expression, message).
    pub rules: Vec<(String, String)>,
    /// The Kind's own hooks (a name of its group's `hooks` module), in place of `HOOKS`.
    pub hooks: Option<String>,
    pub used: Cell<usize>,
}

/// Admission rules of one webhook criteria block.
#[derive(Debug)]
pub struct CriteriaRules {
    pub criteria: String,
    /// (CEL expression, message).
    pub rules: Vec<(String, String)>,
    used: Cell<usize>,
}

/// The whole overrides file.
#[derive(Debug)]
pub struct Overrides {
    pub repository_fields: Vec<FieldOverride>,
    pub repository_kinds: Vec<KindOverride>,
    pub webhook_fields: Vec<FieldOverride>,
    pub criteria_rules: Vec<CriteriaRules>,
    /// provider-project's Access family (optional section `project`).
    pub project_fields: Vec<FieldOverride>,
    pub project_kinds: Vec<KindOverride>,
    /// provider-platform's Access family (optional section `platform`).
    pub platform_fields: Vec<FieldOverride>,
    pub platform_kinds: Vec<KindOverride>,
    /// provider-xray's field corrections (contexts: `<Kind or template>[.<block path>]`).
    pub xray_fields: Vec<FieldOverride>,
    /// provider-xray's added fields.
    pub xray_added: Vec<AddedFields>,
    /// provider-xray's Kind corrections (identifier strategy, admission rules).
    pub xray_kinds: Vec<XrayKind>,
    /// Field corrections of the configuration, lifecycle and artifact Kinds (contexts are
    /// Kind names for top-level fields, `<Kind>.<block path>` inside blocks); the section is
    /// optional.
    pub configuration_fields: Vec<FieldOverride>,
    /// Identifier corrections of those Kinds: (Kind, strategy, constant).
    pub configuration_ids: Vec<(String, String, String)>,
    /// The Kinds of those with their own hooks (`hooks` only).
    pub configuration_kinds: Vec<KindOverride>,
}

/// Fields the catalog lacks, added to some Kinds or templates (catalog field objects).
#[derive(Debug)]
pub struct AddedFields {
    /// Kind or template names.
    pub contexts: Vec<String>,
    /// The fields, in the catalog's format.
    pub fields: Vec<Value>,
    used: Cell<usize>,
}

impl AddedFields {
    /// Whether these fields go into `ctx` (counts the use).
    pub fn applies(&self, ctx: &str) -> bool {
        let hit = self.contexts.iter().any(|c| c == ctx);
        if hit {
            self.used.set(self.used.get() + 1);
        }
        hit
    }
}

impl FieldOverride {
    /// Whether this override applies to field `tf` in context `ctx` (counts the use).
    pub fn applies(&self, tf: &str, ctx: &str) -> bool {
        let hit = self.field == tf
            && self
                .contexts
                .as_ref()
                .is_none_or(|c| c.iter().any(|x| x == ctx));
        if hit {
            self.used.set(self.used.get() + 1);
        }
        hit
    }

    /// Apply to a field: replace attributes, then adjust `flags` and `norm`.
    pub fn apply(
        &self,
        field: &mut Map<String, Value>,
        flags: &mut Vec<String>,
        norm: &mut String,
    ) {
        for (k, v) in &self.set {
            field.insert(k.clone(), v.clone());
        }
        flags.retain(|f| !self.drop_flags.contains(f));
        for f in &self.add_flags {
            if !flags.contains(f) {
                flags.push(f.clone());
            }
        }
        if let Some(n) = &self.norm {
            norm.clone_from(n);
        }
    }
}

impl KindOverride {
    pub fn applies(&self, kind: &str) -> bool {
        let hit = self.kind == kind;
        if hit {
            self.used.set(self.used.get() + 1);
        }
        hit
    }
}

impl CriteriaRules {
    pub fn applies(&self, criteria: &str) -> bool {
        let hit = self.criteria == criteria;
        if hit {
            self.used.set(self.used.get() + 1);
        }
        hit
    }
}

impl Overrides {
    pub fn load(path: &Path) -> Result<Self> {
        let v = read_json(path)?;
        Self::parse(&v).with_context(|| format!("in {}", path.display()))
    }

    fn parse(v: &Value) -> Result<Self> {
        let section = |name: &str| -> Result<&Map<String, Value>> {
            v.get(name)
                .and_then(Value::as_object)
                .with_context(|| format!("missing object `{name}`"))
        };
        let repository = section("repository")?;
        let webhook = section("webhook")?;
        let empty = Map::new();
        let xray = v.get("xray").and_then(Value::as_object).unwrap_or(&empty);
        let project = v
            .get("project")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let platform = v
            .get("platform")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        Ok(Self {
            repository_fields: list(repository, "fields")?
                .iter()
                .map(field_override)
                .collect::<Result<_>>()
                .context("repository.fields")?,
            repository_kinds: list(repository, "kinds")?
                .iter()
                .map(kind_override)
                .collect::<Result<_>>()
                .context("repository.kinds")?,
            webhook_fields: list(webhook, "fields")?
                .iter()
                .map(field_override)
                .collect::<Result<_>>()
                .context("webhook.fields")?,
            criteria_rules: list(webhook, "criteria_rules")?
                .iter()
                .map(criteria_rules)
                .collect::<Result<_>>()
                .context("webhook.criteria_rules")?,
            xray_fields: list(xray, "fields")?
                .iter()
                .map(field_override)
                .collect::<Result<_>>()
                .context("xray.fields")?,
            xray_added: list(xray, "added_fields")?
                .iter()
                .map(|v| {
                    let m = entry(v, &["in", "fields"])?;
                    Ok(AddedFields {
                        contexts: strings(m.get("in"), "in")?,
                        fields: list(m, "fields")?.to_vec(),
                        used: Cell::new(0),
                    })
                })
                .collect::<Result<_>>()
                .context("xray.added_fields")?,
            xray_kinds: list(xray, "kinds")?
                .iter()
                .map(|v| {
                    let m = entry(v, &["kind", "identifier", "rules", "hooks"])?;
                    let identifier = match m.get("identifier") {
                        None => None,
                        Some(Value::String(s)) if s == "name" => Some(s.clone()),
                        Some(other) => bail!("unknown identifier override {other}"),
                    };
                    Ok(XrayKind {
                        kind: m
                            .get("kind")
                            .and_then(Value::as_str)
                            .with_context(|| format!("missing `kind` in {v}"))?
                            .to_string(),
                        identifier,
                        rules: match m.get("rules") {
                            None => Vec::new(),
                            Some(r) => rules(r)?,
                        },
                        hooks: match m.get("hooks") {
                            None => None,
                            Some(h) => Some(h.as_str().context("`hooks` is not a string")?.into()),
                        },
                        used: Cell::new(0),
                    })
                })
                .collect::<Result<_>>()
                .context("xray.kinds")?,
            project_fields: list(project, "fields")?
                .iter()
                .map(field_override)
                .collect::<Result<_>>()
                .context("project.fields")?,
            project_kinds: list(project, "kinds")?
                .iter()
                .map(kind_override)
                .collect::<Result<_>>()
                .context("project.kinds")?,
            platform_fields: list(platform, "fields")?
                .iter()
                .map(field_override)
                .collect::<Result<_>>()
                .context("platform.fields")?,
            platform_kinds: list(platform, "kinds")?
                .iter()
                .map(kind_override)
                .collect::<Result<_>>()
                .context("platform.kinds")?,
            configuration_fields: match v.get("configuration").and_then(Value::as_object) {
                None => Vec::new(),
                Some(c) => list(c, "fields")?
                    .iter()
                    .map(field_override)
                    .collect::<Result<_>>()
                    .context("configuration.fields")?,
            },
            configuration_ids: match v.get("configuration").and_then(Value::as_object) {
                None => Vec::new(),
                Some(c) => list(c, "identifiers")?
                    .iter()
                    .map(id_override)
                    .collect::<Result<_>>()
                    .context("configuration.identifiers")?,
            },
            configuration_kinds: match v.get("configuration").and_then(Value::as_object) {
                None => Vec::new(),
                Some(c) => list(c, "kinds")?
                    .iter()
                    .map(kind_override)
                    .collect::<Result<_>>()
                    .context("configuration.kinds")?,
            },
        })
    }

    /// Fail on an entry that matched nothing: a stale correction.
    pub fn check_all_used(&self) -> Result<()> {
        let mut unused = Vec::new();
        for a in &self.xray_added {
            if a.used.get() == 0 {
                unused.push(format!("added fields in {:?}", a.contexts));
            }
        }
        for f in self
            .repository_fields
            .iter()
            .chain(&self.webhook_fields)
            .chain(&self.xray_fields)
            .chain(&self.project_fields)
            .chain(&self.platform_fields)
            .chain(&self.configuration_fields)
        {
            if f.used.get() == 0 {
                unused.push(format!(
                    "field {} in {:?} ({})",
                    f.field, f.contexts, f.reason
                ));
            }
        }
        for k in self
            .repository_kinds
            .iter()
            .chain(&self.project_kinds)
            .chain(&self.platform_kinds)
            .chain(&self.configuration_kinds)
        {
            if k.used.get() == 0 {
                unused.push(format!("kind {}", k.kind));
            }
        }
        for k in &self.xray_kinds {
            if k.used.get() == 0 {
                unused.push(format!("xray kind {}", k.kind));
            }
        }
        for c in &self.criteria_rules {
            if c.used.get() == 0 {
                unused.push(format!("criteria {}", c.criteria));
            }
        }
        ensure!(
            unused.is_empty(),
            "overrides that match nothing in the catalog:\n{}",
            unused.join("\n")
        );
        Ok(())
    }
}

fn list<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a [Value]> {
    match m.get(key) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => bail!("`{key}` is not an array"),
    }
}

/// Reject members other than `allowed`, and require a non-empty `reason`.
fn entry<'a>(v: &'a Value, allowed: &[&str]) -> Result<&'a Map<String, Value>> {
    let m = v.as_object().context("an entry is not an object")?;
    for k in m.keys() {
        ensure!(
            k == "reason" || allowed.contains(&k.as_str()),
            "unknown member `{k}` in {v}"
        );
    }
    ensure!(
        m.get("reason")
            .and_then(Value::as_str)
            .is_some_and(|r| !r.trim().is_empty()),
        "entry without a reason: {v}"
    );
    Ok(m)
}

fn strings(v: Option<&Value>, what: &str) -> Result<Vec<String>> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .with_context(|| format!("`{what}` holds a non-string"))
            })
            .collect(),
        Some(_) => bail!("`{what}` is not an array"),
    }
}

fn field_override(v: &Value) -> Result<FieldOverride> {
    let m = entry(
        v,
        &[
            "field",
            "in",
            "set",
            "drop_flags",
            "add_flags",
            "norm",
            "enums",
            "min",
            "requires",
            "wire",
        ],
    )?;
    let field = m
        .get("field")
        .and_then(Value::as_str)
        .with_context(|| format!("missing `field` in {v}"))?
        .to_string();
    let set = match m.get("set") {
        None => Map::new(),
        Some(Value::Object(s)) => s.clone(),
        Some(_) => bail!("`set` is not an object in {v}"),
    };
    for k in set.keys() {
        ensure!(SETTABLE.contains(&k.as_str()), "`set` cannot change `{k}`");
    }
    let drop_flags = strings(m.get("drop_flags"), "drop_flags")?;
    let add_flags = strings(m.get("add_flags"), "add_flags")?;
    for f in drop_flags.iter().chain(&add_flags) {
        ensure!(FLAGS.contains(&f.as_str()), "unknown flag `{f}`");
    }
    let norm = norm_expr(m.get("norm"))?;
    Ok(FieldOverride {
        field,
        contexts: m.get("in").map(|c| strings(Some(c), "in")).transpose()?,
        set,
        drop_flags,
        add_flags,
        norm,
        enums: m
            .get("enums")
            .map(|e| strings(Some(e), "enums"))
            .transpose()?,
        min: match m.get("min") {
            None => None,
            Some(v) => Some(v.as_i64().context("`min` is not an integer")?),
        },
        requires: match m.get("requires") {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .context("`requires` is not a string")?
                    .to_string(),
            ),
        },
        wire: m.get("wire").and_then(Value::as_str).map(str::to_string),
        used: Cell::new(0),
        reason: m["reason"].as_str().unwrap_or_default().to_string(),
    })
}

/// `{kind, strategy, constant}`: a Kind's identifier strategy replaced.
fn id_override(v: &Value) -> Result<(String, String, String)> {
    let m = entry(v, &["kind", "strategy", "constant"])?;
    let s = |k: &str| -> Result<String> {
        Ok(m.get(k)
            .and_then(Value::as_str)
            .with_context(|| format!("missing `{k}` in {v}"))?
            .to_string())
    };
    Ok((s("kind")?, s("strategy")?, s("constant")?))
}

fn kind_override(v: &Value) -> Result<KindOverride> {
    let m = entry(v, &["kind", "fixed_body", "rules", "description", "hooks"])?;
    Ok(KindOverride {
        kind: m
            .get("kind")
            .and_then(Value::as_str)
            .with_context(|| format!("missing `kind` in {v}"))?
            .to_string(),
        fixed_body: m
            .get("fixed_body")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        rules: match m.get("rules") {
            None => Vec::new(),
            Some(r) => rules(r)?,
        },
        description: match m.get("description") {
            None => None,
            Some(d) => Some(
                d.as_str()
                    .context("`description` is not a string")?
                    .to_string(),
            ),
        },
        hooks: match m.get("hooks") {
            None => None,
            Some(h) => Some(h.as_str().context("`hooks` is not a string")?.to_string()),
        },
        used: Cell::new(0),
    })
}

/// `[{cel, message}]` as (CEL, message) pairs.
fn rules(v: &Value) -> Result<Vec<(String, String)>> {
    v.as_array()
        .context("`rules` is not an array")?
        .iter()
        .map(|r| {
            let cel = r
                .get("cel")
                .and_then(Value::as_str)
                .context("rule without `cel`")?;
            let msg = r
                .get("message")
                .and_then(Value::as_str)
                .context("rule without `message`")?;
            Ok((cel.to_string(), msg.to_string()))
        })
        .collect()
}

fn criteria_rules(v: &Value) -> Result<CriteriaRules> {
    let m = entry(v, &["criteria", "rules"])?;
    let rules = rules(m.get("rules").context("missing `rules`")?)?;
    Ok(CriteriaRules {
        criteria: m
            .get("criteria")
            .and_then(Value::as_str)
            .with_context(|| format!("missing `criteria` in {v}"))?
            .to_string(),
        rules,
        used: Cell::new(0),
    })
}

/// The `Norm` expression of an override's `norm` member: `"IgnoreCase"` or
/// `{"OnlyWhen": "enabled"}`.
pub(crate) fn norm_expr(v: Option<&Value>) -> Result<Option<String>> {
    Ok(match v {
        None => None,
        Some(Value::String(s)) => Some(format!("Norm::{s}")),
        Some(Value::Object(o)) if o.len() == 1 => {
            let (variant, arg) = o.iter().next().expect("one member");
            let arg = arg.as_str().context("a norm argument is not a string")?;
            Some(format!("Norm::{variant}({})", rs(arg)))
        }
        Some(other) => bail!("bad norm {other}"),
    })
}
