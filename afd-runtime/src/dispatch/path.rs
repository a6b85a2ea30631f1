//! The narrow interface through which the built-in tools that run other commands
//! (afd-batch, afd-pipe) reach the call path: one call, and the limits in force.

use std::future::Future;

use serde_json::Value;

use super::{Dispatcher, Limits};
use crate::command_context::CommandContext;
use crate::result::CommandResult;

/// Runs commands on the one call path, as afd-call does.
pub(crate) trait CallPath: Sync {
    /// Calls a command: exposure, contexts, validation and middleware apply.
    fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> impl Future<Output = CommandResult<Value>> + Send;

    /// The limits in force.
    fn limits(&self) -> &Limits;
}

impl CallPath for Dispatcher {
    fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> impl Future<Output = CommandResult<Value>> + Send {
        Dispatcher::call(self, name, input, ctx)
    }

    fn limits(&self) -> &Limits {
        Dispatcher::limits(self)
    }
}
