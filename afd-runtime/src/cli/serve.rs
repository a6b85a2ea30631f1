//! `serve`: the MCP server on stdio or streamable HTTP, with the strategy, usage statistics
//! and catalog export taken from flags. The same flags are accepted at the top level, where
//! the binary run with no subcommand serves over stdio.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches};

use super::{Cli, EXIT_FAILURE, EXIT_SUCCESS};
use crate::command_context::CommandContext;
use crate::mcp::{McpServer, Strategy};
use crate::usage::UsageStats;

const STRATEGY: &str = "strategy";
const HTTP: &str = "http";
const TOKEN: &str = "token";
const USAGE_DB: &str = "usage-db";
const NO_USAGE: &str = "no-usage";
const EXPORT: &str = "export";

/// The heading `serve`'s flags are listed under in help.
const HEADING: &str = "Serving MCP (serve, or no subcommand)";

/// `serve`'s flags.
pub(super) fn args() -> Vec<Arg> {
    let args = [
        Arg::new(STRATEGY)
            .long(STRATEGY)
            .value_name("STRATEGY")
            .default_value("lazy")
            .value_parser(|text: &str| text.parse::<Strategy>())
            .help("Tool strategy: individual, grouped, lazy or hybrid (AFD_TOOL_STRATEGY overrides it)"),
        Arg::new(HTTP)
            .long(HTTP)
            .value_name("ADDR")
            .value_parser(clap::value_parser!(SocketAddr))
            .help("Serve streamable HTTP on this address (e.g. 127.0.0.1:8787) instead of stdio"),
        Arg::new(TOKEN)
            .long(TOKEN)
            .value_name("TOKEN")
            .requires(HTTP)
            .help("Require this bearer token on HTTP requests"),
        Arg::new(USAGE_DB)
            .long(USAGE_DB)
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .conflicts_with(NO_USAGE)
            .help("Keep usage statistics in this SQLite file, so they survive restarts (default: in memory)"),
        Arg::new(NO_USAGE)
            .long(NO_USAGE)
            .action(ArgAction::SetTrue)
            .help("Record no usage statistics"),
        Arg::new(EXPORT)
            .long(EXPORT)
            .value_name("DIR")
            .value_parser(clap::value_parser!(PathBuf))
            .help("Write the catalog as a folder tree (<category>/<command>.json, index.json, README.md) into DIR and exit"),
    ];
    args.into_iter()
        .map(|arg| arg.help_heading(HEADING))
        .collect()
}

/// The MCP server `matches` describe: the app's name, version, context and dispatcher
/// configuration, with the strategy and usage statistics from the flags. Exposure follows
/// the app's configuration on the MCP surface.
///
/// # Errors
///
/// The server could not be built.
fn server(
    cli: &Cli,
    matches: &ArgMatches,
    ctx: CommandContext,
) -> Result<McpServer, crate::mcp::BuildError> {
    let strategy = matches
        .get_one::<Strategy>(STRATEGY)
        .copied()
        .unwrap_or_default();
    let usage = match (
        matches.get_one::<PathBuf>(USAGE_DB),
        matches.get_flag(NO_USAGE),
    ) {
        (_, true) => UsageStats::disabled(),
        (Some(path), false) => UsageStats::open(path),
        (None, false) => UsageStats::in_memory(),
    };
    let dispatch = cli.dispatch.clone();
    let mut builder = McpServer::builder(cli.registry)
        .name(cli.name.clone())
        .strategy(strategy)
        .context(ctx)
        .dispatch(move |builder| {
            let builder = match &dispatch {
                Some(configure) => configure(builder),
                None => builder,
            };
            builder.usage(usage.clone())
        });
    if let Some(version) = &cli.version {
        builder = builder.version(version.clone());
    }
    if let Some(configure) = &cli.server {
        builder = configure(builder);
    }
    builder.build()
}

/// Runs `serve` (or the top level with no subcommand): exports the catalog, or serves
/// until the client disconnects (stdio) or the process is stopped (HTTP).
pub(super) async fn run(cli: &Cli, matches: &ArgMatches, ctx: CommandContext) -> i32 {
    let server = match server(cli, matches, ctx) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    if let Some(dir) = matches.get_one::<PathBuf>(EXPORT) {
        let dispatcher = server.dispatcher();
        return match crate::export::export_tree_with(cli.registry, dir, |entry| {
            dispatcher.is_exposed(entry.name())
        }) {
            Ok(summary) => {
                println!(
                    "wrote {} commands in {} categories to {} ({} files)",
                    summary.commands,
                    summary.categories,
                    summary.dir.display(),
                    summary.files.len()
                );
                EXIT_SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                EXIT_FAILURE
            }
        };
    }
    tracing::info!(strategy = %server.strategy(), tools = server.tools().len(), "starting {}", cli.name);
    let served = match matches.get_one::<SocketAddr>(HTTP) {
        #[cfg(feature = "http")]
        Some(addr) => {
            let mut options = crate::mcp::HttpOptions::new(*addr);
            if let Some(token) = matches.get_one::<String>(TOKEN) {
                options = options.bearer_token(token.clone());
            }
            match server.bind_http(options).await {
                Ok(handle) => {
                    eprintln!("{} serving MCP at {}", cli.name, handle.url());
                    handle.wait().await;
                    Ok(())
                }
                Err(error) => Err(error.into()),
            }
        }
        #[cfg(not(feature = "http"))]
        Some(_) => Err("this build has no HTTP transport (the `http` feature is off)".into()),
        None => server.serve_stdio().await,
    };
    match served {
        Ok(()) => EXIT_SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            EXIT_FAILURE
        }
    }
}
