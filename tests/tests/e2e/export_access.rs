//! End-to-end test of `export` (issue 18) for provider-project and provider-platform (the
//! Access API, issue 15): a simulator seeded with copies of every Kind of the two providers
//! that `export` can list (some with a secret, odd copies with keys that are not Kubernetes
//! names), exported with `sandbox export --providers project,platform`, then applied to a
//! fresh sandbox running both providers against the same simulator: every MR Ready and
//! Synced, and no JFrog write during adoption and two more polls. The same with `--legacy`.
//! Exporting twice gives identical files, and no secret value of the simulator is in any of
//! them. (Kinds without a list call are named in the summary as not exportable.) Groups and
//! permissions are listed by name and read each (one read per object in the export; in the
//! steady state their lists are not asked, one read per MR instead). The Kinds inside a
//! project (environments, roles, users, groups) and an OIDC configuration's identity
//! mappings are exported by listing the parents and then each parent's list: one request
//! per parent and Kind. Lifecycle stages are exported from the platform's list and each
//! project's (one seeded inside a project), the system stages (PR, COMMIT, PROD) skipped
//! and listed; lifecycles (the platform's and each project's: one read each) only when they
//! promote through a stage (the platform's and one project's are seeded), the others
//! skipped and listed.

use std::path::Path;
use std::time::{Duration, Instant};

use e2e::{Sandbox, SandboxOptions, TempDir, file_tree, sandbox_export};
use provider_family::seed::{Seeded, create_copy};
use provider_family::{Kind, KindDecl};
use serde_json::{Value, json};

/// The providers exported and adopted.
const PROVIDERS: [&str; 2] = ["project", "platform"];
/// Copies of each listable Kind.
const COPIES: usize = 3;

fn secret(key: &str) -> String {
    format!("e2e-export-access-secret-{}-7c2e", key.to_ascii_lowercase())
}

/// `COPIES` objects of every listable Kind of `decls`, from its example (Secret references
/// given a value of [`secret`]); the objects inside a project or an OIDC configuration in
/// two of them.
async fn seed(
    client: &jfrog_client::JfrogClient,
    decls: &[Kind],
    kinds: &[std::sync::Arc<provider_family::FamilyKind>],
    example_name: fn(&str, bool) -> String,
    example_params: fn(&KindDecl, bool) -> Value,
) -> Vec<Seeded> {
    let mut out = Vec::new();
    for copy in 0..COPIES {
        // Singletons (lifecycles) are one object per scope: seeded once, by the test.
        for d in decls.iter().filter(|d| exported(d, kinds) && !singleton(d)) {
            let k = kinds
                .iter()
                .find(|k| k.resolved().decl.kind == d.kind)
                .expect("every declaration is a Kind");
            let base = example_name(d.kind, false);
            let mut params = example_params(d, false);
            let mut secrets = Vec::new();
            // Kinds identified by a spec field: each copy its own.
            match d.kind {
                "SCIMUser" => {
                    let user = format!("scim-{copy}@example.com");
                    params["username"] = json!(user);
                    params["emails"] = json!([{"value": user, "primary": true}]);
                }
                "WorkersService" => params["key"] = json!(format!("example-worker-{copy}")),
                _ => {}
            }
            // The last copy of an object inside a parent goes into the last copy of its
            // parent (a second project, a second OIDC configuration), made before it.
            if copy == COPIES - 1 {
                for (field, parent) in [
                    ("projectKey", "example-project"),
                    ("providerName", "example-oidc-configuration"),
                ] {
                    if params.get(field).and_then(Value::as_str) == Some(parent) {
                        params[field] = json!(provider_family::seed::variant(parent, copy));
                    }
                }
            }
            if let Value::Object(m) = &mut params {
                for (field, r) in m.iter_mut() {
                    if field.ends_with("SecretRef") {
                        *r = json!({"name": "s", "key": field});
                        secrets.push((field.clone(), secret(&format!("{base}-{copy}-{field}"))));
                    }
                }
            }
            let with_secret = !secrets.is_empty();
            let key = create_copy(client, k, &base, copy, params, secrets)
                .await
                .unwrap_or_else(|e| panic!("seed: {e}"));
            out.push(Seeded {
                kind: d.kind,
                key,
                with_secret,
            });
        }
    }
    out
}

/// Whether `export` writes manifests for `d`'s objects: it has a list call, and its hooks let
/// it (a project's repository assignments are listed, but a manifest needs the project).
fn exported(d: &Kind, kinds: &[std::sync::Arc<provider_family::FamilyKind>]) -> bool {
    d.rest.list().is_some()
        && kinds
            .iter()
            .find(|k| k.resolved().decl.kind == d.kind)
            .is_some_and(|k| {
                let bound = k.resolved();
                bound.hooks.exportable(bound)
            })
}

fn singleton(d: &KindDecl) -> bool {
    matches!(d.id, provider_family::Id::Singleton(_))
}

/// The list calls of the seeded Kinds (`<path>`, a per-parent list's parameters as
/// declared).
fn list_routes(decls: &[&Kind]) -> Vec<String> {
    let mut routes: Vec<String> = decls
        .iter()
        .filter_map(|d| d.rest.list())
        .map(|l| format!("{}{}", l.service.base_path(), l.path))
        .collect();
    routes.sort();
    routes.dedup();
    routes
}

/// The simulator's name of `route` among the `GET` routes it counted (its path parameters
/// are named otherwise: `{p}` for `{project}`).
fn sim_route(counts: &std::collections::BTreeMap<String, u64>, route: &str) -> String {
    let same = |a: &str, b: &str| {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
        a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| x == y || (x.starts_with('{') && y.starts_with('{')))
    };
    counts
        .keys()
        .filter_map(|k| k.strip_prefix("GET "))
        .find(|k| same(k, route))
        .unwrap_or(route)
        .to_string()
}

/// Every seeded secret value the simulator stores (in clear) in any collection.
fn stored_secrets(sim: &jfrog_sim::Simulator) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) if s.contains("e2e-export-access-secret-") => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::Object(m) => m.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in sim.collection_names() {
        for o in sim.objects(&c).unwrap_or_default() {
            walk(&o, &mut out);
        }
    }
    out
}

/// Apply the export in `out` to a fresh sandbox against `url`: every MR Ready and Synced, no
/// write from the apply until two more polls of the `lists` after that. Returns the MR
/// count.
async fn adopt(tag: &str, url: &str, token_file: &Path, out: &Path, lists: &[String]) -> usize {
    let mut opts = SandboxOptions::new(tag)
        .providers(&PROVIDERS.join(","))
        .jfrog(url, token_file)
        .provider_arg("--max-reconcile-rate=50");
    // A short poll keeps the test quick (the two quiet polls are what is measured).
    opts.poll = Duration::from_secs(2);
    let sb = Sandbox::start(opts).await;
    sb.sim.reset_requests().await;
    let started = Instant::now();
    let rendered = sb.kubectl_ok(&["kustomize", &out.display().to_string()]);
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&rendered)
        .map(|de| serde::Deserialize::deserialize(de).expect("rendered YAML"))
        .filter(|d: &Value| !d.is_null())
        .collect();
    assert!(
        docs.iter().all(|d| d["apiVersion"]
            .as_str()
            .is_some_and(|a| a.contains(".platform.") || a.contains(".project."))),
        "the kustomization renders only managed resources"
    );
    let mrs: Vec<_> = docs.iter().map(|d| sb.mr_of(d)).collect();
    for (mr, doc) in mrs.iter().zip(&docs) {
        let pp = kube::api::PatchParams::apply("e2e-export-access").force();
        mr.api
            .patch(&mr.name, &pp, &kube::api::Patch::Apply(doc))
            .await
            .unwrap_or_else(|e| panic!("apply {}: {e}", mr.name));
    }
    sb.wait_all_ready(&mrs, Duration::from_secs(120)).await;
    let ready_after = started.elapsed();
    // Two more polls: every list call made twice more.
    let counts = sb
        .two_quiet_polls(tag, lists, Duration::from_secs(60))
        .await;
    eprintln!(
        "{tag}: {} MRs Ready and Synced {:.1}s after the apply began; JFrog requests until two more polls: {counts:?}",
        mrs.len(),
        ready_after.as_secs_f64(),
    );
    mrs.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exported_access_objects_are_adopted_without_a_write_in_both_scopes() {
    let sim = testkit::start_sim().await;
    let client = jfrog_client::JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client");
    let platform_kinds = provider_platform::family_kinds();
    let project_kinds = provider_project::family_kinds();
    let platform_decls = provider_platform::platform::tables::KINDS;
    let project_decls = provider_project::projects::tables::KINDS;
    // Platform objects first (the OIDC configurations the identity mappings name, the
    // groups the project group members name); then the users the project members name.
    let mut seeded = seed(
        &client,
        platform_decls,
        &platform_kinds,
        provider_platform::platform::examples::example_name,
        provider_platform::platform::examples::example_params,
    )
    .await;
    let from_platform = seeded.len();
    for copy in 0..COPIES {
        let user = provider_family::seed::variant("example-user", copy);
        let email = format!("{}@example.com", user.replace('_', "-"));
        assert!(sim.put_object("users", &user, json!({"email": email})));
    }
    seeded.extend(
        seed(
            &client,
            project_decls,
            &project_kinds,
            provider_project::projects::examples::example_name,
            provider_project::projects::examples::example_params,
        )
        .await,
    );
    let from_project = seeded.len() - from_platform;
    // A project's own stage (its project exists now): the stages' second scope.
    let stage = platform_kinds
        .iter()
        .find(|k| k.resolved().decl.kind == "LifecycleStage")
        .expect("declared");
    let project = provider_family::seed::variant("example-project", COPIES - 1);
    let params = json!({"projectKey": project, "category": "promote"});
    let key = create_copy(
        &client,
        stage,
        &format!("{project}-qa"),
        0,
        params,
        Vec::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("seed: {e}"));
    // Lifecycles promoting through those stages: the platform's and that project's (the
    // other projects' lifecycles promote through none: JFrog's default, skipped).
    let lifecycle = platform_kinds
        .iter()
        .find(|k| k.resolved().decl.kind == "Lifecycle")
        .expect("declared");
    for (scope, stage) in [("", "qa"), (project.as_str(), key.as_str())] {
        let mut params = json!({"promoteStages": [stage]});
        if !scope.is_empty() {
            params["projectKey"] = json!(scope);
        }
        provider_family::seed::create(&client, lifecycle, "", params, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("seed: {e}"));
    }
    seeded.push(Seeded {
        kind: "LifecycleStage",
        key,
        with_secret: false,
    });
    for scope in ["_", project.as_str()] {
        seeded.push(Seeded {
            kind: "Lifecycle",
            key: scope.to_string(),
            with_secret: false,
        });
    }
    let from_platform = from_platform + 3;
    let listable: Vec<&Kind> = project_decls
        .iter()
        .filter(|d| exported(d, &project_kinds))
        .chain(
            platform_decls
                .iter()
                .filter(|d| exported(d, &platform_kinds)),
        )
        .collect();
    assert!(!listable.is_empty());
    let singletons = listable.iter().filter(|d| singleton(d)).count();
    assert_eq!(
        seeded.len(),
        COPIES * (listable.len() - singletons) + 1 + 2 * singletons
    );
    assert!(
        seeded.iter().any(|s| s.with_secret),
        "a seeded object has a secret"
    );
    let lists = list_routes(&listable);
    // Kinds listed per parent: one list per parent (the seeded projects and OIDC
    // configurations, whose own lists are exported too, so read once).
    let per_parent: u64 = listable
        .iter()
        .filter(|d| !d.rest.list_parents().is_empty())
        .map(|d| {
            let parent = d
                .rest
                .parent_list()
                .expect("a per-parent list names its parents");
            seeded
                .iter()
                .filter(|s| {
                    listable.iter().any(|p| {
                        p.kind == s.kind && p.rest.list().is_some_and(|l| l.path == parent.path)
                    })
                })
                .count() as u64
        })
        .sum();
    assert!(per_parent > 0, "Kinds listed per parent are seeded");
    // The lists asked every poll in the steady state: a list that shows only names is not
    // asked while every MR's object exists (each is read by key instead).
    let full: Vec<&Kind> = listable
        .iter()
        .copied()
        .filter(|d| !d.rest.list_reads_each())
        .collect();
    let polled = list_routes(&full);

    let dir = TempDir::new("export-access");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, sim.admin_token()).expect("write token");
    let url = sim.url();

    // Export: one request per list call for every object, plus one read per object of the
    // lists that show only names (groups, permissions).
    // (Both providers have a `Group` Kind: each seeded object is matched with its own
    // provider's declarations.)
    let (of_platform, of_project) = seeded.split_at(from_platform);
    let reads: u64 = [(of_platform, platform_decls), (of_project, project_decls)]
        .iter()
        .map(|(objs, decls)| {
            objs.iter()
                .filter(|s| {
                    decls
                        .iter()
                        .any(|d| d.kind == s.kind && d.rest.list_reads_each())
                })
                .count() as u64
        })
        .sum();
    assert!(reads > 0, "a seeded Kind is listed by name only");
    sim.reset_counts();
    let ns = dir.path().join("namespaced");
    let started = Instant::now();
    let summary = sandbox_export(&PROVIDERS, &url, &token_file, &ns, &[]);
    let took = started.elapsed();
    let requests: u64 = sim.request_counts().values().sum();
    eprintln!(
        "export of {} objects: {requests} JFrog requests, {:.2}s\n{summary}",
        seeded.len(),
        took.as_secs_f64()
    );
    let per_parent_kinds = listable
        .iter()
        .filter(|d| !d.rest.list_parents().is_empty())
        .count() as u64;
    // An optional parent's Kind (stages) is listed once without it too.
    let optional = listable
        .iter()
        .filter(|d| d.rest.parent_query().is_some())
        .count() as u64;
    // A provider lists the parents it does not export itself (provider-platform the
    // projects, for their stages): once per provider and parent list.
    let foreign_parents = [platform_decls, project_decls]
        .iter()
        .map(|decls| {
            let mut foreign: Vec<&str> = decls
                .iter()
                .filter_map(|d| d.rest.parent_list())
                .filter(|p| {
                    !decls
                        .iter()
                        .any(|d| d.rest.list().is_some_and(|l| l.path == p.path))
                })
                .map(|p| p.path)
                .collect();
            foreign.sort_unstable();
            foreign.dedup();
            foreign.len() as u64
        })
        .sum::<u64>();
    assert_eq!(
        requests,
        lists.len() as u64 - per_parent_kinds + per_parent + optional + foreign_parents + reads,
        "{:?}",
        sim.request_counts()
    );
    // Steady-state polls name the simulator's routes.
    let counted = sim.request_counts();
    let polled: Vec<String> = polled.iter().map(|r| sim_route(&counted, r)).collect();
    assert!(
        summary.contains("predefined role"),
        "the roles Access gives every project are skipped and listed: {summary}"
    );
    assert!(
        summary.contains("a lifecycle with no promote stage"),
        "the lifecycles promoting through no stage are skipped and listed: {summary}"
    );
    for system in ["PR", "COMMIT", "PROD"] {
        assert!(
            summary.contains(&format!("/api/v2/stages {system}: a system stage")),
            "the system stages are skipped and listed: {summary}"
        );
    }
    for n in [from_project, from_platform] {
        assert!(
            summary.contains(&format!("exported {n} objects")),
            "{summary}"
        );
    }
    assert!(!summary.contains("warning"), "{summary}");

    // Twice: identical files; no secret anywhere.
    let again = dir.path().join("again");
    sandbox_export(&PROVIDERS, &url, &token_file, &again, &[]);
    let files = file_tree(&ns);
    assert_eq!(files, file_tree(&again));
    let legacy = dir.path().join("legacy");
    sandbox_export(&PROVIDERS, &url, &token_file, &legacy, &["--legacy"]);
    let mut secrets = stored_secrets(&sim);
    assert!(!secrets.is_empty(), "seeded secrets are stored");
    secrets.push(sim.admin_token());
    for (path, text) in files.iter().chain(file_tree(&legacy).iter()) {
        for s in &secrets {
            assert!(
                !text.contains(s.as_str()),
                "{} holds a secret value",
                path.display()
            );
        }
    }

    // Adoption, namespaced then legacy, each by a fresh sandbox against the same platform.
    assert_eq!(
        adopt("export-access-ns", &url, &token_file, &ns, &polled).await,
        seeded.len()
    );
    assert_eq!(
        adopt("export-access-legacy", &url, &token_file, &legacy, &polled).await,
        seeded.len()
    );
}
