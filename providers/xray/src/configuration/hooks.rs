//! The hooks of the group's Kinds whose behaviour differs from the group's
//! ([`super::HOOKS`]): the Kind's table entry binds them (its correction in
//! `catalog/overrides.json`, section `xray.kinds`), so no hook asks which Kind it runs for.

use provider_family::{Address, Hooks, ResolvedKind};
use serde_json::Value;

use super::Reach;

/// The Settings: Xray answers two of them under other names than the write takes.
#[derive(Debug, Clone, Copy)]
pub struct Settings;

impl Hooks for Settings {
    fn decode(&self, _kind: &ResolvedKind, body: &Value) -> Option<Value> {
        super::settings_from_jfrog(body)
    }
}

/// A CatalogLabels: where its objects are (its [`Reach`]), and that it names some.
#[derive(Debug, Clone, Copy)]
pub struct CatalogLabels;

impl Hooks for CatalogLabels {
    fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
        if Reach::of(params).is_empty() {
            return Err(
                "set labels, packageAssignments or versionAssignments: a CatalogLabels manages at least one of them".into(),
            );
        }
        Ok(())
    }

    /// The MR reaches what its spec names (see [`Reach`]).
    fn address(&self, kind: &ResolvedKind, key: &str, params: &Value) -> Address {
        self.address_observed(kind, key, params, &Value::Null)
    }

    /// The MR reaches what its spec names and what it last observed of its own (see
    /// [`Reach`]).
    fn address_observed(
        &self,
        _kind: &ResolvedKind,
        _key: &str,
        params: &Value,
        at_provider: &Value,
    ) -> Address {
        let mut reach = Reach::of(params);
        reach.add(at_provider);
        Address::unknown().with_detail(reach)
    }
}
