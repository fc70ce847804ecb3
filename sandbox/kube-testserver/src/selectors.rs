//! Label and field selectors (`labelSelector=` / `fieldSelector=` query parameters).
//!
//! Label selectors support `=`, `==`, `!=`, `in`, `notin`, existence, non-existence and the
//! `>`/`<` integer comparisons, as `k8s.io/apimachinery/pkg/labels` parses them. Field selectors
//! support `=`, `==` and `!=` on the fields each resource type allows (the caller passes the
//! allowed list; an unknown field is a 400 like upstream's "field label not supported").

use crate::status::ApiError;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq(String),
    Ne(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    NotExists,
    Gt(i64),
    Lt(i64),
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, Default)]
pub struct LabelSelector {
    reqs: Vec<(String, Op)>,
}

fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c)
            }
            ')' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn valid_label_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 316
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

/// Splits `key <op> (values)` / `key <op>(values)` into the key and the values part.
fn set_op<'a>(part: &'a str, op: &str) -> Option<(String, &'a str)> {
    let (key, rest) = part.split_once(char::is_whitespace)?;
    let rest = rest.trim_start().strip_prefix(op)?;
    rest.trim_start()
        .starts_with('(')
        .then(|| (key.trim().to_string(), rest))
}

fn set_values(s: &str) -> Option<Vec<String>> {
    let s = s.trim();
    let inner = s.strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_string()).collect())
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<LabelSelector, ApiError> {
        let bad = |why: &str| ApiError::bad_request(format!("unable to parse requirement: {why}"));
        let mut reqs = Vec::new();
        for part in split_top(s) {
            let (key, op) = if let Some(k) = part.strip_prefix('!') {
                (k.trim().to_string(), Op::NotExists)
            } else if let Some((key, rest)) = set_op(&part, "notin") {
                let vals = set_values(rest).ok_or_else(|| bad("expected set of values"))?;
                (key, Op::NotIn(vals))
            } else if let Some((key, rest)) = set_op(&part, "in") {
                let vals = set_values(rest).ok_or_else(|| bad("expected set of values"))?;
                (key, Op::In(vals))
            } else if let Some(i) = part.find("!=") {
                (
                    part[..i].trim().to_string(),
                    Op::Ne(part[i + 2..].trim().to_string()),
                )
            } else if let Some(i) = part.find("==") {
                (
                    part[..i].trim().to_string(),
                    Op::Eq(part[i + 2..].trim().to_string()),
                )
            } else if let Some(i) = part.find('=') {
                (
                    part[..i].trim().to_string(),
                    Op::Eq(part[i + 1..].trim().to_string()),
                )
            } else if let Some(i) = part.find('>') {
                let n = part[i + 1..]
                    .trim()
                    .parse()
                    .map_err(|_| bad("expected integer"))?;
                (part[..i].trim().to_string(), Op::Gt(n))
            } else if let Some(i) = part.find('<') {
                let n = part[i + 1..]
                    .trim()
                    .parse()
                    .map_err(|_| bad("expected integer"))?;
                (part[..i].trim().to_string(), Op::Lt(n))
            } else {
                (part.trim().to_string(), Op::Exists)
            };
            if !valid_label_key(&key) {
                return Err(bad(&format!(
                    "invalid label key {}",
                    crate::status::go_quote(&key)
                )));
            }
            reqs.push((key, op));
        }
        Ok(LabelSelector { reqs })
    }

    /// Whether the labels of `obj` match.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(|v| v.as_str());
        self.reqs.iter().all(|(k, op)| {
            let v = get(k);
            match op {
                Op::Eq(x) => v == Some(x.as_str()),
                Op::Ne(x) => v != Some(x.as_str()),
                Op::In(xs) => v.is_some_and(|v| xs.iter().any(|x| x == v)),
                Op::NotIn(xs) => v.is_none_or(|v| !xs.iter().any(|x| x == v)),
                Op::Exists => v.is_some(),
                Op::NotExists => v.is_none(),
                Op::Gt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v > *n),
                Op::Lt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v < *n),
            }
        })
    }
}

/// A parsed field selector; empty matches everything.
#[derive(Debug, Clone, Default)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

impl FieldSelector {
    /// Parses `s`, allowing only the listed field paths (`metadata.name`, `involvedObject.uid`, ...).
    pub fn parse(s: &str, allowed: &[&str]) -> Result<FieldSelector, ApiError> {
        let mut reqs = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, eq, v) = if let Some(i) = part.find("!=") {
                (&part[..i], false, &part[i + 2..])
            } else if let Some(i) = part.find("==") {
                (&part[..i], true, &part[i + 2..])
            } else if let Some(i) = part.find('=') {
                (&part[..i], true, &part[i + 1..])
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            let k = k.trim();
            if !allowed.contains(&k) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {k}"
                )));
            }
            reqs.push((k.to_string(), eq, v.trim().to_string()));
        }
        Ok(FieldSelector { reqs })
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// The value of a `metadata.name` equality requirement, used to answer from the index.
    pub fn name_eq(&self) -> Option<&str> {
        self.reqs
            .iter()
            .find(|(k, eq, _)| *eq && k == "metadata.name")
            .map(|(_, _, v)| v.as_str())
    }

    /// Whether `obj` (in the view the client asked for) matches.
    pub fn matches(&self, obj: &Value) -> bool {
        self.reqs.iter().all(|(k, eq, v)| {
            let ptr = format!("/{}", k.replace('.', "/"));
            let actual = match obj.pointer(&ptr) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            (actual == *v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selector_operators() {
        let o = json!({"metadata": {"labels": {"a": "1", "b": "x", "n": "5"}}});
        for (sel, want) in [
            ("a=1", true),
            ("a==1", true),
            ("a!=1", false),
            ("a in (1,2)", true),
            ("a notin (1,2)", false),
            ("b notin (y)", true),
            ("c", false),
            ("!c", true),
            ("a,b=x", true),
            ("a,b=y", false),
            ("n>4", true),
            ("n<4", false),
            ("a in (1, 2),b in (x)", true),
            ("a in(1)", true),
            ("a notin(1)", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&o),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("a in 1").is_err());
    }

    #[test]
    fn field_selector() {
        let o = json!({"metadata": {"name": "x"}, "involvedObject": {"kind": "Foo"}});
        let allowed = ["metadata.name", "involvedObject.kind"];
        assert!(
            FieldSelector::parse("metadata.name=x,involvedObject.kind==Foo", &allowed)
                .unwrap()
                .matches(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.name!=x", &allowed)
                .unwrap()
                .matches(&o)
        );
        assert!(FieldSelector::parse("spec.x=1", &allowed).is_err());
    }
}
