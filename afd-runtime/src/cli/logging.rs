//! The process's `tracing` subscriber, installed by the command line when the app set
//! none: one line per event on stderr (stdout carries results, or MCP on stdio), as text
//! or as a JSON object (`--log-format json`, `AFD_LOG_FORMAT`), filtered by `RUST_LOG`.

use std::str::FromStr;

use tracing_subscriber::EnvFilter;

/// Where the format is read when `--log-format` is not given.
pub(super) const LOG_FORMAT_ENV: &str = "AFD_LOG_FORMAT";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// `2026-11-27T03:18:28Z  INFO afd_runtime::ops: draining in_flight=1`.
    #[default]
    Text,
    /// `{"timestamp":"…","level":"INFO","fields":{"message":"draining","in_flight":1},"target":"…"}`.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("'{other}' is not a log format: use text or json")),
        }
    }
}

/// Installs the subscriber unless the app installed one: `format`, events at `default`
/// and above unless `RUST_LOG` says otherwise. Whether it was installed.
pub(super) fn install(format: LogFormat, default: &str) -> bool {
    if tracing::dispatcher::has_been_set() {
        return false;
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match format {
        LogFormat::Text => builder.with_ansi(false).try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    installed.is_ok()
}
