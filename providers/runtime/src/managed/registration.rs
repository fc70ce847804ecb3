//! What a provider binary registers per Kind ([`KindRegistration`]). The [`ControllerContext`]
//! the process hands every controller lives in [`super::context`] and is re-exported here.
//!
//! A provider declares a Kind once (a [`ManagedKind`] plus a [`Connector`]) and turns it into
//! an object-safe registration with [`register`]; the process starts `registration.start(ctx,
//! scope)` for each scope whose CRD is established and cancels `ctx.shutdown` to stop it.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::controller;
use super::external::{Connector, ManagedKind};
use super::kind::{KindInfo, Scope};
use super::preview::{self, Action, Planned, PreviewInput};

// The context moved to its own leaf module; these paths stay for existing users.
pub use super::context::{
    ControllerContext, DEFAULT_CREATION_GRACE_PERIOD, DEFAULT_MAX_RECONCILE_RATE,
    DEFAULT_MIN_POLL_INTERVAL, DEFAULT_POLL, DEFAULT_POLL_STATE_METRIC, DEFAULT_TIMEOUT,
    IN_FLIGHT_PER_RATE, MIN_IN_FLIGHT,
};

/// What a provider registers for one Kind. Object-safe.
pub trait KindRegistration: Send + Sync {
    /// The Kind declaration.
    fn info(&self) -> &KindInfo;
    /// JSON schema of `spec.forProvider` (and `spec.initProvider`).
    fn parameters_schema(&self) -> serde_json::Value;
    /// JSON schema of `status.atProvider`.
    fn observation_schema(&self) -> serde_json::Value;
    /// Run the Kind's controller in `scope` until `ctx.shutdown` is cancelled.
    fn start(&self, ctx: ControllerContext, scope: Scope) -> BoxFuture<'static, ()>;
    /// What the next reconcile of one MR would do, without a write (see [`preview::plan`]).
    fn preview(&self, input: PreviewInput) -> BoxFuture<'static, Planned> {
        let _ = input;
        let kind = self.info().kind;
        Box::pin(async move {
            Planned {
                action: Action::Blocked,
                external_name: String::new(),
                changes: Vec::new(),
                create: None,
                message: format!("{kind} cannot be previewed"),
                notes: Vec::new(),
            }
        })
    }
}

/// A Kind together with its connector.
pub struct Registration<K: ManagedKind> {
    kind: Arc<K>,
    connector: Arc<dyn Connector<K>>,
}

impl<K: ManagedKind> KindRegistration for Registration<K> {
    fn info(&self) -> &KindInfo {
        self.kind.info()
    }
    fn parameters_schema(&self) -> serde_json::Value {
        self.kind.parameters_schema()
    }
    fn observation_schema(&self) -> serde_json::Value {
        self.kind.observation_schema()
    }
    fn start(&self, ctx: ControllerContext, scope: Scope) -> BoxFuture<'static, ()> {
        let kind = self.kind.clone();
        let connector = self.connector.clone();
        Box::pin(async move { controller::run(kind, connector, ctx, scope).await })
    }
    fn preview(&self, input: PreviewInput) -> BoxFuture<'static, Planned> {
        let kind = self.kind.clone();
        let connector = self.connector.clone();
        Box::pin(async move { preview::plan(kind.as_ref(), connector.as_ref(), input).await })
    }
}

/// Turn a Kind and its connector into a registration.
pub fn register<K: ManagedKind, C: Connector<K> + 'static>(
    kind: K,
    connector: C,
) -> Arc<dyn KindRegistration> {
    Arc::new(Registration {
        kind: Arc::new(kind),
        connector: Arc::new(connector),
    })
}

/// Like [`register`], with shared handles (a connector shared by many Kinds of a family).
pub fn register_shared<K: ManagedKind>(
    kind: Arc<K>,
    connector: Arc<dyn Connector<K>>,
) -> Arc<dyn KindRegistration> {
    Arc::new(Registration { kind, connector })
}
