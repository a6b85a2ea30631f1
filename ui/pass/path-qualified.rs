//! The path-qualified attribute, for modules where `command` means something else (clap's
//! derive has a `#[command(...)]` helper attribute): nothing named `command` is imported
//! from afd-runtime, and a local macro called `command` does not get in the way.

use afd_runtime::CommandContext;
use serde::Deserialize;

#[allow(unused_macros)]
macro_rules! command {
    () => {};
}

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
    let registry = afd_runtime::Registry::global();
    assert_eq!(registry.get("thing-get").unwrap().tags(), ["read"]);
    assert_eq!(thing_get::COMMAND.name(), "thing-get");
}
