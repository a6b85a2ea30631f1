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
//! JSON Schema 2020-12 keywords a command states reach the client. `test_dynamic_tool` is
//! listed only while `test_trigger_tool_change` has added it.

use std::net::SocketAddr;

use afd_example_conformance::changes;
use clap::Parser;

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
    assert!(!afd_example_conformance::COMMANDS.is_empty());
    let server = changes::build(false, None)?;
    changes::serve(&server);
    match args.http {
        Some(addr) => {
            eprintln!("serving MCP at http://{addr}/mcp");
            server.serve_http(addr).await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}
