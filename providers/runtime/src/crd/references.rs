//! The `<field>Ref(s)` / `<field>Selector` members of a Kind's declared references in its CRD,
//! with the OpenAPI shape Upjet generates from crossplane's `core/v2` types: in namespaced
//! CRDs `NamespacedReference {name, namespace, policy}` and `NamespacedSelector {matchLabels,
//! matchControllerRef, namespace, policy}`; in legacy cluster-scoped CRDs `Reference {name,
//! policy}` and `Selector {matchLabels, matchControllerRef, policy}`. `policy` is `{resolve:
//! Always|IfNotPresent, resolution: Required|Optional}` (`resolution` defaults to `Required`).
//! They sit beside the value field, in `forProvider` and in `initProvider`, and in each
//! element of a list of objects for a nested field.

use serde_json::{Map, Value, json};

use super::MrScope;
use crate::managed::kind::ReferenceField;

fn policy(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "resolution": {
                "type": "string",
                "default": "Required",
                "enum": ["Required", "Optional"],
                "description": "Resolution specifies whether resolution of this reference is required. The default is 'Required', which means the reconcile will fail if the reference cannot be resolved. 'Optional' means this reference will be a no-op if it cannot be resolved."
            },
            "resolve": {
                "type": "string",
                "enum": ["Always", "IfNotPresent"],
                "description": "Resolve specifies when this reference should be resolved. The default is 'IfNotPresent', which will attempt to resolve the reference only when the corresponding field is not present. Use 'Always' to resolve the reference on every reconcile."
            }
        }
    })
}

/// A (Namespaced)Reference.
pub fn reference_schema(scope: MrScope, description: &str) -> Value {
    let mut props = Map::new();
    props.insert(
        "name".into(),
        json!({"type": "string", "description": "Name of the referenced object."}),
    );
    if scope == MrScope::Modern {
        props.insert(
            "namespace".into(),
            json!({"type": "string", "description": "Namespace of the referenced object"}),
        );
    }
    props.insert("policy".into(), policy("Policies for referencing."));
    json!({"type": "object", "description": description, "required": ["name"], "properties": props})
}

/// A (Namespaced)Selector.
pub fn selector_schema(scope: MrScope, description: &str) -> Value {
    let mut props = Map::new();
    props.insert("matchControllerRef".into(), json!({"type": "boolean", "description": "MatchControllerRef ensures an object with the same controller reference as the selecting object is selected."}));
    props.insert("matchLabels".into(), json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "MatchLabels ensures an object with matching labels is selected."}));
    if scope == MrScope::Modern {
        props.insert(
            "namespace".into(),
            json!({"type": "string", "description": "Namespace for the selector"}),
        );
    }
    props.insert("policy".into(), policy("Policies for selection."));
    json!({"type": "object", "description": description, "properties": props})
}

/// Upjet's `friendlyTypeDescription`: `<Kind> in <group>`; several Kinds of one group as
/// `A, B or C in <group>`.
fn friendly(r: &ReferenceField) -> String {
    let mut by_group: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in &r.targets {
        match by_group.iter_mut().find(|(g, _)| *g == t.group) {
            Some((_, ks)) => ks.push(t.kind),
            None => by_group.push((t.group, vec![t.kind])),
        }
    }
    by_group
        .iter()
        .map(|(g, ks)| {
            let kinds = match ks.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => ks.join(""),
            };
            format!("{kinds} in {g}")
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Add the companions of `refs` to a parameters schema (`forProvider` or `initProvider`).
/// Panics when a declared field is not in the schema (the family's declarations are checked
/// against their fields when they compose).
pub fn add_reference_schemas(params: &mut Value, refs: &[ReferenceField], scope: MrScope) {
    for r in refs {
        let mut node = &mut *params;
        let (parents, leaf) = match r.field.rsplit_once('.') {
            Some((parents, leaf)) => (Some(parents), leaf),
            None => (None, r.field),
        };
        for seg in parents.into_iter().flat_map(|p| p.split('.')) {
            node = &mut node["properties"][seg];
            if node.get("type").and_then(Value::as_str) == Some("array") {
                node = &mut node["items"];
            }
        }
        let props = node
            .get_mut("properties")
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("reference field {}: no such object", r.field));
        assert!(
            props.contains_key(leaf),
            "reference field {}: no such field",
            r.field
        );
        let what = friendly(r);
        let ref_schema = if r.multi {
            let item = match scope {
                MrScope::Modern => "A NamespacedReference to a named object.",
                MrScope::Legacy => "A Reference to a named object.",
            };
            json!({
                "type": "array",
                "description": format!("References to {what} to populate {leaf}."),
                "items": reference_schema(scope, item),
            })
        } else {
            reference_schema(scope, &format!("Reference to a {what} to populate {leaf}."))
        };
        let sel_text = if r.multi {
            format!("Selector for a list of {what} to populate {leaf}.")
        } else {
            format!("Selector for a {what} to populate {leaf}.")
        };
        props.insert(r.ref_field.to_string(), ref_schema);
        props.insert(
            r.selector_field.to_string(),
            selector_schema(scope, &sel_text),
        );
        // A value required inside a list element may be given by its Ref or selector
        // instead: one of the three (checked at admission), resolved before any write.
        let mut was_required = false;
        if let Some(Value::Array(req)) = node.get_mut("required") {
            let before = req.len();
            req.retain(|v| v.as_str() != Some(leaf));
            was_required = req.len() != before;
            if req.is_empty() {
                node.as_object_mut().map(|o| o.remove("required"));
            }
        }
        if was_required {
            let rule = json!({
                "rule": format!("has(self.{leaf}) || has(self.{}) || has(self.{})", r.ref_field, r.selector_field),
                "message": format!("{leaf}, {} or {} is required", r.ref_field, r.selector_field),
            });
            match node.get_mut("x-kubernetes-validations") {
                Some(Value::Array(rules)) => rules.push(rule),
                _ => node["x-kubernetes-validations"] = json!([rule]),
            }
        }
    }
}

/// The companions (`...Ref(s)`, `...Selector`) of a top-level reference field `name`.
pub fn companions_of<'a>(refs: &'a [ReferenceField], name: &str) -> Vec<&'a str> {
    refs.iter()
        .filter(|r| r.field == name)
        .flat_map(|r| [r.ref_field, r.selector_field])
        .collect()
}

/// The reads a provider's references need of other providers' Kinds: `get`, `list` and
/// `watch` on each referenced Kind, in both scopes' groups, one rule per API group, resources
/// sorted. Crossplane v2 grants them through the provider family (the packages' label
/// `pkg.crossplane.io/provider-family`: every member may use every member's CRDs); the
/// sandbox checks that the role it renders for the packages covers these.
pub fn cross_provider_reads(
    provider: &str,
    kinds: &[std::sync::Arc<dyn crate::managed::KindRegistration>],
) -> Vec<Value> {
    use crate::managed::kind::Scope;
    let mut by_group: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for k in kinds {
        for r in &k.info().references {
            for t in r.targets.iter().filter(|t| t.provider != provider) {
                for scope in [Scope::Namespaced, Scope::Cluster] {
                    let ar = t.api_resource(scope);
                    by_group.entry(ar.group).or_default().insert(ar.plural);
                }
            }
        }
    }
    by_group
        .into_iter()
        .map(|(g, plurals)| {
            json!({"apiGroups": [g], "resources": plurals, "verbs": ["get", "list", "watch"]})
        })
        .collect()
}
