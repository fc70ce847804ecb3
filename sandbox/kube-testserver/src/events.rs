//! The two views of one Event store: `core/v1` Events (stored form) and `events.k8s.io/v1`
//! Events, with the field mapping of upstream's conversion (`note`↔`message`,
//! `regarding`↔`involvedObject`, `reportingController`↔`reportingComponent`,
//! `deprecatedSource`↔`source`, `deprecatedCount`↔`count`, ...).

use serde_json::{Map, Value};

/// (events.k8s.io/v1 field, core/v1 field) pairs.
const MAPPING: &[(&str, &str)] = &[
    ("metadata", "metadata"),
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"),
    ("action", "action"),
    ("reason", "reason"),
    ("regarding", "involvedObject"),
    ("related", "related"),
    ("note", "message"),
    ("type", "type"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn map(obj: &Value, from_v1: bool) -> Value {
    let mut out = Map::new();
    if let Some(m) = obj.as_object() {
        for (v1, core) in MAPPING {
            let (src, dst) = if from_v1 { (v1, core) } else { (core, v1) };
            if let Some(v) = m.get(*src)
                && !v.is_null()
            {
                out.insert(dst.to_string(), v.clone());
            }
        }
        // Keep fields neither view knows, so strict validation can still see them.
        for (k, v) in m {
            let known =
                MAPPING.iter().any(|(a, b)| k == a || k == b) || k == "apiVersion" || k == "kind";
            if !known {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Stored core/v1 Event → events.k8s.io/v1 view (without apiVersion/kind).
pub fn core_to_v1(obj: &Value) -> Value {
    map(obj, false)
}

/// events.k8s.io/v1 body → stored core/v1 form (without apiVersion/kind).
pub fn v1_to_core(obj: &Value) -> Value {
    map(obj, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[test]
    fn round_trip() {
        let v1 = json!({"metadata": {"name": "e"}, "note": "hi", "regarding": {"name": "x"}, "reportingController": "c", "deprecatedCount": 2});
        let core = v1_to_core(&v1);
        assert_eq!(core["message"], "hi");
        assert_eq!(core["involvedObject"]["name"], "x");
        assert_eq!(core["reportingComponent"], "c");
        assert_eq!(core["count"], 2);
        assert_eq!(core_to_v1(&core), v1);
    }
}
