//! Kind declarations: what a provider says about one managed-resource Kind.
//!
//! A [`KindInfo`] is data, not code: the generic reconciler, the CRD generator and the
//! provider binaries all read it. Every Kind exists in two [`Scope`]s: namespaced (the modern
//! form, group `<group>.<provider>.m.crossplane.io`) and cluster-scoped (the legacy form, group
//! `<group>.<provider>.crossplane.io`).

use kube::core::{ApiResource, GroupVersionKind};

/// Which variant of a Kind: the namespaced modern MR or the cluster-scoped legacy MR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Namespaced, group `<group>.<provider>.m.crossplane.io`, typed `providerConfigRef
    /// {kind, name}`, no `deletionPolicy`.
    Namespaced,
    /// Cluster-scoped legacy form, group `<group>.<provider>.crossplane.io`, with
    /// `deletionPolicy` and `providerConfigRef {name}`.
    Cluster,
}

impl Scope {
    /// Both scopes, modern first.
    pub const ALL: [Scope; 2] = [Scope::Namespaced, Scope::Cluster];

    /// True for the namespaced (modern) form.
    pub fn is_namespaced(self) -> bool {
        matches!(self, Scope::Namespaced)
    }
}

/// How the external name (the JFrog identifier) of a Kind is derived.
///
/// Every strategy but [`IdentifierStrategy::ServerAssigned`] keeps Crossplane's external-name
/// initialiser (`crossplane.io/external-name` defaults to `metadata.name`); the adapter may
/// later rewrite the annotation to the canonical identifier (docs/managed-reconciler.md §2 step 7,
/// §12.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentifierStrategy {
    /// The external name is the identifier (e.g. a repository key).
    Name,
    /// The identifier is a `forProvider` field (camelCase name).
    SpecField(&'static str),
    /// The identifier is composed of several `forProvider` fields joined with `separator`.
    Composite {
        /// camelCase `forProvider` field names, in order.
        fields: &'static [&'static str],
        /// The joining text, e.g. `:`.
        separator: &'static str,
    },
    /// JFrog assigns the identifier at create; the annotation stays empty until then.
    ServerAssigned,
    /// A platform singleton with a constant identifier.
    Singleton(&'static str),
}

impl IdentifierStrategy {
    /// Whether the external-name initialiser runs for this Kind
    /// (docs/managed-reconciler.md §2 step 7).
    pub fn initialises_external_name(&self) -> bool {
        !matches!(self, IdentifierStrategy::ServerAssigned)
    }

    /// Whether the identifier is known before Create, so that Observe alone tells whether an
    /// interrupted create happened (crossplane-runtime's `deterministicExternalName`,
    /// docs/managed-reconciler.md §2 step 8 and §16 Q6). True for every strategy but
    /// [`IdentifierStrategy::ServerAssigned`]: such Kinds continue to Observe after a restart
    /// mid-create (adopt or create, never a duplicate); a server-assigned ID lost with the
    /// interrupted create cannot be found again, so those Kinds keep the step-8 stop.
    pub fn is_deterministic(&self) -> bool {
        !matches!(self, IdentifierStrategy::ServerAssigned)
    }
}

/// Where a reference's value is extracted from on the target MR
/// (docs/managed-reconciler.md §11.2 step 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceSource {
    /// The target's `crossplane.io/external-name` annotation (the default extractor).
    ExternalName,
    /// A dotted path under the target's `status.atProvider`, e.g. `id`.
    AtProvider(&'static str),
}

/// The Kind a reference points to. The target lives in the same scope as the referencing MR
/// (namespaced refers to namespaced, legacy to legacy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceTarget {
    /// Provider short name of the target, e.g. `artifactory`.
    pub provider: &'static str,
    /// Group short name of the target, e.g. `repository`.
    pub group: &'static str,
    /// Kind of the target.
    pub kind: &'static str,
    /// Version of the target, e.g. `v1alpha1`.
    pub version: &'static str,
}

impl ReferenceTarget {
    /// The target's `ApiResource` in the given scope.
    pub fn api_resource(&self, scope: Scope) -> ApiResource {
        let group = api_group(self.group, self.provider, scope);
        ApiResource {
            api_version: format!("{group}/{}", self.version),
            group,
            version: self.version.to_string(),
            kind: self.kind.to_string(),
            plural: pluralize(self.kind),
        }
    }
}

/// A `forProvider` field whose value can come from another MR (`<field>Ref` / `<field>Selector`).
///
/// The companion field names are Upjet's (`pkg/types/name`): the value field's name followed
/// by `Ref` (`Refs` for a list) and `Selector`: `repoKey` has `repoKeyRef` and
/// `repoKeySelector`; a list field `repositories` has `repositoriesRefs` and
/// `repositoriesSelector`.
///
/// `field` is a dotted path under `forProvider`; a segment that meets a list of objects
/// applies to each element (the companions then sit in each element, as Upjet generates them
/// for nested blocks), e.g. `watchResource.name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceField {
    /// camelCase path of the value field under `forProvider` (dots for nesting), e.g. `repoKey`.
    pub field: &'static str,
    /// Name of the `...Ref` (or `...Refs`) field, a sibling of the value field.
    pub ref_field: &'static str,
    /// Name of the `...Selector` field, a sibling of the value field.
    pub selector_field: &'static str,
    /// Whether the value field is a list of strings.
    pub multi: bool,
    /// The referenced Kinds, in lookup order (at least one). Crossplane's generated
    /// resolvers name one Kind; a field JFrog fills with the key of any of several Kinds (a
    /// virtual repository's `repositories`: local, remote and virtual repositories of its
    /// package type) names each: a `Ref` resolves to the first of them that has an object of
    /// that name, a selector selects among all of them.
    pub targets: Vec<ReferenceTarget>,
    /// What is extracted from the target.
    pub source: ReferenceSource,
}

impl ReferenceField {
    /// A single-valued reference using the default companion names and the external name.
    pub fn single(field: &'static str, target: ReferenceTarget) -> Self {
        Self::new(field, false, vec![target])
    }

    /// A list-valued reference (`repositories`, `repositoriesRefs`, `repositoriesSelector`).
    pub fn multi(field: &'static str, target: ReferenceTarget) -> Self {
        Self::new(field, true, vec![target])
    }

    /// A reference to any of `targets` (see [`ReferenceField::targets`]).
    pub fn new(field: &'static str, multi: bool, targets: Vec<ReferenceTarget>) -> Self {
        let (ref_field, selector_field) = companion_names(field, multi);
        ReferenceField {
            field,
            ref_field,
            selector_field,
            multi,
            targets,
            source: ReferenceSource::ExternalName,
        }
    }

    /// One more referenced Kind.
    pub fn or(mut self, target: ReferenceTarget) -> Self {
        self.targets.push(target);
        self
    }

    /// Extract from `status.atProvider.<path>` instead of the external name.
    pub fn from_at_provider(mut self, path: &'static str) -> Self {
        self.source = ReferenceSource::AtProvider(path);
        self
    }

    /// The Go-style path used in error messages, e.g. `mg.Spec.ForProvider.RepoKey`.
    pub fn go_path(&self) -> String {
        self.go_path_in("ForProvider")
    }

    /// The Go-style path under another block, e.g. `mg.Spec.InitProvider.RepoKey`.
    pub fn go_path_in(&self, block: &str) -> String {
        go_path(
            block,
            &self.field.split('.').map(|s| (s, None)).collect::<Vec<_>>(),
        )
    }

    /// The referenced Kinds as `Kind` names joined by `, ` (for messages and descriptions).
    pub fn target_names(&self) -> String {
        self.targets
            .iter()
            .map(|t| t.kind)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `mg.Spec.<block>.A[0].B`: segments with an optional list index.
pub(crate) fn go_path(block: &str, segs: &[(&str, Option<usize>)]) -> String {
    let mut out = format!("mg.Spec.{block}");
    for (seg, index) in segs {
        out.push('.');
        let mut chars = seg.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
        if let Some(i) = index {
            out.push_str(&format!("[{i}]"));
        }
    }
    out
}

fn companion_names(field: &'static str, multi: bool) -> (&'static str, &'static str) {
    let leaf = field.rsplit('.').next().unwrap_or(field);
    let r = if multi {
        format!("{leaf}Refs")
    } else {
        format!("{leaf}Ref")
    };
    let s = format!("{leaf}Selector");
    // Kind declarations live for the whole process; leaking two short strings per reference
    // field once at declaration time keeps the declaration API `&'static str` throughout.
    (Box::leak(r.into_boxed_str()), Box::leak(s.into_boxed_str()))
}

/// A `forProvider` field that is a reference to a Kubernetes Secret (`...SecretRef`).
///
/// The reconciler reads the Secret (from the MR's namespace for namespaced MRs, from the
/// ref's `namespace` for legacy MRs) and hands the values to the adapter in
/// `Managed::secrets`; adapters never touch Kubernetes.
///
/// Listed in [`KindInfo::secret_refs`], the ref names one key (`{name, namespace?, key}`) and
/// its value is the entry `<field>`. Listed in [`KindInfo::whole_secret_refs`], the ref names
/// a whole Secret (`{name, namespace?}`, Upjet's form of a sensitive map field) and every key
/// `k` of the Secret is the entry `<field>.<k>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRefField {
    /// camelCase path of the `...SecretRef` field under `forProvider`, e.g. `passwordSecretRef`.
    pub field: &'static str,
    /// Whether a missing ref is an error (otherwise the secret is simply absent).
    pub required: bool,
}

impl SecretRefField {
    /// An optional ref at `field`.
    pub fn optional(field: &'static str) -> Self {
        SecretRefField {
            field,
            required: false,
        }
    }

    /// A ref at `field` that must be set.
    pub fn required(field: &'static str) -> Self {
        SecretRefField {
            field,
            required: true,
        }
    }
}

/// Everything the runtime needs to know about one managed-resource Kind.
#[derive(Debug, Clone)]
pub struct KindInfo {
    /// Provider short name: `artifactory`, `xray`, `project`, `platform`.
    pub provider: &'static str,
    /// Group short name, e.g. `repository`.
    pub group: &'static str,
    /// The Kind, e.g. `LocalDockerV2Repository`.
    pub kind: &'static str,
    /// The served and stored version, e.g. `v1alpha1`.
    pub version: &'static str,
    /// How the external name is derived.
    pub identifier: IdentifierStrategy,
    /// camelCase `forProvider` fields that must be set in forProvider or initProvider unless
    /// the policies exclude Create and Update (CEL rule in the CRD,
    /// docs/managed-reconciler.md §14.2).
    pub required_params: Vec<&'static str>,
    /// camelCase `forProvider` fields that cannot change after creation.
    pub immutable_fields: Vec<&'static str>,
    /// camelCase `forProvider` fields whose values are sensitive (never in status or logs).
    pub sensitive_fields: Vec<&'static str>,
    /// Secret-key inputs the reconciler fetches for the adapter: entry `<field>`.
    pub secret_refs: Vec<SecretRefField>,
    /// Whole-Secret inputs (sensitive map fields): entry `<field>.<key>` for every key of the
    /// referenced Secret. A separate list rather than a flag on [`SecretRefField`], so that
    /// existing `SecretRefField { field, required }` declarations keep compiling.
    pub whole_secret_refs: Vec<SecretRefField>,
    /// Reference fields resolved generically before Connect.
    pub references: Vec<ReferenceField>,
    /// Whether the Kind maintains the `LastAsyncOperation` condition as the Upjet JFrog
    /// providers do (docs/managed-reconciler.md §13.2). True for every JFrog Kind.
    pub last_async_operation: bool,
    /// Extra printer columns are not declared here; the CRD generator adds Upjet's set.
    /// A short description of the Kind for the CRD and docs.
    pub description: &'static str,
}

impl KindInfo {
    /// A Kind with defaults: no required params, references or secret inputs;
    /// `LastAsyncOperation` maintained.
    pub fn new(
        provider: &'static str,
        group: &'static str,
        kind: &'static str,
        version: &'static str,
        identifier: IdentifierStrategy,
    ) -> Self {
        KindInfo {
            provider,
            group,
            kind,
            version,
            identifier,
            required_params: Vec::new(),
            immutable_fields: Vec::new(),
            sensitive_fields: Vec::new(),
            secret_refs: Vec::new(),
            whole_secret_refs: Vec::new(),
            references: Vec::new(),
            last_async_operation: true,
            description: "",
        }
    }

    /// API group in the given scope: `repository.artifactory.m.crossplane.io` (namespaced) or
    /// `repository.artifactory.crossplane.io` (cluster).
    pub fn api_group(&self, scope: Scope) -> String {
        api_group(self.group, self.provider, scope)
    }

    /// `<group>/<version>`.
    pub fn api_version(&self, scope: Scope) -> String {
        format!("{}/{}", self.api_group(scope), self.version)
    }

    /// The lowercase plural of the Kind.
    pub fn plural(&self) -> String {
        pluralize(self.kind)
    }

    /// The lowercase Kind.
    pub fn singular(&self) -> String {
        self.kind.to_lowercase()
    }

    /// `<plural>.<group>`.
    pub fn crd_name(&self, scope: Scope) -> String {
        format!("{}.{}", self.plural(), self.api_group(scope))
    }

    /// kube-rs `ApiResource` for `DynamicObject` access.
    pub fn api_resource(&self, scope: Scope) -> ApiResource {
        ApiResource {
            group: self.api_group(scope),
            version: self.version.to_string(),
            api_version: self.api_version(scope),
            kind: self.kind.to_string(),
            plural: self.plural(),
        }
    }

    /// The GroupVersionKind in the given scope.
    pub fn gvk(&self, scope: Scope) -> GroupVersionKind {
        GroupVersionKind::gvk(&self.api_group(scope), self.version, self.kind)
    }

    /// The controller name, `managed/<kind>.<group>` in lowercase
    /// (docs/managed-reconciler.md §1.1). It is the events' source and the `controller` metric
    /// label.
    pub fn controller_name(&self, scope: Scope) -> String {
        format!("managed/{}.{}", self.kind, self.api_group(scope)).to_lowercase()
    }

    /// The `gvk` metric label: `<group>/<version>, Kind=<Kind>` (docs/managed-reconciler.md §15.5).
    pub fn gvk_label(&self, scope: Scope) -> String {
        format!("{}, Kind={}", self.api_version(scope), self.kind)
    }
}

/// `<group>.<provider>[.m].crossplane.io`.
pub fn api_group(group: &str, provider: &str, scope: Scope) -> String {
    match scope {
        Scope::Namespaced => format!("{group}.{provider}.m.crossplane.io"),
        Scope::Cluster => format!("{group}.{provider}.crossplane.io"),
    }
}

/// The lowercase plural of a Kind, with the English rules kubebuilder's pluralizer applies to
/// the Kinds we have (`Policy` → `policies`, `Watch` → `watches`, `Repository` →
/// `repositories`, `Settings` → `settings`).
pub fn pluralize(kind: &str) -> String {
    let lower = kind.to_lowercase();
    // Already-plural nouns that flect leaves alone.
    for s in ["settings", "details", "status", "credentials", "data"] {
        if lower.ends_with(s) {
            return lower;
        }
    }
    let bytes = lower.as_bytes();
    let n = bytes.len();
    if n >= 2 && lower.ends_with('y') && !b"aeiou".contains(&bytes[n - 2]) {
        return format!("{}ies", &lower[..n - 1]);
    }
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with('z')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_plurals_and_names() {
        let k = KindInfo::new(
            "artifactory",
            "repository",
            "LocalDockerV2Repository",
            "v1alpha1",
            IdentifierStrategy::Name,
        );
        assert_eq!(
            k.api_group(Scope::Namespaced),
            "repository.artifactory.m.crossplane.io"
        );
        assert_eq!(
            k.api_group(Scope::Cluster),
            "repository.artifactory.crossplane.io"
        );
        assert_eq!(k.plural(), "localdockerv2repositories");
        assert_eq!(
            k.crd_name(Scope::Namespaced),
            "localdockerv2repositories.repository.artifactory.m.crossplane.io"
        );
        assert_eq!(
            k.controller_name(Scope::Namespaced),
            "managed/localdockerv2repository.repository.artifactory.m.crossplane.io"
        );
        assert_eq!(
            k.gvk_label(Scope::Namespaced),
            "repository.artifactory.m.crossplane.io/v1alpha1, Kind=LocalDockerV2Repository"
        );
        assert_eq!(pluralize("SecurityPolicy"), "securitypolicies");
        assert_eq!(pluralize("Watch"), "watches");
        assert_eq!(pluralize("Webhook"), "webhooks");
        assert_eq!(pluralize("Key"), "keys");
    }

    #[test]
    fn reference_companions() {
        let t = ReferenceTarget {
            provider: "artifactory",
            group: "repository",
            kind: "LocalRepository",
            version: "v1alpha1",
        };
        let r = ReferenceField::single("repoKey", t.clone());
        assert_eq!(r.ref_field, "repoKeyRef");
        assert_eq!(r.selector_field, "repoKeySelector");
        assert_eq!(r.go_path(), "mg.Spec.ForProvider.RepoKey");
        // Upjet's names: the list field's own name + `Refs` / `Selector` (no singular).
        let m = ReferenceField::multi("repositories", t);
        assert_eq!(m.ref_field, "repositoriesRefs");
        assert_eq!(m.selector_field, "repositoriesSelector");
        let nested = ReferenceField::single("watchResource.name", m.targets[0].clone());
        assert_eq!(nested.ref_field, "nameRef");
        assert_eq!(nested.selector_field, "nameSelector");
        assert_eq!(
            super::go_path("ForProvider", &[("watchResource", Some(2)), ("name", None)]),
            "mg.Spec.ForProvider.WatchResource[2].Name"
        );
    }

    #[test]
    fn only_server_assigned_identifiers_are_not_deterministic() {
        assert!(IdentifierStrategy::Name.is_deterministic());
        assert!(IdentifierStrategy::SpecField("key").is_deterministic());
        assert!(
            IdentifierStrategy::Composite {
                fields: &["a", "b"],
                separator: ":",
            }
            .is_deterministic()
        );
        assert!(IdentifierStrategy::Singleton("config").is_deterministic());
        assert!(!IdentifierStrategy::ServerAssigned.is_deterministic());
    }
}
