//! provider-project's Kinds through the family suite (`suite`): every example, applied
//! members first (the order must not matter), plus the legacy ones; afterwards the
//! repositories that were assigned and shared are still there (they are
//! provider-artifactory's).

use serde_json::json;

use crate::projects::{examples, kinds, tables::KINDS};
use crate::suite::{self, Drift};

/// A Project's description, a Role's actions and a member's roles are edited in JFrog; the
/// other Kinds' objects are removed.
fn edit(kind: &str) -> Drift {
    match kind {
        "Project" => Drift::Set("description", json!("edited in the UI")),
        "Role" => Drift::Set("actions", json!(["READ_BUILD"])),
        "User" | "Group" => Drift::Set("roles", json!(["Contributor"])),
        _ => Drift::Remove,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_project_kind_passes_the_suite() {
    let mut env = suite::start(crate::PROVIDER, kinds(), &[]).await;
    // The repositories the examples assign and share, as provider-artifactory's examples
    // create them.
    for r in examples::REPOSITORIES {
        assert!(env.sim.put_repository_raw(
            r,
            json!({"key": r, "rclass": "local", "packageType": "generic"})
        ));
    }
    for (i, d) in KINDS.iter().enumerate().rev() {
        env.add(&kinds()[i], examples::example(d, false)).await;
    }
    for (i, d) in KINDS.iter().enumerate() {
        if examples::LEGACY_KINDS.contains(&d.kind) {
            env.add(&kinds()[i], examples::example(d, true)).await;
        }
    }
    suite::run(&env, edit, &["Project"], &[]).await;
    for r in examples::REPOSITORIES {
        assert!(env.sim.repository_raw(r).is_some(), "{r} removed");
    }
}
