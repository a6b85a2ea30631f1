//! Traces as a backend receives them: a shop replica and the gateway export by OTLP (HTTP,
//! JSON, as `OTEL_*` variables say) to a receiver this test runs; the spans are checked one
//! by one: names, kinds, the MCP semantic conventions' attributes, parentage from the
//! `traceparent` the official Python client sends in `_meta`, a link to the HTTP headers'
//! context, the span of each command afd-call runs, the error type of a failed call, and
//! the gateway's CLIENT span to its upstream in the same trace as the upstream's own span.
//!
//! Needs `AFD_INTEROP_PYTHON` (the official `mcp` client); `.ci/run` provides it.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use afd_tests::oauth::Caller;
use afd_tests::python;
use afd_tests::services::{Running, free_port, temp_dir, wait_for_port};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const SHOP: &str = env!("CARGO_BIN_EXE_afd-example-shop");

/// One span as the receiver got it.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    trace: String,
    id: String,
    parent: String,
    name: String,
    /// OTLP's span kind: 1 internal, 2 server, 3 client.
    kind: i64,
    attributes: BTreeMap<String, String>,
    links: Vec<String>,
    /// OTLP's status code: 0 unset, 1 ok, 2 error.
    status: i64,
}

/// An OTLP/HTTP receiver (JSON): keeps every span posted to `/v1/traces`.
struct Receiver {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
        let kept = spans.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let kept = kept.clone();
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                            let kept = kept.clone();
                            async move {
                                let path = request.uri().path().to_owned();
                                let body =
                                    request.into_body().collect().await.map(|b| b.to_bytes());
                                if path == "/v1/traces"
                                    && let Ok(body) = body
                                    && let Ok(json) = serde_json::from_slice::<Value>(&body)
                                {
                                    kept.lock().unwrap().extend(parse(&json));
                                }
                                Ok::<_, Infallible>(hyper::Response::new(Full::new(
                                    Bytes::from_static(b"{}"),
                                )))
                            }
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver { addr, spans }
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Waits until a span satisfies `found`, at most 20 s; every span received by then.
    async fn wait_for(&self, found: impl Fn(&Span) -> bool) -> Vec<Span> {
        self.wait_until(|spans| spans.iter().any(&found)).await
    }

    /// Waits until the spans received so far satisfy `done`: spans from
    /// several processes arrive in separate batches, in no fixed order.
    async fn wait_until(&self, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let start = Instant::now();
        loop {
            let spans = self.spans.lock().unwrap().clone();
            if done(&spans) {
                return spans;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the span did not arrive; received: {spans:#?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The value of an OTLP `AnyValue` as text.
fn text(value: &Value) -> String {
    match value.as_object().and_then(|map| map.values().next()) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn attributes(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|pair| Some((pair["key"].as_str()?.to_owned(), text(&pair["value"]))))
        .collect()
}

/// The spans of one OTLP JSON export request.
fn parse(request: &Value) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource in request["resourceSpans"].as_array().into_iter().flatten() {
        let service = attributes(&resource["resource"]["attributes"])
            .remove("service.name")
            .unwrap_or_default();
        for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
            for span in scope["spans"].as_array().into_iter().flatten() {
                spans.push(Span {
                    service: service.clone(),
                    trace: span["traceId"].as_str().unwrap_or_default().to_owned(),
                    id: span["spanId"].as_str().unwrap_or_default().to_owned(),
                    parent: span["parentSpanId"].as_str().unwrap_or_default().to_owned(),
                    name: span["name"].as_str().unwrap_or_default().to_owned(),
                    kind: span["kind"].as_i64().unwrap_or_default(),
                    attributes: attributes(&span["attributes"]),
                    links: span["links"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|link| link["traceId"].as_str().map(str::to_owned))
                        .collect(),
                    status: span["status"]["code"].as_i64().unwrap_or_default(),
                });
            }
        }
    }
    spans
}

/// A program exporting traces to `receiver` by OTLP/HTTP JSON, its batches sent at once.
fn exporting(command: &mut Command, receiver: &Receiver) {
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_TRACES_EXPORTER")
        .env_remove("AFD_TOOL_STRATEGY");
}

/// A shop replica serving HTTP on `port`, exporting to `receiver`.
fn shop(port: u16, receiver: &Receiver) -> Running {
    let mut command = Command::new(SHOP);
    command.stderr(Stdio::inherit());
    serving(command, port, receiver)
}

/// `command` (the shop) serving HTTP on `port`, exporting to `receiver`.
fn serving(mut command: Command, port: u16, receiver: &Receiver) -> Running {
    command
        .args(["serve", "--http"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null());
    exporting(&mut command, receiver);
    let running = Running(command.spawn().expect("the shop starts"));
    assert!(
        wait_for_port(port, Duration::from_secs(30)),
        "the shop did not listen on {port}"
    );
    running
}

/// Sends `caller`'s session a `tools/call` of `tool` in the trace [`TRACE`] (`_meta`'s
/// `traceparent`, its parent [`PARENT`]); it must succeed.
async fn call_in_trace(caller: &mut Caller, tool: &str, arguments: Value) {
    let answer = caller
        .send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": tool, "arguments": arguments,
                "_meta": {"traceparent": format!("00-{TRACE}-{PARENT}-01")}
            }}),
        )
        .await;
    assert_eq!(answer.message["result"]["isError"], false, "{answer:?}");
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_a_server_span_in_the_callers_trace_with_a_span_per_command() {
    let Some(python) = python::client() else {
        return;
    };
    let receiver = Receiver::start().await;
    let port = free_port();
    let _shop = shop(port, &receiver);
    let url = format!("http://127.0.0.1:{port}/mcp");

    // The official Python client, its trace context in `_meta`.
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/client.py");
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let output = Command::new(&python)
        .arg(&script)
        .args([&url, &traceparent, "afd-call"])
        .arg(json!({"command": "product-list", "input": {"limit": 1}}).to_string())
        .output()
        .expect("python runs");
    let printed: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(printed["isError"], false, "{printed}");

    let spans = receiver
        .wait_for(|span| span.trace == TRACE && span.name == "execute_tool product-list")
        .await;
    let server = spans
        .iter()
        .find(|span| span.trace == TRACE && span.name == "tools/call afd-call")
        .unwrap_or_else(|| panic!("no SERVER span in the caller's trace: {spans:#?}"));
    assert_eq!(server.kind, 2, "SERVER: {server:#?}");
    assert_eq!(server.parent, PARENT, "the client's span is the parent");
    assert_eq!(server.service, "shop");
    let attributes = &server.attributes;
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.tool.name"], "afd-call");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["network.transport"], "tcp");
    assert_eq!(attributes["client.address"], "127.0.0.1");
    assert!(
        attributes.contains_key("jsonrpc.request.id"),
        "{attributes:?}"
    );
    assert!(
        attributes.contains_key("mcp.protocol.version"),
        "{attributes:?}"
    );
    assert!(!attributes.contains_key("error.type"));
    // Neither arguments nor results.
    assert!(
        !attributes.values().any(|value| value.contains("limit")),
        "{attributes:?}"
    );
    let command = spans
        .iter()
        .find(|span| span.name == "execute_tool product-list")
        .unwrap();
    assert_eq!(command.trace, TRACE);
    assert_eq!(
        command.parent, server.id,
        "the command's span is the call's child"
    );
    assert_eq!(command.kind, 1);
    // The client's `initialize` is a SERVER span of its own, named by its method.
    let spans = receiver.wait_for(|span| span.name == "initialize").await;
    let initialize = spans.iter().find(|span| span.name == "initialize").unwrap();
    assert_eq!(initialize.kind, 2);
    assert_eq!(initialize.attributes["mcp.method.name"], "initialize");

    // A batch and a pipeline: a span per command they run, each the call's child.
    let mut caller = Caller::new(&url, None);
    assert_eq!(caller.open().await.status, 200);
    for (tool, arguments) in [
        (
            "afd-batch",
            json!({"commands": [
                {"command": "product-list", "input": {"limit": 1}},
                {"command": "order-list"}
            ]}),
        ),
        ("afd-pipe", json!({"steps": [{"command": "order-list"}]})),
    ] {
        call_in_trace(&mut caller, tool, arguments).await;
    }
    // A command's span ends before its call's: once the pipeline's span is in, all are.
    let spans = receiver
        .wait_for(|span| span.name == "tools/call afd-pipe")
        .await;
    for (tool, commands) in [
        (
            "afd-batch",
            vec!["execute_tool order-list", "execute_tool product-list"],
        ),
        ("afd-pipe", vec!["execute_tool order-list"]),
    ] {
        let call = spans
            .iter()
            .find(|span| span.name == format!("tools/call {tool}"))
            .unwrap_or_else(|| panic!("no span of {tool}: {spans:#?}"));
        assert_eq!(call.trace, TRACE);
        let mut children: Vec<&str> = spans
            .iter()
            .filter(|span| span.parent == call.id)
            .map(|span| span.name.as_str())
            .collect();
        children.sort_unstable();
        assert_eq!(children, commands, "the commands {tool} ran");
    }

    // Both contexts: the `_meta` one is the parent, the headers' a link; a failed call
    // says why.
    let mut caller = Caller::new(&url, None);
    assert_eq!(caller.open().await.status, 200);
    let answer = caller
        .send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
                "name": "afd-call",
                "arguments": {"command": "no-such-command", "input": {}},
                "_meta": {"traceparent": format!("00-{TRACE}-{PARENT}-01")}
            }}),
        )
        .await;
    assert_eq!(answer.message["result"]["isError"], true, "{answer:?}");
    let spans = receiver
        .wait_for(|span| {
            span.attributes
                .get("error.type")
                .is_some_and(|e| e == "tool_error")
        })
        .await;
    let failed = spans
        .iter()
        .find(|span| {
            span.attributes
                .get("error.type")
                .is_some_and(|e| e == "tool_error")
        })
        .unwrap();
    assert_eq!(failed.status, 2, "status ERROR: {failed:#?}");
    assert_eq!(failed.trace, TRACE);

    let linked = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", caller.session.clone().unwrap())
        .header("traceparent", format!("00-{HEADER_TRACE}-{PARENT}-01"))
        .body(
            json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
                "name": "afd-discover", "arguments": {},
                "_meta": {"traceparent": format!("00-{TRACE}-{PARENT}-01")}
            }})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(linked.status().as_u16(), 200);
    let spans = receiver
        .wait_for(|span| span.name == "tools/call afd-discover")
        .await;
    let discover = spans
        .iter()
        .find(|span| span.name == "tools/call afd-discover")
        .unwrap();
    assert_eq!(discover.trace, TRACE, "the `_meta` context is the parent");
    assert_eq!(
        discover.links,
        vec![HEADER_TRACE.to_owned()],
        "the headers' context is a link"
    );
    assert_eq!(
        discover.attributes["mcp.session.id"],
        caller.session.clone().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateways_call_upstream_is_a_client_span_in_the_same_trace_as_the_upstreams() {
    let receiver = Receiver::start().await;
    let dir = temp_dir("traces-gateway");
    let config = dir.join("gateway.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"shop": {"command": SHOP, "args": ["serve", "--strategy", "individual"]}}}).to_string(),
    )
    .unwrap();
    let gateway_binary = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target/debug/afd-gateway");
    let gateway_binary = std::env::var_os("CARGO_TARGET_DIR").map_or(gateway_binary, |dir| {
        std::path::PathBuf::from(dir).join("debug/afd-gateway")
    });
    assert!(
        gateway_binary.exists(),
        "{} is missing: cargo build -p afd-gateway",
        gateway_binary.display()
    );
    let port = free_port();
    let mut command = Command::new(&gateway_binary);
    command
        .arg(&config)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(["--http", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    exporting(&mut command, &receiver);
    let _gateway = Running(command.spawn().expect("the gateway starts"));
    assert!(wait_for_port(port, Duration::from_secs(30)));
    // The gateway serves before its upstream's tools are known (it starts the shop in the
    // background): wait, in sessions outside the trace, until a call reaches the shop.
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = std::time::Instant::now();
    loop {
        let mut probe = Caller::new(&url, None);
        assert_eq!(probe.open().await.status, 200);
        let answer = probe
            .send(
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "afd-call",
                    "arguments": {"command": "shop.product-list", "input": {"limit": 1}}
                }}),
            )
            .await;
        if answer.message["result"]["isError"] == false {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the shop's tools never reached the gateway: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut caller = Caller::new(&url, None);
    assert_eq!(caller.open().await.status, 200);
    call_in_trace(
        &mut caller,
        "afd-call",
        json!({"command": "shop.product-list", "input": {"limit": 1}}),
    )
    .await;
    let spans = receiver
        .wait_until(|spans| {
            let in_trace = |service: &str, kind: i64| {
                spans
                    .iter()
                    .any(|span| span.service == service && span.kind == kind && span.trace == TRACE)
            };
            in_trace("afd-gateway", 3) && in_trace("shop", 2)
        })
        .await;
    let client = spans
        .iter()
        .find(|span| span.kind == 3 && span.trace == TRACE)
        .unwrap_or_else(|| panic!("no CLIENT span: {spans:#?}"));
    assert_eq!(client.service, "afd-gateway");
    assert_eq!(client.attributes["server.address"], "shop");
    let upstream = spans
        .iter()
        .find(|span| span.service == "shop" && span.kind == 2 && span.trace == TRACE)
        .unwrap_or_else(|| panic!("no upstream SERVER span: {spans:#?}"));
    assert_eq!(
        upstream.parent, client.id,
        "the upstream's span is the CLIENT span's child"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_log_lines_written_in_a_call_carry_its_trace_and_span_ids() {
    let receiver = Receiver::start().await;
    let port = free_port();
    let dir = temp_dir("traces-json-log");
    let log = dir.join("stderr.log");
    let mut command = Command::new(SHOP);
    command
        .env("AFD_LOG_FORMAT", "json")
        .env("RUST_LOG", "warn,afd::audit=info")
        .stderr(std::fs::File::create(&log).unwrap());
    let mut shop = serving(command, port, &receiver);

    let mut caller = Caller::new(&format!("http://127.0.0.1:{port}/mcp"), None);
    assert_eq!(caller.open().await.status, 200);
    call_in_trace(
        &mut caller,
        "afd-call",
        json!({"command": "product-list", "input": {"limit": 1}}),
    )
    .await;
    let spans = receiver
        .wait_for(|span| span.name == "tools/call afd-call")
        .await;
    let call = spans
        .iter()
        .find(|span| span.name == "tools/call afd-call")
        .unwrap();
    shop.terminate();
    assert!(shop.exit_within(Duration::from_secs(10)).is_some());

    // The audit line of the call, written within its span.
    let text = std::fs::read_to_string(&log).unwrap();
    let audited = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["target"] == "afd::audit" && line["tool"] == "afd-call")
        .unwrap_or_else(|| panic!("no audit line for the call: {text}"));
    assert_eq!(audited["span"]["trace_id"], TRACE, "{audited}");
    assert_eq!(audited["span"]["span_id"], call.id.as_str(), "{audited}");
    let _ = std::fs::remove_dir_all(&dir);
}
