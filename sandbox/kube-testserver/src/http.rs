//! The HTTP layer: authentication, routing of Kubernetes API paths, request decoding, the
//! verbs (get, list, watch, create, update, patch, delete, deletecollection), discovery,
//! tables and the watch stream.

use crate::patch::{PatchKind, apply_patch};
use crate::rbac::{self, Attrs, UserInfo};
use crate::registry::{ResourceType, View};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::ssa;
use crate::status::{ApiError, go_quote};
use crate::store::{
    DeleteOpts, EvKind, FieldValidation, StoredEvent, WatchFrom, WriteCtx, now_rfc3339,
};
use crate::table::{self, Include};
use crate::{Shared, events};
use axum::body::Body;
use base64::Engine;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

const MAX_BODY: usize = 3 * 1024 * 1024;

type Resp = http::Response<Body>;

fn json_response(code: u16, v: &impl serde::Serialize, warnings: &[String]) -> Resp {
    json_bytes_response(code, serde_json::to_vec(v).unwrap_or_default(), warnings)
}

fn json_bytes_response(code: u16, body: Vec<u8>, warnings: &[String]) -> Resp {
    let mut r = http::Response::new(Body::from(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        "Cache-Control",
        HeaderValue::from_static("no-cache, private"),
    );
    for w in warnings {
        if let Ok(h) = HeaderValue::from_str(&format!("299 - {}", go_quote(w))) {
            r.headers_mut().append("Warning", h);
        }
    }
    r
}

/// `/openapi/v2` as kube-openapi's handler serves it: JSON or gnostic protobuf by `Accept`
/// (406 for anything else), `ETag` and `Vary: Accept`, 304 for a matching `If-None-Match`.
async fn openapi_v2(shared: &Shared, req: &Req) -> Resp {
    let Some(format) = crate::openapi::negotiate(req.header("accept")) else {
        let mut r = http::Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_ACCEPTABLE;
        r.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("Accept"));
        return r;
    };
    let doc = {
        let (generation, types) = {
            let st = shared.lock();
            (
                st.registry.generation,
                st.registry.all().cloned().collect::<Vec<_>>(),
            )
        };
        let mut cache = shared.openapi_v2.lock().await;
        match cache.as_ref().filter(|c| c.generation == generation) {
            Some(c) => c.clone(),
            None => {
                // Hundreds of CRDs take a while: off the async workers.
                let built = tokio::task::spawn_blocking(move || {
                    crate::openapi::V2Cached::build(generation, &types)
                })
                .await;
                let Ok(c) = built.map(Arc::new) else {
                    let mut r = http::Response::new(Body::empty());
                    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                    return r;
                };
                *cache = Some(c.clone());
                c
            }
        }
    };
    let (content_type, body) = match format {
        crate::openapi::V2Format::Json => ("application/json", doc.json.clone()),
        crate::openapi::V2Format::Protobuf => (crate::openapi::V2_PROTOBUF, doc.protobuf.clone()),
    };
    let not_modified = req.header("if-none-match").split(',').any(|t| {
        let t = t.trim();
        t == "*" || t.strip_prefix("W/").unwrap_or(t) == doc.etag
    });
    let mut r = if not_modified {
        let mut r = http::Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = http::Response::new(Body::from(body));
        if let Ok(v) = HeaderValue::from_str(content_type) {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        r
    };
    let h = r.headers_mut();
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    if let Ok(v) = HeaderValue::from_str(&doc.etag) {
        h.insert(header::ETAG, v);
    }
    let modified = doc
        .last_modified
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    if let Ok(v) = HeaderValue::from_str(&modified) {
        h.insert(header::LAST_MODIFIED, v);
    }
    r
}

fn error_response(e: &ApiError) -> Resp {
    json_response(e.code, &e.to_status(), &[])
}

/// Entry point of every request.
pub(crate) async fn handle(shared: Arc<Shared>, req: http::Request<Body>) -> Resp {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query: HashMap<String, String> = parts
        .uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    if matches!(path.as_str(), "/healthz" | "/livez" | "/readyz") {
        let mut r = http::Response::new(Body::from("ok"));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return r;
    }
    // Public OIDC discovery of the service-account issuer (see `sa_tokens`).
    if parts.method == Method::GET {
        let issuer = format!("https://{}", shared.addr);
        match path.as_str() {
            "/.well-known/openid-configuration" => {
                return json_response(200, &crate::sa_tokens::discovery(&issuer), &[]);
            }
            "/openid/v1/jwks" => return json_response(200, &shared.sa_signer.jwks(), &[]),
            _ => {}
        }
    }
    let user = match authenticate(&shared, &parts.headers) {
        Some(u) => u,
        None => return error_response(&ApiError::unauthorized()),
    };
    if let Some(op) = path.strip_prefix("/__testserver/") {
        return fault_admin(&shared, &parts.method, op, &query, &user);
    }
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return error_response(&ApiError::too_large("the request body is too large")),
    };
    let req = Req {
        method: parts.method.clone(),
        path,
        query,
        headers: parts.headers,
        body,
        user,
    };
    match route(&shared, req).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    }
}

/// The fault-test hooks under `/__testserver/` (see the crate docs), for `system:masters`.
fn fault_admin(
    shared: &Arc<Shared>,
    method: &Method,
    op: &str,
    query: &HashMap<String, String>,
    user: &UserInfo,
) -> Resp {
    if !user.groups.iter().any(|g| g == "system:masters") {
        return error_response(&ApiError::new(
            403,
            "Forbidden",
            format!(
                "User \"{}\" cannot use the fault-test hook \"{op}\"",
                user.name
            ),
        ));
    }
    match (method.as_str(), op) {
        ("GET", "requests") => json_response(200, &shared.request_counts(), &[]),
        ("GET", "service-account-tokens") => {
            let tokens = shared
                .sa_issued
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            json_response(200, &json!({"tokens": tokens}), &[])
        }
        ("POST", "expire-watches") => {
            shared.expire_watches();
            json_response(200, &json!({"expired": true}), &[])
        }
        ("POST", "restart") => {
            let down = query
                .get("downSeconds")
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .unwrap_or(0.0);
            // After this answer has left: the restart drops this connection too.
            let s = shared.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                s.restart(Duration::from_secs_f64(down));
            });
            json_response(200, &json!({"restarting": true, "downSeconds": down}), &[])
        }
        _ => error_response(&ApiError::not_found_path()),
    }
}

fn authenticate(shared: &Shared, headers: &HeaderMap) -> Option<UserInfo> {
    let h = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = h
        .strip_prefix("Bearer ")
        .or_else(|| h.strip_prefix("bearer "))?
        .trim();
    let tokens = shared.tokens.read().ok()?;
    tokens.get(token).cloned()
}

struct Req {
    method: Method,
    path: String,
    query: HashMap<String, String>,
    headers: HeaderMap,
    body: Bytes,
    user: UserInfo,
}

impl Req {
    fn q(&self, k: &str) -> Option<&str> {
        self.query
            .get(k)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }
    fn flag(&self, k: &str) -> bool {
        matches!(self.q(k), Some("true") | Some("1"))
    }
    fn header(&self, k: &str) -> &str {
        self.headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
    fn wants_table(&self) -> bool {
        let a = self.header("accept");
        a.split(',')
            .next()
            .is_some_and(|first| first.contains("as=Table"))
    }
}

/// A parsed resource path.
struct Target {
    rt: Arc<ResourceType>,
    ns: Option<String>,
    name: Option<String>,
    sub: Option<String>,
    watch_path: bool,
}

async fn route(shared: &Arc<Shared>, req: Req) -> Result<Resp, ApiError> {
    let segs: Vec<String> = req
        .path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| s.to_string())
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["version"] => return Ok(json_response(200, &crate::version_info(), &[])),
        ["api"] => {
            return Ok(json_response(
                200,
                &json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": shared.addr.to_string()}]}),
                &[],
            ));
        }
        ["apis"] => {
            let st = shared.lock();
            return Ok(json_response(200, &st.registry.group_list(), &[]));
        }
        ["api", v] => {
            let st = shared.lock();
            return st
                .registry
                .resource_list("", v)
                .map(|l| json_response(200, &l, &[]))
                .ok_or_else(ApiError::not_found_path);
        }
        ["apis", g] => {
            let st = shared.lock();
            return st
                .registry
                .group(g)
                .map(|l| json_response(200, &l, &[]))
                .ok_or_else(ApiError::not_found_path);
        }
        ["apis", g, v] => {
            let st = shared.lock();
            return st
                .registry
                .resource_list(g, v)
                .map(|l| json_response(200, &l, &[]))
                .ok_or_else(ApiError::not_found_path);
        }
        ["openapi", "v2"] => return Ok(openapi_v2(shared, &req).await),
        ["openapi", "v3"] => {
            let st = shared.lock();
            return Ok(json_response(200, &crate::openapi::root(&st.registry), &[]));
        }
        ["openapi", "v3", "api", v] => {
            let st = shared.lock();
            return crate::openapi::group_version(&st.registry, "", v)
                .map(|d| json_response(200, &d, &[]))
                .ok_or_else(ApiError::not_found_path);
        }
        ["openapi", "v3", "apis", g, v] => {
            let st = shared.lock();
            return crate::openapi::group_version(&st.registry, g, v)
                .map(|d| json_response(200, &d, &[]))
                .ok_or_else(ApiError::not_found_path);
        }
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
        ] if req.method == Method::POST => {
            return self_subject_access_review(shared, &req);
        }
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectrulesreviews",
        ] if req.method == Method::POST => {
            let mut body = decode(&req)?;
            let ns = body
                .pointer("/spec/namespace")
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string();
            let rules = rbac::rules_for(&shared.lock(), &req.user, &ns);
            body["status"] = json!({"resourceRules": rules, "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}], "incomplete": false});
            return Ok(json_response(201, &body, &[]));
        }
        ["apis", "authentication.k8s.io", "v1", "selfsubjectreviews"]
            if req.method == Method::POST =>
        {
            let out = json!({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": null},
                "status": {"userInfo": {"username": req.user.name, "groups": req.user.groups}}});
            return Ok(json_response(201, &out, &[]));
        }
        _ => {}
    }
    let target = parse_target(shared, &segs)?;
    let verb = verb_of(&req, &target);
    let attrs = Attrs {
        verb: verb.to_string(),
        group: target.rt.group.clone(),
        resource: target.rt.plural.clone(),
        subresource: target.sub.clone().unwrap_or_default(),
        namespace: target.ns.clone().unwrap_or_default(),
        name: target.name.clone().unwrap_or_default(),
    };
    {
        let st = shared.lock();
        if !rbac::allowed(&st, &req.user, &attrs) {
            return Err(ApiError::forbidden(
                &target.rt.qualified(),
                &attrs.name,
                &rbac::forbidden_reason(&req.user, &attrs),
            ));
        }
    }
    if target.sub.as_deref() == Some("token")
        && target.rt.plural == "serviceaccounts"
        && target.rt.group.is_empty()
        && verb == "create"
    {
        let name = target.name.as_deref().unwrap_or_default();
        let sa = {
            let st = shared.lock();
            st.get(
                &target.rt.store,
                target.ns.as_deref().unwrap_or_default(),
                name,
            )
        }
        .ok_or_else(|| ApiError::not_found(&target.rt.qualified(), name))?;
        let body = decode(&req)?;
        let issuer = format!("https://{}", shared.addr);
        let answer = crate::sa_tokens::token_request(&shared.sa_signer, &issuer, &sa, &body)?;
        {
            let mut issued = shared.sa_issued.lock().unwrap_or_else(|p| p.into_inner());
            if issued.len() >= 2000 {
                issued.pop_front();
            }
            issued.push_back(answer["status"]["token"].as_str().unwrap_or("").to_owned());
        }
        return Ok(json_response(201, &answer, &[]));
    }
    if let Some(sub) = &target.sub
        && (sub != "status" || !target.rt.status_subresource)
    {
        return Err(ApiError::not_found_path());
    }
    let verb_sub = match &target.sub {
        Some(sub) => format!("{verb}/{sub}"),
        None => verb.to_string(),
    };
    shared.count_request(&format!("{verb_sub} {}", target.rt.plural), &req.user.name);
    shared.count_request(&verb_sub, &req.user.name);
    let mut resp = match verb {
        "get" => get(shared, &req, &target),
        "list" => list(shared, &req, &target),
        "watch" => watch(shared, &req, &target),
        "create" => create(shared, &req, &target),
        "update" => update(shared, &req, &target),
        "patch" => patch(shared, &req, &target, &attrs),
        "delete" => delete(shared, &req, &target),
        "deletecollection" => delete_collection(shared, &req, &target),
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource".to_string(),
        )),
    }?;
    if let Some(w) = &target.rt.deprecation
        && let Ok(h) = HeaderValue::from_str(&format!("299 - {}", go_quote(w)))
    {
        resp.headers_mut().append("Warning", h);
    }
    Ok(resp)
}

fn parse_target(shared: &Shared, segs: &[&str]) -> Result<Target, ApiError> {
    let (group, version, mut rest) = match segs {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::not_found_path()),
    };
    let mut watch_path = false;
    if rest.first() == Some(&"watch") {
        watch_path = true;
        rest = &rest[1..];
    }
    let st = shared.lock();
    let lookup = |plural: &str| st.registry.get(group, version, plural);
    if rest.len() >= 3
        && rest[0] == "namespaces"
        && let Some(rt) = lookup(rest[2]).filter(|rt| rt.namespaced)
    {
        if rest.len() > 5 {
            return Err(ApiError::not_found_path());
        }
        return Ok(Target {
            rt,
            ns: Some(rest[1].to_string()),
            name: rest.get(3).map(|s| s.to_string()),
            sub: rest.get(4).map(|s| s.to_string()),
            watch_path,
        });
    }
    if rest.is_empty() || rest.len() > 3 {
        return Err(ApiError::not_found_path());
    }
    let rt = lookup(rest[0]).ok_or_else(ApiError::not_found_path)?;
    Ok(Target {
        rt,
        ns: None,
        name: rest.get(1).map(|s| s.to_string()),
        sub: rest.get(2).map(|s| s.to_string()),
        watch_path,
    })
}

fn verb_of(req: &Req, t: &Target) -> &'static str {
    match (&req.method, t.name.is_some()) {
        (&Method::GET, _) if t.watch_path || req.flag("watch") => "watch",
        (&Method::GET, true) => "get",
        (&Method::GET, false) => "list",
        (&Method::POST, false) => "create",
        (&Method::POST, true) if t.sub.as_deref() == Some("token") => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => "unsupported",
    }
}

/// Stored form → the client's view of it.
/// A stored object as clients see it in the plain view, serialised from the stored value
/// without copying it: `kind` and `apiVersion` first, as [`present`] orders them.
struct Presented<'a> {
    kind: &'a str,
    api_version: &'a str,
    obj: &'a Value,
}

impl serde::Serialize for Presented<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(m) = self.obj.as_object() else {
            return self.obj.serialize(s);
        };
        let mut out = s.serialize_map(None)?;
        out.serialize_entry("kind", self.kind)?;
        out.serialize_entry("apiVersion", self.api_version)?;
        for (k, v) in m {
            if k != "kind" && k != "apiVersion" {
                out.serialize_entry(k, v)?;
            }
        }
        out.end()
    }
}

/// Calls `f` with a stored object as `rt`'s clients see it: the plain view borrows the stored
/// value, the `events.k8s.io` view converts it first.
fn with_presented<R>(
    rt: &ResourceType,
    api_version: &str,
    stored: &Value,
    f: impl FnOnce(&Presented<'_>) -> R,
) -> R {
    let converted;
    let obj = match rt.view {
        View::Plain => stored,
        View::EventsV1 => {
            converted = events::core_to_v1(stored);
            &converted
        }
    };
    f(&Presented {
        kind: &rt.kind,
        api_version,
        obj,
    })
}

/// The JSON a client reads for a stored object: [`present`]'s value, serialised.
pub(crate) fn present_json(rt: &ResourceType, stored: &Value) -> Vec<u8> {
    with_presented(rt, &rt.api_version(), stored, |p| serde_json::to_vec(p)).unwrap_or_default()
}

fn present(rt: &ResourceType, stored: &Value) -> Value {
    let mut v = match rt.view {
        View::Plain => stored.clone(),
        View::EventsV1 => events::core_to_v1(stored),
    };
    if let Some(m) = v.as_object_mut() {
        // apiVersion and kind first, as clients print them.
        let mut out = serde_json::Map::new();
        out.insert("kind".into(), json!(rt.kind));
        out.insert("apiVersion".into(), json!(rt.api_version()));
        for (k, x) in std::mem::take(m) {
            if k != "kind" && k != "apiVersion" {
                out.insert(k, x);
            }
        }
        *m = out;
    }
    v
}

/// The client's view → stored form.
fn unpresent(rt: &ResourceType, v: Value) -> Value {
    match rt.view {
        View::Plain => v,
        View::EventsV1 => {
            let mut c = events::v1_to_core(&v);
            c["apiVersion"] = json!("v1");
            c["kind"] = json!("Event");
            c
        }
    }
}

fn decode(req: &Req) -> Result<Value, ApiError> {
    let ct = req.header("content-type");
    let v: Value = if ct.contains("yaml") {
        serde_yaml::from_slice(&req.body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
    } else if ct.contains("protobuf") {
        crate::protobuf::decode(&req.body)?
    } else if ct.contains("cbor") {
        return Err(ApiError::unsupported_media_type("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml".to_string()));
    } else {
        serde_json::from_slice(&req.body).map_err(|e| {
            ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
        })?
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "couldn't get version/kind; json parse error: expected an object",
        ));
    }
    Ok(v)
}

fn check_kind(rt: &ResourceType, v: &Value) -> Result<(), ApiError> {
    let kind = v["kind"].as_str().unwrap_or_default();
    if kind.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'Kind' is missing in '{}'",
            truncate(&v.to_string(), 200)
        )));
    }
    let av = v["apiVersion"].as_str().unwrap_or_default();
    let group = av.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    if av.is_empty() || group != rt.group {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            rt.api_version()
        )));
    }
    if kind != rt.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            rt.kind
        )));
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn write_ctx(req: &Req, t: &Target) -> Result<WriteCtx, ApiError> {
    let dry_run = match req.q("dryRun") {
        None => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Invalid dryRun value: {} (only \"All\" is supported)",
                go_quote(other)
            )));
        }
    };
    let validation = match req.q("fieldValidation") {
        None | Some("Warn") => FieldValidation::Warn,
        Some("Strict") => FieldValidation::Strict,
        Some("Ignore") => FieldValidation::Ignore,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "fieldValidation invalid value: {other}, valid values are: Ignore, Warn, Strict"
            )));
        }
    };
    let manager = match req.q("fieldManager") {
        Some(m) => {
            if m.len() > 128 {
                return Err(ApiError::bad_request(
                    "fieldManager: Too long: may not be longer than 128 characters",
                ));
            }
            m.to_string()
        }
        None => {
            let ua = req.header("user-agent");
            let prefix = ua.split('/').next().unwrap_or_default();
            if prefix.is_empty() {
                "unknown".to_string()
            } else {
                truncate(prefix, 128).to_string()
            }
        }
    };
    Ok(WriteCtx {
        dry_run,
        manager,
        validation,
        warnings: Vec::new(),
        subresource: t.sub.clone().unwrap_or_default(),
        applied: false,
    })
}

fn single(req: &Req, rt: &ResourceType, obj: &Value, code: u16, warnings: &[String]) -> Resp {
    if req.wants_table() && req.method == Method::GET {
        let rv = obj
            .pointer("/metadata/resourceVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        let t = table::table(
            rt,
            &[Arc::new(obj.clone())],
            &|o| present(rt, o),
            include(req),
            &rv,
            None,
        );
        return json_response(code, &t, warnings);
    }
    json_bytes_response(code, present_json(rt, obj), warnings)
}

fn include(req: &Req) -> Include {
    match req.q("includeObject") {
        Some("None") => Include::None,
        Some("Object") => Include::Object,
        _ => Include::Metadata,
    }
}

fn get(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let name = t.name.as_deref().unwrap_or_default();
    let obj = {
        let st = shared.lock();
        st.get(&t.rt.store, t.ns.as_deref().unwrap_or_default(), name)
    }
    .ok_or_else(|| ApiError::not_found(&t.rt.qualified(), name))?;
    Ok(single(req, &t.rt, &obj, 200, &[]))
}

struct Filters {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filters {
    fn parse(req: &Req, rt: &ResourceType) -> Result<Filters, ApiError> {
        Ok(Filters {
            labels: LabelSelector::parse(req.q("labelSelector").unwrap_or_default())?,
            fields: FieldSelector::parse(
                req.q("fieldSelector").unwrap_or_default(),
                rt.field_labels(),
            )?,
        })
    }
    fn matches(&self, rt: &ResourceType, stored: &Value) -> bool {
        if !self.labels.matches(stored) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        match rt.view {
            View::Plain => self.fields.matches(stored),
            View::EventsV1 => self.fields.matches(&present(rt, stored)),
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    rv: u64,
    ns: String,
    name: String,
}

fn list(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let filters = Filters::parse(req, &t.rt)?;
    let limit = match req.q("limit") {
        Some(l) => Some(
            l.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit {l}")))?,
        )
        .filter(|l| *l > 0)
        .map(|l| l as usize),
        None => None,
    };
    let start = match req.q("continue") {
        Some(c) => {
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .map_err(|_| {
                    ApiError::bad_request("continue key is not valid: illegal base64 data")
                })?;
            let tok: ContinueToken = serde_json::from_slice(&raw).map_err(|_| ApiError::bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"))?;
            Some(tok)
        }
        None => None,
    };
    let (items, more, last, rv) = {
        let st = shared.lock();
        let ns = t.ns.as_deref();
        let (items, more, last) = if let (Some(name), None) = (filters.fields.name_eq(), &start) {
            let found = match ns {
                Some(ns) => st
                    .get(&t.rt.store, ns, name)
                    .into_iter()
                    .collect::<Vec<_>>(),
                None => {
                    st.list(&t.rt.store, None, None, None, |o| {
                        o.pointer("/metadata/name").and_then(|n| n.as_str()) == Some(name)
                    })
                    .0
                }
            };
            (
                found
                    .into_iter()
                    .filter(|o| filters.matches(&t.rt, o))
                    .collect(),
                false,
                None,
            )
        } else {
            let after = start.as_ref().map(|s| (s.ns.clone(), s.name.clone()));
            st.list(&t.rt.store, ns, after, limit, |o| filters.matches(&t.rt, o))
        };
        (
            items,
            more,
            last,
            start.as_ref().map(|s| s.rv).unwrap_or(st.rv),
        )
    };
    let cont = if more {
        last.map(|(ns, name)| {
            let tok = ContinueToken { rv, ns, name };
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(serde_json::to_vec(&tok).unwrap_or_default())
        })
    } else {
        None
    };
    let rv_s = rv.to_string();
    if req.wants_table() {
        let tbl = table::table(
            &t.rt,
            &items,
            &|o| present(&t.rt, o),
            include(req),
            &rv_s,
            cont.as_deref(),
        );
        return Ok(json_response(200, &tbl, &[]));
    }
    let mut meta = json!({"resourceVersion": rv_s});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
    }
    let api_version = t.rt.api_version();
    let out = ListBody {
        kind: &t.rt.list_kind,
        api_version: &api_version,
        metadata: &meta,
        items: Items {
            rt: &t.rt,
            api_version: &api_version,
            items: &items,
        },
    };
    Ok(json_response(200, &out, &[]))
}

/// A list's body, its items serialised from the stored objects without copying them.
#[derive(serde::Serialize)]
struct ListBody<'a> {
    kind: &'a str,
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    metadata: &'a Value,
    items: Items<'a>,
}

struct Items<'a> {
    rt: &'a ResourceType,
    api_version: &'a str,
    items: &'a [Arc<Value>],
}

impl serde::Serialize for Items<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut out = s.serialize_seq(Some(self.items.len()))?;
        for o in self.items {
            with_presented(self.rt, self.api_version, o, |p| out.serialize_element(p))?;
        }
        out.end()
    }
}

/// A watch event's line around an object already serialised: the same bytes as
/// [`event_line`] gives for the object's value.
fn event_line_json(kind: &str, obj: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(obj.len() + kind.len() + 24);
    line.extend_from_slice(b"{\"type\":");
    serde_json::to_writer(&mut line, kind).unwrap_or_default();
    line.extend_from_slice(b",\"object\":");
    line.extend_from_slice(obj);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

fn event_line(kind: &str, obj: Value) -> Bytes {
    let mut line = serde_json::to_vec(&json!({"type": kind, "object": obj})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// The event a watcher with these filters sees for a stored change, if any.
fn filtered(rt: &ResourceType, f: &Filters, ev: &StoredEvent) -> Option<&'static str> {
    let now = f.matches(rt, &ev.obj);
    let before = ev.prev.as_ref().is_some_and(|p| f.matches(rt, p));
    match ev.kind {
        EvKind::Added => now.then_some("ADDED"),
        EvKind::Modified => match (before, now) {
            (true, true) => Some("MODIFIED"),
            (false, true) => Some("ADDED"),
            (true, false) => Some("DELETED"),
            (false, false) => None,
        },
        EvKind::Deleted => (now || before).then_some("DELETED"),
    }
}

fn watch(shared: &Arc<Shared>, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let filters = Filters::parse(req, &t.rt)?;
    let bookmarks = req.flag("allowWatchBookmarks");
    let send_initial = req.flag("sendInitialEvents");
    if req.q("sendInitialEvents").is_some() {
        let mut errs = Vec::new();
        if req.q("resourceVersionMatch") != Some("NotOlderThan") {
            errs.push(crd_schema::FieldError {
                kind: crd_schema::FieldErrorKind::Forbidden,
                field: "resourceVersionMatch".into(),
                value: None,
                detail: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                    .into(),
            });
        }
        if send_initial && !bookmarks {
            errs.push(crd_schema::FieldError {
                kind: crd_schema::FieldErrorKind::Forbidden,
                field: "allowWatchBookmarks".into(),
                value: None,
                detail:
                    "allowWatchBookmarks must be set to true when sendInitialEvents is set to true"
                        .into(),
            });
        }
        if !errs.is_empty() {
            let q = crate::status::Qualified {
                group: "meta.k8s.io".into(),
                resource: String::new(),
                kind: "ListOptions".into(),
            };
            return Err(ApiError::invalid(&q, "", &errs));
        }
    }
    let rv_param = req.q("resourceVersion");
    let from = if send_initial {
        WatchFrom::InitialState
    } else {
        match rv_param {
            None | Some("0") => WatchFrom::InitialState,
            Some(r) => WatchFrom::Rv(
                r.parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid resource version: {r}")))?,
            ),
        }
    };
    let timeout = match req.q("timeoutSeconds") {
        Some(s) => Duration::from_secs(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {s}")))?,
        ),
        None => shared.config.watch_timeout,
    };
    let (replay, mut rx, start_rv) = {
        let mut st = shared.lock();
        let start_rv = st.rv;
        match st.watch(&t.rt.store, t.ns.as_deref(), from) {
            Ok((r, rx)) => (r, rx, start_rv),
            Err(e) => {
                // Upstream answers a too-old resourceVersion with an ERROR event on a 200 stream.
                let line = event_line("ERROR", e.to_status());
                let mut r = http::Response::new(Body::from(line));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                return Ok(r);
            }
        }
    };
    let rt = t.rt.clone();
    let table = req.wants_table();
    let inc = include(req);
    let (tx, body_rx) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(64);
    let shared2 = shared.clone();
    let interval = shared.config.bookmark_interval;
    tokio::spawn(async move {
        let render = |kind: &str, ev: &StoredEvent| -> Bytes {
            let stored = &ev.obj;
            if table {
                let rv = stored
                    .pointer("/metadata/resourceVersion")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string();
                event_line(
                    kind,
                    table::table(
                        &rt,
                        std::slice::from_ref(stored),
                        &|o| present(&rt, o),
                        inc,
                        &rv,
                        None,
                    ),
                )
            } else {
                event_line_json(kind, &ev.rendered(&rt))
            }
        };
        let bookmark = |rv: u64, initial_end: bool| -> Bytes {
            let mut meta = json!({"resourceVersion": rv.to_string(), "creationTimestamp": null});
            if initial_end {
                meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            }
            event_line(
                "BOOKMARK",
                json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": meta}),
            )
        };
        let mut last_sent = start_rv;
        for ev in &replay {
            if let Some(kind) = filtered(&rt, &filters, ev)
                && tx.send(Ok(render(kind, ev))).await.is_err()
            {
                return;
            }
        }
        if send_initial && tx.send(Ok(bookmark(start_rv, true))).await.is_err() {
            return;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let mut tick = tokio::time::interval(interval);
        tick.tick().await;
        loop {
            tokio::select! {
                ev = rx.recv() => {
                    let Some(ev) = ev else { break };
                    last_sent = last_sent.max(ev.rv);
                    if let Some(kind) = filtered(&rt, &filters, &ev)
                        && tx.send(Ok(render(kind, &ev))).await.is_err() {
                            return;
                        }
                }
                _ = tick.tick(), if bookmarks => {
                    let rv = shared2.lock().rv;
                    // Everything committed up to `rv` is already queued for us: flush it first.
                    while let Ok(ev) = rx.try_recv() {
                        // The bookmark must not be behind anything delivered.
                        last_sent = last_sent.max(ev.rv);
                        if let Some(kind) = filtered(&rt, &filters, &ev)
                            && tx.send(Ok(render(kind, &ev))).await.is_err() {
                                return;
                            }
                    }
                    last_sent = last_sent.max(rv);
                    if tx.send(Ok(bookmark(last_sent, false))).await.is_err() {
                        return;
                    }
                }
                _ = tokio::time::sleep_until(deadline) => break,
                _ = tx.closed() => return,
            }
        }
    });
    let stream =
        futures::stream::unfold(
            body_rx,
            |mut rx| async move { rx.recv().await.map(|b| (b, rx)) },
        );
    let mut r = http::Response::new(Body::from_stream(stream));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        "Cache-Control",
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(r)
}

fn create(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    if t.rt.namespaced && t.ns.is_none() {
        return Err(ApiError::not_found_path());
    }
    let body = decode(req)?;
    check_kind(&t.rt, &body)?;
    let obj = unpresent(&t.rt, body);
    let mut ctx = write_ctx(req, t)?;
    let mut st = shared.lock();
    let name = obj
        .pointer("/metadata/name")
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .to_string();
    rbac::check_owner_references(&st, &req.user, &target_attrs(t, &name), None, &obj)?;
    let out = st.create(&t.rt, t.ns.as_deref(), obj, &mut ctx)?;
    Ok(single(req, &t.rt, &out, 201, &ctx.warnings))
}

fn update(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let body = decode(req)?;
    check_kind(&t.rt, &body)?;
    let obj = unpresent(&t.rt, body);
    let mut ctx = write_ctx(req, t)?;
    let name = t.name.as_deref().unwrap_or_default();
    let mut st = shared.lock();
    if ctx.subresource.is_empty() {
        let old = st.get(&t.rt.store, t.ns.as_deref().unwrap_or_default(), name);
        rbac::check_owner_references(&st, &req.user, &target_attrs(t, name), old.as_deref(), &obj)?;
    }
    let out = st.update(
        &t.rt,
        t.ns.as_deref().unwrap_or_default(),
        name,
        obj,
        &mut ctx,
    )?;
    Ok(single(req, &t.rt, &out, 200, &ctx.warnings))
}

fn patch(shared: &Shared, req: &Req, t: &Target, attrs: &Attrs) -> Result<Resp, ApiError> {
    let ct = req.header("content-type");
    let kind = PatchKind::from_content_type(ct).ok_or_else(|| {
        ApiError::unsupported_media_type(format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml{}", if t.rt.crd_name.is_some() { "" } else { ", application/strategic-merge-patch+json" }))
    })?;
    if kind == PatchKind::Strategic && t.rt.crd_name.is_some() {
        return Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        ));
    }
    let mut ctx = write_ctx(req, t)?;
    let ns = t.ns.clone().unwrap_or_default();
    let name = t.name.clone().unwrap_or_default();
    let q = t.rt.qualified();
    let mut st = shared.lock();
    let current = st.get(&t.rt.store, &ns, &name);
    if kind == PatchKind::Apply {
        if req.q("fieldManager").is_none() {
            return Err(ApiError::bad_request(
                "fieldManager is required for apply requests",
            ));
        }
        let mut config: Value = serde_yaml::from_slice(&req.body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
        if !config.is_object() {
            return Err(ApiError::bad_request(
                "error decoding YAML: expected an object",
            ));
        }
        check_kind(&t.rt, &config)?;
        if let Some(n) = config.pointer("/metadata/name").and_then(|n| n.as_str())
            && n != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        if let Some(m) = config.as_object_mut() {
            if ctx.subresource == "status" {
                m.retain(|k, _| {
                    matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status")
                });
                if let Some(meta) = m.get_mut("metadata").and_then(|x| x.as_object_mut()) {
                    meta.retain(|k, _| k == "name" || k == "namespace");
                }
            } else if t.rt.status_subresource {
                m.remove("status");
            }
        }
        let force = req.flag("force");
        let av = t.rt.api_version();
        let now = now_rfc3339();
        let w = ssa::Writer {
            schema: t.rt.schema.as_ref().map(|s| s.raw()),
            manager: &ctx.manager.clone(),
            api_version: &av,
            subresource: &ctx.subresource.clone(),
            now: &now,
        };
        let current_view = current.as_ref().map(|c| present(&t.rt, c));
        let merged = ssa::apply(current_view.as_ref(), &config, &w, force).map_err(|conflicts| {
            let mut msg = format!("Apply failed with {} conflict{}: ", conflicts.len(), if conflicts.len() == 1 { "" } else { "s" });
            let parts: Vec<String> = conflicts.iter().map(|c| format!("conflict with {} using {}: {}", go_quote(&c.manager), c.api_version, c.path)).collect();
            msg.push_str(&parts.join("\n"));
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|c| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {} using {}", go_quote(&c.manager), c.api_version), "field": c.path}))
                .collect();
            let mut e = ApiError::new(409, "Conflict", msg);
            e.details = Some(json!({"name": name, "group": q.group, "kind": q.resource, "causes": causes}));
            e
        })?;
        ctx.applied = true;
        let obj = unpresent(&t.rt, merged);
        return match current {
            Some(_) => {
                if ctx.subresource.is_empty() {
                    rbac::check_owner_references(
                        &st,
                        &req.user,
                        &target_attrs(t, &name),
                        current.as_deref(),
                        &obj,
                    )?;
                }
                let out = st.update(&t.rt, &ns, &name, obj, &mut ctx)?;
                Ok(single(req, &t.rt, &out, 200, &ctx.warnings))
            }
            None => {
                if ctx.subresource == "status" {
                    return Err(ApiError::not_found(&q, &name));
                }
                let allowed = rbac::allowed(
                    &st,
                    &req.user,
                    &Attrs {
                        verb: "create".into(),
                        name: String::new(),
                        ..attrs.clone()
                    },
                );
                if !allowed {
                    let a = Attrs {
                        verb: "create".into(),
                        ..attrs.clone()
                    };
                    return Err(ApiError::forbidden(
                        &q,
                        &name,
                        &rbac::forbidden_reason(&req.user, &a),
                    ));
                }
                let mut obj = obj;
                obj["metadata"]["name"] = json!(name);
                rbac::check_owner_references(&st, &req.user, &target_attrs(t, &name), None, &obj)?;
                let out = st.create(&t.rt, t.ns.as_deref(), obj, &mut ctx)?;
                Ok(single(req, &t.rt, &out, 201, &ctx.warnings))
            }
        };
    }
    let current = current.ok_or_else(|| ApiError::not_found(&q, &name))?;
    let mut view = present(&t.rt, &current);
    apply_patch(kind, &mut view, &req.body)?;
    let obj = unpresent(&t.rt, view);
    if ctx.subresource.is_empty() {
        rbac::check_owner_references(
            &st,
            &req.user,
            &target_attrs(t, &name),
            Some(current.as_ref()),
            &obj,
        )?;
    }
    let out = st.update(&t.rt, &ns, &name, obj, &mut ctx)?;
    Ok(single(req, &t.rt, &out, 200, &ctx.warnings))
}

fn target_attrs(t: &Target, name: &str) -> Attrs {
    Attrs {
        verb: String::new(),
        group: t.rt.group.clone(),
        resource: t.rt.plural.clone(),
        subresource: String::new(),
        namespace: t.ns.clone().unwrap_or_default(),
        name: name.to_string(),
    }
}

fn delete_opts(req: &Req) -> Result<DeleteOpts, ApiError> {
    let mut o = DeleteOpts::default();
    if !req.body.is_empty() {
        let v: Value = serde_json::from_slice(&req.body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        o.propagation = v["propagationPolicy"].as_str().map(str::to_string);
        o.precondition_uid = v
            .pointer("/preconditions/uid")
            .and_then(|u| u.as_str())
            .map(str::to_string);
        o.precondition_rv = v
            .pointer("/preconditions/resourceVersion")
            .and_then(|u| u.as_str())
            .map(str::to_string);
        o.orphan_dependents = v["orphanDependents"].as_bool();
        if let Some(d) = v["dryRun"].as_array()
            && !d.is_empty()
            && d.iter().any(|x| x != "All")
        {
            return Err(ApiError::bad_request(
                "Invalid dryRun value (only \"All\" is supported)",
            ));
        }
    }
    if let Some(p) = req.q("propagationPolicy") {
        o.propagation = Some(p.to_string());
    }
    if let Some(p) = req.q("orphanDependents") {
        o.orphan_dependents = Some(p == "true");
    }
    if let Some(g) = req.q("gracePeriodSeconds") {
        g.parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds {g}")))?;
    }
    Ok(o)
}

fn body_dry_run(req: &Req) -> bool {
    serde_json::from_slice::<Value>(&req.body)
        .ok()
        .and_then(|v| v["dryRun"].as_array().map(|a| !a.is_empty()))
        .unwrap_or(false)
}

fn delete(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let opts = delete_opts(req)?;
    let mut ctx = write_ctx(req, t)?;
    ctx.dry_run |= body_dry_run(req);
    let name = t.name.as_deref().unwrap_or_default();
    let out = shared.lock().delete(
        &t.rt,
        t.ns.as_deref().unwrap_or_default(),
        name,
        &opts,
        &ctx,
    )?;
    Ok(single(req, &t.rt, &out, 200, &[]))
}

fn delete_collection(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let filters = Filters::parse(req, &t.rt)?;
    let opts = delete_opts(req)?;
    let mut ctx = write_ctx(req, t)?;
    ctx.dry_run |= body_dry_run(req);
    let mut st = shared.lock();
    let (items, _, _) = st.list(&t.rt.store, t.ns.as_deref(), None, None, |o| {
        filters.matches(&t.rt, o)
    });
    let mut out = Vec::new();
    for o in items {
        let ns = o
            .pointer("/metadata/namespace")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        let name = o
            .pointer("/metadata/name")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        match st.delete(&t.rt, &ns, &name, &opts, &ctx) {
            Ok(d) => out.push(present(&t.rt, &d)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let rv = st.rv.to_string();
    Ok(json_response(
        200,
        &json!({"kind": t.rt.list_kind, "apiVersion": t.rt.api_version(), "metadata": {"resourceVersion": rv}, "items": out}),
        &[],
    ))
}

fn self_subject_access_review(shared: &Shared, req: &Req) -> Result<Resp, ApiError> {
    let mut body = decode(req)?;
    let ra = body.pointer("/spec/resourceAttributes").cloned();
    let (allowed, reason) = match ra {
        Some(ra) => {
            let s = |k: &str| ra[k].as_str().unwrap_or_default().to_string();
            let a = Attrs {
                verb: s("verb"),
                group: s("group"),
                resource: s("resource"),
                subresource: s("subresource"),
                namespace: s("namespace"),
                name: s("name"),
            };
            let st = shared.lock();
            let ok = rbac::allowed(&st, &req.user, &a);
            (ok, if ok { "allowed by RBAC" } else { "" })
        }
        // Non-resource URLs: every authenticated user may read them.
        None => (
            body.pointer("/spec/nonResourceAttributes/verb")
                .and_then(|v| v.as_str())
                == Some("get"),
            "",
        ),
    };
    body["status"] = json!({"allowed": allowed});
    if !reason.is_empty() {
        body["status"]["reason"] = json!(reason);
    }
    if body.get("metadata").is_none() {
        body["metadata"] = json!({"creationTimestamp": null});
    }
    Ok(json_response(201, &body, &[]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    /// The bytes served without a copy are those of the copied, reordered value.
    #[test]
    fn presented_json_is_the_presented_value() {
        let registry = Registry::with_builtins();
        let stored = json!({"metadata": {"name": "a", "namespace": "n"}, "apiVersion": "v0",
            "data": {"x": "é\"\n"}, "kind": "Wrong"});
        for (group, version, plural) in
            [("", "v1", "configmaps"), ("events.k8s.io", "v1", "events")]
        {
            let rt = registry
                .get(group, version, plural)
                .expect("a built-in resource");
            let value = present(&rt, &stored);
            assert_eq!(
                present_json(&rt, &stored),
                serde_json::to_vec(&value).expect("JSON"),
                "{plural}"
            );
            assert_eq!(
                event_line_json("MODIFIED", &present_json(&rt, &stored)),
                event_line("MODIFIED", value.clone()),
                "{plural}"
            );
            let event = StoredEvent::new(EvKind::Modified, 8, Arc::new(stored.clone()), None);
            assert_eq!(event.rendered(&rt), present_json(&rt, &stored), "{plural}");
            assert_eq!(
                event.rendered(&rt),
                present_json(&rt, &stored),
                "{plural}, cached"
            );
            let items = [Arc::new(stored.clone())];
            let list = ListBody {
                kind: &rt.list_kind,
                api_version: &rt.api_version(),
                metadata: &json!({"resourceVersion": "8"}),
                items: Items {
                    rt: &rt,
                    api_version: &rt.api_version(),
                    items: &items,
                },
            };
            assert_eq!(
                serde_json::to_value(&list).expect("JSON"),
                json!({"kind": rt.list_kind, "apiVersion": rt.api_version(),
                    "metadata": {"resourceVersion": "8"}, "items": [value]}),
                "{plural}"
            );
        }
    }
}
