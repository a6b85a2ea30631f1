//! The afd-rs benchmark suite: generated catalogs of real `#[command]` functions and the
//! workloads the bench binaries share. See `BENCHMARKS.md` at the repository root.
//!
//! The catalogs are registered explicitly (`Registry::builder().register_all(...)`): every
//! size links into one binary, so the global inventory holds them all, with the same names
//! several times, and [`Registry::global`](afd_runtime::Registry::global) is not used here.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use afd_runtime::mcp::{McpServer, McpServerBuilder, Strategy};
use afd_runtime::{CommandDef, Dispatcher, Registry, Surface};

pub mod client;
pub mod mixed;
pub mod names;
pub mod raw;
pub mod shapes;
pub mod soak;
pub mod synthetic;
pub mod workload;

/// The generated catalogs (`bench/build.rs`): `n5`, `n80` and, with the `full` feature,
/// `n500`, `n2000` and `n10000`, each with its `COMMANDS`.
#[allow(missing_docs, clippy::all)]
pub mod catalogs {
    include!(concat!(env!("OUT_DIR"), "/catalogs.rs"));
}

/// The sizes this build generated, smallest first.
pub fn sizes() -> Vec<usize> {
    catalogs::CATALOGS.iter().map(|(n, _)| *n).collect()
}

/// The commands of the generated catalog of `n`, if this build has it.
pub fn commands(n: usize) -> Option<&'static [&'static CommandDef]> {
    catalogs::CATALOGS
        .iter()
        .find(|(size, _)| *size == n)
        .map(|(_, commands)| *commands)
}

/// The commands of the catalog of `n`.
///
/// # Panics
///
/// If this build did not generate it (build with `--features full` for 500 and more).
pub fn expect_commands(n: usize) -> &'static [&'static CommandDef] {
    commands(n).unwrap_or_else(|| {
        panic!(
            "no generated catalog of {n} commands in this build (have {:?}; build with --features full)",
            sizes()
        )
    })
}

/// Builds a fresh registry of the catalog of `n` (what the catalog-build bench times).
///
/// # Panics
///
/// If the catalog is missing or does not build.
pub fn build_registry(n: usize) -> Registry {
    Registry::builder()
        .register_all(expect_commands(n).iter().copied())
        .build()
        .expect("the generated names are unique")
}

/// The registry of the catalog of `n`, built once per process.
pub fn registry(n: usize) -> &'static Registry {
    static REGISTRIES: OnceLock<Mutex<HashMap<usize, &'static Registry>>> = OnceLock::new();
    let mut map = REGISTRIES
        .get_or_init(Default::default)
        .lock()
        .expect("not poisoned");
    map.entry(n)
        .or_insert_with(|| Box::leak(Box::new(build_registry(n))))
}

/// The dispatcher a server of the catalog of `n` uses (MCP surface, no middleware).
///
/// # Panics
///
/// If it does not build.
pub fn dispatcher(n: usize) -> Dispatcher {
    Dispatcher::builder(registry(n))
        .surface(Surface::Mcp)
        .build()
        .expect("a dispatcher")
}

/// An MCP server of the catalog of `n` with `strategy`.
///
/// # Panics
///
/// If it does not build.
pub fn server(n: usize, strategy: Strategy) -> McpServer {
    server_with(n, strategy, |builder| builder)
}

/// An MCP server of the catalog of `n` with `strategy`, with more options
/// (`configure`), such as output schemas off.
///
/// # Panics
///
/// If it does not build.
pub fn server_with(
    n: usize,
    strategy: Strategy,
    configure: impl FnOnce(McpServerBuilder) -> McpServerBuilder,
) -> McpServer {
    configure(
        McpServer::builder(registry(n))
            .name("afd-bench")
            .version(env!("CARGO_PKG_VERSION"))
            .strategy(strategy),
    )
    .build()
    .expect("a server")
}

/// Median, p99 and friends of a set of durations.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    /// How many samples.
    pub count: usize,
    /// The median.
    pub median: Duration,
    /// The 99th percentile (nearest rank).
    pub p99: Duration,
    /// The smallest.
    pub min: Duration,
    /// The mean.
    pub mean: Duration,
}

impl Stats {
    /// Summarises `samples` (sorted in place).
    ///
    /// # Panics
    ///
    /// If `samples` is empty.
    pub fn of(samples: &mut [Duration]) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        samples.sort_unstable();
        let rank = |q: f64| {
            let index = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
            samples[index]
        };
        let total: Duration = samples.iter().sum();
        Stats {
            count: samples.len(),
            median: rank(0.5),
            p99: rank(0.99),
            min: samples[0],
            mean: total / samples.len() as u32,
        }
    }
}

/// A duration in the unit that reads best: `412 ns`, `3.41 µs`, `12.3 ms`, `1.20 s`.
pub fn human(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// `12345` as `12,345`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Times `run` one call per sample, after a warm-up (a fifth of the budget, at least three
/// calls): at least five samples, at most `max`, for about `seconds`. Each sample includes
/// the timer's own cost (about 20-40 ns).
pub fn sample<T>(seconds: f64, max: usize, mut run: impl FnMut() -> T) -> Stats {
    use std::hint::black_box;
    use std::time::Instant;
    let warm_until = Instant::now() + Duration::from_secs_f64(seconds / 5.0);
    let mut warm = 0;
    while warm < 3 || (Instant::now() < warm_until && warm < max / 10) {
        black_box(run());
        warm += 1;
    }
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let mut samples = Vec::with_capacity(max.min(100_000));
    while samples.len() < 5 || (samples.len() < max && Instant::now() < until) {
        let started = Instant::now();
        let out = run();
        samples.push(started.elapsed());
        drop(black_box(out));
    }
    Stats::of(&mut samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use afd_runtime::CommandContext;
    use serde_json::json;

    #[test]
    fn the_small_catalogs_are_generated_and_registered_explicitly() {
        assert!(sizes().starts_with(&[5, 80]));
        for n in sizes() {
            assert_eq!(registry(n).len(), n, "catalog of {n}");
        }
        let names: Vec<&str> = registry(5).commands().iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "order-create",
                "order-list",
                "user-create",
                "user-delete",
                "user-get"
            ]
        );
        let entry = registry(80)
            .get("user-list-a")
            .expect("the first generated command");
        assert_eq!(entry.category(), "user");
        assert_eq!(entry.tags(), ["read", "user"]);
        assert!(!entry.is_mutation());
        assert!(registry(80).get("order-update-v").unwrap().is_mutation());
    }

    #[tokio::test]
    async fn the_workload_commands_answer() {
        let dispatcher = dispatcher(80);
        let called = dispatcher
            .call(
                workload::TRIVIAL,
                workload::trivial_input(),
                CommandContext::new(),
            )
            .await;
        assert!(called.success, "{:?}", called.error);
        assert_eq!(called.data.unwrap(), json!([]));
        let created = dispatcher
            .call(
                "user-create",
                json!({"name": "Alice", "email": "alice@example.com"}),
                CommandContext::new(),
            )
            .await;
        assert!(created.success, "{:?}", created.error);
        for op in workload::ops(80) {
            let result = (op.run)();
            assert!(result, "{} fails", op.name);
        }
    }

    #[test]
    fn stats_take_the_nearest_rank() {
        let mut samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        let stats = Stats::of(&mut samples);
        assert_eq!(stats.median, Duration::from_micros(50));
        assert_eq!(stats.p99, Duration::from_micros(99));
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
