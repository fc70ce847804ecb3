//! The server's use of the `crd-schema` entry points, seen from clients: unknown fields of CRDs
//! under each `fieldValidation`, CRD defaulting (`listKind`, `singular`, `storedVersions`),
//! `/status` writes judged by the status strategy, the scale subresource's paths, and metadata
//! errors that keep CEL rules from being evaluated, as upstream.

use crate::common::*;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

fn crd_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    )
}

fn crd_api(client: &Client) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &crd_resource())
}

fn dynamic(v: Value) -> DynamicObject {
    serde_json::from_value(v).expect("object")
}

/// Creates a CRD given as JSON and waits until its resource is served.
async fn create_crd(client: &Client, crd: Value, group: &str, version: &str, kind: &str) {
    let name = crd["metadata"]["name"].as_str().expect("name").to_string();
    let plural = crd["spec"]["names"]["plural"]
        .as_str()
        .expect("plural")
        .to_string();
    crd_api(client)
        .create(&PostParams::default(), &dynamic(crd))
        .await
        .unwrap_or_else(|e| panic!("CRD {name} created: {e}"));
    let api: Api<DynamicObject> =
        Api::all_with(client.clone(), &resource(group, version, kind, &plural));
    eventually("resource served", || {
        let api = api.clone();
        async move { api.list(&Default::default()).await.ok().map(|_| ()) }
    })
    .await;
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// The 422 message of a failed write.
fn invalid(r: Result<DynamicObject, kube::Error>) -> String {
    match r {
        Err(kube::Error::Api(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
            e.message
        }
        other => panic!("expected 422 Invalid, got {other:?}"),
    }
}

const TYPO_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: typos.example.com
spec:
  group: example.com
  names: {kind: Typo, plural: typos}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              x: {type: string, maxLenght: 3}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_unknown_fields_follow_field_validation() {
    let server = server().await;
    let k = Kubectl::new(&server);
    let file = k.write("typo-crd.yaml", TYPO_CRD);
    let path = "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.x.maxLenght";

    // kubectl's default is Strict: the typo is a 400 and nothing is created.
    let err = k.fails(&["apply", "-f", &file]).await;
    assert!(
        err.contains(&format!("strict decoding error: unknown field \"{path}\"")),
        "{err}"
    );
    let (found, _, _) = k.run(&["get", "crd", "typos.example.com"]).await;
    assert!(!found, "a rejected CRD must not be stored");

    // Warn: created, with the unknown field in a Warning.
    let (ok, out, err) = k
        .run(&["apply", "--validate=warn", "--dry-run=server", "-f", &file])
        .await;
    assert!(ok, "{out}{err}");
    assert!(err.contains(&format!("unknown field \"{path}\"")), "{err}");

    // Ignore: created with the unknown field pruned.
    let out = k.ok(&["apply", "--validate=false", "-f", &file]).await;
    assert!(out.contains("typos.example.com created"), "{out}");
    let client = admin(&server).await;
    let crd = crd_api(&client)
        .get("typos.example.com")
        .await
        .expect("CRD stored");
    let x = &crd.data["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["x"];
    assert_eq!(x, &json!({"type": "string"}), "pruned schema: {x}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_defaults_names_conversion_and_stored_versions() {
    let server = server().await;
    let client = admin(&server).await;
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    // No listKind, singular or conversion; a client-set status is not the client's to set.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
            "names": {"kind": "Gadget", "plural": "gadgets"},
            "versions": [version("v1", true)]},
        "status": {"storedVersions": ["v0"]},
    });
    create_crd(&client, crd, "example.com", "v1", "Gadget").await;
    let api = crd_api(&client);
    let got = api.get("gadgets.example.com").await.expect("CRD");
    assert_eq!(got.data["spec"]["names"]["listKind"], "GadgetList");
    assert_eq!(got.data["spec"]["names"]["singular"], "gadget");
    assert_eq!(got.data["spec"]["conversion"], json!({"strategy": "None"}));
    assert_eq!(got.data["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(
        got.data["status"]["acceptedNames"]["listKind"],
        "GadgetList"
    );

    // A new storage version is added to storedVersions; the old one stays.
    let patch = json!({"spec": {"versions": [version("v1", false), version("v2", true)]}});
    let got = api
        .patch(
            "gadgets.example.com",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .expect("new storage version");
    assert_eq!(got.data["status"]["storedVersions"], json!(["v1", "v2"]));
    assert_eq!(got.data["spec"]["names"]["listKind"], "GadgetList");

    // A list served under the defaulted listKind.
    let gadgets: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource("example.com", "v2", "Gadget", "gadgets"),
    );
    let list = gadgets.list(&Default::default()).await.expect("list");
    assert!(list.items.is_empty());
}

/// A CRD whose spec.x is later restricted, with a status schema and the scale subresource.
fn thing_crd(x_max_length: Option<i64>) -> Value {
    let mut x = json!({"type": "string"});
    if let Some(n) = x_max_length {
        x["maxLength"] = json!(n);
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "x": x, "y": {"type": "string"}, "replicas": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "count": {"type": "integer", "maximum": 10},
                        "replicas": {"type": "integer"}}}}}}}]},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_writes_are_judged_by_the_status_strategy() {
    let server = server().await;
    let client = admin(&server).await;
    create_crd(&client, thing_crd(None), "example.com", "v1", "Thing").await;
    let things: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &resource("example.com", "v1", "Thing", "things"),
    );
    let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t1"}, "spec": {"x": "longer", "replicas": 1}});
    things
        .create(&PostParams::default(), &dynamic(thing))
        .await
        .expect("created");

    // Tighten spec.x: the stored object no longer passes the spec schema.
    let crds = crd_api(&client);
    let mut crd = crds.get("things.example.com").await.expect("CRD");
    crd.data["spec"] = thing_crd(Some(3))["spec"].clone();
    crds.replace("things.example.com", &PostParams::default(), &crd)
        .await
        .expect("schema tightened");
    // The new schema applies at once: a spec write that changes x is judged by it.
    let msg = invalid(
        things
            .patch(
                "t1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"x": "longest"}})),
            )
            .await,
    );
    assert!(
        msg.contains("spec.x: Too long: may not be more than 3 bytes"),
        "{msg}"
    );

    // Status writes judge the status only: the invalid spec does not block them.
    let written = things
        .patch_status(
            "t1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"count": 5, "replicas": 1}})),
        )
        .await
        .expect("status write with a spec that fails the tightened schema");
    assert_eq!(written.data["status"]["count"], 5);
    // Spec writes that leave x alone are ratcheted too.
    things
        .patch(
            "t1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"y": "new"}})),
        )
        .await
        .expect("unchanged x is ratcheted");

    // A status that breaks the status schema is refused, with the status strategy's message.
    let msg = invalid(
        things
            .patch_status(
                "t1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"count": 11}})),
            )
            .await,
    );
    assert!(
        msg.contains(
            "status.count: Invalid value: 11: count in body should be less than or equal to 10"
        ),
        "{msg}"
    );
    assert!(!msg.contains("spec.x"), "spec is not judged: {msg}");

    // Scale paths: the status write checks statusReplicasPath, the spec write both.
    let msg = invalid(
        things
            .patch_status(
                "t1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"replicas": -2}})),
            )
            .await,
    );
    assert!(
        msg.contains(".status.replicas: Invalid value: -2: should be a non-negative integer"),
        "{msg}"
    );
    let msg = invalid(
        things
            .patch(
                "t1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": -1}})),
            )
            .await,
    );
    assert!(
        msg.contains(".spec.replicas: Invalid value: -1: should be a non-negative integer"),
        "{msg}"
    );
    let stored = things.get("t1").await.expect("t1");
    assert_eq!(stored.data["status"]["count"], 5);
    assert_eq!(stored.data["spec"]["replicas"], 1);
    assert_eq!(stored.name_any(), "t1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_errors_block_cel_rules_as_upstream() {
    let server = server().await;
    let client = admin(&server).await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "rules.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Rule", "plural": "rules"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "properties": {"x": {"type": "string"}},
                        "x-kubernetes-validations": [
                            {"rule": "self.x != 'bad'", "message": "x must not be bad"}]}}}}}]},
    });
    create_crd(&client, crd, "example.com", "v1", "Rule").await;
    let rules: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &resource("example.com", "v1", "Rule", "rules"),
    );
    let rule = |name: &str, meta: Value| {
        let mut v = json!({"apiVersion": "example.com/v1", "kind": "Rule",
            "metadata": meta, "spec": {"x": "bad"}});
        v["metadata"]["name"] = json!(name);
        dynamic(v)
    };
    let pp = PostParams::default();

    // Valid metadata: the CEL rule is evaluated.
    let msg = invalid(rules.create(&pp, &rule("r1", json!({}))).await);
    assert!(
        msg.contains("spec: Invalid value: \"object\": x must not be bad"),
        "{msg}"
    );
    assert!(
        !msg.contains("some validation rules were not checked"),
        "{msg}"
    );

    // An invalid label is not a blocking error: both are reported.
    let msg = invalid(
        rules
            .create(&pp, &rule("r2", json!({"labels": {"-bad-": "v"}})))
            .await,
    );
    assert!(
        msg.contains("metadata.labels: Invalid value: \"-bad-\""),
        "{msg}"
    );
    assert!(msg.contains("x must not be bad"), "{msg}");

    // Annotations over the size limit are Too long, which blocks CEL rules upstream.
    let big = "a".repeat(256 * 1024 + 1);
    let msg = invalid(
        rules
            .create(&pp, &rule("r3", json!({"annotations": {"big": big}})))
            .await,
    );
    // Upstream order: metadata errors, then the one error (on a nil path) for the rules.
    assert!(
        msg.starts_with("Rule.example.com \"r3\" is invalid: [metadata.annotations: Too long"),
        "{msg}"
    );
    assert!(
        msg.ends_with(", <nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"),
        "{msg}"
    );
    assert!(!msg.contains("x must not be bad"), "{msg}");
    assert!(
        rules.get_opt("r3").await.expect("get").is_none(),
        "nothing stored"
    );
}
