//! The cost of metrics and traces (features `metrics` and `otel`), with criterion.
//!
//! `cargo bench -p afd-runtime --features otel --bench operations`
//!
//! - `record/*`: what one `tools/call` records in metrics (its operation duration and its
//!   command's outcome): `off` before any instruments are installed (the check that skips
//!   it), `on` once a meter provider with a Prometheus reader is installed.
//! - `http/*`: one whole `tools/call` (afd-call of a trivial command, stateless protocol
//!   2026-07-28) over streamable HTTP on loopback, in-process, one keep-alive HTTP/1.1
//!   connection, under three tracing set-ups taken in turn, call by call:
//!   - `none`: no subscriber takes afd's spans (none is built);
//!   - `spans`: `tracing-opentelemetry` makes each span an OpenTelemetry span, and a
//!     tracer provider without an exporter drops them when they end;
//!   - `otlp`: the same, exported by the batch OTLP/HTTP exporter (protobuf) to a
//!     receiver in this process that answers 200.
//!
//!   First without metrics, then (prefixed `metrics+`) with the instruments installed and
//!   scraped (rendered as Prometheus text) every 1,000 rounds.
//!
//! Installing the instruments cannot be undone in a process, so the run has two phases,
//! without metrics then with, one after the other; within a phase the tracing set-ups
//! alternate call by call. A pass of 10,000 rounds per phase prints Markdown tables
//! (median, p99, overhead and ratio to the first row).

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use afd_runtime::metrics::{self, Prometheus, Transport};
use afd_runtime::telemetry::{self, Otlp};
use criterion::Criterion;
use tracing::Dispatch;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;

#[path = "support/http.rs"]
mod support;
use support::{Client, report};

/// Rounds of each phase of the pass, after as many warm-up rounds as a tenth of them.
const ROUNDS: usize = 10_000;
/// `record/*` is timed over this many calls at a time (one is too short for `Instant`).
const BATCH: u32 = 100;
/// The tracing set-ups, in the order a round takes them.
const SETUPS: [&str; 3] = ["none", "spans", "otlp"];

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

/// A subscriber that takes afd's spans only, into `layer`.
fn only_spans<L>(layer: L) -> Dispatch
where
    L: tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync + 'static,
{
    Dispatch::new(tracing_subscriber::registry().with(
        layer.with_filter(Targets::new().with_target(telemetry::TARGET, tracing::Level::TRACE)),
    ))
}

/// What an OTLP receiver took: requests and bytes.
#[derive(Default)]
struct Received {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// An OTLP/HTTP receiver that reads each export and answers 200, on a thread of its own.
fn receiver() -> (SocketAddr, Arc<Received>) {
    use http_body_util::BodyExt as _;
    let received = Arc::new(Received::default());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().unwrap();
    let counts = received.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let counts = counts.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let counts = counts.clone();
                            async move {
                                let body = request.into_body().collect().await?.to_bytes();
                                counts.requests.fetch_add(1, Ordering::Relaxed);
                                counts.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                                Ok::<_, hyper::Error>(hyper::Response::new(
                                    http_body_util::Full::new(bytes::Bytes::new()),
                                ))
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    (addr, received)
}

/// One call under `setup` (`None`: no subscriber).
fn call(rt: &tokio::runtime::Runtime, client: &mut Client, setup: Option<&Dispatch>) {
    match setup {
        None => {
            black_box(rt.block_on(client.call()));
        }
        Some(dispatch) => tracing::dispatcher::with_default(dispatch, || {
            black_box(rt.block_on(client.call()));
        }),
    }
}

/// One phase: criterion's figures, then the pass's rounds of both measures.
fn phase(
    c: &mut Criterion,
    prefix: &str,
    rt: &tokio::runtime::Runtime,
    client: &mut Client,
    setups: &[Option<Dispatch>; 3],
    prometheus: Option<&Prometheus>,
    pass: bool,
) -> (Vec<Duration>, Vec<Vec<Duration>>) {
    let name = if prometheus.is_some() { "on" } else { "off" };
    c.bench_function(&format!("record/{name}"), |b| b.iter(record));
    for (setup, dispatch) in SETUPS.iter().zip(setups) {
        c.bench_function(&format!("http/{prefix}{setup}"), |b| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    call(rt, client, dispatch.as_ref());
                }
                started.elapsed()
            })
        });
    }
    let (mut records, mut calls) = (Vec::new(), vec![Vec::new(); SETUPS.len()]);
    if !pass {
        return (records, calls);
    }
    for round in 0..ROUNDS + ROUNDS / 10 {
        let warm = round >= ROUNDS / 10;
        let started = Instant::now();
        for _ in 0..BATCH {
            record();
        }
        let recorded = started.elapsed() / BATCH;
        if warm {
            records.push(recorded);
        }
        // Each set-up first in a round as often as the others.
        for k in 0..SETUPS.len() {
            let setup = (round + k) % SETUPS.len();
            let started = Instant::now();
            call(rt, client, setups[setup].as_ref());
            if warm {
                calls[setup].push(started.elapsed());
            }
        }
        if round % 1000 == 999
            && let Some(prometheus) = prometheus
        {
            black_box(prometheus.render());
        }
    }
    (records, calls)
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    // Every span exported: a queue deep enough for a burst of calls, sent every 200 ms.
    let (sink, received) = receiver();
    // SAFETY: set before any other thread of this process reads the environment.
    unsafe {
        std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{sink}"));
        std::env::set_var("OTEL_BSP_SCHEDULE_DELAY", "200");
        std::env::set_var("OTEL_BSP_MAX_QUEUE_SIZE", "65536");
    }
    let otlp = Otlp::from_env("afd-bench").expect("an OTLP pipeline");
    let dropped =
        Otlp::from_provider(opentelemetry_sdk::trace::SdkTracerProvider::builder().build());
    let setups = [
        None,
        Some(only_spans(dropped.layer())),
        Some(only_spans(otlp.layer())),
    ];

    let (rt, server) = support::serve();
    let mut client = rt.block_on(Client::connect(&server, None));
    // Not when criterion only tests or lists the benches, or runs some of them.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pass = !args
        .iter()
        .any(|arg| !arg.starts_with('-') || arg == "--test" || arg == "--list");
    let (records_off, calls_off) = phase(&mut criterion, "", &rt, &mut client, &setups, None, pass);
    let prometheus = install();
    let (records_on, calls_on) = phase(
        &mut criterion,
        "metrics+",
        &rt,
        &mut client,
        &setups,
        Some(&prometheus),
        pass,
    );
    criterion.final_summary();
    otlp.shutdown();
    if pass {
        println!();
        println!(
            "two phases of {ROUNDS} rounds, the tracing set-ups call by call within each \
             (median, p99, overhead and ratio to the first row)"
        );
        report("record", vec!["off", "on"], vec![records_off, records_on]);
        let names = [
            "none",
            "spans",
            "otlp",
            "metrics+none",
            "metrics+spans",
            "metrics+otlp",
        ];
        report(
            "http",
            names.to_vec(),
            calls_off.into_iter().chain(calls_on).collect(),
        );
        println!();
        println!(
            "OTLP receiver: {} exports, {:.1} MB",
            received.requests.load(Ordering::Relaxed),
            received.bytes.load(Ordering::Relaxed) as f64 / 1e6
        );
        let text = prometheus.render();
        assert!(text.contains("mcp_server_operation_duration_seconds_count"));
    }
    rt.block_on(server.shutdown());
}
