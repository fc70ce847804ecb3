//! The server driven by `kubectl` (from PATH) as a user would: apply, get with printer columns,
//! wait, delete with finalizers, describe with events, validation failures, RBAC.

use crate::common::*;
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

    let out = k.ok(&["explain", "widget.spec.forProvider"]).await;
    assert!(
        out.contains("colour") && out.contains("enum: red, green, blue"),
        "{out}"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_checks_through_kubectl() {
    let server = server().await;
    let k = Kubectl::new(&server);
    k.ok(&["apply", "-f", fixture("widget-crd.yaml").to_str().unwrap()])
        .await;

    // A non-structural CRD is rejected with the reason a real server gives.
    let err = k
        .fails(&[
            "apply",
            "-f",
            fixture("nonstructural-crd.yaml").to_str().unwrap(),
        ])
        .await;
    assert!(
        err.contains("CustomResourceDefinition \"gadgets.example.crossplane.io\" is invalid"),
        "{err}"
    );
    assert!(
        err.contains("must not be empty for specified object fields"),
        "{err}"
    );
    let (ok, _, _) = k
        .run(&["get", "crd", "gadgets.example.crossplane.io"])
        .await;
    assert!(!ok, "rejected CRD must not exist");

    // Unknown fields: rejected by kubectl's default strict validation, pruned with --validate=false.
    let unknown = k.write("unknown.yaml", "apiVersion: example.crossplane.io/v1alpha1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  forProvider:\n    colour: red\n    foo: bar\n");
    let err = k.fails(&["apply", "-f", &unknown]).await;
    assert!(
        err.contains("strict decoding error: unknown field \"spec.forProvider.foo\""),
        "{err}"
    );
    assert!(err.contains("Error from server (BadRequest)"), "{err}");
    k.ok(&["apply", "--validate=false", "-f", &unknown]).await;
    let out = k
        .ok(&["get", "widget", "w2", "-o", "jsonpath={.spec.forProvider}"])
        .await;
    assert!(!out.contains("foo"), "unknown field pruned: {out}");
    // --validate=warn: accepted with a warning.
    let warn = k.write(
        "warn.yaml",
        &std::fs::read_to_string(&unknown)
            .unwrap()
            .replace("w2", "w2b"),
    );
    let (ok, _, err) = k.run(&["apply", "--validate=warn", "-f", &warn]).await;
    assert!(
        ok && err.contains("unknown field \"spec.forProvider.foo\""),
        "{err}"
    );

    // A CEL rule violated.
    let cel = k.write("cel.yaml", "apiVersion: example.crossplane.io/v1alpha1\nkind: Widget\nmetadata:\n  name: w3\nspec:\n  forProvider:\n    colour: red\n    size: 11\n");
    let err = k.fails(&["apply", "-f", &cel]).await;
    assert!(
        err.contains("The Widget \"w3\" is invalid") && err.contains("size must be at most 10"),
        "{err}"
    );

    // Enum, maxLength and required.
    let bad = k.write("bad.yaml", "apiVersion: example.crossplane.io/v1alpha1\nkind: Widget\nmetadata:\n  name: w4\nspec:\n  forProvider:\n    colour: purple\n    description: this is far longer than twenty bytes\n");
    let err = k.fails(&["apply", "-f", &bad]).await;
    assert!(
        err.contains("spec.forProvider.colour: Unsupported value: \"purple\""),
        "{err}"
    );
    assert!(
        err.contains("spec.forProvider.description: Too long"),
        "{err}"
    );
    let missing = k.write("missing.yaml", "apiVersion: example.crossplane.io/v1alpha1\nkind: Widget\nmetadata:\n  name: w5\nspec:\n  forProvider: {}\n");
    let err = k.fails(&["apply", "-f", &missing]).await;
    assert!(
        err.contains("spec.forProvider.colour: Required value"),
        "{err}"
    );

    // Dry run leaves nothing behind.
    let dry = k.write("dry.yaml", &WIDGET.replace("name: w1", "name: dry"));
    let out = k.ok(&["apply", "--dry-run=server", "-f", &dry]).await;
    assert!(out.contains("(server dry run)"), "{out}");
    let (ok, _, _) = k.run(&["get", "widget", "dry"]).await;
    assert!(!ok, "dry run created the object");

    // Deleting the CRD removes its resource.
    k.ok(&["delete", "crd", "widgets.example.crossplane.io"])
        .await;
    let err = k.fails(&["get", "widgets"]).await;
    assert!(
        err.contains("the server doesn't have a resource type \"widgets\"")
            || err.contains("the server could not find the requested resource"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_with_finalizer_waits_for_its_removal() {
    let server = server().await;
    let k = Kubectl::new(&server);
    k.ok(&["apply", "-f", fixture("widget-crd.yaml").to_str().unwrap()])
        .await;
    k.ok(&["apply", "-f", fixture("widget.yaml").to_str().unwrap()])
        .await;
    k.ok(&[
        "patch",
        "widget",
        "w1",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ])
    .await;
    let out = k.ok(&["delete", "widget", "w1", "--wait=false"]).await;
    assert!(out.contains("deleted"), "{out}");
    let ts = k
        .ok(&[
            "get",
            "widget",
            "w1",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ])
        .await;
    assert!(!ts.is_empty(), "deletionTimestamp set");
    // Adding finalizers to an object being deleted is forbidden.
    let err = k
        .fails(&[
            "patch",
            "widget",
            "w1",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}"#,
        ])
        .await;
    assert!(
        err.contains("no new finalizers can be added if the object is being deleted"),
        "{err}"
    );
    k.ok(&[
        "patch",
        "widget",
        "w1",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ])
    .await;
    let err = k.fails(&["get", "widget", "w1"]).await;
    assert!(
        err.contains("widgets.example.crossplane.io \"w1\" not found"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_lists_events_from_both_apis() {
    let server = server().await;
    let k = Kubectl::new(&server);
    k.ok(&["apply", "-f", fixture("widget-crd.yaml").to_str().unwrap()])
        .await;
    k.ok(&["apply", "-f", fixture("widget.yaml").to_str().unwrap()])
        .await;
    let uid = k
        .ok(&["get", "widget", "w1", "-o", "jsonpath={.metadata.uid}"])
        .await;
    let now = chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string();
    let ev = format!(
        "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: w1.new\n  namespace: default\neventTime: \"{now}\"\nreportingController: example.crossplane.io/widget\nreportingInstance: widget-controller-1\naction: Reconcile\nreason: CreatedExternalResource\nnote: Successfully requested creation of external resource\ntype: Normal\nregarding:\n  apiVersion: example.crossplane.io/v1alpha1\n  kind: Widget\n  name: w1\n  namespace: default\n  uid: {uid}\n"
    );
    k.ok(&["create", "-f", &k.write("ev.yaml", &ev)]).await;
    let legacy = format!(
        "apiVersion: v1\nkind: Event\nmetadata:\n  name: w1.old\n  namespace: default\ninvolvedObject:\n  apiVersion: example.crossplane.io/v1alpha1\n  kind: Widget\n  name: w1\n  namespace: default\n  uid: {uid}\nreason: CannotObserveExternalResource\nmessage: boom\ntype: Warning\ncount: 3\nfirstTimestamp: \"2024-01-01T00:00:00Z\"\nlastTimestamp: \"2024-01-01T00:00:00Z\"\nsource:\n  component: old-controller\n"
    );
    k.ok(&["create", "-f", &k.write("legacy.yaml", &legacy)])
        .await;
    // An event about another object must not show.
    let other = legacy
        .replace("name: w1.old", "name: other.ev")
        .replace("  name: w1\n", "  name: w9\n")
        .replace(&uid, "00000000-0000-0000-0000-000000000000");
    k.ok(&["create", "-f", &k.write("other.yaml", &other)])
        .await;

    let out = k.ok(&["describe", "widget", "w1"]).await;
    let events = out.split("Events:").nth(1).unwrap_or_default().to_string();
    assert!(
        events.contains("Normal")
            && events.contains("CreatedExternalResource")
            && events.contains("example.crossplane.io/widget")
            && events.contains("Successfully requested creation"),
        "{out}"
    );
    assert!(
        events.contains("Warning")
            && events.contains("CannotObserveExternalResource")
            && events.contains("(x3 over")
            && events.contains("old-controller"),
        "{out}"
    );
    assert!(
        !events.contains("w9") && events.matches("boom").count() == 1,
        "{out}"
    );

    let out = k.ok(&["get", "events"]).await;
    assert!(
        out.lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    assert!(out.contains("widget/w1"), "{out}");
    let out = k
        .ok(&[
            "get",
            "events.v1.events.k8s.io",
            "w1.old",
            "-o",
            "jsonpath={.note}/{.deprecatedCount}/{.regarding.name}",
        ])
        .await;
    assert_eq!(out, "boom/3/w1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_role_allows_only_what_it_grants() {
    let server = server().await;
    let admin_k = Kubectl::new(&server);
    admin_k
        .ok(&[
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=password=hunter2",
        ])
        .await;
    admin_k
        .ok(&["create", "configmap", "c1", "--from-literal=a=b"])
        .await;
    admin_k
        .ok(&[
            "create",
            "role",
            "secret-reader",
            "--verb=get,list",
            "--resource=secrets",
        ])
        .await;
    admin_k
        .ok(&[
            "create",
            "rolebinding",
            "u-reads",
            "--role=secret-reader",
            "--user=u",
        ])
        .await;
    let token = server.issue_token("u", &[]);
    let k = Kubectl::with_token(&server, &token);
    k.ok(&["get", "secrets"]).await;
    k.ok(&["get", "secret", "s1"]).await;
    let err = k.fails(&["get", "configmaps"]).await;
    assert!(err.contains("Error from server (Forbidden): configmaps is forbidden: User \"u\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""), "{err}");
    let err = k.fails(&["delete", "secret", "s1"]).await;
    assert!(err.contains("secrets \"s1\" is forbidden: User \"u\" cannot delete resource \"secrets\" in API group \"\" in the namespace \"default\""), "{err}");
    let err = k.fails(&["get", "secrets", "-n", "kube-system"]).await;
    assert!(err.contains("in the namespace \"kube-system\""), "{err}");
    let err = k
        .fails(&["get", "secrets", "--watch", "--request-timeout=5s"])
        .await;
    assert!(err.contains("cannot watch resource \"secrets\""), "{err}");
    let err = k
        .fails(&["create", "secret", "generic", "s2", "--from-literal=a=b"])
        .await;
    assert!(err.contains("cannot create resource \"secrets\""), "{err}");
    let err = k.fails(&["get", "namespaces"]).await;
    assert!(
        err.contains("cannot list resource \"namespaces\" in API group \"\" at the cluster scope"),
        "{err}"
    );
    assert_eq!(
        k.ok(&["auth", "can-i", "list", "secrets"]).await.trim(),
        "yes"
    );
    let (ok, out, _) = k.run(&["auth", "can-i", "list", "configmaps"]).await;
    assert!(!ok && out.trim() == "no", "{out}");
    let out = k.ok(&["auth", "can-i", "--list"]).await;
    assert!(
        out.lines()
            .any(|l| l.starts_with("secrets") && l.contains("[get list]")),
        "{out}"
    );
    let out = k
        .ok(&[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ])
        .await;
    assert_eq!(out, "u");

    // No token, or a wrong one: 401.
    let bad = Kubectl::with_token(&server, "not-a-token");
    let err = bad.fails(&["get", "secrets"]).await;
    assert!(
        err.contains("Unauthorized") || err.contains("provide credentials"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtins_through_kubectl_apply_and_strategic_patch() {
    let server = server().await;
    let k = Kubectl::new(&server);
    let v1 = k.write("s.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: crossplane-system\n  labels:\n    a: b\nstringData:\n  token: one\n  user: me\n");
    assert!(
        k.ok(&["apply", "-f", &v1])
            .await
            .contains("secret/creds created")
    );
    // Client-side apply of a built-in sends a strategic merge patch.
    let v2 = k.write("s2.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: crossplane-system\nstringData:\n  token: two\n");
    k.ok(&["apply", "-f", &v2]).await;
    let out = k
        .ok(&[
            "get",
            "secret",
            "creds",
            "-n",
            "crossplane-system",
            "-o",
            "jsonpath={.data.token}/{.metadata.labels}",
        ])
        .await;
    assert_eq!(out, "dHdv/", "token updated, label removed by apply: {out}");
    k.ok(&[
        "patch",
        "secret",
        "creds",
        "-n",
        "crossplane-system",
        "-p",
        r#"{"metadata":{"labels":{"x":"y"}}}"#,
    ])
    .await;
    let out = k.ok(&["get", "secrets", "-n", "crossplane-system"]).await;
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "TYPE", "DATA", "AGE"], "{out}");
    // Unknown fields of built-ins: strict by default.
    let bad = k.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\nbogus: 1\n",
    );
    let err = k.fails(&["apply", "-f", &bad]).await;
    assert!(
        err.contains("strict decoding error: unknown field \"bogus\""),
        "{err}"
    );
    let lease = k.write("lease.yaml", "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l\nspec:\n  holderIdentity: me\n  holderIdentty: typo\n");
    let err = k.fails(&["create", "-f", &lease]).await;
    assert!(
        err.contains("unknown field \"spec.holderIdentty\""),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deprecated_crd_versions_warn() {
    let server = server().await;
    let k = Kubectl::new(&server);
    let crd = WIDGET_CRD.replace(
        "    served: true\n",
        "    served: true\n    deprecated: true\n",
    );
    k.ok(&["apply", "-f", &k.write("crd.yaml", &crd)]).await;
    let (ok, _, err) = k.run(&["get", "widgets"]).await;
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: example.crossplane.io/v1alpha1 Widget is deprecated"),
        "{err}"
    );
}

/// kubectl needs `/openapi/v2` (protobuf) to report a misspelt Kind the usual way: its field
/// validation falls back to the v2 document when `/openapi/v3` does not know the Kind, and a 404
/// there made every such apply fail with "failed to download openapi".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misspelt_kind_is_reported_as_no_matches_for_kind() {
    let server = server().await;
    let k = Kubectl::new(&server);
    k.ok(&["apply", "-f", fixture("widget-crd.yaml").to_str().unwrap()])
        .await;
    // A Kind misspelt in a served group, and one in a group nothing serves.
    let cases = [
        ("example.crossplane.io/v1alpha1", "Widgt"),
        (
            "repository.artifactory.m.crossplane.io/v1alpha1",
            "LocalGenericRepositry",
        ),
    ];
    for (api_version, kind) in cases {
        let path = k.write(
            "x.yaml",
            &format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: x\nspec: {{}}\n"),
        );
        for extra in [&[][..], &["--server-side"][..]] {
            let mut args = vec!["apply", "-f", &path];
            args.extend_from_slice(extra);
            let err = k.fails(&args).await;
            let expected = format!(
                "error: resource mapping not found for name: \"x\" namespace: \"\" from \"{path}\": no matches for kind \"{kind}\" in version \"{api_version}\"\nensure CRDs are installed first"
            );
            assert!(err.contains(&expected), "{args:?}: {err}");
            assert!(!err.contains("failed to download openapi"), "{err}");
        }
    }

    // With /openapi/v2 served, the rest is as before: the right Kind applies client-side and
    // server-side, strict validation refuses an unknown field, diff and explain work.
    let out = k
        .ok(&["apply", "-f", fixture("widget.yaml").to_str().unwrap()])
        .await;
    assert!(
        out.contains("widget.example.crossplane.io/w1 created"),
        "{out}"
    );
    let w2 = WIDGET.replace("name: w1", "name: w2");
    let out = k
        .ok(&["apply", "--server-side", "-f", &k.write("w2.yaml", &w2)])
        .await;
    assert!(
        out.contains("widget.example.crossplane.io/w2 serverside-applied"),
        "{out}"
    );
    let unknown = k.write(
        "u.yaml",
        &WIDGET.replace("colour: red", "colour: red\n    foo: bar"),
    );
    let err = k
        .fails(&["apply", "--validate=strict", "-f", &unknown])
        .await;
    assert!(
        err.contains("strict decoding error: unknown field \"spec.forProvider.foo\""),
        "{err}"
    );
    let green = k.write("d.yaml", &w2.replace("colour: red", "colour: green"));
    let (ok, out, err) = k.run(&["diff", "--server-side", "-f", &green]).await;
    assert!(!ok && err.is_empty(), "diff exits 1 on a difference: {err}");
    assert!(
        out.contains("-    colour: red") && out.contains("+    colour: green"),
        "{out}"
    );
    let out = k.ok(&["explain", "widget.spec.forProvider"]).await;
    assert!(
        out.contains("colour") && out.contains("enum: red, green, blue"),
        "{out}"
    );
}

/// What kubectl reads from `/openapi/v2` itself: client-side validation of a `List`'s items
/// against the v2 definitions, and `kubectl explain --output=plaintext-openapiv2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_validates_lists_and_explains_from_openapi_v2() {
    let server = server().await;
    let k = Kubectl::new(&server);
    k.ok(&["apply", "-f", fixture("widget-crd.yaml").to_str().unwrap()])
        .await;
    let list = |name: &str, extra: &str| {
        format!(
            "apiVersion: v1\nkind: List\nitems:\n- {}",
            WIDGET
                .replace("name: w1", &format!("name: {name}"))
                .replace("colour: red", &format!("colour: red{extra}"))
                .trim_end()
                .replace('\n', "\n  ")
        )
    };
    let out = k
        .ok(&["apply", "-f", &k.write("list.yaml", &list("w3", ""))])
        .await;
    assert!(
        out.contains("widget.example.crossplane.io/w3 created"),
        "{out}"
    );
    let bad = k.write("bad.yaml", &list("w4", "\n    foo: bar"));
    let err = k.fails(&["apply", "-f", &bad]).await;
    assert!(
        err.contains(&format!("error validating \"{bad}\": error validating data: ValidationError(Widget.spec.forProvider): unknown field \"foo\" in io.crossplane.example.v1alpha1.Widget.spec.forProvider")),
        "{err}"
    );

    let out = k
        .ok(&[
            "explain",
            "--output=plaintext-openapiv2",
            "widget.spec.forProvider",
        ])
        .await;
    assert!(
        out.contains("colour\t<string> -required-") && out.contains("size\t<integer>"),
        "{out}"
    );
    // metadata is a reference to ObjectMeta, resolved.
    let out = k
        .ok(&[
            "explain",
            "--output=plaintext-openapiv2",
            "widget.metadata.ownerReferences",
        ])
        .await;
    assert!(
        out.contains("RESOURCE: ownerReferences <[]Object>")
            && out.contains("uid\t<string> -required-"),
        "{out}"
    );
}
