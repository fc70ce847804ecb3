//! What an update changed, in words: the `UpdatedExternalResource` event's message and the
//! debug log name the field paths that differed (never a value), and say when the update
//! reverted a change made in the external system rather than applied one made to the spec.
//!
//! Which of the two it was is read from the MR: when its `Synced` condition was `True` for
//! the MR's current generation when the reconcile began, the spec had been applied as it is,
//! so what differs now was changed outside Crossplane (drift). Otherwise the spec changed
//! since the last successful sync.

use super::conditions::{Condition, TYPE_SYNCED, get_condition};
use super::external::FieldChange;

/// At most this many paths are named in one message; the rest are counted.
const MAX_NAMED: usize = 10;

/// The prefix of the event, as crossplane-runtime words it.
pub const UPDATED: &str = "Successfully requested update of external resource";

/// Whether the spec was applied as it is when the reconcile began: `Synced=True` observed
/// at `generation`.
pub fn in_sync(conditions: &[Condition], generation: i64) -> bool {
    get_condition(conditions, TYPE_SYNCED).is_some_and(|c| {
        c.is_true() && c.observed_generation != 0 && c.observed_generation == generation
    })
}

/// The paths of `changes` an Update makes in the external system, as one list
/// (`forProvider.a, forProvider.b and 3 more`); empty when there are none.
pub fn named_paths(changes: &[FieldChange]) -> String {
    let paths: Vec<&str> = changes
        .iter()
        .filter(|c| c.is_external())
        .map(|c| c.path.as_str())
        .collect();
    match paths.len() {
        0 => String::new(),
        n if n <= MAX_NAMED => paths.join(", "),
        n => format!(
            "{} and {} more",
            paths[..MAX_NAMED].join(", "),
            n - MAX_NAMED
        ),
    }
}

/// The `UpdatedExternalResource` message: crossplane-runtime's text, then the fields the
/// update changed and whether it reverted drift (`drift`: see [`in_sync`]). Without
/// changes (an adapter that reports none) the plain text.
pub fn update_message(changes: &[FieldChange], drift: bool) -> String {
    let paths = named_paths(changes);
    if paths.is_empty() {
        return UPDATED.to_string();
    }
    if drift {
        format!("{UPDATED}: reverted drift in {paths} made outside Crossplane")
    } else {
        format!("{UPDATED}: changed {paths}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managed::external::ChangeKind;
    use serde_json::json;

    fn change(path: &str, kind: ChangeKind) -> FieldChange {
        FieldChange {
            path: path.into(),
            kind,
            old: None,
            new: Some(json!("x")),
        }
    }

    #[test]
    fn the_message_names_external_changes_and_says_drift() {
        let changes = vec![
            change("forProvider.description", ChangeKind::Update),
            change("forProvider.layout", ChangeKind::LateInit),
            change("forProvider.password", ChangeKind::SecretChanged),
        ];
        assert_eq!(
            update_message(&changes, false),
            "Successfully requested update of external resource: changed forProvider.description, forProvider.password"
        );
        assert_eq!(
            update_message(&changes[..1], true),
            "Successfully requested update of external resource: reverted drift in forProvider.description made outside Crossplane"
        );
        assert_eq!(update_message(&changes[1..2], true), UPDATED);
        assert_eq!(update_message(&[], false), UPDATED);
    }

    #[test]
    fn long_lists_are_cut_and_counted() {
        let changes: Vec<FieldChange> = (0..13)
            .map(|i| change(&format!("forProvider.f{i}"), ChangeKind::Update))
            .collect();
        let m = named_paths(&changes);
        assert!(m.starts_with("forProvider.f0, forProvider.f1,"), "{m}");
        assert!(m.ends_with("forProvider.f9 and 3 more"), "{m}");
    }

    #[test]
    fn in_sync_needs_synced_true_at_this_generation() {
        let ok = Condition::reconcile_success().with_generation(3);
        assert!(in_sync(std::slice::from_ref(&ok), 3));
        assert!(!in_sync(std::slice::from_ref(&ok), 4));
        assert!(!in_sync(&[Condition::reconcile_success()], 3));
        assert!(!in_sync(
            &[Condition::reconcile_error("x").with_generation(3)],
            3
        ));
        assert!(!in_sync(&[], 1));
    }
}
