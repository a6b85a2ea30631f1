//! A small MCP server written by hand on rmcp, for the gateway's tests: tools that echo
//! with `structuredContent`, answer with an image, fail with `isError`, sleep while reporting progress and
//! noticing cancellation, crash the process, and add a tool (sending
//! `notifications/tools/list_changed`). `--garbage` makes it write junk to stdout instead
//! of speaking MCP.
//!
//! Environment: `FAULTY_MARKER` is a file the server appends events to (`started PID`,
//! `cancelled`), so a test can see what reached it.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

fn mark(event: &str) {
    if let Ok(path) = std::env::var("FAULTY_MARKER")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{event}");
    }
}

fn tool(spec: Value) -> Tool {
    serde_json::from_value(spec).expect("a valid tool")
}

#[derive(Clone, Default)]
struct Faulty {
    extra: Arc<AtomicBool>,
}

impl Faulty {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                json!({"name": "echo", "description": "Echo the message back.",
                "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
                "annotations": {"readOnlyHint": true}}),
            ),
            tool(
                json!({"name": "chart", "description": "Draw a chart: a caption and a PNG image.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
            ),
            tool(
                json!({"name": "fail", "description": "Always fail with an upstream error.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
            ),
            tool(
                json!({"name": "sleep", "description": "Sleep for ms milliseconds, reporting progress.",
                "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]},
                "annotations": {"readOnlyHint": true}}),
            ),
            tool(
                json!({"name": "crash", "description": "Exit the server process at once.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false, "destructiveHint": true}}),
            ),
            tool(
                json!({"name": "add_tool", "description": "Add the extra tool and announce the change.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true}}),
            ),
        ];
        if self.extra.load(Ordering::SeqCst) {
            tools.push(tool(
                json!({"name": "extra", "description": "The tool add_tool added.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
            ));
        }
        tools
    }
}

impl ServerHandler for Faulty {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new("faulty", "0.3.1"))
        .with_instructions("A test server that fails on purpose.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools(),
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::structured(json!({"echo": arguments["message"]})),
            "chart" => CallToolResult::success(vec![
                ContentBlock::text("the chart:"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ]),
            "fail" => {
                CallToolResult::error(vec![ContentBlock::text("boom: the faulty tool failed")])
            }
            "extra" => CallToolResult::success(vec![ContentBlock::text("extra ran")]),
            "crash" => std::process::exit(3),
            "add_tool" => {
                self.extra.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                CallToolResult::structured(json!({"added": "extra"}))
            }
            "sleep" => {
                let ms = arguments["ms"].as_u64().unwrap_or(0);
                let token = context.meta.get_progress_token();
                let steps = (ms / 50).max(1);
                for step in 0..steps {
                    if let Some(token) = &token {
                        let _ = context
                            .peer
                            .notify_progress(ProgressNotificationParam::new(
                                token.clone(),
                                step as f64,
                            ))
                            .await;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                        () = context.ct.cancelled() => {
                            mark("cancelled");
                            return Err(ErrorData::internal_error("cancelled", None));
                        }
                    }
                }
                CallToolResult::structured(json!({"slept": ms}))
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    mark(&format!("started {}", std::process::id()));
    if std::env::args().any(|arg| arg == "--garbage") {
        eprintln!("faulty: answering garbage");
        let mut stdout = std::io::stdout();
        loop {
            let _ = writeln!(stdout, "this is not JSON-RPC {{{{");
            let _ = stdout.flush();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    eprintln!("faulty: serving on stdio");
    let running = Faulty::default().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
