//! The RBAC Crossplane v2's RBAC manager gives a provider, rendered from the packages as
//! written, so that the sandbox's RBAC judges them as a real cluster with Crossplane would
//! (docs/managed-reconciler.md §15.4).
//!
//! Crossplane v2 (its RBAC manager's provider roles controller) grants the service account of
//! a provider revision one ClusterRole, `crossplane:provider:<revision>:system`:
//!
//! - `get list watch update patch create` on every CRD (or ManagedResourceDefinition, active or
//!   not) the revision installs, each resource and its `/status`, one rule per API group, and
//!   `update` on `*/finalizers` of those groups; no `delete`;
//! - `*` on core and `coordination.k8s.io` `secrets`, `configmaps`, `events`, `leases`;
//! - with the `safe-start` capability, `get list watch` on `customresourcedefinitions`.
//!
//! A revision labelled `pkg.crossplane.io/provider-family` (copied from its package's
//! `metadata.labels`) is also granted the CRDs of every revision with the same label whose
//! package reference is in the same OCI registry and organisation (the first path segment of
//! the repository). That is how Crossplane v2 lets providers read each other's Kinds:
//! `spec.controller.permissionRequests` is gone since v2.0.0 and nothing reads it. Our four
//! packages form the family `provider-family-jfrog` (`package/<provider>/crossplane.yaml`),
//! installed from one organisation (`examples/install/provider-<provider>.yaml`), so the
//! cross-provider references resolve; a package installed from elsewhere is not a member and
//! its references are forbidden.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Context;
use serde_json::{Value, json};

use crate::Provider;

/// The package metadata label that makes a provider a member of a family.
pub const FAMILY_LABEL: &str = "pkg.crossplane.io/provider-family";

/// An installed package: which provider, the OCI reference it was installed from
/// (`pkg.crossplane.io/v1` Provider `spec.package`) and the labels of its meta Provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub provider: Provider,
    pub reference: String,
    pub labels: BTreeMap<String, String>,
}

impl Package {
    /// The package as this repository installs it: the labels of
    /// `<package_dir>/<provider>/crossplane.yaml` and the reference of
    /// `<install_dir>/provider-<provider>.yaml`, unless `reference` overrides it.
    pub fn read(
        package_dir: &Path,
        install_dir: &Path,
        provider: Provider,
        reference: Option<&str>,
    ) -> anyhow::Result<Package> {
        let meta = yaml_documents(&package_dir.join(provider.short()).join("crossplane.yaml"))?;
        let labels = meta
            .iter()
            .find(|d| d["kind"] == "Provider")
            .and_then(|d| d["metadata"]["labels"].as_object())
            .map(|l| {
                l.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let reference = match reference {
            Some(r) => r.to_string(),
            None => {
                let path = install_dir.join(format!("{}.yaml", provider.name()));
                yaml_documents(&path)?
                    .iter()
                    .find(|d| d["apiVersion"] == "pkg.crossplane.io/v1" && d["kind"] == "Provider")
                    .and_then(|d| d["spec"]["package"].as_str())
                    .map(str::to_string)
                    .with_context(|| format!("{}: no Provider with spec.package", path.display()))?
            }
        };
        Ok(Package {
            provider,
            reference,
            labels,
        })
    }

    fn family(&self) -> Option<&str> {
        self.labels
            .get(FAMILY_LABEL)
            .map(String::as_str)
            .filter(|f| !f.is_empty())
    }
}

fn yaml_documents(path: &Path) -> anyhow::Result<Vec<Value>> {
    use serde::Deserialize;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| {
            serde_yaml::Value::deserialize(d)
                .map_err(anyhow::Error::from)
                .and_then(|v| serde_json::to_value(v).map_err(anyhow::Error::from))
                .with_context(|| format!("parsing {}", path.display()))
        })
        .collect()
}

/// The registry and organisation of an OCI reference (`registry.example.com/jfrog/x:v1` gives
/// `("registry.example.com", "jfrog")`), as Crossplane compares them: the registry is the
/// first path component when it names a host (has a `.` or `:`, or is `localhost`), else
/// none; the organisation is the first component of the repository. None when the reference
/// cannot be parsed (Crossplane then treats two packages as of different organisations).
pub fn registry_and_org(reference: &str) -> Option<(String, String)> {
    let name = reference.split('@').next()?;
    // A tag follows the last ':' after the last '/'.
    let name = match (name.rfind(':'), name.rfind('/')) {
        (Some(c), Some(s)) if c > s => &name[..c],
        (Some(c), None) => &name[..c],
        _ => name,
    };
    let mut parts: Vec<&str> = name.split('/').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let first = parts[0];
    let registry = if parts.len() > 1
        && (first.contains('.') || first.contains(':') || first == "localhost")
    {
        parts.remove(0).to_string()
    } else {
        String::new()
    };
    let org = parts.first()?.to_string();
    Some((registry, org))
}

/// Whether two references are in different registries or organisations.
fn org_differs(a: &str, b: &str) -> bool {
    match (registry_and_org(a), registry_and_org(b)) {
        (Some(a), Some(b)) => a != b,
        _ => true,
    }
}

/// The resources Crossplane grants `member`'s revision: its own CRDs (`crds`, plurals by
/// group, per provider) and, when its package names a family, those of every other installed
/// package of that family in the same registry and organisation.
pub fn granted_resources(
    member: &Package,
    installed: &[Package],
    crds: &BTreeMap<Provider, BTreeMap<String, BTreeSet<String>>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = crds.get(&member.provider).cloned().unwrap_or_default();
    if let Some(family) = member.family() {
        for other in installed {
            if other.provider == member.provider
                || other.family() != Some(family)
                || org_differs(&member.reference, &other.reference)
            {
                continue;
            }
            for (group, plurals) in crds.get(&other.provider).into_iter().flatten() {
                out.entry(group.clone())
                    .or_default()
                    .extend(plurals.iter().cloned());
            }
        }
    }
    out
}

/// The rules of the system ClusterRole for these resources (plurals by group), in
/// Crossplane's order: resources sorted by plural then group, a rule per group in order of
/// first appearance, the finalizers rule, the core rule, and (safe-start) the CRD reads.
pub fn system_rules(resources: &BTreeMap<String, BTreeSet<String>>) -> Vec<Value> {
    let mut all: Vec<(&str, &str)> = resources
        .iter()
        .flat_map(|(g, ps)| ps.iter().map(move |p| (p.as_str(), g.as_str())))
        .collect();
    all.sort_by(|a, b| format!("{}{}", a.0, a.1).cmp(&format!("{}{}", b.0, b.1)));
    let mut groups: Vec<&str> = Vec::new();
    let mut by_group: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (plural, group) in all {
        if !by_group.contains_key(group) {
            groups.push(group);
        }
        by_group
            .entry(group)
            .or_default()
            .extend([plural.to_string(), format!("{plural}/status")]);
    }
    let system = ["get", "list", "watch", "update", "patch", "create"];
    let mut rules: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroups": [g], "resources": by_group[g], "verbs": system}))
        .collect();
    if !groups.is_empty() {
        rules
            .push(json!({"apiGroups": groups, "resources": ["*/finalizers"], "verbs": ["update"]}));
    }
    rules.push(json!({
        "apiGroups": ["", "coordination.k8s.io"],
        "resources": ["secrets", "configmaps", "events", "leases"],
        "verbs": ["*"],
    }));
    rules.push(json!({
        "apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
        "verbs": ["get", "list", "watch"],
    }));
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `rules` allow `verb` on `group`/`resource` (RBAC's matching, `*` included).
    fn allows(rules: &[Value], verb: &str, group: &str, resource: &str) -> bool {
        let has = |v: &Value, key: &str, want: &str| {
            v[key]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == want || x == "*"))
        };
        rules.iter().any(|r| {
            has(r, "verbs", verb) && has(r, "apiGroups", group) && has(r, "resources", resource)
        })
    }

    fn installed() -> Vec<Package> {
        let package = crate::up::repo_dir("package");
        let install = crate::up::repo_dir("examples").join("install");
        Provider::ALL
            .iter()
            .map(|&p| Package::read(&package, &install, p, None).expect("the package as written"))
            .collect()
    }

    fn crds() -> BTreeMap<Provider, BTreeMap<String, BTreeSet<String>>> {
        let crds = crate::setup::read_crds(&crate::up::repo_dir("crds")).expect("crds/");
        crate::setup::provider_resources(&crds)
    }

    #[test]
    fn references_are_parsed_as_crossplane_compares_them() {
        let r = |s: &str| registry_and_org(s).map(|(a, b)| format!("{a}|{b}"));
        assert_eq!(
            r("registry.example.com/jfrog/provider-xray:v0.1.0").as_deref(),
            Some("registry.example.com|jfrog")
        );
        assert_eq!(
            r("localhost:5000/jfrog/provider-xray@sha256:ab").as_deref(),
            Some("localhost:5000|jfrog")
        );
        assert_eq!(r("jfrog/provider-xray:v1").as_deref(), Some("|jfrog"));
        assert_eq!(r("provider-xray").as_deref(), Some("|provider-xray"));
        assert_eq!(r("a//b"), None);
        assert!(!org_differs(
            "xpkg.example/jfrog/provider-xray:v1",
            "xpkg.example/jfrog/provider-artifactory:v2"
        ));
        assert!(org_differs(
            "xpkg.example/acme/provider-xray:v1",
            "xpkg.example/jfrog/provider-artifactory:v1"
        ));
        assert!(org_differs(
            "other.example/jfrog/provider-xray:v1",
            "xpkg.example/jfrog/provider-artifactory:v1"
        ));
        assert!(org_differs("a//b", "a//b"));
    }

    /// Every read a provider's cross-provider references need is in the role Crossplane v2
    /// renders for the packages as written; what Crossplane never grants stays out.
    #[test]
    fn the_family_role_covers_every_cross_provider_reference() {
        let installed = installed();
        let crds = crds();
        for pkg in &installed {
            assert_eq!(
                pkg.family(),
                Some("provider-family-jfrog"),
                "{:?}",
                pkg.provider
            );
            let rules = system_rules(&granted_resources(pkg, &installed, &crds));
            let kinds = pkg.provider.kinds();
            let reads = provider_runtime::crd::references::cross_provider_reads(
                pkg.provider.short(),
                &kinds,
            );
            let mut checked = 0;
            for read in &reads {
                let group = read["apiGroups"][0].as_str().expect("a group");
                for plural in read["resources"].as_array().expect("resources") {
                    let plural = plural.as_str().expect("a plural");
                    for verb in ["get", "list", "watch"] {
                        assert!(
                            allows(&rules, verb, group, plural),
                            "{:?} may not {verb} {plural}.{group}",
                            pkg.provider
                        );
                    }
                    assert!(!allows(&rules, "delete", group, plural));
                    checked += 1;
                }
            }
            if pkg.provider != Provider::Artifactory {
                assert!(checked > 0, "{:?} refers to other providers", pkg.provider);
            }
            assert!(!allows(&rules, "get", "apps", "deployments"));
            assert!(!allows(
                &rules,
                "get",
                "rbac.authorization.k8s.io",
                "clusterroles"
            ));
            assert!(!allows(&rules, "list", "", "serviceaccounts"));
        }
    }

    /// A package of the family installed from another organisation (or registry), or one
    /// without the label, gets its own CRDs only: its references to the family are forbidden.
    #[test]
    fn a_package_outside_the_family_gets_only_its_own_kinds() {
        let crds = crds();
        let installed = installed();
        let xray = installed
            .iter()
            .find(|p| p.provider == Provider::Xray)
            .expect("xray");
        let own = crds[&Provider::Xray].clone();
        assert_eq!(granted_resources(xray, &[], &crds), own);
        assert_ne!(granted_resources(xray, &installed, &crds), own);
        for reference in [
            "registry.example.com/acme/provider-xray:v0.1.0",
            "other.example.com/jfrog/provider-xray:v0.1.0",
        ] {
            let moved = Package {
                reference: reference.to_string(),
                ..xray.clone()
            };
            assert_eq!(
                granted_resources(&moved, &installed, &crds),
                own,
                "{reference}"
            );
        }
        let unlabelled = Package {
            labels: BTreeMap::new(),
            ..xray.clone()
        };
        assert_eq!(granted_resources(&unlabelled, &installed, &crds), own);
        let rules = system_rules(&own);
        assert!(!allows(
            &rules,
            "get",
            "repository.artifactory.m.crossplane.io",
            "localgenericrepositories"
        ));
        assert!(allows(
            &rules,
            "update",
            "xray.m.crossplane.io",
            "clusterproviderconfigs"
        ));
        assert!(!allows(
            &rules,
            "delete",
            "xray.m.crossplane.io",
            "clusterproviderconfigs"
        ));
    }

    #[test]
    fn system_rules_follow_crossplanes_order() {
        let mut r = BTreeMap::new();
        r.insert("b.io".to_string(), BTreeSet::from(["zs".to_string()]));
        r.insert(
            "a.io".to_string(),
            BTreeSet::from(["ys".to_string(), "as".to_string()]),
        );
        let rules = system_rules(&r);
        assert_eq!(rules[0]["apiGroups"], json!(["a.io"]));
        assert_eq!(
            rules[0]["resources"],
            json!(["as", "as/status", "ys", "ys/status"])
        );
        assert_eq!(rules[1]["apiGroups"], json!(["b.io"]));
        assert_eq!(rules[2]["apiGroups"], json!(["a.io", "b.io"]));
        assert_eq!(rules[2]["resources"], json!(["*/finalizers"]));
        assert_eq!(rules.len(), 5);
    }

    #[test]
    fn rules_grant_no_delete_on_provider_groups() {
        let mut groups = BTreeMap::new();
        groups.insert(
            "artifactory.m.crossplane.io".to_string(),
            BTreeSet::from(["clusterproviderconfigs".to_string()]),
        );
        let rules = system_rules(&groups);
        let own = &rules[0];
        assert_eq!(own["apiGroups"], json!(["artifactory.m.crossplane.io"]));
        assert_eq!(
            own["resources"],
            json!(["clusterproviderconfigs", "clusterproviderconfigs/status"])
        );
        assert!(
            !own["verbs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v == "delete" || v == "*")
        );
        assert_eq!(rules[1]["resources"], json!(["*/finalizers"]));
        assert_eq!(rules[1]["verbs"], json!(["update"]));
        assert!(
            rules
                .iter()
                .all(|r| r["apiGroups"] != json!(["events.k8s.io"]))
        );
    }
}
