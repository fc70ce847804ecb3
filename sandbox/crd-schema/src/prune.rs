//! Pruning and defaulting of custom resources, after `pruning/algorithm.go`,
//! `defaulting/algorithm.go` and `defaulting/prunenulls.go` of apiextensions-apiserver.

use serde_json::Value;

use crate::node::{Additional, Node};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

struct Pruner<'a> {
    path: String,
    out: &'a mut Vec<String>,
}

impl Pruner<'_> {
    fn record(&mut self, key: &str) {
        if self.path.is_empty() {
            self.out.push(key.to_string());
        } else {
            self.out.push(format!("{}.{key}", self.path));
        }
    }

    fn push_key(&mut self, key: &str) -> usize {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
        len
    }

    fn push_index(&mut self, i: usize) -> usize {
        let len = self.path.len();
        self.path.push_str(&format!("[{i}]"));
        len
    }
}

/// Prunes a whole object: the root is treated as an embedded resource (`apiVersion`, `kind`,
/// `metadata` are kept).
pub(crate) fn prune_root(obj: &mut Value, root: &Node, out: &mut Vec<String>) {
    let mut p = Pruner {
        path: String::new(),
        out,
    };
    prune(obj, Some(root), true, &mut p);
}

/// Prunes `obj` against `node` (`embedded`: treat it as a resource, keeping apiVersion, kind
/// and metadata), recording removed paths.
pub(crate) fn prune_with(obj: &mut Value, node: &Node, embedded: bool, out: &mut Vec<String>) {
    let mut p = Pruner {
        path: String::new(),
        out,
    };
    prune(obj, Some(node), embedded, &mut p);
}

fn prune(x: &mut Value, s: Option<&Node>, embedded: bool, p: &mut Pruner<'_>) {
    if let Some(s) = s
        && s.preserve_unknown_fields
    {
        skip_prune(x, s, embedded, p);
        return;
    }
    match x {
        Value::Object(map) => {
            let Some(s) = s else {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    p.record(&k);
                }
                map.clear();
                return;
            };
            let mut remove = Vec::new();
            for (k, v) in map.iter_mut() {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    prune_embedded_meta(k, v, p);
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    let len = p.push_key(k);
                    prune(v, Some(prop), prop.embedded_resource, p);
                    p.path.truncate(len);
                } else if let Some(add) = &s.additional {
                    let len = p.push_key(k);
                    match add {
                        Additional::Schema(a) => prune(v, Some(a), a.embedded_resource, p),
                        Additional::Allows(_) => prune(v, None, false, p),
                    }
                    p.path.truncate(len);
                } else {
                    remove.push(k.clone());
                }
            }
            for k in remove {
                p.record(&k);
                map.remove(&k);
            }
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                let len = p.push_index(i);
                prune(
                    v,
                    item_schema,
                    item_schema.is_some_and(|n| n.embedded_resource),
                    p,
                );
                p.path.truncate(len);
            }
        }
        _ => {}
    }
}

/// The fields of `ObjectMeta` (what pruning keeps in embedded metadata; the server checks
/// objects' own metadata against the same list).
pub const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// `schemaobjectmeta.Coerce` of an embedded resource (not the object root, whose metadata is the
/// server's): fields `ObjectMeta` does not have are dropped and reported.
fn prune_embedded_meta(key: &str, v: &mut Value, p: &mut Pruner<'_>) {
    if key != "metadata" || p.path.is_empty() {
        return;
    }
    let Value::Object(meta) = v else { return };
    let unknown: Vec<String> = meta
        .keys()
        .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    if unknown.is_empty() {
        return;
    }
    let len = p.push_key("metadata");
    for k in unknown {
        p.record(&k);
        meta.remove(&k);
    }
    p.path.truncate(len);
}

fn skip_prune(x: &mut Value, s: &Node, embedded: bool, p: &mut Pruner<'_>) {
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    prune_embedded_meta(k, v, p);
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    let len = p.push_key(k);
                    prune(v, Some(prop), prop.embedded_resource, p);
                    p.path.truncate(len);
                } else if let Some(add) = &s.additional {
                    let len = p.push_key(k);
                    match add {
                        Additional::Schema(a) => prune(v, Some(a), a.embedded_resource, p),
                        Additional::Allows(_) => prune(v, None, false, p),
                    }
                    p.path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    let len = p.push_index(i);
                    skip_prune(v, item_schema, item_schema.embedded_resource, p);
                    p.path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn is_non_nullable_null(x: &Value, s: Option<&Node>) -> bool {
    x.is_null() && s.is_some_and(|s| !s.nullable)
}

/// `structuraldefaulting.Default`.
pub(crate) fn default_value(x: &mut Value, s: Option<&Node>) {
    let Some(s) = s else { return };
    match x {
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(def) = &prop.default else { continue };
                match map.get(k) {
                    None => {
                        map.insert(k.clone(), def.clone());
                    }
                    Some(v) if is_non_nullable_null(v, Some(prop)) => {
                        map.insert(k.clone(), def.clone());
                    }
                    _ => {}
                }
            }
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default_value(v, Some(prop));
                } else if let Some(add) = &s.additional {
                    let a = match add {
                        Additional::Schema(a) => Some(a.as_ref()),
                        Additional::Allows(_) => None,
                    };
                    if is_non_nullable_null(v, a) {
                        *v = a.and_then(|a| a.default.clone()).unwrap_or(Value::Null);
                    }
                    default_value(v, a);
                }
            }
        }
        Value::Array(items) => {
            let item = s.items.as_deref();
            for v in items.iter_mut() {
                if is_non_nullable_null(v, item) {
                    *v = item.and_then(|a| a.default.clone()).unwrap_or(Value::Null);
                }
                default_value(v, item);
            }
        }
        _ => {}
    }
}

/// `PruneNonNullableNullsWithoutDefaults`.
pub(crate) fn prune_non_nullable_nulls(x: &mut Value, s: Option<&Node>) {
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                let fs = s.and_then(|s| s.field_schema(k));
                if v.is_null() && fs.is_some_and(|fs| !fs.nullable && fs.default.is_none()) {
                    return false;
                }
                prune_non_nullable_nulls(v, fs);
                true
            });
        }
        Value::Array(items) => {
            let item = s.and_then(|s| s.items.as_deref());
            for v in items.iter_mut() {
                prune_non_nullable_nulls(v, item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Schema;

    fn schema(v: serde_json::Value) -> Schema {
        Schema::compile(&v).unwrap_or_else(|e| panic!("schema compiles: {e:?}"))
    }

    fn provider_schema() -> Schema {
        schema(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "forProvider": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
                                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                         "properties": {"typed": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                             "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}
                            }
                        }
                    }
                },
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }
        }))
    }

    #[test]
    fn prunes_unknown_fields_and_reports_paths() {
        let s = provider_schema();
        let mut obj = json!({
            "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x", "whatever": 1},
            "extra": true,
            "spec": {"forProvider": {"name": "n", "colour": "red",
                     "tags": [{"k": "a", "v": "b"}],
                     "labels": {"a": "b"},
                     "free": {"anything": {"deep": 1}, "typed": {"a": "x", "b": "y"}},
                     "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "colour": "red"},
                                  "spec": {"x": "1", "y": "2"}, "other": 1}}},
            "status": {"anything": 1}
        });
        let pruned = s.prune(&mut obj);
        assert_eq!(
            pruned,
            vec![
                "extra",
                "spec.forProvider.colour",
                "spec.forProvider.free.typed.b",
                "spec.forProvider.tags[0].v",
                "spec.forProvider.template.metadata.colour",
                "spec.forProvider.template.other",
                "spec.forProvider.template.spec.y",
            ]
        );
        assert_eq!(
            obj,
            json!({
                "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x", "whatever": 1},
                "spec": {"forProvider": {"name": "n",
                         "tags": [{"k": "a"}],
                         "labels": {"a": "b"},
                         "free": {"anything": {"deep": 1}, "typed": {"a": "x"}},
                         "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                      "spec": {"x": "1"}}}},
                "status": {"anything": 1}
            })
        );
    }

    #[test]
    fn nothing_pruned_for_known_object() {
        let s = provider_schema();
        let mut obj =
            json!({"apiVersion": "a/v1", "kind": "K", "spec": {"forProvider": {"name": "n"}}});
        assert!(s.prune(&mut obj).is_empty());
    }

    #[test]
    fn defaults_nested_in_arrays_maps_and_defaults() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "default": {},
                    "properties": {
                        "policy": {"type": "string", "default": "Delete"},
                        "nested": {"type": "object", "default": {"a": 1},
                                   "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "bee"}}},
                        "list": {"type": "array", "items": {"type": "object",
                                 "properties": {"port": {"type": "integer", "default": 80}}}},
                        "map": {"type": "object", "additionalProperties": {"type": "object",
                                "properties": {"on": {"type": "boolean", "default": true}}}},
                        "nullable": {"type": "string", "nullable": true, "default": "d"},
                        "nonNullable": {"type": "string", "default": "d"},
                        "dropMe": {"type": "string"}
                    }
                }
            }
        }));
        let mut obj = json!({"spec": {"list": [{}, {"port": 8080}], "map": {"x": {}},
                                      "nullable": null, "nonNullable": null, "dropMe": null}});
        s.apply_defaults(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"list": [{"port": 80}, {"port": 8080}], "map": {"x": {"on": true}},
                            "nullable": null, "nonNullable": "d",
                            "policy": "Delete", "nested": {"a": 1, "b": "bee"}}})
        );
        let mut empty = json!({});
        s.apply_defaults(&mut empty);
        assert_eq!(
            empty,
            json!({"spec": {"policy": "Delete", "nested": {"a": 1, "b": "bee"}, "nullable": "d", "nonNullable": "d"}})
        );
    }
    #[test]
    fn additional_properties_true_keeps_keys_but_prunes_nested_objects() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "additionalProperties": true}}}),
        );
        let mut obj = json!({"spec": {"a": 1, "b": {"c": 2}}});
        assert_eq!(s.prune(&mut obj), vec!["spec.b.c"]);
        assert_eq!(obj, json!({"spec": {"a": 1, "b": {}}}));
    }

    #[test]
    fn nested_unknown_object_is_reported_once() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}}}}}),
        );
        let mut obj = json!({"spec": {"a": "x", "extra": {"deep": {"deeper": 1}}, "list": [1, 2]}});
        assert_eq!(s.prune(&mut obj), vec!["spec.extra", "spec.list"]);
        assert_eq!(obj, json!({"spec": {"a": "x"}}));
    }

    #[test]
    fn defaults_replace_null_map_values_and_list_items() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "m": {"type": "object", "additionalProperties": {"type": "string", "default": "dv"}},
                "l": {"type": "array", "items": {"type": "integer", "default": 7}},
                "keep": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }}}}),
        );
        let mut obj =
            json!({"spec": {"m": {"a": null, "b": "x"}, "l": [null, 1], "keep": {"z": null}}});
        s.apply_defaults(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"m": {"a": "dv", "b": "x"}, "l": [7, 1], "keep": {"z": null}}})
        );
    }

    /// The "nested x-kubernetes-preserve-unknown-fields" case of upstream's pruning tests.
    #[test]
    fn nested_preserve_unknown_fields_like_upstream() {
        let obj_schema = |extra: serde_json::Value| {
            let mut v = json!({"type": "object"});
            if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
                o.extend(e.clone());
            }
            v
        };
        let add = json!({"type": "object", "properties": {"specified": {"type": "object"}}});
        let s = schema(json!({
            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "alpha": {"type": "string"},
                "beta": {"type": "number"},
                "pruning": obj_schema(json!({"properties": {
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "pruning": {"type": "object"}}})),
                "preserving": obj_schema(json!({"x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": true},
                    "pruning": {"type": "object"}}})),
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields":
                    obj_schema(json!({"x-kubernetes-preserve-unknown-fields": true, "additionalProperties": add.clone()})),
                "preservingAdditionalPropertiesKeyPruneValues": obj_schema(json!({"additionalProperties": add}))
            }
        }));
        let mut obj = json!({
            "unspecified": "bar", "alpha": "abc", "beta": 42.0,
            "unspecifiedObject": {"unspecified": "bar"},
            "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                        "pruning": {"unspecified": "bar"}, "apiVersion": "unknown",
                        "preserving": {"unspecified": "bar"}},
            "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                           "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"},
                           "preservingUnknownType": [{"foo": true}, {"bar": true}]},
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields":
                {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
            "preservingAdditionalPropertiesKeyPruneValues":
                {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}}
        });
        let pruned = s.prune(&mut obj);
        assert_eq!(
            obj,
            json!({
                "unspecified": "bar", "alpha": "abc", "beta": 42.0,
                "unspecifiedObject": {"unspecified": "bar"},
                "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
                "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                               "pruning": {}, "preserving": {"unspecified": "bar"},
                               "preservingUnknownType": [{"foo": true}, {"bar": true}]},
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
                "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}}
            })
        );
        assert_eq!(
            pruned,
            vec![
                "preserving.pruning.unspecified",
                "preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
                "preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
                "pruning.apiVersion",
                "pruning.pruning.unspecified",
                "pruning.unspecified",
                "pruning.unspecifiedObject",
            ]
        );
    }
}
