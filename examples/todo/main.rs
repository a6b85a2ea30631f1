//! The todo app, on the command line and served to MCP clients.
//!
//! ```sh
//! cargo run --example todo                         # call a few commands in-process
//! cargo run --example todo -- serve                # serve MCP over stdio (lazy strategy)
//! cargo run --example todo -- serve --http 127.0.0.1:8787 --strategy individual
//! cargo run --example todo -- serve --report       # context cost per strategy
//! cargo run --example todo -- --db todo.db call todo-create --title "Buy milk"
//! cargo run --example todo -- --db todo.db todo-list --json
//! ```

#[tokio::main]
async fn main() {
    std::process::exit(afd_examples::apps::todo_main().await);
}
