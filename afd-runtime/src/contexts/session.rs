//! Per-session state: the context stack, the scope, the commands
//! activated for the session and its search history, kept in a [`SessionStore`] behind an
//! opaque handle that expires when idle.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::Scope;

/// One entered context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// The context's name.
    pub context: String,
    /// The scope it was entered with (read-only when the context is).
    pub scope: Scope,
}

/// A search the session made, and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchRecord {
    /// The query.
    pub query: String,
    /// The commands it returned, best first (at most ten kept).
    pub results: Vec<String>,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
}

/// What one session has done: its context stack, activated commands and searches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    base: Option<Frame>,
    stack: Vec<Frame>,
    activated: Vec<String>,
    searches: VecDeque<SearchRecord>,
    /// The subject whose token first used the session, where callers carry tokens: only
    /// that subject may use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

impl SessionState {
    /// The subject the session is bound to, where callers carry tokens.
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// Binds the session to `subject` if it is bound to no one yet; whether it is now
    /// bound to `subject`.
    pub(crate) fn claim(&mut self, subject: &str) -> bool {
        self.owner.get_or_insert_with(|| subject.to_owned()) == subject
    }

    /// The active context and scope: the top of the stack, else the default context the
    /// host set, else none.
    pub fn active(&self) -> Option<&Frame> {
        self.stack.last().or(self.base.as_ref())
    }

    /// The active context's name.
    pub fn active_context(&self) -> Option<&str> {
        self.active().map(|frame| frame.context.as_str())
    }

    /// The active scope ([`Scope::Full`] outside any context).
    pub fn scope(&self) -> Scope {
        self.active().map_or(Scope::Full, |frame| frame.scope)
    }

    /// The default context set by the host, under the entered ones.
    pub fn default_context(&self) -> Option<&Frame> {
        self.base.as_ref()
    }

    /// The entered contexts, oldest first (the default context is not part of it).
    pub fn stack(&self) -> &[Frame] {
        &self.stack
    }

    /// The commands activated for this session, oldest first.
    pub fn activated(&self) -> &[String] {
        &self.activated
    }

    /// The session's searches, oldest first.
    pub fn searches(&self) -> impl ExactSizeIterator<Item = &SearchRecord> {
        self.searches.iter()
    }

    pub(crate) fn set_base(&mut self, frame: Option<Frame>) {
        self.base = frame;
    }

    pub(crate) fn push(&mut self, frame: Frame) {
        self.stack.push(frame);
    }

    pub(crate) fn pop(&mut self) -> Option<Frame> {
        self.stack.pop()
    }

    /// Activates `names` (keeping the newest `max`); returns those evicted to make room.
    pub(crate) fn activate(&mut self, names: &[&str], max: usize) -> Vec<String> {
        for name in names {
            self.activated.retain(|seen| seen != name);
            self.activated.push((*name).to_owned());
        }
        let excess = self.activated.len().saturating_sub(max);
        self.activated.drain(..excess).collect()
    }

    /// Deactivates `names` (all when `None`); returns those that were active.
    pub(crate) fn deactivate(&mut self, names: Option<&[&str]>) -> Vec<String> {
        match names {
            None => std::mem::take(&mut self.activated),
            Some(names) => {
                let (gone, kept) = std::mem::take(&mut self.activated)
                    .into_iter()
                    .partition(|name| names.contains(&name.as_str()));
                self.activated = kept;
                gone
            }
        }
    }

    pub(crate) fn record_search(&mut self, query: &str, results: Vec<String>, max: usize) {
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.searches.push_back(SearchRecord {
            query: query.to_owned(),
            results,
            at_ms,
        });
        while self.searches.len() > max {
            self.searches.pop_front();
        }
    }
}

/// Why a session store could not answer: it is unreachable, timed out, or holds something
/// this version cannot read. Callers refuse the call with the retryable
/// `SESSION_STORE_UNAVAILABLE` rather than run it outside the session's context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the session store is unavailable: {message}")]
pub struct SessionStoreError {
    message: String,
}

impl SessionStoreError {
    /// An error saying what went wrong, in words an operator can act on.
    pub fn new(message: impl Into<String>) -> Self {
        SessionStoreError {
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The future a [`SessionStore`] operation returns.
pub type StoreFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, SessionStoreError>> + Send + 'a>>;

/// Where session state lives. The default, [`MemorySessionStore`], keeps it in this
/// process (and is called without going through this trait's boxed futures); implement
/// this trait to share sessions between processes (state is `Serialize`), as
/// `RedisSessionStore` does with the `redis` feature. Implementations expire sessions
/// left idle, and say when they cannot answer rather than guess.
pub trait SessionStore: Send + Sync + 'static {
    /// The idle timeout of the rules the store serves under: a dispatcher given the store
    /// ([`DispatcherBuilder::session_store`](crate::DispatcherBuilder::session_store))
    /// calls it with its [`SessionConfig`]'s, so a store that expires sessions itself
    /// expires them as the rules say. The default ignores it.
    fn set_idle_timeout(&self, idle: Duration) {
        let _ = idle;
    }

    /// The session's state, refreshing its idle timer; `None` when unknown or expired.
    fn get<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, Option<Arc<SessionState>>>;

    /// Stores a session's state (creating the session when new).
    fn put<'a>(&'a self, handle: &'a str, state: Arc<SessionState>) -> StoreFuture<'a, ()>;

    /// Creates the session with an empty state unless it exists; refreshes its idle timer
    /// either way. The default reads, then writes when absent; stores that can should make
    /// it atomic.
    fn ensure<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if self.get(handle).await?.is_none() {
                self.put(handle, Arc::default()).await?;
            }
            Ok(())
        })
    }

    /// Whether the store answers now (a readiness check: Redis `PING`). The default, for a
    /// store in this process, always does.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    /// Ends a session; whether it existed.
    fn remove<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, bool>;

    /// Applies `change` to a session's state; `false` when unknown or expired. A store
    /// shared between processes must not lose a concurrent write: it may call `change`
    /// more than once, each time on the state as it is stored (optimistic retry). The
    /// default reads and writes back, which is only right for a store used by one process.
    fn update<'a>(
        &'a self,
        handle: &'a str,
        change: &'a mut (dyn FnMut(&mut SessionState) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let Some(state) = self.get(handle).await? else {
                return Ok(false);
            };
            let mut state = Arc::unwrap_or_clone(state);
            change(&mut state);
            self.put(handle, Arc::new(state)).await?;
            Ok(true)
        })
    }
}

struct Slot {
    state: Arc<SessionState>,
    last_used: Instant,
}

/// Sessions in this process's memory, expired after an idle time and capped in number
/// (the least recently used go first).
pub struct MemorySessionStore {
    slots: Mutex<HashMap<String, Slot>>,
    idle: Duration,
    capacity: usize,
}

impl MemorySessionStore {
    /// A store whose sessions expire after `idle` without use, holding at most 10,000.
    pub fn new(idle: Duration) -> Self {
        MemorySessionStore::with_capacity(idle, 10_000)
    }

    /// A store holding at most `capacity` sessions.
    pub fn with_capacity(idle: Duration, capacity: usize) -> Self {
        MemorySessionStore {
            slots: Mutex::new(HashMap::new()),
            idle,
            capacity: capacity.max(1),
        }
    }

    /// How many sessions are held (expired ones included until swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        // A panic while holding the lock leaves the map itself consistent.
        self.slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn live<'a>(&self, slots: &'a mut HashMap<String, Slot>, handle: &str) -> Option<&'a mut Slot> {
        let now = Instant::now();
        if slots
            .get(handle)
            .is_some_and(|slot| now.duration_since(slot.last_used) > self.idle)
        {
            slots.remove(handle);
            return None;
        }
        let slot = slots.get_mut(handle)?;
        slot.last_used = now;
        Some(slot)
    }
}

impl fmt::Debug for MemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySessionStore")
            .field("sessions", &self.len())
            .field("idle", &self.idle)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl MemorySessionStore {
    /// The session's state, refreshing its idle timer; `None` when unknown or expired.
    pub fn get(&self, handle: &str) -> Option<Arc<SessionState>> {
        let mut slots = self.lock();
        self.live(&mut slots, handle).map(|slot| slot.state.clone())
    }

    /// Stores a session's state (creating the session when new), making room by dropping
    /// expired sessions, then the least recently used.
    pub fn put(&self, handle: &str, state: Arc<SessionState>) {
        let mut slots = self.lock();
        let now = Instant::now();
        if !slots.contains_key(handle) && slots.len() >= self.capacity {
            slots.retain(|_, slot| now.duration_since(slot.last_used) <= self.idle);
            if slots.len() >= self.capacity
                && let Some(oldest) = slots
                    .iter()
                    .min_by_key(|(_, slot)| slot.last_used)
                    .map(|(handle, _)| handle.clone())
            {
                slots.remove(&oldest);
            }
        }
        slots.insert(
            handle.to_owned(),
            Slot {
                state,
                last_used: now,
            },
        );
    }

    /// Creates the session with an empty state unless it exists.
    pub fn ensure(&self, handle: &str) {
        if self.get(handle).is_none() {
            self.put(handle, Arc::default());
        }
    }

    /// Ends a session; whether it existed.
    pub fn remove(&self, handle: &str) -> bool {
        self.lock().remove(handle).is_some()
    }

    /// Applies `change` to a session's state under the lock; `false` when unknown or
    /// expired.
    pub fn update(&self, handle: &str, change: &mut dyn FnMut(&mut SessionState)) -> bool {
        let mut slots = self.lock();
        match self.live(&mut slots, handle) {
            Some(slot) => {
                change(Arc::make_mut(&mut slot.state));
                true
            }
            None => false,
        }
    }
}

impl SessionStore for MemorySessionStore {
    fn get<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, Option<Arc<SessionState>>> {
        Box::pin(std::future::ready(Ok(MemorySessionStore::get(
            self, handle,
        ))))
    }

    fn put<'a>(&'a self, handle: &'a str, state: Arc<SessionState>) -> StoreFuture<'a, ()> {
        MemorySessionStore::put(self, handle, state);
        Box::pin(std::future::ready(Ok(())))
    }

    fn ensure<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, ()> {
        MemorySessionStore::ensure(self, handle);
        Box::pin(std::future::ready(Ok(())))
    }

    fn remove<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(MemorySessionStore::remove(
            self, handle,
        ))))
    }

    fn update<'a>(
        &'a self,
        handle: &'a str,
        change: &'a mut (dyn FnMut(&mut SessionState) + Send),
    ) -> StoreFuture<'a, bool> {
        let found = MemorySessionStore::update(self, handle, change);
        Box::pin(std::future::ready(Ok(found)))
    }
}

/// What a session that entered no context may call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum NoContextPolicy {
    /// Every command (the default): contexts only narrow, so clients that ignore them keep
    /// working.
    #[default]
    Open,
    /// Only universal commands, as in a lobby: an agent must enter a
    /// context to reach the rest.
    Lobby,
}

/// How sessions behave.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    idle_timeout: Duration,
    policy: NoContextPolicy,
    max_activated: usize,
    max_depth: usize,
    max_searches: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            idle_timeout: Duration::from_secs(30 * 60),
            policy: NoContextPolicy::Open,
            max_activated: 32,
            max_depth: 16,
            max_searches: 20,
        }
    }
}

impl SessionConfig {
    /// Sessions unused for this long expire (default 30 minutes).
    #[must_use]
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// What a session outside any context may call (default [`NoContextPolicy::Open`]).
    #[must_use]
    pub fn no_context_policy(mut self, policy: NoContextPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Most commands one session may have activated (default 32; the oldest go first).
    #[must_use]
    pub fn max_activated(mut self, max: usize) -> Self {
        self.max_activated = max.max(1);
        self
    }

    /// Deepest context stack (default 16).
    #[must_use]
    pub fn max_depth(mut self, max: usize) -> Self {
        self.max_depth = max.max(1);
        self
    }

    /// Searches kept per session (default 20).
    #[must_use]
    pub fn max_searches(mut self, max: usize) -> Self {
        self.max_searches = max;
        self
    }

    /// The idle timeout.
    pub fn get_idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// The no-context policy.
    pub fn policy(&self) -> NoContextPolicy {
        self.policy
    }

    /// The activation bound.
    pub fn get_max_activated(&self) -> usize {
        self.max_activated
    }

    /// The stack depth bound.
    pub fn get_max_depth(&self) -> usize {
        self.max_depth
    }

    /// The search history bound.
    pub fn get_max_searches(&self) -> usize {
        self.max_searches
    }
}

/// Where a dispatcher's sessions live: in this process, called directly, or in a store
/// behind the [`SessionStore`] trait.
#[derive(Clone)]
enum Backend {
    Memory(Arc<MemorySessionStore>),
    Shared(Arc<dyn SessionStore>),
}

/// The sessions of a dispatcher: a store and its rules. Cheap to clone.
#[derive(Clone)]
pub struct Sessions {
    backend: Backend,
    config: Arc<SessionConfig>,
}

impl fmt::Debug for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions")
            .field("shared", &self.is_shared())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new(SessionConfig::default())
    }
}

impl Sessions {
    /// Sessions in memory, with `config`.
    pub fn new(config: SessionConfig) -> Self {
        let store = MemorySessionStore::new(config.idle_timeout);
        Sessions {
            backend: Backend::Memory(Arc::new(store)),
            config: Arc::new(config),
        }
    }

    /// Sessions in `store` (which applies its own expiry), with `config`.
    pub fn with_store(config: SessionConfig, store: Arc<dyn SessionStore>) -> Self {
        Sessions {
            backend: Backend::Shared(store),
            config: Arc::new(config),
        }
    }

    /// The rules.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Whether the sessions live outside this process's memory (a [`SessionStore`] given
    /// to [`with_store`](Sessions::with_store)).
    pub fn is_shared(&self) -> bool {
        matches!(self.backend, Backend::Shared(_))
    }

    /// Whether the store answers now (a readiness check); sessions in memory always do.
    ///
    /// # Errors
    ///
    /// The store cannot be reached.
    pub async fn ping(&self) -> Result<(), SessionStoreError> {
        match &self.backend {
            Backend::Memory(_) => Ok(()),
            Backend::Shared(store) => store.ping().await,
        }
    }

    /// A new, unguessable session handle (the session itself is made by
    /// [`ensure`](Sessions::ensure) or [`create`](Sessions::create)).
    pub fn new_handle() -> String {
        new_handle()
    }

    /// Starts a session; returns its new, unguessable handle.
    ///
    /// # Errors
    ///
    /// The store could not be written.
    pub async fn create(&self) -> Result<String, SessionStoreError> {
        let handle = new_handle();
        match &self.backend {
            Backend::Memory(store) => store.put(&handle, Arc::default()),
            Backend::Shared(store) => store.put(&handle, Arc::default()).await?,
        }
        Ok(handle)
    }

    /// Makes sure a session with this handle exists (a transport's own session, which
    /// comes back fresh if it expired).
    ///
    /// # Errors
    ///
    /// The store could not be reached.
    pub async fn ensure(&self, handle: &str) -> Result<(), SessionStoreError> {
        match &self.backend {
            Backend::Memory(store) => {
                store.ensure(handle);
                Ok(())
            }
            Backend::Shared(store) => store.ensure(handle).await,
        }
    }

    /// The session's state; `None` when unknown or expired.
    ///
    /// # Errors
    ///
    /// The store could not be read.
    pub async fn get(&self, handle: &str) -> Result<Option<Arc<SessionState>>, SessionStoreError> {
        match &self.backend {
            Backend::Memory(store) => Ok(store.get(handle)),
            Backend::Shared(store) => store.get(handle).await,
        }
    }

    /// Changes a session's state; `None` when unknown or expired. `change` may run more
    /// than once with a shared store (each time on the stored state); its last answer is
    /// returned.
    pub(crate) async fn update<R: Send>(
        &self,
        handle: &str,
        mut change: impl FnMut(&mut SessionState) -> R + Send,
    ) -> Result<Option<R>, SessionStoreError> {
        let mut out = None;
        let mut apply = |state: &mut SessionState| out = Some(change(state));
        let found = match &self.backend {
            Backend::Memory(store) => store.update(handle, &mut apply),
            Backend::Shared(store) => store.update(handle, &mut apply).await?,
        };
        Ok(if found { out } else { None })
    }

    /// Ends a session; whether it existed.
    ///
    /// # Errors
    ///
    /// The store could not be reached.
    pub async fn end(&self, handle: &str) -> Result<bool, SessionStoreError> {
        match &self.backend {
            Backend::Memory(store) => Ok(store.remove(handle)),
            Backend::Shared(store) => store.remove(handle).await,
        }
    }

    /// Ends a session without waiting (a connection that closed): at once in memory; on
    /// the current tokio runtime for a shared store, whose idle expiry removes it anyway
    /// if that fails or no runtime is running.
    #[cfg(feature = "mcp")]
    pub(crate) fn end_detached(&self, handle: &str) {
        match &self.backend {
            Backend::Memory(store) => {
                store.remove(handle);
            }
            Backend::Shared(store) => {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                let store = store.clone();
                let handle = handle.to_owned();
                runtime.spawn(async move {
                    if let Err(error) = store.remove(&handle).await {
                        tracing::debug!(%error, "could not end a closed connection's session; it expires when idle");
                    }
                });
            }
        }
    }
}

/// `afd-s-` and 32 hex digits from the operating system's random source.
fn new_handle() -> String {
    format!("afd-s-{}", crate::random::hex128())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_unique_and_opaque() {
        let a = new_handle();
        let b = new_handle();
        assert_ne!(a, b);
        assert_eq!(a.len(), 38);
        assert!(a.starts_with("afd-s-"));
    }

    #[test]
    fn idle_sessions_expire() {
        let store = MemorySessionStore::new(Duration::from_millis(20));
        store.put("a", Arc::default());
        assert!(store.get("a").is_some());
        std::thread::sleep(Duration::from_millis(40));
        assert!(store.get("a").is_none());
        assert!(!store.update("a", &mut |_| {}));
    }

    #[test]
    fn the_least_recently_used_session_makes_room() {
        let store = MemorySessionStore::with_capacity(Duration::from_secs(60), 2);
        store.put("a", Arc::default());
        std::thread::sleep(Duration::from_millis(2));
        store.put("b", Arc::default());
        std::thread::sleep(Duration::from_millis(2));
        store.get("a");
        store.put("c", Arc::default());
        assert!(store.get("a").is_some());
        assert!(store.get("b").is_none());
        assert!(store.get("c").is_some());
    }

    #[test]
    fn activation_is_bounded_and_undoable() {
        let mut state = SessionState::default();
        assert!(state.activate(&["a", "b", "c"], 2) == vec!["a".to_owned()]);
        assert_eq!(state.activated(), ["b", "c"]);
        assert_eq!(state.deactivate(Some(&["c"])), vec!["c".to_owned()]);
        assert_eq!(state.deactivate(None), vec!["b".to_owned()]);
        assert!(state.activated().is_empty());
    }

    #[test]
    fn the_stack_sits_on_the_default_context() {
        let mut state = SessionState::default();
        assert_eq!(state.active_context(), None);
        state.set_base(Some(Frame {
            context: "editing".into(),
            scope: Scope::Full,
        }));
        state.push(Frame {
            context: "print".into(),
            scope: Scope::ReadOnly,
        });
        assert_eq!(state.active_context(), Some("print"));
        assert_eq!(state.scope(), Scope::ReadOnly);
        state.pop();
        assert_eq!(state.active_context(), Some("editing"));
        assert_eq!(state.pop(), None);
    }
}
