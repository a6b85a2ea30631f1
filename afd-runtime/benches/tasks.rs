//! What running a call as a task costs over the plain call, over streamable HTTP in
//! process (one keep-alive HTTP/1.1 connection over loopback, the server on the same
//! current-thread runtime), with criterion:
//!
//! - `tasks/plain`: `tools/call` of a trivial command that may run as a task, from a client
//!   without the tasks extension: answered with its result;
//! - `tasks/task`: the same call from a client that declared the extension: answered with a
//!   task (its record written to the in-memory store, the handler spawned), then `tasks/get`
//!   until it has completed, the result read from it;
//! - `tasks/get`: one `tasks/get` of a task that has ended.
//!
//! `cargo bench -p afd-runtime --bench tasks`

use bytes::Bytes;
use criterion::Criterion;
use serde_json::{Value, json};

#[path = "support/http.rs"]
mod support;
use afd_runtime::prelude::*;
use support::Client;

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

/// Add two numbers (as a task for a client that takes one).
#[command(category = "bench", task = "optional")]
fn bench_add_task(input: Add) -> i64 {
    input.a + input.b
}

/// The `_meta` of a stateless request from a client declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "afd-bench", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// The call of `bench-add-task` from a client declaring `capabilities`.
fn call(capabilities: Value) -> Bytes {
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "bench-add-task", "arguments": {"a": 2, "b": 3}, "_meta": meta(capabilities)}
    });
    Bytes::from(call.to_string())
}

/// The JSON-RPC message of a response: its body, or the last event of an SSE stream
/// (rmcp's path answers `tasks/get` as one).
fn message(body: &[u8]) -> Value {
    let text = std::str::from_utf8(body).expect("UTF-8");
    let json = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|data| data.starts_with('{'))
        .unwrap_or(text);
    serde_json::from_str(json).expect("JSON")
}

/// A call answered with a task, followed with `tasks/get` to its result.
async fn as_task(client: &mut Client, call: &Bytes, extension: &Value) -> Value {
    let created = client
        .send("tools/call", "bench-add-task", call.clone())
        .await;
    let created = message(&created);
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    loop {
        let get = json!({
            "jsonrpc": "2.0", "id": 2, "method": "tasks/get",
            "params": {"taskId": task, "_meta": meta(extension.clone())}
        });
        let got = client
            .send("tasks/get", &task, Bytes::from(get.to_string()))
            .await;
        let got = message(&got);
        if got["result"]["status"] == "completed" {
            return got;
        }
        tokio::task::yield_now().await;
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let (rt, server) = support::serve();
    let extension = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let plain = call(json!({}));
    let tasked = call(extension.clone());
    let mut client = rt.block_on(Client::connect(&server, None));
    // Both answer what they should before they are timed.
    rt.block_on(async {
        let answer = client
            .send("tools/call", "bench-add-task", plain.clone())
            .await;
        let answer = message(&answer);
        assert_eq!(answer["result"]["structuredContent"]["data"], 5, "{answer}");
        let ended = as_task(&mut client, &tasked, &extension).await;
        assert_eq!(
            ended["result"]["result"]["structuredContent"]["data"], 5,
            "{ended}"
        );
    });
    let mut group = criterion.benchmark_group("tasks");
    group.bench_function("plain", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = std::time::Instant::now();
                for _ in 0..iters {
                    std::hint::black_box(
                        client
                            .send("tools/call", "bench-add-task", plain.clone())
                            .await,
                    );
                }
                started.elapsed()
            })
        })
    });
    group.bench_function("task", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = std::time::Instant::now();
                for _ in 0..iters {
                    std::hint::black_box(as_task(&mut client, &tasked, &extension).await);
                }
                started.elapsed()
            })
        })
    });
    // `tasks/get` alone, of a task that has ended.
    let finished = rt.block_on(as_task(&mut client, &tasked, &extension));
    let task = finished["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let get = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tasks/get",
        "params": {"taskId": task, "_meta": meta(extension.clone())}
    });
    let get = Bytes::from(get.to_string());
    group.bench_function("get", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = std::time::Instant::now();
                for _ in 0..iters {
                    std::hint::black_box(client.send("tasks/get", &task, get.clone()).await);
                }
                started.elapsed()
            })
        })
    });
    group.finish();
    criterion.final_summary();
    rt.block_on(server.shutdown());
}
