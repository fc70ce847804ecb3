//! Admission checks from the upstream validators: the rules the JFrog Terraform providers'
//! schemas state for a Kind (lengths, ranges, patterns, enums, list sizes, and the
//! cross-field rules ConflictsWith / ExactlyOneOf / AtLeastOneOf / RequiredWith), declared as
//! data (generated from `catalog/validators/*.json`) and added to the Kind's generated
//! `forProvider` / `initProvider` schema, so the API server refuses a manifest that breaks
//! one before the provider sees it, with 0 JFrog requests and a message naming the field.
//!
//! Single-field checks become OpenAPI keywords (`pattern`, `minLength`, `maxLength`,
//! `minimum`, `maximum`, `minItems`, `maxItems`, `enum`), which cost nothing in the API
//! server's CEL budget; what OpenAPI cannot say (forbidden values, unique members, the
//! cross-field rules) becomes a CEL rule with our own message. [`apply`] walks a path of CRD
//! names through objects and array elements alike, so a check is written once whatever the
//! field's nesting (an object or a list block).
//!
//! Where a CEL rule goes is decided here, from the schema ([`afford`]). kube-apiserver prices
//! every rule before it accepts a CRD (a rule's estimated cost times the number of places it
//! can run, at most 10,000,000 per rule and 100,000,000 per CRD), and prices a list without
//! `maxItems` as holding as many elements as a 3 MiB request can carry. Each rule is priced
//! with the API server's own estimate (`crd_schema::cost`) and stays in the CRD when the
//! server can afford it; any other rule is checked before any write instead
//! ([`Mode::BeforeWrite`]: the provider validates the resolved `forProvider` against the
//! strict schema, which carries every rule), with the same message, naming the field, and no
//! JFrog request.
//!
//! A rule that tests a field a reference can fill (`<field>Ref(s)` / `<field>Selector`, which
//! resolve after admission) treats the reference as setting it at admission; a hand-written
//! CEL rule reading such a field is skipped at admission while a reference is given. Both are
//! checked again, on the resolved values, before the first write.

use provider_runtime::managed::kind::ReferenceField;
use serde_json::{Value, json};

/// The checks of one Kind.
#[derive(Debug, Clone, Copy)]
pub struct KindChecks {
    /// The Kind name.
    pub kind: &'static str,
    /// Single-field checks: a dotted path of CRD names under `forProvider`, and its checks.
    pub fields: &'static [(&'static str, &'static [Check])],
    /// Cross-field rules: the dotted path of the object they sit on (`""` = `forProvider`),
    /// and the rule.
    pub rules: &'static [(&'static str, RuleCheck)],
    /// Late-initialised fields the rules may read all the same, because JFrog's values of
    /// them always satisfy the rules (the data says why).
    pub late_init_safe: &'static [&'static str],
    /// Checks on the identifier when it is the external name (which no CRD rule can read):
    /// patterns, formats and lengths, checked by the provider before any JFrog request.
    pub key: &'static [Check],
    /// Checks on the keys of a whole-Secret reference (a dotted path of CRD names, e.g.
    /// `handler.secretsSecretRef`): the keys become names JFrog checks (a custom webhook's
    /// secret names), and live in the Secret, which no CRD rule can read; checked by the
    /// provider once it has read the Secret, before any write.
    pub secret_keys: &'static [(&'static str, &'static [Check])],
}

/// A check on one field's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// The string matches this RE2 expression (anchored as upstream anchors it).
    Pattern(&'static str),
    /// A pattern with the text that says what it means (`an e-mail address`).
    Format(&'static str, &'static str),
    /// String length bounds, in characters.
    Length(Option<u64>, Option<u64>),
    /// Number bounds, inclusive.
    Range(Option<f64>, Option<f64>),
    /// Values the field may not take.
    Not(&'static [f64]),
    /// The allowed strings.
    OneOf(&'static [&'static str]),
    /// List size bounds.
    Items(Option<u64>, Option<u64>),
    /// List elements are unique by this member (`""`: the elements themselves).
    Unique(&'static str),
    /// The check applies to every element of a list of scalars.
    Each(&'static Check),
    /// (Identifiers only.) When this parameter is set and not empty, the identifier starts
    /// with its value and `-` (a project-level object's name: `<projectKey>-...`).
    PrefixedBy(&'static str),
    /// (Identifiers only.) When this parameter is set and not empty, its length, 1 and the
    /// identifier's length add up to at most this many characters (JFrog's own name is
    /// `<parameter>-<identifier>`).
    JoinedLength(&'static str, u64),
}

/// A rule across the fields of one object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuleCheck {
    /// At most one of these is set.
    Conflicts(&'static [&'static str]),
    /// Exactly one of these is set.
    ExactlyOneOf(&'static [&'static str]),
    /// At least one of these is set.
    AtLeastOneOf(&'static [&'static str]),
    /// When the first is set, all of the others are set too.
    RequiredWith(&'static str, &'static [&'static str]),
    /// When the CEL condition over the object (`self`) holds, all of these are set.
    RequiredWhen(&'static str, &'static [&'static str]),
    /// A CEL rule over the object (`self`) and its message.
    Cel(&'static str, &'static str),
}

/// A check that does not fit the schema it was written for: a path that names no field,
/// or a check of the wrong type for its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: check on `{path}`: {message}")]
pub struct CheckError {
    /// The Kind.
    pub kind: &'static str,
    /// The path of the check.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Where the CEL rules of a schema go ([`apply_as`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The CRD's schema: each rule where the API server can afford it, a reference counted
    /// as setting the field it fills.
    Admission,
    /// The strict schema the provider checks the resolved `forProvider` against before any
    /// write: every rule, references ignored (they are resolved by then).
    BeforeWrite,
}

/// How [`apply_as`] placed a Kind's checks (counted per check as written in the table).
/// Which of the CEL rules the CRD can afford is [`afford`]'s to decide.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// Checks that became OpenAPI keywords (`pattern`, bounds, `enum`, list type).
    pub openapi: usize,
    /// CEL rules in the schema.
    pub cel: usize,
}

/// The state of one [`apply_as`].
struct Placer<'a> {
    mode: Mode,
    refs: &'a [ReferenceField],
    placed: Placed,
}

impl Placer<'_> {
    fn place(&mut self, node: &mut Value, rule: String, message: String) {
        self.placed.cel += 1;
        push_rule(node, rule, message);
    }

    /// The references that fill fields of the object at `path` (none before a write).
    fn twins(&self, path: &str) -> Vec<&ReferenceField> {
        match self.mode {
            Mode::Admission => twins_at(self.refs, path),
            Mode::BeforeWrite => Vec::new(),
        }
    }
}

/// The references of `refs` that fill a field of the object at the dotted `path`.
fn twins_at<'a>(refs: &'a [ReferenceField], path: &str) -> Vec<&'a ReferenceField> {
    refs.iter()
        .filter(|r| match r.field.rsplit_once('.') {
            Some((parent, _)) => parent == path,
            None => path.is_empty(),
        })
        .collect()
}

/// How many places a schema node can appear in one object: the product of the `maxItems`
/// of the lists on its way (`None`: a list without one, which the API server prices as a
/// 3 MiB request full of elements).
type Cardinality = Option<u64>;

fn times(c: Cardinality, list: &Value) -> Cardinality {
    let max = list.get("maxItems").and_then(Value::as_u64)?;
    c.map(|c| c.saturating_mul(max))
}

/// The node a dotted path names in a parameters schema, stepping into array elements.
fn node_at<'a>(schema: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut node = schema;
    if path.is_empty() {
        return Some(node);
    }
    for seg in path.split('.') {
        node = element(node);
        node = node.get_mut("properties")?.get_mut(seg)?;
    }
    Some(node)
}

/// An array's element schema (the node itself for anything else).
fn element(node: &mut Value) -> &mut Value {
    if node.get("type").and_then(Value::as_str) == Some("array") {
        &mut node["items"]
    } else {
        node
    }
}

fn ty(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The share of kube-apiserver's per-CRD budget (100,000,000) the rules placed here may use
/// in one of `forProvider` / `initProvider` (the CRD carries both, with the same rules): the
/// rest is left for the rules the runtime adds (required parameters, reference companions).
const PARAMS_BUDGET: u64 = crd_schema::cost::PER_CRD_LIMIT * 2 / 5;

/// `node` without `required` anywhere: `initProvider` requires nothing, so its values can be
/// smaller, and the API server counts more of them in a request.
fn without_required(node: &Value) -> Value {
    match node {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "required")
                .map(|(k, v)| (k.clone(), without_required(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_required).collect()),
        other => other.clone(),
    }
}

/// What kube-apiserver charges the rule `cel` on `node` appearing `card` times
/// ([`crd_schema::cost::expression_cost`]); `None` when it cannot price it (then the rule is
/// left to the provider).
fn price(node: &Value, cel: &str, card: Cardinality) -> Option<u64> {
    crd_schema::cost::expression_cost(&without_required(node), cel, card).ok()
}

/// Price every CEL rule of a parameters schema as the CRD will carry it, in place, with
/// kube-apiserver's own estimate (`price`): a rule stays when it costs at most the per-rule
/// limit and, taken in schema order, fits the parameters' share of the per-CRD budget; any
/// other leaves the schema (the provider checks it before any write, from [`strict_schema`]).
/// A rule on an object that reads a field one of `refs` fills, without testing the
/// reference itself, is skipped while the reference is given (it is checked on the resolved
/// value before the first write). Answers how many rules left.
pub fn afford(schema: &mut Value, refs: &[ReferenceField]) -> usize {
    let mut spent = 0;
    afford_at(schema, "", Some(1), refs, &mut spent)
}

fn afford_at(
    node: &mut Value,
    path: &str,
    card: Cardinality,
    refs: &[ReferenceField],
    spent: &mut u64,
) -> usize {
    let mut moved = 0;
    let is_object = ty(node) == "object" && node.get("properties").is_some();
    let twins = if is_object {
        twins_at(refs, path)
    } else {
        Vec::new()
    };
    let snapshot = node.clone();
    if let Some(Value::Array(rules)) = node.get_mut("x-kubernetes-validations") {
        let before = rules.len();
        rules.retain(|r| {
            let cel = r.get("rule").and_then(Value::as_str).unwrap_or_default();
            match price(&snapshot, cel, card) {
                Some(cost)
                    if cost <= crd_schema::cost::PER_EXPRESSION_LIMIT
                        && *spent + cost <= PARAMS_BUDGET =>
                {
                    *spent += cost;
                    true
                }
                _ => false,
            }
        });
        moved += before - rules.len();
        for r in rules.iter_mut() {
            // A transition rule (immutability) holds whatever fills the field.
            let Some(cel) = r
                .get("rule")
                .and_then(Value::as_str)
                .filter(|c| !c.contains("oldSelf"))
            else {
                continue;
            };
            let wrapped = unless_referenced(cel, &twins);
            r["rule"] = json!(wrapped);
        }
        if rules.is_empty() {
            node.as_object_mut()
                .map(|o| o.remove("x-kubernetes-validations"));
        }
    }
    match ty(node) {
        "array" => {
            let card = times(card, node);
            if let Some(items) = node.get_mut("items") {
                moved += afford_at(items, path, card, refs, spent);
            }
        }
        "object" => {
            if let Some(values) = node
                .get_mut("additionalProperties")
                .filter(|a| a.is_object())
            {
                let max = snapshot.get("maxProperties").and_then(Value::as_u64);
                let card = card.zip(max).map(|(c, m)| c.saturating_mul(m));
                moved += afford_at(values, path, card, refs, spent);
            }
            if let Some(Value::Object(props)) = node.get_mut("properties") {
                for (name, child) in props.iter_mut() {
                    let child_path = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    moved += afford_at(child, &child_path, card, refs, spent);
                }
            }
        }
        _ => {}
    }
    moved
}

fn push_rule(node: &mut Value, rule: String, message: String) {
    let r = json!({"rule": rule, "message": message});
    match node.get_mut("x-kubernetes-validations") {
        Some(Value::Array(have)) => {
            if !have.contains(&r) {
                have.push(r);
            }
        }
        _ => node["x-kubernetes-validations"] = json!([r]),
    }
}

/// 2^63 as a float: int64's limit (`i64::MAX` rounds to it).
const INT64_LIMIT: f64 = 9_223_372_036_854_775_808.0;

fn num(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// Apply one check to the field node `node` (named `name` in messages).
fn apply_check(
    node: &mut Value,
    name: &str,
    check: &Check,
    placer: &mut Placer<'_>,
) -> Result<(), String> {
    let t = ty(node).to_string();
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("{what} does not apply to a field of type {t:?}"))
        }
    };
    let keyword = !matches!(
        check,
        Check::Not(_)
            | Check::Unique(_)
            | Check::Each(_)
            | Check::PrefixedBy(_)
            | Check::JoinedLength(..)
    );
    match *check {
        Check::Pattern(p) => {
            want(t == "string", "a pattern")?;
            node["pattern"] = json!(p);
        }
        Check::Format(p, what) => {
            want(t == "string", "a format")?;
            node["pattern"] = json!(p);
            // A message that names the field already reads as a sentence.
            let text = if what.contains(" must ") {
                let mut c = what.chars();
                let first: String = c
                    .next()
                    .map(|f| f.to_uppercase().collect())
                    .unwrap_or_default();
                format!("{first}{}.", c.as_str())
            } else {
                format!("Must be {what}.")
            };
            append_description(node, &text);
        }
        Check::Length(min, max) => {
            want(t == "string", "a length")?;
            if let Some(m) = min.filter(|m| *m > 0) {
                node["minLength"] = json!(m);
            }
            if let Some(m) = max {
                node["maxLength"] = json!(m);
            }
        }
        Check::Range(min, max) => {
            want(t == "integer" || t == "number", "a range")?;
            // An integer bound at (or past) int64's own limit says nothing the type does not,
            // and as a JSON float (2^63) the API server refuses every value checked against it
            // ("Maximum boundary value must be of type integer with format int64").
            let within = |m: &f64| t != "integer" || m.abs() < INT64_LIMIT;
            if let Some(m) = min.filter(within) {
                node["minimum"] = num(m);
            }
            if let Some(m) = max.filter(within) {
                node["maximum"] = num(m);
            }
        }
        Check::Not(values) => {
            want(t == "integer" || t == "number", "forbidden values")?;
            for v in values {
                let v = num(*v);
                placer.place(
                    node,
                    format!("self != {v}"),
                    format!("{name} may not be {v}"),
                );
            }
        }
        Check::OneOf(values) => {
            want(t == "string", "allowed values")?;
            node["enum"] = json!(values);
        }
        Check::Items(min, max) => {
            want(t == "array", "a list size")?;
            if let Some(m) = min.filter(|m| *m > 0) {
                node["minItems"] = json!(m);
            }
            if let Some(m) = max {
                node["maxItems"] = json!(m);
            }
        }
        Check::Unique(member) => {
            want(t == "array", "uniqueness")?;
            if member.is_empty() {
                // A set of scalars: the API server itself refuses duplicates.
                if node.get("x-kubernetes-list-type").is_none() {
                    node["x-kubernetes-list-type"] = json!("set");
                }
                placer.placed.openapi += 1;
            } else {
                placer.place(
                    node,
                    format!("self.all(x, self.exists_one(y, y.{member} == x.{member}))"),
                    format!("{name}: each {member} may appear only once"),
                );
            }
        }
        Check::Each(inner) => {
            want(t == "array", "a check of each element")?;
            apply_check(&mut node["items"], name, inner, placer)?;
        }
        Check::PrefixedBy(_) | Check::JoinedLength(..) => {
            return Err("a check of an identifier does not apply to a field".into());
        }
    }
    if keyword {
        placer.placed.openapi += 1;
    }
    Ok(())
}

fn append_description(node: &mut Value, text: &str) {
    let d = node
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if d.ends_with(text) {
        return;
    }
    let d = if d.is_empty() {
        text.to_string()
    } else {
        format!("{d} {text}")
    };
    node["description"] = json!(d);
}

/// The CEL test "`f` is set" on the object node `obj`: a boolean is set when true (a
/// false flag says nothing; with `present`, any written value counts, as upstream's
/// RequiredWith counts it), a list or map when not empty, anything else when present. A
/// reference that fills `f` (one of `twins`) counts as setting it.
fn is_set_as(
    obj: &Value,
    f: &str,
    present: bool,
    twins: &[&ReferenceField],
) -> Result<String, String> {
    let props = obj.get("properties");
    let Some(field) = props.and_then(|p| p.get(f)) else {
        // A secret is a Secret reference here: set when the reference is.
        let r = format!("{f}SecretRef");
        if props.and_then(|p| p.get(&r)).is_some() {
            return Ok(format!("has(self.{r})"));
        }
        return Err(format!("no field {f:?}"));
    };
    let plain = match ty(field) {
        "boolean" if present => format!("has(self.{f})"),
        "boolean" => format!("(has(self.{f}) && self.{f})"),
        "array" => format!("(has(self.{f}) && size(self.{f}) > 0)"),
        "object" if field.get("additionalProperties").is_some() => {
            format!("(has(self.{f}) && size(self.{f}) > 0)")
        }
        _ => format!("has(self.{f})"),
    };
    let by_ref: Vec<String> = twins
        .iter()
        .filter(|r| leaf(r.field) == f)
        .flat_map(|r| {
            let reference = if r.multi {
                format!("(has(self.{0}) && size(self.{0}) > 0)", r.ref_field)
            } else {
                format!("has(self.{})", r.ref_field)
            };
            [reference, format!("has(self.{})", r.selector_field)]
        })
        .collect();
    if by_ref.is_empty() {
        return Ok(plain);
    }
    Ok(format!("({plain} || {})", by_ref.join(" || ")))
}

fn leaf(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

fn names(fields: &[&str]) -> String {
    match fields {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn count(obj: &Value, fields: &[&str], twins: &[&ReferenceField]) -> Result<String, String> {
    let terms: Vec<String> = fields
        .iter()
        .map(|f| Ok(format!("({} ? 1 : 0)", is_set_as(obj, f, false, twins)?)))
        .collect::<Result<_, String>>()?;
    Ok(terms.join(" + "))
}

/// Whether `f` is a secret on `obj`: no field of that name, but its Secret reference.
fn secret_ref_of(obj: &Value, f: &str) -> bool {
    let props = obj.get("properties");
    props.and_then(|p| p.get(f)).is_none()
        && props.and_then(|p| p.get(format!("{f}SecretRef"))).is_some()
}

/// A hand-written CEL rule at admission: skipped while a reference fills a field it reads
/// (the rule sees the value only once the reference is resolved, before the first write).
fn unless_referenced(cel: &str, twins: &[&ReferenceField]) -> String {
    let read = fields_of(cel);
    let guards: Vec<String> = twins
        .iter()
        .filter(|r| read.iter().any(|f| f == leaf(r.field)))
        // A rule that tests the reference itself already counts it.
        .filter(|r| !cel.contains(&format!("self.{}", r.ref_field)))
        .flat_map(|r| {
            [
                format!("has(self.{})", r.ref_field),
                format!("has(self.{})", r.selector_field),
            ]
        })
        .collect();
    if guards.is_empty() {
        cel.to_string()
    } else {
        format!("{} || ({cel})", guards.join(" || "))
    }
}

/// The CEL rule and message of a cross-field rule on the object node `obj`, or `None` when
/// nothing is left to check there. A requirement of a secret is left to the provider (which
/// checks required secrets before any write) and to JFrog: a top-level secret may be given in
/// `initProvider`, which a rule on `forProvider` cannot see, and an exported manifest carries
/// no Secret reference JFrog does not show it has (so that adoption writes nothing).
fn rule_cel(
    obj: &Value,
    rule: &RuleCheck,
    twins: &[&ReferenceField],
) -> Result<Option<(String, String)>, String> {
    let visible = |fields: &[&'static str]| -> Vec<&'static str> {
        fields
            .iter()
            .copied()
            .filter(|f| !secret_ref_of(obj, f) && !f.ends_with("SecretRef"))
            .collect()
    };
    let all_set = |fields: &[&str]| -> Result<String, String> {
        let terms: Vec<String> = fields
            .iter()
            .map(|f| is_set_as(obj, f, true, twins))
            .collect::<Result<_, String>>()?;
        Ok(terms.join(" && "))
    };
    match *rule {
        RuleCheck::RequiredWith(field, requires) => {
            let requires = visible(requires);
            if secret_ref_of(obj, field) || requires.is_empty() {
                return Ok(None);
            }
            return Ok(Some((
                format!(
                    "!{} || ({})",
                    is_set_as(obj, field, true, twins)?,
                    all_set(&requires)?
                ),
                format!("{field} needs {} to be set too", requires.join(" and ")),
            )));
        }
        RuleCheck::RequiredWhen(condition, requires) => {
            let requires = visible(requires);
            if requires.is_empty() {
                return Ok(None);
            }
            return Ok(Some((
                format!("!({condition}) || ({})", all_set(&requires)?),
                format!(
                    "{} must be set when {}",
                    requires.join(" and "),
                    condition.replace("self.", "")
                ),
            )));
        }
        _ => {}
    }
    Ok(Some(match *rule {
        RuleCheck::Conflicts(fields) => (
            format!("{} <= 1", count(obj, fields, twins)?),
            format!("set at most one of {}", names(fields)),
        ),
        RuleCheck::ExactlyOneOf(fields) => (
            format!("{} == 1", count(obj, fields, twins)?),
            format!("set exactly one of {}", names(fields)),
        ),
        RuleCheck::AtLeastOneOf(fields) => {
            let any: Vec<String> = fields
                .iter()
                .map(|f| is_set_as(obj, f, false, twins))
                .collect::<Result<_, String>>()?;
            (
                any.join(" || "),
                format!("set at least one of {}", names(fields)),
            )
        }
        RuleCheck::RequiredWith(..) | RuleCheck::RequiredWhen(..) => return Ok(None),
        RuleCheck::Cel(cel, message) => (cel.to_string(), message.to_string()),
    }))
}

/// Add `checks` to a parameters schema (`forProvider` / `initProvider`) as the CRD carries
/// them, in place (no reference fields: see [`apply_as`]).
pub fn apply(schema: &mut Value, checks: &KindChecks) -> Result<(), CheckError> {
    apply_as(schema, checks, &[], Mode::Admission).map(|_| ())
}

/// Add `checks` to a parameters schema, in place: as the CRD carries them
/// ([`Mode::Admission`]: each CEL rule where the API server can afford it, the references
/// `refs` declares counted as setting their fields) or as the provider checks them before a
/// write ([`Mode::BeforeWrite`]: every rule). Single-field checks become OpenAPI keywords in
/// both. Answers how the checks were placed.
pub fn apply_as(
    schema: &mut Value,
    checks: &KindChecks,
    refs: &[ReferenceField],
    mode: Mode,
) -> Result<Placed, CheckError> {
    let err = |path: &str, message: String| CheckError {
        kind: checks.kind,
        path: path.to_string(),
        message,
    };
    let mut placer = Placer {
        mode,
        refs,
        placed: Placed::default(),
    };
    // List bounds first: a rule's price depends on them.
    let (bounds, others): (Vec<_>, Vec<_>) = checks
        .fields
        .iter()
        .flat_map(|(path, list)| list.iter().map(move |c| (*path, c)))
        .partition(|(_, c)| matches!(c, Check::Items(..) | Check::Length(..)));
    for (path, c) in bounds.into_iter().chain(others) {
        let name = leaf(path);
        let node = node_at(schema, path).ok_or_else(|| err(path, "no such field".into()))?;
        apply_check(node, name, c, &mut placer).map_err(|m| err(path, m))?;
    }
    for (path, rule) in checks.rules {
        let twins = placer.twins(path);
        let node = node_at(schema, path).ok_or_else(|| err(path, "no such object".into()))?;
        let obj = element(node);
        if ty(obj) != "object" {
            return Err(err(path, "a rule sits on an object".into()));
        }
        if let Some((cel, message)) = rule_cel(obj, rule, &twins).map_err(|m| err(path, m))? {
            placer.place(obj, cel, message);
        }
    }
    Ok(placer.placed)
}

/// The schema the provider checks a resolved `forProvider` against before any write: the
/// Kind's parameters with every check of `checks` ([`Mode::BeforeWrite`]) and the reference
/// fields of `refs`, as the root of an object `{"spec": {"forProvider": ...}}` (so errors
/// name `spec.forProvider....` as the API server does). Required parameters at the top are
/// left to the CRD's own rule, which honours the management policies.
pub fn strict_schema(
    kind: &crate::ResolvedKind,
    checks: &[&KindChecks],
    refs: &[ReferenceField],
) -> Result<Value, CheckError> {
    let mut params = crate::schema::parameters_schema(kind);
    for c in checks {
        apply_as(&mut params, c, &[], Mode::BeforeWrite)?;
    }
    let mut params = provider_runtime::crd::schema::structural(&params);
    if let Some(o) = params.as_object_mut() {
        o.remove("required");
    }
    provider_runtime::crd::references::add_reference_schemas(
        &mut params,
        refs,
        provider_runtime::crd::MrScope::Modern,
    );
    Ok(json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"forProvider": params}},
    }}))
}

/// Whether the keys of the whole-Secret references among `secrets` (the resolved Secret
/// entries of an MR, by `<path with list indices>.<key>`, e.g. `handler.0.secretsSecretRef.token`)
/// pass the `secret_keys` checks of `checks`: `Err` names the field (with its list index)
/// and the key, never a value.
pub fn check_secret_keys<'a>(
    checks: &[&KindChecks],
    secrets: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    let rules: Vec<&(&str, &[Check])> = checks.iter().flat_map(|c| c.secret_keys).collect();
    if rules.is_empty() {
        return Ok(());
    }
    for entry in secrets {
        // `handler.0.secretsSecretRef.token`: field `handler[0].secretsSecretRef`, key `token`.
        let Some((field, key)) = entry.rsplit_once('.') else {
            continue;
        };
        let named: Vec<&str> = field
            .split('.')
            .filter(|s| s.parse::<usize>().is_err())
            .collect();
        let shown = field
            .split('.')
            .fold(String::new(), |acc, s| match s.parse::<usize>() {
                Ok(i) => format!("{acc}[{i}]"),
                Err(_) if acc.is_empty() => s.to_string(),
                Err(_) => format!("{acc}.{s}"),
            });
        for (_, list) in rules.iter().filter(|(p, _)| named.join(".") == *p) {
            check_identifier(list, key, &Value::Null).map_err(|rule| {
                format!(
                    "invalid spec.forProvider.{shown}: the Secret's key {key:?} names a value JFrog refuses: {rule}"
                )
            })?;
        }
    }
    Ok(())
}

/// Whether the identifier `key` (the external name) passes the key checks of `checks`,
/// with `params` (the `forProvider`) for the checks that involve a parameter: `Err` says which
/// rule it breaks, in upstream's terms.
pub fn check_key(checks: &[&KindChecks], key: &str, params: &Value) -> Result<(), String> {
    checks
        .iter()
        .try_for_each(|c| check_identifier(c.key, key, params))
}

/// Whether `key` passes `list` (checks of an identifier or of a Secret's key names).
fn check_identifier(list: &[Check], key: &str, params: &Value) -> Result<(), String> {
    let param = |p: &str| {
        params
            .get(p)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    for c in list {
        match *c {
            Check::PrefixedBy(p) => {
                if let Some(v) = param(p)
                    && !key.starts_with(&format!("{v}-"))
                {
                    return Err(format!("with {p} {v:?} it must start with \"{v}-\""));
                }
            }
            Check::JoinedLength(p, max) => {
                if let Some(v) = param(p) {
                    let n = (v.chars().count() + 1 + key.chars().count()) as u64;
                    if n > max {
                        return Err(format!(
                            "JFrog names it \"{v}-{key}\", which must have at most {max} characters (it has {n})"
                        ));
                    }
                }
            }
            Check::Pattern(p) | Check::Format(p, _) => {
                let re = regex::Regex::new(p).map_err(|e| format!("pattern {p:?}: {e}"))?;
                if !re.is_match(key) {
                    return Err(match c {
                        Check::Format(_, what) => what.to_string(),
                        _ => format!("it must match {p}"),
                    });
                }
            }
            Check::Length(min, max) => {
                let n = key.chars().count() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    let range = match (min, max) {
                        (Some(a), Some(b)) => format!("{a} to {b}"),
                        (Some(a), None) => format!("at least {a}"),
                        (None, Some(b)) => format!("at most {b}"),
                        (None, None) => String::new(),
                    };
                    return Err(format!("it must have {range} characters, it has {n}"));
                }
            }
            _ => return Err(format!("{c:?} does not apply to an identifier")),
        }
    }
    Ok(())
}

/// Whether a Kind name matches a table entry's name, in which `*` stands for any run of
/// characters (`Remote*Repository`: every remote repository Kind).
pub fn matches(pattern: &str, kind: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = kind.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The entries of `all` that apply to `kind`.
pub fn of(all: &'static [KindChecks], kind: &str) -> Vec<&'static KindChecks> {
    all.iter().filter(|c| matches(c.kind, kind)).collect()
}

/// A forProvider rule may not read a late-initialised field: the provider writes JFrog's
/// value into it, and a rule that refuses that value would refuse the provider's own update
/// of the MR (the object could then never be persisted again).
fn late_init_in_rules(kind: &crate::ResolvedKind, c: &KindChecks) -> Vec<CheckError> {
    let late: Vec<&str> = kind
        .params()
        .filter(|f| f.late_init)
        .map(|f| f.crd)
        .collect();
    let mut problems = Vec::new();
    for (path, rule) in c.rules.iter().filter(|(p, _)| p.is_empty()) {
        let named: Vec<String> = match *rule {
            RuleCheck::Conflicts(f) | RuleCheck::ExactlyOneOf(f) | RuleCheck::AtLeastOneOf(f) => {
                f.iter().map(|s| s.to_string()).collect()
            }
            RuleCheck::RequiredWith(a, f) => std::iter::once(a)
                .chain(f.iter().copied())
                .map(str::to_string)
                .collect(),
            RuleCheck::RequiredWhen(cel, f) => fields_of(cel)
                .into_iter()
                .chain(f.iter().map(|s| s.to_string()))
                .collect(),
            RuleCheck::Cel(cel, _) => fields_of(cel),
        };
        let unsafe_late =
            |n: &&String| late.contains(&n.as_str()) && !c.late_init_safe.contains(&n.as_str());
        for n in named.iter().filter(unsafe_late) {
            problems.push(CheckError {
                kind: c.kind,
                path: path.to_string(),
                message: format!(
                    "a rule reads {n}, which is late-initialised (in {})",
                    kind.decl.kind
                ),
            });
        }
    }
    problems
}

/// The top-level field names a CEL expression reads (`self.<name>`).
fn fields_of(cel: &str) -> Vec<String> {
    cel.match_indices("self.")
        .map(|(i, _)| {
            cel[i + 5..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// What [`verify`] reads of a Kind (the adapter's `FamilyKind`, whose module is above this
/// one).
pub trait Verified {
    /// The composed declaration.
    fn resolved_kind(&self) -> &crate::ResolvedKind;
    /// The Kind's reference fields.
    fn reference_fields(&self) -> &[ReferenceField];
    /// The `forProvider` schema with the admission checks applied, as in the CRD.
    fn admission_schema(&self) -> Value;
}

/// Every problem of a provider's checks table against its Kinds: an entry that matches no
/// Kind the provider declares, or a check that does not fit a matched Kind's schema.
pub fn verify<K: Verified>(
    kinds: &[std::sync::Arc<K>],
    all: &'static [KindChecks],
) -> Vec<CheckError> {
    let mut problems = Vec::new();
    for c in all {
        let matched: Vec<_> = kinds
            .iter()
            .filter(|k| matches(c.kind, k.resolved_kind().decl.kind))
            .collect();
        if matched.is_empty() {
            problems.push(CheckError {
                kind: c.kind,
                path: String::new(),
                message: "the provider declares no such Kind".into(),
            });
        }
        for k in matched {
            for mode in [Mode::Admission, Mode::BeforeWrite] {
                let mut s = crate::schema::parameters_schema(k.resolved_kind());
                if let Err(mut e) = apply_as(&mut s, c, k.reference_fields(), mode) {
                    e.message = format!("{} (in {})", e.message, k.resolved_kind().decl.kind);
                    problems.push(e);
                }
            }
            let strict = strict_schema(k.resolved_kind(), &[c], k.reference_fields()).map(|s| {
                crd_schema::Schema::compile(&s).map_err(|errs| {
                    errs.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            });
            if let Ok(Err(message)) = strict {
                problems.push(CheckError {
                    kind: c.kind,
                    path: String::new(),
                    message: format!(
                        "the schema checked before a write does not compile (in {}): {message}",
                        k.resolved_kind().decl.kind
                    ),
                });
            }
            problems.extend(late_init_in_rules(k.resolved_kind(), c));
            if !c.key.is_empty() {
                if k.resolved_kind().decl.id != crate::Id::Name {
                    problems.push(CheckError {
                        kind: c.kind,
                        path: String::new(),
                        message: format!(
                            "key checks on {}, whose identifier is not the external name",
                            k.resolved_kind().decl.kind
                        ),
                    });
                }
                for check in c.key {
                    let ok = match check {
                        Check::Pattern(p) | Check::Format(p, _) => regex::Regex::new(p).is_ok(),
                        Check::Length(..) => true,
                        Check::PrefixedBy(f) | Check::JoinedLength(f, _) => {
                            k.resolved_kind().params().any(|x| x.crd == *f)
                        }
                        _ => false,
                    };
                    if !ok {
                        problems.push(CheckError {
                            kind: c.kind,
                            path: String::new(),
                            message: format!(
                                "key check {check:?}: not a pattern, format or length that compiles"
                            ),
                        });
                    }
                }
            }
        }
    }
    for k in kinds {
        for (path, f) in unguarded(&k.admission_schema()) {
            problems.push(CheckError {
                kind: k.resolved_kind().decl.kind,
                path,
                message: format!(
                    "a rule reads {f} without has(self.{f}): where it is absent the API server answers an evaluation error"
                ),
            });
        }
    }
    problems
}

/// The rules of a schema that read a member without testing it with `has()` first: where
/// the member is absent (always possible in `initProvider`, where nothing is required) the
/// API server answers an evaluation error ("no such key") instead of the rule's message.
/// Members with a default are always present. Answers (path, member) pairs.
pub fn unguarded(schema: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    unguarded_at(schema, "", &mut out);
    out.dedup();
    out
}

fn unguarded_at(node: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let props = node.get("properties").and_then(Value::as_object);
    if let (Some(props), Some(Value::Array(rules))) = (props, node.get("x-kubernetes-validations"))
    {
        for r in rules {
            let cel = r.get("rule").and_then(Value::as_str).unwrap_or_default();
            for f in fields_of(cel) {
                let Some(field) = props.get(&f) else {
                    continue;
                };
                if field.get("default").is_none() && !cel.contains(&format!("has(self.{f})")) {
                    out.push((path.to_string(), f));
                }
            }
        }
    }
    if let Some(items) = node.get("items") {
        unguarded_at(items, path, out);
    }
    if let Some(values) = node.get("additionalProperties").filter(|a| a.is_object()) {
        unguarded_at(values, path, out);
    }
    for (name, child) in props.into_iter().flatten() {
        let child_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        unguarded_at(child, &child_path, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "from": {"type": "string", "description": "Sender."},
            "port": {"type": "integer"},
            "quota": {"type": "integer"},
            "proxy": {"type": "string"},
            "disableProxy": {"type": "boolean"},
            "users": {"type": "array", "items": {"type": "string"}},
            "groups": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}}}},
            "filters": {"type": "array", "maxItems": 1, "items": {"type": "object", "properties": {
                "cve": {"type": "string"}, "issueId": {"type": "string"}}}},
            "search": {"type": "object", "properties": {
                "days": {"type": "integer"}, "keep": {"type": "integer"}}},
        }})
    }

    static CHECKS: KindChecks = KindChecks {
        kind: "Test",
        fields: &[
            (
                "from",
                &[Check::Format("^[^@ ]+@[^@ ]+$", "an e-mail address")],
            ),
            ("port", &[Check::Range(Some(1.0), Some(65535.0))]),
            (
                "quota",
                &[Check::Range(Some(-1.0), None), Check::Not(&[0.0])],
            ),
            (
                "users",
                &[
                    Check::Items(Some(1), None),
                    Check::Each(&Check::Length(Some(1), Some(64))),
                ],
            ),
            ("labels", &[Check::Unique("name")]),
            ("labels.name", &[Check::Length(Some(2), Some(15))]),
            ("filters.cve", &[Check::Pattern("^CVE-\\d{4}-\\d+$")]),
        ],
        rules: &[
            ("", RuleCheck::Conflicts(&["proxy", "disableProxy"])),
            ("", RuleCheck::AtLeastOneOf(&["users", "groups"])),
            ("filters", RuleCheck::Conflicts(&["cve", "issueId"])),
            ("search", RuleCheck::ExactlyOneOf(&["days", "keep"])),
        ],
        late_init_safe: &[],
        key: &[],
        secret_keys: &[],
    };

    #[test]
    fn field_checks_become_openapi_keywords_through_arrays_and_objects() {
        let mut s = schema();
        apply(&mut s, &CHECKS).unwrap();
        let p = &s["properties"];
        assert_eq!(p["from"]["pattern"], "^[^@ ]+@[^@ ]+$");
        assert_eq!(
            p["from"]["description"],
            "Sender. Must be an e-mail address."
        );
        assert_eq!(p["port"]["minimum"], 1);
        assert_eq!(p["port"]["maximum"], 65535);
        assert_eq!(
            p["quota"]["x-kubernetes-validations"][0]["rule"],
            "self != 0"
        );
        assert_eq!(p["users"]["minItems"], 1);
        assert_eq!(p["users"]["items"]["maxLength"], 64);
        assert_eq!(p["labels"]["items"]["properties"]["name"]["minLength"], 2);
        assert_eq!(
            p["filters"]["items"]["properties"]["cve"]["pattern"],
            "^CVE-\\d{4}-\\d+$"
        );
    }

    #[test]
    fn cross_field_rules_count_booleans_only_when_true() {
        let mut s = schema();
        apply(&mut s, &CHECKS).unwrap();
        let rules = &s["x-kubernetes-validations"];
        assert_eq!(
            rules[0]["rule"],
            "(has(self.proxy) ? 1 : 0) + ((has(self.disableProxy) && self.disableProxy) ? 1 : 0) <= 1"
        );
        assert_eq!(
            rules[0]["message"],
            "set at most one of proxy or disableProxy"
        );
        assert_eq!(
            rules[1]["rule"],
            "(has(self.users) && size(self.users) > 0) || (has(self.groups) && size(self.groups) > 0)"
        );
        // A rule on a list block sits on its element; on an object, on the object.
        assert!(s["properties"]["filters"]["items"]["x-kubernetes-validations"].is_array());
        assert_eq!(
            s["properties"]["search"]["x-kubernetes-validations"][0]["rule"],
            "(has(self.days) ? 1 : 0) + (has(self.keep) ? 1 : 0) == 1"
        );
    }

    #[test]
    fn entries_match_kinds_by_name_with_wildcards() {
        assert!(matches("MailServer", "MailServer"));
        assert!(!matches("MailServer", "MailServers"));
        assert!(matches("Remote*Repository", "RemoteNpmRepository"));
        assert!(!matches("Remote*Repository", "LocalNpmRepository"));
        assert!(matches("*Repository", "VirtualGoRepository"));
        assert!(matches("*", "Anything"));
        assert!(matches("A*B*C", "AxxBxxC"));
        assert!(!matches("A*B*C", "AxxCxxB"));
        assert!(!matches("AB*BA", "ABA"));
    }

    #[test]
    fn applying_twice_adds_no_rule_twice() {
        let mut s = schema();
        apply(&mut s, &CHECKS).unwrap();
        let once = s.clone();
        apply(&mut s, &CHECKS).unwrap();
        assert_eq!(s, once);
    }

    #[test]
    fn a_check_that_names_no_field_or_the_wrong_type_is_an_error() {
        let mut s = schema();
        let bad = KindChecks {
            kind: "Test",
            fields: &[("nope", &[Check::Length(None, Some(3))])],
            rules: &[],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        assert_eq!(apply(&mut s, &bad).unwrap_err().message, "no such field");
        let bad = KindChecks {
            kind: "Test",
            fields: &[("port", &[Check::Pattern("^a$")])],
            rules: &[],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        assert!(apply(&mut s, &bad).unwrap_err().message.contains("integer"));
        let bad = KindChecks {
            kind: "Test",
            fields: &[],
            rules: &[("", RuleCheck::Conflicts(&["proxy", "ghost"]))],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        assert!(apply(&mut s, &bad).unwrap_err().message.contains("ghost"));
    }

    fn reference(field: &'static str, multi: bool) -> ReferenceField {
        let target = provider_runtime::managed::kind::ReferenceTarget {
            provider: "artifactory",
            group: "repository",
            kind: "LocalGenericRepository",
            version: "v1alpha1",
        };
        if multi {
            ReferenceField::multi(field, target)
        } else {
            ReferenceField::single(field, target)
        }
    }

    fn rules_at(node: &Value) -> Vec<&str> {
        node.get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map(|rs| rs.iter().filter_map(|r| r["rule"].as_str()).collect())
            .unwrap_or_default()
    }

    /// kube-apiserver prices a rule on the elements of a list without `maxItems` as if a
    /// 3 MiB request were full of them: a rule that scans an unbounded string there leaves
    /// the CRD and stays in the schema checked before a write; on a bounded list it stays in
    /// the CRD, and so does a cheap rule on the unbounded list.
    #[test]
    fn a_rule_the_api_server_cannot_afford_is_checked_before_the_write() {
        let handler = json!({"type": "object", "properties": {
            "proxy": {"type": "string"}, "url": {"type": "string"}}});
        let base = json!({"type": "object", "properties": {
            "handler": {"type": "array", "items": handler},
            "criteria": {"type": "array", "maxItems": 1, "items": handler},
        }});
        static C: KindChecks = KindChecks {
            kind: "Test",
            fields: &[],
            rules: &[
                (
                    "handler",
                    RuleCheck::Cel(
                        "!has(self.proxy) || !self.proxy.matches('^http.+')",
                        "no URL",
                    ),
                ),
                ("handler", RuleCheck::Conflicts(&["proxy", "url"])),
                (
                    "criteria",
                    RuleCheck::Cel(
                        "!has(self.proxy) || !self.proxy.matches('^http.+')",
                        "no URL",
                    ),
                ),
            ],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        let mut crd = base.clone();
        let placed = apply_as(&mut crd, &C, &[], Mode::Admission).unwrap();
        assert_eq!(placed.cel, 3);
        assert_eq!(afford(&mut crd, &[]), 1);
        assert_eq!(
            rules_at(&crd["properties"]["handler"]["items"]),
            ["(has(self.proxy) ? 1 : 0) + (has(self.url) ? 1 : 0) <= 1"]
        );
        assert_eq!(rules_at(&crd["properties"]["criteria"]["items"]).len(), 1);
        let mut strict = base.clone();
        apply_as(&mut strict, &C, &[], Mode::BeforeWrite).unwrap();
        assert_eq!(rules_at(&strict["properties"]["handler"]["items"]).len(), 2);
    }

    /// A rule that iterates or scans stays in the CRD only over bounded values; a scan of an
    /// unbounded string is affordable in a single place, an iteration over an unbounded list
    /// nowhere.
    #[test]
    fn iterating_and_scanning_rules_need_bounded_values() {
        let labels = |max: Option<u64>, name_max: Option<u64>| {
            let mut name = json!({"type": "string"});
            if let Some(m) = name_max {
                name["maxLength"] = json!(m);
            }
            let mut l =
                json!({"type": "array", "items": {"type": "object", "properties": {"name": name}}});
            if let Some(m) = max {
                l["maxItems"] = json!(m);
            }
            json!({"type": "object", "properties": {"labels": l, "id": {"type": "string"}}})
        };
        static UNIQUE: KindChecks = KindChecks {
            kind: "Test",
            fields: &[("labels", &[Check::Unique("name")])],
            rules: &[(
                "",
                RuleCheck::Cel("!has(self.id) || !self.id.matches('^http')", "no URL"),
            )],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        for (max, name_max, kept) in [
            (Some(500), Some(15), 2),
            (None, Some(15), 1),
            (Some(500), None, 1),
        ] {
            let mut s = labels(max, name_max);
            apply_as(&mut s, &UNIQUE, &[], Mode::Admission).unwrap();
            afford(&mut s, &[]);
            let n = rules_at(&s["properties"]["labels"]).len() + rules_at(&s).len();
            assert_eq!(n, kept, "maxItems {max:?}, maxLength {name_max:?}");
            // The scan of `id` at the top (one place) always stays.
            assert_eq!(rules_at(&s).len(), 1);
        }
    }

    /// A field a reference fills is set, for a generated rule, when its reference is; a
    /// hand-written rule reading it is skipped at admission while the reference is given.
    /// Before a write neither applies: the reference is resolved by then.
    #[test]
    fn references_count_at_admission_and_resolve_before_the_write() {
        let base = json!({"type": "object", "properties": {
            "repoKeys": {"type": "array", "items": {"type": "string"}},
            "anyLocal": {"type": "boolean"},
            "proxy": {"type": "string"},
            "disableProxy": {"type": "boolean"},
        }});
        static C: KindChecks = KindChecks {
            kind: "Test",
            fields: &[],
            rules: &[
                ("", RuleCheck::AtLeastOneOf(&["repoKeys", "anyLocal"])),
                (
                    "",
                    RuleCheck::Cel(
                        "(has(self.anyLocal) && self.anyLocal) || (has(self.repoKeys) && size(self.repoKeys) > 0)",
                        "repoKeys must not be empty",
                    ),
                ),
                ("", RuleCheck::Conflicts(&["proxy", "disableProxy"])),
            ],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        let refs = [reference("repoKeys", true), reference("proxy", false)];
        let mut crd = base.clone();
        apply_as(&mut crd, &C, &refs, Mode::Admission).unwrap();
        afford(&mut crd, &refs);
        let rules = rules_at(&crd);
        assert_eq!(
            rules[0],
            "((has(self.repoKeys) && size(self.repoKeys) > 0) || (has(self.repoKeysRefs) && size(self.repoKeysRefs) > 0) || has(self.repoKeysSelector)) || (has(self.anyLocal) && self.anyLocal)"
        );
        assert!(
            rules[1].starts_with("has(self.repoKeysRefs) || has(self.repoKeysSelector) || ("),
            "{}",
            rules[1]
        );
        assert!(rules[2].contains("has(self.proxyRef) || has(self.proxySelector)"));
        let mut strict = base.clone();
        apply_as(&mut strict, &C, &refs, Mode::BeforeWrite).unwrap();
        assert!(rules_at(&strict).iter().all(|r| !r.contains("Ref")));
    }

    /// A rule over an immutable field (`oldSelf`) holds whatever fills the field: never
    /// skipped for a reference.
    #[test]
    fn transition_rules_are_not_skipped_for_references() {
        let mut s = json!({"type": "object", "properties": {"repoKey": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "!has(oldSelf.repoKey) || (has(self.repoKey) && self.repoKey == oldSelf.repoKey)", "message": "immutable"}]});
        let before = s.clone();
        afford(&mut s, &[reference("repoKey", false)]);
        assert_eq!(s, before);
    }

    /// Upstream's int64 limits are not written as bounds: as JSON floats (2^63) the API
    /// server refuses every value checked against them.
    #[test]
    fn int64_limits_are_no_bounds() {
        let mut s = json!({"type": "object", "properties": {
            "priority": {"type": "integer"}, "ratio": {"type": "number"}}});
        static C: KindChecks = KindChecks {
            kind: "Test",
            fields: &[
                (
                    "priority",
                    &[Check::Range(Some(0.0), Some(9_223_372_036_854_775_807.0))],
                ),
                ("ratio", &[Check::Range(None, Some(1e19))]),
            ],
            rules: &[],
            late_init_safe: &[],
            key: &[],
            secret_keys: &[],
        };
        apply(&mut s, &C).unwrap();
        assert_eq!(s["properties"]["priority"]["minimum"], 0);
        assert!(s["properties"]["priority"].get("maximum").is_none());
        assert_eq!(s["properties"]["ratio"]["maximum"], 1e19);
    }

    /// A rule reading a member that may be absent must test it with `has()` first.
    #[test]
    fn unguarded_reads_are_found() {
        let s = json!({"type": "object", "properties": {
            "criteria": {"type": "array", "items": {"type": "object", "properties": {
                "anyLocal": {"type": "boolean"},
                "anyRemote": {"type": "boolean", "default": false},
                "repoKeys": {"type": "array", "items": {"type": "string"}}},
                "x-kubernetes-validations": [{"rule": "self.anyLocal || self.anyRemote || (has(self.repoKeys) && size(self.repoKeys) > 0)"}]}}}});
        assert_eq!(
            unguarded(&s),
            vec![("criteria".to_string(), "anyLocal".to_string())]
        );
    }
}
