//! [`MetaTools`]: the built-in tools as methods of any [`Dispatcher`], so every surface
//! answers afd-discover, afd-detail, afd-batch, afd-pipe, afd-help, afd-docs and
//! afd-schema alike.

use std::future::Future;

use serde_json::Value;

use super::batch::{BatchRequest, BatchResult};
use super::pipe::{PipeRequest, PipeResult};
use super::{batch, detail, discover, help, pipe};
use crate::command_context::CommandContext;
use crate::dispatch::Dispatcher;
use crate::result::CommandResult;

/// The built-in tools, on any [`Dispatcher`]: what afd-discover, afd-detail, afd-batch,
/// afd-pipe, afd-help, afd-docs and afd-schema answer, whatever the surface. In the
/// prelude.
///
/// ```
/// use afd_runtime::prelude::*;
/// use afd_runtime::{Dispatcher, Surface};
///
/// let dispatcher = Dispatcher::builder(Registry::global()).surface(Surface::Mcp).build().unwrap();
/// let page = dispatcher.discover(json!({"search": "create", "detail": "name"}));
/// assert!(page.success);
/// ```
pub trait MetaTools: sealed::Sealed {
    /// afd-discover: a page of one-line summaries of the exposed commands, filtered by
    /// category, tags and search words, with the catalog's whole taxonomy.
    fn discover(&self, input: Value) -> CommandResult<Value>;

    /// afd-detail: the full definition and input schema of up to ten commands, in the
    /// order asked. Works for every registered command (`callable` says whether this
    /// dispatcher lets it be called); unknown names get `found: false` with suggestions.
    fn detail(&self, input: Value) -> CommandResult<Value>;

    /// afd-batch: runs several commands. Every command goes through
    /// [`Dispatcher::call`], so exposure, validation and middleware apply to each exactly
    /// as to afd-call.
    fn batch(
        &self,
        request: BatchRequest,
        ctx: CommandContext,
    ) -> impl Future<Output = BatchResult> + Send;

    /// afd-pipe: runs steps in order, each able to use earlier results. Every step goes
    /// through [`Dispatcher::call`], so exposure, validation and middleware apply exactly
    /// as to afd-call.
    fn pipe(
        &self,
        request: PipeRequest,
        ctx: CommandContext,
    ) -> impl Future<Output = PipeResult> + Send;

    /// afd-help: the catalog grouped by category, with descriptions and one-line
    /// summaries; `format: "text"` (default) for reading, `"json"` for parsing.
    fn help(&self, input: Value) -> CommandResult<Value>;

    /// afd-docs: Markdown documentation of one command, a category, or the whole catalog.
    fn docs(&self, input: Value) -> CommandResult<Value>;

    /// afd-schema: the input (and output) schemas of the exposed commands, as JSON Schema
    /// or TypeScript.
    fn schema(&self, input: Value) -> CommandResult<Value>;
}

impl MetaTools for Dispatcher {
    fn discover(&self, input: Value) -> CommandResult<Value> {
        discover::discover(self, input)
    }

    fn detail(&self, input: Value) -> CommandResult<Value> {
        detail::detail(self, input)
    }

    fn batch(
        &self,
        request: BatchRequest,
        ctx: CommandContext,
    ) -> impl Future<Output = BatchResult> + Send {
        batch::run(self, request, ctx)
    }

    fn pipe(
        &self,
        request: PipeRequest,
        ctx: CommandContext,
    ) -> impl Future<Output = PipeResult> + Send {
        pipe::run(self, request, ctx)
    }

    fn help(&self, input: Value) -> CommandResult<Value> {
        help::help(self, input)
    }

    fn docs(&self, input: Value) -> CommandResult<Value> {
        help::docs(self, input)
    }

    fn schema(&self, input: Value) -> CommandResult<Value> {
        help::schema(self, input)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::dispatch::Dispatcher {}
}
