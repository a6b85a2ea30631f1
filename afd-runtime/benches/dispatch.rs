//! Dispatch overhead over a bare handler call, for a trivial command.
//!
//! `cargo bench -p afd-runtime --bench dispatch`
//!
//! - `bare_handler`: the type-erased handler the macro generates, called directly
//!   (deserialise the input, run the function, serialise the output);
//! - `registry_call`: `Registry::call` (limits, lookup, validation, panic guard, timing);
//! - `dispatcher_call`: `Dispatcher::call` with exposure checks and an empty tower stack;
//! - `dispatcher_call_traced`: the same with `TraceLayer` and `TimingLayer`;
//! - `event_*`: `Dispatcher::call` of a command that emits one `tracing` event: with no
//!   subscriber (`event_no_subscriber`), under a subscriber with `ClientLogLayer` when no
//!   client asked for logs (`event_client_layer`), and when one did (`event_client_asked`,
//!   into a sink that drops the messages).
//!
//! The futures complete without waiting, so they are polled once with `now_or_never` and no
//! executor cost is measured.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use afd_runtime::client::{ClientLogLayer, LogLevel, LogMessage, LogSink};
use futures_util::future::BoxFuture;
use tracing_subscriber::layer::SubscriberExt as _;

use afd_runtime::middleware::{TimingLayer, TraceLayer};
use afd_runtime::prelude::*;
use afd_runtime::{Dispatcher, Surface};
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::FutureExt;

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

/// Add two numbers.
#[command(category = "bench")]
fn bench_add(input: Add) -> i64 {
    input.a + input.b
}

/// Add two numbers, saying so.
#[command(category = "bench")]
fn bench_add_logged(input: Add) -> i64 {
    tracing::info!(a = input.a, "adding");
    input.a + input.b
}

/// A client that asked for every message, and drops them.
struct Discard;

impl LogSink for Discard {
    fn threshold(&self) -> Option<LogLevel> {
        Some(LogLevel::Debug)
    }
    fn wants_tracing(&self) -> bool {
        true
    }
    fn send(&self, message: LogMessage) -> BoxFuture<'_, ()> {
        black_box(message);
        Box::pin(async {})
    }
    fn send_later(&self, message: LogMessage) {
        black_box(message);
    }
}

fn dispatch(c: &mut Criterion) {
    let registry = Registry::global();
    let ctx = CommandContext::new();
    let input = json!({"a": 2, "b": 3});
    let entry = registry.get("bench-add").unwrap();
    entry.validate(&input).unwrap();
    let handler = entry.def().handler();
    let dispatcher = Dispatcher::builder(registry)
        .surface(Surface::Mcp)
        .build()
        .unwrap();
    let traced = Dispatcher::builder(registry)
        .surface(Surface::Mcp)
        .layer(TimingLayer::new(Duration::from_secs(1)))
        .layer(TraceLayer::new())
        .build()
        .unwrap();

    let mut group = c.benchmark_group("dispatch");
    group.bench_function("bare_handler", |b| {
        b.iter(|| {
            handler(black_box(input.clone()), ctx.clone())
                .now_or_never()
                .unwrap()
        })
    });
    group.bench_function("registry_call", |b| {
        b.iter(|| {
            registry
                .call(
                    black_box("bench-add"),
                    black_box(input.clone()),
                    ctx.clone(),
                )
                .now_or_never()
                .unwrap()
        })
    });
    group.bench_function("dispatcher_call", |b| {
        b.iter(|| {
            dispatcher
                .call(
                    black_box("bench-add"),
                    black_box(input.clone()),
                    ctx.clone(),
                )
                .now_or_never()
                .unwrap()
        })
    });
    group.bench_function("dispatcher_call_traced", |b| {
        b.iter(|| {
            traced
                .call(
                    black_box("bench-add"),
                    black_box(input.clone()),
                    ctx.clone(),
                )
                .now_or_never()
                .unwrap()
        })
    });
    let call_logged = |ctx: &CommandContext| {
        dispatcher
            .call(
                black_box("bench-add-logged"),
                black_box(input.clone()),
                ctx.clone(),
            )
            .now_or_never()
            .unwrap()
    };
    group.bench_function("event_no_subscriber", |b| b.iter(|| call_logged(&ctx)));
    let subscriber = tracing_subscriber::registry().with(ClientLogLayer::new());
    tracing::subscriber::with_default(subscriber, || {
        group.bench_function("event_client_layer", |b| b.iter(|| call_logged(&ctx)));
        let asked = ctx.clone().with_log(Arc::new(Discard));
        group.bench_function("event_client_asked", |b| b.iter(|| call_logged(&asked)));
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
