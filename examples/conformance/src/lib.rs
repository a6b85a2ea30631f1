//! Every fixture the official MCP conformance suite's server scenarios call
//! (`@modelcontextprotocol/conformance`), written with afd-rs's public API only: tools with
//! text, errors and progress, a JSON Schema 2020-12 input, resources (text, binary, a
//! template, one that changes), prompts (simple, with arguments, with an embedded resource
//! and an image) and completions. `src/main.rs` serves them; the tests' fixture apps link
//! them too.
//!
//! `#[command]`, `#[resource]` and `#[prompt]` register at link time; a binary that uses
//! this crate names [`COMMANDS`] so that the linker keeps it.

use std::time::Duration;

use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;
use afd_runtime::resource::Resources;
use afd_runtime::{Content, ResourceContents};

/// Returns a fixed text.
#[command(name = "test_simple_text", category = "conformance")]
pub fn simple_text() -> Result<String, CommandError> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Always fails, to show how an error reaches the client.
#[command(name = "test_error_handling", category = "conformance")]
pub fn error_handling() -> Result<String, CommandError> {
    Err(CommandError::new(
        "INTENTIONAL_ERROR",
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, 50 ms apart.
#[command(name = "test_tool_with_progress", category = "conformance")]
pub async fn tool_with_progress(ctx: &CommandContext) -> Result<String, CommandError> {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(step, Some(100.0), None).await;
    }
    Ok("Progress reported: 0, 50 and 100 of 100.".to_owned())
}

/// Answers after a short pause: the suite's SSE scenario calls it to watch the response
/// stream (its priming event, retry field and event ids) while a call is in flight.
#[command(name = "test_reconnection", category = "conformance")]
pub async fn reconnection() -> Result<String, CommandError> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok("Reconnection test completed.".to_owned())
}

/// A postal address.
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
pub struct Address {
    /// Street and number.
    pub street: Option<String>,
    /// City.
    pub city: Option<String>,
}

/// Input of `json_schema_2020_12_tool`: a schema that states its dialect, a shared
/// definition and no other properties.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("$schema" = "https://json-schema.org/draft/2020-12/schema"))]
pub struct Person {
    /// Their name.
    pub name: Option<String>,
    /// Where they live.
    pub address: Option<Address>,
}

/// Tool with JSON Schema 2020-12 features.
#[command(name = "json_schema_2020_12_tool", category = "conformance")]
pub fn json_schema_2020_12_tool(input: Person) -> Result<String, CommandError> {
    let city = input.address.and_then(|address| address.city);
    Ok(match (input.name, city) {
        (Some(name), Some(city)) => format!("{name} lives in {city}."),
        (Some(name), None) => format!("Hello, {name}."),
        _ => "Hello.".to_owned(),
    })
}

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
pub fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a PNG image).
#[resource(
    uri = "test://static-binary",
    name = "static-binary",
    mime_type = "image/png"
)]
pub fn static_binary() -> Vec<u8> {
    PIXEL.to_vec()
}

/// Data for one id, substituted from the URI.
#[resource(
    uri_template = "test://template/{id}/data",
    name = "template-data",
    mime_type = "application/json",
    complete(id = known_ids)
)]
pub async fn template_data(id: String) -> String {
    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
        .to_string()
}

/// The ids the template offers while the user types one.
pub fn known_ids(_typed: &str) -> Vec<String> {
    ["123", "124", "200"].map(str::to_owned).to_vec()
}

/// A resource that changes: subscribe to it, then call `touch-resource`.
#[resource(uri = "test://watched-resource", mime_type = "text/plain")]
pub fn watched_resource(ctx: &CommandContext) -> Result<String, CommandError> {
    let count = ctx.state::<std::sync::atomic::AtomicU64>()?;
    Ok(format!(
        "Touched {} times.",
        count.load(std::sync::atomic::Ordering::Relaxed)
    ))
}

/// Input of `touch-resource`.
#[derive(Deserialize, JsonSchema)]
pub struct Touch {
    /// The resource that changed.
    pub uri: String,
}

/// Says that a resource changed: every session subscribed to it is told.
#[command(category = "demo", mutation)]
pub async fn touch_resource(input: Touch, ctx: &CommandContext) -> Result<usize, CommandError> {
    let count = ctx.state::<std::sync::atomic::AtomicU64>()?;
    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Resources::global().updated(&input.uri).await)
}

/// A simple prompt without arguments.
#[prompt(name = "test_simple_prompt")]
pub fn simple_prompt() -> PromptMessage {
    PromptMessage::user("This is a simple prompt for testing.")
}

/// The arguments of `test_prompt_with_arguments`.
#[derive(Deserialize, JsonSchema)]
pub struct TwoArguments {
    /// First test argument.
    pub arg1: String,
    /// Second test argument.
    pub arg2: String,
}

/// A prompt with two required arguments.
#[prompt(name = "test_prompt_with_arguments", complete(arg1 = first_values))]
pub fn prompt_with_arguments(args: TwoArguments) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args.arg1, args.arg2
    ))]
}

/// What `arg1` may be.
pub fn first_values(_typed: &str) -> Vec<String> {
    ["test", "testing", "other"].map(str::to_owned).to_vec()
}

/// The argument of `test_prompt_with_embedded_resource`.
#[derive(Deserialize, JsonSchema)]
pub struct Embed {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    pub resource_uri: String,
}

/// A prompt that embeds a resource.
#[prompt(name = "test_prompt_with_embedded_resource")]
pub fn prompt_with_embedded_resource(args: Embed) -> Vec<PromptMessage> {
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
pub fn prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PIXEL, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// The state the fixtures need in the context: how often the watched resource changed.
pub fn context() -> CommandContext {
    CommandContext::new().with_state(std::sync::atomic::AtomicU64::new(0))
}

/// The tools (a binary naming them keeps this crate linked).
pub const COMMANDS: [&afd_runtime::CommandDef; 6] = [
    simple_text::COMMAND,
    error_handling::COMMAND,
    tool_with_progress::COMMAND,
    reconnection::COMMAND,
    json_schema_2020_12_tool::COMMAND,
    touch_resource::COMMAND,
];
