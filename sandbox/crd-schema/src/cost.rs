//! Static cost of `x-kubernetes-validations` rules, estimated as kube-apiserver 1.37 does when it
//! admits a CRD (`apiextensions-apiserver` validation with cel-go's `checker.Cost` and the
//! Kubernetes CEL libraries' size and call estimates).
//!
//! Each rule is priced as the worst case of one evaluation (`MaxCost`), then multiplied by how
//! often the node can occur in one object: the product of `maxItems` / `maxProperties` of the
//! lists and maps above it, or, when one of them is unbounded, the number of the node's smallest
//! serialization that fit in a 3 MiB request. A rule over the per-expression limit
//! ([`PER_EXPRESSION_LIMIT`]) and a schema whose rules add up to more than [`PER_CRD_LIMIT`]
//! are refused with kube-apiserver's messages. `messageExpression`s are priced once (not
//! multiplied).
//!
//! Sizes come from the schema as kube-apiserver's `DeclType` sees it: strings count
//! `maxLength * 4` (bytes of UTF-8 code points), an enum its longest value, otherwise the request
//! size; lists and maps their `maxItems` / `maxProperties`, otherwise the request size divided by
//! the smallest serialized element. At a resource root `apiVersion`, `kind` and
//! `metadata.{name,generateName}` are declared (name at most 253 characters). Map keys are
//! priced as empty strings, as kube-apiserver does.
//!
//! The cost model is cel-go's: identifiers and field selections 1 (presence tests 0, as the
//! Kubernetes environment configures), literals 0, list/map literals 10/30, most calls 1 plus
//! their arguments; `&&`/`||`/`?:` add nothing of their own; comprehensions (`all`, `exists`,
//! `exists_one`, `map`, `filter`) cost their range plus, per element, their loop condition and
//! step. Size dependent calls: `==`/`!=` and string/bytes ordering (smaller size / 10), `in` on
//! a list (list size), `matches` ((string size + 1) / 10 * pattern size / 4), `startsWith` /
//! `endsWith` (argument size / 10), `contains` (product), string/list concatenation,
//! `bytes()`/`string()` conversions, and the Kubernetes library functions (`url`, `upperAscii`,
//! `lowerAscii`, `trim`, `substring`, `replace`, `split`, `join`, `find(All)`, `isSorted`,
//! `sum`, `min`, `max`, `indexOf`, `lastIndexOf`, IP/CIDR, quantity, semver, format
//! `validate`, equality of URLs and formats).
//!
//! The `sets` extension (size product, `sets.equivalent` twice) and the `lists` extension
//! (`slice`, `reverse`, `flatten`, `distinct` and `sort`, quadratic for the last two,
//! `lists.range`) are priced by their own estimators, as version 3 of cel-go's `lists` does.
//!
//! Deviations: types come from the schema and a light inference (no full type checker); calls
//! on values whose type is unknown (`dyn`) are priced as the most expensive of the overloads
//! they might resolve to, as cel-go does. `cel.bind` and two-variable comprehensions are not
//! parsed by the `cel` crate, so their pricing is untested. An `optionalOldSelf` rule's
//! `oldSelf` is typed like `self` (cel-go: an optional of it; the estimate is the same for the
//! usual `oldSelf.hasValue()` / `oldSelf.value()` shapes). kube-apiserver visits properties in
//! Go's random map order, so which of several equally expensive rules of different properties
//! the CRD total names (and the order of errors across properties) varies there; here it is
//! the schema's order. On an update that leaves a version's schema unchanged the per-rule limit
//! is skipped (the total is not), as upstream.
//!
//! Checked against a real kube-apiserver v1.37.2: `tests/real_verdicts/` (118 CRDs, 92 of them
//! pinning the per-evaluation cost of one rule shape to the unit).

use std::collections::HashMap;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use crate::cel::escape_property;
use crate::node::{Additional, Node};

/// `StaticEstimatedCostLimit`: the largest estimated cost of one rule (times its cardinality).
pub const PER_EXPRESSION_LIMIT: u64 = 10_000_000;
/// `StaticEstimatedCRDCostLimit`: the largest total of one schema's rules.
pub const PER_CRD_LIMIT: u64 = 100_000_000;
/// `MaxRequestSizeBytes` of the Kubernetes CEL configuration (3 MiB).
const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
/// The longest string or list a request may hold: the request size minus the quotes/brackets.
const MAX_PER_REQUEST: i64 = MAX_REQUEST_SIZE_BYTES - 2;
/// Cost of traversing one character of a string (`StringTraversalCostFactor`).
const STRING_TRAVERSAL: f64 = 0.1;
/// Cost per pattern character of a regex match (`RegexStringLengthCostFactor`).
const REGEX_LENGTH: f64 = 0.25;
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
const STRUCT_CREATE: u64 = 40;
/// Longest name of a named format (`MaxNameFormatRegexSize`).
const MAX_NAME_FORMAT_REGEX: f64 = 128.0;
/// Longest format string (`MaxFormatSize`).
const MAX_FORMAT_SIZE: u64 = 64;
/// Upper bound of `metadata.name` (`DNS1123SubdomainMaxLength`).
const NAME_MAX_LENGTH: i64 = 253;

/// A range of costs or sizes, saturating at `u64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// The lower bound.
    pub min: u64,
    /// The upper bound.
    pub max: u64,
}

impl Estimate {
    const UNKNOWN: Estimate = Estimate {
        min: 0,
        max: u64::MAX,
    };

    fn fixed(v: u64) -> Estimate {
        Estimate { min: v, max: v }
    }

    fn add(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    fn mul(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    fn factor(self, f: f64) -> Estimate {
        Estimate {
            min: mul_factor(self.min, f),
            max: mul_factor(self.max, f),
        }
    }

    fn union(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// `x * f` rounded up, saturating (`multiplyByCostFactor`).
fn mul_factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let c = (xf * f).ceil();
    if c >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        c as u64
    }
}

/// `multiplyWithOverflowGuard`.
fn guard_mul(base: u64, card: u64) -> u64 {
    if base == 0 {
        0
    } else {
        base.saturating_mul(card)
    }
}

// ---------------------------------------------------------------------------------------------
// Schema declarations (`DeclType`)

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclKind {
    Bool,
    Int,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    Dyn,
    List,
    Map,
    Object,
}

/// What the estimator knows of a schema node: its CEL kind, the largest size of its values and
/// the smallest size of its JSON serialization.
#[derive(Debug)]
pub(crate) struct Decl {
    kind: DeclKind,
    max_elements: i64,
    min_size: i64,
    fields: HashMap<String, Decl>,
    elem: Option<Box<Decl>>,
    key: Option<Box<Decl>>,
}

fn zero_if_negative(v: i64) -> i64 {
    v.max(0)
}

impl Decl {
    fn simple(kind: DeclKind, min_size: i64, max_elements: i64) -> Decl {
        Decl {
            kind,
            max_elements,
            min_size,
            fields: HashMap::new(),
            elem: None,
            key: None,
        }
    }

    fn plain_string() -> Decl {
        Decl::simple(DeclKind::String, 2, MAX_PER_REQUEST)
    }

    /// `SchemaDeclType`: `None` for nodes CEL cannot see (untyped, or lists/maps of them).
    pub(crate) fn build(n: &Node, resource_root: bool) -> Option<Decl> {
        if n.int_or_string {
            let max = n
                .max_length
                .map_or(MAX_PER_REQUEST, |l| zero_if_negative(l).saturating_mul(4));
            return Some(Decl::simple(DeclKind::Dyn, 1, max));
        }
        match n.ty.as_str() {
            "array" => {
                let items = n.items.as_deref()?;
                let item = Decl::build(items, items.embedded_resource)?;
                let max = n
                    .max_items
                    .map_or_else(|| MAX_PER_REQUEST / (item.min_size + 1), zero_if_negative);
                let mut d = Decl::simple(DeclKind::List, 2, max);
                d.elem = Some(Box::new(item));
                Some(d)
            }
            "object" => {
                if let Some(Additional::Schema(a)) = &n.additional {
                    let value = Decl::build(a, a.embedded_resource)?;
                    let max = n
                        .max_properties
                        .map_or_else(|| MAX_PER_REQUEST / (value.min_size + 6), zero_if_negative);
                    let mut d = Decl::simple(DeclKind::Map, 2, max);
                    d.key = Some(Box::new(Decl::simple(DeclKind::String, 2, 0)));
                    d.elem = Some(Box::new(value));
                    return Some(d);
                }
                let mut d = Decl::simple(DeclKind::Object, 2, 0);
                let mut min_size = 2i64;
                let inject = resource_root && !declares_type_and_meta(n);
                for (name, prop) in &n.properties {
                    if inject && matches!(name.as_str(), "kind" | "apiVersion" | "metadata") {
                        continue;
                    }
                    if let Some(t) = Decl::build(prop, prop.embedded_resource) {
                        if n.required.contains(name) && prop.default.is_none() {
                            min_size += name.len() as i64 + t.min_size + 4;
                        }
                        if let Some(esc) = escape_property(name) {
                            d.fields.insert(esc, t);
                        }
                    }
                }
                if inject {
                    for name in ["kind", "apiVersion"] {
                        if n.required.iter().any(|r| r == name) {
                            min_size += name.len() as i64 + 2 + 4;
                        }
                        d.fields.insert(name.to_string(), Decl::plain_string());
                    }
                    let meta = n.properties.get("metadata");
                    let capped = |field: &str, cap: i64| {
                        let existing = meta
                            .and_then(|m| m.properties.get(field))
                            .and_then(|f| f.max_length);
                        let l = existing.filter(|l| *l < cap).unwrap_or(cap);
                        Decl::simple(DeclKind::String, 2, zero_if_negative(l).saturating_mul(4))
                    };
                    let mut m = Decl::simple(DeclKind::Object, 2, 0);
                    m.fields
                        .insert("name".to_string(), capped("name", NAME_MAX_LENGTH));
                    m.fields.insert(
                        "generateName".to_string(),
                        capped("generateName", NAME_MAX_LENGTH - 1),
                    );
                    if n.required.iter().any(|r| r == "metadata") {
                        min_size += "metadata".len() as i64 + 2 + 4;
                    }
                    d.fields.insert("metadata".to_string(), m);
                }
                d.min_size = min_size;
                Some(d)
            }
            "string" => Some(match n.raw_format.as_str() {
                "byte" => Decl::simple(
                    DeclKind::Bytes,
                    2,
                    n.max_length.map_or(MAX_PER_REQUEST, zero_if_negative),
                ),
                "duration" => Decl::simple(DeclKind::Duration, 3, 32),
                "date" => Decl::simple(DeclKind::Timestamp, 12, 12),
                "date-time" => Decl::simple(DeclKind::Timestamp, 21, 32),
                _ => {
                    let max = match (&n.max_length, &n.enum_values) {
                        (Some(l), _) => zero_if_negative(*l).saturating_mul(4),
                        (None, Some(e)) if !e.is_empty() => e
                            .iter()
                            .filter_map(|v| v.as_str().map(|s| s.len() as i64))
                            .max()
                            .unwrap_or(0),
                        _ => MAX_PER_REQUEST,
                    };
                    Decl::simple(DeclKind::String, 2, max)
                }
            }),
            "boolean" => Some(Decl::simple(DeclKind::Bool, 4, 0)),
            "number" => Some(Decl::simple(DeclKind::Double, 1, 0)),
            "integer" => Some(Decl::simple(DeclKind::Int, 1, 0)),
            _ => None,
        }
    }

    /// The declaration of a property, as the parent's declaration lists it.
    fn field(&self, name: &str) -> Option<&Decl> {
        escape_property(name).and_then(|e| self.fields.get(&e))
    }

    /// The rule's `MaxCardinality` when its node is under an unbounded list or map: how many
    /// of the smallest serializations of the node fit in one request.
    fn max_cardinality(&self) -> u64 {
        (MAX_REQUEST_SIZE_BYTES / (self.min_size + 1)) as u64
    }
}

/// Whether a resource root declares `kind`, `apiVersion` and `metadata.{name,generateName}`
/// itself (otherwise kube-apiserver declares them for CEL).
fn declares_type_and_meta(n: &Node) -> bool {
    let is = |n: Option<&Node>, t: &str| n.is_some_and(|n| n.ty == t);
    let meta = n.properties.get("metadata");
    is(n.properties.get("kind"), "string")
        && is(n.properties.get("apiVersion"), "string")
        && is(meta, "object")
        && is(meta.and_then(|m| m.properties.get("name")), "string")
        && is(
            meta.and_then(|m| m.properties.get("generateName")),
            "string",
        )
}

// ---------------------------------------------------------------------------------------------
// Types of expressions

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    Null,
    Dyn,
    Type,
    List,
    Map,
    Struct,
    Opaque,
}

#[derive(Debug, Clone)]
enum Ty<'d> {
    Prim(Kind),
    /// A list, map or object declared by the schema.
    Decl(&'d Decl),
    List(Box<Ty<'d>>),
    Map(Box<Ty<'d>>, Box<Ty<'d>>),
    /// A library type (`kubernetes.URL`, `net.IP`, ...).
    Opaque(&'static str),
}

const DYN: Ty<'static> = Ty::Prim(Kind::Dyn);

impl<'d> Ty<'d> {
    fn of(d: &'d Decl) -> Ty<'d> {
        Ty::Prim(match d.kind {
            DeclKind::Bool => Kind::Bool,
            DeclKind::Int => Kind::Int,
            DeclKind::Double => Kind::Double,
            DeclKind::String => Kind::String,
            DeclKind::Bytes => Kind::Bytes,
            DeclKind::Duration => Kind::Duration,
            DeclKind::Timestamp => Kind::Timestamp,
            DeclKind::Dyn => Kind::Dyn,
            DeclKind::List | DeclKind::Map | DeclKind::Object => return Ty::Decl(d),
        })
    }

    fn kind(&self) -> Kind {
        match self {
            Ty::Prim(k) => *k,
            Ty::Decl(d) => match d.kind {
                DeclKind::List => Kind::List,
                DeclKind::Map => Kind::Map,
                _ => Kind::Struct,
            },
            Ty::List(_) => Kind::List,
            Ty::Map(..) => Kind::Map,
            Ty::Opaque(_) => Kind::Opaque,
        }
    }

    /// The first type parameter: the element type of a list, the key type of a map.
    fn param(&self) -> Option<Ty<'d>> {
        match self {
            Ty::Decl(d) if d.kind == DeclKind::List => d.elem.as_deref().map(Ty::of),
            Ty::Decl(d) if d.kind == DeclKind::Map => Some(Ty::Prim(Kind::String)),
            Ty::List(e) => Some((**e).clone()),
            Ty::Map(k, _) => Some((**k).clone()),
            _ => None,
        }
    }

    /// The element type of a list or the value type of a map.
    fn elem(&self) -> Ty<'d> {
        match self {
            Ty::Decl(d) if matches!(d.kind, DeclKind::List | DeclKind::Map) => {
                d.elem.as_deref().map_or(DYN, Ty::of)
            }
            Ty::List(e) | Ty::Map(_, e) => (**e).clone(),
            _ => DYN,
        }
    }

    fn select(&self, field: &str) -> Ty<'d> {
        match self {
            Ty::Decl(d) if d.kind == DeclKind::Object => d.fields.get(field).map_or(DYN, Ty::of),
            Ty::Decl(d) if d.kind == DeclKind::Map => d.elem.as_deref().map_or(DYN, Ty::of),
            Ty::Map(_, v) => (**v).clone(),
            _ => DYN,
        }
    }

    fn same(&self, o: &Ty<'d>) -> bool {
        match (self, o) {
            (Ty::Decl(a), Ty::Decl(b)) => std::ptr::eq(*a, *b),
            (Ty::Opaque(a), Ty::Opaque(b)) => a == b,
            (Ty::List(a), Ty::List(b)) => a.same(b),
            (Ty::Map(a, b), Ty::Map(c, d)) => a.same(c) && b.same(d),
            _ => {
                let (a, b) = (self.kind(), o.kind());
                a == b && !matches!(a, Kind::List | Kind::Map | Kind::Struct | Kind::Opaque)
            }
        }
    }

    /// `isScalar`: values of a fixed size.
    fn is_scalar(&self) -> bool {
        matches!(
            self.kind(),
            Kind::Bool | Kind::Double | Kind::Duration | Kind::Int | Kind::Timestamp | Kind::Uint
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The estimator (cel-go's `coster`)

#[derive(Debug, Clone, Copy)]
struct Entry {
    list: bool,
    key: Estimate,
    val: Estimate,
}

fn union_entry(a: Option<Entry>, b: Option<Entry>) -> Option<Entry> {
    let (a, b) = (a?, b?);
    Some(Entry {
        list: a.list,
        key: a.key.union(b.key),
        val: a.val.union(b.val),
    })
}

struct Local<'d> {
    path: Vec<String>,
    size: Option<Estimate>,
    entry: Option<Entry>,
    ty: Ty<'d>,
}

/// What a function estimate sees of an argument or target (`checker.AstNode`).
struct Arg<'d> {
    path: Vec<String>,
    ty: Ty<'d>,
    size: Option<Estimate>,
    int_literal: Option<i64>,
}

/// Function namespaces of the CRD environment: `format.dns1123Label()` is a global function.
const NAMESPACES: [&str; 7] = [
    "format", "sets", "math", "strings", "base64", "optional", "lists",
];

struct Coster<'d> {
    root: &'d Decl,
    paths: HashMap<u64, Vec<String>>,
    sizes: HashMap<u64, Estimate>,
    entries: HashMap<u64, Entry>,
    types: HashMap<u64, Ty<'d>>,
    locals: HashMap<String, Vec<Local<'d>>>,
}

/// The estimated worst-case cost of one evaluation of `expr` with `self` (and `oldSelf`) of
/// the declaration `root`.
pub(crate) fn estimate(expr: &IdedExpr, root: &Decl) -> Estimate {
    let mut c = Coster {
        root,
        paths: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
        types: HashMap::new(),
        locals: HashMap::new(),
    };
    c.cost(expr)
}

fn is_accumulator(name: &str) -> bool {
    name == "@result" || name == "__result__"
}

impl<'d> Coster<'d> {
    fn ty(&self, e: &IdedExpr) -> Ty<'d> {
        self.types.get(&e.id).cloned().unwrap_or(DYN)
    }

    fn local(&self, name: &str) -> Option<&Local<'d>> {
        self.locals.get(name).and_then(|v| v.last())
    }

    fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(name) = &e.expr
            && let Some(l) = self.local(name)
        {
            return l.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// `EstimateSize` of the Kubernetes size estimator: the declared size at a path from `self`.
    fn size_at(&self, path: &[String]) -> Option<Estimate> {
        let (_, rest) = path.split_first()?;
        let mut d = self.root;
        for name in rest {
            d = match name.as_str() {
                "@items" | "@values" => d.elem.as_deref()?,
                "@keys" => d.key.as_deref()?,
                n => d.fields.get(n)?,
            };
        }
        Some(Estimate {
            min: 0,
            max: d.max_elements as u64,
        })
    }

    /// `computeSize`.
    fn size(&mut self, e: &IdedExpr) -> Option<Estimate> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        let literal = match &e.expr {
            Expr::Literal(l) => Some(match l {
                LiteralValue::String(s) => s.inner().chars().count() as u64,
                LiteralValue::Bytes(b) => b.inner().len() as u64,
                _ => 1,
            }),
            Expr::List(l) => Some(l.elements.len() as u64),
            Expr::Map(m) => Some(m.entries.len() as u64),
            _ => None,
        };
        if let Some(v) = literal {
            return Some(Estimate::fixed(v));
        }
        let path = self.path(e);
        if let Some(s) = self.size_at(&path) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if self.ty(e).is_scalar() {
            return Some(Estimate::fixed(1));
        }
        if let Expr::Ident(name) = &e.expr
            && let Some(s) = self.local(name).and_then(|l| l.size)
        {
            return Some(s);
        }
        None
    }

    fn size_or_unknown(&mut self, e: &IdedExpr) -> Estimate {
        self.size(e).unwrap_or(Estimate::UNKNOWN)
    }

    fn entry(&self, e: &IdedExpr) -> Option<Entry> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(*s);
        }
        if let Expr::Ident(name) = &e.expr {
            return self.local(name).and_then(|l| l.entry);
        }
        None
    }

    fn arg(&mut self, e: &IdedExpr) -> Arg<'d> {
        let mut path = self.path(e);
        if path.first().is_some_and(|p| is_accumulator(p)) {
            path.clear();
        }
        let int_literal = match &e.expr {
            Expr::Literal(LiteralValue::Int(i)) => Some(*i.inner()),
            _ => None,
        };
        Arg {
            path,
            ty: self.ty(e),
            size: self.size(e),
            int_literal,
        }
    }

    fn push(&mut self, name: &str, l: Local<'d>) {
        self.locals.entry(name.to_string()).or_default().push(l);
    }

    fn pop(&mut self, name: &str) {
        if let Some(v) = self.locals.get_mut(name) {
            v.pop();
        }
    }

    fn cost(&mut self, e: &IdedExpr) -> Estimate {
        match &e.expr {
            Expr::Literal(l) => {
                let k = match l {
                    LiteralValue::Boolean(_) => Kind::Bool,
                    LiteralValue::Bytes(_) => Kind::Bytes,
                    LiteralValue::Double(_) => Kind::Double,
                    LiteralValue::Int(_) => Kind::Int,
                    LiteralValue::String(_) => Kind::String,
                    LiteralValue::UInt(_) => Kind::Uint,
                    LiteralValue::Null => Kind::Null,
                };
                self.types.insert(e.id, Ty::Prim(k));
                Estimate::fixed(0)
            }
            Expr::Ident(name) => {
                let (path, ty) = match self.local(name) {
                    Some(l) => (l.path.clone(), l.ty.clone()),
                    None => {
                        let ty = match name.as_str() {
                            "self" | "oldSelf" => Ty::of(self.root),
                            _ => DYN,
                        };
                        (vec![name.clone()], ty)
                    }
                };
                self.paths.insert(e.id, path);
                self.types.insert(e.id, ty);
                Estimate::fixed(1)
            }
            Expr::Select(sel) if sel.test => {
                let c = self.cost(&sel.operand);
                self.types.insert(e.id, Ty::Prim(Kind::Bool));
                c
            }
            Expr::Select(sel) => {
                let mut c = self.cost(&sel.operand);
                let op = self.ty(&sel.operand);
                if matches!(op.kind(), Kind::Map | Kind::Struct) {
                    c = c.add(Estimate::fixed(1));
                }
                let mut path = self.path(&sel.operand);
                path.push(sel.field.clone());
                self.paths.insert(e.id, path);
                self.types.insert(e.id, op.select(&sel.field));
                c
            }
            Expr::Call(call) => self.cost_call(e, call),
            Expr::List(l) => {
                let mut sum = Estimate::fixed(0);
                let mut item = if l.elements.is_empty() {
                    Estimate::fixed(0)
                } else {
                    Estimate {
                        min: u64::MAX,
                        max: 0,
                    }
                };
                let mut elem_ty: Option<Ty<'d>> = None;
                for el in &l.elements {
                    sum = sum.add(self.cost(el));
                    item = item.union(self.size_or_unknown(el));
                    let t = self.ty(el);
                    elem_ty = Some(match elem_ty {
                        None => t,
                        Some(prev) if prev.same(&t) => prev,
                        Some(_) => DYN,
                    });
                }
                self.entries.insert(
                    e.id,
                    Entry {
                        list: true,
                        key: Estimate::fixed(1),
                        val: item,
                    },
                );
                self.types
                    .insert(e.id, Ty::List(Box::new(elem_ty.unwrap_or(DYN))));
                sum.add(Estimate::fixed(LIST_CREATE))
            }
            Expr::Map(m) => {
                let mut sum = Estimate::fixed(0);
                let empty = m.entries.is_empty();
                let start = Estimate {
                    min: if empty { 0 } else { u64::MAX },
                    max: 0,
                };
                let (mut ks, mut vs) = (start, start);
                let (mut kt, mut vt): (Option<Ty<'d>>, Option<Ty<'d>>) = (None, None);
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        sum = sum.add(self.cost(&me.key));
                        sum = sum.add(self.cost(&me.value));
                        ks = ks.union(self.size_or_unknown(&me.key));
                        vs = vs.union(self.size_or_unknown(&me.value));
                        kt.get_or_insert_with(|| self.ty(&me.key));
                        vt.get_or_insert_with(|| self.ty(&me.value));
                    }
                }
                self.entries.insert(
                    e.id,
                    Entry {
                        list: false,
                        key: ks,
                        val: vs,
                    },
                );
                self.types.insert(
                    e.id,
                    Ty::Map(Box::new(kt.unwrap_or(DYN)), Box::new(vt.unwrap_or(DYN))),
                );
                sum.add(Estimate::fixed(MAP_CREATE))
            }
            Expr::Struct(s) => {
                let mut sum = Estimate::fixed(0);
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum.add(Estimate::fixed(STRUCT_CREATE))
            }
            Expr::Comprehension(c) => self.cost_comprehension(e, c),
            Expr::Unspecified => Estimate::fixed(0),
        }
    }

    fn cost_comprehension(
        &mut self,
        e: &IdedExpr,
        c: &cel::common::ast::ComprehensionExpr,
    ) -> Estimate {
        let mut sum = self.cost(&c.iter_range);
        sum = sum.add(self.cost(&c.accu_init));
        let accu = Local {
            path: self.path(&c.accu_init),
            size: self.size(&c.accu_init),
            entry: self.entry(&c.accu_init),
            ty: self.ty(&c.accu_init),
        };
        self.push(&c.accu_var, accu);
        let range_entry = self.entry(&c.iter_range);
        let range_ty = self.ty(&c.iter_range);
        let is_list = match range_entry {
            Some(en) => en.list,
            None => range_ty.kind() == Kind::List,
        };
        let range_path = self.path(&c.iter_range);
        let with = |sub: &str| {
            let mut p = range_path.clone();
            p.push(sub.to_string());
            p
        };
        let key_ty = if is_list {
            Ty::Prim(Kind::Int)
        } else {
            range_ty.param().unwrap_or(DYN)
        };
        match &c.iter_var2 {
            Some(v2) => {
                let key = Local {
                    path: with(if is_list { "@indices" } else { "@keys" }),
                    size: range_entry.map(|en| en.key),
                    entry: None,
                    ty: key_ty,
                };
                let value = Local {
                    path: with(if is_list { "@items" } else { "@values" }),
                    size: range_entry.map(|en| en.val),
                    entry: None,
                    ty: range_ty.elem(),
                };
                self.push(&c.iter_var, key);
                self.push(v2, value);
            }
            None => {
                let single = if is_list {
                    Local {
                        path: with("@items"),
                        size: range_entry.map(|en| en.val),
                        entry: None,
                        ty: range_ty.elem(),
                    }
                } else {
                    Local {
                        path: with("@keys"),
                        size: range_entry.map(|en| en.key),
                        entry: None,
                        ty: key_ty,
                    }
                };
                self.push(&c.iter_var, single);
            }
        }
        let loop_cost = self.cost(&c.loop_cond);
        let step_cost = self.cost(&c.loop_step);
        self.pop(&c.iter_var);
        if let Some(v2) = &c.iter_var2 {
            self.pop(v2);
        }
        sum = sum.add(self.cost(&c.result));
        // The result of map/filter is the accumulated list, typed by the step.
        let result_ty = match (&c.accu_init.expr, &c.result.expr) {
            (Expr::List(_) | Expr::Map(_), Expr::Ident(r)) if r == &c.accu_var => {
                self.ty(&c.loop_step)
            }
            _ => self.ty(&c.result),
        };
        self.pop(&c.accu_var);
        let range = self.size_or_unknown(&c.iter_range);
        sum = sum.add(range.mul(step_cost.add(loop_cost)));
        match &c.accu_init.expr {
            Expr::Literal(_) => {
                if let Some(s) = self.size(&c.accu_init) {
                    self.sizes.insert(e.id, s);
                }
            }
            Expr::List(_) | Expr::Map(_) => {
                self.sizes.insert(e.id, range);
                if let Some(en) = self.entry(&c.loop_step) {
                    self.entries.insert(e.id, en);
                }
            }
            _ => {}
        }
        self.types.insert(e.id, result_ty);
        sum
    }

    fn cost_call(&mut self, e: &IdedExpr, call: &cel::common::ast::CallExpr) -> Estimate {
        // `dyn(x)`: the argument plus one.
        if call.func_name == "dyn"
            && call.target.is_none()
            && let [arg] = call.args.as_slice()
        {
            let c = self.cost(arg);
            if let Some(s) = self.size(arg) {
                self.sizes.insert(e.id, s);
            }
            if let Some(en) = self.entry(arg) {
                self.entries.insert(e.id, en);
            }
            self.types.insert(e.id, DYN);
            return Estimate::fixed(1).add(c);
        }
        let (name, target) = match call.target.as_deref() {
            Some(t)
                if matches!(&t.expr, Expr::Ident(ns)
                    if NAMESPACES.contains(&ns.as_str()) && self.local(ns).is_none()
                        && ns != "self" && ns != "oldSelf") =>
            {
                let Expr::Ident(ns) = &t.expr else {
                    unreachable!()
                };
                (format!("{ns}.{}", call.func_name), None)
            }
            other => (call.func_name.clone(), other),
        };
        let mut arg_costs = Vec::with_capacity(call.args.len());
        let mut args = Vec::with_capacity(call.args.len());
        for a in &call.args {
            arg_costs.push(self.cost(a));
            args.push(self.arg(a));
        }
        let mut sum = Estimate::fixed(0);
        let target_arg = match target {
            Some(t) => {
                sum = sum.add(self.cost(t));
                Some(self.arg(t))
            }
            None => None,
        };
        let result_ty = result_type(&name, target_arg.as_ref(), &args);
        self.types.insert(e.id, result_ty);
        let overloads = overloads(&name, target_arg.as_ref(), &args);
        let mut fn_cost = Estimate {
            min: u64::MAX,
            max: 0,
        };
        let mut result_size: Option<Estimate> = None;
        for ov in overloads {
            let (c, rs) = self.function_cost(e, &name, ov, target_arg.as_ref(), &args, &arg_costs);
            fn_cost = fn_cost.union(c);
            if let Some(rs) = rs {
                result_size = Some(result_size.map_or(rs, |r| r.union(rs)));
            }
            if matches!(ov, Ov::IndexList | Ov::IndexMap) && !call.args.is_empty() {
                result_size = self.entry(&call.args[0]).map(|en| en.val);
                let mut p = self.path(&call.args[0]);
                p.push(
                    if ov == Ov::IndexList {
                        "@items"
                    } else {
                        "@values"
                    }
                    .to_string(),
                );
                self.paths.insert(e.id, p);
            }
            if result_size.is_none() {
                result_size = self.size(e);
            }
        }
        if let Some(rs) = result_size {
            self.sizes.insert(e.id, rs);
        }
        sum.add(fn_cost)
    }

    /// `sizeEstimate` of the Kubernetes estimator: the computed size, else the declared one.
    fn k8s_size(&self, a: &Arg<'d>) -> Estimate {
        a.size
            .or_else(|| self.size_at(&a.path))
            .unwrap_or(Estimate::UNKNOWN)
    }

    /// `listElementNode`: the element of a list argument, by path.
    fn element(&self, list: &Arg<'d>) -> Option<Arg<'d>> {
        let t = list.ty.param()?;
        let path = if list.path.is_empty() {
            Vec::new()
        } else {
            let mut p = list.path.clone();
            p.push("@items".to_string());
            p
        };
        Some(Arg {
            path,
            ty: t,
            size: None,
            int_literal: None,
        })
    }

    /// The estimators cel-go's `sets` and `lists` (version 3) extensions register per
    /// overload, which take precedence over the others.
    fn extension_call(
        &self,
        ov: Ov,
        target: Option<&Arg<'d>>,
        args: &[Arg<'d>],
    ) -> Option<(Estimate, Option<Estimate>)> {
        // A call allocating a list: dispatch 1, the list 10, `factor` per element.
        let allocating = |factor: f64, size: Estimate| {
            Some((
                size.factor(factor)
                    .add(Estimate::fixed(1))
                    .add(Estimate::fixed(LIST_CREATE)),
                Some(size),
            ))
        };
        let uint_literal = |a: Option<&Arg<'d>>, default: u64| match a.and_then(|a| a.int_literal) {
            Some(i) if i < 0 => 0,
            Some(i) => i as u64,
            None => default,
        };
        match ov {
            Ov::Sets(factor) if args.len() == 2 => {
                let c = self
                    .k8s_size(&args[0])
                    .mul(self.k8s_size(&args[1]))
                    .factor(f64::from(factor))
                    .add(Estimate::fixed(1));
                Some((c, None))
            }
            Ov::ListSlice if args.len() == 2 => {
                let sz = self.k8s_size(target?);
                let start = uint_literal(args.first(), 0);
                let end = uint_literal(args.get(1), sz.max);
                allocating(1.0, Estimate::fixed(end.wrapping_sub(start)))
            }
            Ov::ListsRange if target.is_none() && args.len() == 1 => {
                allocating(1.0, Estimate::fixed(uint_literal(args.first(), u64::MAX)))
            }
            Ov::ListReverse if args.is_empty() => allocating(1.0, self.k8s_size(target?)),
            Ov::ListFlatten if args.len() <= 1 => {
                let depth = if args.is_empty() {
                    1
                } else {
                    uint_literal(args.first(), u64::MAX)
                };
                allocating(depth as f64, self.k8s_size(target?))
            }
            Ov::ListDistinct if args.is_empty() => {
                let sz = self.k8s_size(target?);
                allocating(2.0, sz.mul(sz))
            }
            Ov::ListSort if args.is_empty() => {
                let t = target?;
                let sz = self.k8s_size(t);
                let stringy = t
                    .ty
                    .param()
                    .is_some_and(|e| matches!(e.kind(), Kind::String | Kind::Bytes | Kind::Dyn));
                let factor = if stringy { 2.0 + STRING_TRAVERSAL } else { 2.0 };
                allocating(factor, sz.mul(sz))
            }
            _ => None,
        }
    }

    /// The Kubernetes library's `EstimateCallCost` (before cel-go's own estimates).
    fn k8s_call(
        &self,
        name: &str,
        ov: Ov,
        target: Option<&Arg<'d>>,
        args: &[Arg<'d>],
    ) -> Option<(Estimate, Option<Estimate>)> {
        let one = Some((Estimate::fixed(1), None));
        match name {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" | "includes" => {
                let t = target?;
                let mut el_cost = Estimate::fixed(1);
                if let Some(el) = self.element(t) {
                    if matches!(el.ty.kind(), Kind::String | Kind::Bytes) {
                        el_cost = el_cost.add(self.k8s_size(&el).factor(STRING_TRAVERSAL));
                    }
                    Some((self.k8s_size(t).mul(el_cost), None))
                } else if name == "includes" {
                    Some((self.k8s_size(t).mul(el_cost), None))
                } else {
                    Some((self.k8s_size(t).factor(STRING_TRAVERSAL), None))
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let sz = self.k8s_size(&args[0]);
                Some((sz.factor(STRING_TRAVERSAL), Some(sz)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let sz = self.k8s_size(target?);
                Some((sz.factor(STRING_TRAVERSAL), Some(sz)))
            }
            "replace" if args.len() >= 2 => {
                let sz = self.k8s_size(target?);
                let from = self.k8s_size(&args[0]);
                let with = self.k8s_size(&args[1]);
                let mut count = Estimate::fixed(0);
                let mut retained = Estimate::fixed(0);
                if from.min == 0 {
                    count.max = if sz.max < u64::MAX {
                        sz.max + 1
                    } else {
                        sz.max
                    };
                    retained.max = sz.max;
                } else if with.max <= from.min {
                    retained.max = sz.max;
                } else {
                    count.max = (sz.max as f64 / from.min as f64).ceil() as u64;
                }
                if from.max == 0 {
                    count.min = if sz.min < u64::MAX {
                        sz.min + 1
                    } else {
                        sz.min
                    };
                    retained.min = sz.min;
                } else if from.max <= with.min {
                    retained.min = sz.min;
                } else {
                    count.min = (sz.min as f64 / from.max as f64).ceil() as u64;
                }
                let size = count.mul(with).add(retained);
                Some((sz.factor(2.0 * STRING_TRAVERSAL), Some(size)))
            }
            "split" => {
                let sz = self.k8s_size(target?);
                let max = match args.get(1).and_then(|a| a.int_literal) {
                    Some(i) => i as u64,
                    None => sz.max,
                };
                Some((
                    sz.factor(2.0 * STRING_TRAVERSAL),
                    Some(Estimate { min: 0, max }),
                ))
            }
            "join" => {
                let t = target?;
                let list = self.k8s_size(t);
                let mut sz = Estimate::fixed(0);
                if let Some(el) = self.element(t) {
                    sz = list.mul(self.k8s_size(&el));
                }
                if let Some(sep) = args.first() {
                    let seps = Estimate {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    sz = sz.add(self.k8s_size(sep).mul(seps));
                }
                Some((sz.factor(STRING_TRAVERSAL), Some(sz)))
            }
            "find" | "findAll" if !args.is_empty() => {
                let sz = self.k8s_size(target?);
                let s = sz.add(Estimate::fixed(1)).factor(STRING_TRAVERSAL);
                let r = self.k8s_size(&args[0]).factor(REGEX_LENGTH);
                Some((
                    s.mul(r),
                    Some(Estimate {
                        min: 0,
                        max: sz.max,
                    }),
                ))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver"
                if !args.is_empty() =>
            {
                Some((self.k8s_size(&args[0]).factor(STRING_TRAVERSAL), None))
            }
            "ip" => {
                if ov == Ov::CidrIp {
                    return one;
                }
                let a = args.first()?;
                Some((self.k8s_size(a).factor(STRING_TRAVERSAL), None))
            }
            "ip.isCanonical" if !args.is_empty() => {
                Some((self.k8s_size(&args[0]).factor(2.0 * STRING_TRAVERSAL), None))
            }
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => one,
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                let sz = Estimate { min: 4, max: 16 };
                let mut c = sz.add(sz).factor(STRING_TRAVERSAL);
                if name == "containsCIDR" {
                    c = c.add(sz.factor(STRING_TRAVERSAL)).add(Estimate::fixed(1));
                }
                if ov == Ov::ContainsString {
                    c = c.add(self.k8s_size(&args[0]).factor(STRING_TRAVERSAL));
                }
                Some((c, None))
            }
            "validate" if !args.is_empty() => Some((
                self.k8s_size(&args[0])
                    .factor(STRING_TRAVERSAL)
                    .factor(MAX_NAME_FORMAT_REGEX * REGEX_LENGTH),
                None,
            )),
            "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
            | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
            | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
            | "getQuery" => one,
            "_==_" if args.len() == 2 && args[0].ty.same(&args[1].ty) => {
                match &args[0].ty {
                    Ty::Opaque("net.IP" | "net.CIDR" | "kubernetes.Quantity")
                    | Ty::Opaque("kubernetes.Semver") => one,
                    Ty::Opaque("kubernetes.NamedFormat") => Some((
                        Estimate {
                            min: 1,
                            max: MAX_FORMAT_SIZE,
                        }
                        .factor(STRING_TRAVERSAL),
                        None,
                    )),
                    Ty::Opaque("kubernetes.URL") => {
                        // Kubernetes takes the right-hand size twice here.
                        let size = args[1].size.unwrap_or(Estimate::fixed(1));
                        Some((
                            Estimate {
                                min: 1,
                                max: size.max,
                            }
                            .factor(STRING_TRAVERSAL),
                            None,
                        ))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// cel-go's `functionCost` for one overload: the call's own cost plus its arguments', and
    /// the size of its result when known.
    fn function_cost(
        &mut self,
        e: &IdedExpr,
        name: &str,
        ov: Ov,
        target: Option<&Arg<'d>>,
        args: &[Arg<'d>],
        arg_costs: &[Estimate],
    ) -> (Estimate, Option<Estimate>) {
        let arg_sum = arg_costs
            .iter()
            .fold(Estimate::fixed(0), |acc, c| acc.add(*c));
        if let Some((c, rs)) = self.extension_call(ov, target, args) {
            return (c.add(arg_sum), rs);
        }
        if let Some((c, rs)) = self.k8s_call(name, ov, target, args) {
            return (c.add(arg_sum), rs);
        }
        let size = |a: &Arg<'d>| a.size.unwrap_or(Estimate::UNKNOWN);
        match ov {
            Ov::Format if target.is_some() => {
                return (
                    size(target.unwrap_or(&args[0]))
                        .factor(STRING_TRAVERSAL)
                        .add(arg_sum),
                    None,
                );
            }
            Ov::StringToBytes if args.len() == 1 => {
                let sz = size(&args[0]);
                return (
                    sz.factor(STRING_TRAVERSAL).add(arg_sum),
                    Some(Estimate {
                        min: sz.min,
                        max: sz.max.saturating_mul(4),
                    }),
                );
            }
            Ov::BytesToString if args.len() == 1 => {
                let sz = size(&args[0]);
                return (
                    sz.factor(STRING_TRAVERSAL).add(arg_sum),
                    Some(Estimate {
                        min: sz.min / 4,
                        max: sz.max,
                    }),
                );
            }
            Ov::Quote if args.len() == 1 => {
                let sz = size(&args[0]);
                return (
                    sz.factor(STRING_TRAVERSAL).add(arg_sum),
                    Some(Estimate {
                        min: sz.min.saturating_add(2),
                        max: sz.max.saturating_mul(2).saturating_add(2),
                    }),
                );
            }
            Ov::StartsWith if args.len() == 1 => {
                return (size(&args[0]).factor(STRING_TRAVERSAL).add(arg_sum), None);
            }
            Ov::InList if args.len() == 2 => {
                return (size(&args[1]).factor(1.0).add(arg_sum), None);
            }
            Ov::Matches => {
                let (s, r) = match (target, args) {
                    (Some(t), [r]) => (t, r),
                    (None, [s, r]) => (s, r),
                    _ => return (Estimate::fixed(1).add(arg_sum), None),
                };
                let sc = size(s).add(Estimate::fixed(1)).factor(STRING_TRAVERSAL);
                let rc = size(r).factor(REGEX_LENGTH);
                return (sc.mul(rc).add(arg_sum), None);
            }
            Ov::ContainsString if target.is_some() && args.len() == 1 => {
                let t = target.map(size).unwrap_or(Estimate::UNKNOWN);
                let sc = t.factor(STRING_TRAVERSAL);
                let sub = size(&args[0]).factor(STRING_TRAVERSAL);
                return (sc.mul(sub).add(arg_sum), None);
            }
            Ov::Logical if arg_costs.len() == 2 => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return (
                    Estimate {
                        min: l.min,
                        max: l.add(r).max,
                    },
                    None,
                );
            }
            Ov::Conditional if arg_costs.len() == 3 => {
                let sz = size(&args[1]).union(size(&args[2]));
                if let Expr::Call(call) = &e.expr {
                    let en = union_entry(self.entry(&call.args[1]), self.entry(&call.args[2]));
                    if let Some(en) = en {
                        self.entries.insert(e.id, en);
                    }
                }
                let c = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (c, Some(sz));
            }
            Ov::AddString | Ov::AddBytes | Ov::AddList if args.len() == 2 => {
                let rs = size(&args[0]).add(size(&args[1]));
                if let Expr::Call(call) = &e.expr
                    && let Some(en) =
                        union_entry(self.entry(&call.args[0]), self.entry(&call.args[1]))
                {
                    self.entries.insert(e.id, en);
                }
                return if ov == Ov::AddList {
                    (Estimate::fixed(1).add(arg_sum), Some(rs))
                } else {
                    (rs.factor(STRING_TRAVERSAL).add(arg_sum), Some(rs))
                };
            }
            Ov::SizedCompare if args.len() == 2 => {
                let (l, r) = (size(&args[0]), size(&args[1]));
                let smallest = l.max.min(r.max);
                let c = Estimate {
                    min: u64::from(smallest > 0),
                    max: smallest,
                };
                return (c.factor(STRING_TRAVERSAL).add(arg_sum), None);
            }
            _ => {}
        }
        (Estimate::fixed(1).add(arg_sum), None)
    }
}

/// The overloads of a call that matter to the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ov {
    Other,
    Logical,
    Conditional,
    SizedCompare,
    AddString,
    AddBytes,
    AddList,
    InList,
    InMap,
    IndexList,
    IndexMap,
    Matches,
    StartsWith,
    ContainsString,
    StringToBytes,
    BytesToString,
    Quote,
    Format,
    CidrIp,
    /// `sets.contains`/`intersects` (factor 1) and `sets.equivalent` (2).
    Sets(u8),
    ListSlice,
    ListsRange,
    ListReverse,
    ListFlatten,
    ListDistinct,
    ListSort,
}

fn overloads(name: &str, target: Option<&Arg<'_>>, args: &[Arg<'_>]) -> Vec<Ov> {
    let kinds: Vec<Kind> = args.iter().map(|a| a.ty.kind()).collect();
    let first_known = |ks: &[Kind]| ks.iter().copied().find(|k| *k != Kind::Dyn);
    match name {
        "_&&_" | "_||_" => vec![Ov::Logical],
        "_?_:_" => vec![Ov::Conditional],
        "_==_" | "_!=_" => vec![Ov::SizedCompare],
        "_<_" | "_<=_" | "_>_" | "_>=_" => match first_known(&kinds) {
            Some(Kind::String | Kind::Bytes) => vec![Ov::SizedCompare],
            Some(_) => vec![Ov::Other],
            None => vec![Ov::SizedCompare, Ov::Other],
        },
        "_+_" => match first_known(&kinds) {
            Some(Kind::String) => vec![Ov::AddString],
            Some(Kind::Bytes) => vec![Ov::AddBytes],
            Some(Kind::List) => vec![Ov::AddList],
            Some(_) => vec![Ov::Other],
            None => vec![Ov::AddString, Ov::AddBytes, Ov::AddList, Ov::Other],
        },
        "@in" => match kinds.get(1) {
            Some(Kind::List) => vec![Ov::InList],
            Some(Kind::Map | Kind::Struct) => vec![Ov::InMap],
            _ => vec![Ov::InList, Ov::InMap],
        },
        "_[_]" => match kinds.first() {
            Some(Kind::List) => vec![Ov::IndexList],
            Some(Kind::Map) => vec![Ov::IndexMap],
            _ => vec![Ov::IndexList, Ov::IndexMap],
        },
        "matches" => vec![Ov::Matches],
        "startsWith" | "endsWith" if target.is_some() => vec![Ov::StartsWith],
        "contains" if target.is_some_and(|t| matches!(t.ty.kind(), Kind::String | Kind::Dyn)) => {
            vec![Ov::ContainsString]
        }
        "containsIP" | "containsCIDR" => match kinds.first() {
            Some(Kind::String) => vec![Ov::ContainsString],
            _ => vec![Ov::Other],
        },
        "bytes" if kinds.first() == Some(&Kind::String) => vec![Ov::StringToBytes],
        "string" if kinds.first() == Some(&Kind::Bytes) => vec![Ov::BytesToString],
        "strings.quote" => vec![Ov::Quote],
        "format" if target.is_some() => vec![Ov::Format],
        "ip" if matches!(target.map(|t| &t.ty), Some(Ty::Opaque("net.CIDR"))) => vec![Ov::CidrIp],
        "sets.contains" | "sets.intersects" => vec![Ov::Sets(1)],
        "sets.equivalent" => vec![Ov::Sets(2)],
        "slice" if target.is_some() => vec![Ov::ListSlice],
        "lists.range" => vec![Ov::ListsRange],
        "reverse" if target.is_some_and(|t| t.ty.kind() == Kind::List) => vec![Ov::ListReverse],
        "flatten" => vec![Ov::ListFlatten],
        "distinct" => vec![Ov::ListDistinct],
        "sort" => vec![Ov::ListSort],
        _ => vec![Ov::Other],
    }
}

fn result_type<'d>(name: &str, target: Option<&Arg<'d>>, args: &[Arg<'d>]) -> Ty<'d> {
    let arg = |i: usize| args.get(i).map_or(DYN, |a| a.ty.clone());
    let known = |a: Ty<'d>, b: Ty<'d>| if a.kind() == Kind::Dyn { b } else { a };
    let p = Ty::Prim;
    match name {
        "_&&_"
        | "_||_"
        | "!_"
        | "@not_strictly_false"
        | "_==_"
        | "_!=_"
        | "_<_"
        | "_<=_"
        | "_>_"
        | "_>=_"
        | "@in"
        | "matches"
        | "startsWith"
        | "endsWith"
        | "contains"
        | "isURL"
        | "isIP"
        | "isCIDR"
        | "isQuantity"
        | "isSemver"
        | "isSorted"
        | "bool"
        | "sets.contains"
        | "sets.equivalent"
        | "sets.intersects"
        | "isInteger"
        | "isLessThan"
        | "isGreaterThan"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "includes"
        | "hasValue" => p(Kind::Bool),
        "size" | "int" | "indexOf" | "lastIndexOf" | "sign" | "asInteger" | "compareTo"
        | "family" | "prefixLength" | "major" | "minor" | "patch" => p(Kind::Int),
        "uint" => p(Kind::Uint),
        "double" | "asApproximateFloat" => p(Kind::Double),
        "string" | "upperAscii" | "lowerAscii" | "trim" | "substring" | "replace" | "charAt"
        | "join" | "format" | "strings.quote" | "getScheme" | "getHost" | "getHostname"
        | "getPort" | "getEscapedPath" | "find" | "validate" => p(Kind::String),
        "bytes" => p(Kind::Bytes),
        "timestamp" => p(Kind::Timestamp),
        "duration" => p(Kind::Duration),
        "type" => p(Kind::Type),
        "split" | "findAll" => Ty::List(Box::new(p(Kind::String))),
        "getQuery" => Ty::Map(
            Box::new(p(Kind::String)),
            Box::new(Ty::List(Box::new(p(Kind::String)))),
        ),
        "url" => Ty::Opaque("kubernetes.URL"),
        "quantity" | "add" | "sub" => Ty::Opaque("kubernetes.Quantity"),
        "semver" => Ty::Opaque("kubernetes.Semver"),
        "ip" => Ty::Opaque("net.IP"),
        "cidr" | "masked" => Ty::Opaque("net.CIDR"),
        n if n.starts_with("format.") => Ty::Opaque("kubernetes.NamedFormat"),
        "_?_:_" => known(arg(1), arg(2)),
        "_[_]" => arg(0).elem(),
        "_+_" => {
            let (a, b) = (arg(0), arg(1));
            match (a.kind(), b.kind()) {
                (Kind::Timestamp, _) | (_, Kind::Timestamp) => p(Kind::Timestamp),
                // `[] + [x]`: the list of the non-empty side.
                (Kind::List, Kind::List) => match &a {
                    Ty::List(e) if e.kind() == Kind::Dyn => b,
                    _ => a,
                },
                _ => known(a, b),
            }
        }
        "_-_" => match (arg(0).kind(), arg(1).kind()) {
            (Kind::Timestamp, Kind::Timestamp) => p(Kind::Duration),
            _ => known(arg(0), arg(1)),
        },
        "_*_" | "_/_" | "_%_" | "-_" => known(arg(0), arg(1)),
        "sum" | "min" | "max" | "first" | "last" => target.map_or(DYN, |t| t.ty.elem()),
        "math.greatest" | "math.least" => arg(0),
        "slice" | "distinct" | "reverse" | "sort" => target.map_or(DYN, |t| t.ty.clone()),
        "lists.range" => Ty::List(Box::new(p(Kind::Int))),
        "flatten" => Ty::List(Box::new(DYN)),
        _ => DYN,
    }
}

// ---------------------------------------------------------------------------------------------
// Per schema: cardinalities, limits and messages

/// `getCostErrorMessage`.
pub(crate) fn cost_error_message(what: &str, cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    let factor = if f > 100.0 {
        "more than 100x".to_string()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The outcome of pricing one schema's rules.
#[derive(Debug, Default)]
pub(crate) struct SchemaCost {
    /// Per-rule (and per-messageExpression) errors.
    pub(crate) rule_errors: Vec<crate::FieldError>,
    /// The sum of all rules' costs (saturating).
    pub(crate) total: u64,
    /// The (up to four) most expensive rules of at least 1% of the schema limit, by cost.
    pub(crate) most_expensive: Vec<(String, u64)>,
    /// The nodes visited, in the order kube-apiserver reports their rules' errors: children
    /// (additionalProperties, properties, items) before their parent.
    pub(crate) order: Vec<String>,
}

impl SchemaCost {
    fn observe(&mut self, path: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < PER_CRD_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        // Stable, as Go's sort of at most five entries is.
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }

    /// The errors of the schema-wide limit (after all others), at `sat` (the schema's path).
    pub(crate) fn total_errors(&self, sat: &str) -> Vec<crate::FieldError> {
        if self.total <= PER_CRD_LIMIT {
            return Vec::new();
        }
        let mut out: Vec<crate::FieldError> = self
            .most_expensive
            .iter()
            .map(|(p, _)| {
                crate::FieldError::forbidden(
                    p,
                    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                )
            })
            .collect();
        out.push(crate::FieldError::forbidden(
            sat,
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                self.total,
                PER_CRD_LIMIT,
            ),
        ));
        out
    }
}

/// Prices the rules of a compiled schema. `compiled(path)` tells whether kube-apiserver
/// compiles the rules of the node at `path` (no schema errors at or below it);
/// `suppress_per_expression` skips the per-rule limit (an update leaving the schema unchanged).
pub(crate) fn price_schema(
    root: &Node,
    sat: &str,
    compiled: &dyn Fn(&str) -> bool,
    suppress_per_expression: bool,
) -> SchemaCost {
    let mut out = SchemaCost::default();
    let mut w = Walker {
        out: &mut out,
        compiled,
        suppress: suppress_per_expression,
    };
    w.walk(root, sat, None, Some(1), true);
    out
}

struct Walker<'a> {
    out: &'a mut SchemaCost,
    compiled: &'a dyn Fn(&str) -> bool,
    suppress: bool,
}

/// `extractMaxElements`: by how much a node multiplies the occurrences of its children.
fn max_elements(n: &Node) -> Option<u64> {
    match n.ty.as_str() {
        "object" if n.additional.is_some() => n.max_properties.map(|m| zero_if_negative(m) as u64),
        "array" => n.max_items.map(|m| zero_if_negative(m) as u64),
        _ => Some(1),
    }
}

impl Walker<'_> {
    fn walk(
        &mut self,
        n: &Node,
        at: &str,
        inherited: Option<&Decl>,
        card: Option<u64>,
        is_root: bool,
    ) {
        let own;
        let decl = match inherited {
            Some(d) => Some(d),
            None if !n.rules.is_empty() => {
                own = Decl::build(n, is_root || n.embedded_resource);
                own.as_ref()
            }
            None => None,
        };
        if !n.has_rules {
            return;
        }
        let child_card = card.and_then(|c| max_elements(n).map(|m| guard_mul(c, m)));
        if let Some(Additional::Schema(a)) = &n.additional {
            let d = decl.and_then(|d| d.elem.as_deref());
            self.walk(
                a,
                &crate::path::child(at, "additionalProperties"),
                d,
                child_card,
                false,
            );
        }
        let props_at = crate::path::child(at, "properties");
        for (k, p) in &n.properties {
            let d = decl.and_then(|d| d.field(k));
            self.walk(p, &crate::path::key(&props_at, k), d, child_card, false);
        }
        if let Some(items) = &n.items {
            let d = decl.and_then(|d| d.elem.as_deref());
            self.walk(
                items,
                &crate::path::child(at, "items"),
                d,
                child_card,
                false,
            );
        }
        // kube-apiserver prices (and reports) a node's rules after those of its subtree.
        if !n.rules.is_empty()
            && (self.compiled)(at)
            && let Some(d) = decl
        {
            self.price_rules(n, at, d, card);
        }
        self.out.order.push(at.to_string());
    }

    fn price_rules(&mut self, n: &Node, at: &str, d: &Decl, card: Option<u64>) {
        let card = card.unwrap_or_else(|| d.max_cardinality());
        for r in &n.rules {
            let rule_at = format!("{at}.x-kubernetes-validations[{}]", r.index);
            let cost = guard_mul(estimate(r.program.expression(), d).max, card);
            if !self.suppress && cost > PER_EXPRESSION_LIMIT {
                self.out.rule_errors.push(crate::FieldError::forbidden(
                    format!("{rule_at}.rule"),
                    cost_error_message("estimated rule cost", cost, PER_EXPRESSION_LIMIT),
                ));
            }
            self.out.observe(format!("{rule_at}.rule"), cost);
            if let Some(m) = &r.message_program {
                let cost = estimate(m.expression(), d).max;
                if !self.suppress && cost > PER_EXPRESSION_LIMIT {
                    self.out.rule_errors.push(crate::FieldError::forbidden(
                        format!("{rule_at}.messageExpression"),
                        cost_error_message(
                            "estimated messageExpression cost",
                            cost,
                            PER_EXPRESSION_LIMIT,
                        ),
                    ));
                }
                self.out
                    .observe(format!("{rule_at}.messageExpression"), cost);
            }
        }
    }
}

/// The estimated worst-case cost of one evaluation of `rule` on values of `schema` (one
/// schema node, with `resource_root` when it is the root or an embedded resource), before the
/// cardinality multiplication: what kube-apiserver calls the rule's `MaxCost`. Errors when
/// the rule does not parse or CEL cannot see the node.
pub fn rule_cost(
    schema: &serde_json::Value,
    rule: &str,
    resource_root: bool,
) -> Result<u64, String> {
    let (node, _) = Node::compile(schema, "");
    let decl = Decl::build(&node, resource_root)
        .ok_or_else(|| "the schema has no CEL type".to_string())?;
    let program = crate::cel::compile_program(rule)?;
    Ok(estimate(program.expression(), &decl).max)
}

/// What kube-apiserver charges `rule` on `schema` (one schema node, not a resource root)
/// against its limits ([`PER_EXPRESSION_LIMIT`], and summed per CRD against
/// [`PER_CRD_LIMIT`]): the per-evaluation cost times how often the node can appear, which is
/// `cardinality` (the product of the `maxItems`/`maxProperties` on the way to the node) when
/// every list and map on the way is bounded, else as many of the node's smallest value as a
/// request can hold. Errors when the rule does not parse or CEL cannot see the node.
pub fn expression_cost(
    schema: &serde_json::Value,
    rule: &str,
    cardinality: Option<u64>,
) -> Result<u64, String> {
    let (node, _) = Node::compile(schema, "");
    let decl = Decl::build(&node, false).ok_or_else(|| "the schema has no CEL type".to_string())?;
    let program = crate::cel::compile_program(rule)?;
    let per = estimate(program.expression(), &decl).max;
    let card = cardinality.unwrap_or_else(|| decl.max_cardinality());
    Ok(per.saturating_mul(card))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{PER_CRD_LIMIT, PER_EXPRESSION_LIMIT, cost_error_message, rule_cost};
    use crate::crd::validate_crd_schema;

    const AT: &str = "spec.validation.openAPIV3Schema";
    const HINT: &str = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

    fn errors(spec: Value) -> Vec<String> {
        let schema = json!({"type": "object", "properties": {"spec": spec}});
        validate_crd_schema(&schema, AT, false)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// A list of `n` strings of at most 250 characters, each matching a 17-character pattern:
    /// 506 per evaluation (the pattern 5, the string 101, and `self`).
    fn matching_list(n: u64) -> Value {
        json!({"type": "array", "maxItems": n, "items": {"type": "string", "maxLength": 250,
            "x-kubernetes-validations": [{"rule": "self.matches('^[a-z0-9.-]{1,9}$')"}]}})
    }

    #[test]
    fn messages_show_the_factor_as_kube_apiserver_does() {
        let m = |c| cost_error_message("estimated rule cost", c, PER_EXPRESSION_LIMIT);
        assert_eq!(
            m(10_000_078),
            format!("estimated rule cost exceeds budget by factor of 1.000008x{HINT}")
        );
        assert_eq!(
            m(20_240_000),
            format!("estimated rule cost exceeds budget by factor of 2.0x{HINT}")
        );
        assert_eq!(
            m(1_000_000_001),
            format!("estimated rule cost exceeds budget by factor of more than 100x{HINT}")
        );
    }

    #[test]
    fn per_evaluation_costs_follow_cel_go() {
        let obj = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 63},
            "value": {"type": "string"},
            "tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 16}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let cost = |rule| rule_cost(&obj, rule, false).expect("prices");
        // has() tests cost nothing of their own; the select operand costs 1.
        assert_eq!(cost("has(self.name)"), 1);
        // Field selection 1 per step, size() 1, comparison with a scalar 1.
        assert_eq!(cost("size(self.name) > 3"), 4);
        // matches: ceil((63*4 + 1) / 10) * ceil(pattern / 4) plus the operands.
        assert_eq!(cost("self.name.matches('^[a-z]+$')"), 26 * 2 + 2);
        // all(): range 2 + result 1 + per element (condition 2 + step 1 + predicate).
        assert_eq!(
            cost("self.tags.all(t, t.matches('^[a-z]+$'))"),
            3 + 8 * (3 + 7 * 2 + 1)
        );
        // Keys of a map are priced as empty strings.
        assert_eq!(
            cost("self.m.all(k, k.matches('^[a-z]+$'))"),
            3 + 393_215 * (3 + 2 + 1)
        );
        // An unbounded string is as long as a request.
        assert_eq!(cost("self.value.startsWith('abc')"), 2 + 1);
        assert_eq!(cost("self.value == 'abc'"), 2 + 1);
        assert_eq!(cost("self.value.upperAscii() == 'A'"), 2 + 314_573 + 1);
    }

    #[test]
    fn an_expensive_rule_is_refused_and_bounds_make_it_pass() {
        let rule = json!([{"rule": "self.items.all(x, x.matches('^[a-z]+$'))"}]);
        let e = errors(json!({"type": "object", "x-kubernetes-validations": rule,
            "properties": {"items": {"type": "array", "items": {"type": "string"}}}}));
        let rule_at = format!("{AT}.properties[spec].x-kubernetes-validations[0].rule");
        assert_eq!(
            e,
            vec![
                format!(
                    "{rule_at}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x{HINT}"
                ),
                format!(
                    "{rule_at}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
                ),
                format!(
                    "{AT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x{HINT}"
                ),
            ]
        );
        let bounded = errors(json!({"type": "object", "x-kubernetes-validations": rule,
            "properties": {"items": {"type": "array", "maxItems": 10,
                "items": {"type": "string", "maxLength": 64}}}}));
        assert_eq!(bounded, Vec::<String>::new());
    }

    #[test]
    fn cardinality_multiplies_through_nested_lists() {
        let nested = |outer: u64| {
            errors(
                json!({"type": "object", "properties": {"outer": {"type": "array",
                "maxItems": outer, "items": {"type": "array", "maxItems": 100,
                    "items": {"type": "string", "maxLength": 250, "x-kubernetes-validations":
                        [{"rule": "self.matches('^[a-z0-9.-]{1,9}$')"}]}}}}}),
            )
        };
        // 506 per evaluation * 100 * 100 = 5,060,000: within budget.
        assert_eq!(nested(100), Vec::<String>::new());
        // * 1000 * 100 = 50,600,000.
        assert_eq!(
            nested(1000),
            vec![format!(
                "{AT}.properties[spec].properties[outer].items.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 5.1x{HINT}"
            )]
        );
        // Just under and just over the per-rule limit through one list.
        let one = |n| errors(json!({"type": "object", "properties": {"l": matching_list(n)}}));
        assert_eq!(one(19_762), Vec::<String>::new());
        assert_eq!(
            one(19_763),
            vec![format!(
                "{AT}.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.000008x{HINT}"
            )]
        );
    }

    #[test]
    fn an_unbounded_list_uses_the_rules_own_cardinality() {
        // 3 MiB / (2 + 1) strings of at most 100 characters: 1,048,576 * 329.
        let e = errors(
            json!({"type": "object", "properties": {"outer": {"type": "array",
            "maxItems": 10, "items": {"type": "array", "items": {"type": "string", "maxLength": 100,
                "x-kubernetes-validations": [{"rule": "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')"}]}}}}}),
        );
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].ends_with(&format!("factor of 34.5x{HINT}")), "{e:?}");
        assert!(e[2].ends_with(&format!("factor of 3.4x{HINT}")), "{e:?}");
    }

    #[test]
    fn the_schema_total_names_the_four_most_expensive_rules() {
        // Eleven rules of distinct costs, each within budget, 102,971,000 in all.
        let props: serde_json::Map<String, Value> = (0..11u64)
            .map(|i| (format!("p{i:02}"), matching_list(19_000 - 100 * i)))
            .collect();
        let e = errors(json!({"type": "object", "properties": props}));
        let contributed = |p: &str| {
            format!(
                "{AT}.properties[spec].properties[{p}].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
            )
        };
        assert_eq!(
            e,
            vec![
                contributed("p00"),
                contributed("p01"),
                contributed("p02"),
                contributed("p03"),
                format!(
                    "{AT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.029710x{HINT}"
                ),
            ]
        );
    }

    #[test]
    fn rules_under_one_percent_of_the_total_limit_are_not_named() {
        assert_eq!(PER_CRD_LIMIT / 100, 1_000_000);
        // 59,529,888 and 44,647,416 (both over the per-rule limit) and 506,000.
        let e = errors(json!({"type": "object", "properties": {
            "a": matching_list(117_648), "b": matching_list(88_236), "c": matching_list(1000)}}));
        let at = |p: &str| {
            format!("{AT}.properties[spec].properties[{p}].items.x-kubernetes-validations[0].rule")
        };
        assert_eq!(
            e,
            vec![
                format!(
                    "{}: Forbidden: estimated rule cost exceeds budget by factor of 6.0x{HINT}",
                    at("a")
                ),
                format!(
                    "{}: Forbidden: estimated rule cost exceeds budget by factor of 4.5x{HINT}",
                    at("b")
                ),
                format!(
                    "{}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                    at("a")
                ),
                format!(
                    "{}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                    at("b")
                ),
                format!(
                    "{AT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.046833x{HINT}"
                ),
            ]
        );
    }

    #[test]
    fn message_expressions_are_priced_once() {
        // Under a list of a million elements the rule would be multiplied; the message is not.
        let e = errors(
            json!({"type": "object", "properties": {"l": {"type": "array",
            "maxItems": 1_000_000, "items": {"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 10}},
                "x-kubernetes-validations": [{"rule": "true",
                    "messageExpression": "'bad name: ' + self.name"}]}}}}),
        );
        assert_eq!(e, Vec::<String>::new());
        let e = errors(
            json!({"type": "object", "properties": {"items": {"type": "array",
            "items": {"type": "string"}}},
            "x-kubernetes-validations": [{"rule": "size(self.items) < 5",
                "messageExpression": "'bad: ' + self.items.filter(x, x.matches('^a$')).join(', ')"}]}),
        );
        let at = format!("{AT}.properties[spec].x-kubernetes-validations[0].messageExpression");
        assert_eq!(
            e[..2],
            [
                format!(
                    "{at}: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x{HINT}"
                ),
                format!(
                    "{at}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
                ),
            ]
        );
    }

    #[test]
    fn resource_roots_declare_bounded_names() {
        // metadata.name at most 253 characters (1012 bytes); kind unbounded.
        let root = json!({"type": "object", "properties": {"metadata": {"type": "object"}}});
        assert_eq!(
            rule_cost(&root, "self.metadata.name.matches('^[a-z]+$')", true),
            Ok(102 * 2 + 3)
        );
        assert_eq!(
            rule_cost(&root, "self.kind.matches('^[a-z]+$')", true),
            Ok(314_573 * 2 + 2)
        );
    }

    #[test]
    fn an_unchanged_schema_skips_the_per_rule_limit_on_update() {
        let crd = |schema: Value| {
            let mut c = json!({"apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": schema}}]},
                "status": {"storedVersions": ["v1"]}});
            crate::default_crd(&mut c);
            c
        };
        let spec = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"l": matching_list(30_000)}}}});
        let new = crd(spec.clone());
        let created: Vec<String> = crate::validate_crd(&new, None)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(created.len(), 1, "{created:?}");
        let updated = crate::validate_crd(&new, Some(&new));
        assert_eq!(updated, Vec::new());
    }
}
