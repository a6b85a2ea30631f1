//! Building a server: [`McpServerBuilder`] and its options (the strategy, with its
//! environment overrides), why a build fails ([`BuildError`]), and the server
//! instructions generated from the catalog.

use std::collections::HashMap;
use std::sync::Arc;

use super::env::{
    BLOCKING_LIMIT_ENV, BLOCKING_POOL_ENV, COMPACT_SCHEMAS_ENV, LOADING_ENV, OUTPUT_SCHEMAS_ENV,
    REQUEST_STATE_KEYS_ENV, STRATEGY_ENV,
};
use super::instructions::instructions;
use super::listing;
use super::rounds::{DEFAULT_STATE_TTL, Rounds};
use super::state::{Inner, McpServer};
use super::strategy::{Strategy, UnknownStrategy};
use super::tasks::{DEFAULT_POLL_INTERVAL, DEFAULT_TASK_TTL, Tasks};
use super::tools::Rendering;
use crate::audit::Audit;
use crate::command_context::CommandContext;
use crate::declared::DeclarationError;
use crate::dispatch::{Dispatcher, DispatcherBuilder, DispatcherError, Surface};
use crate::ops::{Drain, Readiness};
use crate::prompt::Prompts;
use crate::registry::Registry;
use crate::resource::Resources;

/// An app's readiness probe, kept until the server is built.
type ReadyProbe = Arc<dyn Fn() -> crate::ops::CheckFuture + Send + Sync>;

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
    /// `TOOL_LOADING` holds something other than `eager` or `lazy`.
    #[error("{LOADING_ENV}: unknown tool loading '{0}': expected eager or lazy")]
    Loading(String),
    /// `AFD_OUTPUT_SCHEMAS` holds something other than on or off.
    #[error("{OUTPUT_SCHEMAS_ENV}: expected on or off, not '{0}'")]
    OutputSchemas(String),
    /// `AFD_COMPACT_SCHEMAS` holds something other than on or off.
    #[error("{COMPACT_SCHEMAS_ENV}: expected on or off, not '{0}'")]
    CompactSchemas(String),
    /// `AFD_BLOCKING_LIMIT` holds something other than a whole number of at least 1.
    #[error("{BLOCKING_LIMIT_ENV}: expected a whole number of at least 1, not '{0}'")]
    BlockingLimit(String),
    /// `AFD_BLOCKING_POOL` holds something other than on or off.
    #[error("{BLOCKING_POOL_ENV}: expected on or off, not '{0}'")]
    BlockingPool(String),
    /// The keys that sign request states (`AFD_REQUEST_STATE_KEYS` or
    /// [`McpServerBuilder::request_state_keys`]) are unusable, or the OS random source
    /// that would make one cannot be read.
    #[error("{REQUEST_STATE_KEYS_ENV}: {0}")]
    RequestStateKeys(String),
    /// A listed tool's input schema has an `x-mcp-header` annotation a client could not
    /// use (a client drops such a tool).
    #[error("tool '{tool}': {reason}")]
    HeaderParam {
        /// The tool.
        tool: String,
        /// What is wrong with the annotation.
        reason: String,
    },
    /// An eager command is not exposed.
    #[error("eager command '{0}' is not exposed on this server")]
    Eager(String),
    /// The declared resources or prompts conflict.
    #[error(transparent)]
    Declarations(#[from] DeclarationError),
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
    output_schemas: bool,
    compact_schemas: bool,
    resources: Option<Resources>,
    prompts: Option<Prompts>,
    audit: Option<Audit>,
    ready_checks: Vec<(String, ReadyProbe)>,
    drain: Option<Drain>,
    state_keys: Option<Vec<(String, Vec<u8>)>>,
    state_ttl: std::time::Duration,
    list_changes: Option<super::changes::ListChanges>,
    task_store: Option<Arc<dyn crate::tasks::TaskStore>>,
    task_ttl: std::time::Duration,
    task_poll: std::time::Duration,
}

impl McpServerBuilder {
    /// A builder with the defaults, over `dispatcher` (which then serves [`Surface::Mcp`]).
    pub(in crate::mcp) fn new(dispatcher: DispatcherBuilder) -> Self {
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
            output_schemas: true,
            compact_schemas: true,
            resources: None,
            prompts: None,
            audit: None,
            ready_checks: Vec::new(),
            drain: None,
            state_keys: None,
            state_ttl: DEFAULT_STATE_TTL,
            list_changes: None,
            task_store: None,
            task_ttl: DEFAULT_TASK_TTL,
            task_poll: DEFAULT_POLL_INTERVAL,
        }
    }

    /// Where the records of calls that run as tasks are kept (MCP's tasks extension):
    /// by default in this process ([`MemoryTaskStore`](crate::tasks::MemoryTaskStore)).
    /// Give replicas a shared one ([`RedisTaskStore`](crate::tasks::RedisTaskStore), beside
    /// their sessions) for any of them to answer `tasks/get`, `tasks/update` and
    /// `tasks/cancel` for a task another one runs.
    #[must_use]
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// How long a task stays readable after its creation (its `ttlMs`; default five
    /// minutes). A task still running is kept until it ends, then this long again.
    #[must_use]
    pub fn task_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// How often a client should poll a task (its `pollIntervalMs`; default one second).
    #[must_use]
    pub fn task_poll_interval(mut self, every: std::time::Duration) -> Self {
        self.task_poll = every;
        self
    }

    /// Shares `changes` with other servers (a gateway's catalog rebuilt while it serves), so
    /// that an announcement reaches the listeners of each: by default each server has its
    /// own. See [`McpServer::list_changes`].
    #[must_use]
    pub fn list_changes(mut self, changes: super::changes::ListChanges) -> Self {
        self.list_changes = Some(changes);
        self
    }

    /// The keys that sign the `requestState` of a call that asks its client something on
    /// MCP 2026-07-28 (key id, secret of at least 32 bytes): the first signs, every one
    /// opens, so a key is rotated by putting the new one first. Give every replica the same
    /// keys for a call to resume on any of them. `AFD_REQUEST_STATE_KEYS` overrides them;
    /// without either each process makes a random key of its own.
    #[must_use]
    pub fn request_state_keys(
        mut self,
        keys: impl IntoIterator<Item = (impl Into<String>, impl Into<Vec<u8>>)>,
    ) -> Self {
        self.state_keys = Some(
            keys.into_iter()
                .map(|(kid, key)| (kid.into(), key.into()))
                .collect(),
        );
        self
    }

    /// How long a `requestState` may be brought back (default ten minutes).
    #[must_use]
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Shares `drain` with other servers (a gateway's catalog rebuilt while it serves):
    /// by default each server has a drain of its own.
    #[must_use]
    pub fn drain(mut self, drain: Drain) -> Self {
        self.drain = Some(drain);
        self
    }

    /// Adds a readiness check of the app's own to `/readyz` (a database the handlers
    /// need, say), beside those the server makes for its stores and model; `probe` is
    /// `Ok` when the dependency answers. Each check has two seconds.
    #[must_use]
    pub fn ready_check<F, Fut>(mut self, name: impl Into<String>, probe: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
    {
        let probe: ReadyProbe = Arc::new(move || Box::pin(probe()) as crate::ops::CheckFuture);
        self.ready_checks.push((name.into(), probe));
        self
    }

    /// Where the server records one event per decision (see [`audit`](crate::audit));
    /// default: `tracing` under [`AUDIT_TARGET`](crate::audit::AUDIT_TARGET) only.
    #[must_use]
    pub fn audit(mut self, audit: Audit) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Sets the OAuth scopes a caller needs for the command `name`, over those it declares
    /// and its category's default ([`DispatcherBuilder::command_scopes`]).
    #[must_use]
    pub fn command_scopes<I, S>(mut self, name: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.dispatcher = self.dispatcher.command_scopes(name, scopes);
        self
    }

    /// The resources served beside the catalog's own (default: every `#[resource]` in the
    /// binary, [`Resources::global`]). Keep a clone to say when one changed
    /// ([`Resources::updated`]); [`McpServer::resources`] gives the same set.
    #[must_use]
    pub fn resources(mut self, resources: Resources) -> Self {
        self.resources = Some(resources);
        self
    }

    /// The prompts served (default: every `#[prompt]` in the binary, [`Prompts::global`]).
    #[must_use]
    pub fn prompts(mut self, prompts: Prompts) -> Self {
        self.prompts = Some(prompts);
        self
    }

    /// Whether a command's tool states the shape of its results' data as `outputSchema`
    /// (default on; `AFD_OUTPUT_SCHEMAS=off` overrides it at build time). The schema is the
    /// data's, once and compactly, under `data`; off, the individual listing costs about
    /// what the reference TypeScript server's does, and afd-detail and afd-schema still
    /// give every output schema.
    #[must_use]
    pub fn output_schemas(mut self, on: bool) -> Self {
        self.output_schemas = on;
        self
    }

    /// Whether a command's input schema is advertised compactly (default on;
    /// `AFD_COMPACT_SCHEMAS=off` overrides it at build time): without numeric `format`s,
    /// `default: null`, the `null` alternative of optional fields, trivial lower bounds and
    /// titles, with `$defs` used once inlined, which saves an agent tokens on every listing.
    /// Off, each command's input schema is advertised exactly as generated (JSON Schema
    /// 2020-12, `$defs` and any `$schema` or `additionalProperties` the input type states),
    /// for clients that validate with or display the full schema. Calls are validated
    /// against the full schema either way.
    #[must_use]
    pub fn compact_schemas(mut self, on: bool) -> Self {
        self.compact_schemas = on;
        self
    }

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
    /// 2026-07-28 protocol see the server's one list whatever their session does, as that
    /// protocol requires (it changes only with [`McpServer::replace_catalog`]); contexts
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

    /// The tool strategy (default lazy); `AFD_TOOL_STRATEGY` (or `TOOL_LOADING`) overrides
    /// it at build time.
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

    /// Items per page of `tools/list`, `resources/list`, `resources/templates/list` and
    /// `prompts/list` (default 100).
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
    /// Unknown names in the exposure or eager lists, or an unknown `AFD_TOOL_STRATEGY`,
    /// `TOOL_LOADING`, `AFD_OUTPUT_SCHEMAS` or `AFD_COMPACT_SCHEMAS`.
    pub fn build(self) -> Result<McpServer, BuildError> {
        let strategy = match env_strategy()? {
            Some(strategy) => strategy,
            None => self.strategy,
        };
        let dispatcher = self.dispatcher.build()?;
        let mut eager: Vec<&'static str> = Vec::with_capacity(self.eager.len());
        for name in &self.eager {
            match dispatcher.registry().get(name) {
                Some(entry) if dispatcher.is_exposed(entry.name()) => eager.push(entry.name()),
                _ => return Err(BuildError::Eager(name.clone())),
            }
        }
        let rendering = Rendering {
            output_schemas: env_switch(OUTPUT_SCHEMAS_ENV)
                .map_err(BuildError::OutputSchemas)?
                .unwrap_or(self.output_schemas),
            compact_schemas: env_switch(COMPACT_SCHEMAS_ENV)
                .map_err(BuildError::CompactSchemas)?
                .unwrap_or(self.compact_schemas),
        };
        if let Some(pool) = env_switch(BLOCKING_POOL_ENV).map_err(BuildError::BlockingPool)? {
            crate::blocking::set_pool(pool);
        }
        if let Ok(limit) = std::env::var(BLOCKING_LIMIT_ENV) {
            match limit.trim().parse::<usize>() {
                Ok(n) if n >= 1 => {
                    crate::blocking::set_limit(n);
                }
                _ => return Err(BuildError::BlockingLimit(limit)),
            }
        }
        let state_keys = match std::env::var(REQUEST_STATE_KEYS_ENV) {
            Ok(text) if !text.trim().is_empty() => {
                Some(Rounds::parse_keys(&text).map_err(BuildError::RequestStateKeys)?)
            }
            _ => self.state_keys,
        };
        let rounds = match state_keys {
            Some(keys) => {
                Rounds::with_keys(&keys, self.state_ttl).map_err(BuildError::RequestStateKeys)?
            }
            None => Rounds::random(self.state_ttl)
                .map_err(|error| BuildError::RequestStateKeys(error.to_string()))?,
        };
        let options = listing::Options {
            list_names: self.list_names,
            bootstrap: self.bootstrap,
            context_tools: self.context_tools,
            rendering,
        };
        let listing = listing::listing(&dispatcher, strategy, &eager, options);
        let mut routes = HashMap::with_capacity(listing.len());
        let mut tools = Vec::with_capacity(listing.len());
        for (tool, route) in listing {
            routes.insert(tool.name.to_string(), route);
            tools.push(tool);
        }
        for tool in &tools {
            super::advertise::header_params(&tool.input_schema).map_err(|reason| {
                BuildError::HeaderParam {
                    tool: tool.name.to_string(),
                    reason,
                }
            })?;
        }
        let custom_instructions = self.instructions.is_some();
        let instructions = self
            .instructions
            .unwrap_or_else(|| instructions(&dispatcher, strategy));
        // Build the search index and afd-discover's lists off the serving path, so the
        // first discover does not pay.
        dispatcher.warm_in_background();
        let drain = self.drain.unwrap_or_default();
        let readiness = Readiness::for_dispatcher(&dispatcher);
        let offers_tasks = dispatcher
            .registry()
            .commands()
            .iter()
            .any(|entry| entry.def().task_support() != crate::TaskSupport::Forbidden);
        let task_store = self
            .task_store
            .unwrap_or_else(|| Arc::new(crate::tasks::MemoryTaskStore::new()));
        let tasks = Arc::new(Tasks::new(task_store, self.task_ttl, self.task_poll));
        let resources = match self.resources {
            Some(resources) => resources,
            None => Resources::try_global()?.clone(),
        };
        let prompts = match self.prompts {
            Some(prompts) => prompts,
            None => Prompts::try_global()?.clone(),
        };
        let header_params = super::advertise::header_param_tools(&tools);
        Ok(McpServer::new(Inner {
            dispatcher,
            resources,
            prompts,
            strategy,
            name: self.name,
            version: self.version,
            tools,
            routes,
            context: self.context,
            page_size: self.page_size,
            instructions,
            session_tools: self.session_tools,
            rendering,
            eager,
            options,
            custom_instructions,
            views: Default::default(),
            rounds: Arc::new(rounds),
            tasks,
            offers_tasks,
            list_changes: self.list_changes.unwrap_or_default(),
            header_params,
            granted: None,
            audit: Arc::new(self.audit.unwrap_or_default()),
            readiness: self
                .ready_checks
                .into_iter()
                .fold(readiness, |readiness, (name, probe)| {
                    readiness.with_check(name, move || probe())
                })
                .with_drain(drain.clone()),
            drain,
        }))
    }
}

/// The strategy the environment asks for: `AFD_TOOL_STRATEGY`, else `TOOL_LOADING`
/// (`eager` is the individual strategy, `lazy` the lazy one); unset or blank is none.
fn env_strategy() -> Result<Option<Strategy>, BuildError> {
    let set = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    };
    if let Some(value) = set(STRATEGY_ENV) {
        return Ok(Some(value.parse()?));
    }
    match set(LOADING_ENV) {
        None => Ok(None),
        Some(value) => match value.trim().to_ascii_lowercase().as_str() {
            "eager" => Ok(Some(Strategy::Individual)),
            "lazy" => Ok(Some(Strategy::Lazy)),
            _ => Err(BuildError::Loading(value)),
        },
    }
}

/// An on/off environment variable: `Some` when set and not blank, the value itself as the
/// error when it is neither on nor off.
fn env_switch(name: &str) -> Result<Option<bool>, String> {
    let Some(value) = std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
    else {
        return Ok(None);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(Some(true)),
        "off" | "false" | "0" | "no" => Ok(Some(false)),
        _ => Err(value),
    }
}

impl McpServer {
    /// A builder over a `'static` registry (usually [`Registry::global`]).
    pub fn builder(registry: &'static Registry) -> McpServerBuilder {
        McpServerBuilder::new(Dispatcher::builder(registry))
    }

    /// A builder over a shared registry, such as one built at run time from
    /// [`CommandDef::runtime`](crate::CommandDef::runtime) definitions. A host whose
    /// catalog changes while serving builds a new server over the new registry (sharing
    /// its [`Sessions`](crate::contexts::Sessions) and [`UsageStats`](crate::usage::UsageStats)
    /// through [`McpServerBuilder::dispatch`]) and swaps it in under connected clients with
    /// [`McpServer::with_connection_of`].
    pub fn builder_shared(registry: Arc<Registry>) -> McpServerBuilder {
        McpServerBuilder::new(Dispatcher::builder_shared(registry))
    }
}
