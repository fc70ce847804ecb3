//! The object store: every object of every resource, one global `resourceVersion`, per-resource
//! watch history and watcher lists, and the create/update/delete semantics of kube-apiserver's
//! generic registry (metadata, preconditions, finalizers, `deletionTimestamp`, generation, the
//! status subresource, no-op updates) plus the garbage collector, namespace and CRD cleanup.
//!
//! Objects are kept per resource (group + plural) in a `BTreeMap` keyed by (namespace, name), so
//! reads of one namespace are range scans and a write notifies only the watchers of its own
//! resource. All mutation happens under one lock, which keeps the global `resourceVersion`
//! strictly increasing and makes every watcher see events in commit order.

use crate::admission;
use crate::registry::{Builtin, Registry, ResourceType, StoreKey, View, crd_resource_types};
use crate::ssa;
use crate::status::{ApiError, Qualified};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;

/// A change notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvKind {
    Added,
    Modified,
    Deleted,
}

/// One committed change of one object.
#[derive(Debug)]
pub struct StoredEvent {
    pub kind: EvKind,
    pub rv: u64,
    pub obj: Arc<Value>,
    /// The object before the change (for selector transitions in watches).
    pub prev: Option<Arc<Value>>,
    /// `obj` as a plain-view watcher receives it (JSON), serialised by the first such watcher
    /// and shared by the others, with the `apiVersion` it was serialised for.
    rendered: OnceLock<(String, Bytes)>,
}

impl StoredEvent {
    pub fn new(kind: EvKind, rv: u64, obj: Arc<Value>, prev: Option<Arc<Value>>) -> StoredEvent {
        StoredEvent {
            kind,
            rv,
            obj,
            prev,
            rendered: OnceLock::new(),
        }
    }

    /// The object's JSON for a watcher of `rt`: serialised once per event for the plain view
    /// of one `apiVersion` (every watcher of a store but an `events.k8s.io` one).
    pub fn rendered(&self, rt: &ResourceType) -> Bytes {
        if rt.view == View::Plain {
            let api_version = rt.api_version();
            let (cached_for, json) = self.rendered.get_or_init(|| {
                (
                    api_version.clone(),
                    Bytes::from(crate::http::present_json(rt, &self.obj)),
                )
            });
            if *cached_for == api_version {
                return json.clone();
            }
        }
        Bytes::from(crate::http::present_json(rt, &self.obj))
    }
}

struct Watcher {
    ns: Option<String>,
    tx: mpsc::UnboundedSender<Arc<StoredEvent>>,
}

/// The objects, history and watchers of one resource.
#[derive(Default)]
pub struct ResourceStore {
    pub objects: BTreeMap<(String, String), Arc<Value>>,
    history: VecDeque<Arc<StoredEvent>>,
    /// Watches must start at or after this resourceVersion (older events were dropped).
    floor: u64,
    watchers: Vec<Watcher>,
}

/// The address of one stored object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjKey {
    pub store: StoreKey,
    pub ns: String,
    pub name: String,
}

/// Background work of the garbage collector and the namespace/CRD cleanup.
#[derive(Debug, Clone)]
pub enum GcWork {
    /// An object with this uid is gone: check its dependents.
    OwnerGone(String),
    /// Check one object's owner references.
    Check(ObjKey),
    /// Continue foreground deletion of this owner.
    Foreground(String),
    /// Orphan the dependents of this owner.
    Orphan(String),
    /// Continue deleting the contents of a terminating namespace.
    Namespace(String),
    /// Continue deleting the custom resources of a terminating CRD.
    Crd(String),
}

/// How unknown fields are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

/// Per-request write options.
#[derive(Debug, Clone, Default)]
pub struct WriteCtx {
    pub dry_run: bool,
    pub manager: String,
    pub validation: FieldValidation,
    /// `Warning` headers to return.
    pub warnings: Vec<String>,
    /// `""` or `"status"`.
    pub subresource: String,
    /// The write is a server-side apply that computed managedFields itself.
    pub applied: bool,
}

impl WriteCtx {
    pub fn system(manager: &str) -> WriteCtx {
        WriteCtx {
            manager: manager.to_string(),
            validation: FieldValidation::Ignore,
            ..Default::default()
        }
    }
}

/// `DeleteOptions`.
#[derive(Debug, Clone, Default)]
pub struct DeleteOpts {
    pub propagation: Option<String>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub orphan_dependents: Option<bool>,
}

/// The events a new watch replays first, and its live channel.
pub type WatchStart = (
    Vec<Arc<StoredEvent>>,
    mpsc::UnboundedReceiver<Arc<StoredEvent>>,
);

/// Where a watch starts.
#[derive(Debug, Clone, Copy)]
pub enum WatchFrom {
    /// Synthetic ADDED events for the current objects, then changes.
    InitialState,
    /// Changes after this resourceVersion.
    Rv(u64),
}

pub const CRD_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
const PROTECTED_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub fn crd_store() -> StoreKey {
    StoreKey {
        group: "apiextensions.k8s.io".into(),
        resource: "customresourcedefinitions".into(),
    }
}

pub fn ns_store() -> StoreKey {
    StoreKey {
        group: String::new(),
        resource: "namespaces".into(),
    }
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(|v| v.as_str())
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(|f| f.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(|o| o.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|r| r["uid"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn meta_mut(obj: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !obj.is_object() {
        *obj = json!({});
    }
    let m = obj.as_object_mut().expect("just made an object");
    let meta = m.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut().expect("just made an object")
}

/// Everything the server stores.
pub struct State {
    pub rv: u64,
    pub stores: HashMap<StoreKey, ResourceStore>,
    pub registry: Registry,
    uid_index: HashMap<String, ObjKey>,
    owner_index: HashMap<String, HashSet<ObjKey>>,
    history_limit: usize,
    gc_tx: mpsc::UnboundedSender<GcWork>,
    /// Bumped by every write to a Role, ClusterRole, RoleBinding or ClusterRoleBinding.
    pub(crate) rbac_epoch: u64,
    /// The rules that apply to each user and namespace asked about since the RBAC objects last
    /// changed.
    pub(crate) rbac_rules: std::sync::Mutex<crate::rbac::RulesCache>,
}

impl State {
    pub fn new(history_limit: usize, gc_tx: mpsc::UnboundedSender<GcWork>) -> State {
        let mut s = State {
            rv: 1,
            stores: HashMap::new(),
            registry: Registry::with_builtins(),
            uid_index: HashMap::new(),
            owner_index: HashMap::new(),
            history_limit: history_limit.max(1),
            gc_tx,
            rbac_epoch: 0,
            rbac_rules: Default::default(),
        };
        for ns in [
            "default",
            "kube-system",
            "kube-public",
            "kube-node-lease",
            "crossplane-system",
        ] {
            if let Some(rt) = s.registry.get("", "v1", "namespaces") {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                if let Err(e) = s.create(&rt, None, obj, &mut WriteCtx::system("kube-apiserver")) {
                    tracing::error!(namespace = ns, error = %e.message, "cannot create initial namespace");
                }
            }
        }
        s
    }

    fn gc(&self, w: GcWork) {
        // The receiver lives as long as the server; a send can only fail during shutdown.
        let _ = self.gc_tx.send(w);
    }

    pub fn get(&self, store: &StoreKey, ns: &str, name: &str) -> Option<Arc<Value>> {
        self.stores
            .get(store)
            .and_then(|s| s.objects.get(&(ns.to_string(), name.to_string())))
            .cloned()
    }

    fn get_rt(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<Arc<Value>, ApiError> {
        self.get(&rt.store, ns, name)
            .ok_or_else(|| ApiError::not_found(&rt.qualified(), name))
    }

    /// Whether a namespace exists, and whether it is terminating.
    pub fn namespace(&self, ns: &str) -> Option<bool> {
        self.get(&ns_store(), "", ns)
            .map(|o| o.pointer("/metadata/deletionTimestamp").is_some())
    }

    pub fn object_by_uid(&self, uid: &str) -> Option<(ObjKey, Arc<Value>)> {
        let k = self.uid_index.get(uid)?;
        self.get(&k.store, &k.ns, &k.name).map(|o| (k.clone(), o))
    }

    /// Lists objects of a store (one namespace or all), after `start_after`, up to `limit`,
    /// keeping those `keep` accepts. Returns the objects, whether more remain, and the key of
    /// the last returned object.
    pub fn list(
        &self,
        store: &StoreKey,
        ns: Option<&str>,
        start_after: Option<(String, String)>,
        limit: Option<usize>,
        keep: impl Fn(&Value) -> bool,
    ) -> (Vec<Arc<Value>>, bool, Option<(String, String)>) {
        let Some(s) = self.stores.get(store) else {
            return (Vec::new(), false, None);
        };
        use std::ops::Bound;
        let lower = match (&start_after, ns) {
            (Some(k), _) => Bound::Excluded(k.clone()),
            (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
            (None, None) => Bound::Unbounded,
        };
        let mut out = Vec::new();
        let mut last = None;
        let mut more = false;
        for ((ons, oname), obj) in s.objects.range((lower, Bound::Unbounded)) {
            if let Some(ns) = ns
                && ons != ns
            {
                break;
            }
            if !keep(obj) {
                continue;
            }
            if limit.is_some_and(|l| out.len() >= l) {
                more = true;
                break;
            }
            out.push(obj.clone());
            last = Some((ons.clone(), oname.clone()));
        }
        (out, more, last)
    }

    /// Starts a watch on a store: the events to replay first and the live channel.
    pub fn watch(
        &mut self,
        store: &StoreKey,
        ns: Option<&str>,
        from: WatchFrom,
    ) -> Result<WatchStart, ApiError> {
        let st = self.stores.entry(store.clone()).or_default();
        let in_ns =
            |o: &Value| ns.is_none_or(|ns| meta_str(o, "namespace").unwrap_or_default() == ns);
        let replay = match from {
            WatchFrom::Rv(rv) => {
                if rv < st.floor {
                    return Err(ApiError::gone(format!(
                        "too old resource version: {} ({})",
                        rv, st.floor
                    )));
                }
                st.history
                    .iter()
                    .filter(|e| e.rv > rv && in_ns(&e.obj))
                    .cloned()
                    .collect()
            }
            WatchFrom::InitialState => st
                .objects
                .values()
                .filter(|o| in_ns(o))
                .map(|o| {
                    let rv = meta_str(o, "resourceVersion")
                        .and_then(|r| r.parse().ok())
                        .unwrap_or(0);
                    Arc::new(StoredEvent::new(EvKind::Added, rv, o.clone(), None))
                })
                .collect(),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        st.watchers.push(Watcher {
            ns: ns.map(str::to_string),
            tx,
        });
        Ok((replay, rx))
    }

    /// Writes (or removes, for `Deleted`) an object, assigning the next resourceVersion,
    /// recording history, notifying watchers and maintaining indexes.
    fn commit(&mut self, key: &ObjKey, mut obj: Value, kind: EvKind) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        let obj = Arc::new(obj);
        if key.store.group == crate::rbac::GROUP {
            self.rbac_epoch += 1;
        }
        let history_limit = self.history_limit;
        let st = self.stores.entry(key.store.clone()).or_default();
        let k = (key.ns.clone(), key.name.clone());
        let prev = if kind == EvKind::Deleted {
            st.objects.remove(&k)
        } else {
            st.objects.insert(k, obj.clone())
        };
        let ev = Arc::new(StoredEvent::new(kind, rv, obj.clone(), prev.clone()));
        st.history.push_back(ev.clone());
        while st.history.len() > history_limit {
            if let Some(old) = st.history.pop_front() {
                st.floor = old.rv;
            }
        }
        st.watchers.retain(|w| {
            if w.ns.as_ref().is_some_and(|ns| *ns != key.ns) {
                return !w.tx.is_closed();
            }
            w.tx.send(ev.clone()).is_ok()
        });
        // Indexes.
        if let Some(p) = &prev {
            for o in owner_uids(p) {
                if let Some(set) = self.owner_index.get_mut(&o) {
                    set.remove(key);
                    if set.is_empty() {
                        self.owner_index.remove(&o);
                    }
                }
            }
        }
        let uid = meta_str(&obj, "uid").unwrap_or_default().to_string();
        if kind == EvKind::Deleted {
            self.uid_index.remove(&uid);
            self.gc(GcWork::OwnerGone(uid.clone()));
            for o in owner_uids(&obj) {
                self.gc(GcWork::Foreground(o));
            }
            if !key.ns.is_empty() {
                self.gc(GcWork::Namespace(key.ns.clone()));
            }
            if key.store == crd_store() {
                self.registry.remove_crd(&key.name);
                if let (Some(g), Some(p)) = (
                    obj.pointer("/spec/group").and_then(|v| v.as_str()),
                    obj.pointer("/spec/names/plural").and_then(|v| v.as_str()),
                ) {
                    self.stores.remove(&StoreKey {
                        group: g.into(),
                        resource: p.into(),
                    });
                }
            } else if let Some(crd) = self.crd_of_store(&key.store) {
                self.gc(GcWork::Crd(crd));
            }
        } else {
            self.uid_index.insert(uid, key.clone());
            for o in owner_uids(&obj) {
                self.owner_index.entry(o).or_default().insert(key.clone());
            }
            if key.store == crd_store() {
                self.register_crd(&obj);
            }
        }
        obj
    }

    fn crd_of_store(&self, store: &StoreKey) -> Option<String> {
        if store.group.is_empty() || store.group.ends_with(".k8s.io") {
            return None;
        }
        Some(format!("{}.{}", store.resource, store.group))
    }

    fn register_crd(&mut self, crd: &Value) {
        let name = meta_str(crd, "name").unwrap_or_default().to_string();
        let established = crd
            .pointer("/status/conditions")
            .and_then(|c| c.as_array())
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
            });
        self.registry.remove_crd(&name);
        if !established {
            return;
        }
        match crd_resource_types(crd) {
            Ok(types) => {
                for t in types {
                    self.registry.insert(t);
                }
            }
            Err(e) => {
                tracing::warn!(crd = %name, errors = e.len(), "stored CRD has schemas that do not compile")
            }
        }
    }

    /// Creates an object (already in storage form).
    pub fn create(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        mut obj: Value,
        ctx: &mut WriteCtx,
    ) -> Result<Arc<Value>, ApiError> {
        let q = rt.qualified();
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request is not a JSON object",
            ));
        }
        obj["apiVersion"] = json!(rt.api_version());
        obj["kind"] = json!(rt.kind);
        let ns = ns.unwrap_or_default().to_string();
        let body_ns = meta_str(&obj, "namespace").unwrap_or_default().to_string();
        if rt.namespaced {
            if !body_ns.is_empty() && body_ns != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            match self.namespace(&ns) {
                None => {
                    return Err(ApiError::not_found(
                        &Qualified {
                            group: String::new(),
                            resource: "namespaces".into(),
                            kind: "Namespace".into(),
                        },
                        &ns,
                    ));
                }
                Some(true) => {
                    let nsq = Qualified {
                        group: String::new(),
                        resource: "namespaces".into(),
                        kind: "Namespace".into(),
                    };
                    let mut e =
                        ApiError::forbidden(&q, meta_str(&obj, "name").unwrap_or_default(), "");
                    e.message = format!(
                        "{} \"{}\" is forbidden: unable to create new content in namespace {} because it is being terminated",
                        q.group_resource(),
                        meta_str(&obj, "name").unwrap_or_default(),
                        ns
                    );
                    let _ = nsq;
                    return Err(e);
                }
                Some(false) => {}
            }
            meta_mut(&mut obj).insert("namespace".into(), json!(ns));
        } else {
            meta_mut(&mut obj).remove("namespace");
        }
        if let Some(crd) = &rt.crd_name
            && self
                .get(&crd_store(), "", crd)
                .is_some_and(|c| c.pointer("/metadata/deletionTimestamp").is_some())
        {
            return Err(ApiError::method_not_allowed(
                "create not allowed while custom resource definition is terminating".to_string(),
            ));
        }
        let mut name = meta_str(&obj, "name").unwrap_or_default().to_string();
        if name.is_empty() {
            let generate = meta_str(&obj, "generateName")
                .unwrap_or_default()
                .to_string();
            if generate.is_empty() {
                return Err(ApiError::invalid_field(
                    &q,
                    "",
                    crd_schema::FieldErrorKind::Required,
                    "metadata.name",
                    None,
                    "name or generateName is required",
                ));
            }
            for _ in 0..8 {
                name = format!("{}{}", generate, random_suffix());
                if self.get(&rt.store, &ns, &name).is_none() {
                    break;
                }
            }
            meta_mut(&mut obj).insert("name".into(), json!(name));
        }
        admission::validate_name(rt, &name, &q)?;
        if self.get(&rt.store, &ns, &name).is_some() {
            return Err(ApiError::already_exists(&q, &name));
        }
        {
            let m = meta_mut(&mut obj);
            m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
            m.insert("creationTimestamp".into(), json!(now_rfc3339()));
            for f in [
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
                "selfLink",
            ] {
                m.remove(f);
            }
            if rt.has_generation() {
                m.insert("generation".into(), json!(1));
            } else {
                m.remove("generation");
            }
        }
        // With a status subresource, status is set through it only (upstream's PrepareForCreate).
        if rt.status_subresource
            && rt.builtin == Builtin::Custom
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
        admission::admit(self, rt, &mut obj, None, ctx)?;
        if !ctx.applied {
            let av = rt.api_version();
            let now = now_rfc3339();
            let w = ssa::Writer {
                schema: rt.schema.as_ref().map(|s| s.raw()),
                manager: &ctx.manager,
                api_version: &av,
                subresource: "",
                now: &now,
            };
            ssa::track_update(None, &mut obj, &w);
        }
        if ctx.dry_run {
            return Ok(Arc::new(obj));
        }
        let key = ObjKey {
            store: rt.store.clone(),
            ns: ns.clone(),
            name: name.clone(),
        };
        let has_owners = !owner_uids(&obj).is_empty();
        let out = self.commit(&key, obj, EvKind::Added);
        if has_owners {
            self.gc(GcWork::Check(key));
        }
        if rt.builtin == Builtin::Namespace
            && let Some(sa) = self.registry.get("", "v1", "serviceaccounts")
        {
            let obj = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
            let _ = self.create(
                &sa,
                Some(&name),
                obj,
                &mut WriteCtx::system("kube-controller-manager"),
            );
        }
        Ok(out)
    }

    /// Replaces an object (PUT, or the result of a patch), in storage form.
    pub fn update(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        mut obj: Value,
        ctx: &mut WriteCtx,
    ) -> Result<Arc<Value>, ApiError> {
        let q = rt.qualified();
        let old = self.get_rt(rt, ns, name)?;
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request is not a JSON object",
            ));
        }
        obj["apiVersion"] = json!(rt.api_version());
        obj["kind"] = json!(rt.kind);
        match meta_str(&obj, "name") {
            Some(n) if !n.is_empty() && n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        if rt.namespaced
            && let Some(bns) = meta_str(&obj, "namespace")
            && !bns.is_empty()
            && bns != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let old_rv = meta_str(&old, "resourceVersion")
            .unwrap_or_default()
            .to_string();
        if let Some(rv) = meta_str(&obj, "resourceVersion")
            && !rv.is_empty()
            && rv != old_rv
        {
            return Err(ApiError::stale(&q, name));
        }
        let old_uid = meta_str(&old, "uid").unwrap_or_default().to_string();
        if let Some(uid) = meta_str(&obj, "uid")
            && !uid.is_empty()
            && uid != old_uid
        {
            return Err(ApiError::conflict(
                &q,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {old_uid}"
                ),
            ));
        }
        let mut new = if ctx.subresource == "status" {
            let mut n = (*old).clone();
            match obj.get("status") {
                Some(s) => n["status"] = s.clone(),
                None => {
                    if let Some(m) = n.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
            if ctx.applied
                && let Some(mf) = obj.pointer("/metadata/managedFields")
            {
                meta_mut(&mut n).insert("managedFields".into(), mf.clone());
            }
            n
        } else {
            if rt.status_subresource {
                match old.get("status") {
                    Some(s) => obj["status"] = s.clone(),
                    None => {
                        if let Some(m) = obj.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
            }
            obj
        };
        {
            let old_fin = finalizers(&old);
            let deleting = old.pointer("/metadata/deletionTimestamp").is_some();
            let m = meta_mut(&mut new);
            for f in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "namespace",
                "name",
            ] {
                match old.get("metadata").and_then(|om| om.get(f)) {
                    Some(v) => {
                        m.insert(f.into(), v.clone());
                    }
                    None => {
                        m.remove(f);
                    }
                }
            }
            if !m.contains_key("managedFields")
                && let Some(mf) = old.pointer("/metadata/managedFields")
            {
                m.insert("managedFields".into(), mf.clone());
            }
            m.remove("resourceVersion");
            if deleting {
                let new_fin = finalizers(&new);
                let added: Vec<&String> = new_fin.iter().filter(|f| !old_fin.contains(f)).collect();
                if !added.is_empty() {
                    let list = added
                        .iter()
                        .map(|f| crate::status::go_quote(f))
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(ApiError::invalid_field(
                        &q,
                        name,
                        crd_schema::FieldErrorKind::Forbidden,
                        "metadata.finalizers",
                        None,
                        &format!(
                            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"
                        ),
                    ));
                }
            }
        }
        admission::admit(self, rt, &mut new, Some(&old), ctx)?;
        if rt.has_generation() && spec_changed(rt, &old, &new) {
            let g = old
                .pointer("/metadata/generation")
                .and_then(|g| g.as_i64())
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
        if !ctx.applied {
            let av = rt.api_version();
            let now = now_rfc3339();
            let w = ssa::Writer {
                schema: rt.schema.as_ref().map(|s| s.raw()),
                manager: &ctx.manager,
                api_version: &av,
                subresource: &ctx.subresource,
                now: &now,
            };
            ssa::track_update(Some(&old), &mut new, &w);
        }
        // A no-op update changes nothing: no new resourceVersion, no event.
        if same_ignoring_times(&new, &old) {
            return Ok(old);
        }
        if ctx.dry_run {
            meta_mut(&mut new).insert("resourceVersion".into(), json!(old_rv));
            return Ok(Arc::new(new));
        }
        let key = ObjKey {
            store: rt.store.clone(),
            ns: ns.to_string(),
            name: name.to_string(),
        };
        let owners_changed = owner_uids(&old) != owner_uids(&new);
        if new.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&new).is_empty() {
            return Ok(self.commit(&key, new, EvKind::Deleted));
        }
        let out = self.commit(&key, new, EvKind::Modified);
        if owners_changed {
            self.gc(GcWork::Check(key));
        }
        Ok(out)
    }

    /// Deletes an object: marks it when it has finalizers, removes it otherwise.
    pub fn delete(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        opts: &DeleteOpts,
        ctx: &WriteCtx,
    ) -> Result<Arc<Value>, ApiError> {
        let q = rt.qualified();
        let old = self.get_rt(rt, ns, name)?;
        let uid = meta_str(&old, "uid").unwrap_or_default().to_string();
        if let Some(p) = &opts.precondition_uid
            && *p != uid
        {
            return Err(ApiError::conflict(
                &q,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {p}, UID in object meta: {uid}"
                ),
            ));
        }
        let rv = meta_str(&old, "resourceVersion")
            .unwrap_or_default()
            .to_string();
        if let Some(p) = &opts.precondition_rv
            && *p != rv
        {
            return Err(ApiError::conflict(
                &q,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {p}, ResourceVersion in object meta: {rv}"
                ),
            ));
        }
        if rt.builtin == Builtin::Namespace && PROTECTED_NAMESPACES.contains(&name) {
            return Err(ApiError::forbidden(
                &q,
                name,
                "this namespace may not be deleted",
            ));
        }
        let mut obj = (*old).clone();
        let deleting = old.pointer("/metadata/deletionTimestamp").is_some();
        let mut fins = finalizers(&obj);
        let policy = match (&opts.propagation, opts.orphan_dependents) {
            (Some(p), _) => p.clone(),
            (None, Some(true)) => "Orphan".into(),
            _ => "Background".into(),
        };
        match policy.as_str() {
            "Orphan" if !fins.iter().any(|f| f == "orphan") => fins.push("orphan".into()),
            "Foreground" if !fins.iter().any(|f| f == "foregroundDeletion") => {
                fins.push("foregroundDeletion".into())
            }
            "Orphan" | "Foreground" | "Background" => {}
            other => {
                return Err(ApiError::invalid_field(
                    &q,
                    name,
                    crd_schema::FieldErrorKind::NotSupported,
                    "propagationPolicy",
                    Some(crate::status::go_quote(other)),
                    "supported values: \"Foreground\", \"Background\", \"Orphan\"",
                ));
            }
        }
        if deleting && fins == finalizers(&old) {
            return Ok(old);
        }
        let key = ObjKey {
            store: rt.store.clone(),
            ns: ns.to_string(),
            name: name.to_string(),
        };
        if rt.builtin == Builtin::Namespace {
            if ctx.dry_run {
                return Ok(old);
            }
            let m = meta_mut(&mut obj);
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            obj["status"] = json!({"phase": "Terminating"});
            let out = self.commit(&key, obj, EvKind::Modified);
            self.gc(GcWork::Namespace(name.to_string()));
            return Ok(out);
        }
        if fins.is_empty() {
            if ctx.dry_run {
                return Ok(old);
            }
            return Ok(self.commit(&key, obj, EvKind::Deleted));
        }
        {
            let m = meta_mut(&mut obj);
            m.insert("finalizers".into(), json!(fins));
            if !deleting {
                m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
                if let Some(g) = m.get("generation").and_then(|g| g.as_i64()) {
                    m.insert("generation".into(), json!(g + 1));
                }
            }
        }
        if rt.builtin == Builtin::Crd {
            set_condition(
                &mut obj,
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            );
        }
        if ctx.dry_run {
            return Ok(Arc::new(obj));
        }
        let out = self.commit(&key, obj, EvKind::Modified);
        if fins.iter().any(|f| f == "orphan") {
            self.gc(GcWork::Orphan(uid.clone()));
        }
        if fins.iter().any(|f| f == "foregroundDeletion") {
            self.gc(GcWork::Foreground(uid.clone()));
        }
        if rt.builtin == Builtin::Crd {
            self.gc(GcWork::Crd(name.to_string()));
        }
        Ok(out)
    }

    fn rt_for_store(&self, store: &StoreKey) -> Option<Arc<ResourceType>> {
        self.registry.any_for_store(store)
    }

    fn system_delete(&mut self, key: &ObjKey) {
        if let Some(rt) = self.rt_for_store(&key.store) {
            if let Err(e) = self.delete(
                &rt,
                &key.ns,
                &key.name,
                &DeleteOpts::default(),
                &WriteCtx::system("generic-garbage-collector"),
            ) && e.code != 404
            {
                tracing::warn!(object = %key.name, error = %e.message, "garbage collector could not delete");
            }
        } else if let Some(obj) = self.get(&key.store, &key.ns, &key.name) {
            // The type is no longer served (its CRD is going away): remove directly.
            self.commit(key, (*obj).clone(), EvKind::Deleted);
        }
    }

    fn system_edit(&mut self, key: &ObjKey, edit: impl FnOnce(&mut Value)) {
        let Some(obj) = self.get(&key.store, &key.ns, &key.name) else {
            return;
        };
        let mut new = (*obj).clone();
        edit(&mut new);
        match self.rt_for_store(&key.store) {
            Some(rt) => {
                let mut ctx = WriteCtx::system("generic-garbage-collector");
                if let Err(e) = self.update(&rt, &key.ns, &key.name, new, &mut ctx) {
                    tracing::warn!(object = %key.name, error = %e.message, "garbage collector could not update");
                }
            }
            None => {
                if new.pointer("/metadata/deletionTimestamp").is_some()
                    && finalizers(&new).is_empty()
                {
                    self.commit(key, new, EvKind::Deleted);
                } else {
                    self.commit(key, new, EvKind::Modified);
                }
            }
        }
    }

    fn remove_finalizer(&mut self, key: &ObjKey, fin: &str) {
        self.system_edit(key, |o| {
            if let Some(a) = o
                .pointer_mut("/metadata/finalizers")
                .and_then(|f| f.as_array_mut())
            {
                a.retain(|f| f.as_str() != Some(fin));
            }
        });
    }

    fn check_owners(&mut self, key: &ObjKey) {
        let Some(obj) = self.get(&key.store, &key.ns, &key.name) else {
            return;
        };
        let refs = owner_uids(&obj);
        if refs.is_empty() {
            return;
        }
        // As upstream's GC resolves owners: a namespaced owner must be in the dependent's
        // namespace (a cluster-scoped dependent cannot have one); otherwise it is absent.
        let live: Vec<&String> = refs
            .iter()
            .filter(|u| {
                self.uid_index
                    .get(*u)
                    .is_some_and(|owner| owner.ns.is_empty() || owner.ns == key.ns)
            })
            .collect();
        if live.is_empty() {
            if obj.pointer("/metadata/deletionTimestamp").is_none() {
                self.system_delete(key);
            }
        } else if live.len() != refs.len() {
            let live: HashSet<String> = live.into_iter().cloned().collect();
            self.system_edit(key, |o| {
                if let Some(a) = o
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(|f| f.as_array_mut())
                {
                    a.retain(|r| r["uid"].as_str().is_some_and(|u| live.contains(u)));
                }
            });
        }
    }

    /// One step of background work.
    pub fn run_gc(&mut self, w: GcWork) {
        match w {
            GcWork::OwnerGone(uid) => {
                let deps: Vec<ObjKey> = self
                    .owner_index
                    .get(&uid)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                for d in deps {
                    self.check_owners(&d);
                }
            }
            GcWork::Check(key) => self.check_owners(&key),
            GcWork::Foreground(uid) => {
                let Some((okey, owner)) = self.object_by_uid(&uid) else {
                    return;
                };
                if owner.pointer("/metadata/deletionTimestamp").is_none()
                    || !finalizers(&owner).iter().any(|f| f == "foregroundDeletion")
                {
                    return;
                }
                let deps: Vec<ObjKey> = self
                    .owner_index
                    .get(&uid)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                if deps.is_empty() {
                    self.remove_finalizer(&okey, "foregroundDeletion");
                    return;
                }
                for d in deps {
                    let deleting = self
                        .get(&d.store, &d.ns, &d.name)
                        .is_some_and(|o| o.pointer("/metadata/deletionTimestamp").is_some());
                    if !deleting && let Some(rt) = self.rt_for_store(&d.store) {
                        let opts = DeleteOpts {
                            propagation: Some("Foreground".into()),
                            ..Default::default()
                        };
                        let _ = self.delete(
                            &rt,
                            &d.ns,
                            &d.name,
                            &opts,
                            &WriteCtx::system("generic-garbage-collector"),
                        );
                    }
                }
            }
            GcWork::Orphan(uid) => {
                let Some((okey, owner)) = self.object_by_uid(&uid) else {
                    return;
                };
                if !finalizers(&owner).iter().any(|f| f == "orphan") {
                    return;
                }
                let deps: Vec<ObjKey> = self
                    .owner_index
                    .get(&uid)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                for d in deps {
                    self.system_edit(&d, |o| {
                        if let Some(a) = o
                            .pointer_mut("/metadata/ownerReferences")
                            .and_then(|f| f.as_array_mut())
                        {
                            a.retain(|r| r["uid"].as_str() != Some(uid.as_str()));
                        }
                        if o.pointer("/metadata/ownerReferences")
                            .and_then(|a| a.as_array())
                            .is_some_and(|a| a.is_empty())
                            && let Some(m) = o.get_mut("metadata").and_then(|m| m.as_object_mut())
                        {
                            m.remove("ownerReferences");
                        }
                    });
                }
                self.remove_finalizer(&okey, "orphan");
            }
            GcWork::Namespace(ns) => {
                if self.namespace(&ns) != Some(true) {
                    return;
                }
                let stores: Vec<StoreKey> = self
                    .stores
                    .keys()
                    .filter(|k| **k != ns_store())
                    .cloned()
                    .collect();
                let mut remaining = 0usize;
                for s in stores {
                    let (objs, _, _) = self.list(&s, Some(&ns), None, None, |_| true);
                    remaining += objs.len();
                    for o in objs {
                        if o.pointer("/metadata/deletionTimestamp").is_none() {
                            let key = ObjKey {
                                store: s.clone(),
                                ns: ns.clone(),
                                name: meta_str(&o, "name").unwrap_or_default().to_string(),
                            };
                            self.system_delete(&key);
                        }
                    }
                }
                if remaining == 0
                    && let Some(nsobj) = self.get(&ns_store(), "", &ns)
                    && finalizers(&nsobj).is_empty()
                {
                    let key = ObjKey {
                        store: ns_store(),
                        ns: String::new(),
                        name: ns.clone(),
                    };
                    self.commit(&key, (*nsobj).clone(), EvKind::Deleted);
                }
            }
            GcWork::Crd(name) => {
                let Some(crd) = self.get(&crd_store(), "", &name) else {
                    return;
                };
                if crd.pointer("/metadata/deletionTimestamp").is_none() {
                    return;
                }
                let store = StoreKey {
                    group: crd
                        .pointer("/spec/group")
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                        .into(),
                    resource: crd
                        .pointer("/spec/names/plural")
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                        .into(),
                };
                let (objs, _, _) = self.list(&store, None, None, None, |_| true);
                if objs.is_empty() {
                    let key = ObjKey {
                        store: crd_store(),
                        ns: String::new(),
                        name,
                    };
                    self.remove_finalizer(&key, CRD_FINALIZER);
                    return;
                }
                for o in objs {
                    if o.pointer("/metadata/deletionTimestamp").is_none() {
                        let key = ObjKey {
                            store: store.clone(),
                            ns: meta_str(&o, "namespace").unwrap_or_default().to_string(),
                            name: meta_str(&o, "name").unwrap_or_default().to_string(),
                        };
                        self.system_delete(&key);
                    }
                }
            }
        }
    }

    /// Deletes Events last written more than `ttl` ago, as kube-apiserver's `--event-ttl`
    /// (default 1h) does. Returns how many went.
    pub fn expire_events(&mut self, ttl: std::time::Duration) -> usize {
        let store = StoreKey {
            group: String::new(),
            resource: "events".into(),
        };
        let Some(rt) = self.rt_for_store(&store) else {
            return 0;
        };
        let cutoff = chrono::Utc::now()
            - chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::hours(1));
        let last_write = |o: &Value| -> Option<chrono::DateTime<chrono::Utc>> {
            [
                "/series/lastObservedTime",
                "/lastTimestamp",
                "/eventTime",
                "/metadata/creationTimestamp",
            ]
            .iter()
            .filter_map(|p| o.pointer(p).and_then(|v| v.as_str()))
            .filter_map(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .max()
        };
        let (old, _, _) = self.list(&store, None, None, None, |o| {
            last_write(o).is_some_and(|t| t < cutoff)
        });
        let mut n = 0;
        for o in old {
            let ns = meta_str(&o, "namespace").unwrap_or_default().to_string();
            let name = meta_str(&o, "name").unwrap_or_default().to_string();
            if self
                .delete(
                    &rt,
                    &ns,
                    &name,
                    &DeleteOpts::default(),
                    &WriteCtx::system("kube-apiserver"),
                )
                .is_ok()
            {
                n += 1;
            }
        }
        n
    }

    /// Compacts every resource's watch history, as etcd compaction does, and ends every
    /// open watch: a watch resumed from any resourceVersion seen before gets 410 Expired, so
    /// its client must list again. The resourceVersion moves on by one (the compaction's
    /// revision), so a list made afterwards can be watched from.
    pub fn compact_and_end_watches(&mut self) {
        self.rv += 1;
        let floor = self.rv;
        for st in self.stores.values_mut() {
            st.history.clear();
            st.floor = floor;
            // Dropping the senders ends the watch streams.
            st.watchers.clear();
        }
    }

    /// Number of stored objects (all resources).
    pub fn object_count(&self) -> usize {
        self.stores.values().map(|s| s.objects.len()).sum()
    }
}

/// Whether anything but metadata (and status, when it is a subresource) changed.
fn spec_changed(rt: &ResourceType, old: &Value, new: &Value) -> bool {
    !equal_except(
        old,
        new,
        |k| {
            matches!(k, "metadata" | "apiVersion" | "kind")
                || (rt.status_subresource && k == "status")
        },
        |_, a, b| a == b,
    )
}

/// Whether `a` and `b` are equal (objects: the same keys, in any order), leaving out the
/// top-level keys `skip` selects and comparing each other key's values with `eq`. Neither is
/// copied: this runs on every write.
fn equal_except(
    a: &Value,
    b: &Value,
    skip: impl Fn(&str) -> bool,
    eq: impl Fn(&str, &Value, &Value) -> bool,
) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let mut compared = 0;
    for (k, x) in a {
        if skip(k) {
            continue;
        }
        compared += 1;
        match b.get(k) {
            Some(y) if eq(k, x, y) => {}
            _ => return false,
        }
    }
    compared == b.keys().filter(|k| !skip(k)).count()
}

/// Equality ignoring `metadata.resourceVersion` and managedFields timestamps.
fn same_ignoring_times(a: &Value, b: &Value) -> bool {
    let managed_fields = |x: &Value, y: &Value| match (x.as_array(), y.as_array()) {
        (Some(x), Some(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(e, f)| equal_except(e, f, |k| k == "time", |_, v, w| v == w))
        }
        _ => x == y,
    };
    equal_except(
        a,
        b,
        |_| false,
        |k, x, y| {
            if k != "metadata" {
                return x == y;
            }
            equal_except(
                x,
                y,
                |k| k == "resourceVersion",
                |k, v, w| {
                    if k == "managedFields" {
                        managed_fields(v, w)
                    } else {
                        v == w
                    }
                },
            )
        },
    )
}

/// Sets (or replaces) a condition in `status.conditions`.
pub fn set_condition(obj: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    if !obj.get("status").is_some_and(|s| s.is_object()) {
        obj["status"] = json!({});
    }
    if !obj["status"]
        .get("conditions")
        .is_some_and(|c| c.is_array())
    {
        obj["status"]["conditions"] = json!([]);
    }
    let now = now_rfc3339();
    if let Some(conds) = obj["status"]["conditions"].as_array_mut() {
        let new = json!({"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": now});
        match conds.iter_mut().find(|c| c["type"] == type_) {
            Some(c) => {
                if c["status"] != status {
                    *c = new;
                } else {
                    c["reason"] = json!(reason);
                    c["message"] = json!(message);
                }
            }
            None => conds.push(new),
        }
    }
}

fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configmaps() -> Arc<ResourceType> {
        Registry::with_builtins()
            .get("", "v1", "configmaps")
            .expect("configmaps are built in")
    }

    #[test]
    fn no_op_updates_ignore_the_resource_version_managed_field_times_and_key_order() {
        let old = json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "7",
            "managedFields": [{"manager": "m", "time": "2026-01-01T00:00:00Z", "fieldsV1": {}}]},
            "data": {"x": "1", "y": "2"}});
        let new = json!({"data": {"y": "2", "x": "1"}, "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": [{"fieldsV1": {}, "manager": "m",
            "time": "2026-12-07T00:00:00Z"}]}});
        assert!(same_ignoring_times(&new, &old));
        let mut changed = new.clone();
        changed["data"]["x"] = json!("2");
        assert!(!same_ignoring_times(&changed, &old));
        let mut more = new.clone();
        more["metadata"]["labels"] = json!({"l": "v"});
        assert!(!same_ignoring_times(&more, &old));
        assert!(!same_ignoring_times(&old, &more));
        let mut other_manager = new.clone();
        other_manager["metadata"]["managedFields"][0]["manager"] = json!("n");
        assert!(!same_ignoring_times(&other_manager, &old));
        let mut two = new.clone();
        two["metadata"]["managedFields"]
            .as_array_mut()
            .expect("an array")
            .push(json!({"manager": "n"}));
        assert!(!same_ignoring_times(&two, &old));
    }

    #[test]
    fn the_spec_changes_without_metadata_or_status() {
        let rt = configmaps();
        let old = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"},
            "data": {"x": "1"}});
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"l": "v"});
        relabelled["apiVersion"] = json!("v2");
        assert!(!spec_changed(&rt, &old, &relabelled));
        let mut changed = old.clone();
        changed["data"]["x"] = json!("2");
        assert!(spec_changed(&rt, &old, &changed));
        let mut added = old.clone();
        added["binaryData"] = json!({});
        assert!(spec_changed(&rt, &old, &added));
        assert!(spec_changed(&rt, &added, &old));
        // Without a status subresource, status is part of what changes.
        let mut status = old.clone();
        status["status"] = json!({"phase": "x"});
        assert!(!rt.status_subresource);
        assert!(spec_changed(&rt, &old, &status));
    }
}
