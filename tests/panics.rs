//! A panic in a command handler or in a middleware never costs a request its answer, nor a
//! later request anything: over stdio (through the front, and through rmcp when the tool
//! list follows the session) and over streamable HTTP, the panicking call is an
//! `INTERNAL_ERROR` result, and the calls after it, in the same session and its context, are
//! served as before.

use std::time::Duration;

use afd_runtime::CommandRequest;
use afd_runtime::mcp::{HttpOptions, McpServer, Strategy};
use afd_runtime::middleware::{Next, from_fn};
use afd_runtime::prelude::*;
use afd_tests::http::HttpSession;
use afd_tests::mcp::Client;

afd_runtime::context! {
    /// Where the vault commands run.
    name = "vault",
}

#[derive(Deserialize, JsonSchema)]
struct Note {
    text: String,
}

/// Echo the text back.
#[command(category = "test")]
fn echo(input: Note) -> String {
    input.text
}

/// Panic, on purpose.
#[command(category = "test")]
fn boom() -> String {
    panic!("boom, on purpose")
}

/// Panic after an await, on purpose.
#[command(category = "test")]
async fn late_boom() -> String {
    tokio::task::yield_now().await;
    panic!("late boom, on purpose")
}

/// A command the test middleware panics on.
#[command(category = "test")]
fn tripwire() -> String {
    "not reached".to_owned()
}

/// Read the vault.
#[command(category = "vault", contexts("vault"))]
fn vault_read() -> String {
    "secret".to_owned()
}

/// Panic inside the vault, on purpose.
#[command(category = "vault", contexts("vault"))]
fn vault_boom() -> String {
    panic!("vault boom, on purpose")
}

fn server(session_tools: bool) -> McpServer {
    McpServer::builder(Registry::global())
        .name("panics")
        .version("1.0.0")
        .strategy(Strategy::Lazy)
        .session_tools(session_tools)
        .dispatch(|d| {
            d.layer(from_fn(|request: CommandRequest, next: Next| async move {
                assert!(
                    request.def.name() != "tripwire",
                    "the middleware panics, on purpose"
                );
                next.run(request).await
            }))
        })
        .build()
        .unwrap()
}

/// One MCP connection, over either transport.
enum Connection {
    Stdio(Client),
    Http(HttpSession),
}

impl Connection {
    /// afd-call's result (the structured content), within 10 s.
    async fn call(&mut self, command: &str, input: Value) -> Value {
        let arguments = json!({"command": command, "input": input});
        let answer = async {
            match self {
                Connection::Stdio(client) => client.call("afd-call", arguments).await,
                Connection::Http(session) => session.call("afd-call", arguments).await,
            }
        };
        tokio::time::timeout(Duration::from_secs(10), answer)
            .await
            .unwrap_or_else(|_| panic!("an answer to {command} within 10 s"))
    }

    async fn batch(&mut self, commands: Value) -> Value {
        let arguments = json!({"commands": commands});
        let answer = async {
            match self {
                Connection::Stdio(client) => client.call("afd-batch", arguments).await,
                Connection::Http(session) => session.call("afd-batch", arguments).await,
            }
        };
        tokio::time::timeout(Duration::from_secs(10), answer)
            .await
            .expect("an answer to the batch within 10 s")
    }
}

fn code(result: &Value) -> &str {
    result["error"]["code"].as_str().unwrap_or("OK")
}

async fn still_serves(connection: &mut Connection, text: &str) {
    let result = connection.call("echo", json!({"text": text})).await;
    assert_eq!(result["data"], text, "{result}");
}

/// Panics in handlers and middleware, in and out of a context; every call answered.
async fn scenario(mut connection: Connection) {
    still_serves(&mut connection, "before").await;
    for command in ["boom", "late-boom", "tripwire"] {
        let result = connection.call(command, json!({})).await;
        assert_eq!(result["success"], false, "{command}: {result}");
        assert_eq!(code(&result), "INTERNAL_ERROR", "{command}: {result}");
        still_serves(&mut connection, command).await;
    }
    // A panic inside a context leaves the session in it.
    let entered = connection
        .call("afd-context-enter", json!({"context": "vault"}))
        .await;
    assert_eq!(entered["success"], true, "{entered}");
    let result = connection.call("vault-boom", json!({})).await;
    assert_eq!(code(&result), "INTERNAL_ERROR", "{result}");
    let read = connection.call("vault-read", json!({})).await;
    assert_eq!(read["data"], "secret", "{read}");
    // Each entry of a batch fails or succeeds alone, panics included.
    let batch = connection
        .batch(json!([
            {"command": "vault-boom"},
            {"command": "tripwire"},
            {"command": "vault-read"},
        ]))
        .await;
    let results = &batch["results"];
    assert_eq!(code(&results[0]["result"]), "INTERNAL_ERROR", "{batch}");
    assert_eq!(code(&results[1]["result"]), "INTERNAL_ERROR", "{batch}");
    assert_eq!(results[2]["result"]["data"], "secret", "{batch}");
    // The session is still in the vault to leave it.
    let exited = connection.call("afd-context-exit", json!({})).await;
    assert_eq!(exited["success"], true, "{exited}");
    assert!(exited["data"].to_string().contains("vault"), "{exited}");
    still_serves(&mut connection, "after").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_keeps_serving_after_panics_through_the_front() {
    scenario(Connection::Stdio(Client::connect(server(false)).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_keeps_serving_after_panics_through_rmcp() {
    // A tool list that follows the session leaves every call to rmcp's handler.
    scenario(Connection::Stdio(Client::connect(server(true)).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_keeps_serving_after_panics() {
    let handle = server(false)
        .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = handle.local_addr();
    scenario(Connection::Http(HttpSession::open(addr, "/mcp").await)).await;
    // Another session of the same server too.
    let mut other = Connection::Http(HttpSession::open(addr, "/mcp").await);
    still_serves(&mut other, "another session").await;
    handle.shutdown().await;
}
