//! The live view of managed resources: which Kinds are managed (CRDs in category `managed`),
//! a watch (kube-rs reflector) on each, counts per provider and Kind family of Ready, Synced
//! and failing resources, the first failure messages, and the rendering of all this as a
//! redrawn progress view on a terminal, as plain lines otherwise, and as a summary table.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};

use crate::Provider;
use crate::apply::Applied;
use crate::kubeapi::{is_legacy_group, provider_of_group};

/// A managed Kind as installed.
#[derive(Debug, Clone)]
pub struct ManagedKind {
    pub resource: ApiResource,
    pub provider: Provider,
    pub family: String,
}

/// The managed Kinds among the installed CRDs (category `managed`), in their storage version.
pub async fn managed_kinds(client: &kube::Client) -> anyhow::Result<Vec<ManagedKind>> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut out = Vec::new();
    for crd in api.list(&Default::default()).await? {
        let spec = &crd.spec;
        let managed = spec
            .names
            .categories
            .as_ref()
            .is_some_and(|c| c.iter().any(|c| c == "managed"));
        let Some((provider, family)) = provider_of_group(&spec.group) else {
            continue;
        };
        if !managed {
            continue;
        }
        let Some(version) = spec
            .versions
            .iter()
            .find(|v| v.storage)
            .or_else(|| spec.versions.first())
        else {
            continue;
        };
        let gvk = GroupVersionKind::gvk(&spec.group, &version.name, &spec.names.kind);
        out.push(ManagedKind {
            resource: ApiResource::from_gvk_with_plural(&gvk, &spec.names.plural),
            provider,
            family,
        });
    }
    out.sort_by(|a, b| {
        (a.provider, &a.resource.group, &a.resource.kind).cmp(&(
            b.provider,
            &b.resource.group,
            &b.resource.kind,
        ))
    });
    Ok(out)
}

/// The set of (group, Kind) of managed Kinds.
pub fn managed_set(kinds: &[ManagedKind]) -> HashSet<(String, String)> {
    kinds
        .iter()
        .map(|k| (k.resource.group.clone(), k.resource.kind.clone()))
        .collect()
}

/// Watches of every managed Kind.
pub struct Watcher {
    stores: Vec<(ManagedKind, Store<DynamicObject>)>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Watcher {
    /// Starts one reflector per Kind.
    pub fn start(client: &kube::Client, kinds: &[ManagedKind]) -> Watcher {
        let mut stores = Vec::new();
        let mut tasks = Vec::new();
        for k in kinds {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &k.resource);
            let writer = reflector::store::Writer::new(k.resource.clone());
            let store = writer.as_reader();
            let stream = reflector::reflector(
                writer,
                watcher(api, watcher::Config::default()).default_backoff(),
            );
            tasks.push(tokio::spawn(async move {
                let mut s = std::pin::pin!(stream);
                while s.next().await.is_some() {}
            }));
            stores.push((k.clone(), store));
        }
        Watcher { stores, tasks }
    }

    /// Waits (up to `timeout`) until every watch has listed once.
    pub async fn wait_ready(&self, timeout: Duration) {
        let all = futures::future::join_all(self.stores.iter().map(|(_, s)| s.wait_until_ready()));
        let _ = tokio::time::timeout(timeout, all).await;
    }

    /// The current state.
    pub fn snapshot(&self, applied: &[Applied]) -> Snapshot {
        let mut snap = Snapshot::default();
        let tracked: HashSet<(String, String, Option<String>, String)> = applied
            .iter()
            .filter(|a| a.managed)
            .map(|a| {
                (
                    a.resource.group.clone(),
                    a.resource.kind.clone(),
                    a.namespace.clone(),
                    a.name.clone(),
                )
            })
            .collect();
        let mut seen_tracked = HashSet::new();
        for (k, store) in &self.stores {
            for obj in store.state() {
                let state = ObjectState::of(&obj);
                let row = snap.rows.entry((k.provider, display_group(k))).or_default();
                row.total += 1;
                row.ready += usize::from(state.ready);
                row.synced += usize::from(state.synced);
                let key = (
                    k.resource.group.clone(),
                    k.resource.kind.clone(),
                    obj.metadata.namespace.clone(),
                    obj.metadata.name.clone().unwrap_or_default(),
                );
                if let Some(msg) = &state.failure {
                    row.failing += 1;
                    snap.failures
                        .push(format!("{} {}: {msg}", k.resource.kind, object_name(&obj)));
                }
                if tracked.contains(&key) {
                    seen_tracked.insert(key);
                    snap.tracked_total += 1;
                    if state.ready && state.synced {
                        snap.tracked_done += 1;
                    }
                    if state.failure.is_some() {
                        snap.tracked_failing += 1;
                    }
                }
            }
        }
        // Applied objects not in any store yet (the watch lags behind the apply) still count.
        snap.tracked_total += tracked.len() - seen_tracked.len();
        snap.failures.sort();
        snap
    }
}

fn display_group(k: &ManagedKind) -> String {
    let family = if k.family.is_empty() {
        "-".to_string()
    } else {
        k.family.clone()
    };
    if is_legacy_group(&k.resource.group) {
        format!("{family} (legacy)")
    } else {
        family
    }
}

fn object_name(obj: &DynamicObject) -> String {
    match &obj.metadata.namespace {
        Some(ns) => format!("{ns}/{}", obj.metadata.name.as_deref().unwrap_or("?")),
        None => obj.metadata.name.clone().unwrap_or_default(),
    }
}

/// Ready / Synced / failing of one managed resource.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ObjectState {
    pub ready: bool,
    pub synced: bool,
    /// The message of a failing resource: `Synced=False` (a reconcile error), or
    /// `Ready=False` with reason `Unavailable`.
    pub failure: Option<String>,
}

impl ObjectState {
    /// Reads the conditions of an object.
    pub fn of(obj: &DynamicObject) -> ObjectState {
        Self::of_json(&obj.data)
    }

    /// Reads the conditions of an object's JSON (its `status.conditions`).
    pub fn of_json(obj: &serde_json::Value) -> ObjectState {
        let conditions = obj
            .pointer("/status/conditions")
            .and_then(|c| c.as_array())
            .cloned()
            .unwrap_or_default();
        let find = |t: &str| {
            conditions
                .iter()
                .find(|c| c.get("type").and_then(|v| v.as_str()) == Some(t))
        };
        let is_true = |t: &str| {
            find(t)
                .and_then(|c| c.get("status"))
                .and_then(|s| s.as_str())
                == Some("True")
        };
        let is_false = |t: &str| {
            find(t)
                .and_then(|c| c.get("status"))
                .and_then(|s| s.as_str())
                == Some("False")
        };
        let message = |t: &str| {
            let c = find(t);
            let reason = c
                .and_then(|c| c.get("reason"))
                .and_then(|s| s.as_str())
                .unwrap_or("");
            let msg = c
                .and_then(|c| c.get("message"))
                .and_then(|s| s.as_str())
                .unwrap_or("");
            if msg.is_empty() {
                reason.to_string()
            } else {
                format!("{reason}: {msg}")
            }
        };
        let ready_reason = find("Ready")
            .and_then(|c| c.get("reason"))
            .and_then(|s| s.as_str());
        let failure = if is_false("Synced") {
            Some(message("Synced"))
        } else if is_false("Ready") && ready_reason == Some("Unavailable") {
            Some(message("Ready"))
        } else {
            None
        };
        ObjectState {
            ready: is_true("Ready"),
            synced: is_true("Synced"),
            failure,
        }
    }
}

/// Counts of one provider's Kind family.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Row {
    pub total: usize,
    pub ready: usize,
    pub synced: usize,
    pub failing: usize,
}

/// Everything the view shows at one moment.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Counts by (provider, Kind family) over every managed resource in the cluster.
    pub rows: BTreeMap<(Provider, String), Row>,
    /// `Kind ns/name: reason: message` of failing resources, sorted.
    pub failures: Vec<String>,
    /// Applied managed resources, those Ready and Synced, those failing.
    pub tracked_total: usize,
    pub tracked_done: usize,
    pub tracked_failing: usize,
}

impl Snapshot {
    /// Every applied managed resource is Ready and Synced.
    pub fn all_done(&self) -> bool {
        self.tracked_done == self.tracked_total
    }
}

/// Width of the progress bar.
const BAR: usize = 30;
/// How many failure messages the live view shows.
const LIVE_FAILURES: usize = 5;

fn bar(done: usize, total: usize) -> String {
    let filled = (done * BAR).checked_div(total).unwrap_or(BAR);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(BAR - filled))
}

fn truncate(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut t: String = one_line.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The counts table (used live and in the summary).
pub fn table(snap: &Snapshot) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  {:<22} {:<26} {:>6} {:>6} {:>6} {:>7}",
        "PROVIDER", "GROUP", "TOTAL", "READY", "SYNCED", "FAILING"
    );
    if snap.rows.is_empty() {
        let _ = writeln!(s, "  (no managed resources)");
    }
    for ((p, group), r) in &snap.rows {
        let _ = writeln!(
            s,
            "  {:<22} {:<26} {:>6} {:>6} {:>6} {:>7}",
            p.name(),
            group,
            r.total,
            r.ready,
            r.synced,
            r.failing
        );
    }
    s
}

/// Renders the live view to stderr: redrawn in place on a terminal, as lines otherwise.
pub struct Renderer {
    tty: bool,
    started: Instant,
    drawn_lines: usize,
    last_line: Option<(usize, usize, usize)>,
    last_print: Option<Instant>,
    printed_failures: HashSet<String>,
    last_drawn: String,
}

impl Renderer {
    /// A renderer for stderr (`tty` chooses the redrawn view).
    pub fn new(tty: bool) -> Renderer {
        Renderer {
            tty,
            started: Instant::now(),
            drawn_lines: 0,
            last_line: None,
            last_print: None,
            printed_failures: HashSet::new(),
            last_drawn: String::new(),
        }
    }

    fn headline(&self, snap: &Snapshot) -> String {
        format!(
            "{} {}/{} managed resources Ready and Synced, {} failing ({}s)",
            bar(snap.tracked_done, snap.tracked_total),
            snap.tracked_done,
            snap.tracked_total,
            snap.tracked_failing,
            self.started.elapsed().as_secs()
        )
    }

    /// Shows a snapshot.
    pub fn draw(&mut self, snap: &Snapshot) {
        let mut err = std::io::stderr().lock();
        if self.tty {
            // Lines wider than the terminal would wrap and break the redraw-in-place.
            let width = terminal_width().unwrap_or(120).saturating_sub(1).max(20);
            let mut lines = vec![self.headline(snap)];
            lines.extend(table(snap).lines().map(str::to_string));
            for f in snap.failures.iter().take(LIVE_FAILURES) {
                lines.push(format!("  ! {f}"));
            }
            if snap.failures.len() > LIVE_FAILURES {
                lines.push(format!(
                    "  ! ... and {} more",
                    snap.failures.len() - LIVE_FAILURES
                ));
            }
            let out: String = lines
                .iter()
                .map(|l| format!("{}\n", truncate(l, width)))
                .collect();
            if out == self.last_drawn {
                return;
            }
            let clear = if self.drawn_lines > 0 {
                format!("\x1b[{}A\x1b[J", self.drawn_lines)
            } else {
                String::new()
            };
            self.drawn_lines = lines.len();
            let _ = write!(err, "{clear}{out}");
            self.last_drawn = out;
        } else {
            let key = (snap.tracked_done, snap.tracked_total, snap.tracked_failing);
            // A heartbeat while work is under way; once all is done, only changes are shown.
            let due = !snap.all_done()
                && self
                    .last_print
                    .is_none_or(|t| t.elapsed() >= Duration::from_secs(10));
            if self.last_line != Some(key) || due {
                let _ = writeln!(err, "{}", self.headline(snap));
                self.last_line = Some(key);
                self.last_print = Some(Instant::now());
            }
            for f in &snap.failures {
                if self.printed_failures.len() >= 20 {
                    break;
                }
                if self.printed_failures.insert(f.clone()) {
                    let _ = writeln!(err, "  ! {}", truncate(f, 300));
                }
            }
        }
        let _ = err.flush();
    }

    /// Prints a line (a provider restart) above the live view, which is drawn again below it
    /// at the next [`draw`](Self::draw).
    pub fn message(&mut self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.tty && self.drawn_lines > 0 {
            let _ = write!(err, "\x1b[{}A\x1b[J", self.drawn_lines);
            self.drawn_lines = 0;
            self.last_drawn.clear();
        }
        let _ = writeln!(err, "{line}");
        let _ = err.flush();
    }

    /// Ends the live view (the next output starts below it).
    pub fn finish(&mut self) {
        self.drawn_lines = 0;
        self.last_drawn.clear();
    }

    /// From now on, print changes as lines (after the summary, which must stay visible).
    pub fn lines_only(&mut self, snap: &Snapshot) {
        self.tty = false;
        self.last_line = Some((snap.tracked_done, snap.tracked_total, snap.tracked_failing));
        self.printed_failures.extend(snap.failures.iter().cloned());
    }
}

/// The width of the terminal on stderr, if it is one.
fn terminal_width() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut ws = libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ writes a `winsize` into the struct we pass, nothing else.
        let rc = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) };
        if rc == 0 && ws.ws_col > 0 {
            return Some(usize::from(ws.ws_col));
        }
    }
    None
}

/// The summary printed when everything applied converged, or at the end of `--once`.
pub fn summary(
    snap: &Snapshot,
    apply_failures: &[crate::apply::Failure],
    elapsed: Duration,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Summary after {:.1}s:", elapsed.as_secs_f64());
    s.push_str(&table(snap));
    let _ = writeln!(
        s,
        "  applied managed resources: {} total, {} Ready and Synced, {} not yet ({} of them failing)",
        snap.tracked_total,
        snap.tracked_done,
        snap.tracked_total - snap.tracked_done,
        snap.tracked_failing,
    );
    if !apply_failures.is_empty() {
        let _ = writeln!(s, "  manifests not applied: {}", apply_failures.len());
        for f in apply_failures.iter().take(20) {
            let _ = writeln!(
                s,
                "  ! {} ({}): {}",
                f.what,
                f.origin,
                truncate(&f.message, 300)
            );
        }
        if apply_failures.len() > 20 {
            let _ = writeln!(s, "  ! ... and {} more", apply_failures.len() - 20);
        }
    }
    for f in snap.failures.iter().take(20) {
        let _ = writeln!(s, "  ! {}", truncate(f, 300));
    }
    if snap.failures.len() > 20 {
        let _ = writeln!(s, "  ! ... and {} more failing", snap.failures.len() - 20);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(conditions: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "repository.artifactory.m.crossplane.io/v1alpha1", "kind": "LocalGoRepository",
            "metadata": {"name": "x", "namespace": "default"},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    #[test]
    fn conditions_give_state() {
        let ok = obj(
            json!([{"type": "Ready", "status": "True", "reason": "Available"}, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}]),
        );
        assert_eq!(
            ObjectState::of(&ok),
            ObjectState {
                ready: true,
                synced: true,
                failure: None
            }
        );
        let creating = obj(
            json!([{"type": "Ready", "status": "False", "reason": "Creating"}, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}]),
        );
        assert_eq!(
            ObjectState::of(&creating),
            ObjectState {
                ready: false,
                synced: true,
                failure: None
            }
        );
        let failing = obj(
            json!([{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "connect failed: boom"}]),
        );
        assert_eq!(
            ObjectState::of(&failing).failure.as_deref(),
            Some("ReconcileError: connect failed: boom")
        );
        let unavailable = obj(
            json!([{"type": "Ready", "status": "False", "reason": "Unavailable"}, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}]),
        );
        assert_eq!(
            ObjectState::of(&unavailable).failure.as_deref(),
            Some("Unavailable")
        );
        assert_eq!(ObjectState::of(&obj(json!([]))), ObjectState::default());
    }

    #[test]
    fn bars_and_tables() {
        assert_eq!(bar(0, 10), format!("[{}]", ".".repeat(BAR)));
        assert_eq!(bar(10, 10), format!("[{}]", "#".repeat(BAR)));
        assert_eq!(bar(0, 0), format!("[{}]", "#".repeat(BAR)));
        let mut snap = Snapshot::default();
        snap.rows.insert(
            (Provider::Artifactory, "repository".into()),
            Row {
                total: 3,
                ready: 2,
                synced: 3,
                failing: 1,
            },
        );
        let t = table(&snap);
        assert!(t.contains("provider-artifactory"), "{t}");
        assert!(
            t.lines()
                .nth(1)
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                == ["provider-artifactory", "repository", "3", "2", "3", "1"],
            "{t}"
        );
        assert_eq!(truncate("abcdef", 4), "abc…");
    }
}
