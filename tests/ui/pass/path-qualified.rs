//! The path-qualified attribute, for modules where `command` is taken (clap's derive
//! also uses a `#[command(...)]` helper attribute).

use afd_runtime::CommandContext;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Input {
    id: u32,
}

/// Get a thing by id.
#[afd_runtime::command(tags("read"))]
fn thing_get(input: Input, _ctx: &CommandContext) -> u32 {
    input.id
}

fn main() {
    assert_eq!(afd_runtime::Registry::global().get("thing-get").unwrap().tags(), ["read"]);
}
