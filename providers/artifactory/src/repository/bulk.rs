//! Bulk repository writes: repository creations and updates carried by the coalescing
//! descriptor writer ([`crate::configuration::descriptor`]) as YAML configuration patches,
//! where the platform takes them.
//!
//! Artifactory's YAML configuration (`PATCH /artifactory/api/system/configuration`,
//! `Content-Type: application/yaml`) has one section per repository class
//! (`localRepositories`, `remoteRepositories`, `virtualRepositories`,
//! `federatedRepositories`), each a map from repository key to its configuration, with
//! `type` for the package type. A repository write becomes one entry of such a section:
//! the body the REST call would send (`key` and `rclass` left out, `packageType` as `type`).
//! Entries of concurrent writes share one `PATCH` per window; a write alone in its window
//! is made by its REST call instead; a batch the platform refuses is split until the
//! offending entry alone gets the platform's message (see the descriptor writer).
//!
//! Where it is used (`--bulk-repository-writes`, held per provider by [`BulkWrites`] in its
//! client cache's state, never in a static: a cache without one writes by REST):
//! - `off`: never (every write is its REST call).
//! - `on`: always (for a platform known to take the sections).
//! - `auto` (the provider's default): where the platform takes the sections. JFrog documents
//!   the YAML configuration patch for self-hosted instances only (since 5.8), and moved
//!   repository configuration out of the global descriptor in 7.49, so neither the version
//!   nor the deployment says it for sure: the platform is asked. A probe `PATCH` with an
//!   empty `localRepositories` map (a merge patch that changes nothing) must be answered
//!   2xx; a 400, 403, 404, 405 or 501 says the platform does not take the sections (REST
//!   from then on); another failure leaves the question open (that write goes by REST, the
//!   next asks again). The first repository a batch wrote is then read back by REST: a
//!   platform that answered 2xx but ignored the sections is found out there (REST from then
//!   on, and the batch's writes are made by REST).
//!
//! Writes are idempotent (an entry for an existing key is a merge, as the REST update), so
//! the writer's retries and a batch whose answer was lost never duplicate a repository: the
//! next observe finds it under its deterministic key and adopts it.

use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};

use http::Method;
use jfrog_client::{Error, Idempotency, JfrogClient, Service};
use provider_family::ProviderState;
use serde_json::{Map, Value};

use crate::configuration::descriptor::{self, Fallback};

/// When repository writes go through the descriptor writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BulkMode {
    /// Where the platform takes repository sections in its YAML configuration patch.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl FromStr for BulkMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(BulkMode::Auto),
            "on" => Ok(BulkMode::On),
            "off" => Ok(BulkMode::Off),
            other => Err(format!(
                "invalid --bulk-repository-writes value {other:?}: expected auto, on or off"
            )),
        }
    }
}

/// provider-artifactory's flags beyond the shared ones.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct Flags {
    /// Whether repository creations and updates go through the descriptor writer as YAML
    /// configuration patches (auto: where the platform takes repository sections; on:
    /// always; off: REST writes, one per repository).
    #[arg(long = "bulk-repository-writes", value_name = "auto|on|off", default_value = "auto", value_parser = BulkMode::from_str)]
    pub bulk: BulkMode,
}

/// What is known of a platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Support {
    Unknown,
    /// Takes the sections; `verified` once a batch's repository was read back.
    Yes {
        verified: bool,
    },
    No,
}

struct State {
    client: JfrogClient,
    support: Support,
    /// Single flight of the probe and of the read-back.
    asking: Arc<tokio::sync::Mutex<()>>,
}

/// The bulk repository writes of one provider: the mode (from `--bulk-repository-writes`
/// in the provider process) and what each platform it talks to was found to take, with the
/// single flight of its probe and read-back. The provider's client cache holds it
/// ([`provider_family::ClientCache::with_state`]) and hands it to every repository write, so
/// two providers, or two test environments, in one process never share it. Clones share
/// the state.
#[derive(Clone)]
pub struct BulkWrites {
    mode: BulkMode,
    platforms: Arc<Mutex<Vec<State>>>,
}

impl std::fmt::Debug for BulkWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkWrites")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl BulkWrites {
    /// Bulk writes in `mode`, nothing known of any platform yet.
    pub fn new(mode: BulkMode) -> Self {
        BulkWrites {
            mode,
            platforms: Arc::default(),
        }
    }

    /// The bulk writes a provider's state holds (`None`: writes by REST).
    pub fn of(state: &ProviderState) -> Option<&BulkWrites> {
        state.get::<BulkWrites>()
    }

    /// The mode.
    pub fn mode(&self) -> BulkMode {
        self.mode
    }

    fn with_state<T>(&self, client: &JfrogClient, f: impl FnOnce(&mut State) -> T) -> T {
        let mut all = self
            .platforms
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let i = match all.iter().position(|s| s.client.same(client)) {
            Some(i) => i,
            None => {
                all.push(State {
                    client: client.clone(),
                    support: Support::Unknown,
                    asking: Arc::new(tokio::sync::Mutex::new(())),
                });
                all.len() - 1
            }
        };
        f(&mut all[i])
    }

    /// Whether writes to this platform go through the descriptor writer now (probing it
    /// once in `auto`).
    async fn use_bulk(&self, client: &JfrogClient) -> bool {
        match self.mode {
            BulkMode::Off => return false,
            BulkMode::On => return true,
            BulkMode::Auto => {}
        }
        let (support, asking) = self.with_state(client, |s| (s.support, s.asking.clone()));
        if support != Support::Unknown {
            return matches!(support, Support::Yes { .. });
        }
        let _one = asking.lock().await;
        let support = self.with_state(client, |s| s.support);
        if support != Support::Unknown {
            return matches!(support, Support::Yes { .. });
        }
        match probe(client).await {
            Ok(()) => {
                tracing::info!(
                    "the platform takes repositories in its YAML configuration patch: bulk repository writes on"
                );
                self.with_state(client, |s| s.support = Support::Yes { verified: false });
                true
            }
            Err(e) if refuses(&e) => {
                tracing::info!(error = %e, "the platform does not take repositories in its YAML configuration patch: repository writes by REST");
                self.with_state(client, |s| s.support = Support::No);
                false
            }
            Err(e) => {
                tracing::debug!(error = %e, "bulk repository write probe failed; asking again later");
                false
            }
        }
    }

    /// After a batch wrote `key` (in `auto`, until one was confirmed): whether the platform
    /// really stored it. `false` marks the platform as not taking the sections.
    async fn confirmed(&self, client: &JfrogClient, key: &str) -> Result<bool, Error> {
        let asking = self.with_state(client, |s| s.asking.clone());
        let _one = asking.lock().await;
        match self.with_state(client, |s| s.support) {
            Support::Yes { verified: true } => return Ok(true),
            Support::No => return Ok(false),
            _ => {}
        }
        match client.artifactory().repositories().get(key).await {
            Ok(_) => {
                self.with_state(client, |s| s.support = Support::Yes { verified: true });
                Ok(true)
            }
            Err(e) if e.is_not_found() => {
                tracing::warn!(repository = %key, "the platform answered the YAML configuration patch but did not store the repository: repository writes by REST");
                self.with_state(client, |s| s.support = Support::No);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Write a repository: through the descriptor writer of `state`'s
    /// [`descriptor::Descriptors`] where bulk writes are on for this platform, else by its
    /// REST call (`create`: `PUT`, else `POST`).
    pub async fn write(
        &self,
        state: &ProviderState,
        client: &JfrogClient,
        key: &str,
        body: &Map<String, Value>,
        create: bool,
    ) -> Result<(), Error> {
        let rest = || rest_write(key, body, create)(client.clone());
        let Some(fragment) = fragment(key, body) else {
            return rest().await;
        };
        if !self.use_bulk(client).await {
            return rest().await;
        }
        let patched = descriptor::platform(state, client)
            .write_or(fragment, Some(rest_write(key, body, create)))
            .await?;
        let check = patched
            && self.mode == BulkMode::Auto
            && self.with_state(client, |s| s.support) != Support::Yes { verified: true };
        if check && !self.confirmed(client, key).await? {
            return rest().await;
        }
        Ok(())
    }
}

/// Whether a refusal of the probe says the platform does not take the sections (rather
/// than a passing failure).
fn refuses(e: &Error) -> bool {
    matches!(
        e,
        Error::BadRequest { .. } | Error::NotFound { .. } | Error::Forbidden { .. }
    ) || matches!(e.status(), Some(405 | 501))
}

async fn probe(client: &JfrogClient) -> Result<(), Error> {
    client
        .request(
            Service::Artifactory,
            Method::PATCH,
            descriptor::PATH,
            Idempotency::Idempotent,
        )
        .descriptor_write()
        .text("localRepositories: {}\n".to_string(), "application/yaml")
        .send_empty()
        .await
}

/// The YAML section of a repository class.
fn section(rclass: &str) -> Option<&'static str> {
    match rclass {
        "local" => Some("localRepositories"),
        "remote" => Some("remoteRepositories"),
        "virtual" => Some("virtualRepositories"),
        "federated" => Some("federatedRepositories"),
        _ => None,
    }
}

/// The YAML configuration fragment that makes `key` hold `body` (a REST create or update
/// body); `None` when the body has no class.
pub fn fragment(key: &str, body: &Map<String, Value>) -> Option<Value> {
    let section = section(body.get("rclass")?.as_str()?)?;
    let mut entry = body.clone();
    entry.remove("key");
    entry.remove("rclass");
    if let Some(t) = entry.remove("packageType") {
        entry.insert("type".into(), t);
    }
    let mut repos = Map::new();
    repos.insert(key.to_string(), Value::Object(entry));
    let mut doc = Map::new();
    doc.insert(section.to_string(), Value::Object(repos));
    Some(Value::Object(doc))
}

fn rest_write(key: &str, body: &Map<String, Value>, create: bool) -> Fallback {
    let key = key.to_string();
    let body = body.clone();
    Box::new(move |client: JfrogClient| {
        Box::pin(async move {
            let repos = client.artifactory().repositories();
            if create {
                repos.create(&key, &body).await
            } else {
                repos.update(&key, &body).await
            }
        })
    })
}

/// Write a repository with the bulk writes of `state` ([`BulkWrites::write`]), or by its
/// REST call when the provider has none.
pub async fn write(
    state: &ProviderState,
    client: &JfrogClient,
    key: &str,
    body: &Map<String, Value>,
    create: bool,
) -> Result<(), Error> {
    match BulkWrites::of(state) {
        Some(bulk) => bulk.write(state, client, key, body, create).await,
        None => rest_write(key, body, create)(client.clone()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rest_body_becomes_its_class_section_entry() {
        let body = json!({"key": "npm-remote", "rclass": "remote", "packageType": "npm",
                          "url": "https://registry.npmjs.org", "xrayIndex": true});
        let f = fragment("npm-remote", body.as_object().expect("object")).expect("has class");
        assert_eq!(
            f,
            json!({"remoteRepositories": {"npm-remote": {"type": "npm",
                   "url": "https://registry.npmjs.org", "xrayIndex": true}}})
        );
        assert!(fragment("x", json!({"packageType": "npm"}).as_object().expect("o")).is_none());
    }

    #[test]
    fn each_client_cache_holds_its_own_bulk_writes() {
        let connections = provider_common::Connections::default();
        let on = crate::client_cache(&connections, BulkMode::On);
        let auto = crate::client_cache(&connections, BulkMode::Auto);
        let library = provider_family::ClientCache::new(crate::PROVIDER);
        assert_eq!(
            BulkWrites::of(on.state()).map(BulkWrites::mode),
            Some(BulkMode::On)
        );
        assert_eq!(
            BulkWrites::of(auto.state()).map(BulkWrites::mode),
            Some(BulkMode::Auto)
        );
        // A cache built without them (tests, embedders) writes by REST.
        assert!(BulkWrites::of(library.state()).is_none());
    }

    #[test]
    fn the_flag_is_parsed_with_the_shared_ones() {
        use clap::{Args, FromArgMatches};
        let parse = |args: &[&str]| {
            let command = Flags::augment_args(clap::Command::new("p"));
            command
                .try_get_matches_from(args)
                .map_err(|e| e.to_string())
                .and_then(|m| Flags::from_arg_matches(&m).map_err(|e| e.to_string()))
                .map(|f| f.bulk)
        };
        assert_eq!(
            parse(&["p", "--bulk-repository-writes=on"]),
            Ok(BulkMode::On)
        );
        assert_eq!(
            parse(&["p", "--bulk-repository-writes", "off"]),
            Ok(BulkMode::Off)
        );
        assert_eq!(parse(&["p"]), Ok(BulkMode::Auto));
        let bad = parse(&["p", "--bulk-repository-writes=sometimes"]).unwrap_err();
        assert!(bad.contains("expected auto, on or off"), "{bad}");
    }
}
