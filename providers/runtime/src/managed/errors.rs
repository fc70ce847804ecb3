//! Error text shared by the `managed` modules: the fixed messages of the reference and the
//! helpers that turn a Kubernetes API error into the text Crossplane prints.
//!
//! A leaf module (it imports nothing from `managed`): the reconciler, connection publishing,
//! reference resolution and the ProviderConfig code all use it, so none of them has to import
//! another for a message.

/// The creation-incomplete stop message (reference §2 step 8, Appendix A).
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
