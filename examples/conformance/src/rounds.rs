//! The fixtures of the suite's multi-round-trip scenarios (MCP 2026-07-28): handlers that
//! ask their client something with `ctx.elicit_as`, `ctx.sample_as` and `ctx.roots_as`,
//! written as on any other wire. The keys are the ones the scenarios answer under.

use afd_runtime::client::{Elicitation, SamplingRequest};
use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;

/// The name form.
#[derive(Deserialize, JsonSchema)]
pub struct Name {
    /// The user's name.
    pub name: String,
}

/// The colour form.
#[derive(Deserialize, JsonSchema)]
pub struct Colour {
    /// The user's favourite colour.
    pub color: String,
}

/// The confirmation form.
#[derive(Deserialize, JsonSchema)]
pub struct Confirm {
    /// Whether the user confirms.
    pub ok: bool,
}

/// The context form of the prompt.
#[derive(Deserialize, JsonSchema)]
pub struct PromptContext {
    /// What the prompt should be about.
    pub context: String,
}

/// What the user answered, or what they did instead.
fn accepted<T>(answer: Elicitation<T>) -> Result<T, CommandError> {
    match answer {
        Elicitation::Accept(value) => Ok(value),
        other => Err(CommandError::new(
            "NOT_ANSWERED",
            format!("The user did not answer ({})", other.action()),
        )
        .with_suggestion("Call again and answer the form.")),
    }
}

/// Asks the user's name, then greets them.
#[command(
    name = "test_input_required_result_elicitation",
    title = "Ask for a name",
    category = "rounds"
)]
pub async fn ask_name(ctx: &CommandContext) -> Result<String, CommandError> {
    let name = accepted(
        ctx.elicit_as::<Name>("user_name", "What is your name?")
            .await?,
    )?;
    Ok(format!("Hello, {}!", name.name))
}

/// Asks the client's model a question.
#[command(
    name = "test_input_required_result_sampling",
    title = "Ask the model",
    category = "rounds"
)]
pub async fn ask_model(ctx: &CommandContext) -> Result<String, CommandError> {
    let request = SamplingRequest::new("What is the capital of France?", 100);
    let answer = ctx.sample_as("capital_question", request).await?;
    Ok(format!(
        "The model answered: {}",
        answer.text().unwrap_or_default()
    ))
}

/// Asks the client for its roots.
#[command(
    name = "test_input_required_result_list_roots",
    title = "Ask for the roots",
    category = "rounds"
)]
pub async fn ask_roots(ctx: &CommandContext) -> Result<String, CommandError> {
    let roots = ctx.roots_as("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("The client's roots: {}", uris.join(", ")))
}

/// Asks for a confirmation, carried across the round in the request state.
#[command(
    name = "test_input_required_result_request_state",
    title = "Confirm across a round",
    category = "rounds"
)]
pub async fn ask_confirm(ctx: &CommandContext) -> Result<String, CommandError> {
    let confirm = accepted(
        ctx.elicit_as::<Confirm>("confirm", "Please confirm")
            .await?,
    )?;
    Ok(format!("state-ok: confirmed {}", confirm.ok))
}

/// Asks three things at once: the user's name, a greeting from the model and the roots.
#[command(
    name = "test_input_required_result_multiple_inputs",
    title = "Ask three things at once",
    category = "rounds"
)]
pub async fn ask_three(ctx: &CommandContext) -> Result<String, CommandError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit_as::<Name>("user_name", "What is your name?"),
        ctx.sample_as("greeting", SamplingRequest::new("Generate a greeting", 50)),
        ctx.roots_as("client_roots"),
    );
    let name = accepted(name?)?;
    let greeting = greeting?;
    let roots = roots?;
    Ok(format!(
        "{} {} ({} roots)",
        greeting.text().unwrap_or_default(),
        name.name,
        roots.len()
    ))
}

/// Asks a name, then a colour, one round each.
#[command(
    name = "test_input_required_result_multi_round",
    title = "Ask in two rounds",
    category = "rounds"
)]
pub async fn ask_twice(ctx: &CommandContext) -> Result<String, CommandError> {
    let name = accepted(
        ctx.elicit_as::<Name>("step1", "Step 1: What is your name?")
            .await?,
    )?;
    let colour = accepted(
        ctx.elicit_as::<Colour>("step2", "Step 2: What is your favorite color?")
            .await?,
    )?;
    Ok(format!("{} likes {}", name.name, colour.color))
}

/// Asks for a confirmation; the suite then sends back an altered state.
#[command(
    name = "test_input_required_result_tampered_state",
    title = "Ask with a signed state",
    category = "rounds"
)]
pub async fn ask_signed(ctx: &CommandContext) -> Result<String, CommandError> {
    let confirm = accepted(
        ctx.elicit_as::<Confirm>("confirm", "Please confirm")
            .await?,
    )?;
    Ok(format!("confirmed {}", confirm.ok))
}

/// Asks only what the client declared it can answer: the user when it can show forms, else
/// its model.
#[command(
    name = "test_input_required_result_capabilities",
    title = "Ask what the client can answer",
    category = "rounds"
)]
pub async fn ask_what_it_can(ctx: &CommandContext) -> Result<String, CommandError> {
    if ctx.can_elicit() {
        let name = accepted(
            ctx.elicit_as::<Name>("user_name", "What is your name?")
                .await?,
        )?;
        return Ok(format!("Hello, {}!", name.name));
    }
    let answer = ctx
        .sample_as("greeting", SamplingRequest::new("Generate a greeting", 50))
        .await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

/// Needs a client that can sample: refused before it runs for one that cannot.
#[command(
    name = "test_missing_capability",
    title = "Needs sampling",
    category = "rounds",
    needs_client("sampling")
)]
pub async fn needs_sampling(ctx: &CommandContext) -> Result<String, CommandError> {
    let answer = ctx
        .sample_as("greeting", SamplingRequest::new("Generate a greeting", 50))
        .await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

/// A prompt that asks the user what it should be about.
#[prompt(name = "test_input_required_result_prompt")]
pub async fn prompt_that_asks(ctx: &CommandContext) -> Result<Vec<PromptMessage>, CommandError> {
    let context = accepted(
        ctx.elicit_as::<PromptContext>("user_context", "What context should the prompt use?")
            .await?,
    )?;
    Ok(vec![PromptMessage::user(format!(
        "Answer with this in mind: {}",
        context.context
    ))])
}
