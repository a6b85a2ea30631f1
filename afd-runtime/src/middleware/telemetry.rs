//! A hook that receives one event per call: of a command, a built-in tool or a context
//! operation.

use std::fmt;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tower::Layer;

use super::{Around, CommandService, FromFn, Next};
use crate::dispatch::{CallKind, CommandRequest};
use crate::result::CommandResult;
use crate::text::iso8601;

/// What the telemetry hook receives for each call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TelemetryEvent {
    /// The command (its canonical name), or the built-in tool.
    pub command: &'static str,
    /// The name the caller used: an alias or deprecated name where it used one, else the
    /// canonical name.
    pub requested: String,
    /// A command of the catalog, or a built-in tool or context operation.
    pub kind: CallKind,
    /// When the call started, ISO 8601.
    pub started_at: String,
    /// How long it took.
    pub duration_ms: f64,
    /// Whether it succeeded.
    pub success: bool,
    /// Its error code, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Its trace id, if one was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

type Sink = Arc<dyn Fn(TelemetryEvent) + Send + Sync>;

/// Sends a [`TelemetryEvent`] to a hook after every call.
#[derive(Clone)]
pub struct TelemetryLayer {
    sink: Sink,
}

impl TelemetryLayer {
    /// Sends events to `sink`. Keep it quick: it runs on the call's task.
    pub fn new(sink: impl Fn(TelemetryEvent) + Send + Sync + 'static) -> Self {
        TelemetryLayer {
            sink: Arc::new(sink),
        }
    }
}

impl fmt::Debug for TelemetryLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetryLayer").finish_non_exhaustive()
    }
}

/// The service of [`TelemetryLayer`].
pub type Telemetry = FromFn<TelemetryLayer>;

impl Layer<CommandService> for TelemetryLayer {
    type Service = Telemetry;

    fn layer(&self, inner: CommandService) -> Telemetry {
        FromFn::new(self.clone(), inner)
    }
}

impl Around for TelemetryLayer {
    type Future = BoxFuture<'static, CommandResult<Value>>;

    fn around(&self, request: CommandRequest, next: Next) -> Self::Future {
        let sink = self.sink.clone();
        let command = request.def.name();
        let requested = request.requested_name().to_owned();
        let kind = request.kind();
        let ctx_trace = request.ctx.trace_id().map(str::to_owned);
        Box::pin(async move {
            let started_at = SystemTime::now();
            let started = Instant::now();
            let result = next.run(request).await;
            sink(TelemetryEvent {
                command,
                requested,
                kind,
                started_at: iso8601(started_at),
                duration_ms: started.elapsed().as_secs_f64() * 1000.0,
                success: result.success,
                error_code: result.error.as_ref().map(|error| error.code.to_string()),
                trace_id: result
                    .metadata
                    .as_ref()
                    .and_then(|m| m.trace_id.clone())
                    .or(ctx_trace),
            });
            result
        })
    }
}
