//! The todo app: calls a few commands in-process and prints each `CommandResult`.
//!
//! ```sh
//! cargo run --example todo                  # in-memory store
//! cargo run --example todo -- --db todo.db  # a database file
//! ```

use afd_examples::todo::{self, TodoStore};
use afd_runtime::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let store = match args.as_slice() {
        [] => TodoStore::in_memory()?,
        [flag, path] if flag == "--db" && path == ":memory:" => TodoStore::in_memory()?,
        [flag, path] if flag == "--db" => TodoStore::open(path)?,
        _ => return Err("usage: todo [--db PATH | --db :memory:]".into()),
    };
    let registry = Registry::global();
    let ctx = todo::context(store);

    println!("{} commands registered:", registry.len());
    for (category, count) in registry.categories() {
        println!("  {category}: {count}");
    }

    let calls = [
        (
            "todo-create",
            json!({"title": "Buy milk", "priority": "high"}),
        ),
        (
            "todo-create",
            json!({"title": "Write the report", "description": "Q3 numbers"}),
        ),
        ("todo-list", json!({"sortBy": "priority"})),
        ("todo-create", json!({"title": ""})),
        ("todo-craete", json!({"title": "typo"})),
        ("todo-stats", json!({})),
    ];
    for (name, input) in calls {
        let result = registry.call(name, input.clone(), ctx.clone()).await;
        println!(
            "\n> {name} {input}\n{}",
            serde_json::to_string_pretty(&result)?
        );
    }
    Ok(())
}
