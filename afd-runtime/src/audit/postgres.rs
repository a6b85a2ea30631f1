//! The audit trail in PostgreSQL (feature `postgres`): events are queued by the request
//! that decided them and written by one background task, in batches, into the table
//! `afd_audit`. A batch that fails is kept and written again once the database answers;
//! [`Audit::flush`](super::Audit::flush) waits until every event queued is written.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio_postgres::Client;

use super::AuditEvent;
use crate::usage::postgres::Endpoint;

/// The table, created if missing.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS afd_audit (
    id BIGSERIAL PRIMARY KEY,
    time TIMESTAMPTZ NOT NULL,
    decision TEXT NOT NULL,
    subject TEXT,
    client_id TEXT,
    method TEXT,
    tool TEXT,
    command TEXT,
    status INTEGER,
    error TEXT,
    duration_ms DOUBLE PRECISION NOT NULL,
    request_id TEXT,
    arguments JSONB
)";

const INSERT: &str = "INSERT INTO afd_audit (time, decision, subject, client_id, method, tool, \
    command, status, error, duration_ms, request_id, arguments) VALUES ($1::text::timestamptz, \
    $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text::jsonb)";

/// The most events one transaction writes.
const BATCH: usize = 500;

/// The sink: a queue to the writer task, and how many events it holds.
pub(super) struct PostgresSink {
    queue: mpsc::UnboundedSender<AuditEvent>,
    pending: Arc<AtomicUsize>,
    written: Arc<Notify>,
}

impl PostgresSink {
    /// Connects to `url` (libpq's `sslmode` and `sslrootcert` read as for usage
    /// statistics), creates the table, and starts the writer.
    pub(super) async fn open(url: &str) -> Result<PostgresSink, String> {
        let endpoint = Endpoint::parse(url).map_err(|error| error.to_string())?;
        let client = endpoint
            .connect()
            .await
            .map_err(|error| error.to_string())?;
        client
            .batch_execute(SCHEMA)
            .await
            .map_err(|error| error.to_string())?;
        let (queue, events) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        let written = Arc::new(Notify::new());
        tokio::spawn(write(
            endpoint,
            client,
            events,
            pending.clone(),
            written.clone(),
        ));
        Ok(PostgresSink {
            queue,
            pending,
            written,
        })
    }

    pub(super) fn record(&self, event: &AuditEvent) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.queue.send(event.clone()).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            tracing::error!(
                "the audit trail's PostgreSQL writer has stopped; an event was not written"
            );
        }
    }

    /// Waits until every queued event is written.
    pub(super) async fn flush(&self) {
        loop {
            let written = self.written.notified();
            if self.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            written.await;
        }
    }
}

/// The writer: a batch at a time, kept and retried until the database takes it.
async fn write(
    endpoint: Endpoint,
    mut client: Client,
    mut events: mpsc::UnboundedReceiver<AuditEvent>,
    pending: Arc<AtomicUsize>,
    written: Arc<Notify>,
) {
    let mut batch: Vec<AuditEvent> = Vec::new();
    while let Some(first) = events.recv().await {
        batch.push(first);
        while batch.len() < BATCH {
            match events.try_recv() {
                Ok(event) => batch.push(event),
                Err(_) => break,
            }
        }
        let mut delay = Duration::from_millis(100);
        loop {
            match insert(&mut client, &batch).await {
                Ok(()) => break,
                Err(error) => {
                    tracing::warn!(%error, events = batch.len(), "could not write the audit trail to PostgreSQL; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                    if client.is_closed()
                        && let Ok(fresh) = endpoint.connect().await
                    {
                        client = fresh;
                    }
                }
            }
        }
        pending.fetch_sub(batch.len(), Ordering::SeqCst);
        batch.clear();
        written.notify_waiters();
    }
}

async fn insert(client: &mut Client, batch: &[AuditEvent]) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    let statement = tx.prepare(INSERT).await?;
    for event in batch {
        let decision = serde_json::to_value(event.decision)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        let status = event.status.map(i32::from);
        let arguments = event.arguments.as_ref().map(|value| value.to_string());
        tx.execute(
            &statement,
            &[
                &event.time,
                &decision,
                &event.subject,
                &event.client_id,
                &event.method,
                &event.tool,
                &event.command,
                &status,
                &event.error,
                &event.duration_ms,
                &event.request_id,
                &arguments,
            ],
        )
        .await?;
    }
    tx.commit().await
}
