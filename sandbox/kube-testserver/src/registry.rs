//! The resource types the server serves: the built-in kinds and one entry per served version of
//! every established CustomResourceDefinition, plus the discovery documents built from them.

use crate::status::Qualified;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Which built-in behaviour a resource type has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Namespace,
    Secret,
    ConfigMap,
    ServiceAccount,
    Event,
    Lease,
    Crd,
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
    /// A custom resource served from a CRD.
    Custom,
}

/// How objects of a resource type are shown to clients relative to how they are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Stored as served (only `apiVersion` is rewritten to the requested version).
    Plain,
    /// `events.k8s.io/v1` Events, stored as `core/v1` Events.
    EventsV1,
}

/// A printer column of a CRD version (`additionalPrinterColumns`).
#[derive(Debug, Clone)]
pub struct PrinterColumn {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    pub json_path: String,
}

/// One served group/version/resource.
#[derive(Debug)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub status_subresource: bool,
    /// The version's `subresources.scale` (`specReplicasPath`, ...), checked on writes with
    /// `crd_schema::validate_scale` (custom resources).
    pub scale: Option<serde_json::Value>,
    pub builtin: Builtin,
    pub view: View,
    /// The storage identity: (group, plural) of the store the objects live in.
    pub store: StoreKey,
    /// The compiled schema of this version (custom resources).
    pub schema: Option<Arc<crd_schema::Schema>>,
    pub columns: Vec<PrinterColumn>,
    /// The CRD this type comes from.
    pub crd_name: Option<String>,
    /// Top-level fields a built-in object may have in its stored form (for strict field
    /// validation; events.k8s.io Events are checked in their stored core/v1 form).
    pub known_fields: &'static [&'static str],
    /// The `Warning` every request gets when the CRD version is `deprecated`.
    pub deprecation: Option<String>,
}

/// The storage identity of a resource: its group and plural name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreKey {
    pub group: String,
    pub resource: String,
}

impl ResourceType {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
    pub fn qualified(&self) -> Qualified {
        Qualified {
            group: self.group.clone(),
            resource: self.plural.clone(),
            kind: self.kind.clone(),
        }
    }
    /// Whether objects carry `metadata.generation`.
    pub fn has_generation(&self) -> bool {
        matches!(self.builtin, Builtin::Custom | Builtin::Crd)
    }
    /// The field selector labels this type supports (in its own view).
    pub fn field_labels(&self) -> &'static [&'static str] {
        match (self.builtin, self.view) {
            (Builtin::Event, View::Plain) => &[
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ],
            (Builtin::Event, View::EventsV1) => &[
                "metadata.name",
                "metadata.namespace",
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "regarding.apiVersion",
                "regarding.resourceVersion",
                "regarding.fieldPath",
                "reason",
                "reportingController",
                "type",
            ],
            (Builtin::Secret, _) => &["metadata.name", "metadata.namespace", "type"],
            (Builtin::Namespace, _) => &["metadata.name", "status.phase"],
            _ => &["metadata.name", "metadata.namespace"],
        }
    }
    pub fn verbs(&self) -> Vec<&'static str> {
        vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
    }
}

const META: &[&str] = &["apiVersion", "kind", "metadata"];

struct B {
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    builtin: Builtin,
    status: bool,
    fields: &'static [&'static str],
}

const BUILTINS: &[B] = &[
    B {
        group: "",
        version: "v1",
        plural: "namespaces",
        kind: "Namespace",
        namespaced: false,
        short: &["ns"],
        builtin: Builtin::Namespace,
        status: true,
        fields: &["spec", "status"],
    },
    B {
        group: "",
        version: "v1",
        plural: "secrets",
        kind: "Secret",
        namespaced: true,
        short: &[],
        builtin: Builtin::Secret,
        status: false,
        fields: &["data", "stringData", "type", "immutable"],
    },
    B {
        group: "",
        version: "v1",
        plural: "configmaps",
        kind: "ConfigMap",
        namespaced: true,
        short: &["cm"],
        builtin: Builtin::ConfigMap,
        status: false,
        fields: &["data", "binaryData", "immutable"],
    },
    B {
        group: "",
        version: "v1",
        plural: "serviceaccounts",
        kind: "ServiceAccount",
        namespaced: true,
        short: &["sa"],
        builtin: Builtin::ServiceAccount,
        status: false,
        fields: &[
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken",
        ],
    },
    B {
        group: "",
        version: "v1",
        plural: "events",
        kind: "Event",
        namespaced: true,
        short: &["ev"],
        builtin: Builtin::Event,
        status: false,
        fields: &[
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ],
    },
    B {
        group: "events.k8s.io",
        version: "v1",
        plural: "events",
        kind: "Event",
        namespaced: true,
        short: &["ev"],
        builtin: Builtin::Event,
        status: false,
        fields: &[
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ],
    },
    B {
        group: "coordination.k8s.io",
        version: "v1",
        plural: "leases",
        kind: "Lease",
        namespaced: true,
        short: &[],
        builtin: Builtin::Lease,
        status: false,
        fields: &["spec"],
    },
    B {
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        kind: "CustomResourceDefinition",
        namespaced: false,
        short: &["crd", "crds"],
        builtin: Builtin::Crd,
        status: true,
        fields: &["spec", "status"],
    },
    B {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "roles",
        kind: "Role",
        namespaced: true,
        short: &[],
        builtin: Builtin::Role,
        status: false,
        fields: &["rules"],
    },
    B {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "clusterroles",
        kind: "ClusterRole",
        namespaced: false,
        short: &[],
        builtin: Builtin::ClusterRole,
        status: false,
        fields: &["rules", "aggregationRule"],
    },
    B {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "rolebindings",
        kind: "RoleBinding",
        namespaced: true,
        short: &[],
        builtin: Builtin::RoleBinding,
        status: false,
        fields: &["subjects", "roleRef"],
    },
    B {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "clusterrolebindings",
        kind: "ClusterRoleBinding",
        namespaced: false,
        short: &[],
        builtin: Builtin::ClusterRoleBinding,
        status: false,
        fields: &["subjects", "roleRef"],
    },
];

/// Whether a top-level field is allowed on a built-in type.
pub fn builtin_field_known(rt: &ResourceType, field: &str) -> bool {
    META.contains(&field) || rt.known_fields.contains(&field)
}

/// All served types, keyed by (group, version, plural).
#[derive(Debug, Default)]
pub struct Registry {
    types: BTreeMap<(String, String, String), Arc<ResourceType>>,
    /// Bumped on every change, so discovery and OpenAPI documents can be cached by clients.
    pub generation: u64,
}

impl Registry {
    pub fn with_builtins() -> Registry {
        let mut r = Registry::default();
        for b in BUILTINS {
            let rt = ResourceType {
                group: b.group.into(),
                version: b.version.into(),
                plural: b.plural.into(),
                singular: b.kind.to_lowercase(),
                kind: b.kind.into(),
                list_kind: format!("{}List", b.kind),
                namespaced: b.namespaced,
                short_names: b.short.iter().map(|s| s.to_string()).collect(),
                categories: vec![],
                status_subresource: b.status,
                scale: None,
                builtin: b.builtin,
                view: if b.group == "events.k8s.io" {
                    View::EventsV1
                } else {
                    View::Plain
                },
                store: StoreKey {
                    group: if b.builtin == Builtin::Event {
                        String::new()
                    } else {
                        b.group.into()
                    },
                    resource: b.plural.into(),
                },
                schema: None,
                columns: vec![],
                crd_name: None,
                known_fields: b.fields,
                deprecation: None,
            };
            r.insert(rt);
        }
        r
    }

    pub fn insert(&mut self, rt: ResourceType) {
        self.generation += 1;
        self.types.insert(
            (rt.group.clone(), rt.version.clone(), rt.plural.clone()),
            Arc::new(rt),
        );
    }

    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Any served version of a store (used to reach objects by storage identity).
    pub fn any_for_store(&self, store: &StoreKey) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| &t.store == store && t.view == View::Plain)
            .cloned()
    }

    /// Removes every type that a CRD registered.
    pub fn remove_crd(&mut self, crd_name: &str) {
        let before = self.types.len();
        self.types
            .retain(|_, t| t.crd_name.as_deref() != Some(crd_name));
        if self.types.len() != before {
            self.generation += 1;
        }
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceType>> {
        self.types.values()
    }

    /// Groups with their versions, highest priority first.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (grp, ver, _) in self.types.keys() {
            let v = g.entry(grp.clone()).or_default();
            if !v.contains(ver) {
                v.push(ver.clone());
            }
        }
        let mut out: Vec<(String, Vec<String>)> = g
            .into_iter()
            .map(|(k, mut v)| {
                v.sort_by(|a, b| version_priority(b).cmp(&version_priority(a)).then(a.cmp(b)));
                (k, v)
            })
            .collect();
        out.sort_by_key(|(g, _)| (!builtin_group(g), g.clone()));
        out
    }

    /// `APIResourceList` for a group/version.
    pub fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let mut resources = Vec::new();
        for t in self
            .types
            .values()
            .filter(|t| t.group == group && t.version == version)
        {
            let mut r = json!({
                "name": t.plural,
                "singularName": t.singular,
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": t.verbs(),
            });
            if !t.short_names.is_empty() {
                r["shortNames"] = json!(t.short_names);
            }
            if !t.categories.is_empty() {
                r["categories"] = json!(t.categories);
            }
            resources.push(r);
            if t.status_subresource {
                resources.push(json!({
                    "name": format!("{}/status", t.plural),
                    "singularName": "",
                    "namespaced": t.namespaced,
                    "kind": t.kind,
                    "verbs": ["get", "patch", "update"],
                }));
            }
        }
        if group == "authorization.k8s.io" && version == "v1" {
            resources.push(json!({"name": "selfsubjectaccessreviews", "singularName": "", "namespaced": false, "kind": "SelfSubjectAccessReview", "verbs": ["create"]}));
            resources.push(json!({"name": "selfsubjectrulesreviews", "singularName": "", "namespaced": false, "kind": "SelfSubjectRulesReview", "verbs": ["create"]}));
        }
        if group == "authentication.k8s.io" && version == "v1" {
            resources.push(json!({"name": "selfsubjectreviews", "singularName": "", "namespaced": false, "kind": "SelfSubjectReview", "verbs": ["create"]}));
        }
        if resources.is_empty() {
            return None;
        }
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        Some(
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
        )
    }

    /// `APIGroupList` for `/apis`.
    pub fn group_list(&self) -> Value {
        let mut groups: Vec<Value> = self
            .groups()
            .into_iter()
            .filter(|(g, _)| !g.is_empty())
            .map(|(g, vs)| api_group(&g, &vs))
            .collect();
        groups.push(api_group("authorization.k8s.io", &["v1".to_string()]));
        groups.push(api_group("authentication.k8s.io", &["v1".to_string()]));
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    pub fn group(&self, group: &str) -> Option<Value> {
        if group == "authorization.k8s.io" || group == "authentication.k8s.io" {
            let mut g = api_group(group, &["v1".to_string()]);
            g["kind"] = json!("APIGroup");
            g["apiVersion"] = json!("v1");
            return Some(g);
        }
        self.groups()
            .into_iter()
            .find(|(g, _)| g == group)
            .map(|(g, vs)| {
                let mut v = api_group(&g, &vs);
                v["kind"] = json!("APIGroup");
                v["apiVersion"] = json!("v1");
                v
            })
    }
}

fn builtin_group(g: &str) -> bool {
    g.is_empty() || g.ends_with(".k8s.io")
}

fn api_group(g: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
        .collect();
    json!({"name": g, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(json!({}))})
}

/// Kubernetes version priority (`v1` > `v1beta2` > `v1beta1` > `v1alpha1` > other strings).
pub fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(major) = digits.parse::<u32>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    for (prefix, rank) in [("beta", 2u8), ("alpha", 1u8)] {
        if let Some(n) = tail.strip_prefix(prefix)
            && let Ok(n) = n.parse::<u32>()
        {
            return (rank, major, n);
        }
    }
    (0, 0, 0)
}

/// Builds the served resource types of an accepted CRD object.
pub fn crd_resource_types(crd: &Value) -> Result<Vec<ResourceType>, Vec<crd_schema::FieldError>> {
    let spec = &crd["spec"];
    let name = crd["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default().to_string();
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    let singular = names["singular"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let list_kind = names["listKind"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("{kind}List"));
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, v) in spec["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if v["served"].as_bool() != Some(true) {
            continue;
        }
        let schema = match v.pointer("/schema/openAPIV3Schema") {
            Some(s) => match crd_schema::Schema::compile(s) {
                Ok(s) => Some(Arc::new(s)),
                Err(mut e) => {
                    for fe in &mut e {
                        fe.field = format!(
                            "spec.versions[{i}].schema.openAPIV3Schema{}{}",
                            if fe.field.is_empty() { "" } else { "." },
                            fe.field
                        );
                    }
                    errors.extend(e);
                    None
                }
            },
            None => None,
        };
        let mut columns: Vec<PrinterColumn> = v["additionalPrinterColumns"]
            .as_array()
            .map(|cols| {
                cols.iter()
                    .map(|c| PrinterColumn {
                        name: c["name"].as_str().unwrap_or_default().to_string(),
                        type_: c["type"].as_str().unwrap_or("string").to_string(),
                        format: c["format"].as_str().unwrap_or_default().to_string(),
                        description: c["description"].as_str().unwrap_or_default().to_string(),
                        priority: c["priority"].as_i64().unwrap_or(0),
                        json_path: c["jsonPath"].as_str().unwrap_or_default().to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        if columns.is_empty() {
            columns.push(PrinterColumn {
                name: "Age".into(),
                type_: "date".into(),
                format: String::new(),
                description: "CreationTimestamp is a timestamp representing the server time when this object was created.".into(),
                priority: 0,
                json_path: ".metadata.creationTimestamp".into(),
            });
        }
        out.push(ResourceType {
            group: group.clone(),
            version: v["name"].as_str().unwrap_or_default().to_string(),
            plural: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            list_kind: list_kind.clone(),
            namespaced,
            short_names: strs(&names["shortNames"]),
            categories: strs(&names["categories"]),
            status_subresource: v.pointer("/subresources/status").is_some(),
            scale: v
                .pointer("/subresources/scale")
                .filter(|s| s.is_object())
                .cloned(),
            builtin: Builtin::Custom,
            view: View::Plain,
            store: StoreKey {
                group: group.clone(),
                resource: plural.clone(),
            },
            schema,
            columns,
            crd_name: Some(name.clone()),
            known_fields: &[],
            deprecation: (v["deprecated"].as_bool() == Some(true)).then(|| {
                v["deprecationWarning"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        format!(
                            "{}/{} {} is deprecated",
                            group,
                            v["name"].as_str().unwrap_or_default(),
                            kind
                        )
                    })
            }),
        });
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn version_order() {
        let mut v = vec!["v1alpha1", "v1", "v2beta1", "v1beta1", "foo", "v2"];
        v.sort_by_key(|b| std::cmp::Reverse(version_priority(b)));
        assert_eq!(v, vec!["v2", "v1", "v2beta1", "v1beta1", "v1alpha1", "foo"]);
    }
}
