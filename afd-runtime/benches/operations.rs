//! The cost of metrics (feature `metrics`), with criterion.
//!
//! `cargo bench -p afd-runtime --features metrics --bench operations`
//!
//! - `record/*`: what one `tools/call` records (its operation duration and its command's
//!   outcome): `off` before any instruments are installed (the check that skips it), `on`
//!   once a meter provider with a Prometheus reader is installed.
//! - `http/*`: one whole `tools/call` (afd-call of a trivial command, stateless protocol
//!   2026-07-28) over streamable HTTP on loopback, in-process, one keep-alive HTTP/1.1
//!   connection: `metrics_off` before the instruments are installed, `metrics_on` after,
//!   with the metrics scraped (rendered as Prometheus text) every 1,000 calls.
//!
//! Installing the instruments cannot be undone in a process, so each group is measured in
//! two phases, off then on, one after the other in the same run; then a pass of 10,000
//! rounds per phase prints Markdown tables (median, p99, overhead and ratio to `off`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use afd_runtime::mcp::{HttpHandle, HttpOptions, McpServer};
use afd_runtime::metrics::{self, Prometheus, Transport};
use afd_runtime::prelude::*;
use criterion::Criterion;

#[path = "support/http.rs"]
mod support;
use support::{Client, report};

/// Rounds of each phase of the pass, after as many warm-up rounds as a tenth of them.
const ROUNDS: usize = 10_000;
/// `record/*` is timed over this many calls at a time (one is too short for `Instant`).
const BATCH: u32 = 100;

fn record() {
    metrics::operation(
        "tools/call",
        Some("afd-call"),
        Transport::Tcp,
        None,
        black_box(0.000_2),
    );
    metrics::command_call("bench-add", "success");
}

fn install() -> Prometheus {
    let (prometheus, reader) = metrics::prometheus().expect("a Prometheus exporter");
    let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(reader)
        .build();
    assert!(metrics::install(provider), "installed once");
    prometheus
}

/// One phase: criterion's figures, then the pass's rounds of both measures.
fn phase(
    c: &mut Criterion,
    name: &str,
    rt: &tokio::runtime::Runtime,
    client: &mut Client,
    prometheus: Option<&Prometheus>,
    pass: bool,
) -> (Vec<Duration>, Vec<Duration>) {
    c.bench_function(&format!("record/{name}"), |b| b.iter(record));
    c.bench_function(&format!("http/metrics_{name}"), |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    black_box(client.call().await);
                }
                started.elapsed()
            })
        })
    });
    let (mut records, mut calls) = (Vec::new(), Vec::new());
    if !pass {
        return (records, calls);
    }
    rt.block_on(async {
        for round in 0..ROUNDS + ROUNDS / 10 {
            let warm = round >= ROUNDS / 10;
            let started = Instant::now();
            for _ in 0..BATCH {
                record();
            }
            let recorded = started.elapsed() / BATCH;
            let started = Instant::now();
            black_box(client.call().await);
            let called = started.elapsed();
            if warm {
                records.push(recorded);
                calls.push(called);
            }
            if round % 1000 == 999
                && let Some(prometheus) = prometheus
            {
                black_box(prometheus.render());
            }
        }
    });
    (records, calls)
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let server: HttpHandle = rt.block_on(async {
        McpServer::builder(Registry::global())
            .build()
            .expect("a server")
            .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
            .await
            .expect("bound")
    });
    let mut client = rt.block_on(Client::connect(&server, None));
    // Not when criterion only tests or lists the benches, or runs some of them.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pass = !args
        .iter()
        .any(|arg| !arg.starts_with('-') || arg == "--test" || arg == "--list");
    let (records_off, calls_off) = phase(&mut criterion, "off", &rt, &mut client, None, pass);
    let prometheus = install();
    let (records_on, calls_on) = phase(
        &mut criterion,
        "on",
        &rt,
        &mut client,
        Some(&prometheus),
        pass,
    );
    criterion.final_summary();
    if pass {
        println!();
        println!("two phases of {ROUNDS} rounds (median, p99, overhead and ratio to off)");
        report("record", vec!["off", "on"], vec![records_off, records_on]);
        report(
            "http",
            vec!["metrics_off", "metrics_on"],
            vec![calls_off, calls_on],
        );
        let text = prometheus.render();
        assert!(text.contains("mcp_server_operation_duration_seconds_count"));
    }
    rt.block_on(server.shutdown());
}
