//! provider-project's run of the generic family suite (`provider_family::suite`): every
//! example, applied members first (the order must not matter), plus the legacy ones;
//! afterwards the repositories that were assigned and shared are still there (they are
//! provider-artifactory's).

use provider_family::suite::{self, Suite};
use serde_json::{Value, json};

use crate::projects::{examples, kinds, tables::KINDS};

/// A Project's description, a Role's actions and a member's roles are edited in JFrog.
fn drift(kind: &str) -> Option<(&'static str, Value)> {
    Some(match kind {
        "Project" => ("/description", json!("edited in the UI")),
        "Role" => ("/actions", json!(["READ_BUILD"])),
        "User" | "Group" => ("/roles", json!(["Contributor"])),
        _ => return None,
    })
}

/// The other Kinds' objects are removed in JFrog.
fn removes(kind: &str) -> bool {
    drift(kind).is_none()
}

/// The repositories the examples assign and share, as provider-artifactory's examples
/// create them.
fn seed(sim: &jfrog_sim::Simulator) {
    for r in examples::REPOSITORIES {
        assert!(sim.put_repository_raw(
            r,
            json!({"key": r, "rclass": "local", "packageType": "generic"})
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_project_kind_passes_the_suite() {
    let s = Suite {
        provider: crate::PROVIDER,
        drift,
        deletes: suite::always_deletes,
        seed,
        read_calls: &[],
        removes,
        delete_last: &["Project"],
        resets: &[],
    };
    let mut examples: Vec<(String, Value)> = KINDS
        .iter()
        .rev()
        .map(|d| (d.kind.to_string(), examples::example(d, false)))
        .collect();
    for d in KINDS
        .iter()
        .filter(|d| examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((d.kind.to_string(), examples::example(d, true)));
    }
    let env = suite::family_suite(&s, kinds(), examples, true).await;
    for r in examples::REPOSITORIES {
        assert!(env.sim.repository_raw(r).is_some(), "{r} removed");
    }
}
