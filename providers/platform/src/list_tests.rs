//! Observation by list for the Kinds whose Access (or Worker) API lists them: N MRs of a
//! Kind cost one list request per poll, shared by every MR of the Kind. Groups and
//! permissions are listed by name only, so each present object is still read by key (list,
//! then read each); SCIM users and groups, OIDC configurations, their identity mappings
//! (one list per configuration), lifecycle stages (one list per scope: the platform's and
//! each project's) and workers are listed in full and not read at all. Each Kind also has
//! one observe-only MR whose object does not
//! exist: it is never read (the list shows it absent), and it is what the name-only lists
//! are asked for (with every object present the steady state is one read per MR and no
//! list; the full lists are asked once per poll). Counted in the simulator's request log over polls of every MR, after they
//! converged.

use std::sync::Arc;
use std::time::Duration;

use provider_family::ClientCache;
use provider_family::snapshot::{Lookup, Snapshot, SnapshotSettings};
use provider_family_suite::{self as suite, ListCase, converge};
use provider_runtime::managed::ManagedKind;
use serde_json::{Value, json};

use crate::platform::{examples, kinds, tables::KINDS};

/// Objects per Kind.
const N: usize = 4;
/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);

/// The composed Kind named `k`.
fn kind(k: &str) -> Arc<provider_family::FamilyKind> {
    kinds()
        .iter()
        .find(|f| f.info().kind == k)
        .expect("declared")
        .clone()
}

/// The example of `kind` as object `i`: its own name and identifier.
fn nth(kind: &str, i: usize) -> Value {
    let d = KINDS.iter().find(|d| d.kind == kind).expect("declared");
    let mut m = examples::example(d, false);
    let name = format!("{}-{i}", examples::example_name(kind, false));
    m["metadata"]["name"] = json!(name);
    let p = &mut m["spec"]["forProvider"];
    match kind {
        "SCIMUser" => {
            let user = format!("scim-{i}@example.com");
            p["username"] = json!(user);
            p["emails"] = json!([{"value": user, "primary": true}]);
        }
        "WorkersService" => p["key"] = json!(format!("worker-{i}")),
        // Every mapping under the first configuration: one list for all of them.
        "OIDCIdentityMapping" => {
            p["providerName"] = json!(format!(
                "{}-0",
                examples::example_name("OIDCConfiguration", false)
            ))
        }
        // Only the admin user: no group to create first.
        "Permission" => p["artifact"]["actions"]["groups"] = json!([]),
        _ => {}
    }
    m
}

const CASES: &[ListCase] = &[
    ListCase {
        kind: "Group",
        list: "/access/api/v2/groups",
        item: "/access/api/v2/groups/{key}",
        reads_each: true,
    },
    ListCase {
        kind: "Permission",
        list: "/access/api/v2/permissions",
        item: "/access/api/v2/permissions/{key}",
        reads_each: true,
    },
    ListCase {
        kind: "SCIMUser",
        list: "/access/api/v1/scim/v2/Users",
        item: "/access/api/v1/scim/v2/Users/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "SCIMGroup",
        list: "/access/api/v1/scim/v2/Groups",
        item: "/access/api/v1/scim/v2/Groups/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "OIDCConfiguration",
        list: "/access/api/v1/oidc",
        item: "/access/api/v1/oidc/{key}",
        reads_each: false,
    },
    ListCase {
        kind: "OIDCIdentityMapping",
        list: "/access/api/v1/oidc/{provider}/identity_mappings",
        item: "/access/api/v1/oidc/{provider}/identity_mappings/{name}",
        reads_each: false,
    },
    ListCase {
        kind: "WorkersService",
        list: "/worker/api/v1/workers",
        item: "/worker/api/v1/workers/{key}",
        reads_each: false,
    },
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_kind_per_poll() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    assert!(env.sim.put_repository_raw(
        "example-local-generic",
        json!({"key": "example-local-generic", "rclass": "local", "packageType": "generic"})
    ));
    for c in CASES {
        for i in 0..N {
            env.add(&kind(c.kind), nth(c.kind, i)).await;
        }
    }
    let present = env.mrs.len();
    for c in CASES {
        let mut absent = suite::observe_only_absent(nth(c.kind, 99));
        let p = &mut absent["spec"]["forProvider"];
        if p.get("username").is_some() {
            p["username"] = json!("absent-99");
        }
        if p.get("key").is_some() {
            p["key"] = json!("absent-99");
        }
        env.add(&kind(c.kind), absent).await;
    }
    converge(&env.mrs[..present]).await;
    for round in 0..2 {
        let counts = suite::list_poll(&env, POLL, CASES, N as u64).await;
        eprintln!("poll {round}: {counts:?}");
    }
    // Steady state with every object present: the name-only lists are not asked (one read
    // per MR), the full lists are (no read).
    tokio::time::sleep(POLL + Duration::from_millis(200)).await;
    env.sim.reset_counts();
    for m in &env.mrs[..present] {
        m.reconcile().await;
    }
    let counts = env.sim.request_counts();
    eprintln!("present only: {counts:?}");
    let get = |route: &str| counts.get(&format!("GET {route}")).copied().unwrap_or(0);
    for c in CASES {
        let (lists, reads) = if c.reads_each { (0, N as u64) } else { (1, 0) };
        assert_eq!(get(c.list), lists, "{}: {counts:?}", c.kind);
        assert_eq!(get(c.item), reads, "{}: {counts:?}", c.kind);
    }
    assert_eq!(
        counts.values().sum::<u64>(),
        CASES
            .iter()
            .map(|c| if c.reads_each { N as u64 } else { 1 })
            .sum::<u64>(),
        "{counts:?}"
    );
    // Every absent MR still finds nothing to observe.
    for m in &env.mrs[present..] {
        assert!(!m.ready_and_synced().await, "{} found an object", m.name);
    }
}

/// Projects with stages of their own.
const PROJECTS: [&str; 2] = ["alpha", "beta"];

/// Lifecycle stages are observed by list per scope: N global stages and N stages in each of
/// two projects cost three `GET /access/api/v2/stages` per poll (the platform's list, and
/// each project's with `project_key` and `scope=project`) and no read by key; a stage of
/// either scope that JFrog lacks is absent without a read. The system stages (PR, COMMIT,
/// PROD) in the platform's list are no MR's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_stage_list_per_poll_and_scope() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    for p in PROJECTS {
        assert!(env.sim.put_object(
            "access_projects",
            p,
            json!({"project_key": p, "display_name": p, "description": ""})
        ));
    }
    let stages = kind("LifecycleStage");
    let stage = |name: &str, project: &str, observe_only: bool| {
        let mut m = nth("LifecycleStage", 0);
        m["metadata"]["name"] = json!(name);
        m["metadata"]["annotations"] = json!({"crossplane.io/external-name": name});
        if !project.is_empty() {
            m["spec"]["forProvider"]["projectKey"] = json!(project);
        }
        if observe_only {
            m["spec"]["managementPolicies"] = json!(["Observe"]);
        }
        m
    };
    for scope in ["", PROJECTS[0], PROJECTS[1]] {
        for i in 0..N {
            let name = match scope {
                "" => format!("stage-{i}"),
                p => format!("{p}-stage-{i}"),
            };
            env.add(&stages, stage(&name, scope, false)).await;
        }
    }
    let present = env.mrs.len();
    env.add(&stages, stage("absent-99", "", true)).await;
    env.add(&stages, stage("alpha-absent-99", "alpha", true))
        .await;
    converge(&env.mrs[..present]).await;
    for round in 0..2 {
        tokio::time::sleep(POLL + Duration::from_millis(200)).await;
        env.sim.reset_counts();
        for m in &env.mrs {
            m.reconcile().await;
        }
        let counts = env.sim.request_counts();
        eprintln!("poll {round}: {counts:?}");
        let lists = 1 + PROJECTS.len() as u64;
        assert_eq!(
            counts.get("GET /access/api/v2/stages").copied(),
            Some(lists),
            "one list per scope: {counts:?}"
        );
        assert_eq!(counts.len(), 1, "nothing but the lists: {counts:?}");
    }
    for m in &env.mrs[..present] {
        assert!(m.ready_and_synced().await, "{} not ready", m.name);
    }
    for m in &env.mrs[present..] {
        assert!(!m.ready_and_synced().await, "{} found a stage", m.name);
    }
}

/// What the snapshot of `list` says of `keys` against the simulator (TTL and max age long
/// enough for one refresh): the lookups, and the list requests sent.
async fn look_up(
    sim: &jfrog_sim::Simulator,
    list: provider_family::ListCall,
    rest: Option<&'static dyn provider_family::Rest>,
    keys: &[String],
) -> (Vec<Lookup>, u64) {
    let settings = Arc::new(SnapshotSettings::default());
    settings.set_ttl(Some(Duration::from_secs(60)));
    let mut snapshot = Snapshot::new(settings, Arc::default(), list, false);
    if let Some(rest) = rest {
        snapshot = snapshot.with_rest(rest);
    }
    let client = jfrog_client::JfrogClient::builder(sim.url())
        .credentials(jfrog_client::Credentials::access_token(sim.admin_token()))
        .build()
        .expect("client");
    sim.reset_counts();
    let mut out = Vec::new();
    for k in keys {
        out.push(snapshot.lookup(&client, k, Duration::from_secs(60)).await);
    }
    let route = format!("GET {}{}", list.service.base_path(), list.path);
    (out, sim.request_count("GET", &route[4..]))
}

/// A paged list's case: what it lists, its list call and binding, the objects present, and
/// smaller pages with the requests they cost.
type PagedCase<'a> = (
    &'static str,
    provider_family::ListCall,
    Option<&'static dyn provider_family::Rest>,
    &'a Vec<String>,
    &'static provider_family::Pages,
    u64,
);

/// The paged lists with more objects than JFrog's default page (1,001 groups and
/// permissions, 21 SCIM users and groups): asked for with the largest page, each is one
/// request per poll and shows every object (none taken as absent, which would have the MR
/// create an object that exists); with pages smaller than the objects (as on a platform
/// with more objects than the largest page) the pages are followed, one request each, and
/// still show every object; an object JFrog lacks is absent either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_lists_show_every_object() {
    use crate::platform::rest::{GROUP, PERMISSION, SCIMGROUP, SCIMUSER};
    use provider_family::{ListShape, Next, Pages};

    let sim = jfrog_sim::Simulator::start(jfrog_sim::SimConfig::default())
        .await
        .expect("simulator");
    let named = |prefix: &str, n: usize| -> Vec<String> {
        (0..n).map(|i| format!("{prefix}-{i:04}")).collect()
    };
    // Names after the built-in `readers` group sort after it too.
    let groups = named("team", 1_001);
    let permissions = named("perm", 1_001);
    let scim_users = named("scim-user", 21);
    let scim_groups = named("scim-group", 21);
    for g in &groups {
        assert!(sim.put_object("access_groups", g, json!({"name": g})));
    }
    for p in &permissions {
        assert!(sim.put_object("access_permissions", p, json!({"name": p, "resources": {}})));
    }
    for u in &scim_users {
        assert!(sim.put_object("access_scim_users", u, json!({"userName": u, "id": u})));
    }
    for g in &scim_groups {
        assert!(sim.put_object("access_scim_groups", g, json!({"displayName": g, "id": g})));
    }
    // Small pages, as the largest page is for a platform with more objects than it.
    static SMALL_CURSOR: [Pages; 2] = [
        Pages {
            member: "groups",
            size: 300,
            next: Next::Cursor,
        },
        Pages {
            member: "permissions",
            size: 250,
            next: Next::Cursor,
        },
    ];
    static SMALL_INDEX: Pages = Pages {
        member: "Resources",
        size: 5,
        next: Next::Index,
    };
    let cases: [PagedCase<'_>; 4] = [
        (
            "groups",
            GROUP.list,
            Some(&GROUP as &dyn provider_family::Rest),
            &groups,
            &SMALL_CURSOR[0],
            4,
        ),
        (
            "permissions",
            PERMISSION.list,
            Some(&PERMISSION as &dyn provider_family::Rest),
            &permissions,
            &SMALL_CURSOR[1],
            5,
        ),
        (
            "SCIM users",
            SCIMUSER.list.expect("listed"),
            None,
            &scim_users,
            &SMALL_INDEX,
            5,
        ),
        (
            "SCIM groups",
            SCIMGROUP.list.expect("listed"),
            None,
            &scim_groups,
            &SMALL_INDEX,
            5,
        ),
    ];
    for (what, list, rest, present, small, small_requests) in cases {
        let mut keys = present.clone();
        keys.push("absent-99".into());
        for (pages, requests) in [(None, 1), (Some(small), small_requests)] {
            let mut list = list;
            // The binding lists with its own declaration: a changed one goes without it
            // (its listed objects then shown in full, names only).
            let rest = match pages {
                Some(p) => {
                    list.shape = ListShape::Pages(p);
                    None
                }
                None => rest,
            };
            let (found, asked) = look_up(&sim, list, rest, &keys).await;
            assert_eq!(asked, requests, "{what}, pages {pages:?}");
            let (last, objects) = found.split_last().expect("keys");
            assert!(matches!(last, Lookup::Absent), "{what}: {last:?}");
            for (k, l) in present.iter().zip(objects) {
                // A name-only list says "read it"; a full one gives the object.
                let shown = match rest {
                    Some(_) => matches!(l, Lookup::Unknown),
                    None => matches!(l, Lookup::Found(_)),
                };
                assert!(shown, "{what}, pages {pages:?}: {k} {l:?}");
            }
        }
    }
    sim.shutdown().await;
}
