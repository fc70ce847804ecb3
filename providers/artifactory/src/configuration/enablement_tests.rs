//! Cleanup and archive policies: Artifactory creates them disabled and refuses a create with
//! `enabled: true` (JFrog's Terraform provider's `enabled` attribute, "must be created
//! inactive", `resource_artifactory_package_cleanup_policy.go`); `enabled` changes only
//! through `POST .../policies/{key}/enablement`. A policy declared enabled converges to
//! enabled through that call, and back.

use std::sync::Arc;

use provider_family::ClientCache;
use serde_json::json;

use super::*;
use crate::family_suite::{converge, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_declared_enabled_is_enabled_through_the_enablement_call() {
    let all = kinds();
    let mut env = start(all, Arc::new(ClientCache::new(crate::PROVIDER))).await;
    let mut added = Vec::new();
    for (kind, collection, path) in [
        (
            "PackageCleanupPolicy",
            "package_cleanup_policies",
            "/artifactory/api/cleanup/packages/policies/{key}/enablement",
        ),
        (
            "ArchivePolicy",
            "archive_policies",
            "/artifactory/api/archive/v2/packages/policies/{key}/enablement",
        ),
    ] {
        let d = tables::KINDS
            .iter()
            .find(|d| d.kind == kind)
            .expect("declared");
        let mut params = examples::example_params(d);
        params["enabled"] = json!(true);
        let name = format!("enabled-{}", kind.to_ascii_lowercase());
        let m = provider_family::examples::manifest(d, &name, params, false);
        env.add(provider_family_suite::kind_named(all, kind), m)
            .await;
        added.push((name, collection, path));
    }
    converge(&env.mrs).await;
    for (name, collection, path) in &added {
        let p = env.sim.object(collection, name).expect("created");
        assert_eq!(p["enabled"], true, "{name}: {p}");
        assert!(env.sim.request_count("POST", path) >= 1, "{path}");
    }
}
