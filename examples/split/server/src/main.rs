//! One server, commands from two crates: `Registry::global()` holds every `#[command]`
//! linked into the binary, wherever it was written. A large catalog split this way
//! rebuilds only the crate that changed.
//!
//! ```sh
//! cargo run -p afd-example-split -- commands
//! cargo run -p afd-example-split -- call ticket-open --title "Printer on fire"
//! cargo run -p afd-example-split -- serve     # the MCP server over stdio
//! ```

use afd_example_people::People;
use afd_example_tickets::Tickets;
use afd_runtime::{CommandContext, Registry};

#[tokio::main]
async fn main() {
    // Naming each crate's commands keeps both crates linked (see their COMMANDS).
    let linked = afd_example_tickets::COMMANDS.len() + afd_example_people::COMMANDS.len();
    assert!(
        Registry::global().len() >= linked,
        "a command crate was not linked"
    );
    let ctx = CommandContext::new()
        .with_state(Tickets::default())
        .with_state(People::default());
    std::process::exit(afd_runtime::cli::run(Registry::global(), ctx).await);
}
