//! Example manifests for every user, security and replication Kind, checked in under
//! `examples/artifactory/{user,security,replication}/` (a test fails when they are stale;
//! run the tests with `UPDATE_EXAMPLES=1` to rewrite them), with the Secret their
//! references read (`examples/artifactory/security/example-secrets.yaml`). The replication
//! examples replicate the repository examples (`example-local-generic`, ...). Legacy
//! cluster-scoped examples of two Kinds sit in `legacy/`.

use provider_family::KindDecl;
use provider_family::examples::{NAMESPACE, kebab, manifest, to_yaml};
use serde_json::{Value, json};

use super::tables::KINDS;

/// Kinds that get a legacy (cluster-scoped) example too.
pub const LEGACY_KINDS: &[&str] = &["Group", "GlobalEnvironment"];

/// The Secret every example's references read.
pub const SECRET: &str = "example-access-secrets";

/// The repositories the replication examples replicate (from the repository examples), by
/// Kind: (repository key, rclass, packageType).
pub const REPLICATED: &[(&str, &str, &str, &str)] = &[
    (
        "LocalRepositorySingleReplication",
        "example-local-generic",
        "local",
        "generic",
    ),
    (
        "LocalRepositoryMultiReplication",
        "example-local-maven",
        "local",
        "maven",
    ),
    ("PushReplication", "example-local-npm", "local", "npm"),
    (
        "RemoteRepositoryReplication",
        "example-remote-generic",
        "remote",
        "generic",
    ),
    ("PullReplication", "example-remote-maven", "remote", "maven"),
];

/// A test certificate and key (self-signed, example only).
pub const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIBtTCCAVugAwIBAgIUb30rZDKfgB+VZkRtD/N+NXvHfvYwCgYIKoZIzj0EAwIw\nLzEbMBkGA1UEAwwSY3Jvc3NwbGFuZS5leGFtcGxlMRAwDgYDVQQKDAdFeGFtcGxl\nMCAXDTI2MTIwNjA4NTM0N1oYDzIxMjYxMTEyMDg1MzQ3WjAvMRswGQYDVQQDDBJj\ncm9zc3BsYW5lLmV4YW1wbGUxEDAOBgNVBAoMB0V4YW1wbGUwWTATBgcqhkjOPQIB\nBggqhkjOPQMBBwNCAATXMdvS5LbMHlO3uh89Hkdpavc3D+knTuNC/bopYFsfYTz0\n2/X4fk0ifDGiGtf/DeXlTWZ/+81zMov+W1hvavYKo1MwUTAdBgNVHQ4EFgQU3K3j\nqbexfp+SCq+adZIoP/LdSN4wHwYDVR0jBBgwFoAU3K3jqbexfp+SCq+adZIoP/Ld\nSN4wDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiA7l/aHvZsVxJx7\nx2RnIfdaOYzQC1oeJUQFG8IbjQRZiwIhAMtHHPMGwxZJ+aJwWeVt3tpwDiNiYaJY\nWPigzKH6di/J\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgshLyh+yVB/wVlQKO\nsu+GDwgaKQPsbTAO1kRopDPPf8uhRANCAATXMdvS5LbMHlO3uh89Hkdpavc3D+kn\nTuNC/bopYFsfYTz02/X4fk0ifDGiGtf/DeXlTWZ/+81zMov+W1hvavYK\n-----END PRIVATE KEY-----\n";
/// A public key (example only).
pub const PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEExamplePublicKeyForCrossplaneOnly\n-----END PUBLIC KEY-----\n";
/// A private key (example only).
pub const PRIVATE_KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAExamplePrivateKeyForCrossplaneOnly\n-----END RSA PRIVATE KEY-----\n";

/// The Secret's keys and values.
pub fn secret_data() -> Value {
    json!({
        "password": "Example-Passw0rd!",
        "certificate.pem": PEM,
        "private-key": PRIVATE_KEY,
        "passphrase": "example-passphrase",
        "role-id": "example-role-id",
        "secret-id": "example-secret-id",
        "replication-password": "Replicat0r-Passw0rd!",
    })
}

/// The Secret manifest.
pub fn secret_manifest() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET, "namespace": NAMESPACE},
        "stringData": secret_data(),
    })
}

fn secret(key: &str) -> Value {
    json!({"name": SECRET, "namespace": NAMESPACE, "key": key})
}

/// The JFrog name (metadata.name) of a Kind's example.
///
/// The namespaced Group is `example-artifactory-group`: provider-platform's example Group is
/// `example-group`, and two MRs with different settings for one JFrog group would revert
/// each other at every poll.
pub fn example_name(kind: &str, legacy: bool) -> String {
    let k = kebab(kind, "");
    match (kind, legacy) {
        (_, true) => format!("legacy-{k}"),
        ("Group", false) => "example-artifactory-group".into(),
        _ => format!("example-{k}"),
    }
}

/// The connection Secret of a Kind's example (tokens, API keys).
pub fn connection_secret(kind: &str, legacy: bool) -> String {
    format!("{}-connection", example_name(kind, legacy))
}

/// The repository a replication Kind's example replicates.
pub fn replicated_repo(kind: &str) -> Option<&'static str> {
    REPLICATED
        .iter()
        .find(|(k, ..)| *k == kind)
        .map(|(_, key, ..)| *key)
}

/// `forProvider` of a Kind's example.
pub fn example_params(d: &KindDecl) -> Value {
    let target = |n: u32| {
        json!({
            "url": format!("https://replica{n}.example.com/artifactory/libs"),
            "username": "replicator",
            "passwordSecretRef": secret("replication-password"),
        })
    };
    let cron = "0 0 2 * * ?";
    let repo = replicated_repo(d.kind).unwrap_or_default();
    match d.kind {
        "User" | "ManagedUser" => json!({
            "email": format!("{}@example.com", kebab(d.kind, "")),
            "passwordSecretRef": secret("password"),
        }),
        "UnmanagedUser" => json!({
            "email": "unmanaged-user@example.com",
            "internalPasswordDisabled": true,
        }),
        "AnonymousUser" => json!({}),
        "APIKey" => json!({}),
        "Certificate" => json!({"contentSecretRef": secret("certificate.pem")}),
        "DistributionPublicKey" => json!({"publicKey": PUBLIC_KEY}),
        "GlobalEnvironment" => json!({}),
        "Group" => json!({"description": "Group managed by Crossplane"}),
        "Keypair" => json!({
            "pairType": "RSA",
            "alias": "example-keypair-alias",
            "privateKeySecretRef": secret("private-key"),
            "passphraseSecretRef": secret("passphrase"),
            "publicKey": PUBLIC_KEY,
        }),
        "PasswordExpirationPolicy" => json!({
            "name": "password-expiration",
            "enabled": true,
            "passwordMaxAge": 60,
            "notifyByEmail": false,
        }),
        "UserLockPolicy" => json!({
            "name": "user-lock",
            "enabled": true,
            "loginAttempts": 5,
        }),
        "PermissionTarget" => json!({
            "repo": [{
                "repositories": ["ANY LOCAL"],
                "includesPattern": ["**"],
                "actions": [{"users": [{"name": "anonymous", "permissions": ["read"]}]}],
            }],
            "build": [{
                "repositories": ["artifactory-build-info"],
                "actions": [{"users": [{"name": "anonymous", "permissions": ["read"]}]}],
            }],
        }),
        "ScopedToken" => json!({
            "description": "Token managed by Crossplane",
            "scopes": ["applied-permissions/user"],
            "refreshable": true,
        }),
        "VaultConfiguration" => json!({
            "config": {
                "url": "https://vault.example.com",
                "auth": {
                    "type": "AppRole",
                    "roleIdSecretRef": secret("role-id"),
                    "secretIdSecretRef": secret("secret-id"),
                },
                "mounts": [{"path": "secret", "type": "KV2"}],
            },
        }),
        "LocalRepositorySingleReplication" => {
            let mut t = target(1);
            t["repoKey"] = json!(repo);
            t["cronExp"] = json!(cron);
            t
        }
        "LocalRepositoryMultiReplication" => json!({
            "repoKey": repo,
            "cronExp": cron,
            "replication": [target(1), target(2)],
        }),
        "PushReplication" => json!({
            "repoKey": repo,
            "cronExp": cron,
            "replications": [target(3)],
        }),
        "RemoteRepositoryReplication" | "PullReplication" => json!({
            "repoKey": repo,
            "cronExp": cron,
        }),
        other => panic!("no example for {other}"),
    }
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl, legacy: bool) -> Value {
    let mut m = manifest(d, &example_name(d.kind, legacy), example_params(d), legacy);
    if matches!(d.kind, "ScopedToken" | "APIKey") {
        // The generated token or key: in this Secret only.
        let mut to = json!({"name": connection_secret(d.kind, legacy)});
        if legacy {
            to["namespace"] = json!(NAMESPACE);
        }
        m["spec"]["writeConnectionSecretToRef"] = to;
    }
    if d.kind == "AnonymousUser" {
        // JFrog cannot create it: observe the existing one.
        m["metadata"]["annotations"] = json!({"crossplane.io/external-name": "anonymous"});
        m["spec"]["managementPolicies"] = json!(["Observe"]);
    }
    m
}

/// Every example file: (path relative to `examples/artifactory/`, content).
pub fn files() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = KINDS
        .iter()
        .map(|d| {
            (
                format!("{}/{}.yaml", d.group, kebab(d.kind, "")),
                to_yaml(&example(d, false)),
            )
        })
        .collect();
    for d in KINDS.iter().filter(|d| LEGACY_KINDS.contains(&d.kind)) {
        out.push((
            format!("{}/legacy/{}.yaml", d.group, kebab(d.kind, "")),
            to_yaml(&example(d, true)),
        ));
    }
    out.push((
        "security/example-secrets.yaml".to_string(),
        to_yaml(&secret_manifest()),
    ));
    out
}

/// The change made "in JFrog" to test that drift is reverted, by Kind (a pointer into the
/// object as the Kind's REST binding reads it, and the new value); `None` where nothing can
/// change in place (every parameter immutable or write-only) or nothing is managed.
pub fn drift(kind: &str) -> Option<(&'static str, Value)> {
    Some(match kind {
        "User" | "ManagedUser" | "UnmanagedUser" => ("/email", json!("edited@example.com")),
        "Group" => ("/description", json!("edited in the UI")),
        "PasswordExpirationPolicy" => ("/passwordMaxAge", json!(30)),
        "UserLockPolicy" => ("/loginAttempts", json!(9)),
        "PermissionTarget" => ("/repo/include-patterns", json!(["edited/**"])),
        "VaultConfiguration" => ("/config/url", json!("https://edited.example.com")),
        k if replicated_repo(k).is_some() => ("/cronExp", json!("0 0 5 * * ?")),
        _ => return None,
    })
}

/// The Artifactory version the family's tests run the simulator as: one with the Access
/// user API and API keys (7.84.3 <= v < 7.98.0).
pub const TEST_VERSION: &str = "7.90.1";

/// What the family suite needs besides the examples: the Secret, the replicated
/// repositories, an Artifactory version that still has API keys, the drift per Kind.
#[cfg(test)]
pub(crate) fn suite() -> crate::family_suite::FamilyNeeds {
    crate::family_suite::FamilyNeeds {
        sim: jfrog_sim::SimConfig {
            artifactory_version: TEST_VERSION.into(),
            ..jfrog_sim::SimConfig::default()
        },
        objects: vec![secret_manifest()],
        repositories: REPLICATED
            .iter()
            .map(|(_, key, class, ty)| {
                (
                    (*key).to_string(),
                    json!({"key": key, "rclass": class, "packageType": ty,
                           "url": if *class == "remote" { "https://repo.example.com/" } else { "" }}),
                )
            })
            .collect(),
        drift,
    }
}

/// Every example of the family (namespaced, then legacy), as the suite takes them.
pub fn all_examples() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = KINDS
        .iter()
        .map(|d| (d.kind.to_string(), example(d, false)))
        .collect();
    for d in KINDS.iter().filter(|d| LEGACY_KINDS.contains(&d.kind)) {
        out.push((d.kind.to_string(), example(d, true)));
    }
    out
}
