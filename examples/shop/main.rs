//! The shop: 84 commands in 13 categories on SQLite, on the command line and served to MCP
//! clients.
//!
//! ```sh
//! cargo run --example shop                                  # MCP over stdio, lazy strategy
//! cargo run --example shop -- --strategy individual         # one tool per command
//! cargo run --example shop -- --http 127.0.0.1:8787         # streamable HTTP
//! cargo run --example shop -- --db shop.db                  # a database file
//! cargo run --example shop -- --report                      # context cost per strategy
//! cargo run --example shop -- call order-list --limit 5     # one command
//! cargo run --example shop -- commands --search "cancel order"
//! cargo run --example shop -- describe order-cancel
//! ```

#[tokio::main]
async fn main() {
    std::process::exit(afd_examples::apps::shop_main().await);
}
