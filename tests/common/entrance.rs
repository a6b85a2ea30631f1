//! One way into a server under test, for tests that must see the same answers on every
//! entrance: HTTP through the front (which picks the direct path or rmcp's), HTTP forced to
//! rmcp's path, and a stream through the stdio front or rmcp's service alone. Requests
//! carry the MCP 2026-07-28 headers their method and target call for.

use std::net::SocketAddr;
use std::time::Duration;

use afd_runtime::mcp::{HttpOptions, McpServer};
use rmcp::ServiceExt as _;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// One way in: sends a JSON-RPC request, returns the response (and the HTTP status).
pub enum Entrance {
    /// HTTP, the front choosing the path.
    Http(SocketAddr),
    /// HTTP, sent to rmcp's path by a weighted `Accept`.
    HttpRmcp(SocketAddr),
    /// A stream through the stdio front, or rmcp's service alone.
    Stream {
        write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
        read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    },
}

impl Entrance {
    /// Serves `server` over HTTP on a free port; `rmcp` sends every request to rmcp's path.
    pub async fn http(server: McpServer, rmcp: bool) -> (Entrance, afd_runtime::mcp::HttpHandle) {
        let handle = server
            .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
            .await
            .expect("bound");
        let addr = handle.local_addr();
        let entrance = match rmcp {
            true => Entrance::HttpRmcp(addr),
            false => Entrance::Http(addr),
        };
        (entrance, handle)
    }

    /// Serves `server` on a stream, through the stdio front or (`front: false`) rmcp alone.
    pub fn stream(server: McpServer, front: bool) -> Entrance {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if front {
                let (read, write) = tokio::io::split(server_io);
                let _ = server.serve_stream(read, write).await;
            } else if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client_io);
        Entrance::Stream {
            write,
            read: BufReader::new(read),
        }
    }

    /// The response to `request` and its HTTP status (200 on a stream).
    pub async fn send(&mut self, request: &Value) -> (u16, Value) {
        match self {
            Entrance::Http(addr) | Entrance::HttpRmcp(addr) => {
                let addr = *addr;
                let accept = match self {
                    Entrance::HttpRmcp(_) => "application/json;q=1, text/event-stream;q=1",
                    _ => "application/json, text/event-stream",
                };
                let params = &request["params"];
                let name = params["name"].as_str().or(params["taskId"].as_str());
                let mut post = reqwest::Client::new()
                    .post(format!("http://{addr}/mcp"))
                    .header("content-type", "application/json")
                    .header("accept", accept)
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", request["method"].as_str().unwrap());
                if let Some(name) = name {
                    post = post.header("mcp-name", name);
                }
                let response = post.body(request.to_string()).send().await.expect("sent");
                let status = response.status().as_u16();
                let text = response.text().await.expect("a body");
                let message = text
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim)
                    .filter(|data| !data.is_empty())
                    .map(|data| serde_json::from_str::<Value>(data).expect("JSON"))
                    .find(|message| message.get("id") == request.get("id"))
                    .unwrap_or_else(|| serde_json::from_str(&text).expect("a JSON answer"));
                (status, message)
            }
            Entrance::Stream { write, read } => {
                let mut line = serde_json::to_vec(request).unwrap();
                line.push(b'\n');
                write.write_all(&line).await.unwrap();
                loop {
                    let mut line = String::new();
                    tokio::time::timeout(Duration::from_secs(10), read.read_line(&mut line))
                        .await
                        .expect("an answer within 10 s")
                        .unwrap();
                    let message: Value = serde_json::from_str(&line).expect("JSON");
                    if message.get("id") == request.get("id") {
                        return (200, message);
                    }
                }
            }
        }
    }
}
