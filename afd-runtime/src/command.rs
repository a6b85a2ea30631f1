//! [`CommandDef`]: the static definition of one command, as `#[command]` generates it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command_context::CommandContext;
use crate::result::CommandResult;

/// The future a type-erased handler returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = CommandResult<Value>> + Send + 'static>>;

/// A type-erased handler: JSON input plus the context in, a JSON [`CommandResult`] out.
///
/// The handler deserialises its input itself; the runtime validates the input against the
/// command's JSON Schema before calling it.
pub type HandlerFn = fn(Value, CommandContext) -> HandlerFuture;

/// A handler that carries state, for commands defined at run time (see [`RuntimeParts`]).
pub type SharedHandler = Arc<dyn Fn(Value, CommandContext) -> HandlerFuture + Send + Sync>;

/// What a command defined at run time has instead of generated functions: its input (and
/// output) schema as values and a handler that carries state, such as the client of the
/// server a gateway forwards the call to.
///
/// A [`CommandDef`] built with [`CommandDef::runtime`] points at one of these for the life
/// of the program (the registry holds `&'static` definitions): whoever builds them at run
/// time leaks them, and should intern them so that rebuilding a catalog leaks only what
/// changed.
pub struct RuntimeParts {
    input_schema: Value,
    output_schema: Option<Value>,
    handler: SharedHandler,
}

impl RuntimeParts {
    /// The input schema and the handler.
    pub fn new(input_schema: Value, handler: SharedHandler) -> Self {
        RuntimeParts {
            input_schema,
            output_schema: None,
            handler,
        }
    }

    /// Sets the output schema.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// The input schema.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The output schema, if any.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }
}

impl fmt::Debug for RuntimeParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeParts")
            .field("input_schema", &self.input_schema)
            .field("output_schema", &self.output_schema)
            .finish_non_exhaustive()
    }
}

/// The fn-pointer handler of a run-time definition: never called by the runtime, which
/// goes through [`CommandDef::invoke`]; fails for a caller that uses
/// [`CommandDef::handler`] directly.
fn runtime_handler(_input: Value, _ctx: CommandContext) -> HandlerFuture {
    Box::pin(async {
        CommandResult::failure(crate::error::CommandError::internal(
            "a command defined at run time is called through CommandDef::invoke",
        ))
    })
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// What calling a command may do, for an agent deciding how carefully to call it: derived
/// from the command's flags by [`CommandDef::risk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads the app's state, changes nothing.
    Read,
    /// Changes the app's state, reversibly.
    Write,
    /// Changes the app's state irreversibly.
    Destructive,
    /// Reaches outside the app (the web, another service): its effects are not the app's
    /// to undo.
    External,
}

impl Risk {
    /// The lowercase name (`read`, `write`, `destructive`, `external`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::Destructive => "destructive",
            Risk::External => "external",
        }
    }
}

/// How long a command is expected to take; drives default timeouts and tells agents what to
/// expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionTime {
    /// Answers at once (in-memory work).
    Instant,
    /// Well under a second.
    Fast,
    /// Seconds.
    Slow,
    /// Minutes or more; callers should expect to wait or poll.
    LongRunning,
}

impl ExecutionTime {
    /// The kebab-case name used on the wire (`"long-running"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ExecutionTime::Instant => "instant",
            ExecutionTime::Fast => "fast",
            ExecutionTime::Slow => "slow",
            ExecutionTime::LongRunning => "long-running",
        }
    }
}

impl fmt::Display for ExecutionTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a call of the command runs as a task (MCP's tasks extension,
/// `io.modelcontextprotocol/tasks`) for a client that declared the extension: answered at
/// once with a task the client polls (`tasks/get`), answers questions through
/// (`tasks/update`) and may cancel (`tasks/cancel`). A client without the extension gets
/// the plain call. Declared with `#[command(task = "...")]`; `execution_time =
/// "long-running"` alone means [`Optional`](TaskSupport::Optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Never a task: the call is answered when it ends.
    Forbidden,
    /// A task for a client that declared the extension, the plain call for others.
    Optional,
    /// Only as a task: a client without the extension is refused before the handler runs
    /// (on MCP 2026-07-28 with error -32021 naming the extension).
    Required,
}

impl TaskSupport {
    /// The word used in `#[command(task = "...")]` and on the wire (`"optional"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// When a call that may run as a task becomes one. Declared with
/// `#[command(task_start = "...")]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TaskStart {
    /// As the call starts, before the handler runs (the default).
    #[default]
    Call,
    /// When the handler says so with
    /// [`CommandContext::continue_as_task`](crate::CommandContext::continue_as_task):
    /// until then it runs as a plain call, asking its client through rounds on MCP
    /// 2026-07-28, and it ends as one if it never says so.
    Handler,
}

/// Which surfaces a command is exposed on. Every surface is on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Expose {
    mcp: bool,
    cli: bool,
    agent: bool,
    palette: bool,
}

impl Expose {
    /// Exposed everywhere (the default).
    pub const ALL: Expose = Expose {
        mcp: true,
        cli: true,
        agent: true,
        palette: true,
    };

    /// Sets exposure to external agents over MCP.
    #[must_use]
    pub const fn mcp(mut self, on: bool) -> Self {
        self.mcp = on;
        self
    }

    /// Sets exposure on the command line.
    #[must_use]
    pub const fn cli(mut self, on: bool) -> Self {
        self.cli = on;
        self
    }

    /// Sets exposure to an in-app assistant.
    #[must_use]
    pub const fn agent(mut self, on: bool) -> Self {
        self.agent = on;
        self
    }

    /// Sets exposure in a command palette.
    #[must_use]
    pub const fn palette(mut self, on: bool) -> Self {
        self.palette = on;
        self
    }

    /// Whether MCP clients may see and call the command.
    pub const fn allows_mcp(&self) -> bool {
        self.mcp
    }

    /// Whether the command line may call the command.
    pub const fn allows_cli(&self) -> bool {
        self.cli
    }

    /// Whether an in-app assistant may call the command.
    pub const fn allows_agent(&self) -> bool {
        self.agent
    }

    /// Whether a command palette may show the command.
    pub const fn allows_palette(&self) -> bool {
        self.palette
    }
}

impl Default for Expose {
    fn default() -> Self {
        Expose::ALL
    }
}

/// Where a command is defined in source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// The file, as `file!()` gives it.
    pub file: &'static str,
    /// The line of the function's name.
    pub line: u32,
    /// The column of the function's name.
    pub column: u32,
    /// The module path, as `module_path!()` gives it.
    pub module_path: &'static str,
}

impl SourceLocation {
    /// The location of definitions built at run time, which have no source.
    pub const RUNTIME: SourceLocation = SourceLocation {
        file: "<runtime>",
        line: 0,
        column: 0,
        module_path: "<runtime>",
    };
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The static definition of a command: its metadata, its schemas and its handler.
///
/// `#[command]` builds one of these at compile time for every handler function. It can
/// also be built by hand with the `const` builder, for example to register a command
/// explicitly:
///
/// ```
/// use afd_runtime::{CommandContext, CommandDef, CommandResult, HandlerFuture, SourceLocation};
/// use serde_json::{json, Value};
///
/// fn ping(_input: Value, _ctx: CommandContext) -> HandlerFuture {
///     Box::pin(async { CommandResult::success(json!("pong")) })
/// }
///
/// fn any_object() -> Value {
///     json!({"type": "object"})
/// }
///
/// static PING: CommandDef = CommandDef::new(
///     "ping",
///     "Answer with pong.",
///     ping,
///     any_object,
///     SourceLocation { file: file!(), line: line!(), column: 1, module_path: module_path!() },
/// )
/// .with_tags(&["health"]);
///
/// let registry = afd_runtime::Registry::builder().register(&PING).build().unwrap();
/// assert_eq!(registry.get("ping").unwrap().category(), "ping");
/// ```
#[derive(Clone, Copy)]
pub struct CommandDef {
    name: &'static str,
    title: Option<&'static str>,
    description: &'static str,
    category: Option<&'static str>,
    tags: &'static [&'static str],
    mutation: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    confirm_prompt: Option<&'static str>,
    execution_time: Option<ExecutionTime>,
    errors: &'static [&'static str],
    handoff: bool,
    handoff_protocol: Option<&'static str>,
    version: Option<&'static str>,
    expose: Expose,
    aliases: &'static [&'static str],
    deprecated_aliases: &'static [&'static str],
    eager: bool,
    blocking: bool,
    contexts: &'static [&'static str],
    scopes: &'static [&'static str],
    needs_client: &'static [&'static str],
    task_support: Option<TaskSupport>,
    task_start: TaskStart,
    source: SourceLocation,
    handler: HandlerFn,
    input_schema: fn() -> Value,
    output_schema: fn() -> Option<Value>,
    runtime: Option<&'static RuntimeParts>,
}

fn no_output_schema() -> Option<Value> {
    None
}

impl CommandDef {
    /// A definition with a name, a description, a handler, an input-schema function and a
    /// source location; every other field at its default.
    pub const fn new(
        name: &'static str,
        description: &'static str,
        handler: HandlerFn,
        input_schema: fn() -> Value,
        source: SourceLocation,
    ) -> Self {
        CommandDef {
            name,
            title: None,
            description,
            category: None,
            tags: &[],
            mutation: false,
            destructive: false,
            idempotent: false,
            open_world: false,
            confirm_prompt: None,
            execution_time: None,
            errors: &[],
            handoff: false,
            handoff_protocol: None,
            version: None,
            expose: Expose::ALL,
            aliases: &[],
            deprecated_aliases: &[],
            eager: false,
            blocking: false,
            contexts: &[],
            scopes: &[],
            needs_client: &[],
            task_support: None,
            task_start: TaskStart::Call,
            source,
            handler,
            input_schema,
            output_schema: no_output_schema,
            runtime: None,
        }
    }

    /// A definition built at run time (a gateway's upstream tool, a plugin's command): its
    /// schemas are values and its handler carries state, both in `parts`. Every other
    /// field is set with the same builder methods as a static definition.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use afd_runtime::{CommandDef, CommandResult, RuntimeParts, SourceLocation};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let greeting = String::from("hello");
    /// let parts: &'static RuntimeParts = Box::leak(Box::new(RuntimeParts::new(
    ///     json!({"type": "object"}),
    ///     Arc::new(move |_input, _ctx| {
    ///         let greeting = greeting.clone();
    ///         Box::pin(async move { CommandResult::success(json!(greeting)) })
    ///     }),
    /// )));
    /// let def: &'static CommandDef = Box::leak(Box::new(
    ///     CommandDef::runtime("greet", "Say hello.", parts, SourceLocation::RUNTIME)
    ///         .with_category("demo"),
    /// ));
    /// let registry = afd_runtime::Registry::builder().register(def).build().unwrap();
    /// let result = registry.call("greet", json!({}), Default::default()).await;
    /// assert_eq!(result.data.unwrap(), json!("hello"));
    /// # }
    /// ```
    pub const fn runtime(
        name: &'static str,
        description: &'static str,
        parts: &'static RuntimeParts,
        source: SourceLocation,
    ) -> Self {
        let mut def = CommandDef::new(
            name,
            description,
            runtime_handler,
            empty_object_schema,
            source,
        );
        def.runtime = Some(parts);
        def
    }

    /// The run-time parts, for a definition built with [`CommandDef::runtime`].
    pub const fn runtime_parts(&self) -> Option<&'static RuntimeParts> {
        self.runtime
    }

    /// Runs the handler: the generated function, or the run-time handler.
    pub fn invoke(&self, input: Value, ctx: CommandContext) -> HandlerFuture {
        match self.runtime {
            None => (self.handler)(input, ctx),
            Some(parts) => (parts.handler)(input, ctx),
        }
    }

    /// Sets the runtime contexts the command belongs to (empty: universal, callable in
    /// every context).
    #[must_use]
    pub const fn with_contexts(mut self, contexts: &'static [&'static str]) -> Self {
        self.contexts = contexts;
        self
    }

    /// Sets the OAuth scopes a caller needs, every one of them, to see and call the command
    /// (see [`auth`](crate::auth)); empty, the category's default applies.
    #[must_use]
    pub const fn with_scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// Sets the client capabilities the command needs (`"sampling"`, `"elicitation"`,
    /// `"roots"`): a client that did not declare every one of them is refused before the
    /// handler runs (on MCP 2026-07-28 with error -32021).
    #[must_use]
    pub const fn with_needs_client(mut self, needs: &'static [&'static str]) -> Self {
        self.needs_client = needs;
        self
    }

    /// Sets whether a call runs as a task for a client that declared MCP's tasks extension
    /// (otherwise [`Optional`](TaskSupport::Optional) for a command declared
    /// `long-running`, else [`Forbidden`](TaskSupport::Forbidden)).
    #[must_use]
    pub const fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// Sets when a call that may run as a task becomes one.
    #[must_use]
    pub const fn with_task_start(mut self, start: TaskStart) -> Self {
        self.task_start = start;
        self
    }

    /// Sets the category (otherwise derived from the name).
    #[must_use]
    pub const fn with_category(mut self, category: &'static str) -> Self {
        self.category = Some(category);
        self
    }

    /// Sets the tags.
    #[must_use]
    pub const fn with_tags(mut self, tags: &'static [&'static str]) -> Self {
        self.tags = tags;
        self
    }

    /// Marks the command as changing state.
    #[must_use]
    pub const fn with_mutation(mut self) -> Self {
        self.mutation = true;
        self
    }

    /// Marks the command as destructive (irreversible); implies a mutation.
    #[must_use]
    pub const fn with_destructive(mut self) -> Self {
        self.mutation = true;
        self.destructive = true;
        self
    }

    /// Marks the command as idempotent: calling it twice has the effect of calling it once.
    #[must_use]
    pub const fn with_idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    /// Marks the command as reaching outside the app (the web, another service, e-mail):
    /// its effects and answers are not the app's alone. MCP's `openWorldHint`.
    #[must_use]
    pub const fn with_open_world(mut self) -> Self {
        self.open_world = true;
        self
    }

    /// Sets the prompt a client should confirm before running the command.
    #[must_use]
    pub const fn with_confirm_prompt(mut self, prompt: &'static str) -> Self {
        self.confirm_prompt = Some(prompt);
        self
    }

    /// Sets the expected execution time.
    #[must_use]
    pub const fn with_execution_time(mut self, time: ExecutionTime) -> Self {
        self.execution_time = Some(time);
        self
    }

    /// Declares the error codes the command may return.
    #[must_use]
    pub const fn with_errors(mut self, codes: &'static [&'static str]) -> Self {
        self.errors = codes;
        self
    }

    /// Marks the command as handing off to another protocol (streaming, websocket, ...).
    #[must_use]
    pub const fn with_handoff(mut self, protocol: Option<&'static str>) -> Self {
        self.handoff = true;
        self.handoff_protocol = protocol;
        self
    }

    /// Sets the command's display title: a short name for people (MCP's tool `title`,
    /// which clients show in tool lists and permission prompts).
    #[must_use]
    pub const fn with_title(mut self, title: &'static str) -> Self {
        self.title = Some(title);
        self
    }

    /// Sets the command's version.
    #[must_use]
    pub const fn with_version(mut self, version: &'static str) -> Self {
        self.version = Some(version);
        self
    }

    /// Sets the surfaces the command is exposed on.
    #[must_use]
    pub const fn with_expose(mut self, expose: Expose) -> Self {
        self.expose = expose;
        self
    }

    /// Sets other names the command answers to.
    #[must_use]
    pub const fn with_aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    /// Sets old names the command still answers to, with a deprecation warning.
    #[must_use]
    pub const fn with_deprecated_aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.deprecated_aliases = aliases;
        self
    }

    /// Marks the command for eager listing (its own tool even in lazy strategies).
    #[must_use]
    pub const fn with_eager(mut self) -> Self {
        self.eager = true;
        self
    }

    /// Records that the handler runs on the blocking pool ([`crate::blocking`]).
    /// `#[command(blocking)]` sets it and generates the handler that runs there; on a
    /// hand-written definition it only describes the handler given.
    #[must_use]
    pub const fn with_blocking(mut self) -> Self {
        self.blocking = true;
        self
    }

    /// Sets the function that produces the output schema.
    #[must_use]
    pub const fn with_output_schema(mut self, schema: fn() -> Option<Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// The command's name: kebab-case when derived from the function, else any valid MCP tool name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The full description (from the doc comment).
    pub const fn description(&self) -> &'static str {
        self.description
    }

    /// The category: the declared one, else the name's first segment (`todo-create` ->
    /// `todo`).
    pub fn category(&self) -> &'static str {
        match self.category {
            Some(category) => category,
            None => match self.name.split('-').next() {
                Some(first) if !first.is_empty() => first,
                _ => "general",
            },
        }
    }

    /// The declared category, if any.
    pub const fn declared_category(&self) -> Option<&'static str> {
        self.category
    }

    /// The tags.
    pub const fn tags(&self) -> &'static [&'static str] {
        self.tags
    }

    /// Whether the command changes state.
    pub const fn is_mutation(&self) -> bool {
        self.mutation
    }

    /// Whether the command is destructive.
    pub const fn is_destructive(&self) -> bool {
        self.destructive
    }

    /// Whether the command is idempotent.
    pub const fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// Whether the command reaches outside the app (MCP's `openWorldHint`).
    pub const fn is_open_world(&self) -> bool {
        self.open_world
    }

    /// The command's risk, from its flags: [`Risk::External`] when it reaches outside the
    /// app, else [`Risk::Destructive`], [`Risk::Write`] or [`Risk::Read`].
    pub const fn risk(&self) -> Risk {
        if self.open_world {
            Risk::External
        } else if self.destructive {
            Risk::Destructive
        } else if self.mutation {
            Risk::Write
        } else {
            Risk::Read
        }
    }

    /// The confirmation prompt, if any.
    pub const fn confirm_prompt(&self) -> Option<&'static str> {
        self.confirm_prompt
    }

    /// The expected execution time, if declared.
    pub const fn execution_time(&self) -> Option<ExecutionTime> {
        self.execution_time
    }

    /// The declared error codes.
    pub const fn errors(&self) -> &'static [&'static str] {
        self.errors
    }

    /// Whether the command hands off to another protocol.
    pub const fn is_handoff(&self) -> bool {
        self.handoff
    }

    /// The handoff protocol, if declared.
    pub const fn handoff_protocol(&self) -> Option<&'static str> {
        self.handoff_protocol
    }

    /// The display title, if declared.
    pub const fn title(&self) -> Option<&'static str> {
        self.title
    }

    /// The version, if declared.
    pub const fn version(&self) -> Option<&'static str> {
        self.version
    }

    /// The surfaces the command is exposed on.
    pub const fn expose(&self) -> Expose {
        self.expose
    }

    /// Other names the command answers to.
    pub const fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }

    /// Deprecated names the command still answers to.
    pub const fn deprecated_aliases(&self) -> &'static [&'static str] {
        self.deprecated_aliases
    }

    /// Whether the command asks to be listed eagerly.
    pub const fn is_eager(&self) -> bool {
        self.eager
    }

    /// Whether the handler runs on the blocking pool (`#[command(blocking)]`).
    pub const fn is_blocking(&self) -> bool {
        self.blocking
    }

    /// The runtime contexts the command belongs to; empty when it is universal.
    pub const fn contexts(&self) -> &'static [&'static str] {
        self.contexts
    }

    /// The OAuth scopes declared with `scopes(...)` (empty: none declared; the category's
    /// default, or the dispatcher's override, may still apply).
    pub const fn scopes(&self) -> &'static [&'static str] {
        self.scopes
    }

    /// The client capabilities declared with `needs_client(...)` (empty: none).
    pub const fn needs_client(&self) -> &'static [&'static str] {
        self.needs_client
    }

    /// Whether a call runs as a task for a client that declared MCP's tasks extension: as
    /// declared, else [`Optional`](TaskSupport::Optional) for a `long-running` command.
    pub const fn task_support(&self) -> TaskSupport {
        match (self.task_support, self.execution_time) {
            (Some(support), _) => support,
            (None, Some(ExecutionTime::LongRunning)) => TaskSupport::Optional,
            (None, _) => TaskSupport::Forbidden,
        }
    }

    /// When a call that may run as a task becomes one.
    pub const fn task_start(&self) -> TaskStart {
        self.task_start
    }

    /// Whether the command belongs to no context and so is callable in every one.
    pub const fn is_universal(&self) -> bool {
        self.contexts.is_empty()
    }

    /// Where the command is defined.
    pub const fn source(&self) -> SourceLocation {
        self.source
    }

    /// The type-erased handler of a static definition (a run-time definition answers
    /// through [`CommandDef::invoke`]; prefer that).
    pub const fn handler(&self) -> HandlerFn {
        self.handler
    }

    /// Generates the input JSON Schema (prefer the registry's cached copy).
    pub fn generate_input_schema(&self) -> Value {
        match self.runtime {
            None => (self.input_schema)(),
            Some(parts) => parts.input_schema.clone(),
        }
    }

    /// Generates the output JSON Schema, when the output type has one.
    pub fn generate_output_schema(&self) -> Option<Value> {
        match self.runtime {
            None => (self.output_schema)(),
            Some(parts) => parts.output_schema.clone(),
        }
    }
}

impl fmt::Debug for CommandDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandDef")
            .field("name", &self.name)
            .field("category", &self.category())
            .field("tags", &self.tags)
            .field("mutation", &self.mutation)
            .field("destructive", &self.destructive)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}
