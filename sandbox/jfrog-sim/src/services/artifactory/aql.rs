//! Artifactory Query Language (AQL), the `items` domain, as JFrog's REST API documents it
//! ("Artifactory Query Language", "AQL Execution", "Properties Criteria", "Display Specific
//! Fields", "Display Limits and Pagination"):
//!
//! `POST /artifactory/api/search/aql` takes the query as text (any content type; JFrog
//! documents `text/plain`) and answers `{"results": [...], "range": {"start_pos", "end_pos",
//! "total"[, "limit"]}}`.
//!
//! - `items.find(<criteria>[, <criteria>...])`: each criteria a JSON object whose members are
//!   ANDed (several objects too); `"$and": [...]` and `"$or": [...]` nest; a field's value is a
//!   plain value (`$eq`) or an object of operators (`$eq`, `$ne`, `$match`, `$nmatch` with `*`
//!   and `?` wildcards, `$gt`, `$gte`, `$lt`, `$lte`; several in one object are ANDed). Fields:
//!   `repo`, `path`, `name`, `type` (`file`, `folder`, `any`; files only when no criterion
//!   names `type`), `size`, `depth`, `created`, `modified`, `updated`, `created_by`,
//!   `modified_by`, `sha256`, `actual_sha1`, `actual_md5`, `original_sha1`, `original_md5`.
//!   Dates compare as instants (RFC 3339, or `YYYY-MM-DD[THH:MM:SS[.fff]]` read as UTC),
//!   `size` and `depth` as numbers, the rest as text.
//! - `"@key": value | {op: value}`: the item has a property `key` with a value that satisfies
//!   the operator (a property criterion joins the item's properties, so an item without the key
//!   never matches, `$ne` included).
//! - `.include("f", ...)`: item fields replace the default set (`repo`, `path`, `name`, `type`,
//!   `size`, `created`, `created_by`, `modified`, `modified_by`, `updated`); `"property"`,
//!   `"property.*"`, `"property.key"`, `"property.value"` add `"properties": [{"key", "value"}]`
//!   (one entry per value, absent on an item without properties); `"@key"` adds only that
//!   key's entries and keeps only items that have it. Only property fields: the default item
//!   fields plus the properties.
//! - `.sort({"$asc" | "$desc": [fields]})`, `.offset(n)`, `.limit(n)`, `.distinct(bool)`
//!   (default true: identical answered rows are answered once).
//!
//! What is modelled of the store (`storage.rs`, collection `artifacts`): an item's `path` is
//! its parent folder relative to the repository root, `"."` for an item in the root; the
//! repository's root folder is the folder item with path `"."` and name `"."` (depth 0; the
//! store creates it with the first deploy into the repository or a storage read of the
//! root); folders have `size` 0 and no checksums (checksum members are left out of their
//! rows). Results come in repository, path, name order unless sorted. Only admins see
//! items; other callers (the simulator's permissions are binary: a non-admin has no read
//! permission) get an empty answer, as JFrog answers a user without read permission.

use std::cmp::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde_json::{Map, Value, json};

use super::storage::ITEMS;
use crate::auth::User;
use crate::errors::ApiError;
use crate::server::Shared;

/// `POST /artifactory/api/search/aql`.
pub(crate) async fn search(
    State(s): State<Arc<Shared>>,
    User(caller): User,
    body: Bytes,
) -> Result<Response, ApiError> {
    let text = std::str::from_utf8(&body)
        .map_err(|_| ApiError::bad_request("The AQL query is not UTF-8 text"))?;
    let query = parse(text).map_err(|e| ApiError::bad_request(e.message(text)))?;
    let rows: Vec<Row> = if caller.admin {
        s.collections
            .list_raw(ITEMS.name)
            .unwrap_or_default()
            .iter()
            .filter_map(Row::from_stored)
            .filter(|r| s.artifactory.repository_raw(&r.repo).is_some())
            .collect()
    } else {
        Vec::new()
    };
    Ok(axum::Json(query.run(rows)).into_response())
}

// ---------------------------------------------------------------------------------------
// Rows

/// One stored item as AQL's `items` domain sees it.
#[derive(Debug, Clone, Default)]
struct Row {
    repo: String,
    path: String,
    name: String,
    folder: bool,
    size: i64,
    depth: i64,
    created: Option<String>,
    created_by: Option<String>,
    modified: Option<String>,
    modified_by: Option<String>,
    updated: Option<String>,
    sha256: Option<String>,
    actual_sha1: Option<String>,
    actual_md5: Option<String>,
    original_sha1: Option<String>,
    original_md5: Option<String>,
    /// `(key, value)`, one per value, in key order.
    props: Vec<(String, String)>,
}

impl Row {
    /// A stored item (`repo`, `path` with a leading `/`, `folder`, ...).
    fn from_stored(v: &Value) -> Option<Row> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let sum = |group: &str, k: &str| {
            v.get(group)
                .and_then(|g| g.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let repo = text("repo")?;
        let full = text("path")?;
        let full = full.trim_matches('/');
        let folder = v.get("folder").and_then(Value::as_bool).unwrap_or(false);
        let (path, name, depth) = if full.is_empty() {
            (".".to_string(), ".".to_string(), 0)
        } else {
            let depth = full.split('/').count() as i64;
            match full.rsplit_once('/') {
                Some((p, n)) => (p.to_string(), n.to_string(), depth),
                None => (".".to_string(), full.to_string(), depth),
            }
        };
        let mut props: Vec<(String, String)> = Vec::new();
        if let Some(Value::Object(p)) = v.get("properties") {
            let mut keys: Vec<&String> = p.keys().collect();
            keys.sort();
            for k in keys {
                let vals: Vec<String> = match &p[k.as_str()] {
                    Value::Array(a) => a
                        .iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                        .collect(),
                    Value::String(x) => vec![x.clone()],
                    other => vec![other.to_string()],
                };
                // A key set without a value (`k=`) holds the empty value.
                if vals.is_empty() {
                    props.push((k.clone(), String::new()));
                }
                props.extend(vals.into_iter().map(|x| (k.clone(), x)));
            }
        }
        // Folders have no checksums.
        let pick = |x: Option<String>| x.filter(|_| !folder);
        Some(Row {
            repo,
            path,
            name,
            folder,
            size: if folder {
                0
            } else {
                v.get("size")
                    .and_then(|s| match s {
                        Value::String(t) => t.parse().ok(),
                        other => other.as_i64(),
                    })
                    .unwrap_or(0)
            },
            depth,
            created: text("created"),
            created_by: text("createdBy"),
            modified: text("lastModified"),
            modified_by: text("modifiedBy"),
            updated: text("lastUpdated").or_else(|| text("lastModified")),
            sha256: pick(sum("checksums", "sha256")),
            actual_sha1: pick(sum("checksums", "sha1")),
            actual_md5: pick(sum("checksums", "md5")),
            original_sha1: pick(sum("originalChecksums", "sha1")),
            original_md5: pick(sum("originalChecksums", "md5")),
            props,
        })
    }

    fn get(&self, f: Field) -> Option<Val> {
        let text = |s: &Option<String>| s.clone().map(Val::Str);
        let date = |s: &Option<String>| s.as_deref().map(|t| Val::Date(parse_date(t), t.into()));
        match f {
            Field::Repo => Some(Val::Str(self.repo.clone())),
            Field::Path => Some(Val::Str(self.path.clone())),
            Field::Name => Some(Val::Str(self.name.clone())),
            Field::Type => Some(Val::Str(if self.folder { "folder" } else { "file" }.into())),
            Field::Size => Some(Val::Num(self.size)),
            Field::Depth => Some(Val::Num(self.depth)),
            Field::Created => date(&self.created),
            Field::Modified => date(&self.modified),
            Field::Updated => date(&self.updated),
            Field::CreatedBy => text(&self.created_by),
            Field::ModifiedBy => text(&self.modified_by),
            Field::Sha256 => text(&self.sha256),
            Field::ActualSha1 => text(&self.actual_sha1),
            Field::ActualMd5 => text(&self.actual_md5),
            Field::OriginalSha1 => text(&self.original_sha1),
            Field::OriginalMd5 => text(&self.original_md5),
        }
    }
}

/// A row's value of a field.
#[derive(Debug, Clone)]
enum Val {
    Str(String),
    Num(i64),
    /// The instant (None when the stored text is no date) and the stored text.
    Date(Option<DateTime<Utc>>, String),
}

impl Val {
    fn text(&self) -> String {
        match self {
            Val::Str(s) | Val::Date(_, s) => s.clone(),
            Val::Num(n) => n.to_string(),
        }
    }

    fn json(&self) -> Value {
        match self {
            Val::Str(s) | Val::Date(_, s) => json!(s),
            Val::Num(n) => json!(n),
        }
    }

    fn cmp(&self, other: &Val) -> Ordering {
        match (self, other) {
            (Val::Num(a), Val::Num(b)) => a.cmp(b),
            (Val::Date(Some(a), _), Val::Date(Some(b), _)) => a.cmp(b),
            _ => self.text().cmp(&other.text()),
        }
    }
}

/// RFC 3339, or a date and time without zone (UTC), or a date (midnight UTC).
fn parse_date(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.with_timezone(&Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(d.and_utc());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc())
}

// ---------------------------------------------------------------------------------------
// The query

/// An item field of the `items` domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Repo,
    Path,
    Name,
    Type,
    Size,
    Depth,
    Created,
    CreatedBy,
    Modified,
    ModifiedBy,
    Updated,
    Sha256,
    ActualSha1,
    ActualMd5,
    OriginalSha1,
    OriginalMd5,
}

/// The fields answered when `.include` names no item field, in JFrog's order.
const DEFAULT_FIELDS: [Field; 10] = [
    Field::Repo,
    Field::Path,
    Field::Name,
    Field::Type,
    Field::Size,
    Field::Created,
    Field::CreatedBy,
    Field::Modified,
    Field::ModifiedBy,
    Field::Updated,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Number,
    Date,
}

impl Field {
    fn parse(name: &str) -> Option<Field> {
        let name = name.strip_prefix("item.").unwrap_or(name);
        Some(match name {
            "repo" => Field::Repo,
            "path" => Field::Path,
            "name" => Field::Name,
            "type" => Field::Type,
            "size" => Field::Size,
            "depth" => Field::Depth,
            "created" => Field::Created,
            "created_by" => Field::CreatedBy,
            "modified" => Field::Modified,
            "modified_by" => Field::ModifiedBy,
            "updated" => Field::Updated,
            "sha256" => Field::Sha256,
            "actual_sha1" => Field::ActualSha1,
            "actual_md5" => Field::ActualMd5,
            "original_sha1" => Field::OriginalSha1,
            "original_md5" => Field::OriginalMd5,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Field::Repo => "repo",
            Field::Path => "path",
            Field::Name => "name",
            Field::Type => "type",
            Field::Size => "size",
            Field::Depth => "depth",
            Field::Created => "created",
            Field::CreatedBy => "created_by",
            Field::Modified => "modified",
            Field::ModifiedBy => "modified_by",
            Field::Updated => "updated",
            Field::Sha256 => "sha256",
            Field::ActualSha1 => "actual_sha1",
            Field::ActualMd5 => "actual_md5",
            Field::OriginalSha1 => "original_sha1",
            Field::OriginalMd5 => "original_md5",
        }
    }

    fn kind(self) -> Kind {
        match self {
            Field::Size | Field::Depth => Kind::Number,
            Field::Created | Field::Modified | Field::Updated => Kind::Date,
            _ => Kind::Text,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Match,
    NMatch,
    Gt,
    Gte,
    Lt,
    Lte,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "$eq" => Op::Eq,
            "$ne" => Op::Ne,
            "$match" => Op::Match,
            "$nmatch" => Op::NMatch,
            "$gt" => Op::Gt,
            "$gte" => Op::Gte,
            "$lt" => Op::Lt,
            "$lte" => Op::Lte,
            _ => return None,
        })
    }

    /// Whether `have` (a row's value) satisfies `op want`.
    fn test(self, have: &Val, want: &Val) -> bool {
        match self {
            Op::Match => glob(&want.text(), &have.text()),
            Op::NMatch => !glob(&want.text(), &have.text()),
            Op::Eq => have.cmp(want) == Ordering::Equal,
            Op::Ne => have.cmp(want) != Ordering::Equal,
            Op::Gt => have.cmp(want) == Ordering::Greater,
            Op::Gte => have.cmp(want) != Ordering::Less,
            Op::Lt => have.cmp(want) == Ordering::Less,
            Op::Lte => have.cmp(want) != Ordering::Greater,
        }
    }
}

/// AQL's wildcards: `*` any run of characters, `?` one character; case-sensitive.
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// A search criterion.
#[derive(Debug, Clone)]
enum Crit {
    All(Vec<Crit>),
    Any(Vec<Crit>),
    Field(Field, Op, Val),
    /// The item's type is anything (`"type": "any"`).
    AnyType,
    Prop(String, Op, Val),
}

impl Crit {
    fn test(&self, r: &Row) -> bool {
        match self {
            Crit::All(cs) => cs.iter().all(|c| c.test(r)),
            Crit::Any(cs) => cs.iter().any(|c| c.test(r)),
            Crit::AnyType => true,
            Crit::Field(f, op, want) => r.get(*f).is_some_and(|have| op.test(&have, want)),
            Crit::Prop(k, op, want) => r
                .props
                .iter()
                .any(|(pk, pv)| pk == k && op.test(&Val::Str(pv.clone()), want)),
        }
    }

    fn names_type(&self) -> bool {
        match self {
            Crit::All(cs) | Crit::Any(cs) => cs.iter().any(Crit::names_type),
            Crit::Field(Field::Type, ..) | Crit::AnyType => true,
            _ => false,
        }
    }
}

/// Which properties an answer carries.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Props {
    None,
    All,
    /// Only these keys; items without any of them are left out.
    Keys(Vec<String>),
}

/// A parsed `items` query.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    criteria: Crit,
    fields: Vec<Field>,
    props: Props,
    sort: Option<(bool, Vec<Field>)>,
    offset: usize,
    limit: Option<usize>,
    distinct: bool,
}

impl Query {
    /// The answer over `rows`: filter, order, project, distinct, offset, limit.
    fn run(&self, mut rows: Vec<Row>) -> Value {
        rows.retain(|r| self.criteria.test(r));
        if let Props::Keys(keys) = &self.props {
            rows.retain(|r| r.props.iter().any(|(k, _)| keys.contains(k)));
        }
        rows.sort_by(|a, b| {
            (&a.repo, &a.path, &a.name, a.folder).cmp(&(&b.repo, &b.path, &b.name, b.folder))
        });
        if let Some((asc, fields)) = &self.sort {
            rows.sort_by(|a, b| {
                let mut o = Ordering::Equal;
                for f in fields {
                    o = match (a.get(*f), b.get(*f)) {
                        (Some(x), Some(y)) => x.cmp(&y),
                        (None, Some(_)) => Ordering::Less,
                        (Some(_), None) => Ordering::Greater,
                        (None, None) => Ordering::Equal,
                    };
                    if o != Ordering::Equal {
                        break;
                    }
                }
                if *asc { o } else { o.reverse() }
            });
        }
        let fields: &[Field] = if self.fields.is_empty() {
            &DEFAULT_FIELDS
        } else {
            &self.fields
        };
        let mut results: Vec<Value> = Vec::new();
        for r in &rows {
            let mut m = Map::new();
            for f in fields {
                if let Some(v) = r.get(*f) {
                    m.insert(f.name().into(), v.json());
                }
            }
            let props: Vec<Value> = r
                .props
                .iter()
                .filter(|(k, _)| match &self.props {
                    Props::None => false,
                    Props::All => true,
                    Props::Keys(keys) => keys.contains(k),
                })
                .map(|(k, v)| json!({"key": k, "value": v}))
                .collect();
            if !props.is_empty() {
                m.insert("properties".into(), Value::Array(props));
            }
            let row = Value::Object(m);
            if !(self.distinct && results.contains(&row)) {
                results.push(row);
            }
        }
        let results: Vec<Value> = results
            .into_iter()
            .skip(self.offset)
            .take(self.limit.unwrap_or(usize::MAX))
            .collect();
        let mut range = json!({
            "start_pos": self.offset,
            "end_pos": self.offset + results.len(),
            "total": results.len(),
        });
        if let Some(l) = self.limit {
            range["limit"] = json!(l);
        }
        json!({"results": results, "range": range})
    }
}

// ---------------------------------------------------------------------------------------
// Parsing

/// A parse failure at a character position of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    at: usize,
    what: String,
}

impl ParseError {
    /// Artifactory's parse failure message: the query, then the text from the failure on.
    fn message(&self, query: &str) -> String {
        let near: String = query.chars().skip(self.at).take(40).collect();
        let q = query.trim();
        format!(
            "Failed to parse query: {q}, it looks like there is syntax error near the following sub-query: {} ({})",
            near.trim(),
            self.what
        )
    }
}

type Res<T> = Result<T, ParseError>;

/// The query's JSON values (objects keep their members in order, duplicates too).
#[derive(Debug, Clone, PartialEq)]
enum J {
    Str(String),
    Num(String),
    Bool(bool),
    Null,
    Arr(Vec<(usize, J)>),
    Obj(Vec<(usize, String, J)>),
}

struct P {
    c: Vec<char>,
    i: usize,
}

impl P {
    fn new(src: &str) -> P {
        P {
            c: src.chars().collect(),
            i: 0,
        }
    }

    fn err<T>(&self, what: impl Into<String>) -> Res<T> {
        Err(ParseError {
            at: self.i,
            what: what.into(),
        })
    }

    fn ws(&mut self) {
        while self.i < self.c.len() && self.c[self.i].is_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.c.get(self.i).copied()
    }

    fn eat(&mut self, ch: char) -> bool {
        if self.peek() == Some(ch) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, ch: char) -> Res<()> {
        if self.eat(ch) {
            Ok(())
        } else {
            self.err(format!("expected '{ch}'"))
        }
    }

    fn ident(&mut self) -> Res<String> {
        self.ws();
        let start = self.i;
        while self.i < self.c.len()
            && (self.c[self.i].is_ascii_alphanumeric() || self.c[self.i] == '_')
        {
            self.i += 1;
        }
        if start == self.i {
            return self.err("expected a name");
        }
        Ok(self.c[start..self.i].iter().collect())
    }

    fn value(&mut self) -> Res<J> {
        match self.peek() {
            Some('"') => self.string().map(J::Str),
            Some('{') => {
                self.i += 1;
                let mut members = Vec::new();
                if self.eat('}') {
                    return Ok(J::Obj(members));
                }
                loop {
                    self.ws();
                    let at = self.i;
                    if self.peek() != Some('"') {
                        return self.err("expected a quoted member name");
                    }
                    let k = self.string()?;
                    self.expect(':')?;
                    let v = self.value()?;
                    members.push((at, k, v));
                    if self.eat(',') {
                        continue;
                    }
                    self.expect('}')?;
                    return Ok(J::Obj(members));
                }
            }
            Some('[') => {
                self.i += 1;
                let mut items = Vec::new();
                if self.eat(']') {
                    return Ok(J::Arr(items));
                }
                loop {
                    self.ws();
                    let at = self.i;
                    items.push((at, self.value()?));
                    if self.eat(',') {
                        continue;
                    }
                    self.expect(']')?;
                    return Ok(J::Arr(items));
                }
            }
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let start = self.i;
                self.i += 1;
                while self.i < self.c.len()
                    && (self.c[self.i].is_ascii_digit()
                        || matches!(self.c[self.i], '.' | 'e' | 'E' | '+' | '-'))
                {
                    self.i += 1;
                }
                let n: String = self.c[start..self.i].iter().collect();
                if n.parse::<f64>().is_err() {
                    self.i = start;
                    return self.err("invalid number");
                }
                Ok(J::Num(n))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                match self.ident()?.as_str() {
                    "true" => Ok(J::Bool(true)),
                    "false" => Ok(J::Bool(false)),
                    "null" => Ok(J::Null),
                    _ => {
                        self.i = start;
                        self.err("expected a value")
                    }
                }
            }
            _ => self.err("expected a value"),
        }
    }

    /// A JSON string (the opening quote next), with JSON's escapes.
    fn string(&mut self) -> Res<String> {
        self.ws();
        let start = self.i;
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.c.get(self.i) else {
                self.i = start;
                return self.err("unterminated string");
            };
            self.i += 1;
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let Some(&e) = self.c.get(self.i) else {
                        return self.err("unterminated escape");
                    };
                    self.i += 1;
                    match e {
                        '"' | '\\' | '/' => out.push(e),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => {
                            let hex: String = self.c.iter().skip(self.i).take(4).collect();
                            let Ok(code) = u32::from_str_radix(&hex, 16) else {
                                return self.err("invalid \\u escape");
                            };
                            self.i += 4;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => {
                            self.i -= 2;
                            return self.err("invalid escape");
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    /// A non-negative integer argument.
    fn count(&mut self) -> Res<usize> {
        self.ws();
        let at = self.i;
        match self.value()? {
            J::Num(n) => n.parse::<usize>().or_else(|_| {
                self.i = at;
                self.err("expected a non-negative integer")
            }),
            _ => {
                self.i = at;
                self.err("expected a non-negative integer")
            }
        }
    }
}

fn fail<T>(at: usize, what: impl Into<String>) -> Res<T> {
    Err(ParseError {
        at,
        what: what.into(),
    })
}

/// A criteria object: its members ANDed.
fn crit_object(at: usize, v: &J) -> Res<Crit> {
    let J::Obj(members) = v else {
        return fail(at, "expected a criteria object");
    };
    members
        .iter()
        .map(|(at, k, v)| crit_member(*at, k, v))
        .collect::<Res<Vec<_>>>()
        .map(Crit::All)
}

fn crit_member(at: usize, key: &str, v: &J) -> Res<Crit> {
    match key {
        "$and" | "$or" => {
            let parts = match v {
                J::Arr(items) if !items.is_empty() => items
                    .iter()
                    .map(|(at, x)| crit_object(*at, x))
                    .collect::<Res<Vec<_>>>()?,
                // `{"$or": {"a": 1, "b": 2}}`: each member one operand.
                J::Obj(members) if !members.is_empty() => members
                    .iter()
                    .map(|(at, k, x)| crit_member(*at, k, x))
                    .collect::<Res<Vec<_>>>()?,
                _ => return fail(at, format!("{key} needs a non-empty array of criteria")),
            };
            Ok(if key == "$and" {
                Crit::All(parts)
            } else {
                Crit::Any(parts)
            })
        }
        k if k.starts_with('@') => {
            let prop = k[1..].to_string();
            if prop.is_empty() {
                return fail(at, "a property criterion needs a key");
            }
            comparisons(at, v, |op, want| {
                Ok(Crit::Prop(prop.clone(), op, text_value(at, want)?))
            })
        }
        k => {
            let Some(field) = Field::parse(k) else {
                return fail(at, format!("unknown field '{k}' of the items domain"));
            };
            comparisons(at, v, |op, want| field_crit(at, field, op, want))
        }
    }
}

/// `value` (`$eq`) or `{op: value, ...}` (ANDed).
fn comparisons(at: usize, v: &J, mut one: impl FnMut(Op, &J) -> Res<Crit>) -> Res<Crit> {
    match v {
        J::Obj(ops) => {
            if ops.is_empty() {
                return fail(at, "expected at least one operator");
            }
            let mut all = Vec::new();
            for (at, o, want) in ops {
                let Some(op) = Op::parse(o) else {
                    return fail(*at, format!("unknown operator '{o}'"));
                };
                all.push(one(op, want)?);
            }
            Ok(if all.len() == 1 {
                all.remove(0)
            } else {
                Crit::All(all)
            })
        }
        J::Arr(_) => fail(at, "expected a value or an object of operators"),
        plain => one(Op::Eq, plain),
    }
}

fn text_value(at: usize, v: &J) -> Res<Val> {
    match v {
        J::Str(s) | J::Num(s) => Ok(Val::Str(s.clone())),
        J::Bool(b) => Ok(Val::Str(b.to_string())),
        _ => fail(at, "expected a string or number"),
    }
}

fn field_crit(at: usize, field: Field, op: Op, v: &J) -> Res<Crit> {
    let text = text_value(at, v)?;
    if matches!(op, Op::Match | Op::NMatch) {
        return Ok(Crit::Field(field, op, text));
    }
    let raw = text.text();
    Ok(match field.kind() {
        Kind::Text if field == Field::Type => match raw.as_str() {
            "any" if op == Op::Eq => Crit::AnyType,
            "any" if op == Op::Ne => Crit::Any(vec![]),
            "file" | "folder" | "any" => Crit::Field(field, op, text),
            other => {
                return fail(
                    at,
                    format!("invalid item type '{other}' (file, folder, any)"),
                );
            }
        },
        Kind::Text => Crit::Field(field, op, text),
        Kind::Number => match raw.parse::<i64>() {
            Ok(n) => Crit::Field(field, op, Val::Num(n)),
            Err(_) => return fail(at, format!("'{raw}' is not a number")),
        },
        Kind::Date => match parse_date(&raw) {
            Some(d) => Crit::Field(field, op, Val::Date(Some(d), raw)),
            None => return fail(at, format!("'{raw}' is not a date")),
        },
    })
}

/// Parses an AQL query of the `items` domain.
pub(crate) fn parse(src: &str) -> Res<Query> {
    let mut p = P::new(src);
    p.ws();
    let at = p.i;
    let domain = p.ident()?;
    if domain != "items" {
        return fail(
            at,
            format!("the simulator answers the items domain only, not '{domain}'"),
        );
    }
    p.expect('.')?;
    let at = p.i;
    if p.ident()? != "find" {
        return fail(at, "expected find");
    }
    p.expect('(')?;
    let mut parts = Vec::new();
    if !p.eat(')') {
        loop {
            p.ws();
            let at = p.i;
            let v = p.value()?;
            parts.push(crit_object(at, &v)?);
            if p.eat(',') {
                continue;
            }
            p.expect(')')?;
            break;
        }
    }
    let mut criteria = Crit::All(parts);
    if !criteria.names_type() {
        criteria = Crit::All(vec![
            criteria,
            Crit::Field(Field::Type, Op::Eq, Val::Str("file".into())),
        ]);
    }
    let mut q = Query {
        criteria,
        fields: Vec::new(),
        props: Props::None,
        sort: None,
        offset: 0,
        limit: None,
        distinct: true,
    };
    let mut seen: Vec<String> = Vec::new();
    while p.eat('.') {
        let at = p.i;
        let name = p.ident()?;
        if seen.contains(&name) {
            return fail(at, format!("{name} given twice"));
        }
        seen.push(name.clone());
        p.expect('(')?;
        match name.as_str() {
            "include" => include(&mut p, &mut q)?,
            "sort" => {
                p.ws();
                let at = p.i;
                let v = p.value()?;
                q.sort = Some(sort(at, &v)?);
                p.expect(')')?;
            }
            "offset" => {
                q.offset = p.count()?;
                p.expect(')')?;
            }
            "limit" => {
                q.limit = Some(p.count()?);
                p.expect(')')?;
            }
            "distinct" => {
                p.ws();
                let at = p.i;
                q.distinct = match p.value()? {
                    J::Bool(b) => b,
                    _ => return fail(at, "expected true or false"),
                };
                p.expect(')')?;
            }
            other => return fail(at, format!("unknown element '{other}'")),
        }
    }
    p.eat(';');
    if p.peek().is_some() {
        return p.err("unexpected text after the query");
    }
    Ok(q)
}

fn include(p: &mut P, q: &mut Query) -> Res<()> {
    if p.eat(')') {
        return Ok(());
    }
    let mut keys = Vec::new();
    loop {
        p.ws();
        let at = p.i;
        let name = match p.value()? {
            J::Str(s) => s,
            _ => return fail(at, "expected a quoted field name"),
        };
        match name.as_str() {
            "property" | "property.*" | "property.key" | "property.value" => q.props = Props::All,
            k if k.starts_with('@') && k.len() > 1 => keys.push(k[1..].to_string()),
            f => match Field::parse(f) {
                Some(f) => {
                    if !q.fields.contains(&f) {
                        q.fields.push(f);
                    }
                }
                None => return fail(at, format!("unknown or unmodelled field '{f}'")),
            },
        }
        if p.eat(',') {
            continue;
        }
        p.expect(')')?;
        break;
    }
    if q.props != Props::All && !keys.is_empty() {
        q.props = Props::Keys(keys);
    }
    Ok(())
}

fn sort(at: usize, v: &J) -> Res<(bool, Vec<Field>)> {
    let J::Obj(members) = v else {
        return fail(at, "expected {\"$asc\": [...]} or {\"$desc\": [...]}");
    };
    let [(at, dir, J::Arr(names))] = members.as_slice() else {
        return fail(at, "expected {\"$asc\": [...]} or {\"$desc\": [...]}");
    };
    let asc = match dir.as_str() {
        "$asc" => true,
        "$desc" => false,
        _ => return fail(*at, "expected $asc or $desc"),
    };
    let mut fields = Vec::new();
    for (at, n) in names {
        match n {
            J::Str(s) => match Field::parse(s) {
                Some(f) => fields.push(f),
                None => return fail(*at, format!("cannot sort by '{s}'")),
            },
            _ => return fail(*at, "expected a quoted field name"),
        }
    }
    if fields.is_empty() {
        return fail(*at, "expected at least one field to sort by");
    }
    Ok((asc, fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(repo: &str, path: &str, folder: bool, props: Value) -> Row {
        let mut v = json!({"repo": repo, "path": path, "folder": folder,
            "created": "2024-01-02T03:04:05.000Z", "createdBy": "admin",
            "lastModified": "2024-01-02T03:04:05.000Z", "modifiedBy": "admin",
            "lastUpdated": "2024-01-02T03:04:05.000Z", "properties": props});
        if !folder {
            v["size"] = json!(path.len().to_string());
            v["checksums"] = json!({"sha1": format!("sha1-{path}"), "md5": "m", "sha256": "s"});
            v["originalChecksums"] = v["checksums"].clone();
        }
        Row::from_stored(&v).unwrap()
    }

    fn store() -> Vec<Row> {
        vec![
            row("r1", "/", true, json!({})),
            row("r1", "/top.txt", false, json!({"build.name": ["x"]})),
            row("r1", "/a", true, json!({"team": ["ci"]})),
            row(
                "r1",
                "/a/b.jar",
                false,
                json!({"build.name": ["y", "x"], "q": []}),
            ),
            row("r2", "/a/c.jar", false, json!({})),
        ]
    }

    fn names(q: &str) -> Vec<String> {
        let v = parse(q)
            .unwrap_or_else(|e| panic!("{}", e.message(q)))
            .run(store());
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}:{}/{}",
                    r["repo"].as_str().unwrap(),
                    r["path"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn rows_split_paths_as_aql_answers_them() {
        let rows = store();
        let split: Vec<(&str, &str, i64)> = rows
            .iter()
            .map(|r| (r.path.as_str(), r.name.as_str(), r.depth))
            .collect();
        assert_eq!(
            split,
            vec![
                (".", ".", 0),
                (".", "top.txt", 1),
                (".", "a", 1),
                ("a", "b.jar", 2),
                ("a", "c.jar", 2)
            ]
        );
        assert_eq!(rows[2].size, 0);
        assert_eq!(rows[2].actual_sha1, None);
        assert_eq!(
            rows[3].props,
            vec![
                ("build.name".to_string(), "y".to_string()),
                ("build.name".to_string(), "x".to_string()),
                ("q".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn files_only_unless_type_is_named() {
        assert_eq!(
            names("items.find()"),
            ["r1:./top.txt", "r1:a/b.jar", "r2:a/c.jar"]
        );
        assert_eq!(
            names(r#"items.find({"type": "folder"})"#),
            ["r1:./.", "r1:./a"]
        );
        assert_eq!(
            names(r#"items.find({"type": "any", "repo": "r2"})"#),
            ["r2:a/c.jar"]
        );
        assert_eq!(names(r#"items.find({"type": {"$eq": "any"}})"#).len(), 5);
    }

    #[test]
    fn or_nested_in_and_with_escapes_and_newlines() {
        let q = "items.find(\n  {\"$and\": [\n    {\"repo\" : {\"$match\": \"r?\"}},\n    {\"$or\": [\n      {\"path\": \".\", \"name\": \"top.txt\"},\n      {\"path\": \"a\", \"name\": {\"$eq\": \"c.jar\"}},\n      {\"name\": \"no \\\"such\\\" file\"}\n    ]}\n  ]}\n)\n";
        assert_eq!(names(q), ["r1:./top.txt", "r2:a/c.jar"]);
    }

    #[test]
    fn operators_on_text_numbers_and_dates() {
        assert_eq!(
            names(r#"items.find({"name": {"$match": "*.jar"}})"#),
            ["r1:a/b.jar", "r2:a/c.jar"]
        );
        assert_eq!(
            names(r#"items.find({"name": {"$nmatch": "*.jar"}})"#),
            ["r1:./top.txt"]
        );
        assert_eq!(
            names(r#"items.find({"repo": {"$ne": "r1"}})"#),
            ["r2:a/c.jar"]
        );
        // Sizes: "/top.txt" 8, "/a/b.jar" 8, "/a/c.jar" 8 — use depth instead.
        assert_eq!(
            names(r#"items.find({"depth": {"$gt": 1}})"#),
            ["r1:a/b.jar", "r2:a/c.jar"]
        );
        assert_eq!(
            names(r#"items.find({"size": {"$gte": "8", "$lt": 9}})"#).len(),
            3
        );
        assert_eq!(
            names(r#"items.find({"created": {"$gt": "2024-01-01"}})"#).len(),
            3
        );
        assert!(names(r#"items.find({"created": {"$lt": "2024-01-02T03:04:05Z"}})"#).is_empty());
        assert_eq!(
            names(r#"items.find({"modified": {"$lte": "2024-01-02T03:04:05.000Z"}})"#).len(),
            3
        );
        assert_eq!(
            names(r#"items.find({"actual_sha1": "sha1-/a/b.jar"})"#),
            ["r1:a/b.jar"]
        );
    }

    #[test]
    fn property_criteria_join_the_properties() {
        assert_eq!(
            names(r#"items.find({"@build.name": "x"})"#),
            ["r1:./top.txt", "r1:a/b.jar"]
        );
        assert_eq!(
            names(r#"items.find({"@build.name": {"$eq": "y"}})"#),
            ["r1:a/b.jar"]
        );
        // `$ne`: an item with the key and another value; no key, no match.
        assert_eq!(
            names(r#"items.find({"@build.name": {"$ne": "x"}})"#),
            ["r1:a/b.jar"]
        );
        assert_eq!(
            names(r#"items.find({"@team": {"$match": "c*"}, "type": "folder"})"#),
            ["r1:./a"]
        );
    }

    #[test]
    fn include_chooses_fields_and_properties() {
        let q = parse(r#"items.find({"repo": "r1"}).include("name", "property")"#).unwrap();
        let v = q.run(store());
        assert_eq!(
            v["results"],
            json!([
                // The folder `a` is no file; the root's file (path ".") comes first.
                {"name": "top.txt", "properties": [{"key": "build.name", "value": "x"}]},
                {"name": "b.jar", "properties": [
                    {"key": "build.name", "value": "y"},
                    {"key": "build.name", "value": "x"},
                    {"key": "q", "value": ""}]}
            ])
        );
        // Only property fields: the default item fields as well; no properties, no member.
        let v = parse(r#"items.find({"repo": "r2"}).include("property.*")"#)
            .unwrap()
            .run(store());
        let r = &v["results"][0];
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "repo",
                "path",
                "name",
                "type",
                "size",
                "created",
                "created_by",
                "modified",
                "modified_by",
                "updated"
            ]
        );
        assert_eq!(r["size"], json!(8));
        // `@key`: that key's values, and only items having it.
        let v = parse(r#"items.find().include("name", "@build.name")"#)
            .unwrap()
            .run(store());
        assert_eq!(v["results"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["results"][1],
            json!({"name": "b.jar", "properties": [
                {"key": "build.name", "value": "y"},
                {"key": "build.name", "value": "x"}]})
        );
    }

    #[test]
    fn sort_offset_limit_and_range() {
        let v =
            parse(r#"items.find().include("name").sort({"$desc": ["name"]}).offset(1).limit(1)"#)
                .unwrap()
                .run(store());
        assert_eq!(v["results"], json!([{"name": "c.jar"}]));
        assert_eq!(
            v["range"],
            json!({"start_pos": 1, "end_pos": 2, "total": 1, "limit": 1})
        );
        let v = parse("items.find()").unwrap().run(store());
        assert_eq!(
            v["range"],
            json!({"start_pos": 0, "end_pos": 3, "total": 3})
        );
        // Distinct rows by default; `.distinct(false)` answers each item.
        let v = parse(r#"items.find({"name": {"$match": "*.jar"}}).include("path")"#)
            .unwrap()
            .run(store());
        assert_eq!(v["results"], json!([{"path": "a"}]));
        let v =
            parse(r#"items.find({"name": {"$match": "*.jar"}}).include("path").distinct(false)"#)
                .unwrap()
                .run(store());
        assert_eq!(v["results"], json!([{"path": "a"}, {"path": "a"}]));
    }

    #[test]
    fn glob_wildcards() {
        assert!(glob("*.jar", "a.jar"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "abbc"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("A*", "abc"));
    }

    #[test]
    fn syntax_errors_name_the_place() {
        for bad in [
            "items.find({\"repo\": \"x\"}",
            "items.find({\"repo\": \"x})",
            "items.find({repo: \"x\"})",
            "items.find({\"nope\": \"x\"})",
            "items.find({\"repo\": {\"$like\": \"x\"}})",
            "items.find().limit(-1)",
            "items.find().include(\"stat\")",
            "items.find({\"created\": {\"$gt\": \"yesterday\"}})",
            "items.find({\"$or\": []})",
            "items.find() trailing",
            "builds.find()",
        ] {
            let e = parse(bad).expect_err(bad);
            let m = e.message(bad);
            assert!(m.starts_with("Failed to parse query: "), "{m}");
            assert!(
                m.contains("syntax error near the following sub-query"),
                "{m}"
            );
        }
        let e = parse("items.find({\"nope\": 1})").unwrap_err();
        assert_eq!(e.at, 12);
    }
}
