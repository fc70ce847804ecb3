//! The configuration Kinds compose, their CRDs pass the API server's rules and accept the
//! examples.

use std::sync::Arc;

use provider_family::ClientCache;

use super::*;

#[test]
fn all_20_kinds_compose() {
    assert_eq!(tables::KINDS.len(), 20);
    for d in tables::KINDS {
        d.resolve().expect("composes");
    }
    assert_eq!(kinds().len(), 20);
}

#[test]
fn crds_accept_the_examples() {
    let regs = registrations(Arc::new(ClientCache::new(crate::PROVIDER)));
    let crds = provider_runtime::crd::provider_crds_for("artifactory", &regs);
    for d in tables::KINDS {
        for legacy in [false, true] {
            let group = if legacy {
                format!("{}.artifactory.crossplane.io", d.group)
            } else {
                format!("{}.artifactory.m.crossplane.io", d.group)
            };
            let plural = provider_runtime::managed::kind::pluralize(d.kind);
            let crd = crds
                .iter()
                .find(|c| c.name == format!("{plural}.{group}"))
                .unwrap_or_else(|| panic!("no CRD for {} in {group}", d.kind));
            let mut doc = crd.document.clone();
            crd_schema::default_crd(&mut doc);
            let errs = crd_schema::validate_crd(&doc, None);
            assert!(errs.is_empty(), "{}: {errs:?}", crd.name);
            let schema = crd_schema::Schema::compile(
                &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            )
            .unwrap_or_else(|e| panic!("{}: {e:?}", crd.name));
            let mut ex = provider_family::examples::manifest(
                d,
                &examples::example_key(d.kind),
                examples::example_params(d),
                legacy,
            );
            let pruned = schema.prune(&mut ex);
            assert!(pruned.is_empty(), "{}: pruned {pruned:?}", d.kind);
            let errs = schema.validate(&ex, None);
            assert!(errs.is_empty(), "{}: {errs:?}", d.kind);
        }
    }
}

/// A project's release bundle or promotion carries its project in the address's query
/// (canonically `<name>:<version>?project=<key>`), which every call sends; other objects
/// and the platform's bundles are addressed by their key alone.
#[test]
fn a_projects_bundle_is_addressed_with_its_project() {
    // The hooks each Kind's table line binds.
    let address = |name: &str, key: &str, params: &serde_json::Value| {
        provider_family_suite::address(tables::KINDS, name, key, params)
    };
    let team = serde_json::json!({"projectKey": "team"});
    let bundle = address("ReleaseBundleV2", "rb:1.0", &team);
    assert_eq!(bundle.key(), "rb:1.0");
    assert_eq!(
        bundle.query(),
        [("project".to_string(), "team".to_string())]
    );
    assert_eq!(bundle.to_string(), "rb:1.0?project=team");
    let promotion = address("ReleaseBundleV2Promotion", "rb:1.0:PROD", &team);
    assert_eq!(promotion.to_string(), "rb:1.0:PROD?project=team");
    let platforms = address("ReleaseBundleV2", "rb:1.0", &serde_json::json!({}));
    assert_eq!(platforms, provider_family::Address::new("rb:1.0"));
    assert_eq!(platforms.to_string(), "rb:1.0");
}
