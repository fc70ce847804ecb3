//! `sandbox bench`: how provider-artifactory performs at scale, measured the same way every time.
//!
//! Steps: start the sandbox as `up` does (embedded Kubernetes API test server, JFrog simulator,
//! CRDs, configs) with only `provider-artifactory`; sample its idle memory; generate N
//! repository managed resources from the shapes of `examples/` (7 local, 2 remote and 1
//! virtual in every 10, round-robin over the package types); server-side apply them concurrently;
//! watch them until all are Ready and Synced; then count the JFrog requests of K poll intervals
//! of steady state; report as a table (stdout) or JSON (`--json`).
//!
//! How the figures are obtained:
//! - Latency model: with `--latency-ms L` every JFrog request takes L. Reads (and Access/Xray
//!   calls) get it in front of the handler; repository writes (create/update/delete) spend it
//!   inside the simulator's configuration-descriptor window, where the platform serialises
//!   them (an overlapping write fails with "Could not merge and save new descriptor", the
//!   emulation is on). So N creations cannot take less than N x L: the reported lower bound.
//! - Time to Ready of an object: from the moment its apply was answered to the moment this
//!   command first saw `Ready=True` (the conditions' `lastTransitionTime` has only second
//!   resolution). It sees each object as the embedded Kubernetes API test server commits it,
//!   in the same process ([`kube_testserver::Observer::observe`]): a watch of its own over
//!   HTTPS would spend the cores the measured provider runs on (serialisation, TLS,
//!   decoding). "All Ready" is when every object was seen Ready and Synced, from the start
//!   of the applies.
//! - JFrog requests: the simulator's per-route counts, reset just before the first apply and
//!   read when all are Ready (creation); reset again, then read after K poll intervals and
//!   divided by K (steady state).
//! - Memory and CPU: `VmRSS`/`VmHWM` of `/proc/<pid>/status` and `utime + stime` of
//!   `/proc/<pid>/stat` (Linux only; absent elsewhere). Idle RSS is `VmRSS` once the provider
//!   leads and 2 s more have passed, before any managed resource exists.
//! - Start to first reconcile: there is no managed resource when the provider starts (idle
//!   memory is measured with none), so this is the sum of two measured parts: process start to
//!   the sandbox seeing it hold its leader Lease (checked every 50 ms), and the first apply to
//!   the first `Synced` condition seen on any of the objects (the first reconcile's result,
//!   including its JFrog calls). It over-estimates a start with existing objects slightly
//!   (the sandbox's Lease check interval).
//!
//! Fault runs (`--fault`, `--kill-every`, [`crate::chaos`]): the simulator's faults are added
//! just before the first apply and the provider is SIGKILLed periodically (restarted by the
//! `up` supervision) until `--fault-for` passed or all were Ready under them; then the faults
//! are removed, the providers must lead again and every object be Ready and Synced at once,
//! and the simulator's `bench-` repository keys are tallied against the expected ones
//! (duplicates, missing) for the verdict. `--delete` repeats that for the deletion.
//!
//! Other families (`--family G --provider P`, [`plan_family`]): renamed copies of the group's
//! example graph (copy suffix `-b<base 36>` on every name of an example), so that references
//! stay within a copy and identifiers are unique; what the copies reference from other groups
//! is created first as support objects (by other providers too, stopped before the
//! measurement) and not measured; singletons are measured once.
//!
//! Deviations: only the measured provider runs during the measurement (`--provider`, default
//! `provider-artifactory`); with `--family repository`, federated repositories and examples
//! that need Secrets or projects are not generated, and virtual repositories are generated
//! without members.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams};
use serde::Serialize;

use crate::Provider;
use crate::chaos::{self, FaultArg, FaultFigures, Injected, Killer};
use crate::children::ProviderChild;
use crate::kubeapi::{apply, is_legacy_group, kube_message, read_manifests};
use crate::progress::{self, ObjectState};
use crate::up::{self, Running, duration, repo_dir};
use provider_runtime::managed::kind::{IdentifierStrategy, Scope, api_group, pluralize};
use provider_runtime::managed::meta::EXTERNAL_NAME;

/// How many applies are in flight at once.
const APPLY_CONCURRENCY: usize = 32;

/// The namespace of the generated objects.
const BENCH_NAMESPACE: &str = "default";

/// The prefix of the generated objects' names (and so of their JFrog keys).
const BENCH_PREFIX: &str = "bench-";

/// Provider flags with `--kill-every`: a SIGKILLed leader does not release its Lease, so the
/// restarted process waits out the lease duration (60 s by default) before it leads.
const KILL_LEASE_FLAGS: [&str; 3] = [
    "--leader-election-lease-duration=5s",
    "--leader-election-renew-deadline=4s",
    "--leader-election-retry-period=1s",
];

/// The restart back-off with `--kill-every` (the run measures the recovery, not the back-off).
const KILL_RESTART_BACKOFF: Duration = Duration::from_secs(1);

/// Flags of `sandbox bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many managed resources to create.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub resources: usize,
    /// Which Kind family's examples to generate them from: `repository` (7 local, 2 remote
    /// and 1 virtual in every 10) or another group of provider-artifactory, e.g. `webhook`
    /// (round-robin over its namespaced examples).
    #[arg(long, value_name = "GROUP", default_value = "repository")]
    pub family: String,
    /// The provider whose family is measured (the only provider started); a family of
    /// another provider than provider-artifactory is generated round-robin from its
    /// namespaced examples, e.g. `--provider xray --family policy`.
    #[arg(long, value_enum, default_value = "artifactory")]
    pub provider: Provider,
    /// Latency of every JFrog request (and of each configuration write), in milliseconds.
    #[arg(long, value_name = "L", default_value_t = 50)]
    pub latency_ms: u64,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The provider's --poll (how often an up-to-date resource is checked for drift).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = duration)]
    pub poll: Duration,
    /// The provider's --max-reconcile-rate. A creation takes two reconciles (the create and
    /// the re-observe its create-succeeded annotation triggers; the create's back-off
    /// requeue is dropped once that ran, docs/managed-reconciler.md §1.3), each taking a token of the provider's bucket (burst 10 x R): below about 300 the
    /// provider's own budget, not the platform, is the limit of creation speed once
    /// repository writes are batched (1,000 repositories: 14.9 s at 100, 4.9 s at 300);
    /// a provider managing thousands of resources is sized up like this.
    #[arg(long, value_name = "R", default_value_t = 300)]
    pub max_reconcile_rate: u32,
    /// How many poll intervals of steady state to count requests over.
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub steady_polls: u32,
    /// Give up when not all are Ready and Synced after this long (with --fault or
    /// --kill-every: while the faults last, and again once they are removed).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = duration)]
    pub timeout: Duration,
    /// Where the repository shapes come from. Default: the repository's examples/.
    #[arg(long, value_name = "DIR")]
    pub examples: Option<PathBuf>,
    /// Directory of the CRDs to install. Default: the repository's crds/.
    #[arg(long, value_name = "DIR")]
    pub crds: Option<PathBuf>,
    /// Keep the state files (kubeconfig, provider log) in DIR.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// An extra flag passed to the provider (repeatable).
    #[arg(long = "provider-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub provider_args: Vec<String>,
    /// Measure DIR/provider-artifactory (`cargo build --release -p provider-artifactory`)
    /// instead of this executable's built-in copy (`sandbox provider artifactory`, the same
    /// code in a larger executable, so its RSS is a few MiB higher).
    #[arg(long, value_name = "DIR")]
    pub provider_bin: Option<PathBuf>,
    /// Inject a simulator fault on every JFrog request while the objects are created
    /// (repeatable): `5xx:RATE` (503), `429:RATE[:RETRY_AFTER]`, `lost:RATE` (a POST, PUT,
    /// PATCH or DELETE committed but its answer lost), `latency:DURATION[:JITTER]`; RATE is
    /// 0.2 or 20%. The faults are removed before the final count; the report says what they
    /// did, what JFrog holds at the end and whether the run passed (exit status 1 if not).
    #[arg(long = "fault", value_name = "SPEC", value_parser = chaos::parse_fault)]
    pub faults: Vec<FaultArg>,
    /// SIGKILL the provider each time it has led for this long (from the first apply), while
    /// the faults last; the sandbox's supervision starts it again (back-off 1 s) and the next
    /// process leads once the dead one's leader-election Lease (5 s here) expired.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub kill_every: Option<Duration>,
    /// How long faults and kills last from the first apply. Default: until every object has
    /// been Ready and Synced under them and, with --kill-every, the provider was killed once
    /// (or --timeout).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub fault_for: Option<Duration>,
    /// With --fault or --kill-every: then delete every object under the same faults and
    /// kills (for --fault-for again, or until all are gone), and check that neither JFrog nor
    /// Kubernetes holds any of them once the faults are removed.
    #[arg(long)]
    pub delete: bool,
    /// Run the provider as this many active replicas (`sandbox up --replicas`), each with
    /// `--shards` (default: one shard per replica); the report gives each replica's RSS.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub replicas: u32,
    /// The providers' `--shards` (docs/managed-reconciler.md §15.8). Default: 1 with one
    /// replica (leader election), else one per replica.
    #[arg(long, value_name = "N")]
    pub shards: Option<u32>,
    /// With --replicas: SIGKILL the last replica this long after the first apply (the
    /// sandbox's supervision starts it again, as a Deployment would); the report says when the
    /// others held its shards and counts JFrog's repositories against those expected.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub kill_replica_after: Option<Duration>,
}

impl Args {
    /// The providers' `--shards`.
    fn shards(&self) -> u32 {
        self.shards
            .unwrap_or(if self.replicas > 1 { self.replicas } else { 1 })
    }

    /// Whether this is a fault run (`--fault` or `--kill-every`).
    fn chaos(&self) -> bool {
        !self.faults.is_empty() || self.kill_every.is_some()
    }
}

/// What a fault run (`--fault`, `--kill-every`) did and left.
#[derive(Debug, Serialize)]
pub struct FaultReport {
    /// Per `--fault`: requests matched and failed.
    pub faults: Vec<FaultFigures>,
    pub faults_fired: u64,
    pub kill_every_seconds: Option<f64>,
    pub kills: u32,
    /// Provider processes started again by the supervision.
    pub restarts: u32,
    /// From the first apply to the faults' removal.
    pub fault_seconds: f64,
    /// From the first apply until every object had been seen Ready and Synced while the
    /// faults lasted (none if they never all were).
    pub ready_under_faults_seconds: Option<f64>,
    /// From the first apply until every object was Ready and Synced at once, after the
    /// faults were removed.
    pub converged_seconds: Option<f64>,
    /// JFrog objects expected at the end (one repository per object).
    pub expected_objects: usize,
    /// JFrog objects of the bench's prefix at the end.
    pub jfrog_objects: usize,
    /// Objects of the bench's prefix JFrog holds beyond the expected ones.
    pub duplicates: usize,
    /// Expected objects JFrog does not hold.
    pub missing: usize,
    /// Managed resources not Ready and Synced at the end.
    pub not_ready: usize,
    /// With `--delete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete: Option<DeleteFigures>,
    /// 0 duplicates, 0 missing, every managed resource Ready and Synced (and with `--delete`,
    /// nothing left in JFrog or Kubernetes).
    pub pass: bool,
}

/// The deletion under faults (`--delete`); the fault run's `faults`, `kills` and `restarts`
/// include it.
#[derive(Debug, Serialize)]
pub struct DeleteFigures {
    /// Per `--fault`, during the deletion.
    pub faults: Vec<FaultFigures>,
    pub kills: u32,
    /// From the first delete to the faults' removal.
    pub fault_seconds: f64,
    /// From the first delete until no managed resource was left (none if some were).
    pub gone_seconds: Option<f64>,
    /// Deletes the Kubernetes API refused.
    pub delete_failures: Vec<String>,
    /// Managed resources left at the end.
    pub mrs_left: usize,
    /// JFrog objects of the bench's prefix left at the end.
    pub jfrog_objects_left: usize,
}

/// The figures of one provider process.
#[derive(Debug, Serialize)]
pub struct ProviderFigures {
    pub name: String,
    pub pid: u32,
    /// The executable and flags the provider ran with.
    pub command: String,
    pub idle_rss_mib: Option<f64>,
    pub peak_rss_mib: Option<f64>,
    /// At the end of the steady state (after `--steady-polls` polls of every object).
    pub steady_rss_mib: Option<f64>,
    pub cpu_seconds: Option<f64>,
    pub start_to_leader_seconds: Option<f64>,
    pub apply_to_first_synced_seconds: Option<f64>,
    pub start_to_first_reconcile_seconds: Option<f64>,
}

/// The report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The Kind family the objects belong to (`repository`, `webhook`, ...).
    pub family: String,
    /// The measured provider.
    pub provider: String,
    /// `--resources`.
    pub requested_resources: usize,
    /// The measured objects: `--resources`, or fewer when the family has singletons only.
    pub resources: usize,
    /// Kinds of the family measured once at most (singletons, adopted objects).
    pub measured_once: Vec<String>,
    /// Kinds of the family left out, with the reason.
    pub not_measured: Vec<String>,
    /// Objects the measured ones need (other groups' objects, Secrets), created and Ready
    /// before the measurement and not counted in it.
    pub support_objects: usize,
    pub support_by_kind: BTreeMap<String, usize>,
    /// Providers started for the support objects only, stopped before the measurement.
    pub support_providers: Vec<String>,
    /// The measured provider's requests per poll for its own support objects, counted before
    /// the measurement and subtracted from the steady state below.
    pub support_steady_requests_per_poll_total: f64,
    pub latency_ms: u64,
    pub poll_seconds: f64,
    pub max_reconcile_rate: u32,
    pub steady_polls: u32,
    pub by_class: BTreeMap<String, usize>,
    pub applied: usize,
    pub apply_failures: Vec<String>,
    /// The objects not Ready and Synced at the end, with their failure.
    pub not_ready: Vec<String>,
    pub ready: usize,
    pub all_ready: bool,
    pub all_ready_seconds: Option<f64>,
    pub ready_p50_seconds: Option<f64>,
    pub ready_p99_seconds: Option<f64>,
    pub ready_max_seconds: Option<f64>,
    pub lower_bound_seconds: f64,
    pub ratio_to_lower_bound: Option<f64>,
    /// From the first apply to the simulator's first repository write, and to its N-th
    /// (sampled every 100 ms): how long the writes themselves took, against N x L.
    pub first_write_seconds: Option<f64>,
    pub last_write_seconds: Option<f64>,
    /// From the first apply to the answer of the last one: how fast the objects arrived.
    pub applies_seconds: Option<f64>,
    pub creation_requests: BTreeMap<String, u64>,
    pub creation_requests_total: u64,
    pub creation_requests_per_resource: f64,
    /// The providers' writes to the Kubernetes API during creation, by verb (`update`,
    /// `update/status`, `create`, `patch`, ...): what a creation costs the API server.
    pub kube_writes_creation: BTreeMap<String, u64>,
    pub kube_writes_creation_per_resource: f64,
    /// The providers' reads of the Kubernetes API over the same span, by verb (`get`,
    /// `list`, `watch`): a reconcile reads its MR (step 1), and a watch that ends is opened
    /// again.
    pub kube_reads_creation: BTreeMap<String, u64>,
    pub kube_reads_creation_per_resource: f64,
    /// CPU seconds from the first apply until every object was Ready (or the wait ended):
    /// `sandbox` is this process (the Kubernetes API test server, the simulator and the
    /// bench itself), `providers` the provider processes alive at both ends. On a machine
    /// whose cores both are busy, their sum over the cores is what bounds creation.
    pub creation_cpu_seconds_sandbox: Option<f64>,
    pub creation_cpu_seconds_providers: Option<f64>,
    pub steady_requests_per_poll: BTreeMap<String, f64>,
    pub steady_requests_per_poll_total: f64,
    pub steady_requests_per_resource_per_poll: f64,
    pub providers: Vec<ProviderFigures>,
    /// With `--fault` or `--kill-every`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault_run: Option<FaultReport>,
    /// With `--replicas`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard_run: Option<ShardRun>,
}

/// What a run with several replicas (`--replicas`) measured.
#[derive(Debug, Serialize)]
pub struct ShardRun {
    pub replicas: u32,
    pub shards: u32,
    /// The replica SIGKILLed (`--kill-replica-after`), and when, after the first apply.
    pub killed: Option<String>,
    pub killed_after_seconds: Option<f64>,
    /// From the kill until every shard Lease was held by another process.
    pub takeover_seconds: Option<f64>,
    pub restarts: u32,
    /// Repositories expected and found in JFrog at the end (repository family).
    pub expected_objects: usize,
    pub jfrog_objects: Option<usize>,
    pub duplicates: Option<usize>,
    pub missing: Option<usize>,
}

/// One generated object.
struct Generated {
    resource: ApiResource,
    object: DynamicObject,
}

/// Runs `sandbox bench`.
pub async fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.resources > 0, "--resources must be at least 1");
    anyhow::ensure!(args.steady_polls > 0, "--steady-polls must be at least 1");
    anyhow::ensure!(
        !args.chaos() || (args.family == "repository" && args.provider == Provider::Artifactory),
        "--fault and --kill-every count the JFrog objects at the end by repository key: \
         they need --family repository --provider artifactory"
    );
    anyhow::ensure!(
        !args.delete || args.chaos(),
        "--delete goes with --fault or --kill-every"
    );
    anyhow::ensure!(
        args.kill_every.is_none_or(|d| !d.is_zero()),
        "--kill-every must be longer than 0"
    );
    anyhow::ensure!(
        args.kill_replica_after.is_none() || (args.replicas > 1 && !args.chaos()),
        "--kill-replica-after needs --replicas 2 or more, and no --fault or --kill-every"
    );
    anyhow::ensure!(
        !args.chaos() || args.shards() == 1,
        "--fault and --kill-every follow the leader-election Lease: they go without --shards          (use --kill-replica-after with --replicas)"
    );
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        up::shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let mut running = Running::default();
    let result = tokio::select! {
        r = bench(&args, &mut running) => r,
        _ = stop_rx.wait_for(|s| *s) => Err(anyhow::anyhow!("interrupted")),
    };
    up::shutdown(running).await;
    let report = result?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", table(&report));
    }
    if let Some(f) = &report.fault_run {
        anyhow::ensure!(
            f.pass,
            "fault run failed: {} duplicates, {} missing, {} not Ready and Synced",
            f.duplicates,
            f.missing,
            f.not_ready
        );
    }
    if let Some(x) = &report.shard_run {
        anyhow::ensure!(
            x.duplicates.unwrap_or(0) == 0 && x.missing.unwrap_or(0) == 0,
            "run with {} replicas: {:?} duplicates, {:?} missing",
            x.replicas,
            x.duplicates,
            x.missing
        );
        anyhow::ensure!(
            x.killed.is_none() || x.takeover_seconds.is_some(),
            "the killed replica's shards were not taken over"
        );
    }
    anyhow::ensure!(
        report.all_ready,
        "{} of {} not Ready and Synced after {}",
        report.resources - report.ready,
        report.resources,
        humantime::format_duration(args.timeout)
    );
    Ok(())
}

async fn bench(args: &Args, running: &mut Running) -> anyhow::Result<Report> {
    let examples = args
        .examples
        .clone()
        .unwrap_or_else(|| repo_dir("examples"));
    let repository_family = args.family == "repository" && args.provider == Provider::Artifactory;
    // Any other family is planned from the code's Kinds before anything starts: its support
    // objects may need other providers, which run only until those are Ready.
    let code = code_kinds();
    let plan = if repository_family {
        None
    } else {
        let manifests = family_manifests(&examples)?;
        Some(plan_family(
            &manifests,
            &code,
            args.resources,
            &args.family,
            args.provider,
        )?)
    };
    let support_providers = plan
        .as_ref()
        .map(|p| p.support_providers(&code, args.provider))
        .unwrap_or_default();
    let up_args = up::Args {
        state_dir: args.state_dir.clone(),
        jfrog_latency_ms: args.latency_ms,
        artifactory_version: jfrog_sim::SimConfig::default().artifactory_version,
        jfrog_saas: false,
        poll: args.poll,
        once: true,
        timeout: args.timeout,
        apply: Vec::new(),
        no_apply: true,
        crds: args.crds.clone(),
        activate: Vec::new(),
        providers: std::iter::once(args.provider)
            .chain(support_providers.iter().copied())
            .collect(),
        packages: Vec::new(),
        shards: args.shards(),
        replicas: args.replicas.max(1),
        provider_args: std::iter::once(format!("--max-reconcile-rate={}", args.max_reconcile_rate))
            .chain(
                KILL_LEASE_FLAGS
                    .iter()
                    .filter(|_| args.kill_every.is_some())
                    .map(|f| f.to_string()),
            )
            .chain(args.provider_args.iter().cloned())
            .collect(),
        provider_bin: args.provider_bin.clone(),
        kubeconfig: None,
        jfrog_url: None,
        jfrog_token_file: None,
        injected_identity: false,
        oidc_token_lifetime: None,
        latency_in_descriptor: true,
        restart_backoff_max: if args.kill_every.is_some() {
            KILL_RESTART_BACKOFF
        } else {
            crate::children::MAX_BACKOFF
        },
    };
    let client = up::start(&up_args, running).await?;
    let (generated, support, measured_once, not_measured) = match plan {
        None => {
            let kinds = progress::managed_kinds(&client).await?;
            (
                generate(&examples, &kinds, args.resources)?,
                Vec::new(),
                Vec::new(),
                Vec::new(),
            )
        }
        Some(p) => (p.measured, p.support, p.measured_once, p.not_measured),
    };
    let mut by_class = BTreeMap::new();
    for g in &generated {
        let class = if args.family == "repository" {
            class_of(&g.resource.kind)
        } else {
            g.resource.kind.clone()
        };
        *by_class.entry(class).or_insert(0) += 1;
    }

    // Idle: the provider leads, its caches are synced, nothing to manage.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle: HashMap<u32, Option<f64>> = running
        .children
        .iter()
        .map(|c| (c.pid, proc_status_kib(c.pid, "VmRSS").map(mib)))
        .collect();

    // The support objects: created, Ready and Synced before the measurement; the other
    // providers they needed are stopped then, and the measured provider's requests for its
    // own support objects in steady state are counted apart (and subtracted).
    let mut support_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for g in &support {
        *support_by_kind.entry(g.resource.kind.clone()).or_insert(0) += 1;
    }
    let mut support_steady: BTreeMap<String, u64> = BTreeMap::new();
    if !support.is_empty() {
        create_support(&client, &support, args.timeout).await?;
        let (others, measured): (Vec<_>, Vec<_>) = std::mem::take(&mut running.children)
            .into_iter()
            .partition(|c| c.provider != args.provider);
        running.children = measured;
        let mut others = others;
        crate::children::stop_all(&mut others, Duration::from_secs(10)).await;
        let own = support
            .iter()
            .filter(|g| {
                code.iter().any(|k| {
                    k.provider == args.provider
                        && k.resource.api_version == g.resource.api_version
                        && k.resource.kind == g.resource.kind
                })
            })
            .count();
        if own > 0 {
            let sim = running
                .sim
                .as_ref()
                .context("the bench needs the embedded simulator")?;
            sim.reset_counts();
            tokio::time::sleep(args.poll * args.steady_polls).await;
            support_steady = sim.request_counts();
        }
    }

    // Watch the Kinds used, recording when each object is first seen Synced and Ready.
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut used: Vec<ApiResource> = Vec::new();
    for g in &generated {
        if !used.iter().any(|r| r.kind == g.resource.kind) {
            used.push(g.resource.clone());
        }
    }
    // Observed in this process, as the test server commits them: a watch of the bench's own
    // over HTTPS would take CPU (serialisation, TLS, decoding) from the provider it measures.
    let observer = running
        .observer()
        .context("the bench needs the embedded Kubernetes API test server")?;
    let mut tasks = Vec::new();
    for r in &used {
        let observer = observer.clone();
        let seen = seen.clone();
        let (kind, group, plural) = (r.kind.clone(), r.group.clone(), r.plural.clone());
        tasks.push(tokio::spawn(async move {
            let see = |obj: &serde_json::Value| {
                if obj.pointer(&format!("/metadata/labels/{BENCH_LABEL}"))
                    != Some(&serde_json::Value::from("true"))
                {
                    return;
                }
                let name = obj.pointer("/metadata/name").and_then(|n| n.as_str());
                let key = (kind.clone(), name.unwrap_or_default().to_string());
                let state = ObjectState::of_json(obj);
                let now = Instant::now();
                let mut s = seen.lock().unwrap_or_else(PoisonError::into_inner);
                // A failing first reconcile is a reconcile too.
                if state.synced || state.failure.is_some() {
                    s.first_synced.get_or_insert(now);
                }
                if state.ready {
                    s.ready.entry(key.clone()).or_insert(now);
                }
                match &state.failure {
                    Some(f) => s.failures.insert(key.clone(), f.clone()),
                    None => s.failures.remove(&key),
                };
                s.current.insert(key.clone(), state.ready && state.synced);
                if state.ready && state.synced {
                    s.done.entry(key).or_insert(now);
                }
            };
            // Observed again after the server ends its watches (a restart fault).
            loop {
                let mut observed = observer.observe(&group, &plural, Some(BENCH_NAMESPACE));
                for obj in std::mem::take(&mut observed.objects) {
                    see(&obj);
                }
                while let Some((obj, deleted)) = observed.next().await {
                    if !deleted {
                        see(&obj);
                    }
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    let _abort = AbortOnDrop(tasks);

    // Create.
    let sim = running
        .sim
        .as_ref()
        .context("the bench needs the embedded simulator")?;
    let expected: BTreeSet<String> = generated
        .iter()
        .filter_map(|g| g.object.metadata.name.clone())
        .collect();
    let targets: Vec<(ApiResource, String)> = generated
        .iter()
        .filter_map(|g| Some((g.resource.clone(), g.object.metadata.name.clone()?)))
        .collect();
    sim.reset_counts();
    let injected = Injected::add(sim, &args.faults);
    let kube_before = running.kube_request_counts();
    let cpu_before = CreationCpu::now(&running.children);
    let apply_started = Instant::now();
    let mut tending = Tending {
        leases: Api::namespaced(client.clone(), crate::setup::NAMESPACE),
        apply_started,
        killer: Killer::new(args.kill_every, apply_started),
        replica_kill: ReplicaKill::default(),
    };
    let generated_len = generated.len();
    // The simulator's first write is sampled while the applies run too, not only after them.
    let applies_done = std::sync::atomic::AtomicBool::new(false);
    let write_sampler = async {
        while !applies_done.load(std::sync::atomic::Ordering::Relaxed) {
            let by = by_method(&sim.request_counts());
            if by.get("PUT").copied().unwrap_or(0) + by.get("PATCH").copied().unwrap_or(0) > 0 {
                return Some(Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        None
    };
    let applying = async {
        let results: Vec<Result<(String, Instant), String>> = futures::stream::iter(generated)
            .map(|g| {
                let client = client.clone();
                async move {
                    let name = g.object.metadata.name.clone().unwrap_or_default();
                    match apply(&client, &g.resource, true, &g.object).await {
                        Ok(_) => Ok((format!("{}/{name}", g.resource.kind), Instant::now())),
                        Err(e) => Err(format!("{} {name}: {}", g.resource.kind, kube_message(&e))),
                    }
                }
            })
            .buffer_unordered(APPLY_CONCURRENCY)
            .collect()
            .await;
        applies_done.store(true, std::sync::atomic::Ordering::Relaxed);
        results
    };
    // The kills (--kill-every, --kill-replica-after) land while the applies run, not after them.
    let tending_while_applying = async {
        while !applies_done.load(std::sync::atomic::Ordering::Relaxed) {
            tending.tick(args, &mut running.children).await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        anyhow::Ok(())
    };
    let (results, first_write_while_applying, tended) =
        tokio::join!(applying, write_sampler, tending_while_applying);
    tended?;
    let mut applied_at: HashMap<String, Instant> = HashMap::new();
    let mut apply_failures = Vec::new();
    for r in results {
        match r {
            Ok((k, t)) => {
                applied_at.insert(k, t);
            }
            Err(f) => apply_failures.push(f),
        }
    }
    let deadline = apply_started + args.timeout;
    // When the simulator saw the first and the N-th write (sampled with the Ready check).
    let mut first_write: Option<Instant> = first_write_while_applying;
    let mut last_write: Option<Instant> = None;
    let mut all_done_at = None;
    loop {
        let by = by_method(&sim.request_counts());
        let writes: u64 = by.get("PUT").copied().unwrap_or(0);
        // Bulk repository writes arrive as descriptor patches (N of them never come).
        if writes + by.get("PATCH").copied().unwrap_or(0) > 0 {
            first_write.get_or_insert_with(Instant::now);
        }
        if writes >= generated_len as u64 && last_write.is_none() {
            last_write = Some(Instant::now());
        }
        tending.tick(args, &mut running.children).await?;
        let done = seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .done
            .len();
        if done >= applied_at.len() {
            all_done_at.get_or_insert_with(Instant::now);
        }
        // A replica killed: done once its shards were taken over too.
        let killed_done =
            args.kill_replica_after.is_none() || tending.replica_kill.taken_over.is_some();
        let over = if args.chaos() {
            // Without --fault-for: until all were Ready, and the provider was killed once.
            chaos::phase_over(
                args.fault_for,
                apply_started,
                all_done_at.is_some() && (args.kill_every.is_none() || tending.killer.kills > 0),
            )
        } else {
            all_done_at.is_some() && killed_done
        };
        if over || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let creation_counts = sim.request_counts();
    let creation_cpu = CreationCpu::now(&running.children).since(&cpu_before);
    let kube_after = running.kube_request_counts();
    let kube_creation = kube_counts(kube_before.as_ref(), kube_after.as_ref(), WRITE_VERBS);
    let kube_reads = kube_counts(kube_before.as_ref(), kube_after.as_ref(), READ_VERBS);
    // A fault run: the faults go, the kills stop, and every object must converge.
    let mut fault_run = None;
    let mut converged_at = None;
    if args.chaos() {
        let faults = injected.clear(sim);
        let fault_seconds = apply_started.elapsed().as_secs_f64();
        eprintln!("faults removed after {fault_seconds:.1}s; waiting for every object to converge");
        // Converging without the faults gets a --timeout of its own.
        let deadline = Instant::now() + args.timeout;
        // The killed providers run again, and lead, before anything counts as converged.
        tending
            .killer
            .recover(&mut running.children, &tending.leases, deadline)
            .await?;
        converged_at = loop {
            if current_done(&seen) >= expected.len() {
                break Some(Instant::now());
            }
            if Instant::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let tally = chaos::tally(&expected, jfrog_keys(sim).iter().map(String::as_str));
        let not_ready = expected.len().saturating_sub(current_done(&seen));
        let since = |t: Option<Instant>| {
            t.map(|t| t.saturating_duration_since(apply_started).as_secs_f64())
        };
        fault_run = Some(FaultReport {
            faults_fired: faults.iter().map(|f| f.fired).sum(),
            faults,
            kill_every_seconds: args.kill_every.map(|d| d.as_secs_f64()),
            kills: tending.killer.kills,
            restarts: running
                .children
                .iter()
                .map(|c| c.supervision.restarts)
                .sum(),
            fault_seconds,
            ready_under_faults_seconds: since(all_done_at),
            converged_seconds: since(converged_at),
            expected_objects: expected.len(),
            jfrog_objects: tally.found,
            duplicates: tally.duplicates,
            missing: tally.missing,
            not_ready,
            delete: None,
            pass: tally.duplicates == 0 && tally.missing == 0 && not_ready == 0,
        });
    }
    let all_ready_at = if args.chaos() {
        converged_at
    } else {
        all_done_at
    };
    let ready = if args.chaos() {
        current_done(&seen)
    } else {
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .done
            .len()
    };
    let (seen_ready, first_synced, done_times, not_ready) = {
        let s = seen.lock().unwrap_or_else(PoisonError::into_inner);
        let mut not_ready: Vec<String> = targets
            .iter()
            .map(|(r, name)| (r.kind.clone(), name.clone()))
            .filter(|k| !s.current.get(k).copied().unwrap_or(false))
            .map(|k| {
                let why = s.failures.get(&k).map_or("not Ready yet", String::as_str);
                format!("{} {}: {why}", k.0, k.1)
            })
            .collect();
        not_ready.sort();
        (s.ready.clone(), s.first_synced, s.done.clone(), not_ready)
    };
    let all_ready_at = all_ready_at.map(|t| {
        // The loop checks every 100 ms: the last object's own time is more exact (not after
        // faults: objects were Ready once, then maybe not).
        if args.chaos() {
            t
        } else {
            done_times.values().copied().max().unwrap_or(t)
        }
    });

    let mut to_ready: Vec<f64> = seen_ready
        .iter()
        .filter_map(|((kind, name), t)| {
            applied_at
                .get(&format!("{kind}/{name}"))
                .map(|a| t.saturating_duration_since(*a).as_secs_f64())
        })
        .collect();
    to_ready.sort_by(f64::total_cmp);

    // Steady state.
    let mut steady_counts = BTreeMap::new();
    if all_ready_at.is_some() {
        sim.reset_counts();
        tokio::time::sleep(args.poll * args.steady_polls).await;
        steady_counts = sim.request_counts();
    }
    let steady_rss: HashMap<u32, Option<f64>> = running
        .children
        .iter()
        .map(|c| (c.pid, proc_status_kib(c.pid, "VmRSS").map(mib)))
        .collect();
    let tally = (args.replicas > 1 && repository_family)
        .then(|| chaos::tally(&expected, jfrog_keys(sim).iter().map(String::as_str)));
    if args.delete
        && let Some(f) = fault_run.as_mut()
    {
        let d = delete_under_faults(
            args,
            running,
            &client,
            &tending.leases,
            &mut tending.killer,
            &targets,
        )
        .await?;
        for (total, phase) in f.faults.iter_mut().zip(&d.faults) {
            total.matched += phase.matched;
            total.fired += phase.fired;
        }
        f.faults_fired = f.faults.iter().map(|x| x.fired).sum();
        f.kills = tending.killer.kills;
        f.restarts = running
            .children
            .iter()
            .map(|c| c.supervision.restarts)
            .sum();
        f.pass &= d.mrs_left == 0 && d.jfrog_objects_left == 0;
        f.delete = Some(d);
    }

    let providers = running
        .children
        .iter()
        .map(|c| {
            let to_leader = c
                .leader_at
                .map(|t| t.saturating_duration_since(c.spawned).as_secs_f64());
            let first =
                first_synced.map(|t| t.saturating_duration_since(apply_started).as_secs_f64());
            ProviderFigures {
                // The replica: `provider-<name>[-<i>]`, as its log and pid file are named.
                name: c
                    .log
                    .file_stem()
                    .map_or_else(|| c.provider.name(), |f| f.to_string_lossy().into_owned()),
                pid: c.pid,
                command: std::fs::read(format!("/proc/{}/cmdline", c.pid))
                    .map(|b| {
                        b.split(|c| *c == 0)
                            .filter(|a| !a.is_empty())
                            .map(|a| String::from_utf8_lossy(a).into_owned())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default(),
                idle_rss_mib: idle.get(&c.pid).copied().flatten(),
                peak_rss_mib: proc_status_kib(c.pid, "VmHWM").map(mib),
                steady_rss_mib: steady_rss.get(&c.pid).copied().flatten(),
                cpu_seconds: cpu_seconds(c.pid),
                start_to_leader_seconds: to_leader,
                apply_to_first_synced_seconds: first,
                // A restarted process did not make the first reconcile.
                start_to_first_reconcile_seconds: to_leader
                    .zip(first)
                    .map(|(a, b)| a + b)
                    .filter(|_| c.supervision.restarts == 0),
            }
        })
        .collect();

    let shard_run = (args.replicas > 1).then(|| ShardRun {
        replicas: args.replicas,
        shards: args.shards(),
        killed: tending.replica_kill.killed.as_ref().map(|k| k.name.clone()),
        killed_after_seconds: tending
            .replica_kill
            .killed
            .as_ref()
            .map(|k| k.at.saturating_duration_since(apply_started).as_secs_f64()),
        takeover_seconds: tending
            .replica_kill
            .killed
            .as_ref()
            .zip(tending.replica_kill.taken_over)
            .map(|(k, t)| t.saturating_duration_since(k.at).as_secs_f64()),
        restarts: running
            .children
            .iter()
            .map(|c| c.supervision.restarts)
            .sum(),
        expected_objects: expected.len(),
        jfrog_objects: tally.as_ref().map(|t| t.found),
        duplicates: tally.as_ref().map(|t| t.duplicates),
        missing: tally.as_ref().map(|t| t.missing),
    });
    let n = generated_len;
    let creation_requests = by_method(&creation_counts);
    let creation_requests_total: u64 = creation_requests.values().sum();
    let per_poll = |counts: &BTreeMap<String, u64>| -> BTreeMap<String, f64> {
        by_method(counts)
            .into_iter()
            .map(|(m, c)| (m, c as f64 / f64::from(args.steady_polls)))
            .collect()
    };
    let support_steady = per_poll(&support_steady);
    // Net of the support objects' own polls, counted alone before the measurement.
    let steady_requests_per_poll: BTreeMap<String, f64> = per_poll(&steady_counts)
        .into_iter()
        .map(|(m, c)| {
            let own = support_steady.get(&m).copied().unwrap_or(0.0);
            (m, (c - own).max(0.0))
        })
        .collect();
    let steady_total: f64 = steady_requests_per_poll.values().fold(0.0, |a, b| a + b);
    let lower_bound = n as f64 * args.latency_ms as f64 / 1000.0;
    let all_ready_seconds =
        all_ready_at.map(|t| t.saturating_duration_since(apply_started).as_secs_f64());
    Ok(Report {
        family: args.family.clone(),
        provider: args.provider.name(),
        requested_resources: args.resources,
        resources: n,
        measured_once,
        not_measured,
        support_objects: support.len(),
        support_by_kind,
        support_providers: support_providers.iter().map(|p| p.name()).collect(),
        support_steady_requests_per_poll_total: support_steady.values().sum(),
        latency_ms: args.latency_ms,
        poll_seconds: args.poll.as_secs_f64(),
        max_reconcile_rate: args.max_reconcile_rate,
        steady_polls: args.steady_polls,
        by_class,
        applied: applied_at.len(),
        apply_failures,
        not_ready,
        ready,
        all_ready: all_ready_at.is_some() && ready == n,
        all_ready_seconds,
        ready_p50_seconds: percentile(&to_ready, 0.50),
        ready_p99_seconds: percentile(&to_ready, 0.99),
        ready_max_seconds: to_ready.last().copied(),
        lower_bound_seconds: lower_bound,
        first_write_seconds: first_write
            .map(|t| t.saturating_duration_since(apply_started).as_secs_f64()),
        last_write_seconds: last_write
            .map(|t| t.saturating_duration_since(apply_started).as_secs_f64()),
        applies_seconds: applied_at
            .values()
            .max()
            .map(|t| t.saturating_duration_since(apply_started).as_secs_f64()),
        ratio_to_lower_bound: all_ready_seconds
            .filter(|_| lower_bound > 0.0)
            .map(|s| s / lower_bound),
        creation_requests_total,
        creation_requests_per_resource: creation_requests_total as f64 / n as f64,
        creation_requests,
        kube_writes_creation_per_resource: kube_creation.values().sum::<u64>() as f64 / n as f64,
        kube_writes_creation: kube_creation,
        kube_reads_creation_per_resource: kube_reads.values().sum::<u64>() as f64 / n as f64,
        kube_reads_creation: kube_reads,
        creation_cpu_seconds_sandbox: creation_cpu.sandbox,
        creation_cpu_seconds_providers: creation_cpu.providers,
        steady_requests_per_poll_total: steady_total,
        steady_requests_per_resource_per_poll: steady_total / n as f64,
        steady_requests_per_poll,
        providers,
        fault_run,
        shard_run,
    })
}

/// CPU seconds used so far by this process and by each provider process.
struct CreationCpu {
    sandbox: Option<f64>,
    providers: BTreeMap<u32, f64>,
}

/// What [`CreationCpu::since`] gives: the CPU used between two readings.
struct CpuUsed {
    sandbox: Option<f64>,
    providers: Option<f64>,
}

impl CreationCpu {
    fn now(children: &[ProviderChild]) -> Self {
        CreationCpu {
            sandbox: cpu_seconds(std::process::id()),
            providers: children
                .iter()
                .filter_map(|c| Some((c.pid, cpu_seconds(c.pid)?)))
                .collect(),
        }
    }

    /// The CPU used since `before`; a provider restarted in between (a new pid) counts only
    /// where it was read at both ends.
    fn since(&self, before: &CreationCpu) -> CpuUsed {
        let both: Vec<f64> = self
            .providers
            .iter()
            .filter_map(|(pid, now)| Some(now - before.providers.get(pid)?))
            .collect();
        CpuUsed {
            sandbox: self.sandbox.zip(before.sandbox).map(|(a, b)| a - b),
            providers: (!both.is_empty()).then(|| both.iter().sum()),
        }
    }
}

/// `--kill-replica-after`: the replica killed, and when its shards were held by others.
#[derive(Default)]
struct ReplicaKill {
    killed: Option<KilledReplica>,
    taken_over: Option<Instant>,
}

struct KilledReplica {
    /// The replica's name (its log file's stem).
    name: String,
    /// The shard Lease holders it had when it was killed.
    held: Vec<String>,
    at: Instant,
}

/// What the bench does to the provider processes while it waits, during the applies and
/// after them: the chaos kills (`--kill-every`), the replica kill (`--kill-replica-after`)
/// and the takeover of its shards, with crashed replicas started again as a Deployment's pods
/// are; otherwise a process that exits is an error.
struct Tending {
    leases: Api<Lease>,
    /// The first apply, from which `--kill-replica-after` counts.
    apply_started: Instant,
    killer: Killer,
    replica_kill: ReplicaKill,
}

impl Tending {
    /// One look at the processes (every 100 ms).
    async fn tick(&mut self, args: &Args, children: &mut [ProviderChild]) -> anyhow::Result<()> {
        let leases = &self.leases;
        let kill = &mut self.replica_kill;
        if args.chaos() {
            self.killer.tick(children, leases, true).await?;
            return Ok(());
        }
        let Some(after) = args.kill_replica_after else {
            return crate::children::bail_if_exited(children, "unexpectedly");
        };
        if kill.killed.is_none()
            && self.apply_started.elapsed() >= after
            && let Some(c) = children.last_mut()
        {
            let held = up::holders(leases, c.provider, args.shards())
                .await
                .unwrap_or_default();
            let name = c
                .log
                .file_stem()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let prefix = format!("{}-{}_", c.provider.name(), args.replicas - 1);
            let held: Vec<String> = held
                .split(',')
                .filter(|h| h.starts_with(&prefix))
                .map(str::to_string)
                .collect();
            let _ = c.child.start_kill();
            eprintln!(
                "SIGKILLed {name} (pid {}), which held {} shards",
                c.pid,
                held.len()
            );
            kill.killed = Some(KilledReplica {
                name,
                held,
                at: Instant::now(),
            });
        }
        if let Some(k) = &kill.killed
            && kill.taken_over.is_none()
            && let Some(p) = children.first().map(|c| c.provider)
            && let Some(now) = up::holders(leases, p, args.shards()).await
            && !now.split(',').any(|h| k.held.iter().any(|o| o == h))
        {
            kill.taken_over = Some(Instant::now());
        }
        for c in children.iter_mut() {
            c.supervise()?;
        }
        Ok(())
    }
}

/// Applies the support objects and waits until every managed one is Ready and Synced.
async fn create_support(
    client: &kube::Client,
    support: &[Generated],
    timeout: Duration,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let failures: Vec<String> = futures::stream::iter(support)
        .map(|g| async move {
            let name = g.object.metadata.name.clone().unwrap_or_default();
            apply(client, &g.resource, true, &g.object)
                .await
                .err()
                .map(|e| format!("{} {name}: {}", g.resource.kind, kube_message(&e)))
        })
        .buffer_unordered(APPLY_CONCURRENCY)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .flatten()
        .collect();
    anyhow::ensure!(
        failures.is_empty(),
        "support objects not applied: {}",
        failures.join("; ")
    );
    let mut kinds: Vec<&ApiResource> = Vec::new();
    for g in support {
        // Two providers may have a Kind of the same name (Group).
        if g.resource.group.ends_with(".crossplane.io")
            && !kinds
                .iter()
                .any(|k| k.kind == g.resource.kind && k.api_version == g.resource.api_version)
        {
            kinds.push(&g.resource);
        }
    }
    let managed = support
        .iter()
        .filter(|g| g.resource.group.ends_with(".crossplane.io"))
        .count();
    loop {
        let mut done = 0;
        let mut waiting = Vec::new();
        for r in &kinds {
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), BENCH_NAMESPACE, *r);
            for obj in api
                .list(&ListParams::default().labels(&format!("{SUPPORT_LABEL}=true")))
                .await
                .with_context(|| format!("listing the support {}s", r.kind))?
            {
                let state = ObjectState::of(&obj);
                if state.ready && state.synced {
                    done += 1;
                } else {
                    waiting.push(format!(
                        "{} {}: {}",
                        r.kind,
                        obj.metadata.name.unwrap_or_default(),
                        state.failure.unwrap_or_else(|| "not Ready yet".to_string())
                    ));
                }
            }
        }
        if done >= managed {
            eprintln!(
                "{} support objects Ready and Synced after {:.1}s",
                support.len(),
                started.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < timeout,
            "support objects not Ready and Synced: {}",
            waiting.join("; ")
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The simulator's repository keys of the bench's prefix.
fn jfrog_keys(sim: &jfrog_sim::Simulator) -> Vec<String> {
    sim.objects("repositories")
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r["key"].as_str())
        .filter(|k| k.starts_with(BENCH_PREFIX))
        .map(str::to_string)
        .collect()
}

/// `--delete`: deletes every generated object under the faults and kills again (for
/// `--fault-for`, or until all are gone and, with `--kill-every`, a kill came), removes the
/// faults, waits until no managed resource is left, and counts what JFrog still holds.
async fn delete_under_faults(
    args: &Args,
    running: &mut Running,
    client: &kube::Client,
    leases: &Api<Lease>,
    killer: &mut Killer,
    targets: &[(ApiResource, String)],
) -> anyhow::Result<DeleteFigures> {
    let sim = running
        .sim
        .as_ref()
        .context("the bench needs the embedded simulator")?;
    let injected = Injected::add(sim, &args.faults);
    let started = Instant::now();
    let kills_before = killer.kills;
    killer.start_phase(started);
    eprintln!("deleting {} objects under the faults", targets.len());
    let results: Vec<Option<String>> = futures::stream::iter(targets)
        .map(|(r, name)| {
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), BENCH_NAMESPACE, r);
            async move {
                match api.delete(name, &DeleteParams::default()).await {
                    Ok(_) => None,
                    Err(kube::Error::Api(e)) if e.code == 404 => None,
                    Err(e) => Some(format!("{} {name}: {}", r.kind, kube_message(&e))),
                }
            }
        })
        .buffer_unordered(APPLY_CONCURRENCY)
        .collect()
        .await;
    let delete_failures: Vec<String> = results.into_iter().flatten().collect();
    let mut kinds: Vec<&ApiResource> = Vec::new();
    for (r, _) in targets {
        if !kinds.iter().any(|k| k.kind == r.kind) {
            kinds.push(r);
        }
    }
    let deadline = started + args.timeout;
    let mut gone_at = None;
    loop {
        killer.tick(&mut running.children, leases, true).await?;
        if remaining(client, &kinds).await? == 0 {
            gone_at.get_or_insert_with(Instant::now);
        }
        let done = gone_at.is_some() && (args.kill_every.is_none() || killer.kills > kills_before);
        if chaos::phase_over(args.fault_for, started, done) || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let faults = injected.clear(sim);
    let fault_seconds = started.elapsed().as_secs_f64();
    eprintln!("faults removed after {fault_seconds:.1}s; waiting for every object to be gone");
    let deadline = Instant::now() + args.timeout;
    killer
        .recover(&mut running.children, leases, deadline)
        .await?;
    let mut left = remaining(client, &kinds).await?;
    while left > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        left = remaining(client, &kinds).await?;
    }
    // Gone under the faults, or only after them.
    let gone_at = gone_at.or_else(|| (left == 0).then(Instant::now));
    Ok(DeleteFigures {
        faults,
        kills: killer.kills - kills_before,
        fault_seconds,
        gone_seconds: gone_at.map(|t| t.saturating_duration_since(started).as_secs_f64()),
        delete_failures,
        mrs_left: left,
        jfrog_objects_left: jfrog_keys(sim).len(),
    })
}

/// How many generated objects the Kubernetes API still holds.
async fn remaining(client: &kube::Client, kinds: &[&ApiResource]) -> anyhow::Result<usize> {
    let mut n = 0;
    for r in kinds {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), BENCH_NAMESPACE, *r);
        n += api
            .list_metadata(&ListParams::default().labels("sandbox-bench=true"))
            .await
            .with_context(|| format!("listing the {}s left", r.kind))?
            .items
            .len();
    }
    Ok(n)
}

/// How many watched objects are Ready and Synced now.
fn current_done(seen: &Mutex<Seen>) -> usize {
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .current
        .values()
        .filter(|d| **d)
        .count()
}

#[derive(Default)]
struct Seen {
    first_synced: Option<Instant>,
    ready: HashMap<(String, String), Instant>,
    done: HashMap<(String, String), Instant>,
    /// Whether each object is Ready and Synced now (its last event).
    current: HashMap<(String, String), bool>,
    /// The failure of each failing object (its last event).
    failures: HashMap<(String, String), String>,
}

struct AbortOnDrop(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// `local`, `remote`, `virtual`, `federated` from a Kind name.
fn class_of(kind: &str) -> String {
    ["Local", "Remote", "Virtual", "Federated"]
        .iter()
        .find(|c| kind.starts_with(*c))
        .map_or_else(|| "other".to_string(), |c| c.to_lowercase())
}

/// N objects from the shapes of the examples: namespaced repository Kinds, no Secret or
/// project references, virtual ones without members; named `bench-00042`.
fn generate(
    examples: &std::path::Path,
    kinds: &[progress::ManagedKind],
    n: usize,
) -> anyhow::Result<Vec<Generated>> {
    let manifests = read_manifests(&[examples.to_path_buf()])?;
    let mut by_class: BTreeMap<String, Vec<Generated>> = BTreeMap::new();
    for m in manifests {
        let Some(types) = &m.object.types else {
            continue;
        };
        let Some(k) = kinds
            .iter()
            .find(|k| k.resource.api_version == types.api_version && k.resource.kind == types.kind)
        else {
            continue;
        };
        // Repository Kinds only (LocalRepositorySingleReplication is no local repository).
        if is_legacy_group(&k.resource.group)
            || k.provider != Provider::Artifactory
            || !k.resource.group.starts_with("repository.")
        {
            continue;
        }
        let text = serde_json::to_string(&m.object.data).unwrap_or_default();
        if text.contains("SecretRef") || text.contains("projectKey") {
            continue;
        }
        let class = class_of(&k.resource.kind);
        if class == "federated" || class == "other" {
            continue;
        }
        let mut object = m.object.clone();
        if class == "virtual"
            && let Some(fp) = object
                .data
                .pointer_mut("/spec/forProvider")
                .and_then(|v| v.as_object_mut())
        {
            fp.remove("repositories");
            fp.remove("defaultDeploymentRepo");
        }
        by_class.entry(class).or_default().push(Generated {
            resource: k.resource.clone(),
            object,
        });
    }
    let local = by_class.remove("local").unwrap_or_default();
    anyhow::ensure!(
        !local.is_empty(),
        "no usable local repository example in {}",
        examples.display()
    );
    let remote = by_class.remove("remote").unwrap_or_default();
    let virt = by_class.remove("virtual").unwrap_or_default();
    let mut counters = [0usize; 3];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // 7 local, 2 remote, 1 virtual in every 10, mixed early so that a small N has all
        // three (local when a class has no example).
        let slot = match i % 10 {
            1 | 6 if !remote.is_empty() => 1,
            4 if !virt.is_empty() => 2,
            _ => 0,
        };
        let pool = [&local, &remote, &virt][slot];
        let template = &pool[counters[slot] % pool.len()];
        counters[slot] += 1;
        let mut object = template.object.clone();
        object.metadata = kube::api::ObjectMeta {
            name: Some(format!("bench-{i:05}")),
            namespace: Some(BENCH_NAMESPACE.to_string()),
            labels: Some([("sandbox-bench".to_string(), "true".to_string())].into()),
            ..Default::default()
        };
        out.push(Generated {
            resource: template.resource.clone(),
            object,
        });
    }
    Ok(out)
}

/// What the family generator knows of a Kind from the providers' code.
#[derive(Debug, Clone)]
struct KindMeta {
    provider: Provider,
    group: String,
    resource: ApiResource,
    identifier: IdentifierStrategy,
    /// `provider/group/Kind` of every Kind a reference field of this Kind may name.
    targets: BTreeSet<String>,
}

impl KindMeta {
    fn key(&self) -> String {
        format!(
            "{}/{}/{}",
            self.provider.short(),
            self.group,
            self.resource.kind
        )
    }
}

/// Every namespaced managed Kind of the four providers, as their code declares it.
fn code_kinds() -> Vec<KindMeta> {
    let mut out = Vec::new();
    for p in Provider::ALL {
        for r in p.kinds() {
            let info = r.info();
            let gvk = kube::api::GroupVersionKind::gvk(
                &api_group(info.group, info.provider, Scope::Namespaced),
                info.version,
                info.kind,
            );
            out.push(KindMeta {
                provider: p,
                group: info.group.to_string(),
                resource: ApiResource::from_gvk_with_plural(&gvk, &pluralize(info.kind)),
                identifier: info.identifier.clone(),
                targets: info
                    .references
                    .iter()
                    .flat_map(|f| f.targets.iter())
                    .map(|t| format!("{}/{}/{}", t.provider, t.group, t.kind))
                    .collect(),
            });
        }
    }
    out
}

/// One example managed resource with its Kind.
#[derive(Debug, Clone)]
struct Example {
    kind: KindMeta,
    object: DynamicObject,
}

/// Kinds that attach an existing JFrog object called by their own name, which is no
/// declared reference (a project's member group or user, a repository moved into a
/// project), with the Kind (`provider/group/Kind`, or a prefix ending in `/`) of that object: an example
/// of one of those Kinds with the same name is a dependency.
const ATTACHED_BY_NAME: [(&str, &str); 3] = [
    ("project/access/Group", "platform/access/Group"),
    ("project/access/User", "artifactory/user/"),
    ("project/repository/Repository", "artifactory/repository/"),
];

/// Kinds left out of the bench, with the reason (reported as `not_measured`).
const NOT_MEASURED: [(&str, &str); 1] = [(
    "artifactory/security/APIKey",
    "JFrog removed the API key REST API in Artifactory 7.98.0 (the simulated platform runs a \
     later version); it was also one key per user, the caller's, so it could not be multiplied",
)];

/// Names of objects every platform has (the admin and anonymous users, Xray's default
/// binary manager): never renamed, and an example identified by one of them is measured
/// once (N copies would be N writers of that object).
const PLATFORM_NAMES: [&str; 3] = ["admin", "anonymous", "default"];

impl Example {
    /// A Kind of one object per platform, or an example that adopts one existing object by
    /// its external name (a server-assigned Kind annotated, such as the anonymous user):
    /// either way it cannot be multiplied.
    fn single(&self) -> bool {
        matches!(self.kind.identifier, IdentifierStrategy::Singleton(_))
            || (self.kind.identifier == IdentifierStrategy::ServerAssigned
                && self.external_name().is_some())
            || self
                .all_names()
                .iter()
                .any(|n| PLATFORM_NAMES.contains(&n.as_str()))
    }

    fn external_name(&self) -> Option<&str> {
        self.object
            .metadata
            .annotations
            .as_ref()?
            .get(EXTERNAL_NAME)
            .map(String::as_str)
    }

    /// What other objects may call this one by: its metadata.name, its external name and
    /// the value of its identifier field (the first one of a composite identifier, enough
    /// to tell copies apart). An adopted object's external name is not renamed.
    fn names(&self) -> Vec<String> {
        let adopted = self.kind.identifier == IdentifierStrategy::ServerAssigned
            && self.external_name().is_some();
        self.all_names()
            .into_iter()
            .filter(|n| !PLATFORM_NAMES.contains(&n.as_str()))
            .filter(|n| !adopted || Some(n.as_str()) != self.external_name())
            .collect()
    }

    fn all_names(&self) -> Vec<String> {
        let mut out: Vec<String> = self.object.metadata.name.iter().cloned().collect();
        out.extend(self.external_name().map(str::to_string));
        let field = match self.kind.identifier {
            IdentifierStrategy::SpecField(f) => Some(f),
            IdentifierStrategy::Composite { fields, .. } => fields.first().copied(),
            _ => None,
        };
        if let Some(v) = field
            .and_then(|f| self.object.data.pointer(&format!("/spec/forProvider/{f}")))
            .and_then(|v| v.as_str())
        {
            out.push(v.to_string());
        }
        out
    }

    /// Every string under `spec.forProvider` (values, `*Ref.name`, selector labels).
    fn strings(&self) -> BTreeSet<String> {
        fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
            match v {
                serde_json::Value::String(s) => {
                    out.insert(s.clone());
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                serde_json::Value::Object(o) => o.values().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let mut out = BTreeSet::new();
        if let Some(fp) = self.object.data.pointer("/spec/forProvider") {
            walk(fp, &mut out);
        }
        out
    }
}

/// The example manifests of the providers (`<dir>/<provider>/`, not `install/`, whose
/// objects use other ProviderConfigs), or of `dir` itself when it has no provider folder.
fn family_manifests(examples: &std::path::Path) -> anyhow::Result<Vec<DynamicObject>> {
    let dirs: Vec<PathBuf> = Provider::ALL
        .iter()
        .map(|p| examples.join(p.short()))
        .filter(|d| d.is_dir())
        .collect();
    let dirs = if dirs.is_empty() {
        vec![examples.to_path_buf()]
    } else {
        dirs
    };
    Ok(read_manifests(&dirs)?
        .into_iter()
        .map(|m| m.object)
        .collect())
}

/// The suffix of copy `i`: `-b` and `i` in base 36 (short: project keys have 32
/// characters at most).
fn copy_suffix(i: usize) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = i;
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    format!("-b{}", String::from_utf8_lossy(&digits))
}

/// A name with a copy's suffix: before the `@` of an e-mail address (a user name), at the
/// end otherwise; without its `-` when the name has letters and digits only (an Xray webhook
/// name may have nothing else).
fn suffixed(name: &str, suffix: &str) -> String {
    let at = name.find('@').unwrap_or(name.len());
    let (local, rest) = name.split_at(at);
    let suffix = if local.chars().all(|c| c.is_ascii_alphanumeric()) {
        suffix.trim_start_matches('-')
    } else {
        suffix
    };
    format!("{local}{suffix}{rest}")
}

/// Every string of `v` in `names` gets the suffix.
fn rename_strings(v: &mut serde_json::Value, names: &BTreeSet<String>, suffix: &str) {
    match v {
        serde_json::Value::String(s) if names.contains(s.as_str()) => {
            *s = suffixed(s, suffix);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|v| rename_strings(v, names, suffix)),
        serde_json::Value::Object(o) => o
            .values_mut()
            .for_each(|v| rename_strings(v, names, suffix)),
        _ => {}
    }
}

/// The label of the measured objects (the watch selects them).
const BENCH_LABEL: &str = "sandbox-bench";
/// The label of the support objects (created before the measurement, not measured).
const SUPPORT_LABEL: &str = "sandbox-bench-support";

/// Copy `suffix` of an example: every string equal to one of `names` (metadata.name,
/// external name, `spec.forProvider`, `spec.initProvider`) gets the suffix, so the copy's references name the same copy's
/// objects; labelled `label`.
fn renamed(ex: &Example, names: &BTreeSet<String>, suffix: &str, label: &str) -> Generated {
    let mut object = ex.object.clone();
    for part in ["forProvider", "initProvider"] {
        if let Some(v) = object.data.get_mut("spec").and_then(|s| s.get_mut(part)) {
            rename_strings(v, names, suffix);
        }
    }
    // Each copy writes its own connection Secret.
    if let Some(serde_json::Value::String(secret)) = object
        .data
        .pointer_mut("/spec/writeConnectionSecretToRef/name")
    {
        *secret = suffixed(secret, suffix);
    }
    let name = object.metadata.name.clone().unwrap_or_default();
    let annotations: BTreeMap<String, String> = ex
        .external_name()
        .map(|e| {
            let e = if names.contains(e) {
                suffixed(e, suffix)
            } else {
                e.to_string()
            };
            (EXTERNAL_NAME.to_string(), e)
        })
        .into_iter()
        .collect();
    object.metadata = kube::api::ObjectMeta {
        // An object every platform has keeps its name (the identifier of a Name Kind).
        name: Some(if names.contains(&name) {
            suffixed(&name, suffix)
        } else {
            name
        }),
        namespace: Some(BENCH_NAMESPACE.to_string()),
        labels: Some([(label.to_string(), "true".to_string())].into()),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    };
    Generated {
        resource: ex.kind.resource.clone(),
        object,
    }
}

/// The objects of a `--family` run other than `--family repository`.
struct FamilyPlan {
    /// The measured objects: copies of the family's examples.
    measured: Vec<Generated>,
    /// What the measured objects need from other groups (or a partial last copy needs from
    /// its own), renamed as the copy that needs it; created and Ready before the
    /// measurement. Secrets of the examples included.
    support: Vec<Generated>,
    /// Kinds measured once at most (singletons, adopted objects).
    measured_once: Vec<String>,
    /// Kinds of the family left out, with the reason ([`NOT_MEASURED`]).
    not_measured: Vec<String>,
}

impl FamilyPlan {
    /// The providers of the support objects other than the measured one.
    fn support_providers(&self, kinds: &[KindMeta], measured: Provider) -> Vec<Provider> {
        Provider::ALL
            .into_iter()
            .filter(|p| *p != measured)
            .filter(|p| {
                self.support.iter().any(|g| {
                    kinds.iter().any(|k| {
                        k.provider == *p
                            && k.resource.api_version == g.resource.api_version
                            && k.resource.kind == g.resource.kind
                    })
                })
            })
            .collect()
    }
}

/// N objects of `family` from the examples as renamed copies of the family's example graph
/// (copy i: suffix `-b<i in base 36>` on every name of an example, see [`renamed`]): every
/// example once per copy, round-robin until N; singletons only in the first copy. What a copy
/// references and does not hold (found from the Kinds' declared references: a string of the
/// object equal to a name of an example of a referenced Kind) is a support object of the
/// same copy, and so on transitively.
fn plan_family(
    manifests: &[DynamicObject],
    kinds: &[KindMeta],
    n: usize,
    family: &str,
    provider: Provider,
) -> anyhow::Result<FamilyPlan> {
    let mut examples: Vec<Example> = Vec::new();
    let mut secrets = Vec::new();
    for object in manifests {
        let Some(types) = &object.types else {
            continue;
        };
        if types.api_version == "v1" && types.kind == "Secret" {
            let mut object = object.clone();
            object.metadata.namespace = Some(BENCH_NAMESPACE.to_string());
            secrets.push(Generated {
                resource: ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
                object,
            });
            continue;
        }
        let Some(kind) = kinds
            .iter()
            .find(|k| k.resource.api_version == types.api_version && k.resource.kind == types.kind)
        else {
            continue;
        };
        examples.push(Example {
            kind: kind.clone(),
            object: object.clone(),
        });
    }
    let names: BTreeSet<String> = examples.iter().flat_map(Example::names).collect();
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, ex) in examples.iter().enumerate() {
        for name in ex.names() {
            by_name.entry(name).or_default().push(i);
        }
    }
    // The examples each one needs: another example of a Kind it may reference, called by one
    // of its strings.
    let deps: Vec<Vec<usize>> = examples
        .iter()
        .enumerate()
        .map(|(i, ex)| {
            let mut out: Vec<usize> = ex
                .strings()
                .iter()
                .filter_map(|s| by_name.get(s))
                .flatten()
                .copied()
                .filter(|j| *j != i && ex.kind.targets.contains(&examples[*j].kind.key()))
                .collect();
            let key = ex.kind.key();
            for (kind, prefix) in ATTACHED_BY_NAME {
                if key != kind {
                    continue;
                }
                out.extend(
                    ex.object
                        .metadata
                        .name
                        .iter()
                        .filter_map(|name| by_name.get(name))
                        .flatten()
                        .copied()
                        .filter(|j| {
                            let other = examples[*j].kind.key();
                            other == prefix || (prefix.ends_with('/') && other.starts_with(prefix))
                        }),
                );
            }
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    let left_out = |i: &usize| {
        NOT_MEASURED
            .iter()
            .any(|(k, _)| *k == examples[*i].kind.key())
    };
    let pool: Vec<usize> = (0..examples.len())
        .filter(|i| examples[*i].kind.provider == provider && examples[*i].kind.group == family)
        .filter(|i| !left_out(i))
        .collect();
    let not_measured: BTreeSet<String> = (0..examples.len())
        .filter(|i| examples[*i].kind.provider == provider && examples[*i].kind.group == family)
        .filter(left_out)
        .filter_map(|i| {
            let key = examples[i].kind.key();
            let why = NOT_MEASURED.iter().find(|(k, _)| *k == key)?.1;
            Some(format!("{}: {why}", examples[i].kind.resource.kind))
        })
        .collect();
    anyhow::ensure!(
        !pool.is_empty(),
        "no {family} example of provider-{} in the examples",
        provider.short()
    );
    let multiplied: Vec<usize> = pool
        .iter()
        .copied()
        .filter(|i| !examples[*i].single())
        .collect();
    let mut measured: Vec<(usize, usize)> = Vec::new();
    let mut copy = 0;
    'copies: loop {
        let round = if copy == 0 { &pool } else { &multiplied };
        if round.is_empty() {
            break;
        }
        for &i in round {
            if measured.len() >= n {
                break 'copies;
            }
            measured.push((i, copy));
        }
        copy += 1;
    }
    let measured_set: BTreeSet<(usize, usize)> = measured.iter().copied().collect();
    // A single example is one object whichever copy needs it: the first copy's.
    let slot = |j: usize, c: usize| if examples[j].single() { (j, 0) } else { (j, c) };
    let mut support: Vec<(usize, usize)> = Vec::new();
    let mut seen: BTreeSet<(usize, usize)> = measured_set.clone();
    let mut queue: Vec<(usize, usize)> = measured.clone();
    while let Some((i, c)) = queue.pop() {
        for &j in &deps[i] {
            let s = slot(j, c);
            if seen.insert(s) {
                support.push(s);
                queue.push(s);
            }
        }
    }
    let generate = |&(i, c): &(usize, usize), label: &str| {
        renamed(&examples[i], &names, &copy_suffix(c), label)
    };
    let measured_once: BTreeSet<String> = pool
        .iter()
        .filter(|i| examples[**i].single())
        .map(|i| examples[*i].kind.resource.kind.clone())
        .collect();
    let needs_secrets = measured.iter().chain(&support).any(|(i, _)| {
        serde_json::to_string(&examples[*i].object.data).is_ok_and(|t| t.contains("SecretRef"))
    });
    Ok(FamilyPlan {
        measured: measured.iter().map(|m| generate(m, BENCH_LABEL)).collect(),
        support: secrets
            .into_iter()
            .filter(|_| needs_secrets)
            .chain(support.iter().map(|s| generate(s, SUPPORT_LABEL)))
            .collect(),
        measured_once: measured_once.into_iter().collect(),
        not_measured: not_measured.into_iter().collect(),
    })
}
/// Request counts by method (`"GET /artifactory/api/..."` keys).
fn by_method(counts: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (route, n) in counts {
        let method = route.split_once(' ').map_or(route.as_str(), |(m, _)| m);
        *out.entry(method.to_string()).or_insert(0) += n;
    }
    out
}

/// A count per name as the table prints it (`GET 60, PATCH 21`), or `empty` for none.
fn joined<V>(
    counts: &BTreeMap<String, V>,
    item: impl Fn(&str, &V) -> String,
    empty: &str,
) -> String {
    if counts.is_empty() {
        return empty.to_string();
    }
    counts
        .iter()
        .map(|(k, v)| item(k, v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The providers' writes between two snapshots of the test server's request counts
/// (`{verb: {user: n}}`): the verbs that change objects, by the providers' service accounts.
/// The verbs of the Kubernetes API that write.
const WRITE_VERBS: &[&str] = &["create", "update", "patch", "delete"];
/// The verbs of the Kubernetes API that read.
const READ_VERBS: &[&str] = &["get", "list", "watch"];

/// The service accounts' requests of the `wanted` verbs (with their subresources) between two readings
/// of the test server's counts.
fn kube_counts(
    before: Option<&serde_json::Value>,
    after: Option<&serde_json::Value>,
    wanted: &[&str],
) -> BTreeMap<String, u64> {
    let count = |counts: Option<&serde_json::Value>, verb: &str| -> u64 {
        counts
            .and_then(|c| c.get(verb))
            .and_then(serde_json::Value::as_object)
            .map(|users| {
                users
                    .iter()
                    .filter(|(user, _)| user.starts_with("system:serviceaccount:"))
                    .filter_map(|(_, n)| n.as_u64())
                    .sum()
            })
            .unwrap_or(0)
    };
    let Some(verbs) = after.and_then(serde_json::Value::as_object) else {
        return BTreeMap::new();
    };
    verbs
        .keys()
        .filter(|verb| !verb.contains(' '))
        .filter(|verb| {
            let base = verb.split('/').next().unwrap_or(verb);
            wanted.contains(&base)
        })
        .map(|verb| {
            (
                verb.clone(),
                count(after, verb).saturating_sub(count(before, verb)),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The value at quantile `q` (nearest rank) of sorted values.
fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`).
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// `utime + stime` of `/proc/<pid>/stat`, in seconds.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no memory-safety preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then(|| (utime + stime) / ticks as f64)
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}{unit}"))
}

/// The report as a table.
pub fn table(r: &Report) -> String {
    let mut s = String::new();
    let classes: Vec<String> = r.by_class.iter().map(|(c, n)| format!("{n} {c}")).collect();
    let _ = writeln!(
        s,
        "sandbox bench: {} {} objects ({}), JFrog latency {} ms, poll {}s, max reconcile rate {}/s",
        r.resources,
        r.family,
        classes.join(", "),
        r.latency_ms,
        r.poll_seconds,
        r.max_reconcile_rate
    );
    if !r.measured_once.is_empty() {
        let _ = writeln!(
            s,
            "  measured once           {} (one object per platform)",
            r.measured_once.join(", ")
        );
    }
    for k in &r.not_measured {
        let _ = writeln!(s, "  not measured            {k}");
    }
    if r.support_objects > 0 {
        let _ = writeln!(
            s,
            "  support objects         {} ({}){}, not measured; their steady state {:.1} requests per poll, subtracted",
            r.support_objects,
            joined(&r.support_by_kind, |k, n| format!("{n} {k}"), ""),
            if r.support_providers.is_empty() {
                String::new()
            } else {
                format!(", by {} (stopped before)", r.support_providers.join(", "))
            },
            r.support_steady_requests_per_poll_total
        );
    }
    let _ = writeln!(
        s,
        "  Ready and Synced        {}/{}{}",
        r.ready,
        r.resources,
        if r.apply_failures.is_empty() {
            String::new()
        } else {
            format!(" ({} not applied)", r.apply_failures.len())
        }
    );
    let _ = writeln!(
        s,
        "  all Ready after         {}",
        opt(r.all_ready_seconds, " s")
    );
    let _ = writeln!(
        s,
        "  lower bound (N x L)     {:.2} s   ratio {}",
        r.lower_bound_seconds,
        opt(r.ratio_to_lower_bound, "x")
    );
    let _ = writeln!(
        s,
        "  repository writes       first {}   last {}   ({} for N writes)",
        opt(r.first_write_seconds, " s"),
        opt(r.last_write_seconds, " s"),
        opt(
            r.first_write_seconds
                .zip(r.last_write_seconds)
                .map(|(a, b)| b - a),
            " s"
        )
    );
    let _ = writeln!(
        s,
        "  applies answered        after {}",
        opt(r.applies_seconds, " s")
    );
    let _ = writeln!(
        s,
        "  time to Ready           p50 {}   p99 {}   max {}",
        opt(r.ready_p50_seconds, " s"),
        opt(r.ready_p99_seconds, " s"),
        opt(r.ready_max_seconds, " s")
    );
    let _ = writeln!(
        s,
        "  JFrog requests, creation      {} ({}), {:.2} per resource",
        r.creation_requests_total,
        joined(&r.creation_requests, |m, n| format!("{m} {n}"), ""),
        r.creation_requests_per_resource
    );
    let _ = writeln!(
        s,
        "  Kubernetes writes, creation   {} ({}), {:.2} per resource",
        r.kube_writes_creation.values().sum::<u64>(),
        joined(&r.kube_writes_creation, |v, n| format!("{v} {n}"), "none"),
        r.kube_writes_creation_per_resource
    );
    let _ = writeln!(
        s,
        "  Kubernetes reads, creation    {} ({}), {:.2} per resource",
        r.kube_reads_creation.values().sum::<u64>(),
        joined(&r.kube_reads_creation, |v, n| format!("{v} {n}"), "none"),
        r.kube_reads_creation_per_resource
    );
    let _ = writeln!(
        s,
        "  CPU during creation           sandbox {}, providers {} (the sandbox: Kubernetes API test server, simulator, bench)",
        opt(r.creation_cpu_seconds_sandbox, " s"),
        opt(r.creation_cpu_seconds_providers, " s")
    );
    let _ = writeln!(
        s,
        "  JFrog requests, steady state  {:.1} per poll ({}), {:.4} per resource per poll (over {} polls)",
        r.steady_requests_per_poll_total,
        joined(
            &r.steady_requests_per_poll,
            |m, n| format!("{m} {n:.1}"),
            "none"
        ),
        r.steady_requests_per_resource_per_poll,
        r.steady_polls
    );
    let _ = writeln!(
        s,
        "  {:<22} {:>8} {:>10} {:>10} {:>11} {:>9} {:>10} {:>14}",
        "PROVIDER",
        "PID",
        "IDLE RSS",
        "PEAK RSS",
        "STEADY RSS",
        "CPU",
        "TO LEADER",
        "TO 1ST RECONC."
    );
    for p in &r.providers {
        let _ = writeln!(
            s,
            "  {:<22} {:>8} {:>10} {:>10} {:>11} {:>9} {:>10} {:>14}",
            p.name,
            p.pid,
            opt(p.idle_rss_mib, " MiB"),
            opt(p.peak_rss_mib, " MiB"),
            opt(p.steady_rss_mib, " MiB"),
            opt(p.cpu_seconds, " s"),
            opt(p.start_to_leader_seconds, " s"),
            opt(p.start_to_first_reconcile_seconds, " s"),
        );
        let _ = writeln!(s, "    {}", p.command);
    }
    if let Some(f) = &r.fault_run {
        fault_lines(&mut s, f);
    }
    if let Some(x) = &r.shard_run {
        let _ = writeln!(
            s,
            "  replicas                {} active, {} shards, {} restarts",
            x.replicas, x.shards, x.restarts
        );
        if let Some(k) = &x.killed {
            let _ = writeln!(
                s,
                "  replica killed          {k} at {}, its shards held by the others {} later",
                opt(x.killed_after_seconds, " s"),
                opt(x.takeover_seconds, " s")
            );
        }
        if let (Some(f), Some(d), Some(m)) = (x.jfrog_objects, x.duplicates, x.missing) {
            let _ = writeln!(
                s,
                "  JFrog repositories      {f} of {} expected, {d} duplicates, {m} missing",
                x.expected_objects
            );
        }
    }
    for f in r.apply_failures.iter().take(5) {
        let _ = writeln!(s, "  not applied: {f}");
    }
    for f in r.not_ready.iter().take(5) {
        let _ = writeln!(s, "  not Ready: {f}");
    }
    s.trim_end().to_string()
}

/// The fault run's lines of the table.
fn fault_lines(s: &mut String, f: &FaultReport) {
    let _ = writeln!(
        s,
        "  fault run               {}: {} duplicates, {} missing, {} not Ready and Synced ({} of {} objects in JFrog)",
        if f.pass { "PASS" } else { "FAIL" },
        f.duplicates,
        f.missing,
        f.not_ready,
        f.jfrog_objects,
        f.expected_objects
    );
    for x in &f.faults {
        let _ = writeln!(
            s,
            "  fault {:<18} failed {} of {} requests",
            x.spec, x.fired, x.matched
        );
    }
    let _ = writeln!(
        s,
        "  provider kills          {}{}, {} restarts",
        f.kills,
        f.kill_every_seconds
            .map_or_else(String::new, |e| format!(" (every {e} s)")),
        f.restarts
    );
    let _ = writeln!(
        s,
        "  faults lasted           {:.2} s; all Ready under them after {}; converged after {}",
        f.fault_seconds,
        opt(f.ready_under_faults_seconds, " s"),
        opt(f.converged_seconds, " s")
    );
    if let Some(d) = &f.delete {
        let fired: u64 = d.faults.iter().map(|x| x.fired).sum();
        let _ = writeln!(
            s,
            "  deletion under faults   {} requests failed, {} kills in {:.2} s; all gone after {}; left: {} managed resources, {} JFrog objects{}",
            fired,
            d.kills,
            d.fault_seconds,
            opt(d.gone_seconds, " s"),
            d.mrs_left,
            d.jfrog_objects_left,
            if d.delete_failures.is_empty() {
                String::new()
            } else {
                format!(" ({} deletes refused)", d.delete_failures.len())
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::ResourceExt as _;

    #[test]
    fn percentiles_methods_and_classes() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(50.0));
        assert_eq!(percentile(&v, 0.99), Some(99.0));
        assert_eq!(percentile(&[3.0], 0.99), Some(3.0));
        assert_eq!(percentile(&[], 0.5), None);
        let counts: BTreeMap<String, u64> = [
            ("GET /a".to_string(), 2),
            ("GET /b".to_string(), 3),
            ("PUT /a".to_string(), 1),
        ]
        .into();
        assert_eq!(
            by_method(&counts),
            [("GET".to_string(), 5), ("PUT".to_string(), 1)].into()
        );
        assert_eq!(class_of("LocalGoRepository"), "local");
        assert_eq!(class_of("VirtualPubRepository"), "virtual");
    }

    /// The groups of every provider's examples (what `--family` takes).
    const GROUPS: [(Provider, &str); 20] = [
        (Provider::Artifactory, "artifact"),
        (Provider::Artifactory, "configuration"),
        (Provider::Artifactory, "lifecycle"),
        (Provider::Artifactory, "replication"),
        (Provider::Artifactory, "repository"),
        (Provider::Artifactory, "security"),
        (Provider::Artifactory, "user"),
        (Provider::Artifactory, "webhook"),
        (Provider::Xray, "configuration"),
        (Provider::Xray, "policy"),
        (Provider::Xray, "report"),
        (Provider::Xray, "watch"),
        (Provider::Xray, "webhook"),
        (Provider::Project, "access"),
        (Provider::Project, "project"),
        (Provider::Project, "repository"),
        (Provider::Platform, "access"),
        (Provider::Platform, "authentication"),
        (Provider::Platform, "configuration"),
        (Provider::Platform, "lifecycle"),
    ];

    fn plan(provider: Provider, family: &str, n: usize) -> FamilyPlan {
        let manifests = family_manifests(&repo_dir("examples")).expect("examples");
        plan_family(&manifests, &code_kinds(), n, family, provider).expect("a plan")
    }

    fn find<'a>(objects: &'a [Generated], kind: &str, name: &str) -> Option<&'a Generated> {
        objects
            .iter()
            .find(|g| g.resource.kind == kind && g.object.metadata.name.as_deref() == Some(name))
    }

    fn field<'a>(g: &'a Generated, pointer: &str) -> &'a str {
        g.object
            .data
            .pointer(&format!("/spec/forProvider{pointer}"))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
    }

    #[test]
    fn suffixes_are_short_and_keep_addresses_valid() {
        assert_eq!(copy_suffix(0), "-b0");
        assert_eq!(copy_suffix(35), "-bz");
        assert_eq!(copy_suffix(36), "-b10");
        assert_eq!(suffixed("example-group", "-b1"), "example-group-b1");
        assert_eq!(
            suffixed("some-one@example.com", "-b1"),
            "some-one-b1@example.com"
        );
        assert_eq!(
            suffixed("someone@example.com", "-b1"),
            "someoneb1@example.com"
        );
        assert_eq!(suffixed("examplewebhook", "-b1"), "examplewebhookb1");
    }

    /// A copy's references (plain names, `*Ref.name`) name that copy's objects: measured ones
    /// of the family, or support objects of other groups renamed alike.
    #[test]
    fn a_copy_refers_to_its_own_objects() {
        // A project's member group is the platform's group of the same copy.
        let p = plan(Provider::Project, "access", 9);
        assert!(find(&p.measured, "Group", "example-group-b2").is_some());
        assert!(
            find(&p.support, "Group", "example-group-b2")
                .is_some_and(|g| g.resource.group.starts_with("access.platform."))
        );
        assert!(find(&p.support, "Project", "example-project-b2").is_some());
        assert!(
            !p.support.iter().any(|g| g.resource.kind == "GroupMembers"),
            "the group, not what names it"
        );
        let p = plan(Provider::Platform, "access", 20);
        for copy in ["-b0", "-b1", "-b2"] {
            let members = find(
                &p.measured,
                "GroupMembers",
                &format!("example-group-members{copy}"),
            )
            .expect("the copy's GroupMembers");
            assert_eq!(field(members, "/name"), format!("example-group{copy}"));
            assert_eq!(
                field(members, "/members/0"),
                "admin",
                "a platform user keeps its name"
            );
            assert!(find(&p.measured, "Group", &format!("example-group{copy}")).is_some());
            let permission = find(
                &p.measured,
                "Permission",
                &format!("example-permission{copy}"),
            )
            .expect("the copy's Permission");
            assert_eq!(
                field(permission, "/artifact/actions/groups/0/name"),
                format!("example-group{copy}")
            );
            let repo = format!("example-local-generic{copy}");
            assert_eq!(field(permission, "/artifact/targets/0/name"), repo);
            let support = find(&p.support, "LocalGenericRepository", &repo)
                .expect("the repository as a support object");
            assert_eq!(
                support
                    .object
                    .labels()
                    .get(SUPPORT_LABEL)
                    .map(String::as_str),
                Some("true")
            );
        }
        assert!(
            p.support_providers(&code_kinds(), Provider::Platform)
                .contains(&Provider::Artifactory)
        );
        // Within the family: an OIDC identity mapping names its copy's configuration.
        let p = plan(Provider::Platform, "authentication", 20);
        for m in p
            .measured
            .iter()
            .filter(|g| g.resource.kind == "OIDCIdentityMapping")
        {
            let name = m.object.metadata.name.as_deref().unwrap_or_default();
            let copy = &name[name.rfind("-b").expect("a suffix")..];
            let target = field(m, "/providerName");
            assert_eq!(target, format!("example-oidc-configuration{copy}"));
            assert!(find(&p.measured, "OIDCConfiguration", target).is_some());
        }
    }

    /// No two measured or support objects of a Kind have the same identifier, in any group.
    #[test]
    fn identifiers_are_unique_across_copies() {
        let kinds = code_kinds();
        for (provider, family) in GROUPS {
            let p = plan(provider, family, 60);
            let mut seen = BTreeSet::new();
            for g in p.measured.iter().chain(&p.support) {
                let Some(kind) = kinds.iter().find(|k| {
                    k.resource.api_version == g.resource.api_version
                        && k.resource.kind == g.resource.kind
                }) else {
                    continue;
                };
                let external = g
                    .object
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(EXTERNAL_NAME))
                    .cloned();
                let id = match &kind.identifier {
                    IdentifierStrategy::SpecField(f) => field(g, &format!("/{f}")).to_string(),
                    IdentifierStrategy::Composite { fields, separator } => fields
                        .iter()
                        .map(|f| field(g, &format!("/{f}")))
                        .collect::<Vec<_>>()
                        .join(separator),
                    IdentifierStrategy::Singleton(s) => s.to_string(),
                    _ => external
                        .or_else(|| g.object.metadata.name.clone())
                        .unwrap_or_default(),
                };
                assert!(
                    seen.insert((
                        g.resource.api_version.clone(),
                        g.resource.kind.clone(),
                        id.clone()
                    )),
                    "{provider:?} {family}: two {} objects with identifier {id}",
                    g.resource.kind
                );
            }
        }
    }

    /// Copies write connection Secrets of their own.
    #[test]
    fn copies_write_their_own_connection_secrets() {
        let p = plan(Provider::Artifactory, "security", 40);
        let secrets: BTreeSet<&str> = p
            .measured
            .iter()
            .filter(|g| g.resource.kind == "ScopedToken")
            .filter_map(|g| {
                g.object
                    .data
                    .pointer("/spec/writeConnectionSecretToRef/name")
            })
            .filter_map(|v| v.as_str())
            .collect();
        let tokens = p
            .measured
            .iter()
            .filter(|g| g.resource.kind == "ScopedToken")
            .count();
        assert!(tokens > 1);
        assert_eq!(secrets.len(), tokens);
        assert!(!p.measured.iter().any(|g| g.resource.kind == "APIKey"));
        assert!(p.not_measured[0].starts_with("APIKey: "));
    }

    /// Singletons (and an adopted object) are measured once; the other Kinds are multiplied.
    #[test]
    fn singletons_are_not_multiplied() {
        let p = plan(Provider::Platform, "configuration", 40);
        assert_eq!(p.measured.len(), 40);
        assert_eq!(p.measured_once, ["License", "ReverseProxy"]);
        let count = |k: &str| p.measured.iter().filter(|g| g.resource.kind == k).count();
        assert_eq!(count("License"), 1);
        assert_eq!(count("ReverseProxy"), 1);
        assert_eq!(count("WorkersService"), 38);
        let p = plan(Provider::Artifactory, "user", 10);
        let anonymous: Vec<&Generated> = p
            .measured
            .iter()
            .filter(|g| g.resource.kind == "AnonymousUser")
            .collect();
        assert_eq!(anonymous.len(), 1);
        assert_eq!(
            anonymous[0]
                .object
                .annotations()
                .get(EXTERNAL_NAME)
                .map(String::as_str),
            Some("anonymous"),
            "an adopted object keeps its external name"
        );
        // Xray's default binary manager is the one every platform has.
        let p = plan(Provider::Xray, "configuration", 40);
        assert!(find(&p.measured, "BinaryManagerRepos", "default").is_some());
        // A family of singletons only has no more objects than Kinds.
        let p = plan(Provider::Xray, "webhook", 5);
        assert!(p.measured.len() <= 5);
    }
}
