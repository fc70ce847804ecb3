//! Error text shared by the `managed` modules: the fixed messages of the reference and the
//! helpers that turn a Kubernetes API error into the text Crossplane prints.
//!
//! A leaf module (it imports nothing from `managed`): the reconciler, connection publishing,
//! reference resolution and the ProviderConfig code all use it, so none of them has to import
//! another for a message.

/// The creation-incomplete stop message (docs/managed-reconciler.md §2 step 8, Appendix A).
pub const MSG_CREATION_INCOMPLETE: &str = "cannot determine creation result - remove the crossplane.io/external-create-pending annotation if it is safe to proceed";

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
