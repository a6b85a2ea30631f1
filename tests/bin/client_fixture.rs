//! A small app for the tests of rich results and of handlers that talk to their client:
//! tools that answer with content blocks of every kind, log at every level (on purpose and
//! through `tracing`), report progress, ask the client's model (sampling) and its user
//! (elicitation, typed and raw forms), and a command that asks for confirmation. Its
//! snake_case tool names are those of the MCP conformance suite's fixtures, which come from
//! the conformance example (`examples/conformance`); the rest are the tests' own.
//!
//! `afd-client-fixture serve` serves it over stdio (`--http ADDR` over HTTP); any other
//! subcommand runs a command on the command line.

use afd_example_conformance as conformance;
use afd_runtime::client::LogLevel;
use afd_runtime::prelude::*;
use afd_runtime::{CommandResult, Content, Registry};
use tracing_subscriber::prelude::*;

/// A chart's figures.
#[derive(Serialize, JsonSchema)]
struct Figures {
    /// How many rows the chart shows.
    rows: u32,
}

/// Returns data and a chart of it.
#[command(category = "content")]
fn chart() -> CommandResult<Figures> {
    CommandResult::success(Figures { rows: 2 })
        .with_content(Content::image(conformance::PIXEL, "image/png"))
}

/// Logs one message at every level, and two tracing events.
#[command(category = "client")]
async fn log_levels(ctx: &CommandContext) -> String {
    for level in LogLevel::ALL {
        ctx.log(level, format!("at {level}")).await;
    }
    ctx.log(LogLevel::Notice, json!({"structured": true})).await;
    tracing::debug!(step = 1, "a tracing debug event");
    tracing::warn!("a tracing warning");
    "done".to_owned()
}

/// Input of `forget`.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Who to forget.
    name: String,
}

/// Forgets someone (asks first).
#[command(
    category = "client",
    mutation,
    confirm_prompt = "Really forget {name}?"
)]
fn forget(input: Name) -> String {
    format!("Forgot {}", input.name)
}

#[tokio::main]
async fn main() {
    // Tracing events of a running command reach a client that set a log level; nothing is
    // written to stdout, which carries the protocol.
    tracing_subscriber::registry()
        .with(afd_runtime::client::ClientLogLayer::new())
        .init();
    let registry: &'static Registry = Box::leak(Box::new(
        Registry::builder()
            .register_all([
                conformance::image::COMMAND,
                conformance::audio::COMMAND,
                conformance::embedded::COMMAND,
                conformance::mixed::COMMAND,
                chart::COMMAND,
                conformance::with_logging::COMMAND,
                log_levels::COMMAND,
                conformance::tool_with_progress::COMMAND,
                conformance::sampling::COMMAND,
                conformance::elicitation::COMMAND,
                conformance::elicitation_defaults::COMMAND,
                conformance::elicitation_enums::COMMAND,
                forget::COMMAND,
            ])
            .build()
            .expect("distinct names"),
    ));
    let code = afd_runtime::cli::Cli::new(registry)
        .name("client-fixture")
        .parse()
        .run(CommandContext::new())
        .await;
    std::process::exit(code);
}
