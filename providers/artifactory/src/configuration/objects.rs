//! The REST bindings of the lifecycle and artifact Kinds, whose calls carry more than a
//! key and a JSON body: release bundles v2 and their promotions (composite identifiers,
//! the signing key as a header, the project as a query parameter), artifacts (raw bytes,
//! addressed by `<repository><path>`) and item properties (query-string writes; only the
//! declared keys are managed).

use async_trait::async_trait;
use base64::Engine;
use http::Method;
use jfrog_client::{Error, Idempotency, JfrogClient, RequestContext, Service};
use provider_family::{Address, Ask, Cx, ListCall, ReadMany, Rest};
use serde_json::{Map, Value, json};

fn invalid(service: Service, route: &str, message: impl Into<String>) -> Error {
    Error::InvalidRequest {
        ctx: RequestContext {
            service,
            method: Method::GET,
            route: route.to_string(),
        },
        message: message.into(),
    }
}

/// An address's key, and the `project` its query names (a project's release bundle or
/// promotion, see the configuration hooks' `address`).
fn scoped(address: &Address) -> (&str, Option<&str>) {
    let project = address
        .query()
        .iter()
        .find(|(n, v)| n == "project" && !v.is_empty())
        .map(|(_, v)| v.as_str());
    (address.key(), project)
}

/// The key a per-parent list shows `key` under: the list path's parents, then the project
/// its list was asked with (the optional query parent), joined by `/`.
fn listed_under(parents: &[&str], project: Option<&str>, key: &str) -> String {
    let mut out = String::new();
    for p in parents.iter().chain(project.as_ref()) {
        out.push_str(p);
        out.push('/');
    }
    out.push_str(key);
    out
}

/// The canonical address `key` in `project` (`<key>?project=<project>`), as the
/// configuration hooks' `address` builds it.
fn in_project(key: String, project: Option<&&str>) -> String {
    match project {
        Some(p) if !p.is_empty() => Address::new(key).with_query("project", *p).to_string(),
        _ => key,
    }
}

/// The `n` parts of a composite key (`a:b:c`); the last part may hold no colon.
fn parts<'a>(key: &'a str, n: usize, route: &str) -> Result<Vec<&'a str>, Error> {
    let p: Vec<&str> = key.splitn(n, ':').collect();
    if p.len() != n || p.iter().any(|s| s.is_empty()) {
        return Err(invalid(
            Service::Lifecycle,
            route,
            format!("identifier {key:?} does not have {n} parts separated by ':'"),
        ));
    }
    Ok(p)
}

fn str_of<'a>(body: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    body.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Release bundles v2 (`<name>:<version>`): created once, never updated.
#[derive(Debug)]
pub struct ReleaseBundles;

const RB_RECORD: &str = "/api/v2/release_bundle/records/{name}/{version}";

#[async_trait]
impl Rest for ReleaseBundles {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let (key, project) = scoped(address);
        let p = parts(key, 2, RB_RECORD)?;
        cx.client
            .request(
                Service::Lifecycle,
                Method::GET,
                RB_RECORD,
                Idempotency::Idempotent,
            )
            .param(p[0])
            .param(p[1])
            .query_opt("project", project)
            .send_value()
            .await
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        _address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let mut body = body.clone();
        let keypair = body.remove("keypair_name");
        let project = body.remove("project_key");
        let mut r = cx
            .client
            .request(
                Service::Lifecycle,
                Method::POST,
                "/api/v2/release_bundle",
                Idempotency::NonIdempotent,
            )
            .query("async", "false")
            .query_opt(
                "project",
                project
                    .as_ref()
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty()),
            );
        if let Some(k) = keypair.as_ref().and_then(Value::as_str) {
            r = r.header("X-JFrog-Signing-Key-Name", k);
        }
        r.json(&body).send_empty().await?;
        Ok(Value::Null)
    }

    async fn update(
        &self,
        _cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        Err(invalid(
            Service::Lifecycle,
            RB_RECORD,
            format!("release bundle {address} cannot be changed: delete and create it again"),
        ))
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let (key, project) = scoped(address);
        let p = parts(key, 2, RB_RECORD)?;
        cx.client
            .request(
                Service::Lifecycle,
                Method::DELETE,
                RB_RECORD,
                Idempotency::Idempotent,
            )
            .param(p[0])
            .param(p[1])
            .query("async", "false")
            .query_opt("project", project)
            .send_empty()
            .await
    }

    fn list(&self) -> Option<&ListCall> {
        None
    }

    /// The versions list of the bundle name shows `<version>` under the name, and a
    /// project's list (asked with `project`) under the name and the project.
    fn list_key(&self, address: &Address) -> Option<String> {
        let (key, project) = scoped(address);
        let p = parts(key, 2, RB_RECORD).ok()?;
        Some(listed_under(&[p[0]], project, p[1]))
    }

    fn listed_address(&self, parents: &[&str], key: &str) -> Option<String> {
        Some(in_project(
            format!("{}:{key}", parents.first()?),
            parents.get(1),
        ))
    }

    /// The list of a bundle's versions came with its read by key (Artifactory 7.63.2) and
    /// looks in the same Release Bundles repository: a 404 is the name without a version,
    /// each of which the read would answer 404 too.
    fn list_404_is_empty(&self) -> bool {
        true
    }
}

/// Promotions of a release bundle version (`<name>:<version>:<environment>`), found among
/// the version's promotion records by environment (JFrog addresses one by the creation
/// time, which the identifier does not carry).
#[derive(Debug)]
pub struct Promotions;

const PROMOTIONS: &str = "/api/v2/promotion/records/{name}/{version}";
const PROMOTION: &str = "/api/v2/promotion/records/{name}/{version}/{created_millis}";

impl Promotions {
    async fn find(&self, client: &JfrogClient, address: &Address) -> Result<Value, Error> {
        let (key, project) = scoped(address);
        let p = parts(key, 3, PROMOTIONS)?;
        let all = client
            .request(
                Service::Lifecycle,
                Method::GET,
                PROMOTIONS,
                Idempotency::Idempotent,
            )
            .param(p[0])
            .param(p[1])
            .query_opt("project", project)
            .send_value()
            .await?;
        all.get("promotions")
            .and_then(Value::as_array)
            .and_then(|l| {
                l.iter()
                    .find(|r| r.get("environment").and_then(Value::as_str) == Some(p[2]))
            })
            .cloned()
            .ok_or_else(|| Error::NotFound {
                ctx: RequestContext {
                    service: Service::Lifecycle,
                    method: Method::GET,
                    route: format!("/lifecycle{PROMOTIONS}"),
                },
                message: format!("no promotion of {}:{} to {}", p[0], p[1], p[2]),
            })
    }
}

#[async_trait]
impl Rest for Promotions {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        self.find(cx.client, address).await
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let p = parts(address.key(), 3, PROMOTIONS)?;
        let mut body = body.clone();
        let keypair = body.remove("keypair_name");
        let project = body.remove("project_key");
        let mut r = cx
            .client
            .request(
                Service::Lifecycle,
                Method::POST,
                PROMOTIONS,
                Idempotency::NonIdempotent,
            )
            .param(p[0])
            .param(p[1])
            .query("async", "false")
            .query_opt(
                "project",
                project
                    .as_ref()
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty()),
            );
        if let Some(k) = keypair.as_ref().and_then(Value::as_str) {
            r = r.header("X-JFrog-Signing-Key-Name", k);
        }
        r.json(&body).send_empty().await?;
        Ok(Value::Null)
    }

    async fn update(
        &self,
        _cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        Err(invalid(
            Service::Lifecycle,
            PROMOTIONS,
            format!("promotion {address} cannot be changed: delete and create it again"),
        ))
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let record = self.find(cx.client, address).await?;
        let (key, project) = scoped(address);
        let p = parts(key, 3, PROMOTIONS)?;
        let millis = record
            .get("created_millis")
            .and_then(|v| {
                v.as_i64()
                    .map(|i| i.to_string())
                    .or(v.as_str().map(str::to_string))
            })
            .ok_or_else(|| {
                invalid(
                    Service::Lifecycle,
                    PROMOTION,
                    "record without created_millis",
                )
            })?;
        cx.client
            .request(
                Service::Lifecycle,
                Method::DELETE,
                PROMOTION,
                Idempotency::Idempotent,
            )
            .param(p[0])
            .param(p[1])
            .param(millis)
            .query("async", "false")
            .query_opt("project", project)
            .send_empty()
            .await
    }

    fn list(&self) -> Option<&ListCall> {
        None
    }

    /// The environment's list shows `<name>/<version>` under the environment, and a
    /// project's list (asked with `project`) under the environment and the project.
    fn list_key(&self, address: &Address) -> Option<String> {
        let (key, project) = scoped(address);
        let p = parts(key, 3, PROMOTIONS).ok()?;
        Some(listed_under(
            &[p[2]],
            project,
            &format!("{}/{}", p[0], p[1]),
        ))
    }

    fn listed_address(&self, parents: &[&str], key: &str) -> Option<String> {
        let env = parents.first()?;
        let (name, version) = key.split_once('/')?;
        Some(in_project(
            format!("{name}:{version}:{env}"),
            parents.get(1),
        ))
    }

    /// The environment's list shows each bundle version where it is now: a version
    /// promoted to another environment since is missing from it, not unpromoted.
    fn list_shows_absence(&self) -> bool {
        false
    }

    /// A platform older than Artifactory 7.107.1 answers 404 to the list.
    fn list_404_is_unsupported(&self) -> bool {
        true
    }
}

/// The members of a promotion as the Kind observes it, from a promotion record
/// (`GET .../promotion/records/{name}/{version}`) or an entry of the environment's list
/// (`.../release-bundles-by-environment/{environment}`) alike: the list's `project_key`
/// (`default` for the platform's bundles) is not in the record, so it is left out.
pub fn promotion_from_jfrog(body: &Value) -> Option<Value> {
    let mut v = body.clone();
    v.as_object_mut()?.remove("project_key")?;
    Some(v)
}

/// Artifacts, addressed by `<repository><path>` (the identifier the deploy answer gives).
#[derive(Debug)]
pub struct Artifacts;

const STORAGE: &str = "/api/storage/{*item}";
const ITEM: &str = "/{*item}";

/// `<repository><path>` of a body.
fn item_of(body: &Map<String, Value>) -> Option<String> {
    let repo = str_of(body, "repo")?;
    let path = str_of(body, "path")?;
    Some(format!("{repo}/{}", path.trim_start_matches('/')))
}

impl Artifacts {
    async fn deploy(
        &self,
        client: &JfrogClient,
        item: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let bytes = match (str_of(body, "content_base64"), str_of(body, "file_path")) {
            (None, Some(path)) => {
                crate::local_file::read(path, "filePath", true, Service::Artifactory, ITEM).await?
            }
            (content, _) => base64::engine::general_purpose::STANDARD
                .decode(content.unwrap_or_default())
                .map_err(|e| {
                    invalid(
                        Service::Artifactory,
                        ITEM,
                        format!("contentBase64 is not base64: {e}"),
                    )
                })?,
        };
        let r = client
            .request(
                Service::Artifactory,
                Method::PUT,
                ITEM,
                Idempotency::Idempotent,
            )
            .param(item)
            .bytes(bytes, "application/octet-stream")
            .send()
            .await?;
        Ok(serde_json::from_slice(r.body()).unwrap_or(Value::Null))
    }
}

#[async_trait]
impl Rest for Artifacts {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let key = address.key();
        let mut v = cx
            .client
            .request(
                Service::Artifactory,
                Method::GET,
                STORAGE,
                Idempotency::Idempotent,
            )
            .param(key)
            .send_value()
            .await?;
        // JFrog answers the size as a string.
        if let Some(s) = v
            .get("size")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<i64>().ok())
        {
            v["size"] = Value::from(s);
        }
        Ok(v)
    }

    async fn create(
        &self,
        cx: &Cx<'_>,
        _address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        let item = item_of(body).ok_or_else(|| {
            invalid(
                Service::Artifactory,
                ITEM,
                "repository and path are required",
            )
        })?;
        self.deploy(cx.client, &item, body).await
    }

    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        let key = address.key();
        self.deploy(cx.client, key, body).await.map(|_| ())
    }

    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        let key = address.key();
        cx.client
            .request(
                Service::Artifactory,
                Method::DELETE,
                ITEM,
                Idempotency::Idempotent,
            )
            .param(key)
            .send_empty()
            .await
    }

    fn list(&self) -> Option<&ListCall> {
        None
    }

    fn read_many_call(&self) -> Option<&ReadMany> {
        Some(&ITEM_SEARCH)
    }

    /// Many files checked in one AQL search (`items.find(...).include("repo", "path",
    /// "name", "size", "sha256")`), where Terraform reads each file's storage info. The
    /// search answers no MIME type or URIs, so it stands for the read only where it shows the
    /// file unchanged since the last read (same size and SHA-256): that read is answered
    /// again. A file the search does not show, or shows changed, and one not read yet are
    /// read by key (so a re-deployed or deleted file is seen within a poll, never taken as
    /// absent on the search's word).
    async fn read_many(
        &self,
        cx: &Cx<'_>,
        asks: &[Ask<'_>],
    ) -> Result<Vec<(String, Option<Value>)>, Error> {
        let items: Vec<(&str, Value, AqlItem)> = asks
            .iter()
            .filter_map(|a| {
                let last: Value = serde_json::from_str(a.last?).ok()?;
                Some((a.key, last, aql_item_at(a.key)?))
            })
            .collect();
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<&AqlItem> = items.iter().map(|(_, _, i)| i).collect();
        let rows = aql_rows(
            cx.client,
            &wanted,
            r#""repo","path","name","size","sha256""#,
        )
        .await?;
        Ok(items
            .into_iter()
            .filter_map(|(k, last, item)| {
                let row = rows.get(&item)?;
                let same = row
                    .get("sha256")
                    .is_some_and(|s| *s == last["checksums"]["sha256"])
                    && row.get("size").and_then(Value::as_i64) == last["size"].as_i64();
                same.then(|| (k.to_string(), Some(last)))
            })
            .collect())
    }
}

/// The identifier of a deployed artifact from the deploy answer (`repo` and `path`).
pub fn artifact_id(answer: &Value) -> Option<String> {
    answer.as_object().and_then(item_of)
}

/// Properties of an item (`<repo>:<path>`): writes set the declared keys only; the delete
/// of an MR removes its declared keys (see the family's hooks), never the item's others.
#[derive(Debug)]
pub struct ItemProperties;

const PROPS: &str = "/api/storage/{*item}";

/// `<repo>/<path>` of a `<repo>:<path>` identifier; `<repo>` of a `<repo>` one (the
/// repository's own properties, as upstream's import ID without a path).
pub fn item_path(key: &str) -> Result<String, Error> {
    if !key.contains(':') && !key.is_empty() {
        return Ok(key.to_string());
    }
    let p = parts(key, 2, PROPS)?;
    Ok(format!("{}/{}", p[0], p[1].trim_start_matches('/')))
}

/// `k1=v1,v2;k2=v3` as the properties query parameter takes it.
fn props_param(props: &Map<String, Value>) -> String {
    props
        .iter()
        .map(|(k, v)| {
            let values: Vec<&str> = v
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!("{k}={}", values.join(","))
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The AQL search that reads the properties of many items at once.
static ITEM_SEARCH: ReadMany = ReadMany {
    service: Service::Artifactory,
    path: "/api/search/aql",
    size: 100,
};

/// The longest AQL text one search sends: JFrog's AQL refuses longer queries (6,000
/// characters by default, `artifactory.aql.query.max.length`), so the items of one batch
/// are split over several searches where their names are long.
const MAX_AQL: usize = 5_000;

/// An item as AQL names it: `(repository, path, name)`, `path` being `.` for an item in the
/// repository's root.
type AqlItem = (String, String, String);

/// The [`AqlItem`] of an ItemProperties key; `None` for a repository's own properties,
/// which AQL does not answer as an item (they are read by key).
fn aql_item(key: &str) -> Option<AqlItem> {
    if !key.contains(':') {
        return None;
    }
    aql_item_at(&item_path(key).ok()?)
}

/// The [`AqlItem`] of `<repository>/<path>`.
fn aql_item_at(item: &str) -> Option<AqlItem> {
    let (repo, rest) = item.split_once('/')?;
    let rest = rest.trim_matches('/');
    if repo.is_empty() || rest.is_empty() {
        return None;
    }
    let (path, name) = rest.rsplit_once('/').unwrap_or((".", rest));
    Some((repo.to_string(), path.to_string(), name.to_string()))
}

/// One AQL search for `items` (files and folders), grouped by repository, answering the
/// fields `include` names (`"repo","path","name",...`, as AQL writes them).
fn aql_query(items: &[&AqlItem], include: &str) -> String {
    let mut by_repo: std::collections::BTreeMap<&str, Vec<Value>> = Default::default();
    for (repo, path, name) in items {
        by_repo
            .entry(repo)
            .or_default()
            .push(json!({"path": path, "name": name}));
    }
    let criteria: Vec<Value> = by_repo
        .into_iter()
        .map(|(repo, items)| json!({"repo": repo, "$or": items}))
        .collect();
    format!(
        "items.find({}).include({include})",
        json!({"type": "any", "$or": criteria})
    )
}

/// The result rows of AQL searches for `items` (one search, or several where the text would
/// pass [`MAX_AQL`]), each row keyed by its item.
async fn aql_rows(
    client: &JfrogClient,
    items: &[&AqlItem],
    include: &str,
) -> Result<std::collections::HashMap<AqlItem, Value>, Error> {
    let mut searches: Vec<String> = Vec::new();
    let mut batch: Vec<&AqlItem> = Vec::new();
    for item in items {
        batch.push(item);
        if batch.len() > 1 && aql_query(&batch, include).len() > MAX_AQL {
            let last = batch.pop();
            searches.push(aql_query(&batch, include));
            batch = last.into_iter().collect();
        }
    }
    if !batch.is_empty() {
        searches.push(aql_query(&batch, include));
    }
    let text = |v: &Value, m: &str| v.get(m).and_then(Value::as_str).map(str::to_string);
    let mut rows = std::collections::HashMap::new();
    for query in searches {
        let answer = client
            .request(
                Service::Artifactory,
                Method::POST,
                ITEM_SEARCH.path,
                Idempotency::Idempotent,
            )
            .reads_only()
            .text(query, "text/plain")
            .send_value()
            .await?;
        for r in answer
            .get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(repo), Some(path), Some(name)) =
                (text(r, "repo"), text(r, "path"), text(r, "name"))
            {
                rows.insert((repo, path, name), r.clone());
            }
        }
    }
    Ok(rows)
}

/// The properties of an AQL result row as `GET ...?properties` answers them
/// (`{"properties": {key: [values]}}`); `None` for an item without properties (that read
/// answers not found).
fn aql_properties(row: &Value) -> Option<Value> {
    let text = |v: &Value, m: &str| v.get(m).and_then(Value::as_str).map(str::to_string);
    let mut props: Map<String, Value> = Map::new();
    for p in row
        .get("properties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(k) = text(p, "key") else { continue };
        let v = text(p, "value").unwrap_or_default();
        if let Value::Array(values) = props.entry(k).or_insert_with(|| json!([])) {
            values.push(Value::String(v));
        }
    }
    (!props.is_empty()).then(|| json!({ "properties": props }))
}

fn recursive(body: &Map<String, Value>) -> &'static str {
    if body.get("recursive").and_then(Value::as_bool) == Some(true) {
        "1"
    } else {
        "0"
    }
}

#[async_trait]
impl Rest for ItemProperties {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        let key = address.key();
        cx.client
            .request(
                Service::Artifactory,
                Method::GET,
                PROPS,
                Idempotency::Idempotent,
            )
            .param(item_path(key)?)
            .query("properties", "")
            .send_value()
            .await
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
        let key = address.key();
        let props = body
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        cx.client
            .request(
                Service::Artifactory,
                Method::PUT,
                PROPS,
                Idempotency::Idempotent,
            )
            .param(item_path(key)?)
            .query("properties", props_param(&props))
            .query("recursive", recursive(body))
            .send_empty()
            .await
    }

    /// Removes nothing by itself: the MR's declared keys are removed by the family's
    /// `before_delete` (this call knows only the item).
    async fn delete(&self, _cx: &Cx<'_>, _address: &Address) -> Result<(), Error> {
        Ok(())
    }

    fn list(&self) -> Option<&ListCall> {
        None
    }

    fn read_many_call(&self) -> Option<&ReadMany> {
        Some(&ITEM_SEARCH)
    }

    /// The properties of many items in one AQL search (`POST /api/search/aql`,
    /// `items.find(...).include("repo", "path", "name", "property")`), where Terraform reads
    /// each item. Only what the search shows is answered: an item it does not show (gone,
    /// without properties, spelt in another case, or a repository's own properties) is
    /// read by key, so the search never makes an item look absent.
    async fn read_many(
        &self,
        cx: &Cx<'_>,
        asks: &[Ask<'_>],
    ) -> Result<Vec<(String, Option<Value>)>, Error> {
        let items: Vec<(&str, AqlItem)> = asks
            .iter()
            .filter_map(|a| Some((a.key, aql_item(a.key)?)))
            .collect();
        let wanted: Vec<&AqlItem> = items.iter().map(|(_, i)| i).collect();
        let rows = aql_rows(cx.client, &wanted, r#""repo","path","name","property""#).await?;
        Ok(items
            .iter()
            .filter_map(|(k, item)| Some((k.to_string(), Some(aql_properties(rows.get(item)?)?))))
            .collect())
    }
}

/// Remove the keys `names` from an item's properties.
pub async fn remove_properties(
    client: &JfrogClient,
    key: &str,
    names: &[String],
) -> Result<(), Error> {
    if names.is_empty() {
        return Ok(());
    }
    client
        .request(
            Service::Artifactory,
            Method::DELETE,
            PROPS,
            Idempotency::Idempotent,
        )
        .param(item_path(key)?)
        .query("properties", names.join(","))
        .query("recursive", "0")
        .send_empty()
        .await
}

/// Enables or disables a cleanup or archive policy (`POST <path>` with `{"enabled": bool}`).
pub async fn set_enabled(
    client: &JfrogClient,
    path: &'static str,
    key: &str,
    enabled: bool,
) -> Result<(), Error> {
    client
        .request(
            Service::Artifactory,
            Method::POST,
            path,
            Idempotency::Idempotent,
        )
        .param(key)
        .json(&serde_json::json!({ "enabled": enabled }))
        .send_empty()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_and_query_strings() {
        assert_eq!(parts("rb:1.0", 2, "").unwrap(), vec!["rb", "1.0"]);
        assert_eq!(
            parts("rb:1.0:PROD", 3, "").unwrap(),
            vec!["rb", "1.0", "PROD"]
        );
        assert!(parts("rb", 2, "").is_err());
        let scoped_bundle = Address::new("rb:1.0").with_query("project", "team");
        assert_eq!(scoped(&scoped_bundle), ("rb:1.0", Some("team")));
        assert_eq!(scoped(&Address::new("rb:1.0")), ("rb:1.0", None));
        let empty = Address::new("rb:1.0").with_query("project", "");
        assert_eq!(scoped(&empty), ("rb:1.0", None));
        assert_eq!(item_path("libs:/a/b.txt").unwrap(), "libs/a/b.txt");
        let props = json!({"stage": ["dev", "qa"], "team": ["x"]});
        assert_eq!(
            props_param(props.as_object().unwrap()),
            "stage=dev,qa;team=x"
        );
        assert_eq!(
            artifact_id(&json!({"repo": "libs", "path": "/a/b.txt"})).as_deref(),
            Some("libs/a/b.txt")
        );
    }

    /// A bundle or promotion is keyed in its list under the list path's parent and, for a
    /// project's (asked with `project`), the project: the snapshot's prefix; an export's
    /// listed entry gives back the address the hooks build.
    #[test]
    fn a_projects_bundles_and_promotions_are_keyed_under_the_project() {
        let rb = Rest::list_key(&ReleaseBundles, &Address::new("rb:1.0"));
        assert_eq!(rb.as_deref(), Some("rb/1.0"));
        let team = Address::new("rb:1.0").with_query("project", "team");
        let rb = Rest::list_key(&ReleaseBundles, &team);
        assert_eq!(rb.as_deref(), Some("rb/team/1.0"));
        let listed = ReleaseBundles.listed_address(&["rb", "team"], "1.0");
        assert_eq!(listed.as_deref(), Some("rb:1.0?project=team"));
        let listed = ReleaseBundles.listed_address(&["rb"], "1.0");
        assert_eq!(listed.as_deref(), Some("rb:1.0"));

        let dev = Address::new("rb:1.0:DEV");
        assert_eq!(
            Rest::list_key(&Promotions, &dev).as_deref(),
            Some("DEV/rb/1.0")
        );
        let team = Address::new("rb:1.0:DEV").with_query("project", "team");
        assert_eq!(
            Rest::list_key(&Promotions, &team).as_deref(),
            Some("DEV/team/rb/1.0")
        );
        let listed = Promotions.listed_address(&["DEV", "team"], "rb/1.0");
        assert_eq!(listed.as_deref(), Some("rb:1.0:DEV?project=team"));
    }
}
