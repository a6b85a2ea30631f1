//! Carries out what was parsed: a command call (confirmation, progress, Ctrl-C), the
//! built-in subcommands, and printing (readable, or `--json` as MCP clients get it).
//! Every call goes through [`Dispatcher::call`] or the built-in tools over it.

use std::future::Future;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use clap::ArgMatches;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::app::{CONTEXT, JSON, READ_ONLY, YES};
use super::flags::{Flags, read_input};
use super::log::StderrLog;
use super::output::{Output, exit_code, print_json};
use super::progress::TerminalProgress;
use super::render::{print_error, render_data};
use super::{Cli, EXIT_INTERRUPTED, EXIT_SUCCESS, EXIT_USAGE};
use crate::command_context::CommandContext;
use crate::dispatch::Dispatcher;
use crate::error::{CommandError, codes};
use crate::registry::Scope;
use crate::result::CommandResult;
use crate::tools::meta::{BuiltinOutcome, MetaTools};
use crate::{BatchRequest, BatchResult, PipeRequest, PipeResult};

pub(super) async fn run(
    cli: &Cli,
    dispatcher: &Dispatcher,
    matches: &ArgMatches,
    ctx: CommandContext,
) -> i32 {
    let output = Output {
        json: matches.get_flag(JSON),
    };
    let Some((name, sub)) = matches.subcommand() else {
        return serve(cli, matches, ctx).await;
    };
    if name != "serve" {
        super::logging::install(super::logging::LogFormat::Text, "warn", None);
    }
    let ctx = match enter_context(dispatcher, matches, ctx).await {
        Ok(ctx) => ctx,
        Err(error) => return output.error(error),
    };
    let yes = matches.get_flag(YES);
    match name {
        "call" => match sub.subcommand() {
            Some((command, args)) => call(dispatcher, command, args, ctx, output, yes).await,
            None => EXIT_USAGE,
        },
        "commands" => commands(dispatcher, sub, ctx, output).await,
        "describe" => describe(dispatcher, sub, ctx, output).await,
        "batch" => from_file(dispatcher, "afd-batch", sub, ctx, output, yes).await,
        "pipe" => from_file(dispatcher, "afd-pipe", sub, ctx, output, yes).await,
        "contexts" => contexts(dispatcher, ctx.session(), output).await,
        "completions" => completions(cli, dispatcher, sub),
        declared if super::declared::names(cli).contains(&declared) => {
            super::declared::run(declared, sub, ctx, output).await
        }
        "serve" => serve(cli, sub, ctx).await,
        command => call(dispatcher, command, sub, ctx, output, yes).await,
    }
}

#[cfg(feature = "mcp")]
async fn serve(cli: &Cli, matches: &ArgMatches, ctx: CommandContext) -> i32 {
    super::serve::run(cli, matches, ctx).await
}

#[cfg(not(feature = "mcp"))]
async fn serve(_cli: &Cli, _matches: &ArgMatches, _ctx: CommandContext) -> i32 {
    eprintln!("error: this build has no MCP server (the `mcp` feature is off); see --help");
    EXIT_USAGE
}

/// With `--context NAME`, a session in that context (read-only with `--read-only`).
async fn enter_context(
    dispatcher: &Dispatcher,
    matches: &ArgMatches,
    ctx: CommandContext,
) -> Result<CommandContext, CommandError> {
    let Some(context) = matches.get_one::<String>(CONTEXT) else {
        return Ok(ctx);
    };
    let scope = if matches.get_flag(READ_ONLY) {
        Scope::ReadOnly
    } else {
        Scope::Full
    };
    let session = dispatcher.open_session().await?;
    dispatcher
        .enter_context(Some(&session), context, Some(scope))
        .await?;
    Ok(ctx.with_session(session))
}

/// Runs `future` with a cancellation token that Ctrl-C cancels; tells whether it did.
async fn interruptible<T>(
    ctx: CommandContext,
    run: impl FnOnce(CommandContext) -> std::pin::Pin<Box<dyn Future<Output = T> + Send>>,
) -> (T, bool) {
    let token = CancellationToken::new();
    let future = run(ctx.with_cancellation(token.clone()));
    tokio::pin!(future);
    // Biased, with Ctrl-C first: its handler is installed on the first poll, so it must be
    // in place before the command starts running (and perhaps reports that it has started).
    // Polled the other way round, a Ctrl-C in that window would kill the process instead.
    tokio::select! {
        biased;
        Ok(()) = tokio::signal::ctrl_c() => {
            token.cancel();
            (future.await, true)
        }
        value = &mut future => (value, false),
    }
}

/// Asks for confirmation of the commands among `names` that want it, unless `--yes`.
fn confirm(
    dispatcher: &Dispatcher,
    calls: &[(&str, Option<&Value>)],
    yes: bool,
) -> Result<(), CommandError> {
    if yes {
        return Ok(());
    }
    let prompts: Vec<(String, String)> = calls
        .iter()
        .filter_map(|(name, input)| {
            let entry = dispatcher.lookup(name)?.entry;
            if !dispatcher.is_exposed(entry.name()) {
                return None;
            }
            let prompt = entry.def().confirm_prompt()?;
            Some((
                entry.name().to_owned(),
                crate::text::fill_prompt(prompt, *input),
            ))
        })
        .collect();
    if prompts.is_empty() {
        return Ok(());
    }
    let text = prompts
        .iter()
        .map(|(_, prompt)| prompt.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let names = prompts
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(CommandError::new(
            codes::CONFIRMATION_REQUIRED,
            format!("{names} asks for confirmation: {text}"),
        )
        .with_suggestion("Run it again with --yes to confirm"));
    }
    eprint!("{text} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(CommandError::new(
            codes::CONFIRMATION_REQUIRED,
            format!("{names} was not confirmed; nothing was done"),
        )
        .with_suggestion("Answer y to run it, or pass --yes"))
    }
}

async fn call(
    dispatcher: &Dispatcher,
    name: &str,
    args: &ArgMatches,
    ctx: CommandContext,
    output: Output,
    yes: bool,
) -> i32 {
    let Some(resolved) = dispatcher.lookup(name) else {
        return output.error(dispatcher.not_found(name));
    };
    let flags = Flags::from_schema(resolved.entry.input_schema(), &[]);
    let input = match flags.input(args) {
        Ok(input) => input,
        Err(error) => return output.error(error),
    };
    if let Err(error) = confirm(dispatcher, &[(name, Some(&input))], yes) {
        return output.error(error);
    }
    let progress = Arc::new(TerminalProgress::stderr());
    let ctx = ctx
        .with_progress(progress.clone())
        .with_log(Arc::new(StderrLog::default()));
    let dispatcher = dispatcher.clone();
    let name = name.to_owned();
    let (result, interrupted) = interruptible(ctx, move |ctx| {
        Box::pin(async move { dispatcher.call(&name, input, ctx).await })
    })
    .await;
    progress.finish();
    let code = output.result(&result);
    if interrupted { EXIT_INTERRUPTED } else { code }
}

async fn commands(
    dispatcher: &Dispatcher,
    args: &ArgMatches,
    ctx: CommandContext,
    output: Output,
) -> i32 {
    let mut input = json!({"detail": "summary"});
    let search: Vec<&String> = args
        .get_many::<String>("search")
        .map(Iterator::collect)
        .unwrap_or_default();
    if let Some(category) = args.get_one::<String>("category") {
        input["category"] = json!(category);
    }
    if let Some(tags) = args.get_many::<String>("tag") {
        input["tag"] = json!(tags.collect::<Vec<_>>());
    }
    match search.as_slice() {
        [] => {}
        [query] => input["search"] = json!(query),
        phrasings => input["search"] = json!(phrasings),
    }
    let limit = args
        .get_one::<usize>("limit")
        .copied()
        .unwrap_or(if search.is_empty() { 100 } else { 10 });
    input["limit"] = json!(limit);
    if let Some(session) = ctx.session() {
        input["session"] = json!(session);
    }
    let result = match builtin(dispatcher, "afd-discover", input, ctx).await.0 {
        BuiltinOutcome::Result(result) => result,
        _ => return output.error(CommandError::internal("afd-discover answered oddly")),
    };
    if output.json || !result.success {
        return output.result(&result);
    }
    let data = result.data.unwrap_or_default();
    let rows = |list: &Value| -> Vec<Value> {
        list.as_array()
            .map(|commands| {
                commands
                    .iter()
                    .map(|command| {
                        json!({
                            "name": command["name"],
                            "category": command["category"],
                            "description": command["description"],
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let found = rows(&data["commands"]);
    match data["match"].as_str() {
        // A search nothing in the catalog can serve: the nearest commands do something
        // else, and are shown as such, never as results.
        Some("none") => {
            println!("no command does what was asked");
            let nearest = rows(&data["notAMatch"]);
            if !nearest.is_empty() {
                println!("\nnot a match (the nearest; they do something else):");
                print!("{}", render_data(&Value::Array(nearest)));
            }
            let categories: Vec<&str> = data["availableCategories"]
                .as_array()
                .map(|all| all.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if !categories.is_empty() {
                println!(
                    "\nbrowse a category instead (commands --category NAME): {}",
                    categories.join(", ")
                );
            }
        }
        _ if found.is_empty() => println!("no commands match"),
        verdict => {
            if verdict == Some("weak") {
                println!("a weak match: check that a command does what was asked before using it");
            }
            print!("{}", render_data(&Value::Array(found)));
        }
    }
    if data["hasMore"].as_bool() == Some(true) {
        println!(
            "({} of {}; use --limit, --category or --search for the rest)",
            data["returned"], data["filtered"]
        );
    }
    EXIT_SUCCESS
}

async fn describe(
    dispatcher: &Dispatcher,
    args: &ArgMatches,
    ctx: CommandContext,
    output: Output,
) -> i32 {
    let name = args.get_one::<String>("command").map_or("", String::as_str);
    if output.json {
        return match builtin(dispatcher, "afd-detail", json!({"command": name}), ctx)
            .await
            .0
        {
            BuiltinOutcome::Result(result) => output.result(&result),
            _ => output.error(CommandError::internal("afd-detail answered oddly")),
        };
    }
    let Some(resolved) = dispatcher.lookup(name) else {
        return output.error(dispatcher.not_found(name));
    };
    let entry = resolved.entry;
    let def = entry.def();
    let mut text = format!("{}\n\n{}\n\n", def.name(), def.description());
    text.push_str(&format!("category: {}\n", def.category()));
    if !def.tags().is_empty() {
        text.push_str(&format!("tags: {}\n", def.tags().join(", ")));
    }
    let kind = match (def.is_mutation(), def.is_destructive()) {
        (_, true) => "changes state, destructive",
        (true, false) => "changes state",
        (false, false) => "read-only",
    };
    text.push_str(&format!("effect: {kind}\n"));
    if let Some(prompt) = def.confirm_prompt() {
        text.push_str(&format!("asks for confirmation: {prompt}\n"));
    }
    if !def.aliases().is_empty() {
        text.push_str(&format!("aliases: {}\n", def.aliases().join(", ")));
    }
    if !def.deprecated_aliases().is_empty() {
        text.push_str(&format!(
            "deprecated aliases: {}\n",
            def.deprecated_aliases().join(", ")
        ));
    }
    if !dispatcher.is_exposed(def.name()) {
        text.push_str("callable here: no (not exposed on the command line)\n");
    }
    let flags = Flags::from_schema(entry.input_schema(), &[]);
    if flags.fields().is_empty() {
        text.push_str("\nflags: none\n");
    } else {
        let rows: Vec<Value> = flags
            .fields()
            .iter()
            .map(|field| {
                json!({
                    "flag": format!("--{}", field.long),
                    "type": field.kind.describe(),
                    "required": if field.required { "yes" } else { "" },
                    "description": field.description.clone().unwrap_or_default(),
                })
            })
            .collect();
        text.push_str("\nflags:\n");
        text.push_str(&render_data(&Value::Array(rows)));
    }
    for skipped in flags.skipped() {
        text.push_str(&format!("(`{skipped}` is given with --input-json only)\n"));
    }
    print!("{text}");
    EXIT_SUCCESS
}

fn load(args: &ArgMatches) -> Result<Value, CommandError> {
    let path = args
        .get_one::<PathBuf>("file")
        .cloned()
        .unwrap_or_else(|| PathBuf::from("-"));
    let text = read_input(&path)?;
    serde_json::from_str(&text).map_err(|error| {
        CommandError::validation(format!("{} is not valid JSON: {error}", path.display()))
    })
}

/// afd-batch or afd-pipe from a JSON file (or stdin): confirmation for the commands it
/// names, then the built-in tool through [`MetaTools::call_builtin`], as MCP runs it.
async fn from_file(
    dispatcher: &Dispatcher,
    tool: &str,
    args: &ArgMatches,
    ctx: CommandContext,
    output: Output,
    yes: bool,
) -> i32 {
    let input = match load(args) {
        Ok(input) => input,
        Err(error) => return output.error(error),
    };
    // The calls the file names, for confirmation; a file that does not parse is refused by
    // the tool itself, with its own error.
    let calls: Vec<(String, Option<Value>)> = match tool {
        "afd-batch" => BatchRequest::from_value(input.clone())
            .map(|request| {
                let calls = request.commands.into_iter();
                calls.map(|call| (call.command, call.input)).collect()
            })
            .unwrap_or_default(),
        _ => PipeRequest::from_value(input.clone())
            .map(|request| {
                let steps = request.steps.into_iter();
                steps.map(|step| (step.command, step.input)).collect()
            })
            .unwrap_or_default(),
    };
    let calls: Vec<(&str, Option<&Value>)> = calls
        .iter()
        .map(|(name, input)| (name.as_str(), input.as_ref()))
        .collect();
    if let Err(error) = confirm(dispatcher, &calls, yes) {
        return output.error(error);
    }
    let (outcome, interrupted) = builtin(dispatcher, tool, input, ctx).await;
    let code = match outcome {
        BuiltinOutcome::Result(result) => output.result(&result),
        BuiltinOutcome::Batch(result) => print_batch(&result, output),
        BuiltinOutcome::Pipe(result) => print_pipe(&result, output),
    };
    if interrupted { EXIT_INTERRUPTED } else { code }
}

/// Runs a built-in tool as a call of its own (middleware and observers see it), with
/// Ctrl-C cancelling it; tells whether it was interrupted.
async fn builtin(
    dispatcher: &Dispatcher,
    tool: &str,
    input: Value,
    ctx: CommandContext,
) -> (BuiltinOutcome, bool) {
    let (dispatcher, tool) = (dispatcher.clone(), tool.to_owned());
    let (outcome, interrupted) = interruptible(ctx, move |ctx| {
        Box::pin(async move { dispatcher.call_builtin(&tool, input, ctx).await })
    })
    .await;
    let outcome = outcome.unwrap_or_else(|| {
        BuiltinOutcome::Result(CommandResult::failure(CommandError::internal(
            "no such built-in tool",
        )))
    });
    (outcome, interrupted)
}

fn print_batch(result: &BatchResult, output: Output) -> i32 {
    if output.json {
        print_json(result);
    } else {
        let rows: Vec<Value> = result
            .results
            .iter()
            .map(|entry| {
                let value = serde_json::to_value(entry).unwrap_or_default();
                json!({
                    "id": value["id"],
                    "command": value["command"],
                    "success": value["result"]["success"],
                    "error": value["result"]["error"]["code"],
                })
            })
            .collect();
        print!("{}", render_data(&Value::Array(rows)));
        println!("{}", result.reasoning);
    }
    exit_code(result.success)
}

fn print_pipe(result: &PipeResult, output: Output) -> i32 {
    if output.json {
        print_json(result);
        return exit_code(result.success);
    }
    match (&result.error, &result.data) {
        (Some(error), _) => print_error(error),
        (None, Some(data)) if result.success => print!("{}", render_data(data)),
        _ => {}
    }
    if !result.success {
        // Which steps failed, and why.
        for step in &result.steps {
            let step = serde_json::to_value(step).unwrap_or_default();
            if let Some(error) = step.get("error").filter(|error| !error.is_null()) {
                eprintln!(
                    "step {} ({}): {}: {}",
                    step["index"],
                    step["command"].as_str().unwrap_or_default(),
                    error["code"].as_str().unwrap_or_default(),
                    error["message"].as_str().unwrap_or_default()
                );
            }
        }
    }
    exit_code(result.success)
}

async fn contexts(dispatcher: &Dispatcher, session: Option<&str>, output: Output) -> i32 {
    match dispatcher.list_contexts(session).await {
        Ok((data, reasoning)) => {
            output.result(&CommandResult::success(data).with_reasoning(reasoning))
        }
        Err(error) => output.error(error),
    }
}

fn completions(cli: &Cli, dispatcher: &Dispatcher, args: &ArgMatches) -> i32 {
    let Some(shell) = args.get_one::<clap_complete::Shell>("shell").copied() else {
        return EXIT_USAGE;
    };
    let mut command = cli.command(dispatcher);
    let name = command.get_name().to_owned();
    clap_complete::generate(shell, &mut command, name, &mut std::io::stdout());
    EXIT_SUCCESS
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::text::fill_prompt as fill;

    #[test]
    fn a_prompt_names_the_input() {
        assert_eq!(
            fill(
                "This will cancel order {orderId} ({reason}). Continue?",
                Some(&json!({"orderId": 7, "reason": "late"}))
            ),
            "This will cancel order 7 (late). Continue?"
        );
        assert_eq!(fill("Sure?", None), "Sure?");
    }
}
