//! The vocabulary of the repository rules (`rules.rs`, written by hand from JFrog's sources)
//! and their resolution into one effective member list per class and package type, with the
//! server-side defaults Artifactory fills in.
//!
//! A package type's effective members are its parts in order (class base, then shared
//! groups), then its own members; a later member replaces an earlier one with the same wire
//! name. Defaults come from, in increasing precedence: `SERVER_DEFAULTS` (what Artifactory
//! answers for members the sources give no default), the member defaults, the package type's
//! layout (`repoLayoutRef`), its `overrides`, and its `fixed` members (constants such as
//! `dockerApiVersion`).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::rules::KINDS;

/// Repository class (`rclass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RClass {
    Local,
    Remote,
    Virtual,
    Federated,
}

impl RClass {
    /// All classes in the order Artifactory lists them.
    pub const ALL: [RClass; 4] = [
        RClass::Local,
        RClass::Remote,
        RClass::Virtual,
        RClass::Federated,
    ];

    /// The wire value of `rclass` (lower case).
    pub fn as_str(self) -> &'static str {
        match self {
            RClass::Local => "local",
            RClass::Remote => "remote",
            RClass::Virtual => "virtual",
            RClass::Federated => "federated",
        }
    }

    /// Parses `rclass` / the list filter `type`, case-insensitively.
    pub fn parse(s: &str) -> Option<RClass> {
        match s.to_ascii_lowercase().as_str() {
            "local" => Some(RClass::Local),
            "remote" => Some(RClass::Remote),
            "virtual" => Some(RClass::Virtual),
            "federated" => Some(RClass::Federated),
            _ => None,
        }
    }

    /// The upper-case name used by the list endpoint (`type`) and the configurations groups.
    pub fn upper(self) -> &'static str {
        match self {
            RClass::Local => "LOCAL",
            RClass::Remote => "REMOTE",
            RClass::Virtual => "VIRTUAL",
            RClass::Federated => "FEDERATED",
        }
    }

    /// Maximum key length (JFrog's repository naming rules: 58 for remote, 64 otherwise).
    pub fn max_key_len(self, package_type: &str) -> usize {
        match self {
            RClass::Remote => 58,
            RClass::Local | RClass::Federated if is_container_type(package_type) => 63,
            _ => 64,
        }
    }
}

/// Docker-like package types: keys must be lower case without underscores, and local and
/// federated keys are limited to 63 characters.
pub fn is_container_type(package_type: &str) -> bool {
    matches!(package_type, "docker" | "oci" | "helmoci")
}

/// JSON type of a field, as checked on writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum T {
    Str,
    Bool,
    Int,
    StrList,
    StrSet,
    Object,
    ObjList,
}

impl T {
    /// Whether `v` has this type (`null` is accepted everywhere and means "default").
    pub fn accepts(self, v: &Value) -> bool {
        match (self, v) {
            (_, Value::Null) => true,
            (T::Str, Value::String(_)) => true,
            (T::Bool, Value::Bool(_)) => true,
            (T::Int, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (T::StrList | T::StrSet, Value::Array(a)) => a.iter().all(Value::is_string),
            (T::Object, Value::Object(_)) => true,
            (T::ObjList, Value::Array(a)) => a.iter().all(Value::is_object),
            _ => false,
        }
    }

    /// Name used in error messages.
    pub fn describe(self) -> &'static str {
        match self {
            T::Str => "a string",
            T::Bool => "a boolean",
            T::Int => "an integer",
            T::StrList | T::StrSet => "a list of strings",
            T::Object => "an object",
            T::ObjList => "a list of objects",
        }
    }
}

/// A default value (const-constructible).
#[derive(Debug, Clone, Copy)]
pub enum D {
    None,
    Str(&'static str),
    Bool(bool),
    Int(i64),
    Strs(&'static [&'static str]),
    /// A JSON literal (nested objects).
    Json(&'static str),
}

impl D {
    /// The JSON value, or `None` when there is no default.
    pub fn to_value(self) -> Option<Value> {
        Some(match self {
            D::None => return None,
            D::Str(s) => Value::String(s.to_owned()),
            D::Bool(b) => Value::Bool(b),
            D::Int(i) => Value::from(i),
            D::Strs(v) => Value::Array(v.iter().map(|s| Value::String((*s).to_owned())).collect()),
            D::Json(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        })
    }
}

/// One field of a Kind.
#[derive(Debug, Clone, Copy)]
pub struct F {
    pub wire: &'static str,
    pub ty: T,
    pub default: D,
    pub required: bool,
    pub write_only: bool,
}

impl F {
    pub const fn new(wire: &'static str, ty: T, default: D) -> F {
        F {
            wire,
            ty,
            default,
            required: false,
            write_only: false,
        }
    }
    pub const fn req(mut self) -> F {
        self.required = true;
        self
    }
    pub const fn wo(mut self) -> F {
        self.write_only = true;
        self
    }
}

/// One package type of one class (Docker and Terraform local and federated have two
/// variants each, told apart by `dockerApiVersion` / `terraformType`).
#[derive(Debug)]
pub struct KindSpec {
    pub rclass: RClass,
    pub package_type: &'static str,
    /// The default `repoLayoutRef`.
    pub layout: &'static str,
    pub parts: &'static [&'static [F]],
    pub own: &'static [F],
    pub fixed: &'static [(&'static str, D)],
    pub overrides: &'static [(&'static str, D)],
}

impl KindSpec {
    pub const fn fixed(mut self, fixed: &'static [(&'static str, D)]) -> KindSpec {
        self.fixed = fixed;
        self
    }
    pub const fn overrides(mut self, overrides: &'static [(&'static str, D)]) -> KindSpec {
        self.overrides = overrides;
        self
    }
}

/// Defaults Artifactory fills in for members the sources of `rules.rs` give no default (the
/// Terraform provider leaves them to the server). Unverified against a JFrog page: each is
/// the value a repository created through the UI shows (false / empty / the documented
/// option default). Applied only to members the package type has, per class (`None` = every
/// class).
const SERVER_DEFAULTS: &[(Option<RClass>, &str, D)] = &[
    (None, "description", D::Str("")),
    (None, "notes", D::Str("")),
    (None, "excludesPattern", D::Str("")),
    (None, "propertySets", D::Strs(&[])),
    (None, "archiveBrowsingEnabled", D::Bool(false)),
    (None, "downloadRedirect", D::Bool(false)),
    (None, "forceMavenAuthentication", D::Bool(false)),
    (
        None,
        "pomRepositoryReferencesCleanupPolicy",
        D::Str("discard_active_reference"),
    ),
    (None, "suppressPomConsistencyChecks", D::Bool(false)),
    (None, "enableTokenAuthentication", D::Bool(false)),
    (None, "forceNonDuplicateChart", D::Bool(false)),
    (None, "forceMetadataNameVersion", D::Bool(false)),
    (None, "cargoAnonymousAccess", D::Bool(false)),
    (None, "blockPushingSchema1", D::Bool(true)),
    (None, "dockerTagRetention", D::Int(1)),
    (None, "maxUniqueTags", D::Int(0)),
    (
        Some(RClass::Virtual),
        "optionalIndexCompressionFormats",
        D::Strs(&["bz2"]),
    ),
    (
        Some(RClass::Federated),
        "optionalIndexCompressionFormats",
        D::Strs(&["bz2"]),
    ),
    (
        Some(RClass::Virtual),
        "externalDependenciesPatterns",
        D::Strs(&["**"]),
    ),
    (
        Some(RClass::Virtual),
        "externalDependenciesRemoteRepo",
        D::Str(""),
    ),
    (Some(RClass::Virtual), "repositories", D::Strs(&[])),
    (
        Some(RClass::Virtual),
        "virtualRetrievalCachePeriodSecs",
        D::Int(7200),
    ),
];

/// Members whose defaults are not filled from the table because the server derives them
/// (project assignment, virtual members, federation members, secrets).
const NOT_DEFAULTED: &[&str] = &["projectKey", "environments", "members", "password"];

/// A Kind resolved to its effective fields and the complete default document.
#[derive(Debug)]
pub struct Resolved {
    pub spec: &'static KindSpec,
    /// Effective fields by wire name.
    pub fields: HashMap<&'static str, F>,
    /// Every field with a default, in declaration order, fixed members included.
    pub defaults: Map<String, Value>,
}

impl Resolved {
    fn new(spec: &'static KindSpec) -> Resolved {
        let mut order: Vec<&'static str> = Vec::new();
        let mut fields: HashMap<&'static str, F> = HashMap::new();
        for part in spec.parts.iter().copied().chain(std::iter::once(spec.own)) {
            for f in part {
                if fields.insert(f.wire, *f).is_none() {
                    order.push(f.wire);
                }
            }
        }
        let mut defaults = Map::new();
        for wire in &order {
            if NOT_DEFAULTED.contains(wire) {
                continue;
            }
            let f = fields[wire];
            let mut value = f.default.to_value();
            if *wire == "repoLayoutRef" {
                value = Some(Value::String(spec.layout.to_owned()));
            }
            if let Some((_, d)) = spec.overrides.iter().find(|(w, _)| w == wire) {
                value = d.to_value();
            }
            if value.is_none() {
                value = SERVER_DEFAULTS
                    .iter()
                    .find(|(c, w, _)| *w == *wire && c.is_none_or(|c| c == spec.rclass))
                    .and_then(|(_, _, d)| d.to_value());
            }
            if let Some(v) = value {
                defaults.insert((*wire).to_owned(), v);
            }
        }
        for (wire, d) in spec.fixed {
            if let Some(v) = d.to_value() {
                defaults.insert((*wire).to_owned(), v);
            }
            fields
                .entry(wire)
                .or_insert(F::new(wire, type_of(d), D::None));
        }
        Resolved {
            spec,
            fields,
            defaults,
        }
    }

    /// The discriminating fixed members (`dockerApiVersion`, `terraformType`) this Kind
    /// expects, used to pick among Kinds sharing class and package type.
    fn matches(&self, body: &Map<String, Value>) -> bool {
        self.spec
            .fixed
            .iter()
            .filter(|(w, _)| matches!(*w, "dockerApiVersion" | "terraformType"))
            .all(|(w, d)| match (body.get(*w), d.to_value()) {
                (Some(Value::String(got)), Some(Value::String(want))) => got == &want,
                _ => true,
            })
    }
}

fn type_of(d: &D) -> T {
    match d {
        D::Bool(_) => T::Bool,
        D::Int(_) => T::Int,
        D::Strs(_) => T::StrList,
        D::Json(_) => T::Object,
        D::Str(_) | D::None => T::Str,
    }
}

type Index = HashMap<RClass, HashMap<&'static str, Vec<Resolved>>>;

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut idx: Index = HashMap::new();
        for spec in KINDS {
            idx.entry(spec.rclass)
                .or_default()
                .entry(spec.package_type)
                .or_default()
                .push(Resolved::new(spec));
        }
        // Prefer the current variant (Docker V2, Terraform module) when the body says nothing.
        for kinds in idx.values_mut().flat_map(HashMap::values_mut) {
            kinds.sort_by_key(|k| {
                k.spec.fixed.iter().any(|(w, d)| {
                    matches!(
                        (*w, d),
                        ("dockerApiVersion", D::Str("V1")) | ("terraformType", D::Str("provider"))
                    )
                })
            });
        }
        idx
    })
}

/// The Kind for a class, package type and body (which selects Docker V1/V2 and Terraform
/// module/provider), or `None` when the package type is not offered for that class.
pub fn resolve(
    rclass: RClass,
    package_type: &str,
    body: &Map<String, Value>,
) -> Option<&'static Resolved> {
    let kinds = index().get(&rclass)?.get(package_type)?;
    kinds
        .iter()
        .find(|k| k.matches(body))
        .or_else(|| kinds.first())
}

/// Whether any class offers this package type.
pub fn known_package_type(package_type: &str) -> bool {
    index().values().any(|m| m.contains_key(package_type))
}

/// The classes that offer this package type.
pub fn classes_of(package_type: &str) -> Vec<RClass> {
    let mut v: Vec<RClass> = index()
        .iter()
        .filter(|(_, m)| m.contains_key(package_type))
        .map(|(c, _)| *c)
        .collect();
    v.sort();
    v
}

/// Every (class, package type) pair, sorted.
pub fn all_pairs() -> Vec<(RClass, &'static str)> {
    let mut v: Vec<_> = index()
        .iter()
        .flat_map(|(c, m)| m.keys().map(|p| (*c, *p)))
        .collect();
    v.sort();
    v
}

/// The display name of a package type in the list endpoint (`"Alpine"`, `"NuGet"`, ...).
pub fn display_package_type(package_type: &str) -> String {
    match package_type {
        "nuget" => "NuGet".to_owned(),
        "npm" => "Npm".to_owned(),
        "huggingfaceml" => "HuggingFaceML".to_owned(),
        "gitlfs" => "GitLfs".to_owned(),
        "helmoci" => "HelmOCI".to_owned(),
        "oci" => "OCI".to_owned(),
        "bazelmodules" => "BazelModules".to_owned(),
        "releasebundles" => "ReleaseBundles".to_owned(),
        "terraformbackend" => "TerraformBackend".to_owned(),
        "machinelearning" => "MachineLearning".to_owned(),
        other => {
            let mut c = other.chars();
            match c.next() {
                Some(first) => first.to_uppercase().chain(c).collect(),
                None => String::new(),
            }
        }
    }
}

/// Allowed values of enumerated string fields: (wire, values).
pub const ENUMS: &[(&str, &[&str])] = &[
    (
        "checksumPolicyType",
        &["client-checksums", "server-generated-checksums"],
    ),
    (
        "snapshotVersionBehavior",
        &["unique", "non-unique", "deployer"],
    ),
    (
        "remoteRepoChecksumPolicyType",
        &[
            "generate-if-absent",
            "fail",
            "ignore-and-generate",
            "pass-thru",
        ],
    ),
    (
        "vcsGitProvider",
        &[
            "GITHUB",
            "GITHUBENTERPRISE",
            "BITBUCKET",
            "OLDSTASH",
            "STASH",
            "ARTIFACTORY",
            // The Terraform provider's `vcs_git_provider` validator (`remote.go`, v12.11.7).
            "GITLAB",
            "CUSTOM",
        ],
    ),
    (
        "pomRepositoryReferencesCleanupPolicy",
        &[
            "discard_active_reference",
            "discard_any_reference",
            "nothing",
        ],
    ),
    ("dockerApiVersion", &["V1", "V2"]),
    ("terraformType", &["module", "provider", ""]),
];

/// The repository layouts an Artifactory instance ships with.
pub const DEFAULT_LAYOUTS: &[&str] = &[
    "ansible-default",
    "bower-default",
    "build-default",
    "cargo-default",
    "composer-default",
    "conan-default",
    "go-default",
    "gradle-default",
    "ivy-default",
    "maven-1-default",
    "maven-2-default",
    "nix-default",
    "npm-default",
    "nuget-default",
    "puppet-default",
    "sbt-default",
    "simple-default",
    "swift-default",
    "terraform-module-default",
    "terraform-provider-default",
    "vcs-default",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_package_type_resolves_with_a_shipped_layout() {
        // 40 local, 40 remote, 33 virtual, 36 federated (rules.rs).
        assert_eq!(KINDS.len(), 149);
        for spec in KINDS {
            let r = Resolved::new(spec);
            let name = format!("{} {}", spec.rclass.as_str(), spec.package_type);
            let layout = r.defaults.get("repoLayoutRef").and_then(Value::as_str);
            let layout = layout.unwrap_or_else(|| panic!("{name} has no layout default"));
            assert!(DEFAULT_LAYOUTS.contains(&layout), "{name}: {layout}");
        }
    }

    #[test]
    fn no_two_entries_share_class_package_type_and_variant() {
        let mut seen = std::collections::HashSet::new();
        for spec in KINDS {
            let variant: Vec<_> = spec
                .fixed
                .iter()
                .filter(|(w, _)| matches!(*w, "dockerApiVersion" | "terraformType"))
                .map(|(w, d)| format!("{w}={d:?}"))
                .collect();
            assert!(
                seen.insert((spec.rclass, spec.package_type, variant.clone())),
                "{:?} {} {variant:?} twice",
                spec.rclass,
                spec.package_type
            );
        }
    }

    #[test]
    fn variants_are_picked_by_fixed_members() {
        let mut body = Map::new();
        let layout = |r: Option<&Resolved>| r.map(|r| r.defaults["repoLayoutRef"].clone());
        let api = |r: Option<&Resolved>| r.map(|r| r.defaults["dockerApiVersion"].clone());
        let v2 = resolve(RClass::Local, "docker", &body);
        assert_eq!(api(v2), Some(Value::from("V2")));
        assert_eq!(
            v2.map(|r| r.defaults["blockPushingSchema1"].clone()),
            Some(true.into())
        );
        body.insert("dockerApiVersion".into(), Value::from("V1"));
        assert_eq!(
            api(resolve(RClass::Local, "docker", &body)),
            Some(Value::from("V1"))
        );
        let tm = resolve(RClass::Local, "terraform", &Map::new());
        assert_eq!(layout(tm), Some(Value::from("terraform-module-default")));
        body.insert("terraformType".into(), Value::from("provider"));
        let tp = resolve(RClass::Local, "terraform", &body);
        assert_eq!(layout(tp), Some(Value::from("terraform-provider-default")));
        assert!(resolve(RClass::Virtual, "vagrant", &Map::new()).is_none());
        assert_eq!(classes_of("bazelmodules"), vec![RClass::Remote]);
    }
}
