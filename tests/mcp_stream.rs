//! `McpServer::serve_stream` (what `serve_stdio` runs): the `tools/call` requests its front
//! answers get the same responses rmcp gives, the rest still reaches rmcp, cancellation,
//! panics, slow commands and the end of the stream, over raw newline-delimited JSON-RPC.

use std::collections::HashMap;
use std::time::Duration;

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::prelude::*;
use rmcp::ServiceExt as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    text: String,
    #[serde(default)]
    times: Option<u32>,
}

/// Echo the text back, `times` times.
#[command(category = "test")]
fn echo(input: EchoInput) -> String {
    input.text.repeat(input.times.unwrap_or(1) as usize)
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// Panic, to show the server survives.
#[command(category = "test")]
fn explode(input: Nothing) -> String {
    let Nothing {} = input;
    panic!("explode was called")
}

#[derive(Deserialize, JsonSchema)]
struct NapInput {
    ms: u64,
}

/// Sleep for `ms` milliseconds unless cancelled.
#[command(category = "test", execution_time = "slow")]
async fn nap(input: NapInput, ctx: &CommandContext) -> Result<u64, CommandError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(input.ms)) => Ok(input.ms),
        () = ctx.cancelled() => Err(CommandError::new("STOPPED", "stopped")),
    }
}

/// Sleep for `ms` milliseconds, declared with no execution time (polled inline first).
#[command(category = "test")]
async fn doze(input: NapInput) -> u64 {
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    input.ms
}

/// Count to three, reporting progress when the client asked for it.
#[command(category = "test")]
async fn count(input: Nothing, ctx: &CommandContext) -> u32 {
    let Nothing {} = input;
    if let Some(progress) = ctx.try_state::<afd_runtime::mcp::Progress>() {
        for step in 1..=3 {
            progress.report(f64::from(step), Some(3.0), None).await;
        }
    }
    3
}

/// The id of the tokio task the handler runs on.
#[command(category = "test")]
fn task_id() -> String {
    tokio::task::try_id().map_or_else(String::new, |id| id.to_string())
}

fn server(strategy: Strategy) -> McpServer {
    McpServer::builder(Registry::global())
        .name("stream")
        .version("1.0.0")
        .strategy(strategy)
        .build()
        .unwrap()
}

/// A raw JSON-RPC client on one end of a duplex pipe; the server on the other.
struct Raw {
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
    server: JoinHandle<Result<(), String>>,
}

impl Raw {
    /// `front`: `serve_stream` (as `serve_stdio`); otherwise rmcp alone.
    fn start(server: McpServer, front: bool) -> Raw {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(async move {
            if front {
                let (read, write) = tokio::io::split(server_io);
                server
                    .serve_stream(read, write)
                    .await
                    .map_err(|e| e.to_string())
            } else {
                let running = server.serve(server_io).await.map_err(|e| e.to_string())?;
                running.waiting().await.map_err(|e| e.to_string())?;
                Ok(())
            }
        });
        let (read, write) = tokio::io::split(client_io);
        Raw {
            write,
            read: BufReader::new(read),
            server,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
    }

    /// The next line, or `None` at the end of the stream.
    async fn next_line(&mut self) -> Option<String> {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut line))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        (read > 0).then_some(line)
    }

    /// The next message, or `None` at the end of the stream.
    async fn next(&mut self) -> Option<Value> {
        let line = self.next_line().await?;
        Some(serde_json::from_str(&line).expect("one JSON message per line"))
    }

    /// Reads until the responses to every id in `ids` arrived; returns them by id.
    async fn responses(&mut self, ids: &[i64]) -> HashMap<i64, Value> {
        let mut found = HashMap::new();
        while found.len() < ids.len() {
            let message = self.next().await.expect("the stream is still open");
            if let Some(id) = message.get("id").and_then(Value::as_i64) {
                found.insert(id, message);
            }
        }
        found
    }

    async fn initialize(&mut self, version: &str) -> Value {
        self.send(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}
            }
        }))
        .await;
        let answer = self.responses(&[0]).await.remove(&0).unwrap();
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }

    async fn close(mut self) -> Result<(), String> {
        self.write.shutdown().await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.server)
            .await
            .expect("the server stops when the client closes")
            .unwrap()
    }
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

/// The message with its text content read as the JSON it holds.
fn text_parsed(mut message: Value) -> Value {
    if let Some(content) = message.pointer_mut("/result/content/0/text")
        && let Some(text) = content.as_str()
        && let Ok(parsed) = serde_json::from_str::<Value>(text)
    {
        *content = parsed;
    }
    message
}

/// Timings differ between runs: the message with its text content parsed and every `...Ms`
/// and `...At` key dropped.
fn normalised(message: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|key, _| !(key.ends_with("Ms") || key.ends_with("At")));
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut message = text_parsed(message);
    strip(&mut message);
    message
}

/// The requests of the comparison: what the front answers and what it passes on.
fn script() -> Vec<Value> {
    vec![
        call(
            1,
            "afd-call",
            json!({"command": "echo", "input": {"text": "ab", "times": 2}}),
        ),
        call(
            2,
            "afd-call",
            json!({"command": "echo", "input": {"times": "x"}}),
        ),
        call(
            3,
            "afd-call",
            json!({"command": "ecko", "input": {"text": "a"}}),
        ),
        call(4, "afd-call", json!({"input": {}})),
        call(5, "afd-discover", json!({"search": "echo"})),
        call(
            19,
            "afd-call",
            json!({"command": "echo", "input": {"text": "again"}}),
        ),
        call(
            21,
            "afd-call",
            json!({"command": "echo", "input": {"text": "and again"}}),
        ),
        call(20, "afd-discover", json!({"search": "echo"})),
        call(6, "afd-detail", json!({"command": ["echo", "nap"]})),
        call(
            7,
            "afd-batch",
            json!({"commands": [
                {"command": "echo", "input": {"text": "x"}},
                {"command": "nap", "input": {"ms": 1}}
            ]}),
        ),
        call(
            8,
            "afd-pipe",
            json!({"steps": [
                {"command": "echo", "input": {"text": "y"}, "as": "first"},
            ]}),
        ),
        call(9, "no-such-tool", json!({})),
        call(10, "afd-call", json!({"command": "explode", "input": {}})),
        call(
            11,
            "afd-call",
            json!({"command": "nap", "input": {"ms": 5}}),
        ),
        call(
            12,
            "afd-call",
            json!({"command": "doze", "input": {"ms": 5}}),
        ),
        json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call",
               "params": {"name": "afd-call", "arguments": {"command": "echo", "input": {"text": "m"}},
                          "_meta": {"progressToken": "p1"}}}),
        json!({"jsonrpc": "2.0", "id": 14, "method": "tools/call",
               "params": {"name": "afd-call"}}),
        // (A call without a name is answered by the front, where rmcp says the method is
        // not found: tests/malformed.rs.)
        json!({"jsonrpc": "2.0", "id": 16, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 17, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": "s-18", "method": "tools/call",
               "params": {"name": "afd-call", "arguments": {"command": "echo", "input": {"text": "s"}}}}),
    ]
}

/// `request` as a 2026-07-28 client sends it, without `initialize`: with its own metadata
/// in `_meta`.
fn inline(mut request: Value) -> Value {
    if request.get("id").is_none() {
        return request;
    }
    let params = request
        .as_object_mut()
        .unwrap()
        .entry("params")
        .or_insert_with(|| json!({}));
    let meta = params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(|| json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "raw", "version": "1"});
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    request
}

/// Each answer as written, and normalised; `inline`: as a 2026-07-28 client, else in a
/// 2025-11-25 session.
async fn run_script(strategy: Strategy, front: bool, inline: bool) -> Vec<(String, Value)> {
    let mut client = Raw::start(server(strategy), front);
    if !inline {
        client.initialize("2025-11-25").await;
    }
    // One request at a time, so that what a call records in the session (usage, which
    // afd-discover's `suggestedNext` reads) happens in the same order both ways.
    let mut answers = Vec::new();
    for request in script() {
        let request = if inline {
            self::inline(request)
        } else {
            request
        };
        client.send(request.clone()).await;
        let (line, answer) = loop {
            let line = client
                .next_line()
                .await
                .expect("an answer to every request");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == request.get("id") {
                break (line, message);
            }
        };
        answers.push((line, normalised(answer)));
    }
    client.close().await.unwrap();
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_answers_exactly_as_rmcp_does() {
    for (strategy, inline) in [
        (Strategy::Lazy, false),
        (Strategy::Individual, false),
        (Strategy::Lazy, true),
        (Strategy::Individual, true),
    ] {
        let through_rmcp = run_script(strategy, false, inline).await;
        let through_front = run_script(strategy, true, inline).await;
        let mut identical = 0;
        for ((our_line, ours), (their_line, theirs)) in through_front.iter().zip(&through_rmcp) {
            assert_eq!(ours, theirs, "{strategy:?}");
            // Where normalising took nothing away, the very bytes are rmcp's.
            let raw = text_parsed(serde_json::from_str(our_line).unwrap());
            if normalised(raw.clone()) == raw {
                assert_eq!(our_line, their_line, "{strategy:?}");
                identical += 1;
            }
        }
        // (A 2026-07-28 listing carries its time to live, which normalising drops.)
        let at_least = if inline { 4 } else { 5 };
        assert!(
            identical >= at_least,
            "{strategy:?} (2026-07-28: {inline}): {identical} answers compared byte for byte"
        );
        let through_front: Vec<Value> = through_front.into_iter().map(|(_, v)| v).collect();
        // The script means what it says: the answers differ from each other.
        let answer = |id: Value| {
            through_front
                .iter()
                .find(|answer| answer["id"] == id)
                .unwrap_or_else(|| panic!("an answer to {id}"))
        };
        assert_eq!(
            answer(json!(1))["result"]["structuredContent"]["data"],
            "abab"
        );
        // The 2026-07-28 shape where the requests carry their own metadata.
        match inline {
            true => assert_eq!(answer(json!(1))["result"]["resultType"], "complete"),
            false => assert!(answer(json!(1))["result"].get("resultType").is_none()),
        }
        assert_eq!(answer(json!(2))["result"]["isError"], true);
        // The calls before it were recorded in the stream's one session (afd-discover is
        // a tool of the lazy strategy only).
        if strategy == Strategy::Lazy {
            let data = &answer(json!(20))["result"]["structuredContent"]["data"];
            assert_eq!(data["suggestedNext"][0]["source"], "session", "{data}");
            assert_eq!(data["suggestedNext"][0]["count"], 3, "{data}");
        }
        assert_eq!(
            answer(json!(10))["result"]["structuredContent"]["error"]["code"],
            "INTERNAL_ERROR"
        );
        assert_eq!(answer(json!(11))["result"]["structuredContent"]["data"], 5);
        assert_eq!(answer(json!(14))["result"]["isError"], true, "no arguments");
        assert!(answer(json!(17))["result"]["tools"].is_array());
        assert_eq!(
            answer(json!("s-18"))["result"]["structuredContent"]["data"],
            "s"
        );
    }
}

/// Which task ran each of three `task-id` calls; `inline`: as a 2026-07-28 client (after a
/// `tools/list` that chooses that lifecycle), else in a 2025-11-25 session.
async fn task_ids(front: bool, inline: bool) -> Vec<Value> {
    let mut client = Raw::start(server(Strategy::Lazy), front);
    if inline {
        client
            .send(self::inline(
                json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}),
            ))
            .await;
        client.responses(&[0]).await;
    } else {
        client.initialize("2025-11-25").await;
    }
    for id in 1..=3 {
        let mut request = call(id, "afd-call", json!({"command": "task-id", "input": {}}));
        // The third as rmcp's client sends every request: with a progress token.
        if id == 3 {
            request["params"]["_meta"] = json!({"progressToken": id});
        }
        if inline {
            request = self::inline(request);
        }
        client.send(request).await;
    }
    let mut answers = client.responses(&[1, 2, 3]).await;
    client.close().await.unwrap();
    (1..=3)
        .map(|id| answers.remove(&id).unwrap()["result"]["structuredContent"]["data"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_runs_quick_calls_inline_where_rmcp_spawns_a_task_each() {
    for inline in [false, true] {
        let front = task_ids(true, inline).await;
        assert!(front[0].as_str().is_some_and(|id| !id.is_empty()));
        assert!(
            front.iter().all(|id| *id == front[0]),
            "one task (2026-07-28: {inline}): {front:?}"
        );
        let rmcp = task_ids(false, inline).await;
        assert!(
            rmcp[0] != rmcp[1] && rmcp[1] != rmcp[2],
            "a task each (2026-07-28: {inline}): {rmcp:?}"
        );
    }
}

/// The messages up to the response to `id`.
async fn until_response(client: &mut Raw, id: i64) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        let message = client.next().await.expect("the stream is still open");
        let done = message["id"] == id;
        messages.push(message);
        if done {
            return messages;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_a_progress_token_reports_progress_as_through_rmcp() {
    let mut seen = Vec::new();
    for front in [true, false] {
        let mut client = Raw::start(server(Strategy::Lazy), front);
        client.initialize("2025-11-25").await;
        // rmcp's client puts a progress token on every request.
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "afd-call",
                    "arguments": {"command": "count", "input": {}},
                    "_meta": {"progressToken": "t1"}
                }}),
            )
            .await;
        let messages = until_response(&mut client, 1).await;
        client.close().await.unwrap();
        let progress: Vec<&Value> = messages
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 3, "{messages:?}");
        assert!(
            progress
                .iter()
                .all(|m| m["params"]["progressToken"] == "t1")
        );
        assert_eq!(progress[2]["params"]["progress"], 3.0);
        let answer = messages.last().unwrap();
        assert_eq!(answer["result"]["structuredContent"]["data"], 3, "{answer}");
        seen.push(messages.into_iter().map(normalised).collect::<Vec<_>>());
    }
    assert_eq!(
        seen[0], seen[1],
        "the front and rmcp send the same messages"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_slow_call_gets_no_answer_and_the_server_keeps_serving() {
    let mut client = Raw::start(server(Strategy::Lazy), true);
    client.initialize("2025-11-25").await;
    client
        .send(call(
            1,
            "afd-call",
            json!({"command": "nap", "input": {"ms": 60_000}}),
        ))
        .await;
    // The slow call runs on its own task: the next call is answered meanwhile.
    client
        .send(call(
            2,
            "afd-call",
            json!({"command": "echo", "input": {"text": "go"}}),
        ))
        .await;
    let answers = client.responses(&[2]).await;
    assert_eq!(answers[&2]["result"]["structuredContent"]["data"], "go");
    client
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1, "reason": "user"}}),
        )
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    let next = client.next().await.unwrap();
    assert_eq!(next["id"], 3, "no answer to the cancelled call: {next}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_still_running_when_the_client_closes_its_side_are_written() {
    let mut client = Raw::start(server(Strategy::Lazy), true);
    client.initialize("2025-11-25").await;
    client
        .send(call(
            1,
            "afd-call",
            json!({"command": "nap", "input": {"ms": 200}}),
        ))
        .await;
    client
        .send(call(
            2,
            "afd-call",
            json!({"command": "doze", "input": {"ms": 200}}),
        ))
        .await;
    client.write.shutdown().await.unwrap();
    let answers = client.responses(&[1, 2]).await;
    assert_eq!(answers[&1]["result"]["structuredContent"]["data"], 200);
    assert_eq!(answers[&2]["result"]["structuredContent"]["data"], 200);
    assert!(client.next().await.is_none(), "the stream ends after them");
    client.server.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_before_the_handshake_is_left_to_rmcp() {
    let mut through_front = Raw::start(server(Strategy::Lazy), true);
    let mut through_rmcp = Raw::start(server(Strategy::Lazy), false);
    let early = call(
        1,
        "afd-call",
        json!({"command": "echo", "input": {"text": "a"}}),
    );
    through_front.send(early.clone()).await;
    through_rmcp.send(early).await;
    let (ours, theirs) = (through_front.close().await, through_rmcp.close().await);
    assert!(
        ours.is_err(),
        "rmcp refuses a stream that does not initialise"
    );
    assert_eq!(ours, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_without_initialize_is_answered_by_rmcp() {
    let mut client = Raw::start(server(Strategy::Lazy), true);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "afd-call",
                "arguments": {"command": "echo", "input": {"text": "new"}},
                "_meta": meta
            }}),
        )
        .await;
    let answer = client.responses(&[1]).await.remove(&1).unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["data"], "new",
        "{answer}"
    );
    assert_eq!(
        answer["result"]["resultType"], "complete",
        "2026-07-28 shape: {answer}"
    );
    client.close().await.unwrap();
}

/// The answers to calls that name a session in `_meta`: the front builds the call's context
/// on the same path as rmcp, so the named session wins over the stream's own.
async fn session_meta_answers(front: bool) -> Vec<Value> {
    let server = server(Strategy::Lazy);
    let handle = server.dispatcher().sessions().create().await.unwrap();
    let with_session = |id: i64, name: &str, arguments: Value| {
        let mut request = call(id, name, arguments);
        request["params"]["_meta"] = json!({"afd/session": handle});
        request
    };
    let mut client = Raw::start(server, front);
    client.initialize("2025-11-25").await;
    let requests = [
        call(
            1,
            "afd-call",
            json!({"command": "echo", "input": {"text": "a"}}),
        ),
        with_session(
            2,
            "afd-call",
            json!({"command": "echo", "input": {"text": "b"}}),
        ),
        with_session(
            3,
            "afd-call",
            json!({"command": "echo", "input": {"text": "c"}}),
        ),
        with_session(4, "afd-discover", json!({"search": "echo"})),
    ];
    let mut answers = Vec::new();
    for (id, request) in (1..).zip(requests) {
        client.send(request).await;
        answers.push(normalised(
            client.responses(&[id]).await.remove(&id).unwrap(),
        ));
    }
    client.close().await.unwrap();
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_named_in_meta_is_the_calls_session_through_the_front_as_through_rmcp() {
    let through_rmcp = session_meta_answers(false).await;
    let through_front = session_meta_answers(true).await;
    assert_eq!(through_front, through_rmcp);
    let data = &through_front[3]["result"]["structuredContent"]["data"];
    assert_eq!(data["suggestedNext"][0]["source"], "session", "{data}");
    // echo followed echo once: the session holds the two calls that named it, not the one
    // made in the stream's own session before them.
    assert_eq!(data["suggestedNext"][0]["count"], 1, "{data}");
}
