//! The server's resources and prompts: `resources` lists resources and templates, `read URI`
//! prints a resource's contents, `prompts` lists prompts with their arguments, and `prompt
//! NAME key=value ...` prints the messages a prompt renders to. Text is printed as it is,
//! binary contents as one line with media type and size; `--json` prints MCP's results whole.

use afd_runtime::cli::{EXIT_FAILURE, EXIT_SUCCESS, EXIT_USAGE, render_content, render_data};
use afd_runtime::prelude::Deserialize;
use afd_runtime::{Content, ResourceContents};
use clap::{Arg, ArgMatches, Command};
use rmcp::ServiceError;
use rmcp::model::{GetPromptRequestParams, JsonObject, ReadResourceRequestParams};
use serde_json::{Value, json};

use super::Client;

/// The subcommands this module runs.
pub(crate) fn subcommands() -> [Command; 4] {
    [
        Command::new("resources").about("List the server's resources and resource templates"),
        Command::new("read")
            .about("Read a resource: `read <uri>`")
            .arg(Arg::new("uri").required(true)),
        Command::new("prompts").about("List the server's prompts and their arguments"),
        Command::new("prompt")
            .about("Render a prompt: `prompt <name> [argument=value ...]`")
            .arg(Arg::new("name").required(true))
            .arg(
                Arg::new("arguments")
                    .num_args(0..)
                    .value_name("ARGUMENT=VALUE"),
            ),
    ]
}

/// Runs one of [`subcommands`]; `None` when `name` is not one of them.
pub(crate) async fn run(client: &Client, name: &str, sub: &ArgMatches, json: bool) -> Option<i32> {
    let outcome = match name {
        "resources" => resources(client, json).await,
        "read" => {
            let uri = sub.get_one::<String>("uri").cloned().unwrap_or_default();
            read(client, &uri, json).await
        }
        "prompts" => prompts(client, json).await,
        "prompt" => {
            let name = sub.get_one::<String>("name").cloned().unwrap_or_default();
            let pairs: Vec<String> = sub
                .get_many::<String>("arguments")
                .map(|values| values.cloned().collect())
                .unwrap_or_default();
            let arguments = match afd_runtime::cli::prompt_arguments(&pairs) {
                Ok(arguments) => arguments,
                Err(error) => {
                    afd_runtime::cli::print_error(&error);
                    return Some(EXIT_USAGE);
                }
            };
            prompt(client, &name, arguments, json).await
        }
        _ => return None,
    };
    Some(match outcome {
        Ok(()) => EXIT_SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            EXIT_FAILURE
        }
    })
}

/// What a failed request says: the server's message, and its suggestion when it gave one.
fn failure(what: &str, error: ServiceError) -> String {
    match error {
        ServiceError::McpError(error) => {
            let suggestion = error
                .data
                .as_ref()
                .and_then(|data| data.get("suggestion"))
                .and_then(Value::as_str)
                .map(|s| format!("\n  suggestion: {s}"))
                .unwrap_or_default();
            format!("{what}: {}{suggestion}", error.message)
        }
        other => format!("{what} failed: {other}"),
    }
}

/// An MCP value (as rmcp holds it) as afd's type of the same wire form.
fn from_wire<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, String> {
    serde_json::from_value(value)
        .map_err(|e| format!("the server sent something this client cannot read: {e}"))
}

fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

async fn resources(client: &Client, json: bool) -> Result<(), String> {
    let peer = client.peer();
    let resources = peer
        .list_all_resources()
        .await
        .map_err(|e| failure("resources/list", e))?;
    let templates = peer
        .list_all_resource_templates()
        .await
        .map_err(|e| failure("resources/templates/list", e))?;
    if json {
        print_json(&json!({"resources": resources, "resourceTemplates": templates}));
        return Ok(());
    }
    let summary = |text: Option<&String>| afd_runtime::summary(text.map_or("", String::as_str));
    let rows: Vec<Value> = resources
        .iter()
        .map(|r| json!({"uri": r.uri, "name": r.name, "description": summary(r.description.as_ref())}))
        .chain(templates.iter().map(|t| {
            json!({"uri": t.uri_template, "name": t.name, "description": summary(t.description.as_ref())})
        }))
        .collect();
    print!("{}", render_data(&Value::Array(rows)));
    Ok(())
}

async fn read(client: &Client, uri: &str, json: bool) -> Result<(), String> {
    let result = client
        .peer()
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map_err(|e| failure(&format!("cannot read {uri}"), e))?;
    if json {
        print_json(&json!(result));
        return Ok(());
    }
    for contents in &result.contents {
        let contents: ResourceContents = from_wire(json!(contents))?;
        match contents {
            ResourceContents::Text { text, .. } => {
                print!("{text}");
                if !text.ends_with('\n') {
                    println!();
                }
            }
            blob => print!(
                "{}",
                render_content(&[Content::Resource { resource: blob }])
            ),
        }
    }
    Ok(())
}

async fn prompts(client: &Client, json: bool) -> Result<(), String> {
    let prompts = client
        .peer()
        .list_all_prompts()
        .await
        .map_err(|e| failure("prompts/list", e))?;
    if json {
        print_json(&json!(prompts));
        return Ok(());
    }
    let rows: Vec<Value> = prompts
        .iter()
        .map(|prompt| {
            // Optional arguments end with `?`.
            let arguments: Vec<String> = prompt
                .arguments
                .iter()
                .flatten()
                .map(|a| {
                    let optional = if a.required == Some(true) { "" } else { "?" };
                    format!("{}{optional}", a.name)
                })
                .collect();
            json!({
                "name": prompt.name,
                "arguments": arguments.join(", "),
                "description": afd_runtime::summary(prompt.description.as_deref().unwrap_or("")),
            })
        })
        .collect();
    print!("{}", render_data(&Value::Array(rows)));
    Ok(())
}

async fn prompt(
    client: &Client,
    name: &str,
    arguments: JsonObject,
    json: bool,
) -> Result<(), String> {
    let mut params = GetPromptRequestParams::new(name);
    if !arguments.is_empty() {
        params.arguments = Some(arguments);
    }
    let result = client
        .peer()
        .get_prompt(params)
        .await
        .map_err(|e| failure(&format!("cannot render the prompt '{name}'"), e))?;
    if json {
        print_json(&json!(result));
        return Ok(());
    }
    for message in &result.messages {
        let role = serde_json::to_value(&message.role).unwrap_or_default();
        let content: Content = from_wire(json!(message.content))?;
        print!(
            "{}: {}",
            role.as_str().unwrap_or("?"),
            render_content(&[content])
        );
    }
    Ok(())
}
