use afd_runtime::prelude::*;

/// Makes the selected text bold.
#[command(contexts())]
fn format_bold() -> &'static str {
    "bold"
}

fn main() {}
