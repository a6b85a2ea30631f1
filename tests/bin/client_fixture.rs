//! A small app for the tests of rich results and of handlers that talk to their client:
//! tools that answer with content blocks of every kind, log at every level (on purpose and
//! through `tracing`), report progress, ask the client's model (sampling) and its user
//! (elicitation, typed and raw forms), and a command that asks for confirmation. Its
//! snake_case tool names are those of the MCP conformance suite's fixtures.
//!
//! `afd-client-fixture serve` serves it over stdio (`--http ADDR` over HTTP); any other
//! subcommand runs a command on the command line.

use afd_runtime::client::{Elicitation, LogLevel, SamplingRequest};
use afd_runtime::prelude::*;
use afd_runtime::{CommandResult, Content, NoData, Registry, ResourceContents};
use tracing_subscriber::prelude::*;

/// The smallest PNG: one red pixel.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A WAV header with no samples.
const WAV: &[u8] =
    b"RIFF$\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x44\xac\0\0\x88\x58\x01\0\x02\0\x10\0data\0\0\0\0";

/// Returns a small PNG image.
#[command(name = "test_image_content", category = "content")]
fn image() -> CommandResult<NoData> {
    CommandResult::content_only([Content::image(PNG, "image/png")])
}

/// Returns a short WAV recording.
#[command(name = "test_audio_content", category = "content")]
fn audio() -> CommandResult<NoData> {
    CommandResult::content_only([Content::audio(WAV, "audio/wav")])
}

/// Returns an embedded text resource.
#[command(name = "test_embedded_resource", category = "content")]
fn embedded() -> CommandResult<NoData> {
    CommandResult::content_only([Content::resource(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    )])
}

/// Returns text, an image, a resource and a link to another resource.
#[command(name = "test_multiple_content_types", category = "content")]
fn mixed() -> CommandResult<NoData> {
    CommandResult::content_only([
        Content::text("Multiple content types test:"),
        Content::image(PNG, "image/png"),
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

/// A chart's figures.
#[derive(Serialize, JsonSchema)]
struct Figures {
    /// How many rows the chart shows.
    rows: u32,
}

/// Returns data and a chart of it.
#[command(category = "content")]
fn chart() -> CommandResult<Figures> {
    CommandResult::success(Figures { rows: 2 }).with_content(Content::image(PNG, "image/png"))
}

/// Logs three messages while it runs.
#[command(name = "test_tool_with_logging", category = "client")]
async fn with_logging(ctx: &CommandContext) -> String {
    ctx.log(LogLevel::Info, "Tool execution started").await;
    ctx.log(LogLevel::Info, "Tool processing data").await;
    ctx.log(LogLevel::Info, "Tool execution completed").await;
    "logged".to_owned()
}

/// Logs one message at every level, and two tracing events.
#[command(category = "client")]
async fn log_levels(ctx: &CommandContext) -> String {
    for level in LogLevel::ALL {
        ctx.log(level, format!("at {level}")).await;
    }
    ctx.log(LogLevel::Notice, json!({"structured": true})).await;
    tracing::debug!(step = 1, "a tracing debug event");
    tracing::warn!("a tracing warning");
    "done".to_owned()
}

/// Reports three steps of progress.
#[command(name = "test_tool_with_progress", category = "client")]
async fn with_progress(ctx: &CommandContext) -> String {
    for step in 0..=2u32 {
        ctx.report_progress(
            f64::from(step * 50),
            Some(100.0),
            Some(format!("step {step}")),
        )
        .await;
    }
    "progressed".to_owned()
}

/// Input of `test_sampling`.
#[derive(Deserialize, JsonSchema)]
struct Prompt {
    /// What to ask the model.
    prompt: String,
}

/// Asks the client's model and returns its answer.
#[command(name = "test_sampling", category = "client")]
async fn sampling(
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
struct Message {
    /// What to tell the user.
    message: String,
}

/// Who the user is.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Contact {
    /// User's response.
    username: String,
    /// User's email address.
    email: String,
}

/// Asks the user who they are.
#[command(name = "test_elicitation", category = "client")]
async fn elicitation(input: Message, ctx: &CommandContext) -> Result<Value, CommandError> {
    Ok(match ctx.elicit::<Contact>(input.message).await? {
        Elicitation::Accept(contact) => json!({"action": "accept", "content": contact}),
        other => json!({"action": other.action()}),
    })
}

/// A status.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

fn john() -> String {
    "John Doe".to_owned()
}
fn thirty() -> i64 {
    30
}
fn score() -> f64 {
    95.5
}
fn active() -> Status {
    Status::Active
}
fn yes() -> bool {
    true
}

/// A form with a default for every field.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Defaults {
    /// User name.
    #[serde(default = "john")]
    name: String,
    /// User age.
    #[serde(default = "thirty")]
    age: i64,
    /// User score.
    #[serde(default = "score")]
    score: f64,
    /// User status.
    #[serde(default = "active")]
    status: Status,
    /// Verification status.
    #[serde(default = "yes")]
    verified: bool,
}

/// Asks for a form whose fields all have defaults.
#[command(name = "test_elicitation_sep1034_defaults", category = "client")]
async fn elicitation_defaults(ctx: &CommandContext) -> Result<Value, CommandError> {
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
enum Titled {
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
enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// Every kind of choice a form can offer (the legacy `enumNames` form aside, which needs
/// a raw schema).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Choices {
    untitled_single: Untitled,
    titled_single: Titled,
    untitled_multi: Vec<Untitled>,
    titled_multi: Vec<Titled>,
}

/// Asks for one and several of fixed options, with and without titles.
#[command(name = "test_elicitation_sep1330_enums", category = "client")]
async fn elicitation_enums(ctx: &CommandContext) -> Result<Value, CommandError> {
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

/// Input of `forget`.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Who to forget.
    name: String,
}

/// Forgets someone (asks first).
#[command(
    category = "client",
    mutation,
    confirm_prompt = "Really forget {name}?"
)]
fn forget(input: Name) -> String {
    format!("Forgot {}", input.name)
}

#[tokio::main]
async fn main() {
    // Tracing events of a running command reach a client that set a log level; nothing is
    // written to stdout, which carries the protocol.
    tracing_subscriber::registry()
        .with(afd_runtime::client::ClientLogLayer::new())
        .init();
    let registry: &'static Registry = Box::leak(Box::new(
        Registry::builder()
            .register_all([
                image::COMMAND,
                audio::COMMAND,
                embedded::COMMAND,
                mixed::COMMAND,
                chart::COMMAND,
                with_logging::COMMAND,
                log_levels::COMMAND,
                with_progress::COMMAND,
                sampling::COMMAND,
                elicitation::COMMAND,
                elicitation_defaults::COMMAND,
                elicitation_enums::COMMAND,
                forget::COMMAND,
            ])
            .build()
            .expect("distinct names"),
    ));
    let code = afd_runtime::cli::Cli::new(registry)
        .name("client-fixture")
        .parse()
        .run(CommandContext::new())
        .await;
    std::process::exit(code);
}
