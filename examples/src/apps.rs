//! The example apps' `main`s, in the library so that the snapshot tests can build the
//! same command lines as test binaries (cargo builds a package's own binaries before its
//! tests, not another package's examples).

use serde_json::json;

use crate::serve::{self, App};
use crate::shop::{self, ShopStore};
use crate::todo::{self, TodoStore};

/// The shop's command line; returns the exit code.
pub async fn shop_main() -> i32 {
    let parsed = serve::cli(
        "shop",
        afd_runtime::Registry::global(),
        shop::COMMAND_NAMES.to_vec(),
    )
    .about("The shop: 84 commands on SQLite, from the command line or served over MCP")
    .parse();
    let db = serve::db(&parsed);
    let store = if db == ":memory:" {
        ShopStore::in_memory()
    } else {
        ShopStore::open(db)
    };
    let store = match store {
        Ok(store) => store,
        Err(error) => {
            eprintln!("error: cannot open the database {db}: {error}");
            return afd_runtime::cli::EXIT_FAILURE;
        }
    };
    let app = App {
        name: "shop",
        registry: afd_runtime::Registry::global(),
        commands: shop::COMMAND_NAMES.to_vec(),
        context: shop::context(store),
    };
    serve::run(parsed, app).await
}

fn open(db: &str) -> rusqlite::Result<TodoStore> {
    if db == ":memory:" {
        TodoStore::in_memory()
    } else {
        TodoStore::open(db)
    }
}

/// The todo app's command line (with no subcommand: a short demo); returns the exit code.
pub async fn todo_main() -> i32 {
    let commands = todo::COMMANDS.iter().map(|c| c.name()).collect();
    let parsed = serve::cli("todo", todo::registry(), commands)
        .about("The reference AFD todo app on SQLite (with no subcommand: a short demo)")
        .serve_by_default(false)
        .parse();
    let store = match open(serve::db(&parsed)) {
        Ok(store) => store,
        Err(error) => {
            eprintln!("error: cannot open the database: {error}");
            return afd_runtime::cli::EXIT_FAILURE;
        }
    };
    if parsed.matches().subcommand().is_none() && !parsed.matches().get_flag(serve::REPORT) {
        return match demo(store).await {
            Ok(()) => afd_runtime::cli::EXIT_SUCCESS,
            Err(error) => {
                eprintln!("error: {error}");
                afd_runtime::cli::EXIT_FAILURE
            }
        };
    }
    let app = App {
        name: "todo",
        registry: todo::registry(),
        commands: todo::COMMANDS.iter().map(|c| c.name()).collect(),
        context: todo::context(store),
    };
    serve::run(parsed, app).await
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
