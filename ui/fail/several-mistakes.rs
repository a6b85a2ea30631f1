use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Deletes a thing.
#[command(name = "Thing Delete", colour = "red", destructive, execution_time = "soon")]
fn thing_delete(input: Input, extra: Input) -> String {
    input.name + &extra.name
}

fn main() {}
