//! The fixtures of the suite's tasks scenarios (MCP's tasks extension,
//! `io.modelcontextprotocol/tasks`): commands declared to run as tasks, written as any
//! other handler. A client that declared the extension is answered with a task it polls;
//! any other gets the plain call (or, for `task = "required"`, is refused).

use std::time::Duration;

use afd_runtime::client::{Elicitation, confirmation_schema};
use afd_runtime::prelude::*;
use afd_runtime::{Content, NoData, codes};
use serde_json::json;

/// Whom to greet.
#[derive(Deserialize, JsonSchema)]
pub struct GreetInput {
    /// The name to greet.
    pub name: String,
}

/// Greets someone at once, in a text block of its own: never a task.
#[command(name = "greet", title = "Greet", category = "tasks")]
pub fn greet(input: GreetInput) -> CommandResult<NoData> {
    CommandResult::content_only([Content::text(format!("Hello, {}!", input.name))])
}

/// How long to compute, and a label for the result.
#[derive(Deserialize, JsonSchema)]
pub struct ComputeInput {
    /// Seconds to work (0: at once).
    #[serde(default)]
    pub seconds: u64,
    /// A label the result repeats.
    #[serde(default)]
    pub label: Option<String>,
}

/// Works for `seconds`, then answers; stops when cancelled.
#[command(
    name = "slow_compute",
    title = "Slow computation",
    category = "tasks",
    task = "optional"
)]
pub async fn slow_compute(
    input: ComputeInput,
    ctx: &CommandContext,
) -> Result<String, CommandError> {
    let label = input.label.unwrap_or_else(|| "computation".to_owned());
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(input.seconds)) => {
            Ok(format!("{label}: done after {}s", input.seconds))
        }
        () = ctx.cancelled() => Err(CommandError::new(codes::CANCELLED, format!("{label}: cancelled"))),
    }
}

/// Works a second, then fails as a tool: runs only as a task.
#[command(
    name = "failing_job",
    title = "Failing job",
    category = "tasks",
    task = "required",
    errors("JOB_FAILED")
)]
pub async fn failing_job(ctx: &CommandContext) -> Result<String, CommandError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(1)) => {}
        () = ctx.cancelled() => {}
    }
    Err(
        CommandError::new("JOB_FAILED", "The job failed, as it always does")
            .with_suggestion("Nothing to fix: this job exists to fail."),
    )
}

/// Fails inside the server (its handler panics): the task fails with a protocol error.
#[command(
    name = "protocol_error_job",
    title = "Job that breaks",
    category = "tasks",
    task = "optional"
)]
pub async fn protocol_error_job() -> Result<String, CommandError> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("the job broke inside the server");
}

/// The file to delete.
#[derive(Deserialize, JsonSchema)]
pub struct DeleteInput {
    /// The file's name.
    pub filename: String,
}

/// Asks the user to confirm, then "deletes" the file (nothing is touched).
#[command(
    name = "confirm_delete",
    title = "Delete a file, once confirmed",
    category = "tasks",
    task = "optional"
)]
pub async fn confirm_delete(
    input: DeleteInput,
    ctx: &CommandContext,
) -> Result<String, CommandError> {
    let form = confirmation_schema(&format!("Delete {}?", input.filename));
    match ctx.elicit_schema("Confirm the deletion", form).await? {
        Elicitation::Accept(answer) if answer["confirm"] == json!(true) => {
            Ok(format!("Deleted {}", input.filename))
        }
        _ => Ok(format!("Kept {}", input.filename)),
    }
}

/// Asks two questions at once, then answers with both.
#[command(
    name = "multi_input",
    title = "Ask two things at once",
    category = "tasks",
    task = "optional"
)]
pub async fn multi_input(ctx: &CommandContext) -> Result<String, CommandError> {
    let form = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "A name"},
            "confirm": {"type": "boolean", "description": "Go on?"}
        }
    });
    let (first, second) = tokio::join!(
        ctx.elicit_schema_as("first", "The first answer", form.clone()),
        ctx.elicit_schema_as("second", "The second answer", form),
    );
    let name = |answer: Elicitation<serde_json::Value>| match answer {
        Elicitation::Accept(content) => content["name"].as_str().unwrap_or_default().to_owned(),
        other => other.action().to_owned(),
    };
    Ok(format!("{} and {}", name(first?), name(second?)))
}

/// The name form.
#[derive(Deserialize, JsonSchema)]
pub struct UserName {
    /// The user's name.
    pub name: String,
}

/// Asks the user's name as a plain call, then goes on as a task and greets them.
#[command(
    name = "test_tool_with_task",
    title = "Ask, then work as a task",
    category = "tasks",
    task = "required",
    task_start = "handler"
)]
pub async fn ask_then_task(ctx: &CommandContext) -> Result<String, CommandError> {
    let name = match ctx
        .elicit_as::<UserName>("user_name", "What is your name?")
        .await?
    {
        Elicitation::Accept(form) => form.name,
        other => {
            return Err(CommandError::new(
                "NOT_ANSWERED",
                format!("The user did not answer ({})", other.action()),
            ));
        }
    };
    ctx.continue_as_task().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}!"))
}
