//! Sessions in Redis, shared by every replica of a server: each session is a hash holding
//! a version and the state as JSON, expired by Redis when idle (its TTL refreshed on every
//! use), and changed by optimistic retry (a Lua script writes only over the version it
//! read), so concurrent requests of one session on different replicas lose no write.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::session::{SessionState, SessionStore, SessionStoreError, StoreFuture};
use crate::text::{redact_url as redact, take_url_param};

/// How long one Redis command may take before the call fails as unavailable.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting (or reconnecting) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Attempts at one update before giving up on a record (a session, a task) changed that
/// often concurrently.
pub(crate) const MAX_ATTEMPTS: usize = 64;

/// Reads a session and refreshes its idle timer: `[version, state]`, both nil when absent.
const GET: &str = r"
local r = redis.call('HMGET', KEYS[1], 'v', 's')
if r[1] then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return r
";

/// Writes a state over the version read: 1 written, 0 changed meanwhile, -1 gone. Every
/// record kept as a version and JSON in a hash (sessions, tasks) is changed with it.
pub(crate) const SWAP: &str = r"
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', tostring(tonumber(v) + 1), 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// Stores a state whatever was there, bumping the version.
const PUT: &str = r"
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
redis.call('HSET', KEYS[1], 'v', tostring(v + 1), 's', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return v + 1
";

/// Creates an empty session unless it exists; refreshes its idle timer either way.
const ENSURE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'v', '1', 's', ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

struct Scripts {
    get: Script,
    swap: Script,
    put: Script,
    ensure: Script,
}

/// A [`SessionStore`] in Redis (feature `redis`): every replica that connects to the same
/// Redis with the same key prefix sees the same sessions. Sessions expire after `idle`
/// without use, by Redis TTL. The connection reconnects by itself; while Redis cannot be
/// reached every operation fails with a [`SessionStoreError`], which callers turn into a
/// refused, retryable call.
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
/// use afd_runtime::contexts::RedisSessionStore;
/// use afd_runtime::{SessionConfig, Sessions};
///
/// # async fn run() -> Result<(), afd_runtime::contexts::SessionStoreError> {
/// let config = SessionConfig::default().idle_timeout(Duration::from_secs(1800));
/// let store = RedisSessionStore::connect("redis://127.0.0.1:6379", config.get_idle_timeout()).await?;
/// let sessions = Sessions::with_store(config, Arc::new(store));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisSessionStore {
    connection: ConnectionManager,
    prefix: String,
    /// The idle timeout in milliseconds, shared by clones (see `set_idle_timeout`).
    idle_ms: Arc<AtomicU64>,
    scripts: Arc<Scripts>,
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("prefix", &self.prefix)
            .field("idle_ms", &self.idle())
            .finish_non_exhaustive()
    }
}

/// The error of a Redis command that failed.
pub(crate) fn unavailable(error: &redis::RedisError) -> SessionStoreError {
    SessionStoreError::new(format!("redis: {error}"))
}

/// The client for `url`, with the CA its `ssl_ca_certs` names.
fn client(url: &str) -> Result<redis::Client, SessionStoreError> {
    let not_redis = |error: redis::RedisError| {
        SessionStoreError::new(format!("'{}' is not a Redis URL: {error}", redact(url)))
    };
    let (plain, ca) = take_url_param(url, "ssl_ca_certs");
    let tls = ["rediss://", "valkeys://"]
        .iter()
        .any(|scheme| plain.starts_with(scheme));
    if ca.is_some() && !tls {
        return Err(SessionStoreError::new(format!(
            "'{}' names a CA (ssl_ca_certs) without asking for TLS: use rediss://",
            redact(url)
        )));
    }
    #[cfg(feature = "redis-tls")]
    {
        if tls {
            crate::tls::install_default_provider();
        }
        if let Some(ca) = ca {
            let root_cert = crate::tls::read_ca_file(&ca).map_err(SessionStoreError::new)?;
            let certificates = redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(root_cert),
            };
            return redis::Client::build_with_tls(plain, certificates).map_err(not_redis);
        }
    }
    #[cfg(not(feature = "redis-tls"))]
    if tls {
        return Err(SessionStoreError::new(format!(
            "'{}' asks for TLS, and this build has none: enable afd-runtime's `redis-tls` feature",
            redact(url)
        )));
    }
    redis::Client::open(plain).map_err(not_redis)
}

impl RedisSessionStore {
    /// Connects to the Redis at `url` (`redis://[user:password@]host[:port][/db]`);
    /// sessions expire after `idle` without use (until a dispatcher that takes the store
    /// sets its own, see [`SessionStore::set_idle_timeout`]). Keys are prefixed
    /// `afd:session:`.
    ///
    /// With the feature `redis-tls`, `rediss://` connects over TLS, the server's
    /// certificate verified against the system's roots, or against the CA certificates in
    /// the PEM file named by `?ssl_ca_certs=PATH` (redis-py's name for it); the name in
    /// the certificate must match the host (`#insecure` at the end skips the checks).
    ///
    /// # Errors
    ///
    /// The URL is not a Redis URL, asks for TLS this build lacks, names a CA file that
    /// cannot be read, or Redis cannot be reached now.
    pub async fn connect(url: &str, idle: Duration) -> Result<Self, SessionStoreError> {
        let client = client(url)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let connection = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|error| {
                SessionStoreError::new(format!("cannot reach Redis at {}: {error}", redact(url)))
            })?;
        Ok(RedisSessionStore {
            connection,
            prefix: "afd:session:".to_owned(),
            idle_ms: Arc::new(AtomicU64::new(millis(idle))),
            scripts: Arc::new(Scripts {
                get: Script::new(GET),
                swap: Script::new(SWAP),
                put: Script::new(PUT),
                ensure: Script::new(ENSURE),
            }),
        })
    }

    /// Keys start with `prefix` instead of `afd:session:` (separate apps on one Redis).
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn key(&self, handle: &str) -> String {
        format!("{}{handle}", self.prefix)
    }

    /// The connection, for other state kept beside the sessions (tasks).
    pub(crate) fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    /// The idle timeout in milliseconds.
    fn idle(&self) -> u64 {
        self.idle_ms.load(Ordering::Relaxed)
    }

    async fn read(&self, handle: &str) -> Result<Option<(u64, SessionState)>, SessionStoreError> {
        let mut connection = self.connection.clone();
        let (version, state): (Option<u64>, Option<String>) = self
            .scripts
            .get
            .key(self.key(handle))
            .arg(self.idle())
            .invoke_async(&mut connection)
            .await
            .map_err(|error| unavailable(&error))?;
        match (version, state) {
            (Some(version), Some(state)) => {
                let state = serde_json::from_str(&state).map_err(|error| {
                    SessionStoreError::new(format!(
                        "session '{handle}' holds a state this version cannot read: {error}"
                    ))
                })?;
                Ok(Some((version, state)))
            }
            _ => Ok(None),
        }
    }

    /// Runs `script` (PUT or ENSURE) on `handle` with `state` and the idle timeout; the
    /// script's numeric answer (a version, or 1) is not needed.
    async fn write(
        &self,
        script: &Script,
        handle: &str,
        state: &SessionState,
    ) -> Result<(), SessionStoreError> {
        let json = encode(state)?;
        let mut connection = self.connection.clone();
        let _: i64 = script
            .key(self.key(handle))
            .arg(json)
            .arg(self.idle())
            .invoke_async(&mut connection)
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(())
    }
}

fn encode(state: &SessionState) -> Result<String, SessionStoreError> {
    serde_json::to_string(state)
        .map_err(|error| SessionStoreError::new(format!("cannot encode a session: {error}")))
}

/// An idle timeout as Redis's `PEXPIRE` takes it (at least 1 ms).
fn millis(idle: Duration) -> u64 {
    u64::try_from(idle.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    fn set_idle_timeout(&self, idle: Duration) {
        self.idle_ms.store(millis(idle), Ordering::Relaxed);
    }

    fn get<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, Option<Arc<SessionState>>> {
        Box::pin(async move { Ok(self.read(handle).await?.map(|(_, state)| Arc::new(state))) })
    }

    fn put<'a>(&'a self, handle: &'a str, state: Arc<SessionState>) -> StoreFuture<'a, ()> {
        Box::pin(async move { self.write(&self.scripts.put, handle, &state).await })
    }

    fn ensure<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.write(&self.scripts.ensure, handle, &SessionState::default())
                .await
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let _: String = redis::cmd("PING")
                .query_async(&mut connection)
                .await
                .map_err(|error| unavailable(&error))?;
            Ok(())
        })
    }

    fn remove<'a>(&'a self, handle: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let removed: u64 = redis::cmd("DEL")
                .arg(self.key(handle))
                .query_async(&mut connection)
                .await
                .map_err(|error| unavailable(&error))?;
            Ok(removed > 0)
        })
    }

    fn update<'a>(
        &'a self,
        handle: &'a str,
        change: &'a mut (dyn FnMut(&mut SessionState) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            for _ in 0..MAX_ATTEMPTS {
                let Some((version, mut state)) = self.read(handle).await? else {
                    return Ok(false);
                };
                change(&mut state);
                let mut connection = self.connection.clone();
                let written: i64 = self
                    .scripts
                    .swap
                    .key(self.key(handle))
                    .arg(version)
                    .arg(encode(&state)?)
                    .arg(self.idle())
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| unavailable(&error))?;
                match written {
                    1 => return Ok(true),
                    -1 => return Ok(false),
                    // Another request changed the session in between: read it again.
                    _ => tokio::task::yield_now().await,
                }
            }
            Err(SessionStoreError::new(format!(
                "session '{handle}' changed {MAX_ATTEMPTS} times while one update was retried"
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::text::redact_url as redact;

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(
            redact("redis://app:secret@10.0.0.1:6379/0"),
            "redis://app:***@10.0.0.1:6379/0"
        );
        assert_eq!(redact("redis://127.0.0.1"), "redis://127.0.0.1");
    }

    #[test]
    fn a_tls_url_says_what_it_needs() {
        let error = super::client("redis://h:6379?ssl_ca_certs=/ca.pem").unwrap_err();
        assert!(error.message().contains("rediss://"), "{error}");
        #[cfg(not(feature = "redis-tls"))]
        {
            let error = super::client("rediss://app:pw@h:6380").unwrap_err();
            assert!(error.message().contains("`redis-tls`"), "{error}");
            assert!(!error.message().contains("pw"), "{error}");
        }
        #[cfg(feature = "redis-tls")]
        {
            assert!(super::client("rediss://h:6380").is_ok());
            let error = super::client("rediss://h:6380?ssl_ca_certs=/no/ca.pem").unwrap_err();
            assert!(error.message().contains("/no/ca.pem"), "{error}");
        }
    }
}
