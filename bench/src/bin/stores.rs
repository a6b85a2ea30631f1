//! Per-call overhead of the shared stores against the embedded ones, one call at a time
//! through `Dispatcher::call` on the shop (83 commands, six contexts):
//!
//! - sessions: `plan-list` (universal, a small SQLite read) called in a session that
//!   entered `storefront`, with sessions in memory and in Redis (each call reads the
//!   session to check its context), and `afd-context-enter` + `afd-context-exit` (two
//!   session writes);
//! - usage statistics: the same call, recorded in memory, in SQLite and in PostgreSQL
//!   (both written in batches by a background writer, off the call path);
//! - a PostgreSQL writer's round (`flush`) with `--round-commands` commands in the tables:
//!   when nothing changed, after its own batch, and after another replica's (the only
//!   round that reads the tables back).
//!
//! `cargo run -p afd-bench --release --bin stores -- --redis redis://127.0.0.1:6379
//!   --postgres postgres://afd:afd@127.0.0.1/afd`

use std::sync::Arc;
use std::time::Instant;

use afd_bench::{Stats, human, thousands};
use afd_examples::shop::{self, ShopStore};
use afd_runtime::contexts::RedisSessionStore;
use afd_runtime::usage::UsageStats;
use afd_runtime::{CommandContext, Dispatcher, Registry, SessionConfig};
use clap::Parser;
use serde_json::{Value, json};

/// Shared stores against embedded ones.
#[derive(Debug, Parser)]
struct Args {
    /// The Redis to keep sessions in (default: AFD_TEST_REDIS_URL).
    #[arg(long)]
    redis: Option<String>,
    /// The PostgreSQL to keep usage statistics in (default: AFD_TEST_POSTGRES_URL).
    #[arg(long)]
    postgres: Option<String>,
    /// Calls per configuration.
    #[arg(long, default_value_t = 5_000)]
    calls: usize,
    /// Commands the PostgreSQL tables hold for the writer's rounds (seeded under a name
    /// prefix of this run, five calls a session).
    #[arg(long, default_value_t = 10_000)]
    round_commands: usize,
    /// Rounds timed per kind.
    #[arg(long, default_value_t = 30)]
    rounds: usize,
}

/// A PostgreSQL writer's rounds: one replica (`a`) flushes while nothing changed, after
/// its own call, and after another replica (`b`) wrote.
fn writer_rounds(url: &str, commands: usize, rounds: usize) {
    let replica = || UsageStats::builder().postgres(url.to_owned()).build();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let prefix = format!("bench{}x{nanos}", std::process::id());
    let seed = replica();
    for n in 0..commands {
        seed.record_now(
            &format!("{prefix}-s{}", n / 5),
            &format!("{prefix}-c{n}"),
            true,
        );
    }
    seed.flush().expect("seeded");
    drop(seed);
    let (a, b) = (replica(), replica());
    let time = |before: &dyn Fn()| {
        let mut samples: Vec<_> = (0..rounds)
            .map(|_| {
                before();
                let started = Instant::now();
                a.flush().expect("a round");
                started.elapsed()
            })
            .collect();
        Stats::of(&mut samples)
    };
    let idle = time(&|| {});
    let own = time(&|| a.record_now(&format!("{prefix}-a"), &format!("{prefix}-c0"), true));
    let other = time(&|| {
        b.record_now(&format!("{prefix}-b"), &format!("{prefix}-c1"), true);
        b.flush().expect("b's round");
    });
    assert!(a.stats(&format!("{prefix}-c1")).expect("read back").calls > 1);
    println!();
    println!(
        "| PostgreSQL writer round, {} commands seeded | rounds | median | p99 | overhead | ratio |",
        thousands(commands)
    );
    println!("|---|---:|---:|---:|---:|---:|");
    row("nothing changed", &idle, &idle);
    row("after its own call", &own, &idle);
    row(
        "after another replica's call (reads the tables)",
        &other,
        &idle,
    );
}

/// The shop's commands and contexts (the generated catalogs share the global registry).
fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        Registry::builder()
            .register_all(shop::COMMANDS)
            .with_inventory_contexts()
            .build()
            .expect("the shop's registry")
    })
}

fn dispatcher(usage: UsageStats) -> afd_runtime::DispatcherBuilder {
    Dispatcher::builder(registry()).usage(usage)
}

async fn time(
    d: &Dispatcher,
    ctx: &CommandContext,
    calls: usize,
    steps: &[(&str, Value)],
) -> Stats {
    let mut samples = Vec::with_capacity(calls);
    for round in 0..calls + calls / 10 {
        let started = Instant::now();
        for (name, input) in steps {
            let result = d.call(name, input.clone(), ctx.clone()).await;
            assert!(result.success, "{name}: {:?}", result.error);
        }
        // The first tenth warms up.
        if round >= calls / 10 {
            samples.push(started.elapsed());
        }
    }
    Stats::of(&mut samples)
}

async fn in_session(d: &Dispatcher) -> CommandContext {
    let ctx = shop::context(ShopStore::in_memory().expect("the shop store"));
    let entered = d
        .call(
            "afd-context-enter",
            json!({"context": "storefront"}),
            ctx.clone(),
        )
        .await;
    let handle = entered.data.expect("entered")["session"]
        .as_str()
        .expect("a handle")
        .to_owned();
    ctx.with_session(handle)
}

fn row(label: &str, stats: &Stats, base: &Stats) {
    let ratio = stats.median.as_secs_f64() / base.median.as_secs_f64();
    let overhead = stats.median.saturating_sub(base.median);
    println!(
        "| {label} | {} | {} | {} | +{} | {ratio:.2}x |",
        thousands(stats.count),
        human(stats.median),
        human(stats.p99),
        human(overhead)
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let url = |given: Option<String>, var: &str| {
        given
            .or_else(|| std::env::var(var).ok())
            .unwrap_or_else(|| panic!("give the URL, or set {var}"))
    };
    let redis_url = url(args.redis.clone(), "AFD_TEST_REDIS_URL");
    let postgres_url = url(args.postgres.clone(), "AFD_TEST_POSTGRES_URL");
    let call = [("plan-list", json!({}))];
    let enter_exit = [
        ("afd-context-enter", json!({"context": "fulfilment"})),
        ("afd-context-exit", json!({})),
    ];

    // Sessions: memory against Redis, usage in memory for both.
    let memory = dispatcher(UsageStats::in_memory()).build().unwrap();
    let config = SessionConfig::default();
    let store = RedisSessionStore::connect(&redis_url, config.get_idle_timeout())
        .await
        .expect("Redis reachable");
    let redis = dispatcher(UsageStats::in_memory())
        .session_store(Arc::new(store))
        .build()
        .unwrap();
    let (memory_ctx, redis_ctx) = (in_session(&memory).await, in_session(&redis).await);
    println!("| sessions | calls | median | p99 | overhead | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    let base = time(&memory, &memory_ctx, args.calls, &call).await;
    row("plan-list in a session, memory", &base, &base);
    let shared = time(&redis, &redis_ctx, args.calls, &call).await;
    row("plan-list in a session, Redis", &shared, &base);
    let base_ops = time(&memory, &memory_ctx, args.calls, &enter_exit).await;
    row("enter + exit, memory", &base_ops, &base_ops);
    let shared_ops = time(&redis, &redis_ctx, args.calls, &enter_exit).await;
    row("enter + exit, Redis", &shared_ops, &base_ops);

    // Usage statistics: memory against SQLite and PostgreSQL, sessions in memory.
    let dir = std::env::temp_dir().join(format!("afd-bench-stores-{}", std::process::id()));
    let sqlite = UsageStats::open(dir.join("usage.sqlite3"));
    let postgres = UsageStats::builder().postgres(postgres_url.clone()).build();
    assert!(sqlite.is_persistent() && postgres.is_persistent());
    println!();
    println!("| usage statistics | calls | median | p99 | overhead | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut base = None;
    for (label, usage) in [
        ("plan-list, memory", UsageStats::in_memory()),
        ("plan-list, SQLite writer", sqlite),
        ("plan-list, PostgreSQL writer", postgres),
    ] {
        let d = dispatcher(usage.clone()).build().unwrap();
        let ctx = in_session(&d).await;
        let stats = time(&d, &ctx, args.calls, &call).await;
        let base = base.get_or_insert(stats);
        row(label, &stats, base);
        usage.flush().expect("written");
    }
    let _ = std::fs::remove_dir_all(&dir);
    writer_rounds(&postgres_url, args.round_commands, args.rounds);
}
