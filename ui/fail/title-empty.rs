use afd_runtime::prelude::*;

/// Makes the selected text bold.
#[command(title = " ")]
fn format_bold() -> &'static str {
    "bold"
}

fn main() {}
