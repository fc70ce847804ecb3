//! `sandbox preview`: each provider's `preview` (what applying manifests would do to JFrog,
//! with no write) against the simulator of a running sandbox (`--state-dir` of `sandbox up`
//! or `sandbox jfrog`) or any platform (`--url` and `--token-file`).
//!
//! With `--state-dir` of a `sandbox up`, the previews also read that sandbox's cluster
//! (its kubeconfig), so manifests already applied there preview as `no change` and their
//! recorded state (external names, write-only hashes) counts; `--no-cluster` previews the
//! manifests as if no cluster had them. Each provider runs as its own process
//! (`sandbox provider <name> preview ...`, the provider binary's code); `-f -` is read
//! once and handed to every provider as a file. The exit status is the worst of the
//! providers': 1 if one failed, else 2 if one would change something, else 0.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;

use crate::Provider;
use crate::up::write_private;

#[derive(clap::Args)]
pub struct Args {
    /// The providers whose Kinds are previewed (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub providers: Vec<Provider>,
    /// The state directory of a running `sandbox up` / `sandbox jfrog`: its simulator's URL
    /// and admin token (DIR/jfrog.env) instead of --url and --token-file, and its cluster
    /// (DIR/kubeconfig, when there is one) unless --no-cluster.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "token_file"])]
    pub state_dir: Option<PathBuf>,
    /// The platform's URL.
    #[arg(long, requires = "token_file")]
    pub url: Option<String>,
    /// A file holding the access token.
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// Do not read the sandbox's cluster: preview the manifests as new.
    #[arg(long)]
    pub no_cluster: bool,
    /// The providers' preview flags (`-f PATH`, `--format`, `--namespace`, `--kubeconfig`,
    /// `--all-namespaces`; see `sandbox provider artifactory preview --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub flags: Vec<String>,
}

/// Runs the previews; returns the exit status.
pub async fn run(args: Args) -> anyhow::Result<i32> {
    let mut kubeconfig = None;
    let (url, token_file) = match (&args.state_dir, args.url, args.token_file) {
        (Some(dir), _, _) => {
            let env = std::fs::read_to_string(dir.join("jfrog.env"))
                .with_context(|| format!("cannot read {}/jfrog.env", dir.display()))?;
            let var = |name: &str| {
                env.lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}=")))
                    .map(str::to_string)
                    .with_context(|| format!("{name} is not in {}/jfrog.env", dir.display()))
            };
            let token_file = dir.join("jfrog.token");
            write_private(&token_file, &var("JFROG_ACCESS_TOKEN")?)?;
            let kc = dir.join("kubeconfig");
            if kc.is_file() && !args.no_cluster {
                kubeconfig = Some(kc);
            }
            (var("JFROG_URL")?, token_file)
        }
        (None, Some(url), Some(file)) => (url, file),
        _ => anyhow::bail!("give --state-dir, or --url and --token-file"),
    };
    let providers = if args.providers.is_empty() {
        Provider::ALL.to_vec()
    } else {
        args.providers
    };
    // Standard input can be read once: it goes to a file every provider reads.
    let mut flags = args.flags.clone();
    let mut stdin_copy = None;
    for i in 0..flags.len() {
        if flags[i] == "-" && i > 0 && matches!(flags[i - 1].as_str(), "-f" | "--filename") {
            let path = match &stdin_copy {
                Some(p) => p,
                None => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                        .context("cannot read standard input")?;
                    let p = std::env::temp_dir()
                        .join(format!("sandbox-preview-{}.yaml", std::process::id()));
                    std::fs::write(&p, text)
                        .with_context(|| format!("cannot write {}", p.display()))?;
                    stdin_copy.insert(p)
                }
            };
            flags[i] = path.display().to_string();
        }
    }
    let has_kubeconfig = flags.iter().any(|f| f == "--kubeconfig");
    let exe = std::env::current_exe().context("cannot find the sandbox binary")?;
    let mut worst = 0;
    for p in &providers {
        let mut cmd = Command::new(&exe);
        cmd.args(["provider", p.short(), "preview", "--url", &url])
            .arg("--token-file")
            .arg(&token_file);
        if let (Some(kc), false) = (&kubeconfig, has_kubeconfig) {
            cmd.arg("--kubeconfig").arg(kc);
        }
        if providers.len() > 1 {
            cmd.arg("--hide-skipped");
        }
        cmd.args(&flags);
        let status = cmd
            .status()
            .with_context(|| format!("cannot run {} preview", p.name()))?;
        let code = status.code().unwrap_or(1);
        worst = match (worst, code) {
            (1, _) | (_, 1) => 1,
            (2, _) | (_, 2) => 2,
            (_, 0) => worst,
            _ => 1,
        };
    }
    if let Some(p) = stdin_copy {
        let _ = std::fs::remove_file(p);
    }
    Ok(worst)
}
