//! The server driven by `kubectl` (from PATH) as a user would: apply, get with printer columns,
//! wait, delete with finalizers, describe with events, validation failures, RBAC.

mod common;

use common::*;
use kube::api::{Api, DynamicObject, Patch, PatchParams};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_crd_and_custom_resource_then_get_columns() {
    let server = server().await;
    let k = Kubectl::new(&server);
    let out = k
        .ok(&["apply", "-f", fixture("widget-crd.yaml").to_str().unwrap()])
        .await;
    assert!(
        out.contains(
            "customresourcedefinition.apiextensions.k8s.io/widgets.example.crossplane.io created"
        ),
        "{out}"
    );
    let out = k
        .ok(&["apply", "-f", fixture("widget.yaml").to_str().unwrap()])
        .await;
    assert!(
        out.contains("widget.example.crossplane.io/w1 created"),
        "{out}"
    );
    // Re-applying unchanged is a no-op; changing is a (merge) patch.
    let out = k
        .ok(&["apply", "-f", fixture("widget.yaml").to_str().unwrap()])
        .await;
    assert!(out.contains("w1 unchanged"), "{out}");

    // The controller's view: conditions set through the status subresource.
    let client = admin(&server).await;
    let api = widgets(&client, "default");
    let status = serde_json::json!({"status": {"conditions": [
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        {"type": "Ready", "status": "False", "reason": "Creating", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    ]}});
    api.patch_status("w1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status patched");

    let out = k.ok(&["get", "widgets"]).await;
    let mut lines = out.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "SYNCED", "READY", "EXTERNAL-NAME", "AGE"],
        "{out}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(&row[..4], ["w1", "True", "False", "ext-w1"], "{out}");
    assert!(
        row[4].ends_with('s') || row[4].ends_with('m'),
        "AGE column: {out}"
    );

    // By category and short forms, as kubectl users do.
    let out = k.ok(&["get", "managed", "-o", "name"]).await;
    assert!(out.contains("widget.example.crossplane.io/w1"), "{out}");

    // kubectl wait returns when the condition flips.
    let wait = {
        let dir = k.dir.clone();
        let kc = dir.join("kubeconfig");
        tokio::spawn(async move {
            tokio::process::Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&kc)
                .arg("--cache-dir")
                .arg(dir.join("cache-wait"))
                .args([
                    "wait",
                    "--for=condition=Ready",
                    "widget/w1",
                    "--timeout=60s",
                ])
                .output()
                .await
                .expect("kubectl runs")
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let ready = serde_json::json!({"status": {"conditions": [
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    ]}});
    api.patch_status("w1", &PatchParams::default(), &Patch::Merge(&ready))
        .await
        .expect("status patched");
    let out = wait.await.expect("wait finished");
    assert!(
        out.status.success(),
        "kubectl wait: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("condition met"));

    let out = k
        .ok(&[
            "get",
            "widget",
            "w1",
            "-o",
            "jsonpath={.spec.forProvider.mode}",
        ])
        .await;
    assert_eq!(out, "fast", "schema default applied");
    let _: Api<DynamicObject> = api;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_with_kubectl() {
    let server = server().await;
    let k = Kubectl::new(&server);
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        fixture("widget-crd.yaml").to_str().unwrap(),
    ])
    .await;
    let out = k
        .ok(&[
            "apply",
            "--server-side",
            "-f",
            fixture("widget.yaml").to_str().unwrap(),
        ])
        .await;
    assert!(out.contains("serverside-applied"), "{out}");
    let changed = k.write("w.yaml", &WIDGET.replace("colour: red", "colour: green"));
    // Another manager owning the field conflicts unless forced.
    let err = k
        .fails(&[
            "apply",
            "--server-side",
            "--field-manager",
            "other",
            "-f",
            &changed,
        ])
        .await;
    assert!(
        err.contains("conflict") && err.contains(".spec.forProvider.colour"),
        "{err}"
    );
    k.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "other",
        "--force-conflicts",
        "-f",
        &changed,
    ])
    .await;
    let out = k
        .ok(&[
            "get",
            "widget",
            "w1",
            "-o",
            "jsonpath={.spec.forProvider.colour}",
        ])
        .await;
    assert_eq!(out, "green");
    let out = k
        .ok(&[
            "get",
            "widget",
            "w1",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
            "--show-managed-fields",
        ])
        .await;
    assert!(out.contains("kubectl") && out.contains("other"), "{out}");
}
