//! Cross-resource references as data: which field of which Kinds names another managed
//! object, which Kind(s) that is, and which of its values is taken (its external name unless
//! stated). Each provider declares one table ([`Reference`]s); composing a Kind attaches the
//! matching entries to its runtime declaration (`KindInfo::references`), from which the CRD
//! gets the `<field>Ref(s)` / `<field>Selector` members and the reconciler resolves them
//! before connecting, as crossplane-runtime does.
//!
//! A reference to a Kind of another provider needs that Kind's read permission, which
//! Crossplane v2 grants the members of the provider family `provider-family-jfrog` (the label of
//! every package; the sandbox checks the grant covers these tables).

use provider_runtime::managed::kind::{ReferenceField, ReferenceTarget};

use crate::decl::{KindDecl, ResolvedKind, Ty};

/// A referenced Kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Provider short name (`artifactory`).
    pub provider: &'static str,
    /// Group short name (`security`).
    pub group: &'static str,
    /// Kind.
    pub kind: &'static str,
}

impl Target {
    /// The runtime's target (every managed Kind is served in `v1alpha1`).
    pub fn runtime(self) -> ReferenceTarget {
        ReferenceTarget {
            provider: self.provider,
            group: self.group,
            kind: self.kind,
            version: "v1alpha1",
        }
    }
}

/// Shorthand for a [`Target`].
pub const fn t(provider: &'static str, group: &'static str, kind: &'static str) -> Target {
    Target {
        provider,
        group,
        kind,
    }
}

/// Which Kinds of the declaring provider an entry applies to.
#[derive(Debug, Clone, Copy)]
pub enum On {
    /// These Kinds of the group: each must have the field.
    Kinds(&'static str, &'static [&'static str]),
    /// Every Kind of the group that has the field.
    Group(&'static str),
    /// Every Kind of the group whose identity member has this value (`rclass` = `virtual`)
    /// and that has the field.
    Identity(&'static str, &'static str, &'static str),
}

/// The referenced Kinds.
#[derive(Debug, Clone, Copy)]
pub enum To {
    /// These Kinds.
    Kinds(&'static [Target]),
    /// provider-artifactory's repository Kinds of these classes (`local`, `remote`,
    /// `virtual`, `federated`; every class when empty), of any package type.
    Repositories(&'static [&'static str]),
    /// The repository Kinds of these classes with the referrer's own package type (its
    /// `packageType` identity member): what a virtual repository may aggregate.
    SamePackage(&'static [&'static str]),
}

/// The value taken from the referenced object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Its external name (`crossplane.io/external-name`): the JFrog key or name.
    ExternalName,
    /// A member of its `status.atProvider` (dots for nesting).
    AtProvider(&'static str),
}

/// One declared reference.
#[derive(Debug, Clone, Copy)]
pub struct Reference {
    /// The referring Kinds.
    pub on: On,
    /// The CRD path of the value field under `forProvider` (dots into objects and the
    /// elements of lists of objects); a string, or a list/set of strings.
    pub field: &'static str,
    /// The referenced Kinds.
    pub to: To,
    /// What is taken.
    pub taken: Taken,
}

impl Reference {
    /// A reference taking the external name.
    pub const fn new(on: On, field: &'static str, to: To) -> Self {
        Reference {
            on,
            field,
            to,
            taken: Taken::ExternalName,
        }
    }

    /// Take a member of the target's `atProvider` instead of its external name.
    pub const fn taking(self, taken: Taken) -> Self {
        Reference { taken, ..self }
    }

    /// Whether it applies to `decl` (the field's presence is checked separately).
    pub fn names(&self, decl: &KindDecl) -> bool {
        match self.on {
            On::Kinds(g, kinds) => g == decl.group && kinds.contains(&decl.kind),
            On::Group(g) => g == decl.group,
            On::Identity(g, member, value) => {
                g == decl.group && decl.identity_value(member) == Some(value)
            }
        }
    }

    /// Whether the entry names its Kinds (each must have the field).
    fn explicit(&self) -> bool {
        matches!(self.on, On::Kinds(..))
    }

    /// The referenced Kinds for the referrer `decl`.
    pub fn targets(&self, decl: &KindDecl) -> Vec<Target> {
        let repos = |classes: &[&str], package: Option<&str>| {
            REPOSITORY_KINDS
                .iter()
                .filter(|(_, c, p)| {
                    (classes.is_empty() || classes.contains(c))
                        && package.is_none_or(|want| want == *p)
                })
                .map(|(k, _, _)| t("artifactory", "repository", k))
                .collect()
        };
        match self.to {
            To::Kinds(ts) => ts.to_vec(),
            To::Repositories(classes) => repos(classes, None),
            To::SamePackage(classes) => repos(classes, decl.identity_value("packageType")),
        }
    }
}

/// Whether `path` is a list (`Ok(true)`) or a string (`Ok(false)`) parameter of `kind`, or
/// why it cannot be a reference.
fn check_field(kind: &ResolvedKind, path: &str) -> Result<bool, String> {
    let segs: Vec<&str> = path.split('.').collect();
    let mut fields: Vec<crate::decl::Field> = kind.params().copied().collect();
    for (i, seg) in segs.iter().enumerate() {
        let Some(f) = fields.iter().find(|f| f.crd == *seg).copied() else {
            return Err(format!("no field {seg}"));
        };
        if i + 1 == segs.len() {
            if f.sensitive {
                return Err("a secret cannot be a reference".into());
            }
            return match f.ty {
                Ty::Str => Ok(false),
                Ty::List | Ty::Set => Ok(true),
                _ => Err("a reference names a string or a list of strings".into()),
            };
        }
        fields = match f.ty.children() {
            Some(c) => c.iter().filter(|c| c.is_param()).copied().collect(),
            None => return Err(format!("{seg} is not an object")),
        };
    }
    Err("empty path".into())
}

/// The runtime reference fields of a composed Kind under a provider's table. A Kind named by
/// an entry must have the field; a group-wide entry applies where the field exists.
pub fn reference_fields(
    kind: &ResolvedKind,
    table: &[Reference],
) -> Result<Vec<ReferenceField>, String> {
    let mut out = Vec::new();
    for r in table.iter().filter(|r| r.names(&kind.decl)) {
        let multi = match check_field(kind, r.field) {
            Ok(m) => m,
            Err(e) if r.explicit() => return Err(format!("reference {}: {e}", r.field)),
            Err(_) => continue,
        };
        let targets = r.targets(&kind.decl);
        if targets.is_empty() {
            // A group-wide entry may find no Kind to name (no local P2 repository exists
            // for a virtual one to deploy to): no reference there.
            if r.explicit() {
                return Err(format!("reference {}: no referenced Kind", r.field));
            }
            continue;
        }
        let mut f = ReferenceField::new(
            r.field,
            multi,
            targets.into_iter().map(Target::runtime).collect(),
        );
        if let Taken::AtProvider(p) = r.taken {
            f = f.from_at_provider(p);
        }
        out.push(f);
    }
    Ok(out)
}

/// provider-artifactory's repository Kinds: (Kind, `rclass`, `packageType`). The
/// artifactory crate's tests check this list against its declaration tables.
pub const REPOSITORY_KINDS: &[(&str, &str, &str)] = &[
    ("FederatedAlpineRepository", "federated", "alpine"),
    ("FederatedAnsibleRepository", "federated", "ansible"),
    ("FederatedBowerRepository", "federated", "bower"),
    ("FederatedCargoRepository", "federated", "cargo"),
    ("FederatedChefRepository", "federated", "chef"),
    ("FederatedCocoapodsRepository", "federated", "cocoapods"),
    ("FederatedComposerRepository", "federated", "composer"),
    ("FederatedConanRepository", "federated", "conan"),
    ("FederatedCondaRepository", "federated", "conda"),
    ("FederatedCranRepository", "federated", "cran"),
    ("FederatedDebianRepository", "federated", "debian"),
    ("FederatedDockerRepository", "federated", "docker"),
    ("FederatedDockerV1Repository", "federated", "docker"),
    ("FederatedDockerV2Repository", "federated", "docker"),
    ("FederatedGemsRepository", "federated", "gems"),
    ("FederatedGenericRepository", "federated", "generic"),
    ("FederatedGitlfsRepository", "federated", "gitlfs"),
    ("FederatedGoRepository", "federated", "go"),
    ("FederatedGradleRepository", "federated", "gradle"),
    ("FederatedHelmRepository", "federated", "helm"),
    ("FederatedHelmociRepository", "federated", "helmoci"),
    (
        "FederatedHuggingfacemlRepository",
        "federated",
        "huggingfaceml",
    ),
    ("FederatedIvyRepository", "federated", "ivy"),
    ("FederatedMavenRepository", "federated", "maven"),
    ("FederatedNPMRepository", "federated", "npm"),
    ("FederatedNugetRepository", "federated", "nuget"),
    ("FederatedOciRepository", "federated", "oci"),
    ("FederatedOpkgRepository", "federated", "opkg"),
    ("FederatedPuppetRepository", "federated", "puppet"),
    ("FederatedPypiRepository", "federated", "pypi"),
    (
        "FederatedReleasebundlesRepository",
        "federated",
        "releasebundles",
    ),
    ("FederatedRpmRepository", "federated", "rpm"),
    ("FederatedSbtRepository", "federated", "sbt"),
    ("FederatedSwiftRepository", "federated", "swift"),
    (
        "FederatedTerraformModuleRepository",
        "federated",
        "terraform",
    ),
    (
        "FederatedTerraformProviderRepository",
        "federated",
        "terraform",
    ),
    ("FederatedVagrantRepository", "federated", "vagrant"),
    ("LocalAlpineRepository", "local", "alpine"),
    ("LocalAnsibleRepository", "local", "ansible"),
    ("LocalBowerRepository", "local", "bower"),
    ("LocalCargoRepository", "local", "cargo"),
    ("LocalChefRepository", "local", "chef"),
    ("LocalCocoapodsRepository", "local", "cocoapods"),
    ("LocalComposerRepository", "local", "composer"),
    ("LocalConanRepository", "local", "conan"),
    ("LocalCondaRepository", "local", "conda"),
    ("LocalCranRepository", "local", "cran"),
    ("LocalDebianRepository", "local", "debian"),
    ("LocalDockerV1Repository", "local", "docker"),
    ("LocalDockerV2Repository", "local", "docker"),
    ("LocalGemsRepository", "local", "gems"),
    ("LocalGenericRepository", "local", "generic"),
    ("LocalGitlfsRepository", "local", "gitlfs"),
    ("LocalGoRepository", "local", "go"),
    ("LocalGradleRepository", "local", "gradle"),
    ("LocalHelmRepository", "local", "helm"),
    ("LocalHelmociRepository", "local", "helmoci"),
    ("LocalHexRepository", "local", "hex"),
    ("LocalHuggingfacemlRepository", "local", "huggingfaceml"),
    ("LocalIvyRepository", "local", "ivy"),
    ("LocalMachinelearningRepository", "local", "machinelearning"),
    ("LocalMavenRepository", "local", "maven"),
    ("LocalNPMRepository", "local", "npm"),
    ("LocalNixRepository", "local", "nix"),
    ("LocalNugetRepository", "local", "nuget"),
    ("LocalOciRepository", "local", "oci"),
    ("LocalOpkgRepository", "local", "opkg"),
    ("LocalPubRepository", "local", "pub"),
    ("LocalPuppetRepository", "local", "puppet"),
    ("LocalPypiRepository", "local", "pypi"),
    ("LocalRpmRepository", "local", "rpm"),
    ("LocalSbtRepository", "local", "sbt"),
    ("LocalSwiftRepository", "local", "swift"),
    ("LocalTerraformModuleRepository", "local", "terraform"),
    ("LocalTerraformProviderRepository", "local", "terraform"),
    (
        "LocalTerraformbackendRepository",
        "local",
        "terraformbackend",
    ),
    ("LocalVagrantRepository", "local", "vagrant"),
    (
        "RemoteAieditorextensionsRepository",
        "remote",
        "aieditorextensions",
    ),
    ("RemoteAlpineRepository", "remote", "alpine"),
    ("RemoteAnsibleRepository", "remote", "ansible"),
    ("RemoteBazelRepository", "remote", "bazelmodules"),
    ("RemoteBowerRepository", "remote", "bower"),
    ("RemoteCargoRepository", "remote", "cargo"),
    ("RemoteChefRepository", "remote", "chef"),
    ("RemoteCocoapodsRepository", "remote", "cocoapods"),
    ("RemoteComposerRepository", "remote", "composer"),
    ("RemoteConanRepository", "remote", "conan"),
    ("RemoteCondaRepository", "remote", "conda"),
    ("RemoteCranRepository", "remote", "cran"),
    ("RemoteDebianRepository", "remote", "debian"),
    ("RemoteDockerRepository", "remote", "docker"),
    ("RemoteGemsRepository", "remote", "gems"),
    ("RemoteGenericRepository", "remote", "generic"),
    ("RemoteGitlfsRepository", "remote", "gitlfs"),
    ("RemoteGoRepository", "remote", "go"),
    ("RemoteGradleRepository", "remote", "gradle"),
    ("RemoteHelmRepository", "remote", "helm"),
    ("RemoteHelmociRepository", "remote", "helmoci"),
    ("RemoteHexRepository", "remote", "hex"),
    ("RemoteHuggingfacemlRepository", "remote", "huggingfaceml"),
    ("RemoteIvyRepository", "remote", "ivy"),
    (
        "RemoteJetbrainspluginsRepository",
        "remote",
        "jetbrainsplugins",
    ),
    ("RemoteMavenRepository", "remote", "maven"),
    ("RemoteNPMRepository", "remote", "npm"),
    ("RemoteNixRepository", "remote", "nix"),
    ("RemoteNugetRepository", "remote", "nuget"),
    ("RemoteOciRepository", "remote", "oci"),
    ("RemoteOpkgRepository", "remote", "opkg"),
    ("RemoteP2Repository", "remote", "p2"),
    ("RemotePubRepository", "remote", "pub"),
    ("RemotePuppetRepository", "remote", "puppet"),
    ("RemotePypiRepository", "remote", "pypi"),
    ("RemoteRpmRepository", "remote", "rpm"),
    ("RemoteSbtRepository", "remote", "sbt"),
    ("RemoteSwiftRepository", "remote", "swift"),
    ("RemoteTerraformRepository", "remote", "terraform"),
    ("RemoteVcsRepository", "remote", "vcs"),
    ("VirtualAlpineRepository", "virtual", "alpine"),
    ("VirtualAnsibleRepository", "virtual", "ansible"),
    ("VirtualBowerRepository", "virtual", "bower"),
    ("VirtualChefRepository", "virtual", "chef"),
    ("VirtualCocoapodsRepository", "virtual", "cocoapods"),
    ("VirtualComposerRepository", "virtual", "composer"),
    ("VirtualConanRepository", "virtual", "conan"),
    ("VirtualCondaRepository", "virtual", "conda"),
    ("VirtualCranRepository", "virtual", "cran"),
    ("VirtualDebianRepository", "virtual", "debian"),
    ("VirtualDockerRepository", "virtual", "docker"),
    ("VirtualGemsRepository", "virtual", "gems"),
    ("VirtualGenericRepository", "virtual", "generic"),
    ("VirtualGitlfsRepository", "virtual", "gitlfs"),
    ("VirtualGoRepository", "virtual", "go"),
    ("VirtualGradleRepository", "virtual", "gradle"),
    ("VirtualHelmRepository", "virtual", "helm"),
    ("VirtualHelmociRepository", "virtual", "helmoci"),
    ("VirtualHexRepository", "virtual", "hex"),
    ("VirtualIvyRepository", "virtual", "ivy"),
    ("VirtualMavenRepository", "virtual", "maven"),
    ("VirtualNPMRepository", "virtual", "npm"),
    ("VirtualNixRepository", "virtual", "nix"),
    ("VirtualNugetRepository", "virtual", "nuget"),
    ("VirtualOciRepository", "virtual", "oci"),
    ("VirtualP2Repository", "virtual", "p2"),
    ("VirtualPubRepository", "virtual", "pub"),
    ("VirtualPuppetRepository", "virtual", "puppet"),
    ("VirtualPypiRepository", "virtual", "pypi"),
    ("VirtualRpmRepository", "virtual", "rpm"),
    ("VirtualSbtRepository", "virtual", "sbt"),
    ("VirtualSwiftRepository", "virtual", "swift"),
    ("VirtualTerraformRepository", "virtual", "terraform"),
];

/// Check a provider's table against its Kinds: every entry applies to at least one Kind
/// (a stale entry is an error) and every reference fits its field. Returns the number of
/// (Kind, field) references declared.
pub fn check_table(decls: &[KindDecl], table: &[Reference]) -> Result<usize, String> {
    let mut used = vec![0usize; table.len()];
    let mut total = 0;
    for d in decls {
        let kind = d.resolve().map_err(|e| e.to_string())?;
        let fields = reference_fields(&kind, table).map_err(|e| format!("{}: {e}", d.kind))?;
        total += fields.len();
        for f in &fields {
            for (i, r) in table.iter().enumerate() {
                if r.field == f.field && r.names(d) {
                    used[i] += 1;
                }
            }
        }
    }
    match used.iter().position(|n| *n == 0) {
        Some(i) => Err(format!(
            "reference entry {} ({:?}) applies to no Kind",
            table[i].field, table[i].on
        )),
        None => Ok(total),
    }
}

/// The README rows of a provider's table (`| provider | referring Kinds | field | referenced
/// Kinds | value taken |`), one per entry, with the Kinds each entry applies to counted.
pub fn table_rows(
    provider: &str,
    decls: &[KindDecl],
    table: &[Reference],
) -> Result<Vec<String>, String> {
    let mut rows = Vec::new();
    for r in table {
        let mut kinds: Vec<&str> = Vec::new();
        let mut target_counts: Vec<usize> = Vec::new();
        for d in decls.iter().filter(|d| r.names(d)) {
            let kind = d.resolve().map_err(|e| e.to_string())?;
            let fields = reference_fields(&kind, std::slice::from_ref(r))?;
            if let Some(f) = fields.first() {
                kinds.push(d.kind);
                target_counts.push(f.targets.len());
            }
        }
        let n = kinds.len();
        let list = |ks: &[&str]| {
            ks.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let on = match r.on {
            On::Kinds(g, _) => format!("{} ({g})", list(&kinds)),
            On::Group(g) if n <= 4 => format!("{} ({g})", list(&kinds)),
            On::Group(g) => format!("{n} Kinds of {g} (every one with the field)"),
            On::Identity(g, m, v) => format!("{n} Kinds of {g} with {m} `{v}`"),
        };
        let classes = |cs: &[&str]| {
            if cs.is_empty() {
                "every class".to_string()
            } else {
                cs.join(", ")
            }
        };
        let to = match r.to {
            To::Kinds(ts) => ts
                .iter()
                .map(|t| format!("`{}` ({}, {})", t.kind, t.provider, t.group))
                .collect::<Vec<_>>()
                .join(", "),
            To::Repositories(cs) => format!(
                "{} repository Kinds of provider-artifactory ({})",
                target_counts.first().copied().unwrap_or(0),
                classes(cs)
            ),
            To::SamePackage(cs) => format!(
                "the referrer's package type's repository Kinds ({}; {}-{} Kinds)",
                classes(cs),
                target_counts.iter().min().copied().unwrap_or(0),
                target_counts.iter().max().copied().unwrap_or(0)
            ),
        };
        let taken = match r.taken {
            Taken::ExternalName => "external name".to_string(),
            Taken::AtProvider(p) => format!("`atProvider.{p}`"),
        };
        rows.push(format!(
            "| provider-{provider} | {on} | `{}` | {to} | {taken} |",
            r.field
        ));
    }
    Ok(rows)
}
