//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.
//!
//! Deviation: strategic merge patch is implemented as a JSON merge patch in which lists are
//! replaced whole, `$patch: delete` removes a map and other `$` directives
//! (`$setElementOrder/...`, `$retainKeys`, `$deleteFromPrimitiveList/...`) are dropped. This is
//! what kubectl's client-side apply of built-ins needs; lists with merge keys (which our
//! built-ins hardly have) are replaced rather than merged.

use crate::status::ApiError;
use serde_json::Value;

/// The patch flavours of the `Content-Type` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchKind {
    pub fn from_content_type(ct: &str) -> Option<PatchKind> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Some(PatchKind::Merge),
            "application/json-patch+json" => Some(PatchKind::Json),
            "application/strategic-merge-patch+json" => Some(PatchKind::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                Some(PatchKind::Apply)
            }
            _ => None,
        }
    }
}

fn invalid(msg: String) -> ApiError {
    ApiError::new(422, "Invalid", msg)
}

/// Applies a merge, JSON or strategic patch to `target`.
pub fn apply_patch(kind: PatchKind, target: &mut Value, body: &[u8]) -> Result<(), ApiError> {
    match kind {
        PatchKind::Merge => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ));
            }
            json_patch::merge(target, &p);
            Ok(())
        }
        PatchKind::Json => {
            let mut ops: Vec<Value> = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            // As upstream (evanphx/json-patch), `test` of a missing path against null succeeds.
            let mut failed = None;
            ops.retain(|op| {
                if op["op"] != "test" || !op["value"].is_null() {
                    return true;
                }
                let path = op["path"].as_str().unwrap_or_default();
                match target.pointer(path) {
                    None | Some(Value::Null) => false,
                    Some(_) => {
                        failed = Some(format!("testing value {path} failed: test failed"));
                        false
                    }
                }
            });
            if let Some(f) = failed {
                return Err(invalid(f));
            }
            let p: json_patch::Patch = serde_json::from_value(Value::Array(ops))
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            json_patch::patch(target, &p).map_err(|e| invalid(e.to_string()))
        }
        PatchKind::Strategic => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ));
            }
            strategic(target, &p);
            Ok(())
        }
        PatchKind::Apply => Err(ApiError::internal(
            "apply patches go through server-side apply",
        )),
    }
}

fn strategic(target: &mut Value, patch: &Value) {
    let Some(pm) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if pm.get("$patch").and_then(|v| v.as_str()) == Some("replace") {
        let mut p = patch.clone();
        if let Some(m) = p.as_object_mut() {
            m.retain(|k, _| !k.starts_with('$'));
        }
        *target = p;
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let Some(tm) = target.as_object_mut() else {
        return;
    };
    for (k, v) in pm {
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                tm.remove(k);
            }
            Value::Object(o) if o.get("$patch").and_then(|p| p.as_str()) == Some("delete") => {
                tm.remove(k);
            }
            Value::Object(_) => strategic(tm.entry(k.clone()).or_insert(Value::Null), v),
            Value::Array(items) => {
                let items: Vec<Value> = items
                    .iter()
                    .filter(|i| i.get("$patch").is_none())
                    .map(|i| {
                        let mut i = i.clone();
                        if let Some(m) = i.as_object_mut() {
                            m.retain(|k, _| !k.starts_with('$'));
                        }
                        i
                    })
                    .collect();
                tm.insert(k.clone(), Value::Array(items));
            }
            _ => {
                tm.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[test]
    fn strategic_drops_directives() {
        let mut t = json!({"data": {"a": "1", "b": "2"}, "metadata": {"labels": {"x": "y"}}});
        let p = json!({"$setElementOrder/x": [], "data": {"a": null, "c": "3"}, "metadata": {"labels": {"$patch": "delete"}}});
        apply_patch(PatchKind::Strategic, &mut t, p.to_string().as_bytes()).unwrap();
        assert_eq!(t, json!({"data": {"b": "2", "c": "3"}, "metadata": {}}));
    }
    #[test]
    fn json_patch_test_null_on_missing_path() {
        let mut t = json!({"metadata": {}});
        let p = br#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["f"]}]"#;
        apply_patch(PatchKind::Json, &mut t, p).unwrap();
        assert_eq!(t, json!({"metadata": {"finalizers": ["f"]}}));
        let e = apply_patch(
            PatchKind::Json,
            &mut t,
            br#"[{"op":"test","path":"/metadata/finalizers","value":null}]"#,
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
    }

    #[test]
    fn json_patch_test_failure_is_422() {
        let mut t = json!({"a": 1});
        let e = apply_patch(
            PatchKind::Json,
            &mut t,
            br#"[{"op":"test","path":"/a","value":2}]"#,
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
    }
}
