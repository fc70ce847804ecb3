//! The generic adapter against the JFrog simulator, on the small repository family of
//! `family.rs`: drift reverted and removed fields cleared, late initialisation of
//! server-defaulted fields only, write-only secrets compared by a salted hash (and the
//! legacy annotation name read and migrated), not found told apart from errors, JFrog's
//! message for a refused spec, observe-only, adoption of an existing object.

use jfrog_sim::Simulator;
use provider_family::adapter::{
    ClientCache, FamilyClient as RepositoryClient, FamilyKind as RepositoryKind, HASHES_ANNOTATION,
    LEGACY_HASHES_ANNOTATION,
};
use provider_family::schema::HASHES_FIELD;
use provider_runtime::managed::config::{Credentials, ResolvedConfig};
use provider_runtime::managed::external::ExternalClient;
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::family::{BY_KEY, PROVIDER, config, kind, mr, sim};

fn client(sim: &Simulator, cache: &ClientCache, kind: &RepositoryKind) -> RepositoryClient {
    RepositoryClient::new(
        cache.client(&config(sim)).expect("client builds"),
        kind.resolved().clone(),
    )
}

/// A remote Maven repository's parameters whose password comes from a Secret.
fn remote_with_password() -> Value {
    json!({
        "url": "https://repo1.maven.org/maven2",
        "username": "bot",
        "passwordSecretRef": {"name": "upstream", "key": "password"}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_reverted_and_removed_fields_are_cleared() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr(
        "drift-local",
        json!({"description": "kept", "propertySets": ["artifactory"], "xrayIndex": true}),
    );
    c.create(&mut m).await.expect("create");
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    // A change made directly in JFrog.
    let mut raw = sim.repository_raw("drift-local").expect("stored");
    raw["description"] = json!("changed by hand");
    assert!(sim.put_repository_raw("drift-local", raw));
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    assert!(o.diff.contains("description"), "{}", o.diff);
    c.update(&mut m).await.expect("update");
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
    assert_eq!(
        sim.repository("drift-local").expect("stored")["description"],
        "kept"
    );
    // The user removes fields: they are cleared/reset in JFrog.
    m.for_provider = json!({});
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    c.update(&mut m).await.expect("update");
    let stored = sim.repository("drift-local").expect("stored");
    assert_eq!(stored["description"], "");
    assert_eq!(stored["xrayIndex"], false);
    assert!(
        stored
            .get("propertySets")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    );
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_init_fills_server_defaults_only() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let local = kind("LocalMavenRepository");
    client(&sim, &cache, &local)
        .create(&mut mr("li-local", json!({})))
        .await
        .expect("create member");
    let k = kind("VirtualMavenRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("li-virtual", json!({"repositories": ["li-local"]}));
    c.create(&mut m).await.expect("create");
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
    let fp = m.for_provider.as_object().expect("object");
    for f in fp.keys() {
        assert!(
            [
                "repositories",
                "forceMavenAuthentication",
                "pomRepositoryReferencesCleanupPolicy",
                "projectEnvironments"
            ]
            .contains(&f.as_str())
                || k.resolved().field(f).is_none_or(|x| x.late_init),
            "late-initialised a non-server-defaulted field {f}"
        );
    }
    // Without the LateInitialize policy nothing changes.
    let mut m2 = mr("li-virtual", json!({"repositories": ["li-local"]}));
    m2.late_initialize = false;
    let o = c.observe(&mut m2).await.expect("observe");
    assert!(!o.resource_late_initialized);
    assert_eq!(m2.for_provider, json!({"repositories": ["li-local"]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_only_password_is_compared_by_hash() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("RemoteMavenRepository");
    let c = client(&sim, &cache, &k);
    let params = remote_with_password();
    let mut m = mr("secret-remote", params);
    m.secrets
        .insert("passwordSecretRef".into(), SecretString::from("s3cr3t-one"));
    c.create(&mut m).await.expect("create");
    assert!(m.annotations.contains_key(HASHES_ANNOTATION));
    assert!(!m.annotations[HASHES_ANNOTATION].contains("s3cr3t"));
    assert_eq!(
        sim.repository_raw("secret-remote").expect("stored")["password"],
        "s3cr3t-one"
    );
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
    // Nothing secret in status or Debug output.
    assert!(!m.at_provider.to_string().contains("s3cr3t"));
    assert!(!format!("{m:?}").contains("s3cr3t"));
    // The Secret changes: an update sends the new value, then it is up to date again.
    m.secrets
        .insert("passwordSecretRef".into(), SecretString::from("s3cr3t-two"));
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    assert!(o.diff.contains("password (write-only)"), "{}", o.diff);
    assert!(!o.diff.contains("s3cr3t"));
    c.update(&mut m).await.expect("update");
    assert_eq!(
        sim.repository_raw("secret-remote").expect("stored")["password"],
        "s3cr3t-two"
    );
    assert!(
        m.at_provider[HASHES_FIELD]["password"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:"))
    );
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
    // The ref is removed: the password is cleared.
    m.for_provider
        .as_object_mut()
        .expect("object")
        .remove("passwordSecretRef");
    m.secrets.clear();
    let o = c.observe(&mut m).await.expect("observe");
    assert!(!o.resource_up_to_date);
    c.update(&mut m).await.expect("update");
    assert!(
        sim.repository_raw("secret-remote")
            .expect("stored")
            .get("password")
            .is_none()
    );
    assert!(
        c.observe(&mut m)
            .await
            .expect("observe")
            .resource_up_to_date
    );
}

/// An MR created before the hashes annotation was renamed carries only the old name: its
/// hashes are still read (no spurious update), and its next create writes the new name only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_only_hashes_under_the_legacy_annotation_name_are_read_and_migrated() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("RemoteMavenRepository");
    let c = client(&sim, &cache, &k);
    let params = remote_with_password();
    // The MR as stored after its create (Create's status is not persisted), with these
    // annotations.
    let stored = |annotations: &[(&str, &str)]| {
        let mut m = mr("legacy-remote", params.clone());
        m.secrets
            .insert("passwordSecretRef".into(), SecretString::from("s3cr3t"));
        m.annotations = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        m
    };
    let mut created = stored(&[]);
    c.create(&mut created).await.expect("create");
    let hashes = created.annotations[HASHES_ANNOTATION].clone();
    assert!(!created.annotations.contains_key(LEGACY_HASHES_ANNOTATION));
    // Created before the rename: only the old name.
    let o = c
        .observe(&mut stored(&[(LEGACY_HASHES_ANNOTATION, &hashes)]))
        .await
        .expect("observe");
    assert!(o.resource_exists);
    assert!(o.resource_up_to_date, "{}", o.diff);
    // Without any recorded hash the password could not be compared: the test means it.
    let o = c.observe(&mut stored(&[])).await.expect("observe");
    assert!(!o.resource_up_to_date, "no hash recorded: {}", o.diff);
    // The next create (the repository deleted in JFrog) writes the new name only.
    let mut legacy = stored(&[(LEGACY_HASHES_ANNOTATION, &hashes)]);
    c.delete(&mut stored(&[])).await.expect("delete");
    c.create(&mut legacy).await.expect("create again");
    assert!(legacy.annotations.contains_key(HASHES_ANNOTATION));
    assert!(!legacy.annotations.contains_key(LEGACY_HASHES_ANNOTATION));
    let o = c.observe(&mut legacy).await.expect("observe");
    assert!(o.resource_up_to_date, "{}", o.diff);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_distinguishes_not_found_from_errors_and_delete_is_idempotent() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("LocalNPMRepository");
    let c = client(&sim, &cache, &k);
    let mut m = mr("gone-npm", json!({}));
    assert!(!c.observe(&mut m).await.expect("observe").resource_exists);
    c.create(&mut m).await.expect("create");
    assert!(c.observe(&mut m).await.expect("observe").resource_exists);
    c.delete(&mut m).await.expect("delete");
    c.delete(&mut m).await.expect("second delete is success");
    assert!(!c.observe(&mut m).await.expect("observe").resource_exists);
    // Another Kind under an existing key is an error, not "absent".
    let mut other = mr("clash", json!({}));
    client(&sim, &cache, &kind("LocalGenericRepository"))
        .create(&mut other)
        .await
        .expect("create generic");
    let err = c
        .observe(&mut mr("clash", json!({})))
        .await
        .expect_err("class clash");
    assert!(err.to_string().contains("generic"), "{err}");
    // Bad credentials are an error, never "not found".
    let bad = ResolvedConfig {
        credentials: Credentials::Token(SecretString::from("wrong")),
        ..config(&sim)
    };
    let bc = RepositoryClient::new(cache.client(&bad).expect("client"), k.resolved().clone());
    assert!(bc.observe(&mut mr("gone-npm", json!({}))).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spec_jfrog_rejects_reports_jfrogs_message() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("VirtualGenericRepository");
    let c = client(&sim, &cache, &k);
    let err = c
        .create(&mut mr(
            "bad-virtual",
            json!({"repositories": ["does-not-exist"]}),
        ))
        .await
        .expect_err("rejected");
    assert!(err.to_string().contains("does-not-exist"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_only_reports_up_to_date_and_fills_status() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("LocalGenericRepository");
    let c = client(&sim, &cache, &k);
    c.create(&mut mr("observed", json!({"description": "d"})))
        .await
        .expect("create");
    let mut m = mr("observed", json!({}));
    m.observe_only = true;
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_exists && o.resource_up_to_date);
    assert_eq!(m.at_provider["description"], "d");
    assert_eq!(m.for_provider, json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_repository_is_adopted_not_recreated() {
    let sim = sim().await;
    let cache = ClientCache::new(PROVIDER);
    let k = kind("LocalGenericRepository");
    assert!(sim.put_repository_raw(
        "adopted",
        json!({"key": "adopted", "rclass": "local", "packageType": "generic", "description": "made by hand", "includesPattern": "**/*", "repoLayoutRef": "simple-default"})
    ));
    let c = client(&sim, &cache, &k);
    let mut m = mr("adopted", json!({"description": "made by hand"}));
    let o = c.observe(&mut m).await.expect("observe");
    assert!(o.resource_exists);
    assert_eq!(m.at_provider["description"], "made by hand");
    assert_eq!(sim.request_count("PUT", BY_KEY), 0);
}
