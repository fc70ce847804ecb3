//! End-to-end tests of the user, security and replication Kinds (issue 12) through
//! `sandbox up` and the real provider process.

use std::path::Path;
use std::time::Duration;

use e2e::{Sandbox, SandboxOptions, read_manifests, repo_root};
use serde_json::Value;

const CONVERGE: Duration = Duration::from_secs(240);

/// Every file under `dir`, as text (logs, kubeconfig, state).
fn all_files(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_files(&p, out);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push((
                p.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

fn decode(secret: &Value, key: &str) -> String {
    use base64::Engine;
    let b64 = secret["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in the connection Secret: {secret}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    String::from_utf8(bytes).expect("utf-8")
}

/// A ScopedToken's access and refresh tokens are in its connection Secret under the official
/// provider's keys, and nowhere else: not in any managed resource, event or Secret other than
/// the connection Secret, not in the simulator's stored objects, not in any log of the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_tokens_tokens_reach_the_connection_secret_and_nowhere_else() {
    let sb = Sandbox::start(SandboxOptions::new("scoped-token")).await;
    let manifest =
        read_manifests(&repo_root().join("examples/artifactory/security/scoped-token.yaml"))
            .pop()
            .expect("the ScopedToken example");
    sb.apply_ok(std::slice::from_ref(&manifest));
    let mr = sb.mr_of(&manifest);
    sb.wait_all_ready(std::slice::from_ref(&mr), CONVERGE).await;

    let name = manifest["spec"]["writeConnectionSecretToRef"]["name"]
        .as_str()
        .expect("writeConnectionSecretToRef");
    let secret: Value = serde_json::from_str(
        &sb.kubectl_ok(&["get", "secret", name, "-n", "default", "-o", "json"]),
    )
    .expect("secret json");
    let access = decode(&secret, "attribute.access_token");
    let refresh = decode(&secret, "attribute.refresh_token");
    assert!(access.len() > 20 && refresh.len() > 10);

    // Give the provider a few more reconciles (and logs) before looking.
    tokio::time::sleep(sb.poll * 2).await;
    sb.assert_running();
    let mut places: Vec<(String, String)> = Vec::new();
    for what in [
        vec![
            "get",
            "scopedtokens.security.artifactory.m.crossplane.io",
            "-A",
            "-o",
            "json",
        ],
        vec!["get", "events", "-A", "-o", "json"],
        vec!["get", "events.events.k8s.io", "-A", "-o", "json"],
        vec!["get", "configmaps", "-A", "-o", "json"],
    ] {
        places.push((what.join(" "), sb.kubectl_ok(&what)));
    }
    // Every Secret but the connection Secret.
    let secrets: Value =
        serde_json::from_str(&sb.kubectl_ok(&["get", "secrets", "-A", "-o", "json"]))
            .expect("secrets json");
    for s in secrets["items"].as_array().into_iter().flatten() {
        if s["metadata"]["name"] != name {
            places.push((format!("secret {}", s["metadata"]["name"]), s.to_string()));
        }
    }
    places.push((
        "simulator tokens".into(),
        format!("{:?}", sb.sim.rest_get("/access/api/v1/tokens").await),
    ));
    all_files(&sb.dir, &mut places);
    assert!(places.len() > 5, "{places:?}");
    for (place, text) in &places {
        for (what, value) in [("access token", &access), ("refresh token", &refresh)] {
            assert!(
                !text.contains(value.as_str()),
                "the {what} leaked into {place}"
            );
        }
    }
    // The MR says which token it is, without the token.
    let o = mr.try_get().await.expect("MR");
    assert!(
        o.data["status"]["atProvider"]["id"].is_string(),
        "{:?}",
        o.data
    );
}
