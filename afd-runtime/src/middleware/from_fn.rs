//! [`from_fn`]: a layer made of an async function that runs around each call, and
//! [`Next`], the rest of the stack that the function calls. The built-in layers are
//! written on it too.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use futures_util::future::NeverError;
use serde_json::Value;
use tower::{Layer, Service};

use crate::dispatch::{CommandRequest, CommandService};
use crate::result::CommandResult;

/// A layer that runs `f` around each call: `f` gets the request and [`Next`], may change
/// the request, call `next.run(request)` (or not, to answer itself), and look at or change
/// the result.
///
/// `f` is called once per call, on the caller's task; the future it returns is the call.
/// The layer adds no boxing of its own: the future is boxed once, with the rest of the
/// layer, by [`DispatcherBuilder::layer`](crate::DispatcherBuilder::layer).
///
/// ```
/// use afd_runtime::middleware::{Next, from_fn};
/// use afd_runtime::{CommandError, CommandRequest, CommandResult, Dispatcher, Registry};
///
/// let dispatcher = Dispatcher::builder(Registry::global())
///     // Answers for the stack when the caller has no session.
///     .layer(from_fn(|request: CommandRequest, next: Next| async move {
///         if request.ctx.session().is_none() {
///             return CommandResult::failure(CommandError::new(
///                 "NO_SESSION",
///                 "Open a session first",
///             ));
///         }
///         next.run(request).await
///     }))
///     // Adds a warning to every result.
///     .layer(from_fn(|request: CommandRequest, next: Next| async move {
///         next.run(request)
///             .await
///             .with_warning("DEPRECATED", "This server is going away")
///     }))
///     .build()
///     .unwrap();
/// # let _ = dispatcher;
/// ```
pub fn from_fn<F, Fut>(f: F) -> FromFnLayer<F>
where
    F: Fn(CommandRequest, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = CommandResult<Value>> + Send + 'static,
{
    FromFnLayer { around: f }
}

/// What a [`FromFn`] runs around each call: the function given to [`from_fn`], or a
/// built-in layer (each one's logic, over the same service).
pub trait Around: Clone + Send + Sync + 'static {
    /// One call.
    type Future: Future<Output = CommandResult<Value>> + Send + 'static;

    /// Starts one call; `next` runs the rest of the stack.
    fn around(&self, request: CommandRequest, next: Next) -> Self::Future;
}

impl<F, Fut> Around for F
where
    F: Fn(CommandRequest, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = CommandResult<Value>> + Send + 'static,
{
    type Future = Fut;

    fn around(&self, request: CommandRequest, next: Next) -> Fut {
        self(request, next)
    }
}

/// The layer of [`from_fn`].
#[derive(Clone)]
pub struct FromFnLayer<F> {
    around: F,
}

impl<F> fmt::Debug for FromFnLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFnLayer").finish_non_exhaustive()
    }
}

impl<F: Around> Layer<CommandService> for FromFnLayer<F> {
    type Service = FromFn<F>;

    fn layer(&self, inner: CommandService) -> FromFn<F> {
        FromFn::new(self.around.clone(), inner)
    }
}

/// The service of a [`from_fn`] layer (`F` is its function) and of each built-in layer
/// (`F` is the layer).
#[derive(Clone)]
pub struct FromFn<F> {
    around: F,
    inner: CommandService,
}

impl<F> FromFn<F> {
    /// `around` over `inner`.
    pub(super) fn new(around: F, inner: CommandService) -> Self {
        FromFn { around, inner }
    }
}

impl<F: fmt::Debug> fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFn")
            .field("around", &self.around)
            .finish_non_exhaustive()
    }
}

impl<F: Around> Service<CommandRequest> for FromFn<F> {
    type Response = CommandResult<Value>;
    type Error = Infallible;
    type Future = NeverError<F::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: CommandRequest) -> Self::Future {
        // The inner service is ready (`poll_ready` said so): it goes to `Next`, and a clone
        // stays for the next call (the usual tower pattern for futures that outlive `&mut
        // self`).
        let ready = self.inner.clone();
        let next = Next {
            inner: std::mem::replace(&mut self.inner, ready),
        };
        self.around.around(request, next).never_error()
    }
}

/// The rest of the stack, below a [`from_fn`] layer: the inner layers and the handler.
pub struct Next {
    /// Ready: the layer's `poll_ready` polled it.
    inner: CommandService,
}

impl Next {
    /// Runs the call through the rest of the stack.
    pub async fn run(mut self, request: CommandRequest) -> CommandResult<Value> {
        match self.inner.call(request).await {
            Ok(result) => result,
            Err(never) => match never {},
        }
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}
