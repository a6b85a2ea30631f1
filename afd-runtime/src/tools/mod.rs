//! The built-in tools that run other commands: afd-batch and afd-pipe. They reach the
//! call path only through [`CallPath`](crate::dispatch::CallPath).

pub(crate) mod batch;
pub(crate) mod pipe;

use crate::context::CommandContext;
use crate::dispatch::Dispatcher;
use batch::{BatchRequest, BatchResult};
use pipe::{PipeRequest, PipeResult};

impl Dispatcher {
    /// Runs afd-batch. Every command goes through [`Dispatcher::call`], so exposure,
    /// validation and middleware apply to each exactly as to afd-call.
    pub async fn batch(&self, request: BatchRequest, ctx: CommandContext) -> BatchResult {
        batch::run(self, request, ctx).await
    }

    /// Runs afd-pipe. Every step goes through [`Dispatcher::call`], so exposure, validation
    /// and middleware apply exactly as to afd-call.
    pub async fn pipe(&self, request: PipeRequest, ctx: CommandContext) -> PipeResult {
        pipe::run(self, request, ctx).await
    }
}
