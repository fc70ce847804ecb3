//! The members a JFrog service keeps of a request body: services bind bodies to typed models,
//! so a member the model lacks (a misspelling, a member of another package type or version)
//! is dropped, never stored or answered. A [`Shape`] writes such a model down as data, from
//! JFrog's documentation or the JFrog Terraform providers' API models (each use names its
//! source); [`prune`] applies it.

use serde_json::Value;

/// A JSON value's model.
#[derive(Debug)]
pub(crate) enum Shape {
    /// Kept as sent (a scalar, a list of scalars, or a value the service keeps whole).
    Leaf,
    /// An object: only the listed members are kept, each pruned by its own shape.
    Object(&'static [(&'static str, Shape)]),
    /// A list whose items have one shape.
    Items(&'static Shape),
}

/// Drops from `v` every member `shape` does not have (values of another type are left alone:
/// validation answers those).
pub(crate) fn prune(v: &mut Value, shape: &Shape) {
    match (shape, v) {
        (Shape::Object(members), Value::Object(m)) => {
            m.retain(|k, _| members.iter().any(|(n, _)| n == k));
            for (name, inner) in *members {
                if let Some(x) = m.get_mut(*name) {
                    prune(x, inner);
                }
            }
        }
        (Shape::Items(inner), Value::Array(items)) => {
            for x in items {
                prune(x, inner);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PAIR: Shape = Shape::Object(&[("name", Shape::Leaf), ("value", Shape::Leaf)]);
    const BODY: Shape = Shape::Object(&[
        ("key", Shape::Leaf),
        ("pairs", Shape::Items(&PAIR)),
        ("inner", Shape::Object(&[("a", Shape::Leaf)])),
    ]);

    #[test]
    fn unknown_members_are_dropped_at_every_level() {
        let mut v = json!({"key": "k", "typo": 1, "pairs": [{"name": "n", "value": "v", "x": 2}],
                           "inner": {"a": [1], "b": true}});
        prune(&mut v, &BODY);
        assert_eq!(
            v,
            json!({"key": "k", "pairs": [{"name": "n", "value": "v"}], "inner": {"a": [1]}})
        );
        let mut odd = json!({"key": "k", "pairs": "not a list", "inner": 3});
        prune(&mut odd, &BODY);
        assert_eq!(odd, json!({"key": "k", "pairs": "not a list", "inner": 3}));
    }
}
