//! The clap command tree: the global flags, the built-in subcommands, and one subcommand
//! per exposed command (under `call`, and directly where its name is free), with flags from
//! its input schema.

use std::path::PathBuf;

use clap::{Arg, ArgAction, Command};

use super::Cli;
use super::flags::Flags;
use crate::dispatch::Dispatcher;
use crate::registry::CommandEntry;

/// `--json`: print results as JSON.
pub(super) const JSON: &str = "json";
/// `--yes`: confirm without asking.
pub(super) const YES: &str = "yes";
/// `--context NAME`: run in a runtime context.
pub(super) const CONTEXT: &str = "context";
/// `--read-only`: the context's read-only scope.
pub(super) const READ_ONLY: &str = "read-only";

/// The heading of the flags every subcommand takes.
const GLOBAL: &str = "Global options";

/// The built-in subcommands, which a command of the same name cannot shadow.
pub(super) const BUILT_IN: [&str; 9] = [
    "call",
    "commands",
    "describe",
    "batch",
    "pipe",
    "contexts",
    "serve",
    "completions",
    "help",
];

/// The flag names every command's flags must leave free: the global flags and the app's
/// global arguments.
fn reserved(cli: &Cli) -> Vec<String> {
    let mut names: Vec<String> = [JSON, YES, CONTEXT, READ_ONLY]
        .into_iter()
        .map(str::to_owned)
        .collect();
    for arg in &cli.args {
        if arg.is_global_set()
            && let Some(long) = arg.get_long()
        {
            names.push(long.to_owned());
        }
    }
    names
}

pub(super) fn build(cli: &Cli, dispatcher: &Dispatcher) -> Command {
    let mut root = Command::new(cli.name.clone())
        .bin_name(cli.name.clone())
        .arg(
            Arg::new(JSON)
                .long(JSON)
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Print results as JSON: the CommandResult exactly as MCP clients get it")
                .help_heading(GLOBAL),
        )
        .arg(
            Arg::new(YES)
                .long(YES)
                .short('y')
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Answer yes to confirmation prompts")
                .help_heading(GLOBAL),
        )
        .arg(
            Arg::new(CONTEXT)
                .long(CONTEXT)
                .global(true)
                .value_name("NAME")
                .help("Run in this runtime context (see `contexts`)")
                .help_heading(GLOBAL),
        )
        .arg(
            Arg::new(READ_ONLY)
                .long(READ_ONLY)
                .global(true)
                .action(ArgAction::SetTrue)
                .requires(CONTEXT)
                .help("Enter the context read-only: commands that change state are refused")
                .help_heading(GLOBAL),
        );
    root = match &cli.about {
        Some(about) => root.about(about.clone()),
        None => root.about(format!(
            "{}: its commands from the command line, or served over MCP",
            cli.name
        )),
    };
    if let Some(version) = &cli.version {
        root = root.version(version.clone());
    }
    for arg in &cli.args {
        let arg = if arg.is_global_set() && arg.get_help_heading().is_none() {
            arg.clone().help_heading(GLOBAL)
        } else {
            arg.clone()
        };
        root = root.arg(arg);
    }
    #[cfg(feature = "mcp")]
    if cli.serve_by_default {
        root = root.args(super::serve::args());
    }
    let reserved = reserved(cli);
    let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();

    let mut call = Command::new("call")
        .about("Call a command: `call <command> --field value ...`")
        .subcommand_required(true)
        .subcommand_value_name("COMMAND");
    let mut direct = Vec::new();
    let declared = super::declared::names(cli);
    let app_names: Vec<String> = cli
        .subcommands
        .iter()
        .map(|command| command.get_name().to_owned())
        .collect();
    for entry in dispatcher.exposed_entries() {
        for (name, hidden) in names_of(entry) {
            let command = command_for(entry, name, &reserved).hide(hidden);
            let free = !BUILT_IN.contains(&name)
                && !declared.contains(&name)
                && !app_names.iter().any(|app| app == name);
            if free {
                direct.push(command.clone().hide(true));
            }
            call = call.subcommand(command);
        }
    }
    root = root
        .subcommand(call)
        .subcommand(
            Command::new("commands")
                .about("List the commands, or search them (ranked as afd-discover)")
                .arg(
                    Arg::new("category")
                        .long("category")
                        .value_name("CATEGORY")
                        .help("Only this category"),
                )
                .arg(
                    Arg::new("tag")
                        .long("tag")
                        .value_name("TAG")
                        .action(ArgAction::Append)
                        .help("Only commands with this tag (repeat for several: all must match)"),
                )
                .arg(
                    Arg::new("search")
                        .long("search")
                        .value_name("QUERY")
                        .action(ArgAction::Append)
                        .help("Search words, best matches first (repeat for up to 3 phrasings of one request, ranked together)"),
                )
                .arg(
                    Arg::new("limit")
                        .long("limit")
                        .value_name("N")
                        .value_parser(clap::value_parser!(usize))
                        .help("At most this many commands [default: all, or 10 when searching]"),
                ),
        )
        .subcommand(
            Command::new("describe")
                .about("Show a command's full definition and its flags")
                .arg(Arg::new("command").required(true).value_name("COMMAND")),
        )
        .subcommand(
            Command::new("batch")
                .about("Run several commands from a JSON file (afd-batch's input; '-': stdin)")
                .arg(file_arg()),
        )
        .subcommand(
            Command::new("pipe")
                .about("Run a pipeline from a JSON file (afd-pipe's input; '-': stdin)")
                .arg(file_arg()),
        )
        .subcommand(Command::new("contexts").about("List the runtime contexts"))
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(clap::value_parser!(clap_complete::Shell)),
                ),
        );
    #[cfg(feature = "mcp")]
    {
        root = root.subcommand(
            Command::new("serve")
                .about("Serve the commands to MCP clients (stdio unless --http is given)")
                .args(super::serve::args()),
        );
    }
    root = root.subcommands(super::declared::subcommands(cli));
    for command in &cli.subcommands {
        root = root.subcommand(command.clone());
    }
    root.subcommands(direct)
}

fn file_arg() -> Arg {
    Arg::new("file")
        .required(true)
        .value_name("FILE")
        .value_parser(clap::value_parser!(PathBuf))
}

/// The names a command answers to: its own, its aliases (hidden) and its deprecated
/// aliases (hidden; the dispatcher warns when one is used).
fn names_of(entry: &CommandEntry) -> Vec<(&'static str, bool)> {
    let def = entry.def();
    std::iter::once((def.name(), false))
        .chain(def.aliases().iter().map(|alias| (*alias, true)))
        .chain(def.deprecated_aliases().iter().map(|alias| (*alias, true)))
        .collect()
}

/// The subcommand `name` for `entry`, with flags from its input schema.
fn command_for(entry: &CommandEntry, name: &'static str, reserved: &[&str]) -> Command {
    let def = entry.def();
    let mut about = crate::text::summary(def.description()).to_owned();
    if def.confirm_prompt().is_some() {
        about.push_str(" (asks for confirmation)");
    }
    let flags = Flags::from_schema(entry.input_schema(), reserved);
    let mut command = Command::new(name)
        .about(about)
        .long_about(def.description().to_owned());
    if name != def.name() {
        command = command.about(format!("Alias of {}", def.name()));
    }
    flags.apply(command)
}
