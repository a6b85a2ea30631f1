//! The process's `tracing` subscriber, installed by the command line when the app set
//! none: one line per event on stderr (stdout carries results, or MCP on stdio), as text
//! or as a JSON object (`--log-format json`, `AFD_LOG_FORMAT`), filtered by `RUST_LOG`.

use std::str::FromStr;

use tracing_subscriber::EnvFilter;

/// Where the format is read when `--log-format` is not given.
#[cfg(feature = "mcp")]
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
/// and above unless `RUST_LOG` says otherwise, and (feature `otel`) afd's spans to `otlp`.
/// Whether it was installed.
pub(super) fn install(format: LogFormat, default: &str, otlp: Option<&Otlp>) -> bool {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    if tracing::dispatcher::has_been_set() {
        return false;
    }
    // With traces on, the JSON lines carry the trace and span ids of the request they were
    // written in: the lines take afd's spans (never printed as lines of their own) unless
    // RUST_LOG says otherwise of them.
    let spans = if otlp.is_some() && format == LogFormat::Json {
        #[cfg(feature = "otel")]
        crate::telemetry::log_ids();
        "info"
    } else {
        "off"
    };
    let spans = format!("{}={spans}", crate::telemetry::TARGET);
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if directives.contains(crate::telemetry::TARGET) => {
            EnvFilter::new(directives)
        }
        Ok(directives) if !directives.trim().is_empty() => {
            EnvFilter::new(format!("{directives},{spans}"))
        }
        _ => EnvFilter::new(format!("{default},{spans}")),
    };
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let lines = match format {
        LogFormat::Text => lines.with_ansi(false).boxed(),
        LogFormat::Json => lines
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
    };
    let registry = tracing_subscriber::registry().with(lines.with_filter(filter));
    #[cfg(feature = "otel")]
    let registry = registry.with(otlp.map(|otlp| {
        otlp.layer().with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target(crate::telemetry::TARGET, tracing::Level::TRACE),
        )
    }));
    registry.try_init().is_ok()
}

/// The OTLP trace pipeline; without the feature `otel`, never one.
#[cfg(feature = "otel")]
pub(super) type Otlp = crate::telemetry::Otlp;

/// Without the feature `otel` there is no OTLP pipeline.
#[cfg(not(feature = "otel"))]
pub(super) type Otlp = std::convert::Infallible;
