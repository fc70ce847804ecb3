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
