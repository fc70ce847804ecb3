//! CRD generation (docs/managed-reconciler.md §14): `apiextensions.k8s.io/v1`
//! CustomResourceDefinitions for managed Kinds in both scopes and for the config Kinds, from Kind
//! declarations.
//!
//! Managed Kinds: the envelope (forProvider required, initProvider, managementPolicies with
//! its enum and `["*"]` default, providerConfigRef with the scope's default, deletionPolicy
//! only in the legacy scope, writeConnectionSecretToRef, status atProvider / conditions /
//! observedGeneration / lastHandledReconcileAt), Upjet's printer columns SYNCED, READY,
//! EXTERNAL-NAME, AGE, the categories `crossplane`, `managed`, `<provider>`, and one CEL rule
//! per required parameter with Upjet's rule shape and message.
//!
//! Config Kinds: ClusterProviderConfig, ProviderConfig, their usage Kinds and the legacy
//! ProviderConfig/ProviderConfigUsage, with printer columns AGE, SECRET-NAME (configs) and
//! AGE, CONFIG-NAME, RESOURCE-KIND, RESOURCE-NAME (usages), categories `crossplane`,
//! `provider`, `<provider>`.
//!
//! Output is deterministic (`serde_json` keeps insertion order) so the checked-in `crds/`
//! can be compared byte for byte with what the code generates.
//!
//! Deviations: descriptions are ours, not controller-gen's; property order follows the
//! declarations rather than controller-gen's alphabetical order; an untagged union in a
//! parameter type (which has no single structural type) becomes a node with
//! `x-kubernetes-preserve-unknown-fields: true`. The config Kinds' `secretRef.namespace` is
//! optional (upstream requires it) because namespaced ProviderConfigs ignore it.

pub mod references;
pub mod schema;

use serde_json::{Value, json};

use crate::providerconfig::types::{
    ConfigApi, ConfigKind, LegacyProviderConfigUsageBody, ProviderConfigSpec, ProviderConfigStatus,
    ProviderConfigUsageBody,
};

/// The two scopes of every managed Kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MrScope {
    /// Namespaced, in `<group>.<provider>.m.crossplane.io`.
    Modern,
    /// Cluster-scoped, in `<group>.<provider>.crossplane.io`.
    Legacy,
}

/// A required parameter and whether it may be given in initProvider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredParam {
    /// The camelCase field name in forProvider.
    pub name: String,
    /// Whether initProvider may carry it (true for every managed Kind, Secret references
    /// included: the reconciler reads a reference from initProvider too).
    pub in_init_provider: bool,
}

/// What the generator needs to know of one managed Kind.
#[derive(Clone, Debug)]
pub struct ManagedCrdInput {
    /// Provider short name (`artifactory`).
    pub provider: String,
    /// API group label before the provider (`repository`).
    pub group: String,
    /// Kind (`LocalGenericRepository`).
    pub kind: String,
    /// Version (`v1alpha1`).
    pub version: String,
    /// Plural, if not the lowercase Kind + "s".
    pub plural: Option<String>,
    /// JSON Schema of forProvider (schemars output; structuralised here).
    pub parameters: Value,
    /// JSON Schema of atProvider.
    pub observation: Value,
    /// Required parameters (validated by CEL, not by `required`).
    pub required: Vec<RequiredParam>,
    /// Description of the Kind.
    pub description: Option<String>,
    /// The declared references: their `Ref(s)` / `Selector` members beside the value field.
    pub references: Vec<crate::managed::kind::ReferenceField>,
}

impl ManagedCrdInput {
    /// The API group of this Kind in a scope.
    pub fn group_in(&self, scope: MrScope) -> String {
        match scope {
            MrScope::Modern => format!("{}.{}.m.crossplane.io", self.group, self.provider),
            MrScope::Legacy => format!("{}.{}.crossplane.io", self.group, self.provider),
        }
    }

    /// The plural resource name.
    pub fn plural(&self) -> String {
        self.plural
            .clone()
            .unwrap_or_else(|| default_plural(&self.kind))
    }
}

/// The lowercase plural of a Kind, as Kubernetes' gengo/controller-gen pluralise.
pub fn default_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s')
        || lower.ends_with("sh")
        || lower.ends_with("ch")
        || lower.ends_with('x')
        || lower.ends_with('z')
    {
        format!("{lower}es")
    } else if lower.ends_with('y')
        && !matches!(
            lower.chars().rev().nth(1),
            Some('a' | 'e' | 'i' | 'o' | 'u')
        )
    {
        format!("{}ies", &lower[..lower.len() - 1])
    } else {
        format!("{lower}s")
    }
}

/// A generated CRD: its document and the file name used in `crds/<provider>/`.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedCrd {
    /// `<plural>.<group>`.
    pub name: String,
    /// The CustomResourceDefinition as JSON.
    pub document: Value,
}

impl GeneratedCrd {
    /// `<group>_<plural>.yaml`, as controller-gen names them.
    pub fn file_name(&self) -> String {
        let group = self.document["spec"]["group"].as_str().unwrap_or_default();
        let plural = self.document["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default();
        format!("{group}_{plural}.yaml")
    }

    /// The YAML text written to disk.
    pub fn to_yaml(&self) -> String {
        let body = serde_yaml::to_string(&self.document).unwrap_or_default();
        format!("---\n{body}")
    }
}

fn printer_columns_managed() -> Value {
    json!([
        {"jsonPath": ".status.conditions[?(@.type=='Synced')].status", "name": "SYNCED", "type": "string"},
        {"jsonPath": ".status.conditions[?(@.type=='Ready')].status", "name": "READY", "type": "string"},
        {"jsonPath": ".metadata.annotations.crossplane\\.io/external-name", "name": "EXTERNAL-NAME", "type": "string"},
        {"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"}
    ])
}

fn conditions_schema() -> Value {
    json!({
        "description": "Conditions of the resource.",
        "type": "array",
        "items": {
            "description": "A Condition that may apply to a resource.",
            "type": "object",
            "properties": {
                "lastTransitionTime": {"description": "LastTransitionTime is the last time this condition transitioned from one status to another.", "type": "string", "format": "date-time"},
                "message": {"description": "A Message containing details about this condition's last transition from one status to another, if any.", "type": "string"},
                "observedGeneration": {"description": "ObservedGeneration represents the .metadata.generation that the condition was set based upon.", "type": "integer", "format": "int64"},
                "reason": {"description": "A Reason for this condition's last transition from one status to another.", "type": "string"},
                "status": {"description": "Status of this condition; is it currently True, False, or Unknown?", "type": "string"},
                "type": {"description": "Type of this condition. At most one of each condition type may apply to a resource at any point in time.", "type": "string"}
            },
            "required": ["lastTransitionTime", "reason", "status", "type"]
        },
        "x-kubernetes-list-map-keys": ["type"],
        "x-kubernetes-list-type": "map"
    })
}

fn management_policies_schema() -> Value {
    json!({
        "default": ["*"],
        "description": "THIS IS A BETA FIELD. It is on by default but can be opted out through a Crossplane feature flag. ManagementPolicies specify the array of actions Crossplane is allowed to take on the managed and external resources.",
        "type": "array",
        "items": {
            "description": "A ManagementAction represents an action that the Crossplane controllers can take on an external resource.",
            "type": "string",
            "enum": ["Observe", "Create", "Update", "Delete", "LateInitialize", "*"]
        }
    })
}

/// The CEL rule of one required parameter (Upjet's shape).
pub fn required_rule(p: &RequiredParam) -> Value {
    required_rule_or(p, &[])
}

/// The CEL rule of one required parameter that may also be given by the members `or` (a
/// reference's `...Ref` and `...Selector`, which resolve into it before any write).
pub fn required_rule_or(p: &RequiredParam, or: &[&str]) -> Value {
    let policies = "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies)";
    let any = |block: &str| {
        let mut names = vec![p.name.as_str()];
        names.extend_from_slice(or);
        let alts: Vec<String> = names
            .iter()
            .map(|n| format!("has(self.{block}.{n})"))
            .collect();
        if alts.len() == 1 {
            alts[0].clone()
        } else {
            format!("({})", alts.join(" || "))
        }
    };
    let for_provider = any("forProvider");
    let for_provider = for_provider
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(&for_provider)
        .to_string();
    let rule = if p.in_init_provider {
        format!(
            "{policies} || {for_provider} || (has(self.initProvider) && {})",
            any("initProvider")
        )
    } else {
        format!("{policies} || {for_provider}")
    };
    json!({"message": format!("spec.forProvider.{} is a required parameter", p.name), "rule": rule})
}

/// The CRD of a managed Kind in one scope.
pub fn managed_crd(input: &ManagedCrdInput, scope: MrScope) -> GeneratedCrd {
    let mut for_provider = schema::structural(&input.parameters);
    // Required parameters are checked by CEL so that Observe-only MRs need none.
    if let Some(o) = for_provider.as_object_mut() {
        o.remove("required");
        o.remove("description");
    }
    let mut init_provider = for_provider.clone();
    schema::strip_required(&mut init_provider);
    let mut at_provider = schema::structural(&input.observation);
    schema::strip_required(&mut at_provider);
    if let Some(o) = at_provider.as_object_mut() {
        o.remove("description");
    }
    references::add_reference_schemas(&mut for_provider, &input.references, scope);
    references::add_reference_schemas(&mut init_provider, &input.references, scope);
    set_description(&mut for_provider, "");
    set_description(
        &mut init_provider,
        "Values sent to JFrog only when the provider creates the object: at creation they are merged into forProvider (forProvider wins where both set a field); afterwards the provider never compares them with JFrog's values and never updates them, so someone else may change them in JFrog. For fields needed at creation that another process manages later. Honoured while the management policies feature is enabled.",
    );
    if let Some(o) = for_provider.as_object_mut() {
        o.remove("description");
    }

    let mut spec_props = serde_json::Map::new();
    if scope == MrScope::Legacy {
        spec_props.insert("deletionPolicy".into(), json!({
            "default": "Delete",
            "description": "DeletionPolicy specifies what will happen to the underlying external when this managed resource is deleted - either \"Delete\" or \"Orphan\" the external resource. This field is planned to be deprecated in favor of the ManagementPolicies field in a future release. Currently, both could be set independently and non-default values would be honored if the feature flag is enabled. See the design doc for more information: https://github.com/crossplane/crossplane/blob/499895a25d1a1a0ba1604944ef98ac7a1a71f197/design/design-doc-observe-only-resources.md?plain=1#L223",
            "type": "string",
            "enum": ["Orphan", "Delete"]
        }));
    }
    spec_props.insert("forProvider".into(), for_provider);
    spec_props.insert("initProvider".into(), init_provider);
    spec_props.insert("managementPolicies".into(), management_policies_schema());
    let pc_ref = match scope {
        MrScope::Modern => json!({
            "default": {"kind": "ClusterProviderConfig", "name": "default"},
            "description": "ProviderConfigReference specifies how the provider that will be used to create, observe, update, and delete this managed resource should be configured.",
            "type": "object",
            "properties": {
                "kind": {"description": "Kind of the referenced object.", "type": "string"},
                "name": {"description": "Name of the referenced object.", "type": "string"}
            },
            "required": ["kind", "name"]
        }),
        MrScope::Legacy => json!({
            "default": {"name": "default"},
            "description": "ProviderConfigReference specifies how the provider that will be used to create, observe, update, and delete this managed resource should be configured.",
            "type": "object",
            "properties": {
                "name": {"description": "Name of the referenced object.", "type": "string"},
                "policy": {
                    "description": "Policies for referencing.",
                    "type": "object",
                    "properties": {
                        "resolution": {"default": "Required", "description": "Resolution specifies whether resolution of this reference is required. The default is 'Required', which means the reconcile will fail if the reference cannot be resolved. 'Optional' means this reference will be a no-op if it cannot be resolved.", "type": "string", "enum": ["Required", "Optional"]},
                        "resolve": {"description": "Resolve specifies when this reference should be resolved. The default is 'IfNotPresent', which will attempt to resolve the reference only when the corresponding field is not present. Use 'Always' to resolve the reference on every reconcile.", "type": "string", "enum": ["Always", "IfNotPresent"]}
                    }
                }
            },
            "required": ["name"]
        }),
    };
    spec_props.insert("providerConfigRef".into(), pc_ref);
    let wcs = match scope {
        MrScope::Modern => json!({
            "description": "WriteConnectionSecretToReference specifies the name of a Secret, in the same namespace as this managed resource, to which any connection details for this managed resource should be written. Connection details frequently include the endpoint, username, and password required to connect to the managed resource.",
            "type": "object",
            "properties": {"name": {"description": "Name of the secret.", "type": "string"}},
            "required": ["name"]
        }),
        MrScope::Legacy => json!({
            "description": "WriteConnectionSecretToReference specifies the namespace and name of a Secret to which any connection details for this managed resource should be written. Connection details frequently include the endpoint, username, and password required to connect to the managed resource.",
            "type": "object",
            "properties": {
                "name": {"description": "Name of the secret.", "type": "string"},
                "namespace": {"description": "Namespace of the secret.", "type": "string"}
            },
            "required": ["name", "namespace"]
        }),
    };
    spec_props.insert("writeConnectionSecretToRef".into(), wcs);

    let kind = &input.kind;
    let mut spec = json!({
        "description": format!("{kind}Spec defines the desired state of {kind}"),
        "type": "object",
        "properties": Value::Object(spec_props),
        "required": ["forProvider"]
    });
    if !input.required.is_empty() {
        let rules: Vec<Value> = input
            .required
            .iter()
            .map(|p| required_rule_or(p, &references::companions_of(&input.references, &p.name)))
            .collect();
        spec["x-kubernetes-validations"] = Value::Array(rules);
    }
    let status = json!({
        "description": format!("{kind}Status defines the observed state of {kind}."),
        "type": "object",
        "properties": {
            "atProvider": at_provider,
            "conditions": conditions_schema(),
            "lastHandledReconcileAt": {"description": "LastHandledReconcileAt holds the value of the most recent reconcile() request value, so a change of the annotation value can be noticed.", "type": "string"},
            "observedGeneration": {"description": "ObservedGeneration is the latest metadata.generation which resulted in either a ready state, or stalled due to error it can not recover from without human intervention.", "type": "integer", "format": "int64"}
        }
    });
    let description = input
        .description
        .clone()
        .unwrap_or_else(|| format!("{kind} is the Schema for the {kind}s API."));
    let open_api = json!({
        "description": description,
        "type": "object",
        "properties": {
            "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object.", "type": "string"},
            "kind": {"description": "Kind is a string value representing the REST resource this object represents.", "type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status
        },
        "required": ["spec"]
    });
    let group = input.group_in(scope);
    let plural = input.plural();
    let doc = crd_document(CrdParts {
        group: &group,
        kind,
        plural: &plural,
        namespaced: scope == MrScope::Modern,
        categories: vec![
            "crossplane".into(),
            "managed".into(),
            input.provider.clone(),
        ],
        version: &input.version,
        columns: printer_columns_managed(),
        schema: open_api,
    });
    GeneratedCrd {
        name: format!("{plural}.{group}"),
        document: doc,
    }
}

fn set_description(schema: &mut Value, text: &str) {
    if let Some(o) = schema.as_object_mut()
        && !text.is_empty()
    {
        o.insert("description".into(), Value::String(text.into()));
    }
}

struct CrdParts<'a> {
    group: &'a str,
    kind: &'a str,
    plural: &'a str,
    namespaced: bool,
    categories: Vec<String>,
    version: &'a str,
    columns: Value,
    schema: Value,
}

fn crd_document(p: CrdParts<'_>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{}", p.plural, p.group)},
        "spec": {
            "group": p.group,
            "names": {
                "categories": p.categories,
                "kind": p.kind,
                "listKind": format!("{}List", p.kind),
                "plural": p.plural,
                "singular": p.kind.to_ascii_lowercase()
            },
            "scope": if p.namespaced { "Namespaced" } else { "Cluster" },
            "versions": [{
                "additionalPrinterColumns": p.columns,
                "name": p.version,
                "schema": {"openAPIV3Schema": p.schema},
                "served": true,
                "storage": true,
                "subresources": {"status": {}}
            }]
        }
    })
}

fn schema_of<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Bool(true))
}

/// The CRD of one config Kind of a provider.
pub fn config_crd(api: &ConfigApi, kind: ConfigKind) -> GeneratedCrd {
    let group = api.group(kind);
    let plural = ConfigApi::plural(kind);
    let name = kind.kind();
    let categories = vec![
        "crossplane".to_string(),
        "provider".to_string(),
        api.provider().to_string(),
    ];
    let meta_props = json!({
        "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object.", "type": "string"},
        "kind": {"description": "Kind is a string value representing the REST resource this object represents.", "type": "string"},
        "metadata": {"type": "object"}
    });
    let mut props = meta_props.as_object().cloned().unwrap_or_default();
    let (schema, columns) = if kind.is_usage() {
        let body = if kind.legacy() {
            schema::structural(&schema_of::<LegacyProviderConfigUsageBody>())
        } else {
            schema::structural(&schema_of::<ProviderConfigUsageBody>())
        };
        for (k, v) in body["properties"].as_object().cloned().unwrap_or_default() {
            props.insert(k, v);
        }
        let s = json!({
            "description": format!("A {name} indicates that a resource is using a {}.", if name.starts_with("Cluster") { "ClusterProviderConfig" } else { "ProviderConfig" }),
            "type": "object",
            "properties": Value::Object(props),
            "required": ["providerConfigRef", "resourceRef"]
        });
        let cols = json!([
            {"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"},
            {"jsonPath": ".providerConfigRef.name", "name": "CONFIG-NAME", "type": "string"},
            {"jsonPath": ".resourceRef.kind", "name": "RESOURCE-KIND", "type": "string"},
            {"jsonPath": ".resourceRef.name", "name": "RESOURCE-NAME", "type": "string"}
        ]);
        (s, cols)
    } else {
        let mut spec = schema::structural(&schema_of::<ProviderConfigSpec>());
        set_description(
            &mut spec,
            &format!("A {name}Spec defines the desired state of a {name}."),
        );
        let mut status = schema::structural(&schema_of::<ProviderConfigStatus>());
        set_description(
            &mut status,
            &format!("A {name}Status reflects the observed state of a {name}."),
        );
        props.insert("spec".into(), spec);
        props.insert("status".into(), status);
        let s = json!({
            "description": format!("A {name} configures the JFrog {} provider.", api.provider()),
            "type": "object",
            "properties": Value::Object(props),
            "required": ["spec"]
        });
        let cols = json!([
            {"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"},
            {"jsonPath": ".spec.credentials.secretRef.name", "name": "SECRET-NAME", "priority": 1, "type": "string"}
        ]);
        (s, cols)
    };
    let doc = crd_document(CrdParts {
        group: &group,
        kind: name,
        plural: &plural,
        namespaced: kind.namespaced(),
        categories,
        version: crate::providerconfig::types::CONFIG_VERSION,
        columns,
        schema,
    });
    GeneratedCrd {
        name: format!("{plural}.{group}"),
        document: doc,
    }
}

impl ManagedCrdInput {
    /// The generator input of a registered Kind.
    pub fn from_registration(reg: &dyn crate::managed::KindRegistration) -> Self {
        let info = reg.info();
        let all_secret_refs = || info.secret_refs.iter().chain(&info.whole_secret_refs);
        // A Secret reference may be given in initProvider too: the reconciler reads it from
        // there (an init-only reference: sent on create, never compared, its Secret not
        // needed to adopt an existing object, as `export` writes the reference of a
        // write-only value JFrog already holds).
        let mut required: Vec<RequiredParam> = info
            .required_params
            .iter()
            .map(|p| RequiredParam {
                name: (*p).to_string(),
                in_init_provider: true,
            })
            .collect();
        for s in all_secret_refs().filter(|s| s.required) {
            if !required.iter().any(|r| r.name == s.field) {
                required.push(RequiredParam {
                    name: s.field.to_string(),
                    in_init_provider: true,
                });
            }
        }
        Self {
            provider: info.provider.to_string(),
            group: info.group.to_string(),
            kind: info.kind.to_string(),
            version: info.version.to_string(),
            plural: Some(info.plural()),
            parameters: reg.parameters_schema(),
            observation: reg.observation_schema(),
            required,
            description: (!info.description.is_empty()).then(|| info.description.to_string()),
            references: info.references.clone(),
        }
    }
}

/// Every CRD of a provider whose managed Kinds are registrations.
pub fn provider_crds_for(
    provider: &str,
    kinds: &[std::sync::Arc<dyn crate::managed::KindRegistration>],
) -> Vec<GeneratedCrd> {
    let inputs: Vec<ManagedCrdInput> = kinds
        .iter()
        .map(|k| ManagedCrdInput::from_registration(k.as_ref()))
        .collect();
    provider_crds(provider, &inputs)
}

/// Every CRD of a provider: its config Kinds, then each managed Kind in both scopes, sorted
/// by file name.
pub fn provider_crds(provider: &str, managed: &[ManagedCrdInput]) -> Vec<GeneratedCrd> {
    let api = ConfigApi::new(provider);
    let mut out: Vec<GeneratedCrd> = ConfigKind::ALL
        .iter()
        .map(|k| config_crd(&api, *k))
        .collect();
    for m in managed {
        out.push(managed_crd(m, MrScope::Modern));
        out.push(managed_crd(m, MrScope::Legacy));
    }
    out.sort_by_key(GeneratedCrd::file_name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its derived schema is used")]
    #[serde(rename_all = "camelCase")]
    struct Params {
        key: Option<String>,
        description: Option<String>,
        password_secret_ref: Option<String>,
    }

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its derived schema is used")]
    struct Obs {
        id: Option<String>,
    }

    struct SecretsKind(crate::managed::KindInfo);

    impl crate::managed::ManagedKind for SecretsKind {
        type Parameters = serde_json::Value;
        type Observation = serde_json::Value;
        fn info(&self) -> &crate::managed::KindInfo {
            &self.0
        }
        fn parameters_schema(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
        fn observation_schema(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
    }

    struct NoConnector;

    #[async_trait::async_trait]
    impl crate::managed::Connector<SecretsKind> for NoConnector {
        async fn connect(
            &self,
            _: &crate::managed::ResolvedConfig,
            _: &crate::managed::Managed<SecretsKind>,
        ) -> Result<
            Box<dyn crate::managed::ExternalClient<SecretsKind>>,
            crate::managed::ExternalError,
        > {
            Err(crate::managed::ExternalError::msg("unused"))
        }
    }

    #[test]
    fn required_secret_refs_of_both_kinds_are_required_in_for_provider() {
        use crate::managed::{IdentifierStrategy, KindInfo, SecretRefField};
        let mut info = KindInfo::new(
            "xray",
            "webhook",
            "Hook",
            "v1alpha1",
            IdentifierStrategy::Name,
        );
        info.required_params = vec!["name"];
        info.secret_refs = vec![SecretRefField::required("passwordSecretRef")];
        info.whole_secret_refs = vec![
            SecretRefField::required("headersSecretRef"),
            SecretRefField::optional("extraSecretRef"),
        ];
        let reg = crate::managed::register(SecretsKind(info), NoConnector);
        let input = ManagedCrdInput::from_registration(reg.as_ref());
        let req: Vec<(&str, bool)> = input
            .required
            .iter()
            .map(|r| (r.name.as_str(), r.in_init_provider))
            .collect();
        assert_eq!(
            req,
            vec![
                ("name", true),
                ("passwordSecretRef", true),
                ("headersSecretRef", true)
            ]
        );
    }

    fn input() -> ManagedCrdInput {
        ManagedCrdInput {
            provider: "artifactory".into(),
            group: "repository".into(),
            kind: "LocalGenericRepository".into(),
            version: "v1alpha1".into(),
            plural: None,
            parameters: serde_json::to_value(schemars::schema_for!(Params)).unwrap(),
            observation: serde_json::to_value(schemars::schema_for!(Obs)).unwrap(),
            required: vec![
                RequiredParam {
                    name: "key".into(),
                    in_init_provider: true,
                },
                RequiredParam {
                    name: "passwordSecretRef".into(),
                    in_init_provider: false,
                },
            ],
            description: None,
            references: vec![],
        }
    }

    /// Declared references render as Upjet renders them: `<field>Ref(s)` and
    /// `<field>Selector` beside the value, in forProvider and initProvider, inside list
    /// elements for nested fields; the namespace members only in the namespaced CRD.
    #[test]
    fn references_render_beside_their_fields_in_both_scopes() {
        use crate::managed::kind::{ReferenceField, ReferenceTarget};
        let t = |kind| ReferenceTarget {
            provider: "xray",
            group: "policy",
            kind,
            version: "v1alpha1",
        };
        let mut i = input();
        i.parameters = json!({"type": "object", "properties": {
            "repositories": {"type": "array", "items": {"type": "string"}},
            "assignedPolicy": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}}}}}});
        i.required = vec![RequiredParam {
            name: "repositories".into(),
            in_init_provider: true,
        }];
        i.references = vec![
            ReferenceField::multi("repositories", t("Repo")),
            ReferenceField::new(
                "assignedPolicy.name",
                false,
                vec![t("SecurityPolicy"), t("LicensePolicy")],
            ),
        ];
        for scope in [MrScope::Modern, MrScope::Legacy] {
            let crd = managed_crd(&i, scope);
            let spec = &crd.document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                ["spec"]["properties"];
            for block in ["forProvider", "initProvider"] {
                let p = &spec[block]["properties"];
                let refs = &p["repositoriesRefs"];
                assert_eq!(refs["type"], "array", "{block}");
                assert_eq!(refs["items"]["required"], json!(["name"]));
                assert_eq!(
                    refs["items"]["properties"]["policy"]["properties"]["resolve"]["enum"],
                    json!(["Always", "IfNotPresent"])
                );
                let sel = &p["repositoriesSelector"]["properties"];
                assert_eq!(sel["matchLabels"]["additionalProperties"]["type"], "string");
                assert_eq!(sel["matchControllerRef"]["type"], "boolean");
                assert_eq!(
                    sel["policy"]["properties"]["resolution"]["default"],
                    "Required"
                );
                let elem = &p["assignedPolicy"]["items"]["properties"];
                assert_eq!(
                    elem["nameRef"]["description"],
                    "Reference to a SecurityPolicy or LicensePolicy in policy to populate name."
                );
                assert!(elem["nameSelector"].is_object());
                // A required nested value may come from its Ref or selector instead.
                let item = &p["assignedPolicy"]["items"];
                assert!(item.get("required").is_none(), "{item}");
                if block == "forProvider" {
                    assert_eq!(
                        item["x-kubernetes-validations"][0]["rule"],
                        "has(self.name) || has(self.nameRef) || has(self.nameSelector)"
                    );
                }
                let namespaced = scope == MrScope::Modern;
                assert_eq!(
                    elem["nameRef"]["properties"].get("namespace").is_some(),
                    namespaced
                );
                assert_eq!(sel.get("namespace").is_some(), namespaced);
            }
            let rules = &crd.document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                ["spec"]["x-kubernetes-validations"];
            assert_eq!(
                rules[0]["rule"],
                "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.repositories) || has(self.forProvider.repositoriesRefs) || has(self.forProvider.repositoriesSelector) || (has(self.initProvider) && (has(self.initProvider.repositories) || has(self.initProvider.repositoriesRefs) || has(self.initProvider.repositoriesSelector)))",
                "{rules}"
            );
        }
    }

    #[test]
    fn plurals() {
        assert_eq!(
            default_plural("ClusterProviderConfig"),
            "clusterproviderconfigs"
        );
        assert_eq!(default_plural("Policy"), "policies");
        assert_eq!(default_plural("Gateway"), "gateways");
        assert_eq!(default_plural("Address"), "addresses");
    }

    #[test]
    fn modern_envelope() {
        let crd = managed_crd(&input(), MrScope::Modern);
        assert_eq!(
            crd.name,
            "localgenericrepositories.repository.artifactory.m.crossplane.io"
        );
        assert_eq!(
            crd.file_name(),
            "repository.artifactory.m.crossplane.io_localgenericrepositories.yaml"
        );
        let d = &crd.document;
        assert_eq!(d["spec"]["scope"], "Namespaced");
        assert_eq!(
            d["spec"]["names"]["categories"],
            json!(["crossplane", "managed", "artifactory"])
        );
        let cols: Vec<&str> = d["spec"]["versions"][0]["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(cols, ["SYNCED", "READY", "EXTERNAL-NAME", "AGE"]);
        let spec = &d["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["required"], json!(["forProvider"]));
        assert!(spec["properties"].get("deletionPolicy").is_none());
        assert_eq!(
            spec["properties"]["managementPolicies"]["default"],
            json!(["*"])
        );
        assert_eq!(
            spec["properties"]["providerConfigRef"]["default"],
            json!({"kind": "ClusterProviderConfig", "name": "default"})
        );
        assert_eq!(
            spec["properties"]["providerConfigRef"]["required"],
            json!(["kind", "name"])
        );
        let rules = spec["x-kubernetes-validations"].as_array().unwrap();
        assert_eq!(
            rules[0]["message"],
            "spec.forProvider.key is a required parameter"
        );
        assert_eq!(
            rules[0]["rule"],
            "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.key) || (has(self.initProvider) && has(self.initProvider.key))"
        );
        assert!(!rules[1]["rule"].as_str().unwrap().contains("initProvider"));
        schema::check_structural(&d["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "")
            .unwrap();
    }

    #[test]
    fn legacy_envelope() {
        let crd = managed_crd(&input(), MrScope::Legacy);
        let d = &crd.document;
        assert_eq!(d["spec"]["scope"], "Cluster");
        assert_eq!(d["spec"]["group"], "repository.artifactory.crossplane.io");
        let spec = &d["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["deletionPolicy"]["default"], "Delete");
        assert_eq!(
            spec["properties"]["providerConfigRef"]["default"],
            json!({"name": "default"})
        );
        assert_eq!(
            spec["properties"]["writeConnectionSecretToRef"]["required"],
            json!(["name", "namespace"])
        );
    }

    #[test]
    fn config_crds_are_structural() {
        for crd in provider_crds("xray", &[]) {
            let v = &crd.document["spec"]["versions"][0];
            schema::check_structural(&v["schema"]["openAPIV3Schema"], &crd.name).unwrap();
            assert_eq!(crd.document["spec"]["names"]["categories"][1], "provider");
        }
        let api = ConfigApi::new("xray");
        let cpc = config_crd(&api, ConfigKind::ClusterProviderConfig);
        assert_eq!(
            cpc.file_name(),
            "xray.m.crossplane.io_clusterproviderconfigs.yaml"
        );
        assert_eq!(cpc.document["spec"]["scope"], "Cluster");
        let pcu = config_crd(&api, ConfigKind::ProviderConfigUsage);
        assert_eq!(pcu.document["spec"]["scope"], "Namespaced");
        let props = &pcu.document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        assert_eq!(
            props["providerConfigRef"]["required"],
            json!(["kind", "name"])
        );
        let src = &config_crd(&api, ConfigKind::ProviderConfig).document["spec"]["versions"][0]["schema"]
            ["openAPIV3Schema"]["properties"]["spec"]["properties"]["credentials"]["properties"]["source"];
        assert_eq!(
            src["enum"],
            json!([
                "None",
                "Secret",
                "InjectedIdentity",
                "Environment",
                "Filesystem"
            ])
        );
    }
}
