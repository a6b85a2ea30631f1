//! The gateway: upstream servers behind one afd-runtime MCP server. The served catalog is
//! rebuilt whenever an upstream's tool list changes, and swapped in under connected
//! clients (who get `notifications/tools/list_changed`); sessions and usage statistics
//! carry over. A request that needs a server whose tools are not known yet waits for it
//! (the `pending` module).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock};

use afd_runtime::mcp::{ListChanges, McpServer, Strategy};
use afd_runtime::ops::Drain;
use afd_runtime::usage::UsageStats;
use afd_runtime::{ContextDef, Registry, Sessions, SourceLocation};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig as ServerInfo, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::cache::Cache;
use crate::catalog::{Interner, server_description, tool_id};
use crate::config::{Config, ContextConfig, refusal};
use crate::pending;
use crate::upstream::{Event, Upstream};

/// Options the command line adds to the configuration.
#[derive(Clone, Default)]
pub struct Options {
    /// The strategy (overrides the configuration's).
    pub strategy: Option<Strategy>,
    /// Where usage statistics are kept (default: in memory).
    pub usage: Option<UsageStats>,
}

/// The gateway: its upstreams and the catalog it serves.
pub struct Gateway {
    upstreams: Vec<Arc<Upstream>>,
    contexts: Vec<(&'static ContextDef, ContextConfig)>,
    cache: Cache,
    strategy: Strategy,
    sessions: Sessions,
    usage: UsageStats,
    interner: Mutex<Interner>,
    current: RwLock<McpServer>,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    rebuilds: std::sync::atomic::AtomicUsize,
    predictive_start: bool,
    /// The drain every catalog the gateway serves shares.
    drain: Drain,
    /// Where every catalog announces a change to 2026-07-28 listeners, so a listen stream
    /// opened on one catalog hears that the next is in place.
    changes: ListChanges,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.upstreams)
            .field("strategy", &self.strategy)
            .finish_non_exhaustive()
    }
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The strategy in the configuration is unknown.
    #[error("{0}")]
    Strategy(#[from] afd_runtime::mcp::UnknownStrategy),
    /// The served catalog could not be built.
    #[error("cannot build the gateway's catalog: {0}")]
    Catalog(String),
}

/// The `server` property added to afd-discover's input: servers are categories.
const SERVER_FILTER: &str = "server";

impl Gateway {
    /// Builds the gateway from a configuration: every upstream known from the cache, none
    /// started. Call [`Gateway::run_events`] on a task (and [`Gateway::warm`]) to start
    /// eager servers and fill the cache.
    ///
    /// # Errors
    ///
    /// An unknown strategy, or a catalog that cannot be built.
    pub fn new(
        config: &Config,
        options: Options,
    ) -> Result<(Arc<Gateway>, UnboundedReceiver<Event>), GatewayError> {
        let strategy = match (options.strategy, &config.gateway.strategy) {
            (Some(strategy), _) => strategy,
            (None, Some(text)) => text.parse()?,
            (None, None) => Strategy::Lazy,
        };
        let cache = Cache::new(config.cache_dir());
        let (events, receiver) = unbounded_channel();
        let upstreams = config
            .servers
            .iter()
            .filter(|(_, server)| !server.disabled)
            .map(|(name, server)| {
                let cached = cache.load(name, &server.fingerprint());
                Arc::new(Upstream::new(
                    name.clone(),
                    server.clone(),
                    config.call_timeout(),
                    config.gateway.read_only,
                    cached,
                    events.clone(),
                ))
            })
            .collect();
        // The configuration is fixed for the gateway's life: its contexts are leaked once.
        let contexts = config
            .contexts
            .iter()
            .map(|(name, context)| {
                let leak =
                    |text: &str| -> &'static str { Box::leak(text.to_owned().into_boxed_str()) };
                let triggers: Vec<&'static str> =
                    context.triggers.iter().map(|t| leak(t)).collect();
                let mut def = ContextDef::new(
                    leak(name),
                    leak(&context.description),
                    SourceLocation::RUNTIME,
                )
                .with_triggers(Box::leak(triggers.into_boxed_slice()));
                if let Some(parent) = &context.parent {
                    def = def.with_parent(leak(parent));
                }
                if context.read_only {
                    def = def.with_read_only();
                }
                let def: &'static ContextDef = Box::leak(Box::new(def));
                (def, context.clone())
            })
            .collect();
        let sessions = Sessions::default();
        let usage = options.usage.unwrap_or_else(UsageStats::in_memory);
        let drain = Drain::new();
        let changes = ListChanges::new();
        let placeholder = McpServer::builder_shared(Arc::new(
            Registry::builder()
                .build()
                .map_err(|e| GatewayError::Catalog(e.to_string()))?,
        ))
        .drain(drain.clone())
        .list_changes(changes.clone())
        .build()
        .map_err(|e| GatewayError::Catalog(e.to_string()))?;
        let gateway = Arc::new(Gateway {
            upstreams,
            contexts,
            cache,
            strategy,
            sessions,
            usage,
            interner: Mutex::new(Interner::default()),
            current: RwLock::new(placeholder),
            peers: Mutex::new(Vec::new()),
            rebuilds: Default::default(),
            predictive_start: config.gateway.predictive_start.unwrap_or(true),
            drain,
            changes,
        });
        gateway.rebuild()?;
        Ok((gateway, receiver))
    }

    /// The upstreams, in configuration order.
    pub fn upstreams(&self) -> &[Arc<Upstream>] {
        &self.upstreams
    }

    /// The upstream named `name`.
    pub fn upstream(&self, name: &str) -> Option<&Arc<Upstream>> {
        self.upstreams.iter().find(|u| u.name() == name)
    }

    /// The MCP server currently served (its catalog as of the last rebuild).
    pub fn server(&self) -> McpServer {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The drain of every connection the gateway serves: begin it to refuse new calls
    /// while those in flight finish (see [`afd_runtime::ops`]).
    pub fn drain(&self) -> &Drain {
        &self.drain
    }

    /// Whether the server of the tool predicted next is started in the background
    /// ([`Gateway::start_predicted`]).
    pub fn predictive_start(&self) -> bool {
        self.predictive_start
    }

    /// How many times the catalog was built.
    pub fn rebuilds(&self) -> usize {
        self.rebuilds.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many definitions were leaked for run-time commands so far.
    pub fn leaked_definitions(&self) -> usize {
        lock(&self.interner).leaked()
    }

    /// The tool listing clients get (with afd-discover's `server` filter).
    pub fn tools(&self) -> Vec<Tool> {
        patch_tools(self.server().tools().to_vec())
    }

    /// Rebuilds the served catalog from what each upstream's tools are now, and swaps it
    /// in; connected clients get `notifications/tools/list_changed` (2025-11-25 sessions
    /// directly, 2026-07-28 clients on their `subscriptions/listen` streams).
    ///
    /// # Errors
    ///
    /// The catalog cannot be built (two tool ids collide after sanitising are skipped,
    /// so this is an internal error).
    pub fn rebuild(&self) -> Result<(), GatewayError> {
        let mut builder = Registry::builder();
        for (def, _) in &self.contexts {
            builder = builder.context(def);
        }
        let mut hidden = Vec::new();
        let mut seen = HashSet::new();
        {
            let mut interner = lock(&self.interner);
            for upstream in &self.upstreams {
                let list = upstream.tools();
                let Some(list) = list else { continue };
                let description = server_description(upstream, Some(&list));
                builder = builder.category(interner.category(upstream.name(), &description));
                for tool in &list.tools {
                    let id = tool_id(upstream.name(), &tool.name);
                    let contexts: Vec<&'static str> = self
                        .contexts
                        .iter()
                        .filter(|(_, context)| context.holds(upstream.name(), &id))
                        .map(|(def, _)| def.name())
                        .collect();
                    let def = interner.command(upstream, tool, contexts);
                    if !seen.insert(def.name()) {
                        tracing::warn!(server = upstream.name(), tool = %tool.name, "two tools share the id {}; keeping the first", def.name());
                        continue;
                    }
                    if refusal(
                        upstream.config(),
                        upstream.gateway_read_only(),
                        &tool.name,
                        def.is_mutation(),
                    )
                    .is_some()
                    {
                        hidden.push(def.name());
                    }
                    builder = builder.register(def);
                }
            }
        }
        let registry = builder
            .build()
            .map_err(|e| GatewayError::Catalog(e.to_string()))?;
        let registry = Arc::new(registry);
        let instructions = self.instructions(&registry, &hidden);
        let sessions = self.sessions.clone();
        let usage = self.usage.clone();
        let server = McpServer::builder_shared(registry)
            .name("afd-gateway")
            .version(env!("CARGO_PKG_VERSION"))
            .strategy(self.strategy)
            .instructions(instructions)
            .dispatch(move |d| d.sessions(sessions).usage(usage).hide(hidden))
            .drain(self.drain.clone())
            .list_changes(self.changes.clone())
            .build()
            .map_err(|e| GatewayError::Catalog(e.to_string()))?;
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = server;
        self.rebuilds
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.changes.tools_changed();
        let peers: Vec<Peer<RoleServer>> = lock(&self.peers).clone();
        if !peers.is_empty() {
            tokio::spawn(async move {
                for peer in peers {
                    if let Err(error) = peer.notify_tool_list_changed().await {
                        tracing::debug!(%error, "could not send notifications/tools/list_changed");
                    }
                }
            });
        }
        Ok(())
    }

    fn instructions(&self, registry: &Registry, hidden: &[&str]) -> String {
        let servers: Vec<String> = self
            .upstreams
            .iter()
            .map(|upstream| {
                let list = upstream.tools();
                let count = registry
                    .commands()
                    .iter()
                    .filter(|e| e.category() == upstream.name() && !hidden.contains(&e.name()))
                    .count();
                let known = if list.is_some() {
                    format!("{count} tools")
                } else {
                    "tools not known yet".to_owned()
                };
                format!(
                    "{} ({known}, {}): {}",
                    upstream.name(),
                    upstream.status().as_str(),
                    server_description(upstream, list.as_ref())
                )
            })
            .collect();
        let how = match self.strategy {
            Strategy::Lazy | Strategy::Hybrid => {
                "Tools are not listed: afd-discover finds them (search, or server to list one server's tools), afd-detail gives a tool's input schema, afd-call runs it; afd-batch runs several, afd-pipe chains them."
            }
            _ => "afd-call runs any tool by id; afd-batch runs several, afd-pipe chains them.",
        };
        format!(
            "A gateway to {} MCP servers; tool ids are server.tool. Servers: {}. {how} Every result has success, data (the upstream's structuredContent, or its content) or error (with a suggestion).",
            self.upstreams.len(),
            servers.join("; ")
        )
    }

    /// Starts every eager server, and every server with no cached tool list so its tools
    /// become discoverable, in the background; each on its own, so a slow or failing one
    /// delays no other.
    pub fn warm(self: &Arc<Self>) {
        for upstream in &self.upstreams {
            if upstream.config().eager || upstream.tools().is_none() {
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if let Err(error) = upstream.connect().await {
                        tracing::warn!(server = upstream.name(), error = %error.message, "could not start the upstream");
                    }
                });
            }
        }
    }

    /// Handles what upstreams report until every sender is gone: tool-list changes
    /// (refetch, cache, rebuild) and restarts of eager servers after their backoff.
    pub async fn run_events(self: Arc<Self>, mut events: UnboundedReceiver<Event>) {
        while let Some(event) = events.recv().await {
            match event {
                Event::ToolsChanged(name) => {
                    let Some(upstream) = self.upstream(&name).cloned() else {
                        continue;
                    };
                    // A notification from a running server: fetch its list again.
                    upstream.refresh_tools().await;
                    if let Some(list) = upstream.tools() {
                        self.cache.store(&name, &list);
                    }
                    if let Err(error) = self.rebuild() {
                        tracing::error!(%error, "rebuilding the catalog failed");
                    }
                }
                Event::Restart(name) => {
                    let Some(upstream) = self.upstream(&name).cloned() else {
                        continue;
                    };
                    tokio::spawn(async move {
                        loop {
                            if let Some(wait) = upstream.backoff_left() {
                                tokio::time::sleep(wait).await;
                            }
                            match upstream.connect().await {
                                Ok(_) => break,
                                Err(error) => {
                                    tracing::warn!(server = upstream.name(), error = %error.message, "restart failed")
                                }
                            }
                        }
                    });
                }
            }
        }
    }

    /// Stops every upstream.
    pub fn shutdown(&self) {
        for upstream in &self.upstreams {
            upstream.stop();
        }
    }

    /// An MCP connection to this gateway (serve one per client).
    pub fn connection(self: &Arc<Self>) -> GatewayServer {
        GatewayServer {
            gateway: self.clone(),
            carrier: self.server(),
        }
    }

    /// Serves clients over streamable HTTP with `options` (an OAuth resource server where
    /// they say so, like any afd server) until the handle is shut down. Each HTTP session
    /// is a connection of its own. A client's `Authorization` never reaches an upstream:
    /// upstreams get the headers of their own configuration only.
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn serve_http(
        self: &Arc<Self>,
        options: afd_runtime::mcp::HttpOptions,
    ) -> std::io::Result<afd_runtime::mcp::HttpHandle> {
        let gateway = self.clone();
        self.server()
            .bind_http_with(move || gateway.connection(), options)
            .await
    }

    /// Serves one client over stdin/stdout until it disconnects, then stops the upstreams.
    ///
    /// # Errors
    ///
    /// The transport failed.
    pub async fn serve_stdio(
        self: &Arc<Self>,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let running = self.connection().serve(rmcp::transport::stdio()).await?;
        let outcome = running.waiting().await;
        self.shutdown();
        outcome?;
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Adds the `server` filter to afd-discover's input schema.
fn patch_tools(mut tools: Vec<Tool>) -> Vec<Tool> {
    for tool in &mut tools {
        if tool.name == afd_runtime::mcp::DISCOVER {
            let mut schema = (*tool.input_schema).clone();
            if let Some(Value::Object(properties)) = schema.get_mut("properties") {
                properties.insert(
                    SERVER_FILTER.to_owned(),
                    json!({"type": "string", "description": "Only this server's tools (servers are the categories)."}),
                );
            }
            tool.input_schema = Arc::new(schema);
        }
    }
    tools
}

/// One client's connection to the gateway: every request is served by the current
/// catalog on this connection's session.
#[derive(Clone)]
pub struct GatewayServer {
    gateway: Arc<Gateway>,
    carrier: McpServer,
}

impl std::fmt::Debug for GatewayServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayServer").finish_non_exhaustive()
    }
}

impl GatewayServer {
    fn current(&self) -> McpServer {
        self.gateway.server().with_connection_of(&self.carrier)
    }
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerInfo {
        self.current().get_info()
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        lock(&self.gateway.peers).push(context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result = self.current().list_tools(request, context).await?;
        result.tools = patch_tools(result.tools);
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.current().list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.current()
            .list_resource_templates(request, context)
            .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.current().read_resource(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let tool = self.current().get_tool(name)?;
        patch_tools(vec![tool]).pop()
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == afd_runtime::mcp::DISCOVER
            && let Some(arguments) = request.arguments.as_mut()
            && let Some(server) = arguments.remove(SERVER_FILTER)
        {
            arguments.entry("category").or_insert(server);
        }
        // Servers whose tools are not known yet are waited for (each within its start
        // timeout, or until the client cancels) before the catalog answers.
        let upstreams = &self.gateway.upstreams;
        let needed = pending::needed(
            upstreams,
            self.gateway.server().dispatcher().registry(),
            &request.name,
            request.arguments.as_ref(),
        );
        if !needed.is_empty() {
            let started = tokio::select! {
                started = pending::wait_for(&needed) => started,
                () = context.ct.cancelled() => false,
            };
            if started && let Err(error) = self.gateway.rebuild() {
                tracing::error!(%error, "rebuilding the catalog failed");
            }
        }
        let listing =
            request.name == afd_runtime::mcp::DISCOVER || request.name == afd_runtime::mcp::DETAIL;
        // The tool a command call runs, directly or through afd-call.
        let called = if request.name == afd_runtime::mcp::CALL {
            request
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get("command"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        } else {
            Some(request.name.to_string())
        };
        let mut response = self.current().call_tool(request, context).await?;
        if let Some(called) = called {
            self.gateway.start_predicted(&called);
        }
        if let CallToolResponse::Complete(result) = &mut response {
            let unlisted = if listing {
                pending::unlisted(upstreams)
            } else {
                pending::not_running(&needed)
            };
            pending::annotate(result, &unlisted);
        }
        Ok(response)
    }
}
