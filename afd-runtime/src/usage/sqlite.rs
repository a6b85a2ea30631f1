//! The SQLite store of usage statistics: its schema, opening and migrating it, and one
//! round of the background writer (`writer.rs`).
//!
//! Schema version 2 (`PRAGMA user_version`), in WAL mode:
//!
//! - `command_usage(command, calls, successes, last_used_ms, sessions)`;
//! - `transitions(from_command, to_command, count)`;
//! - `co_occurrence(command_a, command_b, count)`, with `command_a < command_b`;
//! - `command_access(command, level, count)`: views by afd-discover and afd-detail.
//!
//! Version 1 (without `sessions` and `command_access`) is migrated in place at open.
//!
//! Writes add deltas (`calls = calls + excluded.calls`), so several processes sharing one
//! file add up rather than overwrite each other.

use std::fs;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior, params};

use super::model::{Delta, Snapshot, from_millis};
use super::writer::{self, Store};
use super::{AccessLevel, CommandStats, Shared, UsageError};

/// The schema this code writes.
const SCHEMA_VERSION: i64 = 2;
/// How long opening waits for a database another connection holds.
const OPEN_BUSY_TIMEOUT: Duration = Duration::from_millis(250);
/// How long a background write waits for a database another connection holds.
const WRITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a flush waits for the writer's answer.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS command_usage (
    command TEXT PRIMARY KEY NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    successes INTEGER NOT NULL DEFAULT 0,
    last_used_ms INTEGER
);
CREATE TABLE IF NOT EXISTS transitions (
    from_command TEXT NOT NULL,
    to_command TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (from_command, to_command)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS co_occurrence (
    command_a TEXT NOT NULL,
    command_b TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (command_a, command_b)
) WITHOUT ROWID;
";

/// What version 2 adds: the sessions each command was used in, and views.
const SCHEMA_V2: &str = "
ALTER TABLE command_usage ADD COLUMN sessions INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS command_access (
    command TEXT NOT NULL,
    level TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (command, level)
) WITHOUT ROWID;
";

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub(super) enum OpenError {
    #[error("cannot create the directory: {0}")]
    Directory(#[from] std::io::Error),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("the store has schema version {0}, newer than this program's {SCHEMA_VERSION}")]
    NewerSchema(i64),
}

fn to_i64(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

fn to_u64(count: i64) -> u64 {
    u64::try_from(count).unwrap_or(0)
}

/// An open, writable store.
#[derive(Debug)]
pub(super) struct SqliteStore {
    conn: Connection,
    /// Failed rounds in a row.
    failures: u64,
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`, migrates it, and loads what it holds.
    pub(super) fn open(path: &Path) -> Result<(SqliteStore, Snapshot), OpenError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent)?;
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(OPEN_BUSY_TIMEOUT)?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::debug!(path = %path.display(), %mode, "usage statistics: WAL mode unavailable");
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrate(&mut conn)?;
        let snapshot = load(&conn)?;
        conn.busy_timeout(WRITE_BUSY_TIMEOUT)?;
        Ok((SqliteStore { conn, failures: 0 }, snapshot))
    }

    /// Adds `delta` to the stored counts, in one transaction.
    pub(super) fn write(&mut self, delta: &Delta) -> rusqlite::Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut commands = tx.prepare_cached(
                "INSERT INTO command_usage (command, calls, successes, last_used_ms, sessions)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (command) DO UPDATE SET
                     calls = calls + excluded.calls,
                     successes = successes + excluded.successes,
                     last_used_ms = max(coalesce(last_used_ms, excluded.last_used_ms),
                                        excluded.last_used_ms),
                     sessions = sessions + excluded.sessions",
            )?;
            for (command, (calls, successes, last, sessions)) in &delta.commands {
                // A command only viewed or only counted for a session has no call time.
                let last = (*last > 0).then_some(*last);
                commands.execute(params![
                    command,
                    to_i64(*calls),
                    to_i64(*successes),
                    last,
                    to_i64(*sessions)
                ])?;
            }
            let mut accesses = tx.prepare_cached(
                "INSERT INTO command_access (command, level, count) VALUES (?1, ?2, ?3)
                 ON CONFLICT (command, level) DO UPDATE SET count = count + excluded.count",
            )?;
            for ((command, level), count) in &delta.accesses {
                accesses.execute(params![command, level.as_str(), to_i64(*count)])?;
            }
            let mut transitions = tx.prepare_cached(
                "INSERT INTO transitions (from_command, to_command, count) VALUES (?1, ?2, ?3)
                 ON CONFLICT (from_command, to_command) DO UPDATE SET
                     count = count + excluded.count",
            )?;
            for ((from, to), count) in &delta.transitions {
                transitions.execute(params![from, to, to_i64(*count)])?;
            }
            let mut co = tx.prepare_cached(
                "INSERT INTO co_occurrence (command_a, command_b, count) VALUES (?1, ?2, ?3)
                 ON CONFLICT (command_a, command_b) DO UPDATE SET
                     count = count + excluded.count",
            )?;
            for ((a, b), count) in &delta.co_occurrence {
                co.execute(params![a, b, to_i64(*count)])?;
            }
        }
        tx.commit()
    }
}

/// Brings the schema to [`SCHEMA_VERSION`], taking the write lock (which also proves the
/// file is writable and not held by another process).
fn migrate(conn: &mut Connection) -> Result<(), OpenError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(OpenError::NewerSchema(version));
    }
    if version < 1 {
        tx.execute_batch(SCHEMA_V1)?;
    }
    if version < 2 {
        tx.execute_batch(SCHEMA_V2)?;
    }
    // Later versions: `if version < 3 { ... }`, each step in this transaction.
    if version != SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

fn load(conn: &Connection) -> rusqlite::Result<Snapshot> {
    let mut snapshot = Snapshot::default();
    let mut stmt = conn
        .prepare("SELECT command, calls, successes, last_used_ms, sessions FROM command_usage")?;
    let rows = stmt.query_map([], |row| {
        let last: Option<i64> = row.get(3)?;
        Ok((
            row.get::<_, String>(0)?,
            CommandStats {
                calls: to_u64(row.get(1)?),
                successes: to_u64(row.get(2)?),
                last_used: last.map(from_millis),
                sessions: to_u64(row.get(4)?),
            },
        ))
    })?;
    for row in rows {
        snapshot.commands.push(row?);
    }
    let mut stmt = conn.prepare("SELECT from_command, to_command, count FROM transitions")?;
    let rows = stmt.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, to_u64(row.get(2)?)))
    })?;
    for row in rows {
        snapshot.transitions.push(row?);
    }
    let mut stmt = conn.prepare("SELECT command_a, command_b, count FROM co_occurrence")?;
    let rows = stmt.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, to_u64(row.get(2)?)))
    })?;
    for row in rows {
        snapshot.co_occurrence.push(row?);
    }
    let mut stmt = conn.prepare("SELECT command, level, count FROM command_access")?;
    let rows = stmt.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            to_u64(row.get(2)?),
        ))
    })?;
    for row in rows {
        let (command, level, count) = row?;
        // A level a later version added is skipped, not an error.
        if let Some(level) = AccessLevel::from_name(&level) {
            snapshot.accesses.push((command, level, count));
        }
    }
    Ok(snapshot)
}

impl Store for SqliteStore {
    const THREAD: &'static str = "afd-usage-writer";
    const FLUSH_TIMEOUT: Duration = FLUSH_TIMEOUT;

    /// Takes what changed and writes it; on failure puts it back for the next round.
    fn sync(&mut self, shared: &Shared) -> Result<(), UsageError> {
        let delta = match shared.lock().pending.as_mut() {
            Some(pending) if !pending.is_empty() => std::mem::take(pending),
            _ => return Ok(()),
        };
        match self.write(&delta) {
            Ok(()) => {
                self.failures = 0;
                Ok(())
            }
            Err(error) => {
                if let Some(pending) = shared.lock().pending.as_mut() {
                    pending.merge(delta);
                }
                Err(writer::failed(&mut self.failures, error.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::thread;
    use std::time::SystemTime;

    use super::super::UsageStats;
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "afd-usage-unit-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_version_1_store_is_migrated_in_place() {
        let dir = temp_dir("migrate");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("usage.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(SCHEMA_V1).unwrap();
            conn.execute(
                "INSERT INTO command_usage (command, calls, successes, last_used_ms) VALUES ('a', 4, 3, 1000)",
                [],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO co_occurrence (command_a, command_b, count) VALUES ('a', 'b', 2)",
                [],
            )
            .unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
        }
        {
            let usage = UsageStats::open(&path);
            assert!(usage.is_persistent());
            let stats = usage.stats("a").unwrap();
            assert_eq!((stats.calls, stats.successes, stats.sessions), (4, 3, 0));
            // Without session counts, the rate is a share of the largest shared count.
            assert_eq!(usage.related("a", 3)[0].probability, 1.0);
            usage.record_access(&["a", "b"], super::super::AccessLevel::Full);
            usage.record("s", "a", SystemTime::now(), true);
            usage.flush().unwrap();
        }
        let usage = UsageStats::open(&path);
        assert_eq!(usage.accesses("a").full, 1);
        assert_eq!(usage.accesses("b").full, 1);
        assert_eq!(usage.stats("a").unwrap().sessions, 1);
        assert_eq!(usage.stats("a").unwrap().calls, 5);
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, 2);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn persists_and_reloads() {
        let dir = temp_dir("reload");
        let path = dir.join("nested").join("usage.db");
        {
            let usage = UsageStats::open(&path);
            assert!(usage.is_persistent());
            usage.record("s", "a", SystemTime::now(), true);
            usage.record("s", "b", SystemTime::now(), false);
            usage.flush().unwrap();
            usage.record("s", "a", SystemTime::now(), true);
        }
        let usage = UsageStats::open(&path);
        assert!(usage.is_persistent());
        assert_eq!(usage.stats("a").unwrap().calls, 2);
        assert_eq!(usage.stats("b").unwrap().successes, 0);
        assert_eq!(usage.next_after("a", 3)[0].command, "b");
        assert_eq!(usage.next_after("b", 3)[0].command, "a");
        assert_eq!(usage.related("a", 3)[0].count, 1);
        assert!(
            usage.suggested_next("s", 3).is_empty(),
            "sessions are not persisted"
        );
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(conn);
        drop(usage);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_newer_schema_is_left_alone() {
        let dir = temp_dir("newer");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("usage.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        let usage = UsageStats::open(&path);
        assert!(!usage.is_persistent());
        usage.record("s", "a", SystemTime::now(), true);
        assert_eq!(usage.stats("a").unwrap().calls, 1);
        drop(usage);
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, 99);
        drop(conn);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_locked_store_degrades_to_memory() {
        let dir = temp_dir("locked");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("usage.db");
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let usage = UsageStats::open(&path);
        assert!(!usage.is_persistent());
        usage.record("s", "a", SystemTime::now(), true);
        assert_eq!(usage.stats("a").unwrap().calls, 1);
        holder.execute_batch("ROLLBACK").unwrap();
        drop(holder);
        drop(usage);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn writes_in_the_background() {
        let dir = temp_dir("background");
        let path = dir.join("usage.db");
        let usage = UsageStats::builder()
            .path(&path)
            .flush_interval(Duration::from_millis(10))
            .build();
        usage.record("s", "a", SystemTime::now(), true);
        let conn = Connection::open(&path).unwrap();
        let mut calls = 0;
        for _ in 0..500 {
            calls = conn
                .query_row(
                    "SELECT coalesce(sum(calls), 0) FROM command_usage",
                    [],
                    |row| row.get(0),
                )
                .unwrap();
            if calls == 1 {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(calls, 1);
        drop(conn);
        drop(usage);
        let _ = fs::remove_dir_all(&dir);
    }
}
