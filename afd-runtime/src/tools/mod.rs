//! The built-in tools that run other commands: afd-batch. They reach the call path only
//! through [`CallPath`](crate::dispatch::CallPath).

pub(crate) mod batch;

use crate::context::CommandContext;
use crate::dispatch::Dispatcher;
use batch::{BatchRequest, BatchResult};

impl Dispatcher {
    /// Runs afd-batch. Every command goes through [`Dispatcher::call`], so exposure,
    /// validation and middleware apply to each exactly as to afd-call.
    pub async fn batch(&self, request: BatchRequest, ctx: CommandContext) -> BatchResult {
        batch::run(self, request, ctx).await
    }
}
