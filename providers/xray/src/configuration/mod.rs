//! The configuration group: Xray settings (a singleton over two APIs), the workers count
//! (a singleton), a repository's Xray configuration (keyed by the repository name, a spec
//! field), catalog labels (each MR owns the labels and assignments it names, over the
//! Catalog service's GraphQL API; see [`CatalogLabelsRest`]) and the
//! binary manager's indexing configuration for builds, repositories and release bundles v2
//! (keyed by the binary manager ID; in a project with `?projectKey=` on every call, as
//! upstream sends it).
//!
//! None of these can be deleted in JFrog (except catalog labels): deleting the MR forgets
//! the object ([`common::Forget`]).

pub mod hooks;
#[rustfmt::skip]
pub mod tables;

use async_trait::async_trait;
use jfrog_client::{Error, Idempotency, JfrogClient, Method, Service};
use provider_family::{
    Address, Ask, Call, Cx, Detail, FamilyHooks, Hooks, ListCall, Paths, ReadMany, Rest, Verb,
};
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::common::{self, Forget};

/// The REST bindings, one per Kind.
pub mod rest {
    use super::*;

    /// A binding whose create and update are the same `PUT` and whose delete forgets.
    const fn put_forget(path: &'static str, read: &'static str) -> Forget {
        Forget(Paths {
            service: Service::Xray,
            create: Call::new(Verb::Put, path),
            read: Call::new(Verb::Get, read),
            update: Call::new(Verb::Put, path),
            delete: Call::new(Verb::Get, read),
            list: None,
            case_insensitive: false,
        })
    }

    /// Settings: Artifactory's Xray integration settings and Xray's DB sync time.
    pub static SETTINGS: SettingsRest = SettingsRest;
    /// The workers count.
    pub static WORKERS_COUNT: Forget = put_forget(
        "/api/v1/configuration/workersCount",
        "/api/v1/configuration/workersCount",
    );
    /// A repository's Xray configuration.
    pub static REPOSITORY_CONFIG: Forget =
        put_forget("/api/v1/repos_config", "/api/v1/repos_config/{key}");
    /// Catalog labels.
    pub static CATALOG_LABELS: CatalogLabelsRest = CatalogLabelsRest;
    /// Indexed builds.
    pub static BINARY_MANAGER_BUILDS: Forget =
        put_forget("/api/v1/binMgr/{key}/builds", "/api/v1/binMgr/{key}/builds");
    /// Indexed repositories.
    pub static BINARY_MANAGER_REPOS: Forget =
        put_forget("/api/v1/binMgr/{key}/repos", "/api/v1/binMgr/{key}/repos");
    /// Indexed release bundles v2.
    pub static BINARY_MANAGER_RELEASE_BUNDLES_V2: Forget = put_forget(
        "/api/v1/binMgr/{key}/release_bundle_v2",
        "/api/v1/binMgr/{key}/release_bundle_v2",
    );
}

/// The DB sync time member (Xray); every other member goes to Artifactory.
const DB_SYNC: &str = "db_sync_updates_time";

/// Settings over two services: Artifactory's Xray integration settings
/// (`/api/xrayRepo/...`) and Xray's DB sync time (`/api/v1/configuration/dbsync/time`).
#[derive(Debug)]
pub struct SettingsRest;

impl SettingsRest {
    async fn write(&self, client: &JfrogClient, body: &Map<String, Value>) -> Result<(), Error> {
        let mut basic = body.clone();
        let sync = basic.remove(DB_SYNC);
        client
            .request(
                Service::Artifactory,
                Method::POST,
                "/api/xrayRepo/updateXrayBasicSettings",
                Idempotency::Idempotent,
            )
            .json(&basic)
            .send_empty()
            .await?;
        if let Some(sync) = sync {
            client
                .request(
                    Service::Xray,
                    Method::PUT,
                    "/api/v1/configuration/dbsync/time",
                    Idempotency::Idempotent,
                )
                .json(&json!({ DB_SYNC: sync }))
                .send_empty()
                .await?;
        }
        Ok(())
    }
}

/// The basic settings' names in `getIntegrationConfig`'s answer, and in the write (the
/// Xray Terraform provider v3.1.9's BasicSettingsResponseAPIModel).
const BASIC_READ_NAMES: [(&str, &str); 2] = [
    ("xrayAllowBlocked", "allowBlockedArtifactsDownload"),
    ("xrayAllowWhenUnavailable", "allowDownloadsXrayUnavailable"),
];

/// The settings as [`SettingsRest`] reads them, under the write's names, which the fields
/// declare (`None`: they have them).
pub fn settings_from_jfrog(v: &Value) -> Option<Value> {
    let b = v.as_object()?;
    if !BASIC_READ_NAMES
        .iter()
        .any(|(read, _)| b.contains_key(*read))
    {
        return None;
    }
    let mut b = b.clone();
    for (read, write) in BASIC_READ_NAMES {
        if let Some(v) = b.remove(read) {
            b.insert(write.into(), v);
        }
    }
    Some(Value::Object(b))
}

#[async_trait]
impl Rest for SettingsRest {
    async fn read(&self, cx: &Cx<'_>, _address: &Address) -> Result<Value, Error> {
        let mut basic = cx
            .client
            .request(
                Service::Artifactory,
                Method::GET,
                "/api/xrayRepo/getIntegrationConfig",
                Idempotency::Idempotent,
            )
            .send_value()
            .await?;
        let sync = cx
            .client
            .request(
                Service::Xray,
                Method::GET,
                "/api/v1/configuration/dbsync/time",
                Idempotency::Idempotent,
            )
            .send_value()
            .await?;
        if let Value::Object(b) = &mut basic
            && let Some(s) = sync.get(DB_SYNC)
        {
            b.insert(DB_SYNC.into(), s.clone());
        }
        Ok(basic)
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        _address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.write(cx.client, body).await.map(|()| Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        _address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.write(cx.client, body).await
    }
    async fn delete(&self, _cx: &Cx<'_>, _address: &Address) -> Result<(), Error> {
        Ok(())
    }
    fn list(&self) -> Option<&ListCall> {
        None
    }
    fn forgets_on_delete(&self) -> bool {
        true
    }
}

/// The GraphQL path of the Catalog service.
const GRAPHQL: &str = "/api/v1/custom/graphql";

/// The Catalog's limit of one operation (labels created or deleted, versions assigned).
const MAX_PER_OPERATION: usize = 500;

/// The GraphQL query reading the labels and assignments of many CatalogLabels MRs at once.
static CATALOG_SEARCH: ReadMany = ReadMany {
    service: Service::Catalog,
    path: GRAPHQL,
    size: 50,
};

/// What one CatalogLabels MR reaches in the Catalog: the labels it names or had (by name),
/// the package assignments `(label, package name, package type)` and the version
/// assignments `(label, package name, package type, version)` it names or had. The
/// binding's address carries this (its detail, with no key; canonically the JSON of it):
/// built by [`ConfigurationHooks`] from the spec and the last observation, so that what the
/// spec dropped is still reached (and removed) while nothing another MR or a person made is.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reach {
    labels: BTreeSet<String>,
    packages: BTreeSet<(String, String, String)>,
    versions: BTreeSet<(String, String, String, String)>,
}

/// The JSON of the reach: the canonical form of a CatalogLabels address, which keys the
/// snapshot of its reads many at a time ([`Rest::read_many`] parses it back).
impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| std::fmt::Error)?)
    }
}

impl Detail for Reach {}

/// A label's description by name, as the Catalog answers it.
type Labels = BTreeMap<String, String>;

/// What the Catalog has of a [`Reach`].
#[derive(Debug, Default, Clone, PartialEq)]
struct Found {
    labels: Labels,
    packages: BTreeSet<(String, String, String)>,
    versions: BTreeSet<(String, String, String, String)>,
}

impl Found {
    /// What of this is within `reach`.
    fn within(&self, reach: &Reach) -> Found {
        Found {
            labels: self
                .labels
                .iter()
                .filter(|(n, _)| reach.labels.contains(*n))
                .map(|(n, d)| (n.clone(), d.clone()))
                .collect(),
            packages: self
                .packages
                .intersection(&reach.packages)
                .cloned()
                .collect(),
            versions: self
                .versions
                .intersection(&reach.versions)
                .cloned()
                .collect(),
        }
    }
}

fn text(v: &Value, member: &str) -> String {
    v.get(member)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn each<'a>(v: &'a Value, member: &str) -> impl Iterator<Item = &'a Value> {
    v.get(member)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

impl Reach {
    /// Add what `v` (a `forProvider`, or an `atProvider`: the same member names) names.
    fn add(&mut self, v: &Value) {
        for l in each(v, "labels") {
            self.labels.insert(text(l, "name"));
        }
        for a in each(v, "packageAssignments") {
            self.packages.insert((
                text(a, "labelName"),
                text(a, "packageName"),
                text(a, "packageType"),
            ));
        }
        for a in each(v, "versionAssignments") {
            for version in each(a, "versions").filter_map(Value::as_str) {
                self.versions.insert((
                    text(a, "labelName"),
                    text(a, "packageName"),
                    text(a, "packageType"),
                    version.to_string(),
                ));
            }
        }
        self.labels.remove("");
    }

    /// What the spec `v` names.
    fn of(v: &Value) -> Reach {
        let mut r = Reach::default();
        r.add(v);
        r
    }

    fn labels_of(v: &Value) -> Labels {
        each(v, "labels")
            .map(|l| (text(l, "name"), text(l, "description")))
            .filter(|(n, _)| !n.is_empty())
            .collect()
    }

    fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.packages.is_empty() && self.versions.is_empty()
    }
}

/// A JSON value written as a GraphQL literal (object keys bare): strings are JSON-escaped,
/// which is valid GraphQL, so no label text can break the document.
fn literal(v: &Value) -> String {
    match v {
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}: {}", literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Array(a) => format!("[{}]", a.iter().map(literal).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn package(name: &str, kind: &str) -> Value {
    json!({"name": name, "type": kind})
}

/// Catalog labels over the Catalog service's GraphQL API, the way upstream's
/// `xray_catalog_labels` manages them: each MR owns the labels and assignments it names.
/// One read asks, in one document, `getLabel` for each reached label and the labels
/// connection of each reached package (`publicPackage.getPackage`) and version
/// (`publicPackageVersion.getVersion`). A write creates the missing labels (one, or several
/// at once; an existing label is adopted, not created twice), updates changed descriptions,
/// removes the reached assignments the spec no longer names, makes the missing ones (one
/// package at a time; one version, or up to 500 versions of one label at once), and deletes
/// the reached labels the spec no longer names; delete removes everything reached.
///
/// Assignments are read back, not kept from the last write as upstream keeps them (upstream
/// does so because the Catalog indexes assignments eventually, so a read right after a write
/// may miss one): here every write first reads what the Catalog has and sends only the
/// mutations still needed, so a late index costs at most a poll that finds the assignment
/// made, and an assignment removed in JFrog is made again (drift is reverted, which
/// upstream's kept state cannot see).
#[derive(Debug)]
pub struct CatalogLabelsRest;

impl CatalogLabelsRest {
    /// The request context of the GraphQL call, for errors made from its answer.
    fn context() -> jfrog_client::RequestContext {
        jfrog_client::RequestContext {
            service: Service::Catalog,
            method: Method::POST,
            route: format!("/catalog{GRAPHQL}"),
        }
    }

    async fn graphql(client: &JfrogClient, query: &str) -> Result<Value, Error> {
        let request = client.request(
            Service::Catalog,
            Method::POST,
            GRAPHQL,
            Idempotency::Idempotent,
        );
        // A query only reads (a read-only client sends it); a mutation writes.
        let request = if query.trim_start().starts_with("mutation") {
            request
        } else {
            request.reads_only()
        };
        let answer = request
            .json(&json!({ "query": query }))
            .send_value()
            .await?;
        if let Some(errors) = answer.get("errors").and_then(Value::as_array)
            && let Some(first) = errors.first()
        {
            let message = first
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("GraphQL error")
                .to_string();
            return Err(Error::BadRequest {
                ctx: Self::context(),
                status: 400,
                message,
            });
        }
        Ok(answer)
    }

    /// One mutation of `customCatalogLabel`.
    async fn mutate(client: &JfrogClient, field: &str, args: &str) -> Result<Value, Error> {
        Self::graphql(
            client,
            &format!("mutation {{ customCatalogLabel {{ {field}({args}) }} }}"),
        )
        .await
    }

    /// One mutation of `customCatalogLabel` answering a label (or labels).
    async fn mutate_labels(client: &JfrogClient, field: &str, args: &str) -> Result<(), Error> {
        Self::graphql(
            client,
            &format!(
                "mutation {{ customCatalogLabel {{ {field}({args}) {{ name description }} }} }}"
            ),
        )
        .await
        .map(drop)
    }

    /// What the Catalog has of `reach`, in one query.
    async fn find(client: &JfrogClient, reach: &Reach) -> Result<Found, Error> {
        if reach.is_empty() {
            return Ok(Found::default());
        }
        let labels: Vec<&String> = reach.labels.iter().collect();
        let packages: Vec<(&String, &String)> = reach
            .packages
            .iter()
            .map(|(_, n, t)| (n, t))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let versions: Vec<(&String, &String, &String)> = reach
            .versions
            .iter()
            .map(|(_, n, t, v)| (n, t, v))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let connection = "customCatalogLabelsConnection(first: 100) { edges { node { name } } }";
        let mut query = String::from("query {");
        if !labels.is_empty() {
            query.push_str(" customCatalogLabel {");
            for (i, n) in labels.iter().enumerate() {
                query.push_str(&format!(
                    " l{i}: getLabel(name: {}) {{ name description }}",
                    json!(n)
                ));
            }
            query.push_str(" }");
        }
        if !packages.is_empty() {
            query.push_str(" publicPackage {");
            for (i, (n, t)) in packages.iter().enumerate() {
                query.push_str(&format!(
                    " p{i}: getPackage(name: {}, type: {}) {{ name type {connection} }}",
                    json!(n),
                    json!(t)
                ));
            }
            query.push_str(" }");
        }
        if !versions.is_empty() {
            query.push_str(" publicPackageVersion {");
            for (i, (n, t, v)) in versions.iter().enumerate() {
                query.push_str(&format!(
                    " v{i}: getVersion(name: {}, type: {}, version: {}) {{ {connection} }}",
                    json!(n),
                    json!(t),
                    json!(v)
                ));
            }
            query.push_str(" }");
        }
        query.push_str(" }");
        let answer = Self::graphql(client, &query).await?;
        let data = answer.get("data").cloned().unwrap_or(Value::Null);
        let assigned = |v: Option<&Value>| -> BTreeSet<String> {
            v.and_then(|v| v.pointer("/customCatalogLabelsConnection/edges"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|e| e.pointer("/node/name").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        };
        let mut found = Found::default();
        for (i, n) in labels.iter().enumerate() {
            if let Some(l) = data.pointer(&format!("/customCatalogLabel/l{i}"))
                && text(l, "name") == **n
            {
                found.labels.insert(n.to_string(), text(l, "description"));
            }
        }
        for (i, (n, t)) in packages.iter().enumerate() {
            let has = assigned(data.pointer(&format!("/publicPackage/p{i}")));
            for (label, pn, pt) in &reach.packages {
                if pn == *n && pt == *t && has.contains(label) {
                    found
                        .packages
                        .insert((label.clone(), pn.clone(), pt.clone()));
                }
            }
        }
        for (i, (n, t, v)) in versions.iter().enumerate() {
            let has = assigned(data.pointer(&format!("/publicPackageVersion/v{i}")));
            for (label, pn, pt, pv) in &reach.versions {
                if pn == *n && pt == *t && pv == *v && has.contains(label) {
                    found
                        .versions
                        .insert((label.clone(), pn.clone(), pt.clone(), pv.clone()));
                }
            }
        }
        Ok(found)
    }

    /// Bring what `reach` covers to `want` (labels with descriptions, and the assignments
    /// `want_reach` names): nothing outside `reach` is touched.
    async fn apply(
        client: &JfrogClient,
        reach: &Reach,
        want: &Labels,
        want_reach: &Reach,
    ) -> Result<(), Error> {
        let have = Self::find(client, reach).await?;
        // Labels first: assignments need them.
        let new: Vec<Value> = want
            .iter()
            .filter(|(n, _)| !have.labels.contains_key(*n))
            .map(|(n, d)| json!({"name": n, "description": d}))
            .collect();
        match new.as_slice() {
            [] => {}
            [one] => {
                Self::mutate_labels(
                    client,
                    "createCustomCatalogLabel",
                    &format!("label: {}", literal(one)),
                )
                .await?
            }
            many => {
                for chunk in many.chunks(MAX_PER_OPERATION) {
                    Self::mutate_labels(
                        client,
                        "createCustomCatalogLabels",
                        &format!("labels: {}", literal(&Value::from(chunk.to_vec()))),
                    )
                    .await?;
                }
            }
        }
        for (n, d) in want {
            if have.labels.get(n).is_some_and(|h| h != d) {
                let label = json!({"name": n, "updatedName": n, "updatedDescription": d});
                Self::mutate_labels(
                    client,
                    "updateCustomCatalogLabel",
                    &format!("label: {}", literal(&label)),
                )
                .await?;
            }
        }
        // Assignments removed before new ones are made: a package or version carries one
        // label, so a changed label is first taken off.
        for (label, name, kind) in have.packages.difference(&want_reach.packages) {
            let args = json!({"labelNames": [label], "publicPackage": package(name, kind)});
            Self::mutate(
                client,
                "removeCustomCatalogLabelsFromPublicPackage",
                &format!("publicPackageLabels: {}", literal(&args)),
            )
            .await?;
        }
        let gone: Vec<_> = have.versions.difference(&want_reach.versions).collect();
        Self::versions(client, &gone, false).await?;
        for (label, name, kind) in want_reach.packages.difference(&have.packages) {
            let args = json!({"publicPackage": package(name, kind), "labelNames": [label]});
            Self::mutate(
                client,
                "assignCustomCatalogLabelsToPublicPackage",
                &format!("publicPackageLabels: {}", literal(&args)),
            )
            .await?;
        }
        let missing: Vec<_> = want_reach.versions.difference(&have.versions).collect();
        Self::versions(client, &missing, true).await?;
        // Labels last: the assignments that used them are gone.
        let drop: Vec<&String> = have
            .labels
            .keys()
            .filter(|n| !want.contains_key(*n))
            .collect();
        match drop.as_slice() {
            [] => {}
            [one] => {
                Self::mutate(
                    client,
                    "deleteCustomCatalogLabel",
                    &format!("label: {}", literal(&json!({"name": one}))),
                )
                .await?;
            }
            many => {
                for chunk in many.chunks(MAX_PER_OPERATION) {
                    let labels: Vec<Value> = chunk.iter().map(|n| json!({"name": n})).collect();
                    Self::mutate(
                        client,
                        "deleteCustomCatalogLabels",
                        &format!("labels: {}", literal(&Value::from(labels))),
                    )
                    .await?;
                }
            }
        }
        Ok(())
    }

    /// Assign (or remove) version labels: per label, one version with the single mutation,
    /// several (up to 500 at once) with the bulk one.
    async fn versions(
        client: &JfrogClient,
        versions: &[&(String, String, String, String)],
        assign: bool,
    ) -> Result<(), Error> {
        let mut by_label: BTreeMap<&String, Vec<Value>> = BTreeMap::new();
        for (label, name, kind, version) in versions {
            by_label
                .entry(label)
                .or_default()
                .push(json!({"publicPackage": package(name, kind), "version": version}));
        }
        for (label, pvs) in by_label {
            if let [one] = pvs.as_slice() {
                let args = json!({"publicPackageVersion": one, "labelNames": [label]});
                let field = if assign {
                    "assignCustomCatalogLabelsToPublicPackageVersion"
                } else {
                    "removeCustomCatalogLabelsFromPublicPackageVersion"
                };
                Self::mutate(
                    client,
                    field,
                    &format!("publicPackageVersionLabels: {}", literal(&args)),
                )
                .await?;
                continue;
            }
            for chunk in pvs.chunks(MAX_PER_OPERATION) {
                let args = json!({"publicPackageVersions": chunk, "labelName": label});
                let field = if assign {
                    "assignCustomCatalogLabelToPublicPackageVersions"
                } else {
                    "removeCustomCatalogLabelFromPublicPackageVersions"
                };
                Self::mutate(
                    client,
                    field,
                    &format!("publicPackageVersionsLabel: {}", literal(&args)),
                )
                .await?;
            }
        }
        Ok(())
    }

    /// What an MR observes of `found` (`None`: nothing of it exists).
    fn observed(found: &Found) -> Option<Value> {
        if *found == Found::default() {
            return None;
        }
        let labels: Vec<Value> = found
            .labels
            .iter()
            .map(|(name, description)| json!({"name": name, "description": description}))
            .collect();
        let packages: Vec<Value> = found
            .packages
            .iter()
            .map(|(l, n, t)| json!({"labelName": l, "packageName": n, "packageType": t}))
            .collect();
        let mut versions: BTreeMap<(&String, &String, &String), Vec<&String>> = BTreeMap::new();
        for (l, n, t, v) in &found.versions {
            versions.entry((l, n, t)).or_default().push(v);
        }
        let versions: Vec<Value> = versions
            .into_iter()
            .map(|((l, n, t), v)| {
                json!({"labelName": l, "packageName": n, "packageType": t, "versions": v})
            })
            .collect();
        Some(json!({
            "labels": labels,
            "packageAssignments": packages,
            "versionAssignments": versions,
        }))
    }

    /// The reach a snapshot key (an address's canonical form, see [`Reach`]) names.
    fn reach_of(key: &str) -> Result<Reach, Error> {
        serde_json::from_str(key).map_err(|e| Error::BadRequest {
            ctx: Self::context(),
            status: 400,
            message: format!("catalog labels address: {e}"),
        })
    }

    /// The reach of an address the family's hook built.
    fn reach_in(address: &Address) -> Result<&Reach, Error> {
        address.detail::<Reach>().ok_or_else(|| Error::BadRequest {
            ctx: Self::context(),
            status: 400,
            message: "catalog labels address: no reach".into(),
        })
    }
}

#[async_trait]
impl Rest for CatalogLabelsRest {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let reach = Self::reach_in(address)?;
        let found = Self::find(cx.client, reach).await?;
        Self::observed(&found).ok_or_else(|| Error::NotFound {
            ctx: Self::context(),
            message: "none of the labels and assignments exists".into(),
        })
    }

    fn read_many_call(&self) -> Option<&ReadMany> {
        Some(&CATALOG_SEARCH)
    }

    /// The labels and assignments of many MRs in one GraphQL query (what they reach, asked
    /// once for all), where a read asks one query per MR: each MR gets what the answer has
    /// of its own reach, as [`Rest::read`] answers it.
    async fn read_many(
        &self,
        cx: &Cx<'_>,
        asks: &[Ask<'_>],
    ) -> Result<Vec<(String, Option<Value>)>, Error> {
        let reaches: Vec<(&str, Reach)> = asks
            .iter()
            .filter_map(|a| Some((a.key, Self::reach_of(a.key).ok()?)))
            .collect();
        let mut all = Reach::default();
        for (_, r) in &reaches {
            all.labels.extend(r.labels.iter().cloned());
            all.packages.extend(r.packages.iter().cloned());
            all.versions.extend(r.versions.iter().cloned());
        }
        let found = Self::find(cx.client, &all).await?;
        Ok(reaches
            .into_iter()
            .map(|(k, r)| (k.to_string(), Self::observed(&found.within(&r))))
            .collect())
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.update(cx, address, body).await.map(|()| Value::Null)
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let body = Value::Object(body.clone());
        let reach = Self::reach_in(address)?;
        Self::apply(
            cx.client,
            reach,
            &Reach::labels_of(&body),
            &Reach::of(&body),
        )
        .await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let reach = Self::reach_in(address)?;
        Self::apply(cx.client, reach, &Labels::new(), &Reach::default()).await
    }
    fn list(&self) -> Option<&ListCall> {
        None
    }
}

/// The configuration group's hooks: those of every Kind without its own ([`hooks`]).
pub static HOOKS: ConfigurationHooks = ConfigurationHooks;

/// The configuration group's behaviour shared by every Kind: none beyond the generic
/// adapter (CatalogLabels has its own, [`hooks::CatalogLabels`]).
#[derive(Debug, Clone, Copy)]
pub struct ConfigurationHooks;

impl FamilyHooks for ConfigurationHooks {}

impl Hooks for ConfigurationHooks {}

common::group_fns!();

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Upstream's validators and the Catalog's limits (`catalog/validators/xray.json`) are
    /// refused at admission, each with a message naming the field; the example is accepted.
    #[test]
    fn catalog_labels_admission_names_the_field() {
        let crds = provider_family_suite::CrdSchemas::new("xray", &crate::kinds());
        let d = declarations()
            .iter()
            .find(|d| d.kind == "CatalogLabels")
            .expect("declared");
        let schema = crds.schema(d, false);
        let example = crate::examples::example(d, false);
        assert!(schema.validate(&example, None).is_empty());
        let label = |n: &str, d: &str| json!({"name": n, "description": d});
        let version = |vs: Value| json!([{"labelName": "ok", "packageName": "p", "packageType": "npm", "versions": vs}]);
        let many: Vec<Value> = (0..501).map(|i| label(&format!("l{i}"), "x")).collect();
        let cases = [
            ("labels", json!([]), "at least 1 items"),
            ("labels", json!([label("a", "x")]), "at least 2 chars"),
            (
                "labels",
                json!([label("sixteen-chars-xx", "x")]),
                "more than 15 bytes",
            ),
            ("labels", json!([label("ok", "")]), "at least 1 chars"),
            (
                "labels",
                json!([label("ok", &"d".repeat(301))]),
                "more than 300 bytes",
            ),
            (
                "labels",
                json!([label("ok", "x"), label("ok", "y")]),
                "may appear only once",
            ),
            ("labels", Value::from(many), "at most 500 items"),
            ("versionAssignments", version(json!([])), "at least 1 items"),
            (
                "versionAssignments",
                version(json!([""])),
                "at least 1 chars",
            ),
        ];
        for (field, value, rule) in cases {
            let mut m = example.clone();
            m["spec"]["forProvider"][field] = value;
            let errs = format!("{:?}", schema.validate(&m, None));
            assert!(
                errs.contains(field) && errs.contains(rule),
                "{field} {rule}: {errs}"
            );
        }
        // One label per package compares every assignment with every other over package
        // names without a length bound: more than kube-apiserver's CEL budget affords, so the
        // provider checks it before any write instead.
        let kinds = crate::family_kinds();
        let kind = kinds
            .iter()
            .find(|k| k.resolved().decl.kind == "CatalogLabels")
            .expect("declared");
        let mut m = example.clone();
        m["spec"]["forProvider"]["packageAssignments"] = json!([
            {"labelName": "a1", "packageName": "p", "packageType": "npm"},
            {"labelName": "a2", "packageName": "p", "packageType": "npm"}
        ]);
        assert!(schema.validate(&m, None).is_empty());
        let refused = kind
            .check_before_write(&m["spec"]["forProvider"])
            .expect_err("refused before the write");
        assert!(
            refused.starts_with("spec.forProvider: Invalid value")
                && refused.contains("packageAssignments: one label per package"),
            "{refused}"
        );
        kind.check_before_write(&example["spec"]["forProvider"])
            .expect("the example passes");
    }

    /// An MR that names nothing is refused before any request.
    #[test]
    fn catalog_labels_that_name_nothing_are_refused() {
        let kind = provider_family_suite::bound(declarations(), "CatalogLabels");
        let err = kind
            .hooks
            .check_params(&kind, &json!({}))
            .expect_err("refused");
        assert!(
            err.contains("labels, packageAssignments or versionAssignments"),
            "{err}"
        );
        assert!(
            kind.hooks
                .check_params(
                    &kind,
                    &json!({"labels": [{"name": "ok", "description": "x"}]})
                )
                .is_ok()
        );
    }

    /// The address reaches what the spec names and what the MR last observed, nothing else.
    #[test]
    fn the_reach_is_the_spec_and_the_last_observation() {
        let kind = provider_family_suite::bound(declarations(), "CatalogLabels");
        let spec = json!({
            "labels": [{"name": "a1", "description": "x"}],
            "versionAssignments": [{"labelName": "a1", "packageName": "p", "packageType": "npm", "versions": ["1", "2"]}]
        });
        let observed = json!({"labels": [{"name": "old", "description": "y"}],
            "packageAssignments": [{"labelName": "old", "packageName": "q", "packageType": "npm"}]});
        let address = kind.hooks.address_observed(&kind, "mr", &spec, &observed);
        let reach = address.detail::<Reach>().expect("a reach").clone();
        // Its canonical form is its JSON, which a snapshot's key parses back.
        assert_eq!(address.key(), "");
        assert_eq!(
            CatalogLabelsRest::reach_of(&address.to_string()).expect("json"),
            reach
        );
        assert_eq!(
            reach.labels,
            ["a1", "old"].map(String::from).into_iter().collect()
        );
        assert_eq!(reach.packages.len(), 1);
        assert_eq!(reach.versions.len(), 2);
        assert_eq!(Reach::labels_of(&spec).len(), 1);
        assert_eq!(
            literal(&json!({"name": "a \"b\"", "n": [1, true]})),
            r#"{name: "a \"b\"", n: [1, true]}"#
        );
    }
}
