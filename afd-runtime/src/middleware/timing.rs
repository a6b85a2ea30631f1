//! Timing, with a hook for slow calls.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::{Layer, Service, ServiceExt};

use super::{CommandStack, take_ready};
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

impl<S> Layer<S> for TimingLayer {
    type Service = Timing<S>;

    fn layer(&self, inner: S) -> Timing<S> {
        Timing {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`TimingLayer`].
#[derive(Clone)]
pub struct Timing<S> {
    inner: S,
    layer: TimingLayer,
}

impl<S: CommandStack> Service<CommandRequest> for Timing<S> {
    type Response = CommandResult<Value>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<CommandResult<Value>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: CommandRequest) -> Self::Future {
        let inner = take_ready(&mut self.inner);
        let layer = self.layer.clone();
        let command = request.def.name();
        let trace_id = request.ctx.trace_id().map(str::to_owned);
        Box::pin(async move {
            let started = Instant::now();
            let result = inner.oneshot(request).await?;
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
            Ok(result)
        })
    }
}
