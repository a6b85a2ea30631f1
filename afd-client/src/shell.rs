//! `afd shell`: the subcommands read line by line on one connection, split into words as
//! a shell does, with history kept in a file and Tab completing subcommands and the
//! server's tool names (and, on an afd server, its command names from afd-discover).

use std::borrow::Cow;
use std::path::PathBuf;

use afd_runtime::cli::{EXIT_FAILURE, EXIT_SUCCESS};
use clap::Command;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{Config, Context, Editor, Helper};
use serde_json::{Value, json};

use super::{Client, json_flag, list, request, run_subcommand, subcommands};

/// Words that leave the shell.
const EXIT_WORDS: [&str; 2] = ["exit", "quit"];

/// At most this many command names are fetched for completion.
const MAX_NAMES: usize = 10_000;

/// Runs the shell until end of input or `exit`; the exit code is the last command's.
pub(crate) async fn run(client: &Client, json: bool) -> i32 {
    let names = match names(client).await {
        Ok(names) => names,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    // A line started with a space is left out of the history, as in bash.
    let config = Config::builder().history_ignore_space(true).build();
    let mut editor: Editor<Names, FileHistory> = match Editor::with_config(config) {
        Ok(editor) => editor,
        Err(error) => {
            eprintln!("error: cannot start the shell: {error}");
            return EXIT_FAILURE;
        }
    };
    editor.set_helper(Some(Names { names }));
    let history = history_file();
    if let Some(path) = &history {
        // No history yet is the usual first run.
        let _ = editor.load_history(path);
    }
    eprintln!("afd shell: `help` lists the commands, Tab completes names, `exit` leaves");
    let mut code = EXIT_SUCCESS;
    loop {
        let line = match editor.readline("afd> ") {
            Ok(line) => line,
            // Ctrl-C drops the line being typed, as in a shell.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(error) => {
                eprintln!("error: {error}");
                code = EXIT_FAILURE;
                break;
            }
        };
        if !line.trim().is_empty() {
            // Added by hand: rustyline adds nothing itself when input is not a terminal.
            let _ = editor.add_history_entry(line.as_str());
        }
        let Some(words) = shlex::split(&line) else {
            eprintln!("error: unclosed quote");
            continue;
        };
        match words.first().map(String::as_str) {
            None => continue,
            Some(word) if EXIT_WORDS.contains(&word) => break,
            Some(_) => {}
        }
        match parser().try_get_matches_from(&words) {
            Ok(mut matches) => {
                if json {
                    // The shell was started with --json: every line prints JSON.
                    matches = parser()
                        .try_get_matches_from(words.iter().map(String::as_str).chain(["--json"]))
                        .unwrap_or(matches);
                }
                code = run_subcommand(client, &matches).await;
            }
            // `help`, `--help` and mistakes: clap's text, and the next line.
            Err(error) => {
                let _ = error.print();
            }
        }
    }
    if let Some(path) = &history
        && let Err(error) = editor.save_history(path)
    {
        eprintln!("warning: history not saved to {}: {error}", path.display());
    }
    code
}

/// The shell's parser: the subcommands, each line without a program name.
fn parser() -> Command {
    Command::new("afd")
        .no_binary_name(true)
        .disable_version_flag(true)
        .arg(json_flag())
        .subcommand_required(true)
        .help_template("{subcommands}\n\nexit, quit  Leave the shell")
        .subcommands(subcommands())
}

/// `$AFD_HISTORY`, else `.afd_history` in the home directory; none without either.
fn history_file() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AFD_HISTORY") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".afd_history"))
}

/// The server's tool names, and on an afd server its command names from afd-discover.
async fn names(client: &Client) -> Result<Vec<String>, String> {
    let tools = list(client).await?;
    let mut names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    if names.iter().any(|name| name == "afd-discover") {
        let mut offset = 0;
        while names.len() < MAX_NAMES {
            let input = json!({"detail": "name", "limit": 200, "offset": offset});
            let Ok(result) = request(client, "afd-discover", input).await else {
                break;
            };
            let data = result
                .structured_content
                .as_ref()
                .and_then(|value| value.get("data"))
                .cloned()
                .unwrap_or_default();
            let page: Vec<String> = data["commands"]
                .as_array()
                .map(|commands| {
                    let names = commands.iter().filter_map(|c| c["name"].as_str());
                    names.map(str::to_owned).collect()
                })
                .unwrap_or_default();
            offset += page.len();
            names.extend(page);
            if data["hasMore"] != Value::Bool(true) || offset == 0 {
                break;
            }
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Tab completion over the subcommands and the server's names.
struct Names {
    names: Vec<String>,
}

impl Names {
    /// Where the word under the cursor starts, and the words that complete it: a
    /// subcommand first, then a tool or command name after `call` or `detail`.
    fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |at| at + 1);
        let word = &before[start..];
        let previous: Vec<&str> = before[..start].split_whitespace().collect();
        let pool: Vec<String> = match previous.as_slice() {
            [] => subcommands()
                .iter()
                .map(|command| command.get_name().to_owned())
                .chain(["help", "exit", "quit"].map(str::to_owned))
                .collect(),
            ["call" | "detail"] => self.names.clone(),
            _ => Vec::new(),
        };
        let mut found: Vec<String> = pool
            .into_iter()
            .filter(|name| name.starts_with(word))
            .collect();
        found.sort();
        (start, found)
    }
}

impl Completer for Names {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, found) = self.candidates(line, pos);
        let pairs = found
            .into_iter()
            .map(|name| Pair {
                display: name.clone(),
                replacement: format!("{name} "),
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for Names {
    type Hint = String;
}

impl Highlighter for Names {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for Names {}

impl Helper for Names {}

#[cfg(test)]
mod tests {
    use super::Names;

    fn names() -> Names {
        Names {
            names: ["todo-create", "todo-list", "afd-discover"]
                .map(str::to_owned)
                .to_vec(),
        }
    }

    #[test]
    fn the_first_word_completes_to_a_subcommand() {
        assert_eq!(
            names().candidates("di", 2),
            (0, vec!["discover".to_owned()])
        );
        assert_eq!(
            names().candidates("", 0).1,
            [
                "batch",
                "call",
                "detail",
                "discover",
                "exit",
                "help",
                "prompt",
                "prompts",
                "quit",
                "read",
                "resources",
                "tools"
            ]
        );
    }

    #[test]
    fn a_name_completes_after_call_and_detail() {
        assert_eq!(
            names().candidates("call todo-", 10),
            (5, vec!["todo-create".to_owned(), "todo-list".to_owned()])
        );
        assert_eq!(
            names().candidates("detail afd", 10),
            (7, vec!["afd-discover".to_owned()])
        );
        // Flags of a call are not names.
        assert!(names().candidates("call todo-create --ti", 21).1.is_empty());
    }
}
