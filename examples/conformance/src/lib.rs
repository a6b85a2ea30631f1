//! Every fixture the official MCP conformance suite's server scenarios call
//! (`@modelcontextprotocol/conformance`), written with afd-rs's public API only: tools with
//! text, images, audio, embedded resources and mixes of them, errors, progress, logging,
//! sampling and elicitation (typed forms with defaults and every kind of choice), a JSON
//! Schema 2020-12 input, handlers that ask their client on MCP 2026-07-28's stateless wire
//! ([`rounds`]), commands that run as tasks ([`tasks`]), a tool list that changes
//! ([`changes`]), resources (text, binary, a
//! template, one that changes), prompts (simple, with arguments, with an embedded resource
//! and an image) and completions. `src/main.rs` serves them; the tests' fixture apps link
//! them too.
//!
//! `#[command]`, `#[resource]` and `#[prompt]` register at link time; a binary that uses
//! this crate names [`COMMANDS`] so that the linker keeps it.

use std::time::Duration;

pub mod changes;
pub mod rounds;
pub mod tasks;

use afd_runtime::client::{Elicitation, LogLevel, SamplingRequest};
use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;
use afd_runtime::resource::Resources;
use afd_runtime::{Content, NoData, ResourceContents};

/// Returns a fixed text.
#[command(
    name = "test_simple_text",
    title = "Simple text",
    category = "conformance"
)]
pub fn simple_text() -> Result<String, CommandError> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Always fails, to show how an error reaches the client.
#[command(
    name = "test_error_handling",
    title = "Error handling",
    category = "conformance"
)]
pub fn error_handling() -> Result<String, CommandError> {
    Err(CommandError::new(
        "INTENTIONAL_ERROR",
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, 50 ms apart.
#[command(
    name = "test_tool_with_progress",
    title = "Progress",
    category = "conformance"
)]
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
#[command(
    name = "test_reconnection",
    title = "Reconnection",
    category = "conformance"
)]
pub async fn reconnection() -> Result<String, CommandError> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok("Reconnection test completed.".to_owned())
}

/// A postal address, a definition others reach by `$ref` or by its anchor.
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
pub struct Address {
    /// Street and number.
    pub street: Option<String>,
    /// City.
    pub city: Option<String>,
}

/// How to reach a person.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContactMethod {
    /// By phone.
    Phone,
    /// By email.
    Email,
}

/// Input of `json_schema_2020_12_tool`: a schema that states its dialect, a shared
/// definition with an anchor, no other properties, a composition (a phone or an email) and
/// a condition (the contact method chosen must be given).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "$schema" = "https://json-schema.org/draft/2020-12/schema",
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]},
))]
pub struct Person {
    /// Their name.
    pub name: Option<String>,
    /// Where they live.
    pub address: Option<Address>,
    /// How they prefer to be reached.
    pub contact_method: Option<ContactMethod>,
    /// Their phone number.
    pub phone: Option<String>,
    /// Their email address.
    pub email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features.
#[command(
    name = "json_schema_2020_12_tool",
    title = "JSON Schema 2020-12",
    category = "conformance",
    eager
)]
pub fn json_schema_2020_12_tool(input: Person) -> Result<String, CommandError> {
    let city = input.address.and_then(|address| address.city);
    Ok(match (input.name, city) {
        (Some(name), Some(city)) => format!("{name} lives in {city}."),
        (Some(name), None) => format!("Hello, {name}."),
        _ => "Hello.".to_owned(),
    })
}

/// A one-pixel PNG.
pub const PIXEL: &[u8] = &[
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
#[command(title = "Touch resource", category = "demo", mutation)]
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

/// A WAV header with no samples.
const WAV: &[u8] =
    b"RIFF$\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x44\xac\0\0\x88\x58\x01\0\x02\0\x10\0data\0\0\0\0";

/// Returns a small PNG image.
#[command(
    name = "test_image_content",
    title = "Image content",
    category = "content"
)]
pub fn image() -> CommandResult<NoData> {
    CommandResult::content_only([Content::image(PIXEL, "image/png")])
}

/// Returns a short WAV recording.
#[command(
    name = "test_audio_content",
    title = "Audio content",
    category = "content"
)]
pub fn audio() -> CommandResult<NoData> {
    CommandResult::content_only([Content::audio(WAV, "audio/wav")])
}

/// Returns an embedded text resource.
#[command(
    name = "test_embedded_resource",
    title = "Embedded resource",
    category = "content"
)]
pub fn embedded() -> CommandResult<NoData> {
    CommandResult::content_only([Content::resource(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    )])
}

/// Returns text, an image, a resource and a link to another resource.
#[command(
    name = "test_multiple_content_types",
    title = "Multiple content types",
    category = "content"
)]
pub fn mixed() -> CommandResult<NoData> {
    CommandResult::content_only([
        Content::text("Multiple content types test:"),
        Content::image(PIXEL, "image/png"),
        Content::resource(
            ResourceContents::text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .with_mime_type("application/json"),
        ),
        Content::resource(
            ResourceContents::blob("test://blob", [0u8, 1, 2, 255])
                .with_mime_type("application/octet-stream"),
        ),
        Content::resource_link("test://linked", "linked.txt"),
    ])
}

/// Logs three messages while it runs.
#[command(
    name = "test_tool_with_logging",
    title = "Logging",
    category = "client"
)]
pub async fn with_logging(ctx: &CommandContext) -> String {
    ctx.log(LogLevel::Info, "Tool execution started").await;
    ctx.log(LogLevel::Info, "Tool processing data").await;
    ctx.log(LogLevel::Info, "Tool execution completed").await;
    "logged".to_owned()
}

/// Input of `test_sampling`.
#[derive(Deserialize, JsonSchema)]
pub struct Prompt {
    /// What to ask the model.
    pub prompt: String,
}

/// Asks the client's model and returns its answer.
#[command(name = "test_sampling", title = "Sampling", category = "client")]
pub async fn sampling(
    input: Prompt,
    ctx: &CommandContext,
) -> Result<CommandResult<NoData>, CommandError> {
    let answer = ctx.sample(SamplingRequest::new(input.prompt, 100)).await?;
    Ok(CommandResult::content_only([Content::text(format!(
        "LLM response: {} (model {})",
        answer.text().unwrap_or_default(),
        answer.model
    ))]))
}

/// Input of `test_elicitation`.
#[derive(Deserialize, JsonSchema)]
pub struct Message {
    /// What to tell the user.
    pub message: String,
}

/// Who the user is.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Contact {
    /// User's response.
    pub username: String,
    /// User's email address.
    pub email: String,
}

/// Asks the user who they are.
#[command(name = "test_elicitation", title = "Elicitation", category = "client")]
pub async fn elicitation(input: Message, ctx: &CommandContext) -> Result<Value, CommandError> {
    Ok(match ctx.elicit::<Contact>(input.message).await? {
        Elicitation::Accept(contact) => json!({"action": "accept", "content": contact}),
        other => json!({"action": other.action()}),
    })
}

/// A status.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Inactive,
    Pending,
}

pub fn john() -> String {
    "John Doe".to_owned()
}
pub fn thirty() -> i64 {
    30
}
pub fn score() -> f64 {
    95.5
}
pub fn active() -> Status {
    Status::Active
}
pub fn yes() -> bool {
    true
}

/// A form with a default for every field.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Defaults {
    /// User name.
    #[serde(default = "john")]
    pub name: String,
    /// User age.
    #[serde(default = "thirty")]
    pub age: i64,
    /// User score.
    #[serde(default = "score")]
    pub score: f64,
    /// User status.
    #[serde(default = "active")]
    pub status: Status,
    /// Verification status.
    #[serde(default = "yes")]
    pub verified: bool,
}

/// Asks for a form whose fields all have defaults.
#[command(
    name = "test_elicitation_sep1034_defaults",
    title = "Elicitation defaults",
    category = "client"
)]
pub async fn elicitation_defaults(ctx: &CommandContext) -> Result<Value, CommandError> {
    Ok(
        match ctx
            .elicit::<Defaults>("Please review and update the form fields with defaults")
            .await?
        {
            Elicitation::Accept(form) => json!({"action": "accept", "content": form}),
            other => json!({"action": other.action()}),
        },
    )
}

/// An option with a title.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub enum Titled {
    /// First Option
    #[serde(rename = "value1")]
    One,
    /// Second Option
    #[serde(rename = "value2")]
    Two,
    /// Third Option
    #[serde(rename = "value3")]
    Three,
}

/// An option without one.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// Every kind of choice a form can offer (the legacy `enumNames` form aside, which needs
/// a raw schema).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Choices {
    pub untitled_single: Untitled,
    pub titled_single: Titled,
    pub untitled_multi: Vec<Untitled>,
    pub titled_multi: Vec<Titled>,
}

/// Asks for one and several of fixed options, with and without titles.
#[command(
    name = "test_elicitation_sep1330_enums",
    title = "Elicitation enums",
    category = "client"
)]
pub async fn elicitation_enums(ctx: &CommandContext) -> Result<Value, CommandError> {
    let mut schema = afd_runtime::client::form_schema::<Choices>()?;
    schema["properties"]["legacyEnum"] = json!({
        "type": "string",
        "title": "Legacy Enum",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"]
    });
    Ok(
        match ctx
            .elicit_schema("Please select options from the enum fields", schema)
            .await?
        {
            Elicitation::Accept(form) => json!({"action": "accept", "content": form}),
            other => json!({"action": other.action()}),
        },
    )
}

/// Input of `test_custom_header`.
#[derive(Deserialize, JsonSchema)]
pub struct Regional {
    /// The region to look in; also sent as the `Mcp-Param-Region` header, which the server
    /// checks against this value before the call runs.
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    /// What to look up.
    pub query: Option<String>,
}

/// Looks something up in a region named in the body and in a header alike (SEP-2243).
#[command(
    name = "test_custom_header",
    title = "Custom header",
    category = "conformance",
    eager
)]
pub fn custom_header(input: Regional) -> String {
    format!(
        "Looked up {} in {}",
        input.query.as_deref().unwrap_or("everything"),
        input.region
    )
}

/// The state the fixtures need in the context: how often the watched resource changed.
pub fn context() -> CommandContext {
    CommandContext::new().with_state(std::sync::atomic::AtomicU64::new(0))
}

/// The tools (a binary naming them keeps this crate linked).
pub const COMMANDS: [&afd_runtime::CommandDef; 34] = [
    simple_text::COMMAND,
    image::COMMAND,
    audio::COMMAND,
    embedded::COMMAND,
    mixed::COMMAND,
    with_logging::COMMAND,
    sampling::COMMAND,
    elicitation::COMMAND,
    elicitation_defaults::COMMAND,
    elicitation_enums::COMMAND,
    error_handling::COMMAND,
    tool_with_progress::COMMAND,
    reconnection::COMMAND,
    json_schema_2020_12_tool::COMMAND,
    touch_resource::COMMAND,
    custom_header::COMMAND,
    rounds::ask_name::COMMAND,
    rounds::ask_model::COMMAND,
    rounds::ask_roots::COMMAND,
    rounds::ask_confirm::COMMAND,
    rounds::ask_three::COMMAND,
    rounds::ask_twice::COMMAND,
    rounds::ask_signed::COMMAND,
    rounds::ask_what_it_can::COMMAND,
    rounds::needs_sampling::COMMAND,
    tasks::greet::COMMAND,
    tasks::slow_compute::COMMAND,
    tasks::failing_job::COMMAND,
    tasks::protocol_error_job::COMMAND,
    tasks::confirm_delete::COMMAND,
    tasks::multi_input::COMMAND,
    tasks::ask_then_task::COMMAND,
    changes::trigger_tool_change::COMMAND,
    changes::dynamic_tool::COMMAND,
];
