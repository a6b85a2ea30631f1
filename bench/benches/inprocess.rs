//! In-process latency at each generated catalog size, with criterion: catalog build,
//! afd-discover (unfiltered, category, tag, search), afd-detail (1 and 10 commands) and a
//! trivial command through its bare handler, `Dispatcher::call` and the afd-call tool.
//!
//! `cargo bench -p afd-bench --features full --bench inprocess` (without `full`: 5 and 80
//! commands only). The suite's `inprocess` binary times the same operations one call at a
//! time for medians and p99 (`bench/run.sh`).

use std::hint::black_box;
use std::time::Duration;

use afd_bench::workload;
use afd_runtime::mcp::{McpServer, Strategy};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn catalog_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("catalog_build");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for n in afd_bench::sizes() {
        group.bench_with_input(BenchmarkId::new("registry", n), &n, |b, &n| {
            b.iter(|| afd_bench::build_registry(black_box(n)))
        });
        let registry = afd_bench::registry(n);
        group.bench_with_input(BenchmarkId::new("lazy_server", n), &n, |b, _| {
            b.iter(|| {
                McpServer::builder(registry)
                    .strategy(Strategy::Lazy)
                    .build()
                    .unwrap()
            })
        });
    }
    group.finish();
}

fn operations(c: &mut Criterion) {
    for n in afd_bench::sizes() {
        let mut group = c.benchmark_group(format!("n{n}"));
        group.measurement_time(Duration::from_secs(2));
        group.warm_up_time(Duration::from_millis(500));
        for op in workload::ops(n) {
            group.bench_function(op.name, |b| b.iter(|| (op.run)()));
        }
        group.finish();
    }
}

criterion_group!(benches, catalog_build, operations);
criterion_main!(benches);
