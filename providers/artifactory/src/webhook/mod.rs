//! Every webhook Kind of provider-artifactory: `<Domain>Webhook` and `<Domain>CustomWebhook`
//! for the twelve event domains, on the Event service's subscriptions
//! (`/event/api/v1/subscriptions`), declared as data on the family layer.
//!
//! What the family owns is small: the REST binding ([`REST`], plain data: create `POST`,
//! read `GET`, replace `PUT`, `DELETE`, and one `GET /event/api/v1/subscriptions` per poll
//! that observes every webhook MR), the key rule ([`HOOKS`]: 2 to 200 characters without
//! spaces) and the example manifests. The domain is an identity member (an existing
//! subscription of another domain under the same key is an error, not drift), a handler's
//! type a constant member, and the allowed event types and each domain's criteria rules
//! are checked at admission.
//!
//! # Secrets
//!
//! A handler's `secretSecretRef` (a key of a Secret) and a custom handler's
//! `secretsSecretRef` (a whole Secret: every key is a secret name) are sent on every write
//! and never read back (JFrog does not return them); they are compared by a salted hash of
//! what was last sent, per handler list, so a rotated Secret value is sent again and the
//! values appear in no status, event or log.
//!
//! # Catalog corrections
//!
//! - `selectedBuilds`, `registeredReleaseBundleNames` and `selectedReleaseBundles` have no
//!   default in the catalog but upstream sends them as an empty list when unset (and reads a
//!   missing one as empty): they default to `[]`.
//! - The domain's criteria rules, given in the catalog's notes as prose, are CEL rules on
//!   the `criteria` element.

pub mod examples;
#[rustfmt::skip]
pub mod tables;

use std::sync::{Arc, OnceLock};

use jfrog_client::Service;
use provider_family::{
    Call, ClientCache, FamilyHooks, FamilyKind, Hooks, Kind, ListCall, ListShape, Paths, Verb,
};
use provider_runtime::managed::registration::KindRegistration;

/// The Event service's subscription calls.
pub static REST: Paths = Paths {
    service: Service::Event,
    create: Call::new(Verb::Post, "/api/v1/subscriptions"),
    read: Call::new(Verb::Get, "/api/v1/subscriptions/{key}"),
    update: Call::new(Verb::Put, "/api/v1/subscriptions/{key}"),
    delete: Call::new(Verb::Delete, "/api/v1/subscriptions/{key}"),
    list: Some(ListCall {
        service: Service::Event,
        path: "/api/v1/subscriptions",
        shape: ListShape::Array,
        key_member: "key",
    }),
    case_insensitive: false,
};

/// The webhook family's hooks.
pub static HOOKS: WebhookHooks = WebhookHooks;

/// The webhook family's behaviour: the key rule.
#[derive(Debug, Clone, Copy)]
pub struct WebhookHooks;

impl FamilyHooks for WebhookHooks {
    fn id_description(&self) -> &'static str {
        "The webhook (subscription) key."
    }

    fn check_key(&self, key: &str) -> Result<(), String> {
        let n = key.chars().count();
        if !(2..=200).contains(&n) {
            return Err(format!(
                "a webhook key has 2 to 200 characters, this one has {n}"
            ));
        }
        if key.chars().any(char::is_whitespace) {
            return Err("a webhook key cannot contain spaces".into());
        }
        Ok(())
    }
}

impl Hooks for WebhookHooks {}

/// Every declared webhook Kind.
pub fn declarations() -> &'static [Kind] {
    tables::KINDS
}

/// Every webhook Kind, composed once per process.
pub fn kinds() -> &'static [Arc<FamilyKind>] {
    static KINDS: OnceLock<Vec<Arc<FamilyKind>>> = OnceLock::new();
    KINDS.get_or_init(|| {
        provider_family::compose_with_references(
            tables::KINDS,
            crate::checks::CHECKS,
            crate::references::REFERENCES,
        )
    })
}

/// The runtime registrations of every webhook Kind, sharing the provider's client cache.
pub fn registrations(cache: Arc<ClientCache>) -> Vec<Arc<dyn KindRegistration>> {
    provider_family::registrations(kinds(), cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_24_webhook_kinds_compose_with_their_domain() {
        assert_eq!(tables::KINDS.len(), 24);
        for d in tables::KINDS {
            let k = d.resolve().expect("composes");
            assert!(
                d.identity_value("event_filter.domain").is_some(),
                "{}",
                d.kind
            );
            let events = k.field("eventTypes").expect("eventTypes");
            assert!(
                !events.enums.is_empty(),
                "{}: no allowed event types",
                d.kind
            );
            assert!(k.field("handler").is_some());
        }
    }

    /// The generated CRDs pass the API server's CRD rules, every example (both scopes)
    /// validates without pruning, and the admission checks refuse an event type of another
    /// domain and criteria that break the domain's rule, naming the field.
    #[test]
    fn crds_accept_the_examples_and_refuse_invalid_webhooks() {
        use serde_json::json;
        let regs = registrations(Arc::new(ClientCache::new(crate::PROVIDER)));
        let crds = provider_family_suite::CrdSchemas::new("artifactory", &regs);
        crds.accept_examples(tables::KINDS, examples::example);
        let d = tables::KINDS
            .iter()
            .find(|d| d.kind == "ArtifactWebhook")
            .expect("declared");
        let schema = crds.schema(d, false);
        let mut bad = examples::example(d, false);
        bad["spec"]["forProvider"]["eventTypes"] = json!(["pushed"]);
        let errs = format!("{:?}", schema.validate(&bad, None));
        assert!(errs.contains("eventTypes"), "{errs}");
        let mut bad = examples::example(d, false);
        bad["spec"]["forProvider"]["criteria"] =
            json!([{"anyLocal": false, "anyRemote": false, "anyFederated": false, "repoKeys": []}]);
        let errs = format!("{:?}", schema.validate(&bad, None));
        assert!(errs.contains("repoKeys must not be empty"), "{errs}");
        let b = tables::KINDS
            .iter()
            .find(|d| d.kind == "BuildWebhook")
            .expect("declared");
        let schema = crds.schema(b, false);
        let mut bad = examples::example(b, false);
        bad["spec"]["forProvider"]["criteria"] =
            json!([{"anyBuild": true, "includePatterns": ["x/**"]}]);
        let errs = format!("{:?}", schema.validate(&bad, None));
        assert!(
            errs.contains("only be set when anyBuild is false"),
            "{errs}"
        );
    }

    #[test]
    fn webhook_keys_follow_the_event_service_rule() {
        assert!(HOOKS.check_key("artifact-deployed").is_ok());
        assert!(HOOKS.check_key("a").is_err());
        assert!(HOOKS.check_key("has space").is_err());
        assert!(HOOKS.check_key(&"k".repeat(201)).is_err());
    }
}
