//! Decoding of `application/vnd.kubernetes.protobuf` request bodies for the built-in kinds that
//! kubectl writes through its typed (protobuf) clients: `kubectl create secret|configmap|
//! namespace|serviceaccount|role|rolebinding|clusterrole|clusterrolebinding`, `kubectl auth
//! can-i` (SelfSubjectAccessReview) and `kubectl auth whoami` (SelfSubjectReview), plus Leases.
//!
//! The body is the Kubernetes envelope (`k8s\0` + `runtime.Unknown{typeMeta, raw}`); `raw` is
//! decoded field by field with the field numbers of upstream's `generated.proto` into the JSON
//! form the rest of the server works with. Responses are always JSON (client-go decodes by the
//! response's content type). Deviation: other kinds, and fields not listed here, are not
//! decoded from protobuf (unknown kinds get 415 Unsupported Media Type).

use crate::status::ApiError;
use base64::Engine;
use serde_json::{Map, Value, json};

#[derive(Clone, Copy)]
enum K {
    Str,
    Int,
    Bool,
    Time,
    Msg(&'static [F]),
    MapStr,
    MapBytes,
    RepStr,
    RepMsg(&'static [F]),
}

type F = (u32, &'static str, K);

const OWNER_REF: &[F] = &[
    (5, "apiVersion", K::Str),
    (1, "kind", K::Str),
    (3, "name", K::Str),
    (4, "uid", K::Str),
    (6, "controller", K::Bool),
    (7, "blockOwnerDeletion", K::Bool),
];
const META: &[F] = &[
    (1, "name", K::Str),
    (2, "generateName", K::Str),
    (3, "namespace", K::Str),
    (5, "uid", K::Str),
    (6, "resourceVersion", K::Str),
    (7, "generation", K::Int),
    (11, "labels", K::MapStr),
    (12, "annotations", K::MapStr),
    (13, "ownerReferences", K::RepMsg(OWNER_REF)),
    (14, "finalizers", K::RepStr),
];
const SECRET: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (2, "data", K::MapBytes),
    (3, "type", K::Str),
    (4, "stringData", K::MapStr),
    (5, "immutable", K::Bool),
];
const CONFIGMAP: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (2, "data", K::MapStr),
    (3, "binaryData", K::MapBytes),
    (4, "immutable", K::Bool),
];
const NAMESPACE: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (2, "spec", K::Msg(&[(1, "finalizers", K::RepStr)])),
];
const OBJECT_REF: &[F] = &[
    (1, "kind", K::Str),
    (2, "namespace", K::Str),
    (3, "name", K::Str),
    (4, "uid", K::Str),
    (5, "apiVersion", K::Str),
];
const SERVICE_ACCOUNT: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (2, "secrets", K::RepMsg(OBJECT_REF)),
    (3, "imagePullSecrets", K::RepMsg(&[(1, "name", K::Str)])),
    (4, "automountServiceAccountToken", K::Bool),
];
const RULE: &[F] = &[
    (1, "verbs", K::RepStr),
    (2, "apiGroups", K::RepStr),
    (3, "resources", K::RepStr),
    (4, "resourceNames", K::RepStr),
    (5, "nonResourceURLs", K::RepStr),
];
const ROLE: &[F] = &[(1, "metadata", K::Msg(META)), (2, "rules", K::RepMsg(RULE))];
const SUBJECT: &[F] = &[
    (1, "kind", K::Str),
    (2, "apiGroup", K::Str),
    (3, "name", K::Str),
    (4, "namespace", K::Str),
];
const BINDING: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (2, "subjects", K::RepMsg(SUBJECT)),
    (
        3,
        "roleRef",
        K::Msg(&[
            (1, "apiGroup", K::Str),
            (2, "kind", K::Str),
            (3, "name", K::Str),
        ]),
    ),
];
const RESOURCE_ATTRS: &[F] = &[
    (1, "namespace", K::Str),
    (2, "verb", K::Str),
    (3, "group", K::Str),
    (4, "version", K::Str),
    (5, "resource", K::Str),
    (6, "subresource", K::Str),
    (7, "name", K::Str),
];
const SSAR: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (
        2,
        "spec",
        K::Msg(&[
            (1, "resourceAttributes", K::Msg(RESOURCE_ATTRS)),
            (
                2,
                "nonResourceAttributes",
                K::Msg(&[(1, "path", K::Str), (2, "verb", K::Str)]),
            ),
        ]),
    ),
];
const SSRR: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (2, "spec", K::Msg(&[(1, "namespace", K::Str)])),
];
const SSR: &[F] = &[(1, "metadata", K::Msg(META))];
const LEASE: &[F] = &[
    (1, "metadata", K::Msg(META)),
    (
        2,
        "spec",
        K::Msg(&[
            (1, "holderIdentity", K::Str),
            (2, "leaseDurationSeconds", K::Int),
            (3, "acquireTime", K::Time),
            (4, "renewTime", K::Time),
            (5, "leaseTransitions", K::Int),
        ]),
    ),
];

fn schema_for(kind: &str) -> Option<&'static [F]> {
    Some(match kind {
        "Secret" => SECRET,
        "ConfigMap" => CONFIGMAP,
        "Namespace" => NAMESPACE,
        "ServiceAccount" => SERVICE_ACCOUNT,
        "Role" | "ClusterRole" => ROLE,
        "RoleBinding" | "ClusterRoleBinding" => BINDING,
        "SelfSubjectAccessReview" => SSAR,
        "SelfSubjectReview" => SSR,
        "SelfSubjectRulesReview" => SSRR,
        "Lease" => LEASE,
        _ => return None,
    })
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

fn err() -> ApiError {
    ApiError::bad_request("error decoding protobuf body")
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ApiError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.pos).ok_or_else(err)?;
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(err())
    }
    fn bytes(&mut self) -> Result<&'a [u8], ApiError> {
        let n = usize::try_from(self.varint()?).map_err(|_| err())?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or_else(err)?;
        let out = &self.b[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn done(&self) -> bool {
        self.pos >= self.b.len()
    }
    /// Next (field number, wire type).
    fn tag(&mut self) -> Result<(u32, u8), ApiError> {
        let t = self.varint()?;
        Ok(((t >> 3) as u32, (t & 7) as u8))
    }
    fn skip(&mut self, wire: u8) -> Result<(), ApiError> {
        match wire {
            0 => {
                self.varint()?;
            }
            1 => self.pos += 8,
            2 => {
                self.bytes()?;
            }
            5 => self.pos += 4,
            _ => return Err(err()),
        }
        Ok(())
    }
}

fn text(b: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(b.to_vec()).map_err(|_| err())
}

fn map_entry(b: &[u8], as_bytes: bool) -> Result<(String, Value), ApiError> {
    let mut r = Reader { b, pos: 0 };
    let (mut k, mut v) = (String::new(), json!(""));
    while !r.done() {
        let (no, wire) = r.tag()?;
        match (no, wire) {
            (1, 2) => k = text(r.bytes()?)?,
            (2, 2) => {
                let raw = r.bytes()?;
                v = if as_bytes {
                    json!(base64::engine::general_purpose::STANDARD.encode(raw))
                } else {
                    json!(text(raw)?)
                };
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok((k, v))
}

fn time(b: &[u8]) -> Result<Value, ApiError> {
    let mut r = Reader { b, pos: 0 };
    let (mut secs, mut nanos) = (0i64, 0u32);
    while !r.done() {
        match r.tag()? {
            (1, 0) => secs = r.varint()? as i64,
            (2, 0) => nanos = r.varint()? as u32,
            (_, w) => r.skip(w)?,
        }
    }
    let t = chrono::DateTime::from_timestamp(secs, nanos).ok_or_else(err)?;
    Ok(json!(
        t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
    ))
}

fn message(b: &[u8], fields: &[F]) -> Result<Value, ApiError> {
    let mut r = Reader { b, pos: 0 };
    let mut out = Map::new();
    while !r.done() {
        let (no, wire) = r.tag()?;
        let Some((_, name, kind)) = fields.iter().find(|(n, _, _)| *n == no) else {
            r.skip(wire)?;
            continue;
        };
        let name = (*name).to_string();
        match (*kind, wire) {
            (K::Str, 2) => {
                out.insert(name, json!(text(r.bytes()?)?));
            }
            (K::Int, 0) => {
                out.insert(name, json!(r.varint()? as i64));
            }
            (K::Bool, 0) => {
                out.insert(name, json!(r.varint()? != 0));
            }
            (K::Time, 2) => {
                out.insert(name, time(r.bytes()?)?);
            }
            (K::Msg(sub), 2) => {
                out.insert(name, message(r.bytes()?, sub)?);
            }
            (K::MapStr, 2) | (K::MapBytes, 2) => {
                let (k, v) = map_entry(r.bytes()?, matches!(kind, K::MapBytes))?;
                let m = out.entry(name).or_insert_with(|| json!({}));
                if let Some(m) = m.as_object_mut() {
                    m.insert(k, v);
                }
            }
            (K::RepStr, 2) => {
                let s = json!(text(r.bytes()?)?);
                let a = out.entry(name).or_insert_with(|| json!([]));
                if let Some(a) = a.as_array_mut() {
                    a.push(s);
                }
            }
            (K::RepMsg(sub), 2) => {
                let m = message(r.bytes()?, sub)?;
                let a = out.entry(name).or_insert_with(|| json!([]));
                if let Some(a) = a.as_array_mut() {
                    a.push(m);
                }
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok(Value::Object(out))
}

/// Decodes a protobuf request body into a JSON object with apiVersion and kind.
pub fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let rest = body.strip_prefix(b"k8s\0").ok_or_else(err)?;
    let mut r = Reader { b: rest, pos: 0 };
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    while !r.done() {
        match r.tag()? {
            (1, 2) => {
                let tm = r.bytes()?;
                let mut t = Reader { b: tm, pos: 0 };
                while !t.done() {
                    match t.tag()? {
                        (1, 2) => api_version = text(t.bytes()?)?,
                        (2, 2) => kind = text(t.bytes()?)?,
                        (_, w) => t.skip(w)?,
                    }
                }
            }
            (2, 2) => raw = r.bytes()?,
            (_, w) => r.skip(w)?,
        }
    }
    let schema = schema_for(&kind).ok_or_else(|| {
        ApiError::unsupported_media_type(format!("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (protobuf is decoded for a few built-in kinds only, not {kind})"))
    })?;
    let mut v = message(raw, schema)?;
    v["apiVersion"] = json!(api_version);
    v["kind"] = json!(kind);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(no: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((no << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn decodes_a_secret() {
        let mut entry = field(1, b"password");
        entry.extend(field(2, b"hunter2"));
        let meta = field(1, b"s1");
        let mut secret = field(1, &meta);
        secret.extend(field(2, &entry));
        secret.extend(field(3, b"Opaque"));
        let mut tm = field(1, b"v1");
        tm.extend(field(2, b"Secret"));
        let mut body = b"k8s\0".to_vec();
        body.extend(field(1, &tm));
        body.extend(field(2, &secret));
        let v = decode(&body).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}, "data": {"password": "aHVudGVyMg=="}, "type": "Opaque"})
        );
    }
}
