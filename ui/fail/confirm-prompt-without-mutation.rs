use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Deletes a thing.
#[command(confirm_prompt = "Really?")]
fn thing_delete(input: Input) -> String {
    input.name
}

fn main() {}
