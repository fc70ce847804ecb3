//! The Artifactory repository API (`/artifactory/api/repositories`), for all four classes
//! (local, remote, virtual, federated) and every package type.
//!
//! Bodies are passed through as JSON: which fields a Kind sends is the provider's business
//! (see the catalog); this module only knows the calls and their rules:
//!
//! | call | request | idempotent | descriptor write |
//! |---|---|---|---|
//! | create | `PUT /api/repositories/{key}` | no (a second PUT fails: key exists) | yes |
//! | get / exists | `GET /api/repositories/{key}` | yes | no |
//! | update | `POST /api/repositories/{key}` (full document) | yes | yes |
//! | delete | `DELETE /api/repositories/{key}` | yes | yes |
//! | list | `GET /api/repositories?type=&packageType=&project=` | yes | no |
//! | all configurations | `GET /api/repositories/configurations` | yes | no |
//! | attach to project | `PUT /access/api/v1/projects/_/attach/repositories/{key}/{project}` | yes | yes |
//! | detach from project | `DELETE /access/api/v1/projects/_/attach/repositories/{key}` | yes | yes |
//! | federation config sync | `POST /api/federation/configSync/{key}` | yes | no |
//!
//! A missing repository: `GET` answers 404, and some Artifactory versions answer 400 for an
//! unknown key (the Terraform provider treats both as gone); since a `GET` by key has no
//! body that could be invalid, both map to [`Error::NotFound`] here. A 400 on `DELETE` is
//! `NotFound` only when a `GET` confirms the key is absent.
//!
//! The all-configurations endpoint answers one object grouping full configurations by
//! class (`{"LOCAL":[..],"REMOTE":[..],"VIRTUAL":[..],"FEDERATED":[..]}`); older
//! platforms lack it (404), and then [`Repositories::list_configurations`] falls back to
//! the list plus one `GET` per key (8 in flight).

use std::fmt;
use std::str::FromStr;

use futures::StreamExt;
use http::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::client::{Idempotency, JfrogClient, Request};
use crate::error::Error;
use crate::service::Service;

const REPOSITORY: &str = "/api/repositories/{key}";
const REPOSITORIES: &str = "/api/repositories";
const CONFIGURATIONS: &str = "/api/repositories/configurations";

/// How many per-key reads the configurations fallback keeps in flight.
const FALLBACK_CONCURRENCY: usize = 8;

/// A repository class (`rclass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RepositoryClass {
    /// Local.
    Local,
    /// Remote (proxy).
    Remote,
    /// Virtual (aggregate).
    Virtual,
    /// Federated.
    Federated,
    /// Release-bundle distribution repository.
    Distribution,
}

impl RepositoryClass {
    /// The four classes the providers manage.
    pub const MANAGED: [RepositoryClass; 4] = [
        RepositoryClass::Local,
        RepositoryClass::Remote,
        RepositoryClass::Virtual,
        RepositoryClass::Federated,
    ];

    /// The wire value (`local`, ...), as `rclass` and the list's `type` filter use it.
    pub fn as_str(self) -> &'static str {
        match self {
            RepositoryClass::Local => "local",
            RepositoryClass::Remote => "remote",
            RepositoryClass::Virtual => "virtual",
            RepositoryClass::Federated => "federated",
            RepositoryClass::Distribution => "distribution",
        }
    }
}

impl fmt::Display for RepositoryClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RepositoryClass {
    type Err = String;

    /// Case-insensitive: the list answers `LOCAL`, bodies carry `local`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "local" => Ok(RepositoryClass::Local),
            "remote" => Ok(RepositoryClass::Remote),
            "virtual" => Ok(RepositoryClass::Virtual),
            "federated" => Ok(RepositoryClass::Federated),
            "distribution" | "releasebundles" => Ok(RepositoryClass::Distribution),
            other => Err(format!("unknown repository class {other:?}")),
        }
    }
}

/// Filters of the repository list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// `type=`: one class.
    pub class: Option<RepositoryClass>,
    /// `packageType=`: one package type (`maven`, `docker`, ...; case-insensitive).
    pub package_type: Option<String>,
    /// `project=`: repositories of one project.
    pub project: Option<String>,
}

impl ListFilter {
    /// No filter.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only this class.
    pub fn class(mut self, class: RepositoryClass) -> Self {
        self.class = Some(class);
        self
    }

    /// Only this package type.
    pub fn package_type(mut self, package_type: impl Into<String>) -> Self {
        self.package_type = Some(package_type.into());
        self
    }

    /// Only this project.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Whether a full configuration matches (used where the server did not filter).
    fn matches(&self, class: Option<RepositoryClass>, config: &serde_json::Value) -> bool {
        let str_field = |name: &str| config.get(name).and_then(|v| v.as_str());
        if let Some(want) = self.class {
            let got = class.or_else(|| str_field("rclass").and_then(|s| s.parse().ok()));
            if got != Some(want) {
                return false;
            }
        }
        if let Some(want) = &self.package_type
            && !str_field("packageType").is_some_and(|p| p.eq_ignore_ascii_case(want))
        {
            return false;
        }
        if let Some(want) = &self.project
            && str_field("projectKey") != Some(want.as_str())
        {
            return false;
        }
        true
    }
}

/// One entry of `GET /artifactory/api/repositories`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositorySummary {
    /// The repository key.
    pub key: String,
    /// The class as the list spells it (`LOCAL`, `REMOTE`, `VIRTUAL`, `FEDERATED`).
    #[serde(rename = "type")]
    pub repo_type: String,
    /// The description.
    #[serde(default)]
    pub description: Option<String>,
    /// The repository URL.
    #[serde(default)]
    pub url: Option<String>,
    /// The package type as the list spells it (`Maven`, `Docker`, ...).
    #[serde(rename = "packageType", default)]
    pub package_type: Option<String>,
}

impl RepositorySummary {
    /// The class, parsed.
    pub fn class(&self) -> Option<RepositoryClass> {
        self.repo_type.parse().ok()
    }
}

/// Full repository configurations, as returned by
/// [`Repositories::list_configurations`].
#[derive(Debug, Clone, PartialEq)]
pub struct RepositoryConfigurations {
    /// One full configuration per repository, each with `key` and `rclass` set.
    pub repositories: Vec<serde_json::Value>,
    /// True when one bulk call served them; false when the per-key fallback did.
    pub bulk: bool,
}

impl RepositoryConfigurations {
    /// The configuration of one key (case-insensitive, as Artifactory keys are).
    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.repositories.iter().find(|r| {
            r.get("key")
                .and_then(|k| k.as_str())
                .is_some_and(|k| k.eq_ignore_ascii_case(key))
        })
    }
}

/// Repository calls of a client; obtained from
/// [`crate::artifactory::Artifactory::repositories`].
#[derive(Debug, Clone, Copy)]
pub struct Repositories<'a> {
    client: &'a JfrogClient,
}

impl<'a> Repositories<'a> {
    pub(crate) fn new(client: &'a JfrogClient) -> Self {
        Repositories { client }
    }

    fn at(self, method: Method, idempotency: Idempotency, key: &str) -> Request<'a> {
        self.client
            .request(Service::Artifactory, method, REPOSITORY, idempotency)
            .param(key)
    }

    /// Creates a repository (`PUT`). Not idempotent and never resent after a lost response:
    /// on [`Error::Indeterminate`] observe with [`Repositories::get`] before creating
    /// again. A key that exists (in any letter case) is a [`Error::BadRequest`].
    pub async fn create<T: Serialize + ?Sized>(self, key: &str, config: &T) -> Result<(), Error> {
        self.at(Method::PUT, Idempotency::NonIdempotent, key)
            .json(config)
            .descriptor_write()
            .send_empty()
            .await
    }

    /// The full configuration of a repository; [`Error::NotFound`] when it does not exist.
    pub async fn get(self, key: &str) -> Result<serde_json::Value, Error> {
        self.get_as(key).await
    }

    /// The full configuration decoded into `T`.
    pub async fn get_as<T: DeserializeOwned>(self, key: &str) -> Result<T, Error> {
        self.at(Method::GET, Idempotency::Idempotent, key)
            .send_json()
            .await
            .map_err(missing_as_not_found)
    }

    /// Whether a repository exists.
    pub async fn exists(self, key: &str) -> Result<bool, Error> {
        match self
            .at(Method::GET, Idempotency::Idempotent, key)
            .send_empty()
            .await
            .map_err(missing_as_not_found)
        {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Updates a repository (`POST` with the full document; idempotent). Artifactory refuses
    /// a change of package type or class.
    pub async fn update<T: Serialize + ?Sized>(self, key: &str, config: &T) -> Result<(), Error> {
        self.at(Method::POST, Idempotency::Idempotent, key)
            .json(config)
            .descriptor_write()
            .send_empty()
            .await
    }

    /// Deletes a repository; [`Error::NotFound`] when it is already gone (which a caller
    /// deleting it should treat as success).
    ///
    /// Some Artifactory versions answer 400 to deleting an unknown key. A 400 is only
    /// reported as `NotFound` after a `GET` confirms the repository is absent: taking any
    /// 400 for "gone" could orphan a repository that still exists.
    pub async fn delete(self, key: &str) -> Result<(), Error> {
        let result = self
            .at(Method::DELETE, Idempotency::Idempotent, key)
            .descriptor_write()
            .send_empty()
            .await;
        match result {
            Err(Error::BadRequest {
                ctx,
                status: 400,
                message,
            }) => {
                if self.exists(key).await? {
                    Err(Error::BadRequest {
                        ctx,
                        status: 400,
                        message,
                    })
                } else {
                    Err(Error::NotFound { ctx, message })
                }
            }
            other => other,
        }
    }

    /// Assigns a repository to a project:
    /// `PUT /access/api/v1/projects/_/attach/repositories/{key}/{project_key}` (idempotent).
    /// The providers call this on update when `projectKey` changes from empty to a value;
    /// a create carries `projectKey` in its body instead. Serialised with the descriptor
    /// writes, since it rewrites the repository's configuration.
    pub async fn attach_project(self, key: &str, project_key: &str) -> Result<(), Error> {
        self.client
            .request(
                Service::Access,
                Method::PUT,
                "/api/v1/projects/_/attach/repositories/{key}/{project_key}",
                Idempotency::Idempotent,
            )
            .param(key)
            .param(project_key)
            .descriptor_write()
            .send_empty()
            .await
    }

    /// Removes a repository from its project:
    /// `DELETE /access/api/v1/projects/_/attach/repositories/{key}` (idempotent).
    pub async fn detach_project(self, key: &str) -> Result<(), Error> {
        self.client
            .request(
                Service::Access,
                Method::DELETE,
                "/api/v1/projects/_/attach/repositories/{key}",
                Idempotency::Idempotent,
            )
            .param(key)
            .descriptor_write()
            .send_empty()
            .await
    }

    /// Pushes a federated repository's configuration to its members:
    /// `POST /artifactory/api/federation/configSync/{key}` (idempotent). The Terraform
    /// provider calls it after creating or updating a federated repository and treats a
    /// failure as a warning only.
    pub async fn federation_config_sync(self, key: &str) -> Result<(), Error> {
        self.client
            .request(
                Service::Artifactory,
                Method::POST,
                "/api/federation/configSync/{key}",
                Idempotency::Idempotent,
            )
            .param(key)
            .send_empty()
            .await
    }

    /// Lists repositories (key, class, package type, URL, description), filtered by the
    /// server.
    pub async fn list(self, filter: &ListFilter) -> Result<Vec<RepositorySummary>, Error> {
        self.client
            .request(
                Service::Artifactory,
                Method::GET,
                REPOSITORIES,
                Idempotency::Idempotent,
            )
            .query_opt("type", filter.class)
            .query_opt("packageType", filter.package_type.as_deref())
            .query_opt("project", filter.project.as_deref())
            .send_json()
            .await
    }

    /// Full configurations of all repositories matching `filter`, in one call where the
    /// platform supports `GET /artifactory/api/repositories/configurations`, else (404)
    /// through the list and one `GET` per key. The bulk answer is filtered client-side:
    /// class and package type exactly as the list filters them, project by `projectKey`.
    pub async fn list_configurations(
        self,
        filter: &ListFilter,
    ) -> Result<RepositoryConfigurations, Error> {
        let bulk = self
            .client
            .request(
                Service::Artifactory,
                Method::GET,
                CONFIGURATIONS,
                Idempotency::Idempotent,
            )
            .send_value()
            .await;
        match bulk {
            Ok(value) => Ok(RepositoryConfigurations {
                repositories: flatten_configurations(value, filter)?,
                bulk: true,
            }),
            Err(e) if e.is_not_found() => {
                tracing::debug!("bulk repository configurations unavailable, reading per key");
                self.configurations_per_key(filter).await
            }
            Err(e) => Err(e),
        }
    }

    async fn configurations_per_key(
        self,
        filter: &ListFilter,
    ) -> Result<RepositoryConfigurations, Error> {
        let summaries = self.list(filter).await?;
        let results: Vec<Result<Option<serde_json::Value>, Error>> =
            futures::stream::iter(summaries)
                .map(|summary| async move {
                    match self.get(&summary.key).await {
                        Ok(mut config) => {
                            fill_identity(&mut config, &summary.key, summary.class());
                            Ok(Some(config))
                        }
                        // Deleted between the list and the read.
                        Err(e) if e.is_not_found() => Ok(None),
                        Err(e) => Err(e),
                    }
                })
                .buffered(FALLBACK_CONCURRENCY)
                .collect()
                .await;
        let mut repositories = Vec::with_capacity(results.len());
        for r in results {
            if let Some(config) = r? {
                repositories.push(config);
            }
        }
        Ok(RepositoryConfigurations {
            repositories,
            bulk: false,
        })
    }
}

/// Some Artifactory versions answer 400 for an unknown key on `GET`.
fn missing_as_not_found(e: Error) -> Error {
    match e {
        Error::BadRequest {
            ctx,
            status: 400,
            message,
        } if ctx.method == Method::GET => Error::NotFound { ctx, message },
        other => other,
    }
}

/// Sets `key` and `rclass` when the configuration lacks them.
fn fill_identity(config: &mut serde_json::Value, key: &str, class: Option<RepositoryClass>) {
    if let Some(obj) = config.as_object_mut() {
        obj.entry("key")
            .or_insert_with(|| serde_json::Value::String(key.to_owned()));
        if let Some(class) = class {
            obj.entry("rclass")
                .or_insert_with(|| serde_json::Value::String(class.as_str().to_owned()));
        }
    }
}

/// Turns the bulk answer (grouped by class, or a plain array) into a filtered flat list.
fn flatten_configurations(
    value: serde_json::Value,
    filter: &ListFilter,
) -> Result<Vec<serde_json::Value>, Error> {
    let mut out = Vec::new();
    let mut push = |mut config: serde_json::Value, class: Option<RepositoryClass>| {
        let key = config
            .get("key")
            .and_then(|k| k.as_str())
            .unwrap_or_default()
            .to_owned();
        if key.is_empty() {
            return;
        }
        fill_identity(&mut config, &key, class);
        if filter.matches(class, &config) {
            out.push(config);
        }
    };
    match value {
        serde_json::Value::Object(groups) => {
            for (group, configs) in groups {
                let class = group.parse::<RepositoryClass>().ok();
                if let serde_json::Value::Array(configs) = configs {
                    for config in configs {
                        push(config, class);
                    }
                }
            }
        }
        serde_json::Value::Array(configs) => {
            for config in configs {
                push(config, None);
            }
        }
        _ => {
            return Err(Error::Decode {
                ctx: crate::error::RequestContext {
                    service: Service::Artifactory,
                    method: Method::GET,
                    route: format!("{}{CONFIGURATIONS}", Service::Artifactory.base_path()),
                },
                status: 200,
                message: "expected an object grouped by class or an array".to_owned(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classes_parse_case_insensitively() {
        assert_eq!("LOCAL".parse(), Ok(RepositoryClass::Local));
        assert_eq!("Federated".parse(), Ok(RepositoryClass::Federated));
        assert!("nope".parse::<RepositoryClass>().is_err());
        assert_eq!(RepositoryClass::Virtual.to_string(), "virtual");
    }

    #[test]
    fn flattens_grouped_configurations_with_filters() {
        let bulk = json!({
            "LOCAL": [
                {"key": "a", "packageType": "maven", "projectKey": "p1"},
                {"key": "b", "packageType": "docker"}
            ],
            "REMOTE": [{"key": "c", "packageType": "Maven", "url": "https://x"}],
            "VIRTUAL": [],
            "FEDERATED": [{"key": "d", "packageType": "maven", "rclass": "federated"}]
        });
        let all = flatten_configurations(bulk.clone(), &ListFilter::all()).unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(all[0]["rclass"], "local");
        assert_eq!(all[2]["rclass"], "remote");
        let maven =
            flatten_configurations(bulk.clone(), &ListFilter::all().package_type("MAVEN")).unwrap();
        let keys: Vec<_> = maven.iter().map(|c| c["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["a", "c", "d"]);
        let local_maven = flatten_configurations(
            bulk.clone(),
            &ListFilter::all()
                .class(RepositoryClass::Local)
                .package_type("maven"),
        )
        .unwrap();
        assert_eq!(local_maven.len(), 1);
        let project = flatten_configurations(bulk, &ListFilter::all().project("p1")).unwrap();
        assert_eq!(project.len(), 1);
        assert!(flatten_configurations(json!("x"), &ListFilter::all()).is_err());
        let configs = RepositoryConfigurations {
            repositories: all,
            bulk: true,
        };
        assert!(configs.get("A").is_some());
        assert!(configs.get("zz").is_none());
    }
}
