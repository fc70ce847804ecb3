//! The vocabulary of Kind declarations: a [`Field`] (one parameter, its CRD and wire names,
//! type, default and comparison rule), a [`KindDecl`] (one Kind: provider, group, identifier
//! strategy, the field sets it is composed of) and the composition into a [`ResolvedKind`].
//!
//! Pure data, the bottom of the crate: this module uses no other module of it. A Kind's
//! behaviour (its REST binding and its family's hooks) is bound to its declaration one layer
//! up, in the `kind` module.
//!
//! Composition follows the catalog: the `extends` base, then each mixin in order, then the
//! Kind's own fields; a later field replaces an earlier one with the same Terraform name; then
//! the Kind's default overrides (by Terraform name).

use std::borrow::Borrow;

use provider_runtime::managed::kind::IdentifierStrategy;
use serde_json::{Value, json};

/// A field's type.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// A string.
    Str,
    /// A boolean.
    Bool,
    /// A 64-bit integer.
    Int,
    /// A floating-point number (a CVSS score).
    Num,
    /// An ordered list of strings (order is meaningful).
    List,
    /// An unordered set of strings.
    Set,
    /// A Terraform list block of at most one element: an array of one object in the CRD, a
    /// single JSON object on the wire.
    Block(&'static [Field]),
    /// A Terraform single-nested attribute or block (plugin framework
    /// `SingleNestedAttribute` / `SingleNestedBlock`): a plain object in the CRD, as Upjet
    /// renders it, and one JSON object on the wire.
    Object(&'static [Field]),
    /// An ordered list of objects.
    ObjList(&'static [Field]),
    /// An unordered set of objects.
    ObjSet(&'static [Field]),
    /// A map of strings (an object with string values in the CRD), sent as described.
    Map(MapWire),
}

/// How a map of strings is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapWire {
    /// As a JSON object.
    Object,
    /// As a list of `{"name": .., "value": ..}` objects (the Event service's headers).
    NameValue,
    /// A map of string lists (property values by name), sent as a JSON object; the lists
    /// compare as sets.
    Lists,
}

impl Ty {
    /// The child fields of an object type.
    pub fn children(&self) -> Option<&'static [Field]> {
        match self {
            Ty::Block(c) | Ty::Object(c) | Ty::ObjList(c) | Ty::ObjSet(c) => Some(c),
            _ => None,
        }
    }

    /// One object (a list block of at most one element, or a single-nested object).
    pub fn single(&self) -> Option<&'static [Field]> {
        match self {
            Ty::Block(c) | Ty::Object(c) => Some(c),
            _ => None,
        }
    }
}

/// A default value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dv {
    /// No provider default.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(&'static str),
    /// A list of strings.
    List(&'static [&'static str]),
}

impl Dv {
    /// The default as JSON (`None` for no default).
    pub fn to_json(self) -> Option<Value> {
        match self {
            Dv::None => None,
            Dv::Bool(b) => Some(json!(b)),
            Dv::Int(i) => Some(json!(i)),
            Dv::Str(s) => Some(json!(s)),
            Dv::List(l) => Some(json!(l)),
        }
    }
}

/// How a field is compared (beyond its type's own rule: sets unordered, lists ordered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// Equal values are equal.
    Plain,
    /// JFrog ignores an empty value once one is set (`remoteRepoLayoutRef`): an unset or
    /// empty desired value never counts as drift.
    NoClear,
    /// JFrog ignores an empty value; clearing sends a key that does not exist, which JFrog
    /// drops (`defaultDeploymentRepo`).
    ClearWithSentinel,
    /// JFrog may not return the value: an empty observed value equals any desired value
    /// (of any type).
    KeepWhenServerEmpty,
    /// JFrog may append " (local file cache)" to a remote repository's description.
    CacheSuffix,
    /// A comma-separated list compared as a set.
    CommaSet,
    /// Sent and compared only when the named boolean field is true.
    OnlyWhen(&'static str),
    /// Sent and compared only when the named boolean field is false (a Group's own
    /// `members`, honoured only with `useGroupMembersResource: false`).
    OnlyUnless(&'static str),
    /// Compared only when the repository belongs to a project (JFrog ignores environments
    /// otherwise).
    WhenInProject,
    /// A URL whose trailing slash JFrog removes.
    TrimSlash,
    /// A string JFrog answers in its own casing (`All Severities`): compared ignoring case.
    IgnoreCase,
    /// JSON text (an identity mapping's claims) compared as the JSON it holds, not as text.
    JsonText,
    /// A map compared on the keys the user declares: keys others set on the same object are
    /// not drift (an item's properties).
    DeclaredKeys,
}

impl Norm {
    /// The boolean field that switches this value on, and the value that does
    /// ([`Norm::OnlyWhen`] true, [`Norm::OnlyUnless`] false).
    pub fn gate(self) -> Option<(&'static str, bool)> {
        match self {
            Norm::OnlyWhen(g) => Some((g, true)),
            Norm::OnlyUnless(g) => Some((g, false)),
            _ => None,
        }
    }
}

/// One parameter of a Kind.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The CRD (camelCase Terraform) name; `<name>SecretRef` for sensitive values.
    pub crd: &'static str,
    /// The Terraform attribute name (composition key).
    pub tf: &'static str,
    /// The JSON member on the wire (dots for nesting); `None` for provider-side fields.
    pub wire: Option<&'static str>,
    /// The type.
    pub ty: Ty,
    /// The provider default, sent when the user leaves the field unset.
    pub default: Dv,
    /// Must be set (in forProvider or initProvider).
    pub required: bool,
    /// A secret: a Secret reference in the CRD, never in status or logs.
    pub sensitive: bool,
    /// JFrog never returns the value: compared by a hash of what was last sent.
    pub write_only: bool,
    /// Cannot change once set (CEL rule).
    pub immutable: bool,
    /// Output only: in `atProvider`, not in `forProvider`.
    pub status_only: bool,
    /// JFrog fills it when unset: Observe late-initialises it.
    pub late_init: bool,
    /// Unset means "not managed": not sent, not compared.
    pub ignore_unset: bool,
    /// The comparison rule.
    pub norm: Norm,
    /// Allowed values, when the upstream validates them.
    pub enums: &'static [&'static str],
    /// Description for the CRD.
    pub doc: &'static str,
    /// The smallest allowed integer, when the upstream validates one.
    pub min: Option<i64>,
    /// Not a parameter: always sent with its default (a constant member of the body, such
    /// as a handler's type), never compared.
    pub constant: bool,
    /// Cross-field rules checked at admission (CEL on this field's value; for object lists
    /// and blocks, on each element).
    pub rules: &'static [Rule],
    /// May be set only while the named boolean field is true (checked before any write;
    /// JFrog would silently ignore the value otherwise).
    pub requires: Option<&'static str>,
    /// A value JFrog generates and answers only to the create (a token): published in the
    /// connection Secret as `attribute.<tf>`, never in status.
    pub connection: bool,
    /// Sent as a query parameter of that name (its CRD name) on every call of an object
    /// that sets it (Xray's `?projectKey=`): the object lives in that scope, apart from the
    /// global one, so it is observed by its own read rather than from the list snapshot.
    pub query: bool,
    /// A secret upstream keeps as a plain string (a licence key, a mail server password):
    /// the CRD name (`<crd>SecretRef`) of the Secret-key reference accepted beside the plain
    /// field, for the same wire member. At most one of the two is set (CEL at admission); a
    /// required field needs one of them. Such a field is write-only (compared by a hash of
    /// what was sent, whichever form gave it).
    pub secret_ref: Option<&'static str>,
    /// An identifier part that, when unset, is the MR's external name (`metadata.name`
    /// unless annotated otherwise), as Upjet's `NameAsIdentifier` gives it: a manifest may
    /// leave it out or set it, and both reach the same object.
    pub from_name: bool,
}

/// A validation rule checked at admission: a CEL expression and the message naming the
/// field and the rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The CEL expression (`self` is the value the rule is attached to).
    pub cel: &'static str,
    /// The message shown when it fails.
    pub message: &'static str,
}

impl Field {
    /// A plain optional field without default.
    pub const fn new(
        crd: &'static str,
        tf: &'static str,
        wire: Option<&'static str>,
        ty: Ty,
    ) -> Self {
        Field {
            crd,
            tf,
            wire,
            ty,
            default: Dv::None,
            required: false,
            sensitive: false,
            write_only: false,
            immutable: false,
            status_only: false,
            late_init: false,
            ignore_unset: false,
            norm: Norm::Plain,
            enums: &[],
            doc: "",
            min: None,
            constant: false,
            rules: &[],
            requires: None,
            connection: false,
            query: false,
            secret_ref: None,
            from_name: false,
        }
    }
    /// Accept the value from a Secret too, as `ref_crd` (see [`Field::secret_ref`]).
    pub const fn secret_ref(self, ref_crd: &'static str) -> Self {
        Field {
            secret_ref: Some(ref_crd),
            ..self
        }
    }
    /// Unset, the external name (see [`Field::from_name`]).
    pub const fn from_name(self) -> Self {
        Field {
            from_name: true,
            ..self
        }
    }
    /// Sent as a query parameter named after the field on every call (see [`Field::query`]).
    pub const fn query(self) -> Self {
        Field {
            query: true,
            ..self
        }
    }
    /// Set the provider default.
    pub const fn default(self, default: Dv) -> Self {
        Field { default, ..self }
    }
    /// Mark required.
    pub const fn required(self) -> Self {
        Field {
            required: true,
            ..self
        }
    }
    /// Mark sensitive.
    pub const fn sensitive(self) -> Self {
        Field {
            sensitive: true,
            ..self
        }
    }
    /// Mark write-only.
    pub const fn write_only(self) -> Self {
        Field {
            write_only: true,
            ..self
        }
    }
    /// Mark immutable.
    pub const fn immutable(self) -> Self {
        Field {
            immutable: true,
            ..self
        }
    }
    /// Mark output-only.
    pub const fn status_only(self) -> Self {
        Field {
            status_only: true,
            ..self
        }
    }
    /// Mark server-defaulted (late-initialised).
    pub const fn late_init(self) -> Self {
        Field {
            late_init: true,
            ignore_unset: true,
            ..self
        }
    }
    /// Unset = unmanaged.
    pub const fn ignore_unset(self) -> Self {
        Field {
            ignore_unset: true,
            ..self
        }
    }
    /// Set the comparison rule.
    pub const fn norm(self, norm: Norm) -> Self {
        Field { norm, ..self }
    }
    /// Set the allowed values.
    pub const fn enums(self, enums: &'static [&'static str]) -> Self {
        Field { enums, ..self }
    }
    /// Set the description.
    pub const fn doc(self, doc: &'static str) -> Self {
        Field { doc, ..self }
    }
    /// Set the smallest allowed integer.
    pub const fn min(self, min: i64) -> Self {
        Field {
            min: Some(min),
            ..self
        }
    }
    /// A constant member: always sent with `value`, not a parameter.
    pub const fn constant(self, value: Dv) -> Self {
        Field {
            constant: true,
            default: value,
            ..self
        }
    }
    /// May be set only while the named boolean field is true.
    pub const fn requires(self, gate: &'static str) -> Self {
        Field {
            requires: Some(gate),
            ..self
        }
    }
    /// Set the admission rules.
    pub const fn rules(self, rules: &'static [Rule]) -> Self {
        Field { rules, ..self }
    }
    /// A generated value of the create answer, for the connection Secret only.
    pub const fn connection(self) -> Self {
        Field {
            connection: true,
            ..self
        }
    }

    /// Whether the field is a `forProvider` parameter.
    pub fn is_param(&self) -> bool {
        !self.status_only && !self.constant
    }

    /// Whether the field is reported in `atProvider` (read back and not secret).
    pub fn is_observed(&self) -> bool {
        self.wire.is_some()
            && !self.sensitive
            && !self.write_only
            && !self.constant
            && !self.connection
    }
}

/// How a Kind's JFrog identifier is derived (the runtime's [`IdentifierStrategy`], as
/// `const` data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// The external name is the identifier (a repository or webhook key).
    Name,
    /// A `forProvider` field is the identifier; `metadata.name` is free.
    SpecField(&'static str),
    /// Several `forProvider` fields joined by a separator.
    Composite(&'static [&'static str], &'static str),
    /// JFrog assigns the identifier at create.
    ServerAssigned,
    /// A platform singleton with a constant identifier.
    Singleton(&'static str),
}

impl Id {
    /// The runtime's strategy.
    pub fn strategy(self) -> IdentifierStrategy {
        match self {
            Id::Name => IdentifierStrategy::Name,
            Id::SpecField(f) => IdentifierStrategy::SpecField(f),
            Id::Composite(fields, separator) => IdentifierStrategy::Composite { fields, separator },
            Id::ServerAssigned => IdentifierStrategy::ServerAssigned,
            Id::Singleton(s) => IdentifierStrategy::Singleton(s),
        }
    }
}

/// One Kind, as declared in a family's (generated) tables (a `Kind` of the `kind` module
/// binds it to its behaviour).
#[derive(Debug, Clone, Copy)]
pub struct KindDecl {
    /// The provider short name (`artifactory`, `xray`, `project`, `platform`).
    pub provider: &'static str,
    /// The group short name (`repository`, `webhook`, ...).
    pub group: &'static str,
    /// The Kind name.
    pub kind: &'static str,
    /// One line for the CRD description (the family's hooks may compose a better one).
    pub description: &'static str,
    /// How the identifier is derived.
    pub id: Id,
    /// The body member that carries the identifier, if any.
    pub id_wire: Option<&'static str>,
    /// The base field set.
    pub extends: &'static [Field],
    /// Mixins, in order.
    pub mixins: &'static [&'static [Field]],
    /// The Kind's own fields.
    pub fields: &'static [Field],
    /// Default overrides by Terraform name.
    pub default_overrides: &'static [(&'static str, Dv)],
    /// Allowed values by Terraform name (for fields whose allowed values depend on the Kind).
    pub enum_overrides: &'static [(&'static str, &'static [&'static str])],
    /// Body members that say what the object is (`rclass`, `packageType`; a webhook's
    /// domain): sent on every write and checked on every observe, case-insensitively; an
    /// object whose members differ is another Kind's object, an error rather than drift.
    pub identity: &'static [(&'static str, &'static str)],
    /// Further fixed body members (dots for nesting), sent on every write.
    pub fixed_body: &'static [(&'static str, Dv)],
    /// Cross-field rules checked at admission on `forProvider` (CEL; `self` is
    /// `forProvider`).
    pub rules: &'static [Rule],
}

/// A composed Kind: its effective field list.
#[derive(Debug, Clone)]
pub struct ResolvedKind {
    /// The declaration.
    pub decl: KindDecl,
    /// Effective fields, in declaration order.
    pub fields: Vec<FieldRef>,
}

/// One effective field of a composed Kind: the declared field itself, or (where the Kind
/// overrides its allowed values or default) a changed copy. A provider keeps every Kind's
/// composed fields for its whole life, and most are used as declared: held by reference they
/// take 16 bytes each instead of a copy's 232 (provider-artifactory's 214 Kinds compose 4,060
/// fields: 0.9 MiB of copies).
#[derive(Debug, Clone)]
pub enum FieldRef {
    /// The field as declared.
    Declared(&'static Field),
    /// A copy the Kind changed.
    Changed(Box<Field>),
}

impl std::ops::Deref for FieldRef {
    type Target = Field;

    fn deref(&self) -> &Field {
        match self {
            FieldRef::Declared(f) => f,
            FieldRef::Changed(f) => f,
        }
    }
}

impl Borrow<Field> for FieldRef {
    fn borrow(&self) -> &Field {
        self
    }
}

impl FieldRef {
    /// The field, to be changed: a copy of a declared one.
    fn to_mut(&mut self) -> &mut Field {
        if let FieldRef::Declared(f) = *self {
            *self = FieldRef::Changed(Box::new(*f));
        }
        match self {
            FieldRef::Changed(f) => f,
            FieldRef::Declared(_) => unreachable!("made a copy above"),
        }
    }
}

/// A declaration that does not compose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct DeclError {
    /// The Kind.
    pub kind: &'static str,
    /// What is wrong.
    pub message: String,
}

impl KindDecl {
    /// Compose the effective field list.
    pub fn resolve(&self) -> Result<ResolvedKind, DeclError> {
        let err = |message: String| DeclError {
            kind: self.kind,
            message,
        };
        let mut fields: Vec<FieldRef> = Vec::new();
        let sets = std::iter::once(self.extends)
            .chain(self.mixins.iter().copied())
            .chain(std::iter::once(self.fields));
        for set in sets {
            for f in set {
                match fields.iter_mut().find(|e| e.tf == f.tf) {
                    Some(slot) => *slot = FieldRef::Declared(f),
                    None => fields.push(FieldRef::Declared(f)),
                }
            }
        }
        for (tf, values) in self.enum_overrides {
            let f = fields
                .iter_mut()
                .find(|f| f.tf == *tf)
                .ok_or_else(|| err(format!("enum override for unknown field {tf}")))?
                .to_mut();
            f.enums = values;
        }
        for (tf, d) in self.default_overrides {
            let f = fields
                .iter_mut()
                .find(|f| f.tf == *tf)
                .ok_or_else(|| err(format!("default override for unknown field {tf}")))?
                .to_mut();
            f.default = *d;
            // A field with a provider default is no longer server-defaulted.
            if f.late_init {
                f.late_init = false;
                f.ignore_unset = false;
            }
        }
        check_secret_refs(&fields).map_err(err)?;
        let mut seen = std::collections::BTreeSet::new();
        for f in &fields {
            if !seen.insert(f.crd) {
                return Err(err(format!("two fields named {}", f.crd)));
            }
            if f.sensitive && !f.crd.ends_with("SecretRef") {
                return Err(err(format!(
                    "sensitive field {} must be a SecretRef",
                    f.crd
                )));
            }
            if let Some(g) = f.requires
                && !fields
                    .iter()
                    .any(|x| x.crd == g && matches!(x.ty, Ty::Bool))
            {
                return Err(err(format!("{} requires unknown boolean {g}", f.crd)));
            }
            if let Some((g, _)) = f.norm.gate()
                && !fields
                    .iter()
                    .any(|x| x.crd == g && matches!(x.ty, Ty::Bool))
            {
                return Err(err(format!("{} depends on unknown boolean {g}", f.crd)));
            }
        }
        // Kept for the life of the process, one per Kind and scope: no growth slack.
        fields.shrink_to_fit();
        Ok(ResolvedKind {
            decl: *self,
            fields,
        })
    }
}

/// The rules of the Secret-reference forms of plain fields (see [`Field::secret_ref`]), in
/// `fields` and the blocks below them: named `<crd>SecretRef`, on a write-only string that
/// is not itself sensitive, and no sibling of that name.
fn check_secret_refs<F: Borrow<Field>>(fields: &[F]) -> Result<(), String> {
    for f in fields {
        let f = f.borrow();
        if let Some(r) = f.secret_ref {
            if r != format!("{}SecretRef", f.crd) {
                return Err(format!(
                    "the Secret reference of {} must be named {}SecretRef",
                    f.crd, f.crd
                ));
            }
            if f.sensitive || !f.write_only || !matches!(f.ty, Ty::Str) {
                return Err(format!(
                    "{} takes a Secret reference beside it: it must be a write-only, non-sensitive string",
                    f.crd
                ));
            }
            if fields.iter().any(|x| x.borrow().crd == r) {
                return Err(format!("two fields named {r}"));
            }
        }
        if let Some(children) = f.ty.children() {
            check_secret_refs(children)?;
        }
    }
    Ok(())
}

impl ResolvedKind {
    /// The `forProvider` parameters.
    pub fn params(&self) -> impl Iterator<Item = &Field> {
        self.fields.iter().map(|f| &**f).filter(|f| f.is_param())
    }

    /// A field by CRD name.
    pub fn field(&self, crd: &str) -> Option<&Field> {
        self.fields.iter().map(|f| &**f).find(|f| f.crd == crd)
    }
}

impl KindDecl {
    /// The value of an identity member.
    pub fn identity_value(&self, wire: &str) -> Option<&'static str> {
        self.identity
            .iter()
            .find(|(w, _)| *w == wire)
            .map(|(_, v)| *v)
    }
}

#[cfg(test)]
impl KindDecl {
    /// The test Kind `Thing` (provider `test`, group `thing`, identified by name) with these
    /// base and own fields and nothing else declared.
    pub(crate) const fn test_thing(extends: &'static [Field], fields: &'static [Field]) -> Self {
        KindDecl {
            provider: "test",
            group: "thing",
            kind: "Thing",
            description: "A thing.",
            id: Id::Name,
            id_wire: None,
            extends,
            mixins: &[],
            fields,
            default_overrides: &[],
            enum_overrides: &[],
            identity: &[],
            fixed_body: &[],
            rules: &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static BASE: &[Field] = &[
        Field::new("name", "name", Some("name"), Ty::Str),
        Field::new("mode", "mode", Some("mode"), Ty::Str).enums(&["a", "b"]),
        Field::new("size", "size", Some("size"), Ty::Int),
    ];
    static OWN: &[Field] = &[Field::new("name", "name", Some("key"), Ty::Str)];

    fn decl() -> KindDecl {
        KindDecl {
            default_overrides: &[("size", Dv::Int(3))],
            enum_overrides: &[("mode", &["c"])],
            ..KindDecl::test_thing(BASE, OWN)
        }
    }

    /// A composed Kind holds the fields it uses as declared by reference (the last
    /// declaration of a name wins) and copies only those it changes; the declarations stay
    /// as they are.
    #[test]
    fn composed_fields_are_the_declared_ones_unless_changed() {
        let k = decl().resolve().expect("composes");
        let crds: Vec<&str> = k.fields.iter().map(|f| f.crd).collect();
        assert_eq!(crds, ["name", "mode", "size"]);
        match &k.fields[0] {
            FieldRef::Declared(f) => {
                assert!(std::ptr::eq(*f, &OWN[0]), "the Kind's own field wins");
            }
            other => panic!("copied: {other:?}"),
        }
        assert!(matches!(&k.fields[1], FieldRef::Changed(f) if f.enums == ["c"]));
        assert!(matches!(&k.fields[2], FieldRef::Changed(f) if matches!(f.default, Dv::Int(3))));
        assert_eq!(BASE[1].enums, ["a", "b"], "the declaration is unchanged");
        assert!(matches!(BASE[2].default, Dv::None));
        assert_eq!(k.field("mode").map(|f| f.enums), Some(&["c"][..]));
        assert_eq!(k.params().count(), 3);
    }
}
