//! The todo example's command line as a binary of this package, for the CLI snapshot tests.

#[tokio::main]
async fn main() {
    std::process::exit(afd_examples::apps::todo_main().await);
}
