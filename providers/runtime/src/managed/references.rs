//! Generic reference resolution (docs/managed-reconciler.md §11; crossplane-runtime
//! `pkg/reference`: `APINamespacedResolver` for namespaced MRs, `APIResolver` for legacy
//! cluster-scoped ones).
//!
//! A Kind declares its reference fields ([`ReferenceField`]); for each one the resolver reads
//! `<field>Ref(s)` / `<field>Selector` next to the value in `spec.forProvider` (and in each
//! element of a list of objects on the way, for nested fields), fetches the target MR (same
//! scope: a namespaced MR refers to namespaced MRs, by default in its own namespace; a legacy
//! MR to legacy ones), extracts its external name (or an `atProvider` path) and writes the
//! value (and, for selectors, the chosen Ref). All fields resolve or none is persisted; the
//! changes are sent as one server-side-apply patch by the reconciler.
//!
//! The rules are crossplane-runtime's, step by step:
//! - No-op (`IsNoOp`): a set value is kept (resolution "caches") unless the policy says
//!   `resolve: Always`; a selector's `Always` drops the Refs and selects again; with a
//!   selector present, the Refs' own `Always` is not consulted.
//! - A Ref is resolved before a selector. A missing target fails (`cannot get referenced
//!   resource: ...`) unless `resolution: Optional`; an empty extracted value fails with
//!   `referenced field was empty (referenced resource may not yet be ready)` unless optional.
//! - A selector lists the target Kind(s) with `matchLabels` in the selector's namespace (the
//!   MR's by default), drops candidates without the MR's controller when
//!   `matchControllerRef: true` (two objects without a controller do not match), and takes
//!   the first; a list selector takes every candidate, keyed by value (deduplicated) and sorted
//!   by value. No candidate: `no resources matched selector`; a candidate whose value is
//!   still empty fails the whole selection (so a list is never resolved half-way), unless
//!   optional.
//! - Optional and unresolved: the value is left unset (crossplane-runtime writes an empty
//!   value back; we keep the user's Ref rather than clear it).
//!
//! References are resolved in `spec.forProvider` and then in `spec.initProvider` (where Upjet
//! generates them too), with the same declared fields.

use std::collections::BTreeMap;
use std::future::Future;

use kube::Api;
use kube::api::{DynamicObject, ListParams};
use serde_json::{Map, Value};

use super::errors::{is_not_found, kube_message as kube_msg};
use super::kind::{ReferenceField, ReferenceSource, ReferenceTarget, Scope, go_path};
use super::meta::EXTERNAL_NAME;

/// Resolution failed: `<go path>: <cause>`. Resolution only reads, so it never conflicts; the
/// reconciler's patch of the resolved values can (a `StepError::Conflict` there).
#[derive(Debug)]
pub struct ResolveError {
    /// `mg.Spec.ForProvider.X: cause`.
    pub message: String,
}

const ERR_GET: &str = "cannot get referenced resource";
const ERR_LIST: &str = "cannot list resources that match selector";
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

/// Reads of the referenced Kinds: the Kubernetes API ([`KubeLookup`]) or, in unit tests, a
/// fixed set of objects.
pub trait Lookup: Sync {
    /// The object `name` of `target` (in `namespace` for namespaced MRs); `Ok(None)` when it
    /// does not exist. `Err` is the API's message.
    fn get(
        &self,
        target: &ReferenceTarget,
        namespace: Option<&str>,
        name: &str,
    ) -> impl Future<Output = Result<Option<DynamicObject>, String>> + Send;
    /// The objects of `target` with these labels (`k=v,...`, empty for all); `Ok(None)` when
    /// the Kind is not served (its provider is not installed).
    fn list(
        &self,
        target: &ReferenceTarget,
        namespace: Option<&str>,
        labels: &str,
    ) -> impl Future<Output = Result<Option<Vec<DynamicObject>>, String>> + Send;
}

/// [`Lookup`] through the Kubernetes API with the provider's client.
pub struct KubeLookup<'a> {
    /// The client.
    pub client: &'a kube::Client,
    /// The scope of the referencing MR (targets are in the same scope).
    pub scope: Scope,
}

impl KubeLookup<'_> {
    fn api(&self, target: &ReferenceTarget, namespace: Option<&str>) -> Api<DynamicObject> {
        let ar = target.api_resource(self.scope);
        match (self.scope, namespace) {
            (Scope::Namespaced, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &ar),
            _ => Api::all_with(self.client.clone(), &ar),
        }
    }
}

impl Lookup for KubeLookup<'_> {
    async fn get(
        &self,
        target: &ReferenceTarget,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<DynamicObject>, String> {
        match self.api(target, namespace).get(name).await {
            Ok(o) => Ok(Some(o)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(kube_msg(&e)),
        }
    }

    async fn list(
        &self,
        target: &ReferenceTarget,
        namespace: Option<&str>,
        labels: &str,
    ) -> Result<Option<Vec<DynamicObject>>, String> {
        let lp = if labels.is_empty() {
            ListParams::default()
        } else {
            ListParams::default().labels(labels)
        };
        match self.api(target, namespace).list(&lp).await {
            Ok(l) => Ok(Some(l.items)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(kube_msg(&e)),
        }
    }
}

/// Context of the referencing MR.
pub struct RefContext<'a> {
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

/// The namespace a Ref or selector reads in: its own `namespace`, else the MR's (namespaced
/// MRs only; legacy references carry no namespace).
fn namespace_of<'a>(ctx: &RefContext<'a>, v: &'a Value) -> Option<&'a str> {
    if !ctx.scope.is_namespaced() {
        return None;
    }
    v.get("namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or(ctx.namespace)
}

/// A Ref to an object that does not exist. With one target Kind, crossplane-runtime's
/// words (`<plural>.<group> "<name>" not found`); with several (a field any of many Kinds may
/// fill, such as a virtual repository's members: up to 150), the object, its namespace and
/// where it was looked for, not every Kind's name.
fn not_found(ctx: &RefContext<'_>, field: &ReferenceField, ns: Option<&str>, name: &str) -> String {
    if let [t] = field.targets.as_slice() {
        let ar = t.api_resource(ctx.scope);
        return format!("{ERR_GET}: {}.{} \"{name}\" not found", ar.plural, ar.group);
    }
    let mut groups: Vec<String> = field
        .targets
        .iter()
        .map(|t| t.api_resource(ctx.scope).group)
        .collect();
    groups.sort();
    groups.dedup();
    let place = match ns {
        Some(ns) => format!(" in namespace \"{ns}\""),
        None => String::new(),
    };
    let kinds = field.targets.iter().map(|t| t.kind);
    let named = if field.targets.len() <= 3 {
        kinds.collect::<Vec<_>>().join(", ")
    } else {
        format!("{} Kinds", field.targets.len())
    };
    format!(
        "{ERR_GET}: \"{name}\"{place} not found: no such object among the Kinds it may name ({named} in {})",
        groups.join(", ")
    )
}

/// The value of one Ref. `Ok(None)`: not resolved and optional.
async fn get_ref<L: Lookup>(
    lookup: &L,
    ctx: &RefContext<'_>,
    field: &ReferenceField,
    r: &Value,
) -> Result<Option<String>, String> {
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    let ns = namespace_of(ctx, r);
    let optional = is_optional(Some(r));
    let mut found = None;
    for t in &field.targets {
        if let Some(o) = lookup
            .get(t, ns, name)
            .await
            .map_err(|m| format!("{ERR_GET}: {m}"))?
        {
            found = Some(o);
            break;
        }
    }
    let Some(obj) = found else {
        if optional {
            return Ok(None);
        }
        return Err(not_found(ctx, field, ns, name));
    };
    let v = extract(&obj, &field.source);
    if v.is_empty() {
        return if optional {
            Ok(None)
        } else {
            Err(ERR_EMPTY.to_string())
        };
    }
    Ok(Some(v))
}

/// Candidates of a selector: each target Kind in declaration order, each listed in the API's
/// order (namespace, then name), after `matchControllerRef` filtering.
async fn select<L: Lookup>(
    lookup: &L,
    ctx: &RefContext<'_>,
    field: &ReferenceField,
    sel: &Value,
) -> Result<Vec<DynamicObject>, String> {
    let ns = namespace_of(ctx, sel);
    let labels: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let labels = labels.join(",");
    let match_controller = sel
        .get("matchControllerRef")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut out = Vec::new();
    for t in &field.targets {
        let listed = lookup
            .list(t, ns, &labels)
            .await
            .map_err(|m| format!("{ERR_LIST}: {m}"))?;
        let mut items = match listed {
            Some(items) => items,
            // A Kind that is not served has no candidates when others may; alone, the list
            // fails as the API answered.
            None if field.targets.len() > 1 => continue,
            None => {
                let ar = t.api_resource(ctx.scope);
                return Err(format!(
                    "{ERR_LIST}: the server could not find the requested resource ({}.{})",
                    ar.plural, ar.group
                ));
            }
        };
        items.retain(|o| {
            !match_controller
                || matches!((controller_uid(o), ctx.controller_uid), (Some(a), Some(b)) if a == b)
        });
        items.sort_by(|a, b| {
            (a.metadata.namespace.as_deref(), a.metadata.name.as_deref())
                .cmp(&(b.metadata.namespace.as_deref(), b.metadata.name.as_deref()))
        });
        out.extend(items);
    }
    Ok(out)
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

/// Resolve every declared reference in `params` (`forProvider` or `initProvider`) in place.
/// Returns an error naming the first failing field (`mg.Spec.<block>.<Path>`); the caller
/// then discards all changes. `block` is `ForProvider` or `InitProvider`.
pub async fn resolve_all<L: Lookup>(
    lookup: &L,
    ctx: &RefContext<'_>,
    fields: &[ReferenceField],
    params: &mut Value,
    block: &str,
) -> Result<(), ResolveError> {
    for f in fields {
        let segs: Vec<&str> = f.field.split('.').collect();
        resolve_at(lookup, ctx, f, params, &segs, &mut Vec::new(), block).await?;
    }
    Ok(())
}

/// Walk `segs` from `node` (objects, and each element of a list on the way) to the objects
/// holding the value field, and resolve there.
fn resolve_at<'a, L: Lookup>(
    lookup: &'a L,
    ctx: &'a RefContext<'a>,
    f: &'a ReferenceField,
    node: &'a mut Value,
    segs: &'a [&'a str],
    trail: &'a mut Vec<(&'a str, Option<usize>)>,
    block: &'a str,
) -> std::pin::Pin<Box<dyn Future<Output = Result<(), ResolveError>> + Send + 'a>> {
    Box::pin(async move {
        let Some((first, rest)) = segs.split_first() else {
            return Ok(());
        };
        if rest.is_empty() {
            let Some(parent) = node.as_object_mut() else {
                return Ok(());
            };
            trail.push((first, None));
            let r = resolve_leaf(lookup, ctx, f, parent, first).await;
            let path = go_path(block, trail);
            trail.pop();
            return r.map_err(|cause| ResolveError {
                message: format!("{path}: {cause}"),
            });
        }
        match node.get_mut(*first) {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let mut t = trail.clone();
                    t.push((first, Some(i)));
                    resolve_at(lookup, ctx, f, item, rest, &mut t, block).await?;
                }
                Ok(())
            }
            Some(child @ Value::Object(_)) => {
                let mut t = trail.clone();
                t.push((first, None));
                resolve_at(lookup, ctx, f, child, rest, &mut t, block).await
            }
            _ => Ok(()),
        }
    })
}

async fn resolve_leaf<L: Lookup>(
    lookup: &L,
    ctx: &RefContext<'_>,
    f: &ReferenceField,
    parent: &mut Map<String, Value>,
    leaf: &str,
) -> Result<(), String> {
    let sel = parent.get(f.selector_field).cloned();
    let reference = parent.get(f.ref_field).cloned();
    if !f.multi {
        resolve_single(lookup, ctx, f, parent, leaf, sel, reference).await
    } else {
        resolve_multi(lookup, ctx, f, parent, leaf, sel, reference).await
    }
}

async fn resolve_single<L: Lookup>(
    lookup: &L,
    ctx: &RefContext<'_>,
    f: &ReferenceField,
    parent: &mut Map<String, Value>,
    leaf: &str,
    sel: Option<Value>,
    mut reference: Option<Value>,
) -> Result<(), String> {
    let current = parent
        .get(leaf)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // IsNoOp (crossplane-runtime `ResolutionRequest.IsNoOp`).
    let mut always = false;
    if let Some(s) = &sel {
        if is_always(Some(s)) {
            reference = None;
            always = true;
        }
    } else if is_always(reference.as_ref()) {
        always = true;
    }
    if (!current.is_empty() && !always) || (reference.is_none() && sel.is_none()) {
        return Ok(());
    }
    if let Some(r) = &reference {
        match get_ref(lookup, ctx, f, r).await? {
            Some(v) => parent.insert(leaf.to_string(), Value::String(v)),
            None => parent.remove(leaf),
        };
        return Ok(());
    }
    let Some(sel) = sel else { return Ok(()) };
    let optional = is_optional(Some(&sel));
    let items = select(lookup, ctx, f, &sel).await?;
    let Some(first) = items.first() else {
        if !optional {
            return Err(ERR_NO_MATCH.to_string());
        }
        parent.remove(leaf);
        parent.remove(f.ref_field);
        return Ok(());
    };
    let v = extract(first, &f.source);
    if v.is_empty() && !optional {
        return Err(ERR_EMPTY.to_string());
    }
    parent.insert(f.ref_field.to_string(), ref_for(ctx, first));
    if v.is_empty() {
        parent.remove(leaf);
    } else {
        parent.insert(leaf.to_string(), Value::String(v));
    }
    Ok(())
}

async fn resolve_multi<L: Lookup>(
    lookup: &L,
    ctx: &RefContext<'_>,
    f: &ReferenceField,
    parent: &mut Map<String, Value>,
    leaf: &str,
    sel: Option<Value>,
    reference: Option<Value>,
) -> Result<(), String> {
    let current_len = parent
        .get(leaf)
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    let mut refs: Vec<Value> = reference
        .as_ref()
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // IsNoOp (crossplane-runtime `MultiResolutionRequest.IsNoOp`).
    let mut always = false;
    if let Some(s) = &sel {
        if is_always(Some(s)) {
            refs.clear();
            always = true;
        }
    } else if refs.iter().any(|r| is_always(Some(r))) {
        always = true;
    }
    if (current_len > 0 && !always) || (refs.is_empty() && sel.is_none()) {
        return Ok(());
    }
    if !refs.is_empty() {
        let mut values = Vec::new();
        for r in &refs {
            if let Some(v) = get_ref(lookup, ctx, f, r).await? {
                values.push(Value::String(v));
            }
        }
        if values.is_empty() {
            parent.remove(leaf);
        } else {
            parent.insert(leaf.to_string(), Value::Array(values));
        }
        return Ok(());
    }
    let Some(sel) = sel else { return Ok(()) };
    let optional = is_optional(Some(&sel));
    let items = select(lookup, ctx, f, &sel).await?;
    // Keyed by value: deduplicated (the last candidate of a value wins) and sorted.
    let mut by_value: BTreeMap<String, Value> = BTreeMap::new();
    for o in &items {
        by_value.insert(extract(o, &f.source), ref_for(ctx, o));
    }
    if by_value.contains_key("") {
        if !optional {
            return Err(ERR_EMPTY.to_string());
        }
        by_value.remove("");
    }
    if by_value.is_empty() {
        if !optional {
            return Err(ERR_NO_MATCH.to_string());
        }
        parent.remove(leaf);
        parent.remove(f.ref_field);
        return Ok(());
    }
    let (values, refs): (Vec<Value>, Vec<Value>) = by_value
        .into_iter()
        .map(|(v, r)| (Value::String(v), r))
        .unzip();
    parent.insert(leaf.to_string(), Value::Array(values));
    parent.insert(f.ref_field.to_string(), Value::Array(refs));
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

    /// Objects by (Kind, namespace, name); `unserved` Kinds answer 404 to a list.
    #[derive(Default)]
    struct Fake {
        objects: Vec<(&'static str, DynamicObject)>,
        unserved: Vec<&'static str>,
    }

    impl Fake {
        fn with(mut self, kind: &'static str, name: &str, ext: &str, labels: Value) -> Self {
            let mut o: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "x/v1", "kind": kind,
                "metadata": {"name": name, "namespace": "ns", "labels": labels,
                             "annotations": if ext.is_empty() { json!({}) } else { json!({EXTERNAL_NAME: ext}) }},
            }))
            .expect("object");
            o.metadata.namespace = Some("ns".into());
            self.objects.push((kind, o));
            self
        }
        fn owned(mut self, uid: &str) -> Self {
            let o = &mut self.objects.last_mut().expect("an object").1;
            o.metadata.owner_references = Some(vec![
                serde_json::from_value(json!({"apiVersion": "v1", "kind": "X", "name": "c",
                    "uid": uid, "controller": true}))
                .expect("owner"),
            ]);
            self
        }
    }

    impl Lookup for Fake {
        async fn get(
            &self,
            target: &ReferenceTarget,
            namespace: Option<&str>,
            name: &str,
        ) -> Result<Option<DynamicObject>, String> {
            Ok(self
                .objects
                .iter()
                .find(|(k, o)| {
                    *k == target.kind
                        && o.metadata.name.as_deref() == Some(name)
                        && o.metadata.namespace.as_deref() == namespace
                })
                .map(|(_, o)| o.clone()))
        }
        async fn list(
            &self,
            target: &ReferenceTarget,
            namespace: Option<&str>,
            labels: &str,
        ) -> Result<Option<Vec<DynamicObject>>, String> {
            if self.unserved.contains(&target.kind) {
                return Ok(None);
            }
            let want: Vec<(&str, &str)> = labels
                .split(',')
                .filter(|l| !l.is_empty())
                .filter_map(|l| l.split_once('='))
                .collect();
            Ok(Some(
                self.objects
                    .iter()
                    .filter(|(k, o)| {
                        *k == target.kind
                            && o.metadata.namespace.as_deref() == namespace
                            && want.iter().all(|(lk, lv)| {
                                o.metadata
                                    .labels
                                    .as_ref()
                                    .and_then(|l| l.get(*lk))
                                    .map(String::as_str)
                                    == Some(*lv)
                            })
                    })
                    .map(|(_, o)| o.clone())
                    .collect(),
            ))
        }
    }

    fn t(kind: &'static str) -> ReferenceTarget {
        ReferenceTarget {
            provider: "artifactory",
            group: "repository",
            kind,
            version: "v1alpha1",
        }
    }

    const CTX: RefContext<'static> = RefContext {
        scope: Scope::Namespaced,
        namespace: Some("ns"),
        controller_uid: Some("owner-1"),
    };

    async fn run(fake: &Fake, f: &ReferenceField, params: Value) -> Result<Value, String> {
        let mut p = params;
        resolve_all(fake, &CTX, std::slice::from_ref(f), &mut p, "ForProvider")
            .await
            .map(|()| p)
            .map_err(|e| e.message)
    }

    fn key_pair() -> ReferenceField {
        ReferenceField::single("primaryKeypairRef", t("Keypair"))
    }

    #[tokio::test]
    async fn a_ref_takes_the_external_name_and_a_set_value_is_kept_unless_always() {
        let fake = Fake::default().with("Keypair", "kp", "signing-key", json!({}));
        let f = key_pair();
        let out = run(&fake, &f, json!({"primaryKeypairRefRef": {"name": "kp"}})).await;
        assert_eq!(out.unwrap()["primaryKeypairRef"], "signing-key");
        // IfNotPresent (the default): a value already set is kept.
        let kept = json!({"primaryKeypairRef": "old", "primaryKeypairRefRef": {"name": "kp"}});
        assert_eq!(run(&fake, &f, kept.clone()).await.unwrap(), kept);
        // Always: resolved again.
        let always = json!({"primaryKeypairRef": "old",
            "primaryKeypairRefRef": {"name": "kp", "policy": {"resolve": "Always"}}});
        assert_eq!(
            run(&fake, &f, always).await.unwrap()["primaryKeypairRef"],
            "signing-key"
        );
        // Nothing to resolve: untouched.
        assert_eq!(run(&fake, &f, json!({})).await.unwrap(), json!({}));
    }

    #[tokio::test]
    async fn required_fails_naming_the_field_optional_leaves_the_value_unset() {
        let fake = Fake::default().with("Keypair", "pending", "", json!({}));
        let f = key_pair();
        let missing = run(&fake, &f, json!({"primaryKeypairRefRef": {"name": "nope"}})).await;
        assert_eq!(
            missing.unwrap_err(),
            "mg.Spec.ForProvider.PrimaryKeypairRef: cannot get referenced resource: keypairs.repository.artifactory.m.crossplane.io \"nope\" not found"
        );
        let empty = run(
            &fake,
            &f,
            json!({"primaryKeypairRefRef": {"name": "pending"}}),
        )
        .await;
        assert!(empty.unwrap_err().ends_with(ERR_EMPTY));
        for name in ["nope", "pending"] {
            let opt = json!({"primaryKeypairRefRef": {"name": name, "policy": {"resolution": "Optional"}}});
            let out = run(&fake, &f, opt).await.unwrap();
            assert!(out.get("primaryKeypairRef").is_none(), "{out}");
            assert_eq!(out["primaryKeypairRefRef"]["name"], name);
        }
    }

    #[tokio::test]
    async fn a_selector_takes_the_first_match_with_labels_and_controller() {
        let fake = Fake::default()
            .with("Keypair", "a", "key-a", json!({"team": "x"}))
            .with("Keypair", "b", "key-b", json!({"team": "x"}))
            .owned("owner-1")
            .with("Keypair", "c", "key-c", json!({"team": "y"}))
            .owned("owner-1");
        let f = key_pair();
        let out = run(
            &fake,
            &f,
            json!({"primaryKeypairRefSelector": {"matchLabels": {"team": "x"}}}),
        )
        .await
        .unwrap();
        assert_eq!(out["primaryKeypairRef"], "key-a");
        assert_eq!(
            out["primaryKeypairRefRef"],
            json!({"name": "a", "namespace": "ns"})
        );
        // matchControllerRef: only candidates with the referrer's controller.
        let out = run(&fake, &f, json!({"primaryKeypairRefSelector": {"matchLabels": {"team": "x"}, "matchControllerRef": true}})).await.unwrap();
        assert_eq!(out["primaryKeypairRef"], "key-b");
        let none = run(
            &fake,
            &f,
            json!({"primaryKeypairRefSelector": {"matchLabels": {"team": "z"}}}),
        )
        .await;
        assert!(none.unwrap_err().ends_with(ERR_NO_MATCH));
        let opt = run(&fake, &f, json!({"primaryKeypairRefSelector": {"matchLabels": {"team": "z"}, "policy": {"resolution": "Optional"}}})).await.unwrap();
        assert!(opt.get("primaryKeypairRef").is_none());
        // A selector's Always drops the chosen Ref and selects again; without Always the
        // Ref chosen before is kept even when a Ref says Always (the selector decides).
        let again = json!({"primaryKeypairRef": "key-c", "primaryKeypairRefRef": {"name": "c"},
            "primaryKeypairRefSelector": {"matchLabels": {"team": "x"}, "policy": {"resolve": "Always"}}});
        assert_eq!(
            run(&fake, &f, again).await.unwrap()["primaryKeypairRef"],
            "key-a"
        );
        let cached = json!({"primaryKeypairRef": "key-c",
            "primaryKeypairRefRef": {"name": "c", "policy": {"resolve": "Always"}},
            "primaryKeypairRefSelector": {"matchLabels": {"team": "x"}}});
        assert_eq!(run(&fake, &f, cached.clone()).await.unwrap(), cached);
    }

    fn members() -> ReferenceField {
        ReferenceField::new(
            "repositories",
            true,
            vec![t("LocalMavenRepository"), t("RemoteMavenRepository")],
        )
    }

    #[tokio::test]
    async fn lists_keep_ref_order_and_selectors_sort_deduplicate_and_span_kinds() {
        let fake = Fake {
            unserved: vec![],
            ..Fake::default()
        }
        .with(
            "LocalMavenRepository",
            "local",
            "libs-local",
            json!({"v": "1"}),
        )
        .with(
            "RemoteMavenRepository",
            "remote",
            "central",
            json!({"v": "1"}),
        )
        .with(
            "RemoteMavenRepository",
            "remote2",
            "central",
            json!({"v": "1"}),
        );
        let f = members();
        assert_eq!(f.ref_field, "repositoriesRefs");
        let refs = json!({"repositoriesRefs": [{"name": "remote"}, {"name": "local"}]});
        assert_eq!(
            run(&fake, &f, refs).await.unwrap()["repositories"],
            json!(["central", "libs-local"])
        );
        let out = run(
            &fake,
            &f,
            json!({"repositoriesSelector": {"matchLabels": {"v": "1"}}}),
        )
        .await
        .unwrap();
        assert_eq!(out["repositories"], json!(["central", "libs-local"]));
        assert_eq!(
            out["repositoriesRefs"],
            json!([{"name": "remote2", "namespace": "ns"}, {"name": "local", "namespace": "ns"}])
        );
        // A set list is kept (IfNotPresent).
        let set =
            json!({"repositories": ["x"], "repositoriesSelector": {"matchLabels": {"v": "1"}}});
        assert_eq!(run(&fake, &f, set.clone()).await.unwrap(), set);
    }

    #[tokio::test]
    async fn a_list_selector_waits_for_every_candidate_and_skips_unserved_kinds() {
        let fake = Fake {
            unserved: vec!["RemoteMavenRepository"],
            ..Fake::default()
        }
        .with("LocalMavenRepository", "a", "libs-a", json!({"v": "1"}))
        .with("LocalMavenRepository", "b", "", json!({"v": "1"}));
        let f = members();
        // One candidate has no external name yet: no half-resolved list.
        let err = run(
            &fake,
            &f,
            json!({"repositoriesSelector": {"matchLabels": {"v": "1"}}}),
        )
        .await;
        assert_eq!(
            err.unwrap_err(),
            format!("mg.Spec.ForProvider.Repositories: {ERR_EMPTY}")
        );
        let opt = json!({"repositoriesSelector": {"matchLabels": {"v": "1"}, "policy": {"resolution": "Optional"}}});
        assert_eq!(
            run(&fake, &f, opt).await.unwrap()["repositories"],
            json!(["libs-a"])
        );
        // A Ref whose target is missing fails the list unless optional.
        let refs = json!({"repositoriesRefs": [{"name": "a"}, {"name": "gone"}]});
        let err = run(&fake, &f, refs).await.unwrap_err();
        assert!(
            err.ends_with("cannot get referenced resource: \"gone\" in namespace \"ns\" not found: no such object among the Kinds it may name (LocalMavenRepository, RemoteMavenRepository in repository.artifactory.m.crossplane.io)"),
            "{err}"
        );
        // A field many Kinds may fill (a virtual repository's members: up to 150) names how
        // many, not each.
        let many = ReferenceField::new(
            "repositories",
            true,
            (0..150).map(|_| t("LocalMavenRepository")).collect(),
        );
        let err = run(
            &fake,
            &many,
            json!({"repositoriesRefs": [{"name": "gone"}]}),
        )
        .await
        .unwrap_err();
        assert!(
            err.ends_with("\"gone\" in namespace \"ns\" not found: no such object among the Kinds it may name (150 Kinds in repository.artifactory.m.crossplane.io)"),
            "{err}"
        );
        let refs = json!({"repositoriesRefs": [{"name": "a"}, {"name": "gone", "policy": {"resolution": "Optional"}}]});
        assert_eq!(
            run(&fake, &f, refs).await.unwrap()["repositories"],
            json!(["libs-a"])
        );
    }

    #[tokio::test]
    async fn nested_fields_resolve_in_each_list_element_and_errors_name_the_element() {
        let fake = Fake::default().with("SecurityPolicy", "p", "sec-policy", json!({}));
        let f = ReferenceField::single("assignedPolicy.name", t("SecurityPolicy"));
        let out = run(
            &fake,
            &f,
            json!({"assignedPolicy": [{"name": "given", "type": "security"}, {"nameRef": {"name": "p"}, "type": "security"}]}),
        )
        .await
        .unwrap();
        assert_eq!(out["assignedPolicy"][0]["name"], "given");
        assert_eq!(out["assignedPolicy"][1]["name"], "sec-policy");
        let err = run(
            &fake,
            &f,
            json!({"assignedPolicy": [{"name": "given"}, {"nameRef": {"name": "nope"}}]}),
        )
        .await;
        assert!(err.unwrap_err().starts_with(
            "mg.Spec.ForProvider.AssignedPolicy[1].Name: cannot get referenced resource"
        ),);
    }

    #[tokio::test]
    async fn a_legacy_reference_reads_cluster_wide() {
        struct Scoped;
        impl Lookup for Scoped {
            async fn get(
                &self,
                _: &ReferenceTarget,
                namespace: Option<&str>,
                name: &str,
            ) -> Result<Option<DynamicObject>, String> {
                assert_eq!(namespace, None, "legacy references carry no namespace");
                Ok(Some(
                    serde_json::from_value(json!({"apiVersion": "x/v1", "kind": "K",
                        "metadata": {"name": name, "annotations": {EXTERNAL_NAME: "ext"}}}))
                    .expect("object"),
                ))
            }
            async fn list(
                &self,
                _: &ReferenceTarget,
                _: Option<&str>,
                _: &str,
            ) -> Result<Option<Vec<DynamicObject>>, String> {
                Ok(Some(vec![]))
            }
        }
        let ctx = RefContext {
            scope: Scope::Cluster,
            namespace: None,
            controller_uid: None,
        };
        let mut p = json!({"primaryKeypairRefRef": {"name": "kp", "namespace": "ignored"}});
        resolve_all(&Scoped, &ctx, &[key_pair()], &mut p, "InitProvider")
            .await
            .expect("resolves");
        assert_eq!(p["primaryKeypairRef"], "ext");
    }

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
