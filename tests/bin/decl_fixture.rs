//! The tests' app for declared resources, prompts and completions: the conformance
//! example's fixtures (`examples/conformance`), served by the generated command line
//! (`afd-decl-fixture` serves MCP over stdio, `afd-decl-fixture serve --http ADDR`), so the
//! tests also reach `touch-resource`, which says a resource changed, as a subcommand.

use afd_runtime::Registry;

#[tokio::main]
async fn main() {
    // Naming the example's commands keeps its crate, and its declarations, linked.
    assert!(!afd_example_conformance::COMMANDS.is_empty());
    let code = afd_runtime::cli::Cli::new(Registry::global())
        .name("decl-fixture")
        .serve_by_default(true)
        .parse()
        .run(afd_example_conformance::context())
        .await;
    std::process::exit(code);
}
