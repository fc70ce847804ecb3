//! Observation by list for projects: N Project MRs cost one `GET /access/api/v1/projects`
//! per poll and no read by key (the list carries every project in full, its quota in bytes
//! as a read answers it, turned into GiB by the same decode). An observe-only MR whose
//! project does not exist is not read either: the list shows it absent. Counted in the
//! simulator's request log over polls of every MR, after they converged (which also shows
//! the listed projects compare equal to their specs: no write).

use std::sync::Arc;
use std::time::Duration;

use provider_family::ClientCache;
use provider_family::suite::{self, ListCase, converge};
use provider_runtime::managed::ManagedKind;
use serde_json::json;

use crate::projects::{examples, kinds, tables::KINDS};

/// Projects.
const N: usize = 4;
/// The snapshot TTL (the provider's `--poll`).
const POLL: Duration = Duration::from_secs(2);

const CASES: &[ListCase] = &[ListCase {
    kind: "Project",
    list: "/access/api/v1/projects",
    item: "/access/api/v1/projects/{p}",
    reads_each: false,
}];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_per_poll_for_every_project() {
    let cache = Arc::new(ClientCache::new(crate::PROVIDER));
    cache.set_snapshot_ttl(Some(POLL));
    let mut env = suite::start(crate::PROVIDER, kinds(), cache).await;
    let kind = kinds()
        .iter()
        .find(|k| k.info().kind == "Project")
        .expect("declared")
        .clone();
    let d = KINDS
        .iter()
        .find(|d| d.kind == "Project")
        .expect("declared");
    for i in 0..=N {
        let mut m = examples::example(d, false);
        m["metadata"]["name"] = json!(format!("listed-{i}"));
        m["spec"]["forProvider"]["maxStorageInGibibytes"] = json!(i + 1);
        if i == N {
            m["spec"]["managementPolicies"] = json!(["Observe"]);
        }
        env.add(&kind, m).await;
    }
    converge(&env.mrs[..N]).await;
    for round in 0..2 {
        let counts = suite::list_poll(&env, POLL, CASES, N as u64).await;
        eprintln!("poll {round}: {counts:?}");
    }
    assert!(!env.mrs[N].ready_and_synced().await, "absent project found");
    // The quota is observed in GiB from the list's bytes.
    let o = env.mrs[1].get().await;
    assert_eq!(
        o.data["status"]["atProvider"]["maxStorageInGibibytes"],
        json!(2),
        "{:?}",
        o.data["status"]
    );
}
