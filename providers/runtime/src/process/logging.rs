//! Structured logs through `tracing`: text or JSON, `--debug` for debug level; `RUST_LOG`
//! overrides the filter.

use tracing_subscriber::EnvFilter;

use super::flags::LogFormat;

/// Installs the global subscriber (once; later calls are ignored, which tests rely on).
pub fn init_logging(debug: bool, format: LogFormat) {
    let default = if debug {
        "debug,hyper=info,h2=info,tower=info,rustls=info"
    } else {
        "info"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
