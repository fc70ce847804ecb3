//! `x-kubernetes-validations` (CEL) rules: compiled once per schema node with the `cel` crate
//! plus kube-cel's Kubernetes extension functions, evaluated per object as
//! `apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go` (Kubernetes 1.33) does:
//! `self` is the value at the node, `oldSelf` the correlated old value (properties by key,
//! `additionalProperties` by key, `x-kubernetes-list-type: map` items by their keys); rules
//! using `oldSelf` only run on update when the old value exists, unless `optionalOldSelf`
//! (then `oldSelf` is an optional: `optional.none()` on create). Failures render as
//! kube-apiserver's:
//! `spec: Invalid value: "object": <message>`, with `reason` choosing Forbidden / Required /
//! Duplicate and `fieldPath` extending the path.
//!
//! Values reach CEL typed by the schema: property names that are not CEL identifiers are
//! escaped (`__dash__`, `__dot__`, `__slash__`, `__underscores__`, `__<keyword>__`), maps keep
//! their keys, `number` becomes a double, `format: date-time` a timestamp, `duration` a
//! duration, `byte` bytes. At the root (and in embedded resources) `apiVersion`, `kind` and
//! `metadata.name`/`metadata.generateName` are visible.
//!
//! The environment is Kubernetes 1.33's for CRDs: the CEL standard library (with `size()` of a
//! string counting code points) plus the strings, lists, sets, regex, URL, quantity, format,
//! IP/CIDR, semver, math and encoder libraries, and optionals.
//!
//! Deviations: there is no full CEL type checker. A rule is rejected at CRD creation when it
//! does not parse, references an undeclared variable, selects a field the schema does not
//! declare (or is not visible to CEL, e.g. unknown fields kept by
//! `x-kubernetes-preserve-unknown-fields`), selects a field of a scalar, compares scalars of
//! certainly incompatible types (`self.name == 1`), or visibly does not evaluate to a bool;
//! other type errors surface at evaluation time as
//! `... evaluating rule: ...` errors. The static cost of rules (per rule and per CRD) is
//! estimated and enforced by [`crate::cost`] when the CRD is validated; the cost budget at
//! evaluation time is not enforced. The optional field syntax (`self.?x`) is not parsed (such CRDs are
//! rejected). `type(x)` yields the type name as a string. Error texts of the `cel` crate differ
//! from cel-go's. Failing rules that ratcheting turns into warnings upstream are dropped.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::extractors::This;
use cel::objects::OptionalValue;
use cel::{Context, Program, ResolveResult, Value as CelValue};
use kube_cel::KubeCelExt;
use serde_json::Value;

use crate::node::Node;
use crate::{FieldError, go_quote};

/// The `reason`s a rule may give.
pub const SUPPORTED_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// One compiled `x-kubernetes-validations` entry.
pub struct CompiledRule {
    /// The CEL expression as written.
    pub rule: String,
    /// `message` as written: the text of the error when the rule fails.
    pub message: Option<String>,
    /// `messageExpression` as written: a CEL expression computing the error text.
    pub message_expression: Option<String>,
    /// `reason` as written (one of [`SUPPORTED_REASONS`]).
    pub reason: Option<String>,
    /// `fieldPath` as written.
    pub field_path: Option<String>,
    /// `optionalOldSelf`: the rule also runs on create, with `oldSelf` an empty optional.
    pub optional_old_self: bool,
    /// Whether the expression refers to `oldSelf` (a transition rule, skipped on create unless
    /// `optional_old_self`).
    pub uses_old_self: bool,
    /// The position of the rule in `x-kubernetes-validations`.
    pub index: usize,
    pub(crate) program: Arc<Program>,
    pub(crate) message_program: Option<Arc<Program>>,
}

impl std::fmt::Debug for CompiledRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledRule")
            .field("rule", &self.rule)
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

impl CompiledRule {
    /// `ruleErrorString`: the message if any, else the rule, trimmed.
    fn error_string(&self) -> String {
        match &self.message {
            Some(m) if !m.trim().is_empty() => m.trim().to_string(),
            _ => self.rule.trim().to_string(),
        }
    }

    /// `ruleMessageOrDefault`.
    fn message_or_default(&self) -> String {
        match &self.message {
            Some(m) if !m.is_empty() => m.trim().to_string(),
            _ => format!("failed rule: {}", self.error_string()),
        }
    }
}

/// Parsed programs by source text. CRD validation and `Schema::compile` see the same rules
/// (and CRDs of one provider repeat them), and parsing dominates compile time.
static PROGRAMS: LazyLock<Mutex<ProgramCache>> = LazyLock::new(Default::default);

type ProgramCache = HashMap<String, Result<Arc<Program>, String>>;

/// Parses a CEL expression once per process (the parse error text on failure).
pub(crate) fn compile_program(src: &str) -> Result<Arc<Program>, String> {
    let mut cache = PROGRAMS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(r) = cache.get(src) {
        return r.clone();
    }
    if cache.len() > 50_000 {
        cache.clear();
    }
    let r = Program::compile(src)
        .map(Arc::new)
        .map_err(|e| e.to_string());
    cache.insert(src.to_string(), r.clone());
    r
}

thread_local! {
    /// The function registry is built once per thread; each evaluation only adds a child
    /// scope with `self`/`oldSelf`.
    static BASE_CONTEXT: Context<'static> = {
        let mut ctx = Context::default();
        ctx.register_all();
        register_extras(&mut ctx);
        ctx
    };
}

/// What the `cel` crate lacks or does differently from cel-go: `size()` of a string counts
/// code points (not bytes), `matches()` follows RE2, and `type()` with the type identifiers
/// (as strings: `type(x) == string` holds).
fn register_extras(ctx: &mut Context<'static>) {
    // RE2 semantics (ASCII `\d`, `\w`, ...) and each pattern compiled once, not per call.
    ctx.add_function(
        "matches",
        |This(this): This<Arc<String>>, re: Arc<String>| -> ResolveResult {
            match crate::node::compile_go_regex(&re) {
                Ok(r) => Ok(CelValue::Bool(r.is_match(&this))),
                Err(e) => Err(cel::ExecutionError::function_error(
                    "matches",
                    format!("'{re}' not a valid regex: {e}"),
                )),
            }
        },
    );
    ctx.add_function("size", |This(v): This<CelValue>| -> ResolveResult {
        let n = match &v {
            CelValue::List(l) => l.len(),
            CelValue::Map(m) => m.map.len(),
            CelValue::String(s) => s.chars().count(),
            CelValue::Bytes(b) => b.len(),
            other => {
                return Err(cel::ExecutionError::function_error(
                    "size",
                    format!("no such overload: size({:?})", other.type_of()),
                ));
            }
        };
        Ok(CelValue::Int(n as i64))
    });
    ctx.add_function("type", |This(v): This<CelValue>| -> ResolveResult {
        let name = match v {
            CelValue::List(_) => "list",
            CelValue::Map(_) => "map",
            CelValue::Function(..) => "function",
            CelValue::Int(_) => "int",
            CelValue::UInt(_) => "uint",
            CelValue::Float(_) => "double",
            CelValue::String(_) => "string",
            CelValue::Bytes(_) => "bytes",
            CelValue::Bool(_) => "bool",
            CelValue::Duration(_) => "google.protobuf.Duration",
            CelValue::Timestamp(_) => "google.protobuf.Timestamp",
            CelValue::Opaque(_) => "opaque",
            CelValue::Null => "null_type",
        };
        Ok(CelValue::String(Arc::new(name.to_string())))
    });
    for t in [
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "list",
        "map",
        "null_type",
    ] {
        ctx.add_variable_from_value(t, CelValue::String(Arc::new(t.to_string())));
    }
}

/// Renders an `apiextensions.ValidationRule` as Go's `%#v` does (the bad value of rule compile
/// errors in CRD validation).
fn rule_go_value(raw: &Value) -> String {
    let s = |k: &str| go_quote(raw.get(k).and_then(Value::as_str).unwrap_or(""));
    let reason = match raw.get("reason").and_then(Value::as_str) {
        Some(_) => "(*apiextensions.FieldValueErrorReason)(0xc000000000)".to_string(),
        None => "(*apiextensions.FieldValueErrorReason)(nil)".to_string(),
    };
    let opt = match raw.get("optionalOldSelf").and_then(Value::as_bool) {
        Some(_) => "(*bool)(0xc000000000)".to_string(),
        None => "(*bool)(nil)".to_string(),
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{opt}}}",
        s("rule"),
        s("message"),
        s("messageExpression"),
        s("fieldPath")
    )
}

/// Compiles the rules of one node; `at` is the path of its `x-kubernetes-validations`.
pub(crate) fn compile_rules(
    rules: &[Value],
    node: &Node,
    resource_root: bool,
    at: &str,
    errs: &mut Vec<FieldError>,
) -> Vec<CompiledRule> {
    let mut out = Vec::new();
    for (i, raw) in rules.iter().enumerate() {
        let rule_at = format!("{at}[{i}]");
        let rule = raw
            .get("rule")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if rule.trim().is_empty() {
            // Reported by the CRD validation (`rule is not specified`).
            continue;
        }
        let program = match compile_program(&rule) {
            Ok(p) => p,
            Err(e) => {
                errs.push(FieldError::invalid(
                    format!("{rule_at}.rule"),
                    rule_go_value(raw),
                    format!("compilation failed: {e}"),
                ));
                continue;
            }
        };
        if let Err(detail) = check_expression(&program, node, resource_root) {
            errs.push(FieldError::invalid(
                format!("{rule_at}.rule"),
                rule_go_value(raw),
                detail,
            ));
            continue;
        }
        let message_expression = raw
            .get("messageExpression")
            .and_then(Value::as_str)
            .map(str::to_string);
        let message_program = match message_expression
            .as_deref()
            .filter(|m| !m.trim().is_empty())
        {
            Some(m) => match compile_program(m) {
                Ok(p) => Some(p),
                Err(e) => {
                    errs.push(FieldError::invalid(
                        format!("{rule_at}.messageExpression"),
                        rule_go_value(raw),
                        format!("messageExpression compilation failed: {e}"),
                    ));
                    continue;
                }
            },
            None => None,
        };
        let uses_old_self = program.references().has_variable("oldSelf");
        out.push(CompiledRule {
            rule,
            message: raw
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
            message_expression,
            reason: raw
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_string),
            field_path: raw
                .get("fieldPath")
                .and_then(Value::as_str)
                .map(str::to_string),
            optional_old_self: raw
                .get("optionalOldSelf")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            uses_old_self,
            index: i,
            program,
            message_program,
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Light static checking

const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL name of a property (`Escape` of k8s.io/apiserver/pkg/cel), or `None` when the name
/// cannot be escaped (the property is then not accessible from CEL).
pub fn escape_property(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        let c = rest.chars().next()?;
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// What the checker knows about an expression's type: a schema node, or nothing.
#[derive(Clone, Copy)]
enum Ty<'a> {
    Node(&'a Node),
    /// The implicit `metadata` of a resource: only `name` and `generateName` are declared.
    Meta,
    /// A literal of this CEL type.
    Literal(&'static str),
    Unknown,
}

impl Ty<'_> {
    /// The CEL type when it is certain (scalars only).
    fn scalar(&self) -> Option<&'static str> {
        match self {
            Ty::Literal(t) => Some(t),
            Ty::Node(n)
                if !n.int_or_string
                    && matches!(n.ty.as_str(), "string" | "integer" | "number" | "boolean") =>
            {
                Some(cel_type_name(n))
            }
            _ => None,
        }
    }
}

/// Whether cel-go's checker has an overload of a comparison for these operand types: numbers
/// compare across types (`CrossTypeNumericComparisons`), everything else only with itself.
fn comparable(a: &str, b: &str) -> bool {
    let numeric = |t: &str| matches!(t, "int" | "uint" | "double");
    a == b || (numeric(a) && numeric(b))
}

struct Checker<'a> {
    root: &'a Node,
    /// Whether `self` is a resource (the schema root or an embedded resource), which declares
    /// `apiVersion`, `kind` and `metadata` implicitly.
    resource_root: bool,
    scopes: Vec<(String, Ty<'a>)>,
}

impl<'a> Checker<'a> {
    fn lookup(&self, name: &str) -> Option<Ty<'a>> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some(*t);
        }
        match name {
            "self" | "oldSelf" => Some(Ty::Node(self.root)),
            // Type names and conversion functions used as identifiers.
            "int" | "uint" | "double" | "bool" | "string" | "bytes" | "list" | "map"
            | "null_type" | "type" => Some(Ty::Unknown),
            _ => None,
        }
    }

    fn check(&mut self, e: &IdedExpr) -> Result<Ty<'a>, String> {
        match &e.expr {
            Expr::Ident(name) => {
                if name.starts_with('@') {
                    return Ok(Ty::Unknown);
                }
                self.lookup(name)
                    .ok_or_else(|| format!("undeclared reference to '{name}' (in container '')"))
            }
            // `has(x.f)`: the field must exist, the result is a bool.
            Expr::Select(sel) if sel.test => {
                let mut plain = sel.clone();
                plain.test = false;
                let probe = IdedExpr {
                    id: e.id,
                    expr: Expr::Select(plain),
                };
                self.check(&probe).map(|_| Ty::Unknown)
            }
            Expr::Select(sel) => {
                let resource = self.resource_root
                    && matches!(&sel.operand.expr, Expr::Ident(i)
                        if (i == "self" || i == "oldSelf") && !self.scopes.iter().any(|(n, _)| n == i));
                let t = self.check(&sel.operand)?;
                if let Ty::Meta = t {
                    return if sel.field == "name" || sel.field == "generateName" {
                        Ok(Ty::Unknown)
                    } else {
                        Err(format!("undefined field '{}'", sel.field))
                    };
                }
                let Ty::Node(n) = t else {
                    return Ok(Ty::Unknown);
                };
                // `WithTypeAndObjectMeta`: a resource declares kind, apiVersion and
                // metadata.{name,generateName}, whatever its schema says about them.
                if resource || n.embedded_resource {
                    match sel.field.as_str() {
                        "metadata" => return Ok(Ty::Meta),
                        "apiVersion" | "kind" => return Ok(Ty::Unknown),
                        _ => {}
                    }
                }
                if n.int_or_string {
                    return Ok(Ty::Unknown);
                }
                match n.ty.as_str() {
                    "object" => match n.additional_schema() {
                        // A map: any key may be selected.
                        Some(a) => Ok(Ty::Node(a)),
                        // An object declares exactly its (CEL-visible) properties; unknown
                        // fields kept by x-kubernetes-preserve-unknown-fields are not visible.
                        None => match n.properties.iter().find(|(k, p)| {
                            escape_property(k).as_deref() == Some(sel.field.as_str())
                                && cel_visible(p)
                        }) {
                            Some((_, child)) => Ok(Ty::Node(child)),
                            None => Err(format!("undefined field '{}'", sel.field)),
                        },
                    },
                    "string" | "integer" | "number" | "boolean" | "array" => Err(format!(
                        "type '{}' does not support field selection",
                        cel_type_name(n)
                    )),
                    _ => Ok(Ty::Unknown),
                }
            }
            Expr::Call(call) => {
                let target = match &call.target {
                    // A namespaced function (`format.dns1123Label()`, `sets.contains(...)`,
                    // `math.greatest(...)`): the "target" is a namespace, not a variable.
                    Some(t)
                        if matches!(&t.expr, Expr::Ident(ns)
                            if NAMESPACES.contains(&ns.as_str()) && self.lookup(ns).is_none()) =>
                    {
                        None
                    }
                    Some(t) => Some(self.check(t)?),
                    None => None,
                };
                let mut args = Vec::with_capacity(call.args.len());
                for a in &call.args {
                    args.push(self.check(a)?);
                }
                if matches!(
                    call.func_name.as_str(),
                    "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_"
                ) && let [l, r] = args.as_slice()
                    && let (Some(lt), Some(rt)) = (l.scalar(), r.scalar())
                    && !comparable(lt, rt)
                {
                    return Err(format!(
                        "found no matching overload for '{}' applied to '({lt}, {rt})'",
                        call.func_name
                    ));
                }
                if call.func_name == "_[_]"
                    && let Some(Ty::Node(n)) = args.first()
                {
                    if let Some(items) = &n.items {
                        return Ok(Ty::Node(items));
                    }
                    if let Some(a) = n.additional_schema() {
                        return Ok(Ty::Node(a));
                    }
                }
                let _ = target;
                Ok(Ty::Unknown)
            }
            Expr::Comprehension(c) => {
                let range = self.check(&c.iter_range)?;
                let elem = match range {
                    Ty::Node(n) => match &n.items {
                        Some(items) => Ty::Node(items),
                        None => Ty::Unknown,
                    },
                    Ty::Meta | Ty::Literal(_) | Ty::Unknown => Ty::Unknown,
                };
                self.check(&c.accu_init)?;
                let depth = self.scopes.len();
                self.scopes.push((c.iter_var.clone(), elem));
                if let Some(v2) = &c.iter_var2 {
                    self.scopes.push((v2.clone(), Ty::Unknown));
                }
                self.scopes.push((c.accu_var.clone(), Ty::Unknown));
                let r = (|| {
                    self.check(&c.loop_cond)?;
                    self.check(&c.loop_step)?;
                    self.check(&c.result)
                })();
                self.scopes.truncate(depth);
                r.map(|_| Ty::Unknown)
            }
            Expr::List(l) => {
                for el in &l.elements {
                    self.check(el)?;
                }
                Ok(Ty::Unknown)
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => {
                            self.check(&f.value)?;
                        }
                        EntryExpr::MapEntry(me) => {
                            self.check(&me.key)?;
                            self.check(&me.value)?;
                        }
                    }
                }
                Ok(Ty::Unknown)
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.check(&f.value)?;
                    }
                }
                Ok(Ty::Unknown)
            }
            Expr::Literal(l) => {
                use cel::common::ast::LiteralValue as L;
                Ok(match l {
                    L::Boolean(_) => Ty::Literal("bool"),
                    L::Bytes(_) => Ty::Literal("bytes"),
                    L::Double(_) => Ty::Literal("double"),
                    L::Int(_) => Ty::Literal("int"),
                    L::String(_) => Ty::Literal("string"),
                    L::UInt(_) => Ty::Literal("uint"),
                    // null compares with optionals, messages and dyn: never certain here.
                    L::Null => Ty::Unknown,
                })
            }
            Expr::Unspecified => Ok(Ty::Unknown),
        }
    }
}

/// Function namespaces of the CRD CEL environment.
const NAMESPACES: [&str; 7] = [
    "format", "sets", "math", "strings", "base64", "optional", "lists",
];

/// Whether a schema has a CEL type (`SchemaDeclType` is not nil): untyped nodes (only
/// `x-kubernetes-preserve-unknown-fields`), and lists or maps of them, are invisible.
fn cel_visible(n: &Node) -> bool {
    if n.int_or_string {
        return true;
    }
    match n.ty.as_str() {
        "array" => n.items.as_deref().is_some_and(cel_visible),
        "object" => n.additional_schema().is_none_or(cel_visible),
        "string" | "integer" | "number" | "boolean" => true,
        _ => false,
    }
}

/// The CEL type name of a schema, for messages.
fn cel_type_name(n: &Node) -> &'static str {
    match (n.ty.as_str(), n.raw_format.as_str()) {
        ("string", "byte") => "bytes",
        ("string", "duration") => "google.protobuf.Duration",
        ("string", "date" | "date-time") => "google.protobuf.Timestamp",
        ("string", _) => "string",
        ("integer", _) => "int",
        ("number", _) => "double",
        ("boolean", _) => "bool",
        ("array", _) => "list",
        _ => "object",
    }
}

/// Rejects references to undeclared variables and to fields a plain object does not declare.
/// Returns the error detail kube-apiserver gives (`compilation failed: ...` for type errors,
/// `cel expression must evaluate to a bool` for a rule whose result is visibly not a bool).
fn check_expression(program: &Program, node: &Node, resource_root: bool) -> Result<(), String> {
    let mut checker = Checker {
        root: node,
        resource_root,
        scopes: Vec::new(),
    };
    let ty = checker
        .check(program.expression())
        .map_err(|msg| format!("compilation failed: ERROR: <input>: {msg}"))?;
    let not_bool = match (&program.expression().expr, ty) {
        (Expr::Literal(l), _) => !matches!(l, cel::common::ast::LiteralValue::Boolean(_)),
        (_, Ty::Node(n)) => !n.int_or_string && cel_visible(n) && n.ty != "boolean",
        (_, Ty::Meta) => true,
        _ => false,
    };
    if not_bool {
        return Err("cel expression must evaluate to a bool".to_string());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// JSON -> CEL

fn to_cel(v: &Value, n: Option<&Node>, resource_root: bool) -> CelValue {
    match v {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(num) => {
            let is_number_type = n.is_some_and(|n| n.ty == "number");
            match num.as_i64() {
                Some(i) if !is_number_type => CelValue::Int(i),
                _ => match num.as_u64() {
                    Some(u) if !is_number_type && n.is_some_and(|n| n.ty == "integer") => {
                        CelValue::UInt(u)
                    }
                    _ => CelValue::Float(num.as_f64().unwrap_or(0.0)),
                },
            }
        }
        Value::String(s) => {
            if let Some(n) = n
                && n.ty == "string"
            {
                match n.raw_format.as_str() {
                    "date-time" => {
                        if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
                            return CelValue::Timestamp(t);
                        }
                    }
                    "date" => {
                        if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                            && let Some(t) = d.and_hms_opt(0, 0, 0)
                        {
                            return CelValue::Timestamp(t.and_utc().fixed_offset());
                        }
                    }
                    "duration" => {
                        if let Some(ns) = crate::formats::parse_go_duration(s)
                            && let Ok(ns) = i64::try_from(ns)
                        {
                            return CelValue::Duration(chrono::Duration::nanoseconds(ns));
                        }
                    }
                    "byte" => {
                        use base64::Engine;
                        if let Ok(b) = base64::engine::general_purpose::STANDARD.decode(s) {
                            return CelValue::Bytes(Arc::new(b));
                        }
                    }
                    _ => {}
                }
            }
            CelValue::String(Arc::new(s.clone()))
        }
        Value::Array(items) => {
            let item = n.and_then(|n| n.items.as_deref());
            CelValue::List(Arc::new(
                items
                    .iter()
                    .map(|x| to_cel(x, item, item.is_some_and(|i| i.embedded_resource)))
                    .collect(),
            ))
        }
        Value::Object(map) => {
            let mut out: HashMap<cel::objects::Key, CelValue> = HashMap::with_capacity(map.len());
            match n {
                Some(n) if n.additional_schema().is_some() && n.properties.is_empty() => {
                    let a = n.additional_schema();
                    for (k, v) in map {
                        out.insert(
                            k.clone().into(),
                            to_cel(v, a, a.is_some_and(|a| a.embedded_resource)),
                        );
                    }
                }
                _ => {
                    let embedded = resource_root || n.is_some_and(|n| n.embedded_resource);
                    for (k, v) in map {
                        if embedded && (k == "apiVersion" || k == "kind") {
                            out.insert(k.clone().into(), to_cel(v, None, false));
                            continue;
                        }
                        if embedded && k == "metadata" {
                            if let Value::Object(meta) = v {
                                let mut m: HashMap<cel::objects::Key, CelValue> = HashMap::new();
                                for key in ["name", "generateName"] {
                                    if let Some(Value::String(s)) = meta.get(key) {
                                        m.insert(key.into(), CelValue::String(Arc::new(s.clone())));
                                    }
                                }
                                out.insert("metadata".into(), CelValue::Map(m.into()));
                            }
                            continue;
                        }
                        let child = n.and_then(|n| n.field_schema(k));
                        let Some(name) = escape_property(k) else {
                            continue;
                        };
                        out.insert(
                            name.into(),
                            to_cel(v, child, child.is_some_and(|c| c.embedded_resource)),
                        );
                    }
                }
            }
            CelValue::Map(out.into())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// Evaluates every rule of the tree against `obj` (and `old` on update).
pub(crate) fn validate_rules(root: &Node, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if root.has_rules {
        BASE_CONTEXT.with(|base| walk(root, obj, old, "", true, base, &mut errs));
    }
    errs
}

/// Evaluates the rules of the tree below `n` against `obj`, `n` being a resource root when
/// `resource_root` (used for `default` values in CRD validation).
pub(crate) fn validate_rules_at(
    n: &Node,
    obj: &Value,
    old: Option<&Value>,
    resource_root: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if n.has_rules {
        BASE_CONTEXT.with(|base| walk(n, obj, old, "", resource_root, base, &mut errs));
    }
    errs
}

fn walk(
    n: &Node,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    base: &Context<'static>,
    errs: &mut Vec<FieldError>,
) {
    if v.is_null() || !n.has_rules {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !n.rules.is_empty() {
        eval_node(n, v, old, path, root, base, errs);
    }
    match v {
        Value::Object(map) => {
            for (k, child) in &n.properties {
                if !child.has_rules {
                    continue;
                }
                if let Some(cv) = map.get(k) {
                    let co = old.and_then(|o| o.get(k));
                    walk(
                        child,
                        cv,
                        co,
                        &crate::path::child(path, k),
                        false,
                        base,
                        errs,
                    );
                }
            }
            if let Some(a) = n.additional_schema()
                && a.has_rules
            {
                for (k, cv) in map {
                    if n.properties.contains_key(k) {
                        continue;
                    }
                    let co = old.and_then(|o| o.get(k));
                    walk(a, cv, co, &crate::path::key(path, k), false, base, errs);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = n.items.as_deref()
                && item.has_rules
            {
                let old_items = old.and_then(Value::as_array);
                for (i, cv) in items.iter().enumerate() {
                    let co = match (n.list_type.as_deref(), old_items) {
                        (Some("map"), Some(olds)) => {
                            crate::validate::correlate_map_item(&n.list_map_keys, cv, olds)
                        }
                        _ => None,
                    };
                    walk(
                        item,
                        cv,
                        co,
                        &crate::path::index(path, i),
                        false,
                        base,
                        errs,
                    );
                }
            }
        }
        _ => {}
    }
}

fn eval_node(
    n: &Node,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    base: &Context<'static>,
    errs: &mut Vec<FieldError>,
) {
    let self_val = to_cel(v, Some(n), root);
    let old_val = old.map(|o| to_cel(o, Some(n), root));
    let mut ctx = base.new_inner_scope();
    ctx.add_variable_from_value("self", self_val.clone());
    if let Some(o) = &old_val {
        ctx.add_variable_from_value("oldSelf", o.clone());
    }
    // `optionalOldSelf` rules see `oldSelf` as an optional: `optional.of(old)` on update,
    // `optional.none()` on create.
    let mut optional_ctx = base.new_inner_scope();
    if n.rules.iter().any(|r| r.optional_old_self) {
        let opt = match &old_val {
            Some(o) => OptionalValue::of(o.clone()),
            None => OptionalValue::none(),
        };
        optional_ctx.add_variable_from_value("self", self_val.clone());
        optional_ctx.add_variable_from_value("oldSelf", CelValue::Opaque(Arc::new(opt)));
    }
    let type_value = go_quote(&n.ty);
    for rule in &n.rules {
        if rule.uses_old_self && old_val.is_none() && !rule.optional_old_self {
            continue;
        }
        let eval_ctx = if rule.optional_old_self {
            &optional_ctx
        } else {
            &ctx
        };
        let result = rule.program.execute(eval_ctx);
        match result {
            Ok(CelValue::Bool(true)) => {}
            // Ratcheting: a failing rule without oldSelf on an unchanged value is only a
            // warning upstream (dropped here).
            Ok(CelValue::Bool(false)) if !rule.uses_old_self && old.is_some_and(|o| o == v) => {}
            Ok(CelValue::Bool(false)) => {
                let field = match rule.field_path.as_deref() {
                    Some(fp) if !fp.is_empty() => join_field_path(path, fp, n),
                    _ => path.to_string(),
                };
                let detail = rule
                    .message_program
                    .as_ref()
                    .and_then(|p| match p.execute(eval_ctx) {
                        Ok(CelValue::String(s)) => {
                            // Failures fall back to the static message, as upstream.
                            let t = s.trim();
                            (!t.is_empty() && !t.contains(['\n', '\r']) && t.len() <= 5 * 1024)
                                .then(|| t.to_string())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| rule.message_or_default());
                errs.push(match rule.reason.as_deref() {
                    Some("FieldValueForbidden") => FieldError::forbidden(field, detail),
                    Some("FieldValueRequired") => FieldError::required(field, detail),
                    Some("FieldValueDuplicate") => FieldError::duplicate(field, type_value.clone()),
                    _ => FieldError::invalid(field, type_value.clone(), detail),
                });
            }
            Ok(other) => errs.push(FieldError::invalid(
                path,
                type_value.clone(),
                format!(
                    "no such overload: rule did not evaluate to a bool ({:?}) evaluating rule: {}",
                    other.type_of(),
                    rule.error_string()
                ),
            )),
            Err(e) => {
                let text = cel_error_text(&e);
                let detail = if text.starts_with("no such overload") {
                    format!(
                        "'{text}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule.error_string()
                    )
                } else {
                    format!("{text} evaluating rule: {}", rule.error_string())
                };
                errs.push(FieldError::invalid(path, type_value.clone(), detail));
            }
        }
    }
}

/// cel-go's wording for the common runtime errors.
fn cel_error_text(e: &cel::ExecutionError) -> String {
    match e {
        cel::ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        cel::ExecutionError::NoSuchOverload => "no such overload".to_string(),
        cel::ExecutionError::UndeclaredReference(r) => format!("no such attribute(s): {r}"),
        other => other.to_string(),
    }
}

/// `fieldPath` of a rule relative to the node: `.a.b` or `['a'].b` to a field path, map keys
/// (of `additionalProperties`) as `[key]`.
fn join_field_path(base: &str, fp: &str, n: &Node) -> String {
    let mut out = base.to_string();
    let mut cur = Some(n);
    for seg in parse_field_path(fp).unwrap_or_default() {
        let is_prop = cur.is_some_and(|c| c.properties.contains_key(&seg));
        if is_prop || cur.and_then(Node::additional_schema).is_none() {
            out = crate::path::child(&out, &seg);
        } else {
            out = crate::path::key(&out, &seg);
        }
        cur = cur.and_then(|c| c.field_schema(&seg));
    }
    out
}

/// Splits a rule `fieldPath` (`.a.b`, `.a['b.c']`) into segments.
pub(crate) fn parse_field_path(fp: &str) -> Option<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = fp;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            segs.push(r[..end].to_string());
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            segs.push(r[..end].replace("\\'", "'"));
            rest = &r[end + 2..];
        } else {
            return None;
        }
    }
    Some(segs)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Schema;

    fn schema(v: serde_json::Value) -> Schema {
        Schema::compile(&v).unwrap_or_else(|e| panic!("schema compiles: {e:?}"))
    }

    fn errors(s: &Schema, obj: serde_json::Value, old: Option<serde_json::Value>) -> Vec<String> {
        s.validate(&obj, old.as_ref())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The shape of our generated Crossplane CRDs: a required-parameter rule at `spec`.
    fn crossplane_schema() -> Schema {
        let params = json!({"type": "object", "properties": {
            "description": {"type": "string"},
            "key": {"type": "string"}
        }});
        schema(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.description) || (has(self.initProvider) && has(self.initProvider.description))",
                         "message": "spec.forProvider.description is a required parameter"}
                    ],
                    "properties": {
                        "managementPolicies": {"type": "array", "default": ["*"], "items": {"type": "string",
                            "enum": ["Observe", "Create", "Update", "Delete", "LateInitialize", "*"]}},
                        "forProvider": params.clone(),
                        "initProvider": params,
                    }
                }
            }
        }))
    }

    #[test]
    fn crossplane_required_parameter_rule() {
        let s = crossplane_schema();
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"managementPolicies": ["*"], "forProvider": {}}}),
                None
            ),
            vec![
                r#"spec: Invalid value: "object": spec.forProvider.description is a required parameter"#
            ]
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"managementPolicies": ["*"], "forProvider": {"description": "d"}}}),
                None
            )
            .is_empty()
        );
        assert!(
            errors(&s, json!({"spec": {"managementPolicies": ["Create"], "forProvider": {}, "initProvider": {"description": "d"}}}), None)
                .is_empty()
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"managementPolicies": ["Observe"], "forProvider": {}}}),
                None
            )
            .is_empty()
        );
        assert_eq!(
            errors(&s, json!({"spec": {"managementPolicies": ["Observe", "Update"], "forProvider": {}, "initProvider": {}}}), None).len(),
            1
        );
    }

    #[test]
    fn crossplane_rule_sees_defaults() {
        let s = crossplane_schema();
        let mut obj = json!({"spec": {"forProvider": {}}});
        s.apply_defaults(&mut obj);
        assert_eq!(
            errors(&s, obj, None).len(),
            1,
            "managementPolicies defaults to ['*']"
        );
    }

    fn immutable_schema() -> Schema {
        schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "key": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
                "size": {"type": "integer", "x-kubernetes-validations": [
                    {"rule": "self >= oldSelf", "message": "may only grow", "optionalOldSelf": false}]}
            }}}}),
        )
    }

    #[test]
    fn transition_rule_only_on_update() {
        let s = immutable_schema();
        assert!(errors(&s, json!({"spec": {"key": "a", "size": 1}}), None).is_empty());
        assert!(
            errors(
                &s,
                json!({"spec": {"key": "a"}}),
                Some(json!({"spec": {"key": "a"}}))
            )
            .is_empty()
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"key": "b", "size": 1}}),
                Some(json!({"spec": {"key": "a", "size": 2}}))
            ),
            vec![
                r#"spec.key: Invalid value: "string": Value is immutable"#,
                r#"spec.size: Invalid value: "integer": may only grow"#
            ]
        );
        assert!(
            errors(&s, json!({"spec": {"key": "b"}}), Some(json!({"spec": {}}))).is_empty(),
            "no old value at the field: transition rule skipped"
        );
    }

    #[test]
    fn optional_old_self_runs_on_create() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self.v >= oldSelf.value().v", "optionalOldSelf": true, "message": "no shrink"}],
            "properties": {"v": {"type": "integer"}}}}}),
        );
        assert!(errors(&s, json!({"spec": {"v": 1}}), None).is_empty());
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"v": 1}}),
                Some(json!({"spec": {"v": 2}}))
            )
            .len(),
            1
        );
    }

    #[test]
    fn reasons_field_path_and_message_expression() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.max", "reason": "FieldValueForbidden", "fieldPath": ".replicas", "message": "too many"},
                {"rule": "has(self.name)", "reason": "FieldValueRequired", "message": "name is required"},
                {"rule": "self.replicas != 3", "messageExpression": "'replicas may not be ' + string(self.replicas)"},
                {"rule": "self.replicas != 4"}
            ],
            "properties": {"replicas": {"type": "integer"}, "max": {"type": "integer"}, "name": {"type": "string"}}}}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {"replicas": 5, "max": 2}}), None),
            vec![
                "spec.replicas: Forbidden: too many",
                "spec: Required value: name is required"
            ]
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"replicas": 3, "max": 5, "name": "n"}}),
                None
            ),
            vec![r#"spec: Invalid value: "object": replicas may not be 3"#]
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"replicas": 4, "max": 5, "name": "n"}}),
                None
            ),
            vec![r#"spec: Invalid value: "object": failed rule: self.replicas != 4"#]
        );
    }

    #[test]
    fn string_list_and_macro_functions() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.name.startsWith('x-') && self.name.endsWith('-y') && self.name.contains('mid')", "message": "name"},
                {"rule": "self.name.matches('^[a-z-]+$')", "message": "matches"},
                {"rule": "self.name.lowerAscii() == self.name", "message": "lower"},
                {"rule": "size(self.tags) <= 3 && self.tags.all(t, size(t) > 0)", "message": "tags"},
                {"rule": "self.tags.exists(t, t == 'a') && self.tags.exists_one(t, t == 'b')", "message": "exists"},
                {"rule": "self.tags.filter(t, t != 'a').map(t, t + '!').size() == 1", "message": "map/filter"},
                {"rule": "self.labels.all(k, k.size() < 10) && ('env' in self.labels)", "message": "labels"}
            ],
            "properties": {
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}
            }}}}),
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"name": "x-mid-y", "tags": ["a", "b"], "labels": {"env": "prod"}}}),
                None
            )
            .is_empty(),
            "{:?}",
            errors(
                &s,
                json!({"spec": {"name": "x-mid-y", "tags": ["a", "b"], "labels": {"env": "prod"}}}),
                None
            )
        );
        let e = errors(
            &s,
            json!({"spec": {"name": "X-MID-Y", "tags": ["a", "b", "b"], "labels": {"other": "x"}}}),
            None,
        );
        assert_eq!(
            e,
            vec![
                r#"spec: Invalid value: "object": name"#,
                r#"spec: Invalid value: "object": matches"#,
                r#"spec: Invalid value: "object": lower"#,
                r#"spec: Invalid value: "object": exists"#,
                r#"spec: Invalid value: "object": map/filter"#,
                r#"spec: Invalid value: "object": labels"#,
            ]
        );
    }

    #[test]
    fn rules_in_list_items_and_maps() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}},
                          "x-kubernetes-validations": [{"rule": "self.n > 0", "message": "positive"}]}},
                "byName": {"type": "object", "additionalProperties": {"type": "string",
                           "x-kubernetes-validations": [{"rule": "self != ''", "message": "non-empty"}]}}
            }}}}),
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"items": [{"n": 1}, {"n": 0}], "byName": {"a": "x", "b": ""}}}),
                None
            ),
            vec![
                r#"spec.items[1]: Invalid value: "object": positive"#,
                r#"spec.byName[b]: Invalid value: "string": non-empty"#
            ]
        );
    }

    #[test]
    fn escaped_property_names_and_root_metadata() {
        let s = schema(json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('ok')", "message": "name"}],
            "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.some__dash__field == 'x' && self.__if__ == 1", "message": "escaped"}],
            "properties": {"some-field": {"type": "string"}, "if": {"type": "integer"}}}}}));
        assert!(
            errors(
                &s,
                json!({"metadata": {"name": "ok1"}, "spec": {"some-field": "x", "if": 1}}),
                None
            )
            .is_empty()
        );
        assert_eq!(
            errors(
                &s,
                json!({"metadata": {"name": "bad"}, "spec": {"some-field": "y", "if": 1}}),
                None
            ),
            vec![
                r#": Invalid value: "object": name"#,
                r#"spec: Invalid value: "object": escaped"#
            ]
        );
    }

    #[test]
    fn blocking_errors_skip_rules() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["name"],
            "x-kubernetes-validations": [{"rule": "self.name != 'x'", "message": "not x"}],
            "properties": {"name": {"type": "string"}, "size": {"type": "integer", "minimum": 1}}}}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {"size": 1}}), None),
            vec![
                "spec.name: Required value",
                r#": Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#
            ]
        );
        // A plain Invalid error (minimum) does not block the rules.
        assert_eq!(
            errors(&s, json!({"spec": {"name": "x", "size": 0}}), None),
            vec![
                "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
                r#"spec: Invalid value: "object": not x"#
            ]
        );
    }

    #[test]
    fn evaluation_error_is_reported() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.a.b == 'x'"}],
            "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {}}), None),
            vec![
                r#"spec: Invalid value: "object": no such key: a evaluating rule: self.a.b == 'x'"#
            ]
        );
    }

    #[test]
    fn compile_errors_are_rejected() {
        let bad_syntax = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}],
            "properties": {"a": {"type": "string"}}});
        let e = Schema::compile(&bad_syntax).expect_err("syntax error");
        assert_eq!(e[0].field, "x-kubernetes-validations[0].rule");
        assert!(
            e[0].detail
                .starts_with("compilation failed: ERROR: <input>:1:"),
            "{}",
            e[0].detail
        );
        let undefined = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.colour == 'red'"}],
            "properties": {"color": {"type": "string"}}});
        let e = Schema::compile(&undefined).expect_err("undefined field");
        assert_eq!(
            e[0].detail,
            "compilation failed: ERROR: <input>: undefined field 'colour'"
        );
        let undeclared =
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "foo == 1"}]});
        let e = Schema::compile(&undeclared).expect_err("undeclared");
        assert!(
            e[0].detail.contains("undeclared reference to 'foo'"),
            "{}",
            e[0].detail
        );
        let ok = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.items.all(i, i.name != '')"}],
            "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}});
        assert!(Schema::compile(&ok).is_ok());
        let bad_item = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.items.all(i, i.nme != '')"}],
            "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}});
        assert!(Schema::compile(&bad_item).is_err());
    }

    #[test]
    fn transition_rules_correlate_list_map_items_by_key() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "rules": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "target": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "target is immutable"}]}
                    }}}
            }}}}),
        );
        let old = json!({"spec": {"rules": [{"name": "a", "target": "x"}, {"name": "b", "target": "y"}]}});
        // Reordered but unchanged: fine.
        let same = json!({"spec": {"rules": [{"name": "b", "target": "y"}, {"name": "a", "target": "x"}, {"name": "c", "target": "z"}]}});
        assert!(errors(&s, same, Some(old.clone())).is_empty());
        let changed = json!({"spec": {"rules": [{"name": "b", "target": "changed"}, {"name": "a", "target": "x"}]}});
        assert_eq!(
            errors(&s, changed, Some(old)),
            vec![r#"spec.rules[0].target: Invalid value: "string": target is immutable"#]
        );
    }

    #[test]
    fn duplicate_reason_and_map_key_field_path() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.l.size() == 0", "reason": "FieldValueDuplicate", "message": "dup"},
                {"rule": "!('a.b' in self.labels)", "fieldPath": ".labels['a.b']", "message": "no a.b"}
            ],
            "properties": {"l": {"type": "array", "items": {"type": "string"}},
                           "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}),
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"l": ["x"], "labels": {"a.b": "c"}}}),
                None
            ),
            vec![
                r#"spec: Duplicate value: "object""#,
                r#"spec.labels[a.b]: Invalid value: "object": no a.b"#
            ]
        );
    }

    #[test]
    fn rules_on_embedded_resources_see_kind_and_name() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "tpl": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
                        "x-kubernetes-validations": [{"rule": "self.kind == 'ConfigMap' && self.metadata.name.startsWith('cm-')", "message": "only cm-* ConfigMaps"}]}
            }}}}),
        );
        assert!(errors(&s, json!({"spec": {"tpl": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-1"}}}}), None).is_empty());
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"tpl": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cm-1"}}}}),
                None
            ),
            vec![r#"spec.tpl: Invalid value: "object": only cm-* ConfigMaps"#]
        );
    }

    #[test]
    fn metadata_fields_other_than_name_are_undefined_in_rules() {
        let bad = json!({"type": "object", "x-kubernetes-validations": [{"rule": "size(self.metadata.labels) > 0"}]});
        let e = Schema::compile(&bad).expect_err("labels are not declared");
        assert_eq!(
            e[0].detail,
            "compilation failed: ERROR: <input>: undefined field 'labels'"
        );
    }

    #[test]
    fn checker_follows_cel_declared_types() {
        let base = |rule: &str| {
            json!({"type": "object", "properties": {
            "metadata": {"type": "object"},
            "spec": {"type": "object", "x-kubernetes-validations": [{"rule": rule}], "properties": {
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "string"}}},
                "blob": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "s": {"type": "string"},
                "ios": {"x-kubernetes-int-or-string": true}
            }}}})
        };
        for ok in [
            "self.free.known == 'x'",
            "self.m.anything == 1",
            "self.m.anything > 1.5",
            "has(self.m.k)",
            "self.ios == 1 || self.ios == 'x'",
            "self.s.size() > 0",
            "self.s != null || true",
        ] {
            assert!(Schema::compile(&base(ok)).is_ok(), "{ok}");
        }
        for (bad, msg) in [
            ("self.free.unknown == 'x'", "undefined field 'unknown'"),
            ("has(self.blob.anything)", "undefined field 'anything'"),
            (
                "self.s.length == 1",
                "type 'string' does not support field selection",
            ),
            (
                "self.s == 1",
                "found no matching overload for '_==_' applied to '(string, int)'",
            ),
            (
                "self.m.k < 'a'",
                "found no matching overload for '_<_' applied to '(int, string)'",
            ),
        ] {
            let e = Schema::compile(&base(bad)).expect_err(bad);
            assert_eq!(
                e[0].detail,
                format!("compilation failed: ERROR: <input>: {msg}"),
                "{bad}"
            );
        }
        let root = json!({"type": "object", "properties": {"metadata": {"type": "object"}},
            "x-kubernetes-validations": [{"rule": "self.metadata.name.size() < 20 && self.kind != ''"}]});
        assert!(Schema::compile(&root).is_ok());
    }

    #[test]
    fn date_format_is_a_timestamp() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.from < self.to", "message": "from must be before to"}],
            "properties": {"from": {"type": "string", "format": "date"}, "to": {"type": "string", "format": "date"}}}}}),
        );
        assert!(
            errors(
                &s,
                json!({"spec": {"from": "2024-01-01", "to": "2024-02-01"}}),
                None
            )
            .is_empty()
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"from": "2024-03-01", "to": "2024-02-01"}}),
                None
            )
            .len(),
            1
        );
    }

    #[test]
    fn rules_must_be_boolean() {
        for rule in ["self.name", "1", "'x'"] {
            let sc = json!({"type": "object", "x-kubernetes-validations": [{"rule": rule}],
                "properties": {"name": {"type": "string"}, "on": {"type": "boolean"}}});
            let e = Schema::compile(&sc).expect_err(rule);
            assert_eq!(
                e[0].detail, "cel expression must evaluate to a bool",
                "{rule}"
            );
        }
        let ok = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.on"}, {"rule": "true"}],
            "properties": {"on": {"type": "boolean"}}});
        assert!(Schema::compile(&ok).is_ok());
    }

    #[test]
    fn escape_rules() {
        use super::escape_property;
        assert_eq!(escape_property("a-b").as_deref(), Some("a__dash__b"));
        assert_eq!(
            escape_property("a.b/c").as_deref(),
            Some("a__dot__b__slash__c")
        );
        assert_eq!(
            escape_property("a__b").as_deref(),
            Some("a__underscores__b")
        );
        assert_eq!(
            escape_property("namespace").as_deref(),
            Some("__namespace__")
        );
        assert_eq!(escape_property("1a"), None);
        assert_eq!(escape_property("a b"), None);
    }
}

#[cfg(test)]
mod function_tests {
    use serde_json::json;

    use crate::Schema;

    /// Each rule must hold for the object below (a failing rule shows up as an error).
    #[test]
    fn kubernetes_cel_library() {
        let rules = [
            "self.s.lowerAscii() == 'abc'",
            "self.s.upperAscii() == 'ABC'",
            "size(self.s) == 3 && self.s.size() == 3",
            "self.s.startsWith('a') && self.s.endsWith('c') && self.s.contains('b')",
            "self.s.matches('^a.c$') && !'١'.matches('^\\\\d$') && '1'.matches('^\\\\d$')",
            "self.s.indexOf('b') == 1",
            "self.dashed.split('-').size() == 2",
            "self.l.size() == 2 && self.l[0] == 'a'",
            "self.l.exists(e, e == 'a') && self.l.exists_one(e, e == 'b')",
            "self.l.all(e, e.startsWith('a') || e.startsWith('b'))",
            "self.l.map(e, e + 'x').exists(e, e == 'ax')",
            "self.l.filter(e, e == 'a').size() == 1",
            "'a' in self.l",
            "self.l.isSorted()",
            "self.m.all(k, self.m[k] != '') && 'k' in self.m && self.m.k == 'v'",
            "self.n > 1.5 && self.n < 3",
            "self.i + 1 == 3 && string(self.i) == '2' && int(self.digits) == 5",
            "self.d > duration('1h') && self.d == duration('90m')",
            "self.t < timestamp('2030-01-01T00:00:00Z')",
            "isURL(self.u) && url(self.u).getHost() == 'example.com'",
            "quantity(self.q).isGreaterThan(quantity('1Gi'))",
            "has(self.obj.inner) && !has(self.obj.missing) && self.obj.inner.z == 1",
            "self.ios == 80",
            "type(self.s) == string",
            "self.s.trim() == 'abc' && self.s.replace('b', 'x') == 'axc'",
            "self.l.join(',') == 'a,b'",
            "self.s != '' ? true : false",
            "self.all(k, k != '')",
            "!format.dns1123Label().validate(self.dashed).hasValue()",
            "format.dns1123Label().validate('Not_OK').hasValue()",
            "optional.of(self.s).orValue('') == 'abc' && optional.none().orValue(1) == 1",
            "sets.contains(self.l, ['a'])",
            "math.greatest(self.i, 1) == 2",
            "isIP('10.0.0.1') && ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
            "isSemver('1.2.3') && semver('1.2.3').major() == 1",
            "base64.encode(b'hi') == 'aGk='",
            "size('é') == 1",
            "self.l + ['c'] == ['a', 'b', 'c']",
            "double(self.i) == 2.0 && self.i / 2 == 1 && self.i % 2 == 0",
            "self.t + duration('1h') > self.t && self.t.getFullYear() == 2024",
            "self.m.exists(k, k == 'k') && size(self.m) == 1",
            "!('z' in self.m)",
            "self.s.charAt(0) == 'a' && self.s.substring(1) == 'bc'",
            "self.l.all(x, self.l.exists(y, y == x))",
        ];
        let validations: Vec<serde_json::Value> =
            rules.iter().map(|r| json!({"rule": r})).collect();
        let s = Schema::compile(&json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": validations,
            "properties": {
                "s": {"type": "string"}, "dashed": {"type": "string"}, "digits": {"type": "string"},
                "l": {"type": "array", "items": {"type": "string"}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "n": {"type": "number"}, "i": {"type": "integer"},
                "d": {"type": "string", "format": "duration"},
                "t": {"type": "string", "format": "date-time"},
                "u": {"type": "string"}, "q": {"type": "string"},
                "obj": {"type": "object", "properties": {"inner": {"type": "object", "properties": {"z": {"type": "integer"}}}, "missing": {"type": "string"}}},
                "ios": {"x-kubernetes-int-or-string": true}
            }}}}))
        .unwrap_or_else(|e| panic!("{e:?}"));
        let obj = json!({"spec": {"s": "abc", "dashed": "a-b", "digits": "5", "l": ["a", "b"], "m": {"k": "v"},
            "n": 2.5, "i": 2, "d": "1h30m", "t": "2024-05-01T10:00:00Z", "u": "https://example.com/x", "q": "2Gi",
            "obj": {"inner": {"z": 1}}, "ios": 80}});
        let errs: Vec<String> = s
            .validate(&obj, None)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(errs.is_empty(), "{errs:#?}");
    }
}
