//! End-to-end test of cross-resource references (issue 25), driving the four real providers
//! through `sandbox up`: a virtual repository that selects its local and remote repositories
//! by label and names its key pair by `Ref`, an Xray watch over a repository with a policy, a
//! project membership of a provider-artifactory user (its project by `Ref`), a platform group
//! whose members are provider-artifactory users (by `Refs`), and an OIDC identity mapping of
//! its configuration, all in one `kubectl apply`. The manifests are the generated examples with
//! the referenced values replaced by `...Ref` / `...Selector` members.
//!
//! Every object becomes Ready, the resolved values are in `forProvider` (written by the
//! resolver, as crossplane-runtime does), JFrog holds each object once, and deleting a
//! referenced object makes a referrer that resolves `Always` report
//! `CannotResolveResourceReferences` (Synced=False) naming the reference.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use e2e::{Mr, Sandbox, SandboxOptions, read_manifests, repo_root, wait_for};
use serde_json::{Value, json};

/// The first document of `examples/<path>`, renamed to `name` (and labelled).
fn example(path: &str, name: &str, labels: Value) -> Value {
    let mut doc = read_manifests(&repo_root().join("examples").join(path))
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("examples/{path} holds a manifest"));
    doc["metadata"]["name"] = json!(name);
    if !labels.is_null() {
        doc["metadata"]["labels"] = labels;
    }
    doc
}

fn for_provider(doc: &mut Value) -> &mut serde_json::Map<String, Value> {
    doc["spec"]["forProvider"]
        .as_object_mut()
        .expect("forProvider")
}

const ALPINE: &str = "refs-alpine";

fn manifests() -> Vec<Value> {
    let secrets = example(
        "artifactory/security/example-secrets.yaml",
        "example-access-secrets",
        Value::Null,
    );
    let keypair = example(
        "artifactory/security/keypair.yaml",
        "refs-signing",
        Value::Null,
    );
    let local = example(
        "artifactory/repository/local-alpine.yaml",
        "refs-local-alpine",
        json!({"refs": ALPINE}),
    );
    let remote = example(
        "artifactory/repository/remote-alpine.yaml",
        "refs-remote-alpine",
        json!({"refs": ALPINE}),
    );
    let mut virtual_repo = example(
        "artifactory/repository/virtual-alpine.yaml",
        "refs-virtual-alpine",
        Value::Null,
    );
    {
        let fp = for_provider(&mut virtual_repo);
        fp.remove("repositories");
        fp.remove("defaultDeploymentRepo");
        fp.insert(
            "repositoriesSelector".into(),
            json!({"matchLabels": {"refs": ALPINE}}),
        );
        fp.insert(
            "defaultDeploymentRepoRef".into(),
            json!({"name": "refs-local-alpine"}),
        );
        fp.insert(
            "primaryKeypairRefRef".into(),
            json!({"name": "refs-signing"}),
        );
    }
    let policy = example(
        "xray/policy/security-policy.yaml",
        "refs-policy",
        Value::Null,
    );
    let mut watch = example("xray/watch/watch.yaml", "refs-watch", Value::Null);
    {
        let fp = for_provider(&mut watch);
        let mut resource = fp["watchResource"][0].clone();
        resource.as_object_mut().expect("a resource").remove("name");
        resource["nameRef"] = json!({"name": "refs-local-alpine"});
        fp.insert("watchResource".into(), json!([resource]));
        fp.insert(
            "assignedPolicy".into(),
            json!([{"nameRef": {"name": "refs-policy"}, "type": "security"}]),
        );
    }
    let user = example("artifactory/user/user.yaml", "refs-alice", Value::Null);
    let project = example("project/project/project.yaml", "refsteam", Value::Null);
    // A project membership of the provider-artifactory user: the member's name is its
    // external name (as in Upjet's rendering), its project a reference.
    let mut member = example("project/access/user.yaml", "refs-alice", Value::Null);
    {
        let fp = for_provider(&mut member);
        fp.remove("projectKey");
        fp.insert("projectKeyRef".into(), json!({"name": "refsteam"}));
    }
    // A platform group whose members are provider-artifactory users, by reference.
    let group = example("platform/access/group.yaml", "refs-devs", Value::Null);
    let mut members = example(
        "platform/access/group-members.yaml",
        "refs-devs-members",
        Value::Null,
    );
    {
        let fp = for_provider(&mut members);
        fp.remove("name");
        fp.remove("members");
        fp.insert("nameRef".into(), json!({"name": "refs-devs"}));
        fp.insert("membersRefs".into(), json!([{"name": "refs-alice"}]));
    }
    let oidc = example(
        "platform/authentication/oidc-configuration.yaml",
        "refs-oidc",
        Value::Null,
    );
    let mut mapping = example(
        "platform/authentication/oidc-identity-mapping.yaml",
        "refs-mapping",
        Value::Null,
    );
    {
        let fp = for_provider(&mut mapping);
        fp.remove("providerName");
        // Resolved on every reconcile, so that removing the configuration is noticed.
        fp.insert(
            "providerNameRef".into(),
            json!({"name": "refs-oidc", "policy": {"resolve": "Always"}}),
        );
    }
    // Referrers first: the order of the documents must not matter.
    vec![
        mapping,
        member,
        members,
        watch,
        virtual_repo,
        secrets,
        keypair,
        local,
        remote,
        policy,
        user,
        project,
        group,
        oidc,
    ]
}

/// The `forProvider` of the MR `name` (of a group starting with `group`, when the name is
/// not unique).
async fn params(mrs: &[Mr], group: &str, name: &str) -> Value {
    let mr = mrs
        .iter()
        .find(|m| m.name == name && m.group.starts_with(group))
        .unwrap_or_else(|| panic!("MR {group} {name}"));
    mr.try_get().await.expect("the MR exists").data["spec"]["forProvider"].clone()
}

fn is_mr(doc: &Value) -> bool {
    doc["kind"] != "Secret"
}

/// The simulator's object counts, minus `before`.
fn grown(after: &BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(k, n)| {
            let d = n.saturating_sub(before.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_across_kinds_groups_and_providers_resolve_in_one_apply() {
    let sb = Sandbox::start(
        SandboxOptions::new("references").providers("artifactory,xray,project,platform"),
    )
    .await;
    let docs = manifests();
    let mrs: Vec<Mr> = docs
        .iter()
        .filter(|d| is_mr(d))
        .map(|d| sb.mr_of(d))
        .collect();
    let before = sb.sim.collection_counts().await;

    let started = Instant::now();
    sb.apply_ok(&docs);
    sb.wait_all_ready(&mrs, Duration::from_secs(300)).await;
    println!(
        "{} MRs Ready and Synced in {:.1}s after one kubectl apply",
        mrs.len(),
        started.elapsed().as_secs_f64()
    );

    // provider-xray reads provider-artifactory's Kinds as a member of their family (and may
    // not delete them): the RBAC Crossplane v2 renders for the packages as written.
    assert_eq!(
        can_i(
            &sb,
            "provider-xray",
            "get",
            "localalpinerepositories.repository.artifactory.m.crossplane.io"
        ),
        "yes"
    );
    assert_eq!(
        can_i(
            &sb,
            "provider-xray",
            "delete",
            "localalpinerepositories.repository.artifactory.m.crossplane.io"
        ),
        "no"
    );
    assert_eq!(
        can_i(
            &sb,
            "provider-project",
            "list",
            "users.user.artifactory.m.crossplane.io"
        ),
        "yes"
    );

    // The resolved values are in forProvider, with the Refs the selector chose.
    let spec = |name: &'static str| params(&mrs, "", name);
    let v = spec("refs-virtual-alpine").await;
    assert_eq!(
        v["repositories"],
        json!(["refs-local-alpine", "refs-remote-alpine"]),
        "{v}"
    );
    assert_eq!(
        v["repositoriesRefs"],
        json!([
            {"name": "refs-local-alpine", "namespace": "default"},
            {"name": "refs-remote-alpine", "namespace": "default"}
        ])
    );
    assert_eq!(v["defaultDeploymentRepo"], "refs-local-alpine");
    assert_eq!(v["primaryKeypairRef"], "refs-signing");
    let w = spec("refs-watch").await;
    assert_eq!(w["watchResource"][0]["name"], "refs-local-alpine", "{w}");
    assert_eq!(w["assignedPolicy"][0]["name"], "refs-policy", "{w}");
    let u = params(&mrs, "access.project", "refs-alice").await;
    assert_eq!(u["projectKey"], "refsteam", "{u}");
    let g = spec("refs-devs-members").await;
    assert_eq!(g["name"], "refs-devs", "{g}");
    assert_eq!(g["members"], json!(["refs-alice"]), "{g}");
    let m = spec("refs-mapping").await;
    assert_eq!(m["providerName"], "refs-oidc", "{m}");

    // JFrog holds what the references say.
    let virt = sb
        .sim
        .repository("refs-virtual-alpine")
        .await
        .expect("the virtual repository");
    assert_eq!(
        virt["repositories"],
        json!(["refs-local-alpine", "refs-remote-alpine"])
    );
    assert_eq!(virt["defaultDeploymentRepo"], "refs-local-alpine");
    assert_eq!(virt["primaryKeyPairRef"], "refs-signing");
    let member = sb
        .sim
        .rest_get("/access/api/v1/projects/refsteam/users/refs-alice")
        .await
        .expect("the project member");
    assert_eq!(member["roles"], json!(["Developer"]));

    // Each object once: the collections grew by exactly the declared objects.
    let after = sb.sim.collection_counts().await;
    let grew = grown(&after, &before);
    println!("simulator collections grown: {grew:?}");
    let expected: BTreeMap<String, u64> = [
        ("access_groups", 1),
        ("access_oidc", 1),
        ("access_oidc_identity_mappings", 1),
        ("access_project_users", 1),
        ("access_projects", 1),
        ("keypairs", 1),
        ("repositories", 3),
        ("users", 1),
        ("xray_policies", 1),
        ("xray_watches", 1),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(
        grew, expected,
        "one JFrog object per declared object, no duplicate"
    );

    // Removing a referenced object: the referrer that resolves Always cannot resolve.
    let oidc = mrs.iter().find(|m| m.name == "refs-oidc").expect("MR");
    sb.kubectl_ok(&[
        "delete",
        &oidc.resource(),
        "refs-oidc",
        "-n",
        "default",
        "--timeout=120s",
    ]);
    let mapping = mrs.iter().find(|m| m.name == "refs-mapping").expect("MR");
    let (_, reason, message) = mapping
        .wait_condition(
            "the mapping to miss its configuration",
            "Synced",
            "False",
            "mg.Spec.ForProvider.ProviderName",
            Duration::from_secs(120),
        )
        .await;
    assert_eq!(reason, "ReconcileError");
    assert!(
        message.starts_with("cannot resolve references: mg.Spec.ForProvider.ProviderName: cannot get referenced resource: oidcconfigurations.authentication.platform.m.crossplane.io \"refs-oidc\" not found"),
        "{message}"
    );
    let events = sb.kubectl_ok(&[
        "get",
        "events",
        "-n",
        "default",
        "--field-selector",
        "involvedObject.name=refs-mapping",
        "-o",
        "jsonpath={.items[*].reason}",
    ]);
    assert!(
        events.contains("CannotResolveResourceReferences"),
        "events: {events}"
    );
    // A value kept by IfNotPresent does not depend on its target any more: the watch stays
    // Ready when nothing it names goes away, and the rest keeps converging.
    wait_for(
        "the watch to stay Ready and Synced",
        Duration::from_secs(30),
        Duration::from_millis(500),
        || async {
            mrs.iter()
                .find(|m| m.name == "refs-watch")
                .expect("MR")
                .ready_and_synced()
                .await
                .then_some(())
        },
    )
    .await;
}

/// The providers run with the RBAC Crossplane v2 renders for the packages as written
/// (`sandbox/cli/src/crossplane_rbac.rs`): provider-xray may read provider-artifactory's
/// repositories because both packages are of the family `provider-family-jfrog` and installed
/// from one organisation, and nothing beyond what Crossplane grants. Installed from another
/// organisation, provider-xray is no member: its reference is forbidden, the watch is
/// Synced=False saying so, and JFrog gets no watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_outside_the_provider_family_is_forbidden() {
    let sb = Sandbox::start(
        SandboxOptions::new("refs-family")
            .providers("artifactory,xray")
            .sandbox_arg("--package=xray=registry.example.com/acme/provider-xray:v0.1.0"),
    )
    .await;
    let local = example(
        "artifactory/repository/local-alpine.yaml",
        "fam-local-alpine",
        Value::Null,
    );
    let mut watch = example("xray/watch/watch.yaml", "fam-watch", Value::Null);
    {
        let fp = for_provider(&mut watch);
        let mut resource = fp["watchResource"][0].clone();
        resource.as_object_mut().expect("a resource").remove("name");
        resource["nameRef"] = json!({"name": "fam-local-alpine"});
        fp.insert("watchResource".into(), json!([resource]));
    }
    let before = sb.sim.collection_counts().await;
    sb.apply_ok(&[local.clone(), watch.clone()]);
    sb.wait_all_ready(&[sb.mr_of(&local)], Duration::from_secs(120))
        .await;
    let (_, reason, message) = sb
        .mr_of(&watch)
        .wait_condition(
            "the watch's reference to be forbidden",
            "Synced",
            "False",
            "forbidden",
            Duration::from_secs(120),
        )
        .await;
    assert_eq!(reason, "ReconcileError");
    assert!(
        message.contains("cannot resolve references")
            && message.contains("system:serviceaccount:crossplane-system:provider-xray")
            && message.contains("in API group \"repository.artifactory.m.crossplane.io\""),
        "{message}"
    );
    let grew = grown(&sb.sim.collection_counts().await, &before);
    assert_eq!(
        grew.get("xray_watches"),
        None,
        "no watch in JFrog: {grew:?}"
    );

    // What the provider may do, asked as the provider: its own Kinds, not the family's, and
    // never a delete of a managed resource or anything Crossplane does not grant.
    let can = |verb: &str, resource: &str| can_i(&sb, "provider-xray", verb, resource);
    assert_eq!(can("update", "watches.watch.xray.m.crossplane.io"), "yes");
    assert_eq!(can("delete", "watches.watch.xray.m.crossplane.io"), "no");
    assert_eq!(
        can(
            "get",
            "localalpinerepositories.repository.artifactory.m.crossplane.io"
        ),
        "no"
    );
    assert_eq!(can("list", "deployments.apps"), "no");
    assert_eq!(can("create", "leases.coordination.k8s.io"), "yes");
}

/// `kubectl auth can-i VERB RESOURCE` as the provider `name` (its kubeconfig): "yes" or "no".
fn can_i(sb: &Sandbox, name: &str, verb: &str, resource: &str) -> String {
    let kubeconfig = sb.dir.join("providers").join(format!("{name}.kubeconfig"));
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["auth", "can-i", verb, resource])
        .output()
        .expect("kubectl runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
