//! A small app for the tests of declared resources, prompts and completions: the fixtures
//! the official conformance suite's resource, prompt and completion scenarios expect,
//! written with `#[resource]` and `#[prompt]`, and a command that says a resource changed.
//! Serves MCP by default (`decl-fixture` over stdio, `decl-fixture serve --http ADDR`).

use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;
use afd_runtime::resource::Resources;
use afd_runtime::{Content, ResourceContents};

/// A one-pixel PNG.
const PIXEL: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A static text resource.
#[resource(
    uri = "test://static-text",
    name = "static-text",
    mime_type = "text/plain"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a PNG image).
#[resource(
    uri = "test://static-binary",
    name = "static-binary",
    mime_type = "image/png"
)]
fn static_binary() -> Vec<u8> {
    PIXEL.to_vec()
}

/// Data for one id, substituted from the URI.
#[resource(
    uri_template = "test://template/{id}/data",
    name = "template-data",
    mime_type = "application/json",
    complete(id = known_ids)
)]
async fn template_data(id: String) -> String {
    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
        .to_string()
}

/// The ids the template offers while the user types one.
fn known_ids(_typed: &str) -> Vec<String> {
    ["123", "124", "200"].map(str::to_owned).to_vec()
}

/// A resource that changes: subscribe to it, then call `touch-resource`.
#[resource(uri = "test://watched-resource", mime_type = "text/plain")]
fn watched_resource(ctx: &CommandContext) -> Result<String, CommandError> {
    let count = ctx.state::<std::sync::atomic::AtomicU64>()?;
    Ok(format!(
        "Touched {} times.",
        count.load(std::sync::atomic::Ordering::Relaxed)
    ))
}

/// Input of `touch-resource`.
#[derive(Deserialize, JsonSchema)]
struct Touch {
    /// The resource that changed.
    uri: String,
}

/// Says that a resource changed: every session subscribed to it is told.
#[command(category = "demo", mutation)]
async fn touch_resource(input: Touch, ctx: &CommandContext) -> Result<usize, CommandError> {
    let count = ctx.state::<std::sync::atomic::AtomicU64>()?;
    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Resources::global().updated(&input.uri).await)
}

/// A simple prompt without arguments.
#[prompt(name = "test_simple_prompt")]
fn simple_prompt() -> PromptMessage {
    PromptMessage::user("This is a simple prompt for testing.")
}

/// The arguments of `test_prompt_with_arguments`.
#[derive(Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
}

/// A prompt with two required arguments.
#[prompt(name = "test_prompt_with_arguments", complete(arg1 = first_values))]
fn prompt_with_arguments(args: TwoArguments) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args.arg1, args.arg2
    ))]
}

/// What `arg1` may be.
fn first_values(_typed: &str) -> Vec<String> {
    ["test", "testing", "other"].map(str::to_owned).to_vec()
}

/// The argument of `test_prompt_with_embedded_resource`.
#[derive(Deserialize, JsonSchema)]
struct Embed {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

/// A prompt that embeds a resource.
#[prompt(name = "test_prompt_with_embedded_resource")]
fn prompt_with_embedded_resource(args: Embed) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(
            ResourceContents::text(args.resource_uri, "Embedded resource content for testing.")
                .with_mime_type("text/plain"),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt(name = "test_prompt_with_image")]
fn prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PIXEL, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

#[tokio::main]
async fn main() {
    let code = afd_runtime::cli::Cli::new(Registry::global())
        .name("decl-fixture")
        .serve_by_default(true)
        .parse()
        .run(CommandContext::new().with_state(std::sync::atomic::AtomicU64::new(0)))
        .await;
    std::process::exit(code);
}
