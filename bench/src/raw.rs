//! A minimal JSON-RPC client over a server process's stdio, for measuring the server rather
//! than the client: requests are preformatted lines, responses are checked with a substring
//! test instead of being parsed, and throughput runs keep a window of requests in flight on
//! one pipe (pipelining, as a busy agent host does). Both servers compared are driven by
//! this same client, so its own cost is the same on both sides.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::client::Error;

/// A server process spoken to in raw JSON-RPC lines over its stdin and stdout.
pub struct RawStdio {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
    /// The server process's id, for `/proc/PID/status`.
    pub pid: Option<u32>,
}

/// The `tools/call` request line for `tool` with `arguments`, with id `id`.
fn call_line(id: u64, tool: &str, arguments: &Value) -> String {
    let mut line = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    })
    .to_string();
    line.push('\n');
    line
}

impl RawStdio {
    /// Starts `program args...` (stderr discarded) and completes the MCP handshake.
    ///
    /// # Errors
    ///
    /// The process did not start, or did not answer `initialize`.
    pub async fn start(program: &Path, args: &[String]) -> Result<RawStdio, Error> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id();
        let stdin = BufWriter::new(child.stdin.take().ok_or("no stdin")?);
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut raw = RawStdio {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 1,
            pid,
        };
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "afd-bench-raw", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        raw.write_line(&format!("{initialize}\n")).await?;
        raw.stdin.flush().await?;
        raw.read_response().await?;
        raw.write_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await?;
        raw.stdin.flush().await?;
        Ok(raw)
    }

    async fn write_line(&mut self, line: &str) -> Result<(), Error> {
        self.stdin.write_all(line.as_bytes()).await?;
        Ok(())
    }

    /// Reads lines up to the next response (skipping notifications and logging), and
    /// fails if it is a JSON-RPC error or a tool result with `isError: true`.
    async fn read_response(&mut self) -> Result<(), Error> {
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line).await? == 0 {
                return Err("the server closed its stdout".into());
            }
            let line = self.line.as_str();
            if !line.contains("\"id\"") {
                continue;
            }
            if line.contains("\"error\":{") || line.contains("\"isError\":true") {
                return Err(format!("the server answered an error: {}", line.trim()).into());
            }
            return Ok(());
        }
    }

    /// One `tools/call` round trip, timed from the request's first byte to the response's
    /// last.
    ///
    /// # Errors
    ///
    /// The pipe broke, or the call failed.
    pub async fn call(&mut self, tool: &str, arguments: &Value) -> Result<Duration, Error> {
        let line = call_line(self.next_id, tool, arguments);
        self.next_id += 1;
        let started = Instant::now();
        self.write_line(&line).await?;
        self.stdin.flush().await?;
        self.read_response().await?;
        Ok(started.elapsed())
    }

    /// Calls per second over `seconds`, keeping `inflight` requests outstanding on the
    /// pipe: each response read is replaced by a new request until the time is up; the
    /// requests still in flight then are drained and counted.
    ///
    /// # Errors
    ///
    /// The pipe broke, or a call failed.
    pub async fn throughput(
        &mut self,
        tool: &str,
        arguments: &Value,
        inflight: usize,
        seconds: f64,
    ) -> Result<f64, Error> {
        let inflight = inflight.max(1);
        let started = Instant::now();
        let deadline = started + Duration::from_secs_f64(seconds);
        for _ in 0..inflight {
            let line = call_line(self.next_id, tool, arguments);
            self.next_id += 1;
            self.write_line(&line).await?;
        }
        self.stdin.flush().await?;
        let mut outstanding = inflight;
        let mut done = 0usize;
        while outstanding > 0 {
            self.read_response().await?;
            outstanding -= 1;
            done += 1;
            if Instant::now() < deadline {
                let line = call_line(self.next_id, tool, arguments);
                self.next_id += 1;
                self.write_line(&line).await?;
                self.stdin.flush().await?;
                outstanding += 1;
            }
        }
        Ok(done as f64 / started.elapsed().as_secs_f64())
    }

    /// Closes stdin (ending the server) and waits for it, at most five seconds.
    pub async fn close(mut self) {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}
