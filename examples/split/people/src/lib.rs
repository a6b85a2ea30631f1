//! The people commands, in a crate of their own beside the tickets crate; both are
//! linked into one server (`afd-example-split`).

use std::sync::Mutex;

use afd_runtime::prelude::*;

/// The people, kept in memory (the server puts one in its context).
#[derive(Default)]
pub struct People(Mutex<Vec<String>>);

/// Input of `person-add`.
#[derive(Deserialize, JsonSchema)]
pub struct AddPerson {
    /// Their name.
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
}

/// Adds a person; answers how many there are.
#[command(title = "Add person", category = "people", mutation)]
pub fn person_add(input: AddPerson, ctx: &CommandContext) -> Result<usize, CommandError> {
    let mut people = ctx
        .state::<People>()?
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    people.push(input.name);
    Ok(people.len())
}

/// Lists the people by name.
#[command(title = "List people", category = "people")]
pub fn person_list(ctx: &CommandContext) -> Result<Vec<String>, CommandError> {
    let people = ctx
        .state::<People>()?
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    Ok(people.clone())
}

/// This crate's commands (naming them in the server keeps the crate linked).
pub const COMMANDS: [&afd_runtime::CommandDef; 2] = [person_add::COMMAND, person_list::COMMAND];
