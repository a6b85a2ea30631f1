//! [`DispatcherBuilder`]: decides which commands a [`Dispatcher`] exposes (its surface,
//! explicit lists), stacks the middleware, and sets its limits, sessions and usage
//! statistics.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service};

use super::{CommandRequest, CommandService, Dispatcher, HandlerService, Inner, Limits, Surface};
use crate::auth::Scopes;
use crate::contexts::{SessionConfig, SessionStore, Sessions};
use crate::registry::{CONTEXT_OPS, Exposed, SharedRegistry};
use crate::result::CommandResult;
#[cfg(feature = "semantic")]
use crate::search::semantic::SemanticOptions;
use crate::usage::UsageStats;

/// Why a [`Dispatcher`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatcherError {
    /// An exposure list names a command the registry does not have.
    #[error("cannot expose or hide '{name}': no such command{}", match suggestion {
        Some(similar) => format!(" (did you mean '{similar}'?)"),
        None => String::new(),
    })]
    UnknownCommand {
        /// The unknown name.
        name: String,
        /// The closest registered name, if any.
        suggestion: Option<&'static str>,
    },
}

/// Builds a [`Dispatcher`].
pub struct DispatcherBuilder {
    registry: SharedRegistry,
    surface: Surface,
    enforce_surface: bool,
    only: Option<Vec<String>>,
    also: Vec<String>,
    hidden: Vec<String>,
    stack: CommandService,
    limits: Limits,
    sessions: Option<Sessions>,
    session_store: Option<Arc<dyn SessionStore>>,
    /// `sessions` came from [`DispatcherBuilder::sessions`] (possibly shared), not from
    /// [`DispatcherBuilder::session_config`].
    shared_sessions: bool,
    /// [`DispatcherBuilder::session_idle_timeout`].
    session_idle: Option<Duration>,
    usage: Option<UsageStats>,
    /// [`DispatcherBuilder::command_scopes`], by name as given.
    scope_overrides: Vec<(String, Vec<String>)>,
    /// [`DispatcherBuilder::scope_bound`]: `None` reads `AFD_SCOPES` for the MCP and
    /// command-line surfaces, `Some(None)` bounds nothing.
    scope_bound: Option<Option<Scopes>>,
    /// The semantic layer of search: `None` reads `AFD_EMBED_MODEL` when the index is built,
    /// `Some(None)` turns it off.
    #[cfg(feature = "semantic")]
    semantic: Option<Option<SemanticOptions>>,
}

impl DispatcherBuilder {
    /// The semantic layer of ranked search (feature `semantic`): `Some(options)` loads that
    /// model, `None` keeps search lexical. By default the model folder named by
    /// `AFD_EMBED_MODEL` is used, if any. The model and the commands' vectors load on a
    /// background thread when the search index is first built ([`Dispatcher::warm`]);
    /// search is lexical until they are ready, and stays so, with a logged warning, when
    /// the model cannot be loaded.
    #[cfg(feature = "semantic")]
    #[must_use]
    pub fn semantic(mut self, options: Option<SemanticOptions>) -> Self {
        self.semantic = Some(options);
        self
    }

    /// Where calls are recorded, for afd-discover's `suggestedNext` and search tie-breaks
    /// (default: in memory). [`UsageStats::open`] persists them in SQLite;
    /// [`UsageStats::disabled`] records nothing.
    #[must_use]
    pub fn usage(mut self, usage: UsageStats) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The sessions that hold each agent's active context (default: in memory, with
    /// [`SessionConfig::default`]). Share one [`Sessions`] between dispatchers to share
    /// sessions.
    #[must_use]
    pub fn sessions(mut self, sessions: Sessions) -> Self {
        self.sessions = Some(sessions);
        self.shared_sessions = true;
        self
    }

    /// Keeps sessions in `store` (Redis, for replicas that share sessions), under the rules
    /// [`session_config`](DispatcherBuilder::session_config) or
    /// [`sessions`](DispatcherBuilder::sessions) set, before or after this call; the
    /// store is told their idle timeout ([`SessionStore::set_idle_timeout`]).
    #[must_use]
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// Session rules (idle timeout, no-context policy, bounds) for in-memory sessions, and
    /// for sessions in a [`session_store`](DispatcherBuilder::session_store).
    #[must_use]
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.sessions = Some(Sessions::new(config));
        self.shared_sessions = false;
        self
    }

    /// Sessions unused for this long expire, whatever idle timeout the other session rules
    /// give, before or after this call; the rest of the rules stay. It does not change
    /// [`Sessions`] given to [`sessions`](DispatcherBuilder::sessions) without a store,
    /// which other dispatchers may share. What `serve --session-idle` sets.
    #[must_use]
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle = Some(idle);
        self
    }

    /// Which surface this dispatcher serves (default: [`Surface::InProcess`]).
    #[must_use]
    pub fn surface(mut self, surface: Surface) -> Self {
        self.surface = surface;
        self
    }

    /// Applies the surface's `expose(...)` options to the explicit lists too
    /// ([`expose_only`](Self::expose_only), [`expose`](Self::expose)): a command the surface
    /// does not allow stays unexposed whatever the lists name. The command line sets it, so
    /// a command marked `expose(cli = false)` is never callable from it.
    #[must_use]
    pub fn enforce_surface(mut self) -> Self {
        self.enforce_surface = true;
        self
    }

    /// Exposes exactly these commands, whatever their `expose(...)` options say (the AFD
    /// specification's `commands` array: listing a command is choosing to expose it).
    #[must_use]
    pub fn expose_only<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Also exposes these commands.
    #[must_use]
    pub fn expose<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.also.extend(names.into_iter().map(Into::into));
        self
    }

    /// Hides these commands (they stay visible to introspection, not callable).
    #[must_use]
    pub fn hide<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hidden.extend(names.into_iter().map(Into::into));
        self
    }

    /// Sets the OAuth scopes a caller needs for the command `name`, over those it declares
    /// (`#[command(scopes(...))]`) and its category's default: an operator's choice made
    /// where the server is built. An empty list requires none.
    #[must_use]
    pub fn command_scopes<I, S>(mut self, name: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scope_overrides
            .push((name.into(), scopes.into_iter().map(Into::into).collect()));
        self
    }

    /// Exposes only the commands whose scopes `scopes` covers, as if every caller had
    /// been granted them: how a server without OAuth (stdio, the command line) is bounded.
    /// `None` bounds nothing. By default the MCP and command-line surfaces read
    /// [`AFD_SCOPES`](crate::auth::SCOPES_ENV); other surfaces are not bounded.
    #[must_use]
    pub fn scope_bound(mut self, scopes: Option<Scopes>) -> Self {
        self.scope_bound = Some(scopes);
        self
    }

    /// Wraps the stack in a `tower` layer. Layers added later wrap those added earlier,
    /// so the last one added sees a call first.
    #[must_use]
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<CommandService>,
        L::Service: Service<CommandRequest, Response = CommandResult<Value>, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as Service<CommandRequest>>::Future: Send + 'static,
    {
        self.stack = BoxCloneSyncService::new(layer.layer(self.stack));
        self
    }

    /// Sets the limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Builds the dispatcher.
    ///
    /// # Errors
    ///
    /// A name in an exposure list that the registry does not have.
    pub fn build(self) -> Result<Dispatcher, DispatcherError> {
        let registry = self.registry;
        let check = |name: &str| -> Result<&'static str, DispatcherError> {
            registry.get(name).map(|entry| entry.name()).ok_or_else(|| {
                DispatcherError::UnknownCommand {
                    name: name.to_owned(),
                    suggestion: registry.suggest(name, 1).first().copied(),
                }
            })
        };
        let mut exposed: HashSet<&'static str> = match &self.only {
            Some(names) => names
                .iter()
                .map(|name| check(name))
                .collect::<Result<_, _>>()?,
            None => registry
                .commands()
                .iter()
                .filter(|entry| self.surface.allows(entry.def()))
                .map(|entry| entry.name())
                .collect(),
        };
        for name in &self.also {
            exposed.insert(check(name)?);
        }
        for name in &self.hidden {
            exposed.remove(check(name)?);
        }
        if self.enforce_surface {
            exposed.retain(|name| {
                registry
                    .get(name)
                    .is_some_and(|entry| self.surface.allows(entry.def()))
            });
        }
        // The context operations are how an agent moves between contexts: always callable
        // where contexts are declared.
        if !registry.contexts().is_empty() {
            exposed.extend(CONTEXT_OPS.iter().map(|op| op.name()));
        }
        let mut scopes: HashMap<&'static str, Box<[Box<str>]>> = HashMap::new();
        for (name, required) in self.scope_overrides {
            let name = check(&name)?;
            scopes.insert(name, required.into_iter().map(Into::into).collect());
        }
        let bound = match self.scope_bound {
            Some(bound) => bound,
            None if matches!(self.surface, Surface::Mcp | Surface::Cli) => Scopes::from_env(),
            None => None,
        };
        if let Some(bound) = &bound {
            exposed.retain(|name| {
                let def = registry.get(name).map(|entry| entry.def());
                def.is_some_and(|def| {
                    let required = super::required_scopes(&registry, &scopes, def);
                    bound.covers_all(&required)
                })
            });
        }
        let exposed = Exposed::new(&registry, exposed);
        Ok(Dispatcher {
            inner: Arc::new(Inner {
                registry,
                exposed,
                stack: self.stack,
                limits: self.limits,
                sessions: match self.session_store {
                    Some(store) => {
                        let mut config = self
                            .sessions
                            .map(|sessions| sessions.config().clone())
                            .unwrap_or_default();
                        if let Some(idle) = self.session_idle {
                            config = config.idle_timeout(idle);
                        }
                        store.set_idle_timeout(config.get_idle_timeout());
                        Sessions::with_store(config, store)
                    }
                    None => match (self.sessions, self.session_idle) {
                        (Some(sessions), _) if self.shared_sessions => sessions,
                        (sessions, Some(idle)) => Sessions::new(
                            sessions
                                .map(|sessions| sessions.config().clone())
                                .unwrap_or_default()
                                .idle_timeout(idle),
                        ),
                        (sessions, None) => sessions.unwrap_or_default(),
                    },
                },
                usage: self.usage.unwrap_or_else(UsageStats::in_memory),
                search: OnceLock::new(),
                scopes,
                views: Default::default(),
                bound,
                #[cfg(feature = "semantic")]
                semantic: self.semantic.unwrap_or_else(SemanticOptions::from_env),
            }),
            view: None,
            subject: None,
        })
    }
}

impl DispatcherBuilder {
    pub(super) fn new(registry: SharedRegistry) -> Self {
        DispatcherBuilder {
            registry,
            surface: Surface::InProcess,
            enforce_surface: false,
            only: None,
            also: Vec::new(),
            hidden: Vec::new(),
            stack: BoxCloneSyncService::new(HandlerService),
            limits: Limits::default(),
            sessions: None,
            session_store: None,
            shared_sessions: false,
            session_idle: None,
            usage: None,
            scope_overrides: Vec::new(),
            scope_bound: None,
            #[cfg(feature = "semantic")]
            semantic: None,
        }
    }
}
