//! How results are printed: as JSON, as MCP clients get them (`--json`), or for reading;
//! and the exit code each gives.

use serde::Serialize;
use serde_json::Value;

use super::render::{print_error, render_content, render_data};
use super::{EXIT_FAILURE, EXIT_SUCCESS};
use crate::error::CommandError;
use crate::result::CommandResult;

/// How results are printed.
#[derive(Clone, Copy)]
pub(super) struct Output {
    /// `--json`: as MCP clients get it.
    pub(super) json: bool,
}

impl Output {
    /// Prints a result: JSON as MCP clients get it, or for reading. Returns the exit code.
    pub(super) fn result(self, result: &CommandResult<Value>) -> i32 {
        if self.json {
            print_json(result);
        } else {
            for warning in &result.warnings {
                eprintln!("warning[{}]: {}", warning.code, warning.message);
            }
            match (&result.error, &result.data) {
                (Some(error), _) => print_error(error),
                (None, Some(data)) if !data.is_null() => print!("{}", render_data(data)),
                (None, _) => {
                    if let Some(reasoning) = &result.reasoning
                        && result.content.is_empty()
                    {
                        println!("{reasoning}");
                    }
                }
            }
            if result.error.is_none() {
                print!("{}", render_content(&result.content));
            }
        }
        exit_code(result.success)
    }

    /// Prints an error that happened before any call.
    pub(super) fn error(self, error: CommandError) -> i32 {
        self.result(&CommandResult::failure(error))
    }
}

pub(super) fn exit_code(success: bool) -> i32 {
    if success { EXIT_SUCCESS } else { EXIT_FAILURE }
}

/// Prints `value` as pretty JSON.
pub(super) fn print_json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(error) => eprintln!("error: {error}"),
    }
}
