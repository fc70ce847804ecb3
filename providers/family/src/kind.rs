//! A Kind's declaration bound to its behaviour: a [`Kind`] is what a family's (generated)
//! table lists (the [`KindDecl`], data, with the family's [`Rest`] binding and [`Hooks`]),
//! and a [`BoundKind`] is the same once composed (the [`ResolvedKind`] with its behaviour),
//! which the adapter, `export` and `preview` work with.
//!
//! This is the layer above both the declaration vocabulary ([`crate::decl`], data only) and
//! the behaviour ([`crate::rest`], [`crate::hooks`], which read declarations), so that none
//! of those imports another in a circle.

use std::ops::Deref;

use crate::decl::{DeclError, KindDecl, ResolvedKind};
use crate::hooks::Hooks;
use crate::rest::Rest;

/// One Kind as a family's table declares it: the declaration and its behaviour. It reads as
/// its [`KindDecl`] (`Deref`), so `kind.kind`, `kind.fields`, ... are the declaration's.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// The declaration.
    pub decl: KindDecl,
    /// The REST binding.
    pub rest: &'static dyn Rest,
    /// What the family owns beyond the generic adapter.
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
    /// What the family owns beyond the generic adapter.
    pub hooks: &'static dyn Hooks,
}

impl Deref for BoundKind {
    type Target = ResolvedKind;

    fn deref(&self) -> &ResolvedKind {
        &self.kind
    }
}

impl BoundKind {
    /// The declaration with its behaviour.
    pub fn declared(&self) -> Kind {
        Kind {
            decl: self.kind.decl,
            rest: self.rest,
            hooks: self.hooks,
        }
    }
}
