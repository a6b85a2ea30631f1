//! A soak of mixed reads and writes against the shop's store on a database file
//! ([`afd_bench::mixed`]): `--inflight` callers for `--seconds`, then the stock checked
//! against the restocks that succeeded and the resident memory printed per second. Exits 1
//! when a call failed or the stock does not add up.
//!
//! `cargo run -p afd-bench --release --bin mixed-soak -- --inflight 64 --seconds 600`

use std::time::Duration;

use clap::Parser;

/// Soak the shop's store with mixed reads and writes.
#[derive(Debug, Parser)]
struct Args {
    /// Calls in flight.
    #[arg(long, default_value_t = 64)]
    inflight: usize,
    /// How long to run.
    #[arg(long, default_value_t = 600)]
    seconds: u64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = afd_bench::mixed::run(
        &dir.path().join("shop.sqlite3"),
        args.inflight,
        Duration::from_secs(args.seconds),
    )
    .await
    .expect("the soak runs");
    println!(
        "reads {} writes {} failures {} over {} s ({:.0} calls/s)",
        report.reads,
        report.writes,
        report.failures,
        args.seconds,
        (report.reads + report.writes) as f64 / args.seconds as f64
    );
    println!(
        "stock {} -> {} (expected {}): {}",
        report.stock_before,
        report.stock_after,
        report.stock_before + report.writes as i64,
        if report.consistent() {
            "consistent"
        } else {
            "INCONSISTENT"
        }
    );
    let rss = &report.rss_kib;
    if let (Some(first), Some(last), Some(most)) = (
        rss.get(rss.len().min(10).saturating_sub(1)),
        rss.last(),
        rss.iter().max(),
    ) {
        println!(
            "resident memory: {first} KiB after 10 s, {last} KiB at the end, {most} KiB at most"
        );
    }
    for example in &report.examples {
        println!("failure: {example}");
    }
    if report.failures > 0 || !report.consistent() {
        std::process::exit(1);
    }
}
