//! The MCP server: the catalog served to agents over `rmcp`, with the tool strategies of
//! the AFD specification. The only module that knows rmcp.
//!
//! ```no_run
//! use afd_runtime::mcp::{McpServer, Strategy};
//! use afd_runtime::{CommandContext, Registry};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! McpServer::builder(Registry::global())
//!     .name("shop")
//!     .version("1.0.0")
//!     .strategy(Strategy::Lazy)
//!     .context(CommandContext::new())
//!     .build()?
//!     .serve_stdio()
//!     .await?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "http")]
mod http;
mod tools;

#[cfg(feature = "http")]
pub use http::{HttpHandle, HttpOptions};

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde::Serialize;
use serde_json::{Value, json};

use tools::Route;
pub use tools::{BATCH, CALL, DETAIL, DISCOVER, DOCS, HELP, PIPE, SCHEMA};

use crate::context::CommandContext;
use crate::dispatch::batch::BatchRequest;
use crate::dispatch::pipe::PipeRequest;
use crate::dispatch::{Dispatcher, DispatcherBuilder, DispatcherError, Surface};
use crate::error::{CommandError, codes};
use crate::registry::Registry;
use crate::result::CommandResult;

/// The environment variable that overrides the strategy at start-up.
pub const STRATEGY_ENV: &str = "AFD_TOOL_STRATEGY";

/// How the catalog is listed as MCP tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// One tool per exposed command, plus afd-call, afd-batch and afd-pipe.
    Individual,
    /// One tool per category (an `action` picks the command), plus the three built-ins.
    Grouped,
    /// Exactly five tools: afd-discover, afd-detail, afd-call, afd-batch, afd-pipe.
    #[default]
    Lazy,
    /// Lazy, plus the commands marked `eager` as their own tools.
    Hybrid,
}

impl Strategy {
    /// The name used on the command line and in `AFD_TOOL_STRATEGY`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Strategy::Individual => "individual",
            Strategy::Grouped => "grouped",
            Strategy::Lazy => "lazy",
            Strategy::Hybrid => "hybrid",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A strategy name that is not one of `individual`, `grouped`, `lazy`, `hybrid`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool strategy '{0}': expected individual, grouped, lazy or hybrid")]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "individual" => Ok(Strategy::Individual),
            "grouped" => Ok(Strategy::Grouped),
            "lazy" => Ok(Strategy::Lazy),
            "hybrid" => Ok(Strategy::Hybrid),
            _ => Err(UnknownStrategy(text.to_owned())),
        }
    }
}

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The exposure lists name unknown commands.
    #[error(transparent)]
    Dispatcher(#[from] DispatcherError),
    /// `AFD_TOOL_STRATEGY` holds an unknown strategy.
    #[error("{STRATEGY_ENV}: {0}")]
    Strategy(#[from] UnknownStrategy),
    /// An eager command is not exposed.
    #[error("eager command '{0}' is not exposed on this server")]
    Eager(String),
}

/// Builds an [`McpServer`].
pub struct McpServerBuilder {
    dispatcher: DispatcherBuilder,
    name: String,
    version: String,
    strategy: Strategy,
    eager: Vec<String>,
    context: CommandContext,
    page_size: usize,
    instructions: Option<String>,
    list_names: bool,
    bootstrap: bool,
}

impl McpServerBuilder {
    /// Adds the bootstrap tools afd-help, afd-docs and afd-schema beside any strategy.
    #[must_use]
    pub fn bootstrap_tools(mut self, on: bool) -> Self {
        self.bootstrap = on;
        self
    }

    /// In lazy and hybrid, also lists every exposed command by name and one-line summary
    /// with a permissive schema (seed 002's approach A): the agent sees what exists without
    /// a discover call, and loads a schema with afd-detail. Costs tokens per command.
    #[must_use]
    pub fn list_names(mut self, on: bool) -> Self {
        self.list_names = on;
        self
    }

    /// The server's name, as `serverInfo.name`.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The server's version, as `serverInfo.version`.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The tool strategy (default lazy); `AFD_TOOL_STRATEGY` overrides it at build time.
    #[must_use]
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Lists these commands as their own tools in the hybrid strategy (beside those marked
    /// `#[command(eager)]`).
    #[must_use]
    pub fn eager<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.eager.extend(names.into_iter().map(Into::into));
        self
    }

    /// Configures exposure, limits and middleware (the dispatcher serves
    /// [`Surface::Mcp`]).
    #[must_use]
    pub fn dispatch(
        mut self,
        configure: impl FnOnce(DispatcherBuilder) -> DispatcherBuilder,
    ) -> Self {
        self.dispatcher = configure(self.dispatcher);
        self
    }

    /// The context every call starts from (app state, dev mode).
    #[must_use]
    pub fn context(mut self, context: CommandContext) -> Self {
        self.context = context;
        self
    }

    /// Tools per `tools/list` page (default 100).
    #[must_use]
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Replaces the generated server instructions.
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Builds the server: the exposed set, the strategy (after the environment override)
    /// and its tool listing, computed once.
    ///
    /// # Errors
    ///
    /// Unknown names in the exposure or eager lists, or an unknown `AFD_TOOL_STRATEGY`.
    pub fn build(self) -> Result<McpServer, BuildError> {
        let strategy = match std::env::var(STRATEGY_ENV) {
            Ok(value) if !value.trim().is_empty() => value.parse()?,
            _ => self.strategy,
        };
        let dispatcher = self.dispatcher.build()?;
        let mut eager: Vec<&'static str> = Vec::with_capacity(self.eager.len());
        for name in &self.eager {
            match dispatcher.registry().get(name) {
                Some(entry) if dispatcher.is_exposed(entry.name()) => eager.push(entry.name()),
                _ => return Err(BuildError::Eager(name.clone())),
            }
        }
        let listing = tools::listing(
            &dispatcher,
            strategy,
            &eager,
            self.list_names,
            self.bootstrap,
        );
        let mut routes = HashMap::with_capacity(listing.len());
        let mut tools = Vec::with_capacity(listing.len());
        for (tool, route) in listing {
            routes.insert(tool.name.to_string(), route);
            tools.push(tool);
        }
        let instructions = self
            .instructions
            .unwrap_or_else(|| instructions(&dispatcher, strategy));
        Ok(McpServer {
            inner: Arc::new(Inner {
                dispatcher,
                strategy,
                name: self.name,
                version: self.version,
                tools,
                routes,
                context: self.context,
                page_size: self.page_size,
                instructions,
            }),
        })
    }
}

fn instructions(dispatcher: &Dispatcher, strategy: Strategy) -> String {
    let categories: Vec<String> = dispatcher
        .available_categories()
        .iter()
        .take(12)
        .map(|(name, count)| format!("{name} ({count})"))
        .collect();
    let more = dispatcher.available_categories().len().saturating_sub(12);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let how = match strategy {
        Strategy::Lazy | Strategy::Hybrid => {
            "Commands are not listed as tools: call afd-discover (search, category or tag) to find one, afd-detail for its input schema, then afd-call to run it. afd-batch runs several at once; afd-pipe chains them."
        }
        Strategy::Individual => {
            "Each command is a tool. afd-call runs any command by name; afd-batch runs several at once; afd-pipe chains them."
        }
        Strategy::Grouped => {
            "Each category is a tool whose `action` picks the command. afd-call runs any command by name; afd-batch runs several at once; afd-pipe chains them."
        }
    };
    format!(
        "{} commands in {} categories: {}{more}. {how} Every result has success, data or error (with a suggestion), and reasoning.",
        dispatcher.exposed_count(),
        dispatcher.available_categories().len(),
        categories.join(", ")
    )
}

struct Inner {
    dispatcher: Dispatcher,
    strategy: Strategy,
    name: String,
    version: String,
    tools: Vec<Tool>,
    routes: HashMap<String, Route>,
    context: CommandContext,
    page_size: usize,
    instructions: String,
}

/// An MCP server over a command catalog. Cheap to clone; implements rmcp's
/// [`ServerHandler`], so it serves any rmcp transport.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.name)
            .field("strategy", &self.inner.strategy)
            .field("tools", &self.inner.tools.len())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A builder over a `'static` registry (usually [`Registry::global`]).
    pub fn builder(registry: &'static Registry) -> McpServerBuilder {
        McpServerBuilder {
            dispatcher: Dispatcher::builder(registry).surface(Surface::Mcp),
            name: "afd".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            strategy: Strategy::Lazy,
            eager: Vec::new(),
            context: CommandContext::new(),
            page_size: 100,
            instructions: None,
            list_names: false,
            bootstrap: false,
        }
    }

    /// The strategy in force (after the environment override).
    pub fn strategy(&self) -> Strategy {
        self.inner.strategy
    }

    /// The dispatcher every call goes through.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.inner.dispatcher
    }

    /// The full tool listing, in `tools/list` order.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The server instructions.
    pub fn instructions(&self) -> &str {
        &self.inner.instructions
    }

    /// Serves over stdin/stdout until the client disconnects. Logs must go to stderr.
    ///
    /// # Errors
    ///
    /// The transport failed to start.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let running = self.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok(())
    }

    /// Runs a tool call: the same answer whatever the transport.
    pub async fn call(&self, name: &str, arguments: Value, ctx: CommandContext) -> CallToolResult {
        let inner = &*self.inner;
        let dispatcher = &inner.dispatcher;
        let route = inner.routes.get(name).cloned().or_else(|| {
            // A tools/call naming an exposed command works in every strategy.
            dispatcher
                .registry()
                .get(name)
                .filter(|e| dispatcher.is_exposed(e.name()))
                .map(|e| Route::Command(e.name()))
        });
        match route {
            Some(Route::Discover) => to_tool_result(&dispatcher.discover(arguments)),
            Some(Route::Detail) => to_tool_result(&dispatcher.detail(arguments)),
            Some(Route::Help) => to_tool_result(&dispatcher.help(arguments)),
            Some(Route::Docs) => to_tool_result(&dispatcher.docs(arguments)),
            Some(Route::Schema) => to_tool_result(&dispatcher.schema(arguments)),
            Some(Route::Call) => {
                let (command, input) = match call_arguments(arguments) {
                    Ok(parts) => parts,
                    Err(error) => return to_tool_result(&CommandResult::<Value>::failure(error)),
                };
                to_tool_result(&dispatcher.call(&command, input, ctx).await)
            }
            Some(Route::Batch) => match BatchRequest::from_value(arguments) {
                Ok(request) => {
                    let result = dispatcher.batch(request, ctx).await;
                    let success = result.success;
                    tool_result(&result, success)
                }
                Err(error) => to_tool_result(&CommandResult::<Value>::failure(error)),
            },
            Some(Route::Pipe) => match PipeRequest::from_value(arguments) {
                Ok(request) => {
                    let result = dispatcher.pipe(request, ctx).await;
                    let success = result.success;
                    tool_result(&result, success)
                }
                Err(error) => to_tool_result(&CommandResult::<Value>::failure(error)),
            },
            Some(Route::Command(command)) => {
                to_tool_result(&dispatcher.call(command, arguments, ctx).await)
            }
            Some(Route::Group(category)) => {
                let mut arguments = arguments;
                let action = arguments
                    .as_object_mut()
                    .and_then(|map| map.remove("action"));
                match action.as_ref().and_then(Value::as_str) {
                    Some(command)
                        if dispatcher
                            .registry()
                            .get(command)
                            .is_some_and(|e| e.category() == category) =>
                    {
                        to_tool_result(&dispatcher.call(command, arguments, ctx).await)
                    }
                    _ => {
                        let actions: Vec<&str> = dispatcher
                            .exposed_entries()
                            .filter(|e| e.category() == category)
                            .map(|e| e.name())
                            .collect();
                        let error = CommandError::new(
                            codes::VALIDATION_ERROR,
                            format!(
                                "Invalid input for '{category}': `action` must be one of {}",
                                actions.join(", ")
                            ),
                        )
                        .with_suggestion(format!(
                            "Pass action: \"{}\" (or another listed command).",
                            actions.first().copied().unwrap_or_default()
                        ));
                        to_tool_result(&CommandResult::<Value>::failure(error))
                    }
                }
            }
            None => to_tool_result(&CommandResult::<Value>::failure(
                dispatcher.registry().not_found(name),
            )),
        }
    }
}

fn call_arguments(arguments: Value) -> Result<(String, Value), CommandError> {
    let invalid = |message: &str| {
        CommandError::new(
            codes::VALIDATION_ERROR,
            format!("Invalid input for 'afd-call': {message}"),
        )
        .with_suggestion("Send {command: \"<name>\", input: {...}}; afd-discover lists the names.")
    };
    let Value::Object(mut map) = arguments else {
        return Err(invalid("the arguments must be an object"));
    };
    let command = match map.remove("command") {
        Some(Value::String(command)) if !command.is_empty() => command,
        Some(_) => return Err(invalid("Field 'command' must be a non-empty string")),
        None => return Err(invalid("Required field 'command' is missing")),
    };
    let input = map.remove("input").unwrap_or_else(|| json!({}));
    if let Some(extra) = map.keys().next() {
        return Err(invalid(&format!("Unknown field '{extra}' is not allowed")));
    }
    Ok((command, input))
}

/// The result as `structuredContent` and as JSON text, with `isError` on failure.
fn tool_result<T: Serialize>(result: &T, success: bool) -> CallToolResult {
    let value = serde_json::to_value(result).unwrap_or_else(|error| {
        json!({"success": false, "error": {"code": codes::INTERNAL_ERROR, "message": error.to_string()}})
    });
    if success {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

fn to_tool_result(result: &CommandResult<Value>) -> CallToolResult {
    tool_result(result, result.success)
}

/// An opaque cursor: the offset, tagged so a made-up cursor is rejected.
fn encode_cursor(offset: usize) -> String {
    format!("afd1:{offset:x}")
}

fn decode_cursor(cursor: &str, len: usize) -> Option<usize> {
    let offset = usize::from_str_radix(cursor.strip_prefix("afd1:")?, 16).ok()?;
    (offset < len).then_some(offset)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            self.inner.name.clone(),
            self.inner.version.clone(),
        ))
        .with_instructions(self.inner.instructions.clone())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = &self.inner.tools;
        let offset = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => decode_cursor(&cursor, tools.len()).ok_or_else(|| {
                ErrorData::invalid_params(format!("invalid cursor '{cursor}'"), None)
            })?,
        };
        let end = (offset + self.inner.page_size).min(tools.len());
        Ok(ListToolsResult {
            tools: tools[offset..end].to_vec(),
            next_cursor: (end < tools.len()).then(|| encode_cursor(end)),
            ..Default::default()
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        let ctx = self
            .inner
            .context
            .clone()
            .with_cancellation(context.ct.child_token());
        Ok(self.call(&request.name, arguments, ctx).await.into())
    }
}
