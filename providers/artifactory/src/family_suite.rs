//! provider-artifactory's run of the generic family suite (`provider_family::suite`): every
//! declared Kind of every family (150 repository and 24 webhook Kinds, and the legacy
//! examples); a new family gets it by adding one call to [`every_family_passes_the_suite`].

use std::sync::Arc;

use jfrog_sim::Simulator;
use provider_family::suite::{self, Mr, Suite};
use provider_family::{ClientCache, FamilyKind};
use serde_json::Value;

pub(crate) use provider_family::suite::{Env, NS, WAIT, converge};

/// Start both servers for provider-artifactory's `kinds` (see `suite::start`).
pub(crate) async fn start(kinds: &[Arc<FamilyKind>], cache: Arc<ClientCache>) -> Env {
    suite::start(crate::PROVIDER, kinds, cache).await
}

/// Reconcile every MR `rounds` times; none may write to JFrog.
pub(crate) async fn assert_no_writes(sim: &Simulator, mrs: &[Mr], rounds: usize) {
    suite::assert_no_writes(sim, mrs, rounds, &[]).await;
}

/// The suite over one family of provider-artifactory.
async fn family_suite(kinds: &[Arc<FamilyKind>], examples: Vec<(String, Value)>, every_kind: bool) {
    let s = Suite {
        provider: crate::PROVIDER,
        drift: suite::description_drift,
        deletes: suite::always_deletes,
        seed: suite::no_seed,
        read_calls: &[],
    };
    suite::family_suite(&s, kinds, examples, every_kind).await;
}

/// Every family: its Kinds' examples through the suite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_passes_the_suite() {
    // Webhooks: every Kind, plus the legacy examples.
    let mut examples: Vec<(String, Value)> = crate::webhook::tables::KINDS
        .iter()
        .map(|d| {
            (
                d.kind.to_string(),
                crate::webhook::examples::example(d, false),
            )
        })
        .collect();
    for d in crate::webhook::tables::KINDS
        .iter()
        .filter(|d| crate::webhook::examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((
            d.kind.to_string(),
            crate::webhook::examples::example(d, true),
        ));
    }
    family_suite(crate::webhook::kinds(), examples, true).await;

    // Repositories: every Kind (members before the virtual repositories that aggregate
    // them), plus the legacy examples.
    use crate::repository::{Class, class, examples as repo_examples, tables::KINDS as REPOS};
    let rank = |d: &provider_family::KindDecl| match class(d) {
        Class::Local => 0,
        Class::Remote => 1,
        Class::Federated => 2,
        Class::Virtual => 3,
    };
    let mut decls: Vec<_> = REPOS.iter().collect();
    decls.sort_by_key(|d| rank(d));
    let mut examples: Vec<(String, Value)> = decls
        .iter()
        .map(|d| (d.kind.to_string(), repo_examples::example(d, false)))
        .collect();
    for d in decls
        .iter()
        .filter(|d| repo_examples::LEGACY_KINDS.contains(&d.kind))
    {
        examples.push((d.kind.to_string(), repo_examples::example(d, true)));
    }
    family_suite(crate::repository::kinds(), examples, true).await;
}
