//! Unknown fields of a `CustomResourceDefinition` object: kube-apiserver decodes CRDs into
//! typed structs, so a field the type does not have (a typo such as `tpye` deep inside an
//! `openAPIV3Schema`) is an `unknown field` under `fieldValidation=Strict` and silently
//! dropped otherwise. This walks the v1 types of apiextensions.k8s.io.
//!
//! Paths are those of the strict JSON decoder (sigs.k8s.io/json): struct fields and map keys
//! joined by `.`, list indexes as `[i]`, e.g.
//! `spec.versions[0].schema.openAPIV3Schema.properties.spec.tpye`.
//! `metadata` (ObjectMeta) is left to the server's generic metadata handling.

use serde_json::{Map, Value};

const CRD: &[&str] = &["apiVersion", "kind", "metadata", "spec", "status"];
const SPEC: &[&str] = &[
    "group",
    "names",
    "scope",
    "versions",
    "conversion",
    "preserveUnknownFields",
];
const NAMES: &[&str] = &[
    "plural",
    "singular",
    "shortNames",
    "kind",
    "listKind",
    "categories",
];
const VERSION: &[&str] = &[
    "name",
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "schema",
    "subresources",
    "additionalPrinterColumns",
    "selectableFields",
];
const VALIDATION: &[&str] = &["openAPIV3Schema"];
const SUBRESOURCES: &[&str] = &["status", "scale"];
const SCALE: &[&str] = &[
    "specReplicasPath",
    "statusReplicasPath",
    "labelSelectorPath",
];
const COLUMN: &[&str] = &[
    "name",
    "type",
    "format",
    "description",
    "priority",
    "jsonPath",
];
const SELECTABLE: &[&str] = &["jsonPath"];
const CONVERSION: &[&str] = &["strategy", "webhook"];
const WEBHOOK: &[&str] = &["clientConfig", "conversionReviewVersions"];
const CLIENT_CONFIG: &[&str] = &["url", "service", "caBundle"];
const SERVICE: &[&str] = &["namespace", "name", "path", "port"];
const STATUS: &[&str] = &["conditions", "acceptedNames", "storedVersions"];
const CONDITION: &[&str] = &[
    "type",
    "status",
    "lastTransitionTime",
    "reason",
    "message",
    "observedGeneration",
];
const EXTERNAL_DOCS: &[&str] = &["description", "url"];
const RULE: &[&str] = &[
    "rule",
    "message",
    "messageExpression",
    "reason",
    "fieldPath",
    "optionalOldSelf",
];
const SCHEMA: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

struct Walker<'a> {
    out: &'a mut Vec<String>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Walker<'_> {
    /// Removes the keys of `m` not in `known`, recording them.
    fn fields(&mut self, m: &mut Map<String, Value>, known: &[&str], path: &str) {
        m.retain(|k, _| {
            let keep = known.contains(&k.as_str());
            if !keep {
                self.out.push(join(path, k));
            }
            keep
        });
    }

    fn object(&mut self, v: &mut Value, known: &[&str], path: &str) -> bool {
        match v.as_object_mut() {
            Some(m) => {
                self.fields(m, known, path);
                true
            }
            None => false,
        }
    }

    fn list_of(&mut self, v: Option<&mut Value>, known: &[&str], path: &str) {
        if let Some(Value::Array(items)) = v {
            for (i, item) in items.iter_mut().enumerate() {
                self.object(item, known, &format!("{path}[{i}]"));
            }
        }
    }

    fn crd(&mut self, crd: &mut Value) {
        let Some(m) = crd.as_object_mut() else { return };
        self.fields(m, CRD, "");
        if let Some(spec) = m.get_mut("spec") {
            self.spec(spec);
        }
        if let Some(status) = m.get_mut("status")
            && self.object(status, STATUS, "status")
        {
            self.list_of(status.get_mut("conditions"), CONDITION, "status.conditions");
            if let Some(n) = status.get_mut("acceptedNames") {
                self.object(n, NAMES, "status.acceptedNames");
            }
        }
    }

    fn spec(&mut self, spec: &mut Value) {
        if !self.object(spec, SPEC, "spec") {
            return;
        }
        if let Some(n) = spec.get_mut("names") {
            self.object(n, NAMES, "spec.names");
        }
        if let Some(conv) = spec.get_mut("conversion")
            && self.object(conv, CONVERSION, "spec.conversion")
            && let Some(wh) = conv.get_mut("webhook")
            && self.object(wh, WEBHOOK, "spec.conversion.webhook")
            && let Some(cc) = wh.get_mut("clientConfig")
            && self.object(cc, CLIENT_CONFIG, "spec.conversion.webhook.clientConfig")
            && let Some(svc) = cc.get_mut("service")
        {
            self.object(svc, SERVICE, "spec.conversion.webhook.clientConfig.service");
        }
        if let Some(Value::Array(versions)) = spec.get_mut("versions") {
            for (i, v) in versions.iter_mut().enumerate() {
                let at = format!("spec.versions[{i}]");
                if !self.object(v, VERSION, &at) {
                    continue;
                }
                if let Some(sc) = v.get_mut("schema")
                    && self.object(sc, VALIDATION, &format!("{at}.schema"))
                    && let Some(s) = sc.get_mut("openAPIV3Schema")
                {
                    self.schema(s, &format!("{at}.schema.openAPIV3Schema"));
                }
                if let Some(sub) = v.get_mut("subresources")
                    && self.object(sub, SUBRESOURCES, &format!("{at}.subresources"))
                {
                    if let Some(st) = sub.get_mut("status") {
                        self.object(st, &[], &format!("{at}.subresources.status"));
                    }
                    if let Some(sc) = sub.get_mut("scale") {
                        self.object(sc, SCALE, &format!("{at}.subresources.scale"));
                    }
                }
                self.list_of(
                    v.get_mut("additionalPrinterColumns"),
                    COLUMN,
                    &format!("{at}.additionalPrinterColumns"),
                );
                self.list_of(
                    v.get_mut("selectableFields"),
                    SELECTABLE,
                    &format!("{at}.selectableFields"),
                );
            }
        }
    }

    fn schema(&mut self, v: &mut Value, path: &str) {
        let Some(m) = v.as_object_mut() else { return };
        self.fields(m, SCHEMA, path);
        for key in ["properties", "patternProperties", "definitions"] {
            if let Some(Value::Object(props)) = m.get_mut(key) {
                for (k, p) in props.iter_mut() {
                    self.schema(p, &format!("{path}.{key}.{k}"));
                }
            }
        }
        if let Some(Value::Object(deps)) = m.get_mut("dependencies") {
            for (k, d) in deps.iter_mut() {
                if d.is_object() {
                    self.schema(d, &format!("{path}.dependencies.{k}"));
                }
            }
        }
        for key in ["items", "additionalProperties", "additionalItems", "not"] {
            match m.get_mut(key) {
                Some(v @ Value::Object(_)) => self.schema(v, &format!("{path}.{key}")),
                Some(Value::Array(list)) if key == "items" => {
                    for (i, s) in list.iter_mut().enumerate() {
                        self.schema(s, &format!("{path}.items[{i}]"));
                    }
                }
                _ => {}
            }
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            if let Some(Value::Array(list)) = m.get_mut(key) {
                for (i, s) in list.iter_mut().enumerate() {
                    self.schema(s, &format!("{path}.{key}[{i}]"));
                }
            }
        }
        if let Some(d) = m.get_mut("externalDocs") {
            self.object(d, EXTERNAL_DOCS, &format!("{path}.externalDocs"));
        }
        self.list_of(
            m.get_mut("x-kubernetes-validations"),
            RULE,
            &format!("{path}.x-kubernetes-validations"),
        );
    }
}

/// Removes the fields a v1 CRD object does not have (outside `metadata`) and returns their
/// paths, sorted; strict field validation reports each as `unknown field "<path>"`.
pub fn prune_crd_unknown_fields(crd: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    Walker { out: &mut out }.crd(crd);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::prune_crd_unknown_fields;

    #[test]
    fn typos_in_crds_are_unknown_fields() {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "xs.example.com", "anything": 1},
            "spec": {"group": "example.com", "scoop": "Cluster",
                "names": {"kind": "X", "plural": "xs", "shortname": ["x"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {"x": 1}},
                    "additionalPrinterColumns": [{"name": "A", "type": "string", "jsonPath": ".a", "widht": 3}],
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"x": {"tpye": "string", "type": "string"}},
                                 "x-kubernetes-validations": [{"rule": "true", "mesage": "m"}]},
                        "list": {"type": "array", "items": {"type": "object", "properties": {"y": {"type": "string", "defualt": "a"}}}}
                    }}}}]}
        });
        assert_eq!(
            prune_crd_unknown_fields(&mut crd),
            vec![
                "spec.names.shortname",
                "spec.scoop",
                "spec.versions[0].additionalPrinterColumns[0].widht",
                "spec.versions[0].schema.openAPIV3Schema.properties.list.items.properties.y.defualt",
                "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.x.tpye",
                "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0].mesage",
                "spec.versions[0].subresources.status.x",
            ]
        );
        assert!(crd["spec"].get("scoop").is_none());
        assert_eq!(
            crd["metadata"]["anything"], 1,
            "metadata is the server's business"
        );
        assert!(prune_crd_unknown_fields(&mut crd).is_empty());
    }
}
