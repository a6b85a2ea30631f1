//! The streamable HTTP request path in process, with criterion: one `tools/call`
//! (afd-call of a trivial command) on one keep-alive HTTP/1.1 connection over loopback,
//! the server on the same current-thread runtime.
//!
//! `cargo bench -p afd-runtime --bench http`
//!
//! - `http/stateless_direct`: the stateless protocol (2026-07-28), answered by the front's
//!   direct path as `application/json`;
//! - `http/stateless_rmcp`: the same request with a weighted `Accept`, which the direct
//!   path leaves to rmcp (a service per request, SSE);
//! - `http/stateless_asking`: the stateless call from a client that declares sampling and
//!   elicitation (a handler would ask it through input rounds), on the direct path too;
//! - `http/stateless_asking_rmcp`: that call with a weighted `Accept`, left to rmcp;
//! - `http/session_direct`: a 2025-11-25 session's call, answered by the direct path on the
//!   session's server;
//! - `http/session_rmcp`: the same call with a weighted `Accept`, through rmcp's session.

use criterion::Criterion;
use serde_json::json;

#[path = "support/http.rs"]
mod support;
use support::Client;

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let (rt, server) = support::serve();
    let mut clients = rt.block_on(async {
        vec![
            ("stateless_direct", Client::connect(&server, None).await),
            (
                "stateless_rmcp",
                Client::connect(&server, None)
                    .await
                    .accept("application/json;q=1, text/event-stream;q=1"),
            ),
            (
                "stateless_asking",
                Client::connect(&server, None)
                    .await
                    .declaring(json!({"sampling": {}, "elicitation": {}})),
            ),
            (
                "stateless_asking_rmcp",
                Client::connect(&server, None)
                    .await
                    .declaring(json!({"sampling": {}, "elicitation": {}}))
                    .accept("application/json;q=1, text/event-stream;q=1"),
            ),
            (
                "session_direct",
                Client::connect(&server, None).await.in_session().await,
            ),
            (
                "session_rmcp",
                Client::connect(&server, None)
                    .await
                    .accept("application/json;q=1, text/event-stream;q=1")
                    .in_session()
                    .await,
            ),
        ]
    });
    let mut group = criterion.benchmark_group("http");
    let rt = &rt;
    for (name, client) in &mut clients {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| support::timed_calls(rt, client, iters))
        });
    }
    group.finish();
    criterion.final_summary();
    rt.block_on(server.shutdown());
}
