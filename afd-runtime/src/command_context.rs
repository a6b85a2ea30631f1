//! [`CommandContext`]: what a handler gets besides its input: app state and call details.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error::CommandError;
use crate::progress::{ProgressSink, ProgressUpdate};

type StateMap = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// The context a command runs in: typed app state, the trace id of the call, a
/// cancellation token, and runtime switches. Cheap to clone (one `Arc`).
///
/// A long handler can watch [`CommandContext::cancelled`] (or poll
/// [`CommandContext::is_cancelled`]) to stop early; the dispatcher reports a cancelled call
/// as `CANCELLED`, never as a success.
///
/// ```
/// use afd_runtime::CommandContext;
///
/// struct Db { url: String }
///
/// let ctx = CommandContext::new().with_state(Db { url: "sqlite::memory:".into() });
/// assert_eq!(ctx.state::<Db>().unwrap().url, "sqlite::memory:");
/// assert!(ctx.state::<String>().is_err());
/// ```
#[derive(Clone, Default)]
pub struct CommandContext {
    inner: Arc<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    state: StateMap,
    trace_id: Option<String>,
    session: Option<Arc<str>>,
    dev_mode: bool,
    cancel: CancellationToken,
    progress: Option<Arc<dyn ProgressSink>>,
}

impl CommandContext {
    /// An empty context.
    pub fn new() -> Self {
        CommandContext::default()
    }

    /// Adds a value of app state, replacing any earlier value of the same type.
    #[must_use]
    pub fn with_state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.with_shared_state(Arc::new(value))
    }

    /// Adds shared app state, replacing any earlier value of the same type.
    #[must_use]
    pub fn with_shared_state<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        Arc::make_mut(&mut self.inner)
            .state
            .insert(TypeId::of::<T>(), value);
        self
    }

    /// Sets the trace id of the call.
    #[must_use]
    pub fn with_trace_id(mut self, trace_id: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.inner).trace_id = Some(trace_id.into());
        self
    }

    /// Sets the session the call belongs to (a handle from
    /// [`Dispatcher::open_session`](crate::Dispatcher::open_session) or afd-context-enter):
    /// its active context and scope decide what the call may run.
    #[must_use]
    pub fn with_session(mut self, session: impl Into<Arc<str>>) -> Self {
        Arc::make_mut(&mut self.inner).session = Some(session.into());
        self
    }

    /// The session the call belongs to, if any.
    pub fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }

    /// Uses `token` as the call's cancellation token.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        Arc::make_mut(&mut self.inner).cancel = token;
        self
    }

    /// A context for a sub-call (a batch entry, a pipeline step): the same state, and a
    /// child cancellation token, cancelled with this one or on its own.
    #[must_use]
    pub fn child(&self) -> Self {
        let token = self.inner.cancel.child_token();
        self.clone().with_cancellation(token)
    }

    /// The call's cancellation token.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await;
    }

    /// Sends the call's progress reports to `sink` (the surface running the call sets it).
    #[must_use]
    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        Arc::make_mut(&mut self.inner).progress = Some(sink);
        self
    }

    /// Whether the caller asked for progress reports: a handler may skip computing them
    /// when not.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress.is_some()
    }

    /// Reports progress to the caller: `progress` out of `total` (when known), with an
    /// optional message. Does nothing when nobody asked for progress; never fails.
    ///
    /// ```
    /// use afd_runtime::CommandContext;
    ///
    /// # async fn demo(ctx: &CommandContext) {
    /// for step in 1..=3 {
    ///     ctx.report_progress(f64::from(step), Some(3.0), Some(format!("step {step}"))).await;
    /// }
    /// # }
    /// ```
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        if let Some(sink) = &self.inner.progress {
            sink.report(ProgressUpdate::new(progress, total, message))
                .await;
        }
    }

    /// Turns dev mode on or off: in dev mode, internal errors carry the panic message.
    #[must_use]
    pub fn with_dev_mode(mut self, on: bool) -> Self {
        Arc::make_mut(&mut self.inner).dev_mode = on;
        self
    }

    /// The app state of type `T`.
    ///
    /// # Errors
    ///
    /// `INTERNAL_ERROR` when no state of that type was added: the host forgot to provide
    /// it, which the caller cannot fix, so handlers can simply use `?`.
    pub fn state<T: Send + Sync + 'static>(&self) -> Result<&T, CommandError> {
        self.try_state::<T>().ok_or_else(|| {
            CommandError::internal(format!(
                "no state of type `{}` was provided to the command context",
                type_name::<T>()
            ))
        })
    }

    /// The app state of type `T`, if present.
    pub fn try_state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner
            .state
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }

    /// The trace id of the call, if one was set.
    pub fn trace_id(&self) -> Option<&str> {
        self.inner.trace_id.as_deref()
    }

    /// Whether dev mode is on.
    pub fn dev_mode(&self) -> bool {
        self.inner.dev_mode
    }
}

impl fmt::Debug for CommandContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandContext")
            .field("state_entries", &self.inner.state.len())
            .field("trace_id", &self.inner.trace_id)
            .field("session", &self.inner.session)
            .field("dev_mode", &self.inner.dev_mode)
            .field("cancelled", &self.inner.cancel.is_cancelled())
            .field("progress", &self.inner.progress.is_some())
            .finish()
    }
}
