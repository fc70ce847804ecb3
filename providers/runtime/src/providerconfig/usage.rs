//! ProviderConfigUsage records: one per managed resource, named after its UID (§9.4).
//!
//! A modern MR records a namespaced `ProviderConfigUsage` in its own namespace (also when it
//! uses a ClusterProviderConfig); a legacy MR records a cluster-scoped legacy one. The record
//! is owned (controller owner reference) by the MR, so Kubernetes garbage collection removes it
//! with the MR; the provider never deletes it on that path.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Api;
use kube::api::{DynamicObject, PostParams};

use super::types::{ConfigApi, ConfigKind};
use super::{
    LABEL_PROVIDER_CONFIG, LABEL_PROVIDER_CONFIG_KIND, ManagedRef, ResolveError, kube_message,
};

/// The usage record an MR should have, as a dynamic object ready to create or replace.
pub fn desired_usage(api: &ConfigApi, mr: &ManagedRef) -> Result<DynamicObject, ResolveError> {
    let pc_ref = mr
        .provider_config_ref
        .as_ref()
        .ok_or(ResolveError::NoReference)?;
    let owner = OwnerReference {
        api_version: mr.api_version.clone(),
        kind: mr.kind.clone(),
        name: mr.name.clone(),
        uid: mr.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let resource_ref = serde_json::json!({
        "apiVersion": mr.api_version, "kind": mr.kind, "name": mr.name,
    });
    let mut labels = BTreeMap::new();
    labels.insert(LABEL_PROVIDER_CONFIG.to_string(), pc_ref.name.clone());
    let (usage_kind, pc_json) = if mr.scope.is_namespaced() {
        let kind = pc_ref
            .kind
            .clone()
            .filter(|k| !k.is_empty())
            .ok_or(ResolveError::NoKind)?;
        labels.insert(LABEL_PROVIDER_CONFIG_KIND.to_string(), kind.clone());
        (
            ConfigKind::ProviderConfigUsage,
            serde_json::json!({"kind": kind, "name": pc_ref.name}),
        )
    } else {
        (
            ConfigKind::LegacyProviderConfigUsage,
            serde_json::json!({"name": pc_ref.name}),
        )
    };
    let ar = api.api_resource(usage_kind);
    let mut obj = DynamicObject::new(&mr.uid, &ar);
    obj.metadata = ObjectMeta {
        name: Some(mr.uid.clone()),
        namespace: if mr.scope.is_namespaced() {
            mr.namespace.clone()
        } else {
            None
        },
        labels: Some(labels),
        owner_references: Some(vec![owner]),
        ..ObjectMeta::default()
    };
    obj.data = serde_json::json!({"providerConfigRef": pc_json, "resourceRef": resource_ref});
    Ok(obj)
}

fn usage_api(client: &kube::Client, api: &ConfigApi, mr: &ManagedRef) -> Api<DynamicObject> {
    if mr.scope.is_namespaced() {
        let ar = api.api_resource(ConfigKind::ProviderConfigUsage);
        Api::namespaced_with(
            client.clone(),
            mr.namespace.as_deref().unwrap_or_default(),
            &ar,
        )
    } else {
        Api::all_with(
            client.clone(),
            &api.api_resource(ConfigKind::LegacyProviderConfigUsage),
        )
    }
}

/// The UID of an object's controller owner, if any.
pub fn controller_uid(obj: &DynamicObject) -> Option<&str> {
    obj.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.as_str())
}

/// Creates or updates the MR's usage record ("track before use").
pub async fn track_usage(
    client: &kube::Client,
    api: &ConfigApi,
    mr: &ManagedRef,
) -> Result<(), ResolveError> {
    let desired = desired_usage(api, mr)?;
    let usages = usage_api(client, api, mr);
    let apply_err = |e: &kube::Error| ResolveError::ApplyUsage(kube_message(e));
    match usages.get_opt(&mr.uid).await.map_err(|e| apply_err(&e))? {
        None => match usages.create(&PostParams::default(), &desired).await {
            Ok(_) => Ok(()),
            // A concurrent reconcile of the same MR created it first: same content.
            Err(kube::Error::Api(s)) if s.is_already_exists() => Ok(()),
            Err(e) => Err(apply_err(&e)),
        },
        Some(current) => {
            if controller_uid(&current) != Some(mr.uid.as_str()) {
                return Err(ResolveError::ApplyUsage(format!(
                    "existing object is not controlled by UID \"{}\"",
                    mr.uid
                )));
            }
            if current.data.get("providerConfigRef") == desired.data.get("providerConfigRef") {
                return Ok(());
            }
            let mut next = desired;
            next.metadata.resource_version = current.metadata.resource_version.clone();
            match usages.replace(&mr.uid, &PostParams::default(), &next).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.is_conflict() => {
                    Err(ResolveError::ApplyUsageConflict(s.message.clone()))
                }
                Err(e) => Err(apply_err(&e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ProviderConfigReference;
    use super::*;

    fn mr(ns: Option<&str>, kind: Option<&str>) -> ManagedRef {
        ManagedRef {
            scope: if ns.is_some() {
                crate::managed::kind::Scope::Namespaced
            } else {
                crate::managed::kind::Scope::Cluster
            },
            api_version: "repository.artifactory.m.crossplane.io/v1alpha1".into(),
            kind: "LocalGenericRepository".into(),
            name: "r".into(),
            namespace: ns.map(str::to_string),
            uid: "uid-1".into(),
            provider_config_ref: Some(ProviderConfigReference {
                kind: kind.map(str::to_string),
                name: "default".into(),
            }),
        }
    }

    #[test]
    fn modern_record_shape() {
        let u = desired_usage(
            &ConfigApi::new("artifactory"),
            &mr(Some("a"), Some("ClusterProviderConfig")),
        )
        .unwrap();
        assert_eq!(u.metadata.name.as_deref(), Some("uid-1"));
        assert_eq!(u.metadata.namespace.as_deref(), Some("a"));
        let labels = u.metadata.labels.unwrap();
        assert_eq!(labels[LABEL_PROVIDER_CONFIG], "default");
        assert_eq!(labels[LABEL_PROVIDER_CONFIG_KIND], "ClusterProviderConfig");
        assert_eq!(u.data["providerConfigRef"]["kind"], "ClusterProviderConfig");
        assert_eq!(u.data["resourceRef"]["kind"], "LocalGenericRepository");
        assert!(u.data["resourceRef"].get("uid").is_none());
        let owner = &u.metadata.owner_references.unwrap()[0];
        assert_eq!(owner.controller, Some(true));
        assert_eq!(owner.block_owner_deletion, Some(true));
    }

    #[test]
    fn legacy_record_and_errors() {
        let api = ConfigApi::new("xray");
        let u = desired_usage(&api, &mr(None, None)).unwrap();
        assert!(u.metadata.namespace.is_none());
        assert_eq!(u.metadata.labels.unwrap().len(), 1);
        assert_eq!(u.types.unwrap().api_version, "xray.crossplane.io/v1beta1");
        assert_eq!(
            desired_usage(&api, &mr(Some("a"), None))
                .unwrap_err()
                .to_string(),
            "managed resource ProviderConfig reference has no Kind"
        );
        let mut none = mr(Some("a"), None);
        none.provider_config_ref = None;
        assert_eq!(
            desired_usage(&api, &none).unwrap_err().to_string(),
            "managed resource does not reference a ProviderConfig"
        );
    }
}
