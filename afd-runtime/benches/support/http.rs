//! What the HTTP benches share: the trivial command they call, one keep-alive HTTP/1.1
//! client of a `tools/call` of it, and the Markdown table of a side-by-side pass.

// Each bench uses a part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use afd_runtime::mcp::HttpHandle;
use afd_runtime::prelude::*;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

/// Add two numbers.
#[command(category = "bench")]
fn bench_add(input: Add) -> i64 {
    input.a + input.b
}

/// A current-thread runtime and a server of the global registry over streamable HTTP on a
/// free loopback port, served on that runtime.
pub fn serve() -> (tokio::runtime::Runtime, afd_runtime::mcp::HttpHandle) {
    use afd_runtime::mcp::{HttpOptions, McpServer};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let server = rt.block_on(async {
        McpServer::builder(Registry::global())
            .build()
            .expect("a server")
            .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
            .await
            .expect("bound")
    });
    (rt, server)
}

/// One keep-alive HTTP/1.1 connection to an endpoint.
pub struct Client {
    sender: SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    authorization: Option<String>,
    body: Bytes,
    /// The `Accept` header sent.
    accept: &'static str,
    /// A 2025-11-25 session's id; `None`: the stateless protocol.
    session: Option<String>,
}

/// The `Accept` every client sends.
pub const ACCEPT: &str = "application/json, text/event-stream";

impl Client {
    pub async fn connect(server: &HttpHandle, token: Option<String>) -> Client {
        let addr = server.local_addr();
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connects");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("an HTTP/1.1 handshake");
        tokio::spawn(connection);
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": "afd-call",
                "arguments": {"command": "bench-add", "input": {"a": 2, "b": 3}},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "afd-bench", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }
        });
        Client {
            sender,
            addr,
            authorization: token.map(|token| format!("Bearer {token}")),
            body: Bytes::from(body.to_string()),
            accept: ACCEPT,
            session: None,
        }
    }

    /// Declares `capabilities` in the stateless call's `_meta` (a client that can sample or
    /// elicit is asked through input rounds, and still answered by the direct path).
    #[allow(dead_code)]
    pub fn declaring(mut self, capabilities: serde_json::Value) -> Client {
        let mut body: serde_json::Value =
            serde_json::from_slice(&self.body).expect("the call's own JSON");
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities;
        self.body = Bytes::from(body.to_string());
        self
    }

    /// Sends `accept` as the `Accept` header (a weighted one sends stateless calls through
    /// rmcp rather than the front's direct path).
    pub fn accept(mut self, accept: &'static str) -> Client {
        self.accept = accept;
        self
    }

    /// The same calls in a 2025-11-25 session, opened with `initialize`.
    pub async fn in_session(mut self) -> Client {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "afd-bench", "version": "0"}
            }
        });
        let (session, _) = self.post(Bytes::from(initialize.to_string()), false).await;
        self.session = session;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        self.post(Bytes::from_static(initialized.as_bytes()), false)
            .await;
        let mut body: serde_json::Value = serde_json::from_slice(&self.body).expect("JSON");
        body["params"]
            .as_object_mut()
            .expect("params")
            .remove("_meta");
        self.body = Bytes::from(body.to_string());
        self
    }

    /// POSTs `body` (a call: with the headers of its protocol); the session id answered,
    /// if any, and the body.
    async fn post(&mut self, body: Bytes, call: bool) -> (Option<String>, Bytes) {
        let mut request = hyper::Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", self.accept);
        match &self.session {
            Some(session) => {
                request = request
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("mcp-session-id", session.as_str());
            }
            None if !call => {}
            None => {
                request = request
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "afd-call");
            }
        }
        if let Some(authorization) = &self.authorization {
            request = request.header("authorization", authorization);
        }
        self.round_trip(request.body(Full::new(body)).expect("a request"))
            .await
    }

    /// Sends `request`; the session id answered, if any, and the body (a success).
    async fn round_trip(
        &mut self,
        request: hyper::Request<Full<Bytes>>,
    ) -> (Option<String>, Bytes) {
        self.sender.ready().await.expect("the connection is open");
        let response = self.sender.send_request(request).await.expect("a response");
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = response
            .into_body()
            .collect()
            .await
            .expect("the body")
            .to_bytes();
        assert!(
            status.is_success(),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
        (session, body)
    }

    /// A stateless request of `method` on `target` (its `Mcp-Name`) with `body`; the
    /// response body.
    pub async fn send(&mut self, method: &str, target: &str, body: Bytes) -> Bytes {
        let request = hyper::Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", self.accept)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("mcp-name", target)
            .body(Full::new(body))
            .expect("a request");
        self.round_trip(request).await.1
    }

    /// One `tools/call`; the response body.
    pub async fn call(&mut self) -> Bytes {
        let body = self.body.clone();
        self.post(body, true).await.1
    }
}

/// `iters` calls of `client` one after another on `rt`: their time, for criterion's
/// `iter_custom`.
pub fn timed_calls(rt: &tokio::runtime::Runtime, client: &mut Client, iters: u64) -> Duration {
    rt.block_on(async {
        let started = std::time::Instant::now();
        for _ in 0..iters {
            std::hint::black_box(client.call().await);
        }
        started.elapsed()
    })
}

/// Prints one group of a side-by-side pass: each operation's median and p99, and its
/// overhead over and ratio to the first row.
pub fn report(group: &str, names: Vec<&str>, mut times: Vec<Vec<Duration>>) {
    println!();
    println!("| {group} | calls | median | p99 | overhead | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut base = None;
    for (name, times) in names.iter().zip(&mut times) {
        times.sort_unstable();
        let median = times[times.len() / 2];
        let p99 = times[times.len() * 99 / 100];
        let base = *base.get_or_insert(median);
        println!(
            "| {group}/{name} | {} | {} | {} | +{} | {:.2}x |",
            times.len(),
            micros(median),
            micros(p99),
            micros(median.saturating_sub(base)),
            median.as_secs_f64() / base.as_secs_f64(),
        );
    }
}

/// Nanoseconds under a microsecond, else microseconds.
fn micros(time: Duration) -> String {
    if time < Duration::from_micros(1) {
        format!("{} ns", time.as_nanos())
    } else {
        format!("{:.2} µs", time.as_secs_f64() * 1e6)
    }
}
