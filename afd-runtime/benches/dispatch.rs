//! Dispatch overhead over a bare handler call, for a trivial command.
//!
//! `cargo bench -p afd-runtime --bench dispatch`
//!
//! - `bare_handler`: the type-erased handler the macro generates, called directly
//!   (deserialise the input, run the function, serialise the output);
//! - `registry_call`: `Registry::call` (limits, lookup, validation, panic guard, timing);
//! - `dispatcher_call`: `Dispatcher::call` with exposure checks and an empty tower stack;
//! - `dispatcher_call_traced`: the same with `TraceLayer` and `TimingLayer`.
//!
//! The futures complete without waiting, so they are polled once with `now_or_never` and no
//! executor cost is measured.

use std::hint::black_box;
use std::time::Duration;

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
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
