//! Malformed input over stdio (`McpServer::serve_stream`) and streamable HTTP: every line
//! or body gets an answer (bearing its id where it can be read), and the server then still
//! answers a normal request.

use std::time::Duration;

use std::net::SocketAddr;

use afd_runtime::mcp::{HttpOptions, McpServer, Strategy};
use afd_runtime::prelude::*;
use afd_tests::http::HttpSession;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};
use tokio::net::TcpStream;

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    text: String,
}

/// Echo the text back.
#[command(category = "test")]
fn echo(input: EchoInput) -> String {
    input.text
}

/// The nesting serde_json (and so the server) still reads; one more level is refused.
const LIMIT: usize = 127;

fn server() -> McpServer {
    McpServer::builder(Registry::global())
        .name("malformed")
        .version("1.0.0")
        .strategy(Strategy::Lazy)
        .build()
        .unwrap()
}

/// `levels` nested arrays around a number.
fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// A `tools/call` whose arguments nest `levels` deep (the params add two levels).
fn deep_call(id: &str, levels: usize) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{}}}}}}}"#,
        nested(levels)
    )
    .into_bytes()
}

/// A malformed input and what it must be answered with.
struct Case {
    name: &'static str,
    line: Vec<u8>,
    code: i64,
    id: Value,
    /// Words the error message must contain.
    says: &'static str,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "a call nested 200 deep, id first",
            line: deep_call("11", 200),
            code: -32600,
            id: json!(11),
            says: "127",
        },
        Case {
            name: "a call nested 200 deep, id last",
            line: format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"echo","arguments":{{"text":{}}}}},"id":"deep"}}"#,
                nested(200)
            )
            .into_bytes(),
            code: -32600,
            id: json!("deep"),
            says: "nests",
        },
        Case {
            name: "a call nested just past the limit",
            line: deep_call("12", LIMIT - 1),
            code: -32600,
            id: json!(12),
            says: "127",
        },
        Case {
            name: "not JSON",
            line: b"this is not json".to_vec(),
            code: -32700,
            id: Value::Null,
            says: "Parse error",
        },
        Case {
            name: "truncated JSON",
            line: br#"{"jsonrpc":"2.0","id":13,"method":"tools/call""#.to_vec(),
            code: -32700,
            id: Value::Null,
            says: "Parse error",
        },
        Case {
            name: "invalid UTF-8",
            line: b"{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\",\"x\":\"\xff\xfe\"}".to_vec(),
            code: -32700,
            id: Value::Null,
            says: "UTF-8",
        },
        Case {
            name: "a batch array",
            line: br#"[{"jsonrpc":"2.0","id":15,"method":"ping"}]"#.to_vec(),
            code: -32600,
            id: Value::Null,
            says: "batch",
        },
        Case {
            name: "an empty array",
            line: b"[]".to_vec(),
            code: -32600,
            id: Value::Null,
            says: "batch",
        },
        Case {
            name: "a number",
            line: b"42".to_vec(),
            code: -32600,
            id: Value::Null,
            says: "a number",
        },
        Case {
            name: "a string",
            line: br#""tools/call""#.to_vec(),
            code: -32600,
            id: Value::Null,
            says: "a string",
        },
        Case {
            name: "null",
            line: b"null".to_vec(),
            code: -32600,
            id: Value::Null,
            says: "null",
        },
        Case {
            name: "a method that is not a string",
            line: br#"{"jsonrpc":"2.0","id":16,"method":5}"#.to_vec(),
            code: -32600,
            id: json!(16),
            says: "Invalid request",
        },
        Case {
            name: "a request without a method",
            line: br#"{"jsonrpc":"2.0","id":17}"#.to_vec(),
            code: -32600,
            id: json!(17),
            says: "method",
        },
        Case {
            name: "a request without jsonrpc",
            line: br#"{"id":18,"method":"ping"}"#.to_vec(),
            code: -32600,
            id: json!(18),
            says: "jsonrpc",
        },
        Case {
            name: "tools/call with params that are a number",
            line: br#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":5}"#.to_vec(),
            code: -32602,
            id: json!(40),
            says: "Invalid params for `tools/call`",
        },
        Case {
            name: "tools/call with a name that is a number",
            line: br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":7}}"#
                .to_vec(),
            code: -32602,
            id: json!(41),
            says: "name",
        },
        Case {
            name: "tools/call without a name",
            line: br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"arguments":{}}}"#
                .to_vec(),
            code: -32602,
            id: json!(15),
            says: "missing field `name`",
        },
        Case {
            name: "tools/call with arguments that are an array",
            line: br#"{"jsonrpc":"2.0","id":"args","method":"tools/call","params":{"name":"afd-call","arguments":[1]}}"#
                .to_vec(),
            code: -32602,
            id: json!("args"),
            says: "arguments",
        },
        Case {
            name: "tools/call without params",
            line: br#"{"jsonrpc":"2.0","id":42,"method":"tools/call"}"#.to_vec(),
            code: -32602,
            id: json!(42),
            says: "params",
        },
        Case {
            name: "initialize with params that are a string",
            line: br#"{"jsonrpc":"2.0","id":43,"method":"initialize","params":"2025-11-25"}"#
                .to_vec(),
            code: -32602,
            id: json!(43),
            says: "Invalid params for `initialize`",
        },
        Case {
            name: "initialize with a protocol version that is a number",
            line: br#"{"jsonrpc":"2.0","id":44,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#
                .to_vec(),
            code: -32602,
            id: json!(44),
            says: "protocolVersion",
        },
        Case {
            name: "resources/read with a uri that is a number",
            line: br#"{"jsonrpc":"2.0","id":45,"method":"resources/read","params":{"uri":5}}"#
                .to_vec(),
            code: -32602,
            id: json!(45),
            says: "uri",
        },
        Case {
            name: "an unknown method with params that are a number",
            line: br#"{"jsonrpc":"2.0","id":46,"method":"no/such","params":5}"#.to_vec(),
            code: -32601,
            id: json!(46),
            says: "no/such",
        },
        Case {
            name: "an id that is a boolean",
            line: br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.to_vec(),
            code: -32600,
            id: Value::Null,
            says: "string or a number",
        },
        Case {
            name: "an id that is null",
            line: br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            code: -32600,
            id: Value::Null,
            says: "not null",
        },
        Case {
            name: "a fractional id",
            line: br#"{"jsonrpc":"2.0","id":19.5,"method":"ping"}"#.to_vec(),
            code: -32600,
            id: json!(19.5),
            says: "Invalid request",
        },
        Case {
            name: "a request on JSON-RPC 1.0",
            line: br#"{"jsonrpc":"1.0","id":"old","method":"ping"}"#.to_vec(),
            code: -32600,
            id: json!("old"),
            says: "2.0",
        },
    ]
}

/// A raw JSON-RPC client on one end of a duplex pipe, `serve_stream` on the other.
struct Raw {
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
}

impl Raw {
    fn start() -> Raw {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_io);
            let _ = server().serve_stream(read, write).await;
        });
        let (read, write) = tokio::io::split(client_io);
        Raw {
            write,
            read: BufReader::new(read),
        }
    }

    async fn send_line(&mut self, line: &[u8]) {
        self.write.write_all(line).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut line))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(read > 0, "the stream is still open");
        serde_json::from_str(&line).expect("one JSON message per line")
    }

    async fn initialize(&mut self) {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}
            }
        });
        self.send_line(initialize.to_string().as_bytes()).await;
        assert_eq!(self.next().await["id"], 0);
        self.send_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    /// A normal call is still answered.
    async fn echoes(&mut self, id: i64) {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "afd-call",
                                     "arguments": {"command": "echo", "input": {"text": "hi"}}}});
        self.send_line(call.to_string().as_bytes()).await;
        let answer = self.next().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
}

fn assert_error(case: &Case, answer: &Value) {
    let name = case.name;
    assert_eq!(answer["jsonrpc"], "2.0", "{name}: {answer}");
    assert_eq!(answer["id"], case.id, "{name}: {answer}");
    assert_eq!(answer["error"]["code"], case.code, "{name}: {answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(case.says),
        "{name}: the message should say {:?}: {answer}",
        case.says
    );
}

#[tokio::test]
async fn stdio_answers_every_malformed_line_and_keeps_serving() {
    let mut client = Raw::start();
    client.initialize().await;
    client.echoes(1).await;
    for (n, case) in cases().iter().enumerate() {
        client.send_line(&case.line).await;
        let answer = client.next().await;
        assert_error(case, &answer);
        client.echoes(100 + n as i64).await;
    }
}

#[tokio::test]
async fn stdio_a_line_over_the_length_limit_is_answered_with_its_id() {
    // rmcp reads lines of at most 16 MiB, newline included.
    let limit = 16 * 1024 * 1024;
    let mut client = Raw::start();
    client.initialize().await;
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":30,"method":"resources/read","params":{{"uri":"{}"}}}}"#,
        "x".repeat(limit)
    );
    client.send_line(line.as_bytes()).await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 30, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["error"]["data"]["limitBytes"], limit, "{answer}");
    client.echoes(31).await;
}

#[tokio::test]
async fn stdio_a_line_over_the_limit_is_answered_before_its_end_arrives() {
    let limit = 16 * 1024 * 1024;
    let mut client = Raw::start();
    client.initialize().await;
    // The first bytes past the limit, and no newline yet: the answer cannot wait for it.
    let start = format!(
        r#"{{"jsonrpc":"2.0","id":"long","method":"resources/read","params":{{"uri":"{}"#,
        "x".repeat(limit)
    );
    client.write.write_all(start.as_bytes()).await.unwrap();
    let answer = client.next().await;
    assert_eq!(answer["id"], "long", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["error"]["data"]["limitBytes"], limit, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&limit.to_string()), "{answer}");
    // The rest of the line, as long again, is skipped; the next line is served.
    client
        .write
        .write_all("y".repeat(limit).as_bytes())
        .await
        .unwrap();
    client.send_line(br#""}}"#).await;
    client.echoes(32).await;
}

#[tokio::test]
async fn stdio_a_notification_whose_params_do_not_fit_is_not_answered() {
    let mut client = Raw::start();
    client.initialize().await;
    client
        .send_line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#)
        .await;
    client
        .send_line(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"x"}}"#,
        )
        .await;
    // The next answer is the call's.
    client.echoes(33).await;
}

#[tokio::test]
async fn stdio_an_unknown_method_is_answered_with_its_id() {
    let mut client = Raw::start();
    client.initialize().await;
    client
        .send_line(br#"{"jsonrpc":"2.0","id":21,"method":"no/such/method"}"#)
        .await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 21, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    client.echoes(22).await;
}

#[tokio::test]
async fn stdio_answers_malformed_lines_before_the_handshake() {
    let mut client = Raw::start();
    for case in cases() {
        client.send_line(&case.line).await;
        let answer = client.next().await;
        assert_error(&case, &answer);
    }
    client.initialize().await;
    client.echoes(1).await;
}

#[tokio::test]
async fn stdio_the_deepest_call_the_limit_allows_is_still_served() {
    let mut client = Raw::start();
    client.initialize().await;
    // The params and arguments objects are two levels, the text one more than the arrays.
    client.send_line(&deep_call("5", LIMIT - 3)).await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 5, "{answer}");
    // Served (the input does not match echo's schema, but that is a tool result).
    assert!(answer.get("result").is_some(), "{answer}");
}

/// The request body limit of the HTTP endpoint (rmcp's default).
const BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Posts `body` as one request; returns the status, content type and body.
async fn post(addr: SocketAddr, content_type: &str, body: Vec<u8>) -> (StatusCode, String, String) {
    post_with(addr, content_type, None, body).await
}

/// As [`post`], under the session `session` (its `Mcp-Session-Id` header) when given.
async fn post_with(
    addr: SocketAddr,
    content_type: &str,
    session: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, String, String) {
    let stream = TcpStream::connect(addr).await.expect("connects");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let mut request = Request::post(format!("http://{addr}/mcp"))
        .header("host", addr.to_string())
        .header("content-type", content_type)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .expect("a request");
    let response = tokio::time::timeout(Duration::from_secs(10), sender.send_request(request))
        .await
        .expect("an answer within 10 s")
        .expect("a response");
    let status = response.status();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, kind, String::from_utf8_lossy(&body).into_owned())
}

async fn http_server() -> (afd_runtime::mcp::HttpHandle, SocketAddr) {
    let handle = server()
        .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = handle.local_addr();
    (handle, addr)
}

/// A normal session still works.
async fn http_still_serves(addr: SocketAddr) {
    let mut session = HttpSession::open(addr, "/mcp").await;
    let answer = session
        .call(
            "afd-call",
            json!({"command": "echo", "input": {"text": "hi"}}),
        )
        .await;
    assert_eq!(answer["success"], true, "{answer}");
}

#[tokio::test]
async fn http_answers_malformed_bodies_with_400_and_a_json_rpc_error() {
    let (handle, addr) = http_server().await;
    let mut table = cases();
    table.push(Case {
        name: "an empty body",
        line: Vec::new(),
        code: -32700,
        id: Value::Null,
        says: "Parse error",
    });
    for case in &table {
        let (status, kind, body) = post(addr, "application/json", case.line.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{}: {body}", case.name);
        assert_eq!(kind, "application/json", "{}: {body}", case.name);
        let answer: Value = serde_json::from_str(&body).expect("a JSON body");
        assert_error(case, &answer);
    }
    http_still_serves(addr).await;
    handle.shutdown().await;
}

/// MCP: a request under a session the server does not know gets 404 (and the client
/// starts a new session), whatever its body: well-formed, malformed or misfitting.
#[tokio::test]
async fn http_answers_any_body_under_an_unknown_session_with_404() {
    let (handle, addr) = http_server().await;
    let mut bodies: Vec<Vec<u8>> = cases().into_iter().map(|case| case.line).collect();
    bodies.push(Vec::new());
    bodies.push(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec());
    bodies.push(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#.to_vec());
    for body in bodies {
        let (status, _, answer) = post_with(
            addr,
            "application/json",
            Some("no-such-session"),
            body.clone(),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{}: {answer}",
            String::from_utf8_lossy(&body)
        );
    }
    http_still_serves(addr).await;
    handle.shutdown().await;
}

#[tokio::test]
async fn http_answers_a_notification_whose_params_do_not_fit_with_400() {
    let (handle, addr) = http_server().await;
    let (status, _, body) = post(
        addr,
        "application/json",
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    http_still_serves(addr).await;
    handle.shutdown().await;
}

#[tokio::test]
async fn http_keeps_415_for_a_body_that_is_not_json_by_its_content_type() {
    let (handle, addr) = http_server().await;
    let (status, _, _) = post(addr, "text/plain", b"{}".to_vec()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    http_still_serves(addr).await;
    handle.shutdown().await;
}

#[tokio::test]
async fn http_refuses_a_body_over_the_limit_from_its_content_length_alone() {
    let (handle, addr) = http_server().await;
    // 20 MB declared, only the headers sent: the answer cannot wait for the body.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: 20000000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&read).contains("limitBytes") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
            .await
            .expect("an answer without the body")
            .unwrap();
        assert!(n > 0, "the connection closed without an answer: {read:?}");
        read.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&read);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains(&BODY_LIMIT.to_string()), "{text}");
    http_still_serves(addr).await;
    handle.shutdown().await;
}

#[tokio::test]
async fn http_cuts_a_stalled_body_with_408() {
    let handle = server()
        .bind_http(
            HttpOptions::new("127.0.0.1:0".parse().unwrap())
                .body_timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    let addr = handle.local_addr();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut read))
        .await
        .expect("the server cuts the stalled request")
        .unwrap();
    let text = String::from_utf8_lossy(&read);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("200 ms"), "{text}");
    http_still_serves(addr).await;
    handle.shutdown().await;
}

#[tokio::test]
async fn http_refuses_a_body_that_grows_over_the_limit_without_a_length() {
    let (handle, addr) = http_server().await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut sent = 0;
    // Write until the server answers (it may stop reading once it has).
    while sent <= BODY_LIMIT + (1 << 20) {
        let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
        framed.extend_from_slice(&chunk);
        framed.extend_from_slice(b"\r\n");
        if stream.write_all(&framed).await.is_err() {
            break;
        }
        sent += chunk.len();
    }
    let mut read = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut read)).await;
    let text = String::from_utf8_lossy(&read);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains(&BODY_LIMIT.to_string()), "{text}");
    http_still_serves(addr).await;
    handle.shutdown().await;
}
