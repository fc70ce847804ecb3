//! The reconciler's reads and writes of its managed resource: kube's `Api` calls (same
//! requests, same errors), with the answers decoded in one pass and without
//! `metadata.managedFields`, which no step of the reconcile reads.
//!
//! kube's `DynamicObject` decoder has two flattened fields (the type fields and the data), so
//! serde first buffers the whole object into a generic tree and then decodes that again; every
//! reconcile reads its MR (step 1) and each of its writes answers the whole object, so that
//! second pass was paid several times per reconcile, for the managed fields too.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ApiResource, DynamicObject, GetParams, Patch, PatchParams, PostParams, TypeMeta};
use kube::core::Request;
use kube::{Api, Error};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The API of one Kind in one namespace (or cluster-wide), for the reconciler.
#[derive(Clone)]
pub(crate) struct MrApi {
    client: kube::Client,
    request: Request,
    api: Api<DynamicObject>,
}

impl MrApi {
    /// The API of `ar`'s objects in `namespace` (`None`: cluster-scoped, or all).
    pub(crate) fn new(client: kube::Client, ar: &ApiResource, namespace: Option<&str>) -> Self {
        let api = match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
            None => Api::all_with(client.clone(), ar),
        };
        MrApi {
            request: Request::new(api.resource_url()),
            client,
            api,
        }
    }

    /// The object, or `None` when it does not exist.
    pub(crate) async fn get_opt(&self, name: &str) -> kube::Result<Option<DynamicObject>> {
        match self.get(name).await {
            Ok(o) => Ok(Some(o)),
            Err(Error::Api(status)) if status.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The object.
    pub(crate) async fn get(&self, name: &str) -> kube::Result<DynamicObject> {
        let mut req = self
            .request
            .get(name, &GetParams::default())
            .map_err(Error::BuildRequest)?;
        req.extensions_mut().insert("get");
        self.send(req).await
    }

    /// A full update.
    pub(crate) async fn replace(
        &self,
        name: &str,
        pp: &PostParams,
        obj: &DynamicObject,
    ) -> kube::Result<DynamicObject> {
        self.put(name, pp, obj, false).await
    }

    /// A status update.
    pub(crate) async fn replace_status(
        &self,
        name: &str,
        pp: &PostParams,
        obj: &DynamicObject,
    ) -> kube::Result<DynamicObject> {
        self.put(name, pp, obj, true).await
    }

    /// A full update, of the object or of its status subresource, as kube's `replace` and
    /// `replace_status` send it.
    async fn put(
        &self,
        name: &str,
        pp: &PostParams,
        obj: &DynamicObject,
        status: bool,
    ) -> kube::Result<DynamicObject> {
        let body = serde_json::to_vec(obj).map_err(Error::SerdeError)?;
        let (req, verb) = if status {
            let req = self.request.replace_subresource("status", name, pp, body);
            (req, "replace_status")
        } else {
            (self.request.replace(name, pp, body), "replace")
        };
        let mut req = req.map_err(Error::BuildRequest)?;
        req.extensions_mut().insert(verb);
        self.send(req).await
    }

    /// A patch (kube's call).
    pub(crate) async fn patch<P: serde::Serialize + std::fmt::Debug>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> kube::Result<DynamicObject> {
        self.api.patch(name, pp, patch).await
    }

    async fn send(&self, req: http::Request<Vec<u8>>) -> kube::Result<DynamicObject> {
        let text = self.client.request_text(req).await?;
        decode(&text).map_err(Error::SerdeError)
    }
}

/// An object as the API server answers it, without `metadata.managedFields`.
pub(crate) fn decode(text: &str) -> Result<DynamicObject, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut m = Members { top: true }.deserialize(&mut de)?;
    de.end()?;
    let text_of = |v: Option<Value>| v.map(serde_json::from_value::<String>).transpose();
    let api_version = text_of(m.remove("apiVersion"))?;
    let kind = text_of(m.remove("kind"))?;
    let metadata: ObjectMeta = match m.remove("metadata") {
        Some(meta) => serde_json::from_value(meta)?,
        None => ObjectMeta::default(),
    };
    Ok(DynamicObject {
        types: api_version
            .zip(kind)
            .map(|(api_version, kind)| TypeMeta { api_version, kind }),
        metadata,
        data: Value::Object(m),
    })
}

/// The members of an object, read in one pass: at the top (`top`) its `metadata` is read the
/// same way, and there `managedFields` is skipped unread.
#[derive(Clone, Copy)]
struct Members {
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Members {
    type Value = Map<String, Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Members {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if self.top && k == "metadata" {
                let meta = map.next_value_seed(Members { top: false })?;
                m.insert(k, Value::Object(meta));
            } else if !self.top && k == "managedFields" {
                map.next_value::<IgnoredAny>()?;
            } else {
                let v = map.next_value::<Value>()?;
                m.insert(k, v);
            }
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_decodes_as_kubes_decoder_reads_it_but_its_managed_fields() {
        let v = serde_json::json!({
            "apiVersion": "x.example.com/v1", "kind": "X",
            "metadata": {
                "name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7", "generation": 2,
                "labels": {"l": "1"}, "annotations": {"a": "b"}, "finalizers": ["f"],
                "creationTimestamp": "2026-12-07T00:00:00Z",
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "ou"}],
                "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1",
                                   "fieldsV1": {"f:spec": {}}}]
            },
            "spec": {"forProvider": {"x": [1, {"y": null}], "z": 1.5}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        });
        let text = v.to_string();
        let ours = decode(&text).expect("decodes");
        let mut kubes: DynamicObject = serde_json::from_str(&text).expect("kube decodes");
        assert!(kubes.metadata.managed_fields.is_some());
        kubes.metadata.managed_fields = None;
        assert_eq!(
            serde_json::to_value(&ours).expect("encodes"),
            serde_json::to_value(&kubes).expect("encodes")
        );
        assert_eq!(ours.metadata, kubes.metadata);
        assert_eq!(ours.types, kubes.types);
        // Anything but an object is refused, as by kube's decoder.
        assert!(decode("[1]").is_err());
        assert!(decode(r#"{"metadata": 5}"#).is_err());
    }
}
