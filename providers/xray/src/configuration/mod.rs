//! The configuration group: Xray settings (a singleton over two APIs), the workers count
//! (a singleton), a repository's Xray configuration (keyed by the repository name, a spec
//! field), the catalog labels (a singleton over the Catalog service's GraphQL API) and the
//! binary manager's indexing configuration for builds, repositories and release bundles v2
//! (keyed by the binary manager ID; in a project with `?projectKey=` on every call, as
//! upstream sends it).
//!
//! None of these can be deleted in JFrog (except catalog labels): deleting the MR forgets
//! the object ([`common::Forget`]).

#[rustfmt::skip]
pub mod tables;

use async_trait::async_trait;
use jfrog_client::{Error, Idempotency, JfrogClient, Method, Service};
use provider_family::{Call, Hooks, ListCall, Paths, ResolvedKind, Rest, Verb};
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

#[async_trait]
impl Rest for SettingsRest {
    async fn read(&self, client: &JfrogClient, _key: &str) -> Result<Value, Error> {
        let mut basic = client
            .request(
                Service::Artifactory,
                Method::GET,
                "/api/xrayRepo/getIntegrationConfig",
                Idempotency::Idempotent,
            )
            .send_value()
            .await?;
        let sync = client
            .request(
                Service::Xray,
                Method::GET,
                "/api/v1/configuration/dbsync/time",
                Idempotency::Idempotent,
            )
            .send_value()
            .await?;
        if let (Value::Object(b), Some(s)) = (&mut basic, sync.get(DB_SYNC)) {
            b.insert(DB_SYNC.into(), s.clone());
        }
        Ok(basic)
    }
    async fn create(
        &self,
        client: &JfrogClient,
        _key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.write(client, body).await.map(|()| Value::Null)
    }
    async fn update(
        &self,
        client: &JfrogClient,
        _key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.write(client, body).await
    }
    async fn delete(&self, _client: &JfrogClient, _key: &str) -> Result<(), Error> {
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

/// The labels query.
const SEARCH_LABELS: &str =
    "query { customCatalogLabel { searchLabels { edges { node { name description } } } } }";

/// Catalog labels over the Catalog service's GraphQL API: the labels are read with one
/// `searchLabels` query; a write creates the missing labels, updates changed descriptions
/// and deletes the labels no longer listed (one mutation each, only when needed).
#[derive(Debug)]
pub struct CatalogLabelsRest;

/// Labels by name -> description.
type Labels = std::collections::BTreeMap<String, String>;

fn labels_of(v: Option<&Value>) -> Labels {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|l| {
                    Some((
                        l.get("name")?.as_str()?.to_string(),
                        l.get("description")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

impl CatalogLabelsRest {
    /// The request context of the GraphQL call, for errors made from its answer.
    fn context() -> jfrog_client::RequestContext {
        jfrog_client::RequestContext {
            service: Service::Catalog,
            method: Method::POST,
            route: format!("/catalog{GRAPHQL}"),
        }
    }

    async fn graphql(client: &JfrogClient, query: &str, variables: Value) -> Result<Value, Error> {
        let answer = client
            .request(
                Service::Catalog,
                Method::POST,
                GRAPHQL,
                Idempotency::Idempotent,
            )
            .json(&json!({"query": query, "variables": variables}))
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

    async fn current(client: &JfrogClient) -> Result<Labels, Error> {
        let answer = Self::graphql(client, SEARCH_LABELS, json!({})).await?;
        let edges = answer
            .pointer("/data/customCatalogLabel/searchLabels/edges")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let nodes: Vec<Value> = edges
            .into_iter()
            .filter_map(|e| e.get("node").cloned())
            .collect();
        Ok(labels_of(Some(&Value::Array(nodes))))
    }

    async fn apply(client: &JfrogClient, want: &Labels) -> Result<(), Error> {
        let have = Self::current(client).await?;
        let new: Vec<Value> = want
            .iter()
            .filter(|(n, _)| !have.contains_key(*n))
            .map(|(n, d)| json!({"name": n, "description": d}))
            .collect();
        if !new.is_empty() {
            Self::graphql(
                client,
                "mutation ($labels: [CustomCatalogLabelInput!]!) { customCatalogLabel { createCustomCatalogLabels(labels: $labels) { name } } }",
                json!({"labels": new}),
            )
            .await?;
        }
        for (n, d) in want {
            if have.get(n).is_some_and(|h| h != d) {
                Self::graphql(
                    client,
                    "mutation ($label: UpdateCustomCatalogLabelInput!) { customCatalogLabel { updateCustomCatalogLabel(label: $label) { name } } }",
                    json!({"label": {"name": n, "updatedName": n, "updatedDescription": d}}),
                )
                .await?;
            }
        }
        let gone: Vec<&String> = have.keys().filter(|n| !want.contains_key(*n)).collect();
        if !gone.is_empty() {
            Self::graphql(
                client,
                "mutation ($names: [String!]!) { customCatalogLabel { deleteCustomCatalogLabels(names: $names) } }",
                json!({"names": gone}),
            )
            .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl Rest for CatalogLabelsRest {
    async fn read(&self, client: &JfrogClient, _key: &str) -> Result<Value, Error> {
        let current = Self::current(client).await?;
        // No label at all: the MR's labels do not exist (yet, or any more).
        if current.is_empty() {
            return Err(Error::NotFound {
                ctx: Self::context(),
                message: "no catalog labels".into(),
            });
        }
        let labels: Vec<Value> = current
            .into_iter()
            .map(|(name, description)| json!({"name": name, "description": description}))
            .collect();
        Ok(json!({ "labels": labels }))
    }
    async fn create(
        &self,
        client: &JfrogClient,
        _key: &str,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        Self::apply(client, &labels_of(body.get("labels")))
            .await
            .map(|()| Value::Null)
    }
    async fn update(
        &self,
        client: &JfrogClient,
        _key: &str,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        Self::apply(client, &labels_of(body.get("labels"))).await
    }
    async fn delete(&self, client: &JfrogClient, _key: &str) -> Result<(), Error> {
        Self::apply(client, &Labels::new()).await
    }
    fn list(&self) -> Option<&ListCall> {
        None
    }
}

/// The configuration group's hooks.
pub static HOOKS: ConfigurationHooks = ConfigurationHooks;

/// The configuration group's behaviour: the parts of catalog labels not supported yet.
#[derive(Debug, Clone, Copy)]
pub struct ConfigurationHooks;

impl Hooks for ConfigurationHooks {
    fn check_params(&self, kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        if kind.decl.kind == "CatalogLabels" {
            for f in ["packageAssignments", "versionAssignments"] {
                if params
                    .get(f)
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty())
                {
                    return Err(format!(
                        "{f}: assigning catalog labels to packages is not supported by this provider yet; remove {f}"
                    ));
                }
            }
        }
        Ok(())
    }
}

common::group_fns!();
