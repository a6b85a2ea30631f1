use afd_runtime::prelude::*;

/// Makes the selected text bold.
#[command(contexts("document-editing", "Text Styling"))]
fn format_bold() -> &'static str {
    "bold"
}

fn main() {}
