//! An in-process Kubernetes API server for tests, benchmarks and the sandbox.
//!
//! It serves, over HTTPS (and plain HTTP) on loopback, the parts of the Kubernetes API that our providers,
//! kube-rs and `kubectl` 1.32 use, with a real server's semantics, and is stricter rather than
//! looser wherever it differs.
//!
//! # Library API
//!
//! ```no_run
//! # async fn demo() -> Result<(), kube_testserver::Error> {
//! use kube_testserver::{Config, TestServer};
//! let server = TestServer::start(Config::default()).await?;
//! let url = server.url();                                   // https://127.0.0.1:PORT
//! let admin = server.admin_token();                          // user "admin", group system:masters
//! let kubeconfig_yaml = server.kubeconfig(&admin);
//! server.write_kubeconfig(std::path::Path::new("/tmp/kc")).ok();
//! let token = server.issue_token("system:serviceaccount:crossplane-system:provider", &[]); // RBAC applies
//! server.shutdown().await;
//! # let _ = (url, kubeconfig_yaml, token); Ok(()) }
//! ```
//!
//! kube-rs clients are best built from [`TestServer::kubeconfig`] (it carries the CA):
//! `kube::Config::from_custom_kubeconfig(Kubeconfig::from_yaml(&yaml)?, &Default::default())`.
//!
//! # Transport
//!
//! HTTPS with a per-server CA ([`TestServer::ca_pem`], also in the kubeconfig), because kubectl
//! sends bearer tokens only over TLS; the same port also answers plain HTTP/1.1
//! ([`TestServer::http_url`]) for clients that send tokens there. See [`tls`].
//!
//! # What is served
//!
//! - Discovery: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>` (legacy
//!   format; a request for aggregated discovery gets the legacy format with
//!   `Content-Type: application/json`, which clients accept as "not aggregated"), `/openapi/v3`
//!   and `/openapi/v2` (JSON, or gnostic protobuf for client-go; see [`openapi`] and
//!   [`openapi_proto`]), `/healthz`, `/livez`, `/readyz`.
//! - Built-in kinds: Namespace (`default`, `kube-system`, `kube-public`, `kube-node-lease` and
//!   `crossplane-system` exist at start, each with a `default` ServiceAccount), Secret, ConfigMap,
//!   ServiceAccount, Event in `v1` and `events.k8s.io/v1` (one store, two views; see [`events`]),
//!   Lease, CustomResourceDefinition, Role, ClusterRole, RoleBinding, ClusterRoleBinding;
//!   `authorization.k8s.io/v1` SelfSubjectAccessReview and SelfSubjectRulesReview and
//!   `authentication.k8s.io/v1` SelfSubjectReview (create only); TokenRequest
//!   (`serviceaccounts/<name>/token`) with signed service-account tokens, and the issuer's OIDC
//!   discovery (`/.well-known/openid-configuration`, `/openid/v1/jwks`), see [`sa_tokens`].
//! - CRDs: unknown fields reported as `fieldValidation` asks (`crd_schema::prune_crd_unknown_fields`),
//!   defaulted by `crd_schema::default_crd`, checked by `crd_schema::validate_crd`, `NamesAccepted` and
//!   `Established` set at once (or `NameConflict`), the resource served immediately in every
//!   served version (objects keep the stored form; serving another version only rewrites
//!   `apiVersion`: conversion strategy `None`). Deleting a CRD sets `Terminating`, deletes its
//!   objects (honouring their finalizers) and unserves the resource when they are gone.
//! - Custom resources: pruned, defaulted and validated by the `crd-schema` crate (see
//!   [`admission`]; `/status` writes by the status strategy's rules, scale paths checked);
//!   status subresource; `metadata.generation` bumped on changes outside
//!   metadata and status.
//! - Object semantics (see [`store`]): uid, creationTimestamp, one global monotonically
//!   increasing resourceVersion, 409 on stale updates and existing names, `generateName`,
//!   finalizers and `deletionTimestamp`, no-op updates that change nothing, garbage collection by
//!   ownerReferences (Background, Foreground and Orphan propagation), namespace deletion.
//! - Writes: create, update, delete (with DeleteOptions: preconditions, propagationPolicy;
//!   `gracePeriodSeconds` is accepted and objects go at once), deletecollection, patch
//!   (merge, JSON, strategic (see [`patch`]), apply (see [`ssa`])), `dryRun=All`,
//!   `fieldValidation` (`Strict`, `Warn` (the default), `Ignore`), `fieldManager`.
//! - Reads: get, list (`limit`/`continue`, label and field selectors, see [`selectors`]),
//!   watch (`resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`, `sendInitialEvents`
//!   with the `k8s.io/initial-events-end` bookmark, 410 `Expired` as an ERROR event for a
//!   resourceVersion older than the kept history), Tables (see [`table`]).
//! - Authentication and RBAC, including the `OwnerReferencesPermissionEnforcement` check:
//!   see [`rbac`]. Events expire after `Config::event_ttl`.
//!
//! # Faults, for fault tests
//!
//! [`TestServer::restart`] stands for a restart of kube-apiserver with its state kept: every
//! connection is dropped, nothing is accepted for a while, then the same address serves the
//! same objects; [`TestServer::expire_watches`] ends every watch and compacts the watch history,
//! so that a client resuming from a resourceVersion it saw gets 410 Expired and must list
//! again. Both are also `POST /__testserver/restart?downSeconds=N` and
//! `POST /__testserver/expire-watches` for `system:masters` (the sandbox's admin kubeconfig:
//! `kubectl create --raw ... -f -`), `GET /__testserver/requests` counts the list and
//! watch requests per user, to see clients list again, and
//! `GET /__testserver/service-account-tokens` lists the last TokenRequest tokens issued (for
//! tests that look for them where they must not be).
//!
//! The `sandbox kube` subcommand ([`cli`]) serves it alone and writes `DIR/kubeconfig`.
//! `cargo run -p kube-testserver --example perf` measures it at scale (600 CRDs, 10,000 objects,
//! a watch per Kind).
//!
//! # Deviations from a real API server
//!
//! - HTTP/2 over TLS (ALPN `h2`, 100 streams per connection: kube-apiserver's default
//!   `--http2-max-streams-per-connection`) and HTTP/1.1; no h2c on the plain-HTTP side; the
//!   serving certificate is for 127.0.0.1/localhost/::1 only.
//! - Bearer tokens only (no client certificates); bodies are JSON or YAML, protobuf only for
//!   the kinds kubectl's typed clients write (see [`protobuf`]), no CBOR; responses are JSON.
//! - Watch history is kept per resource (`Config::watch_history` events each), not per etcd
//!   compaction; a watch from an older resourceVersion gets 410 Expired.
//! - Paged lists are not consistent snapshots: later pages show the current state after the
//!   last returned key; `remainingItemCount` is not set; continue tokens never expire.
//!   `resourceVersion`/`resourceVersionMatch` on lists are accepted but the list is always the
//!   current state.
//! - No conversion webhooks; multi-version CRDs serve the stored object with `apiVersion`
//!   rewritten. Defaults are applied on writes only, not when reading.
//! - Events expire `Config::event_ttl` after their last timestamp (checked at most every
//!   minute), not exactly `--event-ttl` after their last write.
//! - Graceful deletion does not wait: `gracePeriodSeconds` is accepted and ignored.
//! - Garbage collection and namespace/CRD cleanup run at once in a background task rather than
//!   after informer delays.
//! - Strategic merge patch replaces lists (see [`patch`]); server-side apply treats lists of
//!   built-ins atomically except the metadata ones (see [`ssa`]).
//! - Built-in kinds are validated only where our clients depend on it (see [`admission`]); no
//!   admission webhooks, quotas, limit ranges or API priority and fairness.
//! - Bookmarks are sent every `Config::bookmark_interval` (upstream: about once a minute).
//! - OpenAPI documents carry schemas for custom resources only (the v2 document's paths cover
//!   every resource, its definitions only custom resources and the `meta/v1` types they
//!   reference, without upstream's descriptions); the v2 protobuf's YAML values are serde_yaml's
//!   rendering, not yaml.v3's (see [`openapi`], [`openapi_proto`]).
//! - RBAC: no aggregation of ClusterRoles, `nonResourceURLs` rules not evaluated (see [`rbac`]).
//! - Unauthenticated requests get 401 everywhere but the health endpoints (no anonymous access).
//! - Credentials come only from [`TestServer::issue_token`]; the TokenRequest API issues signed
//!   service-account tokens for relying parties (with OIDC discovery, see [`sa_tokens`]) that
//!   this server does not accept as credentials; ServiceAccounts get no token Secrets.
//! - Namespace deletion removes the contents and then the namespace at once; the
//!   `spec.finalizers: [kubernetes]` of a Namespace is informational (no `/finalize` call).
//! - CRD `selectableFields` are not supported (field selectors on custom resources allow
//!   `metadata.name` and `metadata.namespace` only); name conflicts between CRDs are detected for
//!   kind and plural within a group only.
//! - Type-specific Secret validation (e.g. required keys of `kubernetes.io/dockerconfigjson`)
//!   and Lease field validation are not done.
//! - A list or watch `resourceVersion` newer than the server's is served at once instead of
//!   waiting ("Too large resource version").

pub(crate) mod admission;
pub mod cli;
pub(crate) mod events;
pub(crate) mod http;
pub(crate) mod openapi;
pub(crate) mod openapi_proto;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod rbac;
pub(crate) mod registry;
pub(crate) mod sa_tokens;
pub(crate) mod selectors;
pub(crate) mod ssa;
pub(crate) mod status;
pub(crate) mod store;
pub(crate) mod table;
pub mod tls;

use base64::Engine;
use rbac::UserInfo;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The Kubernetes version the server claims to be.
pub const VERSION: &str = "v1.32.0";

pub(crate) fn version_info() -> serde_json::Value {
    serde_json::json!({
        "major": "1",
        "minor": "32",
        "gitVersion": VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// Errors of [`TestServer::start`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for ([`Config::listen`]).
        addr: SocketAddr,
        /// Why the bind failed.
        source: io::Error,
    },
    /// The server's CA or serving certificate could not be made.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Watch events kept per resource for watches that resume from a resourceVersion.
    pub watch_history: usize,
    /// How often a watch with `allowWatchBookmarks=true` gets a BOOKMARK.
    pub bookmark_interval: Duration,
    /// How long a watch without `timeoutSeconds` lasts.
    pub watch_timeout: Duration,
    /// Events last written longer ago than this are deleted (kube-apiserver `--event-ttl`).
    pub event_ttl: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            watch_history: 1000,
            bookmark_interval: Duration::from_secs(5),
            watch_timeout: Duration::from_secs(1800),
            event_ttl: Duration::from_secs(3600),
        }
    }
}

/// State shared by all requests.
pub(crate) struct Shared {
    state: Mutex<store::State>,
    tokens: RwLock<HashMap<String, UserInfo>>,
    config: Config,
    addr: SocketAddr,
    /// Cancelled to drop every open connection (a restart); replaced by a fresh one.
    connections: Mutex<CancellationToken>,
    /// The whole server's token (the connection tokens are its children).
    cancel: CancellationToken,
    /// Tells the accept loop to stop listening for the given time (a restart).
    restart_tx: tokio::sync::mpsc::UnboundedSender<Duration>,
    /// List and watch requests per (verb, user).
    reads: Mutex<HashMap<(String, String), u64>>,
    /// The key that signs service-account tokens (TokenRequest).
    pub(crate) sa_signer: sa_tokens::Signer,
    /// The last service-account tokens issued (for tests that look for them).
    pub(crate) sa_issued: Mutex<std::collections::VecDeque<String>>,
    /// The last `/openapi/v2` document built, for the registry generation it was built from
    /// (held while a new one is built, so that concurrent requests wait for it).
    pub(crate) openapi_v2: tokio::sync::Mutex<Option<Arc<openapi::V2Cached>>>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, store::State> {
        // A panic while holding the lock is a bug; keep serving what is stored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The token a new connection is served under.
    fn connection_token(&self) -> CancellationToken {
        self.connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .child_token()
    }

    /// See [`TestServer::expire_watches`].
    pub(crate) fn expire_watches(&self) {
        self.lock().compact_and_end_watches();
    }

    /// See [`TestServer::restart`].
    pub(crate) fn restart(&self, down: Duration) {
        // Stop accepting first, so no client reconnects before its connections are gone.
        let _ = self.restart_tx.send(down);
        {
            let mut c = self.connections.lock().unwrap_or_else(|p| p.into_inner());
            c.cancel();
            *c = self.cancel.child_token();
        }
        self.expire_watches();
        tracing::info!(down = ?down, "kube-testserver restarting: connections dropped, watch history compacted");
    }

    /// Counts a request of `user` under `key`: a verb (`get`, `list`, `watch`, `create`,
    /// `update`, `patch`, `delete`, ...) with `/status` for the status subresource, alone or
    /// followed by the resource (`get providerconfigusages`).
    pub(crate) fn count_request(&self, verb: &str, user: &str) {
        *self
            .reads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((verb.to_string(), user.to_string()))
            .or_default() += 1;
    }

    /// `{"list": {user: n}, "watch": {user: n}, "get": {...}, "update/status": {...}, ...}`.
    pub(crate) fn request_counts(&self) -> serde_json::Value {
        let mut out = serde_json::json!({"list": {}, "watch": {}});
        for ((verb, user), n) in self.reads.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            out[verb.as_str()][user.as_str()] = serde_json::json!(n);
        }
        out
    }
}

/// A running server; it stops on drop or [`TestServer::shutdown`].
pub struct TestServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    admin_token: String,
    ca_pem: String,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Observes a [`TestServer`]'s objects in its process ([`TestServer::observer`]).
#[derive(Clone)]
pub struct Observer(Arc<Shared>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer").finish_non_exhaustive()
    }
}

impl Observer {
    /// The objects of `resource` in API group `group` (and `namespace`, when given) as the
    /// server's process stores them: every one stored now, then each change as it is
    /// committed. For a harness in the server's own process that measures what runs against
    /// the server (`sandbox bench`): it reads the stored objects themselves, so observing
    /// costs no serialisation, HTTP or TLS on the cores the measured clients share. The
    /// changes end ([`Observation::next`] answers `None`) when the server ends its watches
    /// (a restart, [`TestServer::expire_watches`]); observe again then.
    pub fn observe(&self, group: &str, resource: &str, namespace: Option<&str>) -> Observation {
        let key = registry::StoreKey {
            group: group.to_string(),
            resource: resource.to_string(),
        };
        let (initial, changes) = self
            .0
            .lock()
            .watch(&key, namespace, store::WatchFrom::InitialState)
            .unwrap_or_else(|_| {
                // Only a watch from a resourceVersion can be refused (too old).
                let (_, rx) = tokio::sync::mpsc::unbounded_channel();
                (Vec::new(), rx)
            });
        Observation {
            objects: initial.into_iter().map(|e| e.obj.clone()).collect(),
            changes,
        }
    }
}

/// What [`Observer::observe`] answers: the objects stored when it was asked, then each
/// change committed after it.
#[derive(Debug)]
pub struct Observation {
    /// The objects stored when the observation began.
    pub objects: Vec<Arc<serde_json::Value>>,
    changes: tokio::sync::mpsc::UnboundedReceiver<Arc<store::StoredEvent>>,
}

impl Observation {
    /// The next committed change: the object as stored after it (as it was, for a
    /// deletion) and whether it was a deletion. `None` once the server ended its watches.
    pub async fn next(&mut self) -> Option<(Arc<serde_json::Value>, bool)> {
        let ev = self.changes.recv().await?;
        Some((ev.obj.clone(), ev.kind == store::EvKind::Deleted))
    }
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

fn random_token() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..32)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

impl TestServer {
    /// Binds, creates the initial namespaces and starts serving.
    pub async fn start(config: Config) -> Result<TestServer, Error> {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| Error::Bind {
                addr: config.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
        let (gc_tx, mut gc_rx) = tokio::sync::mpsc::unbounded_channel();
        let state = store::State::new(config.watch_history, gc_tx);
        let admin_token = random_token();
        let mut tokens = HashMap::new();
        tokens.insert(
            admin_token.clone(),
            UserInfo {
                name: "admin".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
            },
        );
        let cancel = CancellationToken::new();
        let (restart_tx, mut restart_rx) = tokio::sync::mpsc::unbounded_channel::<Duration>();
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            tokens: RwLock::new(tokens),
            config,
            addr,
            connections: Mutex::new(cancel.child_token()),
            cancel: cancel.clone(),
            restart_tx,
            reads: Mutex::new(HashMap::new()),
            sa_signer: sa_tokens::Signer::generate(),
            sa_issued: Mutex::new(std::collections::VecDeque::new()),
            openapi_v2: tokio::sync::Mutex::new(None),
        });
        let gc_shared = shared.clone();
        let gc_cancel = cancel.clone();
        let event_ttl = shared.config.event_ttl;
        tokio::spawn(async move {
            let mut sweep = tokio::time::interval(
                event_ttl
                    .min(Duration::from_secs(60))
                    .max(Duration::from_millis(100)),
            );
            loop {
                tokio::select! {
                    w = gc_rx.recv() => {
                        let Some(w) = w else { break };
                        gc_shared.lock().run_gc(w);
                    }
                    _ = sweep.tick() => {
                        gc_shared.lock().expire_events(event_ttl);
                    }
                    _ = gc_cancel.cancelled() => break,
                }
            }
        });
        let tls = tls::generate()?;
        let acceptor = tls.acceptor.clone();
        let c = cancel.clone();
        let conn_shared = shared.clone();
        let task = tokio::spawn(async move {
            let mut listener = listener;
            loop {
                tokio::select! {
                    r = listener.accept() => match r {
                        Ok((stream, _)) => {
                            let token = conn_shared.connection_token();
                            tokio::spawn(serve_connection(stream, acceptor.clone(), conn_shared.clone(), token));
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    },
                    down = restart_rx.recv() => {
                        let Some(down) = down else { break };
                        // Down: connections are refused until the same address listens again.
                        drop(listener);
                        tokio::select! {
                            _ = tokio::time::sleep(down) => {}
                            _ = c.cancelled() => break,
                        }
                        listener = match rebind(addr, &c).await {
                            Some(l) => l,
                            None => break,
                        };
                        tracing::info!(%addr, "kube-testserver listening again");
                    }
                    _ = c.cancelled() => break,
                }
            }
        });
        tracing::info!(url = %format!("https://{addr}"), "kube-testserver listening");
        Ok(TestServer {
            shared,
            addr,
            admin_token,
            ca_pem: tls.ca_pem,
            cancel,
            task: Some(task),
        })
    }

    /// `https://127.0.0.1:PORT` (the certificate is signed by [`TestServer::ca_pem`]).
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT`: the same server without TLS (kubectl will not send tokens there).
    pub fn http_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The service-account issuer (`iss` of TokenRequest tokens), whose OIDC discovery this
    /// server serves: its https URL.
    pub fn service_account_issuer(&self) -> String {
        self.url()
    }

    /// A JWT with `claims`, signed with the service-account issuer's key as a TokenRequest
    /// token is: for tests of a relying party's checks that TokenRequest cannot produce (an
    /// expired token, a foreign subject).
    pub fn sign_service_account_claims(&self, claims: &serde_json::Value) -> String {
        self.shared
            .sa_signer
            .sign(claims)
            .expect("the issuer's key signs")
    }

    /// The PEM of the CA that signed the serving certificate.
    pub fn ca_pem(&self) -> String {
        self.ca_pem.clone()
    }

    /// The all-powerful token (user `admin`, group `system:masters`).
    pub fn admin_token(&self) -> String {
        self.admin_token.clone()
    }

    /// A kubeconfig (YAML) for this server and token, with namespace `default`.
    pub fn kubeconfig(&self, token: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-testserver\n  cluster:\n    server: {}\n    certificate-authority-data: {}\ncontexts:\n- name: kube-testserver\n  context:\n    cluster: kube-testserver\n    user: kube-testserver\n    namespace: default\ncurrent-context: kube-testserver\nusers:\n- name: kube-testserver\n  user:\n    token: {}\n",
            self.url(),
            base64::engine::general_purpose::STANDARD.encode(&self.ca_pem),
            token
        )
    }

    /// Writes the admin kubeconfig to `path` (mode 0600 on Unix).
    pub fn write_kubeconfig(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.kubeconfig(&self.admin_token))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(())
    }

    /// A new bearer token for `user` in `groups` (plus `system:authenticated`, and for
    /// `system:serviceaccount:<ns>:<name>` users the service-account groups). RBAC applies.
    pub fn issue_token(&self, user: &str, groups: &[&str]) -> String {
        let mut g: Vec<String> = groups.iter().map(|s| s.to_string()).collect();
        if let Some(rest) = user.strip_prefix("system:serviceaccount:")
            && let Some((ns, _)) = rest.split_once(':')
        {
            g.push("system:serviceaccounts".into());
            g.push(format!("system:serviceaccounts:{ns}"));
        }
        g.push("system:authenticated".into());
        g.dedup();
        let token = random_token();
        let mut tokens = self
            .shared
            .tokens
            .write()
            .unwrap_or_else(|p| p.into_inner());
        tokens.insert(
            token.clone(),
            UserInfo {
                name: user.to_string(),
                groups: g,
            },
        );
        token
    }

    /// A restart of the server with its state kept: every connection (and so every watch)
    /// is dropped at once, connections are refused for `down`, then the same address serves
    /// the same objects again. The watch history is compacted as well (a restarted
    /// kube-apiserver's watch cache starts empty), so clients resuming a watch get 410 Expired
    /// and must list again.
    pub fn restart(&self, down: Duration) {
        self.shared.restart(down);
    }

    /// Ends every open watch (connections stay) and compacts the watch history: a client
    /// resuming from a resourceVersion it saw gets 410 Expired and must list again.
    pub fn expire_watches(&self) {
        self.shared.expire_watches();
    }

    /// List and watch requests so far per user: `{"list": {user: n}, "watch": {user: n}}`
    /// (and the other verbs, as [`Self::request_counts`]).
    pub fn read_counts(&self) -> serde_json::Value {
        self.shared.request_counts()
    }

    /// Requests to resources so far, per verb (`update/status` for a status update) and
    /// user, and per verb and resource: `{"get": {user: n}, "get secrets": {user: n},
    /// "update/status": {user: n}, ...}`; `list` and `watch` are always present.
    pub fn request_counts(&self) -> serde_json::Value {
        self.shared.request_counts()
    }

    /// Number of stored objects (for measurements).
    pub fn object_count(&self) -> usize {
        self.shared.lock().object_count()
    }

    /// A handle that observes this server's objects ([`Observer::observe`]) from any task,
    /// for as long as the server runs.
    pub fn observer(&self) -> Observer {
        Observer(self.shared.clone())
    }

    /// Stops serving and waits for the listener to close (open watches end).
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(t) = self.task.take() {
            // Open watch streams keep connections alive; don't wait for them forever.
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.cancel.cancel();
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// Binds `addr` again after a restart's down time (the old socket may linger briefly).
async fn rebind(addr: SocketAddr, cancel: &CancellationToken) -> Option<tokio::net::TcpListener> {
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => return Some(l),
            Err(e) => tracing::warn!(error = %e, %addr, "cannot listen again yet"),
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = cancel.cancelled() => return None,
        }
    }
}

/// Concurrent streams per HTTP/2 connection, as kube-apiserver allows by default
/// (`--http2-max-streams-per-connection` 0 means 100 in `k8s.io/apiserver`; 1,000 is only
/// the aggregated API servers' default). A client that puts more long-lived watches on one
/// connection sees its further requests wait, as on a real cluster.
const H2_MAX_STREAMS: u32 = 100;

/// Serves one connection, TLS or plain HTTP/1.1 depending on its first byte; over TLS,
/// HTTP/2 or HTTP/1.1 as ALPN decides.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    shared: Arc<Shared>,
    cancel: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let mut first = [0u8; 1];
    let is_tls = match stream.peek(&mut first).await {
        Ok(1) => first[0] == 0x16,
        _ => return,
    };
    let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let s = shared.clone();
        async move {
            Ok::<_, std::convert::Infallible>(http::handle(s, req.map(axum::body::Body::new)).await)
        }
    });
    let builder = hyper::server::conn::http1::Builder::new();
    if is_tls {
        let Ok(tls) = acceptor.accept(stream).await else {
            return;
        };
        // HTTP/2 when the client offers it (kube-apiserver's choice too): client-go and
        // the providers then multiplex every watch and request over one connection.
        if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
            let mut h2 =
                hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new());
            h2.max_concurrent_streams(H2_MAX_STREAMS);
            let conn = h2.serve_connection(hyper_util::rt::TokioIo::new(tls), service);
            tokio::select! {
                _ = conn => {}
                _ = cancel.cancelled() => {}
            }
            return;
        }
        let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(tls), service);
        tokio::select! {
            _ = conn => {}
            _ = cancel.cancelled() => {}
        }
    } else {
        let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        tokio::select! {
            _ = conn => {}
            _ = cancel.cancelled() => {}
        }
    }
}
