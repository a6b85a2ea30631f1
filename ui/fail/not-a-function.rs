use afd_runtime::prelude::*;

/// A struct.
#[command]
struct Thing;

fn main() {}
