//! Metrics: what the server records (the MCP semantic conventions' operation and session
//! durations, and afd's own counters), through the OpenTelemetry metrics API, and the
//! Prometheus text they are read as (feature `metrics`).
//!
//! Nothing is recorded until [`install`] is given a meter provider; without the feature
//! every recording function is an empty inline function. Label values are bounded: a tool
//! or command name the server does not know is recorded as [`OTHER`], a method outside
//! MCP's as [`OTHER`] too, and no session id or user is ever an attribute.
//!
//! | Instrument | Kind, unit | Attributes |
//! |---|---|---|
//! | `mcp.server.operation.duration` | histogram, s | `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`, `network.transport`, `error.type` |
//! | `mcp.server.session.duration` | histogram, s | `network.transport`, `error.type` |
//! | `afd.command.calls` | counter | `afd.command.name`, `afd.outcome` |
//! | `afd.sessions.active` | up-down counter | `network.transport` |
//! | `afd.rate_limit.decisions` | counter | `afd.command.name`, `afd.decision` |
//! | `afd.store.errors` | counter | `afd.store` (`sessions`, `usage`) |
//! | `afd.search.duration` | histogram, s | `afd.search.mode` (`lexical`, `semantic`) |
//!
//! Prometheus names them as usual for OpenTelemetry: dots become underscores, a unit of
//! seconds adds `_seconds`, a counter `_total` (`mcp_server_operation_duration_seconds`,
//! `afd_command_calls_total`).

/// The value a name the server does not know is recorded as (the conventions' own).
pub const OTHER: &str = "_OTHER";

/// The buckets the MCP semantic conventions give both duration histograms, in seconds.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The methods of MCP's specification, the only values of `mcp.method.name` (anything
/// else is [`OTHER`]).
const METHODS: &[&str] = &[
    "completion/complete",
    "elicitation/create",
    "initialize",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/progress",
    "notifications/roots/list_changed",
    "ping",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/templates/list",
    "resources/unsubscribe",
    "roots/list",
    "sampling/createMessage",
    "server/discover",
    "tasks/cancel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tools/call",
    "tools/list",
];

/// `method` if MCP defines it, else [`OTHER`].
pub fn bounded_method(method: &str) -> &'static str {
    METHODS
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or(OTHER)
}

/// How the server was reached: the conventions' `network.transport` (`pipe` for stdio).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio.
    Pipe,
    /// Streamable HTTP.
    Tcp,
}

impl Transport {
    /// The attribute's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

#[cfg(feature = "metrics")]
pub use imp::{Prometheus, install, prometheus};

#[cfg(feature = "metrics")]
mod imp {
    use std::sync::OnceLock;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _, UpDownCounter};
    use opentelemetry_sdk::metrics::SdkMeterProvider;

    use super::{DURATION_BUCKETS, Transport};

    /// Where the instruments are, once installed.
    pub(super) static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

    pub(super) struct Instruments {
        pub(super) operation: Histogram<f64>,
        pub(super) session: Histogram<f64>,
        pub(super) calls: Counter<u64>,
        pub(super) active: UpDownCounter<i64>,
        pub(super) rate_limit: Counter<u64>,
        pub(super) store_errors: Counter<u64>,
        pub(super) search: Histogram<f64>,
        /// Kept so that its readers keep reading.
        pub(super) provider: SdkMeterProvider,
    }

    /// Records from now on into `provider`'s meter `afd` (a provider with a Prometheus
    /// reader, see [`prometheus()`], an OTLP one, or both). The first call wins: `false`
    /// when instruments were already installed.
    pub fn install(provider: SdkMeterProvider) -> bool {
        let meter = provider.meter("afd");
        let instruments = Instruments {
            operation: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description(
                    "The duration of an MCP request or notification, as the server saw it",
                )
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            session: meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("The duration of an MCP session, as the server saw it")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            calls: meter
                .u64_counter("afd.command.calls")
                .with_unit("{call}")
                .with_description(
                    "Commands run, by command and outcome (success or the error code)",
                )
                .build(),
            active: meter
                .i64_up_down_counter("afd.sessions.active")
                .with_unit("{session}")
                .with_description("MCP sessions open now")
                .build(),
            rate_limit: meter
                .u64_counter("afd.rate_limit.decisions")
                .with_unit("{call}")
                .with_description(
                    "Rate limit decisions, by command and decision (allowed, limited)",
                )
                .build(),
            store_errors: meter
                .u64_counter("afd.store.errors")
                .with_unit("{error}")
                .with_description("Operations of the session or usage store that failed")
                .build(),
            search: meter
                .f64_histogram("afd.search.duration")
                .with_unit("s")
                .with_description("The duration of a catalog search, by mode (lexical, semantic)")
                .with_boundaries(vec![
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                ])
                .build(),
            provider,
        };
        INSTRUMENTS.set(instruments).is_ok()
    }

    /// A Prometheus registry and the reader that fills it from a meter provider: give
    /// the reader to the provider ([`SdkMeterProvider::builder`]'s `with_reader`), then
    /// [`install`] the provider, and serve [`Prometheus::render`].
    ///
    /// # Errors
    ///
    /// The exporter could not be made.
    pub fn prometheus() -> Result<(Prometheus, opentelemetry_prometheus::PrometheusExporter), String>
    {
        let registry = prometheus::Registry::new();
        let exporter = opentelemetry_prometheus::exporter()
            .with_registry(registry.clone())
            .scope_info_enabled(false)
            .build()
            .map_err(|error| format!("the Prometheus exporter: {error}"))?;
        Ok((Prometheus { registry }, exporter))
    }

    /// The metrics as Prometheus reads them.
    #[derive(Clone, Debug)]
    pub struct Prometheus {
        registry: prometheus::Registry,
    }

    impl Prometheus {
        /// The text exposition format (version 0.0.4) of every metric now.
        pub fn render(&self) -> String {
            use prometheus::Encoder as _;
            let mut text = Vec::new();
            if let Err(error) =
                prometheus::TextEncoder::new().encode(&self.registry.gather(), &mut text)
            {
                tracing::warn!(%error, "could not encode the metrics");
            }
            String::from_utf8(text).unwrap_or_default()
        }

        /// The content type of [`render`](Prometheus::render)'s text.
        pub fn content_type(&self) -> &'static str {
            "text/plain; version=0.0.4; charset=utf-8"
        }
    }

    pub(super) fn transport(transport: Transport) -> KeyValue {
        KeyValue::new("network.transport", transport.as_str())
    }
}

/// Records one MCP request or notification: its method (bounded), the tool it called
/// (already bounded by the caller: a name it knows, else [`OTHER`]), and the error type
/// (`tool_error` for a tool result with `isError`, else the JSON-RPC code), if it failed.
#[inline]
pub fn operation(
    method: &str,
    tool: Option<&str>,
    transport: Transport,
    error: Option<&str>,
    seconds: f64,
) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        use opentelemetry::KeyValue;
        let mut attributes = Vec::with_capacity(5);
        attributes.push(KeyValue::new("mcp.method.name", bounded_method(method)));
        if let Some(tool) = tool {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        attributes.push(imp::transport(transport));
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error.to_owned()));
        }
        instruments.operation.record(seconds, &attributes);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (method, tool, transport, error, seconds);
}

/// Records one command run: `command` (a registered name, else [`OTHER`]) and its outcome
/// (`success`, or the error code).
#[inline]
pub fn command_call(command: &'static str, outcome: &str) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        use opentelemetry::KeyValue;
        instruments.calls.add(
            1,
            &[
                KeyValue::new("afd.command.name", command),
                KeyValue::new("afd.outcome", outcome.to_owned()),
            ],
        );
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (command, outcome);
}

/// Records that a session opened.
#[inline]
pub fn session_opened(transport: Transport) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        instruments.active.add(1, &[imp::transport(transport)]);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = transport;
}

/// Records that a session closed after `seconds`; `error` when it ended by one (`expired`).
#[inline]
pub fn session_closed(transport: Transport, seconds: f64, error: Option<&'static str>) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        use opentelemetry::KeyValue;
        instruments.active.add(-1, &[imp::transport(transport)]);
        let mut attributes = vec![imp::transport(transport)];
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error));
        }
        instruments.session.record(seconds, &attributes);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (transport, seconds, error);
}

/// Records a rate-limit decision on a call of `command` (a registered name).
#[inline]
pub fn rate_limit(command: &'static str, allowed: bool) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        use opentelemetry::KeyValue;
        instruments.rate_limit.add(
            1,
            &[
                KeyValue::new("afd.command.name", command),
                KeyValue::new("afd.decision", if allowed { "allowed" } else { "limited" }),
            ],
        );
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (command, allowed);
}

/// The store whose operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// The session store.
    Sessions,
    /// The usage statistics' store.
    Usage,
}

/// Records a failed operation of `store`.
#[inline]
pub fn store_error(store: Store) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        use opentelemetry::KeyValue;
        let name = match store {
            Store::Sessions => "sessions",
            Store::Usage => "usage",
        };
        instruments
            .store_errors
            .add(1, &[KeyValue::new("afd.store", name)]);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = store;
}

/// Records a catalog search that took `seconds`, ranked with the semantic layer or not.
#[inline]
pub fn search(semantic: bool, seconds: f64) {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get() {
        use opentelemetry::KeyValue;
        let mode = if semantic { "semantic" } else { "lexical" };
        instruments
            .search
            .record(seconds, &[KeyValue::new("afd.search.mode", mode)]);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (semantic, seconds);
}

/// Has the readers export what the instruments hold now (an OTLP reader sends it at
/// once): call it before the process exits. Blocking.
pub fn flush() {
    #[cfg(feature = "metrics")]
    if let Some(instruments) = imp::INSTRUMENTS.get()
        && let Err(error) = instruments.provider.force_flush()
    {
        tracing::debug!(%error, "metrics: the last export failed");
    }
}

/// Whether instruments are installed (recording costs nothing otherwise).
#[inline]
pub fn is_installed() -> bool {
    #[cfg(feature = "metrics")]
    return imp::INSTRUMENTS.get().is_some();
    #[cfg(not(feature = "metrics"))]
    false
}
