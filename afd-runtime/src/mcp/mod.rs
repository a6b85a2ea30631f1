//! The MCP server: the command catalog served to agents over `rmcp`, listed as tools in
//! one of four strategies (individual, grouped, lazy, hybrid) and as resources. The only
//! module that knows rmcp.
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
mod resources;
mod stream;
mod tools;

#[cfg(feature = "http")]
pub use http::{HttpHandle, HttpOptions};

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressToken, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler};
use serde::{Deserialize as _, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use resources::{CATALOG_URI, CATEGORIES_PREFIX, COMMANDS_PREFIX};
use tools::Route;
pub use tools::{BATCH, CALL, DETAIL, DISCOVER, DOCS, HELP, PIPE, SCHEMA};

use crate::context::CommandContext;
use crate::contexts::SessionState;
use crate::dispatch::batch::BatchRequest;
use crate::dispatch::pipe::PipeRequest;
use crate::dispatch::{Dispatcher, DispatcherBuilder, DispatcherError, Surface};
use crate::error::{CommandError, codes};
use crate::registry::Registry;
use crate::result::CommandResult;

/// The `_meta` key that carries a session handle on any request (for tools whose
/// arguments cannot, such as a command's own tool).
pub const SESSION_META: &str = "afd/session";

/// The environment variable that overrides the strategy at start-up.
pub const STRATEGY_ENV: &str = "AFD_TOOL_STRATEGY";

/// The `_meta` key of a request's progress token.
const PROGRESS_TOKEN: &str = "progressToken";

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
    context_tools: bool,
    session_tools: bool,
}

impl McpServerBuilder {
    /// In lazy and hybrid, also lists afd-context-list, -enter, -exit and -suggest as tools
    /// (they are always callable through afd-call, batch, pipe and by name, and afd-discover
    /// shows them). Individual and grouped always list them. Off by default, to keep the
    /// lazy listing at five tools.
    #[must_use]
    pub fn context_tools(mut self, on: bool) -> Self {
        self.context_tools = on;
        self
    }

    /// Lets `tools/list` follow the session, for clients on a protocol with sessions
    /// (2025-11-25 and earlier), over stdio or a stateful HTTP session: individual and
    /// grouped list the universal tools plus the active context's, lazy and hybrid add the
    /// commands activated for the session (afd-detail `activate: true`), and every change
    /// is announced with `notifications/tools/list_changed`. Off by default. Clients on the
    /// 2026-07-28 protocol always see one fixed list, as that protocol requires; contexts
    /// then act through afd-discover, afd-call, batch and pipe.
    #[must_use]
    pub fn session_tools(mut self, on: bool) -> Self {
        self.session_tools = on;
        self
    }

    /// Adds the bootstrap tools afd-help, afd-docs and afd-schema beside any strategy.
    #[must_use]
    pub fn bootstrap_tools(mut self, on: bool) -> Self {
        self.bootstrap = on;
        self
    }

    /// In lazy and hybrid, also lists every exposed command by name and one-line summary
    /// with a permissive schema: the agent sees what exists without a discover call, and
    /// loads a schema with afd-detail. Costs tokens per command.
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
            self.context_tools,
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
        // Build the search index and afd-discover's lists off the serving path, so the
        // first discover does not pay.
        dispatcher.warm_in_background();
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
                session_tools: self.session_tools,
            }),
            connection: Arc::new(Connection::new(Transport::Stream)),
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
    let contexts = dispatcher.registry().contexts();
    let contexts = if contexts.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = contexts
            .iter()
            .map(|c| {
                let read_only = if c.is_read_only() { ", read-only" } else { "" };
                format!(
                    "{} ({}{read_only})",
                    c.name(),
                    crate::catalog::summary(c.description())
                )
            })
            .collect();
        let start = match dispatcher.sessions().config().policy() {
            crate::contexts::NoContextPolicy::Open => {
                "A session starts in no context, where every command is callable"
            }
            crate::contexts::NoContextPolicy::Lobby => {
                "A session starts in no context, where only universal commands are callable"
            }
        };
        format!(
            " Contexts scope what may be called: {}. {start}; afd-context-suggest finds the context for an intent, afd-context-enter enters it (scope read-only refuses changes), afd-context-exit returns. afd-discover names the active context.",
            names.join("; ")
        )
    };
    format!(
        "{} commands in {} categories: {}{more}. {how}{contexts} Every result has success, data or error (with a suggestion), and reasoning.",
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
    session_tools: bool,
}

/// How a connection reaches the server: a stream (stdio, a duplex pipe) is one client for
/// its whole life; HTTP is one only within a 2025-11-25 session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stream,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Http,
}

/// What belongs to one connection: the transport's own session, created on first use.
#[derive(Debug)]
struct Connection {
    transport: Transport,
    session: OnceLock<String>,
}

impl Connection {
    fn new(transport: Transport) -> Self {
        Connection {
            transport,
            session: OnceLock::new(),
        }
    }
}

/// An MCP server over a command catalog; implements rmcp's [`ServerHandler`], so it serves
/// any rmcp transport.
///
/// Cheap to clone. Each clone is a new connection: served, it has its own transport
/// session (the default session of its calls), so serve a clone per client.
pub struct McpServer {
    inner: Arc<Inner>,
    connection: Arc<Connection>,
}

impl Clone for McpServer {
    fn clone(&self) -> Self {
        McpServer {
            inner: self.inner.clone(),
            connection: Arc::new(Connection::new(self.connection.transport)),
        }
    }
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
        McpServer::builder_from(Dispatcher::builder(registry))
    }

    /// A builder over a shared registry, such as one built at run time from
    /// [`CommandDef::runtime`](crate::CommandDef::runtime) definitions. A host whose
    /// catalog changes while serving builds a new server over the new registry (sharing
    /// its [`Sessions`](crate::contexts::Sessions) and [`UsageStats`](crate::usage::UsageStats)
    /// through [`McpServerBuilder::dispatch`]) and swaps it in under connected clients with
    /// [`McpServer::with_connection_of`].
    pub fn builder_shared(registry: Arc<Registry>) -> McpServerBuilder {
        McpServer::builder_from(Dispatcher::builder_shared(registry))
    }

    /// This server's catalog served on `other`'s connection (its transport session, and
    /// so the session's context stack): for a host that swaps catalogs under connected
    /// clients.
    #[must_use]
    pub fn with_connection_of(&self, other: &McpServer) -> McpServer {
        McpServer {
            inner: self.inner.clone(),
            connection: other.connection.clone(),
        }
    }

    fn builder_from(dispatcher: DispatcherBuilder) -> McpServerBuilder {
        McpServerBuilder {
            dispatcher: dispatcher.surface(Surface::Mcp),
            name: "afd".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            strategy: Strategy::Lazy,
            eager: Vec::new(),
            context: CommandContext::new(),
            page_size: 100,
            instructions: None,
            list_names: false,
            bootstrap: false,
            context_tools: false,
            session_tools: false,
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
    /// Where both streams are pipes (how MCP clients start stdio servers) they are driven
    /// by Tokio's non-blocking pipe reactor rather than a blocking thread per read and
    /// write ([`rmcp::transport::stdio_pipes`]); a terminal or a file falls back to the
    /// blocking handles. The stream is served by [`serve_stream`](McpServer::serve_stream):
    /// `tools/call` answered by afd-rs directly, everything else by rmcp.
    ///
    /// # Errors
    ///
    /// The transport failed to start.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        self.serve_stream(stdin, stdout).await
    }

    /// Runs a `tools/call` request: the context rmcp's handler and the stdio front both
    /// give a call, its answer, and `notifications/tools/list_changed` where `tools/list`
    /// follows the session and the call changed what it lists.
    async fn run_tool_call(&self, call: ToolCall<'_>) -> Called {
        let ToolCall {
            name,
            arguments,
            meta,
            cancel,
            peer,
            legacy,
        } = call;
        let mut ctx = self.inner.context.clone().with_cancellation(cancel);
        let explicit = meta
            .and_then(|meta| meta.get(SESSION_META))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(session) = explicit.or_else(|| self.transport_session(legacy)) {
            ctx = ctx.with_session(session);
        }
        let progress = meta
            .and_then(|meta| meta.get(PROGRESS_TOKEN))
            .and_then(|token| ProgressToken::deserialize(token).ok());
        let mut notified = progress.is_some();
        if let Some(token) = progress {
            ctx = ctx.with_state(Progress {
                peer: peer.clone(),
                token,
            });
        }
        // Where tools/list follows the transport session, announce what the call changed.
        let followed = self.followed_session(legacy);
        let before = followed
            .as_deref()
            .map(|handle| self.inner.dispatcher.session(handle));
        let answer = self.answer_call(name, arguments, ctx).await;
        if let (Some(handle), Some(before)) = (followed.as_deref(), before) {
            let after = self.inner.dispatcher.session(handle);
            if self.listing_changed(before.as_deref(), after.as_deref()) {
                notified = true;
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!(%error, "could not send notifications/tools/list_changed");
                }
            }
        }
        Called { answer, notified }
    }

    /// Runs a tool call: the same answer whatever the transport.
    ///
    /// The call's session is `ctx`'s, unless the meta-tools' `session` argument names one.
    pub async fn call(&self, name: &str, arguments: Value, ctx: CommandContext) -> CallToolResult {
        self.answer_call(name, arguments, ctx)
            .await
            .into_tool_result()
    }

    /// A tool call's outcome, before it becomes a [`CallToolResult`] (which the stream front
    /// writes without building one).
    async fn answer_call(&self, name: &str, arguments: Value, ctx: CommandContext) -> Answer {
        let inner = &*self.inner;
        let dispatcher = &inner.dispatcher;
        let mut arguments = arguments;
        let mut ctx = ctx;
        let route = inner.routes.get(name).cloned().or_else(|| {
            // A tools/call naming an exposed command works in every strategy.
            dispatcher
                .registry()
                .get(name)
                .filter(|e| dispatcher.is_exposed(e.name()))
                .map(|e| Route::Command(e.name()))
        });
        match &route {
            // afd-discover and afd-detail read `session` from their input.
            Some(Route::Discover | Route::Detail) => {
                if let (Some(session), Some(map)) = (ctx.session(), arguments.as_object_mut())
                    && !map.contains_key("session")
                {
                    map.insert("session".into(), json!(session));
                }
            }
            Some(Route::Call | Route::Batch | Route::Pipe) => match take_session(&mut arguments) {
                Ok(Some(session)) => ctx = ctx.with_session(session),
                Ok(None) => {}
                Err(error) => return Answer::Command(CommandResult::failure(error)),
            },
            _ => {}
        }
        match route {
            Some(Route::Discover) => Answer::Command(dispatcher.discover(arguments)),
            Some(Route::Detail) => Answer::Command(dispatcher.detail(arguments)),
            Some(Route::Help) => Answer::Command(dispatcher.help(arguments)),
            Some(Route::Docs) => Answer::Command(dispatcher.docs(arguments)),
            Some(Route::Schema) => Answer::Command(dispatcher.schema(arguments)),
            Some(Route::Call) => {
                let (command, input) = match call_arguments(arguments) {
                    Ok(parts) => parts,
                    Err(error) => return Answer::Command(CommandResult::failure(error)),
                };
                Answer::Command(dispatcher.call(&command, input, ctx).await)
            }
            Some(Route::Batch) => match BatchRequest::from_value(arguments) {
                Ok(request) => Answer::Batch(dispatcher.batch(request, ctx).await),
                Err(error) => Answer::Command(CommandResult::failure(error)),
            },
            Some(Route::Pipe) => match PipeRequest::from_value(arguments) {
                Ok(request) => Answer::Pipe(dispatcher.pipe(request, ctx).await),
                Err(error) => Answer::Command(CommandResult::failure(error)),
            },
            Some(Route::Command(command)) => {
                Answer::Command(dispatcher.call(command, arguments, ctx).await)
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
                        Answer::Command(dispatcher.call(command, arguments, ctx).await)
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
                        Answer::Command(CommandResult::failure(error))
                    }
                }
            }
            None => Answer::Command(CommandResult::failure(
                dispatcher.registry().not_found(name),
            )),
        }
    }
}

/// Progress reporting to the MCP client, for a `tools/call` whose request carried a
/// progress token: handlers find it in their context (`ctx.state::<Progress>()`, absent
/// when the client asked for no progress) and send `notifications/progress` through it.
#[derive(Clone)]
pub struct Progress {
    peer: rmcp::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// Sends one `notifications/progress` (progress should grow with every report); a
    /// client that went away is logged, not an error of the call.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let mut params = rmcp::model::ProgressNotificationParam::new(self.token.clone(), progress);
        params.total = total;
        params.message = message;
        if let Err(error) = self.peer.notify_progress(params).await {
            tracing::debug!(%error, "could not send notifications/progress");
        }
    }
}

/// A `tools/call` request as an entrance (rmcp's handler, the stdio front) received it.
struct ToolCall<'a> {
    /// The tool's name.
    name: &'a str,
    /// The tool's arguments (an object; `{}` when the request had none).
    arguments: Value,
    /// The request's `_meta`, where the client names an `afd/session` or a progress token.
    meta: Option<&'a JsonObject>,
    /// Cancelled when the client cancels the request.
    cancel: CancellationToken,
    /// The client, which progress and `notifications/tools/list_changed` go to.
    peer: &'a Peer<RoleServer>,
    /// Whether the client's protocol keeps sessions (2025-11-25 and earlier).
    legacy: bool,
}

/// What a [`ToolCall`] produced.
struct Called {
    answer: Answer,
    /// Whether notifications may have been sent to the client during the call (progress,
    /// a changed listing): they must reach it before the response.
    notified: bool,
}

/// Removes the `session` argument of afd-call, afd-batch and afd-pipe.
fn take_session(arguments: &mut Value) -> Result<Option<String>, CommandError> {
    let Some(map) = arguments.as_object_mut() else {
        return Ok(None);
    };
    match map.remove("session") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(session)) if !session.is_empty() => Ok(Some(session)),
        Some(_) => Err(CommandError::new(
            codes::VALIDATION_ERROR,
            "Invalid input: Field 'session' must be the handle afd-context-enter returned",
        )
        .with_suggestion("Pass session as a string, or leave it out.")),
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

/// What a tool call produced.
enum Answer {
    Command(CommandResult<Value>),
    Batch(crate::dispatch::batch::BatchResult),
    Pipe(crate::dispatch::pipe::PipeResult),
}

impl Answer {
    fn success(&self) -> bool {
        match self {
            Answer::Command(result) => result.success,
            Answer::Batch(result) => result.success,
            Answer::Pipe(result) => result.success,
        }
    }

    /// The result as rmcp sends it: structured content, the same JSON as text, `isError`.
    fn into_tool_result(self) -> CallToolResult {
        let success = self.success();
        match &self {
            Answer::Command(result) => tool_result(result, success),
            Answer::Batch(result) => tool_result(result, success),
            Answer::Pipe(result) => tool_result(result, success),
        }
    }

    /// The JSON of [`into_tool_result`](Answer::into_tool_result)'s structured content,
    /// written once (rmcp's path builds a `Value` of it, then writes it twice).
    fn to_json(&self) -> String {
        let json = match self {
            Answer::Command(result) => serde_json::to_string(result),
            Answer::Batch(result) => serde_json::to_string(result),
            Answer::Pipe(result) => serde_json::to_string(result),
        };
        json.unwrap_or_else(|error| serialization_failure(&error).to_string())
    }
}

/// The result as `structuredContent` and as JSON text, with `isError` on failure.
fn tool_result<T: Serialize>(result: &T, success: bool) -> CallToolResult {
    let value = serde_json::to_value(result).unwrap_or_else(|error| serialization_failure(&error));
    if success {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// The structured content of a result that could not be serialised.
fn serialization_failure(error: &serde_json::Error) -> Value {
    json!({"success": false, "error": {"code": codes::INTERNAL_ERROR, "message": error.to_string()}})
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
                .enable_resources()
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let followed = self.followed_session(legacy(&context)).map(|handle| {
            let state = self.inner.dispatcher.session(&handle);
            self.session_tools(state.as_deref())
        });
        let tools = followed.as_ref().unwrap_or(&self.inner.tools);
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

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all = resources::all(&self.inner.dispatcher);
        let offset = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => decode_cursor(&cursor, all.len()).ok_or_else(|| {
                ErrorData::invalid_params(format!("invalid cursor '{cursor}'"), None)
            })?,
        };
        Ok(resources::page(
            all,
            offset,
            self.inner.page_size,
            encode_cursor,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.inner.dispatcher, &request.uri).map(Into::into)
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
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let called = self
            .run_tool_call(ToolCall {
                name: &request.name,
                arguments,
                meta: Some(&context.meta.0.0),
                cancel: context.ct.child_token(),
                peer: &context.peer,
                legacy: legacy(&context),
            })
            .await;
        Ok(called.answer.into_tool_result().into())
    }
}

impl McpServer {
    /// A server whose connections are HTTP ones.
    #[cfg(feature = "http")]
    fn for_http(&self) -> McpServer {
        McpServer {
            inner: self.inner.clone(),
            connection: Arc::new(Connection::new(Transport::Http)),
        }
    }

    /// The transport's own session, where it has one: a stream connection always, an HTTP
    /// connection only for a client whose protocol keeps sessions (`legacy`: 2025-11-25 or
    /// older). Created on first use, and made afresh if it expired.
    fn transport_session(&self, legacy: bool) -> Option<String> {
        let has_session = match self.connection.transport {
            Transport::Stream => true,
            Transport::Http => legacy,
        };
        if !has_session {
            return None;
        }
        let sessions = self.inner.dispatcher.sessions();
        let handle = self.connection.session.get_or_init(|| sessions.create());
        sessions.ensure(handle);
        Some(handle.clone())
    }

    /// The session `tools/list` follows: the transport's, when the author opted in and the
    /// client's protocol has sessions (`legacy`).
    fn followed_session(&self, legacy: bool) -> Option<String> {
        if !self.inner.session_tools || !legacy {
            return None;
        }
        self.transport_session(legacy)
    }

    /// The listing for a session: commands outside its context left out, and the commands
    /// it activated added with their full schemas.
    fn session_tools(&self, state: Option<&SessionState>) -> Vec<Tool> {
        let inner = &*self.inner;
        let dispatcher = &inner.dispatcher;
        let registry = dispatcher.registry();
        let mut tools: Vec<Tool> = inner
            .tools
            .iter()
            .filter_map(|tool| match inner.routes.get(tool.name.as_ref()) {
                Some(Route::Command(name)) => registry
                    .get(name)
                    .is_some_and(|entry| dispatcher.allows(state, entry.def()))
                    .then(|| tool.clone()),
                // A category's tool offers only the actions the session may call.
                Some(Route::Group(category)) => {
                    let entries: Vec<_> = dispatcher
                        .exposed_entries()
                        .filter(|e| e.category() == *category && dispatcher.allows(state, e.def()))
                        .collect();
                    (!entries.is_empty())
                        .then(|| tools::group_tool(dispatcher, category, &entries).0)
                }
                _ => Some(tool.clone()),
            })
            .collect();
        if matches!(inner.strategy, Strategy::Lazy | Strategy::Hybrid)
            && let Some(state) = state
        {
            for name in state.activated() {
                if tools.iter().any(|tool| tool.name == name.as_str()) {
                    continue;
                }
                if let Some(entry) = registry.get(name)
                    && dispatcher.is_exposed(entry.name())
                    && dispatcher.allows(Some(state), entry.def())
                {
                    tools.push(tools::command_tool(entry));
                }
            }
        }
        tools
    }

    fn listing_changed(&self, before: Option<&SessionState>, after: Option<&SessionState>) -> bool {
        if before == after {
            return false;
        }
        let names = |tools: Vec<Tool>| -> Vec<String> {
            tools
                .into_iter()
                .map(|tool| tool.name.into_owned())
                .collect()
        };
        names(self.session_tools(before)) != names(self.session_tools(after))
    }
}

/// Whether the request's protocol keeps sessions (2025-11-25 and earlier, which begin with
/// `initialize`); 2026-07-28 is stateless.
fn legacy(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_none_or(|version| version.has_initialize())
}
