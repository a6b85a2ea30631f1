//! MCP clients for the end-to-end benches: a server process over stdio (this crate's
//! `serve` binary or the reference's `shop.mjs`) and a server over streamable HTTP.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, RoleClient, ServiceExt};
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
        let mut command = Command::new(program);
        command.args(args);
        let (transport, _stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()?;
        let pid = transport.id();
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
