//! An in-process MCP client connected to a server over `tokio::io::duplex`.

use afd_runtime::mcp::McpServer;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// A connected client; the server runs on a spawned task.
pub struct Client {
    service: RunningService<RoleClient, ()>,
}

impl Client {
    /// Connects a real rmcp client to `server`.
    pub async fn connect(server: McpServer) -> Client {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let service = ().serve(client_io).await.expect("the client connects");
        Client { service }
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
