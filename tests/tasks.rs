//! Long-running commands as tasks (MCP's tasks extension, `io.modelcontextprotocol/tasks`):
//! a command declared `task = "optional" | "required"`, called by a client that declared the
//! extension, is answered with a task at once; `tasks/get` follows it to its result,
//! `tasks/update` answers the questions its handler waits on (each on its own), and
//! `tasks/cancel` fires the handler's cancellation. The same on every entrance (HTTP's
//! direct path and rmcp's, stdio's front and rmcp's), directly and through afd-call. A
//! client without the extension gets the plain call, or -32021 for a command that runs only
//! as a task; a handler declared `task_start = "handler"` asks through rounds, then goes on
//! as a task. With the records in Redis, another replica answers for a task, takes its
//! answers and its cancellation, and reads how it ended after the replica that ran it
//! drained.
//!
//! The Redis tests need `AFD_TEST_REDIS_URL` (`.ci/run` starts one).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use afd_runtime::client::{Elicitation, confirmation_schema};
use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::prelude::*;
use afd_runtime::tasks::TaskStore;
use afd_tests::entrance::Entrance;
use afd_tests::services::redis_url;

/// How long to work.
#[derive(Deserialize, JsonSchema)]
struct Work {
    /// Milliseconds.
    millis: u64,
}

/// Set when `tasks-work` saw its cancellation.
static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// Works `millis`, then answers; stops when cancelled.
#[command(category = "tasks", task = "optional")]
async fn tasks_work(input: Work, ctx: &CommandContext) -> Result<String, CommandError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(input.millis)) => Ok(format!("worked {} ms", input.millis)),
        () = ctx.cancelled() => {
            SAW_CANCEL.store(true, Ordering::SeqCst);
            Err(CommandError::new(codes::CANCELLED, "stopped"))
        }
    }
}

/// Asks two questions at once, then a third, then answers with all three.
#[command(category = "tasks", task = "required")]
async fn tasks_ask(ctx: &CommandContext) -> Result<String, CommandError> {
    let form = confirmation_schema("Go on?");
    let (first, second) = tokio::join!(
        ctx.elicit_schema_as("first", "First?", form.clone()),
        ctx.elicit_schema_as("second", "Second?", form.clone()),
    );
    let third = ctx.elicit_schema_as("third", "Third?", form).await?;
    let said = |answer: Elicitation<Value>| match answer {
        Elicitation::Accept(content) => content["confirm"].to_string(),
        other => other.action().to_owned(),
    };
    Ok(format!(
        "{} {} {}",
        said(first?),
        said(second?),
        said(third)
    ))
}

/// Whom to greet.
#[derive(Deserialize, JsonSchema)]
struct Who {
    /// A name.
    name: String,
}

/// Asks the name through rounds, then goes on as a task.
#[command(category = "tasks", task = "optional", task_start = "handler")]
async fn tasks_later(ctx: &CommandContext) -> Result<String, CommandError> {
    let Elicitation::Accept(who) = ctx.elicit_as::<Who>("who", "Who?").await? else {
        return Ok("nobody".to_owned());
    };
    let became = ctx.continue_as_task().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(format!("hello {} (task: {became})", who.name))
}

/// What the tests ask of an entrance about tasks.
trait TasksEntrance {
    /// The result of `method` with `params` from a client declaring `capabilities`.
    async fn request(&mut self, method: &str, params: Value, capabilities: Value) -> (u16, Value);
    /// Polls `tasks/get` until the task is in `state` or has ended.
    async fn until(&mut self, task: &str, state: &str) -> Value;
    /// Polls `tasks/get` until the task waits on the question `key`.
    async fn asked(&mut self, task: &str, key: &str) -> Value;
    /// Starts a task with the `tools/call` `params`: its id.
    async fn start(&mut self, params: Value) -> String;
}

impl TasksEntrance for Entrance {
    async fn request(&mut self, method: &str, params: Value, capabilities: Value) -> (u16, Value) {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.send(&request(id, method, params, capabilities)).await
    }

    async fn until(&mut self, task: &str, state: &str) -> Value {
        for _ in 0..200 {
            let (_, got) = self
                .request("tasks/get", json!({"taskId": task}), tasks_client())
                .await;
            let status = got["result"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if status == state || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {task} never reached {state}");
    }

    async fn start(&mut self, params: Value) -> String {
        let (_, created) = self.request("tools/call", params, tasks_client()).await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        created["result"]["taskId"].as_str().unwrap().to_owned()
    }

    async fn asked(&mut self, task: &str, key: &str) -> Value {
        for _ in 0..200 {
            let asked = self.until(task, "input_required").await;
            if asked["inputRequests"].get(key).is_some() {
                return asked;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("task {task} never asked {key}");
    }
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A 2026-07-28 request of `method` with `params`, from a client declaring `capabilities`.
fn request(id: u64, method: &str, params: Value, capabilities: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "afd-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The capabilities of a client that takes tasks and shows forms.
fn tasks_client() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// The `tools/call` params that run `command` with `input`: directly, or through afd-call.
fn call(command: &str, input: Value, through_call: bool) -> Value {
    match through_call {
        true => json!({"name": "afd-call", "arguments": {"command": command, "input": input}}),
        false => json!({"name": command, "arguments": input}),
    }
}

fn server(strategy: Strategy) -> McpServer {
    McpServer::builder(Registry::global())
        .strategy(strategy)
        .task_poll_interval(Duration::from_millis(100))
        .build()
        .unwrap()
}

/// What a command's tool result says: its data.
fn text(result: &Value) -> String {
    result["structuredContent"]["data"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The flow every entrance must give the same way.
async fn the_tasks(entrance: &mut Entrance, through_call: bool, label: &str) {
    // Created at once, flat, with its TTL and poll interval; followed to its result.
    let (_, created) = entrance
        .request(
            "tools/call",
            call("tasks-work", json!({"millis": 300}), through_call),
            tasks_client(),
        )
        .await;
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{label}: {created}");
    assert_eq!(created["status"], "working", "{label}: {created}");
    assert_eq!(created["pollIntervalMs"], 100, "{label}: {created}");
    assert_eq!(created["ttlMs"], 300_000, "{label}: {created}");
    let task = created["taskId"].as_str().unwrap().to_owned();
    let (_, got) = entrance
        .request("tasks/get", json!({"taskId": task}), tasks_client())
        .await;
    assert_eq!(got["result"]["taskId"], task.as_str(), "{label}: {got}");
    let ended = entrance.until(&task, "completed").await;
    assert_eq!(ended["status"], "completed", "{label}: {ended}");
    assert_eq!(ended["result"]["isError"], false, "{label}: {ended}");
    assert!(
        text(&ended["result"]).contains("worked 300 ms"),
        "{label}: {ended}"
    );

    // Two questions at once, answered one at a time, then a third.
    let (_, created) = entrance
        .request(
            "tools/call",
            call("tasks-ask", json!({}), through_call),
            tasks_client(),
        )
        .await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect(label)
        .to_owned();
    entrance.asked(&task, "first").await;
    let asked = entrance.asked(&task, "second").await;
    let keys: Vec<&String> = asked["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["first", "second"], "{label}: {asked}");
    assert_eq!(
        asked["inputRequests"]["first"]["method"],
        "elicitation/create"
    );
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    let (_, ack) = entrance
        .request(
            "tasks/update",
            json!({"taskId": task, "inputResponses": {"first": yes, "nobody-asked": {}}}),
            tasks_client(),
        )
        .await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete"}),
        "{label}: {ack}"
    );
    let (_, after) = entrance
        .request("tasks/get", json!({"taskId": task}), tasks_client())
        .await;
    assert_eq!(
        after["result"]["status"], "input_required",
        "{label}: {after}"
    );
    let left: Vec<&String> = after["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, ["second"], "{label}: {after}");
    entrance
        .request(
            "tasks/update",
            json!({"taskId": task, "inputResponses": {"second": {"action": "decline"}}}),
            tasks_client(),
        )
        .await;
    let mut third = entrance.until(&task, "input_required").await;
    for _ in 0..100 {
        if third["inputRequests"].get("third").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        third = entrance.until(&task, "input_required").await;
    }
    assert!(
        third["inputRequests"].get("third").is_some(),
        "{label}: {third}"
    );
    entrance
        .request(
            "tasks/update",
            json!({"taskId": task, "inputResponses": {"third": yes}}),
            tasks_client(),
        )
        .await;
    let ended = entrance.until(&task, "completed").await;
    assert_eq!(
        text(&ended["result"]),
        "true decline true",
        "{label}: {ended}"
    );

    // Cancelled: the handler's token fires and the task says so; cancelling again is the
    // same empty answer.
    SAW_CANCEL.store(false, Ordering::SeqCst);
    let task = entrance
        .start(call("tasks-work", json!({"millis": 60_000}), through_call))
        .await;
    let (_, ack) = entrance
        .request("tasks/cancel", json!({"taskId": task}), tasks_client())
        .await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete"}),
        "{label}: {ack}"
    );
    let ended = entrance.until(&task, "cancelled").await;
    assert_eq!(ended["status"], "cancelled", "{label}: {ended}");
    assert!(
        SAW_CANCEL.load(Ordering::SeqCst),
        "{label}: the handler saw it"
    );
    let (_, again) = entrance
        .request("tasks/cancel", json!({"taskId": task}), tasks_client())
        .await;
    assert_eq!(
        again["result"],
        json!({"resultType": "complete"}),
        "{label}: {again}"
    );

    // An unknown task; a client that did not declare the extension.
    let (_, unknown) = entrance
        .request(
            "tasks/get",
            json!({"taskId": "no-such-task"}),
            tasks_client(),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{label}: {unknown}");
    let (_, gated) = entrance
        .request("tasks/get", json!({"taskId": task}), json!({}))
        .await;
    assert_eq!(gated["error"]["code"], -32021, "{label}: {gated}");

    // Without the extension: the plain call, or -32021 for a command that runs only as a
    // task.
    let (_, plain) = entrance
        .request(
            "tools/call",
            call("tasks-work", json!({"millis": 1}), through_call),
            json!({}),
        )
        .await;
    assert_eq!(
        plain["result"]["resultType"], "complete",
        "{label}: {plain}"
    );
    assert_eq!(plain["result"]["isError"], false, "{label}: {plain}");
    let (status, refused) = entrance
        .request(
            "tools/call",
            call("tasks-ask", json!({}), through_call),
            json!({"elicitation": {}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{label}: {refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}}),
        "{label}: {refused}"
    );
    if matches!(entrance, Entrance::Http(_) | Entrance::HttpRmcp(_)) {
        assert_eq!(status, 400, "{label}");
    }

    // A handler that asks through rounds first, then goes on as a task.
    let (_, first) = entrance
        .request(
            "tools/call",
            call("tasks-later", json!({}), through_call),
            tasks_client(),
        )
        .await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{label}: {first}");
    assert!(first.get("taskId").is_none(), "{label}: {first}");
    let mut params = call("tasks-later", json!({}), through_call);
    params["inputResponses"] = json!({"who": {"action": "accept", "content": {"name": "Ada"}}});
    params["requestState"] = first["requestState"].clone();
    let (_, second) = entrance
        .request("tools/call", params.clone(), tasks_client())
        .await;
    let second = &second["result"];
    assert_eq!(second["resultType"], "task", "{label}: {second}");
    assert!(second.get("requestState").is_none(), "{label}: {second}");
    let task = second["taskId"].as_str().unwrap().to_owned();
    let ended = entrance.until(&task, "completed").await;
    assert_eq!(
        text(&ended["result"]),
        "hello Ada (task: true)",
        "{label}: {ended}"
    );
    // The same answers from a client without the extension: the call stays plain.
    let (_, plain) = entrance
        .request("tools/call", params, json!({"elicitation": {}}))
        .await;
    assert_eq!(
        plain["result"]["resultType"], "complete",
        "{label}: {plain}"
    );
    assert!(
        plain["result"]["structuredContent"]
            .to_string()
            .contains("hello Ada (task: false)"),
        "{label}: {plain}"
    );
}

#[tokio::test]
async fn a_task_runs_the_same_on_either_http_path() {
    for strategy in [Strategy::Individual, Strategy::Lazy] {
        for rmcp in [false, true] {
            let (mut entrance, _handle) = Entrance::http(server(strategy), rmcp).await;
            let through_call = strategy == Strategy::Lazy;
            the_tasks(
                &mut entrance,
                through_call,
                &format!("http rmcp={rmcp} {strategy:?}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn a_task_runs_the_same_on_either_stream() {
    for front in [true, false] {
        let mut entrance = Entrance::stream(server(Strategy::Individual), front);
        the_tasks(&mut entrance, false, &format!("stream front={front}")).await;
    }
}

#[tokio::test]
async fn the_server_offers_the_extension_and_keeps_a_finished_task_for_its_ttl() {
    let server = McpServer::builder(Registry::global())
        .strategy(Strategy::Individual)
        .task_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let (mut entrance, _handle) = Entrance::http(server, true).await;
    let (_, discovered) = entrance
        .request("server/discover", json!({}), tasks_client())
        .await;
    let capabilities = &discovered["result"]["capabilities"];
    assert_eq!(
        capabilities["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{discovered}"
    );
    assert!(capabilities.get("tasks").is_none(), "{discovered}");
    let task = entrance
        .start(call("tasks-work", json!({"millis": 1}), false))
        .await;
    let ended = entrance.until(&task, "completed").await;
    assert_eq!(ended["ttlMs"], 300, "{ended}");
    tokio::time::sleep(Duration::from_millis(450)).await;
    let (_, gone) = entrance
        .request("tasks/get", json!({"taskId": task}), tasks_client())
        .await;
    assert_eq!(
        gone["error"]["code"], -32602,
        "expired after its TTL: {gone}"
    );
}

/// A replica of the app with its task records in the Redis at `url` under `prefix`.
async fn replica(url: &str, prefix: &str) -> McpServer {
    let sessions = afd_runtime::contexts::RedisSessionStore::connect(url, Duration::from_secs(60))
        .await
        .expect("Redis reachable");
    let tasks: Arc<dyn TaskStore> =
        Arc::new(afd_runtime::tasks::RedisTaskStore::beside(&sessions).with_prefix(prefix));
    McpServer::builder(Registry::global())
        .strategy(Strategy::Individual)
        .task_store(tasks)
        .task_poll_interval(Duration::from_millis(100))
        .build()
        .unwrap()
}

#[tokio::test]
async fn another_replica_answers_for_a_task_and_reads_how_it_ended_after_a_drain() {
    let Some(url) = redis_url() else { return };
    let prefix = format!("afd:test-task:{}:", std::process::id());
    let a = replica(&url, &prefix).await;
    let b = replica(&url, &prefix).await;
    let drain = a.drain().clone();
    let (mut on_a, _a) = Entrance::http(a, false).await;
    let (mut on_b, _b) = Entrance::http(b, false).await;

    // Started on A, followed on B to its end.
    let task = on_a
        .start(call("tasks-work", json!({"millis": 200}), false))
        .await;
    let (_, got) = on_b
        .request("tasks/get", json!({"taskId": task}), tasks_client())
        .await;
    assert_eq!(
        got["result"]["taskId"],
        task.as_str(),
        "durable at once: {got}"
    );
    let ended = on_b.until(&task, "completed").await;
    assert!(text(&ended["result"]).contains("worked 200 ms"), "{ended}");

    // Questions of a task run on A, answered through B.
    let task = on_a.start(call("tasks-ask", json!({}), false)).await;
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    for key in ["first", "second", "third"] {
        on_b.asked(&task, key).await;
        on_b.request(
            "tasks/update",
            json!({"taskId": task, "inputResponses": {key: yes}}),
            tasks_client(),
        )
        .await;
    }
    let ended = on_b.until(&task, "completed").await;
    assert_eq!(text(&ended["result"]), "true true true", "{ended}");

    // Cancelled through B: A's handler stops.
    SAW_CANCEL.store(false, Ordering::SeqCst);
    let task = on_a
        .start(call("tasks-work", json!({"millis": 60_000}), false))
        .await;
    on_b.request("tasks/cancel", json!({"taskId": task}), tasks_client())
        .await;
    let ended = on_b.until(&task, "cancelled").await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
    assert!(SAW_CANCEL.load(Ordering::SeqCst));

    // A drains with a task still running: the task ends failed (retryable), and B reads it.
    let task = on_a
        .start(call("tasks-work", json!({"millis": 60_000}), false))
        .await;
    let outcome = drain.run(Duration::from_millis(200)).await;
    assert!(
        !outcome.is_finished(),
        "the drain waited for the task: {outcome:?}"
    );
    let ended = on_b.until(&task, "failed").await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(ended["error"]["code"], -32603, "{ended}");
    assert_eq!(ended["error"]["data"]["retryable"], true, "{ended}");
    assert!(ended.get("result").is_none(), "{ended}");
}

#[tokio::test]
async fn the_shops_export_runs_as_a_task_for_a_client_that_takes_one() {
    use afd_examples::shop::{self, ShopStore};
    let server = McpServer::builder(Registry::global())
        .strategy(Strategy::Lazy)
        .context(shop::context(ShopStore::in_memory().unwrap()))
        .build()
        .unwrap();
    let (mut entrance, _handle) = Entrance::http(server, false).await;
    let export = call("report-orders-export", json!({}), true);
    let (_, created) = entrance
        .request("tools/call", export.clone(), tasks_client())
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let ended = entrance.until(&task, "completed").await;
    let result = &ended["result"];
    assert_eq!(result["isError"], false, "{ended}");
    assert_eq!(
        result["content"][0]["resource"]["mimeType"], "text/csv",
        "{ended}"
    );
    assert_eq!(
        result["structuredContent"]["data"]["months"],
        json!(["2026-01"])
    );
    // A client without the extension gets the same export as a plain call.
    let (_, plain) = entrance.request("tools/call", export, json!({})).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(
        plain["result"]["content"][0]["resource"]["text"],
        result["content"][0]["resource"]["text"]
    );
}

#[tokio::test]
async fn a_session_client_hears_each_change_of_its_task() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    for front in [true, false] {
        let server = server(Strategy::Individual);
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if front {
                let (read, write) = tokio::io::split(server_io);
                let _ = server.serve_stream(read, write).await;
            } else {
                use rmcp::ServiceExt as _;
                if let Ok(running) = server.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            }
        });
        let (read, mut write) = tokio::io::split(client_io);
        let mut read = BufReader::new(read).lines();
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "clientInfo": {"name": "afd-tests", "version": "0"}
        }});
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "tasks-ask", "arguments": {}}});
        let mut lines = String::new();
        for message in [
            initialize,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call,
        ] {
            lines.push_str(&format!("{message}\n"));
        }
        write.write_all(lines.as_bytes()).await.unwrap();
        let mut task = None;
        let mut heard = Vec::new();
        while heard.last().map(String::as_str) != Some("completed") {
            let line = tokio::time::timeout(Duration::from_secs(10), read.next_line())
                .await
                .expect("a message within 10 s")
                .unwrap()
                .expect("the stream is open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 1 {
                assert_eq!(message["result"]["resultType"], "task", "{message}");
                task = message["result"]["taskId"].as_str().map(str::to_owned);
            }
            if message["method"] != "notifications/tasks" {
                continue;
            }
            let params = &message["params"];
            assert_eq!(params["taskId"].as_str(), task.as_deref(), "{message}");
            let status = params["status"].as_str().unwrap().to_owned();
            if status == "input_required" {
                // Answer the questions as they are announced (one answered twice is
                // ignored the second time).
                let yes = json!({"action": "accept", "content": {"confirm": true}});
                let answers: serde_json::Map<String, Value> = params["inputRequests"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(|key| (key.clone(), yes.clone()))
                    .collect();
                let update = json!({"jsonrpc": "2.0", "id": 100 + heard.len(), "method": "tasks/update",
                    "params": {"taskId": task, "inputResponses": answers}});
                write
                    .write_all(format!("{update}\n").as_bytes())
                    .await
                    .unwrap();
            }
            if status == "completed" {
                assert!(
                    params["result"].to_string().contains("true true true"),
                    "front={front}: {message}"
                );
            }
            heard.push(status);
        }
        assert!(
            heard.contains(&"input_required".to_owned()),
            "front={front}: {heard:?}"
        );
        assert!(
            heard.contains(&"working".to_owned()),
            "front={front}: {heard:?}"
        );
    }
}
