//! Artifacts are checked by one AQL search per poll (issue 30): a file the search shows
//! unchanged since its last read keeps that read's answer; one it shows changed or does not
//! show is read by key, so a file re-deployed or deleted in JFrog is seen within a poll.
//! Item properties on the same platform have a search of their own (each Kind its own
//! snapshot of reads of many keys).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use jfrog_client::{Idempotency, Service};
use provider_family::ClientCache;
use serde_json::json;

use crate::family_suite::{converge, start};

const POLL: Duration = Duration::from_secs(2);
const SEARCH: &str = "POST /artifactory/api/search/aql";
const READ: &str = "GET /artifactory/api/storage/{*item}";
const DEPLOY: &str = "PUT /artifactory/{*item}";

/// One poll of every MR, a snapshot TTL after the last: the JFrog requests it sent.
async fn poll(
    env: &provider_family_suite::Env,
    label: &str,
) -> std::collections::BTreeMap<String, u64> {
    provider_family_suite::poll(env, POLL, label).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_are_checked_by_one_search_per_poll() {
    let kind = super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "Artifact")
        .cloned()
        .expect("declared");
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = start(super::kinds(), cache).await;
    // A file deleted seconds after its deploy is gone, not JFrog's read-after-write lag.
    env.ctx.creation_grace_period = Duration::ZERO;
    let repo = "files-local";
    assert!(env.sim.put_repository_raw(
        repo,
        json!({"key": repo, "rclass": "local", "packageType": "generic"}),
    ));
    let d = super::tables::KINDS
        .iter()
        .find(|d| d.kind == "Artifact")
        .expect("declared");
    let paths = ["/a/one.txt", "/a/b/two.txt", "/three.txt", "/c/four.bin"];
    for (i, path) in paths.iter().enumerate() {
        let content = base64::engine::general_purpose::STANDARD.encode(format!("file {i}\n"));
        let params = json!({"repository": repo, "path": path, "contentBase64": content});
        env.add(
            &kind,
            provider_family::examples::manifest(d, &format!("file-{i}"), params, false),
        )
        .await;
    }
    // Properties of one of the files: the item properties' own search, beside the files'.
    let props = super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "ItemProperties")
        .cloned()
        .expect("declared");
    let pd = super::tables::KINDS
        .iter()
        .find(|d| d.kind == "ItemProperties")
        .expect("declared");
    env.add(
        &props,
        provider_family::examples::manifest(
            pd,
            "file-props",
            json!({"repoKey": repo, "itemPath": "a/one.txt", "properties": {"stage": ["dev"]}}),
            false,
        ),
    )
    .await;
    converge(&env.mrs).await;
    // The first poll after the creates may still read a file by key (its last answer was
    // the deploy's); from then on one search answers for every file.
    poll(&env, "after the creates").await;
    for round in 0..2 {
        let counts = poll(&env, &format!("poll {round}")).await;
        // One search for the files, one for the properties.
        assert_eq!(counts.get(SEARCH), Some(&2), "{counts:?}");
        assert_eq!(counts.len(), 1, "nothing else: {counts:?}");
    }

    let client = jfrog_client::JfrogClient::builder(env.sim.url())
        .credentials(jfrog_client::Credentials::access_token(
            env.sim.admin_token(),
        ))
        .build()
        .expect("client");
    // Re-deployed with other content in JFrog: read by key, its checksum in the status.
    let changed = format!("{repo}/a/b/two.txt");
    client
        .request(
            Service::Artifactory,
            http::Method::PUT,
            "/{*item}",
            Idempotency::Idempotent,
        )
        .param(&changed)
        .bytes(b"other content".to_vec(), "application/octet-stream")
        .send_empty()
        .await
        .expect("re-deploy");
    let counts = poll(&env, "after the re-deploy").await;
    assert_eq!(counts.get(SEARCH), Some(&2), "{counts:?}");
    assert_eq!(counts.get(READ), Some(&1), "{counts:?}");
    let status = env.mrs[1].get().await.data["status"]["atProvider"].clone();
    let expected: String = {
        use sha2::Digest;
        sha2::Sha256::digest(b"other content")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    assert_eq!(status["checksumSha256"], json!(expected), "{status}");

    // Deleted in JFrog: the search does not show it, the read by key finds it gone, and it
    // is deployed again.
    let gone = format!("{repo}/three.txt");
    client
        .request(
            Service::Artifactory,
            http::Method::DELETE,
            "/{*item}",
            Idempotency::Idempotent,
        )
        .param(&gone)
        .send_empty()
        .await
        .expect("delete");
    let counts = poll(&env, "after the delete").await;
    assert_eq!(counts.get(SEARCH), Some(&2), "{counts:?}");
    assert_eq!(counts.get(DEPLOY), Some(&1), "{counts:?}");
    client
        .request(
            Service::Artifactory,
            http::Method::GET,
            "/api/storage/{*item}",
            Idempotency::Idempotent,
        )
        .param(&gone)
        .send_value()
        .await
        .expect("deployed again");
}
