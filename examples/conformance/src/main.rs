//! A server with every fixture the official MCP conformance suite's server scenarios call
//! (`@modelcontextprotocol/conformance`), written with afd-rs's public API only.
//!
//! ```sh
//! cargo run -p afd-example-conformance -- --http 127.0.0.1:3001   # streamable HTTP at /mcp
//! cargo run -p afd-example-conformance                            # stdio
//! tests/conformance/run.sh                                        # the suite against it
//! ```
//!
//! Every command is its own tool (the individual strategy), named as the suite expects
//! (`test_simple_text`, ...), and input schemas are advertised exactly as generated, so the
//! JSON Schema 2020-12 keywords a command states reach the client.

use std::net::SocketAddr;
use std::time::Duration;

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::prelude::*;
use clap::Parser;

/// Returns a fixed text.
#[command(name = "test_simple_text", category = "conformance")]
pub fn simple_text() -> Result<String, CommandError> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Always fails, to show how an error reaches the client.
#[command(name = "test_error_handling", category = "conformance")]
pub fn error_handling() -> Result<String, CommandError> {
    Err(CommandError::new(
        "INTENTIONAL_ERROR",
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, 50 ms apart.
#[command(name = "test_tool_with_progress", category = "conformance")]
pub async fn tool_with_progress(ctx: &CommandContext) -> Result<String, CommandError> {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(step, Some(100.0), None).await;
    }
    Ok("Progress reported: 0, 50 and 100 of 100.".to_owned())
}

/// Answers after a short pause: the suite's SSE scenario calls it to watch the response
/// stream (its priming event, retry field and event ids) while a call is in flight.
#[command(name = "test_reconnection", category = "conformance")]
pub async fn reconnection() -> Result<String, CommandError> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok("Reconnection test completed.".to_owned())
}

/// A postal address.
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
pub struct Address {
    /// Street and number.
    pub street: Option<String>,
    /// City.
    pub city: Option<String>,
}

/// Input of `json_schema_2020_12_tool`: a schema that states its dialect, a shared
/// definition and no other properties.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("$schema" = "https://json-schema.org/draft/2020-12/schema"))]
pub struct Person {
    /// Their name.
    pub name: Option<String>,
    /// Where they live.
    pub address: Option<Address>,
}

/// Tool with JSON Schema 2020-12 features.
#[command(name = "json_schema_2020_12_tool", category = "conformance")]
pub fn json_schema_2020_12_tool(input: Person) -> Result<String, CommandError> {
    let city = input.address.and_then(|address| address.city);
    Ok(match (input.name, city) {
        (Some(name), Some(city)) => format!("{name} lives in {city}."),
        (Some(name), None) => format!("Hello, {name}."),
        _ => "Hello.".to_owned(),
    })
}

/// The conformance fixtures served over MCP.
#[derive(Parser)]
#[command(name = "conformance", version)]
struct Args {
    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args = Args::parse();
    let server = McpServer::builder(Registry::global())
        .name("afd-conformance")
        .strategy(Strategy::Individual)
        .compact_schemas(false)
        .build()?;
    match args.http {
        Some(addr) => {
            eprintln!("serving MCP at http://{addr}/mcp");
            server.serve_http(addr).await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}
