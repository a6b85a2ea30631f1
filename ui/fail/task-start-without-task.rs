use afd_runtime::prelude::*;

/// Rebuilds the index, turning into a task when the handler says so.
#[command(category = "thing", task_start = "handler")]
async fn thing_rebuild() -> String {
    String::new()
}

/// Runs as a task, declared with a word the attribute does not know.
#[command(category = "thing", task = "sometimes")]
async fn thing_export() -> String {
    String::new()
}

fn main() {}
