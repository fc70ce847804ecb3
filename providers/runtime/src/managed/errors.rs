//! Error text shared by the `managed` modules: the fixed messages of the reference and the
//! helpers that turn a Kubernetes API error into the text Crossplane prints.
//!
//! A leaf module (it imports nothing from `managed`): the reconciler, connection publishing,
//! reference resolution and the ProviderConfig code all use it, so none of them has to import
//! another for a message.

/// `errCreateIncomplete`: the creation-incomplete stop message (docs/managed-reconciler.md §2
/// step 8, Appendix A).
pub const MSG_CREATION_INCOMPLETE: &str = "cannot determine creation result - remove the crossplane.io/external-create-pending annotation if it is safe to proceed";

// The texts crossplane-runtime names as constants (pkg/reconciler/managed/reconciler.go and
// api.go; the Go name in each doc); the reconciler prefixes them to the cause as
// `<text>: <cause>`. The conformance tests assert them verbatim.

/// `errGetManaged`: reading the managed resource failed.
pub const ERR_GET_MANAGED: &str = "cannot get managed resource";
/// `errUpdateManagedAnnotations`: writing the managed resource's annotations failed.
pub const ERR_UPDATE_MANAGED_ANNOTATIONS: &str = "cannot update managed resource annotations";
/// `errReconcileConnect`: the external client could not be connected.
pub const ERR_RECONCILE_CONNECT: &str = "connect failed";
/// `errReconcileObserve`: observing the external resource failed.
pub const ERR_RECONCILE_OBSERVE: &str = "observe failed";
/// `errReconcileCreate`: creating the external resource failed.
pub const ERR_RECONCILE_CREATE: &str = "create failed";
/// `errReconcileUpdate`: updating the external resource failed.
pub const ERR_RECONCILE_UPDATE: &str = "update failed";
/// `errReconcileDelete`: deleting the external resource failed.
pub const ERR_RECONCILE_DELETE: &str = "delete failed";
/// `errExternalResourceNotExist`: an observe-only resource whose external resource is missing.
pub const ERR_EXTERNAL_RESOURCE_NOT_EXIST: &str = "external resource does not exist";
/// `errUpdateManaged` (api.go): writing the managed resource failed.
pub const ERR_UPDATE_MANAGED: &str = "cannot update managed resource";
/// `errUpdateManagedStatus` (api.go): writing the managed resource's status failed.
pub const ERR_UPDATE_MANAGED_STATUS: &str = "cannot update managed resource status";
/// `errUpdateCriticalAnnotations` (api.go): the critical-annotation write failed.
pub const ERR_UPDATE_CRITICAL_ANNOTATIONS: &str = "cannot update critical annotations";
/// `errResolveReferences` (api.go): reference resolution failed.
pub const ERR_RESOLVE_REFERENCES: &str = "cannot resolve references";
/// `errPatchManaged` (api.go): the server-side apply of resolved references failed (after
/// [`ERR_RESOLVE_REFERENCES`]).
pub const ERR_PATCH_MANAGED: &str = "cannot patch the managed resource via server-side apply";
/// `errUpdateObject` (pkg/resource/api.go): a finalizer add or remove failed.
pub const ERR_UPDATE_OBJECT: &str = "cannot update object";
/// Go's `context.DeadlineExceeded` text: an external call or step outlived its deadline.
pub const ERR_CONTEXT_DEADLINE: &str = "context deadline exceeded";
/// The whole reconcile outlived its deadline.
pub const ERR_RECONCILE_DEADLINE: &str = "reconcile deadline exceeded";

/// The Kubernetes API error text as Go prints a `StatusError`: the API server's
/// `Status.message`, not kube-rs's debug rendering.
pub fn kube_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => s.message.clone(),
        other => other.to_string(),
    }
}

/// A Kubernetes 409 Conflict (a stale `resourceVersion`): the reconciler backs off silently.
pub fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// A Kubernetes 404 Not Found.
pub fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// Why a reconcile step that writes to Kubernetes (or resolves a ProviderConfig, publishes a
/// Secret, patches references) did not succeed: either a 409 Conflict, which the reconciler
/// answers with a silent BACKOFF (the object changed under us; the next reconcile starts from
/// the new version), or any other failure with the text that goes into events and
/// conditions.
///
/// This is the one encoding of "conflict or failure" in the reconciler; every write helper
/// returns it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// A Kubernetes 409 Conflict. The text is kept for the one place that reports it anyway
    /// (a failed create's annotation write, docs/managed-reconciler.md §2 step 17.3).
    #[error("{0}")]
    Conflict(String),
    /// Any other failure.
    #[error("{0}")]
    Failed(String),
}

impl StepError {
    /// A conflict when `conflict` is true, otherwise a failure.
    pub fn new(conflict: bool, message: impl Into<String>) -> Self {
        if conflict {
            StepError::Conflict(message.into())
        } else {
            StepError::Failed(message.into())
        }
    }

    /// Whether this is a Kubernetes conflict.
    pub fn is_conflict(&self) -> bool {
        matches!(self, StepError::Conflict(_))
    }

    /// The text, whichever the kind.
    pub fn message(&self) -> &str {
        match self {
            StepError::Conflict(m) | StepError::Failed(m) => m,
        }
    }

    /// The same kind of error with `<prefix>: ` in front of the text.
    pub fn context(self, prefix: &str) -> Self {
        match self {
            StepError::Conflict(m) => StepError::Conflict(format!("{prefix}: {m}")),
            StepError::Failed(m) => StepError::Failed(format!("{prefix}: {m}")),
        }
    }
}

impl From<kube::Error> for StepError {
    fn from(e: kube::Error) -> Self {
        StepError::new(is_conflict(&e), kube_message(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, "Reason")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn kube_errors_split_into_conflict_and_failure() {
        let c = StepError::from(api_error(409, "the object has been modified"));
        assert_eq!(
            c,
            StepError::Conflict("the object has been modified".into())
        );
        assert!(c.is_conflict());
        let f = StepError::from(api_error(403, "forbidden"));
        assert_eq!(f, StepError::Failed("forbidden".into()));
        assert_eq!(
            f.context("cannot update object").to_string(),
            "cannot update object: forbidden"
        );
        assert!(is_not_found(&api_error(404, "gone")));
        assert!(!is_conflict(&api_error(404, "gone")));
    }
}
