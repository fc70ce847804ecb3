//! `export` against the simulator holding every listable Xray Kind twice (policies, curation
//! policies and conditions, ignore rules, watches, webhooks with passwords, keys that are not Kubernetes
//! names): every object is exported once under its Kind, one list request per list call,
//! adoption of each manifest changes nothing, no secret value is in any file, a second
//! export is byte-identical, and the Kinds without a list call are named in the summary.

use jfrog_client::JfrogClient;
use provider_family::export::{self, Options};
use serde_json::json;

fn secret(key: &str) -> String {
    format!("xray-seed-secret-{}-5b2e", key.to_ascii_lowercase())
}

async fn run(client: &JfrogClient, opts: &Options) -> export::Export {
    let kinds = crate::family_kinds();
    let resolved: Vec<_> = kinds.iter().map(|k| k.resolved().as_ref()).collect();
    export::export(&resolved, client, opts, &mut |_| {})
        .await
        .expect("export")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listable_xray_object_is_exported_once_and_adopted_without_a_change() {
    let sim = testkit::start_sim().await;
    assert!(sim.put_repository_raw(
        crate::examples::REPOSITORY,
        json!({"rclass": "local", "packageType": "generic"})
    ));
    let client = JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client");
    let seeded = crate::seed::seed(&client, 2, &secret).await.expect("seed");
    // A condition Xray ships with.
    assert!(sim.put_object(
        "xray_curation_conditions",
        "9001",
        json!({"id": 9001, "name": "CVE with high or critical severity", "condition_template_id": "CVECVSSRange", "is_custom": false})
    ));
    let lists: std::collections::BTreeSet<&str> = crate::family_kinds()
        .iter()
        .filter(|k| k.resolved().hooks.exportable(k.resolved()))
        .filter_map(|k| k.resolved().rest.list().map(|l| l.path))
        .collect();
    // Security, license, operational-risk and curation policies, curation conditions,
    // ignore rules, watches, webhooks; six list calls (the reports list is not read: reports
    // are not exported).
    assert_eq!(seeded.len(), 2 * 8, "{seeded:?}");
    assert_eq!(lists.len(), 6);

    sim.reset_counts();
    let ex = run(&client, &Options::default()).await;
    assert_eq!(ex.requests, lists.len() as u64);
    assert_eq!(
        sim.request_counts().values().sum::<u64>(),
        lists.len() as u64
    );
    assert!(ex.warnings.is_empty(), "{:#?}", ex.warnings);
    assert!(ex.skipped.is_empty(), "{:#?}", ex.skipped);
    assert!(
        ex.unlisted_kinds.contains(&"Settings")
            && ex.unlisted_kinds.contains(&"VulnerabilitiesReport")
            && !ex.unlisted_kinds.contains(&"IgnoreRule"),
        "{:?}",
        ex.unlisted_kinds
    );
    for s in &seeded {
        assert!(
            ex.objects
                .iter()
                .any(|o| o.kind == s.kind && o.key == s.key),
            "not exported: {s:?}"
        );
    }
    assert_eq!(ex.objects.len(), seeded.len());
    assert_eq!(ex.platform_owned.len(), 1, "{:?}", ex.platform_owned);
    assert_eq!(ex.platform_owned[0].key, "9001");
    // A webhook's password: Xray never shows it (not even as set), so the manifest cannot
    // tell one exists; the grep below shows it is not in any file.
    assert!(
        ex.secrets.iter().all(|s| !s.needed_for_adoption),
        "{:?}",
        ex.secrets
    );

    let problems =
        provider_family::seed::observe_exported(&crate::family_kinds(), &client, &ex.objects).await;
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(
        sim.request_counts().keys().all(|k| k.starts_with("GET")),
        "{:?}",
        sim.request_counts()
    );

    let files = ex.files("xray");
    for (path, content) in &files {
        assert!(
            !content.contains("xray-seed-secret-"),
            "{path} holds a secret"
        );
    }
    assert_eq!(run(&client, &Options::default()).await.files("xray"), files);
}
