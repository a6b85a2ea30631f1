//! Timing, with a hook for slow calls.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::Layer;

use super::{Around, CommandService, FromFn, Next};
use crate::dispatch::CommandRequest;
use crate::result::CommandResult;

/// A call that took at least the threshold.
#[derive(Debug, Clone)]
pub struct SlowCall {
    /// The command.
    pub command: &'static str,
    /// How long it took.
    pub duration: Duration,
    /// Its trace id, if one was set.
    pub trace_id: Option<String>,
}

type SlowHook = Arc<dyn Fn(&SlowCall) + Send + Sync>;

/// Times each call; a call at or over the threshold is logged at warn level and passed to
/// the slow-call hook.
#[derive(Clone)]
pub struct TimingLayer {
    threshold: Duration,
    on_slow: Option<SlowHook>,
}

impl TimingLayer {
    /// Calls slower than `threshold` are reported.
    pub fn new(threshold: Duration) -> Self {
        TimingLayer {
            threshold,
            on_slow: None,
        }
    }

    /// Runs `hook` for every slow call.
    #[must_use]
    pub fn on_slow(mut self, hook: impl Fn(&SlowCall) + Send + Sync + 'static) -> Self {
        self.on_slow = Some(Arc::new(hook));
        self
    }
}

impl fmt::Debug for TimingLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimingLayer")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

/// The service of [`TimingLayer`].
pub type Timing = FromFn<TimingLayer>;

impl Layer<CommandService> for TimingLayer {
    type Service = Timing;

    fn layer(&self, inner: CommandService) -> Timing {
        FromFn::new(self.clone(), inner)
    }
}

impl Around for TimingLayer {
    type Future = BoxFuture<'static, CommandResult<Value>>;

    fn around(&self, request: CommandRequest, next: Next) -> Self::Future {
        let layer = self.clone();
        let command = request.def.name();
        let trace_id = request.ctx.trace_id().map(str::to_owned);
        Box::pin(async move {
            let started = Instant::now();
            let result = next.run(request).await;
            let duration = started.elapsed();
            if duration >= layer.threshold {
                tracing::warn!(
                    command,
                    duration_ms = duration.as_millis() as u64,
                    "slow command"
                );
                if let Some(hook) = &layer.on_slow {
                    let trace_id = trace_id
                        .or_else(|| result.metadata.as_ref().and_then(|m| m.trace_id.clone()));
                    hook(&SlowCall {
                        command,
                        duration,
                        trace_id,
                    });
                }
            }
            result
        })
    }
}
