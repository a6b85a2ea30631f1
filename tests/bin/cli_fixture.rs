//! A small app for the command-line tests of what the examples do not show: a command
//! called by an alias and by a deprecated alias, one that runs until Ctrl-C, one that
//! takes as long as it is told (for the drain on SIGTERM), one that asks for confirmation,
//! and one kept off the command line.

use afd_runtime::Registry;
use afd_runtime::prelude::*;

/// Input of `greet`.
#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
}

/// Greets someone by name.
#[command(category = "demo", aliases("hello"), deprecated_aliases("say-hi"))]
fn greet(input: Greeting) -> String {
    format!("Hello, {}", input.name)
}

/// Waits until the call is cancelled, after saying that it has started.
#[command(category = "demo")]
async fn wait_for_cancel(ctx: &CommandContext) -> Result<String, CommandError> {
    ctx.report_progress(0.0, None, Some("waiting".to_owned()))
        .await;
    ctx.cancelled().await;
    Err(CommandError::new("CANCELLED", "stopped before finishing"))
}

/// Input of `pause`.
#[derive(Deserialize, JsonSchema)]
struct Pause {
    /// How long to take, in milliseconds.
    ms: u64,
}

/// Takes `ms` milliseconds to answer, unless cancelled first.
#[command(category = "demo", execution_time = "slow")]
async fn pause(input: Pause, ctx: &CommandContext) -> Result<String, CommandError> {
    tokio::select! {
        () = tokio::time::sleep(std::time::Duration::from_millis(input.ms)) => {
            Ok(format!("paused {} ms", input.ms))
        }
        () = ctx.cancelled() => Err(CommandError::new("CANCELLED", "stopped before finishing")),
    }
}

/// Forgets someone (asks first).
#[command(category = "demo", mutation, confirm_prompt = "Really forget {name}?")]
fn forget(input: Greeting) -> String {
    format!("Forgot {}", input.name)
}

/// Only for MCP clients.
#[command(category = "demo", expose(cli = false))]
fn mcp_only() -> String {
    "served".to_owned()
}

#[tokio::main]
async fn main() {
    let registry: &'static Registry = Box::leak(Box::new(
        Registry::builder()
            .register_all([
                greet::COMMAND,
                wait_for_cancel::COMMAND,
                pause::COMMAND,
                forget::COMMAND,
                mcp_only::COMMAND,
            ])
            .build()
            .expect("distinct names"),
    ));
    let code = afd_runtime::cli::Cli::new(registry)
        .name("fixture")
        .parse()
        .run(CommandContext::new())
        .await;
    std::process::exit(code);
}
