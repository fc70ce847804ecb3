//! Every generated CRD of the four providers is structural and is accepted and Established
//! by the Kubernetes API test server (which checks structural schemas, CEL rules and
//! defaults as a real API server does).

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::PostParams;
use provider_runtime::crd::GeneratedCrd;
use provider_runtime::crd::schema::check_structural;

fn all_crds() -> Vec<GeneratedCrd> {
    let mut v = provider_artifactory::crds();
    v.extend(provider_xray::crds());
    v.extend(provider_project::crds());
    v.extend(provider_platform::crds());
    v
}

#[test]
fn generated_crds_are_structural() {
    for crd in all_crds() {
        let v = &crd.document["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        check_structural(v, &crd.name).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_generated_crd_is_established_by_the_api_server() {
    let server = testkit::start_kube_server().await;
    let client = testkit::client_for(&server, &server.admin_token()).await;
    let api: Api<CustomResourceDefinition> = Api::all(client);
    let crds = all_crds();
    for crd in &crds {
        let doc: CustomResourceDefinition =
            serde_json::from_value(crd.document.clone()).expect("CRD document");
        if let Err(e) = api.create(&PostParams::default(), &doc).await {
            panic!("{} rejected: {e}", crd.name);
        }
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    for crd in &crds {
        loop {
            let c = api.get(&crd.name).await.expect("get CRD");
            let established = c
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} not Established",
                crd.name
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    server.shutdown().await;
}
