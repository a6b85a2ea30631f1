//! A minimal JSON-RPC client over a server process's stdio, for measuring the server rather
//! than the client: requests are preformatted lines, responses are checked with a substring
//! test instead of being parsed, and throughput runs keep a window of requests in flight on
//! one pipe (pipelining, as a busy agent host does). Both servers compared are driven by
//! this same client, so its own cost is the same on both sides.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
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

    /// Reads lines up to the next response (skipping notifications and logging) into
    /// `self.line`.
    async fn read_answer(&mut self) -> Result<(), Error> {
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line).await? == 0 {
                return Err("the server closed its stdout".into());
            }
            if self.line.contains("\"id\"") {
                return Ok(());
            }
        }
    }

    /// Reads up to the next response, and fails if it is a JSON-RPC error or a tool result
    /// with `isError: true`.
    async fn read_response(&mut self) -> Result<(), Error> {
        self.read_answer().await?;
        let line = self.line.as_str();
        if line.contains("\"error\":{") || line.contains("\"isError\":true") {
            return Err(format!("the server answered an error: {}", line.trim()).into());
        }
        Ok(())
    }

    /// The `result` of one `method` request, whatever it holds (`null` for an error).
    ///
    /// # Errors
    ///
    /// The pipe broke, or the answer is not JSON.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Error> {
        let request =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.next_id += 1;
        self.write_line(&format!("{request}\n")).await?;
        self.stdin.flush().await?;
        self.read_answer().await?;
        let mut answer: Value = serde_json::from_str(&self.line)?;
        Ok(answer["result"].take())
    }

    /// Every tool the server lists (all pages), as it writes them.
    ///
    /// # Errors
    ///
    /// The pipe broke, or the server answered an error.
    pub async fn tools(&mut self) -> Result<Vec<Value>, Error> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        loop {
            let params = cursor.map_or_else(|| json!({}), |cursor| json!({"cursor": cursor}));
            let request = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list", "params": params});
            self.next_id += 1;
            self.write_line(&format!("{request}\n")).await?;
            self.stdin.flush().await?;
            self.read_response().await?;
            let page: Value = serde_json::from_str(&self.line)?;
            cursor = match next_page(&page, &mut tools) {
                Some(next) => Some(next),
                None => return Ok(tools),
            };
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

    /// Closes stdin (ending the server) and waits for it, at most five seconds.
    pub async fn close(mut self) {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

impl RawClient for RawStdio {
    async fn latency(
        &mut self,
        tool: &str,
        arguments: &Value,
        warm: usize,
        calls: usize,
    ) -> Result<Vec<Duration>, Error> {
        let mut samples = Vec::with_capacity(calls);
        for round in 0..warm + calls {
            let took = self.call(tool, arguments).await?;
            if round >= warm {
                samples.push(took);
            }
        }
        Ok(samples)
    }

    /// Keeps `inflight` requests outstanding on the one pipe: each response read is
    /// replaced by a new request until the time is up; the requests still in flight then
    /// are drained and counted.
    async fn throughput(
        &mut self,
        tool: &str,
        arguments: &Value,
        inflight: usize,
        seconds: f64,
    ) -> Result<f64, Error> {
        let inflight = inflight.max(1);
        let window = Window::new(seconds);
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
            if window.open() {
                let line = call_line(self.next_id, tool, arguments);
                self.next_id += 1;
                self.write_line(&line).await?;
                self.stdin.flush().await?;
                outstanding += 1;
            }
        }
        Ok(window.rate(done))
    }
}

/// A minimal streamable-HTTP JSON-RPC client, for measuring servers over HTTP as
/// [`RawStdio`] does over stdio: preformatted request bodies on keep-alive HTTP/1.1
/// connections (`TCP_NODELAY`, one connection per call in flight), answers (JSON or SSE)
/// checked with a substring test instead of being parsed.
///
/// It speaks what the server speaks: the stateless protocol (2026-07-28, each request
/// carrying its version, client and capabilities in `_meta` and the standard headers)
/// where the server takes it, else a 2025-11-25 session opened with `initialize`.
pub struct RawHttp {
    addr: std::net::SocketAddr,
    path: String,
    /// `Mcp-Session-Id` of a 2025-11-25 session; `None`: stateless.
    session: Option<String>,
    stateless: bool,
    next_id: u64,
}

/// A request ready to send again and again: its target, headers and body.
struct Prepared {
    uri: hyper::Uri,
    headers: hyper::HeaderMap,
    body: bytes::Bytes,
}

/// One keep-alive HTTP/1.1 connection.
type Sender = hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>;

impl RawHttp {
    /// A client of the MCP endpoint at `url` (`http://HOST:PORT/PATH`): `stateless` for the
    /// 2026-07-28 protocol, else a session opened with `initialize`.
    ///
    /// # Errors
    ///
    /// The URL is not one, or the server did not answer `initialize`.
    pub async fn connect(url: &str, stateless: bool) -> Result<RawHttp, Error> {
        let uri: hyper::Uri = url.parse()?;
        let authority = uri.authority().ok_or("the URL has no host")?;
        let host = authority.host().trim_matches(['[', ']']);
        let port = authority.port_u16().unwrap_or(80);
        let addr = tokio::net::lookup_host((host, port))
            .await?
            .next()
            .ok_or("the host does not resolve")?;
        let mut raw = RawHttp {
            addr,
            path: uri.path().to_owned(),
            session: None,
            stateless,
            next_id: 1,
        };
        if !stateless {
            let mut sender = raw.sender().await?;
            let initialize = json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "afd-bench-raw", "version": env!("CARGO_PKG_VERSION")},
                },
            });
            let (session, _) = raw.send(&mut sender, initialize.to_string(), None).await?;
            raw.session = session;
            let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            raw.send(&mut sender, initialized.to_owned(), None).await?;
        }
        Ok(raw)
    }

    /// A new keep-alive connection.
    async fn sender(&self) -> Result<Sender, Error> {
        let stream = tokio::net::TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(sender)
    }

    /// The body of a `tools/call` of `tool`.
    fn call_body(&mut self, tool: &str, arguments: &Value) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = json!({"name": tool, "arguments": arguments});
        if self.stateless {
            params["_meta"] = stateless_meta();
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
    }

    /// POSTs `body`; the answer's session id, if any, and its body. A JSON-RPC error or a
    /// tool result with `isError: true` is an error.
    async fn send(
        &self,
        sender: &mut Sender,
        body: String,
        tool: Option<&str>,
    ) -> Result<(Option<String>, bytes::Bytes), Error> {
        let prepared = self.prepare(body, tool)?;
        self.send_prepared(sender, &prepared).await
    }

    /// The request of `body` (`tool`'s call, or a listing without a tool), its headers
    /// built once so that a throughput run repeats it at the cost of a few reference counts.
    fn prepare(&self, body: String, tool: Option<&str>) -> Result<Prepared, Error> {
        let method = if tool.is_some() {
            "tools/call"
        } else {
            "tools/list"
        };
        let mut request = hyper::Request::post(self.path.as_str())
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if self.stateless {
            request = request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method);
            if let Some(tool) = tool {
                request = request.header("mcp-name", tool);
            }
        } else if let Some(session) = &self.session {
            request = request
                .header("mcp-protocol-version", "2025-11-25")
                .header("mcp-session-id", session.as_str());
        }
        let (parts, ()) = request.body(())?.into_parts();
        Ok(Prepared {
            uri: parts.uri,
            headers: parts.headers,
            body: bytes::Bytes::from(body),
        })
    }

    /// POSTs a prepared request; as [`send`](RawHttp::send).
    async fn send_prepared(
        &self,
        sender: &mut Sender,
        prepared: &Prepared,
    ) -> Result<(Option<String>, bytes::Bytes), Error> {
        use http_body_util::BodyExt as _;
        let mut request = hyper::Request::new(http_body_util::Full::new(prepared.body.clone()));
        *request.method_mut() = hyper::Method::POST;
        *request.uri_mut() = prepared.uri.clone();
        *request.headers_mut() = prepared.headers.clone();
        sender.ready().await?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)).into());
        }
        let text = std::str::from_utf8(&body).unwrap_or_default();
        if text.contains("\"error\":{") || text.contains("\"isError\":true") {
            return Err(format!("the server answered an error: {}", text.trim()).into());
        }
        Ok((session, body))
    }

    /// Every tool the server lists (all pages), as it writes them.
    ///
    /// # Errors
    ///
    /// The connection broke, or the server answered an error.
    pub async fn tools(&mut self) -> Result<Vec<Value>, Error> {
        let mut sender = self.sender().await?;
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        loop {
            let mut params = cursor.map_or_else(|| json!({}), |cursor| json!({"cursor": cursor}));
            if self.stateless {
                params["_meta"] = stateless_meta();
            }
            let request = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list", "params": params});
            self.next_id += 1;
            let (_, body) = self.send(&mut sender, request.to_string(), None).await?;
            let page = message_of(&body)?;
            cursor = match next_page(&page, &mut tools) {
                Some(next) => Some(next),
                None => return Ok(tools),
            };
        }
    }
}

impl RawClient for RawHttp {
    async fn latency(
        &mut self,
        tool: &str,
        arguments: &Value,
        warm: usize,
        calls: usize,
    ) -> Result<Vec<Duration>, Error> {
        let mut sender = self.sender().await?;
        let mut samples = Vec::with_capacity(calls);
        for round in 0..warm + calls {
            let body = self.call_body(tool, arguments);
            let started = Instant::now();
            self.send(&mut sender, body, Some(tool)).await?;
            if round >= warm {
                samples.push(started.elapsed());
            }
        }
        Ok(samples)
    }

    /// One connection per call in flight, each calling `tool` one call after another.
    async fn throughput(
        &mut self,
        tool: &str,
        arguments: &Value,
        inflight: usize,
        seconds: f64,
    ) -> Result<f64, Error> {
        let body = self.call_body(tool, arguments);
        let prepared = Arc::new(self.prepare(body, Some(tool))?);
        let window = Window::new(seconds);
        let mut tasks = Vec::new();
        for _ in 0..inflight.max(1) {
            let mut sender = self.sender().await?;
            let client = RawHttp {
                addr: self.addr,
                path: self.path.clone(),
                session: self.session.clone(),
                stateless: self.stateless,
                next_id: 0,
            };
            let prepared = prepared.clone();
            tasks.push(tokio::spawn(async move {
                let mut done = 0usize;
                while window.open() {
                    client.send_prepared(&mut sender, &prepared).await?;
                    done += 1;
                }
                Ok::<usize, Error>(done)
            }));
        }
        let mut done = 0;
        for task in tasks {
            done += task.await.map_err(|error| error.to_string())??;
        }
        Ok(window.rate(done))
    }
}

/// What the benches measure of a server through a raw client, over either transport.
#[allow(
    async_fn_in_trait,
    reason = "used by this crate's own binaries, on one runtime; no caller needs Send futures"
)]
pub trait RawClient {
    /// Round trips of `tool` one after another, each timed from the request's first byte
    /// to the answer's last: `calls` of them after `warm` untimed.
    ///
    /// # Errors
    ///
    /// The connection broke, or a call failed.
    async fn latency(
        &mut self,
        tool: &str,
        arguments: &Value,
        warm: usize,
        calls: usize,
    ) -> Result<Vec<Duration>, Error>;

    /// Calls per second over `seconds`, with `inflight` calls of `tool` outstanding.
    ///
    /// # Errors
    ///
    /// The connection broke, or a call failed.
    async fn throughput(
        &mut self,
        tool: &str,
        arguments: &Value,
        inflight: usize,
        seconds: f64,
    ) -> Result<f64, Error>;

    /// [`throughput`](RawClient::throughput) at each number of calls in flight, one run after
    /// another: `(inflight, calls per second)`.
    ///
    /// # Errors
    ///
    /// The connection broke, or a call failed.
    async fn throughputs(
        &mut self,
        tool: &str,
        arguments: &Value,
        concurrency: &[usize],
        seconds: f64,
    ) -> Result<Vec<(usize, f64)>, Error> {
        let mut rates = Vec::with_capacity(concurrency.len());
        for &inflight in concurrency {
            rates.push((
                inflight,
                self.throughput(tool, arguments, inflight, seconds).await?,
            ));
        }
        Ok(rates)
    }
}

/// A throughput run's clock: new calls are sent while it is open, and the rate is the
/// calls done over the whole time (the ones drained after it closed included).
#[derive(Clone, Copy)]
struct Window {
    started: Instant,
    deadline: Instant,
}

impl Window {
    fn new(seconds: f64) -> Window {
        let started = Instant::now();
        Window {
            started,
            deadline: started + Duration::from_secs_f64(seconds),
        }
    }

    fn open(&self) -> bool {
        Instant::now() < self.deadline
    }

    fn rate(&self, done: usize) -> f64 {
        done as f64 / self.started.elapsed().as_secs_f64()
    }
}

/// The `_meta` of a 2026-07-28 request: the protocol version, the client and its
/// capabilities.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "afd-bench-raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// The JSON-RPC answer in an HTTP body: the body itself, or the SSE event that carries it.
fn message_of(body: &[u8]) -> Result<Value, Error> {
    let text = std::str::from_utf8(body)?;
    if let Ok(message) = serde_json::from_str(text) {
        return Ok(message);
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .ok_or_else(|| format!("no answer in {text}").into())
}

/// Adds the tools of a `tools/list` answer to `tools`; the cursor of the next page, if any.
fn next_page(page: &Value, tools: &mut Vec<Value>) -> Option<Value> {
    if let Some(listed) = page["result"]["tools"].as_array() {
        tools.extend(listed.iter().cloned());
    }
    match &page["result"]["nextCursor"] {
        Value::Null => None,
        next => Some(next.clone()),
    }
}
