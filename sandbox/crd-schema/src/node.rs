//! The compiled schema tree: one [`Node`] per schema object, with regexes, formats and CEL
//! programs compiled once so that pruning, defaulting and validation only walk the tree.

use indexmap::IndexMap;
use regex::Regex;
use serde_json::Value;

use crate::FieldError;
use crate::cel::CompiledRule;
use crate::formats::Format;
use crate::path;

/// `additionalProperties` of a node.
#[derive(Debug)]
pub enum Additional {
    /// `additionalProperties: true|false` without a schema.
    Allows(bool),
    /// `additionalProperties: {schema}`.
    Schema(Box<Node>),
}

/// One compiled schema object (`JSONSchemaProps`).
#[derive(Debug, Default)]
pub struct Node {
    /// `type` as written (empty when absent).
    pub ty: String,
    /// The types kube-openapi checks against (`[type]`, or `[integer, string]` for
    /// `x-kubernetes-int-or-string`).
    pub types: Vec<String>,
    /// `nullable`: `null` is accepted (and kept) as the value.
    pub nullable: bool,
    /// `format` as written.
    pub raw_format: String,
    /// The format kube-openapi keeps after stripping the ones apiextensions does not support.
    pub format: Option<String>,
    /// The string format validated, when the kept format is a string format.
    pub string_format: Option<Format>,
    /// `x-kubernetes-int-or-string`: an integer or a string.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`: fields the schema does not name are kept, not
    /// pruned.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`: the value is a Kubernetes object (`apiVersion`,
    /// `kind`, `metadata`).
    pub embedded_resource: bool,
    /// `properties`: the schema of each named field.
    pub properties: IndexMap<String, Node>,
    /// `additionalProperties`, when given.
    pub additional: Option<Additional>,
    /// `items`: the schema of each list element.
    pub items: Option<Box<Node>>,
    /// `required`: the fields that must be present.
    pub required: Vec<String>,
    /// `enum`: the allowed values, when restricted.
    pub enum_values: Option<Vec<Value>>,
    /// `pattern` as written and compiled.
    pub pattern: Option<(String, Regex)>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`: the maximum itself is not allowed.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`: the minimum itself is not allowed.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength` of a string, in characters.
    pub max_length: Option<i64>,
    /// `minLength` of a string, in characters.
    pub min_length: Option<i64>,
    /// `maxItems` of a list.
    pub max_items: Option<i64>,
    /// `minItems` of a list.
    pub min_items: Option<i64>,
    /// `uniqueItems`: list elements must differ.
    pub unique_items: bool,
    /// `maxProperties` of an object.
    pub max_properties: Option<i64>,
    /// `minProperties` of an object.
    pub min_properties: Option<i64>,
    /// `allOf`: schemas the value must all satisfy.
    pub all_of: Vec<Node>,
    /// `anyOf`: schemas of which the value must satisfy at least one.
    pub any_of: Vec<Node>,
    /// `oneOf`: schemas of which the value must satisfy exactly one.
    pub one_of: Vec<Node>,
    /// `not`: a schema the value must not satisfy.
    pub not: Option<Box<Node>>,
    /// `default`: the value set when the field is absent.
    pub default: Option<Value>,
    /// `x-kubernetes-list-type` (`atomic`, `set` or `map`).
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`: the fields that identify an element of a `map` list.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type` (`atomic` or `granular`).
    pub map_type: Option<String>,
    /// Compiled `x-kubernetes-validations`.
    pub rules: Vec<CompiledRule>,
    /// Whether this node or any node below it (through properties, items or
    /// additionalProperties) has CEL rules; lets validation skip rule-free subtrees.
    pub has_rules: bool,
    /// Whether this node or any node below it has a list type set/map; same purpose.
    pub has_list_types: bool,
    /// Whether this node or any node below it is an embedded resource.
    pub has_embedded: bool,
}

/// Compiled patterns by source: CRDs repeat the same patterns many times (and CRD validation and
/// `Schema::compile` both compile them), and compiling dominates.
static REGEXES: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, Result<Regex, regex::Error>>>,
> = std::sync::LazyLock::new(Default::default);

/// Compiles a Go RE2 pattern once per process (see [`translate_go_regex`]).
pub(crate) fn compile_go_regex(pattern: &str) -> Result<Regex, regex::Error> {
    let mut cache = REGEXES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(r) = cache.get(pattern) {
        return r.clone();
    }
    if cache.len() > 20_000 {
        cache.clear();
    }
    let r = translate_go_regex(pattern);
    cache.insert(pattern.to_string(), r.clone());
    r
}

/// Translates a Go RE2 pattern to the `regex` crate: Perl classes (`\d`, `\w`, `\s`, `\b`) are
/// ASCII-only in RE2 but Unicode-aware in `regex`.
fn translate_go_regex(pattern: &str) -> Result<Regex, regex::Error> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('d' | 'D' | 'w' | 'W' | 's' | 'S')) => {
                    let (set, neg) = match e {
                        'd' => ("0-9", false),
                        'D' => ("0-9", true),
                        'w' => ("0-9A-Za-z_", false),
                        'W' => ("0-9A-Za-z_", true),
                        's' => ("\\t\\n\\f\\r ", false),
                        _ => ("\\t\\n\\f\\r ", true),
                    };
                    if in_class {
                        if neg {
                            // A negated Perl class inside a bracket: keep the Unicode-free form.
                            out.push_str(&format!("[^{set}]"));
                        } else {
                            out.push_str(set);
                        }
                    } else if neg {
                        out.push_str(&format!("[^{set}]"));
                    } else {
                        out.push_str(&format!("[{set}]"));
                    }
                }
                Some(e @ ('b' | 'B')) if !in_class => {
                    out.push_str(&format!("(?-u:\\{e})"));
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // POSIX class like [:alpha:]: copy through to the closing `:]`.
                out.push('[');
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            c => out.push(c),
        }
    }
    Regex::new(&out)
}

impl Node {
    /// Compiles a schema value. `at` is the path of the schema for error messages (e.g.
    /// `spec.versions[0].schema.openAPIV3Schema`). Returns the node and the errors of things
    /// that do not compile (patterns, CEL rules).
    pub fn compile(schema: &Value, at: &str) -> (Node, Vec<FieldError>) {
        let mut errs = Vec::new();
        let node = Self::compile_inner(schema, at, &mut errs, 0);
        (node, errs)
    }

    fn compile_inner(schema: &Value, at: &str, errs: &mut Vec<FieldError>, depth: usize) -> Node {
        let Some(m) = schema.as_object() else {
            return Node::default();
        };
        if depth > 128 {
            errs.push(FieldError::forbidden(at, "schema is nested too deeply"));
            return Node::default();
        }
        // One pass over the keys: schemas are large and keyed lookups dominate compile time.
        let mut n = Node::default();
        let mut props = None;
        let mut additional = None;
        let mut items = None;
        let mut combinators: [Option<&Vec<Value>>; 3] = [None, None, None];
        let mut not = None;
        let mut rules = None;
        let mut pattern = None;
        let as_int = |v: &Value| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64));
        for (k, v) in m {
            match k.as_str() {
                "type" => n.ty = v.as_str().unwrap_or_default().to_string(),
                "nullable" => n.nullable = v.as_bool().unwrap_or(false),
                "format" => n.raw_format = v.as_str().unwrap_or_default().to_string(),
                "x-kubernetes-int-or-string" => n.int_or_string = v.as_bool().unwrap_or(false),
                "x-kubernetes-preserve-unknown-fields" => {
                    n.preserve_unknown_fields = v.as_bool().unwrap_or(false)
                }
                "x-kubernetes-embedded-resource" => {
                    n.embedded_resource = v.as_bool().unwrap_or(false)
                }
                "exclusiveMaximum" => n.exclusive_maximum = v.as_bool().unwrap_or(false),
                "exclusiveMinimum" => n.exclusive_minimum = v.as_bool().unwrap_or(false),
                "uniqueItems" => n.unique_items = v.as_bool().unwrap_or(false),
                "maximum" => n.maximum = v.as_f64(),
                "minimum" => n.minimum = v.as_f64(),
                "multipleOf" => n.multiple_of = v.as_f64(),
                "maxLength" => n.max_length = as_int(v),
                "minLength" => n.min_length = as_int(v),
                "maxItems" => n.max_items = as_int(v),
                "minItems" => n.min_items = as_int(v),
                "maxProperties" => n.max_properties = as_int(v),
                "minProperties" => n.min_properties = as_int(v),
                "default" => n.default = Some(v.clone()),
                "x-kubernetes-list-type" => n.list_type = v.as_str().map(str::to_string),
                "x-kubernetes-map-type" => n.map_type = v.as_str().map(str::to_string),
                "required" => {
                    if let Some(req) = v.as_array() {
                        n.required = req
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect();
                    }
                }
                "enum" => n.enum_values = v.as_array().cloned(),
                "x-kubernetes-list-map-keys" => {
                    if let Some(keys) = v.as_array() {
                        n.list_map_keys = keys
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect();
                    }
                }
                "pattern" => pattern = v.as_str(),
                "properties" => props = v.as_object(),
                "additionalProperties" => additional = Some(v),
                "items" => items = Some(v),
                "allOf" => combinators[0] = v.as_array(),
                "anyOf" => combinators[1] = v.as_array(),
                "oneOf" => combinators[2] = v.as_array(),
                "not" => not = Some(v),
                "x-kubernetes-validations" => rules = v.as_array(),
                _ => {}
            }
        }
        if n.int_or_string {
            n.types = vec!["integer".into(), "string".into()];
        } else if !n.ty.is_empty() {
            n.types = vec![n.ty.clone()];
        }
        // `StripUnsupportedFormatsPostProcess`: formats apiextensions does not know are ignored.
        if !n.raw_format.is_empty() {
            let single = if n.types.len() == 1 {
                n.types[0].as_str()
            } else {
                ""
            };
            let kept = match single {
                "" | "string" => Format::parse(&n.raw_format).is_some(),
                "integer" => n.raw_format == "int32" || n.raw_format == "int64",
                "number" => n.raw_format == "float" || n.raw_format == "double",
                _ => false,
            };
            if kept {
                n.format = Some(n.raw_format.clone());
                n.string_format = Format::parse(&n.raw_format);
            }
        }
        if let Some(p) = pattern
            && !p.is_empty()
        {
            match compile_go_regex(p) {
                Ok(re) => n.pattern = Some((p.to_string(), re)),
                Err(e) => errs.push(FieldError::invalid_str(
                    path::child(at, "pattern"),
                    p,
                    format!(
                        "must be a valid regular expression, but isn't: {}",
                        regex_error_text(&e)
                    ),
                )),
            }
        }
        if let Some(props) = props {
            let props_at = path::child(at, "properties");
            for (k, v) in props {
                let child_at = path::key(&props_at, k);
                n.properties.insert(
                    k.clone(),
                    Self::compile_inner(v, &child_at, errs, depth + 1),
                );
            }
        }
        match additional {
            Some(Value::Bool(b)) => n.additional = Some(Additional::Allows(*b)),
            Some(v @ Value::Object(_)) => {
                let child_at = path::child(at, "additionalProperties");
                n.additional = Some(Additional::Schema(Box::new(Self::compile_inner(
                    v,
                    &child_at,
                    errs,
                    depth + 1,
                ))));
            }
            _ => {}
        }
        if let Some(items) = items.filter(|v| v.is_object()) {
            n.items = Some(Box::new(Self::compile_inner(
                items,
                &path::child(at, "items"),
                errs,
                depth + 1,
            )));
        }
        for ((key, list), arr) in [
            ("allOf", &mut n.all_of),
            ("anyOf", &mut n.any_of),
            ("oneOf", &mut n.one_of),
        ]
        .into_iter()
        .zip(combinators)
        {
            if let Some(arr) = arr {
                for (i, v) in arr.iter().enumerate() {
                    let child_at = path::index(&path::child(at, key), i);
                    list.push(Self::compile_inner(v, &child_at, errs, depth + 1));
                }
            }
        }
        if let Some(not) = not.filter(|v| v.is_object()) {
            n.not = Some(Box::new(Self::compile_inner(
                not,
                &path::child(at, "not"),
                errs,
                depth + 1,
            )));
        }
        if let Some(rules) = rules {
            n.rules = crate::cel::compile_rules(
                rules,
                &n,
                depth == 0 || n.embedded_resource,
                &path::child(at, "x-kubernetes-validations"),
                errs,
            );
        }
        let children = n
            .properties
            .values()
            .chain(n.items.as_deref())
            .chain(match &n.additional {
                Some(Additional::Schema(s)) => Some(s.as_ref()),
                _ => None,
            })
            .fold((false, false, false), |acc, c| {
                (
                    acc.0 || c.has_rules,
                    acc.1 || c.has_list_types,
                    acc.2 || c.has_embedded,
                )
            });
        n.has_rules = !n.rules.is_empty() || children.0;
        n.has_list_types =
            matches!(n.list_type.as_deref(), Some("set") | Some("map")) || children.1;
        n.has_embedded = n.embedded_resource || children.2;
        n
    }

    /// The schema of a property key: `properties[k]`, else the `additionalProperties` schema.
    pub fn field_schema(&self, k: &str) -> Option<&Node> {
        self.properties.get(k).or(match &self.additional {
            Some(Additional::Schema(s)) => Some(s.as_ref()),
            _ => None,
        })
    }

    /// The `additionalProperties` schema, if any.
    pub fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s.as_ref()),
            _ => None,
        }
    }
}

/// The text of a regex compile error, on one line like Go's `regexp` errors.
fn regex_error_text(e: &regex::Error) -> String {
    let s = e.to_string();
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_regex_classes_are_ascii() {
        let re = compile_go_regex(r"^\d+$").expect("compiles");
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"), "Arabic digits are not \\d in RE2");
        let re = compile_go_regex(r"^[\w-]+$").expect("compiles");
        assert!(re.is_match("a-b_c9"));
        assert!(!re.is_match("é"));
        let re = compile_go_regex(r"^[^\s]+\b").expect("compiles");
        assert!(re.is_match("abc"));
        let re = compile_go_regex(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").expect("compiles");
        assert!(re.is_match("my-name"));
        assert!(compile_go_regex("[").is_err());
    }
}
