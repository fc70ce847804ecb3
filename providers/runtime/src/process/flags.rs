//! The provider flags (docs/managed-reconciler.md §15.1), with upstream names, defaults and
//! environment variables, plus the deprecated Upjet flags (accepted, with a warning).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, ValueEnum};

use crate::managed::shards::ShardBy;

fn shard_by(s: &str) -> Result<ShardBy, String> {
    s.parse()
}

fn duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("invalid duration {s:?}: {e}"))
}

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable text.
    Text,
    /// One JSON object per line.
    Json,
}

/// Flags shared by every provider binary.
#[derive(Args, Clone, Debug)]
pub struct ProviderFlags {
    /// Run with debug logging.
    #[arg(short = 'd', long)]
    pub debug: bool,

    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Informer re-list period (no effect on drift checks, which follow --poll).
    #[arg(short = 's', long, default_value = "1h", value_parser = duration)]
    pub sync: Duration,

    /// How often an up-to-date managed resource is checked for drift (5% jitter).
    #[arg(long, default_value = "10m", value_parser = duration)]
    pub poll: Duration,

    /// How often the managed-resource state gauges are recomputed.
    #[arg(long, default_value = "5s", value_parser = duration)]
    pub poll_state_metric: Duration,

    /// Global reconciles per second (burst 10x); also each controller's concurrency.
    #[arg(long, default_value_t = 10)]
    pub max_reconcile_rate: u32,

    /// Use leader election for the controller manager.
    #[arg(short = 'l', long, env = "LEADER_ELECTION", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, default_value_t = false)]
    pub leader_election: bool,

    /// Enable support for management policies.
    #[arg(long, env = "ENABLE_MANAGEMENT_POLICIES", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, default_value_t = true)]
    pub enable_management_policies: bool,

    /// Enable change logs (alpha; accepted and ignored).
    #[arg(long, env = "ENABLE_CHANGE_LOGS", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, default_value_t = false)]
    pub enable_changelogs: bool,

    /// Path of the change-logs gRPC socket (unused).
    #[arg(
        long,
        env = "CHANGELOGS_SOCKET_PATH",
        default_value = "/var/run/changelogs/changelogs.sock"
    )]
    pub changelogs_socket_path: PathBuf,

    /// Address the Prometheus metrics endpoint binds to.
    #[arg(long, env = "METRICS_BIND_ADDRESS", default_value = ":8080")]
    pub metrics_bind_address: String,

    /// Address the health probes (/healthz, /readyz) bind to.
    #[arg(long, env = "HEALTH_PROBE_BIND_ADDRESS", default_value = ":8081")]
    pub health_probe_bind_addr: String,

    /// Webhook port (conversion webhooks; unused: every CRD has a single version).
    #[arg(long, env = "WEBHOOK_PORT", default_value_t = 9443)]
    pub webhook_port: u16,

    /// Directory of the webhook TLS certificates (else TLS_SERVER_CERTS_DIR, then
    /// WEBHOOK_TLS_CERT_DIR, then /tls/server).
    #[arg(long, env = "CERTS_DIR")]
    pub certs_dir: Option<PathBuf>,

    /// Floor for the crossplane.io/poll-interval annotation.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub min_poll_interval: Duration,

    /// Namespace of the leader-election Lease (else the service-account namespace file,
    /// else crossplane-system).
    #[arg(long, env = "POD_NAMESPACE", hide = true)]
    pub leader_election_namespace: Option<String>,

    /// The provider's ServiceAccount, whose tokens InjectedIdentity configs request through
    /// the TokenRequest API (in POD_NAMESPACE); default: the identity the API server reports
    /// for this process (SelfSubjectReview).
    #[arg(long, env = "SERVICE_ACCOUNT_NAME")]
    pub service_account_name: Option<String>,

    /// Lease duration (controller-runtime's default; shorter only in tests).
    #[arg(long, default_value = "60s", value_parser = duration, hide = true)]
    pub leader_election_lease_duration: Duration,

    /// Renew deadline.
    #[arg(long, default_value = "50s", value_parser = duration, hide = true)]
    pub leader_election_renew_deadline: Duration,

    /// Retry period.
    #[arg(long, default_value = "2s", value_parser = duration, hide = true)]
    pub leader_election_retry_period: Duration,

    /// Split the managed resources into this many shards, each reconciled by the replica
    /// that holds its Lease, so that every replica of the Deployment works (active-active);
    /// 1: no sharding. Every replica must be given the same value.
    #[arg(long, env = "SHARDS", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub shards: u32,

    /// What an MR's shard is computed from: `uid` (an even spread) or `providerconfig`
    /// (every MR of one ProviderConfig in one shard).
    #[arg(long, env = "SHARD_BY", default_value = "uid", value_parser = shard_by)]
    pub shard_by: ShardBy,

    /// Deprecated Upjet flag: accepted and ignored.
    #[arg(long, hide = true)]
    pub provider_ttl: Option<String>,
    /// Deprecated Upjet flag: accepted and ignored.
    #[arg(long, hide = true)]
    pub terraform_version: Option<String>,
    /// Deprecated Upjet flag: accepted and ignored.
    #[arg(long, hide = true)]
    pub terraform_provider_version: Option<String>,
    /// Deprecated Upjet flag: accepted and ignored.
    #[arg(long, hide = true)]
    pub terraform_provider_source: Option<String>,
    /// Deprecated Upjet flag: accepted and ignored.
    #[arg(long, hide = true)]
    pub terraform_native_provider_path: Option<String>,
}

impl ProviderFlags {
    /// The deprecated flags that were given, by name.
    pub fn deprecated_flags_used(&self) -> Vec<&'static str> {
        [
            ("--provider-ttl", self.provider_ttl.is_some()),
            ("--terraform-version", self.terraform_version.is_some()),
            (
                "--terraform-provider-version",
                self.terraform_provider_version.is_some(),
            ),
            (
                "--terraform-provider-source",
                self.terraform_provider_source.is_some(),
            ),
            (
                "--terraform-native-provider-path",
                self.terraform_native_provider_path.is_some(),
            ),
        ]
        .into_iter()
        .filter_map(|(n, used)| used.then_some(n))
        .collect()
    }

    /// The webhook certificate directory after the environment fallbacks.
    pub fn effective_certs_dir(&self) -> PathBuf {
        self.certs_dir
            .clone()
            .or_else(|| std::env::var_os("TLS_SERVER_CERTS_DIR").map(PathBuf::from))
            .or_else(|| std::env::var_os("WEBHOOK_TLS_CERT_DIR").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/tls/server"))
    }

    /// The provider's ServiceAccount when `--service-account-name` names it.
    pub fn service_account(&self) -> Option<crate::providerconfig::identity::ServiceAccountRef> {
        let name = self
            .service_account_name
            .clone()
            .filter(|s| !s.trim().is_empty())?;
        Some(crate::providerconfig::identity::ServiceAccountRef {
            namespace: self.effective_namespace(),
            name,
        })
    }

    /// The namespace of the leader-election Lease.
    pub fn effective_namespace(&self) -> String {
        self.leader_election_namespace
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| {
                std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or_else(|| "crossplane-system".to_string())
    }
}

/// Parses a Go-style bind address (`:8080`, `0.0.0.0:8080`, `127.0.0.1:0`); `0` disables.
pub fn parse_bind_address(s: &str) -> Result<Option<SocketAddr>, String> {
    let s = s.trim();
    if s.is_empty() || s == "0" {
        return Ok(None);
    }
    let full = if s.starts_with(':') {
        format!("0.0.0.0{s}")
    } else {
        s.to_string()
    };
    full.parse::<SocketAddr>()
        .map(Some)
        .map_err(|e| format!("invalid bind address {s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        flags: ProviderFlags,
    }

    #[test]
    fn defaults_match_upstream() {
        let c = Cli::try_parse_from(["p"]).unwrap().flags;
        assert_eq!(c.poll, Duration::from_secs(600));
        assert_eq!(c.sync, Duration::from_secs(3600));
        assert_eq!(c.poll_state_metric, Duration::from_secs(5));
        assert_eq!(c.max_reconcile_rate, 10);
        assert!(!c.leader_election);
        assert!(c.enable_management_policies);
        assert_eq!(c.metrics_bind_address, ":8080");
        assert_eq!(c.health_probe_bind_addr, ":8081");
        assert_eq!(c.webhook_port, 9443);
        assert_eq!(c.min_poll_interval, Duration::from_secs(1));
        assert_eq!(c.leader_election_lease_duration, Duration::from_secs(60));
        assert_eq!(c.leader_election_renew_deadline, Duration::from_secs(50));
        assert_eq!(c.leader_election_retry_period, Duration::from_secs(2));
        assert_eq!((c.shards, c.shard_by), (1, ShardBy::Uid));
        let c = Cli::try_parse_from(["p", "--shards=6", "--shard-by=providerconfig"])
            .unwrap()
            .flags;
        assert_eq!((c.shards, c.shard_by), (6, ShardBy::ProviderConfig));
        assert!(Cli::try_parse_from(["p", "--shards=0"]).is_err());
        assert!(Cli::try_parse_from(["p", "--shard-by=name"]).is_err());
    }

    #[test]
    fn short_flags_bools_and_deprecated() {
        let c = Cli::try_parse_from([
            "p",
            "-d",
            "-l",
            "-s",
            "30m",
            "--poll=1m",
            "--enable-management-policies=false",
            "--terraform-version",
            "1.5",
            "--provider-ttl=100",
        ])
        .unwrap()
        .flags;
        assert!(c.debug && c.leader_election && !c.enable_management_policies);
        assert_eq!(c.sync, Duration::from_secs(1800));
        assert_eq!(c.poll, Duration::from_secs(60));
        assert_eq!(
            c.deprecated_flags_used(),
            ["--provider-ttl", "--terraform-version"]
        );
    }

    #[test]
    fn bind_addresses() {
        assert_eq!(parse_bind_address(":8080").unwrap().unwrap().port(), 8080);
        assert!(parse_bind_address("0").unwrap().is_none());
        assert!(parse_bind_address("127.0.0.1:0").unwrap().is_some());
        assert!(parse_bind_address("nonsense").is_err());
    }
}
