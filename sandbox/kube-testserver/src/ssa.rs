//! Field ownership (`metadata.managedFields`) and server-side apply.
//!
//! Every write records which manager set which fields, in the `FieldsV1` format (`f:<name>`
//! for map fields, `v:<json>` for set items). Non-apply writes (create, PUT, merge/JSON/strategic
//! patch) give the fields they change to their manager with `operation: Update` and take them
//! from everyone else. An apply (`application/apply-patch+yaml`) sets the fields of the applied
//! configuration, removes fields this manager applied before but no longer applies (unless
//! another manager also owns them), and fails with 409 Conflict when another manager owns a field
//! with a different value, unless `force=true`, which takes the field over.
//!
//! Lists follow the schema's `x-kubernetes-list-type`: `map` lists (e.g. `status.conditions`)
//! are owned per key (`k:{"type":"Ready"}`), `set` lists per value (`v:"x"`), others whole;
//! `metadata.finalizers` is a set and `metadata.ownerReferences` a map keyed by `uid`, as
//! upstream.
//!
//! Deviations (simplifications): built-in kinds have no schema here, so their lists (other
//! than the metadata ones) are atomic; a keyed item is removed only when no manager owns any
//! field of it any more; entries are kept per (manager, operation, subresource) without the
//! apiVersion conversion upstream does.

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// A path of `FieldsV1` elements (`f:spec`, `f:forProvider`, `v:"finalizer"`).
pub type FieldPath = Vec<String>;

/// Metadata fields the server owns; never tracked.
const SYSTEM_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
];

/// How a list is owned: whole, per item value (`x-kubernetes-list-type: set`) or per key
/// (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// List types from an `openAPIV3Schema` (and upstream's for metadata lists).
#[derive(Debug, Clone, Copy)]
pub struct Lists<'a>(pub Option<&'a Value>);

impl Lists<'_> {
    pub fn kind(&self, path: &[String]) -> ListKind {
        match path {
            [a, b] if a == "f:metadata" && b == "f:finalizers" => return ListKind::Set,
            [a, b] if a == "f:metadata" && b == "f:ownerReferences" => {
                return ListKind::Map(vec!["uid".into()]);
            }
            _ => {}
        }
        let Some(mut s) = self.0 else {
            return ListKind::Atomic;
        };
        for el in path {
            s = if let Some(f) = el.strip_prefix("f:") {
                match s.get("properties").and_then(|p| p.get(f)) {
                    Some(x) => x,
                    None => match s.get("additionalProperties") {
                        Some(x) if x.is_object() => x,
                        _ => return ListKind::Atomic,
                    },
                }
            } else {
                match s.get("items") {
                    Some(x) => x,
                    None => return ListKind::Atomic,
                }
            };
        }
        match s.get("x-kubernetes-list-type").and_then(|t| t.as_str()) {
            Some("set") => ListKind::Set,
            Some("map") => ListKind::Map(
                s.get("x-kubernetes-list-map-keys")
                    .and_then(|k| k.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|k| k.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => ListKind::Atomic,
        }
    }
}

fn item_key(item: &Value, keys: &[String]) -> String {
    item_key_parts(item, keys).1
}

/// An item's key values (as `k:` paths hold them) and its `k:` path element.
fn item_key_parts(item: &Value, keys: &[String]) -> (Value, String) {
    let mut m = serde_json::Map::new();
    for k in keys {
        m.insert(k.clone(), item.get(k).cloned().unwrap_or(Value::Null));
    }
    let want = Value::Object(m);
    let key = format!("k:{want}");
    (want, key)
}

fn key_matches(item: &Value, want: &Value) -> bool {
    want.as_object().is_some_and(|w| {
        w.iter()
            .all(|(k, v)| item.get(k).unwrap_or(&Value::Null) == v)
    })
}

/// The leaf field paths of an object (the fields a manager of this object would own): those
/// a write from nothing changes.
pub fn leaves(obj: &Value, lists: Lists<'_>) -> BTreeSet<FieldPath> {
    changed_leaves(None, obj, lists).into_iter().collect()
}

/// The leaf paths of `new` whose value differs from `old`'s at
/// the same path, absent there included: the fields a non-apply write from `old` to `new`
/// changes. Subtrees equal in both are skipped whole, so the cost follows the change, not the
/// object (a status update does not walk the spec).
pub fn changed_leaves(old: Option<&Value>, new: &Value, lists: Lists<'_>) -> Vec<FieldPath> {
    let mut out = Vec::new();
    let Some(m) = new.as_object() else {
        return out;
    };
    for (k, v) in m {
        if k == "apiVersion" || k == "kind" {
            continue;
        }
        let was = old.and_then(|o| o.get(k));
        if k == "metadata" {
            if let Some(mm) = v.as_object() {
                for (mk, mv) in mm {
                    if SYSTEM_META.contains(&mk.as_str()) {
                        continue;
                    }
                    let mut path = vec!["f:metadata".to_string(), format!("f:{mk}")];
                    diff_walk(&mut path, was.and_then(|w| w.get(mk)), mv, &mut out, lists);
                }
            }
        } else {
            diff_walk(&mut vec![format!("f:{k}")], was, v, &mut out, lists);
        }
    }
    out
}

/// Adds to `out` the leaf paths under `v` (at `path`) whose value differs from `was`, the
/// value at the same path before the write.
fn diff_walk(
    path: &mut FieldPath,
    was: Option<&Value>,
    v: &Value,
    out: &mut Vec<FieldPath>,
    lists: Lists<'_>,
) {
    if was == Some(v) {
        return;
    }
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, c) in m {
                path.push(format!("f:{k}"));
                diff_walk(path, was.and_then(|w| w.get(k)), c, out, lists);
                path.pop();
            }
        }
        Value::Array(items) => match lists.kind(path) {
            ListKind::Set => {
                let before = was.and_then(Value::as_array);
                for i in items {
                    if !before.is_some_and(|b| b.contains(i)) {
                        let mut p = path.clone();
                        p.push(format!("v:{i}"));
                        out.push(p);
                    }
                }
            }
            ListKind::Map(keys) => {
                let before = was.and_then(Value::as_array);
                for i in items {
                    let (want, key) = item_key_parts(i, &keys);
                    let prev = before.and_then(|b| b.iter().find(|x| key_matches(x, &want)));
                    path.push(key);
                    match i.as_object() {
                        Some(m) if !m.is_empty() => {
                            for (k, c) in m {
                                path.push(format!("f:{k}"));
                                diff_walk(path, prev.and_then(|p| p.get(k)), c, out, lists);
                                path.pop();
                            }
                        }
                        _ => {
                            if prev != Some(i) {
                                out.push(path.clone());
                            }
                        }
                    }
                    path.pop();
                }
            }
            ListKind::Atomic => out.push(path.clone()),
        },
        _ => out.push(path.clone()),
    }
}

/// The value at a field path, if any.
pub fn value_at<'a>(obj: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut cur = obj;
    for (i, el) in path.iter().enumerate() {
        if let Some(f) = el.strip_prefix("f:") {
            cur = cur.get(f)?;
        } else if let Some(v) = el.strip_prefix("v:") {
            let want: Value = serde_json::from_str(v).ok()?;
            let items = cur.as_array()?;
            return items
                .iter()
                .find(|i| **i == want)
                .filter(|_| i == path.len() - 1);
        } else if let Some(k) = el.strip_prefix("k:") {
            let want: Value = serde_json::from_str(k).ok()?;
            cur = cur.as_array()?.iter().find(|i| key_matches(i, &want))?;
        } else {
            return None;
        }
    }
    Some(cur)
}

fn value_at_mut<'a>(obj: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = obj;
    for el in path {
        if let Some(f) = el.strip_prefix("f:") {
            cur = cur.get_mut(f)?;
        } else if let Some(k) = el.strip_prefix("k:") {
            let want: Value = serde_json::from_str(k).ok()?;
            cur = cur
                .as_array_mut()?
                .iter_mut()
                .find(|i| key_matches(i, &want))?;
        } else {
            return None;
        }
    }
    Some(cur)
}

fn remove_at(obj: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let Some(cur) = value_at_mut(obj, parents) else {
        return;
    };
    if let Some(f) = last.strip_prefix("f:") {
        if let Some(m) = cur.as_object_mut() {
            m.remove(f);
        }
    } else if let Some(v) = last.strip_prefix("v:") {
        if let (Ok(want), Some(items)) = (serde_json::from_str::<Value>(v), cur.as_array_mut()) {
            items.retain(|i| *i != want);
        }
    } else if let Some(k) = last.strip_prefix("k:")
        && let (Ok(want), Some(items)) = (serde_json::from_str::<Value>(k), cur.as_array_mut())
    {
        items.retain(|i| !key_matches(i, &want));
    }
}

/// Renders a set of paths as a `FieldsV1` object.
pub fn to_fields_v1(paths: &BTreeSet<FieldPath>) -> Value {
    let mut root = Map::new();
    for p in paths {
        let mut cur = &mut root;
        for el in p {
            // Paths share their prefixes: a key is copied only where it is new.
            if !cur.contains_key(el) {
                cur.insert(el.clone(), json!({}));
            }
            let Some(next) = cur.get_mut(el) else { break };
            match next.as_object_mut() {
                Some(m) => cur = m,
                None => break,
            }
        }
    }
    Value::Object(root)
}

/// Parses a `FieldsV1` object back into leaf paths.
pub fn from_fields_v1(v: &Value) -> BTreeSet<FieldPath> {
    fn rec(prefix: &mut FieldPath, v: &Value, out: &mut BTreeSet<FieldPath>) {
        match v.as_object() {
            Some(m) if !m.is_empty() => {
                for (k, c) in m {
                    if k == "." {
                        out.insert(prefix.clone());
                        continue;
                    }
                    prefix.push(k.clone());
                    rec(prefix, c, out);
                    prefix.pop();
                }
            }
            _ => {
                if !prefix.is_empty() {
                    out.insert(prefix.clone());
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    rec(&mut Vec::new(), v, &mut out);
    out
}

/// One `managedFields` entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub subresource: String,
    pub fields: BTreeSet<FieldPath>,
}

pub fn read_entries(obj: &Value) -> Vec<Entry> {
    obj.pointer("/metadata/managedFields")
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .map(|e| Entry {
                    manager: e["manager"].as_str().unwrap_or_default().to_string(),
                    operation: e["operation"].as_str().unwrap_or("Update").to_string(),
                    api_version: e["apiVersion"].as_str().unwrap_or_default().to_string(),
                    time: e["time"].as_str().unwrap_or_default().to_string(),
                    subresource: e["subresource"].as_str().unwrap_or_default().to_string(),
                    fields: from_fields_v1(&e["fieldsV1"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn write_entries(obj: &mut Value, entries: &[Entry]) {
    let arr: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut v = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&e.fields),
            });
            if !e.subresource.is_empty() {
                v["subresource"] = json!(e.subresource);
            }
            v
        })
        .collect();
    if let Some(o) = obj.as_object_mut()
        && !arr.is_empty()
    {
        o.entry("metadata").or_insert_with(|| json!({}));
    }
    if let Some(m) = obj.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        if arr.is_empty() {
            m.remove("managedFields");
        } else {
            m.insert("managedFields".into(), Value::Array(arr));
        }
    }
}

fn overlaps(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Who changes what, for one write.
pub struct Writer<'a> {
    /// The `openAPIV3Schema` of the type, for list types.
    pub schema: Option<&'a Value>,
    pub manager: &'a str,
    pub api_version: &'a str,
    pub subresource: &'a str,
    pub now: &'a str,
}

/// Records a non-apply write from `old` to `new` in `new`'s managedFields.
pub fn track_update(old: Option<&Value>, new: &mut Value, w: &Writer<'_>) {
    let mut entries = match old {
        Some(o) => read_entries(o),
        None => Vec::new(),
    };
    let changed = changed_leaves(old, new, Lists(w.schema));
    for e in &mut entries {
        let is_me =
            e.manager == w.manager && e.operation == "Update" && e.subresource == w.subresource;
        // A field that is gone is owned by nobody; a changed field belongs to the writer alone.
        e.fields.retain(|f| {
            value_at(new, f).is_some() && (is_me || !changed.iter().any(|c| overlaps(f, c)))
        });
    }
    if !changed.is_empty() {
        let idx = entries.iter().position(|e| {
            e.manager == w.manager && e.operation == "Update" && e.subresource == w.subresource
        });
        let e = match idx {
            Some(i) => &mut entries[i],
            None => {
                entries.push(Entry {
                    manager: w.manager.to_string(),
                    operation: "Update".into(),
                    api_version: w.api_version.to_string(),
                    time: w.now.to_string(),
                    subresource: w.subresource.to_string(),
                    fields: BTreeSet::new(),
                });
                let last = entries.len() - 1;
                &mut entries[last]
            }
        };
        e.fields.extend(changed);
        e.time = w.now.to_string();
        e.api_version = w.api_version.to_string();
    }
    write_entries(new, &entries);
}

/// A field another manager owns with a different value.
#[derive(Debug, Clone)]
pub struct Conflict {
    pub manager: String,
    pub api_version: String,
    pub path: String,
}

/// Renders a path as upstream does in conflict messages (`.spec.forProvider.x`).
pub fn dotted(p: &[String]) -> String {
    p.iter()
        .map(|e| match e.strip_prefix("f:") {
            Some(f) => format!(".{f}"),
            None => match e
                .strip_prefix("k:")
                .and_then(|k| serde_json::from_str::<Value>(k).ok())
            {
                Some(Value::Object(m)) => {
                    let kv: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    format!("[{}]", kv.join(","))
                }
                _ => format!("[{}]", e.get(2..).unwrap_or_default()),
            },
        })
        .collect()
}

fn merge_into(target: &mut Value, config: &Value, path: &mut FieldPath, lists: Lists<'_>) {
    match (target.as_object_mut(), config.as_object()) {
        (Some(t), Some(c)) => {
            for (k, v) in c {
                path.push(format!("f:{k}"));
                if v.is_null() {
                    t.remove(k);
                } else if let (Some(items), Some(cur)) =
                    (v.as_array(), t.get_mut(k).and_then(|x| x.as_array_mut()))
                {
                    match lists.kind(path) {
                        ListKind::Set => {
                            for i in items {
                                if !cur.contains(i) {
                                    cur.push(i.clone());
                                }
                            }
                        }
                        ListKind::Map(keys) => {
                            for i in items {
                                let key = item_key(i, &keys);
                                let want: Value =
                                    serde_json::from_str(&key[2..]).unwrap_or(Value::Null);
                                match cur.iter_mut().find(|x| key_matches(x, &want)) {
                                    Some(existing) => {
                                        path.push(key);
                                        merge_into(existing, i, path, lists);
                                        path.pop();
                                    }
                                    None => cur.push(i.clone()),
                                }
                            }
                        }
                        ListKind::Atomic => {
                            t.insert(k.clone(), v.clone());
                        }
                    }
                } else if v.is_object() && t.get(k).is_some_and(|x| x.is_object()) {
                    if let Some(child) = t.get_mut(k) {
                        merge_into(child, v, path, lists);
                    }
                } else {
                    t.insert(k.clone(), v.clone());
                }
                path.pop();
            }
        }
        _ => *target = config.clone(),
    }
}

/// Whether applying `p` (from `config`) takes away field `f` another manager owns in `cur`.
fn clashes(f: &[String], p: &[String], cur: &Value, config: &Value) -> bool {
    if f.starts_with(p) {
        // `p` is `f` or an ancestor: an applied map merges into it, anything else replaces it.
        if f.len() > p.len() && value_at(config, p).is_some_and(|v| v.is_object()) {
            return false;
        }
        value_at(cur, p) != value_at(config, p)
    } else if p.starts_with(f) {
        // The other manager owns an ancestor as one (atomic) field.
        value_at(cur, f) != value_at(config, f)
    } else {
        false
    }
}

/// Server-side apply of `config` by `manager` onto `current` (None: the object is created).
/// Returns the new object with its managedFields, or the conflicts.
pub fn apply(
    current: Option<&Value>,
    config: &Value,
    w: &Writer<'_>,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let lists = Lists(w.schema);
    let applied = leaves(config, lists);
    let mut entries = current.map(read_entries).unwrap_or_default();
    let mine = |e: &Entry| {
        e.manager == w.manager && e.operation == "Apply" && e.subresource == w.subresource
    };
    let previously: BTreeSet<FieldPath> = entries
        .iter()
        .filter(|e| mine(e))
        .flat_map(|e| e.fields.clone())
        .collect();
    let mut obj = match current {
        Some(c) => c.clone(),
        None => json!({}),
    };
    if let Some(cur) = current {
        let mut conflicts = Vec::new();
        for e in entries.iter().filter(|e| !mine(e)) {
            for f in &e.fields {
                if applied.iter().any(|p| clashes(f, p, cur, config)) {
                    conflicts.push(Conflict {
                        manager: e.manager.clone(),
                        api_version: e.api_version.clone(),
                        path: dotted(f),
                    });
                }
            }
        }
        if !conflicts.is_empty() && !force {
            return Err(conflicts);
        }
        for e in entries.iter_mut().filter(|e| !mine(e)) {
            e.fields
                .retain(|f| !applied.iter().any(|p| clashes(f, p, cur, config)));
        }
        let others: BTreeSet<FieldPath> = entries
            .iter()
            .filter(|e| !mine(e))
            .flat_map(|e| e.fields.clone())
            .collect();
        for p in previously.difference(&applied) {
            // A keyed list item nobody sets any more goes as a whole.
            let item = p
                .iter()
                .rposition(|e| e.starts_with("k:"))
                .map(|i| &p[..=i]);
            if let Some(item) = item
                && !applied.iter().any(|a| a.starts_with(item))
                && !others.iter().any(|o| o.starts_with(item))
            {
                remove_at(&mut obj, item);
            } else if !others.iter().any(|o| overlaps(o, p)) {
                remove_at(&mut obj, p);
            }
        }
    }
    let mut body = config.clone();
    if let Some(m) = body.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        m.remove("managedFields");
        m.remove("resourceVersion");
    }
    merge_into(&mut obj, &body, &mut Vec::new(), lists);
    entries.retain(|e| !mine(e));
    entries.push(Entry {
        manager: w.manager.to_string(),
        operation: "Apply".into(),
        api_version: w.api_version.to_string(),
        time: w.now.to_string(),
        subresource: w.subresource.to_string(),
        fields: applied,
    });
    write_entries(&mut obj, &entries);
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w<'a>(m: &'a str) -> Writer<'a> {
        Writer {
            schema: None,
            manager: m,
            api_version: "v1",
            subresource: "",
            now: "2024-01-01T00:00:00Z",
        }
    }

    #[test]
    fn apply_conflict_and_force() {
        let cfg = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}, "spec": {"x": 1, "y": 2}});
        let o = apply(None, &cfg, &w("a"), false).unwrap();
        assert_eq!(o["spec"], json!({"x": 1, "y": 2}));
        let cfg_b =
            json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}, "spec": {"x": 5}});
        let c = apply(Some(&o), &cfg_b, &w("b"), false).unwrap_err();
        assert_eq!(c[0].path, ".spec.x");
        let o2 = apply(Some(&o), &cfg_b, &w("b"), true).unwrap();
        assert_eq!(o2["spec"]["x"], 5);
        // a stops applying y: removed; x now belongs to b and stays.
        let cfg_a2 =
            json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}, "spec": {}});
        let o3 = apply(Some(&o2), &cfg_a2, &w("a"), false).unwrap();
        assert_eq!(o3["spec"], json!({"x": 5}));
    }

    #[test]
    fn same_value_is_shared() {
        let cfg = json!({"metadata": {"name": "a", "labels": {"l": "1"}}});
        let o = apply(None, &cfg, &w("a"), false).unwrap();
        let o2 = apply(Some(&o), &cfg, &w("b"), false).unwrap();
        assert_eq!(read_entries(&o2).len(), 2);
    }

    #[test]
    fn update_takes_fields() {
        let cfg = json!({"spec": {"x": 1}, "metadata": {"finalizers": ["f"]}});
        let o = apply(None, &cfg, &w("a"), false).unwrap();
        let mut n = o.clone();
        n["spec"]["x"] = json!(2);
        track_update(Some(&o), &mut n, &w("u"));
        let e = read_entries(&n);
        let a = e.iter().find(|e| e.manager == "a").unwrap();
        assert!(
            !a.fields
                .contains(&vec!["f:spec".to_string(), "f:x".to_string()])
        );
        assert!(a.fields.contains(&vec![
            "f:metadata".to_string(),
            "f:finalizers".to_string(),
            "v:\"f\"".to_string()
        ]));
        let u = e.iter().find(|e| e.manager == "u").unwrap();
        assert_eq!(u.fields.len(), 1);
        assert_eq!(from_fields_v1(&to_fields_v1(&a.fields)), a.fields);
    }

    /// What [`changed_leaves`] must answer: every leaf of the new object whose value differs
    /// at its path, found by looking each leaf up in both objects.
    fn changed_by_lookup(
        old: Option<&Value>,
        new: &Value,
        lists: Lists<'_>,
    ) -> BTreeSet<FieldPath> {
        leaves(new, lists)
            .into_iter()
            .filter(|p| old.and_then(|o| value_at(o, p)) != value_at(new, p))
            .collect()
    }

    #[test]
    fn changed_leaves_are_the_leaves_whose_value_changed() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "plain": {"type": "array", "items": {"type": "string"}}
            }},
            "status": {"type": "object", "properties": {"conditions": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object"}
            }}}
        }});
        let lists = Lists(Some(&schema));
        let base = json!({
            "apiVersion": "v1", "kind": "X",
            "metadata": {"name": "a", "resourceVersion": "1", "labels": {"l": "1"},
                         "finalizers": ["f"], "annotations": {"x": "1", "y": "2"}},
            "spec": {"x": 1, "nested": {"a": {"b": 2}, "e": {}}, "tags": ["t1", "t2"], "plain": ["p"]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}],
                       "atProvider": {"id": "i"}}
        });
        let changes: Vec<fn(&mut Value)> = vec![
            |_| {},
            |v| v["metadata"]["resourceVersion"] = json!("2"),
            |v| v["spec"]["x"] = json!(2),
            |v| v["spec"]["nested"]["a"]["b"] = json!(3),
            |v| v["spec"]["nested"]["a"]["c"] = json!(true),
            |v| v["spec"]["nested"]["e"] = json!({"k": 1}),
            |v| v["spec"]["nested"] = json!("scalar now"),
            |v| v["spec"]["tags"] = json!(["t2", "t3"]),
            |v| v["spec"]["plain"] = json!(["p", "q"]),
            |v| v["metadata"]["finalizers"] = json!(["f", "g"]),
            |v| v["metadata"]["annotations"]["y"] = json!("3"),
            |v| v["status"]["conditions"][0]["status"] = json!("False"),
            |v| {
                v["status"]["conditions"] = json!([{"type": "Synced", "status": "True"}, {"type": "Ready", "status": "True"}])
            },
            |v| {
                v["status"]["conditions"] =
                    json!([{"type": "New"}, {"type": "Ready", "status": "True", "reason": "R"}])
            },
            |v| v["status"]["conditions"] = json!([{}, "odd"]),
            |v| v["status"] = json!({}),
            |v| {
                if let Some(m) = v.as_object_mut() {
                    m.remove("spec");
                }
            },
            |v| *v = json!({"metadata": {"name": "a"}, "other": [1, 2]}),
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut new = base.clone();
            change(&mut new);
            for old in [Some(&base), None] {
                let got: BTreeSet<FieldPath> =
                    changed_leaves(old, &new, lists).into_iter().collect();
                assert_eq!(
                    got,
                    changed_by_lookup(old, &new, lists),
                    "change {i}, old {:?}",
                    old.is_some()
                );
            }
        }
        assert!(changed_leaves(Some(&base), &base, lists).is_empty());
        // Keyed items that are not objects: the item itself is the leaf.
        let before = json!({"status": {"conditions": ["a", {}]}});
        for after in [json!({"status": {"conditions": ["b", {}]}}), before.clone()] {
            let got: BTreeSet<FieldPath> = changed_leaves(Some(&before), &after, lists)
                .into_iter()
                .collect();
            assert_eq!(got, changed_by_lookup(Some(&before), &after, lists));
        }
    }

    #[test]
    fn keyed_lists_are_owned_per_item() {
        let schema = json!({"type": "object", "properties": {"status": {"type": "object", "properties": {"conditions": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
            "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}
        }}}}});
        let w = |m: &'static str| Writer {
            schema: Some(&schema),
            manager: m,
            api_version: "v1",
            subresource: "",
            now: "t",
        };
        let a = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let b = json!({"status": {"conditions": [{"type": "Synced", "status": "False"}]}});
        let o = apply(None, &a, &w("a"), false).unwrap();
        let o = apply(Some(&o), &b, &w("b"), false).expect("different items do not conflict");
        assert_eq!(
            o["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}])
        );
        let b2 = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
        let c = apply(Some(&o), &b2, &w("b"), false).unwrap_err();
        assert_eq!(c[0].path, ".status.conditions[type=\"Ready\"].status");
        // b stops applying Synced: its item goes, a's stays.
        let o = apply(
            Some(&o),
            &json!({"status": {"conditions": []}}),
            &w("b"),
            false,
        )
        .unwrap();
        assert_eq!(
            o["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}])
        );
    }
}
