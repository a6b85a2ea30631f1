//! Serves a generated catalog over MCP, for the end-to-end benches.
//!
//! `serve --commands 2000 [--strategy lazy] [--http 127.0.0.1:8788]` (stdio without
//! `--http`). Sizes above 80 need `--features full` (10,000: `n10000`). `serve --shop`
//! serves the shop example's commands instead, as the example does (the soak's server).

use std::net::SocketAddr;
use std::time::Duration;

use afd_runtime::mcp::{HttpOptions, Strategy};
use clap::Parser;

/// Serve a generated catalog to MCP clients.
#[derive(Debug, Parser)]
struct Args {
    /// Catalog size: 5, 80 (with --features full 500, 2000; with n10000 10000).
    #[arg(long, default_value_t = 80)]
    commands: usize,
    /// Tool strategy: individual, grouped, lazy or hybrid.
    #[arg(long, default_value = "lazy")]
    strategy: Strategy,
    /// Serve streamable HTTP on this address instead of stdio; the URL goes to stdout.
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Serve the run-time-built catalog of this size instead of a generated one (any size;
    /// see `afd_bench::synthetic`).
    #[arg(long, conflicts_with = "commands")]
    synthetic: Option<usize>,
    /// Serve the shop example (lazy, in-memory store) instead of a generated catalog.
    #[arg(long, conflicts_with_all = ["commands", "synthetic"])]
    shop: bool,
    /// Sessions the HTTP endpoint keeps open at most.
    #[arg(long, default_value_t = 1024, requires = "http")]
    max_sessions: usize,
    /// Seconds an idle HTTP session lives.
    #[arg(long, default_value_t = 300, requires = "http")]
    session_idle_secs: u64,
    /// Tokio runtime: `multi` (a worker per core, what `#[tokio::main]` gives) or
    /// `current` (one thread reads, dispatches and writes).
    #[arg(long, default_value = "multi")]
    runtime: Runtime,
}

/// The tokio runtime flavours `serve` can run on.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Runtime {
    Multi,
    Current,
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args = Args::parse();
    let mut runtime = match args.runtime {
        Runtime::Multi => tokio::runtime::Builder::new_multi_thread(),
        Runtime::Current => tokio::runtime::Builder::new_current_thread(),
    };
    runtime.enable_all().build()?.block_on(serve(args))
}

async fn serve(args: Args) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let server = match args.synthetic {
        _ if args.shop => afd_bench::soak::shop_server()?,
        Some(n) => afd_bench::synthetic::server(n, args.strategy),
        None => afd_bench::server(args.commands, args.strategy),
    };
    match args.http {
        Some(addr) => {
            let options = HttpOptions::new(addr)
                .max_sessions(args.max_sessions)
                .session_idle_timeout(Duration::from_secs(args.session_idle_secs));
            let handle = server.bind_http(options).await?;
            println!("{}", handle.url());
            handle.wait().await;
            Ok(())
        }
        None => server.serve_stdio().await,
    }
}
