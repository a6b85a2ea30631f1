//! `tracing` events of a handler forwarded to its caller: the call's [`LogSink`] is kept in
//! a task-local while the handler runs (only when the caller asked for such events), and
//! [`ClientLogLayer`] hands each event at or above the caller's level to it.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::Either;

use super::log::LogSink;

tokio::task_local! {
    static CALL_LOG: Arc<dyn LogSink>;
}

/// Runs `future` with `sink` as the destination of its `tracing` events, when the caller
/// asked for them; otherwise runs it as it is (no task-local, nothing to look up).
pub(crate) fn scope_tracing<F: Future>(
    sink: Option<&Arc<dyn LogSink>>,
    future: F,
) -> impl Future<Output = F::Output> {
    match sink.filter(|sink| sink.wants_tracing()) {
        Some(sink) => Either::Left(CALL_LOG.scope(sink.clone(), future)),
        None => Either::Right(future),
    }
}

/// [`scope_tracing`] for a handler that runs on a thread of its own (a blocking handler on
/// tokio's blocking pool): runs `work` with `sink` as the destination of its `tracing`
/// events, when the caller asked for them.
pub(crate) fn scope_tracing_sync<R>(
    sink: Option<&Arc<dyn LogSink>>,
    work: impl FnOnce() -> R,
) -> R {
    match sink.filter(|sink| sink.wants_tracing()) {
        Some(sink) => CALL_LOG.sync_scope(sink.clone(), work),
        None => work(),
    }
}

#[cfg(feature = "mcp")]
pub use layer::ClientLogLayer;

#[cfg(feature = "mcp")]
mod layer {
    use std::fmt::{self, Write as _};

    use serde_json::{Map, Value, json};
    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, Layer};

    use super::CALL_LOG;
    use crate::client::log::{LogLevel, LogMessage};

    /// A `tracing_subscriber` layer that sends the `tracing` events of a running command to
    /// the client that called it (`notifications/message` over MCP), when that client set a
    /// log level and the event is at or above it. Outside a call, or when no client asked,
    /// an event costs one task-local lookup. It never writes anywhere itself.
    ///
    /// ```
    /// use tracing_subscriber::prelude::*;
    ///
    /// // Logs on stderr as usual, and to the client that called a running command.
    /// tracing_subscriber::registry()
    ///     .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
    ///     .with(afd_runtime::client::ClientLogLayer::new())
    ///     .init();
    /// ```
    #[derive(Debug, Clone, Copy, Default)]
    pub struct ClientLogLayer {
        _private: (),
    }

    impl ClientLogLayer {
        /// The layer.
        pub fn new() -> Self {
            ClientLogLayer::default()
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for ClientLogLayer {
        fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
            let metadata = event.metadata();
            let level = LogLevel::from_tracing(metadata.level());
            let _ = CALL_LOG.try_with(|sink| {
                if sink.threshold().is_none_or(|threshold| level < threshold) {
                    return;
                }
                let mut fields = Fields::default();
                event.record(&mut fields);
                let data = match (fields.message, fields.rest.is_empty()) {
                    (Some(message), true) => Value::String(message),
                    (message, _) => {
                        let mut map = fields.rest;
                        if let Some(message) = message {
                            map.insert("message".into(), json!(message));
                        }
                        Value::Object(map)
                    }
                };
                sink.send_later(LogMessage::new(level, data).with_logger(metadata.target()));
            });
        }
    }

    /// An event's fields: its message, and the rest as JSON.
    #[derive(Default)]
    struct Fields {
        message: Option<String>,
        rest: Map<String, Value>,
    }

    impl Visit for Fields {
        fn record_str(&mut self, field: &Field, value: &str) {
            self.put(field, json!(value));
        }
        fn record_i64(&mut self, field: &Field, value: i64) {
            self.put(field, json!(value));
        }
        fn record_u64(&mut self, field: &Field, value: u64) {
            self.put(field, json!(value));
        }
        fn record_f64(&mut self, field: &Field, value: f64) {
            self.put(field, json!(value));
        }
        fn record_bool(&mut self, field: &Field, value: bool) {
            self.put(field, json!(value));
        }
        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            let mut text = String::new();
            let _ = write!(text, "{value:?}");
            self.put(field, Value::String(text));
        }
    }

    impl Fields {
        fn put(&mut self, field: &Field, value: Value) {
            if field.name() == "message" {
                self.message = Some(match value {
                    Value::String(text) => text,
                    other => other.to_string(),
                });
            } else {
                self.rest.insert(field.name().to_owned(), value);
            }
        }
    }
}
