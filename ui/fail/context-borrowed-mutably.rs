use afd_runtime::prelude::*;

/// Does a thing.
#[command]
fn thing(ctx: &mut CommandContext) -> u8 {
    let _ = ctx;
    1
}

fn main() {}
