//! The command line the example servers share: strategy, transport, database, report.

use std::net::SocketAddr;

use afd_runtime::mcp::{HttpOptions, McpServer, Strategy};
use afd_runtime::usage::UsageStats;
use afd_runtime::{CommandContext, Registry};
use clap::Parser;

use crate::report::{ListingCost, STRATEGIES, TokenCounter, listing_cost, python_style_cost};

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
    /// Keep usage statistics (what agents call, and what they call next) in this SQLite
    /// file, so they survive restarts (default: in memory).
    #[arg(long, value_name = "FILE", conflicts_with = "no_usage")]
    pub usage_db: Option<std::path::PathBuf>,
    /// Record no usage statistics.
    #[arg(long)]
    pub no_usage: bool,
    /// Write the catalog as a folder tree (`<category>/<command>.json`, index.json,
    /// README.md) into this directory and exit.
    #[arg(long, value_name = "DIR")]
    pub export: Option<std::path::PathBuf>,
}

/// What an example app gives the shared command line.
pub struct App {
    /// Server name.
    pub name: &'static str,
    /// The registry the app's commands (and contexts) are in.
    pub registry: &'static Registry,
    /// Its command names (the exposed set).
    pub commands: Vec<&'static str>,
    /// The context with the app's store.
    pub context: CommandContext,
}

fn server(
    app: &App,
    strategy: Strategy,
    output_schemas: bool,
) -> Result<McpServer, afd_runtime::mcp::BuildError> {
    server_with(app, strategy, UsageStats::in_memory(), output_schemas)
}

fn server_with(
    app: &App,
    strategy: Strategy,
    usage: UsageStats,
    output_schemas: bool,
) -> Result<McpServer, afd_runtime::mcp::BuildError> {
    let names = app.commands.clone();
    McpServer::builder(app.registry)
        .name(app.name)
        .version(env!("CARGO_PKG_VERSION"))
        .strategy(strategy)
        .output_schemas(output_schemas)
        .context(app.context.clone())
        .dispatch(move |d| d.expose_only(names).usage(usage))
        .build()
}

/// Prints the context cost: tools and o200k tokens of `tools/list` per strategy for `app`
/// and for generated catalogs of 5, 80, 500 and 2,000 commands, and the seed's typical
/// lazy interaction on `app`.
///
/// # Errors
///
/// A server could not be built.
pub async fn print_report(app: &App) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let counter = TokenCounter::o200k();
    type Measure = fn(&McpServer, &TokenCounter) -> ListingCost;
    let tables: [(&str, Measure); 2] = [
        (
            "tools/list (the tools array, compact JSON as sent)",
            listing_cost,
        ),
        (
            "as the official Python MCP client receives it (json.dumps of its tools, as the reference's figures are counted)",
            python_style_cost,
        ),
    ];
    for (title, measure) in tables {
        println!("\n{title}: o200k tokens, tools in parentheses");
        print!("{:<22}", "catalog");
        for strategy in STRATEGIES {
            print!("{:>16}", strategy.as_str());
        }
        println!("{:>16}", "no output sch.");
        let row = |label: String, servers: Vec<McpServer>| {
            print!("{label:<22}");
            for server in &servers {
                let cost = measure(server, &counter);
                print!("{:>16}", format!("{} ({})", cost.tokens, cost.tools));
            }
            println!();
        };
        let mut own: Vec<McpServer> = STRATEGIES
            .iter()
            .map(|s| server(app, *s, true))
            .collect::<Result<_, _>>()?;
        own.push(server(app, Strategy::Individual, false)?);
        row(
            format!("{} ({} commands)", app.name, app.commands.len()),
            own,
        );
        for n in [5, 80, 500, 2000] {
            let registry = crate::report::synthetic_registry(n);
            let mut servers = STRATEGIES
                .iter()
                .map(|s| McpServer::builder(registry).strategy(*s).build())
                .collect::<Result<Vec<_>, _>>()?;
            servers.push(
                McpServer::builder(registry)
                    .strategy(Strategy::Individual)
                    .output_schemas(false)
                    .build()?,
            );
            row(format!("generated {n}"), servers);
        }
    }
    let instructions = server(app, Strategy::Lazy, true)?;
    println!(
        "\nserver instructions (lazy): {} tokens",
        counter.count(instructions.instructions())
    );
    if app.commands.contains(&"user-create") {
        let lazy = server(app, Strategy::Lazy, true)?;
        let cost = crate::report::typical_interaction(&lazy, &counter).await;
        println!(
            "\ntypical lazy interaction on {} ({} commands): listing {} + discover {} + detail {} + call {} = {} tokens (the agent's arguments add {})",
            app.name,
            app.commands.len(),
            cost.listing,
            cost.discover,
            cost.detail,
            cost.call,
            cost.total(),
            cost.arguments
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
        return print_report(&app).await;
    }
    let usage = match (&args.usage_db, args.no_usage) {
        (_, true) => UsageStats::disabled(),
        (Some(path), false) => UsageStats::open(path),
        (None, false) => UsageStats::in_memory(),
    };
    let server = server_with(&app, args.strategy, usage, true)?;
    if let Some(dir) = &args.export {
        let dispatcher = server.dispatcher();
        let summary = afd_runtime::export::export_tree_with(app.registry, dir, |entry| {
            dispatcher.is_exposed(entry.name())
        })?;
        println!(
            "wrote {} commands in {} categories to {} ({} files)",
            summary.commands,
            summary.categories,
            summary.dir.display(),
            summary.files.len()
        );
        return Ok(());
    }
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
