//! The upstream validators refuse invalid manifests at admission, before any JFrog request
//! (each valid twin is admitted). Source: terraform-provider-platform (the data in
//! `catalog/validators/platform.json` names each resource file).

use serde_json::json;

use provider_family_suite::CrdSchemas;

#[test]
fn invalid_manifests_are_refused_at_admission() {
    let crds = CrdSchemas::new("platform", &crate::kinds());
    let members = json!([{"value": "admin", "display": "admin"}]);
    crds.refuse_cases(
        &crate::family_kinds(),
        &[
            // scim_group: at least one member.
            (
                "SCIMGroup",
                json!({"displayName": "devs", "members": members}),
                json!({"displayName": "devs", "members": []}),
                "members",
            ),
            // oidc_configuration: the issuer is an https URL; GitHub's is GitHub's.
            (
                "OIDCConfiguration",
                json!({"issuerUrl": "https://idp.example.com", "providerType": "generic"}),
                json!({"issuerUrl": "http://idp.example.com", "providerType": "generic"}),
                "issuerUrl",
            ),
            (
                "OIDCConfiguration",
                json!({"issuerUrl": "https://token.actions.githubusercontent.com", "providerType": "GitHub", "organization": "acme"}),
                json!({"issuerUrl": "https://idp.example.com", "providerType": "GitHub", "organization": "acme"}),
                "issuerUrl",
            ),
            // reverse_proxy: NGINX and Apache need the internal and public names.
            (
                "ReverseProxy",
                json!({"serverProvider": "NGINX", "publicServerName": "jfrog.example.com", "internalHostname": "artifactory.internal"}),
                json!({"serverProvider": "NGINX", "publicServerName": "jfrog.example.com"}),
                "internalHostname",
            ),
        ],
    );
}

/// Identifiers taken from the external name (which no CRD rule can read) are checked by the
/// provider before any JFrog request, with upstream's rule.
#[tokio::test]
async fn invalid_manifests_with_invalid_identifiers_are_refused_before_any_request() {
    let crds = CrdSchemas::new("platform", &crate::kinds());
    crds.refuse_identifiers(
        &crate::family_kinds(),
        &[
            (
                "OIDCConfiguration",
                "github-actions",
                "GitHub_Actions",
                "lowercase letters, digits and '-'",
            ),
            ("OIDCIdentityMapping", "ci-main", "ci main", "no spaces"),
            (
                "Permission",
                "deployers",
                &"p".repeat(256),
                "1 to 255 characters",
            ),
            ("Group", "readers", &"g".repeat(65), "1 to 64 characters"),
        ],
    )
    .await;
    // A project's lifecycle stage is named "<projectKey>-...".
    crds.refuse_identifiers_given(
        &crate::family_kinds(),
        &json!({"projectKey": "team-a"}),
        &[(
            "LifecycleStage",
            "team-a-qa",
            "qa",
            "must start with \"team-a-\"",
        )],
    )
    .await;
}
