//! provider-artifactory's run of the generic family suite (`provider_family_suite`): every
//! declared Kind of every family (150 repository and 24 webhook Kinds, and the legacy
//! examples); a new family gets it by adding one call to [`every_family_passes_the_suite`].

use std::sync::Arc;

use jfrog_sim::Simulator;
use provider_family::{ClientCache, FamilyKind};
use provider_family_suite::{self as suite, Suite};
use provider_runtime::managed::ManagedKind;
use serde_json::Value;

pub(crate) use provider_family_suite::{Env, Mr, NS, WAIT, converge};

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
        removes: suite::never_removes,
        delete_last: &[],
        resets: &[],
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

/// [`start`] with a simulator configured as `sim` (e.g. another Artifactory version).
pub(crate) async fn start_with(
    kinds: &[Arc<FamilyKind>],
    cache: Arc<ClientCache>,
    sim: jfrog_sim::SimConfig,
) -> Env {
    suite::start_with(crate::PROVIDER, kinds, cache, sim).await
}

/// JFrog writes since the last reset of the simulator's counts.
pub(crate) fn writes(sim: &Simulator) -> u64 {
    suite::writes(sim, &[])
}

/// What a family of provider-artifactory may need beyond its examples.
pub(crate) struct FamilyNeeds {
    /// The simulator's configuration (e.g. the Artifactory version it answers as).
    pub(crate) sim: jfrog_sim::SimConfig,
    /// Kubernetes objects the examples refer to (Secrets), created first.
    pub(crate) objects: Vec<Value>,
    /// Objects that must exist in JFrog first (repositories a replication replicates):
    /// (key, repository configuration).
    pub(crate) repositories: Vec<(String, Value)>,
    /// The change made "in JFrog" to test that drift is reverted, by Kind (see
    /// `suite::Suite::drift`).
    pub(crate) drift: fn(&str) -> Option<(&'static str, Value)>,
}

/// The suite over one family of provider-artifactory with its [`FamilyNeeds`].
async fn family_suite_with(
    kinds: &[Arc<FamilyKind>],
    examples: Vec<(String, Value)>,
    needs: FamilyNeeds,
) {
    for k in kinds {
        assert!(
            examples.iter().any(|(n, _)| n == k.info().kind),
            "{} has no example in the suite",
            k.info().kind
        );
    }
    let s = Suite {
        provider: crate::PROVIDER,
        drift: needs.drift,
        deletes: suite::always_deletes,
        seed: suite::no_seed,
        read_calls: &[],
        removes: suite::never_removes,
        delete_last: &[],
        resets: &[],
    };
    // The provider's cache: the descriptor Kinds share its descriptors (one read and one
    // writer per platform).
    let cache = crate::client_cache(
        &provider_common::Connections::default(),
        crate::repository::bulk::BulkMode::Off,
    );
    let env = start_with(kinds, Arc::new(cache), needs.sim).await;
    env.create_objects(&needs.objects).await;
    for (key, config) in &needs.repositories {
        assert!(env.sim.put_repository_raw(key, config.clone()), "{key}");
    }
    suite::run(&s, env, kinds, examples).await;
}

/// The user, security and replication family: every Kind, plus the legacy examples.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_family_passes_the_suite() {
    use crate::access::examples;
    family_suite_with(
        crate::access::kinds(),
        examples::all_examples(),
        examples::suite(),
    )
    .await;
}

/// The change a person makes in JFrog to an object of `kind` (a configuration, lifecycle or
/// artifact Kind): its description where it has one, else its first mutable boolean
/// flipped (`null`); values JFrog does not return cannot drift.
fn configuration_drift(kind: &str) -> Option<(&'static str, Value)> {
    let k = crate::configuration::kinds()
        .iter()
        .find(|k| k.info().kind == kind)?;
    let params: Vec<_> = k
        .resolved()
        .params()
        .filter(|f| !f.immutable && !f.sensitive && !f.write_only)
        .filter(|f| f.norm != provider_family::Norm::KeepWhenServerEmpty)
        .filter(|f| f.wire.is_some())
        .collect();
    let (wire, edited) = match params.iter().find(|f| f.wire == Some("description")) {
        Some(f) => (f.wire?, serde_json::json!("edited in the UI")),
        None => (
            params
                .iter()
                .find(|f| matches!(f.ty, provider_family::Ty::Bool))?
                .wire?,
            Value::Null,
        ),
    };
    let pointer = format!("/{}", wire.replace('.', "/"));
    Some((Box::leak(pointer.into_boxed_str()), edited))
}

/// The configuration, lifecycle and artifact Kinds (the descriptor sections share one read
/// and one writer per platform).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_family_passes_the_suite() {
    use crate::configuration::examples;
    let mut objects = Vec::new();
    let mut all = Vec::new();
    for d in crate::configuration::tables::KINDS {
        objects.extend(examples::example_secret(d));
        all.push((d.kind.to_string(), examples::example(d)));
    }
    let repo = examples::EXAMPLE_REPOSITORY;
    family_suite_with(
        crate::configuration::kinds(),
        all,
        FamilyNeeds {
            sim: jfrog_sim::SimConfig::default(),
            objects,
            // The artifact examples deploy into the generic local repository example.
            repositories: vec![(
                repo.to_string(),
                serde_json::json!({"key": repo, "rclass": "local", "packageType": "generic"}),
            )],
            drift: configuration_drift,
        },
    )
    .await;
}
