//! Up-to-date comparison and late initialisation, generic over the declared fields.
//!
//! Only what the user manages is compared: a set field against JFrog's value, an unset
//! field with a provider default against that default (so a removed field is reset), an
//! unset field without one against "empty"; unset server-defaulted fields, init-only fields
//! and output-only fields are never compared. Each comparison applies the field's type rule
//! (sets unordered, lists ordered, null = empty) and its [`Norm`]. Write-only values are
//! compared by a salted hash of what was last sent ([`write_only_hashes`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::decl::{Field, MapWire, Norm, ResolvedKind, Ty};
use crate::wire::{self, get_in, get_path, user_value};

/// Context of one comparison.
#[derive(Debug, Clone, Default)]
pub struct DiffContext {
    /// URL prefix of this JFrog instance's repositories (`<base>/artifactory/`): a federated
    /// member JFrog adds for the repository itself is not drift (set by the repository
    /// family's hooks; empty elsewhere).
    pub own_member_prefix: String,
    /// The identifier.
    pub key: String,
}

/// `description` suffix some Artifactory versions add to remote repositories.
const CACHE_SUFFIX: &str = " (local file cache)";

/// Whether a value is absent or empty (null, "", [], {}).
pub fn is_empty(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        _ => false,
    }
}

fn str_of(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

fn sorted_strings(v: Option<&Value>) -> Vec<String> {
    let mut out: Vec<String> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

/// Compare two scalar or list values of a field (desired first).
pub fn equal(
    f: &Field,
    desired: Option<&Value>,
    observed: Option<&Value>,
    ctx: &DiffContext,
) -> bool {
    if f.norm == Norm::KeepWhenServerEmpty && is_empty(observed) {
        return true;
    }
    if let (Norm::DeclaredKeys, Some(Value::Object(d)), Some(Value::Object(o))) =
        (f.norm, desired, observed)
    {
        let only: Map<String, Value> = o
            .iter()
            .filter(|(k, _)| d.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let plain = Field {
            norm: Norm::Plain,
            ..*f
        };
        return equal(&plain, desired, Some(&Value::Object(only)), ctx);
    }
    match f.ty {
        Ty::Str => {
            let d = str_of(desired);
            let mut o = str_of(observed);
            match f.norm {
                Norm::NoClear if d.is_empty() => return true,
                Norm::ClearWithSentinel if d.is_empty() => {
                    return o.is_empty() || o == wire::CLEAR_SENTINEL;
                }
                Norm::KeepWhenServerEmpty if o.is_empty() => return true,
                Norm::CacheSuffix => {
                    if let Some(s) = o.strip_suffix(CACHE_SUFFIX) {
                        o = s.to_string();
                    }
                }
                Norm::CommaSet => {
                    let split = |s: &str| {
                        let mut v: Vec<String> = s
                            .split(',')
                            .map(|x| x.trim().to_string())
                            .filter(|x| !x.is_empty())
                            .collect();
                        v.sort();
                        v.dedup();
                        v
                    };
                    return split(&d) == split(&o);
                }
                Norm::TrimSlash => {
                    return d.trim_end_matches('/') == o.trim_end_matches('/');
                }
                Norm::IgnoreCase => return d.eq_ignore_ascii_case(&o),
                Norm::JsonText => {
                    let parse = |s: &str| serde_json::from_str::<Value>(s).ok();
                    if let (Some(a), Some(b)) = (parse(&d), parse(&o)) {
                        return a == b;
                    }
                }
                _ => {}
            }
            d == o
        }
        Ty::Map(MapWire::Lists) => {
            let m = |v: Option<&Value>| -> BTreeMap<String, Vec<String>> {
                v.and_then(Value::as_object)
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| {
                                let mut l: Vec<String> = v
                                    .as_array()
                                    .map(|a| {
                                        a.iter()
                                            .filter_map(|x| x.as_str().map(str::to_string))
                                            .collect()
                                    })
                                    .unwrap_or_default();
                                l.sort();
                                l.dedup();
                                (k.clone(), l)
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            m(desired) == m(observed)
        }
        Ty::Map(_) => {
            let m = |v: Option<&Value>| -> BTreeMap<String, String> {
                v.and_then(Value::as_object)
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            m(desired) == m(observed)
        }
        Ty::Bool => {
            desired.and_then(Value::as_bool).unwrap_or(false)
                == observed.and_then(Value::as_bool).unwrap_or(false)
        }
        Ty::Int | Ty::Num => num(desired).unwrap_or(0.0) == num(observed).unwrap_or(0.0),
        Ty::Set => sorted_strings(desired) == sorted_strings(observed),
        Ty::List => {
            let l = |v: Option<&Value>| -> Vec<String> {
                v.and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            l(desired) == l(observed)
        }
        // An absent block on both sides is equal (its children's defaults do not apply).
        Ty::Block(_) | Ty::Object(_) if is_empty(desired) && is_empty(observed) => true,
        Ty::Block(children) | Ty::Object(children) => {
            let first = |v: Option<&Value>| -> Value {
                match v {
                    Some(Value::Array(a)) => a.first().cloned().unwrap_or(Value::Null),
                    Some(o @ Value::Object(_)) => o.clone(),
                    _ => Value::Null,
                }
            };
            let (d, o) = (first(desired), first(observed));
            // A block nobody set is equal to one JFrog does not have, whatever its
            // children's defaults (they apply only to a block that exists).
            if d.is_null() && o.is_null() {
                return true;
            }
            objects_equal(children, &d, &o, ctx)
        }
        Ty::ObjList(children) => {
            let d = desired
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let o = observed
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            d.len() == o.len()
                && d.iter()
                    .zip(o.iter())
                    .all(|(a, b)| objects_equal(children, a, b, ctx))
        }
        Ty::ObjSet(children) => {
            let d = desired
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut o = observed
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            // JFrog lists the repository itself as a federation member; that is not drift
            // unless the user listed it with other settings.
            if !ctx.own_member_prefix.is_empty() {
                let own = format!("{}{}", ctx.own_member_prefix, ctx.key);
                let user_has_own = d.iter().any(|m| {
                    str_of(m.get("url")).trim_end_matches('/') == own.trim_end_matches('/')
                });
                if !user_has_own {
                    o.retain(|m| {
                        str_of(m.get("url")).trim_end_matches('/') != own.trim_end_matches('/')
                    });
                }
            }
            d.len() == o.len()
                && d.iter()
                    .all(|a| o.iter().any(|b| objects_equal(children, a, b, ctx)))
        }
    }
}

/// Compare two objects child by child (desired children unset = their default or empty).
fn objects_equal(children: &[Field], desired: &Value, observed: &Value, ctx: &DiffContext) -> bool {
    children.iter().all(|c| {
        // Output-only members are never desired; unset server-defaulted ones not managed.
        if !c.is_observed() || c.status_only {
            return true;
        }
        if c.ignore_unset && user_value(desired, c.crd).is_none() {
            return true;
        }
        let Some(wire) = c.wire else { return true };
        let dv = user_value(desired, c.crd)
            .cloned()
            .or_else(|| c.default.to_json());
        // Observed objects arrive in CRD shape (see wire::field_from_wire).
        let ov = observed.get(c.crd).or_else(|| get_path(observed, wire));
        equal(c, dv.as_ref(), ov, ctx)
    })
}

/// Names of the fields (CRD names) whose desired value differs from `observed` (a
/// `from_wire` map). Empty means up to date (write-only values aside).
pub fn diff(
    kind: &ResolvedKind,
    params: &Value,
    init_only: &[String],
    observed: &Map<String, Value>,
    ctx: &DiffContext,
) -> Vec<&'static str> {
    let obs = Value::Object(observed.clone());
    let in_project = !is_empty(observed.get("projectKey"));
    let mut out = Vec::new();
    for f in kind.params() {
        if f.wire.is_none() || f.write_only || f.sensitive {
            continue;
        }
        if init_only.iter().any(|s| s == f.crd) {
            continue;
        }
        if let Some((gate, on)) = f.norm.gate()
            && crate::wire::desired_bool(kind, params, gate) != on
        {
            continue;
        }
        if f.norm == Norm::WhenInProject && !in_project {
            continue;
        }
        // JFrog may not return the value at all (a report's read answers its status only).
        if f.norm == Norm::KeepWhenServerEmpty && is_empty(obs.get(f.crd)) {
            continue;
        }
        let desired = match user_value(params, f.crd) {
            Some(v) => Some(v.clone()),
            None if f.ignore_unset => continue,
            // An identifier part taken from the external name: the object was found by it.
            None if f.from_name => continue,
            None => f.default.to_json(),
        };
        if !equal(f, desired.as_ref(), obs.get(f.crd), ctx) {
            out.push(f.crd);
        }
    }
    out
}

/// Fill server-defaulted fields the user left unset (and did not give in initProvider)
/// from JFrog's values. Returns whether anything changed.
pub fn late_initialize(
    kind: &ResolvedKind,
    params: &mut Value,
    init_only: &[String],
    observed: &Map<String, Value>,
) -> bool {
    if !params.is_object() {
        *params = Value::Object(Map::new());
    }
    let Value::Object(p) = params else {
        return false;
    };
    let mut changed = false;
    for f in kind.params() {
        if !f.late_init || f.sensitive || f.write_only {
            continue;
        }
        if init_only.iter().any(|s| s == f.crd) {
            continue;
        }
        if p.get(f.crd).is_some_and(|v| !v.is_null()) {
            continue;
        }
        // A value that only counts while a boolean has a value is not adopted otherwise: it
        // would then be refused as set without its gate.
        let gate = f.norm.gate().or(f.requires.map(|g| (g, true)));
        if let Some((g, wanted)) = gate {
            let on = match p.get(g).filter(|v| !v.is_null()) {
                Some(v) => v.as_bool().unwrap_or(false),
                None => kind
                    .field(g)
                    .and_then(|x| x.default.to_json())
                    .and_then(|d| d.as_bool())
                    .unwrap_or(false),
            };
            if on != wanted {
                continue;
            }
        }
        if let Some(v) = observed.get(f.crd).filter(|v| !is_empty(Some(v))) {
            p.insert(f.crd.to_string(), v.clone());
            changed = true;
        }
    }
    changed
}

/// Whether `kind` has a value [`write_only_hashes`] would hash: a write-only or sensitive
/// field, or one inside a list's elements.
pub fn has_write_only(kind: &ResolvedKind) -> bool {
    kind.params().any(|f| {
        ((f.write_only || f.sensitive) && f.wire.is_some())
            || f.ty.children().is_some_and(|c| {
                c.iter()
                    .any(|c| (c.sensitive || c.write_only) && c.wire.is_some())
            })
    })
}

/// Salted hashes (`sha256:<hex>`) of the write-only members of a request `body`, keyed by
/// wire member. The salt is the MR's UID, so equal passwords of two MRs hash differently.
/// `extra` is mixed into the hash of `password` (the `passwordWoVersion` trigger).
pub fn write_only_hashes(
    kind: &ResolvedKind,
    body: &Map<String, Value>,
    salt: &str,
    extra: Option<&str>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let wires: std::collections::BTreeSet<&str> = kind
        .params()
        .filter(|f| f.write_only || f.sensitive)
        .filter_map(|f| f.wire)
        .collect();
    let mut values: Vec<(String, Value)> = wires
        .into_iter()
        .filter_map(|w| {
            let v = body.get(w).filter(|v| !is_empty(Some(v)))?;
            Some((w.to_string(), v.clone()))
        })
        .collect();
    // Secrets inside list elements (a webhook handler's secret): one hash per list over its
    // elements' secret values, each paired with the rest of its element, so a changed
    // secret, or a secret moved to another handler, is a change.
    for f in kind.params() {
        let (Some(wire), Some(children)) = (f.wire, f.ty.children()) else {
            continue;
        };
        let secret: Vec<&str> = children
            .iter()
            .filter(|c| c.sensitive || c.write_only)
            .filter_map(|c| c.wire)
            .collect();
        if secret.is_empty() {
            continue;
        }
        let elems: Vec<Value> = match get_in(body, wire) {
            Some(Value::Array(a)) => a.clone(),
            Some(o @ Value::Object(_)) => vec![o.clone()],
            _ => continue,
        };
        let mut pairs: Vec<String> = elems
            .iter()
            .filter_map(|e| {
                let mut rest = e.as_object()?.clone();
                let taken: Map<String, Value> = secret
                    .iter()
                    .filter_map(|w| Some((w.to_string(), rest.remove(*w)?)))
                    .filter(|(_, v)| !is_empty(Some(v)))
                    .collect();
                (!taken.is_empty())
                    .then(|| format!("{}\0{}", Value::Object(rest), Value::Object(taken)))
            })
            .collect();
        if pairs.is_empty() {
            continue;
        }
        pairs.sort();
        values.push((format!("{wire}[]"), Value::String(pairs.join("\n"))));
    }
    for (w, v) in &values {
        let w = w.as_str();
        let mut h = Sha256::new();
        h.update(salt.as_bytes());
        h.update(b"\0");
        h.update(w.as_bytes());
        h.update(b"\0");
        h.update(v.to_string().as_bytes());
        if w == "password"
            && let Some(e) = extra
        {
            h.update(b"\0");
            h.update(e.as_bytes());
        }
        let digest = h.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        out.insert(w.to_string(), format!("sha256:{hex}"));
    }
    out
}

/// Where a changed top-level field differs, as paths below it: for an object the desired
/// value sets, each member it sets that JFrog's value does not equal (recursively, an array
/// being one value), so a review reads `artifact.actions.users` rather than the whole
/// `artifact`. Members the desired value leaves out are not named (they are JFrog's or the
/// declared defaults'); when no set member differs (the difference came from a default or a
/// type rule), or either side is not an object, the field itself: `[(field, old, new)]`.
pub fn changed_paths(
    field: &str,
    old: Option<&Value>,
    new: Option<&Value>,
) -> Vec<(String, Option<Value>, Option<Value>)> {
    let mut out = Vec::new();
    if let (Some(Value::Object(o)), Some(Value::Object(n))) = (old, new) {
        for (k, nv) in n {
            if nv.is_null() || o.get(k) == Some(nv) {
                continue;
            }
            out.extend(changed_paths(&format!("{field}.{k}"), o.get(k), Some(nv)));
        }
    }
    if out.is_empty() {
        out.push((field.to_owned(), old.cloned(), new.cloned()));
    }
    out
}

#[cfg(test)]
mod changed_paths_tests {
    use super::changed_paths;
    use serde_json::json;

    #[test]
    fn a_nested_change_is_named_by_its_path() {
        let old =
            json!({"actions": {"users": {"alice": ["READ"]}, "groups": {}}, "includes": ["**"]});
        let new = json!({"actions": {"users": {"alice": ["READ", "WRITE"]}}, "includes": ["**"]});
        assert_eq!(
            changed_paths("artifact", Some(&old), Some(&new)),
            [(
                "artifact.actions.users.alice".to_owned(),
                Some(json!(["READ"])),
                Some(json!(["READ", "WRITE"]))
            )]
        );
    }

    #[test]
    fn a_leaf_an_array_or_an_unexplained_difference_is_the_field_itself() {
        let one = |old: serde_json::Value, new: serde_json::Value| {
            let got = changed_paths("f", Some(&old), Some(&new));
            assert_eq!(got, [("f".to_owned(), Some(old), Some(new))]);
        };
        one(json!("a"), json!("b"));
        one(json!([{"x": 1}]), json!([{"x": 2}]));
        // Only a member the desired value leaves out differs: not named.
        one(json!({"a": 1, "b": 2}), json!({"a": 1}));
        assert_eq!(
            changed_paths("f", None, Some(&json!({"a": 1}))),
            [("f".to_owned(), None, Some(json!({"a": 1})))]
        );
    }

    #[test]
    fn several_members_each_named() {
        let old = json!({"a": 1, "b": {"c": 2, "d": 3}});
        let new = json!({"a": 5, "b": {"c": 2, "d": 4}, "e": true});
        let paths: Vec<String> = changed_paths("s", Some(&old), Some(&new))
            .into_iter()
            .map(|(p, ..)| p)
            .collect();
        assert_eq!(paths, ["s.a", "s.b.d", "s.e"]);
    }
}
