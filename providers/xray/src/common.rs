//! What the Xray families share: a REST binding whose delete only forgets (configuration
//! that JFrog cannot delete), the identifier of a server-assigned create, the project-scope
//! rule, and the registration of a group's declarations.

use async_trait::async_trait;
use jfrog_client::Error;
use provider_family::{Address, Cx, ListCall, Paths, Rest};
use serde_json::{Map, Value};

/// A binding whose objects cannot be deleted in JFrog (indexing configuration, worker
/// counts, repository configuration): deleting the MR forgets the object, JFrog keeps it.
#[derive(Debug)]
pub struct Forget(pub Paths);

#[async_trait]
impl Rest for Forget {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        self.0.read(cx, address).await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.0.create(cx, address, body).await
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.0.update(cx, address, body).await
    }
    async fn delete(&self, _cx: &Cx<'_>, _address: &Address) -> Result<(), Error> {
        Ok(())
    }
    fn list(&self) -> Option<&ListCall> {
        self.0.list()
    }
    fn forgets_on_delete(&self) -> bool {
        true
    }
}

/// A binding without an update call (Xray reports: created, read and deleted, never
/// changed; their parameters are in no answer). It declares so ([`Rest::updatable`] is
/// `false`), so the adapter never compares the parameters nor sends an update; an update
/// asked anyway fails here, without a request.
#[derive(Debug)]
pub struct NoUpdate(Paths);

impl NoUpdate {
    /// The binding of `create`, `read`, `delete` and `list` on `service`.
    pub const fn new(
        service: jfrog_client::Service,
        create: provider_family::Call,
        read: provider_family::Call,
        delete: provider_family::Call,
        list: Option<ListCall>,
    ) -> Self {
        NoUpdate(Paths {
            service,
            create,
            read,
            // Never used: `update` below answers without a request.
            update: read,
            delete,
            list,
            case_insensitive: false,
        })
    }
}

#[async_trait]
impl Rest for NoUpdate {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        self.0.read(cx, address).await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.0.create(cx, address, body).await
    }
    async fn update(
        &self,
        _cx: &Cx<'_>,
        address: &Address,
        _body: &Map<String, Value>,
    ) -> Result<(), Error> {
        Err(Error::UnexpectedStatus {
            ctx: jfrog_client::RequestContext {
                service: self.0.service,
                method: jfrog_client::Method::PUT,
                route: format!("{}{}", self.0.service.base_path(), self.0.read.path),
            },
            status: 405,
            message: format!("not sent: {address} cannot be changed, the API has no update call"),
        })
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        self.0.delete(cx, address).await
    }
    fn list(&self) -> Option<&ListCall> {
        self.0.list()
    }
    fn updatable(&self) -> bool {
        false
    }
}

/// The identifier in a create's answer: `member` as a string, or a number written in
/// decimal (Xray's report and curation IDs are numbers).
pub fn answer_id(answer: &Value, member: &str) -> Option<String> {
    match answer.get(member)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The project of a scoped address (canonically `12?projectKey=team`, or
/// `?projectKey=team` for a create): the Kinds with a `projectKey` send it as a query
/// parameter on every call (see `catalog/overrides.json`), so the family layer carries it in
/// the address's query.
pub fn project_of(address: &Address) -> Option<&str> {
    address
        .query()
        .iter()
        .find(|(n, v)| n == "projectKey" && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

/// The group functions every Xray group module has: `declarations`, `kinds` (composed
/// once per process) and `registrations` (sharing the provider's client cache).
macro_rules! group_fns {
    () => {
        /// Every declared Kind of the group.
        pub fn declarations() -> &'static [provider_family::Kind] {
            tables::KINDS
        }

        /// Every Kind of the group, composed once per process.
        pub fn kinds() -> &'static [std::sync::Arc<provider_family::FamilyKind>] {
            static KINDS: std::sync::OnceLock<Vec<std::sync::Arc<provider_family::FamilyKind>>> =
                std::sync::OnceLock::new();
            KINDS.get_or_init(|| {
                provider_family::compose_with_references(
                    tables::KINDS,
                    crate::checks::CHECKS,
                    crate::references::REFERENCES,
                )
            })
        }

        /// The runtime registrations of the group, sharing the provider's client cache.
        pub fn registrations(
            cache: std::sync::Arc<provider_family::ClientCache>,
        ) -> Vec<std::sync::Arc<dyn provider_runtime::managed::registration::KindRegistration>> {
            provider_family::registrations(kinds(), cache)
        }
    };
}
pub(crate) use group_fns;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answer_ids_and_project_scope() {
        assert_eq!(
            answer_id(&json!({"report_id": 12}), "report_id").as_deref(),
            Some("12")
        );
        assert_eq!(
            answer_id(&json!({"id": "a-1"}), "id").as_deref(),
            Some("a-1")
        );
        assert_eq!(answer_id(&json!({"id": ""}), "id"), None);
        let scoped = Address::new("12").with_query("projectKey", "team");
        assert_eq!(scoped.to_string(), "12?projectKey=team");
        assert_eq!(project_of(&scoped), Some("team"));
        let create = Address::unknown().with_query("projectKey", "team");
        assert_eq!(create.to_string(), "?projectKey=team");
        assert_eq!(project_of(&create), Some("team"));
        assert_eq!(project_of(&Address::new("12")), None);
        assert_eq!(project_of(&Address::unknown()), None);
        // Every Kind with a projectKey sends it as the query parameter of its calls.
        let all = [
            crate::policy::declarations(),
            crate::configuration::declarations(),
            crate::report::declarations(),
            crate::watch::declarations(),
            crate::webhook::declarations(),
        ];
        let mut scoped = Vec::new();
        for d in all.iter().flat_map(|g| g.iter()) {
            let kind = d.resolve().expect("composes");
            if let Some(f) = kind.field("projectKey") {
                assert!(f.query, "{}: projectKey is a query field", d.kind);
                scoped.push(d.kind);
            }
        }
        assert_eq!(scoped.len(), 13, "{scoped:?}");
    }
}

/// A binding whose objects made in a project (`?projectKey=` in the address) carry the
/// project in their body too, where Xray wants it and no declared field says it: `in_project`
/// adds it to a create or update body. The read answers it where no declared field looks, so
/// it is no drift.
#[derive(Debug)]
pub struct ProjectScoped {
    /// The calls.
    pub paths: Paths,
    /// Adds the project (its key) to a body to be sent in that project.
    pub in_project: fn(&str, &mut Map<String, Value>),
}

impl ProjectScoped {
    /// `body` as it is sent for the object at `address`.
    pub fn body(&self, address: &Address, body: &Map<String, Value>) -> Map<String, Value> {
        let mut body = body.clone();
        if let Some(project) = project_of(address) {
            (self.in_project)(project, &mut body);
        }
        body
    }
}

#[async_trait]
impl Rest for ProjectScoped {
    async fn read(&self, cx: &Cx<'_>, address: &Address) -> Result<Value, Error> {
        self.paths.read(cx, address).await
    }
    async fn create(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<Value, Error> {
        self.paths
            .create(cx, address, &self.body(address, body))
            .await
    }
    async fn update(
        &self,
        cx: &Cx<'_>,
        address: &Address,
        body: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.paths
            .update(cx, address, &self.body(address, body))
            .await
    }
    async fn delete(&self, cx: &Cx<'_>, address: &Address) -> Result<(), Error> {
        self.paths.delete(cx, address).await
    }
    fn list(&self) -> Option<&ListCall> {
        self.paths.list()
    }
}
