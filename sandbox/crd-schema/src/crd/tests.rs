//! Tests of CRD defaulting and validation.

use serde_json::{Value, json};

use super::{default_crd, validate_crd};

fn crd_with_schema(schema: Value) -> Value {
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "repositories.artifactory.jfrog.crossplane.io"},
        "spec": {
            "group": "artifactory.jfrog.crossplane.io",
            "names": {"kind": "Repository", "plural": "repositories", "categories": ["crossplane", "managed"]},
            "scope": "Cluster",
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "SYNCED", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Synced')].status"},
                    {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                ]
            }]
        }
    });
    default_crd(&mut crd);
    crd
}

fn good_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{
                    "rule": "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.key) || (has(self.initProvider) && has(self.initProvider.key))",
                    "message": "spec.forProvider.key is a required parameter"
                }],
                "properties": {
                    "managementPolicies": {"type": "array", "default": ["*"],
                        "items": {"type": "string", "enum": ["Observe", "Create", "Update", "Delete", "LateInitialize", "*"]}},
                    "deletionPolicy": {"type": "string", "default": "Delete", "enum": ["Orphan", "Delete"]},
                    "forProvider": {"type": "object", "properties": {
                        "key": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
                        "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "rules": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                  "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}
                    }},
                    "initProvider": {"type": "object", "properties": {"key": {"type": "string"}}},
                    "providerConfigRef": {"type": "object", "default": {"name": "default"},
                        "required": ["name"], "properties": {"name": {"type": "string"}}}
                },
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    })
}

fn errors(crd: &Value) -> Vec<String> {
    validate_crd(crd, None)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn schema_errors(schema: Value) -> Vec<String> {
    errors(&crd_with_schema(schema))
}

#[test]
fn good_crd_is_accepted() {
    assert_eq!(
        errors(&crd_with_schema(good_schema())),
        Vec::<String>::new()
    );
}

#[test]
fn defaults_are_filled() {
    let crd = crd_with_schema(good_schema());
    assert_eq!(crd["spec"]["names"]["singular"], "repository");
    assert_eq!(crd["spec"]["names"]["listKind"], "RepositoryList");
    assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
    assert_eq!(crd["status"]["storedVersions"], json!(["v1alpha1"]));
}

#[test]
fn name_must_match_plural_and_group() {
    let mut crd = crd_with_schema(good_schema());
    crd["metadata"]["name"] = json!("repos.artifactory.jfrog.crossplane.io");
    assert_eq!(
        errors(&crd),
        vec![
            r#"metadata.name: Invalid value: "repos.artifactory.jfrog.crossplane.io": must be spec.names.plural+"."+spec.group"#
        ]
    );
}

#[test]
fn group_needs_a_dot_and_scope_a_known_value() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["group"] = json!("jfrog");
    crd["metadata"]["name"] = json!("repositories.jfrog");
    crd["spec"]["scope"] = json!("Global");
    assert_eq!(
        errors(&crd),
        vec![
            r#"spec.group: Invalid value: "jfrog": should be a domain with at least one dot"#,
            r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
        ]
    );
}

#[test]
fn names_rules() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["names"]["plural"] = json!("Repositories");
    crd["metadata"]["name"] = json!("Repositories.artifactory.jfrog.crossplane.io");
    crd["spec"]["names"]["kind"] = json!("Repo_sitory");
    crd["spec"]["names"]["listKind"] = json!("Repo_sitory");
    let e = errors(&crd);
    assert!(e.iter().any(|e| e.starts_with(r#"spec.names.plural: Invalid value: "Repositories": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#)), "{e:?}");
    assert!(e.iter().any(|e| e.starts_with(r#"spec.names.kind: Invalid value: "Repo_sitory": may have mixed case, but should otherwise match: a DNS-1035 label"#)), "{e:?}");
    assert!(e.contains(&r#"spec.names.listKind: Invalid value: "Repo_sitory": kind and listKind may not be the same"#.to_string()), "{e:?}");
}

#[test]
fn versions_rules() {
    let mut crd = crd_with_schema(good_schema());
    let v = crd["spec"]["versions"][0].clone();
    let mut v2 = v.clone();
    v2["storage"] = json!(true);
    crd["spec"]["versions"] = json!([v, v2]);
    let e = errors(&crd);
    assert_eq!(
        e,
        vec![
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must contain unique version names",
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have exactly one version marked as storage version",
        ]
    );
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["versions"][0]["name"] = json!("V1");
    assert!(
        errors(&crd)[0]
            .starts_with(r#"spec.versions[0].name: Invalid value: "V1": a DNS-1035 label"#)
    );
}

#[test]
fn schema_is_required() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["versions"][0]
        .as_object_mut()
        .map(|v| v.remove("schema"));
    assert_eq!(
        errors(&crd),
        vec!["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
    );
}

#[test]
fn non_structural_schema_is_rejected_with_upstream_reason() {
    let e = schema_errors(
        json!({"type": "object", "properties": {"spec": {"properties": {"x": {"type": "string"}}}}}),
    );
    assert_eq!(
        e,
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn per_version_schema_errors_use_version_path() {
    let mut crd = crd_with_schema(good_schema());
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v1beta1");
    v2["storage"] = json!(false);
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"] =
        json!({"description": "no type"});
    if let Some(a) = crd["spec"]["versions"].as_array_mut() {
        a.push(v2);
    }
    assert_eq!(
        errors(&crd),
        vec![
            "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[x].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn forbidden_keywords() {
    let e = schema_errors(json!({"type": "object", "properties": {
        "a": {"$ref": "#/definitions/x"},
        "b": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
        "c": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
        "d": {"type": "string", "x-kubernetes-preserve-unknown-fields": false}
    }}));
    assert_eq!(
        e,
        vec![
            "spec.validation.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported",
            "spec.validation.openAPIV3Schema.properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "spec.validation.openAPIV3Schema.properties[c].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            "spec.validation.openAPIV3Schema.properties[d].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
        ]
    );
}

#[test]
fn status_subresource_limits_root_fields() {
    let mut schema = good_schema();
    schema["nullable"] = json!(true);
    schema["anyOf"] = json!([{"required": ["spec"]}]);
    let e = schema_errors(schema);
    assert_eq!(
        e[0],
        "spec.validation.openAPIV3Schema: Invalid value: apiextensions.JSONSchemaProps{...}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"
    );
    assert_eq!(
        e[1],
        "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root"
    );
}

#[test]
fn defaults_must_be_pruned_and_valid() {
    let e = schema_errors(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a": {"type": "object", "default": {"x": 1, "y": 2}, "properties": {"x": {"type": "integer"}}},
            "b": {"type": "string", "default": 5},
            "c": {"type": "string", "default": "zz", "enum": ["a"]}
        }}}}),
    );
    assert_eq!(
        e,
        vec![
            r#"spec.validation.openAPIV3Schema.properties[spec].properties[a].default: Invalid value: map[string]interface {}{"x":1, "y":2}: must not have unknown fields"#,
            r#"spec.validation.openAPIV3Schema.properties[spec].properties[b].default: Invalid value: "integer":  in body must be of type string: "integer""#,
            r#"spec.validation.openAPIV3Schema.properties[spec].properties[c].default: Unsupported value: "zz": supported values: "a""#,
        ]
    );
}

#[test]
fn metadata_default_is_forbidden() {
    let e = schema_errors(
        json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {"name": "x"}}}}),
    );
    assert_eq!(
        e,
        vec![
            "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata"
        ]
    );
}

#[test]
fn list_type_consistency() {
    let e = schema_errors(json!({"type": "object", "properties": {
        "a": {"type": "string", "x-kubernetes-list-type": "set"},
        "b": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
        "c": {"type": "array", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
        "d": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
              "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
        "e": {"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}}
    }}));
    assert_eq!(
        e,
        vec![
            r#"spec.validation.openAPIV3Schema.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified"#,
            "spec.validation.openAPIV3Schema.properties[b].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
            "spec.validation.openAPIV3Schema.properties[c].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty",
            "spec.validation.openAPIV3Schema.properties[d].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            r#"spec.validation.openAPIV3Schema.properties[e].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map""#,
        ]
    );
}

#[test]
fn cel_rule_must_compile() {
    let e = schema_errors(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "self.replicas >", "message": "m"}],
        "properties": {"replicas": {"type": "integer"}}}}}),
    );
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with(r#"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas >", Message:"m""#),
        "{e:?}"
    );
    assert!(
        e[0].contains(": compilation failed: ERROR: <input>:1:"),
        "{e:?}"
    );
}

#[test]
fn cel_rule_static_checks() {
    let e = schema_errors(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": " "},
            {"rule": "true", "reason": "Nope"},
            {"rule": "true", "fieldPath": ".missing"},
            {"rule": "true", "optionalOldSelf": true}
        ],
        "properties": {"l": {"type": "array", "maxItems": 10, "items": {"type": "string",
            "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}}}),
    );
    // (The bounds keep the rule's estimated cost within budget.)
    // CEL checks of a node are skipped when its subtree has schema errors (as upstream), so
    // the optionalOldSelf misuse at `spec` is not reported here, but the one on the items is.
    assert_eq!(
        e,
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified",
            r#"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#,
            r#"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].fieldPath: Invalid value: ".missing": fieldPath must be a valid path"#,
            r#"spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[l]"#,
        ]
    );
    let e = schema_errors(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "true", "optionalOldSelf": true}]}}}),
    );
    assert_eq!(
        e,
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
        ]
    );
}

#[test]
fn printer_columns_and_scale() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = json!([
        {"name": "", "type": "float", "jsonPath": "status.x"},
        {"name": "N", "type": "string", "format": "weird", "jsonPath": ""}
    ]);
    crd["spec"]["versions"][0]["subresources"]["scale"] =
        json!({"specReplicasPath": ".status.r", "statusReplicasPath": ""});
    assert_eq!(
        errors(&crd),
        vec![
            "spec.subresources.scale.specReplicasPath: Invalid value: \".status.r\": should be a json path under .spec",
            "spec.subresources.scale.statusReplicasPath: Required value",
            "spec.additionalPrinterColumns[0].name: Required value",
            r#"spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string"#,
            r#"spec.additionalPrinterColumns[0].JSONPath: Invalid value: "status.x": must be a simple json path starting with ."#,
            r#"spec.additionalPrinterColumns[1].format: Invalid value: "weird": must be one of byte,date,date-time,double,float,int32,int64,password"#,
            "spec.additionalPrinterColumns[1].JSONPath: Required value",
        ]
    );
}

#[test]
fn update_keeps_immutable_fields() {
    let old = crd_with_schema(good_schema());
    let mut new = old.clone();
    new["spec"]["scope"] = json!("Namespaced");
    new["spec"]["names"]["kind"] = json!("Repo");
    new["spec"]["names"]["listKind"] = json!("RepoList");
    let e: Vec<String> = validate_crd(&new, Some(&old))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        e,
        vec![
            r#"spec.scope: Invalid value: "Namespaced": field is immutable"#,
            r#"spec.names.kind: Invalid value: "Repo": field is immutable"#,
        ]
    );
    assert!(validate_crd(&old, Some(&old)).is_empty());
}

#[test]
fn removing_a_stored_version_is_refused() {
    let old = crd_with_schema(good_schema());
    let mut new = old.clone();
    new["spec"]["versions"][0]["name"] = json!("v1");
    let e: Vec<String> = validate_crd(&new, Some(&old))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with(
            r#"status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions"#
        ),
        "{e:?}"
    );
}

#[test]
fn protected_group_needs_approval() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["group"] = json!("example.k8s.io");
    crd["metadata"]["name"] = json!("repositories.example.k8s.io");
    assert_eq!(
        errors(&crd),
        vec![
            r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
        ]
    );
    crd["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "unapproved, testing"});
    assert!(errors(&crd).is_empty());
}

#[test]
fn schema_compiles_only_when_valid() {
    use crate::Schema;
    assert!(Schema::compile(&good_schema()).is_ok());
    let e = Schema::compile(&json!({"type": "object", "properties": {"x": {}}}))
        .expect_err("not structural");
    assert_eq!(
        e[0].to_string(),
        "properties[x].type: Required value: must not be empty for specified object fields"
    );
}

#[test]
fn identical_schemas_of_two_versions_report_at_spec_validation() {
    let mut crd = crd_with_schema(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"x": {"properties": {}}}}}}),
    );
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v1beta1");
    v2["storage"] = json!(false);
    if let Some(a) = crd["spec"]["versions"].as_array_mut() {
        a.push(v2);
    }
    assert_eq!(
        errors(&crd),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].properties[x].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn default_crd_keeps_given_names() {
    let mut crd = json!({"spec": {"names": {"kind": "Foo", "listKind": "Foos", "singular": "thefoo"},
        "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}},
        "versions": [{"name": "v1", "storage": true}]}});
    default_crd(&mut crd);
    assert_eq!(crd["spec"]["names"]["listKind"], "Foos");
    assert_eq!(crd["spec"]["names"]["singular"], "thefoo");
    assert_eq!(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"],
        443
    );
}

#[test]
fn conversion_webhook_rules() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["conversion"] =
        json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v2"]}});
    assert_eq!(
        errors(&crd),
        vec![
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            r#"spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1"#,
        ]
    );
    crd["spec"]["conversion"] = json!({"strategy": "Magic"});
    assert_eq!(
        errors(&crd),
        vec![
            r#"spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook""#
        ]
    );
}

#[test]
fn embedded_resource_and_int_or_string_combination_is_invalid() {
    let e = schema_errors(json!({"type": "object", "properties": {
        "x": {"x-kubernetes-int-or-string": true, "x-kubernetes-embedded-resource": true}
    }}));
    assert!(
        e.contains(&"spec.validation.openAPIV3Schema.properties[x].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true".to_string()),
        "{e:?}"
    );
}

#[test]
fn a_storage_version_is_needed_for_stored_versions() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["versions"][0]["storage"] = json!(false);
    assert_eq!(
        errors(&crd),
        vec![
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have exactly one version marked as storage version",
            "status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
        ]
    );
}

#[test]
fn selectable_fields() {
    let mut crd = crd_with_schema(good_schema());
    crd["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.deletionPolicy"},
        {"jsonPath": ".spec.deletionPolicy"},
        {"jsonPath": ".spec.nope"},
        {"jsonPath": ".spec.forProvider"},
        {"jsonPath": ".metadata.name"},
        {"jsonPath": ".spec.managementPolicies['x']"}
    ]);
    assert_eq!(
        errors(&crd),
        vec![
            r#"spec.selectableFields[1].jsonPath: Duplicate value: ".spec.deletionPolicy""#,
            r#"spec.selectableFields[2].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#,
            r#"spec.selectableFields[3].jsonPath: Invalid value: ".spec.forProvider": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#,
            r#"spec.selectableFields[4].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field"#,
            r#"spec.selectableFields[5].jsonPath: Invalid value: ".spec.managementPolicies['x']": is an invalid path: array notation is not allowed"#,
        ]
    );
}

#[test]
fn preserve_unknown_fields_cannot_be_set() {
    let mut crd =
        crd_with_schema(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    crd["spec"]["preserveUnknownFields"] = json!(true);
    assert_eq!(
        errors(&crd),
        vec![
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        ]
    );
}

/// Upstream's "invalid defaults with enabled feature gate, structural schema" case: the paths
/// and error types must match.
#[test]
fn upstream_invalid_defaults_case() {
    use crate::FieldErrorKind;
    let obj_foo = |default: Value| json!({"type": "object", "properties": {"foo": {"type": "string"}}, "default": default});
    let schema = json!({"type": "object", "properties": {
        "a": obj_foo(json!({"foo": "abc", "bar": 42})),
        "b": obj_foo(json!({"foo": "abc"})),
        "c": obj_foo(json!({"foo": 42})),
        "d": {"type": "object", "properties": {
                "good": {"type": "string", "pattern": "a"},
                "bad": {"type": "string", "pattern": "b"}},
              "default": {"good": "a", "bad": "a"}},
        "e": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                "preserveUnknownFields": {"type": "object", "default": {"foo": "abc", "bar": 42}},
                "nestedProperties": {"type": "object", "properties": {"foo": {"type": "string"}},
                                     "default": {"foo": "abc", "bar": 42}}}},
        "embedded-fine": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"foo": {"type": "string"}},
            "default": {"foo": "abc", "apiVersion": "foo/v1", "kind": "v1", "metadata": {"name": "foo"}}},
        "embedded-preserve": {"type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true, "properties": {"foo": {"type": "string"}},
            "default": {"foo": "abc", "apiVersion": "foo/v1", "kind": "v1", "metadata": {"name": "foo"}, "bar": 42}},
        "embedded-preserve-unpruned-objectmeta": {"type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true, "properties": {"foo": {"type": "string"}},
            "default": {"foo": "abc", "apiVersion": "foo/v1", "kind": "v1",
                        "metadata": {"name": "foo", "unspecified": "bar"}, "bar": 42}}
    }});
    let crd = crd_with_schema(schema);
    let got: Vec<(String, FieldErrorKind)> = validate_crd(&crd, None)
        .into_iter()
        .map(|e| (e.field, e.kind))
        .collect();
    let at = "spec.validation.openAPIV3Schema";
    assert_eq!(
        got,
        vec![
            (
                format!("{at}.properties[a].default"),
                FieldErrorKind::Invalid
            ),
            (
                format!("{at}.properties[c].default.foo"),
                FieldErrorKind::TypeInvalid
            ),
            (
                format!("{at}.properties[d].default.bad"),
                FieldErrorKind::Invalid
            ),
            (
                format!("{at}.properties[e].properties[preserveUnknownFields].default"),
                FieldErrorKind::Invalid
            ),
            (
                format!("{at}.properties[e].properties[nestedProperties].default"),
                FieldErrorKind::Invalid
            ),
        ]
    );
}

/// Upstream's "defaults in metadata" cases: top-level metadata defaults are forbidden,
/// embedded-resource metadata defaults must result in valid metadata.
#[test]
fn upstream_metadata_defaults_case() {
    use crate::FieldErrorKind;
    let embedded = |props: Value| {
        json!({"type": "object", "properties": {"embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": props}}})
    };
    let cases = [
        (
            embedded(json!({"apiVersion": {"type": "string", "default": "v1"},
                "kind": {"type": "string", "default": "%"},
                "metadata": {"type": "object", "default": {"labels": {"bar": "x y"}}}})),
            vec![
                "properties[embedded].properties[kind].default",
                "properties[embedded].properties[metadata].default",
            ],
        ),
        (
            embedded(json!({"metadata": {"type": "object", "properties": {
                "name": {"type": "string", "default": 42},
                "labels": {"type": "object", "properties": {"bar": {"type": "string", "default": 42}}}}}})),
            vec![
                "properties[embedded].properties[metadata].properties[name].default",
                "properties[embedded].properties[metadata].properties[labels].properties[bar].default",
            ],
        ),
        (
            embedded(
                json!({"apiVersion": {"type": "string", "default": "v1"}, "kind": {"type": "string", "default": "Pod"},
                "metadata": {"type": "object", "default": {"name": "ok", "labels": {"a": "b"}}}}),
            ),
            vec![],
        ),
    ];
    for (schema, expected) in cases {
        let crd = crd_with_schema(schema);
        let got: Vec<(String, FieldErrorKind)> = validate_crd(&crd, None)
            .into_iter()
            .map(|e| (e.field, e.kind))
            .collect();
        let expected: Vec<(String, FieldErrorKind)> = expected
            .iter()
            .map(|p| {
                (
                    format!("spec.validation.openAPIV3Schema.{p}"),
                    FieldErrorKind::Invalid,
                )
            })
            .collect();
        assert_eq!(got, expected);
    }
}
