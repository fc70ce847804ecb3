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
