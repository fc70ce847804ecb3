//! Server-side printing: `meta.k8s.io/v1 Table` responses for
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
//!
//! Custom resources use their version's `additionalPrinterColumns` (JSONPath with filters such as
//! `.status.conditions[?(@.type=='Ready')].status` and escaped dots such as
//! `.metadata.annotations.crossplane\.io/external-name`); `date` columns are rendered as ages
//! ("5m") as upstream's table convertor does. Built-ins get upstream's column sets for the kinds
//! users look at (Secret, ConfigMap, Namespace, ServiceAccount, Lease, Event, CRD) and NAME/AGE
//! otherwise.

use crate::registry::{Builtin, PrinterColumn, ResourceType};
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    Filter {
        path: Vec<String>,
        op: Option<(bool, Value)>,
    },
}

fn parse_path(p: &str) -> Vec<Step> {
    let p = p.trim().trim_start_matches('{').trim_end_matches('}');
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    let mut steps = Vec::new();
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                let mut name = String::new();
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        name.push(chars[i + 1]);
                        i += 2;
                    } else {
                        name.push(chars[i]);
                        i += 1;
                    }
                }
                if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
            }
            '[' => {
                let start = i + 1;
                let mut depth = 0;
                let mut j = start;
                while j < chars.len() {
                    match chars[j] {
                        '[' => depth += 1,
                        ']' if depth == 0 => break,
                        ']' => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                let inner: String = chars[start..j.min(chars.len())].iter().collect();
                i = j + 1;
                let inner = inner.trim();
                if inner == "*" {
                    steps.push(Step::All);
                } else if let Some(f) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
                    steps.push(parse_filter(f));
                } else if let Ok(n) = inner.parse::<i64>() {
                    steps.push(Step::Index(n));
                } else {
                    steps.push(Step::Field(
                        inner.trim_matches('\'').trim_matches('"').to_string(),
                    ));
                }
            }
            _ => {
                // A path without a leading dot.
                let mut name = String::new();
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    name.push(chars[i]);
                    i += 1;
                }
                if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
            }
        }
    }
    steps
}

fn parse_filter(f: &str) -> Step {
    let (lhs, op) = if let Some(i) = f.find("==") {
        (&f[..i], Some((true, &f[i + 2..])))
    } else if let Some(i) = f.find("!=") {
        (&f[..i], Some((false, &f[i + 2..])))
    } else {
        (f, None)
    };
    let path: Vec<String> = lhs
        .trim()
        .trim_start_matches('@')
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let op = op.map(|(eq, rhs)| {
        let rhs = rhs.trim();
        let v = if (rhs.starts_with('\'') && rhs.ends_with('\''))
            || (rhs.starts_with('"') && rhs.ends_with('"')) && rhs.len() >= 2
        {
            json!(rhs[1..rhs.len() - 1])
        } else {
            serde_json::from_str(rhs).unwrap_or(json!(rhs))
        };
        (eq, v)
    });
    Step::Filter { path, op }
}

/// Evaluates a JSONPath as kubectl/kube-apiserver do for printer columns; returns all results.
pub fn eval<'a>(obj: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut cur = vec![obj];
    for step in parse_path(path) {
        let mut next = Vec::new();
        for v in cur {
            match &step {
                Step::Field(f) => {
                    if let Some(x) = v.get(f) {
                        next.push(x);
                    }
                }
                Step::Index(n) => {
                    if let Some(a) = v.as_array() {
                        let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                        if let Some(x) = usize::try_from(idx).ok().and_then(|i| a.get(i)) {
                            next.push(x);
                        }
                    }
                }
                Step::All => match v {
                    Value::Array(a) => next.extend(a.iter()),
                    Value::Object(m) => next.extend(m.values()),
                    _ => {}
                },
                Step::Filter { path, op } => {
                    if let Some(a) = v.as_array() {
                        for item in a {
                            let mut x = Some(item);
                            for p in path {
                                x = x.and_then(|x| x.get(p));
                            }
                            let keep = match (x, op) {
                                (Some(x), Some((eq, want))) => (x == want) == *eq,
                                (None, Some((eq, _))) => !eq,
                                (Some(_), None) => true,
                                (None, None) => false,
                            };
                            if keep {
                                next.push(item);
                            }
                        }
                    }
                }
            }
        }
        cur = next;
    }
    cur
}

/// `duration.HumanDuration` of k8s.io/apimachinery.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{}h", hours / 24, h)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{}d", hours / 24 / 365, dy)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// The age of an RFC 3339 timestamp, or `<unknown>`.
pub fn age(ts: Option<&str>) -> String {
    match ts.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()) {
        Some(t) => {
            human_duration((chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds())
        }
        None => "<unknown>".into(),
    }
}

fn cell(col: &PrinterColumn, obj: &Value) -> Value {
    let results = eval(obj, &col.json_path);
    let Some(v) = results.first() else {
        return Value::Null;
    };
    match col.type_.as_str() {
        "string" => match v {
            Value::String(s) => json!(s),
            Value::Null => Value::Null,
            Value::Bool(_) | Value::Number(_) => json!(v.to_string()),
            other => json!(other.to_string()),
        },
        "integer" => v
            .as_i64()
            .or_else(|| v.as_f64().map(|f| f as i64))
            .map(|i| json!(i))
            .unwrap_or(Value::Null),
        "number" => v.as_f64().map(|f| json!(f)).unwrap_or(Value::Null),
        "boolean" => v.as_bool().map(|b| json!(b)).unwrap_or(Value::Null),
        "date" => match v.as_str() {
            Some(s) => match chrono::DateTime::parse_from_rfc3339(s) {
                Ok(_) => json!(age(Some(s))),
                Err(_) => json!("<invalid>"),
            },
            None => Value::Null,
        },
        _ => Value::Null,
    }
}

fn coldef(name: &str, type_: &str, format: &str, description: &str, priority: i64) -> Value {
    json!({"name": name, "type": type_, "format": format, "description": description, "priority": priority})
}

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESC: &str =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// Column definitions and a row renderer for a type.
type RowFn = Box<dyn Fn(&Value) -> Vec<Value>>;

fn columns(rt: &ResourceType) -> (Vec<Value>, RowFn) {
    let name = |o: &Value| json!(s(&o["metadata"]["name"]));
    let created = |o: &Value| {
        json!(age(o
            .pointer("/metadata/creationTimestamp")
            .and_then(|v| v.as_str())))
    };
    match rt.builtin {
        Builtin::Custom => {
            let mut defs = vec![coldef("Name", "string", "name", NAME_DESC, 0)];
            for c in &rt.columns {
                defs.push(coldef(
                    &c.name,
                    &c.type_,
                    &c.format,
                    &c.description,
                    c.priority,
                ));
            }
            let cols = rt.columns.clone();
            (
                defs,
                Box::new(move |o| {
                    let mut row = vec![name(o)];
                    row.extend(cols.iter().map(|c| cell(c, o)));
                    row
                }),
            )
        }
        Builtin::Secret => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef("Type", "string", "", "The type of the secret", 0),
                coldef("Data", "string", "", "The number of entries in data", 0),
                coldef("Age", "string", "", AGE_DESC, 0),
            ],
            Box::new(move |o| {
                vec![
                    name(o),
                    json!(s(&o["type"])),
                    json!(o["data"].as_object().map(|d| d.len()).unwrap_or(0) as i64),
                    created(o),
                ]
            }),
        ),
        Builtin::ConfigMap => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef("Data", "string", "", "The number of entries in data", 0),
                coldef("Age", "string", "", AGE_DESC, 0),
            ],
            Box::new(move |o| {
                let n = o["data"].as_object().map(|d| d.len()).unwrap_or(0)
                    + o["binaryData"].as_object().map(|d| d.len()).unwrap_or(0);
                vec![name(o), json!(n as i64), created(o)]
            }),
        ),
        Builtin::Namespace => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef("Status", "string", "", "The status of the namespace", 0),
                coldef("Age", "string", "", AGE_DESC, 0),
            ],
            Box::new(move |o| vec![name(o), json!(s(&o["status"]["phase"])), created(o)]),
        ),
        Builtin::ServiceAccount => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef(
                    "Secrets",
                    "string",
                    "",
                    "Secrets is the list of secrets allowed to be used by pods running using this ServiceAccount",
                    0,
                ),
                coldef("Age", "string", "", AGE_DESC, 0),
            ],
            Box::new(move |o| {
                vec![
                    name(o),
                    json!(o["secrets"].as_array().map(|d| d.len()).unwrap_or(0) as i64),
                    created(o),
                ]
            }),
        ),
        Builtin::Lease => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef("Holder", "string", "", "The holder of the lease", 0),
                coldef("Age", "string", "", AGE_DESC, 0),
            ],
            Box::new(move |o| vec![name(o), json!(s(&o["spec"]["holderIdentity"])), created(o)]),
        ),
        Builtin::Crd => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef("Created At", "date", "", AGE_DESC, 0),
            ],
            Box::new(move |o| vec![name(o), json!(s(&o["metadata"]["creationTimestamp"]))]),
        ),
        Builtin::Event => (
            vec![
                coldef(
                    "Last Seen",
                    "string",
                    "",
                    "Time when this Event was last seen",
                    0,
                ),
                coldef(
                    "Type",
                    "string",
                    "",
                    "Type of this event (Normal, Warning), new types could be added in the future.",
                    0,
                ),
                coldef(
                    "Reason",
                    "string",
                    "",
                    "Reason why the action was taken. It is human-readable. This field can have at most 128 characters.",
                    0,
                ),
                coldef(
                    "Object",
                    "string",
                    "",
                    "The object that this event is about. Mapped to Event.InvolvedObject",
                    0,
                ),
                coldef(
                    "Subobject",
                    "string",
                    "",
                    "The subobject that this event is about. Mapped to Event.InvolvedObject.FieldPath",
                    1,
                ),
                coldef(
                    "Source",
                    "string",
                    "",
                    "The component reporting this event. Short machine understandable string.",
                    1,
                ),
                coldef(
                    "Message",
                    "string",
                    "",
                    "A human-readable description of the status of this operation.",
                    0,
                ),
                coldef(
                    "First Seen",
                    "string",
                    "",
                    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
                    1,
                ),
                coldef(
                    "Count",
                    "string",
                    "",
                    "The number of times this event has occurred.",
                    1,
                ),
                coldef("Name", "string", "name", NAME_DESC, 1),
            ],
            Box::new(move |o| {
                // Rows are always rendered from the stored core/v1 form.
                let first = o["firstTimestamp"].as_str().or(o["eventTime"].as_str());
                let last = o["series"]["lastObservedTime"]
                    .as_str()
                    .or(o["lastTimestamp"].as_str())
                    .or(first);
                let obj = format!(
                    "{}/{}",
                    s(&o["involvedObject"]["kind"]).to_lowercase(),
                    s(&o["involvedObject"]["name"])
                );
                let mut source = s(&o["source"]["component"]);
                if source.is_empty() {
                    source = s(&o["reportingComponent"]);
                }
                let count = o["series"]["count"]
                    .as_i64()
                    .or(o["count"].as_i64())
                    .unwrap_or(1);
                vec![
                    json!(age(last)),
                    json!(s(&o["type"])),
                    json!(s(&o["reason"])),
                    json!(obj),
                    json!(s(&o["involvedObject"]["fieldPath"])),
                    json!(source),
                    json!(s(&o["message"]).trim().to_string()),
                    json!(age(first)),
                    json!(count),
                    name(o),
                ]
            }),
        ),
        _ => (
            vec![
                coldef("Name", "string", "name", NAME_DESC, 0),
                coldef("Age", "string", "", AGE_DESC, 0),
            ],
            Box::new(move |o| vec![name(o), created(o)]),
        ),
    }
}

/// How much of each object a row carries (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Include {
    None,
    Metadata,
    Object,
}

/// Builds a Table from stored objects; `present` turns one into the client's view.
pub fn table(
    rt: &ResourceType,
    stored: &[std::sync::Arc<Value>],
    present: &dyn Fn(&Value) -> Value,
    include: Include,
    rv: &str,
    cont: Option<&str>,
) -> Value {
    let (defs, row) = columns(rt);
    let rows: Vec<Value> = stored
        .iter()
        .map(|o| {
            let mut r = json!({"cells": row(o)});
            match include {
                Include::None => {}
                Include::Metadata => {
                    r["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"].clone()});
                }
                Include::Object => r["object"] = present(o),
            }
            r
        })
        .collect();
    let mut meta = json!({"resourceVersion": rv});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpath_filters_and_escapes() {
        let o = json!({
            "metadata": {"annotations": {"crossplane.io/external-name": "ext"}},
            "status": {"conditions": [{"type": "Synced", "status": "True"}, {"type": "Ready", "status": "False"}]},
            "spec": {"items": [1, 2, 3]}
        });
        assert_eq!(
            eval(&o, ".status.conditions[?(@.type=='Ready')].status"),
            vec![&json!("False")]
        );
        assert_eq!(
            eval(&o, ".metadata.annotations.crossplane\\.io/external-name"),
            vec![&json!("ext")]
        );
        assert_eq!(eval(&o, ".spec.items[1]"), vec![&json!(2)]);
        assert_eq!(eval(&o, ".spec.items[-1]"), vec![&json!(3)]);
        assert_eq!(eval(&o, ".spec.items[*]").len(), 3);
        assert!(eval(&o, ".status.conditions[?(@.type=='Nope')].status").is_empty());
    }

    #[test]
    fn human_durations() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(130), "2m10s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(50 * 3600), "2d2h");
    }
}
