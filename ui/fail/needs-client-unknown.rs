use afd_runtime::prelude::*;

/// Asks the client's user something.
#[command(category = "thing", needs_client("elicitation", "telepathy", "elicitation"))]
fn thing_ask() -> String {
    String::new()
}

fn main() {}
