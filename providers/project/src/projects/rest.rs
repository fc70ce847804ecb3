//! The REST bindings of provider-project's Kinds, on the Access API.
//!
//! A Kind inside a project is addressed by its name inside the project (the family's
//! `address` hook builds it from the identifier and `spec.forProvider.projectKey`;
//! canonically `<projectKey>/<name>`); a share by its repository with its [`ShareScope`]
//! (`<repoKey>/<targetProjectKey>/<readOnly>`); a project by its key with the
//! [`EmbeddedLists`] its MR owns. Only [`Error::NotFound`] means "does not exist":
//! a repository assigned to another project, or no longer shared with the target, reads as
//! not found, as upstream treats it.

use std::fmt;

use async_trait::async_trait;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use provider_family::rest::{not_found, request};
use provider_family::{Address, Call, Cx, Detail, ListCall, ListShape, Listed, Paths, Rest, Verb};
use serde_json::{Map, Value, json};

/// One GiB: the project quota is given in GiB and sent in bytes.
const GIB: i64 = 1024 * 1024 * 1024;

/// An Access request with path parameters in order.
fn call<'a>(
    client: &'a JfrogClient,
    verb: Verb,
    path: &'static str,
    idem: Idempotency,
    params: &[&str],
) -> jfrog_client::Request<'a> {
    request(client, Service::Access, verb, path, idem, params)
}

/// Projects: plain CRUD on `/api/v1/projects`, with the quota in GiB on our side and in
/// bytes on the wire, and `blockDeploymentsOnLimit` the inverse of JFrog's `soft_limit`.
/// Listed by `GET /api/v1/projects` (an array of full projects, quota in bytes as a read
/// answers it). The Kind's hooks convert the units: [`project_to_jfrog`] in `encode` for
/// writes, [`project_from_jfrog`] in `decode` for reads and list entries alike.
pub static PROJECT: Listed = Listed {
    rest: &ProjectRest,
    list: ListCall {
        service: Service::Access,
        path: "/api/v1/projects",
        shape: ListShape::Array,
        key_member: "project_key",
    },
    reads_each: false,
    parents: &[],
    parent_list: None,
    parent_query: None,
};

static PROJECT_CALLS: Paths = Paths {
    service: Service::Access,
    create: Call::new(Verb::Post, "/api/v1/projects"),
    read: Call::new(Verb::Get, "/api/v1/projects/{key}"),
    update: Call::new(Verb::Put, "/api/v1/projects/{key}"),
    delete: Call::new(Verb::Delete, "/api/v1/projects/{key}"),
    list: None,
    case_insensitive: false,
};

/// A project's body in JFrog's units.
pub fn project_to_jfrog(b: &mut Map<String, Value>) {
    if let Some(g) = b.get("storage_quota_bytes").and_then(Value::as_i64) {
        let bytes = if g <= 0 { -1 } else { g.saturating_mul(GIB) };
        b.insert("storage_quota_bytes".into(), json!(bytes));
    }
    if let Some(block) = b.get("soft_limit").and_then(Value::as_bool) {
        b.insert("soft_limit".into(), json!(!block));
    }
}

/// A project as JFrog answers it (read or list entry) in our units.
pub fn project_from_jfrog(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(bytes) = v.get("storage_quota_bytes").and_then(Value::as_i64) {
        v["storage_quota_bytes"] = json!(if bytes <= 0 { -1 } else { bytes / GIB });
    }
    if let Some(soft) = v.get("soft_limit").and_then(Value::as_bool) {
        v["soft_limit"] = json!(!soft);
    }
    v
}

/// The lists a project owns beside itself when one of the `useProject*Resource` switches
/// is off (the Kind's fields `member`, `group`, `role`, `repos`, gated by their switch):
/// the address then carries them ([`EmbeddedLists`]), and the project is read by key rather
/// than from the projects list, which carries none of them.
pub const EMBEDDED: [&str; 4] = ["member", "group", "role", "repos"];

/// The embedded lists a project's MR owns (some of [`EMBEDDED`], never none), the detail
/// of the project's address; canonically `/<list>,<list>...` after the project key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedLists(pub Vec<&'static str>);

impl fmt::Display for EmbeddedLists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}", self.0.join(","))
    }
}

impl Detail for EmbeddedLists {}

/// A project, and the embedded lists its MR owns (see [`EMBEDDED`]), as upstream's project
/// resource manages them with a switch off: users and groups with their roles (the
/// project's member lists, upserted by PUT and removed by DELETE per member), custom roles
/// (the project's roles of type `CUSTOM`: POST, PUT, DELETE per role) and assigned
/// repositories (`GET /artifactory/api/repositories?project=<key>` lists the repositories
/// assigned to or shared with the project; each one's Access status tells which are
/// assigned; attached with `force=true` and detached as the Repository Kind does). An
/// entry the spec lacks is removed, as upstream removes it: the list is the MR's.
#[derive(Debug)]
pub struct ProjectRest;

/// The project and the embedded lists (none without [`EmbeddedLists`]) of its address.
fn project_and_lists(address: &Address) -> (&str, Vec<&'static str>) {
    let lists = address
        .detail::<EmbeddedLists>()
        .map_or_else(Vec::new, |l| l.0.clone());
    (address.key(), lists)
}

/// Strings of an array (sorted), for comparing sets.
fn sorted_strings(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// A role or member compared as JFrog keeps it: set-valued members unordered, absent and
/// empty alike.
fn same_entry(a: &Value, b: &Value) -> bool {
    let keys = a
        .as_object()
        .into_iter()
        .flatten()
        .chain(b.as_object().into_iter().flatten())
        .map(|(k, _)| k.as_str());
    let mut keys: Vec<&str> = keys.collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter().all(|k| {
        let (x, y) = (&a[k], &b[k]);
        match (x, y) {
            (Value::Array(_), _) | (_, Value::Array(_)) => sorted_strings(x) == sorted_strings(y),
            _ => {
                let empty = |v: &Value| v.is_null() || v.as_str() == Some("");
                (empty(x) && empty(y)) || x == y
            }
        }
    })
}

fn entries(v: Option<&Value>) -> Vec<Value> {
    v.and_then(Value::as_array).cloned().unwrap_or_default()
}

fn name_of(v: &Value) -> &str {
    v["name"].as_str().unwrap_or("")
}

/// Assign `repo` to project `p` (`force=true`, as upstream: a repository assigned elsewhere
/// moves).
async fn attach(client: &JfrogClient, repo: &str, p: &str) -> Result<(), Error> {
    call(
        client,
        Verb::Put,
        "/api/v1/projects/_/attach/repositories/{key}/{project}",
        Idempotency::Idempotent,
        &[repo, p],
    )
    .query("force", "true")
    .send_empty()
    .await
}

/// Detach `repo` from its project.
async fn detach(client: &JfrogClient, repo: &str) -> Result<(), Error> {
    call(
        client,
        Verb::Delete,
        "/api/v1/projects/_/attach/repositories/{key}",
        Idempotency::Idempotent,
        &[repo],
    )
    .send_empty()
    .await
}

impl ProjectRest {
    /// One embedded list as the project has it now.
    async fn read_list(&self, client: &JfrogClient, p: &str, list: &str) -> Result<Value, Error> {
        let get = |path: &'static str| {
            call(client, Verb::Get, path, Idempotency::Idempotent, &[p]).send_value()
        };
        Ok(match list {
            "member" => get(USERS).await?["members"].clone(),
            "group" => get(GROUPS).await?["members"].clone(),
            "role" => Value::Array(
                entries(Some(&get(ROLES).await?))
                    .into_iter()
                    .filter(|r| r["type"].as_str() == Some("CUSTOM"))
                    .collect(),
            ),
            "repos" => {
                let listed = request(
                    client,
                    Service::Artifactory,
                    Verb::Get,
                    "/api/repositories",
                    Idempotency::Idempotent,
                    &[],
                )
                .query("project", p)
                .send_value()
                .await?;
                let mut assigned = Vec::new();
                for r in entries(Some(&listed)) {
                    let Some(repo) = r["key"].as_str() else {
                        continue;
                    };
                    if status(client, repo).await?["assigned_to"].as_str() == Some(p) {
                        assigned.push(json!(repo));
                    }
                }
                Value::Array(assigned)
            }
            _ => Value::Null,
        })
    }

    /// Make one embedded list the declared one: only what differs is sent.
    async fn set_list(
        &self,
        client: &JfrogClient,
        p: &str,
        list: &str,
        declared: Option<&Value>,
    ) -> Result<(), Error> {
        let have = entries(Some(&self.read_list(client, p, list).await?));
        let want = entries(declared);
        match list {
            "member" | "group" | "role" => {
                let (collection, item) = match list {
                    "member" => (USERS, "/api/v1/projects/{project}/users/{name}"),
                    "group" => (GROUPS, "/api/v1/projects/{project}/groups/{name}"),
                    _ => (ROLES, "/api/v1/projects/{project}/roles/{name}"),
                };
                for w in &want {
                    let name = name_of(w);
                    match have.iter().find(|h| name_of(h) == name) {
                        Some(h) if same_entry(h, w) => {}
                        // Roles are created on the collection; members upserted by name.
                        None if list == "role" => {
                            call(
                                client,
                                Verb::Post,
                                collection,
                                Idempotency::NonIdempotent,
                                &[p],
                            )
                            .json(w)
                            .send_empty()
                            .await?;
                        }
                        _ => {
                            call(client, Verb::Put, item, Idempotency::Idempotent, &[p, name])
                                .json(w)
                                .send_empty()
                                .await?;
                        }
                    }
                }
                for h in &have {
                    let name = name_of(h);
                    if !want.iter().any(|w| name_of(w) == name) {
                        call(
                            client,
                            Verb::Delete,
                            item,
                            Idempotency::Idempotent,
                            &[p, name],
                        )
                        .send_empty()
                        .await?;
                    }
                }
            }
            "repos" => {
                for w in want.iter().filter(|w| !have.contains(w)) {
                    attach(client, w.as_str().unwrap_or(""), p).await?;
                }
                for h in have.iter().filter(|h| !want.contains(h)) {
                    detach(client, h.as_str().unwrap_or("")).await?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The project's own body (the embedded lists are not project members on the wire).
    fn project_body(body: &Map<String, Value>) -> Map<String, Value> {
        let mut b = body.clone();
        for l in EMBEDDED {
            b.remove(l);
        }
        b
    }
}

#[async_trait]
impl Rest for ProjectRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (p, lists) = project_and_lists(address);
        let mut v = PROJECT_CALLS.read(cx, address).await?;
        for l in lists {
            v[l] = self.read_list(cx.client, p, l).await?;
        }
        Ok(v)
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let (p, lists) = project_and_lists(address);
        let answer = PROJECT_CALLS
            .create(cx, address, &Self::project_body(body))
            .await?;
        for l in lists {
            self.set_list(cx.client, p, l, body.get(l)).await?;
        }
        Ok(answer)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let (p, lists) = project_and_lists(address);
        PROJECT_CALLS
            .update(cx, address, &Self::project_body(body))
            .await?;
        for l in lists {
            self.set_list(cx.client, p, l, body.get(l)).await?;
        }
        Ok(())
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        PROJECT_CALLS.delete(cx, address).await
    }
    /// A project with embedded lists is read by key: the list carries none of them.
    fn list_key(&self, address: &Address) -> Option<String> {
        address
            .detail::<EmbeddedLists>()
            .is_none()
            .then(|| address.to_string())
    }
}

/// Environments: stored by JFrog as `<project>-<name>`, created by POST, read from the
/// project's list (there is no single read), nothing to update (the name is the
/// identifier), deleted by full name.
#[derive(Debug)]
pub struct EnvironmentRest;

/// The environment binding, observed through its project's list
/// (`GET /api/v1/projects/{project}/environments`: `[{"name": "<project>-<name>"}]`), one
/// list per project and poll for all its environments.
pub static ENVIRONMENT: Listed = Listed::per_parent(
    &EnvironmentRest,
    in_project(ENVIRONMENTS, ListShape::Array),
    IN_PROJECT,
    &PROJECT.list,
);

/// The field naming the project of a Kind inside one (fills a list path's `{project}`).
const IN_PROJECT: &[&str] = &["projectKey"];

/// The list of a project's objects of one Kind, keyed by `name`.
const fn in_project(path: &'static str, shape: ListShape) -> ListCall {
    ListCall {
        service: Service::Access,
        path,
        shape,
        key_member: "name",
    }
}

const ENVIRONMENTS: &str = "/api/v1/projects/{project}/environments";

#[async_trait]
impl Rest for EnvironmentRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (p, name) = (address.parent(), address.key());
        let list = call(
            cx.client,
            Verb::Get,
            ENVIRONMENTS,
            Idempotency::Idempotent,
            &[p],
        )
        .send_value()
        .await?;
        let full = format!("{p}-{name}");
        list.as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"].as_str() == Some(full.as_str()))
            .cloned()
            .ok_or_else(|| {
                not_found(
                    Service::Access,
                    Verb::Get,
                    ENVIRONMENTS,
                    format!("environment {full} is not in project {p}"),
                )
            })
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let (p, name) = (address.parent(), address.key());
        call(
            cx.client,
            Verb::Post,
            ENVIRONMENTS,
            Idempotency::NonIdempotent,
            &[p],
        )
        .json(&json!({"name": format!("{p}-{name}")}))
        .send_empty()
        .await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        _cx: &Cx<'_>,
        _address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        // The name is the identifier and the project is immutable: nothing can differ.
        Ok(())
    }
    fn list_key(&self, address: &Address) -> Option<String> {
        let (p, name) = (address.parent(), address.key());
        Some(format!("{p}/{p}-{name}"))
    }
    fn listed_address(&self, parents: &[&str], key: &str) -> Option<String> {
        let p = parents.first()?;
        key.strip_prefix(p)?.strip_prefix('-').map(str::to_string)
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let (p, name) = (address.parent(), address.key());
        call(
            cx.client,
            Verb::Delete,
            "/api/v1/projects/{project}/environments/{name}",
            Idempotency::Idempotent,
            &[p, &format!("{p}-{name}")],
        )
        .send_empty()
        .await
    }
}

/// Objects inside a project (the parent of their address): custom roles (created by POST
/// on the collection) and members (users, groups: created and updated by PUT, the name in
/// the body).
#[derive(Debug)]
pub struct Nested {
    /// The collection path (`{project}`).
    pub collection: &'static str,
    /// The item path (`{project}`, `{name}`).
    pub item: &'static str,
    /// Created by PUT on the item (members) rather than POST on the collection (roles).
    pub put_creates: bool,
}

const ROLES: &str = "/api/v1/projects/{project}/roles";
const USERS: &str = "/api/v1/projects/{project}/users";
const GROUPS: &str = "/api/v1/projects/{project}/groups";

/// Custom project roles, observed through their project's list (an array of full roles,
/// the predefined ones included).
pub static ROLE: Listed = Listed::per_parent(
    &Nested {
        collection: ROLES,
        item: "/api/v1/projects/{project}/roles/{name}",
        put_creates: false,
    },
    in_project(ROLES, ListShape::Array),
    IN_PROJECT,
    &PROJECT.list,
);

/// Project users, observed through their project's member list
/// (`{"members": [{"name", "roles"}]}`).
pub static USER: Listed = Listed::per_parent(
    &Nested {
        collection: USERS,
        item: "/api/v1/projects/{project}/users/{name}",
        put_creates: true,
    },
    in_project(USERS, ListShape::Wrapped("members")),
    IN_PROJECT,
    &PROJECT.list,
);

/// Project groups, observed like users.
pub static GROUP: Listed = Listed::per_parent(
    &Nested {
        collection: GROUPS,
        item: "/api/v1/projects/{project}/groups/{name}",
        put_creates: true,
    },
    in_project(GROUPS, ListShape::Wrapped("members")),
    IN_PROJECT,
    &PROJECT.list,
);

/// The detail of a project user's address when its MR sets `ignoreMissingUser`;
/// canonically `/ignore-missing-user` after the user's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IgnoreMissingUser;

impl fmt::Display for IgnoreMissingUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("/ignore-missing-user")
    }
}

impl Detail for IgnoreMissingUser {}

/// The Access v2 user (to tell a missing user from a missing project behind a 404).
const USER_V2: &str = "/api/v2/users/{name}";

impl Nested {
    /// The project and the name.
    fn params(address: &Address) -> [&str; 2] {
        [address.parent(), address.key()]
    }

    /// The upsert of a member; with `ignoreMissingUser` (see [`IgnoreMissingUser`]) a 404
    /// because the user does not exist is not an error, as upstream: the membership is
    /// skipped, so the next observe finds it missing and creates it once the user exists.
    /// A 404 for another reason (a missing project or role) stays an error.
    async fn upsert(
        &self,
        client: &JfrogClient,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let p = Self::params(address);
        let sent = call(client, Verb::Put, self.item, Idempotency::Idempotent, &p)
            .json(&Self::body(p[1], body))
            .send_empty()
            .await;
        match sent {
            Err(e) if e.is_not_found() && address.detail::<IgnoreMissingUser>().is_some() => {
                let user = call(client, Verb::Get, USER_V2, Idempotency::Idempotent, &p[1..])
                    .send_value()
                    .await;
                match user {
                    Err(u) if u.is_not_found() => {
                        tracing::warn!(
                            project = p[0],
                            user = p[1],
                            "user not found, but ignoreMissingUser is set: project membership not created"
                        );
                        Ok(())
                    }
                    _ => Err(e),
                }
            }
            other => other,
        }
    }

    fn body(name: &str, body: &Map<String, Value>) -> Map<String, Value> {
        let mut b = body.clone();
        b.insert("name".into(), json!(name));
        b
    }
}

#[async_trait]
impl Rest for Nested {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        call(
            cx.client,
            Verb::Get,
            self.item,
            Idempotency::Idempotent,
            &Self::params(address),
        )
        .send_value()
        .await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let p = Self::params(address);
        if self.put_creates {
            // An upsert: resending it is harmless.
            self.upsert(cx.client, address, body).await?;
        } else {
            let body = Self::body(p[1], body);
            call(
                cx.client,
                Verb::Post,
                self.collection,
                Idempotency::NonIdempotent,
                &p[..1],
            )
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
        self.upsert(cx.client, address, body).await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        call(
            cx.client,
            Verb::Delete,
            self.item,
            Idempotency::Idempotent,
            &Self::params(address),
        )
        .send_empty()
        .await
    }
    /// Listed as `<project>/<name>`, without the `ignoreMissingUser` switch.
    fn list_key(&self, address: &Address) -> Option<String> {
        let [p, name] = Self::params(address);
        Some(format!("{p}/{name}"))
    }
}

/// The status of a repository on the Access side.
const STATUS: &str = "/api/v1/projects/_/repositories/{key}";

async fn status(client: &JfrogClient, repo: &str) -> Result<Value, Error> {
    call(client, Verb::Get, STATUS, Idempotency::Idempotent, &[repo])
        .send_value()
        .await
}

/// A repository assigned to a project (its key inside the project): attached by PUT (no body,
/// `force=true` as upstream), read from the repository's Access status (assigned to
/// another project = not found), nothing to update, detached by DELETE.
#[derive(Debug)]
pub struct RepositoryRest;

/// The repository assignment binding, observed through Artifactory's list of every
/// repository's configuration (`GET /artifactory/api/repositories/configurations`,
/// Artifactory 7.61.3+), the list provider-artifactory observes repositories with: each
/// configuration carries the repository's `projectKey`, which is its assignment, so every
/// assigned repository is listed as `<projectKey>/<key>` (its address's canonical form) and
/// the others not at all. One list per poll answers every Repository MR; a platform without
/// the list, or a token not allowed it (an admin call), reads each status by key.
pub static REPOSITORY: Listed = Listed {
    rest: &RepositoryRest,
    list: ListCall {
        service: Service::Artifactory,
        path: "/api/repositories/configurations",
        shape: ListShape::Grouped("rclass"),
        key_member: "projectKey/key",
    },
    reads_each: false,
    parents: &[],
    parent_list: None,
    parent_query: None,
};

#[async_trait]
impl Rest for RepositoryRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (p, repo) = (address.parent(), address.key());
        let s = status(cx.client, repo).await?;
        if s["assigned_to"].as_str() == Some(p) {
            Ok(json!({}))
        } else {
            Err(not_found(
                Service::Access,
                Verb::Get,
                STATUS,
                format!("repository {repo} is not assigned to project {p}"),
            ))
        }
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let (p, repo) = (address.parent(), address.key());
        attach(cx.client, repo, p).await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        _cx: &Cx<'_>,
        _address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        // Every field is immutable (upstream replaces): nothing can differ.
        Ok(())
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        detach(cx.client, address.key()).await
    }
    /// Repository keys are case-insensitive (project keys are lower case).
    fn case_insensitive(&self) -> bool {
        true
    }
}

/// Sharing a repository (the key of its address) with one project or with all, as its
/// [`ShareScope`] says: PUT and DELETE with the `readOnly` query parameter, read from
/// the repository's Access status; an update shares again with the new mode.
#[derive(Debug)]
pub struct ShareRest {
    /// With every project rather than one.
    pub all: bool,
}

/// Sharing with one project.
pub static SHAREREPOSITORY: ShareRest = ShareRest { all: false };
/// Sharing with every project.
pub static SHAREREPOSITORYWITHALL: ShareRest = ShareRest { all: true };

/// The project a repository is shared with (empty: every project) and how, the detail of
/// the share's address (whose key is the repository); canonically `/<target>/<readOnly>`
/// after the repository key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareScope {
    /// The target project's key; empty for a share with every project.
    pub target: String,
    /// Shared read-only.
    pub read_only: bool,
}

impl fmt::Display for ShareScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}/{}", self.target, self.read_only)
    }
}

impl Detail for ShareScope {}

/// The repository, target project and mode (no target, not read-only without a
/// [`ShareScope`]) of a share's address.
fn share_parts(address: &Address) -> (&str, &str, bool) {
    let scope = address.detail::<ShareScope>();
    (
        address.key(),
        scope.map_or("", |s| s.target.as_str()),
        scope.is_some_and(|s| s.read_only),
    )
}

impl ShareRest {
    fn request<'a>(
        &self,
        client: &'a JfrogClient,
        verb: Verb,
        address: &Address,
    ) -> jfrog_client::Request<'a> {
        let (repo, target, ro) = share_parts(address);
        let r = if self.all {
            call(
                client,
                verb,
                "/api/v1/projects/_/share/repositories/{key}",
                Idempotency::Idempotent,
                &[repo],
            )
        } else {
            call(
                client,
                verb,
                "/api/v1/projects/_/share/repositories/{key}/{target}",
                Idempotency::Idempotent,
                &[repo, target],
            )
        };
        r.query("readOnly", if ro { "true" } else { "false" })
    }
}

#[async_trait]
impl Rest for ShareRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (repo, target, _) = share_parts(address);
        let s = status(cx.client, repo).await?;
        let shared = if self.all {
            s["shared_with_all_projects"].as_bool() == Some(true)
        } else {
            s["shared_with_projects"]
                .as_array()
                .is_some_and(|a| a.iter().any(|t| t.as_str() == Some(target)))
        };
        if !shared {
            return Err(not_found(
                Service::Access,
                Verb::Get,
                STATUS,
                format!("repository {repo} is not shared as declared"),
            ));
        }
        Ok(json!({"read_only": s["shared_read_only"].as_bool().unwrap_or(false)}))
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.request(cx.client, Verb::Put, address)
            .send_empty()
            .await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.request(cx.client, Verb::Put, address)
            .send_empty()
            .await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        self.request(cx.client, Verb::Delete, address)
            .send_empty()
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_quota_and_soft_limit_convert_both_ways() {
        let mut body: Map<String, Value> =
            serde_json::from_value(json!({"storage_quota_bytes": 2, "soft_limit": true}))
                .expect("map");
        project_to_jfrog(&mut body);
        assert_eq!(body["storage_quota_bytes"], json!(2 * GIB));
        assert_eq!(body["soft_limit"], json!(false));
        let back = project_from_jfrog(&Value::Object(body));
        assert_eq!(back["storage_quota_bytes"], json!(2));
        assert_eq!(back["soft_limit"], json!(true));
        let mut unlimited: Map<String, Value> =
            serde_json::from_value(json!({"storage_quota_bytes": -1})).expect("map");
        project_to_jfrog(&mut unlimited);
        assert_eq!(unlimited["storage_quota_bytes"], json!(-1));
    }
}
