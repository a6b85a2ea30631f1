//! In-process latency, one call at a time, for medians and p99: catalog build (registry,
//! lazy server, individual server), afd-discover (unfiltered, category, tag, search),
//! afd-detail (1 and 10 commands) and a trivial command through its bare handler,
//! `Dispatcher::call` and the server's afd-call tool, at each generated size.
//!
//! `cargo run -p afd-bench --release --features full --bin inprocess`
//!
//! The same operations run under criterion in `benches/inprocess.rs`. Each sample here is
//! one call timed with `Instant` (about 20-40 ns of timer cost included).

use std::path::PathBuf;

use afd_bench::{Stats, human, sample, thousands, workload};
use afd_runtime::mcp::{McpServer, Strategy};
use clap::Parser;
use serde_json::json;

/// In-process latency at each catalog size.
#[derive(Debug, Parser)]
struct Args {
    /// Catalog sizes (default: every size this build generated).
    #[arg(long, value_delimiter = ',')]
    commands: Vec<usize>,
    /// Time budget per operation and size, in seconds.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Most samples per operation and size.
    #[arg(long, default_value_t = 20_000)]
    samples: usize,
    /// Append the figures as JSON lines to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn main() {
    let mut args = Args::parse();
    if args.commands.is_empty() {
        args.commands = afd_bench::sizes();
    }
    let sizes = args.commands.clone();
    // (operation, size, stats)
    let mut rows: Vec<(String, Vec<Option<Stats>>)> = Vec::new();
    let mut record = |name: &str, column: usize, stats: Stats| {
        if !rows.iter().any(|(n, _)| n == name) {
            rows.push((name.to_owned(), vec![None; sizes.len()]));
        }
        let row = rows
            .iter_mut()
            .find(|(n, _)| n == name)
            .expect("just added");
        row.1[column] = Some(stats);
    };
    let mut json_lines = Vec::new();
    for (column, &n) in sizes.iter().enumerate() {
        eprintln!("{n} commands");
        let mut measured = Vec::new();
        // Catalog build: fresh each time, dropped outside the timer.
        measured.push((
            "build/registry",
            sample(args.seconds * 2.0, 2_000, || afd_bench::build_registry(n)),
        ));
        let registry = afd_bench::registry(n);
        for (name, strategy) in [
            ("build/lazy-server", Strategy::Lazy),
            ("build/individual-server", Strategy::Individual),
        ] {
            measured.push((
                name,
                sample(args.seconds * 2.0, 2_000, || {
                    McpServer::builder(registry)
                        .strategy(strategy)
                        .build()
                        .expect("a server")
                }),
            ));
        }
        for op in workload::ops(n) {
            assert!((op.run)(), "{} fails at {n}", op.name);
            measured.push((op.name, sample(args.seconds, args.samples, &op.run)));
        }
        let bare = measured
            .iter()
            .find(|(name, _)| *name == "call/bare-handler")
            .map(|(_, s)| *s)
            .expect("measured");
        for (name, stats) in &measured {
            record(name, column, *stats);
            json_lines.push(json!({
                "bench": "inprocess", "op": name, "commands": n, "samples": stats.count,
                "median_ns": stats.median.as_nanos() as u64, "p99_ns": stats.p99.as_nanos() as u64,
                "min_ns": stats.min.as_nanos() as u64, "mean_ns": stats.mean.as_nanos() as u64,
            }));
        }
        for (name, over) in [
            ("overhead/dispatcher", "call/dispatcher"),
            ("overhead/afd-call-tool", "call/afd-call-tool"),
        ] {
            let stats = measured
                .iter()
                .find(|(n, _)| *n == over)
                .map(|(_, s)| *s)
                .expect("measured");
            let diff = Stats {
                median: stats.median.saturating_sub(bare.median),
                p99: stats.p99.saturating_sub(bare.p99),
                min: stats.min.saturating_sub(bare.min),
                mean: stats.mean.saturating_sub(bare.mean),
                count: stats.count,
            };
            record(name, column, diff);
            json_lines.push(json!({
                "bench": "inprocess", "op": name, "commands": n,
                "median_ns": diff.median.as_nanos() as u64, "p99_ns": diff.p99.as_nanos() as u64,
            }));
        }
    }
    println!("\nIn-process latency, median / p99 (one call per sample)\n");
    let header: Vec<String> = sizes
        .iter()
        .map(|n| format!("{} commands", thousands(*n)))
        .collect();
    println!("| operation | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(sizes.len()));
    for (name, cells) in &rows {
        let cells: Vec<String> = cells
            .iter()
            .map(|cell| {
                cell.map_or_else(
                    || "-".to_owned(),
                    |s| format!("{} / {}", human(s.median), human(s.p99)),
                )
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!(
        "\noverhead/* = the call's median (p99) minus the bare handler's median (p99). Samples per cell: {}.",
        rows.first()
            .and_then(|(_, c)| c.iter().flatten().next())
            .map_or(0, |s| s.count)
    );
    if let Some(path) = &args.json {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open the JSON file");
        for line in json_lines {
            writeln!(file, "{line}").expect("write");
        }
    }
}
