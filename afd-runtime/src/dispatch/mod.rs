//! The one call path every surface shares: limits, lookup, exposure, validation, the
//! middleware stack, the handler (panics caught), cancellation and timing. afd-call, every
//! afd-batch entry and every afd-pipe step go through [`Dispatcher::call`], so no surface
//! and no meta-tool is a way around a restriction.

mod limits;
mod path;

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::convert::Infallible;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

pub use limits::Limits;
pub(crate) use path::CallPath;

use crate::command::CommandDef;
use crate::context::CommandContext;
use crate::contexts::ops::{OpsBinding, is_op};
use crate::contexts::{SessionConfig, Sessions};
use crate::error::{CommandError, codes};
use crate::registry::{CommandEntry, NameKind, Registry};
use crate::result::CommandResult;
use crate::search::{Document, SearchIndex};
use crate::similarity::find_similar;
use crate::usage::UsageStats;

/// One command execution, as the middleware stack sees it: the definition, the validated
/// input and the context.
#[derive(Debug)]
#[non_exhaustive]
pub struct CommandRequest {
    /// The command being run.
    pub def: &'static CommandDef,
    /// Its input, already validated against the input schema.
    pub input: Value,
    /// The call's context.
    pub ctx: CommandContext,
}

/// The type-erased middleware stack: a cloneable `tower::Service` from [`CommandRequest`] to
/// [`CommandResult`], which never fails (failures are results).
pub type CommandService = BoxCloneSyncService<CommandRequest, CommandResult<Value>, Infallible>;

/// The innermost service: runs the handler, turning a panic into `INTERNAL_ERROR`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HandlerService;

impl Service<CommandRequest> for HandlerService {
    type Response = CommandResult<Value>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<CommandResult<Value>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: CommandRequest) -> Self::Future {
        let CommandRequest { def, input, ctx } = request;
        let dev_mode = ctx.dev_mode();
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| def.invoke(input, ctx)));
        Box::pin(async move {
            let outcome = match started {
                Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            Ok(outcome.unwrap_or_else(|panic| panicked(def.name(), panic.as_ref(), dev_mode)))
        })
    }
}

fn panicked(name: &str, panic: &(dyn Any + Send), dev_mode: bool) -> CommandResult<Value> {
    let reason = if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    };
    tracing::error!(command = name, panic = %reason, "command handler panicked");
    let message = if dev_mode {
        format!("Command '{name}' panicked: {reason}")
    } else {
        format!("Command '{name}' failed unexpectedly")
    };
    CommandResult::failure(CommandError::internal(message))
}

/// The surface a dispatcher serves: decides which commands are exposed by default, from
/// each command's `expose(...)` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// External agents over MCP.
    Mcp,
    /// The command line.
    Cli,
    /// An in-app assistant.
    Agent,
    /// The host application itself: every command.
    InProcess,
}

impl Surface {
    fn allows(self, def: &CommandDef) -> bool {
        let expose = def.expose();
        match self {
            Surface::Mcp => expose.allows_mcp(),
            Surface::Cli => expose.allows_cli(),
            Surface::Agent => expose.allows_agent(),
            Surface::InProcess => true,
        }
    }
}

#[derive(Clone)]
enum RegistryRef {
    Static(&'static Registry),
    Shared(Arc<Registry>),
}

impl std::ops::Deref for RegistryRef {
    type Target = Registry;

    fn deref(&self) -> &Registry {
        match self {
            RegistryRef::Static(registry) => registry,
            RegistryRef::Shared(registry) => registry,
        }
    }
}

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
    registry: RegistryRef,
    surface: Surface,
    only: Option<Vec<String>>,
    also: Vec<String>,
    hidden: Vec<String>,
    stack: CommandService,
    limits: Limits,
    sessions: Option<Sessions>,
    usage: Option<UsageStats>,
}

impl DispatcherBuilder {
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
        self
    }

    /// Session rules (idle timeout, no-context policy, bounds) for in-memory sessions.
    #[must_use]
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.sessions = Some(Sessions::new(config));
        self
    }

    /// Which surface this dispatcher serves (default: [`Surface::InProcess`]).
    #[must_use]
    pub fn surface(mut self, surface: Surface) -> Self {
        self.surface = surface;
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
        // The context operations are how an agent moves between contexts: always callable
        // where contexts are declared.
        if !registry.contexts().is_empty() {
            exposed.extend(crate::contexts::CONTEXT_OPS.iter().map(|op| op.name()));
        }
        let listing: Vec<usize> = (0..registry.len())
            .filter(|&index| exposed.contains(registry.commands()[index].name()))
            .collect();
        let mut categories: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut tags: BTreeSet<&'static str> = BTreeSet::new();
        for &index in &listing {
            let entry = &registry.commands()[index];
            *categories.entry(entry.category()).or_default() += 1;
            tags.extend(entry.tags().iter().copied());
        }
        Ok(Dispatcher {
            inner: Arc::new(Inner {
                registry,
                exposed,
                listing,
                categories: categories.into_iter().collect(),
                tags: tags.into_iter().collect(),
                stack: self.stack,
                limits: self.limits,
                sessions: self.sessions.unwrap_or_default(),
                usage: self.usage.unwrap_or_else(UsageStats::in_memory),
                search: std::sync::OnceLock::new(),
                browse: std::sync::OnceLock::new(),
            }),
        })
    }
}

struct Inner {
    registry: RegistryRef,
    exposed: HashSet<&'static str>,
    /// Registry indices of the exposed commands, in name order.
    listing: Vec<usize>,
    /// Categories of the exposed commands, with counts, sorted.
    categories: Vec<(&'static str, usize)>,
    /// Tags of the exposed commands, sorted.
    tags: Vec<&'static str>,
    stack: CommandService,
    limits: Limits,
    sessions: Sessions,
    usage: UsageStats,
    /// The ranked-search index over `listing`, built on first use.
    search: std::sync::OnceLock<SearchIndex>,
    /// afd-discover's category and tag lists, summaries and taxonomy, built on first use.
    browse: std::sync::OnceLock<crate::catalog::BrowseIndex>,
}

/// Dispatches calls to a registry's commands: the one path shared by the MCP server, the
/// CLI and in-process callers. Cheap to clone.
///
/// ```
/// # use afd_runtime::{Dispatcher, Registry, Surface, CommandContext};
/// # async fn demo() {
/// let dispatcher = Dispatcher::builder(Registry::global())
///     .surface(Surface::Mcp)
///     .build()
///     .unwrap();
/// let result = dispatcher.call("no-such-command", serde_json::json!({}), CommandContext::new()).await;
/// assert_eq!(result.error.unwrap().code, "COMMAND_NOT_FOUND");
/// # }
/// ```
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
}

static HANDLER_STACK: LazyLock<CommandService> =
    LazyLock::new(|| BoxCloneSyncService::new(HandlerService));

impl Dispatcher {
    /// A builder over a `'static` registry (usually [`Registry::global`]).
    pub fn builder(registry: &'static Registry) -> DispatcherBuilder {
        DispatcherBuilder::new(RegistryRef::Static(registry))
    }

    /// A builder over a shared registry.
    pub fn builder_shared(registry: Arc<Registry>) -> DispatcherBuilder {
        DispatcherBuilder::new(RegistryRef::Shared(registry))
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The search index over the exposed commands (in [`exposed_entries`] order), built
    /// on first use.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub fn search_index(&self) -> &SearchIndex {
        self.inner
            .search
            .get_or_init(|| SearchIndex::build(self.exposed_entries().map(Document::from_entry)))
    }

    /// The exposed commands matching `query`, best first with their relevance, at most
    /// `limit`; equal scores are ordered by how often each command was called.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(&CommandEntry, f32)> {
        self.search_positions(query, limit)
            .into_iter()
            .map(|(position, score)| (self.exposed_entry(position as usize), score))
            .collect()
    }

    /// [`search`](Dispatcher::search) as positions in [`exposed_entries`] order.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub(crate) fn search_positions(&self, query: &str, limit: usize) -> Vec<(u32, f32)> {
        let commands = self.inner.registry.commands();
        let listing = &self.inner.listing;
        let usage = &self.inner.usage;
        self.search_index()
            .search_with(query, limit, |doc| {
                usage.popularity(commands[listing[doc]].name())
            })
            .into_iter()
            .map(|hit| (hit.doc as u32, hit.score))
            .collect()
    }

    /// Builds now what afd-discover and ranked search otherwise build on first use (the
    /// search index, the category and tag lists): a server calls it on a background thread
    /// at start.
    pub fn warm(&self) {
        self.search_index();
        self.browse();
    }

    /// Runs [`warm`](Dispatcher::warm) on a new thread. The thread holds the dispatcher
    /// only once it starts, and does nothing if every handle was dropped by then: a server
    /// built and dropped at once (in tests, in a benchmark's loop) leaves no index build
    /// running behind it.
    pub fn warm_in_background(&self) {
        let weak = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("afd-warm".into())
            .spawn(move || {
                if let Some(inner) = weak.upgrade() {
                    Dispatcher { inner }.warm();
                }
            });
        if let Err(error) = spawned {
            // Not fatal: everything warm builds is built on first use instead.
            tracing::warn!(%error, "could not start the thread that builds the search index");
        }
    }

    /// afd-discover's precomputed lists (built on first use).
    pub(crate) fn browse(&self) -> &crate::catalog::BrowseIndex {
        self.inner
            .browse
            .get_or_init(|| crate::catalog::BrowseIndex::build(self))
    }

    /// The exposed command at `position` in [`exposed_entries`] order.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub(crate) fn exposed_entry(&self, position: usize) -> &CommandEntry {
        &self.inner.registry.commands()[self.inner.listing[position]]
    }

    /// The usage statistics calls are recorded in.
    pub fn usage(&self) -> &UsageStats {
        &self.inner.usage
    }

    pub(crate) fn session_store(&self) -> &Sessions {
        &self.inner.sessions
    }

    /// The exposed commands, in name order.
    pub fn exposed_entries(&self) -> impl Iterator<Item = &CommandEntry> + '_ {
        let commands = self.inner.registry.commands();
        self.inner
            .listing
            .iter()
            .map(move |&index| &commands[index])
    }

    /// How many commands are exposed.
    pub fn exposed_count(&self) -> usize {
        self.inner.listing.len()
    }

    /// The categories of the exposed commands with their counts, sorted by name.
    pub fn available_categories(&self) -> &[(&'static str, usize)] {
        &self.inner.categories
    }

    /// The tags of the exposed commands, sorted.
    pub fn available_tags(&self) -> &[&'static str] {
        &self.inner.tags
    }

    /// Whether the command named `name` (canonical name) may be called here.
    pub fn is_exposed(&self, name: &str) -> bool {
        self.inner.exposed.contains(name)
    }

    /// Calls a command: never fails; every problem is a failed [`CommandResult`] with a
    /// stable code, and `metadata.executionTimeMs` is always set.
    pub async fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        let inner = &*self.inner;
        call(
            &inner.registry,
            Some(self),
            &inner.limits,
            &inner.stack,
            name,
            input,
            ctx,
        )
        .await
    }
}

impl DispatcherBuilder {
    fn new(registry: RegistryRef) -> Self {
        DispatcherBuilder {
            registry,
            surface: Surface::InProcess,
            only: None,
            also: Vec::new(),
            hidden: Vec::new(),
            stack: HANDLER_STACK.clone(),
            limits: Limits::default(),
            sessions: None,
            usage: None,
        }
    }
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("commands", &self.inner.registry.len())
            .field("exposed", &self.inner.exposed.len())
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// Calls a command in-process, on the same path as the servers (limits, lookup with
    /// "Did you mean" suggestions, validation, the handler with panics caught, cancellation,
    /// timing), with every command exposed and no middleware. Use a [`Dispatcher`] for
    /// exposure rules and middleware.
    ///
    /// Never fails: every problem is a failed [`CommandResult`] with a stable code.
    pub async fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        static LIMITS: LazyLock<Limits> = LazyLock::new(Limits::default);
        call(self, None, &LIMITS, &HANDLER_STACK, name, input, ctx).await
    }
}

async fn call(
    registry: &Registry,
    dispatcher: Option<&Dispatcher>,
    limits: &Limits,
    stack: &CommandService,
    name: &str,
    input: Value,
    ctx: CommandContext,
) -> CommandResult<Value> {
    let started = Instant::now();
    let session = dispatcher.map(|_| ctx.session().map(str::to_owned));
    let mut result = run(registry, dispatcher, limits, stack, name, input, ctx).await;
    // Every call of a command is recorded under its canonical name (typos are not).
    if let (Some(dispatcher), Some(session)) = (dispatcher, session)
        && let Some(resolved) = registry.lookup(name)
    {
        let session = session.as_deref().unwrap_or_default();
        dispatcher
            .usage()
            .record_now(session, resolved.entry.name(), result.success);
    }
    let metadata = result.metadata_mut();
    if metadata.execution_time_ms.is_none() {
        metadata.execution_time_ms = Some(started.elapsed().as_millis() as u64);
    }
    result
}

async fn run(
    registry: &Registry,
    dispatcher: Option<&Dispatcher>,
    limits: &Limits,
    stack: &CommandService,
    name: &str,
    input: Value,
    ctx: CommandContext,
) -> CommandResult<Value> {
    if let Err(error) = limits.check_input(&input) {
        return CommandResult::failure(error);
    }
    let resolved = match registry.resolve(name) {
        Ok(resolved) => resolved,
        Err(mut error) => {
            if let Some(dispatcher) = dispatcher
                && let Some(hint) = dispatcher.context_hint(name, ctx.session())
                && let Some(details) = error.details.as_mut().and_then(Value::as_object_mut)
            {
                details.insert("contextHint".into(), json!(hint));
            }
            return CommandResult::failure(error);
        }
    };
    let entry = resolved.entry;
    let mut ctx = ctx;
    if let Some(dispatcher) = dispatcher {
        let exposed = &dispatcher.inner.exposed;
        if !exposed.contains(entry.name()) {
            return CommandResult::failure(not_exposed(entry.name(), exposed));
        }
        if let Err(error) = dispatcher.check_context(ctx.session(), entry.def()) {
            return CommandResult::failure(error);
        }
        if is_op(entry.def()) {
            ctx = ctx.with_state(OpsBinding(dispatcher.clone()));
        }
    }
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    if let Err(error) = entry.validate(&input) {
        return CommandResult::failure(error);
    }
    if ctx.is_cancelled() {
        return CommandResult::failure(cancelled(entry.def(), false));
    }
    let request = CommandRequest {
        def: entry.def(),
        input,
        ctx: ctx.clone(),
    };
    let execution = stack.clone().oneshot(request);
    let mut result = tokio::select! {
        biased;
        outcome = execution => match outcome {
            Ok(result) => result,
            Err(never) => match never {},
        },
        () = ctx.cancelled() => CommandResult::failure(cancelled(entry.def(), true)),
    };
    // A handler that noticed the cancellation and gave up reports it as its own failure;
    // the caller asked to cancel, so the answer is CANCELLED (with the handler's error
    // kept). A handler that finished its work despite the request reports what it did.
    if !result.success
        && ctx.is_cancelled()
        && !result
            .error
            .as_ref()
            .is_some_and(|e| e.is(codes::CANCELLED))
    {
        let handler_error = result
            .error
            .take()
            .and_then(|error| serde_json::to_value(error).ok());
        let mut error = cancelled(entry.def(), true);
        if let (Some(details), Some(handler_error)) = (error.details.as_mut(), handler_error) {
            details["handlerError"] = handler_error;
        }
        result.error = Some(error);
    }
    if resolved.kind == NameKind::DeprecatedAlias {
        result = result.with_warning(
            "DEPRECATED_ALIAS",
            format!(
                "'{name}' is a deprecated name of '{}'; call it by that name",
                entry.name()
            ),
        );
    }
    result
}

fn not_exposed(name: &str, exposed: &HashSet<&'static str>) -> CommandError {
    let similar = find_similar(name, exposed.iter().copied(), 1);
    let suggestion = match similar.first() {
        Some(other) => format!(
            "This server does not let agents call '{name}'. '{other}' is callable; use afd-discover to list what is."
        ),
        None => format!(
            "This server does not let agents call '{name}'; use afd-discover to list what is callable."
        ),
    };
    CommandError::new(
        codes::COMMAND_NOT_EXPOSED,
        format!("Command '{name}' is not exposed on this server"),
    )
    .with_suggestion(suggestion)
    .with_retryable(false)
}

fn cancelled(def: &CommandDef, started: bool) -> CommandError {
    let name = def.name();
    let (message, suggestion) = match (started, def.is_mutation()) {
        (false, _) => (
            format!("Command '{name}' was cancelled before it started"),
            "Nothing was changed; call it again if it is still wanted.".to_owned(),
        ),
        (true, true) => (
            format!("Command '{name}' was cancelled before it completed"),
            format!(
                "'{name}' changes state and may have applied part of its work: check the state before retrying."
            ),
        ),
        (true, false) => (
            format!("Command '{name}' was cancelled before it completed"),
            "It changes nothing, so it is safe to call again.".to_owned(),
        ),
    };
    CommandError::new(codes::CANCELLED, message)
        .with_suggestion(suggestion)
        .with_details(json!({"started": started, "mutation": def.is_mutation()}))
}
