//! The innermost service of every middleware stack: runs the command's handler, turning a
//! panic (when the handler is called or while its future runs) into `INTERNAL_ERROR`; a
//! context operation runs with the sessions of the dispatcher that called it.

use std::any::Any;
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::Service;
use tower::util::BoxCloneSyncService;

use super::{CommandRequest, CommandService};
use crate::contexts;
use crate::error::CommandError;
use crate::registry::is_op;
use crate::result::CommandResult;

/// The stack with no middleware, shared by every call that has none.
pub(super) static BARE_STACK: LazyLock<CommandService> =
    LazyLock::new(|| BoxCloneSyncService::new(HandlerService));

/// The innermost service: runs the handler, turning a panic into `INTERNAL_ERROR`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HandlerService;

impl Service<CommandRequest> for HandlerService {
    type Response = CommandResult<Value>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<CommandResult<Value>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: CommandRequest) -> Self::Future {
        let CommandRequest {
            def,
            input,
            ctx,
            host,
            builtin,
            ..
        } = request;
        // A context operation acts on the sessions of the dispatcher that runs it.
        if let Some(dispatcher) = host
            && is_op(def)
        {
            return Box::pin(async move {
                let result =
                    contexts::commands::run(dispatcher.host(), def, input, ctx.session()).await;
                Ok(result)
            });
        }
        let dev_mode = ctx.dev_mode();
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| match builtin {
            // A built-in tool's work, given by the dispatcher that runs it.
            Some(work) => work(input, ctx),
            None => def.invoke(input, ctx),
        }));
        Box::pin(async move {
            let outcome = match started {
                Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            Ok(outcome.unwrap_or_else(|panic| {
                panicked(
                    def.name(),
                    panic.as_ref(),
                    dev_mode,
                    "command handler panicked",
                )
            }))
        })
    }
}

/// The `INTERNAL_ERROR` for a call of `name` that panicked (`what` says where, in the
/// log); the panic message only in dev mode.
pub(super) fn panicked(
    name: &str,
    panic: &(dyn Any + Send),
    dev_mode: bool,
    what: &'static str,
) -> CommandResult<Value> {
    let reason = if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    };
    tracing::error!(command = name, panic = %reason, "{what}");
    let message = if dev_mode {
        format!("Command '{name}' panicked: {reason}")
    } else {
        format!("Command '{name}' failed unexpectedly")
    };
    CommandResult::failure(CommandError::internal(message))
}
