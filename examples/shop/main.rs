//! The shop server: 83 commands in 13 categories on SQLite, served to MCP clients.
//!
//! ```sh
//! cargo run --example shop                                  # stdio, lazy strategy
//! cargo run --example shop -- --strategy individual         # one tool per command
//! cargo run --example shop -- --http 127.0.0.1:8787         # streamable HTTP
//! cargo run --example shop -- --db shop.db                  # a database file
//! cargo run --example shop -- --report                      # context cost per strategy
//! ```

use afd_examples::serve::{self, App, ServeArgs};
use afd_examples::shop::{self, ShopStore};
use clap::Parser;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    serve::init_logging();
    let args = ServeArgs::parse();
    let store = if args.db == ":memory:" {
        ShopStore::in_memory()?
    } else {
        ShopStore::open(&args.db)?
    };
    let app = App {
        name: "shop",
        registry: afd_runtime::Registry::global(),
        commands: shop::COMMAND_NAMES.to_vec(),
        context: shop::context(store),
    };
    serve::run(args, app).await
}
