use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Streams a thing.
#[command(handoff_protocol = "websocket")]
fn thing(input: Input) -> String {
    input.name
}

fn main() {}
