//! The PostgreSQL store of usage statistics, shared by replicas: its schema, connecting
//! and migrating, and one round of the background writer (`writer.rs`).
//!
//! The tables (created at start, or migrated; the version in `afd_usage_schema`):
//!
//! - `afd_command_usage(command, calls, successes, last_used_ms, sessions)`;
//! - `afd_transitions(from_command, to_command, count)`;
//! - `afd_co_occurrence(command_a, command_b, count)`, with `command_a < command_b`;
//! - `afd_command_access(command, level, count)`;
//! - `afd_usage_batches(writer, seq, written_at)`: the last batch each writer wrote;
//! - `afd_usage_version(version)`: one row, counting the batches written.
//!
//! The writer's thread, with a tokio runtime of the store's own, writes what changed in one
//! transaction every interval (adding deltas, so every replica's counts add up), then reads the tables
//! back, so that suggestions reflect the traffic of every replica. It reads them only when
//! another writer wrote since it last read (the version counts every batch): an idle
//! cluster, or a single writer, reads one row a round. A lost connection is made again at
//! the next write; what changed meanwhile is kept and written then.
//!
//! Adding is not idempotent, and a write can fail after PostgreSQL committed it (the
//! connection drops, or the answer to `COMMIT` comes too late). So each batch carries the
//! writer's id and a sequence number, recorded in `afd_usage_batches` in the batch's own
//! transaction: a batch whose outcome is unknown is sent again as it was, under the same
//! number, before anything newer, and is added only if its number is not recorded yet.

use std::time::Duration;

use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, NoTls, Socket};
#[cfg(feature = "postgres-tls")]
use tokio_postgres_rustls::MakeRustlsConnect;

use super::model::{Delta, Snapshot, from_millis};
use super::writer::{self, Store};
use super::{AccessLevel, CommandStats, Shared, State, UsageError};
pub(super) use crate::text::redact_url as redact;
use crate::text::take_url_param;
use crate::tls::{Roots, Verify};

/// The schema this code writes.
const SCHEMA_VERSION: i32 = 2;
/// How long connecting (and each write) may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How long a flush waits for the writer's answer.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(15);
/// Taken while migrating, so replicas starting together create the tables once.
const MIGRATION_LOCK: i64 = 0x0afd_0001;

const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS afd_command_usage (
    command TEXT PRIMARY KEY,
    calls BIGINT NOT NULL DEFAULT 0,
    successes BIGINT NOT NULL DEFAULT 0,
    last_used_ms BIGINT,
    sessions BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS afd_transitions (
    from_command TEXT NOT NULL,
    to_command TEXT NOT NULL,
    count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (from_command, to_command)
);
CREATE TABLE IF NOT EXISTS afd_co_occurrence (
    command_a TEXT NOT NULL,
    command_b TEXT NOT NULL,
    count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (command_a, command_b)
);
CREATE TABLE IF NOT EXISTS afd_command_access (
    command TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (command, level)
);
";

/// Version 2: the batches each writer has written, so that a batch sent again after a
/// failure whose outcome was unknown is not added twice (a writer's older rows are deleted
/// as it writes; rows of writers gone for a day are deleted by any writer), and the version
/// every batch counts up, so that a writer reads the tables only when another wrote.
const SCHEMA_V2: &str = "
CREATE TABLE IF NOT EXISTS afd_usage_batches (
    writer TEXT NOT NULL,
    seq BIGINT NOT NULL,
    written_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (writer, seq)
);
CREATE TABLE IF NOT EXISTS afd_usage_version (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    version BIGINT NOT NULL
);
INSERT INTO afd_usage_version (version) VALUES (0) ON CONFLICT DO NOTHING;
";

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("cannot start a tokio runtime: {0}")]
    Runtime(#[from] std::io::Error),
    #[error("{0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("PostgreSQL did not answer within {TIMEOUT:?}")]
    Timeout,
    #[error("the store has schema version {0}, newer than this program's {SCHEMA_VERSION}")]
    NewerSchema(i32),
    #[error("TLS: {0}")]
    Tls(String),
}

fn to_i64(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

fn to_u64(count: i64) -> u64 {
    u64::try_from(count).unwrap_or(0)
}

/// Where the store connects and how: the URL as tokio-postgres reads it, and the TLS its
/// `sslmode` asks for (made once, when the store opens).
#[derive(Clone)]
pub(crate) struct Endpoint {
    url: String,
    #[cfg(feature = "postgres-tls")]
    tls: Option<MakeRustlsConnect>,
}

impl Endpoint {
    /// Reads libpq's `sslmode` and `sslrootcert` out of `url` (tokio-postgres knows neither
    /// `verify-ca`, `verify-full` nor `sslrootcert`):
    ///
    /// - `disable`, `allow`, `prefer`, or none: no TLS (this store does not try TLS on its
    ///   own; ask for it);
    /// - `require`: encrypted; the certificate is checked against `sslrootcert` when one is
    ///   given (as `verify-ca`), else not at all, as libpq does;
    /// - `verify-ca`: signed by `sslrootcert` (or the system's roots); `verify-full`: that,
    ///   and it names the host;
    /// - `sslrootcert` without `sslmode`: `verify-full`; `sslrootcert=system`: the system's
    ///   roots.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, OpenError> {
        let verify = verification(url)?;
        let (url, _) = take_url_param(url, "sslmode");
        let (url, _) = take_url_param(&url, "sslrootcert");
        let separator = if url.contains('?') { '&' } else { '?' };
        let mode = if verify.is_some() {
            "require"
        } else {
            "disable"
        };
        let url = format!("{url}{separator}sslmode={mode}");
        #[cfg(feature = "postgres-tls")]
        {
            let tls = match verify {
                Some(verify) => Some(MakeRustlsConnect::new(
                    crate::tls::client_config(&verify).map_err(OpenError::Tls)?,
                )),
                None => None,
            };
            Ok(Endpoint { url, tls })
        }
        #[cfg(not(feature = "postgres-tls"))]
        match verify {
            Some(_) => Err(OpenError::Tls(
                "the URL asks for TLS, and this build has none: enable afd-runtime's `postgres-tls` feature".into(),
            )),
            None => Ok(Endpoint { url }),
        }
    }

    pub(crate) async fn connect(&self) -> Result<Client, OpenError> {
        #[cfg(feature = "postgres-tls")]
        if let Some(tls) = &self.tls {
            return connect_with(&self.url, tls.clone()).await;
        }
        connect_with(&self.url, NoTls).await
    }
}

/// A connection of its own for readiness checks (`SELECT 1`), opened on first use and
/// again once it closes; the writer's connection is left to the writer.
pub(super) struct Probe {
    endpoint: Endpoint,
    client: tokio::sync::Mutex<Option<Client>>,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe").finish_non_exhaustive()
    }
}

impl Probe {
    pub(super) fn new(url: &str) -> Result<Probe, OpenError> {
        Ok(Probe {
            endpoint: Endpoint::parse(url)?,
            client: tokio::sync::Mutex::default(),
        })
    }

    /// `SELECT 1` on the probe's connection.
    pub(super) async fn ping(&self) -> Result<(), String> {
        let mut client = self.client.lock().await;
        if client.as_ref().is_none_or(Client::is_closed) {
            *client = None;
            let connected = self
                .endpoint
                .connect()
                .await
                .map_err(|error| format!("postgres: {error}"))?;
            *client = Some(connected);
        }
        let Some(connected) = client.as_ref() else {
            return Err("postgres: not connected".to_owned());
        };
        let outcome = match tokio::time::timeout(TIMEOUT, connected.simple_query("SELECT 1")).await
        {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(error)) => format!("postgres: {error}"),
            Err(_) => format!("postgres: no answer to SELECT 1 within {TIMEOUT:?}"),
        };
        *client = None;
        Err(outcome)
    }
}

/// What `url`'s `sslmode` and `sslrootcert` ask to check; `None`: no TLS.
fn verification(url: &str) -> Result<Option<Verify>, OpenError> {
    let (_, mode) = take_url_param(url, "sslmode");
    let (_, root) = take_url_param(url, "sslrootcert");
    let roots = |root: Option<String>| match root.as_deref() {
        None | Some("system") => Roots::System,
        Some(_) => Roots::File(root.unwrap_or_default()),
    };
    Ok(match (mode.as_deref(), root) {
        (Some("disable" | "allow" | "prefer") | None, None) | (Some("disable"), Some(_)) => None,
        (Some("allow" | "prefer"), Some(_)) => {
            return Err(OpenError::Tls(
                "sslrootcert is given with an sslmode that does not ask for TLS: use sslmode=verify-full (or require, verify-ca)".into(),
            ));
        }
        (Some("require"), None) => Some(Verify::Nothing),
        (Some("require" | "verify-ca"), root) => Some(Verify::Chain(roots(root))),
        (Some("verify-full") | None, root) => Some(Verify::Full(roots(root))),
        (Some(other), _) => {
            return Err(OpenError::Tls(format!(
                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
            )));
        }
    })
}

async fn connect_with<T>(url: &str, tls: T) -> Result<Client, OpenError>
where
    T: MakeTlsConnect<Socket>,
    T::Stream: Send + 'static,
{
    let (client, connection) = tokio::time::timeout(TIMEOUT, tokio_postgres::connect(url, tls))
        .await
        .map_err(|_| OpenError::Timeout)??;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "usage statistics: the PostgreSQL connection closed");
        }
    });
    Ok(client)
}

/// Brings the schema to [`SCHEMA_VERSION`] under an advisory lock.
async fn migrate(client: &mut Client) -> Result<(), OpenError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS afd_usage_schema (version INTEGER NOT NULL)")
        .await?;
    let version: i32 = tx
        .query_opt("SELECT max(version) FROM afd_usage_schema", &[])
        .await?
        .and_then(|row| row.get::<_, Option<i32>>(0))
        .unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(OpenError::NewerSchema(version));
    }
    if version < 1 {
        tx.batch_execute(SCHEMA_V1).await?;
    }
    if version < 2 {
        tx.batch_execute(SCHEMA_V2).await?;
    }
    // Later versions: `if version < 3 { ... }`, each step in this transaction.
    if version != SCHEMA_VERSION {
        tx.execute("DELETE FROM afd_usage_schema", &[]).await?;
        tx.execute(
            "INSERT INTO afd_usage_schema (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The version: how many batches have been written.
async fn version(client: &Client) -> Result<i64, tokio_postgres::Error> {
    Ok(client
        .query_one("SELECT version FROM afd_usage_version", &[])
        .await?
        .get(0))
}

/// Every count the tables hold, and the version they hold them at (one snapshot).
async fn load(client: &mut Client) -> Result<(Snapshot, i64), tokio_postgres::Error> {
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?;
    let version = tx
        .query_one("SELECT version FROM afd_usage_version", &[])
        .await?
        .get(0);
    let client = &tx;
    let mut snapshot = Snapshot::default();
    for row in client
        .query(
            "SELECT command, calls, successes, last_used_ms, sessions FROM afd_command_usage",
            &[],
        )
        .await?
    {
        let last: Option<i64> = row.get(3);
        snapshot.commands.push((
            row.get(0),
            CommandStats {
                calls: to_u64(row.get(1)),
                successes: to_u64(row.get(2)),
                last_used: last.map(from_millis),
                sessions: to_u64(row.get(4)),
            },
        ));
    }
    for row in client
        .query(
            "SELECT from_command, to_command, count FROM afd_transitions",
            &[],
        )
        .await?
    {
        snapshot
            .transitions
            .push((row.get(0), row.get(1), to_u64(row.get(2))));
    }
    for row in client
        .query(
            "SELECT command_a, command_b, count FROM afd_co_occurrence",
            &[],
        )
        .await?
    {
        snapshot
            .co_occurrence
            .push((row.get(0), row.get(1), to_u64(row.get(2))));
    }
    for row in client
        .query("SELECT command, level, count FROM afd_command_access", &[])
        .await?
    {
        let level: String = row.get(1);
        // A level a later version added is skipped, not an error.
        if let Some(level) = AccessLevel::from_name(&level) {
            snapshot
                .accesses
                .push((row.get(0), level, to_u64(row.get(2))));
        }
    }
    tx.commit().await?;
    Ok((snapshot, version))
}

/// One writer's batch of counts to add: the unit that is written once.
#[derive(Debug)]
struct Batch {
    /// The writer's sequence number of this batch.
    seq: i64,
    delta: Delta,
}

/// Adds `batch` to the stored counts, in one transaction, unless `writer` recorded it
/// already (a batch sent again after a failed round that had in fact committed). The
/// version the batch made, or `None` when it was recorded already.
async fn write(
    client: &mut Client,
    writer: &str,
    batch: &Batch,
) -> Result<Option<i64>, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    let fresh = tx
        .execute(
            "INSERT INTO afd_usage_batches (writer, seq) VALUES ($1, $2)
             ON CONFLICT (writer, seq) DO NOTHING",
            &[&writer, &batch.seq],
        )
        .await?;
    // This writer's earlier batches are settled (it sends a batch again until it is known
    // written), and writers silent for a day are gone.
    tx.execute(
        "DELETE FROM afd_usage_batches
         WHERE (writer = $1 AND seq < $2) OR written_at < now() - interval '1 day'",
        &[&writer, &batch.seq],
    )
    .await?;
    if fresh == 0 {
        tx.commit().await?;
        return Ok(None);
    }
    let version: i64 = tx
        .query_one(
            "UPDATE afd_usage_version SET version = version + 1 RETURNING version",
            &[],
        )
        .await?
        .get(0);
    let delta = &batch.delta;
    let commands = tx
        .prepare(
            "INSERT INTO afd_command_usage (command, calls, successes, last_used_ms, sessions)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (command) DO UPDATE SET
                 calls = afd_command_usage.calls + excluded.calls,
                 successes = afd_command_usage.successes + excluded.successes,
                 last_used_ms = greatest(afd_command_usage.last_used_ms, excluded.last_used_ms),
                 sessions = afd_command_usage.sessions + excluded.sessions",
        )
        .await?;
    let accesses = tx
        .prepare(
            "INSERT INTO afd_command_access (command, level, count) VALUES ($1, $2, $3)
             ON CONFLICT (command, level) DO UPDATE SET
                 count = afd_command_access.count + excluded.count",
        )
        .await?;
    let transitions = tx
        .prepare(
            "INSERT INTO afd_transitions (from_command, to_command, count) VALUES ($1, $2, $3)
             ON CONFLICT (from_command, to_command) DO UPDATE SET
                 count = afd_transitions.count + excluded.count",
        )
        .await?;
    let co = tx
        .prepare(
            "INSERT INTO afd_co_occurrence (command_a, command_b, count) VALUES ($1, $2, $3)
             ON CONFLICT (command_a, command_b) DO UPDATE SET
                 count = afd_co_occurrence.count + excluded.count",
        )
        .await?;
    for (command, (calls, successes, last, sessions)) in &delta.commands {
        // A command only viewed or only counted for a session has no call time.
        let last = (*last > 0).then_some(*last);
        let (calls, successes, sessions) = (to_i64(*calls), to_i64(*successes), to_i64(*sessions));
        tx.execute(&commands, &[command, &calls, &successes, &last, &sessions])
            .await?;
    }
    for ((command, level), count) in &delta.accesses {
        tx.execute(&accesses, &[command, &level.as_str(), &to_i64(*count)])
            .await?;
    }
    for ((from, to), count) in &delta.transitions {
        tx.execute(&transitions, &[from, to, &to_i64(*count)])
            .await?;
    }
    for ((a, b), count) in &delta.co_occurrence {
        tx.execute(&co, &[a, b, &to_i64(*count)]).await?;
    }
    tx.commit().await?;
    Ok(Some(version))
}

/// The connection to the shared database, with the runtime that drives it.
pub(super) struct PostgresStore {
    runtime: tokio::runtime::Runtime,
    endpoint: Endpoint,
    /// None after a failure: the next round connects again.
    client: Option<Client>,
    /// Failed rounds in a row.
    failures: u64,
    /// This writer's id in `afd_usage_batches`.
    writer: String,
    /// The sequence number of the next batch.
    next_seq: i64,
    /// The batch of a failed round, which may have been written: sent again, alone, before
    /// any newer counts.
    unsettled: Option<Batch>,
    /// The version the in-memory counts reflect (read with them, or made by this writer's
    /// own batch when no other came between).
    seen: i64,
}

impl PostgresStore {
    /// Connects to `url`, migrates the schema and loads what the database holds.
    pub(super) fn open(url: String) -> Result<(PostgresStore, Snapshot), OpenError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let endpoint = Endpoint::parse(&url)?;
        let (client, snapshot, seen) = runtime.block_on(open(&endpoint))?;
        let store = PostgresStore {
            runtime,
            endpoint,
            client: Some(client),
            failures: 0,
            writer: crate::random::hex128(),
            next_seq: 1,
            unsettled: None,
            seen,
        };
        Ok((store, snapshot))
    }
}

impl Store for PostgresStore {
    const THREAD: &'static str = "afd-usage-postgres";
    const FLUSH_TIMEOUT: Duration = FLUSH_TIMEOUT;

    fn sync(&mut self, shared: &Shared) -> Result<(), UsageError> {
        let batch = match self.unsettled.take() {
            Some(batch) => Some(batch),
            None => {
                let delta = match shared.lock().pending.as_mut() {
                    Some(pending) => std::mem::take(pending),
                    None => return Ok(()),
                };
                (!delta.is_empty()).then(|| {
                    self.next_seq += 1;
                    Batch {
                        seq: self.next_seq - 1,
                        delta,
                    }
                })
            }
        };
        let (outcome, unsettled) = self.runtime.block_on(sync(
            &self.endpoint,
            &mut self.client,
            &self.writer,
            &mut self.seen,
            shared,
            batch,
        ));
        self.unsettled = unsettled;
        match outcome {
            Ok(()) => {
                self.failures = 0;
                Ok(())
            }
            Err(error) => Err(writer::failed(&mut self.failures, error)),
        }
    }
}

async fn open(endpoint: &Endpoint) -> Result<(Client, Snapshot, i64), OpenError> {
    let mut client = endpoint.connect().await?;
    tokio::time::timeout(TIMEOUT, migrate(&mut client))
        .await
        .map_err(|_| OpenError::Timeout)??;
    let (snapshot, version) = tokio::time::timeout(TIMEOUT, load(&mut client))
        .await
        .map_err(|_| OpenError::Timeout)??;
    Ok((client, snapshot, version))
}

/// Writes `batch` (if any), then reads back every replica's counts if another writer wrote
/// since the counts in memory were read (`seen`). Returns the outcome, and the batch again
/// when it is not known to be written (to be sent as it is at the next round; the
/// connection is dropped and made again then).
async fn sync(
    endpoint: &Endpoint,
    client: &mut Option<Client>,
    writer: &str,
    seen: &mut i64,
    shared: &Shared,
    batch: Option<Batch>,
) -> (Result<(), String>, Option<Batch>) {
    if client.as_ref().is_none_or(Client::is_closed) {
        *client = match tokio::time::timeout(TIMEOUT, endpoint.connect()).await {
            Ok(Ok(connected)) => Some(connected),
            failed => {
                let error = match failed {
                    Ok(Err(error)) => error.to_string(),
                    _ => OpenError::Timeout.to_string(),
                };
                // Not connected: nothing of the batch reached the database.
                return (Err(error), batch);
            }
        };
    }
    let Some(connected) = client.as_mut() else {
        return (Err(UsageError::WriterStopped.to_string()), batch);
    };
    // `None`: nothing to write; `Some(None)`: written before; `Some(Some(v))`: made `v`.
    let mut made = None;
    if let Some(batch) = batch {
        match tokio::time::timeout(TIMEOUT, write(connected, writer, &batch)).await {
            Ok(Ok(version)) => made = Some(version),
            failed => {
                let error = match failed {
                    Ok(Err(error)) => error.to_string(),
                    _ => OpenError::Timeout.to_string(),
                };
                *client = None;
                return (Err(error), Some(batch));
            }
        }
    }
    // Whether the counts in memory are still what the tables hold (plus what is pending):
    // no batch since they were read, or only this writer's own, just written.
    let current = match tokio::time::timeout(TIMEOUT, version(connected)).await {
        Ok(Ok(now)) => match made {
            None => now == *seen,
            Some(Some(made)) => made == *seen + 1 && now == made,
            Some(None) => false,
        }
        .then_some(now),
        _ => None,
    };
    if let Some(now) = current {
        *seen = now;
        return (Ok(()), None);
    }
    match tokio::time::timeout(TIMEOUT, load(connected)).await {
        Ok(Ok((snapshot, version))) => {
            let mut state = shared.lock();
            let State { model, pending } = &mut *state;
            if let Some(pending) = pending.as_ref() {
                model.replace(snapshot, pending);
            }
            *seen = version;
            (Ok(()), None)
        }
        // Written, but not read back: the next round reads.
        failed => {
            *client = None;
            let error = match failed {
                Ok(Err(error)) => error.to_string(),
                _ => OpenError::Timeout.to_string(),
            };
            (Err(error), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Endpoint, OpenError, verification};
    use crate::text::redact_url as redact;
    use crate::tls::{Roots, Verify};

    #[test]
    fn sslmode_and_sslrootcert_ask_what_libpq_would() {
        let verify = |params: &str| {
            verification(&format!("postgres://u:p@db/app?{params}")).map_err(|e| e.to_string())
        };
        let file = || Roots::File("/ca.pem".into());
        assert_eq!(verify(""), Ok(None));
        assert_eq!(verify("sslmode=prefer"), Ok(None));
        assert_eq!(verify("sslmode=disable&sslrootcert=/ca.pem"), Ok(None));
        assert_eq!(verify("sslmode=require"), Ok(Some(Verify::Nothing)));
        assert_eq!(
            verify("sslmode=require&sslrootcert=/ca.pem"),
            Ok(Some(Verify::Chain(file())))
        );
        assert_eq!(
            verify("sslmode=verify-ca"),
            Ok(Some(Verify::Chain(Roots::System)))
        );
        assert_eq!(
            verify("sslmode=verify-full&sslrootcert=system"),
            Ok(Some(Verify::Full(Roots::System)))
        );
        assert_eq!(
            verify("sslrootcert=/ca.pem"),
            Ok(Some(Verify::Full(file())))
        );
        let error = verify("sslmode=verify-everything").unwrap_err();
        assert!(error.contains("verify-everything is not one of"), "{error}");
        let error = verify("sslmode=prefer&sslrootcert=/ca.pem").unwrap_err();
        assert!(error.contains("sslmode=verify-full"), "{error}");
    }

    #[test]
    fn the_driver_gets_the_url_without_what_it_cannot_read() {
        let endpoint = Endpoint::parse("postgres://u:p@db/app?application_name=x").unwrap();
        assert_eq!(
            endpoint.url,
            "postgres://u:p@db/app?application_name=x&sslmode=disable"
        );
        #[cfg(not(feature = "postgres-tls"))]
        assert!(matches!(
            Endpoint::parse("postgres://db/app?sslmode=require"),
            Err(OpenError::Tls(why)) if why.contains("`postgres-tls`")
        ));
        #[cfg(feature = "postgres-tls")]
        {
            let endpoint = Endpoint::parse("postgres://db/app?sslmode=require").unwrap();
            assert_eq!(endpoint.url, "postgres://db/app?sslmode=require");
            let missing = Endpoint::parse("postgres://db/app?sslrootcert=/no/such/ca.pem");
            assert!(matches!(missing, Err(OpenError::Tls(why)) if why.contains("/no/such/ca.pem")));
        }
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(
            redact("postgres://afd:secret@127.0.0.1:5432/afd"),
            "postgres://afd:***@127.0.0.1:5432/afd"
        );
    }
}
