//! The RBAC Crossplane's RBAC manager gives a provider (docs/managed-reconciler.md §15.4), so that
//! a request a real cluster would forbid fails in the tests too.

use std::collections::BTreeMap;

use kube::Api;
use kube::api::{DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::cluster::api_resource;

/// The user of a provider's service account: `system:serviceaccount:crossplane-system:<name>`.
pub fn provider_user(name: &str) -> String {
    format!("system:serviceaccount:crossplane-system:{name}")
}

/// An `Api` over a cluster-scoped `rbac.authorization.k8s.io/v1` kind (`ClusterRole`,
/// `clusterroles`).
pub fn rbac_api(admin: &kube::Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::all_with(
        admin.clone(),
        &api_resource("rbac.authorization.k8s.io", "v1", kind, plural),
    )
}

/// The rules Crossplane grants a provider for these CRDs: `get list watch update patch
/// create` on each resource and its status, `update` on `*/finalizers` of its groups, `*` on
/// core secrets/configmaps/events and on leases, `get list watch` on CRDs.
pub fn provider_rules(crds: &[Value]) -> Vec<Value> {
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in crds {
        let g = c["spec"]["group"].as_str().unwrap_or_default().to_string();
        let p = c["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        by_group
            .entry(g)
            .or_default()
            .extend([p.clone(), format!("{p}/status")]);
    }
    let system = json!(["get", "list", "watch", "update", "patch", "create"]);
    let mut rules: Vec<Value> = by_group
        .iter()
        .map(|(g, r)| json!({"apiGroups": [g], "resources": r, "verbs": system}))
        .collect();
    let groups: Vec<&String> = by_group.keys().collect();
    rules.push(json!({"apiGroups": groups, "resources": ["*/finalizers"], "verbs": ["update"]}));
    rules.push(json!({"apiGroups": [""], "resources": ["secrets", "configmaps", "events"], "verbs": ["*"]}));
    rules.push(
        json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}),
    );
    rules.push(json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "watch"]}));
    rules
}

/// A ClusterRole document with these rules.
pub fn cluster_role(name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name}, "rules": rules})
}

/// The ClusterRole `name` of [`provider_rules`] for `crds`, plus `extra` rules.
pub fn provider_role(name: &str, crds: &[Value], extra: &[Value]) -> Value {
    let mut rules = provider_rules(crds);
    rules.extend(extra.iter().cloned());
    cluster_role(name, rules)
}

/// Creates the ClusterRole `role` and a ClusterRoleBinding of the same name to `user`.
pub async fn grant(admin: &kube::Client, role: Value, user: &str) {
    let name = role["metadata"]["name"]
        .as_str()
        .expect("the role has a name")
        .to_string();
    let role: DynamicObject = serde_json::from_value(role).expect("ClusterRole document");
    rbac_api(admin, "ClusterRole", "clusterroles")
        .create(&PostParams::default(), &role)
        .await
        .unwrap_or_else(|e| panic!("create ClusterRole {name}: {e}"));
    let binding: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "User", "name": user}]
    }))
    .expect("ClusterRoleBinding document");
    rbac_api(admin, "ClusterRoleBinding", "clusterrolebindings")
        .create(&PostParams::default(), &binding)
        .await
        .unwrap_or_else(|e| panic!("create ClusterRoleBinding {name}: {e}"));
}
