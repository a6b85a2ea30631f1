//! The audit trail: one [`AuditEvent`] per decision a server makes about a request (a
//! call allowed or failed, a request refused for its token or its scopes, a message
//! refused as malformed), with who asked, what, the outcome and how long it took. Never
//! the token; the arguments only when the operator opts in, with the fields it names
//! redacted.
//!
//! Events go to `tracing` under the target [`AUDIT_TARGET`] at `INFO` (so any subscriber
//! can route them; `RUST_LOG=afd::audit=info` shows them), with [`Audit::to_file`] to a
//! file as JSON lines, and with `Audit::to_postgres` (feature `postgres`) to the table
//! `afd_audit`.

#[cfg(feature = "postgres")]
mod postgres;

use std::fs::File;
use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

/// The `tracing` target audit events are emitted under.
pub const AUDIT_TARGET: &str = "afd::audit";

/// What was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// The request was served and succeeded.
    Allowed,
    /// The call ran and failed (a tool result with `isError`).
    ToolError,
    /// Refused for its token: missing, invalid or expired (HTTP 401).
    Unauthenticated,
    /// Refused for its scopes (HTTP 403 `insufficient_scope`).
    Forbidden,
    /// Refused as a message the server cannot read (HTTP 400, 408, 413).
    ProtocolError,
    /// Refused because the token could not be checked (HTTP 503).
    Unavailable,
}

/// One decision, as written to the trail.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuditEvent {
    /// When it was decided, RFC 3339 in UTC.
    pub time: String,
    /// What was decided.
    pub decision: Decision,
    /// The caller's subject, where it carried a valid token.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to.
    pub client_id: Option<String>,
    /// The JSON-RPC method (`tools/call`), where it could be read.
    pub method: Option<String>,
    /// The tool called.
    pub tool: Option<String>,
    /// The command run, where the tool names one (afd-call's `command`, a command's tool).
    pub command: Option<String>,
    /// The HTTP status the request was answered with, for refusals.
    pub status: Option<u16>,
    /// The error code of a failed call, or the reason of a refusal.
    pub error: Option<String>,
    /// How long the decision took, in milliseconds.
    pub duration_ms: f64,
    /// The JSON-RPC request id, as written.
    pub request_id: Option<String>,
    /// The call's arguments, where the operator opted in, redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

impl AuditEvent {
    /// An event decided now, which took `duration`.
    pub fn new(decision: Decision, duration: Duration) -> Self {
        AuditEvent {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            decision,
            subject: None,
            client_id: None,
            method: None,
            tool: None,
            command: None,
            status: None,
            error: None,
            duration_ms: duration.as_secs_f64() * 1000.0,
            request_id: None,
            arguments: None,
        }
    }
}

/// Where audit events go, and whether they carry arguments.
#[derive(Default)]
pub struct Audit {
    file: Option<Mutex<File>>,
    #[cfg(feature = "postgres")]
    postgres: Option<postgres::PostgresSink>,
    /// `Some`: arguments are recorded, with these fields' values redacted.
    arguments: Option<Vec<String>>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("Audit");
        debug.field("file", &self.file.is_some());
        #[cfg(feature = "postgres")]
        debug.field("postgres", &self.postgres.is_some());
        debug.field("arguments", &self.arguments).finish()
    }
}

impl Audit {
    /// Events to `tracing` only.
    pub fn new() -> Self {
        Audit::default()
    }

    /// Also appends each event to `path` as a JSON line (created if missing).
    ///
    /// # Errors
    ///
    /// The file cannot be opened for appending.
    pub fn to_file(mut self, path: impl AsRef<Path>) -> std::io::Result<Self> {
        let file = File::options().create(true).append(true).open(path)?;
        self.file = Some(Mutex::new(file));
        Ok(self)
    }

    /// Also writes each event to the table `afd_audit` of the PostgreSQL database at `url`
    /// (created if missing; `sslmode` and `sslrootcert` as for usage statistics), from a
    /// background task, in batches; a batch the database refuses is kept and written again.
    /// [`flush`](Audit::flush) waits for the events queued.
    ///
    /// # Errors
    ///
    /// The database cannot be reached or the table cannot be created.
    #[cfg(feature = "postgres")]
    pub async fn to_postgres(mut self, url: &str) -> Result<Self, String> {
        self.postgres = Some(postgres::PostgresSink::open(url).await?);
        Ok(self)
    }

    /// Waits until every event recorded so far is written (to PostgreSQL; the other
    /// sinks write at once).
    pub async fn flush(&self) {
        #[cfg(feature = "postgres")]
        if let Some(postgres) = &self.postgres {
            postgres.flush().await;
        }
    }

    /// Records calls' arguments too, with the values of the fields named in `redact` (at
    /// any depth) replaced by `"[redacted]"`.
    #[must_use]
    pub fn with_arguments<I, S>(mut self, redact: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.arguments = Some(redact.into_iter().map(Into::into).collect());
        self
    }

    /// Whether an event would be written anywhere (so that a caller builds none in vain).
    pub fn is_enabled(&self) -> bool {
        #[cfg(feature = "postgres")]
        if self.postgres.is_some() {
            return true;
        }
        self.file.is_some() || tracing::enabled!(target: AUDIT_TARGET, tracing::Level::INFO)
    }

    /// The arguments to record, redacted, where the operator opted in.
    pub fn arguments(&self, arguments: &Value) -> Option<Value> {
        let redact = self.arguments.as_ref()?;
        let mut arguments = arguments.clone();
        redact_fields(&mut arguments, redact);
        Some(arguments)
    }

    /// Writes `event`.
    pub fn record(&self, event: &AuditEvent) {
        tracing::info!(
            target: AUDIT_TARGET,
            decision = ?event.decision,
            subject = event.subject.as_deref(),
            client_id = event.client_id.as_deref(),
            method = event.method.as_deref(),
            tool = event.tool.as_deref(),
            command = event.command.as_deref(),
            status = event.status,
            error = event.error.as_deref(),
            duration_ms = event.duration_ms,
            request_id = event.request_id.as_deref(),
            "audit"
        );
        #[cfg(feature = "postgres")]
        if let Some(postgres) = &self.postgres {
            postgres.record(event);
        }
        if let Some(file) = &self.file {
            let Ok(mut line) = serde_json::to_vec(event) else {
                return;
            };
            line.push(b'\n');
            let mut file = file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // One write per line: appends from several threads do not interleave.
            if let Err(error) = file.write_all(&line) {
                tracing::error!(%error, "could not write the audit trail");
            }
        }
    }
}

fn redact_fields(value: &mut Value, fields: &[String]) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if fields.iter().any(|field| field == key) {
                    *inner = Value::from("[redacted]");
                } else {
                    redact_fields(inner, fields);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| redact_fields(item, fields)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_only_when_asked_and_redacted_at_any_depth() {
        let arguments =
            serde_json::json!({"card": "4111", "items": [{"card": "x", "qty": 2}], "note": "hi"});
        assert!(Audit::new().arguments(&arguments).is_none());
        let audit = Audit::new().with_arguments(["card"]);
        assert_eq!(
            audit.arguments(&arguments).unwrap(),
            serde_json::json!({"card": "[redacted]", "items": [{"card": "[redacted]", "qty": 2}], "note": "hi"})
        );
    }

    #[test]
    fn events_are_appended_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let audit = Audit::new().to_file(&path).unwrap();
        let mut event = AuditEvent::new(Decision::Forbidden, Duration::from_micros(1500));
        event.subject = Some("user-1".into());
        event.status = Some(403);
        audit.record(&event);
        audit.record(&AuditEvent::new(Decision::Allowed, Duration::ZERO));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["decision"], "forbidden");
        assert_eq!(lines[0]["subject"], "user-1");
        assert_eq!(lines[0]["durationMs"], 1.5);
        assert_eq!(lines[1]["decision"], "allowed");
    }
}
