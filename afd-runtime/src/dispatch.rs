//! The one call path every surface shares: lookup, validation, the handler (panics caught),
//! timing.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt;
use serde_json::Value;

use crate::context::CommandContext;
use crate::error::CommandError;
use crate::registry::{CommandEntry, NameKind, Registry};
use crate::result::CommandResult;

impl Registry {
    /// Calls a command in-process, exactly as the servers do: resolve the name (aliases
    /// included, "Did you mean" suggestions when unknown), validate the input against the
    /// command's schema, run the handler with panics caught, and record the execution time
    /// in `metadata.executionTimeMs`.
    ///
    /// Never fails: every problem is a failed [`CommandResult`] with a stable code.
    pub async fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        let started = Instant::now();
        let mut result = match self.resolve(name) {
            Err(error) => CommandResult::failure(error),
            Ok(resolved) => {
                let mut result = execute(resolved.entry, input, ctx).await;
                if resolved.kind == NameKind::DeprecatedAlias {
                    result = result.with_warning(
                        "DEPRECATED_ALIAS",
                        format!(
                            "'{name}' is a deprecated name of '{}'; call it by that name",
                            resolved.entry.name()
                        ),
                    );
                }
                result
            }
        };
        let metadata = result.metadata_mut();
        if metadata.execution_time_ms.is_none() {
            metadata.execution_time_ms = Some(started.elapsed().as_millis() as u64);
        }
        result
    }
}

/// Validates `input` for `entry` and runs its handler, turning a panic into
/// `INTERNAL_ERROR`.
pub(crate) async fn execute(
    entry: &CommandEntry,
    input: Value,
    ctx: CommandContext,
) -> CommandResult<Value> {
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    if let Err(error) = entry.validate(&input) {
        return CommandResult::failure(error);
    }
    let dev_mode = ctx.dev_mode();
    let handler = entry.def().handler();
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(input, ctx))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    outcome.unwrap_or_else(|panic| {
        let reason = panic_message(panic.as_ref());
        tracing::error!(command = entry.name(), panic = %reason, "command handler panicked");
        let message = if dev_mode {
            format!("Command '{}' panicked: {reason}", entry.name())
        } else {
            format!("Command '{}' failed unexpectedly", entry.name())
        };
        CommandResult::failure(CommandError::internal(message))
    })
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
