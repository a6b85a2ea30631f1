//! Operating a server as a process: `/healthz` and `/readyz` (which follow Redis down and
//! back), and the drain on SIGTERM over HTTP and stdio: the call in flight answered, an
//! SSE stream closed, new calls refused (retryable), usage statistics written to
//! PostgreSQL, exit 0; past the grace period the call answered `CANCELLED` and a non-zero
//! exit.
//!
//! Runs the test fixture's binary (its `pause` command takes as long as it is told). Needs
//! `AFD_TEST_POSTGRES_URL` and `redis-server`; `.ci/run` provides both.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use afd_tests::oauth::Caller;
use afd_tests::services::{PrivateRedis, Running, free_port, postgres_url, wait_for_port};
use serde_json::{Value, json};

const FIXTURE: &str = env!("CARGO_BIN_EXE_afd-cli-fixture");

/// The tests that count the fixture's calls in the shared PostgreSQL run one at a time.
static USAGE_COUNTED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The fixture serving streamable HTTP on `port` with `flags`, each command a tool.
fn serve_http(port: u16, flags: &[&str]) -> Running {
    let child = Command::new(FIXTURE)
        .args(["serve", "--strategy", "individual", "--http"])
        .arg(format!("127.0.0.1:{port}"))
        .args(flags)
        .env_remove("AFD_TOOL_STRATEGY")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the fixture starts");
    let running = Running(child);
    assert!(
        wait_for_port(port, Duration::from_secs(30)),
        "the fixture did not listen on {port}"
    );
    running
}

/// `GET path`: the status and the JSON body.
async fn probe(port: u16, path: &str) -> (u16, Value) {
    let response = reqwest::get(format!("http://127.0.0.1:{port}{path}"))
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

/// The calls `afd_command_usage` counts for `command`, 0 before the first.
async fn usage_calls(url: &str, command: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("PostgreSQL answers");
    tokio::spawn(connection);
    let exists = client
        .query_one("SELECT to_regclass('afd_command_usage') IS NOT NULL", &[])
        .await
        .expect("a query")
        .get::<_, bool>(0);
    if !exists {
        return 0;
    }
    client
        .query_opt(
            "SELECT calls FROM afd_command_usage WHERE command = $1",
            &[&command],
        )
        .await
        .expect("a query")
        .map_or(0, |row| row.get(0))
}

/// The command's answer in a tool result.
fn text(result: &Value) -> String {
    result["structuredContent"]["data"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_the_call_in_flight_closes_streams_writes_usage_and_exits_zero() {
    let Some(postgres) = postgres_url() else {
        return;
    };
    let _counted = USAGE_COUNTED.lock().await;
    let port = free_port();
    let mut server = serve_http(port, &["--usage-store", &postgres, "--drain", "20s"]);
    assert_eq!(probe(port, "/healthz").await.0, 200);
    let (status, ready) = probe(port, "/readyz").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["checks"]["usage"]["status"], "ok", "{ready}");

    let (greets, pauses) = (
        usage_calls(&postgres, "greet").await,
        usage_calls(&postgres, "pause").await,
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut caller = Caller::new(&url, None);
    assert_eq!(caller.open().await.status, 200);
    for name in ["Ada", "Grace", "Edsger"] {
        let result = caller.result("greet", json!({"name": name})).await;
        assert_eq!(text(&result), format!("Hello, {name}"), "{result}");
    }
    // The session's stream of server messages, open across the drain.
    let session = caller.session.clone().expect("a session");
    let stream = reqwest::Client::new()
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("the stream opens");
    assert_eq!(stream.status().as_u16(), 200);
    let stream = tokio::spawn(async move {
        let mut stream = stream;
        while let Ok(Some(_)) = stream.chunk().await {}
        Instant::now()
    });
    // A slow call in flight when SIGTERM arrives.
    let slow = {
        let mut caller = Caller::new(&url, None);
        caller.session = Some(session.clone());
        tokio::spawn(async move {
            let answer = caller
                .send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                             "params": {"name": "pause", "arguments": {"ms": 1500}}}))
                .await;
            (answer, Instant::now())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.terminate();
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Draining: not ready, and new sessions and calls are refused, retryable.
    let (status, ready) = probe(port, "/readyz").await;
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["draining"], true, "{ready}");
    let refused = caller.call("greet", json!({"name": "late"})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.message["error"]["data"]["code"], "SHUTTING_DOWN");
    assert_eq!(refused.message["error"]["data"]["retryable"], true);
    assert!(!refused.header("retry-after").is_empty(), "{refused:?}");
    let mut newcomer = Caller::new(&url, None);
    assert_eq!(newcomer.open().await.status, 503);

    // The call in flight is answered; the stream was closed; the process exits 0.
    let (answer, answered) = slow.await.unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(
        text(&answer.message["result"]),
        "paused 1500 ms",
        "{answer:?}"
    );
    let closed = tokio::time::timeout(Duration::from_secs(10), stream)
        .await
        .expect("the SSE stream is closed")
        .unwrap();
    let status = server
        .exit_within(Duration::from_secs(15))
        .expect("the server exits within the grace period");
    assert!(status.success(), "exit status {status}");
    assert!(
        closed <= answered + Duration::from_secs(2),
        "the stream stays open no longer than the drain"
    );

    // Every call made is in PostgreSQL (the refused one did not run).
    assert_eq!(usage_calls(&postgres, "greet").await - greets, 3);
    assert_eq!(usage_calls(&postgres, "pause").await - pauses, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_grace_period_the_call_is_answered_cancelled_and_the_exit_is_not_zero() {
    let Some(postgres) = postgres_url() else {
        return;
    };
    let _counted = USAGE_COUNTED.lock().await;
    let port = free_port();
    let mut server = serve_http(port, &["--usage-store", &postgres, "--drain", "500ms"]);
    let pauses = usage_calls(&postgres, "pause").await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut caller = Caller::new(&url, None);
    assert_eq!(caller.open().await.status, 200);
    let slow = tokio::spawn(async move { caller.call("pause", json!({"ms": 60_000})).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    server.terminate();
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    let result = &answer.message["result"];
    assert_eq!(result["isError"], true, "{answer:?}");
    assert_eq!(
        result["structuredContent"]["error"]["code"], "CANCELLED",
        "{answer:?}"
    );
    let status = server
        .exit_within(Duration::from_secs(15))
        .expect("the server exits after the grace period");
    assert!(!status.success(), "exit status {status}");
    assert!(sent.elapsed() < Duration::from_secs(10));
    assert_eq!(usage_calls(&postgres, "pause").await - pauses, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_naming_redis_while_it_is_down_and_recovers() {
    let Some(mut redis) = PrivateRedis::start("operations-readyz") else {
        return;
    };
    let port = free_port();
    let _server = serve_http(port, &["--sessions", &redis.url()]);
    let (status, ready) = probe(port, "/readyz").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["checks"]["sessions"]["status"], "ok", "{ready}");

    redis.stop();
    let (status, ready) = probe(port, "/readyz").await;
    assert_eq!(status, 503, "{ready}");
    let failures = ready["failures"].to_string();
    assert!(failures.contains("sessions: redis"), "{ready}");
    // Liveness does not depend on Redis.
    assert_eq!(probe(port, "/healthz").await.0, 200);

    redis.restart();
    let start = Instant::now();
    loop {
        let (status, ready) = probe(port, "/readyz").await;
        if status == 200 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still not ready: {ready}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Reads lines from the child's stdout until the answers to every one of `ids` arrived;
/// them by id.
fn answers_to(lines: &mut impl BufRead, ids: &[u64]) -> HashMap<u64, Value> {
    let mut answers = HashMap::new();
    let mut line = String::new();
    while ids.iter().any(|id| !answers.contains_key(id)) {
        line.clear();
        let read = lines.read_line(&mut line).expect("stdout reads");
        assert!(
            read > 0,
            "stdout closed before the answers to {ids:?}: {answers:?}"
        );
        let message: Value = serde_json::from_str(line.trim()).expect("a JSON line");
        if let Some(id) = message["id"].as_u64() {
            answers.insert(id, message);
        }
    }
    answers
}

#[test]
fn sigterm_on_stdio_answers_the_call_in_flight_and_refuses_new_requests() {
    let child = Command::new(FIXTURE)
        .args(["serve", "--strategy", "individual", "--drain", "20s"])
        .env_remove("AFD_TOOL_STRATEGY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the fixture starts");
    let mut server = Running(child);
    let mut stdin = server.0.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.0.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "afd-tests", "version": "0"}}}));
    assert_eq!(
        answers_to(&mut stdout, &[1])[&1]["result"]["protocolVersion"],
        "2025-11-25"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "pause", "arguments": {"ms": 1200}}}));
    std::thread::sleep(Duration::from_millis(300));
    server.terminate();
    std::thread::sleep(Duration::from_millis(200));
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "greet", "arguments": {"name": "late"}}}));
    let answers = answers_to(&mut stdout, &[2, 3, 4]);
    let refused = &answers[&3];
    assert_eq!(
        refused["error"]["data"]["code"], "SHUTTING_DOWN",
        "{refused}"
    );
    let refused = &answers[&4];
    assert_eq!(
        refused["result"]["structuredContent"]["error"]["code"], "SHUTTING_DOWN",
        "{refused}"
    );
    let answered = &answers[&2];
    assert_eq!(text(&answered["result"]), "paused 1200 ms", "{answered}");
    let status = server
        .exit_within(Duration::from_secs(15))
        .expect("the server exits");
    assert!(status.success(), "exit status {status}");
}

#[test]
fn log_format_json_writes_one_object_a_line_on_stderr() {
    let output = Command::new(FIXTURE)
        .args(["serve", "--log-format", "json"])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("the fixture runs");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<Value> = stderr
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|_| panic!("not a JSON object: {line}"))
        })
        .collect();
    let starting = lines
        .iter()
        .find(|line| line["message"] == "starting fixture")
        .unwrap_or_else(|| panic!("no start line: {stderr}"));
    assert_eq!(starting["level"], "INFO");
    assert_eq!(starting["strategy"], "lazy");
    assert!(starting["timestamp"].is_string());

    let refused = Command::new(FIXTURE)
        .args(["serve", "--log-format", "yaml"])
        .output()
        .expect("the fixture runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("use text or json"),
        "{refused:?}"
    );
}
