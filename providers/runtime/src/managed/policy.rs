//! Management policies and the legacy `deletionPolicy` matrix (docs/managed-reconciler.md §6;
//! crossplane-runtime `pkg/reconciler/managed/policies.go`).

use std::collections::BTreeSet;

/// One management action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// `*`.
    All,
    /// `Observe`.
    Observe,
    /// `Create`.
    Create,
    /// `Update`.
    Update,
    /// `Delete`.
    Delete,
    /// `LateInitialize`.
    LateInitialize,
}

impl Action {
    fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "*" => Action::All,
            "Observe" => Action::Observe,
            "Create" => Action::Create,
            "Update" => Action::Update,
            "Delete" => Action::Delete,
            "LateInitialize" => Action::LateInitialize,
            _ => return None,
        })
    }
}

/// The management-policy resolver of one MR.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    enabled: bool,
    /// The raw values in first-appearance order, deduplicated (for messages).
    raw: Vec<String>,
    set: BTreeSet<Action>,
    unknown: bool,
    /// `Some` for legacy MRs: the `deletionPolicy` value (empty string if written empty).
    deletion_policy: Option<String>,
}

/// The 15 supported sets (docs/managed-reconciler.md §6.2).
fn supported_sets() -> Vec<BTreeSet<Action>> {
    use Action::*;
    let sets: [&[Action]; 15] = [
        &[All],
        &[Observe, Create, Update, LateInitialize, Delete],
        &[Observe],
        &[],
        &[Observe, Create, Update, Delete],
        &[Observe, Create, Update, LateInitialize],
        &[Observe, Create, Update],
        &[Observe, Create, Delete, LateInitialize],
        &[Observe, Create, LateInitialize],
        &[Observe, Create, Delete],
        &[Observe, Create],
        &[Observe, Delete],
        &[Observe, Update],
        &[Observe, LateInitialize],
        &[Observe, Update, LateInitialize],
    ];
    sets.iter().map(|s| s.iter().copied().collect()).collect()
}

impl PolicyResolver {
    /// Build from `spec.managementPolicies` (None when absent: the CRD default `["*"]`),
    /// whether the feature is enabled, and for legacy MRs `spec.deletionPolicy` (None when
    /// absent: the CRD default `Delete`).
    pub fn new(
        policies: Option<Vec<String>>,
        enabled: bool,
        legacy: bool,
        deletion_policy: Option<String>,
    ) -> Self {
        let values = policies.unwrap_or_else(|| vec!["*".to_string()]);
        let mut raw: Vec<String> = Vec::new();
        let mut set = BTreeSet::new();
        let mut unknown = false;
        for v in values {
            if !raw.contains(&v) {
                raw.push(v.clone());
            }
            match Action::parse(&v) {
                Some(a) => {
                    set.insert(a);
                }
                None => unknown = true,
            }
        }
        let deletion_policy = if legacy {
            Some(deletion_policy.unwrap_or_else(|| "Delete".to_string()))
        } else {
            None
        };
        PolicyResolver {
            enabled,
            raw,
            set,
            unknown,
            deletion_policy,
        }
    }

    fn actions_text(&self) -> String {
        format!("[{}]", self.raw.join(" "))
    }

    fn is_default(&self) -> bool {
        !self.unknown && self.set.len() == 1 && self.set.contains(&Action::All)
    }

    /// Validate (docs/managed-reconciler.md §6.2). Errors carry the exact upstream messages;
    /// actions are listed in first-appearance order (allowed deviation Q2).
    pub fn validate(&self) -> Result<(), String> {
        if !self.enabled {
            if self.is_default() || self.raw.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "`spec.managementPolicies` is set to a non-default value but the feature is not enabled: {}",
                self.actions_text()
            ));
        }
        if !self.unknown && supported_sets().contains(&self.set) {
            return Ok(());
        }
        Err(format!(
            "`spec.managementPolicies` is set to a value({}) which is not supported. Check docs for supported policies",
            self.actions_text()
        ))
    }

    /// Whether the feature is enabled.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The set is empty (feature enabled only).
    pub fn is_paused(&self) -> bool {
        self.enabled && self.set.is_empty() && !self.unknown
    }

    /// The set is exactly `{Observe}` (feature enabled only).
    pub fn should_only_observe(&self) -> bool {
        self.enabled && self.set.len() == 1 && self.set.contains(&Action::Observe)
    }

    fn allows(&self, a: Action) -> bool {
        !self.enabled || self.set.contains(&Action::All) || self.set.contains(&a)
    }

    /// Create allowed.
    pub fn should_create(&self) -> bool {
        self.allows(Action::Create)
    }

    /// Update allowed.
    pub fn should_update(&self) -> bool {
        self.allows(Action::Update)
    }

    /// LateInitialize allowed.
    pub fn should_late_initialize(&self) -> bool {
        self.allows(Action::LateInitialize)
    }

    /// Delete allowed, including the legacy `deletionPolicy` matrix
    /// (docs/managed-reconciler.md §6.5).
    pub fn should_delete(&self) -> bool {
        match &self.deletion_policy {
            None => self.allows(Action::Delete),
            Some(dp) => {
                if !self.enabled {
                    return dp != "Orphan";
                }
                let has_all = self.set.contains(&Action::All);
                let has_delete = self.set.contains(&Action::Delete);
                (dp == "Delete" && (has_all || has_delete)) || (!self.is_default() && has_delete)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn fifteen_supported_sets_validate() {
        for s in supported_sets() {
            let names: Vec<String> = s
                .iter()
                .map(|a| {
                    match a {
                        Action::All => "*",
                        Action::Observe => "Observe",
                        Action::Create => "Create",
                        Action::Update => "Update",
                        Action::Delete => "Delete",
                        Action::LateInitialize => "LateInitialize",
                    }
                    .to_string()
                })
                .collect();
            assert!(
                PolicyResolver::new(Some(names.clone()), true, false, None)
                    .validate()
                    .is_ok(),
                "{names:?}"
            );
        }
    }

    #[test]
    fn conformance_056_unsupported_sets_message() {
        let r = PolicyResolver::new(p(&["Create", "Delete"]), true, false, None);
        assert_eq!(
            r.validate().unwrap_err(),
            "`spec.managementPolicies` is set to a value([Create Delete]) which is not supported. Check docs for supported policies"
        );
        let r = PolicyResolver::new(p(&["*", "Observe"]), true, false, None);
        assert!(r.validate().is_err());
    }

    #[test]
    fn conformance_055_feature_disabled_message() {
        let r = PolicyResolver::new(p(&["Observe"]), false, false, None);
        assert_eq!(
            r.validate().unwrap_err(),
            "`spec.managementPolicies` is set to a non-default value but the feature is not enabled: [Observe]"
        );
        // Q4: empty with the feature disabled is full control
        let r = PolicyResolver::new(p(&[]), false, false, None);
        assert!(r.validate().is_ok());
        assert!(!r.is_paused());
        assert!(r.should_create() && r.should_delete());
    }

    #[test]
    fn legacy_deletion_matrix() {
        let cases = [
            (p(&["*"]), "Delete", true),
            (p(&["*"]), "Orphan", false),
            (
                p(&["Observe", "Create", "Update", "Delete"]),
                "Delete",
                true,
            ),
            (
                p(&["Observe", "Create", "Update", "Delete"]),
                "Orphan",
                true,
            ),
            (p(&["Observe", "Create", "Update"]), "Delete", false),
            (p(&["Observe", "Create", "Update"]), "Orphan", false),
            (p(&["*"]), "", false),
        ];
        for (pol, dp, want) in cases {
            let r = PolicyResolver::new(pol.clone(), true, true, Some(dp.to_string()));
            assert_eq!(r.should_delete(), want, "{pol:?} {dp}");
        }
        // feature disabled: deletionPolicy alone
        assert!(PolicyResolver::new(p(&["*"]), false, true, Some("Delete".into())).should_delete());
        assert!(
            !PolicyResolver::new(p(&["*"]), false, true, Some("Orphan".into())).should_delete()
        );
        assert!(PolicyResolver::new(p(&["*"]), false, true, Some("".into())).should_delete());
    }

    #[test]
    fn duplicates_collapse() {
        let r = PolicyResolver::new(p(&["Observe", "Observe"]), true, false, None);
        assert!(r.validate().is_ok());
        assert!(r.should_only_observe());
    }
}
