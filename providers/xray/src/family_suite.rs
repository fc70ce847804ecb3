//! provider-xray's run of the generic family suite (`provider_family_suite`): every Kind's
//! example converges, stays quiet for two rounds, has a change made in Xray reverted and is
//! deleted (or, for configuration Xray cannot delete, forgotten).

use provider_family_suite::{self as suite, Suite};
use serde_json::{Value, json};

/// The change a person makes in Xray to each Kind's object (`None`: no update API).
fn drift(kind: &str) -> Option<(&'static str, Value)> {
    Some(match kind {
        "SecurityPolicy" | "LicensePolicy" | "OperationalRiskPolicy" | "Webhook" => {
            ("/description", json!("edited in the UI"))
        }
        "CurationPolicy" => ("/policy_action", json!("dry_run")),
        "CustomCurationCondition" => ("/param_values", json!("[]")),
        "CustomIssue" => ("/summary", json!("edited in the UI")),
        "Settings" => ("/allowBlockedArtifactsDownload", json!(true)),
        "WorkersCount" => ("/index/new_content", json!(9)),
        "RepositoryConfig" => ("/repo_config/retention_in_days", json!(7)),
        "BinaryManagerBuilds" => ("/indexed_builds", json!(["other-build"])),
        "BinaryManagerRepos" => ("/indexed_repos", json!([])),
        "BinaryManagerReleaseBundlesV2" => ("/indexed_release_bundle_v2", json!([])),
        "Watch" => ("/general_data/description", json!("edited in the UI")),
        // Ignore rules and reports cannot be changed; catalog labels are several objects
        // (labels, assignments), reverted in `e2e_tests` (the simulator counts each GraphQL
        // mutation as a write, `MUTATION customCatalogLabel.<field>`).
        _ => return None,
    })
}

/// Configuration Xray cannot delete (deleting the MR forgets it) and singletons (catalog
/// labels are deleted: each MR owns its labels).
fn deletes(kind: &str) -> bool {
    !matches!(
        kind,
        "Settings"
            | "WorkersCount"
            | "RepositoryConfig"
            | "BinaryManagerBuilds"
            | "BinaryManagerRepos"
            | "BinaryManagerReleaseBundlesV2"
    )
}

/// The repository the examples watch and configure (provider-artifactory's example).
fn seed(sim: &jfrog_sim::Simulator) {
    sim.put_repository_raw(
        crate::examples::REPOSITORY,
        json!({"key": crate::examples::REPOSITORY, "rclass": "local", "packageType": "generic"}),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_passes_the_suite() {
    let s = Suite {
        provider: crate::PROVIDER,
        drift,
        deletes,
        seed,
        read_calls: &["POST /catalog/api/v1/custom/graphql"],
        removes: suite::never_removes,
        delete_last: &[],
        resets: &[],
    };
    let mut kinds = Vec::new();
    for group in [
        crate::policy::kinds(),
        crate::configuration::kinds(),
        crate::report::kinds(),
        crate::watch::kinds(),
        crate::webhook::kinds(),
    ] {
        kinds.extend(group.iter().cloned());
    }
    let mut examples: Vec<(String, Value)> = crate::examples::declarations()
        .into_iter()
        .map(|d| (d.kind.to_string(), crate::examples::example(d, false)))
        .collect();
    for d in crate::examples::declarations()
        .into_iter()
        .filter(|d| crate::examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((d.kind.to_string(), crate::examples::example(d, true)));
    }
    suite::family_suite(&s, &kinds, examples, true).await;
}
