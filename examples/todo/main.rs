//! The todo app.
//!
//! ```sh
//! cargo run --example todo                         # call a few commands in-process
//! cargo run --example todo -- serve                # serve MCP over stdio (lazy strategy)
//! cargo run --example todo -- serve --http 127.0.0.1:8787 --strategy individual
//! cargo run --example todo -- serve --report       # context cost per strategy
//! ```

use afd_examples::serve::{self, App, ServeArgs};
use afd_examples::todo::{self, TodoStore};
use clap::{Parser, Subcommand};
use serde_json::json;

/// The reference AFD todo app on SQLite.
#[derive(Debug, Parser)]
struct Cli {
    /// SQLite database file, or :memory:.
    #[arg(long, default_value = ":memory:", global = true)]
    db: String,
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Serve the todo commands to MCP clients.
    Serve(ServeArgs),
}

fn open(db: &str) -> rusqlite::Result<TodoStore> {
    if db == ":memory:" {
        TodoStore::in_memory()
    } else {
        TodoStore::open(db)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    serve::init_logging();
    let cli = Cli::parse();
    match cli.action {
        Some(Action::Serve(args)) => {
            let store = open(&args.db)?;
            let commands = todo::COMMANDS.iter().map(|c| c.name()).collect();
            serve::run(
                args,
                App {
                    name: "todo",
                    registry: todo::registry(),
                    commands,
                    context: todo::context(store),
                },
            )
            .await
        }
        None => demo(open(&cli.db)?).await,
    }
}

/// Calls a few commands in-process and prints each `CommandResult`.
async fn demo(store: TodoStore) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let registry = todo::registry();
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
