//! The ticket commands, in a crate of their own: a large catalog split over crates
//! rebuilds only the crate that changed. `#[command]` registers each one at link time, so
//! a server that links this crate serves them with nothing else to list.

use std::sync::Mutex;

use afd_runtime::prelude::*;

/// The tickets, kept in memory (the server puts one in its context).
#[derive(Default)]
pub struct Tickets(Mutex<Vec<Ticket>>);

/// One ticket.
#[derive(Clone, Serialize, JsonSchema)]
pub struct Ticket {
    /// Its number, from 1.
    pub number: u32,
    /// What it is about.
    pub title: String,
}

/// Input of `ticket-open`.
#[derive(Deserialize, JsonSchema)]
pub struct OpenTicket {
    /// What it is about.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
}

/// Opens a ticket.
#[command(title = "Open ticket", category = "tickets", mutation)]
pub fn ticket_open(input: OpenTicket, ctx: &CommandContext) -> Result<Ticket, CommandError> {
    let mut tickets = ctx
        .state::<Tickets>()?
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let ticket = Ticket {
        number: tickets.len() as u32 + 1,
        title: input.title,
    };
    tickets.push(ticket.clone());
    Ok(ticket)
}

/// Lists the open tickets.
#[command(title = "List tickets", category = "tickets")]
pub fn ticket_list(ctx: &CommandContext) -> Result<Vec<Ticket>, CommandError> {
    let tickets = ctx
        .state::<Tickets>()?
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    Ok(tickets.clone())
}

/// This crate's commands. Naming something of the crate in the server (as this) also
/// keeps the linker from dropping it: a crate nothing refers to is not linked, and its
/// commands are not registered.
pub const COMMANDS: [&afd_runtime::CommandDef; 2] = [ticket_open::COMMAND, ticket_list::COMMAND];
