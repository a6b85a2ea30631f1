//! The app's declared resources and prompts on the command line, in process, when it has
//! any: `resources` lists them, `read URI` prints a resource, `prompts` lists the prompts
//! with their arguments, `prompt NAME arg=value ...` prints the messages a prompt renders.
//! An app without declarations gets none of these subcommands (its commands keep the names).

use clap::{Arg, ArgMatches, Command};
use serde_json::{Map, Value, json};

use super::output::{Output, print_json};
use super::{Cli, EXIT_SUCCESS, EXIT_USAGE};
use crate::command_context::CommandContext;
use crate::content::{Content, ResourceContents};
use crate::error::{CommandError, codes};
use crate::prompt::Prompts;
use crate::resource::Resources;
use crate::result::CommandResult;

/// The declared resources, when there are any (and the declarations are sound).
fn resources() -> Option<&'static Resources> {
    Resources::try_global()
        .ok()
        .filter(|r| r.resources().next().is_some() || r.templates().next().is_some())
}

/// The declared prompts, when there are any (and the declarations are sound).
fn prompts() -> Option<&'static Prompts> {
    Prompts::try_global().ok().filter(|p| !p.list().is_empty())
}

/// The subcommands the app's declarations call for, but for names the app's own
/// subcommands take.
pub(super) fn subcommands(cli: &Cli) -> Vec<Command> {
    let taken = names(cli);
    let mut commands = Vec::new();
    if resources().is_some() {
        commands.push(Command::new("resources").about("List the declared resources and templates"));
        commands.push(
            Command::new("read")
                .about("Read a resource: `read <uri>`")
                .arg(Arg::new("uri").required(true).value_name("URI")),
        );
    }
    if prompts().is_some() {
        commands
            .push(Command::new("prompts").about("List the declared prompts and their arguments"));
        commands.push(
            Command::new("prompt")
                .about("Render a prompt: `prompt <name> [argument=value ...]`")
                .arg(Arg::new("name").required(true).value_name("NAME"))
                .arg(
                    Arg::new("arguments")
                        .num_args(0..)
                        .value_name("ARGUMENT=VALUE"),
                ),
        );
    }
    commands.retain(|command| taken.contains(&command.get_name()));
    commands
}

/// The names of [`subcommands`], which a command of the same name cannot shadow.
pub(super) fn names(cli: &Cli) -> Vec<&'static str> {
    let mut names = Vec::new();
    if resources().is_some() {
        names.extend(["resources", "read"]);
    }
    if prompts().is_some() {
        names.extend(["prompts", "prompt"]);
    }
    names.retain(|name| !cli.subcommands.iter().any(|own| own.get_name() == *name));
    names
}

/// Runs the subcommand `name` (one of [`names`]).
pub(super) async fn run(name: &str, sub: &ArgMatches, ctx: CommandContext, output: Output) -> i32 {
    match (name, resources(), prompts()) {
        ("resources", Some(resources), _) => output.result(&list_resources(resources)),
        ("read", Some(resources), _) => {
            let uri = sub.get_one::<String>("uri").cloned().unwrap_or_default();
            match resources.read(&uri, ctx).await {
                Ok(contents) if output.json => {
                    print_json(&json!({"contents": contents}));
                    EXIT_SUCCESS
                }
                Ok(contents) => output.result(&read_result(contents)),
                Err(error) => output.error(error),
            }
        }
        ("prompts", _, Some(prompts)) => output.result(&list_prompts(prompts)),
        ("prompt", _, Some(prompts)) => {
            let name = sub.get_one::<String>("name").cloned().unwrap_or_default();
            let pairs: Vec<&String> = sub
                .get_many::<String>("arguments")
                .into_iter()
                .flatten()
                .collect();
            let arguments = match prompt_arguments(&pairs) {
                Ok(arguments) => arguments,
                Err(error) => {
                    output.error(error);
                    return EXIT_USAGE;
                }
            };
            match prompts.render(&name, arguments, ctx).await {
                Ok(messages) if output.json => {
                    print_json(&json!({"messages": messages}));
                    EXIT_SUCCESS
                }
                Ok(messages) => {
                    for message in messages {
                        let role = json!(message.role);
                        print!(
                            "{}: {}",
                            role.as_str().unwrap_or_default(),
                            super::render::render_content(&[message.content])
                        );
                    }
                    EXIT_SUCCESS
                }
                Err(error) => output.error(error),
            }
        }
        _ => EXIT_USAGE,
    }
}

fn list_resources(resources: &Resources) -> CommandResult<Value> {
    let rows: Vec<Value> = resources
        .resources()
        .chain(resources.templates())
        .map(|def| {
            json!({
                "uri": def.uri(),
                "name": def.name(),
                "description": crate::text::summary(def.description()),
            })
        })
        .collect();
    CommandResult::success(Value::Array(rows))
}

/// Text contents as text blocks (printed as they are), the rest as resource blocks (one
/// line each).
fn read_result(contents: Vec<ResourceContents>) -> CommandResult<Value> {
    contents.into_iter().fold(
        CommandResult::success(Value::Null),
        |result, item| match item {
            ResourceContents::Text { text, .. } => result.with_content(Content::text(text)),
            blob => result.with_content(Content::Resource { resource: blob }),
        },
    )
}

fn list_prompts(prompts: &Prompts) -> CommandResult<Value> {
    let rows: Vec<Value> = prompts
        .list()
        .iter()
        .map(|entry| {
            // Optional arguments end with `?`.
            let arguments: Vec<String> = entry
                .arguments()
                .iter()
                .map(|a| format!("{}{}", a.name, if a.required { "" } else { "?" }))
                .collect();
            json!({
                "name": entry.name(),
                "arguments": arguments.join(", "),
                "description": crate::text::summary(entry.description()),
            })
        })
        .collect();
    CommandResult::success(Value::Array(rows))
}

/// `argument=value` pairs, as given on a command line, as a prompt's arguments (strings,
/// as MCP passes them).
///
/// # Errors
///
/// `VALIDATION_ERROR` for a pair without `=` or without a name.
pub fn prompt_arguments<S: AsRef<str>>(pairs: &[S]) -> Result<Map<String, Value>, CommandError> {
    pairs
        .iter()
        .map(AsRef::as_ref)
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), json!(value))),
            _ => Err(CommandError::new(
                codes::VALIDATION_ERROR,
                format!("'{pair}' is not argument=value"),
            )
            .with_suggestion(
                "Give each argument as name=value; `prompts` lists each prompt's arguments.",
            )),
        })
        .collect()
}
