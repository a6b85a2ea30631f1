//! A `tracing` span per command, and a trace id on every call and result.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::Layer;
use tracing::Instrument;

use super::{Around, CommandService, FromFn, Next};
use crate::dispatch::{CallKind, CommandRequest};
use crate::result::CommandResult;

/// Gives each call a trace id (keeping one the caller set), runs it in a `command` span,
/// logs its outcome at debug level, and returns the id in `metadata.traceId`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceLayer;

impl TraceLayer {
    /// The layer.
    pub fn new() -> Self {
        TraceLayer
    }
}

/// The service of [`TraceLayer`].
pub type Trace = FromFn<TraceLayer>;

impl Layer<CommandService> for TraceLayer {
    type Service = Trace;

    fn layer(&self, inner: CommandService) -> Trace {
        FromFn::new(*self, inner)
    }
}

/// A new 16-hex-digit trace id.
pub(crate) fn new_trace_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    format!("{:016x}", hasher.finish())
}

impl Around for TraceLayer {
    type Future = BoxFuture<'static, CommandResult<Value>>;

    fn around(&self, mut request: CommandRequest, next: Next) -> Self::Future {
        let trace_id = request
            .ctx
            .trace_id()
            .map_or_else(new_trace_id, str::to_owned);
        request.ctx = request.ctx.clone().with_trace_id(trace_id.clone());
        let name = request.def.name();
        let kind = match request.kind() {
            CallKind::Command => "command",
            CallKind::Meta => "meta",
        };
        let span = if request.requested.is_some() {
            let requested = request.requested_name();
            tracing::info_span!("command", command = name, requested, kind, trace_id = %trace_id)
        } else {
            tracing::info_span!("command", command = name, kind, trace_id = %trace_id)
        };
        Box::pin(
            async move {
                let mut result = next.run(request).await;
                match &result.error {
                    None => tracing::debug!("command succeeded"),
                    Some(error) => tracing::debug!(code = %error.code, "command failed"),
                }
                result.metadata_mut().trace_id = Some(trace_id);
                result
            }
            .instrument(span),
        )
    }
}
