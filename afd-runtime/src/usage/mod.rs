//! Usage statistics: which commands are called, how often they succeed, and which command
//! tends to follow which, so discovery can rank popular commands higher and predict the
//! command an agent will want next.
//!
//! Every call is recorded as `(session, command, at, success)`. [`UsageStats`] keeps, per
//! command, the call and success counts and the last use; per live session, its recent
//! calls; across sessions, the next-command transitions (A then B in one session) and
//! co-occurrence (A and B used in one session). Recording updates an in-memory model under
//! a short lock; with the `usage-sqlite` feature (on by default) a background thread
//! writes what changed to a SQLite file in batches, every [`DEFAULT_FLUSH_INTERVAL`], on
//! [`UsageStats::flush`] and when the last clone is dropped. Live sessions are not
//! persisted: after a restart the counts, transitions and co-occurrences are back, the
//! sessions start afresh.
//!
//! A store that cannot be opened (an unwritable directory, a file that is not a database,
//! a database locked by another process, a newer schema) never stops the program: the
//! statistics live in memory only, a `tracing` warning says why, and
//! [`UsageStats::is_persistent`] is `false`.
//!
//! ```
//! use std::time::SystemTime;
//! use afd_runtime::usage::UsageStats;
//!
//! let usage = UsageStats::in_memory();
//! for _ in 0..3 {
//!     usage.record("s1", "todo-list", SystemTime::now(), true);
//!     usage.record("s1", "todo-complete", SystemTime::now(), true);
//! }
//! usage.record("s2", "todo-list", SystemTime::now(), true);
//! let next = usage.suggested_next("s2", 3);
//! assert_eq!(next[0].command, "todo-complete");
//! assert_eq!(usage.stats("todo-list").unwrap().calls, 4);
//! assert_eq!(usage.popularity("todo-list"), 1.0);
//! ```

mod model;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "usage-sqlite")]
mod sqlite;
#[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
mod writer;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use model::{Delta, Limits, Model};

/// How often the background writer persists what changed, unless configured otherwise.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(500);
/// How many live sessions are kept before the least recently used is forgotten.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// A pause longer than this within a session starts a new stretch of work: the call after
/// it is not counted as following the call before it.
pub const DEFAULT_SESSION_GAP: Duration = Duration::from_secs(30 * 60);

/// The statistics of one command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandStats {
    /// Calls recorded.
    pub calls: u64,
    /// Calls that succeeded.
    pub successes: u64,
    /// The latest call.
    pub last_used: Option<SystemTime>,
    /// Sessions it was used in (each counted once): what co-occurrence rates are shares of.
    pub sessions: u64,
}

impl CommandStats {
    /// Calls that failed.
    pub fn failures(&self) -> u64 {
        self.calls.saturating_sub(self.successes)
    }

    /// The share of calls that succeeded, 0.0 to 1.0 (0.0 before any call).
    pub fn success_rate(&self) -> f32 {
        if self.calls == 0 {
            0.0
        } else {
            (self.successes as f64 / self.calls as f64) as f32
        }
    }
}

/// How much of a command an agent looked at: a name in a listing, a summary (afd-discover's
/// default), or the full definition with its schema (afd-detail, afd-discover `full`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessLevel {
    /// Its name.
    Name,
    /// Its name, summary and category.
    Summary,
    /// Its whole definition and input schema.
    Full,
}

impl AccessLevel {
    /// The lowercase name, as stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            AccessLevel::Name => "name",
            AccessLevel::Summary => "summary",
            AccessLevel::Full => "full",
        }
    }

    /// The level named `name` (as [`as_str`](AccessLevel::as_str) gives it).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "name" => Some(AccessLevel::Name),
            "summary" => Some(AccessLevel::Summary),
            "full" => Some(AccessLevel::Full),
            _ => None,
        }
    }
}

/// How often agents looked at one command, by level (afd-discover and afd-detail).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessCounts {
    /// Listed by name only.
    pub name: u64,
    /// Listed with its summary.
    pub summary: u64,
    /// Read in full.
    pub full: u64,
}

impl AccessCounts {
    /// Every access, whatever its level.
    pub fn total(&self) -> u64 {
        self.name + self.summary + self.full
    }

    pub(crate) fn add(&mut self, level: AccessLevel, count: u64) {
        match level {
            AccessLevel::Name => self.name += count,
            AccessLevel::Summary => self.summary += count,
            AccessLevel::Full => self.full += count,
        }
    }
}

/// Where a [`Suggestion`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SuggestionSource {
    /// What followed the session's last command earlier in the same session.
    Session,
    /// What followed that command across every recorded session.
    Global,
    /// What was used in the same sessions as that command, in any order.
    CoOccurrence,
}

/// A command the agent is likely to want, with how likely and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    /// The command's name.
    pub command: String,
    /// Its share of the observations in its source, 0.0 to 1.0: for transitions, how often
    /// it followed the command among everything that followed it.
    pub probability: f32,
    /// The observations behind it (transitions or shared sessions).
    pub count: u64,
    /// Where the observations come from.
    pub source: SuggestionSource,
    /// A sentence for the agent: "followed 'todo-list' 3 of 4 times in this session".
    pub reason: String,
}

/// Why [`UsageStats::flush`] could not persist everything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    /// The store rejected the write; what changed is kept and retried on the next flush.
    #[error("usage store write failed: {0}")]
    Store(String),
    /// The background writer has stopped; nothing more will be persisted.
    #[error("the usage store writer has stopped")]
    WriterStopped,
    /// The writer did not answer in time (the database is busy); the write goes on.
    #[error("the usage store did not finish writing in time")]
    Timeout,
}

/// Where statistics are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Store {
    Off,
    Memory,
    File(PathBuf),
    Postgres(String),
}

/// Configures [`UsageStats`]: the store, the flush interval, session bounds.
///
/// ```
/// use std::time::Duration;
/// use afd_runtime::usage::UsageStats;
///
/// let dir = std::env::temp_dir().join(format!("afd-usage-doc-{}", std::process::id()));
/// let usage = UsageStats::builder()
///     .path(dir.join("usage.db"))
///     .flush_interval(Duration::from_millis(200))
///     .max_sessions(1_000)
///     .build();
/// assert!(usage.is_enabled());
/// # drop(usage);
/// # let _ = std::fs::remove_dir_all(&dir);
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct UsageStatsBuilder {
    store: Store,
    flush_interval: Duration,
    limits: Limits,
}

impl Default for UsageStatsBuilder {
    fn default() -> Self {
        UsageStatsBuilder {
            store: Store::Memory,
            flush_interval: DEFAULT_FLUSH_INTERVAL,
            limits: Limits {
                max_sessions: DEFAULT_MAX_SESSIONS,
                session_gap: Some(DEFAULT_SESSION_GAP),
            },
        }
    }
}

impl UsageStatsBuilder {
    /// Persists to this SQLite file (created, with its directories, if missing). Without
    /// the `usage-sqlite` feature the statistics stay in memory, with a warning.
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.store = Store::File(path.into());
        self
    }

    /// Keeps the statistics in PostgreSQL at `url` (`postgres://user:password@host/db`),
    /// shared by every replica that uses the same database: written in batches off the
    /// call path, read back after each write so suggestions reflect every replica's
    /// traffic. Needs the `postgres` feature; without it, or when the database cannot be
    /// reached at start, the statistics stay in memory, with a warning.
    pub fn postgres(mut self, url: impl Into<String>) -> Self {
        self.store = Store::Postgres(url.into());
        self
    }

    /// The store a location names: `postgres://...` (or `postgresql://...`),
    /// `sqlite:PATH`, `memory` or `off`, as `AFD_USAGE_STORE` and `--usage-store` give it.
    ///
    /// # Errors
    ///
    /// A location of another kind, said in words.
    pub fn location(self, location: &str) -> Result<Self, String> {
        let location = location.trim();
        if location.starts_with("postgres://") || location.starts_with("postgresql://") {
            Ok(self.postgres(location))
        } else if let Some(path) = location.strip_prefix("sqlite:") {
            Ok(self.path(path))
        } else if location == "memory" {
            Ok(self.in_memory())
        } else if location == "off" {
            Ok(self.enabled(false))
        } else {
            Err(format!(
                "'{location}' names no usage store: use postgres://user:password@host/db, sqlite:PATH, memory or off"
            ))
        }
    }

    /// Keeps the statistics in memory only (the default).
    pub fn in_memory(mut self) -> Self {
        self.store = Store::Memory;
        self
    }

    /// Turns recording on or off; off records nothing and answers every query empty.
    pub fn enabled(mut self, on: bool) -> Self {
        if !on {
            self.store = Store::Off;
        } else if self.store == Store::Off {
            self.store = Store::Memory;
        }
        self
    }

    /// How often the background writer persists what changed (at least 1 ms).
    pub fn flush_interval(mut self, interval: Duration) -> Self {
        self.flush_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How many live sessions are kept; past it, the least recently used is forgotten.
    /// 0 means no bound.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.limits.max_sessions = max;
        self
    }

    /// The longest pause within a session that still links two calls as a transition;
    /// `None` links every consecutive pair.
    pub fn session_gap(mut self, gap: Option<Duration>) -> Self {
        self.limits.session_gap = gap;
        self
    }

    /// Builds the statistics, opening the store. Never fails: a store that cannot be
    /// opened leaves the statistics in memory, with a `tracing` warning.
    pub fn build(self) -> UsageStats {
        let model = Model::new(self.limits);
        let (enabled, path, url) = match self.store {
            Store::Off => (false, None, None),
            Store::Memory => (true, None, None),
            Store::File(path) => (true, Some(path), None),
            Store::Postgres(url) => (true, None, Some(url)),
        };
        let mut inner = Inner {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    model,
                    pending: None,
                }),
            }),
            enabled,
            path: None,
            database: None,
            #[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
            writer: None,
            #[cfg(feature = "postgres")]
            probe: None,
        };
        if let Some(path) = path {
            inner.attach(path, self.flush_interval);
        }
        if let Some(url) = url {
            inner.attach_postgres(url, self.flush_interval);
        }
        UsageStats {
            inner: Arc::new(inner),
        }
    }
}

/// What the recording side and the writer share.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
}

impl Shared {
    /// The state, even when a thread panicked while holding it (the counts stay usable).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Debug)]
struct State {
    model: Model,
    /// What changed since the last write; `Some` only when a store is attached.
    pending: Option<Delta>,
}

#[derive(Debug)]
struct Inner {
    shared: Arc<Shared>,
    enabled: bool,
    /// The store's file, when it opened.
    path: Option<PathBuf>,
    /// The PostgreSQL database (its URL without the password), when it opened.
    database: Option<String>,
    /// The background writer of the store, when one opened.
    #[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
    writer: Option<writer::Writer>,
    /// The readiness probe of a PostgreSQL store.
    #[cfg(feature = "postgres")]
    probe: Option<postgres::Probe>,
}

impl Inner {
    #[cfg(feature = "usage-sqlite")]
    fn attach(&mut self, path: PathBuf, interval: Duration) {
        let opened = path.clone();
        match writer::Writer::start(Arc::clone(&self.shared), interval, move || {
            sqlite::SqliteStore::open(&opened)
        }) {
            Ok(writer) => {
                self.writer = Some(writer);
                self.path = Some(path);
            }
            Err(error) => tracing::warn!(
                path = %path.display(),
                %error,
                "usage statistics: cannot open the store; keeping them in memory only"
            ),
        }
    }

    #[cfg(feature = "postgres")]
    fn attach_postgres(&mut self, url: String, interval: Duration) {
        let shown = postgres::redact(&url);
        self.probe = postgres::Probe::new(&url).ok();
        match writer::Writer::start(Arc::clone(&self.shared), interval, move || {
            postgres::PostgresStore::open(url)
        }) {
            Ok(writer) => {
                tracing::info!(database = %shown, "usage statistics in PostgreSQL");
                self.writer = Some(writer);
                self.database = Some(shown);
            }
            Err(error) => tracing::warn!(
                database = %shown,
                %error,
                "usage statistics: cannot open the PostgreSQL store; keeping them in memory only"
            ),
        }
    }

    #[cfg(not(feature = "postgres"))]
    fn attach_postgres(&mut self, _url: String, _interval: Duration) {
        tracing::warn!(
            "usage statistics: afd-runtime was built without the `postgres` feature; keeping them in memory only"
        );
    }

    #[cfg(not(feature = "usage-sqlite"))]
    fn attach(&mut self, path: PathBuf, _interval: Duration) {
        tracing::warn!(
            path = %path.display(),
            "usage statistics: afd-runtime was built without the `usage-sqlite` feature; keeping them in memory only"
        );
    }
}

/// Usage statistics of the commands: cheap to clone (every clone shares one model), safe
/// to share across threads. See the [module documentation](self).
#[derive(Clone)]
pub struct UsageStats {
    inner: Arc<Inner>,
}

impl fmt::Debug for UsageStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UsageStats")
            .field("enabled", &self.inner.enabled)
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl UsageStats {
    /// A builder, to pick the store and tune sessions.
    pub fn builder() -> UsageStatsBuilder {
        UsageStatsBuilder::default()
    }

    /// Statistics kept in memory only, lost when the program ends.
    pub fn in_memory() -> Self {
        UsageStats::builder().in_memory().build()
    }

    /// Statistics persisted to the SQLite file at `path`, with what it already holds
    /// loaded. When the file cannot be opened, the statistics stay in memory (see
    /// [`UsageStats::is_persistent`]).
    pub fn open(path: impl AsRef<Path>) -> Self {
        UsageStats::builder().path(path.as_ref()).build()
    }

    /// Statistics that record nothing: every query answers empty.
    pub fn disabled() -> Self {
        UsageStats::builder().enabled(false).build()
    }

    /// Whether calls are recorded.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled
    }

    /// Whether the statistics are written to a store and survive a restart.
    pub fn is_persistent(&self) -> bool {
        self.inner.path.is_some() || self.inner.database.is_some()
    }

    /// The PostgreSQL database the statistics are kept in (its URL, password left out),
    /// when it opened.
    pub fn database(&self) -> Option<&str> {
        self.inner.database.as_deref()
    }

    /// The store's file, when the statistics are persisted.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Records one call of `command` (its canonical name) in `session`, made at `at`. Takes
    /// a short lock on the in-memory model; disk writes happen on the background writer. An
    /// empty `session` (a call outside any session) counts the call but records no
    /// transition.
    pub fn record(&self, session: &str, command: &str, at: SystemTime, success: bool) {
        if !self.inner.enabled {
            return;
        }
        let mut state = self.inner.shared.lock();
        let State { model, pending } = &mut *state;
        model.record(session, command, at, success, pending.as_mut());
    }

    /// Records one call made now.
    pub fn record_now(&self, session: &str, command: &str, success: bool) {
        self.record(session, command, SystemTime::now(), success);
    }

    /// Up to `limit` commands most likely to follow the session's last call, best first:
    /// what followed that command earlier in this session, then what followed it across
    /// every session. Empty for an unknown session or a command never followed.
    pub fn suggested_next(&self, session: &str, limit: usize) -> Vec<Suggestion> {
        if !self.inner.enabled || limit == 0 {
            return Vec::new();
        }
        self.inner
            .shared
            .lock()
            .model
            .suggested_next(session, limit)
    }

    /// Up to `limit` commands that followed `command` across every session, best first.
    pub fn next_after(&self, command: &str, limit: usize) -> Vec<Suggestion> {
        if !self.inner.enabled || limit == 0 {
            return Vec::new();
        }
        self.inner.shared.lock().model.next_after(command, limit)
    }

    /// Up to `limit` commands used in the same sessions as `command`, in any order, most
    /// shared sessions first. A suggestion's `probability` is its co-occurrence rate: the
    /// share of the sessions that used `command` in which it was used too.
    pub fn related(&self, command: &str, limit: usize) -> Vec<Suggestion> {
        if !self.inner.enabled || limit == 0 {
            return Vec::new();
        }
        self.inner.shared.lock().model.related(command, limit)
    }

    /// Records that an agent looked at `commands` (canonical names) at `level`:
    /// afd-discover records the commands it lists, afd-detail those it describes. Views are
    /// counted apart from calls: they change no call count, transition or co-occurrence.
    pub fn record_access(&self, commands: &[&str], level: AccessLevel) {
        if !self.inner.enabled || commands.is_empty() {
            return;
        }
        let mut state = self.inner.shared.lock();
        let State { model, pending } = &mut *state;
        model.record_access(commands, level, pending.as_mut());
    }

    /// How often agents looked at `command`, by level.
    pub fn accesses(&self, command: &str) -> AccessCounts {
        if !self.inner.enabled {
            return AccessCounts::default();
        }
        self.inner.shared.lock().model.accesses(command)
    }

    /// How popular `command` is, 0.0 (never called) to 1.0 (the most called command), on a
    /// logarithmic scale: a tie-break for search ranking.
    pub fn popularity(&self, command: &str) -> f32 {
        if !self.inner.enabled {
            return 0.0;
        }
        self.inner.shared.lock().model.popularity(command)
    }

    /// The statistics of `command`, if it was ever called.
    pub fn stats(&self, command: &str) -> Option<CommandStats> {
        if !self.inner.enabled {
            return None;
        }
        self.inner.shared.lock().model.stats(command)
    }

    /// Up to `limit` commands with the most calls, most first (ties by name).
    pub fn most_used(&self, limit: usize) -> Vec<(String, CommandStats)> {
        if !self.inner.enabled {
            return Vec::new();
        }
        self.inner.shared.lock().model.most_used(limit)
    }

    /// The last command called in `session`.
    pub fn last_command(&self, session: &str) -> Option<String> {
        if !self.inner.enabled {
            return None;
        }
        self.inner
            .shared
            .lock()
            .model
            .last_command(session)
            .map(str::to_owned)
    }

    /// Forgets the live state of `session` (call it when the session ends); the counts and
    /// transitions it contributed stay. Whether the session was known.
    pub fn forget_session(&self, session: &str) -> bool {
        self.inner.shared.lock().model.forget_session(session)
    }

    /// How many live sessions are tracked.
    pub fn session_count(&self) -> usize {
        self.inner.shared.lock().model.session_count()
    }

    /// Whether the store answers now (a readiness check): PostgreSQL `SELECT 1` on a
    /// connection of the check's own; a SQLite file or memory always does.
    ///
    /// # Errors
    ///
    /// What went wrong, in words for an operator (`postgres: connection refused`).
    pub async fn check(&self) -> Result<(), String> {
        #[cfg(feature = "postgres")]
        if let Some(probe) = &self.inner.probe {
            return probe.ping().await;
        }
        Ok(())
    }

    /// Writes what changed to the store now, waiting for the write (blocking: from async
    /// code, call it through `spawn_blocking`). A no-op for in-memory statistics.
    ///
    /// # Errors
    ///
    /// The store's error (what changed is kept for the next write), a stopped writer, or a
    /// write that did not finish within ten seconds.
    pub fn flush(&self) -> Result<(), UsageError> {
        #[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
        if let Some(writer) = &self.inner.writer {
            return writer.flush();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + seconds)
    }

    #[test]
    fn counts_calls_successes_and_last_use() {
        let usage = UsageStats::in_memory();
        usage.record("s", "todo-create", at(1), true);
        usage.record("s", "todo-create", at(5), false);
        usage.record("s", "todo-create", at(3), true);
        let stats = usage.stats("todo-create").unwrap();
        assert_eq!(stats.calls, 3);
        assert_eq!(stats.successes, 2);
        assert_eq!(stats.failures(), 1);
        assert_eq!(stats.last_used, Some(at(5)));
        assert!((stats.success_rate() - 2.0 / 3.0).abs() < 1e-6);
        assert_eq!(usage.stats("todo-delete"), None);
        assert_eq!(usage.last_command("s").as_deref(), Some("todo-create"));
    }

    #[test]
    fn ranks_the_most_frequent_follower_first() {
        let usage = UsageStats::in_memory();
        for (i, next) in ["todo-complete", "todo-complete", "todo-delete"]
            .iter()
            .enumerate()
        {
            let session = format!("s{i}");
            usage.record(&session, "todo-list", at(0), true);
            usage.record(&session, next, at(1), true);
        }
        usage.record("new", "todo-list", at(2), true);
        let next = usage.suggested_next("new", 5);
        assert_eq!(next.len(), 2);
        assert_eq!(next[0].command, "todo-complete");
        assert_eq!(next[0].count, 2);
        assert_eq!(next[0].source, SuggestionSource::Global);
        assert!((next[0].probability - 2.0 / 3.0).abs() < 1e-6);
        assert_eq!(next[1].command, "todo-delete");
        assert_eq!(
            next[0].reason,
            "followed 'todo-list' in 2 of 3 recorded transitions"
        );
        assert!(usage.suggested_next("unknown", 5).is_empty());
        assert_eq!(usage.suggested_next("new", 1).len(), 1);
        assert!(usage.suggested_next("new", 0).is_empty());
    }

    #[test]
    fn session_history_comes_before_global_transitions() {
        let usage = UsageStats::in_memory();
        for i in 0..5 {
            let session = format!("g{i}");
            usage.record(&session, "a", at(0), true);
            usage.record(&session, "b", at(1), true);
        }
        usage.record("mine", "a", at(0), true);
        usage.record("mine", "c", at(1), true);
        usage.record("mine", "a", at(2), true);
        let next = usage.suggested_next("mine", 3);
        assert_eq!(next[0].command, "c");
        assert_eq!(next[0].source, SuggestionSource::Session);
        assert_eq!(next[0].probability, 1.0);
        assert_eq!(next[1].command, "b");
        assert_eq!(next[1].source, SuggestionSource::Global);
        assert_eq!(next.len(), 2, "c is not repeated from the global list");
    }

    #[test]
    fn a_long_pause_breaks_the_chain() {
        let usage = UsageStats::builder()
            .session_gap(Some(Duration::from_secs(60)))
            .build();
        usage.record("s", "a", at(0), true);
        usage.record("s", "b", at(30), true);
        usage.record("s", "c", at(1_000), true);
        assert_eq!(usage.next_after("a", 5)[0].command, "b");
        assert!(usage.next_after("b", 5).is_empty());
    }

    #[test]
    fn co_occurrence_counts_sessions_once() {
        let usage = UsageStats::in_memory();
        for _ in 0..3 {
            usage.record("s1", "a", at(0), true);
            usage.record("s1", "b", at(1), true);
        }
        usage.record("s2", "b", at(0), true);
        usage.record("s2", "c", at(1), true);
        usage.record("s2", "a", at(2), true);
        let related = usage.related("a", 5);
        assert_eq!(related[0].command, "b");
        assert_eq!(related[0].count, 2);
        assert_eq!(related[1].command, "c");
        assert_eq!(related[1].count, 1);
        assert_eq!(related[1].source, SuggestionSource::CoOccurrence);
    }

    #[test]
    fn popularity_is_normalised() {
        let usage = UsageStats::in_memory();
        for _ in 0..9 {
            usage.record("s", "hot", at(0), true);
        }
        usage.record("s", "cold", at(0), true);
        assert_eq!(usage.popularity("hot"), 1.0);
        let cold = usage.popularity("cold");
        assert!(cold > 0.0 && cold < 1.0, "{cold}");
        assert_eq!(usage.popularity("never"), 0.0);
        assert_eq!(usage.most_used(1)[0].0, "hot");
    }

    #[test]
    fn sessions_are_bounded_and_forgettable() {
        let usage = UsageStats::builder().max_sessions(2).build();
        usage.record("s1", "a", at(0), true);
        usage.record("s2", "a", at(1), true);
        usage.record("s1", "b", at(2), true);
        usage.record("s3", "a", at(3), true);
        assert_eq!(usage.session_count(), 2);
        assert_eq!(
            usage.last_command("s2"),
            None,
            "the least recently used goes"
        );
        assert_eq!(usage.last_command("s1").as_deref(), Some("b"));
        assert!(usage.forget_session("s1"));
        assert!(!usage.forget_session("s1"));
        assert!(usage.suggested_next("s1", 3).is_empty());
        assert_eq!(usage.stats("b").unwrap().calls, 1, "counts stay");
    }

    #[test]
    fn disabled_records_nothing() {
        let usage = UsageStats::disabled();
        usage.record("s", "a", at(0), true);
        usage.record("s", "b", at(1), true);
        assert!(!usage.is_enabled());
        assert!(!usage.is_persistent());
        assert_eq!(usage.stats("a"), None);
        assert!(usage.suggested_next("s", 3).is_empty());
        assert_eq!(usage.popularity("a"), 0.0);
        assert_eq!(usage.session_count(), 0);
        assert_eq!(usage.flush(), Ok(()));
    }

    #[test]
    fn is_send_sync_and_shared_between_clones() {
        fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
        assert_send_sync::<UsageStats>();
        let usage = UsageStats::in_memory();
        let clone = usage.clone();
        clone.record("s", "a", at(0), true);
        assert_eq!(usage.stats("a").unwrap().calls, 1);
    }

    #[test]
    fn suggestions_serialise_in_camel_case() {
        let usage = UsageStats::in_memory();
        usage.record("s", "a", at(0), true);
        usage.record("s", "b", at(1), true);
        usage.record("t", "a", at(2), true);
        let json = serde_json::to_value(usage.suggested_next("t", 1)).unwrap();
        assert_eq!(json[0]["command"], "b");
        assert_eq!(json[0]["source"], "global");
        assert_eq!(json[0]["probability"], 1.0);
    }
}
