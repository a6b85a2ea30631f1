//! Confirmation by elicitation: a command with a `confirm_prompt`, called by a client that
//! can show its user a form, runs only once the user confirms. Callers that cannot be
//! asked (clients without elicitation, the in-process client) keep the behaviour they had:
//! the command line asks on the terminal before the call, and MCP clients without
//! elicitation rely on the tool's annotations.

use serde_json::{Value, json};

use crate::client::{Elicitation, confirmation_schema};
use crate::command::CommandDef;
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};

/// Whether the call must be confirmed first: the command has a prompt and the caller can
/// be asked.
pub(super) fn wanted(def: &CommandDef, ctx: &CommandContext) -> bool {
    def.confirm_prompt().is_some() && ctx.can_elicit()
}

/// Asks the caller's user to confirm `def` with `input` (when [`wanted`]): `Ok(())` to
/// run, the refusal otherwise.
pub(super) async fn confirm(
    def: &CommandDef,
    input: &Value,
    ctx: &CommandContext,
) -> Result<(), CommandError> {
    let Some(prompt) = def.confirm_prompt() else {
        return Ok(());
    };
    let text = crate::text::fill_prompt(prompt, Some(input));
    let answer = ctx
        .elicit_schema(text.clone(), confirmation_schema(&text))
        .await?;
    let action = answer.action();
    let confirmed = match answer {
        // Accepting the form confirms, unless the box was unticked.
        Elicitation::Accept(form) => form.get("confirm").and_then(Value::as_bool) != Some(false),
        Elicitation::Decline | Elicitation::Cancel => false,
    };
    if confirmed {
        return Ok(());
    }
    let name = def.name();
    Err(CommandError::new(
        codes::CONFIRMATION_REQUIRED,
        format!("'{name}' was not confirmed by the user ({action}); nothing was done"),
    )
    .with_suggestion(format!(
        "The user did not confirm: {text} Do not retry unless the user asks for it."
    ))
    .with_details(json!({"action": action, "prompt": text}))
    .with_retryable(false))
}
