//! What the examples' SQLite stores share: the read-only connections a store on a file
//! opens beside its one writer, how every connection keeps its statements, and locking a
//! connection.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags};

/// How long a connection waits for a lock another holds before failing.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Read-only connections to a database file in WAL mode: reads on them run side by side and
/// never wait for the writer. Empty for an in-memory store, whose data only the writer's
/// connection sees.
#[derive(Default)]
pub(crate) struct Readers {
    connections: Vec<Mutex<Connection>>,
    /// Where the next search for a free connection starts, so that reads spread out.
    next: AtomicUsize,
}

impl Readers {
    /// Opens the read connections of the database at `path`, after its schema exists:
    /// one for each async worker (a worker runs one inline read at a time) and two for
    /// reads on the blocking pool, at least four. Read-only, so a read that tried to write
    /// fails at once instead of racing the writer; each keeps `cache` statements.
    pub(crate) fn open(path: &Path, cache: usize) -> rusqlite::Result<Self> {
        let count = (std::thread::available_parallelism().map_or(1, usize::from) + 2).max(4);
        let mut connections = Vec::with_capacity(count);
        for _ in 0..count {
            let reader = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            reader.busy_timeout(BUSY_TIMEOUT)?;
            statements(&reader, cache)?;
            connections.push(Mutex::new(reader));
        }
        Ok(Readers {
            connections,
            next: AtomicUsize::new(0),
        })
    }

    /// How many read connections there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.connections.len()
    }

    /// A free read connection (waiting for one when all are busy), or `writer` when there
    /// are none (in memory).
    pub(crate) fn get<'a>(&'a self, writer: &'a Mutex<Connection>) -> MutexGuard<'a, Connection> {
        let count = self.connections.len();
        if count == 0 {
            return lock(writer);
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for offset in 0..count {
            match self.connections[(start + offset) % count].try_lock() {
                Ok(guard) => return guard,
                Err(std::sync::TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        lock(&self.connections[start % count])
    }
}

/// The writer of a database file: a busy timeout, so that it waits its turn rather than
/// fail, and WAL mode, so that readers never wait for it.
pub(crate) fn writer(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    wal(&conn)?;
    Ok(conn)
}

/// Switches `conn`'s file to write-ahead logging. The switch needs the file to itself and
/// SQLite answers "busy" at once, without the busy timeout, while another connection holds
/// it (replicas opening a new file together): retried for up to 5 seconds.
fn wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        }) {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(error) => return Err(error),
        }
    }
}

/// How a connection keeps its statements: `cache` of them prepared once and cached, and
/// never prepared again because of the values bound. SQLite otherwise re-prepares a
/// statement on every run when a bound value may change its plan, which optional filters
/// (`?1 IS NULL OR user_id = ?1`) trigger on every call: the query planner stability
/// guarantee (QPSG) keeps the first plan instead.
pub(crate) fn statements(conn: &Connection, cache: usize) -> rusqlite::Result<()> {
    conn.set_prepared_statement_cache_capacity(cache);
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// `mutex`, locked. A panic while holding the lock leaves SQLite consistent (statements
/// are atomic, transactions roll back on drop).
pub(crate) fn lock(mutex: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
