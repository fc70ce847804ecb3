//! The fault suite's credentials scenario (issue 17), through `sandbox up` and the real
//! provider-artifactory: the token Secret rotated (the new token is used at once: the old one
//! is revoked one poll later and nothing fails), the token revoked (every MR `Synced=False`
//! with a message naming the ProviderConfig and its Secret, never the token; recovery once the
//! Secret holds a valid token again), a wrong URL (a clear message naming it), and a JFrog
//! platform served over TLS: trusted through the ProviderConfig's `caBundleSecretRef`, refused
//! with a clear message when its CA is unknown. No token may reach any log, event or MR.
//!
//! Run: `cargo build -p sandbox && RELIABILITY_OUT=$PWD/target/reliability cargo test -p e2e
//! --test reliability_credentials -- --nocapture`.

use std::time::{Duration, Instant};

use base64::Engine;
use e2e::reliability::{Row, record};
use e2e::{Mr, Sandbox, SandboxOptions, writes};
use serde_json::{Value, json};

const NS: &str = "crossplane-system";
const SECRET: &str = "jfrog-credentials";

fn repo(name: &str, config: &str) -> Value {
    json!({
        "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1",
        "kind": "LocalGenericRepository",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "forProvider": {"description": "credentials"},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": config},
        },
    })
}

fn cluster_config(name: &str, url: &str, ca: Option<(&str, &str)>) -> Value {
    let mut spec = json!({
        "url": url,
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": SECRET, "namespace": NS, "key": "token"},
        },
    });
    if let Some((secret, key)) = ca {
        spec["caBundleSecretRef"] = json!({"name": secret, "namespace": NS, "key": key});
    }
    json!({
        "apiVersion": "artifactory.m.crossplane.io/v1beta1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": name},
        "spec": spec,
    })
}

/// Replaces the token in the credentials Secret (through a merge patch of `data`, so the
/// token is not in any applied manifest).
fn set_token(sb: &Sandbox, token: &str) {
    let b64 = base64::engine::general_purpose::STANDARD.encode(token);
    let patch = json!({"data": {"token": b64}}).to_string();
    sb.kubectl_ok(&[
        "patch", "secret", SECRET, "-n", NS, "--type", "merge", "-p", &patch,
    ]);
}

/// A TLS front of the simulator: accepts TLS on a loopback port with a certificate of a
/// fresh CA and forwards the bytes to the simulator. Returns the https URL and the CA (PEM).
async fn tls_front(sim_url: &str) -> (String, String) {
    let tls = kube_testserver::tls::generate_with_alpn(&[b"http/1.1"]).expect("TLS material");
    let upstream = sim_url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let acceptor = tls.acceptor.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let upstream = upstream.clone();
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to forward.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                if let Ok(mut up) = tokio::net::TcpStream::connect(&upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                }
            });
        }
    });
    (format!("https://127.0.0.1:{port}"), tls.ca_pem)
}

/// Waits until every MR's Synced condition has `status` and a message containing each of
/// `parts`; returns the first message seen, or the conditions when `timeout` passes.
async fn wait_synced(
    mrs: &[&Mr],
    status: &str,
    parts: &[&str],
    timeout: Duration,
) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut first = None;
        let mut bad = Vec::new();
        for mr in mrs {
            match mr.condition("Synced").await {
                Some((s, _, m)) if s == status && parts.iter().all(|p| m.contains(p)) => {
                    first.get_or_insert(m);
                }
                c => bad.push(format!("{}: {c:?}", mr.display())),
            }
        }
        if bad.is_empty() {
            return Ok(first.unwrap_or_default());
        }
        if Instant::now() > deadline {
            return Err(bad.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliability_credentials() {
    // Every wait below counts in polls (rotation, the two polls that must stay Synced, the
    // patience for a revocation or a recovery): a 2 s poll keeps them and shortens the run
    // (it is one of the quick scenarios of `cargo test --workspace`).
    let sb = Sandbox::start(SandboxOptions::new("credentials").poll(Duration::from_secs(2))).await;
    let env = std::fs::read_to_string(sb.dir.join("jfrog.env")).expect("jfrog.env");
    let first_token = testkit::env_value(&env, "JFROG_ACCESS_TOKEN");
    let patience = sb.poll * 6 + Duration::from_secs(30);
    let mut failures: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();

    let docs: Vec<Value> = (0..5)
        .map(|i| repo(&format!("cred-{i}"), "default"))
        .collect();
    let mrs: Vec<Mr> = docs.iter().map(|d| sb.mr_of(d)).collect();
    let all: Vec<&Mr> = mrs.iter().collect();
    sb.apply_ok(&docs);
    sb.wait_all_ready(&mrs, Duration::from_secs(180)).await;
    let repos_before = sb.sim.collection_counts().await["repositories"];
    sb.sim.reset_requests().await;
    let started = Instant::now();

    // 1. Rotation: the Secret gets a new token; one poll later the old one is revoked, and
    // the MRs stay Synced through two more polls while a change lands.
    let second_token = sb.sim.mint_token(true).await;
    set_token(&sb, &second_token);
    tokio::time::sleep(sb.poll + Duration::from_secs(2)).await;
    sb.sim.revoke_token(&first_token).await;
    let mut changed = docs[0].clone();
    changed["spec"]["forProvider"]["description"] = json!("credentials, rotated");
    sb.apply_ok(std::slice::from_ref(&changed));
    let rotated = e2e::wait_for(
        "the change made after the rotation to reach JFrog",
        patience,
        Duration::from_millis(300),
        || async {
            sb.sim
                .repository("cred-0")
                .await
                .filter(|r| r["description"] == "credentials, rotated")
        },
    )
    .await;
    assert_eq!(rotated["description"], "credentials, rotated");
    tokio::time::sleep(sb.poll * 2).await;
    match wait_synced(&all, "True", &[], Duration::from_secs(1)).await {
        Ok(_) => seen.push("rotation: the new token was used, none failed".into()),
        Err(e) => failures.push(format!("after the rotation: {e}")),
    }

    // 2. Revocation: the token in the Secret is revoked with no replacement.
    sb.sim.revoke_token(&second_token).await;
    match wait_synced(&all, "False", &["default", SECRET], patience).await {
        Ok(m) => seen.push(format!("revoked: {m}")),
        Err(e) => failures.push(format!(
            "after the revocation, expected Synced=False naming the ProviderConfig and the \
             Secret {SECRET}:\n{e}"
        )),
    }
    // Recovery without touching the MRs once the Secret holds a valid token.
    let third_token = sb.sim.mint_token(true).await;
    set_token(&sb, &third_token);
    let recovered = Instant::now();
    match wait_synced(&all, "True", &[], patience).await {
        Ok(_) => seen.push(format!(
            "recovered {:.1}s after a valid token was put in the Secret",
            recovered.elapsed().as_secs_f64()
        )),
        Err(e) => failures.push(format!("no recovery after a valid token: {e}")),
    }

    // 3. A wrong URL (nothing listens there).
    let port = testkit::free_port();
    let wrong = format!("http://127.0.0.1:{port}");
    sb.apply_ok(&[
        cluster_config("wrong-url", &wrong, None),
        repo("cred-wrong-url", "wrong-url"),
    ]);
    let wrong_mr = sb.mr(
        "repository.artifactory.m.crossplane.io/v1alpha1",
        "LocalGenericRepository",
        "cred-wrong-url",
        Some("default"),
    );
    match wait_synced(
        &[&wrong_mr],
        "False",
        &[&format!("127.0.0.1:{port}")],
        patience,
    )
    .await
    {
        Ok(m) => seen.push(format!("wrong URL: {m}")),
        Err(e) => failures.push(format!("wrong URL: expected Synced=False naming it: {e}")),
    }

    // 4. TLS: trusted with the CA bundle, refused without it.
    let (https, ca_pem) = tls_front(&sb.sim.url).await;
    let ca_secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "jfrog-ca", "namespace": NS},
        "stringData": {"ca.crt": ca_pem},
    });
    sb.apply_ok(&[
        ca_secret,
        cluster_config("tls-custom-ca", &https, Some(("jfrog-ca", "ca.crt"))),
        cluster_config("tls-unknown-ca", &https, None),
        repo("cred-tls", "tls-custom-ca"),
        repo("cred-tls-unknown", "tls-unknown-ca"),
    ]);
    let tls_mr = sb.mr(
        "repository.artifactory.m.crossplane.io/v1alpha1",
        "LocalGenericRepository",
        "cred-tls",
        Some("default"),
    );
    let unknown_mr = sb.mr(
        "repository.artifactory.m.crossplane.io/v1alpha1",
        "LocalGenericRepository",
        "cred-tls-unknown",
        Some("default"),
    );
    match wait_synced(&[&tls_mr], "True", &[], patience).await {
        Ok(_) if sb.sim.repository("cred-tls").await.is_some() => {
            seen.push("TLS with the custom CA: Ready".into())
        }
        Ok(_) => failures.push("TLS with the custom CA: Synced but not in JFrog".into()),
        Err(e) => failures.push(format!("TLS with the custom CA: {e}")),
    }
    match wait_synced(&[&unknown_mr], "False", &["certificate"], patience).await {
        Ok(m) => seen.push(format!("unknown CA: {m}")),
        Err(e) => failures.push(format!(
            "TLS with an unknown CA: expected Synced=False naming the certificate: {e}"
        )),
    }
    if sb.sim.repository("cred-tls-unknown").await.is_some() {
        failures.push("the MR behind an unknown CA was created in JFrog".into());
    }
    let converge_secs = started.elapsed().as_secs_f64();

    let counts = sb.sim.requests().await;
    let write_count: u64 = writes(&counts).values().sum();
    let repos_after = sb.sim.collection_counts().await["repositories"];
    // cred-wrong-url and cred-tls-unknown never reach JFrog; cred-tls does.
    let expected = repos_before + 1;
    let mut outputs_mrs = mrs;
    outputs_mrs.extend([wrong_mr, tls_mr, unknown_mr]);
    let secrets_found = sb
        .secrets_in_outputs(&outputs_mrs, &[&first_token, &second_token, &third_token])
        .await;
    for s in &seen {
        eprintln!("[credentials] {s}");
    }
    let pass = failures.is_empty() && secrets_found == 0 && repos_after == expected;
    record(&Row {
        id: "credentials".into(),
        scenario: "credentials: token rotated (old revoked one poll later), token revoked, wrong \
                   URL, TLS platform with a custom CA and with an unknown CA"
            .into(),
        size: "8 MRs, 4 ProviderConfigs, provider-artifactory".into(),
        faults: 4,
        converge_secs,
        expected_objects: expected,
        jfrog_objects: repos_after,
        duplicates: repos_after.saturating_sub(expected),
        missing: expected.saturating_sub(repos_after),
        writes: write_count,
        secrets_found,
        pass,
        result: if failures.is_empty() {
            "rotation used at once, revocation Synced=False naming the ProviderConfig and Secret, \
             recovery without a person, wrong URL and unknown CA refused with a clear message, \
             custom CA trusted"
                .into()
        } else {
            format!("{} expectation(s) failed", failures.len())
        },
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(secrets_found, 0, "a token reached an output");
    assert_eq!(repos_after, expected, "repositories in JFrog");
}
