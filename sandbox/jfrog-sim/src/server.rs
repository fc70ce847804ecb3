//! The running simulator: configuration, shared state, the request pipeline (request counts,
//! faults) and the HTTP/1.1 connection loop.
//!
//! The connection loop is hyper's, not `axum::serve`, because one fault needs what a router
//! cannot do: close the connection without answering after the request was processed
//! ("commit the write, then drop the connection"). The router marks such a response, and the
//! connection service turns it into a service error, on which hyper closes the connection
//! without writing anything.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt;

use crate::auth::Auth;
use crate::counts::Counts;
use crate::descriptor::Descriptor;
use crate::errors::{ApiError, Flavor};
use crate::faults::{Action, Fault, FaultCounts, FaultId, Faults};
use crate::services;

/// Configuration of a simulator.
#[derive(Clone)]
pub struct SimConfig {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Seed of the fault generators (reproducible faults).
    pub seed: u64,
    /// Fail configuration writes that overlap with another one, as Artifactory does.
    pub descriptor_merge_emulation: bool,
    /// Time each configuration write takes (the window in which writes overlap).
    pub write_latency: Duration,
    /// Version reported by `GET /artifactory/api/system/version`.
    pub artifactory_version: String,
    /// Use this admin token instead of a generated one (e.g. to keep a token across restarts).
    pub admin_token: Option<String>,
    /// Status of `GET`/`POST`/`DELETE` on a missing repository: 404 (default) or 400, which
    /// some Artifactory versions answer.
    pub missing_repository_status: u16,
    /// How long the read APIs keep answering a repository's previous state after a write
    /// (JFrog's documented propagation delay on large instances); zero (default) = none.
    pub read_after_write_lag: Duration,
    /// Answer as JFrog Cloud (SaaS) does: the self-hosted-only calls (the system
    /// configuration descriptor, licences) are refused with Cloud's answers (`crate::saas`).
    pub saas: bool,
}

impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimConfig")
            .field("listen", &self.listen)
            .field("seed", &self.seed)
            .field(
                "descriptor_merge_emulation",
                &self.descriptor_merge_emulation,
            )
            .field("write_latency", &self.write_latency)
            .field("artifactory_version", &self.artifactory_version)
            .field("saas", &self.saas)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: 0x5EED,
            descriptor_merge_emulation: true,
            write_latency: Duration::ZERO,
            artifactory_version: "7.117.5".to_owned(),
            admin_token: None,
            missing_repository_status: 404,
            read_after_write_lag: Duration::ZERO,
            saas: false,
        }
    }
}

/// State shared by all handlers.
pub(crate) struct Shared {
    pub(crate) base_url: String,
    /// `X-JFrog-Version` of Artifactory answers, e.g. `Artifactory/7.117.5 71175900`.
    pub(crate) version_header: String,
    pub(crate) config: SimConfig,
    pub(crate) auth: Auth,
    pub(crate) faults: Faults,
    pub(crate) counts: Counts,
    pub(crate) descriptor: Descriptor,
    pub(crate) artifactory: services::artifactory::State,
    /// The generic collection service's stores (webhook subscriptions, proxies, ...).
    pub(crate) collections: crate::collections::Collections,
    /// The OIDC token exchange's settings and counters.
    pub(crate) oidc: crate::oidc_exchange::OidcState,
}

impl Shared {
    /// The state of a simulator answering under `base_url`, without tokens.
    pub(crate) fn new(cfg: SimConfig, base_url: String) -> Shared {
        let revision: String = cfg
            .artifactory_version
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let shared = Shared {
            base_url,
            version_header: format!("Artifactory/{} {revision}900", cfg.artifactory_version),
            auth: Auth::default(),
            faults: Faults::new(cfg.seed),
            counts: Counts::default(),
            descriptor: Descriptor::new(cfg.descriptor_merge_emulation, cfg.write_latency),
            artifactory: services::artifactory::State::default(),
            collections: crate::collections::Collections::new(&services::collections()),
            oidc: Default::default(),
            config: cfg,
        };
        shared
            .artifactory
            .set_missing_status(shared.config.missing_repository_status);
        services::seed(&shared);
        shared
    }
}

/// The name under which the admin API reaches the repository store (which keeps its own code).
pub(crate) const REPOSITORIES: &str = "repositories";

/// Direct access to any collection ("a change made in JFrog"): no validation, no counts, no
/// faults. `repositories` reaches the repository store.
impl Shared {
    pub(crate) fn collection_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .collections
            .names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        names.push(REPOSITORIES.to_owned());
        names.sort();
        names
    }

    pub(crate) fn has_collection(&self, collection: &str) -> bool {
        collection == REPOSITORIES || self.collections.get(collection).is_some()
    }

    pub(crate) fn object_count(&self, collection: &str) -> Option<usize> {
        if collection == REPOSITORIES {
            return Some(self.artifactory.repository_count());
        }
        self.collections.count(collection)
    }

    pub(crate) fn objects(&self, collection: &str) -> Option<Vec<Value>> {
        if collection == REPOSITORIES {
            return Some(self.artifactory.repositories_raw());
        }
        self.collections.list_raw(collection)
    }

    pub(crate) fn object(&self, collection: &str, key: &str) -> Option<Value> {
        if collection == REPOSITORIES {
            return self.artifactory.repository_raw(key);
        }
        self.collections.get_raw(collection, key)
    }

    pub(crate) fn put_object(&self, collection: &str, key: &str, value: Value) -> bool {
        if collection == REPOSITORIES {
            return self.artifactory.put_raw(key, value);
        }
        self.collections.put_raw(collection, key, value)
    }

    pub(crate) fn delete_object(&self, collection: &str, key: &str) -> bool {
        if collection == REPOSITORIES {
            return self.artifactory.delete_raw(key);
        }
        self.collections.delete_raw(collection, key)
    }
}

/// Marks a response whose connection must be dropped instead of answered.
#[derive(Debug, Clone, Copy)]
struct DropConnection;

#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by fault injection")
    }
}

impl std::error::Error for Dropped {}

/// A running simulator. Dropping it stops the server; [`Simulator::shutdown`] also waits.
pub struct Simulator {
    shared: Arc<Shared>,
    addr: SocketAddr,
    admin_token: String,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("url", &self.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// Binds the listen address and starts serving.
    pub async fn start(cfg: SimConfig) -> Result<Simulator, crate::Error> {
        let listener =
            TcpListener::bind(cfg.listen)
                .await
                .map_err(|source| crate::Error::Bind {
                    addr: cfg.listen,
                    source,
                })?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(cfg, format!("http://{addr}")));
        let admin_token = match &shared.config.admin_token {
            Some(token) => {
                shared.auth.register_token(token, "admin", true);
                token.clone()
            }
            None => shared.auth.issue_token("admin", true),
        };
        let router = router(shared.clone());
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(serve(listener, router, stop_rx));
        tracing::info!(url = %shared.base_url, "JFrog simulator listening");
        Ok(Simulator {
            shared,
            addr,
            admin_token,
            stop,
            task: Some(task),
        })
    }

    /// Base URL, e.g. `http://127.0.0.1:PORT`; services live under `/artifactory`, `/access`,
    /// `/event`, `/xray`, `/lifecycle`, `/worker`.
    pub fn url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The admin access token created at start.
    pub fn admin_token(&self) -> String {
        self.admin_token.clone()
    }

    /// Issues a new access token; without admin rights it gets 403 on admin APIs.
    pub fn issue_token(&self, admin: bool) -> String {
        let user = if admin { "admin" } else { "reader" };
        self.shared.auth.issue_token(user, admin)
    }

    /// Revokes a token (later requests with it get 401); false when it was not known.
    pub fn revoke_token(&self, token: &str) -> bool {
        self.shared.auth.revoke_token(token)
    }

    /// Adds (or replaces) a basic-auth user.
    pub fn basic_user(&self, user: &str, password: &str, admin: bool) {
        self.shared.auth.set_user(user, password, admin);
    }

    /// Number of requests for one route, e.g. `("GET", "/artifactory/api/repositories/{key}")`.
    pub fn request_count(&self, method: &str, route: &str) -> u64 {
        self.shared.counts.get(method, route)
    }

    /// All request counts, keyed `"METHOD /route/{template}"`.
    pub fn request_counts(&self) -> BTreeMap<String, u64> {
        self.shared.counts.all()
    }

    /// Resets all request counts to zero.
    pub fn reset_counts(&self) {
        self.shared.counts.reset();
    }

    /// Adds a fault; see [`Fault`].
    pub fn add_fault(&self, fault: Fault) -> FaultId {
        self.shared.faults.add(fault)
    }

    /// Removes one fault; false when it was not (or no longer) active.
    pub fn remove_fault(&self, id: FaultId) -> bool {
        self.shared.faults.remove(id)
    }

    /// The active faults, with how many requests each matched and how often it fired.
    pub fn faults(&self) -> Vec<(FaultId, Fault, FaultCounts)> {
        self.shared.faults.list()
    }

    /// Removes all faults.
    pub fn clear_faults(&self) {
        self.shared.faults.clear();
    }

    /// Turns the descriptor-merge failure of overlapping configuration writes on or off.
    pub fn set_descriptor_merge_emulation(&self, on: bool) {
        self.shared.descriptor.set_emulation(on);
    }

    /// Sets how long each configuration write takes.
    pub fn set_write_latency(&self, latency: Duration) {
        self.shared.descriptor.set_write_latency(latency);
    }

    /// Sets the status answered for a missing repository (404 or 400).
    pub fn set_missing_repository_status(&self, status: u16) {
        self.shared.artifactory.set_missing_status(status);
    }

    /// Whether the YAML configuration patch takes the repository sections (default: yes, as
    /// a self-hosted platform; no: as a platform that configures repositories only through
    /// their REST API).
    pub fn set_yaml_repositories(&self, on: bool) {
        self.shared.artifactory.set_yaml_repositories(on);
    }

    /// Sets the read-after-write lag of the read APIs (zero turns it off).
    pub fn set_read_after_write_lag(&self, lag: Duration) {
        self.shared.artifactory.lag.set(lag);
    }

    /// Writes `DIR/jfrog.env` with `JFROG_URL` and `JFROG_ACCESS_TOKEN` (the admin token),
    /// readable by the owner only.
    pub fn write_env_file(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("jfrog.env");
        let body = format!(
            "JFROG_URL={}\nJFROG_ACCESS_TOKEN={}\n",
            self.shared.base_url, self.admin_token
        );
        let tmp = dir.join(".jfrog.env.tmp");
        std::fs::write(&tmp, body)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        }
        std::fs::rename(&tmp, &path)
    }

    /// A repository's stored configuration as `GET` would return it to an admin (secrets
    /// masked), or `None`. Not counted as a request.
    pub fn repository(&self, key: &str) -> Option<Value> {
        self.shared.artifactory.repository_view(key)
    }

    /// A repository's stored configuration including write-only secrets in clear.
    pub fn repository_raw(&self, key: &str) -> Option<Value> {
        self.shared.artifactory.repository_raw(key)
    }

    /// Stores a repository configuration directly, as "a change made directly in JFrog",
    /// bypassing validation, defaults and the descriptor emulation. The value must be a JSON
    /// object with `rclass`; `packageType` defaults to `generic`. Returns false when it is not.
    pub fn put_repository_raw(&self, key: &str, config: Value) -> bool {
        self.shared.artifactory.put_raw(key, config)
    }

    /// Deletes a repository directly; false when it did not exist.
    pub fn delete_repository_raw(&self, key: &str) -> bool {
        self.shared.artifactory.delete_raw(key)
    }

    /// Number of repositories.
    pub fn repository_count(&self) -> usize {
        self.shared.artifactory.repository_count()
    }

    /// The collections the object functions below reach: every collection of the generic
    /// collection service (e.g. `event_subscriptions`, `proxies`) and `repositories`.
    pub fn collection_names(&self) -> Vec<String> {
        self.shared.collection_names()
    }

    /// Every stored object of a collection (write-only secrets in clear), sorted by key;
    /// `None` for an unknown collection. Not counted as a request.
    pub fn objects(&self, collection: &str) -> Option<Vec<Value>> {
        self.shared.objects(collection)
    }

    /// Number of objects of a collection (0 for an unknown one).
    pub fn object_count(&self, collection: &str) -> usize {
        self.shared.object_count(collection).unwrap_or(0)
    }

    /// One stored object (write-only secrets in clear), or `None`.
    pub fn object(&self, collection: &str, key: &str) -> Option<Value> {
        self.shared.object(collection, key)
    }

    /// The stored system configuration (the descriptor's sections, write-only secrets such
    /// as the mail server password in clear), as the configuration PATCH calls leave it.
    pub fn system_configuration(&self) -> Value {
        self.shared
            .descriptor
            .content
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Stores an object directly, as "a change made directly in JFrog" (seed an existing
    /// object, or drift): no validation, no defaults, not counted, no faults. The key field is
    /// set from `key` (for server-assigned IDs, `key` is the ID). False when the collection is
    /// unknown or the value is not a JSON object (repositories also need `rclass`).
    pub fn put_object(&self, collection: &str, key: &str, value: Value) -> bool {
        self.shared.put_object(collection, key, value)
    }

    /// Deletes an object directly; false when it did not exist.
    pub fn delete_object(&self, collection: &str, key: &str) -> bool {
        self.shared.delete_object(collection, key)
    }

    /// Waits until at least `n` requests of a route were counted; false on timeout. Lets tests
    /// wait on a condition instead of sleeping.
    pub async fn wait_for_requests(
        &self,
        method: &str,
        route: &str,
        n: u64,
        timeout: Duration,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.request_count(method, route) >= n {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stops the server and waits for the connection loop to end.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .merge(services::routes())
        .merge(crate::oidc_exchange::routes())
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            pipeline,
        ))
        .merge(crate::admin::routes())
        .merge(crate::oidc_exchange::admin_routes())
        .with_state(shared)
}

async fn not_found(req: Request) -> ApiError {
    ApiError::new(
        Flavor::for_path(req.uri().path()),
        StatusCode::NOT_FOUND,
        "Not Found",
    )
}

/// Counts the request under its route and applies the faults that match it.
async fn pipeline(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| path.clone(), |m| m.as_str().to_owned());
    shared.counts.record(&method, &route);
    let decision = shared.faults.decide(&method, &path);
    if !decision.delay.is_zero() {
        tokio::time::sleep(decision.delay).await;
    }
    let saas_refusal = shared
        .config
        .saas
        .then(|| crate::saas::refusal(&path))
        .flatten();
    let resp = match decision.action {
        _ if saas_refusal.is_some() => saas_refusal
            .map(IntoResponse::into_response)
            .unwrap_or_default(),
        Some(Action::Error {
            status,
            retry_after,
        }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut err = ApiError::new(
                Flavor::for_path(&path),
                status,
                status
                    .canonical_reason()
                    .unwrap_or("Injected fault")
                    .to_owned(),
            );
            err.retry_after_secs =
                retry_after.map(|d| d.as_secs() + u64::from(d.subsec_nanos() > 0));
            err.into_response()
        }
        Some(Action::DropAfterCommit) => {
            let mut resp = next.run(req).await;
            if resp.status().is_success() {
                resp.extensions_mut().insert(DropConnection);
            }
            resp
        }
        None => next.run(req).await,
    };
    let mut resp = resp;
    if path.starts_with("/artifactory") {
        // The identification headers Artifactory sends with every answer.
        let headers = resp.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&shared.version_header) {
            headers.insert("x-jfrog-version", v);
        }
        headers.insert("x-artifactory-id", HeaderValue::from_static("jfrog-sim"));
        headers.insert(
            "x-artifactory-node-id",
            HeaderValue::from_static("jfrog-sim-0"),
        );
    }
    let dropped = resp.extensions().get::<DropConnection>().is_some();
    tracing::debug!(%method, %route, status = resp.status().as_u16(), dropped, "request");
    resp
}

async fn serve(listener: TcpListener, router: Router, mut stop: watch::Receiver<bool>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let router = router.clone();
                conns.spawn(async move {
                    let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let router = router.clone();
                        async move {
                            let resp = match router.oneshot(req).await {
                                Ok(resp) => resp,
                                Err(e) => match e {},
                            };
                            if resp.extensions().get::<DropConnection>().is_some() {
                                return Err(Dropped);
                            }
                            Ok::<_, Dropped>(resp)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}
