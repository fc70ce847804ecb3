//! provider-platform's run of the generic family suite (`provider_family::suite`): every
//! example, applied in reverse order (the order must not matter), plus the legacy ones and
//! the Secret the examples read.

use std::sync::Arc;

use jfrog_client::Service;
use provider_family::suite::{self, Env, Suite};
use provider_family::{ClientCache, Verb};
use serde_json::{Value, json};

use crate::platform::{examples, kinds, tables::KINDS};

/// One member edited in JFrog per Kind where the API can change it.
fn drift(kind: &str) -> Option<(&'static str, Value)> {
    Some(match kind {
        "GlobalRole" | "Group" | "OIDCConfiguration" | "WorkersService" => {
            ("/description", json!("edited in the UI"))
        }
        "SCIMUser" => ("/active", json!(false)),
        "AWSIAMRole" => ("/iam_role", json!("arn:aws:iam::123456789012:role/other")),
        "CrowdSettings" => ("/application_name", json!("other")),
        "HTTPSSOSettings" => ("/auto_create_user", json!(true)),
        "OIDCIdentityMapping" => ("/priority", json!(7)),
        "SAMLSettings" => ("/login_url", json!("https://other.example.com/login")),
        "ReverseProxy" => ("/httpPort", json!(8080)),
        "Lifecycle" => ("/promote_stages", json!([])),
        "LifecycleStage" => ("/category", json!("code")),
        _ => return None,
    })
}

/// Objects that can be removed are removed for the others; the licence key is never read
/// back (a drift JFrog does not show).
fn removes(kind: &str) -> bool {
    kind != "License" && drift(kind).is_none()
}

/// The repository the examples refer to (provider-artifactory's example).
fn seed(sim: &jfrog_sim::Simulator) {
    assert!(sim.put_repository_raw(
        "example-local-generic",
        json!({"key": "example-local-generic", "rclass": "local", "packageType": "generic"})
    ));
}

/// Both servers with provider-platform's CRDs, the Secret the examples read and the
/// repository they refer to.
async fn start() -> Env {
    let env = suite::start(
        crate::PROVIDER,
        kinds(),
        Arc::new(ClientCache::new(crate::PROVIDER)),
    )
    .await;
    env.create_objects(&[examples::secret()]).await;
    seed(&env.sim);
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_platform_kind_passes_the_suite() {
    let s = Suite {
        provider: crate::PROVIDER,
        drift,
        deletes: suite::always_deletes,
        seed,
        read_calls: &[],
        removes,
        delete_last: &["LifecycleStage", "OIDCConfiguration", "Group"],
        // The lifecycle is only forgotten: its stage is freed by hand before the stage goes.
        resets: &[(
            Service::Access,
            Verb::Patch,
            "/api/v2/lifecycle",
            r#"{"promote_stages": []}"#,
        )],
    };
    let mut examples: Vec<(String, Value)> = KINDS
        .iter()
        .rev()
        .map(|d| (d.kind.to_string(), examples::example(d, false)))
        .collect();
    for d in KINDS
        .iter()
        .filter(|d| examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((d.kind.to_string(), examples::example(d, true)));
    }
    suite::run(&s, start().await, kinds(), examples).await;
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
    let mut env = start().await;
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
    assert_eq!(
        suite::writes(&env.sim, &[]),
        0,
        "{:?}",
        env.sim.request_counts()
    );

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
