use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Looks a thing up.
#[command(blocking)]
async fn thing_get(input: Input) -> String {
    input.name
}

fn main() {}
