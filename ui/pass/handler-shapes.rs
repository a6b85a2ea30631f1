//! Every handler shape the attribute accepts.

use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Output {
    name: String,
}

#[derive(Debug)]
struct AppError;

impl From<AppError> for CommandError {
    fn from(_: AppError) -> Self {
        CommandError::new("APP_ERROR", "app error")
    }
}

/// No parameters.
#[command]
fn no_params() -> u8 {
    1
}

/// Input only.
#[command]
fn input_only(input: Input) -> Output {
    Output { name: input.name }
}

/// Context only.
#[command]
fn context_only(ctx: &CommandContext) -> bool {
    ctx.dev_mode()
}

/// Context, then input.
#[command]
async fn context_then_input(ctx: &CommandContext, input: Input) -> Result<Output, CommandError> {
    let _ = ctx;
    Ok(Output { name: input.name })
}

/// Input, then the context by value.
#[command]
async fn input_then_owned_context(input: Input, ctx: CommandContext) -> Result<String, AppError> {
    let _ = ctx;
    Ok(input.name)
}

/// A full result.
#[command]
async fn full_result(input: Input) -> CommandResult<Output> {
    CommandResult::success(Output { name: input.name }).with_reasoning("copied")
}

/// Nothing back.
#[command(mutation)]
fn unit(_input: Input) {}

/// Borrowed static data.
#[command]
fn static_text() -> &'static str {
    "text"
}

/// A one-argument `Result` alias, as `anyhow::Result<T>` or `io::Result<T>` are.
mod aliased {
    use super::{AppError, Output};
    use afd_runtime::prelude::*;

    type Result<T> = std::result::Result<T, AppError>;

    /// Through an alias.
    #[command]
    pub fn aliased_result() -> Result<Output> {
        Ok(Output { name: "alias".to_owned() })
    }
}

fn main() {
    let registry = Registry::global();
    for name in [
        "no-params",
        "input-only",
        "context-only",
        "context-then-input",
        "input-then-owned-context",
        "full-result",
        "unit",
        "static-text",
        "aliased-result",
    ] {
        assert!(registry.get(name).is_some(), "{name}");
    }
}
