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

fn num(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// Apply one check to the field node `node` (named `name` in messages).
fn apply_check(node: &mut Value, name: &str, check: &Check) -> Result<(), String> {
    let t = ty(node).to_string();
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("{what} does not apply to a field of type {t:?}"))
        }
    };
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
            if let Some(m) = min {
                node["minimum"] = num(m);
            }
            if let Some(m) = max {
                node["maximum"] = num(m);
            }
        }
        Check::Not(values) => {
            want(t == "integer" || t == "number", "forbidden values")?;
            for v in values {
                let v = num(*v);
                push_rule(
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
            } else {
                push_rule(
                    node,
                    format!("self.all(x, self.exists_one(y, y.{member} == x.{member}))"),
                    format!("{name}: each {member} may appear only once"),
                );
            }
        }
        Check::Each(inner) => {
            want(t == "array", "a check of each element")?;
            apply_check(&mut node["items"], name, inner)?;
        }
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
/// RequiredWith counts it), a list or map when not empty, anything else when present.
fn is_set_as(obj: &Value, f: &str, present: bool) -> Result<String, String> {
    let props = obj.get("properties");
    let Some(field) = props.and_then(|p| p.get(f)) else {
        // A secret is a Secret reference here: set when the reference is.
        let r = format!("{f}SecretRef");
        if props.and_then(|p| p.get(&r)).is_some() {
            return Ok(format!("has(self.{r})"));
        }
        return Err(format!("no field {f:?}"));
    };
    Ok(match ty(field) {
        "boolean" if present => format!("has(self.{f})"),
        "boolean" => format!("(has(self.{f}) && self.{f})"),
        "array" => format!("(has(self.{f}) && size(self.{f}) > 0)"),
        "object" if field.get("additionalProperties").is_some() => {
            format!("(has(self.{f}) && size(self.{f}) > 0)")
        }
        _ => format!("has(self.{f})"),
    })
}

fn is_set(obj: &Value, f: &str) -> Result<String, String> {
    is_set_as(obj, f, false)
}

fn names(fields: &[&str]) -> String {
    match fields {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn count(obj: &Value, fields: &[&str]) -> Result<String, String> {
    let terms: Vec<String> = fields
        .iter()
        .map(|f| Ok(format!("({} ? 1 : 0)", is_set(obj, f)?)))
        .collect::<Result<_, String>>()?;
    Ok(terms.join(" + "))
}

/// Whether `f` is a secret on `obj`: no field of that name, but its Secret reference.
fn secret_ref_of(obj: &Value, f: &str) -> bool {
    let props = obj.get("properties");
    props.and_then(|p| p.get(f)).is_none()
        && props.and_then(|p| p.get(format!("{f}SecretRef"))).is_some()
}

/// The CEL rule and message of a cross-field rule on the object node `obj`, or `None` when
/// nothing is left to check there. A requirement of a secret is left to the provider (which
/// checks required secrets before any write) and to JFrog: a top-level secret may be given in
/// `initProvider`, which a rule on `forProvider` cannot see, and an exported manifest carries
/// no Secret reference JFrog does not show it has (so that adoption writes nothing).
fn rule_cel(obj: &Value, rule: &RuleCheck) -> Result<Option<(String, String)>, String> {
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
            .map(|f| is_set_as(obj, f, true))
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
                    is_set_as(obj, field, true)?,
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
            format!("{} <= 1", count(obj, fields)?),
            format!("set at most one of {}", names(fields)),
        ),
        RuleCheck::ExactlyOneOf(fields) => (
            format!("{} == 1", count(obj, fields)?),
            format!("set exactly one of {}", names(fields)),
        ),
        RuleCheck::AtLeastOneOf(fields) => {
            let any: Vec<String> = fields
                .iter()
                .map(|f| is_set(obj, f))
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

/// Add `checks` to a parameters schema (`forProvider` / `initProvider`), in place.
pub fn apply(schema: &mut Value, checks: &KindChecks) -> Result<(), CheckError> {
    let err = |path: &str, message: String| CheckError {
        kind: checks.kind,
        path: path.to_string(),
        message,
    };
    for (path, list) in checks.fields {
        let name = path.rsplit('.').next().unwrap_or(path);
        let node = node_at(schema, path).ok_or_else(|| err(path, "no such field".into()))?;
        for c in *list {
            apply_check(node, name, c).map_err(|m| err(path, m))?;
        }
    }
    for (path, rule) in checks.rules {
        let node = node_at(schema, path).ok_or_else(|| err(path, "no such object".into()))?;
        let obj = element(node);
        if ty(obj) != "object" {
            return Err(err(path, "a rule sits on an object".into()));
        }
        if let Some((cel, message)) = rule_cel(obj, rule).map_err(|m| err(path, m))? {
            push_rule(obj, cel, message);
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

/// Every problem of a provider's checks table against its Kinds: an entry that matches no
/// Kind the provider declares, or a check that does not fit a matched Kind's schema.
pub fn verify(
    kinds: &[std::sync::Arc<crate::FamilyKind>],
    all: &'static [KindChecks],
) -> Vec<CheckError> {
    let mut problems = Vec::new();
    for c in all {
        let matched: Vec<_> = kinds
            .iter()
            .filter(|k| matches(c.kind, k.resolved().decl.kind))
            .collect();
        if matched.is_empty() {
            problems.push(CheckError {
                kind: c.kind,
                path: String::new(),
                message: "the provider declares no such Kind".into(),
            });
        }
        for k in matched {
            let mut s = crate::schema::parameters_schema(k.resolved());
            if let Err(mut e) = apply(&mut s, c) {
                e.message = format!("{} (in {})", e.message, k.resolved().decl.kind);
                problems.push(e);
            }
            problems.extend(late_init_in_rules(k.resolved(), c));
        }
    }
    problems
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
        };
        assert_eq!(apply(&mut s, &bad).unwrap_err().message, "no such field");
        let bad = KindChecks {
            kind: "Test",
            fields: &[("port", &[Check::Pattern("^a$")])],
            rules: &[],
            late_init_safe: &[],
        };
        assert!(apply(&mut s, &bad).unwrap_err().message.contains("integer"));
        let bad = KindChecks {
            kind: "Test",
            fields: &[],
            rules: &[("", RuleCheck::Conflicts(&["proxy", "ghost"]))],
            late_init_safe: &[],
        };
        assert!(apply(&mut s, &bad).unwrap_err().message.contains("ghost"));
    }
}
