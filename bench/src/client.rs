//! MCP clients for the end-to-end benches: a server process over stdio (this crate's
//! `serve` binary or the reference's `shop.mjs`) and a server over streamable HTTP.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, RoleClient, ServiceExt};

use crate::Stats;
use serde_json::Value;
use tokio::process::Command;

/// The error type of the bench binaries.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A connected client (the server's process, where it started one).
pub struct Connection {
    service: RunningService<RoleClient, ()>,
    /// The server process's id, for `/proc/PID/status`.
    pub pid: Option<u32>,
}

impl Connection {
    /// Starts `program args...` and connects over its stdio (`initialize` included).
    ///
    /// # Errors
    ///
    /// The process did not start or the handshake failed.
    pub async fn stdio(program: &Path, args: &[String]) -> Result<Connection, Error> {
        let (transport, pid) = spawn(program, args)?;
        let service = ().serve(transport).await?;
        Ok(Connection { service, pid })
    }

    /// Connects to a streamable HTTP endpoint (`http://127.0.0.1:PORT/mcp`).
    ///
    /// # Errors
    ///
    /// The handshake failed.
    pub async fn http(url: &str, pid: Option<u32>) -> Result<Connection, Error> {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        let service = ().serve(transport).await?;
        Ok(Connection { service, pid })
    }

    /// Starts `program args...` and connects over its stdio as [`Connection::auto`] does.
    ///
    /// # Errors
    ///
    /// The process did not start or the handshake failed.
    pub async fn stdio_auto(program: &Path, args: &[String]) -> Result<Connection, Error> {
        let (transport, pid) = spawn(program, args)?;
        let service = ().serve_with_lifecycle(transport, auto()).await?;
        Ok(Connection { service, pid })
    }

    /// Connects to a streamable HTTP endpoint the way rmcp's client picks a lifecycle when
    /// told to prefer the stateless protocol (2026-07-28, `server/discover`) and fall back to
    /// a 2025-11-25 session with a server that does not speak it.
    ///
    /// # Errors
    ///
    /// Neither handshake succeeded.
    pub async fn auto(url: &str, pid: Option<u32>) -> Result<Connection, Error> {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        let service = ().serve_with_lifecycle(transport, auto()).await?;
        Ok(Connection { service, pid })
    }

    /// The protocol version the connection speaks.
    pub fn protocol(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// Times calls of `tool` with `arguments`: `calls` sequential round trips (after 200
    /// untimed ones), then the calls a second with each count in `concurrency` in flight
    /// for `seconds`. A call answered with an error fails the run.
    ///
    /// # Errors
    ///
    /// A call failed.
    pub async fn timed(
        &self,
        tool: &str,
        arguments: &Value,
        calls: usize,
        concurrency: &[usize],
        seconds: f64,
    ) -> Result<(Stats, Vec<(usize, f64)>), Error> {
        let peer = self.peer();
        let first = call(&peer, tool, arguments).await?;
        if first.is_error == Some(true) {
            return Err(format!("{tool} failed: {}", text(&first)).into());
        }
        for _ in 0..200 {
            call(&peer, tool, arguments).await?;
        }
        let mut samples = Vec::with_capacity(calls);
        for _ in 0..calls {
            let started = Instant::now();
            call(&peer, tool, arguments).await?;
            samples.push(started.elapsed());
        }
        let latency = Stats::of(&mut samples);
        let mut throughput = Vec::new();
        for &inflight in concurrency {
            let done = Arc::new(AtomicUsize::new(0));
            let started = Instant::now();
            let deadline = started + Duration::from_secs_f64(seconds);
            let tasks: Vec<_> = (0..inflight)
                .map(|_| {
                    let peer = peer.clone();
                    let done = done.clone();
                    let arguments = arguments.clone();
                    let tool = tool.to_owned();
                    tokio::spawn(async move {
                        while Instant::now() < deadline {
                            call(&peer, &tool, &arguments).await?;
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok::<(), Error>(())
                    })
                })
                .collect();
            for task in tasks {
                task.await??;
            }
            let elapsed = started.elapsed().as_secs_f64();
            throughput.push((inflight, done.load(Ordering::Relaxed) as f64 / elapsed));
        }
        Ok((latency, throughput))
    }

    /// The peer, cheap to clone for concurrent calls.
    pub fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    /// Every tool, following cursors.
    ///
    /// # Errors
    ///
    /// The request failed.
    pub async fn tools(&self) -> Result<Vec<Tool>, Error> {
        Ok(self.service.peer().list_all_tools().await?)
    }

    /// Closes the connection (and so ends a stdio server).
    pub async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.service.cancel()).await;
    }
}

/// Calls `name` with `arguments` (an object).
///
/// # Errors
///
/// The request failed at the protocol level.
pub async fn call(
    peer: &Peer<RoleClient>,
    name: &str,
    arguments: &Value,
) -> Result<CallToolResult, Error> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = arguments {
        params = params.with_arguments(map.clone());
    }
    Ok(peer.call_tool(params).await?)
}

/// `program args...` started with its stdio as a transport (stderr discarded), and its
/// process id.
fn spawn(program: &Path, args: &[String]) -> Result<(TokioChildProcess, Option<u32>), Error> {
    let mut command = Command::new(program);
    command.args(args);
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()?;
    let pid = transport.id();
    Ok((transport, pid))
}

/// Prefer the stateless protocol; fall back to a 2025-11-25 session.
fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// The text content of a tool result, joined.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The resident memory of a process: (VmRSS, VmHWM) in KiB, from `/proc/PID/status`.
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
