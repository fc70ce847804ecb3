//! `sandbox export`: each provider's `export` (manifests that adopt the platform's existing
//! objects) against the simulator of a running sandbox (`--state-dir` of `sandbox up` or
//! `sandbox jfrog`) or any platform (`--url` and `--token-file`), into one folder.

use std::path::PathBuf;

use anyhow::Context;

use crate::Provider;
use crate::up::write_private;

#[derive(clap::Args)]
pub struct Args {
    /// The providers whose Kinds are exported (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub providers: Vec<Provider>,
    /// The state directory of a running `sandbox up` / `sandbox jfrog`: its simulator's URL
    /// and admin token (DIR/jfrog.env) instead of --url and --token-file.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "token_file"])]
    pub state_dir: Option<PathBuf>,
    /// The platform's URL.
    #[arg(long, requires = "token_file")]
    pub url: Option<String>,
    /// A file holding the access token.
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// The providers' export flags (`--kinds`, `--namespace`, `--legacy`,
    /// `--provider-config`, `--observe-only`, `--out`; see `sandbox provider artifactory --
    /// export --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub flags: Vec<String>,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
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
    for p in providers {
        let argv: Vec<String> = [p.name(), "export".into(), "--url".into(), url.clone()]
            .into_iter()
            .chain(["--token-file".into(), token_file.display().to_string()])
            .chain(args.flags.iter().cloned())
            .collect();
        match p {
            Provider::Artifactory => provider_artifactory::run_main(argv).await?,
            Provider::Xray => provider_xray::run_main(argv).await?,
            Provider::Project => provider_project::run_main(argv).await?,
            Provider::Platform => provider_platform::run_main(argv).await?,
        }
    }
    Ok(())
}
