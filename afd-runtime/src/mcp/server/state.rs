//! [`McpServer`] and its state: what the builder computed once (shared by every
//! connection, and replaced whole by [`McpServer::replace_catalog`]), and what belongs to
//! one connection (its transport's own session).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use rmcp::model::Tool;

use super::client::LevelCell;
use super::listing;
use super::strategy::Strategy;
use super::tools::{Rendering, Route};
use crate::audit::Audit;
use crate::auth::{PerScopes, Principal, Scopes};
use crate::command_context::CommandContext;
use crate::contexts::Sessions;
use crate::dispatch::Dispatcher;
use crate::ops::{Drain, Readiness};
use crate::prompt::Prompts;
use crate::resource::{ResourceUpdates, Resources, SubscriberId};
use crate::usage::UsageStats;

/// What the builder computed, shared by every connection of a server.
pub(in crate::mcp) struct Inner {
    pub(in crate::mcp) dispatcher: Dispatcher,
    /// The app's declared resources, beside the catalog's, and their subscriptions.
    pub(in crate::mcp) resources: Resources,
    /// The app's declared prompts.
    pub(in crate::mcp) prompts: Prompts,
    pub(in crate::mcp) strategy: Strategy,
    pub(in crate::mcp) name: String,
    pub(in crate::mcp) version: String,
    /// The full listing, in `tools/list` order.
    pub(in crate::mcp) tools: Vec<Tool>,
    /// What each listed tool does when called, by name.
    pub(in crate::mcp) routes: HashMap<String, Route>,
    /// The context every call starts from.
    pub(in crate::mcp) context: CommandContext,
    pub(in crate::mcp) page_size: usize,
    pub(in crate::mcp) instructions: String,
    /// Whether `tools/list` follows the transport session.
    pub(in crate::mcp) session_tools: bool,
    /// How command tools are rendered (also those a session activates later).
    pub(in crate::mcp) rendering: Rendering,
    /// The hybrid strategy's eager commands, as the builder was given them.
    pub(in crate::mcp) eager: Vec<&'static str>,
    /// The optional tools of the listing.
    pub(in crate::mcp) options: listing::Options,
    /// Whether the instructions were the app's own rather than generated from the catalog.
    pub(in crate::mcp) custom_instructions: bool,
    /// The server as seen by callers granted each scope set, made on first use.
    pub(in crate::mcp) views: PerScopes<Inner>,
    /// How the state of a call that asks its client something is sealed (2026-07-28).
    pub(in crate::mcp) rounds: Arc<super::rounds::Rounds>,
    /// The calls that run as tasks, and where their records live.
    pub(in crate::mcp) tasks: Arc<super::tasks::Tasks>,
    /// Whether a command of the catalog runs as a task: the server then offers MCP's tasks
    /// extension.
    pub(in crate::mcp) offers_tasks: bool,
    /// Where the server announces that its tool list changed.
    pub(in crate::mcp) list_changes: super::changes::ListChanges,
    /// The tools whose input has an `x-mcp-header` parameter, which the HTTP front checks
    /// against the request's `Mcp-Param-*` headers.
    pub(in crate::mcp) header_params: HashSet<String>,
    /// The scopes this is the view of ([`McpServer::for_scopes`]); `None` for the whole.
    pub(in crate::mcp) granted: Option<Scopes>,
    /// Where decisions are recorded.
    pub(in crate::mcp) audit: Arc<Audit>,
    /// The drain every transport of the server shares.
    pub(in crate::mcp) drain: Drain,
    /// What `/readyz` checks.
    pub(in crate::mcp) readiness: Readiness,
}

impl Inner {
    /// What a caller granted `granted` sees: the catalog its scopes cover, listed,
    /// routed and described as if the rest did not exist.
    fn view(&self, granted: &Scopes) -> Inner {
        let dispatcher = self.dispatcher.for_scopes(granted);
        let eager: Vec<&'static str> = self
            .eager
            .iter()
            .copied()
            .filter(|name| dispatcher.is_exposed(name))
            .collect();
        let listed = listing::listing(&dispatcher, self.strategy, &eager, self.options);
        let mut routes = HashMap::with_capacity(listed.len());
        let mut tools = Vec::with_capacity(listed.len());
        for (tool, route) in listed {
            routes.insert(tool.name.to_string(), route);
            tools.push(tool);
        }
        let header_params = super::advertise::header_param_tools(&tools);
        let instructions = if self.custom_instructions {
            self.instructions.clone()
        } else {
            super::instructions::instructions(&dispatcher, self.strategy)
        };
        Inner {
            dispatcher,
            resources: self.resources.clone(),
            prompts: self.prompts.clone(),
            strategy: self.strategy,
            name: self.name.clone(),
            version: self.version.clone(),
            tools,
            routes,
            context: self.context.clone(),
            page_size: self.page_size,
            instructions,
            session_tools: self.session_tools,
            rendering: self.rendering,
            eager,
            options: self.options,
            custom_instructions: self.custom_instructions,
            views: PerScopes::default(),
            rounds: self.rounds.clone(),
            tasks: self.tasks.clone(),
            offers_tasks: self.offers_tasks,
            list_changes: self.list_changes.clone(),
            header_params,
            granted: Some(granted.clone()),
            audit: self.audit.clone(),
            drain: self.drain.clone(),
            readiness: self.readiness.clone(),
        }
    }

    /// What serves once `next`'s catalog replaces this one ([`McpServer::replace_catalog`]):
    /// `next`'s commands, listing, routes, instructions and options; this server's state
    /// (resources and their subscriptions, prompts, request-state keys, tasks, the
    /// announcements, audit trail, drain and readiness checks), so nothing in flight or
    /// remembered is lost.
    fn succeeded_by(&self, next: &Inner) -> Inner {
        Inner {
            dispatcher: next.dispatcher.clone(),
            resources: self.resources.clone(),
            prompts: self.prompts.clone(),
            strategy: next.strategy,
            name: next.name.clone(),
            version: next.version.clone(),
            tools: next.tools.clone(),
            routes: next.routes.clone(),
            context: next.context.clone(),
            page_size: next.page_size,
            instructions: next.instructions.clone(),
            session_tools: next.session_tools,
            rendering: next.rendering,
            eager: next.eager.clone(),
            options: next.options,
            custom_instructions: next.custom_instructions,
            views: PerScopes::default(),
            rounds: self.rounds.clone(),
            tasks: self.tasks.clone(),
            offers_tasks: next.offers_tasks,
            list_changes: self.list_changes.clone(),
            header_params: next.header_params.clone(),
            granted: None,
            audit: self.audit.clone(),
            drain: self.drain.clone(),
            readiness: self.readiness.clone(),
        }
    }
}

/// How a connection reaches the server: a stream (stdio, a duplex pipe) is one client for
/// its whole life; HTTP is one only within a 2025-11-25 session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stream,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Http,
}

/// What belongs to one connection: the transport's own session, created on first use and
/// ended with the connection.
#[derive(Debug)]
struct Connection {
    transport: Transport,
    session: OnceLock<String>,
    /// Where the transport's session lives (set when it is created): the connection's end
    /// (a stdio client gone, an HTTP session closed or expired) ends it there, so the
    /// session's state and its live usage history go with it.
    owner: OnceLock<(Sessions, UsageStats)>,
    /// Who this connection is among the resources' subscribers, and where it subscribed
    /// (set at its first subscription): its end ends its subscriptions.
    subscriber: SubscriberId,
    subscriptions: OnceLock<ResourceUpdates>,
    /// The log level the client set with `logging/setLevel`.
    log_level: Arc<LevelCell>,
    /// Cancelled when the connection ends: what watches on its behalf stops.
    closed: tokio_util::sync::CancellationToken,
}

impl Connection {
    fn new(transport: Transport) -> Self {
        Connection {
            transport,
            session: OnceLock::new(),
            owner: OnceLock::new(),
            subscriber: SubscriberId::next(),
            subscriptions: OnceLock::new(),
            log_level: Arc::default(),
            closed: tokio_util::sync::CancellationToken::new(),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.closed.cancel();
        if let Some(updates) = self.subscriptions.get() {
            updates.forget(self.subscriber);
        }
        if let (Some(handle), Some((sessions, usage))) = (self.session.get(), self.owner.get()) {
            sessions.end_detached(handle);
            usage.forget_session(handle);
        }
    }
}

/// An MCP server over a command catalog; implements rmcp's [`ServerHandler`](rmcp::ServerHandler), so it serves
/// any rmcp transport.
///
/// Cheap to clone. Each clone is a new connection: served, it has its own transport
/// session (the default session of its calls), so serve a clone per client.
///
/// Every clone serves the same catalog, which [`replace_catalog`](McpServer::replace_catalog)
/// can replace while clients are connected. A handle's accessors ([`tools`](McpServer::tools),
/// [`dispatcher`](McpServer::dispatcher), ...) describe the catalog it was made with;
/// [`current`](McpServer::current) is the handle of the one served now.
pub struct McpServer {
    /// The catalog as of this handle (a view of it, for a caller's scopes).
    pub(in crate::mcp) inner: Arc<Inner>,
    /// The catalog every handle of this server serves now.
    served: Arc<ArcSwap<Inner>>,
    connection: Arc<Connection>,
}

impl Clone for McpServer {
    fn clone(&self) -> Self {
        McpServer {
            inner: self.inner.clone(),
            served: self.served.clone(),
            connection: Arc::new(Connection::new(self.connection.transport)),
        }
    }
}

/// A server whose connection is held weakly: the HTTP front's handle on a session's server,
/// which rmcp holds while the session lasts, so that the front's handle does not keep it.
#[cfg(feature = "http")]
pub(in crate::mcp) struct WeakServer {
    inner: Arc<Inner>,
    served: Arc<ArcSwap<Inner>>,
    connection: std::sync::Weak<Connection>,
}

#[cfg(feature = "http")]
impl WeakServer {
    /// The server, while its connection lasts.
    pub(in crate::mcp) fn upgrade(&self) -> Option<McpServer> {
        Some(McpServer {
            inner: self.inner.clone(),
            served: self.served.clone(),
            connection: self.connection.upgrade()?,
        })
    }

    /// Whether its connection still lasts.
    pub(in crate::mcp) fn is_alive(&self) -> bool {
        self.connection.strong_count() > 0
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
    /// Cancelled when this connection ends.
    pub(in crate::mcp) fn closed(&self) -> tokio_util::sync::CancellationToken {
        self.connection.closed.clone()
    }

    /// The log level this connection's client set (`logging/setLevel`), shared with the
    /// log sinks of its calls.
    pub(in crate::mcp) fn log_level(&self) -> &Arc<LevelCell> {
        &self.connection.log_level
    }

    /// This server, its connection held weakly.
    #[cfg(feature = "http")]
    pub(in crate::mcp) fn downgrade(&self) -> WeakServer {
        WeakServer {
            inner: self.inner.clone(),
            served: self.served.clone(),
            connection: Arc::downgrade(&self.connection),
        }
    }

    /// This server's catalog served on `other`'s connection (its transport session, and
    /// so the session's context stack): for a host that swaps catalogs under connected
    /// clients.
    #[must_use]
    pub fn with_connection_of(&self, other: &McpServer) -> McpServer {
        McpServer {
            inner: self.inner.clone(),
            served: self.served.clone(),
            connection: other.connection.clone(),
        }
    }

    /// This handle as the server serves now, on the same connection: the catalog the last
    /// [`replace_catalog`](McpServer::replace_catalog) put in place (seen with the same
    /// scopes, for a handle made by [`for_scopes`](McpServer::for_scopes)). Every request
    /// is answered by it.
    #[must_use]
    pub fn current(&self) -> McpServer {
        let served = self.served.load();
        let inner = match &self.inner.granted {
            _ if Arc::ptr_eq(&served, &self.inner) => self.inner.clone(),
            None => Arc::clone(&served),
            Some(granted) => served.views.get_or_make(granted, || served.view(granted)),
        };
        McpServer {
            inner,
            served: self.served.clone(),
            connection: self.connection.clone(),
        }
    }

    /// Serves `next`'s catalog from now on, on every connection of this server (every
    /// clone, every transport, sessions already open): its commands, tools, routes,
    /// instructions and listing options. This server keeps its state: resources and their
    /// subscriptions, prompts, request-state keys, tasks, announcements, audit trail, drain
    /// and readiness checks. Calls already running finish on the catalog they started on.
    ///
    /// Clients are told: listening clients of the 2026-07-28 protocol get
    /// `notifications/tools/list_changed` on their `subscriptions/listen` streams, and
    /// sessions of earlier revisions on theirs.
    ///
    /// Sessions and usage statistics live in the dispatcher: build `next` with this
    /// server's stores (`.dispatch(|d| d.sessions(..).usage(..))`, from
    /// [`dispatcher`](McpServer::dispatcher)) for them to carry over.
    ///
    /// ```no_run
    /// # use afd_runtime::{Registry, mcp::McpServer};
    /// let server = McpServer::builder(Registry::global()).build().unwrap();
    /// let sessions = server.dispatcher().sessions().clone();
    /// let usage = server.dispatcher().usage().clone();
    /// // The same commands, `refund` withdrawn while its provider is down.
    /// let next = McpServer::builder(Registry::global())
    ///     .dispatch(move |d| d.sessions(sessions).usage(usage).hide(["refund"]))
    ///     .build()
    ///     .unwrap();
    /// server.replace_catalog(&next);
    /// assert!(!server.current().tools().iter().any(|tool| tool.name == "refund"));
    /// ```
    pub fn replace_catalog(&self, next: &McpServer) {
        let next = next.served.load_full();
        let before = self.served.rcu(|now| Arc::new(now.succeeded_by(&next)));
        before.list_changes.tools_changed();
    }

    /// This server as a caller granted `granted` sees it, on this connection: tools,
    /// search, descriptions and catalog resources of the commands its scopes cover only
    /// (see [`Dispatcher::for_scopes`]). Made once per scope set and shared.
    #[must_use]
    pub fn for_scopes(&self, granted: &Scopes) -> McpServer {
        let inner = self
            .inner
            .views
            .get_or_make(granted, || self.inner.view(granted));
        McpServer {
            inner,
            served: self.served.clone(),
            connection: self.connection.clone(),
        }
    }

    /// This server as it serves now, as `principal` sees it: [`for_scopes`](McpServer::for_scopes)
    /// of its scopes, or the whole server without a principal.
    pub(in crate::mcp) fn seen_by(&self, principal: Option<&Principal>) -> McpServer {
        let now = self.current();
        match principal {
            Some(principal) => now.for_scopes(principal.scopes()),
            None => now,
        }
    }

    /// Whether the tool `name` of the catalog served now has `x-mcp-header` parameters.
    #[cfg(feature = "http")]
    pub(in crate::mcp) fn has_header_params(&self, name: &str) -> bool {
        let served = self.served.load();
        !served.header_params.is_empty() && served.header_params.contains(name)
    }

    /// The scopes a call of the tool `name` needs that `granted` lacks, where `name` is a
    /// command this server exposes and `granted` does not cover (a direct `tools/call` a
    /// caller must be refused with `insufficient_scope`); `None` otherwise.
    pub fn missing_scopes(&self, granted: &Scopes, name: &str) -> Option<Vec<String>> {
        let served = self.served.load();
        let dispatcher = &served.dispatcher;
        let entry = dispatcher.registry().get(name)?;
        if !dispatcher.is_exposed(entry.name()) {
            return None;
        }
        let required = dispatcher.required_scopes(entry.def());
        if granted.covers_all(&required) {
            return None;
        }
        Some(required.into_iter().map(str::to_owned).collect())
    }

    /// Where this server records its decisions.
    pub fn audit(&self) -> &Audit {
        &self.inner.audit
    }

    /// The drain its transports share: once it begins, they refuse new sessions and calls
    /// (retryable) and let those in flight finish. See [`ops`](crate::ops).
    pub fn drain(&self) -> &Drain {
        &self.inner.drain
    }

    /// Where the server announces that its tool list changed: listening clients of the
    /// 2026-07-28 protocol (`subscriptions/listen` with `toolsListChanged`) get
    /// `notifications/tools/list_changed`.
    pub fn list_changes(&self) -> &super::changes::ListChanges {
        &self.inner.list_changes
    }

    /// What `/readyz` checks: the stores and model the server uses (see
    /// [`Readiness::for_dispatcher`]), the app's own checks, and the drain.
    pub fn readiness(&self) -> &Readiness {
        &self.inner.readiness
    }

    /// The strategy in force (after the environment override).
    pub fn strategy(&self) -> Strategy {
        self.inner.strategy
    }

    /// The dispatcher every call goes through.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.inner.dispatcher
    }

    /// The app's declared resources this server serves: say `resources().updated(uri).await`
    /// to tell the sessions subscribed to `uri` that it changed.
    pub fn resources(&self) -> &Resources {
        &self.inner.resources
    }

    /// The app's declared prompts this server serves.
    pub fn prompts(&self) -> &Prompts {
        &self.inner.prompts
    }

    /// This connection as a resource subscriber: its id, with the subscriptions recorded
    /// so that the connection's end forgets them.
    pub(in crate::mcp) fn subscriber(&self) -> SubscriberId {
        let _ = self
            .connection
            .subscriptions
            .set(self.inner.resources.updates().clone());
        self.connection.subscriber
    }

    /// The full tool listing, in `tools/list` order.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The server instructions.
    pub fn instructions(&self) -> &str {
        &self.inner.instructions
    }

    /// A stream server (a stdio or duplex connection) over what the builder computed.
    pub(in crate::mcp) fn new(inner: Inner) -> McpServer {
        let inner = Arc::new(inner);
        McpServer {
            served: Arc::new(ArcSwap::new(inner.clone())),
            inner,
            connection: Arc::new(Connection::new(Transport::Stream)),
        }
    }

    /// A server whose connections are HTTP ones.
    #[cfg(feature = "http")]
    pub(in crate::mcp) fn for_http(&self) -> McpServer {
        McpServer {
            inner: self.inner.clone(),
            served: self.served.clone(),
            connection: Arc::new(Connection::new(Transport::Http)),
        }
    }

    /// The conventions' `network.transport` of this connection (`pipe` for a stream).
    pub(in crate::mcp) fn network_transport(&self) -> crate::metrics::Transport {
        match self.connection.transport {
            Transport::Stream => crate::metrics::Transport::Pipe,
            Transport::Http => crate::metrics::Transport::Tcp,
        }
    }

    /// The transport's own session, where it has one: a stream connection always, an HTTP
    /// connection only for a client whose protocol keeps sessions (`legacy`: 2025-11-25 or
    /// older). Created on first use, and made afresh if it expired. A store that cannot be
    /// reached is only logged here: the call's own session check then refuses the call.
    pub(in crate::mcp) async fn transport_session(&self, legacy: bool) -> Option<String> {
        let has_session = match self.connection.transport {
            Transport::Stream => true,
            Transport::Http => legacy,
        };
        if !has_session {
            return None;
        }
        let dispatcher = &self.inner.dispatcher;
        let sessions = dispatcher.sessions();
        let handle = self.connection.session.get_or_init(|| {
            let _ = self
                .connection
                .owner
                .set((sessions.clone(), dispatcher.usage().clone()));
            Sessions::new_handle()
        });
        if let Err(error) = sessions.ensure(handle).await {
            tracing::warn!(%error, "could not make sure the connection's session exists");
        }
        Some(handle.clone())
    }
}
