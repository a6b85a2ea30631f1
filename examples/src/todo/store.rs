//! The todo store: SQLite through rusqlite (bundled), one writer connection behind a mutex
//! and, on a database file, read-only connections in WAL mode beside it (reads run side by
//! side and never wait for the writer), its statements prepared once, cached
//! (`prepare_cached`) and kept prepared whatever is bound (QPSG). In memory there is only the
//! writer, which reads share: a read may then wait for a write, so every command that
//! touches the store is `#[command(blocking)]` (the shop, whose quick reads run inline, is
//! the other case).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use afd_runtime::CommandError;
use rusqlite::{Connection, OptionalExtension, Params, Row, params};

use super::{Priority, Todo};
use crate::sqlite::{self, Readers, lock};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS todos (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    title        TEXT NOT NULL,
    description  TEXT,
    priority     TEXT NOT NULL CHECK (priority IN ('low', 'medium', 'high')),
    completed    INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    completed_at TEXT
);";

/// ISO 8601 with milliseconds, in UTC, computed by SQLite.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

const COLUMNS: &str =
    "id, title, description, priority, completed, created_at, updated_at, completed_at";

/// `query_row` through the connection's statement cache: SQLite parses each query once.
trait QueryRowCached {
    fn query_row_cached<T, P: Params, F>(
        &self,
        sql: &str,
        params: P,
        map: F,
    ) -> rusqlite::Result<T>
    where
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>;
}

impl QueryRowCached for Connection {
    fn query_row_cached<T, P: Params, F>(&self, sql: &str, params: P, map: F) -> rusqlite::Result<T>
    where
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    {
        self.prepare_cached(sql)?.query_row(params, map)
    }
}

/// The todo store, shared with every command through the context.
pub struct TodoStore {
    /// The one connection that writes.
    conn: Mutex<Connection>,
    /// Read-only connections on a file (none in memory).
    readers: Readers,
}

/// Statements each connection keeps prepared.
const STATEMENT_CACHE: usize = 64;

/// A storage failure, reported to agents as a retryable `STORAGE_ERROR`.
fn storage(error: rusqlite::Error) -> CommandError {
    CommandError::new("STORAGE_ERROR", format!("the todo store failed: {error}"))
        .with_suggestion("Retry the call; if it keeps failing, check the database file.")
        .with_retryable(true)
}

/// `NOT_FOUND` for a todo id.
pub fn not_found(id: &str) -> CommandError {
    CommandError::new("NOT_FOUND", format!("Todo '{id}' not found"))
        .with_suggestion("Call todo-list to see existing todos and their ids.")
        .with_retryable(false)
}

fn todo_from_row(row: &Row<'_>) -> rusqlite::Result<Todo> {
    let priority: String = row.get(3)?;
    Ok(Todo {
        id: row.get(0)?,
        title: row.get(1)?,
        description: row.get(2)?,
        priority: Priority::parse(&priority).unwrap_or(Priority::Medium),
        completed: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
        completed_at: row.get(7)?,
    })
}

/// Filters and ordering for [`TodoStore::list`].
pub struct ListQuery<'a> {
    /// Only completed (or only pending) todos.
    pub completed: Option<bool>,
    /// Only this priority.
    pub priority: Option<Priority>,
    /// Case-insensitive text in the title or description.
    pub search: Option<&'a str>,
    /// SQL ORDER BY expression (from a closed set).
    pub order_by: &'static str,
    /// `ASC` or `DESC`.
    pub direction: &'static str,
    /// Page size.
    pub limit: u32,
    /// Page start.
    pub offset: u32,
}

impl TodoStore {
    /// Opens (or creates) a database file.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or initialised.
    pub fn open(path: impl AsRef<Path>) -> rusqlite::Result<Self> {
        let mut store = Self::init(sqlite::writer(path.as_ref())?)?;
        store.readers = Readers::open(path.as_ref(), STATEMENT_CACHE)?;
        Ok(store)
    }

    /// A fresh in-memory store.
    ///
    /// # Errors
    ///
    /// SQLite could not be initialised.
    pub fn in_memory() -> rusqlite::Result<Self> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> rusqlite::Result<Self> {
        conn.execute_batch(SCHEMA)?;
        sqlite::statements(&conn, STATEMENT_CACHE)?;
        Ok(TodoStore {
            conn: Mutex::new(conn),
            readers: Readers::default(),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        lock(&self.conn)
    }

    /// A connection for reading: a free read connection (waiting for one when all are
    /// busy), or the writer in memory.
    fn read(&self) -> MutexGuard<'_, Connection> {
        self.readers.get(&self.conn)
    }

    /// Inserts a todo.
    pub fn create(
        &self,
        title: &str,
        description: Option<&str>,
        priority: Priority,
    ) -> Result<Todo, CommandError> {
        let conn = self.conn();
        let id: String = conn
            .query_row_cached(
                &format!(
                    "INSERT INTO todos (id, title, description, priority, created_at, updated_at)
                     VALUES ('todo-' || lower(hex(randomblob(6))), ?1, ?2, ?3, {NOW}, {NOW})
                     RETURNING id"
                ),
                params![title, description, priority.as_str()],
                |row| row.get(0),
            )
            .map_err(storage)?;
        Self::fetch(&conn, &id)?.ok_or_else(|| not_found(&id))
    }

    fn fetch(conn: &Connection, id: &str) -> Result<Option<Todo>, CommandError> {
        conn.query_row_cached(
            &format!("SELECT {COLUMNS} FROM todos WHERE id = ?1"),
            [id],
            todo_from_row,
        )
        .optional()
        .map_err(storage)
    }

    /// The todo with this id.
    pub fn get(&self, id: &str) -> Result<Todo, CommandError> {
        Self::fetch(&self.read(), id)?.ok_or_else(|| not_found(id))
    }

    /// A page of todos and the number matching the filters.
    pub fn list(&self, query: &ListQuery<'_>) -> Result<(Vec<Todo>, u64), CommandError> {
        let conn = self.read();
        let pattern = query
            .search
            .map(|text| format!("%{}%", text.to_lowercase()));
        let filter = "(?1 IS NULL OR completed = ?1)
             AND (?2 IS NULL OR priority = ?2)
             AND (?3 IS NULL OR lower(title) LIKE ?3 OR lower(coalesce(description, '')) LIKE ?3)";
        let args = params![
            query.completed,
            query.priority.map(Priority::as_str),
            pattern
        ];
        let total: u64 = conn
            .query_row_cached(
                &format!("SELECT count(*) FROM todos WHERE {filter}"),
                args,
                |row| row.get(0),
            )
            .map_err(storage)?;
        let sql = format!(
            "SELECT {COLUMNS} FROM todos WHERE {filter} ORDER BY {} {}, seq {} LIMIT ?4 OFFSET ?5",
            query.order_by, query.direction, query.direction
        );
        let mut statement = conn.prepare_cached(&sql).map_err(storage)?;
        let todos = statement
            .query_map(
                params![
                    query.completed,
                    query.priority.map(Priority::as_str),
                    pattern,
                    query.limit,
                    query.offset
                ],
                todo_from_row,
            )
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(storage)?;
        Ok((todos, total))
    }

    /// Applies the given changes; `None` leaves a field as it is.
    pub fn update(
        &self,
        id: &str,
        title: Option<&str>,
        description: Option<&str>,
        priority: Option<Priority>,
        completed: Option<bool>,
    ) -> Result<Todo, CommandError> {
        let conn = self.conn();
        let changed = conn
            .execute(
                &format!(
                    "UPDATE todos SET
                        title = coalesce(?2, title),
                        description = coalesce(?3, description),
                        priority = coalesce(?4, priority),
                        completed_at = CASE
                            WHEN ?5 IS NULL THEN completed_at
                            WHEN ?5 = 1 AND completed = 0 THEN {NOW}
                            WHEN ?5 = 1 THEN completed_at
                            ELSE NULL END,
                        completed = coalesce(?5, completed),
                        updated_at = {NOW}
                     WHERE id = ?1"
                ),
                params![
                    id,
                    title,
                    description,
                    priority.map(Priority::as_str),
                    completed
                ],
            )
            .map_err(storage)?;
        if changed == 0 {
            return Err(not_found(id));
        }
        Self::fetch(&conn, id)?.ok_or_else(|| not_found(id))
    }

    /// Sets `completed`, or flips it when `completed` is `None`.
    pub fn toggle(&self, id: &str, completed: Option<bool>) -> Result<Todo, CommandError> {
        let target = match completed {
            Some(value) => value,
            None => !self.get(id)?.completed,
        };
        self.update(id, None, None, None, Some(target))
    }

    /// Deletes a todo.
    pub fn delete(&self, id: &str) -> Result<(), CommandError> {
        let deleted = self
            .conn()
            .execute("DELETE FROM todos WHERE id = ?1", [id])
            .map_err(storage)?;
        if deleted == 0 {
            Err(not_found(id))
        } else {
            Ok(())
        }
    }

    /// Deletes every completed todo; returns (cleared, remaining).
    pub fn clear_completed(&self) -> Result<(u64, u64), CommandError> {
        let conn = self.conn();
        let cleared = conn
            .execute("DELETE FROM todos WHERE completed = 1", [])
            .map_err(storage)?;
        let remaining: u64 = conn
            .query_row_cached("SELECT count(*) FROM todos", [], |row| row.get(0))
            .map_err(storage)?;
        Ok((cleared as u64, remaining))
    }

    /// Counts: (total, completed, low, medium, high).
    pub fn counts(&self) -> Result<(u64, u64, u64, u64, u64), CommandError> {
        self.read()
            .query_row_cached(
                "SELECT count(*),
                        coalesce(sum(completed), 0),
                        coalesce(sum(priority = 'low'), 0),
                        coalesce(sum(priority = 'medium'), 0),
                        coalesce(sum(priority = 'high'), 0)
                 FROM todos",
                [],
                |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                },
            )
            .map_err(storage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a file, reads go to the read connections and see what the writer committed.
    #[test]
    fn a_file_store_reads_on_its_read_connections() {
        let dir = std::env::temp_dir().join(format!("afd-todo-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = TodoStore::open(dir.join("todo.db")).unwrap();
        assert!(store.readers.len() >= 4);
        let created = store.create("Milk", None, Priority::High).unwrap();
        let done = store.toggle(&created.id, Some(true)).unwrap();
        assert!(done.completed);
        assert!(store.get(&created.id).unwrap().completed);
        let query = ListQuery {
            completed: Some(true),
            priority: None,
            search: Some("milk"),
            order_by: "created_at",
            direction: "ASC",
            limit: 10,
            offset: 0,
        };
        let (todos, total) = store.list(&query).unwrap();
        assert_eq!((todos.len(), total), (1, 1));
        assert_eq!(store.counts().unwrap(), (1, 1, 0, 0, 1));
        // A read connection cannot write.
        assert!(store.read().execute("DELETE FROM todos", []).is_err());
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
