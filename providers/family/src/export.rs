//! Adopting a live platform: every object the platform's list calls show, as a manifest that
//! adopts it without changing it.
//!
//! Generic over the declared Kinds: each list call of the selected Kinds is read once (a
//! handful of requests for any number of objects); each object goes to the one Kind whose
//! identity members (and constant members, such as a webhook handler's type) it carries;
//! the manifest holds exactly the parameters whose value differs from what the Kind sends
//! when the parameter is unset (its declared default, else empty), so that applying it
//! changes nothing: the exporter checks that with the adapter's own comparison and reports
//! any field that would still differ.
//!
//! - Names: the identifier when it is a valid Kubernetes name, else a lower-cased form with
//!   a digest suffix, with `crossplane.io/external-name` carrying the identifier (always
//!   set for identifiers not derived from the name).
//! - Secrets are never read: a write-only secret JFrog shows as set (in an encrypted or
//!   masked form) gets a reference to a Secret of a predictable name and key in
//!   `initProvider` (used only should the object have to be created again, never compared,
//!   so adoption sends nothing and a missing Secret does not block it), and the list of
//!   Secrets to fill. With `--observe-only` the manifests observe only and carry no
//!   reference. Secrets inside list elements are referenced only where the schema requires
//!   them (they are then needed before adoption, and sent once); others are listed.
//! - Objects the platform creates itself (the family's [`Hooks::platform_owned`]) are
//!   skipped and listed; so are objects no declared Kind matches, or more than one.
//! - Kinds listed per parent (a project's environments, roles and members; an OIDC
//!   configuration's identity mappings: [`crate::rest::Rest::parent_list`]) are exported by
//!   listing the parents (the projects list, read once for every such Kind, or not at all
//!   when the parent Kind is exported too) and then each parent's list: one request per
//!   parent and Kind. Their manifests name the parent (`projectKey`), and their names are
//!   `<parent>-<name>` (unique across parents), the external name carrying the identifier.
//!   A Kind whose parent is optional ([`crate::rest::QueryParent`], lifecycle stages) is
//!   listed once without it (the platform's own objects, named as they are) and then per
//!   parent. A singleton listed so ([`crate::rest::ListShape::One`], a lifecycle) is one
//!   object per scope, named after its Kind (`lifecycle`, `<parent>-lifecycle`); a parent
//!   member its answer leaves out is the parent's.
//! - Output is sorted and stable: the same platform exports byte-identical files.
//!
//! [`Hooks::platform_owned`]: crate::hooks::Hooks::platform_owned

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};

use jfrog_client::JfrogClient;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::address::Address;
use crate::decl::{Field, Id, Norm, Ty};
use crate::diff::{self, DiffContext};
use crate::examples::{kebab, to_yaml};
use crate::kind::BoundKind;
use crate::rest::{Cx, ListCall, ListShape};
use crate::wire::{self, empty_of, get_path};

/// The annotation that carries the JFrog identifier.
pub const EXTERNAL_NAME: &str = "crossplane.io/external-name";

/// The namespace of the Secrets legacy (cluster-scoped) manifests reference.
pub const LEGACY_SECRET_NAMESPACE: &str = "crossplane-system";

/// Which scope the manifests are written for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Namespaced Kinds (`<group>.<provider>.m.crossplane.io`) in this namespace.
    Namespaced(String),
    /// Legacy cluster-scoped Kinds (`<group>.<provider>.crossplane.io`).
    Legacy,
}

/// What to export and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The scope.
    pub scope: Scope,
    /// The ProviderConfig the manifests use: `NAME` (a ClusterProviderConfig for namespaced
    /// manifests) or `ProviderConfig/NAME` (a namespaced ProviderConfig).
    pub provider_config: String,
    /// `managementPolicies: ["Observe"]` and no Secret references.
    pub observe_only: bool,
    /// Groups or Kinds to export (case-insensitive); empty: all.
    pub only: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scope: Scope::Namespaced("default".into()),
            provider_config: "default".into(),
            observe_only: false,
            only: Vec::new(),
        }
    }
}

/// A list call that failed. Never carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The request failed.
    #[error("cannot list {path}: {source}")]
    List {
        /// The list path.
        path: &'static str,
        /// Why.
        source: jfrog_client::Error,
    },
    /// The answer has an unexpected shape.
    #[error("cannot decode the answer of {path}: expected {expected}")]
    Decode {
        /// The list path.
        path: &'static str,
        /// What was expected.
        expected: &'static str,
    },
}

/// One exported object.
#[derive(Debug, Clone)]
pub struct Object {
    /// The Kind's group.
    pub group: &'static str,
    /// The Kind.
    pub kind: &'static str,
    /// `metadata.name`.
    pub name: String,
    /// The JFrog identifier.
    pub key: String,
    /// The manifest.
    pub manifest: Value,
}

/// An object not exported, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Skipped {
    /// The Kind, or the list it was found in when no Kind matched.
    pub what: String,
    /// The JFrog identifier.
    pub key: String,
    /// Why.
    pub reason: String,
}

/// A Secret value the admin fills in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SecretToFill {
    /// The Secret's namespace (the manifests' namespace, or the legacy Secret namespace).
    pub namespace: String,
    /// The Secret's name.
    pub name: String,
    /// The key (empty for a whole-Secret reference: every key is an entry).
    pub key: String,
    /// `Kind/name` of the manifest.
    pub object: String,
    /// The field (`passwordSecretRef`, `customHttpHeaders[0].valueSecretRef`).
    pub field: String,
    /// Whether the manifest references it (else: listed only).
    pub referenced: bool,
    /// Whether it is needed before the object can be adopted.
    pub needed_for_adoption: bool,
}

/// What an export found.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// The exported objects, sorted by group, Kind and name.
    pub objects: Vec<Object>,
    /// Objects not exported (no Kind, several Kinds, refused identifier...), sorted.
    pub skipped: Vec<Skipped>,
    /// Objects the platform creates itself, sorted.
    pub platform_owned: Vec<Skipped>,
    /// Secrets to fill, sorted.
    pub secrets: Vec<SecretToFill>,
    /// Objects of Kinds that were not selected (`--kinds`).
    pub not_selected: usize,
    /// Selected Kinds without a list call (not exportable), sorted.
    pub unlisted_kinds: Vec<&'static str>,
    /// Objects whose manifest would still change something in JFrog, with the fields.
    pub warnings: Vec<String>,
    /// JFrog requests sent.
    pub requests: u64,
}

/// Whether `kind` is selected by `only`.
fn selected(kind: &BoundKind, only: &[String]) -> bool {
    only.is_empty()
        || only.iter().any(|o| {
            o.eq_ignore_ascii_case(kind.decl.group) || o.eq_ignore_ascii_case(kind.decl.kind)
        })
}

/// Read every list call of the selected `kinds` and build the manifests. `progress` gets a
/// short line after each list call and every 100 objects.
pub async fn export(
    kinds: &[&BoundKind],
    client: &JfrogClient,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Export, ExportError> {
    let mut out = Export::default();
    // Kinds by list call, in declaration order: every Kind of a list a selected Kind uses
    // (an object goes to the Kind it matches among all of them, then counts only if that
    // Kind is selected).
    let mut lists: Vec<(ListCall, Vec<&BoundKind>)> = Vec::new();
    for k in kinds.iter().copied() {
        let list = k.rest.list().filter(|_| k.hooks.exportable(k));
        let Some(list) = list else {
            if selected(k, &opts.only) {
                out.unlisted_kinds.push(k.decl.kind);
            }
            continue;
        };
        match lists
            .iter_mut()
            .find(|(l, _)| l.path == list.path && l.service == list.service)
        {
            Some((_, ks)) => ks.push(k),
            None => lists.push((*list, vec![k])),
        }
    }
    lists.retain(|(_, ks)| ks.iter().any(|k| selected(k, &opts.only)));
    let total = lists.len();
    // The keys of each parent list (projects, OIDC configurations), read once for every
    // Kind inside such a parent.
    let mut parent_keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, (family_list, ks)) in lists.iter().enumerate() {
        // The Kinds of one list share its binding.
        let rest = ks[0].rest;
        let list = rest
            .list_on(&Cx::stateless(client))
            .await
            .map_err(|source| ExportError::List {
                path: family_list.path,
                source,
            })?
            .unwrap_or(*family_list);
        let list = &list;
        // A list per parent: the parents' list first, then each parent's.
        let query = rest.parent_query();
        let mut parents: Vec<Vec<String>> = match rest.parent_list() {
            Some(parent) if !rest.list_parents().is_empty() => {
                let label = format!("{} {}", parent.service.base_path(), parent.path);
                if !parent_keys.contains_key(&label) {
                    out.requests += 1;
                    let body = parent.request(client).send().await.map_err(|source| {
                        ExportError::List {
                            path: parent.path,
                            source,
                        }
                    })?;
                    let keys = sorted_keys(parent, &list_objects(parent, body.body())?);
                    parent_keys.insert(label.clone(), keys);
                }
                parent_keys[&label]
                    .iter()
                    .map(|k| vec![k.clone()])
                    .collect()
            }
            _ => vec![Vec::new()],
        };
        // An optional parent that is the only one: the platform's own list first. (After
        // parents filling the path, a release bundle name's, the parents' list names those:
        // the list without the optional parent, each name's.)
        if query.is_some() && !list.path.contains('{') && !parents.iter().any(Vec::is_empty) {
            parents.insert(0, Vec::new());
        }
        for parent in parents {
            let path = list.path_for(query, &parent);
            out.requests += 1;
            let answer = list.fetch(client, query, &parent).await;
            let body = match answer {
                Ok(b) => {
                    out.requests += u64::from(b.requests().saturating_sub(1));
                    b
                }
                // The parent was deleted while the export ran.
                Err(e) if e.is_not_found() && !parent.is_empty() => continue,
                Err(source) => {
                    return Err(ExportError::List {
                        path: list.path,
                        source,
                    });
                }
            };
            let objects = list_objects(
                list,
                body.body().ok_or(ExportError::Decode {
                    path: list.path,
                    expected: "every page of the list",
                })?,
            )?;
            // A list of the whole platform also serves as the parent list of the Kinds
            // inside its objects (the projects list for the roles of each project).
            if parent.is_empty() {
                parent_keys
                    .entry(format!("{} {}", list.service.base_path(), list.path))
                    .or_insert_with(|| sorted_keys(list, &objects));
            }
            progress(&format!(
                "list {}/{total} {path}: {} objects",
                i + 1,
                objects.len()
            ));
            let case_insensitive = ks.first().is_some_and(|k| k.rest.case_insensitive());
            // Kinds the family tells apart by more than the objects (replications).
            let chosen = match ks[0].hooks.export_kinds(client, ks[0], &objects).await {
                Ok(Some((chosen, asked))) => {
                    out.requests += asked;
                    Some(chosen)
                }
                Ok(None) => None,
                Err(source) => {
                    return Err(ExportError::List {
                        path: list.path,
                        source,
                    });
                }
            };
            // A key listed once per target is one object.
            let mut seen: BTreeSet<String> = BTreeSet::new();
            let mut names: BTreeMap<(&str, String), String> = BTreeMap::new();
            for (n, obj) in objects.iter().enumerate() {
                if n > 0 && n % 100 == 0 {
                    progress(&format!("{path}: {n}/{} objects", objects.len()));
                }
                let listed = list.key_of(obj);
                let skip = |reason: String| Skipped {
                    what: path.clone(),
                    key: listed.clone(),
                    reason,
                };
                if listed.is_empty() {
                    out.skipped
                        .push(skip(format!("no {} member", list.key_member)));
                    continue;
                }
                // Inside a parent: the object's own name, as its MR's external name.
                let key = if parent.is_empty() {
                    listed.clone()
                } else {
                    let parent: Vec<&str> = parent.iter().map(String::as_str).collect();
                    match rest.listed_address(&parent, &listed) {
                        Some(k) => k,
                        None => {
                            out.skipped
                                .push(skip("not an object of a declared Kind".to_string()));
                            continue;
                        }
                    }
                };
                if let Some(reason) = ks.iter().find_map(|k| k.hooks.platform_owned(&key, obj)) {
                    out.platform_owned.push(Skipped {
                        what: path.clone(),
                        key: key.clone(),
                        reason,
                    });
                    continue;
                }
                let chosen_kind = match &chosen {
                    None => None,
                    Some(chosen) => {
                        if !seen.insert(key.clone()) {
                            continue;
                        }
                        match chosen
                            .get(&key)
                            .and_then(|c| ks.iter().find(|k| k.decl.kind == *c))
                        {
                            Some(k) => Some(*k),
                            None => {
                                out.skipped
                                    .push(skip("no declared Kind holds it".to_string()));
                                continue;
                            }
                        }
                    }
                };
                // The binding that reads it: its chosen Kind's, else the list's.
                let rest = chosen_kind.map_or(rest, |k| k.rest);
                // A list that shows only which objects exist: read each for its details.
                let read;
                let obj = if rest.list_reads_each() {
                    out.requests += 1;
                    read = match rest
                        .read(&Cx::stateless(client), &Address::new(key.as_str()))
                        .await
                    {
                        Ok(v) => v,
                        Err(e) if e.is_not_found() => {
                            out.skipped
                                .push(skip("deleted while the export ran".to_string()));
                            continue;
                        }
                        Err(source) => {
                            return Err(ExportError::List {
                                path: list.path,
                                source,
                            });
                        }
                    };
                    &read
                } else {
                    obj
                };
                let matched = match chosen_kind {
                    Some(k) => vec![k],
                    None => best_match(ks, obj),
                };
                let kind = match matched.as_slice() {
                    [k, ..] if !selected(k, &opts.only) => {
                        out.not_selected += 1;
                        continue;
                    }
                    [k, ..] => *k,
                    [] => {
                        out.skipped.push(skip(format!(
                            "no declared Kind has {}",
                            describe_identity(ks, obj)
                        )));
                        continue;
                    }
                };
                let what = kind.decl.kind.to_string();
                if let Err(rule) = kind.check_key(&key) {
                    out.skipped.push(Skipped {
                        what,
                        key,
                        reason: format!("identifier refused: {rule}"),
                    });
                    continue;
                }
                let ctx = kind.hooks.diff_context(client, &key);
                let in_parent: Vec<(&str, &str)> = rest
                    .list_parents()
                    .iter()
                    .copied()
                    .zip(parent.iter().map(String::as_str))
                    .collect();
                // The parent's list answers for its objects: a parent member the answer
                // leaves out (a project's lifecycle) is the parent's.
                let with_parent;
                let obj = match in_parent_members(kind, &in_parent, obj) {
                    Some(v) => {
                        with_parent = v;
                        &with_parent
                    }
                    None => obj,
                };
                // As the adapter reads it (a watch's filters unfolded into its declared fields).
                let decoded = kind.hooks.decode(kind, obj);
                let mut one = object(
                    kind,
                    &key,
                    &in_parent,
                    decoded.as_ref().unwrap_or(obj),
                    &ctx,
                    opts,
                );
                // Two identifiers with one name (case variants of a case-sensitive key).
                let slot = (kind.decl.kind, one.object.name.clone());
                let folded = if case_insensitive {
                    key.to_ascii_lowercase()
                } else {
                    key.clone()
                };
                if let Some(other) = names.get(&slot) {
                    out.skipped.push(Skipped {
                        what,
                        key,
                        reason: format!("its name {} is taken by {other}", one.object.name),
                    });
                    continue;
                }
                names.insert(slot, folded);
                if let Err(rule) = kind.check_params(&one.object.manifest["spec"]["forProvider"]) {
                    out.skipped.push(Skipped {
                        what,
                        key,
                        reason: format!("its parameters are refused: {rule}"),
                    });
                    continue;
                }
                if !one.differs.is_empty() {
                    out.warnings.push(format!(
                        "{}/{} ({key}): adoption would update {}",
                        kind.decl.kind,
                        one.object.name,
                        one.differs.join(", ")
                    ));
                }
                out.secrets.append(&mut one.secrets);
                out.objects.push(one.object);
            }
        }
    }
    out.objects
        .sort_by(|a, b| (a.group, a.kind, &a.name).cmp(&(b.group, b.kind, &b.name)));
    out.skipped.sort();
    out.platform_owned.sort();
    out.secrets.sort();
    out.unlisted_kinds.sort();
    out.warnings.sort();
    Ok(out)
}

/// The keys of the objects of a list answer, sorted (the parents of a per-parent list).
fn sorted_keys(list: &ListCall, objects: &[Value]) -> Vec<String> {
    let mut keys: Vec<String> = objects
        .iter()
        .map(|o| list.key_of(o))
        .filter(|k| !k.is_empty())
        .collect();
    keys.sort();
    keys
}

/// The objects of a list answer; a grouped answer's group name goes into its member.
/// `obj` with the top-level wire members of its parent's fields that it lacks set to the
/// parent's values (`None`: it has them all).
fn in_parent_members(kind: &BoundKind, in_parent: &[(&str, &str)], obj: &Value) -> Option<Value> {
    let missing: Vec<(&str, &str)> = in_parent
        .iter()
        .filter_map(|(field, value)| {
            let wire = kind.params().find(|f| f.crd == *field)?.wire?;
            (!wire.contains('.') && obj.get(wire).is_none()).then_some((wire, *value))
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut v = obj.clone();
    let m = v.as_object_mut()?;
    for (wire, value) in missing {
        m.insert(wire.to_string(), json!(value));
    }
    Some(v)
}

fn list_objects(list: &ListCall, body: &[u8]) -> Result<Vec<Value>, ExportError> {
    let bad = |expected| ExportError::Decode {
        path: list.path,
        expected,
    };
    let v: Value = serde_json::from_slice(body).map_err(|_| bad("JSON"))?;
    let mut out = Vec::new();
    match (list.shape, v) {
        (ListShape::Paged(page), v) => {
            out = page
                .objects(&v)
                .ok_or_else(|| bad("a page holding every object"))?;
        }
        (ListShape::One, o @ Value::Object(_)) => out = vec![o],
        (ListShape::One, _) => return Err(bad("an object")),
        (_, Value::Array(a)) => out = a,
        (ListShape::Grouped(member), Value::Object(groups)) => {
            for (group, objs) in groups {
                let Value::Array(objs) = objs else {
                    return Err(bad("an object of arrays"));
                };
                for mut o in objs {
                    if let Some(m) = o.as_object_mut() {
                        m.entry(member)
                            .or_insert_with(|| Value::String(group.to_ascii_lowercase()));
                    }
                    out.push(o);
                }
            }
        }
        (
            ListShape::Wrapped(member) | ListShape::Pages(&crate::rest::Pages { member, .. }),
            Value::Object(mut o),
        ) => match o.remove(member) {
            Some(Value::Array(a)) => out = a,
            _ => return Err(bad("an object holding an array")),
        },
        (ListShape::Wrapped(_), _) => return Err(bad("an object holding an array or an array")),
        (ListShape::Pages(_), _) => return Err(bad("an object holding an array")),
        (ListShape::Grouped(_), _) => return Err(bad("an object of arrays or an array")),
        (ListShape::Array, _) => return Err(bad("an array")),
    }
    Ok(out)
}

/// The Kinds `obj` can be an object of, most specific first: its identity members match
/// (case-insensitively), no constant member (a handler's type), fixed body member (a
/// Docker API version) or the family's [`Hooks::lists_as`](crate::hooks::Hooks::lists_as)
/// says otherwise; among those, the Kinds whose fixed members the
/// object carries the most of. Equally specific Kinds (aliases declared alike, such as
/// `FederatedDockerRepository` and `FederatedDockerV2Repository`) stay in declaration
/// order, and the first is used.
fn best_match<'k>(kinds: &[&'k BoundKind], obj: &Value) -> Vec<&'k BoundKind> {
    let scored: Vec<(usize, &BoundKind)> = kinds
        .iter()
        .copied()
        .filter_map(|k| {
            let identity = k.decl.identity.iter().all(|(w, want)| {
                get_path(obj, w)
                    .and_then(Value::as_str)
                    .is_some_and(|got| got.eq_ignore_ascii_case(want))
            });
            if !identity || !constants_match(&k.fields, obj) || !k.hooks.lists_as(k, obj) {
                return None;
            }
            let mut score = 0;
            for (w, dv) in k.decl.fixed_body {
                match (get_path(obj, w), dv.to_json()) {
                    (Some(got), Some(want)) if diff::is_empty(Some(&want)) || *got == want => {
                        score += 1
                    }
                    (Some(got), Some(_)) if !diff::is_empty(Some(got)) => return None,
                    _ => {}
                }
            }
            Some((score, k))
        })
        .collect();
    let best = scored.iter().map(|(s, _)| *s).max().unwrap_or(0);
    scored
        .into_iter()
        .filter(|(s, _)| *s == best)
        .map(|(_, k)| k)
        .collect()
}

fn constants_match<F: Borrow<Field>>(fields: &[F], obj: &Value) -> bool {
    fields.iter().all(|f| {
        let f = f.borrow();
        let Some(wire) = f.wire else { return true };
        let Some(v) = get_path(obj, wire) else {
            return true;
        };
        if f.constant {
            return f
                .default
                .to_json()
                .is_none_or(|c| match (c.as_str(), v.as_str()) {
                    (Some(c), Some(v)) => c.eq_ignore_ascii_case(v),
                    _ => c == *v,
                });
        }
        match (f.ty.children(), v) {
            (Some(children), Value::Array(elems)) => {
                elems.iter().all(|e| constants_match(children, e))
            }
            (Some(children), o @ Value::Object(_)) => constants_match(children, o),
            _ => true,
        }
    })
}

/// The identity members of `obj` as the Kinds of its list declare them (`rclass=local,
/// packageType=foo`).
fn describe_identity(kinds: &[&BoundKind], obj: &Value) -> String {
    let members: BTreeSet<&str> = kinds
        .iter()
        .flat_map(|k| k.decl.identity.iter().map(|(w, _)| *w))
        .collect();
    let parts: Vec<String> = members
        .into_iter()
        .map(|w| {
            format!(
                "{w}={}",
                get_path(obj, w).and_then(Value::as_str).unwrap_or("")
            )
        })
        .collect();
    if parts.is_empty() {
        "this shape".into()
    } else {
        parts.join(", ")
    }
}

/// A valid Kubernetes object name for `key`: the key itself when it is one, else its
/// lower-cased form with other characters as `-` and a digest of the key appended.
pub fn object_name(key: &str) -> String {
    bounded_name(key, 253, 200)
}

/// [`object_name`] of at most `max` characters: `key` when it is a valid name that short,
/// else its first `base` characters made valid, with a digest of the key appended.
fn bounded_name(key: &str, max: usize, limit: usize) -> String {
    let valid = |s: &str| {
        !s.is_empty()
            && s.len() <= max
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && s.starts_with(|c: char| c.is_ascii_alphanumeric())
            && s.ends_with(|c: char| c.is_ascii_alphanumeric())
            && !s.contains("..")
    };
    if valid(key) {
        return key.to_string();
    }
    let mut base = String::new();
    for c in key.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            base.push(c);
        } else if !base.ends_with('-') {
            base.push('-');
        }
    }
    let mut base: String = base.trim_matches('-').chars().take(limit).collect();
    while base.ends_with('-') {
        base.pop();
    }
    let digest: String = Sha256::digest(key.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    if base.is_empty() {
        format!("x-{digest}")
    } else {
        format!("{base}-{digest}")
    }
}

/// One object's manifest, its Secrets and the fields adoption would still change.
struct One {
    object: Object,
    secrets: Vec<SecretToFill>,
    differs: Vec<String>,
}

/// Whether a gate boolean is on in the observed object (its value, else its default).
fn gate_on(kind: &BoundKind, observed: &Map<String, Value>, gate: &str) -> bool {
    match observed.get(gate).and_then(Value::as_bool) {
        Some(b) => b,
        None => kind
            .field(gate)
            .and_then(|g| g.default.to_json())
            .and_then(|d| d.as_bool())
            .unwrap_or(false),
    }
}

/// Sort the elements of sets (strings and objects) so the output does not depend on the
/// order JFrog answers them in.
fn canonical(f: &Field, v: &mut Value) {
    match (f.ty, v) {
        (Ty::Set, Value::Array(a)) => a.sort_by_key(|x| x.to_string()),
        (Ty::ObjSet(children), Value::Array(a)) => {
            for e in a.iter_mut() {
                prune_element(children, e);
            }
            a.sort_by_key(|x| x.to_string());
        }
        (Ty::ObjList(children) | Ty::Block(children), Value::Array(a)) => {
            for e in a.iter_mut() {
                prune_element(children, e);
            }
        }
        (Ty::Object(children), o @ Value::Object(_)) => prune_element(children, o),
        _ => {}
    }
}

/// Drop the children of a list element that equal what an unset child is compared as
/// (its default), and sort its sets.
fn prune_element(children: &[Field], elem: &mut Value) {
    let Value::Object(m) = elem else { return };
    for c in children {
        let Some(v) = m.get_mut(c.crd) else { continue };
        canonical(c, v);
        let unset_is = c.default.to_json();
        let drop = !c.required
            && match &unset_is {
                Some(d) => diff::equal(c, Some(d), Some(v), &DiffContext::default()),
                None => diff::is_empty(Some(v)) && !matches!(c.ty, Ty::Bool | Ty::Int),
            };
        if drop {
            m.remove(c.crd);
        }
    }
}

/// `parent`: the fields naming the parent of an object listed per parent, with their values
/// (set in `forProvider`, and the name made unique across parents).
fn object(
    kind: &BoundKind,
    key: &str,
    parent: &[(&str, &str)],
    body: &Value,
    ctx: &DiffContext,
    opts: &Options,
) -> One {
    let d = &kind.decl;
    let observed = wire::from_wire(kind, body);
    let id_fields: Vec<&str> = match d.id {
        Id::SpecField(f) => vec![f],
        Id::Composite(fs, _) => fs.to_vec(),
        _ => Vec::new(),
    };
    let in_project = !diff::is_empty(observed.get("projectKey"));
    let mut params = Map::new();
    for f in kind.params() {
        if f.wire.is_none() || f.sensitive || f.write_only {
            continue;
        }
        let v = observed.get(f.crd);
        if id_fields.contains(&f.crd) {
            if let Some(v) = v {
                params.insert(f.crd.to_string(), v.clone());
            }
            continue;
        }
        let gate = f.norm.gate().or(f.requires.map(|g| (g, true)));
        if gate.is_some_and(|(g, wanted)| gate_on(kind, &observed, g) != wanted) {
            continue;
        }
        if f.norm == Norm::WhenInProject && !in_project {
            continue;
        }
        let mut value = match v {
            Some(v) => v.clone(),
            // Not in the answer: what "nothing" is for the type, if it can be written.
            None => match (empty_of(&f.ty), f.ty) {
                (Some(e), _) => e,
                (None, Ty::Bool) => Value::Bool(false),
                _ => continue,
            },
        };
        let keep = if f.required {
            !diff::is_empty(Some(&value)) || v.is_some()
        } else if f.ignore_unset {
            // Not compared when unset: kept when it says more than the defaults, so the file
            // says what JFrog has.
            canonical(f, &mut value);
            let only_defaults = match f.ty {
                Ty::Block(_) => value
                    .as_array()
                    .is_some_and(|a| a.iter().all(|e| diff::is_empty(Some(e)))),
                Ty::Object(_) => value
                    .as_object()
                    .is_some_and(|o| o.values().all(|e| diff::is_empty(Some(e)))),
                _ => false,
            };
            !diff::is_empty(Some(&value)) && !only_defaults
        } else {
            let unset_is = f.default.to_json().or_else(|| empty_of(&f.ty));
            !diff::equal(f, unset_is.as_ref(), Some(&value), ctx)
        };
        if keep {
            // Sorted sets, and list elements without the children that equal their
            // defaults (compared as such), once the value is known to be needed.
            canonical(f, &mut value);
            params.insert(f.crd.to_string(), value);
        }
    }

    for (field, value) in parent {
        params.insert(field.to_string(), json!(value));
    }
    let name = match d.id {
        Id::Singleton(_) if parent.is_empty() => kebab(d.kind, ""),
        _ if !parent.is_empty() => {
            // Within one DNS label (63 characters): some API servers check each label.
            let mut n: String = parent.iter().map(|(_, v)| format!("{v}-")).collect();
            match d.id {
                // A parent's singleton (a project's lifecycle).
                Id::Singleton(_) => n.push_str(&kebab(d.kind, "")),
                _ => n.push_str(key),
            }
            bounded_name(&n, 63, 54)
        }
        _ => object_name(key),
    };
    let (api_version, namespace) = match &opts.scope {
        Scope::Namespaced(ns) => (
            format!("{}.{}.m.crossplane.io/v1alpha1", d.group, d.provider),
            Some(ns.clone()),
        ),
        Scope::Legacy => (
            format!("{}.{}.crossplane.io/v1alpha1", d.group, d.provider),
            None,
        ),
    };
    let secret_ns = namespace
        .clone()
        .unwrap_or_else(|| LEGACY_SECRET_NAMESPACE.to_string());
    let secret_name = format!("{}-{}", kebab(d.kind, ""), name)
        .chars()
        .take(253)
        .collect::<String>();
    let object_ref = format!("{}/{name}", d.kind);
    let mut secrets = Vec::new();
    let mut init = Map::new();
    let secret_ref = |key: Option<&str>| {
        let mut r = json!({"name": secret_name});
        if let Some(k) = key {
            r["key"] = json!(k);
        }
        if namespace.is_none() {
            r["namespace"] = json!(secret_ns);
        }
        r
    };
    // Top-level secrets JFrog shows as set, the required ones (a key pair's private key,
    // which JFrog never shows but the object cannot be without), and the one the Kind always
    // has unless its parameters say otherwise (a user's password, generated when not given,
    // never shown): one reference per wire member.
    let generated = kind
        .hooks
        .generated_secret(kind, &Value::Object(params.clone()));
    let mut wires_done = BTreeSet::new();
    for f in kind.params().filter(|f| f.sensitive) {
        let Some(w) = f.wire else { continue };
        let has_one = !diff::is_empty(get_path(body, w)) || f.required || generated == Some(w);
        if !has_one || !wires_done.insert(w) {
            continue;
        }
        let k = f.crd.trim_end_matches("SecretRef");
        let whole = matches!(f.ty, Ty::Map(_));
        if !opts.observe_only {
            init.insert(f.crd.to_string(), secret_ref((!whole).then_some(k)));
        }
        secrets.push(SecretToFill {
            namespace: secret_ns.clone(),
            name: secret_name.clone(),
            key: if whole { String::new() } else { k.to_string() },
            object: object_ref.clone(),
            field: f.crd.to_string(),
            referenced: !opts.observe_only,
            needed_for_adoption: false,
        });
    }
    // Secrets inside list elements.
    for f in kind.params() {
        let Some(children) = f.ty.children() else {
            continue;
        };
        let elems: &mut [Value] = match (f.ty, params.get_mut(f.crd)) {
            (Ty::Object(_), Some(o @ Value::Object(_))) => std::slice::from_mut(o),
            (_, Some(Value::Array(a))) => a,
            _ => continue,
        };
        let raw: Vec<Value> = match f.wire.and_then(|w| get_path(body, w)) {
            Some(Value::Array(a)) => a.clone(),
            Some(o @ Value::Object(_)) => vec![o.clone()],
            _ => Vec::new(),
        };
        for (i, elem) in elems.iter_mut().enumerate() {
            for c in children.iter().filter(|c| c.sensitive) {
                let shown = c
                    .wire
                    .and_then(|w| raw.get(i).and_then(|r| get_path(r, w)))
                    .is_some_and(|v| !diff::is_empty(Some(v)));
                if !shown && !c.required {
                    continue;
                }
                let field = if matches!(f.ty, Ty::Object(_)) {
                    format!("{}.{}", f.crd, c.crd)
                } else {
                    format!("{}[{i}].{}", f.crd, c.crd)
                };
                let k = format!("{}-{i}-{}", f.crd, c.crd.trim_end_matches("SecretRef"));
                let whole = matches!(c.ty, Ty::Map(_));
                let referenced = c.required && !opts.observe_only;
                if referenced && let Value::Object(m) = elem {
                    m.insert(c.crd.to_string(), secret_ref((!whole).then_some(&k)));
                }
                secrets.push(SecretToFill {
                    namespace: secret_ns.clone(),
                    name: secret_name.clone(),
                    key: if whole { String::new() } else { k },
                    object: object_ref.clone(),
                    field,
                    referenced,
                    needed_for_adoption: referenced,
                });
            }
        }
    }

    let mut metadata = json!({"name": name});
    if let Some(ns) = &namespace {
        metadata["namespace"] = json!(ns);
    }
    let annotate = match d.id {
        Id::Name => name != key,
        Id::Singleton(_) => false,
        _ => true,
    };
    if annotate {
        metadata["annotations"] = json!({ EXTERNAL_NAME: key });
    }
    let provider_config = match (&opts.scope, opts.provider_config.split_once('/')) {
        (Scope::Legacy, Some((_, n))) => json!({"name": n}),
        (Scope::Legacy, None) => json!({"name": opts.provider_config}),
        (Scope::Namespaced(_), Some((k, n))) => json!({"kind": k, "name": n}),
        (Scope::Namespaced(_), None) => {
            json!({"kind": "ClusterProviderConfig", "name": opts.provider_config})
        }
    };
    let mut spec = json!({
        "forProvider": Value::Object(params.clone()),
        "providerConfigRef": provider_config,
    });
    if opts.observe_only {
        spec["managementPolicies"] = json!(["Observe"]);
    }
    if !init.is_empty() {
        spec["initProvider"] = Value::Object(init.clone());
    }
    // The adapter's own comparison of this manifest with the object.
    let init_only: Vec<String> = init.keys().cloned().collect();
    let differs = if opts.observe_only {
        Vec::new()
    } else {
        diff::diff(kind, &Value::Object(params), &init_only, &observed, ctx)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    One {
        object: Object {
            group: d.group,
            kind: d.kind,
            name,
            key: key.to_string(),
            manifest: json!({
                "apiVersion": api_version,
                "kind": d.kind,
                "metadata": metadata,
                "spec": spec,
            }),
        },
        secrets,
        differs,
    }
}

/// The kustomization of a folder's resources.
fn kustomization(resources: &[String]) -> String {
    let mut s = String::from(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n",
    );
    for r in resources {
        s.push_str(&format!("  - {r}\n"));
    }
    s
}

impl Export {
    /// The files of this export under `<provider>/`: one manifest per object in
    /// `<provider>/<group>/<kind>_<name>.yaml`, a `kustomization.yaml` per group and one for
    /// the provider (none without objects), `secrets-to-fill.yaml` (Secrets with empty values; not in the
    /// kustomization) and `export-summary.txt`. Paths are relative, sorted.
    pub fn files(&self, provider: &str) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        let mut groups: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for o in &self.objects {
            let file = format!("{}_{}.yaml", kebab(o.kind, ""), o.name);
            files.insert(
                format!("{provider}/{}/{file}", o.group),
                to_yaml(&o.manifest),
            );
            groups.entry(o.group).or_default().push(file);
        }
        for (g, mut resources) in groups.clone() {
            resources.sort();
            files.insert(
                format!("{provider}/{g}/kustomization.yaml"),
                kustomization(&resources),
            );
        }
        let group_dirs: Vec<String> = groups.keys().map(|g| g.to_string()).collect();
        // A provider without objects has no kustomization (kustomize refuses one without
        // resources), so the top one leaves it out.
        if !group_dirs.is_empty() {
            files.insert(
                format!("{provider}/kustomization.yaml"),
                kustomization(&group_dirs),
            );
        }
        let mut by_secret: BTreeMap<(&str, &str), Vec<&SecretToFill>> = BTreeMap::new();
        for s in &self.secrets {
            by_secret
                .entry((&s.namespace, &s.name))
                .or_default()
                .push(s);
        }
        let mut secrets = String::from(
            "# Secrets the exported manifests reference or may need: fill in the values (never\n\
             # exported), then apply them yourself (not part of the kustomization).\n",
        );
        for ((ns, name), entries) in by_secret {
            let mut data = Map::new();
            for e in &entries {
                if !e.key.is_empty() {
                    data.insert(e.key.clone(), Value::String(String::new()));
                }
            }
            secrets.push_str("---\n");
            for e in &entries {
                let how = if !e.referenced {
                    "not referenced: add a reference to manage it"
                } else if e.needed_for_adoption {
                    "referenced, needed before adoption"
                } else {
                    "referenced in initProvider, used only to create the object again"
                };
                let key = if e.key.is_empty() {
                    "every key is an entry".to_string()
                } else {
                    format!("key {}", e.key)
                };
                secrets.push_str(&format!("# {} {} ({key}): {how}\n", e.object, e.field));
            }
            secrets.push_str(&to_yaml(&json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": ns},
                "type": "Opaque",
                "stringData": Value::Object(data),
            })));
        }
        files.insert(format!("{provider}/secrets-to-fill.yaml"), secrets);
        files.insert(format!("{provider}/export-summary.txt"), self.summary());
        files
    }

    /// Objects per Kind, what was skipped and why, the Secrets to fill and the warnings.
    pub fn summary(&self) -> String {
        let mut per_kind: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for o in &self.objects {
            *per_kind.entry((o.group, o.kind)).or_default() += 1;
        }
        let mut s = format!("exported {} objects\n", self.objects.len());
        for ((g, k), n) in &per_kind {
            s.push_str(&format!("  {g:<14} {k:<44} {n:>6}\n"));
        }
        if !self.platform_owned.is_empty() {
            s.push_str(&format!(
                "skipped {} objects the platform creates itself:\n",
                self.platform_owned.len()
            ));
            for x in &self.platform_owned {
                s.push_str(&format!("  {} {}: {}\n", x.what, x.key, x.reason));
            }
        }
        if !self.skipped.is_empty() {
            s.push_str(&format!("skipped {} objects:\n", self.skipped.len()));
            for x in &self.skipped {
                s.push_str(&format!("  {} {}: {}\n", x.what, x.key, x.reason));
            }
        }
        if self.not_selected > 0 {
            s.push_str(&format!(
                "skipped {} objects of Kinds not selected\n",
                self.not_selected
            ));
        }
        if !self.unlisted_kinds.is_empty() {
            s.push_str(&format!(
                "not exported (no list call, or not adoptable from one): {}\n",
                self.unlisted_kinds.join(", ")
            ));
        }
        if !self.secrets.is_empty() {
            let needed = self
                .secrets
                .iter()
                .filter(|x| x.needed_for_adoption)
                .count();
            s.push_str(&format!(
                "{} secret values to fill (secrets-to-fill.yaml), {needed} needed before adoption\n",
                self.secrets.len()
            ));
        }
        for w in &self.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        s
    }
}

/// A failed `export` command. Never carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The token file cannot be read or is empty.
    #[error("cannot read the token file {path}: {message}")]
    Token {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The client cannot be built.
    #[error("cannot build the JFrog client: {0}")]
    Client(jfrog_client::Error),
    /// A list call failed.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// A file cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// What `export` did.
#[derive(Debug)]
pub struct Report {
    /// The export.
    pub export: Export,
    /// Files written (changed or new) and removed.
    pub written: usize,
    /// Files removed (objects gone since the last export into the same folder).
    pub removed: usize,
    /// How long it took.
    pub elapsed: std::time::Duration,
}

/// Write `files` (relative paths) under `out`: unchanged files are not touched, manifests of
/// a previous export into the same provider folder that are no longer exported are removed,
/// and `out/kustomization.yaml` lists every provider folder there.
pub fn write_files(
    out: &std::path::Path,
    provider: &str,
    files: &BTreeMap<String, String>,
) -> Result<(usize, usize), RunError> {
    let werr = |p: &std::path::Path| {
        let path = p.display().to_string();
        move |source| RunError::Write { path, source }
    };
    let mut written = 0;
    let mut removed = 0;
    // Stale manifests of an earlier export (only .yaml files in this provider's folders).
    let root = out.join(provider);
    if let Ok(dirs) = std::fs::read_dir(&root) {
        for dir in dirs.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            for f in std::fs::read_dir(&dir).map_err(werr(&dir))?.flatten() {
                let p = f.path();
                let rel = p
                    .strip_prefix(out)
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                if p.extension().is_some_and(|x| x == "yaml") && !files.contains_key(&rel) {
                    std::fs::remove_file(&p).map_err(werr(&p))?;
                    removed += 1;
                }
            }
        }
    }
    for (rel, content) in files {
        let p = out.join(rel);
        if std::fs::read_to_string(&p).ok().as_deref() == Some(content.as_str()) {
            continue;
        }
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(werr(parent))?;
        }
        std::fs::write(&p, content).map_err(werr(&p))?;
        written += 1;
    }
    let mut providers: Vec<String> = std::fs::read_dir(out)
        .map_err(werr(out))?
        .flatten()
        .filter(|e| e.path().join("kustomization.yaml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    providers.sort();
    let top = out.join("kustomization.yaml");
    let content = kustomization(&providers);
    if std::fs::read_to_string(&top).ok().as_deref() != Some(content.as_str()) {
        std::fs::write(&top, content).map_err(werr(&top))?;
        written += 1;
    }
    Ok((written, removed))
}

/// The `<provider> export` command: list, build, write, and print the summary (stdout) with
/// a progress line on a terminal (stderr).
pub async fn run(
    provider: &provider_common::Provider,
    kinds: &[std::sync::Arc<crate::FamilyKind>],
    args: &provider_common::ExportArgs,
) -> Result<Report, RunError> {
    use std::io::{IsTerminal, Write};
    let started = std::time::Instant::now();
    let credentials = args
        .credentials()
        .map_err(|(path, message)| RunError::Token { path, message })?;
    let client = JfrogClient::builder(args.url.clone())
        .credentials(credentials)
        .user_agent(provider.user_agent())
        .build()
        .map_err(RunError::Client)?;
    let opts = Options {
        scope: if args.legacy {
            Scope::Legacy
        } else {
            Scope::Namespaced(args.namespace.clone().unwrap_or_else(|| "default".into()))
        },
        provider_config: args.provider_config.clone(),
        observe_only: args.observe_only,
        only: args.kinds.clone(),
    };
    let resolved: Vec<&BoundKind> = kinds.iter().map(|k| k.resolved().as_ref()).collect();
    let terminal = std::io::stderr().is_terminal();
    let mut progress = |line: &str| {
        if terminal {
            let mut e = std::io::stderr();
            let _ = write!(e, "\r\x1b[2K{}: {line}", provider.name);
            let _ = e.flush();
        }
    };
    let export = export(&resolved, &client, &opts, &mut progress).await?;
    if terminal {
        eprintln!();
    }
    let files = export.files(provider.short);
    let (written, removed) = write_files(&args.out, provider.short, &files)?;
    let report = Report {
        export,
        written,
        removed,
        elapsed: started.elapsed(),
    };
    print!("{}", report.export.summary());
    println!(
        "{}: {} objects in {} JFrog requests, {:.2}s; {} files written, {} removed, under {}",
        provider.name,
        report.export.objects.len(),
        report.export.requests,
        report.elapsed.as_secs_f64(),
        written,
        removed,
        args.out.join(provider.short).display()
    );
    Ok(report)
}

/// A provider's process entry point (`Provider::run_main_with_export`): the controllers of
/// the Kinds `kinds_with` registers, or `export` over `family_kinds`.
pub async fn run_main(
    provider: provider_common::Provider,
    kinds_with: impl FnOnce(
        &provider_common::Connections,
    ) -> Vec<std::sync::Arc<dyn provider_runtime::managed::KindRegistration>>,
    family_kinds: fn() -> Vec<std::sync::Arc<crate::FamilyKind>>,
    args: Vec<String>,
) -> anyhow::Result<()> {
    run_main_with_flags(
        provider,
        |connections, _: &provider_common::NoFlags| kinds_with(connections),
        family_kinds,
        args,
    )
    .await
}

/// [`run_main`] for a provider with flags of its own (`E`, see
/// `Provider::run_main_with_flags`), handed to `kinds_with`.
pub async fn run_main_with_flags<E>(
    provider: provider_common::Provider,
    kinds_with: impl FnOnce(
        &provider_common::Connections,
        &E,
    ) -> Vec<std::sync::Arc<dyn provider_runtime::managed::KindRegistration>>,
    family_kinds: fn() -> Vec<std::sync::Arc<crate::FamilyKind>>,
    args: Vec<String>,
) -> anyhow::Result<()>
where
    E: clap::Args + clap::FromArgMatches + Default,
{
    if args.get(1).map(String::as_str) == Some("preview") {
        let code = crate::preview::main(
            &provider,
            &family_kinds(),
            args.into_iter().skip(2).collect(),
        )
        .await;
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    provider
        .run_main_with_flags(
            kinds_with,
            |a| async move {
                run(&provider, &family_kinds(), &a).await?;
                Ok(())
            },
            args,
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::{Dv, KindDecl};
    use crate::hooks::NoHooks;
    use crate::kind::Kind;
    use crate::rest::{Call, Paths, Verb};
    use jfrog_client::Service;

    static REST: Paths = Paths {
        service: Service::Event,
        create: Call::new(Verb::Post, "/x"),
        read: Call::new(Verb::Get, "/x/{key}"),
        update: Call::new(Verb::Put, "/x/{key}"),
        delete: Call::new(Verb::Delete, "/x/{key}"),
        list: Some(ListCall {
            service: Service::Event,
            path: "/x",
            shape: ListShape::Grouped("class"),
            key_member: "key",
        }),
        case_insensitive: false,
    };
    const HANDLER_A: &[Field] = &[
        Field::new("url", "url", Some("url"), Ty::Str).required(),
        Field::new("secretSecretRef", "secret", Some("secret"), Ty::Str)
            .sensitive()
            .write_only(),
        Field::new("retries", "retries", Some("retries"), Ty::Int).default(Dv::Int(3)),
        Field::new("type", "type", Some("type"), Ty::Str).constant(Dv::Str("a")),
    ];
    const HANDLER_B: &[Field] = &[
        Field::new("url", "url", Some("url"), Ty::Str).required(),
        Field::new("type", "type", Some("type"), Ty::Str).constant(Dv::Str("b")),
    ];
    const FIELDS_A: &[Field] = &[
        Field::new("description", "description", Some("description"), Ty::Str).default(Dv::Str("")),
        Field::new("enabled", "enabled", Some("enabled"), Ty::Bool).default(Dv::Bool(true)),
        Field::new("tags", "tags", Some("tags"), Ty::Set),
        Field::new("layout", "layout", Some("layout"), Ty::Str).late_init(),
        Field::new("mirror", "mirror", Some("mirror"), Ty::Bool).default(Dv::Bool(false)),
        Field::new("mirrorUrl", "mirror_url", Some("mirrorUrl"), Ty::Str).requires("mirror"),
        Field::new("passwordSecretRef", "password", Some("password"), Ty::Str)
            .sensitive()
            .write_only(),
        Field::new(
            "handler",
            "handler",
            Some("handlers"),
            Ty::ObjSet(HANDLER_A),
        )
        .required(),
    ];
    const FIELDS_B: &[Field] = &[Field::new(
        "handler",
        "handler",
        Some("handlers"),
        Ty::ObjSet(HANDLER_B),
    )
    .required()];
    fn decl(kind: &'static str, fields: &'static [Field]) -> Kind {
        Kind {
            decl: KindDecl {
                provider: "p",
                group: "g",
                kind,
                description: "",
                id: Id::Name,
                id_wire: Some("key"),
                extends: &[],
                mixins: &[],
                fields,
                default_overrides: &[],
                enum_overrides: &[],
                identity: &[("class", "local")],
                fixed_body: &[],
                rules: &[],
            },
            rest: &REST,
            family: &NoHooks,
            hooks: &NoHooks,
        }
    }

    #[test]
    fn grouped_answers_give_their_group_to_each_object() {
        let body = br#"{"LOCAL": [{"key": "a"}], "remote": [{"key": "b", "class": "x"}]}"#;
        let objs = list_objects(REST.list.as_ref().expect("list"), body).expect("decodes");
        assert_eq!(objs[0]["class"], "local");
        assert_eq!(objs[1]["class"], "x");
        assert!(list_objects(REST.list.as_ref().expect("list"), b"\"no\"").is_err());
    }

    #[test]
    fn constants_inside_list_elements_tell_kinds_apart() {
        let a = decl("KindA", FIELDS_A).bound().expect("a");
        let b = decl("KindB", FIELDS_B).bound().expect("b");
        let obj =
            |t: &str| json!({"key": "k", "class": "LOCAL", "handlers": [{"url": "u", "type": t}]});
        let kinds = [&a, &b];
        assert_eq!(best_match(&kinds, &obj("a"))[0].decl.kind, "KindA");
        assert_eq!(best_match(&kinds, &obj("b"))[0].decl.kind, "KindB");
        assert!(best_match(&kinds, &json!({"class": "remote"})).is_empty());
    }

    #[test]
    fn parameters_are_what_differs_from_unset_and_secrets_are_references() {
        let a = decl("KindA", FIELDS_A).bound().expect("a");
        let body = json!({
            "key": "Team_A", "class": "local",
            "description": "", "enabled": false, "tags": ["z", "a"], "layout": "simple",
            "mirror": false, "mirrorUrl": "https://stale", "password": "JE2encrypted",
            "handlers": [{"url": "https://h", "retries": 3, "type": "a"}],
        });
        let one = object(
            &a,
            "Team_A",
            &[],
            &body,
            &DiffContext::default(),
            &Options::default(),
        );
        let m = &one.object.manifest;
        assert_eq!(
            m["spec"]["forProvider"],
            json!({
                // `enabled` differs from its default; `description` does not; the set is
                // sorted; the server-defaulted layout is kept; `mirrorUrl` is left out
                // while `mirror` is off; the handler's default retries are dropped.
                "enabled": false,
                "tags": ["a", "z"],
                "layout": "simple",
                "handler": [{"url": "https://h"}],
            })
        );
        assert_eq!(
            m["spec"]["initProvider"]["passwordSecretRef"],
            json!({"name": format!("kind-a-{}", one.object.name), "key": "password"})
        );
        assert_eq!(m["metadata"]["annotations"][EXTERNAL_NAME], "Team_A");
        assert!(!m.to_string().contains("JE2encrypted"));
        // A value that may be set only while its gate is on cannot be exported; adoption
        // would clear it, and the export says so.
        assert_eq!(one.differs, vec!["mirrorUrl".to_string()]);
        assert_eq!(one.secrets.len(), 1);
        assert!(one.secrets[0].referenced && !one.secrets[0].needed_for_adoption);
        // Observe-only: no reference, the policy set.
        let opts = Options {
            observe_only: true,
            ..Options::default()
        };
        let one = object(&a, "Team_A", &[], &body, &DiffContext::default(), &opts);
        assert!(one.object.manifest["spec"].get("initProvider").is_none());
        assert_eq!(
            one.object.manifest["spec"]["managementPolicies"],
            json!(["Observe"])
        );
        assert!(!one.secrets[0].referenced);
    }

    /// An object listed inside a parent names it in `forProvider`, and its name (unique
    /// across parents) stays within one DNS label; the external name is its own key.
    #[test]
    fn an_object_inside_a_parent_names_it() {
        let a = decl("KindA", FIELDS_A).bound().expect("a");
        let body = json!({"key": "dev", "class": "local"});
        let opts = Options::default();
        let one = object(
            &a,
            "dev",
            &[("projectKey", "team")],
            &body,
            &DiffContext::default(),
            &opts,
        );
        let m = &one.object.manifest;
        assert_eq!(one.object.name, "team-dev");
        assert_eq!(m["spec"]["forProvider"]["projectKey"], "team");
        assert_eq!(m["metadata"]["annotations"][EXTERNAL_NAME], "dev");
        let long = "example_oidc_identity_mapping_with_a_long_name_1";
        let one = object(
            &a,
            long,
            &[("providerName", "example-oidc-configuration")],
            &body,
            &DiffContext::default(),
            &opts,
        );
        assert!(one.object.name.len() <= 63, "{}", one.object.name);
        assert!(
            one.object
                .name
                .starts_with("example-oidc-configuration-example-oidc")
        );
        assert_eq!(one.object.key, long);
        // Another parent, another name.
        let other = object(
            &a,
            long,
            &[("providerName", "other")],
            &body,
            &DiffContext::default(),
            &opts,
        );
        assert_ne!(other.object.name, one.object.name);
    }

    /// A provider with nothing to export writes no kustomization (kustomize refuses one
    /// without resources), so the top kustomization, which lists the provider folders that
    /// have one, stays valid.
    #[test]
    fn an_empty_export_has_no_kustomization() {
        let files = Export::default().files("project");
        assert!(
            !files.contains_key("project/kustomization.yaml"),
            "{files:?}"
        );
        assert!(files.keys().all(|f| f.starts_with("project/")));
    }
}
