//! The state of calls that run as tasks (MCP's tasks extension): one [`TaskRecord`] per
//! task, kept in a [`TaskStore`] beside the sessions, in this process
//! ([`MemoryTaskStore`]) or in Redis ([`RedisTaskStore`], feature `redis`) where every
//! replica reads it. The call path writes a record as the task starts, changes it as the
//! handler asks its client something and finishes, and reads it for `tasks/get`; any
//! replica holding the store answers for any task.

#[cfg(feature = "redis")]
mod redis;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::contexts::session::{SessionStoreError as TaskStoreError, StoreFuture};
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;

/// How long a record of a task still running is kept beyond its time-to-live: a task that
/// outlives its TTL is not dropped from under its client, and a task whose process died
/// without finishing it does not stay forever.
pub const RUNNING_GRACE: Duration = Duration::from_secs(24 * 60 * 60);

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// The handler is running.
    Working,
    /// The handler waits for the client's answers to the record's `input_requests`.
    InputRequired,
    /// The handler finished: `result` holds the tool result (an error result included).
    Completed,
    /// The task failed inside the server: `error` holds the JSON-RPC error.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl TaskState {
    /// Whether the task has ended (completed, failed or cancelled).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Cancelled
        )
    }
}

/// One task as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's id: 128 random bits, as hex.
    pub id: String,
    /// The subject of the caller that started it, where the transport checked a token:
    /// only that subject reads, answers or cancels it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The tool the call named.
    pub tool: String,
    /// Where it stands.
    pub state: TaskState,
    /// A line on where it stands, for the client to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub last_updated_at: String,
    /// How long the client may read it, from its creation, in milliseconds.
    pub ttl_ms: u64,
    /// How often the client should poll, in milliseconds.
    pub poll_interval_ms: u64,
    /// The handler's questions without an answer yet, by key: `{method, params}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, Value>,
    /// The client's answers (`tasks/update`) the handler has not taken yet, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, Value>,
    /// Whether the client asked to cancel it (`tasks/cancel`).
    #[serde(default)]
    pub cancel_requested: bool,
    /// The tool result, once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error, once failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

impl TaskRecord {
    /// How long the store keeps the record from now: its TTL once it has ended, its TTL
    /// and [`RUNNING_GRACE`] while it runs.
    pub fn keep_for(&self) -> Duration {
        let ttl = Duration::from_millis(self.ttl_ms);
        match self.state.is_terminal() {
            true => ttl,
            false => ttl + RUNNING_GRACE,
        }
    }

    /// Marks the record changed now.
    pub fn touch(&mut self) {
        self.last_updated_at = crate::text::iso8601(std::time::SystemTime::now());
    }
}

/// A change a [`TaskStore`] applies to a record (maybe more than once, on the record as
/// stored each time, where it retries a write another replica got in first).
pub type TaskChange<'a> = &'a (dyn Fn(&mut TaskRecord) + Send + Sync);

/// Where task records live. Implementations keep a record for [`TaskRecord::keep_for`]
/// from its last write, and apply [`update`](TaskStore::update)s atomically.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task; returns once any replica sharing the store can read it.
    fn create<'a>(&'a self, record: &'a TaskRecord) -> StoreFuture<'a, ()>;

    /// The task `id`; `None` when unknown or expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies `change` to the task `id` and returns the record as stored after it;
    /// `None` when unknown or expired.
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Whether other processes share the store: a replica running a task then reads it
    /// now and then for answers and cancellations that reached another replica.
    fn is_shared(&self) -> bool {
        false
    }
}

/// A [`TaskStore`] in this process: tasks live as long as it does (and their TTL).
#[derive(Default)]
pub struct MemoryTaskStore {
    records: Mutex<HashMap<String, (TaskRecord, Instant)>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTaskStore::default()
    }

    /// How many tasks it holds (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, record: &'a TaskRecord) -> StoreFuture<'a, ()> {
        let now = Instant::now();
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        // Expired records go as new ones come.
        records.retain(|_, (_, expires)| *expires > now);
        records.insert(record.id.clone(), (record.clone(), now + record.keep_for()));
        Box::pin(std::future::ready(Ok(())))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        let found = records
            .get(id)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(record, _)| record.clone());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = Instant::now();
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        let changed = match records.get_mut(id) {
            Some((record, expires)) if *expires > now => {
                change(record);
                *expires = now + record.keep_for();
                Some(record.clone())
            }
            _ => None,
        };
        Box::pin(std::future::ready(Ok(changed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.to_owned(),
            subject: None,
            tool: "report".to_owned(),
            state: TaskState::Working,
            status_message: None,
            created_at: "2026-11-28T00:00:00.000Z".to_owned(),
            last_updated_at: "2026-11-28T00:00:00.000Z".to_owned(),
            ttl_ms,
            poll_interval_ms: 1000,
            input_requests: BTreeMap::new(),
            answers: BTreeMap::new(),
            cancel_requested: false,
            result: None,
            error: None,
        }
    }

    #[tokio::test]
    async fn a_finished_task_expires_after_its_ttl_and_a_running_one_does_not() {
        let store = MemoryTaskStore::new();
        store.create(&record("a", 30)).await.unwrap();
        store.create(&record("b", 30)).await.unwrap();
        let finish = |record: &mut TaskRecord| record.state = TaskState::Completed;
        store.update("a", &finish).await.unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(store.get("a").await.unwrap().is_none(), "expired");
        assert!(store.update("a", &finish).await.unwrap().is_none());
        let running = store.get("b").await.unwrap().unwrap();
        assert_eq!(running.state, TaskState::Working);
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let mut original = record("c", 1000);
        original
            .input_requests
            .insert("k".into(), serde_json::json!({"method": "roots/list"}));
        let json = serde_json::to_string(&original).unwrap();
        assert!(json.contains(r#""state":"working""#));
        assert_eq!(serde_json::from_str::<TaskRecord>(&json).unwrap(), original);
    }
}
