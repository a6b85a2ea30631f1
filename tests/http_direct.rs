//! The HTTP front's direct path for stateless calls (2026-07-28) and for the calls of a
//! 2025-11-25 session: the same answers as rmcp's path, as `application/json` (an SSE
//! stream when the call logged messages or changed the session's listing); every request
//! rmcp would refuse still refused as rmcp refuses it; a session's calls cancellable, its
//! state shared with rmcp's path, and the session kept from idling out; no stall on a
//! kept-alive connection whose client leaves Nagle's algorithm on; a session's `DELETE`
//! answered 204; progress streamed as it is reported.

use std::io::{BufRead, BufReader, Read as _, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use afd_runtime::client::LogLevel;
use afd_runtime::mcp::{HttpHandle, HttpOptions, McpServer};
use afd_runtime::prelude::*;
use afd_tests::http::HttpSession;

#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

/// Adds two numbers.
#[command(category = "direct")]
fn direct_add(input: Pair) -> i64 {
    input.a + input.b
}

/// Waits until cancelled, or for `ms` milliseconds.
#[command(category = "direct", execution_time = "slow")]
async fn direct_wait(input: Wait, ctx: &CommandContext) -> Result<u64, CommandError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(input.ms)) => Ok(input.ms),
        () = ctx.cancelled() => Err(CommandError::new("STOPPED", "stopped")),
    }
}

#[derive(Deserialize, JsonSchema)]
struct Wait {
    ms: u64,
}

/// Reports a step done, waits for [`GO`] when told to, reports the second, and answers.
#[command(category = "direct")]
async fn direct_steps(input: Steps, ctx: &CommandContext) -> u64 {
    ctx.report_progress(1.0, Some(2.0), Some("first".into()))
        .await;
    if input.wait {
        GO.notified().await;
    }
    ctx.report_progress(2.0, Some(2.0), None).await;
    2
}

#[derive(Deserialize, JsonSchema)]
struct Steps {
    wait: bool,
}

/// Lets a waiting `direct-steps` go on.
static GO: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Tells its client what it does, then answers.
#[command(category = "direct")]
async fn direct_chatty(ctx: &CommandContext) -> bool {
    ctx.log(LogLevel::Info, "starting").await;
    ctx.log(LogLevel::Warning, json!({"almost": "done"})).await;
    true
}

/// `server` bound on a free port of 127.0.0.1 with the default options.
async fn bind(server: McpServer) -> HttpHandle {
    server
        .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .expect("bound")
}

async fn server(options: impl FnOnce(HttpOptions) -> HttpOptions) -> HttpHandle {
    McpServer::builder(Registry::global())
        .build()
        .expect("a server")
        .bind_http(options(HttpOptions::new("127.0.0.1:0".parse().unwrap())))
        .await
        .expect("bound")
}

/// A stateless `tools/call` of `tool` as a 2026-07-28 client sends it.
fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "afd-tests", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
}

/// What a POST was answered: status, content type, and the JSON-RPC messages of the body
/// (one for JSON, each `data:` event for SSE).
#[derive(Debug)]
struct Answered {
    status: u16,
    content_type: String,
    messages: Vec<Value>,
}

/// POSTs `body` with the headers a 2026-07-28 client sends, then `extra` (which replace
/// them by name).
async fn post(addr: SocketAddr, body: &Value, extra: &[(&str, &str)]) -> Answered {
    let headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        (
            "mcp-name",
            body["params"]["name"].as_str().unwrap_or("").to_owned(),
        ),
    ];
    send(addr, headers, body, extra).await
}

/// POSTs `body` on session `id` with the headers a 2025-11-25 client sends, then `extra`.
async fn on_session(addr: SocketAddr, id: &str, body: &Value, extra: &[(&str, &str)]) -> Answered {
    let headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", "2025-11-25".to_owned()),
        ("mcp-session-id", id.to_owned()),
    ];
    send(addr, headers, body, extra).await
}

/// Opens a 2025-11-25 session for a client of `capabilities`: its id.
async fn open_session(addr: SocketAddr, capabilities: Value) -> String {
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "afd-tests", "version": "0"}
                }
            })
            .to_string(),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status().as_u16(), 200);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .expect("an id")
        .to_owned();
    response.text().await.expect("the answer");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(on_session(addr, &id, &initialized, &[]).await.status, 202);
    id
}

/// A server with the default options, and a session open on it.
async fn serving_a_session() -> (HttpHandle, String) {
    let handle = server(|options| options).await;
    let session = open_session(handle.local_addr(), json!({})).await;
    (handle, session)
}

/// A `tools/call` of `tool` as a 2025-11-25 client sends it on a session.
fn session_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}
    })
}

/// POSTs `body` with `headers`, then `extra` (which replace them by name).
async fn send(
    addr: SocketAddr,
    mut headers: Vec<(&str, String)>,
    body: &Value,
    extra: &[(&str, &str)],
) -> Answered {
    for (name, value) in extra {
        headers.retain(|(kept, _)| kept != name);
        headers.push((name, (*value).to_owned()));
    }
    let mut request = reqwest::Client::new().post(format!("http://{addr}/mcp"));
    for (name, value) in &headers {
        request = request.header(*name, value);
    }
    let response = request.body(body.to_string()).send().await.expect("sent");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = response.text().await.expect("a body");
    let messages = if content_type.starts_with("text/event-stream") {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .map(|data| serde_json::from_str(data).expect("an event of JSON"))
            .collect()
    } else {
        serde_json::from_str(&text)
            .map(|one| vec![one])
            .unwrap_or_default()
    };
    Answered {
        status,
        content_type,
        messages,
    }
}

/// The method of each message answered, `(answer)` for the response.
fn methods(answered: &Answered) -> Vec<&str> {
    answered
        .messages
        .iter()
        .map(|message| message["method"].as_str().unwrap_or("(answer)"))
        .collect()
}

/// `messages` without the execution times their results report (which differ call by
/// call), in the structured content and in its text.
fn timeless(mut messages: Vec<Value>) -> Vec<Value> {
    let strip = |result: &mut Value| {
        if let Some(metadata) = result.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("executionTimeMs");
        }
    };
    for message in &mut messages {
        let result = &mut message["result"];
        strip(&mut result["structuredContent"]);
        if let Some(blocks) = result["content"].as_array_mut() {
            for block in blocks {
                if let Some(text) = block["text"].as_str()
                    && let Ok(mut parsed) = serde_json::from_str::<Value>(text)
                {
                    strip(&mut parsed);
                    block["text"] = Value::String(parsed.to_string());
                }
            }
        }
    }
    messages
}

/// Sent to rmcp rather than the direct path: a weighted `Accept`, which rmcp reads.
const THROUGH_RMCP: (&str, &str) = ("accept", "application/json;q=1, text/event-stream;q=1");

/// Calls whose answers the direct path and rmcp's must agree on: a success, an invalid
/// input, an unknown command, a search.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "afd-call",
            json!({"command": "direct-add", "input": {"a": 2, "b": 3}}),
        ),
        (
            "afd-call",
            json!({"command": "direct-add", "input": {"a": "two"}}),
        ),
        ("afd-call", json!({"command": "no-such-command"})),
        ("afd-discover", json!({"search": "add"})),
    ]
}

/// `direct` is the direct path's answer to `request` (one JSON message), `rmcp` rmcp's
/// (SSE), and they say the same.
fn same_answers(request: &Value, direct: Answered, rmcp: Answered) {
    assert_eq!(direct.status, 200, "{direct:?}");
    assert_eq!(direct.content_type, "application/json", "{direct:?}");
    assert_eq!(direct.messages.len(), 1, "{direct:?}");
    assert_eq!(direct.messages[0]["id"], request["id"]);
    assert_eq!(rmcp.status, 200, "{rmcp:?}");
    assert!(
        rmcp.content_type.starts_with("text/event-stream"),
        "{rmcp:?}"
    );
    assert_eq!(
        timeless(rmcp.messages),
        timeless(direct.messages),
        "the same answer to {request}"
    );
}

#[tokio::test]
async fn a_stateless_call_is_answered_as_json_as_rmcp_would_answer_it() {
    let handle = server(|options| options).await;
    let addr = handle.local_addr();
    for (tool, arguments) in calls() {
        let request = call(7, tool, arguments);
        let direct = post(addr, &request, &[]).await;
        let result = &direct.messages[0]["result"];
        assert_eq!(result["resultType"], "complete", "{direct:?}");
        let rmcp = post(addr, &request, &[THROUGH_RMCP]).await;
        same_answers(&request, direct, rmcp);
    }
    let sum = post(
        addr,
        &call(
            8,
            "afd-call",
            json!({"command": "direct-add", "input": {"a": 2, "b": 3}}),
        ),
        &[],
    )
    .await;
    assert_eq!(
        sum.messages[0]["result"]["structuredContent"]["data"], 5,
        "{sum:?}"
    );
    assert_eq!(sum.messages[0]["result"]["isError"], false);
    handle.shutdown().await;
}

#[tokio::test]
async fn log_messages_go_first_in_an_sse_stream_as_rmcp_sends_them() {
    let handle = server(|options| options).await;
    let addr = handle.local_addr();
    // A 2026-07-28 request gets log messages only at the level its `_meta` names.
    let mut request = call(3, "afd-call", json!({"command": "direct-chatty"}));
    let quiet = post(addr, &request, &[]).await;
    assert_eq!(methods(&quiet), ["(answer)"], "{quiet:?}");
    let quiet_rmcp = post(addr, &request, &[THROUGH_RMCP]).await;
    assert_eq!(methods(&quiet_rmcp), ["(answer)"], "{quiet_rmcp:?}");
    request["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let direct = post(addr, &request, &[]).await;
    assert!(
        direct.content_type.starts_with("text/event-stream"),
        "{direct:?}"
    );
    assert_eq!(
        methods(&direct),
        ["notifications/message", "notifications/message", "(answer)"]
    );
    assert_eq!(direct.messages[0]["params"]["data"], "starting");
    assert_eq!(direct.messages[1]["params"]["level"], "warning");
    let rmcp = post(addr, &request, &[THROUGH_RMCP]).await;
    assert_eq!(timeless(rmcp.messages), timeless(direct.messages));
    handle.shutdown().await;
}

#[tokio::test]
async fn what_rmcp_refuses_is_still_refused_as_it_refuses_it() {
    let handle = server(|options| options.bearer_token("s3cret")).await;
    let addr = handle.local_addr();
    let request = call(
        5,
        "afd-call",
        json!({"command": "direct-add", "input": {"a": 1, "b": 1}}),
    );
    let bearer = ("authorization", "Bearer s3cret");

    // The token first: the front's own check.
    assert_eq!(post(addr, &request, &[]).await.status, 401);
    let allowed = post(addr, &request, &[bearer]).await;
    assert_eq!(allowed.status, 200, "{allowed:?}");
    assert_eq!(allowed.content_type, "application/json");

    // Then rmcp's, each the same with and without the weighted Accept that sends the
    // request to rmcp.
    for (extra, status) in [
        (("host", "evil.example"), 403),
        (("origin", "http://evil.example"), 403),
        (("accept", "application/json"), 406),
        (("mcp-name", "afd-batch"), 400),
        (("mcp-method", "tools/list"), 400),
        (("mcp-protocol-version", "2099-01-01"), 400),
    ] {
        let refused = post(addr, &request, &[bearer, extra]).await;
        assert_eq!(refused.status, status, "{extra:?}: {refused:?}");
    }
    let mut unversioned = request.clone();
    unversioned["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/protocolVersion");
    let refused = post(addr, &unversioned, &[bearer]).await;
    assert_eq!(refused.status, 400, "{refused:?}");
    let through_rmcp = post(addr, &unversioned, &[bearer, THROUGH_RMCP]).await;
    assert_eq!(through_rmcp.messages, refused.messages);
    handle.shutdown().await;
}

/// One HTTP/1.1 exchange on `stream`: the answer's body (sent with a `Content-Length`).
fn exchange(stream: &mut BufReader<TcpStream>, addr: SocketAddr, body: &str) -> String {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/call\r\nmcp-name: afd-call\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // The request in one write, as curl sends it (a client that splits it leaves the
    // second part waiting for the server's delayed acknowledgement: its own stall).
    stream.get_mut().write_all(request.as_bytes()).unwrap();
    let mut length = None;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut answer = vec![0; length.expect("a Content-Length")];
    stream.read_exact(&mut answer).unwrap();
    String::from_utf8(answer).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_on_a_kept_alive_connection_without_nodelay_do_not_stall() {
    let handle = server(|options| options).await;
    let addr = handle.local_addr();
    let times = tokio::task::spawn_blocking(move || {
        // A client that leaves Nagle's algorithm on, as curl and wrk do not and many do.
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(false).unwrap();
        let mut stream = BufReader::new(stream);
        let body = call(
            1,
            "afd-call",
            json!({"command": "direct-add", "input": {"a": 2, "b": 3}}),
        )
        .to_string();
        let mut times = Vec::new();
        for _ in 0..21 {
            let started = Instant::now();
            let answer = exchange(&mut stream, addr, &body);
            times.push(started.elapsed());
            let answer: Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
        times
    })
    .await
    .unwrap();
    // A stall (an answer in two segments meeting the client's delayed acknowledgement)
    // costs 40 ms a call; an answer without one, well under a millisecond here.
    let mut sorted = times.clone();
    sorted.sort_unstable();
    assert!(
        sorted[sorted.len() / 2] < Duration::from_millis(20),
        "each call on the connection stalled: {times:?}"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn a_session_deleted_is_answered_204() {
    let handle = server(|options| options).await;
    let addr = handle.local_addr();
    let session = HttpSession::open(addr, "/mcp").await;
    let deleted = reqwest::Client::new()
        .delete(format!("http://{addr}/mcp"))
        .header("mcp-session-id", session.id())
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    handle.shutdown().await;
}

#[tokio::test]
async fn a_stateless_call_during_a_drain_is_refused_retryable_with_its_id() {
    let drain = afd_runtime::ops::Drain::new();
    let handle = bind(
        McpServer::builder(Registry::global())
            .drain(drain.clone())
            .build()
            .expect("a server"),
    )
    .await;
    let addr = handle.local_addr();
    let before = post(addr, &call(7, "direct-add", json!({"a": 2, "b": 3})), &[]).await;
    assert_eq!(before.status, 200, "{before:?}");
    assert_eq!(before.messages[0]["result"]["structuredContent"]["data"], 5);
    drain.begin();
    let refused = post(addr, &call(8, "direct-add", json!({"a": 2, "b": 3})), &[]).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.messages[0]["id"], 8, "{refused:?}");
    assert_eq!(
        refused.messages[0]["error"]["data"]["code"], "SHUTTING_DOWN",
        "{refused:?}"
    );
    assert_eq!(refused.messages[0]["error"]["data"]["retryable"], true);
}

/// A catalog replaced after the server is bound (`McpServer::replace_catalog`) is the one
/// both paths call: a command it withdraws is not found, on the direct path as on rmcp's.
#[tokio::test]
async fn a_replaced_catalog_is_the_one_both_paths_call() {
    let server = McpServer::builder(Registry::global())
        .build()
        .expect("a server");
    let handle = bind(server.clone()).await;
    let addr = handle.local_addr();
    let before = post(addr, &call(7, "direct-add", json!({"a": 2, "b": 3})), &[]).await;
    assert_eq!(
        before.messages[0]["result"]["structuredContent"]["data"], 5,
        "{before:?}"
    );
    let withdrawn = McpServer::builder(Registry::global())
        .dispatch(|d| d.hide(["direct-add"]))
        .build()
        .expect("a server");
    server.replace_catalog(&withdrawn);
    for extra in [&[][..], &[THROUGH_RMCP][..]] {
        let after = post(addr, &call(8, "direct-add", json!({"a": 2, "b": 3})), extra).await;
        assert_eq!(
            after.messages[0]["result"]["structuredContent"]["error"]["code"], "COMMAND_NOT_FOUND",
            "{after:?}"
        );
    }
    handle.shutdown().await;
}

#[tokio::test]
async fn a_session_call_is_answered_as_json_as_rmcp_would_answer_it() {
    let (handle, session) = serving_a_session().await;
    let addr = handle.local_addr();
    let by_name = ("direct-add", json!({"a": 2, "b": 3}));
    for (tool, arguments) in calls().into_iter().chain([by_name]) {
        let request = session_call(7, tool, arguments);
        let direct = on_session(addr, &session, &request, &[]).await;
        let result = &direct.messages[0]["result"];
        assert!(result.get("resultType").is_none(), "{direct:?}");
        let rmcp = on_session(addr, &session, &request, &[THROUGH_RMCP]).await;
        same_answers(&request, direct, rmcp);
    }
    // The headers a newer client adds, when they agree with the body, keep the call here.
    let named = on_session(
        addr,
        &session,
        &session_call(8, "direct-add", json!({"a": 1, "b": 1})),
        &[("mcp-method", "tools/call"), ("mcp-name", "direct-add")],
    )
    .await;
    assert_eq!(named.content_type, "application/json", "{named:?}");
    assert_eq!(named.messages[0]["result"]["structuredContent"]["data"], 2);
    handle.shutdown().await;
}

#[tokio::test]
async fn a_session_call_that_changes_the_listing_announces_it_before_the_answer() {
    let handle = bind(
        McpServer::builder(Registry::global())
            .session_tools(true)
            .build()
            .expect("a server"),
    )
    .await;
    let addr = handle.local_addr();
    let session = open_session(addr, json!({})).await;
    let listed = |messages: &[Value]| -> Vec<String> {
        messages[0]["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let before = on_session(addr, &session, &list, &[]).await;
    assert!(!listed(&before.messages).contains(&"direct-add".to_owned()));

    let loaded = on_session(
        addr,
        &session,
        &session_call(
            2,
            "afd-discover",
            json!({"search": "add two numbers", "activate": true, "limit": 1}),
        ),
        &[],
    )
    .await;
    assert_eq!(loaded.content_type, "text/event-stream", "{loaded:?}");
    assert_eq!(loaded.messages.len(), 2, "{loaded:?}");
    assert_eq!(
        loaded.messages[0],
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(loaded.messages[1]["id"], 2);
    assert_eq!(
        loaded.messages[1]["result"]["structuredContent"]["data"]["loadedAfter"],
        json!(["direct-add"]),
        "{loaded:?}"
    );
    // rmcp's path serves the same session: the command is listed now.
    let after = on_session(addr, &session, &list, &[]).await;
    assert!(
        listed(&after.messages).contains(&"direct-add".to_owned()),
        "{after:?}"
    );
    // Another session's listing is its own.
    let other = open_session(addr, json!({})).await;
    let theirs = on_session(addr, &other, &list, &[]).await;
    assert!(!listed(&theirs.messages).contains(&"direct-add".to_owned()));
    handle.shutdown().await;
}

#[tokio::test]
async fn a_session_client_the_server_may_ask_has_its_calls_served_by_rmcp() {
    let handle = server(|options| options).await;
    let addr = handle.local_addr();
    for capabilities in [json!({"sampling": {}}), json!({"elicitation": {}})] {
        let session = open_session(addr, capabilities.clone()).await;
        let answered = on_session(
            addr,
            &session,
            &session_call(3, "direct-add", json!({"a": 2, "b": 3})),
            &[],
        )
        .await;
        assert!(
            answered.content_type.starts_with("text/event-stream"),
            "{answered:?}"
        );
        assert_eq!(
            answered.messages[0]["result"]["structuredContent"]["data"],
            5
        );
        // A stateless client declares its capabilities with each request, and is asked
        // through rounds, which need no stream: its call is answered on the direct path.
        let mut request = call(4, "direct-add", json!({"a": 2, "b": 3}));
        request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            capabilities.clone();
        let answered = post(addr, &request, &[]).await;
        assert_eq!(
            answered.content_type, "application/json",
            "{capabilities}: {answered:?}"
        );
        assert_eq!(
            answered.messages[0]["result"]["structuredContent"]["data"],
            5
        );
    }
    handle.shutdown().await;
}

#[tokio::test]
async fn a_session_call_is_cancelled_by_notifications_cancelled() {
    let (handle, session) = serving_a_session().await;
    let addr = handle.local_addr();
    let waiting = tokio::spawn({
        let session = session.clone();
        async move {
            on_session(
                addr,
                &session,
                &session_call(9, "direct-wait", json!({"ms": 30_000})),
                &[],
            )
            .await
        }
    });
    let started = Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "no longer needed"}
    });
    assert_eq!(on_session(addr, &session, &cancel, &[]).await.status, 202);
    let answered = waiting.await.expect("answered");
    assert!(started.elapsed() < Duration::from_secs(20), "not cancelled");
    assert_eq!(answered.content_type, "application/json", "{answered:?}");
    assert_eq!(answered.messages[0]["id"], 9);
    assert_eq!(
        answered.messages[0]["result"]["isError"], true,
        "{answered:?}"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn direct_calls_keep_their_session_from_idling_out_and_end_with_it() {
    let idle = Duration::from_millis(800);
    let handle = server(|options| options.session_idle_timeout(idle)).await;
    let addr = handle.local_addr();
    let session = open_session(addr, json!({})).await;
    let add = session_call(4, "direct-add", json!({"a": 2, "b": 3}));
    // Three idle timeouts of calls that rmcp's session does not see.
    let until = Instant::now() + idle * 3;
    while Instant::now() < until {
        let answered = on_session(addr, &session, &add, &[]).await;
        assert_eq!(answered.status, 200, "the session idled out: {answered:?}");
        assert_eq!(answered.content_type, "application/json");
        tokio::time::sleep(idle / 8).await;
    }
    // rmcp's path still knows the session.
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"});
    assert_eq!(on_session(addr, &session, &ping, &[]).await.status, 200);
    // Left idle, it ends, for both paths.
    tokio::time::sleep(idle * 2).await;
    assert_eq!(on_session(addr, &session, &add, &[]).await.status, 404);

    // A session closed with DELETE: its calls are not found.
    let closed = open_session(addr, json!({})).await;
    assert_eq!(on_session(addr, &closed, &add, &[]).await.status, 200);
    let deleted = reqwest::Client::new()
        .delete(format!("http://{addr}/mcp"))
        .header("mcp-session-id", &closed)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    assert_eq!(on_session(addr, &closed, &add, &[]).await.status, 404);
    handle.shutdown().await;
}

/// `call` with a progress token in its `_meta`.
fn with_progress_token(mut call: Value, token: &str) -> Value {
    let params = call["params"].as_object_mut().expect("params");
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    meta["progressToken"] = json!(token);
    call
}

#[tokio::test]
async fn progress_reported_at_once_goes_before_the_answer_as_rmcp_sends_it() {
    let (handle, session) = serving_a_session().await;
    let addr = handle.local_addr();
    let arguments = json!({"command": "direct-steps", "input": {"wait": false}});
    let stateless = with_progress_token(call(5, "afd-call", arguments.clone()), "p-5");
    let on = with_progress_token(session_call(6, "afd-call", arguments), "p-6");
    let answers = [
        (
            post(addr, &stateless, &[]).await,
            post(addr, &stateless, &[THROUGH_RMCP]).await,
        ),
        (
            on_session(addr, &session, &on, &[]).await,
            on_session(addr, &session, &on, &[THROUGH_RMCP]).await,
        ),
    ];
    for (direct, rmcp) in answers {
        assert_eq!(direct.content_type, "text/event-stream", "{direct:?}");
        assert_eq!(
            methods(&direct),
            [
                "notifications/progress",
                "notifications/progress",
                "(answer)"
            ]
        );
        assert_eq!(direct.messages[0]["params"]["message"], "first");
        assert_eq!(direct.messages[2]["result"]["structuredContent"]["data"], 2);
        assert_eq!(timeless(rmcp.messages), timeless(direct.messages));
    }
    handle.shutdown().await;
}

#[tokio::test]
async fn progress_of_a_call_still_running_is_streamed_as_it_is_reported() {
    let (handle, session) = serving_a_session().await;
    let addr = handle.local_addr();
    let request = with_progress_token(
        session_call(
            7,
            "afd-call",
            json!({"command": "direct-steps", "input": {"wait": true}}),
        ),
        "p-7",
    );
    let mut response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .body(request.to_string())
        .send()
        .await
        .expect("sent");
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    // The first report arrives while the call waits: the body is written as it runs.
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .expect("the first progress, before the call ends")
            .expect("a chunk")
            .expect("more of the body");
        text.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
    }
    assert!(text.contains("notifications/progress"), "{text}");
    assert!(text.contains("\"first\""), "{text}");
    assert!(!text.contains("\"result\""), "{text}");
    GO.notify_one();
    while let Some(chunk) = response.chunk().await.expect("the rest") {
        text.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
    }
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("JSON"))
        .collect();
    assert_eq!(messages.len(), 3, "{text}");
    assert_eq!(messages[1]["params"]["progress"], 2.0);
    assert_eq!(messages[1]["params"]["progressToken"], "p-7");
    assert_eq!(messages[2]["id"], 7);
    assert_eq!(messages[2]["result"]["structuredContent"]["data"], 2);
    handle.shutdown().await;
}

#[tokio::test]
async fn methods_the_stateless_revision_removed_are_unknown_there_with_404() {
    let handle = server(|options| options).await;
    let addr = handle.local_addr();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "afd-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    for (id, method) in [
        (1, "initialize"),
        (2, "logging/setLevel"),
        (3, "resources/subscribe"),
        (4, "resources/unsubscribe"),
    ] {
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta}});
        let answered = post(addr, &request, &[("mcp-method", method)]).await;
        assert_eq!(answered.status, 404, "{method}: {answered:?}");
        let message = &answered.messages[0];
        assert_eq!(message["id"], id, "{method}: {answered:?}");
        assert_eq!(message["error"]["code"], -32601, "{method}: {answered:?}");
        assert!(
            message["error"]["message"]
                .as_str()
                .is_some_and(|text| text.contains(method)),
            "{method}: {answered:?}"
        );
    }
    // On the revision that has them, the same methods are read as they always were.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 9, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "afd-tests", "version": "0"}}
    });
    let legacy = send(
        addr,
        vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
        ],
        &initialize,
        &[],
    )
    .await;
    assert_eq!(legacy.status, 200, "{legacy:?}");
    assert_eq!(
        legacy.messages[0]["result"]["protocolVersion"],
        "2025-11-25"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn every_listed_tool_has_a_display_title() {
    use afd_runtime::mcp::Strategy;
    for strategy in [
        Strategy::Individual,
        Strategy::Grouped,
        Strategy::Lazy,
        Strategy::Hybrid,
    ] {
        let server = McpServer::builder(Registry::global())
            .strategy(strategy)
            .build()
            .expect("a server");
        assert!(!server.tools().is_empty());
        for tool in server.tools() {
            let title = tool.title.as_deref().unwrap_or_default();
            assert!(
                !title.trim().is_empty(),
                "{strategy:?}: {} has no title",
                tool.name
            );
        }
    }
}
