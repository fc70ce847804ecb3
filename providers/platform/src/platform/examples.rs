//! Example manifests for every Kind of provider-platform, generated from the declarations and
//! checked in under `examples/platform/<group>/` (a test fails when they are stale; run the
//! tests with `UPDATE_EXAMPLES=1` to rewrite them). They form one working set: a group with
//! a member, a permission on one of provider-artifactory's example repositories, an OIDC
//! provider with an identity mapping, a lifecycle promoting through the example stage, and
//! one of each setting. The SAML certificate and the Crowd password come from the Secret
//! in `authentication/example-secrets.yaml`. Legacy (cluster-scoped) examples sit in
//! `legacy/`.

use provider_family::KindDecl;
use provider_family::examples::{NAMESPACE, kebab, manifest, to_yaml};
use serde_json::{Value, json};

use super::tables::KINDS;

/// Kinds that get a legacy (cluster-scoped) example too (no singleton: one MR per setting).
pub const LEGACY_KINDS: &[&str] = &["GlobalRole", "SCIMUser"];

/// The Secret holding the examples' secret values.
pub const SECRET: &str = "example-platform-secrets";

/// The external name (metadata.name) of a Kind's example.
pub fn example_name(kind: &str, legacy: bool) -> String {
    match (kind, legacy) {
        ("LifecycleStage", false) => "qa".into(),
        (k, false) => format!("example-{}", kebab(k, "")),
        (k, true) => format!("legacy-{}", kebab(k, "")),
    }
}

fn secret_ref(key: &str, legacy: bool) -> Value {
    if legacy {
        json!({"name": SECRET, "namespace": NAMESPACE, "key": key})
    } else {
        json!({"name": SECRET, "key": key})
    }
}

/// `forProvider` of a Kind's example.
pub fn example_params(d: &KindDecl, legacy: bool) -> Value {
    let who = if legacy { "legacy" } else { "example" };
    match d.kind {
        "GlobalRole" => json!({
            "description": "managed by Crossplane",
            "type": "CUSTOM_GLOBAL",
            "environments": ["DEV"],
            "actions": ["READ_REPOSITORY", "READ_BUILD"],
        }),
        "Group" => json!({
            "description": "managed by Crossplane",
            "autoJoin": false,
            "adminPrivileges": false,
        }),
        "GroupMembers" => json!({"name": "example-group", "members": ["admin"]}),
        "Permission" => json!({
            "artifact": {
                "actions": {
                    "users": [{"name": "admin", "permissions": ["READ", "WRITE"]}],
                    "groups": [{"name": "example-group", "permissions": ["READ"]}],
                },
                "targets": [{"name": "example-local-generic", "includePatterns": ["**"]}],
            },
        }),
        "SCIMGroup" => json!({
            "displayName": "example-scim-group",
            "members": [{"value": "admin", "display": "admin"}],
        }),
        "SCIMUser" => json!({
            "username": format!("{who}-scim-user@example.com"),
            "active": true,
            "emails": [{"value": format!("{who}-scim-user@example.com"), "primary": true}],
        }),
        "AWSIAMRole" => json!({
            "username": "admin",
            "iamRole": "arn:aws:iam::123456789012:role/example",
        }),
        "CrowdSettings" => json!({
            "enable": false,
            "serverUrl": "https://crowd.example.com",
            "applicationName": "jfrog",
            "passwordSecretRef": secret_ref("crowd-password", legacy),
            "sessionValidationInterval": 5,
        }),
        "HTTPSSOSettings" => json!({"proxied": false, "remoteUserRequestVariable": "REMOTE_USER"}),
        "OIDCConfiguration" => json!({
            "description": "GitHub Actions",
            "issuerUrl": "https://token.actions.githubusercontent.com",
            "providerType": "GitHub",
            "organization": "example-org",
        }),
        "OIDCIdentityMapping" => json!({
            "providerName": "example-oidc-configuration",
            "priority": 1,
            "claimsJson": "{\"repository\": \"example-org/app\"}",
            "tokenSpec": {"scope": "applied-permissions/groups:example-group"},
        }),
        "SAMLSettings" => json!({
            "enable": true,
            "certificateSecretRef": secret_ref("saml-certificate", legacy),
            "loginUrl": "https://idp.example.com/login",
            "logoutUrl": "https://idp.example.com/logout",
            "serviceProviderName": "jfrog-example",
        }),
        "License" => json!({"key": "EXAMPLE-LICENCE-KEY", "name": "example"}),
        "ReverseProxy" => json!({
            "serverProvider": "NGINX",
            "publicServerName": "jfrog.example.com",
            "internalHostname": "artifactory.internal",
        }),
        "WorkersService" => json!({
            "key": "example-worker",
            "description": "managed by Crossplane",
            "enabled": false,
            "sourceCode": "export default async () => ({ status: 'DOWNLOAD_PROCEED' });",
            "action": "BEFORE_DOWNLOAD",
            "filterCriteria": {"artifactFilterCriteria": {"repoKeys": ["example-local-generic"]}},
        }),
        "Lifecycle" => json!({"promoteStages": ["qa"]}),
        "LifecycleStage" => json!({"category": "promote"}),
        other => unreachable!("no example for {other}"),
    }
}

/// The full manifest of a Kind's example.
pub fn example(d: &KindDecl, legacy: bool) -> Value {
    manifest(
        d,
        &example_name(d.kind, legacy),
        example_params(d, legacy),
        legacy,
    )
}

/// The Secret the examples' secret references read.
pub fn secret() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET, "namespace": NAMESPACE},
        "stringData": {
            "saml-certificate": "MIIBexampleCertificate",
            "crowd-password": "example-crowd-password",
        },
    })
}

/// Every example file: (path relative to `examples/platform/`, content).
pub fn example_files() -> Vec<(String, String)> {
    let mut out = provider_family::examples::files_by_group(KINDS, LEGACY_KINDS, example);
    out.push((
        "authentication/example-secrets.yaml".into(),
        to_yaml(&secret()),
    ));
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn examples_are_current() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/platform");
        let files = example_files();
        assert_eq!(files.len(), KINDS.len() + LEGACY_KINDS.len() + 1);
        let stale = provider_family::examples::check_files(&dir, &files);
        assert!(
            stale.is_empty(),
            "stale examples (run the tests with UPDATE_EXAMPLES=1): {stale:?}"
        );
    }
}
