//! The REST bindings of provider-platform's Kinds: plain data ([`Paths`], [`Settings`])
//! where the API is plain CRUD or a setting, and small bindings where the calls differ:
//! permissions (one call per resource type), group members (add/remove lists), identity
//! mappings (the project as a query parameter), lifecycles and stages (global or per
//! project). Where JFrog's body differs from the Kind's (permissions' named elements ⇄ maps,
//! OIDC provider types, identity mapping claims as JSON text) the `*_to_jfrog` and
//! `*_from_jfrog` functions here convert it, called by the Kind's `encode` and `decode`
//! hooks: a binding sends and answers JFrog's shape.
//!
//! Addresses (built by the family's `address` hook, each binding's typed detail read back
//! by its calls): a group's members (the group, [`DeclaredMembers`]; canonically
//! `<group>/<member>\n<member>...`), an identity mapping (its provider as parent,
//! [`MappingProject`]; `<provider>/<name>/<project>`), a lifecycle (`_` for the platform's,
//! else its project key), a stage ([`StageScope`]; `<name>/<project>/<detach>`).

use async_trait::async_trait;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use std::fmt;

use provider_family::rest::{not_found, request};
use provider_family::{
    Address, Call, Cx, Detail, ListCall, ListShape, Listed, Next, Pages, Paths, QueryParent, Rest,
    Settings, Verb,
};
use serde_json::{Map, Value, json};

const A: Service = Service::Access;

/// Plain CRUD under `base` (`POST base`, `GET/PUT/DELETE base/{key}`).
const fn crud(base: &'static str, item: &'static str, list: Option<ListCall>) -> Paths {
    Paths {
        service: A,
        create: Call::new(Verb::Post, base),
        read: Call::new(Verb::Get, item),
        update: Call::new(Verb::Put, item),
        delete: Call::new(Verb::Delete, item),
        list,
        case_insensitive: false,
    }
}

/// Custom global roles.
pub static GLOBALROLE: Paths = crud(
    "/api/v1/roles",
    "/api/v1/roles/{key}",
    Some(ListCall {
        service: A,
        path: "/api/v1/roles",
        shape: ListShape::Array,
        key_member: "name",
    }),
);

/// Groups (v2): updated by PATCH; listed by `GET /api/v2/groups`
/// (`{"groups": [{"group_name", "uri"}]}`, names only: list, then read each).
pub static GROUP: Listed = Listed {
    rest: &GroupRest,
    list: ListCall {
        service: A,
        path: "/api/v2/groups",
        shape: ListShape::Pages(&GROUP_PAGES),
        key_member: "group_name",
    },
    reads_each: true,
    parents: &[],
    parent_list: None,
    parent_query: None,
};

/// "Get a List of Groups": `limit` (default 1,000; JFrog names no maximum, the users list
/// of the same Access API takes up to 99,999) and `cursor`.
pub static GROUP_PAGES: Pages = Pages {
    member: "groups",
    size: 99_999,
    next: Next::Cursor,
};

static GROUP_CALLS: Paths = Paths {
    update: Call::new(Verb::Patch, "/api/v2/groups/{key}"),
    ..crud("/api/v2/groups", "/api/v2/groups/{key}", None)
};

/// A group with, when `useGroupMembersResource` is false, its own member list (the body
/// then carries `members`, see the Kind's `members` field): created with the group in the
/// POST body (JFrog's "Create Group" takes `members`), read from the group's answer, and
/// changed through the group's members PATCH, since the group PATCH does not take them
/// (upstream's `groupAPIModel`: "only for create"). With the switch on, the body never
/// carries `members` and this is the plain binding.
#[derive(Debug)]
pub struct GroupRest;

#[async_trait]
impl Rest for GroupRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        GROUP_CALLS.read(cx, address).await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        GROUP_CALLS.create(cx, address, body).await
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let mut group = body.clone();
        let members = group.remove("members");
        GROUP_CALLS.update(cx, address, &group).await?;
        let Some(members) = members else {
            return Ok(());
        };
        let declared: Vec<&str> = members
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let have = GROUPMEMBERS.members(cx.client, address.key()).await?;
        let (add, remove) = member_changes(&declared, &have);
        if add.is_empty() && remove.is_empty() {
            return Ok(());
        }
        GROUPMEMBERS
            .patch(cx.client, address.key(), &add, &remove)
            .await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        GROUP_CALLS.delete(cx, address).await
    }
}

/// The pages of a SCIM list: `startIndex` and `count` (JFrog answers 20 resources unless
/// `count` says otherwise, and names no maximum: its docs ask for `count` = `totalResults` to
/// get every resource in one answer), followed by `totalResults` should JFrog answer fewer.
pub static SCIM_PAGES: Pages = Pages {
    member: "Resources",
    size: 10_000,
    next: Next::Index,
};

/// SCIM groups, listed by a SCIM `ListResponse` (`{"Resources": [...]}`, full resources).
pub static SCIMGROUP: Paths = crud(
    "/api/v1/scim/v2/Groups",
    "/api/v1/scim/v2/Groups/{key}",
    Some(ListCall {
        service: A,
        path: "/api/v1/scim/v2/Groups",
        shape: ListShape::Pages(&SCIM_PAGES),
        key_member: "id",
    }),
);

/// SCIM users, listed by a SCIM `ListResponse` (`{"Resources": [...]}`, full resources).
pub static SCIMUSER: Paths = crud(
    "/api/v1/scim/v2/Users",
    "/api/v1/scim/v2/Users/{key}",
    Some(ListCall {
        service: A,
        path: "/api/v1/scim/v2/Users",
        shape: ListShape::Pages(&SCIM_PAGES),
        key_member: "userName",
    }),
);

/// AWS IAM role bindings: an upsert by PUT without the user in the path.
pub static AWSIAMROLE: Paths = Paths {
    create: Call::new(Verb::Put, "/api/v1/aws/iam_role"),
    update: Call::new(Verb::Put, "/api/v1/aws/iam_role"),
    ..crud("/api/v1/aws/iam_role", "/api/v1/aws/iam_role/{key}", None)
};

/// SAML configurations.
pub static SAMLSETTINGS: Paths = crud(
    "/api/v1/saml",
    "/api/v1/saml/{key}",
    Some(ListCall {
        service: A,
        path: "/api/v1/saml",
        shape: ListShape::Array,
        key_member: "name",
    }),
);

/// Workers: replaced by PUT on the collection (the key in the body); listed by
/// `GET /api/v1/workers` (`{"workers": [...]}`, each as a read shows it).
pub static WORKERSSERVICE: Paths = Paths {
    service: Service::Worker,
    create: Call::new(Verb::Post, "/api/v1/workers"),
    read: Call::new(Verb::Get, "/api/v1/workers/{key}"),
    update: Call::new(Verb::Put, "/api/v1/workers"),
    delete: Call::new(Verb::Delete, "/api/v1/workers/{key}"),
    list: Some(ListCall {
        service: Service::Worker,
        path: "/api/v1/workers",
        shape: ListShape::Wrapped("workers"),
        key_member: "key",
    }),
    case_insensitive: false,
};

/// The Crowd settings.
pub static CROWDSETTINGS: Settings = Settings {
    service: A,
    read: "/api/v1/crowd",
    write: Call::new(Verb::Put, "/api/v1/crowd"),
};

/// The HTTP SSO settings.
pub static HTTPSSOSETTINGS: Settings = Settings {
    service: A,
    read: "/api/v1/httpsso",
    write: Call::new(Verb::Put, "/api/v1/httpsso"),
};

/// The licence (self-hosted).
pub static LICENSE: SelfHostedOnly = SelfHostedOnly {
    kind: "License",
    what: "licences",
    settings: Settings {
        service: Service::Artifactory,
        read: "/api/system/license",
        write: Call::new(Verb::Post, "/api/system/licenses"),
    },
};

/// The reverse proxy configuration (self-hosted).
pub static REVERSEPROXY: SelfHostedOnly = SelfHostedOnly {
    kind: "ReverseProxy",
    what: "the reverse proxy configuration",
    settings: Settings {
        service: Service::Artifactory,
        read: "/api/system/configuration/webServer",
        write: Call::new(Verb::Post, "/api/system/configuration/webServer"),
    },
};

/// A setting only a self-hosted platform has: on JFrog Cloud its refusal says so, naming the
/// Kind, instead of JFrog's bare 400.
#[derive(Debug)]
pub struct SelfHostedOnly {
    /// The Kind, for the message.
    pub kind: &'static str,
    /// What the platform does not serve, for the message.
    pub what: &'static str,
    /// The calls.
    pub settings: Settings,
}

impl SelfHostedOnly {
    fn explain(&self, e: Error) -> Error {
        match e {
            Error::BadRequest {
                ctx,
                status,
                message,
            } if message.contains(provider_family::rest::CLOUD_REFUSAL) => Error::BadRequest {
                ctx,
                status,
                message: provider_family::rest::needs_self_hosted(self.kind, self.what, &message),
            },
            e => e,
        }
    }
}

#[async_trait]
impl Rest for SelfHostedOnly {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        self.settings
            .read(cx, address)
            .await
            .map_err(|e| self.explain(e))
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.settings
            .create(cx, address, body)
            .await
            .map_err(|e| self.explain(e))
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.settings
            .update(cx, address, body)
            .await
            .map_err(|e| self.explain(e))
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        self.settings.delete(cx, address).await
    }
    fn forgets_on_delete(&self) -> bool {
        self.settings.forgets_on_delete()
    }
}

/// OIDC configurations: plain CRUD, with two provider types spelled differently on the
/// wire (converted by [`oidc_to_jfrog`] and [`oidc_from_jfrog`] in the Kind's hooks, which
/// serve writes, reads and list entries alike); listed by `GET /api/v1/oidc` (an array of
/// full configurations).
pub static OIDCCONFIGURATION: Paths = crud("/api/v1/oidc", "/api/v1/oidc/{key}", Some(OIDC_LIST));

const OIDC_LIST: ListCall = ListCall {
    service: A,
    path: "/api/v1/oidc",
    shape: ListShape::Array,
    key_member: "name",
};

/// An OIDC configuration's body with JFrog's provider type spelling.
pub fn oidc_to_jfrog(body: &mut Map<String, Value>) {
    map_member(body, "provider_type", PROVIDER_TYPES, true);
}

/// An OIDC configuration as JFrog answers it with our provider type spelling (`None`: it
/// already has it).
pub fn oidc_from_jfrog(v: &Value) -> Option<Value> {
    let mut m = v.as_object()?.clone();
    let before = m.get("provider_type").cloned();
    map_member(&mut m, "provider_type", PROVIDER_TYPES, false);
    (m.get("provider_type") != before.as_ref()).then_some(Value::Object(m))
}

/// (Kind value, wire value) of the provider types that differ.
const PROVIDER_TYPES: &[(&str, &str)] = &[
    ("generic", "Generic OpenID Connect"),
    ("GitHubEnterprise", "GitHub Enterprise"),
];

fn map_member(v: &mut Map<String, Value>, member: &str, pairs: &[(&str, &str)], to_wire: bool) {
    if let Some(Value::String(s)) = v.get_mut(member) {
        for (ours, theirs) in pairs {
            let (from, to) = if to_wire {
                (ours, theirs)
            } else {
                (theirs, ours)
            };
            if s == from {
                *s = (*to).to_string();
                return;
            }
        }
    }
}

/// A group's members as one MR declares them (`<group>/<m1>\n<m2>...`). The MR owns the
/// group's member list, as upstream does (its read reports every member of the group):
///
/// - read: every member of the group, while the group has at least one of the declared
///   members; a group without any of them (or no group) is a missing object. (Without that
///   rule a deleted MR would never be released: its group stays, with whatever members
///   others add later.)
/// - create and update: one PATCH adding the declared members the group lacks and removing
///   the members it has beyond them (dropped from the spec, or added by hand).
/// - delete: one PATCH removing the declared members; the group stays.
#[derive(Debug)]
pub struct GroupMembersRest;

/// The group members binding.
pub static GROUPMEMBERS: GroupMembersRest = GroupMembersRest;

const GROUP_ITEM: &str = "/api/v2/groups/{key}";
const GROUP_MEMBERS: &str = "/api/v2/groups/{key}/members";

/// The members a GroupMembers MR declares, the detail of its address (whose key is the
/// group); canonically `/<member>\n<member>...` after the group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredMembers(pub Vec<String>);

impl fmt::Display for DeclaredMembers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}", self.0.join("\n"))
    }
}

impl Detail for DeclaredMembers {}

/// The group and the declared members (none without a [`DeclaredMembers`]) of `address`.
fn group_and_members(address: &Address) -> (&str, Vec<&str>) {
    let members = address
        .detail::<DeclaredMembers>()
        .map(|m| m.0.iter().map(String::as_str).filter(|m| !m.is_empty()))
        .into_iter()
        .flatten()
        .collect();
    (address.key(), members)
}

/// (desired minus present, present minus desired): the one PATCH that makes the group's
/// member list the declared one.
fn member_changes<'a>(declared: &[&'a str], have: &'a [String]) -> (Vec<&'a str>, Vec<&'a str>) {
    let add = declared
        .iter()
        .copied()
        .filter(|m| !have.iter().any(|h| h == m))
        .collect();
    let remove = have
        .iter()
        .map(String::as_str)
        .filter(|h| !declared.contains(h))
        .collect();
    (add, remove)
}

impl GroupMembersRest {
    /// The members `group` has (JFrog's 404 when the group does not exist).
    async fn members(&self, client: &JfrogClient, group: &str) -> Result<Vec<String>, Error> {
        let g = request(
            client,
            A,
            Verb::Get,
            GROUP_ITEM,
            Idempotency::Idempotent,
            &[group],
        )
        .send_value()
        .await?;
        Ok(g["members"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect())
    }

    async fn patch(
        &self,
        client: &JfrogClient,
        group: &str,
        add: &[&str],
        remove: &[&str],
    ) -> Result<(), Error> {
        request(
            client,
            A,
            Verb::Patch,
            GROUP_MEMBERS,
            Idempotency::Idempotent,
            &[group],
        )
        .json(&json!({"add": add, "remove": remove}))
        .send_empty()
        .await
    }

    /// Make the group's member list the declared one (nothing sent when it already is).
    async fn set(&self, client: &JfrogClient, address: &Address) -> Result<(), Error> {
        let (group, declared) = group_and_members(address);
        let have = self.members(client, group).await?;
        let (add, remove) = member_changes(&declared, &have);
        if add.is_empty() && remove.is_empty() {
            return Ok(());
        }
        self.patch(client, group, &add, &remove).await
    }
}

#[async_trait]
impl Rest for GroupMembersRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (group, declared) = group_and_members(address);
        let have = self.members(cx.client, group).await?;
        if !have.iter().any(|h| declared.contains(&h.as_str())) {
            // None of this MR's members is in the group: its object does not exist.
            return Err(not_found(
                A,
                Verb::Get,
                GROUP_ITEM,
                format!("none of the declared members is in group {group}"),
            ));
        }
        Ok(json!({"members": have}))
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.set(cx.client, address).await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.set(cx.client, address).await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let (group, declared) = group_and_members(address);
        self.patch(cx.client, group, &[], &declared).await
    }
}

/// Permissions (v2): the Kind's named elements (`users`, `groups`, `targets`: lists of
/// objects with a `name`) are maps keyed by that name on the wire, converted by the Kind's
/// hooks ([`permission_to_jfrog`], [`permission_from_jfrog`]). An update replaces each
/// resource type present and deletes the types the spec no longer has.
#[derive(Debug)]
pub struct PermissionRest;

/// The permission binding, listed by `GET /api/v2/permissions`
/// (`{"permissions": [{"name", "uri"}]}`, names only: list, then read each).
pub static PERMISSION: Listed = Listed {
    rest: &PermissionRest,
    list: ListCall {
        service: A,
        path: "/api/v2/permissions",
        shape: ListShape::Pages(&PERMISSION_PAGES),
        key_member: "name",
    },
    reads_each: true,
    parents: &[],
    parent_list: None,
    parent_query: None,
};

/// "Get Permissions": `limit` ("between 1 and 99,999, non-inclusive": 99,998 is within
/// either reading) and `cursor`.
pub static PERMISSION_PAGES: Pages = Pages {
    member: "permissions",
    size: 99_998,
    next: Next::Cursor,
};

const RESOURCE_TYPES: &[&str] = &[
    "artifact",
    "build",
    "release_bundle",
    "destination",
    "pipeline_source",
];

/// `[{"name": n, rest...}]` -> `{n: rest}` (`value_of` picks what the map holds).
fn to_map(list: &Value, value_of: fn(Map<String, Value>) -> Value) -> Value {
    let mut out = Map::new();
    for e in list.as_array().into_iter().flatten() {
        if let Value::Object(mut m) = e.clone()
            && let Some(Value::String(name)) = m.remove("name")
        {
            out.insert(name, value_of(m));
        }
    }
    Value::Object(out)
}

/// `{n: v}` -> `[{"name": n, ...}]` (`entry_of` builds the rest of the element).
fn from_map(map: &Value, entry_of: fn(&Value) -> Map<String, Value>) -> Value {
    let mut out = Vec::new();
    for (name, v) in map.as_object().into_iter().flatten() {
        let mut e = entry_of(v);
        e.insert("name".into(), json!(name));
        out.push(Value::Object(e));
    }
    Value::Array(out)
}

fn resource_to_wire(r: &Value) -> Value {
    let perms = |m: Map<String, Value>| m.get("permissions").cloned().unwrap_or(json!([]));
    let patterns = |mut m: Map<String, Value>| {
        m.entry("exclude_patterns").or_insert(json!([]));
        Value::Object(m)
    };
    let actions = &r["actions"];
    json!({
        "actions": {
            "users": to_map(&actions["users"], perms),
            "groups": to_map(&actions["groups"], perms),
        },
        "targets": to_map(&r["targets"], patterns),
    })
}

fn resource_from_wire(r: &Value) -> Value {
    let perms = |v: &Value| {
        let mut m = Map::new();
        m.insert("permissions".into(), v.clone());
        m
    };
    let patterns = |v: &Value| {
        let mut m = v.as_object().cloned().unwrap_or_default();
        if m.get("exclude_patterns").is_some_and(Value::is_null) {
            m.insert("exclude_patterns".into(), json!([]));
        }
        m
    };
    json!({
        "actions": {
            "users": from_map(&r["actions"]["users"], perms),
            "groups": from_map(&r["actions"]["groups"], perms),
        },
        "targets": from_map(&r["targets"], patterns),
    })
}

const PERMISSIONS: &str = "/api/v2/permissions";
const PERMISSION_ITEM: &str = "/api/v2/permissions/{key}";
const PERMISSION_RESOURCE: &str = "/api/v2/permissions/{key}/{type}";

/// A permission's body with each resource type's users, groups and targets as the maps
/// JFrog takes; a type the spec leaves null is left out.
pub fn permission_to_jfrog(body: &mut Map<String, Value>) {
    if let Some(Value::Object(res)) = body.get_mut("resources") {
        res.retain(|_, r| !r.is_null());
        for r in res.values_mut() {
            *r = resource_to_wire(r);
        }
    }
}

/// A permission as JFrog answers it with each resource's maps as named lists.
pub fn permission_from_jfrog(v: &Value) -> Option<Value> {
    let mut v = v.clone();
    let Value::Object(res) = v.get_mut("resources")? else {
        return None;
    };
    for r in res.values_mut() {
        *r = resource_from_wire(r);
    }
    Some(v)
}

/// The resources of an encoded permission body, by type.
fn resources(body: &Map<String, Value>) -> Map<String, Value> {
    match body.get("resources") {
        Some(Value::Object(res)) => res.clone(),
        _ => Map::new(),
    }
}

#[async_trait]
impl Rest for PermissionRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        request(
            cx.client,
            A,
            Verb::Get,
            PERMISSION_ITEM,
            Idempotency::Idempotent,
            &[address.key()],
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
        let b = json!({"name": address.key(), "resources": resources(body)});
        request(
            cx.client,
            A,
            Verb::Post,
            PERMISSIONS,
            Idempotency::NonIdempotent,
            &[],
        )
        .json(&b)
        .send_empty()
        .await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let wanted = resources(body);
        for t in RESOURCE_TYPES {
            let r = match wanted.get(*t) {
                Some(r) => {
                    request(
                        cx.client,
                        A,
                        Verb::Put,
                        PERMISSION_RESOURCE,
                        Idempotency::Idempotent,
                        &[address.key(), t],
                    )
                    .json(r)
                    .send_empty()
                    .await
                }
                None => {
                    request(
                        cx.client,
                        A,
                        Verb::Delete,
                        PERMISSION_RESOURCE,
                        Idempotency::Idempotent,
                        &[address.key(), t],
                    )
                    .send_empty()
                    .await
                }
            };
            match r {
                Ok(()) => {}
                Err(e) if e.is_not_found() && !wanted.contains_key(*t) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        request(
            cx.client,
            A,
            Verb::Delete,
            PERMISSION_ITEM,
            Idempotency::Idempotent,
            &[address.key()],
        )
        .send_empty()
        .await
    }
}

/// OIDC identity mappings (addressed by name inside their provider, with their
/// [`MappingProject`]): the project as a query parameter on every call. The claims, JSON
/// text on our side and an object on the wire, are converted by the Kind's hooks
/// ([`mapping_to_jfrog`], [`mapping_from_jfrog`]).
#[derive(Debug)]
pub struct IdentityMappingRest;

/// The identity mapping binding, observed through its OIDC configuration's list
/// (`GET /api/v1/oidc/{provider}/identity_mappings`: an array of full mappings, the claims
/// an object, turned into text by the family's `decode` hook for list entries and reads
/// alike): one list per configuration and poll. The list without `project_key` shows the
/// platform's mappings only, so a project's mapping is read by key.
pub static OIDCIDENTITYMAPPING: Listed = Listed::per_parent(
    &IdentityMappingRest,
    ListCall {
        service: A,
        path: MAPPINGS,
        shape: ListShape::Array,
        key_member: "name",
    },
    &["providerName"],
    &OIDC_LIST,
);

const MAPPINGS: &str = "/api/v1/oidc/{provider}/identity_mappings";
const MAPPING: &str = "/api/v1/oidc/{provider}/identity_mappings/{name}";

/// Claims as compact JSON text with sorted keys, so equal claims compare equal.
pub fn claims_text(v: &Value) -> String {
    v.to_string()
}

/// The project an identity mapping is in (empty: the platform's), the detail of its address
/// (whose parent is the OIDC configuration and key the mapping's name); canonically
/// `/<project>` after the name, written when empty too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MappingProject(pub String);

impl fmt::Display for MappingProject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}", self.0)
    }
}

impl Detail for MappingProject {}

/// The provider, name and project (empty without a [`MappingProject`]) of a mapping's
/// address.
fn mapping_parts(address: &Address) -> (&str, &str, &str) {
    let project = address
        .detail::<MappingProject>()
        .map_or("", |p| p.0.as_str());
    (address.parent(), address.key(), project)
}

fn with_project<'a>(r: jfrog_client::Request<'a>, project: &str) -> jfrog_client::Request<'a> {
    if project.is_empty() {
        r
    } else {
        r.query("project_key", project)
    }
}

/// An identity mapping's body with its claims as the JSON object JFrog takes (the Kind's
/// `check_params` has refused claims that are not one before any write).
pub fn mapping_to_jfrog(body: &mut Map<String, Value>) {
    if let Some(Value::String(text)) = body.get("claims")
        && let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(text)
    {
        body.insert("claims".into(), parsed);
    }
}

#[async_trait]
impl Rest for IdentityMappingRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (provider, name, project) = mapping_parts(address);
        let r = request(
            cx.client,
            A,
            Verb::Get,
            MAPPING,
            Idempotency::Idempotent,
            &[provider, name],
        );
        with_project(r, project).send_value().await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let (provider, _, project) = mapping_parts(address);
        let r = request(
            cx.client,
            A,
            Verb::Post,
            MAPPINGS,
            Idempotency::NonIdempotent,
            &[provider],
        );
        with_project(r, project).json(body).send_empty().await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let (provider, name, project) = mapping_parts(address);
        let r = request(
            cx.client,
            A,
            Verb::Put,
            MAPPING,
            Idempotency::Idempotent,
            &[provider, name],
        );
        with_project(r, project).json(body).send_empty().await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let (provider, name, project) = mapping_parts(address);
        let r = request(
            cx.client,
            A,
            Verb::Delete,
            MAPPING,
            Idempotency::Idempotent,
            &[provider, name],
        );
        with_project(r, project).send_empty().await
    }
    /// The platform's mappings only (`<provider>/<name>`): the list shows no project's.
    fn list_key(&self, address: &Address) -> Option<String> {
        match mapping_parts(address) {
            (provider, name, "") => Some(format!("{provider}/{name}")),
            _ => None,
        }
    }
}

/// An identity mapping as JFrog answers it (read or list entry) with its claims as text.
pub fn mapping_from_jfrog(body: &Value) -> Option<Value> {
    let c = body.get("claims").filter(|c| c.is_object())?;
    let mut v = body.clone();
    v["claims"] = json!(claims_text(c));
    Some(v)
}

/// The lifecycle of the platform (`_`) or of a project (its key): read by GET, written by
/// PATCH, only forgotten on delete (the Access API cannot delete one).
#[derive(Debug)]
pub struct LifecycleRest;

/// The lifecycle binding: read by key (one request per MR and poll, as a list would
/// cost), listed for `export` only: `GET /api/v2/lifecycle` answers the platform's, with
/// `project_key` a project's (one object each, listed under [`GLOBAL`] or the project key).
pub static LIFECYCLE: Listed = Listed {
    rest: &LifecycleRest,
    list: ListCall {
        service: A,
        path: LIFECYCLE_PATH,
        shape: ListShape::One,
        key_member: GLOBAL,
    },
    reads_each: false,
    parents: &["projectKey"],
    parent_list: Some(&PROJECTS),
    parent_query: Some(QueryParent {
        name: "project_key",
        with: &[],
    }),
};

/// The promote stages of a lifecycle as JFrog answers it: `promote_stages` when it has
/// them, else the names of its `promote` category's stages (the system stage PROD among
/// them).
pub fn promote_stages(v: &Value) -> Vec<Value> {
    if let Some(Value::Array(a)) = v.get("promote_stages") {
        return a.clone();
    }
    v["categories"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["category"] == "promote")
        .flat_map(|c| c["stages"].as_array().cloned().unwrap_or_default())
        .map(|s| s["name"].clone())
        .collect()
}

/// A lifecycle as JFrog answers it (read or list entry) with its `promote_stages`, which
/// some versions leave out (`None`: it has them).
pub fn lifecycle_from_jfrog(v: &Value) -> Option<Value> {
    if !v.get("promote_stages").is_none_or(Value::is_null) {
        return None;
    }
    let mut v = v.clone();
    v["promote_stages"] = Value::Array(promote_stages(&v));
    Some(v)
}

/// The address of the global lifecycle (no project key starts with `_`).
pub const GLOBAL: &str = "_";

const LIFECYCLE_PATH: &str = "/api/v2/lifecycle";

/// The project of a lifecycle's address: none for the platform's ([`GLOBAL`]).
fn project_of(address: &Address) -> &str {
    match address.key() {
        GLOBAL => "",
        project => project,
    }
}

#[async_trait]
impl Rest for LifecycleRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let r = request(
            cx.client,
            A,
            Verb::Get,
            LIFECYCLE_PATH,
            Idempotency::Idempotent,
            &[],
        );
        let project = project_of(address);
        let mut v = with_project(r, project).send_value().await?;
        // The answer is the project's (asked with its key), which it does not repeat.
        if !project.is_empty() && v.get("project_key").is_none() {
            v["project_key"] = json!(project);
        }
        Ok(v)
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.update(cx, address, body).await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let r = request(
            cx.client,
            A,
            Verb::Patch,
            LIFECYCLE_PATH,
            Idempotency::Idempotent,
            &[],
        );
        with_project(r, project_of(address))
            .json(body)
            .send_empty()
            .await
    }
    /// The Access API cannot delete a lifecycle: deleting the MR empties its promote stages
    /// instead, which releases the stages it named (JFrog refuses to delete a stage a
    /// lifecycle still uses, so a LifecycleStage deleted with its Lifecycle would otherwise
    /// stay forever). The object itself stays: once emptied, the singleton is gone for the
    /// MR.
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let mut body = Map::new();
        body.insert("promote_stages".to_owned(), Value::Array(Vec::new()));
        match self.update(cx, address, &body).await {
            // The project is gone, and its lifecycle with it.
            Err(e) if e.is_not_found() => Ok(()),
            other => other,
        }
    }
    /// Read by key: the list is one object per scope, no cheaper than the read.
    fn list_key(&self, _address: &Address) -> Option<String> {
        None
    }
    /// A project's lifecycle is the project's singleton.
    fn listed_address(&self, parents: &[&str], _key: &str) -> Option<String> {
        parents.first().map(|p| p.to_string())
    }
}

/// Lifecycle stages (addressed by name with their [`StageScope`]): created by POST (the
/// project in the body), read, patched and deleted with the project as a query parameter;
/// with `detachOnDestroy` the delete leaves the stage in JFrog.
#[derive(Debug)]
pub struct StageRest;

/// The stage binding, observed by list: `GET /api/v2/stages` (an array of full stages)
/// shows the platform's stages only; with `project_key` it shows the project's and the
/// platform's, so a project's list also asks `scope=project` (its own only). One list per
/// poll for every global stage, and one per project for its stages; the scope is turned to
/// upper case by the family's `decode` hook ([`stage_from_jfrog`]), as for reads.
pub static LIFECYCLESTAGE: Listed = Listed {
    rest: &StageRest,
    list: ListCall {
        service: A,
        path: STAGES,
        shape: ListShape::Array,
        key_member: "name",
    },
    reads_each: false,
    parents: &["projectKey"],
    parent_list: Some(&PROJECTS),
    parent_query: Some(QueryParent {
        name: "project_key",
        with: &[("scope", "project")],
    }),
};

/// The projects (the parents of project stages, listed by `export`).
static PROJECTS: ListCall = ListCall {
    service: A,
    path: "/api/v1/projects",
    shape: ListShape::Array,
    key_member: "project_key",
};

/// A stage's project (empty: a platform stage) and `detachOnDestroy` switch, the detail of
/// its address (whose key is the stage's name); canonically `/<project>/<detach>` after the
/// name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageScope {
    /// The project key; empty for a platform stage.
    pub project: String,
    /// Whether deleting the MR leaves the stage in JFrog.
    pub detach: bool,
}

impl fmt::Display for StageScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}/{}", self.project, self.detach)
    }
}

impl Detail for StageScope {}

/// The name and scope (the platform's, not detached, without a [`StageScope`]) of a
/// stage's address.
fn stage_parts(address: &Address) -> (&str, &str, bool) {
    let scope = address.detail::<StageScope>();
    (
        address.key(),
        scope.map_or("", |s| s.project.as_str()),
        scope.is_some_and(|s| s.detach),
    )
}

const STAGES: &str = "/api/v2/stages";
const STAGE: &str = "/api/v2/stages/{name}";

/// A stage as JFrog answers it (read or list entry) with its scope in upper case (the list
/// spells it `global`/`project`, as some reads do).
pub fn stage_from_jfrog(v: &Value) -> Option<Value> {
    let scope = v.get("scope")?.as_str()?;
    let upper = scope.to_uppercase();
    (upper != scope).then(|| {
        let mut v = v.clone();
        v["scope"] = json!(upper);
        v
    })
}

#[async_trait]
impl Rest for StageRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (name, project, _) = stage_parts(address);
        let r = request(
            cx.client,
            A,
            Verb::Get,
            STAGE,
            Idempotency::Idempotent,
            &[name],
        );
        with_project(r, project).send_value().await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        _address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        request(
            cx.client,
            A,
            Verb::Post,
            STAGES,
            Idempotency::NonIdempotent,
            &[],
        )
        .json(body)
        .send_empty()
        .await?;
        Ok(Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let (name, project, _) = stage_parts(address);
        let mut b = body.clone();
        // Only the category can change (name and project are immutable).
        b.retain(|k, _| k == "category");
        let r = request(
            cx.client,
            A,
            Verb::Patch,
            STAGE,
            Idempotency::Idempotent,
            &[name],
        );
        with_project(r, project).json(&b).send_empty().await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let (name, project, detach) = stage_parts(address);
        if detach {
            return Ok(());
        }
        let r = request(
            cx.client,
            A,
            Verb::Delete,
            STAGE,
            Idempotency::Idempotent,
            &[name],
        );
        with_project(r, project).send_empty().await
    }
    /// `<name>` for a platform stage, `<project>/<name>` for a project's: as the lists key
    /// them (without the detach switch).
    fn list_key(&self, address: &Address) -> Option<String> {
        match stage_parts(address) {
            (name, "", _) => Some(name.to_string()),
            (name, project, _) => Some(format!("{project}/{name}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_elements_become_maps_and_back() {
        let ours = json!({
            "actions": {"users": [{"name": "alice", "permissions": ["READ"]}], "groups": []},
            "targets": [{"name": "libs-local", "include_patterns": ["**"], "exclude_patterns": []}],
        });
        let wire = resource_to_wire(&ours);
        assert_eq!(wire["actions"]["users"], json!({"alice": ["READ"]}));
        assert_eq!(
            wire["targets"],
            json!({"libs-local": {"include_patterns": ["**"], "exclude_patterns": []}})
        );
        assert_eq!(resource_from_wire(&wire), ours);
    }

    #[test]
    fn provider_types_are_spelled_as_jfrog_spells_them() {
        let mut m: Map<String, Value> =
            serde_json::from_value(json!({"provider_type": "generic"})).expect("map");
        map_member(&mut m, "provider_type", PROVIDER_TYPES, true);
        assert_eq!(m["provider_type"], "Generic OpenID Connect");
        map_member(&mut m, "provider_type", PROVIDER_TYPES, false);
        assert_eq!(m["provider_type"], "generic");
    }

    #[test]
    fn listed_and_read_oidc_configurations_decode_alike() {
        let wire = json!({"name": "ci", "provider_type": "Generic OpenID Connect"});
        assert_eq!(
            oidc_from_jfrog(&wire).expect("converted")["provider_type"],
            "generic"
        );
        assert_eq!(oidc_from_jfrog(&json!({"provider_type": "GitHub"})), None);
    }

    #[test]
    fn stages_are_keyed_as_their_scope_lists_them() {
        let stage = |name: &str, project: &str, detach| {
            Address::new(name).with_detail(StageScope {
                project: project.into(),
                detach,
            })
        };
        let global = stage("qa", "", true);
        assert_eq!(global.to_string(), "qa//true");
        assert_eq!(StageRest.list_key(&global).as_deref(), Some("qa"));
        let project = stage("team-qa", "team", false);
        assert_eq!(project.to_string(), "team-qa/team/false");
        assert_eq!(
            StageRest.list_key(&project).as_deref(),
            Some("team/team-qa")
        );
        assert_eq!(stage_parts(&project), ("team-qa", "team", false));
        // Without its scope: the platform's, deleted with its MR.
        assert_eq!(stage_parts(&Address::new("qa")), ("qa", "", false));
        let listed = json!({"name": "qa", "scope": "global"});
        assert_eq!(stage_from_jfrog(&listed).expect("upper")["scope"], "GLOBAL");
        assert_eq!(stage_from_jfrog(&json!({"scope": "PROJECT"})), None);
    }

    #[test]
    fn group_members_address_carries_the_declared_members() {
        let members = DeclaredMembers(vec!["alice".into(), "bob".into()]);
        let address = Address::new("devs").with_detail(members);
        assert_eq!(address.to_string(), "devs/alice\nbob");
        let (g, m) = group_and_members(&address);
        assert_eq!(g, "devs");
        assert_eq!(m, ["alice", "bob"]);
        let none = Address::new("devs").with_detail(DeclaredMembers::default());
        assert_eq!(none.to_string(), "devs/");
        assert_eq!(group_and_members(&none), ("devs", vec![]));
    }

    #[test]
    fn a_mapping_is_listed_by_provider_and_name_when_it_is_the_platforms() {
        let mapping = |project: &str| {
            Address::new("ci")
                .with_parent("github")
                .with_detail(MappingProject(project.into()))
        };
        assert_eq!(mapping("team").to_string(), "github/ci/team");
        assert_eq!(mapping_parts(&mapping("team")), ("github", "ci", "team"));
        assert_eq!(IdentityMappingRest.list_key(&mapping("team")), None);
        assert_eq!(mapping("").to_string(), "github/ci/");
        assert_eq!(
            IdentityMappingRest.list_key(&mapping("")).as_deref(),
            Some("github/ci")
        );
    }

    #[test]
    fn one_patch_adds_the_missing_members_and_removes_the_others() {
        let have = ["bob".to_string(), "alice".to_string()];
        let (add, remove) = member_changes(&["alice", "carol"], &have);
        assert_eq!(add, ["carol"]);
        assert_eq!(remove, ["bob"]);
        let (add, remove) = member_changes(&["alice", "bob"], &have);
        assert!(add.is_empty() && remove.is_empty());
    }
}
