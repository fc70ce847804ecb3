//! Crossplane conditions (`status.conditions`) and their set semantics
//! (docs/managed-reconciler.md §7).
//!
//! A condition list is a map keyed by `type`: setting a new type appends, setting an existing
//! type replaces that entry in place unless the two are equal (type, status, reason, message,
//! and observedGeneration when both are non-zero), in which case the old entry with its
//! `lastTransitionTime` is kept.

use chrono::{SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::reasons::condition as reason;

/// `Synced`.
pub const TYPE_SYNCED: &str = "Synced";
/// `Ready`.
pub const TYPE_READY: &str = "Ready";
/// `LastAsyncOperation` (Upjet).
pub const TYPE_LAST_ASYNC_OPERATION: &str = "LastAsyncOperation";

/// One entry of `status.conditions` (crossplane `apis/core/v2` `Condition`), for managed
/// resources and the config Kinds alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// RFC 3339, whole seconds.
    pub last_transition_time: String,
    /// Machine-readable reason.
    pub reason: String,
    /// Human-readable message; omitted when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The generation the condition was computed for; omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl Condition {
    /// A condition built now, with no observedGeneration.
    pub fn new(type_: &str, status: bool, reason: &str, message: impl Into<String>) -> Self {
        Condition {
            type_: type_.to_string(),
            status: if status { "True" } else { "False" }.to_string(),
            last_transition_time: now_rfc3339(),
            reason: reason.to_string(),
            message: message.into(),
            observed_generation: 0,
        }
    }

    /// The same condition for a given generation.
    pub fn with_generation(mut self, generation: i64) -> Self {
        self.observed_generation = generation;
        self
    }

    /// `Ready=True Available`.
    pub fn available() -> Self {
        Self::new(TYPE_READY, true, reason::AVAILABLE, "")
    }
    /// `Ready=False Unavailable`.
    pub fn unavailable() -> Self {
        Self::new(TYPE_READY, false, reason::UNAVAILABLE, "")
    }
    /// `Ready=False Creating`.
    pub fn creating() -> Self {
        Self::new(TYPE_READY, false, reason::CREATING, "")
    }
    /// `Ready=False Deleting`.
    pub fn deleting() -> Self {
        Self::new(TYPE_READY, false, reason::DELETING, "")
    }
    /// `Synced=True ReconcileSuccess`.
    pub fn reconcile_success() -> Self {
        Self::new(TYPE_SYNCED, true, reason::RECONCILE_SUCCESS, "")
    }
    /// `Synced=False ReconcileError` with the error text.
    pub fn reconcile_error(message: impl Into<String>) -> Self {
        Self::new(TYPE_SYNCED, false, reason::RECONCILE_ERROR, message)
    }
    /// `Synced=False ReconcilePaused`.
    pub fn reconcile_paused() -> Self {
        Self::new(TYPE_SYNCED, false, reason::RECONCILE_PAUSED, "")
    }
    /// `LastAsyncOperation=True Success`.
    pub fn async_success() -> Self {
        Self::new(TYPE_LAST_ASYNC_OPERATION, true, reason::SUCCESS, "")
    }
    /// `LastAsyncOperation=False Async<Op>Failure` with `async <op> failed: <err>`.
    pub fn async_failure(op: AsyncOp, err: &str) -> Self {
        let (reason, verb) = match op {
            AsyncOp::Create => (reason::ASYNC_CREATE_FAILURE, "create"),
            AsyncOp::Update => (reason::ASYNC_UPDATE_FAILURE, "update"),
            AsyncOp::Delete => (reason::ASYNC_DELETE_FAILURE, "delete"),
        };
        Self::new(
            TYPE_LAST_ASYNC_OPERATION,
            false,
            reason,
            format!("async {verb} failed: {err}"),
        )
    }

    /// Equality as crossplane-runtime defines it: lastTransitionTime ignored, and
    /// observedGeneration compared only when both are non-zero.
    pub fn equal(&self, other: &Condition) -> bool {
        self.type_ == other.type_
            && self.status == other.status
            && self.reason == other.reason
            && self.message == other.message
            && (self.observed_generation == 0
                || other.observed_generation == 0
                || self.observed_generation == other.observed_generation)
    }

    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// The operation a `LastAsyncOperation` failure refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncOp {
    /// Create.
    Create,
    /// Update.
    Update,
    /// Delete.
    Delete,
}

/// Set `c` in `list` with crossplane-runtime's set semantics.
pub fn set_condition(list: &mut Vec<Condition>, c: Condition) {
    match list.iter_mut().find(|e| e.type_ == c.type_) {
        Some(existing) => {
            if !existing.equal(&c) {
                *existing = c;
            }
        }
        None => list.push(c),
    }
}

/// The condition of a type, if present.
pub fn get_condition<'a>(list: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    list.iter().find(|c| c.type_ == type_)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_semantics_keep_time_and_order() {
        let mut l = Vec::new();
        let mut a = Condition::reconcile_success().with_generation(1);
        a.last_transition_time = "2020-01-01T00:00:00Z".into();
        set_condition(&mut l, a);
        set_condition(&mut l, Condition::creating().with_generation(1));
        // equal: old time kept
        set_condition(&mut l, Condition::reconcile_success().with_generation(1));
        assert_eq!(l[0].last_transition_time, "2020-01-01T00:00:00Z");
        // zero generation on one side still counts as equal
        set_condition(&mut l, Condition::reconcile_success());
        assert_eq!(l[0].last_transition_time, "2020-01-01T00:00:00Z");
        // generation change replaces in place
        set_condition(&mut l, Condition::reconcile_success().with_generation(2));
        assert_eq!(l[0].observed_generation, 2);
        assert_eq!(l[0].type_, TYPE_SYNCED);
        assert_eq!(l[1].type_, TYPE_READY);
        assert_eq!(l.len(), 2);
    }

    #[test]
    fn serialisation_omits_empty() {
        let c = Condition::reconcile_paused();
        let v = serde_json::to_value(&c).expect("serialise");
        assert!(v.get("message").is_none());
        assert!(v.get("observedGeneration").is_none());
        assert_eq!(v["type"], "Synced");
    }
}
