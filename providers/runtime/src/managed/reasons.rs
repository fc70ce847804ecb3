//! Every event reason and condition reason the runtime writes, in one place.
//!
//! The strings are crossplane-runtime's (and Upjet's for `LastAsyncOperation`), exactly:
//! users and tools match on them (`kubectl get events --field-selector reason=...`, alerts,
//! the JFrog docs), so a typo in one call site would be a silent contract break. Call sites
//! use these constants, never a literal. A leaf module: it imports nothing.

/// Reasons of the core/v1 Events the managed reconciler and the config controllers record
/// (docs/managed-reconciler.md §8).
pub mod event {
    /// Warning: the external-name initialiser's write failed, or step 8 stopped because a
    /// create may have been interrupted.
    pub const CANNOT_INITIALIZE_MANAGED_RESOURCE: &str = "CannotInitializeManagedResource";
    /// Warning: reference resolution failed (step 9).
    pub const CANNOT_RESOLVE_RESOURCE_REFERENCES: &str = "CannotResolveResourceReferences";
    /// Warning: Connect failed (step 10).
    pub const CANNOT_CONNECT_TO_PROVIDER: &str = "CannotConnectToProvider";
    /// Warning: Disconnect failed.
    pub const CANNOT_DISCONNECT_FROM_PROVIDER: &str = "CannotDisconnectFromProvider";
    /// Warning: Observe failed, or an observe-only MR's external resource is missing.
    pub const CANNOT_OBSERVE_EXTERNAL_RESOURCE: &str = "CannotObserveExternalResource";
    /// Warning: Create failed.
    pub const CANNOT_CREATE_EXTERNAL_RESOURCE: &str = "CannotCreateExternalResource";
    /// Warning: Update failed.
    pub const CANNOT_UPDATE_EXTERNAL_RESOURCE: &str = "CannotUpdateExternalResource";
    /// Warning: Delete failed.
    pub const CANNOT_DELETE_EXTERNAL_RESOURCE: &str = "CannotDeleteExternalResource";
    /// Warning: a write of the MR itself failed (create-pending, critical annotations,
    /// late initialisation).
    pub const CANNOT_UPDATE_MANAGED_RESOURCE: &str = "CannotUpdateManagedResource";
    /// Warning: the connection-details Secret could not be written.
    pub const CANNOT_PUBLISH_CONNECTION_DETAILS: &str = "CannotPublishConnectionDetails";
    /// Warning: `spec.managementPolicies` is not a supported set.
    pub const CANNOT_USE_INVALID_MANAGEMENT_POLICY: &str = "CannotUseInvalidManagementPolicy";
    /// Normal: Create succeeded.
    pub const CREATED_EXTERNAL_RESOURCE: &str = "CreatedExternalResource";
    /// Normal: Update succeeded.
    pub const UPDATED_EXTERNAL_RESOURCE: &str = "UpdatedExternalResource";
    /// Normal: Delete succeeded.
    pub const DELETED_EXTERNAL_RESOURCE: &str = "DeletedExternalResource";
    /// Normal: within the creation grace period, a missing resource is waited for (step 13).
    pub const PENDING_EXTERNAL_RESOURCE: &str = "PendingExternalResource";
    /// Normal: the pause annotation or an empty policy set paused the MR.
    pub const RECONCILIATION_PAUSED: &str = "ReconciliationPaused";
    /// Normal: a new `crossplane.io/reconcile-requested-at` token is being handled.
    pub const RECONCILE_REQUEST_HANDLED: &str = "ReconcileRequestHandled";
    /// Warning: a ProviderConfig's usage accounting failed (config controllers).
    pub const USAGE_ACCOUNTING: &str = "UsageAccounting";
}

/// Reasons of `status.conditions` entries (docs/managed-reconciler.md §7, §13.2).
pub mod condition {
    /// `Ready=True`: the external resource exists.
    pub const AVAILABLE: &str = "Available";
    /// `Ready=False`: the external resource is not available.
    pub const UNAVAILABLE: &str = "Unavailable";
    /// `Ready=False`: the external resource is being created.
    pub const CREATING: &str = "Creating";
    /// `Ready=False`: the external resource is being deleted.
    pub const DELETING: &str = "Deleting";
    /// `Synced=True`: the last reconcile succeeded.
    pub const RECONCILE_SUCCESS: &str = "ReconcileSuccess";
    /// `Synced=False`: the last reconcile failed; the message says why.
    pub const RECONCILE_ERROR: &str = "ReconcileError";
    /// `Synced=False`: reconciliation is paused.
    pub const RECONCILE_PAUSED: &str = "ReconcilePaused";
    /// `LastAsyncOperation=True` (Upjet): the last operation succeeded.
    pub const SUCCESS: &str = "Success";
    /// `LastAsyncOperation=False` (Upjet): the last Create failed.
    pub const ASYNC_CREATE_FAILURE: &str = "AsyncCreateFailure";
    /// `LastAsyncOperation=False` (Upjet): the last Update failed.
    pub const ASYNC_UPDATE_FAILURE: &str = "AsyncUpdateFailure";
    /// `LastAsyncOperation=False` (Upjet): the last Delete failed.
    pub const ASYNC_DELETE_FAILURE: &str = "AsyncDeleteFailure";
    /// `Terminating=True` on a ProviderConfig: deletion waits while MRs still use it.
    pub const IN_USE: &str = "InUse";
}
