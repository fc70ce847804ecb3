//! Reconciler behaviour beyond the checklist items: panic recovery (§1.3) and typed
//! parameters.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use provider_runtime::managed::meta;
use provider_runtime::managed::*;
use serde_json::{Value, json};

use crate::harness::*;

// §1.3: the reconciler runs with panic recovery; a panic counts as an error (BACKOFF).
#[tokio::test]
async fn panicking_adapter_backs_off_and_recovers() {
    let e = Env::new().await;
    e.script().store.insert("w1".into(), json!({}));
    e.script().panic_once = true;
    e.create(N, "w1", json!({}), &[(meta::EXTERNAL_NAME, "w1")])
        .await;
    let (stop, h) = start_controller(&e, N).await;
    wait_for(|| async {
        let o = e.get(N, "w1").await?;
        (cond(&o, "Synced").is_some_and(|c| c.status == "True")).then_some(())
    })
    .await;
    assert!(e.calls().iter().filter(|c| *c == "observe").count() >= 2);
    stop.cancel();
    h.await.expect("controller survives the panic and stops");
}

// Typed parameters work like `serde_json::Value` ones: the same CRD, a struct with optional
// fields, initProvider merged into the create parameters.
#[derive(Clone, Default, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TypedParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<String>,
}

#[derive(Clone, Default, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct TypedObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
}

struct TypedWidget {
    info: KindInfo,
}

impl ManagedKind for TypedWidget {
    type Parameters = TypedParams;
    type Observation = TypedObservation;
    fn info(&self) -> &KindInfo {
        &self.info
    }
    fn parameters_schema(&self) -> Value {
        json_schema_for::<TypedParams>()
    }
    fn observation_schema(&self) -> Value {
        json_schema_for::<TypedObservation>()
    }
}

#[derive(Default)]
struct TypedStore {
    created: Vec<TypedParams>,
    exists: bool,
}

struct TypedClient(Arc<Mutex<TypedStore>>);

#[async_trait]
impl ExternalClient<TypedWidget> for TypedClient {
    async fn observe(
        &self,
        mr: &mut Managed<TypedWidget>,
    ) -> Result<ExternalObservation, ExternalError> {
        let exists = self.0.lock().expect("store").exists;
        if exists {
            mr.at_provider.id = Some(mr.external_name.clone());
        }
        Ok(ExternalObservation {
            resource_exists: exists,
            resource_up_to_date: true,
            ..Default::default()
        })
    }
    async fn create(
        &self,
        mr: &mut Managed<TypedWidget>,
    ) -> Result<ExternalCreation, ExternalError> {
        let mut s = self.0.lock().expect("store");
        s.created.push(mr.create_parameters.clone());
        s.exists = true;
        Ok(ExternalCreation::default())
    }
    async fn update(&self, _: &mut Managed<TypedWidget>) -> Result<ExternalUpdate, ExternalError> {
        Ok(ExternalUpdate::default())
    }
    async fn delete(&self, _: &mut Managed<TypedWidget>) -> Result<ExternalDelete, ExternalError> {
        Ok(ExternalDelete::default())
    }
}

struct TypedConnector(Arc<Mutex<TypedStore>>);

#[async_trait]
impl Connector<TypedWidget> for TypedConnector {
    async fn connect(
        &self,
        _: &ResolvedConfig,
        _: &Managed<TypedWidget>,
    ) -> Result<Box<dyn ExternalClient<TypedWidget>>, ExternalError> {
        Ok(Box::new(TypedClient(self.0.clone())))
    }
}

#[tokio::test]
async fn typed_parameters_round_trip() {
    let e = Env::new().await;
    let store = Arc::new(Mutex::new(TypedStore::default()));
    let r = Reconciler::new(
        Arc::new(TypedWidget {
            info: widget_kind().info,
        }),
        Arc::new(TypedConnector(store.clone())),
        e.ctx(),
        N,
    );
    e.create(
        N,
        "w1",
        json!({"forProvider": {"x": "b"}, "initProvider": {"description": "a", "x": "a"}}),
        &[],
    )
    .await;
    assert_eq!(r.reconcile(Some(NS), "w1").await, Outcome::Backoff);
    let created = store.lock().expect("store").created.clone();
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].description.as_deref(), Some("a"));
    assert_eq!(created[0].x.as_deref(), Some("b"));
    let o = r.reconcile(Some(NS), "w1").await;
    assert!(is_after_poll(&o), "{o:?}");
    assert_eq!(at_provider(&e.must(N, "w1").await)["id"], "w1");
    // The schema helper gives an object schema with the fields.
    let schema = json_schema_for::<TypedParams>();
    assert!(
        schema["properties"].get("description").is_some(),
        "{schema}"
    );
}
