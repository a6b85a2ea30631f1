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
fn thing(input: Input) -> CommandResult<Output> {
    CommandResult::success(Output { name: input.name })
}

fn main() {}
