//! Every `#[resource]` and `#[prompt]` form: fixed and templated resources, sync and async,
//! with and without the context, each return type, completions, and path-qualified use.

use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;
use afd_runtime::resource::Resources;
use afd_runtime::{Content, ResourceContents};

/// Text.
#[resource(uri = "pass://text", name = "text", title = "Text", mime_type = "text/plain")]
fn text() -> &'static str {
    "text"
}

/// Bytes, read asynchronously with the context.
#[resource(uri = "pass://bytes")]
async fn bytes(ctx: &CommandContext) -> Result<Vec<u8>, CommandError> {
    let _ = ctx;
    Ok(vec![1])
}

#[afd_runtime::resource(
    uri_template = "pass://items/{id}/{part}",
    description = "An item's part.",
    complete(id = ids, part = parts)
)]
fn item(part: String, ctx: CommandContext, id: u64) -> ResourceContents {
    let _ = ctx;
    ResourceContents::text(format!("pass://items/{id}/{part}"), part)
}

fn ids(_typed: &str) -> Vec<String> {
    vec!["1".to_owned()]
}

fn parts(typed: &str) -> Vec<String> {
    vec![typed.to_owned()]
}

#[derive(Deserialize, JsonSchema)]
struct Topic {
    /// The topic.
    topic: String,
}

/// A prompt with arguments and the context.
#[prompt(name = "with_arguments", title = "With arguments", complete(topic = parts))]
async fn with_arguments(ctx: &CommandContext, args: Topic) -> Result<Vec<PromptMessage>, CommandError> {
    let _ = ctx;
    Ok(vec![
        PromptMessage::user(args.topic),
        PromptMessage::assistant(Content::image([0u8], "image/png")),
    ])
}

/// Text alone is one user message.
#[afd_runtime::prompt]
fn plain_text() -> String {
    "Hello".to_owned()
}

fn main() {
    let resources = Resources::global();
    assert_eq!(resources.resources().count(), 2);
    assert_eq!(resources.templates().count(), 1);
    assert_eq!(afd_runtime::prompt::Prompts::global().list().len(), 2);
    assert_eq!(item::RESOURCE.completed_variables().collect::<Vec<_>>(), ["id", "part"]);
    assert_eq!(plain_text::PROMPT.name(), "plain-text");
}
