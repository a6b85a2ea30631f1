//! An in-process MCP client connected to a server over `tokio::io::duplex`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use afd_runtime::mcp::McpServer;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion, RequestMetaObject};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tokio::sync::Notify;

/// The client side: counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub struct Recorder {
    list_changed: Arc<AtomicUsize>,
    notified: Arc<Notify>,
}

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
        self.notified.notify_waiters();
    }
}

/// A connected client; the server runs on a spawned task.
pub struct Client {
    service: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
}

impl Client {
    /// Connects a real rmcp client to `server` with `initialize` (the 2025-11-25 protocol,
    /// with a session).
    pub async fn connect(server: McpServer) -> Client {
        Client::connect_with(server, ClientLifecycleMode::Initialize).await
    }

    /// Connects with `server/discover` on the stateless 2026-07-28 protocol.
    pub async fn connect_stateless(server: McpServer) -> Client {
        let mode = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        Client::connect_with(server, mode).await
    }

    async fn connect_with(server: McpServer, mode: ClientLifecycleMode) -> Client {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        // Served as `serve_stdio` serves: the front answers the calls it takes, rmcp the rest.
        tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_io);
            let _ = server.serve_stream(read, write).await;
        });
        let recorder = Recorder::default();
        let service = recorder
            .clone()
            .serve_with_lifecycle(client_io, mode)
            .await
            .expect("the client connects");
        Client { service, recorder }
    }

    /// Ends the connection (the client's side closes; the server sees its end).
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }

    /// The client's peer, for requests this helper does not wrap.
    pub fn peer(&self) -> &rmcp::Peer<RoleClient> {
        self.service.peer()
    }

    /// The protocol version in force.
    pub fn protocol_version(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// How many `notifications/tools/list_changed` arrived so far.
    pub fn list_changed(&self) -> usize {
        self.recorder.list_changed.load(Ordering::SeqCst)
    }

    /// Waits (up to two seconds) until at least `count` list_changed notifications
    /// arrived; returns how many did.
    pub async fn wait_list_changed(&self, count: usize) -> usize {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while self.list_changed() < count {
            let notified = self.recorder.notified.notified();
            if self.list_changed() >= count
                || tokio::time::timeout_at(deadline, notified).await.is_err()
            {
                break;
            }
        }
        self.list_changed()
    }

    /// Calls a tool with `_meta` set; returns the structured content.
    pub async fn call_with_meta(&self, name: &str, arguments: Value, meta: Value) -> Value {
        let (Value::Object(map), Value::Object(meta)) = (arguments, meta) else {
            panic!("arguments and meta must be objects")
        };
        let mut params = CallToolRequestParams::new(name.to_owned()).with_arguments(map);
        params.meta = Some(RequestMetaObject::from(meta));
        let result = self
            .service
            .peer()
            .call_tool(params)
            .await
            .expect("tools/call");
        result.structured_content.expect("structuredContent")
    }

    /// Every tool, following cursors.
    pub async fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.service
            .peer()
            .list_all_tools()
            .await
            .expect("tools/list")
    }

    /// One page of tools.
    pub async fn page(
        &self,
        cursor: Option<String>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ServiceError> {
        let params =
            cursor.map(|c| rmcp::model::PaginatedRequestParams::default().with_cursor(Some(c)));
        self.service.peer().list_tools(params).await
    }

    /// Calls a tool; returns the raw result.
    pub async fn call_raw(&self, name: &str, arguments: Value) -> CallToolResult {
        let Value::Object(map) = arguments else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(map);
        self.service
            .peer()
            .call_tool(params)
            .await
            .expect("tools/call")
    }

    /// Calls a tool; returns its structured content, checking it matches the text content
    /// and that `isError` matches `success`.
    pub async fn call(&self, name: &str, arguments: Value) -> Value {
        let result = self.call_raw(name, arguments).await;
        let structured = result
            .structured_content
            .clone()
            .expect("structuredContent");
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .expect("text content");
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            structured,
            "text and structured content agree"
        );
        let success = structured["success"].as_bool().unwrap_or(false);
        assert_eq!(result.is_error, Some(!success), "isError follows success");
        structured
    }

    /// The server's instructions.
    pub fn instructions(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.instructions.clone())
    }
}
