//! What the example apps share on the command line: `afd_runtime::cli` (every command
//! as a subcommand, `serve` for MCP) with the examples' own flags, `--db` (the SQLite
//! database) and `--report` (the context cost of each strategy).

use afd_runtime::cli::{Cli, EXIT_FAILURE, EXIT_SUCCESS, Parsed};
use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::usage::UsageStats;
use afd_runtime::{CommandContext, Registry};
use clap::{Arg, ArgAction};

use crate::report::{
    ListingCost, STRATEGIES, TokenCounter, listing_cost, model_cost, python_style_cost,
};

/// The `--db` flag's id.
pub const DB: &str = "db";
/// The `--report` flag's id.
pub const REPORT: &str = "report";

/// The command line of an example app: `commands` of `registry` as subcommands (only
/// those the CLI surface allows), `serve`, and the examples' `--db` and `--report`.
pub fn cli(name: &'static str, registry: &'static Registry, commands: Vec<&'static str>) -> Cli {
    Cli::new(registry)
        .name(name)
        .version(env!("CARGO_PKG_VERSION"))
        .dispatch(move |builder| builder.expose_only(commands.clone()))
        .arg(
            Arg::new(DB)
                .long(DB)
                .global(true)
                .value_name("FILE")
                .default_value(":memory:")
                .help("SQLite database file, or :memory: (the default)"),
        )
        .arg(
            Arg::new(REPORT)
                .long(REPORT)
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Print the context cost of each strategy (tools and o200k tokens) and exit"),
        )
}

/// The database `--db` names.
pub fn db(parsed: &Parsed) -> &str {
    parsed
        .matches()
        .get_one::<String>(DB)
        .map_or(":memory:", String::as_str)
}

/// Runs what was parsed with `app`'s context: `--report`, or the command line (with no
/// subcommand: serving MCP over stdio). Returns the exit code.
pub async fn run(parsed: Parsed, app: App) -> i32 {
    if parsed.matches().get_flag(REPORT) {
        return match print_report(&app).await {
            Ok(()) => EXIT_SUCCESS,
            Err(error) => {
                eprintln!("error: {error}");
                EXIT_FAILURE
            }
        };
    }
    parsed.run(app.context).await
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
    let tables: [(&str, Measure); 3] = [
        (
            "as a model is sent it (each tool as {name, description, input_schema})",
            model_cost,
        ),
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
