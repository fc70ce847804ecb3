//! A Kind's declaration bound to its behaviour: a [`Kind`] is what a family's (generated)
//! table lists (the [`KindDecl`], data, with the family's [`Rest`] binding and rules
//! ([`FamilyHooks`]) and the Kind's [`Hooks`]),
//! and a [`BoundKind`] is the same once composed (the [`ResolvedKind`] with its behaviour),
//! which the adapter, `export` and `preview` work with.
//!
//! This is the layer above both the declaration vocabulary ([`crate::decl`], data only) and
//! the behaviour ([`crate::rest`], [`crate::hooks`], which read declarations), so that none
//! of those imports another in a circle.

use std::ops::Deref;

use serde_json::Value;

use crate::decl::{DeclError, KindDecl, ResolvedKind};
use crate::hooks::{FamilyHooks, Hooks};
use crate::rest::Rest;

/// One Kind as a family's table declares it: the declaration and its behaviour. It reads as
/// its [`KindDecl`] (`Deref`), so `kind.kind`, `kind.fields`, ... are the declaration's.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// The declaration.
    pub decl: KindDecl,
    /// The REST binding.
    pub rest: &'static dyn Rest,
    /// The rules every Kind of the family keeps.
    pub family: &'static dyn FamilyHooks,
    /// The Kind's own behaviour beyond the generic adapter (the family's default unless the
    /// Kind has its own).
    pub hooks: &'static dyn Hooks,
}

impl Deref for Kind {
    type Target = KindDecl;

    fn deref(&self) -> &KindDecl {
        &self.decl
    }
}

impl std::borrow::Borrow<KindDecl> for Kind {
    fn borrow(&self) -> &KindDecl {
        &self.decl
    }
}

impl Kind {
    /// Compose the declaration ([`KindDecl::resolve`], which `kind.resolve()` calls),
    /// keeping the behaviour.
    pub fn bound(&self) -> Result<BoundKind, DeclError> {
        Ok(BoundKind {
            kind: self.decl.resolve()?,
            rest: self.rest,
            family: self.family,
            hooks: self.hooks,
        })
    }
}

/// A composed Kind and its behaviour. It reads as its [`ResolvedKind`] (`Deref`), so
/// `kind.decl`, `kind.fields` and every function of a [`ResolvedKind`] take it as it is.
#[derive(Debug, Clone)]
pub struct BoundKind {
    /// The composed declaration.
    pub kind: ResolvedKind,
    /// The REST binding.
    pub rest: &'static dyn Rest,
    /// The rules every Kind of the family keeps.
    pub family: &'static dyn FamilyHooks,
    /// The Kind's own behaviour beyond the generic adapter (the family's default unless the
    /// Kind has its own).
    pub hooks: &'static dyn Hooks,
}

impl Deref for BoundKind {
    type Target = ResolvedKind;

    fn deref(&self) -> &ResolvedKind {
        &self.kind
    }
}

impl BoundKind {
    /// The description of `atProvider.id` (the family's).
    pub fn id_description(&self) -> &'static str {
        self.family.id_description()
    }

    /// Check an identifier before any request (the family's rule).
    pub fn check_key(&self, key: &str) -> Result<(), String> {
        self.family.check_key(key)
    }

    /// Check `forProvider` before any write: the family's rules, then the Kind's own.
    pub fn check_params(&self, params: &Value) -> Result<(), String> {
        self.family.check_params(&self.kind, params)?;
        self.hooks.check_params(&self.kind, params)
    }

    /// The declaration with its behaviour.
    pub fn declared(&self) -> Kind {
        Kind {
            decl: self.kind.decl,
            rest: self.rest,
            family: self.family,
            hooks: self.hooks,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::decl::{Field, Ty};
    use crate::hooks::NoHooks;
    use crate::rest::{Call, Paths, Verb};

    static REST: Paths = Paths {
        service: jfrog_client::Service::Artifactory,
        create: Call::new(Verb::Put, "/x/{key}"),
        read: Call::new(Verb::Get, "/x/{key}"),
        update: Call::new(Verb::Put, "/x/{key}"),
        delete: Call::new(Verb::Delete, "/x/{key}"),
        list: None,
        case_insensitive: false,
    };

    /// A family whose keys have no dot and whose `name` is never `family`.
    #[derive(Debug)]
    struct Family;

    impl FamilyHooks for Family {
        fn id_description(&self) -> &'static str {
            "The family's identifier."
        }
        fn check_key(&self, key: &str) -> Result<(), String> {
            (!key.contains('.')).then_some(()).ok_or("no dot".into())
        }
        fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
            (params["name"] != "family")
                .then_some(())
                .ok_or("family rule".into())
        }
    }

    /// A Kind whose `name` is never `kind`.
    #[derive(Debug)]
    struct Own;

    impl Hooks for Own {
        fn check_params(&self, _kind: &ResolvedKind, params: &Value) -> Result<(), String> {
            (params["name"] != "kind")
                .then_some(())
                .ok_or("kind rule".into())
        }
    }

    const FIELDS: &[Field] = &[Field::new("name", "name", Some("name"), Ty::Str)];

    fn bound(hooks: &'static dyn Hooks) -> BoundKind {
        Kind {
            decl: KindDecl::test_thing(&[], FIELDS),
            rest: &REST,
            family: &Family,
            hooks,
        }
        .bound()
        .expect("composes")
    }

    /// The family's rules hold whatever hooks a Kind binds, and a Kind's own rules add to
    /// them.
    #[test]
    fn a_kinds_own_hooks_keep_the_familys_rules() {
        for k in [bound(&NoHooks), bound(&Own)] {
            assert_eq!(k.id_description(), "The family's identifier.");
            assert_eq!(k.check_key("a.b"), Err("no dot".into()));
            assert_eq!(k.check_key("ab"), Ok(()));
            assert_eq!(
                k.check_params(&json!({"name": "family"})),
                Err("family rule".into())
            );
            assert_eq!(k.check_params(&json!({"name": "x"})), Ok(()));
        }
        assert_eq!(
            bound(&NoHooks).check_params(&json!({"name": "kind"})),
            Ok(())
        );
        assert_eq!(
            bound(&Own).check_params(&json!({"name": "kind"})),
            Err("kind rule".into())
        );
    }
}
