//! An artifact deployed from a file on the provider's filesystem (upstream's `file_path`):
//! the bytes of the file are deployed, a path that cannot be read is a clear error before
//! any deploy, and both forms at once are refused.

use std::sync::Arc;

use provider_family::ClientCache;
use serde_json::json;

use super::examples::EXAMPLE_REPOSITORY;
use crate::family_suite::{assert_no_writes, converge, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_artifact_is_deployed_from_a_file_on_the_providers_filesystem() {
    let k = super::kinds()
        .iter()
        .find(|k| k.resolved().decl.kind == "Artifact")
        .cloned()
        .expect("declared");
    let d = super::tables::KINDS
        .iter()
        .find(|d| d.kind == "Artifact")
        .expect("declared");
    let mut env = start(super::kinds(), Arc::new(ClientCache::new(crate::PROVIDER))).await;
    assert!(env.sim.put_repository_raw(
        EXAMPLE_REPOSITORY,
        json!({"key": EXAMPLE_REPOSITORY, "rclass": "local", "packageType": "generic"}),
    ));
    let dir = std::env::temp_dir().join(format!("artifact-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("app.tar.gz");
    std::fs::write(&file, b"bytes from a mounted volume").expect("write");
    let manifest = |name: &str, params: serde_json::Value| {
        provider_family::examples::manifest(d, name, params, false)
    };
    env.add(
        &k,
        manifest(
            "from-file",
            json!({"repository": EXAMPLE_REPOSITORY, "path": "/apps/app.tar.gz", "filePath": file.to_str().expect("utf-8")}),
        ),
    )
    .await;
    converge(&env.mrs).await;
    let mr = env.mrs[0].get().await;
    // JFrog's checksum of what was deployed: the file's bytes.
    let expected = {
        use sha2::Digest;
        format!("{:x}", sha2::Sha256::digest(b"bytes from a mounted volume"))
    };
    assert_eq!(
        mr.data["status"]["atProvider"]["checksumSha256"],
        json!(expected)
    );
    assert_no_writes(&env.sim, &env.mrs, 2).await;

    let missing = dir.join("not-mounted.bin");
    env.add(
        &k,
        manifest(
            "not-mounted",
            json!({"repository": EXAMPLE_REPOSITORY, "path": "/apps/other.bin", "filePath": missing.to_str().expect("utf-8")}),
        ),
    )
    .await;
    env.sim.reset_counts();
    env.mrs[1].reconcile().await;
    let o = env.mrs[1].get().await;
    let (status, _, message) = testkit::condition(&o, "Synced").expect("Synced");
    assert_eq!(status, "False");
    assert!(
        message.contains("not-mounted.bin") && message.contains("DeploymentRuntimeConfig"),
        "{message}"
    );
    assert_eq!(
        provider_family_suite::writes(&env.sim, &[]),
        0,
        "nothing deployed: {:?}",
        env.sim.request_counts()
    );
    std::fs::remove_dir_all(&dir).ok();
}
