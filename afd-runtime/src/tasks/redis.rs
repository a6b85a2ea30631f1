//! Task records in Redis, shared by every replica: each task is a hash holding a version
//! and the record as JSON, expired by Redis (`PEXPIRE` of the record's
//! [`keep_for`](super::TaskRecord::keep_for) on every write), and changed by optimistic
//! retry (a Lua script writes only over the version it read), as sessions are.

use redis::Script;
use redis::aio::ConnectionManager;

use super::{StoreFuture, TaskChange, TaskRecord, TaskStore, TaskStoreError};
use crate::contexts::RedisSessionStore;
use crate::contexts::redis::{MAX_ATTEMPTS, SWAP, unavailable};

/// Creates a task: version 1 and the record, with its expiry.
const CREATE: &str = r"
redis.call('HSET', KEYS[1], 'v', '1', 's', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// A [`TaskStore`] in Redis (feature `redis`), on the connection of a
/// [`RedisSessionStore`]: tasks are kept where the sessions are, under `afd:task:`.
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: ConnectionManager,
    prefix: String,
    create: std::sync::Arc<Script>,
    swap: std::sync::Arc<Script>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// Tasks in the Redis `sessions` is connected to.
    pub fn beside(sessions: &RedisSessionStore) -> Self {
        RedisTaskStore {
            connection: sessions.connection(),
            prefix: "afd:task:".to_owned(),
            create: std::sync::Arc::new(Script::new(CREATE)),
            swap: std::sync::Arc::new(Script::new(SWAP)),
        }
    }

    /// Keys start with `prefix` instead of `afd:task:` (separate apps on one Redis).
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    async fn read(&self, id: &str) -> Result<Option<(String, TaskRecord)>, TaskStoreError> {
        let mut connection = self.connection.clone();
        let (version, json): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.key(id))
            .arg("v")
            .arg("s")
            .query_async(&mut connection)
            .await
            .map_err(|error| unavailable(&error))?;
        match (version, json) {
            (Some(version), Some(json)) => {
                let record = serde_json::from_str(&json).map_err(|error| {
                    TaskStoreError::new(format!(
                        "task '{id}' holds a record this version cannot read: {error}"
                    ))
                })?;
                Ok(Some((version, record)))
            }
            _ => Ok(None),
        }
    }
}

fn encode(record: &TaskRecord) -> Result<String, TaskStoreError> {
    serde_json::to_string(record)
        .map_err(|error| TaskStoreError::new(format!("a task record does not serialise: {error}")))
}

fn millis(record: &TaskRecord) -> u64 {
    u64::try_from(record.keep_for().as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(&'a self, record: &'a TaskRecord) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let json = encode(record)?;
            let mut connection = self.connection.clone();
            let _: i64 = self
                .create
                .key(self.key(&record.id))
                .arg(json)
                .arg(millis(record))
                .invoke_async(&mut connection)
                .await
                .map_err(|error| unavailable(&error))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move { Ok(self.read(id).await?.map(|(_, record)| record)) })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            for _ in 0..MAX_ATTEMPTS {
                let Some((version, mut record)) = self.read(id).await? else {
                    return Ok(None);
                };
                change(&mut record);
                let json = encode(&record)?;
                let mut connection = self.connection.clone();
                let written: i64 = self
                    .swap
                    .key(self.key(id))
                    .arg(version)
                    .arg(json)
                    .arg(millis(&record))
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| unavailable(&error))?;
                match written {
                    1 => return Ok(Some(record)),
                    -1 => return Ok(None),
                    // Another replica wrote first: apply the change again to what it wrote.
                    _ => {}
                }
            }
            Err(TaskStoreError::new(format!(
                "task '{id}' kept changing under {MAX_ATTEMPTS} attempts at one update"
            )))
        })
    }

    fn is_shared(&self) -> bool {
        true
    }
}
