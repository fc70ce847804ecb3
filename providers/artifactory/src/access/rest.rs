//! The REST bindings of the user, security and replication Kinds, as data: one [`Api`] per
//! Kind (its calls, how a read finds the object, how a delete works, what the body looks
//! like on the wire), plus [`UserApi`] for the version-dependent user API.
//!
//! These APIs are less regular than repositories and webhooks, and every irregularity is a
//! variant here rather than a Kind-specific client: reads that find the object in a list
//! (certificates, trusted keys, environments, Vault configurations), reads that answer an
//! array (replications), deletes that reset a singleton or need a server-assigned id,
//! text/plain bodies (certificates), and APIs JFrog retired in later versions ([`Retired`]).
//! Where JFrog's body differs from the Kind's (maps of users to permissions, scopes joined
//! with spaces, replication targets), the functions here convert it, called by the Kinds'
//! `encode` and `decode` hooks.

use async_trait::async_trait;
use http::Method;
use jfrog_client::error::RequestContext;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use provider_family::rest::call_request;
use provider_family::{Address, Call, Cx, Dv, ListCall, ListShape, Next, Pages, Rest, Verb};
use serde_json::{Map, Value, json};

/// How a read finds one object.
#[derive(Debug, Clone, Copy)]
pub enum Read {
    /// `GET` of the object.
    Get(Call),
    /// `GET` of the object with one query parameter.
    GetWith(Call, &'static str, &'static str),
    /// The object whose `key_member` is the identifier, in a list answer (an array, or the
    /// array under `wrapper`).
    InList {
        /// The list call's path under the service.
        path: &'static str,
        /// The member holding the array, when the answer is an object.
        wrapper: Option<&'static str>,
        /// The member of each element that holds the identifier.
        key_member: &'static str,
    },
    /// `GET` answering an array (or an object): its first element.
    First(Call),
    /// `GET` answering the array of a repository's replication targets, read as one
    /// object `{cronExp, enableEventReplication, replications}`.
    Targets(Call),
    /// `GET` of the caller's API key; an empty key means none.
    ApiKey(Call),
}

/// How a delete works.
#[derive(Debug, Clone, Copy)]
pub enum Delete {
    /// One call.
    Call(Call),
    /// A singleton cannot be removed: its current state with these members is written back.
    Reset(Call, &'static [(&'static str, Dv)]),
    /// The object is deleted by a server-assigned member (`kid`) found by key in the list.
    ByMember {
        /// The delete call; `{key}` is the member's value.
        call: Call,
        /// The member of the listed object that the delete call addresses it by.
        member: &'static str,
    },
}

/// The member of a [`Shape::Text`] body that names a file on the provider's filesystem
/// holding the text, when the text member itself is not given (a certificate's `file`).
pub const FILE_MEMBER: &str = "file";

/// How the body goes on the wire (what JFrog's body looks like beyond that, a Kind's hooks
/// convert: `encode` and `decode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// JSON.
    Json,
    /// The named member's value as a `text/plain` body.
    Text(&'static str),
}

/// An API JFrog removed: served while the platform still has it, otherwise refused before
/// any write with a message naming the Kind that replaces it.
#[derive(Debug, Clone, Copy)]
pub struct Retired {
    /// The first Artifactory version without the API.
    pub removed_in: (u64, u64, u64),
    /// What JFrog offers instead, as the user should read it.
    pub replacement: &'static str,
}

/// One Kind's REST binding.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    /// The JFrog service whose API this is.
    pub service: Service,
    /// `None`: JFrog cannot create one (the message says what to do instead).
    pub create: Result<Call, &'static str>,
    /// How the object is read.
    pub read: Read,
    /// `None`: nothing can change in place (every parameter is immutable).
    pub update: Option<Call>,
    /// How the object is deleted.
    pub delete: Delete,
    /// How a write's body goes on the wire.
    pub shape: Shape,
    /// Members every write carries.
    pub fixed: &'static [(&'static str, &'static str)],
    /// The call listing every object of the Kind, for observe-only import; `None` when JFrog
    /// has none.
    pub list: Option<ListCall>,
    /// The list shows only which objects exist: a listed one is read by key.
    pub list_reads_each: bool,
    /// Set when JFrog removed this API: from which version, and what replaces it.
    pub retired: Option<Retired>,
}

impl Api {
    /// A binding with JSON bodies, a plain read and nothing retired.
    pub const fn new(
        service: Service,
        create: Call,
        read: Call,
        update: Option<Call>,
        delete: Call,
    ) -> Api {
        Api {
            service,
            create: Ok(create),
            read: Read::Get(read),
            update,
            delete: Delete::Call(delete),
            shape: Shape::Json,
            fixed: &[],
            list: None,
            list_reads_each: false,
            retired: None,
        }
    }
}

/// A refusal made on the client side, typed like JFrog's own 400 (so it is reported, not
/// retried).
pub fn refused(service: Service, method: Method, route: &str, message: String) -> Error {
    Error::BadRequest {
        ctx: RequestContext {
            service,
            method,
            route: route.to_string(),
        },
        status: 400,
        message,
    }
}

fn not_found(service: Service, route: &str, key: &str) -> Error {
    Error::NotFound {
        ctx: RequestContext {
            service,
            method: Method::GET,
            route: route.to_string(),
        },
        message: format!("{key} not found"),
    }
}

/// An Artifactory version: (major, minor, patch).
pub type Version = (u64, u64, u64);

/// The Artifactory version of a platform (`GET /artifactory/api/system/version`), asked
/// once per platform (the client's shared state keeps it; one request however many observes
/// of a starting provider ask at once).
pub async fn version(client: &JfrogClient) -> Result<Version, Error> {
    let info = client.artifactory().version_once().await?;
    Ok(parse_version(&info.version))
}

/// `7.84.3` -> (7, 84, 3); missing or odd parts count as 0.
pub fn parse_version(s: &str) -> (u64, u64, u64) {
    let mut parts = s
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// `[{name, permissions}]` -> `{name: permissions}` under `actions.users`/`actions.groups`
/// of each section.
pub fn actions_to_maps(body: &mut Map<String, Value>) {
    for section in ["repo", "build", "releaseBundle"] {
        let Some(Value::Object(actions)) = body.get_mut(section).and_then(|s| s.get_mut("actions"))
        else {
            continue;
        };
        for who in ["users", "groups"] {
            if let Some(Value::Array(list)) = actions.get(who) {
                let map: Map<String, Value> = list
                    .iter()
                    .filter_map(|e| {
                        Some((
                            e.get("name")?.as_str()?.to_string(),
                            e.get("permissions").cloned().unwrap_or(json!([])),
                        ))
                    })
                    .collect();
                actions.insert(who.to_string(), Value::Object(map));
            }
        }
    }
}

/// The reverse of [`actions_to_maps`], sorted by name.
pub fn actions_from_maps(body: &Value) -> Value {
    let mut body = body.clone();
    for section in ["repo", "build", "releaseBundle"] {
        let Some(Value::Object(actions)) = body.get_mut(section).and_then(|s| s.get_mut("actions"))
        else {
            continue;
        };
        for who in ["users", "groups"] {
            if let Some(Value::Object(map)) = actions.get(who) {
                let list: Vec<Value> = map
                    .iter()
                    .map(|(n, p)| json!({"name": n, "permissions": p}))
                    .collect();
                actions.insert(who.to_string(), Value::Array(list));
            }
        }
    }
    body
}

/// A scoped token's body with `scope` and `audience` as JFrog takes them, space-separated
/// (left out when empty).
pub fn token_to_jfrog(body: &mut Map<String, Value>) {
    for member in ["scope", "audience"] {
        if let Some(Value::Array(items)) = body.get(member) {
            let joined: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            if joined.is_empty() {
                body.remove(member);
            } else {
                body.insert(member.into(), json!(joined.join(" ")));
            }
        }
    }
}

/// A replication's body with each of its targets (`replications`, several push targets)
/// carrying the repository key and the shared cron expression, as JFrog takes them.
pub fn targets_to_jfrog(body: &mut Map<String, Value>) {
    let key = body.get("repoKey").cloned().unwrap_or(Value::Null);
    let cron = body.get("cronExp").cloned().unwrap_or(Value::Null);
    if let Some(Value::Array(targets)) = body.get_mut("replications") {
        for t in targets.iter_mut().filter_map(Value::as_object_mut) {
            t.insert("repoKey".into(), key.clone());
            t.insert("cronExp".into(), cron.clone());
        }
    }
}

/// A replication as JFrog answers it, its targets' `proxyRef` named `proxy` as it is
/// written (`None`: no member to rename).
pub fn replication_from_jfrog(v: &Value) -> Option<Value> {
    const PROXY: &[(&str, &str)] = &[("proxyRef", "proxy")];
    let mut out = v.clone();
    rename(&mut out, PROXY);
    if let Some(Value::Array(targets)) = out.get_mut("replications") {
        for t in targets.iter_mut() {
            rename(t, PROXY);
        }
    }
    (out != *v).then_some(out)
}

impl Api {
    async fn check_retired(&self, client: &JfrogClient, call: &Call) -> Result<(), Error> {
        let Some(r) = self.retired else { return Ok(()) };
        let v = version(client).await?;
        if v >= r.removed_in {
            let (a, b, c) = r.removed_in;
            return Err(refused(
                self.service,
                call.verb.method(),
                call.path,
                format!(
                    "JFrog removed this API in Artifactory {a}.{b}.{c} (this platform runs {}.{}.{}): use {} instead",
                    v.0, v.1, v.2, r.replacement
                ),
            ));
        }
        Ok(())
    }

    /// The body as sent.
    fn wire_body(&self, body: &Map<String, Value>) -> Map<String, Value> {
        let mut body = body.clone();
        for (k, v) in self.fixed {
            body.insert((*k).to_string(), json!(v));
        }
        body
    }

    async fn write(
        &self,
        client: &JfrogClient,
        call: &Call,
        idem: Idempotency,
        key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.check_retired(client, call).await?;
        let r = call_request(client, self.service, call, idem, key);
        let r = match self.shape {
            Shape::Text(member) => {
                let text = match (body.get(member), body.get(FILE_MEMBER)) {
                    (Some(v), _) => v.as_str().unwrap_or_default().to_string(),
                    // A path on the provider's filesystem instead of the text itself.
                    (None, Some(Value::String(path))) => String::from_utf8_lossy(
                        &crate::local_file::read(
                            path,
                            "fileSecretRef",
                            false,
                            self.service,
                            call.path,
                        )
                        .await?,
                    )
                    .into_owned(),
                    _ => String::new(),
                };
                r.text(text, "text/plain")
            }
            Shape::Json => r.json(&self.wire_body(body)),
        };
        let answer = r.send().await?;
        Ok(serde_json::from_slice(answer.body()).unwrap_or(Value::Null))
    }

    /// The list answer's objects.
    async fn list_items(
        &self,
        client: &JfrogClient,
        path: &'static str,
        wrapper: Option<&'static str>,
    ) -> Result<Vec<Value>, Error> {
        let v = client
            .request(self.service, Method::GET, path, Idempotency::Idempotent)
            .send_value()
            .await?;
        let items = match wrapper {
            Some(w) => v.get(w).cloned().unwrap_or(Value::Null),
            None => v,
        };
        Ok(match items {
            Value::Array(a) => a,
            _ => Vec::new(),
        })
    }
}

#[async_trait]
impl Rest for Api {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let key = address.key();
        let v = match self.read {
            Read::Get(call) => {
                self.check_retired(cx.client, &call).await?;
                call_request(cx.client, self.service, &call, Idempotency::Idempotent, key)
                    .send_value()
                    .await?
            }
            Read::GetWith(call, q, val) => {
                call_request(cx.client, self.service, &call, Idempotency::Idempotent, key)
                    .query(q, val)
                    .send_value()
                    .await?
            }
            Read::InList {
                path,
                wrapper,
                key_member,
            } => self
                .list_items(cx.client, path, wrapper)
                .await?
                .into_iter()
                .find(|o| o.get(key_member).and_then(Value::as_str) == Some(key))
                .ok_or_else(|| not_found(self.service, path, key))?,
            Read::First(call) => {
                match call_request(cx.client, self.service, &call, Idempotency::Idempotent, key)
                    .send_value()
                    .await?
                {
                    Value::Array(a) => a
                        .into_iter()
                        .next()
                        .ok_or_else(|| not_found(self.service, call.path, key))?,
                    other => other,
                }
            }
            Read::Targets(call) => {
                let targets = match call_request(
                    cx.client,
                    self.service,
                    &call,
                    Idempotency::Idempotent,
                    key,
                )
                .send_value()
                .await?
                {
                    Value::Array(a) => a,
                    Value::Object(o) => vec![Value::Object(o)],
                    _ => Vec::new(),
                };
                let first = targets
                    .first()
                    .cloned()
                    .ok_or_else(|| not_found(self.service, call.path, key))?;
                json!({
                    "repoKey": key,
                    "cronExp": first.get("cronExp"),
                    "enableEventReplication": first.get("enableEventReplication"),
                    "replications": targets,
                })
            }
            Read::ApiKey(call) => {
                self.check_retired(cx.client, &call).await?;
                let v = call_request(cx.client, self.service, &call, Idempotency::Idempotent, key)
                    .send_value()
                    .await?;
                if v.get("apiKey")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    return Err(not_found(self.service, call.path, key));
                }
                // The key itself goes to the connection Secret at create, never to status.
                json!({})
            }
        };
        Ok(v)
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let key = address.key();
        let call = self
            .create
            .map_err(|why| refused(self.service, Method::POST, "(create)", why.to_string()))?;
        self.write(cx.client, &call, Idempotency::NonIdempotent, key, body)
            .await
    }

    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let key = address.key();
        let Some(call) = self.update else {
            return Err(refused(
                self.service,
                Method::PUT,
                "(update)",
                format!(
                    "{key} cannot be changed in place (JFrog has no update call for it): recreate the managed resource to change it"
                ),
            ));
        };
        self.write(cx.client, &call, Idempotency::Idempotent, key, body)
            .await
            .map(drop)
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let key = address.key();
        match self.delete {
            Delete::Call(call) => {
                call_request(cx.client, self.service, &call, Idempotency::Idempotent, key)
                    .send_empty()
                    .await
            }
            Delete::Reset(call, values) => {
                let current = self.read(cx, address).await?;
                let mut body = current.as_object().cloned().unwrap_or_default();
                for (k, v) in values {
                    body.insert((*k).to_string(), v.to_json().unwrap_or(Value::Null));
                }
                call_request(cx.client, self.service, &call, Idempotency::Idempotent, key)
                    .json(&body)
                    .send_empty()
                    .await
            }
            Delete::ByMember { call, member } => {
                let current = self.read(cx, address).await?;
                let id = current
                    .get(member)
                    .and_then(Value::as_str)
                    .ok_or_else(|| not_found(self.service, call.path, key))?
                    .to_string();
                call_request(cx.client, self.service, &call, Idempotency::Idempotent, &id)
                    .send_empty()
                    .await
            }
        }
    }

    fn list(&self) -> Option<&ListCall> {
        self.list.as_ref()
    }

    fn list_reads_each(&self) -> bool {
        self.list_reads_each
    }
}

/// Rename `v`'s members `from` -> `to` (a replication's `proxyRef`, the user API's members on
/// older platforms).
fn rename(v: &mut Value, renames: &[(&str, &str)]) {
    if let Value::Object(m) = v {
        for (from, to) in renames {
            if let Some(x) = m.remove(*from) {
                m.insert((*to).to_string(), x);
            }
        }
    }
}

/// The user API: the Access API (`/access/api/v2/users`, snake_case members) from
/// Artifactory 7.84.3, the security API (`/artifactory/api/security/users`, camelCase)
/// before; the declarations use the Access API's member names and this binding renames
/// them for older platforms.
#[derive(Debug, Clone, Copy)]
pub struct UserApi {
    /// Whether JFrog can create one (the anonymous user can only be imported).
    pub creatable: bool,
}

/// The first version with the Access API for users.
pub const ACCESS_USERS_SINCE: (u64, u64, u64) = (7, 84, 3);

/// Access API member -> security API member.
const LEGACY_MEMBERS: &[(&str, &str)] = &[
    ("username", "name"),
    ("profile_updatable", "profileUpdatable"),
    ("disable_ui_access", "disableUIAccess"),
    ("internal_password_disabled", "internalPasswordDisabled"),
];

const ACCESS_USER: Call = Call::new(Verb::Get, "/api/v2/users/{key}");
/// The memberships of an Access user (`{add, remove}`).
const USER_GROUPS: &str = "/api/v2/users/{key}/groups";
const LEGACY_USER: Call = Call::new(Verb::Get, "/api/security/users/{key}");

impl UserApi {
    /// The service and path of the platform's user API.
    async fn api(&self, client: &JfrogClient) -> Result<(Service, &'static str, bool), Error> {
        Ok(if version(client).await? >= ACCESS_USERS_SINCE {
            (Service::Access, ACCESS_USER.path, true)
        } else {
            (Service::Artifactory, LEGACY_USER.path, false)
        })
    }
}

#[async_trait]
impl Rest for UserApi {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let key = address.key();
        let (service, path, access) = self.api(cx.client).await?;
        let mut v = cx
            .client
            .request(service, Method::GET, path, Idempotency::Idempotent)
            .param(key)
            .send_value()
            .await?;
        if !access {
            let back: Vec<(&str, &str)> = LEGACY_MEMBERS.iter().map(|(a, b)| (*b, *a)).collect();
            rename(&mut v, &back);
        }
        Ok(v)
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let key = address.key();
        if !self.creatable {
            return Err(refused(
                Service::Access,
                Method::POST,
                "/api/v2/users",
                "JFrog cannot create the anonymous user: import it with managementPolicies [\"Observe\"] and the crossplane.io/external-name annotation set to its name (anonymous)".into(),
            ));
        }
        let (service, path, access) = self.api(cx.client).await?;
        let mut body = Value::Object(body.clone());
        if access {
            body["username"] = json!(key);
            cx.client
                .request(
                    service,
                    Method::POST,
                    "/api/v2/users",
                    Idempotency::NonIdempotent,
                )
                .json(&body)
                .send_empty()
                .await?;
        } else {
            body["username"] = json!(key);
            rename(&mut body, LEGACY_MEMBERS);
            cx.client
                .request(service, Method::PUT, path, Idempotency::NonIdempotent)
                .param(key)
                .json(&body)
                .send_empty()
                .await?;
        }
        Ok(Value::Null)
    }

    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let key = address.key();
        let (service, path, access) = self.api(cx.client).await?;
        let mut body = body.clone();
        body.remove("username");
        if !access {
            let mut body = Value::Object(body);
            rename(&mut body, LEGACY_MEMBERS);
            return cx
                .client
                .request(service, Method::POST, path, Idempotency::Idempotent)
                .param(key)
                .json(&body)
                .send_empty()
                .await;
        }
        // "Update a User (Partial Update)" takes no `groups`: the memberships change through
        // `PATCH .../groups` with `{add, remove}` against what the user has, as JFrog's
        // Terraform provider does after every update (`syncReadersGroup`).
        let wanted = body.remove("groups");
        let user = cx
            .client
            .request(service, Method::PATCH, path, Idempotency::Idempotent)
            .param(key)
            .json(&Value::Object(body))
            .send_value()
            .await?;
        let Some(Value::Array(wanted)) = wanted else {
            return Ok(());
        };
        let names = |v: &[Value]| -> Vec<String> {
            v.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let wanted = names(&wanted);
        let has = names(
            user.get("groups")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice),
        );
        let add: Vec<&String> = wanted.iter().filter(|g| !has.contains(g)).collect();
        let remove: Vec<&String> = has.iter().filter(|g| !wanted.contains(g)).collect();
        if add.is_empty() && remove.is_empty() {
            return Ok(());
        }
        cx.client
            .request(service, Method::PATCH, USER_GROUPS, Idempotency::Idempotent)
            .param(key)
            .json(&json!({"add": add, "remove": remove}))
            .send_empty()
            .await
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let key = address.key();
        let (service, path, _) = self.api(cx.client).await?;
        cx.client
            .request(service, Method::DELETE, path, Idempotency::Idempotent)
            .param(key)
            .send_empty()
            .await
    }

    fn list(&self) -> Option<&ListCall> {
        Some(&ACCESS_USERS_LIST)
    }

    async fn list_on(&self, cx: &Cx<'_>) -> Result<Option<ListCall>, Error> {
        let (_, _, access) = self.api(cx.client).await?;
        Ok(Some(if access {
            ACCESS_USERS_LIST
        } else {
            LEGACY_USERS_LIST
        }))
    }

    /// Both lists carry a name, a link and the realm, not the user's settings.
    fn list_reads_each(&self) -> bool {
        true
    }
}

/// `GET /access/api/v2/users`: `{"users": [{username, uri, realm, status}], "cursor"}`,
/// paged ("Get User List": `limit` from 1 to 99,999, default 1,000; `cursor`).
pub const ACCESS_USERS_LIST: ListCall = ListCall {
    service: Service::Access,
    path: "/api/v2/users",
    shape: ListShape::Pages(&ACCESS_USERS_PAGES),
    key_member: "username",
};

/// The pages of [`ACCESS_USERS_LIST`]: the largest `limit` JFrog takes.
pub const ACCESS_USERS_PAGES: Pages = Pages {
    member: "users",
    size: 99_999,
    next: Next::Cursor,
};

/// `GET /artifactory/api/security/users` (before 7.84.3): `[{name, uri, realm}]`.
pub const LEGACY_USERS_LIST: ListCall = ListCall {
    service: Service::Artifactory,
    path: "/api/security/users",
    shape: ListShape::Array,
    key_member: "name",
};

// The bindings, one per Kind (named as the generated tables expect).

const A: Service = Service::Artifactory;
const X: Service = Service::Access;

/// The `User` Kind: a user JFrog creates.
pub const USER: UserApi = UserApi { creatable: true };
/// The `ManagedUser` Kind: the same binding as [`USER`].
pub const MANAGED_USER: UserApi = USER;
/// The `UnmanagedUser` Kind: the same binding as [`USER`].
pub const UNMANAGED_USER: UserApi = USER;
/// The `AnonymousUser` Kind: JFrog's built-in anonymous user, which can only be imported.
pub const ANONYMOUS_USER: UserApi = UserApi { creatable: false };

/// The `APIKey` Kind: the caller's own API key (retired in Artifactory 7.98).
pub const API_KEY: Api = Api {
    read: Read::ApiKey(Call::new(Verb::Get, "/api/security/apiKey")),
    retired: Some(Retired {
        removed_in: (7, 98, 0),
        replacement: "ScopedToken (security.artifactory.m.crossplane.io), an access token with the same scopes",
    }),
    ..Api::new(
        A,
        Call::new(Verb::Post, "/api/security/apiKey"),
        Call::new(Verb::Get, "/api/security/apiKey"),
        None,
        Call::new(Verb::Delete, "/api/security/apiKey"),
    )
};

const CERTIFICATE_PATH: &str = "/api/system/security/certificates/{key}";
/// The `Certificate` Kind: a trusted TLS certificate, sent as PEM text and read from the
/// certificate list.
pub const CERTIFICATE: Api = Api {
    read: Read::InList {
        path: "/api/system/security/certificates",
        wrapper: None,
        key_member: "certificateAlias",
    },
    shape: Shape::Text("content"),
    list: Some(ListCall {
        service: A,
        path: "/api/system/security/certificates",
        shape: ListShape::Array,
        key_member: "certificateAlias",
    }),
    ..Api::new(
        A,
        Call::new(Verb::Post, CERTIFICATE_PATH),
        Call::new(Verb::Get, CERTIFICATE_PATH),
        Some(Call::new(Verb::Post, CERTIFICATE_PATH)),
        Call::new(Verb::Delete, CERTIFICATE_PATH),
    )
};

/// The `DistributionPublicKey` Kind: a trusted key read from the key list and deleted by its
/// `kid`. The read is the whole list (`{"keys": [{kid, alias, key, fingerprint, issued_on,
/// issued_by, valid_until}]}`), so the list observes every key in one request per poll.
pub const DISTRIBUTION_PUBLIC_KEY: Api = Api {
    read: Read::InList {
        path: "/api/security/keys/trusted",
        wrapper: Some("keys"),
        key_member: "alias",
    },
    list: Some(ListCall {
        service: A,
        path: "/api/security/keys/trusted",
        shape: ListShape::Wrapped("keys"),
        key_member: "alias",
    }),
    delete: Delete::ByMember {
        call: Call::new(Verb::Delete, "/api/security/keys/trusted/{key}"),
        member: "kid",
    },
    ..Api::new(
        A,
        Call::new(Verb::Post, "/api/security/keys/trusted"),
        Call::new(Verb::Get, "/api/security/keys/trusted"),
        None,
        Call::new(Verb::Delete, "/api/security/keys/trusted/{key}"),
    )
};

/// The `GlobalEnvironment` Kind: a platform-wide environment of the Access API, read from its
/// list.
pub const GLOBAL_ENVIRONMENT: Api = Api {
    read: Read::InList {
        path: "/api/v1/environments",
        wrapper: None,
        key_member: "name",
    },
    list: Some(ListCall {
        service: X,
        path: "/api/v1/environments",
        shape: ListShape::Array,
        key_member: "name",
    }),
    ..Api::new(
        X,
        Call::new(Verb::Post, "/api/v1/environments"),
        Call::new(Verb::Get, "/api/v1/environments"),
        None,
        Call::new(Verb::Delete, "/api/v1/environments/{key}"),
    )
};

const GROUP_PATH: &str = "/api/security/groups/{key}";
/// The `Group` Kind: a group, read with its users.
pub const GROUP: Api = Api {
    read: Read::GetWith(Call::new(Verb::Get, GROUP_PATH), "includeUsers", "true"),
    // `[{name, uri}]`: which groups exist, not their settings.
    list: Some(ListCall {
        service: A,
        path: "/api/security/groups",
        shape: ListShape::Array,
        key_member: "name",
    }),
    list_reads_each: true,
    ..Api::new(
        A,
        Call::new(Verb::Put, GROUP_PATH),
        Call::new(Verb::Get, GROUP_PATH),
        // The partial update: members are only sent (and replaced) when managed.
        Some(Call::new(Verb::Post, GROUP_PATH)),
        Call::new(Verb::Delete, GROUP_PATH),
    )
};

/// Key pairs are listed by `GET /api/security/keypair` ("Get all key pairs", Artifactory
/// 7.19 and later; the catalog has no list call for them): each entry is what the pair's own
/// read answers (name, type, alias, public key; never the private key or passphrase, which are
/// write-only), so the list observes them all without a read per pair.
pub const KEYPAIR: Api = Api {
    list: Some(ListCall {
        service: A,
        path: "/api/security/keypair",
        shape: ListShape::Array,
        key_member: "pairName",
    }),
    ..Api::new(
        A,
        Call::new(Verb::Post, "/api/security/keypair"),
        Call::new(Verb::Get, "/api/security/keypair/{key}"),
        None,
        Call::new(Verb::Delete, "/api/security/keypair/{key}"),
    )
};

const PASSWORD_EXPIRATION: &str = "/api/security/configuration/passwordExpirationPolicy";
/// The `PasswordExpirationPolicy` Kind: a singleton; deleting it turns expiration off.
pub const PASSWORD_EXPIRATION_POLICY: Api = Api {
    delete: Delete::Reset(
        Call::new(Verb::Put, PASSWORD_EXPIRATION),
        &[("enabled", Dv::Bool(false))],
    ),
    ..Api::new(
        A,
        Call::new(Verb::Put, PASSWORD_EXPIRATION),
        Call::new(Verb::Get, PASSWORD_EXPIRATION),
        Some(Call::new(Verb::Put, PASSWORD_EXPIRATION)),
        Call::new(Verb::Put, PASSWORD_EXPIRATION),
    )
};

const USER_LOCK: &str = "/api/security/userLockPolicy";
/// The `UserLockPolicy` Kind: a singleton; deleting it turns locking off.
pub const USER_LOCK_POLICY: Api = Api {
    delete: Delete::Reset(
        Call::new(Verb::Put, USER_LOCK),
        &[("enabled", Dv::Bool(false)), ("loginAttempts", Dv::Int(0))],
    ),
    ..Api::new(
        A,
        Call::new(Verb::Put, USER_LOCK),
        Call::new(Verb::Get, USER_LOCK),
        Some(Call::new(Verb::Put, USER_LOCK)),
        Call::new(Verb::Put, USER_LOCK),
    )
};

const PERMISSION_PATH: &str = "/api/v2/security/permissions/{key}";
/// The `PermissionTarget` Kind: a v2 permission target, its user and group actions as maps on
/// the wire.
pub const PERMISSION_TARGET: Api = Api {
    // `[{name, uri}]`: which permission targets exist, not their sections.
    list: Some(ListCall {
        service: A,
        path: "/api/v2/security/permissions",
        shape: ListShape::Array,
        key_member: "name",
    }),
    list_reads_each: true,
    ..Api::new(
        A,
        Call::new(Verb::Post, PERMISSION_PATH),
        Call::new(Verb::Get, PERMISSION_PATH),
        Some(Call::new(Verb::Put, PERMISSION_PATH)),
        Call::new(Verb::Delete, PERMISSION_PATH),
    )
};

/// The `ScopedToken` Kind: an access token, its scopes and audiences space-separated on the
/// wire.
pub const SCOPED_TOKEN: Api = Api {
    // `{"tokens": [...]}`, each as `GET /api/v1/tokens/{id}` answers it.
    list: Some(ListCall {
        service: X,
        path: "/api/v1/tokens",
        shape: ListShape::Wrapped("tokens"),
        key_member: "token_id",
    }),
    ..Api::new(
        X,
        Call::new(Verb::Post, "/api/v1/tokens"),
        Call::new(Verb::Get, "/api/v1/tokens/{key}"),
        None,
        Call::new(Verb::Delete, "/api/v1/tokens/{key}"),
    )
};

const VAULT_PATH: &str = "/api/v1/vault/configs/{key}";
/// The `VaultConfiguration` Kind: a HashiCorp Vault connection of the Access API.
pub const VAULT_CONFIGURATION: Api = Api {
    read: Read::InList {
        path: "/api/v1/vault/configs",
        wrapper: None,
        key_member: "key",
    },
    fixed: &[("type", "HashicorpVault")],
    list: Some(ListCall {
        service: X,
        path: "/api/v1/vault/configs",
        shape: ListShape::Array,
        key_member: "key",
    }),
    ..Api::new(
        X,
        Call::new(Verb::Put, VAULT_PATH),
        Call::new(Verb::Get, VAULT_PATH),
        Some(Call::new(Verb::Put, VAULT_PATH)),
        Call::new(Verb::Delete, VAULT_PATH),
    )
};

const REPLICATION: &str = "/api/replications/{key}";
/// `GET /artifactory/api/replications`: one element per replication target of every
/// repository (a multi-push repository appears once per target), so it tells which
/// repositories replicate, and each is then read by key for its targets together.
const REPLICATIONS_LIST: ListCall = ListCall {
    service: A,
    path: "/api/replications",
    shape: ListShape::Array,
    key_member: "repoKey",
};
const REPLICATIONS: &str = "/api/replications/multiple/{key}";

/// One replication target (a local repository pushing to one URL, or a remote repository
/// pulling).
pub const LOCAL_REPOSITORY_SINGLE_REPLICATION: Api = Api {
    read: Read::First(Call::new(Verb::Get, REPLICATION)),
    list: Some(REPLICATIONS_LIST),
    list_reads_each: true,
    ..Api::new(
        A,
        Call::new(Verb::Put, REPLICATION),
        Call::new(Verb::Get, REPLICATION),
        Some(Call::new(Verb::Post, REPLICATION)),
        Call::new(Verb::Delete, REPLICATION),
    )
};
/// A remote repository's pull replication: the same call as
/// [`LOCAL_REPOSITORY_SINGLE_REPLICATION`].
pub const REMOTE_REPOSITORY_REPLICATION: Api = LOCAL_REPOSITORY_SINGLE_REPLICATION;
/// The retired pull replication, served through the call its replacement uses.
pub const PULL_REPLICATION: Api = LOCAL_REPOSITORY_SINGLE_REPLICATION;

/// Several push targets of a local repository.
pub const LOCAL_REPOSITORY_MULTI_REPLICATION: Api = Api {
    read: Read::Targets(Call::new(Verb::Get, REPLICATION)),
    list: Some(REPLICATIONS_LIST),
    list_reads_each: true,
    ..Api::new(
        A,
        Call::new(Verb::Put, REPLICATIONS),
        Call::new(Verb::Get, REPLICATION),
        Some(Call::new(Verb::Post, REPLICATIONS)),
        Call::new(Verb::Delete, REPLICATION),
    )
};
/// The retired push replication, served through the call its replacement uses.
pub const PUSH_REPLICATION: Api = LOCAL_REPOSITORY_MULTI_REPLICATION;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(parse_version("7.84.3"), (7, 84, 3));
        assert!(parse_version("7.117.5") >= ACCESS_USERS_SINCE);
        assert!(parse_version("7.84.2") < ACCESS_USERS_SINCE);
        assert!(parse_version("7.9.0") < ACCESS_USERS_SINCE);
        assert_eq!(parse_version("7"), (7, 0, 0));
    }

    #[test]
    fn permission_maps_round_trip() {
        let mut body = json!({"repo": {"actions": {"users": [{"name": "u", "permissions": ["read"]}], "groups": []}}});
        let mut m = body.as_object().cloned().unwrap();
        actions_to_maps(&mut m);
        assert_eq!(
            Value::Object(m.clone()),
            json!({"repo": {"actions": {"users": {"u": ["read"]}, "groups": {}}}})
        );
        body = actions_from_maps(&Value::Object(m));
        assert_eq!(
            body,
            json!({"repo": {"actions": {"users": [{"name": "u", "permissions": ["read"]}], "groups": []}}})
        );
    }

    #[test]
    fn token_scopes_are_joined_and_targets_carry_key_and_cron() {
        let mut b = json!({"scope": ["applied-permissions/user", "artifact:x:r"], "audience": []})
            .as_object()
            .cloned()
            .unwrap();
        token_to_jfrog(&mut b);
        assert_eq!(
            Value::Object(b),
            json!({"scope": "applied-permissions/user artifact:x:r"})
        );
        let mut b =
            json!({"repoKey": "libs", "cronExp": "0 0 * * * ?", "replications": [{"url": "u"}]})
                .as_object()
                .cloned()
                .unwrap();
        targets_to_jfrog(&mut b);
        assert_eq!(b["replications"][0]["repoKey"], "libs");
        assert_eq!(b["replications"][0]["cronExp"], "0 0 * * * ?");
    }

    #[test]
    fn a_replications_proxy_ref_is_read_as_proxy() {
        let one = json!({"repoKey": "libs", "proxyRef": "corp"});
        assert_eq!(
            replication_from_jfrog(&one),
            Some(json!({"repoKey": "libs", "proxy": "corp"}))
        );
        let many = json!({"repoKey": "libs", "replications": [{"url": "u", "proxyRef": "corp"}, {"url": "v"}]});
        assert_eq!(
            replication_from_jfrog(&many).unwrap()["replications"],
            json!([{"url": "u", "proxy": "corp"}, {"url": "v"}])
        );
        assert_eq!(replication_from_jfrog(&json!({"repoKey": "libs"})), None);
    }
}
