//! [`MetaTools`]: the built-in tools as methods of any [`Dispatcher`], so every surface
//! answers afd-discover, afd-detail, afd-batch, afd-pipe, afd-help, afd-docs and
//! afd-schema alike, and [`MetaTools::call_builtin`], which runs them through the
//! middleware stack so observers see them.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use serde_json::Value;

use super::batch::{BatchRequest, BatchResult};
use super::pipe::{PipeRequest, PipeResult};
use super::{batch, detail, discover, help, pipe};
use crate::command::{CommandDef, HandlerFuture, SourceLocation};
use crate::command_context::CommandContext;
use crate::dispatch::{BuiltinWork, Dispatcher};
use crate::error::CommandError;
use crate::result::CommandResult;

/// What a built-in tool answered: most answer a [`CommandResult`], afd-batch and afd-pipe
/// their own shapes.
#[derive(Debug)]
pub enum BuiltinOutcome {
    /// afd-discover, afd-detail, afd-help, afd-docs, afd-schema; or the middleware's
    /// answer in the tool's place (a failed request, a rejection).
    Result(CommandResult<Value>),
    /// afd-batch.
    Batch(BatchResult),
    /// afd-pipe.
    Pipe(PipeResult),
}

impl BuiltinOutcome {
    /// Whether the tool succeeded.
    pub fn success(&self) -> bool {
        match self {
            BuiltinOutcome::Result(result) => result.success,
            BuiltinOutcome::Batch(result) => result.success,
            BuiltinOutcome::Pipe(result) => result.success,
        }
    }
}

/// The built-in tools, on any [`Dispatcher`]: what afd-discover, afd-detail, afd-batch,
/// afd-pipe, afd-help, afd-docs and afd-schema answer, whatever the surface. In the
/// prelude.
///
/// ```
/// use afd_runtime::prelude::*;
/// use afd_runtime::{Dispatcher, Surface};
///
/// let dispatcher = Dispatcher::builder(Registry::global()).surface(Surface::Mcp).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let page = dispatcher.discover(json!({"search": "create", "detail": "name"})).await;
/// assert!(page.success);
/// # });
/// ```
pub trait MetaTools: sealed::Sealed {
    /// afd-discover: a page of one-line summaries of the exposed commands, filtered by
    /// category, tags and search words, with the catalog's whole taxonomy.
    fn discover(&self, input: Value) -> impl Future<Output = CommandResult<Value>> + Send;

    /// afd-detail: the full definition and input schema of up to ten commands, in the
    /// order asked. Works for every registered command (`callable` says whether this
    /// dispatcher lets it be called); unknown names get `found: false` with suggestions.
    fn detail(&self, input: Value) -> impl Future<Output = CommandResult<Value>> + Send;

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

    /// Runs the built-in tool named `tool` (afd-discover, afd-detail, afd-batch,
    /// afd-pipe, afd-help, afd-docs or afd-schema) with its JSON input, through the
    /// dispatcher's middleware stack as a call of [`CallKind::Meta`], so telemetry, tracing
    /// and any observer see it. `None` when `tool` names no built-in tool. The surfaces
    /// call the built-in tools this way.
    ///
    /// [`CallKind::Meta`]: crate::CallKind::Meta
    fn call_builtin(
        &self,
        tool: &str,
        input: Value,
        ctx: CommandContext,
    ) -> impl Future<Output = Option<BuiltinOutcome>> + Send;
}

const fn here(line: u32) -> SourceLocation {
    SourceLocation {
        file: file!(),
        line,
        column: 1,
        module_path: module_path!(),
    }
}

/// The handler of the built-in tools' definitions: they run through
/// [`MetaTools::call_builtin`], never as handlers.
fn not_a_handler(_input: Value, _ctx: CommandContext) -> HandlerFuture {
    Box::pin(std::future::ready(CommandResult::failure(
        CommandError::internal("built-in tools run through MetaTools::call_builtin"),
    )))
}

fn discover_schema() -> Value {
    discover::discover_schema().clone()
}

fn detail_schema() -> Value {
    detail::detail_schema().clone()
}

fn any_object() -> Value {
    serde_json::json!({"type": "object"})
}

fn help_schema() -> Value {
    help::help_schema().clone()
}

fn docs_schema() -> Value {
    help::docs_schema().clone()
}

fn schema_schema() -> Value {
    help::schema_schema().clone()
}

/// The definitions the built-in tools carry through the middleware stack: what observers
/// see as the call's `def` (name, category `meta`).
pub(crate) mod defs {
    use super::*;

    /// afd-discover.
    pub static DISCOVER: CommandDef = CommandDef::new(
        "afd-discover",
        "Search and browse the commands.",
        not_a_handler,
        discover_schema,
        here(line!()),
    )
    .with_category("meta");
    /// afd-detail.
    pub static DETAIL: CommandDef = CommandDef::new(
        "afd-detail",
        "Input schemas and full descriptions of commands.",
        not_a_handler,
        detail_schema,
        here(line!()),
    )
    .with_category("meta");
    /// afd-batch.
    pub static BATCH: CommandDef = CommandDef::new(
        "afd-batch",
        "Run several commands at once.",
        not_a_handler,
        any_object,
        here(line!()),
    )
    .with_category("meta");
    /// afd-pipe.
    pub static PIPE: CommandDef = CommandDef::new(
        "afd-pipe",
        "Chain commands.",
        not_a_handler,
        any_object,
        here(line!()),
    )
    .with_category("meta");
    /// afd-help.
    pub static HELP: CommandDef = CommandDef::new(
        "afd-help",
        "Overview of every command.",
        not_a_handler,
        help_schema,
        here(line!()),
    )
    .with_category("meta");
    /// afd-docs.
    pub static DOCS: CommandDef = CommandDef::new(
        "afd-docs",
        "Markdown documentation of commands.",
        not_a_handler,
        docs_schema,
        here(line!()),
    )
    .with_category("meta");
    /// afd-schema.
    pub static SCHEMA: CommandDef = CommandDef::new(
        "afd-schema",
        "Input and output schemas of commands.",
        not_a_handler,
        schema_schema,
        here(line!()),
    )
    .with_category("meta");
}

/// A slot for a typed answer (afd-batch's, afd-pipe's) beside the `CommandResult` the
/// stack carries.
type Slot<T> = Arc<Mutex<Option<T>>>;

/// What the stack carries for a batch or pipeline: its success, and its error where it did
/// not run; the typed answer goes in `slot`.
fn carried<T>(
    slot: &Slot<T>,
    answer: T,
    success: bool,
    error: Option<CommandError>,
) -> CommandResult<Value> {
    *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(answer);
    match (success, error) {
        (true, _) => CommandResult::success(Value::Null),
        (false, Some(error)) => CommandResult::failure(error),
        (false, None) => CommandResult::failure(CommandError::internal("the tool failed")),
    }
}

fn take<T>(slot: &Slot<T>) -> Option<T> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

impl MetaTools for Dispatcher {
    fn discover(&self, input: Value) -> impl Future<Output = CommandResult<Value>> + Send {
        discover::discover(self, input)
    }

    fn detail(&self, input: Value) -> impl Future<Output = CommandResult<Value>> + Send {
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

    async fn call_builtin(
        &self,
        tool: &str,
        input: Value,
        ctx: CommandContext,
    ) -> Option<BuiltinOutcome> {
        // afd-discover and afd-detail read and write the session, so they wait on its store.
        let session_tool: Option<&'static CommandDef> = match tool {
            "afd-discover" => Some(&defs::DISCOVER),
            "afd-detail" => Some(&defs::DETAIL),
            _ => None,
        };
        if let Some(def) = session_tool {
            let dispatcher = self.clone();
            let work: BuiltinWork = Box::new(move |input, _ctx| {
                async move {
                    if std::ptr::eq(def, &defs::DISCOVER) {
                        discover::discover(&dispatcher, input).await
                    } else {
                        detail::detail(&dispatcher, input).await
                    }
                }
                .boxed()
            });
            let result = self.run_builtin(def, input, ctx, work).await;
            return Some(BuiltinOutcome::Result(result));
        }
        type Run = fn(&Dispatcher, Value) -> CommandResult<Value>;
        let simple: Option<(&'static CommandDef, Run)> = match tool {
            "afd-help" => Some((&defs::HELP, help::help)),
            "afd-docs" => Some((&defs::DOCS, help::docs)),
            "afd-schema" => Some((&defs::SCHEMA, help::schema)),
            _ => None,
        };
        if let Some((def, run)) = simple {
            let dispatcher = self.clone();
            let work: BuiltinWork =
                Box::new(move |input, _ctx| std::future::ready(run(&dispatcher, input)).boxed());
            let result = self.run_builtin(def, input, ctx, work).await;
            return Some(BuiltinOutcome::Result(result));
        }
        match tool {
            "afd-batch" => {
                let slot: Slot<BatchResult> = Arc::default();
                let (dispatcher, answer) = (self.clone(), slot.clone());
                let work: BuiltinWork = Box::new(move |input, ctx| {
                    async move {
                        match BatchRequest::from_value(input) {
                            Ok(request) => {
                                let result = batch::run(&dispatcher, request, ctx).await;
                                let (success, error) = (result.success, result.error.clone());
                                carried(&answer, result, success, error)
                            }
                            Err(error) => CommandResult::failure(error),
                        }
                    }
                    .boxed()
                });
                let result = self.run_builtin(&defs::BATCH, input, ctx, work).await;
                Some(take(&slot).map_or(BuiltinOutcome::Result(result), BuiltinOutcome::Batch))
            }
            "afd-pipe" => {
                let slot: Slot<PipeResult> = Arc::default();
                let (dispatcher, answer) = (self.clone(), slot.clone());
                let work: BuiltinWork = Box::new(move |input, ctx| {
                    async move {
                        match PipeRequest::from_value(input) {
                            Ok(request) => {
                                let result = pipe::run(&dispatcher, request, ctx).await;
                                let error = result.error.clone().or_else(|| {
                                    result.steps.iter().find_map(|step| step.error.clone())
                                });
                                let success = result.success;
                                carried(&answer, result, success, error)
                            }
                            Err(error) => CommandResult::failure(error),
                        }
                    }
                    .boxed()
                });
                let result = self.run_builtin(&defs::PIPE, input, ctx, work).await;
                Some(take(&slot).map_or(BuiltinOutcome::Result(result), BuiltinOutcome::Pipe))
            }
            _ => None,
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::dispatch::Dispatcher {}
}
