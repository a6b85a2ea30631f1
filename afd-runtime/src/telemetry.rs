//! Traces: the spans of a request named and described as OpenTelemetry's MCP semantic
//! conventions say, the W3C trace context a caller sends (in `params._meta`, SEP-414, or in
//! HTTP headers), and, with the feature `otel`, their export by OTLP as the standard
//! `OTEL_*` environment variables configure it.
//!
//! Spans are `tracing` spans of the target [`TARGET`] with the conventions' attribute
//! names as fields (`mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, …) and
//! `tracing-opentelemetry`'s `otel.name`, `otel.kind` and `otel.status_code`. Arguments and
//! results are never recorded.

use serde_json::{Map, Value};

/// The target of afd's spans (`RUST_LOG=afd::otel=info` shows them in the logs too).
pub const TARGET: &str = "afd::otel";

/// Whether a subscriber takes afd's spans: when not, no span is built and a request's
/// origin is not read.
pub fn enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// Whether spans record their own `trace_id` and `span_id` as fields, for JSON log lines
/// (set by the command line when it writes them; not otherwise, as the exported spans
/// carry their ids already).
#[cfg(feature = "otel")]
static LOG_IDS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes spans record their ids as fields, for log lines written within them.
#[cfg(feature = "otel")]
pub(crate) fn log_ids() {
    LOG_IDS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A W3C trace context as a caller sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`: version, trace id, parent span id, flags.
    pub traceparent: String,
    /// `tracestate`, if sent.
    pub tracestate: Option<String>,
    /// `baggage`, if sent.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// The context in a request's `_meta` (SEP-414): `None` without a `traceparent`.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<TraceContext> {
        let text = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(TraceContext {
            traceparent: text("traceparent")?,
            tracestate: text("tracestate"),
            baggage: text("baggage"),
        })
    }

    /// The context in headers read by `header` (by lower-case name): `None` without a
    /// `traceparent`.
    pub fn from_headers(header: impl Fn(&str) -> Option<String>) -> Option<TraceContext> {
        Some(TraceContext {
            traceparent: header("traceparent")?,
            tracestate: header("tracestate"),
            baggage: header("baggage"),
        })
    }
}

/// Where a request came from, as its span records it.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The trace context of the HTTP request's headers.
    pub headers: Option<TraceContext>,
    /// `mcp.session.id`: the transport's session.
    pub session: Option<String>,
    /// `mcp.protocol.version`.
    pub protocol: Option<String>,
    /// `client.address`.
    pub client: Option<String>,
}

/// Makes `span` the child of the context in `meta` (else in the headers), with a link to
/// the headers' context when both are present; records `trace_id` and `span_id` for logs.
pub fn adopt(span: &tracing::Span, meta: Option<&TraceContext>, headers: Option<&TraceContext>) {
    #[cfg(feature = "otel")]
    otlp::adopt(span, meta, headers);
    #[cfg(not(feature = "otel"))]
    let _ = (span, meta, headers);
}

/// The current span's context as `_meta` members (`traceparent`, `tracestate`,
/// `baggage`), for a request this process sends on to another server.
pub fn inject(meta: &mut Map<String, Value>) {
    #[cfg(feature = "otel")]
    otlp::inject(meta);
    #[cfg(not(feature = "otel"))]
    let _ = meta;
}

/// Records on `span` that its operation failed with the conventions' `error.type`.
pub fn fail(span: &tracing::Span, error_type: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
}

#[cfg(feature = "otel")]
pub use otlp::{Otlp, metric_reader, metrics_requested, traces_requested};

#[cfg(feature = "otel")]
mod otlp {
    use std::collections::HashMap;

    use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
    use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
    use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use serde_json::{Map, Value};
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    use super::TraceContext;

    fn propagator() -> TextMapCompositePropagator {
        TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ])
    }

    fn extract(context: &TraceContext) -> opentelemetry::Context {
        let mut carrier: HashMap<String, String> = HashMap::new();
        carrier.insert("traceparent".to_owned(), context.traceparent.clone());
        if let Some(state) = &context.tracestate {
            carrier.insert("tracestate".to_owned(), state.clone());
        }
        if let Some(baggage) = &context.baggage {
            carrier.insert("baggage".to_owned(), baggage.clone());
        }
        propagator().extract(&carrier)
    }

    pub(super) fn adopt(
        span: &tracing::Span,
        meta: Option<&TraceContext>,
        headers: Option<&TraceContext>,
    ) {
        if span.is_disabled() {
            return;
        }
        let meta = meta
            .map(extract)
            .filter(|cx| cx.span().span_context().is_valid());
        let headers = headers
            .map(extract)
            .filter(|cx| cx.span().span_context().is_valid());
        match (meta, headers) {
            (Some(parent), Some(linked)) => {
                let _ = span.set_parent(parent);
                span.add_link(linked.span().span_context().clone());
            }
            (Some(parent), None) | (None, Some(parent)) => {
                let _ = span.set_parent(parent);
            }
            (None, None) => {}
        }
        if !super::LOG_IDS.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let context = span.context();
        let own = context.span().span_context().clone();
        if own.is_valid() {
            span.record("trace_id", own.trace_id().to_string());
            span.record("span_id", own.span_id().to_string());
        }
    }

    pub(super) fn inject(meta: &mut Map<String, Value>) {
        let context = tracing::Span::current().context();
        if !context.span().span_context().is_valid() {
            return;
        }
        let mut carrier: HashMap<String, String> = HashMap::new();
        propagator().inject_context(&context, &mut carrier);
        for (key, value) in carrier {
            meta.insert(key, Value::String(value));
        }
    }

    /// Whether a variable is set to something.
    fn set(name: &str) -> bool {
        std::env::var(name).is_ok_and(|value| !value.trim().is_empty())
    }

    /// Whether the SDK is switched off (`OTEL_SDK_DISABLED=true`).
    fn disabled() -> bool {
        std::env::var("OTEL_SDK_DISABLED").is_ok_and(|value| value.trim() == "true")
    }

    /// Whether the environment asks for traces by OTLP: an OTLP endpoint is set
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), or
    /// `OTEL_TRACES_EXPORTER=otlp`; and neither `OTEL_TRACES_EXPORTER=none` nor
    /// `OTEL_SDK_DISABLED=true`.
    pub fn traces_requested() -> bool {
        let exporter = std::env::var("OTEL_TRACES_EXPORTER").unwrap_or_default();
        !disabled()
            && exporter.trim() != "none"
            && (exporter.trim() == "otlp"
                || set("OTEL_EXPORTER_OTLP_ENDPOINT")
                || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    }

    /// Whether the environment asks for metrics by OTLP: `OTEL_METRICS_EXPORTER=otlp`, or
    /// an OTLP endpoint for metrics (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`).
    pub fn metrics_requested() -> bool {
        let exporter = std::env::var("OTEL_METRICS_EXPORTER").unwrap_or_default();
        !disabled()
            && exporter.trim() != "none"
            && (exporter.trim() == "otlp" || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
    }

    /// The reader that exports metrics by OTLP every `OTEL_METRIC_EXPORT_INTERVAL` (60 s
    /// by default), for the meter provider.
    ///
    /// # Errors
    ///
    /// The exporter cannot be made (a malformed endpoint).
    pub fn metric_reader() -> Result<
        opentelemetry_sdk::metrics::PeriodicReader<opentelemetry_otlp::MetricExporter>,
        String,
    > {
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .build()
            .map_err(|error| format!("the OTLP metrics exporter: {error}"))?;
        Ok(opentelemetry_sdk::metrics::PeriodicReader::builder(exporter).build())
    }

    /// The OTLP trace pipeline: its `tracing` layer, and the provider to flush at exit.
    #[derive(Debug, Clone)]
    pub struct Otlp {
        provider: SdkTracerProvider,
    }

    impl Otlp {
        /// A batch exporter to the OTLP endpoint the `OTEL_*` variables name (HTTP;
        /// protobuf, or JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), the service
        /// named by `OTEL_SERVICE_NAME` (default: `service`).
        ///
        /// # Errors
        ///
        /// The exporter cannot be made.
        pub fn from_env(service: &str) -> Result<Otlp, String> {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .build()
                .map_err(|error| format!("the OTLP span exporter: {error}"))?;
            let mut resource = opentelemetry_sdk::Resource::builder();
            if !set("OTEL_SERVICE_NAME") {
                resource = resource.with_service_name(service.to_owned());
            }
            let provider = SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource.build())
                .build();
            Ok(Otlp { provider })
        }

        /// A pipeline of the app's own provider: its exporters, sampler and resource.
        pub fn from_provider(provider: SdkTracerProvider) -> Otlp {
            Otlp { provider }
        }

        /// The layer that turns afd's spans into OpenTelemetry spans.
        pub fn layer<S>(
            &self,
        ) -> tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>
        where
            S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
        {
            // The conventions' attributes only: not the code location, thread and target
            // of the span, which say nothing of the request. Nothing in afd reads the
            // active OpenTelemetry context, so no span sets it on each poll.
            tracing_opentelemetry::layer()
                .with_tracer(self.provider.tracer("afd"))
                .with_tracked_inactivity(false)
                .with_location(false)
                .with_threads(false)
                .with_target(false)
                .with_context_activation(false)
        }

        /// Sends the spans still queued and stops the exporter.
        pub fn shutdown(&self) {
            if let Err(error) = self.provider.force_flush() {
                tracing::warn!(%error, "OTLP: the last spans could not be sent");
            }
            let _ = self.provider.shutdown();
        }
    }
}
