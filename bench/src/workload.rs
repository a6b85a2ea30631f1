//! The in-process operations timed at each catalog size, shared by the criterion bench
//! (`benches/inprocess.rs`) and the suite's `inprocess` binary so both measure the same
//! calls, through the path the MCP server uses (`McpServer::dispatcher`).

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::{CommandContext, MetaTools};
use futures_util::FutureExt;
use serde_json::{Value, json};

/// The trivial command the call benches run: in every catalog here and in the
/// reference's, answers at once from memory.
pub const TRIVIAL: &str = "order-list";

/// Its input.
pub fn trivial_input() -> Value {
    json!({"limit": 5})
}

/// The afd-discover search of the seed's typical interaction.
pub const SEARCH: &str = "cancel";

/// One timed operation.
pub struct Op {
    /// Its name in the tables (`discover/search` ...).
    pub name: &'static str,
    /// Runs it once; true when it succeeded.
    pub run: Box<dyn Fn() -> bool + Send + Sync>,
}

fn op(name: &'static str, run: impl Fn() -> bool + Send + Sync + 'static) -> Op {
    Op {
        name,
        run: Box::new(run),
    }
}

/// A lazy server of the catalog of `n` (what discover, detail and afd-call go through).
pub fn lazy_server(n: usize) -> McpServer {
    crate::server(n, Strategy::Lazy)
}

/// Ten command names of the catalog of `n` (repeating where it has fewer).
pub fn ten_names(n: usize) -> Vec<&'static str> {
    let commands = crate::registry(n).commands();
    commands.iter().cycle().take(10).map(|c| c.name()).collect()
}

/// The operations timed at `n`: afd-discover unfiltered, by category, by tag and by
/// search; afd-detail of 1 and of 10 commands; the trivial command through its bare
/// handler, `Dispatcher::call`, and the server's afd-call tool.
pub fn ops(n: usize) -> Vec<Op> {
    let server = lazy_server(n);
    // What a server at rest has built on its background thread, built here before any
    // timing, so that no sample shares the CPU with it.
    server.dispatcher().warm();
    let discover = |name, input: Value| {
        let server = server.clone();
        op(name, move || {
            server
                .dispatcher()
                .discover(input.clone())
                .now_or_never()
                .is_some_and(|result| result.success)
        })
    };
    let mut ops = vec![
        discover("discover/unfiltered", json!({})),
        discover("discover/category", json!({"category": "order"})),
        discover("discover/tag", json!({"tag": "billing"})),
        discover("discover/search", json!({"search": SEARCH})),
    ];
    let detail = |name, input: Value| {
        let server = server.clone();
        op(name, move || {
            server
                .dispatcher()
                .detail(input.clone())
                .now_or_never()
                .is_some_and(|result| result.success)
        })
    };
    ops.push(detail("detail/1", json!({"command": "user-create"})));
    ops.push(detail("detail/10", json!({"command": ten_names(n)})));

    let ctx = CommandContext::new();
    let handler = crate::registry(n)
        .get(TRIVIAL)
        .expect("the trivial command")
        .def()
        .handler();
    let c = ctx.clone();
    ops.push(op("call/bare-handler", move || {
        handler(trivial_input(), c.clone())
            .now_or_never()
            .expect("completes at once")
            .success
    }));
    let s = server.clone();
    let c = ctx.clone();
    ops.push(op("call/dispatcher", move || {
        s.dispatcher()
            .call(TRIVIAL, trivial_input(), c.clone())
            .now_or_never()
            .expect("completes at once")
            .success
    }));
    let s = server;
    ops.push(op("call/afd-call-tool", move || {
        let result = s
            .call(
                "afd-call",
                json!({"command": TRIVIAL, "input": trivial_input()}),
                ctx.clone(),
            )
            .now_or_never()
            .expect("completes at once");
        result.is_error != Some(true)
    }));
    ops
}
