//! provider-platform's Kinds through the family suite (the same file as provider-project's
//! `suite`, compiled here through `#[path]`): every example, applied in reverse order (the
//! order must not matter), plus the legacy ones and the Secret the examples read.

use jfrog_client::Service;
use provider_family::Verb;
use serde_json::json;

use crate::platform::{examples, kinds, tables::KINDS};
use crate::suite::{self, Drift};

/// One member edited in JFrog per Kind where the API can change it; objects that can be
/// removed are removed for the others; the licence key is never read back.
fn edit(kind: &str) -> Drift {
    match kind {
        "GlobalRole" | "Group" | "OIDCConfiguration" | "WorkersService" => {
            Drift::Set("description", json!("edited in the UI"))
        }
        "SCIMUser" => Drift::Set("active", json!(false)),
        "AWSIAMRole" => Drift::Set("iam_role", json!("arn:aws:iam::123456789012:role/other")),
        "CrowdSettings" => Drift::Set("application_name", json!("other")),
        "HTTPSSOSettings" => Drift::Set("auto_create_user", json!(true)),
        "OIDCIdentityMapping" => Drift::Set("priority", json!(7)),
        "SAMLSettings" => Drift::Set("login_url", json!("https://other.example.com/login")),
        "ReverseProxy" => Drift::Set("httpPort", json!(8080)),
        "Lifecycle" => Drift::Set("promote_stages", json!([])),
        "LifecycleStage" => Drift::Set("category", json!("code")),
        "License" => Drift::Undetectable,
        _ => Drift::Remove,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_platform_kind_passes_the_suite() {
    let mut env = suite::start(crate::PROVIDER, kinds(), &[examples::secret()]).await;
    assert!(env.sim.put_repository_raw(
        "example-local-generic",
        json!({"key": "example-local-generic", "rclass": "local", "packageType": "generic"})
    ));
    for (i, d) in KINDS.iter().enumerate().rev() {
        env.add(&kinds()[i], examples::example(d, false)).await;
    }
    for (i, d) in KINDS.iter().enumerate() {
        if examples::LEGACY_KINDS.contains(&d.kind) {
            env.add(&kinds()[i], examples::example(d, true)).await;
        }
    }
    // The lifecycle is only forgotten: its stage is freed by hand before the stage goes.
    let resets = [(
        Service::Access,
        Verb::Patch,
        "/api/v2/lifecycle",
        json!({"promote_stages": []}),
    )];
    suite::run(
        &env,
        edit,
        &["LifecycleStage", "OIDCConfiguration", "Group"],
        &resets,
    )
    .await;
}

/// A second MR for a singleton is refused (Synced=False naming the first) without a write,
/// and takes over once the first is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_mr_for_a_singleton_is_refused_naming_the_first() {
    let (i, d) = KINDS
        .iter()
        .enumerate()
        .find(|(_, d)| d.kind == "CrowdSettings")
        .expect("declared");
    let kind = &kinds()[i];
    let mut env = suite::start(crate::PROVIDER, kinds(), &[examples::secret()]).await;
    env.add(kind, examples::example(d, false)).await;
    let mut second = examples::example(d, false);
    second["metadata"]["name"] = json!("second-crowd");
    second["spec"]["forProvider"]["applicationName"] = json!("other");
    env.add(kind, second).await;
    let (first, second) = (&env.mrs[0], &env.mrs[1]);
    while !first.ready_and_synced().await {
        first.reconcile().await;
    }
    env.sim.reset_counts();
    second.reconcile().await;
    let synced = testkit::condition(&second.get().await, "Synced").expect("Synced");
    assert_eq!(synced.0, "False");
    assert!(
        synced.2.contains("default/example-crowd-settings"),
        "{synced:?}"
    );
    assert_eq!(env.writes(), 0, "{:?}", env.sim.request_counts());

    first
        .api
        .delete(&first.name, &Default::default())
        .await
        .expect("delete");
    while first.api.get_opt(&first.name).await.expect("get").is_some() {
        first.reconcile().await;
    }
    for _ in 0..5 {
        if second.ready_and_synced().await {
            break;
        }
        second.reconcile().await;
    }
    assert!(second.ready_and_synced().await, "the second MR took over");
}
