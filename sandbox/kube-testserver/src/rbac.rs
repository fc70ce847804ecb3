//! Authentication (bearer tokens) and RBAC authorization.
//!
//! Every request must carry `Authorization: Bearer <token>` with a token the server issued
//! ([`crate::TestServer::admin_token`], [`crate::TestServer::issue_token`]); otherwise it gets
//! 401 (only `/healthz`, `/livez` and `/readyz` are open). The admin token is user `admin` in
//! group `system:masters`, which bypasses authorization as on a real cluster. Every other token
//! is authorized against the stored `rbac.authorization.k8s.io/v1` Roles, ClusterRoles,
//! RoleBindings and ClusterRoleBindings, like upstream's RBAC authorizer: subjects `User`,
//! `Group` and `ServiceAccount` (user `system:serviceaccount:<ns>:<name>`, groups
//! `system:serviceaccounts` and `system:serviceaccounts:<ns>`), verbs including `*`,
//! resources including `*`, subresources (`foos/status`, `foos/finalizers`, `*/status`),
//! `resourceNames`, apiGroups including `*`. All tokens are in `system:authenticated`.
//! A refused request gets 403 with upstream's message (`secrets is forbidden: User "u" cannot
//! list resource "secrets" in API group "" in the namespace "default"`).
//!
//! The rules that apply to a user in a namespace are gathered once and kept until the next write
//! to any Role, ClusterRole, RoleBinding or ClusterRoleBinding: a provider's thousands of
//! requests are all authorized against the same few rules.
//!
//! Writes are also checked as the `OwnerReferencesPermissionEnforcement` admission plugin
//! does (hardened clusters enable it; being stricter is the point): changing
//! `metadata.ownerReferences` needs `delete` on the object, and setting `blockOwnerDeletion`
//! needs `update` on the owner's `<resource>/finalizers`.
//!
//! Deviations: ClusterRole `aggregationRule`s are not aggregated; `nonResourceURLs` rules are
//! not evaluated: every authenticated user may read the discovery, version, OpenAPI and health
//! endpoints (as upstream's default `system:discovery` and `system:public-info-viewer` allow).

use crate::registry::StoreKey;
use crate::store::State;
use serde_json::Value;

/// An authenticated identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    pub fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == "system:masters")
    }
}

/// What a request wants to do.
#[derive(Debug, Clone, Default)]
pub struct Attrs {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

/// Whether any string of the array `v` satisfies `f`.
fn any_str(v: &Value, f: impl Fn(&str) -> bool) -> bool {
    v.as_array()
        .is_some_and(|a| a.iter().filter_map(Value::as_str).any(f))
}

fn rule_allows(rule: &Value, a: &Attrs) -> bool {
    if !any_str(&rule["verbs"], |v| v == "*" || v == a.verb) {
        return false;
    }
    if !any_str(&rule["apiGroups"], |g| g == "*" || g == a.group) {
        return false;
    }
    let res_ok = any_str(&rule["resources"], |r| {
        if r == "*" {
            return true;
        }
        if a.subresource.is_empty() {
            return r == a.resource;
        }
        // `<resource>/<subresource>` or `*/<subresource>`.
        r.split_once('/')
            .is_some_and(|(res, sub)| sub == a.subresource && (res == "*" || res == a.resource))
    });
    if !res_ok {
        return false;
    }
    let names = &rule["resourceNames"];
    !any_str(names, |_| true) || (!a.name.is_empty() && any_str(names, |n| n == a.name))
}

fn subject_matches(binding: &Value, user: &UserInfo, binding_ns: &str) -> bool {
    let Some(subjects) = binding["subjects"].as_array() else {
        return false;
    };
    subjects.iter().any(|s| {
        let name = s["name"].as_str().unwrap_or_default();
        match s["kind"].as_str().unwrap_or_default() {
            "User" => user.name == name,
            "Group" => user.groups.iter().any(|g| g == name),
            "ServiceAccount" => {
                let ns = s["namespace"]
                    .as_str()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(binding_ns);
                user.name == format!("system:serviceaccount:{ns}:{name}")
            }
            _ => false,
        }
    })
}

/// The API group of the RBAC objects.
pub const GROUP: &str = "rbac.authorization.k8s.io";

fn store(resource: &str) -> StoreKey {
    StoreKey {
        group: GROUP.into(),
        resource: resource.into(),
    }
}

/// The rules that apply to a user in a namespace ([`rules_for`]), gathered once per
/// [`State::rbac_epoch`]: every request is authorized, and a provider's requests come from one
/// user in few namespaces thousands of times.
#[derive(Debug, Default)]
pub struct RulesCache {
    epoch: u64,
    rules: std::collections::HashMap<String, std::sync::Arc<Vec<Value>>>,
}

/// How many users and namespaces are kept before they are all dropped.
const MAX_CACHED_RULES: usize = 4_096;

/// Whether `user` may do `a`: whether a rule of a role bound to it, cluster-wide or in the
/// request's namespace, allows it.
pub fn allowed(state: &State, user: &UserInfo, a: &Attrs) -> bool {
    if user.is_master() {
        return true;
    }
    applicable_rules(state, user, &a.namespace)
        .iter()
        .any(|rule| rule_allows(rule, a))
}

/// [`rules_for`], remembered until the next write to an RBAC object.
fn applicable_rules(state: &State, user: &UserInfo, namespace: &str) -> std::sync::Arc<Vec<Value>> {
    let who = [user.name.as_str(), &user.groups.join("\u{1}"), namespace].join("\u{0}");
    let cache = || {
        let mut c = state
            .rbac_rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if c.epoch != state.rbac_epoch || c.rules.len() >= MAX_CACHED_RULES {
            c.rules.clear();
            c.epoch = state.rbac_epoch;
        }
        c
    };
    if let Some(rules) = cache().rules.get(&who) {
        return rules.clone();
    }
    let rules = std::sync::Arc::new(rules_for(state, user, namespace));
    cache().rules.insert(who, rules.clone());
    rules
}

/// The resource rules that apply to `user` in `namespace` (SelfSubjectRulesReview).
pub fn rules_for(state: &State, user: &UserInfo, namespace: &str) -> Vec<Value> {
    if user.is_master() {
        return vec![serde_json::json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})];
    }
    let mut out = Vec::new();
    let mut add = |binding: &Value, ns: &str| {
        let name = binding["roleRef"]["name"].as_str().unwrap_or_default();
        let role = match binding["roleRef"]["kind"].as_str() {
            Some("ClusterRole") => state.get(&store("clusterroles"), "", name),
            Some("Role") => state.get(&store("roles"), ns, name),
            _ => None,
        };
        if let Some(rules) = role.as_ref().and_then(|r| r["rules"].as_array()) {
            out.extend(
                rules
                    .iter()
                    .filter(|r| r.get("resources").is_some())
                    .cloned(),
            );
        }
    };
    let (crbs, _, _) = state.list(&store("clusterrolebindings"), None, None, None, |_| true);
    for b in crbs.iter().filter(|b| subject_matches(b, user, "")) {
        add(b, "");
    }
    if !namespace.is_empty() {
        let (rbs, _, _) = state.list(&store("rolebindings"), Some(namespace), None, None, |_| {
            true
        });
        for b in rbs.iter().filter(|b| subject_matches(b, user, namespace)) {
            add(b, namespace);
        }
    }
    out
}

/// The reason part of upstream's Forbidden message.
pub fn forbidden_reason(user: &UserInfo, a: &Attrs) -> String {
    let res = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let scope = if a.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", a.namespace)
    };
    format!(
        "User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {}",
        user.name, a.verb, res, a.group, scope
    )
}

fn refs(obj: Option<&Value>) -> Vec<Value> {
    obj.and_then(|o| o.pointer("/metadata/ownerReferences"))
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default()
}

/// The `OwnerReferencesPermissionEnforcement` admission check (stricter than a default
/// cluster, as hardened clusters run it): changing `ownerReferences` of an existing object
/// needs `delete` on it (creates are exempt), and setting `blockOwnerDeletion` needs `update` on the owner's `finalizers`
/// subresource (which is why Crossplane grants providers `*/finalizers`).
pub fn check_owner_references(
    state: &State,
    user: &UserInfo,
    target: &Attrs,
    old: Option<&Value>,
    new: &Value,
) -> Result<(), crate::status::ApiError> {
    if user.is_master() {
        return Ok(());
    }
    let (old_refs, new_refs) = (refs(old), refs(Some(new)));
    if old_refs == new_refs {
        return Ok(());
    }
    let q = crate::status::Qualified {
        group: target.group.clone(),
        resource: target.resource.clone(),
        kind: String::new(),
    };
    let del = Attrs {
        verb: "delete".into(),
        subresource: String::new(),
        ..target.clone()
    };
    // Creates are exempt from the delete check, as upstream: whoever creates an object could
    // as well not have created it. `old` is `None` exactly for creates.
    if old.is_some() && !allowed(state, user, &del) {
        return Err(crate::status::ApiError::forbidden(
            &q,
            &target.name,
            &format!(
                "cannot set an ownerRef on a resource you can't delete: {}",
                forbidden_reason(user, &del)
            ),
        ));
    }
    for r in &new_refs {
        if r["blockOwnerDeletion"].as_bool() != Some(true) || old_refs.contains(r) {
            continue;
        }
        let api_version = r["apiVersion"].as_str().unwrap_or_default();
        let kind = r["kind"].as_str().unwrap_or_default();
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let Some(owner_type) = state
            .registry
            .all()
            .find(|t| t.group == group && t.version == version && t.kind == kind)
            .cloned()
        else {
            return Err(crate::status::ApiError::forbidden(
                &q,
                &target.name,
                &format!(
                    "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion {api_version} Kind {kind}"
                ),
            ));
        };
        let fin = Attrs {
            verb: "update".into(),
            group: owner_type.group.clone(),
            resource: owner_type.plural.clone(),
            subresource: "finalizers".into(),
            namespace: if owner_type.namespaced {
                target.namespace.clone()
            } else {
                String::new()
            },
            name: r["name"].as_str().unwrap_or_default().to_string(),
        };
        if !allowed(state, user, &fin) {
            return Err(crate::status::ApiError::forbidden(
                &q,
                &target.name,
                &format!(
                    "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: {}",
                    forbidden_reason(user, &fin)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules() {
        let a = Attrs {
            verb: "update".into(),
            group: "g".into(),
            resource: "foos".into(),
            subresource: "status".into(),
            namespace: "ns".into(),
            name: "x".into(),
        };
        assert!(rule_allows(
            &json!({"verbs": ["update"], "apiGroups": ["g"], "resources": ["foos/status"]}),
            &a
        ));
        assert!(rule_allows(
            &json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
            &a
        ));
        assert!(rule_allows(
            &json!({"verbs": ["update"], "apiGroups": ["g"], "resources": ["*/status"]}),
            &a
        ));
        assert!(!rule_allows(
            &json!({"verbs": ["update"], "apiGroups": ["g"], "resources": ["foos"]}),
            &a
        ));
        assert!(!rule_allows(
            &json!({"verbs": ["get"], "apiGroups": ["g"], "resources": ["foos/status"]}),
            &a
        ));
        assert!(!rule_allows(
            &json!({"verbs": ["update"], "apiGroups": ["g"], "resources": ["foos/status"], "resourceNames": ["y"]}),
            &a
        ));
        let u = UserInfo {
            name: "system:serviceaccount:ns:sa".into(),
            groups: vec![],
        };
        assert!(subject_matches(
            &json!({"subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
            &u,
            "ns"
        ));
        assert!(!subject_matches(
            &json!({"subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "other"}]}),
            &u,
            "ns"
        ));
    }

    fn attrs(verb: &str, resource: &str, subresource: &str, name: &str) -> Attrs {
        Attrs {
            verb: verb.into(),
            group: "example.crossplane.io".into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: "default".into(),
            name: name.into(),
        }
    }

    #[test]
    fn rules_match_verbs_groups_resources_subresources_and_names() {
        let rule = json!({"verbs": ["get", "update"], "apiGroups": ["example.crossplane.io"],
            "resources": ["widgets", "gadgets/status", "*/finalizers"]});
        assert!(rule_allows(&rule, &attrs("get", "widgets", "", "w")));
        assert!(!rule_allows(&rule, &attrs("delete", "widgets", "", "w")));
        assert!(!rule_allows(&rule, &attrs("get", "widgets", "status", "w")));
        assert!(rule_allows(
            &rule,
            &attrs("update", "gadgets", "status", "g")
        ));
        assert!(!rule_allows(&rule, &attrs("update", "gadgets", "", "g")));
        assert!(rule_allows(
            &rule,
            &attrs("update", "anything", "finalizers", "a")
        ));
        let mut other_group = attrs("get", "widgets", "", "w");
        other_group.group = "other.io".into();
        assert!(!rule_allows(&rule, &other_group));
        let any = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]});
        assert!(rule_allows(&any, &attrs("delete", "widgets", "status", "")));
        let named = json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["widgets"],
            "resourceNames": ["a"]});
        assert!(rule_allows(&named, &attrs("get", "widgets", "", "a")));
        assert!(!rule_allows(&named, &attrs("get", "widgets", "", "b")));
        assert!(!rule_allows(&named, &attrs("get", "widgets", "", "")));
        let no_resources = json!({"verbs": ["get"], "apiGroups": ["*"], "nonResourceURLs": ["/x"]});
        assert!(!rule_allows(
            &no_resources,
            &attrs("get", "widgets", "", "a")
        ));
    }
}
