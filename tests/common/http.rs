//! A bare streamable-HTTP MCP client (JSON-RPC over hyper), enough to hold a 2025-11-25
//! session: `initialize`, the `Mcp-Session-Id` header, and `tools/call`.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// One MCP session over streamable HTTP.
pub struct HttpSession {
    url: String,
    addr: SocketAddr,
    session_id: Option<String>,
    next_id: u64,
}

impl HttpSession {
    /// Opens a session: `initialize` with protocol 2025-11-25, then `initialized`.
    pub async fn open(addr: SocketAddr, path: &str) -> HttpSession {
        let mut session = HttpSession {
            url: format!("http://{addr}{path}"),
            addr,
            session_id: None,
            next_id: 1,
        };
        let (headers, result) = session
            .post(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "afd-tests", "version": "0"}
                }
            }))
            .await;
        assert_eq!(
            result["result"]["protocolVersion"], "2025-11-25",
            "{result}"
        );
        session.session_id = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        assert!(session.session_id.is_some(), "the server keeps a session");
        session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
    }

    /// The server's session id.
    pub fn id(&self) -> &str {
        self.session_id.as_deref().unwrap_or_default()
    }

    /// Calls a tool; returns its structured content.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let (_, response) = self
            .post(json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}
            }))
            .await;
        response["result"]["structuredContent"].clone()
    }

    /// Posts one JSON-RPC message; returns the headers and the JSON-RPC response (from a
    /// JSON body or the `data:` lines of an SSE stream), or `Null` for a notification.
    async fn post(&self, message: Value) -> (hyper::HeaderMap, Value) {
        let stream = TcpStream::connect(self.addr).await.expect("connects");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("HTTP handshake");
        tokio::spawn(connection);
        let mut request = Request::post(&self.url)
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(id) = &self.session_id {
            request = request.header("mcp-session-id", id);
        }
        let request = request
            .body(Full::new(Bytes::from(message.to_string())))
            .expect("a request");
        let response = sender.send_request(request).await.expect("a response");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("the body")
            .to_bytes();
        let text = String::from_utf8_lossy(&body);
        assert!(status.is_success(), "{status}: {text}");
        let id = message.get("id").cloned();
        let Some(id) = id else {
            return (headers, Value::Null);
        };
        let found = std::iter::once(text.trim())
            .chain(text.lines().filter_map(|line| line.strip_prefix("data:")))
            .filter_map(|chunk| serde_json::from_str::<Value>(chunk.trim()).ok())
            .find(|value| value.get("id") == Some(&id));
        (
            headers,
            found.unwrap_or_else(|| panic!("no response to {id} in {text}")),
        )
    }
}
