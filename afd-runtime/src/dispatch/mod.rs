//! The call path every surface shares, and [`Dispatcher`], which holds it: limits, lookup,
//! exposure, the context gate, validation, the middleware stack and the handler (panics
//! caught), cancellation and timing. afd-call, every afd-batch entry and every afd-pipe
//! step go through [`Dispatcher::call`], so no surface and no built-in tool is a way around
//! a restriction.
//!
//! - `builder.rs`: [`DispatcherBuilder`], which decides what is exposed and stacks the
//!   middleware;
//! - `call.rs`: the steps of one call;
//! - `handler.rs`: the innermost service, which runs the handler;
//! - `limits.rs`: [`Limits`];
//! - `path.rs`: the narrow interface the built-in tools call through.
//!
//! Every method of [`Dispatcher`] is in this file.

mod builder;
mod call;
mod confirm;
mod handler;
mod limits;
mod path;

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

pub use builder::{DispatcherBuilder, DispatcherError};
pub use handler::HandlerService;
pub use limits::Limits;
pub(crate) use path::CallPath;

use crate::auth::{PerScopes, Scopes};
use crate::command::CommandDef;
use crate::command_context::CommandContext;
use crate::contexts::{ContextHint, Host, Scope, SessionState, Sessions};
use crate::error::CommandError;
use crate::registry::{
    BrowseIndex, CommandEntry, Exposed, Registry, Resolved, SharedRegistry, is_op,
};
use crate::result::CommandResult;
use crate::search::{Document, SearchIndex};
use crate::usage::UsageStats;

/// One execution, as the middleware stack sees it: the definition, the validated input and
/// the context. Most are calls of a command; the built-in tools (afd-discover, afd-detail,
/// afd-batch, afd-pipe, ...) pass through the stack too, so observers see every call an
/// agent makes: [`kind`](CommandRequest::kind) tells them apart.
#[non_exhaustive]
pub struct CommandRequest {
    /// The command being run (for a built-in tool, its definition).
    pub def: &'static CommandDef,
    /// Its input, already validated against the input schema (a built-in tool validates
    /// its own).
    pub input: Value,
    /// The call's context.
    pub ctx: CommandContext,
    /// The dispatcher running a context operation, whose sessions it acts on.
    pub(crate) host: Option<Dispatcher>,
    /// The name the caller used, where it is not the canonical one.
    pub(crate) requested: Option<Box<str>>,
    /// A built-in tool's work, which the innermost service runs instead of a handler.
    pub(crate) builtin: Option<BuiltinWork>,
}

/// What kind of call a [`CommandRequest`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CallKind {
    /// A command of the catalog.
    Command,
    /// A built-in tool or a context operation: afd-discover, afd-detail, afd-batch,
    /// afd-pipe, afd-help, afd-docs, afd-schema, afd-context-*. afd-batch and afd-pipe run
    /// their commands through the stack again, each as a call of its own: a layer that
    /// bounds concurrency must let them through (the built-in limits do).
    Meta,
}

/// A built-in tool's work, run by the innermost service in place of a handler.
pub(crate) type BuiltinWork =
    Box<dyn FnOnce(Value, CommandContext) -> BoxFuture<'static, CommandResult<Value>> + Send>;

impl CommandRequest {
    /// The name the caller used: an alias or a deprecated name where it used one, else
    /// the canonical name (`def.name()`).
    pub fn requested_name(&self) -> &str {
        self.requested.as_deref().unwrap_or(self.def.name())
    }

    /// Whether this is a call of a command or of a built-in tool.
    pub fn kind(&self) -> CallKind {
        if self.builtin.is_some() || is_op(self.def) {
            CallKind::Meta
        } else {
            CallKind::Command
        }
    }
}

impl fmt::Debug for CommandRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandRequest")
            .field("def", &self.def.name())
            .field("requested", &self.requested_name())
            .field("kind", &self.kind())
            .field("input", &self.input)
            .field("ctx", &self.ctx)
            .finish_non_exhaustive()
    }
}

/// The type-erased middleware stack: a cloneable `tower::Service` from [`CommandRequest`] to
/// [`CommandResult`], which never fails (failures are results).
pub type CommandService = BoxCloneSyncService<CommandRequest, CommandResult<Value>, Infallible>;

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

struct Inner {
    registry: SharedRegistry,
    exposed: Exposed,
    stack: CommandService,
    limits: Limits,
    sessions: Sessions,
    usage: UsageStats,
    /// The ranked-search index over the exposed commands, built on first use.
    search: OnceLock<SearchIndex>,
    /// The scopes the builder set for commands, over what they declare.
    scopes: HashMap<&'static str, Box<[Box<str>]>>,
    /// The views of callers granted each scope set, made on first use.
    views: PerScopes<View>,
    /// The operator's bound on every caller's scopes ([`DispatcherBuilder::scope_bound`]):
    /// what it does not cover is not exposed, and unknown to every caller.
    bound: Option<Scopes>,
    /// The semantic layer to build the index with, if any.
    #[cfg(feature = "semantic")]
    semantic: Option<crate::search::semantic::SemanticOptions>,
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
    /// What one caller may see, where the dispatcher is a caller's view
    /// ([`Dispatcher::for_scopes`]).
    view: Option<Arc<View>>,
    /// The caller's subject, where it carries a token ([`Dispatcher::for_principal`]).
    subject: Option<Arc<str>>,
}

/// One caller's view of the exposed commands: those its granted scopes cover.
struct View {
    granted: Scopes,
    exposed: Exposed,
    /// Position in the whole exposure -> position in the view (`u32::MAX`: hidden).
    positions: Vec<u32>,
}

/// The scopes a caller needs for `def`: the builder's choice, else what the command
/// declares, else its category's default.
pub(crate) fn required_scopes<'a>(
    registry: &'a Registry,
    overrides: &'a HashMap<&'static str, Box<[Box<str>]>>,
    def: &CommandDef,
) -> Vec<&'a str> {
    match overrides.get(def.name()) {
        Some(scopes) => scopes.iter().map(AsRef::as_ref).collect(),
        None => registry.required_scopes(def).to_vec(),
    }
}

impl Dispatcher {
    /// A builder over a `'static` registry (usually [`Registry::global`]).
    pub fn builder(registry: &'static Registry) -> DispatcherBuilder {
        DispatcherBuilder::new(SharedRegistry::Static(registry))
    }

    /// A builder over a shared registry.
    pub fn builder_shared(registry: Arc<Registry>) -> DispatcherBuilder {
        DispatcherBuilder::new(SharedRegistry::Shared(registry))
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Calls a command: never fails; every problem is a failed [`CommandResult`] with a
    /// stable code, and `metadata.executionTimeMs` is always set.
    pub async fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        call::call(self, name, input, ctx).await
    }

    /// Runs a built-in tool's `work` through the middleware stack, as a call of `def` (the
    /// tool's definition), so observers see it; the stack may also answer in its place.
    pub(crate) async fn run_builtin(
        &self,
        def: &'static CommandDef,
        input: Value,
        ctx: CommandContext,
        work: BuiltinWork,
    ) -> CommandResult<Value> {
        let request = CommandRequest {
            def,
            input,
            ctx,
            host: None,
            requested: None,
            builtin: Some(work),
        };
        match self.inner.stack.clone().oneshot(request).await {
            Ok(result) => result,
            Err(never) => match never {},
        }
    }

    // The exposed catalog.

    /// The exposure this dispatcher answers with: a caller's view, or the whole one.
    fn exposed(&self) -> &Exposed {
        match &self.view {
            Some(view) => &view.exposed,
            None => &self.inner.exposed,
        }
    }

    /// The exposed commands, in name order.
    pub fn exposed_entries(&self) -> impl Iterator<Item = &CommandEntry> + '_ {
        self.exposed().entries(&self.inner.registry)
    }

    /// How many commands are exposed.
    pub fn exposed_count(&self) -> usize {
        self.exposed().len()
    }

    /// The categories of the exposed commands with their counts, sorted by name.
    pub fn available_categories(&self) -> &[(&'static str, usize)] {
        self.exposed().categories()
    }

    /// The tags of the exposed commands, sorted.
    pub fn available_tags(&self) -> &[&'static str] {
        self.exposed().tags()
    }

    /// Whether the command named `name` (canonical name) may be called here.
    pub fn is_exposed(&self, name: &str) -> bool {
        self.exposed().contains(name)
    }

    /// The exposed command at `position` in [`exposed_entries`] order.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub(crate) fn exposed_entry(&self, position: usize) -> &CommandEntry {
        self.exposed().entry(&self.inner.registry, position)
    }

    /// afd-discover's precomputed lists (built on first use).
    pub(crate) fn browse(&self) -> &BrowseIndex {
        self.exposed().browse(&self.inner.registry)
    }

    // Scopes: what one caller may see and call.

    /// This dispatcher as seen by a caller granted `granted`: the exposed commands whose
    /// every required scope `granted` covers (see [`auth`](crate::auth)). The others are
    /// answered as names that do not exist by every listing, search, suggestion and
    /// description; a call of one fails `INSUFFICIENT_SCOPE`, naming the scopes it needs.
    /// Views are made once per scope set and shared.
    pub fn for_scopes(&self, granted: &Scopes) -> Dispatcher {
        let view = self
            .inner
            .views
            .get_or_make(granted, || self.make_view(granted));
        Dispatcher {
            inner: self.inner.clone(),
            view: Some(view),
            subject: self.subject.clone(),
        }
    }

    /// This dispatcher as `principal` sees it: [`for_scopes`](Dispatcher::for_scopes) of
    /// its scopes, with the sessions it uses bound to its subject (a session another
    /// subject started is answered as unknown).
    pub fn for_principal(&self, principal: &crate::auth::Principal) -> Dispatcher {
        self.for_scopes(principal.scopes())
            .with_subject(principal.subject())
    }

    /// This dispatcher with the sessions it uses bound to `subject`, its view unchanged.
    pub(crate) fn with_subject(&self, subject: &str) -> Dispatcher {
        Dispatcher {
            inner: self.inner.clone(),
            view: self.view.clone(),
            subject: Some(Arc::from(subject)),
        }
    }

    fn make_view(&self, granted: &Scopes) -> View {
        let inner = &*self.inner;
        let whole = &inner.exposed;
        let mut names = std::collections::HashSet::new();
        let mut positions = Vec::with_capacity(whole.len());
        for entry in whole.entries(&inner.registry) {
            if granted.covers_all(&self.required_scopes(entry.def())) {
                positions.push(names.len() as u32);
                names.insert(entry.name());
            } else {
                positions.push(u32::MAX);
            }
        }
        View {
            granted: granted.clone(),
            exposed: Exposed::new(&inner.registry, names),
            positions,
        }
    }

    /// The scopes of the caller this dispatcher is a view for, if it is one.
    pub fn granted_scopes(&self) -> Option<&Scopes> {
        self.view.as_ref().map(|view| &view.granted)
    }

    /// The scopes a caller needs for `def`: set on the builder
    /// ([`DispatcherBuilder::command_scopes`]), else declared (`scopes(...)`), else the
    /// category's default.
    pub fn required_scopes(&self, def: &CommandDef) -> Vec<&str> {
        required_scopes(&self.inner.registry, &self.inner.scopes, def)
    }

    /// Whether `def` is exposed by the server but withheld from this caller by its scopes:
    /// a call of it fails `INSUFFICIENT_SCOPE` rather than `COMMAND_NOT_FOUND`.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn withholds(&self, def: &CommandDef) -> bool {
        self.hides(def) && self.inner.exposed.contains(def.name())
    }

    /// Whether `def` is hidden from this caller: its scopes are not covered by the caller's
    /// grant or by the operator's bound.
    pub(crate) fn hides(&self, def: &CommandDef) -> bool {
        if self.view.is_none() && self.inner.bound.is_none() {
            return false;
        }
        let required = self.required_scopes(def);
        self.view
            .as_ref()
            .is_some_and(|view| !view.granted.covers_all(&required))
            || self
                .inner
                .bound
                .as_ref()
                .is_some_and(|bound| !bound.covers_all(&required))
    }

    /// The command with this name or alias, as this caller may know it: `None` for a
    /// command hidden by its scopes, as for a name that does not exist.
    pub fn lookup(&self, name: &str) -> Option<Resolved<'_>> {
        self.inner
            .registry
            .lookup(name)
            .filter(|resolved| !self.hides(resolved.entry.def()))
    }

    /// The `COMMAND_NOT_FOUND` error for `name`, with similar names among the commands
    /// this caller may call only (a hidden command, one for another surface or one its
    /// scopes do not cover is never suggested).
    pub fn not_found(&self, name: &str) -> CommandError {
        self.inner
            .registry
            .not_found_among(name, self.exposed_entries().map(CommandEntry::name))
    }

    /// Up to `max` names similar to `name` among the commands this caller may call.
    pub(crate) fn suggest(&self, name: &str, max: usize) -> Vec<&'static str> {
        crate::similarity::find_similar(name, self.exposed_entries().map(CommandEntry::name), max)
    }

    // Search.

    /// The search index over the exposed commands (in [`exposed_entries`] order), built
    /// on first use.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub fn search_index(&self) -> &SearchIndex {
        self.inner.search.get_or_init(|| {
            let docs = self.exposed_entries().map(Document::from_entry);
            #[cfg(feature = "semantic")]
            if let Some(options) = &self.inner.semantic {
                return SearchIndex::build_semantic(docs.collect(), options.clone());
            }
            SearchIndex::build(docs)
        })
    }

    /// The exposed commands matching `query`, best first with their relevance, at most
    /// `limit`; equal scores are ordered by how often each command was called.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(&CommandEntry, f32)> {
        self.search_phrasings(&[query], limit)
    }

    /// As [`search`](Dispatcher::search), for up to three phrasings of one request ranked
    /// each and fused ([`SearchIndex::search_phrasings`]), as afd-discover's `search`
    /// array is.
    pub fn search_phrasings(&self, phrasings: &[&str], limit: usize) -> Vec<(&CommandEntry, f32)> {
        self.search_positions(phrasings, limit)
            .into_iter()
            .map(|(position, score)| (self.exposed_entry(position as usize), score))
            .collect()
    }

    /// [`search_phrasings`](Dispatcher::search_phrasings) as positions in
    /// [`exposed_entries`] order.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub(crate) fn search_positions(&self, phrasings: &[&str], limit: usize) -> Vec<(u32, f32)> {
        self.search_in_view(
            |index, popularity, keep| {
                index.search_phrasings_where(phrasings, limit, popularity, keep)
            },
            Vec::as_mut_slice,
        )
        .into_iter()
        .map(|hit| (hit.doc as u32, hit.score))
        .collect()
    }

    /// [`search_positions`](Dispatcher::search_positions), judged: the hits with whether
    /// the best do what was asked and a confidence for the first `confident`
    /// ([`SearchIndex::search_judged_where`]); hit documents are positions in
    /// [`exposed_entries`] order.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    pub(crate) fn search_judged_positions(
        &self,
        phrasings: &[&str],
        limit: usize,
        confident: usize,
    ) -> crate::search::Judged {
        self.search_in_view(
            |index, popularity, keep| {
                index.search_judged_where(phrasings, limit, confident, popularity, keep)
            },
            |judged| judged.hits.as_mut_slice(),
        )
    }

    /// Runs `search` over the search index with what every search of this dispatcher
    /// shares: ties broken by how often each command was called, and, in a scoped view,
    /// only the view's commands kept, the `hits` of the answer then renumbered from
    /// index documents to positions in the view's [`exposed_entries`] order.
    ///
    /// [`exposed_entries`]: Dispatcher::exposed_entries
    fn search_in_view<R>(
        &self,
        search: impl FnOnce(&SearchIndex, &dyn Fn(usize) -> f32, &dyn Fn(usize) -> bool) -> R,
        hits: impl FnOnce(&mut R) -> &mut [crate::search::Hit],
    ) -> R {
        let inner = &*self.inner;
        let commands = inner.registry.commands();
        let popularity = |doc| {
            inner
                .usage
                .popularity(commands[inner.exposed.index(doc)].name())
        };
        let index = self.search_index();
        let Some(view) = &self.view else {
            return search(index, &popularity, &|_| true);
        };
        let mut answer = search(index, &popularity, &|doc| view.positions[doc] != u32::MAX);
        for hit in hits(&mut answer) {
            hit.doc = view.positions[hit.doc] as usize;
        }
        answer
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
                    Dispatcher {
                        inner,
                        view: None,
                        subject: None,
                    }
                    .warm();
                }
            });
        if let Err(error) = spawned {
            // Not fatal: everything warm builds is built on first use instead.
            tracing::warn!(%error, "could not start the thread that builds the search index");
        }
    }

    /// Whether search was asked to have a semantic layer.
    #[cfg(feature = "semantic")]
    pub(crate) fn has_semantic_search(&self) -> bool {
        self.inner.semantic.is_some()
    }

    /// The usage statistics calls are recorded in.
    pub fn usage(&self) -> &UsageStats {
        &self.inner.usage
    }

    // Sessions and runtime contexts: the rules are in `crate::contexts`.

    /// The context rules' view of this dispatcher.
    pub(crate) fn host(&self) -> Host<'_> {
        Host {
            registry: &self.inner.registry,
            exposed: self.exposed(),
            sessions: &self.inner.sessions,
            view: self.view.is_some() || self.inner.bound.is_some(),
            subject: self.subject.as_deref(),
        }
    }

    /// The dispatcher's sessions.
    pub fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    /// Starts a session and returns its handle.
    ///
    /// # Errors
    ///
    /// `SESSION_STORE_UNAVAILABLE` when the session store cannot be written.
    pub async fn open_session(&self) -> Result<String, CommandError> {
        self.sessions()
            .create()
            .await
            .map_err(crate::contexts::store_unavailable)
    }

    /// The state of a session, if it exists.
    ///
    /// # Errors
    ///
    /// `SESSION_STORE_UNAVAILABLE` when the session store cannot be read.
    pub async fn session(&self, handle: &str) -> Result<Option<Arc<SessionState>>, CommandError> {
        self.sessions()
            .get(handle)
            .await
            .map_err(crate::contexts::store_unavailable)
    }

    /// Sets (or clears) the default context of a session: the host application's choice,
    /// for example from its UI state (the editor open: `document-editing`). It lies under
    /// the contexts the agent enters; afd-context-exit never leaves it.
    ///
    /// # Errors
    ///
    /// `CONTEXT_NOT_FOUND` for an undeclared context, `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE` for an unknown
    /// session.
    pub async fn set_default_context(
        &self,
        session: &str,
        context: Option<&str>,
        scope: Scope,
    ) -> Result<(), CommandError> {
        self.host()
            .set_default_context(session, context, scope)
            .await
    }

    /// afd-context-list: every declared context, and where the session stands.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE` for an unknown session.
    pub async fn list_contexts(
        &self,
        session: Option<&str>,
    ) -> Result<(Value, String), CommandError> {
        self.host().list_contexts(session).await
    }

    /// afd-context-enter: pushes `context` on the session's stack. Without a session, a
    /// new one is started and its handle returned.
    ///
    /// # Errors
    ///
    /// `CONTEXT_NOT_FOUND` (with suggestions and a context hint), `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE`, or
    /// `VALIDATION_ERROR` when the stack is full.
    pub async fn enter_context(
        &self,
        session: Option<&str>,
        context: &str,
        scope: Option<Scope>,
    ) -> Result<(Value, String), CommandError> {
        self.host().enter_context(session, context, scope).await
    }

    /// afd-context-exit: pops the session's stack, back to the previous context (or the
    /// default one, or none).
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE` for an unknown session, or when there is no session at all.
    pub async fn exit_context(
        &self,
        session: Option<&str>,
    ) -> Result<(Value, String), CommandError> {
        self.host().exit_context(session).await
    }

    /// afd-context-suggest: the contexts that fit an intent, best first.
    pub fn suggest_contexts(&self, intent: &str, limit: usize) -> Vec<ContextHint> {
        self.host().suggest_contexts(intent, limit)
    }

    /// Activates commands for a session: they are listed as tools, with full schemas, from
    /// the session's next `tools/list` where the server follows the session. Only commands
    /// the session may call are activated; the oldest activations make room beyond the
    /// bound. Returns the activated names and those evicted.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE` without a session or for an unknown one.
    pub async fn activate(
        &self,
        session: Option<&str>,
        names: &[&str],
    ) -> Result<(Vec<String>, Vec<String>), CommandError> {
        self.host().activate(session, names).await
    }

    /// Undoes activations: `names`, or every one when `None`. Returns those that were
    /// active.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE` without a session or for an unknown one.
    pub async fn deactivate(
        &self,
        session: Option<&str>,
        names: Option<&[&str]>,
    ) -> Result<Vec<String>, CommandError> {
        self.host().deactivate(session, names).await
    }

    /// Checks that the session may call `def`: the active context holds it and the scope
    /// allows it. Context operations are always allowed.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE`, `CONTEXT_MISMATCH` (naming the contexts to enter) or
    /// `FORBIDDEN` (a mutation in a read-only scope).
    pub async fn check_context(
        &self,
        session: Option<&str>,
        def: &CommandDef,
    ) -> Result<(), CommandError> {
        self.host().check(session, def).await
    }

    /// A session's state, or `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE`; `None` without a session.
    pub(crate) async fn session_view(
        &self,
        session: Option<&str>,
    ) -> Result<Option<Arc<SessionState>>, CommandError> {
        self.host().session_view(session).await
    }

    /// Whether a session in `state` may call `def` (contexts, scope, policy).
    pub(crate) fn allows(&self, state: Option<&SessionState>, def: &CommandDef) -> bool {
        self.host().allows(state, def)
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
