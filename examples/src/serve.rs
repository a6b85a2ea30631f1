//! The command line the example servers share: strategy, transport, database, report.

use std::net::SocketAddr;

use afd_runtime::mcp::{HttpOptions, McpServer, Strategy};
use afd_runtime::{CommandContext, Registry};
use clap::Parser;

use crate::report::{STRATEGIES, TokenCounter, listing_cost};

/// Serve an example app to MCP clients (stdio unless --http is given).
#[derive(Debug, Parser)]
pub struct ServeArgs {
    /// Tool strategy: individual, grouped, lazy or hybrid (AFD_TOOL_STRATEGY overrides it).
    #[arg(long, default_value = "lazy")]
    pub strategy: Strategy,
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8787) instead of stdio.
    #[arg(long)]
    pub http: Option<SocketAddr>,
    /// Require this bearer token on HTTP requests.
    #[arg(long, requires = "http")]
    pub token: Option<String>,
    /// SQLite database file, or :memory: (the default).
    #[arg(long, default_value = ":memory:")]
    pub db: String,
    /// Print the context cost of each strategy (tools and o200k tokens) and exit.
    #[arg(long)]
    pub report: bool,
}

/// What an example app gives the shared command line.
pub struct App {
    /// Server name.
    pub name: &'static str,
    /// Its command names (the exposed set).
    pub commands: Vec<&'static str>,
    /// The context with the app's store.
    pub context: CommandContext,
}

fn server(app: &App, strategy: Strategy) -> Result<McpServer, afd_runtime::mcp::BuildError> {
    let names = app.commands.clone();
    McpServer::builder(Registry::global())
        .name(app.name)
        .version(env!("CARGO_PKG_VERSION"))
        .strategy(strategy)
        .context(app.context.clone())
        .dispatch(move |d| d.expose_only(names))
        .build()
}

/// Prints the context-cost table of `app` for every strategy.
///
/// # Errors
///
/// A server could not be built.
pub fn print_report(app: &App) -> Result<(), Box<dyn std::error::Error>> {
    let counter = TokenCounter::o200k();
    println!(
        "{} ({} commands): tools/list per strategy",
        app.name,
        app.commands.len()
    );
    println!(
        "{:<12} {:>6} {:>9} {:>8}",
        "strategy", "tools", "bytes", "tokens"
    );
    for strategy in STRATEGIES {
        let cost = listing_cost(&server(app, strategy)?, &counter);
        println!(
            "{:<12} {:>6} {:>9} {:>8}",
            strategy.as_str(),
            cost.tools,
            cost.bytes,
            cost.tokens
        );
    }
    Ok(())
}

/// Runs the command line: report, stdio or HTTP.
///
/// # Errors
///
/// The server could not be built or the transport failed.
pub async fn run(
    args: ServeArgs,
    app: App,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if args.report {
        return print_report(&app).map_err(|e| e.to_string().into());
    }
    let server = server(&app, args.strategy)?;
    tracing::info!(strategy = %server.strategy(), tools = server.tools().len(), "starting {}", app.name);
    match args.http {
        Some(addr) => {
            let mut options = HttpOptions::new(addr);
            if let Some(token) = args.token {
                options = options.bearer_token(token);
            }
            let handle = server.bind_http(options).await?;
            eprintln!("{} serving MCP at {}", app.name, handle.url());
            handle.wait().await;
            Ok(())
        }
        None => server.serve_stdio().await,
    }
}

/// Sends logs to stderr (stdout carries the MCP protocol on stdio), filtered by RUST_LOG.
pub fn init_logging() {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
