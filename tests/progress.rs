//! Progress a handler reports through its context (`CommandContext::report_progress`, the
//! same on every surface) reaches an MCP client that asked for it as
//! `notifications/progress`, through the stdio front and through rmcp alone; without a
//! progress token nothing is sent.

use std::time::Duration;

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::prelude::*;
use rmcp::ServiceExt as _;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[derive(Deserialize, JsonSchema)]
struct Steps {
    steps: u32,
}

/// Work through some steps, reporting each.
#[command(category = "test")]
async fn work(input: Steps, ctx: &CommandContext) -> u32 {
    for step in 1..=input.steps {
        ctx.report_progress(
            f64::from(step),
            Some(f64::from(input.steps)),
            Some(format!("step {step}")),
        )
        .await;
    }
    input.steps
}

fn server() -> McpServer {
    McpServer::builder(Registry::global())
        .name("progress")
        .version("1.0.0")
        .strategy(Strategy::Individual)
        .build()
        .unwrap()
}

/// Sends `messages` to a server (through the stdio front or rmcp alone) and returns every
/// message it wrote until the answer to request 1.
async fn exchange(front: bool, call: Value) -> Vec<Value> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = server();
    let task = tokio::spawn(async move {
        if front {
            let (read, write) = tokio::io::split(server_io);
            let _ = server.serve_stream(read, write).await;
        } else if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(client_io);
    let mut read = BufReader::new(read);
    let mut send = async |message: Value| {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        write.write_all(&line).await.unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    let mut messages = Vec::new();
    let mut initialized = false;
    loop {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(10), read.read_line(&mut line))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(read > 0, "the server closed the stream early");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 0 && !initialized {
            initialized = true;
            send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
            send(call.clone()).await;
            continue;
        }
        let done = message["id"] == 1;
        messages.push(message);
        if done {
            break;
        }
    }
    write.shutdown().await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    messages
}

fn progress(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reported_through_the_context_reaches_the_mcp_client() {
    for front in [true, false] {
        let messages = exchange(
            front,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "work", "arguments": {"steps": 3},
                "_meta": {"progressToken": "w1"}}}),
        )
        .await;
        let progress = progress(&messages);
        assert_eq!(progress.len(), 3, "{messages:?}");
        assert!(
            progress
                .iter()
                .all(|m| m["params"]["progressToken"] == "w1")
        );
        assert_eq!(progress[2]["params"]["progress"], 3.0);
        assert_eq!(progress[2]["params"]["total"], 3.0);
        assert_eq!(progress[2]["params"]["message"], "step 3");
        let answer = messages.last().unwrap();
        assert_eq!(answer["result"]["structuredContent"]["data"], 3, "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_progress_token_nothing_is_sent() {
    let messages = exchange(
        true,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "work", "arguments": {"steps": 2}}}),
    )
    .await;
    assert!(progress(&messages).is_empty(), "{messages:?}");
    assert_eq!(
        messages.last().unwrap()["result"]["structuredContent"]["data"],
        2
    );
}
