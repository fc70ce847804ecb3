//! Managed-resource activation, as a Crossplane v2 `ManagedResourceActivationPolicy` does it:
//! a provider package's managed-resource CRDs are installed only when a pattern activates
//! them; the providers (`capabilities: [safe-start]`) start a Kind's controller once its CRD
//! is established, so activating more later needs no restart.
//!
//! A pattern matches a CRD by its name (`<plural>.<group>`, as Crossplane matches a
//! ManagedResourceDefinition) or by its API group, with `*` matching any run of characters:
//! `repository.artifactory.m.crossplane.io`, `*.webhook.artifactory.m.crossplane.io`,
//! `localmavenrepositories.*`. The configuration CRDs of each provider (`<provider>.m.crossplane.io`,
//! `<provider>.crossplane.io`: ClusterProviderConfig, ProviderConfig, usages) are always
//! installed, as Crossplane installs them with the package.
//!
//! `sandbox activate --state-dir DIR PATTERN...` installs the matching CRDs into a running
//! `sandbox up --state-dir DIR`.

use std::path::PathBuf;
use std::time::Duration;

use crate::kubeapi::{client_from_path, provider_of_group};
use crate::setup::{self, CrdFile};

/// Whether `text` matches the glob `pattern` (`*`: any run of characters).
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the CRD `<plural>.<group>` is always installed (a provider's configuration group).
pub fn always_active(group: &str) -> bool {
    matches!(provider_of_group(group), Some((_, family)) if family.is_empty())
}

/// Whether a CRD is active under `patterns` (empty: everything is).
pub fn is_active(patterns: &[String], crd: &CrdFile) -> bool {
    let group = &crd.crd.spec.group;
    let name = crd.crd.metadata.name.clone().unwrap_or_default();
    patterns.is_empty()
        || always_active(group)
        || patterns.iter().any(|p| glob(p, &name) || glob(p, group))
}

/// The CRDs active under `patterns`, and the others.
pub fn split(patterns: &[String], crds: Vec<CrdFile>) -> (Vec<CrdFile>, Vec<CrdFile>) {
    crds.into_iter().partition(|c| is_active(patterns, c))
}

/// Flags of `sandbox activate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The `--state-dir` of the running `sandbox up`.
    #[arg(long, value_name = "DIR")]
    pub state_dir: PathBuf,
    /// Directory of the CRDs. Default: the repository's crds/.
    #[arg(long, value_name = "DIR")]
    pub crds: Option<PathBuf>,
    /// What to activate: CRD names (`<plural>.<group>`) or API groups, `*` as a wildcard.
    #[arg(required = true, value_name = "PATTERN")]
    pub patterns: Vec<String>,
}

/// Runs `sandbox activate`: installs the CRDs the patterns match and waits until each is
/// Established.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = client_from_path(&args.state_dir.join("kubeconfig")).await?;
    let dir = args
        .crds
        .clone()
        .unwrap_or_else(|| crate::up::repo_dir("crds"));
    let crds = setup::read_crds(&dir)?;
    let matched: Vec<CrdFile> = crds
        .into_iter()
        .filter(|c| {
            let name = c.crd.metadata.name.clone().unwrap_or_default();
            args.patterns
                .iter()
                .any(|p| glob(p, &name) || glob(p, &c.crd.spec.group))
        })
        .collect();
    anyhow::ensure!(
        !matched.is_empty(),
        "no CRD of {} matches {}",
        dir.display(),
        args.patterns.join(", ")
    );
    setup::install_crds(&client, &matched, Duration::from_secs(120)).await?;
    println!("activated {} CRDs", matched.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_and_groups() {
        assert!(glob(
            "repository.artifactory.m.crossplane.io",
            "repository.artifactory.m.crossplane.io"
        ));
        assert!(!glob(
            "repository.artifactory.m.crossplane.io",
            "repository.artifactory.crossplane.io"
        ));
        assert!(glob(
            "*.webhook.artifactory.m.crossplane.io",
            "artifactwebhooks.webhook.artifactory.m.crossplane.io"
        ));
        assert!(!glob(
            "*.webhook.artifactory.m.crossplane.io",
            "webhook.artifactory.m.crossplane.io"
        ));
        assert!(glob(
            "local*repositories.*",
            "localmavenrepositories.repository.artifactory.m.crossplane.io"
        ));
        assert!(!glob(
            "local*repositories.*",
            "remotemavenrepositories.repository.artifactory.m.crossplane.io"
        ));
        assert!(glob("*", "anything"));
        assert!(glob("a*a", "aa"));
        assert!(!glob("a*a", "a"));
    }

    #[test]
    fn provider_config_groups_are_always_active() {
        assert!(always_active("artifactory.m.crossplane.io"));
        assert!(always_active("xray.crossplane.io"));
        assert!(!always_active("repository.artifactory.m.crossplane.io"));
        assert!(!always_active("example.org"));
    }
}
