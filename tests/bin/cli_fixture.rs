//! A small app for the command-line tests of what the examples do not show: a command
//! called by an alias and by a deprecated alias, and one that runs until Ctrl-C.

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

#[tokio::main]
async fn main() {
    let registry: &'static Registry = Box::leak(Box::new(
        Registry::builder()
            .register_all([greet::COMMAND, wait_for_cancel::COMMAND])
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
