//! The guide: how to build with afd-rs, chapter by chapter, beside the API reference.
//! Every Rust example in it is compiled (and, unless marked `no_run`, run) by
//! `cargo test --doc -p afd-runtime`.
//!
//! 1. [Writing commands](_01_writing_commands): handlers, the `#[command]` keys, the
//!    registry, catalogs split over crates.
//! 2. [Results and errors](_02_results_and_errors): what a call returns, content blocks,
//!    logging, progress, sampling and elicitation.
//! 3. [Calling commands](_03_dispatch): the one call path, batches, pipelines, middleware.
//! 4. [Serving over MCP](_04_serving_over_mcp): the server, its transports, resources,
//!    prompts and completions, a client's configuration.
//! 5. [Strategies and context cost](_05_strategies_and_context_cost): what each tool
//!    strategy lists and what it costs an agent's context.
//! 6. [Search](_06_search): ranked search of the catalog, lexical and semantic.
//! 7. [Contexts and sessions](_07_contexts_and_sessions): runtime contexts that scope what
//!    an agent may call.
//! 8. [The gateway](_08_gateway): one lazy front for existing MCP servers.
//! 9. [The command line](_09_command_line): the catalog as a command line.
//! 10. [Replicas](_10_replicas): sessions and usage statistics shared between processes.
//! 11. [Security](_11_security): HTTP on a network, OAuth, scopes per command.
//! 12. [Operations](_12_operations): health, drain, metrics, traces, logs, usage statistics.
//! 13. [Testing an app](_13_testing_an_app): commands, a dispatcher and a whole MCP server
//!     in a test.
//! 14. [Migrating from rmcp's `#[tool]`](_14_migrating_from_rmcp): the same server, side by
//!     side.

#[doc = include_str!("01_writing_commands.md")]
pub mod _01_writing_commands {}
#[doc = include_str!("02_results_and_errors.md")]
pub mod _02_results_and_errors {}
#[doc = include_str!("03_dispatch.md")]
pub mod _03_dispatch {}
#[doc = include_str!("04_serving_over_mcp.md")]
pub mod _04_serving_over_mcp {}
#[doc = include_str!("05_strategies_and_context_cost.md")]
pub mod _05_strategies_and_context_cost {}
#[doc = include_str!("06_search.md")]
pub mod _06_search {}
#[doc = include_str!("07_contexts_and_sessions.md")]
pub mod _07_contexts_and_sessions {}
#[doc = include_str!("08_gateway.md")]
pub mod _08_gateway {}
#[doc = include_str!("09_command_line.md")]
pub mod _09_command_line {}
#[doc = include_str!("10_replicas.md")]
pub mod _10_replicas {}
#[doc = include_str!("11_security.md")]
pub mod _11_security {}
#[doc = include_str!("12_operations.md")]
pub mod _12_operations {}
#[doc = include_str!("13_testing_an_app.md")]
pub mod _13_testing_an_app {}
#[doc = include_str!("14_migrating_from_rmcp.md")]
pub mod _14_migrating_from_rmcp {}
