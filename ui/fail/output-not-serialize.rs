use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

struct Output {
    name: String,
}

/// Does a thing.
#[command]
fn thing(input: Input) -> Output {
    Output { name: input.name }
}

fn main() {}
