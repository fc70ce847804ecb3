//! The Catalog's custom-label GraphQL API as JFrog's Terraform provider sends it (documents
//! with literal arguments) and as variables carry it: labels, package and version
//! assignments, the labels connections, the Catalog's limits and error texts.

use crate::common::{Api, start};
use reqwest::StatusCode;
use serde_json::{Value, json};

const GQL: &str = "/catalog/api/v1/custom/graphql";

async fn gql(api: &Api, query: &str) -> (StatusCode, Value) {
    let r = api.post(GQL, json!({ "query": query })).await;
    (
        r.status,
        serde_json::from_str(&r.text).unwrap_or(Value::Null),
    )
}

fn error(v: &Value) -> &str {
    v.pointer("/errors/0/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[tokio::test]
async fn labels_and_assignments_as_terraform_sends_them() {
    let sim = start().await;
    let api = Api::admin(&sim);
    let (s, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { createCustomCatalogLabel(label: {name: "approved", description: "ok"}) { name description } } }"#,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        v["data"]["customCatalogLabel"]["createCustomCatalogLabel"],
        json!({"name": "approved", "description": "ok"})
    );
    // Several at once; one existing refuses them all.
    let (s, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { createCustomCatalogLabels(labels: [{name: "a1", description: "x"}, {name: "approved", description: "y"}]) { name } } }"#,
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(error(&v), "Some of the labels already exist");
    assert!(
        sim.object("catalog_labels", "a1").is_none(),
        "nothing applied"
    );
    let (_, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { createCustomCatalogLabel(label: {name: "sixteen-chars-xx", description: "x"}) { name } } }"#,
    )
    .await;
    assert_eq!(error(&v), "Label name is too long");
    // getLabel: the label, or null.
    let (_, v) = gql(
        &api,
        r#"query { customCatalogLabel { getLabel(name: "approved") { name description } } }"#,
    )
    .await;
    assert_eq!(
        v["data"]["customCatalogLabel"]["getLabel"]["description"],
        "ok"
    );
    let (_, v) = gql(
        &api,
        r#"query { customCatalogLabel { getLabel(name: "nope") { name } } }"#,
    )
    .await;
    assert!(v["data"]["customCatalogLabel"]["getLabel"].is_null(), "{v}");
    // A package carries one label.
    let assign = r#"mutation { customCatalogLabel { assignCustomCatalogLabelsToPublicPackage(publicPackageLabels: {publicPackage: {name:"lodash", type:"npm"} labelNames:["approved"]}) } }"#;
    let (s, v) = gql(&api, assign).await;
    assert_eq!(
        (s, &v["data"]["customCatalogLabel"]),
        (
            StatusCode::OK,
            &json!({"assignCustomCatalogLabelsToPublicPackage": true})
        )
    );
    let (_, v) = gql(&api, assign).await;
    assert_eq!(
        error(&v),
        "A requested package already has a label assigned. More than one label per package is not supported yet"
    );
    let (_, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { assignCustomCatalogLabelsToPublicPackage(publicPackageLabels: {publicPackage: {name:"react", type:"npm"} labelNames:["approved", "a1"]}) } }"#,
    )
    .await;
    assert_eq!(error(&v), "Assigning more than 1 label is not supported");
    let (_, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { assignCustomCatalogLabelsToPublicPackage(publicPackageLabels: {publicPackage: {name:"react", type:"npm"} labelNames:["ghost"]}) } }"#,
    )
    .await;
    assert!(error(&v).contains("were not found"), "{v}");
    let (_, v) = gql(
        &api,
        r#"query { publicPackage { getPackage(name: "lodash" type: "npm") { name type customCatalogLabelsConnection(first: 100) { edges { node { name } } } } } }"#,
    )
    .await;
    assert_eq!(
        v["data"]["publicPackage"]["getPackage"],
        json!({"name": "lodash", "type": "npm", "customCatalogLabelsConnection": {"edges": [{"node": {"name": "approved"}}]}})
    );
    // Versions, in bulk (with variables) and one by one.
    let r = api
        .post(
            GQL,
            json!({
                "query": "mutation ($l: PublicPackageVersionsLabelInput!) { customCatalogLabel { assignCustomCatalogLabelToPublicPackageVersions(publicPackageVersionsLabel: $l) } }",
                "variables": {"l": {"labelName": "approved", "publicPackageVersions": [
                    {"publicPackage": {"name": "react", "type": "npm"}, "version": "18.2.0"},
                    {"publicPackage": {"name": "react", "type": "npm"}, "version": "18.3.0"}
                ]}}
            }),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let version = |v: &str| {
        format!(
            r#"query {{ publicPackageVersion {{ getVersion(name: "react", type: "npm", version: "{v}") {{ customCatalogLabelsConnection(first: 100) {{ edges {{ node {{ name }} }} }} }} }} }}"#
        )
    };
    let (_, v) = gql(&api, &version("18.3.0")).await;
    assert_eq!(
        v.pointer(
            "/data/publicPackageVersion/getVersion/customCatalogLabelsConnection/edges/0/node/name"
        ),
        Some(&json!("approved"))
    );
    let (s, _) = gql(
        &api,
        r#"mutation { customCatalogLabel { removeCustomCatalogLabelsFromPublicPackageVersion(publicPackageVersionLabels: { publicPackageVersion: { publicPackage: {name:"react", type:"npm"} version:"18.3.0" } labelNames:["approved"] }) } }"#,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (_, v) = gql(&api, &version("18.3.0")).await;
    assert_eq!(
        v.pointer("/data/publicPackageVersion/getVersion/customCatalogLabelsConnection/edges"),
        Some(&json!([]))
    );
    // Deleting a label removes its assignments; searchLabels lists what is left.
    let (s, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { deleteCustomCatalogLabel(label:{name:"approved"}) } }"#,
    )
    .await;
    assert_eq!(
        (s, &v["data"]),
        (
            StatusCode::OK,
            &json!({"customCatalogLabel": {"deleteCustomCatalogLabel": true}})
        )
    );
    assert!(
        sim.object("catalog_assignments", "package|npm|lodash")
            .is_none()
    );
    assert!(
        sim.object("catalog_assignments", "version|npm|react|18.2.0")
            .is_none()
    );
    let (_, v) = gql(
        &api,
        r#"query { customCatalogLabel { searchLabels { edges { node { name description } } } } }"#,
    )
    .await;
    assert_eq!(
        v["data"]["customCatalogLabel"]["searchLabels"]["edges"],
        json!([])
    );
    let (_, v) = gql(
        &api,
        r#"mutation { customCatalogLabel { deleteCustomCatalogLabels(labels:[{name:"x1"}, {name:"x2"}]) } }"#,
    )
    .await;
    assert!(error(&v).contains("were not found"), "{v}");
    assert_eq!(
        sim.request_count("MUTATION", "customCatalogLabel.deleteCustomCatalogLabels"),
        1
    );
}
