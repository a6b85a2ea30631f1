//! The app's declared prompts and completions over MCP: `prompts/list`, `prompts/get` and
//! `completion/complete` mapped onto [`Prompts`] and [`Resources`], and their failures as
//! JSON-RPC errors (invalid params, -32602, for an unknown prompt or a bad argument, as
//! the specification asks).

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorData, GetPromptRequestParams,
    GetPromptResult, Prompt, PromptArgument, Reference,
};

use crate::command_context::CommandContext;
use crate::completion::{Completion, CompletionArgs, MAX_COMPLETIONS};
use crate::error::{CommandError, codes};
use crate::prompt::{PromptEntry, Prompts};
use crate::resource::Resources;

/// Every prompt, sorted by name.
pub(in crate::mcp) fn list(prompts: &Prompts) -> Vec<Prompt> {
    prompts.list().iter().map(prompt).collect()
}

fn prompt(entry: &PromptEntry) -> Prompt {
    let arguments: Vec<PromptArgument> = entry
        .arguments()
        .iter()
        .map(|argument| {
            let mcp = PromptArgument::new(&argument.name).with_required(argument.required);
            match &argument.description {
                Some(description) => mcp.with_description(description),
                None => mcp,
            }
        })
        .collect();
    let prompt = Prompt::new(
        entry.name(),
        Some(entry.description()),
        (!arguments.is_empty()).then_some(arguments),
    );
    match entry.title() {
        Some(title) => prompt.with_title(title),
        None => prompt,
    }
}

/// The messages of a prompt.
pub(in crate::mcp) async fn get(
    prompts: &Prompts,
    context: CommandContext,
    request: GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let arguments = request.arguments.unwrap_or_default();
    let messages = prompts
        .render(&request.name, arguments, context)
        .await
        .map_err(error_data)?;
    let messages = serde_json::to_value(&messages)
        .and_then(serde_json::from_value)
        .map_err(|error| {
            ErrorData::internal_error(
                format!(
                    "the messages of '{}' could not be encoded: {error}",
                    request.name
                ),
                None,
            )
        })?;
    let description = prompts
        .get(&request.name)
        .map(PromptEntry::description)
        .unwrap_or_default();
    Ok(GetPromptResult::new(messages).with_description(description))
}

/// Values for a prompt argument or a resource-template variable.
pub(in crate::mcp) fn complete(
    prompts: &Prompts,
    resources: &Resources,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let argument = &request.argument;
    let chosen: CompletionArgs = request
        .context
        .as_ref()
        .and_then(|context| context.arguments.as_ref())
        .map(|arguments| {
            arguments
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let completion = match &request.r#ref {
        Reference::Prompt(prompt) => {
            prompts.complete_with(&prompt.name, &argument.name, &argument.value, &chosen)
        }
        Reference::Resource(template) => {
            resources.complete_with(&template.uri, &argument.name, &argument.value, &chosen)
        }
        other => Err(CommandError::new(
            codes::VALIDATION_ERROR,
            format!("cannot complete a '{}' reference", other.reference_type()),
        )
        .with_suggestion("Complete a prompt argument (ref/prompt) or a resource-template variable (ref/resource).")),
    }
    .map_err(error_data)?;
    Ok(CompleteResult::new(completion_info(completion)))
}

fn completion_info(completion: Completion) -> CompletionInfo {
    let total = u32::try_from(completion.total).unwrap_or(u32::MAX);
    let mut values = completion.values;
    values.truncate(MAX_COMPLETIONS);
    CompletionInfo::with_pagination(values, Some(total), completion.has_more).unwrap_or_default()
}

/// A prompt's or completion's failure as a JSON-RPC error: invalid params for an unknown
/// name or a bad argument, an internal error otherwise; the data holds the stable code, the
/// suggestion, whether to retry and the details.
fn error_data(error: CommandError) -> ErrorData {
    let data = Some(super::errors::error_data(&error));
    if error.is(codes::NOT_FOUND) || error.is(codes::VALIDATION_ERROR) {
        ErrorData::invalid_params(error.message, data)
    } else {
        ErrorData::internal_error(error.message, data)
    }
}
