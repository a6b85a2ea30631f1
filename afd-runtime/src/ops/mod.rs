//! Operating a server: the readiness a load balancer probes (`/readyz`, and `/healthz` for
//! liveness) and the drain that stops a process without losing the calls in flight.
//!
//! [`McpServer`](crate::mcp::McpServer) builds both from what it serves with: its
//! [`readiness`](crate::mcp::McpServer::readiness) checks the session store (Redis `PING`),
//! the usage store (PostgreSQL `SELECT 1`) and the embedding model of semantic search; its
//! [`drain`](crate::mcp::McpServer::drain) is shared by its transports, so that
//! `serve` can stop on SIGTERM in order:
//!
//! 1. readiness fails at once (`/readyz` answers 503), so the load balancer stops sending;
//! 2. new sessions and calls are refused with a retryable error;
//! 3. the calls in flight finish within the grace period and their answers are sent;
//! 4. streams that carry no answer are closed, usage statistics and the audit trail are
//!    flushed, and the process exits 0;
//! 5. past the grace period, the calls still running are cancelled (their callers are
//!    answered `CANCELLED`), the statistics are still flushed, and the exit is non-zero.

mod drain;
mod health;

#[cfg(feature = "mcp")]
pub use drain::shutdown_signal;
pub use drain::{Drain, DrainOutcome, Work};
pub use health::{CheckFuture, CheckOutcome, Readiness, ReadyReport};
