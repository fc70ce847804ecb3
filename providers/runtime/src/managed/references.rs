//! Generic reference resolution (reference §11; crossplane-runtime `pkg/reference`,
//! `APISimpleReferenceResolver`).
//!
//! A Kind declares its reference fields ([`ReferenceField`]); for each one the resolver reads
//! `<field>Ref` / `<field>Selector` next to the value in `spec.forProvider`, fetches the
//! target MR (same scope), extracts its external name (or an `atProvider` path) and writes the
//! value (and, for selectors, the chosen Ref). All fields resolve or none is persisted; the
//! changes are sent as one server-side-apply patch by the reconciler.
//!
//! References are resolved in `spec.forProvider` and then in `spec.initProvider` (where Upjet
//! generates them too), with the same declared fields.

use kube::Api;
use kube::api::{DynamicObject, ListParams};
use serde_json::{Map, Value};

use super::errors::kube_message as kube_msg;
use super::kind::{ReferenceField, ReferenceSource, Scope};
use super::meta::EXTERNAL_NAME;

/// Resolution failed: `<go path>: <cause>`. Resolution only reads, so it never conflicts; the
/// reconciler's patch of the resolved values can (a `StepError::Conflict` there).
#[derive(Debug)]
pub struct ResolveError {
    /// `mg.Spec.ForProvider.X: cause`.
    pub message: String,
}

const ERR_EMPTY: &str = "referenced field was empty (referenced resource may not yet be ready)";
const ERR_NO_MATCH: &str = "no resources matched selector";

fn policy<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a str> {
    v.and_then(|v| v.get("policy"))
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
}

fn is_always(v: Option<&Value>) -> bool {
    policy(v, "resolve") == Some("Always")
}

fn is_optional(v: Option<&Value>) -> bool {
    policy(v, "resolution") == Some("Optional")
}

/// Context of the referencing MR.
pub struct RefContext<'a> {
    /// The client.
    pub client: &'a kube::Client,
    /// The MR's scope (targets are in the same scope).
    pub scope: Scope,
    /// The MR's namespace.
    pub namespace: Option<&'a str>,
    /// The MR's controller owner UID, for `matchControllerRef`.
    pub controller_uid: Option<&'a str>,
}

fn extract(obj: &DynamicObject, source: &ReferenceSource) -> String {
    match source {
        ReferenceSource::ExternalName => obj
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(EXTERNAL_NAME))
            .cloned()
            .unwrap_or_default(),
        ReferenceSource::AtProvider(path) => {
            let mut v = obj.data.get("status").and_then(|s| s.get("atProvider"));
            for seg in path.split('.') {
                v = v.and_then(|x| x.get(seg));
            }
            match v {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::Bool(b)) => b.to_string(),
                _ => String::new(),
            }
        }
    }
}

fn controller_uid(obj: &DynamicObject) -> Option<String> {
    obj.metadata
        .owner_references
        .as_ref()
        .and_then(|o| o.iter().find(|r| r.controller == Some(true)))
        .map(|r| r.uid.clone())
}

fn api_for(
    ctx: &RefContext<'_>,
    field: &ReferenceField,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let ar = field.target.api_resource(ctx.scope);
    match (ctx.scope, namespace) {
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(ctx.client.clone(), ns, &ar),
        _ => Api::all_with(ctx.client.clone(), &ar),
    }
}

/// Fetch the target of one Ref. Ok(None) when NotFound and optional.
async fn get_ref(
    ctx: &RefContext<'_>,
    field: &ReferenceField,
    r: &Value,
) -> Result<Option<String>, String> {
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    let ns = if ctx.scope.is_namespaced() {
        r.get("namespace")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or(ctx.namespace)
    } else {
        None
    };
    let optional = is_optional(Some(r));
    match api_for(ctx, field, ns).get(name).await {
        Ok(obj) => {
            let v = extract(&obj, &field.source);
            if v.is_empty() {
                if optional {
                    return Ok(None);
                }
                return Err(ERR_EMPTY.to_string());
            }
            Ok(Some(v))
        }
        Err(kube::Error::Api(s)) if s.code == 404 && optional => Ok(None),
        Err(e) => Err(format!("cannot get referenced resource: {}", kube_msg(&e))),
    }
}

/// Candidates of a selector, in list order (namespace, then name), after
/// `matchControllerRef` filtering.
async fn select(
    ctx: &RefContext<'_>,
    field: &ReferenceField,
    sel: &Value,
) -> Result<Vec<DynamicObject>, String> {
    let ns = if ctx.scope.is_namespaced() {
        sel.get("namespace")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or(ctx.namespace)
    } else {
        None
    };
    let labels: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let lp = if labels.is_empty() {
        ListParams::default()
    } else {
        ListParams::default().labels(&labels.join(","))
    };
    let list = api_for(ctx, field, ns).list(&lp).await.map_err(|e| {
        format!(
            "cannot list resources that match selector: {}",
            kube_msg(&e)
        )
    })?;
    let match_controller = sel
        .get("matchControllerRef")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut items: Vec<DynamicObject> = list
        .items
        .into_iter()
        .filter(|o| {
            if !match_controller {
                return true;
            }
            match (controller_uid(o), ctx.controller_uid) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            }
        })
        .collect();
    items.sort_by(|a, b| {
        (a.metadata.namespace.as_deref(), a.metadata.name.as_deref())
            .cmp(&(b.metadata.namespace.as_deref(), b.metadata.name.as_deref()))
    });
    Ok(items)
}

fn ref_for(ctx: &RefContext<'_>, obj: &DynamicObject) -> Value {
    let mut m = Map::new();
    m.insert(
        "name".into(),
        Value::String(obj.metadata.name.clone().unwrap_or_default()),
    );
    if ctx.scope.is_namespaced()
        && let Some(ns) = &obj.metadata.namespace
    {
        m.insert("namespace".into(), Value::String(ns.clone()));
    }
    Value::Object(m)
}

/// Navigate to the object holding `field` (creating nothing). None when a parent is absent.
fn parent_mut<'a>(
    for_provider: &'a mut Value,
    field: &str,
) -> Option<(&'a mut Map<String, Value>, String)> {
    let mut segs: Vec<&str> = field.split('.').collect();
    let leaf = segs.pop()?.to_string();
    let mut cur = for_provider;
    for s in segs {
        cur = cur.get_mut(s)?;
    }
    cur.as_object_mut().map(|m| (m, leaf))
}

/// Resolve every declared reference in `for_provider` in place. Returns an error naming the
/// first failing field; the caller then discards all changes.
/// `block` names the parameter block in error paths: `ForProvider` or `InitProvider`.
pub async fn resolve_all(
    ctx: &RefContext<'_>,
    fields: &[ReferenceField],
    params: &mut Value,
    block: &str,
) -> Result<(), ResolveError> {
    for f in fields {
        resolve_one(ctx, f, params)
            .await
            .map_err(|cause| ResolveError {
                message: format!("{}: {cause}", f.go_path_in(block)),
            })?;
    }
    Ok(())
}

async fn resolve_one(
    ctx: &RefContext<'_>,
    f: &ReferenceField,
    for_provider: &mut Value,
) -> Result<(), String> {
    let Some((parent, leaf)) = parent_mut(for_provider, f.field) else {
        return Ok(());
    };
    let sel = parent.get(f.selector_field).cloned();
    let mut reference = parent.get(f.ref_field).cloned();
    let sel_always = is_always(sel.as_ref());

    if !f.multi {
        let current = parent
            .get(&leaf)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // IsNoOp (crossplane-runtime reference.go)
        if sel_always {
            reference = None;
        } else if !is_always(reference.as_ref())
            && (!current.is_empty() || (reference.is_none() && sel.is_none()))
        {
            return Ok(());
        }
        if let Some(r) = &reference {
            if let Some(v) = get_ref(ctx, f, r).await? {
                parent.insert(leaf, Value::String(v));
            }
            return Ok(());
        }
        let Some(sel) = sel else { return Ok(()) };
        let optional = is_optional(Some(&sel));
        let items = select(ctx, f, &sel).await?;
        let Some(first) = items.first() else {
            return if optional {
                Ok(())
            } else {
                Err(ERR_NO_MATCH.to_string())
            };
        };
        let v = extract(first, &f.source);
        if v.is_empty() {
            return if optional {
                Ok(())
            } else {
                Err(ERR_EMPTY.to_string())
            };
        }
        parent.insert(leaf, Value::String(v));
        parent.insert(f.ref_field.to_string(), ref_for(ctx, first));
        return Ok(());
    }

    // Multi-valued.
    let current_len = parent
        .get(&leaf)
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    let refs: Vec<Value> = reference
        .as_ref()
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let any_ref_always = refs.iter().any(|r| is_always(Some(r)));
    let mut refs = refs;
    if sel_always {
        refs.clear();
    } else if !any_ref_always && (current_len > 0 || (refs.is_empty() && sel.is_none())) {
        return Ok(());
    }
    if !refs.is_empty() {
        let mut values = Vec::new();
        for r in &refs {
            if let Some(v) = get_ref(ctx, f, r).await? {
                values.push(Value::String(v));
            }
        }
        parent.insert(leaf, Value::Array(values));
        return Ok(());
    }
    let Some(sel) = sel else { return Ok(()) };
    let optional = is_optional(Some(&sel));
    let items = select(ctx, f, &sel).await?;
    let mut pairs: Vec<(String, Value)> = Vec::new();
    for o in &items {
        let v = extract(o, &f.source);
        if v.is_empty() || pairs.iter().any(|(x, _)| *x == v) {
            continue;
        }
        pairs.push((v, ref_for(ctx, o)));
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    if pairs.is_empty() {
        return if optional {
            Ok(())
        } else {
            Err(ERR_NO_MATCH.to_string())
        };
    }
    parent.insert(
        leaf,
        Value::Array(
            pairs
                .iter()
                .map(|(v, _)| Value::String(v.clone()))
                .collect(),
        ),
    );
    parent.insert(
        f.ref_field.to_string(),
        Value::Array(pairs.into_iter().map(|(_, r)| r).collect()),
    );
    Ok(())
}

/// A JSON merge-diff from `before` to `after` (None when equal, treating absent and empty as
/// equal at the top).
pub fn merge_diff(before: &Value, after: &Value) -> Option<Value> {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut out = Map::new();
            for (k, av) in a {
                match b.get(k) {
                    Some(bv) => {
                        if let Some(d) = merge_diff(bv, av) {
                            out.insert(k.clone(), d);
                        }
                    }
                    None => {
                        out.insert(k.clone(), av.clone());
                    }
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            if out.is_empty() {
                None
            } else {
                Some(Value::Object(out))
            }
        }
        (b, a) if b == a => None,
        (_, a) => Some(a.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_diff_basics() {
        assert_eq!(merge_diff(&json!({"a": 1}), &json!({"a": 1})), None);
        assert_eq!(
            merge_diff(
                &json!({"a": 1, "b": {"c": 1}}),
                &json!({"a": 2, "b": {"c": 1, "d": 2}})
            ),
            Some(json!({"a": 2, "b": {"d": 2}}))
        );
        assert_eq!(
            merge_diff(&json!({"a": 1, "x": 1}), &json!({"a": 1})),
            Some(json!({"x": null}))
        );
    }
}
