//! What the HTTP benches share: the trivial command they call, one keep-alive HTTP/1.1
//! client of a `tools/call` of it, and the Markdown table of a side-by-side pass.

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

/// One keep-alive HTTP/1.1 connection to an endpoint.
pub struct Client {
    sender: SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    authorization: Option<String>,
    body: Bytes,
}

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
        }
    }

    /// One `tools/call`; the response body.
    pub async fn call(&mut self) -> Bytes {
        let mut request = hyper::Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "afd-call");
        if let Some(authorization) = &self.authorization {
            request = request.header("authorization", authorization);
        }
        let request = request
            .body(Full::new(self.body.clone()))
            .expect("a request");
        self.sender.ready().await.expect("the connection is open");
        let response = self.sender.send_request(request).await.expect("a response");
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("the body")
            .to_bytes();
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        body
    }
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
